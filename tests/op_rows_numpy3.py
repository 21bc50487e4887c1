"""Op-table rows: NumPy names users call (the Trust issue, item 9).

sort/argsort/partition/argpartition, isclose/allclose, angle, real_if_close,
rollaxis, convolve (full/same/valid), the remaining einsum forms (the
interleaved (operand, sublist) form, labels repeated within an operand (traces,
diagonals), ellipsis and implicit outputs together with them, optimize=) and the
statistics average, ptp, nanmax, nanmin and median.
"""

from __future__ import annotations

import numpy as np

import functrace.numpy as fnp
from op_db import INT, POS, Arg, F, OpInfo

F64 = (np.float64,)
I64 = (np.int64,)
SMALL = Arg(domain=(-3.0, 3.0))  # offsets scaled by 1e-5 below: some close, some not


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _stable_argsort(x, axis=-1):
    return np.argsort(x, axis, kind="stable")


# ---------------------------------------------------------------------------
# Sorting
# ---------------------------------------------------------------------------

SORTING: list[OpInfo] = [
    _row("sort", fnp.sort, np.sort, prims=("sort",), min_dims=1, avoid_ties=True),
    _row(
        "sort_axis0",
        lambda x: fnp.sort(x, axis=0),
        lambda x: np.sort(x, axis=0),
        prims=("sort",),
        shapes=((4, 3),),
        avoid_ties=True,
    ),
    _row(
        "sort_axis_none",
        lambda x: fnp.sort(x, axis=None, kind="mergesort"),
        lambda x: np.sort(x, axis=None, kind="mergesort"),
        prims=("reshape", "sort"),
        avoid_ties=True,
    ),
    _row(
        "sort_stable_kw",
        lambda x: fnp.sort(x, -1, stable=True),
        lambda x: np.sort(x, -1, stable=True),
        prims=("sort",),
        min_dims=1,
        avoid_ties=True,
    ),
    _row(
        "sort_int",
        lambda x: fnp.sort(x, 0),
        lambda x: np.sort(x, 0),
        (INT,),
        ("sort",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    # a differentiable use: the top-2 sum along the last axis
    _row(
        "sort_top2",
        lambda x: fnp.sum(fnp.sort(x)[..., -2:], axis=-1),
        lambda x: np.sum(np.sort(x)[..., -2:], axis=-1),
        prims=("sort", "slice"),
        shapes=((3, 4),),
        avoid_ties=True,
    ),
    _row(
        "argsort",
        fnp.argsort,
        _stable_argsort,
        prims=("sort",),
        min_dims=1,
        grad=False,
    ),
    _row(
        "argsort_axis_none",
        lambda x: fnp.argsort(x, axis=None),
        lambda x: np.argsort(x, axis=None, kind="stable"),
        prims=("sort",),
        grad=False,
    ),
    # many ties: the order among equal keys is the stable one, eager and traced alike
    _row(
        "argsort_ties",
        lambda x: fnp.argsort(x, axis=0, kind="quicksort"),
        lambda x: _stable_argsort(x, 0),
        (Arg("int", (-1, 1)),),
        ("sort",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    # np.argsort / np.argpartition on a tracer dispatch to its methods
    _row(
        "numpy_argsort_dispatch",
        lambda x: np.argsort(x, axis=-1) + np.argpartition(x, 0, axis=-1),
        lambda x: 2 * _stable_argsort(x, -1),
        prims=("sort",),
        min_dims=1,
        grad=False,
        avoid_ties=True,
    ),
    # partition returns the sorted array: one of the arrangements NumPy allows
    _row(
        "partition",
        lambda x: fnp.partition(x, 1),
        lambda x: np.sort(x, -1),
        prims=("sort",),
        shapes=((3, 4),),
        avoid_ties=True,
    ),
    _row(
        "partition_kth_seq_axis_none",
        lambda x: fnp.partition(x, [0, -1], axis=None),
        lambda x: np.sort(x, axis=None),
        prims=("reshape", "sort"),
        shapes=((2, 3),),
        avoid_ties=True,
    ),
    _row(
        "argpartition",
        lambda x: fnp.argpartition(x, 2, axis=0),
        lambda x: _stable_argsort(x, 0),
        prims=("sort",),
        shapes=((4, 3),),
        grad=False,
    ),
]

# ---------------------------------------------------------------------------
# isclose, allclose, angle, real_if_close
# ---------------------------------------------------------------------------

CLOSE: list[OpInfo] = [
    _row(
        "isclose",
        lambda x, d: fnp.isclose(x, x + d * 1e-5),
        lambda x, d: np.isclose(x, x + d * 1e-5),
        (F, SMALL),
        ("sub", "abs", "le"),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "isclose_tolerances",
        lambda x, y: fnp.isclose(x, y, rtol=0.0, atol=1.5, equal_nan=True),
        lambda x, y: np.isclose(x, y, rtol=0.0, atol=1.5, equal_nan=True),
        (F, F),
        ("sub", "abs", "le"),
        grad=False,
    ),
    _row(
        "isclose_int",
        lambda x, y: fnp.isclose(x, y, atol=2),
        lambda x, y: np.isclose(x, y, atol=2),
        (INT, INT),
        ("convert_element_type", "le"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "allclose",
        lambda x, d: fnp.allclose(x, x + d * 1e-5),
        lambda x, d: np.allclose(x, x + d * 1e-5),
        (F, SMALL),
        ("le", "and"),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "allclose_atol",
        lambda x, y: fnp.allclose(x, y, atol=4.0),
        lambda x, y: np.allclose(x, y, atol=4.0),
        (F, F),
        ("le",),
        grad=False,
    ),
    _row("angle", fnp.angle, np.angle, prims=("atan2", "stop_gradient"), avoid=(0.0,)),
    _row(
        "angle_deg",
        lambda x: fnp.angle(x, deg=True),
        lambda x: np.angle(x, deg=True),
        prims=("atan2", "mul"),
        avoid=(0.0,),
    ),
    _row("angle_int", fnp.angle, np.angle, (INT,), ("atan2",), grad=False, dtypes=I64),
    _row("real_if_close", fnp.real_if_close, np.real_if_close),
]

# ---------------------------------------------------------------------------
# rollaxis
# ---------------------------------------------------------------------------

ROLLAXIS: list[OpInfo] = [
    _row(
        "rollaxis",
        lambda x: fnp.rollaxis(x, 2),
        lambda x: np.rollaxis(x, 2),
        prims=("transpose",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "rollaxis_start_end",
        lambda x: fnp.rollaxis(x, 0, 3),
        lambda x: np.rollaxis(x, 0, 3),
        prims=("transpose",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "rollaxis_negative",
        lambda x: fnp.rollaxis(x, -1, -2),
        lambda x: np.rollaxis(x, -1, -2),
        prims=("transpose",),
        shapes=((2, 3, 4),),
    ),
]

# ---------------------------------------------------------------------------
# convolve
# ---------------------------------------------------------------------------


def _conv_row(mode: str, shapes, **kw) -> OpInfo:
    return _row(
        f"convolve_{mode}_{'x'.join(str(s[0]) for s in shapes)}",
        lambda a, v: fnp.convolve(a, v, mode),
        lambda a, v: np.convolve(a, v, mode),
        (F, F),
        ("conv_general_dilated",),
        shapes=shapes,
        rtol=1e-5,
        **kw,
    )


CONVOLVE: list[OpInfo] = [
    _conv_row("full", ((5,), (3,))),
    _conv_row("same", ((5,), (4,))),
    _conv_row("valid", ((5,), (3,))),
    _conv_row("full", ((2,), (4,))),  # the shorter one first: NumPy swaps them
    _conv_row("same", ((2,), (5,))),
    _row(
        "convolve_int",
        lambda a, v: fnp.convolve(a, v, "same"),
        lambda a, v: np.convolve(a, v, "same"),
        (INT, INT),
        ("conv_general_dilated",),
        shapes=((4,), (3,)),
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# einsum: traces, diagonals, interleaved sublists, optimize=
# ---------------------------------------------------------------------------


def _einsum_row(name: str, fn, ref, shapes, prims=("slice",), **kw) -> OpInfo:
    kw.setdefault("rtol", 1e-5)
    return OpInfo(name, fn, ref, (F,) * len(shapes), tuple(prims), shapes=tuple(shapes), **kw)


def _spec_row(spec: str, *shapes, prims=("slice",), **kw) -> OpInfo:
    return _einsum_row(
        f"einsum[{spec}]",
        lambda *xs: fnp.einsum(spec, *xs),
        lambda *xs: np.einsum(spec, *xs),
        shapes,
        prims,
        **kw,
    )


EINSUM: list[OpInfo] = [
    # traces
    _spec_row("ii->", (3, 3), prims=("slice", "reduce_sum")),
    _spec_row("ii", (3, 3), prims=("slice", "reduce_sum")),  # implicit output: a trace
    _spec_row("...ii->...", (2, 3, 3), prims=("slice", "reduce_sum")),
    _spec_row("iji->j", (3, 2, 3)),
    # diagonals
    _spec_row("ii->i", (3, 3)),
    _spec_row("iij->ij", (2, 2, 3)),
    _spec_row("jii->ij", (4, 3, 3), prims=("slice", "transpose")),
    _spec_row("iii->i", (2, 2, 2)),
    _spec_row("...ii->...i", (2, 3, 3)),
    _spec_row("ii...->i...", (3, 3, 2)),
    # repeated labels combined with contractions and broadcasting
    _spec_row("ij,jj->i", (2, 3), (3, 3), prims=("slice", "dot_general")),
    _spec_row("ii,ij->j", (3, 3), (3, 2), prims=("slice", "dot_general")),
    _spec_row("ii,i->i", (1, 1), (3,), prims=("slice", "dot_general")),
    _spec_row("bii,bi->b", (2, 3, 3), (2, 3), prims=("slice", "dot_general")),
    # ellipsis broadcasting against size-1 and missing leading axes, implicit output
    _spec_row("...ij,...jk", (2, 1, 3, 4), (3, 4, 2), prims=("dot_general",)),
    _spec_row("...ij,j...->i...", (1, 3, 4), (4, 2), prims=("dot_general",)),
    # interleaved (operand, sublist, ..., [out]) form
    _einsum_row(
        "einsum_interleaved",
        lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        [(3, 4), (4, 2)],
        ("dot_general",),
    ),
    _einsum_row(
        "einsum_interleaved_implicit",
        lambda a, b: fnp.einsum(a, [30, 2], b, [2, 30]),
        lambda a, b: np.einsum(a, [30, 2], b, [2, 30]),
        [(3, 4), (4, 3)],
        ("dot_general",),
    ),
    _einsum_row(
        "einsum_interleaved_ellipsis_trace",
        lambda a: fnp.einsum(a, [Ellipsis, 0, 0], [Ellipsis]),
        lambda a: np.einsum(a, [Ellipsis, 0, 0], [Ellipsis]),
        [(2, 3, 3)],
        ("slice", "reduce_sum"),
    ),
    _einsum_row(
        "einsum_interleaved_diag_three",
        lambda a, b, c: fnp.einsum(a, [0, 0], b, [0, 1], c, [1], [0]),
        lambda a, b, c: np.einsum(a, [0, 0], b, [0, 1], c, [1], [0]),
        [(3, 3), (3, 2), (2,)],
        ("slice", "dot_general"),
    ),
    # optimize= accepted (the contraction order stays left to right)
    _einsum_row(
        "einsum_optimize",
        lambda a, b, c: fnp.einsum("ij,jk,kl->il", a, b, c, optimize="greedy"),
        lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c, optimize="greedy"),
        [(2, 3), (3, 4), (4, 2)],
        ("dot_general",),
    ),
]

# ---------------------------------------------------------------------------
# Statistics: average, ptp, nanmax, nanmin, median
# ---------------------------------------------------------------------------

STATS: list[OpInfo] = [
    _row(
        "average_weights",
        lambda x, w: fnp.average(x, weights=w),
        lambda x, w: np.average(x, weights=w),
        (F, POS),
        ("mul", "reduce_sum", "div"),
        shapes="same",
        rtol=1e-5,
    ),
    _row(
        "average_axis_weights_1d",
        lambda x, w: fnp.average(x, axis=1, weights=w),
        lambda x, w: np.average(x, axis=1, weights=w),
        (F, POS),
        ("mul", "reduce_sum", "div"),
        shapes=((3, 4), (4,)),
        rtol=1e-5,
    ),
    _row(
        "average_axes_weights_keepdims",
        lambda x, w: fnp.average(x, axis=(2, 0), weights=w, keepdims=True),
        lambda x, w: np.average(x, axis=(2, 0), weights=w, keepdims=True),
        (F, POS),
        ("transpose", "mul", "reduce_sum", "div"),
        shapes=((2, 3, 4), (4, 2)),
        rtol=1e-5,
    ),
    _row(
        "average_axis_keepdims",
        lambda x: fnp.average(x, axis=0, keepdims=True),
        lambda x: np.average(x, axis=0, keepdims=True),
        prims=("reduce_sum", "div"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "average_int",
        lambda x, w: fnp.average(x, axis=-1, weights=w),
        lambda x, w: np.average(x, axis=-1, weights=w),
        (INT, Arg("int", (1, 5))),
        ("convert_element_type", "mul", "reduce_sum", "div"),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("ptp", fnp.ptp, np.ptp, prims=("reduce_max", "reduce_min", "sub"), avoid_ties=True),
    _row(
        "ptp_axis_keepdims",
        lambda x: fnp.ptp(x, axis=-1, keepdims=True),
        lambda x: np.ptp(x, axis=-1, keepdims=True),
        prims=("reduce_max", "reduce_min", "sub"),
        min_dims=1,
        avoid_ties=True,
    ),
    _row(
        "nanmax",
        lambda x: fnp.nanmax(fnp.where(x > 2.0, np.nan, x), axis=-1),
        lambda x: np.nanmax(np.where(x > 2.0, np.nan, x), axis=-1),
        prims=("eq", "select_n", "reduce_max"),
        shapes=((3, 4),),
        avoid=(2.0,),
        avoid_ties=True,
    ),
    _row(
        "nanmax_all_nan_slice",
        lambda x: fnp.nanmax(fnp.where(x > 0.0, np.nan, x), axis=0, keepdims=True),
        lambda x: np.nanmax(np.where(x > 0.0, np.nan, x), axis=0, keepdims=True),
        prims=("eq", "select_n", "reduce_max"),
        min_dims=1,
        grad=False,
    ),
    _row(
        "nanmin",
        lambda x: fnp.nanmin(fnp.where(x > 2.0, np.nan, x)),
        lambda x: np.nanmin(np.where(x > 2.0, np.nan, x)),
        prims=("eq", "select_n", "reduce_min"),
        shapes=((2, 3, 2),),
        avoid=(2.0,),
        avoid_ties=True,
    ),
    _row(
        "nanmin_axis_keepdims",
        lambda x: fnp.nanmin(fnp.where(x > 2.0, np.nan, x), axis=(0, 2), keepdims=True),
        lambda x: np.nanmin(np.where(x > 2.0, np.nan, x), axis=(0, 2), keepdims=True),
        prims=("eq", "select_n", "reduce_min"),
        shapes=((2, 3, 2),),
        avoid=(2.0,),
        avoid_ties=True,
    ),
    _row("median", fnp.median, np.median, prims=("sort", "slice"), avoid_ties=True),
    _row(
        "median_axis_keepdims",
        lambda x: fnp.median(x, axis=0, keepdims=True),
        lambda x: np.median(x, axis=0, keepdims=True),
        prims=("sort", "slice"),
        min_dims=1,
        avoid_ties=True,
    ),
    _row(
        "median_axes_even",
        lambda x: fnp.median(x, axis=(0, 2)),
        lambda x: np.median(x, axis=(0, 2)),
        prims=("transpose", "sort", "slice"),
        shapes=((2, 3, 2),),
        avoid_ties=True,
    ),
    _row(
        "median_nan",
        lambda x: fnp.median(fnp.where(x > 2.0, np.nan, x), axis=-1),
        lambda x: np.median(np.where(x > 2.0, np.nan, x), axis=-1),
        prims=("sort", "slice", "select_n"),
        min_dims=1,
        grad=False,
    ),
    _row(
        "median_int",
        lambda x: fnp.median(x, axis=-1),
        lambda x: np.median(x, axis=-1),
        (INT,),
        ("convert_element_type", "sort", "slice"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
]

ROWS: list[OpInfo] = SORTING + CLOSE + ROLLAXIS + CONVOLVE + EINSUM + STATS
