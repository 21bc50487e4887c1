"""Array creation of functrace.numpy: ``array``, ``asarray``, ``copy``, ``zeros``,
``ones``, ``full``, ``empty``, their ``*_like`` forms, ``arange``, ``linspace``, ``eye``,
``identity``, ``triu_indices`` and ``tril_indices``.

Eagerly these are NumPy's own functions. Under ``jit``/``make_jaxpr`` a filled
array is a ``broadcast_in_dim`` of a scalar (no large constant in the IR).
Shapes and sizes must be concrete; fill values (and the ``start``/``stop`` of
``linspace``) may be traced, and then the result carries their derivative.

Decisions:

* ``empty``/``empty_like`` return zeros (deterministic, like JAX).
* ``*_like`` only read the shape and dtype of their argument: the result never
  depends on its values (zero derivative), as in NumPy.
* A ``float0`` array (the tangent type of integers) holds no data, so any fill value
  gives one, as in JAX (``zeros(shape, float0)`` in a ``custom_vjp`` bwd, also traced).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from functrace import core, dtypes
from functrace._array import Array, _wrap, to_array
from functrace.core import Tracer
from functrace.lax import shapes as ls
from functrace.numpy import _math as m
from functrace.numpy._core import (
    array_any,
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    concrete_array,
    concrete_int,
    dtype_arg,
    shape_tuple,
)
from functrace.numpy._dispatch import has_key_array, key_functions, numpy_path
from functrace.numpy._shape import broadcast_arrays, moveaxis

_FLOAT64 = np.dtype(np.float64)
_F = TypeVar("_F", bound=Callable[..., Any])


def _eager_array(f: _F) -> _F:
    """Eager results of a creation function are ``functrace.Array``s (as ``jnp.zeros``);
    tracers pass unchanged."""

    @functools.wraps(f)
    def g(*args: Any, **kwargs: Any) -> Any:
        return _wrap(f(*args, **kwargs))

    return g  # type: ignore[return-value]


def array(
    obj: Any,
    dtype: Any = None,
    copy: bool = True,
    order: Any = None,
    ndmin: int = 0,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``numpy.array`` that also accepts (nested) lists of traced values.

    On concrete input the result is an immutable :class:`functrace.Array` (as JAX's
    ``jnp.array``), so ``.at[...]`` works on it; ``asarray`` does not copy an input that
    already is an ``Array``, and copies a NumPy array once (so that writes to it do not
    show through). Strings, bytes and Python objects raise a ``TypeError``, as in JAX.

    >>> import functrace.numpy as fnp
    >>> fnp.array([1.0, 2.0], dtype=fnp.float32)
    Array([1., 2.], dtype=float32)
    """
    out = _array("array", obj, dtype, copy)
    nd = len(out.shape)
    return out if nd >= ndmin else out.reshape((1,) * (ndmin - nd) + tuple(out.shape))


def _array(fname: str, obj: Any, dtype: Any, copy: bool = True) -> Any:
    try:
        out = array_any(obj, dtype, copy, fname)
    except Exception:
        if has_key_array((obj,), {}):  # typed keys: numpy/_keys.py
            return key_functions[asarray](obj, dtype)
        raise
    return out if isinstance(out, Tracer) else to_array(out)


def asarray(
    obj: Any,
    dtype: Any = None,
    copy: bool | None = None,
    order: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``numpy.asarray`` that also accepts (nested) lists of traced values; see
    :func:`array`. An ``Array`` of the requested dtype is returned as it is.

    As in JAX, strings, bytes and Python objects (also NumPy object arrays) raise a
    ``TypeError``; a string with a numeric ``dtype`` is parsed (``asarray("1.5",
    float32)``). ``device``/``out_sharding`` (and ``array``'s) are accepted and
    ignored (one device), as are ``order`` values."""
    if type(obj) is Array and (dtype is None or np.dtype(dtype) == obj.dtype) and not copy:
        return obj
    return _array("asarray", obj, dtype)


@numpy_path(lambda a, order="K", subok=False: np.copy(a, order=order, subok=subok))
def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """A copy of ``a`` (``numpy.copy``); a tracer is returned as it is (values are
    immutable), so the derivative is the identity.

    >>> import functrace.numpy as fnp
    >>> fnp.copy([1.0, 2.0])
    array([1., 2.])
    """
    x = asarray_or_tracer(a, "copy")
    return x if isinstance(x, Tracer) else np.array(x, copy=True)


def _fill(fname: str, shape: tuple[int, ...], value: Any, dtype: np.dtype | None) -> Any:
    """``value`` broadcast to ``shape`` in ``dtype`` (the value's own dtype if None)."""
    if isinstance(value, Tracer):
        v = value if dtype is None else cast(value, dtype)
    elif dtype == dtypes.float0:  # no value to convert: a float0 array holds no data
        v = np.zeros(np.shape(value), dtype)
        v = v[()] if v.ndim == 0 else v
    else:
        v = np.asarray(value, dtype)
        v = v[()] if v.ndim == 0 else v
    vshape = core.get_aval(v).shape
    if len(vshape) > len(shape) or any(
        d not in (1, t) for d, t in zip(vshape, shape[len(shape) - len(vshape) :])
    ):
        raise ValueError(
            f"{fname}: expected a fill value that broadcasts to shape {shape}, got "
            f"shape {vshape}. Pass a scalar or a broadcastable array."
        )
    return broadcast_to_shape(v, shape)


@_eager_array
@numpy_path(lambda shape, dtype=None, *, device=None, out_sharding=None: np.zeros(shape, dtype))
def zeros(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (float64 by default).

    >>> import functrace.numpy as fnp
    >>> fnp.zeros((2, 2), dtype=fnp.int32)
    Array([[0, 0],
           [0, 0]], dtype=int32)
    """
    return _fill("zeros", shape_tuple("zeros", shape), 0, dtype_arg(dtype) or _FLOAT64)


@_eager_array
@numpy_path(lambda shape, dtype=None, *, device=None, out_sharding=None: np.ones(shape, dtype))
def ones(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (float64 by default).

    >>> import functrace.numpy as fnp
    >>> fnp.ones(3)
    Array([1., 1., 1.])
    """
    return _fill("ones", shape_tuple("ones", shape), 1, dtype_arg(dtype) or _FLOAT64)


@_eager_array
@numpy_path(lambda shape, dtype=None, *, device=None, out_sharding=None: np.zeros(shape, dtype))
def empty(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Like ``zeros`` (functrace arrays are never uninitialized)."""
    return _fill("empty", shape_tuple("empty", shape), 0, dtype_arg(dtype) or _FLOAT64)


@_eager_array
@numpy_path(
    lambda shape, fill_value, dtype=None, *, device=None, out_sharding=None: np.full(
        shape, fill_value, dtype
    )
)
def full(
    shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (which may be traced or an array
    that broadcasts to ``shape``); the dtype is the fill value's unless given.

    >>> import functrace.numpy as fnp
    >>> fnp.full((2,), 7)
    Array([7, 7])
    """
    return _fill("full", shape_tuple("full", shape), fill_value, dtype_arg(dtype))


def _like(fname: str, a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], np.dtype]:
    aval = core.get_aval(asarray_or_tracer(a, fname))
    shp = aval.shape if shape is None else shape_tuple(fname, shape)
    return shp, dtype_arg(dtype) or aval.dtype


@_eager_array
@numpy_path(
    lambda a, dtype=None, shape=None, *, device=None, out_sharding=None: np.zeros_like(
        a, dtype=dtype, shape=shape
    )
)
def zeros_like(
    a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """Zeros with the shape and dtype of ``a`` (unless given).

    >>> import functrace.numpy as fnp
    >>> fnp.zeros_like([1.5, 2.5])
    Array([0., 0.])
    """
    shp, dt = _like("zeros_like", a, dtype, shape)
    return _fill("zeros_like", shp, 0, dt)


@_eager_array
@numpy_path(
    lambda a, dtype=None, shape=None, *, device=None, out_sharding=None: np.ones_like(
        a, dtype=dtype, shape=shape
    )
)
def ones_like(
    a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """Ones with the shape and dtype of ``a`` (unless given)."""
    shp, dt = _like("ones_like", a, dtype, shape)
    return _fill("ones_like", shp, 1, dt)


@_eager_array
@numpy_path(
    lambda a, dtype=None, shape=None, *, device=None, out_sharding=None: np.zeros_like(
        a, dtype=dtype, shape=shape
    )
)
def empty_like(
    a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """Like ``zeros_like`` (functrace arrays are never uninitialized)."""
    shp, dt = _like("empty_like", a, dtype, shape)
    return _fill("empty_like", shp, 0, dt)


@_eager_array
@numpy_path(
    lambda a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None: np.full_like(
        a, fill_value, dtype=dtype, shape=shape
    )
)
def full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``fill_value`` (possibly traced) in the shape and dtype of ``a`` (unless given).

    >>> import functrace.numpy as fnp
    >>> fnp.full_like([1, 2, 3], 2.7)
    Array([2, 2, 2])
    """
    shp, dt = _like("full_like", a, dtype, shape)
    return _fill("full_like", shp, fill_value, dt)


def _concrete_scalar(fname: str, x: Any, what: str) -> Any:
    if isinstance(x, Tracer):
        return concrete_array(fname, x, what)[()]
    return x


@_eager_array
def arange(
    start: Any,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> np.ndarray:
    """Evenly spaced values in ``[start, stop)``; the bounds must be concrete.

    >>> import functrace.numpy as fnp
    >>> fnp.arange(3)
    Array([0, 1, 2])
    """
    if isinstance(start, Tracer) or isinstance(stop, Tracer) or isinstance(step, Tracer):
        start, stop, step = (_concrete_scalar("arange", v, "bounds") for v in (start, stop, step))
    if stop is None:
        return (
            np.arange(start, step=step, dtype=dtype)
            if step is not None
            else np.arange(start, dtype=dtype)
        )
    return np.arange(start, stop, step, dtype=dtype)


@_eager_array
@numpy_path(
    lambda start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None: (
        np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
    )
)
def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included if ``endpoint``).

    ``start`` and ``stop`` may be traced (and arrays: the samples run along ``axis``).

    >>> import functrace.numpy as fnp
    >>> fnp.linspace(0.0, 1.0, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = concrete_int("linspace", num, "num") if isinstance(num, Tracer) else int(num)
    if num < 0:
        raise ValueError(f"linspace: expected a non-negative num, got {num}.")
    start, stop = broadcast_arrays(
        asarray_or_tracer(start, "linspace"), asarray_or_tracer(stop, "linspace")
    )
    avals = [core.get_aval(start), core.get_aval(stop)]
    dt, _ = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals], (_FLOAT64, True))
    start, stop = cast(start, dt), cast(stop, dt)
    shp = avals[0].shape
    div = num - 1 if endpoint else num
    delta = m.subtract(stop, start)
    steps = (
        ls.broadcast_in_dim(ls.iota(dt, num), (num, *shp), (0,))
        if num
        else _fill("linspace", (0, *shp), 0, dt)
    )
    bstart = ls.broadcast_in_dim(start, (num, *shp), tuple(range(1, len(shp) + 1)))
    if div > 0:
        step = m.true_divide(delta, float(div))
        y = m.add(m.multiply(steps, step), bstart)
    else:
        step = np.nan
        y = m.add(m.multiply(steps, delta), bstart)
    if endpoint and num > 1:  # the last sample is exactly stop
        head = ls.slice(y, (0,) * (len(shp) + 1), (num - 1, *shp))
        y = ls.concatenate([head, ls.reshape(stop, (1, *shp))], 0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    out_dt = dtype_arg(dtype)
    if out_dt is not None and out_dt != dt:
        y = cast(m.floor(y) if out_dt.kind in "iu" else y, out_dt)
    return (y, step) if retstep else y


@_eager_array
def eye(
    N: int, M: int | None = None, k: int = 0, dtype: Any = float, *, device: Any = None
) -> np.ndarray:
    """A 2-d array with ones on the ``k``-th diagonal (concrete sizes only).

    >>> import functrace.numpy as fnp
    >>> fnp.eye(2, dtype=int)
    Array([[1, 0],
           [0, 1]])
    """
    return np.eye(N, M, k, dtype=dtype)


@_eager_array
def identity(n: int, dtype: Any = None) -> np.ndarray:
    """The ``n`` by ``n`` identity matrix (float64 by default)."""
    return np.identity(n, dtype=dtype)


def _tri_indices(fname: str, np_fn: Any, n: Any, k: Any, m: Any) -> tuple[Any, ...]:
    n, k, m = (concrete_int(fname, v, "sizes") if isinstance(v, Tracer) else v for v in (n, k, m))
    return tuple(_wrap(i) for i in np_fn(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, ...]:
    """The (row, column) int64 index arrays of the upper triangle (on and above the
    ``k``-th diagonal) of an ``n`` by ``m`` array (``m = n`` by default; concrete sizes).

    >>> import functrace.numpy as fnp
    >>> fnp.triu_indices(3, k=1)
    (Array([0, 0, 1]), Array([1, 2, 2]))
    """
    return _tri_indices("triu_indices", np.triu_indices, n, k, m)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, ...]:
    """The (row, column) int64 index arrays of the lower triangle (on and below the
    ``k``-th diagonal) of an ``n`` by ``m`` array (``m = n`` by default; concrete sizes).

    >>> import functrace.numpy as fnp
    >>> fnp.tril_indices(2)
    (Array([0, 1, 1]), Array([0, 0, 1]))
    """
    return _tri_indices("tril_indices", np.tril_indices, n, k, m)


__all__ = [
    "arange",
    "array",
    "asarray",
    "copy",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "tril_indices",
    "triu_indices",
    "zeros",
    "zeros_like",
]
