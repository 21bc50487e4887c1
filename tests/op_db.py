"""The op table: one row per primitive-level op and per functrace.numpy function.

Each row says how to draw arguments and what to compare against; the tests in
``test_ops.py`` run every row through the same checks (eager == NumPy, jaxpr
round trip, gradient checks, and later jit and vmap). Adding a primitive or an
fnp function means adding a row here; ``test_rule_coverage.py`` fails otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

import functrace.lax as lax
import functrace.numpy as fnp


@dataclass(frozen=True)
class Arg:
    """How to draw one argument.

    kind: "float" (drawn in ``domain``), "int" (in ``domain``, int64), "bool",
    or "const" (the fixed ``value``, never differentiated).
    """

    kind: str = "float"
    domain: tuple[float, float] = (-3.0, 3.0)
    value: Any = None


F = Arg()
POS = Arg(domain=(0.2, 3.0))
UNIT = Arg(domain=(-0.9, 0.9))
# The jumps of the step functions inside F's domain: their finite differences across one
# are huge where the derivative is 0 (floor/ceil/trunc at integers, round/rint at halves)
INTEGERS = (-2.0, -1.0, 0.0, 1.0, 2.0)
HALVES = (-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)
NONZERO = Arg(domain=(0.3, 3.0))  # sign is drawn separately below for "nonzero"
INT = Arg("int", (-5, 5))
NONNEG_INT = Arg("int", (0, 5))
# x / y in (1.05, 1.9): away from the jumps of rem, where finite differences break.
REM_X = Arg(domain=(1.1, 1.9))
REM_Y = Arg(domain=(1.0, 1.05))
BOOL = Arg("bool")


def const(v: Any) -> Arg:
    return Arg("const", value=v)


@dataclass(frozen=True)
class OpInfo:
    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any] | None
    args: tuple[Arg, ...]
    primitives: tuple[str, ...] = ()
    # "broadcast": mutually broadcastable shapes; "same": one shape for all array args;
    # or a tuple of fixed shapes (one per arg).
    shapes: Any = "broadcast"
    grad: bool = True
    grad_order: int = 2
    dtypes: tuple[Any, ...] = (np.float64, np.float32)
    rtol: float = 1e-6
    atol: float = 1e-6
    min_dims: int = 0
    # Away from kinks: minimum distance of floats from these points (for grad checks).
    avoid: tuple[float, ...] = ()
    avoid_ties: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad_tol: float = 1e-5  # atol and rtol*10 of check_grads

    def __str__(self) -> str:
        return self.name


def _elem(
    name: str,
    fnp_fn: Callable[..., Any],
    np_fn: Callable[..., Any],
    nargs: int,
    prims: tuple[str, ...],
    arg: Arg = F,
    **kw: Any,
) -> OpInfo:
    return OpInfo(name, fnp_fn, np_fn, (arg,) * nargs, prims, **kw)


def _lax(
    name: str,
    lax_fn: Callable[..., Any],
    np_fn: Callable[..., Any],
    nargs: int,
    arg: Arg = F,
    **kw: Any,
) -> OpInfo:
    kw.setdefault("shapes", "same")
    return OpInfo(f"lax.{name}", lax_fn, np_fn, (arg,) * nargs, (name,), **kw)


def _np_round_away(x: Any) -> Any:
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(np.asarray(x).dtype)


def _np_logistic(x: Any) -> Any:
    return (1 / (1 + np.exp(-np.asarray(x)))).astype(np.asarray(x).dtype)


def _np_erf(x: Any) -> Any:
    import math

    x = np.asarray(x)
    return np.vectorize(math.erf, otypes=[x.dtype])(x)[()]


def _sp(name: str, *args: Any) -> Any:
    """SciPy's special function ``name`` (a test dependency), in the dtype of the last arg."""
    import scipy.special

    x = np.asarray(args[-1])
    return np.asarray(getattr(scipy.special, name)(*args), dtype=x.dtype)[()]


def _scan_cumulative(x: Any) -> Any:
    # a carry that mixes nonlinearly with the inputs, and stacked outputs
    def body(c: Any, xi: Any) -> Any:
        c = fnp.sin(c) * 0.5 + xi * c + xi
        return c, c * c

    c, ys = lax.scan(body, fnp.zeros_like(x[0]), x)
    return c + fnp.sum(ys, axis=0)


def _scan_cumulative_np(x: Any) -> Any:
    c = np.zeros_like(x[0])
    acc = np.zeros_like(x[0])
    for xi in x:
        c = np.sin(c) * 0.5 + xi * c + xi
        acc = acc + c * c
    return c + acc


def _while_doubling(x: Any) -> Any:
    # a data-dependent trip count: multiply until the norm passes 10
    def cond(c: Any) -> Any:
        return fnp.sum(c[0] * c[0]) < 100.0

    def body(c: Any) -> Any:
        return c[0] * 1.7 + fnp.sin(c[0]) * 0.1, c[1] + 1

    return lax.while_loop(cond, body, (x, 0))[0]


def _while_doubling_np(x: Any) -> Any:
    x = np.array(x, dtype=np.asarray(x).dtype)
    while np.sum(x * x) < 100.0:
        x = x * 1.7 + np.sin(x) * 0.1
    return x


# ---------------------------------------------------------------------------
# Primitive-level rows (functrace.lax, equal shapes and dtypes)
# ---------------------------------------------------------------------------

LAX_OPS: list[OpInfo] = [
    _lax("neg", lax.neg, np.negative, 1),
    _lax("add", lax.add, np.add, 2),
    _lax("sub", lax.sub, np.subtract, 2),
    _lax("mul", lax.mul, np.multiply, 2),
    OpInfo("lax.div", lax.div, np.true_divide, (F, NONZERO), ("div",), shapes="same"),
    OpInfo("lax.rem", lax.rem, np.fmod, (REM_X, REM_Y), ("rem",), shapes="same"),
    _lax("max", lax.max, np.maximum, 2, avoid_ties=True),
    _lax("min", lax.min, np.minimum, 2, avoid_ties=True),
    OpInfo(
        "lax.integer_pow",
        lambda x: lax.integer_pow(x, 3),
        lambda x: x**3,
        (F,),
        ("integer_pow",),
        shapes="same",
    ),
    OpInfo("lax.pow", lax.pow, np.power, (POS, F), ("pow",), shapes="same", rtol=1e-5),
    _lax("atan2", lax.atan2, np.arctan2, 2, arg=NONZERO),
    _lax("exp", lax.exp, np.exp, 1),
    _lax("log", lax.log, np.log, 1, arg=POS),
    _lax("log1p", lax.log1p, np.log1p, 1, arg=POS),
    _lax("expm1", lax.expm1, np.expm1, 1),
    _lax("sin", lax.sin, np.sin, 1),
    _lax("cos", lax.cos, np.cos, 1),
    _lax("tan", lax.tan, np.tan, 1, arg=UNIT),
    _lax("tanh", lax.tanh, np.tanh, 1),
    _lax("logistic", lax.logistic, _np_logistic, 1),
    _lax("sqrt", lax.sqrt, np.sqrt, 1, arg=POS),
    _lax("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), 1, arg=POS, rtol=1e-5),
    _lax("erf", lax.erf, _np_erf, 1, rtol=1e-5),
    _lax("erfc", lax.erfc, lambda x: _sp("erfc", x), 1, rtol=1e-5),
    _lax("lgamma", lax.lgamma, lambda x: _sp("gammaln", x), 1, arg=POS, rtol=1e-5),
    _lax("digamma", lax.digamma, lambda x: _sp("digamma", x), 1, arg=POS, rtol=1e-5),
    OpInfo(
        "lax.igamma[a=2.5]",
        lambda x: lax.igamma(lax.full_like(x, 2.5), x),
        lambda x: _sp("gammainc", 2.5, x),
        (POS,),
        ("igamma",),
        shapes="same",
        rtol=1e-5,
    ),
    OpInfo(
        "lax.igammac[a=0.7]",
        lambda x: lax.igammac(lax.full_like(x, 0.7), x),
        lambda x: _sp("gammaincc", 0.7, x),
        (POS,),
        ("igammac",),
        shapes="same",
        rtol=1e-5,
    ),
    OpInfo(
        "lax.betainc[a=2.5,b=0.8]",
        lambda x: lax.betainc(lax.full_like(x, 2.5), lax.full_like(x, 0.8), x),
        lambda x: _sp("betainc", 2.5, 0.8, x),
        (Arg(domain=(0.05, 0.95)),),
        ("betainc",),
        shapes="same",
        rtol=1e-5,
    ),
    OpInfo(
        "lax.polygamma[n=1]",
        lambda x: lax.polygamma(1, x),
        lambda x: _sp("polygamma", 1, x),
        (POS,),
        ("polygamma",),
        shapes="same",
        rtol=1e-5,
    ),
    OpInfo(
        "lax.polygamma[n=2]",
        lambda x: lax.polygamma(2, x),
        lambda x: _sp("polygamma", 2, x),
        (POS,),
        ("polygamma",),
        shapes="same",
        rtol=1e-5,
        grad_order=1,
    ),
    _lax("abs", lax.abs, np.abs, 1, avoid=(0.0,)),
    _lax("sign", lax.sign, np.sign, 1, avoid=(0.0,)),
    _lax("floor", lax.floor, np.floor, 1, avoid=INTEGERS),
    _lax("ceil", lax.ceil, np.ceil, 1, avoid=INTEGERS),
    OpInfo("lax.round", lax.round, _np_round_away, (F,), ("round",), shapes="same", avoid=HALVES),
    _lax("eq", lax.eq, np.equal, 2, grad=False),
    _lax("ne", lax.ne, np.not_equal, 2, grad=False),
    _lax("lt", lax.lt, np.less, 2, grad=False),
    _lax("le", lax.le, np.less_equal, 2, grad=False),
    _lax("gt", lax.gt, np.greater, 2, grad=False),
    _lax("ge", lax.ge, np.greater_equal, 2, grad=False),
    OpInfo(
        "lax.and",
        lax.bitwise_and,
        np.bitwise_and,
        (BOOL, BOOL),
        ("and",),
        shapes="same",
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "lax.or",
        lax.bitwise_or,
        np.bitwise_or,
        (BOOL, BOOL),
        ("or",),
        shapes="same",
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "lax.xor",
        lax.bitwise_xor,
        np.bitwise_xor,
        (INT, INT),
        ("xor",),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.not",
        lax.bitwise_not,
        np.invert,
        (INT,),
        ("not",),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.select_n",
        lambda p, x, y: lax.select_n(p, x, y),
        lambda p, x, y: np.where(p, y, x),
        (BOOL, F, F),
        ("select_n",),
        shapes="same",
    ),
    OpInfo(
        "lax.clamp",
        lambda lo, x, hi: lax.clamp(
            lax.convert_element_type(lo, x.dtype), x, lax.convert_element_type(hi, x.dtype)
        ),
        lambda lo, x, hi: np.clip(x, lo, hi),
        (const(-1.0), F, const(1.0)),
        ("clamp",),
        shapes="same",
        avoid=(-1.0, 1.0),
    ),
    OpInfo(
        "lax.convert_element_type",
        lambda x: lax.convert_element_type(x, np.float32),
        lambda x: np.asarray(x).astype(np.float32),
        (F,),
        ("convert_element_type",),
        shapes="same",
        rtol=1e-6,
        dtypes=(np.float64,),
        grad_tol=1e-2,
    ),
    OpInfo(
        "lax.stop_gradient",
        lax.stop_gradient,
        lambda x: x,
        (F,),
        ("stop_gradient",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "lax.reduce_sum",
        lambda x: lax.reduce_sum(x, (0,)),
        lambda x: np.sum(x, 0),
        (F,),
        ("reduce_sum",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.broadcast_in_dim",
        lambda x: lax.broadcast_in_dim(x, (2, *x.shape), tuple(range(1, x.ndim + 1))),
        lambda x: np.broadcast_to(x, (2, *np.shape(x))),
        (F,),
        ("broadcast_in_dim",),
        shapes="same",
    ),
    OpInfo(
        "lax.scan",
        _scan_cumulative,
        _scan_cumulative_np,
        (UNIT,),
        ("scan",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.cond",
        lambda p, x: lax.cond(p, lambda x: fnp.sin(x) * x, fnp.cos, x),
        lambda p, x: np.where(p, np.sin(x) * x, np.cos(x)),
        (Arg("const", value=True), F),
        ("cond",),
        shapes="same",
    ),
    OpInfo(
        "lax.cond_false",
        lambda p, x: lax.cond(p, lambda x: fnp.sin(x) * x, fnp.cos, x),
        lambda p, x: np.where(p, np.sin(x) * x, np.cos(x)),
        (Arg("const", value=False), F),
        ("cond",),
        shapes="same",
    ),
    OpInfo(
        "lax.while_loop",
        _while_doubling,
        _while_doubling_np,
        (Arg(domain=(0.5, 2.0)),),
        ("while",),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
        grad_order=1,
    ),
    OpInfo(
        "lax.reshape",
        lambda x: lax.reshape(x, (int(np.prod(x.shape)),)),
        lambda x: np.reshape(x, -1),
        (F,),
        ("reshape",),
        shapes="same",
    ),
]

# ---------------------------------------------------------------------------
# functrace.numpy rows (broadcasting, promotion)
# ---------------------------------------------------------------------------

FNP_OPS: list[OpInfo] = [
    _elem("add", fnp.add, np.add, 2, ("add",)),
    _elem("subtract", fnp.subtract, np.subtract, 2, ("sub",)),
    _elem("multiply", fnp.multiply, np.multiply, 2, ("mul",)),
    OpInfo("true_divide", fnp.true_divide, np.true_divide, (F, NONZERO), ("div",)),
    OpInfo(
        "floor_divide",
        fnp.floor_divide,
        np.floor_divide,
        (F, NONZERO),
        ("div", "floor"),
        grad=False,
    ),
    OpInfo("remainder", fnp.remainder, np.remainder, (REM_X, REM_Y), ("rem",)),
    OpInfo("remainder_signs", fnp.remainder, np.remainder, (F, NONZERO), ("rem",), grad=False),
    OpInfo("fmod", fnp.fmod, np.fmod, (REM_X, REM_Y), ("rem",)),
    OpInfo("power", fnp.power, np.power, (POS, F), ("pow",), rtol=1e-5),
    OpInfo(
        "power_int", lambda x: fnp.power(x, 3), lambda x: np.power(x, 3), (F,), ("integer_pow",)
    ),
    OpInfo("square", fnp.square, np.square, (F,), ("integer_pow",)),
    OpInfo("reciprocal", fnp.reciprocal, np.reciprocal, (NONZERO,), ("div",)),
    _elem("maximum", fnp.maximum, np.maximum, 2, ("max",), avoid_ties=True),
    _elem("minimum", fnp.minimum, np.minimum, 2, ("min",), avoid_ties=True),
    _elem("arctan2", fnp.arctan2, np.arctan2, 2, ("atan2",), arg=NONZERO),
    _elem("negative", fnp.negative, np.negative, 1, ("neg",)),
    _elem("positive", fnp.positive, np.positive, 1, ()),
    _elem("absolute", fnp.absolute, np.absolute, 1, ("abs",), avoid=(0.0,)),
    _elem("sign", fnp.sign, np.sign, 1, ("sign",), avoid=(0.0,)),
    _elem("exp", fnp.exp, np.exp, 1, ("exp",)),
    _elem("log", fnp.log, np.log, 1, ("log",), arg=POS),
    _elem("log1p", fnp.log1p, np.log1p, 1, ("log1p",), arg=POS),
    _elem("expm1", fnp.expm1, np.expm1, 1, ("expm1",)),
    _elem("sin", fnp.sin, np.sin, 1, ("sin",)),
    _elem("cos", fnp.cos, np.cos, 1, ("cos",)),
    _elem("tan", fnp.tan, np.tan, 1, ("tan",), arg=UNIT),
    _elem("tanh", fnp.tanh, np.tanh, 1, ("tanh",)),
    _elem("sqrt", fnp.sqrt, np.sqrt, 1, ("sqrt",), arg=POS),
    _elem("floor", fnp.floor, np.floor, 1, ("floor",), avoid=INTEGERS),
    _elem("ceil", fnp.ceil, np.ceil, 1, ("ceil",), avoid=INTEGERS),
    _elem("rint", fnp.rint, np.rint, 1, ("round",), avoid=HALVES),
    _elem("trunc", fnp.trunc, np.trunc, 1, ("floor", "ceil"), avoid=INTEGERS),
    _elem("equal", fnp.equal, np.equal, 2, ("eq",), grad=False),
    _elem("not_equal", fnp.not_equal, np.not_equal, 2, ("ne",), grad=False),
    _elem("less", fnp.less, np.less, 2, ("lt",), grad=False),
    _elem("less_equal", fnp.less_equal, np.less_equal, 2, ("le",), grad=False),
    _elem("greater", fnp.greater, np.greater, 2, ("gt",), grad=False),
    _elem("greater_equal", fnp.greater_equal, np.greater_equal, 2, ("ge",), grad=False),
    OpInfo(
        "logical_and",
        fnp.logical_and,
        np.logical_and,
        (BOOL, BOOL),
        ("and",),
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "logical_or",
        fnp.logical_or,
        np.logical_or,
        (BOOL, BOOL),
        ("or",),
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "logical_xor",
        fnp.logical_xor,
        np.logical_xor,
        (BOOL, BOOL),
        ("xor",),
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "logical_not",
        fnp.logical_not,
        np.logical_not,
        (BOOL,),
        ("not",),
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "bitwise_and",
        fnp.bitwise_and,
        np.bitwise_and,
        (INT, INT),
        ("and",),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "bitwise_or",
        fnp.bitwise_or,
        np.bitwise_or,
        (INT, INT),
        ("or",),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "bitwise_xor",
        fnp.bitwise_xor,
        np.bitwise_xor,
        (INT, INT),
        ("xor",),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo("invert", fnp.invert, np.invert, (INT,), ("not",), grad=False, dtypes=(np.int64,)),
    OpInfo(
        "left_shift",
        fnp.left_shift,
        np.left_shift,
        (INT, INT),  # negative amounts shift everything out, as in NumPy
        ("shift_left",),
        grad=False,
        dtypes=(np.int64, np.int32),
    ),
    OpInfo(
        "right_shift",
        fnp.right_shift,
        np.right_shift,
        (INT, INT),
        ("shift_right_arithmetic",),
        grad=False,
        dtypes=(np.int64, np.int32),
    ),
    OpInfo(
        "power_int_arrays",  # an integer base to integer exponents that differ
        fnp.power,
        np.power,
        (INT, NONNEG_INT),
        ("pow",),
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo("where", fnp.where, np.where, (BOOL, F, F), ("select_n",)),
    OpInfo(
        "clip",
        lambda x: fnp.clip(x, -1.0, 1.0),
        lambda x: np.clip(x, -1.0, 1.0),
        (F,),
        ("select_n",),
        avoid=(-1.0, 1.0),
    ),
    OpInfo(
        "clip_arrays",
        fnp.clip,
        np.clip,
        (F, Arg(domain=(-3, -1.5)), Arg(domain=(1.5, 3))),
        ("select_n",),
        avoid=(-1.0, 1.0),
    ),
    OpInfo(
        "logaddexp", fnp.logaddexp, np.logaddexp, (F, F), ("exp", "log"), rtol=1e-5, avoid_ties=True
    ),
    OpInfo("isfinite", fnp.isfinite, np.isfinite, (F,), ("lt",), grad=False),
    OpInfo("isnan", fnp.isnan, np.isnan, (F,), ("ne",), grad=False),
    OpInfo("isinf", fnp.isinf, np.isinf, (F,), ("eq",), grad=False),
    OpInfo("sum", fnp.sum, np.sum, (F,), ("reduce_sum",), rtol=1e-5),
    OpInfo(
        "sum_axis",
        lambda x: fnp.sum(x, axis=-1, keepdims=True),
        lambda x: np.sum(x, axis=-1, keepdims=True),
        (F,),
        ("reduce_sum",),
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo("mean", fnp.mean, np.mean, (F,), ("reduce_sum", "div"), rtol=1e-5),
    OpInfo(
        "mean_axis",
        lambda x: fnp.mean(x, axis=0),
        lambda x: np.mean(x, axis=0),
        (F,),
        ("reduce_sum", "div"),
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "reshape",
        lambda x: fnp.reshape(x, (-1,)),
        lambda x: np.reshape(x, (-1,)),
        (F,),
        ("reshape",),
    ),
]


def _extra_rows() -> list[OpInfo]:
    # Rows kept in separate files by family; each defines ROWS: list[OpInfo].
    import op_rows_conv
    import op_rows_fft
    import op_rows_image
    import op_rows_indexing
    import op_rows_lax
    import op_rows_lax2
    import op_rows_lax3
    import op_rows_lax_api
    import op_rows_lax_xla
    import op_rows_linalg
    import op_rows_linalg2
    import op_rows_numpy
    import op_rows_numpy2
    import op_rows_numpy3
    import op_rows_numpy4
    import op_rows_numpy5
    import op_rows_numpy6
    import op_rows_numpy7
    import op_rows_parallel
    import op_rows_random
    import op_rows_scipy
    import op_rows_scipy2
    import op_rows_solvers
    import op_rows_sparse
    import op_rows_spatial
    import op_rows_windowed

    return (
        op_rows_lax.ROWS
        + op_rows_lax_api.ROWS
        + op_rows_numpy.ROWS
        + op_rows_indexing.ROWS
        + op_rows_linalg.ROWS
        + op_rows_numpy2.ROWS
        + op_rows_numpy3.ROWS
        + op_rows_random.ROWS
        + op_rows_windowed.ROWS
        + op_rows_conv.ROWS
        + op_rows_parallel.ROWS
        + op_rows_numpy4.ROWS
        + op_rows_numpy5.ROWS
        + op_rows_numpy6.ROWS
        + op_rows_numpy7.ROWS
        + op_rows_linalg2.ROWS
        + op_rows_lax2.ROWS
        + op_rows_lax3.ROWS
        + op_rows_lax_xla.ROWS
        + op_rows_scipy.ROWS
        + op_rows_scipy2.ROWS
        + op_rows_solvers.ROWS
        + op_rows_fft.ROWS
        + op_rows_spatial.ROWS
        + op_rows_image.ROWS
        + op_rows_sparse.ROWS
    )


# ---------------------------------------------------------------------------
# Argument strategies
# ---------------------------------------------------------------------------


def shapes_for(op: OpInfo) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    n = len(op.args)
    if isinstance(op.shapes, tuple):
        return st.just(op.shapes)
    if op.shapes == "same" or n == 1:
        return hnp.array_shapes(min_dims=op.min_dims, max_dims=3, min_side=1, max_side=4).map(
            lambda s: (s,) * n
        )
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=op.min_dims, max_dims=3, min_side=1, max_side=4
    ).map(lambda bs: bs.input_shapes)


def _away(x: np.ndarray, points: tuple[float, ...], gap: float = 0.15) -> np.ndarray:
    for p in points:
        close = np.abs(x - p) < gap
        x = np.where(close, p + np.where(x >= p, gap, -gap), x)
    return x


@st.composite
def op_args(draw: Any, op: OpInfo, dtype: Any) -> tuple[Any, ...]:
    shapes = draw(shapes_for(op))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    out = []
    for arg, shape in zip(op.args, shapes):
        if arg.kind == "const":
            out.append(arg.value)
            continue
        if arg.kind == "bool":
            a = rng.random(shape) < 0.5
        elif arg.kind == "int":
            a = rng.integers(int(arg.domain[0]), int(arg.domain[1]) + 1, shape)
        else:
            lo, hi = arg.domain
            a = rng.uniform(lo, hi, shape)
            size = int(np.prod(shape, dtype=np.int64))
            if op.avoid_ties and size > 1:
                # distinct values within an argument: a shuffled grid inside the domain,
                # spaced far wider than the finite-difference step
                jitter = rng.uniform(0, 0.1, size) / size
                grid = lo + (hi - lo) * (np.linspace(0, 1, size) * (1 - 0.1 / size) + jitter)
                a = rng.permutation(grid).reshape(shape)
            if arg is NONZERO:
                a = a * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
            if op.avoid_ties:
                a = a + 0.37 * len(out)  # distinct values across arguments
            if op.avoid:
                a = _away(a, op.avoid)
        dt = np.dtype(dtype) if arg.kind == "float" else a.dtype
        a = np.asarray(a).astype(dt)
        out.append(a[()] if a.ndim == 0 and draw(st.booleans()) else a)
    return tuple(out)


def by_name(name: str) -> OpInfo:
    for op in ALL_OPS:
        if op.name == name:
            return op
    raise KeyError(name)


ALL_OPS: list[OpInfo] = LAX_OPS + FNP_OPS + _extra_rows()

# ---------------------------------------------------------------------------
# Rows whose jit check compiles for many seconds (pytest marker ``slow_compile``)
# ---------------------------------------------------------------------------

# The jit case of these rows (test_jit.py::test_op_table_jit_matches_eager, every dtype)
# carries the ``slow_compile`` marker: ``make test`` deselects it, ``make fuzz`` runs it.
# Their eager, jaxpr, gradient, vmap and eager-reuse checks stay in ``make test``.
#
# The gamma-based samplers draw by rejection (a ``while_loop``), which jit lowers to a
# native loop that Numba compiles for several seconds per dtype; no other row's jit case
# takes more than 1.2 s (most fused kernels go to the direct compiler). The rows share
# the gamma/loggamma loops: the first of them in a pytest worker pays the compile and the
# others reuse it, so they move together (else the compile moves to the one left behind).
# Seconds of the jit case, float64 / float32, in one ``make test`` run (2 workers, quiet
# 2-core machine) at commit 95f35b9, where the whole op-table jit sweep took 86 s of
# worker time: t 5.10 / -, chisquare 0.53 / 7.59, f 2.98 / -, generalized_normal
# 0.28 / 1.12. Their other checks there took under 1 s each.
SLOW_COMPILE_JIT: frozenset[str] = frozenset(
    {"random.t", "random.chisquare", "random.f", "random.generalized_normal"}
)

# ---------------------------------------------------------------------------
# Rows whose order-2 gradient check is slow per example (fewer examples in make test)
# ---------------------------------------------------------------------------

# test_ops.py::test_check_grads draws 3 examples per row in ``make test`` (10 until the
# op table grew past 1100 differentiable rows: test_check_grads then took 271 of the
# suite's ~1330 worker-seconds on the 2-core AMD Zen 4 VM) and 100 in ``make fuzz``;
# these rows draw 2 in ``make test`` (still 100 in ``make fuzz``). Each
# example evaluates the function and its first two derivatives in both modes, and these
# functions are long chains of primitives (series, continued fractions, erfc/log_ndtr
# compositions). Seconds of the whole row (10 examples) in one ``make test`` run (2
# workers, quiet 2-core AMD Zen 5) at commit 9389a48, where test_check_grads took 205 s
# of the suite's ~910 worker-seconds and every other row under 2.1 s: truncnorm sf 9.1,
# cdf 9.0, logsf 8.3, logcdf 8.2, logpdf 2.6; bessel_jn 7.2, owens_t 3.7, expn 3.4,
# expi 3.0, spence 2.6, erfcx 2.5, poch 2.3, hyp1f1 2.2, sici_ci 2.2.
SLOW_GRAD_CHECKS: frozenset[str] = frozenset(
    {
        "scipy.stats.truncnorm.sf",
        "scipy.stats.truncnorm.cdf",
        "scipy.stats.truncnorm.logsf",
        "scipy.stats.truncnorm.logcdf",
        "scipy.stats.truncnorm.logpdf",
        "scipy.special.bessel_jn",
        "scipy.special.owens_t",
        "scipy.special.expn",
        "scipy.special.expi",
        "scipy.special.spence",
        "scipy.special.erfcx",
        "scipy.special.poch",
        "scipy.special.hyp1f1",
        "scipy.special.sici_ci",
    }
)
