"""Eager reverse-mode cost: ``value_and_grad`` vs the same gradient written by hand.

Target: eager ``value_and_grad`` of ``f(x, y) = x*y + x**2`` on scalars under 100 us
(PyTorch's backward of the same takes over 115 us, HIPS autograd over 260 us on this
machine class). Run: ``.venv/bin/python bench/bench_grad.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import functrace as ft  # noqa: E402
import functrace.numpy as fnp  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402


def tiny(x, y):
    return x * y + x**2


def tiny_by_hand(x, y):
    return x * y + x**2, (y + 2 * x, x)


def chain(x):
    # 50 elementwise ops: 10 rounds of 5
    for _ in range(10):
        x = fnp.sin(x) * 1.01 + fnp.tanh(x) - x * 0.5
    return fnp.sum(x)


def chain_by_hand(x):
    tape = []
    for _ in range(10):
        s, t = np.sin(x), np.tanh(x)
        tape.append((x, t))
        x = s * 1.01 + t - x * 0.5
    val = np.sum(x)
    g = np.ones_like(x)
    for xi, ti in reversed(tape):
        g = g * (np.cos(xi) * 1.01 + (1 - ti * ti) - 0.5)
    return val, g


def main() -> None:
    rows = []
    vg = ft.value_and_grad(tiny, argnums=(0, 1))
    t_ft = time_per_call(lambda: vg(2.0, 3.0))
    t_np = time_per_call(lambda: tiny_by_hand(2.0, 3.0))
    rows.append(["x*y + x**2 (scalars)", fmt_time(t_np), fmt_time(t_ft), f"{t_ft / t_np:6.1f}x"])
    x = np.random.default_rng(0).standard_normal(100)
    vg_chain = ft.value_and_grad(chain)
    np.testing.assert_allclose(vg_chain(x)[1], chain_by_hand(x)[1], rtol=1e-10)
    t_ft2 = time_per_call(lambda: vg_chain(x))
    t_np2 = time_per_call(lambda: chain_by_hand(x))
    rows.append(
        ["50-op chain (100 floats)", fmt_time(t_np2), fmt_time(t_ft2), f"{t_ft2 / t_np2:6.1f}x"]
    )
    print_table(
        "Eager value_and_grad (median per call)",
        ["function", "NumPy by hand", "functrace", "ratio"],
        rows,
    )
    ok = t_ft < 100e-6
    print(
        f"\nvalue_and_grad of x*y + x**2: {t_ft * 1e6:.1f} us "
        f"(target < 100 us): {'OK' if ok else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
