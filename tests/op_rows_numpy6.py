"""Op-table rows: statistics, polynomials and the remaining numeric functions.

quantile/percentile/nanquantile/nanpercentile (every method), nanmedian, nanargmax,
nanargmin, nancumsum, nancumprod, nanprod, nanvar, nanstd, cov, corrcoef; polyval,
polyfit, polyadd, polysub, polymul, polydiv, polyder, polyint, poly, vander; trapezoid,
unwrap, ediff1d, gcd, lcm, ldexp, frexp, nextafter, spacing and i0. (``roots`` and
``poly`` of a matrix work on NumPy inputs only: no rows.)

Where a quantile row differentiates ``q``, ``q`` is the first argument (the op table
offsets later arguments' values when it avoids ties). NaNs are put in by the row
(``where(x > 2.5, nan, x)``) so that every drawn argument stays finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from op_db import INT, POS, Arg, F, OpInfo, const

F64 = (np.float64,)
I64 = (np.int64,)
Q = Arg(domain=(0.05, 0.95))
PCT = Arg(domain=(5.0, 95.0))
WIDE = Arg(domain=(-10.0, 10.0))
QS = np.array([0.0, 0.13, 0.5, 0.77, 1.0])

_CONTINUOUS = (
    "linear",
    "midpoint",
    "averaged_inverted_cdf",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
)
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _nans(m: Any, x: Any, cut: float = 2.5) -> Any:
    """``x`` with NaN where it exceeds ``cut`` (``m`` is fnp or np)."""
    return m.where(x > cut, np.nan, x)


def _nan_all(m: Any, x: Any) -> Any:
    """NaN everywhere but the first row of a 2-d ``x`` (whose first element is kept: NumPy's
    nanquantile changes its result dtype when every element is NaN), and where positive."""
    rows = np.arange(x.shape[0]).reshape(-1, 1) > 0
    first = np.arange(x.shape[1]) == 0
    return m.where(m.logical_or(rows, m.logical_and(x > 0, ~first)), np.nan, x)


QSORT = ("sort", "gather")

# ---------------------------------------------------------------------------
# quantile, percentile and their NaN-ignoring forms
# ---------------------------------------------------------------------------

QUANTILES: list[OpInfo] = [
    _row(
        "quantile_q_grad",
        lambda q, x: fnp.quantile(x, q, axis=1),
        lambda q, x: np.quantile(x, q, axis=1),
        (Q, F),
        QSORT,
        shapes=((2,), (3, 5)),
        avoid_ties=True,
    ),
    _row(
        "quantile_scalar_q_all_axes",
        lambda q, x: fnp.quantile(x, q),
        lambda q, x: np.quantile(x, q),
        (Q, F),
        QSORT,
        shapes=((), (2, 3, 2)),
        avoid_ties=True,
    ),
    *[
        _row(
            f"quantile_method_{m}",
            lambda x, m=m: fnp.quantile(x, QS, axis=-1, method=m),
            lambda x, m=m: np.quantile(x, QS, axis=-1, method=m),
            prims=QSORT,
            min_dims=1,
            avoid_ties=True,
        )
        for m in _CONTINUOUS + _DISCRETE
    ],
    _row(
        "quantile_axes_keepdims",
        lambda x: fnp.quantile(x, [0.25, 0.6], axis=(0, 2), keepdims=True),
        lambda x: np.quantile(x, [0.25, 0.6], axis=(0, 2), keepdims=True),
        prims=("transpose", *QSORT),
        shapes=((3, 2, 4),),
        avoid_ties=True,
    ),
    _row(
        "quantile_float32_python_q",
        lambda x: fnp.quantile(x, 0.3, axis=0, method="hazen"),
        lambda x: np.quantile(x, 0.3, axis=0, method="hazen"),
        prims=QSORT,
        min_dims=1,
        avoid_ties=True,
        dtypes=(np.float32,),
    ),
    _row(
        "quantile_int_linear",
        lambda x: fnp.quantile(x, [0.1, 0.5], axis=-1),
        lambda x: np.quantile(x, [0.1, 0.5], axis=-1),
        (INT,),
        QSORT,
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "quantile_int_lower",
        lambda x: fnp.quantile(x, 0.4, axis=0, method="lower"),
        lambda x: np.quantile(x, 0.4, axis=0, method="lower"),
        (INT,),
        QSORT,
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "quantile_nan_propagates",
        lambda x: fnp.quantile(_nans(fnp, x), [0.2, 0.9], axis=-1),
        lambda x: np.quantile(_nans(np, x), [0.2, 0.9], axis=-1),
        prims=(*QSORT, "ne", "select_n"),
        min_dims=1,
        grad=False,
    ),
    _row(
        "percentile_q_grad",
        lambda q, x: fnp.percentile(x, q, axis=0),
        lambda q, x: np.percentile(x, q, axis=0),
        (PCT, F),
        QSORT,
        shapes=((3,), (4, 2)),
        avoid_ties=True,
    ),
    _row(
        "percentile_nearest",
        lambda x: fnp.percentile(x, [10, 50, 90], method="nearest"),
        lambda x: np.percentile(x, [10, 50, 90], method="nearest"),
        prims=QSORT,
        avoid_ties=True,
    ),
    _row(
        "nanquantile_q_grad",
        lambda q, x: fnp.nanquantile(_nans(fnp, x), q, axis=1),
        lambda q, x: np.nanquantile(_nans(np, x), q, axis=1),
        (Q, F),
        (*QSORT, "eq", "reduce_sum"),
        shapes=((2,), (3, 4)),
        avoid=(2.5,),
        avoid_ties=True,
    ),
    *[
        _row(
            f"nanquantile_method_{m}",
            lambda x, m=m: fnp.nanquantile(_nans(fnp, x), QS, axis=0, method=m),
            lambda x, m=m: np.nanquantile(_nans(np, x), QS, axis=0, method=m),
            prims=(*QSORT, "eq", "reduce_sum"),
            shapes=((5, 3),),
            avoid=(2.5,),
            avoid_ties=True,
        )
        for m in ("linear", "lower", "nearest", "midpoint", "weibull", "closest_observation")
    ],
    _row(
        "nanquantile_all_nan_slices",
        lambda x: fnp.nanquantile(_nan_all(fnp, x), [0.3, 0.5], axis=1),
        lambda x: np.nanquantile(_nan_all(np, x), [0.3, 0.5], axis=1),
        prims=(*QSORT, "eq", "reduce_sum"),
        shapes=((3, 4),),
        grad=False,
    ),
    _row(
        "nanpercentile_axes_keepdims",
        lambda x: fnp.nanpercentile(_nans(fnp, x), 40.0, axis=(0, 1), keepdims=True),
        lambda x: np.nanpercentile(_nans(np, x), 40.0, axis=(0, 1), keepdims=True),
        prims=(*QSORT, "eq", "reduce_sum"),
        shapes=((2, 3, 2),),
        avoid=(2.5,),
        avoid_ties=True,
    ),
    _row(
        "nanmedian",
        lambda x: fnp.nanmedian(_nans(fnp, x), axis=-1),
        lambda x: np.nanmedian(_nans(np, x), axis=-1),
        prims=(*QSORT, "eq", "reduce_sum"),
        shapes=((3, 5),),
        avoid=(2.5,),
        avoid_ties=True,
    ),
    _row(
        "nanmedian_all_nan_slices",
        lambda x: fnp.nanmedian(_nan_all(fnp, x), axis=1, keepdims=True),
        lambda x: np.nanmedian(_nan_all(np, x), axis=1, keepdims=True),
        prims=(*QSORT, "eq", "reduce_sum"),
        shapes=((3, 4),),
        grad=False,
    ),
    _row(
        "nanmedian_int",
        lambda x: fnp.nanmedian(x),
        lambda x: np.nanmedian(x),
        (INT,),
        ("sort", "slice"),
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# nanargmax, nanargmin, nancumsum, nancumprod, nanprod, nanvar, nanstd
# ---------------------------------------------------------------------------


def _np_nanarg(name: str, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's nanargmax/nanargmin, with -1 for all-NaN slices (JAX's rule)."""
    nan = np.isnan(x)
    filled = np.where(nan, -np.inf if name == "nanargmax" else np.inf, x)
    r = getattr(np, name[3:])(filled, axis, keepdims=keepdims)
    r = np.where(np.all(nan, axis=axis, keepdims=keepdims), -1, r)
    return r[()] if r.ndim == 0 else r


_MASK = np.array(
    [[True, False, True], [True, True, False], [False, True, True], [True, True, True]]
)

NAN_REDUCTIONS: list[OpInfo] = [
    _row(
        "nanargmax",
        lambda x: fnp.nanargmax(_nans(fnp, x), axis=-1),
        lambda x: np.nanargmax(_nans(np, x), axis=-1),
        prims=("ne", "select_n", "argmax"),
        shapes=((3, 5),),
        grad=False,
        avoid=(2.5,),
    ),
    _row(
        "nanargmin_all_nan_slices",
        lambda x: fnp.nanargmin(_nan_all(fnp, x), axis=1, keepdims=True),
        lambda x: _np_nanarg("nanargmin", _nan_all(np, x), axis=1, keepdims=True),
        prims=("ne", "select_n", "argmin"),
        shapes=((3, 4),),
        grad=False,
    ),
    _row(
        "nanargmax_flat",
        lambda x: fnp.nanargmax(_nans(fnp, x, 0.0)),
        lambda x: _np_nanarg("nanargmax", _nans(np, x, 0.0)),
        prims=("ne", "select_n", "argmax"),
        grad=False,
    ),
    _row(
        "nancumsum",
        lambda x: fnp.nancumsum(_nans(fnp, x), axis=0),
        lambda x: np.nancumsum(_nans(np, x), axis=0),
        prims=("eq", "select_n", "cumsum"),
        min_dims=1,
        avoid=(2.5,),
    ),
    _row(
        "nancumprod_flat",
        # values within +-1.5 (a product of the whole flattened array in +-3 reaches 1e7,
        # where the order-2 check's finite differences lose the small entries)
        lambda x: fnp.nancumprod(_nans(fnp, x, 1.2)),
        lambda x: np.nancumprod(_nans(np, x, 1.2)),
        (Arg(domain=(-1.5, 1.5)),),
        prims=("eq", "select_n", "cumprod", "reshape"),
        avoid=(1.2,),
        rtol=1e-5,
    ),
    _row(
        "nancumsum_int",
        lambda x: fnp.nancumsum(x, axis=-1),
        lambda x: np.nancumsum(x, axis=-1),
        (Arg("int", (-5, 5)),),
        ("cumsum",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "nanprod",
        lambda x: fnp.nanprod(_nans(fnp, x), axis=1, keepdims=True),
        lambda x: np.nanprod(_nans(np, x), axis=1, keepdims=True),
        prims=("eq", "select_n", "reduce_prod"),
        shapes=((3, 4),),
        avoid=(2.5,),
        rtol=1e-5,
    ),
    _row(
        "nanvar",
        lambda x: fnp.nanvar(_nans(fnp, x), axis=-1),
        lambda x: np.nanvar(_nans(np, x), axis=-1),
        prims=("eq", "select_n", "reduce_sum", "div"),
        shapes=((3, 5),),
        avoid=(2.5,),
        rtol=1e-5,
    ),
    _row(
        "nanvar_ddof_all_nan",
        lambda x: fnp.nanvar(_nan_all(fnp, x), axis=1, ddof=1),
        lambda x: np.nanvar(_nan_all(np, x), axis=1, ddof=1),
        prims=("eq", "select_n", "reduce_sum", "div"),
        shapes=((3, 4),),
        grad=False,
    ),
    _row(
        "nanvar_where",
        lambda x: fnp.nanvar(x, axis=0, where=_MASK),
        lambda x: np.nanvar(x, axis=0, where=_MASK),
        prims=("and", "select_n", "reduce_sum", "div"),
        shapes=((4, 3),),
        rtol=1e-5,
    ),
    _row(
        "nanstd_ddof",
        lambda x: fnp.nanstd(_nans(fnp, x), axis=(0, 2), ddof=1, keepdims=True),
        lambda x: np.nanstd(_nans(np, x), axis=(0, 2), ddof=1, keepdims=True),
        prims=("eq", "select_n", "reduce_sum", "div", "sqrt"),
        shapes=((3, 2, 3),),
        avoid=(2.5,),
        rtol=1e-5,
    ),
]

# ---------------------------------------------------------------------------
# cov, corrcoef
# ---------------------------------------------------------------------------

COV: list[OpInfo] = [
    _row("cov", fnp.cov, np.cov, prims=("dot_general",), shapes=((3, 5),), rtol=1e-5),
    _row(
        "cov_1d_with_y",
        lambda x, y: fnp.cov(x, y, bias=True),
        lambda x, y: np.cov(x, y, bias=True),
        (F, F),
        ("dot_general",),
        shapes=((4,), (4,)),
        rtol=1e-5,
    ),
    _row(
        "cov_rowvar_false_ddof",
        lambda x: fnp.cov(x, rowvar=False, ddof=2),
        lambda x: np.cov(x, rowvar=False, ddof=2),
        prims=("transpose", "dot_general"),
        shapes=((5, 3),),
        rtol=1e-5,
    ),
    _row(
        "cov_fweights_aweights",
        lambda x, f, a: fnp.cov(x, fweights=f, aweights=a),
        lambda x, f, a: np.cov(x, fweights=f, aweights=a),
        (F, const(np.array([1, 2, 1, 3, 1])), POS),
        ("mul", "dot_general"),
        shapes=((2, 5), (5,), (5,)),
        rtol=1e-5,
    ),
    _row(
        "cov_aweights_float32",
        lambda x, a: fnp.cov(x, aweights=a, dtype=np.float32),
        lambda x, a: np.cov(x, aweights=a, dtype=np.float32),
        (F, POS),
        ("mul", "dot_general"),
        shapes=((3, 4), (4,)),
        grad=False,  # the float32 rounding is beyond finite differences
        dtypes=(np.float32,),
    ),
    _row(
        "corrcoef",
        fnp.corrcoef,
        np.corrcoef,
        prims=("dot_general", "sqrt", "clamp"),
        shapes=((3, 5),),
        rtol=1e-5,
    ),
    _row(
        "corrcoef_x_y",
        lambda x, y: fnp.corrcoef(x, y, rowvar=False),
        lambda x, y: np.corrcoef(x, y, rowvar=False),
        (F, F),
        ("dot_general", "sqrt"),
        shapes=((5, 2), (5, 1)),
        rtol=1e-5,
    ),
]

# ---------------------------------------------------------------------------
# trapezoid, unwrap, ediff1d
# ---------------------------------------------------------------------------

INTEGRATION: list[OpInfo] = [
    _row(
        "trapezoid",
        fnp.trapezoid,
        np.trapezoid,
        prims=("add", "mul", "reduce_sum"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "trapezoid_x_1d_axis0",
        lambda y, x: fnp.trapezoid(y, x, axis=0),
        lambda y, x: np.trapezoid(y, x, axis=0),
        (F, F),
        ("sub", "mul", "reduce_sum"),
        shapes=((4, 2), (4,)),
        rtol=1e-5,
    ),
    _row(
        "trapezoid_x_nd_dx",
        lambda y, x, dx: fnp.trapezoid(y, x) + fnp.trapezoid(y, dx=dx),
        lambda y, x, dx: np.trapezoid(y, x) + np.trapezoid(y, dx=dx),
        (F, F, POS),
        ("sub", "mul", "reduce_sum"),
        shapes=((2, 3), (2, 3), ()),
        rtol=1e-5,
    ),
    _row(
        "trapezoid_int",
        lambda y: fnp.trapezoid(y, dx=2),
        lambda y: np.trapezoid(y, dx=2),
        (INT,),
        ("add", "reduce_sum"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unwrap",
        lambda p: fnp.unwrap(p, axis=0),
        lambda p: np.unwrap(p, axis=0),
        (WIDE,),
        ("rem", "select_n", "cumsum"),
        min_dims=1,
    ),
    _row(
        "unwrap_period_discont",
        lambda p: fnp.unwrap(p, discont=2.0, period=3.0),
        lambda p: np.unwrap(p, discont=2.0, period=3.0),
        (WIDE,),
        ("rem", "select_n", "cumsum"),
        min_dims=1,
    ),
    _row(
        "unwrap_int_period",
        lambda p: fnp.unwrap(p * 3, period=6),
        lambda p: np.unwrap(p * 3, period=6),
        (INT,),
        ("rem", "select_n", "cumsum"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "ediff1d",
        lambda x, e: fnp.ediff1d(x, to_end=e, to_begin=[-1.0, 2.0]),
        lambda x, e: np.ediff1d(x, to_end=e, to_begin=[-1.0, 2.0]),
        (F, F),
        ("sub", "concatenate"),
        shapes=((2, 3), (2,)),
    ),
    _row(
        "ediff1d_int8",
        lambda x: fnp.ediff1d(x.astype(np.int8), to_begin=3),
        lambda x: np.ediff1d(x.astype(np.int8), to_begin=3),
        (INT,),
        ("sub", "concatenate"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# gcd, lcm, ldexp, frexp, nextafter, spacing, i0
# ---------------------------------------------------------------------------

BIG_INT = Arg("int", (-60, 60))

NUMERIC: list[OpInfo] = [
    _row("gcd", fnp.gcd, np.gcd, (BIG_INT, BIG_INT), ("while", "rem"), grad=False, dtypes=I64),
    _row(
        "gcd_int32_scalar",
        lambda x: fnp.gcd(x.astype(np.int32), 12),
        lambda x: np.gcd(x.astype(np.int32), 12),
        (BIG_INT,),
        ("while", "rem"),
        grad=False,
        dtypes=I64,
    ),
    _row("lcm", fnp.lcm, np.lcm, (BIG_INT, BIG_INT), ("while", "div"), grad=False, dtypes=I64),
    _row(
        "ldexp",
        fnp.ldexp,
        np.ldexp,
        (F, Arg("int", (-40, 40))),
        ("pow", "mul"),
        rtol=1e-12,
    ),
    _row(
        "ldexp_extremes",
        lambda x, n: fnp.ldexp(x * 1e-300, n * 60),
        lambda x, n: np.ldexp(x * 1e-300, n * 60),
        (F, Arg("int", (-20, 40))),
        ("pow", "mul"),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "frexp_mantissa",
        lambda x: fnp.frexp(x * 1e3)[0],
        lambda x: np.frexp(x * 1e3)[0],
        prims=("log", "floor", "pow", "select_n"),
        avoid=(0.0,),
    ),
    _row(
        "frexp_exponent",
        lambda x: fnp.frexp(x * 1e3)[1],
        lambda x: np.frexp(x * 1e3)[1],
        prims=("log", "floor", "select_n"),
        grad=False,
    ),
    _row(
        "frexp_specials",
        lambda x: fnp.frexp(fnp.where(x > 1, np.inf, fnp.where(x < -1, 0.0, x * 1e-310)))[0],
        lambda x: np.frexp(np.where(x > 1, np.inf, np.where(x < -1, 0.0, x * 1e-310)))[0],
        prims=("log", "floor", "select_n"),
        grad=False,
        dtypes=F64,
    ),
    _row("nextafter", fnp.nextafter, np.nextafter, (F, F), ("nextafter",), rtol=0, atol=0),
    _row("spacing", fnp.spacing, np.spacing, prims=("nextafter", "sub"), rtol=0, atol=0),
    _row(
        "spacing_specials",
        lambda x: fnp.spacing(fnp.where(x > 1, -0.0, fnp.where(x < -1, np.inf, x))),
        lambda x: np.spacing(np.where(x > 1, -0.0, np.where(x < -1, np.inf, x))),
        prims=("nextafter", "sub"),
        grad=False,
    ),
    _row("i0", fnp.i0, np.i0, (Arg(domain=(-6.0, 6.0)),), ("exp", "bessel_i0e"), rtol=1e-12),
    _row(
        "i0_both_branches",
        lambda x: fnp.i0(x * 8.0),
        lambda x: np.i0(x * 8.0),
        prims=("exp", "mul", "add", "select_n"),
        rtol=1e-12,
        avoid=(2.5, -2.5),
        grad_tol=1e-4,
    ),
    _row(
        "i0_int",
        fnp.i0,
        np.i0,
        (INT,),
        ("convert_element_type", "exp", "bessel_i0e"),
        grad=False,
        dtypes=I64,
    ),
]

# ---------------------------------------------------------------------------
# Polynomials
# ---------------------------------------------------------------------------

LEADING = Arg(domain=(1.0, 2.0))  # a divisor's leading coefficient, away from 0

POLY: list[OpInfo] = [
    _row(
        "polyval",
        fnp.polyval,
        np.polyval,
        (F, F),
        ("mul", "add"),
        shapes=((4,), (2, 3)),
        rtol=1e-5,
    ),
    _row(
        "polyval_long_scan",
        lambda p, x: fnp.polyval(p * 0.3, x * 0.3),
        lambda p, x: np.polyval(p * 0.3, x * 0.3),
        (F, F),
        ("scan", "mul", "add"),
        shapes=((70,), (3,)),
        rtol=1e-5,
        grad_order=1,
    ),
    _row(
        "polyval_int",
        fnp.polyval,
        np.polyval,
        (INT, INT),
        ("mul", "add"),
        shapes=((3,), (4,)),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "polyadd",
        fnp.polyadd,
        np.polyadd,
        (F, F),
        ("add", "concatenate"),
        shapes=((2,), (4,)),
    ),
    _row(
        "polysub",
        fnp.polysub,
        np.polysub,
        (F, F),
        ("sub", "concatenate"),
        shapes=((5,), (3,)),
    ),
    _row(
        "polymul",
        fnp.polymul,
        np.polymul,
        (F, F),
        ("conv_general_dilated",),
        shapes=((3,), (4,)),
        rtol=1e-5,
    ),
    _row(
        "polydiv_quotient",
        lambda u, v0, v: fnp.polydiv(u, fnp.concatenate([v0, v]))[0],
        lambda u, v0, v: np.polydiv(u, np.concatenate([v0, v]))[0],
        (F, LEADING, F),
        ("div", "mul", "sub"),
        shapes=((5,), (1,), (2,)),
        rtol=1e-5,
    ),
    _row(
        "polydiv_remainder_tail",
        lambda u, v0, v: fnp.polydiv(u, fnp.concatenate([v0, v]))[1][-2:],
        lambda u, v0, v: np.polydiv(u, np.concatenate([v0, v]))[1][-2:],
        (F, LEADING, F),
        ("div", "mul", "sub"),
        shapes=((5,), (1,), (2,)),
        rtol=1e-5,
    ),
    _row(
        "polyder",
        lambda p: fnp.polyder(p, 2),
        lambda p: np.polyder(p, 2),
        prims=("mul", "slice"),
        shapes=((5,),),
    ),
    _row(
        "polyint",
        lambda p, k: fnp.polyint(p, 2, k),
        lambda p, k: np.polyint(p, 2, k),
        (F, F),
        ("div", "concatenate"),
        shapes=((4,), (2,)),
    ),
    _row(
        "poly",
        fnp.poly,
        np.poly,
        prims=("mul", "sub", "concatenate"),
        shapes=((4,),),
        rtol=1e-5,
    ),
    _row(
        "vander",
        lambda x: fnp.vander(x, 4),
        lambda x: np.vander(x, 4),
        prims=("cumprod", "concatenate", "rev"),
        shapes=((3,),),
        rtol=1e-5,
    ),
    _row(
        "vander_increasing_int",
        lambda x: fnp.vander(x, increasing=True),
        lambda x: np.vander(x, increasing=True),
        (INT,),
        ("cumprod", "concatenate"),
        shapes=((4,),),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "polyfit",
        lambda x, y: fnp.polyfit(x, y, 2),
        lambda x, y: np.polyfit(x, y, 2),
        (F, F),
        ("svd", "dot_general"),
        shapes=((6,), (6,)),
        avoid_ties=True,
        rtol=1e-5,
        grad_tol=1e-4,
        dtypes=F64,
    ),
    _row(
        "polyfit_weights_2d_cov",
        lambda x, y, w: fnp.polyfit(x, y, 1, w=w, cov=True)[1],
        lambda x, y, w: np.polyfit(x, y, 1, w=w, cov=True)[1],
        (F, F, POS),
        ("svd", "dot_general"),
        shapes=((5,), (5, 2), (5,)),
        avoid_ties=True,
        rtol=1e-5,
        grad_tol=1e-4,
        dtypes=F64,
    ),
    _row(
        "polyfit_full_singular_values",
        lambda x, y: fnp.polyfit(x, y, 2, full=True)[3],
        lambda x, y: np.polyfit(x, y, 2, full=True)[3],
        (F, F),
        ("svd",),
        shapes=((5,), (5,)),
        avoid_ties=True,
        rtol=1e-5,
        grad_tol=1e-4,
        dtypes=F64,
    ),
]

ROWS: list[OpInfo] = QUANTILES + NAN_REDUCTIONS + COV + INTEGRATION + NUMERIC + POLY
