"""Op-table rows: functrace.numpy indexing rows: x[idx] and x.at[idx] updates.

Index arrays are baked into the functions (module constants), so they stay concrete
constants under every transformation. Plain NumPy arrays have no ``.at``: the update
rows use ``fnp.at(x)[idx]``, which is the same API for arrays and tracers. The NumPy
references use a copy plus assignment or ``ufunc.at`` (repeated indices: the last
assignment wins, the ufuncs combine every update).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from op_db import INT, POS, UNIT, Arg, F, OpInfo, const

_REPEATS = np.array([0, 0, 2, -1])
_MASK = np.array([True, False, True])
_MASK2 = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])
_ALONG = np.array([[2, 0], [1, 1], [0, 2], [2, 2]])  # indices along axis 0 of a (3, 4) array
_OUT_OF_RANGE = np.array([0, 5, -1, -7, 2, 0])  # updates at 5 and -7 are dropped (as JAX)
_IN_RANGE = (_OUT_OF_RANGE >= -3) & (_OUT_OF_RANGE < 3)


def _get(name: str, idx: Any, shape: tuple[int, ...], prims: tuple[str, ...]) -> OpInfo:
    return OpInfo(
        name, lambda x: x[idx], lambda x: np.asarray(x)[idx], (F,), prims, shapes=(shape,)
    )


def _np_fill_read(x: Any, idx: tuple[Any, ...], fill: float) -> np.ndarray:
    """``x[idx]`` with ``fill`` where an integer index is outside ``[-n, n)``: NumPy
    reads through indices sent into range, then the out-of-range positions are set."""
    x = np.asarray(x)
    read, bad, ax = [], [], 0
    for it in idx:
        if isinstance(it, slice):
            read.append(it)
        else:
            i, n = np.asarray(it), x.shape[ax]
            ok = (i >= -n) & (i < n)
            read.append(np.where(ok, i, 0))
            bad.append(~ok)
        ax += 1
    out = x[tuple(read)]
    # the drawn index arrays (and ints) are adjacent here: their broadcast shape sits
    # where the first of them is, after the leading int
    mask = np.broadcast_arrays(*bad)[0].copy()
    for b in bad[1:]:
        mask = mask | b
    pos = next(k for k, it in enumerate(idx) if not isinstance(it, slice))
    mask = mask.reshape(mask.shape + (1,) * (out.ndim - pos - mask.ndim))
    return np.where(mask, fill, out)


def _np_update(op: str, idx: Any, keep: Any = None) -> Any:
    def ref(x: Any, v: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        v = np.asarray(v).astype(out.dtype)
        if keep is not None:  # the updates .at drops (indices out of range)
            idx_, v = idx[keep], v[keep]
            return _np_update(op, idx_)(out, v)
        if op == "set":
            out[idx] = v
        else:
            {
                "add": np.add,
                "mul": np.multiply,
                "min": np.minimum,
                "max": np.maximum,
                "divide": np.divide,
                "power": np.power,
            }[op].at(out, idx, v)
        return out

    return ref


def _at(
    name: str,
    op: str,
    idx: Any,
    shapes: tuple[tuple[int, ...], ...],
    prims: tuple[str, ...],
    **kw: Any,
) -> OpInfo:
    if len(shapes) == 1:  # a constant scalar value
        value = kw.pop("value")
        return OpInfo(
            name,
            lambda x: getattr(fnp.at(x)[idx], op)(value),
            lambda x: _np_update(op, idx)(x, value),
            (F,),
            prims,
            shapes=shapes,
            **kw,
        )
    return OpInfo(
        name,
        lambda x, v: getattr(fnp.at(x)[idx], op)(v),
        _np_update(op, idx),
        (F, F),
        prims,
        shapes=shapes,
        **kw,
    )


ROWS: list[OpInfo] = [
    OpInfo(  # repeated indices divide repeatedly (np.divide.at)
        "at_divide_repeats",
        lambda x, v: fnp.at(x)[_REPEATS].divide(v),
        _np_update("divide", _REPEATS),
        (F, Arg(domain=(0.5, 3.0))),  # divided up to three times: v**-3 stays moderate
        ("scatter_mul", "div"),
        shapes=((3, 4), (4, 4)),
    ),
    OpInfo(  # repeated indices multiply their exponents (np.power.at)
        "at_power_repeats",
        lambda x, v: fnp.at(x)[_REPEATS].power(v),
        _np_update("power", _REPEATS),
        (POS, UNIT),
        ("scatter_mul", "pow"),
        shapes=((3, 4), (4, 4)),
    ),
    # -- basic indexing: reshape / rev / slice / squeeze ------------------------------
    _get("index_int", 1, (3, 4), ("slice", "squeeze")),
    _get("index_negative_int", (-1, -2), (3, 4), ("slice", "squeeze")),
    _get("index_slices", (slice(1, 3), slice(None, None, 2)), (3, 4), ("slice",)),
    _get(
        "index_negative_steps", (slice(None, None, -1), slice(3, 0, -2)), (3, 4), ("rev", "slice")
    ),
    _get(
        "index_none_ellipsis", (None, Ellipsis, 1, None), (2, 3, 4), ("reshape", "slice", "squeeze")
    ),
    # -- advanced indexing: gather (+ transpose) -------------------------------------
    _get("index_int_array_repeats", _REPEATS, (3, 4), ("gather",)),
    _get("index_int_list", ([2, 0],), (3, 4), ("gather",)),
    _get(
        "index_adv_adjacent",
        (slice(None), [0, 2, 2], [1, 0, 3]),
        (2, 3, 4),
        ("gather", "transpose"),
    ),
    _get("index_adv_separated", ([1, 0], slice(None), [3, 3]), (2, 3, 4), ("gather",)),
    _get("index_adv_broadcast", ([[0], [2]], [1, 0, 1]), (3, 4), ("gather",)),
    _get("index_int_slice_array", (1, slice(None, None, -1), [0, 2]), (2, 3, 4), ("rev", "gather")),
    _get("index_bool_mask", _MASK, (3, 4), ("gather",)),
    _get("index_bool_mask_2d", _MASK2, (3, 4), ("gather",)),
    OpInfo(
        "at_get",
        lambda x: fnp.at(x)[[1, -1]].get(),
        lambda x: np.asarray(x)[[1, -1]],
        (F,),
        ("gather",),
        shapes=((3, 4),),
    ),
    # -- functional updates: dynamic_update_slice / scatter family --------------------
    _at("at_set_window", "set", (slice(1, 3), 2), ((3, 4), (2,)), ("dynamic_update_slice",)),
    _at("at_set_int_scalar", "set", 1, ((3, 4),), ("dynamic_update_slice",), value=2.5),
    _at(
        "at_set_strided",
        "set",
        (slice(None, None, -2), slice(1, None, 2)),
        ((3, 4), (2, 2)),
        ("scatter",),
    ),
    _at("at_set_repeats", "set", [0, 2, 0], ((3, 4), (3, 4)), ("scatter",)),
    _at("at_set_mask", "set", _MASK, ((3, 4), (4,)), ("scatter",)),
    _at("at_add_repeats", "add", _REPEATS, ((3, 4), (4, 4)), ("scatter_add",)),
    _at(
        "at_add_window",
        "add",
        (slice(None), slice(1, 3)),
        ((3, 4), (3, 2)),
        ("dynamic_update_slice", "add"),
    ),
    _at(
        "at_add_adv_separated",
        "add",
        ([1, 1], slice(None), [0, 3]),
        ((2, 3, 4), (2, 3)),
        ("scatter_add",),
    ),
    _at(
        "at_add_scalar_strided",
        "add",
        (slice(None), slice(None, None, -3)),
        ((3, 4),),
        ("scatter_add",),
        value=2.0,
    ),
    OpInfo(
        "at_set_out_of_range",
        lambda x, v: fnp.at(x)[_OUT_OF_RANGE].set(v),
        _np_update("set", _OUT_OF_RANGE, _IN_RANGE),
        (F, F),
        ("scatter",),
        shapes=((3, 4), (6, 4)),
    ),
    OpInfo(
        "at_add_out_of_range",
        lambda x, v: fnp.at(x)[_OUT_OF_RANGE].add(v),
        _np_update("add", _OUT_OF_RANGE, _IN_RANGE),
        (F, F),
        ("scatter_add",),
        shapes=((3, 4), (6, 4)),
    ),
    _at("at_mul", "mul", [2, 0], ((3, 4), (2, 4)), ("scatter_mul",)),
    _at("at_mul_repeats", "mul", [1, 1, 2], ((3, 4), (3, 1)), ("scatter_mul",)),
    _at(
        "at_min",
        "min",
        ([0, 2], [3, 1]),
        ((3, 4), (2,)),
        ("scatter_min",),
        avoid_ties=True,
        grad_order=1,
    ),
    _at(
        "at_max",
        "max",
        (slice(None), [0, 2]),
        ((3, 4), (3, 2)),
        ("scatter_max",),
        avoid_ties=True,
        grad_order=1,
    ),
    # -- take / take_along_axis -------------------------------------------------------
    OpInfo(
        "take",
        lambda x: fnp.take(x, [2, 0, 2], axis=1),
        lambda x: np.take(x, [2, 0, 2], axis=1),
        (F,),
        ("gather",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "take_flat",
        lambda x: fnp.take(x, [[0, 5], [11, 5]]),
        lambda x: np.take(x, [[0, 5], [11, 5]]),
        (F,),
        ("reshape", "gather"),
        shapes=((3, 4),),
    ),
    OpInfo(
        "take_modes",
        lambda x: (
            fnp.take(x, [-1, 7], axis=0, mode="wrap") + fnp.take(x, [-1, 7], axis=0, mode="clip")
        ),
        lambda x: (
            np.take(x, [-1, 7], axis=0, mode="wrap") + np.take(x, [-1, 7], axis=0, mode="clip")
        ),
        (F,),
        ("gather",),
        shapes=((3, 4),),
    ),
    OpInfo(  # drawn indices in [-5, 5] along an axis of 3: some out of range
        "take_fill",
        lambda x, i: fnp.take(x, i, axis=1, mode="fill", fill_value=0.5),
        lambda x, i: _np_fill_read(x, (slice(None), i), 0.5),
        (F, INT),
        ("gather", "select_n"),
        shapes=((2, 3), (4,)),
    ),
    OpInfo(  # the fill mask placed by the index structure: an int, a slice, drawn indices
        "at_get_fill",
        lambda x, i, j: fnp.at(x)[1, i, :, j].get(mode="fill", fill_value=-1.0),
        lambda x, i, j: _np_fill_read(x, (1, i, slice(None), j), -1.0),
        (F, INT, INT),
        ("gather", "select_n"),
        shapes=((2, 4, 2, 3), (3, 1), (2,)),
    ),
    OpInfo(
        "take_along_axis",
        lambda x, i: fnp.take_along_axis(x, i, axis=0),
        lambda x, i: np.take_along_axis(x, i, axis=0),
        (F, const(_ALONG[:, :1].T)),
        ("gather",),
        shapes=((3, 4), (1, 4)),
    ),
    OpInfo(
        "take_along_axis_broadcast",
        lambda x: fnp.take_along_axis(x, _ALONG.T, axis=0),
        lambda x: np.take_along_axis(x, _ALONG.T, axis=0),
        (F,),
        ("gather",),
        shapes=((3, 1),),
    ),
]
