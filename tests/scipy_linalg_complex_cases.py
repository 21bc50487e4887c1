"""Cases of tests/test_scipy_linalg_complex.py: ``scipy.linalg`` on complex matrices.
Each case function takes the library (``functrace`` or ``jax``) and returns named
arrays; tests/fixtures/scipy_linalg_complex_jax.npz holds what JAX 0.10.2
(``jax_enable_x64`` on, CPU) returned for them, under ``<case>/<name>``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import linalg_complex_cases as lc

SIZES = (2, 3)
DTYPES = ("complex128", "complex64")


def _c(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


def inputs(n: int, dt: str) -> dict[str, np.ndarray]:
    """A well-conditioned matrix ``a``, a Hermitian positive-definite ``h``, right-hand
    sides ``b``, a direction ``e`` (for ``expm_frechet``), tangents and cotangents."""
    rng = np.random.default_rng(200 + n)
    a = _c(rng, (n, n), dt) * 0.5 + 2 * np.eye(n, dtype=dt)
    m = _c(rng, (n, n), dt)
    return {
        "a": a,
        "h": (m @ m.conj().T + n * np.eye(n)).astype(dt),
        "b": _c(rng, (n, 2), dt),
        "e": _c(rng, (n, n), dt),
        "t": _c(rng, (n, n), dt),
        "t2": _c(rng, (n, n), dt),
        "ct": _c(rng, (n, n), dt),
    }


def hermitian_of(jnp: Any, a: Any, lower: bool) -> Any:
    """The Hermitian matrix of ``a``'s lower (upper) triangle with a real diagonal: what
    functrace's triangle-reading functions see, and a Hermitian input for JAX's."""
    strict = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    return strict + jnp.conj(strict).T + jnp.diag(jnp.real(jnp.diag(a))).astype(a.dtype)


def symmetric_of_upper(jnp: Any, a: Any) -> Any:
    return jnp.triu(a) + jnp.triu(a, 1).T


def functions(lib: Any, x: dict[str, np.ndarray]) -> dict[str, tuple[Callable[..., Any], str]]:
    """name -> (function of one matrix, which input it takes). Where functrace reads one
    triangle and JAX all of ``a`` (``cholesky`` and the ``'pos'``, ``'sym'`` and
    ``'her'`` solves), the function composes the matrix of that triangle first."""
    sl = lib.scipy.linalg
    jnp = lib.numpy
    tri = lib.lax.linalg.triangular_solve
    b, e = x["b"], x["e"]
    kw = {"lower": True, "transpose_a": True, "conjugate_a": True, "unit_diagonal": True}

    def her(a: Any, lower: bool = True) -> Any:
        return hermitian_of(jnp, a, lower)

    return {
        "solve_triangular_N_lower": (lambda a: sl.solve_triangular(a, b, lower=True), "a"),
        "solve_triangular_T_upper": (lambda a: sl.solve_triangular(a, b, trans="T"), "a"),
        "solve_triangular_C_lower_unit": (
            lambda a: sl.solve_triangular(a, b, trans=2, lower=True, unit_diagonal=True),
            "a",
        ),
        "solve_triangular_C_b": (lambda bb: sl.solve_triangular(x["a"], bb, trans="C"), "ct"),
        "lax_triangular_solve_right_C_unit": (
            lambda a: tri(a, b.T, left_side=False, **kw),
            "a",
        ),
        "lax_triangular_solve_left_conj": (
            lambda a: tri(a, b, left_side=True, lower=False, conjugate_a=True),
            "a",
        ),
        "cholesky_lower": (lambda a: sl.cholesky(her(a), lower=True), "h"),
        "cholesky_upper": (lambda a: sl.cholesky(her(a, False)), "h"),
        "cho_solve": (lambda a: sl.cho_solve(sl.cho_factor(her(a)), b), "h"),
        "cho_solve_lower_b": (
            lambda bb: sl.cho_solve(sl.cho_factor(x["h"], lower=True), bb),
            "ct",
        ),
        "lu_l": (lambda a: sl.lu(a)[1], "a"),
        "lu_u": (lambda a: sl.lu(a)[2], "a"),
        "lu_factor": (lambda a: sl.lu_factor(a)[0], "a"),
        "lu_solve_N": (lambda a: sl.lu_solve(sl.lu_factor(a), b), "a"),
        "lu_solve_T": (lambda a: sl.lu_solve(sl.lu_factor(a), b, trans=1), "a"),
        "lu_solve_C": (lambda a: sl.lu_solve(sl.lu_factor(a), b, trans=2), "a"),
        "lu_solve_C_b": (lambda bb: sl.lu_solve(sl.lu_factor(x["a"]), bb, trans=2), "ct"),
        "solve_gen": (lambda a: sl.solve(a, b), "a"),
        "solve_pos": (lambda a: sl.solve(her(a), b, assume_a="pos"), "h"),
        "solve_her": (lambda a: sl.solve(her(a, False), b, assume_a="her"), "a"),
        "solve_sym": (lambda a: sl.solve(symmetric_of_upper(jnp, a), b, assume_a="sym"), "a"),
        "inv": (sl.inv, "a"),
        "det": (sl.det, "a"),
        "expm": (sl.expm, "a"),
        "expm_scaled": (lambda a: sl.expm(4 * a), "a"),  # 1-norm > 5.4: squarings
        "expm_frechet": (lambda a: sl.expm_frechet(a, e, compute_expm=False), "a"),
        "polar_u": (lambda a: sl.polar(a, method="svd")[0], "a"),
        "polar_p": (lambda a: sl.polar(a, method="svd")[1], "a"),
    }


def _cotangent(ct: np.ndarray, y: Any) -> np.ndarray:
    """The leading block of ``ct`` of ``y``'s shape (its corner for a scalar)."""
    return ct[tuple(slice(0, s) for s in np.shape(y))] if np.ndim(y) else ct[0, 0]


def case(lib: Any, n: int, dt: str) -> dict[str, np.ndarray]:
    """For each function: value, JVP (tangent t), VJP (cotangent ct, cut to the output's
    shape), the gradient of ``real(sum(f(x) * ct))`` and its JVP (tangent t2: second
    order); and the values of ``sqrtm``, ``hessenberg`` (``h`` and ``q``),
    ``solve_sylvester`` and ``eigh_tridiagonal`` (eigenvalues of complex ``e``)."""
    x = inputs(n, dt)
    sl = lib.scipy.linalg
    out = lc.derivatives(lib, functions(lib, x), x, _cotangent)
    a = x["a"]
    out["sqrtm/value"] = np.asarray(sl.sqrtm(a))
    h, q = sl.hessenberg(a, calc_q=True)
    out["hessenberg_h/value"], out["hessenberg_q/value"] = np.asarray(h), np.asarray(q)
    out["solve_sylvester/value"] = np.asarray(sl.solve_sylvester(a, x["h"], x["e"]))
    diag, off = np.real(np.diag(a)).astype(dt), x["e"][0, : n - 1]
    w = sl.eigh_tridiagonal(diag, off, eigvals_only=True)
    out["eigh_tridiagonal/value"] = np.asarray(w)
    return out


CASES = {f"{dt}_n{n}": (n, dt) for dt in DTYPES for n in SIZES}
