"""``pmap``: JAX's values (``fixtures/pmap_jax.npz``, recorded on 4 host devices), a
loop over the instances, its transforms, retracing, threads, custom rules and errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.test_util import check_grads
from pmap_cases import XM, cases
from recorded import assert_matches_recorded


def test_programs_match_jax():
    assert_matches_recorded(cases(ft), "pmap_jax.npz", lambda k, v: 1e-12)


def test_equals_a_loop_over_the_instances_for_any_size():
    def f(x, w):
        return fnp.tanh(x @ w).sum() * x[0]

    w = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    for n in (1, 3, 8):
        x = np.random.default_rng(n).standard_normal((n, 3))
        got = ft.pmap(f, in_axes=(0, None))(x, w)
        want = np.stack([np.tanh(x[k] @ w).sum() * x[k, 0] for k in range(n)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
        assert type(got) is ft.Array


def test_derivatives_through_and_inside():
    f = ft.pmap(lambda x: fnp.sin(x) * lax.psum(x**2, "i"), axis_name="i")
    check_grads(lambda x: f(x), (XM,), order=2, modes=("fwd", "rev"))
    g = ft.pmap(ft.grad(lambda x: (x * lax.pmean(x, "i")).sum()), axis_name="i")
    want = ft.vmap(ft.grad(lambda x: (x * lax.pmean(x, "i")).sum()), axis_name="i")(XM)
    np.testing.assert_allclose(np.asarray(g(XM)), np.asarray(want), rtol=1e-13)


def test_static_arguments_retrace_and_keywords_are_mapped():
    calls = []

    def f(x, n):
        calls.append(n)
        return x * n

    pf = ft.pmap(f, static_broadcasted_argnums=(1,))
    np.testing.assert_allclose(np.asarray(pf(XM, 2)), XM * 2)
    np.testing.assert_allclose(np.asarray(pf(XM, 2)), XM * 2)
    np.testing.assert_allclose(np.asarray(pf(XM, 5)), XM * 5)
    assert calls == [2, 5]  # traced once per static value
    kw = ft.pmap(lambda x, *, scale: x * scale)(XM, scale=np.arange(4.0))
    np.testing.assert_allclose(np.asarray(kw), XM * np.arange(4.0)[:, None])


def test_custom_rules_and_hooks_inside():
    @ft.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (fnp.clip(g, -0.5, 0.5),))
    seen = []

    def hook(g):
        seen.append(np.asarray(g))
        return g * 2

    def loss(x):
        return (clip_grad(x) ** 2).sum() + ft.grad_hook(x, hook).sum()

    got = ft.pmap(ft.grad(loss))(XM)
    want = np.clip(2 * XM, -0.5, 0.5) + 2.0
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    # the hook sees what a loop over the instances would: one call each, in order
    assert len(seen) == 4 and all(np.array_equal(g, np.ones(3)) for g in seen)


def test_threads_share_one_pmapped_function():
    f = ft.pmap(lambda x: x / lax.psum(x, "i") + lax.axis_index("i"), axis_name="i")
    inputs = [np.random.default_rng(s).uniform(1, 2, (4, 3)) for s in range(8)]
    want = [np.asarray(f(x)) for x in inputs]
    got: list = [None] * len(inputs)

    def run(k):
        for _ in range(5):
            got[k] = np.asarray(f(inputs[k]))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_jit_stages_and_the_first_device_for_out_axes_none():
    f = ft.pmap(lambda x: x + lax.axis_index("i"), axis_name="i", out_axes=None)
    assert float(f(np.zeros(4))) == 0.0  # the first instance's value, as JAX
    # one batched program: a single sin over all the instances
    assert "b:f64[4,3] = sin a" in str(ft.make_jaxpr(ft.pmap(fnp.sin))(XM))
    assert ft.pmap(fnp.sin).lower(XM) is not None


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: ft.pmap(3), TypeError, "pmap: expected a callable"),
        (lambda: ft.pmap(fnp.sin, in_axes="a"), TypeError, "pmap: expected in_axes"),
        (lambda: ft.pmap(fnp.sin, out_axes=1.5), TypeError, "pmap: expected out_axes"),
        (lambda: ft.pmap(fnp.sin, axis_name=["i"]), TypeError, "pmap: expected axis_name"),
        (lambda: ft.pmap(fnp.sin, backend="gpu"), ValueError, "pmap: expected backend"),
        (lambda: ft.pmap(fnp.sin, devices=["cpu"]), TypeError, "pmap: expected devices"),
        (lambda: ft.pmap(fnp.sin, global_arg_shapes=(1,)), ValueError, "global_arg_shapes"),
        (lambda: ft.pmap(fnp.sin, static_broadcasted_argnums="0"), TypeError, "static_broad"),
        (
            lambda: ft.pmap(lambda x, y: x, static_broadcasted_argnums=0, donate_argnums=0),
            ValueError,
            "disjoint",
        ),
        (lambda: ft.pmap(lambda x, y: x + y)(XM, XM[:3]), ValueError, "pmap: expected all"),
        (lambda: ft.pmap(fnp.sin)(3.0), ValueError, r"pmap: expected in_axes in \[0, 0\)"),
        (lambda: ft.pmap(fnp.sin, in_axes=(0, 0))(XM), ValueError, "one entry per positional"),
        (lambda: ft.pmap(lambda x: lax.psum(x, "j"), axis_name="i")(XM), NameError, "j"),
    ],
)
def test_errors_name_pmap(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_devices_and_backend_are_accepted():
    f = ft.pmap(fnp.cos, devices=ft.devices(), backend="cpu", donate_argnums=())
    np.testing.assert_allclose(np.asarray(f(XM)), np.cos(XM))
