"""Grids, index generators, files and printing of functrace.numpy: ``logspace``,
``geomspace``, ``indices``, ``tri``, ``fromfunction``, ``mgrid``, ``ogrid``, ``s_``,
``index_exp``, ``frombuffer``, ``fromstring``, ``fromiter``, ``fromfile``, ``load``,
``save``, ``savez``, ``array_repr``, ``array_str`` and NumPy's print options.

Eagerly the creation functions are NumPy's own and return :class:`functrace.Array`
(as ``zeros`` and ``linspace`` do). Under ``jit``/``make_jaxpr``, ``indices`` and ``tri``
are built from ``iota`` (no large constant in the IR); ``logspace`` and ``geomspace``
take traced endpoints (and base) and carry their derivative.

Decisions:

* ``fromfunction`` follows NumPy, not JAX: ``function`` is called once, on whole index
  arrays (JAX calls it on scalars under ``vmap``). Its body may use any
  ``functrace.numpy`` function and close over traced values.
* ``geomspace``: a zero endpoint raises on plain NumPy inputs (as in NumPy); traced
  endpoints are not inspected (that would stop eager derivative programs from being
  reused), so a zero gives ``inf``/NaN there, as in JAX. Complex endpoints work on
  plain NumPy inputs only (``lax`` has no complex logarithm).
* The file functions (``fromfile``, ``load``, ``save``, ``savez``) and ``frombuffer``,
  ``fromstring``, ``fromiter`` are eager only, thin wrappers over NumPy whose array
  results are copied into ``Array``s (never aliasing a buffer or a memory map). JAX
  leaves ``fromfile`` unimplemented; here it is NumPy's. ``save``/``savez`` refuse
  traced values (write them outside the transform, or with ``debug.callback``).
* ``array_repr``/``array_str`` of a tracer give its ``repr``/``str`` (shape and dtype:
  its values are not known while tracing); ``Array`` reprs read ``Array(...)``.
* ``get_printoptions``, ``set_printoptions``, ``printoptions``, ``s_`` and ``index_exp``
  are NumPy's own objects.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from functrace import core
from functrace._array import Array, to_array
from functrace.core import Tracer
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    cast,
    concrete_array,
    dtype_arg,
    shape_tuple,
)
from functrace.numpy._creation import linspace
from functrace.numpy._dispatch import _array_results, contains_tracer, is_traced, numpy_path
from functrace.numpy._joining import concatenate
from functrace.numpy._math import less_equal, multiply, power, sign, true_divide
from functrace.numpy._shape import broadcast_arrays, expand_dims, moveaxis
from functrace.numpy._special import log10

_FLOAT64 = np.dtype(np.float64)
_PY_SCALARS = (builtins.bool, int, float, complex)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _static_int(fname: str, v: Any, what: str) -> int:
    if isinstance(v, Tracer):
        return int(concrete_array(fname, v, what))
    try:
        return int(v)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: expected an integer {what}, got {v!r}.") from None


# ---------------------------------------------------------------------------
# logspace, geomspace
# ---------------------------------------------------------------------------


def _first_axis_to(y: Any, axis: int) -> Any:
    """``y`` (samples along axis 0) with the samples moved to ``axis`` of the result."""
    return y if axis == 0 else moveaxis(y, 0, axis)


def _out_dtype(y: Any, dtype: Any) -> Any:
    dt = dtype_arg(dtype)
    return y if dt is None or dt == _dtype(y) else cast(y, dt)


def _eager_arrays(f: Any) -> Any:
    """Eager results (an array, or a tuple of them) as ``Array``s; tracers pass."""

    def g(*args: Any, **kwargs: Any) -> Any:
        return _array_results(f(*args, **kwargs))

    g.__name__ = g.__qualname__ = f.__name__
    g.__doc__, g.__module__, g.__wrapped__ = f.__doc__, f.__module__, f  # type: ignore[attr-defined]
    return g


@_eager_arrays
@numpy_path(np.logspace)  # (the same signature)
def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: builtins.bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``base ** linspace(start, stop, num)``: ``num`` samples evenly spaced on a log
    scale (NumPy's ``logspace``). ``start``, ``stop`` and ``base`` may be traced or
    arrays (an array ``base`` broadcasts against them; the samples run along ``axis``).

    >>> import functrace.numpy as fnp
    >>> fnp.logspace(0.0, 2.0, 3)
    Array([  1.,  10., 100.])
    """
    if type(base) in _PY_SCALARS:  # weak: the samples keep their dtype (NumPy 2)
        return _out_dtype(power(base, linspace(start, stop, num, endpoint, axis=axis)), dtype)
    s, e, b = broadcast_arrays(
        asarray_or_tracer(start, "logspace"),
        asarray_or_tracer(stop, "logspace"),
        asarray_or_tracer(base, "logspace"),
    )
    y = linspace(s, e, num, endpoint, axis=axis)
    return _out_dtype(power(expand_dims(b, axis), y), dtype)


def _np_geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: builtins.bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    for v in (start, stop):
        if np.any(np.asarray(v) == 0):
            raise ValueError(
                f"geomspace: expected nonzero start and stop (a geometric sequence cannot "
                f"include zero), got {v!r}. Start or stop at a small nonzero value instead."
            )
    return np.geomspace(start, stop, num, endpoint, dtype, axis)


@_eager_arrays
@numpy_path(_np_geomspace)
def geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: builtins.bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``num`` samples from ``start`` to ``stop`` in geometric progression (a constant
    ratio between neighbours), NumPy's ``geomspace``: float64 unless ``dtype`` is
    given, the endpoints exactly ``start`` and ``stop``, negative sequences allowed.
    Traced endpoints carry their derivative; they must be real.

    >>> import functrace.numpy as fnp
    >>> fnp.geomspace(1.0, 1000.0, 4)
    Array([   1.,   10.,  100., 1000.])
    """
    s, e = asarray_or_tracer(start, "geomspace"), asarray_or_tracer(stop, "geomspace")
    out_dt = dtype_arg(dtype)
    extra = [] if out_dt is None else [out_dt]
    dt = np.result_type(_dtype(s), _dtype(e), _FLOAT64, *extra)
    if dt.kind not in "f":
        raise NotImplementedError(
            f"geomspace: expected real traced endpoints, got {dt.name}. Complex "
            f"geometric sequences are only available on plain NumPy inputs."
        )
    s, e = broadcast_arrays(cast(s, dt), cast(e, dt))
    sgn = sign(s)  # rotate negative sequences onto the positive axis, and back
    y = linspace(log10(true_divide(s, sgn)), log10(true_divide(e, sgn)), num, endpoint)
    out = multiply(power(10.0, y), sgn)
    n, shp = _shape(out)[0], _shape(s)
    if n > 0:  # the endpoints exactly as given
        last = n - 1 if endpoint and n > 1 else n
        parts = [ls.reshape(s, (1, *shp)), _rows(out, 1, last)]
        if last < n:
            parts.append(ls.reshape(e, (1, *shp)))
        out = concatenate(parts, 0)
    return _out_dtype(_first_axis_to(out, axis), dtype)


def _rows(x: Any, start: int, stop: int) -> Any:
    shp = _shape(x)
    return ls.slice(x, (start,) + (0,) * (len(shp) - 1), (stop, *shp[1:]))


# ---------------------------------------------------------------------------
# indices, tri, fromfunction
# ---------------------------------------------------------------------------


def _index_grids(dims: tuple[int, ...], dt: np.dtype, sparse: builtins.bool) -> Any:
    """``indices(dims)`` from ``iota`` (traced)."""
    nd = len(dims)
    if sparse:
        return tuple(
            cast(ls.iota(np.int64, d, i, tuple(d if j == i else 1 for j in range(nd))), dt)
            for i, d in enumerate(dims)
        )
    if nd == 0:
        return ls.broadcast_in_dim(np.zeros((), dt)[()], (0,), ())
    grids = [
        ls.reshape(cast(ls.iota(np.int64, d, i, dims), dt), (1, *dims)) for i, d in enumerate(dims)
    ]
    return grids[0] if nd == 1 else ls.concatenate(grids, 0)


@_eager_arrays
def indices(dimensions: Any, dtype: Any = int, sparse: builtins.bool = False) -> Any:
    """The index grids of an array of shape ``dimensions``: one array per axis, the
    ``i``-th holding each element's index along axis ``i`` (NumPy's ``indices``),
    stacked into one ``(len(dimensions), *dimensions)`` array, or with ``sparse=True``
    a tuple of broadcastable arrays with size-1 axes.

    >>> import functrace.numpy as fnp
    >>> fnp.indices((2, 3))[1]
    Array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = shape_tuple("indices", dimensions)
    dt = np.dtype(dtype)
    if any(d < 0 for d in dims):
        raise ValueError(f"indices: expected non-negative dimensions, got {dims}.")
    if not is_traced(dimensions):
        return np.indices(dims, dt, sparse)  # type: ignore[call-overload]
    return _index_grids(dims, dt, sparse)


@_eager_arrays
def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> Any:
    """An ``N`` by ``M`` (``M = N`` by default) array with ones on and below the
    ``k``-th diagonal and zeros elsewhere (NumPy's ``tri``; float64 by default, where
    JAX gives float32).

    >>> import functrace.numpy as fnp
    >>> fnp.tri(3, k=-1, dtype=int)
    Array([[0, 0, 0],
           [1, 0, 0],
           [1, 1, 0]])
    """
    n = _static_int("tri", N, "N")
    m = n if M is None else _static_int("tri", M, "M")
    kk = _static_int("tri", k, "k")
    dt = np.dtype(float if dtype is None else dtype)
    if not is_traced(N, M, k):
        return np.tri(n, m, kk, dt)
    n, m = builtins.max(n, 0), builtins.max(m, 0)
    rows = ls.iota(np.int64, n, 0, (n, m))
    cols = ls.iota(np.int64, m, 1, (n, m))
    return cast(less_equal(cols, rows + kk), dt)


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``function(*indices(shape, dtype), **kwargs)``: an array whose element at
    ``(i, j, ...)`` is ``function(i, j, ...)``, NumPy's ``fromfunction``.

    As in NumPy (and unlike JAX, which maps ``function`` over scalars), ``function`` is
    called once, on whole index arrays, so it must work elementwise on arrays. It may
    use ``functrace.numpy`` and traced values: the result is traced then.

    >>> import functrace.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: 10 * i + j, (2, 3), dtype=int)
    Array([[ 0,  1,  2],
           [10, 11, 12]])
    """
    dims = shape_tuple("fromfunction", shape)
    if not callable(function):
        raise TypeError(
            f"fromfunction: expected a callable function, got {type(function).__name__}."
        )
    grids = indices(dims, dtype=dtype)
    return function(*(grids[i] for i in range(len(dims))), **kwargs)


# ---------------------------------------------------------------------------
# mgrid, ogrid, s_, index_exp
# ---------------------------------------------------------------------------


def _concrete_bound(fname: str, v: Any) -> Any:
    return concrete_array(fname, v, "slice bounds")[()] if isinstance(v, Tracer) else v


class _GridIndexer:
    """``mgrid[start:stop:step, ...]`` (dense) and ``ogrid[...]`` (open, broadcastable)
    coordinate grids, NumPy's index tricks: a complex step ``Nj`` asks for ``N`` points
    with ``stop`` included. The slice bounds must be concrete; the result is an
    ``Array`` (``ogrid`` with several slices: a tuple of them).

    >>> import functrace.numpy as fnp
    >>> fnp.mgrid[0:2, 0:3].shape
    (2, 2, 3)
    >>> fnp.ogrid[0:1:3j]
    Array([0. , 0.5, 1. ])
    """

    def __init__(self, name: str, sparse: builtins.bool) -> None:
        self._name = name
        self._np = np.ogrid if sparse else np.mgrid

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        bounds = []
        for item in items:
            if not isinstance(item, builtins.slice):
                raise TypeError(
                    f"{self._name}: expected slices such as 0:5 or 0:1:5j, got {item!r}. "
                    f"Write {self._name}[{item!r}:{item!r} + 1] for a single point."
                )
            bounds.append(
                builtins.slice(
                    *(_concrete_bound(self._name, b) for b in (item.start, item.stop, item.step))
                )
            )
        out = self._np[tuple(bounds) if isinstance(key, tuple) else bounds[0]]
        return _array_results(tuple(out) if isinstance(out, list) else out)

    def __repr__(self) -> str:
        return f"functrace.numpy.{self._name}"


mgrid = _GridIndexer("mgrid", sparse=False)
ogrid = _GridIndexer("ogrid", sparse=True)
s_ = np.s_
index_exp = np.index_exp


# ---------------------------------------------------------------------------
# Buffers and files (eager)
# ---------------------------------------------------------------------------


def _owned(x: Any) -> Any:
    """A NumPy result as an ``Array`` that owns its memory (no buffer, no memory map)."""
    if isinstance(x, np.ndarray) and (type(x) is not np.ndarray or x.base is not None):
        x = np.array(x, copy=True)
    return to_array(x)


def _no_tracers(fname: str, *values: Any) -> None:
    for v in values:
        if contains_tracer(v):
            raise TypeError(
                f"{fname}: expected concrete arrays, got a traced value. Files are written "
                f"outside transformations: return the value and write it afterwards, or "
                f"write it from functrace.debug.callback."
            )


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """A 1-d ``Array`` of ``count`` items (all by default) of ``dtype`` read from the
    bytes of ``buffer`` after ``offset`` bytes (NumPy's ``frombuffer``; the result is a
    copy, never a view of ``buffer``).

    >>> import functrace.numpy as fnp
    >>> fnp.frombuffer(bytes([1, 0, 2, 0]), dtype=fnp.int16)
    Array([1, 2], dtype=int16)
    """
    return _owned(np.frombuffer(buffer, dtype, count, offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-d ``Array`` parsed from the text ``string``, items separated by ``sep``
    (NumPy's ``fromstring``; ``sep`` is required, as NumPy 2 removed the binary mode:
    use :func:`frombuffer` for bytes).

    >>> import functrace.numpy as fnp
    >>> fnp.fromstring("1 2 3", dtype=int, sep=" ")
    Array([1, 2, 3])
    """
    if not sep:
        raise ValueError(
            "fromstring: expected a non-empty separator sep (the text between items), got "
            f"{sep!r}. Use frombuffer to read binary data."
        )
    return _owned(np.fromstring(string, dtype, count, sep=sep))


def fromiter(iterable: Any, dtype: Any, count: int = -1) -> Any:
    """A 1-d ``Array`` of ``dtype`` from the items of ``iterable`` (NumPy's ``fromiter``).

    >>> import functrace.numpy as fnp
    >>> fnp.fromiter((i * i for i in range(4)), dtype=int)
    Array([0, 1, 4, 9])
    """
    return _owned(np.fromiter(iterable, dtype, count))


def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0) -> Any:
    """A 1-d ``Array`` read from a binary (``sep=""``) or text file (NumPy's
    ``fromfile``). JAX does not implement it; here it is an eager read.

    >>> import functrace.numpy as fnp, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> _ = open(path, "w").write("1 2 3")
    >>> fnp.fromfile(path, dtype=int, sep=" ")
    Array([1, 2, 3])
    """
    return _owned(np.fromfile(file, dtype, count, sep, offset))


def load(
    file: Any, mmap_mode: Any = None, allow_pickle: builtins.bool = False, **kwargs: Any
) -> Any:
    """Read a ``.npy`` file as an ``Array`` (an ``.npz`` archive is returned as NumPy's
    lazy ``NpzFile``, whose members are NumPy arrays), NumPy's ``load``. A memory-mapped
    read (``mmap_mode``) is copied into memory.

    >>> import functrace.numpy as fnp, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
    >>> fnp.save(path, fnp.arange(3))
    >>> fnp.load(path)
    Array([0, 1, 2])
    """
    out = np.load(file, mmap_mode, allow_pickle, **kwargs)
    return _owned(out) if isinstance(out, np.ndarray) else out


def save(file: Any, arr: Any, allow_pickle: builtins.bool = True) -> None:
    """Write one array to a ``.npy`` file (NumPy's ``save``); traced values are refused.

    >>> import functrace.numpy as fnp, tempfile, os
    >>> fnp.save(os.path.join(tempfile.mkdtemp(), "x.npy"), fnp.ones(2))
    """
    _no_tracers("save", arr)
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, allow_pickle: builtins.bool = True, **kwds: Any) -> None:
    """Write several arrays to an uncompressed ``.npz`` archive (NumPy's ``savez``:
    positional arrays are named ``arr_0``, ``arr_1``...); traced values are refused.

    >>> import functrace.numpy as fnp, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "xs.npz")
    >>> fnp.savez(path, fnp.ones(2), b=fnp.zeros(1))
    >>> sorted(fnp.load(path).files)
    ['arr_0', 'b']
    """
    _no_tracers("savez", *args, *kwds.values())
    np.savez(
        file,
        *(np.asarray(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: np.asarray(v) for k, v in kwds.items()},
    )


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------


def array_repr(
    arr: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: Any = None,
) -> str:
    """The ``repr`` text of an array (NumPy's ``array_repr``); an ``Array`` reads
    ``Array(...)`` and a tracer gives its own ``repr`` (its values are not known).

    >>> import functrace.numpy as fnp
    >>> fnp.array_repr(fnp.array([1.0, 2.0], dtype=fnp.float32))
    'Array([1., 2.], dtype=float32)'
    """
    if isinstance(arr, Tracer):
        return repr(arr)
    text = np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)
    if type(arr) is Array and text.startswith("array"):
        return "Array" + text[len("array") :]
    return text


def array_str(
    a: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: Any = None,
) -> str:
    """The ``str`` text of an array's values (NumPy's ``array_str``); a tracer gives its
    own ``str``.

    >>> import functrace.numpy as fnp
    >>> fnp.array_str(fnp.array([1.0, 2.5]))
    '[1.  2.5]'
    """
    if isinstance(a, Tracer):
        return str(a)
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions

__all__ = [
    "array_repr",
    "array_str",
    "frombuffer",
    "fromfile",
    "fromfunction",
    "fromiter",
    "fromstring",
    "geomspace",
    "get_printoptions",
    "index_exp",
    "indices",
    "load",
    "logspace",
    "mgrid",
    "ogrid",
    "printoptions",
    "s_",
    "save",
    "savez",
    "set_printoptions",
    "tri",
]
