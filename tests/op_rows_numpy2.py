"""Op-table rows: the rest of everyday NumPy (issue 8, items 2 and 3).

Inverse trig and hyperbolic functions, exp2/log2/log10, hypot, fmax/fmin, sinc,
nan_to_num, diff/gradient, kron/cross, trace/diag/diagonal/tril/triu, rot90 and
flips, splits and append, select, pad, r_/c_, meshgrid, searchsorted, clip's
keywords; lists of tracers as array arguments, NumPy functions dispatching to
tracer methods, dtype arguments.
"""

from __future__ import annotations

import numpy as np

import functrace.numpy as fnp
from op_db import BOOL, INT, NONZERO, POS, UNIT, Arg, F, OpInfo, const

F64 = (np.float64,)
I64 = (np.int64,)
ACOSH = Arg(domain=(1.1, 3.0))
SORTED = np.array([-2.0, -1.0, -1.0, 0.0, 0.5, 2.0])


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _ew(name: str, args=(F,), prims=(), **kw) -> OpInfo:
    # an elementwise fnp function against the NumPy function of the same name
    return _row(name, getattr(fnp, name), getattr(np, name), args, prims, **kw)


def _same(name: str, f, args=(F,), prims=(), **kw) -> OpInfo:
    # f works on NumPy arrays and on tracers alike: it is its own reference
    return _row(name, f, f, args, prims, **kw)


# ---------------------------------------------------------------------------
# Elementwise math
# ---------------------------------------------------------------------------

ELEMENTWISE: list[OpInfo] = [
    _ew("arcsin", (UNIT,), ("atan2", "sqrt")),
    _ew("arccos", (UNIT,), ("atan2", "sqrt")),
    _ew("arctan", (F,), ("atan2",)),
    _ew("sinh", (F,), ("expm1",), rtol=1e-5),
    _ew("cosh", (F,), ("exp",), rtol=1e-5),
    _ew("arcsinh", (F,), ("log1p", "select_n")),
    _ew("arccosh", (ACOSH,), ("log1p", "sqrt")),
    _ew("arctanh", (UNIT,), ("log1p",)),
    _ew("exp2", (F,), ("pow",), rtol=1e-5),
    _ew("log2", (POS,), ("log", "div")),
    _ew("log10", (POS,), ("log", "div")),
    _row(
        "log2_int",
        fnp.log2,
        np.log2,
        (Arg("int", (1, 9)),),
        ("convert_element_type", "log"),
        grad=False,
        dtypes=I64,
    ),
    _row("arcsin_alias", fnp.asin, np.asin, (UNIT,), ("atan2",)),
    _ew("hypot", (NONZERO, NONZERO), ("sqrt", "stop_gradient"), rtol=1e-5),
    _ew("logaddexp2", (F, F), ("pow", "log"), rtol=1e-5),
    # y = x + d with |d| >= 0.3: never a tie, and x reaches both branches
    _row(
        "fmax",
        lambda x, d: fnp.fmax(x, x + d),
        lambda x, d: np.fmax(x, x + d),
        (F, NONZERO),
        ("max", "select_n"),
    ),
    _row(
        "fmin",
        lambda x, d: fnp.fmin(x + d, x),
        lambda x, d: np.fmin(x + d, x),
        (F, NONZERO),
        ("min", "select_n"),
    ),
    _row(
        "fmax_nan",
        lambda x, d: fnp.fmax(fnp.where(x > 1.0, np.nan, x), x + d),
        lambda x, d: np.fmax(np.where(x > 1.0, np.nan, x), x + d),
        (F, NONZERO),
        ("max", "ne"),
        avoid=(1.0,),
    ),
    _row(
        "fmin_nan_either",
        lambda x, d: fnp.fmin(fnp.where(x > 0.0, np.nan, x), fnp.where(x < -1.0, np.nan, x + d)),
        lambda x, d: np.fmin(np.where(x > 0.0, np.nan, x), np.where(x < -1.0, np.nan, x + d)),
        (F, NONZERO),
        ("min", "select_n"),
        avoid=(0.0, -1.0),
    ),
    _ew("sinc", (F,), ("sin", "div", "select_n"), rtol=1e-5),
    _ew("deg2rad", (F,), ("mul",)),
    _ew("rad2deg", (F,), ("mul",)),
    _ew("radians", (F,), ("mul",)),
    _ew("degrees", (F,), ("mul",)),
    _ew("fabs", (F,), ("abs",), avoid=(0.0,)),
    _ew("cbrt", (NONZERO,), ("pow",), rtol=1e-5),
    _ew("copysign", (NONZERO, NONZERO), ("neg", "select_n")),
    _ew("signbit", (F,), ("lt",), grad=False),
    _ew("heaviside", (F, F), ("select_n",), grad=False),
    _ew("float_power", (POS, F), ("pow",), rtol=1e-5),
    _row(
        "divmod",
        lambda x, y: fnp.stack(fnp.divmod(x, y)),
        lambda x, y: np.stack(np.divmod(x, y)),
        (F, NONZERO),
        ("div", "rem"),
        grad=False,
    ),
    _row(
        "modf",
        lambda x: fnp.stack(fnp.modf(x)),
        lambda x: np.stack(np.modf(x)),
        (F,),
        ("floor", "ceil", "sub"),
        avoid=(0.0, 1.0, -1.0, 2.0, -2.0),
    ),
    _row(
        "nan_to_num",
        lambda x: fnp.nan_to_num(fnp.where(x > 1.0, np.inf, x)),
        lambda x: np.nan_to_num(np.where(x > 1.0, np.inf, x)),
        (F,),
        ("eq", "select_n"),
        avoid=(1.0,),
    ),
    _row(
        "nan_to_num_values",
        lambda x: fnp.nan_to_num(
            fnp.where(x > 1.0, np.nan, fnp.where(x < -1.0, -np.inf, x)), nan=2.5, neginf=-7.0
        ),
        lambda x: np.nan_to_num(
            np.where(x > 1.0, np.nan, np.where(x < -1.0, -np.inf, x)), nan=2.5, neginf=-7.0
        ),
        (F,),
        ("ne", "select_n"),
        avoid=(1.0, -1.0),
    ),
    _row("nan_to_num_int", fnp.nan_to_num, np.nan_to_num, (INT,), (), grad=False, dtypes=I64),
    _row(
        "clip_keywords",
        lambda x: fnp.clip(x, a_min=-1.0, a_max=1.0),
        lambda x: np.clip(x, a_min=-1.0, a_max=1.0),
        (F,),
        ("select_n",),
        avoid=(-1.0, 1.0),
    ),
    _row(
        "clip_min_max",
        lambda x: fnp.clip(x, min=-1.0, max=1.0),
        lambda x: np.clip(x, min=-1.0, max=1.0),
        (F,),
        ("select_n",),
        avoid=(-1.0, 1.0),
    ),
    _row(
        "clip_upper_only",
        lambda x: fnp.clip(x, a_max=0.5),
        lambda x: np.clip(x, None, 0.5),
        (F,),
        ("select_n",),
        avoid=(0.5,),
    ),
]

# ---------------------------------------------------------------------------
# Differences, products, matrices
# ---------------------------------------------------------------------------

ARRAYS: list[OpInfo] = [
    _row("diff", fnp.diff, np.diff, prims=("slice", "sub"), min_dims=1),
    _row(
        "diff_n2_axis0",
        lambda x: fnp.diff(x, n=2, axis=0),
        lambda x: np.diff(x, n=2, axis=0),
        prims=("slice", "sub"),
        shapes=((4, 3),),
    ),
    _row(
        "diff_prepend_append",
        lambda x, y: fnp.diff(x, prepend=0.5, append=y),
        lambda x, y: np.diff(x, prepend=0.5, append=y),
        (F, F),
        ("concatenate", "sub"),
        shapes=((2, 3), (2, 1)),
    ),
    _row(
        "diff_bool", fnp.diff, np.diff, (BOOL,), ("ne",), min_dims=1, grad=False, dtypes=(np.bool_,)
    ),
    _row("gradient", fnp.gradient, np.gradient, prims=("slice", "concatenate"), shapes=((5,),)),
    _row(
        "gradient_2pts", fnp.gradient, np.gradient, prims=("slice", "concatenate"), shapes=((2,),)
    ),
    _row(
        "gradient_nd_spacing",
        lambda x: fnp.stack(fnp.gradient(x, 0.5, 2.0)),
        lambda x: np.stack(np.gradient(x, 0.5, 2.0)),
        prims=("slice", "div"),
        shapes=((3, 4),),
    ),
    _row(
        "gradient_axis",
        lambda x: fnp.gradient(x, 0.25, axis=-1),
        lambda x: np.gradient(x, 0.25, axis=-1),
        prims=("slice", "div"),
        shapes=((2, 3, 4),),
    ),
    _row(
        "gradient_traced_spacing",
        lambda x, h: fnp.gradient(x, h),
        lambda x, h: np.gradient(x, h),
        (F, POS),
        ("div",),
        shapes=((4,), ()),
    ),
    _row(
        "gradient_int",
        fnp.gradient,
        np.gradient,
        (INT,),
        ("convert_element_type",),
        shapes=((4,),),
        grad=False,
        dtypes=I64,
    ),
    _row("kron", fnp.kron, np.kron, (F, F), ("mul", "reshape"), shapes=((2, 3), (2, 2))),
    _row("kron_ranks", fnp.kron, np.kron, (F, F), ("mul", "reshape"), shapes=((3,), (2, 2))),
    _row("cross", fnp.cross, np.cross, (F, F), ("mul", "sub"), shapes=((4, 3), (3,))),
    _row(
        "cross_axes",
        lambda a, b: fnp.cross(a, b, axisa=0, axisc=0),
        lambda a, b: np.cross(a, b, axisa=0, axisc=0),
        (F, F),
        ("mul", "transpose"),
        shapes=((3, 2), (2, 3)),
    ),
    _row(
        "cross_axis",
        lambda a, b: fnp.cross(a, b, axis=1),
        lambda a, b: np.cross(a, b, axis=1),
        (F, F),
        ("mul",),
        shapes=((2, 3, 2), (2, 3, 2)),
    ),
    _row("trace", fnp.trace, np.trace, prims=("slice", "reduce_sum"), shapes=((3, 4),)),
    _row(
        "trace_offset_axes",
        lambda x: fnp.trace(x, -1, 2, 0),
        lambda x: np.trace(x, -1, 2, 0),
        prims=("slice",),
        shapes=((3, 2, 4),),
    ),
    _row(
        "trace_int",
        fnp.trace,
        np.trace,
        (INT,),
        ("reduce_sum",),
        shapes=((3, 3),),
        grad=False,
        dtypes=I64,
    ),
    _row("diag_1d", fnp.diag, np.diag, prims=("pad", "reshape"), shapes=((3,),)),
    _row(
        "diag_1d_k",
        lambda x: fnp.diag(x, k=2),
        lambda x: np.diag(x, k=2),
        prims=("pad",),
        shapes=((3,),),
    ),
    _row(
        "diag_1d_negative_k",
        lambda x: fnp.diag(x, -1),
        lambda x: np.diag(x, -1),
        prims=("pad",),
        shapes=((2,),),
    ),
    _row("diag_2d", fnp.diag, np.diag, prims=("slice",), shapes=((3, 4),)),
    _row(
        "diag_2d_k",
        lambda x: fnp.diag(x, k=-2),
        lambda x: np.diag(x, k=-2),
        prims=("slice",),
        shapes=((4, 3),),
    ),
    _row("diagonal", fnp.diagonal, np.diagonal, prims=("slice",), shapes=((4, 3),)),
    _row(
        "diagonal_offset_axes",
        lambda x: fnp.diagonal(x, 1, -1, 0),
        lambda x: np.diagonal(x, 1, -1, 0),
        prims=("transpose", "slice"),
        shapes=((3, 2, 4),),
    ),
    _row(
        "diagonal_empty",
        lambda x: fnp.diagonal(x, 5),
        lambda x: np.diagonal(x, 5),
        prims=("slice",),
        shapes=((2, 3),),
        grad=False,
    ),
    _row("diagflat", fnp.diagflat, np.diagflat, prims=("reshape", "pad"), shapes=((2, 2),)),
    _row(
        "diagflat_k",
        lambda x: fnp.diagflat(x, -2),
        lambda x: np.diagflat(x, -2),
        prims=("reshape", "pad"),
        shapes=((3,),),
    ),
    _row(
        "sort_complex",
        fnp.sort_complex,
        np.sort_complex,
        prims=("sort", "convert_element_type"),
        shapes=((2, 3),),
        avoid_ties=True,
        grad=False,  # a complex result of a real input
    ),
    _row("tril", fnp.tril, np.tril, prims=("iota", "select_n"), shapes=((3, 4),)),
    _row(
        "tril_k_batch",
        lambda x: fnp.tril(x, -1),
        lambda x: np.tril(x, -1),
        prims=("iota", "select_n"),
        shapes=((2, 3, 3),),
    ),
    _row("tril_1d", fnp.tril, np.tril, prims=("select_n",), shapes=((3,),)),
    _row("triu", fnp.triu, np.triu, prims=("iota", "select_n"), shapes=((4, 3),)),
    _row(
        "triu_k",
        lambda x: fnp.triu(x, 1),
        lambda x: np.triu(x, 1),
        prims=("select_n",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "triu_bool",
        lambda x: fnp.triu(x, -1),
        lambda x: np.triu(x, -1),
        (BOOL,),
        ("select_n",),
        shapes=((3, 3),),
        grad=False,
        dtypes=(np.bool_,),
    ),
]

# ---------------------------------------------------------------------------
# Shapes: rotations, flips, splits, joins, padding, grids
# ---------------------------------------------------------------------------


def _join(parts):
    return fnp.concatenate([fnp.ravel(p) for p in parts][::-1])


def _np_join(parts):
    return np.concatenate([np.ravel(p) for p in parts][::-1])


SHAPES: list[OpInfo] = [
    _row("rot90", fnp.rot90, np.rot90, prims=("rev", "transpose"), min_dims=2),
    _row(
        "rot90_k2", lambda x: fnp.rot90(x, 2), lambda x: np.rot90(x, 2), prims=("rev",), min_dims=2
    ),
    _row(
        "rot90_k3_axes",
        lambda x: fnp.rot90(x, -1, axes=(2, 0)),
        lambda x: np.rot90(x, -1, axes=(2, 0)),
        prims=("rev", "transpose"),
        min_dims=3,
    ),
    _row("flipud", fnp.flipud, np.flipud, prims=("rev",), min_dims=1),
    _row("fliplr", fnp.fliplr, np.fliplr, prims=("rev",), min_dims=2),
    _row(
        "hsplit",
        lambda x: _join(fnp.hsplit(x, 2)),
        lambda x: _np_join(np.hsplit(x, 2)),
        prims=("slice",),
        shapes=((3, 4),),
    ),
    _row(
        "hsplit_1d",
        lambda x: _join(fnp.hsplit(x, [1, 3])),
        lambda x: _np_join(np.hsplit(x, [1, 3])),
        prims=("slice",),
        shapes=((5,),),
    ),
    _row(
        "vsplit",
        lambda x: _join(fnp.vsplit(x, [1])),
        lambda x: _np_join(np.vsplit(x, [1])),
        prims=("slice",),
        shapes=((3, 2),),
    ),
    _row(
        "dsplit",
        lambda x: _join(fnp.dsplit(x, 2)),
        lambda x: _np_join(np.dsplit(x, 2)),
        prims=("slice",),
        shapes=((2, 1, 4),),
    ),
    _row("append", fnp.append, np.append, (F, F), ("reshape", "concatenate")),
    _row(
        "append_axis",
        lambda x, y: fnp.append(x, y, axis=1),
        lambda x, y: np.append(x, y, axis=1),
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 2)),
    ),
    _row(
        "append_promote",
        fnp.append,
        np.append,
        (INT, F),
        ("convert_element_type",),
        shapes=((3,), (2,)),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "select",
        lambda c, x, y: fnp.select([c, x > 0.5], [x, y]),
        lambda c, x, y: np.select([c, x > 0.5], [x, y]),
        (BOOL, F, F),
        ("select_n",),
        avoid=(0.5,),
    ),
    _row(
        "select_default",
        lambda x, y: fnp.select([x < -1.0, x > 1.0], [y, x * y], -2.5),
        lambda x, y: np.select([x < -1.0, x > 1.0], [y, x * y], -2.5),
        (F, F),
        ("select_n",),
        avoid=(-1.0, 1.0),
    ),
    _row(
        "select_int_default_float32",
        lambda x: fnp.select([x > 0.0], [x], default=0),
        lambda x: np.select([x > 0.0], [x], default=0),
        (F,),
        ("select_n",),
        avoid=(0.0,),
    ),
    _row("pad_int", lambda x: fnp.pad(x, 2), lambda x: np.pad(x, 2), prims=("pad",), min_dims=1),
    _row(
        "pad_pair",
        lambda x: fnp.pad(x, (1, 2)),
        lambda x: np.pad(x, (1, 2)),
        prims=("pad",),
        min_dims=1,
    ),
    _row(
        "pad_pairs",
        lambda x: fnp.pad(x, ((0, 1), (2, 0))),
        lambda x: np.pad(x, ((0, 1), (2, 0))),
        prims=("pad",),
        shapes=((2, 3),),
    ),
    _row(
        "pad_one_pair_each",
        lambda x: fnp.pad(x, ((1, 2),)),
        lambda x: np.pad(x, ((1, 2),)),
        prims=("pad",),
        shapes=((2, 3),),
    ),
    _row(
        "pad_dict",
        lambda x: fnp.pad(x, {-1: (2, 1)}),
        lambda x: np.pad(x, {-1: (2, 1)}),
        prims=("pad",),
        shapes=((2, 3),),
    ),
    _row(
        "pad_constant_values",
        lambda x: fnp.pad(x, (1, 2), constant_values=((1.5, 2.5), (-1.0, 3.0))),
        lambda x: np.pad(x, (1, 2), constant_values=((1.5, 2.5), (-1.0, 3.0))),
        prims=("pad",),
        shapes=((2, 2),),
    ),
    *[
        _row(
            f"pad_{mode}{'_odd' if kw.get('reflect_type') == 'odd' else ''}",
            lambda x, mode=mode, kw=kw: fnp.pad(x, ((2, 1), (0, 5)), mode, **kw),
            lambda x, mode=mode, kw=kw: np.pad(x, ((2, 1), (0, 5)), mode, **kw),
            prims=prims,
            shapes=((2, 3),),
            avoid_ties=mode in ("maximum", "minimum", "median"),
        )
        for mode, kw, prims in (
            ("edge", {}, ("gather",)),
            ("wrap", {}, ("gather",)),
            ("reflect", {}, ("gather",)),
            ("symmetric", {}, ("gather",)),
            ("reflect", {"reflect_type": "odd"}, ("dot_general",)),
            ("symmetric", {"reflect_type": "odd"}, ("dot_general",)),
            ("linear_ramp", {"end_values": ((1.5, -2.0), (0.5, 3.0))}, ("concatenate",)),
            ("maximum", {"stat_length": (1, 2)}, ("reduce_max",)),
            ("minimum", {}, ("reduce_min",)),
            ("mean", {"stat_length": 2}, ("reduce_sum",)),
            ("median", {}, ("sort",)),
        )
    ],
    _row(
        "pad_traced_value",
        lambda x, v: fnp.pad(x, ((1, 0), (0, 2)), constant_values=v),
        lambda x, v: np.pad(x, ((1, 0), (0, 2)), constant_values=v),
        (F, F),
        ("pad",),
        shapes=((2, 3), ()),
    ),
    _row(
        "pad_int_values",
        lambda x: fnp.pad(x, 1, constant_values=2.7),
        lambda x: np.pad(x, 1, constant_values=2.7),
        (INT,),
        ("pad",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "r_",
        lambda x, y: fnp.r_[x, 0:3, y, 1.5, [7.0, 8.0]],
        lambda x, y: np.r_[x, 0:3, y, 1.5, [7.0, 8.0]],
        (F, F),
        ("concatenate",),
        shapes=((3,), (2,)),
    ),
    _row(
        "r_linspace_axis",
        lambda x: fnp.r_["0,2,1", x, 0:1:3j],
        lambda x: np.r_["0,2,1", x, 0:1:3j],
        (F,),
        ("concatenate",),
        shapes=((3,),),
    ),
    _row(
        "r_2d_axis",
        lambda x, y: fnp.r_["-1", x, y],
        lambda x, y: np.r_["-1", x, y],
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 1)),
    ),
    _row(
        "c_",
        lambda x, y: fnp.c_[x, y, 0:3],
        lambda x, y: np.c_[x, y, 0:3],
        (F, F),
        ("concatenate",),
        shapes=((3,), (3, 2)),
    ),
    _row(
        "meshgrid",
        lambda x, y: fnp.stack(fnp.meshgrid(x, y)),
        lambda x, y: np.stack(np.meshgrid(x, y)),
        (F, F),
        ("broadcast_in_dim",),
        shapes=((3,), (2,)),
    ),
    _row(
        "meshgrid_ij_3",
        lambda x, y, z: fnp.stack(fnp.meshgrid(x, y, z, indexing="ij")),
        lambda x, y, z: np.stack(np.meshgrid(x, y, z, indexing="ij")),
        (F, F, F),
        ("broadcast_in_dim",),
        shapes=((2,), (3,), (2,)),
    ),
    _row(
        "meshgrid_sparse",
        lambda x, y: fnp.add(*fnp.meshgrid(x, y, sparse=True)),
        lambda x, y: np.add(*np.meshgrid(x, y, sparse=True)),
        (F, F),
        ("reshape",),
        shapes=((3,), (2, 2)),
    ),
    _row(
        "searchsorted",
        lambda a, v: fnp.searchsorted(a, v),
        np.searchsorted,
        (const(SORTED), F),
        ("lt", "reduce_sum"),
        grad=False,
    ),
    _row(
        "searchsorted_right",
        lambda a, v: fnp.searchsorted(a, v, side="right"),
        lambda a, v: np.searchsorted(a, v, side="right"),
        (const(SORTED), INT),
        ("le", "reduce_sum"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "searchsorted_traced_a",
        lambda a, v: fnp.searchsorted(fnp.cumsum(a * a), v),
        lambda a, v: np.searchsorted(np.cumsum(np.multiply(a, a)), v),
        (F, F),
        ("cumsum", "reduce_sum"),
        shapes=((5,), (2, 3)),
        grad=False,
    ),
]

# ---------------------------------------------------------------------------
# NumPy-style arguments: lists of tracers, NumPy functions on tracers, dtypes
# ---------------------------------------------------------------------------

ARGUMENTS: list[OpInfo] = [
    _row(
        "mean_of_list",
        lambda x, y: fnp.mean([x, y + 2.0], axis=0),
        lambda x, y: np.mean([x, y + 2.0], axis=0),
        (F, F),
        ("concatenate", "reduce_sum"),
        shapes="same",
    ),
    _row(
        "sum_of_list",
        lambda x, y: fnp.sum([x, y, 1.5]),
        lambda x, y: np.sum([x, y, 1.5]),
        (F, F),
        ("concatenate",),
        shapes=((), ()),
    ),
    _row(
        "array_mixed_scalars",
        lambda x, y: fnp.array([[x, 1.0], [2.0, y]]),
        lambda x, y: np.array([[x, 1.0], [2.0, y]]),
        (F, F),
        ("concatenate",),
        shapes=((), ()),
    ),
    _row(
        "sin_of_list",
        lambda x, y: fnp.sin([x, y]),
        lambda x, y: np.sin([x, y]),
        (F, F),
        ("sin",),
        shapes="same",
    ),
    _row(
        "maximum_list_scalar",
        lambda x, y: fnp.maximum([x, y], 0.5),
        lambda x, y: np.maximum([x, y], 0.5),
        (F, F),
        ("max",),
        shapes="same",
        avoid=(0.5,),
    ),
    _same(
        "numpy_reductions_dispatch",
        lambda x: (
            np.sum(x)
            + np.mean(x, axis=0)
            + np.max(x, axis=0)
            + np.std(x, axis=0)
            + np.var(x, axis=0, ddof=1)
            + np.prod(x, axis=0)
            + np.min(x, 0, keepdims=True)
        ),
        prims=("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"),
        shapes=((3, 2),),
        rtol=1e-5,
    ),
    _same(
        "numpy_shape_dispatch",
        lambda x: (
            np.transpose(x) @ x
            + np.reshape(np.cumsum(x, axis=1), (2, 3)) @ np.clip(x, -1.0, 1.0)
            + np.squeeze(np.swapaxes(x.reshape((1, 3, 2)), 1, 2), 0) @ np.negative(x)
        ),
        prims=("transpose", "reshape", "cumsum"),
        shapes=((3, 2),),
        avoid=(-1.0, 1.0),
        rtol=1e-5,
    ),
    _same(
        "numpy_ufunc_dispatch",
        lambda x, y: (
            np.arcsinh(x)
            + np.hypot(x, y)
            + np.fmax(x, y)
            + np.exp2(y)
            + np.add.reduce(x * y, axis=None)
            + np.multiply.accumulate(x, axis=-1)
        ),
        (NONZERO, NONZERO),
        ("add",),
        shapes=((2, 3), (2, 3)),
        avoid_ties=True,
        rtol=1e-5,
    ),
    _same(
        "methods_diagonal_trace",
        lambda x: x.diagonal(1).sum() * x.trace() + x.diagonal(),
        prims=("slice",),
        shapes=((3, 3),),
    ),
    _same(
        "numpy_ptp",
        lambda x: np.ptp(x, axis=0),
        prims=("reduce_max", "reduce_min"),
        min_dims=1,
        avoid_ties=True,
    ),
    _row(
        "sum_dtype_string",
        lambda x: fnp.sum(x, dtype="float32"),
        lambda x: np.sum(x, dtype="float32"),
        prims=("convert_element_type",),
        grad=False,
        dtypes=F64,
        rtol=1e-5,
    ),
    _row(
        "astype_numpy_type",
        lambda x: fnp.astype(x * 2, np.float32),
        lambda x: np.asarray(x * 2).astype(np.float32),
        prims=("convert_element_type",),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "zeros_like_dtype_string",
        lambda x: fnp.zeros_like(x, dtype="int32") + x.astype(int),
        lambda x: np.zeros_like(x, dtype="int32") + np.asarray(x).astype(int),
        prims=("convert_element_type",),
        grad=False,
    ),
]

ROWS: list[OpInfo] = ELEMENTWISE + ARRAYS + SHAPES + ARGUMENTS
