"""``cost_analysis()`` and ``memory_analysis()`` of lowered and compiled signatures
(``functrace/jit/cost.py``). The expected FLOP counts are the ones XLA's cost analysis
gives for the same programs (JAX 0.10.2, float64), which also follow from the
formulas in the module's docstring."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax

X = np.ones((32, 64))


def _conv(**kw):
    return lambda a, k: lax.conv_general_dilated(a, k, **kw)


CASES = [
    # name, function, arguments, flops, transcendentals
    ("mlp", lambda x, w: fnp.sum(fnp.tanh(x @ w) * 2.0 + 1.0), (X, np.ones((64, 16))), 67071, 512),
    (
        "conv_same",  # taps over the padding cost nothing
        _conv(window_strides=(1, 1), padding="SAME"),
        (np.ones((2, 3, 8, 8)), np.ones((4, 3, 3, 3))),
        23232,
        0,
    ),
    (
        "conv_strided_dilated",
        _conv(
            window_strides=(2, 1),
            padding=((1, 2), (0, 1)),
            lhs_dilation=(1, 2),
            rhs_dilation=(2, 1),
        ),
        (np.ones((2, 3, 9, 7)), np.ones((6, 3, 3, 2))),
        9360,
        0,
    ),
    (
        "cond_costliest_branch",
        lambda a: lax.cond(a.sum() > 0, lambda b: fnp.sin(b) @ b.T @ b, lambda b: b * 2.0, a),
        (X,),
        264193,
        2048,
    ),
    (
        "max_pool",
        lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (2, 2), "VALID"),
        (X,),
        1536,
        0,
    ),
    (
        "batched_product",
        lambda a, b: fnp.einsum("bij,bjk->bik", a, b),
        (np.ones((4, 8, 16)), np.ones((4, 16, 5))),
        5120,
        0,
    ),
    # a loop's body counts once, as in XLA's count (JAX's 66 adds its counter's steps)
    (
        "scan_body_once",
        lambda a: lax.scan(lambda c, r: (c + fnp.exp(r), None), fnp.zeros(64), a)[0],
        (X,),
        64,
        64,
    ),
]


@pytest.mark.parametrize(("name", "f", "args", "flops", "trans"), CASES, ids=[c[0] for c in CASES])
def test_cost_analysis_counts_as_xla(name, f, args, flops, trans) -> None:
    lowered = ft.jit(f).lower(*args)
    costs = lowered.cost_analysis()
    assert costs == lowered.compile().cost_analysis()
    assert (costs["flops"], costs["transcendentals"]) == (flops, trans)
    # at least the inputs are read (a loop's body counts once: one row of its xs)
    moved = 64 * 8 if name == "scan_body_once" else sum(np.asarray(a).nbytes for a in args)
    assert costs["bytes accessed"] >= moved


def test_memory_analysis() -> None:
    def f(x, w):
        h = fnp.tanh(x @ w)  # 32x16 float64: 4096 bytes alive at once, then reduced
        return fnp.sum(h * 2.0), h[:2]

    stats = ft.jit(f).lower(X, np.ones((64, 16))).compile().memory_analysis()
    assert stats.argument_size_in_bytes == X.nbytes + 64 * 16 * 8
    assert stats.output_size_in_bytes == 8 + 2 * 16 * 8
    assert 4096 <= stats.temp_size_in_bytes <= 3 * 4096
    assert stats.generated_code_size_in_bytes == 0 and stats.alias_size_in_bytes == 0
