"""Cases of tests/test_linalg_complex.py: derivatives of the dense linear algebra on
complex matrices. Each case function takes the library (``functrace`` or ``jax``) and
returns named arrays; tests/fixtures/linalg_complex_jax.npz holds what JAX 0.10.2
(``jax_enable_x64`` on, CPU) returned for them, under ``<case>/<name>``.

Eigenvectors and singular vectors are unique up to a phase per column, so the cases
differentiate functions that do not depend on it (``|v|``, ``v diag(c) v^H``,
``U diag(c) V^H``); ``q`` and ``r`` of ``qr`` are unique (``r`` has a real diagonal) and
are compared directly. Rectangular matrices are slices of the square input (its first
``n - 1`` columns or rows), so every case takes the same square tangents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

SIZES = (2, 4)
DTYPES = ("complex128", "complex64")


def _c(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


def inputs(n: int, dt: str) -> dict[str, np.ndarray]:
    """A well-conditioned matrix, a Hermitian positive-definite one, a right-hand side,
    tangents and cotangents (complex), all of dtype ``dt``."""
    rng = np.random.default_rng(100 + n)
    a = _c(rng, (n, n), dt) + 3 * np.eye(n, dtype=dt)
    m = _c(rng, (n, n), dt)
    h = (m @ m.conj().T + n * np.eye(n)).astype(dt)
    return {
        "a": a,
        "h": h,
        "b": _c(rng, (n, 2), dt),
        "t": _c(rng, (n, n), dt),
        "t2": _c(rng, (n, n), dt),
        "ct": _c(rng, (n, n), dt),
    }


def hermitian_of_lower(jnp: Any, a: Any) -> Any:
    """The Hermitian matrix cholesky reads from ``a``'s lower triangle (real diagonal)."""
    low = jnp.tril(a, -1)
    return low + jnp.conj(low).T + jnp.diag(jnp.real(jnp.diag(a))).astype(a.dtype)


def hermitian_of_upper(jnp: Any, a: Any) -> Any:
    """The Hermitian matrix ``eigh(..., UPLO='U')`` reads from ``a``'s upper triangle."""
    return hermitian_of_lower(jnp, jnp.conj(a).T)


def _weights(jnp: Any, v: Any) -> Any:
    """``1, 2, ..., k`` for the ``k`` columns of ``v``, in its real dtype."""
    k = v.shape[-1]
    return jnp.arange(1, k + 1).astype(jnp.real(v).dtype)


def spectral_functions(lib: Any, x: dict[str, np.ndarray]) -> dict[str, Callable[..., Any]]:
    """The decompositions built on eigh, svd and qr: name -> function of one square
    matrix (input ``a``; ``eigh*`` read the Hermitian matrix of one triangle of it)."""
    la = lib.numpy.linalg
    jnp = lib.numpy
    b, ct = x["b"], x["ct"]

    def tall(a: Any) -> Any:
        return a[:, :-1]

    def wide(a: Any) -> Any:
        return a[:-1, :]

    def eigh_weighted(a: Any, upper: bool = False) -> Any:
        h = hermitian_of_upper(jnp, a) if upper else hermitian_of_lower(jnp, a)
        v = la.eigh(h, UPLO="U" if upper else "L")[1]
        return (v * _weights(jnp, v)) @ jnp.conj(v).T

    def svd_weighted(a: Any) -> Any:
        u, s, vh = la.svd(a, full_matrices=False)
        return (u * _weights(jnp, u)) @ vh

    return {
        "eigh_w": lambda a: la.eigh(hermitian_of_lower(jnp, a))[0],
        "eigh_vdv": eigh_weighted,
        "eigh_upper_vdv": lambda a: eigh_weighted(a, upper=True),
        "eigh_absv": lambda a: jnp.abs(la.eigh(hermitian_of_lower(jnp, a))[1]),
        "eigvalsh": lambda a: la.eigvalsh(hermitian_of_lower(jnp, a)),
        "svd_s": lambda a: la.svd(a, compute_uv=False),
        "svd_udv": svd_weighted,
        "svd_udv_tall": lambda a: svd_weighted(tall(a)),
        "svd_udv_wide": lambda a: svd_weighted(wide(a)),
        "svd_absu": lambda a: jnp.abs(la.svd(a)[0]),
        "qr_q": lambda a: la.qr(a)[0],
        "qr_r": lambda a: la.qr(a)[1],
        "qr_tall_q": lambda a: la.qr(tall(a))[0],
        "qr_wide_r": lambda a: la.qr(wide(a))[1],
        "pinv_tall": lambda a: la.pinv(tall(a)),
        "lstsq_tall": lambda a: la.lstsq(tall(a), b)[0],
        "lstsq_wide": lambda a: la.lstsq(wide(a), b[:-1])[0],
        "norm_2": lambda a: la.norm(a, 2),
        "norm_m2": lambda a: la.norm(a, -2),
        "norm_nuc": lambda a: la.norm(a, "nuc"),
        "cond": la.cond,
        "vdot": lambda a: jnp.vdot(a, a * ct),
    }


def functions(lib: Any, x: dict[str, np.ndarray]) -> dict[str, tuple[Callable[..., Any], str]]:
    """name -> (function of one matrix, which input it takes). JAX's ``cholesky`` and
    ``eigh`` read ``(a + a^H) / 2`` and functrace's one triangle; on the Hermitian
    matrix built from that triangle both compute the same function, whose derivatives
    are compared."""
    la = lib.numpy.linalg
    jnp = lib.numpy
    b = x["b"]
    return {
        "inv": (la.inv, "a"),
        "solve": (lambda a: la.solve(a, b), "a"),
        "solve_b": (lambda bb: la.solve(x["a"], bb), "ct"),
        "det": (la.det, "a"),
        "slogdet_sign": (lambda a: la.slogdet(a)[0], "a"),
        "slogdet_logabsdet": (lambda a: la.slogdet(a)[1], "a"),
        "cholesky": (lambda a: la.cholesky(hermitian_of_lower(jnp, a)), "h"),
    } | {name: (f, "a") for name, f in spectral_functions(lib, x).items()}


def _leading_block(ct: np.ndarray, y: Any) -> np.ndarray:
    """The leading block of ``ct`` of ``y``'s shape (its first row for a vector), real
    for a real ``y``."""
    block = ct[(0,) * (2 - np.ndim(y)) + tuple(slice(0, s) for s in np.shape(y))]
    return block if np.iscomplexobj(y) else np.real(block)


def derivatives(
    lib: Any,
    funcs: dict[str, tuple[Callable[..., Any], str]],
    x: dict[str, np.ndarray],
    cotangent: Callable[[np.ndarray, Any], np.ndarray],
) -> dict[str, np.ndarray]:
    """For each function of ``funcs`` (name -> (function, the input it takes)): value,
    JVP (tangent ``t``), VJP (the cotangent ``cotangent(x["ct"], output)``), the
    gradient of ``real(sum(f(x) * ct))`` and its JVP (tangent ``t2``: second order)."""
    jnp = lib.numpy
    out: dict[str, np.ndarray] = {}
    for name, (f, arg) in funcs.items():
        p = x[arg]
        y, ty = lib.jvp(f, (p,), (x["t"],))
        y2, pull = lib.vjp(f, p)
        ct = cotangent(x["ct"], y2)
        (vjp,) = pull(np.asarray(ct, np.asarray(y2).dtype))

        def loss(a: Any, f: Any = f, ct: Any = ct) -> Any:
            return jnp.real(jnp.sum(f(a) * ct))

        g = lib.grad(loss)
        out[f"{name}/value"] = np.asarray(y)
        out[f"{name}/jvp"] = np.asarray(ty)
        out[f"{name}/vjp"] = np.asarray(vjp)
        out[f"{name}/grad"] = np.asarray(g(p))
        out[f"{name}/grad_jvp"] = np.asarray(lib.jvp(g, (p,), (x["t2"],))[1])
    return out


def case(lib: Any, n: int, dt: str) -> dict[str, np.ndarray]:
    """For each function: value, JVP (tangent t), VJP (cotangent ct, cut to the output's
    shape), the gradient of ``real(sum(f(x) * ct))`` and its JVP (tangent t2: second
    order); and ``grad`` of ``|det|`` and of ``|det|^2``, with their JVPs."""
    x = inputs(n, dt)
    jnp = lib.numpy
    out = derivatives(lib, functions(lib, x), x, _leading_block)
    la = jnp.linalg

    def absdet2(a: Any) -> Any:
        d = la.det(a)
        return jnp.real(d * jnp.conj(d))

    out["absdet/grad"] = np.asarray(lib.grad(lambda a: jnp.abs(la.det(a)))(x["a"]))
    g_abs = lib.grad(lambda a: jnp.abs(la.det(a)))
    out["absdet/grad_jvp"] = np.asarray(lib.jvp(g_abs, (x["a"],), (x["t2"],))[1])
    out["absdet2/grad"] = np.asarray(lib.grad(absdet2)(x["a"]))
    out["absdet2/grad_jvp"] = np.asarray(lib.jvp(lib.grad(absdet2), (x["a"],), (x["t2"],))[1])
    return out


CASES = {f"{dt}_n{n}": (n, dt) for dt in DTYPES for n in SIZES}
