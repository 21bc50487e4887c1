"""The statistics, polynomial and remaining numeric functions of functrace.numpy beyond
what their op-table rows (tests/op_rows_numpy6.py) check: every quantile method and
operand type against NumPy (values and result dtypes) on the traced path, NaN handling,
all-NaN and empty slices, axis tuples, error messages, polyfit's options, the JAX
behaviours kept on purpose (values recorded from jax.numpy 0.10.2 with x64 are written
out below), and compositions such as jit(vmap(grad(quantile))) against loops.

The traced path is exercised cheaply through ``make_jaxpr`` + ``eval_jaxpr`` (every
function is traced exactly as under ``jit``); a few cases also compile with ``jit``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import ConcretizationError
from functrace.ir import eval_jaxpr

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 5))
XN = X.copy()
XN[0, 1] = np.nan
XN[2, :] = np.nan

METHODS = [
    "linear",
    "lower",
    "higher",
    "midpoint",
    "nearest",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
]


def staged(f: Any, *args: Any) -> Any:
    """``f(*args)`` through its traced path: staged to a jaxpr, then evaluated."""
    closed = ft.make_jaxpr(f)(*args)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    return outs[0] if len(outs) == 1 else tuple(outs)


def same(actual: Any, expected: Any, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, e)


def quiet(f: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


# ---------------------------------------------------------------------------
# quantile family: values and dtypes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_quantile_every_method_every_q_position(method: str) -> None:
    # q on a fine grid hits the method's boundaries (integral virtual indices, ties)
    for n in (1, 2, 3, 4, 7):
        x = RNG.normal(size=(2, n))
        q = np.concatenate([np.linspace(0, 1, 4 * n + 1), [0.13, 0.77]])
        out = staged(lambda x, q: fnp.quantile(x, q, axis=1, method=method), x, q)
        same(out, np.quantile(x, q, axis=1, method=method))


_A_TYPES = {
    "f32": np.array([3, 1, 2, 4.0], np.float32),
    "f64": np.array([3, 1, 2, 4.0]),
    "i64": np.array([3, 1, 2, 4]),
    "i32": np.array([3, 1, 2, 4], np.int32),
    "u8": np.array([3, 1, 2, 4], np.uint8),
}
_Q_TYPES = {
    "py_float": 0.3,
    "py_int": 1,
    "f64_scalar": np.float64(0.3),
    "f32_scalar": np.float32(0.3),
    "f64_array": np.array([0.3, 0.9]),
    "f32_array": np.array([0.3, 0.9], np.float32),
}


@pytest.mark.parametrize("method", ["linear", "lower", "midpoint", "hazen", "inverted_cdf"])
@pytest.mark.parametrize("a_name", list(_A_TYPES))
def test_quantile_result_dtypes_follow_numpy(method: str, a_name: str) -> None:
    a = _A_TYPES[a_name]
    for q in _Q_TYPES.values():
        expected = np.quantile(a, q, method=method)
        same(staged(lambda a, q=q: fnp.quantile(a, q, method=method), a), expected, rtol=1e-6)
        if isinstance(q, np.ndarray):  # a traced q keeps its type
            out = staged(lambda a, q: fnp.quantile(a, q, method=method), a, q)
            same(out, expected, rtol=1e-6)


def test_quantile_bool_input() -> None:
    b = np.array([True, False, True])
    out = staged(lambda b: fnp.quantile(b, 0.5, method="lower"), b)
    same(out, np.quantile(b, 0.5, method="lower"))
    with pytest.raises(TypeError, match="quantile: expected an array NumPy's method 'linear'"):
        staged(lambda b: fnp.quantile(b, 0.5), b)


@pytest.mark.parametrize(
    "kw",
    [{}, {"axis": 0}, {"axis": (0, 2)}, {"axis": (2, 0), "keepdims": True}, {"keepdims": True}],
    ids=str,
)
@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantile_axes_and_keepdims(name: str, kw: dict) -> None:
    x = RNG.normal(size=(2, 3, 4))
    x[0, 1, 2] = np.nan
    q = [0.2, 0.5] if "quantile" in name else [20.0, 50.0]
    expected = quiet(getattr(np, name), x, q, **kw)
    same(fnp.__dict__[name](x, q, **kw), expected)
    same(staged(lambda x: getattr(fnp, name)(x, q, **kw), x), expected)


def test_nan_handling_and_all_nan_slices() -> None:
    q = np.array([0.1, 0.5, 1.0])
    same(staged(lambda x: fnp.quantile(x, q, axis=1), XN), np.quantile(XN, q, axis=1))
    for method in ("linear", "lower", "nearest", "midpoint", "weibull"):
        expected = quiet(np.nanquantile, XN, q, axis=1, method=method)
        same(
            staged(lambda x, method=method: fnp.nanquantile(x, q, axis=1, method=method), XN),
            expected,
        )
    same(staged(lambda x: fnp.nanmedian(x, axis=1), XN), quiet(np.nanmedian, XN, axis=1))
    same(staged(lambda x: fnp.nanmedian(x), XN), quiet(np.nanmedian, XN))
    # integers: nanmedian is median (float64)
    same(staged(fnp.nanmedian, np.arange(6)), np.nanmedian(np.arange(6)))


def test_empty_slices() -> None:
    empty = np.zeros((2, 0))
    same(staged(lambda x: fnp.nanquantile(x, 0.5, axis=1), empty), np.array([np.nan, np.nan]))
    same(staged(lambda x: fnp.nanmedian(x, axis=1), empty), quiet(np.nanmedian, empty, axis=1))
    same(staged(lambda x: fnp.quantile(x, 0.5, axis=0), empty), np.quantile(empty, 0.5, axis=0))
    with pytest.raises(ValueError, match="quantile: expected a non-empty array"):
        staged(lambda x: fnp.quantile(x, 0.5, axis=1), empty)


def test_q_out_of_range() -> None:
    with pytest.raises(ValueError, match="Quantiles must be in the range"):  # NumPy's own
        fnp.quantile(X, 1.5)
    with pytest.raises(ValueError, match=r"quantile: expected q in \[0, 1\], got 1.5"):
        staged(lambda x: fnp.quantile(x, 1.5), X)
    with pytest.raises(ValueError, match=r"percentile: expected q in \[0, 100\]"):
        staged(lambda x: fnp.percentile(x, [50, 120]), X)
    with pytest.raises(ValueError, match=r"nanquantile: expected q in \[0, 1\], got nan"):
        staged(lambda x: fnp.nanquantile(x, np.nan), X)
    # a traced q cannot raise: NaN where it is out of range (JAX clamps instead)
    q = np.array([-0.1, 0.5, 1.2, np.nan])
    out = ft.jit(lambda x, q: fnp.quantile(x, q))(X, q)
    same(out, np.array([np.nan, np.quantile(X, 0.5), np.nan, np.nan]))


def test_quantile_argument_errors() -> None:
    with pytest.raises(ValueError, match="quantile: expected method to be one of"):
        staged(lambda x: fnp.quantile(x, 0.5, method="middle"), X)
    with pytest.raises(NotImplementedError, match="weights=None on traced"):
        staged(lambda x: fnp.quantile(x, 0.5, method="inverted_cdf", weights=x), X)
    with pytest.raises(TypeError, match="quantile: expected out=None"):
        staged(lambda x: fnp.quantile(x, 0.5, out=np.empty(())), X)
    with pytest.raises(np.exceptions.AxisError):
        staged(lambda x: fnp.quantile(x, 0.5, axis=2), X)
    # weights work on NumPy inputs (NumPy's)
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    same(
        fnp.quantile(X[0], 0.5, method="inverted_cdf", weights=w),
        np.quantile(X[0], 0.5, method="inverted_cdf", weights=w),
    )


def test_quantile_gradients_as_jax() -> None:
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    # jax.grad of jnp.quantile: 8.0 in q at 0.3 (x[2] - x[1] times n - 1), and the picked
    # elements' weights in x
    same(ft.grad(lambda q: fnp.quantile(x, q))(0.3), np.float64(8.0))
    same(ft.grad(lambda a: fnp.quantile(a, 0.25))(x), np.array([0.0, 1, 0, 0, 0]))
    g = ft.grad(lambda a: fnp.quantile(a, 0.3, method="midpoint"))(x)
    same(g, np.array([0.0, 0.5, 0.5, 0, 0]))
    same(ft.grad(lambda q: fnp.percentile(x, q))(30.0), np.float64(0.08))
    # jax.grad(jnp.nanmedian)([1, nan, 4, 3]) == [0, 0, 0, 1]
    same(ft.grad(fnp.nanmedian)(np.array([1.0, np.nan, 4.0, 3.0])), np.array([0.0, 0, 0, 1]))
    ft.check_grads(lambda a: fnp.nanquantile(a, [0.3, 0.8], axis=1), (XN[:2],), order=2)


def test_quantile_compositions_against_loops() -> None:
    xs = RNG.normal(size=(4, 6))
    qs = RNG.uniform(0.05, 0.95, size=4)

    def f(q: Any, x: Any) -> Any:
        return fnp.quantile(x * x, q, method="hazen")

    g = ft.jit(ft.vmap(ft.grad(f, argnums=(0, 1))))(qs, xs)
    for i in range(4):
        gq, gx = ft.grad(f, argnums=(0, 1))(qs[i], xs[i])
        same(g[0][i], gq, rtol=1e-10)
        same(g[1][i], gx, rtol=1e-10)
    h = ft.vmap(lambda x: fnp.nanpercentile(x, [25.0, 75.0]), in_axes=1)(XN)
    same(h, np.stack([quiet(np.nanpercentile, XN[:, j], [25.0, 75.0]) for j in range(5)]))


# ---------------------------------------------------------------------------
# nanargmax, nanargmin, nancumsum, nancumprod, nanprod, nanvar, nanstd
# ---------------------------------------------------------------------------


def test_nanargmax_all_nan_slices_give_minus_one() -> None:
    # jnp.nanargmax on all-NaN slices gives -1; NumPy raises. Both paths give -1 here.
    expected = np.array([np.nanargmax(XN[0]), np.nanargmax(XN[1]), -1])
    same(fnp.nanargmin(-XN, axis=1), expected)
    same(fnp.nanargmax(XN, axis=1), expected)
    same(ft.jit(lambda x: fnp.nanargmax(x, axis=1))(XN), expected)
    same(staged(lambda x: fnp.nanargmax(x, axis=1, keepdims=True), XN), expected[:, None])
    same(fnp.nanargmax(np.full(3, np.nan)), np.int64(-1))
    same(staged(fnp.nanargmin, np.full((2, 2), np.nan)), np.int64(-1))
    # NaN-free and integer inputs: NumPy's
    same(staged(lambda x: fnp.nanargmin(x, axis=0), X), np.nanargmin(X, axis=0))
    same(staged(fnp.nanargmax, np.array([3, 7, 7])), np.int64(1))
    with pytest.raises(ValueError):
        fnp.nanargmax(np.zeros(0))
    with pytest.raises(ValueError, match="nanargmax: expected a non-empty array"):
        staged(fnp.nanargmax, np.zeros(0))


def test_nan_cumulative_and_product() -> None:
    same(staged(lambda x: fnp.nancumsum(x, axis=1), XN), np.nancumsum(XN, axis=1))
    same(staged(fnp.nancumprod, XN), np.nancumprod(XN))
    i32 = np.array([[1, 2], [3, 4]], np.int32)
    same(staged(lambda x: fnp.nancumsum(x, 0), i32), np.nancumsum(i32, 0))
    same(staged(lambda x: fnp.nanprod(x, axis=1), XN), np.nanprod(XN, axis=1))
    same(staged(lambda x: fnp.nanprod(x, initial=2.0), XN), np.nanprod(XN, initial=2.0))
    same(staged(lambda x: fnp.nanprod(x, dtype=np.float32), i32), np.nanprod(i32, dtype="f4"))
    g = ft.grad(lambda x: fnp.sum(fnp.nancumsum(x)))(np.array([1.0, np.nan, 2.0]))
    same(g, np.array([3.0, 0.0, 1.0]))


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_nanstd(name: str) -> None:
    f, ref = getattr(fnp, name), getattr(np, name)
    for kw in ({}, {"axis": 1}, {"axis": 0, "ddof": 1}, {"axis": 1, "ddof": 4, "keepdims": True}):
        same(staged(lambda x, kw=kw: f(x, **kw), XN), quiet(ref, XN, **kw))
    mask = RNG.random(X.shape) < 0.7
    same(staged(lambda x: f(x, axis=1, where=mask), XN), quiet(ref, XN, axis=1, where=mask))
    same(staged(lambda x: f(x, correction=1), XN), quiet(ref, XN, correction=1))
    ints = np.arange(6).reshape(2, 3)
    same(staged(lambda x: f(x, axis=1), ints), ref(ints, axis=1))
    same(staged(lambda x: f(x, axis=0), X.astype(np.float32)), ref(X.astype("f4"), axis=0), 1e-6)
    with pytest.raises(NotImplementedError, match="mean=None"):
        staged(lambda x: f(x, mean=np.zeros(())), X)


def test_nanvar_gradient_as_jax() -> None:
    # jax.grad(jnp.nanvar)([1, nan, 4, 3]) == [-10/9, 0, 8/9, 2/9]
    g = ft.grad(fnp.nanvar)(np.array([1.0, np.nan, 4.0, 3.0]))
    same(g, np.array([-10 / 9, 0.0, 8 / 9, 2 / 9]), rtol=1e-12)
    ft.check_grads(lambda x: fnp.nanstd(x, axis=1, ddof=1), (XN[:2],), order=2)


# ---------------------------------------------------------------------------
# cov, corrcoef
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"rowvar": False},
        {"bias": True},
        {"ddof": 3},
        {"fweights": np.array([1, 2, 1, 3, 1])},
        {"aweights": np.array([0.5, 2.0, 1.0, 3.0, 1.0])},
        {"fweights": np.array([1, 2, 1, 3, 1]), "aweights": np.linspace(1, 2, 5), "ddof": 2},
        {"dtype": np.float32},
    ],
    ids=str,
)
def test_cov_matches_numpy(kw: dict) -> None:
    m = X if kw.get("rowvar", True) is not False else X.T
    same(staged(lambda m: fnp.cov(m, **kw), m), np.cov(m, **kw), rtol=1e-6)


def test_cov_and_corrcoef_shapes() -> None:
    same(staged(fnp.cov, X[0]), np.cov(X[0]))  # one variable: 0-d
    same(staged(fnp.cov, X[0], X[1]), np.cov(X[0], X[1]))
    same(staged(fnp.cov, X.astype(np.int32)), np.cov(X.astype(np.int32)))
    same(staged(lambda m: fnp.cov(m, ddof=5), X), quiet(np.cov, X, ddof=5))  # divides by 0
    same(staged(fnp.corrcoef, X), np.corrcoef(X))
    same(staged(fnp.corrcoef, X[0]), np.asarray(np.corrcoef(X[0])))
    same(
        staged(lambda a, b: fnp.corrcoef(a, b, rowvar=False), X.T, X[:1].T),
        np.corrcoef(X.T, X[:1].T, rowvar=False),
    )
    # jax.grad of sum(jnp.corrcoef(x)) at this x
    x = np.array([[1.0, 2.0, 0.0, 4.0], [3.0, 1.0, 2.0, 2.0]])
    expected = [[0.43711218, -0.46443169, -0.09561829, 0.1229378]]
    expected += [[-0.11952286, -0.11952286, -0.83666003, 1.07570575]]
    same(ft.grad(lambda x: fnp.sum(fnp.corrcoef(x)))(x), np.array(expected), rtol=1e-7)


def test_cov_errors() -> None:
    with pytest.raises(ValueError, match="cov: expected an integer ddof, got 1.5"):
        staged(lambda m: fnp.cov(m, ddof=1.5), X)
    with pytest.raises(ValueError, match="cov: expected an array of at most 2 dimensions"):
        staged(fnp.cov, np.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match="cov: expected integral fweights"):
        staged(lambda m: fnp.cov(m, fweights=np.array([1, 2, 1.5, 1, 1])), X)
    with pytest.raises(ValueError, match="cov: expected non-negative aweights"):
        staged(lambda m: fnp.cov(m, aweights=np.array([1, 2, -1.0, 1, 1])), X)
    with pytest.raises(ValueError, match=r"cov: expected fweights with one entry per obs"):
        staged(lambda m: fnp.cov(m, fweights=np.array([1, 2])), X)


# ---------------------------------------------------------------------------
# trapezoid, unwrap, ediff1d
# ---------------------------------------------------------------------------


def test_trapezoid() -> None:
    xs = np.array([0.0, 0.5, 1.5, 2.0, 4.0])
    same(staged(fnp.trapezoid, X), np.trapezoid(X))
    same(staged(lambda y, x: fnp.trapezoid(y, x), X, xs), np.trapezoid(X, xs))
    same(staged(lambda y: fnp.trapezoid(y, X, axis=0), X), np.trapezoid(X, X, axis=0))
    same(staged(lambda y: fnp.trapezoid(y, dx=0.25, axis=0), X), np.trapezoid(X, dx=0.25, axis=0))
    same(staged(fnp.trapezoid, np.arange(4)), np.trapezoid(np.arange(4)))
    same(staged(fnp.trapezoid, np.zeros((2, 0))), np.trapezoid(np.zeros((2, 0))))
    same(staged(fnp.trapezoid, np.ones(1, np.float32)), np.trapezoid(np.ones(1, np.float32)))
    with pytest.raises(ValueError, match="trapezoid: expected x of length 5"):
        staged(lambda y: fnp.trapezoid(y, np.arange(3.0)), X)
    # jax.grad of trapezoid(x**2, dx=0.5) at [1, 2, 0, 4]
    g = ft.grad(lambda x: fnp.trapezoid(x**2, dx=0.5))(np.array([1.0, 2.0, 0.0, 4.0]))
    same(g, np.array([0.5, 2.0, 0.0, 2.0]))


def test_unwrap() -> None:
    p = np.cumsum(RNG.normal(size=(3, 9)) * 3, axis=1)
    for kw in ({}, {"discont": 4.0}, {"period": 5.0}, {"axis": 0, "period": 2.0}):
        same(staged(lambda p, kw=kw: fnp.unwrap(p, **kw), p), np.unwrap(p, **kw))
    ints = np.array([0, 5, 10, 2, 9, 30])
    for period in (6, 7, 6.5):
        same(
            staged(lambda p, period=period: fnp.unwrap(p, period=period), ints),
            np.unwrap(ints, period=period),
        )
    f32 = p.astype(np.float32)
    same(staged(fnp.unwrap, f32), np.unwrap(f32), rtol=1e-6)
    same(staged(fnp.unwrap, np.zeros((2, 0))), np.unwrap(np.zeros((2, 0))))
    # the derivative is the identity (jax.grad of sum(unwrap(x)) == ones)
    same(ft.grad(lambda x: fnp.sum(fnp.unwrap(x)))(np.array([1.0, 5.0, 0.0, 4.0])), np.ones(4))


def test_ediff1d() -> None:
    same(staged(fnp.ediff1d, X), np.ediff1d(X))
    i8 = np.array([1, 5, 2], np.int8)
    kw = {"to_begin": [-1, 0], "to_end": 7}
    same(staged(lambda a: fnp.ediff1d(a, **kw), i8), np.ediff1d(i8, **kw))
    same(staged(fnp.ediff1d, np.zeros(1)), np.ediff1d(np.zeros(1)))
    with pytest.raises(TypeError, match="ediff1d: expected to_begin castable to int8"):
        staged(lambda a: fnp.ediff1d(a, to_begin=1.5), i8)


# ---------------------------------------------------------------------------
# gcd, lcm, ldexp, frexp, nextafter, spacing, i0
# ---------------------------------------------------------------------------


def test_gcd_lcm() -> None:
    a = np.array([12, -18, 0, 7, 0, 2**40, -(2**62)])
    b = np.array([8, 6, 5, 0, 0, 2**20 * 3, 6])
    for name in ("gcd", "lcm"):
        f, ref = getattr(fnp, name), getattr(np, name)
        same(ft.jit(f)(a, b), ref(a, b))
        same(
            staged(f, a.astype(np.int32) % 1000, np.int8(6)),
            ref(a.astype(np.int32) % 1000, np.int8(6)),
        )
        same(staged(lambda x, f=f: f(x, 4), a), ref(a, 4))
        same(ft.vmap(f)(a, b), ref(a, b))
    same(staged(fnp.lcm, np.array([100], np.int8), np.array([3], np.int8)), np.array([44], np.int8))
    with pytest.raises(TypeError, match="gcd: expected operand dtypes NumPy's gcd supports"):
        staged(fnp.gcd, np.array([1.0]), np.array([2.0]))


def test_ldexp_frexp() -> None:
    x = np.array([1e-300, 1.5, 5e-324, 1e300, 3.0, -2.0, 0.0, np.inf, np.nan])
    n = np.array([2000, 200, 2000, -2000, -1080, 1100, 5, 3, 1])
    same(staged(fnp.ldexp, x, n), quiet(np.ldexp, x, n), rtol=0, atol=0)
    same(staged(fnp.ldexp, np.arange(3), 2), np.ldexp(np.arange(3), 2))
    f32 = np.array([1.5, 1e-30, 3.0], np.float32)
    same(staged(fnp.ldexp, f32, np.array([120, 100, -140])), np.ldexp(f32, [120, 100, -140]))
    with pytest.raises(TypeError, match="ldexp: expected operand dtypes"):
        staged(fnp.ldexp, x, 2.0)
    v = np.array([3.0, 0.0, -0.75, np.inf, -np.inf, np.nan, 1e-310, 5e-324, -0.0, 1 - 2**-53])
    v = np.concatenate([v, 2.0 ** np.arange(-1074, 1024, 7), -RNG.uniform(0, 1e6, 20)])
    for arr in (v, v.astype(np.float32), v.astype(np.float16)):
        m, e = ft.jit(fnp.frexp)(arr)
        m_ref, e_ref = quiet(np.frexp, arr)
        same(m, m_ref, rtol=0, atol=0)
        same(e, e_ref)
    # derivatives as jax: d ldexp(x, 3) = 8, d frexp(12)[0] = 1/16
    same(ft.grad(lambda x: fnp.ldexp(x, 3))(1.5), np.float64(8.0))
    same(ft.grad(lambda x: fnp.frexp(x)[0])(12.0), np.float64(0.0625))


def test_nextafter_spacing() -> None:
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, np.finfo(float).max, 5e-324])
    for arr in (v, v.astype(np.float32)):
        same(staged(fnp.spacing, arr), quiet(np.spacing, arr), rtol=0, atol=0)
        same(staged(fnp.nextafter, arr, arr[::-1]), np.nextafter(arr, arr[::-1]), rtol=0, atol=0)
    same(staged(fnp.spacing, np.arange(3)), np.spacing(np.arange(3)))
    same(ft.grad(lambda x: fnp.nextafter(x, 2.0))(1.0), np.float64(1.0))
    same(ft.grad(fnp.spacing)(1.5), np.float64(0.0))


def test_i0_values_and_derivatives() -> None:
    from scipy import special

    x = np.concatenate([np.linspace(-40, 40, 161), [0.0, 19.999, 20.0, 20.001, 700.0, 712.0]])
    same(ft.jit(fnp.i0)(x), quiet(np.i0, x), rtol=3e-15)
    same(staged(fnp.i0, x.astype(np.float32)[:161]), np.i0(x.astype(np.float32)[:161]), 2e-6)
    same(staged(fnp.i0, np.arange(4)), np.i0(np.arange(4)))
    with pytest.raises(TypeError, match="i0: expected a real array, got complex128"):
        staged(fnp.i0, np.array([1j]))
    g = ft.vmap(ft.grad(fnp.i0))(x[:161])
    same(g, special.i1(x[:161]), rtol=1e-14, atol=1e-300)
    h = ft.vmap(ft.grad(ft.grad(fnp.i0)))(x[:161])  # i1' = i0 - i1 / x (i0 / 2 at 0)
    ref = np.where(
        x[:161] == 0,
        0.5,
        special.i0(x[:161]) - special.i1(x[:161]) / np.where(x[:161] == 0, 1, x[:161]),
    )
    same(h, ref, rtol=1e-13, atol=1e-300)
    # jax.grad(jnp.i0)(2.5)
    same(ft.grad(fnp.i0)(2.5), np.float64(2.516716245288698), rtol=1e-15)


# ---------------------------------------------------------------------------
# Polynomials
# ---------------------------------------------------------------------------


def test_polyval_and_arithmetic() -> None:
    p, x = RNG.normal(size=5), RNG.normal(size=(2, 3))
    same(staged(fnp.polyval, p, x), np.polyval(p, x))
    same(staged(lambda p: fnp.polyval(p, 2.0), p), np.polyval(p, 2.0))
    same(staged(fnp.polyval, np.arange(3), np.arange(4)), np.polyval(np.arange(3), np.arange(4)))
    same(staged(fnp.polyval, np.zeros(0), x), np.polyval(np.zeros(0), x))
    long_p = RNG.normal(size=100) * 0.5
    same(ft.jit(fnp.polyval)(long_p, x * 0.5), np.polyval(long_p, x * 0.5), rtol=1e-12)
    same(fnp.polyval(long_p, x * 0.5, unroll=4), np.polyval(long_p, x * 0.5))
    with pytest.raises(ValueError, match="polyval: expected a 1-d array of coefficients"):
        staged(lambda x: fnp.polyval(3.0, x), x)
    a, b = np.array([1, 2], np.int32), np.array([1.0, 2, 3])
    for name in ("polyadd", "polysub", "polymul"):
        f, ref = getattr(fnp, name), getattr(np, name)
        same(staged(f, a, b), ref(a, b))
        same(staged(f, b, a), ref(b, a))
        same(staged(f, p, np.float64(2.0)), ref(p, np.float64(2.0)))
    same(
        fnp.polymul([0.0, 1, 2], [0, 0, 1, 1], trim_leading_zeros=True),
        np.polymul([1.0, 2], [1, 1]),
    )
    same(
        ft.grad(lambda c: fnp.polymul(c, np.array([0.0, 1, 1]), trim_leading_zeros=True)[0])(
            np.array([0.0, 2.0])
        ),
        np.array([0.0, 1.0]),
    )


def test_polydiv_traced_remainder_keeps_the_length() -> None:
    u, v = np.array([2.0, 0.0, 1.0, 5.0]), np.array([1.0, 2.0, 1.0])
    q_ref, r_ref = np.polydiv(u, v)
    same(fnp.polydiv(u, v)[1], r_ref)  # NumPy inputs: NumPy's (stripped) remainder
    q, r = ft.jit(fnp.polydiv)(u, v)
    # as jnp.polydiv: ([2, -4], [0, 0, 7, 9])
    same(q, q_ref)
    same(r, np.array([0.0, 0.0, 7.0, 9.0]))
    q, r = ft.jit(fnp.polydiv)(np.array([1.0, 3, 3, 1]), np.array([1.0, 1]))
    same(q, np.array([1.0, 2.0, 1.0]))
    same(r, np.zeros(4))
    same(staged(fnp.polydiv, np.array([1, 2]), np.array([1, 2, 3]))[1], np.array([1.0, 2.0]))
    # trim_leading_zeros strips as NumPy when the values are known
    q, r = ft.vjp(lambda u: fnp.polydiv(u, v, trim_leading_zeros=True), u)[0]
    same(r, r_ref)
    with pytest.raises(ConcretizationError, match="polydiv: expected concrete"):
        ft.jit(lambda u: fnp.polydiv(u, v, trim_leading_zeros=True))(u)


def test_polyder_polyint_poly_vander() -> None:
    p = RNG.normal(size=5)
    for m in (0, 1, 2, 6):
        same(staged(lambda p, m=m: fnp.polyder(p, m), p), np.polyder(p, m))
        same(staged(lambda p, m=m: fnp.polyint(p, m), p), np.polyint(p, m))
    same(staged(lambda p: fnp.polyder(p), np.arange(4)), np.polyder(np.arange(4)))
    same(staged(lambda p: fnp.polyder(p), p.astype(np.float32)), np.polyder(p.astype(np.float32)))
    same(
        staged(lambda p, k: fnp.polyint(p, 3, k), p, np.array([1.0, 2, 3])),
        np.polyint(p, 3, [1, 2, 3]),
    )
    same(staged(lambda p: fnp.polyint(p, 2, 5.0), p), np.polyint(p, 2, 5.0))
    with pytest.raises(ValueError, match="polyder: expected an order m >= 0, got -1"):
        staged(lambda p: fnp.polyder(p, -1), p)
    with pytest.raises(ValueError, match="polyint: expected k a scalar or a 1-d array"):
        staged(lambda p: fnp.polyint(p, 3, [1.0, 2.0]), p)
    for roots in (p, np.array([1, 2], np.int8), p.astype(np.float32)):
        same(staged(fnp.poly, roots), np.poly(roots), rtol=1e-6)
    assert fnp.poly([]) == np.poly([]) == 1.0
    for x, kw in (
        (p, {}),
        (p, {"N": 3, "increasing": True}),
        (np.arange(4), {"N": 6}),
        (np.array([True, False]), {}),
        (p.astype(np.float32), {"N": 0}),
    ):
        same(staged(lambda x, kw=kw: fnp.vander(x, **kw), x), np.vander(x, **kw))
    with pytest.raises(ValueError, match="vander: expected a 1-d array, got shape"):
        staged(fnp.vander, X)


def test_roots_and_matrix_poly_need_numpy_values() -> None:
    same(fnp.roots([1.0, -3.0, 2.0]), np.roots([1.0, -3.0, 2.0]))
    same(fnp.poly(X[:, :3]), np.poly(X[:, :3]))
    with pytest.raises(NotImplementedError, match="roots: expected NumPy values"):
        ft.jit(fnp.roots)(np.array([1.0, -3.0, 2.0]))
    with pytest.raises(NotImplementedError, match="poly: expected NumPy values for a matrix"):
        ft.grad(lambda m: fnp.sum(fnp.poly(m)))(X[:, :3])


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"rcond": 1e-3},
        {"w": np.linspace(1, 2, 9)},
        {"cov": True},
        {"cov": "unscaled"},
        {"full": True},
    ],
    ids=str,
)
@pytest.mark.parametrize("two_d", [False, True])
def test_polyfit_matches_numpy(kw: dict, two_d: bool) -> None:
    x = np.linspace(-1, 2, 9)
    y = np.sin(2 * x) + 0.1 * RNG.normal(size=9)
    if two_d:
        y = np.stack([y, np.cos(x)], 1)
    expected = np.polyfit(x, y, 3, **kw)
    out = staged(lambda x, y: fnp.polyfit(x, y, 3, **kw), x, y)
    for a, e in zip(
        out if isinstance(out, tuple) else (out,),
        expected if isinstance(expected, tuple) else (expected,),
    ):
        same(a, np.asarray(e) if not isinstance(e, (int, float)) else e, rtol=1e-8, atol=1e-12)


def test_polyfit_more() -> None:
    x = np.arange(6)
    same(staged(lambda x, y: fnp.polyfit(x, y, 2), x, x**2), np.polyfit(x, x**2, 2), atol=1e-12)
    f32 = np.linspace(0, 1, 5).astype(np.float32)
    same(staged(lambda x, y: fnp.polyfit(x, y, 1), f32, f32), np.polyfit(f32, f32, 1), atol=1e-12)
    # a rank-deficient fit: NumPy gives no residuals; traced, they are computed anyway
    c, res, rank, s, rcond = staged(
        lambda x, y: fnp.polyfit(x, y, 4, full=True), x[:3] * 1.0, x[:3] * 1.0
    )
    c_ref, res_ref, rank_ref, s_ref, _ = quiet(np.polyfit, x[:3] * 1.0, x[:3] * 1.0, 4, full=True)
    same(rank, rank_ref)
    assert res_ref.shape == (0,) and res.shape == (1,)
    with pytest.raises(ValueError, match="polyfit: expected deg >= 0"):
        staged(lambda x: fnp.polyfit(x, x, -1), x * 1.0)
    with pytest.raises(ValueError, match="polyfit: expected y of shape"):
        staged(lambda x: fnp.polyfit(x, x[:3], 1), x * 1.0)
    with pytest.raises(ValueError, match="polyfit: expected more data points"):
        staged(lambda x: fnp.polyfit(x, x, 5, cov=True), x * 1.0)
    # jax.grad of sum(jnp.polyfit(arange(5), y, 1)) in y
    g = ft.grad(lambda y: fnp.sum(fnp.polyfit(np.arange(5.0), y, 1)))(np.array([1.0, 2, 0, 4, 3]))
    same(g, np.array([0.4, 0.3, 0.2, 0.1, 0.0]), atol=1e-14)
    ft.check_grads(
        lambda x, y: fnp.polyfit(x, y, 2, w=x * x + 1),
        (np.linspace(0, 1, 6), np.cos(x * 1.0)),
        order=1,
    )
