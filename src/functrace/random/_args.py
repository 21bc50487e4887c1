"""Argument checking and dtype helpers shared by the samplers of ``functrace.random``."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core, lax
from functrace.core import Tracer

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_UINTS: dict[int, np.dtype] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: _U64}
_DEFAULT_FLOAT = np.dtype(np.float64)
_DEFAULT_INT = np.dtype(np.int64)


def _quiet(fn: Any) -> Any:
    """Run ``fn`` without NumPy's floating-point warnings: eager samplers compute on
    NumPy arrays, and intermediate infinities (a rejected proposal, uint wrap-around)
    are part of the algorithms, as in JAX."""
    import functools

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapped


def _canonical_shape(name: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(int(_index(d)) for d in shape)
    except TypeError:
        raise TypeError(
            f"random.{name}: expected a shape (a tuple of Python ints), got {shape!r}."
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"random.{name}: expected non-negative sizes, got shape {out}.")
    return out


def _index(d: Any) -> int:
    import operator

    return operator.index(d)


def _full(like: Any, value: Any, dtype: Any) -> Any:
    return lax.full_like(like, value, np.dtype(dtype))


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dt = _DEFAULT_FLOAT if dtype is None else np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"random.{name}: expected a floating-point dtype, got {dt.name}.")
    return dt


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if not param_shapes:
        return
    try:
        got = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        got = None
    if got != shape:
        raise ValueError(
            f"random.{name}: expected parameter shapes {list(param_shapes)} that broadcast "
            f"to the shape argument {shape}, got {got if got is not None else 'no broadcast'}."
        )


def _as(x: Any, dtype: np.dtype) -> Any:
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dtype)
    return np.asarray(x, dtype=dtype)


def _dtype_of(x: Any) -> np.dtype:
    return core.get_aval(x).dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape) if isinstance(x, Tracer) else np.shape(x)


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    dt = _DEFAULT_INT if dtype is None else np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"random.{name}: expected an integer dtype, got {dt.name}.")
    return dt
