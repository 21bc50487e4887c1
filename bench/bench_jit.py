"""jit benchmark: dispatch cost on scalars, MLP training steps, and first-call times.

Prints medians over repeats and ratios against baselines measured in the same run:

* ``jit(value_and_grad(f))`` for ``f(x, y) = x*y + x**2`` on Python floats vs eager;
* one training step (forward + backward + Adam, float32) of an MLP at 784-64-10,
  batch 32 and 784-512-512-10, batch 128: functrace ``jit`` vs the same step
  written by hand in NumPy vs JAX's ``jit`` (when ``import jax`` works), and
  functrace again in a process at its defaults (all the cores the process may use,
  the user's BLAS threads untouched: what JAX and NumPy use by default too; the
  first functrace column is single-threaded, ``FUNCTRACE_NUM_THREADS=1``); timed twice,
  as the machine is, then with one core kept busy by another process (the busy
  2-core machines the targets are set for; ``--no-busy`` skips these rounds);
* the first call of the jitted step in a fresh process with a cold and a warm
  disk cache (import time reported separately).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/bench_jit.py`` (``--quick`` for a
shorter run; ``--ref-python PATH`` runs the JAX workers with another interpreter, one
that has JAX: it needs NumPy only, with ``src`` on its path). Not a test: it asserts nothing.
"""

from __future__ import annotations

import os
import sys

if "--ft-worker" not in sys.argv:  # (the worker measures functrace at its defaults)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    os.environ.setdefault("FUNCTRACE_NUM_THREADS", "1")  # this process: the 1-thread baseline

import contextlib  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functrace as ft  # noqa: E402
import functrace.numpy as fnp  # noqa: E402
from _util import fmt_time, interleaved, print_table, time_per_call  # noqa: E402
from functrace import lax  # noqa: E402
from functrace.jit import jit  # noqa: E402
from functrace.tree_util import tree_map  # noqa: E402

QUICK = "--quick" in sys.argv
NO_BUSY = "--no-busy" in sys.argv  # skip the rounds with one core kept busy
MIN_TIME = 0.1 if QUICK else 0.3
REPEATS = 5 if QUICK else 7

# ---------------------------------------------------------------------------
# The MLP training step, written with functrace.numpy only
# ---------------------------------------------------------------------------

B1, B2, LR, EPS = 0.9, 0.999, 1e-3, 1e-8


def _matmul(a, b):
    try:
        return a @ b
    except (TypeError, ImportError, AttributeError):  # fnp.matmul not available yet
        return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))


def _max_keepdims(x):
    if hasattr(fnp, "max"):
        return fnp.max(x, axis=1, keepdims=True)
    return fnp.reshape(lax.reduce_max(x, (1,)), (x.shape[0], 1))


def loss_fn(params, x, y):
    """Softmax cross-entropy of an MLP with ReLU; ``y`` is one-hot float32."""
    h = x
    for w, b in params[:-1]:
        h = fnp.maximum(_matmul(h, w) + b, 0.0)
    w, b = params[-1]
    logits = _matmul(h, w) + b
    m = _max_keepdims(logits)
    lse = fnp.log(fnp.sum(fnp.exp(logits - m), axis=1, keepdims=True)) + m
    return -fnp.mean(fnp.sum((logits - lse) * y, axis=1))


def train_step(params, m, v, t, x, y):
    """One step of Adam on ``loss_fn``; ``t`` is the (float32) step count."""
    loss, g = ft.value_and_grad(loss_fn)(params, x, y)
    t = t + 1.0
    m = tree_map(lambda m_, g_: B1 * m_ + (1.0 - B1) * g_, m, g)
    v = tree_map(lambda v_, g_: B2 * v_ + (1.0 - B2) * (g_ * g_), v, g)
    lr_t = LR * fnp.sqrt(1.0 - fnp.power(np.float32(B2), t)) / (1.0 - fnp.power(np.float32(B1), t))
    params = tree_map(lambda p, m_, v_: p - lr_t * m_ / (fnp.sqrt(v_) + EPS), params, m, v)
    return params, m, v, t, loss


def init(sizes, batch, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        w = (rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
        params.append((w, np.zeros(b, np.float32)))
    m = tree_map(np.zeros_like, params)
    v = tree_map(np.zeros_like, params)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return params, m, v, np.float32(0.0), x, y


# ---------------------------------------------------------------------------
# The same step by hand in NumPy
# ---------------------------------------------------------------------------


def numpy_step(params, m, v, t, x, y):
    hs, pre = [x], []
    h = x
    for w, b in params[:-1]:
        z = h @ w + b
        pre.append(z)
        h = np.maximum(z, 0.0)
        hs.append(h)
    w, b = params[-1]
    logits = h @ w + b
    mx = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - mx)
    s = e.sum(axis=1, keepdims=True)
    logp = logits - mx - np.log(s)
    n = x.shape[0]
    loss = -(logp * y).sum() / n
    d = (e / s - y) / np.float32(n)
    grads = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        w = params[i][0]
        grads[i] = (hs[i].T @ d, d.sum(axis=0))
        if i:
            d = (d @ w.T) * (pre[i - 1] > 0)
    t = t + np.float32(1.0)
    lr_t = (
        np.float32(LR)
        * np.sqrt(np.float32(1) - np.float32(B2) ** t)
        / (np.float32(1) - np.float32(B1) ** t)
    )
    new_p, new_m, new_v = [], [], []
    for (p_w, p_b), (m_w, m_b), (v_w, v_b), (g_w, g_b) in zip(params, m, v, grads):
        pm, mm, vm = [], [], []
        for p_, m_, v_, g_ in ((p_w, m_w, v_w, g_w), (p_b, m_b, v_b, g_b)):
            m_ = np.float32(B1) * m_ + np.float32(1 - B1) * g_
            v_ = np.float32(B2) * v_ + np.float32(1 - B2) * (g_ * g_)
            pm.append(p_ - lr_t * m_ / (np.sqrt(v_) + np.float32(EPS)))
            mm.append(m_)
            vm.append(v_)
        new_p.append(tuple(pm))
        new_m.append(tuple(mm))
        new_v.append(tuple(vm))
    return new_p, new_m, new_v, t, loss


# ---------------------------------------------------------------------------
# JAX (optional): a worker process per threading setting, timed on request so that
# its measurements interleave with ours (machine load moves every number)
# ---------------------------------------------------------------------------


def jax_step():  # type: ignore[no-untyped-def]
    """The same training step written with JAX, jitted (``jax`` imported here)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        logits = h @ w + b
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits, axis=1) * y, axis=1))

    @jax.jit
    def step(params, m, v, t, x, y):
        l_, g = jax.value_and_grad(loss)(params, x, y)
        t = t + 1.0
        m = jax.tree_util.tree_map(lambda m_, g_: B1 * m_ + (1 - B1) * g_, m, g)
        v = jax.tree_util.tree_map(lambda v_, g_: B2 * v_ + (1 - B2) * g_ * g_, v, g)
        lr_t = LR * jnp.sqrt(1 - B2**t) / (1 - B1**t)
        params = jax.tree_util.tree_map(
            lambda p, m_, v_: p - lr_t * m_ / (jnp.sqrt(v_) + EPS), params, m, v
        )
        return params, m, v, t, l_

    return step


def _jax_worker(one_thread: bool) -> None:
    if one_thread:
        # XLA's flags alone still use ~1.8 cores here (its CPU runtime has its own
        # pools): pin the process to one core for a like-for-like comparison.
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "")
            + " --xla_cpu_multi_thread_eigen=false"
            + " intra_op_parallelism_threads=1"
        )
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    import jax

    step = jax_step()
    jg = jax.jit(jax.value_and_grad(lambda x, y: x * y + x**2))
    calls = {"scalar": lambda: jax.block_until_ready(jg(2.0, 3.0))}
    calls["scalar"]()
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        key = cmd["key"]
        if key not in calls:  # an MLP config "[sizes, batch]"
            sizes, batch = json.loads(key)
            state = jax.device_put(init(tuple(sizes), batch))
            calls[key] = lambda s=state: jax.block_until_ready(step(*s))
        t = time_per_call(calls[key], min_time=cmd["min_time"], repeats=cmd["repeats"])
        print(json.dumps(t), flush=True)


def _ft_worker() -> None:
    """functrace in a process started with the user's thread settings (see Worker)."""
    calls: dict[str, Any] = {}
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        key = cmd["key"]
        if key not in calls:
            sizes, batch = json.loads(key)
            state, step = init(tuple(sizes), batch), jit(train_step)
            calls[key] = lambda s=state, j=step: j(*s)
        t = time_per_call(calls[key], min_time=cmd["min_time"], repeats=cmd["repeats"])
        print(json.dumps(t), flush=True)


# The thread settings of this process (one thread everywhere), removed for the
# processes that run at the libraries' defaults.
THREAD_VARS = (
    "FUNCTRACE_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)


class Worker:
    """A process that times a case when asked: JAX (default threading, or pinned to
    one core), or functrace at its defaults (``ft-default``: the cores the process may
    use, see jit/parallel.py; no thread variable set)."""

    def __init__(self, kind: str) -> None:
        python = sys.executable
        if kind.startswith("jax") and "--ref-python" in sys.argv:  # JAX from another venv
            python = sys.argv[sys.argv.index("--ref-python") + 1]
        args = [python, os.path.abspath(__file__)]
        env = dict(os.environ)
        if kind == "ft-default":
            args.append("--ft-worker")
            for k in THREAD_VARS:
                env.pop(k, None)
        else:
            args.append("--jax-worker")
            if kind == "jax-1core":
                args.append("--one-thread")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    @staticmethod
    def jax_available() -> bool:
        import importlib.util

        if "--ref-python" in sys.argv:
            return True
        try:
            return importlib.util.find_spec("jax") is not None
        except (ImportError, ValueError):
            return False

    def wait_ready(self) -> None:
        """Block until the process has imported its library and compiled the scalar
        case: timings taken while other workers still start up share the cores with
        their imports (2.5x slower scalar calls on a 2-core machine)."""
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("a worker process died (see its stderr above)")

    def time(self, key: str, min_time: float, repeats: int) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(
            json.dumps({"key": key, "min_time": min_time, "repeats": repeats}) + "\n"
        )
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("a worker process died (see its stderr above)")
        return float(json.loads(line))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    """Keep one core busy with another process (a Python loop) for the duration: the
    busy 2-core machines these targets are set for."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)  # let the scheduler see it
        yield
    finally:
        proc.kill()
        proc.wait()


def _step_row(label: str, res: dict[str, float]) -> list[str]:
    row = [label, fmt_time(res["ft"]), fmt_time(res["np"]), f"{res['ft'] / res['np']:.2f}"]
    for name in ("JAX jit", "JAX jit 1 core"):
        row += [fmt_time(res[name]), f"{res['ft'] / res[name]:.2f}"] if name in res else ["n/a"] * 2
    t2 = res["ft default"]
    return row + [
        fmt_time(t2),
        f"{t2 / res['JAX jit']:.2f}" if "JAX jit" in res else "n/a",
        f"{t2 / res['ft']:.2f}",
    ]


# ---------------------------------------------------------------------------
# Fresh-process first call
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench_dir!r})
import bench_jit as b
t1 = time.perf_counter()
state = b.init({sizes!r}, {batch})
step = b.jit(b.train_step)
t2 = time.perf_counter()
out = step(*state)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first_call": t3 - t2, "compiled": step.compile_count}}))
"""


def _fresh(code: str, env: dict[str, str]) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode != 0:
        raise RuntimeError(f"a first-call process failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def first_call(sizes, batch, cache_dir):
    code = _CHILD.format(
        bench_dir=os.path.dirname(os.path.abspath(__file__)), sizes=sizes, batch=batch
    )
    return _fresh(code, dict(os.environ, FUNCTRACE_CACHE_DIR=cache_dir))


_JAX_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench_dir!r})
import bench_jit as b
import jax
step = b.jax_step()
state = jax.device_put(b.init({sizes!r}, {batch}))
t1 = time.perf_counter()
jax.block_until_ready(step(*state))
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first_call": t2 - t1, "compiled": -1}}))
"""


DEPTHS = (2, 4, 8, 16)


def depth_sweep(rounds: int, with_jax: bool) -> list[list[str]]:
    """First call of the MLP step (width 64, batch 32) at 2/4/8/16 hidden layers, each
    in a fresh process: functrace on one thread with an empty kernel cache (cold) and
    again with the cache that run filled (warm), cold at its default threads (no thread
    variable set: large products split, as JAX's first call runs at its defaults), with
    direct kernels (nothing to cache)
    and with every kernel through Numba (``FUNCTRACE_JIT_KERNELS=numba``), JAX (no
    persistent cache: every process compiles).
    Rounds interleave the depths and libraries; medians."""
    bench_dir = os.path.dirname(os.path.abspath(__file__))
    samples: dict[tuple[int, str], list[dict[str, float]]] = {}
    for _ in range(rounds):
        for depth in DEPTHS:
            sizes, batch = (784, *([64] * depth), 10), 32
            ft_code = _CHILD.format(bench_dir=bench_dir, sizes=sizes, batch=batch)
            with tempfile.TemporaryDirectory() as d:
                env = dict(os.environ, FUNCTRACE_CACHE_DIR=d)
                samples.setdefault((depth, "cold"), []).append(_fresh(ft_code, env))
                samples.setdefault((depth, "warm"), []).append(_fresh(ft_code, env))
            with tempfile.TemporaryDirectory() as d:  # no thread variable: the defaults
                env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
                env["FUNCTRACE_CACHE_DIR"] = d
                samples.setdefault((depth, "default"), []).append(_fresh(ft_code, env))
            with tempfile.TemporaryDirectory() as d:  # every kernel through Numba
                env = dict(os.environ, FUNCTRACE_CACHE_DIR=d, FUNCTRACE_JIT_KERNELS="numba")
                samples.setdefault((depth, "numba"), []).append(_fresh(ft_code, env))
                samples.setdefault((depth, "numba warm"), []).append(_fresh(ft_code, env))
            if with_jax:
                jax_code = _JAX_CHILD.format(bench_dir=bench_dir, sizes=sizes, batch=batch)
                samples.setdefault((depth, "jax"), []).append(_fresh(jax_code, dict(os.environ)))
    rows = []
    for depth in DEPTHS:

        def med(kind: str, field: str = "first_call", depth: int = depth) -> float:
            return statistics.median(r[field] for r in samples[(depth, kind)])

        cold, warm, default = med("cold"), med("warm"), med("default")
        kernels = int(med("cold", "compiled"))
        row = [str(depth), f"{cold:.2f} s", str(kernels), f"{warm:.3f} s", f"{default:.2f} s"]
        row += [f"{med('numba'):.2f} s", f"{med('numba warm'):.3f} s"]
        if with_jax:
            jx = med("jax")
            row += [f"{jx:.2f} s", f"{cold / jx:.2f}", f"{warm / jx:.2f}", f"{default / jx:.2f}"]
        else:
            row += ["n/a"] * 4
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------
# First call with tiered compilation (its own table)
# ---------------------------------------------------------------------------

_TIERED_CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, {bench_dir!r})
import numpy as np
import bench_jit as b
state = b.init({sizes!r}, {batch})
step = b.jit(b.train_step, compile={mode!r})
t0 = time.perf_counter()
out = step(*state)
first = time.perf_counter() - t0
calls = []
while step.switches == 0 and step.compile_count == 0:
    t1 = time.perf_counter()
    step(*state)
    calls.append(time.perf_counter() - t1)
switched = time.perf_counter() - t0
ref = step(*state)  # compiled; the same arguments
same = all(
    np.allclose(np.asarray(a), np.asarray(c), rtol=2e-3, atol=2e-5)
    for a, c in zip(b.ft.tree_util.tree_leaves(out), b.ft.tree_util.tree_leaves(ref))
)
t1 = time.perf_counter()
for _ in range(20):
    step(*state)
compiled_call = (time.perf_counter() - t1) / 20
print(json.dumps({{"first": first, "switched": switched, "calls": len(calls),
    "interp_call": statistics.median(calls) if calls else 0.0,
    "compiled_call": compiled_call, "same": same}}))
"""


def tiered_first_call(sizes, batch, mode):
    """One fresh process, empty cache: time to the first result, time until the
    compiled path took over (calling the step in a loop meanwhile), the median call
    of the interpreter while Numba compiled, and a compiled call."""
    code = _TIERED_CHILD.format(
        bench_dir=os.path.dirname(os.path.abspath(__file__)), sizes=sizes, batch=batch, mode=mode
    )
    with tempfile.TemporaryDirectory() as d:  # (direct kernels never wait: Numba's do)
        return _fresh(code, dict(os.environ, FUNCTRACE_CACHE_DIR=d, FUNCTRACE_JIT_KERNELS="numba"))


def tiered_table(depths=(2, 4, 8, 16), width=64, batch=32) -> None:
    """The "first call, tiered" table: the MLP step (784-64x depth-10, batch 32) with
    tiering (Numba in a worker process, or in a thread) and with ``compile="sync"``, all
    kernels through Numba (``FUNCTRACE_JIT_KERNELS=numba``: the direct compiler's kernels
    compile in milliseconds and never start a tiered compile)."""
    rows = []
    for depth in depths:
        sizes = (784,) + (width,) * depth + (10,)
        res = {m: tiered_first_call(sizes, batch, m) for m in ("process", "thread", "sync")}
        sync = res["sync"]["first"]
        for m in ("process", "thread"):
            r = res[m]
            rows.append(
                [
                    str(depth) if m == "process" else "",
                    m,
                    f"{r['first']:.2f} s",
                    f"{r['switched']:.2f} s",
                    f"{sync:.2f} s",
                    str(r["calls"]),
                    fmt_time(r["interp_call"]),
                    fmt_time(r["compiled_call"]),
                    "yes" if r["same"] else "NO",
                ]
            )
    print_table(
        f"first call, tiered, every kernel through Numba: MLP step, width {width}, batch "
        f"{batch}, fresh process, empty cache",
        [
            "hidden layers",
            "compile in",
            "first result",
            "compiled from",
            "sync first call",
            "interpreted calls",
            "interpreter call",
            "compiled call",
            "same results",
        ],
        rows,
    )


# ---------------------------------------------------------------------------


WIDTH_SWEEP = [((784, 256, 256, 10), b) for b in (32, 128, 512, 1024)]


def thread_sweep(workers: dict[str, Worker], rounds: int, per: dict[str, Any]) -> None:
    """The width-256 step at batches 32-1024: functrace at its defaults against JAX's
    defaults and against functrace on one thread, quiet and with one core busy (the
    threading targets: default <= 0.9x JAX quiet; busy, <= 1.0x JAX and <= 1.15x its
    own single-threaded time)."""
    rows: dict[str, list[list[str]]] = {"quiet": [], "busy": []}
    for sizes, batch in WIDTH_SWEEP:
        label = "-".join(map(str, sizes)) + f" b{batch}"
        state, jstep = init(sizes, batch), jit(train_step)
        jstep(*state)
        key = json.dumps([list(sizes), batch])
        cases = {"ft": lambda s=state, j=jstep: time_per_call(lambda: j(*s), **per)}
        for name, w in workers.items():
            if name in ("ft default", "JAX jit"):
                cases[name] = lambda w=w, k=key: w.time(k, **per)
        for regime in rows:
            if regime == "busy" and NO_BUSY:
                continue
            with busy_core() if regime == "busy" else contextlib.nullcontext():
                res = interleaved(cases, rounds)
            jax_t = res.get("JAX jit")
            rows[regime].append(
                [
                    label,
                    fmt_time(res["ft"]),
                    fmt_time(res["ft default"]),
                    f"{res['ft default'] / res['ft']:.2f}",
                    fmt_time(jax_t) if jax_t else "n/a",
                    f"{res['ft default'] / jax_t:.2f}" if jax_t else "n/a",
                    f"{os.getloadavg()[0]:.1f}",
                ]
            )
    header = ["model", "ft 1 thread", "ft default", "default/1-thread", "JAX jit"]
    header += ["ft-default/JAX", "load avg"]
    for regime, title in (("quiet", "no load started by the benchmark"), ("busy", "one core busy")):
        if rows[regime]:
            print_table(f"width-256 MLP step by batch, float32; {title}", header, rows[regime])


def check_same(a, b, rtol=2e-3, atol=2e-5):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def main() -> None:
    # A private, empty kernel cache: the compile times below are cold.
    os.environ["FUNCTRACE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ft-bench-cache-")
    rounds = 3 if QUICK else 7
    per = {"min_time": MIN_TIME / 2, "repeats": 3}
    workers = {"ft default": Worker("ft-default")}
    if Worker.jax_available():
        workers.update({"JAX jit": Worker("jax"), "JAX jit 1 core": Worker("jax-1core")})
    try:
        for w in workers.values():
            w.wait_ready()
        _run(workers, rounds, per)
    finally:
        for w in workers.values():
            w.close()


def _run(workers: dict[str, Worker], rounds: int, per: dict[str, Any]) -> None:
    # -- scalar dispatch -----------------------------------------------------
    f = ft.value_and_grad(lambda x, y: x * y + x**2)
    jf = jit(f)
    cases: dict[str, Any] = {
        "functrace eager": lambda: time_per_call(lambda: f(2.0, 3.0), **per),
        "functrace jit": lambda: time_per_call(lambda: jf(2.0, 3.0), **per),
    }
    for name, w in workers.items():
        if name.startswith("JAX"):
            cases[name] = lambda w=w: w.time("scalar", **per)
    res = interleaved(cases, rounds)
    base = res["functrace eager"]
    rows = [
        ["value_and_grad(x*y + x**2), floats" if i == 0 else "", k, fmt_time(t), f"{t / base:.3f}"]
        for i, (k, t) in enumerate(res.items())
    ]
    print_table(
        "jit dispatch on scalars (ratio: vs eager)", ["case", "impl", "time", "ratio"], rows
    )

    # -- MLP steps -------------------------------------------------------------
    step_rows: dict[str, list[list[str]]] = {"quiet": [], "busy": []}
    first_rows = []
    configs = [((784, 64, 10), 32), ((784, 512, 512, 10), 128)]
    for sizes, batch in configs:
        label = "-".join(map(str, sizes)) + f" b{batch}"
        state = init(sizes, batch)
        jstep = jit(train_step)
        t0 = time.perf_counter()
        out_j = jstep(*state)
        compile_s = time.perf_counter() - t0
        out_n = numpy_step(*state)
        check_same(out_j[4:], out_n[4:])
        check_same(ft.tree_util.tree_leaves(out_j[0]), ft.tree_util.tree_leaves(out_n[0]))
        key = json.dumps([list(sizes), batch])
        cases = {
            "ft": lambda s=state, j=jstep: time_per_call(lambda: j(*s), **per),
            "np": lambda s=state: time_per_call(lambda: numpy_step(*s), **per),
        }
        for name, w in workers.items():
            cases[name] = lambda w=w, k=key: w.time(k, **per)
        for regime in step_rows:
            if regime == "busy":
                if NO_BUSY:
                    continue
                with busy_core():
                    res = interleaved(cases, rounds)
            else:
                res = interleaved(cases, rounds)
            step_rows[regime].append(
                _step_row(label, res) + [f"{compile_s:.2f} s", str(jstep.compile_count)]
            )

        with tempfile.TemporaryDirectory() as d:
            cold = first_call(sizes, batch, d)
            warm = [first_call(sizes, batch, d) for _ in range(3)]
        best = min(warm, key=lambda r: r["first_call"])
        first_rows.append(
            [
                label,
                f"{cold['first_call']:.2f} s",
                str(cold["compiled"]),
                f"{best['first_call']:.3f} s",
                str(best["compiled"]),
                f"{best['import']:.2f} s",
            ]
        )
    header = [
        "model",
        "ft jit, 1 thread",
        "NumPy by hand",
        "ft/NumPy",
        "JAX jit",
        "ft/JAX",
        "JAX jit 1 core",
        "ft/JAX-1c",
        "ft default",
        "ft-default/JAX",
        "default/1-thread",
        "compile (this process)",
        "kernels compiled",
    ]
    title = "MLP training step, float32 (forward + backward + Adam); medians"
    print_table(f"{title}; no load started by the benchmark", header, step_rows["quiet"])
    if step_rows["busy"]:
        print_table(
            f"{title}; one core kept busy by another process (the machine class of the targets)",
            header,
            step_rows["busy"],
        )
    print_table(
        "first call of the jitted step in a fresh process (warm: best of 3)",
        [
            "model",
            "cold cache",
            "kernels compiled",
            "warm cache",
            "kernels compiled",
            "import functrace",
        ],
        first_rows,
    )
    if "--no-sweep" not in sys.argv:
        thread_sweep(workers, rounds, per)
    print_table(
        "first call of the MLP step (width 64, batch 32) by depth, each in a fresh "
        "process; medians",
        [
            "hidden layers",
            "ft cold cache",
            "kernels compiled",
            "ft warm cache",
            "ft cold, defaults",
            "Numba only: cold",
            "warm",
            "JAX",
            "ft cold/JAX",
            "ft warm/JAX",
            "defaults/JAX",
        ],
        depth_sweep(1 if QUICK else 3, Worker.jax_available()),
    )
    tiered_table((2, 16) if QUICK else (2, 4, 8, 16))
    print(
        f"\nload average after the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
        f"(other processes inflate every number; ratios come from interleaved rounds)"
    )


if __name__ == "__main__":
    if "--tiered" in sys.argv:  # only the "first call, tiered" table
        tiered_table((2, 16) if QUICK else (2, 4, 8, 16))
    elif "--jax-worker" in sys.argv:
        _jax_worker("--one-thread" in sys.argv)
    elif "--ft-worker" in sys.argv:
        _ft_worker()
    else:
        main()
