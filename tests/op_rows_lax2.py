"""Op-table rows: the ``jax.lax`` names added with ``functrace/lax/extras.py``,
``special_extra.py``, ``assoc_scan.py``, ``solves.py`` and the composites
(``lax.cbrt``, ``lax.population_count``, ``lax.associative_scan``,
``lax.custom_linear_solve``...), ``lax.custom_root``, ``custom_derivatives.linear_call``,
``pure_callback`` and ``io_callback``.

The references are NumPy/SciPy computations written independently of the impls
(Python integers for the bit operations, per-element ``math.frexp`` for
``reduce_precision``, central differences of SciPy's ``gammainc`` for the derivatives
in the gamma shape). Static parameters are baked into the lambdas.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from op_db import BOOL, NONZERO, POS, UNIT, Arg, F, OpInfo, _sp

WIDE_INT = Arg("int", (-(2**62), 2**62))
SHIFT = Arg("int", (-3, 70))


def _per_int(fn: Any, *xs: Any) -> Any:
    """``fn`` on the Python ints of int64 arrays, wrapped back to int64."""
    arrs = np.broadcast_arrays(*[np.asarray(x) for x in xs])
    out = np.empty(arrs[0].shape, np.int64)
    for idx in np.ndindex(out.shape):
        v = fn(*[int(a[idx]) for a in arrs]) % 2**64
        out[idx] = v - 2**64 if v >= 2**63 else v
    return out[()]


def _np_popcount(x: Any) -> Any:
    return _per_int(lambda v: bin(v % 2**64).count("1"), x)


def _np_clz(x: Any) -> Any:
    return _per_int(lambda v: 64 - (v % 2**64).bit_length(), x)


def _np_mulhi(x: Any, y: Any) -> Any:
    return _per_int(lambda a, b: (a * b) >> 64, x, y)


def _np_srl(x: Any, y: Any) -> Any:
    return _per_int(lambda a, s: (a % 2**64) >> s if 0 <= s < 64 else 0, x, y)


def _np_reduce_precision(x: Any, ebits: int, mbits: int) -> Any:
    a = np.asarray(x)
    emax = 2 ** (ebits - 1) - 1
    out = np.empty(a.shape, a.dtype)
    for idx in np.ndindex(a.shape):
        v = float(a[idx])
        if not math.isfinite(v) or v == 0.0:
            out[idx] = v
            continue
        m, e = math.frexp(v)  # v = m 2^e, 0.5 <= |m| < 1
        r = math.ldexp(float(np.rint(m * 2.0 ** (mbits + 1))), e - mbits - 1)
        if abs(r) >= 2.0 ** (emax + 1):
            r = math.copysign(math.inf, v)
        elif abs(r) < 2.0 ** (1 - emax):
            r = math.copysign(0.0, v)
        out[idx] = r
    return out[()]


def _np_igamma_grad_a(a: float, x: Any) -> Any:
    import scipy.special

    h = 1e-5
    xs = np.asarray(x, np.float64)
    d = (scipy.special.gammainc(a + h, xs) - scipy.special.gammainc(a - h, xs)) / (2 * h)
    return np.asarray(d, np.asarray(x).dtype)[()]


def _np_random_gamma_grad(a: float, x: Any) -> Any:
    xs = np.asarray(x, np.float64)
    dens = np.exp((a - 1) * np.log(xs) - xs - math.lgamma(a))
    return np.asarray(-_np_igamma_grad_a(a, xs) / dens, np.asarray(x).dtype)[()]


def _k(x: Any, v: Any) -> Any:
    return lax.full_like(x, v)


def _cplx(x: Any, y: Any, w: complex) -> Any:
    z = lax.complex(x, y)
    return lax.mul(z, lax.full_like(z, w))


def _np_cplx(x: Any, y: Any, w: complex) -> Any:
    return (np.asarray(x) + 1j * np.asarray(y)) * w


def _affine(a: Any, b: Any) -> Any:
    # (a1, b1) then (a2, b2): x -> a2 (a1 x + b1) + b2
    return (a[0] * b[0], a[1] * b[0] + b[1])


def _np_affine_scan(a: Any, b: Any, reverse: bool = False) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    order = range(len(a) - 1, -1, -1) if reverse else range(len(a))
    out = np.empty_like(b)
    ca, cb = None, None
    for i in order:
        if ca is None:
            ca, cb = a[i], b[i]
        else:
            ca, cb = ca * a[i], cb * a[i] + b[i]
        out[i] = cb
    return out


def _solve_row(m: Any, b: Any) -> Any:
    mat = m + 4.0 * fnp.eye(3, dtype=m.dtype)
    return lax.custom_linear_solve(
        lambda x: mat @ x,
        b,
        lambda mv, r: fnp.linalg.solve(mat, r),
        lambda vm, r: fnp.linalg.solve(mat.T, r),
    )


def _np_solve_row(m: Any, b: Any) -> Any:
    return np.linalg.solve(np.asarray(m) + 4.0 * np.eye(3), b).astype(np.asarray(b).dtype)


def _linear_call_row(x: Any) -> Any:
    from functrace.custom_derivatives import linear_call

    return fnp.sin(linear_call(lambda r, v: v * r, lambda r, c: c * r, 2.5, x))


def _root_row(a: Any) -> Any:
    def newton(f: Any, x: Any) -> Any:
        return lax.fori_loop(0, 40, lambda i, v: v - f(v) / (3.0 * v * v), x)

    return lax.custom_root(
        lambda x: x * x * x - a, fnp.ones_like(a), newton, lambda g, y: y / g(fnp.ones_like(y))
    )


def _callback_row(method: str) -> Any:
    def f(x: Any) -> Any:
        spec = ft.ShapeDtypeStruct(x.shape, x.dtype)
        return ft.pure_callback(np.sin, spec, x, vmap_method=method) * 2.0

    return f


def _io_callback_row(x: Any) -> Any:
    spec = ft.ShapeDtypeStruct(x.shape, x.dtype)
    return ft.experimental.io_callback(np.sin, spec, x) * 2.0


def _checkify_row(x: Any) -> Any:
    ck = ft.experimental.checkify

    def f(v: Any) -> Any:
        ck.check(fnp.all(fnp.isfinite(v)), "not finite: {}", v)
        y = lax.fori_loop(0, 2, lambda i, c: c * 0.5 + fnp.sin(c), v)
        return lax.cond(fnp.sum(y) > 0.0, lambda u: u * 2.0, fnp.cos, y)

    return ck.checkify(f, errors=ck.all_checks)(x)[1]


def _checkify_ref(x: Any) -> Any:
    y = np.asarray(x)
    for _ in range(2):
        y = y * 0.5 + np.sin(y)
    return y * 2.0 if np.sum(y) > 0.0 else np.cos(y)


def _one(x: Any) -> Any:
    return np.ones((), x.dtype)[()]


ROWS: list[OpInfo] = [
    # lax's elementwise operations broadcast 0-d operands and size-1 axes, as JAX's lax
    OpInfo(
        "lax.mul[0-d and size-1 broadcast]",
        lambda x, y, s: lax.mul(lax.add(x, s), y),
        lambda x, y, s: (x + s) * y,
        (F, F, F),
        ("broadcast_in_dim", "add", "mul"),
        shapes=((2, 1), (1, 3), ()),
    ),
    # lax.pow of a float base and an integer exponent (JAX's one mixed-dtype case): the
    # base's dtype, the exponent not differentiated
    OpInfo(
        "lax.pow[integer exponent]",
        lambda x, n: lax.pow(x, n),
        lambda x, n: np.power(x.astype(np.float64), n).astype(x.dtype),
        (POS, Arg("int", (-3, 3))),
        ("pow",),
        shapes="same",
        rtol=1e-5,
    ),
    # lax.full_like with a traced fill value and JAX's shape= (differentiable in the fill)
    OpInfo(
        "lax.full_like[traced fill]",
        lambda x, v: lax.full_like(x, v),
        lambda x, v: np.full_like(x, v),
        (F, F),
        ("broadcast_in_dim",),
        shapes=((2, 3), ()),
    ),
    OpInfo(
        "lax.full_like[shape=(3, 2)]",
        lambda x, v: lax.full_like(x, v, shape=(3, 2)),
        lambda x, v: np.full((3, 2), v, np.asarray(x).dtype),
        (F, F),
        ("broadcast_in_dim",),
        shapes=((4,), ()),
    ),
    # -- elementwise math
    OpInfo("lax.cbrt", lax.cbrt, np.cbrt, (F,), ("cbrt",), shapes="same", avoid=(0.0,)),
    OpInfo(
        "lax.acosh", lax.acosh, np.arccosh, (Arg(domain=(1.2, 4.0)),), ("acosh",), shapes="same"
    ),
    OpInfo("lax.asinh", lax.asinh, np.arcsinh, (F,), ("asinh",), shapes="same"),
    OpInfo("lax.atanh", lax.atanh, np.arctanh, (UNIT,), ("atanh",), shapes="same", rtol=1e-5),
    OpInfo("lax.reciprocal", lax.reciprocal, np.reciprocal, (NONZERO,), ("div",), shapes="same"),
    OpInfo(
        "lax.bessel_i0e",
        lax.bessel_i0e,
        lambda x: _sp("i0e", x),
        (F,),
        ("bessel_i0e",),
        shapes="same",
        avoid=(0.0,),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.bessel_i1e",
        lax.bessel_i1e,
        lambda x: _sp("i1e", x),
        (F,),
        ("bessel_i1e",),
        shapes="same",
        avoid=(0.0,),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.zeta[s=2.5]",
        lambda q: lax.zeta(_k(q, 2.5), q),
        lambda q: _sp("zeta", 2.5, q),
        (Arg(domain=(0.5, 3.0)),),
        ("zeta",),
        shapes="same",
        rtol=1e-5,
    ),
    OpInfo(
        "lax.igamma_grad_a[a=2.5]",
        lambda x: lax.igamma_grad_a(_k(x, 2.5), x),
        lambda x: _np_igamma_grad_a(2.5, x),
        (POS,),
        ("igamma_grad_a",),
        shapes="same",
        rtol=1e-5,
        atol=1e-5,
    ),
    OpInfo(
        "lax.random_gamma_grad[a=1.7]",
        lambda x: lax.random_gamma_grad(_k(x, 1.7), x),
        lambda x: _np_random_gamma_grad(1.7, x),
        (POS,),
        ("random_gamma_grad",),
        shapes="same",
        rtol=1e-5,
        atol=1e-5,
    ),
    OpInfo(
        "lax.reduce_precision[bfloat16]",
        lambda x: lax.reduce_precision(x, 8, 7),
        lambda x: _np_reduce_precision(x, 8, 7),
        (F,),
        ("reduce_precision",),
        shapes="same",
        grad=False,  # piecewise constant, but "linear" (tangents are rounded), as in JAX
    ),
    OpInfo(
        "lax.reduce_precision[e5m2,range]",
        lambda x: lax.reduce_precision(x, 5, 2),
        lambda x: _np_reduce_precision(x, 5, 2),
        (Arg(domain=(-1e5, 1e5)),),
        ("reduce_precision",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "lax.reduce_precision[e5m2,tiny]",
        lambda x: lax.reduce_precision(x, 5, 2),
        lambda x: _np_reduce_precision(x, 5, 2),
        (Arg(domain=(-2e-4, 2e-4)),),
        ("reduce_precision",),
        shapes="same",
        grad=False,
    ),
    # -- complex parts (real inputs, complex intermediates)
    OpInfo(
        "lax.real",
        lambda x, y: lax.real(_cplx(x, y, 1 + 2j)),
        lambda x, y: np.real(_np_cplx(x, y, 1 + 2j)).astype(np.asarray(x).dtype),
        (F, F),
        ("real", "complex", "mul"),
        shapes="same",
    ),
    OpInfo(
        "lax.imag",
        lambda x, y: lax.imag(_cplx(x, y, 2 - 1j)),
        lambda x, y: np.imag(_np_cplx(x, y, 2 - 1j)).astype(np.asarray(x).dtype),
        (F, F),
        ("imag", "complex", "mul"),
        shapes="same",
    ),
    # |z| of a complex z, away from 0: its derivatives of order 2 go through abs's JVP
    # (real(conj(z) dz / |z|)), not through sign(z)'s zero derivative
    OpInfo(
        "lax.abs[complex]",
        lambda x, y: lax.abs(_cplx(x, y, 1 + 2j)),
        lambda x, y: np.abs(_np_cplx(x, y, 1 + 2j)).astype(np.asarray(x).dtype),
        (POS, F),
        ("abs", "mul"),
        shapes="same",
    ),
    OpInfo(
        "lax.conj",
        lambda x, y: lax.imag(lax.mul(lax.conj(_cplx(x, y, 1.0)), _cplx(y, x, 0.5 + 1j))),
        lambda x, y: np.imag(np.conj(_np_cplx(x, y, 1.0)) * _np_cplx(y, x, 0.5 + 1j)).astype(
            np.asarray(x).dtype
        ),
        (F, F),
        ("conj", "imag", "mul"),
        shapes="same",
    ),
    # -- integer bits
    OpInfo(
        "lax.population_count",
        lax.population_count,
        _np_popcount,
        (WIDE_INT,),
        ("population_count",),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.clz",
        lax.clz,
        _np_clz,
        (WIDE_INT,),
        ("clz",),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.mulhi",
        lax.mulhi,
        _np_mulhi,
        (WIDE_INT, WIDE_INT),
        ("mulhi",),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.shift_right_logical",
        lax.shift_right_logical,
        _np_srl,
        (WIDE_INT, SHIFT),
        ("shift_right_arithmetic", "shift_left", "and", "not", "select_n"),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        # unsigned operands: the top bit fills in, as for the signed integer of the bits
        "lax.shift_right_arithmetic_unsigned",
        lambda x, y: lax.shift_right_arithmetic(
            x.astype(np.uint64), fnp.clip(y, 0, 70).astype(np.uint64)
        ).astype(np.int64),
        lambda x, y: np.right_shift(x, np.clip(y, 0, 63)),
        (WIDE_INT, SHIFT),
        ("shift_right_arithmetic", "not", "or", "ge", "select_n"),
        shapes="same",
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.reduce_and",
        lambda x: lax.reduce_and(x, (0,)),
        lambda x: np.bitwise_and.reduce(np.asarray(x), 0),
        (WIDE_INT,),
        ("reduce_and",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.reduce_or",
        lambda x: lax.reduce_or(x, (0,)),
        lambda x: np.bitwise_or.reduce(np.asarray(x), 0),
        (WIDE_INT,),
        ("reduce_or",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.reduce_xor",
        lambda x: lax.reduce_xor(x, (-1,)),
        lambda x: np.bitwise_xor.reduce(np.asarray(x), -1),
        (WIDE_INT,),
        ("reduce_xor",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.int64,),
    ),
    OpInfo(
        "lax.reduce_xor[bool]",
        lambda x: lax.reduce_xor(x, (0,)),
        lambda x: np.logical_xor.reduce(np.asarray(x), 0),
        (BOOL,),
        ("reduce_xor",),
        shapes="same",
        min_dims=1,
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "lax.bitcast_convert_type",
        lambda x: lax.bitcast_convert_type(x, np.dtype(f"i{x.dtype.itemsize}")),
        lambda x: np.asarray(x).view(np.dtype(f"i{np.asarray(x).dtype.itemsize}")),
        (F,),
        ("bitcast_convert_type",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "lax.bitcast_convert_type[narrow]",
        lambda x: lax.bitcast_convert_type(x, np.uint16),
        lambda x: (
            np.ascontiguousarray(x)
            .view(np.uint16)
            .reshape((*np.shape(x), np.asarray(x).dtype.itemsize // 2))
        ),
        (F,),
        ("bitcast_convert_type",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "lax.bitcast_convert_type[roundtrip]",
        lambda x: lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.uint8), x.dtype),
        lambda x: np.asarray(x),
        (F,),
        ("bitcast_convert_type",),
        shapes="same",
        grad=False,
    ),
    # -- shapes
    OpInfo(
        "lax.broadcast",
        lambda x: lax.broadcast(x, (2, 1)),
        lambda x: np.broadcast_to(x, (2, 1, *np.shape(x))),
        (F,),
        ("broadcast_in_dim",),
        shapes="same",
    ),
    OpInfo(
        "lax.broadcast_to_rank",
        lambda x: lax.broadcast_to_rank(x, 3),
        lambda x: np.reshape(x, (1,) * (3 - min(np.ndim(x), 3)) + np.shape(x)),
        (F,),
        ("broadcast_in_dim",),
        shapes="same",
    ),
    OpInfo(
        "lax.broadcasted_iota",
        lambda x: x + lax.broadcasted_iota(x.dtype, x.shape, x.ndim - 1),
        lambda x: x + np.arange(np.shape(x)[-1]).astype(np.asarray(x).dtype),
        (F,),
        ("iota", "add"),
        shapes="same",
        min_dims=1,
    ),
    OpInfo(
        "lax.collapse",
        lambda x: lax.collapse(x, 1),
        lambda x: np.reshape(x, (np.shape(x)[0], -1)),
        (F,),
        ("reshape",),
        shapes=((2, 3, 4),),
    ),
    OpInfo(
        "lax.split",
        lambda x: lax.concatenate(lax.split(x, (1, 2), axis=1)[::-1], 1),
        lambda x: np.concatenate([np.asarray(x)[:, 1:], np.asarray(x)[:, :1]], 1),
        (F,),
        ("slice", "concatenate"),
        shapes=((2, 3),),
    ),
    OpInfo(
        "lax.tile",
        lambda x: lax.tile(x, (2, 1, 3)),
        lambda x: np.tile(x, (2, 1, 3)),
        (F,),
        ("broadcast_in_dim", "reshape"),
        shapes=((2, 3, 1),),
    ),
    OpInfo(
        "lax.empty",
        lambda x: x + lax.empty(x.shape, x.dtype),
        lambda x: x + np.zeros((), np.asarray(x).dtype),
        (F,),
        ("broadcast_in_dim",),
        shapes="same",
    ),
    OpInfo(
        "lax.batch_matmul",
        lax.batch_matmul,
        np.matmul,
        (F, F),
        ("dot_general",),
        shapes=((2, 3, 4), (2, 4, 2)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.optimization_barrier",
        lambda x: lax.optimization_barrier((x, x * 2.0))[1],
        lambda x: np.asarray(x) * 2.0,
        (F,),
        ("mul",),
        shapes="same",
    ),
    # -- scans, solves, roots, callbacks
    OpInfo(
        "lax.associative_scan",
        lambda x: lax.associative_scan(fnp.add, x),
        lambda x: np.cumsum(x, axis=0),
        (F,),
        ("slice", "concatenate", "reshape", "add"),
        shapes="same",
        min_dims=1,
        rtol=1e-5,
    ),
    OpInfo(
        "lax.associative_scan[affine,axis=1]",
        lambda a, b: lax.associative_scan(_affine, (a, b), axis=1)[1],
        lambda a, b: np.moveaxis(
            np.stack([_np_affine_scan(a[i], b[i]) for i in range(np.shape(a)[0])]), 0, 0
        ),
        (UNIT, F),
        ("slice", "concatenate", "reshape", "mul", "add"),
        shapes=((2, 7), (2, 7)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.associative_scan[affine,reverse]",
        lambda a, b: lax.associative_scan(_affine, (a, b), reverse=True)[1],
        lambda a, b: _np_affine_scan(a, b, reverse=True),
        (UNIT, F),
        ("slice", "concatenate", "reshape", "rev", "mul", "add"),
        shapes=((6,), (6,)),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.custom_linear_solve",
        _solve_row,
        _np_solve_row,
        (UNIT, F),
        ("custom_linear_solve",),
        shapes=((3, 3), (3,)),
        dtypes=(np.float64,),
        rtol=1e-5,
    ),
    OpInfo(
        "custom_derivatives.linear_call",
        _linear_call_row,
        lambda x: np.sin(np.asarray(x) * 2.5),
        (F,),
        ("linear_call", "sin"),
        shapes="same",
    ),
    OpInfo(
        "lax.custom_root",
        _root_row,
        np.cbrt,
        (Arg(domain=(0.5, 3.0)),),
        ("custom_jvp_call",),
        shapes="same",
        dtypes=(np.float64,),
        rtol=1e-5,
    ),
    OpInfo(
        "lax.rng_uniform[a=b]",
        lambda x: x * lax.rng_uniform(_one(x), _one(x), x.shape),  # [1, 1): all ones
        lambda x: np.asarray(x) * 1,
        (F,),
        ("rng_uniform", "mul"),
        shapes="same",
    ),
    OpInfo(
        "pure_callback[sequential]",
        _callback_row("sequential"),
        lambda x: np.sin(x) * 2.0,
        (F,),
        ("pure_callback",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "experimental.checkify",
        _checkify_row,
        _checkify_ref,
        (F,),
        ("check", "sin", "cond", "scan"),
        shapes="same",
    ),
    OpInfo(
        "experimental.io_callback",
        _io_callback_row,
        lambda x: np.sin(x) * 2.0,
        (F,),
        ("io_callback",),
        shapes="same",
        grad=False,
    ),
    OpInfo(
        "pure_callback[expand_dims]",
        _callback_row("expand_dims"),
        lambda x: np.sin(x) * 2.0,
        (F,),
        ("pure_callback",),
        shapes="same",
        grad=False,
    ),
]
