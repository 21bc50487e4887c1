"""Shape layers: ``Flatten``, ``Unflatten``, ``Identity``."""

from __future__ import annotations

import math
from typing import Any

from functrace import numpy as fnp
from functrace.nn._layer_util import as_array, int_tuple, shape_of
from functrace.nn._module import Module, field


def _dim(name: str, what: str, d: int, ndim: int, shp: tuple[int, ...]) -> int:
    lo = -max(ndim, 1)
    if not lo <= d < max(ndim, 1):
        raise ValueError(
            f"{name}: expected {what} in [{lo}, {max(ndim, 1)}) for x of shape {shp}, got {d}."
        )
    return d % max(ndim, 1)


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` (inclusive) into one (PyTorch's
    ``nn.Flatten``; the default keeps the batch dim 0). A 0-d x becomes 1-d."""

    start_dim: int = field(static=True)
    end_dim: int = field(static=True)

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim = int(start_dim)
        self.end_dim = int(end_dim)

    def __call__(self, x: Any) -> Any:
        x = as_array(x)
        shp = shape_of(x)
        s = _dim("Flatten", "start_dim", self.start_dim, len(shp), shp)
        e = _dim("Flatten", "end_dim", self.end_dim, len(shp), shp)
        if not shp:
            return fnp.reshape(x, (1,))
        if s > e:
            raise ValueError(
                f"Flatten: expected start_dim <= end_dim for x of shape {shp}, got "
                f"start_dim={self.start_dim} and end_dim={self.end_dim}."
            )
        return fnp.reshape(x, (*shp[:s], math.prod(shp[s : e + 1]), *shp[e + 1 :]))


class Unflatten(Module):
    """Split dim ``dim`` of x into ``unflattened_size`` (PyTorch's ``nn.Unflatten``; one
    entry may be ``-1``, inferred)."""

    dim: int = field(static=True)
    unflattened_size: tuple[int, ...] = field(static=True)

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        self.dim = int(dim)
        sizes = tuple(int(v) for v in unflattened_size)
        if sizes.count(-1) > 1 or any(v < -1 for v in sizes) or not sizes:
            raise ValueError(
                "Unflatten: expected unflattened_size as a non-empty tuple of sizes with at "
                f"most one -1, got {unflattened_size!r}."
            )
        int_tuple("Unflatten", "unflattened_size", tuple(max(v, 0) for v in sizes))
        self.unflattened_size = sizes

    def __call__(self, x: Any) -> Any:
        x = as_array(x)
        shp = shape_of(x)
        if not shp:
            raise ValueError("Unflatten: expected x with at least 1 dim, got shape ().")
        d = _dim("Unflatten", "dim", self.dim, len(shp), shp)
        sizes = self.unflattened_size
        known = math.prod(v for v in sizes if v != -1)
        n = shp[d]
        if -1 in sizes:
            ok = known != 0 and n % known == 0
            sizes = tuple(n // known if v == -1 and ok else v for v in sizes)
        else:
            ok = known == n
        if not ok:
            raise ValueError(
                f"Unflatten: expected dim {self.dim} of x to have size "
                f"prod{self.unflattened_size}, got shape {shp}."
            )
        return fnp.reshape(x, (*shp[:d], *sizes, *shp[d + 1 :]))


class Identity(Module):
    """Returns its input unchanged (PyTorch's ``nn.Identity``; constructor arguments are
    accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, x: Any) -> Any:
        return x
