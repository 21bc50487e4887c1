"""Fused elementwise loop kernels: source generation and compilation.

A kernel is one ``@njit`` loop nest over the (collapsed) output shape of a
fusion group. Array inputs are C-contiguous and already reshaped by the driver
to the collapsed rank, with size 1 on broadcast axes; the kernel reads them
with index 0 on those axes, so a ``(3, 4) + (1, 4)`` kernel can never be reused
for ``(3, 4) + (3, 4)``: the broadcast pattern, dtypes and rank are all part of
the source, and the source is the cache key. Sizes are not: one kernel serves
every size with the same pattern, and the driver (specialized to exact shapes,
chosen only after the call's shapes matched) passes arrays of exactly the
expected shapes.

Values are scalars in registers; every operation's result is cast to its IR
dtype, so float32 code stays float32. Loads and operations are placed at the
outermost loop level where all their inputs are known (a bias broadcast along
rows is loaded once per column, not per element). Reductions of computed values
(``KernelSpec.reductions``) write outputs ``y*`` with size 1 on reduced blocks.
Drivers call a kernel through its compiled entry point (:attr:`LoadedKernel.entry`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrace.jit import cache, direct_engine
from functrace.jit.direct import ArgSpec, Unsupported
from functrace.jit.numba_import import import_numba

NJIT_OPTIONS = {
    "cache": True,
    "error_model": "numpy",
    "nogil": True,
    "boundscheck": False,
    "no_cfunc_wrapper": True,
}
"""The project's Numba defaults: cached, NumPy's float error semantics (x/0 = inf,
no exceptions), no GIL, no bounds checks (the driver validates shapes), and no C-ABI
wrapper (drivers call the CPython entry point; the C wrapper cost ~14 ms of a ~160 ms
kernel compile: the tiered MLP step's compiled path took over after 2.77-2.82 s
without it, 2.97-3.10 s with it, at 2 and 16 hidden layers)."""


_MMAP_THRESHOLD = 32 << 20  # glibc's maximum
_TRIM_THRESHOLD = 256 << 20


def tune_malloc() -> bool:
    """Keep freed memory in glibc's heap instead of returning it to the OS (opt-in).

    By default glibc serves large arrays with fresh ``mmap`` pages (or heap pages it
    trimmed back to the OS) and page-faults on each of them when written. Drivers
    avoid that without touching the process: their large arrays, outputs included,
    come from per-program buffer pools (``functrace/_buffers.py``). This process-wide setting
    (mmap threshold 32 MB, glibc's maximum; trim threshold 256 MB) makes every freed
    block reusable without faults for all of the process's NumPy code too, as the
    caching allocators of JAX and PyTorch do for theirs. It changes the user's whole
    process, so it is applied only when ``FUNCTRACE_MALLOC_TUNING=1`` is set, once,
    when the first kernel is loaded; skipped outside glibc and when the user set
    ``MALLOC_*_``/``GLIBC_TUNABLES``. Returns whether the thresholds were set.
    """
    if os.environ.get("FUNCTRACE_MALLOC_TUNING", "0").strip().lower() not in (
        "1",
        "true",
        "yes",
        "on",
    ):
        return False
    if not sys.platform.startswith("linux") or any(
        k in os.environ
        for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
    ):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl has no mallopt)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(
        mallopt(m_mmap_threshold, _MMAP_THRESHOLD) and mallopt(m_trim_threshold, _TRIM_THRESHOLD)
    )


BLAS_THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
)


def _openblas_libs() -> list[ctypes.CDLL]:
    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if "openblas" in path.lower() and path.startswith("/") and path not in paths:
                    paths.append(path)
    except OSError:
        return []
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def _first_attr(lib: ctypes.CDLL, what: str) -> Any:
    for name in (f"scipy_openblas_{what}64_", f"openblas_{what}64_", f"openblas_{what}"):
        fn = getattr(lib, name, None)
        if fn is not None:
            return fn
    return None


@functools.lru_cache(maxsize=4)
def _njit(disk: bool = True, nrt: bool = True):  # type: ignore[no-untyped-def]
    tune_malloc()
    options = dict(NJIT_OPTIONS, cache=disk)
    if not nrt:
        options["_nrt"] = False
    return import_numba().njit(**options)


def _on_disk(fn) -> bool:  # type: ignore[no-untyped-def]
    """Whether ``fn`` comes from a kernel file in the trusted cache directory (else the
    cache is memory-only and Numba must not cache it, see ``cache.py``)."""
    return not fn.__code__.co_filename.startswith("<")


def kernel_jit(fn):  # type: ignore[no-untyped-def]
    """The ``njit`` wrapper of generated kernels (see NJIT_OPTIONS)."""
    return _njit(_on_disk(fn))(fn)


def flat_kernel_jit(fn):  # type: ignore[no-untyped-def]
    """:func:`kernel_jit` for a kernel that allocates nothing (fused elementwise
    kernels): compiled without Numba's reference-counted runtime, whose reference
    counting of the array arguments cost ~10 ms of a ~150 ms compile."""
    return _njit(_on_disk(fn), nrt=False)(fn)


@dataclass
class KernelSpec:
    """A loop kernel before code generation (names are canonical: x*, s*, o*, v*)."""

    ndim: int
    arrays: list[tuple[np.dtype, tuple[bool, ...]]] = field(default_factory=list)
    scalars: list[np.dtype] = field(default_factory=list)
    outputs: list[np.dtype] = field(default_factory=list)
    # (depth, comment, line) for each computed value, in dependency order
    body: list[tuple[int, str, str]] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)  # value name per output
    # Reductions of values into outputs y*: (kind "sum"|"max"|"min", dtype, per-block
    # flag "kept" (False: reduced; the output has size 1 there), value name).
    reductions: list[tuple[str, np.dtype, tuple[bool, ...], str]] = field(default_factory=list)
    explicit_sizes: bool = False  # sizes n* as arguments (no output has the full shape)

    def load_depth(self, j: int) -> int:
        full = self.arrays[j][1]
        return max((b + 1 for b, f in enumerate(full) if f), default=0)


def _short(dtype: np.dtype) -> str:
    from functrace import dtypes

    return dtypes.short_name(dtype)


def kernel_header(
    params: list[str], sig_text: str, title: str, jit: str = "kernel_jit"
) -> list[str]:
    """The first lines of a generated kernel module, up to the ``def`` line; ``jit``
    names its decorator (:func:`kernel_jit` or :func:`flat_kernel_jit`)."""
    return [
        f"{title} (generated by functrace.jit; do not edit).",
        f"# signature: {sig_text}",
        "import math  # noqa: F401",
        "",
        "import numpy as np  # noqa: F401",
        "",
        f"from functrace.jit.kernels import {jit}",
        "",
        "",
        f"@{jit}",
        f"def kernel({', '.join(params)}):",
    ]


def _sig_text(spec: KernelSpec) -> str:
    parts = [f"x{j}={_short(dt)}[{spec.ndim}d C ro]" for j, (dt, _) in enumerate(spec.arrays)]
    parts += [f"s{j}={_short(dt)}" for j, dt in enumerate(spec.scalars)]
    parts += [f"o{j}={_short(dt)}[{spec.ndim}d C]" for j, dt in enumerate(spec.outputs)]
    parts += [f"y{j}={_short(r[1])}[{spec.ndim}d C]" for j, r in enumerate(spec.reductions)]
    if spec.explicit_sizes:
        parts += [f"n{b}=intp" for b in range(spec.ndim)]
    return ", ".join(parts)


_REDUCE_UPDATE = {"sum": "{0} + {1}", "max": "np.maximum({0}, {1})", "min": "np.minimum({0}, {1})"}


def _reduce_init(kind: str, dtype: np.dtype) -> str:
    if kind == "sum":
        return f"np.{dtype.name}(0)"
    return f"np.{dtype.name}({'-' if kind == 'max' else ''}np.inf)"


def _reduction_lines(
    spec: KernelSpec, by_depth: dict[int, list[str]], after: dict[int, list[str]]
) -> None:
    """Place each reduction's init, update and store in the loop nest.

    Reduced blocks forming a suffix of the nest accumulate in a local (float64 for
    float32 sums), stored once per kept index when the inner loops end; any other
    pattern accumulates in the output in order, like NumPy's reduction over leading
    axes (adding whole rows in turn).
    """
    nd = spec.ndim
    for m, (kind, dt, kept, v) in enumerate(spec.reductions):
        k = next((b for b, f in enumerate(kept) if not f), nd)
        idx = ", ".join(f"i{b}" if f else "0" for b, f in enumerate(kept))
        cast = f"np.{dt.name}"
        if not any(kept[k:]):  # a local accumulator
            acc_dt = np.dtype(np.float64) if kind == "sum" and dt == np.float32 else dt
            r, acc = f"r{m}", f"np.{acc_dt.name}"
            by_depth[k].append(f"{r} = {_reduce_init(kind, acc_dt)}")
            upd = _REDUCE_UPDATE[kind].format(r, f"{acc}({v})")
            by_depth[nd].append(f"{r} = {acc}({upd})")
            (by_depth[nd] if k == nd else after[k]).append(f"y{m}[{idx}] = {cast}({r})")
        else:  # initialized by a loop nest (``.fill`` doubles the compile time)
            init = [f"{'    ' * b}for j{b} in range(y{m}.shape[{b}]):" for b in range(nd)]
            jdx = ", ".join(f"j{b}" for b in range(nd))
            by_depth[0] += [*init, f"{'    ' * nd}y{m}[{jdx}] = {_reduce_init(kind, dt)}"]
            upd = _REDUCE_UPDATE[kind].format(f"y{m}[{idx}]", v)
            by_depth[nd].append(f"y{m}[{idx}] = {cast}({upd})")


def kernel_source(spec: KernelSpec) -> str:
    """The Python source of the kernel module for ``spec``."""
    nd = spec.ndim
    params = [f"x{j}" for j in range(len(spec.arrays))]
    params += [f"s{j}" for j in range(len(spec.scalars))]
    params += [f"o{j}" for j in range(len(spec.outputs))]
    params += [f"y{j}" for j in range(len(spec.reductions))]
    if spec.explicit_sizes:
        params += [f"n{b}" for b in range(nd)]
    lines = kernel_header(
        params, _sig_text(spec), "# functrace fused elementwise kernel", "flat_kernel_jit"
    )
    if not spec.explicit_sizes:
        sizes = ", ".join(f"n{b}" for b in range(nd))
        lines.append(f"    {sizes}{',' if nd == 1 else ''} = o0.shape")
    by_depth: dict[int, list[str]] = {d: [] for d in range(nd + 1)}
    after: dict[int, list[str]] = {d: [] for d in range(nd)}
    for j, (_, full) in enumerate(spec.arrays):
        idx = ", ".join(f"i{b}" if f else "0" for b, f in enumerate(full))
        by_depth[spec.load_depth(j)].append(f"a{j} = x{j}[{idx}]")
    for depth, comment, line in spec.body:
        by_depth[depth].append(f"# {comment}")
        by_depth[depth].append(line)
    idx_all = ", ".join(f"i{b}" for b in range(nd))
    by_depth[nd] += [f"o{m}[{idx_all}] = {v}" for m, v in enumerate(spec.stores)]
    _reduction_lines(spec, by_depth, after)
    for d in range(nd + 1):
        pad = "    " * (d + 1)
        lines += [pad + ln for ln in by_depth[d]]
        if d < nd:
            lines.append(f"{pad}for i{d} in range(n{d}):")
    for d in range(nd - 1, -1, -1):  # after the loop over block d ends
        lines += ["    " * (d + 1) + ln for ln in after[d]]
    return "\n".join(lines) + "\n"


def numba_signature(spec: KernelSpec) -> tuple[object, ...]:
    import_numba()
    from numba import types
    from numba.np.numpy_support import from_dtype

    sig: list[object] = [
        types.Array(from_dtype(dt), spec.ndim, "C", readonly=True) for dt, _ in spec.arrays
    ]
    sig += [from_dtype(dt) for dt in spec.scalars]
    sig += [types.Array(from_dtype(dt), spec.ndim, "C") for dt in spec.outputs]
    sig += [types.Array(from_dtype(r[1]), spec.ndim, "C") for r in spec.reductions]
    if spec.explicit_sizes:
        sig += [types.intp] * spec.ndim
    return tuple(sig)


@dataclass
class LoadedKernel:
    name: str  # module name, also the file name in the cache directory
    source: str
    dispatcher: object
    compiled: bool  # compiled by Numba in this process (False: loaded from disk)
    seconds: float

    @property
    def entry(self) -> object:
        """The compiled signature's own wrapper, called by drivers instead of the
        dispatcher: it unboxes the arguments without resolving their types (half the
        cost of a call with a dozen arguments). It still rejects an array of another
        dtype (``TypeError``), but takes the rank and C-contiguity of each array on
        trust: the driver passes only C-contiguous arrays reshaped to the kernel's rank
        (or of known shape). Falls back to the dispatcher if Numba's internals moved."""
        overloads = getattr(self.dispatcher, "overloads", None)
        if overloads is None or len(overloads) != 1:  # pragma: no cover - Numba internals
            return self.dispatcher
        (cres,) = overloads.values()
        return getattr(cres, "entry_point", self.dispatcher)


@dataclass(frozen=True)
class KernelListing:
    """A kernel a driver rule hands to the driver (``ctx.const``) with its source as
    ``as_text`` shows it: comments naming the driver's values, which the compiled
    source (shared by every call site of one pattern) leaves out."""

    kernel: LoadedKernel
    text: str


_loaded: dict[str, LoadedKernel] = {}
# Held while a kernel is imported and compiled: two threads lowering the same kernel
# at once compile it once (a second ``compile`` after ``disable_compile`` would fail).
_load_lock = threading.RLock()


def forget_loaded() -> None:
    with _load_lock:
        _loaded.clear()


def forget_kernel(name: str) -> None:
    """Forget one loaded kernel and its module (the next load imports it again)."""
    with _load_lock:
        _loaded.pop(name, None)
        cache.forget_module(name)


def clear_cache() -> None:
    """Delete the on-disk kernels of the cache directory and forget the loaded ones.

    Functions already compiled in this process keep working; new compilations
    start from an empty cache.
    """
    forget_loaded()
    cache.clear_files()


def load_kernel(spec: KernelSpec) -> LoadedKernel:
    """Compile ``spec`` or load it from memory or the disk cache: the direct compiler
    when it translates the kernel (see ``direct.py``), else Numba."""
    source = kernel_source(spec)
    if direct_engine.enabled():
        k = _load_direct(source, spec)
        if k is not None:
            return k
    collect = _mode.collect
    if collect is not None:  # a planning pass: note the kernel, make nothing
        name = cache.MODULE_PREFIX + cache.source_hash(source)
        if name not in _loaded and not cache.is_sealed(name):
            collect.append((name, source, numba_signature(spec)))
            return LoadedKernel(name, source, _Unmade(name), False, 0.0)
    return load_source(source, lambda: numba_signature(spec))


def direct_args(spec: KernelSpec) -> list[ArgSpec]:
    """The arguments of ``spec``'s kernel as the direct compiler sees them."""
    nd = spec.ndim
    args = [ArgSpec(f"x{j}", dt, nd, True, False) for j, (dt, _) in enumerate(spec.arrays)]
    args += [ArgSpec(f"s{j}", dt) for j, dt in enumerate(spec.scalars)]
    args += [ArgSpec(f"o{j}", dt, nd, True) for j, dt in enumerate(spec.outputs)]
    args += [ArgSpec(f"y{j}", r[1], nd, True) for j, r in enumerate(spec.reductions)]
    if spec.explicit_sizes:
        args += [ArgSpec(f"n{b}", np.dtype(np.intp)) for b in range(nd)]
    return args


def _load_direct(source: str, spec: KernelSpec) -> LoadedKernel | None:
    """``spec``'s kernel compiled by the direct compiler (milliseconds, so never left
    to a background compile), or None when it leaves the kernel to Numba."""
    name = cache.MODULE_PREFIX + cache.source_hash(source)
    with _load_lock:
        hit = _loaded.get(name)
        if hit is not None:
            return LoadedKernel(hit.name, hit.source, hit.dispatcher, False, 0.0)
        if name in _not_direct:
            return None
        t0 = time.perf_counter()
        try:
            entry = direct_engine.compile_kernel(source, direct_args(spec), _sig_text(spec))
        except Unsupported:
            _not_direct.add(name)
            return None
        k = LoadedKernel(name, source, entry, True, time.perf_counter() - t0)
        _add_stat("direct", k.seconds)
        _loaded[name] = k
        return k


_not_direct: set[str] = set()  # kernels the direct compiler left to Numba


class _Unmade:
    """The dispatcher of a fused kernel a planning pass only named (its driver is
    never run: the real lowering follows once the kernel is compiled)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:  # pragma: no cover - never called
        raise RuntimeError(f"functrace.jit: kernel {self.name} was never compiled")


class NeedsCompile(BaseException):  # noqa: N818 - a signal, not an error
    """Raised by :func:`load_source` under :func:`probing` for a kernel that is neither
    loaded nor sealed in the disk cache: the lowering would have to wait for Numba.
    A ``BaseException``, so that no rule's ``except Exception`` fallback catches it."""


class _Mode(threading.local):
    # None: compile here; "probe": raise NeedsCompile instead of compiling; a callable
    # ``remote(name, source, signature) -> seconds | None``: have another process
    # compile into the disk cache first (None: it could not, compile here).
    mode: Any = None
    # per-phase seconds of the lowering running in this thread (FUNCTRACE_DEBUG_JIT)
    stats: dict[str, float] | None = None
    # a planning pass (``collecting``): fused kernels to compile, none made
    collect: list[tuple[str, str, Any]] | None = None
    collected: set[str] | None = None  # names a worker compiled after such a pass


_mode = _Mode()


@contextlib.contextmanager
def load_mode(mode: Any, stats: dict[str, float] | None = None) -> Iterator[None]:
    """Run a lowering in this thread with kernel loads in ``mode`` (see ``_Mode``),
    adding the seconds spent compiling (``"compile"``) and loading from the disk cache
    (``"load"``) into ``stats``."""
    prev = _mode.mode, _mode.stats, _mode.collected
    _mode.mode, _mode.stats, _mode.collected = mode, stats, None
    try:
        yield
    finally:
        _mode.mode, _mode.stats, _mode.collected = prev


@contextlib.contextmanager
def collecting(into: list[tuple[str, str, Any]]) -> Iterator[None]:
    """A planning pass in this thread: ``load_kernel`` appends ``(name, source, Numba
    signature)`` of each fused kernel that is neither loaded nor sealed on disk to
    ``into`` and returns a placeholder instead of compiling (the lowering made under
    it must be dropped); other kernels load as usual. Afterwards, until the mode is
    left, the kernels noted count as compiled (``LoadedKernel.compiled``) when they
    load from the disk cache."""
    prev = _mode.collect
    _mode.collect = into
    try:
        yield
    finally:
        _mode.collect = prev
        _mode.collected = {name for name, _, _ in into}


def _add_stat(what: str, seconds: float) -> None:
    stats = _mode.stats
    if stats is not None:
        stats[what] = stats.get(what, 0.0) + seconds
        stats[what + "s"] = stats.get(what + "s", 0.0) + 1


def _timed_import() -> None:
    if "numba" not in sys.modules:
        t0 = time.perf_counter()
        import_numba()
        _add_stat("import", time.perf_counter() - t0)


def load_source(source: str, signature: Any) -> LoadedKernel:
    """Compile (or load from memory or the disk cache) a generated module whose
    ``kernel`` function is decorated with :func:`kernel_jit`, for one explicit
    Numba signature (fused kernels and native loops; a callable making the signature
    is called only when the kernel is not loaded yet)."""
    name = cache.MODULE_PREFIX + cache.source_hash(source)
    hit = _loaded.get(name)
    if hit is None:
        mode = _mode.mode
        remote: float | None = None
        if mode is not None and not cache.is_sealed(name):
            if mode == "probe":
                raise NeedsCompile(name)
            _timed_import()
            if callable(signature):
                signature = signature()
            t0 = time.perf_counter()
            remote = mode(name, source, signature)
            if remote is not None:
                _add_stat("compile", time.perf_counter() - t0)
        with _load_lock:
            hit = _loaded.get(name)
            if hit is None:
                _timed_import()
                if callable(signature):
                    signature = signature()
                k = _load_new(name, source, signature)
                _add_stat("compile" if k.compiled else "load", k.seconds)
                collected = _mode.collected
                if remote is not None or (collected is not None and name in collected):
                    k.compiled = True  # by the worker, for this process
                return k
    return LoadedKernel(hit.name, hit.source, hit.dispatcher, False, 0.0)


def _load_new(name: str, source: str, signature: Any) -> LoadedKernel:
    """Import and compile (or load from the disk cache) one kernel; under _load_lock."""
    t0 = time.perf_counter()
    disp = cache.import_source(name, source).kernel
    # Numba reads its cache files in compile(): check them first (see cache.py).
    verified = cache.verify_entry(disp, name)
    try:
        _compile_signature(disp, signature)
    except Exception:
        if not verified:
            raise
        # Verified files Numba could not load: drop the entry and compile once afresh.
        path = cache.numba_cache_path(disp)
        assert path is not None
        cache.purge_entry(path, name)
        cache.warn_healed(path)
        cache.forget_module(name)
        disp = cache.import_source(name, source).kernel
        _compile_signature(disp, signature)
    compiled = sum(disp._cache_hits.values()) == 0  # Numba's own hit/miss counters
    if compiled:
        cache.seal_entry(disp, name)
    disp.disable_compile()  # any other argument types are an error, never a new compile
    k = LoadedKernel(name, source, disp, compiled, time.perf_counter() - t0)
    _loaded[name] = k
    return k


def _compile_signature(dispatcher: Any, signature: Any) -> None:
    """Numba's compile (or cache load) of one kernel signature: the one entry point
    every kernel goes through (tests replace it to inject a compile failure)."""
    dispatcher.compile(signature)


__all__ = [
    "KernelListing",
    "KernelSpec",
    "LoadedKernel",
    "NeedsCompile",
    "clear_cache",
    "import_numba",
    "flat_kernel_jit",
    "kernel_jit",
    "kernel_source",
    "load_kernel",
    "load_mode",
    "load_source",
]
