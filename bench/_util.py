"""Shared timing helpers for the benchmark scripts (medians over repeats)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

# Benchmarks time compiled code: jit compiles before its first call returns (the default,
# tiered compilation, would time the interpreter of the first calls instead).
os.environ.setdefault("FUNCTRACE_JIT_COMPILE", "sync")


def time_per_call(fn: Callable[[], Any], *, min_time: float = 0.2, repeats: int = 7) -> float:
    """Median seconds per call of ``fn()`` over ``repeats`` batches of ~``min_time`` each."""
    fn()
    n = 1
    while True:  # calibrate the batch size
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / 4 or n > 1 << 22:
            break
        n *= 2
    n = max(1, int(n * (min_time / max(dt, 1e-9)) / 2))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def interleaved(cases: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Median over ``rounds`` of each case's time, the cases timed in turn each round
    (machine load moves every number: interleaving spreads it over all cases)."""
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(rounds):
        for k, fn in cases.items():
            samples[k].append(fn())
    return {k: statistics.median(v) for k, v in samples.items()}


def fmt_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:8.1f} ns"
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
