"""Derivatives of functrace.numpy.linalg's inv, solve, det, slogdet and cholesky, and of
the spectral functions (eigh, eigvalsh, svd, qr, pinv, lstsq, the spectral norms, cond,
vdot), on complex matrices, against JAX's values (tests/fixtures/linalg_complex_jax.npz,
recorded from the cases in tests/linalg_complex_cases.py), plus vmap, jit and
check_grads."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import functrace
import functrace.numpy as fnp
from functrace.test_util import check_grads

sys.path.insert(0, str(Path(__file__).parent))
import linalg_complex_cases as lc  # noqa: E402

_JAX = np.load(Path(__file__).parent / "fixtures" / "linalg_complex_jax.npz")
_TOL = {"complex128": 1e-9, "complex64": 2e-3}


@pytest.fixture(scope="module", params=sorted(lc.CASES))
def recorded(request: pytest.FixtureRequest) -> tuple[str, dict[str, np.ndarray], float]:
    key = request.param
    n, dt = lc.CASES[key]
    return key, lc.case(functrace, n, dt), _TOL[dt]


def test_case_names_match_the_fixture(recorded: tuple[str, dict, float]) -> None:
    key, ours, _ = recorded
    assert sorted(ours) == sorted(k[len(key) + 1 :] for k in _JAX.files if k.startswith(key + "/"))


@pytest.mark.parametrize(
    "fname", [*lc.functions(functrace, lc.inputs(2, "complex128")), "absdet", "absdet2"]
)
def test_matches_jax(recorded: tuple[str, dict, float], fname: str) -> None:
    # every recorded quantity of one function: value, jvp, vjp, grad, grad_jvp
    key, ours, tol = recorded
    names = [name for name in ours if name.startswith(fname + "/")]
    assert names, fname
    for name in names:
        want = _JAX[f"{key}/{name}"]
        got = ours[name]
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        scale = max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=f"{key}/{name}")


def _stack(dt: str) -> np.ndarray:
    return np.stack([lc.inputs(n, dt)["a"][:2, :2] for n in (2, 4)])


@pytest.mark.parametrize("dt", lc.DTYPES)
def test_vmap_of_grad_matches_loop(dt: str) -> None:
    a = _stack(dt)
    c = lc.inputs(2, dt)["ct"]

    def loss(x):
        return (
            fnp.real(fnp.sum(fnp.linalg.inv(x) * c))
            + fnp.real(fnp.linalg.det(x) * c[0, 0])
            + fnp.linalg.slogdet(x)[1]
            + fnp.real(fnp.sum(fnp.linalg.solve(x, c)))
        )

    g = functrace.grad(loss)
    batched = functrace.vmap(g)(a)
    loop = np.stack([g(x) for x in a])
    np.testing.assert_allclose(batched, loop, rtol=_TOL[dt], atol=_TOL[dt])
    assert batched.dtype == np.dtype(dt)
    np.testing.assert_allclose(functrace.jit(g)(a[0]), g(a[0]), rtol=_TOL[dt], atol=_TOL[dt])
    np.testing.assert_allclose(
        functrace.jit(functrace.vmap(g))(a), loop, rtol=_TOL[dt], atol=_TOL[dt]
    )


@pytest.mark.parametrize("dt", lc.DTYPES)
def test_spectral_vmap_of_grad_matches_loop(dt: str) -> None:
    a = _stack(dt)
    spectral = lc.spectral_functions(functrace, lc.inputs(2, dt))
    names = ("eigh_vdv", "eigh_absv", "svd_udv", "svd_udv_wide", "qr_q", "qr_r", "pinv_tall",
             "lstsq_tall", "norm_nuc", "cond", "vdot")  # fmt: skip

    def loss(x):
        return sum(fnp.real(fnp.sum(spectral[name](x) * (1 - 2j))) for name in names)

    g = functrace.grad(loss)
    loop = np.stack([g(x) for x in a])
    tol = _TOL[dt] * 10
    batched = functrace.vmap(g)(a)  # jit: the op-table rows (small programs compile fast)
    assert batched.dtype == np.dtype(dt)
    np.testing.assert_allclose(batched, loop, rtol=tol, atol=tol)


def test_spectral_values_and_dtypes_under_jit_and_vmap() -> None:
    x = lc.inputs(4, "complex64")
    a, h = x["a"], x["h"]
    w, v = functrace.jit(fnp.linalg.eigh)(h)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=1e-5)
    s = functrace.vmap(lambda m: fnp.linalg.svd(m, compute_uv=False))(np.stack([a, 2 * a]))
    assert s.dtype == np.float32
    np.testing.assert_allclose(s[1], 2 * np.linalg.svd(a, compute_uv=False), rtol=1e-5)
    q, r = functrace.vmap(fnp.linalg.qr)(a[None])
    np.testing.assert_allclose(q[0] @ r[0], a, rtol=1e-5, atol=1e-5)
    assert np.abs(np.diag(r[0]).imag).max() == 0  # LAPACK's real diagonal
    _, res, rank, sv = functrace.vmap(fnp.linalg.lstsq)(a[None, :, :2], a[None, :, 2])
    assert res.dtype == sv.dtype == np.float32 and rank.tolist() == [2]
    low_rank = np.stack([a, np.outer(a[0], a[1])])
    np.testing.assert_array_equal(functrace.jit(fnp.linalg.matrix_rank)(low_rank), [4, 1])
    got = functrace.vmap(fnp.vdot)(a[None], h[None])
    np.testing.assert_allclose(got, [np.vdot(a, h)], rtol=1e-5)


def test_spectral_errors_name_the_function() -> None:
    import functrace.lax as lax

    with pytest.raises(TypeError, match="qr: expected a float32, float64, complex64 or comp"):
        lax.qr(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"eigh: expected square matrices .* shape \(2, 3\)"):
        lax.eigh(np.ones((2, 3), np.complex128))
    with pytest.raises(np.linalg.LinAlgError, match=r"eigvalsh: expected square matrices"):
        functrace.jit(fnp.linalg.eigvalsh)(np.ones((2, 3), np.complex64))
    with pytest.raises(ValueError, match=r"svd: expected a matrix .* got shape \(3,\)"):
        lax.svd(np.ones(3, np.complex128))


@pytest.mark.parametrize("dt", lc.DTYPES)
def test_cholesky_vmap_jit_and_upper(dt: str) -> None:
    h = np.stack([lc.inputs(2, dt)["h"], lc.inputs(2, dt)["h"] * 2])
    c = lc.inputs(2, dt)["ct"]

    def loss(x):
        return fnp.real(fnp.sum(fnp.linalg.cholesky(x) * c))

    g = functrace.grad(loss)
    loop = np.stack([g(x) for x in h])
    np.testing.assert_allclose(functrace.vmap(g)(h), loop, rtol=_TOL[dt], atol=_TOL[dt])
    np.testing.assert_allclose(functrace.jit(g)(h[0]), loop[0], rtol=_TOL[dt], atol=_TOL[dt])
    # upper=True reads the upper triangle: U = L^H of the Hermitian matrix it gives
    u = fnp.linalg.cholesky(functrace.numpy.asarray(h[0]), upper=True)
    np.testing.assert_allclose(u, np.linalg.cholesky(h[0], upper=True), rtol=_TOL[dt])
    traced_u = functrace.jit(lambda x: fnp.linalg.cholesky(x, upper=True))(h[0])
    np.testing.assert_allclose(traced_u, np.linalg.cholesky(h[0], upper=True), rtol=_TOL[dt])
    gu = functrace.grad(lambda x: fnp.real(fnp.sum(fnp.linalg.cholesky(x, upper=True) * c)))
    gl = functrace.grad(
        lambda x: fnp.real(fnp.sum(fnp.conj(fnp.linalg.cholesky(fnp.conj(x.T))).T * c))
    )
    np.testing.assert_allclose(gu(h[0]), gl(h[0]), rtol=_TOL[dt], atol=_TOL[dt])


def test_eager_complex_calls_keep_numpys_values() -> None:
    x = lc.inputs(4, "complex128")
    a, h, b = x["a"], x["h"], x["b"]
    np.testing.assert_allclose(fnp.linalg.inv(a), np.linalg.inv(a))
    np.testing.assert_allclose(fnp.linalg.solve(a, b), np.linalg.solve(a, b))
    np.testing.assert_allclose(fnp.linalg.det(a), np.linalg.det(a))
    np.testing.assert_allclose(fnp.linalg.cholesky(h), np.linalg.cholesky(h))
    s, ld = functrace.jit(fnp.linalg.slogdet)(a)
    assert s.dtype == np.complex128 and ld.dtype == np.float64
    np.testing.assert_allclose([s, ld], list(np.linalg.slogdet(a)))


@pytest.mark.parametrize(
    "f",
    [
        fnp.linalg.inv,
        fnp.linalg.det,
        lambda a: fnp.linalg.slogdet(a)[0],
        lambda a: fnp.linalg.slogdet(a)[1],
        lambda a: fnp.linalg.solve(a, a[..., :1] * 2),
    ],
)
def test_check_grads_smoke(f) -> None:
    # NOTE: check_grads draws real tangent directions and drops imaginary parts of its
    # inner products, so on complex input it checks only part of the derivative; the
    # comparisons with JAX above are the real test.
    a = np.stack([lc.inputs(n, "complex128")["a"][:2, :2] for n in (2, 4)])
    with pytest.warns(np.exceptions.ComplexWarning):
        check_grads(f, (a,), order=2, modes=("fwd", "rev"))


def test_still_not_differentiable_raise_clearly() -> None:
    a = lc.inputs(2, "complex128")["a"]
    for name, f in (
        ("tensorinv", lambda x: fnp.linalg.tensorinv(x, ind=1)),
        ("tensorsolve", lambda x: fnp.linalg.tensorsolve(x, x[:, 0])),
    ):
        with pytest.raises(
            NotImplementedError, match=f"got complex128. Complex linear algebra .* for {name}"
        ):
            functrace.jvp(f, (a,), (a,))
