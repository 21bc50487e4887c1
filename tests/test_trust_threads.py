"""Trust issue, item 3: transforms run concurrently in several Python threads.

Trace state (the trace stack, the dynamic trace, ``disable_jit``) is per thread,
and jit's caches, the kernel cache and Numba compilation are safe under
concurrent use. Every threaded result must equal the serial one bit for bit,
and the process must stay healthy afterwards (including after a thread whose
function raised).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import core, lax
from functrace.errors import UnexpectedTracerError
from functrace.tree_util import tree_leaves

N_THREADS = 4


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads every few microseconds, so traces really interleave."""
    prev = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(prev)


def run_threads(work: Callable[[int], Any], n: int = N_THREADS) -> list[Any]:
    """Run ``work(i)`` in ``n`` threads started together; their results (or the
    exception each raised, re-raised here for the first one that failed)."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def target(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = work(i)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors[i] = err

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a worker thread hung"
    for err in errors:
        if err is not None:
            raise err
    return results


def assert_bitwise_equal(got: Any, expected: Any, what: str) -> None:
    g, e = tree_leaves(got), tree_leaves(expected)
    assert len(g) == len(e), what
    for a, b in zip(g, e):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype)
        assert a.tobytes() == b.tobytes(), f"{what}: threaded result differs from serial"


# ---------------------------------------------------------------------------
# The functions: one per transform (and composition) the issue names
# ---------------------------------------------------------------------------


def loss(w: Any, x: Any) -> Any:
    return fnp.sum(fnp.tanh(x @ w) ** 2) + 0.1 * fnp.sum(w * w)


def scalar_f(x: Any) -> Any:
    return fnp.sum(fnp.sin(x) * fnp.exp(-x * x))


def vec_f(x: Any) -> Any:
    return fnp.tanh(x) * fnp.cumsum(x)


@ft.custom_jvp
def softplus(x: Any) -> Any:
    return fnp.log1p(fnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return softplus(x), t * lax.logistic(x)


@ft.custom_vjp
def clip_grad(x: Any) -> Any:
    return x


clip_grad.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -0.5, 0.5),))


def custom_f(x: Any) -> Any:
    return fnp.sum(clip_grad(softplus(x) * 3.0) ** 2)


def cond_f(x: Any) -> Any:
    return lax.cond(fnp.sum(x) > 0.0, lambda v: fnp.sin(v) * 2.0, lambda v: fnp.cos(v), x)


def while_f(x: Any) -> Any:
    def body(c: Any) -> Any:
        i, v = c
        return i + 1, v * 0.9 + fnp.sin(v)

    return lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]


def scan_f(x: Any) -> Any:
    def step(c: Any, xi: Any) -> Any:
        c = fnp.tanh(c * 0.5 + xi)
        return c, c * 2.0

    c, ys = lax.scan(step, fnp.zeros(x.shape[1:]), x)
    return fnp.sum(c) + fnp.sum(ys * ys)


W = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
X = np.linspace(-2.0, 1.5, 20).reshape(5, 4)
V = np.linspace(-1.5, 2.0, 6)
jit_shared = ft.jit(loss)  # one JitFunction object called from every thread
jit_grad_shared = ft.jit(ft.grad(loss))


def hook_case() -> Any:
    seen: list[np.ndarray] = []

    def f(x: Any) -> Any:
        y = ft.grad_hook(x * 2.0, lambda ct: seen.append(np.asarray(ct).copy()))
        return fnp.sum(fnp.sin(y))

    g = ft.grad(f)(V)
    assert len(seen) == 1  # each thread sees only its own hook call
    return g, seen[0]


def linearize_case() -> Any:
    out, f_jvp = ft.linearize(vec_f, V)
    return out, f_jvp(np.ones_like(V))


def vjp_case() -> Any:
    out, pullback = ft.vjp(loss, W, X)
    return out, pullback(np.float64(1.0))


def shard_map_loss(w: Any, x: Any) -> Any:
    """A data-parallel loss: JAX's check_vma rules scale and sum cotangents at the ends
    of reverse mode, from state that is per thread."""
    from functrace.sharding import PartitionSpec as P

    mesh = ft.make_mesh((2,), ("d",))

    def body(w: Any, xb: Any) -> Any:
        return lax.pmean(fnp.sum(fnp.tanh(xb @ w) ** 2), "d")

    return ft.shard_map(body, mesh=mesh, in_specs=(P(), P("d")), out_specs=P())(w, x)


CASES: dict[str, Callable[[], Any]] = {
    "grad": lambda: ft.grad(loss)(W, X),
    "value_and_grad": lambda: ft.value_and_grad(loss, argnums=(0, 1))(W, X),
    "vjp": vjp_case,
    "jvp": lambda: ft.jvp(vec_f, (V,), (np.ones_like(V),)),
    "linearize": linearize_case,
    "jacfwd": lambda: ft.jacfwd(vec_f)(V),
    "jacrev": lambda: ft.jacrev(vec_f)(V),
    "hessian": lambda: ft.hessian(scalar_f)(V),
    "vmap": lambda: ft.vmap(vec_f)(X),
    "jit_shared": lambda: jit_shared(W, X),
    "jit_fresh": lambda: ft.jit(loss)(W, X),  # traces anew in every call
    "jit(grad)": lambda: jit_grad_shared(W, X),
    "grad(jit)": lambda: ft.grad(ft.jit(loss))(W, X),
    "vmap(grad)": lambda: ft.vmap(ft.grad(scalar_f))(X),
    "make_jaxpr": lambda: str(ft.make_jaxpr(loss)(W, X)).encode(),
    "custom_rules": lambda: (ft.grad(custom_f)(V), ft.jit(ft.grad(custom_f))(V)),
    "grad_hook": hook_case,
    "cond": lambda: (ft.grad(lambda x: fnp.sum(cond_f(x)))(V), ft.jit(cond_f)(V)),
    "while_loop": lambda: (ft.jvp(while_f, (V,), (np.ones_like(V),)), ft.jit(while_f)(V)),
    "scan": lambda: (ft.grad(scan_f)(X), ft.jit(scan_f)(X), ft.vmap(scan_f)(X[None] * 1.5)),
    "shard_map(grad)": lambda: (
        ft.grad(shard_map_loss)(W, X[:4]),
        ft.jit(ft.grad(shard_map_loss))(W, X[:4]),
    ),
}


def _as_bytes_tree(x: Any) -> Any:
    return np.frombuffer(x, np.uint8) if isinstance(x, bytes) else x


def test_item3_every_transform_in_threads_matches_serial(fast_switching: None) -> None:
    names = list(CASES)
    serial = {n: _as_bytes_tree(CASES[n]()) for n in names}  # also compiles the jits
    traced_before = jit_shared.trace_count

    def work(i: int) -> dict[str, list[Any]]:
        got: dict[str, list[Any]] = {n: [] for n in names}
        order = names[i:] + names[:i]  # every thread starts on a different transform
        for _ in range(3):
            for n in order:
                got[n].append(_as_bytes_tree(CASES[n]()))
        assert core.trace_stack() == [core._base]  # this thread's stack is at its base
        return got

    for got in run_threads(work):
        for n in names:
            for r in got[n]:
                assert_bitwise_equal(r, serial[n], n)
    assert jit_shared.trace_count == traced_before  # a cached signature is never retraced
    assert core.trace_stack() == [core._base]


def test_item3_first_call_of_shared_jit_traces_once(fast_switching: None) -> None:
    f = ft.jit(lambda w, x: fnp.tanh(x @ w) * 2.0 + 1.0)
    results = run_threads(lambda i: f(W, X))
    assert f.trace_count == 1  # the other threads waited for the one trace
    expected = f(W, X)
    for r in results:
        assert_bitwise_equal(r, expected, "shared jit, first call")


def test_item3_concurrent_compile_of_one_kernel(private_jit_cache: None) -> None:
    # Empty kernel cache, strict kernels: every thread lowers the same new kernel at
    # once; it is compiled once and no thread falls back or fails.
    def make() -> Any:
        return ft.jit(lambda x: fnp.exp(-x * x) * 3.0 - fnp.cos(x) / 7.0)

    def work(i: int) -> Any:
        g = make()
        return g(V), g.compile_count

    results = run_threads(work)
    n_kernels = len(make().lower(V).kernel_sources)
    assert n_kernels >= 1
    assert sum(c for _, c in results) == n_kernels  # each kernel compiled by one thread
    expected = make()(V)
    for r, _ in results:
        assert_bitwise_equal(r, expected, "concurrent first compile")


class _Boom(Exception):
    pass


def test_item3_process_healthy_after_threads_raise(fast_switching: None) -> None:
    def failing(x: Any) -> Any:
        y = fnp.sin(x) * 2.0
        if y.shape[0] > 0:
            raise _Boom("raised while traced")
        return y

    def work(i: int) -> Any:
        for transform in (
            lambda: ft.jit(failing)(V),
            lambda: ft.grad(lambda x: fnp.sum(ft.vmap(failing)(x)))(X),
            lambda: ft.jit(ft.grad(lambda x: fnp.sum(ft.jit(failing)(x))))(V),
            lambda: ft.make_jaxpr(lambda x: ft.jvp(failing, (x,), (x,)))(V),
            lambda: ft.grad(lambda x: lax.cond(True, failing, failing, x).sum())(V),
        ):
            with pytest.raises(_Boom):
                transform()
            assert core.trace_stack() == [core._base]
        return ft.grad(scalar_f)(V) if i % 2 else ft.jit(scalar_f)(V)

    results = run_threads(work)
    assert_bitwise_equal(results[1], ft.grad(scalar_f)(V), "after raising")
    assert_bitwise_equal(results[0], ft.jit(scalar_f)(V), "after raising")
    # The main thread and any new thread are at the base; a fresh jit still traces.
    assert core.trace_stack() == [core._base] and not core.dynamic_trace_active()
    fresh = ft.jit(lambda x: x * 3.0 + 1.0)
    np.testing.assert_array_equal(fresh(V), V * 3.0 + 1.0)
    assert fresh.trace_count == 1
    stacks = run_threads(lambda i: (list(core.trace_stack()), core.dynamic_trace_active()))
    assert stacks == [([core._base], False)] * N_THREADS


def test_item3_disable_jit_is_per_thread() -> None:
    entered, release = threading.Event(), threading.Event()
    f = ft.jit(lambda x: x + 1.0)

    def eager_thread() -> None:
        with ft.disable_jit():
            entered.set()
            release.wait(timeout=30)
            f(1.0)

    t = threading.Thread(target=eager_thread)
    t.start()
    try:
        assert entered.wait(timeout=30)
        assert f(np.float64(2.0)) == 3.0
        assert f.trace_count == 1  # this thread compiled while the other ran eagerly
    finally:
        release.set()
        t.join(timeout=30)
    assert f.trace_count == 1  # the disabled thread never traced


def test_item3_tracer_passed_to_another_thread_is_rejected() -> None:
    box: list[Any] = []
    started, done = threading.Event(), threading.Event()
    err: list[BaseException] = []

    def f(x: Any) -> Any:
        box.append(x)
        started.set()
        done.wait(timeout=30)  # keep this trace active while the other thread uses x
        return x * 2.0

    t = threading.Thread(target=lambda: ft.grad(f)(1.0))
    t.start()
    try:
        assert started.wait(timeout=30)
        try:
            fnp.sin(box[0])
        except UnexpectedTracerError as e:
            err.append(e)
    finally:
        done.set()
        t.join(timeout=30)
    assert err and "another thread" in str(err[0])
    assert core.trace_stack() == [core._base]
