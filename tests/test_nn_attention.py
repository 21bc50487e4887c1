"""nn attention: scaled_dot_product_attention and MultiheadAttention against PyTorch's values
(tests/fixtures/nn_seq_torch.npz), gradients, vmap, jit, dropout, parameter names, errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.random as random
import nn_seq_cases as C
from functrace import nn

FIX = dict(np.load(Path(__file__).parent / "fixtures" / "nn_seq_torch.npz"))
NAMES = [n for n, c in C.CASES.items() if c["kind"] in ("sdpa", "MultiheadAttention")]
ENC_NAMES = [n for n, c in C.CASES.items() if c["kind"].startswith("TransformerEncoder")]
sdpa = nn.scaled_dot_product_attention


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES + ENC_NAMES)
def test_matches_torch(name: str, dtype: type) -> None:
    C.compare(ft, FIX, name, dtype)


def test_fully_masked_row_is_zero_with_finite_grads() -> None:
    arrays, _ = C.case_io(FIX, "sdpa_bool_full_row", np.float64)
    q, k, v, mask = (arrays[n] for n in ("q", "k", "v", "attn_mask"))
    out = sdpa(q, k, v, mask)
    assert np.all(out[:, 1] == 0) and np.all(np.isfinite(out))
    g = ft.grad(lambda q, k, v: (sdpa(q, k, v, mask) ** 2).sum(), argnums=(0, 1, 2))(q, k, v)
    assert all(np.all(np.isfinite(a)) for a in g)
    assert np.all(g[0][:, 1] == 0)


def test_parameter_names_and_init_match_torch() -> None:
    for name in NAMES + ENC_NAMES:
        case = C.CASES[name]
        if case["kind"] == "sdpa":
            continue
        m = C.build(ft, name, np.float32, {})
        _, sd = C.case_io(FIX, name, np.float64)
        got = {re.sub(r"\[(\d+)\]", r".\1", p).lstrip("."): a for p, a in nn.named_parameters(m)}
        assert got.keys() == sd.keys(), name
        for k, v in sd.items():
            assert got[k].shape == v.shape and got[k].dtype == np.float32, (name, k)
    m = nn.MultiheadAttention(6, 2, rng=0)
    assert np.all(m.in_proj_bias == 0) and np.all(m.out_proj.bias == 0)
    bound = np.sqrt(6 / (18 + 6))
    assert np.all(np.abs(m.in_proj_weight) <= bound) and np.abs(m.in_proj_weight).max() > bound / 2


def test_sdpa_grads_order2() -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 2, 3, 2))
    mask = np.array([[True, True, False], [False, True, True], [True, False, True]])
    ft.check_grads(lambda q, k, v: (sdpa(q, k, v, mask) ** 2).sum(), (q, k, v), order=2)
    fm = rng.standard_normal((3, 3))
    ft.check_grads(lambda q, m: sdpa(q, k, v, m, is_causal=False).sum(), (q, fm), order=2)


def test_mha_grads_order2() -> None:
    m = ft.tree_util.tree_map(
        lambda a: np.asarray(a, np.float64), nn.MultiheadAttention(4, 2, rng=0)
    )
    m = m.replace(in_proj_bias=np.linspace(-0.5, 0.5, 12))
    x = np.random.default_rng(1).standard_normal((2, 1, 4))
    kpm = np.array([[False, True]])

    def f(m: nn.MultiheadAttention, x: np.ndarray) -> object:
        out, w = m(x, x, x, key_padding_mask=kpm)
        return (out**2).sum() + (w * w).sum()

    ft.check_grads(f, (m, x), order=2)


def test_vmap_equals_loop() -> None:
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((3, 5, 2, 3, 4))
    mask = rng.random((5, 3, 3)) < 0.7
    mask[..., 0] = True
    got = ft.vmap(lambda q, k, v, m: sdpa(q, k, v, m))(q, k, v, mask)
    np.testing.assert_allclose(got, np.stack([sdpa(q[i], k[i], v[i], mask[i]) for i in range(5)]))
    m = nn.MultiheadAttention(4, 2, rng=0, dtype=np.float64)
    x = q[:, 0]  # (5, 3, 4): five unbatched sequences
    out, w = ft.vmap(lambda s: m(s, s, s))(x)
    loop = [m(x[i], x[i], x[i]) for i in range(5)]
    np.testing.assert_allclose(out, np.stack([o for o, _ in loop]), rtol=1e-12)
    np.testing.assert_allclose(w, np.stack([a for _, a in loop]), rtol=1e-12)
    # the batched layout gives the same as unbatched calls
    out_b, w_b = m(np.swapaxes(x, 0, 1), np.swapaxes(x, 0, 1), np.swapaxes(x, 0, 1))
    np.testing.assert_allclose(np.swapaxes(out_b, 0, 1), out, rtol=1e-12)
    np.testing.assert_allclose(w_b, w, rtol=1e-12)


def test_jit_equals_eager() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    kpm = np.array([[False, False, True], [False, True, True]])
    m = nn.MultiheadAttention(4, 2, rng=0)
    got = ft.jit(lambda m, x: m(x, x, x, key_padding_mask=kpm))(m, x)
    want = m(x, x, x, key_padding_mask=kpm)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    got = ft.jit(lambda x: sdpa(x, x, x, is_causal=True))(x)
    np.testing.assert_allclose(got, sdpa(x, x, x, is_causal=True), rtol=1e-5, atol=1e-6)


def test_dropout_needs_a_key() -> None:
    x = np.random.default_rng(4).standard_normal((2, 3, 4))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected a dropout_key"):
        sdpa(x, x, x, dropout_p=0.5)
    key = random.PRNGKey(0)
    a = sdpa(x, x, x, dropout_p=0.5, dropout_key=key)
    np.testing.assert_array_equal(a, sdpa(x, x, x, dropout_p=0.5, dropout_key=key))
    assert not np.allclose(a, sdpa(x, x, x))
    assert np.all(sdpa(x, x, x, dropout_p=1.0, dropout_key=key) == 0)
    m = nn.MultiheadAttention(4, 2, dropout=0.5, rng=0, dtype=np.float64)
    xs = np.swapaxes(x, 0, 1)
    plain = m(xs, xs, xs)
    dropped = m(xs, xs, xs, dropout_key=key)
    assert not np.allclose(plain[0], dropped[0])
    w = dropped[1] * 2  # kept weights are scaled by 1 / (1 - p); the average halves that back
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(
        nn.MultiheadAttention(4, 2, rng=0, dtype=np.float64)(xs, xs, xs)[0], plain[0]
    )


def test_mha_weights_layouts() -> None:
    m = nn.MultiheadAttention(6, 3, batch_first=True, rng=0)
    q, kv = np.ones((2, 4, 6), np.float32), np.ones((2, 5, 6), np.float32)
    out, w = m(q, kv, kv)
    assert out.shape == (2, 4, 6) and w.shape == (2, 4, 5)
    out, w = m(q, kv, kv, average_attn_weights=False)
    assert w.shape == (2, 3, 4, 5)
    out, w = m(q, kv, kv, need_weights=False)
    assert out.shape == (2, 4, 6) and w is None
    out, w = m(q[0], kv[0], kv[0])
    assert out.shape == (4, 6) and w.shape == (4, 5)


def test_errors_name_the_function_or_layer() -> None:
    x = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected embed_dim divisible"):
        nn.MultiheadAttention(6, 4, rng=0)
    with pytest.raises(NotImplementedError, match=r"MultiheadAttention: add_bias_kv=True"):
        nn.MultiheadAttention(4, 2, add_bias_kv=True, rng=0)
    m = nn.MultiheadAttention(4, 2, rng=0)
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected query, key and value all"):
        m(x, x[0], x)
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected query with last dim"):
        m(np.ones((2, 3, 5)), x, x)
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected key and value with the"):
        m(x, x, np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected query, key and value with"):
        m(x, np.ones((2, 2, 4)), np.ones((2, 2, 4)))
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected attn_mask of shape"):
        m(x, x, x, attn_mask=np.ones((3, 2), bool))
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected key_padding_mask of shape"):
        m(x, x, x, key_padding_mask=np.ones((2, 3), bool))
    with pytest.raises(
        ValueError, match=r"MultiheadAttention: expected an attn_mask with the is_c"
    ):
        m(x, x, x, is_causal=True)
    with pytest.raises(TypeError, match=r"MultiheadAttention: expected a boolean or floating"):
        m(x, x, x, attn_mask=np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected query and key"):
        sdpa(x, np.ones((2, 3, 5)), x)
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected key and value"):
        sdpa(x, x, np.ones((2, 2, 4)))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected query, key an"):
        sdpa(x[0, 0], x, x)
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected attn_mask of a"):
        sdpa(x, x, x, np.ones((2, 2), bool))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected attn_mask=None"):
        sdpa(x, x, x, np.ones((3, 3), bool), is_causal=True)
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected batch dim"):
        sdpa(x, np.ones((3, 3, 4)), np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: expected a dropout prob"):
        sdpa(x, x, x, dropout_p=2.0)
    with pytest.raises(TypeError, match=r"scaled_dot_product_attention: expected a floating-poin"):
        sdpa(x, x.astype(np.int32), x)


def _encoder(**kw: object) -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, rng=0, dtype=np.float64, **kw)


def test_encoder_layer_grads_vmap_and_jit() -> None:
    x = np.random.default_rng(5).standard_normal((3, 2, 4))
    mask = np.triu(np.ones((3, 3), bool), 1)
    layer = _encoder(activation="gelu", norm_first=True)
    ft.check_grads(lambda m, x: (m(x, mask) ** 2).sum(), (layer, x[:, 0]), order=1)
    got = ft.vmap(lambda s: layer(s, mask), in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(got, layer(x, mask), rtol=1e-12)
    got = ft.jit(lambda m, x: m(x, mask, is_causal=True))(layer, x)
    np.testing.assert_allclose(got, layer(x, mask), rtol=1e-10)
    enc = nn.TransformerEncoder(_encoder(activation=nn.silu), 2, norm=nn.LayerNorm(4))
    assert enc.layers[1].activation is nn.silu
    np.testing.assert_allclose(enc(x), enc.norm(enc.layers[1](enc.layers[0](x))), rtol=1e-12)


def test_encoder_layer_dropout_needs_a_key() -> None:
    x = np.random.default_rng(6).standard_normal((3, 2, 4))
    layer = _encoder(dropout=0.5)
    no_drop = _encoder(dropout=0.0)
    np.testing.assert_allclose(layer(x), no_drop(x), rtol=1e-12)  # no key: inference
    key = random.PRNGKey(3)
    a = layer(x, key=key)
    assert not np.allclose(a, layer(x))
    np.testing.assert_array_equal(a, layer(x, key=key))
    np.testing.assert_allclose(no_drop(x, key=key), no_drop(x), rtol=1e-12)
    enc = nn.TransformerEncoder(layer, 2)
    np.testing.assert_array_equal(enc(x, key=key), enc(x, key=key))
    assert not np.allclose(enc(x, key=key), enc(x))


def test_encoder_layer_errors_name_the_layer() -> None:
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: expected positive d_model div"):
        nn.TransformerEncoderLayer(6, 4, rng=0)
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: expected activation 'relu'"):
        nn.TransformerEncoderLayer(4, 2, activation="swish", rng=0)
    layer = _encoder()
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: expected src of shape \(L, N"):
        layer(np.ones((3, 2, 5)))
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer: expected a src_mask with the"):
        layer(np.ones((3, 2, 4)), is_causal=True)
    with pytest.raises(ValueError, match=r"MultiheadAttention: expected attn_mask of shape"):
        layer(np.ones((3, 2, 4)), np.ones((2, 2), bool))
    with pytest.raises(TypeError, match=r"TransformerEncoder: expected a TransformerEncoderLayer"):
        nn.TransformerEncoder(nn.Linear(2, 2, rng=0), 2)
