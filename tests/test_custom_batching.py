"""``functrace.custom_batching`` against JAX's numbers (recorded from
``custom_vmap_cases.py``), its reverse mode (which JAX's lacks) against loops and finite
differences, threads, and its errors."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from custom_vmap_cases import S, X, Y, cases
from functrace.custom_batching import custom_vmap, sequential_vmap
from functrace.test_util import check_grads
from recorded import assert_matches_recorded


def test_values_match_jax():
    assert_matches_recorded(cases(ft), "custom_vmap_jax.npz", lambda k, v: 1e-12)


def _doubling():
    """A rule that is twice its function: the numbers show which one ran."""

    @custom_vmap
    def f(x, y):
        return fnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        return 2.0 * fnp.sin(xs) * ys, any(in_batched)

    return f


def test_reverse_mode_differentiates_the_function():
    # JAX has none; the tangent call transposes as the function's VJP, the primal of a
    # vmap still runs the rule, and grad(vmap(f)) differentiates the rule (as JAX)
    f = _doubling()
    g = ft.grad(lambda x, y: fnp.sum(f(x, y)))
    np.testing.assert_allclose(g(X[0], Y[0]), np.cos(X[0]) * Y[0], rtol=1e-14)
    loop = np.stack([g(x, y) for x, y in zip(X, Y)])
    for run in (ft.vmap(g), ft.jit(ft.vmap(g)), ft.vmap(ft.jit(g))):
        np.testing.assert_allclose(run(X, Y), loop, rtol=1e-14)
    vg = ft.vmap(ft.value_and_grad(lambda x, y: fnp.sum(f(x, y))))(X, Y)
    np.testing.assert_allclose(vg[0], 2.0 * np.sum(np.sin(X) * Y, axis=1), rtol=1e-14)
    through_rule = ft.grad(lambda a: fnp.sum(ft.vmap(f)(a, Y)))(X)
    np.testing.assert_allclose(through_rule, 2.0 * np.cos(X) * Y, rtol=1e-14)

    # a faithful rule: every order and mode agrees with finite differences
    @custom_vmap
    def h(x, y):
        return fnp.sin(x) * y + x**3

    @h.def_vmap
    def h_rule(axis_size, in_batched, xs, ys):
        return fnp.sin(xs) * ys + xs**3, any(in_batched)

    check_grads(h, (X[0], Y[0]), order=2, modes=("fwd", "rev"))
    check_grads(ft.vmap(h), (X, Y), order=2, modes=("fwd", "rev"))
    hess = ft.hessian(lambda x: fnp.sum(h(x, Y[0])))(X[0])
    np.testing.assert_allclose(hess, ft.jacfwd(ft.grad(lambda x: fnp.sum(h(x, Y[0]))))(X[0]))
    np.testing.assert_allclose(np.diag(hess), -np.sin(X[0]) * Y[0] + 6 * X[0], rtol=1e-13)
    per_example = ft.vmap(ft.hessian(lambda x, y: fnp.sum(h(x, y))))(X, Y)
    np.testing.assert_allclose(per_example[1], ft.hessian(lambda x: fnp.sum(h(x, Y[1])))(X[1]))


def test_sequential_vmap_equals_a_loop_in_every_composition():
    k = sequential_vmap(lambda x, y: fnp.dot(x, y) + fnp.sum(fnp.sin(x)))
    loop = np.array([float(k(x, y)) for x, y in zip(X, Y)])
    np.testing.assert_allclose(ft.vmap(k)(X, Y), loop, rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(ft.vmap(k))(X[None], Y[None])[0], loop, rtol=1e-14)
    grads = ft.grad(lambda a: fnp.sum(ft.vmap(k)(a, Y)))(X)
    np.testing.assert_allclose(grads, Y + np.cos(X), rtol=1e-14)
    per = ft.vmap(ft.grad(k))(X, Y)
    np.testing.assert_allclose(per, Y + np.cos(X), rtol=1e-14)
    assert ft.vmap(k)(X[:0], Y[:0]).shape == (0,)
    hooked = ft.grad(lambda a: fnp.sum(ft.vmap(k)(ft.grad_hook(a, lambda g: 3.0 * g), Y)))(X)
    np.testing.assert_allclose(hooked, 3.0 * (Y + np.cos(X)), rtol=1e-14)


def test_threads_and_rule_changes():
    f = _doubling()
    want = 2.0 * np.sin(X) * Y

    def run(i):
        return np.asarray(ft.vmap(f)(X, Y) if i % 2 else ft.jit(ft.vmap(f))(X, Y))

    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(run, range(8)):
            np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(f)(X, Y), want)

    @f.def_vmap
    def tripling(axis_size, in_batched, xs, ys):
        return 3.0 * fnp.sin(xs) * ys, True

    np.testing.assert_allclose(ft.vmap(f)(X, Y), 1.5 * want)  # the new rule runs


def test_bad_rules_and_arguments_name_custom_vmap():
    @custom_vmap
    def f(x):
        return x * 2.0

    with pytest.raises(AttributeError, match="custom_vmap: no vmap rule defined for"):
        f(S)
    with pytest.raises(TypeError, match="custom_vmap.def_vmap: expected a callable rule"):
        f.def_vmap(3)
    f.def_vmap(lambda n, b, xs: ((xs, xs), True))
    with pytest.raises(ValueError, match="out_batched of the structure of its output"):
        ft.vmap(f)(X)
    f.def_vmap(lambda n, b, xs: (xs[0], True))
    with pytest.raises(ValueError, match=r"to return output 0 of type float64\[3, 4\]"):
        ft.vmap(f)(X)
    f.def_vmap(lambda n, b, xs: (xs, 1))
    with pytest.raises(TypeError, match="out_batched of the rule .* to hold bools, got 1"):
        ft.vmap(f)(X)
    f.def_vmap(lambda n, b, xs: xs)
    with pytest.raises(TypeError, match=r"to return a pair \(out, out_batched\)"):
        ft.vmap(f)(X)
    with pytest.raises(TypeError, match="custom_vmap: expected a callable"):
        custom_vmap(3)

    def closing(s):
        @custom_vmap
        def g(x):
            return x * s

        g.def_vmap(lambda n, b, xs: (xs, True))
        return g(fnp.ones(2))

    with pytest.raises(ValueError, match="close over no value that vmap batches"):
        ft.vmap(closing)(S)


def test_keyword_arguments_are_placed_by_position():
    @custom_vmap
    def f(x, y=2.0, *, z=1.0):
        return x * y

    f.def_vmap(lambda n, b, xs, ys: (xs * ys, any(b)))
    np.testing.assert_allclose(ft.vmap(lambda x: f(x, y=3.0))(S), 3.0 * S)
    np.testing.assert_allclose(f(S), 2.0 * S)
    with pytest.raises(TypeError, match="custom_vmap: expected keyword arguments .* position"):
        f(S, z=2.0)
    with pytest.raises(TypeError, match="custom_vmap: bad arguments for"):
        f(S, w=1.0)
