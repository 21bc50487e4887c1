"""Op-table rows: ``lax.gather`` and the scatters in JAX's XLA form (dimension numbers,
``functrace/lax/xla_gather_scatter.py``), so every battery and the composition fuzzer
run them.

The references are NumPy loops over the index vectors, written from XLA's definition
independently of the implementation. Index arrays and dimension numbers are baked into
the lambdas; differentiated scatter rows use unique windows (``scatter`` keeps one
write per position, ``scatter_mul`` multiplies once).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.lax as lax
from op_db import F, OpInfo

_GDN, _SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
_ROWS = _GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_WIN = _GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
_SWIN = _SDN(
    update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1)
)
_BATCH = _GDN((1,), (1,), (1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))

_R_IDX = np.array([[2], [0], [2]])
# (2, 2) windows of a (3, 4) operand: in range, overlapping, past the end, negative
_W_IDX = np.array([[0, 2], [1, 1], [2, 3], [-1, 0]])
_W_UNIQUE = np.array([[0, 2], [1, 0], [0, 0]])  # in range, not overlapping
_W_DROP = np.array([[0, 2], [1, 0], [2, 0], [0, -1]])  # the last two are dropped


def _starts(idx: Any) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in row) for row in np.asarray(idx)]


def _fits(start: tuple[int, ...], shape: tuple[int, ...], size: tuple[int, ...]) -> bool:
    return all(0 <= s <= n - k for s, n, k in zip(start, shape, size))


def _clamped(
    start: tuple[int, ...], shape: tuple[int, ...], size: tuple[int, ...]
) -> tuple[int, ...]:
    return tuple(min(max(s, 0), n - k) for s, n, k in zip(start, shape, size))


def _np_windows(mode: str, fill: float = 0.0) -> Any:
    def ref(x: Any) -> np.ndarray:
        x = np.asarray(x)
        out = []
        for s in _starts(_W_IDX):
            if mode == "fill" and not _fits(s, x.shape, (2, 2)):
                out.append(np.full((2, 2), fill, x.dtype))
                continue
            a, b = _clamped(s, x.shape, (2, 2))
            out.append(x[a : a + 2, b : b + 2])
        return np.stack(out)

    return ref


def _np_scatter_windows(combine: Any, idx: np.ndarray, mode: str) -> Any:
    def ref(x: Any, u: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        for s, w in zip(_starts(idx), np.asarray(u)):
            if mode == "drop" and not _fits(s, out.shape, (2, 2)):
                continue
            a, b = _clamped(s, out.shape, (2, 2))
            out[a : a + 2, b : b + 2] = combine(out[a : a + 2, b : b + 2], w)
        return out

    return ref


def _np_batching(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return np.stack([x[0, 1], x[1, 2]])


ROWS: list[OpInfo] = [
    OpInfo(
        "lax.gather[xla,rows]",
        lambda x: lax.gather(x, _R_IDX, _ROWS, slice_sizes=(1, 4)),
        lambda x: np.asarray(x)[[2, 0, 2]],
        (F,),
        ("gather",),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.gather[xla,windows,clip]",
        lambda x: lax.gather(x, _W_IDX, _WIN, (2, 2), mode="clip"),
        _np_windows("clip"),
        (F,),
        ("gather",),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.gather[xla,windows,fill]",
        lambda x: lax.gather(x, _W_IDX, _WIN, (2, 2), mode="fill", fill_value=0.0),
        _np_windows("fill"),
        (F,),
        ("gather",),
        shapes=((3, 4),),
    ),
    OpInfo(
        "lax.gather[xla,batching]",
        lambda x: lax.gather(x, np.array([[1], [2]]), _BATCH, (1, 1, 4)),
        _np_batching,
        (F,),
        ("gather",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "lax.scatter_add[xla]",
        lambda x, u: lax.scatter_add(x, _W_IDX, u, _SWIN),
        _np_scatter_windows(np.add, _W_IDX, "drop"),
        (F, F),
        ("scatter_add",),
        shapes=((3, 4), (4, 2, 2)),
    ),
    OpInfo(
        "lax.scatter_add[xla,clip]",
        lambda x, u: lax.scatter_add(x, _W_IDX, u, _SWIN, mode="clip"),
        _np_scatter_windows(np.add, _W_IDX, "clip"),
        (F, F),
        ("scatter_add",),
        shapes=((3, 4), (4, 2, 2)),
    ),
    OpInfo(
        "lax.scatter[xla,drop]",
        lambda x, u: lax.scatter(x, _W_DROP, u, _SWIN),
        _np_scatter_windows(lambda old, new: new, _W_DROP, "drop"),
        (F, F),
        ("scatter",),
        shapes=((3, 4), (4, 2, 2)),
    ),
    OpInfo(
        "lax.scatter_mul[xla]",
        lambda x, u: lax.scatter_mul(x, _W_UNIQUE, u, _SWIN),
        _np_scatter_windows(np.multiply, _W_UNIQUE, "drop"),
        (F, F),
        ("scatter_mul",),
        shapes=((3, 4), (3, 2, 2)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.scatter_max[xla,clip]",
        lambda x, u: lax.scatter_max(x, _W_UNIQUE, u, _SWIN, mode="clip"),
        _np_scatter_windows(np.maximum, _W_UNIQUE, "clip"),
        (F, F),
        ("scatter_max",),
        shapes=((3, 4), (3, 2, 2)),
        avoid_ties=True,
    ),
]
