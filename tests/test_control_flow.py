"""Structured control flow: values, derivatives (both modes, order 2), vmap, errors."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.errors import ConcretizationError


def test_scan_cumsum_and_rnn_match_python_loops() -> None:
    xs = np.arange(1.0, 6.0)
    total, partial = lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)
    np.testing.assert_allclose(partial, np.cumsum(xs))
    assert total == 15.0

    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((2, 3)) * 0.5
    seq = rng.standard_normal((6, 2))

    def rnn(W, U, seq):
        h, hs = lax.scan(lambda h, x: (fnp.tanh(h @ W + x @ U),) * 2, np.zeros(3), seq)
        return fnp.sum(hs**2) + fnp.sum(h)

    def rnn_loop(W, U, seq):
        h, acc = np.zeros(3), 0.0
        for x in seq:
            h = np.tanh(h @ W + x @ U)
            acc += np.sum(h**2)
        return acc + h.sum()

    np.testing.assert_allclose(rnn(W, U, seq), rnn_loop(W, U, seq), rtol=1e-12)
    ft.check_grads(rnn, (W, U, seq), order=2)
    _, rev = lax.scan(lambda c, x: (c + x, c + x), 0.0, xs, reverse=True)
    np.testing.assert_allclose(rev, np.cumsum(xs[::-1])[::-1])


def test_scan_pytrees_and_length() -> None:
    def body(c, x):
        return {"a": c["a"] + x["u"], "n": c["n"] + 1}, (x["u"] * 2, x["v"])

    xs = {"u": np.ones((4, 2)), "v": np.arange(4)}
    c, (y1, y2) = lax.scan(body, {"a": np.zeros(2), "n": 0}, xs)
    np.testing.assert_allclose(c["a"], [4.0, 4.0])
    assert int(c["n"]) == 4 and y1.shape == (4, 2) and list(y2) == [0, 1, 2, 3]
    c2, ys = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=3)
    assert c2 == 8.0 and list(ys) == [1.0, 2.0, 4.0]


def test_grad_through_scan_with_closure_and_nesting() -> None:
    def f(a, x0):
        def outer(c, x):
            inner, _ = lax.scan(lambda ci, _: (fnp.sin(ci) * a + x, None), c, None, length=2)
            return inner, inner * a

        c, ys = lax.scan(outer, x0, np.linspace(0.1, 0.5, 3))
        return c + fnp.sum(ys)

    ft.check_grads(f, (0.8, 0.3), order=2)


def test_fori_loop_static_and_traced_bounds() -> None:
    f = lambda x: lax.fori_loop(0, 5, lambda i, v: v * x + i, 1.0)  # noqa: E731
    expected = 1.0
    for i in range(5):
        expected = expected * 1.3 + i
    assert f(1.3) == pytest.approx(expected)
    ft.check_grads(f, (1.3,), order=2)
    g = lambda x, n: lax.fori_loop(0, n, lambda i, v: v * x, 1.0)  # noqa: E731
    assert g(2.0, np.int64(4)) == 16.0
    assert ft.grad(g)(2.0, np.int64(4)) == 32.0  # reverse mode through a while_loop
    assert ft.jvp(lambda x: g(x, np.int64(3)), (2.0,), (1.0,))[1] == 12.0


def test_while_loop_data_dependent_trip_count_grads() -> None:
    def f(x):
        def cond(c):
            return c[0] < 50.0

        def body(c):
            return c[0] * x + fnp.sin(c[1]), c[1] + 0.5

        return lax.while_loop(cond, body, (1.0, 0.0))[0]

    for x in (1.7, 2.3, 3.1):
        ft.check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def _trip_count_loss(x, c):
    """A loss through a while_loop whose trip count depends on both arguments."""

    def body(s):
        v, w, k = s
        return v * c + 0.1 * fnp.sin(w) ** 2, w * 0.9 + v, k + 1

    v, w, k = lax.while_loop(lambda s: fnp.min(s[0]) < 10.0, body, (x, fnp.zeros_like(x), 0))
    return fnp.sum(v * w) + k


@pytest.mark.parametrize("native", [True, False], ids=["native", "python-loop"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_of_while_loop_under_jit_matches_eager(dtype, native, monkeypatch) -> None:
    # Under jit the trip count is unknown while tracing: reverse mode stores the
    # carries at run time (while_transpose) instead of running the loop first. Both
    # lowerings: one native function, or compiled steps called from a Python loop.
    from functrace.jit import loops

    monkeypatch.setattr(loops, "enabled", native)
    g = ft.grad(_trip_count_loss, argnums=(0, 1))
    jg = ft.jit(g)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for x, c in [(0.5, 1.6), (2.0, 1.3), (12.0, 1.5), (np.array([0.5, 3.0, 0.2]), 2.5)]:
        x, c = np.asarray(x, dtype), dtype(c)
        want, got = g(x, c), jg(x, c)
        for a, b in zip(got, want):
            assert np.asarray(a).dtype == np.asarray(b).dtype == dtype
            np.testing.assert_allclose(a, b, rtol=rtol)
    text = jg.lower(np.float64(0.5), 1.6).as_text()
    assert "while_transpose[" in text
    assert ("[while reverse sweep]" in text) == native
    assert ("while_loop reverse step" in text) == (not native)
    # and against finite differences, through the compiled function
    ft.check_grads(ft.jit(_trip_count_loss), (0.7, 1.45), order=1, modes=("rev",))


@given(
    x=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
        elements=st.floats(0.05, 12.0),
    ),
    c=st.floats(1.2, 3.0),
)
def test_while_loop_grads_two_ways_agree(x, c) -> None:
    # Eager reverse mode counts the trip count first and differentiates a scan; under
    # jit the carries are stored at run time. Two implementations, one answer.
    g = ft.grad(_trip_count_loss, argnums=(0, 1))
    want = g(x, c)
    for a, b in zip(ft.jit(g)(x, c), want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if x.ndim:
        gx, gc = ft.vmap(g, (0, None))(x, c)
        for k, xk in enumerate(x):
            wx, wc = g(xk, c)
            np.testing.assert_allclose(gx[k], wx, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(gc[k], wc, rtol=1e-10, atol=1e-12)


def test_vmap_of_grad_of_while_loop_lanes_with_different_trip_counts() -> None:
    g = ft.grad(_trip_count_loss, argnums=(0, 1))
    xs = np.array([0.5, 3.0, 11.0, 0.05])  # 11.0: no iteration at all
    cs = np.array([1.6, 2.5, 1.3, 1.2])
    want = [g(x, c) for x, c in zip(xs, cs)]
    for fn in (ft.vmap(g), ft.jit(ft.vmap(g)), ft.vmap(ft.jit(g))):
        gx, gc = fn(xs, cs)
        np.testing.assert_allclose(gx, [w[0] for w in want], rtol=1e-12)
        np.testing.assert_allclose(gc, [w[1] for w in want], rtol=1e-12)
    # an unbatched constant with per-lane cotangents: each lane gets its own
    gc = ft.vmap(ft.grad(_trip_count_loss, argnums=1), (0, None))(xs, 1.7)
    np.testing.assert_allclose(gc, [ft.grad(_trip_count_loss, argnums=1)(x, 1.7) for x in xs])


def test_linearize_of_while_loop_under_jit_and_its_limits() -> None:
    x, c, t = 0.5, 1.6, 0.25
    lin = lambda x, c, t: ft.linearize(lambda x: _trip_count_loss(x, c), x)[1](t)  # noqa: E731
    want = ft.jvp(lambda x: _trip_count_loss(x, c), (x,), (t,))[1]
    np.testing.assert_allclose(ft.jit(lin)(x, c, t), want, rtol=1e-12)
    # eagerly the trip count is known, so every order works; under jit a second
    # reverse pass (reverse-over-reverse) through a while_loop is a clear error
    ft.check_grads(lambda x: _trip_count_loss(x, c), (x,), order=2, modes=("rev",))
    with pytest.raises(NotImplementedError, match="second derivative"):
        ft.jit(ft.grad(ft.grad(_trip_count_loss)))(x, c)


def _assert_trees_close(got, want, rtol=1e-10) -> None:
    for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


def test_forward_over_reverse_through_while_loop_under_jit_and_vmap() -> None:
    # Forward mode through the stored-carries reverse sweep (jvp(grad), hessian,
    # jacfwd/jacrev) when the trip count is known only at run time.
    x, c = np.array([0.5, 0.7, 0.2]), 1.6
    hess = ft.hessian(_trip_count_loss, argnums=(0, 1))
    want = hess(x, c)  # eager: counted scan
    _assert_trees_close(ft.jit(hess)(x, c), want)
    t = np.array([1.0, -0.5, 0.25])
    g = lambda x, c: ft.grad(_trip_count_loss)(x, c)  # noqa: E731
    hvp = ft.jit(lambda x, c, t: ft.jvp(lambda x: g(x, c), (x,), (t,))[1])
    np.testing.assert_allclose(hvp(x, c, t), want[0][0] @ t, rtol=1e-10)
    xs = np.array([[0.5, 0.7, 0.2], [2.0, 0.1, 9.0]])
    per_example = ft.vmap(ft.hessian(_trip_count_loss), (0, None))(xs, c)
    for k, xk in enumerate(xs):
        np.testing.assert_allclose(per_example[k], ft.hessian(_trip_count_loss)(xk, c), rtol=1e-10)

    def traj(x):  # a vector output: Jacobians batch tangents or cotangents only
        def body(s):
            v, k = s
            return v * 1.3 + 0.1 * fnp.sin(v), k + 1

        return lax.while_loop(lambda s: fnp.min(s[0]) < 5.0, body, (x, 0))[0]

    for jac in (ft.jacfwd, ft.jacrev):
        _assert_trees_close(ft.jit(jac(traj))(x), jac(traj)(x))


def test_cond_and_switch() -> None:
    f = lambda p, x: lax.cond(p, lambda x: x**2, lambda x: -x, x)  # noqa: E731
    assert f(True, 3.0) == 9.0 and f(False, 3.0) == -3.0
    assert ft.grad(f, 1)(False, -3.0) == -1.0
    closed = ft.make_jaxpr(f)(True, 1.0)
    assert "cond[" in str(closed)
    # gradients through the staged cond (pred abstract under make_jaxpr, then evaluated)
    from functrace.ir import eval_jaxpr

    g = ft.make_jaxpr(ft.grad(lambda x, p: lax.cond(p, fnp.sin, fnp.cos, x)))(0.3, True)
    np.testing.assert_allclose(eval_jaxpr(g.jaxpr, g.consts, [0.3, True])[0], np.cos(0.3))
    np.testing.assert_allclose(eval_jaxpr(g.jaxpr, g.consts, [0.3, False])[0], -np.sin(0.3))
    branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: x**3]
    assert [lax.switch(i, branches, 2.0) for i in (0, 1, 2, 7, -3)] == [3.0, 4.0, 8.0, 8.0, 3.0]
    ft.check_grads(lambda x: lax.switch(2, branches, x), (1.5,), order=2)


def test_staged_cond_reverse_mode() -> None:
    # Under make_jaxpr the predicate is abstract, so grad must go through cond_p itself.
    def loss(x, p):
        return lax.cond(p, lambda x: fnp.sum(fnp.sin(x) * x), lambda x: fnp.sum(x**3), x)

    x = np.array([0.3, -0.7])
    closed = ft.make_jaxpr(ft.grad(loss))(x, True)
    from functrace.ir import eval_jaxpr

    for p in (True, False):
        got = eval_jaxpr(closed.jaxpr, closed.consts, [x, p])[0]
        np.testing.assert_allclose(got, ft.grad(loss)(x, p), rtol=1e-12)


def test_vmap_of_control_flow_matches_loop() -> None:
    xs = np.array([0.5, 1.5, 2.5, 3.5])
    f = lambda x: lax.cond(x > 2.0, lambda v: v * 10.0, lambda v: v - 1.0, x)  # noqa: E731
    np.testing.assert_allclose(ft.vmap(f)(xs), [f(x) for x in xs])
    w = lambda x: lax.while_loop(lambda c: c < 20.0, lambda c: c * 2.0, x)  # noqa: E731
    np.testing.assert_allclose(ft.vmap(w)(xs), [w(x) for x in xs])
    s = lambda x: lax.scan(lambda c, i: (c * x + i, c), x, np.arange(3.0))  # noqa: E731
    got_c, got_ys = ft.vmap(s)(xs)
    for k, x in enumerate(xs):
        c, ys = s(x)
        assert got_c[k] == pytest.approx(c)
        np.testing.assert_allclose(got_ys[k], ys)
    per_example = ft.vmap(ft.grad(lambda x: s(x)[0]))(xs)
    np.testing.assert_allclose(per_example, [ft.grad(lambda x: s(x)[0])(x) for x in xs])


def test_errors() -> None:
    with pytest.raises(TypeError, match=r"cond: expected a scalar predicate .* got bool\[2\]"):
        lax.cond(np.array([True, False]), lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match=r"cond: expected a bool, integer or float predicate"):
        lax.cond(1.5j, lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match=r"cond: expected .*branch 1"):
        ft.make_jaxpr(lambda p: lax.cond(p, lambda: 1.0, lambda: np.ones(2)))(True)
    with pytest.raises(
        TypeError,
        match=r"scan: expected the carry at .* of type f64\[\], got "
        r"f32\[\]",
    ):
        lax.scan(lambda c, x: (fnp.astype(c, np.float32), x), np.float64(0.0), np.ones(3))
    with pytest.raises(ValueError, match=r"scan: expected one length .*\[3, 4\]"):
        lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4)
    with pytest.raises(TypeError, match="while_loop: expected .* scalar boolean"):
        lax.while_loop(lambda c: c, lambda c: c, 1.0)
    with pytest.raises(ConcretizationError):
        ft.make_jaxpr(lambda x: 1.0 if x > 0 else 0.0)(1.0)


def test_vmap_scan_batches_integer_and_boolean_outputs() -> None:
    # Found by the composition fuzzer: scan's batching rule took "has a nonzero tangent"
    # for "is batched", so a boolean output or residual depending on a batched value
    # (norm's zero mask under vmap(vjp) of a fori_loop) kept its batch axis unannounced.
    x = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]])

    def ys(v):
        return lax.scan(lambda c, _: (c + 1.0, (v > 0, fnp.argmax(v))), 0.0, None, length=2)[1]

    got = ft.vmap(ys)(x)
    for b in range(3):
        for g, e in zip(got, ys(x[b])):
            np.testing.assert_array_equal(g[b], e)

    def f(v):
        a = fnp.tanh(v) + 1.0
        return lax.fori_loop(0, 2, lambda i, c: c * 0.5 + fnp.linalg.norm(a), 0.0)

    g = lambda v: ft.vjp(f, v)[1](1.0)[0]  # noqa: E731
    np.testing.assert_allclose(ft.vmap(g)(x), np.stack([g(v) for v in x]), rtol=1e-12)


def test_vmap_of_cond_sends_no_nan_from_the_untaken_branch() -> None:
    # Found by the composition fuzzer: vjp(vmap(vjp(f))) with a batched cond predicate
    # ran the untaken branch's transpose on zero residuals (log'(0) = inf) and its
    # 0 * inf = NaN reached the operands' cotangents.
    def f(x):
        s = fnp.sum(x)
        a = 1.98 + 0.01 * fnp.tanh(s)
        n0 = lax.cond(s > 0.1, fnp.log, lambda a: fnp.log(a) * 0.5, a)
        return fnp.fmod(1.6 + 0.01 * fnp.tanh(s), 1.01 + 0.01 * fnp.tanh(n0))

    def vjp_of(F):
        def g(x):
            out, pullback = ft.vjp(F, x)
            return pullback(np.cos(np.arange(np.size(out))).reshape(np.shape(out)))[0]

        return g

    x = np.array([[0.3, 0.2], [-0.3, -0.4]])  # one example per branch
    got = vjp_of(ft.vmap(vjp_of(f)))(x)
    want = vjp_of(lambda x: fnp.stack([vjp_of(f)(x[0]), vjp_of(f)(x[1])]))(x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-12)


_COND_WHILE_UNDER_VMAP = """
import numpy as np, functrace as ft, functrace.numpy as fnp
from functrace import lax

def doubling(x):  # stops only once the norm passes 10: never from x == 0
    def body(c):
        return c[0] * 1.7 + fnp.sin(c[0]) * 0.1, c[1] + 1
    return lax.while_loop(lambda c: fnp.sum(c[0] * c[0]) < 100.0, body, (x, 0))[0]

def f(x, s):
    return lax.cond(s > 0.3, doubling, lambda x: doubling(x) * 0.5, x)

def g(x, s):
    return ft.vjp(f, x, s)[1](np.ones(2))[0]

x, s = np.array([0.7, 1.1]), np.array([0.1, 0.9])
want = np.stack([g(x, v) for v in s])
for h in (ft.vmap(g, in_axes=(None, 0)), ft.jit(ft.vmap(g, in_axes=(None, 0)))):
    np.testing.assert_allclose(h(x, s), want, rtol=1e-12)
gs = ft.vmap(ft.grad(lambda x, s: f(x, s).sum()), in_axes=(None, 0))(x, s)
np.testing.assert_allclose(gs, want, rtol=1e-12)
print("ok")
"""


def test_reverse_mode_of_while_in_an_untaken_cond_branch_under_vmap_terminates() -> None:
    # vmap with a batched predicate runs both branches' linear parts for every example,
    # on zero residuals where a branch was not taken; the reverse loop re-ran the
    # forward loop under its own condition from those zeros and never stopped. The
    # tangent loops now follow the recorded trip count. (A subprocess with a timeout,
    # so that a regression fails instead of hanging the suite.)
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    r = subprocess.run(
        [sys.executable, "-c", _COND_WHILE_UNDER_VMAP],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


# -- JAX's unroll= (scan, fori_loop) and batch_size= (map) ---------------------------


@pytest.mark.parametrize("unroll", [1, 2, 3, 0, True, False, np.int64(2)])
def test_scan_and_fori_loop_unroll_give_the_same_results(unroll) -> None:
    xs = np.arange(5.0)

    def run(xs):
        c, ys = lax.scan(lambda c, x: (c + x, c * x), 1.0, xs, unroll=unroll)
        f = lax.fori_loop(0, 7, lambda i, c: c + i * 2.0, 0.0, unroll=unroll)
        return c, ys, f

    c, ys, f = run(xs)
    assert (c, f) == (11.0, 42.0)  # JAX 0.10.2: 11.0 and 42.0
    np.testing.assert_array_equal(ys, [0.0, 1.0, 4.0, 12.0, 28.0])
    for c2, ys2, f2 in (ft.jit(run)(xs), ft.vmap(run)(xs[None])):
        assert float(np.squeeze(c2)) == 11.0 and float(np.squeeze(f2)) == 42.0
        np.testing.assert_array_equal(np.squeeze(ys2), ys)
    g = ft.grad(lambda xs: lax.scan(lambda c, x: (c * x, c), 1.0, xs, unroll=unroll)[0])
    np.testing.assert_allclose(g(xs + 1.0), [120.0, 60.0, 40.0, 30.0, 24.0])
    np.testing.assert_allclose(ft.jit(g)(xs + 1.0), [120.0, 60.0, 40.0, 30.0, 24.0])


def test_unroll_bad_values_are_clear_errors() -> None:
    body = lambda c, x: (c + x, c)  # noqa: E731
    with pytest.raises(ValueError, match="scan: expected unroll to be a bool or a non-negative"):
        lax.scan(body, 0.0, np.arange(3.0), unroll=-1)
    for bad in (2.5, "2", None):
        with pytest.raises(TypeError, match="scan: expected unroll"):
            lax.scan(body, 0.0, np.arange(3.0), unroll=bad)
    with pytest.raises(TypeError, match="known while tracing"):
        ft.jit(lambda u: lax.scan(body, 0.0, np.arange(3.0), unroll=u))(2)
    with pytest.raises(ValueError, match="fori_loop: expected unroll"):
        lax.fori_loop(0, 3, lambda i, c: c + i, 0, unroll=-2)
    # as in JAX: unrolling needs bounds known while tracing; None, False and 1 do not
    with pytest.raises(ValueError, match="bounds known while tracing"):
        ft.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0, unroll=2))(3)
    for ok in (None, False, 1):
        loop = lambda n, ok=ok: lax.fori_loop(0, n, lambda i, c: c + i, 0, unroll=ok)  # noqa: E731
        assert ft.jit(loop)(4) == 6


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5, 7, 0])
def test_map_batch_size_equals_map(batch_size) -> None:
    xs = {"a": np.arange(10.0).reshape(5, 2), "b": np.arange(5)}

    def f(x):
        return {"s": fnp.sin(x["a"]).sum() * x["b"], "c": 2.0, "v": x["a"][::-1]}

    def run(xs):
        return lax.map(f, xs, batch_size=batch_size)

    want = lax.map(f, xs)
    for got in (run(xs), ft.jit(run)(xs)):
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-15)
            assert np.shape(got[k]) == np.shape(want[k])
    stacked = {k: np.stack([v, v + 1]) for k, v in xs.items()}
    got = ft.vmap(run)(stacked)
    np.testing.assert_allclose(got["s"][1], lax.map(f, {k: v[1] for k, v in stacked.items()})["s"])
    g = ft.grad(lambda a: run({"a": a, "b": xs["b"]})["s"].sum())(xs["a"])
    np.testing.assert_allclose(g, np.cos(xs["a"]) * xs["b"][:, None], rtol=1e-14)
    np.testing.assert_allclose(
        ft.jit(ft.grad(lambda a: run({"a": a, "b": xs["b"]})["s"].sum()))(xs["a"]), g, rtol=1e-14
    )


def test_map_batch_size_runs_f_on_chunks_and_checks_its_value() -> None:
    shapes = []

    def f(x):
        shapes.append(np.shape(x))
        return x + 1

    out = lax.map(f, np.ones((10, 3)), batch_size=3)
    assert out.shape == (10, 3) and shapes == [(3,), (3,)]  # the chunk, then the rest
    np.testing.assert_array_equal(
        lax.map(lambda x: x * 2, np.arange(5.0), batch_size=2), [0.0, 2.0, 4.0, 6.0, 8.0]
    )
    assert lax.map(lambda x: x, np.zeros((0, 2)), batch_size=2).shape == (0, 2)
    with pytest.raises(ValueError, match="map: expected batch_size to be None or a non-negative"):
        lax.map(f, np.ones(3), batch_size=-1)
    for bad in (2.5, True, "2"):
        with pytest.raises(TypeError, match="map: expected batch_size"):
            lax.map(f, np.ones(3), batch_size=bad)
    with pytest.raises(ValueError, match="one length for all xs leaves"):
        lax.map(lambda x: x, (np.ones(3), np.ones(4)), batch_size=2)


# -- weakly typed loop carries (JAX 0.10.2's values and dtypes) ------------------------


_X32 = np.float32(1.5)
_XS32 = np.arange(1.0, 4.0, dtype=np.float32)
_WEAK_CARRY_CASES = [
    # (function of a float32 scalar, JAX 0.10.2's value; its dtype is float32)
    (lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, 0.0), 4.5),
    (lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, 0), 4.5),
    (lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 0.0), 8.25),  # i is weak too
    (lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0] + x, c[1] + 1), (0.0, 0))[0], 4.5),
    (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * x + 1, 0), 13.1875),
    (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + x, 0.0), 10.5),
    (lambda x: lax.scan(lambda c, xx: (c * x + xx, c), 0.0, _XS32)[0], 8.25),
    (lambda x: lax.scan(lambda c, xx: (c * x + xx, c), 0.0, _XS32)[1][2], 3.5),
]


@pytest.mark.parametrize("case", range(len(_WEAK_CARRY_CASES)))
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_weak_initial_carry_takes_the_float32_the_body_returns(case, mode) -> None:
    # A Python-scalar initial carry is weakly typed: the body is traced with it weak, so
    # ``0.0 + float32`` is float32 and the carry becomes float32 (it was float64).
    f, want = _WEAK_CARRY_CASES[case]
    if mode == "vmap":
        got = ft.vmap(f)(np.full(2, _X32))
        assert isinstance(got, ft.Array) and got.dtype == np.float32
        np.testing.assert_array_equal(got, [want, want])
        return
    got = f(_X32) if mode == "eager" else ft.jit(f)(_X32)
    assert isinstance(got, ft.Array) and got.dtype == np.float32 and float(got) == want


def test_weak_initial_carry_derivatives_are_float32_as_in_jax() -> None:
    fori = lambda x: lax.fori_loop(0, 3, lambda i, c: c + x * c + x, 0.0)  # noqa: E731
    scan = lambda x: lax.scan(lambda c, xx: (c * x + xx, None), 0.0, _XS32)[0]  # noqa: E731
    wloop = lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * x + 1, 0)  # noqa: E731
    # JAX 0.10.2's values (its while_loop has no reverse mode; 24.25 is jvp's tangent)
    for f, d, d2 in ((fori, 18.75, 15.0), (scan, 5.0, 2.0), (wloop, 24.25, None)):
        for g in (ft.grad(f), ft.jit(ft.grad(f)), ft.grad(ft.jit(f))):
            r = g(_X32)
            assert r.dtype == np.float32 and float(r) == d
        val, tan = ft.jvp(ft.jit(f), (_X32,), (np.float32(1.0),))
        assert val.dtype == tan.dtype == np.float32 and float(tan) == d
        if d2 is not None:
            h = ft.hessian(f)(_X32)
            assert h.dtype == np.float32 and float(h) == d2
    per = ft.vmap(ft.grad(ft.jit(scan)))(_XS32)
    assert per.dtype == np.float32
    np.testing.assert_array_equal(per, [4.0, 6.0, 8.0])


def test_fori_loop_bounds_of_one_type_as_jax() -> None:
    # JAX 0.10.2 (x64): equal types run (float bounds are truncated, 3.0 below); a
    # Python int takes the other signed integer type; any other mix is a TypeError
    def add(i, x):
        return x + i

    for lo, hi in [(0.0, 3.0), (0.5, 3.5), (np.int32(0), 3), (0, np.int32(3))]:
        assert float(lax.fori_loop(lo, hi, add, 0.0)) == 3.0
    assert float(ft.jit(lambda n: lax.fori_loop(0, n, add, 0.0))(np.int32(3))) == 3.0
    bad = [(0.5, 3), (0, 3.0), (np.int32(0), np.int64(3)), (0, np.uint8(3)), (True, 3)]
    for lo, hi in bad:
        with pytest.raises(TypeError, match="fori_loop: expected lower and upper bounds"):
            lax.fori_loop(lo, hi, add, 0.0)
    with pytest.raises(TypeError, match="got int64 and float64"):
        ft.jit(lambda n: lax.fori_loop(0, n, add, 0.0))(3.0)


def test_weak_carry_promotion_rules_and_the_loop_index() -> None:
    # JAX's promotion of the weak initial value with the body's type
    cases = [
        (lambda: lax.while_loop(lambda c: c < 10, lambda c: c + 1.5, 0), np.float64, 10.5),
        (lambda: lax.fori_loop(0, 2, lambda i, c: c + np.float16(1), 0.0), np.float16, 2.0),
        (lambda: lax.fori_loop(0, 2, lambda i, c: c + 1, 0), np.int64, 2),
        # the index of a loop with static bounds is a weak int64 (whatever their dtype)
        (lambda: lax.fori_loop(np.int32(0), 3, lambda i, c: c + i, np.int16(1)), np.int16, 4),
    ]
    for f, dtype, want in cases:
        for r in (f(), ft.jit(f)()):
            assert r.dtype == dtype and r == want
    seen = []

    def body(i, c):
        seen.append((i.aval.dtype, i.aval.weak_type))
        return c + i

    # traced bounds: their common dtype, Python ints weak (an int32 n counts in int32)
    assert ft.jit(lambda n: lax.fori_loop(0, n, body, np.int32(0)))(np.int32(4)) == 6
    assert ft.jit(lambda n: lax.fori_loop(0, n, body, 0))(4) == 6
    assert seen == [(np.dtype(np.int32), False), (np.dtype(np.int64), True)]
    # strongly typed carries, and weak ones whose body changes shape or kind, stay errors
    for bad in (
        lambda: lax.fori_loop(0, 2, lambda i, c: c + _X32, np.int32(0)),
        lambda: lax.fori_loop(0, 2, lambda i, c: 1, 0.0),
        lambda: lax.fori_loop(0, 2, lambda i, c: c + _XS32, 0.0),
        lambda: lax.while_loop(lambda c: c < 2, lambda c: c + np.float64(1), np.float32(0)),
    ):
        with pytest.raises(TypeError, match=r"(scan|while_loop): expected the carry"):
            bad()


# -- cond's predicate, eager cond/switch results and their type checks (JAX 0.10.2) ----

_PREDS = [
    True, False, 1, 0, 2.5, 0.0, -0.0, np.nan, np.float32(0.5), np.int8(3), np.uint8(0),
    np.array(1.0), np.array(0.0, np.float16), np.array(-2, np.int64),
]  # fmt: skip


@pytest.mark.parametrize("pred", _PREDS, ids=repr)
def test_cond_takes_any_real_scalar_predicate_nonzero_is_true(pred) -> None:
    want = 3.0 if pred != 0 or np.isnan(pred) else -1.0  # NaN is nonzero, as in JAX

    def f(p, x):
        return lax.cond(p, lambda v: v * 3.0, lambda v: -v, x)

    assert f(pred, 1.0) == want
    assert ft.jit(f)(pred, 1.0) == want
    assert float(ft.grad(f, 1)(pred, 1.0)) == want
    assert float(ft.jit(ft.grad(f, 1))(pred, 1.0)) == want
    batch = np.stack([np.asarray(pred), np.asarray(pred)])
    np.testing.assert_array_equal(ft.vmap(f, (0, None))(batch, 1.0), [want, want])
    assert ft.vmap(f, (None, 0))(pred, np.ones(2)).tolist() == [want, want]


def test_cond_predicate_errors_name_cond_and_what_was_given() -> None:
    ok = lambda x: x  # noqa: E731
    for pred, shown in [
        (np.array([True]), r"bool\[1\]"),
        (np.zeros(2), r"f64\[2\]"),
        (1j, r"c128\[\]"),
        (np.complex64(1), r"c64\[\]"),
        (None, "NoneType"),
        ("yes", "str"),
    ]:
        match = (
            rf"cond: expected a (scalar predicate|bool, integer or float predicate).* got {shown}"
        )
        with pytest.raises(TypeError, match=match):
            lax.cond(pred, ok, ok, 1.0)
        if shown not in ("NoneType", "str"):
            with pytest.raises(TypeError, match=match):
                ft.jit(lambda p: lax.cond(p, ok, ok, 1.0))(pred)
    with pytest.raises(TypeError, match=r"switch: expected a scalar integer index, got f64\[\]"):
        lax.switch(1.0, [ok, ok], 1.0)


def test_eager_cond_and_switch_return_arrays() -> None:
    x32 = np.float32(1.5)
    for got, dtype in [
        (lax.cond(True, lambda: 1.0, lambda: 2.0), np.float64),
        (lax.cond(0, lambda: 1, lambda: 2), np.int64),
        (lax.cond(True, lambda x: x, lambda x: -x, x32), np.float32),
        (lax.cond(True, lambda: np.ones(2), lambda: np.zeros(2)), np.float64),
        (lax.switch(1, [lambda: 1.0, lambda: 2.0]), np.float64),
        (lax.switch(0, [lambda: True]), np.bool_),
    ]:
        assert isinstance(got, ft.Array) and got.dtype == dtype
    a, (b, c) = lax.cond(False, lambda x: (x, (1, x)), lambda x: (x, (2, x)), x32)
    assert all(isinstance(v, ft.Array) for v in (a, b, c)) and int(b) == 2
    assert lax.cond(True, lambda: None, lambda: None) is None
    # under jit a known predicate calls the branch, whose Python scalar stays weak
    r = ft.jit(lambda x: lax.cond(True, lambda: 2.0, lambda: 3.0) * x)(x32)
    assert r.dtype == np.float32 and float(r) == 3.0


def _mismatches():
    return [
        ((lambda: 1.0, lambda: fnp.ones(2)), r"same shapes and dtypes, got f64\[2\] from branch 0"),
        ((lambda: np.float32(1), lambda: 1.0), r"got f64\[\] from branch 0 \(false_fun\)"),
        ((lambda: 1.0, lambda: 1), r"got i64\[\] from branch 0 .* and f64\[\] from branch 1"),
        ((lambda: (1.0, 2.0), lambda: [1.0, 2.0]), "same tree structure"),
        ((lambda: {"a": 1.0}, lambda: {"a": 1.0, "b": 2.0}), "same tree structure"),
        ((lambda: {"a": 1.0}, lambda: {"a": fnp.ones(3)}), r"at output \['a'\]"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_eager_cond_checks_the_untaken_branch_as_jax(case) -> None:
    (t, f), match = _mismatches()[case]
    full = "cond: expected every branch to return the " + ("" if "same" in match else ".*")
    for pred in (True, 1, np.float32(2.0)):
        with pytest.raises(TypeError, match=full + match if "same" in match else match):
            lax.cond(pred, t, f)
    with pytest.raises(TypeError, match="cond: expected every branch to return the same"):
        lax.cond(False, f, t)  # the taken branch is checked against the other either way
    with pytest.raises(TypeError, match=match):
        ft.jit(lambda: lax.cond(True, t, f))()  # a known predicate under jit
    with pytest.raises(TypeError, match=match):
        ft.jit(lambda p: lax.cond(p, t, f))(True)  # staged
    with pytest.raises(TypeError, match=match):  # a known predicate under grad
        ft.grad(lambda x: (lax.cond(x > 0, t, f), x)[1])(1.0)
    with pytest.raises(TypeError, match=match):  # under vmap, a known predicate
        ft.vmap(lambda x: (lax.cond(True, t, f), x)[1])(np.ones(2))
    with pytest.raises(TypeError, match=match):  # under vmap, a batched predicate
        ft.vmap(lambda p: (lax.cond(p, t, f), p)[1])(np.array([True, False]))


def test_eager_switch_checks_every_untaken_branch() -> None:
    branches = [lambda x: x, lambda x: x * 2.0, lambda x: fnp.stack([x, x])]
    with pytest.raises(
        TypeError, match=r"switch: .* f64\[\] from branch 0 .* f64\[2\] from branch 2"
    ):
        lax.switch(0, branches, 1.0)
    with pytest.raises(TypeError, match=r"switch: .* from branch 1 .* from branch 2"):
        ft.grad(lambda x: lax.switch(1, branches, x))(1.0)
    assert lax.switch(1, branches[:2], 1.0) == 2.0


def test_untaken_branch_needing_concrete_values_is_not_checked() -> None:
    # JAX raises (it traces every branch); functrace skips the check of such a branch
    needs_values = [
        lambda x: x if x > 0 else -x,
        lambda x: float(x) * 2.0,
        lambda x: np.asarray(x) * 2,
        lambda x: fnp.linalg.eigvals(x * np.eye(2)).real[0],  # eager-only function
    ]
    for b in needs_values:
        assert lax.cond(True, lambda x: x + 1.0, b, 2.0) == 3.0
        assert float(ft.grad(lambda x, b=b: lax.cond(True, lambda x: x * x, b, x))(2.0)) == 4.0
        assert lax.cond(False, lambda x: -x, b, 2.0) != -2.0  # the taken branch runs
    with pytest.raises(ZeroDivisionError):  # other errors of the untaken branch: as JAX
        lax.cond(True, lambda x: x, lambda x: 1 / 0, 2)


def test_untaken_branch_types_are_cached_per_function_and_operand_types() -> None:
    calls = []

    def untaken(x):
        calls.append(core_aval(x))
        return x * 2

    def taken(x):
        return x

    for x in (1.0, 2.0, np.float32(1.0), np.ones(2), np.ones(2) * 3):
        lax.cond(True, taken, untaken, x)
    assert calls == ["f64[]", "f32[]", "f64[2]"]  # once per operand type, as JAX caches
    lax.cond(True, taken, lambda x: untaken(x), 1.0)  # a new function is traced again
    assert calls[-1] == "f64[]" and len(calls) == 4


def core_aval(x):
    return x.aval.str_short()


def test_switch_index_differences_from_jax() -> None:
    branches = [lambda: 0, lambda: 1, lambda: 2]
    # a bool index is taken as 0 or 1 (JAX refuses it)
    assert lax.switch(True, branches) == 1 and ft.jit(lambda i: lax.switch(i, branches))(True) == 1
    # an index beyond int32 is clamped to the last branch (JAX casts to int32 first and
    # gives branch 0 for 2**32); below -2**31 to the first
    for run in (lambda i: lax.switch(i, branches), ft.jit(lambda i: lax.switch(i, branches))):
        assert run(np.int64(2**32)) == 2 and run(np.uint32(2**32 - 1)) == 2
        assert run(np.int64(-(2**40))) == 0 and run(np.int8(-3)) == 0
