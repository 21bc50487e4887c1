"""Compiled code on several threads (``NUMBA_NUM_THREADS >= 2``, see jit/parallel.py).

The thread count is fixed when Numba is imported, so the multi-threaded cases run in
a subprocess; this process (single-threaded, like the rest of the suite) checks the
rules that decide what runs in parallel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from functrace.jit import kernels, parallel

pytestmark = pytest.mark.usefixtures("private_jit_cache")  # subprocesses compile into it

_SCRIPT = textwrap.dedent("""
    import json
    import threading
    import numpy as np
    import functrace as ft
    import functrace.numpy as fnp
    from functrace.jit import jit, parallel

    rng = np.random.default_rng(0)
    seen = {}

    def check(name, f, *args):
        expected = f(*args)
        jf = jit(f)
        got = jf(*args)
        for g, e in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(expected)):
            assert g.dtype == e.dtype and g.shape == e.shape, (name, g.dtype, g.shape)
            tol = 2e-4 if g.dtype == np.float32 else 1e-10
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol * np.abs(e).max(), err_msg=name)
        text = jf.lower(*args).as_text()
        seen[name] = {"prange": "prange(" in text, "pdot": "parallel matrix product" in text}

    for dt in (np.float32, np.float64):
        a = rng.standard_normal((256, 384)).astype(dt)
        b = rng.standard_normal((384, 192)).astype(dt)
        w = rng.standard_normal((16, 4096)).astype(dt)
        v = rng.standard_normal((4096, 512)).astype(dt)
        n = dt.__name__
        check(f"NN {n}", lambda a, b: a @ b, a, b)
        check(f"TN {n}", lambda a, b: a.T @ a, a, b)
        check(f"NT {n}", lambda a, b: b @ b.T, a, b)
        check(f"TT {n}", lambda a, b: fnp.matmul(b.T, a.T), a, b)
        check(f"columns {n}", lambda w, v: w @ v, w, v)  # 16 rows: split by columns
        check(f"strided {n}", lambda a, b: a[:, ::2] @ b[::2], a, b)
        check(f"transposed input {n}", lambda a, b: a @ b, np.asfortranarray(a), b)
        x = rng.standard_normal((512, 256)).astype(dt)
        y = rng.standard_normal((1, 256)).astype(dt)
        check(f"elementwise {n}", lambda x, y: fnp.sin(x) * 2 + y, x, y)

    # A training step: products, fused elementwise kernels and reductions together.
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
    check("value_and_grad", ft.value_and_grad(loss), p, x, t)

    # Calls from several Python threads at once share Numba's pool safely.
    step = jit(ft.value_and_grad(loss))
    ref = ft.tree_util.tree_leaves(step(p, x, t))
    same = []

    def work():
        for _ in range(5):
            out = ft.tree_util.tree_leaves(step(p, x, t))
            same.append(all(np.array_equal(a, b) for a, b in zip(out, ref)))

    workers = [threading.Thread(target=work) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(same) == 15 and all(same)
    print(json.dumps({"enabled": parallel.enabled(), "seen": seen}))
""")


def _run(threads: str) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=threads)
    env.pop("OPENBLAS_NUM_THREADS", None)  # functrace's default: one BLAS thread
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="OpenBLAS found via /proc")
def test_two_threads_match_eager_and_split_the_large_work() -> None:
    out = _run("2")
    seen = out["seen"]
    if not out["enabled"]:
        pytest.skip("Numba has neither TBB nor OpenMP here: compiled code stays serial")
    for name in ("NN", "TN", "NT", "TT", "columns", "strided", "transposed input"):
        for dt in ("float32", "float64"):
            assert seen[f"{name} {dt}"]["pdot"], (name, dt)
    assert seen["elementwise float32"]["prange"] and seen["elementwise float64"]["prange"]
    assert seen["value_and_grad"]["pdot"] and seen["value_and_grad"]["prange"]


def test_one_thread_makes_no_parallel_code() -> None:
    out = _run("1")
    assert not out["enabled"]
    assert not any(s["pdot"] or s["prange"] for s in out["seen"].values())


def test_thread_count_comes_from_numba_or_its_variable(monkeypatch) -> None:
    assert parallel.threads() == 1  # the suite's setting (conftest)
    assert not parallel.enabled()
    assert parallel.dot_for(np.dtype(np.float32), 1 << 30) is None
    spec = kernels.KernelSpec(ndim=1)
    assert not parallel.kernel_in_parallel(spec, (1 << 20,))
    monkeypatch.setitem(sys.modules, "numba", None)  # not imported yet: read the variable
    for value, expected in (("3", 3), ("0", 1), ("many", 1)):
        monkeypatch.setenv("NUMBA_NUM_THREADS", value)
        assert parallel.threads() == expected


def test_parallel_kernel_source_uses_prange_on_the_outer_loop_only() -> None:
    spec = kernels.KernelSpec(ndim=2)
    spec.arrays = [(np.dtype(np.float32), (True, True))]
    spec.outputs = [np.dtype(np.float32)]
    spec.body = [(2, "v0:f32 = sin a0", "v0 = np.float32(np.sin(a0))")]
    spec.stores = ["v0"]
    serial = kernels.kernel_source(spec)
    spec.parallel = True
    par = kernels.kernel_source(spec)
    assert "prange" not in serial and "@kernel_jit\n" in serial
    assert "for i0 in prange(n0):" in par and "for i1 in range(n1):" in par
    assert "@kernel_jit_parallel" in par
