"""stax's convolution and pooling layers against JAX's ``example_libraries.stax``
(values recorded into ``tests/fixtures/stax_conv_jax.npz`` from the cases of
``tests/stax_conv_cases.py``, with ``jax_enable_x64`` and ``PRNGKey(0)``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import functrace
import stax_conv_cases as C
from functrace import random, tree_util
from functrace.example_libraries import optimizers, stax

FIXTURE = Path(__file__).parent / "fixtures" / "stax_conv_jax.npz"
POOLS = C.pool_layers(stax)
CONVS = C.conv_layers(stax)


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return dict(f)


def _check_layer(name: str, layer: Any, shape: tuple[int, ...], ref: dict[str, np.ndarray]) -> None:
    init_fun, apply_fun = layer
    out_shape, params = init_fun(random.PRNGKey(0), shape)
    np.testing.assert_array_equal(np.asarray(out_shape), ref[f"{name}/out_shape"])
    batch_shape, _ = init_fun(random.PRNGKey(0), (-1,) + shape[1:])
    np.testing.assert_array_equal(np.asarray(batch_shape), ref[f"{name}/out_shape_batch"])
    leaves = tree_util.tree_leaves(params)
    assert len(leaves) == int(ref[f"{name}/nparams"])
    for k, leaf in enumerate(leaves):  # the init draws JAX's numbers from PRNGKey(0)
        np.testing.assert_allclose(leaf, ref[f"{name}/param{k}"], rtol=1e-12, atol=1e-15)
    x = C.layer_input(shape)
    y = apply_fun(params, x)
    assert np.shape(y) == tuple(out_shape)
    np.testing.assert_allclose(y, ref[f"{name}/y"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(functrace.jit(apply_fun)(params, x), y, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_layer_matches_jax(name: str, ref: dict[str, np.ndarray]) -> None:
    layer, shape = POOLS[name]
    _check_layer(name, layer, shape, ref)


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv_layer_matches_jax(name: str, ref: dict[str, np.ndarray]) -> None:
    layer, shape = CONVS[name]
    _check_layer(name, layer, shape, ref)


def test_stax_cnn_example_trains_as_in_jax(ref: dict[str, np.ndarray]) -> None:
    # The stax CNN (Conv, Relu, MaxPool, Conv, Relu, AvgPool, Flatten, Dense,
    # LogSoftmax): init from PRNGKey(0) and four jitted SGD steps, as JAX ran them.
    got = C.cnn_training(functrace, stax, optimizers)
    n = len([k for k in ref if k.startswith("cnn_training/")])
    assert len(got) == n
    for k, v in enumerate(got):
        np.testing.assert_allclose(v, ref[f"cnn_training/{k}"], rtol=1e-10, atol=1e-12)
    assert got[0][-1] < got[0][0]


def test_conv_layer_grads() -> None:
    init_fun, apply_fun = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (2, 2), (1, 2), "SAME")
    _, params = init_fun(random.PRNGKey(1), (1, 2, 3, 4))
    x = C.layer_input((1, 2, 3, 4))
    functrace.check_grads(lambda p, x: apply_fun(p, x), (params, x), order=2, modes=("fwd", "rev"))
    init_t, apply_t = stax.ConvTranspose(2, (2, 2), (2, 1), "SAME")
    _, pt = init_t(random.PRNGKey(2), (1, 2, 3, 2))
    xt = C.layer_input((1, 2, 3, 2))
    functrace.check_grads(lambda p, x: apply_t(p, x), (pt, xt), order=1, modes=("rev",))
    with pytest.raises(ValueError, match=r"stax.GeneralConv init_fun: expected an input of rank 4"):
        stax.Conv(2, (3, 3))[0](random.PRNGKey(0), (2, 5, 5, 1, 1))


def test_pool_layer_grads_and_errors() -> None:
    _, apply_fun = stax.AvgPool((2, 2), (1, 1), "SAME")
    x = C.layer_input((1, 3, 3, 2))
    functrace.check_grads(lambda x: apply_fun((), x), (x,), order=2, modes=("fwd", "rev"))
    _, apply_max = stax.MaxPool((2, 2))
    functrace.check_grads(
        lambda x: apply_max((), x), (x + 0.01 * np.arange(18).reshape(x.shape),), order=1
    )
    with pytest.raises(
        ValueError,
        match=r"stax.MaxPool init_fun: input_shape must have at least 4 dimension\(s\), got "
        r"\(3, 4, 2\)",
    ):
        stax.MaxPool((2, 2))[0](None, (3, 4, 2))
    with pytest.raises(
        ValueError, match=r"stax.SumPool: expected strides with one entry per window dim \(2\)"
    ):
        stax.SumPool((2, 2), (1,))
