"""More statistics and the remaining numeric functions of functrace.numpy: ``nancumsum``,
``nancumprod``, ``nanprod``, ``nanvar``, ``nanstd``, ``cov``, ``corrcoef``, ``trapezoid``,
``unwrap``, ``ediff1d`` and the elementwise ``gcd``, ``lcm``, ``ldexp``, ``frexp``,
``nextafter``, ``spacing``, ``i0``.

(``_stats`` re-exports this module's names, so ``functrace.numpy`` has them.) On plain
NumPy inputs each function calls NumPy directly; on tracers each is a composite of
lax/functrace.numpy operations, so all of them trace, batch, jit and (where real-valued)
differentiate through their parts.

Decisions:

* ``nanvar``/``nanstd`` give NaN where a slice has no more numbers than ``ddof`` (NumPy
  warns and does the same); ``where=`` masks like NaNs. Their gradient is 0 at NaNs.
* ``cov`` checks ``fweights``/``aweights`` values (integral, non-negative) only when they
  are not tracers; a non-positive normalization gives inf/NaN, as NumPy (without its
  warning).
* ``gcd``/``lcm`` on tracers run Euclid's algorithm in a ``while_loop`` over the whole
  array (until every remainder is 0).
* ``ldexp`` scales by three exact powers of two (so results NumPy finds in range, even
  subnormal ones, are exact); its derivative in ``x`` is ``2**n``. ``frexp``'s mantissa
  has the derivative ``2**-e``; the exponent is int32, as in NumPy.
* ``nextafter``'s derivative is 1 in ``x`` (a step of one ulp) and 0 in ``y``;
  ``spacing``'s is 0.
* ``i0`` is ``exp(|x|) * lax.bessel_i0e(x)`` (the one definition of the Bessel
  functions, shared with ``kaiser`` and ``functrace.scipy.special``); its derivatives
  (``i1`` and higher) come from those of ``bessel_i0e``/``bessel_i1e``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import elementwise as lx
from functrace.lax import random_bits as lrb
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.lax.control_flow import while_loop
from functrace.lax.special_extra import bessel_i0e
from functrace.numpy._core import (
    asarray_or_tracer,
    cast,
    dtype_arg,
    elementwise,
    no_out,
    normalize_axis,
    resolve_ufunc_dtypes,
    slice_along,
)
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._functions import diff
from functrace.numpy._indexing import where
from functrace.numpy._joining import concatenate
from functrace.numpy._linalg import dot
from functrace.numpy._math import (
    absolute,
    add,
    clip,
    conjugate,
    equal,
    floor,
    floor_divide,
    greater,
    isfinite,
    less,
    logical_and,
    multiply,
    real,
    remainder,
    sqrt,
    subtract,
    true_divide,
)
from functrace.numpy._reductions import (
    _finish,
    _make_var_std,
    _mean_dtype,
    _no_complex,
    _prepare,
    _safe_sqrt,
    _where_kw,
    cumprod,
    cumsum,
    mean,
    prod,
    std,
    sum,
    var,
    where_mask,
)
from functrace.numpy._shape import atleast_2d, ravel, reshape, squeeze, transpose
from functrace.numpy._special import log2
from functrace.numpy._twodim import diagonal

_FLOAT64 = np.dtype(np.float64)
_INT32 = np.dtype(np.int32)

# ---------------------------------------------------------------------------
# nanvar, nanstd
# ---------------------------------------------------------------------------


def _nanvar(
    fname: str, a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, where_: Any
) -> Any:
    a, aval, axes = _prepare(fname, a, axis)
    _no_complex(fname, aval)
    dt = dtype_arg(dtype) or _mean_dtype(aval.dtype)
    x = cast(a, dt, aval.weak_type)
    ok = lx.eq(x, x)  # not NaN
    mask = where_mask(fname, where_, aval.shape)
    if mask is not None:
        ok = lx.bitwise_and(ok, mask)
    zero = lx.zeros_like(x)
    count = lr.reduce_sum(cast(ok, dt), axes)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    one = lx.full_like(count, 1)
    mean = lx.div(lr.reduce_sum(lx.select_n(ok, zero, x), axes), lx.max(count, one))
    d = lx.select_n(ok, zero, lx.sub(x, ls.broadcast_in_dim(mean, aval.shape, kept)))
    s = lr.reduce_sum(lx.integer_pow(d, 2), axes)
    dof = lx.sub(count, lx.full_like(count, ddof))
    positive = lx.gt(dof, lx.zeros_like(dof))  # else NaN, as NumPy (which warns)
    v = lx.div(s, lx.select_n(positive, one, dof))
    return lx.select_n(positive, lx.full_like(v, np.nan), v), aval, axes


def _make_nanvar(name: str, post: Any, doc: str) -> Any:
    def traced(a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, where: Any) -> Any:
        a = asarray_or_tracer(a, name)
        if core.get_aval(a).dtype.kind != "f" and where is None:
            return (var if name == "nanvar" else std)(a, axis, dtype, None, ddof, keepdims)
        v, aval, axes = _nanvar(name, a, axis, dtype, ddof, keepdims, where)
        return _finish(post(v), aval.shape, axes, keepdims)

    return _make_var_std(name, post, doc, traced)


nanvar = _make_nanvar(
    "nanvar",
    lambda v: v,
    """Variance over ``axis`` of the non-NaN elements (and where ``where`` is true),
    ``sum((a - mean)**2) / (count - ddof)``; NaN where ``count <= ddof``, as NumPy.

    NOTE: NaNs (and masked elements) get a zero gradient.

    >>> import functrace.numpy as fnp
    >>> fnp.nanvar([1.0, fnp.nan, 3.0])
    np.float64(1.0)
    """,
)
nanstd = _make_nanvar(
    "nanstd",
    _safe_sqrt,
    """Standard deviation ``sqrt(nanvar(a, axis, ddof=ddof))`` ignoring NaNs.

    NOTE: as ``std``, where the variance is exactly 0 the gradient is 0 (not NaN); NaNs
    get a zero gradient.

    >>> import functrace.numpy as fnp
    >>> fnp.nanstd([[1.0, 3.0], [fnp.nan, 2.0]], axis=1)
    array([1., 0.])
    """,
)

# ---------------------------------------------------------------------------
# nancumsum, nancumprod, nanprod
# ---------------------------------------------------------------------------


def _nan_to(a: Any, fill: float) -> Any:
    """``a`` with NaNs replaced by ``fill`` (floating and complex arrays only)."""
    if core.get_aval(a).dtype.kind not in "fc":
        return a
    return lx.select_n(lx.eq(a, a), lx.full_like(a, fill), a)


@numpy_path(lambda a, axis=None, dtype=None, out=None: np.nancumsum(a, axis, dtype, out))
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array if None), NaNs counting as 0.

    >>> import functrace.numpy as fnp
    >>> fnp.nancumsum([1.0, fnp.nan, 2.0])
    array([1., 1., 3.])
    """
    no_out("nancumsum", out)
    return cumsum(_nan_to(asarray_or_tracer(a, "nancumsum"), 0), axis, dtype)


@numpy_path(lambda a, axis=None, dtype=None, out=None: np.nancumprod(a, axis, dtype, out))
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product along ``axis`` (of the flattened array if None), NaNs counting
    as 1.

    >>> import functrace.numpy as fnp
    >>> fnp.nancumprod([2.0, fnp.nan, 3.0])
    array([2., 2., 6.])
    """
    no_out("nancumprod", out)
    return cumprod(_nan_to(asarray_or_tracer(a, "nancumprod"), 1), axis, dtype)


def _np_nanprod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    return np.nanprod(a, axis, dtype, out, keepdims, **_where_kw(where, initial))


@numpy_path(_np_nanprod)
def nanprod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """Product over ``axis`` with NaNs counting as 1 (1 for a slice of NaNs only).

    >>> import functrace.numpy as fnp
    >>> fnp.nanprod([[2.0, fnp.nan], [3.0, 4.0]], axis=1)
    array([ 2., 12.])
    """
    no_out("nanprod", out)
    x = _nan_to(asarray_or_tracer(a, "nanprod"), 1)
    return prod(x, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


# ---------------------------------------------------------------------------
# cov, corrcoef
# ---------------------------------------------------------------------------


def _np_cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    fweights: Any = None,
    aweights: Any = None,
    *,
    dtype: Any = None,
) -> Any:
    return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)


def _cov_rows(fname: str, v: Any, rowvar: bool, dt: np.dtype) -> Any:
    """``v`` (at most 2-d) as a 2-d array of variables (rows) by observations."""
    if core.get_aval(v).ndim > 2:
        raise ValueError(
            f"{fname}: expected an array of at most 2 dimensions, got shape "
            f"{core.get_aval(v).shape}."
        )
    x = cast(atleast_2d(v), dt)
    if not rowvar and core.get_aval(x).shape[0] != 1:
        x = transpose(x)
    return x


def _check_weights(fname: str, name: str, w: Any, n: int, integral: bool) -> Any:
    w = asarray_or_tracer(w, fname)
    aval = core.get_aval(w)
    if aval.ndim > 1:
        raise ValueError(f"{fname}: expected 1-d {name}, got shape {aval.shape}.")
    if aval.shape[0] != n:
        raise ValueError(
            f"{fname}: expected {name} with one entry per observation ({n}), got {aval.shape[0]}."
        )
    if not isinstance(w, core.Tracer):  # a tracer's values are not read (not even concrete)
        v = np.asarray(w)
        if integral and not np.all(v == np.around(v)):
            raise TypeError(f"{fname}: expected integral {name}, got {v.tolist()}.")
        if np.any(v < 0):
            raise ValueError(f"{fname}: expected non-negative {name}, got {v.tolist()}.")
    return w


@numpy_path(_np_cov)
def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    fweights: Any = None,
    aweights: Any = None,
    *,
    dtype: Any = None,
) -> Any:
    """Covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``), and of ``y``'s appended: ``X Xᵀ / (N - ddof)`` of the centred data, with
    frequency (``fweights``) and reliability (``aweights``) weights, as ``numpy.cov``.

    The result is squeezed (a 0-d array for one variable) and float64 unless ``dtype``
    (weights are float64, as in NumPy, so weighted results are float64 anyway).

    >>> import functrace.numpy as fnp
    >>> fnp.cov([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if ddof is not None and not isinstance(ddof, (int, np.integer)):
        raise ValueError(f"cov: expected an integer ddof, got {ddof!r}.")
    m = asarray_or_tracer(m, "cov")
    parts = [core.get_aval(m)]
    if y is not None:
        y = asarray_or_tracer(y, "cov")
        parts.append(core.get_aval(y))
    if dtype is None:
        dt, _ = dtypes.promote(*[(p.dtype, False) for p in parts], (_FLOAT64, False))
    else:
        dt = np.dtype(dtype)
    x = _cov_rows("cov", m, rowvar, dt)
    if y is not None:
        x = concatenate([x, _cov_rows("cov", y, rowvar, dt)], axis=0)
    nvar, nobs = core.get_aval(x).shape
    if nvar == 0:
        return np.empty((0, 0), dt)
    if ddof is None:
        ddof = 0 if bias else 1
    w = aw = None
    if fweights is not None:
        w = cast(_check_weights("cov", "fweights", fweights, nobs, True), _FLOAT64)
    if aweights is not None:
        aw = cast(_check_weights("cov", "aweights", aweights, nobs, False), _FLOAT64)
        w = aw if w is None else multiply(w, aw)
    fact: Any
    if w is None:
        avg = mean(x, axis=1)
        fact = max(nobs - ddof, 0)
    else:
        w_sum = sum(w)
        avg = true_divide(sum(multiply(x, w), axis=1), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = subtract(w_sum, ddof)
        else:
            fact = subtract(w_sum, true_divide(multiply(ddof, sum(multiply(w, aw))), w_sum))
        fact = where(greater(fact, 0), fact, 0)
    # NOTE: a normalization <= 0 divides by 0 (inf or NaN), as NumPy after its warning
    xc = cast(subtract(x, reshape(avg, (nvar, 1))), dt)  # centred in place, as NumPy
    xw = xc if w is None else multiply(xc, w)
    c = true_divide(dot(xc, conjugate(transpose(xw))), fact)
    return squeeze(c)


def _np_corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    return np.corrcoef(x, y, rowvar, dtype=dtype)


@numpy_path(_np_corrcoef)
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients ``cov[i, j] / sqrt(cov[i, i] cov[j, j])`` of the
    variables in the rows of ``x`` (columns if not ``rowvar``) and ``y``, clipped to
    [-1, 1] as NumPy.

    NOTE: a constant variable gives NaN (0 / 0), as in NumPy.

    >>> import functrace.numpy as fnp
    >>> fnp.corrcoef([1.0, 2.0, 4.0], [2.0, 4.0, 8.0])
    array([[1., 1.],
           [1., 1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    aval = core.get_aval(c)
    if aval.ndim == 0:
        return true_divide(c, c)
    d = real(diagonal(c))
    s = sqrt(d)
    c = true_divide(c, reshape(s, (-1, 1)))
    c = true_divide(c, reshape(s, (1, -1)))
    return clip(real(c), -1, 1)


# ---------------------------------------------------------------------------
# trapezoid, unwrap, ediff1d
# ---------------------------------------------------------------------------


def _along(x: Any, start: int, stop: int, axis: int) -> Any:
    return slice_along(x, start, stop, axis)


@numpy_path(lambda y, x=None, dx=1.0, axis=-1: np.trapezoid(y, x, dx, axis))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule: ``sum(d * (y[1:] +
    y[:-1]) / 2)`` with the spacings ``d = diff(x)`` (``x`` 1-d along ``axis``, or of
    ``y``'s shape), or the constant ``dx``.

    >>> import functrace.numpy as fnp
    >>> fnp.trapezoid([1.0, 2.0, 3.0], x=[0.0, 1.0, 3.0])
    np.float64(6.5)
    """
    y = asarray_or_tracer(y, "trapezoid")
    aval = core.get_aval(y)
    ax = normalize_axis("trapezoid", axis, aval.ndim)
    n = aval.shape[ax]
    if x is None:
        d = dx
    else:
        x = asarray_or_tracer(x, "trapezoid")
        xaval = core.get_aval(x)
        if xaval.ndim == 1:
            if xaval.shape[0] != n:
                raise ValueError(
                    f"trapezoid: expected x of length {n} (y's length along axis {axis}), "
                    f"got {xaval.shape[0]}."
                )
            d = reshape(diff(x), tuple(n - 1 if i == ax else 1 for i in range(aval.ndim)))
        else:
            d = diff(x, axis=axis)
    if n == 0:  # nothing to integrate: 0 (NumPy's empty sum), in NumPy's dtype
        y = true_divide(multiply(d, y), 2.0)
        return sum(y, axis=ax)
    mid = add(_along(y, 1, n, ax), _along(y, 0, n - 1, ax))
    return sum(true_divide(multiply(d, mid), 2.0), axis=ax)


def _np_unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> Any:
    return np.unwrap(p, discont, axis, period=period)


@numpy_path(_np_unwrap)
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> Any:
    """``p`` with every jump between neighbours along ``axis`` larger than ``discont``
    (``period / 2`` by default) replaced by its equivalent modulo ``period``: unwrapped
    phase angles. Integers stay integers when ``period`` is an integer, as NumPy.

    The gradient with respect to ``p`` is the identity (the corrections are piecewise
    constant).

    >>> import functrace.numpy as fnp
    >>> fnp.unwrap([0.0, 1.0, 3.5, 0.5], period=4.0)
    array([ 0. ,  1. , -0.5,  0.5])
    """
    p = asarray_or_tracer(p, "unwrap")
    aval = core.get_aval(p)
    ax = normalize_axis("unwrap", axis, aval.ndim)
    dd = diff(p, axis=ax)
    if not isinstance(period, (int, float)):  # Python scalars stay weak, as in NumPy
        period = asarray_or_tracer(period, "unwrap")
    paval = core.get_aval(period)
    weak = paval.weak_type or isinstance(period, (int, float))
    dt, _ = dtypes.promote((core.get_aval(dd).dtype, False), (paval.dtype, weak))
    if discont is None:
        discont = period / 2
    ambiguous: Any = True
    if aval.dtype.kind in "iu" and paval.dtype.kind in "iu":
        high = period // 2
        ambiguous = equal(remainder(period, 2), 0)
    else:
        high = period / 2
    low = -high
    ddmod = add(remainder(subtract(dd, low), period), low)
    at_low = logical_and(logical_and(equal(ddmod, low), greater(dd, 0)), ambiguous)
    ddmod = where(at_low, high, ddmod)
    correct = where(less(absolute(dd), discont), 0, subtract(ddmod, dd))
    n = aval.shape[ax]
    if n == 0:
        return cast(p, dt)
    rest = add(_along(p, 1, n, ax), cumsum(correct, axis=ax))
    return cast(concatenate([cast(_along(p, 0, 1, ax), dt), cast(rest, dt)], axis=ax), dt)


def _np_ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    return np.ediff1d(ary, to_end, to_begin)


@numpy_path(_np_ediff1d)
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences ``ary[1:] - ary[:-1]`` of the flattened array, after ``to_begin``
    and before ``to_end`` (both flattened). The result keeps ``ary``'s dtype, as NumPy.

    >>> import functrace.numpy as fnp
    >>> fnp.ediff1d([1, 2, 4, 7], to_begin=[0], to_end=99)
    array([ 0,  1,  2,  3, 99])
    """
    x = ravel(asarray_or_tracer(ary, "ediff1d"))
    dt = core.get_aval(x).dtype
    n = core.get_aval(x).shape[0]
    parts = [cast(subtract(_along(x, min(n, 1), n, 0), _along(x, 0, max(n - 1, 0), 0)), dt)]
    for name, extra, front in (("to_begin", to_begin, True), ("to_end", to_end, False)):
        if extra is None:
            continue
        e = asarray_or_tracer(extra, "ediff1d")
        edt = np.asarray(e).dtype if not isinstance(e, core.Tracer) else core.get_aval(e).dtype
        if not np.can_cast(edt, dt, casting="same_kind"):
            raise TypeError(
                f"ediff1d: expected {name} castable to {dt.name} (ary's dtype) under the "
                f"same_kind rule, got {edt.name}. Cast ary or {name} first."
            )
        e = cast(ravel(e), dt)
        parts.insert(0, e) if front else parts.append(e)
    return concatenate(parts) if len(parts) > 1 else parts[0]


# ---------------------------------------------------------------------------
# gcd, lcm
# ---------------------------------------------------------------------------


def _gcd(x: Any, y: Any) -> Any:
    # Euclid on |x|, |y| until every remainder is 0 (a zero divisor leaves its pair alone)
    if core.get_aval(x).dtype.kind not in "iu":
        raise TypeError(
            f"gcd: expected integer operands, got {core.get_aval(x).dtype.name}. Cast with "
            f".astype(int)."
        )
    a0, b0 = lx.abs(x), lx.abs(y)
    zero, one = lx.zeros_like(a0), lx.full_like(a0, 1)

    def step(ab: tuple[Any, Any]) -> tuple[Any, Any]:
        a, b = ab
        live = lx.ne(b, zero)
        r = lx.rem(a, lx.select_n(live, one, b))
        return lx.select_n(live, a, b), lx.select_n(live, zero, r)

    def busy(ab: tuple[Any, Any]) -> Any:
        return lr.reduce_max(lx.ne(ab[1], zero), tuple(range(core.get_aval(ab[1]).ndim)))

    return while_loop(busy, step, (a0, b0))[0]


def _lcm(x: Any, y: Any) -> Any:
    g = _gcd(x, y)
    zero = lx.zeros_like(g)
    nz = lx.ne(g, zero)
    q = lx.div(lx.abs(x), lx.select_n(nz, lx.full_like(g, 1), g))
    return lx.select_n(nz, zero, lx.mul(q, lx.abs(y)))  # wraps on overflow, as NumPy


gcd = elementwise(
    "gcd",
    np.gcd,
    _gcd,
    """Greatest common divisor of ``|x1|`` and ``|x2|``, elementwise (integers only;
    ``gcd(0, 0) == 0``).

    >>> import functrace.numpy as fnp
    >>> fnp.gcd([12, -18, 0], 8)
    array([4, 2, 8])
    """,
)
lcm = elementwise(
    "lcm",
    np.lcm,
    _lcm,
    """Least common multiple of ``|x1|`` and ``|x2|``, elementwise (integers only; 0 if
    either is 0).

    >>> import functrace.numpy as fnp
    >>> fnp.lcm([4, 6, 0], 10)
    array([20, 30,  0])
    """,
)

# ---------------------------------------------------------------------------
# ldexp, frexp, nextafter, spacing
# ---------------------------------------------------------------------------


def _scale2(x: Any, n: Any) -> Any:
    """``x * 2**n`` (``n`` an integer array of x's shape) as three exact powers of two
    within the normal range, so each product rounds at most once."""
    dt = core.get_aval(x).dtype
    big = int(np.finfo(dt).maxexp) - 2  # 2**big and 2**-big are normal numbers
    n = lx.clamp(lx.full_like(n, -3 * big), n, lx.full_like(n, 3 * big))
    third = floor_divide(n, 3)
    last = lx.sub(n, lx.mul(third, lx.full_like(third, 2)))
    two = lx.full_like(x, 2)
    p1 = lx.pow(two, cast(third, dt))
    return lx.mul(lx.mul(lx.mul(x, p1), p1), lx.pow(two, cast(last, dt)))


def _ldexp(x: Any, n: Any) -> Any:
    return _scale2(x, n)


ldexp = elementwise(
    "ldexp",
    np.ldexp,
    _ldexp,
    """``x1 * 2**x2`` for an integer ``x2``, computed exactly (no overflow in ``2**x2``
    before the product).

    The derivative in ``x1`` is ``2**x2``.

    >>> import functrace.numpy as fnp
    >>> fnp.ldexp([0.75, 1.5], [2, -1])
    array([3.  , 0.75])
    """,
)


@numpy_path(np.frexp, nargs=1)
def frexp(x: Any, /) -> tuple[Any, Any]:
    """The mantissa ``m`` (with ``0.5 <= |m| < 1``, or 0) and the int32 exponent ``e`` of
    ``x = m * 2**e``, elementwise; zeros, infinities and NaNs give ``(x, 0)``.

    The mantissa's derivative is ``2**-e``.

    >>> import functrace.numpy as fnp
    >>> fnp.frexp([3.0, -0.75, 0.0])
    (array([ 0.75, -0.75,  0.  ]), array([2, 0, 0], dtype=int32))
    """
    x = asarray_or_tracer(x, "frexp")
    dts = resolve_ufunc_dtypes("frexp", np.frexp, [core.get_aval(x)])
    x = cast(x, dts[0])
    special = lx.bitwise_not(lx.bitwise_and(isfinite(x), lx.ne(x, lx.zeros_like(x))))
    safe = lx.select_n(special, lx.abs(x), lx.full_like(x, 1))
    e = cast(floor(log2(safe)), _INT32)
    e = lx.add(e, lx.full_like(e, 1))
    # log2 may round across a power of two: one step fixes the exponent
    m = lx.abs(_scale2(safe, lx.neg(e)))
    e = lx.select_n(lx.ge(m, lx.full_like(m, 1)), e, lx.add(e, lx.full_like(e, 1)))
    e = lx.select_n(lx.lt(m, lx.full_like(m, 0.5)), e, lx.sub(e, lx.full_like(e, 1)))
    e = lx.select_n(special, e, lx.zeros_like(e))
    return lx.select_n(special, _scale2(x, lx.neg(e)), x), cast(e, dts[2])


nextafter = elementwise(
    "nextafter",
    np.nextafter,
    lrb.nextafter,
    """The next floating-point value after ``x1`` towards ``x2``, elementwise.

    Its derivative is 1 in ``x1`` (it moves by one ulp) and 0 in ``x2`` (JAX defines
    none).

    >>> import functrace.numpy as fnp
    >>> bool(fnp.nextafter(1.0, 2.0) == 1.0 + fnp.finfo(float).eps)
    True
    """,
)


def _spacing(x: Any) -> Any:
    toward = lx.select_n(
        lx.lt(x, lx.zeros_like(x)), lx.full_like(x, np.inf), lx.full_like(x, -np.inf)
    )
    return lx.sub(lrb.nextafter(x, toward), x)


spacing = elementwise(
    "spacing",
    np.spacing,
    _spacing,
    """The distance from ``x`` to the next floating-point value away from zero (negative
    for negative ``x``; ``spacing(-0.0)`` is the smallest positive subnormal, as NumPy).

    Its derivative is 0.

    >>> import functrace.numpy as fnp
    >>> bool(fnp.spacing(1.0) == fnp.finfo(float).eps)
    True
    """,
)

# ---------------------------------------------------------------------------
# i0
# ---------------------------------------------------------------------------


def _i0(x: Any) -> Any:
    """``I0(x) = exp(|x|) i0e(x)`` of a float ``x`` (``lax.bessel_i0e``)."""
    return lx.mul(lx.exp(lx.abs(x)), bessel_i0e(x))


@numpy_path(np.i0)
def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0, elementwise (integers
    and bools give float64; complex input is refused, as NumPy).

    ``exp(|x|) * lax.bessel_i0e(x)``; differentiable (``i0'`` is ``i1``, through
    ``lax.bessel_i1e``, as JAX).

    >>> import functrace.numpy as fnp
    >>> fnp.i0([0.0, 1.0])
    array([1.        , 1.26606588])
    """
    x = asarray_or_tracer(x, "i0")
    aval = core.get_aval(x)
    if aval.dtype.kind not in "biuf":
        raise TypeError(f"i0: expected a real array, got {aval.dtype.name}.")
    return _i0(cast(x, aval.dtype if aval.dtype.kind == "f" else _FLOAT64))


__all__ = [
    "corrcoef",
    "cov",
    "ediff1d",
    "frexp",
    "gcd",
    "i0",
    "lcm",
    "ldexp",
    "nancumprod",
    "nancumsum",
    "nanprod",
    "nanstd",
    "nanvar",
    "nextafter",
    "spacing",
    "trapezoid",
    "unwrap",
]
