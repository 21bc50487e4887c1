"""functrace.nn's activation functions compute jax.nn's values and gradients, and
compose with jit/vmap/grad like every other function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import nn
from functrace.test_util import check_grads
from nn_cases import UNARY, X2, X, cases

FIXTURE = Path(__file__).parent / "fixtures" / "nn_jax.npz"


def test_values_and_gradients_match_jax() -> None:
    with np.load(FIXTURE) as f:
        ref = {k: f[k] for k in f.files if k != "__about__"}
    got = cases(ft)
    assert set(got) == set(ref)
    for key, want in ref.items():
        have = np.asarray(got[key])
        assert have.dtype == want.dtype and have.shape == want.shape, key
        np.testing.assert_allclose(have, want, rtol=1e-12, atol=1e-14, err_msg=key)


@pytest.mark.parametrize("name", UNARY)
def test_unary_activation_under_jit_and_vmap(name: str) -> None:
    f = getattr(nn, name)
    np.testing.assert_allclose(ft.jit(f)(X), f(X), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(ft.vmap(f)(X2), f(X2), rtol=1e-14, atol=1e-15)
    xs = X[np.abs(X) % 1 != 0] if name != "sparse_plus" else np.array([-0.5, 0.5, 3.0])
    ft.check_grads(lambda x: f(x).sum(), (xs + 0.1,), order=2)


def test_float32_stays_float32() -> None:
    x = X.astype(np.float32)
    for name in UNARY:
        assert np.asarray(getattr(nn, name)(x)).dtype == np.float32, name
    assert nn.one_hot(np.array([1, 0]), 2, dtype=np.float32).dtype == np.float32


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="glu: expected an even size"):
        nn.glu(np.ones(3))
    with pytest.raises(TypeError, match="one_hot: expected a static Python int"):
        nn.one_hot(np.array([1]), 2.5)
    with pytest.raises(ValueError, match="one_hot: expected axis"):
        nn.one_hot(np.array([1]), 2, axis=3)


def test_log1mexp_logmeanexp_sparse_sigmoid_identity_match_jax() -> None:
    # values recorded from jax.nn (JAX 0.10.2, x64 on)
    x = np.array([1e-8, 1e-3, 0.5, np.log(2.0), 1.0, 5.0, 40.0])
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), [-18.420680748952364,
        -6.908255237315471, -0.9327521295671887, -0.6931471805599453, -0.4586751453870813,
        -0.006760749449488557, -4.248354255291589e-18], rtol=1e-14)  # fmt: skip
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(nn.log1mexp))(x)), [99999999.50000001,
        999.500083333332, 1.5414940825367984, 1.0, 0.5819767068693263, 0.006783654906304231,
        4.24835425529159e-18], rtol=1e-14)  # fmt: skip
    y = np.array([[-1.5, -1.0, -0.2, 0.0], [0.3, 1.0, 2.0, 0.9]])
    np.testing.assert_allclose(np.asarray(nn.sparse_sigmoid(y)).ravel(),
                               [0.0, 0.0, 0.4, 0.5, 0.65, 1.0, 1.0, 0.95])  # fmt: skip
    d = ft.vmap(ft.grad(nn.sparse_sigmoid))(y.ravel())
    np.testing.assert_array_equal(np.asarray(d), [0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0, 0.5])
    np.testing.assert_allclose(float(nn.logmeanexp(y)), 0.713350475159173, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(y, axis=1)),
                               [-0.506775356185725, 1.246802371244342], rtol=1e-14)  # fmt: skip
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(y, axis=0, keepdims=True)),
        [[-0.24016957003387124, 0.4337808304830274, 1.4119361392087506, 0.5480066941721425]],
        rtol=1e-14)  # fmt: skip
    w = np.array([[True, False, True, True], [False, False, True, True]])
    g = ft.grad(lambda v: fnp.sum(nn.logmeanexp(v, axis=1, where=w)))(y)
    np.testing.assert_allclose(np.asarray(g), [[0.10927784488310445, 0.0, 0.4009728320741879,
        0.4897493230427077], [0.0, 0.0, 0.7502601055951177, 0.24973989440488237]],
        rtol=1e-13)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(nn.identity(y)), y)
    assert nn.log1mexp(np.float32(0.3)).dtype == np.float32
    check_grads(nn.log1mexp, (np.array([0.3, 0.6, 3.0]),), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: nn.logmeanexp(v, axis=0), (y,), order=2, modes=("fwd", "rev"))
