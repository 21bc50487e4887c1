"""Op-table rows for the primitives of ``functrace/lax/random_bits.py``.

``threefry2x32``'s reference is the cipher written out on Python ints, one block at a
time (Random123's definition), independent of the NumPy impl; ``erf_inv`` is checked
against SciPy and ``nextafter`` against NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special

import functrace.lax as lax
import functrace.numpy as fnp
from op_db import Arg, F, OpInfo

U32 = Arg("int", (0, 2**32 - 1))
_M = 0xFFFFFFFF


def _threefry_block(k0: int, k1: int, x0: int, x1: int) -> tuple[int, int]:
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    x0, x1 = (x0 + ks[0]) & _M, (x1 + ks[1]) & _M
    for i in range(5):
        for r in rot[i % 2]:
            x0 = (x0 + x1) & _M
            x1 = ((x1 << r) | (x1 >> (32 - r))) & _M
            x1 ^= x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _M
    return x0, x1


def _np_threefry(*args: Any) -> np.ndarray:
    arrs = np.broadcast_arrays(*[np.asarray(a).astype(np.uint32) for a in args])
    out = np.empty((2, *arrs[0].shape), np.uint32)
    for idx in np.ndindex(arrs[0].shape):
        out[(0, *idx)], out[(1, *idx)] = _threefry_block(*(int(a[idx]) for a in arrs))
    return out


def _threefry(*args: Any) -> Any:
    y0, y1 = lax.threefry2x32(*(lax.convert_element_type(a, np.uint32) for a in args))
    return fnp.stack([y0, y1])


ROWS: list[OpInfo] = [
    OpInfo(
        "lax.threefry2x32",
        _threefry,
        _np_threefry,
        (U32, U32, U32, U32),
        ("threefry2x32",),
        shapes="same",
        grad=False,
        dtypes=(np.uint32,),
    ),
    OpInfo(
        "lax.erf_inv",
        lax.erf_inv,
        lambda x: scipy.special.erfinv(x).astype(np.asarray(x).dtype),
        (Arg(domain=(-0.9, 0.9)),),  # order-2 finite differences lose digits nearer +-1
        ("erf_inv",),
        shapes="same",
        rtol=1e-13,
        atol=1e-14,
    ),
    OpInfo(
        "lax.nextafter",
        lax.nextafter,
        np.nextafter,
        (F, F),
        ("nextafter",),
        shapes="same",
    ),
]
