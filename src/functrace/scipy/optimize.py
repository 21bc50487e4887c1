"""functrace.scipy.optimize: ``minimize`` with BFGS, traceable (as
``jax.scipy.optimize``).

The whole minimization is one ``lax.while_loop`` (each step one strong-Wolfe line
search, itself a ``while_loop``), so ``minimize`` runs eagerly, under ``jit`` (one
compiled loop) and under ``vmap`` (a batch of problems). The objective is
differentiated with ``functrace.value_and_grad``.

>>> import functrace.numpy as fnp
>>> res = minimize(lambda x: fnp.sum((x - 3.0) ** 2), fnp.zeros(2), method="BFGS")
>>> [round(float(v), 6) for v in res.x], bool(res.success)
([3.0, 3.0], True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.api import value_and_grad
from functrace.numpy._core import asarray_or_tracer

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize` (JAX's fields).

    ``x``: the solution; ``success``: whether the gradient norm fell below ``gtol``
    without a line-search failure; ``status``: 0 converged, 1 ``maxiter`` reached,
    3 the line search failed (zooming found no acceptable step), 5 the line search
    ran out of iterations, -1 otherwise; ``fun``, ``jac``: the objective and its
    gradient at ``x``; ``hess_inv``: the BFGS estimate of the inverse Hessian;
    ``nfev``, ``njev``: evaluations of the objective and its gradient; ``nit``: the
    iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


# ---------------------------------------------------------------------------
# The line search: strong Wolfe conditions (Nocedal & Wright, algorithms 3.5 and
# 3.6), one trial step per loop iteration. While bracketing, the step doubles; once a
# bracket [lo, hi] holds an acceptable step, the trial is the minimizer of a cubic
# through lo, hi and the previous hi (or of a quadratic), kept away from the ends,
# else the midpoint.
# ---------------------------------------------------------------------------


class _Search(NamedTuple):
    zooming: Any
    done: Any
    failed: Any
    i: Any  # bracketing steps taken
    j: Any  # zoom steps taken
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    g_star: Any
    nfev: Any


class _SearchResult(NamedTuple):
    failed: Any
    status: Any  # 0 found, 1 zoom failed, 3 out of iterations
    a: Any
    phi: Any
    g: Any
    nfev: Any


def _cubic_min(a: Any, fa: Any, da: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic with value ``fa`` and slope ``da`` at ``a`` through
    ``(b, fb)`` and ``(c, fc)`` (NaN when it has none)."""
    db, dc = b - a, c - a
    rb = fb - fa - da * db
    rc = fc - fa - da * dc
    denom = (db * dc) ** 2 * (db - dc)
    ok = denom != 0
    denom = fnp.where(ok, denom, 1.0)
    p = (dc * dc * rb - db * db * rc) / denom  # cubic coefficient
    q = (-dc * dc * dc * rb + db * db * db * rc) / denom  # quadratic coefficient
    disc = q * q - 3 * p * da
    ok = ok & (p != 0) & (disc >= 0)
    root = fnp.sqrt(fnp.where(ok, disc, 0.0))
    return fnp.where(ok, a + (-q + root) / (3 * fnp.where(ok, p, 1.0)), np.nan)


def _quad_min(a: Any, fa: Any, da: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the parabola with value ``fa``, slope ``da`` at ``a`` through
    ``(b, fb)`` (NaN when it has none)."""
    db = b - a
    ok = db != 0
    db = fnp.where(ok, db, 1.0)
    curv = (fb - fa - da * db) / (db * db)
    ok = ok & (curv != 0)
    return fnp.where(ok, a - da / (2 * fnp.where(ok, curv, 1.0)), np.nan)


def _pick(cond: Any, new: Any, old: Any) -> Any:
    return fnp.where(cond, new, old)


def _line_search(
    fun_and_grad: Callable[[Any], tuple[Any, Any]],
    x: Any,
    p: Any,
    phi0: Any,
    g0: Any,
    old_old_phi: Any,
    maxiter: int,
    c1: float = 1e-4,
    c2: float = 0.9,
) -> _SearchResult:
    dt = core.get_aval(phi0).dtype
    dphi0 = fnp.dot(g0, p)
    slope = fnp.where(dphi0 != 0, dphi0, -1.0)
    guess = 1.01 * 2 * (phi0 - old_old_phi) / slope  # the step the last decrease suggests
    start = fnp.where((guess > 1) | ~fnp.isfinite(guess) | (guess <= 0) | (dphi0 == 0), 1.0, guess)
    tiny = 1e-10 if dt == np.float64 else 1e-5

    def restricted(a: Any) -> tuple[Any, Any, Any]:
        phi, g = fun_and_grad(x + a * p)
        return phi, fnp.dot(g, p), g

    def armijo_fails(a: Any, phi: Any) -> Any:
        return phi > phi0 + c1 * a * dphi0

    def curvature_holds(dphi: Any) -> Any:
        return fnp.abs(dphi) <= -c2 * dphi0

    zero = fnp.zeros_like(phi0)
    false = fnp.asarray(False)
    state = _Search(
        zooming=false, done=false, failed=false, i=np.int64(0), j=np.int64(0),
        a_prev=zero, phi_prev=phi0, dphi_prev=dphi0,
        a_lo=zero, phi_lo=phi0, dphi_lo=dphi0, a_hi=zero, phi_hi=phi0, dphi_hi=dphi0,
        a_rec=zero, phi_rec=phi0, a_star=zero, phi_star=phi0, g_star=g0, nfev=np.int64(0),
    )  # fmt: skip

    def cond(s: _Search) -> Any:
        return ~s.done & ~s.failed & (s.i < maxiter)

    def body(s: _Search) -> _Search:
        # the trial step
        width = s.a_hi - s.a_lo
        left, right = fnp.minimum(s.a_lo, s.a_hi), fnp.maximum(s.a_lo, s.a_hi)
        cub = _cubic_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cub = (
            (s.j > 0) & (cub > left + 0.2 * fnp.abs(width)) & (cub < right - 0.2 * fnp.abs(width))
        )
        quad = _quad_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = (
            ~use_cub & (quad > left + 0.1 * fnp.abs(width)) & (quad < right - 0.1 * fnp.abs(width))
        )
        zoom_a = fnp.where(use_cub, cub, fnp.where(use_quad, quad, 0.5 * (s.a_lo + s.a_hi)))
        bracket_a = fnp.where(s.i == 0, start, 2 * s.a_prev)
        a = fnp.where(s.zooming, zoom_a, bracket_a)
        phi, dphi, g = restricted(a)
        nfev = s.nfev + 1
        bad = armijo_fails(a, phi)
        good_curv = curvature_holds(dphi)
        # bracketing
        to_zoom_lo_prev = ~s.zooming & (bad | ((phi >= s.phi_prev) & (s.i > 0)))
        accept_b = ~s.zooming & ~to_zoom_lo_prev & good_curv
        to_zoom_lo_a = ~s.zooming & ~to_zoom_lo_prev & ~accept_b & (dphi >= 0)
        # zooming
        z_hi = s.zooming & (bad | (phi >= s.phi_lo))
        accept_z = s.zooming & ~z_hi & good_curv
        z_flip = s.zooming & ~z_hi & ~accept_z & (dphi * (s.a_hi - s.a_lo) >= 0)
        z_lo = s.zooming & ~z_hi & ~accept_z
        accept = accept_b | accept_z
        # the new bracket [lo, hi] and the point remembered for the cubic
        a_lo = _pick(to_zoom_lo_prev, s.a_prev, _pick(to_zoom_lo_a | z_lo, a, s.a_lo))
        phi_lo = _pick(to_zoom_lo_prev, s.phi_prev, _pick(to_zoom_lo_a | z_lo, phi, s.phi_lo))
        dphi_lo = _pick(to_zoom_lo_prev, s.dphi_prev, _pick(to_zoom_lo_a | z_lo, dphi, s.dphi_lo))
        hi_new = to_zoom_lo_prev | z_hi
        a_hi = _pick(hi_new, a, _pick(to_zoom_lo_a, s.a_prev, _pick(z_flip, s.a_lo, s.a_hi)))
        phi_hi = _pick(
            hi_new, phi, _pick(to_zoom_lo_a, s.phi_prev, _pick(z_flip, s.phi_lo, s.phi_hi))
        )
        dphi_hi = _pick(
            hi_new, dphi, _pick(to_zoom_lo_a, s.dphi_prev, _pick(z_flip, s.dphi_lo, s.dphi_hi))
        )
        a_rec = _pick(
            z_hi | z_flip,
            s.a_hi,
            _pick(z_lo, s.a_lo, _pick(to_zoom_lo_prev | to_zoom_lo_a, s.a_prev, s.a_rec)),
        )
        phi_rec = _pick(
            z_hi | z_flip,
            s.phi_hi,
            _pick(z_lo, s.phi_lo, _pick(to_zoom_lo_prev | to_zoom_lo_a, s.phi_prev, s.phi_rec)),
        )
        zooming = s.zooming | to_zoom_lo_prev | to_zoom_lo_a
        j = fnp.where(s.zooming, s.j + 1, s.j)
        i = fnp.where(s.zooming, s.i, s.i + 1)
        failed = s.zooming & ~accept & ((fnp.abs(a_hi - a_lo) <= tiny) | (j >= 30))
        return _Search(
            zooming=zooming, done=s.done | accept, failed=s.failed | failed, i=i, j=j,
            a_prev=_pick(s.zooming, s.a_prev, a), phi_prev=_pick(s.zooming, s.phi_prev, phi),
            dphi_prev=_pick(s.zooming, s.dphi_prev, dphi),
            a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi,
            dphi_hi=dphi_hi, a_rec=a_rec, phi_rec=phi_rec,
            a_star=_pick(accept, a, s.a_star), phi_star=_pick(accept, phi, s.phi_star),
            g_star=_pick(accept, g, s.g_star), nfev=nfev,
        )  # fmt: skip

    s = lx.while_loop(cond, body, state)
    status = fnp.where(s.failed, 1, fnp.where(s.done, 0, 3))
    return _SearchResult(s.failed | ~s.done, status, s.a_star, s.phi_star, s.g_star, s.nfev)


# ---------------------------------------------------------------------------
# BFGS
# ---------------------------------------------------------------------------


class _BFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    H: Any
    old_old_f: Any
    ls_status: Any


def _norm(g: Any, order: Any) -> Any:
    if order == np.inf:
        return fnp.max(fnp.abs(g))
    if order == -np.inf:
        return fnp.min(fnp.abs(g))
    return fnp.sum(fnp.abs(g) ** order) ** (1.0 / order)


def _bfgs(
    fun: Callable[[Any], Any],
    x0: Any,
    maxiter: int | None = None,
    norm: Any = np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> tuple[_BFGS, Any]:
    d = core.get_aval(x0).shape[0]
    if maxiter is None:
        maxiter = 200 * d
    fun_and_grad = value_and_grad(fun)
    f0, g0 = fun_and_grad(x0)
    dt = core.get_aval(x0).dtype
    state = _BFGS(
        converged=_norm(g0, norm) < gtol,
        failed=fnp.asarray(False),
        k=np.int64(0),
        nfev=np.int64(1),
        x=x0,
        f=f0,
        g=g0,
        H=fnp.eye(d, dtype=dt),
        old_old_f=f0 + fnp.sqrt(fnp.sum(g0 * g0)) / 2,
        ls_status=np.int64(0),
    )

    def cond(s: _BFGS) -> Any:
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s: _BFGS) -> _BFGS:
        p = -(s.H @ s.g)
        ls = _line_search(fun_and_grad, s.x, p, s.f, s.g, s.old_old_f, line_search_maxiter)
        step = ls.a * p
        y = ls.g - s.g
        ys = fnp.dot(y, step)
        curved = (ys != 0) & fnp.isfinite(ys)
        rho = 1 / fnp.where(curved, ys, 1.0)
        eye = fnp.eye(d, dtype=dt)
        w = eye - rho * fnp.outer(step, y)
        H = w @ s.H @ w.T + rho * fnp.outer(step, step)  # the BFGS update
        H = fnp.where(curved & fnp.isfinite(rho), H, s.H)
        return _BFGS(
            converged=_norm(ls.g, norm) < gtol,
            failed=ls.failed,
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            x=s.x + step,
            f=ls.phi,
            g=ls.g,
            H=H,
            old_old_f=s.f,
            ls_status=ls.status,
        )

    s = lx.while_loop(cond, body, state)
    status = fnp.where(
        s.converged, 0, fnp.where(s.k == maxiter, 1, fnp.where(s.failed, 2 + s.ls_status, -1))
    )
    return s, status


_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


def minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple[Any, ...] = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize the scalar function ``fun(x, *args)`` over the 1-D array ``x`` from
    ``x0``; ``method="BFGS"`` (the only method, as JAX's supported one).

    ``options``: ``maxiter`` (default ``200 * x0.size``), ``gtol`` (stop when the
    gradient's ``norm`` falls below it; default 1e-5), ``norm`` (default ``inf``),
    ``line_search_maxiter`` (default 10). ``tol``, when given and ``gtol`` is not, is
    used as ``gtol`` (SciPy's meaning; JAX ignores ``tol``). Runs under ``jit`` and
    ``vmap``; differentiating through the result is not supported (the iterations
    are a ``while_loop``, but the solution's derivative is not what it computes).

    >>> import functrace.numpy as fnp
    >>> rosen = lambda x: 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    >>> res = minimize(rosen, fnp.array([-1.2, 1.0]), method="BFGS")
    >>> [round(float(v), 4) for v in res.x], int(res.status)
    ([1.0, 1.0], 0)
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: expected args to be a tuple, got {type(args).__name__}.")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: expected method='BFGS' (the only one), got {method!r}.")
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise TypeError(
            f"minimize: expected options among {_OPTIONS}, got unknown option(s) {unknown}."
        )
    if tol is not None and "gtol" not in opts:
        opts["gtol"] = tol
    x0 = asarray_or_tracer(x0, "minimize")
    aval = core.get_aval(x0)
    if aval.ndim != 1:
        raise ValueError(
            f"minimize: expected a 1-D x0, got shape {aval.shape}. Flatten the parameters "
            f"(functrace.flatten_util.ravel_pytree) and unflatten inside fun."
        )
    if aval.dtype.kind != "f":
        x0 = x0.astype(np.float64)

    def objective(x: Any) -> Any:
        return fun(x, *args)

    s, status = _bfgs(objective, x0, **opts)
    return OptimizeResults(
        x=s.x,
        success=s.converged & ~s.failed,
        status=status,
        fun=s.f,
        jac=s.g,
        hess_inv=s.H,
        nfev=s.nfev,
        njev=s.nfev,
        nit=s.k,
    )
