"""nn: modules as pytrees, layers, activations, losses, gradient statistics."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import nn
from functrace.tree_util import tree_leaves, tree_map, tree_structure


def test_linear_layout_init_and_call() -> None:
    layer = nn.Linear(4, 3, rng=0)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert layer.weight.dtype == np.float32
    assert np.all(np.abs(layer.weight) <= 0.5) and np.all(np.abs(layer.bias) <= 0.5)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(layer(x), x @ layer.weight.T + layer.bias, rtol=1e-6)
    assert nn.Linear(4, 3, rng=0, bias=False).bias is None
    assert repr(layer) == "Linear(weight=f32[3,4], bias=f32[3], in_features=4, out_features=3)"


def test_module_is_pytree_with_static_fields() -> None:
    m = nn.MLP([3, 4, 2], rng=0)
    leaves = tree_leaves(m)
    assert len(leaves) == 4 and nn.count_params(m) == 3 * 4 + 4 + 4 * 2 + 2
    doubled = tree_map(lambda x: x * 2, m)
    assert type(doubled) is nn.MLP and doubled.activation is nn.relu
    np.testing.assert_allclose(doubled.layers[1].bias, 2 * m.layers[1].bias)
    assert tree_structure(m) == tree_structure(doubled)
    assert tree_structure(nn.MLP([3, 4, 2], rng=0)) != tree_structure(nn.MLP([3, 5, 2], rng=0))
    paths = [p for p, _ in nn.named_parameters(m)]
    assert paths == [".layers[0].weight", ".layers[0].bias", ".layers[1].weight", ".layers[1].bias"]


def test_module_immutable_and_replace() -> None:
    layer = nn.Linear(2, 2, rng=0)
    with pytest.raises(AttributeError, match=r"replace\(weight=value\)"):
        layer.weight = np.zeros((2, 2))
    new = layer.replace(bias=np.zeros(2, np.float32))
    assert new.bias.sum() == 0 and new.weight is layer.weight


def test_custom_module_with_static_field() -> None:
    class Scale(nn.Module):
        w: np.ndarray
        name: str = nn.field(static=True)

        def __call__(self, x):
            return self.w * x

    s = Scale(np.array([2.0]), "s")
    assert tree_leaves(s) == [s.w] and ft.grad(lambda m: m(3.0).sum())(s).w[0] == 3.0


def test_sequential_wraps_functions() -> None:
    model = nn.Sequential([nn.Linear(2, 3, rng=0), nn.relu, nn.Linear(3, 1, rng=1)])
    assert len(tree_leaves(model)) == 4
    out = model(np.ones((5, 2), np.float32))
    assert out.shape == (5, 1)
    g = ft.grad(lambda m: m(np.ones((5, 2), np.float32)).sum())(model)
    assert type(g) is nn.Sequential


def test_activations() -> None:
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(nn.relu(x), [0, 0, 3])
    np.testing.assert_allclose(nn.sigmoid(x), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(nn.softmax(x), np.exp(x) / np.exp(x).sum())
    np.testing.assert_allclose(nn.log_softmax(x), np.log(np.exp(x) / np.exp(x).sum()))
    import math

    np.testing.assert_allclose(
        nn.gelu(x, approximate=False),
        [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x],
        rtol=1e-12,
    )
    np.testing.assert_allclose(nn.log_softmax(np.array([1000.0, 0.0])), [0.0, -1000.0])
    ft.check_grads(lambda x: nn.log_softmax(x).sum() + nn.gelu(x).sum(), (x + 0.1,), order=2)


def test_softmax_log_softmax_logsumexp_where_as_jax() -> None:
    # JAX's where=: unselected entries are left out (softmax 0, log_softmax -inf)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5))
    keep = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]], bool)
    e = np.where(keep, np.exp(x), 0.0)
    want = e / e.sum(axis=1, keepdims=True)
    lse = np.log(e.sum(axis=1))
    for f in (lambda v: nn.softmax(v, where=keep), ft.jit(lambda v: nn.softmax(v, where=keep))):
        np.testing.assert_allclose(f(x), want, rtol=1e-13)
    log_sm = nn.log_softmax(x, where=keep)
    np.testing.assert_allclose(log_sm[keep], np.log(want[keep]), rtol=1e-13)
    assert np.all(np.asarray(log_sm)[~keep] == -np.inf)
    np.testing.assert_allclose(nn.logsumexp(x, axis=1, where=keep), lse, rtol=1e-13)
    np.testing.assert_allclose(
        ft.jit(lambda v: fnp.logsumexp(v, axis=1, where=keep))(x), lse, rtol=1e-13
    )
    np.testing.assert_allclose(
        ft.vmap(lambda v, k: nn.softmax(v, where=k))(x, keep), want, rtol=1e-13
    )
    # the mask broadcasts, and the gradients leave the unselected entries alone
    np.testing.assert_allclose(
        nn.softmax(x, axis=0, where=keep[1]), np.exp(x) / np.exp(x).sum(axis=0), rtol=1e-13
    )
    g = ft.grad(lambda v: fnp.sum(nn.logsumexp(v, axis=1, where=keep)))(x)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    ft.check_grads(
        lambda v: nn.softmax(v, where=keep) * v + fnp.where(keep, nn.log_softmax(v, where=keep), 0),
        (x,),
        order=2,
        modes=("fwd", "rev"),
    )
    with pytest.raises(TypeError, match="logsumexp: expected a boolean where="):
        nn.logsumexp(x, where=np.ones((3, 5)))


def test_losses_match_numpy() -> None:
    rng = np.random.default_rng(0)
    logits, labels = rng.standard_normal((6, 4)), rng.integers(0, 4, 6)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(nn.cross_entropy(logits, labels), -logp[np.arange(6), labels].mean())
    probs = np.eye(4)[labels]
    np.testing.assert_allclose(nn.cross_entropy(logits, probs), nn.cross_entropy(logits, labels))
    np.testing.assert_allclose(
        nn.cross_entropy(logits, labels, reduction="sum"), -logp[np.arange(6), labels].sum()
    )
    p, t = rng.standard_normal(5), rng.standard_normal(5)
    assert nn.mse_loss(p, t) == pytest.approx(np.mean((p - t) ** 2))
    z, y = rng.standard_normal(5), (rng.random(5) > 0.5).astype(float)
    s = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(
        nn.binary_cross_entropy_with_logits(z, y), -np.mean(y * np.log(s) + (1 - y) * np.log(1 - s))
    )
    ft.check_grads(lambda l: nn.cross_entropy(l, labels), (logits,), order=2)


def test_loss_errors() -> None:
    with pytest.raises(
        ValueError,
        match=r"mse_loss: expected predictions and targets of the "
        r"same shape, got \(3,\) and \(2,\)",
    ):
        nn.mse_loss(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"cross_entropy: expected labels in \[0, 3\)"):
        nn.cross_entropy(np.ones((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="reduction"):
        nn.mse_loss(np.ones(2), np.ones(2), reduction="avg")


def test_grad_stats() -> None:
    g = {"w": np.array([3.0, -4.0]), "b": np.array([1.0])}
    stats = nn.grad_stats(g)
    assert stats["['w']"] == {"mean": -0.5, "std": 3.5, "min": -4.0, "max": 3.0, "norm": 5.0}
    assert stats["['b']"]["norm"] == 1.0


def test_mlp_grad_matches_finite_differences() -> None:
    model = nn.MLP([3, 4, 2], rng=0, activation=nn.tanh, dtype=np.float64)
    x = np.random.default_rng(1).standard_normal((5, 3))
    y = np.array([0, 1, 1, 0, 1])
    ft.check_grads(lambda m: nn.cross_entropy(m(x), y), (model,), order=1)


def test_fnp_used_in_modules_is_traceable() -> None:
    model = nn.MLP([2, 3, 1], rng=0)
    closed = ft.make_jaxpr(lambda m, x: fnp.sum(m(x)))(model, np.ones((4, 2), np.float32))
    assert "dot_general" in str(closed)


def test_layers_take_prng_keys_as_rng():
    # a typed or raw key seeds the NumPy generator with its two words
    from functrace import random

    typed = nn.Linear(3, 2, rng=random.key(5))
    raw = nn.Linear(3, 2, rng=random.PRNGKey(5))
    seeded = nn.Linear(3, 2, rng=np.random.default_rng([0, 5]))
    np.testing.assert_array_equal(typed.weight, raw.weight)
    np.testing.assert_array_equal(typed.weight, seeded.weight)
    with pytest.raises(TypeError, match="single PRNG key, got a key array of shape"):
        nn.Linear(3, 2, rng=random.split(random.key(0), 2))
    with pytest.raises(TypeError, match="expected rng as an int seed"):
        nn.Linear(3, 2, rng=1.5)
