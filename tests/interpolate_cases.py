"""``jax.scipy.interpolate.RegularGridInterpolator`` cases, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/interpolate_jax.npz`` was recorded, ``functrace`` in
tests/test_interpolate.py. Linear and nearest interpolation on 1-, 2- and 3-d grids
(uneven spacing, trailing value axes, points on grid lines, at half cells and outside),
NaN, finite and no fill values, integer values, coordinates given as a tuple, and the
gradients with respect to the values and the points. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

G1 = np.array([0.0, 0.5, 2.0, 3.0])
G2 = (np.array([-1.0, 0.0, 1.5]), np.array([0.0, 1.0, 2.0, 4.0]))
G3 = (np.array([0.0, 1.0]), np.array([0.0, 2.0, 3.0]), np.array([-1.0, 1.0]))
_rng = np.random.default_rng(0)
V1 = _rng.standard_normal(4)
V2 = _rng.standard_normal((3, 4))
V2T = _rng.standard_normal((3, 4, 2))  # a 2-vector at each grid point
V3 = _rng.standard_normal((2, 3, 2))
X1 = np.array([0.0, 0.25, 0.5, 1.25, 2.0, 2.9, 3.0, -0.1, 3.5])
X2 = np.array([[-1.0, 0.0], [-0.5, 0.5], [0.75, 3.0], [1.5, 4.0], [0.0, 1.5], [2.0, 1.0],
               [-0.25, 2.5]])  # fmt: skip
X3 = np.array([[0.5, 1.0, 0.0], [0.0, 2.5, -0.5], [1.0, 3.0, 1.0], [0.2, 0.1, 0.9]])


def cases(lib: Any) -> dict[str, np.ndarray]:
    RGI, fnp = lib.scipy.interpolate.RegularGridInterpolator, lib.numpy
    out: dict[str, Any] = {}
    for method in ("linear", "nearest"):
        out[f"1d/{method}"] = RGI((G1,), V1, method=method)(X1)
        out[f"1d/{method}/fill0"] = RGI((G1,), V1, method=method, fill_value=0.5)(X1)
        out[f"1d/{method}/extrapolate"] = RGI((G1,), V1, method=method, fill_value=None)(X1)
        out[f"2d/{method}"] = RGI(G2, V2, method=method)(X2)
        out[f"2d/{method}/trailing"] = RGI(G2, V2T, method=method)(X2)
        out[f"2d/{method}/tuple"] = RGI(G2, V2, method=method)((X2[:, 0], X2[:, 1]))
        out[f"2d/{method}/batch"] = RGI(G2, V2, method=method)(X2[:6].reshape(2, 3, 2))
        out[f"3d/{method}"] = RGI(G3, V3, method=method)(X3)
    out["1d/integer_values"] = RGI((G1,), np.array([1, 2, 4, 8]))(X1[:7])
    out["2d/call_method"] = RGI(G2, V2)(X2, method="nearest")

    def loss(v: Any, x: Any) -> Any:
        return fnp.sum(fnp.sin(RGI(G2, v, fill_value=0.0)(x)))

    inside = X2[[1, 2, 4, 6]]
    out["2d/grad_values"], out["2d/grad_points"] = lib.grad(loss, argnums=(0, 1))(V2, inside)
    return {k: np.asarray(v) for k, v in out.items()}
