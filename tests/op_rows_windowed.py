"""Op-table rows: the windowed reductions (``functrace/lax/windowed.py``) and
``cumlogsumexp``.

Shapes are fixed per row (a window must fit its operand). The NumPy references
fold each window element by element in loops, written independently of the impls.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

import functrace.lax as lax
import functrace.numpy as fnp
from op_db import F, OpInfo


def _dil(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _taps(
    shape: tuple[int, ...],
    wd: tuple[int, ...],
    ws: tuple[int, ...],
    pad: Any,
    bd: tuple[int, ...] | None = None,
    wdil: tuple[int, ...] | None = None,
) -> tuple[tuple[int, ...], Callable[[tuple[int, ...]], list[tuple[int, ...] | None]]]:
    """Output shape, and for each output index the operand index of each window tap
    (None for padding or base-dilation holes), in row-major window order."""
    nd = len(shape)
    bd = bd or (1,) * nd
    wdil = wdil or (1,) * nd
    if isinstance(pad, str):
        pads = []
        for n, w, s, d in zip(shape, wd, ws, wdil):
            out = -(-n // s) if pad == "SAME" else None
            total = 0 if out is None else max((out - 1) * s + _dil(w, d) - n, 0)
            pads.append((total // 2, total - total // 2))
        pad = pads
    out_shape = tuple(
        (_dil(n, b) + lo + hi - _dil(w, d)) // s + 1
        for n, b, (lo, hi), w, d, s in zip(shape, bd, pad, wd, wdil, ws)
    )

    def taps(o: tuple[int, ...]) -> list[tuple[int, ...] | None]:
        res = []
        for k in itertools.product(*(range(w) for w in wd)):
            idx = []
            for oi, ki, s, d, (lo, _), b, n in zip(o, k, ws, wdil, pad, bd, shape):
                q = oi * s + ki * d - lo  # position in the dilated operand
                idx.append(q // b if q >= 0 and q % b == 0 and q // b < n else None)
            res.append(None if None in idx else tuple(idx))  # type: ignore[arg-type]
        return res

    return out_shape, taps


def _np_fold(op: Callable[[Any, Any], Any], init: Any, *window: Any, **kw: Any) -> Any:
    def ref(x: Any) -> np.ndarray:
        x = np.asarray(x)
        out_shape, taps = _taps(x.shape, *window, **kw)
        out = np.empty(out_shape, x.dtype)
        for o in np.ndindex(*out_shape):
            acc = x.dtype.type(init)
            for t in taps(o):
                if t is not None:
                    acc = x.dtype.type(op(acc, x[t]))
            out[o] = acc
        return out

    return ref


def _np_select_gather(is_max: bool, *window: Any, **kw: Any) -> Any:
    def ref(t: Any, x: Any) -> np.ndarray:
        t, x = np.asarray(t), np.asarray(x)
        out_shape, taps = _taps(x.shape, *window, **kw)
        out = np.zeros(out_shape, t.dtype)
        for o in np.ndindex(*out_shape):
            best = None
            for p in taps(o):
                if p is not None and (
                    best is None or (x[p] > x[best] if is_max else x[p] < x[best])
                ):
                    best = p
            if best is not None:
                out[o] = t[best]
        return out

    return ref


def _np_select_scatter(is_max: bool, *window: Any, **kw: Any) -> Any:
    def ref(s: Any, x: Any) -> np.ndarray:
        s, x = np.asarray(s), np.asarray(x)
        out_shape, taps = _taps(x.shape, *window, **kw)
        out = np.zeros(x.shape, np.float64)
        for o in np.ndindex(*out_shape):
            best = None
            for p in taps(o):
                if p is not None and (
                    best is None or (x[p] > x[best] if is_max else x[p] < x[best])
                ):
                    best = p
            if best is not None:
                out[best] += s[o]
        return out.astype(s.dtype)

    return ref


def _np_cumlogsumexp(axis: int, reverse: bool = False) -> Any:
    def ref(x: Any) -> np.ndarray:
        x = np.asarray(x)
        m = np.moveaxis(x, axis, 0).astype(np.float64)
        if reverse:
            m = m[::-1]
        out = np.empty_like(m)
        for i in range(m.shape[0]):
            out[i] = m[i] if i == 0 else np.logaddexp(out[i - 1], m[i])
        if reverse:
            out = out[::-1]
        return np.moveaxis(out, 0, axis).astype(x.dtype)

    return ref


def _with_neg_inf(x: Any) -> Any:
    """``x`` along axis 0 with -inf rows after its first row and at the end (a finite
    entry comes first, so every result is finite)."""
    ninf = lax.full_like(x[:1], -np.inf)
    return lax.concatenate([x[:1], ninf, x[1:], ninf], 0)


def _np_with_neg_inf(x: Any) -> np.ndarray:
    x = np.asarray(x)
    ninf = np.full_like(x[:1], -np.inf)
    return np.concatenate([x[:1], ninf, x[1:], ninf], 0)


_W_DIL = dict(bd=(2, 1), wdil=(1, 2))
_PAD_DIL = ((1, 0), (2, 1))

ROWS: list[OpInfo] = [
    OpInfo(
        "lax.reduce_window_sum[1d,strided,padded]",
        lambda x: lax.reduce_window_sum(x, (3,), (2,), ((1, 2),)),
        _np_fold(np.add, 0, (3,), (2,), ((1, 2),)),
        (F,),
        ("reduce_window_sum",),
        shapes=((7,),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window_sum[nchw,avg]",
        lambda x: lax.reduce_window_sum(x, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4.0,
        lambda x: (_np_fold(np.add, 0, (1, 1, 2, 2), (1, 1, 2, 2), ((0, 0),) * 4)(x) / 4.0).astype(
            np.asarray(x).dtype
        ),
        (F,),
        ("reduce_window_sum",),
        shapes=((2, 2, 4, 5),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window_sum[dilated]",
        lambda x: lax.reduce_window_sum(x, (2, 3), (1, 2), _PAD_DIL, (2, 1), (1, 2)),
        _np_fold(np.add, 0, (2, 3), (1, 2), _PAD_DIL, **_W_DIL),
        (F,),
        ("reduce_window_sum",),
        shapes=((3, 6),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window_max[1d]",
        lambda x: lax.reduce_window_max(x, (2,), (1,), "VALID"),
        _np_fold(np.maximum, -np.inf, (2,), (1,), ((0, 0),)),
        (F,),
        ("reduce_window_max", "select_and_gather_add", "select_and_scatter_add"),
        shapes=((6,),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_window_max[nchw,same]",
        lambda x: lax.reduce_window_max(x, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
        _np_fold(np.maximum, -np.inf, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
        (F,),
        ("reduce_window_max", "select_and_gather_add", "select_and_scatter_add"),
        shapes=((1, 2, 5, 4),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_window_max[dilated]",
        lambda x: lax.reduce_window_max(x, (2, 3), (1, 2), _PAD_DIL, (2, 1), (1, 2)),
        _np_fold(np.maximum, -np.inf, (2, 3), (1, 2), _PAD_DIL, **_W_DIL),
        (F,),
        ("reduce_window_max",),
        shapes=((3, 6),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_window_min[2d,padded]",
        lambda x: lax.reduce_window_min(x, (2, 2), (1, 2), ((1, 0), (0, 1))),
        _np_fold(np.minimum, np.inf, (2, 2), (1, 2), ((1, 0), (0, 1))),
        (F,),
        ("reduce_window_min", "select_and_gather_add", "select_and_scatter_add"),
        shapes=((3, 4),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.reduce_window[add,same]",
        lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 1), "SAME"),
        _np_fold(np.add, 0, (3, 2), (2, 1), "SAME"),
        (F,),
        ("reduce_window_sum",),
        shapes=((5, 3),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window[add,init=1,valid]",
        lambda x: lax.reduce_window(x, 1.0, fnp.add, (2, 2), None, "VALID"),
        _np_fold(np.add, 1, (2, 2), (1, 1), ((0, 0), (0, 0))),
        (F,),
        ("reduce_window_sum",),
        shapes=((3, 4),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window[max,init=0.5,padded]",
        lambda x: lax.reduce_window(x, 0.5, fnp.maximum, (3,), (2,), ((1, 1),)),
        _np_fold(np.maximum, 0.5, (3,), (2,), ((1, 1),)),
        (F,),
        ("reduce_window_max",),
        shapes=((6,),),
        avoid_ties=True,
        avoid=(0.5,),
    ),
    OpInfo(
        "lax.reduce_window[mul]",
        lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), ((0, 1), (1, 0))),
        _np_fold(np.multiply, 1, (2, 2), (1, 1), ((0, 1), (1, 0))),
        (F,),
        ("reduce_window",),
        shapes=((3, 3),),
        grad=False,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.reduce_window[lambda,dilated]",
        lambda x: lax.reduce_window(
            x, 0.0, lambda a, b: a * 0.5 + b * b, (2,), (1,), ((1, 0),), (2,), (2,)
        ),
        _np_fold(lambda a, b: a * 0.5 + b * b, 0, (2,), (1,), ((1, 0),), bd=(2,), wdil=(2,)),
        (F,),
        ("reduce_window",),
        shapes=((4,),),
        grad=False,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.select_and_gather_add[ge,dilated]",
        lambda t, x: lax.select_and_gather_add(
            t, x, "ge", (2, 3), (1, 2), _PAD_DIL, (2, 1), (1, 2)
        ),
        _np_select_gather(True, (2, 3), (1, 2), _PAD_DIL, **_W_DIL),
        (F, F),
        ("select_and_gather_add", "select_and_scatter_add"),
        shapes=((3, 6), (3, 6)),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.select_and_gather_add[le,nchw]",
        lambda t, x: lax.select_and_gather_add(t, x, "le", (1, 1, 2, 2), (1, 1, 1, 2)),
        _np_select_gather(False, (1, 1, 2, 2), (1, 1, 1, 2), ((0, 0),) * 4),
        (F, F),
        ("select_and_gather_add", "select_and_scatter_add"),
        shapes=((1, 2, 3, 4), (1, 2, 3, 4)),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.select_and_scatter_add[ge,padded]",
        lambda s, x: lax.select_and_scatter_add(s, x, "ge", (2, 2), (2, 1), ((1, 0), (0, 1))),
        _np_select_scatter(True, (2, 2), (2, 1), ((1, 0), (0, 1))),
        (F, F),
        ("select_and_scatter_add", "select_and_gather_add"),
        shapes=((2, 4), (3, 4)),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.select_and_scatter_add[le,dilated]",
        lambda s, x: lax.select_and_scatter_add(
            s, x, "le", (2, 3), (1, 2), _PAD_DIL, (2, 1), (1, 2)
        ),
        _np_select_scatter(False, (2, 3), (1, 2), _PAD_DIL, **_W_DIL),
        (F, F),
        ("select_and_scatter_add", "select_and_gather_add"),
        shapes=((5, 3), (3, 6)),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.cumlogsumexp",
        lambda x: lax.cumlogsumexp(x, 0),
        _np_cumlogsumexp(0),
        (F,),
        ("cumlogsumexp",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumlogsumexp[reverse]",
        lambda x: lax.cumlogsumexp(x, -1, reverse=True),
        _np_cumlogsumexp(-1, True),
        (F,),
        ("cumlogsumexp",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumlogsumexp[-inf]",
        lambda x: lax.cumlogsumexp(_with_neg_inf(x), 0),
        lambda x: _np_cumlogsumexp(0)(_np_with_neg_inf(x)),
        (F,),
        ("cumlogsumexp",),
        shapes=((3, 2),),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cumlogsumexp[-inf,reverse]",
        lambda x: lax.cumlogsumexp(lax.rev(_with_neg_inf(x), (0,)), 0, reverse=True),
        lambda x: _np_cumlogsumexp(0, True)(_np_with_neg_inf(x)[::-1]),
        (F,),
        ("cumlogsumexp",),
        shapes=((3, 2),),
        rtol=1e-5,
    ),
]
