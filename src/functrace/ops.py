"""JAX's ``jax.ops``: the segment reductions ``segment_sum``, ``segment_prod``,
``segment_max`` and ``segment_min``.

``segment_<op>(data, segment_ids, num_segments)`` reduces the rows of ``data`` (its
leading axis) that share a segment id: row ``i`` of the result combines every
``data[j]`` with ``segment_ids[j] == i``. A segment no row falls in holds the
reduction's identity (0, 1, and for ``max``/``min`` -inf/+inf, or the integer limits).
As in JAX, ids outside ``[0, num_segments)`` drop their rows (``mode="clip"`` clamps
them instead). Each is a scatter into the identity (``.at[ids].add/multiply/max/min``),
so it differentiates, batches and compiles as those do; ``num_segments`` sets the
result's shape, so under ``jit`` it must be given (it defaults to ``max(ids) + 1`` for
known ids). ``indices_are_sorted``, ``unique_indices`` and ``bucket_size`` are JAX's
hints and change nothing here.

>>> import numpy as np, functrace.ops as ops
>>> ops.segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 2, 1]), 3)
Array([3., 4., 3.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(name: str, dtype: np.dtype) -> Any:
    if name == "segment_sum":
        return 0
    if name == "segment_prod":
        return 1
    top = name == "segment_min"
    if dtype.kind == "f" or dtype.kind == "c":
        return np.inf if top else -np.inf
    if dtype.kind == "b":
        return top
    info = np.iinfo(dtype)
    return info.max if top else info.min


def _segment(
    name: str,
    method: str,
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    mode: Any,
) -> Any:
    data = fnp.asarray(data)
    ids = fnp.asarray(segment_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}: expected integer segment_ids, got {ids.dtype}.")
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(
            f"{name}: expected 1-d segment_ids with one id per row of data, got "
            f"segment_ids of shape {ids.shape} for data of shape {data.shape}."
        )
    if num_segments is None:
        if isinstance(ids, core.Tracer):
            raise ValueError(
                f"{name}: expected num_segments with traced segment_ids (it sets the "
                f"result's shape), got None. Pass num_segments=."
            )
        num_segments = int(np.max(np.asarray(ids))) + 1 if ids.shape[0] else 0
    n = operator.index(num_segments)
    if n < 0:
        raise ValueError(f"{name}: expected num_segments >= 0, got {n}.")
    kind = str(mode).lower().rsplit(".", 1)[-1] if mode is not None else "fill_or_drop"
    if kind == "clip":
        ids = lax.clamp(0, ids, max(n - 1, 0))
    elif kind in ("fill_or_drop", "drop", "fill", "promise_in_bounds"):
        # negative ids too (the scatter would wrap them): one past the end, dropped
        ids = fnp.where((ids < 0) | (ids >= n), n, ids)
    else:
        raise ValueError(
            f"{name}: expected mode None, 'clip', 'drop', 'fill' or 'promise_in_bounds' "
            f"(or a lax.GatherScatterMode), got {mode!r}."
        )
    out = fnp.full((n, *data.shape[1:]), _identity(name, data.dtype), data.dtype)
    return getattr(out.at[ids], method)(data, mode="drop")


def _segment_op(name: str, method: str, doc: str) -> Any:
    """The public ``segment_<op>``: ``_segment`` with ``.at[ids].<method>``; JAX's hints
    (``indices_are_sorted``, ``unique_indices``, ``bucket_size``) are accepted."""

    def segment_op(
        data: Any,
        segment_ids: Any,
        num_segments: Any = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        bucket_size: Any = None,
        mode: Any = None,
    ) -> Any:
        return _segment(name, method, data, segment_ids, num_segments, mode)

    segment_op.__name__ = segment_op.__qualname__ = name
    segment_op.__doc__ = doc
    return segment_op


segment_sum = _segment_op(
    "segment_sum", "add", "The sums of the rows of ``data`` in each segment (0 for an empty one)."
)
segment_prod = _segment_op(
    "segment_prod",
    "multiply",
    "The products of the rows of ``data`` in each segment (1 for an empty one).",
)
segment_max = _segment_op(
    "segment_max",
    "max",
    """The maxima of the rows of ``data`` in each segment (-inf, or the smallest
    integer, for an empty one); ties share the gradient, as ``.at[].max``.""",
)
segment_min = _segment_op(
    "segment_min",
    "min",
    """The minima of the rows of ``data`` in each segment (+inf, or the largest integer,
    for an empty one); ties share the gradient, as ``.at[].min``.""",
)
