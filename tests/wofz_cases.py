"""``jax.scipy.special.wofz`` (and ``erfcx`` of complex input) cases, run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.scipy.special`` imported) when ``tests/fixtures/wofz_jax.npz`` was recorded,
``functrace`` in tests/test_wofz.py. Points over the complex plane (small and large
``|z|``, near both axes, below the real axis where ``exp(-z^2)`` grows), real and float32
input, a JVP with a complex tangent, and gradients of real losses of the real and
imaginary parts. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(7)


def _plane(n: int, re: tuple[float, float], im: tuple[float, float]) -> np.ndarray:
    return _rng.uniform(*re, n) + 1j * _rng.uniform(*im, n)


REGIONS = {
    "small": _plane(40, (-3.0, 3.0), (-3.0, 3.0)),
    "large": _plane(40, (-200.0, 200.0), (0.0, 200.0)),
    "near_real": _plane(40, (-12.0, 12.0), (-1e-3, 1e-3)),
    "near_imag": _plane(40, (-1e-3, 1e-3), (-4.0, 40.0)),
    "lower": _plane(40, (-6.0, 6.0), (-6.0, 0.0)),
    "lower_far": _plane(20, (20.0, 40.0), (-15.0, -5.0)),
}
REAL = _rng.uniform(-30.0, 30.0, 30)
Z0 = np.array([0.3 + 0.4j, -1.2 + 0.7j, 2.0 - 0.5j, -0.4 - 1.1j])
T0 = np.array([1.0 - 0.5j, 0.2 + 1.0j, -0.7 + 0.3j, 0.5 + 0.5j])


def cases(lib: Any) -> dict[str, np.ndarray]:
    S, fnp = lib.scipy.special, lib.numpy
    out: dict[str, Any] = {}
    for name, z in REGIONS.items():
        out[f"wofz/{name}"] = S.wofz(z)
    out["wofz/real"] = S.wofz(REAL)
    out["wofz/complex64"] = S.wofz(REGIONS["small"].astype(np.complex64))
    out["wofz/float32"] = S.wofz(REAL[:10].astype(np.float32) / 10)
    out["erfcx/complex"] = S.erfcx(REGIONS["small"])
    primal, tangent = lib.jvp(S.wofz, (Z0,), (T0,))
    out["jvp/primal"], out["jvp/tangent"] = primal, tangent
    x, y = Z0.real, Z0.imag

    def loss(x: Any, y: Any) -> Any:
        w = S.wofz(x + 1j * y)
        return fnp.sum(fnp.real(w) ** 2 + 3 * fnp.imag(w))

    gx, gy = lib.grad(loss, argnums=(0, 1))(x, y)
    out["grad/x"], out["grad/y"] = gx, gy
    out["grad/complex"] = lib.grad(lambda z: fnp.sum(fnp.abs(S.wofz(z)) ** 2))(Z0)
    out["grad/real_input"] = lib.grad(lambda r: fnp.sum(fnp.imag(S.wofz(r))))(REAL[:6] / 10)
    return {k: np.asarray(v) for k, v in out.items()}
