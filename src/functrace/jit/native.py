"""functrace's worker threads, and parallel regions of products that never take the GIL.

A parallel product (``parallel.ParallelDot``) is one call of a compiled kernel. The
kernel writes the product's blocks (one ``gemm`` call each) to a shared control array,
publishes them, computes blocks itself and waits for the blocks others took; a worker
thread, waiting in the same kernel's compiled code, takes blocks from the same atomic
counter. Neither side runs Python between the region's start and its end, so a region
costs a few microseconds instead of a condition variable's wake-up and two GIL hand-offs
(which made regions under ~0.4 ms of work cost more than they saved). A region of
Python chunks (``Worker.run_chunks``: a fused kernel on slices of rows) is published as
a generation number the waiting workers see: they return to Python to take chunks, and
the caller waits for the last one in compiled code.

* **Blocks, not threads, are the unit**: the caller and the worker take blocks in turn
  from one counter, so a worker that another process keeps off its core holds up at most
  the block it took, and the caller takes the rest; a region whose worker sleeps is run
  by its caller alone. The same blocks are computed on the serial path (``role`` 2), so
  results do not depend on which thread computed what.
* **Waiting**: a worker waits for the next region about a millisecond after its last
  block, then returns to Python and blocks on a condition variable; the next region's
  caller sees it asleep and wakes it (that region may run without it). A process that
  runs nothing in parallel has no worker thread. Each round of a wait (the worker's, and the
  caller's for the blocks others took) calls ``sched_yield``: a waiting thread gives
  its core to any other thread that wants it, so on a machine where another process
  holds a core, the waiting worker does not take time from its own driver (a
  width-256 MLP step with one core busy: 2.89 ms against 2.88 ms on one thread, medians;
  with the pause instruction instead, 3.13 against 2.72 ms, single runs up to 1.5x; on a
  quiet machine both about 0.7x the one-thread time).
* **Control array** (``int64``, one cache line per counter): the next block to take
  beside the region's block count (one word: a claim is one atomic add, and a late
  claim sees the count it must stay under in the same word), blocks done, the number of
  workers waiting, a stop flag, blocks the workers took, ``sched_yield``'s address, the
  numbers of the last region of Python chunks published and finished, then the
  product's fields.

The kernel's module is generated (``kernel_source``) and compiled through the kernel
cache like any fused kernel; its body is :func:`gemm_region`, compiled inline, and the
module's text carries a hash of this file so that a changed body is a new cache entry.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import platform
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace.jit import kernels
from functrace.jit.numba_import import import_numba

numba = import_numba()
from llvmlite import ir  # noqa: E402  (Numba's own dependency, imported with it)
from numba import types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic as _intrinsic  # noqa: E402
from numba.extending import register_jitable  # noqa: E402

intrinsic: Any = _intrinsic  # (what it makes is called from compiled code only)

NEXT, DONE, STATE, STOP, TAKEN, YIELD, PYGEN, PYDONE, JOB = range(0, 72, 8)
"""Offsets in the control array: a cache line (8 words) per counter (``TAKEN``: blocks
the workers computed, for tests and diagnostics; ``YIELD``: the address of the C
library's ``sched_yield``, 0 where there is none; ``PYGEN``/``PYDONE``: the last
region of Python chunks published, and the last one finished), then the job."""
_IDX_BITS = 16
_IDX = (1 << _IDX_BITS) - 1  # NEXT: the block count, then the next block's index
MAX_BLOCKS = 64
SPINS = {True: 4000, False: 20000}
"""Rounds a worker waits for a region after its last block before it sleeps: about 1
ms of ``sched_yield`` calls (True) or of pause instructions (False) here."""
# Job fields, after JOB: the gemm function, whether it takes 64-bit integers, the item
# size, split by rows, m, n, k, a, lda, b, ldb, c, a transposed, b transposed, then the
# block bounds.
(_ADDR, _WIDE, _SIZE, _ROWS, _M, _N, _K, _A, _LDA, _B, _LDB, _C, _TA, _TB, _BOUNDS) = range(
    JOB, JOB + 15
)
CTL_SIZE = _BOUNDS + MAX_BLOCKS + 1
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # CBLAS's enum values


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
        i, nb = v & _IDX, (v >> _IDX_BITS) & _IDX
        if i >= nb:
            return taken
        _gemm(ctl, ctl[_BOUNDS + i], ctl[_BOUNDS + i + 1])
        atomic_add(ctl, DONE, 1)
        taken += 1


@register_jitable
def _open(ctl: Any) -> bool:
    v = atomic_load(ctl, NEXT)
    return (v & _IDX) < ((v >> _IDX_BITS) & _IDX)


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
    saw; the arrays are not read; returns its exit code, see :func:`_worker`), or the
    wait for the region of Python chunks number ``spins`` to finish (role 3). Returns
    0 but for role 0."""
    if role == 0:
        return _worker(ctl, spins, addr)
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
    atomic_store(ctl, NEXT, nb << _IDX_BITS)  # publishes the fields above
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
    lines[at:at] = [f"from functrace.jit.native import gemm_region  # body {BODY_HASH}", "", ""]
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


def _sched_yield() -> int:
    """The address of the C library's ``sched_yield`` (0 where there is none: the
    waits then use the pause instruction)."""
    try:
        fn = ctypes.CDLL(None).sched_yield
    except (OSError, AttributeError, TypeError):  # (TypeError: no CDLL(None) on Windows)
        return 0
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


class _Region:
    """A region of Python chunks: ``fn(i)`` for ``i`` in ``range(n)``, taken in turn
    by the threads that call :meth:`work`; the last chunk to finish marks region
    ``gen`` done in the control array (``left`` is 0 from then on)."""

    __slots__ = ("ctl", "error", "fn", "gen", "left", "lock", "n", "next")

    def __init__(self, fn: Callable[[int], object], n: int, ctl: Any, gen: int) -> None:
        self.fn, self.n, self.next, self.left = fn, n, 0, n
        self.ctl, self.gen = ctl, gen
        self.lock = threading.Lock()
        self.error: BaseException | None = None

    def work(self) -> None:
        lock = self.lock
        while True:
            with lock:
                i = self.next
                if i >= self.n:
                    return
                self.next = i + 1
            try:
                self.fn(i)
            except BaseException as err:  # reported by the caller
                self.error = err
            with lock:
                self.left -= 1
                last = self.left == 0
            if last:
                self.ctl[PYDONE] = self.gen


class Worker:
    """The worker threads (``threads - 1``, started when a region first runs in
    parallel) and their control array. They wait in the control kernel (float32's
    region kernel, role 0), which computes the blocks of products of either dtype
    and returns to Python for regions of Python chunks."""

    def __init__(self, threads: int) -> None:
        self.ctl = np.zeros(CTL_SIZE, np.int64)
        self.ctl[YIELD] = _sched_yield()
        self.spins = SPINS[bool(self.ctl[YIELD])]
        self.n = max(0, threads - 1)
        self.cond = threading.Condition()
        self.wakes = 0
        self.threads: list[threading.Thread] = []
        self.busy = threading.Lock()  # one region at a time; others run serially
        self.region: _Region | None = None  # the region of Python chunks running
        self.kernel: Any = None  # control_kernel(), loaded when first needed
        self.dummy, self.bounds = np.zeros((1, 1), np.float32), np.zeros(2, np.int64)

    def run(self, kernel: Any, a: Any, b: Any, c: Any, ta: int, tb: int, by_rows: int,
            bounds: Any, addr: int, wide: int, parallel: bool) -> bool:  # fmt: skip
        """``c = op(a) @ op(b)`` in ``bounds``; with the workers when ``parallel`` and
        no other thread's region holds them. Whether the workers were asked to help."""
        if parallel and self._enter():
            try:
                kernel(self.ctl, a, b, c, ta, tb, by_rows, bounds, addr, wide, 1, 0)
            finally:
                self.busy.release()
            return True
        kernel(self.ctl, a, b, c, ta, tb, by_rows, bounds, addr, wide, 2, 0)
        return False

    def run_chunks(self, fn: Callable[[int], object], n: int) -> bool:
        """``fn(0..n-1)`` taken in turn by this thread and the workers (each chunk
        should drop the GIL: a compiled kernel on a slice); False (nothing run) when
        another thread's region holds the workers."""
        if not self._enter():
            return False
        try:
            gen = int(self.ctl[PYGEN]) + 1
            region = self.region = _Region(fn, n, self.ctl, gen)
            self.ctl[PYGEN] = gen  # the waiting workers return to Python for it
            region.work()
            if region.left:  # wait for chunks in other threads, GIL-free
                d, bounds = self.dummy, self.bounds
                self._control()(self.ctl, d, d, d, 0, 0, 0, bounds, 0, 0, 3, gen)
        finally:
            self.region = None
            self.busy.release()
        if region.error is not None:
            raise region.error
        return True

    def _enter(self) -> bool:
        """Hold the workers for a region (False: none, or another thread's region
        holds them); wake those asleep (they may come late: the region runs without
        them meanwhile)."""
        if not self.n or not self.busy.acquire(blocking=False):
            return False
        if self.ctl[STATE] < self.n:
            self._wake()
        return True

    def _control(self) -> Any:
        if self.kernel is None:
            self.kernel = control_kernel()
        return self.kernel

    def _wake(self) -> None:
        with self.cond:
            if not self.threads:
                kernel = self._control()
                for k in range(self.n):
                    t = threading.Thread(
                        target=self._loop, args=(kernel,), name=f"functrace-worker-{k + 1}",
                        daemon=True,
                    )  # fmt: skip
                    t.start()
                    self.threads.append(t)
            self.wakes += 1
            self.cond.notify_all()

    def _loop(self, kernel: Any) -> None:
        d, bounds, ctl = self.dummy, self.bounds, self.ctl
        seen = 0
        while True:
            with self.cond:
                while self.wakes == seen:
                    self.cond.wait()  # passive: blocks in the kernel until woken
                seen = self.wakes
            while True:
                gen = int(ctl[PYGEN])  # before the region is read: a later one returns 2
                region = self.region
                if region is not None:
                    region.work()
                code = kernel(ctl, d, d, d, 0, 0, 0, bounds, gen, 0, 0, self.spins)
                if code == 1:
                    return
                if code == 0:
                    break  # asleep until the next wake

    def stop(self) -> None:
        """End the worker threads (they finish the block they are in)."""
        self.ctl[STOP] = 1
        with self.cond:
            self.wakes += 1
            self.cond.notify_all()


def control_kernel() -> Any:
    """The region kernel the workers wait in (float32's): a factory of call sites
    that may run in parallel loads it while lowering, so that it compiles with the
    program (and in the background of a tiered compile)."""
    return region_kernel(np.dtype(np.float32))


_worker_lock = threading.Lock()
_workers: Worker | None = None


def workers(threads: int) -> Worker:
    """The process's workers (made on first use, for ``threads`` threads in all)."""
    global _workers
    made = _workers
    if made is not None:  # (every region asks: no lock once they exist)
        return made
    with _worker_lock:
        if _workers is None:
            _workers = Worker(threads)
            atexit.register(_workers.stop)
        return _workers


def after_fork() -> None:
    """In a forked child: no workers (the parent's threads do not exist here)."""
    global _workers, _worker_lock
    _workers, _worker_lock = None, threading.Lock()


__all__ = [
    "BODY_HASH",
    "Worker",
    "after_fork",
    "control_kernel",
    "gemm_region",
    "region_kernel",
    "workers",
]
