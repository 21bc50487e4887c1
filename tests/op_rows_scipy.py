"""Op-table rows: functrace.scipy.special and functrace.scipy.stats functions added with
the "fill in jax.scipy" issue, against SciPy.

Every function here is a composite (no new primitive), so the rows exercise the
derivative, batching and jit rules of the primitives they are built from, and the
custom JVP rules of the integral-defined functions. Edge values and the places where
functrace follows JAX rather than SciPy: tests/test_scipy_more.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as ss
import scipy.stats as sst

import functrace.scipy.special as fsp
import functrace.scipy.stats as fst
from op_db import POS, Arg, F, OpInfo

F64 = (np.float64,)


def _dtype(*args: Any) -> Any:
    dt = np.result_type(*[np.asarray(a) for a in args if type(a) not in (int, float, bool)])
    return dt if dt.kind == "f" else np.dtype(np.float64)


def ref(fn: Any) -> Any:
    """SciPy's ``fn`` with functrace's promotion: float32 stays float32, anything else
    float64; 0-d inputs give a NumPy scalar."""

    def call(*args: Any) -> Any:
        out = np.asarray(fn(*args)).astype(_dtype(*args))
        return out[()] if out.ndim == 0 else out

    return call


def _row(name: str, fn: Any, sp: Any, args: tuple[Arg, ...] = (F,), **kw: Any) -> OpInfo:
    kw.setdefault("rtol", 1e-9)
    kw.setdefault("atol", 1e-12)
    prims = kw.pop("prims", ())
    return OpInfo(f"scipy.special.{name}", fn, ref(sp), args, prims, **kw)


def _dom(lo: float, hi: float) -> Arg:
    return Arg(domain=(lo, hi))


_JN_V = 3


def fnp_round(a: Any) -> Any:
    import functrace.numpy as fnp

    return fnp.round(a)


_SH_N, _SH_M = np.array([0, 1, 2, 3, 3]), np.array([0, -1, 2, 1, -3])


def _parts(w: Any) -> Any:
    import functrace.numpy as fnp

    return fnp.stack([fnp.real(w), fnp.imag(w)])


def _np_parts(w: Any) -> Any:
    return np.stack([w.real, w.imag])


SPECIAL: list[OpInfo] = [
    _row("gamma", fsp.gamma, ss.gamma, (_dom(0.2, 5.0),), prims=("lgamma",)),
    _row("gamma_negative", fsp.gamma, ss.gamma, (_dom(-2.9, -2.1),), prims=("lgamma",)),
    _row("gammasgn", fsp.gammasgn, ss.gammasgn, (_dom(-4.0, 4.0),), grad=False),
    _row("loggamma", fsp.loggamma, ss.loggamma, (_dom(0.2, 5.0),), prims=("lgamma",)),
    _row("beta", fsp.beta, ss.beta, (_dom(0.3, 4.0), _dom(0.3, 4.0)), prims=("lgamma",)),
    # (0 below 0: a jump the finite differences must not straddle)
    _row(
        "factorial", fsp.factorial, ss.factorial, (_dom(0.0, 6.0),), avoid=(0.0,), prims=("lgamma",)
    ),  # fmt: skip
    _row("comb", fsp.comb, ss.comb, (_dom(3.0, 8.0), _dom(0.2, 2.8)), prims=("lgamma",)),
    _row(
        "comb_repetition",
        lambda n, k: fsp.comb(n, k, repetition=True),
        lambda n, k: ss.comb(n, k, repetition=True),
        (_dom(1.0, 6.0), _dom(0.2, 3.0)),
        prims=("lgamma",),
    ),
    _row("poch", fsp.poch, ss.poch, (_dom(0.5, 4.0), _dom(-0.4, 3.0)), prims=("lgamma",)),
    _row("i0", fsp.i0, ss.i0, (_dom(-10.0, 10.0),)),
    _row("i0e", fsp.i0e, ss.i0e, (_dom(-10.0, 10.0),), avoid=(0.0,)),
    _row("i1", fsp.i1, ss.i1, (_dom(-10.0, 10.0),)),
    _row("i1e", fsp.i1e, ss.i1e, (_dom(-10.0, 10.0),), avoid=(0.0,)),
    _row(
        "bessel_jn",
        lambda z: fsp.bessel_jn(z, v=_JN_V),
        lambda z: np.stack([ss.jv(v, z) for v in range(_JN_V + 1)]),
        (_dom(-10.0, 10.0),),
        avoid=(0.0,),
        rtol=1e-8,
        atol=1e-10,
    ),
    _row("kl_div", fsp.kl_div, ss.kl_div, (POS, POS), prims=("log",)),
    _row("rel_entr", fsp.rel_entr, ss.rel_entr, (POS, POS), prims=("log",)),
    _row("zeta", fsp.zeta, ss.zeta, (_dom(1.5, 6.0), _dom(0.3, 5.0)), prims=("zeta",)),
    _row("zeta_riemann", fsp.zeta, ss.zeta, (_dom(-6.0, 6.0),), avoid=(1.0,), prims=("zeta",)),
    _row(
        "polygamma_array_n",
        fsp.polygamma,
        ss.polygamma,
        (Arg("int", (0, 3)), _dom(0.3, 5.0)),
        dtypes=F64,
        rtol=1e-8,
    ),
    _row("exp1", fsp.exp1, ss.exp1, (_dom(0.1, 8.0),), prims=("custom_jvp_call",)),
    _row("expi", fsp.expi, ss.expi, (_dom(-8.0, 8.0),), avoid=(0.0,), prims=("custom_jvp_call",)),
    _row(
        "expn",
        fsp.expn,
        ss.expn,
        (Arg("int", (0, 5)), _dom(0.3, 6.0)),
        dtypes=F64,
        prims=("custom_jvp_call",),
        grad_order=1,  # (second order: tests/test_scipy_more.py; slow here)
    ),
    _row("erfcx", fsp.erfcx, ss.erfcx, (_dom(-3.0, 10.0),), prims=("custom_jvp_call",)),
    _row("dawsn", fsp.dawsn, ss.dawsn, (_dom(-8.0, 8.0),), prims=("custom_jvp_call",)),
    _row("spence", fsp.spence, ss.spence, (_dom(0.1, 4.0),), prims=("log",)),
    # complex z = x + iy from two real arguments; real and imaginary parts stacked
    _row(
        "wofz",
        lambda x, y: _parts(fsp.wofz(x + 1j * y)),
        lambda x, y: _np_parts(ss.wofz(x + 1j * np.asarray(y))),
        (_dom(-3.0, 3.0), _dom(-2.0, 3.0)),
        prims=("custom_jvp_call",),
    ),
    _row(
        "sph_harm_y",
        lambda t, p: _parts(fsp.sph_harm_y(_SH_N, _SH_M, t, p, n_max=3)),
        lambda t, p: _np_parts(ss.sph_harm_y(_SH_N, _SH_M, t, p)),
        (_dom(0.2, 2.9), _dom(0.0, 6.2)),
        shapes=((5,), (5,)),
        prims=("gather",),
    ),
    _row(
        "erfcx_complex",
        lambda x, y: _parts(fsp.erfcx(x + 1j * y)),
        lambda x, y: _np_parts(ss.erfcx(x + 1j * np.asarray(y))),
        (_dom(-2.0, 3.0), _dom(-3.0, 3.0)),
        prims=("custom_jvp_call",),
    ),
    _row(
        "sici_si",
        lambda x: fsp.sici(x)[0],
        lambda x: ss.sici(x)[0],
        (_dom(-12.0, 12.0),),
        prims=("custom_jvp_call",),
    ),
    _row(
        "sici_ci",
        lambda x: fsp.sici(x)[1],
        lambda x: ss.sici(x)[1],
        (_dom(-12.0, 12.0),),
        avoid=(0.0,),
        prims=("custom_jvp_call",),
    ),
    _row(
        "fresnel_s",
        lambda x: fsp.fresnel(x)[0],
        lambda x: ss.fresnel(x)[0],
        (_dom(-4.0, 4.0),),
        prims=("custom_jvp_call",),
        grad_tol=1e-4,  # derivatives of order 4 ~ (pi x)^3: the finite differences' error
    ),
    _row(
        "fresnel_c",
        lambda x: fsp.fresnel(x)[1],
        lambda x: ss.fresnel(x)[1],
        (_dom(-4.0, 4.0),),
        prims=("custom_jvp_call",),
        grad_tol=1e-4,  # derivatives of order 4 ~ (pi x)^3: the finite differences' error
    ),
    _row(
        "owens_t",
        fsp.owens_t,
        ss.owens_t,
        (_dom(-3.0, 3.0), _dom(-3.0, 3.0)),
        avoid=(0.0,),
        prims=("custom_jvp_call",),
    ),
    _row("boxcox", fsp.boxcox, ss.boxcox, (POS, F), prims=("expm1",)),
    _row("boxcox1p", fsp.boxcox1p, ss.boxcox1p, (_dom(-0.5, 3.0), F), prims=("expm1",)),
    _row(
        "multigammaln",
        lambda a: fsp.multigammaln(a, 3),
        lambda a: ss.multigammaln(a, 3),
        (_dom(2.0, 5.0),),
        prims=("lgamma",),
    ),
    _row(
        "hyp1f1",
        fsp.hyp1f1,
        ss.hyp1f1,
        (_dom(-2.0, 2.0), _dom(0.5, 3.0), _dom(-5.0, 5.0)),
        prims=("scan",),
        rtol=1e-8,
        grad_order=1,
    ),
    _row(
        "hyp2f1",
        fsp.hyp2f1,
        ss.hyp2f1,
        (_dom(-2.0, 2.0), _dom(-2.0, 2.0), _dom(0.5, 3.0), _dom(-0.9, 0.9)),
        prims=("scan",),
        rtol=1e-8,
        grad_order=1,
    ),
    _row("digamma_fix", fsp.digamma, ss.digamma, (_dom(0.2, 5.0),), prims=("digamma",)),
    _row(
        "betainc_edges",
        fsp.betainc,
        ss.betainc,
        (const_arg := Arg("const", value=0.0), POS, _dom(0.05, 0.95)),
        grad=False,
        dtypes=F64,
    ),
]

del const_arg


def _st(name: str, args: tuple[Arg, ...], **kw: Any) -> OpInfo:
    """A row for ``functrace.scipy.stats.<dist>.<fn>`` against SciPy's."""
    dist, fn = name.split(".")
    kw.setdefault("rtol", 1e-9)
    kw.setdefault("atol", 1e-12)
    ours = getattr(getattr(fst, dist), fn)
    theirs = getattr(getattr(sst, dist), fn)
    return OpInfo(f"scipy.stats.{name}", ours, ref(theirs), args, kw.pop("prims", ()), **kw)


X, LOC, SCALE = F, _dom(-0.5, 0.5), _dom(0.5, 2.0)
Q = _dom(0.05, 0.95)
K_INT = Arg("int", (0, 6))


def _const(v: float) -> Arg:
    return Arg("const", value=v)


def _family(dist: str, fns: tuple[str, ...], args: tuple[Arg, ...], **kw: Any) -> list[OpInfo]:
    rows = []
    for fn in fns:
        if fn in ("ppf", "isf"):
            # Their derivatives grow as 1/q**k near 0 and 1: the order-2 check's finite
            # differences are off by ~1e-3 relative at q = 0.95 (seen for expon.ppf).
            rows.append(_st(f"{dist}.{fn}", (Q, *args[1:]), **{"grad_tol": 1e-4, **kw}))
        else:
            rows.append(_st(f"{dist}.{fn}", args, **kw))
    return rows


_KDE_X = np.array([[0.1, 0.7, -0.4, 1.2, 0.3, -1.0], [0.5, -0.2, 0.9, 0.0, -0.6, 0.4]])
_MULTI_X = np.array([[2, 1, 4], [0, 6, 1]])
_SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])


def _kde_ref(data: Any, pts: Any) -> Any:
    return sst.gaussian_kde(data).logpdf(pts).astype(_dtype(data))


STATS: list[OpInfo] = [
    *_family("cauchy", ("logpdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"), (X, LOC, SCALE)),
    *_family("logistic", ("logpdf", "cdf", "sf", "ppf", "isf"), (X, LOC, SCALE)),
    *_family("gumbel_r", ("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"), (X, LOC, SCALE)),
    *_family("gumbel_l", ("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"), (X, LOC, SCALE)),
    *_family(
        "expon",
        ("logpdf", "cdf", "sf", "logcdf", "logsf", "ppf"),
        (_dom(0.6, 4.0), LOC, SCALE),
    ),
    *_family("laplace", ("logpdf", "cdf"), (X, _const(0.0), SCALE), avoid=(0.0,)),
    *_family("uniform", ("logpdf", "cdf", "ppf"), (_dom(0.1, 0.9), _const(0.0), _dom(1.0, 2.0))),
    *_family(
        "pareto",
        ("logpdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
        (_dom(1.5, 4.0), _dom(0.5, 3.0)),
    ),
    _st("chi2.logpdf", (_dom(0.6, 5.0), _dom(1.0, 5.0), LOC)),  # x - loc >= 0.1
    *_family("chi2", ("cdf", "sf", "logcdf", "logsf"), (_dom(0.2, 5.0), _const(3.0))),
    *_family("gamma", ("sf", "logsf"), (_dom(0.2, 5.0), _const(2.5))),
    *_family("beta", ("sf", "logsf"), (_dom(0.1, 0.9), _const(2.0), _const(3.5))),
    _st("gennorm.logpdf", (X, _dom(1.5, 3.0)), avoid=(0.0,)),
    _st("gennorm.cdf", (X, _const(1.7)), avoid=(0.0,)),
    *_family(
        "truncnorm",
        ("logpdf", "cdf", "sf", "logcdf", "logsf"),
        (_dom(-0.9, 0.9), _dom(-3.0, -1.0), _dom(1.0, 3.0)),
    ),
    _st("vonmises.logpdf", (X, _dom(0.3, 20.0))),
    _st("wrapcauchy.logpdf", (_dom(0.1, 6.0), _dom(0.1, 0.9))),
    _st("poisson.entropy", (_dom(0.5, 20.0),)),
    _st("bernoulli.ppf", (Q, _dom(0.1, 0.9)), grad=False),
    # d^3/dp^3 ~ 2k/p^3: the finite differences' error near p = 0.1 (the rule is exact)
    _st("binom.logpmf", (K_INT, _const(6.0), _dom(0.1, 0.9)), dtypes=F64, grad_tol=1e-4),
    _st("betabinom.logpmf", (K_INT, _const(6.0), POS, POS), dtypes=F64),
    _st("geom.logpmf", (Arg("int", (1, 6)), _dom(0.1, 0.9)), dtypes=F64),
    _st("nbinom.logpmf", (K_INT, POS, _dom(0.1, 0.9)), dtypes=F64),
    OpInfo(
        "scipy.stats.multinomial.logpmf",
        lambda p: fst.multinomial.logpmf(_MULTI_X, 7, p),
        lambda p: np.array(
            [
                sst.multinomial.logpmf(x, 7, q / q.sum()) + 7 * np.log(q.sum())
                for x, q in zip(_MULTI_X, np.asarray(p, np.float64))
            ]  # fmt: skip
        ).astype(np.asarray(p).dtype),
        (_dom(0.1, 0.9),),
        shapes=((2, 3),),
        rtol=1e-9,
    ),
    OpInfo(
        "scipy.stats.dirichlet.logpdf",
        fst.dirichlet.logpdf,
        ref(sst.dirichlet.logpdf),
        (Arg("const", value=_SIMPLEX), POS),
        shapes=((3, 2), (3,)),
        rtol=1e-9,
    ),
    OpInfo(
        "scipy.stats.gaussian_kde.logpdf",
        lambda data, pts: fst.gaussian_kde(data).logpdf(pts),
        _kde_ref,
        (F, F),
        shapes=((2, 6), (2, 3)),
        rtol=1e-8,
    ),
    OpInfo(
        "scipy.stats.sem",
        lambda a: fst.sem(a, axis=-1),
        lambda a: sst.sem(a, axis=-1),
        (F,),
        ("reduce_sum",),
        min_dims=1,
        rtol=1e-9,
    ),
    OpInfo(
        "scipy.stats.rankdata",
        lambda a: fst.rankdata(a, axis=-1),
        lambda a: sst.rankdata(a, axis=-1).astype(np.float64),
        (F,),
        min_dims=1,
        grad=False,
    ),
    OpInfo(
        "scipy.stats.mode",
        lambda a: fst.mode(fnp_round(a), axis=-1).mode,
        lambda a: sst.mode(np.round(a), axis=-1).mode,
        (F,),
        min_dims=1,
        grad=False,
    ),
]

ROWS: list[OpInfo] = [*SPECIAL, *STATS]
