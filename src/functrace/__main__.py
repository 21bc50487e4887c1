"""``python -m functrace demo`` (train an MLP, a CNN with ``--model cnn``, or a
character-level transformer with ``--model transformer``) and ``tour`` (trace and
differentiate)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np


def tour(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="functrace tour", description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args(argv)

    import functrace as ft
    import functrace.numpy as fnp

    rng = np.random.default_rng(0)
    n, d = 256, 3
    X = rng.standard_normal((n, d))
    true_w = np.array([1.5, -2.0, 0.5])
    y = (X @ true_w + 0.3 * rng.standard_normal(n) > 0).astype(np.float64)

    def loss(params, X, y):
        logits = fnp.sum(X * params["w"], axis=1) + params["b"]
        # binary cross-entropy with logits, written stably
        return fnp.mean(
            fnp.maximum(logits, 0.0) - logits * y + fnp.log1p(fnp.exp(-fnp.abs(logits)))
        )

    params: dict[str, Any] = {"w": np.zeros(d), "b": 0.0}
    print("The loss as functrace sees it (make_jaxpr):")
    print(ft.make_jaxpr(loss)(params, X[:4], y[:4]))
    print("\nIts gradient is a program too (make_jaxpr of grad):")
    print(ft.make_jaxpr(ft.grad(loss))(params, X[:4], y[:4]))

    value_and_grad = ft.value_and_grad(loss)
    t0 = time.perf_counter()
    for step in range(args.steps + 1):
        value, g = value_and_grad(params, X, y)
        params = {k: params[k] - 0.5 * g[k] for k in params}
        if step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}  loss {float(value):.4f}")
    dt = time.perf_counter() - t0
    acc = np.mean(((X @ params["w"] + params["b"]) > 0) == (y > 0.5))
    print(
        f"\ntrained logistic regression: accuracy {acc:.1%}, w = {np.round(params['w'], 2)}, "
        f"{args.steps / dt:.0f} steps/s (eager)"
    )
    ft.check_grads(lambda w: loss({"w": w, "b": 0.1}, X[:8], y[:8]), (params["w"],), order=2)
    print("check_grads: forward and reverse mode agree with finite differences (order 2).")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: python -m functrace demo [--epochs N] [--model mlp|cnn] [--resume] "
            "[--out DIR]\n"
            "       python -m functrace demo --model transformer [--steps N] [--prompt P]\n"
            "       python -m functrace tour [--steps N]"
        )
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from functrace._demo import main as train_demo

        return train_demo(rest)
    if cmd == "tour":
        return tour(rest)
    print(f"functrace: expected a command ('demo'), got {cmd!r}.", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
