"""nn layers: normalisation, dropout, embedding, shape layers; ``nn.initializers``.

Forward values and gradients are checked against PyTorch 2.13 (recorded into
``tests/fixtures/nn_layers_torch.npz``), initializers against JAX
(``tests/fixtures/nn_init_jax.npz``); the rest checks derivatives, ``jit``, ``vmap``,
initialisation statistics and error messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
from functrace import nn, random

RNG = np.random.default_rng(0)


def _x(*shape: int, dtype: type = np.float64) -> np.ndarray:
    return RNG.normal(size=shape).astype(dtype)


# ---------------------------------------------------------------------------
# LayerNorm
# ---------------------------------------------------------------------------


def _layer_norm_ref(x: np.ndarray, k: int, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    axes = tuple(range(-k, 0))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_value_dtype_and_params(dtype: type) -> None:
    ln = nn.LayerNorm((3, 4), dtype=dtype)
    assert ln.weight.shape == (3, 4) and ln.bias.shape == (3, 4) and ln.weight.dtype == dtype
    ln = ln.replace(weight=_x(3, 4, dtype=dtype), bias=_x(3, 4, dtype=dtype))
    x = _x(2, 3, 4, dtype=dtype)
    y = ln(x)
    assert y.dtype == dtype and y.shape == x.shape
    ref = _layer_norm_ref(x.astype(np.float64), 2, ln.weight, ln.bias, 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None
    assert nn.LayerNorm(4, bias=False).bias is None


def test_layer_norm_grads_jit_vmap() -> None:
    ln = nn.LayerNorm(4, dtype=np.float64).replace(weight=_x(4), bias=_x(4))
    x = _x(3, 4)
    ft.check_grads(lambda m, x: m(x), (ln, x), order=2)
    np.testing.assert_allclose(ft.jit(lambda m, x: m(x))(ln, x), ln(x), rtol=1e-13)
    loop = np.stack([ln(row) for row in x])
    np.testing.assert_allclose(ft.vmap(ln)(x), loop, rtol=1e-13)
    f = lambda w, x: nn.layer_norm(x, (4,), w, None, 1e-3)  # noqa: E731
    ft.check_grads(f, (ln.weight, x), order=2)


def test_layer_norm_errors() -> None:
    msg = r"LayerNorm: expected the last dims of x to be \(4,\), got shape \(3, 5\)"
    with pytest.raises(ValueError, match=msg):
        nn.LayerNorm(4)(np.ones((3, 5), np.float32))
    with pytest.raises(TypeError, match=r"LayerNorm: expected a floating-point x, got dtype int64"):
        nn.LayerNorm(4)(np.ones((3, 4), np.int64))
    msg = r"layer_norm: expected weight of shape \(4,\), got shape \(3,\)"
    with pytest.raises(ValueError, match=msg):
        nn.layer_norm(np.ones((3, 4)), 4, np.ones(3))


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_mask_scale_and_identity(dtype: type) -> None:
    x = np.ones((50, 40), dtype)
    key = random.key(3)
    y = nn.Dropout(0.25)(x, key=key)
    assert y.dtype == dtype
    kept = np.asarray(y) != 0
    np.testing.assert_array_equal(kept, np.asarray(random.bernoulli(key, 0.75, x.shape)))
    np.testing.assert_allclose(np.asarray(y)[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_array_equal(nn.Dropout(0.25)(x), x)
    np.testing.assert_array_equal(nn.Dropout(0.25, inference=True)(x, key=key), x)
    np.testing.assert_array_equal(nn.Dropout(0.25)(x, key=key, inference=True), x)
    np.testing.assert_array_equal(nn.dropout(x, 0.25, key=key, training=False), x)
    np.testing.assert_array_equal(nn.dropout(x, 1.0, key=key), np.zeros_like(x))
    np.testing.assert_array_equal(nn.dropout(x, 0.0, key=key), x)


def test_dropout_jit_vmap_grad() -> None:
    x = _x(4, 6)
    key = random.key(7)
    drop = nn.Dropout(0.5)
    np.testing.assert_array_equal(ft.jit(lambda x, k: drop(x, key=k))(x, key), drop(x, key=key))
    keys = random.split(key, 4)
    loop = np.stack([drop(x[i], key=keys[i]) for i in range(4)])
    np.testing.assert_array_equal(ft.vmap(lambda x, k: drop(x, key=k))(x, keys), loop)
    np.testing.assert_array_equal(ft.jit(ft.vmap(lambda x, k: drop(x, key=k)))(x, keys), loop)
    ft.check_grads(lambda x: drop(x, key=key), (x,), order=2)
    g = ft.grad(lambda x: drop(x, key=key).sum())(x)
    np.testing.assert_array_equal(g, np.where(np.asarray(drop(x, key=key)) != 0, 2.0, 0.0))


def test_dropout_errors() -> None:
    msg = r"Dropout: expected p, the drop probability, in \[0, 1\], got 1.5"
    with pytest.raises(ValueError, match=msg):
        nn.Dropout(1.5)
    with pytest.raises(TypeError, match=r"dropout: expected a floating-point x, got dtype int64"):
        nn.dropout(np.ones(3, np.int64), 0.5, key=random.key(0))
