"""``functrace.scipy.sparse.linalg`` (``cg``, ``bicgstab``, ``gmres``) against JAX's numbers
(recorded from ``sparse_linalg_cases.py``), direct solves, finite differences and the
transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
from functrace.scipy.sparse.linalg import bicgstab, cg, gmres
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from sparse_linalg_cases import NONSYM, SPD, B, cases


def test_iterations_solutions_and_gradients_match_jax():
    # gmres's restarts with few vectors amplify rounding (1e-11 at restart=3)
    tol = lambda k, v: 1e-9 if k.startswith("gmres") else 1e-12  # noqa: E731
    assert_matches_recorded(cases(ft), "sparse_linalg_jax.npz", tol)


def _gmres_incremental(*a, **kw):
    return gmres(*a, solve_method="incremental", **kw)


SOLVERS = [(cg, SPD), (bicgstab, NONSYM), (gmres, NONSYM), (_gmres_incremental, NONSYM)]
IDS = ["cg", "bicgstab", "gmres", "gmres-incremental"]


@pytest.mark.parametrize("solve,A", SOLVERS, ids=IDS)
def test_converged_solves_match_a_direct_solve_and_differentiate(solve, A):
    x, info = solve(A, B, tol=1e-12)
    assert info is None if solve in (cg, bicgstab) else int(info) == 0
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, B), rtol=1e-9)

    def f(A, b):
        return solve(A, b, tol=1e-13)[0]

    check_grads(f, (A, B), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_vmap_over_right_hand_sides_matches_a_loop():
    bs = np.stack([B, 2 * B + 1, -B])
    for solve, A in SOLVERS:
        loop = np.stack([np.asarray(solve(A, b, tol=1e-12)[0]) for b in bs])
        batched = ft.vmap(lambda b, solve=solve, A=A: solve(A, b, tol=1e-12)[0])(bs)
        np.testing.assert_allclose(np.asarray(batched), loop, rtol=1e-10, atol=1e-14)
        jitted = ft.jit(ft.vmap(lambda b, solve=solve, A=A: solve(A, b, tol=1e-12)[0]))(bs)
        np.testing.assert_allclose(np.asarray(jitted), loop, rtol=1e-10, atol=1e-14)


def test_float32_stays_float32():
    x, _ = cg(SPD.astype(np.float32), B.astype(np.float32))
    assert x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(SPD, B), atol=1e-5)  # tol=1e-5


def test_bad_arguments_name_the_solver():
    with pytest.raises(ValueError, match="cg: expected A to be a function or a square matrix"):
        cg(np.ones((2, 3)), np.ones(2))
    with pytest.raises(TypeError, match="bicgstab: expected A to be a function or a square"):
        bicgstab("A", np.ones(2))
    with pytest.raises(ValueError, match="cg: expected x0 of the structure and shapes of b"):
        cg(SPD, B, x0=np.zeros(5))
    with pytest.raises(ValueError, match="cg: expected M to be a function or a square matrix"):
        cg(SPD, B, M=np.ones(6))
    with pytest.raises(ValueError, match="bicgstab: expected b to hold at least one array"):
        bicgstab(lambda v: v, {})
    with pytest.raises(ValueError, match="gmres: expected solve_method 'batched' or"):
        gmres(NONSYM, B, solve_method="lgmres")
    with pytest.raises(ValueError, match="gmres: expected restart to be a whole number"):
        gmres(NONSYM, B, restart=0)
