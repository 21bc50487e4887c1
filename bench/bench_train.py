"""Training throughput: the demo's jit-compiled step against the same step by hand.

The step is the demo's: MLP 64-128-10 on 8x8 digits, softmax cross-entropy,
gradient accumulation over 2 micro-batches of 32, clipping to global norm 1, Adam.
Run: ``.venv/bin/python bench/bench_train.py``.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import functrace as ft  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402
from functrace import data, nn, optim  # noqa: E402
from functrace._demo import make_step  # noqa: E402


class NumpyStep:
    """The same step written by hand in NumPy (forward, backward, accumulate, clip, Adam)."""

    def __init__(self, params: list[np.ndarray], lr: float = 3e-3, every_k: int = 2) -> None:
        self.p = [p.copy() for p in params]
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.acc = [np.zeros_like(p) for p in params]
        self.t = 0
        self.k = 0
        self.lr, self.every_k = lr, every_k

    def __call__(self, x: np.ndarray, y: np.ndarray) -> float:
        w1, b1, w2, b2 = self.p
        h_pre = x @ w1.T + b1
        h = np.maximum(h_pre, 0)
        logits = h @ w2.T + b2
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        n = len(x)
        loss = float(np.mean(np.log(s[:, 0]) - z[np.arange(n), y]))
        d_logits = e / s
        d_logits[np.arange(n), y] -= 1
        d_logits /= n
        g_w2 = d_logits.T @ h
        g_b2 = d_logits.sum(axis=0)
        d_h = (d_logits @ w2) * (h_pre > 0)
        g_w1 = d_h.T @ x
        g_b1 = d_h.sum(axis=0)
        for a, g in zip(self.acc, (g_w1, g_b1, g_w2, g_b2)):
            a += g
        self.k += 1
        if self.k < self.every_k:
            return loss
        grads = [a / self.every_k for a in self.acc]
        for a in self.acc:
            a[...] = 0
        self.k = 0
        norm = np.sqrt(sum(float(np.sum(g * g)) for g in grads))
        if norm > 1.0:
            grads = [g * (1.0 / norm) for g in grads]
        self.t += 1
        b1c, b2c = 1 - 0.9**self.t, 1 - 0.999**self.t
        for p, m, v, g in zip(self.p, self.m, self.v, grads):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / b1c) / (np.sqrt(v / b2c) + 1e-8)
        return loss


def main() -> None:
    X, y, _, _ = data.load_digits()
    xb, yb = X[:32], y[:32]
    model = nn.MLP([64, 128, 10], rng=0)
    opt = optim.accumulate(optim.chain(optim.clip_by_global_norm(1.0), optim.adam(3e-3)), every_k=2)
    step = make_step(opt)
    state = opt.init(model)
    t0 = time.perf_counter()
    out = step(model, state, xb, yb)
    first = time.perf_counter() - t0
    carry = {"model": out[0], "state": out[1]}

    def ft_step() -> None:
        m, s, _ = step(carry["model"], carry["state"], xb, yb)
        carry["model"], carry["state"] = m, s

    params = [
        model.layers[0].weight,
        model.layers[0].bias,
        model.layers[1].weight,
        model.layers[1].bias,
    ]
    np_step = NumpyStep(params)
    t_ft = time_per_call(ft_step, min_time=1.0, repeats=5)
    t_np = time_per_call(lambda: np_step(xb, yb), min_time=1.0, repeats=5)
    jitted = callable(getattr(ft, "jit", None))
    rows = [
        ["NumPy by hand", fmt_time(t_np), f"{1 / t_np:9.0f}", "1.00x"],
        [
            f"functrace ({'jit' if jitted else 'eager'})",
            fmt_time(t_ft),
            f"{1 / t_ft:9.0f}",
            f"{t_ft / t_np:.2f}x",
        ],
    ]
    print_table(
        "Demo training step, MLP 64-128-10, micro-batch 32 (median per step)",
        ["step", "time", "steps/s", "time vs NumPy"],
        rows,
    )
    print(f"\nfirst call (trace + compile or cache load): {first:.2f} s")


if __name__ == "__main__":
    main()
