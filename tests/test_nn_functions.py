"""functrace.nn's activation functions compute jax.nn's values and gradients, and
compose with jit/vmap/grad like every other function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
from functrace import nn
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
