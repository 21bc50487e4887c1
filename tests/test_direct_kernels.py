"""The direct compiler of fused kernels against Numba, bit for bit.

A fused kernel's source is compiled either by the direct compiler (LLVM without
Numba's front end, ``functrace/jit/direct.py``) or by Numba; both must give the same
bits. Every elementwise primitive with a scalar template is run through ``jit`` under
each compiler on the arguments of its op-table row with special values mixed in
(signed zeros, infinities, NaN, tiny and huge magnitudes, half-integers, extreme
integers); then the entry points' argument checks, the kernels' shapes (broadcasts,
reductions, explicit sizes) and their use from several threads.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import functrace.numpy as fnp
from functrace import lax
from functrace.interpreters.numba_rules import DriverRule, numba_emitters
from functrace.jit import direct, direct_engine, jit, kernels
from op_db import ALL_OPS, OpInfo

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),
    pytest.mark.skipif(not direct_engine.available(), reason="no direct compiler here"),
]

ENV = direct_engine.ENV

_F_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.5, 1e-310, -1e-40, 1e30, 1e300, -1e300]
_F_SPECIAL += [np.inf, -np.inf, np.nan, 0.3, -0.7, 100.0, 2.0, -3.0, 7e-3]
_I_SPECIAL = [0, 1, -1, 2, -2, 7, -7, 127, -128, 2**31 - 1, -(2**31), 2**62, -(2**63)]


def _with_specials(a, kind_of_arg: str):
    """``a`` with special values written over its elements, in a fixed cycle."""
    arr = np.array(a, copy=True)
    if arr.dtype.kind == "f":
        vals = np.array(_F_SPECIAL, dtype=np.float64).astype(arr.dtype)
    elif arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        vals = np.array([v for v in _I_SPECIAL if info.min <= v <= info.max], arr.dtype)
    else:
        return a
    flat = arr.reshape(-1)
    flat[:] = np.resize(vals, flat.size)
    out = arr.reshape(np.shape(a))
    return out[()] if np.ndim(a) == 0 and not isinstance(a, np.ndarray) else out


def _rows() -> list[tuple[object, OpInfo]]:
    """One op-table row per primitive with a scalar template (an elementwise one)."""
    out, seen = [], set()
    for op in ALL_OPS:
        for name in op.primitives:
            prims = [p for p in numba_emitters if p.name == name]
            for p in prims:
                if p in seen or isinstance(numba_emitters[p], DriverRule):
                    continue
                seen.add(p)
                out.append((p, op))
    return out


ROWS = _rows()


def _run(fn, args, backend: str) -> tuple[list[np.ndarray], list[object]]:
    old = os.environ.get(ENV)
    os.environ[ENV] = backend
    kernels.forget_loaded()  # one kernel source, one name: each compiler makes its own
    try:
        # a new function each run: jit shares its traces among the jits of one function
        f = jit(lambda *a: fn(*a), compile="sync")
        out = f(*args)
    finally:
        if old is None:
            os.environ.pop(ENV)
        else:
            os.environ[ENV] = old
    (entry,) = f._cache.values()
    leaves = out if isinstance(out, tuple | list) else [out]
    return [np.asarray(v) for v in leaves], [k.dispatcher for k in entry.program.kernels]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        nan = np.isnan(a)
        if not np.array_equal(nan, np.isnan(b)):
            return False
        return a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


_direct_counts: list[bool] = []


def _special_args(op: OpInfo, dtype) -> tuple:
    """The row's arguments as arrays of special values (its fixed shapes, else 1-D)."""
    shapes = op.shapes if isinstance(op.shapes, tuple) else [(len(_F_SPECIAL) + 3,)] * len(op.args)
    out = []
    for k, (spec, shape) in enumerate(zip(op.args, shapes)):
        if spec.kind == "const":
            out.append(spec.value)
            continue
        n = int(np.prod(shape, dtype=np.int64))
        if spec.kind == "bool":
            a = (np.arange(n) % (k + 2)) == 0
        elif spec.kind == "int":
            a = np.zeros(n, np.int64)
        else:
            a = np.zeros(n, dtype)
        # shift each argument's cycle so that pairs of specials meet
        out.append(np.roll(_with_specials(a, spec.kind), 3 * k).reshape(shape))
    return tuple(out)


@pytest.mark.parametrize(
    ("prim", "op", "dtype"),
    [
        pytest.param(p, op, dt, id=f"{p.name}-{op.name}-{np.dtype(dt).name}")
        for p, op in ROWS
        for dt in op.dtypes
    ],
)
def test_primitive_same_bits_as_numba(prim, op, dtype) -> None:
    args = _special_args(op, dtype)
    with np.errstate(all="ignore"):
        try:
            got_n, disp_n = _run(op.fn, args, "numba")
        except (ValueError, TypeError, FloatingPointError) as err:  # a row's own checks
            pytest.skip(f"{op.name} rejects these values eagerly: {err}")
        got_d, disp = _run(op.fn, args, "direct")
    assert len(got_n) == len(got_d)
    for a, b in zip(got_n, got_d):
        assert _same_bits(a, b), f"{op.name} ({prim.name}): Numba {a!r} vs direct {b!r}"
    if any(not _is_direct(d) for d in disp_n):  # a row that makes a fused kernel
        _direct_counts.append(any(_is_direct(d) for d in disp))


def _is_direct(dispatcher) -> bool:
    return type(dispatcher).__name__ == "builtin_function_or_method"


def test_direct_compiler_covers_most_rows() -> None:
    """Not vacuous: of the rows above that make a fused kernel (the others call their
    vectorised impls from the driver), most ran a directly compiled one."""
    if len(_direct_counts) < 0.5 * len(ROWS):
        pytest.skip("needs the whole module run")  # (-k selections, -n workers)
    # (the rest: complex and unsigned arithmetic, bit counts, shifts, nextafter, cbrt)
    assert sum(_direct_counts) >= 0.8 * len(_direct_counts), sum(_direct_counts)


# ---------------------------------------------------------------------------
# Kernel shapes: broadcasts, reductions, several outputs, explicit sizes
# ---------------------------------------------------------------------------

_SHAPES = [
    (lambda x, y: fnp.maximum(x * 2.0 + y, 0.0), ((7, 5), (1, 5))),
    (lambda x, y: (fnp.exp(x - y), x > y), ((3, 4, 5), (3, 1, 5))),
    (lambda x: fnp.sum(x * x, axis=1), ((6, 9),)),
    (lambda x: fnp.sum(fnp.tanh(x), axis=0), ((6, 9),)),
    (lambda x: fnp.max(fnp.abs(x), axis=(0, 2)), ((4, 3, 5),)),
    (lambda x: fnp.min(x - 1.0), ((33,),)),
    (lambda x, y: fnp.where(x > 0, x / y, -x), ((10,), (10,))),
    (lambda x, y: lax.rem(x, y), ((12,), (12,))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", range(len(_SHAPES)))
def test_kernel_shapes_same_bits(k, dtype) -> None:
    fn, shapes = _SHAPES[k]
    rng = np.random.default_rng(k)
    args = [rng.normal(size=s).astype(dtype) for s in shapes]
    got_n, _ = _run(fn, args, "numba")
    got_d, disp = _run(fn, args, "direct")
    assert any(_is_direct(d) for d in disp)
    for a, b in zip(got_n, got_d):
        assert _same_bits(a, b)


# ---------------------------------------------------------------------------
# The entry point: argument checks, scalars, subclasses, threads
# ---------------------------------------------------------------------------


def _entry():
    spec = kernels.KernelSpec(ndim=2)
    f32 = np.dtype(np.float32)
    spec.arrays = [(f32, (True, True)), (f32, (False, True))]
    spec.scalars = [f32, np.dtype(np.int64), np.dtype(np.bool_)]
    spec.outputs = [f32]
    spec.body = [
        (2, "", "v0 = np.float32((a0 + a1) * s0)"),
        (2, "", "v1 = np.float32((v0 + np.float32(s1)) if s2 else v0)"),
    ]
    spec.stores = ["v1"]
    src = kernels.kernel_source(spec)
    return direct_engine.compile_kernel(src, kernels.direct_args(spec), "test signature")


def test_entry_point_computes_and_takes_python_and_numpy_scalars() -> None:
    k = _entry()
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((1, 3), np.float32)
    out = np.empty((2, 3), np.float32)
    for s0, s1, s2 in [(2.0, 3, True), (np.float32(2), np.int64(3), np.bool_(True))]:
        assert k(x, y, s0, s1, s2, out) is None
        np.testing.assert_array_equal(out, (x + y) * 2 + 3)
    k(x, y, 2.0, 3, False, out)
    np.testing.assert_array_equal(out, (x + y) * 2)

    class Sub(np.ndarray):
        pass

    k(x.view(Sub), y, 1.0, 0, False, out)  # subclasses of ndarray are arrays
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize(
    "bad",
    [
        "dtype",
        "rank",
        "layout",
        "readonly_out",
        "not_array",
        "count",
        "scalar",
    ],
)
def test_entry_point_rejects_wrong_arguments(bad) -> None:
    k = _entry()
    x, y = np.ones((2, 3), np.float32), np.ones((1, 3), np.float32)
    out = np.empty((2, 3), np.float32)
    args = [x, y, 1.0, 0, False, out]
    if bad == "dtype":
        args[0] = x.astype(np.float64)
    elif bad == "rank":
        args[0] = x.reshape(6)
    elif bad == "layout":
        args[0] = np.ones((3, 2), np.float32).T
    elif bad == "readonly_out":
        out.flags.writeable = False
    elif bad == "not_array":
        args[0] = [[1.0] * 3] * 2
    elif bad == "count":
        args = args[:-1]
    elif bad == "scalar":
        args[2] = "one"
    with pytest.raises(TypeError, match="direct kernel|must be real number|float"):
        k(*args)


def test_entry_point_from_threads() -> None:
    k = _entry()
    x = np.random.default_rng(0).normal(size=(300, 200)).astype(np.float32)
    y = np.ones((1, 200), np.float32)
    outs = [np.empty_like(x) for _ in range(4)]

    def work(i: int) -> None:
        for _ in range(20):
            k(x, y, float(i), i, True, outs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o, (x + y) * np.float32(i) + np.float32(i))


def test_unsupported_source_is_left_to_numba() -> None:
    src = (
        "from functrace.jit.kernels import flat_kernel_jit\n\n"
        "@flat_kernel_jit\ndef kernel(x0):\n    print(x0)\n"
    )
    with pytest.raises(direct.Unsupported):
        direct.translate(src, [direct.ArgSpec("x0", np.dtype(np.float64), 1, True)], "k")


def test_env_switch_is_checked(monkeypatch) -> None:
    monkeypatch.setenv("FUNCTRACE_JIT_KERNELS", "llvm")
    with pytest.raises(ValueError, match="FUNCTRACE_JIT_KERNELS.*'direct' or 'numba'"):
        direct_engine.enabled()


# ---------------------------------------------------------------------------
# Float-to-integer conversions saturate, in both compilers as eagerly
# ---------------------------------------------------------------------------

# The values JAX 0.10.2 (XLA on CPU) gives for these floats converted from float64:
# truncation toward zero, NaN -> 0, out of range -> the nearest limit.
_CAST_IN = [np.nan, np.inf, -np.inf, 1e30, -1e30, 3.7, -3.7, -0.5, 128.0, -129.0, 256.0]
_CAST_IN += [2147483648.0, -2147483649.0, 9.3e18, -9.3e18, 1.9e19, -1.0]
_CAST_JAX = {
    "int8": [0, 127, -128, 127, -128, 3, -3, 0, 127, -128, 127, 127, -128, 127, -128, 127, -1],
    "int16": [0, 32767, -32768, 32767, -32768, 3, -3, 0, 128, -129, 256]
    + [32767, -32768, 32767, -32768, 32767, -1],
    "int32": [0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 3, -3, 0, 128, -129, 256]
    + [2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2**31 - 1, -1],
    "int64": [0, 2**63 - 1, -(2**63), 2**63 - 1, -(2**63), 3, -3, 0, 128, -129, 256]
    + [2147483648, -2147483649, 2**63 - 1, -(2**63), 2**63 - 1, -1],
    "uint8": [0, 255, 0, 255, 0, 3, 0, 0, 128, 0, 255, 255, 0, 255, 0, 255, 0],
    "uint16": [0, 65535, 0, 65535, 0, 3, 0, 0, 128, 0, 256, 65535, 0, 65535, 0, 65535, 0],
    "uint32": [0, 2**32 - 1, 0, 2**32 - 1, 0, 3, 0, 0, 128, 0, 256]
    + [2147483648, 0, 2**32 - 1, 0, 2**32 - 1, 0],
    "uint64": [0, 2**64 - 1, 0, 2**64 - 1, 0, 3, 0, 0, 128, 0, 256]
    + [2147483648, 0, 9300000000000000000, 0, 2**64 - 1, 0],
}


@pytest.mark.parametrize("src", [np.float64, np.complex128])
@pytest.mark.parametrize("dst", list(_CAST_JAX))
def test_float_to_int_conversion_saturates_in_both_compilers(dst, src) -> None:
    x = np.array(_CAST_IN, np.float64).astype(src)
    want = np.array(_CAST_JAX[dst], dtype=dst)

    def fn(v):  # fused with an elementwise op around the conversion
        return lax.convert_element_type(v * 1.0, np.dtype(dst)) + np.array(0, dst)

    assert _same_bits(np.asarray(lax.convert_element_type(x, np.dtype(dst))), want)
    got_n, _ = _run(fn, (x,), "numba")
    got_d, disp = _run(fn, (x,), "direct")
    assert _same_bits(got_n[0], want), got_n[0]
    assert _same_bits(got_d[0], want), got_d[0]
    if src is np.float64 and dst.startswith("int"):  # (unsigned arithmetic: Numba's)
        assert any(_is_direct(d) for d in disp)


def test_float32_to_int_conversion_saturates_in_both_compilers() -> None:
    x = np.array(_CAST_IN, np.float32)
    # float32(2147483648.0) and float32(-2147483649.0) are -+2**31: in range of int64
    want = [0, 2**63 - 1, -(2**63), 2**63 - 1, -(2**63), 3, -3, 0, 128, -129, 256]
    want += [2147483648, -2147483648, 2**63 - 1, -(2**63), 2**63 - 1, -1]
    for backend in ("numba", "direct"):
        (got,), _ = _run(lambda v: fnp.astype(v + 0.0, np.int64), (x,), backend)
        assert _same_bits(got, np.array(want, np.int64)), (backend, got)
        (got,), _ = _run(lambda v: (v * 1.0).astype(np.int32), (x,), backend)
        assert got[11] == 2**31 - 1 and got[12] == -(2**31) and got[0] == 0
