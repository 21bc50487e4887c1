"""Tiered compilation: the first calls run the interpreter while Numba compiles.

Every test starts from an empty kernel cache (a fresh directory, nothing loaded) and
with the direct compiler off (it compiles in milliseconds, so its kernels never wait
for a background compile), so its program really needs Numba; the sync-compiled
reference runs afterwards and loads the kernels the tiered compile made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.jit import api, cache, codegen, jit, kernels, tiered
from functrace.tree_util import tree_leaves

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """An empty cache directory, no kernel loaded, strict kernels, Numba only."""
    monkeypatch.setenv("FUNCTRACE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FUNCTRACE_JIT_KERNELS", "numba")
    monkeypatch.setattr(codegen, "strict_kernels", True)
    kernels.clear_cache()  # the new directory is empty: forgets the loaded kernels
    yield tmp_path / "cache"
    kernels.forget_loaded()


def _leaves(x):
    return [np.asarray(v) for v in tree_leaves(x)]


def _assert_close(a, b, dtype):
    tol = {np.float32: (2e-5, 2e-6), np.float64: (1e-12, 1e-14)}[np.dtype(dtype).type]
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_allclose(x, y, rtol=tol[0], atol=tol[1])


def _assert_same_bits(a, b):
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def _mlp_step(params, x, y):
    def loss(params):
        (w1, b1), (w2, b2) = params
        h = fnp.maximum(x @ w1 + b1, 0.0)
        logits = h @ w2 + b2
        m = fnp.max(logits, axis=1, keepdims=True)
        lse = fnp.log(fnp.sum(fnp.exp(logits - m), axis=1, keepdims=True)) + m
        return -fnp.mean(fnp.sum((logits - lse) * y, axis=1))

    val, g = ft.value_and_grad(loss)(params)
    return val, ft.tree_util.tree_map(lambda p, d: p - 0.1 * d, params, g)


def _mlp_args(dtype):
    rng = np.random.default_rng(0)
    p = [
        (rng.standard_normal((6, 5)).astype(dtype), np.zeros(5, dtype)),
        (rng.standard_normal((5, 3)).astype(dtype), np.zeros(3, dtype)),
    ]
    x = rng.standard_normal((4, 6)).astype(dtype)
    y = np.eye(3, dtype=dtype)[[0, 2, 1, 0]]
    return p, x, y


def _loops(x):
    c, ys = lax.scan(lambda c, xi: (c * 0.5 + fnp.sin(xi), c * xi), x[0], x)
    _, z = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.5 + 1.0), (0, x))
    return c, ys, z


def _reductions(x):
    e = fnp.exp(x - fnp.max(x, axis=1, keepdims=True))
    return e / fnp.sum(e, axis=1, keepdims=True), fnp.sum(x * x), fnp.min(x, axis=0)


def _program(name, dtype):
    rng = np.random.default_rng(1)
    if name == "mlp":
        return _mlp_step, _mlp_args(dtype)
    x = rng.standard_normal((5, 4)).astype(dtype)
    return {"loops": _loops, "reductions": _reductions}[name], (x,)


@pytest.mark.parametrize(
    ("name", "dtype", "where"),
    [
        ("mlp", np.float32, "tiered"),
        ("loops", np.float64, "thread"),
        ("reductions", np.float32, "thread"),
        ("reductions", np.float64, "process"),
    ],
)
def test_tiered_equals_sync(cold, name, dtype, where) -> None:
    fun, args = _program(name, dtype)
    f = jit(fun, compile=where)
    first = f(*args)  # the interpreter
    assert f.interpreted_calls == 1 and f.switches == 0 and f.compile_count == 0
    assert f.pending_compiles == 1
    assert f.wait_compiled(timeout=120)
    after = f(*args)  # the compiled driver, installed by this call
    assert f.switches == 1 and f.compile_count > 0 and f.pending_compiles == 0
    assert f.interpreted_calls == 1
    ref = jit(fun, compile="sync")(*args)
    _assert_same_bits(after, ref)
    _assert_close(first, ref, dtype)
    assert type(first) is type(ref)
    assert [type(v) for v in tree_leaves(first)] == [type(v) for v in tree_leaves(ref)]


def test_switch_reaches_fast_paths(cold) -> None:
    f = jit(lambda x: fnp.tanh(x) * 2.0 + 1.0, compile="thread")
    x = np.linspace(-1, 1, 7)
    interp = f(x)
    f(x)  # the fast path's entry is the interpreter's callable
    assert f.interpreted_calls == 2
    f.wait_compiled()
    out = f(x)
    assert f._fast[((x.shape, x.dtype),)][0] is f.lower(x)._entry.driver
    f(x)
    assert f.interpreted_calls == 2 and f.switches == 1
    np.testing.assert_allclose(interp, out, rtol=1e-14)


def test_switch_keeps_array_fast_paths(cold) -> None:
    """A training loop feeding functrace.Array results back takes the fast path that
    views them as plain arrays, before the switch (interpreter) and after (compiled)."""
    f = jit(lambda p: {"w": fnp.tanh(p["w"]) * 0.5, "b": p["b"] + 1.0}, compile="thread")
    ref = jit(f._fun, compile="sync")
    p = q = {"w": ft.Array(np.linspace(-1, 1, 6)), "b": ft.Array(np.zeros(3))}
    for _ in range(3):
        p, q = f(p), ref(q)
    assert f.interpreted_calls >= 1 and len(f._tree_fast) == 1
    f.wait_compiled()
    interpreted = f.interpreted_calls
    for _ in range(3):
        p, q = f(p), ref(q)
    assert f.switches == 1 and len(f._tree_fast) == 1
    assert f.interpreted_calls == interpreted  # the compiled driver ran them
    for a, b in zip(tree_leaves(p), tree_leaves(q)):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_background_error_surfaces(cold, monkeypatch) -> None:
    def broken(dispatcher, signature):
        raise RuntimeError("injected compile failure")

    monkeypatch.setattr(kernels, "_compile_signature", broken)
    f = jit(lambda x: fnp.exp(x) + x, compile="thread")
    x = np.arange(3.0)
    np.testing.assert_allclose(f(x), np.exp(x) + x)  # the interpreter does not wait
    f.wait_compiled()
    with pytest.raises(RuntimeError, match="injected compile failure"):
        f(x)
    monkeypatch.undo()
    monkeypatch.setenv("FUNCTRACE_JIT_KERNELS", "numba")  # (undone above)
    codegen.strict_kernels = True
    # the failed signature was dropped: the next call compiles again
    np.testing.assert_allclose(f(x), np.exp(x) + x)
    assert f.wait_compiled(timeout=120)
    f(x)
    assert f.switches == 1 and f.trace_count == 2


def test_background_kernel_fallback_warns(cold, monkeypatch) -> None:
    # A kernel Numba cannot compile falls back to NumPy calls with a RuntimeWarning,
    # as a synchronous compile does; the results stay right.
    def broken(dispatcher, signature):
        raise TypeError("injected typing gap")

    monkeypatch.setattr(kernels, "_compile_signature", broken)
    monkeypatch.setattr(codegen, "strict_kernels", False)
    f = jit(lambda x: fnp.cos(x) * 3.0 - x, compile="thread")
    x = np.arange(4.0)
    with pytest.warns(RuntimeWarning, match="injected typing gap"):
        f(x)
        f.wait_compiled()
        out = f(x)
    assert f.switches == 1 and f.compile_count == 0
    np.testing.assert_allclose(out, np.cos(x) * 3.0 - x)


def test_debug_nans_on_tiered_path(cold) -> None:
    f = jit(lambda x: fnp.log(x) * 2.0, compile="thread")
    with ft.config.override(debug_nans=True):
        with pytest.raises(FloatingPointError, match="log"):
            f(np.array([1.0, -1.0]))
        f.wait_compiled()
        np.testing.assert_allclose(f(np.array([1.0, 2.0])), np.log([1.0, 2.0]) * 2.0)


def test_no_numba_and_warm_cache_skip_the_interpreter(cold) -> None:
    g = jit(ft.value_and_grad(lambda x, y: x * y + x**2), compile="tiered")
    assert [float(v) for v in g(2.0, 3.0)] == [10.0, 7.0]
    assert g.interpreted_calls == 0 and g.switches == 0
    f = jit(lambda x: fnp.sqrt(x) + 1.0, compile="thread")
    x = np.arange(5.0)
    f(x)
    f.wait_compiled()
    f(x)
    h = jit(lambda x: fnp.sqrt(x) + 1.0, compile="tiered")  # the same kernel, loaded
    h(x)
    assert h.interpreted_calls == 0 and h.compile_count == 0


def test_lower_waits_for_the_compile(cold) -> None:
    f = jit(lambda x: fnp.sin(x) ** 2, compile="thread")
    x = np.arange(3.0)
    f(x)
    text = f.lower(x).as_text()
    assert "kernel _k" in text and f.switches == 1 and f.pending_compiles == 0


def test_debug_env_prints_phases(cold, monkeypatch, capsys) -> None:
    monkeypatch.setenv("FUNCTRACE_DEBUG_JIT", "1")
    f = jit(lambda x: fnp.exp(x) * 0.5, compile="thread")
    x = np.arange(3.0)
    f(x)
    f.wait_compiled()
    f(x)
    err = capsys.readouterr().err
    for phase in (
        "phase trace",
        "phase AD",
        "phase interpreter first call",
        "switch to the compiled path",
        "phase lowering",
        "phase Numba compile",
        "phase cache load",
    ):
        assert phase in err, phase


def test_compile_argument_is_checked(monkeypatch) -> None:
    with pytest.raises(ValueError, match="jit: expected compile to be one of 'sync'"):
        jit(lambda x: x, compile="eager")
    monkeypatch.setenv("FUNCTRACE_JIT_COMPILE", "later")
    with pytest.raises(ValueError, match="FUNCTRACE_JIT_COMPILE.*got 'later'"):
        jit(lambda x: x * 2.0)(np.ones(2))
    monkeypatch.setenv("FUNCTRACE_JIT_COMPILE", "sync")
    assert tiered.env_mode() == "sync"
    assert api.JitFunction(lambda x: x, compile=None)._mode is None


_EXIT_SCRIPT = textwrap.dedent("""
    import glob, json, os, sys, time
    import numpy as np
    import functrace.numpy as fnp
    from functrace.jit import jit, tiered
    f = jit(lambda x: fnp.tanh(fnp.exp(x) * 0.5) + x, compile=sys.argv[1])
    x = np.linspace(0.0, 1.0, 8)
    out = f(x)
    t = time.perf_counter()  # exit once Numba has begun compiling
    pattern = os.path.join(os.environ["FUNCTRACE_CACHE_DIR"], "_functrace_kernel_*.py")
    while not glob.glob(pattern) and time.perf_counter() - t < 60:
        time.sleep(0.01)
    print(json.dumps({"out": np.asarray(out).tolist(), "switches": f.switches,
                      "worker": tiered._worker and tiered._worker.proc.pid}))
""")


@pytest.mark.parametrize("where", ["process", "thread"])
def test_exit_mid_compile_leaves_a_consistent_cache(tmp_path, monkeypatch, where) -> None:
    d = tmp_path / "cache"
    env = dict(
        os.environ,
        FUNCTRACE_CACHE_DIR=str(d),
        FUNCTRACE_JIT_KERNELS="numba",
        PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
    )
    res = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT, where],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    first = json.loads(res.stdout.strip().splitlines()[-1])
    assert first["switches"] == 0  # it exited while Numba compiled
    if where == "process":
        with pytest.raises(ProcessLookupError):  # the worker was terminated and reaped
            os.kill(first["worker"], 0)
    # This process uses the cache next: unsealed leftovers are replaced silently.
    monkeypatch.setenv("FUNCTRACE_CACHE_DIR", str(d))
    monkeypatch.setenv("FUNCTRACE_JIT_KERNELS", "numba")
    monkeypatch.setattr(codegen, "strict_kernels", True)
    kernels.forget_loaded()
    for name in [n for n in sys.modules if n.startswith(cache.MODULE_PREFIX)]:
        cache.forget_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jit(lambda x: fnp.tanh(fnp.exp(x) * 0.5) + x, compile="sync")(np.linspace(0, 1, 8))
    np.testing.assert_allclose(out, first["out"], rtol=1e-14)
    sealed = [n for n in os.listdir(d / "__pycache__") if n.endswith(".ftsum")]
    assert len(sealed) == 1
    kernels.forget_loaded()
