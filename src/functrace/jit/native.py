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

The region kernel (:func:`region_kernel`) is LLVM IR of functrace's own, compiled in
milliseconds by the direct compiler's engine (``native_llvm.py``), so a program whose
products split costs no Numba compile and no Numba import. With
``FUNCTRACE_JIT_KERNELS=numba``, or where the direct compiler is unavailable, the same
region is compiled by Numba (``native_numba.py``, through the kernel cache). Both
implement one protocol, on the control array of ``native_layout.py``; the tests run both.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace.jit.native_layout import (
    CTL_SIZE,
    MAX_BLOCKS,
    PYDONE,
    PYGEN,
    SPINS,
    STATE,
    STOP,
    YIELD,
)


def region_kernel(dtype: np.dtype) -> Any:
    """The compiled region kernel for ``dtype`` (float32 or float64), called as
    ``kernel(ctl, a, b, c, ta, tb, by_rows, bounds, addr, wide, role, spins)``: ``c =
    op(a) @ op(b)`` in the blocks ``bounds`` (role 1: published to the workers and taken
    in turn with them; role 2: all here, in order, ``ctl`` untouched), a worker's wait
    (role 0, ``addr`` the last region of Python chunks it saw; its exit code, see
    ``_worker``, is written to ``bounds[0]``), or the wait for the region of Python
    chunks number ``spins`` to finish (role 3)."""
    from functrace.jit import direct_engine

    if direct_engine.enabled():
        from functrace.jit import native_llvm

        return native_llvm.region_kernel(dtype)
    from functrace.jit import native_numba

    return native_numba.region_kernel(dtype)


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
        d, ctl = self.dummy, self.ctl
        code = np.zeros(2, np.int64)  # this thread's: the kernel writes its exit code here
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
                kernel(ctl, d, d, d, 0, 0, 0, code, gen, 0, 0, self.spins)
                if code[0] == 1:
                    return
                if code[0] == 0:
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
    "CTL_SIZE",
    "MAX_BLOCKS",
    "Worker",
    "after_fork",
    "control_kernel",
    "region_kernel",
    "workers",
]
