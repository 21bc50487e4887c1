"""``Embedding``: a lookup table of vectors, and its functional form."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.nn._layer_util import as_array, dtype_of, positive_int, shape_of
from functrace.nn._module import Module, _rng, field


def _padding(name: str, padding_idx: Any, num: int) -> int | None:
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
        raise TypeError(f"{name}: expected padding_idx as an int or None, got {padding_idx!r}.")
    if not -num <= padding_idx < num:
        raise ValueError(
            f"{name}: expected padding_idx in [{-num}, {num}) for {num} embeddings, "
            f"got {padding_idx}."
        )
    return int(padding_idx) % num


def embedding(ids: Any, weight: Any, padding_idx: int | None = None) -> Any:
    """Rows of ``weight`` (shape ``(num_embeddings, embedding_dim)``) at the integer
    ``ids``: a result of shape ``ids.shape + (embedding_dim,)`` (as
    ``torch.nn.functional.embedding``). The gradient never reaches row ``padding_idx``.

    Known ids outside ``[0, num_embeddings)`` are an error; traced ids (under ``jit`` or
    ``vmap``) cannot raise from compiled code and are clamped into range, as
    ``functrace.numpy.take(..., mode="clip")``."""
    return _embedding("embedding", ids, weight, padding_idx)


def _embedding(name: str, ids: Any, weight: Any, padding_idx: Any) -> Any:
    ids = as_array(ids)
    wshape = shape_of(weight)
    if len(wshape) != 2:
        raise ValueError(
            f"{name}: expected weight of shape (num_embeddings, embedding_dim), got shape {wshape}."
        )
    num = wshape[0]
    dt = dtype_of(ids)
    if dt.kind not in "iu":
        raise TypeError(f"{name}: expected integer ids, got dtype {dt}.")
    if not isinstance(ids, core.Tracer) and ids.size:
        lo, hi = int(np.min(ids)), int(np.max(ids))
        if lo < 0 or hi >= num:
            bad = lo if lo < 0 else hi
            raise IndexError(
                f"{name}: expected ids in [0, {num}) for {num} embeddings, got id {bad}."
            )
    pad = _padding(name, padding_idx, num)
    if pad is not None:
        rows = (np.arange(num) == pad)[:, None]
        weight = fnp.where(rows, _lax.stop_gradient(weight), weight)
    return fnp.take(weight, ids, axis=0, mode="clip")


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim`` (PyTorch's
    ``nn.Embedding``): ``weight`` of shape ``(num_embeddings, embedding_dim)`` drawn from
    ``N(0, 1)``, with row ``padding_idx`` (if given; negative counts from the end) set to
    zeros and never receiving a gradient. ``Embedding(...)(ids)`` has shape
    ``ids.shape + (embedding_dim,)``; ids must be integers in ``[0, num_embeddings)``
    (checked when known; clamped when traced, see :func:`embedding`).

    >>> import numpy as np
    >>> from functrace import nn
    >>> nn.Embedding(10, 3, rng=0)(np.array([[1, 2], [3, 4]])).shape
    (2, 2, 3)
    """

    weight: Any
    num_embeddings: int = field(static=True)
    embedding_dim: int = field(static=True)
    padding_idx: int | None = field(static=True)

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        num = positive_int("Embedding", "num_embeddings", num_embeddings)
        dim = positive_int("Embedding", "embedding_dim", embedding_dim)
        self.num_embeddings, self.embedding_dim = num, dim
        self.padding_idx = _padding("Embedding", padding_idx, num)
        w = _rng(rng).standard_normal((num, dim)).astype(dtype)
        if self.padding_idx is not None:
            w[self.padding_idx] = 0
        self.weight = w

    def __call__(self, ids: Any) -> Any:
        return _embedding("Embedding", ids, self.weight, self.padding_idx)
