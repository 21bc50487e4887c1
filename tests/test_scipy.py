"""functrace.scipy against SciPy: values, dtypes, derivatives (finite differences), vmap, jit.

Item 2 of the "JAX programs run unchanged" issue: ``functrace.scipy.special``,
``.stats`` and ``.linalg`` with SciPy's names and parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as ss
import scipy.stats as sst

import functrace as ft
import functrace.numpy as fnp
import functrace.scipy.linalg as fsl
import functrace.scipy.special as fsp
import functrace.scipy.stats as fst

RNG = np.random.default_rng(0)


def _u(lo: float, hi: float, shape: tuple[int, ...] = (5,)) -> np.ndarray:
    return RNG.uniform(lo, hi, shape)


def _close(got: Any, want: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# (name, ours, SciPy's, args, grad order (0: no grad check), argnums to differentiate)
ELEMENTWISE: list[tuple[str, Any, Any, tuple[Any, ...], int, tuple[int, ...]]] = [
    ("erf", fsp.erf, ss.erf, (_u(-3, 3),), 2, (0,)),
    ("erfc", fsp.erfc, ss.erfc, (_u(-3, 6),), 2, (0,)),
    ("erfinv", fsp.erfinv, ss.erfinv, (_u(-0.95, 0.95),), 2, (0,)),
    ("gammaln", fsp.gammaln, ss.gammaln, (_u(0.2, 8),), 2, (0,)),
    ("gammaln_negative", fsp.gammaln, ss.gammaln, (-_u(0.1, 0.9) - 2,), 2, (0,)),
    ("digamma", fsp.digamma, ss.digamma, (_u(0.2, 8),), 2, (0,)),
    ("digamma_negative", fsp.digamma, ss.digamma, (-_u(0.1, 0.9) - 1,), 2, (0,)),
    (
        "polygamma1",
        lambda x: fsp.polygamma(1, x),
        lambda x: ss.polygamma(1, x),
        (_u(0.3, 8),),
        2,
        (0,),
    ),
    (
        "polygamma3",
        lambda x: fsp.polygamma(3, x),
        lambda x: ss.polygamma(3, x),
        (_u(0.3, 8),),
        1,
        (0,),
    ),
    ("betaln", fsp.betaln, ss.betaln, (_u(0.3, 5), _u(0.3, 5)), 2, (0, 1)),
    ("expit", fsp.expit, ss.expit, (_u(-6, 6),), 2, (0,)),
    ("logit", fsp.logit, ss.logit, (_u(0.05, 0.95),), 2, (0,)),
    ("ndtr", fsp.ndtr, ss.ndtr, (_u(-8, 8),), 2, (0,)),
    ("ndtri", fsp.ndtri, ss.ndtri, (_u(0.05, 0.95),), 2, (0,)),
    (
        "ndtri_tails",
        fsp.ndtri,
        ss.ndtri,
        (np.array([1e-300, 1e-20, 1e-3, 0.97, 1 - 1e-12]),),
        0,
        (),
    ),
    (
        "log_ndtr",
        fsp.log_ndtr,
        ss.log_ndtr,
        (np.array([-60.0, -25.0, -19.0, -3.0, 0.5, 9.0]),),
        2,
        (0,),
    ),
    ("xlogy", fsp.xlogy, ss.xlogy, (_u(-2, 2), _u(0.1, 3)), 2, (0, 1)),
    ("xlog1py", fsp.xlog1py, ss.xlog1py, (_u(-2, 2), _u(-0.9, 3)), 2, (0, 1)),
    ("entr", fsp.entr, ss.entr, (_u(0.1, 3),), 2, (0,)),
    # stats: continuous
    (
        "norm.logpdf",
        fst.norm.logpdf,
        sst.norm.logpdf,
        (_u(-3, 3), _u(-1, 1), _u(0.5, 2)),
        2,
        (0, 1, 2),
    ),
    ("norm.pdf", fst.norm.pdf, sst.norm.pdf, (_u(-3, 3), _u(-1, 1), _u(0.5, 2)), 2, (0, 1, 2)),
    ("norm.cdf", fst.norm.cdf, sst.norm.cdf, (_u(-6, 6), _u(-1, 1), _u(0.5, 2)), 2, (0, 1, 2)),
    ("norm.logcdf", fst.norm.logcdf, sst.norm.logcdf, (_u(-50, 6), 0.0, 1.0), 2, (0,)),
    ("norm.sf", fst.norm.sf, sst.norm.sf, (_u(-6, 6),), 2, (0,)),
    ("norm.logsf", fst.norm.logsf, sst.norm.logsf, (_u(-6, 50),), 2, (0,)),
    ("norm.ppf", fst.norm.ppf, sst.norm.ppf, (_u(0.05, 0.95), _u(-1, 1), _u(0.5, 2)), 2, (0, 1, 2)),
    ("norm.isf", fst.norm.isf, sst.norm.isf, (_u(0.05, 0.95), _u(-1, 1), _u(0.5, 2)), 2, (0, 1, 2)),
    (
        "t.logpdf",
        fst.t.logpdf,
        sst.t.logpdf,
        (_u(-4, 4), _u(0.5, 10), _u(-1, 1), _u(0.5, 2)),
        2,
        (0, 1, 2, 3),
    ),
    ("t.pdf", fst.t.pdf, sst.t.pdf, (_u(-4, 4), _u(0.5, 10)), 2, (0, 1)),
    (
        "t.logcdf",
        fst.t.logcdf,
        sst.t.logcdf,
        (np.array([-1e4, -30.0, -2.0, -0.3, 0.4, 3.0, 60.0]), 3.0),
        2,
        (0,),
    ),
    (
        "gamma.logpdf",
        fst.gamma.logpdf,
        sst.gamma.logpdf,
        (_u(0.1, 6), _u(0.5, 5), 0.0, _u(0.5, 2)),
        2,
        (0, 1, 3),
    ),
    ("gamma.pdf", fst.gamma.pdf, sst.gamma.pdf, (_u(0.1, 6), _u(0.5, 5)), 2, (0, 1)),
    (
        "beta.logpdf",
        fst.beta.logpdf,
        sst.beta.logpdf,
        (_u(0.05, 0.95), _u(0.5, 4), _u(0.5, 4)),
        2,
        (0, 1, 2),
    ),
    (
        "beta.pdf",
        fst.beta.pdf,
        sst.beta.pdf,
        (_u(0.05, 0.95), _u(0.5, 4), _u(0.5, 4)),
        2,
        (0, 1, 2),
    ),
    ("gammainc", fsp.gammainc, ss.gammainc, (_u(0.3, 20), _u(0.01, 30)), 2, (1,)),
    ("gammaincc", fsp.gammaincc, ss.gammaincc, (_u(0.3, 20), _u(0.01, 30)), 2, (1,)),
    (
        "gamma.cdf",
        fst.gamma.cdf,
        sst.gamma.cdf,
        (_u(-1, 8), _u(0.5, 5), 0.0, _u(0.5, 2)),
        2,
        (0, 3),
    ),
    ("gamma.logcdf", fst.gamma.logcdf, sst.gamma.logcdf, (_u(0.2, 8), _u(0.5, 5)), 2, (0,)),
    ("betainc", fsp.betainc, ss.betainc, (_u(0.3, 20), _u(0.3, 20), _u(0.02, 0.98)), 2, (2,)),
    ("beta.cdf", fst.beta.cdf, sst.beta.cdf, (_u(-0.2, 1.2), _u(0.5, 4), _u(0.5, 4)), 1, (0,)),
    (
        "beta.logcdf",
        fst.beta.logcdf,
        sst.beta.logcdf,
        (_u(0.05, 0.95), _u(0.5, 4), _u(0.5, 4)),
        2,
        (0,),
    ),
    (
        "t.cdf",
        fst.t.cdf,
        sst.t.cdf,
        (_u(-30, 30), _u(0.5, 10), _u(-1, 1), _u(0.5, 2)),
        2,
        (0, 2, 3),
    ),
    # stats: discrete (k is not differentiated)
    (
        "poisson.logpmf",
        fst.poisson.logpmf,
        sst.poisson.logpmf,
        (np.arange(5.0), _u(0.5, 4)),
        2,
        (1,),
    ),
    ("poisson.pmf", fst.poisson.pmf, sst.poisson.pmf, (np.arange(5.0), _u(0.5, 4)), 2, (1,)),
    (
        "poisson.cdf",
        fst.poisson.cdf,
        sst.poisson.cdf,
        (np.array([-1.0, 0, 1.5, 3, 7]), _u(0.5, 4)),
        2,
        (1,),
    ),
    (
        "poisson.logcdf",
        fst.poisson.logcdf,
        sst.poisson.logcdf,
        (np.array([0.0, 1, 2.5, 3, 7]), _u(0.5, 4)),
        2,
        (1,),
    ),
    (
        "bernoulli.logpmf",
        fst.bernoulli.logpmf,
        sst.bernoulli.logpmf,
        (np.array([0.0, 1, 1, 0, 1]), _u(0.1, 0.9)),
        2,
        (1,),
    ),
    (
        "bernoulli.pmf",
        fst.bernoulli.pmf,
        sst.bernoulli.pmf,
        (np.array([0.0, 1, 1, 0, 1]), _u(0.1, 0.9)),
        2,
        (1,),
    ),
    (
        "bernoulli.cdf",
        fst.bernoulli.cdf,
        sst.bernoulli.cdf,
        (np.array([-1.0, 0, 0.5, 1, 3]), _u(0.1, 0.9)),
        2,
        (1,),
    ),
    (
        "bernoulli.logcdf",
        fst.bernoulli.logcdf,
        sst.bernoulli.logcdf,
        (np.array([0.0, 0, 0.5, 1, 3]), _u(0.1, 0.9)),
        2,
        (1,),
    ),
]


def _partial(
    fn: Any, args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, tuple[Any, ...]]:
    def f(*diff: Any) -> Any:
        full = list(args)
        for i, v in zip(argnums, diff):
            full[i] = v
        return fn(*full)

    return f, tuple(np.asarray(args[i], dtype=np.float64) for i in argnums)


@pytest.mark.parametrize("case", ELEMENTWISE, ids=lambda c: c[0])
def test_item2_elementwise_values_grads_vmap_jit(case: Any) -> None:
    name, ours, ref, args, order, argnums = case
    want = ref(*args)
    rtol = 1e-9
    _close(ours(*args), want, rtol=rtol)
    _close(ft.jit(ours)(*args), want, rtol=rtol)
    # vmap over the first array argument, the others broadcast (in_axes None)
    first = next(i for i, a in enumerate(args) if np.ndim(a))
    in_axes = tuple(0 if i == first else None for i in range(len(args)))
    got = ft.vmap(lambda *a: ours(*a), in_axes=in_axes)(*args)
    want_v = np.stack(
        [
            ref(*[a[j] if i == first else a for i, a in enumerate(args)])
            for j in range(len(args[first]))
        ]
    )
    _close(got, want_v, rtol=rtol)
    if order:
        f, diff = _partial(lambda *a: fnp.sum(ours(*a)), args, argnums)
        ft.check_grads(f, diff, order=order, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "fn, ref, x",
    [
        (fsp.erf, ss.erf, 0.3),
        (fsp.gammaln, ss.gammaln, 2.5),
        (fsp.digamma, ss.digamma, 2.5),
        (fsp.erfinv, ss.erfinv, 0.3),
        (fsp.expit, ss.expit, 0.3),
    ],
)
def test_item2_special_dtypes_follow_scipy(fn: Any, ref: Any, x: float) -> None:
    for v in (
        np.float32(x),
        np.array([x], np.float32),
        np.float64(x),
        np.int64(2) if fn is not fsp.erfinv else np.int64(0),
    ):
        got, want = fn(v), ref(v)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (fn, v)
        _close(got, want, rtol=1e-6)
    assert ft.jit(fn)(np.float32(x)).dtype == np.float32


def test_item2_special_poles_and_edges_match_scipy() -> None:
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, np.nan, 1e-300, 170.5])
    with np.errstate(all="ignore"):
        _close(fsp.gammaln(x), ss.gammaln(x))
        want = ss.digamma(x)
        want[:2] = np.nan  # digamma(+-0) is NaN, as in JAX (SciPy: -+inf)
        _close(fsp.digamma(x), want)
        for n in (1, 2):
            _close(fsp.polygamma(n, x[[0, 2, 4, 5, 6, 7]]), ss.polygamma(n, x[[0, 2, 4, 5, 6, 7]]))
        y = np.array([-1.0, 1.0, 1.5, -2.0, 0.0, np.nan, 1 - 1e-15, 1e-300])
        _close(fsp.erfinv(y), ss.erfinv(y))
        z = np.array([-40.0, -30.0, -20.0, -10.0, 0.0, 5.0, 40.0, -np.inf, np.inf])
        _close(fsp.log_ndtr(z), ss.log_ndtr(z))
        _close(fsp.log_ndtr(z.astype(np.float32)), ss.log_ndtr(z.astype(np.float32)), rtol=1e-6)
        xy = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0])
        yy = np.array([0.0, -1.0, np.inf, np.nan, np.inf, 0.0])
        _close(fsp.xlogy(xy, yy), ss.xlogy(xy, yy))
        _close(fsp.xlog1py(xy, yy - 1), ss.xlog1py(xy, yy - 1))
        e = np.array([-1.0, 0.0, np.nan, np.inf, 2.0])
        _close(fsp.entr(e), ss.entr(e))
        _close(fsp.logit(np.array([0.0, 1.0, 0.5])), ss.logit(np.array([0.0, 1.0, 0.5])))


def test_item2_ndtri_edges_inverse_and_derivative() -> None:
    p = np.array([0.0, 1.0, -0.5, 1.5, np.nan, 0.5, 1e-300])
    with np.errstate(all="ignore"):
        _close(fsp.ndtri(p), ss.ndtri(p))
        _close(fsp.ndtri(p.astype(np.float32)), ss.ndtri(p.astype(np.float32)), rtol=1e-6)
    x = np.linspace(-8, 8, 33)
    _close(fsp.ndtr(fsp.ndtri(fsp.ndtr(x))), fsp.ndtr(x), rtol=1e-13)
    # d ndtri / dp = 1 / phi(ndtri(p)), also far in the tail
    for q in (1e-10, 0.3, 0.999):
        _close(ft.grad(fsp.ndtri)(q), 1 / sst.norm.pdf(ss.ndtri(q)), rtol=1e-12)
    assert ft.jit(fsp.ndtri)(np.float32(0.2)).dtype == np.float32
    assert float(fst.norm.isf(1e-30)) == pytest.approx(sst.norm.isf(1e-30), rel=1e-14)


def test_item2_xlogy_derivatives_at_zero() -> None:
    # d/dx x log y = log y also at x = 0; the y-derivative x / y is 0 there
    gx, gy = ft.grad(lambda x, y: fsp.xlogy(x, y), argnums=(0, 1))(0.0, 2.0)
    assert gx == pytest.approx(np.log(2.0)) and gy == 0.0
    gx, gy = ft.grad(lambda x, y: fsp.xlogy(x, y), argnums=(0, 1))(0.0, 0.0)
    assert np.isfinite(gx) and np.isfinite(gy)
    assert ft.grad(fsp.entr)(1.0) == pytest.approx(-1.0)


@pytest.mark.parametrize("b_sign", [False, True])
def test_item2_logsumexp_b_return_sign_axis_keepdims(b_sign: bool) -> None:
    a = RNG.normal(size=(3, 4))
    b = RNG.uniform(0.5, 2, size=(3, 4)) * (
        np.where(RNG.random((3, 4)) < 0.5, -1, 1) if b_sign else 1
    )
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            kw = dict(axis=axis, b=b, keepdims=keepdims, return_sign=True)
            (o, s), (wo, ws) = fsp.logsumexp(a, **kw), ss.logsumexp(a, **kw)
            _close(o, wo)
            _close(s, ws)
            jo, js = ft.jit(
                lambda a, b, ax=axis, kd=keepdims: fsp.logsumexp(
                    a, axis=ax, b=b, keepdims=kd, return_sign=True
                )
            )(a, b)
            _close(jo, wo)
            _close(js, ws)
    if not b_sign:
        _close(fsp.logsumexp(a, axis=1, b=b), ss.logsumexp(a, axis=1, b=b))
        ft.check_grads(lambda a, b: fsp.logsumexp(a, axis=0, b=b).sum(), (a, b), order=2, rtol=1e-4)
    got = ft.vmap(lambda r: fsp.logsumexp(r))(a)
    _close(got, ss.logsumexp(a, axis=1))


def test_item2_softmax_log_softmax() -> None:
    x = RNG.normal(size=(3, 4)) * 10
    for axis in (None, 0, -1):
        _close(fsp.softmax(x, axis=axis), ss.softmax(x, axis=axis))
        _close(fsp.log_softmax(x, axis=axis), ss.log_softmax(x, axis=axis))
        _close(
            ft.jit(lambda v, ax=axis: fsp.log_softmax(v, axis=ax))(x), ss.log_softmax(x, axis=axis)
        )
    _close(ft.vmap(lambda r: fsp.softmax(r))(x), ss.softmax(x, axis=1))
    ft.check_grads(lambda v: (fsp.softmax(v, axis=1) ** 2).sum(), (x / 10,), order=2, rtol=1e-4)


def test_item2_special_bad_input() -> None:
    with pytest.raises(TypeError, match="erf: expected real numbers"):
        fsp.erf(np.array([1 + 2j]))
    with pytest.raises(ValueError, match="polygamma: expected a concrete non-negative integer"):
        fsp.polygamma(1.5, 2.0)
    with pytest.raises(ValueError, match="polygamma"):
        fsp.polygamma(-1, 2.0)


# ---------------------------------------------------------------------------
# multivariate_normal
# ---------------------------------------------------------------------------


def _spd(d: int, *lead: int) -> np.ndarray:
    a = RNG.normal(size=(*lead, d, d))
    return a @ np.swapaxes(a, -1, -2) + d * np.eye(d)


def test_item2_multivariate_normal_values_shapes() -> None:
    d = 3
    cov, mean = _spd(d), RNG.normal(size=d)
    x = RNG.normal(size=(4, d))
    _close(
        fst.multivariate_normal.logpdf(x, mean, cov), sst.multivariate_normal.logpdf(x, mean, cov)
    )
    _close(
        fst.multivariate_normal.pdf(x[0], mean, cov), sst.multivariate_normal.pdf(x[0], mean, cov)
    )
    assert np.shape(fst.multivariate_normal.logpdf(x[0], mean, cov)) == ()
    # scalar and diagonal covariances, univariate
    for c in (2.0, np.array([1.0, 2.0, 3.0])):
        _close(
            fst.multivariate_normal.logpdf(x, mean, c), sst.multivariate_normal.logpdf(x, mean, c)
        )
    _close(
        fst.multivariate_normal.logpdf(np.array([0.3, -1.0]), 0.5, 2.0),
        sst.multivariate_normal.logpdf(np.array([0.3, -1.0]), 0.5, 2.0),
    )
    # a stack of covariances broadcasts with the points
    covs = _spd(d, 2)
    got = fst.multivariate_normal.logpdf(x[:2], mean, covs)
    _close(got, [sst.multivariate_normal.logpdf(x[i], mean, covs[i]) for i in range(2)])
    with pytest.raises(ValueError, match="multivariate_normal.logpdf: expected x"):
        fst.multivariate_normal.logpdf(np.zeros(2), np.zeros(3), np.eye(3))


def test_item2_multivariate_normal_grad_vmap_jit() -> None:
    d = 3
    a, mean, x = RNG.normal(size=(d, d)), RNG.normal(size=d), RNG.normal(size=(4, d))

    def f(x: Any, mean: Any, a: Any) -> Any:
        cov = a @ a.T + 3 * np.eye(d)
        return fst.multivariate_normal.logpdf(x, mean, cov).sum()

    ft.check_grads(f, (x, mean, a), order=2, rtol=1e-4)
    cov = a @ a.T + 3 * np.eye(d)
    want = sst.multivariate_normal.logpdf(x, mean, cov)
    _close(ft.jit(fst.multivariate_normal.logpdf)(x, mean, cov), want)
    _close(ft.vmap(fst.multivariate_normal.logpdf, in_axes=(0, None, None))(x, mean, cov), want)


# ---------------------------------------------------------------------------
# linalg
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lower", [False, True])
def test_item2_cholesky_cho_factor_cho_solve(lower: bool) -> None:
    a, b = _spd(4), RNG.normal(size=(4, 2))
    _close(fsl.cholesky(a, lower=lower), sl.cholesky(a, lower=lower))
    c = fsl.cho_factor(a, lower=lower)
    assert c[1] is lower
    _close(fsl.cho_solve(c, b), sl.cho_solve(sl.cho_factor(a, lower=lower), b))
    _close(fsl.cho_solve(c, b[:, 0]), np.linalg.solve(a, b[:, 0]))
    _close(ft.jit(lambda a: fsl.cholesky(a, lower=lower))(a), sl.cholesky(a, lower=lower))
    stack = np.stack([a, _spd(4)])
    _close(
        ft.vmap(lambda m: fsl.cholesky(m, lower=lower))(stack),
        [sl.cholesky(m, lower=lower) for m in stack],
    )

    def f(m: Any, b: Any) -> Any:
        s = m @ m.T + 4 * np.eye(4)
        return (
            fsl.cho_solve(fsl.cho_factor(s, lower=lower), b).sum()
            + fsl.cholesky(s, lower=lower).sum()
        )

    ft.check_grads(f, (RNG.normal(size=(4, 4)), b), order=2, rtol=1e-4)


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_item2_solve_triangular(trans: Any, lower: bool, unit: bool) -> None:
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    b = RNG.normal(size=(4, 3))
    kw = dict(trans=trans, lower=lower, unit_diagonal=unit)
    _close(fsl.solve_triangular(a, b, **kw), sl.solve_triangular(a, b, **kw))
    _close(fsl.solve_triangular(a, b[:, 0], **kw), sl.solve_triangular(a, b[:, 0], **kw))
    _close(
        ft.jit(lambda a, b: fsl.solve_triangular(a, b, **kw))(a, b), sl.solve_triangular(a, b, **kw)
    )
    if trans in (0, "T"):
        ft.check_grads(lambda a, b: fsl.solve_triangular(a, b, **kw), (a, b), order=2, rtol=1e-4)


def test_item2_solve_triangular_batching_broadcasting() -> None:
    a = RNG.normal(size=(2, 1, 3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=(1, 5, 3, 2))
    got = fsl.solve_triangular(a, b, lower=True)
    assert got.shape == (2, 5, 3, 2)
    for i in range(2):
        for j in range(5):
            _close(got[i, j], sl.solve_triangular(a[i, 0], b[0, j], lower=True))
    # vectors: b.ndim == a.ndim - 1
    bv = RNG.normal(size=(2, 1, 3))
    got = fsl.solve_triangular(a, bv)
    _close(got[1, 0], sl.solve_triangular(a[1, 0], bv[1, 0]))
    # vmap of a 2-d solve equals the batched call
    a2, b2 = a[:, 0], RNG.normal(size=(2, 3, 2))
    _close(
        ft.vmap(lambda m, v: fsl.solve_triangular(m, v, trans=1))(a2, b2),
        fsl.solve_triangular(a2, b2, trans=1),
    )
    with pytest.raises(ValueError, match="solve_triangular: expected b of shape"):
        fsl.solve_triangular(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="solve_triangular: expected trans"):
        fsl.solve_triangular(np.eye(3), np.ones(3), trans="X")


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_item2_expm(scale: float) -> None:
    a = RNG.normal(size=(4, 4)) * scale / 4
    _close(fsl.expm(a), sl.expm(a), rtol=1e-9)
    _close(ft.jit(fsl.expm)(a), sl.expm(a), rtol=1e-9)
    stack = np.stack([a, a * 0.1])
    _close(ft.vmap(fsl.expm)(stack), [sl.expm(m) for m in stack], rtol=1e-9)
    _close(fsl.expm(stack), [sl.expm(m) for m in stack], rtol=1e-9)
    _close(fsl.expm(a.astype(np.float32)), sl.expm(a), rtol=1e-4)
    if scale <= 1.0:
        ft.check_grads(lambda m: fsl.expm(m), (a,), order=2, rtol=1e-4)


def test_item2_expm_grad_under_jit_and_known_derivative() -> None:
    # d/dt expm(t A) = A expm(t A)
    a = RNG.normal(size=(3, 3))
    d = ft.jacfwd(lambda t: fsl.expm(t * a))(0.7)
    _close(d, a @ sl.expm(0.7 * a), rtol=1e-8)
    g = ft.jit(ft.grad(lambda m: fsl.expm(m).sum()))(a * 3)
    _close(g, ft.grad(lambda m: fsl.expm(m).sum())(a * 3), rtol=1e-8)


def test_item2_lu_lu_factor_lu_solve() -> None:
    a, b = RNG.normal(size=(5, 5)), RNG.normal(size=(5, 2))
    p, l, u = fsl.lu(a)
    wp, wl, wu = sl.lu(a)
    _close(p, wp)
    _close(l, wl)
    _close(u, wu)
    pl, u2 = fsl.lu(a, permute_l=True)
    _close(pl, wp @ wl)
    lu_, piv = fsl.lu_factor(a)
    wlu, wpiv = sl.lu_factor(a)
    _close(lu_, wlu)
    np.testing.assert_array_equal(piv, wpiv)
    for trans in (0, 1, 2):
        _close(fsl.lu_solve((lu_, piv), b, trans=trans), sl.lu_solve((wlu, wpiv), b, trans=trans))
        _close(
            fsl.lu_solve((lu_, piv), b[:, 0], trans=trans),
            sl.lu_solve((wlu, wpiv), b[:, 0], trans=trans),
        )
        jitted = ft.jit(lambda a, b, t=trans: fsl.lu_solve(fsl.lu_factor(a), b, trans=t))(a, b)
        _close(jitted, sl.lu_solve((wlu, wpiv), b, trans=trans))
    # a stack, under vmap and batched
    stack = RNG.normal(size=(3, 4, 4))
    got = ft.vmap(lambda m: fsl.lu(m)[2])(stack)
    _close(got, [sl.lu(m)[2] for m in stack])
    bs = RNG.normal(size=(3, 4))
    _close(fsl.lu_solve(fsl.lu_factor(stack), bs), np.linalg.solve(stack, bs[..., None])[..., 0])
    # derivatives through the factorization and the solve
    anti = RNG.normal(size=(4, 4)) + 4 * np.eye(4)[::-1]
    ft.check_grads(lambda m: fsl.lu(m)[2], (anti,), order=2, rtol=1e-4)
    ft.check_grads(
        lambda m, v: fsl.lu_solve(fsl.lu_factor(m), v), (anti, b[:4]), order=2, rtol=1e-4
    )


def test_item2_eigh_svd_det_inv_qr() -> None:
    s, g = _spd(4), RNG.normal(size=(4, 3))
    w, v = fsl.eigh(s)
    ww, wv = sl.eigh(s)
    _close(w, ww)
    _close(np.abs(v), np.abs(wv))
    _close(fsl.eigh(s, eigvals_only=True), sl.eigh(s, eigvals_only=True))
    _close(fsl.eigh(s, lower=False, eigvals_only=True), sl.eigh(s, lower=False, eigvals_only=True))
    _close(fsl.svd(g, compute_uv=False), sl.svd(g, compute_uv=False))
    u, sv, vh = fsl.svd(g, full_matrices=False)
    _close(u * sv @ vh, g)
    sq = g[:3] + 2 * np.eye(3)
    _close(fsl.det(sq), sl.det(sq))
    _close(fsl.inv(sq), sl.inv(sq))
    q, r = fsl.qr(g)
    assert q.shape == (4, 4) and r.shape == (4, 3)
    _close(q @ r, g)
    q, r = fsl.qr(g, mode="economic")
    assert q.shape == (4, 3)
    (r,) = fsl.qr(g, mode="r")
    _close(np.abs(r), np.abs(sl.qr(g, mode="r")[0]))
    ft.check_grads(
        lambda m: fsl.det(m) + fsl.inv(m).sum() + fsl.eigh(m + m.T, eigvals_only=True).sum(),
        (sq,),
        order=2,
        rtol=1e-4,
    )
    _close(ft.jit(fsl.det)(sq), sl.det(sq))
    _close(ft.vmap(fsl.inv)(np.stack([sq, sq.T])), [sl.inv(sq), sl.inv(sq.T)])
    with pytest.raises(NotImplementedError, match="eigh: the generalized"):
        fsl.eigh(s, s)
    with pytest.raises(ValueError, match="inv: expected a square matrix"):
        fsl.inv(g)
    with pytest.raises(ValueError, match="qr: expected mode"):
        fsl.qr(g, mode="raw")


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (5, 5), (6, 2), (1, 4)])
def test_item2_qr_column_pivoting_matches_scipy(shape: tuple[int, int]) -> None:
    a = np.random.default_rng(sum(shape)).normal(size=shape)
    for mode in ("full", "economic", "r"):
        got, want = fsl.qr(a, mode=mode, pivoting=True), sl.qr(a, mode=mode, pivoting=True)
        assert len(got) == len(want) and got[-1].dtype == np.int32
        np.testing.assert_array_equal(got[-1], want[-1])
        for g, w in zip(got[:-1], want[:-1]):
            _close(g, w, rtol=1e-10, atol=1e-12)
    q, r, p = fsl.qr(a, mode="economic", pivoting=True)
    _close(q @ r, a[:, p])
    jq, jr, jp = ft.jit(lambda a: fsl.qr(a, mode="economic", pivoting=True))(a)
    np.testing.assert_array_equal(jp, p)
    _close(jr, r)
    stack = np.stack([a, a[:, ::-1], 2 * a])
    vp = ft.vmap(lambda a: fsl.qr(a, mode="economic", pivoting=True)[2])(stack)
    np.testing.assert_array_equal(vp, [sl.qr(m, pivoting=True)[2] for m in stack])


def test_item2_qr_pivoting_derivatives() -> None:
    a = np.array([[1.0, 5.0, 2.0], [4.0, 1.0, 9.0], [3.0, 3.0, 3.0], [0.0, 1.0, 0.0]])

    def f(a: Any) -> Any:
        q, r, _ = fsl.qr(a, mode="economic", pivoting=True)
        return fnp.sum(r) + fnp.sum(q[:, 0])

    ft.check_grads(f, (a,), order=2, rtol=1e-4, atol=1e-6)
    _close(ft.jit(ft.grad(f))(a), ft.grad(f)(a))


def test_item2_incomplete_gamma_edges_and_shape_derivative() -> None:
    a = np.array([0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 2.0, 1e3, 0.5])
    x = np.array([1.0, 0.0, 0.0, np.inf, -1.0, 1.0, np.nan, 1.1e3, 1e-10])
    with np.errstate(all="ignore"):
        _close(fsp.gammainc(a, x), ss.gammainc(a, x))
        _close(fsp.gammaincc(a, x), ss.gammaincc(a, x))
    assert fsp.gammainc(np.float32(2.0), np.float32(1.0)).dtype == np.float32
    # the derivative in the shape parameter is lax.igamma_grad_a (as JAX's)
    sa = np.array([0.7, 1.5, 2.5, 8.0])
    sx = np.array([0.3, 2.0, 1.0, 9.5])
    h = 1e-6
    want = (ss.gammainc(sa + h, sx) - ss.gammainc(sa - h, sx)) / (2 * h)
    got = ft.vmap(ft.grad(fsp.gammainc))(sa, sx)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    np.testing.assert_allclose(ft.jit(ft.vmap(ft.grad(fsp.gammaincc)))(sa, sx), -want, rtol=1e-7)
    np.testing.assert_allclose(
        ft.grad(lambda k: fst.gamma.cdf(1.0, k))(1.5),
        (ss.gammainc(1.5 + h, 1.0) - ss.gammainc(1.5 - h, 1.0)) / (2 * h),
        rtol=1e-7,
    )
    ft.check_grads(lambda m, t: fsp.gammainc(m, t), (sa, sx), order=1, modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError, match="igamma_grad_a: the derivative"):
        ft.grad(ft.grad(lambda m: fsp.gammainc(m, 2.0)))(1.5)


def test_item2_incomplete_beta_edges_and_shape_derivative_error() -> None:
    a = np.array([1.0, 1.0, 1.0, -1.0, 1.0, 0.5, 200.0])
    b = np.array([1.0, 1.0, 1.0, 1.0, -1.0, 0.5, 300.0])
    x = np.array([0.0, 1.0, 1.5, 0.5, 0.5, np.nan, 0.41])
    with np.errstate(all="ignore"):
        _close(fsp.betainc(a, b, x), ss.betainc(a, b, x), rtol=1e-9)
    with pytest.raises(
        NotImplementedError, match="betainc: the derivative with respect to the shape parameter a"
    ):
        ft.grad(lambda a: fsp.betainc(a, 2.0, 0.3))(1.5)
    with pytest.raises(NotImplementedError, match="parameter b"):
        ft.grad(lambda df: fst.beta.cdf(0.3, 2.0, df))(1.5)


def test_item2_t_cdf_derivative_at_the_center() -> None:
    # the tail formula is in z^2; at z = 0 the derivative is the density there
    g = ft.grad(lambda x: fst.t.cdf(x, 3.0, loc=1.0, scale=2.0))(1.0)
    assert g == pytest.approx(sst.t.pdf(1.0, 3.0, loc=1.0, scale=2.0), rel=1e-12)
    assert ft.grad(ft.grad(lambda x: fst.t.cdf(x, 3.0)))(0.0) == pytest.approx(0.0, abs=1e-12)
    assert fst.t.cdf(0.0, 3.0) == 0.5
