"""``jax.image`` cases (``resize``, ``scale_and_translate``), run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.image`` imported) when ``tests/fixtures/image_jax.npz`` was recorded,
``functrace`` in tests/test_image.py. Every method up- and downsampling with and
without antialiasing on a non-square 2-d image, a 3-d HWC image and a 4-d NHWC batch
(spatial dimensions only), a 1-d signal, uint8, float32, ``scale_and_translate`` with
fractional scales and translations on chosen dimensions, and gradients with respect to
the image, the scale and the translation. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(7)
IMG = _rng.standard_normal((5, 7))
HWC = _rng.standard_normal((6, 4, 3))
NHWC = _rng.standard_normal((2, 5, 6, 2))
SIG = _rng.standard_normal(9)
U8 = _rng.integers(0, 256, (6, 5)).astype(np.uint8)
SCALE = np.array([1.37, 0.61])
TRANS = np.array([0.3, -1.2])

METHODS = ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area")
# (up in both, down in both, down in one and up in the other)
SHAPES = ((9, 12), (3, 4), (2, 10))


def cases(lib: Any) -> dict[str, np.ndarray]:
    im, fnp = lib.image, lib.numpy
    out: dict[str, Any] = {}
    for method in METHODS:
        for aa in (True, False):
            tag = f"{method}/{'aa' if aa else 'noaa'}"
            for shape in SHAPES:
                out[f"{tag}/img_{shape[0]}x{shape[1]}"] = im.resize(IMG, shape, method, aa)
            out[f"{tag}/hwc"] = im.resize(HWC, (4, 7, 3), method, antialias=aa)
            out[f"{tag}/nhwc"] = im.resize(NHWC, (2, 3, 9, 2), method, antialias=aa)
            out[f"{tag}/signal_up"] = im.resize(SIG, (14,), method, antialias=aa)
            out[f"{tag}/signal_down"] = im.resize(SIG, (4,), method, antialias=aa)
            if method != "nearest":
                out[f"{tag}/st"] = im.scale_and_translate(
                    IMG, (6, 5), (0, 1), SCALE, TRANS, method, antialias=aa
                )
    for alias in ("bilinear", "trilinear", "triangle", "bicubic", "tricubic"):
        out[f"alias/{alias}"] = im.resize(IMG, (3, 9), alias)
    out["enum/lanczos3"] = im.resize(IMG, (8, 3), im.ResizeMethod.LANCZOS3)
    out["same_shape"] = im.resize(IMG, IMG.shape, "cubic")
    out["uint8/nearest"] = im.resize(U8, (9, 3), "nearest")
    out["uint8/linear"] = im.resize(U8, (9, 3), "linear")
    out["uint8/cubic"] = im.resize(U8, (4, 8), "cubic")
    f32 = IMG.astype(np.float32)
    out["float32/linear"] = im.resize(f32, (3, 11), "linear")
    out["float32/lanczos5"] = im.resize(f32, (8, 4), "lanczos5")
    out["float32/nearest"] = im.resize(f32, (8, 4), "nearest")
    # scale_and_translate on chosen dimensions (a negative one), the others kept
    out["st/hwc_dims01"] = im.scale_and_translate(
        HWC, (7, 3, 3), (0, 1), np.array([1.2, 0.7]), np.array([-0.4, 0.25]), "cubic"
    )
    out["st/nhwc_dim_neg2"] = im.scale_and_translate(
        NHWC, (2, 5, 4, 2), (-2,), np.array([0.55]), np.array([0.9]), "linear"
    )
    out["st/signal"] = im.scale_and_translate(
        SIG, (11,), (0,), np.array([1.7]), np.array([-2.3]), "lanczos3", antialias=False
    )
    out["st/float32_params"] = im.scale_and_translate(
        IMG,
        (4, 9),
        (0, 1),
        np.array([0.8, 1.3], np.float32),
        np.array([0.1, 0.2], np.float32),
        "linear",
    )
    out["st/float32_image"] = im.scale_and_translate(f32, (4, 9), (0, 1), SCALE, TRANS, "cubic")
    out["st/uint8"] = im.scale_and_translate(U8, (4, 9), (0, 1), SCALE, TRANS, "linear")

    # gradients of a loss with respect to the image
    weights = np.linspace(-1.0, 1.0, 6 * 10).reshape(6, 10)
    for method in ("linear", "cubic", "lanczos3", "nearest", "area"):

        def loss(x: Any, method: str = method) -> Any:
            return fnp.sum(fnp.sin(lib.image.resize(x, (6, 10), method)) * weights)

        out[f"grad/resize_{method}"] = lib.grad(loss)(IMG)

    def loss_down(x: Any) -> Any:
        return fnp.sum(fnp.cos(lib.image.resize(x, (3, 4), "linear")))

    out["grad/resize_linear_down"] = lib.grad(loss_down)(IMG)

    # and with respect to the image, the scale and the translation
    for method in ("linear", "cubic", "lanczos3", "area"):
        for aa in (True, False):

            def st_loss(x: Any, s: Any, t: Any, method: str = method, aa: bool = aa) -> Any:
                y = lib.image.scale_and_translate(x, (6, 5), (0, 1), s, t, method, antialias=aa)
                return fnp.sum(fnp.sin(y) * weights[:6, :5])

            g = lib.grad(st_loss, argnums=(0, 1, 2))(IMG, SCALE, TRANS)
            tag = f"grad/st_{method}_{'aa' if aa else 'noaa'}"
            out[f"{tag}/image"], out[f"{tag}/scale"], out[f"{tag}/translation"] = g
    return {k: np.asarray(v) for k, v in out.items()}
