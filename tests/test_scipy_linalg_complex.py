"""functrace.scipy.linalg on complex matrices: values and derivatives against JAX's
(tests/fixtures/scipy_linalg_complex_jax.npz, recorded from the cases in
tests/scipy_linalg_complex_cases.py), values against SciPy, derivatives JAX cannot take
(sqrtm, hessenberg) against their defining equations, and vmap/jit of gradients."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sl

import functrace
import functrace.lax as lax
import functrace.numpy as fnp
import functrace.scipy.linalg as fsl

sys.path.insert(0, str(Path(__file__).parent))
import scipy_linalg_complex_cases as sc  # noqa: E402

_JAX = np.load(Path(__file__).parent / "fixtures" / "scipy_linalg_complex_jax.npz")
_TOL = {"complex128": 1e-9, "complex64": 2e-3}
_WHAT = ("value", "jvp", "vjp", "grad", "grad_jvp")
_VALUES_ONLY = ("sqrtm", "hessenberg_h", "hessenberg_q", "solve_sylvester", "eigh_tridiagonal")
# JAX's solve(assume_a='pos') transposes its solve as a symmetric one (no conjugate), so
# its VJP does not match its own JVP on complex matrices; cho_solve of the same (upper)
# triangle is the same function, and JAX's VJP of it is consistent: compare with that.
_SAME_AS = {f"solve_pos/{w}": f"cho_solve/{w}" for w in ("vjp", "grad", "grad_jvp")}


@pytest.fixture(scope="module", params=sorted(sc.CASES))
def recorded(request: pytest.FixtureRequest) -> tuple[str, dict[str, np.ndarray], float]:
    key = request.param
    n, dt = sc.CASES[key]
    return key, sc.case(functrace, n, dt), _TOL[dt]


def _close(got: np.ndarray, want: np.ndarray, tol: float, msg: str) -> None:
    assert got.dtype == want.dtype, (msg, got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=msg)


def test_case_names_match_the_fixture(recorded: tuple[str, dict, float]) -> None:
    key, ours, _ = recorded
    assert sorted(ours) == sorted(k[len(key) + 1 :] for k in _JAX.files if k.startswith(key + "/"))


@pytest.mark.parametrize(
    "name",
    [f"{f}/{w}" for f in sc.functions(functrace, sc.inputs(2, "complex128")) for w in _WHAT]
    + [f"{f}/value" for f in _VALUES_ONLY],
)  # fmt: skip
def test_matches_jax(recorded: tuple[str, dict, float], name: str) -> None:
    key, ours, tol = recorded
    want = _JAX[f"{key}/{_SAME_AS.get(name, name)}"]
    _close(ours[name], want, tol, f"{key}/{name}")


def _fd(f, a: np.ndarray, t: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return (np.asarray(f(a + eps * t)) - np.asarray(f(a - eps * t))) / (2 * eps)


def test_sqrtm_derivative_solves_its_sylvester_equation() -> None:
    # X = sqrtm(A): X dX + dX X = dA; the VJP is the JVP's transpose (Re <ct, J t>).
    x = sc.inputs(3, "complex128")
    a, t, ct = x["a"], x["t"], x["ct"]
    root, dx = functrace.jvp(fsl.sqrtm, (a,), (t,))
    np.testing.assert_allclose(root, sl.sqrtm(a), rtol=1e-10)
    np.testing.assert_allclose(dx, sl.solve_sylvester(root, root, t), rtol=1e-8, atol=1e-10)
    (v,) = functrace.vjp(fsl.sqrtm, a)[1](ct)
    np.testing.assert_allclose(np.real(np.sum(v * t)), np.real(np.sum(ct * dx)), rtol=1e-9)


def test_hessenberg_values_and_derivatives() -> None:
    x = sc.inputs(3, "complex128")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    t = x["t"]
    for m in (x["a"], a):
        h, q = fsl.hessenberg(m, calc_q=True)
        hr, qr = sl.hessenberg(m, calc_q=True)
        np.testing.assert_allclose(h, hr, atol=1e-12)
        np.testing.assert_allclose(q, qr, atol=1e-12)
    a3 = x["a"]
    for i in (0, 1):
        f = lambda m, i=i: fsl.hessenberg(m, calc_q=True)[i]  # noqa: E731
        _, d = functrace.jvp(f, (a3,), (t,))
        np.testing.assert_allclose(d, _fd(f, a3, t), rtol=1e-6, atol=1e-7)


def test_eigh_tridiagonal_of_complex_off_diagonal() -> None:
    d, e = np.array([1.0, 2.0, 3.0]), np.array([1 + 1j, 0.5j])
    m = np.diag(d) + np.diag(e, -1) + np.diag(np.conj(e), 1)
    w, v = fsl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(m), rtol=1e-12)
    np.testing.assert_allclose(m @ v, v * w, atol=1e-12)
    t = np.array([0.3 - 0.2j, 1j])

    def f(e):
        return fsl.eigh_tridiagonal(d, e, eigvals_only=True)

    _, dw = functrace.jvp(f, (e,), (t,))
    np.testing.assert_allclose(dw, _fd(f, e, t), rtol=1e-6, atol=1e-8)


def _loss(h: np.ndarray, ct: np.ndarray):
    b = ct[:, :2]

    def loss(x):
        pos = sc.hermitian_of(fnp, x, True) + h
        return fnp.real(
            fnp.sum(fsl.solve_triangular(x, b, trans="C", lower=True) * b)
            + fnp.sum(fsl.lu_solve(fsl.lu_factor(x), b, trans=2) * b)
            + fnp.sum(fsl.cho_solve(fsl.cho_factor(pos), b) * b)
            + fnp.sum(fsl.expm(x) * ct)
            + fnp.sum(fsl.sqrtm(x) * ct)
        )

    return loss


@pytest.mark.parametrize("dt", sc.DTYPES)
def test_vmap_of_grad_matches_loop_and_jit(dt: str) -> None:
    x = sc.inputs(2, dt)
    a = np.stack([x["a"], x["a"].T * 1.1])
    g = functrace.grad(_loss(x["h"], x["ct"]))
    loop = np.stack([g(m) for m in a])
    tol = _TOL[dt] * 10
    assert loop.dtype == np.dtype(dt)
    np.testing.assert_allclose(functrace.vmap(g)(a), loop, rtol=tol, atol=tol)
    if dt == "complex128":  # under jit, squarings counted by a traced integer (the op
        # table jits the solves' gradients; a compile per function and dtype costs seconds)
        np.testing.assert_allclose(functrace.jit(fsl.expm)(4 * a), sl.expm(4 * a), rtol=tol)


def test_eager_values_match_scipy() -> None:
    x = sc.inputs(3, "complex128")
    a, h, b = x["a"], x["h"], x["b"]
    for trans in (0, 1, 2, "C"):
        for lower in (True, False):
            for unit in (True, False):
                kw = {"trans": trans, "lower": lower, "unit_diagonal": unit}
                want = sl.solve_triangular(a, b, **kw)
                np.testing.assert_allclose(fsl.solve_triangular(a, b, **kw), want)
        np.testing.assert_allclose(
            fsl.lu_solve(fsl.lu_factor(a), b, trans=trans),
            sl.lu_solve(sl.lu_factor(a), b, trans={"C": 2}.get(trans, trans)),  # type: ignore
        )
    # getrf pivots on |re| + |im|: row 1 wins here (|abs| would choose row 0)
    m = np.array([[2.0 + 0.0j, 1.0], [1.5 + 1.5j, 3.0]])
    for got, want in zip(fsl.lu_factor(m), sl.lu_factor(m)):
        np.testing.assert_allclose(got, want)
    for got, want in zip(fsl.lu(a), sl.lu(a)):
        np.testing.assert_allclose(got, want)
    for lower in (True, False):
        np.testing.assert_allclose(fsl.cholesky(h, lower=lower), sl.cholesky(h, lower=lower))
        np.testing.assert_allclose(
            fsl.cho_solve(fsl.cho_factor(h, lower=lower), b),
            sl.cho_solve(sl.cho_factor(h, lower=lower), b),
        )
    for assume in ("gen", "sym", "her", "pos", "diagonal", "tridiagonal", "lower triangular"):
        for lower in (True, False):
            m = h if assume == "pos" else a
            np.testing.assert_allclose(
                fsl.solve(m, b, assume_a=assume, lower=lower),
                sl.solve(m, b, assume_a=assume, lower=lower),
                err_msg=assume,
            )
    np.testing.assert_allclose(fsl.solve(a, b, transposed=True), np.linalg.solve(a.T, b))
    np.testing.assert_allclose(fsl.expm(4 * a), sl.expm(4 * a), rtol=1e-12)
    value, frechet = fsl.expm_frechet(a, x["e"])
    want_value, want_frechet = sl.expm_frechet(a, x["e"])
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(frechet, want_frechet, rtol=1e-10)
    np.testing.assert_allclose(fsl.sqrtm(a), sl.sqrtm(a), rtol=1e-10)
    np.testing.assert_allclose(fsl.solve_sylvester(a, h, x["e"]), sl.solve_sylvester(a, h, x["e"]))
    tall = np.concatenate([a, b.T], axis=0)
    for side in ("right", "left"):
        for m in (a, tall, tall.T):
            for got, want in zip(fsl.polar(m, side), sl.polar(m, side)):
                np.testing.assert_allclose(got, want, atol=1e-12)
    c = np.array([1 + 1j, 2.0, -1j, 0.5])
    for f in ("toeplitz", "circulant", "hankel", "companion", "fiedler_companion"):
        np.testing.assert_allclose(getattr(fsl, f)(c), getattr(sl, f)(c), err_msg=f)


def test_qr_with_pivoting_and_qr_multiply() -> None:
    rng = np.random.default_rng(7)
    m = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    q, r, p = fsl.qr(m, pivoting=True)
    _, r_want, p_want = sl.qr(m, pivoting=True)
    np.testing.assert_array_equal(p, p_want)
    np.testing.assert_allclose(np.abs(r), np.abs(r_want), atol=1e-12)
    np.testing.assert_allclose(q @ r, m[:, p], atol=1e-12)
    for mode, c in (("left", m[:3, :2]), ("right", m.T[:2])):
        for conjugate in (False, True):
            got = fsl.qr_multiply(m, c, mode=mode, conjugate=conjugate)[0]
            want = sl.qr_multiply(m, c, mode=mode, conjugate=conjugate)[0]
            # Q's columns may differ in phase from LAPACK's: compare through |.| of Q's form
            q_e = fsl.qr(m, mode="economic")[0]
            q_e = np.conj(q_e) if conjugate else q_e
            np.testing.assert_allclose(got, q_e @ c if mode == "left" else c @ q_e)
            np.testing.assert_allclose(np.abs(got), np.abs(want), atol=1e-12)


@pytest.mark.parametrize("dt", sc.DTYPES)
def test_schur_and_rsf2csf(dt: str) -> None:
    rng = np.random.default_rng(11)
    tol = 1e-12 if dt == "complex128" else 1e-4
    for n in (1, 2, 5):
        a = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dt)
        for output in ("real", "complex"):
            t, z = fsl.schur(a, output=output)
            assert t.dtype == z.dtype == np.dtype(dt)
            np.testing.assert_array_equal(np.tril(t, -1), 0)
            np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=tol * 10)
            np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=tol * 10)
            np.testing.assert_allclose(
                np.sort_complex(np.diag(t)), np.sort_complex(np.linalg.eigvals(a)), atol=tol * 100
            )
        tc, zc = fsl.rsf2csf(t, z)  # already triangular: unchanged
        np.testing.assert_allclose(tc, t)
        np.testing.assert_allclose(zc, z)
    cycle = np.roll(np.eye(4), 1, axis=0).astype(dt)  # eigenvalues on the unit circle
    t, z = fsl.schur(cycle)
    np.testing.assert_allclose(z @ t @ z.conj().T, cycle, atol=tol * 10)
    real_t, real_z = fsl.schur(np.real(cycle))
    tc, zc = fsl.rsf2csf(real_t.astype(dt), real_z.astype(dt))
    np.testing.assert_array_equal(np.tril(tc, -1), 0)
    np.testing.assert_allclose(zc @ tc @ zc.conj().T, cycle, atol=tol * 10)


def test_lax_triangular_solve_options() -> None:
    x = sc.inputs(3, "complex128")
    a, b = x["a"], x["b"]
    low = np.tril(a, -1) + np.eye(3)
    got = lax.triangular_solve(a, b.T, True, True, conjugate_a=True, unit_diagonal=True,
                               left_side=False)  # fmt: skip
    np.testing.assert_allclose(got @ low.conj().T, b.T)
    got = lax.triangular_solve(a, b, False, conjugate_a=True)  # conj(triu(a)) x = b
    np.testing.assert_allclose(np.conj(np.triu(a)) @ got, b)
    # conjugate_a does nothing on real matrices (as JAX): it is dropped from the params
    jaxpr = functrace.make_jaxpr(lambda m: lax.triangular_solve(m, m, conjugate_a=True))(np.eye(2))
    assert "conjugate_a=False" in str(jaxpr)
    batched = functrace.vmap(
        lambda m, r: lax.triangular_solve(m, r, left_side=False, conjugate_a=True),
        in_axes=(None, 0),
    )(a, np.stack([b.T, 2 * b.T]))
    np.testing.assert_allclose(batched[1] @ np.conj(np.tril(a)), 2 * b.T)


def test_bad_input_names_function_and_expectation() -> None:
    a = sc.inputs(2, "complex128")["a"]
    with pytest.raises(ValueError, match="solve_triangular: expected trans in 0, 1, 2"):
        fsl.solve_triangular(a, a, trans="X")
    with pytest.raises(ValueError, match="lu_solve: expected trans in 0, 1, 2"):
        fsl.lu_solve(fsl.lu_factor(a), a, trans=3)
    with pytest.raises(TypeError, match="expm: expected an array of numbers"):
        fsl.expm(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match=r"expm: expected a square matrix \(\.\.\., n, n\)"):
        fsl.expm(np.ones((2, 3), complex))
    with pytest.raises(ValueError, match=r"triangular_solve: expected b of shape \(\.\.\., k, 2\)"):
        lax.triangular_solve(a, np.ones((2, 3), a.dtype), left_side=False)
    with pytest.raises(TypeError, match="eigh_tridiagonal: expected an array of numbers"):
        fsl.eigh_tridiagonal(np.ones(2), np.array([np.datetime64(1, "s")]))
    with pytest.raises(ValueError, match="sqrtm: expected a matrix with no eigenvalue on the"):
        fsl.sqrtm(np.diag([-1.0 + 0j, 2.0]))
