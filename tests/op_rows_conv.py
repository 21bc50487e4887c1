"""Op-table rows for ``lax.conv_general_dilated`` (1-D to 3-D, strides, lhs and rhs
dilation, feature and batch groups, string and explicit (negative) padding, NHWC
layouts), ``lax.conv_transpose`` and ``fnp.correlate``. The reference is a direct
loop over output positions written from the definition, independent of the im2col
implementation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.lax as lax
import functrace.numpy as fnp
from op_db import F, OpInfo


def np_conv(
    x: Any,
    w: Any,
    strides: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    ld: tuple[int, ...] | None = None,
    rd: tuple[int, ...] | None = None,
    groups: int = 1,
    batch_groups: int = 1,
) -> np.ndarray:
    """Convolution from the definition, NCHW/OIHW layouts, explicit pads."""
    x, w = np.asarray(x), np.asarray(w)
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    ns = x.ndim - 2
    ld = ld or (1,) * ns
    rd = rd or (1,) * ns
    xd = np.zeros((n, c, *((s - 1) * d + 1 for s, d in zip(x.shape[2:], ld))), x.dtype)
    xd[(slice(None), slice(None), *(slice(None, None, d) for d in ld))] = x
    for ax, (lo, hi) in enumerate(pads, start=2):
        widths = [(0, 0)] * xd.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths)
        idx = [slice(None)] * xd.ndim
        idx[ax] = slice(max(-lo, 0), xd.shape[ax] - max(-hi, 0))
        xd = xd[tuple(idx)]
    kd = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rd)]
    outs = [(p - k) // s + 1 for p, k, s in zip(xd.shape[2:], kd, strides)]
    nb, og = n // batch_groups, o // (groups * batch_groups)
    out = np.zeros((nb, o, *outs), np.result_type(x, w))
    for oo in range(o):
        grp = oo // og
        g = grp if groups > 1 else 0
        b = grp if batch_groups > 1 else 0
        for pos in np.ndindex(*outs):
            win = tuple(slice(p * s, p * s + k, d) for p, s, k, d in zip(pos, strides, kd, rd))
            patch = xd[(slice(b * nb, (b + 1) * nb), slice(g * i, (g + 1) * i), *win)]
            out[(slice(None), oo, *pos)] = np.sum(patch * w[oo], axis=tuple(range(1, patch.ndim)))
    return out


def _nhwc(f: Any) -> Any:
    # a reference in NCHW/OIHW applied to NHWC/HWIO operands, NHWC result
    def ref(x: Any, w: Any) -> np.ndarray:
        out = f(np.moveaxis(np.asarray(x), -1, 1), np.transpose(np.asarray(w), (3, 2, 0, 1)))
        return np.moveaxis(out, 1, -1)

    return ref


def _row(name: str, fn: Any, ref: Any, shapes: Any, prims: tuple[str, ...] = ()) -> OpInfo:
    return OpInfo(
        f"lax.conv_general_dilated[{name}]",
        fn,
        ref,
        (F, F),
        ("conv_general_dilated", *prims),
        shapes=shapes,
        rtol=1e-5,
        atol=1e-5,
    )


def _transpose_ref(x: Any, w: Any, kernel_t: bool = False) -> np.ndarray:
    # conv_transpose NHWC/HWIO, strides (2, 2), "SAME" with k = 3: pads (2, 1) of the
    # 2-dilated input; transpose_kernel flips the kernel and swaps I and O
    w = np.asarray(w)
    if kernel_t:
        w = np.swapaxes(w[::-1, ::-1], 2, 3)
    return _nhwc(lambda a, b: np_conv(a, b, (1, 1), ((2, 1), (2, 1)), ld=(2, 2)))(x, w)


CONV: list[OpInfo] = [
    _row(
        "1d",
        lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID"),
        lambda x, w: np_conv(x, w, (1,), ((0, 0),)),
        ((2, 3, 6), (4, 3, 3)),
    ),
    _row(
        "2d_strided_same",
        lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "SAME"),
        lambda x, w: np_conv(x, w, (2, 2), ((1, 1), (1, 1))),
        ((2, 2, 5, 5), (3, 2, 3, 3)),
    ),
    _row(
        "3d",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 2, 1), "VALID"),
        lambda x, w: np_conv(x, w, (1, 2, 1), ((0, 0),) * 3),
        ((1, 2, 3, 4, 3), (2, 2, 2, 2, 2)),
    ),
    _row(
        "rhs_dilated",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (0, 0)), rhs_dilation=(2, 1)),
        lambda x, w: np_conv(x, w, (1, 1), ((1, 1), (0, 0)), rd=(2, 1)),
        ((1, 2, 5, 4), (2, 2, 2, 2)),
    ),
    _row(
        "lhs_dilated",
        lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 2),), lhs_dilation=(2,)),
        lambda x, w: np_conv(x, w, (1,), ((1, 2),), ld=(2,)),
        ((2, 2, 4), (3, 2, 3)),
    ),
    _row(
        "feature_groups",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=2),
        lambda x, w: np_conv(x, w, (1, 1), ((0, 0), (0, 0)), groups=2),
        ((2, 4, 4, 3), (4, 2, 2, 2)),
    ),
    _row(
        "batch_groups",
        lambda x, w: lax.conv_general_dilated(x, w, (2,), "VALID", batch_group_count=2),
        lambda x, w: np_conv(x, w, (2,), ((0, 0),), batch_groups=2),
        ((4, 2, 5), (4, 2, 2)),
    ),
    _row(
        "negative_pads",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((2, -1), (-1, 1))),
        lambda x, w: np_conv(x, w, (1, 1), ((2, -1), (-1, 1))),
        ((1, 2, 4, 5), (2, 2, 2, 3)),
    ),
    _row(
        "nhwc_same_lower",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 2), "SAME_LOWER", dimension_numbers=("NHWC", "HWIO", "NHWC")
        ),
        _nhwc(lambda x, w: np_conv(x, w, (1, 2), ((1, 1), (1, 0)))),
        ((2, 4, 6, 4), (3, 3, 4, 2)),
    ),
    OpInfo(
        "lax.conv_transpose",
        lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"),
        _transpose_ref,
        (F, F),
        ("conv_general_dilated",),
        shapes=((1, 3, 3, 2), (3, 3, 2, 2)),
        rtol=1e-5,
        atol=1e-5,
    ),
    OpInfo(
        "lax.conv_transpose[transpose_kernel]",
        lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", transpose_kernel=True),
        lambda x, w: _transpose_ref(x, w, kernel_t=True),
        (F, F),
        ("conv_general_dilated", "rev", "transpose"),
        shapes=((1, 3, 3, 2), (3, 3, 3, 2)),
        rtol=1e-5,
        atol=1e-5,
    ),
]


def _corr_row(mode: str, shapes: Any) -> OpInfo:
    return OpInfo(
        f"correlate_{mode}_{'x'.join(str(s[0]) for s in shapes)}",
        lambda a, v: fnp.correlate(a, v, mode),
        lambda a, v: np.correlate(a, v, mode),
        (F, F),
        ("conv_general_dilated",),
        shapes=shapes,
        rtol=1e-5,
    )


CORRELATE: list[OpInfo] = [
    _corr_row("valid", ((5,), (3,))),
    _corr_row("same", ((5,), (4,))),
    _corr_row("full", ((4,), (3,))),
    _corr_row("same", ((2,), (5,))),  # the longer one second: reversed correlate(v, a)
    _corr_row("valid", ((3,), (4,))),
    OpInfo(
        "convolve_valid_2x4",
        lambda a, v: fnp.convolve(a, v, "valid"),
        lambda a, v: np.convolve(a, v, "valid"),
        (F, F),
        ("conv_general_dilated",),
        shapes=((2,), (4,)),
        rtol=1e-5,
    ),
]

ROWS: list[OpInfo] = CONV + CORRELATE
