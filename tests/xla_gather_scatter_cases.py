"""``lax.gather`` and the scatters in JAX's XLA form (``GatherDimensionNumbers``,
``ScatterDimensionNumbers``, ``slice_sizes``, ``update_shape``) on fixed inputs: rows
and windows, every mode with starts out of range, collapsed and inserted dimensions,
offset and window axes between the batch axes, batching dimensions, 0-d batch shapes,
``scatter_apply``, and ``grad``/``vmap``/``jit`` results.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/xla_gather_scatter_jax.npz`` was recorded, ``functrace`` in
tests/test_xla_gather_scatter.py. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(11)
X = np.arange(12.0).reshape(3, 4)
Y = _rng.normal(size=(3, 4, 5))
B = _rng.normal(size=(2, 3, 4))
ROWS = np.array([[2], [0]])
# window starts for (2, 2) windows of X: in range, past the end on each axis, negative
WIN = np.array([[0, 2], [1, 1], [0, 3], [2, 2], [-1, 0], [5, 1]])
WIN_OK = np.array([[0, 2], [1, 0], [0, 1]])  # unique windows in range, not overlapping
W = np.linspace(-1.0, 2.0, 120)


def cases(lib: Any) -> dict[str, Any]:
    lax, grad, vmap, jit = lib.lax, lib.grad, lib.vmap, lib.jit
    GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
    out: dict[str, Any] = {}

    def loss(y: Any) -> Any:
        flat = y.reshape(-1)
        return (flat * W[: flat.shape[0]]).sum() + (flat**2).sum()

    # gather: rows, windows and the modes
    rows = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    out["gather_rows"] = lax.gather(X, ROWS, rows, slice_sizes=(1, 4))
    win = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    out["gather_windows"] = lax.gather(X, WIN, win, (2, 2))
    for m in ("clip", "fill", "promise_in_bounds"):
        out[f"gather_windows_{m}"] = lax.gather(X, WIN, win, (2, 2), mode=m)
    out["gather_fill_value"] = lax.gather(X, WIN, win, (2, 2), mode="fill", fill_value=-5.0)
    out["gather_ignored_fill"] = lax.gather(X, WIN, win, (2, 2), mode="clip", fill_value=-5.0)
    for name, dt in (("i32", np.int32), ("u8", np.uint8), ("bool", np.bool_)):
        xs = (X > 5) if dt is np.bool_ else X.astype(dt)
        out[f"gather_fill_{name}"] = lax.gather(xs, WIN, win, (2, 2), mode="fill")
    out["gather_fill_c128"] = lax.gather(X + 1j * X, WIN, win, (2, 2), mode="fill")
    out["gather_u8_indices"] = lax.gather(X, np.array([[1, 200]], np.uint8), win, (2, 3))
    # the start map in another order, a window in the middle axis, 0-d batch shapes
    out["gather_swapped_map"] = lax.gather(
        Y, np.array([[3, 1], [0, 2]]), GDN((1, 2), (0,), (1, 0)), (1, 2, 5)
    )
    out["gather_offset_first"] = lax.gather(
        Y, np.array([[2], [0], [3]]), GDN((0, 2), (1,), (1,)), (3, 1, 2)
    )
    out["gather_scalar_batch"] = lax.gather(X, np.array([1, 2]), GDN((0, 1), (), (0, 1)), (2, 2))
    out["gather_scalar_point"] = lax.gather(X, np.array([2, 3]), GDN((), (0, 1), (0, 1)), (1, 1))
    out["gather_empty_batch"] = lax.gather(X, np.zeros((0, 1), np.int64), rows, (1, 4))
    # batching dimensions: example b reads from operand[b]
    bdn = GDN((1,), (1,), (1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out["gather_batching"] = lax.gather(B, np.array([[1], [2]]), bdn, (1, 1, 4))
    bdn2 = GDN((2,), (1,), (1, 2), operand_batching_dims=(0,), start_indices_batching_dims=(1,))
    idx2 = np.array([[[0, 0], [2, 3], [1, 1]], [[2, 2], [0, 1], [1, 9]]])
    out["gather_batching_inner"] = lax.gather(Y[:, :3], idx2, bdn2, (1, 1, 2))

    # scatters: rows, windows, the modes
    srows = SDN(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    out["scatter_add_rows"] = lax.scatter_add(X, ROWS, np.ones((2, 4)), srows)
    swin = SDN(
        update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1)
    )
    upd = np.arange(24.0).reshape(6, 2, 2) + 1
    out["scatter_add_windows"] = lax.scatter_add(X, WIN, upd, swin)
    out["scatter_add_windows_clip"] = lax.scatter_add(X, WIN, upd, swin, mode="clip")
    out["scatter_windows_drop"] = lax.scatter(X, WIN[[0, 2, 3, 4, 5]], upd[:5], swin, mode="drop")
    out["scatter_sub_windows"] = lax.scatter_sub(X, WIN, upd, swin, mode="fill")
    out["scatter_mul_windows"] = lax.scatter_mul(X, WIN, upd, swin)
    out["scatter_min_windows"] = lax.scatter_min(X, WIN, upd - 8.0, swin, mode="clip")
    out["scatter_max_windows"] = lax.scatter_max(X, WIN, upd - 8.0, swin)
    out["scatter_add_repeated"] = lax.scatter_add(X, np.array([[1], [1], [0]]), 2.0 * X, srows)
    # a window axis in the middle of the updates, a partial window, a 0-d batch
    smid = SDN(
        update_window_dims=(0, 2), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,)
    )
    out["scatter_add_window_first"] = lax.scatter_add(
        Y, np.array([[3], [0]]), np.ones((2, 2, 4)), smid
    )
    out["scatter_add_scalar_batch"] = lax.scatter_add(
        X, np.array([1, 2]), np.ones((2, 2)), SDN((0, 1), (), (0, 1))
    )
    out["scatter_point"] = lax.scatter(X, np.array([2, 3]), np.array(-1.0), SDN((), (0, 1), (0, 1)))
    # batching dimensions: example b writes into operand[b]
    sb = SDN((1,), (1,), (1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    out["scatter_add_batching"] = lax.scatter_add(B, np.array([[1], [7]]), np.ones((2, 4)), sb)
    # scatter_apply: positions from update_shape, applied once per update
    sapply = SDN((), (0, 1), (0, 1))
    out["scatter_apply_points"] = lax.scatter_apply(
        X, np.array([[0, 1], [0, 1], [2, 3]]), lib.numpy.sin, sapply, update_shape=(3,)
    )
    out["scatter_apply_rows"] = lax.scatter_apply(
        X, ROWS, lib.numpy.cos, srows, update_shape=(2, 3), mode="clip"
    )

    # derivatives, vmap and jit
    out["gather_grad"] = grad(lambda x: loss(lax.gather(x, WIN_OK, win, (2, 2))))(X)
    out["gather_clip_grad"] = grad(lambda x: loss(lax.gather(x, WIN, win, (2, 2), mode="clip")))(X)
    out["gather_fill_grad"] = grad(
        lambda x: loss(lax.gather(x, WIN, win, (2, 2), mode="fill", fill_value=0.0))
    )(X)
    upd_ok = np.arange(12.0).reshape(3, 2, 2) * 0.25
    out["scatter_add_grad_x"] = grad(lambda x: loss(lax.scatter_add(x, WIN_OK, upd_ok, swin)))(X)
    out["scatter_add_grad_u"] = grad(lambda u: loss(lax.scatter_add(X, WIN, u, swin)))(upd)
    out["scatter_grad_u"] = grad(lambda u: loss(lax.scatter(X, WIN_OK, u, swin)))(upd_ok)
    out["scatter_grad_x"] = grad(lambda x: loss(lax.scatter(x, WIN_OK, upd_ok, swin)))(X)
    out["scatter_mul_grad_x"] = grad(lambda x: loss(lax.scatter_mul(x, WIN_OK, upd_ok, swin)))(X)
    out["batching_grad"] = grad(
        lambda b: loss(lax.gather(b, np.array([[1], [2]]), bdn, (1, 1, 4)))
    )(B)
    out["gather_vmap_operand"] = vmap(lambda b: lax.gather(b, WIN_OK, win, (2, 2)))(B)
    out["gather_vmap_indices"] = vmap(lambda i: lax.gather(X, i, win, (2, 2), mode="fill"))(
        WIN.reshape(3, 2, 2)
    )
    out["scatter_add_vmap"] = vmap(lambda b, u: lax.scatter_add(b, WIN, u, swin))(
        B, np.stack([upd, -upd])
    )
    out["scatter_vmap_indices"] = vmap(lambda i: lax.scatter(X, i, -upd_ok, swin))(
        np.stack([WIN_OK, WIN_OK[::-1]])
    )
    out["gather_jit"] = jit(lambda x, i: lax.gather(x, i, win, (2, 2), mode="fill"))(X, WIN)
    out["scatter_jit"] = jit(lambda x, i, u: lax.scatter_add(x, i, u, swin))(X, WIN, upd)
    return {k: np.asarray(v) for k, v in out.items()}
