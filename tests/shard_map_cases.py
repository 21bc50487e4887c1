"""``shard_map`` programs over meshes of 4 (virtual, in functrace) devices, run under JAX
and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, on 4 host
devices: ``XLA_FLAGS=--xla_force_host_platform_device_count=4``) when
``tests/fixtures/shard_map_jax.npz`` was recorded, ``functrace`` in
tests/test_sharding.py: collectives over one and two mesh axes, a dimension split over
two axes, a sharded matrix product, a ring ``ppermute``, a replicated result named in
``out_specs``, pytree arguments under one spec, a data-parallel gradient (``pmean`` of
per-shard gradients), ``grad`` and ``jit`` of a ``shard_map`` and ``vmap`` around one,
``pcast`` with ``grad`` inside and outside.
Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(5)
X = _rng.standard_normal((8, 3))
W = _rng.standard_normal((3, 4))
V = _rng.standard_normal(8)


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp, lax, P = lib.numpy, lib.lax, lib.sharding.PartitionSpec
    auto = lib.sharding.AxisType.Auto
    m1 = lib.make_mesh((4,), ("i",), axis_types=(auto,))
    m2 = lib.make_mesh((2, 2), ("a", "b"), axis_types=(auto, auto))
    out: dict[str, Any] = {}

    def sm(f, mesh, ins, outs, check=True):
        return lib.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs, check_vma=check)

    out["psum"] = sm(lambda x: lax.psum(jnp.sum(x, axis=0), "i"), m1, P("i"), P())(X)
    out["axis_index"] = sm(lambda v: v * lax.axis_index("i"), m1, P("i"), P("i"))(V)
    out["all_gather_tiled"] = sm(  # (JAX does not infer that all_gather replicates)
        lambda v: lax.all_gather(v * 2.0, "i", tiled=True), m1, P("i"), P(), check=False
    )(V)
    out["all_gather_stacked"] = sm(lambda v: lax.all_gather(v, "i"), m1, P("i"), P(None, "i"))(V)
    ring = [(k, (k + 1) % 4) for k in range(4)]
    out["ppermute"] = sm(lambda v: lax.ppermute(v, "i", ring), m1, P("i"), P("i"))(V)
    out["pmean_pmax"] = sm(
        lambda x: (lax.pmean(x, "i"), lax.pmax(x, "i")), m1, P("i", None), (P(), P())
    )(X)
    out["matmul_2d"] = sm(lambda x, w: x @ w, m2, (P("a", None), P(None, "b")), P("a", "b"))(X, W)
    out["psum_one_of_two"] = sm(
        lambda x: lax.psum(x, "a") + lax.axis_index("b"), m2, P("a", "b"), P(None, "b")
    )(X[:, :2])
    out["two_axes_one_dim"] = sm(
        lambda v: v + 10.0 * lax.axis_index("a") + lax.axis_index("b"),
        m2, P(("a", "b")), P(("a", "b")),
    )(V)  # fmt: skip
    out["two_axes_swapped"] = sm(
        lambda v: v * 0 + 10.0 * lax.axis_index("a") + lax.axis_index("b"),
        m2, P(("b", "a")), P(("b", "a")),
    )(V)  # fmt: skip
    out["replicated_named"] = sm(lambda v: lax.psum(v, "i"), m1, P("i"), P("i"))(V)
    d = sm(
        lambda t: {"u": t["x"] * 2.0, "s": lax.psum(jnp.sum(t["y"]), "i")},
        m1, P("i"), {"u": P("i"), "s": P()},
    )({"x": X, "y": V})  # fmt: skip
    out["pytree/u"], out["pytree/s"] = d["u"], d["s"]

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    def dp_grad(w, x):
        return lax.pmean(lib.grad(loss)(w, x), "i")

    # check_vma=False: each shard's own gradient (JAX's default sums the gradient of a
    # replicated value over the axis by its varying-type rules; functrace does not)
    out["data_parallel_grad"] = sm(dp_grad, m1, (P(), P("i")), P(), check=False)(W, X)
    out["data_parallel_grad_equals_full"] = lib.grad(loss)(W, X)
    total = sm(lambda w, x: lax.psum(jnp.sum(jnp.sin(x @ w)), "i"), m1, (P(), P("i")), P())
    out["grad_of_shard_map"] = lib.grad(total)(W, X)
    out["jit"] = lib.jit(sm(lambda x, w: x @ w, m2, (P("a"), P(None, "b")), P("a", "b")))(X, W)
    per = sm(lambda v: lax.psum(v * v, "i"), m1, P("i"), P())
    out["vmap_of_shard_map"] = lib.vmap(per)(np.stack([V, -V, 2 * V]))

    # pcast: a replicated value cast to vary; its derivative is summed over the shards,
    # with grad inside the shard_map (the cast's transpose) and outside (the boundary)
    def pc_loss(w, x):
        return jnp.sum(jnp.sin(x @ lax.pcast(w, "i", to="varying")))

    out["pcast_grad_inside"] = sm(lib.grad(pc_loss), m1, (P(), P("i")), P())(W, X)
    pc_total = sm(lambda w, x: lax.psum(pc_loss(w, x), "i"), m1, (P(), P("i")), P())
    out["pcast_grad_outside/w"], out["pcast_grad_outside/x"] = lib.grad(pc_total, (0, 1))(W, X)
    return {k: np.asarray(v) for k, v in out.items()}
