"""checkpoint policies on small models, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/remat_jax.npz`` was recorded, ``functrace`` in tests/test_remat.py.
Each case is ``(function, args)``; the recorder saved, per case, the gradient with
respect to every argument and the residuals reverse mode saves (``saved_residuals``:
each one's type and what it is, an argument's name or the primitive, or ``named 'x'``
for a ``checkpoint_name``). Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 3)) / 2
A = RNG.standard_normal((2, 3, 3)) / 2


def cases(lib: Any) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    jnp = lib.numpy
    P = lib.checkpoint_policies
    name = lib.ad_checkpoint.checkpoint_name

    def mlp(x, w):
        h = name(jnp.tanh(x @ w), "h")
        return jnp.sum(jnp.sin(h @ w))

    def deep(x, w):
        layer = lib.checkpoint(lambda h, w: jnp.tanh(h @ w) * 0.9)
        for _ in range(4):
            x = layer(x, w)
        return jnp.sum(x * x)

    def batched(a, b):
        return jnp.sum(jnp.sin(jnp.einsum("bij,bjk->bik", a, b)) + jnp.cos(a[0] @ b[0]))

    def named_two(x, w):
        u = name(jnp.sin(x @ w), "u")
        v = name(jnp.exp(u * 0.5), "v")
        return jnp.sum(v @ w)

    out: dict[str, tuple[Any, tuple[Any, ...]]] = {
        "mlp/none": (lib.checkpoint(mlp), (X, W)),
        "mlp/nothing": (lib.checkpoint(mlp, policy=P.nothing_saveable), (X, W)),
        "mlp/dots": (lib.checkpoint(mlp, policy=P.dots_saveable), (X, W)),
        "mlp/only_h": (lib.checkpoint(mlp, policy=P.save_only_these_names("h")), (X, W)),
        "mlp/all_but_h": (lib.checkpoint(mlp, policy=P.save_any_names_but_these("h")), (X, W)),
        "mlp/both": (
            lib.checkpoint(
                mlp, policy=P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("h"))
            ),
            (X, W),
        ),
        "deep/per_layer": (deep, (X, W)),
        "batched/dots": (lib.checkpoint(batched, policy=P.dots_saveable), (A, A)),
        "batched/no_batch_dims": (
            lib.checkpoint(batched, policy=P.dots_with_no_batch_dims_saveable),
            (A, A),
        ),
        "named_two/only_v": (
            lib.checkpoint(named_two, policy=P.save_only_these_names("v")),
            (X, W),
        ),
        "named_two/only_u": (
            lib.checkpoint(named_two, policy=P.save_only_these_names("u")),
            (X, W),
        ),
    }
    return out


def describe(where: str) -> str:
    """What a residual is, from a ``saved_residuals`` description: the argument's name,
    ``output of <primitive>`` or ``named '<name>'`` (the source line dropped)."""
    if where.startswith("from the argument "):
        return where.removeprefix("from the argument ")
    return where.split(" from ")[0]


def row(shape: tuple[int, ...], dtype: Any, where: str) -> str:
    """One residual as the fixture stores it: ``float64(4, 3) x``."""
    return f"{np.dtype(dtype).name}{tuple(shape)} {describe(where)}"
