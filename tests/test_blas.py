"""The gemm compiled products call (``functrace.jit.blas``): NumPy's OpenBLAS, or a
private copy of it with wider kernels, never a change to NumPy's own."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import functrace as ft
from functrace.jit import blas, parallel

linux_openblas = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(os, "memfd_create"),
    reason="the copy is made with memfd_create and found in /proc",
)


def _numpy_lib() -> ctypes.CDLL:
    libs = blas.numpy_openblas()
    if not libs or blas._cblas(libs[0], "sgemm") is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS with cblas found here")
    return libs[0]


def _sgemm(lib: ctypes.CDLL, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.empty((a.shape[0], b.shape[1]), np.float32)
    blas.sgemm(lib, a, b, c)
    return c


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@linux_openblas
def test_a_copy_has_the_kernels_asked_for_and_leaves_numpys_blas_alone() -> None:
    lib = _numpy_lib()
    family = blas.corename(lib)
    if not family:
        pytest.skip("this OpenBLAS does not name its kernels")
    env = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS")}
    get = blas.kernels._first_attr(lib, "get_num_threads")
    get.restype, get.argtypes = ctypes.c_int, []
    numpy_threads, threads = get(), _threads()
    copy = blas.load_copy(str(lib._name), family)
    assert copy is not lib and copy._handle != lib._handle
    assert blas.corename(copy) == family
    # Each load is a library of its own (the loader knows copies by their descriptor's
    # path: an earlier copy's must not be reused).
    again = blas.load_copy(str(lib._name), family)
    assert again._handle not in (copy._handle, lib._handle)
    # NumPy's library, the environment and the process's threads are as they were.
    assert blas.corename(lib) == family
    assert get() == numpy_threads
    assert {k: os.environ.get(k) for k in env} == env
    assert _threads() == threads  # the copy runs one thread: no pool of its own
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48)).astype(np.float32)  # below OpenBLAS's threading
    b = rng.standard_normal((48, 40)).astype(np.float32)
    # The same kernels compute the same bits in either copy.
    assert np.array_equal(_sgemm(copy, a, b), _sgemm(lib, a, b))
    np.testing.assert_allclose(_sgemm(copy, a, b), a @ b, rtol=1e-5, atol=1e-5)


@linux_openblas
def test_the_gemm_chosen_follows_the_rule() -> None:
    lib = _numpy_lib()
    g = blas.gemm(np.float32)
    assert g is not None and g == blas.gemm("float32")
    wider_possible = all(f in blas.cpu_flags() for f in blas.AVX512_FLAGS) and (
        blas.corename(lib).lower() not in blas.AVX512_CORES
    )
    if os.environ.get("FUNCTRACE_BLAS", "").strip().lower() == "numpy" or not wider_possible:
        assert g.source == "numpy"
    if g.own_copy:  # only where the processor runs the copy's wider kernels
        assert wider_possible and g.source.lower() in blas.AVX512_CORES
        assert blas.gemm(np.float64).source == g.source
    # NumPy's OpenBLAS keeps its own kernels whatever functrace chose.
    assert blas.corename(lib) == blas.corename(blas.numpy_openblas()[0])


def _run(code: str, **env: str) -> str:
    full = {**os.environ, **env}
    out = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


@linux_openblas
def test_functrace_blas_numpy_keeps_numpys_gemm_and_a_bad_value_warns() -> None:
    _numpy_lib()
    code = "from functrace.jit import blas; print(blas.gemm('float32').source)"
    assert _run(code, FUNCTRACE_BLAS="numpy").split()[-1] == "numpy"
    out = _run(code, FUNCTRACE_BLAS="fastest")
    assert "FUNCTRACE_BLAS='fastest' is not 'auto' or 'numpy'" in out


@linux_openblas
def test_products_through_a_copy_of_the_blas(monkeypatch) -> None:
    """The path of a process whose products run in functrace's own copy, on any
    machine: a copy with NumPy's kernels stands in for the wider one. One thread
    (this suite's setting): each large product is one gemm block of its own."""
    lib = _numpy_lib()
    copy = blas.load_copy(str(lib._name), blas.corename(lib) or "Haswell")
    stand_in = {dt: blas.gemm_in(copy, dt, "a stand-in copy") for dt in blas.GEMM_NAMES}
    monkeypatch.setattr(blas, "gemm", lambda dtype: stand_in[np.dtype(dtype).name])
    assert not parallel.enabled()
    for dtype, tol in ((np.float32, 1e-4), (np.float64, 1e-12)):
        site = parallel.dot_for(np.dtype(dtype), 96, 80, 64)
        assert isinstance(site, parallel.ParallelDot) and site.n_chunks == 1
        rng = np.random.default_rng(1)
        x = rng.standard_normal((96, 80)).astype(dtype)
        w = rng.standard_normal((64, 80)).astype(dtype)

        def f(x, w):
            return ft.numpy.tanh(x @ w.T) @ w

        before = parallel.call_counts()["serial"]
        got = ft.jit(f)(x, w)
        assert parallel.call_counts()["serial"] == before + 2  # both products, one block
        want = np.tanh(x @ w.T) @ w
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
        gx, gw = ft.jit(ft.grad(lambda x, w: f(x, w).sum(), argnums=(0, 1)))(x, w)
        ex, ew = ft.grad(lambda x, w: f(x, w).sum(), argnums=(0, 1))(x, w)
        np.testing.assert_allclose(np.asarray(gx), np.asarray(ex), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(gw), np.asarray(ew), rtol=tol, atol=tol)
        # Composed: jit of vmap (a batch of 3 becomes one 2-D product of 3x as many
        # rows), jvp under jit, and the same compiled program called from two Python
        # threads at once (each call's blocks are its own).
        xs = rng.standard_normal((3, 96, 80)).astype(dtype)
        vm = ft.jit(ft.vmap(f, in_axes=(0, None)))(xs, w)
        np.testing.assert_allclose(np.asarray(vm), np.stack([f(xi, w) for xi in xs]),
                                   rtol=tol, atol=tol)  # fmt: skip
        tx = rng.standard_normal(x.shape).astype(dtype)
        _, jt = ft.jit(lambda x, t, w=w: ft.jvp(lambda x: f(x, w), (x,), (t,)))(x, tx)
        _, et = ft.jvp(lambda x, w=w: f(x, w), (x,), (tx,))
        np.testing.assert_allclose(np.asarray(jt), np.asarray(et), rtol=tol, atol=tol)
        jf, outs = ft.jit(f), {}

        def call(i: int, jf=jf, xs=xs, w=w, outs=outs) -> None:
            outs[i] = jf(xs[i], w)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(3):
            np.testing.assert_allclose(np.asarray(outs[i]), np.asarray(f(xs[i], w)),
                                       rtol=tol, atol=tol)  # fmt: skip
