"""The region kernel of ``native.py`` compiled by Numba (``FUNCTRACE_JIT_KERNELS=numba``,
or where the direct compiler is unavailable; ``native_llvm.py`` is the default).

The kernel's module is generated (:func:`kernel_source`) and compiled through the
kernel cache like any fused kernel; its body is :func:`gemm_region`, compiled inline,
and the module's text carries a hash of this file so that a changed body is a new
cache entry.
"""

from __future__ import annotations

import hashlib
import platform
from typing import Any

import numpy as np

from functrace.jit import kernels
from functrace.jit.native_layout import (
    _A,
    _ADDR,
    _B,
    _BOUNDS,
    _C,
    _K,
    _LDA,
    _LDB,
    _M,
    _N,
    _NO_TRANS,
    _ROW_MAJOR,
    _ROWS,
    _SIZE,
    _TA,
    _TB,
    _TRANS,
    _WIDE,
    CTL_SIZE,
    DONE,
    IDX,
    IDX_BITS,
    NEXT,
    PYDONE,
    PYGEN,
    STATE,
    STOP,
    TAKEN,
    YIELD,
)
from functrace.jit.numba_import import import_numba

numba = import_numba()
from llvmlite import ir  # noqa: E402  (Numba's own dependency, imported with it)
from numba import types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic as _intrinsic  # noqa: E402
from numba.extending import register_jitable  # noqa: E402

intrinsic: Any = _intrinsic  # (what it makes is called from compiled code only)

# ---------------------------------------------------------------------------
# Intrinsics: atomics, the pause instruction, a call through a function address
# ---------------------------------------------------------------------------


def _item_pointer(context: Any, builder: Any, arrty: Any, arr: Any, idx: Any) -> Any:
    a = context.make_array(arrty)(context, builder, arr)
    return cgutils.get_item_pointer(context, builder, arrty, a, [idx])


@intrinsic
def atomic_add(typingctx: Any, arr: Any, idx: Any, val: Any) -> Any:
    """``arr[idx] += val`` atomically (sequentially consistent); the old value."""
    sig = types.int64(arr, idx, val)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

    return sig, codegen


@intrinsic
def atomic_load(typingctx: Any, arr: Any, idx: Any) -> Any:
    """``arr[idx]`` read with acquire ordering."""
    sig = types.int64(arr, idx)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", 8)

    return sig, codegen


@intrinsic
def atomic_store(typingctx: Any, arr: Any, idx: Any, val: Any) -> Any:
    """``arr[idx] = val`` with release ordering (what was written before is seen
    by a thread that reads this value with :func:`atomic_load`)."""
    sig = types.void(arr, idx, val)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
        builder.store_atomic(args[2], ptr, "release", 8)
        return context.get_dummy_value()

    return sig, codegen


_PAUSE = {"x86_64": "llvm.x86.sse2.pause", "amd64": "llvm.x86.sse2.pause"}.get(
    platform.machine().lower()
)


@intrinsic
def cpu_pause(typingctx: Any) -> Any:
    """The CPU's spin-wait hint (``pause`` on x86-64; nothing elsewhere)."""
    sig = types.void()

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        if _PAUSE is not None:
            fnty = ir.FunctionType(ir.VoidType(), [])
            builder.call(cgutils.get_or_insert_function(builder.module, fnty, _PAUSE), [])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def call_address(typingctx: Any, addr: Any, *args: Any) -> Any:
    """Call the C function at address ``addr`` (an int64) with ``args``, its
    parameters typed as the arguments are (pointers passed as int64), returning void."""
    (args,) = args if len(args) == 1 and isinstance(args[0], types.BaseTuple) else (args,)
    sig = types.void(addr, types.StarArgTuple(args))

    def codegen(context: Any, builder: Any, sig: Any, llargs: Any) -> Any:
        params = list(sig.args[1])
        values = cgutils.unpack_tuple(builder, llargs[1], len(params))
        fnty = ir.FunctionType(ir.VoidType(), [context.get_value_type(t) for t in params])
        builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), values)
        return context.get_dummy_value()

    return sig, codegen


# ---------------------------------------------------------------------------
# The region's code (compiled inline into the generated kernel)
# ---------------------------------------------------------------------------


@register_jitable
def _gemm(job: Any, lo: int, hi: int) -> None:
    """Block ``lo:hi`` (rows of ``op(a)`` and ``c``, or columns of ``op(b)`` and
    ``c``) of the job's product, one ``gemm`` call."""
    size, m, n, k, ldc = job[_SIZE], job[_M], job[_N], job[_K], job[_N]
    pa, lda, pb, ldb, pc = job[_A], job[_LDA], job[_B], job[_LDB], job[_C]
    ta, tb = job[_TA], job[_TB]
    if job[_ROWS]:
        pa += lo * size * (1 if ta else lda)
        pc += lo * n * size
        m = hi - lo
    else:
        pb += lo * size * (ldb if tb else 1)
        pc += lo * size
        n = hi - lo
    opa = np.int32(_TRANS if ta else _NO_TRANS)
    opb = np.int32(_TRANS if tb else _NO_TRANS)
    addr, wide = job[_ADDR], job[_WIDE]
    if size == 4:
        one, zero = np.float32(1.0), np.float32(0.0)
        _call(addr, wide, opa, opb, m, n, k, one, pa, lda, pb, ldb, zero, pc, ldc)
    else:
        one64, zero64 = np.float64(1.0), np.float64(0.0)
        _call(addr, wide, opa, opb, m, n, k, one64, pa, lda, pb, ldb, zero64, pc, ldc)


@register_jitable
def _call(addr, wide, opa, opb, m, n, k, one, pa, lda, pb, ldb, zero, pc, ldc):  # type: ignore[no-untyped-def]
    """``cblas_?gemm`` (row-major) at ``addr``, its integers 64-bit when ``wide``."""
    order = np.int32(_ROW_MAJOR)
    if wide:
        call_address(addr, order, opa, opb, m, n, k, one, pa, lda, pb, ldb, zero, pc, ldc)
    else:
        i = np.int32
        call_address(addr, order, opa, opb, i(m), i(n), i(k), one, pa, i(lda), pb, i(ldb),
                     zero, pc, i(ldc))  # fmt: skip


@register_jitable
def _take(ctl: Any) -> int:
    """Take blocks of the published region until none is left; how many. A claim is
    one atomic add to ``NEXT``, which holds the region's block count beside the next
    block's index: a late claim (the region done, the next one being written) sees an
    index past the count and reads nothing else."""
    taken = 0
    while True:
        v = atomic_add(ctl, NEXT, 1)
        i, nb = v & IDX, (v >> IDX_BITS) & IDX
        if i >= nb:
            return taken
        _gemm(ctl, ctl[_BOUNDS + i], ctl[_BOUNDS + i + 1])
        atomic_add(ctl, DONE, 1)
        taken += 1


@register_jitable
def _open(ctl: Any) -> bool:
    v = atomic_load(ctl, NEXT)
    return (v & IDX) < ((v >> IDX_BITS) & IDX)


@register_jitable
def _relax(ctl: Any) -> None:
    """One round of a wait: give the core to another thread that wants it (the
    caller's driver, a worker holding a block), else pause."""
    y = ctl[YIELD]
    if y != 0:
        call_address(y)
    else:
        cpu_pause()


@register_jitable
def _worker(ctl: Any, spins: int, seen_py: int) -> int:
    """Wait, taking the blocks of each product region published, until ``spins``
    rounds pass without one (returns 0: go to sleep), a region of Python chunks after
    number ``seen_py`` is published (2: take its chunks in Python) or the stop flag is
    set (1). ``STATE`` counts the workers waiting here."""
    atomic_add(ctl, STATE, 1)
    idle = 0
    while True:
        if _open(ctl):
            atomic_add(ctl, TAKEN, _take(ctl))
            idle = 0
        elif atomic_load(ctl, PYGEN) != seen_py:
            atomic_add(ctl, STATE, -1)
            return 2
        elif atomic_load(ctl, STOP) != 0:
            atomic_add(ctl, STATE, -1)
            return 1
        elif idle >= spins:
            atomic_add(ctl, STATE, -1)
            if not _open(ctl):  # else a region came meanwhile: take it
                return 0
            atomic_add(ctl, STATE, 1)
        else:
            idle += 1
            _relax(ctl)


@register_jitable
def gemm_region(ctl, a, b, c, ta, tb, by_rows, bounds, addr, wide, role, spins):  # type: ignore[no-untyped-def]
    """``c = op(a) @ op(b)`` in the blocks ``bounds`` (role 1: published to the
    workers and taken in turn with them; role 2: all here, in order, ``ctl``
    untouched), a worker's loop (role 0, ``addr`` the last region of Python chunks it
    saw; the arrays are not read; its exit code, see :func:`_worker`, is returned and
    written to ``bounds[0]``, as the LLVM kernel writes it), or the wait for the region
    of Python chunks number ``spins`` to finish (role 3). Returns 0 but for role 0."""
    if role == 0:
        code = _worker(ctl, spins, addr)
        bounds[0] = code
        return code
    if role == 3:
        while atomic_load(ctl, PYDONE) != spins:
            _relax(ctl)
        return 0
    job = ctl if role == 1 else np.empty(CTL_SIZE, np.int64)
    nb = len(bounds) - 1
    job[_ADDR], job[_WIDE], job[_SIZE], job[_ROWS] = addr, wide, c.itemsize, by_rows
    job[_M], job[_N] = c.shape[0], c.shape[1]
    job[_K] = a.shape[0] if ta else a.shape[1]
    job[_A], job[_LDA] = a.ctypes.data, max(1, a.shape[1])
    job[_B], job[_LDB] = b.ctypes.data, max(1, b.shape[1])
    job[_C], job[_TA], job[_TB] = c.ctypes.data, ta, tb
    for i in range(nb + 1):
        job[_BOUNDS + i] = bounds[i]
    if role == 2:
        for i in range(nb):
            _gemm(job, bounds[i], bounds[i + 1])
        return 0
    atomic_store(ctl, DONE, 0)
    atomic_store(ctl, NEXT, nb << IDX_BITS)  # publishes the fields above
    _take(ctl)
    while atomic_load(ctl, DONE) < nb:
        _relax(ctl)
    return 0


# ---------------------------------------------------------------------------
# The kernel module, and the worker thread
# ---------------------------------------------------------------------------

try:
    with open(__file__, "rb") as _f:
        BODY_HASH = hashlib.sha256(_f.read()).hexdigest()[:16]
except OSError:  # (not a file: the cache key's functrace version still tells bodies apart)
    BODY_HASH = "no-source"
"""A hash of this file: the generated module names it, so a changed body (compiled
inline, not part of the module's text) is a new entry of the kernel cache."""

_PARAMS = ["ctl", "a", "b", "c", "ta", "tb", "by_rows", "bounds", "addr", "wide", "role", "spins"]


def kernel_source(dtype: np.dtype) -> str:
    """The generated module of the region kernel for ``dtype`` (float32 or float64)."""
    short = dtype.name
    sig = f"ctl=int64[1d C], a,b={short}[2d C ro], c={short}[2d C], bounds=int64[1d C], int64s"
    lines = kernels.kernel_header(_PARAMS, sig, "# functrace parallel product region")
    at = lines.index("@kernel_jit")
    lines[at:at] = [
        f"from functrace.jit.native_numba import gemm_region  # body {BODY_HASH}",
        "",
        "",
    ]
    lines.append(f"    return gemm_region({', '.join(_PARAMS)})")
    return "\n".join(lines) + "\n"


def _signature(dtype: np.dtype) -> tuple[Any, ...]:
    from numba.np.numpy_support import from_dtype

    t = from_dtype(dtype)
    vec = types.Array(types.int64, 1, "C")
    ro, rw = types.Array(t, 2, "C", readonly=True), types.Array(t, 2, "C")
    return (vec, ro, ro, rw, *[types.int64] * 3, vec, *[types.int64] * 4)


def region_kernel(dtype: np.dtype) -> Any:
    """The compiled region kernel for ``dtype`` (from memory, the disk cache or Numba,
    through the kernel cache and its load mode: see ``kernels.load_source``)."""
    return kernels.load_source(kernel_source(dtype), lambda: _signature(dtype)).entry


__all__ = ["BODY_HASH", "gemm_region", "kernel_source", "region_kernel"]
