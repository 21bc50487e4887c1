"""jit benchmark: dispatch cost on scalars, MLP training steps, and first-call times.

Prints medians over repeats and ratios against baselines measured in the same run:

* ``jit(value_and_grad(f))`` for ``f(x, y) = x*y + x**2`` on Python floats vs eager;
* one training step (forward + backward + Adam, float32) of an MLP at 784-64-10,
  batch 32 and 784-512-512-10, batch 128: functrace ``jit`` vs the same step
  written by hand in NumPy vs JAX's ``jit`` (when ``import jax`` works);
* the first call of the jitted step in a fresh process with a cold and a warm
  disk cache (import time reported separately).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/bench_jit.py`` (``--quick`` for a
shorter run). Not a test: it asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functrace as ft  # noqa: E402
import functrace.numpy as fnp  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402
from functrace import lax  # noqa: E402
from functrace.jit import jit  # noqa: E402
from functrace.tree_util import tree_map  # noqa: E402

QUICK = "--quick" in sys.argv
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
    lr_t = np.float32(LR) * np.sqrt(np.float32(1) - np.float32(B2) ** t) / (
        np.float32(1) - np.float32(B1) ** t)
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
# JAX (optional), measured in a child process so its thread pool and import do not
# disturb the functrace and NumPy timings
# ---------------------------------------------------------------------------


def _jax_child(configs: list, one_thread: bool) -> None:
    if one_thread:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + " --xla_cpu_multi_thread_eigen=false"
                                   + " intra_op_parallelism_threads=1")
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
        lr_t = LR * jnp.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        params = jax.tree_util.tree_map(lambda p, m_, v_: p - lr_t * m_ / (jnp.sqrt(v_) + EPS),
                                        params, m, v)
        return params, m, v, t, l_

    res: dict[str, float] = {}
    jg = jax.jit(jax.value_and_grad(lambda x, y: x * y + x ** 2))
    res["scalar"] = time_per_call(lambda: jax.block_until_ready(jg(2.0, 3.0)),
                                  min_time=MIN_TIME, repeats=REPEATS)
    for sizes, batch in configs:
        state = jax.device_put(init(tuple(sizes), batch))
        jax.block_until_ready(step(*state))
        res[f"{sizes}-{batch}"] = time_per_call(
            lambda s=state: jax.block_until_ready(step(*s)), min_time=MIN_TIME, repeats=REPEATS)
    print(json.dumps(res))


def jax_times(configs: list, one_thread: bool) -> dict[str, float] | None:
    """JAX timings from a child process, or None when JAX is not installed."""
    try:
        import importlib.util

        if importlib.util.find_spec("jax") is None:
            return None
    except (ImportError, ValueError):
        return None
    args = [sys.executable, os.path.abspath(__file__), "--jax-child", json.dumps(configs)]
    if one_thread:
        args.append("--one-thread")
    if QUICK:
        args.append("--quick")
    res = subprocess.run(args, capture_output=True, text=True, timeout=1200)
    if res.returncode != 0:
        print(f"(JAX measurement failed: {res.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


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


def first_call(sizes, batch, cache_dir):
    code = _CHILD.format(bench_dir=os.path.dirname(os.path.abspath(__file__)), sizes=sizes,
                         batch=batch)
    env = dict(os.environ, FUNCTRACE_CACHE_DIR=cache_dir)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------


def check_same(a, b, rtol=2e-3, atol=2e-5):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def main() -> None:
    # A private, empty kernel cache: the compile times below are cold.
    os.environ["FUNCTRACE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ft-bench-cache-")
    configs = [[[784, 64, 10], 32], [[784, 512, 512, 10], 128]]
    jax_default = jax_times(configs, one_thread=False)
    jax_one = jax_times(configs, one_thread=True) if jax_default is not None else None

    # -- scalar dispatch -----------------------------------------------------
    rows = []
    f = ft.value_and_grad(lambda x, y: x * y + x ** 2)
    jf = jit(f)
    t_eager = time_per_call(lambda: f(2.0, 3.0), min_time=MIN_TIME, repeats=REPEATS)
    t_jit = time_per_call(lambda: jf(2.0, 3.0), min_time=MIN_TIME, repeats=REPEATS)
    rows.append(["value_and_grad(x*y + x**2), floats", "functrace eager", fmt_time(t_eager),
                 "1.00"])
    rows.append(["", "functrace jit", fmt_time(t_jit), f"{t_jit / t_eager:.3f}"])
    if jax_default is not None:
        t_jax = jax_default["scalar"]
        rows.append(["", "JAX jit", fmt_time(t_jax), f"{t_jax / t_eager:.3f}"])
    print_table("jit dispatch on scalars (ratio: vs eager)", ["case", "impl", "time", "ratio"],
                rows)

    # -- MLP steps -------------------------------------------------------------
    step_rows = []
    first_rows = []
    for sizes, batch in configs:
        label = "-".join(map(str, sizes)) + f" b{batch}"
        state = init(tuple(sizes), batch)
        jstep = jit(train_step)
        t0 = time.perf_counter()
        out_j = jstep(*state)
        compile_s = time.perf_counter() - t0
        out_n = numpy_step(*state)
        check_same(out_j[4:], out_n[4:])
        check_same(ft.tree_util.tree_leaves(out_j[0]), ft.tree_util.tree_leaves(out_n[0]))
        t_np = time_per_call(lambda s=state: numpy_step(*s), min_time=MIN_TIME, repeats=REPEATS)
        t_ft = time_per_call(lambda s=state, j=jstep: j(*s), min_time=MIN_TIME, repeats=REPEATS)
        row = [label, fmt_time(t_ft), fmt_time(t_np), f"{t_ft / t_np:.2f}"]
        key = f"{sizes}-{batch}"
        for res in (jax_default, jax_one):
            if res is None:
                row += ["n/a", "n/a"]
            else:
                row += [fmt_time(res[key]), f"{t_ft / res[key]:.2f}"]
        row += [f"{compile_s:.2f} s", str(jstep.compile_count)]
        step_rows.append(row)

        with tempfile.TemporaryDirectory() as d:
            cold = first_call(sizes, batch, d)
            warm = [first_call(sizes, batch, d) for _ in range(3)]
        best = min(warm, key=lambda r: r["first_call"])
        first_rows.append([label, f"{cold['first_call']:.2f} s", str(cold["compiled"]),
                           f"{best['first_call']:.3f} s", str(best["compiled"]),
                           f"{best['import']:.2f} s"])
    print_table("MLP training step, float32 (forward + backward + Adam); medians",
                ["model", "functrace jit", "NumPy by hand", "ft/NumPy", "JAX jit", "ft/JAX",
                 "JAX jit 1 thread", "ft/JAX-1t", "compile (this process)",
                 "kernels compiled"], step_rows)
    print_table("first call of the jitted step in a fresh process (warm: best of 3)",
                ["model", "cold cache", "kernels compiled", "warm cache", "kernels compiled",
                 "import functrace"], first_rows)
    print(f"\nload average during the run: {os.getloadavg()[0]:.2f} "
          f"(on {os.cpu_count()} cores; other processes inflate every number)")


if __name__ == "__main__":
    if "--jax-child" in sys.argv:
        _jax_child(json.loads(sys.argv[sys.argv.index("--jax-child") + 1]),
                   "--one-thread" in sys.argv)
    else:
        main()
