"""Per-op overhead of functrace.numpy on plain NumPy arrays, next to raw NumPy.

Targets: at most 3x raw NumPy on the 3-element add; within 5% on 1000x1000.
Run: ``.venv/bin/python bench/bench_dispatch.py`` (or ``make bench``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import functrace.numpy as fnp  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    verdicts = []
    warm = np.ones(3)
    time_per_call(lambda: np.add(warm, warm), min_time=0.2)  # warm up caches and clocks
    for label, shape, target in (("3 elements", (3,), 3.0), ("1000x1000", (1000, 1000), 1.05)):
        a = rng.standard_normal(shape)
        b = rng.standard_normal(shape)
        cases = [
            ("add", lambda: np.add(a, b), lambda: fnp.add(a, b)),
            ("multiply", lambda: np.multiply(a, b), lambda: fnp.multiply(a, b)),
            ("sin", lambda: np.sin(a), lambda: fnp.sin(a)),
            ("sum", lambda: np.sum(a), lambda: fnp.sum(a)),
            ("where", lambda: np.where(a > 0, a, b), lambda: fnp.where(a > 0, a, b)),
        ]
        min_time = 0.1 if shape == (3,) else 0.5
        for name, ref, ours in cases:
            t_np = time_per_call(ref, min_time=min_time)
            t_ft = time_per_call(ours, min_time=min_time)
            ratio = t_ft / t_np
            rows.append([label, name, fmt_time(t_np), fmt_time(t_ft), f"{ratio:5.2f}x"])
            if name == "add":
                ok = ratio <= target
                verdicts.append(
                    f"{label} add: {ratio:.2f}x raw NumPy (target <= {target}x): "
                    f"{'OK' if ok else 'MISSED'}"
                )
    print_table(
        "functrace.numpy dispatch overhead on plain NumPy inputs (median per call)",
        ["size", "op", "numpy", "functrace", "ratio"],
        rows,
    )
    print()
    for v in verdicts:
        print(v)


if __name__ == "__main__":
    main()
