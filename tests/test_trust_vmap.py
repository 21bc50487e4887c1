"""Regression tests: custom rules and grad_hook under vmap behave as the unbatched program
(a Python loop over the examples) does."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp

X = np.array([[0.3, 1.7, -2.2], [2.6, -0.4, 0.9]])  # 2 examples of 3 along axis 0
W = np.array([0.5, -1.5, 2.0])


def _loop(f, xs, axis=0):
    """Stack f over the examples of xs along ``axis`` (the reference without vmap)."""
    return np.stack([np.asarray(f(np.take(xs, i, axis=axis))) for i in range(xs.shape[axis])])


# -- item 1: custom_vjp / custom_jvp keep their rules under vmap ----------------


@ft.custom_vjp
def sround(x):
    return fnp.round(x)


sround.defvjp(lambda x: (fnp.round(x), None), lambda r, g: (g,))


@ft.custom_vjp
def clip_grad(x):
    return x


clip_grad.defvjp(lambda x: (x, None), lambda r, g: (fnp.clip(g, -1.0, 1.0),))


@ft.custom_jvp
def jround(x):
    return fnp.round(x)


@jround.defjvp
def _jround_jvp(primals, tangents):
    return fnp.round(primals[0]), tangents[0] * 2.0


def test_item1_custom_vjp_grad_of_vmap_uses_rule() -> None:
    x = np.array([0.3, 1.7])
    g = ft.grad(lambda x: fnp.sum(ft.vmap(sround)(x)))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0])
    # the clipped-gradient identity: the cotangent 5 is clipped to 1
    g = ft.grad(lambda x: fnp.sum(ft.vmap(lambda v: clip_grad(v) * 5.0)(x)))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0])
    g = ft.grad(lambda x: fnp.sum(5.0 * ft.vmap(clip_grad)(x)))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0])


def _f_vjp(w, x):
    return fnp.sum(sround(x * w) + clip_grad(x) * 3.0)


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "vjp", "vmap_of_grad_is_unchanged"])
@pytest.mark.parametrize("axis", [0, 1])
def test_item1_custom_vjp_under_vmap_matches_loop(transform, axis) -> None:
    xs = X if axis == 0 else X.T

    def batched(w):
        return fnp.sum(ft.vmap(_f_vjp, in_axes=(None, axis))(w, xs))

    ref_w = sum(ft.grad(_f_vjp)(W, np.take(xs, i, axis=axis)) for i in range(2))
    ref_x = _loop(lambda x: ft.grad(_f_vjp, argnums=1)(W, x), xs, axis)
    if axis == 1:
        ref_x = ref_x.T
    if transform == "grad":
        np.testing.assert_allclose(ft.grad(batched)(W), ref_w)
        gx = ft.grad(lambda xs_: fnp.sum(ft.vmap(_f_vjp, in_axes=(None, axis))(W, xs_)))(xs)
        np.testing.assert_allclose(gx, ref_x)
    elif transform == "jit_grad":
        np.testing.assert_allclose(ft.jit(ft.grad(batched))(W), ref_w)
    elif transform == "vjp":
        out, pull = ft.vjp(lambda w, xs_: ft.vmap(_f_vjp, in_axes=(None, axis))(w, xs_), W, xs)
        np.testing.assert_allclose(out, [_f_vjp(W, np.take(xs, i, axis=axis)) for i in range(2)])
        gw, gx = pull(np.ones(2))
        np.testing.assert_allclose(gw, ref_w)
        np.testing.assert_allclose(gx, ref_x)
    else:
        got = ft.vmap(ft.grad(_f_vjp, argnums=1), in_axes=(None, axis))(W, xs)
        np.testing.assert_allclose(got, _loop(lambda x: ft.grad(_f_vjp, argnums=1)(W, x), xs, axis))


@pytest.mark.parametrize("axis", [0, 1, None])
def test_item1_custom_jvp_under_vmap_matches_loop(axis) -> None:
    def f(w, x):
        return jround(x * w)

    xs = X if axis in (0, None) else X.T
    if axis is None:  # x not mapped, w mapped
        ws = np.stack([W, 2 * W])
        primal = ft.vmap(f, in_axes=(0, None))(ws, xs[0])
        vf0 = ft.vmap(f, in_axes=(0, None))
        out, t = ft.jvp(lambda w: vf0(w, xs[0]), (ws,), (np.ones_like(ws),))
        ref_t = _loop(lambda w: ft.jvp(lambda w_: f(w_, xs[0]), (w,), (np.ones(3),))[1], ws)
        np.testing.assert_allclose(out, primal)
        np.testing.assert_allclose(t, ref_t)
        g = ft.grad(lambda w: fnp.sum(vf0(w, xs[0])))(ws)
        ref_g = _loop(lambda w: ft.grad(lambda w_: fnp.sum(f(w_, xs[0])))(w), ws)
        np.testing.assert_allclose(g, ref_g)
        return
    vf = ft.vmap(f, in_axes=(None, axis))
    per = [np.take(xs, i, axis=axis) for i in range(2)]
    # jvp(vmap): the rule's tangent is 2 * (x*w)' , not round's zero derivative
    out, t = ft.jvp(lambda x: vf(W, x), (xs,), (np.ones_like(xs),))
    np.testing.assert_allclose(t, np.stack([2.0 * W * np.ones(3) for _ in per]))
    np.testing.assert_allclose(out, np.stack([np.round(p * W) for p in per]))
    ref_gw = sum(ft.grad(lambda w, p: fnp.sum(f(w, p)))(W, p) for p in per)
    np.testing.assert_allclose(ft.grad(lambda w: fnp.sum(vf(w, xs)))(W), ref_gw)
    np.testing.assert_allclose(ft.jit(ft.grad(lambda w: fnp.sum(vf(w, xs))))(W), ref_gw)
    _, pull = ft.vjp(lambda w: vf(w, xs), W)
    np.testing.assert_allclose(pull(np.ones((2, 3)))[0], ref_gw)


def test_item1_nested_vmap_jit_and_rule_used_twice() -> None:
    xs = np.stack([X, X * 0.5])  # (2, 2, 3)
    g = ft.grad(lambda x: fnp.sum(ft.vmap(ft.vmap(sround))(x)))(xs)
    np.testing.assert_array_equal(g, np.ones_like(xs))
    g = ft.grad(lambda x: fnp.sum(ft.vmap(ft.vmap(jround, in_axes=1), in_axes=2)(x)))(xs)
    np.testing.assert_array_equal(g, 2.0 * np.ones_like(xs))
    # vmap inside jit, and jit inside vmap
    g = ft.jit(ft.grad(lambda x: fnp.sum(ft.vmap(lambda v: clip_grad(v) * 5.0)(x))))(X)
    np.testing.assert_array_equal(g, np.ones_like(X))
    g = ft.grad(lambda x: fnp.sum(ft.vmap(ft.jit(lambda v: 5.0 * clip_grad(v)))(x)))(X)
    np.testing.assert_array_equal(g, np.ones_like(X))
    # grad(vmap(grad(f))): the rule in both passes (second derivative of cube via bwd)

    @ft.custom_vjp
    def cube(x):
        return x**3

    cube.defvjp(lambda x: (cube(x), x), lambda x, ct: (3.0 * x**2 * ct + 100.0 * 0 * x,))
    x = np.array([1.0, 2.0, -3.0])
    g2 = ft.grad(lambda x: fnp.sum(ft.vmap(ft.grad(cube))(x)))(x)
    np.testing.assert_allclose(g2, 6.0 * x)

    @ft.custom_vjp
    def fake_sq(x):
        return x * x

    fake_sq.defvjp(lambda x: (fake_sq(x), x), lambda x, ct: (10.0 * x * ct,))  # not 2x
    g2 = ft.grad(lambda x: fnp.sum(ft.vmap(ft.grad(fake_sq))(x)))(x)
    np.testing.assert_allclose(g2, [10.0, 10.0, 10.0])  # d/dx of the rule's 10x
    g1 = ft.grad(lambda x: fnp.sum(ft.vmap(fake_sq)(x)))(x)
    np.testing.assert_allclose(g1, 10.0 * x)


def test_item1_nondiff_pytrees_none_cotangents_and_batchness() -> None:
    @partial(ft.custom_vjp, nondiff_argnums=(0,))
    def scaled(k, p):
        return {"u": k * p["a"] * p["b"], "v": p["a"]}

    def fwd(k, p):
        return scaled(k, p), (p["a"], p["b"])

    def bwd(k, res, ct):
        a, b = res
        return ({"a": 7.0 * ct["u"] * b, "b": None},)  # b: None cotangent, v's ct ignored

    scaled.defvjp(fwd, bwd)
    a = np.array([1.0, 2.0, 3.0])
    b = 2.5  # not mapped

    def loss(a_, b_):
        out = ft.vmap(lambda ai, bi: scaled(3.0, {"a": ai, "b": bi}), in_axes=(0, None))(a_, b_)
        return fnp.sum(out["u"]) + fnp.sum(out["v"])

    ga, gb = ft.grad(loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, 7.0 * b * np.ones(3))
    assert gb == 0.0

    # a tangent that differs per example for an output the function computes the same
    # for every example: the output becomes batched
    @ft.custom_jvp
    def first(w, x):
        return w * 1.0

    @first.defjvp
    def _first_jvp(primals, tangents):
        (w, _), (tw, tx) = primals, tangents
        return w * 1.0, tw + tx

    xs = np.array([1.0, 2.0, 3.0])
    out, t = ft.jvp(lambda x: ft.vmap(first, in_axes=(None, 0))(4.0, x), (xs,), (xs,))
    np.testing.assert_allclose(out, [4.0, 4.0, 4.0])
    np.testing.assert_allclose(t, xs)
    g = ft.grad(lambda x: fnp.sum(ft.vmap(first, in_axes=(None, 0))(4.0, x) * x))(xs)
    np.testing.assert_allclose(g, [4.0 + 1.0, 4.0 + 2.0, 4.0 + 3.0])
    # symbolic-zero tangent for the unmapped argument (not differentiated)
    g = ft.grad(lambda w: fnp.sum(ft.vmap(first, in_axes=(None, 0))(w, xs)))(4.0)
    assert g == 3.0
    # primal-only vmap unchanged
    np.testing.assert_array_equal(ft.vmap(sround)(X), np.round(X))
    np.testing.assert_array_equal(ft.jit(ft.vmap(sround))(X), np.round(X))


# -- item 2: grad_hook under vmap sees each example ---------------------------


def _hooked(seen, replace=None):
    def hook(ct):
        seen.append(np.asarray(ct).copy())
        return None if replace is None else replace(ct)

    def f(w, x):
        h = ft.grad_hook(w * x, hook)
        return fnp.sum(fnp.sin(h) * x)

    return f


def _clip(ct):
    n = fnp.sqrt(fnp.sum(ct * ct))
    return ct * fnp.minimum(1.0, 0.5 / n)


@pytest.mark.parametrize("replace", [None, _clip])
@pytest.mark.parametrize(
    "transform", ["vmap_grad", "grad_vmap", "jit_vmap_grad", "jit_grad_vmap", "vjp_vmap"]
)
def test_item2_grad_hook_per_example(transform, replace) -> None:
    seen: list[np.ndarray] = []
    f = _hooked(seen, replace)
    ref = [ft.grad(f)(W, x) for x in X]
    ref_seen = list(seen)
    seen.clear()
    if transform == "vmap_grad":
        got = ft.vmap(ft.grad(f), in_axes=(None, 0))(W, X)
        np.testing.assert_allclose(got, np.stack(ref))
    elif transform == "jit_vmap_grad":
        got = ft.jit(ft.vmap(ft.grad(f), in_axes=(None, 0)))(W, X)
        np.testing.assert_allclose(got, np.stack(ref))
    else:
        total = lambda w: fnp.sum(ft.vmap(f, in_axes=(None, 0))(w, X))  # noqa: E731
        if transform == "grad_vmap":
            got = ft.grad(total)(W)
        elif transform == "jit_grad_vmap":
            got = ft.jit(ft.grad(total))(W)
        else:
            got = ft.vjp(lambda w: ft.vmap(f, in_axes=(None, 0))(w, X), W)[1](np.ones(2))[0]
        np.testing.assert_allclose(got, sum(ref))
    assert len(seen) == len(ref_seen) == 2
    for s, r in zip(seen, ref_seen):
        np.testing.assert_allclose(s, r)


def test_item2_grad_hook_unbatched_value_and_nested_vmap() -> None:
    # The hooked value is a parameter closed over (not batched): still one call per
    # example, each with that example's cotangent; the clipped cotangents are summed.
    seen: list[np.ndarray] = []

    def clip_and_log(ct):
        seen.append(np.asarray(ct).copy())
        return _clip(ct)

    def loss(w, x):
        return fnp.sum(ft.grad_hook(w, clip_and_log) * x)

    ref = sum(ft.grad(loss)(W, x) for x in X)
    ref_seen = list(seen)
    seen.clear()
    for run in (
        lambda: ft.grad(lambda w: fnp.sum(ft.vmap(lambda x: loss(w, x))(X)))(W),
        lambda: ft.grad(lambda w: fnp.sum(ft.vmap(loss, in_axes=(None, 0))(w, X)))(W),
        lambda: ft.jit(ft.grad(lambda w: fnp.sum(ft.vmap(lambda x: loss(w, x))(X))))(W),
        lambda: ft.vmap(ft.grad(loss), in_axes=(None, 0))(W, X).sum(0),
        lambda: ft.vmap(ft.grad(loss), in_axes=(None, 1))(W, X.T).sum(0),
    ):
        np.testing.assert_allclose(run(), ref)
        assert len(seen) == 2
        for s, r in zip(seen, ref_seen):
            np.testing.assert_allclose(s, r)
        seen.clear()
    # nested vmap: one call per (outer, inner) example, in loop order
    xs = np.stack([X, -2.0 * X])  # (2 outer, 2 inner, 3)
    f = _hooked(seen)
    ref_g = [[ft.grad(f)(W, x) for x in xo] for xo in xs]
    ref_seen = list(seen)
    seen.clear()
    got = ft.vmap(ft.vmap(ft.grad(f), in_axes=(None, 0)), in_axes=(None, 0))(W, xs)
    np.testing.assert_allclose(got, np.array(ref_g))
    assert len(seen) == 4
    for s, r in zip(seen, ref_seen):
        np.testing.assert_allclose(s, r)
    seen.clear()
    vvf = ft.vmap(ft.vmap(f, in_axes=(None, 0)), in_axes=(None, 0))
    g = ft.grad(lambda w: fnp.sum(vvf(w, xs)))(W)
    np.testing.assert_allclose(g, np.array(ref_g).sum((0, 1)))
    assert len(seen) == 4
    for s, r in zip(seen, ref_seen):
        np.testing.assert_allclose(s, r)


def test_item2_hook_under_vmap_of_jit_of_vjp() -> None:
    # Found by the long fuzz profile: vmap(jit(vjp(f))) with a hook whose cotangent is a
    # constant. The jaxpr is traced inside the vmap, but without it: the hook must not
    # broadcast the cotangent into the outer vmap (a tracer leaked into the jaxpr's
    # constants). Now it gives the per-example loop's answer.
    def clip(g):
        return g / (1.0 + fnp.sum(g * g))

    def vjp_fn(x):
        out, pb = ft.vjp(lambda x: ft.grad_hook(fnp.sin(x) * np.ones(3), clip), x)
        return pb(np.full(np.shape(out), 0.5))[0]

    def vjp_fn2(x, y):  # the cotangent depends on the example: a staged hook call
        out, pb = ft.vjp(lambda x: ft.grad_hook(fnp.sin(x) * fnp.arange(3.0), clip), x)
        return pb(fnp.cos(y) * np.ones(np.shape(out)))[0]

    xs, ys = np.array([0.3, -0.2, 1.1]), np.array([0.1, 0.4, -2.0])
    loop = np.array([vjp_fn(x) for x in xs])
    np.testing.assert_allclose(ft.vmap(ft.jit(vjp_fn))(xs), loop, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.vmap(vjp_fn))(xs), loop, rtol=1e-12)
    loop2 = np.array([vjp_fn2(x, y) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(ft.vmap(ft.jit(vjp_fn2))(xs, ys), loop2, rtol=1e-12)


def test_item2_grad_hook_bad_replacement_under_vmap() -> None:
    f = lambda w, x: fnp.sum(ft.grad_hook(w * x, lambda ct: np.ones(7)))  # noqa: E731
    with pytest.raises(ValueError, match=r"grad_hook.*shape \(3,\)"):
        ft.vmap(ft.grad(f), in_axes=(None, 0))(W, X)
    with pytest.raises(ValueError, match=r"grad_hook.*shape \(3,\)"):
        ft.grad(lambda w: fnp.sum(ft.vmap(f, in_axes=(None, 0))(w, X)))(W)


def test_item1_rules_closing_over_batched_values() -> None:
    # A JVP rule closing over a batched value runs inside the same vmap: it works.
    def g(s, x):
        @ft.custom_jvp
        def h(x):
            return fnp.round(x) * s

        h.defjvp(lambda p, t: (h(p[0]), t[0] * s * 3.0))
        return h(x)

    s = np.array([1.0, 2.0])
    got = ft.grad(lambda xs: fnp.sum(ft.vmap(g)(s, xs)))(X)
    ref = np.stack([ft.grad(lambda x, si: fnp.sum(g(si, x)))(x, si) for si, x in zip(s, X)])
    np.testing.assert_allclose(got, ref)

    # bwd runs after the vmap has returned: a closure over its values is a clear error
    def g2(s, x):
        @ft.custom_vjp
        def h(x):
            return fnp.round(x) * s

        h.defvjp(lambda x: (h(x), None), lambda r, ct: (ct * s * 3.0,))
        return h(x)

    with pytest.raises(ft.errors.UnexpectedTracerError, match=r"bwd of 'h'.*residual"):
        ft.grad(lambda xs: fnp.sum(ft.vmap(g2)(s, xs)))(X)


def test_item2_hook_closing_over_batched_values() -> None:
    # vmap(grad(f)) with a hook that closes over a value the vmap batches: each
    # per-example call gets that example's value, as a loop would (the hook returned
    # the whole batch's tracer, which leaked out as the result)
    def loss(x, s):
        y = ft.grad_hook(fnp.sin(x) * 2.0, lambda ct: ct * s + fnp.cos(s) * ct**2)
        return fnp.sum(y**2) * s

    s, xs = np.array([0.5, -1.5]), np.stack([X[0], 2.0 * X[0]])
    loop = np.stack([ft.grad(loss)(x, si) for x, si in zip(xs, s)])
    got = ft.vmap(ft.grad(loss))(xs, s)
    assert type(got) is ft.Array
    np.testing.assert_allclose(got, loop, rtol=1e-13)
    nested = ft.vmap(ft.vmap(ft.grad(loss)))(np.stack([xs, -xs]), np.stack([s, 2 * s]))
    twice = [[ft.grad(loss)(x, si) for x, si in zip(xs2, s2)] for xs2, s2 in
             zip(np.stack([xs, -xs]), np.stack([s, 2 * s]))]  # fmt: skip
    np.testing.assert_allclose(nested, np.array(twice), rtol=1e-13)
    # the derivative of the per-example hook calls: forward mode around it
    _, t = ft.jvp(ft.vmap(ft.grad(loss)), (xs, s), (np.ones_like(xs), np.zeros_like(s)))
    h = 1e-6
    fd = (ft.vmap(ft.grad(loss))(xs + h, s) - ft.vmap(ft.grad(loss))(xs - h, s)) / (2 * h)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-6)
    # where the hook runs after the vmap (grad(vmap)) or in compiled code (jit), the
    # traced values it closes over are its operands: the same numbers in every order
    for fn in (
        ft.jit(ft.vmap(ft.grad(loss))),
        ft.vmap(ft.jit(ft.grad(loss))),
        ft.grad(lambda a, b: fnp.sum(ft.vmap(loss)(a, b))),
        ft.jit(ft.grad(lambda a, b: fnp.sum(ft.vmap(loss)(a, b)))),
    ):
        np.testing.assert_allclose(fn(xs, s), loop, rtol=1e-13)


def test_item2_hook_closing_over_traced_values() -> None:
    # gradient clipping at a threshold that is an argument of the jitted step (the hook
    # ran after the trace of c had returned: an escaped tracer), as a closure and as a
    # functools.partial
    def clip(c, g):
        return fnp.clip(g, -c, c)

    def loss(x, c, how):
        hook = (lambda g: clip(c, g)) if how == "closure" else partial(clip, c)
        return fnp.sum(ft.grad_hook(fnp.sin(x) * 3.0, hook) ** 2)

    x = np.array([0.5, -1.2, 2.0, 0.1])
    want = np.clip(6.0 * np.sin(x), -0.5, 0.5) * 3.0 * np.cos(x)  # the clipped cotangent
    for how in ("closure", "partial"):
        g = ft.grad(loss)
        np.testing.assert_allclose(g(x, 0.5, how), want, rtol=1e-14)
        np.testing.assert_allclose(ft.jit(g, static_argnums=2)(x, 0.5, how), want, rtol=1e-14)
        np.testing.assert_allclose(ft.jit(g, static_argnums=2)(x, 2.0, how), g(x, 2.0, how))

    # a hook closing over the value being differentiated: every second-order mode agrees
    def f(x):
        return fnp.sum(ft.grad_hook(x**2, lambda g: g * x))

    np.testing.assert_allclose(ft.grad(f)(x), 2 * x**2)
    for h in (ft.hessian(f), ft.jit(ft.hessian(f)), ft.jacfwd(ft.grad(f)), ft.jacrev(ft.grad(f))):
        np.testing.assert_allclose(h(x), np.diag(4 * x), rtol=1e-14)

    # a traced value reached through another function is not passed: a clear error where
    # the hook runs after the trace returned, the right numbers where it does not
    def indirect(x, c):
        helper = lambda g: fnp.clip(g, -c, c)  # noqa: E731
        return fnp.sum(ft.grad_hook(fnp.sin(x) * 3.0, lambda g: helper(g)) ** 2)

    np.testing.assert_allclose(ft.grad(indirect)(x, 0.5), want, rtol=1e-14)
    cs = np.array([0.5, 2.0])  # eager vmap(grad): each call picks its example's result
    loop = np.stack([ft.grad(indirect)(x, c) for c in cs])
    np.testing.assert_allclose(ft.vmap(ft.grad(indirect), (None, 0))(x, cs), loop, rtol=1e-14)
    with pytest.raises(
        ft.errors.UnexpectedTracerError, match="grad_hook: the hook <lambda>.*close"
    ):
        ft.jit(ft.grad(indirect))(x, 0.5)


def test_rules_closing_over_vmap_values_of_an_unbatched_differentiated_input() -> None:
    # jvp(vmap(f)) where f's custom function takes z from outside the vmap and closes
    # over x of the vmap: the rule ran on z alone (forward mode looked innermost) and
    # x's vmap value was taken for a closure over a differentiated value.
    xs = np.array([0.0, 1.0, 2.0])

    def h(z, kind):
        def f(x):
            if kind == "jvp":
                g = ft.custom_jvp(lambda y: x * y)
                g.defjvp(lambda p, t: (x * p[0], 3.0 * x * t[0]))  # 3 on purpose: used
            else:
                g = ft.custom_vjp(lambda y: x * y)
                g.defvjp(lambda y: (x * y, x), lambda r, ct: (3.0 * r * ct,))
            return g(z)

        return ft.vmap(f)(xs)

    out, t = ft.jvp(lambda z: h(z, "jvp"), (1.0,), (2.0,))  # JAX (rule x*t): [0,1,2], [0,2,4]
    np.testing.assert_array_equal(out, xs)
    np.testing.assert_array_equal(t, 6.0 * xs)
    out, t = ft.jit(lambda z, dz: ft.jvp(lambda z: h(z, "jvp"), (z,), (dz,)))(1.0, 2.0)
    np.testing.assert_array_equal(t, 6.0 * xs)
    loop = [ft.grad(lambda z, x=x: x * z * 3.0)(1.0) for x in xs]
    for kind in ("jvp", "vjp"):
        assert ft.grad(lambda z, k=kind: fnp.sum(h(z, k)))(1.0) == sum(loop)
        assert ft.jit(ft.grad(lambda z, k=kind: fnp.sum(h(z, k))))(1.0) == sum(loop)
        np.testing.assert_array_equal(ft.jacrev(lambda z, k=kind: h(z, k))(1.0), 3.0 * xs)

    # still an error: a rule closing over the value being differentiated
    def bad(z):
        def f(x):
            g = ft.custom_jvp(lambda y: y * z)
            g.defjvp(lambda p, t: (p[0] * z, t[0] * z))
            return g(x)

        return fnp.sum(ft.vmap(f)(xs))

    for fn in (ft.grad(bad), lambda z: ft.jvp(bad, (z,), (1.0,))):
        with pytest.raises(NotImplementedError, match="close over no value being differentiated"):
            fn(1.0)


def test_item1_nondiff_argument_batched_or_shared() -> None:
    @partial(ft.custom_vjp, nondiff_argnums=(0,))
    def scale(k, x):
        return k * x

    scale.defvjp(lambda k, x: (scale(k, x), None), lambda k, res, ct: (10.0 * k * ct,))
    ks, xs = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    loop = np.array([ft.grad(lambda x, k=k: scale(k, x))(x) for k, x in zip(ks, xs)])
    np.testing.assert_allclose(loop, [10.0, 20.0])
    for got in (
        ft.grad(lambda x: fnp.sum(ft.vmap(scale)(ks, x)))(xs),
        ft.jit(ft.grad(lambda x: fnp.sum(ft.vmap(scale)(ks, x))))(xs),
        ft.vmap(ft.grad(scale, argnums=1))(ks, xs),
    ):
        np.testing.assert_allclose(got, loop)
    g = ft.grad(lambda x: fnp.sum(ft.vmap(scale, in_axes=(None, 0))(3.0, x)))(xs)
    np.testing.assert_allclose(g, [30.0, 30.0])


# -- item 2: grad_hook under nested derivatives: one semantics, eagerly and under jit --
# The hook runs in the innermost backward pass that differentiates its value; outer
# transforms differentiate through that pass (and the hook), and never call it again.


def _square_hook(g):
    return 3.0 * g * g


def _norm_hook(g):
    return g / (1.0 + fnp.sum(g * g))


_A = np.random.default_rng(0).uniform(-1, 1, (3, 4))


def _nested_f(hook):
    def f(x):
        a = _A + 0.3 * fnp.tanh(x)
        return fnp.sum(fnp.sin(ft.grad_hook(a * a, hook) + 0.3))

    return f


_SECOND_ORDER = {
    "grad(grad)": lambda f: ft.grad(ft.grad(f)),
    "jit(grad(grad))": lambda f: ft.jit(ft.grad(ft.grad(f))),
    "grad(jit(grad))": lambda f: ft.grad(ft.jit(ft.grad(f))),
    "jit(grad(jit(grad)))": lambda f: ft.jit(ft.grad(ft.jit(ft.grad(f)))),
    "jvp(grad)": lambda f: lambda x: ft.jvp(ft.grad(f), (x,), (1.0,))[1],
    "jit(jvp(grad))": lambda f: ft.jit(lambda x: ft.jvp(ft.grad(f), (x,), (1.0,))[1]),
    "hessian": lambda f: ft.hessian(f),
    "jit(hessian)": lambda f: ft.jit(ft.hessian(f)),
    "jit(jacrev(jacrev))": lambda f: ft.jit(ft.jacrev(ft.jacrev(f))),
}


@pytest.mark.parametrize("nesting", list(_SECOND_ORDER))
def test_item2_hook_under_nested_grad_same_eagerly_and_under_jit(nesting) -> None:
    # Closed form: f(x) = sin(hook(x^2)) with hook(g) = 3 g^2 on the cotangent, so
    # grad f = 3 cos(x^2)^2 * 2x and its derivative is (the hook applied once, and
    # differentiated through):
    x = 0.7
    c, s = np.cos(x * x), np.sin(x * x)
    want = 6.0 * c * (-s) * 4.0 * x * x + 6.0 * c * c
    f = lambda x: fnp.sin(ft.grad_hook(x * x, _square_hook))  # noqa: E731
    np.testing.assert_allclose(_SECOND_ORDER[nesting](f)(x), want, rtol=1e-12)
    # An array value and a hook depending on the whole cotangent: the program
    # (eagerly before the fix grad(grad) applied the hook a second time in the outer
    # pass, and under jit the hook's derivative was dropped). The reference is the
    # finite difference of the (eager, first-order) hooked gradient.
    f = _nested_f(_norm_hook)
    g, e = ft.grad(f), 1e-5
    fd = (g(0.3 + e) - g(0.3 - e)) / (2 * e)
    got = _SECOND_ORDER[nesting](f)(0.3)
    np.testing.assert_allclose(got, fd, rtol=1e-7)
    np.testing.assert_allclose(got, ft.grad(ft.grad(f))(0.3), rtol=1e-13)


def test_item2_hook_third_order_and_call_count_under_nested_grad() -> None:
    f = _nested_f(_square_hook)
    ggg = ft.grad(ft.grad(ft.grad(f)))
    ref = ggg(0.3)
    for got in (
        ft.jit(ggg)(0.3),
        ft.grad(ft.jit(ft.grad(ft.grad(f))))(0.3),
        ft.jit(lambda x: ft.jvp(ft.grad(ft.grad(f)), (x,), (1.0,))[1])(0.3),
    ):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    # The outer reverse pass does not call the hook: one call, on the inner cotangent
    # (a value the outer grad traces); under jit the compiled code calls it on the
    # values, for its value and its derivative.
    seen: list[float] = []

    def log(g):
        seen.append(float(g))
        return 3.0 * g * g

    f = lambda x: fnp.sin(ft.grad_hook(x * x, log))  # noqa: E731
    c = float(np.cos(0.7 * 0.7))
    first = ft.grad(f)(0.7)
    assert seen == [c]
    seen.clear()
    gg = ft.grad(ft.grad(f))(0.7)
    assert seen == [c]
    seen.clear()
    np.testing.assert_allclose(ft.jit(ft.grad(ft.grad(f)))(0.7), gg, rtol=1e-13)
    assert seen and all(s == c for s in seen)
    np.testing.assert_allclose(first, 3.0 * c**2 * 1.4)


def test_item2_hook_nested_grad_under_vmap_per_example() -> None:
    # A per-example hook on a shared parameter: every second-order form equals the
    # loop over the examples, eagerly and under jit.
    def loss(w, x):
        return fnp.sum(fnp.sin(ft.grad_hook(w * x, _norm_hook)) ** 2)

    total = lambda w: fnp.sum(ft.vmap(loss, in_axes=(None, 0))(w, X))  # noqa: E731
    want = sum(ft.hessian(partial(loss, x=x))(W) for x in X)
    for got in (
        ft.hessian(total)(W),
        ft.jacrev(ft.jacrev(total))(W),
        ft.jit(ft.hessian(total))(W),
        ft.jit(ft.jacrev(ft.jacrev(total)))(W),
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    gg = ft.grad(ft.grad(_nested_f(_norm_hook)))
    xs = np.array([0.3, -0.8])
    ref = np.array([gg(x) for x in xs])
    for vgg in (ft.vmap(gg), ft.jit(ft.vmap(gg)), ft.vmap(ft.jit(gg))):
        np.testing.assert_allclose(vgg(xs), ref, rtol=1e-12)


@pytest.mark.parametrize("nesting", ["grad(grad)", "jvp(grad)", "jit(jvp(grad))", "hessian"])
def test_item2_hook_second_order_under_vmap_of_no_examples(nesting) -> None:
    # A hook's derivative under vmap runs per example: with no examples, nothing runs
    # and the result is the empty batch of one example's shape.
    f = _SECOND_ORDER[nesting](_nested_f(_norm_hook))
    one = np.asarray(f(0.3))
    for v in (ft.vmap(f), ft.jit(ft.vmap(f))):
        got = v(np.zeros(0))
        assert got.shape == (0, *one.shape) and got.dtype == one.dtype


def test_item2_hook_in_loop_body_second_derivative() -> None:
    # A hook in a scan body and a cond branch is staged (hook_call) even eagerly: its
    # derivative used to be zero there, so second derivatives dropped it.
    from functrace import lax

    def f(x):
        def body(c, _):
            return fnp.sin(ft.grad_hook(c * 1.3, _norm_hook)), None

        c, _ = lax.scan(body, x, None, length=3)
        return fnp.sum(
            lax.cond(fnp.sum(c) > 0, lambda c: ft.grad_hook(c * c, _norm_hook), fnp.sin, c)
        )

    ff = lambda x: fnp.sum(ft.grad(f)(x) ** 2)  # noqa: E731
    x, e = np.array([0.3, -0.4]), 1e-6
    fd = np.array([(ff(x + e * u) - ff(x - e * u)) / (2 * e) for u in np.eye(2)])
    want = ft.grad(ff)(x)
    np.testing.assert_allclose(want, fd, rtol=1e-6)
    np.testing.assert_allclose(ft.jit(ft.grad(ff))(x), want, rtol=1e-12)
    np.testing.assert_allclose(ft.grad(ft.jit(ff))(x), want, rtol=1e-12)
    h = ft.hessian(f)(x)
    np.testing.assert_allclose(ft.jit(ft.jacrev(ft.jacrev(f)))(x), h, rtol=1e-12, atol=1e-15)


def _cf_scan(x):
    def body(c, xi):
        c = fnp.sin(c) * 0.5 + xi * c + xi
        return c, c * c

    c, ys = ft.lax.scan(body, fnp.zeros_like(x[0]), x)
    return c + fnp.sum(ys, axis=0)


def _cf_fori(x):
    return ft.lax.fori_loop(0, 3, lambda i, c: fnp.sin(c) * x[0] + c * x[1], x[0] + x[1])


def _cf_cond(x):
    return ft.lax.cond(fnp.sum(x) > 1.0, lambda a: fnp.sin(a) * a, lambda a: a * a * a, x)


def _cf_while(x):
    def body(s):
        i, c = s
        return i + 1, fnp.sin(c) * x + c * c * 0.5

    return ft.lax.while_loop(lambda s: s[0] < 3, body, (0, x))[1]


@pytest.mark.parametrize(
    "row", [_cf_scan, _cf_fori, _cf_cond, _cf_while], ids=["scan", "fori", "cond", "while"]
)
def test_item1_custom_jvp_with_control_flow_in_rule_under_grad_of_vmap(row) -> None:
    # The rule is the JVP of a function with control flow; reverse mode through the
    # batched call must split that JVP into primal and linear parts, as without vmap.
    f = ft.custom_jvp(lambda a: ft.lax.stop_gradient(row(a)))
    f.defjvp(lambda p, t: ft.jvp(row, p, t))
    xs = np.array([[0.3, 0.2], [0.5, 0.7], [0.9, 0.4]])

    def loss(x):
        return fnp.sum(ft.vmap(f)(x) ** 2)

    ref = _loop(ft.grad(lambda x: fnp.sum(f(x) ** 2)), xs)
    ref_direct = _loop(ft.grad(lambda x: fnp.sum(row(x) ** 2)), xs)
    np.testing.assert_allclose(ref, ref_direct, rtol=1e-12)
    np.testing.assert_allclose(ft.grad(loss)(xs), ref, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(loss))(xs), ref, rtol=1e-12)
    out, pull = ft.vjp(ft.vmap(f), xs)
    np.testing.assert_allclose(out, _loop(row, xs), rtol=1e-12)
    ct = np.linspace(-2.0, 3.0, np.size(out)).reshape(np.shape(out))
    ref_pull = np.stack([ft.vjp(f, x)[1](c)[0] for x, c in zip(xs, ct)])
    np.testing.assert_allclose(pull(ct)[0], ref_pull, rtol=1e-12)
    # vmap(grad(vmap)): an outer batch of the whole per-example gradient
    xss = np.stack([xs, 0.5 * xs])
    ref_outer = np.stack([_loop(ft.grad(lambda x: fnp.sum(f(x) ** 2)), b) for b in xss])
    np.testing.assert_allclose(ft.vmap(ft.grad(loss))(xss), ref_outer, rtol=1e-12)
    # jvp(vmap) keeps working
    t = np.ones_like(xs)
    _, tan = ft.jvp(ft.vmap(f), (xs,), (t,))
    np.testing.assert_allclose(tan, _loop(lambda x: ft.jvp(row, (x,), (np.ones(2),))[1], xs))
