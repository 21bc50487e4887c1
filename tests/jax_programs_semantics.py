"""JAX programs on the edge cases of ``jax.numpy`` and ``jax.lax`` numerics, run under JAX
and under functrace.

A fifth set next to ``tests/jax_programs.py``, with the same contract: each program is a
function of the library namespace (``jax`` itself, with ``jax_enable_x64``, when
``tests/fixtures/jax_programs_semantics.npz`` was recorded; ``functrace`` in
tests/test_jax_programs_semantics.py), returning a dict of NumPy arrays. Each program
covers one family of edge cases and evaluates most of them three ways: row by row
eagerly, row by row under ``jit``, and under ``vmap`` over the rows (keys ``name``,
``name_jit``, ``name_vmap``), which JAX answers alike. The families: integer division
and remainders with negative operands and zero divisors, integer overflow, shifts by the
bit width and beyond, integer powers, bitwise operations and ``gcd``/``lcm``; casts of
NaN, infinities and out-of-range floats to integers, of complex values to real ones,
rounding half to even; NaN and signed zero through maxima, arg-reductions, sorting,
quantiles, ``clip``, ``sign``/``copysign``/``arctan2`` and powers of zero; reductions of
empty axes, all-NaN nan-reductions, ``ddof`` at and beyond the sample size, the result
dtypes of cumulative sums; weak-type promotion of Python scalars and the default dtypes
of array creation; ``.at`` updates with repeated, negative and out-of-range indices in
every mode, ``take``/``take_along_axis`` modes, clamped dynamic slices, ``size=`` forms
of ``nonzero``/``where``/``argwhere``/``unique``; complex functions on their branch
cuts, huge complex magnitudes, complex sorting and complex64 precision. Strings are
returned only as the names of error types. Nothing here imports JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recorded import error_name

NAN, INF = np.nan, np.inf


def _raises(cls: type, f: Any) -> np.ndarray:
    try:
        f()
    except cls:
        return np.array(True)
    return np.array(False)


def _three(jax: Any, name: str, f: Callable[..., Any], *args: Any) -> dict[str, np.ndarray]:
    """``f`` on each row of ``args`` (arrays with one leading batch axis) eagerly and under
    ``jit`` (the results stacked), and under ``vmap`` over the rows."""
    jnp = jax.numpy
    arrays = [jnp.asarray(a) for a in args]
    rows = [[a[i] for a in arrays] for i in range(arrays[0].shape[0])]
    jf = jax.jit(f)
    return {
        name: np.stack([np.asarray(f(*r)) for r in rows]),
        name + "_jit": np.stack([np.asarray(jf(*r)) for r in rows]),
        name + "_vmap": np.asarray(jax.vmap(f)(*arrays)),
    }


def _dtype_name(x: Any) -> np.ndarray:
    return np.array(str(np.dtype(x.dtype)))


def integer_division(jax: Any) -> dict[str, np.ndarray]:
    """floor_divide, remainder, fmod and divmod of int32 and int8 with every sign
    combination and INT_MIN // -1."""
    jnp = jax.numpy
    a = np.array([[7, -7, 7, -7, 0, 5, -5], [6, -6, -2147483648, 1, -1, -2147483647, 3]], np.int32)
    b = np.array([[2, 2, -2, -2, 3, 1, -1], [4, -4, -1, 7, -7, 2, -3]], np.int32)
    a8, b8 = np.array([[-128, 127, -3]], np.int8), np.array([[-1, -128, 2]], np.int8)
    out: dict[str, np.ndarray] = {}
    for x, y, tag in ((a, b, "i32"), (a8, b8, "i8")):
        out |= _three(jax, f"floor_divide_{tag}", jnp.floor_divide, x, y)
        out |= _three(jax, f"remainder_{tag}", jnp.remainder, x, y)
        out |= _three(jax, f"fmod_{tag}", jnp.fmod, x, y)
        out |= _three(jax, f"divmod_{tag}", lambda u, v: jnp.stack(jnp.divmod(u, v)), x, y)
        out |= _three(jax, f"operators_{tag}", lambda u, v: jnp.stack([u // v, u % v]), x, y)
    out |= _three(
        jax, "lax_div_rem", lambda u, v: jnp.stack([jax.lax.div(u, v), jax.lax.rem(u, v)]), a, b
    )
    return out


def integer_zero_divisors(jax: Any) -> dict[str, np.ndarray]:
    """Integer floor_divide, remainder, fmod, lax.div and lax.rem by zero."""
    jnp, lax = jax.numpy, jax.lax
    a = np.array([[7, -7, 0, 1, -2147483648]], np.int32)
    b = np.zeros((1, 5), np.int32)
    ops = [jnp.floor_divide, jnp.remainder, jnp.fmod, lax.div, lax.rem]
    return _three(jax, "i32", lambda u, v: jnp.stack([f(u, v) for f in ops]), a, b)


def float_division(jax: Any) -> dict[str, np.ndarray]:
    """floor_divide, remainder, fmod and divmod of floats at signed zeros, infinities,
    NaN and zero divisors, float64 and float32."""
    jnp = jax.numpy
    a = np.array(
        [[7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0], [INF, -INF, 5.0, NAN, 3.0, -3.0, 0.0, 1e10]]
    )
    b = np.array(
        [[2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 0.0, -0.0], [2.0, 3.0, INF, 1.0, -INF, INF, 0.0, 3.0]]
    )
    out: dict[str, np.ndarray] = {}
    for dt in (np.float64, np.float32):
        x, y, tag = a.astype(dt), b.astype(dt), np.dtype(dt).name
        out |= _three(jax, f"floor_divide_{tag}", jnp.floor_divide, x, y)
        out |= _three(jax, f"remainder_{tag}", jnp.remainder, x, y)
        out |= _three(jax, f"fmod_{tag}", jnp.fmod, x, y)
        out |= _three(jax, f"divmod_{tag}", lambda u, v: jnp.stack(jnp.divmod(u, v)), x, y)
        out |= _three(jax, f"true_divide_{tag}", jnp.true_divide, x, y)
    return out


def integer_overflow(jax: Any) -> dict[str, np.ndarray]:
    """Wraparound of int8, int32 and uint8 addition, subtraction and multiplication,
    negation and abs of INT_MIN, and sums that overflow."""
    jnp = jax.numpy
    out: dict[str, np.ndarray] = {}
    for dt in (np.int8, np.int32, np.uint8):
        info = np.iinfo(dt)
        x = np.array([[info.max, info.min, info.max // 2 + 1, 1], [info.min, 0, 3, info.max]], dt)
        y = np.array([[1, info.max, 2, info.max], [info.max, info.max, info.max, info.max]], dt)
        tag = np.dtype(dt).name

        def ops(u, v):
            return jnp.stack([u + v, u - v, u * v, -u, jnp.abs(u), jnp.negative(u), u * u])

        out |= _three(jax, f"ops_{tag}", ops, x, y)
        out |= _three(jax, f"sum_{tag}", lambda u: jnp.sum(u, dtype=u.dtype), x)
    return out


def shifts(jax: Any) -> dict[str, np.ndarray]:
    """left_shift and right_shift by zero, by the bit width and beyond it and by negative
    amounts, of signed (arithmetic right shift of negatives) and unsigned integers."""
    jnp = jax.numpy
    out: dict[str, np.ndarray] = {}
    for dt, width in ((np.int32, 32), (np.uint8, 8), (np.int8, 8)):
        x = np.array([[1, 5, 100, 3, 1, 7, 9], [-1 if dt != np.uint8 else 255, 64, 3, 1, 2, 6, 11]])
        s = np.array([[0, width - 1, width, width + 3, 1, 2, 3], [1, 2, width, width - 1, 5, 0, 2]])
        x, s = x.astype(dt), s.astype(dt)
        tag = np.dtype(dt).name
        out |= _three(jax, f"left_{tag}", jnp.left_shift, x, s)
        out |= _three(jax, f"right_{tag}", jnp.right_shift, x, s)
        out |= _three(jax, f"lax_logical_right_{tag}", jax.lax.shift_right_logical, x, s)
        if dt != np.uint8:
            out |= _three(jax, f"lax_arith_right_{tag}", jax.lax.shift_right_arithmetic, x, s)
    neg = np.array([[4, 8, -8]], np.int32), np.array([[-1, -3, -1]], np.int32)
    out |= _three(jax, "negative_amounts", lambda u, v: jnp.stack([u << v, u >> v]), *neg)
    return out


def arithmetic_shift_of_unsigned(jax: Any) -> dict[str, np.ndarray]:
    """lax.shift_right_arithmetic of uint8 values with the top bit set (the sign bit
    fills in, as for the signed integer of the same bits)."""
    x = np.array([[255, 128, 200, 127]], np.uint8)
    s = np.array([[1, 3, 7, 1]], np.uint8)
    return _three(jax, "uint8", jax.lax.shift_right_arithmetic, x, s)


def integer_powers(jax: Any) -> dict[str, np.ndarray]:
    """jnp.power on integers (negative exponents, 0 ** 0, wraparound), lax.integer_pow
    on integers and floats, and integer bases with float exponents."""
    jnp, lax = jax.numpy, jax.lax
    base = np.array([[2, -2, 0, 1, -1, 3, 10], [0, 5, -3, 2, 7, 1, -1]], np.int32)
    expo = np.array([[3, 3, 0, 1, 3, 20, 10], [5, 0, 3, 31, 2, 100, 7]], np.int32)
    out = _three(jax, "power_i32", jnp.power, base, expo)
    out |= _three(jax, "operator_pow", lambda u: u**3, base)
    out |= _three(
        jax,
        "integer_pow_i32",
        lambda u: jnp.stack([lax.integer_pow(u, k) for k in (0, 1, 2, 5)]),
        base,
    )
    out |= _three(
        jax, "integer_pow_u8", lambda u: lax.integer_pow(u, 3), np.array([[7, 200, 0]], np.uint8)
    )
    xf = np.array([[0.0, -0.0, 2.0, -2.0, INF, NAN]])
    out |= _three(
        jax,
        "integer_pow_f64",
        lambda u: jnp.stack([lax.integer_pow(u, k) for k in (-2, -1, 0, 3)]),
        xf,
    )
    out |= _three(jax, "int_base_float_exp", lambda u: jnp.power(u, 0.5), base)
    return out


def integer_negative_powers(jax: Any) -> dict[str, np.ndarray]:
    """jnp.power and ** of integer bases (0, 1, -1, 2, -2) with negative integer
    exponents, and lax.integer_pow of an integer with a negative exponent."""
    jnp, lax = jax.numpy, jax.lax
    base = np.array([[2, -2, 0, 1, -1, 3], [1, -1, 1, -1, 5, 0]], np.int32)
    expo = np.array([[-1, -1, -1, -3, -3, -2], [-2, -2, -7, -7, -1, -5]], np.int32)
    out = _three(jax, "power", jnp.power, base, expo)
    out["operator"] = error_name(lambda: jnp.asarray(base) ** -2)
    out |= _three(jax, "uint8", jnp.power, base.astype(np.uint8) % 4, expo.astype(np.int8))
    out["integer_pow"] = error_name(lambda: lax.integer_pow(jnp.array([2, 3]), -1))
    return out


def bitwise_and_gcd(jax: Any) -> dict[str, np.ndarray]:
    """Bitwise operations on bool, uint8 and int8 (invert of bool, of 0 and 255),
    bitwise_count, gcd and lcm with zeros, negatives and the int32 extremes."""
    jnp = jax.numpy
    bx = np.array([[True, True, False, False]])
    by = np.array([[True, False, True, False]])

    def bitops(u, v):
        return jnp.stack([u & v, u | v, u ^ v, ~u, jnp.invert(v), jnp.bitwise_not(u)])

    out = _three(jax, "bool", bitops, bx, by)
    out |= _three(
        jax,
        "uint8",
        bitops,
        np.array([[0, 255, 170, 15]], np.uint8),
        np.array([[255, 1, 85, 240]], np.uint8),
    )
    out |= _three(
        jax,
        "int8",
        bitops,
        np.array([[-128, -1, 0, 85]], np.int8),
        np.array([[127, -128, -1, 15]], np.int8),
    )
    out |= _three(jax, "bitwise_count", jnp.bitwise_count, np.array([[-1, 0, 7, -128]], np.int8))
    # (JAX 0.10.2's gcd does not return for INT_MIN; INT_MIN + 1 is the edge here)
    g = np.array([[0, 0, 12, -12, 12, -12, 7], [-2147483647, 6, 1, 0, 21, -21, 0]], np.int32)
    h = np.array([[0, 5, 18, 18, -18, -18, 0], [6, 2147483647, 1, -7, 6, -6, -7]], np.int32)
    out |= _three(jax, "gcd", jnp.gcd, g, h)
    out |= _three(jax, "lcm", jnp.lcm, g, h)
    return out


def float_to_int_casts(jax: Any) -> dict[str, np.ndarray]:
    """astype and lax.convert_element_type of NaN, infinities, out-of-range and negative
    floats to int32, int8, uint8 and uint32, from float64 and float32; bool casts."""
    lax = jax.lax
    x = np.array(
        [[NAN, INF, -INF, 3e9, -3e9, 2.9, -2.9], [-0.5, 255.5, 256.0, -1.0, -200.0, 1e20, -0.0]]
    )
    out: dict[str, np.ndarray] = {}
    for src in (np.float64, np.float32):
        for dst in (np.int32, np.int8, np.uint8, np.uint32, np.bool_):
            tag = f"{np.dtype(src).name}_to_{np.dtype(dst).name}"
            out |= _three(jax, "astype_" + tag, lambda u, d=dst: u.astype(d), x.astype(src))
            out |= _three(
                jax,
                "convert_" + tag,
                lambda u, d=dst: lax.convert_element_type(u, d),
                x.astype(src),
            )
    ints = np.array([[-1, 0, 1, 256, -129, 2**31 - 1]], np.int32)
    for dst in (np.int8, np.uint8, np.bool_, np.float32):
        out |= _three(jax, f"int32_to_{np.dtype(dst).name}", lambda u, d=dst: u.astype(d), ints)
    return out


def complex_casts(jax: Any) -> dict[str, np.ndarray]:
    """Complex to float, int and bool (astype and convert_element_type), real/imag of
    real arrays, and a float cast back to complex."""
    jnp, lax = jax.numpy, jax.lax
    z = np.array([[1.5 - 2.0j, -3.7 + 0.0j, 0.0 + 1.0j, 0.0 + 0.0j, NAN + 1j]])
    out: dict[str, np.ndarray] = {}
    for dst in (np.float64, np.float32, np.int32, np.bool_):
        name = np.dtype(dst).name
        out |= _three(jax, "astype_" + name, lambda u, d=dst: u.astype(d), z)
        out |= _three(jax, "convert_" + name, lambda u, d=dst: lax.convert_element_type(u, d), z)
    out |= _three(
        jax,
        "real_imag_of_real",
        lambda u: jnp.stack([jnp.real(u), jnp.imag(u)]),
        np.array([[1.0, -2.0]]),
    )
    out |= _three(
        jax, "to_complex64", lambda u: u.astype(jnp.complex64), np.array([[1.0, NAN, -INF]])
    )
    return out


def rounding(jax: Any) -> dict[str, np.ndarray]:
    """round half to even (decimals 0, 1, 2, -1, on float64 and float32, and on integers
    with decimals), rint, trunc, floor and ceil at halves and signed zeros."""
    jnp = jax.numpy
    x = np.array(
        [
            [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, 0.35, -0.0],
            [1.005, 2.675, 15.0, 25.0, -35.0, 1e300, INF, NAN, 0.45],
        ]
    )
    out: dict[str, np.ndarray] = {}
    for dt in (np.float64, np.float32):
        tag = np.dtype(dt).name
        for d in (0, 1, 2, -1):
            out |= _three(
                jax,
                f"round_{d}_{tag}".replace("-", "m"),
                lambda u, d=d: jnp.round(u, d),
                x.astype(dt),
            )
        out |= _three(
            jax,
            f"others_{tag}",
            lambda u: jnp.stack([jnp.rint(u), jnp.trunc(u), jnp.floor(u), jnp.ceil(u)]),
            x.astype(dt),
        )
    ints = np.array([[15, 25, -25, 149, 150, -150, 7]], np.int32)
    out |= _three(jax, "round_int_1", lambda u: jnp.round(u, 1), ints)
    out |= _three(jax, "round_int_0", lambda u: jnp.round(u), ints)
    return out


def nan_maximum(jax: Any) -> dict[str, np.ndarray]:
    """maximum/minimum (NaN propagates), fmax/fmin (NaN ignored), lax.max/lax.min,
    with NaN on either side, on both, and with signed zeros."""
    jnp, lax = jax.numpy, jax.lax
    a = np.array([[NAN, 1.0, NAN, 0.0, -0.0, INF], [-INF, NAN, 2.0, -0.0, 0.0, NAN]])
    b = np.array([[1.0, NAN, NAN, -0.0, 0.0, -INF], [NAN, -INF, 2.0, 0.0, -0.0, INF]])

    def ops(u, v):
        return jnp.stack(
            [
                jnp.maximum(u, v),
                jnp.minimum(u, v),
                jnp.fmax(u, v),
                jnp.fmin(u, v),
                lax.max(u, v),
                lax.min(u, v),
            ]
        )

    out = _three(jax, "f64", ops, a, b)
    out |= _three(jax, "f32", ops, a.astype(np.float32), b.astype(np.float32))
    return out


def signed_zero_order(jax: Any) -> dict[str, np.ndarray]:
    """The sign of maximum/minimum/lax.max/clip of +0.0 and -0.0 (-0.0 orders below
    +0.0), of relu at -0.0 and of sign(-0.0)."""
    jnp, lax = jax.numpy, jax.lax
    a = np.array([[0.0, -0.0, 0.0, -0.0]])
    b = np.array([[-0.0, 0.0, 0.0, -0.0]])

    def ops(u, v):
        return jnp.stack(
            [
                jnp.maximum(u, v),
                jnp.minimum(u, v),
                lax.max(u, v),
                lax.min(u, v),
                jnp.clip(u, v),
                jax.nn.relu(u),
                jnp.sign(u),
            ]
        )

    return _three(jax, "signbits", lambda u, v: jnp.signbit(ops(u, v)), a, b)


def nan_arg_reductions(jax: Any) -> dict[str, np.ndarray]:
    """max/min/argmax/argmin with NaN (the first NaN wins), nanmax/nanmin/nanargmax/
    nanargmin with some and with all NaN, and ties."""
    jnp = jax.numpy
    x = np.array(
        [[1.0, NAN, 3.0, NAN], [NAN, NAN, NAN, NAN], [2.0, 5.0, 5.0, -INF], [-0.0, 0.0, -0.0, 0.0]]
    )
    out = _three(jax, "max_min", lambda u: jnp.stack([jnp.max(u), jnp.min(u)]), x)
    out |= _three(jax, "argmax_argmin", lambda u: jnp.stack([jnp.argmax(u), jnp.argmin(u)]), x)
    out |= _three(jax, "nanmax_nanmin", lambda u: jnp.stack([jnp.nanmax(u), jnp.nanmin(u)]), x)
    out |= _three(
        jax, "nanargmax_nanargmin", lambda u: jnp.stack([jnp.nanargmax(u), jnp.nanargmin(u)]), x
    )
    out |= _three(jax, "max_f32", lambda u: jnp.max(u), x.astype(np.float32))
    out |= _three(
        jax, "argmax_int_ties", jnp.argmax, np.array([[3, 7, 7, 1], [-1, -1, -1, -1]], np.int32)
    )
    out |= _three(
        jax, "argmax_bool", jnp.argmax, np.array([[False, True, True], [False, False, False]])
    )
    return out


def nan_sorting(jax: Any) -> dict[str, np.ndarray]:
    """sort/argsort (NaN last, signed zeros kept in order), searchsorted of NaN and into
    arrays ending in NaN, median and percentile with NaN, nanmedian, and unique with NaN
    and signed zeros."""
    jnp = jax.numpy
    x = np.array([[3.0, NAN, -0.0, 0.0, -INF, NAN, 1.0], [NAN, 2.0, 0.0, -0.0, INF, -1.0, 2.0]])
    out = _three(jax, "sort", jnp.sort, x)
    out |= _three(jax, "sort_signbit", lambda u: jnp.signbit(jnp.sort(u)), x)
    out |= _three(jax, "argsort", jnp.argsort, x)
    out |= _three(jax, "argsort_descending", lambda u: jnp.argsort(u, descending=True), x)
    out |= _three(jax, "sort_descending", lambda u: jnp.sort(u, descending=True), x)
    sorted_x = np.array([[-1.0, 0.0, 2.0, NAN, NAN], [1.0, 1.0, 1.0, 3.0, INF]])
    q = np.array([[NAN, 1.0, 2.0, -INF], [1.0, INF, NAN, 0.0]])
    # the index dtype is checked in searchsorted_dtype
    out |= _three(
        jax, "searchsorted_left", lambda a, v: jnp.searchsorted(a, v).astype(int), sorted_x, q
    )
    out |= _three(
        jax,
        "searchsorted_right",
        lambda a, v: jnp.searchsorted(a, v, side="right").astype(int),
        sorted_x,
        q,
    )
    out |= _three(jax, "median", jnp.median, x)
    out |= _three(jax, "nanmedian", jnp.nanmedian, x)
    out |= _three(jax, "percentile", lambda u: jnp.percentile(u, jnp.array([0.0, 25.0, 100.0])), x)
    out |= _three(
        jax, "nanpercentile", lambda u: jnp.nanpercentile(u, jnp.array([0.0, 25.0, 100.0])), x
    )
    out["unique"] = np.asarray(jnp.unique(jnp.asarray(x[0])))
    out["unique_equal_nan_false"] = np.asarray(jnp.unique(jnp.asarray(x[0]), equal_nan=False))
    out["unique_counts"] = np.asarray(jnp.unique(jnp.asarray(x[1]), return_counts=True)[1])
    return out


def searchsorted_dtype(jax: Any) -> dict[str, np.ndarray]:
    """The index dtype of searchsorted, eagerly and under jit."""
    jnp = jax.numpy
    a, v = jnp.array([1.0, 2.0, 3.0]), jnp.array([2.5, 0.0])
    return {
        "eager": np.asarray(jnp.searchsorted(a, v)),
        "jit": np.asarray(jax.jit(jnp.searchsorted)(a, v)),
        "int_sorted": np.asarray(jnp.searchsorted(jnp.arange(5), 3)),
    }


def clip_edges(jax: Any) -> dict[str, np.ndarray]:
    """clip with NaN in the operand and in the bounds, with lo > hi, one-sided, on
    integers with float bounds."""
    jnp = jax.numpy
    x = np.array([[NAN, -2.0, 0.5, 3.0, INF, -INF], [1.0, -0.0, 0.0, 5.0, -5.0, NAN]])
    out = _three(jax, "nan_operand", lambda u: jnp.clip(u, -1.0, 1.0), x)
    out |= _three(jax, "nan_lo", lambda u: jnp.clip(u, NAN, 1.0), x)
    out |= _three(jax, "nan_hi", lambda u: jnp.clip(u, -1.0, NAN), x)
    out |= _three(jax, "lo_above_hi", lambda u: jnp.clip(u, 2.0, -2.0), x)
    out |= _three(jax, "only_hi", lambda u: jnp.clip(u, max=0.25), x)
    out |= _three(
        jax, "array_bounds", lambda u, lo, hi: jnp.clip(u, lo, hi), x, x[::-1] - 1.0, x[::-1] + 1.0
    )
    ints = np.array([[-5, 0, 5, 10, 300]], np.int32)
    out |= _three(jax, "int_lo_above_hi", lambda u: jnp.clip(u, 8, 2), ints)
    out |= _three(
        jax, "uint8", lambda u: jnp.clip(u, 10, 200), np.array([[0, 9, 100, 255]], np.uint8)
    )
    out |= _three(jax, "lax_clamp", lambda u: jax.lax.clamp(-1.0, u, 1.0), x)
    return out


def signed_zeros_and_powers(jax: Any) -> dict[str, np.ndarray]:
    """sign/copysign/signbit at -0.0 and NaN, arctan2 at the signed zeros, 0 ** 0,
    0 ** -1, (-0.0) ** -1, inf - inf, 1 ** NaN, and jnp.where on NaN conditions."""
    jnp = jax.numpy
    z = np.array([[-0.0, 0.0, NAN, -NAN, -INF, INF, -1e-300]])
    out = _three(jax, "sign", jnp.sign, z)
    out |= _three(jax, "signbit_of_sign", lambda u: jnp.signbit(jnp.sign(u[1:])), z)
    out |= _three(jax, "signbit", jnp.signbit, z)
    out |= _three(jax, "copysign", lambda u: jnp.copysign(1.0, u), z)
    out |= _three(jax, "int_sign", jnp.sign, np.array([[-3, 0, 4]], np.int8))
    ys = np.array([[0.0, 0.0, -0.0, -0.0, 1.0, -1.0, INF, -INF]])
    xs = np.array([[0.0, -0.0, 0.0, -0.0, -0.0, -0.0, -INF, INF]])
    out |= _three(jax, "arctan2", jnp.arctan2, ys, xs)
    b = np.array([[0.0, 0.0, -0.0, 0.0, -0.0, 1.0, INF, -8.0, 2.0]])
    e = np.array([[0.0, -1.0, -1.0, -2.0, 3.0, NAN, 0.0, 1.0 / 3.0, -INF]])
    out |= _three(jax, "power", jnp.power, b, e)
    out |= _three(jax, "float_power", jnp.float_power, b, e)
    out |= _three(
        jax, "inf_arith", lambda u: jnp.stack([u - u, u * 0.0, u / u]), np.array([[INF, -INF, 0.0]])
    )
    c = np.array([[NAN, 0.0, -0.0, 1.0]])
    out |= _three(jax, "where_nan_condition", lambda u: jnp.where(u, 1.0, -1.0), c)
    out |= _three(jax, "bool_of_nan", lambda u: u.astype(bool), c)
    out |= _three(jax, "logical_not_nan", jnp.logical_not, c)
    return out


def empty_reductions(jax: Any) -> dict[str, np.ndarray]:
    """sum/prod/max(initial=)/min(initial=)/mean/var/any/all of size-0 axes, argmax of an
    empty array and max without initial (errors), and logsumexp of an empty axis."""
    jnp = jax.numpy
    e = jnp.zeros((3, 0))
    ei = jnp.zeros((3, 0), jnp.int32)
    jit = jax.jit
    out = {
        "sum": np.asarray(jnp.sum(e, axis=1)),
        "sum_jit": np.asarray(jit(lambda u: jnp.sum(u, axis=1))(e)),
        "sum_int": np.asarray(jnp.sum(ei, axis=1)),
        "prod": np.asarray(jnp.prod(e, axis=1)),
        "prod_jit": np.asarray(jit(lambda u: jnp.prod(u, axis=1))(e)),
        "max_initial": np.asarray(jnp.max(e, axis=1, initial=-5.0)),
        "max_initial_jit": np.asarray(jit(lambda u: jnp.max(u, axis=1, initial=-5.0))(e)),
        "min_initial_int": np.asarray(jnp.min(ei, axis=1, initial=7)),
        "max_initial_nonempty": np.asarray(jnp.max(jnp.array([1.0, 2.0]), initial=5.0)),
        "max_initial_where": np.asarray(
            jnp.max(jnp.array([1.0, 9.0]), initial=0.0, where=jnp.array([True, False]))
        ),
        "mean": np.asarray(jnp.mean(e, axis=1)),
        "mean_jit": np.asarray(jit(lambda u: jnp.mean(u, axis=1))(e)),
        "var": np.asarray(jnp.var(e, axis=1)),
        "any_all": np.asarray(jnp.stack([jnp.any(e > 0, axis=1), jnp.all(e > 0, axis=1)])),
        "sum_vmap": np.asarray(jax.vmap(jnp.sum)(e)),
        "prod_vmap": np.asarray(jax.vmap(jnp.prod)(e)),
        "max_initial_vmap": np.asarray(jax.vmap(lambda u: jnp.max(u, initial=-5.0))(e)),
        "logsumexp": np.asarray(jax.nn.logsumexp(e, axis=1)),
        "cumsum_empty_shape": np.asarray(jnp.cumsum(e, axis=1).shape),
        "max_error": error_name(lambda: jnp.max(e, axis=1)),
        "argmax_error": error_name(lambda: jnp.argmax(jnp.zeros(0))),
        "max_error_jit": error_name(lambda: jit(lambda u: jnp.max(u, axis=1))(e)),
    }
    return out


def nan_statistics(jax: Any) -> dict[str, np.ndarray]:
    """nanmean/nanvar/nanstd/nansum/nanprod of rows with some and all NaN, var/std with
    ddof equal to and beyond the sample size, mean of an int row."""
    jnp = jax.numpy
    x = np.array([[1.0, NAN, 3.0], [NAN, NAN, NAN], [2.0, 2.0, 5.0]])
    out = _three(jax, "nanmean", jnp.nanmean, x)
    out |= _three(jax, "nanvar", jnp.nanvar, x)
    out |= _three(jax, "nanstd_ddof1", lambda u: jnp.nanstd(u, ddof=1), x)
    out |= _three(jax, "nansum_nanprod", lambda u: jnp.stack([jnp.nansum(u), jnp.nanprod(u)]), x)
    y = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    for d in (2, 3, 4):
        out |= _three(jax, f"var_ddof{d}", lambda u, d=d: jnp.var(u, ddof=d), y)
        out |= _three(jax, f"std_ddof{d}", lambda u, d=d: jnp.std(u, ddof=d), y)
    out |= _three(jax, "nanvar_ddof_beyond", lambda u: jnp.nanvar(u, ddof=2), x)
    return out


def cumulative_dtypes(jax: Any) -> dict[str, np.ndarray]:
    """cumsum/cumprod of bool, cummax of int8 (result dtypes), sum/prod of bool and
    small integers, and sums with a dtype=."""
    jnp = jax.numpy
    b = np.array([[True, True, False, True], [False, False, True, True]])
    i8 = np.array([[100, 100, -100, 27], [-128, -1, 127, 1]], np.int8)
    u8 = np.array([[200, 100, 0, 255], [1, 2, 3, 4]], np.uint8)
    out: dict[str, np.ndarray] = {}
    out |= _three(jax, "cumsum_bool", jnp.cumsum, b)
    out |= _three(jax, "cumprod_bool", jnp.cumprod, b)
    for arr, tag in ((b, "bool"), (i8, "int8"), (u8, "uint8")):
        out |= _three(jax, f"sum_{tag}", jnp.sum, arr)
        out |= _three(jax, f"prod_{tag}", jnp.prod, arr)
    out |= _three(jax, "cumsum_int8_dtype_int8", lambda u: jnp.cumsum(u, dtype=jnp.int8), i8)
    out |= _three(jax, "sum_int8_dtype_float32", lambda u: jnp.sum(u, dtype=jnp.float32), i8)
    out |= _three(jax, "cummax_int8", lambda u: jax.lax.cummax(u, axis=0), i8)
    out |= _three(jax, "cumsum_float32", jnp.cumsum, np.array([[1e8, 1.0, -1e8, 1.0]], np.float32))
    return out


def small_integer_cumsum(jax: Any) -> dict[str, np.ndarray]:
    """cumsum/cumprod of int8 and uint8 without a dtype (JAX keeps the dtype and wraps)."""
    jnp = jax.numpy
    i8 = np.array([[100, 100, -100, 27], [-128, -1, 127, 1]], np.int8)
    u8 = np.array([[200, 100, 0, 255], [1, 2, 3, 4]], np.uint8)
    out: dict[str, np.ndarray] = {}
    for arr, tag in ((i8, "int8"), (u8, "uint8")):
        out |= _three(jax, f"cumsum_{tag}", jnp.cumsum, arr)
        out |= _three(jax, f"cumprod_{tag}", jnp.cumprod, arr)
    return out


def weak_type_promotion(jax: Any) -> dict[str, np.ndarray]:
    """The dtypes (and values) of mixes of arrays with Python scalars and of arrays of
    different dtypes, x64 on: int32 + 1.0, uint8 + 300, float32 * 2.0, bool + bool,
    int8 + uint8, int32 / int32, int + complex scalar, and under jit."""
    jnp = jax.numpy
    i32 = jnp.array([1, 2], jnp.int32)
    u8 = jnp.array([250, 3], jnp.uint8)
    f32 = jnp.array([1.5, 2.5], jnp.float32)
    b = jnp.array([True, False])
    i8 = jnp.array([-1, 100], jnp.int8)
    cases = {
        "i32_plus_float": lambda: i32 + 1.0,
        "i32_plus_int": lambda: i32 + 1,
        "u8_plus_int": lambda: u8 + 10,
        "f32_times_float": lambda: f32 * 2.0,
        "f32_plus_complex": lambda: f32 + 1j,
        "i32_plus_complex": lambda: i32 + 1j,
        "bool_plus_bool": lambda: b + b,
        "bool_times_bool": lambda: b * b,
        "bool_plus_int": lambda: b + 1,
        "i8_plus_u8": lambda: i8 + u8,
        "i8_plus_i32": lambda: i8 + i32,
        "u8_plus_i32": lambda: u8 + i32,
        "f32_plus_i8": lambda: f32 + i8,
        "i32_floordiv_float": lambda: i32 // 2.0,
        "i32_pow_float": lambda: i32**2.0,
        "f32_pow_int": lambda: f32**2,
        "sum_bool": lambda: jnp.sum(b),
        "sum_u8": lambda: jnp.sum(u8),
        "where_f32_float": lambda: jnp.where(b, f32, 0.0),
        "where_i32_float": lambda: jnp.where(b, i32, 0.5),
        "maximum_u8_int": lambda: jnp.maximum(u8, 1),
    }
    out: dict[str, np.ndarray] = {}
    for name, f in cases.items():
        r = f()
        out[name] = np.asarray(r)
        out[name + "_dtype"] = _dtype_name(r)
        out[name + "_jit_dtype"] = _dtype_name(jax.jit(f)())
    return out


def integer_to_float_dtypes(jax: Any) -> dict[str, np.ndarray]:
    """The dtypes JAX gives where integers meet floats or become floats (float32 for
    int32 and smaller with x64 on): float32 + int32, int32 / int32, uint8 / 2, the mean
    and sqrt of int32, uint8, int8 and bool arrays, and Python ints beyond a uint8 or
    int8 operand's range."""
    jnp = jax.numpy
    i32 = jnp.array([1, 2], jnp.int32)
    u8 = jnp.array([250, 3], jnp.uint8)
    f32 = jnp.array([1.5, 2.5], jnp.float32)
    i8 = jnp.array([-1, 100], jnp.int8)
    b = jnp.array([True, False, True])
    cases = {
        "f32_plus_i32": lambda: f32 + i32,
        "i32_truediv": lambda: i32 / i32,
        "u8_truediv_int": lambda: u8 / 2,
        "mean_i32": lambda: jnp.mean(i32),
        "mean_u8": lambda: jnp.mean(u8),
        "mean_i8": lambda: jnp.mean(i8),
        "mean_bool": lambda: jnp.mean(b),
        "sqrt_i32": lambda: jnp.sqrt(i32),
        "sqrt_u8": lambda: jnp.sqrt(u8),
        "u8_plus_300": lambda: u8 + 300,
        "i8_minus_200": lambda: i8 - 200,
        "u8_plus_minus_1": lambda: u8 + (-1),
    }
    out: dict[str, np.ndarray] = {}
    for name, f in cases.items():
        r = f()
        out[name] = np.asarray(r)
        out[name + "_jit"] = np.asarray(jax.jit(f)())
    return out


def creation_dtypes(jax: Any) -> dict[str, np.ndarray]:
    """Default dtypes of arange (int and float arguments), linspace, eye, full, zeros,
    ones, array of Python scalars and lists, full_like, and arange/linspace edge values."""
    jnp = jax.numpy
    cases = {
        "arange_int": lambda: jnp.arange(5),
        "arange_float": lambda: jnp.arange(0.0, 1.0, 0.25),
        "arange_mixed": lambda: jnp.arange(0, 2.5),
        "arange_negative_step": lambda: jnp.arange(5, -3, -2),
        "arange_empty": lambda: jnp.arange(3, 1),
        "arange_fraction": lambda: jnp.arange(0.1, 0.4, 0.1),
        "linspace": lambda: jnp.linspace(0, 1, 5),
        "linspace_int_dtype": lambda: jnp.linspace(0, 10, 4, dtype=jnp.int32),
        "linspace_no_endpoint": lambda: jnp.linspace(-1, 1, 4, endpoint=False),
        "linspace_one": lambda: jnp.linspace(2.0, 3.0, 1),
        "eye": lambda: jnp.eye(2, 3, k=1),
        "full_int": lambda: jnp.full((2,), 7),
        "full_float": lambda: jnp.full((2,), 7.0),
        "full_bool": lambda: jnp.full((2,), True),
        "zeros": lambda: jnp.zeros(2),
        "ones_int": lambda: jnp.ones(2, int),
        "array_int_list": lambda: jnp.array([1, 2]),
        "array_mixed_list": lambda: jnp.array([1, 2.5]),
        "array_complex_list": lambda: jnp.array([1, 2j]),
        "asarray_float": lambda: jnp.asarray(3.0),
        "full_like_f32_int": lambda: jnp.full_like(jnp.zeros(2, jnp.float32), 3),
        "zeros_like_bool": lambda: jnp.zeros_like(jnp.array([True])),
        "identity": lambda: jnp.identity(2),
    }
    out: dict[str, np.ndarray] = {}
    for name, f in cases.items():
        r = f()
        out[name] = np.asarray(r)
        out[name + "_dtype"] = _dtype_name(r)
    out["arange_zero_step"] = error_name(lambda: jnp.arange(0, 5, 0))
    return out


def at_repeated_indices(jax: Any) -> dict[str, np.ndarray]:
    """.at[].set/add/multiply/min/max/apply/get with repeated and negative indices (set
    with repeats takes one of the updates; the others accumulate), on float and int."""
    jnp = jax.numpy
    x = np.arange(12.0).reshape(2, 6) - 4.0
    idx = np.array([[1, 1, -1, 0, -6, 3], [5, -1, 2, 2, 2, 0]])
    v = np.array([[10.0, 20.0, 30.0, -1.0, 2.0, 0.5], [3.0, 4.0, -5.0, -6.0, 7.0, 8.0]])
    ops = {
        "add": lambda u, i, w: u.at[i].add(w),
        "multiply": lambda u, i, w: u.at[i].multiply(w),
        "min": lambda u, i, w: u.at[i].min(w),
        "max": lambda u, i, w: u.at[i].max(w),
        "subtract": lambda u, i, w: u.at[i].subtract(w),
        "get": lambda u, i, w: u.at[i].get(),
        "apply": lambda u, i, w: u.at[i].apply(lambda t: t * 2.0 + 1.0),
        "set_unique": lambda u, i, w: u.at[i[:1]].set(w[:1]),
        "set_scalar": lambda u, i, w: u.at[i].set(0.0),
        "power": lambda u, i, w: u.at[i[:2]].power(2.0),
    }
    out: dict[str, np.ndarray] = {}
    for name, f in ops.items():
        out |= _three(jax, name, f, x, idx, v)
    xi = x.astype(np.int32)
    out |= _three(jax, "add_int", lambda u, i: u.at[i].add(7), xi, idx)
    out |= _three(jax, "divide", lambda u, i: u.at[i[:3]].divide(2.0), x, idx)
    out |= _three(jax, "bool_set", lambda u, i: u.at[i].set(True), np.zeros((2, 6), bool), idx)
    out |= _three(jax, "slice_add", lambda u: u.at[::-2].add(1.0), x)
    out |= _three(
        jax, "mask_set", lambda u: jnp.where(u > 0, u, 0.0).at[jnp.array([0, 0])].add(1.0), x
    )
    return out


def at_out_of_bounds(jax: Any) -> dict[str, np.ndarray]:
    """.at with out-of-range indices in every mode: the default (updates dropped; reads
    through a traced index clamped), 'drop', 'clip', 'fill' (with and without
    fill_value), 'promise_in_bounds' with in-range indices, and negative ones beyond -n."""
    jnp = jax.numpy
    x = np.arange(10.0).reshape(2, 5) + 1.0
    idx = np.array([[0, 5, -6, 7, 4], [-1, -5, 100, -100, 2]])
    v = np.full((2, 5), 10.0)
    out: dict[str, np.ndarray] = {}
    out |= _three(jax, "set_default", lambda u, i, w: u.at[i].set(w), x, idx, v)
    out |= _three(jax, "add_default", lambda u, i, w: u.at[i].add(w), x, idx, v)
    out |= _three(jax, "mul_default", lambda u, i, w: u.at[i].multiply(w), x, idx, v)
    out |= _three(jax, "min_default", lambda u, i, w: u.at[i].min(-w), x, idx, v)
    for mode in ("drop", "clip", "fill"):
        out |= _three(jax, f"set_{mode}", lambda u, i, w, m=mode: u.at[i].set(w, mode=m), x, idx, v)
        out |= _three(jax, f"add_{mode}", lambda u, i, w, m=mode: u.at[i].add(w, mode=m), x, idx, v)
        out |= _three(jax, f"get_{mode}", lambda u, i, m=mode: u.at[i].get(mode=m), x, idx)
    in_range = lambda u, i: u.at[jnp.clip(i, -5, 4)].get(mode="promise_in_bounds")  # noqa: E731
    out |= _three(jax, "get_promise_in_bounds", in_range, x, idx)
    out |= _three(
        jax, "get_fill_value", lambda u, i: u.at[i].get(mode="fill", fill_value=-1.0), x, idx
    )
    out |= _three(
        jax, "get_fill_int", lambda u, i: u.at[i].get(mode="fill"), x.astype(np.int32), idx
    )
    out |= _three(
        jax, "get_fill_uint8", lambda u, i: u.at[i].get(mode="fill"), x.astype(np.uint8), idx
    )
    out |= _three(jax, "get_fill_bool", lambda u, i: u.at[i].get(mode="fill"), x > 3, idx)
    # reads with a traced index (jit, vmap) clamp; eager reads of known indices raise
    out["get_default_jit"] = np.asarray(jax.jit(lambda u, i: u.at[i].get())(x[0], idx[0]))
    out["index_default_vmap"] = np.asarray(jax.vmap(lambda u, i: u[i])(x, idx))
    out["index_scalar_jit"] = np.asarray(jax.jit(lambda u, i: u[i])(x[0], 12))
    return out


def take_modes(jax: Any) -> dict[str, np.ndarray]:
    """jnp.take with mode='fill' (the default, NaN fill), 'clip', 'wrap' and fill_value,
    along an axis; take_along_axis with out-of-range and negative indices; jnp.choose."""
    jnp = jax.numpy
    x = np.arange(8.0).reshape(2, 4) - 1.5
    idx = np.array([[0, 4, -1, -5, 9], [3, -4, 2, 100, -100]])
    out: dict[str, np.ndarray] = {}
    for mode in ("fill", "clip", "wrap"):
        out |= _three(jax, f"take_{mode}", lambda u, i, m=mode: jnp.take(u, i, mode=m), x, idx)
    out |= _three(
        jax, "take_fill_value", lambda u, i: jnp.take(u, i, mode="fill", fill_value=0.0), x, idx
    )
    out |= _three(
        jax, "take_int_fill", lambda u, i: jnp.take(u, i, mode="fill"), x.astype(np.int32), idx
    )
    m = np.arange(24.0).reshape(2, 3, 4)
    ai = np.array([[[0, 3, -1, 4]], [[-4, 5, 1, 2]]])
    out |= _three(jax, "take_axis", lambda u, i: jnp.take(u, i[0], axis=1, mode="fill"), m, ai)
    out |= _three(
        jax,
        "take_along_axis_fill",
        lambda u, i: jnp.take_along_axis(u, i, axis=1, mode="fill"),
        m,
        ai,
    )
    out |= _three(
        jax,
        "take_along_axis_clip",
        lambda u, i: jnp.take_along_axis(u, i, axis=1, mode="clip"),
        m,
        ai,
    )
    ch = np.array([[0, 1, 2, 1]])
    out |= _three(
        jax,
        "choose_wrap",
        lambda c: jnp.choose(c + 4, [jnp.zeros(4), jnp.ones(4), jnp.full(4, 2.0)], mode="wrap"),
        ch,
    )
    out |= _three(
        jax,
        "choose_clip",
        lambda c: jnp.choose(c + 2, [jnp.zeros(4), jnp.ones(4), jnp.full(4, 2.0)], mode="clip"),
        ch,
    )
    return out


def default_mode_reads(jax: Any) -> dict[str, np.ndarray]:
    """Reads at out-of-range indices in the default mode, eagerly as under jit and
    vmap: jnp.take (fill), take_along_axis, x[idx] and x.at[idx].get() (clamped)."""
    jnp = jax.numpy
    x = np.arange(8.0).reshape(2, 4) - 1.5
    idx = np.array([[0, 4, -1, -5, 9], [3, -4, 2, 100, -100]])
    out = _three(jax, "take", jnp.take, x, idx)
    out |= _three(jax, "take_int", jnp.take, x.astype(np.int32), idx)
    out |= _three(jax, "take_along_axis", lambda u, i: jnp.take_along_axis(u, i, axis=0), x, idx)
    out |= _three(jax, "getitem", lambda u, i: u[i], x, idx)
    out |= _three(jax, "at_get", lambda u, i: u.at[i].get(), x, idx)
    m = np.arange(24.0).reshape(2, 3, 4)
    out |= _three(jax, "take_axis", lambda u, i: jnp.take(u, i, axis=1), m, idx[:, :3])
    return out


def dynamic_slices(jax: Any) -> dict[str, np.ndarray]:
    """lax.dynamic_slice/dynamic_update_slice/dynamic_index_in_dim with start indices
    past the end and negative (clamped so the slice fits), and negative-step slices."""
    jnp, lax = jax.numpy, jax.lax
    x = np.arange(20.0).reshape(2, 10)
    starts = np.array([[-3], [8]])
    out = _three(jax, "dynamic_slice", lambda u, s: lax.dynamic_slice(u, (s[0],), (4,)), x, starts)
    out |= _three(
        jax, "dynamic_slice_big", lambda u, s: lax.dynamic_slice(u, (s[0] * 10,), (3,)), x, starts
    )
    out |= _three(
        jax,
        "dynamic_update_slice",
        lambda u, s: lax.dynamic_update_slice(u, -jnp.ones(3), (s[0],)),
        x,
        starts,
    )
    out |= _three(
        jax, "dynamic_slice_in_dim", lambda u, s: lax.dynamic_slice_in_dim(u, s[0], 3), x, starts
    )
    out |= _three(
        jax,
        "dynamic_index_in_dim",
        lambda u, s: lax.dynamic_index_in_dim(u, s[0] + 12, keepdims=False),
        x,
        starts,
    )
    out |= _three(
        jax,
        "dynamic_update_index",
        lambda u, s: lax.dynamic_update_index_in_dim(u, jnp.array([-1.0]), s[0] + 20, 0),
        x,
        starts,
    )
    out["python_negative_start"] = np.asarray(lax.dynamic_slice(jnp.asarray(x[0]), (-2,), (3,)))
    out["python_big_start_jit"] = np.asarray(
        jax.jit(lambda u: lax.dynamic_slice(u, (50,), (3,)))(x[0])
    )
    out |= _three(
        jax,
        "negative_steps",
        lambda u: jnp.concatenate([u[::-1], u[8:2:-2], u[-1:-4:-1], u[:-11:-3]]),
        x,
    )
    out |= _three(
        jax,
        "empty_slices",
        lambda u: jnp.array([u[5:2].size, u[::-1][10:].size, u[-20:-15].size]),
        x,
    )
    out |= _three(jax, "slice_clamped", lambda u: jnp.concatenate([u[-20:2], u[8:100]]), x)
    return out


def sized_nonzero(jax: Any) -> dict[str, np.ndarray]:
    """nonzero/argwhere/flatnonzero/where(cond) with size= (padding and truncation) and
    fill_value=, unique with size= and fill_value=, and boolean masks under jit."""
    jnp = jax.numpy
    c = np.array([[0.0, 2.0, 0.0, -1.0, NAN, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    out = _three(jax, "nonzero_size", lambda u: jnp.nonzero(u, size=4)[0], c)
    out |= _three(jax, "nonzero_size_fill", lambda u: jnp.nonzero(u, size=4, fill_value=-1)[0], c)
    out |= _three(jax, "nonzero_truncate", lambda u: jnp.nonzero(u, size=2)[0], c)
    out |= _three(jax, "where_size", lambda u: jnp.where(u > 0, size=3, fill_value=9)[0], c)
    out |= _three(jax, "argwhere_size", lambda u: jnp.argwhere(u.reshape(2, 3), size=3), c)
    out |= _three(
        jax, "argwhere_size_fill", lambda u: jnp.argwhere(u.reshape(2, 3), size=3, fill_value=-2), c
    )
    out |= _three(jax, "flatnonzero_size", lambda u: jnp.flatnonzero(u, size=3, fill_value=7), c)
    d = np.array([[3.0, 1.0, 3.0, NAN, 1.0, NAN], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]])
    out |= _three(jax, "unique_size", lambda u: jnp.unique(u, size=4), d)
    out |= _three(jax, "unique_size_fill", lambda u: jnp.unique(u, size=4, fill_value=-1.0), d)
    out |= _three(jax, "unique_size_truncate", lambda u: jnp.unique(u, size=1), d)
    out |= _three(
        jax, "unique_size_counts", lambda u: jnp.unique(u, size=3, return_counts=True)[1], d
    )
    out |= _three(jax, "count_nonzero", jnp.count_nonzero, c)
    out["nonzero_eager"] = np.asarray(jnp.nonzero(jnp.asarray(c[0]))[0])
    out["boolean_mask_jit"] = error_name(lambda: jax.jit(lambda u: u[u > 0])(jnp.asarray(c[0])))
    out["nonzero_jit_no_size"] = _raises(
        jax.errors.ConcretizationTypeError,
        lambda: jax.jit(lambda u: jnp.nonzero(u))(jnp.asarray(c[0])),
    )
    out["where_three_args_size"] = error_name(lambda: jnp.where(c[0] > 0, 1.0, 0.0, size=2))
    out["mask_set_where"] = np.asarray(
        jax.jit(lambda u: jnp.where(u > 0, 0.0, u))(jnp.asarray(c[0]))
    )
    return out


def complex_branch_cuts(jax: Any) -> dict[str, np.ndarray]:
    """sqrt, log, log1p and power of complex values on their branch cuts, from both
    sides (+0.0 and -0.0 imaginary parts)."""
    jnp = jax.numpy
    z = _branch_cut_points()
    out: dict[str, np.ndarray] = {}
    for name in ("sqrt", "log", "log1p"):
        out |= _three(jax, name, getattr(jnp, name), z)
    out |= _three(jax, "sqrt_signbit_imag", lambda u: jnp.signbit(jnp.imag(jnp.sqrt(u))), z)
    out |= _three(jax, "power_half", lambda u: u**0.5, z)
    out |= _three(jax, "sqrt_c64", jnp.sqrt, z.astype(np.complex64))
    out |= _three(jax, "log_c64", jnp.log, z.astype(np.complex64))
    return out


def complex_inverse_functions(jax: Any) -> dict[str, np.ndarray]:
    """arcsin, arccos, arctan, arcsinh, arccosh, arctanh, log10, log2, sinh, cosh of
    complex values on the branch cuts, from both sides."""
    jnp = jax.numpy
    z = _branch_cut_points()
    out: dict[str, np.ndarray] = {}
    names = (
        "arcsin",
        "arccos",
        "arctan",
        "arcsinh",
        "arccosh",
        "arctanh",
        "log10",
        "log2",
        "sinh",
        "cosh",
    )
    for name in names:
        out |= _three(jax, name, getattr(jnp, name), z)
    return out


def _branch_cut_points() -> np.ndarray:
    re = np.array([-4.0, -1.0, -0.5, 0.0, 2.0, 1.0, -2.0, -0.0])
    z = np.stack([re + 0.0j, re - 0.0j, re * 1j + 0.0, re * 1j - 0.0])
    # re - 0.0j keeps +0.0 imaginary parts in NumPy; set the signs explicitly
    z[1] = re + 1j * np.copysign(0.0, -1.0)
    z[3] = np.copysign(0.0, -1.0) + 1j * re
    return z


def complex_magnitudes(jax: Any) -> dict[str, np.ndarray]:
    """abs of huge and tiny complex values (no overflow), abs of complex64, sign of
    complex (0 at 0), angle at signed zeros, sort/argsort/maximum of complex
    (lexicographic), complex64 products, exp/expm1 of complex, and inf/NaN parts."""
    jnp = jax.numpy
    big = np.array(
        [[1e300 + 1e300j, 3e-320 + 4e-320j, -1e308 - 1e308j, INF + NAN * 1j, 1e-300 + 0j, 0j]]
    )
    out = _three(jax, "abs", jnp.abs, big)
    out |= _three(
        jax,
        "abs_c64",
        jnp.abs,
        np.array([[3e30 + 4e30j, 3e-30 + 4e-30j, 1e38 + 1e38j]], np.complex64),
    )
    out |= _three(jax, "sign", jnp.sign, np.array([[3.0 + 4.0j, 0j, -2.0 + 0j, 1e300 + 1e300j]]))
    za = np.array(
        [
            [
                0j,
                complex(-0.0, 0.0),
                complex(0.0, -0.0),
                complex(-0.0, -0.0),
                -1 + 0j,
                complex(-1, -0.0),
            ]
        ]
    )
    out |= _three(jax, "angle", jnp.angle, za)
    out |= _three(jax, "angle_deg", lambda u: jnp.angle(u, deg=True), za)
    zs = np.array(
        [
            [1 + 2j, 1 - 2j, -1 + 5j, 1 + 0j, NAN + 0j, 0 + NAN * 1j],
            [2j, 1 + 1j, 1 + 1j, -3 - 3j, 2 + 0j, -1 + 0j],
        ]
    )
    out |= _three(jax, "sort", jnp.sort, zs[:, :4])
    out |= _three(jax, "argsort", jnp.argsort, zs[:, :4])
    out |= _three(jax, "sort_nan", jnp.sort, zs)
    out |= _three(jax, "maximum", lambda u: jnp.maximum(u, u[::-1]), zs[:, :4])
    c64 = np.array([[1.0000001 + 1j, 3.0 - 1e-7j, 1e20 + 1e20j]], np.complex64)
    out |= _three(jax, "c64_mul", lambda u: u * u[::-1] + 1.0, c64)
    out |= _three(jax, "c64_div", lambda u: u / u[::-1], c64)
    out |= _three(
        jax,
        "exp",
        jnp.exp,
        np.array([[complex(-INF, 1.0), complex(700.0, 1.0), complex(-800.0, 2.0)]]),
    )
    # exp(710 + 1j) overflows in its imaginary part only (the parts apart: allclose
    # cannot compare complex values with an infinite part)
    parts = lambda u: jnp.stack([jnp.real(jnp.exp(u)), jnp.imag(jnp.exp(u))])  # noqa: E731
    out |= _three(
        jax,
        "exp_near_overflow",
        parts,
        np.array([[complex(710.0, 1.0), complex(709.0, 3.0), complex(INF, 0.0)]]),
    )
    out |= _three(
        jax,
        "expm1",
        jnp.expm1,
        np.array([[complex(-INF, 1.0), complex(1e-10, 1e-10), complex(700.0, 1.0)]]),
    )
    out |= _three(jax, "reciprocal", jnp.reciprocal, np.array([[0j, 1e-300 + 0j, 1e308 + 1e308j]]))
    return out


def complex_reductions(jax: Any) -> dict[str, np.ndarray]:
    """max/min/ptp/nanmax and lax.reduce_max/reduce_min of complex arrays (lexicographic
    order, ties in the real part broken by the imaginary part), the gradient of max
    (to the selected entry, shared by whole ties); lax.argmax/argmin refuse complex
    operands."""
    jnp, lax = jax.numpy, jax.lax
    zs = np.array([[1 + 2j, 1 - 2j, -1 + 5j, 1 + 0j], [2j, 1 + 1j, 1 + 1j, -3 - 3j]])
    out = _three(jax, "max", jnp.max, zs)
    out |= _three(jax, "min", jnp.min, zs)
    out |= _three(jax, "ptp", jnp.ptp, zs)
    out |= _three(jax, "nanmax", jnp.nanmax, np.where(zs.real < 0, np.nan, zs))
    out |= _three(jax, "reduce_max", lambda z: lax.reduce_max(z, (0,)), zs)
    out |= _three(jax, "grad", jax.grad(lambda z: jnp.abs(jnp.max(z) - 0.5j)), zs)
    out["reduce_min_empty"] = np.asarray(lax.reduce_min(jnp.zeros((0, 2), complex), (0,)))
    out["argmax"] = error_name(lambda: lax.argmax(jnp.asarray(zs[0]), 0, jnp.int64))
    out["argmin_jit"] = error_name(lambda: jax.jit(lambda z: lax.argmin(z, 0, jnp.int64))(zs[0]))
    return out


def complex_numpy_order(jax: Any) -> dict[str, np.ndarray]:
    """jnp.argmax/argmin/nanargmax of complex arrays (JAX refuses them), and max/min/
    nanmax of complex arrays with NaN parts, whose JAX results depend on where the NaNs
    are."""
    jnp = jax.numpy
    zs = np.array([[1 + 2j, 1 - 2j, -1 + 5j, 1 + 0j], [2j, 1 + 1j, 1 + 1j, -3 - 3j]])
    out = {
        "argmax": error_name(lambda: jnp.argmax(jnp.asarray(zs[0]))),
        "argmin_jit": error_name(lambda: jax.jit(jnp.argmin)(jnp.asarray(zs[0]))),
        "nanargmax": error_name(lambda: jnp.nanargmax(jnp.asarray(zs[1]))),
    }
    nans = np.array([[1 + 2j, complex(NAN, 0), 3 + 1j, complex(0, NAN), 5 + 0j]])
    out |= _three(jax, "max", lambda z: jnp.isnan(jnp.max(z)), nans)
    out |= _three(jax, "min", lambda z: jnp.isnan(jnp.min(z)), nans)
    out |= _three(jax, "nanmax", jnp.nanmax, np.array([[complex(NAN, 0), complex(-INF, -5)]]))
    return out


def complex_infinities(jax: Any) -> dict[str, np.ndarray]:
    """abs of complex values with an infinite and a NaN part, and expm1 of inf + 0j
    (real and imaginary parts apart)."""
    jnp = jax.numpy
    out = _three(jax, "abs", jnp.abs, np.array([[NAN + INF * 1j, complex(-INF, NAN)]]))
    parts = lambda u: jnp.stack([jnp.real(jnp.expm1(u)), jnp.imag(jnp.expm1(u))])  # noqa: E731
    out |= _three(jax, "expm1", parts, np.array([[complex(INF, 0.0), complex(0.0, INF)]]))
    return out


PROGRAMS = {
    f.__name__: f
    for f in (
        integer_division,
        integer_zero_divisors,
        float_division,
        integer_overflow,
        shifts,
        arithmetic_shift_of_unsigned,
        integer_powers,
        integer_negative_powers,
        bitwise_and_gcd,
        float_to_int_casts,
        complex_casts,
        rounding,
        nan_maximum,
        signed_zero_order,
        nan_arg_reductions,
        nan_sorting,
        searchsorted_dtype,
        clip_edges,
        signed_zeros_and_powers,
        empty_reductions,
        nan_statistics,
        cumulative_dtypes,
        small_integer_cumsum,
        weak_type_promotion,
        integer_to_float_dtypes,
        creation_dtypes,
        at_repeated_indices,
        at_out_of_bounds,
        take_modes,
        default_mode_reads,
        dynamic_slices,
        sized_nonzero,
        complex_branch_cuts,
        complex_inverse_functions,
        complex_magnitudes,
        complex_reductions,
        complex_numpy_order,
        complex_infinities,
    )
}
