"""Op-table rows: array manipulation (choose, compress, extract, delete, insert, place,
put, put_along_axis, resize, block), function application (vectorize,
apply_along_axis, apply_over_axes, piecewise), the window functions (kaiser with a
traced beta) and the ufunc methods (the generic loops of ``subtract``, ``frompyfunc``
ufuncs, and the fast paths of ``logaddexp``, ``maximum`` and ``add``).

Index arrays passed as ``const`` ndarrays are batched by the vmap tests (each example
gets its indices rolled), so they run the abstract-index forms (``delete`` with
``assume_unique_indices``, ``insert``/``put`` with traced indices); index lists written
inside the lambdas stay static.
"""

from __future__ import annotations

import numpy as np

import functrace.numpy as fnp
from functrace import lax, ops
from op_db import BOOL, HALVES, Arg, F, OpInfo, const

F64 = (np.float64,)
CHOICE = Arg("int", (0, 2))  # indices of three choices
ANY_INT = Arg("int", (-5, 5))


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _np_compress_sized(cond, a, axis, size, fill):
    r = np.moveaxis(np.compress(cond, a, axis=axis), axis, 0)[:size]
    pad = np.full((size - r.shape[0], *r.shape[1:]), fill, r.dtype)
    return np.moveaxis(np.concatenate([r, pad]), 0, axis)


def _np_place(a, m, v):
    out = np.array(a, copy=True)
    np.place(out, m, v)
    return out


def _np_put(ind, mode="raise"):
    def ref(a, v):
        out = np.array(a, copy=True)
        np.put(out, ind, v, mode=mode)
        return out

    return ref


def _np_put_along_axis(a, i, v, axis):
    out = np.array(a, copy=True)
    np.put_along_axis(out, i, v, axis)
    return out


MANIP: list[OpInfo] = [
    _row(
        "choose",
        lambda i, a, b, c: fnp.choose(i, [a, b, c]),
        lambda i, a, b, c: np.choose(i, [a, b, c]),
        (CHOICE, F, F, F),
        ("select_n",),
    ),
    _row(
        "choose_wrap",
        lambda i, a, b: fnp.choose(i, [a, b], mode="wrap"),
        lambda i, a, b: np.choose(i, [a, b], mode="wrap"),
        (ANY_INT, F, F),
        ("select_n", "rem"),
    ),
    _row(
        "choose_clip_scalar_choice",
        lambda i, a: fnp.choose(i, [a, 2.0, a * a], mode="clip"),
        lambda i, a: np.choose(i, [a, 2.0, a * a], mode="clip"),
        (ANY_INT, F),
        ("select_n", "clamp"),
    ),
    _row(
        "compress_axis1",
        lambda x: fnp.compress([True, False, True, True], x, axis=1),
        lambda x: np.compress([True, False, True, True], x, axis=1),
        prims=("gather",),
        shapes=((3, 4),),
    ),
    _row(
        "compress_flat_short_condition",
        lambda x: fnp.compress([0, 1, 1, 0, 1], x),
        lambda x: np.compress([0, 1, 1, 0, 1], x),
        prims=("gather",),
        shapes=((2, 3),),
    ),
    # a traced condition (batched under vmap, abstract under jit) with a static size
    _row(
        "compress_size",
        lambda c, x: fnp.compress(c, x, size=3, fill_value=-1.0),
        lambda c, x: _np_compress_sized(c, x, 0, 3, -1.0),
        (BOOL, F),
        ("gather", "select_n"),
        shapes=((4,), (4,)),
    ),
    _row(
        "compress_size_axis1",
        lambda c, x: fnp.compress(c, x, axis=1, size=2, fill_value=0.5),
        lambda c, x: _np_compress_sized(c, x, 1, 2, 0.5),
        (BOOL, F),
        ("gather", "select_n"),
        shapes=((3,), (2, 3)),
    ),
    _row(
        "extract_size",
        lambda c, x: fnp.extract(c, x, size=4),
        lambda c, x: _np_compress_sized(np.ravel(c), np.ravel(x), 0, 4, 0.0),
        (BOOL, F),
        ("gather", "select_n"),
        shapes=((2, 3), (2, 3)),
    ),
    _row(
        "extract_static",
        lambda x: fnp.extract(np.array([[1, 0, 2], [0, 1, 1]]), x),
        lambda x: np.extract(np.array([[1, 0, 2], [0, 1, 1]]), x),
        prims=("gather",),
        shapes=((2, 3),),
    ),
    _row(
        "delete_repeated_negative",
        lambda x: fnp.delete(x, [0, -1, 0], axis=1),
        lambda x: np.delete(x, [0, -1, 0], axis=1),
        prims=("gather",),
        shapes=((3, 4),),
    ),
    _row(
        "delete_slice",
        lambda x: fnp.delete(x, slice(None, None, -2)),
        lambda x: np.delete(x, slice(None, None, -2)),
        prims=("gather",),
        shapes=((5,),),
    ),
    _row(
        "delete_mask",
        lambda x: fnp.delete(x, np.array([True, False, True]), axis=0),
        lambda x: np.delete(x, np.array([True, False, True]), axis=0),
        prims=("gather",),
        shapes=((3, 2),),
    ),
    _row(
        "delete_traced_unique",
        lambda i, x: fnp.delete(x, i, axis=0, assume_unique_indices=True),
        lambda i, x: np.delete(x, i, axis=0),
        (const(np.array([4, 0, -3])), F),
        ("sort", "gather"),
        shapes=((3,), (6, 2)),
    ),
    _row(
        "insert_sequence",
        lambda x, v: fnp.insert(x, [1, 1, 4], v, axis=1),
        lambda x, v: np.insert(x, [1, 1, 4], v, axis=1),
        (F, F),
        ("concatenate", "gather"),
        shapes=((2, 4), (3,)),
    ),
    _row(
        "insert_scalar_block",
        lambda x, v: fnp.insert(x, -1, v, axis=0),
        lambda x, v: np.insert(x, -1, v, axis=0),
        (F, F),
        ("concatenate", "gather"),
        shapes=((3, 2), (2,)),
    ),
    _row(
        "insert_flat_cast",  # float values into an int array: cast, no derivative
        lambda x, v: fnp.insert(x, 2, v),
        lambda x, v: np.insert(x, 2, v),
        (Arg("int", (-5, 5)), F),
        ("concatenate", "gather"),
        grad=False,
        dtypes=F64,
        shapes=((2, 3), (2,)),
    ),
    _row(
        "insert_traced_indices",
        lambda i, x, v: fnp.insert(x, i, v),
        lambda i, x, v: np.insert(x, i, v),
        (const(np.array([5, 0, 2, -1])), F, F),
        ("scatter", "gather"),
        shapes=((4,), (5,), (4,)),
    ),
    _row(
        "insert_traced_scalar_index",
        lambda i, x, v: fnp.insert(x, i, v, axis=1),
        lambda i, x, v: np.insert(x, i, v, axis=1),
        (const(np.array(2)), F, F),
        ("select_n", "gather"),
        shapes=((), (2, 3), (2,)),
    ),
    _row(
        "place",
        lambda m, x, v: fnp.place(x, m, v, inplace=False),
        lambda m, x, v: _np_place(x, m, v),
        (BOOL, F, F),
        ("cumsum", "gather", "select_n"),
        shapes=((2, 3), (2, 3), (4,)),
    ),
    _row(
        "put_repeated",
        lambda x, v: fnp.put(x, np.array([0, 2, -1, 2]), v, inplace=False),
        lambda x, v: _np_put(np.array([0, 2, -1, 2]))(x, v),
        (F, F),
        ("scatter",),
        shapes=((2, 3), (3,)),
    ),
    _row(
        "put_wrap",
        lambda x, v: fnp.put(x, [-8, 9, 1], v, mode="wrap", inplace=False),
        lambda x, v: _np_put([-8, 9, 1], "wrap")(x, v),
        (F, F),
        ("scatter",),
        shapes=((5,), (3,)),
    ),
    _row(
        "put_clip",
        lambda x, v: fnp.put(x, [-8, 9, 2], v, mode="clip", inplace=False),
        lambda x, v: _np_put([-8, 9, 2], "clip")(x, v),
        (F, F),
        ("scatter",),
        shapes=((5,), (3,)),
    ),
    _row(
        "put_traced_indices",
        lambda i, x, v: fnp.put(x, i, v, inplace=False),
        lambda i, x, v: _np_put(i)(x, v),
        (const(np.array([[3, 0], [-1, 2]])), F, F),
        ("scatter",),
        shapes=((2, 2), (2, 3), (4,)),
    ),
    _row(
        "put_along_axis",
        lambda x, v: fnp.put_along_axis(x, np.array([[0], [2]]), v, 1, inplace=False),
        lambda x, v: _np_put_along_axis(x, np.array([[0], [2]]), v, 1),
        (F, F),
        ("scatter",),
        shapes=((2, 3), (2, 1)),
    ),
    _row(
        "put_along_axis_traced_indices",
        lambda i, x, v: fnp.put_along_axis(x, i, v, 0, inplace=False),
        lambda i, x, v: _np_put_along_axis(x, i, v, 0),
        (const(np.array([[2, 0, 1]])), F, F),
        ("scatter",),
        shapes=((1, 3), (3, 3), (1, 3)),
    ),
    _row(
        "put_along_axis_none",
        lambda x, v: fnp.put_along_axis(x, np.array([4, -1]), v, None, inplace=False),
        lambda x, v: _np_put_along_axis(x, np.array([4, -1]), v, None),
        (F, F),
        ("scatter",),
        shapes=((2, 3), (2,)),
    ),
    _row(
        "resize",
        lambda x: fnp.resize(x, (3, 5)),
        lambda x: np.resize(x, (3, 5)),
        prims=("broadcast_in_dim", "reshape", "slice"),
    ),
    _row(
        "block",
        lambda a, b, c: fnp.block([[a, b], [c]]),
        lambda a, b, c: np.block([[a, b], [c]]),
        (F, F, F),
        ("concatenate",),
        shapes=((2, 2), (2, 1), (1, 3)),
    ),
    _row(
        "block_promoted_leaves",
        lambda a, b: fnp.block([a, b, 2.0]),
        lambda a, b: np.block([a, b, 2.0]),
        (F, F),
        ("concatenate",),
        shapes=((2,), ()),
    ),
]


APPLY: list[OpInfo] = [
    _row(
        "vectorize",
        fnp.vectorize(lambda a, b: fnp.sin(a) * b + a),
        np.vectorize(lambda a, b: np.sin(a) * b + a),
        (F, F),
        ("sin", "mul"),
    ),
    _row(
        "vectorize_signature_dot",
        fnp.vectorize(lambda a, b: fnp.sum(a * b * a), signature="(n),(n)->()"),
        np.vectorize(lambda a, b: np.sum(a * b * a), signature="(n),(n)->()"),
        (F, F),
        ("reduce_sum",),
        shapes=((2, 1, 3), (4, 3)),
    ),
    _row(
        "vectorize_signature_matvec",
        fnp.vectorize(lambda m, v: fnp.tanh(m @ v), signature="(m,n),(n)->(m)"),
        np.vectorize(lambda m, v: np.tanh(m @ v), signature="(m,n),(n)->(m)"),
        (F, F),
        ("dot_general", "tanh"),
        shapes=((2, 3, 4), (4,)),
    ),
    _row(
        "vectorize_excluded_kwarg",
        lambda x, y: fnp.vectorize(lambda a, p, *, scale: scale * a**p, excluded={1, "scale"})(
            x, 3, scale=y
        ),
        lambda x, y: np.vectorize(lambda a, p, *, scale: scale * a**p, excluded={1, "scale"})(
            x, 3, scale=y
        ),
        (F, const(1.5)),
        ("integer_pow",),
    ),
    _row(
        "vectorize_keyword_vectorized",
        lambda x, y: fnp.vectorize(lambda a, b: a * fnp.cos(b))(x, b=y),
        lambda x, y: np.vectorize(lambda a, b: a * np.cos(b))(x, b=y),
        (F, F),
        ("cos",),
    ),
    _row(
        "apply_along_axis_scalar",
        lambda x: fnp.apply_along_axis(lambda v: fnp.sum(v * v) + v[0], 1, x),
        lambda x: np.apply_along_axis(lambda v: np.sum(v * v) + v[0], 1, x),
        prims=("reduce_sum",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "apply_along_axis_matrix",
        lambda x: fnp.apply_along_axis(lambda v: fnp.outer(v, fnp.sin(v)), 0, x),
        lambda x: np.apply_along_axis(lambda v: np.outer(v, np.sin(v)), 0, x),
        prims=("sin", "mul"),
        shapes=((3, 2),),
    ),
    _row(
        "apply_over_axes",
        lambda x: fnp.apply_over_axes(fnp.sum, x * x, [0, -1]),
        lambda x: np.apply_over_axes(np.sum, x * x, [0, -1]),
        prims=("reduce_sum",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "piecewise",
        lambda x: fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -(v**3), lambda v: fnp.sin(v)]),
        lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: -(v**3), np.sin]),
        prims=("select_n",),
        avoid=(0.0,),
    ),
    _row(
        "piecewise_default_constant_args",
        lambda x: fnp.piecewise(
            x, [x < -1, x > 1], [lambda v, k: k * v, lambda v, k: fnp.exp(v) / k, 0.5], 2.0
        ),
        lambda x: np.piecewise(
            x, [x < -1, x > 1], [lambda v, k: k * v, lambda v, k: np.exp(v) / k, 0.5], 2.0
        ),
        prims=("select_n",),
        avoid=(-1.0, 1.0),
    ),
    _row(
        "piecewise_single_condition",
        lambda x: fnp.piecewise(x, x > 0.5, [lambda v: v * v, lambda v: -v]),
        lambda x: np.piecewise(x, x > 0.5, [lambda v: v * v, lambda v: -v]),
        prims=("select_n",),
        avoid=(0.5,),
        shapes=((5,),),
    ),
    _row(
        "kaiser",
        lambda b: fnp.kaiser(6, b),
        lambda b: np.kaiser(6, b),
        (Arg(domain=(0.5, 12.0)),),
        ("exp", "div"),
        shapes=((),),
    ),
    _row(
        "kaiser_large_beta",  # the asymptotic branch of I0
        lambda b: fnp.kaiser(5, b),
        lambda b: np.kaiser(5, b),
        (Arg(domain=(26.0, 60.0)),),
        ("exp", "div"),
        shapes=((),),
    ),
    _row(
        "windows",
        lambda x: x * (fnp.hamming(5) + fnp.hanning(5) + fnp.bartlett(5) + fnp.blackman(5)),
        lambda x: x * (np.hamming(5) + np.hanning(5) + np.bartlett(5) + np.blackman(5)),
        prims=("mul",),
        shapes=((2, 5),),
    ),
]


def _np_at(ufunc, idx):
    def call(a, b):
        out = np.array(a, copy=True)
        ufunc.at(out, idx, b)
        return out

    return call


def _np_hyp(x, y):
    return np.sqrt(x * x + y * y)


_HYP = fnp.frompyfunc(lambda x, y: fnp.sqrt(x * x + y * y), nin=2, nout=1)
_NP_HYP = np.frompyfunc(_np_hyp, 2, 1)
_REPEATED = np.array([0, 2, 0, 3])
_AT_B = Arg(domain=(0.5, 2.0))


def _np_object(fn):
    return lambda *args: fn(*args).astype(np.asarray(args[0]).dtype)


UFUNC = [
    _row("ufunc.subtract.reduce", lambda a: fnp.subtract.reduce(a, axis=1),
         lambda a: np.subtract.reduce(a, axis=1), prims=("scan",), shapes=((3, 4),)),
    _row("ufunc.subtract.accumulate", lambda a: fnp.subtract.accumulate(a, axis=0),
         lambda a: np.subtract.accumulate(a, axis=0), prims=("scan",), shapes=((4, 3),)),
    _row("ufunc.subtract.reduceat", lambda a: fnp.subtract.reduceat(a, np.array([0, 3, 1, 4])),
         lambda a: np.subtract.reduceat(a, np.array([0, 3, 1, 4])), prims=("while",),
         shapes=((6, 2),)),
    _row("ufunc.subtract.outer", fnp.subtract.outer, np.subtract.outer, (F, F), ("sub",),
         shapes=((3,), (2, 2))),
    _row("ufunc.logaddexp.reduce", lambda a: fnp.logaddexp.reduce(a, axis=0),
         lambda a: np.logaddexp.reduce(a, axis=0), prims=("exp", "log"), shapes=((4, 3),)),
    _row("ufunc.maximum.accumulate", lambda a: fnp.maximum.accumulate(a, axis=1),
         lambda a: np.maximum.accumulate(a, axis=1), prims=("cummax",), shapes=((2, 5),),
         avoid_ties=True),
    _row("ufunc.add.at", lambda a, b: fnp.add.at(a, _REPEATED, b, inplace=False),
         _np_at(np.add, _REPEATED), (F, F), ("scatter_add",), shapes=((5,), (4,))),
    _row("ufunc.frompyfunc.reduce", lambda a: _HYP.reduce(a, axis=1),
         _np_object(lambda a: _NP_HYP.reduce(a, axis=1)), (_AT_B,), ("scan", "sqrt"),
         shapes=((3, 4),)),
    _row("ufunc.frompyfunc.at", lambda a, b: _HYP.at(a, _REPEATED, b, inplace=False),
         _np_object(_np_at(_NP_HYP, _REPEATED)), (_AT_B, _AT_B), ("scan", "sqrt"),
         shapes=((5,), (4,))),
]  # fmt: skip

# where= masks: every row and every column keeps at least one element (two per row, for
# var), so means and variances are finite; a (4,) mask broadcasts over the rows
_MASK = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1]], bool)
_ROW_MASK = np.array([1, 0, 1, 1], bool)
_M = const(_MASK)
MASKED = [
    _row("sum_where", lambda x, m: fnp.sum(x, axis=1, where=m),
         lambda x, m: np.sum(x, axis=1, where=m), (F, _M), ("select_n", "reduce_sum"),
         shapes=((3, 4), None)),
    _row("sum_where_broadcast", lambda x: fnp.sum(x, where=_ROW_MASK),
         lambda x: np.sum(x, where=_ROW_MASK), prims=("select_n", "reduce_sum"),
         shapes=((3, 4),)),
    _row("prod_where", lambda x, m: fnp.prod(x, axis=0, where=m),
         lambda x, m: np.prod(x, axis=0, where=m), (Arg(domain=(-1.5, 1.5)), _M),
         ("select_n", "reduce_prod"), shapes=((3, 4), None)),
    _row("mean_where", lambda x, m: fnp.mean(x, axis=1, where=m),
         lambda x, m: np.mean(x, axis=1, where=m), (F, _M), ("select_n", "reduce_sum", "div"),
         shapes=((3, 4), None)),
    _row("var_where", lambda x, m: fnp.var(x, axis=1, where=m),
         lambda x, m: np.var(x, axis=1, where=m), (F, _M), ("select_n", "reduce_sum"),
         shapes=((3, 4), None)),
    _row("std_where_ddof", lambda x: fnp.std(x, axis=1, ddof=1, where=_ROW_MASK),
         lambda x: np.std(x, axis=1, ddof=1, where=_ROW_MASK),
         prims=("select_n", "sqrt"), shapes=((3, 4),)),
    _row("max_where", lambda x, m: fnp.max(x, axis=1, where=m, initial=-5.0),
         lambda x, m: np.max(x, axis=1, where=m, initial=-5.0), (F, _M),
         ("select_n", "reduce_max"), shapes=((3, 4), None), avoid_ties=True),
    _row("min_where_keepdims", lambda x: fnp.min(x, axis=0, where=_MASK, initial=5.0,
                                                 keepdims=True),
         lambda x: np.min(x, axis=0, where=_MASK, initial=5.0, keepdims=True),
         prims=("select_n", "reduce_min"), shapes=((3, 4),), avoid_ties=True),
    _row("all_where", lambda x, m: fnp.all(x > 0, axis=1, where=m),
         lambda x, m: np.all(x > 0, axis=1, where=m), (F, _M), ("select_n",),
         shapes=((3, 4), None), grad=False, avoid=(0.0,)),
    _row("any_where", lambda x, m: fnp.any(x > 0, axis=0, where=m),
         lambda x, m: np.any(x > 0, axis=0, where=m), (F, _M), ("select_n",),
         shapes=((3, 4), None), grad=False, avoid=(0.0,)),
    _row("nansum_where", lambda x: fnp.nansum(fnp.where(x > 1.0, np.nan, x), 1, where=_MASK),
         lambda x: np.nansum(np.where(x > 1.0, np.nan, x), 1, where=_MASK),
         prims=("select_n", "reduce_sum"), shapes=((3, 4),), avoid=(1.0,)),
    _row("nanmean_where", lambda x: fnp.nanmean(fnp.where(x > 2.5, np.nan, x), 1, where=_MASK),
         lambda x: np.nanmean(np.where(x > 2.5, np.nan, x), 1, where=_MASK),
         prims=("select_n", "reduce_sum", "div"), shapes=((3, 4),), avoid=(2.5,)),
    _row("sum_int_promote_integers_false",
         lambda x: fnp.sum(fnp.astype(x, np.int8), axis=0, promote_integers=False),
         lambda x: np.sum(np.asarray(x).astype(np.int8), axis=0, dtype=np.int8),
         (Arg("int", (-3, 3)),), ("reduce_sum",), shapes=((4, 3),), grad=False),
]  # fmt: skip


def _np_repeat_total(x, r, total):
    """JAX's ``repeat(..., total_repeat_length=)``: the counts' repeats, cut to ``total``
    or padded with the last element."""
    out = np.repeat(x, r)[:total]
    return np.concatenate([out, np.full(total - out.size, x[-1], x.dtype)])


_COUNTS = np.array([0, 2, 1, 3])
MASKED.append(
    _row("repeat_total_repeat_length",
         lambda x, r: fnp.repeat(x, r, total_repeat_length=8),
         lambda x, r: _np_repeat_total(x, r, 8), (F, const(_COUNTS)), ("gather",),
         shapes=((4,), None)),
)  # fmt: skip


def _np_segment(ufunc, identity):
    def ref(x, ids):
        out = np.full((5, *np.shape(x)[1:]), identity, np.asarray(x).dtype)
        ufunc.at(out, ids, x)
        return out

    return ref


_SEGMENT_IDS = const(np.array([3, 0, 2, 1, 0, 4]))  # repeated; rolled under vmap
SEGMENTS = [
    _row("ops.segment_sum", lambda x, i: ops.segment_sum(x, i, 5), _np_segment(np.add, 0.0),
         (F, _SEGMENT_IDS), ("scatter_add",), shapes=((6, 2), None)),
    _row("ops.segment_max", lambda x, i: ops.segment_max(x, i, 5),
         _np_segment(np.maximum, -np.inf), (F, _SEGMENT_IDS), ("scatter_max",),
         shapes=((6,), None), avoid_ties=True),
]  # fmt: skip


def _complex_row(name: str, prims: tuple[str, ...], re: Arg = F) -> OpInfo:
    """``fnp.<name>`` of ``re + i im`` (the imaginary part kept off the branch cuts on the
    real axis), its real and imaginary parts stacked: real arguments and results for
    every battery."""

    def parts(xp, f):
        return lambda re, im: xp.stack([xp.real(f(re + 1j * im)), xp.imag(f(re + 1j * im))])

    return _row(
        f"{name}[complex]",
        parts(fnp, getattr(fnp, name)),
        parts(np, getattr(np, name)),
        (re, Arg(domain=(0.2, 2.0))),
        prims,
        dtypes=F64,
    )


COMPLEX = [
    _complex_row("sinh", ("sinh", "cos", "sin")),
    _complex_row("cosh", ("cosh", "cos", "sin")),
    _complex_row("exp2", ("exp",)),
    _complex_row("log2", ("log",)),
    _complex_row("log10", ("log",)),
    # the inverse functions: asin, atan through asinh, atanh of i conj(z), acos through
    # acosh. The real part is kept off 0 where the cuts are on the imaginary axis
    # (arctan and arcsinh: |im| > 1 at re = 0). Their primitives (asinh, acosh, atanh,
    # complex) are not listed: test_direct_kernels checks each primitive on the first
    # row listing it, which must stay its real lax row
    _complex_row("arcsin", ("arcsin",)),
    _complex_row("arccos", ("arccos",)),
    _complex_row("arctan", ("arctan",), re=Arg(domain=(0.2, 2.0))),
    _complex_row("arcsinh", ("arcsinh",), re=Arg(domain=(0.2, 2.0))),
    _complex_row("arccosh", ("arccosh",)),
    _complex_row("arctanh", ("arctanh",)),
]  # fmt: skip


def _z(xp, re, im):
    return re + 1j * im


def _z_real_ties(xp, re, im):
    """Every real part twice: the imaginary parts (one above 0, one below) decide."""
    return xp.concatenate([re, re]) + 1j * xp.concatenate([im, -im])


def _z_nans(xp, re, im):
    """NaN real parts where ``re > 2.5``, NaN imaginary parts where ``re < -2.5``."""
    return xp.where(re > 2.5, np.nan, re) + 1j * xp.where(re < -2.5, np.nan, im)


def _z_grid(xp, re, im):
    """Parts rounded to integers: ties in the real part and whole ties happen."""
    return xp.round(re) + 1j * xp.round(im)


def _reduction_row(name, f, prims, z=_z, split=True, **kw) -> OpInfo:
    """``f(xp, z)`` of the complex ``z = z(xp, re, im)`` (real and imaginary parts
    stacked when ``split``): real arguments and results for every battery."""

    def call(xp):
        def fn(re, im):
            r = f(xp, z(xp, re, im))
            return xp.stack([xp.real(r), xp.imag(r)]) if split else r

        return fn

    kw.setdefault("avoid_ties", True)  # distinct real parts, unless z makes ties
    return _row(f"{name}[complex]", call(fnp), call(np), (F, Arg(domain=(0.2, 2.0))), prims, **kw)


_C_WHERE = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1]], bool)
# max/min/ptp/argmax/... of complex arrays: NumPy's lexicographic order (real part, then
# imaginary part), NaN entries propagating (max) or skipped (nanmax), under every battery
COMPLEX_REDUCTIONS = [
    _reduction_row("max", lambda xp, z: xp.max(z), ("reduce_max",)),
    _reduction_row("min_axis_keepdims", lambda xp, z: xp.min(z, axis=-1, keepdims=True),
                   ("reduce_min",), min_dims=1),
    _reduction_row("amax_axis_tuple", lambda xp, z: xp.amax(z, axis=(0, 1)), ("reduce_max",),
                   min_dims=2),
    _reduction_row("max_min_real_ties",
                   lambda xp, z: xp.stack([xp.max(z, axis=0), xp.min(z, axis=0)]),
                   ("reduce_max", "reduce_min"), _z_real_ties, shapes="same", min_dims=1),
    _reduction_row("max_where_initial",
                   lambda xp, z: xp.max(z, axis=1, where=_C_WHERE, initial=0.5 + 0.25j),
                   ("select_n", "reduce_max", "max"), shapes=((3, 4), (3, 4)), avoid=(0.5,)),
    _reduction_row("ptp", lambda xp, z: xp.ptp(z, axis=0), ("reduce_max", "reduce_min"),
                   min_dims=1),
    _reduction_row("lax.reduce_max", lambda xp, z: lax.reduce_max(z, (0,)) if xp is fnp
                   else np.max(z, axis=0), ("reduce_max",), min_dims=1),
    _reduction_row("nanmax_nanmin",
                   lambda xp, z: xp.stack([xp.nanmax(z, axis=1), xp.nanmin(z, axis=1)]),
                   ("eq", "select_n", "reduce_max", "reduce_min"), _z_nans,
                   shapes=((3, 4), (3, 4)), avoid=(2.5, -2.5)),
    _reduction_row("argmax_argmin",
                   lambda xp, z: xp.stack([xp.argmax(z, axis=-1), xp.argmin(z, axis=-1)]),
                   ("reduce_max", "eq", "argmax"), _z_grid, split=False, min_dims=1,
                   grad=False, avoid_ties=False, avoid=HALVES),
    _reduction_row("argmax_keepdims", lambda xp, z: xp.argmax(z, keepdims=True),
                   ("reduce_max", "eq", "argmax"), _z_grid, split=False, grad=False,
                   avoid_ties=False, avoid=HALVES),
    _reduction_row("nanargmax_nanargmin",
                   lambda xp, z: xp.stack([xp.nanargmax(z, 0), xp.nanargmin(z, 0)]),
                   ("reduce_max", "eq", "argmax"), _z_nans, split=False,
                   shapes=((4, 3), (4, 3)), grad=False, avoid=(2.5, -2.5)),
]  # fmt: skip

ROWS: list[OpInfo] = MANIP + APPLY + UFUNC + MASKED + SEGMENTS + COMPLEX + COMPLEX_REDUCTIONS
