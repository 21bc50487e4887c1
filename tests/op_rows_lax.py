"""Op-table rows: primitive-level rows for the shape, reduction and indexing primitives.

One row (or a few variants, ``lax.<prim>[variant]``) per primitive of
``functrace/lax/shapes.py``, ``reductions.py`` and ``indexing.py``. Static
parameters are baked into the lambdas; index operands are ``const`` arguments
(passed as given, never differentiated). The NumPy references are written
independently of the impls (loops and NumPy calls, not the impl code).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.lax as lax
from op_db import BOOL, INT, UNIT, F, OpInfo, const

# ---------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------


def _np_pad(x: Any, v: Any, config: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    # One axis at a time: spread the elements apart, then add (or crop) the edges.
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(config):
        out = np.moveaxis(out, axis, 0)
        n = out.shape[0]
        spread = np.full((n + max(n - 1, 0) * interior, *out.shape[1:]), v, out.dtype)
        spread[:: interior + 1] = out
        parts = [
            np.full((max(lo, 0), *out.shape[1:]), v, out.dtype),
            spread,
            np.full((max(hi, 0), *out.shape[1:]), v, out.dtype),
        ]
        joined = np.concatenate(parts)
        joined = joined[max(-lo, 0) : joined.shape[0] - max(-hi, 0)]
        out = np.moveaxis(joined, 0, axis)
    return out


def _np_dynamic_slice(x: Any, starts: tuple[int, ...], sizes: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    idx = []
    for s, n, d in zip(starts, sizes, x.shape):
        s = int(s) + d if int(s) < 0 else int(s)  # negative starts count from the end once
        s = min(max(s, 0), d - n)
        idx.append(slice(s, s + n))
    return x[tuple(idx)]


def _np_dynamic_update_slice(x: Any, u: Any, starts: tuple[int, ...]) -> np.ndarray:
    out = np.array(x, copy=True)
    u = np.asarray(u)
    idx = []
    for s, n, d in zip(starts, u.shape, out.shape):
        s = int(s) + d if int(s) < 0 else int(s)  # negative starts count from the end once
        s = min(max(s, 0), d - n)
        idx.append(slice(s, s + n))
    out[tuple(idx)] = u
    return out


def _np_scatter(combine: Any) -> Any:
    """Reference scatter along axis 0 with 1-d indices: one update at a time, in order."""

    def ref(x: Any, u: Any, idx: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        u = np.asarray(u)
        for k, i in enumerate(np.asarray(idx)):
            out[i] = combine(out[i], u[k])
        return out

    return ref


def _np_cumulative(fn: Any, axis: int, reverse: bool = False) -> Any:
    def ref(x: Any) -> np.ndarray:
        x = np.asarray(x)
        a = axis % x.ndim
        if reverse:
            return np.flip(fn(np.flip(x, a), a), a)
        return fn(x, a)

    return ref


def _np_lexsort_take(keys: list[Any], vals: Any, axis: int) -> np.ndarray:
    perm = np.lexsort(tuple(np.asarray(k) for k in keys[::-1]), axis=axis)
    return np.take_along_axis(np.asarray(vals), perm, axis=axis)


def _np_index_take_clip(x: Any, idx: Any, axis: int) -> np.ndarray:
    x = np.asarray(x)
    d = x.shape[axis]
    i = np.asarray(idx)
    i = np.clip(np.where(i < 0, i + d, i), 0, d - 1)
    return np.moveaxis(
        np.take(x, i, axis=axis), list(range(axis, axis + i.ndim)), list(range(i.ndim))
    )


def _np_scatter_add_axis1(x: Any, u: Any, idx: Any) -> np.ndarray:
    out = np.array(x, copy=True)
    u = np.asarray(u)
    for pos in np.ndindex(*np.shape(idx)):
        out[:, idx[pos]] += u[pos]
    return out


_G_IDX = np.array([[0, 2], [-1, 1]])
_S_IDX = np.array([0, 2, 0])  # a repeated position: the updates combine (or the last wins)
_S_IDX2 = np.array([[0, 3], [1, 0]])


def _last(x: Any) -> int:
    return len(np.shape(x)) - 1


# ---------------------------------------------------------------------------
# Shape primitives
# ---------------------------------------------------------------------------

_SHAPES: list[OpInfo] = [
    OpInfo(
        "lax.transpose",
        lambda x: lax.transpose(x, tuple(reversed(range(x.ndim)))),
        lambda x: np.transpose(x),
        (F,),
        ("transpose",),
        shapes="same",
        min_dims=2,
    ),
    OpInfo(
        "lax.transpose[perm]",
        lambda x: lax.transpose(x, (1, 2, 0)),
        lambda x: np.transpose(x, (1, 2, 0)),
        (F,),
        ("transpose",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "lax.squeeze",
        lambda x: lax.squeeze(x, (1, -1)),
        lambda x: np.squeeze(x, (1, 3)),
        (F,),
        ("squeeze",),
        shapes=((3, 1, 2, 1),),
    ),
    OpInfo(
        "lax.squeeze[all]",
        lambda x: lax.squeeze(x, (0,)),
        lambda x: np.squeeze(x, 0),
        (F,),
        ("squeeze",),
        shapes=((1,),),
    ),
    OpInfo(
        "lax.broadcast_in_dim[inner]",
        lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (0, 2)),
        lambda x: np.broadcast_to(np.asarray(x)[:, None, :], (3, 2, 4)),
        (F,),
        ("broadcast_in_dim",),
        shapes=((3, 1),),
    ),
    OpInfo(
        "lax.reshape[split]",
        lambda x: lax.reshape(x, (2, 3, 2)),
        lambda x: np.reshape(x, (2, 3, 2)),
        (F,),
        ("reshape",),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.concatenate",
        lambda x, y: lax.concatenate([x, y], 0),
        lambda x, y: np.concatenate([x, y], 0),
        (F, F),
        ("concatenate",),
        shapes="same",
        min_dims=1,
    ),
    OpInfo(
        "lax.concatenate[last]",
        lambda x, y, z: lax.concatenate([x, y, z], -1),
        lambda x, y, z: np.concatenate([x, y, z], -1),
        (F, F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 1), (2, 2)),
    ),
    OpInfo(
        "lax.slice",
        lambda x: lax.slice(x, (1, 0), (4, 6), (2, 3)),
        lambda x: np.asarray(x)[1:4:2, 0:6:3],
        (F,),
        ("slice",),
        shapes=((5, 6),),
    ),
    OpInfo(
        "lax.slice[unit]",
        lambda x: lax.slice(x, (0, 1, 1), (2, 3, 4)),
        lambda x: np.asarray(x)[0:2, 1:3, 1:4],
        (F,),
        ("slice",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "lax.pad",
        lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))),
        lambda x, v: _np_pad(x, v, ((1, 2, 1), (-1, 0, 0))),
        (F, F),
        ("pad",),
        shapes=((3, 4), ()),
    ),
    OpInfo(
        "lax.pad[crop]",
        lambda x, v: lax.pad(x, v, ((-2, 1, 2),)),
        lambda x, v: _np_pad(x, v, ((-2, 1, 2),)),
        (F, F),
        ("pad",),
        shapes=((3,), ()),
    ),
    OpInfo(
        "lax.rev",
        lambda x: lax.rev(x, (0,)),
        lambda x: np.flip(x, 0),
        (F,),
        ("rev",),
        shapes="same",
        min_dims=1,
    ),
    OpInfo(
        "lax.rev[2]",
        lambda x: lax.rev(x, (0, -1)),
        lambda x: np.flip(x, (0, 2)),
        (F,),
        ("rev",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "lax.iota",
        lambda: lax.iota(np.int64, 5),
        lambda: np.arange(5),
        (),
        ("iota",),
        shapes=(),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.iota[mul]",
        lambda x: lax.mul(x, lax.iota(x.dtype, x.shape[-1], x.ndim - 1, x.shape)),
        lambda x: x * np.arange(np.shape(x)[-1]).astype(np.asarray(x).dtype),
        (F,),
        ("iota", "mul"),
        shapes="same",
        min_dims=1,
    ),
    OpInfo(
        "lax.dot_general",
        lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
        np.matmul,
        (F, F),
        ("dot_general",),
        shapes=((3, 4), (4, 2)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.dot_general[vec]",
        lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))),
        np.dot,
        (F, F),
        ("dot_general",),
        shapes=((4,), (4,)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.dot_general[outer]",
        lambda x, y: lax.dot_general(x, y, (((), ()), ((), ()))),
        np.multiply.outer,
        (F, F),
        ("dot_general",),
        shapes=((3,), (2,)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.dot_general[batch]",
        lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
        lambda x, y: np.einsum("bij,bjk->bik", x, y),
        (F, F),
        ("dot_general",),
        shapes=((2, 3, 4), (2, 4, 5)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.dot_general[general]",
        lambda x, y: lax.dot_general(x, y, (((0, 2), (2, 0)), ((1,), (1,)))),
        lambda x, y: np.einsum("ibj,jbi->b", x, y),
        (F, F),
        ("dot_general",),
        shapes=((4, 2, 3), (3, 2, 4)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.dot_general[free]",
        lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((), ()))),
        lambda x, y: np.einsum("ia,bic->abc", x, y),
        (F, F),
        ("dot_general",),
        shapes=((3, 2), (4, 3, 2)),
        rtol=1e-5,
    ),
    # NOTE: sort is continuous but only piecewise smooth (a kink where two values swap).
    OpInfo(
        "lax.sort",
        lambda x: lax.sort(x, -1),
        lambda x: np.sort(x, -1),
        (F,),
        ("sort",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.sort[axis0]",
        lambda x: lax.sort(x, 0),
        lambda x: np.sort(x, 0),
        (F,),
        ("sort",),
        shapes=((4, 3),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.sort[multi]",
        lambda k, v: lax.sort_multi([k, v], 0, 1)[1],
        lambda k, v: _np_lexsort_take([k], v, 0),
        (F, F),
        ("sort",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.sort[keys2]",
        lambda k1, k2, v: lax.sort_multi([k1, k2, v], -1, 2)[2],
        lambda k1, k2, v: _np_lexsort_take([k1, k2], v, -1),
        (INT, F, F),
        ("sort",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.argsort",
        lambda x: lax.argsort(x, -1),
        lambda x: np.argsort(x, -1, kind="stable").astype(np.int64),
        (F,),
        ("sort",),
        shapes="same",
        min_dims=1,
        grad=False,
    ),
    OpInfo(
        "lax.sort[bool]",
        lambda x: lax.sort(x, 0),
        lambda x: np.sort(x, 0),
        (BOOL,),
        ("sort",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.bool_,),
    ),
]

# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

_REDUCTIONS: list[OpInfo] = [
    OpInfo(
        "lax.reduce_sum[last]",
        lambda x: lax.reduce_sum(x, (x.ndim - 1,)),
        lambda x: np.sum(x, -1),
        (F,),
        ("reduce_sum",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_sum[all]",
        lambda x: lax.reduce_sum(x, tuple(range(x.ndim))),
        lambda x: np.sum(x),
        (F,),
        ("reduce_sum",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    # NOTE: max/min are piecewise smooth: kinks at ties, kept away by avoid_ties.
    OpInfo(
        "lax.reduce_max",
        lambda x: lax.reduce_max(x, (0,)),
        lambda x: np.max(x, 0),
        (F,),
        ("reduce_max",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_max[02]",
        lambda x: lax.reduce_max(x, (0, 2)),
        lambda x: np.max(x, (0, 2)),
        (F,),
        ("reduce_max",),
        shapes=((3, 2, 4),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_min",
        lambda x: lax.reduce_min(x, (x.ndim - 1,)),
        lambda x: np.min(x, -1),
        (F,),
        ("reduce_min",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_prod",
        lambda x: lax.reduce_prod(x, (0,)),
        lambda x: np.prod(x, 0),
        (F,),
        ("reduce_prod",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_prod[all]",
        lambda x: lax.reduce_prod(x, tuple(range(x.ndim))),
        lambda x: np.prod(x),
        (F,),
        ("reduce_prod",),
        shapes=((2, 3),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.argmax",
        lambda x: lax.argmax(x, -1),
        lambda x: np.argmax(x, -1).astype(np.int64),
        (F,),
        ("argmax",),
        shapes="same",
        min_dims=1,
        grad=False,
    ),
    OpInfo(
        "lax.argmax[int32]",
        lambda x: lax.argmax(x, 0, np.int32),
        lambda x: np.argmax(x, 0).astype(np.int32),
        (INT,),
        ("argmax",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.argmin",
        lambda x: lax.argmin(x, 0),
        lambda x: np.argmin(x, 0).astype(np.int64),
        (F,),
        ("argmin",),
        shapes="same",
        min_dims=1,
        grad=False,
    ),
    OpInfo(
        "lax.cumsum",
        lambda x: lax.cumsum(x, 0),
        _np_cumulative(np.cumsum, 0),
        (F,),
        ("cumsum",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumsum[reverse]",
        lambda x: lax.cumsum(x, -1, reverse=True),
        _np_cumulative(np.cumsum, -1, True),
        (F,),
        ("cumsum",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumprod",
        lambda x: lax.cumprod(x, -1),
        _np_cumulative(np.cumprod, -1),
        (F,),
        ("cumprod",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumprod[reverse]",
        lambda x: lax.cumprod(x, 0, reverse=True),
        _np_cumulative(np.cumprod, 0, True),
        (F,),
        ("cumprod",),
        shapes=((5, 2),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cummax",
        lambda x: lax.cummax(x, 0),
        _np_cumulative(np.maximum.accumulate, 0),
        (F,),
        ("cummax",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.cummin",
        lambda x: lax.cummin(x, -1),
        _np_cumulative(np.minimum.accumulate, -1),
        (F,),
        ("cummin",),
        shapes="same",
        min_dims=1,
        avoid_ties=True,
    ),
    OpInfo(
        "lax.cummin[reverse]",
        lambda x: lax.cummin(x, 0, reverse=True),
        _np_cumulative(np.minimum.accumulate, 0, True),
        (F,),
        ("cummin",),
        shapes=((5, 2),),
        avoid_ties=True,
    ),
]

# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------

_INDEXING: list[OpInfo] = [
    OpInfo(
        "lax.dynamic_slice",
        lambda x, i, j: lax.dynamic_slice(x, [i, j], (2, 3)),
        lambda x, i, j: _np_dynamic_slice(x, (i, j), (2, 3)),
        (F, const(np.array(1)), const(np.array(2))),
        ("dynamic_slice",),
        shapes=((4, 5), (), ()),
    ),
    OpInfo(
        "lax.dynamic_slice[clamp]",
        lambda x, i, j: lax.dynamic_slice(x, [i, j], (2, 3)),
        lambda x, i, j: _np_dynamic_slice(x, (i, j), (2, 3)),
        (F, const(np.array(-1, np.int32)), const(np.array(7))),
        ("dynamic_slice",),
        shapes=((4, 5), (), ()),
    ),
    OpInfo(
        "lax.dynamic_update_slice",
        lambda x, u, i, j: lax.dynamic_update_slice(x, u, [i, j]),
        lambda x, u, i, j: _np_dynamic_update_slice(x, u, (i, j)),
        (F, F, const(np.array(2)), const(np.array(1))),
        ("dynamic_update_slice",),
        shapes=((4, 5), (2, 3), (), ()),
    ),
    OpInfo(
        "lax.dynamic_update_slice[clamp]",
        lambda x, u, i: lax.dynamic_update_slice(x, u, [i]),
        lambda x, u, i: _np_dynamic_update_slice(x, u, (i,)),
        (F, F, const(np.array(9, np.uint8))),
        ("dynamic_update_slice",),
        shapes=((5,), (2,), ()),
    ),
    OpInfo(
        "lax.gather",
        lambda x, i: lax.gather(x, [i], (0,)),
        lambda x, i: np.asarray(x)[i],
        (F, const(_G_IDX)),
        ("gather",),
        shapes=((4, 3), (2, 2)),
    ),
    OpInfo(
        "lax.gather[2axes]",
        lambda x, i, j: lax.gather(x, [i, j], (0, 2)),
        lambda x, i, j: np.moveaxis(np.asarray(x), (0, 2), (0, 1))[i, j],
        (F, const(_G_IDX), const(np.array([[4, 0], [1, -2]]))),
        ("gather",),
        shapes=((4, 3, 5), (2, 2), (2, 2)),
    ),
    OpInfo(
        "lax.gather[clip]",
        lambda x, i: lax.index_take(x, i, 1, mode="clip"),
        lambda x, i: _np_index_take_clip(x, i, 1),
        (F, const(np.array([5, -7, 1]))),
        ("gather",),
        shapes=((2, 4), (3,)),
    ),
    OpInfo(
        "lax.scatter_add",
        lambda x, u, i: lax.scatter_add(x, u, [i], (0,)),
        _np_scatter(np.add),
        (F, F, const(_S_IDX)),
        ("scatter_add",),
        shapes=((4, 3), (3, 3), (3,)),
    ),
    OpInfo(
        "lax.scatter_add[axis1]",
        lambda x, u, i: lax.scatter_add(x, u, [i], (1,)),
        _np_scatter_add_axis1,
        (F, F, const(_S_IDX2)),
        ("scatter_add",),
        shapes=((3, 4), (2, 2, 3), (2, 2)),
    ),
    OpInfo(
        "lax.scatter",
        lambda x, u, i: lax.scatter(x, u, [i], (0,)),
        _np_scatter(lambda old, new: new),
        (F, F, const(_S_IDX)),
        ("scatter",),
        shapes=((4, 3), (3, 3), (3,)),
    ),
    OpInfo(
        "lax.scatter_mul",
        lambda x, u, i: lax.scatter_mul(x, u, [i], (0,)),
        _np_scatter(np.multiply),
        (F, F, const(_S_IDX)),
        ("scatter_mul",),
        shapes=((4, 3), (3, 3), (3,)),
        rtol=1e-5,
    ),
    # NOTE: min/max are piecewise smooth: kinks at ties, kept away by avoid_ties.
    OpInfo(
        "lax.scatter_min",
        lambda x, u, i: lax.scatter_min(x, u, [i], (0,)),
        _np_scatter(np.minimum),
        (F, F, const(_S_IDX)),
        ("scatter_min",),
        shapes=((4, 3), (3, 3), (3,)),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.scatter_max",
        lambda x, u, i: lax.scatter_max(x, u, [i], (0,)),
        _np_scatter(np.maximum),
        (F, F, const(_S_IDX)),
        ("scatter_max",),
        shapes=((4, 3), (3, 3), (3,)),
        avoid_ties=True,
    ),
]

# jax.lax functions functrace composes from primitives (lax/composites.py)
_COMPOSITES: list[OpInfo] = [
    OpInfo("lax.asin", lax.asin, np.arcsin, (UNIT,), ("atan2", "sqrt"), shapes="same"),
    OpInfo("lax.acos", lax.acos, np.arccos, (UNIT,), ("atan2", "sqrt"), shapes="same"),
    OpInfo("lax.atan", lax.atan, np.arctan, (F,), ("atan2",), shapes="same"),
    OpInfo("lax.sinh", lax.sinh, np.sinh, (F,), ("expm1",), shapes="same"),
    OpInfo("lax.cosh", lax.cosh, np.cosh, (F,), ("exp",), shapes="same"),
    OpInfo("lax.square", lax.square, np.square, (F,), ("mul",), shapes="same"),
    OpInfo("lax.exp2", lax.exp2, np.exp2, (F,), ("pow",), shapes="same"),
    OpInfo("lax.is_finite", lax.is_finite, np.isfinite, (F,), ("lt",), shapes="same", grad=False),
]

ROWS: list[OpInfo] = _SHAPES + _REDUCTIONS + _INDEXING + _COMPOSITES
