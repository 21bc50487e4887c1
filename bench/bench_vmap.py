"""Per-example gradients: ``vmap(grad(loss))`` against a Python loop of ``grad``.

Target: at least 10x faster than the loop for batch 128 (eager, no jit).
Run: ``.venv/bin/python bench/bench_vmap.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import functrace as ft  # noqa: E402
import functrace.numpy as fnp  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402


def loss(params, x, y):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    logp = logits - fnp.logsumexp(logits)
    return -fnp.sum(logp * y)


def main() -> None:
    rng = np.random.default_rng(0)
    batch, d_in, d_h, d_out = 128, 32, 64, 10
    params = {
        "w1": rng.standard_normal((d_in, d_h)) * 0.1,
        "b1": np.zeros(d_h),
        "w2": rng.standard_normal((d_h, d_out)) * 0.1,
        "b2": np.zeros(d_out),
    }
    X = rng.standard_normal((batch, d_in))
    Y = np.eye(d_out)[rng.integers(0, d_out, batch)]
    g = ft.grad(loss)
    per_example = ft.vmap(g, in_axes=(None, 0, 0))

    def loop():
        return [g(params, X[i], Y[i]) for i in range(batch)]

    ref = loop()
    got = per_example(params, X, Y)
    for i in (0, batch - 1):
        for k in params:
            np.testing.assert_allclose(got[k][i], ref[i][k], rtol=1e-10, atol=1e-12)
    t_loop = time_per_call(loop, min_time=1.0, repeats=5)
    t_vmap = time_per_call(lambda: per_example(params, X, Y), min_time=1.0, repeats=5)
    rows = [
        ["Python loop of grad", fmt_time(t_loop), "1.0x"],
        ["vmap(grad)", fmt_time(t_vmap), f"{t_loop / t_vmap:.1f}x"],
    ]
    print_table(
        f"Per-example gradients, MLP {d_in}-{d_h}-{d_out}, batch {batch} (median per batch)",
        ["method", "time", "speed-up"],
        rows,
    )
    speedup = t_loop / t_vmap
    print(
        f"\nvmap(grad) is {speedup:.1f}x faster than the loop (target >= 10x): "
        f"{'OK' if speedup >= 10 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
