"""``jax.scipy.fft`` DCT cases (``dct``, ``idct``, ``dctn``, ``idctn``), run under JAX
and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.scipy.fft`` imported) when ``tests/fixtures/dct_jax.npz`` was recorded,
``functrace`` in tests/test_dct.py. Even and odd lengths, both norms, padding and
truncation (``n``, ``s``), chosen axes, a complex input, float32, and gradients.
Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(1)
X = _rng.standard_normal((3, 5))
X4 = _rng.standard_normal(4)
X3D = _rng.standard_normal((2, 3, 4))


def cases(lib: Any) -> dict[str, np.ndarray]:
    F, fnp = lib.scipy.fft, lib.numpy
    out: dict[str, Any] = {}
    for norm in (None, "ortho"):
        tag = norm or "backward"
        for name, v in (("x4", X4), ("x", X)):
            out[f"{tag}/{name}/dct"] = F.dct(v, norm=norm)
            out[f"{tag}/{name}/idct"] = F.idct(v, norm=norm)
            out[f"{tag}/{name}/dct_axis0_n3"] = F.dct(v, n=3, axis=0, norm=norm)
            out[f"{tag}/{name}/dct_n7"] = F.dct(v, n=7, norm=norm)
            out[f"{tag}/{name}/idct_n6"] = F.idct(v, n=6, norm=norm)
        out[f"{tag}/dctn"] = F.dctn(X, norm=norm)
        out[f"{tag}/idctn"] = F.idctn(X, norm=norm)
        out[f"{tag}/dctn_s"] = F.dctn(X, s=[2, 4], norm=norm)
        out[f"{tag}/idctn_s_axes"] = F.idctn(X, s=[4], axes=[0], norm=norm)
        out[f"{tag}/dctn_3d"] = F.dctn(X3D, norm=norm)
        out[f"{tag}/idctn_3d_axes"] = F.idctn(X3D, axes=(0, 2), norm=norm)
    out["complex"] = F.dct(X4 + 1j * X4[::-1])
    out["float32"] = F.dct(X.astype(np.float32), norm="ortho")
    out["grad_dct"] = lib.grad(lambda v: fnp.sum(fnp.sin(F.dct(v))))(X4)
    out["grad_idctn"] = lib.grad(lambda v: fnp.sum(fnp.sin(F.idctn(v, norm="ortho"))))(X)
    return {k: np.asarray(v) for k, v in out.items()}
