"""``functrace.experimental.ode.odeint`` against JAX's numbers (recorded below from
``jax.experimental.ode.odeint`` 0.10.2 with x64 on), closed forms, finite differences,
and under every transform."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.experimental.ode import odeint
from functrace.test_util import check_grads

# The damped pendulum of JAX's own ode example: y0 = [pi - 0.1, 0], t in [0, 10] (101
# points), args (0.25, 9.8); outputs at t = 0, 2.5, 5, 7.5, 10.
PEND_THETA = [3.041592653589793, -1.4157227239984882, -0.677479625056759,
              0.37167008604877766, 0.6938458828999321]  # fmt: skip
PEND_OMEGA = [0.0, 3.405713083671245, 3.384855122418952, 2.599309497122111,
              -0.14548896834006628]  # fmt: skip
# grad of sum(theta**2) + sum(omega) over t = linspace(0, 1, 11), by y0, t, m, g.
PEND_GRAD_Y0 = [301.04372345561364, 89.88319381562528]
PEND_GRAD_T = [86.96042834735012, -1.5979138576341583, -2.3509728114934587,
               -3.298314780188745, -4.5112839861482374, -6.071160528024415,
               -8.062646036477844, -10.554021529180567, -13.549553051572449,
               -16.88998979070641, -20.074571975923828]  # fmt: skip
PEND_GRAD_ARGS = [7.96695539365994, -3.959099200883084]
# Lotka-Volterra with a dict state ({"prey": [2.0], "pred": 1.0}) and a closure over
# the parameters, rtol = atol = 1e-10, t = 0, 1, 2, 3.
LV_PREY = [2.0, 4.361918627356199, 8.270487809413197, 3.5034341662078474]
LV_PRED = [1.0, 0.742154151261535, 2.1226822867477027, 6.917420969558446]
LV_GRAD = {"a": 122.03031197318771, "b": -479.6217155858736}


def pend(y, t, m, g):
    theta, omega = y
    return [omega, -m * omega - g * fnp.sin(theta)]


def pend_loss(y0, ts, m, g):
    ys = odeint(pend, y0, ts, m, g)
    return fnp.sum(ys[0] ** 2) + fnp.sum(ys[1])


def lotka(p):
    a, b = p["a"], p["b"]

    def f(s, t):
        prey, pred = s["prey"], s["pred"]
        return {"prey": a * prey - b * prey * pred, "pred": -1.5 * pred + b * prey * pred}

    s0 = {"prey": np.array([2.0]), "pred": np.array(1.0)}
    return odeint(f, s0, np.linspace(0.0, 3.0, 4), rtol=1e-10, atol=1e-10)


def lotka_loss(p):
    out = lotka(p)
    return fnp.sum(out["prey"]) + fnp.sum(out["pred"] ** 2)


Y0 = [np.pi - 0.1, 0.0]
TS = np.linspace(0.0, 10.0, 101)
TS_SHORT = np.linspace(0.0, 1.0, 11)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_pendulum_matches_jax(wrap):
    f = (lambda *a: odeint(pend, *a)) if wrap == "eager" else ft.jit(lambda *a: odeint(pend, *a))
    theta, omega = f(Y0, TS, 0.25, 9.8)
    idx = [0, 25, 50, 75, 100]
    np.testing.assert_allclose(np.asarray(theta)[idx], PEND_THETA, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(np.asarray(omega)[idx], PEND_OMEGA, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_pendulum_adjoint_gradients_match_jax(wrap):
    g = ft.grad(pend_loss, argnums=(0, 1, 2, 3))
    gy, gt, gm, gg = (g if wrap == "eager" else ft.jit(g))(Y0, TS_SHORT, 0.25, 9.8)
    np.testing.assert_allclose(np.asarray(gy, float), PEND_GRAD_Y0, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(gt), PEND_GRAD_T, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([float(gm), float(gg)], PEND_GRAD_ARGS, rtol=1e-9)


def test_pytree_state_and_closure_over_differentiated_parameters_match_jax():
    p = {"a": 1.1, "b": 0.4}
    out = lotka(p)
    assert out["prey"].shape == (4, 1) and out["pred"].shape == (4,)
    np.testing.assert_allclose(np.asarray(out["prey"]).ravel(), LV_PREY, rtol=1e-11)
    np.testing.assert_allclose(np.asarray(out["pred"]), LV_PRED, rtol=1e-11)
    grads = ft.grad(lotka_loss)(p)
    for k, v in LV_GRAD.items():
        np.testing.assert_allclose(float(grads[k]), v, rtol=1e-8)


def test_closed_forms():
    ts = np.linspace(0.0, 3.0, 7)
    ys = odeint(lambda y, t, k: -k * y, np.array([1.0, 2.0]), ts, 0.7)
    np.testing.assert_allclose(np.asarray(ys), np.exp(-0.7 * ts)[:, None] * [1.0, 2.0], rtol=1e-7)
    # y'' = -y: (cos t, -sin t); and a time-dependent right-hand side y' = cos t
    osc = odeint(lambda y, t: fnp.stack([y[1], -y[0]]), np.array([1.0, 0.0]), ts)
    np.testing.assert_allclose(np.asarray(osc), np.stack([np.cos(ts), -np.sin(ts)], 1), atol=1e-7)
    drive = odeint(lambda y, t: fnp.cos(t), 0.0, ts)  # (JAX's error at t = 3: 1.4e-7 too)
    np.testing.assert_allclose(np.asarray(drive), np.sin(ts), atol=2e-7)
    # an empty state, and one output time: y0 alone
    empty = odeint(lambda y, t: {"a": -y["a"]}, {"a": np.zeros((0, 2))}, ts)
    assert empty["a"].shape == (7, 0, 2)
    np.testing.assert_array_equal(
        np.asarray(odeint(lambda y, t: y, np.ones(2), ts[:1])), [[1.0, 1.0]]
    )


def test_float32_stays_float32():
    ys = odeint(lambda y, t: -y, np.ones(3, np.float32), np.linspace(0, 1, 3, dtype=np.float32),
                rtol=1e-5, atol=1e-5)  # fmt: skip
    assert ys.dtype == np.float32
    # a float64 factor in func: the derivative is taken at the state's precision
    k = np.float64(1.0)
    ys = odeint(lambda y, t: -k * y, np.ones(3, np.float32), np.linspace(0, 1, 3, dtype=np.float32),
                rtol=1e-5, atol=1e-5)  # fmt: skip
    assert ys.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ys)[:, 0], np.exp(-np.linspace(0, 1, 3)), rtol=1e-5)


def test_hmax_keeps_a_short_pulse_that_long_steps_skip():
    # y' = a pulse of width 0.01 at t = 5 (area 0.01 * sqrt(pi)): from a quiet start the
    # solver's steps grow past it, unless hmax bounds them.
    def pulse(y, t):
        return fnp.exp(-(((t - 5.0) / 0.01) ** 2))

    ts = np.array([0.0, 10.0])
    area = 0.01 * np.sqrt(np.pi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a slope of 0 at the start: no division warnings
        skipped = float(odeint(pulse, 0.0, ts)[1])
        caught = float(ft.jit(lambda y0: odeint(pulse, y0, ts, hmax=0.002))(0.0)[1])  # 5000 steps
    assert skipped == 0.0  # as in JAX
    np.testing.assert_allclose(caught, area, rtol=1e-9)
    np.testing.assert_allclose(caught, 0.017724538509057114, rtol=1e-11)  # JAX's


def test_mxstep_bounds_the_steps_between_outputs():
    # One step of the first estimate cannot reach t = 10: the output is the
    # extrapolated quartic of the last step taken, not the solution.
    ts = np.array([0.0, 10.0])
    full = float(odeint(lambda y, t: -y, 1.0, ts)[1])
    capped = float(odeint(lambda y, t: -y, 1.0, ts, mxstep=1)[1])
    np.testing.assert_allclose(full, np.exp(-10.0), rtol=1e-6)
    np.testing.assert_allclose(capped, 287.8829818172988, rtol=1e-11)  # JAX's


def test_gradients_match_finite_differences():
    def f(y0, k):
        return odeint(lambda y, t, k: -k * y * fnp.sin(t + y), y0, np.linspace(0.0, 2.0, 5), k)

    check_grads(f, (np.array([0.3, -0.2]), 1.3), order=1, modes=("rev",), atol=1e-5, rtol=1e-5)


def test_vmap_matches_a_loop_and_composes_with_grad_and_jit():
    y0s = np.array([[np.pi - 0.1, 0.0], [1.0, 0.5], [0.2, -1.0]])

    def final(y0, m):
        ys = odeint(pend, [y0[0], y0[1]], TS_SHORT, m, 9.8)
        return ys[0][-1] + 0.5 * ys[1][-1]

    ms = np.array([0.25, 0.1, 0.4])
    loop = [float(final(y, m)) for y, m in zip(y0s, ms)]
    np.testing.assert_allclose(np.asarray(ft.vmap(final)(y0s, ms)), loop, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.vmap(final))(y0s, ms)), loop, rtol=1e-12)
    g_loop = np.stack([np.asarray(ft.grad(final)(y, m)) for y, m in zip(y0s, ms)])
    g_vmap = ft.vmap(ft.grad(final))(y0s, ms)
    np.testing.assert_allclose(np.asarray(g_vmap), g_loop, rtol=1e-9)
    np.testing.assert_allclose(
        np.asarray(ft.grad(ft.jit(final))(y0s[0], 0.25)), g_loop[0], rtol=1e-9
    )


def test_hooks_threads_and_custom_rules_around_odeint():
    """odeint's adjoint composes with what sits around it: a grad_hook on its output
    under vmap sees each example's cotangent (as a loop would), a custom_vjp calling it
    keeps its own rule, threads computing gradients at once get each its own numbers,
    and forward mode (which JAX's odeint has not either) is a clear error."""
    ts = np.linspace(0.0, 1.0, 4)

    def loss(y0, k, scale):
        ys = odeint(lambda y, t, k: -k * y + fnp.sin(t), y0, ts, k, rtol=1e-10, atol=1e-10)
        ys = ft.grad_hook(ys, lambda ct: ct * scale)
        return fnp.sum(ys[-1] ** 2)

    y0s, ks, scales = (
        np.array([[0.5, -0.2], [1.0, 0.3]]),
        np.array([0.7, 1.3]),
        np.array([2.0, -1.0]),
    )
    loop = [ft.grad(loss, argnums=(0, 1))(y, k, s) for y, k, s in zip(y0s, ks, scales)]
    g = ft.vmap(ft.grad(loss, argnums=(0, 1)))
    for run in (g, ft.jit(g), ft.grad(lambda y, k, s: fnp.sum(ft.vmap(loss)(y, k, s)), (0, 1))):
        gy, gk = run(y0s, ks, scales)
        np.testing.assert_allclose(np.asarray(gy), np.stack([a for a, _ in loop]), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(gk), [float(b) for _, b in loop], rtol=1e-10)
    plain = ft.grad(loss, argnums=(0, 1))(y0s[0], ks[0], 1.0)
    # (the adjoint's steps adapt to the scaled cotangent: equal to its tolerance)
    np.testing.assert_allclose(np.asarray(loop[0][0]), 2.0 * np.asarray(plain[0]), rtol=1e-9)

    @ft.custom_vjp
    def final(y0):
        return odeint(lambda y, t: -y, y0, ts)[-1]

    final.defvjp(lambda y0: (final(y0), None), lambda _, ct: (3.0 * ct,))
    np.testing.assert_allclose(np.asarray(ft.grad(lambda y: fnp.sum(final(y)))(y0s[0])), [3.0, 3.0])

    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        return np.asarray(ft.grad(loss)(y0s[i % 2], ks[i % 2], scales[i % 2]))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(8)))
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, np.asarray(loop[i % 2][0]))
    with pytest.raises(TypeError, match="jvp: expected a function differentiable in forward mode"):
        ft.jvp(lambda y: loss(y, 0.7, 1.0), (y0s[0],), (y0s[0],))


def test_bad_input_names_odeint():
    f = lambda y, t: -y  # noqa: E731
    with pytest.raises(TypeError, match="odeint: expected t to be a 1-d array of floats"):
        odeint(f, 1.0, np.arange(3))
    with pytest.raises(TypeError, match="odeint: expected t to be a 1-d array of floats"):
        odeint(f, 1.0, np.ones((2, 2)))
    with pytest.raises(TypeError, match="odeint: expected the \\*args"):
        odeint(lambda y, t, s: -y, 1.0, np.linspace(0, 1, 3), "fast")
    with pytest.raises(TypeError, match="odeint: expected rtol to be a Python number"):
        odeint(f, 1.0, np.linspace(0, 1, 3), rtol=None)
    with pytest.raises(ValueError, match="odeint: expected the times t to be strictly increasing"):
        odeint(f, 1.0, np.array([1.0, 0.0]))
    with pytest.raises(TypeError, match="odeint: expected y0 to hold floating-point arrays"):
        odeint(f, np.array([1, 2]), np.linspace(0, 1, 3))
    with pytest.raises(TypeError, match="odeint: expected func to return the time derivative"):
        odeint(lambda y, t: [y, y], 1.0, np.linspace(0, 1, 3))
    with pytest.raises(TypeError, match="a complex derivative needs a complex y0"):
        odeint(lambda y, t: 1j * y, 1.0, np.linspace(0, 1, 3))
    with pytest.raises(TypeError, match="custom_vjp"):  # forward mode, as in JAX
        ft.jvp(lambda y0: odeint(f, y0, np.linspace(0, 1, 3)), (1.0,), (1.0,))


# The cases JAX's own ode tests check (as behaviours: second-order reverse-mode
# gradients against finite differences at JAX's tolerance, 1e-3 in float64).
def _t_dependent(y, t):
    return fnp.stack([y[1] * -t, -1.0 * y[1] - 9.8 * fnp.sin(y[0])])


def _decay(y, t, a1, a2):
    return -fnp.sqrt(t) - y + a1 - fnp.mean((y + a2) ** 2)


def _swoop(y, t, a1, a2):
    return y - fnp.sin(t) - fnp.cos(t) * a1 + a2


_rng = np.random.RandomState(0)
JAX_CASES = {
    "pendulum": (pend, ([np.pi - 0.1, 0.0], TS_SHORT, 0.25, 9.8)),
    "pytree state": (
        lambda y, t: (-y[0], -y[1]),
        ((np.array(-0.1), np.array([[[0.1]]])), TS_SHORT),
    ),
    "time-dependent": (_t_dependent, (np.array([np.pi - 0.1, 0.0]), TS_SHORT)),
    "decay": (
        _decay,
        (_rng.randn(3), np.linspace(0.1, 0.2, 4), _rng.randn(3), _rng.randn(3)),
    ),
    "swoop": (_swoop, (np.linspace(0.1, 0.9, 10), np.array([0.1, 0.2]), 0.1, 0.2)),
    "swoop, large state": (_swoop, (np.linspace(1.1, 10.9, 10), np.array([0.1, 0.2]), 0.1, 0.3)),
}


@pytest.mark.parametrize("case", list(JAX_CASES))
def test_second_order_reverse_gradients_of_jax_test_cases(case):
    func, args = JAX_CASES[case]
    check_grads(lambda *a: odeint(func, *a), args, order=2, modes=("rev",), atol=1e-3, rtol=1e-3)


def test_grad_of_vmap_equals_the_sum_of_grads():
    t = np.array([0.0, 5.0])

    def one(x, y):
        return odeint(lambda s, _t: 0.1 * s, fnp.stack([x, y]), t)[-1].sum()

    def batched(x):
        y0 = fnp.stack([fnp.stack([x, 0.1]), fnp.stack([x, 0.2])])
        return ft.vmap(lambda s: odeint(lambda s_, _t: 0.1 * s_, s, t))(y0)[:, -1].sum()

    expected = float(ft.grad(one)(2.0, 0.1)) + float(ft.grad(one)(2.0, 0.2))
    np.testing.assert_allclose(float(ft.grad(batched)(2.0)), expected, rtol=2e-15, atol=5e-15)
    with ft.disable_jit():
        out = ft.vmap(lambda x0: odeint(lambda x, _t: x, x0, np.array([0.0, 1.0])))(np.ones((5, 2)))
    np.testing.assert_allclose(np.asarray(out)[:, 1], np.e, rtol=1e-7)


def test_complex_state_matches_jax():
    # y' = 1j * w * y - 0.1 * y * |y|, y0 = [1 + 0.5j, -0.3j], t = 0, 0.5, ..., 2, w = 1.3
    def f(y, t, w):
        return 1j * w * y - 0.1 * y * fnp.abs(y)

    y0, ts = np.array([1.0 + 0.5j, -0.3j]), np.linspace(0.0, 2.0, 5)
    final = np.asarray(odeint(f, y0, ts, 1.3))[-1]
    expected = [-0.9109457537398705 + 0.07114785938665451j,
                0.1458966105741809 + 0.24251567913542899j]  # fmt: skip
    np.testing.assert_allclose(final, expected, rtol=1e-11)
    gw, gt = ft.grad(lambda w, t: fnp.real(odeint(f, y0, t, w)).sum(), argnums=(0, 1))(1.3, ts)
    np.testing.assert_allclose(float(gw), -3.008747334678143, rtol=1e-9)
    np.testing.assert_allclose(
        np.asarray(gt),
        [3.388770414009622, -0.9840388025608975, -1.170557493355439, -0.9055173014683008,
         -0.32865681662498486],
        rtol=1e-9,
    )  # fmt: skip
