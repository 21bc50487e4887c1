"""Reductions of functrace.numpy (``axis``/``keepdims``/``dtype`` as in NumPy).

On plain NumPy inputs each function calls NumPy directly. On tracers the
result dtype is NumPy's (integers and bools sum in int64, average in float64),
the operand is cast with an explicit ``convert_element_type`` and reduced by a
lax primitive; ``keepdims`` is a final ``reshape``.

Decisions:

* ``max``/``min`` of an empty axis without ``initial`` raise, as in NumPy (the
  lax primitives would return the identity).
* ``var``/``std``/``mean`` of complex tracers are not supported (lax has no
  complex conjugate yet); plain NumPy inputs work.
* ``logsumexp`` follows ``scipy.special.logsumexp(a, axis, b, keepdims,
  return_sign)`` and JAX's ``where`` (unselected entries count as ``-inf``); it
  subtracts the stopped-gradient maximum (0 where that is not finite), so all ``-inf``
  gives ``-inf`` and an ``inf`` gives ``inf``, no NaN.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import elementwise as lx
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    dtype_arg,
    keepdims_shape,
    no_out,
    normalize_axes,
    normalize_axis,
)
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._math import multiply
from functrace.numpy._shape import broadcast_arrays


def _finish(out: Any, in_shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    return ls.reshape(out, keepdims_shape(in_shape, axes)) if keepdims else out


def where_mask(fname: str, where: Any, shape: tuple[int, ...]) -> Any:
    """A reduction's ``where=`` as a boolean mask of ``shape`` (it broadcasts, as in
    NumPy and JAX), or None when every element counts."""
    if where is None or where is True:
        return None
    m = asarray_or_tracer(where, fname)
    mshape = core.get_aval(m).shape
    try:
        np.broadcast_shapes(mshape, shape)
        if len(mshape) > len(shape) or np.broadcast_shapes(mshape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{fname}: expected a where= mask that broadcasts to the array's shape "
            f"{shape}, got shape {mshape}."
        ) from None
    if core.get_aval(m).dtype != np.bool_:
        m = lx.ne(m, lx.zeros_like(m))
    return broadcast_to_shape(m, shape)


def masked(a: Any, mask: Any, value: Any) -> Any:
    """``a`` with ``value`` where ``mask`` is False (no derivative flows there)."""
    return a if mask is None else lx.select_n(mask, lx.full_like(a, value), a)


def _where_kw(where: Any, initial: Any = None) -> dict[str, Any]:
    """The ``where=`` and ``initial=`` keywords for NumPy, passed only when given."""
    kw = {} if where is None else {"where": where}
    if initial is not None:
        kw["initial"] = initial
    return kw


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    # NumPy sums bools and small ints in the default integer type.
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _mean_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _prepare(fname: str, a: Any, axis: Any) -> tuple[Any, core.ShapedArray, tuple[int, ...]]:
    a = asarray_or_tracer(a, fname)
    aval = core.get_aval(a)
    return a, aval, normalize_axes(fname, axis, aval.ndim)


def _full_as(value: Any, like: Any) -> Any:
    return lx.full_like(like, value)


def _no_complex(fname: str, aval: core.ShapedArray) -> None:
    if aval.dtype.kind == "c":
        raise NotImplementedError(
            f"{fname}: expected a real traced array, got {aval.dtype.name}. Complex "
            f"reductions that need a conjugate are not supported on tracers yet."
        )


# ---------------------------------------------------------------------------
# sum, prod, mean, var, std
# ---------------------------------------------------------------------------


def _kept_integer(dt: np.dtype) -> Any:
    """JAX's ``promote_integers=False``: integers keep their dtype (None otherwise)."""
    return dt if dt.kind in "iu" else None


def _make_sum_like(name: str, reduce: Any, combine: Any, identity: int, doc: str) -> Any:
    """``sum`` or ``prod``: NumPy's on plain inputs, ``reduce`` (then ``combine`` with
    ``initial``) on tracers, masked elements replaced by ``identity``."""
    np_fn, method = getattr(np, name), getattr(np.ndarray, name)

    def call(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
        promote_integers: bool = True,
    ) -> Any:
        if not promote_integers and dtype is None:
            dtype = _kept_integer(np.result_type(a))
        if initial is None and where is None:
            if type(a) is np.ndarray:  # the method skips np.sum's dispatch, same result
                return method(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
            return np_fn(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        kw = _where_kw(where, initial)
        return np_fn(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def sum_like(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
        promote_integers: bool = True,
    ) -> Any:
        no_out(name, out)
        a, aval, axes = _prepare(name, a, axis)
        if not promote_integers and dtype is None:
            dtype = _kept_integer(aval.dtype)
        a = masked(a, where_mask(name, where, aval.shape), identity)
        dt = dtype_arg(dtype) or _sum_dtype(aval.dtype)
        r = reduce(cast(a, dt, aval.weak_type), axes)
        if initial is not None:
            r = combine(r, _full_as(initial, r))
        return _finish(r, aval.shape, axes, keepdims)

    sum_like.__name__ = sum_like.__qualname__ = name
    sum_like.__doc__ = doc
    return numpy_path(call)(sum_like)


sum = _make_sum_like(  # noqa: A001
    "sum",
    lr.reduce_sum,
    lx.add,
    0,
    """Sum over ``axis`` (NumPy semantics, including the result dtype).

    ``where=`` (a mask broadcast to ``a``) leaves elements out, traced or not, as in
    JAX; ``promote_integers=False`` keeps an integer input's dtype (JAX's keyword).

    >>> import functrace.numpy as fnp
    >>> fnp.sum([[1, 2], [3, 4]], axis=0)
    array([4, 6])
    """,
)
prod = _make_sum_like(
    "prod",
    lr.reduce_prod,
    lx.mul,
    1,
    """Product over ``axis`` (integers and bools multiply in int64, as in NumPy).

    >>> import functrace.numpy as fnp
    >>> fnp.prod([[1.0, 2.0], [3.0, 4.0]], axis=1)
    array([ 2., 12.])
    """,
)


def _mean_traced(
    fname: str,
    a: Any,
    aval: core.ShapedArray,
    axes: tuple[int, ...],
    dt: np.dtype,
    mask: Any = None,
) -> Any:
    """The mean over ``axes`` in ``dt``, of the elements where ``mask`` (if given)."""
    _no_complex(fname, aval)
    s = lr.reduce_sum(cast(masked(a, mask, 0), dt, aval.weak_type), axes)
    if mask is None:
        return lx.div(s, _full_as(_count(aval.shape, axes), s))
    return lx.div(s, lr.reduce_sum(cast(mask, dt), axes))


def _np_mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    if type(a) is np.ndarray and where is None:
        return a.mean(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    return np.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **_where_kw(where))


@numpy_path(_np_mean)
def mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    """Arithmetic mean over ``axis`` (integers average in float64, as in NumPy), of the
    elements where ``where=`` is true if given (NaN where none is).

    >>> import functrace.numpy as fnp
    >>> fnp.mean([1, 2, 3, 4])
    np.float64(2.5)
    """
    no_out("mean", out)
    a, aval, axes = _prepare("mean", a, axis)
    dt = dtype_arg(dtype) or _mean_dtype(aval.dtype)
    mask = where_mask("mean", where, aval.shape)
    return _finish(_mean_traced("mean", a, aval, axes, dt, mask), aval.shape, axes, keepdims)


def _ddof(fname: str, ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(
            f"{fname}: expected either ddof or correction, got both. They mean the same: pass one."
        )
    return correction


def _no_mean(fname: str, mean: Any) -> None:
    if mean is not None:
        raise NotImplementedError(
            f"{fname}: expected mean=None on a traced array, got a "
            f"precomputed mean. The mean is recomputed (and "
            f"differentiated) from the data: drop the mean= argument."
        )


def _var_traced(
    fname: str,
    a: Any,
    aval: core.ShapedArray,
    axes: tuple[int, ...],
    dtype: Any,
    ddof: Any,
    mask: Any = None,
) -> Any:
    _no_complex(fname, aval)
    dt = dtype_arg(dtype) or _mean_dtype(aval.dtype)
    x = cast(a, dt, aval.weak_type)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    m = _mean_traced(fname, x, core.get_aval(x), axes, dt, mask)
    d = masked(lx.sub(x, ls.broadcast_in_dim(m, aval.shape, kept)), mask, 0)
    s = lr.reduce_sum(lx.integer_pow(d, 2), axes)
    # N - ddof <= 0 gives NaN, as in JAX (NumPy divides by zero: inf or nan)
    if mask is None:
        n = _count(aval.shape, axes) - ddof
        return lx.div(s, _full_as(n if n > 0 else np.nan, s))
    dof = lx.sub(lr.reduce_sum(cast(mask, dt), axes), _full_as(ddof, s))
    left = lx.gt(dof, lx.zeros_like(dof))
    v = lx.div(s, lx.select_n(left, lx.full_like(dof, 1), dof))
    return lx.select_n(left, lx.full_like(v, np.nan), v)


def _safe_sqrt(v: Any) -> Any:
    """``sqrt(v)`` with value and derivative 0 where ``v`` is 0 (see ``std``)."""
    zero = lx.eq(v, lx.zeros_like(v))
    root = lx.sqrt(lx.select_n(zero, v, _full_as(1, v)))
    return lx.select_n(zero, root, lx.zeros_like(root))


def _make_var_std(name: str, post: Any, doc: str, traced: Any = None) -> Any:
    """``var``/``std``/``nanvar``/``nanstd`` (``name``) with NumPy's signature: plain
    inputs go to NumPy; traced ones, after the shared argument checks, to
    ``traced(a, axis, dtype, ddof, keepdims, where)`` (``None``: ``var`` and then
    ``post``, the identity or a safe ``sqrt``, refusing ``where=``)."""
    np_fn, method = getattr(np, name), getattr(np.ndarray, name, None)

    def call(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: Any = 0,
        keepdims: bool = False,
        **newer: Any,
    ) -> Any:
        # NumPy's newer keywords (where=, mean=, correction=) only when given; a bare
        # ndarray takes the method (if any), the cheapest call
        kw = {k: v for k, v in newer.items() if v is not None}
        if not kw and method is not None and type(a) is np.ndarray:
            r = method(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)
        else:
            r = np_fn(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)
        d = kw.get("correction", ddof)
        if "where" in kw and out is None and isinstance(d, (int, np.integer)):
            # the kept elements of each slice, as the traced path counts them
            kept = np.broadcast_to(kw["where"], np.shape(a))
            n = np.sum(kept, axis=axis, keepdims=keepdims)
            return np.where(n - d <= 0, np.nan, r) if np.any(n - d <= 0) else r
        if isinstance(d, int) and d > 0 and "where" not in kw and out is None:
            axes = range(np.ndim(a)) if axis is None else np.atleast_1d(axis)
            shape = np.shape(a)
            if math.prod(shape[int(i)] for i in axes) - d <= 0:
                r = r * np.nan  # no degrees of freedom left: NaN, as in JAX
        return r

    def var_std(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: Any = 0,
        keepdims: bool = False,
        *,
        where: Any = None,
        mean: Any = None,
        correction: Any = None,
    ) -> Any:
        no_out(name, out)
        _no_mean(name, mean)
        ddof = _ddof(name, ddof, correction)
        if traced is not None:
            return traced(a, axis, dtype, ddof, keepdims, where)
        a, aval, axes = _prepare(name, a, axis)
        v = _var_traced(name, a, aval, axes, dtype, ddof, where_mask(name, where, aval.shape))
        return _finish(post(v), aval.shape, axes, keepdims)

    var_std.__name__ = var_std.__qualname__ = name
    var_std.__doc__ = doc
    return numpy_path(call)(var_std)


var = _make_var_std(
    "var",
    lambda v: v,
    """Variance ``sum((a - mean(a))**2) / (N - ddof)`` over ``axis`` (NumPy semantics;
    with ``ddof >= N`` it is NaN, as in JAX, where NumPy divides by zero; ``std`` too).

    >>> import functrace.numpy as fnp
    >>> fnp.var([1.0, 2.0, 3.0, 4.0], ddof=1)
    np.float64(1.6666666666666667)
    """,
)
std = _make_var_std(
    "std",
    _safe_sqrt,
    """Standard deviation ``sqrt(var(a, axis, ddof=ddof))`` (NumPy semantics).

    NOTE: where the variance is exactly 0 (a single element, or a constant slice) the
    value is 0.0, as in NumPy, and the gradient is 0 rather than the NaN of
    ``sqrt'(0) * 0``: std is not differentiable there, and 0 is its smallest
    subgradient (the same convention as ``abs`` at 0). This is a safe ``sqrt``: the
    zero variances are replaced by 1 before the ``sqrt`` and the result by 0 after it,
    so no NaN or inf reaches the gradient (also at higher orders).

    >>> import functrace.numpy as fnp
    >>> fnp.std([1.0, 3.0])
    np.float64(1.0)
    """,
)


# ---------------------------------------------------------------------------
# max, min
# ---------------------------------------------------------------------------


def _extremum(
    fname: str,
    reduce: Any,
    combine: Any,
    a: Any,
    axis: Any,
    keepdims: bool,
    initial: Any,
    where: Any = None,
) -> Any:
    a, aval, axes = _prepare(fname, a, axis)
    mask = where_mask(fname, where, aval.shape)
    if mask is not None:
        if initial is None:
            raise ValueError(
                f"{fname}: expected initial= with a where= mask (a maximum or minimum "
                f"has no identity to give the left-out elements), got none."
            )
        a = masked(a, mask, initial)
    if initial is None and builtins.any(aval.shape[i] == 0 for i in axes):
        raise ValueError(
            f"{fname}: expected a non-empty array along the reduced axes, got "
            f"shape {aval.shape} and axis {axis}. Pass initial= to give empty "
            f"reductions a value."
        )
    r = reduce(a, axes)
    if initial is not None:
        r = combine(r, _full_as(initial, r))
    return _finish(r, aval.shape, axes, keepdims)


def _make_extremum(name: str, reduce: Any, combine: Any, example: str) -> Any:
    np_fn, method = getattr(np, name), getattr(np.ndarray, name)

    def call(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        if initial is None and where is None:
            if type(a) is np.ndarray:
                return method(a, axis=axis, out=out, keepdims=keepdims)
            return np_fn(a, axis=axis, out=out, keepdims=keepdims)
        return np_fn(a, axis=axis, out=out, keepdims=keepdims, **_where_kw(where, initial))

    def extremum(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        no_out(name, out)
        return _extremum(name, reduce, combine, a, axis, keepdims, initial, where)

    extremum.__name__ = extremum.__qualname__ = name
    extremum.__doc__ = (
        f"{'Maximum' if name == 'max' else 'Minimum'} over ``axis`` (NaN propagates, as in "
        f"NumPy).\n\n    NOTE: at ties the gradient is shared equally among the tied "
        f"elements. Complex values are ordered by real part, then imaginary part; one "
        f"with a NaN part propagates, as in NumPy (JAX's result then depends on where "
        f"the NaN is: NumPy's rule is functrace.numpy's).\n\n    "
        f">>> import functrace.numpy as fnp\n    {example}\n    "
    )
    return numpy_path(call)(extremum)


max = _make_extremum(  # noqa: A001
    "max", lr.reduce_max, lx.max, ">>> fnp.max([[1, 5], [3, 2]], axis=1)\n    array([5, 3])"
)
min = _make_extremum(  # noqa: A001
    "min", lr.reduce_min, lx.min, ">>> fnp.min([[1, 5], [3, 2]], axis=0)\n    array([1, 2])"
)


amax = max
amin = min


# ---------------------------------------------------------------------------
# argmax, argmin
# ---------------------------------------------------------------------------


def _numpy_arg_extremum(name: str) -> Any:
    np_fn, method = getattr(np, name), getattr(np.ndarray, name)

    def call(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        if type(a) is np.ndarray:
            return method(a, axis, out, keepdims=keepdims)
        return np_fn(a, axis=axis, out=out, keepdims=keepdims)

    return call


def _at_extremum(x: Any, ax: int, is_max: bool) -> Any:
    """Where the complex ``x`` equals its extremum along ``ax`` (NumPy's lexicographic
    order), or has a NaN part where the extremum does (NaN propagates to it)."""
    shape = core.get_aval(x).shape
    m = (lr.reduce_max if is_max else lr.reduce_min)(x, (ax,))
    m = ls.broadcast_in_dim(m, shape, tuple(i for i in range(len(shape)) if i != ax))
    nan = lx.bitwise_and(lx.ne(x, x), lx.ne(m, m))
    return lx.bitwise_or(lx.eq(x, m), nan)


def _arg_extremum(fname: str, prim: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray_or_tracer(a, fname)
    aval = core.get_aval(a)
    in_shape: tuple[int, ...]
    if axis is None:
        flat = ls.reshape(a, (aval.size,))
        ax, in_shape = 0, (aval.size,)
    else:
        flat, ax, in_shape = a, normalize_axis(fname, axis, aval.ndim), aval.shape
    if in_shape[ax] == 0:
        raise ValueError(
            f"{fname}: expected a non-empty array along the axis, got shape "
            f"{aval.shape} and axis {axis}. An empty sequence has no extremum."
        )
    if aval.dtype.kind == "c":  # lax.argmax refuses complex: the first True of a mask
        flat, prim = _at_extremum(flat, ax, prim is lr.argmax), lr.argmax
    r = prim(flat, ax, np.int64)
    if not keepdims:
        return r
    if axis is None:
        return ls.reshape(r, (1,) * aval.ndim)
    return ls.reshape(r, keepdims_shape(aval.shape, (ax,)))


@numpy_path(_numpy_arg_extremum("argmax"))
def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array if None); first at ties.

    NOTE: complex values are ordered as in NumPy (real part, then imaginary part; the
    first NaN in either part wins), eagerly and traced; JAX refuses them (``argmin`` too).

    >>> import functrace.numpy as fnp
    >>> fnp.argmax([[1, 5], [7, 2]], axis=1)
    array([1, 0])
    """
    no_out("argmax", out)
    return _arg_extremum("argmax", lr.argmax, a, axis, keepdims)


@numpy_path(_numpy_arg_extremum("argmin"))
def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array if None); first at ties.

    NOTE: complex values are ordered as in NumPy, as for ``argmax`` (JAX refuses them).

    >>> import functrace.numpy as fnp
    >>> fnp.argmin([3, 1, 2])
    np.int64(1)
    """
    no_out("argmin", out)
    return _arg_extremum("argmin", lr.argmin, a, axis, keepdims)


# ---------------------------------------------------------------------------
# any, all
# ---------------------------------------------------------------------------


def _truth(a: Any) -> Any:
    return a if core.get_aval(a).dtype == np.bool_ else lx.ne(a, lx.zeros_like(a))


def _make_truth_reduction(name: str, reduce: Any, doc: str) -> Any:
    np_fn, method = getattr(np, name), getattr(np.ndarray, name)

    def call(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        *,
        where: Any = None,
    ) -> Any:
        if type(a) is np.ndarray and where is None:
            return method(a, axis=axis, out=out, keepdims=keepdims)
        return np_fn(a, axis=axis, out=out, keepdims=keepdims, **_where_kw(where))

    def truth_reduction(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        *,
        where: Any = None,
    ) -> Any:
        no_out(name, out)
        a, aval, axes = _prepare(name, a, axis)
        t = masked(_truth(a), where_mask(name, where, aval.shape), name == "all")
        return _finish(reduce(t, axes), aval.shape, axes, keepdims)

    truth_reduction.__name__ = truth_reduction.__qualname__ = name
    truth_reduction.__doc__ = doc
    return numpy_path(call)(truth_reduction)


any = _make_truth_reduction(  # noqa: A001
    "any",
    lr.reduce_max,
    """Whether any element along ``axis`` is true (non-zero; NaN counts as true).

    >>> import functrace.numpy as fnp
    >>> fnp.any([[0, 1], [0, 0]], axis=1)
    array([ True, False])
    """,
)
all = _make_truth_reduction(  # noqa: A001
    "all",
    lr.reduce_min,
    """Whether every element along ``axis`` is true (non-zero; empty gives True).

    >>> import functrace.numpy as fnp
    >>> fnp.all([[1, 1], [0, 1]], axis=0)
    array([False,  True])
    """,
)


# ---------------------------------------------------------------------------
# logsumexp
# ---------------------------------------------------------------------------


def _check_where_mask(mask: Any) -> None:
    dtype = core.get_aval(mask).dtype
    if dtype != np.bool_:
        raise TypeError(f"logsumexp: expected a boolean where=, got dtype {dtype}.")


def _logsumexp_numpy(
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    a = np.asarray(a)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if b is not None:
        a, b = np.broadcast_arrays(a, b)
    if where is not None:
        mask = np.asarray(where)
        _check_where_mask(mask)
        a, mask = np.broadcast_arrays(a, mask)
        if b is not None:
            a, b = np.broadcast_arrays(a, b)
        a = np.where(mask, a, -np.inf).astype(a.dtype)
    axes = normalize_axes("logsumexp", axis, a.ndim)
    if a.size:
        m = np.max(a, axis=axes, keepdims=True)
        m = np.where(np.isfinite(m), m, 0).astype(a.dtype)
    else:
        m = np.zeros(keepdims_shape(a.shape, axes), a.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.exp(a - m)
        if b is not None:
            e = e * b
        s = np.sum(e, axis=axes, keepdims=keepdims)
        sign = None
        if return_sign:
            sign, s = np.sign(s), np.abs(s)
        out = np.log(s) + (m if keepdims else np.reshape(m, np.shape(s)))
    return (out, sign) if return_sign else out


@numpy_path(_logsumexp_numpy)
def logsumexp(
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, computed without overflow.

    Like ``scipy.special.logsumexp``. The maximum (through ``stop_gradient``) is
    subtracted before exponentiating; its derivative is the softmax of ``a``.
    ``where`` (a boolean mask broadcasting with ``a``, as JAX's) leaves the entries it
    does not select out of the sum (``-inf`` where it selects none).

    >>> import functrace.numpy as fnp
    >>> float(fnp.logsumexp([1000.0, 1000.0]))
    1000.6931471805599
    """
    a = asarray_or_tracer(a, "logsumexp")
    aval = core.get_aval(a)
    if aval.dtype.kind not in "f":
        if aval.dtype.kind == "c":
            _no_complex("logsumexp", aval)
        a = cast(a, np.dtype(np.float64), aval.weak_type)
    if b is not None:
        a, b = broadcast_arrays(a, asarray_or_tracer(b, "logsumexp"))
    if where is not None:
        mask = asarray_or_tracer(where, "logsumexp")
        _check_where_mask(mask)
        a, mask = broadcast_arrays(a, mask)
        if b is not None:
            a, b = broadcast_arrays(a, b)
        a = lx.select_n(mask, _full_as(-np.inf, a), a)
    aval = core.get_aval(a)
    axes = normalize_axes("logsumexp", axis, aval.ndim)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    m = lr.reduce_max(a, axes)  # -inf over empty axes: replaced by 0 below
    m = lx.stop_gradient(lx.select_n(lx.lt(lx.abs(m), _full_as(np.inf, m)), lx.zeros_like(m), m))
    e = lx.exp(lx.sub(a, ls.broadcast_in_dim(m, aval.shape, kept)))
    if b is not None:
        e = multiply(e, b)
        m = cast(m, core.get_aval(e).dtype)
    s = lr.reduce_sum(e, axes)
    sign = None
    if return_sign:
        sign, s = lx.sign(s), lx.abs(s)
    out = _finish(lx.add(lx.log(s), m), aval.shape, axes, keepdims)
    if return_sign:
        return out, _finish(sign, aval.shape, axes, keepdims)
    return out


# ---------------------------------------------------------------------------
# cumsum, cumprod
# ---------------------------------------------------------------------------


def _numpy_cumulative(name: str) -> Any:
    np_fn, method = getattr(np, name), getattr(np.ndarray, name)

    def call(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if type(a) is np.ndarray:
            return method(a, axis, dtype, out)
        return np_fn(a, axis=axis, dtype=dtype, out=out)

    return call


def _cumulative(fname: str, prim: Any, a: Any, axis: Any, dtype: Any) -> Any:
    a = asarray_or_tracer(a, fname)
    aval = core.get_aval(a)
    if axis is None or aval.ndim == 0:
        if axis is not None:
            normalize_axis(fname, axis, 1)  # a 0-d array scans as 1-d, as in NumPy
        a, ax = ls.reshape(a, (aval.size,)), 0
    else:
        ax = normalize_axis(fname, axis, aval.ndim)
    dt = dtype_arg(dtype) or _sum_dtype(aval.dtype)
    return prim(cast(a, dt, aval.weak_type), ax)


@numpy_path(_numpy_cumulative("cumsum"))
def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Inclusive cumulative sum along ``axis`` (of the flattened array if None).

    >>> import functrace.numpy as fnp
    >>> fnp.cumsum([[1, 2], [3, 4]])
    array([ 1,  3,  6, 10])
    """
    no_out("cumsum", out)
    return _cumulative("cumsum", lr.cumsum, a, axis, dtype)


@numpy_path(_numpy_cumulative("cumprod"))
def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Inclusive cumulative product along ``axis`` (of the flattened array if None).

    >>> import functrace.numpy as fnp
    >>> fnp.cumprod([1.0, 2.0, 3.0])
    array([1., 2., 6.])
    """
    no_out("cumprod", out)
    return _cumulative("cumprod", lr.cumprod, a, axis, dtype)


# ---------------------------------------------------------------------------
# nansum, nanmean
# ---------------------------------------------------------------------------


def _np_nansum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    kw = _where_kw(where, initial)
    return np.nansum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)


def _np_nanmean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    kw = _where_kw(where)
    return np.nanmean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)


@numpy_path(_np_nansum)
def nansum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """``sum`` that treats NaNs as zero (``initial`` and ``where`` as in ``sum``).

    >>> import functrace.numpy as fnp
    >>> fnp.nansum([1.0, fnp.nan, 2.0])
    np.float64(3.0)
    """
    no_out("nansum", out)
    a = asarray_or_tracer(a, "nansum")
    if core.get_aval(a).dtype.kind in "fc":
        a = masked(a, lx.eq(a, a), 0)  # NaNs count as zero
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@numpy_path(_np_nanmean)
def nanmean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    """``mean`` over the non-NaN elements (and where ``where`` is true): NaN where
    there are none, as in NumPy.

    >>> import functrace.numpy as fnp
    >>> fnp.nanmean([1.0, fnp.nan, 2.0])
    np.float64(1.5)
    """
    no_out("nanmean", out)
    a, aval, axes = _prepare("nanmean", a, axis)
    if aval.dtype.kind not in "fc":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    _no_complex("nanmean", aval)
    dt = dtype_arg(dtype) or aval.dtype
    ok = lx.eq(a, a)
    mask = where_mask("nanmean", where, aval.shape)
    if mask is not None:
        ok = lx.bitwise_and(ok, mask)
    return _finish(_mean_traced("nanmean", a, aval, axes, dt, ok), aval.shape, axes, keepdims)


__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nanmean",
    "nansum",
    "prod",
    "std",
    "sum",
    "var",
]
