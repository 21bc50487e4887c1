"""functrace.numpy.linalg and functrace.lax.linalg beyond the op table.

* float32 in gives float32 values, tangents and gradients (float64 stays float64);
* the gradient conventions: ``norm`` at the zero vector, ``cholesky``/``eigh``
  gradients of exactly the triangle read (zero on the other one), values-only
  decompositions at repeated eigenvalues;
* errors: class and key phrases for non-square, mismatched, unsupported inputs;
* composite functions against finite differences (``check_grads``) and closed forms
  (a Gaussian log-likelihood through cholesky, log-det, eigenvalue derivatives);
* NumPy fast path, ``jit`` and ``vmap`` of the decompositions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace.jit import jit

L = fnp.linalg
RNG = np.random.default_rng(0)


def _gen(n: int = 3, batch: tuple[int, ...] = (), dtype: Any = np.float64) -> np.ndarray:
    a = RNG.uniform(-1, 1, batch + (n, n)) + 4 * np.eye(n)
    return a.astype(dtype)


def _spd(n: int = 3, batch: tuple[int, ...] = (), dtype: Any = np.float64) -> np.ndarray:
    a = RNG.uniform(-1, 1, batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + 3 * np.eye(n)).astype(dtype)


def _sym(n: int = 3, dtype: Any = np.float64) -> np.ndarray:
    a = RNG.uniform(-1, 1, (n, n))
    return ((a + a.T) / 4 + np.diag(4.0 * np.arange(n))).astype(dtype)


def _tall(m: int = 4, n: int = 3, dtype: Any = np.float64) -> np.ndarray:
    d = np.zeros((m, n))
    for i, v in enumerate((9.0, 6.0, 3.0)[: min(m, n)]):
        d[i, i] = v
    return (0.3 * RNG.uniform(-1, 1, (m, n)) + d).astype(dtype)


# ---------------------------------------------------------------------------
# dtypes: float32 stays float32 (values, tangents, gradients)
# ---------------------------------------------------------------------------

# name -> (function of one matrix returning one array, input builder)
FUNCS: dict[str, tuple[Any, Any]] = {
    "inv": (L.inv, _gen),
    "solve": (lambda a: L.solve(a, fnp.ones(3, dtype=a.dtype)), _gen),
    "det": (L.det, _gen),
    "slogdet": (lambda a: L.slogdet(a).logabsdet, _gen),
    "cholesky": (L.cholesky, _spd),
    "eigh": (lambda a: L.eigh(a).eigenvectors[:, 0] ** 2 + L.eigh(a).eigenvalues, _sym),
    "eigvalsh": (L.eigvalsh, _sym),
    "svd": (lambda a: L.svd(a, full_matrices=False).U[0] ** 2 + L.svd(a, False).S, _tall),
    "svd_s": (lambda a: L.svd(a, compute_uv=False), _tall),
    "qr": (lambda a: L.qr(a).R, _tall),
    "pinv": (L.pinv, _tall),
    "norm": (L.norm, _gen),
    "norm_nuc": (lambda a: L.norm(a, "nuc"), _tall),
    "norm_2": (lambda a: L.norm(a, 2), _tall),
    "norm_p": (lambda a: L.norm(a, 3, axis=0), _gen),
    "matrix_power": (lambda a: L.matrix_power(a, -3), _gen),
    "multi_dot": (lambda a: L.multi_dot([a, a.T, a]), _gen),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_of_values_tangents_and_gradients(name: str, dtype: Any) -> None:
    f, make = FUNCS[name]
    a = make(dtype=dtype)
    assert np.asarray(f(a)).dtype == dtype  # NumPy fast path
    out, t = ft.jvp(f, (a,), (np.ones_like(a),))
    assert np.asarray(out).dtype == dtype and np.asarray(t).dtype == dtype
    g = ft.grad(lambda a: fnp.sum(f(a)))(a)
    assert g.dtype == dtype and g.shape == a.shape
    assert np.all(np.isfinite(g))
    assert np.asarray(jit(f)(a)).dtype == dtype


def test_integer_inputs_compute_in_float64() -> None:
    a = np.array([[2, 1], [1, 3]])
    assert jit(L.inv)(a).dtype == np.float64
    assert jit(L.det)(a).dtype == np.float64
    np.testing.assert_allclose(jit(L.det)(a), np.linalg.det(a))
    assert jit(lambda a: L.norm(a))(a).dtype == np.float64
    # matrix_power keeps the integer dtype for n >= 0, as NumPy does
    np.testing.assert_array_equal(
        jit(lambda a: L.matrix_power(a, 3))(a), np.linalg.matrix_power(a, 3)
    )
    assert jit(lambda a: L.matrix_power(a, 3))(a).dtype == np.int64
    assert jit(lambda a: L.matrix_power(a, 0))(a).dtype == np.int64


def test_float32_gradient_of_composite_stays_float32() -> None:
    a = _spd(dtype=np.float32)

    def f(a: Any) -> Any:
        c = L.cholesky(a)
        return L.slogdet(c).logabsdet + L.norm(L.solve(a, c[:, 0]))

    g = ft.grad(f)(a)
    assert g.dtype == np.float32
    hv = ft.jvp(ft.grad(f), (a,), (np.ones_like(a),))[1]
    assert hv.dtype == np.float32


# ---------------------------------------------------------------------------
# Gradient conventions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [None, 2, 1, np.inf, -np.inf, 3, 1.5])
def test_norm_gradient_at_the_zero_vector_is_zero(ord: Any) -> None:
    x = np.zeros(4)
    g = ft.grad(lambda x: L.norm(x, ord))(x)
    np.testing.assert_array_equal(g, np.zeros(4))
    t = ft.jvp(lambda x: L.norm(x, ord), (x,), (np.ones(4),))[1]
    assert float(t) == 0.0
    if ord not in (1.5,):  # |x|**1.5 itself has an infinite second derivative at 0
        h = ft.hessian(lambda x: L.norm(x, ord))(x)
        np.testing.assert_array_equal(h, np.zeros((4, 4)))


def test_norm_gradient_at_zero_matrix_and_stacks() -> None:
    z = np.zeros((2, 3))
    np.testing.assert_array_equal(ft.grad(lambda x: L.norm(x, "fro"))(z), z)
    np.testing.assert_array_equal(ft.grad(lambda x: L.norm(x))(z), z)
    # per-row norms: only the zero row gets the zero subgradient
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    g = ft.grad(lambda x: fnp.sum(L.norm(x, axis=1)))(x)
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.6, 0.8]])
    g32 = ft.grad(lambda x: fnp.sum(L.norm(x, axis=1)))(x.astype(np.float32))
    assert g32.dtype == np.float32


def test_norm_gradient_away_from_zero_is_the_usual_one() -> None:
    x = np.array([3.0, -4.0, 12.0])
    np.testing.assert_allclose(ft.grad(L.norm)(x), x / 13.0)
    np.testing.assert_allclose(ft.grad(lambda x: L.norm(x, 1))(x), np.sign(x))
    np.testing.assert_allclose(ft.grad(lambda x: L.norm(x, np.inf))(x), [0, 0, 1])
    ft.check_grads(lambda x: L.norm(x, 3), (x,), order=2)


SYMMETRIC_INPUT_FUNCS = {
    "cholesky": lambda a: fnp.sum(L.cholesky(a) ** 2 * np.arange(9.0).reshape(3, 3)),
    "cholesky_upper": lambda a: fnp.sum(fnp.sin(L.cholesky(a, upper=True))),
    "eigh": lambda a: L.eigh(a).eigenvectors[0, 1] + L.eigh(a).eigenvalues[2],
    "eigh_upper": lambda a: L.eigh(a, UPLO="U").eigenvectors[2, 0],
    "eigvalsh": lambda a: fnp.sum(L.eigvalsh(a) ** 2 * np.array([1.0, 2.0, 3.0])),
}


def _fold(g: np.ndarray, lower: bool = True) -> np.ndarray:
    """The gradient of ``a -> h(S(a))``, ``S`` built from one triangle, given the
    symmetric gradient ``g`` of ``h``: doubled off the diagonal on the triangle read."""
    tri = np.tril if lower else np.triu
    return tri(2 * g) - np.diag(np.diag(g))


@pytest.mark.parametrize("name", sorted(SYMMETRIC_INPUT_FUNCS))
def test_triangle_gradients_exact_for_every_perturbation(name: str) -> None:
    f = SYMMETRIC_INPUT_FUNCS[name]
    a = _spd() + np.diag([0.0, 3.0, 6.0])  # distinct eigenvalues
    g = ft.grad(f)(a)
    upper_read = name.endswith("upper")
    np.testing.assert_array_equal(
        (np.tril if upper_read else np.triu)(g, -1 if upper_read else 1), 0
    )
    # directional derivatives along any t (the upper triangle is perturbed too), against
    # NumPy's values (the NumPy path)
    rng = np.random.default_rng(3)  # its own draws: the same whichever tests ran before
    t = rng.normal(size=(3, 3))
    eps = 1e-5
    fd = (f(a + eps * t) - f(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * t), fd, rtol=1e-6)
    np.testing.assert_allclose(ft.jvp(f, (a,), (t,))[1], fd, rtol=1e-6)
    # and to second order, at a non-symmetric point and through a symmetric construction
    ft.check_grads(f, (a + np.triu(rng.uniform(-0.3, 0.3, (3, 3)), 1),), order=2)
    ft.check_grads(
        lambda b: f(b @ b.T + np.diag([3.0, 6.0, 9.0])), (rng.normal(size=(3, 3)),), order=2
    )


def test_values_read_one_triangle_like_numpy() -> None:
    a = _spd() + np.triu(RNG.uniform(-0.5, 0.5, (3, 3)), 1)  # not symmetric
    np.testing.assert_allclose(jit(L.cholesky)(a), np.linalg.cholesky(a), rtol=1e-12)
    up = jit(lambda a: L.cholesky(a, upper=True))
    np.testing.assert_allclose(up(a), np.linalg.cholesky(a, upper=True), rtol=1e-12)
    w = jit(lambda a: L.eigh(a, UPLO="U").eigenvalues)(a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a, UPLO="U"), rtol=1e-12)
    np.testing.assert_allclose(jit(L.eigvalsh)(a), np.linalg.eigvalsh(a), rtol=1e-12)


def test_values_only_derivatives_at_repeated_values() -> None:
    # eigvalsh / svd(compute_uv=False) need no eigenvector derivative: finite at I.
    eye = np.eye(3)
    np.testing.assert_allclose(ft.grad(lambda a: fnp.sum(L.eigvalsh(a)))(eye), eye)
    np.testing.assert_allclose(ft.grad(lambda a: L.norm(a, "nuc"))(eye), eye)
    np.testing.assert_allclose(ft.grad(lambda a: L.slogdet(a).logabsdet)(eye), eye)


def test_eigenvalue_and_singular_value_derivatives_closed_form() -> None:
    a = _sym()
    w, v = np.linalg.eigh(a)
    for i in range(3):  # d w_i / dS = v_i v_i^T, S built from the lower triangle of A
        g = ft.grad(lambda a, i=i: L.eigvalsh(a)[i])(a)
        np.testing.assert_allclose(g, _fold(np.outer(v[:, i], v[:, i])), atol=1e-10)
    b = _tall()
    u, s, vt = np.linalg.svd(b, full_matrices=False)
    np.testing.assert_allclose(
        ft.grad(lambda b: L.norm(b, 2))(b), np.outer(u[:, 0], vt[0]), atol=1e-10
    )
    np.testing.assert_allclose(ft.grad(lambda b: L.norm(b, "nuc"))(b), u @ vt, atol=1e-10)


def test_det_and_logdet_gradients_closed_form() -> None:
    a = _gen()
    inv_t = np.linalg.inv(a).T
    np.testing.assert_allclose(ft.grad(L.det)(a), np.linalg.det(a) * inv_t, rtol=1e-10)
    np.testing.assert_allclose(ft.grad(lambda a: L.slogdet(a).logabsdet)(a), inv_t, rtol=1e-10)
    np.testing.assert_array_equal(ft.grad(lambda a: L.slogdet(a).sign)(a), 0)


# ---------------------------------------------------------------------------
# Composite functions against finite differences
# ---------------------------------------------------------------------------


def _gaussian_logpdf(x: Any, mu: Any, a: Any) -> Any:
    # log N(x; mu, S) with S = a a^T + I, through its Cholesky factor
    n = x.shape[-1]
    cov = fnp.matmul(a, a.T) + np.eye(n)
    chol = L.cholesky(cov)
    z = lax.triangular_solve(chol, fnp.reshape(x - mu, (n, 1)), lower=True)
    half_logdet = fnp.sum(fnp.log(fnp.sum(chol * np.eye(n), axis=0)))
    return -0.5 * fnp.sum(z * z) - half_logdet - 0.5 * n * np.log(2 * np.pi)


def test_gaussian_log_likelihood_with_cholesky() -> None:
    x, mu, a = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=(3, 3))
    expected = scipy.stats.multivariate_normal(mu, a @ a.T + np.eye(3)).logpdf(x)
    np.testing.assert_allclose(_gaussian_logpdf(x, mu, a), expected, rtol=1e-12)
    np.testing.assert_allclose(jit(_gaussian_logpdf)(x, mu, a), expected, rtol=1e-12)
    ft.check_grads(_gaussian_logpdf, (x, mu, a), order=2)
    # the gradient in mu is S^-1 (x - mu)
    cov = a @ a.T + np.eye(3)
    np.testing.assert_allclose(
        ft.grad(_gaussian_logpdf, argnums=1)(x, mu, a), np.linalg.solve(cov, x - mu), rtol=1e-10
    )


def test_composites_check_grads() -> None:
    a, b = _gen(), RNG.normal(size=(3, 2))
    c = RNG.normal(size=(3, 3))

    def spd(c: Any) -> Any:
        return c @ c.T + 3 * np.eye(3)

    ft.check_grads(lambda a, b: fnp.sum(fnp.sin(L.solve(a, b))), (a, b), order=2)
    ft.check_grads(lambda a: fnp.sum(L.inv(a) * (b @ b.T)), (a,), order=2)
    ft.check_grads(
        lambda c: L.slogdet(spd(c)).logabsdet * fnp.sum(fnp.log(L.eigvalsh(spd(c)))), (c,), order=2
    )
    ft.check_grads(lambda c: fnp.sum(L.cholesky(spd(c)) @ L.inv(spd(c))), (c,), order=2)
    ft.check_grads(
        lambda t: L.norm(L.pinv(t) @ t - np.eye(3)) + fnp.sum(L.pinv(t)), (_tall(),), order=1
    )
    ft.check_grads(lambda a: L.det(L.matrix_power(a, -2)) + fnp.sum(L.qr(a).Q), (a,), order=1)


def test_logdet_identities_hold_under_grad() -> None:
    # at a symmetric point all three agree, gradients and Hessians alike (slogdet reads
    # the whole matrix, cholesky and eigh its lower triangle: see _fold)
    s = _spd()

    def via_slogdet(s: Any) -> Any:
        return L.slogdet(s).logabsdet

    def via_cholesky(s: Any) -> Any:
        return 2 * fnp.sum(fnp.log(fnp.sum(L.cholesky(s) * np.eye(3), axis=0)))

    def via_eigh(s: Any) -> Any:
        return fnp.sum(fnp.log(L.eigh(s).eigenvalues))

    ref = ft.grad(via_slogdet)(s)
    np.testing.assert_allclose(ref, np.linalg.inv(s), rtol=1e-10)
    np.testing.assert_allclose(ft.grad(via_cholesky)(s), _fold(ref), rtol=1e-10)
    np.testing.assert_allclose(ft.grad(via_eigh)(s), _fold(ref), rtol=1e-10)
    t = RNG.normal(size=(3, 3))
    t = t + t.T  # Hessian-vector products along a symmetric direction
    hv = ft.jvp(ft.grad(via_slogdet), (s,), (t,))[1]
    hv_tri = _fold(hv)
    np.testing.assert_allclose(ft.jvp(ft.grad(via_cholesky), (s,), (t,))[1], hv_tri, atol=1e-10)
    np.testing.assert_allclose(ft.jvp(ft.grad(via_eigh), (s,), (t,))[1], hv_tri, atol=1e-10)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        L.inv,
        L.det,
        L.slogdet,
        L.cholesky,
        L.eigh,
        L.eigvalsh,
        lambda a: L.solve(a, np.ones(3)),
        lambda a: L.matrix_power(a, 2),
    ],
)
def test_non_square_raises(fn: Any) -> None:
    a = np.ones((3, 4))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        fn(a)  # NumPy's own error
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jit(fn)(a)
    with pytest.raises(ValueError, match=r"square.*\(3, 4\)"):
        ft.grad(lambda a: fnp.sum(fn(a)[0]))(a)


def test_lax_shape_and_dtype_errors() -> None:
    with pytest.raises(ValueError, match=r"cholesky: expected square matrices.*\(2, 3\)"):
        lax.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"svd: expected a matrix.*\(3,\)"):
        lax.svd(np.ones(3))
    with pytest.raises(
        TypeError,
        match="cholesky: expected a float32, float64, complex64 or complex128 operand, got int64",
    ):
        lax.cholesky(np.eye(2, dtype=np.int64))
    with pytest.raises(
        ValueError,
        match=r"solve: expected b of shape \(\.\.\., 3, k\).*"
        r"\(3, 3\) \(a\) and \(4, 1\) \(b\)",
    ):
        lax.solve(np.eye(3), np.ones((4, 1)))
    with pytest.raises(ValueError, match="triangular_solve: expected b"):
        ft.make_jaxpr(lambda a, b: lax.triangular_solve(a, b))(np.eye(3), np.ones(3))
    with pytest.raises(TypeError, match="equal dtype"):
        lax.solve(np.eye(3), np.ones((3, 1), np.float32))


def test_solve_mismatched_shapes() -> None:
    a = _gen()
    for b in (np.ones(4), np.ones((4, 2)), np.ones((2, 4, 1))):
        with pytest.raises(ValueError):
            L.solve(a, b)  # NumPy's error
        with pytest.raises(
            ValueError,
            match=rf"solve: expected b of shape \(3,\) or "
            rf"\(\.\.\., 3, K\).*{b.shape}",
        ):
            jit(L.solve)(a, b)
    with pytest.raises(ValueError, match="solve: expected shapes that broadcast"):
        jit(L.solve)(_gen(batch=(2,)), np.ones((3, 3, 1)))
    # NumPy 2: a stack of vectors needs a trailing axis
    with pytest.raises(ValueError, match=r"b\[\.\.\., None\]"):
        jit(L.solve)(_gen(batch=(2,)), np.ones((2, 3)))


def test_unsupported_modes_and_dtypes() -> None:
    t = _tall()
    # NumPy's default full_matrices=True (non-square) and mode="complete" compute under
    # transforms; their extra columns are not unique, so they have no derivative (JAX's)
    for got, want in zip(jit(L.svd)(t), np.linalg.svd(t)):
        np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-10, atol=1e-12)
    r = jit(lambda t: L.qr(t, mode="complete").R)(t)
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(t, "complete").R), atol=1e-12)
    with pytest.raises(NotImplementedError, match="svd: expected full_matrices=False"):
        ft.grad(lambda t: fnp.sum(L.svd(t).U))(t)
    with pytest.raises(NotImplementedError, match="qr: expected full_matrices=False"):
        ft.grad(lambda t: fnp.sum(L.qr(t, mode="complete").Q))(t)
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        jit(lambda t: L.qr(t, mode="raw"))(t)
    with pytest.raises(ValueError, match="qr: expected mode"):
        jit(lambda t: L.qr(t, mode="full"))(t)
    with pytest.raises(ValueError, match="UPLO"):
        jit(lambda a: L.eigh(a, UPLO="X"))(_sym())
    with pytest.raises(TypeError, match="float16"):
        jit(L.inv)(np.eye(2, dtype=np.float16))
    with pytest.raises(NotImplementedError, match="tensorinv: expected real input"):
        jit(lambda a: L.tensorinv(a, ind=1))(np.eye(2, dtype=np.complex128))
    with pytest.raises(TypeError, match="integer exponent"):
        jit(lambda a: L.matrix_power(a, 1.5))(_gen())
    with pytest.raises(ValueError, match="norm: expected a numeric ord for vectors"):
        jit(lambda x: L.norm(x, "fro"))(np.ones(3))
    with pytest.raises(ValueError, match="norm: expected a matrix ord"):
        jit(lambda x: L.norm(x, 3, axis=(0, 1)))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="norm: expected 1 or 2 axes"):
        jit(lambda x: L.norm(x, 2))(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="multi_dot: expected at least two arrays"):
        jit(lambda x: L.multi_dot([x]))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="multi_dot: expected aligned shapes"):
        jit(lambda x, y: L.multi_dot([x, y, x]))(np.ones((2, 3)), np.ones((2, 3)))


# ---------------------------------------------------------------------------
# NumPy fast path, square full_matrices, jit, vmap
# ---------------------------------------------------------------------------


def test_numpy_inputs_give_numpy_results() -> None:
    s = _spd()
    assert type(L.eigh(s)) is type(np.linalg.eigh(s))
    assert type(L.slogdet(s)) is type(np.linalg.slogdet(s))
    assert type(L.det(s)) is np.float64
    t = _tall()
    np.testing.assert_array_equal(L.pinv(t), np.linalg.pinv(t))


def test_traced_results_are_named_tuples() -> None:
    s = _spd()

    def f(s: Any) -> Any:
        res = L.eigh(s)
        assert isinstance(res, L.EighResult)
        q = L.qr(s)
        assert isinstance(q, L.QRResult)
        u = L.svd(s)  # square: full_matrices=True is the reduced SVD
        assert isinstance(u, L.SVDResult)
        sl = L.slogdet(s)
        assert isinstance(sl, L.SlogdetResult)
        return res.eigenvalues[0] + q.R[0, 0] + u.S[0] + sl.logabsdet

    ft.grad(f)(s)


@pytest.mark.parametrize(
    "name", ["cholesky", "solve", "eigh", "svd", "qr", "det", "slogdet", "triangular_solve"]
)
def test_jit_matches_eager_and_grad(name: str) -> None:
    a, t = _spd(batch=(2,)), _tall()
    fns = {
        "cholesky": (lambda a: L.cholesky(a), a),
        "solve": (lambda a: L.solve(a, a[..., :1]), a),
        "eigh": (lambda a: L.eigh(a).eigenvalues, a),
        "svd": (lambda t: L.svd(t, full_matrices=False).S, t),
        "qr": (lambda t: L.qr(t).R, t),
        "det": (L.det, a),
        "slogdet": (lambda a: L.slogdet(a).logabsdet, a),
        "triangular_solve": (
            lambda a: lax.triangular_solve(a, a, lower=False, transpose_a=True),
            a,
        ),
    }
    f, x = fns[name]
    np.testing.assert_allclose(jit(f)(x), f(x), rtol=1e-10)
    g = ft.grad(lambda x: fnp.sum(f(x)))
    np.testing.assert_allclose(jit(g)(x), g(x), rtol=1e-10, atol=1e-12)


def test_vmap_over_matrices_and_right_hand_sides() -> None:
    a, bs = _gen(), RNG.normal(size=(5, 3))
    out = ft.vmap(L.solve, in_axes=(None, 0))(a, bs)
    np.testing.assert_allclose(out, np.linalg.solve(a, bs.T).T, rtol=1e-12)
    stack = _spd(batch=(4,))
    np.testing.assert_allclose(ft.vmap(L.cholesky)(stack), np.linalg.cholesky(stack), rtol=1e-12)
    # per-example gradients of log det through a vmap
    g = ft.vmap(ft.grad(lambda s: L.slogdet(s).logabsdet))(stack)
    np.testing.assert_allclose(g, np.linalg.inv(stack), rtol=1e-10)
    # vmap over an inner batch axis of a stack
    w = ft.vmap(lambda s: L.eigvalsh(s), in_axes=1)(np.stack([stack, stack], axis=1))
    np.testing.assert_allclose(w, np.stack([np.linalg.eigvalsh(stack)] * 2), rtol=1e-10)


def test_singular_inputs_give_nan_under_transforms_not_an_error() -> None:
    # As in JAX: a factorization of a singular (or indefinite) matrix under a transform
    # is NaN, so that evaluating an untaken branch never raises.
    a = np.stack([np.eye(2), np.zeros((2, 2))])
    x = ft.vmap(lambda a: fnp.linalg.solve(a, np.ones(2)))(a)
    np.testing.assert_array_equal(x[0], [1.0, 1.0])
    assert np.isnan(x[1]).all()
    c = ft.jit(fnp.linalg.cholesky)(-np.eye(2))
    assert np.isnan(c).all()
    with pytest.raises(np.linalg.LinAlgError):  # plain NumPy calls keep NumPy's error
        fnp.linalg.solve(np.zeros((2, 2)), np.ones(2))


def test_vmap_grad_of_cond_with_a_factorization_in_each_branch() -> None:
    # Found by the composition fuzzer: under vmap with a batched predicate both branches
    # run on the whole batch, the untaken one on zero residuals; det's transpose solves
    # with them and raised LinAlgError.
    m = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.0, 0.7, 1.2]])

    def f(x):
        a = m + 0.01 * fnp.tanh(x)
        return lax.cond(x > 0, fnp.linalg.det, lambda a: fnp.linalg.det(a) * 0.5, a)

    xs = np.array([0.3, -0.2])
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(xs), [ft.grad(f)(x) for x in xs], rtol=1e-12)
