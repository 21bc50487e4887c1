"""More primitives of ``jax.lax``: inverse hyperbolic functions and ``cbrt``, integer bit
operations (``population_count``, ``clz``, ``mulhi``, the bitwise reductions
``reduce_and``/``reduce_or``/``reduce_xor``), ``bitcast_convert_type``,
``reduce_precision``, the complex parts (``real``, ``imag``, ``conj``, ``complex``) and
the stateful ``rng_uniform``.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP (and transpose
if linear), batching rule and, for the elementwise ones, the Numba emitter (a template,
or ``None``: the driver of ``jit`` calls the NumPy impl). Decisions (JAX's semantics
unless noted):

* ``real``/``imag`` of a real operand return it / zeros (``jax.lax`` raises a TypeError:
  only ``jax.numpy`` takes real operands), ``conj`` of a real operand is complex, as in
  JAX.
* ``rng_uniform`` draws from one process-wide NumPy generator (``seed_rng_uniform``
  reseeds it); under ``vmap`` with batched bounds it draws once per example (JAX has
  no batching rule). Its derivative is an error, as in JAX.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters import numba_rules as _nr
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import (
    as_index_tuple,
    check_dtype_kind,
    check_same_dtypes,
    check_same_shapes,
    normalize_axis,
    register_checked,
)
from functrace.lax.base import (
    _check_axes,
    _reduce_batch,
    add,
    binop,
    broadcast_operands,
    convert_element_type,
    div,
    full_like,
    mul,
    neg,
    select_n,
    sub,
    unop,
    zeros_like,
)
from functrace.lax.elementwise import abs_p, eq, sign, sqrt
from functrace.lax.shapes import broadcast_in_dim, concatenate, squeeze
from functrace.lax.shapes import slice as lax_slice


def _no_kernel(ctx: _nr.EmitContext) -> None:
    """Elementwise, but no scalar Numba code: the driver calls the vectorised impl."""
    return None


def checked_bind(p: Primitive, doc: str) -> Any:
    """The function binding the elementwise ``p`` after its abstract-eval checks, so
    eager calls reject bad dtypes as traced ones do (NumPy would compute something)."""
    rule = core.abstract_eval_rules[p]

    def f(*args: Any) -> Any:
        rule(*[core.get_aval(a) for a in args])
        return p.bind(*args)

    f.__name__ = p.name
    f.__doc__ = doc
    return f


# ---------------------------------------------------------------------------
# cbrt, acosh, asinh, atanh
# ---------------------------------------------------------------------------


def _real_kernel(template: str) -> Any:
    """A Numba emitter of ``template`` for real operands; complex ones are left to the
    NumPy impl (Numba's complex acosh, asinh and atanh are not NumPy's: acosh(1 + 1e-300j)
    loses its real part, the others differ in the last bits and at NaN)."""

    def emit(ctx: _nr.EmitContext) -> str | None:
        return None if ctx.in_dtypes[0].kind == "c" else template.format(*ctx.args)

    return emit


cbrt_p = unop("cbrt", np.cbrt, "f", "a real floating-point")
cbrt = checked_bind(
    cbrt_p,
    """Elementwise real cube root (``cbrt(-8.0) == -2.0``, exact for perfect cubes).

>>> float(cbrt(27.0))
3.0
""",
)
# d cbrt = dx / (3 cbrt(x)^2); NOTE: infinite at 0, as JAX.
ad.defjvp2(cbrt_p, lambda g, ans, x: div(g, mul(full_like(ans, 3), mul(ans, ans))))
numba_emitters[cbrt_p] = "np.cbrt({0})"

acosh_p = unop("acosh", np.arccosh)
acosh = checked_bind(
    acosh_p,
    """Elementwise inverse hyperbolic cosine (NaN below 1).

>>> float(acosh(1.0))
0.0
""",
)
ad.defjvp(  # d acosh = dx / (sqrt(x - 1) sqrt(x + 1)); NOTE: infinite at 1
    acosh_p,
    lambda g, x: div(g, mul(sqrt(sub(x, full_like(x, 1))), sqrt(add(x, full_like(x, 1))))),
)
numba_emitters[acosh_p] = _real_kernel("np.arccosh({0})")

asinh_p = unop("asinh", np.arcsinh)
asinh = checked_bind(
    asinh_p,
    """Elementwise inverse hyperbolic sine.

>>> float(asinh(0.0))
0.0
""",
)
ad.defjvp(  # d asinh = dx / sqrt(x^2 + 1)
    asinh_p, lambda g, x: div(g, sqrt(add(mul(x, x), full_like(x, 1))))
)
numba_emitters[asinh_p] = _real_kernel("np.arcsinh({0})")

atanh_p = unop("atanh", np.arctanh)
atanh = checked_bind(
    atanh_p,
    """Elementwise inverse hyperbolic tangent (``+-inf`` at ``+-1``, NaN beyond).

>>> float(atanh(0.0))
0.0
""",
)
ad.defjvp(  # d atanh = dx / ((1 - x)(1 + x))
    atanh_p,
    lambda g, x: div(g, mul(sub(full_like(x, 1), x), add(full_like(x, 1), x))),
)
numba_emitters[atanh_p] = _real_kernel("np.arctanh({0})")

# ---------------------------------------------------------------------------
# population_count, clz, mulhi (integers; not differentiable)
# ---------------------------------------------------------------------------


def _contiguous(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous array of its own shape (0-d stays 0-d)."""
    a = np.asarray(x)
    return a if a.flags.c_contiguous else a.copy()


def _unsigned(x: np.ndarray) -> np.ndarray:
    """The bits of the integer array ``x`` as the unsigned type of its width."""
    return _contiguous(x).view(np.dtype(f"u{x.dtype.itemsize}"))


def _population_count_impl(x: Any) -> Any:
    a = np.asarray(x)  # (NumPy's bitwise_count counts the bits of |x|: use the raw bits)
    return np.bitwise_count(_unsigned(a)).astype(a.dtype)[()]


population_count_p = unop("population_count", _population_count_impl, "iu", "an integer")
population_count = checked_bind(
    population_count_p,
    """Elementwise number of set bits (of the two's complement
bits for signed integers), in the operand's dtype.

>>> int(population_count(7))
3
""",
)
ad.defjvp_zero(population_count_p)
numba_emitters[population_count_p] = _no_kernel


def _clz_impl(x: Any) -> Any:
    a = np.asarray(x)
    bits = a.dtype.itemsize * 8
    u = _unsigned(a)
    length = np.zeros(a.shape, np.int64)  # the bit length, by halving
    shift = bits // 2
    while shift:
        top = np.right_shift(u, u.dtype.type(shift))
        nz = top != 0
        length = length + np.where(nz, shift, 0)
        u = np.where(nz, top, u)
        shift //= 2
    length = length + (u != 0)
    return (bits - length).astype(a.dtype)[()]


clz_p = unop("clz", _clz_impl, "iu", "an integer")
clz = checked_bind(
    clz_p,
    """Elementwise count of leading zero bits (the bit width for 0), in the
operand's dtype.

>>> int(clz(1))
63
""",
)
ad.defjvp_zero(clz_p)
numba_emitters[clz_p] = _no_kernel


def _mulhi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high 64 bits of the 128-bit products of uint64 arrays (32-bit limbs)."""
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & m, a >> s, b & m, b >> s
    lo_lo, hi_lo, lo_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    cross = (lo_lo >> s) + (hi_lo & m) + lo_hi  # < 2**64: no carry is lost
    return a_hi * b_hi + (hi_lo >> s) + (cross >> s)


def _mulhi_impl(x: Any, y: Any) -> Any:
    a, b = np.asarray(x), np.asarray(y)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    dt = a.dtype
    bits = dt.itemsize * 8
    with np.errstate(over="ignore"):
        if bits < 64:  # the exact product fits in 64 bits
            wide = np.int64 if dt.kind == "i" else np.uint64
            out = (a.astype(wide) * b.astype(wide)) >> bits
        else:
            ua, ub = _unsigned(a), _unsigned(b)
            hi = _mulhi_u64(ua, ub)
            if dt.kind == "i":  # signed: subtract the wrapped-around operands
                hi = hi - np.where(a < 0, ub, 0).astype(np.uint64)
                hi = hi - np.where(b < 0, ua, 0).astype(np.uint64)
            out = hi
    return np.asarray(out).astype(dt).view(dt).reshape(shape)[()]


mulhi_p = binop("mulhi", _mulhi_impl, "iu", "an integer")
mulhi = checked_bind(
    mulhi_p,
    """Elementwise high half of the double-width product of two integers of
one dtype (``(x * y) >> bits`` computed without overflow).

>>> import numpy as np
>>> int(mulhi(np.int64(2**62), np.int64(8)))
2
""",
)
ad.defjvp_zero(mulhi_p)
numba_emitters[mulhi_p] = _no_kernel

# ---------------------------------------------------------------------------
# reduce_and, reduce_or, reduce_xor
# ---------------------------------------------------------------------------


def _bitwise_reduction(name: str, ufunc: np.ufunc, all_ones: bool) -> Primitive:
    def abstract(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        if x.dtype.kind not in "biu":
            raise TypeError(
                f"{name}: expected a boolean or integer operand, got {x.dtype.name}. "
                f"Compare floats first (x != 0) to reduce their truth values."
            )
        return ShapedArray(_check_axes(name, x, axes), x.dtype, x.weak_type)

    def impl(x: Any, *, axes: tuple[int, ...]) -> Any:
        a = np.asarray(x)
        ident = np.invert(np.zeros((), a.dtype)) if all_ones else np.zeros((), a.dtype)
        return ufunc.reduce(a, axis=axes, initial=ident)[()]

    p = register_checked(Primitive(name), impl, abstract)
    ad.defjvp_zero(p)
    batching.batching_rules[p] = _reduce_batch(p)
    return p


reduce_and_p = _bitwise_reduction("reduce_and", np.bitwise_and, True)
reduce_or_p = _bitwise_reduction("reduce_or", np.bitwise_or, False)
reduce_xor_p = _bitwise_reduction("reduce_xor", np.bitwise_xor, False)


def _axes(name: str, x: Any, axes: Sequence[int]) -> tuple[int, ...]:
    nd = core.get_aval(x).ndim
    return tuple(sorted(normalize_axis(name, a, nd) for a in as_index_tuple(name, axes)))


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise AND over ``axes`` (logical AND for booleans); all bits set over empty axes.

    >>> import numpy as np
    >>> reduce_and(np.array([[6, 3], [5, 1]]), (0,)).tolist()
    [4, 1]
    """
    return reduce_and_p.bind(operand, axes=_axes("reduce_and", operand, axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise OR over ``axes`` (logical OR for booleans); 0 over empty axes.

    >>> import numpy as np
    >>> bool(reduce_or(np.array([False, True]), (0,)))
    True
    """
    return reduce_or_p.bind(operand, axes=_axes("reduce_or", operand, axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise XOR over ``axes`` (parity for booleans); 0 over empty axes.

    >>> import numpy as np
    >>> int(reduce_xor(np.array([6, 3, 5, 1]), (0,)))
    1
    """
    return reduce_xor_p.bind(operand, axes=_axes("reduce_xor", operand, axes))


# ---------------------------------------------------------------------------
# bitcast_convert_type
# ---------------------------------------------------------------------------


def _bitcast_shape(x: ShapedArray, new_dtype: np.dtype) -> tuple[int, ...]:
    old = x.dtype
    if old != new_dtype and (old.kind in "bc" or new_dtype.kind in "bc"):
        raise TypeError(
            f"bitcast_convert_type: expected bool and complex dtypes only when the operand "
            f"already has the new dtype, got {old.name} to {new_dtype.name}. Use "
            f"convert_element_type (values) or compare with 0."
        )
    if new_dtype.kind not in "iuf" and old != new_dtype:
        raise TypeError(f"bitcast_convert_type: expected a numeric new_dtype, got {new_dtype}.")
    a, b = old.itemsize, new_dtype.itemsize
    if a == b:
        return x.shape
    if a > b:
        return (*x.shape, a // b)
    if not x.shape or x.shape[-1] != b // a:
        raise ValueError(
            f"bitcast_convert_type: expected a last axis of size {b // a} to make one "
            f"{new_dtype.name} of {b // a} {old.name} values, got operand shape {x.shape}."
        )
    return x.shape[:-1]


def _bitcast_abstract(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    return ShapedArray(_bitcast_shape(x, new_dtype), new_dtype)


def _bitcast_impl(x: Any, *, new_dtype: np.dtype) -> Any:
    a = _contiguous(x)
    shape = _bitcast_shape(ShapedArray(a.shape, a.dtype), new_dtype)
    return a.reshape(-1).view(new_dtype).reshape(shape)[()]


bitcast_convert_type_p = register_checked(
    Primitive("bitcast_convert_type"), _bitcast_impl, _bitcast_abstract
)
ad.defjvp_zero(bitcast_convert_type_p)


def _bitcast_batch(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> Any:
    x = batching.moveaxis(vals[0], bdims[0], 0)  # the trailing axes may change
    return bitcast_convert_type_p.bind(x, **params), 0


batching.batching_rules[bitcast_convert_type_p] = _bitcast_batch


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``operand`` as ``new_dtype``. A narrower new dtype adds a
    last axis (``float64`` to ``int32``: shape ``(..., 2)``); a wider one consumes the
    last axis, which must hold exactly enough values. Not differentiable (zero
    derivative), as in JAX.

    >>> import numpy as np
    >>> int(bitcast_convert_type(np.float64(1.0), np.int64))
    4607182418800017408
    """
    return bitcast_convert_type_p.bind(operand, new_dtype=np.dtype(new_dtype))


# ---------------------------------------------------------------------------
# reduce_precision
# ---------------------------------------------------------------------------

_FLOAT_LAYOUT = {2: (5, 10), 4: (8, 23), 8: (11, 52)}  # itemsize -> (exponent, mantissa)


def _reduce_precision_abstract(
    x: ShapedArray, *, exponent_bits: int, mantissa_bits: int
) -> ShapedArray:
    if x.dtype.kind != "f" or x.dtype.itemsize not in _FLOAT_LAYOUT:
        raise TypeError(
            f"reduce_precision: expected a float16, float32 or float64 operand, got {x.dtype.name}."
        )
    return x


def _reduce_precision_impl(x: Any, *, exponent_bits: int, mantissa_bits: int) -> Any:
    a = np.asarray(x)
    exp_src, man_src = _FLOAT_LAYOUT[a.dtype.itemsize]
    ut = np.dtype(f"u{a.dtype.itemsize}").type
    u = _contiguous(a).view(ut).copy()
    with np.errstate(over="ignore"):
        if mantissa_bits < man_src:  # round the mantissa to nearest, ties to even
            drop = man_src - mantissa_bits
            last = ut(1) << ut(drop)
            bias = (last >> ut(1)) - ut(1) + ((u & last) >> ut(drop))
            u = (u + bias) & ~(last - ut(1))
        if exponent_bits < exp_src:  # out of the smaller range: +-inf, or 0 (flushed)
            sign = u & (ut(1) << ut(exp_src + man_src))
            exp_field = (u >> ut(man_src)) & ut((1 << exp_src) - 1)
            src_bias, new_bias = (1 << (exp_src - 1)) - 1, (1 << (exponent_bits - 1)) - 1
            over = exp_field > src_bias + new_bias
            under = exp_field <= src_bias - new_bias
            inf_bits = ut(((1 << exp_src) - 1) << man_src)
            u = np.where(over, sign | inf_bits, np.where(under, sign, u)).astype(ut)
    out = u.view(a.dtype)
    return np.where(np.isnan(a), a, out).astype(a.dtype)[()]


reduce_precision_p = register_checked(
    Primitive("reduce_precision"), _reduce_precision_impl, _reduce_precision_abstract
)
# NOTE: treated as linear, as JAX does: tangents and cotangents are rounded the same way.
ad.deflinear2(
    reduce_precision_p,
    lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)],
)
batching.defvectorized(reduce_precision_p)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round ``operand`` to a float format with ``exponent_bits`` exponent and
    ``mantissa_bits`` mantissa bits, keeping its dtype: the mantissa rounds to nearest
    (ties to even), values beyond the range become ``+-inf`` and values below the
    smallest normal number become (signed) zero; NaN stays NaN. Derivatives are rounded
    the same way (JAX treats it as linear).

    >>> float(reduce_precision(3.14159, exponent_bits=8, mantissa_bits=7))  # bfloat16
    3.140625
    """
    e, m = int(exponent_bits), int(mantissa_bits)
    if e < 1:
        raise ValueError(f"reduce_precision: expected exponent_bits >= 1, got {exponent_bits}.")
    if m < 0:
        raise ValueError(f"reduce_precision: expected mantissa_bits >= 0, got {mantissa_bits}.")
    return reduce_precision_p.bind(operand, exponent_bits=e, mantissa_bits=m)


# ---------------------------------------------------------------------------
# real, imag, conj, complex
# ---------------------------------------------------------------------------

_REAL_OF: dict[np.dtype, np.dtype] = {
    np.dtype(np.complex64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.float64),
}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def _complex_part_abstract(name: str) -> Any:
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype_kind(name, x, "c", "a complex")
        return x.update(dtype=_REAL_OF[x.dtype])

    return rule


real_p = unop("real", np.real, "c", "a complex")
core.abstract_eval_rules[real_p] = _complex_part_abstract("real")
imag_p = unop("imag", np.imag, "c", "a complex")
core.abstract_eval_rules[imag_p] = _complex_part_abstract("imag")
conj_p = unop("conj", np.conjugate, "c", "a complex")


def _as_complex(x: Any) -> Any:
    return convert_element_type(x, _COMPLEX_OF[np.dtype(core.get_aval(x).dtype)])


# re and im are real-linear; their transposes (JAX's convention): re^T ct = ct + 0i,
# im^T ct = 0 - ct i; conj^T = conj.
ad.deflinear2(real_p, lambda ct, x: [_as_complex(ct)])
ad.deflinear2(imag_p, lambda ct, x: [mul(_as_complex(neg(ct)), full_like(_as_complex(ct), 1j))])
ad.deflinear2(conj_p, lambda ct, x: [conj_p.bind(ct)])


def _abs_jvp(g: Any, x: Any) -> Any:
    # abs's JVP (elementwise.py has the real case): for complex x, |x| changes by the
    # part of dx along x, real(conj(x) dx / |x|); 0 at x = 0. Written with x and |x|
    # (JAX's form), not sign(x), whose derivative is zero: the second derivative of
    # |x| would be lost.
    if core.get_aval(x).dtype.kind == "c":
        r = _as_complex(abs_p.bind(x))
        zero = eq(r, zeros_like(r))
        return real(mul(g, div(conj(x), select_n(zero, r, full_like(r, 1)))))
    return mul(g, sign(x))


ad.defjvp(abs_p, _abs_jvp)
numba_emitters[real_p] = "({0}).real"
numba_emitters[imag_p] = "({0}).imag"
numba_emitters[conj_p] = "np.conj({0})"


def _real_or_complex(name: str, x: Any) -> np.dtype:
    dt = np.dtype(core.get_aval(x).dtype)
    if dt.kind not in "fc":
        raise TypeError(f"{name}: expected a floating-point or complex operand, got {dt.name}.")
    return dt


def real(x: Any) -> Any:
    """The real part of a complex ``x``, as float32/float64. A real ``x`` is returned as
    it is (``jax.lax.real`` accepts complex operands only).

    >>> float(real(np.complex128(1 + 2j)))
    1.0
    """
    return real_p.bind(x) if _real_or_complex("real", x).kind == "c" else x


def imag(x: Any) -> Any:
    """The imaginary part of a complex ``x``, as float32/float64; zeros for a real ``x``
    (``jax.lax.imag`` accepts complex operands only).

    >>> float(imag(np.complex128(1 + 2j)))
    2.0
    """
    return imag_p.bind(x) if _real_or_complex("imag", x).kind == "c" else zeros_like(x)


def conj(x: Any) -> Any:
    """The complex conjugate; a real ``x`` becomes complex (float32 to complex64), as in
    JAX.

    >>> conj(np.complex128(1 + 2j))
    np.complex128(1-2j)
    """
    dt = _real_or_complex("conj", x)
    return conj_p.bind(x) if dt.kind == "c" else _as_complex(x)


def _complex_impl(x: Any, y: Any) -> Any:
    # the parts stored as they are: x + y * 1j would turn a -0.0 part into +0.0 and
    # an infinite y into a NaN real part (inf * 0)
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(x.shape, _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y
    return out[()]


def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    out = _complex_operands(x, y)
    if out.dtype not in _COMPLEX_OF:
        raise TypeError(f"complex: expected float32 or float64 operands, got {x.dtype.name}.")
    return out.update(dtype=_COMPLEX_OF[out.dtype])


complex_p = binop("complex", _complex_impl, "f", "a real floating-point")
_complex_operands = core.abstract_eval_rules[complex_p]
core.abstract_eval_rules[complex_p] = _complex_abstract
# linear in (x, y); its transpose is the inverse pairing of re^T and im^T above:
# complex(x, y) = re^T(x) + im^T(-y), so complex^T ct = (re(ct), -im(ct))
ad.deflinear(complex_p, lambda ct: [real_p.bind(ct), neg(imag_p.bind(ct))])


def _complex_emit(ctx: _nr.EmitContext) -> str:
    x, y = ctx.args
    if ctx.out_dtype == np.complex128:
        return f"complex({x}, {y})"
    return f"{_nr.dtype_ctor(ctx.out_dtype)}(complex({x}, {y}))"  # (exact: float32 parts)


numba_emitters[complex_p] = _complex_emit


def complex(x: Any, y: Any) -> Any:  # noqa: A001 - jax.lax's name
    """``x + y i`` from two real operands of one dtype (float32 gives complex64); 0-d
    operands and axes of size 1 broadcast, as in JAX's lax. The parts are kept as they
    are (signed zeros, infinities).

    >>> complex(np.float64(1.0), np.float64(2.0))
    np.complex128(1+2j)
    """
    x, y = broadcast_operands(x, y)
    ax, ay = core.get_aval(x), core.get_aval(y)
    check_same_shapes("complex", ax, ay)
    check_same_dtypes("complex", ax, ay)
    check_dtype_kind("complex", ax, "f", "a real floating-point")
    if ax.dtype not in _COMPLEX_OF:
        raise TypeError(f"complex: expected float32 or float64 operands, got {ax.dtype.name}.")
    return complex_p.bind(x, y)


# ---------------------------------------------------------------------------
# rng_uniform (stateful)
# ---------------------------------------------------------------------------

_rng_lock = threading.Lock()
_rng = [np.random.default_rng()]


def seed_rng_uniform(seed: int | None) -> None:
    """Reseed the process-wide generator ``rng_uniform`` draws from (None: fresh
    entropy), for reproducible runs.

    >>> seed_rng_uniform(0)
    """
    with _rng_lock:
        _rng[0] = np.random.default_rng(seed)


def _rng_uniform_abstract(a: ShapedArray, b: ShapedArray, *, shape: tuple[int, ...]) -> Any:
    if a.shape != () or b.shape != ():
        raise ValueError(
            f"rng_uniform: expected scalar bounds a and b, got shapes {a.shape} and {b.shape}."
        )
    check_same_dtypes("rng_uniform", a, b)
    check_dtype_kind("rng_uniform", a, "iuf", "an integer or floating-point")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_impl(a: Any, b: Any, *, shape: tuple[int, ...]) -> Any:
    dt = np.asarray(a).dtype
    with _rng_lock:
        gen = _rng[0]
        out: Any
        if dt.kind == "f":
            out = gen.uniform(float(a), float(b), shape)
        else:
            lo, hi = int(a), int(b)
            out = gen.integers(lo, hi, shape) if hi > lo else np.full(shape, lo)
    return np.asarray(out).astype(dt)[()]


rng_uniform_p = register_checked(Primitive("rng_uniform"), _rng_uniform_impl, _rng_uniform_abstract)


def _rng_uniform_jvp(primals: Any, tangents: Any, *, shape: tuple[int, ...]) -> Any:
    raise NotImplementedError(
        "rng_uniform: expected bounds that are not differentiated, got traced ones under a "
        "derivative. It has no derivative (as in JAX); draw u = rng_uniform(0, 1, shape) "
        "and use a + (b - a) * u, or functrace.random.uniform with a key."
    )


def _rng_uniform_batch(vals: Sequence[Any], bdims: Sequence[Any], *, shape: Any) -> Any:
    # One draw per example (the loop over the examples), stacked along axis 0.
    size = batching.batch_size(vals, bdims)
    a, b = (batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims))
    rows = []
    for i in range(size):
        ai = squeeze(lax_slice(a, (i,), (i + 1,)), (0,))
        bi = squeeze(lax_slice(b, (i,), (i + 1,)), (0,))
        r = rng_uniform_p.bind(ai, bi, shape=shape)
        rows.append(broadcast_in_dim(r, (1, *shape), tuple(range(1, len(shape) + 1))))
    return concatenate(rows, 0), 0


ad.jvp_rules[rng_uniform_p] = _rng_uniform_jvp
batching.batching_rules[rng_uniform_p] = _rng_uniform_batch


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Stateful uniform random numbers in ``[a, b)`` of ``shape`` (scalars ``a``, ``b`` of
    one dtype; integers for integer bounds). Each call, also of a jitted function,
    draws new numbers; prefer ``functrace.random`` (explicit keys, reproducible).

    >>> x = rng_uniform(0.0, 1.0, (3,))
    >>> bool(((0 <= x) & (x < 1)).all())
    True
    """
    shp = as_index_tuple("rng_uniform", shape)
    if any(d < 0 for d in shp):
        raise ValueError(f"rng_uniform: expected a non-negative shape, got {shp}.")
    return rng_uniform_p.bind(a, b, shape=shp)


__all__ = [
    "acosh",
    "acosh_p",
    "asinh",
    "asinh_p",
    "atanh",
    "atanh_p",
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "cbrt",
    "cbrt_p",
    "clz",
    "clz_p",
    "complex",
    "complex_p",
    "conj",
    "conj_p",
    "imag",
    "imag_p",
    "mulhi",
    "mulhi_p",
    "population_count",
    "population_count_p",
    "real",
    "real_p",
    "reduce_and",
    "reduce_and_p",
    "reduce_or",
    "reduce_or_p",
    "reduce_precision",
    "reduce_precision_p",
    "reduce_xor",
    "reduce_xor_p",
    "rng_uniform",
    "rng_uniform_p",
    "seed_rng_uniform",
]
