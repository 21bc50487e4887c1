"""JAX programs covering the topics of JAX's tutorials, run under JAX and under functrace.

A second set next to ``tests/jax_programs.py``, with the same contract: each program is
a function of the library namespace (``jax`` itself, with ``jax_enable_x64``, when
``tests/fixtures/jax_programs_tutorials.npz`` was recorded; ``functrace`` in
tests/test_jax_programs_tutorials.py), written as a JAX user writes it, returning a
dict of NumPy arrays. The programs exercise what the tutorials teach and the first set
does not: state threaded through pure functions, pytrees (custom nodes, key paths,
transposes), advanced autodiff, vmap's axes and names, structured control flow, jit's
options, the sharp bits (index clamping, ``.at`` updates, integer overflow, immutable
arrays), typed PRNG keys and samplers, and optimisers over pytrees. Strings are
returned only as the names of error types; a key path's text is returned as its
character codes. Nothing here imports JAX.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from recorded import error_name


def _codes(s: str) -> np.ndarray:
    return np.array([ord(c) for c in s], dtype=np.int64)


def _raises(f: Any, error: type) -> np.ndarray:
    try:
        f()
    except error:
        return np.asarray(True)
    return np.asarray(False)


def stateful_counter_and_regression(jax: Any) -> dict[str, np.ndarray]:
    """A counter whose state is passed in and out, and a jitted linear-regression loop
    whose parameters are the carried state."""
    jnp = jax.numpy

    class FunctionalCounter:
        def reset(self):
            return jnp.array(0)

        def count(self, n):
            n = n + 1
            return n, n * 10

    counter = FunctionalCounter()
    state = counter.reset()
    seen = []
    count = jax.jit(counter.count)
    for _ in range(4):
        state, out = count(state)
        seen.append(out)

    rng = np.random.default_rng(11)
    xs = rng.normal(size=(40,))
    ys = 3.0 * xs - 1.5 + 0.1 * rng.normal(size=(40,))

    def model(theta, x):
        w, b = theta
        return w * x + b

    def loss(theta, x, y):
        return jnp.mean((model(theta, x) - y) ** 2)

    @jax.jit
    def update(theta, x, y, lr=0.1):
        return theta - lr * jax.grad(loss)(theta, x, y)

    theta = jnp.array([1.0, 1.0])
    history = []
    for _ in range(25):
        theta = update(theta, xs, ys)
        history.append(loss(theta, xs, ys))
    return {
        "counter_outputs": np.asarray(seen),
        "counter_state": np.asarray(state),
        "theta": np.asarray(theta),
        "losses": np.asarray(history),
    }


def pytree_custom_nodes(jax: Any) -> dict[str, np.ndarray]:
    """Custom pytree nodes three ways (register_pytree_node, the class decorator and
    register_dataclass) under tree_map, grad, jit and vmap; None as an empty subtree."""
    jnp = jax.numpy
    tu = jax.tree_util

    class Affine:
        def __init__(self, w, b, name):
            self.w, self.b, self.name = w, b, name

    tu.register_pytree_node(
        Affine,
        lambda a: ((a.w, a.b), a.name),
        lambda name, children: Affine(children[0], children[1], name),
    )

    @tu.register_pytree_node_class
    class Scaled:
        def __init__(self, scale, inner):
            self.scale, self.inner = scale, inner

        def tree_flatten(self):
            return (self.scale, self.inner), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    @functools.partial(tu.register_dataclass, data_fields=["mean", "log_std"], meta_fields=["size"])
    @dataclasses.dataclass
    class Gaussian:
        mean: Any
        log_std: Any
        size: int

    rng = np.random.default_rng(12)
    layer = Affine(rng.normal(size=(3, 2)), rng.normal(size=2), "first")
    model = Scaled(np.float64(0.7), layer)
    dist = Gaussian(rng.normal(size=2), np.array([0.1, -0.2]), 2)
    x = rng.normal(size=(5, 3))

    def loss(model, dist, x):
        h = model.scale * jnp.tanh(x @ model.inner.w + model.inner.b)
        z = (h - dist.mean) / jnp.exp(dist.log_std)
        return jnp.mean(z**2) + jnp.sum(dist.log_std) * dist.size

    g_model, g_dist = jax.jit(jax.grad(loss, argnums=(0, 1)))(model, dist, x)
    doubled = jax.tree_util.tree_map(lambda a: 2 * a, model)
    per_row = jax.vmap(loss, in_axes=(None, None, 0))(model, dist, x[:, None, :])

    with_none = {"a": np.arange(3.0), "b": None, "c": (None, np.ones(2))}
    leaves, treedef = tu.tree_flatten(with_none)
    rebuilt = tu.tree_unflatten(treedef, [2 * leaf for leaf in leaves])
    return {
        "g_w": np.asarray(g_model.inner.w),
        "g_b": np.asarray(g_model.inner.b),
        "g_scale": np.asarray(g_model.scale),
        "g_mean": np.asarray(g_dist.mean),
        "g_log_std": np.asarray(g_dist.log_std),
        "name_kept": np.asarray(g_model.inner.name == "first"),
        "size_kept": np.asarray(g_dist.size),
        "doubled_w": np.asarray(doubled.inner.w),
        "per_row": np.asarray(per_row),
        "num_leaves": np.asarray(len(leaves)),
        "num_leaves_def": np.asarray(treedef.num_leaves),
        "none_kept": np.asarray(rebuilt["b"] is None and rebuilt["c"][0] is None),
        "rebuilt_c": np.asarray(rebuilt["c"][1]),
        "leaves_of_gaussian": np.asarray(len(tu.tree_leaves(dist))),
    }


def pytree_paths_and_transpose(jax: Any) -> dict[str, np.ndarray]:
    """Key paths (tree_flatten_with_path, keystr, tree_map_with_path), tree.map with
    is_leaf and several trees, tree_structure and tree_transpose."""
    jnp = jax.numpy
    tu = jax.tree_util

    @dataclasses.dataclass
    class Point:
        x: Any
        y: Any

    tu.register_dataclass(Point, data_fields=["x", "y"], meta_fields=[])

    tree = {
        "layers": [
            {"w": np.arange(4.0).reshape(2, 2), "b": np.ones(2)},
            {"w": np.eye(2), "b": np.zeros(2)},
        ],
        "point": Point(np.float64(1.5), np.float64(-2.0)),
        "pair": (np.array([1.0, 2.0]), np.array(3.0)),
    }
    with_paths, _ = tu.tree_flatten_with_path(tree)
    path_text = "|".join(tu.keystr(path) for path, _ in with_paths)

    def decay(path, leaf):
        # weights (leaves under a key named "w") decay, everything else is kept
        is_weight = any(getattr(k, "key", None) == "w" for k in path)
        return leaf * 0.5 if is_weight else leaf

    decayed = tu.tree_map_with_path(decay, tree)
    decayed_leaves = jnp.concatenate([jnp.ravel(leaf) for leaf in tu.tree_leaves(decayed)])

    pairs = [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
    summed = jax.tree.map(lambda p: p[0] + p[1], pairs, is_leaf=lambda n: isinstance(n, tuple))
    a = {"u": np.array([1.0, 2.0]), "v": np.array(3.0)}
    b = {"u": np.array([10.0, 20.0]), "v": np.array(30.0)}
    c = {"u": np.array([100.0, 200.0]), "v": np.array(300.0)}
    combined = jax.tree.map(lambda p, q, r: p + 2 * q - r, a, b, c)

    batch = [{"obs": np.float64(i), "act": np.float64(10 * i)} for i in range(3)]
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"obs": 0, "act": 0})
    transposed = tu.tree_transpose(outer, inner, batch)
    transposed2 = jax.tree.transpose(outer, inner, batch)
    return {
        "path_codes": _codes(path_text),
        "num_paths": np.asarray(len(with_paths)),
        "decayed": np.asarray(decayed_leaves),
        "is_leaf_sums": np.asarray(summed),
        "combined_u": np.asarray(combined["u"]),
        "combined_v": np.asarray(combined["v"]),
        "transposed_obs": np.asarray(transposed["obs"]),
        "transposed_act": np.asarray(transposed["act"]),
        "transposed2_act": np.asarray(transposed2["act"]),
        "outer_leaves": np.asarray(outer.num_leaves),
    }


def hvp_four_ways(jax: Any) -> dict[str, np.ndarray]:
    """Hessian-vector products forward-over-reverse, reverse-over-forward,
    reverse-over-reverse and through jacfwd(jacrev); jax.linearize and its reuse."""
    jnp = jax.numpy
    rng = np.random.default_rng(13)
    a = rng.normal(size=(4, 4))
    x = rng.normal(size=4)
    v = rng.normal(size=4)

    def f(x):
        return jnp.sum(jnp.sin(a @ x) * x) + 0.25 * jnp.sum(x**4)

    def hvp_fwd_rev(f, x, v):
        return jax.jvp(jax.grad(f), (x,), (v,))[1]

    def hvp_rev_fwd(f, x, v):
        g = lambda x: jax.jvp(f, (x,), (v,))[1]
        return jax.grad(g)(x)

    def hvp_rev_rev(f, x, v):
        return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)

    hess = jax.jacfwd(jax.jacrev(f))(x)
    y, f_jvp = jax.linearize(jnp.tanh, a @ x)
    tangents = [f_jvp(col) for col in np.eye(4)]
    batched_hvp = jax.vmap(lambda v: hvp_fwd_rev(f, x, v))(np.eye(4))
    return {
        "fwd_rev": np.asarray(hvp_fwd_rev(f, x, v)),
        "rev_fwd": np.asarray(hvp_rev_fwd(f, x, v)),
        "rev_rev": np.asarray(hvp_rev_rev(f, x, v)),
        "jacfwd_jacrev": np.asarray(hess @ v),
        "hessian": np.asarray(hess),
        "jit_hvp": np.asarray(jax.jit(hvp_fwd_rev, static_argnums=0)(f, x, v)),
        "batched_hvp": np.asarray(batched_hvp),
        "linearize_y": np.asarray(y),
        "linearize_tangents": np.asarray(jnp.stack(tangents)),
    }


def td0_and_custom_rules(jax: Any) -> dict[str, np.ndarray]:
    """stop_gradient in a TD(0) value update, a custom_vjp gradient clipper, and a
    custom_jvp with a nondiff argument."""
    jnp = jax.numpy
    rng = np.random.default_rng(14)

    def value_fn(theta, state):
        return jnp.dot(theta, state)

    def td_loss(theta, s_prev, r, s_next):
        target = r + 0.9 * value_fn(theta, s_next)
        return -0.5 * (jax.lax.stop_gradient(target) - value_fn(theta, s_prev)) ** 2

    theta = rng.normal(size=3)
    states = rng.normal(size=(6, 3))
    rewards = rng.normal(size=5)
    td_updates = []
    for t in range(5):
        g = jax.grad(td_loss)(theta, states[t], rewards[t], states[t + 1])
        theta = theta + 0.1 * g
        td_updates.append(g)

    @jax.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def clip_fwd(lo, hi, x):
        return x, (lo, hi)

    def clip_bwd(res, g):
        lo, hi = res
        return (None, None, jnp.clip(g, lo, hi))

    clip_gradient.defvjp(clip_fwd, clip_bwd)

    def clipped_loss(x):
        return jnp.sum(clip_gradient(-0.5, 0.5, 3.0 * x) ** 2)

    xs = np.array([-1.0, -0.05, 0.0, 0.1, 2.0])

    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def apply_scaled(fn, x):
        return 2.0 * fn(x)

    @apply_scaled.defjvp
    def apply_scaled_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        y, dy = jax.jvp(fn, (x,), (t,))
        return 2.0 * y, 3.0 * dy  # a deliberately different tangent

    def use(x):
        return apply_scaled(jnp.sin, x)

    return {
        "theta": np.asarray(theta),
        "td_grads": np.asarray(td_updates),
        "clipped_grad": np.asarray(jax.grad(clipped_loss)(xs)),
        "clipped_value": np.asarray(clipped_loss(xs)),
        "clipped_jit_grad": np.asarray(jax.jit(jax.grad(clipped_loss))(xs)),
        "nondiff_value": np.asarray(use(0.3)),
        "nondiff_grad": np.asarray(jax.grad(use)(0.3)),
        "nondiff_vmap_grad": np.asarray(jax.vmap(jax.grad(use))(xs)),
    }


def complex_differentiation(jax: Any) -> dict[str, np.ndarray]:
    """Holomorphic grad, jacfwd and jacrev of complex functions (holomorphic=True)."""
    jnp = jax.numpy

    def holo(z):
        return jnp.sin(z) * z**2

    z = np.complex128(0.3 + 0.7j)
    zs = np.array([0.1 + 0.2j, -1.0 + 0.5j, 2.0 - 1.0j])
    return {
        "grad_holo": np.asarray(jax.grad(holo, holomorphic=True)(z)),
        "jacfwd_holo": np.asarray(jax.jacfwd(lambda z: jnp.exp(z) * z, holomorphic=True)(zs)),
        "jacrev_holo": np.asarray(jax.jacrev(lambda z: jnp.exp(z) * z, holomorphic=True)(zs)),
    }


def argnums_aux_and_trees(jax: Any) -> dict[str, np.ndarray]:
    """grad of a real function of a complex input, grad with an argnums tuple and
    has_aux, and value_and_grad with respect to a nested pytree."""
    jnp = jax.numpy
    zs = np.array([0.1 + 0.2j, -1.0 + 0.5j, 2.0 - 1.0j])

    def real_of_complex(z):
        return jnp.sum(jnp.abs(z) ** 2 + jnp.real(z * jnp.conj(z) * 1j) + jnp.imag(z))

    g_real = jax.grad(real_of_complex)(zs)

    def loss(w, b, x, scale):
        pred = jnp.tanh(x @ w + b) * scale
        return jnp.sum(pred**2), {"max": jnp.max(pred), "n": pred.shape[0]}

    rng = np.random.default_rng(15)
    w, b, x = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3))
    (gw, gscale), aux = jax.grad(loss, argnums=(0, 3), has_aux=True)(w, b, x, 1.5)

    params = {"w": w, "b": b, "extra": [np.float64(0.2), np.array([1.0, -1.0])]}

    def tree_loss(p):
        return jnp.sum((x @ p["w"] + p["b"]) ** 2) * p["extra"][0] + jnp.sum(p["extra"][1] ** 3)

    value, grads = jax.value_and_grad(tree_loss)(params)
    return {
        "grad_real_of_complex": np.asarray(g_real),
        "gw": np.asarray(gw),
        "gscale": np.asarray(gscale),
        "aux_max": np.asarray(aux["max"]),
        "aux_n": np.asarray(aux["n"]),
        "tree_value": np.asarray(value),
        "tree_gw": np.asarray(grads["w"]),
        "tree_gb": np.asarray(grads["b"]),
        "tree_gextra0": np.asarray(grads["extra"][0]),
        "tree_gextra1": np.asarray(grads["extra"][1]),
    }


def vmap_axes_and_names(jax: Any) -> dict[str, np.ndarray]:
    """in_axes and out_axes as pytrees and negative axes, psum and axis_index over a
    named axis, nested vmap, and axis_size for an all-unbatched call."""
    jnp = jax.numpy
    lax = jax.lax
    rng = np.random.default_rng(16)

    def f(params, x):
        return {"y": params["w"] @ x + params["b"], "norm": jnp.sum(x**2)}

    params = {"w": rng.normal(size=(2, 3)), "b": rng.normal(size=(5, 2))}
    xs = rng.normal(size=(3, 5))  # the batch on the last axis
    out = jax.vmap(f, in_axes=({"w": None, "b": 0}, -1), out_axes={"y": 1, "norm": 0})(params, xs)

    def normalise(v):
        return v / lax.psum(v, axis_name="batch")

    def centred_rank(v):
        return v - lax.pmean(v, "batch"), lax.axis_index("batch")

    vals = np.array([1.0, 2.0, 3.0, 4.0])
    normalised = jax.vmap(normalise, axis_name="batch")(vals)
    centred, index = jax.vmap(centred_rank, axis_name="batch")(vals)

    mat = rng.normal(size=(3, 4))
    vec = rng.normal(size=(5, 4))
    dots = jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 0)), in_axes=(0, None))(mat, vec)

    def mixed(x, y):
        return x * y

    outer = jax.vmap(jax.vmap(mixed, in_axes=(0, None)), in_axes=(None, 0))(
        np.arange(3.0), np.arange(4.0)
    )
    ones = jax.vmap(lambda x: 2.0 * jnp.ones(2), axis_size=3)(None)
    per_example = jax.vmap(jax.grad(lambda w, x: jnp.sum(jnp.tanh(w @ x))), in_axes=(None, 1))(
        params["w"], xs
    )
    return {
        "y": np.asarray(out["y"]),
        "norm": np.asarray(out["norm"]),
        "normalised": np.asarray(normalised),
        "centred": np.asarray(centred),
        "index": np.asarray(index),
        "dots": np.asarray(dots),
        "outer": np.asarray(outer),
        "axis_size_ones": np.asarray(ones),
        "per_example_grads": np.asarray(per_example),
    }


def control_flow_tour(jax: Any) -> dict[str, np.ndarray]:
    """lax.switch, lax.scan (reverse, unroll, length without xs), lax.map with
    batch_size, fori_loop with a pytree carry, a counting while_loop, cond with several
    operands, and jnp.where versus cond under grad."""
    jnp = jax.numpy
    lax = jax.lax

    branches = [lambda x: x + 1.0, lambda x: x * x, lambda x: -jnp.sin(x)]
    switched = [lax.switch(i, branches, 0.5) for i in range(-1, 5)]
    switch_grads = jax.vmap(jax.grad(lambda x, i: lax.switch(i, branches, x)), (0, 0))(
        np.array([0.3, 0.3, 0.3]), np.array([0, 1, 2])
    )

    xs = np.arange(1.0, 6.0)

    def cum(carry, x):
        carry = 0.5 * carry + x
        return carry, carry

    fwd_final, fwd = lax.scan(cum, 0.0, xs)
    rev_final, rev = lax.scan(cum, 0.0, xs, reverse=True)
    unrolled_final, unrolled = lax.scan(cum, 0.0, xs, unroll=2)
    fib_final, fib = lax.scan(lambda c, _: ((c[1], c[0] + c[1]), c[0]), (0, 1), None, length=10)
    scan_grad = jax.grad(lambda s: lax.scan(cum, s, xs, reverse=True)[0])(1.0)

    mapped = lax.map(lambda x: jnp.sum(x**2), np.arange(14.0).reshape(7, 2), batch_size=3)

    def body(i, state):
        return {"total": state["total"] + i, "prod": state["prod"] * (i + 1.0)}

    looped = lax.fori_loop(0, 6, body, {"total": 0, "prod": 1.0})
    steps = lax.while_loop(lambda c: c[0] > 1, lambda c: (c[0] // 2, c[1] + 1), (1000, 0))

    def cond_ops(p, x, y):
        return lax.cond(p > 0, lambda a, b: a * b, lambda a, b: a - b, x, y)

    cond_vals = jax.vmap(cond_ops)(
        np.array([1.0, -1.0]), np.array([2.0, 3.0]), np.array([4.0, 5.0])
    )
    cond_grads = jax.grad(cond_ops, argnums=(1, 2))(1.0, 2.0, 4.0)

    def with_where(x):
        return jnp.sum(jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x**2))

    def with_cond(x):
        return jnp.sum(jax.vmap(lambda v: lax.cond(v > 0, jnp.sqrt, jnp.square, v))(x))

    pts = np.array([-2.0, -0.5, 0.25, 4.0])
    return {
        "switched": np.asarray(switched),
        "switch_grads": np.asarray(switch_grads),
        "scan": np.asarray(fwd),
        "scan_final": np.asarray(fwd_final),
        "scan_rev": np.asarray(rev),
        "scan_rev_final": np.asarray(rev_final),
        "scan_unroll": np.asarray(unrolled),
        "scan_unroll_final": np.asarray(unrolled_final),
        "fib": np.asarray(fib),
        "fib_final": np.asarray(fib_final),
        "scan_grad": np.asarray(scan_grad),
        "lax_map": np.asarray(mapped),
        "fori_total": np.asarray(looped["total"]),
        "fori_prod": np.asarray(looped["prod"]),
        "while_steps": np.asarray(steps),
        "cond_vals": np.asarray(cond_vals),
        "cond_grads": np.asarray(cond_grads),
        "where_grad": np.asarray(jax.grad(with_where)(pts)),
        "cond_grad": np.asarray(jax.grad(with_cond)(pts)),
        "jit_cond_grad": np.asarray(jax.jit(jax.grad(with_cond))(pts)),
    }


def jit_options(jax: Any) -> dict[str, np.ndarray]:
    """jit with static_argnums and static_argnames, a jitted method through
    functools.partial, lower and compile, donate_argnums, and retracing on shapes."""
    jnp = jax.numpy

    traces = []

    def power_sum(x, n, *, mode):
        traces.append((x.shape, n, mode))
        y = x**n
        return jnp.sum(y) if mode == "sum" else jnp.max(y)

    f = jax.jit(power_sum, static_argnums=1, static_argnames="mode")
    x3 = np.array([1.0, -2.0, 3.0])
    results = [
        f(x3, 2, mode="sum"),
        f(x3, 2, mode="sum"),
        f(x3, 3, mode="sum"),
        f(x3, 3, mode="max"),
        f(np.arange(4.0), 2, mode="sum"),
    ]

    class Polynomial:
        def __init__(self, coefs):
            self.coefs = tuple(coefs)

        @functools.partial(jax.jit, static_argnums=0)
        def __call__(self, x):
            return sum(c * x**k for k, c in enumerate(self.coefs))

        def __hash__(self):
            return hash(self.coefs)

        def __eq__(self, other):
            return isinstance(other, Polynomial) and self.coefs == other.coefs

    poly = Polynomial([1.0, -2.0, 0.5])
    poly_vals = poly(np.linspace(-1.0, 1.0, 5))

    def affine(w, x):
        return jnp.tanh(w @ x)

    w = np.arange(6.0).reshape(2, 3) / 10
    compiled = jax.jit(affine).lower(w, x3).compile()
    compiled_out = compiled(w, x3)

    donated = jax.jit(lambda buf, d: buf + d, donate_argnums=0)
    buf = jnp.zeros(3)
    for d in range(3):
        buf = donated(buf, jnp.full(3, d + 1.0))
    return {
        "results": np.asarray(results),
        "num_traces": np.asarray(len(traces)),
        "poly": np.asarray(poly_vals),
        "compiled": np.asarray(compiled_out),
        "donated": np.asarray(buf),
    }


def sharp_bits(jax: Any) -> dict[str, np.ndarray]:
    """Out-of-bounds gathers clamp and scatters drop, .at updates with modes, integer
    overflow wraps, jnp.asarray of lists, and the error of assigning into an array."""
    jnp = jax.numpy
    x = jnp.arange(5.0)
    idx = jnp.array([0, 4, 7, -1, -9])

    def assign():
        x[0] = 10.0

    gathered = jax.jit(lambda x, i: x[i])(x, idx)  # traced indices clamp
    got_fill = x.at[idx].get(mode="fill", fill_value=-1.0)
    got_clip = x.at[idx].get(mode="clip")
    scatter_set = x.at[idx].set(100.0)
    scatter_add = x.at[jnp.array([1, 1, 6, 2])].add(1.0)
    scatter_mul = x.at[jnp.array([1, 3, 3])].multiply(3.0)
    scatter_min = x.at[jnp.array([2, 2, 4])].min(jnp.array([1.5, -1.0, 9.0]))
    scatter_max = x.at[jnp.array([0, 3])].max(jnp.array([0.5, 2.0]))
    scatter_clip = x.at[jnp.array([0, 9])].set(-5.0, mode="clip")
    scatter_drop = x.at[jnp.array([0, 9])].add(7.0, mode="drop")
    sliced = x.at[1:3].set(jnp.array([-1.0, -2.0]))
    hinted = x.at[jnp.array([0, 2])].add(1.0, indices_are_sorted=True, unique_indices=True)
    mat = jnp.zeros((3, 3)).at[jnp.diag_indices(3)].set(jnp.arange(1.0, 4.0))

    big = jnp.array([2**31 - 1, 2**30], dtype=jnp.int32)
    wrapped = big + jnp.int32(1)
    uint = jnp.array([0, 1], dtype=jnp.uint8) - jnp.uint8(1)

    from_list = jnp.asarray([1, 2.5, 3])
    from_nested = jnp.asarray([[1, 2], [3, 4]])
    from_bools = jnp.asarray([True, False])
    grad_of_gather = jax.jit(jax.grad(lambda v, i: jnp.sum(v[i] ** 2)))(x, jnp.array([0, 0, 4, 2]))
    grad_of_clip = jax.jit(jax.grad(lambda v, i: jnp.sum(v.at[i].get(mode="clip") ** 2)))(
        x, jnp.array([0, 9, 2])
    )
    return {
        "gathered": np.asarray(gathered),
        "got_fill": np.asarray(got_fill),
        "got_clip": np.asarray(got_clip),
        "scatter_set": np.asarray(scatter_set),
        "scatter_add": np.asarray(scatter_add),
        "scatter_mul": np.asarray(scatter_mul),
        "scatter_min": np.asarray(scatter_min),
        "scatter_max": np.asarray(scatter_max),
        "scatter_clip": np.asarray(scatter_clip),
        "scatter_drop": np.asarray(scatter_drop),
        "sliced": np.asarray(sliced),
        "hinted": np.asarray(hinted),
        "diag": np.asarray(mat),
        "int32_wrapped": np.asarray(wrapped),
        "uint8_wrapped": np.asarray(uint),
        "from_list": np.asarray(from_list),
        "from_nested": np.asarray(from_nested),
        "from_bools": np.asarray(from_bools),
        "grad_of_gather": np.asarray(grad_of_gather),
        "grad_of_clip": np.asarray(grad_of_clip),
        "assign_error": error_name(assign),
        "x_unchanged": np.asarray(x),
    }


def typed_keys_and_samplers(jax: Any) -> dict[str, np.ndarray]:
    """Keys from random.key next to raw PRNGKey arrays, split into many (an array of 5
    typed keys has shape (5,), of raw ones (5, 2)), fold_in, key_data and wrap_key_data,
    and samplers with shapes, dtypes and bounds."""
    jnp = jax.numpy
    random = jax.random

    typed = random.key(7)
    raw = random.PRNGKey(7)
    keys = random.split(typed, 5)
    raw_keys = random.split(raw, 5)
    same_stream = random.normal(keys[3], (2,)) - random.normal(raw_keys[3], (2,))
    data = random.key_data(keys)
    rewrapped = random.wrap_key_data(data[1])
    folded = random.fold_in(typed, 42)
    k1, k2, k3, k4, k5 = random.split(folded, 5)
    return {
        "key_data": np.asarray(data),
        "typed_keys_shape": np.asarray(keys.shape),
        "raw_keys_shape": np.asarray(raw_keys.shape),
        "raw_key": np.asarray(raw),
        "same_stream": np.asarray(same_stream),
        "rewrapped": np.asarray(random.uniform(rewrapped, (3,))),
        "folded_data": np.asarray(random.key_data(folded)),
        "normal": np.asarray(random.normal(k1, (2, 3))),
        "normal_f32": np.asarray(random.normal(k1, (4,), dtype=jnp.float32)),
        "uniform_bounds": np.asarray(random.uniform(k2, (5,), minval=-3.0, maxval=-1.0)),
        "uniform_f32": np.asarray(random.uniform(k2, (3,), jnp.float32, 2.0, 4.0)),
        "randint_i32": np.asarray(random.randint(k3, (6,), -5, 5, dtype=jnp.int32)),
        "vmap_split": np.asarray(
            jax.vmap(lambda k: random.key_data(random.split(k, 2)))(random.split(k4, 3))
        ),
        "jit_sample": np.asarray(jax.jit(lambda k: random.normal(k, (3,)))(k5)),
    }


def discrete_samplers(jax: Any) -> dict[str, np.ndarray]:
    """categorical, bernoulli, choice (with and without replacement, with p),
    permutation (of an array, independent rows), gumbel and truncated_normal."""
    jnp = jax.numpy
    random = jax.random
    keys = random.split(random.key(31), 12)
    logits = jnp.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    items = jnp.arange(10.0) * 1.5
    p = jnp.array([0.1, 0.0, 0.4, 0.2, 0.3])
    table = jnp.arange(12).reshape(3, 4)
    return {
        "categorical": np.asarray(random.categorical(keys[0], logits, axis=-1, shape=(5, 2))),
        "categorical_axis0": np.asarray(random.categorical(keys[1], logits, axis=0)),
        "bernoulli": np.asarray(random.bernoulli(keys[2], jnp.array([0.1, 0.5, 0.9]), (4, 3))),
        "choice_replace": np.asarray(random.choice(keys[3], items, (6,))),
        "choice_no_replace": np.asarray(random.choice(keys[4], items, (6,), replace=False)),
        "choice_p": np.asarray(random.choice(keys[5], 5, (8,), p=p)),
        "choice_p_no_replace": np.asarray(random.choice(keys[6], 5, (3,), replace=False, p=p)),
        "choice_axis1": np.asarray(random.choice(keys[7], table, (2,), replace=False, axis=1)),
        "permutation_array": np.asarray(random.permutation(keys[8], table)),
        "permutation_independent": np.asarray(
            random.permutation(keys[9], table, axis=1, independent=True)
        ),
        "gumbel": np.asarray(random.gumbel(keys[10], (2, 3))),
        "truncated_normal": np.asarray(random.truncated_normal(keys[11], -1.0, 0.5, (6,))),
        "truncated_f32": np.asarray(
            random.truncated_normal(keys[11], 0.0, 2.0, (3,), dtype=jnp.float32)
        ),
    }


def adam_over_tree(jax: Any) -> dict[str, np.ndarray]:
    """Adam written by hand with jax.tree.map over a nested dict of parameters,
    with the optimiser state a pytree carried through a jitted step."""
    jnp = jax.numpy
    rng = np.random.default_rng(17)
    x = rng.normal(size=(30, 3))
    y = np.sin(x @ np.array([1.0, -0.5, 0.25]))[:, None]
    params = {
        "hidden": {"w": rng.normal(size=(3, 8)) * 0.5, "b": np.zeros(8)},
        "out": {"w": rng.normal(size=(8, 1)) * 0.5, "b": np.zeros(1)},
    }

    def predict(p, x):
        h = jnp.tanh(x @ p["hidden"]["w"] + p["hidden"]["b"])
        return h @ p["out"]["w"] + p["out"]["b"]

    def loss(p):
        return jnp.mean((predict(p, x) - y) ** 2)

    def init(p):
        zeros = jax.tree.map(jnp.zeros_like, p)
        return {"m": zeros, "v": zeros, "t": jnp.array(0)}

    @jax.jit
    def step(p, state, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
        value, g = jax.value_and_grad(loss)(p)
        t = state["t"] + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], g)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g**2, state["v"], g)
        m_hat = jax.tree.map(lambda m: m / (1 - b1**t), m)
        v_hat = jax.tree.map(lambda v: v / (1 - b2**t), v)
        p = jax.tree.map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps), p, m_hat, v_hat)
        return p, {"m": m, "v": v, "t": t}, value

    state = init(params)
    losses = []
    for _ in range(15):
        params, state, value = step(params, state)
        losses.append(value)
    return {
        "losses": np.asarray(losses),
        "hidden_w": np.asarray(params["hidden"]["w"]),
        "out_b": np.asarray(params["out"]["b"]),
        "m_out_w": np.asarray(state["m"]["out"]["w"]),
        "t": np.asarray(state["t"]),
    }


def simple_network_training(jax: Any) -> dict[str, np.ndarray]:
    """An MLP classifier on synthetic two-moon-like data: random init from keys, a
    prediction written for one example and vmapped, jitted grad steps, 20 losses."""
    jnp = jax.numpy
    random = jax.random
    rng = np.random.default_rng(18)
    angles = rng.uniform(0, np.pi, size=40)
    upper = np.stack([np.cos(angles[:20]), np.sin(angles[:20])], axis=1)
    lower = np.stack([1 - np.cos(angles[20:]), 0.5 - np.sin(angles[20:])], axis=1)
    x = np.concatenate([upper, lower]) + 0.1 * rng.normal(size=(40, 2))
    labels = np.concatenate([np.zeros(20, int), np.ones(20, int)])

    def init_layer(key, n_in, n_out):
        wk, bk = random.split(key)
        return {
            "w": random.normal(wk, (n_in, n_out)) / jnp.sqrt(n_in),
            "b": 0.1 * random.normal(bk, (n_out,)),
        }

    keys = random.split(random.key(5), 3)
    sizes = [2, 16, 16, 2]
    params = [init_layer(k, m, n) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def predict_one(params, x):
        for layer in params[:-1]:
            x = jax.nn.gelu(x @ layer["w"] + layer["b"])
        logits = x @ params[-1]["w"] + params[-1]["b"]
        return jax.nn.log_softmax(logits)

    predict = jax.vmap(predict_one, in_axes=(None, 0))

    def loss(params, x, labels):
        logp = predict(params, x)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    @jax.jit
    def update(params, x, labels):
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return jax.tree.map(lambda p, g: p - 0.3 * g, params, grads), value

    losses = []
    for _ in range(20):
        params, value = update(params, x, labels)
        losses.append(value)
    correct = jnp.sum(jnp.argmax(predict(params, x), axis=1) == labels)
    return {
        "losses": np.asarray(losses),
        "w0": np.asarray(params[0]["w"]),
        "b2": np.asarray(params[2]["b"]),
        "correct": np.asarray(correct),
        "one_prediction": np.asarray(predict_one(params, x[0])),
    }


def errors_users_meet(jax: Any) -> dict[str, np.ndarray]:
    """The errors the tutorials show: Python control flow on a traced value under jit,
    a non-scalar output to grad, an integer input to grad, mismatched vmap axis sizes;
    and how static arguments avoid the first."""
    jnp = jax.numpy

    def relu_python(x):
        if x > 0:
            return x
        return 0.0 * x

    def loop_python(x, n):
        for _ in range(n):
            x = x * 2
        return x

    return {
        "jit_python_if": error_name(lambda: jax.jit(relu_python)(1.0)),
        "grad_python_if": np.asarray(jax.grad(relu_python)(2.0)),
        "static_loop": np.asarray(jax.jit(loop_python, static_argnums=1)(1.5, 3)),
        "static_list": error_name(lambda: jax.jit(loop_python, static_argnums=1)(1.5, [3])),
        "grad_non_scalar": error_name(lambda: jax.grad(lambda x: x * 2)(np.ones(3))),
        "grad_int_input": error_name(lambda: jax.grad(lambda x: x * 2)(3)),
        "vmap_sizes": error_name(lambda: jax.vmap(jnp.add)(np.ones(2), np.ones(3))),
        "grad_allow_int": np.asarray(
            jax.grad(lambda x, k: x * k, allow_int=True, argnums=0)(2.0, 3)
        ),
    }


def tree_utilities_and_scan_training(jax: Any) -> dict[str, np.ndarray]:
    """More of jax.tree (leaves_with_path, reduce, all, flatten with is_leaf),
    tree_util.Partial through jit, jacrev of a dict-valued function, hessian of a
    pytree input, and a training loop written as one lax.scan carrying the parameters."""
    jnp = jax.numpy
    tu = jax.tree_util
    tree = {"a": [np.array([1.0, 2.0]), np.array(3.0)], "b": (np.ones((2, 2)), None)}
    with_path = jax.tree.leaves_with_path(tree)
    total = jax.tree.reduce(lambda acc, leaf: acc + jnp.sum(leaf), tree, 0.0)
    positive = jax.tree.all(jax.tree.map(lambda leaf: bool(jnp.all(leaf > 0)), tree))
    lists_as_leaves, _ = tu.tree_flatten(tree, is_leaf=lambda n: isinstance(n, list))

    scale = tu.Partial(jnp.multiply, np.array([2.0, -1.0]))
    applied = jax.jit(lambda f, x: f(x))(scale, np.array([3.0, 4.0]))

    def stats(x):
        return {"sum": jnp.sum(x**2), "prod": x[0] * x[1] * x[2]}

    jac = jax.jacrev(stats)(np.array([1.0, 2.0, 3.0]))
    hess = jax.hessian(lambda p: jnp.sum(p["u"] ** 2 * p["v"]))(
        {"u": np.array([1.0, 2.0]), "v": np.array(3.0)}
    )

    rng = np.random.default_rng(19)
    xs = rng.normal(size=(30, 2))
    ys = xs @ np.array([0.5, -2.0]) + 1.0

    def loss(p, x, y):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    def train_step(p, _):
        value, g = jax.value_and_grad(loss)(p, xs, ys)
        return jax.tree.map(lambda a, b: a - 0.2 * b, p, g), value

    params0 = {"w": jnp.zeros(2), "b": jnp.array(0.0)}
    final, losses = jax.jit(lambda p: jax.lax.scan(train_step, p, None, length=30))(params0)
    keys = jax.random.split(jax.random.PRNGKey(3), (2, 3))
    return {
        "path_count": np.asarray(len(with_path)),
        "path_codes": _codes(",".join(tu.keystr(k) for k, _ in with_path)),
        "total": np.asarray(total),
        "all_positive": np.asarray(positive),
        "num_list_leaves": np.asarray(len(lists_as_leaves)),
        "partial_applied": np.asarray(applied),
        "jac_sum": np.asarray(jac["sum"]),
        "jac_prod": np.asarray(jac["prod"]),
        "hess_uu": np.asarray(hess["u"]["u"]),
        "hess_uv": np.asarray(hess["u"]["v"]),
        "hess_vu": np.asarray(hess["v"]["u"]),
        "scan_losses": np.asarray(losses),
        "scan_w": np.asarray(final["w"]),
        "scan_b": np.asarray(final["b"]),
        "split_shape_keys": np.asarray(keys),
        "more_samplers": np.asarray(
            jnp.concatenate(
                [
                    jax.random.exponential(keys[0, 0], (3,)),
                    jax.random.beta(keys[0, 1], 2.0, 3.0, (3,)),
                    jax.random.gamma(keys[0, 2], 1.5, (3,)),
                    jax.random.laplace(keys[1, 0], (3,)),
                    jax.random.multivariate_normal(
                        keys[1, 1],
                        np.zeros(3),
                        np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.5]]),
                    ),
                ]
            )
        ),
    }


def tracing_errors_and_autodiff_extras(jax: Any) -> dict[str, np.ndarray]:
    """Value-dependent shapes and loops under jit and grad (the errors, and the
    size= and static-bound ways round them; a JAX ConcretizationTypeError caught by
    its class, as JAX programs do), the double-where gradient, vjp with
    has_aux, jvp of pytrees, custom_vjp with nondiff_argnums, custom_jvp.defjvps and
    jax.checkpoint."""
    jnp = jax.numpy
    lax = jax.lax
    x = np.array([-1.0, 2.0, 0.0, 3.0, -0.5])

    def positives(x):
        return x[x > 0]

    def first_nonzeros(x):
        return jnp.nonzero(x, size=3, fill_value=-1)[0]

    def loop_sum(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x + 1.0, 0.0)

    def until_large(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0)

    def safe_log_sqrt(x):
        ok = x > 0
        return jnp.sum(jnp.where(ok, jnp.log(jnp.sqrt(jnp.where(ok, x, 1.0))), 0.0))

    def unsafe_log_sqrt(x):
        return jnp.sum(jnp.where(x > 0, jnp.log(jnp.sqrt(x)), 0.0))

    def with_aux(w):
        y = jnp.tanh(w * np.arange(1.0, 4.0))
        return y, {"peak": jnp.max(y)}

    out, pullback, aux = jax.vjp(with_aux, 0.3, has_aux=True)
    (cot,) = pullback(np.array([1.0, -1.0, 2.0]))
    primal_tree, tangent_tree = jax.jvp(
        lambda p: {"s": jnp.sum(p["a"] * p["b"]), "d": p["a"] - p["b"]},
        ({"a": np.array([1.0, 2.0]), "b": np.array([3.0, -1.0])},),
        ({"a": np.array([0.5, 0.0]), "b": np.array([1.0, 1.0])},),
    )

    @functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
    def scaled_tanh(x, temperature):
        return jnp.tanh(x / temperature)

    def scaled_tanh_fwd(x, temperature):
        y = scaled_tanh(x, temperature)
        return y, y

    def scaled_tanh_bwd(temperature, y, g):
        return ((1.0 - y**2) / temperature * g * 0.5,)  # half the true gradient

    scaled_tanh.defvjp(scaled_tanh_fwd, scaled_tanh_bwd)

    @jax.custom_jvp
    def product(a, b):
        return a * b

    product.defjvps(lambda ta, ans, a, b: ta * b, lambda tb, ans, a, b: 10.0 * tb * a)

    @jax.checkpoint
    def block(w, x):
        return jnp.sin(jnp.sin(w * x) * w)

    return {
        "bool_mask_under_jit": error_name(lambda: jax.jit(positives)(x)),
        "bool_mask_eager": np.asarray(positives(x)),
        "nonzero_under_jit": _raises(
            lambda: jax.jit(lambda x: jnp.nonzero(x)[0])(x), jax.errors.ConcretizationTypeError
        ),
        "nonzero_size": np.asarray(jax.jit(first_nonzeros)(x)),
        "fori_static_grad": np.asarray(jax.grad(loop_sum)(0.7, 4)),
        "while_jvp": np.asarray(jax.jvp(until_large, (1.5,), (1.0,))[1]),
        "double_where_grad": np.asarray(jax.grad(safe_log_sqrt)(x)),
        "single_where_grad": np.asarray(jax.grad(unsafe_log_sqrt)(x)),
        "vjp_out": np.asarray(out),
        "vjp_cot": np.asarray(cot),
        "vjp_aux": np.asarray(aux["peak"]),
        "jvp_tree_s": np.asarray(tangent_tree["s"]),
        "jvp_tree_d": np.asarray(tangent_tree["d"]),
        "jvp_primal_d": np.asarray(primal_tree["d"]),
        "nondiff_vjp": np.asarray(jax.grad(lambda x: jnp.sum(scaled_tanh(x, 2.0)))(x)),
        "defjvps_grads": np.asarray(jax.grad(product, argnums=(0, 1))(2.0, 3.0)),
        "checkpoint_grads": np.asarray(jax.grad(block, argnums=(0, 1))(0.8, 1.3)),
        "big_int": error_name(lambda: jnp.array(2**70)),
    }


def documented_differences(jax: Any) -> dict[str, np.ndarray]:
    """Sharp bits where functrace differs from JAX on purpose (README, "Coming from
    JAX" and "Dtypes"): an out-of-range index known eagerly, a list given to a jnp
    reduction, the mean of booleans (float32 in JAX with x64 on), and reverse-mode
    derivatives of a while_loop and of a fori_loop with traced bounds (errors in JAX,
    computed by functrace)."""
    jnp = jax.numpy
    x = jnp.arange(5.0)
    return {
        "eager_out_of_range": error_name(lambda: x[7]),
        "eager_out_of_range_value": np.asarray(x[jnp.array([0, 7, -9])]),
        "sum_of_list": error_name(lambda: jnp.sum([1.0, 2.0])),
        "while_grad": error_name(
            lambda: jax.grad(
                lambda x: jax.lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0)
            )(1.5)
        ),
        "fori_traced_bounds_grad": error_name(
            lambda: jax.jit(
                jax.grad(lambda x, n: jax.lax.fori_loop(0, n, lambda i, c: c * x + 1.0, 0.0))
            )(0.7, 4)
        ),
        "mean_of_bools": np.asarray(jnp.mean(jnp.array([True, False, True, True]))),
    }


def out_of_range_gather_gradient(jax: Any) -> dict[str, np.ndarray]:
    """The gradient of x[i] under jit with an index out of range: the read clamps;
    JAX's gradient skips the clamped position."""
    jnp = jax.numpy
    x = jnp.arange(5.0)
    grad = jax.jit(jax.grad(lambda v, i: jnp.sum(v[i] ** 2)))(x, jnp.array([0, 0, 9, 2]))
    return {"grad": np.asarray(grad)}


PROGRAMS = {
    f.__name__: f
    for f in (
        stateful_counter_and_regression,
        pytree_custom_nodes,
        pytree_paths_and_transpose,
        hvp_four_ways,
        td0_and_custom_rules,
        complex_differentiation,
        argnums_aux_and_trees,
        vmap_axes_and_names,
        control_flow_tour,
        jit_options,
        sharp_bits,
        typed_keys_and_samplers,
        discrete_samplers,
        adam_over_tree,
        simple_network_training,
        errors_users_meet,
        tree_utilities_and_scan_training,
        tracing_errors_and_autodiff_extras,
        documented_differences,
        out_of_range_gather_gradient,
    )
}
