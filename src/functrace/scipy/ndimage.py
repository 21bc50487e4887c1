"""functrace.scipy.ndimage: ``map_coordinates``, traceable (as ``jax.scipy.ndimage``).

>>> import numpy as np
>>> float(map_coordinates(np.array([0.0, 10.0, 20.0]), [np.array(0.5)], order=1))
5.0
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.numpy._core import asarray_or_tracer

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    # a triangle wave of half-period size - 1: ... 2 1 0 1 2 ... size-1 size-2 ...
    s = size - 1
    if s == 0:
        return index * 0
    return fnp.abs(fnp.remainder(index + s, 2 * s) - s)


def _reflect(index: Any, size: int) -> Any:
    # the mirror about the half-sample edges: ... 1 0 0 1 ... size-1 size-1 size-2 ...
    return fnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda i, n: i,
    "nearest": lambda i, n: fnp.clip(i, 0, n - 1),
    "wrap": lambda i, n: fnp.remainder(i, n),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x: Any) -> Any:
    return fnp.sign(x) * fnp.floor(fnp.abs(x) + 0.5)


def map_coordinates(
    input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant", cval: Any = 0.0
) -> Any:
    """The values of ``input`` at the fractional indices ``coordinates`` (one array per
    dimension of ``input``, broadcasting together), by nearest-neighbour (``order=0``)
    or linear (``order=1``) interpolation.

    ``mode`` says what lies beyond the edges: ``"constant"`` (``cval``; a neighbour
    outside contributes ``cval``, so values blend to ``cval`` within one sample of the
    edge, SciPy's ``"grid-constant"``), ``"nearest"``, ``"wrap"`` (periodic, SciPy's
    ``"grid-wrap"``), ``"mirror"`` or ``"reflect"``: JAX's modes and semantics. Higher
    orders are not supported (as JAX). Integer inputs give rounded integer results.
    Differentiable in ``input`` and (within a cell, for ``order=1``) in the coordinates.

    >>> import numpy as np
    >>> img = np.arange(12.0).reshape(3, 4)
    >>> map_coordinates(img, [np.array([0.5, 2.0]), np.array([0.5, 3.0])], order=1).tolist()
    [2.5, 11.0]
    """
    fname = "map_coordinates"
    arr = asarray_or_tracer(input, fname)
    shape = core.get_aval(arr).shape
    if isinstance(coordinates, core.Tracer) or not isinstance(coordinates, (list, tuple)):
        coords_arr = asarray_or_tracer(coordinates, fname)
        if core.get_aval(coords_arr).ndim < 1:
            raise ValueError(f"{fname}: expected one coordinate array per dimension of input.")
        coordinates = [coords_arr[i] for i in range(core.get_aval(coords_arr).shape[0])]
    if len(coordinates) != len(shape):
        raise ValueError(
            f"{fname}: expected {len(shape)} coordinate arrays (input has {len(shape)} "
            f"dimensions), got {len(coordinates)}."
        )
    if mode not in _INDEX:
        raise NotImplementedError(
            f"{fname}: mode {mode!r} is not supported; expected one of {tuple(_INDEX)}."
        )
    if order not in (0, 1):
        raise NotImplementedError(
            f"{fname}: expected order 0 or 1 (higher orders are not supported), got {order!r}."
        )
    dt = core.get_aval(arr).dtype
    work = np.dtype(np.float64) if dt.kind in "biu" else dt
    coords = [asarray_or_tracer(c, fname) for c in coordinates]
    coords = [c if core.get_aval(c).dtype.kind == "f" else c.astype(work) for c in coords]
    # (a functrace array: NumPy's own indexing cannot take traced coordinates)
    values = fnp.asarray(arr.astype(work) if dt != work else arr)
    fix = _INDEX[mode]
    fill = fnp.asarray(fnp.asarray(cval, dt), work)  # (in input's dtype first, as JAX)
    per_dim = []
    for c, n in zip(coords, shape):
        if order == 0:
            nodes = [(_round_half_away(c).astype(np.int64), None)]
        else:
            lo = fnp.floor(c)
            w_hi = c - lo
            lo_i = lo.astype(np.int64)
            nodes = [(lo_i, 1 - w_hi), (lo_i + 1, w_hi)]
        fixed = []
        for idx, w in nodes:
            valid = (idx >= 0) & (idx < n) if mode == "constant" else None
            fixed.append((fnp.clip(fix(idx, n), 0, n - 1), valid, w))
        per_dim.append(fixed)
    total: Any = None
    for combo in itertools.product(*per_dim):
        idxs = tuple(i for i, _, _ in combo)
        val = values[idxs]
        valids = [v for _, v, _ in combo if v is not None]
        if valids:
            val = fnp.where(functools.reduce(operator.and_, valids), val, fill)
        weights = [w for _, _, w in combo if w is not None]
        if weights:
            val = functools.reduce(operator.mul, weights) * val
        total = val if total is None else total + val
    if dt.kind in "biu":
        total = _round_half_away(total)
    return total.astype(dt)
