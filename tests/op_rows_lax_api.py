"""Op-table rows for the lax convenience functions JAX programs use (``select``,
``index_in_dim``, ``slice_in_dim``, ``dynamic_index_in_dim``, ``top_k``, ``reduce``,
``dot``) and for ``debug.callback`` (an effect that changes no value); each is built
on existing primitives, listed in the row. The NumPy references are written
independently of the implementations.
"""

from __future__ import annotations

import numpy as np

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace import ad_checkpoint, debug
from op_db import BOOL, INT, POS, F, OpInfo, _sp, const


def _max_and_index(x: object) -> object:
    def larger(a: object, b: object) -> object:
        pick = a[0] >= b[0]  # type: ignore[index]
        return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])  # type: ignore[index]

    index = lax.broadcasted_iota(np.int64, fnp.shape(x), 0)
    return lax.reduce((x, index), (-np.inf, np.int64(0)), larger, (0,))


def _np_polygamma_orders(x: np.ndarray) -> np.ndarray:
    return np.stack([_sp("polygamma", k, x) for k in (0, 1, 2)])


_scaled_sin = lax.composite(lambda x, *, k: lax.sin(x) * k, name="test.scaled_sin")


def _np_top_k_values(x: np.ndarray, k: int) -> np.ndarray:
    return -np.sort(-np.asarray(x), axis=-1, kind="stable")[..., :k]


def _remat_body(x: object, y: object) -> object:
    h = ad_checkpoint.checkpoint_name(fnp.tanh(x * y), "h")
    return fnp.sin(h) * x + h


def _remat_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    h = np.tanh(np.asarray(x) * y)
    return np.sin(h) * x + h


def _debug_sink(*_: object) -> None:
    """A silent debug callback (the debug.callback row checks it changes no value)."""


ROWS: list[OpInfo] = [
    OpInfo(
        "checkpoint_name",
        lambda x: ad_checkpoint.checkpoint_name(fnp.sin(x), "s") * 2.0,
        lambda x: 2.0 * np.sin(x),
        (F,),
        ("name", "sin", "mul"),
    ),
    OpInfo(
        "checkpoint",
        ft.checkpoint(_remat_body),
        _remat_np,
        (F, F),
        ("checkpoint", "name", "tanh", "sin", "mul", "add"),
    ),
    OpInfo(
        "checkpoint[save_only_these_names]",
        ft.checkpoint(_remat_body, policy=ft.checkpoint_policies.save_only_these_names("h")),
        _remat_np,
        (F, F),
        ("checkpoint", "name", "tanh", "sin", "mul", "add"),
    ),
    OpInfo(
        "checkpoint[dots_saveable]",
        ft.checkpoint(
            lambda x, w: fnp.tanh(x @ w) @ w, policy=ft.checkpoint_policies.dots_saveable
        ),
        lambda x, w: np.tanh(np.asarray(x) @ w) @ w,
        (F, F),
        ("checkpoint", "dot_general", "tanh"),
        shapes=((2, 3), (3, 3)),
        rtol=1e-5,
    ),
    OpInfo(
        "debug.callback",
        lambda x: (debug.callback(_debug_sink, x), x * 2.0)[1],
        lambda x: 2.0 * np.asarray(x),
        (F,),
        ("debug_callback", "mul"),
    ),
    OpInfo(
        "lax.select",
        lambda p, x, y: lax.select(p, x, y),
        lambda p, x, y: np.where(p, x, y),
        (BOOL, F, F),
        ("select_n",),
        shapes="same",
    ),
    OpInfo(
        "lax.index_in_dim",
        lambda x: lax.index_in_dim(x, -1, axis=1, keepdims=False),
        lambda x: np.asarray(x)[:, -1],
        (F,),
        ("slice", "squeeze"),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.slice_in_dim",
        lambda x: lax.slice_in_dim(x, 1, None, stride=2, axis=1),
        lambda x: np.asarray(x)[:, 1::2],
        (F,),
        ("slice",),
        shapes=((3, 5),),
    ),
    OpInfo(
        "lax.dynamic_index_in_dim",
        lambda x, i: lax.dynamic_index_in_dim(x, i, axis=0, keepdims=False),
        lambda x, i: np.asarray(x)[int(i)],
        (F, const(np.array(-2))),
        ("dynamic_slice", "squeeze"),
        shapes=((4, 3), ()),
    ),
    OpInfo(
        "lax.top_k",
        lambda x: lax.top_k(x, 2)[0],
        lambda x: _np_top_k_values(x, 2),
        (F,),
        ("sort",),
        shapes=((3, 5),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce[add]",
        lambda x: lax.reduce(x, 0.0, lax.add, (1,)),
        lambda x: np.sum(x, axis=1),
        (F,),
        ("reduce_sum", "add"),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.reduce[max]",
        lambda x: lax.reduce(x, -np.inf, lax.max, (0,)),
        lambda x: np.max(x, axis=0),
        (F,),
        ("reduce_max", "max"),
        shapes=((3, 4),),
    ),
    OpInfo(
        # a computation lax does not recognise: pairwise rounds, vmapped over the pairs
        "lax.reduce[logaddexp]",
        lambda x: lax.reduce(x, -np.inf, fnp.logaddexp, (1,)),
        lambda x: np.logaddexp.reduce(np.asarray(x), axis=1),
        (F,),
        ("slice", "concatenate"),
        shapes=((3, 5),),
    ),
    OpInfo(
        # two operands reduced together: the larger value and its index
        "lax.reduce[variadic]",
        lambda x: _max_and_index(x)[0],
        lambda x: np.max(x, axis=0),
        (F,),
        ("select_n", "ge"),
        shapes=((5, 3),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce[variadic,index]",
        lambda x: _max_and_index(x)[1],
        lambda x: np.argmax(x, axis=0),
        (F,),
        ("select_n", "ge"),
        shapes=((5, 3),),
        avoid_ties=True,
        grad=False,
    ),
    OpInfo(
        # bitwise and/or of integers: the pairwise rounds (booleans keep their reduction)
        "lax.reduce[bitwise_or,int]",
        lambda x: lax.reduce(x, np.int64(0), lax.bitwise_or, (1,)),
        lambda x: np.bitwise_or.reduce(np.asarray(x), axis=1),
        (INT,),
        ("or",),
        shapes=((3, 5),),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        # an array of orders: one primitive per distinct order
        "lax.polygamma[orders]",
        lambda x: lax.polygamma(np.array([[0.0], [1.0], [2.0]]), x),
        _np_polygamma_orders,
        (POS,),
        ("polygamma", "select_n"),
        shapes=((3,),),
    ),
    OpInfo(
        # a named composite runs its decomposition (keyword arguments static)
        "lax.composite",
        lambda x: _scaled_sin(x, k=2.0),
        lambda x: 2.0 * np.sin(x),
        (F,),
        ("sin", "mul"),
    ),
    OpInfo(
        # the same bits read as another dtype: the last axis grows with the item count
        "Array.view[uint8]",
        lambda x: x.view(np.uint8),
        lambda x: np.asarray(x).view(np.uint8),
        (F,),
        ("bitcast_convert_type", "reshape"),
        grad=False,
        min_dims=1,
    ),
    OpInfo(
        "lax.dot",
        lambda x, y: lax.dot(x, y, precision=lax.Precision.HIGHEST),
        np.dot,
        (F, F),
        ("dot_general",),
        shapes=((3, 4), (4,)),
        rtol=1e-5,
    ),
]
