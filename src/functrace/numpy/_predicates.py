"""Predicates, bit packing and the array API's names of functrace.numpy:
``isposinf``, ``isneginf``, ``iscomplex``, ``isreal``, ``iscomplexobj``, ``isrealobj``,
``array_equiv``, ``bitwise_count``, ``bitwise_invert``, ``packbits``, ``unpackbits``,
``permute_dims``, ``matrix_transpose``, ``concat``, ``unstack``, ``vecdot``, ``matvec``,
``vecmat``, ``cumulative_sum`` and ``cumulative_prod`` (re-exported by ``_utils``).

Plain NumPy inputs go to NumPy. On tracers each function is a composite of
functrace.numpy and lax functions, so it differentiates, batches and jits:
``bitwise_count`` adds shifted and masked copies of the bits (no population-count
primitive), ``packbits`` sums the bits times their weights 128, 64, ..., 1 in uint8,
``unpackbits`` shifts each byte right by 7, 6, ..., 0 and keeps the low bit.

Decisions:

* ``bitwise_count`` counts the bits of the absolute value of signed integers (NumPy's
  definition; JAX counts the two's-complement bits, 64 for an int64 ``-1``).
* ``cumulative_sum``/``cumulative_prod`` of a 0-d array give a 1-element array, as in
  NumPy (JAX raises).
* ``vecdot`` takes ``axis`` in each operand's own dimensions (as JAX and NumPy's
  gufunc do); ``vecdot``/``vecmat`` conjugate their first operand. Complex traced
  values are not supported there nor in ``iscomplex``/``isreal`` (``lax`` has no
  ``conj``/``imag`` yet): those raise ``NotImplementedError``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._prng import PRNGKeyArray
from functrace.core import Tracer
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    cast,
    no_out,
    normalize_axis,
    resolve_ufunc_dtypes,
    slice_along,
)
from functrace.numpy._core import broadcast_shapes as _broadcast_shapes
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._joining import concatenate
from functrace.numpy._linalg import matmul
from functrace.numpy._math import (
    absolute,
    add,
    bitwise_and,
    conjugate,
    equal,
    imag,
    invert,
    isinf,
    multiply,
    not_equal,
    right_shift,
    subtract,
)
from functrace.numpy._reductions import all as _all
from functrace.numpy._reductions import cumprod, cumsum
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import moveaxis, swapaxes, transpose

_Bool = builtins.bool
_INT64 = np.dtype(np.int64)
_UINT8 = np.dtype(np.uint8)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _arr(x: Any) -> Any:
    """A tracer as it is, anything else as a NumPy array (Python scalars included)."""
    return x if isinstance(x, Tracer) else np.asarray(x)


# ---------------------------------------------------------------------------
# Predicates
# ---------------------------------------------------------------------------


def _no_complex(fname: str, x: Any) -> None:
    if _dtype(x).kind == "c":
        raise TypeError(
            f"{fname}: expected a real array, got {_dtype(x).name} (the sign of a complex "
            f"infinity is ambiguous). Test the real and imaginary parts separately."
        )


def _inf_test(name: str, positive: _Bool) -> Callable[..., Any]:
    np_fn = getattr(np, name)

    def numpy_call(x: Any, out: Any = None) -> Any:
        _no_complex(name, np.asarray(x))
        return np_fn(x, out)

    def traced(x: Any, out: Any = None) -> Any:
        no_out(name, out)
        x = asarray_or_tracer(x, name)
        _no_complex(name, x)
        inf = isinf(x)
        if _dtype(x).kind != "f":
            return inf
        side = x > 0 if positive else x < 0
        return bitwise_and(inf, side)

    traced.__name__ = traced.__qualname__ = name
    sign = "+" if positive else "-"
    traced.__doc__ = f"""Whether each element is {sign}inf (NumPy's ``{name}``; integers and
    booleans are never infinite; complex inputs raise ``TypeError``).

    >>> import functrace.numpy as fnp
    >>> fnp.{name}([1.0, {sign}fnp.inf, fnp.nan])
    array([False,  True, False])
    """
    return numpy_path(numpy_call)(traced)


isposinf = _inf_test("isposinf", True)
isneginf = _inf_test("isneginf", False)


@numpy_path(lambda x: np.iscomplex(x))
def iscomplex(x: Any) -> Any:
    """Whether each element has a nonzero imaginary part (False throughout for a real
    dtype). Traced complex values are not supported yet (``lax`` has no ``imag``).

    >>> import functrace.numpy as fnp
    >>> fnp.iscomplex([1 + 0j, 2j])
    array([False,  True])
    """
    x = asarray_or_tracer(x, "iscomplex")
    if _dtype(x).kind != "c":
        return _constant_bool(x, False)
    return not_equal(imag(x), 0)


@numpy_path(lambda x: np.isreal(x))
def isreal(x: Any) -> Any:
    """Whether each element has a zero imaginary part (True throughout for a real dtype).

    >>> import functrace.numpy as fnp
    >>> fnp.isreal([1 + 0j, 2j])
    array([ True, False])
    """
    x = asarray_or_tracer(x, "isreal")
    if _dtype(x).kind != "c":
        return _constant_bool(x, True)
    return equal(imag(x), 0)


def _constant_bool(x: Any, value: _Bool) -> Any:
    """``value`` in the shape of ``x`` (bool; it does not depend on the values of ``x``)."""
    return ls.broadcast_in_dim(np.bool_(value), _shape(x), ())


def iscomplexobj(x: Any) -> _Bool:
    """Whether ``x`` has a complex dtype (its values are not looked at).

    >>> import functrace.numpy as fnp
    >>> fnp.iscomplexobj([1.0, 2j]), fnp.iscomplexobj(fnp.zeros(2))
    (True, False)
    """
    if isinstance(x, Tracer):
        return _Bool(x.aval.dtype.kind == "c")
    return _Bool(np.iscomplexobj(x))


def isrealobj(x: Any) -> _Bool:
    """Whether ``x`` does not have a complex dtype (its values are not looked at).

    >>> import functrace.numpy as fnp
    >>> fnp.isrealobj(1), fnp.isrealobj(1j)
    (True, False)
    """
    return not iscomplexobj(x)


@numpy_path(lambda a1, a2: np.array_equiv(a1, a2))
def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether ``a1`` and ``a2`` broadcast together and are equal element by element
    (``False`` when their shapes do not broadcast).

    >>> import functrace.numpy as fnp
    >>> fnp.array_equiv([1, 2], [[1, 2], [1, 2]]), fnp.array_equiv([1, 2], [1, 2, 3])
    (True, False)
    """
    x, y = asarray_or_tracer(a1, "array_equiv"), asarray_or_tracer(a2, "array_equiv")
    try:
        np.broadcast_shapes(_shape(x), _shape(y))
    except ValueError:
        return False
    return _all(equal(x, y))


# ---------------------------------------------------------------------------
# Bits
# ---------------------------------------------------------------------------

bitwise_invert = invert


def _int_check(fname: str, x: Any, kinds: str, what: str) -> None:
    if _dtype(x).kind not in kinds:
        raise TypeError(f"{fname}: expected {what}, got {_dtype(x).name}. Cast with .astype(...).")


def _bitwise_count_error(x: Any, *rest: Any) -> None:
    _int_check("bitwise_count", np.asarray(x), "biu", "an integer or boolean array")


def _popcount(x: Any, dt: np.dtype) -> Any:
    """Number of set bits of each 64-bit element (shift-and-mask additions)."""
    c = dt.type
    x = subtract(x, bitwise_and(right_shift(x, c(1)), c(0x5555555555555555)))
    x = add(
        bitwise_and(x, c(0x3333333333333333)),
        bitwise_and(right_shift(x, c(2)), c(0x3333333333333333)),
    )
    x = bitwise_and(add(x, right_shift(x, c(4))), c(0x0F0F0F0F0F0F0F0F))
    for s in (8, 16, 32):  # the byte counts summed into the low byte
        x = add(x, right_shift(x, c(s)))
    return cast(bitwise_and(x, c(0x7F)), _UINT8)


@numpy_path(lambda x: np.bitwise_count(x), on_error=_bitwise_count_error)
def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits in each element (uint8). For signed integers the bits of the
    absolute value are counted (NumPy's ``bitwise_count``; JAX's counts the
    two's-complement bits, so 64 for an int64 ``-1`` where this gives 1).

    >>> import functrace.numpy as fnp
    >>> fnp.bitwise_count([0, 7, -8, 255])
    array([0, 3, 1, 8], dtype=uint8)
    """
    x = asarray_or_tracer(x, "bitwise_count")
    _int_check("bitwise_count", x, "biu", "an integer or boolean array")
    dt = _dtype(x)
    if dt.kind == "b":
        return cast(x, _UINT8)
    if dt == np.uint64:
        return _popcount(x, dt)
    x = cast(x, _INT64)  # exact for every other integer dtype
    return _popcount(absolute(x) if dt.kind == "i" else x, _INT64)


def _check_bitorder(fname: str, bitorder: Any) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{fname}: expected bitorder 'big' or 'little', got {bitorder!r}.")


def _bits_axis(fname: str, x: Any, axis: Any) -> tuple[Any, int]:
    """``x`` flattened (``axis=None``) or with ``axis`` moved last, and that axis."""
    shape = _shape(x)
    if axis is None or not shape:
        if axis is not None:
            normalize_axis(fname, axis, 1)
        return ls.reshape(x, (int(np.prod(shape, dtype=np.int64)),)), -1
    ax = normalize_axis(fname, axis, len(shape))
    return moveaxis(x, ax, -1), ax


def _np_packbits(a: Any, /, axis: Any = None, bitorder: str = "big") -> Any:
    _check_bitorder("packbits", bitorder)
    _int_check("packbits", np.asarray(a), "biu", "an integer or boolean array")
    return np.packbits(a, axis, bitorder)  # type: ignore[call-overload]


@numpy_path(_np_packbits)
def packbits(a: Any, /, axis: Any = None, bitorder: str = "big") -> Any:
    """Pack the truth values of ``a`` (nonzero is 1) into uint8 bytes, 8 per byte along
    ``axis`` (of the flattened array if None), zero-padded at the end; the first
    element becomes the most significant bit (``bitorder="big"``) or the least.

    >>> import functrace.numpy as fnp
    >>> fnp.packbits([1, 0, 1, 1, 0, 0, 0, 1, 1])
    array([177, 128], dtype=uint8)
    """
    _check_bitorder("packbits", bitorder)
    x = asarray_or_tracer(a, "packbits")
    _int_check("packbits", x, "biu", "an integer or boolean array")
    x, ax = _bits_axis("packbits", cast(not_equal(x, 0), _UINT8), axis)
    *batch, n = _shape(x)
    nbytes = -(-n // 8)
    x = ls.pad(x, np.uint8(0), [(0, 0, 0)] * len(batch) + [(0, nbytes * 8 - n, 0)])
    x = ls.reshape(x, (*batch, nbytes, 8))
    weights = np.left_shift(np.uint8(1), np.arange(8, dtype=np.uint8))
    if bitorder == "big":
        weights = weights[::-1].copy()
    out = _sum(multiply(x, weights), axis=-1, dtype=_UINT8)
    return out if ax == -1 else moveaxis(out, -1, ax)


def _np_unpackbits(a: Any, /, axis: Any = None, count: Any = None, bitorder: str = "big") -> Any:
    _check_bitorder("unpackbits", bitorder)
    if np.asarray(a).dtype != np.uint8:
        _int_check("unpackbits", np.asarray(a), "", "a uint8 array")
    out = np.unpackbits(a, axis, count, bitorder)  # type: ignore[call-overload]
    if np.size(a) == 0 and out.size:  # count > 0 bits of nothing: NumPy leaves them unset
        out[...] = 0
    return out


@numpy_path(_np_unpackbits)
def unpackbits(a: Any, /, axis: Any = None, count: Any = None, bitorder: str = "big") -> Any:
    """Unpack the uint8 bytes of ``a`` into their bits (uint8 zeros and ones) along
    ``axis`` (of the flattened array if None): 8 bits per byte, most significant
    first for ``bitorder="big"``. ``count`` keeps the first ``count`` bits (zero-padded
    if larger); a negative ``count`` drops that many from the end.

    >>> import functrace.numpy as fnp
    >>> fnp.unpackbits(fnp.array([3], dtype=fnp.uint8))
    Array([0, 0, 0, 0, 0, 0, 1, 1], dtype=uint8)
    """
    _check_bitorder("unpackbits", bitorder)
    x = asarray_or_tracer(a, "unpackbits")
    if _dtype(x) != np.uint8:
        _int_check("unpackbits", x, "", "a uint8 array")
    x, ax = _bits_axis("unpackbits", x, axis)
    *batch, n = _shape(x)
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1].copy()
    wide = ls.broadcast_in_dim(x, (*batch, n, 8), tuple(range(len(batch) + 1)))
    bits = ls.reshape(bitwise_and(right_shift(wide, shifts), np.uint8(1)), (*batch, 8 * n))
    total = 8 * n
    if count is not None:
        keep = int(count) if int(count) >= 0 else total + int(count)
        if keep < 0:
            raise ValueError(
                f"unpackbits: expected -count at most the number of bits ({total}), got "
                f"count={count}."
            )
        if keep <= total:
            bits = slice_along(bits, 0, keep, len(batch))
        else:
            bits = ls.pad(bits, np.uint8(0), [(0, 0, 0)] * len(batch) + [(0, keep - total, 0)])
    return bits if ax == -1 else moveaxis(bits, -1, ax)


# ---------------------------------------------------------------------------
# Array API names
# ---------------------------------------------------------------------------


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """``transpose(a, axes)`` under the array API's name (``axes`` is required).

    >>> import functrace.numpy as fnp
    >>> fnp.permute_dims(fnp.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes (the transpose of each matrix of a stack).

    >>> import functrace.numpy as fnp
    >>> fnp.matrix_transpose(fnp.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    if type(x) is PRNGKeyArray:  # swapaxes moves whole keys
        nd = x.ndim
    else:
        nd = len(_shape(asarray_or_tracer(x, "matrix_transpose")))
    if nd < 2:
        raise ValueError(
            f"matrix_transpose: expected an array with at least 2 dimensions, got {nd}."
        )
    return swapaxes(x, -1, -2)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """``concatenate(arrays, axis)`` under the array API's name (``axis=None`` joins
    the flattened arrays).

    >>> import functrace.numpy as fnp
    >>> fnp.concat([fnp.zeros(2), fnp.ones(1)])
    Array([0., 0., 1.])
    """
    return concatenate(arrays, axis=axis)


def _np_unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack: expected an array with at least 1 dimension, got a 0-d array.")
    normalize_axis("unstack", axis, x.ndim)
    return np.unstack(x, axis=axis)


@numpy_path(_np_unstack)
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``).

    >>> import functrace.numpy as fnp
    >>> fnp.unstack(fnp.array([[1, 2], [3, 4]]), axis=1)
    (Array([1, 3]), Array([2, 4]))
    """
    x = asarray_or_tracer(x, "unstack")
    shape = _shape(x)
    if not shape:
        raise ValueError("unstack: expected an array with at least 1 dimension, got a 0-d array.")
    ax = normalize_axis("unstack", axis, len(shape))
    rest = shape[:ax] + shape[ax + 1 :]
    return tuple(ls.reshape(slice_along(x, i, i + 1, ax), rest) for i in range(shape[ax]))


def _vec_operands(fname: str, x1: Any, x2: Any, axis: int) -> tuple[Any, Any, np.dtype]:
    """``x1`` and ``x2`` with their ``axis`` last (checked equal), and the dtype."""
    x1, x2 = _arr(x1), _arr(x2)
    for k, x in enumerate((x1, x2)):
        if not _shape(x):
            raise ValueError(
                f"{fname}: expected arrays with at least 1 dimension, got a 0-d x{k + 1}."
            )
    x1 = moveaxis(x1, normalize_axis(fname, axis, len(_shape(x1))), -1)
    x2 = moveaxis(x2, normalize_axis(fname, axis, len(_shape(x2))), -1)
    n1, n2 = _shape(x1)[-1], _shape(x2)[-1]
    if n1 != n2:
        raise ValueError(
            f"{fname}: expected vectors of one length along axis {axis}, got {n1} and {n2} "
            f"(shapes {_shape(x1)} and {_shape(x2)} with that axis last)."
        )
    _broadcast_shapes(fname, _shape(x1)[:-1], _shape(x2)[:-1])
    dt = resolve_ufunc_dtypes(fname, np.multiply, [core.get_aval(x1), core.get_aval(x2)])[2]
    return x1, x2, dt


def _np_vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    if precision is not None or preferred_element_type is not None:
        return vecdot.traced(  # type: ignore[attr-defined]
            x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
        )
    _vec_operands("vecdot", x1, x2, axis)
    return np.vecdot(x1, x2, axis=axis)  # type: ignore[call-overload]


@numpy_path(_np_vecdot)
def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The dot products ``sum(conj(x1) * x2)`` of the vectors along ``axis`` of each
    operand, broadcast over the other axes (NumPy's ``vecdot``; ``axis`` counts in each
    operand's own dimensions, as in JAX).

    >>> import functrace.numpy as fnp
    >>> fnp.vecdot([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0])
    array([3., 7.])
    """
    if precision is not None or preferred_element_type is not None:
        from functrace.numpy._linalg import _with_options  # (a module above this one)

        return _with_options(
            "vecdot",
            lambda a, b: vecdot(a, b, axis=axis),
            x1,
            x2,
            precision,
            preferred_element_type,
        )
    x1, x2, dt = _vec_operands("vecdot", x1, x2, axis)
    if _dtype(x1).kind == "c":
        x1 = conjugate(x1)
    return _sum(multiply(x1, x2), axis=-1, dtype=dt)


def _mat_operands(fname: str, m: Any, v: Any, m_first: _Bool) -> tuple[Any, Any]:
    m, v = _arr(m), _arr(v)
    ms, vs = _shape(m), _shape(v)
    if len(ms) < 2 or len(vs) < 1:
        raise ValueError(
            f"{fname}: expected a matrix (at least 2 dimensions) and a vector (at least "
            f"1), got shapes {ms} and {vs}."
        )
    inner = ms[-1] if m_first else ms[-2]
    if inner != vs[-1]:
        raise ValueError(
            f"{fname}: expected the vector length to match the matrix's "
            f"{'columns' if m_first else 'rows'} ({inner}), got shapes {ms} and {vs}."
        )
    _broadcast_shapes(fname, ms[:-2], vs[:-1])
    return m, v


def _np_matvec(x1: Any, x2: Any, /) -> Any:
    _mat_operands("matvec", x1, x2, True)
    return np.matvec(x1, x2)


@numpy_path(_np_matvec)
def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products: ``x1`` (..., m, n) times ``x2`` (..., n) gives (..., m),
    broadcast over the leading axes.

    >>> import functrace.numpy as fnp
    >>> fnp.matvec([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0])
    array([3., 7.])
    """
    m, v = _mat_operands("matvec", x1, x2, True)
    out = matmul(m, ls.reshape(v, (*_shape(v), 1)) if isinstance(v, Tracer) else v[..., None])
    return ls.reshape(out, _shape(out)[:-1]) if isinstance(out, Tracer) else out[..., 0]


def _np_vecmat(x1: Any, x2: Any, /) -> Any:
    _mat_operands("vecmat", x2, x1, False)
    return np.vecmat(x1, x2)


@numpy_path(_np_vecmat)
def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products: ``conj(x1)`` (..., n) times ``x2`` (..., n, m) gives
    (..., m), broadcast over the leading axes.

    >>> import functrace.numpy as fnp
    >>> fnp.vecmat([1.0, 1.0], [[1.0, 2.0], [3.0, 4.0]])
    array([4., 6.])
    """
    m, v = _mat_operands("vecmat", x2, x1, False)
    if _dtype(v).kind == "c":
        v = conjugate(v)
    row = (
        ls.reshape(v, (*_shape(v)[:-1], 1, _shape(v)[-1]))
        if isinstance(v, Tracer)
        else v[..., None, :]
    )
    out = matmul(row, m)
    shape = _shape(out)
    return ls.reshape(out, shape[:-2] + shape[-1:]) if isinstance(out, Tracer) else out[..., 0, :]


def _cumulative_axis(fname: str, x: Any, axis: Any) -> int | None:
    nd = len(np.shape(x)) if not isinstance(x, Tracer) else x.ndim
    if axis is None:
        if nd > 1:
            raise ValueError(
                f"{fname}: expected an axis for an array of {nd} dimensions, got axis=None. "
                f"Pass axis=..., or ravel the array first."
            )
        return None
    normalize_axis(fname, axis, builtins.max(nd, 1))
    return int(axis)


def _make_cumulative(name: str, scan: Any, identity: int) -> Any:
    np_fn = getattr(np, name)

    def numpy_call(
        x: Any,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        include_initial: _Bool = False,
    ) -> Any:
        _cumulative_axis(name, x, axis)
        return np_fn(x, axis=axis, dtype=dtype, out=out, include_initial=include_initial)

    def traced(
        x: Any,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        include_initial: _Bool = False,
    ) -> Any:
        no_out(name, out)
        x = asarray_or_tracer(x, name)
        ax = _cumulative_axis(name, x, axis)
        res = scan(x, axis=ax, dtype=dtype)
        if not include_initial:
            return res
        shape = _shape(res)
        ax = normalize_axis(name, 0 if ax is None else ax, len(shape))
        first = shape[:ax] + (1,) + shape[ax + 1 :]
        start = ls.broadcast_in_dim(np.asarray(identity, _dtype(res))[()], first, ())
        return concatenate([start, res], axis=ax)

    traced.__name__ = traced.__qualname__ = name
    return numpy_path(numpy_call)(traced)


cumulative_sum = _make_cumulative("cumulative_sum", cumsum, 0)
cumulative_sum.__doc__ = """Cumulative sums along ``axis`` (required for more than one
dimension), the array API's ``cumsum``; ``include_initial=True`` starts with the
empty sum 0, making the axis one longer.

>>> import functrace.numpy as fnp
>>> fnp.cumulative_sum([1, 2, 3], include_initial=True)
array([0, 1, 3, 6])
"""
cumulative_prod = _make_cumulative("cumulative_prod", cumprod, 1)
cumulative_prod.__doc__ = """Cumulative products along ``axis`` (required for more than one
dimension), the array API's ``cumprod``; ``include_initial=True`` starts with the
empty product 1, making the axis one longer.

>>> import functrace.numpy as fnp
>>> fnp.cumulative_prod([1.0, 2.0, 3.0])
array([1., 2., 6.])
"""


__all__ = [
    "array_equiv",
    "bitwise_count",
    "bitwise_invert",
    "concat",
    "cumulative_prod",
    "cumulative_sum",
    "iscomplex",
    "iscomplexobj",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "matrix_transpose",
    "matvec",
    "packbits",
    "permute_dims",
    "unpackbits",
    "unstack",
    "vecdot",
    "vecmat",
]
