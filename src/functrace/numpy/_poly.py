"""Polynomials of functrace.numpy, as NumPy's legacy ``numpy.polyval`` family:
coefficient arrays with the highest power first. ``polyval``, ``polyfit``, ``polyadd``,
``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``poly``, ``roots`` and
``vander``.

On plain NumPy inputs each function calls NumPy directly; on tracers each is a composite
of lax/functrace.numpy operations, so all of them (but ``roots``) trace, batch, jit and
differentiate.

Decisions:

* ``polyval`` is Horner's rule as NumPy evaluates it (``y = y * x + p[i]``, from
  ``zeros_like(x)``), unrolled; past 64 coefficients, a ``lax.scan`` over them.
* ``polyfit`` solves its scaled least-squares problem by the SVD (as NumPy's ``lstsq``).
  On tracers, ``full=True`` returns the residual sum of squares even where the rank is
  deficient (NumPy returns an empty array there; a traced rank cannot decide a shape), and
  no ``RankWarning`` is issued.
* ``polydiv`` on tracers returns the remainder at the dividend's length (its leading
  ``len(u) - len(v) + 1`` entries exactly 0), as ``jax.numpy.polydiv``; NumPy (eager
  inputs) strips the leading near-zero entries, which needs the values.
  ``trim_leading_zeros=True`` (JAX's keyword, for ``polymul`` and ``polydiv``) strips
  with NumPy's rule when the values are concrete.
* ``poly`` of a square matrix and ``roots`` need general (complex) eigenvalues, which
  functrace's lax does not have: both work on NumPy inputs and raise on tracers.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax import linalg as ll
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.lax.control_flow import scan
from functrace.numpy._convolve import convolve
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    concrete_array,
    concrete_int,
    slice_along,
)
from functrace.numpy._creation import zeros_like
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._joining import concatenate
from functrace.numpy._linalg import matmul
from functrace.numpy._math import (
    add,
    greater,
    multiply,
    sqrt,
    subtract,
    true_divide,
)
from functrace.numpy._reductions import max as _max
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import atleast_1d, flip, reshape, transpose

_FLOAT64 = np.dtype(np.float64)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _rows(x: Any, start: int, stop: int) -> Any:
    """``x[start:stop]`` along the first axis."""
    return slice_along(x, start, stop, 0)


def _row(x: Any, i: int) -> Any:
    return ls.reshape(_rows(x, i, i + 1), _shape(x)[1:])


def _int_arg(fname: str, value: Any, what: str) -> int:
    if isinstance(value, Tracer):  # a concrete tracer works; an abstract one explains
        return concrete_int(fname, value, what)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: expected an integer {what}, got {value!r}.") from None


def _nonneg_order(fname: str, m: Any) -> int:
    m = _int_arg(fname, m, "order m")
    if m < 0:
        raise ValueError(f"{fname}: expected an order m >= 0, got {m}.")
    return m


def _coefficients(fname: str, p: Any) -> Any:
    p = asarray_or_tracer(p, fname)
    if core.get_aval(p).ndim == 0:
        raise ValueError(
            f"{fname}: expected a 1-d array of coefficients (highest power first), got a "
            f"scalar. Pass e.g. [1.0, 0.0, -2.0] for x**2 - 2."
        )
    return p


def _zero_rows(n: int, like: Any) -> Any:
    return np.zeros((n, *_shape(like)[1:]), _dtype(like))


# ---------------------------------------------------------------------------
# polyval
# ---------------------------------------------------------------------------

_UNROLLED = 64  # longer coefficient arrays are evaluated by a scan


@numpy_path(lambda p, x, *, unroll=16: np.polyval(p, x), promote_args=(0, 1))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's
    rule: ``p[0] * x**(n-1) + ... + p[n-1]``. ``unroll`` (JAX's keyword) is accepted and
    ignored.

    >>> import functrace.numpy as fnp
    >>> fnp.polyval([1.0, 0.0, -2.0], [0.0, 2.0])
    array([-2.,  2.])
    """
    p = _coefficients("polyval", p)
    x = asarray_or_tracer(x, "polyval")
    if type(x) in (bool, int, float, complex):
        x = np.asarray(x)  # as numpy.asanyarray: a strong 0-d array
    y = zeros_like(x)
    n = _shape(p)[0]
    if n <= _UNROLLED:
        for i in range(n):
            y = add(multiply(y, x), _row(p, i))
        return y
    y = add(multiply(y, x), _row(p, 0))  # the dtype and shape of every later step
    y_aval = core.get_aval(y)

    def step(acc: Any, c: Any) -> tuple[Any, None]:
        return cast(add(multiply(acc, x), c), y_aval.dtype), None

    return scan(step, y, cast(_rows(p, 1, n), y_aval.dtype))[0]


# ---------------------------------------------------------------------------
# polyadd, polysub, polymul, polydiv
# ---------------------------------------------------------------------------


def _aligned(fname: str, a1: Any, a2: Any) -> tuple[Any, Any]:
    """``a1``, ``a2`` (at least 1-d) padded with leading zeros to one length."""
    a1 = atleast_1d(asarray_or_tracer(a1, fname))
    a2 = atleast_1d(asarray_or_tracer(a2, fname))
    d = _shape(a2)[0] - _shape(a1)[0]
    if d > 0:
        a1 = concatenate([_zero_rows(d, a1), a1])
    elif d < 0:
        a2 = concatenate([_zero_rows(-d, a2), a2])
    return a1, a2


@numpy_path(np.polyadd)
def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter padded with leading zeros).

    >>> import functrace.numpy as fnp
    >>> fnp.polyadd([1, 2], [1, 2, 3])
    array([1, 3, 5])
    """
    return add(*_aligned("polyadd", a1, a2))


@numpy_path(np.polysub)
def polysub(a1: Any, a2: Any) -> Any:
    """The difference ``a1 - a2`` of two polynomials.

    >>> import functrace.numpy as fnp
    >>> fnp.polysub([1.0, 2.0, 3.0], [1.0, 1.0])
    array([1., 1., 2.])
    """
    return subtract(*_aligned("polysub", a1, a2))


def _trim_front(fname: str, a: Any) -> Any:
    """``a`` without its leading zeros (one zero kept if all are), for concrete ``a``."""
    v = concrete_array(fname, a, "coefficients to trim (trim_leading_zeros=True)")
    nz = np.flatnonzero(v)
    start = int(nz[0]) if nz.size else max(v.shape[0] - 1, 0)
    return _rows(a, start, v.shape[0]) if isinstance(a, Tracer) else np.asarray(a)[start:]


def _np_polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    if trim_leading_zeros:
        a1, a2 = np.trim_zeros(np.atleast_1d(a1), "f"), np.trim_zeros(np.atleast_1d(a2), "f")
    return np.polymul(a1, a2)


@numpy_path(_np_polymul)
def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials: the convolution of their coefficients.

    ``trim_leading_zeros`` (JAX's keyword) drops leading zero coefficients first; on
    tracers it needs concrete values.

    >>> import functrace.numpy as fnp
    >>> fnp.polymul([1.0, 2.0], [1.0, -2.0])
    array([ 1.,  0., -4.])
    """
    a1 = atleast_1d(asarray_or_tracer(a1, "polymul"))
    a2 = atleast_1d(asarray_or_tracer(a2, "polymul"))
    if trim_leading_zeros:
        a1, a2 = _trim_front("polymul", a1), _trim_front("polymul", a2)
    return convolve(a1, a2)


def _np_polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> Any:
    return np.polydiv(u, v)


@numpy_path(_np_polydiv)
def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of the polynomial division ``u / v``.

    NumPy inputs give NumPy's result (the remainder without leading near-zero entries).
    On tracers, as ``jax.numpy.polydiv``, the remainder keeps ``u``'s length (its first
    ``len(u) - len(v) + 1`` entries are 0) unless ``trim_leading_zeros``, which strips
    them as NumPy does and then needs concrete values.

    >>> import functrace.numpy as fnp
    >>> fnp.polydiv([1.0, 3.0, 3.0], [1.0, 1.0])
    (array([1., 2.]), array([1.]))
    """
    u = atleast_1d(asarray_or_tracer(u, "polydiv"))
    v = atleast_1d(asarray_or_tracer(v, "polydiv"))
    u = add(u, 0.0)  # floats, as NumPy
    v = add(v, 0.0)
    dt = np.result_type(_dtype(u), _dtype(v))
    u, v = cast(u, dt), cast(v, dt)
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = true_divide(1.0, _row(v, 0))
    quotient = []
    r = u
    for k in range(m - n + 1):
        d = multiply(scale, _row(r, k))
        quotient.append(reshape(d, (1,)))
        shifted = concatenate([np.zeros(k, dt), v, np.zeros(m - n - k, dt)])
        r = subtract(r, multiply(d, shifted))
        r = concatenate([np.zeros(k + 1, dt), _rows(r, k + 1, m + 1)])  # exact zeros
    q = concatenate(quotient) if quotient else np.zeros(1, dt)
    if trim_leading_zeros:
        rv = concrete_array("polydiv", r, "a remainder to trim (trim_leading_zeros=True)")
        start = 0
        while start < rv.shape[0] - 1 and np.allclose(rv[start], 0, rtol=1e-14):
            start += 1
        r = _rows(r, start, rv.shape[0])
    return q, r


# ---------------------------------------------------------------------------
# polyder, polyint
# ---------------------------------------------------------------------------


@numpy_path(lambda p, m=1: np.polyder(p, m))
def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of the polynomial ``p``: each coefficient times its power,
    ``m`` times (an empty array once the degree is exhausted).

    >>> import functrace.numpy as fnp
    >>> fnp.polyder([1, 2, 3, 4])
    array([3, 4, 3])
    """
    m = _nonneg_order("polyder", m)
    p = _coefficients("polyder", p)
    for _ in range(m):
        n = _shape(p)[0] - 1
        if n < 0:
            break
        p = multiply(_rows(p, 0, n), np.arange(n, 0, -1))
    return p


def _np_polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    return np.polyint(p, m, k)


@numpy_path(_np_polyint)
def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of the polynomial ``p``, with the integration constants
    ``k`` (a scalar for all orders, or one per order, the first used first; 0 by default).

    >>> import functrace.numpy as fnp
    >>> fnp.polyint([3.0, 2.0, 1.0], k=5.0)
    array([1., 1., 1., 5.])
    """
    m = _nonneg_order("polyint", m)
    p = _coefficients("polyint", p)
    if m == 0:
        return p
    ks = atleast_1d(asarray_or_tracer(np.zeros(m) if k is None else k, "polyint"))
    nk = _shape(ks)[0]
    if core.get_aval(ks).ndim != 1 or (nk != 1 and nk < m):
        raise ValueError(
            f"polyint: expected k a scalar or a 1-d array of length 1 or >= m ({m}), got "
            f"shape {_shape(ks)}."
        )
    if nk == 1 and m > 1:
        ks = broadcast_to_shape(ks, (m,))
    for i in range(m):
        n = _shape(p)[0]
        p = concatenate([true_divide(p, np.arange(n, 0, -1)), _rows(ks, i, i + 1)])
    return p


# ---------------------------------------------------------------------------
# poly, roots, vander
# ---------------------------------------------------------------------------


def _no_eig(fname: str, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{fname}: expected NumPy values for {what}, got a tracer. This needs the "
        f"eigenvalues of a general matrix (complex in general), which functrace's lax does "
        f"not have: call {fname} on NumPy values outside jit/grad/vmap."
    )


@numpy_path(np.poly)
def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (leading 1) of the monic polynomial with the given roots; for a
    square matrix, of its characteristic polynomial (NumPy inputs only).

    >>> import functrace.numpy as fnp
    >>> fnp.poly([1.0, 2.0])
    array([ 1., -3.,  2.])
    """
    z = asarray_or_tracer(seq_of_zeros, "poly")
    aval = core.get_aval(z)
    if aval.ndim == 2 and aval.shape[0] == aval.shape[1] and aval.shape[0]:
        raise _no_eig("poly", "a matrix")
    if aval.ndim != 1:
        raise ValueError(
            f"poly: expected a 1-d array of roots or a non-empty square matrix, got shape "
            f"{aval.shape}."
        )
    if aval.dtype.kind == "c":
        raise NotImplementedError(
            "poly: expected real roots on a tracer, got complex ones. Complex roots work "
            "on NumPy inputs."
        )
    dt = aval.dtype if aval.dtype.kind == "f" else _FLOAT64
    z = cast(z, dt)
    if not aval.shape[0]:
        return 1.0  # as NumPy: the constant polynomial, a Python float
    a: Any = np.ones(1, dt)
    for i in range(aval.shape[0]):  # a(x) (x - z_i): a[j] - z_i a[j - 1]
        zi = _row(z, i)
        a = subtract(
            concatenate([a, np.zeros(1, dt)]), multiply(zi, concatenate([np.zeros(1, dt), a]))
        )
    return a


@numpy_path(np.roots)
def roots(p: Any) -> Any:
    """The roots of the polynomial ``p`` (highest power first), as the eigenvalues of its
    companion matrix: NumPy inputs only (complex in general).

    >>> import functrace.numpy as fnp
    >>> fnp.roots([1.0, -3.0, 2.0])
    array([2., 1.])
    """
    raise _no_eig("roots", "the coefficients")


def _np_vander(x: Any, N: Any = None, increasing: bool = False) -> Any:
    return np.vander(x, N, increasing)


@numpy_path(_np_vander)
def vander(x: Any, N: Any = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of the 1-d ``x``: columns ``x**(N-1), ..., x, 1`` (the
    reverse if ``increasing``), as running products (NumPy's values and dtype: at least
    int64).

    >>> import functrace.numpy as fnp
    >>> fnp.vander([1, 2, 3], 3)
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    x = asarray_or_tracer(x, "vander")
    aval = core.get_aval(x)
    if aval.ndim != 1:
        raise ValueError(f"vander: expected a 1-d array, got shape {aval.shape}.")
    n = aval.shape[0]
    cols = n if N is None else _int_arg("vander", N, "number of columns N")
    if cols < 0:
        raise ValueError(f"vander: expected N >= 0, got {cols}.")
    dt = np.promote_types(aval.dtype, np.int64)
    if cols == 0:
        return np.empty((n, 0), dt)
    x = cast(x, dt)
    parts = [np.ones((n, 1), dt)]
    if cols > 1:
        cols_x = ls.broadcast_in_dim(x, (n, cols - 1), (0,))
        parts.append(lr.cumprod(cols_x, 1))
    v = concatenate(parts, axis=1) if len(parts) > 1 else broadcast_to_shape(parts[0], (n, 1))
    return v if increasing else flip(v, 1)


# ---------------------------------------------------------------------------
# polyfit
# ---------------------------------------------------------------------------


def _np_polyfit(
    x: Any,
    y: Any,
    deg: Any,
    rcond: Any = None,
    full: bool = False,
    w: Any = None,
    cov: Any = False,
) -> Any:
    return np.polyfit(x, y, deg, rcond, full, w, cov)  # type: ignore[call-overload]


@numpy_path(_np_polyfit)
def polyfit(
    x: Any,
    y: Any,
    deg: Any,
    rcond: Any = None,
    full: bool = False,
    w: Any = None,
    cov: Any = False,
) -> Any:
    """Least-squares polynomial fit of degree ``deg`` to the points ``(x, y)`` (``y`` may
    hold one data set per column): the coefficients, highest power first.

    As NumPy: the Vandermonde columns are scaled to unit norm and solved by the SVD with
    singular values below ``rcond * max`` (``len(x) * eps`` by default) dropped; ``w``
    weights the residuals; ``full=True`` also returns ``(residuals, rank,
    singular_values, rcond)``; ``cov=True`` (or ``"unscaled"``) also the covariance of the
    coefficients.

    NOTE: the derivative assumes a rank that does not change nearby.

    >>> import functrace.numpy as fnp
    >>> fnp.polyfit([0.0, 1.0, 2.0], [1.0, 3.0, 5.0], 1).round(6)
    array([2., 1.])
    """
    order = _int_arg("polyfit", deg, "degree") + 1
    if order < 1:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}.")
    x = asarray_or_tracer(x, "polyfit")
    y = asarray_or_tracer(y, "polyfit")
    xs, ys = _shape(x), _shape(y)
    if len(xs) != 1 or not xs[0]:
        raise ValueError(f"polyfit: expected a non-empty 1-d x, got shape {xs}.")
    if len(ys) not in (1, 2) or ys[0] != xs[0]:
        raise ValueError(
            f"polyfit: expected y of shape ({xs[0]},) or ({xs[0]}, K) (one value per x), got {ys}."
        )
    npts = xs[0]
    lhs = vander(add(x, 0.0), order)
    dt = _dtype(lhs)
    rhs = cast(add(y, 0.0), np.result_type(dt, _dtype(y)))
    if rcond is None:
        rcond = npts * float(np.finfo(dt).eps)
    if w is not None:
        w = add(asarray_or_tracer(w, "polyfit"), 0.0)
        if _shape(w) != (npts,):
            raise ValueError(f"polyfit: expected w of shape ({npts},), got {_shape(w)}.")
        lhs = multiply(lhs, reshape(w, (npts, 1)))
        rhs = multiply(rhs, w if len(ys) == 1 else reshape(w, (npts, 1)))
    scale = sqrt(_sum(multiply(lhs, lhs), axis=0))
    lhs = true_divide(lhs, scale)
    u, s, vt = ll.svd(lhs, full_matrices=False)
    large = greater(s, multiply(rcond, _max(s)))
    # NOTE: the double where keeps the gradient finite where singular values are dropped
    s_inv = where(large, true_divide(1.0, where(large, s, 1.0)), 0.0)
    b = rhs if len(ys) == 2 else reshape(rhs, (npts, 1))
    uty = matmul(transpose(u), b)
    c = matmul(transpose(vt), multiply(reshape(s_inv, (-1, 1)), uty))  # (order, K)
    resid = subtract(matmul(lhs, c), b)
    resids = _sum(multiply(resid, resid), axis=0)
    c = true_divide(c, reshape(scale, (order, 1)))
    if len(ys) == 1:
        c = reshape(c, (order,))
    if full:
        rank = cast(_sum(large), np.dtype(np.int32))
        return c, resids, rank, s, np.float64(rcond)
    if not cov:
        return c
    # inv(lhs^T lhs) = V diag(1 / s^2) V^T, then undo the column scaling
    v_base = matmul(transpose(vt), multiply(reshape(multiply(s_inv, s_inv), (-1, 1)), vt))
    v_base = true_divide(v_base, multiply(reshape(scale, (-1, 1)), reshape(scale, (1, -1))))
    if cov == "unscaled":
        fac: Any = 1.0
    else:
        if npts <= order:
            raise ValueError(
                f"polyfit: expected more data points ({npts}) than coefficients ({order}) to "
                f"scale the covariance, got too few. Pass cov='unscaled'."
            )
        fac = true_divide(resids, npts - order)
    if len(ys) == 1:
        return c, multiply(v_base, fac)
    return c, multiply(reshape(v_base, (order, order, 1)), fac)


__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
    "vander",
]
