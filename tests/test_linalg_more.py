"""The newer linear algebra beyond the op table (``op_rows_linalg2``).

* ``det``'s gradient and Hessian at singular matrices against values recorded from
  JAX (``fixtures/linalg_jax.npz``), under ``grad``, ``jit``, ``vmap`` and in float32;
  ``slogdet`` there;
* ``lstsq`` against NumPy (rank-deficient, empty, residual shapes), its derivatives at
  repeated singular values, and ``jit(vmap(grad(loss)))`` against a loop;
* the array API functions, ``eig``, tensor solves: values and errors;
* ``functrace.scipy.linalg``: special matrices (exact integers included), ``schur``,
  ``hessenberg``, ``sqrtm``, ``polar``, ``solve``, ``solve_sylvester``,
  ``eigh_tridiagonal``, ``qr_multiply``: values against SciPy, and errors.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl

import functrace as ft
import functrace.numpy as fnp
import functrace.scipy.linalg as fsl
from functrace.errors import ConcretizationError
from functrace.lax import linalg as ll

L = fnp.linalg
RNG = np.random.default_rng(7)
FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "linalg_jax.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURE.files if "/" in k})

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _fd_hessian(f: Any, a: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """Central second differences (exact up to rounding for the cubic det of 3x3)."""
    n = a.size
    h = np.zeros((n, n))
    basis = np.eye(n).reshape(n, *a.shape)
    for i in range(n):
        for j in range(n):
            ei, ej = eps * basis[i], eps * basis[j]
            h[i, j] = (f(a + ei + ej) - f(a + ei - ej) - f(a - ei + ej) + f(a - ei - ej)) / (
                4 * eps * eps
            )
    return h.reshape(a.shape + a.shape)


# ---------------------------------------------------------------------------
# det at singular matrices (JAX's values)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_det_gradient_and_hessian_match_jax(case: str) -> None:
    a = FIXTURE[f"{case}/a"]
    hess = FIXTURE[f"{case}/hessian"]
    if case == "rank2_4x4":
        # JAX's Hessian is 0 at this rank n-2 matrix, but det's second derivatives (its
        # (n-2)-minors) are not: functrace gives the exact ones (finite differences agree).
        assert not hess.any()
        hess = _fd_hessian(lambda m: np.linalg.det(m), a)
        assert np.abs(hess).max() > 1
    np.testing.assert_allclose(ft.grad(L.det)(a), FIXTURE[f"{case}/grad"], atol=1e-12)
    np.testing.assert_allclose(ft.hessian(L.det)(a), hess, atol=1e-9)
    np.testing.assert_allclose(ft.jit(ft.grad(L.det))(a), FIXTURE[f"{case}/grad"], atol=1e-12)
    np.testing.assert_allclose(ft.jacrev(ft.jacrev(L.det))(a), hess, atol=1e-9)
    g32 = ft.grad(L.det)(a.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, FIXTURE[f"{case}/grad"], atol=1e-4)


def test_det_derivatives_batched_and_against_finite_differences() -> None:
    names = [c for c in CASES if c.endswith("3x3")]
    stack = np.stack([FIXTURE[f"{c}/a"] for c in names])
    grads = np.stack([FIXTURE[f"{c}/grad"] for c in names])
    np.testing.assert_allclose(ft.vmap(ft.grad(L.det))(stack), grads, atol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.vmap(ft.grad(L.det)))(stack), grads, atol=1e-12)
    # the Hessian of the whole stack's det at once (stacks go through the primitives)
    hess = ft.jacfwd(ft.grad(lambda s: fnp.sum(L.det(s))))(stack)
    for k, c in enumerate(names):
        np.testing.assert_allclose(hess[k, :, :, k], FIXTURE[f"{c}/hessian"], atol=1e-12)
        np.testing.assert_allclose(
            hess[k, :, :, k], _fd_hessian(lambda m: np.linalg.det(m), stack[k]), atol=1e-6
        )


def test_det_third_order_and_scipy_det() -> None:
    a = RNG.uniform(-1, 1, (3, 3)) + 2 * np.eye(3)
    ft.check_grads(L.det, (a,), order=3, modes=("fwd", "rev"))
    sing = FIXTURE["rank2_3x3/a"]
    np.testing.assert_allclose(ft.grad(fsl.det)(sing), FIXTURE["rank2_3x3/grad"], atol=1e-12)


def test_adjugate_matches_cofactors() -> None:
    def cofactors_t(a: np.ndarray) -> np.ndarray:
        n = a.shape[0]
        out = np.zeros_like(a)
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(a, i, 0), j, 1)
                out[j, i] = (-1) ** (i + j) * np.linalg.det(minor)
        return out

    for a in [RNG.normal(size=(4, 4)), FIXTURE["rank2_4x4/a"], FIXTURE["rank3_4x4/a"]]:
        np.testing.assert_allclose(ll.adjugate(a), cofactors_t(a), atol=1e-12)
    assert ll.adjugate(np.array([[5.0]])).tolist() == [[1.0]]
    assert ll.adjugate(np.zeros((0, 0))).shape == (0, 0)
    assert np.isnan(ll.adjugate(np.array([[np.nan, 1.0], [1.0, 1.0]]))).all()


def test_slogdet_at_singular_matrices() -> None:
    for case in CASES:
        a = FIXTURE[f"{case}/a"]
        sign, logabsdet = ft.jit(L.slogdet)(a)
        scale = np.linalg.norm(a) ** len(a)
        if abs(FIXTURE[f"{case}/det"]) < 1e-12 * scale:
            # singular up to rounding: whether the LU's last pivot is 0 or a rounding
            # error depends on the LAPACK kernels (JAX's was 5.6e-16, some here are 0)
            assert float(sign) * np.exp(float(logabsdet)) <= 1e-12 * scale
        else:
            assert float(sign) == FIXTURE[f"{case}/slogdet_sign"]
            np.testing.assert_allclose(logabsdet, FIXTURE[f"{case}/slogdet_logabsdet"], rtol=1e-12)
        if float(sign) != 0:  # nonsingular here (or a rounding error from singular)
            continue
        assert float(sign) == 0.0 and float(logabsdet) == -np.inf
        # no finite derivative exists there: NaN (JAX: infinities and NaN, pivot-dependent)
        assert np.isnan(ft.grad(lambda m: L.slogdet(m).logabsdet)(a)).all()
        assert ft.grad(lambda m: L.slogdet(m).sign)(a).tolist() == np.zeros_like(a).tolist()


# ---------------------------------------------------------------------------
# lstsq
# ---------------------------------------------------------------------------


def _assert_lstsq_equal(got: Any, ref: Any) -> None:
    for g, r in zip(got, ref):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape and g.dtype == r.dtype, (g.shape, r.shape, g.dtype, r.dtype)
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "a_shape,b_shape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)), ((4, 4), (4, 1))]
)
def test_lstsq_matches_numpy(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    ref = np.linalg.lstsq(a, b, rcond=None)
    _assert_lstsq_equal(L.lstsq(a, b), ref)
    _assert_lstsq_equal(ft.jit(L.lstsq)(a, b), ref)
    x, resid, _, _ = L.lstsq(a, b, numpy_resid=False)  # JAX's default: always computed
    expected = np.atleast_1d(np.sum((b - a @ np.asarray(x)) ** 2, axis=0))
    np.testing.assert_allclose(resid, expected, atol=1e-12)


def test_lstsq_rank_deficient_and_empty() -> None:
    a = RNG.normal(size=(5, 3))
    a[:, 2] = a[:, 1]
    b = RNG.normal(size=5)
    x, resid, rank, s = ft.jit(L.lstsq)(a, b)
    ref = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(x, ref[0], atol=1e-12)  # the minimum-norm solution
    assert int(rank) == int(ref[2]) == 2 and rank.dtype == np.int32
    assert ref[1].shape == (0,) and resid.shape == (1,)  # traced: residuals computed
    np.testing.assert_allclose(resid, [np.sum((b - a @ ref[0]) ** 2)], atol=1e-12)
    for shape in [(3, 0), (0, 3)]:
        a0, b0 = np.zeros(shape), np.ones(shape[0])
        _assert_lstsq_equal(ft.jit(L.lstsq)(a0, b0), np.linalg.lstsq(a0, b0, rcond=None))


def test_lstsq_derivatives_at_repeated_singular_values() -> None:
    a, b = 2 * np.eye(5, 3), RNG.normal(size=5)  # singular values 2, 2, 2

    def f(a: Any, b: Any) -> Any:
        return L.lstsq(a, b)[0]

    ft.check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
    ft.check_grads(f, (a.T, b[:3]), order=2, modes=("fwd", "rev"))  # wide: minimum norm
    g = ft.jit(ft.grad(lambda a: fnp.sum(f(a, b) ** 2)))(a)
    assert np.isfinite(g).all()
    # second order under jit (traced: both branches are built) equals the eager one
    d = np.outer(np.arange(5), np.arange(3)) / 10
    h = lambda t: fnp.sum(fnp.sin(f(a + t * d, b + t)))  # noqa: E731
    want = ft.grad(ft.grad(h))(0.0)
    for hh in (ft.grad(ft.grad(ft.jit(h))), ft.jit(ft.grad(ft.grad(h)))):
        np.testing.assert_allclose(hh(0.0), want, rtol=1e-10)


def test_lstsq_jit_vmap_grad_matches_loop() -> None:
    a = RNG.normal(size=(4, 6, 3))
    a[3] = np.eye(6, 3)  # repeated singular values in one example
    b = RNG.normal(size=(4, 6))
    w = RNG.normal(size=3)

    def loss(a: Any, b: Any) -> Any:
        x, resid, _, s = L.lstsq(a, b)
        return fnp.sum(x * w) + fnp.sum(resid) + fnp.sum(s)

    grad = ft.grad(loss, argnums=(0, 1))
    ga, gb = ft.jit(ft.vmap(grad))(a, b)
    for k in range(4):
        ea, eb = grad(a[k], b[k])
        np.testing.assert_allclose(ga[k], ea, atol=1e-10)
        np.testing.assert_allclose(gb[k], eb, atol=1e-10)
    # a full-rank solution against the normal equations' gradient
    ref = ft.grad(lambda a: fnp.sum(L.solve(a.T @ a, a.T @ b[0]) * w))(a[0])
    np.testing.assert_allclose(ft.grad(lambda a: fnp.sum(L.lstsq(a, b[0])[0] * w))(a[0]), ref)


def test_lstsq_errors() -> None:
    with pytest.raises(
        np.linalg.LinAlgError, match=r"lstsq: expected a 2-D matrix a, got shape \(3,\)"
    ):
        L.lstsq(np.ones(3), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"lstsq: expected a 2-D matrix a"):
        ft.jit(L.lstsq)(np.ones((2, 3, 2)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"expected b of shape \(3,\) or \(3, K\)"):
        L.lstsq(np.ones((3, 2)), np.ones(2))
    with pytest.raises(TypeError, match="lstsq: expected a numeric array, got str"):
        ft.jit(L.lstsq)(np.ones((3, 2)), np.array(["a", "b", "c"]))


# ---------------------------------------------------------------------------
# Other functrace.numpy.linalg functions
# ---------------------------------------------------------------------------


def test_cond_and_matrix_rank() -> None:
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for p in [None, 1, np.inf, "fro"]:
        assert float(ft.jit(lambda a, p=p: L.cond(a, p))(sing)) == np.linalg.cond(sing, p)
    assert np.isnan(ft.jit(L.cond)(np.full((2, 2), np.nan)))
    a = RNG.normal(size=(2, 4, 3))
    assert ft.jit(L.matrix_rank)(a).tolist() == np.linalg.matrix_rank(a).tolist()
    assert int(ft.jit(L.matrix_rank)(sing)) == 1
    assert int(ft.jit(L.matrix_rank)(np.zeros(3))) == 0 and L.matrix_rank(np.ones(3)) == 1
    assert (
        ft.jit(lambda a: L.matrix_rank(a, tol=1.0))(a).tolist()
        == np.linalg.matrix_rank(a, tol=1.0).tolist()
    )
    with pytest.raises(ValueError, match="matrix_rank: expected tol or rtol, got both"):
        L.matrix_rank(a, tol=1.0, rtol=0.1)
    with pytest.raises(np.linalg.LinAlgError, match=r"cond: expected square matrices for p=1"):
        ft.jit(lambda a: L.cond(a, 1))(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="cond: expected non-empty"):
        L.cond(np.zeros((0, 0)))


def test_array_api_functions() -> None:
    x = RNG.normal(size=(2, 3, 4))
    y = RNG.normal(size=(4, 1, 3))
    np.testing.assert_allclose(
        ft.jit(lambda a, b: L.vecdot(a, b, axis=0))(x[0, :, :2], y[0, 0, :, None] * x[1, :, :2]),
        np.linalg.vecdot(x[0, :, :2], y[0, 0, :, None] * x[1, :, :2], axis=0),
    )
    np.testing.assert_allclose(ft.jit(L.vector_norm)(x), np.linalg.vector_norm(x), rtol=1e-12)
    assert ft.jit(lambda v: L.vector_norm(v, axis=(0, 2), keepdims=True))(x).shape == (1, 3, 1)
    assert (
        L.trace(np.ones((2, 3, 3), dtype=np.int32)).dtype
        == np.linalg.trace(np.ones((2, 3, 3), dtype=np.int32)).dtype
    )
    with pytest.raises(ValueError, match="cross: expected 3-component vectors"):
        L.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"outer: expected two 1-D vectors, got shapes \(2, 2\)"):
        ft.jit(L.outer)(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="matrix_transpose: expected an array with at least 2"):
        L.matrix_transpose(np.ones(3))
    with pytest.raises(ValueError, match="vecdot: expected vectors of one length"):
        ft.jit(L.vecdot)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="diagonal: expected an array with at least 2"):
        ft.jit(L.diagonal)(np.ones(3))


def test_tensorinv_tensorsolve() -> None:
    a = RNG.normal(size=(6, 6)) + 4 * np.eye(6)
    t = a.reshape(6, 2, 3)
    b = RNG.normal(size=6)
    np.testing.assert_allclose(ft.jit(L.tensorsolve)(t, b), np.linalg.tensorsolve(t, b), rtol=1e-12)
    t2 = a.reshape(2, 3, 6).transpose(2, 0, 1)
    np.testing.assert_allclose(
        ft.jit(lambda t: L.tensorsolve(t, b.reshape(2, 3), axes=(0,)))(t2),
        np.linalg.tensorsolve(t2, b.reshape(2, 3), axes=(0,)),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        ft.jit(lambda t: L.tensorinv(t, ind=1))(t), np.linalg.tensorinv(t, ind=1), rtol=1e-12
    )
    with pytest.raises(np.linalg.LinAlgError, match=r"tensorinv: expected prod\(a.shape\[:ind\]\)"):
        L.tensorinv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="tensorsolve: expected a's leading dimensions"):
        ft.jit(L.tensorsolve)(np.ones((6, 2, 3)), np.ones(5))


def test_eig_is_eager_only() -> None:
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = L.eig(a)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(L.eigvals(a), np.linalg.eigvals(a))
    assert L.eigvals(np.diag([1.0, 2.0])).dtype == np.float64  # NumPy's: real when possible
    for f in (L.eig, L.eigvals):
        with pytest.raises(NotImplementedError, match="complex in general"):
            ft.jit(f)(a)
        with pytest.raises(NotImplementedError, match="expected a NumPy array, got a traced"):
            ft.grad(lambda m, f=f: fnp.sum(f(m)[0]))(a)
    with pytest.raises(np.linalg.LinAlgError, match="eig: expected square matrices"):
        L.eig(np.ones((2, 3)))


# ---------------------------------------------------------------------------
# functrace.scipy.linalg
# ---------------------------------------------------------------------------


def test_exact_special_matrices() -> None:
    for n in [0, 1, 5, 35]:
        for kind in ["symmetric", "lower", "upper"]:
            for f, g in [(fsl.pascal, sl.pascal), (fsl.invpascal, sl.invpascal)]:
                got, ref = f(n, kind), g(n, kind)
                assert got.dtype == ref.dtype and got.shape == ref.shape
                assert np.array(got).tolist() == ref.tolist()
                np.testing.assert_allclose(f(n, kind, exact=False), g(n, kind, exact=False))
    for n in [3, 14, 15]:
        got, ref = fsl.invhilbert(n, exact=True), sl.invhilbert(n, exact=True)
        assert got.dtype == ref.dtype and np.array(got).tolist() == ref.tolist()
    np.testing.assert_allclose(fsl.invhilbert(6), sl.invhilbert(6), rtol=1e-12)
    np.testing.assert_allclose(fsl.helmert(5, full=True), sl.helmert(5, full=True))
    assert np.array(fsl.hadamard(8, float)).tolist() == sl.hadamard(8, float).tolist()
    with pytest.raises(ValueError, match="hadamard: expected n a positive power of 2, got 6"):
        fsl.hadamard(6)


def test_special_matrices_batch_and_errors() -> None:
    x = RNG.normal(size=(2, 4))
    for name in ["toeplitz", "circulant", "companion", "fiedler", "fiedler_companion"]:
        got = ft.jit(getattr(fsl, name))(x)
        ref = np.stack([getattr(sl, name)(row) for row in x])
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(fsl.hankel)(x), np.stack([sl.hankel(r) for r in x]))
    assert fsl.block_diag().shape == (1, 0)
    with pytest.raises(ValueError, match="companion: expected a non-zero leading coefficient"):
        fsl.companion([0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="leslie: expected s one shorter than f"):
        fsl.leslie([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="block_diag: expected arrays of at most 2 dimensions"):
        fsl.block_diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="convolution_matrix: expected mode"):
        fsl.convolution_matrix([1.0], 2, "circular")


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur(output: str) -> None:
    for n, seed in [(1, 0), (2, 1), (5, 2), (9, 3)]:
        a = np.random.default_rng(seed).normal(size=(n, n))
        t, z = fsl.schur(a, output)
        np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-12)
        np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(
            np.sort_complex(np.linalg.eigvals(t)), np.sort_complex(np.linalg.eigvals(a)), atol=1e-10
        )
        if output == "complex":
            assert np.all(np.tril(t, -1) == 0)
        else:
            assert np.all(np.tril(t, -2) == 0)
            for k in range(n - 1):  # standardized 2x2 blocks
                if t[k + 1, k] != 0:
                    assert t[k, k] == t[k + 1, k + 1] and t[k, k + 1] * t[k + 1, k] < 0
    tc, zc = fsl.rsf2csf(*fsl.schur(np.array([[1.0, -2.0], [1.0, 1.0]])))
    np.testing.assert_allclose(np.diag(tc), [1 + np.sqrt(2) * 1j, 1 - np.sqrt(2) * 1j])
    with pytest.raises(NotImplementedError, match="schur: expected NumPy arrays, got a traced"):
        ft.jit(fsl.schur)(np.eye(2))


def test_hessenberg_sqrtm_polar() -> None:
    a = RNG.normal(size=(6, 6))
    h, q = fsl.hessenberg(a, calc_q=True)
    hr, qr = sl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, hr, atol=1e-12)
    np.testing.assert_allclose(q, qr, atol=1e-12)
    m = a @ a.T + np.eye(6)
    np.testing.assert_allclose(ft.jit(fsl.sqrtm)(m), sl.sqrtm(m), rtol=1e-10)
    rot = np.array([[0.0, -2.0], [2.0, 0.0]])  # complex eigenvalues, a real root
    np.testing.assert_allclose(fsl.sqrtm(rot) @ fsl.sqrtm(rot), rot, atol=1e-12)
    with pytest.raises(
        ValueError, match="sqrtm: expected a matrix with no eigenvalue on the closed negative"
    ):
        fsl.sqrtm(np.diag([-1.0, 2.0]))
    assert np.isnan(ft.jit(fsl.sqrtm)(np.diag([-1.0, 2.0]))).all()
    # the polar factor's derivative at repeated singular values, against a closed form:
    # u(I + tE) = I + t skew(E) + O(t^2)
    e = RNG.normal(size=(3, 3))
    _, du = ft.jvp(lambda x: fsl.polar(x)[0], (np.eye(3),), (e,))
    np.testing.assert_allclose(du, (e - e.T) / 2, atol=1e-12)


def test_solve_sylvester_eigh_tridiagonal_qr_multiply() -> None:
    a, b, q = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 2)), RNG.normal(size=(3, 2))
    np.testing.assert_allclose(
        ft.jit(fsl.solve_sylvester)(a, b, q), sl.solve_sylvester(a, b, q), rtol=1e-10
    )
    with pytest.raises(np.linalg.LinAlgError, match="solve_sylvester: expected a and -b"):
        fsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)))
    d, e = RNG.normal(size=6), RNG.normal(size=5)
    for kw in [{}, {"select": "i", "select_range": (1, 3)}]:
        np.testing.assert_allclose(
            ft.jit(lambda d, e, kw=kw: fsl.eigh_tridiagonal(d, e, eigvals_only=True, **kw))(d, e),
            sl.eigh_tridiagonal(d, e, eigvals_only=True, **kw),
            rtol=1e-12,
        )
    vr = (-0.5, 1.0)
    np.testing.assert_allclose(
        fsl.eigh_tridiagonal(d, e, True, "v", vr), sl.eigh_tridiagonal(d, e, True, "v", vr)
    )
    with pytest.raises(ConcretizationError, match="select='v'"):
        ft.jit(lambda d, e: fsl.eigh_tridiagonal(d, e, select="v", select_range=vr))(d, e)
    m, c = RNG.normal(size=(5, 3)), RNG.normal(size=(2, 5))
    got, ref = fsl.qr_multiply(m, c, pivoting=True), sl.qr_multiply(m, c, pivoting=True)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, atol=1e-12)
    with pytest.raises(ValueError, match=r"qr_multiply: expected c of shape \(3,\) or \(3, p\)"):
        fsl.qr_multiply(m, c, mode="left")


@pytest.mark.parametrize(
    "assume_a", [None, "gen", "sym", "her", "pos", "diagonal", "tridiagonal", "lower triangular"]
)
def test_scipy_solve(assume_a: str | None) -> None:
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    if assume_a == "pos":
        a = a @ a.T
    b = RNG.normal(size=(4, 2))
    for lower in (False, True):
        for transposed in (False, True):
            kw = {"lower": lower, "assume_a": assume_a, "transposed": transposed}
            np.testing.assert_allclose(
                ft.jit(lambda a, b, kw=kw: fsl.solve(a, b, **kw))(a, b),
                sl.solve(a, b, **kw),
                rtol=1e-10,
            )
    with pytest.raises(ValueError, match="solve: expected assume_a one of"):
        fsl.solve(a, b, assume_a="orthogonal")


def test_norm_of_complex_input_differentiates_as_jax() -> None:
    # JAX 0.10.2 (x64): every norm but the spectral ones is a norm of |z|
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    m = np.array([[1 + 2j, 0.5], [-1j, 2 - 1j]])
    want = {
        (0, None): [0.4327423224 - 0.8654846448j, -0.2163711612 - 0.1298226967j],
        (0, 1): [0.4472135955 - 0.894427191j, -0.8574929257 - 0.5144957554j],
        (0, 3): [0.4420037754 - 0.8840075508j, -0.0576302415 - 0.0345781449j],
        (1, "fro"): [
            [0.298142397 - 0.596284794j, 0.1490711985],
            [0.298142397j, 0.596284794 + 0.298142397j],
        ],
        (1, -np.inf): [[0.4472135955 - 0.894427191j, 1.0], [0.0, 0.0]],
    }
    for (which, order), g in want.items():
        x = (z, m)[which]

        def f(v, order=order):
            return fnp.linalg.norm(v, ord=order)

        np.testing.assert_allclose(ft.grad(f)(x), g, atol=1e-9)
        np.testing.assert_allclose(ft.jit(ft.grad(f))(x), g, atol=1e-9)
        assert float(f(x)) == pytest.approx(np.linalg.norm(x, ord=order))
    np.testing.assert_allclose(
        ft.vmap(fnp.linalg.norm)(np.stack([z, 2 * z])), [2.3108440017, 4.6216880034]
    )
    # the spectral norms go through the complex SVD (JAX 0.10.2's gradients)
    spectral = {
        "nuc": [
            [0.3947836862 - 0.8700117441j, 0.2476695754 + 0.1608887433j],
            [-0.0804443716 + 0.2841726752j, 0.8700117441 + 0.3947836862j],
        ],
        2: [
            [0.294781417 - 0.3908135778j, 0.0231724234 - 0.3974985124j],
            [0.1987492562 + 0.5680616443j, 0.3908135778 + 0.294781417j],
        ],
        -2: [
            [0.1000022692 - 0.4791981663j, 0.224497152 + 0.5583872557j],
            [-0.2791936279 - 0.2838889691j, 0.4791981663 + 0.1000022692j],
        ],
    }
    for order, g in spectral.items():
        np.testing.assert_allclose(
            ft.grad(lambda v, order=order: fnp.linalg.norm(v, ord=order))(m), g, atol=1e-9
        )
