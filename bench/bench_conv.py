"""Convolution benchmark: the jitted forward ``lax.conv_general_dilated`` against the
"BLAS floor", a plain float32 ``np.matmul`` with the same FLOPs.

Three sizes in channels-last layouts (NHWC input, HWIO kernel, "SAME" padding,
stride 1, float32): batch 64 of 28x28x1 with 6 5x5 filters, 64x14x14x6 with 16 5x5
filters, 32x32x32x64 with 64 3x3 filters. For each: the median time per call of
functrace's ``jit`` of the convolution, of ``(N*H*W, kh*kw*C) @ (kh*kw*C, O)``
(the product an im2col ends in), and of JAX's ``jit`` when ``import jax`` works; the
ratio floor / functrace (1.0: the convolution runs at matrix-product speed). The
implementations are timed in interleaved rounds (median of 7).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/bench_conv.py`` (``--quick`` for
shorter rounds). Not a test: it asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import fmt_time, print_table, time_per_call  # noqa: E402
from functrace import lax  # noqa: E402
from functrace.jit import jit  # noqa: E402

QUICK = "--quick" in sys.argv
MIN_TIME = 0.1 if QUICK else 0.25
ROUNDS = 5 if QUICK else 7
DN = ("NHWC", "HWIO", "NHWC")

# name, input (N, H, W, C), kernel (kh, kw, C, O)
SIZES = [
    ("64x28x28x1 * 5x5x1x6", (64, 28, 28, 1), (5, 5, 1, 6)),
    ("64x14x14x6 * 5x5x6x16", (64, 14, 14, 6), (5, 5, 6, 16)),
    ("32x32x32x64 * 3x3x64x64", (32, 32, 32, 64), (3, 3, 64, 64)),
]


def _jax_conv() -> Callable[[Any, Any], Any] | None:
    try:
        import jax
    except ImportError:
        return None
    f = jax.jit(
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)
    )
    return lambda x, w: f(x, w).block_until_ready()


def main() -> None:
    rng = np.random.default_rng(0)
    ft_conv = jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN))
    jax_conv = _jax_conv()
    rows = []
    for name, xs, ws in SIZES:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        n, h, wd, c = xs
        kh, kw, _, o = ws
        a = rng.standard_normal((n * h * wd, kh * kw * c)).astype(np.float32)
        b = rng.standard_normal((kh * kw * c, o)).astype(np.float32)
        flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
        impls: dict[str, Callable[[], Any]] = {
            "functrace": lambda x=x, w=w: ft_conv(x, w),
            "floor": lambda a=a, b=b: np.matmul(a, b),
        }
        if jax_conv is not None:
            impls["jax"] = lambda x=x, w=w: jax_conv(x, w)
            np.testing.assert_allclose(
                ft_conv(x, w), np.asarray(jax_conv(x, w)), rtol=2e-3, atol=2e-3
            )
        samples: dict[str, list[float]] = {k: [] for k in impls}
        for _ in range(ROUNDS):
            for k, fn in impls.items():
                samples[k].append(time_per_call(fn, min_time=MIN_TIME, repeats=1))
        med = {k: statistics.median(v) for k, v in samples.items()}
        rows.append(
            [
                name,
                f"{flops / 1e6:.0f}",
                fmt_time(med["functrace"]),
                fmt_time(med["floor"]),
                f"{med['floor'] / med['functrace']:.2f}",
                fmt_time(med["jax"]) if "jax" in med else "-",
                f"{med['jax'] / med['functrace']:.2f}" if "jax" in med else "-",
                f"{flops / med['functrace'] / 1e9:.1f}",
            ]
        )
    print_table(
        "jitted conv_general_dilated forward (float32, NHWC/HWIO, SAME, stride 1), "
        f"median of {ROUNDS} interleaved rounds",
        [
            "size",
            "MFLOP",
            "functrace",
            "BLAS floor",
            "floor/functrace",
            "JAX jit",
            "JAX/functrace",
            "functrace GFLOP/s",
        ],
        rows,
    )
    if hasattr(os, "getloadavg"):
        print(f"\nload average after the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
