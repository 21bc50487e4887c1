"""Windowed reductions (pooling) and ``cumlogsumexp`` on fixed inputs, run under JAX
and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/windowed_jax.npz`` was recorded, ``functrace`` in
tests/test_windowed.py. Values and VJPs (fixed cotangents) of max/min/sum pooling
with strides, padding, dilations and ties (inputs with repeated values, where the
selected position shows), JVPs where JAX has no VJP (max pooling with window
dilation, the generic ``reduce_window`` with a product), and ``cumlogsumexp`` with
large and ``-inf`` entries. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# NCHW input with many ties (small integers), and a 2-D one.
TIES = (np.arange(2 * 5 * 6).reshape(1, 2, 5, 6) * 7 % 5).astype(np.float64)
X2 = np.array(
    [
        [0.3, -1.2, 2.0, 0.7, 1.1],
        [-0.4, 2.0, 1.5, -2.2, 0.0],
        [1.0, 1.0, -0.3, 0.9, 2.0],
        [0.5, -0.7, 1.0, 1.0, -1.0],
    ]
)
V1 = np.array([1.0, 3.0, 3.0, 2.0, 3.0, -1.0, 0.5])
BIG = np.array([[1000.0, -2.0, 999.0, 1001.0], [3.0, 0.5, -1.0, 2.0], [-700.0, 800.0, 1.0, 2.0]])
NEG_INF = np.array([-np.inf, -np.inf, 1.0, -np.inf, 1000.0, 2.0, -np.inf])

# (name, input, window_dimensions, window_strides, padding, base_dilation, window_dilation)
POOLS: list[tuple[str, np.ndarray, Any, Any, Any, Any, Any]] = [
    ("nchw_same", TIES, (1, 1, 3, 3), (1, 1, 2, 2), "SAME", None, None),
    ("nchw_valid", TIES, (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    ("padded", X2, (2, 3), (1, 2), ((1, 0), (2, 1)), None, None),
    ("base_dilated", X2, (3, 2), (2, 1), ((0, 1), (1, 1)), (2, 1), None),
    ("ties_1d", V1, (3,), (1,), ((1, 1),), None, None),
]
# window dilation: JAX has no VJP for max/min pooling there, only the JVP
DILATED = ("window_dilated", X2, (2, 2), (1, 1), ((1, 1), (0, 1)), (1, 2), (2, 2))


def _cotangent(shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.float64).reshape(shape) % 7 - 3.0) / 2.0


def _vjp(lib: Any, f: Any, x: np.ndarray) -> np.ndarray:
    out, pullback = lib.vjp(f, x)
    return np.asarray(pullback(_cotangent(np.shape(out)))[0])


def _jvp(lib: Any, f: Any, x: np.ndarray) -> np.ndarray:
    return np.asarray(lib.jvp(f, (x,), (_cotangent(np.shape(x)),))[1])


def cases(lib: Any) -> dict[str, np.ndarray]:
    lax = lib.lax
    out: dict[str, np.ndarray] = {}
    for name, x, wd, ws, pad, bd, wdil in POOLS + [DILATED]:
        pools = {
            "max": lambda v, wd=wd, ws=ws, pad=pad, bd=bd, wdil=wdil: lax.reduce_window(
                v, -np.inf, lax.max, wd, ws, pad, bd, wdil
            ),
            "min": lambda v, wd=wd, ws=ws, pad=pad, bd=bd, wdil=wdil: lax.reduce_window(
                v, np.inf, lax.min, wd, ws, pad, bd, wdil
            ),
            "sum": lambda v, wd=wd, ws=ws, pad=pad, bd=bd, wdil=wdil: lax.reduce_window(
                v, 0.0, lax.add, wd, ws, pad, bd, wdil
            ),
        }
        for kind, f in pools.items():
            key = f"{kind}/{name}"
            out[f"{key}/value"] = np.asarray(f(x))
            out[f"{key}/jvp"] = _jvp(lib, f, x)
            if name != "window_dilated" or kind == "sum":
                out[f"{key}/vjp"] = _vjp(lib, f, x)
    # init values that are not the identity: op(init, window result)
    out["sum_init/value"] = np.asarray(
        lax.reduce_window(X2, 1.5, lax.add, (2, 2), (1, 1), ((1, 0), (0, 1)))
    )
    out["max_init/value"] = np.asarray(
        lax.reduce_window(X2, 0.8, lax.max, (2, 3), (2, 1), ((1, 1), (1, 1)))
    )
    # the generic reduce_window: a product, and a computation that is not a monoid
    prod = lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 2), (1, 2), ((1, 0), (0, 1)))  # noqa: E731
    out["prod/value"] = np.asarray(prod(X2))
    out["prod/jvp"] = _jvp(lib, prod, X2)
    prod_init = lambda v: lax.reduce_window(v, 2.0, lax.mul, (3,), (1,), ((1, 1),), (2,))  # noqa: E731
    out["prod_init/value"] = np.asarray(prod_init(V1))
    fold = lambda v: lax.reduce_window(v, 0.0, lambda a, b: a * 0.5 + b * b, (3,), (2,), "VALID")  # noqa: E731
    out["fold/value"] = np.asarray(fold(V1))
    out["fold/jvp"] = _jvp(lib, fold, V1)
    # cumlogsumexp: ordinary, large and -inf entries, both directions
    for name, x, axis in (
        ("x2", X2, 1),
        ("big", BIG, 0),
        ("big1", BIG, 1),
        ("neg_inf", NEG_INF, 0),
    ):
        for rev in (False, True):
            f = lambda v, axis=axis, rev=rev: lax.cumlogsumexp(v, axis=axis, reverse=rev)
            key = f"cumlogsumexp/{name}/{'reverse' if rev else 'forward'}"
            out[f"{key}/value"] = np.asarray(f(x))
            out[f"{key}/vjp"] = _vjp(lib, f, x)
    return out
