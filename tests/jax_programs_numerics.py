"""JAX programs on numerical methods, run under JAX and under functrace.

A third set next to ``tests/jax_programs.py`` and ``tests/jax_programs_tutorials.py``,
with the same contract: each program is a function of the library namespace (``jax``
itself, with ``jax_enable_x64``, when ``tests/fixtures/jax_programs_numerics.npz`` was
recorded; ``functrace`` in tests/test_jax_programs_numerics.py), written as a JAX user
writes it, returning a dict of NumPy arrays. The programs exercise what the first two
sets do not: quasi-Newton minimisation, ODE solves and their adjoints, implicit
differentiation, parallel prefix scans, rematerialisation in loops, convolutional
networks, attention and the ``nn`` helpers, spectral methods, batched linear algebra,
sorting and selection, host callbacks and staging, image and signal resampling,
contractions and polynomials, a Hamiltonian Monte Carlo chain, a small molecular
dynamics run, robust statistics, SciPy's linear algebra, PDE solvers and solvers under
transformations. Strings are returned only as the names of error types. Nothing here
imports JAX.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def bfgs_minimize(jax: Any) -> dict[str, np.ndarray]:
    """scipy.optimize.minimize(method="BFGS") on a four-dimensional Rosenbrock function
    under jit and on an L2-regularised logistic regression with data passed as args."""
    jnp = jax.numpy
    minimize = jax.scipy.optimize.minimize

    def rosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    r4 = jax.jit(lambda x0: minimize(rosen, x0, method="BFGS"))(jnp.array([0.5, -0.3, 1.4, 0.2]))

    rng = _rng(3)
    xs = rng.normal(size=(30, 3))
    ys = (xs @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.normal(size=30) > 0).astype(np.float64)

    def nll(w, x, y):
        z = x @ w[:3] + w[3]
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.05 * jnp.sum(w[:3] ** 2)

    rl = minimize(nll, jnp.zeros(4), args=(xs, ys), method="BFGS", options={"gtol": 1e-8})
    return {
        "rosen4_x": np.asarray(r4.x),
        "rosen4_fun": np.asarray(r4.fun),
        "rosen4_success": np.asarray(r4.success),
        "logreg_x": np.asarray(rl.x),
        "logreg_fun": np.asarray(rl.fun),
        "logreg_success": np.asarray(rl.success),
        "logreg_grad_at_x": np.asarray(jax.grad(nll)(rl.x, xs, ys)),
    }


def bfgs_rosenbrock_classic_start(jax: Any) -> dict[str, np.ndarray]:
    """minimize(method="BFGS") on the two-dimensional Rosenbrock function from the
    textbook start (-1.2, 1): the result, its status and the iteration count."""
    jnp = jax.numpy

    def rosen(x):
        return 100.0 * (x[1] - x[0] ** 2) ** 2 + (1.0 - x[0]) ** 2

    res = jax.scipy.optimize.minimize(rosen, jnp.array([-1.2, 1.0]), method="BFGS")
    return {
        "x": np.asarray(res.x),
        "fun": np.asarray(res.fun),
        "success": np.asarray(res.success),
        "status": np.asarray(res.status),
        "nit": np.asarray(res.nit),
    }


def ode_solves_and_adjoints(jax: Any) -> dict[str, np.ndarray]:
    """experimental.ode.odeint of a damped oscillator and of Lotka-Volterra, and
    jitted grads through the solve with respect to the parameters and the initial
    state."""
    jnp = jax.numpy
    odeint = jax.experimental.ode.odeint

    def oscillator(y, t, k, c):
        return jnp.stack([y[1], -k * y[0] - c * y[1]])

    ts = jnp.linspace(0.0, 3.0, 7)
    y0 = jnp.array([1.0, 0.0])
    osc = odeint(oscillator, y0, ts, 2.0, 0.3, rtol=1e-10, atol=1e-10)

    def lotka(y, t, p):
        prey, pred = y[0], y[1]
        return jnp.stack([p[0] * prey - p[1] * prey * pred, p[2] * prey * pred - p[3] * pred])

    params = jnp.array([1.1, 0.4, 0.1, 0.4])
    lts = jnp.linspace(0.0, 2.0, 5)

    def lv_loss(y0, p):
        ys = odeint(lotka, y0, lts, p, rtol=1e-9, atol=1e-9)
        return jnp.sum(ys[-1] ** 2) + jnp.sum(ys[:, 0])

    g_y0, g_p = jax.jit(jax.grad(lv_loss, argnums=(0, 1)))(jnp.array([10.0, 5.0]), params)
    g_k = jax.jit(
        jax.grad(lambda k: odeint(oscillator, y0, ts, k, 0.3, rtol=1e-10, atol=1e-10)[-1, 0])
    )(2.0)
    return {
        "oscillator": np.asarray(osc),
        "lotka_volterra": np.asarray(
            odeint(lotka, jnp.array([10.0, 5.0]), lts, params, rtol=1e-9, atol=1e-9)
        ),
        "lv_grad_y0": np.asarray(g_y0),
        "lv_grad_params": np.asarray(g_p),
        "oscillator_grad_k": np.asarray(g_k),
    }


def implicit_differentiation(jax: Any) -> dict[str, np.ndarray]:
    """lax.custom_root around Newton's method for a square root and for a fixed point
    of cos, and lax.custom_linear_solve around a conjugate-gradient solve written with
    fori_loop; values, grad and jvp."""
    jnp = jax.numpy
    lax = jax.lax

    def newton(f, x0):
        def body(_, x):
            return x - f(x) / jax.grad(f)(x)

        return lax.fori_loop(0, 30, body, x0)

    def tangent_solve(g, y):
        return y / g(1.0)

    def my_sqrt(a):
        return lax.custom_root(lambda x: x**2 - a, 1.0, newton, tangent_solve)

    def cos_fixed_point(a):
        return lax.custom_root(lambda x: a * jnp.cos(x) - x, 0.5, newton, tangent_solve)

    rng = _rng(5)
    m = rng.normal(size=(4, 4))
    spd = m @ m.T + 4.0 * np.eye(4)
    b = rng.normal(size=4)

    def cg(matvec, rhs):
        def body(_, state):
            x, r, p = state
            ap = matvec(p)
            alpha = jnp.dot(r, r) / jnp.dot(p, ap)
            x = x + alpha * p
            r_new = r - alpha * ap
            beta = jnp.dot(r_new, r_new) / jnp.dot(r, r)
            return x, r_new, r_new + beta * p

        x, _, _ = lax.fori_loop(0, 4, body, (jnp.zeros_like(rhs), rhs, rhs))
        return x

    def solve(scale, rhs):
        a = scale * spd
        return lax.custom_linear_solve(lambda v: a @ v, rhs, cg, symmetric=True)

    def solve_loss(scale, rhs):
        return jnp.sum(jnp.sin(solve(scale, rhs)))

    primal, tangent = jax.jvp(my_sqrt, (2.0,), (1.0,))
    return {
        "sqrt": np.asarray(jax.vmap(my_sqrt)(jnp.array([2.0, 9.0, 0.25]))),
        "sqrt_grad": np.asarray(jax.vmap(jax.grad(my_sqrt))(jnp.array([2.0, 9.0, 0.25]))),
        "sqrt_jvp": np.asarray([primal, tangent]),
        "sqrt_hessian": np.asarray(jax.grad(jax.grad(my_sqrt))(4.0)),
        "fixed_point": np.asarray(cos_fixed_point(1.3)),
        "fixed_point_grad": np.asarray(jax.jit(jax.grad(cos_fixed_point))(1.3)),
        "cg_solution": np.asarray(solve(1.0, b)),
        "cg_grads": np.asarray(
            jnp.concatenate(
                [jnp.atleast_1d(g) for g in jax.grad(solve_loss, argnums=(0, 1))(1.5, b)]
            )
        ),
        "cg_jvp": np.asarray(jax.jvp(lambda s: solve(s, b), (1.5,), (1.0,))[1]),
    }


def associative_scans(jax: Any) -> dict[str, np.ndarray]:
    """lax.associative_scan for prefix sums and maxima (along an axis), a linear
    recurrence h_t = a_t h_(t-1) + b_t forwards and reversed, checked against a
    lax.scan, and the recurrence's gradient."""
    jnp = jax.numpy
    lax = jax.lax
    rng = _rng(7)
    x = rng.normal(size=(3, 6))
    a = rng.uniform(0.5, 1.0, size=9)
    b = rng.normal(size=9)

    def combine(left, right):
        a_l, b_l = left
        a_r, b_r = right
        return a_r * a_l, a_r * b_l + b_r

    def recurrence(a, b, reverse=False):
        return lax.associative_scan(combine, (a, b), reverse=reverse)[1]

    def by_scan(a, b):
        return lax.scan(lambda h, ab: (ab[0] * h + ab[1],) * 2, 0.0, (a, b))[1]

    def loss(a, b):
        return jnp.sum(recurrence(a, b) ** 2) + jnp.sum(jnp.sin(recurrence(a, b, True)))

    ga, gb = jax.grad(loss, argnums=(0, 1))(a, b)
    return {
        "prefix_sum": np.asarray(lax.associative_scan(jnp.add, x, axis=1)),
        "prefix_max_reverse": np.asarray(lax.associative_scan(jnp.maximum, x, reverse=True)),
        "recurrence": np.asarray(recurrence(a, b)),
        "recurrence_reverse": np.asarray(
            jax.jit(functools.partial(recurrence, reverse=True))(a, b)
        ),
        "recurrence_vs_scan": np.asarray(
            jnp.max(jnp.abs(recurrence(a, b) - by_scan(a, b))) < 1e-12
        ),
        "grad_a": np.asarray(ga),
        "grad_b": np.asarray(gb),
    }


def remat_in_scan(jax: Any) -> dict[str, np.ndarray]:
    """jax.checkpoint with checkpoint_policies and prevent_cse around the body of a
    lax.scan (a small tanh RNN): the loss and its gradients agree for every policy."""
    jnp = jax.numpy
    lax = jax.lax
    rng = _rng(9)
    w = rng.normal(size=(4, 4)) * 0.5
    u = rng.normal(size=(3, 4)) * 0.5
    xs = rng.normal(size=(6, 3))

    def make_loss(policy, prevent_cse):
        def cell(h, x, w, u):
            return jnp.tanh(h @ w + x @ u)

        cell = jax.checkpoint(cell, policy=policy, prevent_cse=prevent_cse)

        def loss(w, u):
            def step(h, x):
                h = cell(h, x, w, u)
                return h, jnp.sum(h)

            h, sums = lax.scan(step, jnp.zeros(4), xs)
            return jnp.sum(h**2) + jnp.sum(sums * jnp.arange(6.0))

        return loss

    policies = jax.checkpoint_policies
    out = {}
    for name, policy, cse in [
        ("none", None, True),
        ("nothing", policies.nothing_saveable, True),
        ("dots", policies.dots_saveable, False),
        ("everything", policies.everything_saveable, False),
    ]:
        loss = make_loss(policy, cse)
        val, (gw, gu) = jax.value_and_grad(loss, argnums=(0, 1))(w, u)
        out[f"{name}_value"] = np.asarray(val)
        out[f"{name}_grad_w"] = np.asarray(gw)
        out[f"{name}_grad_u"] = np.asarray(gu)
    out["jit_grad_w"] = np.asarray(jax.jit(jax.grad(make_loss(policies.dots_saveable, True)))(w, u))
    return out


def small_cnn_training(jax: Any) -> dict[str, np.ndarray]:
    """A CNN written with lax.conv_general_dilated (NHWC/HWIO, a stride, SAME padding,
    a depthwise feature_group_count layer) and lax.reduce_window max and average
    pooling, trained for three jitted gradient steps."""
    jnp = jax.numpy
    lax = jax.lax
    rng = _rng(11)
    images = rng.normal(size=(4, 8, 8, 2))
    labels = np.array([0, 1, 2, 1])
    params = {
        "c1": rng.normal(size=(3, 3, 2, 4)) * 0.3,
        "dw": rng.normal(size=(3, 3, 1, 4)) * 0.3,
        "dense": rng.normal(size=(4, 3)) * 0.3,
    }
    dn = ("NHWC", "HWIO", "NHWC")

    def forward(p, x):
        h = lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=dn)
        h = jax.nn.relu(h)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(
            h, p["dw"], (2, 2), "SAME", dimension_numbers=dn, feature_group_count=4
        )
        h = jnp.tanh(h)
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
        h = jnp.mean(h, axis=(1, 2))
        return h @ p["dense"]

    def loss(p, x, y):
        logp = jax.nn.log_softmax(forward(p, x))
        return -jnp.mean(jnp.sum(jax.nn.one_hot(y, 3) * logp, axis=-1))

    @jax.jit
    def step(p, x, y):
        val, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.5 * b, p, g), val

    losses = []
    for _ in range(3):
        params, val = step(params, images, labels)
        losses.append(val)
    return {
        "logits_shape": np.asarray(forward(params, images).shape),
        "losses": np.asarray(losses),
        "c1": np.asarray(params["c1"]),
        "dw": np.asarray(params["dw"]),
        "dense": np.asarray(params["dense"]),
    }


def attention_and_nn_helpers(jax: Any) -> dict[str, np.ndarray]:
    """jax.nn.dot_product_attention (float32: a mask, is_causal, a bias) and its
    gradient; softmax/log_softmax with where, one_hot, logsumexp with b, where and
    return_sign, gelu both ways, silu, standardize, and their gradients."""
    jnp = jax.numpy
    nn = jax.nn
    rng = _rng(13)
    q = rng.normal(size=(2, 5, 2, 4)).astype(np.float32)
    k = rng.normal(size=(2, 6, 2, 4)).astype(np.float32)
    v = rng.normal(size=(2, 6, 2, 4)).astype(np.float32)
    bias = rng.normal(size=(1, 2, 5, 6)).astype(np.float32)
    mask = rng.uniform(size=(2, 1, 5, 6)) > 0.3
    mask[..., 0] = True
    qs = rng.normal(size=(2, 6, 2, 4)).astype(np.float32)
    x = rng.normal(size=(3, 5))
    keep = rng.uniform(size=(3, 5)) > 0.25
    keep[:, 0] = True
    wts = rng.uniform(-1.0, 2.0, size=(3, 5))

    def attn_loss(q, k, v):
        out = nn.dot_product_attention(q, k, v, bias=bias, mask=mask)
        return jnp.sum(out * jnp.cos(out))

    dq, dk, dv = jax.grad(attn_loss, argnums=(0, 1, 2))(q, k, v)
    lse, sign = jax.scipy.special.logsumexp(x, axis=1, b=wts, return_sign=True)

    def helper_loss(x):
        return (
            jnp.sum(nn.gelu(x, approximate=False) * nn.silu(x))
            + jnp.sum(nn.gelu(x) ** 2)
            + jnp.sum(nn.standardize(x, axis=-1) * wts)
            + jnp.sum(nn.logsumexp(x, axis=0, where=keep))
        )

    return {
        "attention": np.asarray(nn.dot_product_attention(q, k, v, bias=bias, mask=mask)),
        "attention_causal": np.asarray(nn.dot_product_attention(qs, k, v, is_causal=True)),
        "attention_dq": np.asarray(dq),
        "attention_dk": np.asarray(dk),
        "attention_dv": np.asarray(dv),
        "softmax_where": np.asarray(nn.softmax(x, axis=-1, where=keep)),
        "log_softmax": np.asarray(nn.log_softmax(x, axis=0)),
        "one_hot": np.asarray(nn.one_hot(jnp.array([0, 2, 5, -1]), 4)),
        "one_hot_axis0": np.asarray(nn.one_hot(jnp.array([1, 0]), 3, axis=0, dtype=jnp.int32)),
        "logsumexp_b": np.asarray(lse),
        "logsumexp_sign": np.asarray(sign),
        "logsumexp_where": np.asarray(nn.logsumexp(x, axis=1, where=keep)),
        "gelu_exact": np.asarray(nn.gelu(x, approximate=False)),
        "gelu_tanh": np.asarray(nn.gelu(x)),
        "silu": np.asarray(nn.silu(x)),
        "standardize": np.asarray(nn.standardize(x, axis=0)),
        "helpers_grad": np.asarray(jax.grad(helper_loss)(x)),
    }


def spectral_methods(jax: Any) -> dict[str, np.ndarray]:
    """jnp.fft: rfft/irfft round trips, fft2, fftfreq/rfftfreq and fftshift, a
    spectral derivative of a periodic function, a spectral low-pass filter and the
    gradient of a power-spectrum loss through rfft."""
    jnp = jax.numpy
    fft = jnp.fft
    n = 16
    t = jnp.arange(n) * (2 * np.pi / n)
    f = jnp.sin(3 * t) + 0.5 * jnp.cos(t)
    k = fft.rfftfreq(n, d=1.0 / n)
    deriv = fft.irfft(1j * k * fft.rfft(f), n=n)
    rng = _rng(17)
    img = rng.normal(size=(6, 8))
    sig = rng.normal(size=12)

    def power_loss(x):
        spec = fft.rfft(x)
        return jnp.sum(jnp.abs(spec) ** 2 * jnp.arange(7.0)) + jnp.real(spec[2])

    def lowpass(x, keep):
        spec = fft.rfft(x)
        return fft.irfft(jnp.where(jnp.arange(spec.shape[0]) < keep, spec, 0.0), n=x.shape[0])

    return {
        "rfft": np.asarray(fft.rfft(sig)),
        "irfft_odd": np.asarray(fft.irfft(fft.rfft(sig), n=11)),
        "fft2": np.asarray(fft.fft2(img)),
        "ifft2_real": np.asarray(jnp.real(fft.ifft2(fft.fft2(img)))),
        "fftfreq": np.asarray(fft.fftfreq(7, d=0.5)),
        "fftshift": np.asarray(fft.fftshift(fft.fftfreq(8))),
        "ifftshift_2d": np.asarray(fft.ifftshift(img, axes=(0,))),
        "spectral_derivative": np.asarray(deriv),
        "derivative_error": np.asarray(
            jnp.max(jnp.abs(deriv - (3 * jnp.cos(3 * t) - 0.5 * jnp.sin(t))))
        ),
        "lowpass": np.asarray(jax.jit(lowpass, static_argnums=1)(sig, 3)),
        "power_grad": np.asarray(jax.grad(power_loss)(sig)),
        "lowpass_grad": np.asarray(jax.grad(lambda x: jnp.sum(lowpass(x, 4) ** 3))(sig)),
    }


def batched_linear_algebra(jax: Any) -> dict[str, np.ndarray]:
    """jnp.linalg on a stack of matrices (solve, inv, eigh, svd, qr, slogdet,
    cholesky, pinv, lstsq, matrix_power, norm), the same under vmap, and gradients of
    slogdet- and eigh-based losses of a symmetric matrix built from parameters."""
    jnp = jax.numpy
    la = jnp.linalg
    rng = _rng(19)
    a = rng.normal(size=(3, 4, 4)) + 3.0 * np.eye(4)
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    b = rng.normal(size=(3, 4, 2))
    tall = rng.normal(size=(6, 3))
    y = rng.normal(size=6)
    w, v = la.eigh(spd)
    s = la.svd(a, compute_uv=False)
    q, r = la.qr(a)
    sign, logdet = la.slogdet(a)

    def logdet_loss(m):
        spd = m @ m.T + jnp.eye(4)
        return la.slogdet(spd)[1] + jnp.trace(la.inv(spd))

    def eig_loss(m):
        evals, evecs = la.eigh(m @ m.T)
        return jnp.sum(evals**1.5) + jnp.sum(evecs[:, -1] ** 4)

    return {
        "solve": np.asarray(la.solve(a, b)),
        "inv": np.asarray(la.inv(a)),
        "eigh_values": np.asarray(w),
        "eigh_reconstruct": np.asarray(v @ (w[..., None] * np.swapaxes(v, -1, -2))),
        "svd_values": np.asarray(s),
        "qr_abs_diag": np.asarray(jnp.abs(jnp.diagonal(r, axis1=-2, axis2=-1))),
        "qr_product": np.asarray(q @ r),
        "slogdet": np.asarray(sign * logdet),
        "cholesky": np.asarray(la.cholesky(spd)),
        "pinv": np.asarray(la.pinv(tall)),
        "lstsq": np.asarray(la.lstsq(tall, y)[0]),
        "matrix_power": np.asarray(la.matrix_power(a[0] / 4.0, 5)),
        "matrix_power_neg": np.asarray(la.matrix_power(a[1], -2)),
        "norms": np.asarray([la.norm(a[0]), la.norm(a[0], 2), la.norm(a[0], "nuc"), la.norm(y, 1)]),
        "vmap_solve": np.asarray(jax.vmap(la.solve)(a, b[..., 0])),
        "vmap_det": np.asarray(jax.vmap(la.det)(a)),
        "logdet_grad": np.asarray(jax.grad(logdet_loss)(a[0])),
        "eig_grad": np.asarray(jax.grad(eig_loss)(a[2])),
        "vmap_logdet_grad": np.asarray(jax.vmap(jax.grad(logdet_loss))(a)),
    }


def sorting_and_selection(jax: Any) -> dict[str, np.ndarray]:
    """lax.top_k, argsort (stable, descending), sort with a gradient, unique with
    size/fill_value and return_counts, nonzero with size, searchsorted (both sides),
    bincount with length, histogram, argpartition (as a selected set) and a jitted
    trimmed mean."""
    jnp = jax.numpy
    lax = jax.lax
    x = jnp.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0])
    ints = jnp.array([2, 0, 2, 5, 3, 2, 0, 1])
    vals, idx = lax.top_k(x, 3)
    uniq, counts = jnp.unique(ints, size=6, fill_value=-1, return_counts=True)
    hist, edges = jnp.histogram(x, bins=4, range=(0.0, 10.0))
    # searchsorted and histogram counts have NumPy's int64 in functrace (their
    # docstrings), JAX's int32 and float64: compared as int64
    hist = hist.astype(jnp.int64)

    def trimmed_mean(v):
        s = jnp.sort(v)
        return jnp.mean(s[2:-2])

    part = jnp.argpartition(x, 3)
    return {
        "top_k_values": np.asarray(vals),
        "top_k_indices": np.asarray(idx),
        "top_k_rows": np.asarray(lax.top_k(jnp.reshape(x, (2, 5)), 2)[1]),
        "argsort_stable": np.asarray(jnp.argsort(x, stable=True)),
        "argsort_descending": np.asarray(jnp.argsort(x, stable=True, descending=True)),
        "sort_grad": np.asarray(jax.grad(lambda v: jnp.sum(jnp.sort(v) * jnp.arange(10.0)))(x)),
        "unique": np.asarray(uniq),
        "unique_counts": np.asarray(counts),
        "unique_jit": np.asarray(jax.jit(lambda v: jnp.unique(v, size=4, fill_value=99))(ints)),
        "nonzero": np.asarray(jax.jit(lambda v: jnp.nonzero(v > 3.0, size=6)[0])(x)),
        "searchsorted_left": np.asarray(
            jnp.searchsorted(jnp.sort(x), jnp.array([1.0, 4.5, 9.0])).astype(jnp.int64)
        ),
        "searchsorted_right": np.asarray(
            jnp.searchsorted(jnp.sort(x), jnp.array([1.0, 4.5, 9.0]), side="right").astype(
                jnp.int64
            )
        ),
        "bincount": np.asarray(jax.jit(lambda v: jnp.bincount(v, length=7))(ints)),
        "bincount_weights": np.asarray(jnp.bincount(ints, weights=x[:8], length=6)),
        "histogram": np.asarray(hist),
        "histogram_edges": np.asarray(edges),
        "argpartition_low": np.asarray(jnp.sort(x[part[:3]])),
        "argpartition_kth": np.asarray(x[part[3]]),
        "trimmed_mean_grad": np.asarray(jax.jit(jax.grad(trimmed_mean))(x)),
    }


def host_interaction(jax: Any) -> dict[str, np.ndarray]:
    """pure_callback (with vmap_method, under jit and vmap), debug.callback, eval_shape
    with ShapeDtypeStruct, the equation count of a make_jaxpr of elementwise code,
    jit(...).lower(...).compile() and ensure_compile_time_eval."""
    jnp = jax.numpy
    seen = []

    def host_cumsum(x):
        return np.cumsum(np.asarray(x), axis=-1)

    def f(x):
        shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
        y = jax.pure_callback(host_cumsum, shape, x, vmap_method="expand_dims")
        jax.debug.callback(lambda v: seen.append(float(np.sum(v))), y)
        return y * 2.0

    x = jnp.arange(6.0).reshape(2, 3)
    jitted = jax.jit(f)(x)
    mapped = jax.vmap(f)(x)
    spec = jax.eval_shape(
        lambda a, b: (a @ b, jnp.sum(a, axis=0).astype(jnp.int32)),
        jax.ShapeDtypeStruct((3, 4), jnp.float32),
        jax.ShapeDtypeStruct((4, 5), jnp.float32),
    )
    # array arguments: functrace's functions of weak Python scalars give strong values
    # (README, "Weak types"), which would add a conversion to the count
    jaxpr = jax.make_jaxpr(lambda a, b: jnp.sin(a) * b + a)(jnp.ones(3), jnp.ones(3))
    compiled = jax.jit(lambda a: jnp.cumsum(a) ** 2).lower(jnp.ones(4)).compile()

    @jax.jit
    def with_constant(a):
        with jax.ensure_compile_time_eval():
            table = jnp.cos(jnp.arange(4.0))
        return a * table

    return {
        "callback_jit": np.asarray(jitted),
        "callback_vmap": np.asarray(mapped),
        "callback_grad_free": np.asarray(f(x)),
        "debug_seen": np.asarray(sorted(seen)),
        "eval_shape_shapes": np.asarray([spec[0].shape, (spec[1].shape[0], 0)]),
        "eval_shape_dtypes": np.asarray([spec[0].dtype == np.float32, spec[1].dtype == np.int32]),
        "jaxpr_eqns": np.asarray(len(jaxpr.jaxpr.eqns)),
        "jaxpr_invars": np.asarray(len(jaxpr.jaxpr.invars)),
        "compiled": np.asarray(compiled(jnp.arange(4.0))),
        "compile_time_eval": np.asarray(with_constant(jnp.full(4, 2.0))),
    }


def images_and_signals(jax: Any) -> dict[str, np.ndarray]:
    """image.resize (linear, cubic, lanczos3), scipy.ndimage.map_coordinates (orders
    0 and 1, a mode), scipy.signal.convolve2d and fftconvolve, jnp.convolve in every
    mode, and gradients through resize and map_coordinates."""
    jnp = jax.numpy
    rng = _rng(23)
    img = rng.normal(size=(5, 6))
    kern = rng.normal(size=(3, 2))
    a = rng.normal(size=8)
    b = rng.normal(size=3)
    coords = jnp.array([[0.5, 1.2, 3.9, -0.4], [2.5, 0.0, 4.7, 1.1]])
    nd = jax.scipy.ndimage
    sig = jax.scipy.signal

    def loss(im):
        up = jax.image.resize(im, (9, 7), method="cubic")
        pts = nd.map_coordinates(im, coords, order=1, mode="nearest")
        return jnp.sum(up**2) + jnp.sum(pts * jnp.arange(4.0))

    return {
        "resize_linear": np.asarray(jax.image.resize(img, (8, 4), method="linear")),
        "resize_cubic": np.asarray(jax.image.resize(img, (9, 7), method="cubic")),
        "resize_lanczos3": np.asarray(jax.image.resize(img, (3, 10), method="lanczos3")),
        "map_coords_0": np.asarray(nd.map_coordinates(img, coords, order=0)),
        "map_coords_1": np.asarray(
            nd.map_coordinates(img, coords, order=1, mode="constant", cval=-1.0)
        ),
        "map_coords_wrap": np.asarray(nd.map_coordinates(img, coords, order=1, mode="wrap")),
        "convolve2d_full": np.asarray(sig.convolve2d(img, kern)),
        "convolve2d_same": np.asarray(sig.convolve2d(img, kern, mode="same")),
        "fftconvolve_valid": np.asarray(sig.fftconvolve(img, kern, mode="valid")),
        "convolve_full": np.asarray(jnp.convolve(a, b)),
        "convolve_same": np.asarray(jnp.convolve(a, b, mode="same")),
        "convolve_valid": np.asarray(jnp.convolve(a, b, mode="valid")),
        "correlate": np.asarray(jnp.correlate(a, b, mode="full")),
        "grad": np.asarray(jax.grad(loss)(img)),
        "conv_grad": np.asarray(
            jax.grad(lambda b: jnp.sum(jnp.convolve(a, b, mode="same") ** 2))(b)
        ),
    }


def contractions_and_polynomials(jax: Any) -> dict[str, np.ndarray]:
    """einsum with an ellipsis, a trace, a repeated index and optimize=, tensordot,
    kron, vander, polyfit/polyval, interp, trapezoid, cumsum/cumprod/diff/gradient,
    and their gradients."""
    jnp = jax.numpy
    rng = _rng(29)
    a = rng.normal(size=(2, 3, 4))
    b = rng.normal(size=(4, 5))
    c = rng.normal(size=(5, 3))
    sq = rng.normal(size=(3, 3))
    xs = jnp.linspace(-1.0, 2.0, 9)
    ys = 1.0 - 2.0 * xs + 0.5 * xs**2 + 0.1 * jnp.sin(5 * xs)

    def chain(a, b, c):
        return jnp.einsum("...ij,jk,kl->...il", a, b, c, optimize="greedy")

    def loss(a, b, sq):
        return (
            jnp.sum(chain(a, b, c) ** 2)
            + jnp.einsum("ii->", sq) ** 2
            + jnp.sum(jnp.einsum("bij,jk->bik", a, b) * 0.1)
            + jnp.sum(jnp.cumprod(1.0 + 0.1 * sq.ravel()))
            + jnp.sum(jnp.gradient(sq, axis=1) ** 2)
        )

    ga, gb, gsq = jax.grad(loss, argnums=(0, 1, 2))(a, b, sq)
    coef = jnp.polyfit(xs, ys, 2)
    return {
        "einsum_chain": np.asarray(chain(a, b, c)),
        "einsum_trace": np.asarray(jnp.einsum("ii", sq)),
        "einsum_diag": np.asarray(jnp.einsum("ii->i", sq)),
        "einsum_batch_outer": np.asarray(jnp.einsum("bij,bik->bjk", a, a)),
        "einsum_ellipsis_sum": np.asarray(jnp.einsum("...j->...", a)),
        "tensordot": np.asarray(jnp.tensordot(a, b, axes=([2], [0]))),
        "tensordot_int": np.asarray(jnp.tensordot(sq, sq, axes=2)),
        "kron": np.asarray(jnp.kron(sq[:2, :2], jnp.eye(2) + 1.0)),
        "vander": np.asarray(jnp.vander(jnp.array([1.0, 2.0, 3.0]), 4, increasing=True)),
        "polyfit": np.asarray(coef),
        "polyval": np.asarray(jnp.polyval(coef, jnp.array([0.0, 0.5, 3.0]))),
        "interp": np.asarray(jnp.interp(jnp.array([-2.0, 0.1, 1.55, 5.0]), xs, ys, left=0.0)),
        "trapezoid": np.asarray(jnp.trapezoid(ys, xs)),
        "cumsum": np.asarray(jnp.cumsum(a, axis=1)),
        "diff": np.asarray(jnp.diff(ys, n=2)),
        "gradient": np.asarray(jnp.gradient(ys, xs)),
        "grad_a": np.asarray(ga),
        "grad_b": np.asarray(gb),
        "grad_sq": np.asarray(gsq),
        "interp_grad": np.asarray(
            jax.grad(lambda q: jnp.sum(jnp.interp(q, xs, ys) ** 2))(jnp.array([0.1, 1.55]))
        ),
        "trapezoid_grad": np.asarray(jax.grad(lambda y: jnp.trapezoid(y**2, xs))(ys)),
    }


def hmc_sampler(jax: Any) -> dict[str, np.ndarray]:
    """Hamiltonian Monte Carlo on a correlated two-dimensional target written with
    scipy.stats log-densities: a leapfrog integrator using grad, a Metropolis
    correction with random.uniform, the chain as a jitted lax.scan over split keys."""
    jnp = jax.numpy
    stats = jax.scipy.stats
    cov = jnp.array([[1.0, 0.8], [0.8, 1.5]])

    def log_density(x):
        return (
            stats.multivariate_normal.logpdf(x, jnp.array([0.5, -1.0]), cov)
            + stats.norm.logpdf(x[0], 0.0, 3.0)
            + stats.t.logpdf(x[1], 4.0)
        )

    def leapfrog(x, p, eps, n):
        def body(_, state):
            x, p = state
            p = p + 0.5 * eps * jax.grad(log_density)(x)
            x = x + eps * p
            p = p + 0.5 * eps * jax.grad(log_density)(x)
            return x, p

        return jax.lax.fori_loop(0, n, body, (x, p))

    def hmc_step(x, key):
        k_mom, k_acc = jax.random.split(key)
        p0 = jax.random.normal(k_mom, (2,))
        x1, p1 = leapfrog(x, p0, 0.2, 5)
        log_ratio = (log_density(x1) - 0.5 * jnp.sum(p1**2)) - (
            log_density(x) - 0.5 * jnp.sum(p0**2)
        )
        accept = jnp.log(jax.random.uniform(k_acc)) < log_ratio
        x_new = jnp.where(accept, x1, x)
        return x_new, (x_new, accept, log_ratio)

    keys = jax.random.split(jax.random.PRNGKey(42), 25)
    final, (chain, accepted, ratios) = jax.jit(lambda x: jax.lax.scan(hmc_step, x, keys))(
        jnp.array([2.0, 2.0])
    )
    return {
        "final": np.asarray(final),
        "chain": np.asarray(chain),
        "accepted": np.asarray(accepted),
        "log_ratios": np.asarray(ratios),
        "mean": np.asarray(jnp.mean(chain, axis=0)),
        "eager_first_step": np.asarray(hmc_step(jnp.array([2.0, 2.0]), keys[0])[0]),
    }


def lennard_jones_dynamics(jax: Any) -> dict[str, np.ndarray]:
    """A Lennard-Jones cluster: pair energies from vmap-ed pairwise displacements with
    the self-pairs masked by a double where, forces by grad, and velocity-Verlet steps
    under jit with fori_loop; energy drift and a per-particle force check."""
    jnp = jax.numpy
    lax = jax.lax
    rng = _rng(31)
    grid = np.stack(np.meshgrid(np.arange(2.0), np.arange(2.0), np.arange(2.0)), -1).reshape(-1, 3)
    pos0 = 1.12 * grid + 0.05 * rng.normal(size=(8, 3))
    vel0 = 0.1 * rng.normal(size=(8, 3))
    n = pos0.shape[0]

    def energy(pos):
        disp = jax.vmap(lambda a: jax.vmap(lambda b: a - b)(pos))(pos)
        r2 = jnp.sum(disp**2, axis=-1)
        off = ~jnp.eye(n, dtype=bool)
        safe = jnp.where(off, r2, 1.0)
        inv6 = 1.0 / safe**3
        pair = jnp.where(off, 4.0 * (inv6**2 - inv6), 0.0)
        return 0.5 * jnp.sum(pair)

    force = jax.grad(lambda p: -energy(p))

    @jax.jit
    def run(pos, vel):
        def step(_, state):
            pos, vel, f = state
            vel_half = vel + 0.5 * 0.005 * f
            pos = pos + 0.005 * vel_half
            f = force(pos)
            return pos, vel_half + 0.5 * 0.005 * f, f

        return lax.fori_loop(0, 20, step, (pos, vel, force(pos)))

    pos, vel, _ = run(pos0, vel0)

    def total(pos, vel):
        return energy(pos) + 0.5 * jnp.sum(vel**2)

    return {
        "energy0": np.asarray(energy(pos0)),
        "forces0": np.asarray(force(pos0)),
        "net_force": np.asarray(jnp.abs(jnp.sum(force(pos0), axis=0)) < 1e-10),
        "positions": np.asarray(pos),
        "velocities": np.asarray(vel),
        "drift": np.asarray(total(pos, vel) - total(pos0, vel0)),
        "batched_energy": np.asarray(jax.vmap(energy)(jnp.stack([pos0, pos]))),
    }


def special_functions_and_quadrature(jax: Any) -> dict[str, np.ndarray]:
    """scipy.special functions inside a Gauss-Legendre quadrature built from
    eigvalsh of the Jacobi matrix, a Gamma-Poisson marginal likelihood with gammaln,
    xlogy and betaln and its gradient, and erf/erfinv round trips under vmap."""
    jnp = jax.numpy
    sp = jax.scipy.special
    n = 6
    k = jnp.arange(1.0, n)
    off = k / jnp.sqrt(4.0 * k**2 - 1.0)
    jacobi = jnp.diag(off, 1) + jnp.diag(off, -1)
    nodes, vecs = jnp.linalg.eigh(jacobi)
    weights = 2.0 * vecs[0] ** 2
    counts = jnp.array([0.0, 3.0, 1.0, 7.0, 2.0])

    def neg_marginal(log_ab):
        a, b = jnp.exp(log_ab[0]), jnp.exp(log_ab[1])
        ll = (
            sp.gammaln(counts + a)
            - sp.gammaln(a)
            - sp.gammaln(counts + 1.0)
            + sp.xlogy(a, b)
            - sp.xlogy(counts + a, b + 1.0)
        )
        return -jnp.sum(ll) + sp.betaln(a, b)

    z = jnp.array([-0.9, -0.3, 0.0, 0.45, 0.99])
    return {
        "nodes": np.asarray(nodes),
        "weights": np.asarray(weights),
        "integral_exp": np.asarray(jnp.sum(weights * jnp.exp(nodes))),
        "integral_erf": np.asarray(jnp.sum(weights * sp.erf(nodes) * nodes)),
        "neg_marginal": np.asarray(neg_marginal(jnp.array([0.3, -0.2]))),
        "neg_marginal_grad": np.asarray(jax.grad(neg_marginal)(jnp.array([0.3, -0.2]))),
        "neg_marginal_hessian": np.asarray(jax.hessian(neg_marginal)(jnp.array([0.3, -0.2]))),
        "erfinv_roundtrip": np.asarray(jax.vmap(lambda v: sp.erf(sp.erfinv(v)))(z)),
        "erfinv_grad": np.asarray(jax.vmap(jax.grad(sp.erfinv))(z)),
        "digamma": np.asarray(sp.digamma(jnp.array([0.5, 1.0, 7.5]))),
        "gammaincc": np.asarray(sp.gammaincc(2.5, jnp.array([0.1, 1.0, 4.0]))),
    }


def robust_statistics(jax: Any) -> dict[str, np.ndarray]:
    """Quantiles (every interpolation method), percentile and median with their
    gradients, nan-aware reductions, weighted averages, cov/corrcoef, masked means
    with where=, lax.cummax/cummin and lax.sort of several operands with num_keys."""
    jnp = jax.numpy
    lax = jax.lax
    rng = _rng(37)
    x = rng.normal(size=(4, 7))
    xn = x.copy()
    xn[1, 2] = np.nan
    xn[3, 0] = np.nan
    w = rng.uniform(0.5, 2.0, size=7)
    keep = rng.uniform(size=(4, 7)) > 0.3
    keep[:, 0] = True
    out = {}
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        out[f"quantile_{method}"] = np.asarray(
            jnp.quantile(x, jnp.array([0.1, 0.5, 0.93]), axis=1, method=method)
        )
    keys = jnp.array([2, 0, 2, 1, 0, 1, 2])
    vals = jnp.arange(7.0)
    sk, sv = lax.sort((keys, -vals), num_keys=1)
    out.update(
        {
            "percentile": np.asarray(jnp.percentile(x, 37.5, axis=0)),
            "median": np.asarray(jnp.median(x, axis=1, keepdims=True)),
            "quantile_grad": np.asarray(
                jax.grad(lambda v: jnp.sum(jnp.quantile(v, jnp.array([0.25, 0.8]), axis=1)))(x)
            ),
            "median_grad": np.asarray(
                jax.jit(jax.grad(lambda v: jnp.sum(jnp.median(v, axis=0))))(x)
            ),
            "nanmean": np.asarray(jnp.nanmean(xn, axis=1)),
            "nanstd": np.asarray(jnp.nanstd(xn, axis=0, ddof=1)),
            "nanmax": np.asarray(jnp.nanmax(xn, axis=1)),
            "nanmedian": np.asarray(jnp.nanmedian(xn, axis=1)),
            "nansum_grad": np.asarray(jax.grad(lambda v: jnp.nansum(jnp.sin(v)))(xn)),
            "average": np.asarray(jnp.average(x, axis=1, weights=w)),
            "average_returned": np.asarray(jnp.average(x, axis=1, weights=w, returned=True)[1]),
            "average_grad": np.asarray(
                jax.grad(lambda w: jnp.sum(jnp.average(x, axis=1, weights=w) ** 2))(w)
            ),
            "cov": np.asarray(jnp.cov(x)),
            "cov_weighted": np.asarray(jnp.cov(x, aweights=w, ddof=0)),
            "corrcoef": np.asarray(jnp.corrcoef(x[0], x[1])),
            "mean_where": np.asarray(jnp.mean(x, axis=1, where=keep)),
            "var_where": np.asarray(jnp.var(x, axis=1, where=keep)),
            "cummax": np.asarray(lax.cummax(x, axis=1)),
            "cummin_reverse": np.asarray(lax.cummin(x, axis=0, reverse=True)),
            "cummax_grad": np.asarray(
                jax.grad(lambda v: jnp.sum(lax.cummax(v, axis=1) * jnp.arange(7.0)))(x)
            ),
            "sort_keys": np.asarray(sk),
            "sort_values": np.asarray(sv),
            "lexsort": np.asarray(jnp.lexsort((vals, keys))),
        }
    )
    return out


def scipy_linalg_pipeline(jax: Any) -> dict[str, np.ndarray]:
    """jax.scipy.linalg: lu_factor/lu_solve, cho_factor/cho_solve, solve_triangular,
    expm and its gradient, block_diag; jnp.linalg's multi_dot, tensorsolve,
    matrix_rank, cond, vector_norm/matrix_norm, svd without full matrices and
    qr(mode="r"), on float64 and a float32 stack."""
    jnp = jax.numpy
    sl = jax.scipy.linalg
    la = jnp.linalg
    rng = _rng(41)
    a = rng.normal(size=(4, 4)) + 2.0 * np.eye(4)
    spd = a @ a.T + np.eye(4)
    b = rng.normal(size=(4, 2))
    tall = rng.normal(size=(5, 3))
    low = np.tril(a) + 3.0 * np.eye(4)
    lu_piv = sl.lu_factor(a)
    cho = sl.cho_factor(spd, lower=True)
    u, s, vt = la.svd(tall, full_matrices=False)
    f32 = (rng.normal(size=(2, 3, 3)) + 3.0 * np.eye(3)).astype(np.float32)

    def expm_loss(m):
        return jnp.sum(sl.expm(0.3 * m) * jnp.arange(16.0).reshape(4, 4))

    return {
        "lu_solve": np.asarray(sl.lu_solve(lu_piv, b)),
        "lu_solve_trans": np.asarray(sl.lu_solve(lu_piv, b, trans=1)),
        "cho_solve": np.asarray(sl.cho_solve(cho, b)),
        "solve_triangular": np.asarray(sl.solve_triangular(low, b, lower=True)),
        "solve_triangular_t": np.asarray(sl.solve_triangular(low, b, lower=True, trans="T")),
        "expm": np.asarray(sl.expm(0.3 * a)),
        "expm_grad": np.asarray(jax.grad(expm_loss)(a)),
        "block_diag": np.asarray(sl.block_diag(a[:2, :2], jnp.ones((1, 3)), 5.0)),
        "multi_dot": np.asarray(la.multi_dot([tall.T, tall, a[:3, :3], tall.T])),
        "tensorsolve": np.asarray(la.tensorsolve(spd.reshape(4, 2, 2), b[:, 0])),
        "matrix_rank": np.asarray(la.matrix_rank(tall @ tall.T)),
        "cond": np.asarray([la.cond(a), la.cond(a, "fro"), la.cond(a, 1)]),
        "vector_norm": np.asarray(la.vector_norm(tall, ord=3, axis=0)),
        "matrix_norm": np.asarray([la.matrix_norm(a, ord=1), la.matrix_norm(a, ord=-np.inf)]),
        "svd_reconstruct": np.asarray((u * s) @ vt),
        "svd_shapes": np.asarray([u.shape, vt.shape]),
        "qr_r_abs": np.asarray(jnp.abs(la.qr(tall, mode="r"))),
        "f32_inv": np.asarray(la.inv(f32)),
        "f32_det": np.asarray(la.det(f32)),
        "f32_solve_grad": np.asarray(
            jax.grad(lambda m: jnp.sum(la.solve(m, jnp.ones((2, 3), jnp.float32)[..., None])))(f32)
        ),
    }


def pde_solvers(jax: Any) -> dict[str, np.ndarray]:
    """The heat equation three ways: explicit steps with jnp.roll in a lax.scan,
    Crank-Nicolson with lax.linalg.tridiagonal_solve (and the gradient of the final
    state in the diffusivity), a periodic Poisson solve with fft2; jnp.pad's modes
    and a two-dimensional jnp.gradient with spacings."""
    jnp = jax.numpy
    lax = jax.lax
    n = 12
    xs = jnp.linspace(0.0, 1.0, n, endpoint=False)
    u0 = jnp.exp(-40.0 * (xs - 0.4) ** 2)
    dx = 1.0 / n

    def explicit(kappa, u):
        r = kappa * 1e-3 / dx**2

        def step(u, _):
            u = u + r * (jnp.roll(u, 1) - 2.0 * u + jnp.roll(u, -1))
            return u, jnp.sum(u**2)

        return lax.scan(step, u, None, length=15)

    def crank_nicolson(kappa, u):
        r = kappa * 2e-3 / dx**2
        ones = jnp.ones(n)
        dl = (-0.5 * r * ones).at[0].set(0.0)
        du = (-0.5 * r * ones).at[-1].set(0.0)
        d = (1.0 + r) * ones

        def step(u, _):
            rhs = u + 0.5 * r * (jnp.pad(u[:-1], (1, 0)) - 2.0 * u + jnp.pad(u[1:], (0, 1)))
            return lax.linalg.tridiagonal_solve(dl, d, du, rhs[:, None])[:, 0], None

        return lax.scan(step, u, None, length=6)[0]

    k = 2.0 * np.pi * jnp.fft.fftfreq(n, d=dx)
    kx, ky = jnp.meshgrid(k, k, indexing="ij")
    src = jnp.sin(2.0 * np.pi * xs)[:, None] * jnp.cos(4.0 * np.pi * xs)[None, :]
    k2 = kx**2 + ky**2
    phi_hat = jnp.where(k2 > 0, -jnp.fft.fft2(src) / jnp.where(k2 > 0, k2, 1.0), 0.0)
    img = jnp.arange(12.0).reshape(3, 4) ** 1.5
    final, energies = explicit(0.8, u0)
    return {
        "explicit_final": np.asarray(final),
        "explicit_energy": np.asarray(energies),
        "explicit_grad": np.asarray(jax.grad(lambda k: explicit(k, u0)[0][3])(0.8)),
        "cn_final": np.asarray(crank_nicolson(0.8, u0)),
        "cn_grad": np.asarray(jax.grad(lambda k: jnp.sum(crank_nicolson(k, u0) ** 3))(0.8)),
        "cn_grad_u0": np.asarray(jax.jit(jax.grad(lambda u: crank_nicolson(0.8, u)[5]))(u0)),
        "poisson": np.asarray(jnp.real(jnp.fft.ifft2(phi_hat))),
        "pad_reflect": np.asarray(jnp.pad(img, ((1, 2), (2, 1)), mode="reflect")),
        "pad_symmetric": np.asarray(jnp.pad(img, 2, mode="symmetric")),
        "pad_edge_wrap": np.asarray(jnp.pad(jnp.pad(img, (0, 2), mode="edge"), 1, mode="wrap")),
        "pad_linear_ramp": np.asarray(jnp.pad(img, 2, mode="linear_ramp", end_values=-1.0)),
        "gradient_2d": np.asarray(jnp.stack(jnp.gradient(img, 0.5, 2.0))),
        "gradient_axis1": np.asarray(jnp.gradient(img, jnp.array([0.0, 1.0, 3.0, 3.5]), axis=1)),
    }


def transformed_solvers(jax: Any) -> dict[str, np.ndarray]:
    """Solvers under transformations: vmap of minimize, odeint differentiated in the
    end time, jacrev in the initial state and vmap-ed over a rate, custom_root around
    a while_loop under jacfwd of vmap and hessian, lax.map with batch_size, scan with
    unroll and reverse, batched while_loop/switch/cond, and gradients of linear
    algebra (svd, qr, lstsq, pinv, the 2-norm, cond, matrix_power), of the incomplete
    gamma function in its shape and of jnp.gradient with coordinates."""
    jnp = jax.numpy
    lax = jax.lax
    odeint = jax.experimental.ode.odeint

    def quad(x, c):
        return jnp.sum((x - c) ** 2 * jnp.arange(1.0, 4.0)) + jnp.sum(x**4)

    cs = jnp.array([[1.0, -2.0, 0.5], [0.3, 0.3, -1.0]])
    res = jax.vmap(lambda c: jax.scipy.optimize.minimize(quad, jnp.zeros(3), (c,), method="BFGS"))(
        cs
    )

    def decay(y, t, a):
        return -a * y * t

    def pendulum(y, t):
        return jnp.stack([y[1], -jnp.sin(y[0])])

    def cube_root(a):
        def solve(g, x0):
            return lax.while_loop(
                lambda x: jnp.abs(g(x)) > 1e-13, lambda x: x - g(x) / jax.grad(g)(x), x0
            )

        return lax.custom_root(lambda x: x**3 - a, 1.0, solve, lambda g, y: y / g(1.0))

    def until(x):
        return lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] * 1.5), (0.0, 1.0))[1]

    m2 = jnp.array([[1.0, 0.2], [0.3, 2.0]])
    m3 = jnp.array([[1.0, 0.2], [0.3, 2.0], [0.5, -1.0]])
    sq3 = jnp.array([[1.0, 0.2, 0.0], [0.3, 2.0, 1.0], [0.0, 0.5, 3.0]])
    coords = jnp.array([0.0, 0.4, 1.5, 1.7, 3.0])
    return {
        "vmap_minimize_x": np.asarray(res.x),
        "vmap_minimize_nit": np.asarray(res.nit),
        "ode_grad_end_time": np.asarray(
            jax.grad(lambda t: odeint(decay, 1.0, jnp.array([0.0, t]), 0.7)[-1])(1.3)
        ),
        "ode_jacrev_y0": np.asarray(
            jax.jacrev(lambda y0: odeint(pendulum, y0, jnp.linspace(0.0, 2.0, 4)))(
                jnp.array([0.5, 0.1])
            )
        ),
        "ode_vmap": np.asarray(
            jax.vmap(lambda a: odeint(decay, 1.0, jnp.linspace(0.0, 1.0, 3), a))(
                jnp.array([0.2, 1.5])
            )
        ),
        "cube_root_jacfwd": np.asarray(jax.jacfwd(jax.vmap(cube_root))(jnp.array([2.0, 27.0]))),
        "cube_root_hessian": np.asarray(jax.hessian(cube_root)(5.0)),
        "map_batch_size": np.asarray(
            lax.map(lambda x: jnp.sin(x) * x, jnp.arange(7.0), batch_size=3)
        ),
        "scan_unroll_reverse": np.asarray(
            lax.scan(lambda c, x: (c * 0.9 + x, c), 0.0, jnp.arange(5.0), unroll=2, reverse=True)[1]
        ),
        "vmap_while": np.asarray(jax.vmap(until)(jnp.array([1.0, 3.0, 4.5]))),
        "vmap_switch": np.asarray(
            jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda t: t**2], x))(
                jnp.array([0, 2, 5, -1]), jnp.arange(4.0)
            )
        ),
        "vmap_cond": np.asarray(
            jax.vmap(lambda p, x: lax.cond(p > 0, lambda t: t * 2, lambda t: -t, x))(
                jnp.array([1.0, -1.0]), jnp.array([3.0, 4.0])
            )
        ),
        "hessian_scan": np.asarray(
            jax.hessian(
                lambda x: lax.scan(lambda c, _: (jnp.sin(c) * x, None), x, None, length=4)[0]
            )(0.8)
        ),
        "grad_svd_u": np.asarray(
            jax.grad(lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a)[0][:, 0])))(sq3)
        ),
        "grad_qr": np.asarray(
            jax.grad(
                lambda a: (
                    jnp.sum(jnp.linalg.qr(a)[1] ** 2) + jnp.sum(jnp.linalg.qr(a)[0][:, 0] ** 3)
                )
            )(m3)
        ),
        "grad_lstsq": np.asarray(
            jax.grad(lambda a: jnp.sum(jnp.linalg.lstsq(a, jnp.array([1.0, 2.0, 0.5]))[0] ** 2))(m3)
        ),
        "grad_pinv_wide": np.asarray(jax.grad(lambda a: jnp.sum(jnp.linalg.pinv(a) ** 2))(m3.T)),
        "grad_norm2_cond": np.asarray(
            jax.grad(lambda a: jnp.linalg.norm(a, ord=2) + jnp.linalg.cond(a))(m2)
        ),
        "grad_matrix_power": np.asarray(
            jax.grad(lambda a: jnp.sum(jnp.linalg.matrix_power(a, -3)))(m2)
        ),
        "gamma_cdf_grad_shape": np.asarray(
            jax.vmap(jax.grad(lambda k, x: jax.scipy.stats.gamma.cdf(x, k, scale=1.3)))(
                jnp.array([0.6, 1.7, 4.0]), jnp.array([0.3, 2.0, 5.5])
            )
        ),
        "gammaincc_grad_shape": np.asarray(
            jax.jit(jax.grad(lambda a: jnp.sum(jax.scipy.special.gammaincc(a, 2.0))))(
                jnp.array([0.5, 2.5])
            )
        ),
        "gradient_coords_grad": np.asarray(
            jax.grad(lambda f: jnp.sum(jnp.gradient(f, coords) ** 2))(jnp.sin(coords))
        ),
    }


PROGRAMS = {
    f.__name__: f
    for f in (
        bfgs_minimize,
        bfgs_rosenbrock_classic_start,
        ode_solves_and_adjoints,
        implicit_differentiation,
        associative_scans,
        remat_in_scan,
        small_cnn_training,
        attention_and_nn_helpers,
        spectral_methods,
        batched_linear_algebra,
        sorting_and_selection,
        host_interaction,
        images_and_signals,
        contractions_and_polynomials,
        hmc_sampler,
        lennard_jones_dynamics,
        special_functions_and_quadrature,
        robust_statistics,
        scipy_linalg_pipeline,
        pde_solvers,
        transformed_solvers,
    )
}
