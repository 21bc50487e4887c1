"""Op-table rows: set operations, counting, histograms and interpolation.

unique (with size/fill_value, indices, inverse, counts, axis) and the array-API
unique_* functions, isin, intersect1d, union1d, setdiff1d, setxor1d, lexsort,
bincount, digitize, histogram, histogram_bin_edges, histogram2d, histogramdd and
interp. Value-dependent output lengths always get ``size=``/``length=`` here, so every
row also runs under jit and vmap; the references pad and truncate NumPy's results the
way JAX does (see ``functrace/numpy/_sets.py``). Rows on distinct values
(``avoid_ties``) are differentiable: the unique values are then a sort.
"""

from __future__ import annotations

import numpy as np

import functrace.numpy as fnp
from op_db import NONNEG_INT, POS, Arg, F, OpInfo, const

I64 = (np.int64,)
F64 = (np.float64,)
FEW = Arg("int", (-2, 2))  # many ties
BITS = Arg("int", (-1, 1))
KNOTS = np.array([-2.0, -1.0, 0.5, 1.0, 2.5])
EDGES = np.array([-2.0, -1.0, 0.5, 2.0])


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _fit(v, size, fill):
    """``v`` (1-d, or rows along axis 0) cut or padded with ``fill`` to ``size``."""
    v = np.asarray(v)[:size]
    pad = np.broadcast_to(np.asarray(fill, v.dtype), (size - len(v), *v.shape[1:]))
    return np.concatenate([v, pad])


def _first(v):
    """JAX's default padding of intersect1d/setxor1d: the first value, else 0."""
    return v[0] if len(v) else 0


def _unique_ref(x, size, part=0, **kw):
    out = np.unique(x, **kw) if kw else (np.unique(x),)
    out = out if isinstance(out, tuple) else (out,)
    values = out[0]
    if part == 0:
        return _fit(values, size, values[0])
    got = out[part]
    flags = [k for k in ("return_index", "return_inverse", "return_counts") if kw.get(k)]
    name = flags[part - 1]
    if name == "return_inverse":
        return got
    return _fit(got, size, got[0] if name == "return_index" else 0)


def _interp_extrapolate(x, xp, fp):
    out = np.interp(x, xp, fp)
    lo = fp[0] + (x - xp[0]) * (fp[1] - fp[0]) / (xp[1] - xp[0])
    hi = fp[-1] + (x - xp[-1]) * (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
    return np.where(x < xp[0], lo, np.where(x > xp[-1], hi, out))


# ---------------------------------------------------------------------------
# unique and the array-API unique_* functions
# ---------------------------------------------------------------------------

UNIQUE: list[OpInfo] = [
    # distinct values: the unique values are a sort, padded with (or cut to) 6 entries
    _row(
        "unique_size",
        lambda x: fnp.unique(x, size=6),
        lambda x: _unique_ref(x, 6),
        prims=("sort", "gather"),
        avoid_ties=True,
    ),
    _row(
        "unique_size_fill",
        lambda x: fnp.unique(x, size=5, fill_value=-7.0, sorted=False),
        lambda x: _fit(np.unique(x), 5, -7.0),
        prims=("sort", "select_n"),
        avoid_ties=True,
    ),
    _row(
        "unique_ties",
        lambda x: fnp.unique(x, size=4),
        lambda x: _unique_ref(x, 4),
        (FEW,),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_index",
        lambda x: fnp.unique(x, return_index=True, size=4)[1],
        lambda x: _unique_ref(x, 4, 1, return_index=True),
        (FEW,),
        ("sort", "gather"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_inverse",
        lambda x: fnp.unique(x, return_inverse=True, size=3)[1],
        lambda x: _unique_ref(x, 3, 1, return_inverse=True),
        (FEW,),
        ("sort", "cumsum"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_counts",
        lambda x: fnp.unique(x, return_index=True, return_counts=True, size=6)[2],
        lambda x: _unique_ref(x, 6, 2, return_index=True, return_counts=True),
        (FEW,),
        ("sort", "sub"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_equal_nan_false",
        lambda x: fnp.unique(x, equal_nan=False, size=3),
        lambda x: _unique_ref(x, 3, equal_nan=False),
        (FEW,),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_axis0_ties",
        lambda x: fnp.unique(x, axis=0, size=4),
        lambda x: _fit(np.unique(x, axis=0), 4, np.unique(x, axis=0)[0]),
        (BITS,),
        ("sort", "gather"),
        shapes=((6, 2),),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_axis1_inverse",
        lambda x: fnp.unique(x, axis=1, return_inverse=True, size=3)[1],
        lambda x: np.unique(x, axis=1, return_inverse=True)[1],
        (BITS,),
        ("sort",),
        shapes=((2, 5),),
        grad=False,
        dtypes=I64,
    ),
    # distinct rows: sorted lexicographically, padded with the first one
    _row(
        "unique_axis0",
        lambda x: fnp.unique(x, axis=0, size=5),
        lambda x: _fit(np.unique(x, axis=0), 5, np.unique(x, axis=0)[0]),
        prims=("sort", "gather"),
        shapes=((4, 3),),
        avoid_ties=True,
    ),
    _row(
        "unique_values",
        lambda x: fnp.unique_values(x, size=5),
        lambda x: _unique_ref(x, 5),
        prims=("sort",),
        avoid_ties=True,
    ),
    _row(
        "unique_counts_api",
        lambda x: fnp.unique_counts(x, size=4).counts,
        lambda x: _fit(np.unique_counts(x).counts, 4, 0),
        (FEW,),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_inverse_api",
        lambda x: fnp.unique_inverse(x, size=4).inverse_indices,
        lambda x: np.unique_inverse(x).inverse_indices,
        (FEW,),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unique_all_indices",
        lambda x: fnp.unique_all(x, size=4).indices,
        lambda x: _unique_ref(x, 4, 1, return_index=True),
        (FEW,),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# isin and the 1-d set operations
# ---------------------------------------------------------------------------

SETOPS: list[OpInfo] = [
    _row(
        "isin",
        fnp.isin,
        np.isin,
        (FEW, FEW),
        ("eq", "reduce_max"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "isin_invert_mixed",
        lambda x: fnp.isin(x, [0.0, 1.5, -2.0], invert=True),
        lambda x: np.isin(x, [0.0, 1.5, -2.0], invert=True),
        (FEW,),
        ("eq", "not"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "intersect1d",
        lambda a, b: fnp.intersect1d(a, b, size=3),
        lambda a, b: _fit(np.intersect1d(a, b), 3, _first(np.intersect1d(a, b))),
        (FEW, FEW),
        ("sort", "eq"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "intersect1d_indices",
        lambda a, b: (
            fnp.intersect1d(a, b, return_indices=True, size=3)[1]
            + 10 * fnp.intersect1d(a, b, return_indices=True, size=3)[2]
        ),
        lambda a, b: (
            _fit(np.intersect1d(a, b, return_indices=True)[1], 3, a.size)
            + 10 * _fit(np.intersect1d(a, b, return_indices=True)[2], 3, b.size)
        ),
        (FEW, FEW),
        ("sort", "argmax"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "intersect1d_assume_unique",
        lambda a, b: fnp.intersect1d(a, b, assume_unique=True, return_indices=True, size=2)[2],
        lambda a, b: _fit(np.intersect1d(a, b, True, True)[2], 2, b.size),
        (FEW, FEW),
        ("sort",),
        shapes=((3,), (4,)),
        grad=False,
        dtypes=I64,
    ),
    # the common values of x and x[::2] are x[::2]: differentiable through ar1
    _row(
        "intersect1d_subset",
        lambda x: fnp.intersect1d(x, x[::2], size=4),
        lambda x: _fit(np.sort(x[::2]), 4, np.min(x[::2])),
        prims=("sort", "gather"),
        shapes=((6,),),
        avoid_ties=True,
    ),
    _row(
        "union1d",
        lambda a, b: fnp.union1d(a, b, size=8),
        lambda a, b: _unique_ref(np.concatenate([np.ravel(a), np.ravel(b)]), 8),
        (F, F),
        ("sort", "concatenate"),
        shapes=((2, 3), (4,)),
        avoid_ties=True,
    ),
    _row(
        "union1d_ties",
        lambda a, b: fnp.union1d(a, b, size=4, fill_value=9),
        lambda a, b: _fit(np.union1d(a, b), 4, 9),
        (FEW, FEW),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "setdiff1d",
        lambda a, b: fnp.setdiff1d(a, b, size=3),
        lambda a, b: _fit(np.setdiff1d(a, b), 3, 0),
        (FEW, FEW),
        ("sort", "eq"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "setdiff1d_assume_unique",
        lambda a, b: fnp.setdiff1d(a, b, assume_unique=True, size=5, fill_value=-9),
        lambda a, b: _fit(np.setdiff1d(a, b, assume_unique=True), 5, -9),
        (FEW, FEW),
        ("eq",),
        grad=False,
        dtypes=I64,
    ),
    # x without x[::2] is x[1::2]: differentiable, padded with 0
    _row(
        "setdiff1d_subset",
        lambda x: fnp.setdiff1d(x, x[::2], size=4),
        lambda x: _fit(np.sort(x[1::2]), 4, 0.0),
        prims=("sort", "gather"),
        shapes=((6,),),
        avoid_ties=True,
    ),
    _row(
        "setxor1d",
        lambda a, b: fnp.setxor1d(a, b, size=4),
        lambda a, b: _fit(np.setxor1d(a, b), 4, _first(np.setxor1d(a, b))),
        (FEW, FEW),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "setxor1d_assume_unique",
        lambda a, b: fnp.setxor1d(a, b, assume_unique=True, size=4),
        lambda a, b: _fit(np.setxor1d(a, b, True), 4, _first(np.setxor1d(a, b, True))),
        (FEW, FEW),
        ("sort",),
        grad=False,
        dtypes=I64,
    ),
    # distinct values in both: the sorted union
    _row(
        "setxor1d_distinct",
        lambda a, b: fnp.setxor1d(a, b, size=6),
        lambda a, b: _fit(np.setxor1d(a, b), 6, np.min(np.setxor1d(a, b))),
        (F, F),
        ("sort", "gather"),
        shapes=((3,), (2, 2)),
        avoid_ties=True,
    ),
    _row(
        "lexsort",
        lambda a, b: fnp.lexsort([a, b]),
        lambda a, b: np.lexsort([a, b]),
        (BITS, BITS),
        ("sort",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "lexsort_axis0_mixed",
        lambda a, b: fnp.lexsort((a, b), axis=0),
        lambda a, b: np.lexsort((a, b), axis=0),
        (F, BITS),
        ("sort",),
        shapes="same",
        min_dims=1,
        grad=False,
    ),
]

# ---------------------------------------------------------------------------
# bincount, digitize
# ---------------------------------------------------------------------------

COUNTING: list[OpInfo] = [
    _row(
        "bincount",
        lambda x: fnp.bincount(x, length=6),
        lambda x: np.bincount(x, minlength=6)[:6],
        (NONNEG_INT,),
        ("scatter_add",),
        shapes=((7,),),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "bincount_short",
        lambda x: fnp.bincount(x, minlength=9, length=3),
        lambda x: np.bincount(x, minlength=9)[:3],
        (NONNEG_INT,),
        ("scatter_add",),
        shapes=((7,),),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "bincount_weights",
        lambda x, w: fnp.bincount(x, w, length=6),
        lambda x, w: np.bincount(x, w, minlength=6)[:6],
        (NONNEG_INT, F),
        ("scatter_add", "convert_element_type"),
        shapes=((7,), (7,)),
    ),
    _row(
        "digitize",
        lambda x, b: fnp.digitize(x, b),
        np.digitize,
        (F, const(EDGES)),
        ("lt", "reduce_sum"),
        grad=False,
    ),
    _row(
        "digitize_right_decreasing",
        lambda x, b: fnp.digitize(x, b, right=True),
        lambda x, b: np.digitize(x, b, right=True),
        (FEW, const(np.array([2.0, 1.0, 1.0, -1.0]))),
        ("le", "reduce_sum"),
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# histograms
# ---------------------------------------------------------------------------

HISTOGRAMS: list[OpInfo] = [
    _row(
        "histogram_counts",
        lambda a: fnp.histogram(a, 5)[0],
        lambda a: np.histogram(a, 5)[0],
        prims=("scatter_add", "reduce_min", "reduce_max"),
        grad=False,
    ),
    # the edges follow the data's min and max: differentiable
    _row(
        "histogram_edges",
        lambda a: fnp.histogram(a, 5)[1],
        lambda a: np.histogram(a, 5)[1],
        prims=("reduce_min", "reduce_max"),
        avoid_ties=True,
    ),
    _row(
        "histogram_weights",
        lambda a, w: fnp.histogram(a, 4, range=(-3.0, 3.0), weights=w)[0],
        lambda a, w: np.histogram(a, 4, range=(-3.0, 3.0), weights=w)[0],
        (F, F),
        ("scatter_add",),
        shapes="same",
        avoid=(-1.5, 0.0, 1.5),
    ),
    _row(
        "histogram_density",
        lambda a, w: fnp.histogram(a, 4, range=(-3, 3), weights=w, density=True)[0],
        lambda a, w: np.histogram(a, 4, range=(-3, 3), weights=w, density=True)[0],
        (F, POS),
        ("scatter_add", "div"),
        shapes="same",
        avoid=(-1.5, 0.0, 1.5),
    ),
    _row(
        "histogram_int_edges",
        lambda a: fnp.histogram(a, [-2, 0, 1, 3])[0],
        lambda a: np.histogram(a, [-2, 0, 1, 3])[0],
        (FEW,),
        ("scatter_add",),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "histogram_given_edges",
        lambda a, e: fnp.histogram(a, e)[0],
        lambda a, e: np.histogram(a, e)[0],
        (F, const(EDGES)),
        ("scatter_add",),
        grad=False,
    ),
    _row(
        "histogram_bin_edges",
        lambda a: fnp.histogram_bin_edges(a, 3),
        lambda a: np.histogram_bin_edges(a, 3),
        prims=("reduce_min", "reduce_max"),
        avoid_ties=True,
    ),
    _row(
        "histogram2d_weights",
        lambda x, y, w: fnp.histogram2d(x, y, 3, [(-3, 3), (-3, 3)], weights=w)[0],
        lambda x, y, w: np.histogram2d(x, y, 3, [(-3, 3), (-3, 3)], weights=w)[0],
        (F, F, F),
        ("scatter_add",),
        shapes=((6,), (6,), (6,)),
        avoid=(-1.0, 1.0),
    ),
    _row(
        "histogramdd_counts",
        lambda s: fnp.histogramdd(s, bins=(2, 3))[0],
        lambda s: np.histogramdd(s, bins=(2, 3))[0],
        prims=("scatter_add",),
        shapes=((5, 2),),
        grad=False,
    ),
    _row(
        "histogramdd_density",
        lambda s: fnp.histogramdd(s, bins=2, range=[(-3, 3)] * 3, density=True)[0],
        lambda s: np.histogramdd(s, bins=2, range=[(-3, 3)] * 3, density=True)[0],
        prims=("scatter_add", "div"),
        shapes=((4, 3),),
        avoid=(0.0,),
    ),
    _row(
        "histogramdd_edges",
        lambda s: fnp.histogramdd(s, bins=3)[1][1],
        lambda s: np.histogramdd(s, bins=3)[1][1],
        prims=("reduce_min", "reduce_max"),
        shapes=((5, 2),),
        avoid_ties=True,
    ),
]

# ---------------------------------------------------------------------------
# interp
# ---------------------------------------------------------------------------

INTERP: list[OpInfo] = [
    _row(
        "interp",
        lambda x, xp, fp: fnp.interp(x, xp, fp),
        np.interp,
        (F, const(KNOTS), F),
        ("gather", "select_n"),
        shapes=((2, 3), (5,), (5,)),
        avoid=tuple(KNOTS),
    ),
    _row(
        "interp_left_right",
        lambda x, fp: fnp.interp(x, KNOTS, fp, left=-4.0, right=5.0),
        lambda x, fp: np.interp(x, KNOTS, fp, left=-4.0, right=5.0),
        (F, F),
        ("gather", "select_n"),
        shapes=((7,), (5,)),
        avoid=tuple(KNOTS),
    ),
    # knots that are traced too (cumsum of positive steps)
    _row(
        "interp_traced_knots",
        lambda x, d, fp: fnp.interp(x, fnp.cumsum(d) - 3.0, fp),
        lambda x, d, fp: np.interp(x, np.cumsum(d) - 3.0, fp),
        (F, POS, F),
        ("cumsum", "gather"),
        shapes=((6,), (5,), (5,)),
        rtol=1e-5,
    ),
    _row(
        "interp_period",
        lambda x, fp: fnp.interp(x, [0.1, 0.7, 1.3], fp, period=2.0),
        lambda x, fp: np.interp(x, [0.1, 0.7, 1.3], fp, period=2.0),
        (F, F),
        ("rem", "sort"),
        shapes=((6,), (3,)),
        avoid=(-2.7, -1.9, -1.3, -0.7, 0.1, 0.7, 1.3, 2.1, 2.7),
    ),
    _row(
        "interp_extrapolate",
        lambda x, fp: fnp.interp(x, KNOTS, fp, left="extrapolate", right="extrapolate"),
        lambda x, fp: _interp_extrapolate(x, KNOTS, fp),
        (F, F),
        ("gather",),
        shapes=((7,), (5,)),
        avoid=tuple(KNOTS),
        rtol=1e-5,
    ),
]

ROWS: list[OpInfo] = UNIQUE + SETOPS + COUNTING + HISTOGRAMS + INTERP
