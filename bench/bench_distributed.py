"""Data-parallel training over MPI: the demo's step at 1 and 2 processes.

The step is ``--data-parallel``'s (``functrace._demo.make_data_parallel_step``): a
jitted ``value_and_grad`` of the MLP 64-128-10 on this process's shard, the all-reduce
of loss and gradient (``distributed.data_parallel``: one ``MPI_Allreduce`` of one
float32 buffer), then the jitted update (accumulate over 2 micro-batches, clip, Adam).
The per-process batch is fixed (32), so 2 processes step on twice the examples. The
all-reduce is timed separately (inside the step) against the whole step.

Run: ``.venv/bin/python bench/bench_distributed.py`` (it starts ``mpirun -n 1`` and
``mpirun -n 2`` itself; needs Open MPI and ``pip install -e '.[mpi]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

PER_PROCESS_BATCH = 32
STEPS = 300
ROUNDS = 5


def worker() -> None:
    import functrace as ft
    from functrace import data, nn, optim
    from functrace import distributed as dist
    from functrace._demo import make_model

    dist.initialize()
    rank, size = dist.process_index(), dist.process_count()
    X, y, _, _ = data.load_digits()
    model = dist.broadcast(make_model("mlp"))
    opt = optim.accumulate(optim.chain(optim.clip_by_global_norm(1.0), optim.adam(3e-3)), 2)
    state = opt.init(model)

    def loss_fn(m, x, t):
        return nn.cross_entropy(m(x), t)

    vg = ft.jit(ft.value_and_grad(loss_fn))
    reduce_time = [0.0]
    real_allreduce = dist.allreduce

    def timed_allreduce(tree, op="mean", *, weight=None):
        t0 = time.perf_counter()
        out = real_allreduce(tree, op, weight=weight)
        reduce_time[0] += time.perf_counter() - t0
        return out

    import functrace.distributed._training as training

    training.allreduce = timed_allreduce  # time the all-reduce inside data_parallel
    grad_fn = dist.data_parallel(vg, has_value=True)

    @ft.jit
    def apply(m, s, g):
        updates, s = opt.update(g, s, m)
        return optim.apply_updates(m, updates), s

    global_batch = PER_PROCESS_BATCH * size
    batches = [
        b
        for b in data.batches(
            X, y, batch_size=global_batch, rng=0, drop_last=True, shard=(rank, size)
        )
    ]

    def run(steps: int) -> None:
        nonlocal model, state
        for i in range(steps):
            xb, yb = batches[i % len(batches)]
            _, g = grad_fn(model, xb, yb)
            model, state = apply(model, state, g)

    run(10)  # compile
    step_times, reduce_times = [], []
    for _ in range(ROUNDS):
        dist.barrier()
        reduce_time[0] = 0.0
        t0 = time.perf_counter()
        run(STEPS)
        step_times.append((time.perf_counter() - t0) / STEPS)
        reduce_times.append(reduce_time[0] / STEPS)
    # the all-reduce alone, back to back (no step between: little waiting for the peer)
    _, g = vg(model, *batches[0])
    alone = []
    for _ in range(ROUNDS):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(STEPS):
            real_allreduce((np.float32(0.0), g), weight=PER_PROCESS_BATCH)
        alone.append((time.perf_counter() - t0) / STEPS)
    if rank == 0:
        print(
            "RESULT "
            + json.dumps(
                {
                    "size": size,
                    "step": statistics.median(step_times),
                    "allreduce": statistics.median(reduce_times),
                    "alone": statistics.median(alone),
                }
            ),
            flush=True,
        )


def main() -> int:
    from _util import fmt_time, print_table

    mpirun = shutil.which("mpirun")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpirun = None
    if mpirun is None:
        print("bench_distributed: needs Open MPI's mpirun and mpi4py (pip install -e '.[mpi]')")
        return 0
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.update(FUNCTRACE_NUM_THREADS="1")  # one thread per rank
    results = []
    for n in (1, 2):
        cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(n)]
        cmd += [sys.executable, os.path.abspath(__file__), "--worker"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
        if r.returncode != 0 or not lines:
            print(f"mpirun -n {n} failed:\n{r.stdout}\n{r.stderr}")
            return 1
        results.append(json.loads(lines[0][len("RESULT ") :]))
    rows = []
    base = results[0]["step"]
    for res in results:
        n, step, red = res["size"], res["step"], res["allreduce"]
        rows.append(
            [
                str(n),
                str(PER_PROCESS_BATCH * n),
                fmt_time(step),
                f"{1 / step:8.0f}",
                f"{PER_PROCESS_BATCH * n / step:8.0f}",
                fmt_time(red),
                f"{red / step:5.1%}",
                fmt_time(res["alone"]),
                f"{base / step * n:5.2f}",
            ]
        )
    print_table(
        f"demo step (MLP 64-128-10, float32), data-parallel, {PER_PROCESS_BATCH} examples per "
        f"process; medians of {ROUNDS} rounds of {STEPS} steps",
        [
            "processes",
            "global batch",
            "step",
            "steps/s",
            "examples/s",
            "all-reduce",
            "of the step",
            "all-reduce alone",
            "speed-up (examples/s)",
        ],
        rows,
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average after the run: {load:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
        sys.exit(0)
    np.seterr(all="ignore")
    sys.exit(main())
