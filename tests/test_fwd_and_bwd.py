"""``fwd_and_bwd`` (JAX's ``jax.fwd_and_bwd``): the forward and backward passes as two
jitted functions, each compiled once, equal to ``vjp``'s, composing with ``vmap``."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
W = rng.standard_normal((4, 2))
CT = rng.standard_normal((3, 2))


def layer(x, w):
    return fnp.tanh(x @ w)


@pytest.mark.parametrize("jitted", [True, False])
def test_equals_vjp_and_compiles_once(jitted) -> None:
    fwd, bwd = ft.fwd_and_bwd(layer, argnums=(0, 1), jitted=jitted)
    _, f_vjp = ft.vjp(layer, X, W)
    for k in range(3):
        y, res = fwd(X, W + k)
        np.testing.assert_allclose(y, layer(X, W + k), rtol=1e-12, atol=1e-14)
        gx, gw = bwd(res, CT)
        want = ft.vjp(layer, X, W + k)[1](CT)
        np.testing.assert_allclose(gx, want[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gw, want[1], rtol=1e-12, atol=1e-14)
    if jitted:
        assert fwd.trace_count == 1 and bwd.trace_count == 1
    del f_vjp


def test_int_argnums_and_aux() -> None:
    def f(x, w):
        return fnp.sum(layer(x, w)), {"rows": x.shape[0]}

    fwd, bwd = ft.fwd_and_bwd(f, argnums=1, has_aux=True)
    y, res, aux = fwd(X, W)
    assert aux == {"rows": 3}
    g = bwd(res, 1.0)
    np.testing.assert_allclose(g, ft.grad(lambda w: f(X, w)[0])(W), rtol=1e-12, atol=1e-14)
    fwd, bwd = ft.fwd_and_bwd(layer, argnums=-1)
    np.testing.assert_allclose(bwd(fwd(X, W)[1], CT), ft.vjp(layer, X, W)[1](CT)[1])


def test_backward_batched_over_cotangents_and_threads() -> None:
    fwd, bwd = ft.fwd_and_bwd(layer, argnums=0)
    _, res = fwd(X, W)
    cts = rng.standard_normal((5, 3, 2))
    got = ft.vmap(lambda ct: bwd(res, ct))(cts)
    want = np.stack([ft.vjp(layer, X, W)[1](c)[0] for c in cts])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    out: dict[int, np.ndarray] = {}

    def run(i: int) -> None:
        out[i] = np.asarray(bwd(fwd(X + i, W)[1], CT))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        np.testing.assert_allclose(
            out[i], ft.vjp(layer, X + i, W)[1](CT)[0], rtol=1e-12, atol=1e-14
        )


def test_errors_name_the_function() -> None:
    with pytest.raises(TypeError, match="fwd_and_bwd: expected a callable"):
        ft.fwd_and_bwd(3, argnums=0)
    with pytest.raises(TypeError, match="fwd_and_bwd: expected argnums of ints"):
        ft.fwd_and_bwd(layer, argnums="x")
    fwd, _ = ft.fwd_and_bwd(layer, argnums=(0, 5))
    with pytest.raises(ValueError, match="fwd_and_bwd: expected argnums in"):
        fwd(X, W)


def test_custom_rules_and_hooks_pass_through() -> None:
    # a custom_vjp inside and a gradient hook closing over a traced argument: the jitted
    # backward pass applies both, as vjp does
    @ft.custom_vjp
    def clip_grad_tanh(x):
        return fnp.tanh(x)

    clip_grad_tanh.defvjp(
        lambda x: (fnp.tanh(x), x), lambda x, g: (fnp.clip(g * (1 - fnp.tanh(x) ** 2), -0.1, 0.1),)
    )

    def f(x, w, c):
        h = ft.grad_hook(x @ w, lambda g: g * c)
        return clip_grad_tanh(h)

    fwd, bwd = ft.fwd_and_bwd(f, argnums=(0, 1))
    c = np.float64(0.5)
    y, res = fwd(X, W, c)
    got = bwd(res, CT)
    want = ft.vjp(lambda x, w: f(x, w, c), X, W)[1](CT)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(y, f(X, W, c), rtol=1e-12, atol=1e-14)
