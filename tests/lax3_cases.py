"""``lax.stack``/``unstack``, ``approx_max_k``/``approx_min_k``, ``ragged_dot``,
``conv_general_dilated_patches``, ``axis_size``, ``all_to_all`` and ``pswapaxes`` on
fixed inputs, run under JAX and under functrace, with gradients of a scalar loss
through each differentiable one.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/lax3_jax.npz`` was recorded, ``functrace`` in tests/test_lax3.py.
Nothing here imports JAX. (The scatters in functrace's form, index arrays and axes,
are compared with NumPy in the test file; their XLA form with JAX in
``xla_gather_scatter_cases.py``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(7)
A = _rng.normal(size=(3, 4))
B = _rng.normal(size=(3, 4))
V = _rng.normal(size=(3, 9))
V[1, 2] = V[1, 5]  # a tie
LHS = _rng.normal(size=(7, 3))
RHS = _rng.normal(size=(3, 3, 2))
SIZES = np.array([2, 0, 4], np.int32)  # sums to 6 < 7: the last row is 0
IMG = _rng.normal(size=(2, 3, 5, 4))  # NCHW
IMG_NHWC = _rng.normal(size=(2, 5, 4, 3))
X4 = _rng.normal(size=(4, 4, 3))  # 4 examples, split axis of size 4
X4T = _rng.normal(size=(4, 2, 8))  # tiled: 8 = 2 * 4


def cases(lib: Any) -> dict[str, Any]:
    lax, grad, vmap = lib.lax, lib.grad, lib.vmap
    out: dict[str, Any] = {}
    w = np.linspace(-2.0, 3.0, 400)

    def loss(y: Any) -> Any:
        flat = y.reshape(-1)
        return (flat * w[: flat.shape[0]]).sum() + (flat**2).sum()

    # stack, unstack
    out["stack0"] = lax.stack([A, B])
    out["stack_last"] = lax.stack([A, B, A], axis=-1)
    out["stack_grad"] = grad(lambda a: loss(lax.stack([a, a * 2.0], axis=1)))(A)
    for i, u in enumerate(lax.unstack(A, axis=1)):
        out[f"unstack{i}"] = u
    out["unstack_grad"] = grad(
        lambda a: sum(loss(u * (k + 1)) for k, u in enumerate(lax.unstack(a)))
    )(A)
    # approx_max_k / approx_min_k
    vmax, imax = lax.approx_max_k(V, 4)
    out["max_k_vals"], out["max_k_idx"] = vmax, imax
    vmin, imin = lax.approx_min_k(V, 3, reduction_dimension=0)
    out["min_k_vals"], out["min_k_idx"] = vmin, imin
    v2, i2 = lax.approx_max_k(V, 2, recall_target=0.5, aggregate_to_topk=True)
    out["max_k_recall_vals"], out["max_k_recall_idx"] = v2, i2
    out["max_k_grad"] = grad(lambda v: loss(lax.approx_max_k(v, 4)[0]))(V)
    out["min_k_grad"] = grad(lambda v: loss(lax.approx_min_k(v, 2, reduction_dimension=0)[0]))(V)
    # ragged_dot
    out["ragged"] = lax.ragged_dot(LHS, RHS, SIZES)
    out["ragged_full"] = lax.ragged_dot(LHS, RHS, np.array([3, 3, 1], np.int32))
    out["ragged_grad_lhs"] = grad(lambda a: loss(lax.ragged_dot(a, RHS, SIZES)))(LHS)
    out["ragged_grad_rhs"] = grad(lambda r: loss(lax.ragged_dot(LHS, r, SIZES)))(RHS)
    # conv_general_dilated_patches
    out["patches"] = lax.conv_general_dilated_patches(IMG, (2, 3), (1, 1), "VALID")
    out["patches_same"] = lax.conv_general_dilated_patches(
        IMG, (3, 2), (2, 1), "SAME", rhs_dilation=(1, 2)
    )
    out["patches_nhwc"] = lax.conv_general_dilated_patches(
        IMG_NHWC, (2, 2), (1, 2), [(1, 0), (0, 1)], dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    out["patches_mixed"] = lax.conv_general_dilated_patches(
        IMG,
        (2, 3),
        (1, 1),
        [(0, 0), (1, 1)],
        lhs_dilation=(2, 1),
        dimension_numbers=("NCHW", "OIWH", "CNHW"),
    )
    out["patches_grad"] = grad(
        lambda x: (
            (lax.conv_general_dilated_patches(x, (2, 2), (1, 2), "SAME") ** 2).sum()
            + lax.conv_general_dilated_patches(x, (2, 2), (1, 2), "SAME")[0, 5, 1, 0]
        )
    )(IMG)
    # axis_size, all_to_all, pswapaxes over a named vmap axis
    out["axis_size"] = vmap(lambda x: x * lax.axis_size("i"), axis_name="i")(A)
    out["axis_size2"] = vmap(
        vmap(lambda x: x * lax.axis_size(("i", "j")), axis_name="j"), axis_name="i"
    )(A)

    def a2a(s: int, c: int, tiled: bool = False) -> Any:
        return vmap(lambda r: lax.all_to_all(r, "i", s, c, tiled=tiled), axis_name="i")

    out["a2a_00"] = a2a(0, 0)(X4)
    out["a2a_01"] = a2a(0, 1)(X4)
    out["a2a_10"] = a2a(1, 0)(np.swapaxes(X4, 1, 2).copy())
    out["a2a_tiled_10"] = a2a(1, 0, True)(X4T)
    out["a2a_tiled_11"] = a2a(1, 1, True)(X4T)
    out["pswapaxes"] = vmap(lambda r: lax.pswapaxes(r, "i", 0), axis_name="i")(X4)
    out["a2a_grad"] = grad(lambda x: loss(a2a(0, 1)(x) ** 3))(X4)
    out["a2a_tiled_grad"] = grad(lambda x: loss(a2a(1, 0, True)(x) ** 2))(X4T)
    out["pswap_vmap_grad"] = vmap(
        grad(lambda r: (lax.pswapaxes(r, "i", 0) ** 2 * r).sum()), axis_name="i"
    )(X4)
    return {k: np.asarray(v) for k, v in out.items()}
