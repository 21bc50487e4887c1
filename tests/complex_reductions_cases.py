"""Cases of tests/test_complex_reductions.py: values and derivatives of ``max``, ``min``,
``ptp``, ``nanmax``, ``nanmin`` and ``lax.reduce_max``/``reduce_min`` of complex arrays,
where JAX defines them (no NaN reaching ``max``; JAX refuses complex ``argmax``).
``cases(lib)`` takes the library (``functrace`` or ``jax``) and returns named arrays;
tests/fixtures/complex_reductions_jax.npz holds what JAX 0.10.2 (``jax_enable_x64`` on,
CPU) returned for them.

The order is lexicographic: real parts first, the imaginary parts deciding among equal
real parts. Derivatives go to the selected entry, shared equally among equal entries
(``jvp_ties``); cotangents are complex, and ``grad`` of a real loss is JAX's
``df/dx - i df/dy``."""

from __future__ import annotations

from typing import Any

import numpy as np

DTYPES = ("complex128", "complex64")

# Real-part ties in every row (1 in row 0, 1 and 0 in row 1), whole ties in row 1 (1+1j
# twice), and the maximum of column 3 (1+0j vs -3-3j) decided by the real part.
Z = np.array([[1 + 2j, 1 - 2j, -1 + 5j, 1 + 0j], [2j, 1 + 1j, 1 + 1j, -3 - 3j]])
# No ties at all: what the gradient checks differentiate.
W = np.array([[0.5 - 1j, -2 + 0.25j, 1.5 + 1j], [0.75 + 2j, 0.75 - 0.5j, -1 - 1j]])
TANGENT = np.array([[1 + 1j, 2 - 1j, 3 + 0.5j, 4 - 2j], [-1 + 3j, 0.5 + 1j, 2 + 2j, 1 - 1j]])
COTANGENT = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j, 2 + 0j])
MASK = np.array([[True, False, True, True], [False, True, True, True]])
# A NaN real part and a NaN imaginary part, each slice keeping a number (JAX's fill for
# all-NaN slices differs from NumPy's, see functrace.numpy.nanmax)
NAN_Z = np.array([[np.nan + 1j, 2 + 1j, 0.5 - 1j], [0.25 + 0.5j, complex(1, np.nan), 3 - 2j]])


def _case(lib: Any, dt: str) -> dict[str, np.ndarray]:
    jnp, lax = lib.numpy, lib.lax
    z, w = Z.astype(dt), W.astype(dt)
    t, ct, nz = TANGENT.astype(dt), COTANGENT.astype(dt), NAN_Z.astype(dt)
    out: dict[str, Any] = {
        "max": jnp.max(z),
        "min": jnp.min(z),
        "max_axis1": jnp.max(z, axis=1),
        "min_axis0_keepdims": jnp.min(z, axis=0, keepdims=True),
        "amax_tuple": jnp.amax(z[None], axis=(0, 2)),
        "ptp_axis1": jnp.ptp(z, axis=1),
        "max_where_initial": jnp.max(z, axis=1, where=MASK, initial=1 + 1.5j),
        "min_initial": jnp.min(z, axis=0, initial=-1 + 0j),
        "lax_reduce_max": lax.reduce_max(z, (0,)),
        "lax_reduce_min": lax.reduce_min(z, (0, 1)),
        "lax_reduce_max_empty": lax.reduce_max(z[:, :0], (1,)),
        "lax_reduce_min_empty": lax.reduce_min(z[:0], (0,)),
        "nanmax": jnp.nanmax(nz, axis=1),
        "nanmin": jnp.nanmin(nz, axis=0),
        "jit_max": lib.jit(lambda x: jnp.max(x, axis=0))(z),
        "vmap_min": lib.vmap(jnp.min)(z),
        "vmap_ptp": lib.vmap(jnp.ptp, in_axes=1)(z),
    }
    # tangents: to the selected entry, averaged over whole ties (row 1's 1+1j)
    out["jvp_ties"] = lib.jvp(lambda x: jnp.max(x, axis=1), (z,), (t,))[1]
    out["jvp_min"] = lib.jvp(lambda x: jnp.min(x, axis=0), (z,), (t,))[1]
    out["jvp_ptp"] = lib.jvp(jnp.ptp, (z,), (t,))[1]
    (out["vjp_max"],) = lib.vjp(lambda x: jnp.max(x, axis=0), z)[1](ct)
    (out["vjp_lax_reduce_min"],) = lib.vjp(lambda x: lax.reduce_min(x, (1,)), z)[1](ct[:2])
    (out["vjp_where"],) = lib.vjp(lambda x: jnp.max(x, 1, where=MASK, initial=-5 + 0j), z)[1](
        ct[:2]
    )
    (out["vjp_nanmax"],) = lib.vjp(lambda x: jnp.nanmax(x, axis=1), nz)[1](ct[:2])
    # gradients of real losses (df/dx - i df/dy), also under jit and vmap
    out["grad_abs_max"] = lib.grad(lambda x: jnp.abs(jnp.max(x)))(w)
    out["grad_real_min"] = lib.grad(lambda x: jnp.real(jnp.min(x) * (2 - 1j)))(w)
    out["grad_abs_ptp"] = lib.jit(lib.grad(lambda x: jnp.abs(jnp.ptp(x)) ** 2))(w)
    out["grad_nanmin"] = lib.grad(lambda x: jnp.imag(jnp.sum(jnp.nanmin(x, axis=1))))(nz)
    out["vmap_grad"] = lib.vmap(lib.grad(lambda r: jnp.abs(jnp.max(r) - 1j)))(w)
    return {k: np.asarray(v) for k, v in out.items()}


def cases(lib: Any) -> dict[str, np.ndarray]:
    """Every case in both complex dtypes, under ``<dtype>/<name>``."""
    return {f"{dt}/{k}": v for dt in DTYPES for k, v in _case(lib, dt).items()}
