"""Compiled code on the cores the process may use, without stalls on busy machines.

* **Thread count** (:func:`num_threads`): the cores this process may run on
  (``os.sched_getaffinity``, else ``os.cpu_count()``), as NumPy's BLAS and JAX use;
  ``FUNCTRACE_NUM_THREADS`` overrides. Read once, when compiled code first needs it.
  No environment variable of the process is changed (Numba's own thread pool is not
  used at all: no kernel is compiled with ``parallel=True``).
* **Workers**: ``num_threads() - 1`` threads (``native.py``). A parallel region is a
  list of chunks; the calling thread and the workers take chunks in turn from a shared
  counter, so a worker that another process keeps off its core holds up at most the
  chunk it is in, and the caller takes the rest. A region started while another Python
  thread runs one is run serially by its caller. A product's chunks (a single-threaded
  BLAS ``gemm`` per block) are taken in compiled code that never takes the GIL: a
  region is one call, a few microseconds. A fused kernel's chunks (the compiled kernel
  on a slice of rows) are taken in Python, each dropping the GIL while it runs. Idle
  workers wait about a millisecond (yielding their core to any thread that wants it),
  then block.
* **Serial fallback**: regions below a size threshold are serial; above it each call
  site (one product or one fused kernel of a driver) times serial and parallel runs
  now and then and keeps the faster (``mode``: ``"auto"``; ``"always"`` and
  ``"never"`` force one path, for tests and benchmarks, from
  ``FUNCTRACE_PARALLEL``).
* **BLAS**: functrace never sets the process's BLAS thread count for good. Products
  large enough for OpenBLAS to use its own threads run with OpenBLAS set to one thread
  for their duration (:func:`blas_one_thread`), the user's count restored after; the
  threads are functrace's workers. A user who set ``OPENBLAS_NUM_THREADS`` (or another
  of ``kernels.BLAS_THREAD_VARS``) to more than one keeps OpenBLAS's threads for
  compiled products too.
* **Which BLAS**: products call ``cblas_?gemm`` of NumPy's OpenBLAS, or of a private
  copy of it with wider kernels where NumPy's runs narrower ones than the processor
  has (``blas.py``); with such a copy, a product too small to split is still one call
  of the copy's ``gemm`` (a :class:`ParallelDot` of one block), not ``np.dot``.

Results do not depend on the path, so not on the machine's load: a split kernel
computes every element with the same operations as the serial one, and a product that
may split is computed in the same blocks on either path (blocks of 16 or more rows or
columns, so never a matrix-vector call), one ``gemm`` call each, with the workers or in
turn on the calling thread. (Not as one whole ``np.dot`` on the serial path: OpenBLAS's
float32 kernels round a block differently from the whole product on some processors,
an AMD Zen 2 among them.) The tests compare both paths bit for bit.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from functrace.jit import blas, direct_engine, kernels

MIN_KERNEL_SIZE = 1 << 18
"""Elements of a fused kernel's output from which its rows may be split across threads.
Measured: ``sin(x) * 2 + exp(y)`` on 2^18 float32 elements, 2.28 ms serial, 1.30 ms
split (1.8x; 2^20 and 2^22: 1.9x). Memory-bound kernels gain nothing on the 2-core
machine measured (an MLP step's Adam update on 401408 parameters: 0.51-0.56 ms
serial, 0.50-0.68 ms split), and each call site keeps the faster path (``_Chooser``):
the MLP steps of the benchmark took the same time with thresholds 2^16 to 2^20,
interleaved in one process."""
MIN_DOT_FMAS = 1 << 20
"""Multiply-adds of a matrix product from which it may be split across threads (about
15 us on one core of the 2-core machine measured; each call site then keeps the faster
path, see ``_Chooser``). Measured on MLP steps at the default thread count, one
process, the thresholds 2^20 to 2^22 interleaved (medians of 9 rounds): 784-64-10 batch
32, whose two products of 1.6M multiply-adds split only from 2^20, 120 us against 154
us at 2^22; 784-256-256-10 batch 32, 0.71 ms against 0.77 ms; batch 128 and
784-512-512-10 batch 128 the same within 2%. (On an earlier machine of the same class,
a loaded AMD one, splitting the small step's products lost 2-5%.)"""
GEMM_THREADED_FMAS = 1 << 18
"""Multiply-adds from which OpenBLAS runs a matrix-matrix product on its threads (its
``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``): larger products run inside
:func:`blas_one_thread`."""
BLAS_THREADED_FMAS = 1 << 13
"""The same for matrix-vector and vector products (OpenBLAS threads ``gemv`` from
9216 elements, ``dot`` from 10000)."""
CHUNKS_PER_THREAD = 4
"""Chunks per thread of a split kernel (more chunks: less work behind a thread that is
kept off its core, more calls)."""
DOT_CHUNKS_PER_THREAD = 1
"""The same for products, where each extra block also re-packs one operand (the one
not split: OpenBLAS copies it into its panel layout once per call) and runs a smaller
``gemm``. Blocks are claimed, not assigned: a worker that has not started leaves its
block to the caller. Measured: one block per thread against two, the products of the
benchmark's MLP steps alone, 3-17% faster (1024x784x256, 1.42 against 1.46 ms;
784x1024x256 transposed, 1.46 against 1.60 ms); the whole steps (medians of 7
interleaved rounds) 5-6% faster on a quiet machine (784-256-256-10 batch 1024, 5.77
against 6.11 ms; 784-512-512-10 batch 128, 2.78 against 2.94 ms) and 1-7% faster with
one core kept busy by another process."""
PROBE_EVERY = 16
"""In mode "auto", a call site times the path it is not using every this many calls at
first (then less often while that path keeps losing, see ``_Chooser``)."""
PROBE_MAX = 256
"""The longest interval between two such probes."""

_MODES = ("auto", "always", "never")


def _read_mode() -> str:
    value = os.environ.get("FUNCTRACE_PARALLEL", "auto").strip().lower() or "auto"
    if value not in _MODES:
        warnings.warn(
            f"functrace.jit: expected FUNCTRACE_PARALLEL to be one of {', '.join(_MODES)}, "
            f"got {value!r}; using 'auto'",
            RuntimeWarning,
            stacklevel=2,
        )
        return "auto"
    return value


mode = _read_mode()
"""How parallel regions choose their path: "auto" (serial below the size thresholds;
above them each call site keeps the faster of serial and parallel, re-timing the
other now and then), "always" (parallel whenever there are two chunks or more) or
"never" (always serial). From ``FUNCTRACE_PARALLEL``; may be set at run time."""


def _available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@functools.lru_cache(maxsize=1)
def num_threads() -> int:
    """The number of threads functrace's compiled code uses: ``FUNCTRACE_NUM_THREADS``
    when set to a whole number >= 1, else the cores this process may run on
    (``len(os.sched_getaffinity(0))``, or ``os.cpu_count()`` where affinity is not
    available), as NumPy's BLAS and JAX do. Read once, when first needed; a bad value
    of the variable warns and the core count is used."""
    cores = _available_cores()
    raw = os.environ.get("FUNCTRACE_NUM_THREADS")
    if raw is None or not raw.strip():
        return cores
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value < 1:
        warnings.warn(
            f"functrace.jit: expected FUNCTRACE_NUM_THREADS to be a whole number >= 1, "
            f"got {raw!r}; using {cores} (the cores this process may use)",
            RuntimeWarning,
            stacklevel=2,
        )
        return cores
    return value


def threads() -> int:
    """Alias of :func:`num_threads` (the name older code used)."""
    return num_threads()


def enabled() -> bool:
    """Whether drivers get call sites that may split work across threads
    (``num_threads() > 1``; ``mode`` then chooses at each call)."""
    return num_threads() > 1


# ---------------------------------------------------------------------------
# Regions of chunks
# ---------------------------------------------------------------------------


def run_chunks(fn: Callable[[int], object], n: int) -> bool:
    """Call ``fn(i)`` for ``i`` in ``range(n)`` on this thread and the workers
    (``native.Worker.run_chunks``); whether it ran in parallel (False: the workers were
    busy with another thread's region or there is one thread, and every chunk ran here,
    in order)."""
    if n > 1 and num_threads() > 1 and _native().workers(num_threads()).run_chunks(fn, n):
        return True
    for i in range(n):
        fn(i)
    return False


def _after_fork_in_child() -> None:
    # The child has only the forking thread: fresh workers (made when needed) and BLAS
    # scope (restoring the count a region in another thread of the parent had set).
    _blas.after_fork()
    if "functrace.jit.native" in sys.modules:
        _native().after_fork()


# ---------------------------------------------------------------------------
# Choosing serial or parallel per call site
# ---------------------------------------------------------------------------


class _Chooser:
    """Per call site: which path the next call takes, and the timings behind it.

    After a warm-up (three timed calls each way, alternating) the site takes the path
    whose fastest of its last three timings is lower (noise only adds time: a slow
    outlier, such as the pool's first start, must not decide for hundreds of calls
    between probes; a core kept busy slows all three), and times the other path once
    every ``probe`` calls: ``PROBE_EVERY`` at first, doubled (up to ``PROBE_MAX``)
    each time the probe confirms the choice, back to ``PROBE_EVERY`` when it flips.
    One call in four of the chosen path is timed too, so a change of load is seen."""

    __slots__ = ("calls", "faster", "parallel_calls", "probe", "samples", "serial_calls")

    def __init__(self) -> None:
        self.calls = 0
        self.samples: tuple[list[float], list[float]] = ([], [])  # serial, parallel
        self.serial_calls = self.parallel_calls = 0
        self.probe = PROBE_EVERY
        self.faster: bool | None = None

    def choose(self) -> tuple[bool, bool]:
        """``(parallel, timed)`` for the next call."""
        if mode != "auto":
            return mode == "always", False
        self.calls = c = self.calls + 1
        ser, par = self.samples
        if len(ser) < 3 or len(par) < 3:  # warm-up: alternate, starting serial
            return c % 2 == 0, True
        faster = min(par) < min(ser)
        if faster != self.faster:
            self.faster, self.probe = faster, PROBE_EVERY
        if c % self.probe == 0:
            self.probe = min(2 * self.probe, PROBE_MAX)  # reset above if it flips
            return not faster, True
        return faster, c % 4 == 0

    def record(self, parallel: bool, seconds: float) -> None:
        s = self.samples[parallel]
        s.append(seconds)
        if len(s) > 3:
            del s[0]

    def count(self, parallel: bool) -> None:
        if parallel:
            self.parallel_calls += 1
        else:
            self.serial_calls += 1
        _counts[parallel] += 1


_counts = [0, 0]  # calls of split-able call sites that ran serially, in parallel


def call_counts() -> dict[str, int]:
    """How many calls of call sites that may split (large products and fused kernels)
    ran serially and in parallel so far in this process (approximate under concurrent
    calls; for tests and diagnostics)."""
    return {"serial": _counts[0], "parallel": _counts[1]}


def _chunk_bounds(size: int, chunks: int, align: int) -> list[int]:
    """At most ``chunks + 1`` strictly increasing bounds from 0 to ``size``, the inner
    ones multiples of ``align``, every chunk at least ``align`` long (a short tail
    joins the chunk before it: a product block is never a matrix-vector product)."""
    step = -(-size // max(1, chunks))
    step = -(-step // align) * align
    bounds = list(range(0, size, step)) + [size]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] < align:
        del bounds[-2]
    return bounds


def _n_chunks(work: int, size: int, min_work: int, align: int, per_thread: int) -> int:
    """How many chunks a region of ``size`` rows and ``work`` total cost is cut into:
    up to ``per_thread`` per thread, each at least ``min_work`` and ``align`` rows (1:
    not worth splitting)."""
    t = num_threads()
    if t < 2 or size < 2 * align:
        return 1
    return max(1, min(t * per_thread, work // max(1, min_work), size // align))


# ---------------------------------------------------------------------------
# Fused kernels: rows on several threads
# ---------------------------------------------------------------------------


def kernel_in_parallel(spec: kernels.KernelSpec, sizes: tuple[int, ...]) -> bool:
    """Whether a fused kernel of these (collapsed) sizes may split its outer loop
    across threads: there are threads, it is large, and it only stores elementwise
    results (reductions accumulate across the outer loop)."""
    return (
        not spec.reductions
        and not spec.explicit_sizes
        and sizes[0] > 1
        and math.prod(sizes) >= MIN_KERNEL_SIZE
        and enabled()
    )


class SplitKernel:
    """A fused kernel's entry called on row blocks: every array argument that is full
    along the outer (collapsed) axis is sliced to the block's rows, the others (that
    axis of size 1, broadcast) and scalars are passed whole. Row slices of C-contiguous
    arrays are C-contiguous, so the serial kernel runs unchanged on each block."""

    def __init__(self, entry: Any, split: list[bool], sizes: tuple[int, ...]) -> None:
        self.entry = entry
        self.split = [i for i, s in enumerate(split) if s]
        rows, per_row = sizes[0], math.prod(sizes[1:])
        n = _n_chunks(rows * per_row, rows, max(MIN_KERNEL_SIZE // 4, 1), 1, CHUNKS_PER_THREAD)
        self.bounds = _chunk_bounds(rows, n, 1)
        self.site = _Chooser()

    def __call__(self, *args: Any) -> None:
        parallel, timed = self.site.choose()
        if len(self.bounds) <= 2:
            parallel = False
        t0 = time.perf_counter() if timed else 0.0
        if parallel:
            bounds, entry, split = self.bounds, self.entry, self.split

            def chunk(i: int) -> None:
                lo, hi = bounds[i], bounds[i + 1]
                part = list(args)
                for j in split:
                    part[j] = args[j][lo:hi]
                entry(*part)

            parallel = run_chunks(chunk, len(bounds) - 1)
        else:
            self.entry(*args)
        if timed:
            self.site.record(parallel, time.perf_counter() - t0)
        self.site.count(parallel)

    def __repr__(self) -> str:
        return f"<functrace fused kernel in {len(self.bounds) - 1} row blocks>"


def split_kernel(
    entry: Any, arrays_full: list[bool], n_scalars: int, n_outputs: int, sizes: tuple[int, ...]
) -> SplitKernel:
    """The driver's callee for a kernel that :func:`kernel_in_parallel` accepted:
    ``arrays_full[j]`` says whether input ``j`` is full along the outer axis (outputs
    always are; scalars never)."""
    split = [*arrays_full, *([False] * n_scalars), *([True] * n_outputs)]
    _native().control_kernel()  # the workers' kernel, compiled with the program
    return SplitKernel(entry, split, sizes)


# ---------------------------------------------------------------------------
# BLAS: one thread for the duration of functrace's products
# ---------------------------------------------------------------------------


class _BlasScope:
    """OpenBLAS set to one thread while any functrace product runs, the previous count
    restored when the last one ends (counted across Python threads, under a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = 1
        self.fns: tuple[Any, Any] | None = None
        self.looked = False
        self.user_set = False

    def _lookup(self) -> None:
        self.looked = True
        self.user_set = any(k in os.environ for k in kernels.BLAS_THREAD_VARS)
        for lib in blas.numpy_openblas():
            get = kernels._first_attr(lib, "get_num_threads")
            put = kernels._first_attr(lib, "set_num_threads")
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                self.fns = (get, put)
                return

    def enter(self) -> bool:
        """Enter the scope; whether functrace may split the product (OpenBLAS runs one
        thread now). False where OpenBLAS was not found, or the user chose more than
        one OpenBLAS thread: products then stay whole, with the BLAS's own threads."""
        with self.lock:
            if not self.looked:
                self._lookup()
            if self.fns is None:
                self.depth += 1
                return False
            if self.depth == 0:
                get, put = self.fns
                self.saved = get()
                if self.saved != 1 and not self.user_set:
                    put(1)
            self.depth += 1
            return self.saved == 1 or not self.user_set

    def exit(self) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.fns is not None and self.saved != 1:
                if not self.user_set:
                    self.fns[1](self.saved)

    def after_fork(self) -> None:
        if self.depth and self.fns is not None and self.saved != 1 and not self.user_set:
            self.fns[1](self.saved)
        self.lock, self.depth = threading.Lock(), 0


_blas = _BlasScope()


@contextlib.contextmanager
def blas_one_thread() -> Iterator[bool]:  # (products call _blas.enter/exit directly)
    """OpenBLAS on one thread inside the block, the caller's count restored after (when
    no other functrace product still runs); yields whether products may be split (see
    ``_BlasScope.enter``). Process-wide while it lasts: a NumPy product in another
    Python thread meanwhile runs on one thread too (same results)."""
    ok = _blas.enter()
    try:
        yield ok
    finally:
        _blas.exit()


class BlasImpl:
    """An impl that calls BLAS itself (a convolution's im2col products), called by the
    driver: each call site times OpenBLAS's own threads against one OpenBLAS thread (the
    scope above) and keeps the faster, re-timing now and then (``_Chooser``): on a quiet
    machine the BLAS's threads pay, with a core held by another process they stall (a
    2-thread pool then waits for its descheduled thread), and one thread does not."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.site = _Chooser()

    def __call__(self, *args: Any) -> Any:
        threaded, timed = self.site.choose()
        t0 = time.perf_counter() if timed else 0.0
        if threaded:
            out = self.fn(*args)
        else:
            _blas.enter()
            try:
                out = self.fn(*args)
            finally:
                _blas.exit()
        if timed:
            self.site.record(threaded, time.perf_counter() - t0)
        return out

    def __repr__(self) -> str:
        return "<impl timing OpenBLAS's threads against one thread>"


def blas_impl(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What the driver calls for the impl ``fn`` of a primitive computed with BLAS
    products: a :class:`BlasImpl` when functrace runs threads, else ``fn`` with
    OpenBLAS on one thread (a one-core process, ``FUNCTRACE_NUM_THREADS=1``)."""
    return BlasImpl(fn) if enabled() else _scoped(fn)


# ---------------------------------------------------------------------------
# Products: gemm blocks on the pool
# ---------------------------------------------------------------------------


def _blas_layout(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``(c, t)`` with ``c`` C-contiguous and ``x`` equal to ``c`` (t=0) or ``c.T``
    (t=1), which BLAS reads in place; any other layout is copied, as np.dot does."""
    if x.flags.c_contiguous:
        return x, 0
    if x.T.flags.c_contiguous:
        return x.T, 1
    return np.ascontiguousarray(x), 0


class ParallelDot:
    """``np.dot(a, b[, out])`` for 2-D float32/float64 operands, split into row blocks
    (when ``c`` has at least as many rows as columns: each block re-reads ``b``) or
    column blocks (each re-reads ``a``), one single-threaded ``gemm`` per block, taken
    in turn by the calling thread and the native workers (``native.py``), or all by
    the calling thread (the same blocks either way: see ``__call__``)."""

    takes_out = True  # called like np.dot(a, b, out)

    def __init__(self, dtype: np.dtype, m: int, k: int, n: int) -> None:
        self.gemm = blas.gemm(dtype)
        self.dtype = dtype
        self.native = native = _native()
        if self.gemm is not None:
            self.region = native.region_kernel(dtype)  # compiled with the program
            native.control_kernel()
        by_rows = m >= n
        size = m if by_rows else n
        # Blocks of 16 rows/columns or more: whole register tiles of the BLAS kernels.
        chunks = _n_chunks(m * k * n, size, MIN_DOT_FMAS // 2, 16, DOT_CHUNKS_PER_THREAD)
        chunks = min(chunks, native.MAX_BLOCKS)
        self.bounds = _chunk_bounds(size, chunks, 16)
        self.bounds_arr = np.array(self.bounds, np.int64)
        self.n_chunks = len(self.bounds) - 1
        self.by_rows = by_rows
        self.site = _Chooser()
        # gemm blocks of its own (else np.dot): when there are several, or when one is
        # worth a call of its own (functrace's gemm is not NumPy's: a copy of its
        # OpenBLAS with wider kernels, see blas.py).
        g = self.gemm
        self.in_blocks = g is not None and (self.n_chunks > 1 or g.own_copy)

    def __call__(self, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        may_split = _blas.enter()
        try:
            parallel, timed = self.site.choose() if self.n_chunks > 1 else (False, False)
            # Either path computes the same blocks (one gemm call each), all here or in
            # turn with the workers: OpenBLAS may round a block differently from the
            # whole product (its float32 kernels do on some processors), so the results
            # never depend on the path, and so not on the machine's load.
            blocks = may_split and self.in_blocks
            if out is not None and not out.flags.c_contiguous:
                blocks = False
            if (
                a.dtype != self.dtype
                or b.dtype != self.dtype
                or (out is not None and out.dtype != self.dtype)
            ):
                blocks = False
            parallel = parallel and blocks
            t0 = time.perf_counter() if timed else 0.0
            if blocks:
                out, parallel = self._split(a, b, out, parallel)
            else:
                out = np.dot(a, b) if out is None else np.dot(a, b, out)
            if timed:
                self.site.record(parallel, time.perf_counter() - t0)
        finally:
            _blas.exit()
        self.site.count(parallel)
        return out

    def _split(
        self, a: np.ndarray, b: np.ndarray, out: np.ndarray | None, parallel: bool
    ) -> tuple[np.ndarray, bool]:
        (a, ta), (b, tb) = _blas_layout(a), _blas_layout(b)
        if out is None:
            m = a.shape[1] if ta else a.shape[0]
            out = np.empty((m, b.shape[0] if tb else b.shape[1]), a.dtype)
        g = self.gemm
        assert g is not None
        ran = self.native.workers(num_threads()).run(
            self.region, a, b, out, ta, tb, self.by_rows, self.bounds_arr, g.addr, g.wide, parallel
        )
        return out, ran

    def __repr__(self) -> str:
        g = self.gemm
        where = "" if g is None or not g.own_copy else f" ({g.source} kernels: a copy of OpenBLAS)"
        return f"<functrace matrix product in up to {self.n_chunks} blocks{where}>"


def _native() -> Any:
    """``functrace.jit.native`` (imported when first needed)."""
    from functrace.jit import native

    return native


def _scoped(fn: Any) -> Any:
    """``fn`` (a NumPy product) called with OpenBLAS on one thread."""

    enter, leave = _blas.enter, _blas.exit

    def call(*args: Any) -> Any:
        enter()
        try:
            return fn(*args)
        finally:
            leave()

    call.takes_out = getattr(fn, "takes_out", fn is np.dot)  # type: ignore[attr-defined]
    call.__name__ = f"one_blas_thread_{getattr(fn, '__name__', 'product')}"
    return call


def dot_for(dtype: np.dtype, m: int, k: int, n: int) -> Any:
    """What the driver calls for ``np.dot`` of a 2-D ``(m, k)`` by ``(k, n)`` product
    of ``dtype``: a :class:`ParallelDot` when it is large enough to split, a scoped
    ``np.dot`` (OpenBLAS on one thread) when OpenBLAS could thread it, else None
    (``np.dot`` as is)."""
    fmas = m * k * n
    if fmas <= GEMM_THREADED_FMAS or dtype.kind not in "fc" or dtype.itemsize < 4:
        return None
    if dtype.name in blas.GEMM_NAMES:
        if fmas >= MIN_DOT_FMAS and enabled():
            return ParallelDot(dtype, m, k, n)
        got = blas.gemm(dtype)
        if got is not None and got.own_copy and direct_engine.enabled():
            # One block through functrace's gemm (with the LLVM region kernel: Numba's
            # would cost a cold first call a second of compile for a product that
            # never splits).
            return ParallelDot(dtype, m, k, n)
    return _scoped(np.dot)


def product_for(fn: Any, dtype: np.dtype, fmas: int, gemm: bool) -> Any:
    """``fn`` (``np.dot`` or ``np.matmul``) run with OpenBLAS on one thread when
    OpenBLAS could thread it (``fmas`` multiply-adds per BLAS call, in a matrix-matrix
    product when ``gemm``), else ``fn`` itself."""
    limit = GEMM_THREADED_FMAS if gemm else BLAS_THREADED_FMAS
    if fmas <= limit or dtype.kind not in "fc" or dtype.itemsize < 4:
        return fn
    return _scoped(fn)


def _register_fork() -> None:
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)


_register_fork()


__all__ = [
    "BlasImpl",
    "blas_impl",
    "BLAS_THREADED_FMAS",
    "GEMM_THREADED_FMAS",
    "MIN_DOT_FMAS",
    "MIN_KERNEL_SIZE",
    "ParallelDot",
    "SplitKernel",
    "blas_one_thread",
    "call_counts",
    "dot_for",
    "enabled",
    "kernel_in_parallel",
    "mode",
    "num_threads",
    "product_for",
    "run_chunks",
    "split_kernel",
    "threads",
]
