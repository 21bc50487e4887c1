"""``scipy.linalg.funm`` on matrices with real, repeated-free and complex eigenvalues,
run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/funm_jax.npz`` was recorded, ``functrace`` in tests/test_funm.py:
``exp``, ``sin + 2 cos`` and a complex square root of a symmetric, a non-symmetric,
a triangular and a rotation-like matrix (complex eigenvalues), a float32 matrix,
under ``jit``, and the error estimate of ``disp=False`` on a symmetric matrix. Nothing
here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(2)
_B = _rng.standard_normal((4, 4))
MATS = {
    "symmetric": (_B + _B.T) / 2,
    "general": _rng.standard_normal((4, 4)),
    "triangular": np.triu(_rng.standard_normal((3, 3))) + np.diag([0.0, 1.0, 2.5]),
    "rotation": np.array([[0.3, -1.2, 0.0], [1.2, 0.3, 0.1], [0.0, 0.2, -0.5]]),
}


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp, funm = lib.numpy, lib.scipy.linalg.funm
    funcs = {
        "exp": jnp.exp,
        "sin2cos": lambda x: jnp.sin(x) + 2 * jnp.cos(x),
        "sqrt": lambda x: jnp.sqrt(x.astype(complex) + 3.0),
    }
    out: dict[str, Any] = {}
    for mname, a in MATS.items():
        for fname, fn in funcs.items():
            out[f"{mname}/{fname}"] = funm(a, fn)
    out["float32/exp"] = funm(MATS["general"].astype(np.float32), jnp.exp)
    out["jit/sin2cos"] = lib.jit(lambda a: funm(a, funcs["sin2cos"]))(MATS["general"])
    f, err = funm(MATS["symmetric"], jnp.exp, disp=False)
    out["disp_false/value"], out["disp_false/err"] = f, err
    return {k: np.asarray(v) for k, v in out.items()}
