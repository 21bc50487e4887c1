"""``jax.nn.dot_product_attention`` cases, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/attention_jax.npz`` was recorded, ``functrace`` in
tests/test_dot_product_attention.py. Each case gives the output, the log-sum-exp
residual, and the gradients of ``sum(out * r)`` with respect to query, key, value and
bias, in float32 and float64. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# name: (B or None for unbatched, T, S, N, K, H, keyword arguments, bias shape, mask)
CASES: dict[str, tuple[Any, ...]] = {
    "mha": (2, 3, 4, 2, 2, 3, {}, None, None),
    "gqa_causal": (2, 4, 4, 4, 2, 3, {"is_causal": True}, None, None),
    "bias_and_mask": (2, 3, 4, 2, 2, 3, {}, (1, 2, 3, 4), "one_row_masked"),
    "unbatched_window": (None, 5, 5, 2, 1, 3, {"local_window_size": 1}, None, None),
    "seq_lengths": (
        2,
        3,
        4,
        2,
        2,
        3,
        {
            "query_seq_lengths": np.array([2, 3], np.int32),
            "key_value_seq_lengths": np.array([3, 1], np.int32),
        },
        None,
        None,
    ),  # fmt: skip
    "mqa_scale_window": (
        1,
        4,
        6,
        3,
        1,
        2,
        {"scale": 0.5, "local_window_size": (2, 1)},
        (1, 1, 4, 6),
        None,
    ),  # fmt: skip
}


def inputs(name: str, dtype: Any) -> dict[str, Any]:
    b, t, s, n, k, h, kw, bias_shape, mask = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    lead = () if b is None else (b,)
    out = {
        "query": rng.standard_normal((*lead, t, n, h)).astype(dtype),
        "key": rng.standard_normal((*lead, s, k, h)).astype(dtype),
        "value": rng.standard_normal((*lead, s, k, h)).astype(dtype),
        "r": rng.standard_normal((*lead, t, n, h)).astype(dtype),
    }
    if bias_shape is not None:
        out["bias"] = rng.standard_normal(bias_shape).astype(dtype)
    if mask == "one_row_masked":
        m = rng.random((b, 1, t, s)) < 0.7
        m[0, 0, 1, :] = False  # a query that may attend to no key
        out["mask"] = m
    return out


def cases(lib: Any) -> dict[str, np.ndarray]:
    res: dict[str, np.ndarray] = {}
    for name, spec in CASES.items():
        kw = spec[6]
        for dtype in (np.float32, np.float64):
            x = inputs(name, dtype)
            mask = x.get("mask")
            diff = ["query", "key", "value"] + (["bias"] if "bias" in x else [])

            def attend(*args: Any, mask: Any = mask, diff: Any = diff, kw: Any = kw) -> Any:
                named = dict(zip(diff, args))
                return lib.nn.dot_product_attention(
                    named["query"], named["key"], named["value"], named.get("bias"), mask,
                    return_residual=True, **kw,
                )  # fmt: skip

            def loss(*args: Any, attend: Any = attend, x: Any = x) -> Any:
                return lib.numpy.sum(attend(*args)[0] * x["r"])

            args = [x[d] for d in diff]
            out, lse = attend(*args)
            key = f"{name}/{np.dtype(dtype).name}"
            res[f"{key}/out"] = np.asarray(out)
            res[f"{key}/lse"] = np.asarray(lse)
            grads = lib.grad(loss, argnums=tuple(range(len(diff))))(*args)
            for d, gr in zip(diff, grads):
                res[f"{key}/grad_{d}"] = np.asarray(gr)
    return res
