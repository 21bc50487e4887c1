"""``functrace.lax.linalg.tridiagonal_solve`` against JAX's numbers (LAPACK ``gtsv``,
recorded from ``tridiagonal_cases.py``), a dense solve, finite differences and the
transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
from functrace.lax.linalg import tridiagonal_solve
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from tridiagonal_cases import cases, system


def dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


def test_values_and_gradients_match_jax():
    assert_matches_recorded(cases(ft), "tridiagonal_jax.npz", lambda k, v: 1e-12)


@pytest.mark.parametrize("m", [1, 2, 3, 7])
def test_matches_a_dense_solve_with_pivoting(m):
    dl, d, du, b = system(m, seed=3)
    d[0] = 0.0 if m > 1 else d[0]  # the first step must interchange rows
    x = np.asarray(tridiagonal_solve(dl, d, du, b))
    np.testing.assert_allclose(x, np.linalg.solve(dense(dl, d, du), b), rtol=1e-10, atol=1e-12)


def test_gradients_vmap_and_float32():
    dl, d, du, b = system(5, seed=4)
    d += 3.0  # well conditioned for finite differences
    check_grads(tridiagonal_solve, (dl, d, du, b), order=2, modes=("fwd", "rev"))
    batch = system(4, batch=(3,), n=2, seed=5)
    looped = np.stack([np.asarray(tridiagonal_solve(*(a[i] for a in batch))) for i in range(3)])
    np.testing.assert_allclose(np.asarray(ft.vmap(tridiagonal_solve)(*batch)), looped, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tridiagonal_solve(*batch)), looped, rtol=1e-12)
    x32 = tridiagonal_solve(*(a.astype(np.float32) for a in (dl, d, du, b)))
    assert x32.dtype == np.float32


def test_bad_arguments_name_the_function():
    dl, d, du, b = system(4)
    with pytest.raises(ValueError, match=r"tridiagonal_solve: expected dl, d and du of shape"):
        tridiagonal_solve(dl, d, du, b[:3])
    with pytest.raises(TypeError, match="tridiagonal_solve: expected dl, d, du and b of one"):
        tridiagonal_solve(dl, d, du, b.astype(np.float32))
    with pytest.raises(NotImplementedError, match="perturb_singular=True is not supported"):
        tridiagonal_solve(dl, d, du, b, perturb_singular=True)
