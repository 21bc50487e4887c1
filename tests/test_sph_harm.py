"""``functrace.scipy.special.sph_harm_y`` against JAX's numbers (recorded from
``sph_harm_cases.py``), SciPy's, orthonormality, the transforms and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy.special import sph_harm_y
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from sph_harm_cases import PHI, THETA, M, N, cases


def test_values_and_gradients_match_jax():
    assert_matches_recorded(cases(ft), "sph_harm_jax.npz", lambda k, v: 1e-12)


def test_against_scipy_and_orthonormal():
    np.testing.assert_allclose(sph_harm_y(N, M, THETA, PHI), ss.sph_harm_y(N, M, THETA, PHI),
                               rtol=1e-12, atol=1e-14)  # fmt: skip
    big_n = np.arange(30)
    got = sph_harm_y(big_n, big_n // 3, np.full(30, 1.1), np.full(30, 0.4))
    want = ss.sph_harm_y(big_n, big_n // 3, 1.1, 0.4)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    # Gauss-Legendre in cos(theta), uniform in phi: the harmonics are orthonormal
    x, w = np.polynomial.legendre.leggauss(12)
    phis = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    th, ph = np.meshgrid(np.arccos(x), phis, indexing="ij")
    wts = (w[:, None] * np.full(16, 2 * np.pi / 16)).ravel()
    pairs = [(0, 0), (1, -1), (2, 1), (3, 3), (4, -2)]
    ys = [np.asarray(sph_harm_y(np.full(th.size, n), np.full(th.size, m), th.ravel(), ph.ravel()))
          for n, m in pairs]  # fmt: skip
    gram = np.array([[np.sum(wts * a * np.conj(b)) for b in ys] for a in ys])
    np.testing.assert_allclose(gram, np.eye(len(pairs)), atol=1e-13)


def test_transforms_and_dtypes():
    f = lambda t, p: fnp.real(sph_harm_y(N[:9], M[:9], t, p, n_max=2))  # noqa: E731
    check_grads(f, (THETA[:9], PHI[:9]), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(ft.jit(f)(THETA[:9], PHI[:9]), f(THETA[:9], PHI[:9]), rtol=1e-14)
    y32 = sph_harm_y(N[:4], M[:4], THETA[:4].astype(np.float32), PHI[:4].astype(np.float32))
    assert y32.dtype == np.complex64  # JAX's is complex128 (its int64 orders promote)
    np.testing.assert_allclose(y32, sph_harm_y(N[:4], M[:4], THETA[:4], PHI[:4]), rtol=2e-6)


def test_bad_arguments_name_sph_harm_y():
    with pytest.raises(NotImplementedError, match="sph_harm_y: diff_n"):
        sph_harm_y(N, M, THETA, PHI, diff_n=1)
    with pytest.raises(TypeError, match="sph_harm_y: expected integer n"):
        sph_harm_y(np.array([1.0]), np.array([0]), 0.3, 0.1)
    with pytest.raises(
        ValueError, match="sph_harm_y: expected n and m as 1-d arrays of one length"
    ):
        sph_harm_y(np.array([1, 2]), np.array([0]), 0.3, 0.1)
    with pytest.raises(TypeError, match="sph_harm_y: expected n_max to be given"):
        ft.jit(lambda n: sph_harm_y(n, n * 0, 0.3, 0.1))(np.array([1, 2]))
