"""Reductions of functrace.numpy (``axis``/``keepdims`` as in NumPy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.lax.elementwise import full_like
from functrace.numpy._core import asarray_or_tracer, cast, dtype_arg, is_traced


def normalize_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """NumPy ``axis`` argument (None, int or tuple, negatives allowed) -> sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{fname}: expected axis in [{-ndim}, {ndim}) for an array of "
                             f"{ndim} dimensions, got {a}.")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: expected distinct axes, got {axis}.")
    return tuple(sorted(out))


def keepdims_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _finish(out: Any, in_shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    return ls.reshape(out, keepdims_shape(in_shape, axes)) if keepdims else out


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    # NumPy sums bools and small ints in the default integer type.
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,  # noqa: A001
        keepdims: bool = False) -> Any:
    """Sum over ``axis`` (NumPy semantics, including the result dtype)."""
    if not is_traced(a):
        return np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    a = asarray_or_tracer(a, "sum")
    aval = core.get_aval(a)
    axes = normalize_axes("sum", axis, aval.ndim)
    dt = dtype_arg(dtype) or _sum_dtype(aval.dtype)
    a = cast(a, dt, aval.weak_type)
    return _finish(lr.reduce_sum(a, axes), aval.shape, axes, keepdims)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis`` (integers average in float64, as in NumPy)."""
    if not is_traced(a):
        return np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    a = asarray_or_tracer(a, "mean")
    aval = core.get_aval(a)
    axes = normalize_axes("mean", axis, aval.ndim)
    dt = dtype_arg(dtype) or (aval.dtype if aval.dtype.kind in "fc" else np.dtype(np.float64))
    n = int(np.prod([aval.shape[i] for i in axes], dtype=np.int64))
    s = lr.reduce_sum(cast(a, dt, aval.weak_type), axes)
    from functrace.lax.elementwise import div

    return _finish(div(s, full_like(s, n)), aval.shape, axes, keepdims)
