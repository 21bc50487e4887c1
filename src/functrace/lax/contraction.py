"""dot_general: contraction of two arrays over paired axes, with batch axes.

One primitive block (definition, NumPy impl, abstract eval, transpose and batching
rules), the ``Precision`` enum and the ``dot`` wrapper. Output axes are batch, lhs
free, rhs free; with ``preferred_element_type`` the operands are cast to it before
multiplying. ``functrace.lax.shapes`` re-exports these names.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax._util import (
    as_index_tuple,
    check_dtype_kind,
    check_same_dtypes,
    register_checked,
)
from functrace.lax.base import convert_element_type, transpose

DotDimensionNumbers = tuple[
    tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]
]


def _free_axes(ndim: int, contracting: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [i for i in range(ndim) if i not in contracting and i not in batch]


def _check_preferred(lhs: ShapedArray, preferred: np.dtype | None) -> None:
    if preferred is None:
        return
    d = lhs.dtype
    if d.kind in "iu":  # ints may accumulate in a wider int, or in any float
        ok = preferred.kind in "fc" or preferred.kind in "iu" and preferred.itemsize >= d.itemsize
    elif d.kind == "f":
        ok = (
            preferred.kind == "f"
            and preferred.itemsize >= d.itemsize
            or preferred.kind == "c"
            and preferred.itemsize >= 2 * d.itemsize
        )
    else:
        ok = preferred.kind == "c" and preferred.itemsize >= d.itemsize
    if not ok:
        raise TypeError(
            f"dot_general: expected a preferred_element_type at least as wide as the operand "
            f"dtype and of a compatible kind (int->int/float, float->float/complex), got "
            f"{preferred.name} for operands of dtype {d.name}. Cast the operands instead."
        )


def _dot_general_abstract(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DotDimensionNumbers,
    preferred_element_type: np.dtype | None,
) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(
            f"dot_general: expected as many lhs as rhs contracting and batch dimensions for "
            f"lhs shape {lhs.shape} and rhs shape {rhs.shape}, got "
            f"dimension_numbers={dimension_numbers}. Pair them one to one."
        )
    for side, aval, axes in (("lhs", lhs, lc + lb), ("rhs", rhs, rc + rb)):
        if len(set(axes)) != len(axes) or any(not 0 <= a < aval.ndim for a in axes):
            raise ValueError(
                f"dot_general: expected distinct {side} axes in [0, {aval.ndim}) for lhs shape "
                f"{lhs.shape} and rhs shape {rhs.shape}, got dimension_numbers="
                f"{dimension_numbers}. Use each axis at most once, non-negative."
            )
    for kind, la, ra in (("contracting", lc, rc), ("batch", lb, rb)):
        if any(lhs.shape[i] != rhs.shape[j] for i, j in zip(la, ra)):
            raise ValueError(
                f"dot_general: expected equal sizes of paired {kind} dimensions for lhs shape "
                f"{lhs.shape} and rhs shape {rhs.shape}, got dimension_numbers="
                f"{dimension_numbers}. Pair axes of the same size."
            )
    dtype = check_same_dtypes("dot_general", lhs, rhs)
    check_dtype_kind("dot_general", lhs, "iufc", "a numeric")
    _check_preferred(lhs, preferred_element_type)
    shape = (
        tuple(lhs.shape[i] for i in lb)
        + tuple(lhs.shape[i] for i in _free_axes(lhs.ndim, lc, lb))
        + tuple(rhs.shape[i] for i in _free_axes(rhs.ndim, rc, rb))
    )
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _dot_general_impl(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: DotDimensionNumbers,
    preferred_element_type: np.dtype | None,
    out: np.ndarray | None = None,
) -> Any:
    """The product; written into ``out`` when given (a C-contiguous array of the
    result's shape and dtype: the same computation, no allocation)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if preferred_element_type is not None:
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and len(lc) == 1:
        # Matrix/vector products, either operand transposed (as every weight and input
        # gradient of a dense layer is): BLAS directly, reading the transposed view in
        # place. (k = 1 outer products go below: a multiply, not matmul's small-k loop.)
        if lc == (lhs.ndim - 1,) and rc == (0,):
            return np.matmul(lhs, rhs, out=out)
        if lhs.shape[lc[0]] > 1:
            a = lhs if lc[0] == lhs.ndim - 1 else lhs.T
            return np.matmul(a, rhs.T if rc[0] else rhs, out=out)
    # General case: (batch, free, contracting) @ (batch, contracting, free), one matmul.
    lf, rf = _free_axes(lhs.ndim, lc, lb), _free_axes(rhs.ndim, rc, rb)
    batch = tuple(lhs.shape[i] for i in lb)
    m = tuple(lhs.shape[i] for i in lf)
    n = tuple(rhs.shape[i] for i in rf)
    k = math.prod(lhs.shape[i] for i in lc)
    a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(math.prod(batch), math.prod(m), k)
    b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(math.prod(batch), k, math.prod(n))
    mn = (math.prod(m), math.prod(n))
    into = None if out is None else out.reshape((math.prod(batch), *mn) if lb else mn)
    if k == 1:  # outer products (per-example weight gradients): one multiply each,
        res = np.multiply(a if lb else a[0], b if lb else b[0], out=into)  # not matmul's
    else:  # slow small-k loop
        res = np.matmul(a[0], b[0], out=into) if not lb else np.matmul(a, b, out=into)
    return res.reshape(batch + m + n) if out is None else out


dot_general_p = register_checked(Primitive("dot_general"), _dot_general_impl, _dot_general_abstract)


class Precision(enum.Enum):
    """The ``precision=`` of matrix products, as in JAX. On CPU every product is computed
    in the operands' (or ``preferred_element_type``'s) precision, so it is accepted,
    validated and ignored."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name.lower()


_PRECISION_NAMES = {"default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "fastest"}


def check_precision(fname: str, precision: Any) -> None:
    """Validate a ``precision=`` argument (None, a :class:`Precision`, its name, or a
    pair of them for the two operands). It does not change the result on CPU."""
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(precision) != 2:
        raise ValueError(
            f"{fname}: expected precision as one value or a pair (lhs, rhs), got {precision!r}."
        )
    for p in items:
        if p is None or isinstance(p, Precision):
            continue
        if isinstance(p, str) and p.lower() in _PRECISION_NAMES:
            continue
        raise ValueError(
            f"{fname}: expected precision None, a lax.Precision or one of "
            f"{sorted(_PRECISION_NAMES)}, got {p!r}."
        )


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Contract over ``((lhs_c, rhs_c), (lhs_b, rhs_b))``; output: batch, lhs free, rhs free.

    ``preferred_element_type`` sets the result dtype (the product is computed in it);
    ``precision`` is accepted and ignored (see :class:`Precision`)."""
    check_precision("dot_general", precision)
    (lc, rc), (lb, rb) = dimension_numbers
    dims = (
        (as_index_tuple("dot_general", lc), as_index_tuple("dot_general", rc)),
        (as_index_tuple("dot_general", lb), as_index_tuple("dot_general", rb)),
    )
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims, preferred_element_type=pet)


def dot(
    lhs: Any,
    rhs: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    *,
    dimension_numbers: Any = None,
) -> Any:
    """Vector-vector, matrix-vector or matrix-matrix product: the last axis of ``lhs``
    with the first of ``rhs`` (``dimension_numbers`` given: ``dot_general``)."""
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    sa, sb = core.get_aval(lhs).shape, core.get_aval(rhs).shape
    if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2) or sa[-1] != sb[0]:
        raise TypeError(
            f"dot: expected a vector or matrix lhs whose last axis matches the first axis "
            f"of a vector or matrix rhs, got shapes {sa} and {sb}. Use dot_general with "
            f"dimension_numbers for other products."
        )
    return dot_general(
        lhs, rhs, (((len(sa) - 1,), (0,)), ((), ())), precision, preferred_element_type
    )


def _transpose_dot_operand(
    ct: Any,
    y: Any,
    x_aval: ShapedArray,
    dimension_numbers: DotDimensionNumbers,
    y_free_in_ct: int,
) -> Any:
    # ct_x[b, xf, xc] = sum_{yf} ct[b, xf, yf] y[b, yc, yf]: contract ct's y-free axes with
    # y's free axes (batching the batch axes), then move the axes into x's layout. ct's
    # axes are (batch, free of the product's lhs, free of its rhs): y's free axes start at
    # ``y_free_in_ct``, whichever operand y was.
    (xc, yc), (xb, yb) = dimension_numbers
    ct_dtype = core.get_aval(ct).dtype
    y_nd = core.get_aval(y).ndim
    x_nd = len(x_aval.shape)
    nb = len(xb)
    xf, yf = _free_axes(x_nd, xc, xb), _free_axes(y_nd, yc, yb)
    ct_yf = tuple(range(y_free_in_ct, y_free_in_ct + len(yf)))
    ct_b, y = tuple(range(nb)), convert_element_type(y, ct_dtype)
    # dot(ct, y)'s axes: batch, x free, then y's contracting axes in increasing order;
    # dot(y, ct)'s: batch, y's contracting axes, then x free. Either is one layout of the
    # answer: take the one already in x's axis order when there is one, so that no
    # transpose follows (eagerly that would hand back a strided view, e.g. every weight
    # gradient of ``x @ w`` Fortran-ordered, and slow whatever reads it).
    yc_sorted = sorted(yc)
    perm, perm_swapped = [0] * x_nd, [0] * x_nd
    for i, a in enumerate(xb):
        perm[a] = perm_swapped[a] = i
    for i, a in enumerate(xf):
        perm[a], perm_swapped[a] = nb + i, nb + len(yc) + i
    for a, b in zip(xc, yc):
        perm[a] = nb + len(xf) + yc_sorted.index(b)
        perm_swapped[a] = nb + yc_sorted.index(b)
    if perm != list(range(x_nd)) and perm_swapped == list(range(x_nd)):
        out = dot_general(y, ct, ((tuple(yf), ct_yf), (tuple(yb), ct_b)))
    else:
        out = transpose(dot_general(ct, y, ((ct_yf, tuple(yf)), (ct_b, tuple(yb)))), tuple(perm))
    return convert_element_type(out, x_aval.dtype, x_aval.weak_type)


def _dot_general_transpose_lhs(
    ct: Any,
    x: ad.UndefPrimal,
    y: Any,
    *,
    dimension_numbers: DotDimensionNumbers,
    preferred_element_type: np.dtype | None,
) -> Any:
    x_aval = x.aval
    (xc, _), (xb, _) = dimension_numbers
    n_lhs_free = len(x_aval.shape) - len(xc) - len(xb)
    return _transpose_dot_operand(ct, y, x_aval, dimension_numbers, len(xb) + n_lhs_free)


def _dot_general_transpose_rhs(
    ct: Any,
    x: Any,
    y: ad.UndefPrimal,
    *,
    dimension_numbers: DotDimensionNumbers,
    preferred_element_type: np.dtype | None,
) -> Any:
    y_aval = y.aval
    # The same contraction with the operands' roles swapped: x's free axes sit in ct
    # right after the batch axes.
    (xc, yc), (xb, yb) = dimension_numbers
    return _transpose_dot_operand(ct, x, y_aval, ((yc, xc), (yb, xb)), len(xb))


# d dot(x, y) = dot(dx, y) + dot(x, dy)
ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


def _dot_general_batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    dimension_numbers: DotDimensionNumbers,
    preferred_element_type: np.dtype | None,
) -> tuple[Any, int]:
    # Both batched: the batch axes pair up as a new (leading) dot batch dimension.
    # One batched: its batch axis is one more free axis of that side.
    lhs, rhs = vals
    lbd, rbd = bdims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes: tuple[int, ...], bdim: int | None) -> tuple[int, ...]:
        return axes if bdim is None else tuple(a + (a >= bdim) for a in axes)

    lc, lb, rc, rb = shift(lc, lbd), shift(lb, lbd), shift(rc, rbd), shift(rb, rbd)
    if lbd is not None and rbd is not None:
        lb, rb = (lbd, *lb), (rbd, *rb)
        out_bdim = 0
    elif lbd is not None:
        lhs_nd = core.get_aval(lhs).ndim
        out_bdim = len(lb) + _free_axes(lhs_nd, lc, lb).index(lbd)
    else:
        lhs_nd = core.get_aval(lhs).ndim
        rhs_nd = core.get_aval(rhs).ndim
        n_lhs_free = lhs_nd - len(lc) - len(lb)
        out_bdim = len(lb) + n_lhs_free + _free_axes(rhs_nd, rc, rb).index(rbd)
    out = dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=((lc, rc), (lb, rb)),
        preferred_element_type=preferred_element_type,
    )
    return out, out_bdim


batching.batching_rules[dot_general_p] = _dot_general_batch


__all__ = [
    "DotDimensionNumbers",
    "Precision",
    "check_precision",
    "dot",
    "dot_general",
    "dot_general_p",
]
