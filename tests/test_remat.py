"""checkpoint / remat: gradients equal the plain ones, each policy saves what it should,
checkpoint_name, scan bodies, nesting, custom rules, and the errors.

Gradients are compared bit for bit: the recomputation runs the same primitives on the
same values in the same order as the plain forward pass, so nothing is reordered. The
one exception is reverse over reverse (``grad(grad(checkpoint(f)))``): its outer
backward pass accumulates the cotangents of recomputed values in another order, so
there the comparison allows a few ulps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
import remat_cases
from functrace import ad_checkpoint, lax
from functrace.ad_checkpoint import checkpoint_name, saved_residuals

P = ft.checkpoint_policies
RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
W = RNG.normal(size=(3, 3)) / 2


def mlp(x, w):
    h = checkpoint_name(fnp.tanh(x @ w), "h")
    return fnp.sum(fnp.sin(h @ w))


POLICIES = [
    None,
    P.nothing_saveable,
    P.everything_saveable,
    P.dots_saveable,
    P.dots_with_no_batch_dims_saveable,
    P.save_only_these_names("h"),
    P.save_any_names_but_these("h"),
    P.save_anything_except_these_names("h"),
    P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("h")),
]


def _same(a, b):
    la, lb = ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _close(a, b):
    for x, y in zip(ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: getattr(p, "__name__", "None"))
def test_gradients_equal_plain(policy):
    cf = ft.checkpoint(mlp, policy=policy)
    g = ft.grad(mlp, argnums=(0, 1))
    gc = ft.grad(cf, argnums=(0, 1))
    _same(gc(X, W), g(X, W))
    _same(ft.jit(gc)(X, W), ft.jit(g)(X, W))


@pytest.mark.parametrize(
    "policy", [None, P.dots_saveable, P.everything_saveable], ids=["None", "dots", "everything"]
)
def test_gradients_equal_plain_in_every_mode(policy):
    cf = ft.checkpoint(mlp, policy=policy)
    g = ft.grad(mlp, argnums=(0, 1))
    gc = ft.grad(cf, argnums=(0, 1))
    xs = np.stack([X, X * 0.5])
    _same(ft.vmap(gc, (0, None))(xs, W), ft.vmap(g, (0, None))(xs, W))
    _same(ft.jit(ft.vmap(gc, (0, None)))(xs, W), ft.jit(ft.vmap(g, (0, None)))(xs, W))
    # order 2: forward over reverse (bit for bit), and reverse over reverse, whose
    # second backward pass sums the fan-out of the recomputed values in another order
    _same(ft.jvp(gc, (X, W), (X, W))[1], ft.jvp(g, (X, W), (X, W))[1])
    gg = ft.grad(lambda x: fnp.sum(ft.grad(cf)(x, W) ** 2))
    ggp = ft.grad(lambda x: fnp.sum(ft.grad(mlp)(x, W) ** 2))
    _close(gg(X), ggp(X))
    _same(ft.value_and_grad(cf)(X, W), ft.value_and_grad(mlp)(X, W))


def test_value_and_grad_of_vmap_and_check_grads():
    cf = ft.checkpoint(mlp, policy=P.dots_saveable)
    _same(
        ft.grad(lambda x: fnp.sum(ft.vmap(cf, (0, None))(x, W)))(np.stack([X, -X])),
        ft.grad(lambda x: fnp.sum(ft.vmap(mlp, (0, None))(x, W)))(np.stack([X, -X])),
    )
    ft.check_grads(cf, (X, W), order=2, modes=("fwd", "rev"))


def _types(res):
    """(type, argument name or producing primitive) of each residual."""
    return [
        (a.str_short(), w.removeprefix("from the argument ").split(" from ")[0]) for a, w in res
    ]


def test_policies_save_what_they_should():
    x, w = X, W
    # nothing saveable: only the arguments the derivative reads
    assert sorted(_types(saved_residuals(ft.checkpoint(mlp), x, w))) == [
        ("f64[3,3]", "w"),
        ("f64[4,3]", "x"),
    ]
    got = _types(saved_residuals(ft.checkpoint(mlp, policy=P.dots_saveable), x, w))
    assert sorted(got) == [
        ("f64[3,3]", "w"),
        ("f64[4,3]", "output of dot_general"),
        ("f64[4,3]", "output of dot_general"),
        ("f64[4,3]", "x"),
    ]
    got = _types(saved_residuals(ft.checkpoint(mlp, policy=P.save_only_these_names("h")), x, w))
    assert sorted(got) == [("f64[3,3]", "w"), ("f64[4,3]", "named 'h'"), ("f64[4,3]", "x")]
    got = _types(saved_residuals(ft.checkpoint(mlp, policy=P.save_any_names_but_these("h")), x, w))
    assert sorted(got) == [("f64[3,3]", "w"), ("f64[4,3]", "x")]
    both = P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("h"))
    assert len(saved_residuals(ft.checkpoint(mlp, policy=both), x, w)) == 5
    # every value but the one named 'h': the same value is saved as the output of the
    # tanh that computes it (saveable), as in JAX, where this policy saves everything
    but_h = P.save_anything_except_these_names("h")
    got = _types(saved_residuals(ft.checkpoint(mlp, policy=but_h), x, w))
    assert ("f64[4,3]", "named 'h'") not in got and ("f64[4,3]", "output of tanh") in got
    assert len(got) == len(_types(saved_residuals(mlp, x, w)))
    # everything saveable: what reverse mode keeps without checkpoint, the derivative
    # rules' own values included (cos for sin, 1 - tanh^2 for tanh)
    every = _types(saved_residuals(ft.checkpoint(mlp, policy=P.everything_saveable), x, w))
    plain = _types(saved_residuals(mlp, x, w))
    assert sorted(every) == sorted(plain)
    assert ("f64[4,3]", "output of cos") in plain and len(plain) == 5


def test_batch_dims_policy():
    def f(a, b):
        return fnp.sum(fnp.sin(fnp.einsum("bij,bjk->bik", a, b)) + fnp.sin(a[0] @ b[0]))

    a = RNG.normal(size=(2, 3, 3))
    res = _types(saved_residuals(ft.checkpoint(f, policy=P.dots_with_no_batch_dims_saveable), a, a))
    assert res.count(("f64[3,3]", "output of dot_general")) == 1
    assert ("f64[2,3,3]", "output of dot_general") not in res
    res = _types(saved_residuals(ft.checkpoint(f, policy=P.dots_saveable), a, a))
    assert ("f64[2,3,3]", "output of dot_general") in res


def test_print_saved_residuals_names_argument_and_line(capsys):
    ad_checkpoint.print_saved_residuals(ft.checkpoint(mlp, policy=P.dots_saveable), X, w=W)
    out = capsys.readouterr().out.splitlines()
    assert "f64[4,3] from the argument x" in out
    assert "f64[3,3] from the argument w" in out
    dots = [ln for ln in out if "output of dot_general from test_remat.py:" in ln]
    assert len(dots) == 2 and all(ln.startswith("f64[4,3] ") for ln in dots)


def test_checkpoint_saves_less_for_a_deep_model():
    layer = ft.checkpoint(lambda h, w: fnp.tanh(h @ w))

    def deep(ws, x, step):
        for w in ws:
            x = step(x, w)
        return fnp.sum(x)

    ws = [W] * 6
    plain = saved_residuals(lambda ws, x: deep(ws, x, lambda h, w: fnp.tanh(h @ w)), ws, X)
    remat = saved_residuals(lambda ws, x: deep(ws, x, layer), ws, X)
    acts = lambda res: sum(1 for a, _ in res if a.shape == (4, 3))  # noqa: E731
    assert acts(plain) == 12 and acts(remat) == 6  # x and 1 - tanh^2 per layer vs x
    _same(ft.grad(deep)(ws, X, layer), ft.grad(deep)(ws, X, lambda h, w: fnp.tanh(h @ w)))


def test_scan_with_checkpointed_body():
    def body(c, x):
        return fnp.tanh(c * x + 1.0), fnp.sin(c)

    def loss(c0, xs, b):
        c, ys = lax.scan(b, c0, xs)
        return fnp.sum(c) + fnp.sum(ys)

    xs = np.linspace(0.1, 1.0, 5)[:, None] * np.ones((5, 3))
    c0 = np.full(3, 0.3)
    ref = ft.grad(loss, argnums=(0, 1))(c0, xs, body)
    cb = ft.checkpoint(body)
    _same(ft.grad(loss, argnums=(0, 1))(c0, xs, cb), ref)
    # under jit the checkpointed body is inlined into the compiled (native) loops
    _close(ft.jit(ft.grad(loss, argnums=(0, 1)), static_argnums=2)(c0, xs, cb), ref)
    # the checkpointed body keeps the carries and xs of each step, not its tanh/sin values
    kept = saved_residuals(lambda c0, xs: loss(c0, xs, cb), c0, xs)
    assert all(a.shape in ((5, 3), (3,), ()) for a, _ in kept)
    assert len(kept) < len(saved_residuals(lambda c0, xs: loss(c0, xs, body), c0, xs))


def test_nested_checkpoint():
    inner = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    outer = ft.checkpoint(lambda x: fnp.sum(inner(x) * fnp.cos(x)), policy=P.everything_saveable)
    ref = lambda x: fnp.sum(fnp.sin(fnp.sin(x)) * fnp.cos(x))  # noqa: E731
    x = X[0]
    _same(ft.grad(outer)(x), ft.grad(ref)(x))
    _same(ft.jit(ft.grad(outer))(x), ft.grad(ref)(x))
    _same(ft.hessian(outer)(x), ft.hessian(ref)(x))


def test_custom_vjp_and_grad_hook_inside():
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda c, g: (2.0 * g * c,))
    body = lambda x: fnp.sum(f(x) ** 2)  # noqa: E731
    _same(ft.grad(ft.checkpoint(body))(X), ft.grad(body)(X))
    _same(ft.jit(ft.grad(ft.checkpoint(body)))(X), ft.grad(body)(X))

    calls = []

    def hook(g):
        calls.append(np.shape(g))
        return g * 3.0

    hooked = lambda x: fnp.sum(ft.grad_hook(fnp.sin(x), hook) ** 2)  # noqa: E731
    want = ft.grad(hooked)(X)
    calls.clear()
    _same(ft.grad(ft.checkpoint(hooked))(X), want)
    assert calls == [(4, 3)]  # once, in the backward pass (not in the recomputation)


def test_static_argnums_kwargs_and_pytrees():
    def f(p, n, scale=1.0):
        out = p["a"]
        for _ in range(n):  # Python control flow on a static argument
            out = fnp.sin(out) * p["b"]
        return {"y": out * scale, "n": n}

    cf = ft.checkpoint(f, static_argnums=(1,))
    p = {"a": X, "b": 0.7}
    got = cf(p, 3, scale=2.0)
    assert isinstance(got["y"], ft.Array) and got["n"] == 3
    g = ft.grad(lambda p: fnp.sum(cf(p, 3, scale=2.0)["y"]))(p)
    _same(g, ft.grad(lambda p: fnp.sum(f(p, 3, scale=2.0)["y"]))(p))
    assert ft.remat is ft.checkpoint
    assert ft.ad_checkpoint.checkpoint is ft.checkpoint

    # static_argnames: by keyword or by position, a Python value driving control flow
    def h(p, n, *, mode="sin"):
        out = p["a"]
        for _ in range(n):
            out = fnp.sin(out) if mode == "sin" else fnp.cos(out)
        return fnp.sum(out)

    ch = ft.checkpoint(h, static_argnames=("n", "mode"))
    for args, kw in (((p, 2), {"mode": "cos"}), ((p,), {"n": 3}), ((p, 1), {})):
        _same(ft.grad(ch)(*args, **kw), ft.grad(h)(*args, **kw))
    with pytest.raises(TypeError, match="checkpoint: expected static_argnames as strings"):
        ft.checkpoint(h, static_argnames=(1,))


def test_checkpoint_name_is_the_identity_everywhere():
    f = lambda x: checkpoint_name(x * 2.0, "y") + 1.0  # noqa: E731
    _same(f(X), X * 2.0 + 1.0)
    _same(ft.jit(f)(X), X * 2.0 + 1.0)
    _same(ft.vmap(f)(X), X * 2.0 + 1.0)
    _same(ft.grad(lambda x: fnp.sum(f(x)))(X), np.full_like(X, 2.0))
    tree = checkpoint_name({"a": X, "b": (1.0,)}, "t")
    _same(tree["a"], X)
    assert "name[name='y']" in str(ft.make_jaxpr(f)(X))


def test_jaxpr_shows_the_checkpoint_and_its_backward():
    text = str(ft.make_jaxpr(ft.grad(ft.checkpoint(lambda x: fnp.sum(fnp.sin(x)))))(X))
    assert "checkpoint[" in text and "differentiated=True" in text


def test_errors_name_the_function():
    with pytest.raises(TypeError, match="checkpoint: expected a callable, got int"):
        ft.checkpoint(3)
    with pytest.raises(TypeError, match="checkpoint: expected policy to be None or one of"):
        ft.checkpoint(mlp, policy="dots")
    with pytest.raises(TypeError, match="checkpoint: expected static_argnums"):
        ft.checkpoint(mlp, static_argnums="x")
    with pytest.raises(TypeError, match="checkpoint: expected prevent_cse to be a bool"):
        ft.checkpoint(mlp, prevent_cse=None)
    with pytest.raises(ValueError, match="static_argnums 5 is out of range for 2"):
        ft.checkpoint(mlp, static_argnums=5)(X, W)
    with pytest.raises(TypeError, match="checkpoint of 'f'.*expected array arguments.*str"):

        def f(x, s):
            return x

        ft.checkpoint(f)(X, "s")
    with pytest.raises(TypeError, match="checkpoint_name: expected a string name, got int"):
        checkpoint_name(X, 3)
    with pytest.raises(TypeError, match="save_only_these_names: expected names.*int"):
        P.save_only_these_names("a", 2)
    with pytest.raises(TypeError, match="save_from_both_policies: expected policy_2"):
        P.save_from_both_policies(P.dots_saveable, None)
    bad = ft.checkpoint(mlp, policy=lambda prim: True)  # the wrong signature
    with pytest.raises(TypeError, match="checkpoint: expected the policy <lambda> to take"):
        ft.grad(bad)(X, W)
    with pytest.raises(TypeError, match="saved_residuals: expected a callable"):
        saved_residuals(None, X)


FIXTURE = np.load(Path(__file__).parent / "fixtures" / "remat_jax.npz")


@pytest.mark.parametrize("key", sorted(remat_cases.cases(ft)))
def test_residuals_and_gradients_match_jax(key):
    f, args = remat_cases.cases(ft)[key]
    rows = sorted(remat_cases.row(a.shape, a.dtype, w) for a, w in saved_residuals(f, *args))
    assert rows == list(FIXTURE[f"{key}/residuals"])
    grads = ft.grad(f, argnums=tuple(range(len(args))))(*args)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, FIXTURE[f"{key}/grad{i}"], rtol=1e-12, atol=1e-12)


def test_constant_operands_add_no_residual_nor_zeros() -> None:
    # JAX 0.10.2 keeps only the argument for these (a sum with a constant has the other
    # operand's tangent); functrace added a materialised zero array, saved as a residual
    x = np.linspace(0.0, 1.0, 1000)
    for f, sign in ((lambda v: fnp.sin(v) + 3.0, 1.0), (lambda v: 3.0 - fnp.sin(v), -1.0)):
        assert _types(saved_residuals(ft.checkpoint(f), x)) == [("f64[1000]", "v")]
        jaxpr = ft.make_jaxpr(ft.linearize(f, x)[1])(x)
        assert not [e for e in jaxpr.jaxpr.eqns if e.primitive.name in ("add", "sub")]
        g = ft.grad(lambda v, f=f: fnp.sum(f(v)))(x)
        np.testing.assert_allclose(g, sign * np.cos(x), rtol=1e-14)
    # under checkpoint's transpose, an input the backward pass does not read is not kept
    jaxpr = ft.make_jaxpr(ft.grad(ft.checkpoint(lambda v: fnp.sum(fnp.sin(v) + 3.0))))(x)
    assert not jaxpr.jaxpr.constvars
