"""Cases of tests/test_linalg_complex.py: derivatives of the dense linear algebra on
complex matrices. Each case function takes the library (``functrace`` or ``jax``) and
returns named arrays; tests/fixtures/linalg_complex_jax.npz holds what JAX 0.10.2
(``jax_enable_x64`` on, CPU) returned for them, under ``<case>/<name>``."""

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


def functions(lib: Any, x: dict[str, np.ndarray]) -> dict[str, tuple[Callable[..., Any], str]]:
    """name -> (function of one matrix, which input it takes). JAX's ``cholesky`` reads
    ``(a + a^H) / 2`` and functrace's the lower triangle; on the Hermitian matrix built
    from the lower triangle both compute the same function, whose derivatives are
    compared."""
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
    }


def case(lib: Any, n: int, dt: str) -> dict[str, np.ndarray]:
    """For each function: value, JVP (tangent t), VJP (cotangent ct, cut to the output's
    shape), the gradient of ``real(sum(f(x) * ct))`` and its JVP (tangent t2: second
    order); and ``grad`` of ``|det|`` and of ``|det|^2``, with their JVPs."""
    x = inputs(n, dt)
    jnp = lib.numpy
    out: dict[str, np.ndarray] = {}
    for name, (f, arg) in functions(lib, x).items():
        p = x[arg]
        y, ty = lib.jvp(f, (p,), (x["t"],))
        y2, pull = lib.vjp(f, p)
        ct = x["ct"][tuple(slice(0, s) for s in np.shape(y2))] if np.ndim(y2) else x["ct"][0, 0]
        ct = ct if np.iscomplexobj(y2) else np.real(ct)
        (vjp,) = pull(np.asarray(ct, np.asarray(y2).dtype))

        def loss(a: Any, f: Any = f, ct: Any = ct) -> Any:
            return jnp.real(jnp.sum(f(a) * ct))

        g = lib.grad(loss)
        out[f"{name}/value"] = np.asarray(y)
        out[f"{name}/jvp"] = np.asarray(ty)
        out[f"{name}/vjp"] = np.asarray(vjp)
        out[f"{name}/grad"] = np.asarray(g(p))
        out[f"{name}/grad_jvp"] = np.asarray(lib.jvp(g, (p,), (x["t2"],))[1])
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
