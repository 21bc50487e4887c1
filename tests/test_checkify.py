"""``functrace.experimental.checkify`` against JAX's messages (recorded from
``checkify_cases.py``), its errors, and its compositions with ``jit``, ``vmap``,
``grad``, loops, custom rules and threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from checkify_cases import cases
from functrace import lax
from functrace.errors import JaxRuntimeError
from functrace.experimental import checkify as ck
from functrace.test_util import check_grads
from recorded import assert_matches_recorded

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_messages_and_values_match_jax():
    assert_matches_recorded(cases(ft), "checkify_jax.npz", lambda k, v: 1e-12)


def pos(x):
    ck.check(x > 0, "x must be positive, got {}", x)
    return fnp.log(x) * x


def test_error_objects():
    err, _ = ck.checkify(pos)(fnp.asarray(-1.0))
    exc = err.get_exception()
    assert isinstance(exc, ck.FailedCheckError) and isinstance(exc, ck.CheckifyException)
    assert str(err) == f"Error({err.get()})"
    with pytest.raises(JaxRuntimeError, match="x must be positive, got -1.0") as info:
        err.throw()
    assert isinstance(info.value, ValueError)
    ok, _ = ck.checkify(pos)(fnp.asarray(1.0))
    assert ok.get() is None and ok.get_exception() is None
    ok.throw()  # nothing to raise
    nan_err, _ = ck.checkify(fnp.log, errors=ck.nan_checks)(fnp.asarray(-1.0))
    assert isinstance(nan_err.get_exception(), ck.NaNError)
    div_err, _ = ck.checkify(lambda a: 1 // a, errors=ck.div_checks)(fnp.asarray(0))
    assert isinstance(div_err.get_exception(), ck.DivisionByZeroError)
    oob, _ = ck.checkify(lambda x, i: x[i], errors=ck.index_checks)(fnp.ones(2), 2)
    assert isinstance(oob.get_exception(), ck.OOBError)
    batched, _ = ft.vmap(ck.checkify(pos))(fnp.asarray([1.0, -1.0]))
    assert isinstance(batched.get_exception(), ck.BatchedError)
    assert ck.init_error.get() is None


def test_error_sets():
    assert ck.all_checks == ck.user_checks | ck.automatic_checks
    assert ck.automatic_checks == ck.nan_checks | ck.div_checks | ck.index_checks
    assert ck.float_checks - ck.nan_checks == ck.div_checks
    assert ck.ErrorCategory is type


def test_bad_input_errors():
    with pytest.raises(TypeError, match="checkify of 'pos'.*expected errors to be a set"):
        ck.checkify(pos, errors={1})
    with pytest.raises(TypeError, match="checkify.*expected errors.*got str"):
        ck.checkify(pos, errors="nan")
    with pytest.raises(TypeError, match="checkify: expected a callable, got int"):
        ck.checkify(3)
    with pytest.raises(TypeError, match=r"checkify.check: expected a scalar boolean pred.*\[2\]"):
        ck.check(np.array([True, False]), "m")
    with pytest.raises(TypeError, match="checkify.check: expected a scalar boolean pred"):
        ck.check(np.float64(1.0), "m")
    with pytest.raises(TypeError, match="checkify.check: expected the formatting arguments"):
        ck.check(True, "m {}", "text")
    with pytest.raises(JaxRuntimeError, match="m 3 and 2.5"):  # numbers too (JAX: arrays only)
        ck.check(False, "m {} and {}", 3, 2.5)
    with pytest.raises(TypeError, match="checkify.check: expected a message string, got int"):
        ck.check(True, 3)
    with pytest.raises(TypeError, match="checkify.check_error: expected a checkify.Error"):
        ck.check_error(3)
    with pytest.raises(TypeError, match="checkify.debug_check: expected a scalar boolean"):
        ck.debug_check(np.zeros(2, bool), "m")


def test_jit_without_checkify_is_a_clear_error():
    with pytest.raises(ValueError, match="functionalized by checkify.checkify"):
        ft.jit(pos)(1.0)
    with pytest.raises(ValueError, match="functionalized by checkify.checkify"):
        ft.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: pos(c), x))(1.0)

    def dbg(x):
        ck.debug_check(x > 0, "never raised")
        return x * 2

    np.testing.assert_allclose(ft.jit(dbg)(-1.0), -2.0)  # a no-op without checkify
    assert "check" in str(ft.make_jaxpr(pos)(1.0))


def test_eager_check_raises_and_passes():
    np.testing.assert_allclose(pos(fnp.asarray(2.0)), np.log(2.0) * 2.0)
    with pytest.raises(JaxRuntimeError, match=r"got -2.0 \(`check` failed\)"):
        pos(fnp.asarray(-2.0))
    ck.check(True, "fine")
    with pytest.raises(JaxRuntimeError, match="plain"):
        ck.check(False, "plain")
    # eager loops run their checks too
    with pytest.raises(JaxRuntimeError, match="x must be positive"):
        lax.fori_loop(0, 3, lambda i, c: pos(c) - 5.0, fnp.asarray(2.0))


XS = np.array([0.5, -1.0, 2.0, -3.0, 4.0])


def loopy(x):
    def body(i, c):
        ck.check(c < 4.0, "step {} carry {}", i, c)
        return c + fnp.abs(x)

    y = lax.fori_loop(0, 6, body, fnp.asarray(0.0))
    z = lax.cond(x > 0, lambda v: pos(v), lambda v: v * 3.0, x)
    return y + z


def test_jit_equals_eager_and_vmap_equals_a_loop():
    f = ck.checkify(loopy)
    for x in XS:
        e1, o1 = f(x)
        e2, o2 = ft.jit(f)(x)
        e3, o3 = ck.checkify(ft.jit(loopy))(x)
        assert e1.get() == e2.get() == e3.get()
        np.testing.assert_allclose(o1, o2, rtol=1e-13)
        np.testing.assert_allclose(o1, o3, rtol=1e-13)
    err, out = ft.vmap(f)(XS)
    want = []
    for i, x in enumerate(XS):
        e, o = f(x)
        np.testing.assert_allclose(out[i], o, rtol=1e-13)
        if e.get() is not None:
            want.append(f"at mapped index {i}: {e.get()}")
    assert err.get() == "\n".join(want)
    errj, outj = ft.jit(ft.vmap(f))(XS)
    assert errj.get() == err.get()
    np.testing.assert_allclose(outj, out, rtol=1e-13)


def test_grad_with_checks():
    check_grads(pos, (1.5,), order=2, modes=("fwd", "rev"))
    check_grads(loopy, (0.3,), order=2, modes=("fwd", "rev"))
    g = ft.grad(pos)(2.0)
    np.testing.assert_allclose(g, np.log(2.0) + 1.0)
    with pytest.raises(JaxRuntimeError):
        ft.grad(pos)(-2.0)
    with pytest.raises(JaxRuntimeError):  # the eager derivative program reused
        ft.grad(pos)(-3.0)
    # grad(vmap) and vmap(grad)
    gs = ft.grad(lambda v: ft.vmap(pos)(v).sum())(fnp.asarray([1.0, 2.0]))
    np.testing.assert_allclose(gs, np.log([1.0, 2.0]) + 1.0)
    np.testing.assert_allclose(ft.vmap(ft.grad(pos))(fnp.asarray([1.0, 2.0])), gs)
    with pytest.raises(JaxRuntimeError, match="got -2.0"):
        ft.vmap(ft.grad(pos))(fnp.asarray([1.0, -2.0]))
    err, g = ck.checkify(ft.vmap(ft.grad(pos)))(fnp.asarray([1.0, -2.0]))
    assert err.get() == "x must be positive, got -2.0 (`check` failed)"
    err, g = ft.vmap(ck.checkify(ft.grad(loopy)))(XS)
    for i, x in enumerate(XS):
        e, gi = ck.checkify(ft.grad(loopy))(x)
        np.testing.assert_allclose(g[i], gi, rtol=1e-12)
    # differentiating through checkify's outputs (the error is not differentiated)
    for x in (0.3, 0.7):
        np.testing.assert_allclose(
            ft.grad(lambda v: ck.checkify(loopy)(v)[1])(x), ft.grad(loopy)(x), rtol=1e-12
        )
        np.testing.assert_allclose(
            ft.jit(ft.grad(lambda v: ck.checkify(loopy)(v)[1]))(x), ft.grad(loopy)(x), rtol=1e-12
        )


def test_while_loop_reverse_mode_under_checkify():
    def f(x):
        def body(c):
            ck.check(c[1] < 3.0, "carry {}", c[1])
            return c[0] + 1, fnp.sin(c[1]) + x

        return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]

    err, g = ck.checkify(ft.grad(f))(0.5)
    assert err.get() is None
    np.testing.assert_allclose(g, ft.grad(f)(0.5), rtol=1e-12)
    err, _ = ck.checkify(ft.grad(f))(3.5)
    assert err.get() == "carry 3.5 (`check` failed)"
    err, _ = ft.jit(ck.checkify(ft.grad(f)))(3.5)
    assert err.get() == "carry 3.5 (`check` failed)"


def test_custom_rules_and_checkpoint_are_checked():
    @ft.custom_jvp
    def safe_log(x):
        ck.check(x > 0, "safe_log of {}", x)
        return fnp.log(x)

    safe_log.defjvp(lambda p, t: (safe_log(p[0]), t[0] / p[0] * 10.0))

    err, _ = ck.checkify(safe_log)(-1.0)
    assert err.get() == "safe_log of -1.0 (`check` failed)"
    np.testing.assert_allclose(ft.grad(lambda x: ck.checkify(safe_log)(x)[1])(2.0), 5.0)

    @ft.custom_vjp
    def sq(x):
        ck.check(x < 5, "sq of {}", x)
        return x * x

    sq.defvjp(lambda x: (sq(x), x), lambda r, ct: (ct * 3.0 * r,))
    err, _ = ft.jit(ck.checkify(sq))(6.0)
    assert err.get() == "sq of 6.0 (`check` failed)"
    np.testing.assert_allclose(ft.grad(lambda x: ck.checkify(sq)(x)[1])(2.0), 6.0)

    err, out = ck.checkify(ft.checkpoint(pos))(-4.0)
    assert err.get() == "x must be positive, got -4.0 (`check` failed)"
    err, g = ck.checkify(ft.grad(ft.checkpoint(pos)))(2.0)
    assert err.get() is None
    np.testing.assert_allclose(g, np.log(2.0) + 1.0)


def test_check_error_joins_the_outer_error():
    inner = ft.jit(ck.checkify(pos))

    def outer(x):
        err, y = inner(x)
        ck.check_error(err)
        ck.check(y < 100.0, "too large {}", y)
        return y

    assert ck.checkify(outer)(fnp.asarray(-1.0))[0].get() == (
        "x must be positive, got -1.0 (`check` failed)"
    )
    assert ck.checkify(outer)(fnp.asarray(50.0))[0].get().startswith("too large 195.6")
    err, _ = ft.vmap(inner)(fnp.asarray([1.0, -1.0, -2.0]))
    with pytest.raises(JaxRuntimeError, match="got -2.0"):  # the last failing example, as JAX
        ck.check_error(err)


def test_threads_get_their_own_errors():
    f = ft.jit(ck.checkify(loopy))
    xs = np.linspace(-3.0, 3.0, 8)
    want = [(e.get(), np.asarray(o)) for e, o in (ck.checkify(loopy)(x) for x in xs)]
    got: list = [None] * 8
    barrier = threading.Barrier(8)

    def run(i):
        barrier.wait()
        for _ in range(5):
            e, o = f(xs[i])
            got[i] = (e.get(), np.asarray(o))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (gm, go), (wm, wo) in zip(got, want):
        assert gm == wm
        np.testing.assert_allclose(go, wo, rtol=1e-13)
    assert len({m for m, _ in want}) > 2  # different errors, not one shared


def test_scan_and_switch_under_vmap_and_jit():
    def f(i, xs):
        def body(c, x):
            ck.check(x + c < 6.0, "sum {} at {}", x + c, x)
            return c + x, x * 2

        c, ys = lax.scan(body, 0.0, xs)
        return lax.switch(i, [lambda v: v, lambda v: pos(v - 2.0)], c), ys

    g = ck.checkify(f)
    idx = np.array([0, 1, 1])
    xs = np.array([[1.0, 2.0, 3.0], [0.0, 0.5, 1.0], [1.0, 1.0, 1.0]])
    err, (a, b) = ft.vmap(g)(idx, xs)
    errj, (aj, bj) = ft.jit(ft.vmap(g))(idx, xs)
    assert err.get() == errj.get()
    lines = []
    for k in range(3):
        e, (ak, bk) = g(idx[k], xs[k])
        np.testing.assert_allclose(a[k], ak)
        np.testing.assert_allclose(b[k], bk)
        if e.get() is not None:
            lines.append(f"at mapped index {k}: {e.get()}")
    assert err.get() == "\n".join(lines) and len(lines) == 2
