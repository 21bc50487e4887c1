"""Argument checking and dtype helpers shared by the samplers of ``functrace.random``."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
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


def _float_dtype(name: str, dtype: Any, complex_ok: bool = False) -> np.dtype:
    dt = _DEFAULT_FLOAT if dtype is None else np.dtype(dtype)
    if dt.kind == "c" and complex_ok:
        return dt
    if dt.kind != "f":
        what = "a floating-point or complex" if complex_ok else "a floating-point"
        raise TypeError(f"random.{name}: expected {what} dtype, got {dt.name}.")
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


def _check_sharding(name: str, out_sharding: Any) -> None:
    """JAX's ``out_sharding`` keyword: only ``None`` (functrace has no shardings; the
    values never depend on one)."""
    if out_sharding is not None:
        raise ValueError(
            f"random.{name}: expected out_sharding=None (functrace runs on one device and "
            f"has no shardings), got {out_sharding!r}."
        )


def _check_castable(name: str, dt: np.dtype, *params: Any) -> None:
    """JAX's rule for a sampler's parameters: each must convert to ``dt`` without losing
    precision (a float64 array into float32 is an error; Python scalars, which are weak,
    and integers always convert)."""
    for p in params:
        aval = core.get_aval(
            p if isinstance(p, Tracer) or core.is_python_scalar(p) else np.asarray(p)
        )
        if aval.weak_type or aval.dtype.kind in "biu":
            continue
        if aval.dtype.kind not in "fc" or np.result_type(aval.dtype, dt) != dt:
            raise TypeError(
                f"random.{name}: expected parameters that convert to {dt.name} without "
                f"loss, got {aval.dtype.name}. Pass dtype={aval.dtype.name} or convert the "
                f"parameter first."
            )


def _param_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """The sample shape: ``shape`` (checked against the parameters' shapes) or, when it
    is None, the broadcast of the parameters' shapes."""
    shapes = [_shape_of(p) for p in params]
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise ValueError(
                f"random.{name}: expected parameters of broadcast-compatible shapes, got {shapes}."
            ) from None
    shp = _canonical_shape(name, shape)
    _check_shape(name, shp, *shapes)
    return shp


def _inexact_dtype(x: Any) -> np.dtype:
    """``x``'s dtype if it is floating-point (or complex), else the default float (JAX's
    ``promote_dtypes_inexact`` with x64 on)."""
    dt = _dtype_of(x)
    return dt if dt.kind in "fc" else _DEFAULT_FLOAT


def _saturating_int(x: Any, dt: np.dtype) -> Any:
    """Float ``x`` converted to the integer ``dt`` as XLA does: out-of-range values
    saturate and NaN becomes 0 (NumPy's cast is undefined there)."""
    info = np.iinfo(dt)
    xdt = _dtype_of(x)
    hi = np.array(float(info.max), xdt)  # rounds up to a power of two: out of range
    lo = np.array(float(info.min), xdt)
    ok = (x < hi) & (x >= lo)
    out = fnp.where(ok, x, np.array(0, xdt)).astype(dt)
    out = fnp.where(x >= hi, np.array(info.max, dt), out)
    return fnp.where(x < lo, np.array(info.min, dt), out)
