"""Dtype names and promotion, and index helpers of functrace.numpy; the grids, files
and printing of ``_grids`` and the predicates, bits and array API names of
``_predicates`` are re-exported from here.

* Dtypes: NumPy's abstract classes (``floating``, ``integer``...; the scalar types
  ``float32``, ``bool``, ``double``... are JAX's, in ``_scalar_types``), ``issubdtype``,
  ``isdtype``, ``promote_types``, ``result_type``, ``can_cast``, ``isscalar``, ``iterable`` and
  ``broadcast_shapes``.
* Index helpers: ``diag_indices(_from)``, ``tril/triu_indices_from``, ``mask_indices``,
  ``ix_``, ``ravel_multi_index`` and ``fill_diagonal``.

Plain NumPy inputs go to NumPy. On tracers ``ravel_multi_index`` and ``fill_diagonal``
are composites of functrace.numpy and lax functions (``fill_diagonal`` pads the values
into place and selects them, no scatter), so they differentiate, batch and jit.

Decisions (where JAX and NumPy differ, functrace follows its own promotion, NumPy 2's):

* ``result_type`` and ``promote_types`` give the dtype functrace's operations compute
  in (NumPy 2 rules, Python scalars and weak traced values weak): ``int64`` with
  ``float32`` is ``float64``, where JAX says ``float32``. Dtype arguments are strong, as
  in NumPy: ``result_type(float, float32)`` is ``float64`` (JAX treats the type
  ``float`` as weak). Under ``numpy_dtype_promotion("strict")`` both raise
  ``TypePromotionError`` for different dtypes, so ``result_type(float, float32)`` raises
  there (JAX allows it, ``float`` being weak).
* ``isscalar`` follows JAX: 0-d arrays and 0-d tracers are scalars too (NumPy says no).
* ``fill_diagonal`` is JAX's functional form: it returns a new array and needs
  ``inplace=False`` (the default ``inplace=True`` raises, as in JAX). ``wrap=True``
  works (JAX leaves it unimplemented).
* ``ravel_multi_index`` returns int64 as NumPy does (JAX keeps the index dtype). With
  ``mode="raise"`` the indices must be concrete to be checked; under ``jit`` pass
  ``mode="clip"`` or ``"wrap"``.
* The index helpers (``diag_indices``, ``mask_indices``, ...) return concrete ``Array``s
  even inside ``jit``: they depend on shapes only, so indexing with them stays static.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import _wrap
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, cast, concrete_array, shape_tuple
from functrace.numpy._core import broadcast_shapes as _broadcast_shapes
from functrace.numpy._creation import tril_indices, triu_indices
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._grids import *  # noqa: F403
from functrace.numpy._grids import __all__ as _grids_all
from functrace.numpy._indexing import nonzero, where
from functrace.numpy._joining import concatenate
from functrace.numpy._math import add, clip, multiply, remainder
from functrace.numpy._predicates import *  # noqa: F403
from functrace.numpy._predicates import __all__ as _predicates_all
from functrace.numpy._shape import broadcast_arrays

_Bool = builtins.bool
_INT64 = np.dtype(np.int64)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _arr(x: Any) -> Any:
    """A tracer as it is, anything else as a NumPy array (Python scalars included)."""
    return x if isinstance(x, Tracer) else np.asarray(x)


# ---------------------------------------------------------------------------
# Dtypes and promotion
# ---------------------------------------------------------------------------

issubdtype = dtypes.issubdtype
isdtype = np.isdtype


def _dtype_or_none(x: Any) -> np.dtype | None:
    try:
        return np.dtype(x)
    except TypeError:
        return None


def _promotion_key(fname: str, x: Any) -> tuple[np.dtype, _Bool]:
    """(dtype, weak) of a ``result_type`` argument: values, arrays, tracers or dtypes."""
    if isinstance(x, Tracer):
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype, False
    if core.is_python_scalar(x):
        return dtypes.python_scalar_dtype(x), True
    dt = None if isinstance(x, (list, tuple, dict)) else _dtype_or_none(x)
    if dt is None:
        raise TypeError(
            f"{fname}: expected arrays, scalars or dtypes, got {type(x).__name__} "
            f"({x!r:.60}). Convert sequences with functrace.numpy.asarray first."
        )
    return dt, False


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype functrace's operations give when they combine these arrays, scalars,
    tracers and dtypes: NumPy 2 promotion, in which Python scalars (and weak traced
    values) take the dtype of the arrays they meet.

    >>> import functrace.numpy as fnp
    >>> fnp.result_type(fnp.float32, 2.0), fnp.result_type(fnp.int64, fnp.float32)
    (dtype('float32'), dtype('float64'))
    """
    if not arrays_and_dtypes:
        raise ValueError("result_type: expected at least one array, scalar or dtype, got none.")
    keys = [_promotion_key("result_type", x) for x in arrays_and_dtypes]
    if dtypes.promotion.maybe_strict:  # config.numpy_dtype_promotion="strict"
        dtypes.check_promotion("result_type", keys, dtypes.from_user(1))
    try:
        return dtypes.promote(*keys)[0]
    except TypeError:
        given = ", ".join(k.name for k, _ in keys)
        raise TypeError(
            f"result_type: expected dtypes that promote to a common dtype, got {given}."
        ) from None


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` cast to safely (NumPy's
    ``promote_types``; functrace promotes this way, where JAX's ``promote_types`` says
    e.g. ``float16`` for ``int64`` with ``float16``).

    >>> import functrace.numpy as fnp
    >>> fnp.promote_types(fnp.int8, fnp.uint8)
    dtype('int16')
    """
    if dtypes.promotion.maybe_strict:  # config.numpy_dtype_promotion="strict"
        d1, d2 = _dtype_or_none(type1), _dtype_or_none(type2)  # (dtype arguments are strong)
        if d1 is not None and d2 is not None:
            keys = [(d1, False), (d2, False)]
            dtypes.check_promotion("promote_types", keys, dtypes.from_user(1))
    try:
        return np.promote_types(type1, type2)
    except TypeError:
        raise TypeError(
            f"promote_types: expected two dtypes that promote to a common dtype, got "
            f"{type1!r} and {type2!r}."
        ) from None


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_: Any, to: Any, casting: str = "safe") -> _Bool:
    """Whether a cast from ``from_`` (a dtype, an array or a tracer) to dtype ``to`` is
    allowed under the ``casting`` rule (NumPy's ``can_cast``; Python scalars are
    refused, as in NumPy 2).

    >>> import functrace.numpy as fnp
    >>> fnp.can_cast(fnp.int32, fnp.float64), fnp.can_cast(fnp.float64, fnp.int32)
    (True, False)
    """
    if casting not in _CASTINGS:
        raise ValueError(f"can_cast: expected casting one of {_CASTINGS}, got {casting!r}.")
    if core.is_python_scalar(from_):
        raise TypeError(
            f"can_cast: expected a dtype or an array for from_, got the Python "
            f"{type(from_).__name__} {from_!r}. Pass its dtype, e.g. "
            f"functrace.numpy.result_type({from_!r})."
        )
    src = from_.aval.dtype if isinstance(from_, Tracer) else from_
    try:
        return _Bool(np.can_cast(src, to, casting))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"can_cast: expected dtypes or arrays, got {from_!r:.60} and {to!r:.60}."
        ) from None


def isscalar(element: Any) -> _Bool:
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or (as in JAX, unlike
    NumPy) a 0-d array or tracer.

    >>> import functrace.numpy as fnp
    >>> fnp.isscalar(1.5), fnp.isscalar(fnp.array(1.5)), fnp.isscalar([1.5])
    (True, True, False)
    """
    if isinstance(element, (Tracer, np.ndarray)):
        return element.ndim == 0
    return _Bool(np.isscalar(element))


def iterable(y: Any) -> _Bool:
    """Whether ``iter(y)`` works: arrays and tracers with at least one axis, sequences
    and other iterables (NumPy's ``iterable``).

    >>> import functrace.numpy as fnp
    >>> fnp.iterable(fnp.zeros(2)), fnp.iterable(fnp.zeros(()))
    (True, False)
    """
    if isinstance(y, Tracer):
        return y.ndim > 0
    return _Bool(np.iterable(y))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to (an int counts as a 1-d shape).

    >>> import functrace.numpy as fnp
    >>> fnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    tuples = []
    for s in shapes:
        t = shape_tuple("broadcast_shapes", s)
        if any(d < 0 for d in t):
            raise ValueError(f"broadcast_shapes: expected non-negative sizes, got shape {t}.")
        tuples.append(t)
    return _broadcast_shapes("broadcast_shapes", *tuples)


# ---------------------------------------------------------------------------
# Index helpers
# ---------------------------------------------------------------------------


def _arrays(xs: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(_wrap(x) for x in xs)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """The index arrays ``(arange(n),) * ndim`` of the main diagonal of an
    ``ndim``-dimensional array of side ``n`` (concrete sizes).

    >>> import functrace.numpy as fnp
    >>> fnp.diag_indices(2)
    (Array([0, 1]), Array([0, 1]))
    """
    n, ndim = (
        concrete_array("diag_indices", v, "sizes")[()] if isinstance(v, Tracer) else v
        for v in (n, ndim)
    )
    return _arrays(np.diag_indices(int(n), int(ndim)))


def _square_check(fname: str, shape: tuple[int, ...]) -> None:
    if len(shape) < 2:
        raise ValueError(
            f"{fname}: expected an array with at least 2 dimensions, got shape {shape}."
        )
    if len(set(shape)) != 1:
        raise ValueError(f"{fname}: expected all dimensions of equal length, got shape {shape}.")


def _np_diag_indices_from(arr: Any) -> tuple[Any, ...]:
    _square_check("diag_indices_from", np.shape(arr))
    return np.diag_indices_from(np.asarray(arr))


@numpy_path(_np_diag_indices_from)
def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """The index arrays of the main diagonal of ``arr`` (all of its dimensions of equal
    length); only the shape of ``arr`` is read.

    >>> import functrace.numpy as fnp
    >>> fnp.diag_indices_from(fnp.zeros((2, 2)))
    (Array([0, 1]), Array([0, 1]))
    """
    shape = _shape(asarray_or_tracer(arr, "diag_indices_from"))
    _square_check("diag_indices_from", shape)
    return diag_indices(shape[0], len(shape))


def _matrix_shape(fname: str, arr: Any) -> tuple[int, ...]:
    shape = np.shape(arr) if not isinstance(arr, Tracer) else arr.shape
    if len(shape) != 2:
        raise ValueError(f"{fname}: expected a 2-d array, got shape {tuple(shape)}.")
    return tuple(shape)


def _np_tri_indices_from(name: str) -> Callable[..., Any]:
    np_fn = getattr(np, name)

    def call(arr: Any, k: int = 0) -> Any:
        _matrix_shape(name, arr)
        return np_fn(np.asarray(arr), k)

    return call


@numpy_path(_np_tri_indices_from("tril_indices_from"))
def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, ...]:
    """The (row, column) index arrays of the lower triangle (on and below the ``k``-th
    diagonal) of the 2-d ``arr``; only its shape is read.

    >>> import functrace.numpy as fnp
    >>> fnp.tril_indices_from(fnp.zeros((2, 2)))
    (Array([0, 1, 1]), Array([0, 0, 1]))
    """
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k, m)


@numpy_path(_np_tri_indices_from("triu_indices_from"))
def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, ...]:
    """The (row, column) index arrays of the upper triangle (on and above the ``k``-th
    diagonal) of the 2-d ``arr``; only its shape is read.

    >>> import functrace.numpy as fnp
    >>> fnp.triu_indices_from(fnp.zeros((2, 3)), k=1)
    (Array([0, 0, 1]), Array([1, 2, 2]))
    """
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k, m)


def mask_indices(
    n: int, mask_func: Callable[..., Any], k: int = 0, *, size: int | None = None
) -> tuple[Any, ...]:
    """The (row, column) indices where ``mask_func(ones((n, n)), k)`` is nonzero, e.g.
    ``mask_func=triu`` for the upper triangle. ``mask_func`` runs eagerly (also inside
    ``jit``) on concrete data; ``size`` pads or truncates the result as in ``nonzero``.

    >>> import functrace.numpy as fnp
    >>> fnp.mask_indices(3, fnp.triu, 1)
    (Array([0, 0, 1]), Array([1, 2, 2]))
    """
    if isinstance(n, Tracer):
        n = int(concrete_array("mask_indices", n, "size n"))
    if not callable(mask_func):
        raise TypeError(
            f"mask_indices: expected a callable mask_func such as functrace.numpy.triu, "
            f"got {type(mask_func).__name__}."
        )
    with core.new_base_trace():  # the mask depends on n and k only: compute it now
        m = mask_func(np.ones((int(n), int(n)), dtype=int), k)
    if _shape(m) != (n, n):
        raise ValueError(
            f"mask_indices: expected mask_func to return an array of shape {(n, n)}, got "
            f"shape {_shape(m)}."
        )
    mask = concrete_array("mask_indices", m, "mask values") != 0
    out = np.nonzero(mask) if size is None else nonzero(mask, size=size)
    return _arrays(out)


def _ix_index(k: int, seq: Any, nd: int) -> Any:
    x = _arr(seq)
    shape = _shape(x)
    if len(shape) != 1:
        raise ValueError(f"ix_: expected 1-d index sequences, got shape {shape} for argument {k}.")
    if not isinstance(x, Tracer) and x.size == 0:
        x = x.astype(np.intp)
    elif _dtype(x) == np.bool_:
        (x,) = nonzero(x)
    new = (1,) * k + (_shape(x)[0],) + (1,) * (nd - k - 1)
    return ls.reshape(x, new) if isinstance(x, Tracer) else x.reshape(new)


def _np_ix(*args: Any) -> tuple[Any, ...]:
    for k, a in enumerate(args):
        if np.ndim(a) != 1:
            raise ValueError(
                f"ix_: expected 1-d index sequences, got shape {np.shape(a)} for argument {k}."
            )
    return np.ix_(*args)


@numpy_path(_np_ix)
def ix_(*args: Any) -> tuple[Any, ...]:
    """Open mesh index arrays from 1-d sequences: ``x[ix_(rows, cols)]`` selects the
    cross product of ``rows`` and ``cols``. Boolean sequences become the positions of
    their ``True`` entries (these must be concrete).

    >>> import functrace.numpy as fnp
    >>> [i.shape for i in fnp.ix_([0, 2], [1, 2, 3])]
    [(2, 1), (1, 3)]
    """
    return tuple(_ix_index(k, a, len(args)) for k, a in enumerate(args))


_MODES = ("raise", "wrap", "clip")


def _ravel_setup(
    multi_index: Any, dims: Any, mode: Any, order: str
) -> tuple[list[Any], tuple[int, ...], tuple[str, ...]]:
    fname = "ravel_multi_index"
    shape = shape_tuple(fname, dims)
    if any(d < 1 for d in shape):
        raise ValueError(f"{fname}: expected positive dims, got {shape}.")
    if order not in ("C", "F"):
        raise ValueError(f"{fname}: expected order 'C' or 'F', got {order!r}.")
    modes = (mode,) * len(shape) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(shape) or any(m not in _MODES for m in modes):
        raise ValueError(
            f"{fname}: expected mode one of {_MODES} or a sequence of them, one per "
            f"dimension ({len(shape)}), got {mode!r}."
        )
    if isinstance(multi_index, (Tracer, np.ndarray)):
        if multi_index.ndim == 0:
            raise ValueError(
                f"{fname}: expected a sequence of {len(shape)} index arrays, got a 0-d array."
            )
        parts = [multi_index[i] for i in range(multi_index.shape[0])]  # type: ignore[index]
    else:
        parts = list(multi_index)
    if len(parts) != len(shape):
        raise ValueError(
            f"{fname}: expected {len(shape)} index arrays (one per dimension of dims "
            f"{shape}), got {len(parts)}."
        )
    parts = [_arr(p) for p in parts]
    for p in parts:
        if _dtype(p).kind not in "iub":
            raise TypeError(
                f"{fname}: expected integer index arrays, got {_dtype(p).name}. Cast them "
                f"with .astype(int)."
            )
    return parts, shape, modes


def _np_ravel_multi_index(
    multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C"
) -> Any:
    parts, shape, modes = _ravel_setup(multi_index, dims, mode, order)
    _broadcast_shapes("ravel_multi_index", *[p.shape for p in parts])
    try:
        return np.ravel_multi_index(tuple(parts), shape, mode, order)  # type: ignore[call-overload]
    except ValueError:
        raise _out_of_range(shape) from None


def _out_of_range(shape: tuple[int, ...]) -> ValueError:
    return ValueError(
        f"ravel_multi_index: expected indices in [0, d) for each dimension d of {shape} "
        f"(mode='raise'), got an index out of range. Pass mode='clip' or mode='wrap' to "
        f"bring it in range."
    )


@numpy_path(_np_ravel_multi_index)
def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> Any:
    """The flat (int64) indices of the coordinates ``multi_index`` (one index array per
    dimension of ``dims``, broadcast together) in an array of shape ``dims``:
    row-major for ``order='C'``, column-major for ``'F'``. Out-of-range coordinates
    raise (``mode='raise'``, which needs concrete indices), wrap around or are
    clipped; ``mode`` may also give one rule per dimension.

    >>> import functrace.numpy as fnp
    >>> fnp.ravel_multi_index(([1, 2], [0, 3]), (3, 4))
    array([ 4, 11])
    """
    parts, shape, modes = _ravel_setup(multi_index, dims, mode, order)
    parts = list(broadcast_arrays(*[cast(p, _INT64) for p in parts]))
    for i, (p, d, m) in enumerate(zip(parts, shape, modes)):
        if m == "wrap":
            parts[i] = remainder(p, d)
        elif m == "clip":
            parts[i] = clip(p, 0, d - 1)
        else:
            v = core.concrete_or_none(p)
            if v is None:
                raise ConcretizationError(
                    f"ravel_multi_index: expected concrete indices for mode='raise' (they "
                    f"are checked against dims {shape}), got an abstract tracer "
                    f"{p.aval.str_short()}. Use mode='clip' or mode='wrap' under jit and vmap."
                )
            if np.any((v < 0) | (v >= d)):
                raise _out_of_range(shape)
    axes = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    out, stride = None, 1
    for i in axes:
        term = parts[i] if stride == 1 else multiply(parts[i], stride)
        out = term if out is None else add(out, term)
        stride *= shape[i]
    return out


def _diagonal_positions(fname: str, shape: tuple[int, ...], wrap: _Bool) -> range:
    """Flat positions of the main diagonal (NumPy's ``fill_diagonal`` rule)."""
    size = int(np.prod(shape, dtype=np.int64))
    if len(shape) < 2:
        raise ValueError(
            f"{fname}: expected an array with at least 2 dimensions, got shape {shape}."
        )
    if len(shape) == 2:
        step = shape[1] + 1
        end = size if wrap else builtins.min(size, shape[1] * shape[1])
    else:
        if len(set(shape)) != 1:
            raise ValueError(
                f"{fname}: expected all dimensions of equal length for more than 2 "
                f"dimensions, got shape {shape}."
            )
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = size
    return range(0, end, step)


def _check_inplace(inplace: Any) -> None:
    if inplace:
        raise ValueError(
            "fill_diagonal: expected inplace=False, got inplace=True. functrace arrays are "
            "immutable (as JAX's): call a = fill_diagonal(a, val, inplace=False), which "
            "returns a new array."
        )


def _np_fill_diagonal(a: Any, val: Any, wrap: _Bool = False, *, inplace: _Bool = True) -> Any:
    _check_inplace(inplace)
    out = np.array(a, copy=True)
    _diagonal_positions("fill_diagonal", out.shape, wrap)
    np.fill_diagonal(out, val, wrap)
    return out


@numpy_path(_np_fill_diagonal)
def fill_diagonal(a: Any, val: Any, wrap: _Bool = False, *, inplace: _Bool = True) -> Any:
    """A copy of ``a`` with its main diagonal set to ``val`` (JAX's functional
    ``fill_diagonal``: pass ``inplace=False``). As NumPy does, ``val`` is flattened
    and repeated along the diagonal, cast to ``a``'s dtype; for a tall matrix,
    ``wrap=True`` restarts the diagonal every ``columns + 1`` rows. Differentiable in
    ``a`` and ``val``.

    >>> import functrace.numpy as fnp
    >>> fnp.fill_diagonal(fnp.zeros((2, 3)), 7.0, inplace=False)
    Array([[7., 0., 0.],
           [0., 7., 0.]])
    """
    _check_inplace(inplace)
    x = asarray_or_tracer(a, "fill_diagonal")
    shape, dt = _shape(x), _dtype(x)
    positions = _diagonal_positions("fill_diagonal", shape, wrap)
    v = _arr(val)
    nv = int(np.prod(_shape(v), dtype=np.int64))
    count = len(positions)
    if count == 0 or nv == 0:
        return x
    v = cast(ls.reshape(v, (nv,)), dt)
    if nv < count:  # repeated cyclically, as NumPy's flat assignment does
        v = concatenate([v] * -(-count // nv))
    v = ls.slice(v, (0,), (count,))
    size = int(np.prod(shape, dtype=np.int64))
    step = positions.step
    zero = np.zeros((), dt)[()]
    placed = ls.pad(v, zero, [(0, size - 1 - (count - 1) * step, step - 1)])
    mask = np.zeros(size, np.bool_)
    mask[positions.start : positions.stop : step] = True
    flat = ls.reshape(x, (size,))
    return ls.reshape(where(mask, placed, flat), shape)


# ---------------------------------------------------------------------------
# Dtype names (last: ``object_`` would shadow a builtin above)
# ---------------------------------------------------------------------------

number, generic, character, flexible = np.number, np.generic, np.character, np.flexible
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
object_ = np.object_
euler_gamma = np.euler_gamma

__all__ = [
    *_grids_all,
    *_predicates_all,
    "broadcast_shapes",
    "can_cast",
    "character",
    "complexfloating",
    "diag_indices",
    "diag_indices_from",
    "euler_gamma",
    "fill_diagonal",
    "flexible",
    "floating",
    "generic",
    "inexact",
    "integer",
    "isdtype",
    "isscalar",
    "issubdtype",
    "iterable",
    "ix_",
    "mask_indices",
    "number",
    "object_",
    "promote_types",
    "ravel_multi_index",
    "result_type",
    "signedinteger",
    "tril_indices_from",
    "triu_indices_from",
    "unsignedinteger",
]
