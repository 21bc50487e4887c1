"""Reverse mode inside ``shard_map`` bodies with JAX's default ``check_vma=True``, run
under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, on 4 host
devices: ``XLA_FLAGS=--xla_force_host_platform_device_count=4``) when
``tests/fixtures/shard_map_vma_jax.npz`` was recorded, ``functrace`` in
tests/test_sharding.py. JAX types each value of a body as varying over some mesh axes
or not, and a gradient with respect to a value that is the same on every shard sums
over the shards; ``psum``'s cotangent passes through. The cases: ``grad`` of a
per-shard loss and of its ``pmean``/``psum``, ``pmean`` of per-shard gradients (a sum
in JAX, since each shard's gradient is already the total), ``grad`` of ``psum`` of a
varying and of a replicated value, ``vjp`` with given cotangents, ``jacrev``,
``hessian``, ``value_and_grad``, ``jit`` inside and around the body, training steps in
``lax.scan``, ``while_loop`` and ``fori_loop`` inside the body, ``all_gather``/``ppermute``/
``axis_index``/``pcast`` under ``grad``, collectives in loop and branch bodies (a
``ppermute`` ring in ``fori_loop``/``scan``, ``axis_index`` in ``cond``), a clipping
``custom_vjp``, two-axis meshes with arguments replicated over one axis or both, and
the same programs with ``check_vma=False`` (each shard's own gradient). Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(11)
X = _rng.standard_normal((16, 3))
Y = _rng.standard_normal(16)
W = np.array([0.5, -1.0, 2.0])
V = np.arange(8.0) - 2.5
M = np.arange(8.0).reshape(4, 2) / 4.0


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp, lax, P = lib.numpy, lib.lax, lib.sharding.PartitionSpec
    auto = lib.sharding.AxisType.Auto
    m1 = lib.make_mesh((4,), ("d",), axis_types=(auto,))
    m2 = lib.make_mesh((2, 2), ("a", "b"), axis_types=(auto, auto))
    grad = lib.grad
    out: dict[str, Any] = {}

    def sm(f, ins, outs, mesh=m1, check=True):
        return lib.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs, check_vma=check)

    def loss(w, xb, yb):
        return jnp.mean((jnp.tanh(xb @ w) - yb) ** 2)

    s3 = (P(), P("d"), P("d"))
    for check in (True, False):
        tag = "" if check else "/no_vma"
        out["pmean_of_grad" + tag] = sm(
            lambda w, xb, yb: lax.pmean(grad(loss)(w, xb, yb), "d"), s3, P(), check=check
        )(W, X, Y)
        out["grad_of_pmean" + tag] = sm(
            lambda w, xb, yb: lax.pmean(grad(lambda w: lax.pmean(loss(w, xb, yb), "d"))(w), "d"),
            s3, P(), check=check,
        )(W, X, Y)  # fmt: skip
        out["grad_of_psum_varying" + tag] = sm(
            lambda v: grad(lambda v: lax.psum(jnp.sum(v**3), "d"))(v), P("d"), P("d"), check=check
        )(V)
        out["grad_then_psum" + tag] = sm(
            lambda w, v: lax.psum(grad(lambda w: jnp.sum(jnp.sin(w * v)))(w), "d"),
            (P(), P("d")), P(), check=check,
        )(1.5, V)  # fmt: skip
    out["grad_per_shard_loss"] = sm(lambda w, xb, yb: grad(loss)(w, xb, yb), s3, P())(W, X, Y)
    out["grad_of_psum_replicated"] = sm(
        lambda w, v: grad(lambda w: lax.psum(w**2, "d") * 3.0)(w), (P(), P("d")), P()
    )(1.5, V)
    out["grad_replicated_only"] = sm(
        lambda w, v: grad(lambda w: jnp.sin(w) * w**3)(w), (P(), P("d")), P()
    )(1.5, V)
    out["value_and_grad/value"], out["value_and_grad/grad"] = sm(
        lambda w, xb, yb: lib.value_and_grad(lambda w: lax.psum(loss(w, xb, yb), "d"))(w),
        s3, (P(), P()),
    )(W, X, Y)  # fmt: skip

    def vjp_varying(w, xb, yb):
        _, f = lib.vjp(lambda w: jnp.tanh(xb @ w), w)
        return f(yb)[0]

    def vjp_replicated(w, xb, yb):
        _, f = lib.vjp(lambda w: lax.psum(jnp.tanh(xb @ w), "d"), w)
        return f(jnp.arange(4.0))[0]

    out["vjp_varying_output"] = sm(vjp_varying, s3, P())(W, X, Y)
    out["vjp_replicated_output"] = sm(vjp_replicated, s3, P())(W, X, Y)
    out["jacrev_replicated_output"] = sm(
        lambda w, xb, yb: lib.jacrev(lambda w: lax.psum(jnp.tanh(xb @ w), "d"))(w), s3, P()
    )(W, X, Y)
    out["jacrev_varying_output"] = sm(
        lambda w, xb, yb: lib.jacrev(lambda w: jnp.tanh(xb @ w))(w), s3, P("d")
    )(W, X, Y)
    out["hessian_of_pmean"] = sm(
        lambda w, xb, yb: lib.hessian(lambda w: lax.pmean(loss(w, xb, yb), "d"))(w), s3, P()
    )(W, X, Y)
    out["jit_inside"] = sm(lambda w, xb, yb: lib.jit(grad(loss))(w, xb, yb), s3, P())(W, X, Y)
    out["jit_around"] = lib.jit(sm(lambda w, xb, yb: grad(loss)(w, xb, yb), s3, P()))(W, X, Y)

    def step(w, xb, yb):
        return w - 0.1 * grad(lambda w: lax.pmean(loss(w, xb, yb), "d"))(w)

    out["scan_training"] = sm(
        lambda w, xb, yb: lax.scan(lambda w, _: (step(w, xb, yb), None), w, None, length=3)[0],
        s3, P(),
    )(W, X, Y)  # fmt: skip
    out["fori_training"] = sm(
        lambda w, xb, yb: lax.fori_loop(0, 3, lambda i, w: step(w, xb, yb), w), s3, P()
    )(W, X, Y)
    out["while_training"] = sm(
        lambda w, xb, yb: lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, step(c[1], xb, yb)), (0, w)
        )[1],
        s3, P(),
    )(W, X, Y)  # fmt: skip
    out["fori_traced_bounds_training"] = sm(
        lambda w, xb, yb, n: lax.fori_loop(0, n, lambda i, w: step(w, xb, yb), w),
        (*s3, P()), P(),
    )(W, X, Y, 3)  # fmt: skip
    out["cond_grad"] = sm(
        lambda w, xb, yb: lax.cond(
            jnp.sum(w) > 0, lambda w: grad(loss)(w, xb, yb), lambda w: -w, w
        ),
        s3, P(),
    )(W, X, Y)  # fmt: skip
    out["cond_traced_predicate"] = lib.jit(  # a staged cond: its result stays replicated
        sm(
            lambda w, xb, yb: lax.cond(
                jnp.sum(w) > 0, lambda w: grad(loss)(w, xb, yb), lambda w: -w, w
            ),
            s3,
            P(),
        )  # fmt: skip
    )(W, X, Y)
    out["all_gather_grad"] = sm(
        lambda v: grad(lambda v: jnp.sum(lax.all_gather(v, "d") ** 2))(v), P("d"), P("d")
    )(V)
    ring = [(k, (k + 1) % 4) for k in range(4)]
    out["ppermute_grad"] = sm(
        lambda w, v: grad(lambda w: jnp.sum(lax.ppermute(w * v, "d", ring) * v))(w),
        (P(), P("d")), P(),
    )(1.5, V)  # fmt: skip
    # collectives in loop and branch bodies: a ring in fori_loop (static and traced
    # bounds) and scan, axis_index in a cond, a ring all-reduce differentiated inside
    # the body and outside
    ring_step = lambda v: lambda i, acc: lax.ppermute(acc, "d", ring) + v  # noqa: E731
    out["ring_fori"] = sm(lambda v: lax.fori_loop(0, 3, ring_step(v), v), P("d"), P("d"))(V)
    out["ring_fori_traced_bounds"] = sm(
        lambda v, n: lax.fori_loop(0, n, ring_step(v), v), (P("d"), P()), P("d")
    )(V, 3)
    out["ring_scan"] = sm(
        lambda v: lax.scan(lambda c, _: (ring_step(v)(0, c), None), v, None, length=3)[0],
        P("d"), P("d"),
    )(V)  # fmt: skip
    out["axis_index_in_cond"] = sm(
        lambda v: lax.cond(jnp.sum(v) > 3, lambda v: v * lax.axis_index("d"), lambda v: -v, v),
        P("d"), P("d"),
    )(V)  # fmt: skip

    def ring_sum(v):
        def step(i, c):
            moved = lax.ppermute(c[0], "d", ring)
            return moved, c[1] + moved

        return lax.fori_loop(0, 3, step, (v, v))[1]

    out["ring_allreduce_grad_inside"] = sm(
        lambda v: grad(lambda v: jnp.sum(ring_sum(v) ** 2))(v), P("d"), P("d")
    )(V)
    out["ring_allreduce_grad_outside"] = grad(
        lambda v: jnp.sum(sm(ring_sum, P("d"), P("d"))(v) ** 2)
    )(V)

    # a custom_vjp bwd that is not linear (clipping) sees JAX's cotangent: the parts of
    # the shards summed before it runs
    @lib.custom_vjp
    def clip_ct(x):
        return x

    clip_ct.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
    out["custom_vjp_clipping"] = sm(
        lambda w, v: grad(lambda w: jnp.sum(clip_ct(w) * v))(w), (P(), P("d")), P()
    )(1.5, V + 3.0)
    out["custom_vjp_clipping_varying"] = sm(
        lambda w, v: grad(lambda w: jnp.sum(clip_ct(w * v)))(w), (P(), P("d")), P()
    )(1.5, V + 3.0)
    out["axis_index_grad"] = sm(lambda w: grad(lambda w: w * lax.axis_index("d") * w)(w), P(), P())(
        1.5
    )
    out["pcast_grad"] = sm(
        lambda w, v: grad(lambda w: jnp.sum(lax.pcast(w, "d", to="varying") * v))(w),
        (P(), P("d")), P(),
    )(1.5, V)  # fmt: skip
    out["mesh2_replicated_both"] = sm(
        lambda w, x: grad(lambda w: jnp.sum(jnp.sin(w * x)))(w), (P(), P("a", "b")), P(), m2
    )(1.5, M)
    out["mesh2_replicated_over_b"] = sm(
        lambda w, x: grad(lambda w: jnp.sum(jnp.sin(w * x)))(w), (P("a"), P("a", "b")), P("a"), m2
    )(np.array([1.5, -0.5]), M)
    out["mesh2_psum_over_a"] = sm(
        lambda w, x: grad(lambda w: lax.psum(jnp.sum(jnp.sin(w * x)), "a"))(w),
        (P(), P("a", "b")), P(), m2,
    )(1.5, M)  # fmt: skip

    def refused(f, *args):
        try:
            f(*args)
        except ValueError:
            return np.array(True)
        return np.array(False)

    out["all_gather_left_out_is_refused"] = refused(
        sm(lambda v: lax.all_gather(v, "d"), P("d"), P()), V
    )
    return {k: np.asarray(v) for k, v in out.items()}
