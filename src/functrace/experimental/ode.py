"""``functrace.experimental.ode.odeint``: adaptive Dormand-Prince integration of an
ODE, differentiable by the adjoint method (``jax.experimental.ode.odeint``).

The solver is the one JAX runs, so a program gives JAX's numbers (to rounding):

* **Steps**: the Dormand-Prince 5(4) pair (seven stages, the last one the next step's
  first), on the state raveled into one vector (``flatten_util.ravel_pytree``).
* **Step control**: a step is accepted when the root mean square of its error
  estimate, each component divided by ``atol + rtol * max(|y0|, |y1|)``, is at most 1.
  The next step is the last one times ``0.9 * ratio**(-1/5)``, kept between 0.2x
  (only after a rejected step; 1x after an accepted one) and 10x, and at most
  ``hmax``. The first step comes from Hairer, Norsett and Wanner's estimate (Solving
  ODEs I, II.4), which costs one more evaluation of ``func``.
* **Output times**: the solver steps past each requested time and evaluates there the
  quartic through the step's ends, their slopes and the Dormand-Prince midpoint.
* **Derivatives** (reverse mode): the adjoint system is integrated backwards between
  consecutive output times, with the same tolerances, for the cotangents of ``y0``,
  of every time in ``t`` and of ``args`` (Chen et al. 2018, appendix C). Forward mode
  is an error, as in JAX.

The loops are ``lax.scan`` over output times and ``lax.while_loop`` over steps: under
``jit`` they are compiled with the rest of the program, eagerly they run step by step.
A complex state is integrated as JAX does (its error ratio takes ``|err|``; the
cotangent of the times is the real part).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.api import closure_convert, vjp, vmap
from functrace.custom_derivatives import custom_vjp
from functrace.flatten_util import ravel_pytree
from functrace.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# The Dormand-Prince 5(4) tableau: stage times, stage weights, the fifth-order solution
# and its difference from the embedded fourth-order one, and the weights of the dense
# output at the step's midpoint (Shampine 1986).
_C = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_B_ERR = (
    35 / 384 - 1951 / 21600,
    0.0,
    500 / 1113 - 22642 / 50085,
    125 / 192 - 451 / 720,
    -2187 / 6784 + 12231 / 42400,
    11 / 84 - 649 / 6300,
    -1.0 / 60.0,
)
_B_MID = (
    6025192743 / 30085553152 / 2,
    0.0,
    51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2,
    11237099 / 235043384 / 2,
)
_SAFETY, _GROW, _SHRINK, _ORDER = 0.9, 10.0, 0.2, 5.0


def odeint(
    func: Callable[..., Any],
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: float = math.inf,
    hmax: float = math.inf,
) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)``, ``y(t[0]) = y0``, at the times
    ``t``: a pytree like ``y0`` whose leaves gain a leading axis of ``len(t)``.

    ``y0``: an array or a pytree of arrays; ``t``: a 1-d float array of strictly
    increasing times; ``args``: arrays, scalars or pytrees of them (differentiable);
    ``rtol``/``atol``: the local error tolerances; ``mxstep``: the most steps between
    two output times; ``hmax``: the largest step. ``func`` may close over traced values
    (they are differentiated too). See the module for the method.

    >>> import numpy as np
    >>> from functrace.experimental.ode import odeint
    >>> ys = odeint(lambda y, t, k: -k * y, 1.0, np.array([0.0, 1.0]), 2.0)
    >>> bool(abs(ys[1] - np.exp(-2.0)) < 1e-7)
    True
    """
    for leaf in tree_leaves(args):
        if not _is_value(leaf):
            raise TypeError(
                f"odeint: expected the *args passed to func to be arrays, scalars or "
                f"pytrees of them, got a leaf of type {type(leaf).__name__}: {leaf!r}."
            )
    t = t if isinstance(t, core.Tracer) else fnp.asarray(t)
    aval = core.get_aval(t)
    if aval.dtype.kind != "f" or len(aval.shape) != 1 or aval.shape[0] < 1:
        raise TypeError(
            f"odeint: expected t to be a 1-d array of floats (the output times, "
            f"increasing), got shape {aval.shape} and dtype {aval.dtype}."
        )
    for name, value in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if isinstance(value, core.Tracer) or not isinstance(value, (int, float, np.number)):
            raise TypeError(
                f"odeint: expected {name} to be a Python number (static), got "
                f"{type(value).__name__} {value!r}."
            )
    if not isinstance(t, core.Tracer):
        steps = np.diff(np.asarray(t))
        if not np.all(steps > 0):
            raise ValueError(
                f"odeint: expected the times t to be strictly increasing, got {np.asarray(t)}."
            )
    flat0, unravel = ravel_pytree(y0)
    y_aval = core.get_aval(flat0)
    if y_aval.dtype.kind not in "fc":
        raise TypeError(
            f"odeint: expected y0 to hold floating-point arrays (the state), got dtype "
            f"{y_aval.dtype}."
        )
    converted, consts = closure_convert(func, y0, t[0], *args)

    def flat_func(y: Any, s: Any, *a: Any) -> Any:
        # As in JAX, only the flattened lengths must agree: a derivative that
        # broadcasts a leaf to another shape of the same size is accepted.
        flat = ravel_pytree(converted(unravel(y), s, *a))[0]
        got = core.get_aval(flat)
        if got.shape != y_aval.shape or (got.dtype.kind == "c" and y_aval.dtype.kind != "c"):
            raise TypeError(
                f"odeint: expected func to return the time derivative of y, a pytree "
                f"like y0 of {y_aval.shape[0]} {y_aval.dtype} numbers in all, got "
                f"{got.shape[0]} {got.dtype} (a complex derivative needs a complex y0)."
            )
        return flat.astype(y_aval.dtype)  # the state's precision (float32 stays float32)

    if y_aval.shape[0] == 0:  # nothing to integrate
        n = aval.shape[0]
        avals = tree_map(core.get_aval, y0)
        return tree_map(lambda a: fnp.zeros((n, *a.shape), a.dtype), avals)
    ys = _solve(flat_func, float(rtol), float(atol), mxstep, float(hmax), flat0, t, *args, *consts)
    return _unravel_rows(unravel, ys)


def _is_value(x: Any) -> bool:
    if isinstance(x, (core.Tracer, bool, int, float, complex, np.number, np.bool_)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind in "biufc"


def _unravel_rows(unravel: Callable[[Any], Any], ys: Any) -> Any:
    """The pytree of ``unravel`` applied to each row of ``ys``, leaves stacked."""
    return vmap(unravel)(ys)


def _rk_step(f: Callable[[Any, Any], Any], y0: Any, f0: Any, t0: Any, dt: Any) -> Any:
    """One Dormand-Prince step: the new state, its slope, the error estimate and the
    list of the seven stage slopes."""
    h = fnp.asarray(dt).astype(y0.dtype)
    k = [f0]
    for c, row in zip(_C, _A):
        yi = y0 + h * _combine(row, k)
        k.append(f(yi, t0 + dt * c))
    y1 = y0 + h * _combine(_B, k)
    return y1, k[-1], h * _combine(_B_ERR, k), k


def _combine(weights: tuple[float, ...], k: list[Any]) -> Any:
    out = None
    for w, ki in zip(weights, k):
        if w != 0.0:
            out = w * ki if out is None else out + w * ki
    assert out is not None
    return out


def _error_ratio(err: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    r = fnp.abs(err) / tol
    return fnp.sqrt(fnp.mean(r * r))


def _next_step(dt: Any, ratio: Any, hmax: float) -> Any:
    shrink = fnp.where(ratio < 1, 1.0, _SHRINK)
    nonzero = fnp.where(ratio == 0, 1.0, ratio)  # (0 grows by _GROW: no 0 ** -0.2)
    factor = fnp.minimum(_GROW, fnp.maximum(nonzero ** (-1.0 / _ORDER) * _SAFETY, shrink))
    new = fnp.where(ratio == 0, dt * _GROW, dt * factor)
    return fnp.clip(new, 0.0, hmax)


def _first_step(
    f: Callable[[Any, Any], Any], t0: Any, y0: Any, f0: Any, rtol: float, atol: float
) -> Any:
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.linalg.norm(y0 / scale)
    d1 = fnp.linalg.norm(f0 / scale)
    tiny = (d0 < 1e-5) | (d1 < 1e-5)  # (the branch not taken never divides by 0)
    h0 = fnp.where(tiny, 1e-6, 0.01 * d0 / fnp.where(tiny, 1.0, d1))
    f1 = f(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale) / h0
    flat = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = fnp.where(
        flat,
        fnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / fnp.where(flat, 1.0, fnp.maximum(d1, d2))) ** (1.0 / 5.0),
    )
    return fnp.minimum(100.0 * h0, h1)


def _quartic(y0: Any, y1: Any, k: list[Any], dt: Any) -> Any:
    """Coefficients (highest power first) of the quartic in the step's fraction that
    matches the step's ends, their slopes and the Dormand-Prince midpoint."""
    h = fnp.asarray(dt).astype(y0.dtype)
    mid = y0 + h * _combine(_B_MID, k)
    s0, s1 = h * k[0], h * k[-1]
    a = -2.0 * s0 + 2.0 * s1 - 8.0 * y0 - 8.0 * y1 + 16.0 * mid
    b = 5.0 * s0 - 3.0 * s1 + 18.0 * y0 + 14.0 * y1 - 32.0 * mid
    c = -4.0 * s0 + s1 - 11.0 * y0 - 5.0 * y1 + 16.0 * mid
    return fnp.stack([a, b, c, s0, y0])


def _integrate(
    f: Callable[[Any, Any], Any],
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
) -> Any:
    """The flat solution at ``ts`` (rows), ``f(y, t)`` the flat derivative."""
    f0 = f(y0, ts[0])
    dt = fnp.clip(_first_step(f, ts[0], y0, f0, rtol, atol), 0.0, hmax)

    def to_time(carry: list[Any], target: Any) -> tuple[list[Any], Any]:
        def more(state: list[Any]) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state: list[Any]) -> list[Any]:
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, k = _rk_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_dt = _next_step(dt, ratio, hmax)
            ok = ratio <= 1.0
            taken = (y1, f1, t + dt, t, _quartic(y, y1, k, dt))
            kept = (y, fy, t, last_t, coeffs)
            y, fy, t, last_t, coeffs = (fnp.where(ok, a, b) for a, b in zip(taken, kept))
            return [i + 1, y, fy, t, new_dt, last_t, coeffs]

        out = lax.while_loop(more, step, [0, *carry])
        _, _, t, _, last_t, coeffs = carry = out[1:]
        frac = (target - last_t) / (t - last_t)
        return carry, fnp.polyval(coeffs, fnp.asarray(frac).astype(coeffs.dtype))

    coeffs = fnp.stack([y0] * 5)
    _, ys = lax.scan(to_time, [y0, f0, ts[0], dt, ts[0], coeffs], ts[1:])
    return fnp.concatenate([y0[None], ys])


def _solve_impl(
    func: Callable[..., Any],
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
    *args: Any,
) -> Any:
    return _integrate(lambda y, t: func(y, t, *args), rtol, atol, mxstep, hmax, y0, ts)


_solve = custom_vjp(_solve_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _solve_fwd(
    func: Callable[..., Any],
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
    *args: Any,
) -> Any:
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(
    func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, res: Any, g: Any
) -> Any:
    ys, ts, args = res
    ys, ts, g = fnp.asarray(ys), fnp.asarray(ts), fnp.asarray(g)  # (indexed by a tracer)

    def adjoint(state: Any, s: Any, *a: Any) -> Any:
        # Integrated in negated time (s = -t), from one output time back to the last.
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -s, *a)
        ct_y, ct_t, *ct_args = pullback(y_bar)
        return (-y_dot, ct_y, ct_t, tuple(ct_args))

    def back(carry: Any, i: Any) -> tuple[Any, Any]:
        y_bar, t0_bar, args_bar = carry
        t_bar = fnp.real(fnp.dot(func(ys[i], ts[i], *args), g[i]))
        t0_bar = t0_bar - t_bar
        span = fnp.stack([-ts[i], -ts[i - 1]])
        out = odeint(
            adjoint, (ys[i], y_bar, t0_bar, args_bar), span, *args,
            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax,
        )  # fmt: skip
        _, y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], out)
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    n = core.get_aval(ts).shape[0]
    zero_t = fnp.zeros((), core.get_aval(ts).dtype)
    init = (g[-1], zero_t, tree_map(fnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_t_bars = lax.scan(back, init, fnp.arange(n - 1, 0, -1))
    ts_bar = fnp.concatenate([t0_bar[None], rev_t_bars[::-1]])
    return (y_bar, ts_bar, *args_bar)


_solve.defvjp(_solve_fwd, _solve_bwd)
