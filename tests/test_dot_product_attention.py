"""``functrace.nn.dot_product_attention`` against JAX's ``jax.nn.dot_product_attention``
(values recorded in ``tests/fixtures/attention_jax.npz`` from ``attention_cases.py``),
finite differences and the transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from attention_cases import CASES, cases, inputs
from functrace import nn
from functrace.test_util import check_grads
from recorded import assert_matches_recorded


def test_values_residuals_and_gradients_match_jax():
    # float32 computes as JAX does; float64 keeps its softmax in float64, where JAX
    # rounds it to float32 (differences of ~1e-7 relative).
    tol = lambda k, v: 2e-5 if "/float32/" in k else 2e-6  # noqa: E731
    assert_matches_recorded(cases(ft), "attention_jax.npz", tol)


def test_a_query_that_attends_to_no_key_takes_the_mean_of_the_values():
    x = inputs("bias_and_mask", np.float64)
    out = nn.dot_product_attention(x["query"], x["key"], x["value"], mask=x["mask"])
    np.testing.assert_allclose(np.asarray(out)[0, 1], x["value"][0].mean(axis=0), rtol=1e-12)


def test_the_plain_case_is_softmax_attention_per_head():
    x = inputs("mha", np.float64)
    q, k, v = x["query"], x["key"], x["value"]
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    want = np.einsum("bnts,bsnh->btnh", w, v)
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v)), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["gqa_causal", "bias_and_mask", "seq_lengths"])
def test_second_order_gradients_match_finite_differences(name):
    x = inputs(name, np.float64)
    kw = CASES[name][6]
    bias = x.get("bias")

    def f(q, k, v):
        return nn.dot_product_attention(q, k, v, bias, x.get("mask"), **kw) * x["r"]

    check_grads(f, (x["query"], x["key"], x["value"]), order=2, modes=("rev", "fwd"))


def test_jit_and_vmap_match_eager():
    x = inputs("gqa_causal", np.float64)

    def f(q, k, v):
        return nn.dot_product_attention(q, k, v, is_causal=True)

    eager = np.asarray(f(x["query"], x["key"], x["value"]))
    np.testing.assert_allclose(np.asarray(ft.jit(f)(x["query"], x["key"], x["value"])), eager,
                               rtol=1e-12)  # fmt: skip
    # vmap over the batch axis of unbatched calls (T, N, H) is the batched call
    per = ft.vmap(f)(x["query"], x["key"], x["value"])
    np.testing.assert_allclose(np.asarray(per), eager, rtol=1e-12)
    g = ft.jit(ft.grad(lambda q: fnp.sum(f(q, x["key"], x["value"]) ** 2)))(x["query"])
    g_eager = ft.grad(lambda q: fnp.sum(f(q, x["key"], x["value"]) ** 2))(x["query"])
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_eager), rtol=1e-10)


def test_bad_arguments_name_the_function():
    x = inputs("mha", np.float32)
    q, k, v = x["query"], x["key"], x["value"]
    with pytest.raises(ValueError, match="dot_product_attention: expected implementation"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="dot_product_attention: expected key and value"):
        nn.dot_product_attention(q, k, v[:, :3])
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        nn.dot_product_attention(np.ones((2, 3, 3, 3), np.float32), k, v)
    with pytest.raises(TypeError, match="one floating dtype"):
        nn.dot_product_attention(q.astype(np.float64), k, v)
    with pytest.raises(TypeError, match="expected a boolean mask"):
        nn.dot_product_attention(q, k, v, mask=np.ones((2, 2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="expected mask of a shape that broadcasts"):
        nn.dot_product_attention(q, k, v, mask=np.ones((2, 2, 5, 4), bool))
    with pytest.raises(ValueError, match="expected query_seq_lengths of integers"):
        nn.dot_product_attention(q, k, v, query_seq_lengths=np.array([1.0, 2.0]))
