"""``symbolic_zeros=True`` custom rules and ``linear_call``, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/symzeros_jax.npz`` was recorded, ``functrace`` in
tests/test_symzeros.py. The rules record what they were given (the ``perturbed`` flags
of a ``custom_vjp`` fwd, which cotangents reached bwd and which tangents reached a
``custom_jvp`` rule as ``SymbolicZero``s) as the sorted distinct tuples seen, under
``grad`` of one or both arguments, ``jit`` both ways around, ``vmap`` both ways around,
``grad`` of ``grad``, ``jvp`` of ``grad`` and ``jvp``. The ``linear_call`` transposes
are not the true transposes (a factor 2 or 7), so the numbers show where they ran
(JAX fails on ``grad`` of ``grad`` of one, so that is tested in functrace only).
Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(5)
X = _rng.standard_normal(3)
Y = _rng.standard_normal(3)
XB = _rng.standard_normal((2, 3))
T = _rng.standard_normal(3)


def _flags(seen: list[tuple[bool, ...]]) -> np.ndarray:
    """The distinct tuples seen, sorted (an empty (0, 2) array if none)."""
    got = sorted(set(seen))
    return np.array(got, dtype=bool).reshape(len(got), -1) if got else np.zeros((0, 2), bool)


def _vjp_cases(lib: Any, out: dict[str, Any]) -> None:
    jnp, cd = lib.numpy, lib.custom_derivatives
    SZ = cd.SymbolicZero
    fwd_seen: list[tuple[bool, ...]] = []
    bwd_seen: list[tuple[bool, ...]] = []

    @lib.custom_vjp
    def g(x, y):
        return x * jnp.sin(y), x * y

    def g_fwd(x, y):
        fwd_seen.append((x.perturbed, y.perturbed))
        xv, yv = cd.custom_vjp_primal_tree_values((x, y))
        # not g itself: then jvp of grad differentiates this body (as JAX requires)
        return (xv * jnp.sin(yv), xv * yv), (xv, yv)

    def g_bwd(res, ct):
        x, y = res
        c0, c1 = ct
        bwd_seen.append((type(c0) is SZ, type(c1) is SZ))
        c0 = jnp.zeros(c0.shape, c0.dtype) if type(c0) is SZ else c0
        c1 = jnp.zeros(c1.shape, c1.dtype) if type(c1) is SZ else c1
        return c0 * jnp.sin(y) + c1 * y, c0 * x * jnp.cos(y) + c1 * x

    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)

    def run(key: str, fn: Any) -> None:
        fwd_seen.clear()
        bwd_seen.clear()
        val = fn()
        for i, v in enumerate(val if isinstance(val, tuple) else (val,)):
            out[f"vjp/{key}/val{i}"] = v
        out[f"vjp/{key}/fwd"] = _flags(fwd_seen)
        out[f"vjp/{key}/bwd"] = _flags(bwd_seen)

    first = lambda x, y: jnp.sum(g(x, y)[0])  # noqa: E731
    second = lambda x, y: jnp.sum(g(x, y)[1])  # noqa: E731
    both = lambda x, y: jnp.sum(g(x, y)[0] * g(x, y)[1])  # noqa: E731
    run("grad_x_first", lambda: lib.grad(first)(X, Y))
    run("grad_y_second", lambda: lib.grad(second, argnums=1)(X, Y))
    run("grad_both", lambda: lib.grad(both, argnums=(0, 1))(X, Y))
    run("jit_grad", lambda: lib.jit(lib.grad(first, argnums=1))(X, Y))
    run("grad_jit", lambda: lib.grad(lib.jit(second))(X, Y))
    run("vmap_grad", lambda: lib.vmap(lib.grad(first), (0, None))(XB, Y))
    run("grad_vmap", lambda: lib.grad(lambda x, y: jnp.sum(lib.vmap(g, (0, None))(x, y)[1]))(XB, Y))
    run(
        "grad_vmap_y",
        lambda: lib.grad(lambda x, y: jnp.sum(lib.vmap(g, (0, None))(x, y)[0]), argnums=1)(XB, Y),
    )

    def gg(y):
        return lib.grad(lambda x: jnp.sum(g(x, y)[0] ** 2))(X)

    run("grad_grad", lambda: lib.grad(lambda y: jnp.sum(gg(y)))(Y))
    run("jvp_grad", lambda: lib.jvp(lambda x: lib.grad(both)(x, Y), (X,), (T,)))
    run("jvp_unperturbed", lambda: lib.jvp(lambda t: g(X, Y)[0] * t, (T,), (T,)))
    fwd_seen.clear()
    try:
        lib.jvp(lambda x: g(x, Y)[0], (X,), (T,))
        out["vjp/jvp_perturbed/raised"] = np.array(False)
    except TypeError:
        out["vjp/jvp_perturbed/raised"] = np.array(True)
    out["vjp/jvp_perturbed/fwd"] = _flags(fwd_seen)

    @lib.custom_vjp
    def h(x, y):
        return x * 2.0, y * 3.0

    def h_fwd(x, y):
        return h(x.value, y.value), None

    def h_bwd(_, ct):
        c0, c1 = ct
        gx = SZ.from_primal_value(X) if type(c0) is SZ else 2.0 * c0
        gy = None if type(c1) is SZ else 3.0 * c1
        return gx, gy

    h.defvjp(h_fwd, h_bwd, symbolic_zeros=True)
    out["vjp/h_grad_x"] = lib.grad(lambda x, y: jnp.sum(h(x, y)[0]), argnums=(0, 1))(X, Y)
    out["vjp/h_grad_y"] = lib.grad(lambda x, y: jnp.sum(h(x, y)[1]), argnums=(0, 1))(X, Y)
    out["vjp/h_vmap_grad"] = lib.vmap(lib.grad(lambda x, y: jnp.sum(h(x, y)[1]), argnums=(0, 1)))(
        XB, XB
    )


def _jvp_cases(lib: Any, out: dict[str, Any]) -> None:
    jnp, cd = lib.numpy, lib.custom_derivatives
    SZ = cd.SymbolicZero
    seen: list[tuple[bool, ...]] = []

    @lib.custom_jvp
    def k(x, y):
        return x * jnp.sin(y)

    @k.defjvp
    def k_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append((type(tx) is SZ, type(ty) is SZ))
        t = 0.0
        if type(tx) is not SZ:
            t = t + tx * jnp.sin(y)
        if type(ty) is not SZ:
            t = t + ty * x * jnp.cos(y)
        return k(x, y), t

    k.defjvp(k_jvp, symbolic_zeros=True)

    @lib.custom_jvp
    def m(x, y):
        return x * y, jnp.round(y)

    def m_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        tx = jnp.zeros(tx.shape, tx.dtype) if type(tx) is SZ else tx
        ty = jnp.zeros(ty.shape, ty.dtype) if type(ty) is SZ else ty
        r = m(x, y)
        return r, (tx * y + x * ty, SZ.from_primal_value(r[1]))

    m.defjvp(m_jvp, symbolic_zeros=True)

    def run(key: str, fn: Any) -> None:
        seen.clear()
        val = fn()
        for i, v in enumerate(val if isinstance(val, tuple) else (val,)):
            out[f"jvp/{key}/val{i}"] = v
        out[f"jvp/{key}/seen"] = _flags(seen)

    f = lambda x, y: jnp.sum(k(x, y) ** 2)  # noqa: E731
    run("jvp_x", lambda: lib.jvp(lambda x: k(x, Y), (X,), (T,)))
    run("grad_y", lambda: lib.grad(f, argnums=1)(X, Y))
    run("grad_both", lambda: lib.grad(f, argnums=(0, 1))(X, Y))
    run("jit_jvp", lambda: lib.jit(lambda x, t: lib.jvp(lambda y: k(x, y), (Y,), (t,)))(X, T))
    run("jvp_jit", lambda: lib.jvp(lib.jit(lambda x: k(x, Y)), (X,), (T,)))
    run("vmap_grad", lambda: lib.vmap(lib.grad(f), (0, None))(XB, Y))
    run("grad_vmap", lambda: lib.grad(lambda y: jnp.sum(lib.vmap(k, (0, None))(XB, y)))(Y))
    run("jvp_vmap", lambda: lib.jvp(lambda x: lib.vmap(k, (0, None))(x, Y), (XB,), (XB,)))
    run("grad_grad", lambda: lib.grad(lambda y: jnp.sum(lib.grad(f)(X, y)))(Y))
    run("m_jvp", lambda: lib.jvp(lambda x, y: m(x, y), (X, Y), (T, T)))
    run("m_grad", lambda: lib.grad(lambda y: jnp.sum(m(X, y)[0] + m(X, y)[1]))(Y))
    run("m_vmap_jvp", lambda: lib.vmap(lambda x, t: lib.jvp(lambda y: m(X, y), (x,), (t,)))(XB, XB))


def _linear_cases(lib: Any, out: dict[str, Any]) -> None:
    jnp, cd = lib.numpy, lib.custom_derivatives

    def fun(r, x):
        return x["a"] / r, x["b"] * r[0]

    def fun_t(r, ct):
        c0, c1 = ct
        return {"a": 2.0 * c0 / r, "b": 7.0 * jnp.sum(c1) * r[0]}

    def lc(r, a, b):
        return cd.linear_call(fun, fun_t, r, {"a": a, "b": b})

    R = np.abs(Y) + 1.0
    loss = lambda a, b: jnp.sum(jnp.sin(lc(R, a, b)[0])) + lc(R, a, b)[1] ** 2  # noqa: E731
    out["lin/value0"], out["lin/value1"] = lc(R, X, 1.5)
    out["lin/jvp"] = lib.jvp(lambda a, b: lc(R, a, b), (X, 1.5), (T, 0.5))[1]
    out["lin/grad"] = lib.grad(loss, argnums=(0, 1))(X, 1.5)
    out["lin/jit_grad"] = lib.jit(lib.grad(loss, argnums=(0, 1)))(X, 1.5)
    out["lin/grad_jit"] = lib.grad(lib.jit(loss), argnums=(0, 1))(X, 1.5)

    def one(a):
        return cd.linear_call(lambda r, x: x / r, lambda r, c: 2.0 * c / r, R, a)

    lt = lib.linear_transpose(one, X)
    out["lin/transpose"] = lt(T)[0]
    ltt = lib.linear_transpose(lambda c: lt(c)[0], X)
    out["lin/transpose_twice"] = ltt(T)[0]
    out["lin/vjp"] = lib.vjp(one, X)[1](T)[0]


def cases(lib: Any) -> dict[str, np.ndarray]:
    out: dict[str, Any] = {}
    _vjp_cases(lib, out)
    _jvp_cases(lib, out)
    _linear_cases(lib, out)
    flat: dict[str, np.ndarray] = {}
    for k, v in out.items():  # a tuple (several gradients) as one entry per element
        for i, e in enumerate(v) if isinstance(v, tuple) else [(None, v)]:
            flat[k if i is None else f"{k}/{i}"] = np.asarray(e)
    return flat
