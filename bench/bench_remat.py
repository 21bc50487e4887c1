"""Peak memory of ``jit(grad(loss))`` with and without ``checkpoint`` on each layer.

A 64-layer tanh MLP (width 512, batch 256, float32: ~64 MB of parameters). Each
variant runs in a fresh subprocess, which compiles the step with one call, then
measures a second call: tracemalloc's peak (NumPy reports its array allocations to
it) and the process's peak RSS, with ``FUNCTRACE_BUFFER_POOL=0`` (jit's pool would
hand the second call the first call's arrays; it keeps about one call's peak between
calls). The gradients of both variants must be identical.

Variants: ``plain``; ``checkpoint``: ``checkpoint`` on each layer; ``blocks``:
``checkpoint`` on each block of 8 layers. Reported per variant: the inputs (parameters
and batch, allocated before the call), the gradient outputs (allocated by the call and
returned), the residuals (the traced memory when the forward pass ends: what it keeps
for the backward pass, read by a ``debug.callback`` there), the call's traced peak
(which includes the gradients as the backward pass produces them) and the peak RSS.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/bench_remat.py`` (~1 min).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

LAYERS, WIDTH, BATCH = 64, 512, 256
BLOCK = 8  # layers per checkpointed block in the "blocks" variant
VARIANTS = ("plain", "checkpoint", "blocks")
MB = 1 << 20


def params(seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    ws = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)]
    ws += [
        (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
        for _ in range(LAYERS - 1)
    ]
    bs = [np.full(WIDTH, 0.01, np.float32) for _ in range(LAYERS)]
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    return ws, bs, x


def run_variant(variant: str, out: str) -> None:
    import functrace as ft
    import functrace.numpy as fnp

    def layer(h, w, b):
        return fnp.tanh(h @ w + b)

    step = ft.checkpoint(layer) if variant == "checkpoint" else layer
    marks: list[int] = []

    def mark(h):  # called by the compiled program when the forward pass ends
        marks.append(tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else -1)

    def block(h, ws, bs):
        for w, b in zip(ws, bs):
            h = step(h, w, b)
        return h

    def loss(ws, bs, x):
        if variant == "blocks":  # checkpoint each block of BLOCK layers
            h = x
            for i in range(0, LAYERS, BLOCK):
                h = ft.checkpoint(block)(h, ws[i : i + BLOCK], bs[i : i + BLOCK])
        else:
            h = block(x, ws, bs)
        ft.debug.callback(mark, h)
        return fnp.mean(h * h)

    ws, bs, x = params()
    inputs = sum(a.nbytes for a in (*ws, *bs, x))
    grad = ft.jit(ft.grad(loss, argnums=(0, 1)))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    grad(ws, bs, x)  # compiles
    first = time.perf_counter() - t0
    tracemalloc.start()
    t0 = time.perf_counter()
    gws, gbs = grad(ws, bs, x)
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outputs = sum(np.asarray(a).nbytes for a in (*gws, *gbs))
    np.savez(out + ".npz", *[np.asarray(a) for a in (*gws, *gbs)])
    with open(out + ".json", "w") as f:
        json.dump(
            {
                "inputs": inputs,
                "outputs": outputs,
                "peak": peak,
                "residuals": marks[-1],
                "rss_before": rss0 * 1024,
                "rss_peak": rss * 1024,
                "first_call": first,
                "call": dt,
            },
            f,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=VARIANTS)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.variant:
        run_variant(args.variant, args.out)
        return
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("NUMBA_NUM_THREADS", "1")
    # Without jit's buffer pool: with it, the second call reuses the first call's
    # arrays (allocated before tracemalloc starts), so nothing would be seen; the pool
    # keeps about one call's peak of large arrays between calls, as caching
    # allocators do, which is what these peaks measure.
    env.setdefault("FUNCTRACE_BUFFER_POOL", "0")
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for v in VARIANTS:
            out = os.path.join(d, v)
            subprocess.run(
                [sys.executable, __file__, "--variant", v, "--out", out], check=True, env=env
            )
            with open(out + ".json") as f:
                res[v] = json.load(f)
            with np.load(out + ".npz") as z:
                res[v]["grads"] = [z[k] for k in z.files]
    grads = [res[v].pop("grads") for v in VARIANTS]
    same = all(all(np.array_equal(a, b) for a, b in zip(grads[0], g)) for g in grads[1:])
    assert same, "checkpoint changed the gradients"
    print(
        f"jit(grad(loss)) of a {LAYERS}-layer tanh MLP, width {WIDTH}, batch {BATCH}, "
        f"float32; gradients identical in all variants: {same}"
    )
    cols = ("inputs", "outputs", "residuals", "peak", "rss_peak")
    print(f"{'variant':<12}" + "".join(f"{c + ' MB':>14}" for c in cols) + f"{'call s':>10}")
    for v in VARIANTS:
        r = res[v]
        print(f"{v:<12}" + "".join(f"{r[c] / MB:14.1f}" for c in cols) + f"{r['call']:10.2f}")
    p = res["plain"]
    for v in VARIANTS[1:]:
        c = res[v]
        print(
            f"{v} / plain: residuals {c['residuals'] / p['residuals']:.3f}, traced peak "
            f"{c['peak'] / p['peak']:.3f}, peak minus outputs "
            f"{(c['peak'] - c['outputs']) / (p['peak'] - p['outputs']):.3f}, peak RSS "
            f"{c['rss_peak'] / p['rss_peak']:.3f}"
        )


if __name__ == "__main__":
    main()
