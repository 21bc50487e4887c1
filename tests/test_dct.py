"""``functrace.scipy.fft``'s DCT against JAX's numbers (recorded from ``dct_cases.py``),
its definition, its inverse, finite differences and the transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from dct_cases import X3D, X, cases
from functrace.scipy.fft import dct, dctn, idct, idctn
from functrace.test_util import check_grads
from recorded import assert_matches_recorded


def test_values_and_gradients_match_jax():
    tol = lambda k, v: 1e-5 if v.dtype == np.float32 else 1e-12  # noqa: E731
    assert_matches_recorded(cases(ft), "dct_jax.npz", tol)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_the_definition_the_inverse_and_orthogonality(n):
    x = np.random.default_rng(n).standard_normal(n)
    k, m = np.arange(n)[:, None], np.arange(n)[None, :]
    want = 2 * (np.cos(np.pi * k * (2 * m + 1) / (2 * n)) @ x)
    np.testing.assert_allclose(np.asarray(dct(x)), want, rtol=1e-12, atol=1e-12)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(np.asarray(idct(dct(x, norm=norm), norm=norm)), x, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(dct(x, norm="ortho"))), np.linalg.norm(x))
    back = idctn(dctn(X3D, norm="ortho"), norm="ortho")
    np.testing.assert_allclose(np.asarray(back), X3D, atol=1e-12)


def test_gradients_jit_and_vmap():
    check_grads(lambda v: dct(v, norm="ortho") ** 2, (X,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: idctn(v, s=[4, 4]), (X,), order=1, modes=("fwd", "rev"))
    eager = np.asarray(dctn(X3D, axes=(0, 2)))
    np.testing.assert_allclose(np.asarray(ft.jit(lambda v: dctn(v, axes=(0, 2)))(X3D)), eager,
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    rows = ft.vmap(lambda v: dct(v))(X)
    np.testing.assert_allclose(np.asarray(rows), np.asarray(dct(X)), rtol=1e-12, atol=1e-12)
    assert dct(np.arange(4)).dtype == np.float64  # integers as floats
    assert fnp.asarray(idct(X.astype(np.float32))).dtype == np.float32


def test_bad_arguments_name_the_function():
    with pytest.raises(NotImplementedError, match="dct: only the DCT of type 2"):
        dct(X, type=3)
    with pytest.raises(ValueError, match="idct: expected norm None, 'backward' or 'ortho'"):
        idct(X, norm="forward")
    with pytest.raises(ValueError, match="dctn: expected an axis in"):
        dctn(X, axes=(0, 2))
    with pytest.raises(ValueError, match="idctn: expected s and axes of one length"):
        idctn(X, s=[2, 2], axes=[0])
    with pytest.raises(TypeError, match="dct: expected a numeric array"):
        dct(np.array(["a"]))
