"""The jit driver's buffer pool (``functrace/_buffers.py``) and the opt-in malloc tuning.

A compiled program reuses its large arrays (outputs included) across calls once
nobody else holds them. These tests check that results stay bit-identical, that
nothing the user holds (an output, a view, a slice, a memoryview, an argument in
use) is ever written by a later call, that the pool stays bounded, that concurrent
calls never share a buffer, that the pool removes the page faults of fresh
allocations, and that glibc's process-wide settings are only changed on request.
"""

from __future__ import annotations

import collections
import gc
import resource
import sys
import threading
import tracemalloc
from typing import Any

import numpy as np
import pytest

import functrace.numpy as fnp
from functrace import _buffers as buffers
from functrace.jit import jit, kernels

N = 160  # (N, N) float64 arrays are 200 KiB: above buffers.MIN_BYTES


def _step(w: Any, x: Any) -> Any:
    """Kernel outputs, a large product (np.dot into a pooled buffer) and a reduction."""
    h = fnp.tanh(x @ w)  # x: (2N, N) -> (2N, N), 400 KiB: not a scratch buffer
    return w * 0.5 + 0.25 * (h[:N] - w), h, fnp.sum(h * h, axis=0)


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, N)), rng.standard_normal((2 * N, N))


def _no_pool(fun: Any, *args: Any) -> Any:
    """``jit(fun)`` lowered for ``args`` without the buffer pool (the reference)."""
    old = buffers.enabled
    buffers.enabled = False
    try:
        f = jit(fun)
        f(*args)  # lowered now, while pools are off
    finally:
        buffers.enabled = old
    return f


def _program(f: Any, *args: Any) -> Any:
    return f.lower(*args)._entry.program


def _addr(a: Any) -> int:
    return int(np.asarray(a).__array_interface__["data"][0])


def test_driver_uses_the_pool_for_outputs_and_products() -> None:
    f = jit(_step)
    w, x = _inputs(0)
    prog = _program(f, w, x)
    assert len(prog.buffers) == 2  # (N, N) outputs and the (2N, N) product/tanh
    lines = prog.driver_source.splitlines()
    dot = lines[next(i for i, ln in enumerate(lines) if "= dot_general" in ln) + 1]
    assert "_b" in dot  # the product writes into a pooled buffer (np.dot or a BLAS call)
    assert "_b" not in _program(_no_pool(_step, w, x), w, x).driver_source
    # Dropped outputs come back: the next call writes into the same memory.
    first = f(w, x)
    addrs = [_addr(first[0]), _addr(first[1])]
    del first
    again = f(w, x)
    assert [_addr(again[0]), _addr(again[1])] == addrs
    assert prog.buffers.nbytes() <= prog.buffers.capacity_bytes()


def test_results_are_bit_identical_over_many_calls() -> None:
    f, ref = jit(_step), _no_pool(_step, *_inputs(0))
    for i in range(40):
        args = _inputs(i % 3)
        got, want = f(*args), ref(*args)
        for g, r in zip(got, want):
            assert g.dtype == r.dtype and g.shape == r.shape
            np.testing.assert_array_equal(g, r)


def test_held_outputs_views_and_slices_never_change() -> None:
    f = jit(_step)
    w, x = _inputs(1)
    out = f(w, x)
    plain = np.asarray(out[0])  # a plain ndarray view of the Array
    held = {
        "array": out[0],
        "slice": out[0][3:, ::2],
        "transposed": out[1].T,
        "reshaped": plain.reshape(-1),
        "row": out[2][5:],
        "memoryview": np.frombuffer(memoryview(out[1]), dtype=np.float64),
        "0-d view": out[1][2, 3, ...],
        "0-d Array": out[0][4:5, 6:7].reshape(()),
    }
    assert held["0-d view"].ndim == 0 and np.shares_memory(held["0-d view"], out[1])
    assert held["0-d Array"].ndim == 0 and np.shares_memory(held["0-d Array"], out[0])
    expected = {k: np.array(v) for k, v in held.items()}
    only_view = f(w, x)[0][::3]  # the Array itself is dropped, its view is kept
    only_view_val = np.array(only_view)
    del out, plain
    gc.collect()
    for i in range(20):
        w2, x2 = _inputs(10 + i)
        f(w2, x2)
        f(w2 * 2.0, x2)
    for k, v in held.items():
        np.testing.assert_array_equal(v, expected[k], err_msg=k)
    np.testing.assert_array_equal(only_view, only_view_val)


def test_outputs_passed_back_in_and_training_loop_reuse() -> None:
    def step(w: Any, x: Any) -> Any:
        return w - 0.01 * fnp.tanh(w * x), x

    w, x = _inputs(2)
    x = x[:N]
    f, ref = jit(step), _no_pool(step, w, x)
    a, ra = (w, x), (w, x)
    addrs = []
    for _ in range(8):
        a, ra = f(*a), ref(*ra)  # last step's result is this step's input
        addrs.append(_addr(a[0]))
        np.testing.assert_array_equal(a[0], ra[0])
    # the step before last's parameters are free again: two buffers alternate
    assert addrs[2:] == addrs[:2] * 3
    # an output passed back in while also held: the call must not write into it
    keep = f(*a)
    keep_val = np.array(keep[0])
    twice = f(keep[0], keep[0])
    np.testing.assert_array_equal(keep[0], keep_val)
    np.testing.assert_array_equal(twice[0], ref(keep_val, keep_val)[0])
    assert not np.shares_memory(twice[0], keep[0])


def test_memory_stays_bounded_over_1000_calls() -> None:
    def step(w: Any) -> Any:
        return w * 0.999 + 0.001, fnp.sin(w)

    f = jit(step)
    w = np.ones((N, N))
    f(w)
    prog = _program(f, w)
    cap = prog.buffers.capacity_bytes()
    assert cap == 2 * 2 * w.nbytes  # two sites of one kind, two buffers each
    recent: collections.deque[Any] = collections.deque(maxlen=3)  # the user keeps some
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(1000):
            out = f(w)
            if i % 7 == 0:
                recent.append(out)
            del out
            if i == 99:
                base = tracemalloc.get_traced_memory()[0]
        end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert prog.buffers.nbytes() <= cap
    # after warm-up: at most a change in which calls' arrays the user keeps
    assert end - base < 3 * 2 * w.nbytes + (256 << 10)


def test_concurrent_calls_from_threads_never_share_buffers() -> None:
    def step(w: Any, x: Any) -> Any:
        return fnp.tanh(w * x + 1.0), w * 3.0 - x

    inputs = [tuple(a[:N] for a in _inputs(20 + t)) for t in range(4)]
    f, ref = jit(step), _no_pool(step, *inputs[0])
    expected = [ref(*args) for args in inputs]
    f(*inputs[0])
    errors: list[str] = []
    start = threading.Barrier(len(inputs))

    def work(t: int) -> None:
        start.wait()
        for i in range(100):
            got = f(*inputs[t])
            for g, e in zip(got, expected[t]):
                if not np.array_equal(g, e):
                    errors.append(f"thread {t}, call {i}")
                    return

    threads = [threading.Thread(target=work, args=(t,)) for t in range(len(inputs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert (
        _program(f, *inputs[0]).buffers.nbytes() <= _program(f, *inputs[0]).buffers.capacity_bytes()
    )


def _minflt() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's page faults")
def test_page_faults_per_call_drop_after_warm_up() -> None:
    def step(a: Any, b: Any) -> Any:
        return a * b + 1.0, a - b, fnp.sin(a), a * 2.0

    a, b = np.ones((512, 512)), np.full((512, 512), 2.0)  # four 2 MiB outputs a call
    pages = 4 * a.nbytes // resource.getpagesize()
    f, ref = jit(step), _no_pool(step, a, b)
    for _ in range(3):
        f(a, b)
        ref(a, b)
    counts = {}
    for name, g in (("pool", f), ("none", ref), ("pool2", f)):
        f0 = _minflt()
        for _ in range(10):
            g(a, b)
        counts[name] = (_minflt() - f0) / 10
    # Fresh memory faults once per page written (when glibc returns freed blocks to
    # the OS, as it does by default for blocks this size); pooled buffers do not.
    assert max(counts["pool"], counts["pool2"]) < pages / 4, (counts, pages)


class _FakeMallopt:
    """Records its calls; ``argtypes`` is settable as on a ctypes function."""

    argtypes: Any = None

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


class _FakeLibc:
    def __init__(self) -> None:
        self.mallopt = _FakeMallopt()
        self.calls = self.mallopt.calls

    def gnu_get_libc_version(self) -> bytes:
        return b"2.36"


@pytest.fixture
def fake_libc(monkeypatch: pytest.MonkeyPatch) -> _FakeLibc:
    libc = _FakeLibc()
    monkeypatch.setattr(kernels.ctypes, "CDLL", lambda name: libc)
    for var in ("FUNCTRACE_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    return libc


def test_mallopt_is_not_called_by_default(fake_libc: _FakeLibc) -> None:
    assert kernels.tune_malloc() is False
    kernels._njit.cache_clear()
    try:
        kernels._njit()  # what the first kernel load runs
    finally:
        kernels._njit.cache_clear()
    assert fake_libc.calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_mallopt_opt_in(fake_libc: _FakeLibc, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUNCTRACE_MALLOC_TUNING", "1")
    kernels._njit.cache_clear()
    try:
        kernels._njit()
    finally:
        kernels._njit.cache_clear()
    m_trim_threshold, m_mmap_threshold = -1, -3
    assert fake_libc.calls == [(m_mmap_threshold, 32 << 20), (m_trim_threshold, 256 << 20)]
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000")  # the user's own choice wins
    fake_libc.calls.clear()
    assert kernels.tune_malloc() is False and fake_libc.calls == []
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    monkeypatch.setenv("FUNCTRACE_MALLOC_TUNING", "0")
    assert kernels.tune_malloc() is False and fake_libc.calls == []


def test_every_array_pooled_in_loops_conds_and_grads(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every array pooled (``MIN_BYTES`` 1): Python-loop bodies (their own drivers,
    whose outputs are the next iteration's inputs), ``cond`` branches, a native loop and
    a gradient give the bits of the drivers without pools, call after call."""
    from functrace import grad, lax

    def body(c: Any, x: Any) -> Any:
        s = fnp.sort(c * x + 1.0)  # sort keeps the loop in Python: a body driver
        return fnp.tanh(s), s[::2] * 2.0

    def fun(c: Any, xs: Any, w: Any) -> Any:
        c2, ys = lax.scan(body, c, xs)
        n = lax.fori_loop(0, 3, lambda i, v: v * 0.5 + w, w)  # a native loop
        br = lax.cond(fnp.sum(c2) > 0.0, lambda v: v * 3.0, lambda v: fnp.sin(v), n)
        g = grad(lambda v: fnp.sum(fnp.tanh(v @ v.T)))(w)
        return c2, ys, br, g

    rng = np.random.default_rng(5)
    args = (rng.standard_normal(8), rng.standard_normal((4, 8)), rng.standard_normal((6, 6)))
    monkeypatch.setattr(buffers, "MIN_BYTES", 1)
    ref = _no_pool(fun, *args)
    f = jit(fun)
    assert "_b" in f.lower(*args).as_text()
    held = f(*args)
    held_copy = [np.array(h) for h in held]
    for i in range(6):
        a = tuple(x * (1.0 + 0.1 * i) for x in args)
        for g, r in zip(f(*a), ref(*a)):
            np.testing.assert_array_equal(g, r)
    for h, c in zip(held, held_copy):
        np.testing.assert_array_equal(h, c)
