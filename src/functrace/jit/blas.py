"""The ``gemm`` that compiled products call, and the OpenBLAS it comes from.

Large 2-D products of a jitted program are computed by ``cblas_?gemm`` calls of their
own (``parallel.ParallelDot``, the region kernels of ``native.py``), not ``np.dot``. The
function called is NumPy's OpenBLAS's, with one exception:

* **A copy of NumPy's OpenBLAS with wider kernels.** NumPy's OpenBLAS runs the kernel
  family it picked when it loaded: the one it recognises the processor as, or the one
  ``OPENBLAS_CORETYPE`` names. Where that family is narrower than the processor (AVX2
  kernels on a processor with AVX-512 F, CD, BW, DQ and VL) and the library holds its
  SkylakeX (AVX-512) kernels, functrace loads a second copy of the same library for its
  own compiled products, with those kernels and one thread, and keeps it if its
  ``sgemm`` is measured faster (:func:`_faster`). On an AMD Zen 5 whose environment
  sets ``OPENBLAS_CORETYPE=Haswell``, products ran at 62 GFMA/s per core in NumPy's
  copy and 120 in functrace's (float32), the rate XLA's own kernels reach there.
  NumPy's copy, and so the user's BLAS, is not touched: NumPy's products, and
  functrace's eager ones, which are NumPy's, keep its kernels and thread count.

  The copy is made in memory (``memfd_create``) from the file NumPy itself loaded, so
  no library file is written to disk where another process could replace it. Loading
  it costs about 25 ms and the library's size in memory (about 25 MB), once per
  process, when the first such product is compiled. ``OPENBLAS_CORETYPE`` and
  ``OPENBLAS_NUM_THREADS`` (the only way OpenBLAS takes a kernel family, read when it
  loads) are set for the few milliseconds of the load, under a lock, and restored.

  ``FUNCTRACE_BLAS=numpy`` keeps NumPy's OpenBLAS, as configured, for compiled
  products too (``auto``, the default, allows the copy).

Results of a product may differ in the last bits between kernel families; jitted
products are compared with eager ones at the op table's tolerances, and a process's
compiled products are computed by one library throughout.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from functrace.jit import kernels

AVX512_FLAGS = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")
"""What OpenBLAS's SkylakeX kernels execute."""
AVX512_CORES = ("skylakex", "cooperlake", "sapphirerapids")
"""OpenBLAS's kernel families with AVX-512 kernels."""
FASTER = 0.8
"""The copy is kept when its ``sgemm`` takes at most this fraction of NumPy's time."""
GEMM_NAMES = {"float32": "sgemm", "float64": "dgemm"}


@dataclass(frozen=True)
class Gemm:
    """``cblas_?gemm`` (row-major) at ``addr``, its integers 64-bit when ``wide``;
    ``source``: ``"numpy"`` (NumPy's OpenBLAS) or the copy's kernel family."""

    addr: int
    wide: int
    source: str

    @property
    def own_copy(self) -> bool:
        return self.source != "numpy"


@functools.lru_cache(maxsize=1)
def numpy_openblas() -> tuple[ctypes.CDLL, ...]:
    """The OpenBLAS libraries loaded in the process, NumPy's own first (a SciPy or
    other copy may be loaded too: the count scoped and the ``gemm`` called must be the
    library NumPy's products use)."""
    if not sys.platform.startswith("linux"):
        return ()
    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # NumPy's BLAS is loaded
    home = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    libs = kernels._openblas_libs()
    ours = [lib for lib in libs if str(lib._name).startswith(home) and "numpy" in lib._name]
    return tuple(ours + [lib for lib in libs if lib not in ours])


def corename(lib: ctypes.CDLL) -> str:
    """The kernel family ``lib`` (an OpenBLAS) runs, as it names it ("" if unknown)."""
    fn = kernels._first_attr(lib, "get_corename")
    if fn is None:
        return ""
    fn.restype, fn.argtypes = ctypes.c_char_p, []
    return (fn() or b"").decode("ascii", "replace")


def _cblas(lib: ctypes.CDLL, name: str) -> tuple[Any, int] | None:
    """``lib``'s ``cblas_<name>`` and whether its integers are 64-bit."""
    for prefix, suffix, wide in (
        ("scipy_cblas_", "64_", 1),
        ("cblas_", "64_", 1),
        ("scipy_cblas_", "", 0),
        ("cblas_", "", 0),
    ):
        fn = getattr(lib, f"{prefix}{name}{suffix}", None)
        if fn is not None:
            return fn, wide
    return None


def cpu_flags() -> frozenset[str]:
    """The processor's feature flags (Linux's ``/proc/cpuinfo``; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


_env_lock = threading.Lock()


def load_copy(path: str, coretype: str) -> ctypes.CDLL:
    """A private copy of the OpenBLAS at ``path``, with the kernels of ``coretype`` and
    one thread, loaded from memory (OSError where that cannot be done)."""
    if not hasattr(os, "memfd_create"):
        raise OSError("no memfd_create on this platform")
    fd = os.memfd_create("functrace-blas-copy", getattr(os, "MFD_CLOEXEC", 0))
    try:
        with open(path, "rb") as f:  # copied by the kernel, not through Python
            size, done = os.fstat(f.fileno()).st_size, 0
            while done < size:
                sent = os.sendfile(fd, f.fileno(), done, size - done)
                if sent <= 0:
                    raise OSError(f"could not copy {path}")
                done += sent
        settings = {"OPENBLAS_CORETYPE": coretype, "OPENBLAS_NUM_THREADS": "1"}
        with _env_lock:
            saved = {k: os.environ.get(k) for k in settings}
            try:
                os.environ.update(settings)
                lib = ctypes.CDLL(f"/proc/self/fd/{fd}", mode=os.RTLD_LOCAL)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
    except BaseException:
        os.close(fd)
        raise
    # The descriptor stays open as long as the process: the loader knows the library by
    # its path, and a later copy at a reused descriptor number would be taken for it.
    _open_copies.append(fd)
    return lib


_open_copies: list[int] = []


def sgemm(lib: ctypes.CDLL, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """``c = a @ b`` by ``lib``'s ``cblas_sgemm`` (C-contiguous float32 operands)."""
    got = _cblas(lib, "sgemm")
    assert got is not None
    fn, wide = got
    if fn.restype is not None:  # (ctypes keeps one function object per library)
        i, p = (ctypes.c_int64 if wide else ctypes.c_int), ctypes.c_void_p
        fn.restype = None
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, i, i, i, ctypes.c_float, p, i,
                       p, i, ctypes.c_float, p, i]  # fmt: skip
    (m, k), n = a.shape, b.shape[1]
    fn(101, 111, 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, n, 0.0, c.ctypes.data, n)


def _sgemm_seconds(lib: ctypes.CDLL, rounds: int, calls: int = 20) -> list[float]:
    """The time of ``calls`` 64x64x64 float32 products through ``lib``'s ``sgemm``, per
    round (a size OpenBLAS never threads)."""
    a = b = np.ones((64, 64), np.float32)
    c = np.empty((64, 64), np.float32)
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            sgemm(lib, a, b, c)
        out.append(time.perf_counter() - t0)
    return out


def _faster(copy: ctypes.CDLL, numpy_lib: ctypes.CDLL) -> bool:
    """Whether ``copy``'s ``sgemm`` beats NumPy's (fastest of interleaved rounds)."""
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(3):
        mine += _sgemm_seconds(copy, 3)
        theirs += _sgemm_seconds(numpy_lib, 3)
    return min(mine) <= FASTER * min(theirs)


def _choice() -> str:
    """``FUNCTRACE_BLAS``: ``auto`` (the default) or ``numpy``; another value warns."""
    raw = os.environ.get("FUNCTRACE_BLAS", "").strip().lower()
    if raw in ("", "auto", "numpy"):
        return raw or "auto"
    warnings.warn(
        f"functrace: FUNCTRACE_BLAS={raw!r} is not 'auto' or 'numpy'; using 'auto'",
        RuntimeWarning,
        stacklevel=2,
    )
    return "auto"


@functools.lru_cache(maxsize=1)
def _wider_copy() -> tuple[ctypes.CDLL, str] | None:
    """The copy of NumPy's OpenBLAS with AVX-512 kernels, when it pays (see above)."""
    if _choice() == "numpy":
        return None
    libs = numpy_openblas()
    if not libs or not all(f in cpu_flags() for f in AVX512_FLAGS):
        return None
    lib = libs[0]
    if corename(lib).lower() in AVX512_CORES:
        return None
    try:
        ctypes.c_char.in_dll(lib, "gotoblas_SKYLAKEX")  # built with those kernels
    except ValueError:
        return None
    try:
        copy = load_copy(str(lib._name), "SkylakeX")
    except OSError:
        return None
    family = corename(copy)
    if family.lower() not in AVX512_CORES or _cblas(copy, "sgemm") is None:
        return None
    return (copy, family) if _faster(copy, lib) else None


_gemm_lock = threading.Lock()


def gemm_in(lib: ctypes.CDLL, dtype: np.dtype | str, source: str) -> Gemm | None:
    """``lib``'s ``cblas_?gemm`` for ``dtype`` as a :class:`Gemm` labelled ``source``."""
    got = _cblas(lib, GEMM_NAMES[np.dtype(dtype).name])
    if got is None:
        return None
    return Gemm(ctypes.cast(got[0], ctypes.c_void_p).value or 0, got[1], source)


@functools.lru_cache(maxsize=2)
def _gemm(dtype_name: str) -> Gemm | None:
    with _gemm_lock:
        wider = _wider_copy()
        if wider is not None:
            copy, family = wider
            found = gemm_in(copy, dtype_name, family)
            if found is not None:
                return found
        for lib in numpy_openblas():
            found = gemm_in(lib, dtype_name, "numpy")
            if found is not None:
                return found
        return None


def gemm(dtype: np.dtype | str) -> Gemm | None:
    """The ``cblas_?gemm`` compiled products of ``dtype`` (float32 or float64) call;
    None when no OpenBLAS was found (products then go through ``np.dot``)."""
    return _gemm(np.dtype(dtype).name)


__all__ = [
    "Gemm",
    "corename",
    "cpu_flags",
    "gemm",
    "gemm_in",
    "load_copy",
    "numpy_openblas",
    "sgemm",
]
