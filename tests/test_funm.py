"""``functrace.scipy.linalg.funm`` against JAX's numbers (recorded from
``funm_cases.py``), SciPy's, closed forms, under ``jit`` and ``vmap``, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy.linalg import expm, funm
from funm_cases import MATS, cases
from recorded import assert_matches_recorded


def test_values_match_jax():
    tol = lambda k, v: 2e-5 if v.dtype == np.complex64 else 1e-11  # noqa: E731
    assert_matches_recorded(cases(ft), "funm_jax.npz", tol)


@pytest.mark.parametrize("name", sorted(MATS))
def test_against_scipy_and_closed_forms(name):
    a = MATS[name]
    for fn in (np.exp, np.sin, lambda x: x**3 - 2 * x):
        np.testing.assert_allclose(funm(a, fn), sl.funm(a, fn), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(funm(a, np.exp), expm(a), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(funm(a, lambda x: x**3 - 2 * x), a @ a @ a - 2 * a, atol=1e-11)


def test_jit_and_vmap_through_a_callback():
    batch = np.stack([MATS["general"], MATS["symmetric"]])
    loop = np.stack([funm(m, fnp.exp) for m in batch])
    np.testing.assert_allclose(ft.vmap(lambda m: funm(m, fnp.exp))(batch), loop, rtol=1e-13)
    f = ft.jit(lambda m: funm(m * 2.0, fnp.sin, disp=False))
    value, err = f(MATS["rotation"])
    want, want_err = funm(MATS["rotation"] * 2.0, np.sin, disp=False)
    np.testing.assert_allclose(value, want, rtol=1e-13)
    assert err.dtype == np.float64 and float(err) == float(want_err)
    assert funm(np.eye(2, dtype=np.float32), np.exp).dtype == np.complex64


def test_bad_input_names_funm():
    with pytest.raises(ValueError, match=r"funm: expected a square 2-D matrix, got shape \(2, 3\)"):
        funm(np.ones((2, 3)), np.exp)
    with pytest.raises(ValueError, match="funm: expected a square 2-D matrix"):
        ft.jit(lambda m: funm(m, np.exp))(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="funm: expected a callable func"):
        funm(np.eye(2), 3)
    with pytest.raises(ValueError, match="funm: expected finite entries"):
        funm(np.array([[np.nan, 0.0], [0.0, 1.0]]), np.exp)
    with pytest.raises(ValueError, match="pure_callback"):
        ft.grad(lambda m: fnp.sum(funm(m, fnp.exp).real))(MATS["general"])
