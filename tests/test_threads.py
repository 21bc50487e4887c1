"""functrace's threads (``jit/parallel.py``): the default count, the user's settings
left alone, and parallel results equal to serial ones.

The thread count is read once per process and the suite pins it to one
(``FUNCTRACE_NUM_THREADS=1``, conftest), so the threaded cases run in subprocesses;
this process checks the rules that decide what may run in parallel. No timings.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from functrace.jit import blas, jit, kernels, parallel

pytestmark = pytest.mark.usefixtures("private_jit_cache")  # subprocesses compile into it

_THREAD_ENV = ("FUNCTRACE_NUM_THREADS", "FUNCTRACE_PARALLEL", "NUMBA_NUM_THREADS")


def _run(script: str, env: dict[str, str]) -> Any:
    """Run ``script`` in a fresh interpreter with the thread variables of this process
    removed and ``env`` added; its last line of output, as JSON."""
    drop = _THREAD_ENV + kernels.BLAS_THREAD_VARS
    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.update(env)
    res = subprocess.run(
        [sys.executable, "-c", script], env=full, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


_COUNT = textwrap.dedent("""
    import json, os, warnings
    from functrace.jit import num_threads, parallel

    def count(env=None, cores=None):
        if cores is not None:
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
        if env is not None:
            os.environ["FUNCTRACE_NUM_THREADS"] = env
        num_threads.cache_clear()
        return num_threads()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = [count(), count(cores=1), count(env="3"), count(env=" 1 ")]
    print(json.dumps(out))
""")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity")
def test_default_is_the_cores_the_process_may_use() -> None:
    cores = len(os.sched_getaffinity(0))
    # The default, then pinned to one core; the variable overrides the affinity.
    assert _run(_COUNT, {}) == [cores, 1, 3, 1]


@pytest.mark.parametrize("value", ["0", "-2", "many", "1.5"])
def test_bad_thread_count_warns_and_uses_the_core_count(monkeypatch, value) -> None:
    monkeypatch.setenv("FUNCTRACE_NUM_THREADS", value)
    parallel.num_threads.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="expected FUNCTRACE_NUM_THREADS") as rec:
            n = parallel.num_threads()
    finally:
        parallel.num_threads.cache_clear()
    assert n == parallel._available_cores()
    assert repr(value) in str(rec[0].message)


def test_bad_parallel_mode_warns(monkeypatch) -> None:
    monkeypatch.setenv("FUNCTRACE_PARALLEL", "sometimes")
    with pytest.warns(RuntimeWarning, match="expected FUNCTRACE_PARALLEL to be one of"):
        assert parallel._read_mode() == "auto"
    monkeypatch.setenv("FUNCTRACE_PARALLEL", "Always")
    assert parallel._read_mode() == "always"


def test_the_suite_runs_one_thread_and_small_work_stays_serial() -> None:
    assert parallel.num_threads() == 1  # the suite's setting (conftest)
    assert not parallel.enabled()
    f32 = np.dtype(np.float32)
    big = parallel.dot_for(f32, 1024, 1024, 1024)
    if isinstance(big, parallel.ParallelDot):  # one block through functrace's own gemm
        assert big.gemm is not None and big.gemm.own_copy and big.n_chunks == 1
    spec = kernels.KernelSpec(ndim=1)
    assert not parallel.kernel_in_parallel(spec, (1 << 20,))
    # Products too small for OpenBLAS's threads are np.dot as is.
    assert parallel.dot_for(f32, 8, 8, 8) is None
    assert parallel.product_for(np.matmul, f32, 64, gemm=True) is np.matmul
    assert parallel.product_for(np.dot, f32, 1 << 16, gemm=False) is not np.dot
    assert parallel.dot_for(np.dtype(np.int32), 512, 512, 512) is None


def test_chooser_keeps_the_faster_path_and_probes_the_other(monkeypatch) -> None:
    monkeypatch.setattr(parallel, "mode", "auto")
    site = parallel._Chooser()
    picks = []
    for _ in range(6):  # warm-up: alternate, serial first, every call timed
        p, timed = site.choose()
        assert timed
        picks.append(p)
        site.record(p, 1.0 if p else 2.0)  # parallel twice as fast
    assert picks == [False, True] * 3
    # Parallel keeps winning: serial is timed once in 16 calls, then in 32, 64...
    later = [site.choose()[0] for _ in range(parallel.PROBE_EVERY * 7 - 6)]
    assert later.count(False) == 3
    for _ in range(3):
        site.record(True, 5.0)  # parallel got slow (a core busy elsewhere): serial wins
    assert [site.choose()[0] for _ in range(3)] == [False] * 3
    for forced, expected in (("always", True), ("never", False)):
        monkeypatch.setattr(parallel, "mode", forced)
        assert all(site.choose() == (expected, False) for _ in range(5))


def test_chunks_cover_the_range_in_aligned_blocks() -> None:
    cases = ((128, 8, 16), (100, 3, 16), (7, 4, 1), (784, 8, 16), (33, 2, 16), (3, 8, 1))
    for size, chunks, align in cases:
        b = parallel._chunk_bounds(size, chunks, align)
        assert b[0] == 0 and b[-1] == size and len(b) <= chunks + 1
        assert all(lo + align <= hi for lo, hi in zip(b, b[1:]))  # no short or empty block
        assert all(x % align == 0 for x in b[1:-1])
    assert parallel._chunk_bounds(33, 2, 16) == [0, 33]  # not a 32 + 1 split
    assert parallel._chunk_bounds(128, 8, 16) == list(range(0, 129, 16))


def test_python_chunks_run_once_each_on_the_workers_and_report_errors(native_workers) -> None:
    import threading
    import time

    _, w = native_workers
    seen: list[int] = []
    names: set[str] = set()

    def chunk(i: int) -> None:
        seen.append(i)
        names.add(threading.current_thread().name)
        time.sleep(0.002)  # drops the GIL, as a compiled chunk does

    for _ in range(20):  # (a loaded machine may start the workers late)
        seen.clear()
        assert w.run_chunks(chunk, 50)
        assert sorted(seen) == list(range(50))
        if any(n.startswith("functrace-worker") for n in names):
            break
    assert any(n.startswith("functrace-worker") for n in names)  # the workers took some

    def boom(i: int) -> None:
        if i == 7:
            raise ValueError("chunk 7")

    with pytest.raises(ValueError, match="chunk 7"):
        w.run_chunks(boom, 20)
    assert w.run_chunks(seen.append, 3)  # usable after an error
    with w.busy:  # another thread's region holds the workers: nothing runs
        assert not w.run_chunks(seen.append, 3)


_WORK = textwrap.dedent("""
    import ctypes, json, multiprocessing, os, sys, threading
    import numpy as np
    import functrace as ft
    import functrace.numpy as fnp
    from functrace.jit import jit, parallel

    def blas_threads():  # the count NumPy's OpenBLAS runs, None if not found
        for line in open("/proc/self/maps"):
            path = line.split()[-1] if line.strip() else ""
            if "openblas" in path.lower() and path.startswith("/"):
                lib = ctypes.CDLL(path)
                for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                             "openblas_get_num_threads"):
                    if hasattr(lib, name):
                        return getattr(lib, name)()
        return None

    env_before = dict(os.environ)
    # the sizes below must split (the thresholds that pay on a real step are higher)
    parallel.MIN_DOT_FMAS, parallel.MIN_KERNEL_SIZE = 1 << 21, 1 << 16
    np.ones((2, 2)) @ np.ones((2, 2))  # loads OpenBLAS
    blas_before = blas_threads()
    rng = np.random.default_rng(0)
    cases = []
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((256, 384)).astype(dt)
        b = rng.standard_normal((384, 192)).astype(dt)
        w = rng.standard_normal((16, 4096)).astype(dt)
        v = rng.standard_normal((4096, 512)).astype(dt)
        x = rng.standard_normal((512, 256)).astype(dt)
        y = rng.standard_normal((1, 256)).astype(dt)
        n = dt.__name__
        cases += [
            (f"NN {n}", lambda a, b: a @ b, (a, b)),
            (f"TN {n}", lambda a, b: a.T @ a, (a, b)),
            (f"NT {n}", lambda a, b: b @ b.T, (a, b)),
            (f"TT {n}", lambda a, b: fnp.matmul(b.T, a.T), (a, b)),
            (f"columns {n}", lambda w, v: w @ v, (w, v)),  # 16 rows: split by columns
            (f"strided {n}", lambda a, b: a[:, ::2] @ b[::2], (a, b)),
            (f"fortran input {n}", lambda a, b: a @ b, (np.asfortranarray(a), b)),
            (f"3-d {n}", lambda x, v: fnp.einsum("bij,jk->bik", x.reshape(4, 128, 256), v[:256]),
             (x, v)),
            (f"elementwise {n}", lambda x, y: fnp.sin(x) * 2 + y, (x, y)),
            # np.matmul per batch item, OpenBLAS on one thread (not split)
            (f"batched {n}", lambda x, y: fnp.matmul(x.reshape(4, 128, 256),
                                                     x.reshape(4, 256, 128)), (x, y)),
        ]

    def loss(p, x, t):
        h = fnp.maximum(x @ p["w1"] + p["b1"], 0.0)
        return fnp.mean((h @ p["w2"] - t) ** 2)

    p = {
        "w1": rng.standard_normal((784, 512)).astype(np.float32) * 0.05,
        "b1": np.zeros(512, np.float32),
        "w2": rng.standard_normal((512, 10)).astype(np.float32) * 0.05,
    }
    x = rng.standard_normal((128, 784)).astype(np.float32)
    t = rng.standard_normal((128, 10)).astype(np.float32)
    cases.append(("value_and_grad", ft.value_and_grad(loss), (p, x, t)))

    leaves = ft.tree_util.tree_leaves
    out = {"same": {}, "close": {}, "split": {}}
    for name, f, args in cases:
        jf = jit(f)
        parallel.mode = "never"
        before = parallel.call_counts()
        serial = leaves(jf(*args))
        assert parallel.call_counts()["parallel"] == before["parallel"], name
        parallel.mode = "always"
        par = leaves(jf(*args))
        out["split"][name] = parallel.call_counts()["parallel"] > before["parallel"]
        out["same"][name] = all(np.array_equal(s, q) for s, q in zip(serial, par))
        eager = leaves(f(*args))
        tol = {np.float32: 2e-4}.get(par[0].dtype.type, 1e-10)
        out["close"][name] = all(
            np.allclose(q, e, rtol=tol, atol=tol * max(1.0, np.abs(e).max()))
            for q, e in zip(par, eager))

    # Calls from several Python threads at once: right results (a call that finds the
    # pool busy runs serially).
    step = jit(ft.value_and_grad(loss))
    ref = leaves(step(p, x, t))
    same = []

    def work():
        for _ in range(5):
            got = leaves(step(p, x, t))
            same.append(all(np.array_equal(g, r) for g, r in zip(got, ref)))

    workers = [threading.Thread(target=work) for _ in range(3)]
    for th in workers:
        th.start()
    for th in workers:
        th.join()
    out["threads"] = len(same) == 15 and all(same)

    # fork after threaded code (multiprocessing's default start method on Linux).
    def child(_):
        got = leaves(step(p, x, t))
        return all(np.array_equal(g, r) for g, r in zip(got, ref))

    with multiprocessing.get_context("fork").Pool(2) as mp:
        out["fork"] = mp.map(child, range(2))
    out["blas"] = [blas_before, blas_threads()]
    out["env_same"] = dict(os.environ) == env_before
    out["numba_threads_set"] = "NUMBA_NUM_THREADS" in os.environ
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def two_threads() -> dict:
    if not sys.platform.startswith("linux"):
        pytest.skip("OpenBLAS is found through /proc/self/maps")
    return _run(_WORK, {"FUNCTRACE_NUM_THREADS": "2"})


def test_parallel_results_equal_serial_bit_for_bit(two_threads) -> None:
    assert all(two_threads["close"].values()), two_threads["close"]
    assert all(two_threads["same"].values()), two_threads["same"]
    # Forced, every large product and elementwise kernel split (when OpenBLAS is
    # found, for products).
    split = two_threads["split"]
    assert split["elementwise float32"] and split["elementwise float64"]
    assert split["value_and_grad"]
    assert not split["batched float32"] and not split["batched float64"]
    if two_threads["blas"][0] is not None:
        assert all(v for k, v in split.items() if not k.startswith("batched")), split


def test_concurrent_calls_and_fork_after_threads(two_threads) -> None:
    assert two_threads["threads"]
    assert two_threads["fork"] == [True, True]


def test_user_blas_count_and_environment_untouched(two_threads) -> None:
    before, after = two_threads["blas"]
    assert before == after  # OpenBLAS's own default, as the user's NumPy had it
    assert two_threads["env_same"] and not two_threads["numba_threads_set"]


_USER_BLAS = textwrap.dedent("""
    import ctypes, json
    import numpy as np
    from functrace.jit import jit, parallel

    f = jit(lambda a, b: a @ b)  # one product, no fused kernel
    a = np.ones((256, 256), np.float32)
    f(a, a)
    blas = None
    for line in open("/proc/self/maps"):
        path = line.split()[-1] if line.strip() else ""
        if "openblas" in path.lower() and path.startswith("/"):
            lib = ctypes.CDLL(path)
            for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                         "openblas_get_num_threads"):
                if hasattr(lib, name):
                    blas = getattr(lib, name)()
                    break
            break
    print(json.dumps({"blas": blas, "counts": parallel.call_counts()}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_user_blas_choice_is_kept() -> None:
    env = {"FUNCTRACE_NUM_THREADS": "2", "FUNCTRACE_PARALLEL": "always"}
    two = _run(_USER_BLAS, {**env, "OPENBLAS_NUM_THREADS": "2"})
    one = _run(_USER_BLAS, {**env, "OPENBLAS_NUM_THREADS": "1"})
    if two["blas"] is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS here")
    assert two["blas"] == 2 and one["blas"] == 1
    # More than one OpenBLAS thread chosen: the product stays whole, on OpenBLAS's
    # threads; with one, functrace's threads split it.
    assert two["counts"]["parallel"] == 0 and one["counts"]["parallel"] >= 1


def test_convolution_impl_times_blas_threads_against_one(monkeypatch) -> None:
    """A convolution's impl runs its own BLAS products: with threads on, the driver
    calls it through a BlasImpl that times OpenBLAS's threads against one thread and
    keeps the faster; with one thread, OpenBLAS is scoped to one thread. Results equal
    the eager impl's either way, and OpenBLAS's count is restored."""
    from functrace import lax

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME") * 2.0

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 10, 10)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    want = conv(x, w)
    with parallel.blas_one_thread():  # finds NumPy's OpenBLAS
        pass
    before = parallel._blas.fns[0]() if parallel._blas.fns else None
    for threads_on in (False, True):
        monkeypatch.setattr(parallel, "enabled", lambda on=threads_on: on)
        monkeypatch.setattr(parallel, "mode", "auto")
        f = jit(conv)
        low = f.lower(x, w)
        impls = [
            v
            for v in low._entry.program.driver.__globals__.values()
            if isinstance(v, parallel.BlasImpl)
        ]
        assert len(impls) == (1 if threads_on else 0)
        for _ in range(8):
            np.testing.assert_allclose(f(x, w), want, rtol=1e-5, atol=1e-5)
        if threads_on:
            serial, threaded = impls[0].site.samples
            assert len(serial) == len(threaded) == 3  # both timed in the warm-up
    after = parallel._blas.fns[0]() if parallel._blas.fns else None
    assert before == after


# ---------------------------------------------------------------------------
# Native regions (jit/native.py): a private set of workers in this process
# ---------------------------------------------------------------------------


def _native_case(dtype: type, layout: str, by_rows: bool, seed: int) -> tuple:
    """Operands (C-contiguous, maybe holding the transpose), flags and block bounds."""
    rng = np.random.default_rng(seed)
    m, k, n = (160, 48, 96) if by_rows else (48, 64, 160)
    ta, tb = layout[0] == "T", layout[1] == "T"
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    size = m if by_rows else n
    bounds = np.array(parallel._chunk_bounds(size, 6, 16), np.int64)
    want = (a.T if ta else a) @ (b.T if tb else b)
    return a, b, int(ta), int(tb), int(by_rows), bounds, np.empty((m, n), dtype), want


def _region(kind: str, dtype: type):
    """The region kernel of one implementation: functrace's LLVM IR (the default) or
    Numba's (``FUNCTRACE_JIT_KERNELS=numba``)."""
    from functrace.jit import native_llvm, native_numba

    return (native_llvm if kind == "llvm" else native_numba).region_kernel(np.dtype(dtype))


@pytest.fixture(scope="module", params=["llvm", "numba"])
def native_workers(request):
    from functrace.jit import native

    if blas.gemm("float32") is None:
        pytest.skip("NumPy's BLAS has no cblas gemm found here")
    w = native.Worker(3)  # two worker threads, whatever this process's thread count
    w.kernel = _region(request.param, np.float32)  # the kernel the workers wait in
    yield request.param, w
    w.stop()
    for t in w.threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in w.threads)


@functools.cache
def _gemm_of(source: str, dtype_name: str) -> tuple[int, int]:
    """``(address, wide)`` of a ``cblas_?gemm``: the one compiled products call
    (``chosen``), NumPy's OpenBLAS's, or a private copy of it with NumPy's kernels (what
    ``blas.load_copy`` makes; on a machine with wider kernels than NumPy's, ``chosen``
    is such a copy already)."""
    g = blas.gemm(dtype_name)
    if source != "chosen":
        lib = blas.numpy_openblas()[0]
        if source == "copy":
            if not hasattr(os, "memfd_create"):
                pytest.skip("no memfd_create here")
            lib = blas.load_copy(str(lib._name), blas.corename(lib) or "Haswell")
        g = blas.gemm_in(lib, dtype_name, source)
    assert g is not None
    return g.addr, g.wide


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds OpenBLAS in /proc")
@pytest.mark.parametrize("source", ["chosen", "numpy", "copy"])
def test_native_region_computes_the_serial_blocks_bit_for_bit(native_workers, source) -> None:
    """Every block of a region is computed exactly once, by whichever thread: the
    parallel result equals the same blocks computed in turn, for both dtypes, every
    transposition and both splits, many regions back to back (late claims of a region
    that ended must not touch the next), with NumPy's OpenBLAS and with a private copy
    of it (``blas.py``)."""

    kind, w = native_workers
    for dtype in (np.float32, np.float64):
        kernel = _region(kind, dtype)
        addr, wide = _gemm_of(source, np.dtype(dtype).name)
        for i, (layout, by_rows) in enumerate(
            (lay, rows) for lay in ("NN", "TN", "NT", "TT") for rows in (True, False)
        ):
            a, b, ta, tb, rows_flag, bounds, out, want = _native_case(dtype, layout, by_rows, i)
            assert not w.run(kernel, a, b, out, ta, tb, rows_flag, bounds, addr, wide, False)
            serial = out.copy()
            tol = 1e-4 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(serial, want, rtol=tol, atol=tol)
            for _ in range(50):
                out.fill(np.nan)
                assert w.run(kernel, a, b, out, ta, tb, rows_flag, bounds, addr, wide, True)
                assert np.array_equal(out, serial), (dtype, layout, by_rows)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds OpenBLAS in /proc")
def test_native_workers_take_blocks_and_a_busy_region_runs_serially(native_workers) -> None:
    import threading
    import time

    from functrace.jit import native_layout

    kind, w = native_workers
    kernel = _region(kind, np.float32)
    g = blas.gemm("float32")
    addr, wide = g.addr, g.wide
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 384)).astype(np.float32)
    b = rng.standard_normal((384, 256)).astype(np.float32)
    bounds = np.array(parallel._chunk_bounds(512, 16, 16), np.int64)
    out = np.empty((512, 256), np.float32)
    before, deadline = int(w.ctl[native_layout.TAKEN]), time.monotonic() + 60
    while int(w.ctl[native_layout.TAKEN]) == before and time.monotonic() < deadline:
        w.run(kernel, a, b, out, 0, 0, 1, bounds, addr, wide, True)
    assert int(w.ctl[native_layout.TAKEN]) > before  # the workers computed blocks
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3)
    # While one Python thread's region holds the workers, another's runs serially.
    with w.busy:
        ran = []
        th = threading.Thread(
            target=lambda: ran.append(w.run(kernel, a, b, out, 0, 0, 1, bounds, addr, wide, True))
        )
        th.start()
        th.join()
    assert ran == [False]
