"""lax convolutions on fixed inputs, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/conv_jax.npz`` was recorded, ``functrace`` in ``tests/test_conv.py``.
For each convolution: its value and the VJPs with respect to lhs and rhs for a fixed
cotangent; then outputs of the layout and padding helpers. Inputs are smooth
deterministic functions of the index (no random generator), so both sides see the
same arrays. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NHWC = ("NHWC", "HWIO", "NHWC")

# name -> (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CONV: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "strided": ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(2, 3), padding="VALID")),
    "rhs_dilated": (
        (1, 2, 8, 7),
        (3, 2, 3, 2),
        dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3)),
    ),
    "lhs_dilated": (
        (2, 2, 4, 5),
        (3, 2, 3, 3),
        dict(window_strides=(1, 1), padding=((2, 2), (1, 0)), lhs_dilation=(2, 3)),
    ),
    "lhs_rhs_dilated_strided": (
        (1, 2, 4, 5),
        (2, 2, 3, 2),
        dict(
            window_strides=(2, 1),
            padding=((0, 1), (3, 1)),
            lhs_dilation=(2, 2),
            rhs_dilation=(1, 2),
        ),
    ),
    "grouped": (
        (2, 6, 5, 5),
        (6, 2, 3, 3),
        dict(window_strides=(1, 2), padding="SAME", feature_group_count=3),
    ),
    "depthwise": (
        (1, 4, 9),
        (8, 1, 3),
        dict(window_strides=(2,), padding="VALID", feature_group_count=4),
    ),
    "batch_grouped": (
        (4, 3, 6, 5),
        (6, 3, 2, 2),
        dict(window_strides=(1, 2), padding="VALID", batch_group_count=2),
    ),
    "same_1d": ((2, 2, 9), (3, 2, 4), dict(window_strides=(2,), padding="SAME")),
    "same_lower_1d": ((2, 2, 9), (3, 2, 4), dict(window_strides=(2,), padding="SAME_LOWER")),
    "valid_3d": ((1, 2, 4, 5, 3), (2, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="VALID")),
    "explicit": ((1, 2, 5, 4), (3, 2, 2, 3), dict(window_strides=(1, 1), padding=((1, 2), (0, 3)))),
    "negative": (
        (2, 2, 7, 6),
        (2, 2, 3, 2),
        dict(window_strides=(2, 1), padding=((-1, 2), (2, -2))),
    ),
    "nhwc": (
        (2, 6, 5, 4),
        (3, 2, 4, 3),
        dict(window_strides=(2, 1), padding="SAME", dimension_numbers=NHWC),
    ),
    "nhwc_grouped": (
        (2, 5, 5, 8),
        (3, 3, 4, 6),
        dict(window_strides=(1, 1), padding="VALID", feature_group_count=2, dimension_numbers=NHWC),
    ),
    "mixed_layouts": (
        (2, 5, 6, 3),
        (4, 3, 2, 3),
        dict(window_strides=(1, 2), padding="VALID", dimension_numbers=("NHWC", "OIHW", "NCHW")),
    ),
    "everything_1d": (
        (2, 4, 7),
        (6, 2, 3),
        dict(
            window_strides=(2,),
            padding=((1, -1),),
            lhs_dilation=(3,),
            rhs_dilation=(2,),
            feature_group_count=2,
        ),
    ),
    "batch_grouped_dilated_nhwc": (
        (6, 5, 4, 4),
        (2, 2, 4, 9),
        dict(
            window_strides=(1, 1),
            padding="SAME",
            rhs_dilation=(2, 1),
            batch_group_count=3,
            dimension_numbers=NHWC,
        ),
    ),
}

# name -> (lhs shape, rhs shape, keyword arguments of conv_transpose)
TRANSPOSE: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "same": ((1, 4, 5, 3), (3, 3, 3, 2), dict(strides=(2, 2), padding="SAME")),
    "valid": ((2, 3, 4, 2), (2, 3, 2, 3), dict(strides=(2, 1), padding="VALID")),
    "transpose_kernel": (
        (1, 4, 4, 3),
        (3, 3, 2, 3),
        dict(strides=(2, 2), padding="SAME", rhs_dilation=(1, 2), transpose_kernel=True),
    ),
    "explicit_1d": ((2, 5, 2), (3, 2, 3), dict(strides=(3,), padding=((2, 1),))),
}

SHAPE_TUPLES = [
    ((2, 5, 6, 3), (3, 3, 3, 4), (1, 2), "SAME", NHWC),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 3), "VALID", ("NCHW", "OIHW", "NCHW")),
    ((1, 7, 2), (3, 2, 5), (2,), ((1, 2),), ("NWC", "WIO", "NCW")),
    ((1, 2, 5, 5, 6), (4, 2, 3, 3, 3), (1, 2, 3), "SAME_LOWER", ("NCDHW", "OIDHW", "NDHWC")),
]

DIMENSION_NUMBERS = [
    ((1, 2, 3, 4), (1, 2, 3, 4), NHWC),
    ((1, 2, 3, 4), (1, 2, 3, 4), ("NCHW", "OIHW", "NCHW")),
    ((1, 2, 3, 4), (1, 2, 3, 4), ("NWHC", "HWOI", "CHWN")),
    ((1, 2, 3), (1, 2, 3), None),
    ((1, 2, 3, 4, 5), (1, 2, 3, 4, 5), ("NDHWC", "DHWIO", "NCDHW")),
]

PADS = [
    ((5, 6), (3, 3), (1, 2), "SAME"),
    ((5, 6), (3, 3), (1, 2), "SAME_LOWER"),
    ((7,), (4,), (3,), "same"),
    ((4, 4), (5, 1), (2, 2), "VALID"),
]


def smooth(shape: tuple[int, ...], phase: float) -> np.ndarray:
    """A fixed float64 array: sin of a scaled index."""
    n = int(np.prod(shape))
    return np.sin(0.37 * np.arange(n) + phase).reshape(shape)


def _value_and_vjps(lib: Any, f: Any, x: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    y, pullback = lib.vjp(f, x, w)
    y = np.asarray(y)
    gx, gw = pullback(np.cos(0.23 * np.arange(y.size)).reshape(y.shape))
    return {"value": y, "vjp_lhs": np.asarray(gx), "vjp_rhs": np.asarray(gw)}


def cases(lib: Any) -> dict[str, np.ndarray]:
    lax = lib.lax
    out: dict[str, np.ndarray] = {}
    for name, (xs, ws, kw) in CONV.items():
        x, w = smooth(xs, 0.1), smooth(ws, 1.3)
        res = _value_and_vjps(lib, lambda a, b, kw=kw: lax.conv_general_dilated(a, b, **kw), x, w)
        out.update({f"conv/{name}/{k}": v for k, v in res.items()})
    for name, (xs, ws, kw) in TRANSPOSE.items():
        x, w = smooth(xs, 0.4), smooth(ws, 2.1)
        res = _value_and_vjps(lib, lambda a, b, kw=kw: lax.conv_transpose(a, b, **kw), x, w)
        out.update({f"conv_transpose/{name}/{k}": v for k, v in res.items()})
    x, w = smooth((2, 2, 6, 5), 0.2), smooth((3, 2, 2, 2), 0.9)
    out["conv/value"] = np.asarray(lax.conv(x, w, (2, 1), "SAME"))
    out["conv_with_general_padding/value"] = np.asarray(
        lax.conv_with_general_padding(x, w, (1, 2), ((1, 0), (2, 1)), (2, 1), (1, 2))
    )
    for i, args in enumerate(SHAPE_TUPLES):
        out[f"conv_general_shape_tuple/{i}"] = np.asarray(
            [int(d) for d in lax.conv_general_shape_tuple(*args)]
        )
    for i, args in enumerate(DIMENSION_NUMBERS):
        dn = lax.conv_dimension_numbers(*args)
        out[f"conv_dimension_numbers/{i}"] = np.asarray([[int(a) for a in s] for s in dn])
    for i, args in enumerate(PADS):
        out[f"padtype_to_pads/{i}"] = np.asarray(
            [[int(a) for a in p] for p in lax.padtype_to_pads(*args)]
        ).reshape(-1, 2)
    return out
