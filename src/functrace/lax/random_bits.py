"""Primitives behind ``functrace.random``: the Threefry-2x32 block cipher and ``erf_inv``.

``threefry2x32(k0, k1, x0, x1)`` encrypts the counter pairs ``(x0, x1)`` under the
keys ``(k0, k1)``, elementwise over four ``uint32`` arrays of one shape, with the
Threefry-2x32 cipher of Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"
(SC 2011): 20 rounds of add / rotate / xor, rotation constants 13 15 26 6 and
17 29 16 24, a key injection every four rounds with the parity word
``k0 ^ k1 ^ 0x1BD11BDA``. It is the generator JAX uses, so the same key and counters
give the same bits.

The block holds a NumPy impl (uint32 arithmetic wraps), abstract eval, batching
(elementwise: batch axes aligned), a zero JVP (integer outputs: no tangent ever
reaches a key) and the cipher as Numba statements (``threefry_lines``), from which
``functrace/jit/random_rules.py`` makes the ``jit`` lowering (one compiled loop over
the elements) and the native-loop rule, so sampling inside a compiled
``scan``/``while`` body stays native.

``erf_inv`` is the inverse error function, the last step of ``random.normal``: Giles'
single-precision polynomial for float32, refined by Newton steps on erf / erfc for
float64. Its NumPy impl and its compiled loop (``erf_inv_lines``, compiled by
``functrace/jit/random_rules.py`` for ``jit``, native loops, and the impl on large
arrays through ``numba_rules.compiled_impls``) give the same bits. ``nextafter`` is
NumPy's, for ``truncated_normal``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.numba_rules import compiled_impls, numba_emitters
from functrace.lax._util import (
    check_same_dtypes,
    check_same_shapes,
    eager_check_binary,
    eager_check_dtypes,
    register,
)
from functrace.lax.base import broadcast_operands, exp, full_like, mul

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA

# ---------------------------------------------------------------------------
# threefry2x32
# ---------------------------------------------------------------------------


def _threefry2x32_abstract(*avals: ShapedArray) -> list[ShapedArray]:
    if len(avals) != 4:
        raise TypeError(f"threefry2x32: expected 4 operands (k0, k1, x0, x1), got {len(avals)}.")
    for name, a in zip(("k0", "k1", "x0", "x1"), avals):
        if a.dtype != _U32:
            raise TypeError(
                f"threefry2x32: expected uint32 operands, got {a.dtype.name} for {name}."
            )
    shape = check_same_shapes("threefry2x32", *avals)
    return [ShapedArray(shape, _U32), ShapedArray(shape, _U32)]


def _threefry2x32_impl(k0: Any, k1: Any, x0: Any, x1: Any) -> list[Any]:
    args = [np.asarray(a) for a in (k0, k1, x0, x1)]
    _threefry2x32_abstract(*(ShapedArray(a.shape, a.dtype) for a in args))
    shape = args[0].shape
    k0, k1, x0, x1 = (a.reshape(-1) for a in args)  # 1-d: NumPy scalars would warn on wrap
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
            x1 = x1 ^ x0
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + np.uint32(block + 1)
    out = [x0.reshape(shape), x1.reshape(shape)]
    return [o[()] if not shape else o for o in out]


threefry2x32_p = register(
    Primitive("threefry2x32", multiple_results=True), _threefry2x32_impl, _threefry2x32_abstract
)


def threefry2x32(k0: Any, k1: Any, x0: Any, x1: Any) -> list[Any]:
    """The Threefry-2x32 cipher (20 rounds), elementwise over four uint32 arrays of one shape.

    Returns the two encrypted words ``[y0, y1]``.

    >>> import numpy as np
    >>> from functrace import lax
    >>> z = np.zeros(1, np.uint32)
    >>> [int(y[0]) for y in lax.threefry2x32(z, z, z, z)]
    [1797259609, 2579123966]
    """
    return threefry2x32_p.bind(k0, k1, x0, x1)


def _threefry2x32_batch(vals: list[Any], bdims: list[Any]) -> tuple[list[Any], list[int]]:
    # Elementwise: every operand gets the batch axis at 0 (unbatched ones broadcast).
    size = batching.batch_size(vals, bdims)
    args = [batching.bdim_at(v, b, size, 0) for v, b in zip(vals, bdims)]
    return threefry2x32_p.bind(*args), [0, 0]


batching.batching_rules[threefry2x32_p] = _threefry2x32_batch
# Integer outputs: tangents are symbolic zeros, nothing flows into (or out of) keys.
ad.defjvp_zero(threefry2x32_p)


def threefry_lines(k0: str, k1: str, x0: str, x1: str, y0: str, y1: str, tmp: str) -> list[str]:
    """Numba source computing one block: reads the uint32 scalars ``k0, k1, x0, x1`` and
    assigns ``y0, y1`` (uint32). Works in uint64 locals masked to 32 bits (Numba widens
    uint32 arithmetic); ``tmp`` prefixes the local names."""
    m = "np.uint64(0xFFFFFFFF)"
    a, b, c, v0, v1, g, j, r = (f"{tmp}{s}" for s in ("a", "b", "c", "v0", "v1", "g", "j", "r"))
    rot = ", ".join(str(x) for x in (*_ROTATIONS[0], *_ROTATIONS[1]))
    return [
        f"{a} = np.uint64({k0})",
        f"{b} = np.uint64({k1})",
        f"{c} = {a} ^ {b} ^ np.uint64({_PARITY})",
        f"{v0} = (np.uint64({x0}) + {a}) & {m}",
        f"{v1} = (np.uint64({x1}) + {b}) & {m}",
        f"for {g} in range(5):",
        f"    for {j} in range(4):",
        f"        {r} = np.uint64(({rot})[({g} % 2) * 4 + {j}])",
        f"        {v0} = ({v0} + {v1}) & {m}",
        f"        {v1} = (({v1} << {r}) | ({v1} >> (np.uint64(32) - {r}))) & {m}",
        f"        {v1} = {v1} ^ {v0}",
        f"    {v0} = ({v0} + ({a}, {b}, {c})[({g} + 1) % 3]) & {m}",
        f"    {v1} = ({v1} + ({a}, {b}, {c})[({g} + 2) % 3] + np.uint64({g} + 1)) & {m}",
        f"{y0} = np.uint32({v0})",
        f"{y1} = np.uint32({v1})",
    ]


# ---------------------------------------------------------------------------
# erf_inv
# ---------------------------------------------------------------------------

# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single
# precision: a polynomial in w = -log(1 - x^2), one for w < 5 and one in sqrt(w).
_GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_GILES_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _giles(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        # log1p in float64, rounded once: the compiled kernels compute the same
        w = (-np.log1p((-(x * x)).astype(np.float64))).astype(x.dtype)
        small = w < dt(5.0)
        wc = w - dt(2.5)
        wt = np.sqrt(w) - dt(3.0)
        pc = np.full_like(x, _GILES_CENTRAL[0])
        pt = np.full_like(x, _GILES_TAIL[0])
        for cc, ct in zip(_GILES_CENTRAL[1:], _GILES_TAIL[1:]):
            pc = dt(cc) + pc * wc
            pt = dt(ct) + pt * wt
        return np.where(small, pc, pt) * x


_erfc = np.frompyfunc(math.erfc, 1, 1)
_erf = np.frompyfunc(math.erf, 1, 1)
_exp = np.frompyfunc(math.exp, 1, 1)  # libm's exp, as in the compiled kernels
_log = np.frompyfunc(math.log, 1, 1)
_SQRT_PI = math.sqrt(math.pi)


def _erf_inv_numpy(x: Any) -> Any:
    x = np.asarray(x)
    dt = x.dtype
    flat = x.reshape(-1)
    if dt.itemsize <= 4:  # float32 (and float16, computed in float32): Giles' polynomial
        out = _giles(flat.astype(np.float32)).astype(dt)
    else:
        # float64: Giles' estimate refined by Newton steps on erf near 0 and on erfc in
        # the tails (q = 1 - |x| is exact there), so the tails keep full precision.
        a = np.abs(flat)
        y = _giles(a.astype(np.float32)).astype(np.float64)
        tail = a > 0.5
        q = 1.0 - a
        c = 2.0 / math.sqrt(math.pi)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            # |x| within float32's rounding of 1 (Giles' estimate is inf there): start
            # from erfc's asymptote erfc(y) ~ exp(-y^2) / (y sqrt(pi)) instead
            lq = -np.asarray(_log(np.where(q > 0.0, q, 1.0)), dtype=np.float64)
            y1 = np.sqrt(lq)
            y1 = np.sqrt(lq - np.asarray(_log(np.maximum(y1, 1.0) * _SQRT_PI), dtype=np.float64))
            y = np.where(np.isfinite(y), y, np.where(q > 0.0, y1, 0.0))
            for _ in range(4):
                erfc_y = np.asarray(_erfc(y), dtype=np.float64)
                erf_y = np.asarray(_erf(y), dtype=np.float64)
                r = np.where(tail, q - erfc_y, erf_y - a)
                step = r / (c * np.asarray(_exp(-y * y), dtype=np.float64))
                y = np.where(np.isfinite(step), y - step, y)
            y = np.where(a == 1.0, np.inf, np.where((a > 1.0) | np.isnan(a), np.nan, y))
        out = (np.copysign(y, flat)).astype(dt)
    out = out.reshape(x.shape)
    return out[()] if not x.shape else out


def _erf_inv_abstract(x: ShapedArray) -> ShapedArray:
    if x.dtype.kind != "f":
        raise TypeError(f"erf_inv: expected a real floating-point operand, got {x.dtype.name}.")
    return x


_KERNEL_MIN_SIZE = 4096  # below this, NumPy is faster than a kernel call (no compile)


def _erf_inv_impl(x: Any) -> Any:
    x = np.asarray(x)
    if x.size < _KERNEL_MIN_SIZE or x.dtype not in (np.float32, np.float64):
        return _erf_inv_numpy(x)
    compiled = compiled_impls.get(erf_inv_p)  # jit's compiled loop (the same bits)
    out = compiled(x) if compiled is not None else None
    return _erf_inv_numpy(x) if out is None else out


erf_inv_p = register(Primitive("erf_inv"), _erf_inv_impl, _erf_inv_abstract)
batching.defvectorized(erf_inv_p)


def erf_inv(x: Any) -> Any:
    """The inverse error function, elementwise: ``erf(erf_inv(x)) == x`` on (-1, 1).

    >>> from functrace import lax
    >>> round(float(lax.erf_inv(0.5)), 6)
    0.476936
    """
    return erf_inv_p.bind(x)


def _erf_inv_jvp(g: Any, ans: Any, x: Any) -> Any:
    # d erf_inv = sqrt(pi)/2 exp(erf_inv(x)^2) dx
    return mul(g, mul(full_like(ans, math.sqrt(math.pi) / 2), exp(mul(ans, ans))))


ad.defjvp2(erf_inv_p, _erf_inv_jvp)


def erf_inv_lines(x: str, y: str, dtype: np.dtype, tmp: str) -> list[str]:
    """Numba statements computing ``y = erf_inv(x)`` for one scalar, the impl's algorithm
    (Giles' polynomial in float32; Newton steps on erf / erfc for float64)."""
    f = "np.float32"
    w, p, t, a, q, yy, r, st, it, cc = (
        f"{tmp}{s}" for s in ("w", "p", "t", "a", "q", "y", "r", "s", "i", "c")
    )

    def coefs(cs: tuple[float, ...]) -> str:
        return "(" + ", ".join(f"{f}({c!r})" for c in cs[1:]) + ")"

    def giles(src: str, out: str) -> list[str]:
        # the polynomials as loops over coefficient tuples: fewer generated lines
        return [
            f"{t} = {f}({src})",
            f"{w} = {f}(-math.log1p(np.float64(-({t} * {t}))))",
            f"if {w} < {f}(5.0):",
            f"    {w} = {w} - {f}(2.5)",
            f"    {p} = {f}({_GILES_CENTRAL[0]!r})",
            f"    for {cc} in {coefs(_GILES_CENTRAL)}:",
            f"        {p} = {cc} + {p} * {w}",
            "else:",
            f"    {w} = np.sqrt({w}) - {f}(3.0)",
            f"    {p} = {f}({_GILES_TAIL[0]!r})",
            f"    for {cc} in {coefs(_GILES_TAIL)}:",
            f"        {p} = {cc} + {p} * {w}",
            f"{out} = {p} * {t}",
        ]

    if dtype.itemsize <= 4:
        return [*giles(x, yy), f"{y} = np.{dtype.name}({yy})"]
    c = 2.0 / math.sqrt(math.pi)
    return [
        f"{a} = abs(np.float64({x}))",
        *giles(a, yy),
        f"{yy} = np.float64({yy})",
        f"{q} = 1.0 - {a}",
        f"if not np.isfinite({yy}):",  # |x| within float32's rounding of 1: the asymptote
        f"    {yy} = 0.0",
        f"    if {q} > 0.0:",
        f"        {r} = -math.log({q})",
        f"        {yy} = math.sqrt({r} - math.log(max(math.sqrt({r}), 1.0) * {_SQRT_PI!r}))",
        f"for {it} in range(4):",
        f"    if {a} > 0.5:",
        f"        {r} = {q} - math.erfc({yy})",
        "    else:",
        f"        {r} = math.erf({yy}) - {a}",
        f"    {st} = {r} / ({c!r} * math.exp(-({yy} * {yy})))",
        f"    if np.isfinite({st}):",
        f"        {yy} = {yy} - {st}",
        f"if {a} == 1.0:",
        f"    {yy} = np.inf",
        f"elif {a} > 1.0 or {a} != {a}:",
        f"    {yy} = np.nan",
        f"{y} = np.{dtype.name}(math.copysign({yy}, {x}))",
    ]


# ---------------------------------------------------------------------------
# nextafter
# ---------------------------------------------------------------------------


def _nextafter_impl(x: Any, y: Any) -> Any:
    eager_check_binary("nextafter", x, y)
    eager_check_dtypes("nextafter", x, y)  # as traced: no promotion
    return np.nextafter(x, y)


def _nextafter_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    check_same_shapes("nextafter", x, y)
    check_same_dtypes("nextafter", x, y)
    if x.dtype.kind != "f":
        raise TypeError(f"nextafter: expected real floating-point operands, got {x.dtype.name}.")
    return x.update(weak_type=x.weak_type and y.weak_type)


nextafter_p = register(Primitive("nextafter"), _nextafter_impl, _nextafter_abstract)
batching.defbroadcasting(nextafter_p)
numba_emitters[nextafter_p] = "np.nextafter({0}, {1})"


def nextafter(x: Any, y: Any) -> Any:
    """The next representable value after ``x`` towards ``y``, elementwise (0-d operands
    and axes of size 1 broadcast, as in JAX's lax).

    >>> import numpy as np
    >>> from functrace import lax
    >>> bool(lax.nextafter(np.float32(1), np.float32(2)) == 1 + 2**-23)
    True
    """
    return nextafter_p.bind(*broadcast_operands(x, y))


def _nextafter_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    # d nextafter(x, y) = dx almost everywhere (a step of one ulp); y only picks the side.
    out = nextafter_p.bind(*primals)
    gx = tangents[0]
    if type(gx) is ad.Zero:
        return out, ad.Zero.from_primal(out)
    return out, gx


ad.jvp_rules[nextafter_p] = _nextafter_jvp

__all__ = [
    "erf_inv",
    "erf_inv_p",
    "nextafter",
    "nextafter_p",
    "threefry2x32",
    "threefry2x32_p",
]
