"""``custom_batching.custom_vmap`` and ``sequential_vmap`` programs, run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/custom_vmap_jax.npz`` was recorded, ``functrace`` in
tests/test_custom_batching.py. The rules differ from their functions on purpose (a
factor 2, a sum of all examples), so the numbers show where the rule ran: ``vmap`` with
batched and unbatched arguments, pytree arguments and outputs, an unbatched output,
nested ``vmap``, ``jit``, ``jvp`` of ``vmap`` and ``vmap`` of ``jvp``, ``grad`` of
``vmap`` (JAX's rules have no reverse mode: ``sequential_vmap`` is differentiated in
forward mode), a ``custom_vjp`` around a ``custom_vmap`` (JAX's documented way to get reverse
mode), and ``sequential_vmap``. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(11)
X = _rng.standard_normal((3, 4))
Y = _rng.standard_normal((3, 4))
S = _rng.standard_normal(3)


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp, cb = lib.numpy, lib.custom_batching
    out: dict[str, Any] = {}

    @cb.custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_rule(axis_size, in_batched, xs, ys):
        # twice the function, and records what it was given in the output
        return 2.0 * jnp.sin(xs) * ys + 0.0 * axis_size, any(in_batched)

    out["call"] = f(X[0], Y[0])
    out["vmap"] = lib.vmap(f)(X, Y)
    out["vmap_in_axes_none"] = lib.vmap(f, in_axes=(0, None))(X, Y[0])
    out["vmap_in_axes_1"] = lib.vmap(f, in_axes=(1, 1))(X, Y)
    out["vmap_out_axes_1"] = lib.vmap(f, out_axes=1)(X, Y)
    out["nested_vmap"] = lib.vmap(lib.vmap(f))(X, Y)
    out["jit_vmap"] = lib.jit(lib.vmap(f))(X, Y)
    out["vmap_jit"] = lib.vmap(lib.jit(f))(X, Y)
    p, t = lib.jvp(lib.vmap(f), (X, Y), (np.ones_like(X), np.zeros_like(Y)))
    out["jvp_vmap/primal"], out["jvp_vmap/tangent"] = p, t
    p, t = lib.vmap(lambda a, b: lib.jvp(f, (a, b), (b, a)))(X, Y)
    out["vmap_jvp/primal"], out["vmap_jvp/tangent"] = p, t
    out["grad_vmap"] = lib.grad(lambda a: jnp.sum(lib.vmap(f)(a, Y) ** 2))(X)
    out["jvp"] = lib.jvp(f, (X[0], Y[0]), (np.ones(4), np.ones(4)))[1]

    # pytrees in and out, an unbatched output (the sum over examples, the same for all)
    @cb.custom_vmap
    def g(d):
        return {"u": d["a"] * 3.0, "v": jnp.sum(d["b"])}

    @g.def_vmap
    def g_rule(axis_size, in_batched, d):
        ab, bb = in_batched[0]["a"], in_batched[0]["b"]
        total = jnp.sum(d["b"]) if not bb else jnp.sum(d["b"], axis=-1)
        return {"u": d["a"] * 3.0 + 1.0, "v": total}, {"u": ab, "v": bb}

    out["pytree/u"], out["pytree/v"] = (lambda r: (r["u"], r["v"]))(
        lib.vmap(g, in_axes=({"a": 0, "b": None},))({"a": X, "b": S})
    )
    r = lib.vmap(g)({"a": X, "b": Y})
    out["pytree_both/u"], out["pytree_both/v"] = r["u"], r["v"]

    # custom_vjp around custom_vmap: vmap runs the rule, grad the custom rule
    @lib.custom_vjp
    @cb.custom_vmap
    def h(x):
        return jnp.sin(x)

    @h.def_vmap
    def h_rule(axis_size, in_batched, xs):
        return jnp.sin(xs) + 1.0, True

    h.defvjp(lambda x: (h(x), jnp.cos(x)), lambda c, ct: (5.0 * c * ct,))
    out["custom_vjp/vmap"] = lib.vmap(h)(S)
    out["custom_vjp/grad"] = lib.grad(lambda s: jnp.sum(h(s)))(S)
    out["custom_vjp/vmap_grad"] = lib.vmap(lib.grad(h))(S)

    # sequential_vmap: the function one example at a time, unbatched arguments shared
    k = cb.sequential_vmap(lambda x, y: jnp.dot(x, y) + jnp.sum(x))
    out["sequential/both"] = lib.vmap(k)(X, Y)
    out["sequential/shared"] = lib.vmap(k, in_axes=(0, None))(X, Y[1])
    out["sequential/jvp_vmap"] = lib.jvp(lib.vmap(k), (X, Y), (Y, X))[1]
    out["sequential/jit"] = lib.jit(lib.vmap(k, in_axes=(None, 0)))(X[0], Y)
    return {key: np.asarray(v) for key, v in out.items()}
