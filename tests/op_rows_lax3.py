"""Op-table rows: ``lax.stack``/``unstack``, ``scatter_sub``, ``scatter_apply``, the
fill/drop mode of ``gather`` and the scatters, ``approx_max_k``/``approx_min_k``,
``ragged_dot``, ``conv_general_dilated_patches``, ``conv_general_dilated_local``,
``ragged_dot_general``, ``all_to_all``, ``pswapaxes``, ``pbroadcast``, ``pcast`` and
``pshuffle`` (``functrace/lax/composite_higher.py``, ``composite_more.py``,
``gather_scatter.py``, ``parallel.py``).

The references are NumPy loops written independently of the implementations. Index
arrays, group sizes and static parameters are baked into the lambdas.
"""

from __future__ import annotations

import numpy as np

import functrace as ft
import functrace.lax as lax
from op_db import F, OpInfo

_IDX = np.array([0, -1, 5, 1, 1])  # 5 is out of range for an axis of 4
_SIZES = np.array([1, 0, 2])


def _np_fill(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return np.stack([x[i] if -4 <= i < 4 else np.zeros(x.shape[1:], x.dtype) for i in _IDX])


def _np_sub_drop(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.array(x, copy=True)
    for i, v in zip(_IDX, np.asarray(u)):
        if -4 <= i < 4:
            out[i] = out[i] - v
    return out


def _np_apply(x: np.ndarray) -> np.ndarray:
    out = np.array(x, copy=True)
    for i in (0, 2, 0):
        out[i] = np.sin(out[i])
    return out


def _np_ragged(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    out = np.zeros((a.shape[0], b.shape[2]), a.dtype)
    start = 0
    for g, n in enumerate(_SIZES):
        out[start : start + n] = a[start : start + n] @ b[g]
        start += n
    return out


def _np_patches(x: np.ndarray) -> np.ndarray:
    # NCW, filter 2, stride 1, VALID: feature c*2 + i is x[n, c, w + i]
    x = np.asarray(x)
    n, c, w = x.shape
    out = np.empty((n, c * 2, w - 1), x.dtype)
    for ch in range(c):
        for i in range(2):
            out[:, ch * 2 + i] = x[:, ch, i : i + w - 1]
    return out


# lax.conv_general_dilated_local and lax.ragged_dot_general (functrace/lax/composite_more.py)


def _np_local(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    # NCW, filter 2, stride 1, VALID, a filter per output position:
    # out[n, o, p] = sum_{c, i} x[n, c, p + i] * w[o, c * 2 + i, p]
    x, w = np.asarray(x), np.asarray(w)
    n, c, width = x.shape
    out = np.zeros((n, w.shape[0], width - 1), x.dtype)
    for p in range(width - 1):
        for ch in range(c):
            for i in range(2):
                out[:, :, p] += np.outer(x[:, ch, p + i], w[:, ch * 2 + i, p])
    return out


_GROUPS = np.array([2, 1])


def _np_ragged_contract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # lhs (2, 4) ragged in its contracted dimension: one product per group
    a, b = np.asarray(a), np.asarray(b)
    ends = np.cumsum(_GROUPS)
    return np.stack([a[:, e - g : e] @ b[e - g : e] for g, e in zip(_GROUPS, ends)])


def _np_all_to_all(x: np.ndarray) -> np.ndarray:
    # split axis 0 of each example's (3, 2), stacked at axis 1: out[k][:, j] = x[j][k]
    x = np.asarray(x)
    return np.stack([np.stack([x[j][k] for j in range(3)], axis=1) for k in range(3)])


def _np_all_to_all_tiled(x: np.ndarray) -> np.ndarray:
    # each example's (2, 6): chunk k of axis 1 (of 3), concatenated along axis 0
    x = np.asarray(x)
    return np.stack(
        [np.concatenate([x[j][:, 2 * k : 2 * k + 2] for j in range(3)], axis=0) for k in range(3)]
    )


ROWS: list[OpInfo] = [
    OpInfo(
        "lax.stack axis=1",
        lambda x, y: lax.stack([x, y * x], 1),
        lambda x, y: np.stack([x, y * x], 1),
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 3)),
    ),
    OpInfo(
        "lax.unstack axis=-1",
        lambda x: lax.stack([u * u for u in lax.unstack(x, -1)]),
        lambda x: np.moveaxis(np.asarray(x) ** 2, -1, 0),
        (F,),
        ("slice",),
        shapes=((2, 3),),
    ),
    OpInfo(
        "lax.scatter_sub drop",
        lambda x, u: lax.scatter_sub(x, u, [_IDX], (0,), mode="drop"),
        _np_sub_drop,
        (F, F),
        ("scatter_add",),
        shapes=((4, 2), (5, 2)),
    ),
    OpInfo(
        "lax.gather fill",
        lambda x: lax.gather(x, [_IDX], (0,), mode="fill", fill_value=0.0),
        _np_fill,
        (F,),
        ("gather",),
        shapes=((4, 3),),
    ),
    OpInfo(
        "lax.scatter_apply",
        lambda x: lax.scatter_apply(x, [np.array([0, 2, 0])], lax.sin, (0,)),
        _np_apply,
        (F,),
        ("scatter_add",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.approx_max_k",
        lambda x: lax.approx_max_k(x, 2)[0],
        lambda x: -np.sort(-np.asarray(x), axis=-1)[..., :2],
        (F,),
        ("sort",),
        shapes=((3, 4),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.approx_min_k reduction_dimension=0",
        lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0],
        lambda x: np.sort(np.asarray(x), axis=0)[:2],
        (F,),
        ("sort",),
        shapes=((3, 4),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.ragged_dot",
        lambda a, b: lax.ragged_dot(a, b, _SIZES),
        _np_ragged,
        (F, F),
        ("dot_general",),
        shapes=((4, 3), (3, 3, 2)),
    ),
    OpInfo(
        "lax.conv_general_dilated_patches",
        lambda x: lax.conv_general_dilated_patches(x, (2,), (1,), "VALID"),
        _np_patches,
        (F,),
        ("conv_general_dilated",),
        shapes=((2, 2, 4),),
    ),
    OpInfo(
        "lax.conv_general_dilated_local",
        lambda x, w: lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,)),
        _np_local,
        (F, F),
        ("conv_general_dilated", "dot_general"),
        shapes=((2, 2, 4), (3, 4, 3)),
    ),
    OpInfo(
        "lax.ragged_dot_general contracting",
        lambda a, b: lax.ragged_dot_general(
            a, b, _GROUPS, lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
        ),
        _np_ragged_contract,
        (F, F),
        ("dot_general",),
        shapes=((2, 4), (4, 3)),
    ),
    OpInfo(
        "lax.all_to_all (vmap axis_name)",
        lambda x: ft.vmap(lambda r: lax.all_to_all(r * r, "i", 0, 1), axis_name="i")(x),
        lambda x: _np_all_to_all(np.asarray(x) ** 2),
        (F,),
        ("all_gather",),
        shapes=((3, 3, 2),),
    ),
    OpInfo(
        "lax.all_to_all tiled (vmap axis_name)",
        lambda x: ft.vmap(lambda r: lax.all_to_all(r, "i", 1, 0, tiled=True), axis_name="i")(x),
        _np_all_to_all_tiled,
        (F,),
        ("all_gather",),
        shapes=((3, 2, 6),),
    ),
    OpInfo(
        "lax.pswapaxes (vmap axis_name)",
        lambda x: ft.vmap(lambda r: lax.pswapaxes(r, "i", 1) * r, axis_name="i")(x),
        lambda x: np.swapaxes(x, 0, 2) * x,
        (F,),
        ("all_gather",),
        shapes=((3, 2, 3),),
    ),
    OpInfo(
        "lax.pbroadcast (vmap axis_name)",
        lambda x: ft.vmap(lambda r: lax.pbroadcast(r, "i", 1) * r, axis_name="i")(x),
        lambda x: np.asarray(x)[1] * np.asarray(x),
        (F,),
        ("psum",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.pcast (vmap axis_name)",
        lambda x: ft.vmap(
            lambda r, w: lax.pcast(w, "i", to="varying") * r, (0, None), axis_name="i"
        )(x, x[1]),
        lambda x: np.asarray(x) * np.asarray(x)[1],
        (F,),
        ("pvary",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.pshuffle (vmap axis_name)",
        lambda x: ft.vmap(lambda r: lax.pshuffle(r, "i", [2, 0, 1]) * r, axis_name="i")(x),
        lambda x: np.asarray(x)[[2, 0, 1]] * np.asarray(x),
        (F,),
        ("ppermute",),
        shapes=((3, 2),),
    ),
]
