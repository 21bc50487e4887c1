"""JAX programs in the idioms of current JAX code and documentation, run under JAX and
under functrace.

A fourth set next to ``tests/jax_programs.py``, with the same contract: each program is
a function of the library namespace (``jax`` itself, with ``jax_enable_x64``, on 4 host
devices, ``XLA_FLAGS=--xla_force_host_platform_device_count=4``, when
``tests/fixtures/jax_programs_modern.npz`` was recorded; ``functrace`` in
tests/test_jax_programs_modern.py), returning a dict of NumPy arrays. The programs use
typed keys everywhere (split and unpacked, carried through loops, mapped over, trees of
keys next to trees of parameters), dropout and noise injection in training loops,
``jax.shard_map`` data-parallel and model-parallel steps with JAX's default
``check_vma=True``, a ring all-reduce and a collective matmul written with ``ppermute``,
dataclass pytrees with an Adam optimizer, structured control flow with pytree carries,
custom derivative rules under transformations, and debug callbacks (their call counts
only). Meshes come from ``jax.make_mesh`` with ``Auto`` axes. Nothing here imports JAX.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
from typing import Any

import numpy as np

from recorded import error_name

_rng = np.random.default_rng(2024)
X = _rng.standard_normal((16, 3))
Y = np.tanh(X @ np.array([0.5, -1.0, 2.0])) + 0.05 * _rng.standard_normal(16)


def _mesh(jax: Any, shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
    auto = jax.sharding.AxisType.Auto
    return jax.make_mesh(shape, names, axis_types=(auto,) * len(names))


def typed_keys_tour(jax: Any) -> dict[str, np.ndarray]:
    """random.key, split unpacked and indexed, split into a (2, 3) array of keys,
    key_data/wrap_key_data round trips, jnp.stack and jnp.where on keys, vmap over a key
    array, fold_in with a traced counter under jit."""
    jnp, random = jax.numpy, jax.random
    key = random.key(0)
    key, sub = random.split(key)
    keys = random.split(key, 4)
    grid = random.split(sub, (2, 3))
    first = random.normal(keys[0], (3,))
    last = random.uniform(keys[-1], (2,))
    grid_draws = jax.vmap(jax.vmap(lambda k: random.normal(k)))(grid)
    data = random.key_data(grid)
    back = random.wrap_key_data(data)
    same = jnp.all(random.key_data(back) == data)
    stacked = jnp.stack([keys[1], keys[2]])
    chosen = jnp.where(jnp.array([True, False]), stacked, jnp.stack([keys[3], keys[0]]))

    @jax.jit
    def per_step(k, i):
        return random.bernoulli(random.fold_in(k, i), 0.3, (5,))

    steps = jnp.stack([per_step(key, i) for i in range(3)])
    return {
        "first": np.asarray(first),
        "last": np.asarray(last),
        "grid_shape": np.asarray(grid.shape),
        "grid_draws": np.asarray(grid_draws),
        "grid_data": np.asarray(data),
        "roundtrip_same": np.asarray(same),
        "stacked_shape": np.asarray(stacked.shape),
        "where_data": np.asarray(random.key_data(chosen)),
        "where_draws": np.asarray(jax.vmap(lambda k: random.uniform(k, (2,)))(chosen)),
        "fold_in_steps": np.asarray(steps),
        "key_dtype_is_prng": np.asarray(jnp.issubdtype(key.dtype, jax.dtypes.prng_key)),
    }


def keys_through_loops(jax: Any) -> dict[str, np.ndarray]:
    """Keys carried through lax.scan (a pytree carry of a key, a counter and a sum),
    fori_loop and while_loop, a random walk under jit, and the keys split in a scan
    returned as its output."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random

    def step(carry, x):
        key, count, total = carry["key"], carry["count"], carry["total"]
        key, sub = random.split(key)
        noise = random.normal(sub, ())
        total = total + x * noise
        return {"key": key, "count": count + 1, "total": total}, noise

    init = {"key": random.key(1), "count": jnp.int32(0), "total": jnp.float64(0.0)}
    final, noises = jax.jit(lambda c, xs: lax.scan(step, c, xs))(init, jnp.arange(1.0, 7.0))

    def walk(i, state):
        key, pos = state
        key, sub = random.split(key)
        return key, pos + random.choice(sub, jnp.array([-1, 1]))

    key_end, pos = lax.fori_loop(0, 10, walk, (random.key(2), 0))

    def cond(state):
        return state[1] < 3.0

    def body(state):
        key, acc, n = state
        key, sub = random.split(key)
        return key, acc + random.exponential(sub), n + 1

    _, acc, n = jax.jit(lambda k: lax.while_loop(cond, body, (k, 0.0, 0)))(random.key(3))

    def split_out(key, _):
        key, sub = random.split(key)
        return key, sub

    _, subs = lax.scan(split_out, random.key(4), None, length=3)
    return {
        "count": np.asarray(final["count"]),
        "total": np.asarray(final["total"]),
        "noises": np.asarray(noises),
        "final_key_data": np.asarray(random.key_data(final["key"])),
        "walk_pos": np.asarray(pos),
        "walk_key": np.asarray(random.key_data(key_end)),
        "while_acc": np.asarray(acc),
        "while_n": np.asarray(n),
        "scan_keys_shape": np.asarray(subs.shape),
        "scan_keys_draws": np.asarray(jax.vmap(lambda k: random.normal(k, (2,)))(subs)),
    }


def tree_of_keys_init(jax: Any) -> dict[str, np.ndarray]:
    """One key per parameter leaf, made with tree.unflatten(treedef, list(split(key, n))),
    mapped together with a tree of shapes and with a params tree in both argument
    orders; vmap over keys for an ensemble of initialisations."""
    jnp, random = jax.numpy, jax.random
    shapes = {"dense": {"w": (3, 4), "b": (4,)}, "out": {"w": (4, 1), "b": (1,)}}
    shape_leaves, treedef = jax.tree.flatten(shapes, is_leaf=lambda s: isinstance(s, tuple))
    keys = jax.tree.unflatten(treedef, list(random.split(random.key(5), len(shape_leaves))))
    params = jax.tree.map(
        lambda k, s: 0.5 * random.normal(k, s), keys, shapes, is_leaf=lambda s: isinstance(s, tuple)
    )
    perturbed = jax.tree.map(lambda p, k: p + 0.01 * random.normal(k, p.shape), params, keys)
    resampled = jax.tree.map(lambda k, p: random.uniform(k, p.shape) * p, keys, params)

    def init(key):
        k1, k2 = random.split(key)
        return {"w": random.normal(k1, (3,)), "b": random.normal(k2, ())}

    ensemble = jax.vmap(init)(random.split(random.key(6), 3))
    leaves = jax.tree.leaves(params)
    return {
        "dense_w": np.asarray(params["dense"]["w"]),
        "dense_b": np.asarray(params["dense"]["b"]),
        "out_w": np.asarray(params["out"]["w"]),
        "out_b": np.asarray(params["out"]["b"]),
        "perturbed_sum": np.asarray(sum(jnp.sum(p) for p in jax.tree.leaves(perturbed))),
        "resampled_out_w": np.asarray(resampled["out"]["w"]),
        "n_leaves": np.asarray(len(leaves)),
        "ensemble_w": np.asarray(ensemble["w"]),
        "ensemble_b": np.asarray(ensemble["b"]),
    }


def dropout_training(jax: Any) -> dict[str, np.ndarray]:
    """An MLP trained with dropout and Gaussian input noise: a jitted step taking a typed
    key, value_and_grad through the dropout mask, keys split per step in a Python loop
    and in lax.scan (both must agree), and evaluation without dropout."""
    jnp, random = jax.numpy, jax.random
    k_init, k_train = random.split(random.key(7))
    k1, k2 = random.split(k_init)
    params = {
        "w1": random.normal(k1, (3, 8)) * 0.5,
        "b1": jnp.zeros(8),
        "w2": random.normal(k2, (8,)) * 0.5,
    }
    x, y = jnp.asarray(X), jnp.asarray(Y)

    def forward(p, x, key, rate):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        if key is not None:
            keep = random.bernoulli(key, 1.0 - rate, h.shape)
            h = jnp.where(keep, h / (1.0 - rate), 0.0)
        return h @ p["w2"]

    def loss(p, key):
        k_noise, k_drop = random.split(key)
        xn = x + 0.1 * random.normal(k_noise, x.shape)
        return jnp.mean((forward(p, xn, k_drop, 0.25) - y) ** 2)

    @jax.jit
    def step(p, key):
        value, g = jax.value_and_grad(loss)(p, key)
        return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), value

    p, key, losses = params, k_train, []
    for _ in range(5):
        key, sub = random.split(key)
        p, value = step(p, sub)
        losses.append(value)

    def scan_step(carry, _):
        p, key = carry
        key, sub = random.split(key)
        p, value = step(p, sub)
        return (p, key), value

    (p_scan, _), scan_losses = jax.lax.scan(scan_step, (params, k_train), None, length=5)
    eval_loss = jnp.mean((forward(p, x, None, 0.0) - y) ** 2)
    return {
        "losses": np.asarray(jnp.stack(losses)),
        "scan_losses": np.asarray(scan_losses),
        "w1": np.asarray(p["w1"]),
        "w2_scan": np.asarray(p_scan["w2"]),
        "eval_loss": np.asarray(eval_loss),
    }


def shard_map_data_parallel(jax: Any) -> dict[str, np.ndarray]:
    """Data-parallel SGD in jax.shard_map with JAX's default check_vma: the gradient of
    the pmean of per-shard losses inside the body, a few steps in lax.scan and in
    fori_loop inside the body, params replicated in and out (out_specs=P()), and the
    same training run on one device for comparison."""
    jnp, lax, P = jax.numpy, jax.lax, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (4,), ("batch",))

    def loss(p, xb, yb):
        pred = jnp.tanh(xb @ p["w"] + p["b"])
        return jnp.mean((pred - yb) ** 2)

    def sgd(p, xb, yb):
        g = jax.grad(lambda p: lax.pmean(loss(p, xb, yb), "batch"))(p)
        return jax.tree.map(lambda a, b: a - 0.5 * b, p, g)

    def train_scan(p, xb, yb):
        def body(p, _):
            value = lax.pmean(loss(p, xb, yb), "batch")
            return sgd(p, xb, yb), value

        return lax.scan(body, p, None, length=4)

    def train_fori(p, xb, yb):
        return lax.fori_loop(0, 4, lambda i, p: sgd(p, xb, yb), p)

    params = {"w": jnp.array([0.1, 0.2, -0.1]), "b": jnp.array(0.0)}
    specs = (P(), P("batch"), P("batch"))
    scan_run = jax.jit(jax.shard_map(train_scan, mesh=mesh, in_specs=specs, out_specs=(P(), P())))
    p_scan, losses = scan_run(params, X, Y)
    p_fori = jax.shard_map(train_fori, mesh=mesh, in_specs=specs, out_specs=P())(params, X, Y)

    p_ref = params
    for _ in range(4):
        g = jax.grad(loss)(p_ref, X, Y)
        p_ref = jax.tree.map(lambda a, b: a - 0.5 * b, p_ref, g)
    return {
        "scan_w": np.asarray(p_scan["w"]),
        "scan_b": np.asarray(p_scan["b"]),
        "losses": np.asarray(losses),
        "fori_w": np.asarray(p_fori["w"]),
        "fori_b": np.asarray(p_fori["b"]),
        "single_device_w": np.asarray(p_ref["w"]),
    }


def shard_map_two_axis_mesh(jax: Any) -> dict[str, np.ndarray]:
    """A 2-D mesh ("data", "model"): a batch split over "data", a weight's output columns
    split over "model", the partial logits summed with psum over "model", and the
    gradient of the loss's pmean over "data" taken inside the body."""
    jnp, lax, P = jax.numpy, jax.lax, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (2, 2), ("data", "model"))
    rng = np.random.default_rng(9)
    w = rng.standard_normal((3, 4)) * 0.3
    v = rng.standard_normal(4)

    def forward(w_blk, v_blk, xb):
        hidden = jnp.tanh(xb @ w_blk)  # this device's columns
        return lax.psum(hidden @ v_blk, "model")

    def body(w_blk, v_blk, xb, yb):
        def local_loss(w_blk):
            return lax.pmean(jnp.mean((forward(w_blk, v_blk, xb) - yb) ** 2), "data")

        value, g = jax.value_and_grad(local_loss)(w_blk)
        return value, w_blk - 0.2 * g, forward(w_blk, v_blk, xb)

    run = jax.shard_map(
        body,
        mesh=mesh,
        in_specs=(P(None, "model"), P("model"), P("data"), P("data")),
        out_specs=(P(), P(None, "model"), P("data")),
    )
    value, w_new, pred = jax.jit(run)(w, v, X, Y)

    def full_loss(w):
        return jnp.mean((jnp.tanh(X @ w) @ v - Y) ** 2)

    return {
        "loss": np.asarray(value),
        "w_new": np.asarray(w_new),
        "pred": np.asarray(pred),
        "reference_loss": np.asarray(full_loss(w)),
        "reference_w_new": np.asarray(w - 0.2 * jax.grad(full_loss)(w)),
    }


def ring_collectives(jax: Any) -> dict[str, np.ndarray]:
    """A ring all-reduce (reduce-scatter then all-gather by ppermute in fori_loop with
    axis_index picking the chunk) and a collective matmul (the right operand's row
    blocks passed around the ring while each device accumulates its product)."""
    jnp, lax, P = jax.numpy, jax.lax, jax.sharding.PartitionSpec
    n = 4
    mesh = _mesh(jax, (n,), ("ring",))
    perm = [(j, (j + 1) % n) for j in range(n)]
    data = np.arange(32.0).reshape(n, 8) ** 1.5 / 10.0

    def all_reduce(x):
        chunks = x.reshape(n, -1)  # this device's (1, 8) row as n chunks of 2
        me = lax.axis_index("ring")

        def reduce_scatter(i, chunks):
            send = (me - i) % n
            incoming = lax.ppermute(chunks[send], "ring", perm)
            recv = (me - i - 1) % n
            return chunks.at[recv].add(incoming)

        chunks = lax.fori_loop(0, n - 1, reduce_scatter, chunks)

        def all_gather(i, chunks):
            send = (me + 1 - i) % n
            incoming = lax.ppermute(chunks[send], "ring", perm)
            recv = (me - i) % n
            return chunks.at[recv].set(incoming)

        chunks = lax.fori_loop(0, n - 1, all_gather, chunks)
        return chunks.reshape(1, -1)

    reduced = jax.shard_map(all_reduce, mesh=mesh, in_specs=P("ring"), out_specs=P("ring"))(data)

    rng = np.random.default_rng(10)
    a = rng.standard_normal((8, 6))
    b = rng.standard_normal((6, 12))

    def all_gather_matmul(a_blk, b_blk):
        # a_blk: this device's 2 rows of a; b_blk: its 3 columns of b. The row blocks
        # of a travel around the ring; each lands in its place of the column block.
        me = lax.axis_index("ring")
        rows = a_blk.shape[0]

        def body(i, carry):
            out, a_cur = carry
            src = (me - i) % n  # whose rows of a this device holds now
            out = lax.dynamic_update_slice_in_dim(out, a_cur @ b_blk, src * rows, axis=0)
            return out, lax.ppermute(a_cur, "ring", perm)

        out0 = lax.pcast(jnp.zeros((rows * n, b_blk.shape[1])), ("ring",), to="varying")
        out, _ = lax.fori_loop(0, n, body, (out0, a_blk))
        return out

    product = jax.jit(
        jax.shard_map(
            all_gather_matmul, mesh=mesh, in_specs=(P("ring"), P(None, "ring")),
            out_specs=P(None, "ring"),
        )
    )(a, b)  # fmt: skip
    grad_a = jax.grad(
        lambda a: jnp.sum(
            jax.shard_map(
                all_gather_matmul, mesh=mesh, in_specs=(P("ring"), P(None, "ring")),
                out_specs=P(None, "ring"),
            )(a, b) ** 2
        )
    )(a)  # fmt: skip
    return {
        "all_reduce": np.asarray(reduced),
        "all_reduce_expected": np.asarray(np.tile(data.sum(0), (n, 1))),
        "collective_matmul": np.asarray(product),
        "matmul_expected": a @ b,
        "collective_matmul_grad_a": np.asarray(grad_a),
        "grad_a_expected": 2.0 * (a @ b) @ b.T,
    }


def dataclass_models_adam(jax: Any) -> dict[str, np.ndarray]:
    """A model as a register_dataclass pytree (with a static field) and a
    register_pytree_node_class layer, jax.tree.map, leaves_with_path (paths as character
    codes), tree.reduce, and Adam written over the tree, jitted, for a few steps."""
    jnp = jax.numpy

    @functools.partial(
        jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act"]
    )
    @dataclasses.dataclass
    class Dense:
        w: Any
        b: Any
        act: str = "tanh"

        def __call__(self, x):
            y = x @ self.w + self.b
            return jnp.tanh(y) if self.act == "tanh" else y

    @jax.tree_util.register_pytree_node_class
    class Model:
        def __init__(self, hidden, out):
            self.hidden, self.out = hidden, out

        def tree_flatten(self):
            return (self.hidden, self.out), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def __call__(self, x):
            return self.out(self.hidden(x))[:, 0]

    k1, k2 = jax.random.split(jax.random.key(11))
    model = Model(
        Dense(0.5 * jax.random.normal(k1, (3, 5)), jnp.zeros(5)),
        Dense(0.5 * jax.random.normal(k2, (5, 1)), jnp.zeros(1), act="linear"),
    )
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(model)]
    n_params = jax.tree.reduce(lambda a, b: a + b, jax.tree.map(lambda a: a.size, model))

    def loss(m):
        return jnp.mean((m(jnp.asarray(X)) - jnp.asarray(Y)) ** 2)

    def adam_init(m):
        zeros = jax.tree.map(jnp.zeros_like, m)
        return {"mu": zeros, "nu": zeros, "t": jnp.int32(0)}

    @jax.jit
    def adam_step(m, state, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
        value, g = jax.value_and_grad(loss)(m)
        t = state["t"] + 1
        mu = jax.tree.map(lambda a, b: b1 * a + (1 - b1) * b, state["mu"], g)
        nu = jax.tree.map(lambda a, b: b2 * a + (1 - b2) * b * b, state["nu"], g)
        mhat = jax.tree.map(lambda a: a / (1 - b1**t), mu)
        vhat = jax.tree.map(lambda a: a / (1 - b2**t), nu)
        m = jax.tree.map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps), m, mhat, vhat)
        return m, {"mu": mu, "nu": nu, "t": t}, value

    state = adam_init(model)
    losses = []
    for _ in range(6):
        model, state, value = adam_step(model, state)
        losses.append(value)
    sq_norm = jax.tree.reduce(
        lambda a, b: a + b, jax.tree.map(lambda a: jnp.sum(a**2), model), initializer=0.0
    )
    return {
        "paths": np.array([ord(c) for c in "|".join(paths)], dtype=np.int64),
        "n_params": np.asarray(n_params),
        "losses": np.asarray(jnp.stack(losses)),
        "hidden_w": np.asarray(model.hidden.w),
        "out_b": np.asarray(model.out.b),
        "step_count": np.asarray(state["t"]),
        "sq_norm": np.asarray(sq_norm),
        "act_kept": np.asarray(model.out.act == "linear"),
    }


def structured_control_flow(jax: Any) -> dict[str, np.ndarray]:
    """lax.switch on a traced index (and under vmap), lax.select_n with boolean and
    integer selectors, dynamic_slice/dynamic_update_slice in fori_loop (a sliding-window
    sum and a rolling buffer), and the gradient of a scan with a pytree carry."""
    jnp, lax = jax.numpy, jax.lax
    branches = [lambda x: jnp.sin(x), lambda x: x**2, lambda x: -x]
    sw = jax.jit(lambda i, x: lax.switch(i, branches, x))
    switch_vals = jnp.stack([sw(i, 1.5) for i in (-1, 0, 1, 2, 5)])
    switch_vmapped = jax.vmap(lambda i, x: lax.switch(i, branches, x))(
        jnp.array([0, 1, 2, 1]), jnp.array([0.5, 1.0, 1.5, 2.0])
    )
    switch_grad = jax.grad(lambda x: lax.switch(1, branches, x) + lax.switch(0, branches, x))(0.7)
    a, b, c = jnp.arange(4.0), 10 + jnp.arange(4.0), 20 + jnp.arange(4.0)
    sel_bool = lax.select_n(jnp.array([True, False, True, False]), a, b)
    sel_int = lax.select_n(jnp.array([0, 2, 1, 2], dtype=jnp.int32), a, b, c)
    sel_grad = jax.grad(lambda x: jnp.sum(lax.select_n(x > 1.5, x**2, jnp.sin(x))))(a)

    signal = jnp.asarray(np.linspace(-1.0, 2.0, 12) ** 2)

    def window_sums(sig):
        out = jnp.zeros(9)

        def body(i, out):
            win = lax.dynamic_slice(sig, (i,), (4,))
            return lax.dynamic_update_slice(out, jnp.sum(win)[None], (i,))

        return lax.fori_loop(0, 9, body, out)

    buf = jnp.zeros((3, 2))

    def push(i, buf):
        row = jnp.array([i, i * i], dtype=buf.dtype)
        buf = lax.dynamic_update_slice(buf, buf[1:], (0, 0))
        return lax.dynamic_update_slice(buf, row[None], (2, 0))

    rolled = lax.fori_loop(0, 5, push, buf)

    def scan_loss(theta):
        def step(carry, x):
            h, n = carry["h"], carry["n"]
            h = jnp.tanh(theta[0] * h + theta[1] * x)
            return {"h": h, "n": n + 1}, h

        carry, hs = lax.scan(step, {"h": 0.0, "n": 0}, jnp.linspace(0.0, 1.0, 6))
        return jnp.sum(hs) + carry["h"] * carry["n"]

    theta = jnp.array([0.8, 1.3])
    return {
        "switch_vals": np.asarray(switch_vals),
        "switch_vmapped": np.asarray(switch_vmapped),
        "switch_grad": np.asarray(switch_grad),
        "sel_bool": np.asarray(sel_bool),
        "sel_int": np.asarray(sel_int),
        "sel_grad": np.asarray(sel_grad),
        "window_sums": np.asarray(jax.jit(window_sums)(signal)),
        "window_grad": np.asarray(jax.grad(lambda s: jnp.sum(window_sums(s) ** 2))(signal)),
        "rolled": np.asarray(rolled),
        "scan_value": np.asarray(scan_loss(theta)),
        "scan_grad": np.asarray(jax.grad(scan_loss)(theta)),
    }


def custom_rules_in_training(jax: Any) -> dict[str, np.ndarray]:
    """A custom_vjp that clips the gradient's norm inside a jitted loss, a custom_jvp
    softplus under vmap, jit, and jacfwd, and jax.checkpoint on a block applied in
    lax.scan (gradients must equal the unchecked ones)."""
    jnp, lax = jax.numpy, jax.lax

    @jax.custom_vjp
    def clip_gradient(x):
        return x

    def clip_fwd(x):
        return x, None

    def clip_bwd(_, g):
        norm = jnp.sqrt(jnp.sum(g**2))
        return (jnp.where(norm > 1.0, g / norm, g),)

    clip_gradient.defvjp(clip_fwd, clip_bwd)

    @jax.jit
    def clipped_grad(w):
        return jax.grad(lambda w: jnp.sum((clip_gradient(w) * 3.0) ** 2))(w)

    @jax.custom_jvp
    def softplus(x):
        return jnp.logaddexp(x, 0.0)

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), jax.nn.sigmoid(x) * t * 2.0  # doubled on purpose

    xs = jnp.linspace(-2.0, 2.0, 5)
    sp_grads = jax.jit(jax.vmap(jax.grad(softplus)))(xs)
    sp_jac = jax.jacfwd(lambda x: softplus(x) * x)(xs)

    def block(h, w):
        return jnp.tanh(h @ w) + h

    def net(ws, h, remat):
        f = jax.checkpoint(block) if remat else block

        def step(h, w):
            return f(h, w), jnp.sum(h)

        h, sums = lax.scan(step, h, ws)
        return jnp.sum(h**2) + jnp.sum(sums)

    rng = np.random.default_rng(12)
    ws = jnp.asarray(0.4 * rng.standard_normal((3, 4, 4)))
    h0 = jnp.asarray(rng.standard_normal((2, 4)))
    g_remat = jax.jit(jax.grad(net), static_argnums=2)(ws, h0, True)
    g_plain = jax.grad(net)(ws, h0, False)
    return {
        "clipped_small": np.asarray(clipped_grad(jnp.array([0.01, -0.02]))),
        "clipped_large": np.asarray(clipped_grad(jnp.array([1.0, -2.0, 0.5]))),
        "softplus_grads": np.asarray(sp_grads),
        "softplus_jac": np.asarray(sp_jac),
        "remat_grad": np.asarray(g_remat),
        "remat_matches": np.asarray(jnp.allclose(g_remat, g_plain)),
        "remat_h_grad": np.asarray(jax.grad(net, argnums=1)(ws, h0, True)),
    }


def debug_and_callbacks(jax: Any) -> dict[str, np.ndarray]:
    """jax.debug.print and jax.debug.callback inside jit and vmap (how many times each
    ran, and the lines printed), and jax.pure_callback with vmap_method="sequential"
    (its values and how many times the host function ran)."""
    jnp = jax.numpy
    seen: list[Any] = []

    def record(x):
        seen.append(np.asarray(x).copy())

    @jax.jit
    def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.callback(record, x * 2)
        return jnp.sin(x)

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        f(jnp.float64(1.0))
        f(jnp.float64(2.0))
        jax.vmap(f)(jnp.arange(3.0))
        jax.effects_barrier()
    printed_lines = len([line for line in out.getvalue().splitlines() if line.startswith("x = ")])
    callback_calls = len(seen)
    callback_sum = float(sum(np.sum(s) for s in seen))

    calls = [0]

    def host_cube(x):
        calls[0] += 1
        return np.asarray(x) ** 3

    def cube(x):
        return jax.pure_callback(
            host_cube, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential"
        )

    cubes = jax.jit(jax.vmap(cube))(jnp.arange(4.0).reshape(4, 1))
    return {
        "printed_lines": np.asarray(printed_lines),
        "callback_calls": np.asarray(callback_calls),
        "callback_sum": np.asarray(callback_sum),
        "pure_callback": np.asarray(cubes),
        "pure_callback_calls": np.asarray(calls[0]),
    }


def vmapped_ensemble_training(jax: Any) -> dict[str, np.ndarray]:
    """An ensemble of linear models, one per key: vmap over init keys, a jitted vmap of a
    training step that draws a minibatch with its own key each step (random.choice
    without replacement, permutation), carried in lax.scan."""
    jnp, random = jax.numpy, jax.random
    x, y = jnp.asarray(X), jnp.asarray(Y)

    def init(key):
        return {"w": 0.1 * random.normal(key, (3,)), "b": jnp.zeros(())}

    def loss(p, xb, yb):
        return jnp.mean((xb @ p["w"] + p["b"] - yb) ** 2)

    def train_one(p, key):
        def step(carry, _):
            p, key = carry
            key, sub = random.split(key)
            idx = random.choice(sub, x.shape[0], (6,), replace=False)
            g = jax.grad(loss)(p, x[idx], y[idx])
            return (jax.tree.map(lambda a, b: a - 0.2 * b, p, g), key), loss(p, x, y)

        (p, key), losses = jax.lax.scan(step, (p, key), None, length=5)
        return p, losses

    init_keys, train_keys = random.split(random.key(13), (2, 3))
    params = jax.vmap(init)(init_keys)
    trained, losses = jax.jit(jax.vmap(train_one))(params, train_keys)
    perms = jax.vmap(lambda k: random.permutation(k, 6))(train_keys)
    return {
        "init_w": np.asarray(params["w"]),
        "trained_w": np.asarray(trained["w"]),
        "trained_b": np.asarray(trained["b"]),
        "losses": np.asarray(losses),
        "perms": np.asarray(perms),
    }


def noisy_sgd_langevin(jax: Any) -> dict[str, np.ndarray]:
    """Stochastic gradient Langevin dynamics: gradient steps plus Gaussian noise from a
    typed key, in fori_loop under jit, with the key split inside; the key array of the
    final state, and grad through a noise-perturbed loss (the noise is data)."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random

    def energy(theta):
        return 0.5 * jnp.sum((theta - jnp.array([1.0, -2.0])) ** 2 * jnp.array([1.0, 4.0]))

    @jax.jit
    def sample(key, theta, n):
        def body(i, state):
            key, theta, trace = state
            key, sub = random.split(key)
            noise = random.normal(sub, theta.shape)
            theta = theta - 0.05 * jax.grad(energy)(theta) + jnp.sqrt(0.1) * 0.1 * noise
            return key, theta, trace.at[i].set(theta)

        return lax.fori_loop(0, n, body, (key, theta, jnp.zeros((8, 2))))

    key, theta, trace = sample(random.key(14), jnp.zeros(2), 8)

    def perturbed_loss(w, key):
        eps = random.normal(key, w.shape)
        return jnp.sum(jnp.sin(w + 0.1 * eps) ** 2)

    keys = random.split(random.key(15), 3)
    w = jnp.array([0.3, -0.7])
    grads = jax.vmap(jax.grad(perturbed_loss), in_axes=(None, 0))(w, keys)
    return {
        "theta": np.asarray(theta),
        "trace": np.asarray(trace),
        "key_data": np.asarray(random.key_data(key)),
        "perturbed_grads": np.asarray(grads),
        "mean_grad": np.asarray(jnp.mean(grads, axis=0)),
    }


def keys_as_values(jax: Any) -> dict[str, np.ndarray]:
    """Key arrays as ordinary values: equality, concatenate, reshape, take, indexing
    with an array, keys through lax.cond and lax.switch, vmap(split) of a key array,
    fold_in mapped over data, and random.clone."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random
    keys = random.split(random.key(21), 6)
    same = keys[2] == keys[2]
    differ = keys[1] != keys[2]
    eq_vec = keys == keys[3]
    cat = jnp.concatenate([keys[:2], keys[4:]])
    grid = keys.reshape(2, 3)
    taken = jnp.take(keys, jnp.array([5, 0, 3]))
    fancy = keys[jnp.array([1, 1, 4])]
    picked = lax.cond(True, lambda ks: ks[0], lambda ks: ks[1], keys)
    switched = jax.jit(
        lambda i, ks: lax.switch(i, [lambda k: k[0], lambda k: k[2], lambda k: k[4]], ks)
    )(2, keys)
    split_each = jax.vmap(random.split)(keys[:3])
    folded = jax.vmap(lambda d: random.key_data(random.fold_in(keys[0], d)))(jnp.arange(3))
    cloned = random.clone(keys[5])

    def data(k):
        return np.asarray(random.key_data(k))

    return {
        "same": np.asarray(same),
        "differ": np.asarray(differ),
        "eq_vec": np.asarray(eq_vec),
        "cat": data(cat),
        "grid": data(grid),
        "taken": data(taken),
        "fancy": data(fancy),
        "picked": data(picked),
        "switched": data(switched),
        "split_each_shape": np.asarray(split_each.shape),
        "split_each": data(split_each),
        "folded": np.asarray(folded),
        "cloned_draw": np.asarray(random.normal(cloned, (2,))),
    }


def shard_map_keys_per_device(jax: Any) -> dict[str, np.ndarray]:
    """Randomness inside jax.shard_map: a replicated key folded with axis_index so each
    device draws its own dropout mask, a key array split over the mesh (one key per
    device, P("batch")), and a data-parallel step with dropout whose gradient is the
    pmean over the devices."""
    jnp, lax, random, P = jax.numpy, jax.lax, jax.random, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (4,), ("batch",))

    def per_device_noise(key, x):
        key = random.fold_in(key, lax.axis_index("batch"))
        return x + random.normal(key, x.shape)

    noisy = jax.shard_map(
        per_device_noise, mesh=mesh, in_specs=(P(), P("batch")), out_specs=P("batch")
    )(random.key(22), X)

    def own_key(keys, x):
        return x * random.uniform(keys[0], x.shape)

    device_keys = random.split(random.key(23), 4)
    scaled = jax.shard_map(
        own_key, mesh=mesh, in_specs=(P("batch"), P("batch")), out_specs=P("batch")
    )(device_keys, X)

    def step(w, key, xb, yb):
        key = random.fold_in(key, lax.axis_index("batch"))

        def loss(w):
            keep = random.bernoulli(key, 0.8, xb.shape)
            xd = jnp.where(keep, xb / 0.8, 0.0)
            return lax.pmean(jnp.mean((jnp.tanh(xd @ w) - yb) ** 2), "batch")

        value, g = jax.value_and_grad(loss)(w)
        return w - 0.3 * g, value

    run = jax.jit(
        jax.shard_map(
            step,
            mesh=mesh,
            in_specs=(P(), P(), P("batch"), P("batch")),
            out_specs=(P(), P()),
        )
    )
    w = jnp.array([0.2, -0.1, 0.4])
    values = []
    key = random.key(24)
    for _ in range(3):
        key, sub = random.split(key)
        w, value = run(w, sub, X, Y)
        values.append(value)
    return {
        "noisy": np.asarray(noisy),
        "scaled": np.asarray(scaled),
        "w": np.asarray(w),
        "losses": np.asarray(jnp.stack(values)),
    }


def callbacks_more(jax: Any) -> dict[str, np.ndarray]:
    """pure_callback with vmap_method "broadcast_all" and "expand_dims" (the shapes the
    host function saw), io_callback-free debug.callback under grad and in scan, and
    debug.print with a format spec and keyword arguments inside lax.scan, and of a
    float32 array under jit (the printed text)."""
    jnp, lax = jax.numpy, jax.lax
    shapes: list[tuple[int, ...]] = []

    def host(x, y):
        shapes.append(np.shape(x) + (-1,) + np.shape(y))
        return (np.asarray(x) * np.asarray(y)).astype(np.asarray(x).dtype)

    def prod(x, y, method):
        out = jax.ShapeDtypeStruct(jnp.broadcast_shapes(x.shape, y.shape), x.dtype)
        return jax.pure_callback(host, out, x, y, vmap_method=method)

    xs, y = jnp.arange(6.0).reshape(3, 2), jnp.array([2.0, 3.0])
    bcast = jax.vmap(lambda x: prod(x, y, "broadcast_all"))(xs)
    expand = jax.vmap(lambda x: prod(x, y, "expand_dims"))(xs)
    seen_shapes = np.array([s for s in shapes], dtype=np.int64)

    count = [0]

    def bump(*_):
        count[0] += 1

    def f(x):
        jax.debug.callback(bump, x)
        return jnp.sum(jnp.sin(x) ** 2)

    g = jax.grad(f)(jnp.arange(3.0))
    after_grad = count[0]

    def body(c, x):
        jax.debug.callback(bump, x)
        return c + x, c

    lax.scan(body, 0.0, jnp.arange(5.0))
    jax.effects_barrier()
    after_scan = count[0]

    out = io.StringIO()
    with contextlib.redirect_stdout(out):

        @jax.jit
        def run(xs):
            def step(c, x):
                jax.debug.print("step {i}: {v:.3f}", i=x, v=c)
                return c * 0.5 + x, None

            return lax.scan(step, 1.0, xs)[0]

        final = run(jnp.arange(3.0))
        jax.jit(lambda v: jax.debug.print("f32 {}", v.astype(jnp.float32) * 0.3))(jnp.arange(3.0))
        jax.effects_barrier()
    text = out.getvalue()
    return {
        "broadcast_all": np.asarray(bcast),
        "expand_dims": np.asarray(expand),
        "host_shapes": seen_shapes,
        "grad": np.asarray(g),
        "calls_after_grad": np.asarray(after_grad),
        "calls_after_scan": np.asarray(after_scan),
        "printed": np.array([ord(c) for c in text], dtype=np.int64),
        "final": np.asarray(final),
    }


def keys_as_scanned_inputs(jax: Any) -> dict[str, np.ndarray]:
    """A key array as the xs of lax.scan and of lax.map, keys inside a dict mapped by
    vmap with in_axes, a scalar key broadcast by jnp.where, keys returned from jit,
    and random.key_impl's name."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random
    keys = random.split(random.key(31), 5)

    def step(total, k):
        draw = random.normal(k)
        return total + draw, draw

    total, draws = lax.scan(step, 0.0, keys)
    mapped = lax.map(lambda k: random.uniform(k, (2,)), keys)
    batch = {"key": keys[:3], "scale": jnp.array([1.0, 2.0, 3.0])}
    scaled = jax.vmap(lambda b, shift: b["scale"] * random.normal(b["key"], (2,)) + shift,
                      in_axes=({"key": 0, "scale": 0}, None))(batch, 10.0)  # fmt: skip
    one = random.key(32)
    mixed = jnp.where(jnp.array([True, False, True]), one, keys[:3])
    made = jax.jit(lambda k: random.split(k, 3))(one)
    impl_name = str(random.key_impl(one))
    return {
        "total": np.asarray(total),
        "draws": np.asarray(draws),
        "mapped": np.asarray(mapped),
        "scaled": np.asarray(scaled),
        "mixed": np.asarray(random.key_data(mixed)),
        "jit_made": np.asarray(random.key_data(made)),
        "impl_is_threefry": np.asarray("threefry" in impl_name),
    }


def shard_map_idioms(jax: Any) -> dict[str, np.ndarray]:
    """jax.shard_map as a decorator through functools.partial, psum over both axes of a
    2-D mesh by a tuple of names, psum_scatter, a varying result refused under
    out_specs=P() (the error type), and the shard shapes the body sees."""
    jnp, lax, P = jax.numpy, jax.lax, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (2, 2), ("data", "model"))
    mesh1 = _mesh(jax, (4,), ("x",))
    shapes: list[tuple[int, ...]] = []

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("data", "model"), out_specs=P())
    def total(block):
        shapes.append(block.shape)
        return lax.psum(jnp.sum(block), ("data", "model"))

    m = jnp.asarray(np.arange(24.0).reshape(4, 6))
    s = total(m)

    @functools.partial(jax.shard_map, mesh=mesh1, in_specs=P(), out_specs=P("x"))
    def scatter(v):
        return lax.psum_scatter(v * (lax.axis_index("x") + 1.0), "x", tiled=True)

    scattered = scatter(jnp.arange(8.0))

    def bad():
        return jax.shard_map(lambda v: v * 2.0, mesh=mesh1, in_specs=P("x"), out_specs=P())(
            jnp.arange(8.0)
        )

    try:
        bad()
        err = "no error"
    except Exception as e:
        err = type(e).__name__

    return {
        "total": np.asarray(s),
        "block_shape": np.asarray(shapes[0]),
        "psum_scatter": np.asarray(scattered),
        "varying_refused": np.array(err),
    }


def jit_with_shardings(jax: Any) -> dict[str, np.ndarray]:
    """An array placed with device_put and a NamedSharding, then a jit given
    in_shardings and out_shardings (the values only: functrace's arrays record no
    layout)."""
    jnp, P = jax.numpy, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (4,), ("x",))
    sharding = jax.sharding.NamedSharding(mesh, P("x"))
    xs = jax.device_put(jnp.arange(8.0), sharding)
    placed = xs * 1.0
    doubled = jax.jit(lambda v: v * 2.0 + 1.0, in_shardings=sharding, out_shardings=sharding)(xs)
    return {
        "placed": np.asarray(placed),
        "jit_sharded": np.asarray(doubled),
    }


def dataclass_fields_and_paths(jax: Any) -> dict[str, np.ndarray]:
    """register_dataclass inferring its fields (a static field marked in the field's
    metadata), tree.flatten_with_path and tree.map_with_path over it (paths as text
    codes), tree.map with None leaves and is_leaf, and an SGD step on it under jit."""
    jnp = jax.numpy

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: Any
        b: Any
        name: str = dataclasses.field(default="layer", metadata=dict(static=True))

    layer = Layer(jnp.ones((2, 2)), jnp.array([0.5, -0.5]), name="first")
    leaves, treedef = jax.tree.flatten(layer)
    path_leaves, _ = jax.tree.flatten_with_path({"l": layer, "n": None, "s": 3.0})
    text = "|".join(jax.tree_util.keystr(p) for p, _ in path_leaves)
    scaled = jax.tree.map_with_path(
        lambda p, v: v * (2.0 if jax.tree_util.keystr(p).endswith(".w") else -1.0), layer
    )
    with_none = jax.tree.map(lambda v: v, {"a": None, "b": jnp.array(1.0)})
    n_none = len(jax.tree.leaves(with_none, is_leaf=lambda v: v is None))

    @jax.jit
    def sgd(layer, x):
        g = jax.grad(lambda l: jnp.sum(jnp.tanh(x @ l.w + l.b) ** 2))(layer)
        return jax.tree.map(lambda p, d: p - 0.1 * d, layer, g)

    trained = sgd(layer, jnp.array([[1.0, -2.0], [0.5, 0.3]]))
    return {
        "n_leaves": np.asarray(len(leaves)),
        "n_treedef_leaves": np.asarray(treedef.num_leaves),
        "paths": np.array([ord(c) for c in text], dtype=np.int64),
        "scaled_w": np.asarray(scaled.w),
        "scaled_b": np.asarray(scaled.b),
        "none_leaves": np.asarray(n_none),
        "trained_w": np.asarray(trained.w),
        "name_kept": np.asarray(trained.name == "first"),
    }


def remat_and_custom_variants(jax: Any) -> dict[str, np.ndarray]:
    """jax.checkpoint with a policy and static_argnums inside a jitted scan, fori_loop
    with unroll, custom_vjp with nondiff_argnums under vmap, and custom_jvp with a
    keyword argument under jit and grad."""
    jnp, lax = jax.numpy, jax.lax
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    @functools.partial(jax.checkpoint, policy=policy, static_argnums=(2,))
    def block(h, w, act):
        z = h @ w
        return jnp.tanh(z) if act == "tanh" else jnp.sin(z)

    def net(ws, h):
        def step(h, w):
            return block(h, w, "tanh") + 0.5 * block(h, w, "sin"), None

        return jnp.sum(lax.scan(step, h, ws)[0] ** 2)

    rng = np.random.default_rng(33)
    ws = jnp.asarray(0.5 * rng.standard_normal((3, 3, 3)))
    h0 = jnp.asarray(rng.standard_normal((2, 3)))
    g = jax.jit(jax.grad(net))(ws, h0)
    unrolled = lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, 1.0, unroll=2)

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def scaled_clip(limit, x):
        return x

    def sc_fwd(limit, x):
        return x, None

    def sc_bwd(limit, _, g):
        return (jnp.clip(g, -limit, limit),)

    scaled_clip.defvjp(sc_fwd, sc_bwd)
    clipped = jax.vmap(jax.grad(lambda x: scaled_clip(0.5, x) ** 3))(jnp.array([0.1, 0.5, 1.0]))

    @jax.custom_jvp
    def smooth_abs(x, eps=0.1):
        return jnp.sqrt(x * x + eps)

    @smooth_abs.defjvp
    def smooth_abs_jvp(primals, tangents):
        x, eps = primals
        tx, _ = tangents
        return smooth_abs(x, eps), x / jnp.sqrt(x * x + eps) * tx

    sa = jax.jit(jax.vmap(jax.grad(lambda x: smooth_abs(x, eps=0.01))))(jnp.array([-1.0, 0.0, 2.0]))
    return {
        "remat_grad": np.asarray(g),
        "unrolled": np.asarray(unrolled),
        "clipped": np.asarray(clipped),
        "smooth_abs_grad": np.asarray(sa),
    }


def key_buffers_in_loops(jax: Any) -> dict[str, np.ndarray]:
    """Key arrays in lax's slicing and selection: dynamic_slice, dynamic_update_slice
    (also as a buffer of keys rewritten in a jitted fori_loop), select_n, jnp.where
    under vmap, a key array scanned in reverse, fori_loop with traced bounds over a
    key, and the errors of grad with respect to a key."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random
    keys = random.split(random.key(7), 4)
    upd = jnp.where(jnp.arange(4) == 1, random.key(8), keys)
    window = lax.dynamic_slice(keys, (jnp.int32(2),), (2,))
    written = lax.dynamic_update_slice(keys, random.split(random.key(9), 2), (jnp.int32(1),))
    selected = lax.select_n(jnp.array([True, False, True, False]), keys, upd)

    def body(i, buf):
        return lax.dynamic_update_slice(buf, random.fold_in(buf[i], i)[None], (i,))

    rewritten = jax.jit(lambda ks: lax.fori_loop(0, 4, body, ks))(keys)
    rev = lax.scan(lambda c, k: (c, random.normal(k)), 0.0, keys, reverse=True)[1]
    mixed = jax.vmap(lambda c, a, b: jnp.where(c, a, b))(
        jnp.array([True, False, True, False]), keys, upd
    )
    traced = lax.fori_loop(0, jnp.int32(3), lambda i, k: random.split(k)[0], random.key(2))

    def data(k):
        return np.asarray(random.key_data(k))

    return {
        "where_scalar_key": data(upd),
        "dynamic_slice": data(window),
        "dynamic_update_slice": data(written),
        "select_n": data(selected),
        "rewritten": data(rewritten),
        "reverse_scan": np.asarray(rev),
        "vmap_where": data(mixed),
        "traced_bounds": data(traced),
        "empty_split_shape": np.asarray(random.split(random.key(1), 0).shape),
        "grad_of_key": error_name(
            lambda: jax.grad(lambda k: jnp.sum(random.normal(k, (2,))))(random.key(1))
        ),
        "value_and_grad_key_argnum": error_name(
            lambda: jax.value_and_grad(lambda x, k: x * random.normal(k), argnums=(0, 1))(
                1.0, random.key(1)
            )
        ),
    }


def key_array_at_update(jax: Any) -> dict[str, np.ndarray]:
    """keys.at[i].set(key) on a key array, eagerly and in a jitted fori_loop."""
    random, lax = jax.random, jax.lax
    keys = random.split(random.key(7), 4)
    eager = keys.at[1].set(random.key(8))

    def body(i, buf):
        return buf.at[i].set(random.fold_in(buf[i], i))

    looped = jax.jit(lambda ks: lax.fori_loop(0, 4, body, ks))(keys)
    return {
        "eager": np.asarray(random.key_data(eager)),
        "looped": np.asarray(random.key_data(looped)),
    }


def shard_map_training_loops(jax: Any) -> dict[str, np.ndarray]:
    """More data-parallel training in jax.shard_map (check_vma=True): per-step
    minibatches split on their second axis and scanned inside the body, the gradient and
    a forward-over-reverse product of a loss of the trained weights taken outside the
    shard_map, a while_loop whose condition is a psum, cond on a varying predicate,
    pmax for a global statistic, psum(1) and axis_size, and vmap over a shard_map
    drawing per-device noise from a key (also a key cast to varying with pcast)."""
    jnp, lax, random, P = jax.numpy, jax.lax, jax.random, jax.sharding.PartitionSpec
    mesh = _mesh(jax, (4,), ("b",))
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((3, 8, 3)), rng.standard_normal((3, 8))

    def loss(w, xb, yb):
        return jnp.mean((jnp.sin(xb @ w) - yb) ** 2)

    def train(w, xs, ys):
        def step(w, batch):
            xb, yb = batch
            value, g = jax.value_and_grad(lambda w: lax.pmean(loss(w, xb, yb), "b"))(w)
            return w - 0.3 * g, value

        return lax.scan(step, w, (xs, ys))

    run = jax.shard_map(
        train, mesh=mesh, in_specs=(P(), P(None, "b"), P(None, "b")), out_specs=(P(), P())
    )
    w, losses = run(jnp.ones(3), xs, ys)

    def outer(w):
        return jnp.sum(run(w, xs, ys)[0] ** 2)

    g_outer = jax.grad(outer)(jnp.ones(3))
    hvp = jax.jvp(jax.grad(outer), (jnp.ones(3),), (jnp.array([1.0, 0.0, -1.0]),))[1]

    def halve_until_small(x):
        def cond(s):
            return lax.psum(jnp.sum(s[0] ** 2), "b") > 1e-3

        return lax.while_loop(cond, lambda s: (s[0] * 0.5, s[1] + 1), (x, 0))

    halved, n_halvings = jax.shard_map(
        halve_until_small, mesh=mesh, in_specs=P("b"), out_specs=(P("b"), P())
    )(jnp.asarray(Y[:8]))
    branched = jax.shard_map(
        lambda x: lax.cond(jnp.sum(x) > 0, lambda x: x * 2.0, lambda x: -x, x),
        mesh=mesh, in_specs=P("b"), out_specs=P("b"),
    )(jnp.asarray(Y[:8]))  # fmt: skip

    def stats(x):
        n = lax.psum(1, "b")
        return x / n, lax.axis_size("b") * jnp.ones(()), lax.pmax(jnp.max(x), "b")

    scaled, size, top = jax.shard_map(
        stats, mesh=mesh, in_specs=P("b"), out_specs=(P("b"), P(), P())
    )(jnp.asarray(Y[:8]))

    def noisy(key, x):
        key = random.fold_in(key, lax.axis_index("b"))
        return x + random.normal(key, x.shape)

    per_example = jax.vmap(
        lambda k: jax.shard_map(noisy, mesh=mesh, in_specs=(P(), P("b")), out_specs=P("b"))(
            k, jnp.zeros(8)
        )
    )(random.split(random.key(0), 2))
    cast_key = jax.shard_map(
        lambda k, x: x + random.uniform(lax.pcast(k, ("b",), to="varying"), x.shape),
        mesh=mesh, in_specs=(P(), P("b")), out_specs=P("b"),
    )(random.key(3), jnp.zeros(8))  # fmt: skip
    return {
        "w": np.asarray(w),
        "losses": np.asarray(losses),
        "grad_outside": np.asarray(g_outer),
        "hvp_outside": np.asarray(hvp),
        "halved": np.asarray(halved),
        "n_halvings": np.asarray(n_halvings),
        "branched": np.asarray(branched),
        "scaled": np.asarray(scaled),
        "axis_size": np.asarray(size),
        "pmax": np.asarray(top),
        "vmap_of_shard_map": np.asarray(per_example),
        "pcast_key": np.asarray(cast_key),
    }


def keys_in_custom_rules_and_remat(jax: Any) -> dict[str, np.ndarray]:
    """Keys as arguments of custom_vjp (bwd returns None for the key) and custom_jvp
    rules under grad, vmap over keys and jit, and a dropout mask drawn inside a
    checkpointed block (the rematerialized mask must be the same one), debug callbacks
    in both branches of a vmapped cond and in a while_loop, and a pure_callback
    returning a pytree inside a vmapped scan."""
    jnp, lax, random = jax.numpy, jax.lax, jax.random

    @jax.custom_vjp
    def noisy(x, key):
        return x + 0.1 * random.normal(key, x.shape)

    noisy.defvjp(lambda x, key: (noisy(x, key), None), lambda _, g: (g * 2.0, None))

    @jax.custom_jvp
    def shifted_sin(x, key):
        return jnp.sin(x) + random.uniform(key, x.shape)

    @shifted_sin.defjvp
    def shifted_sin_jvp(primals, tangents):
        x, key = primals
        return shifted_sin(x, key), 3.0 * tangents[0]

    x = jnp.arange(3.0)
    ks = random.split(random.key(4), 2)

    def block(w, x, key):
        keep = random.bernoulli(key, 0.5, x.shape)
        return jnp.sum(jnp.tanh(jnp.where(keep, x * w, 0.0)) ** 2)

    policy = jax.checkpoint_policies.nothing_saveable
    calls: list[tuple[str, float]] = []

    def branchy(x):
        def big(x):
            jax.debug.callback(lambda v: calls.append(("t", float(np.sum(v)))), x)
            return x * 2

        def small(x):
            jax.debug.callback(lambda v: calls.append(("f", float(np.sum(v)))), x)
            return -x

        return lax.cond(x > 1.0, big, small, x)

    jax.vmap(branchy)(jnp.array([0.5, 1.5, 2.5]))
    jax.effects_barrier()
    n_vmap = len(calls)

    def doubling(x):
        def body(s):
            jax.debug.callback(lambda v: calls.append(("w", float(v))), s)
            return s * 2

        return lax.while_loop(lambda s: s < 10.0, body, x)

    jax.jit(doubling)(1.0)
    jax.effects_barrier()

    def sin_cos(v):
        out = jax.ShapeDtypeStruct(v.shape, v.dtype)
        return jax.pure_callback(
            lambda v: {"s": np.sin(v), "c": np.cos(v)},
            {"s": out, "c": out},
            v,
            vmap_method="sequential",
        )

    def scan_pc(xs):
        return lax.scan(lambda c, x: (c + sin_cos(x)["s"], sin_cos(x)["c"]), 0.0, xs)

    total, cosines = jax.vmap(scan_pc)(jnp.arange(6.0).reshape(2, 3))
    return {
        "custom_vjp_value": np.asarray(noisy(x, ks[0])),
        "custom_vjp_grad": np.asarray(jax.grad(lambda x: jnp.sum(noisy(x, ks[0]) ** 2))(x)),
        "custom_vjp_vmap": np.asarray(
            jax.vmap(jax.grad(lambda x, k: jnp.sum(noisy(x, k))), in_axes=(None, 0))(x, ks)
        ),
        "custom_jvp_grad": np.asarray(
            jax.grad(lambda x: jnp.sum(shifted_sin(x, random.key(5))))(x)
        ),
        "custom_jvp_vmap_jit": np.asarray(
            jax.jit(
                jax.vmap(
                    lambda x, k: jax.jvp(lambda x: shifted_sin(x, k), (x,), (x,))[1],
                    in_axes=(None, 0),
                )
            )(x, ks)
        ),
        "remat_dropout_grad": np.asarray(
            jax.grad(jax.checkpoint(block))(1.3, jnp.asarray(X), ks[1])
        ),
        "plain_dropout_grad": np.asarray(jax.grad(block)(1.3, jnp.asarray(X), ks[1])),
        "remat_policy_jit_grad": np.asarray(
            jax.jit(jax.grad(jax.checkpoint(block, policy=policy)))(1.3, jnp.asarray(X), ks[1])
        ),
        "callback_calls_vmap_cond": np.asarray(n_vmap),
        "callback_kinds": np.array([ord(k) for k, _ in calls], dtype=np.int64),
        "callback_values": np.array([v for _, v in calls]),
        "pure_callback_total": np.asarray(total),
        "pure_callback_cosines": np.asarray(cosines),
    }


def custom_jaxpr_interpreters(jax: Any) -> dict[str, np.ndarray]:
    """Jaxprs walked by hand: make_jaxpr's equations (invars, outvars, params, Literal
    operands, closed.literals), an evaluating interpreter that binds each equation's
    primitive (under vmap, grad and jit too), an inverting interpreter keyed on
    lax.exp_p/tanh_p run under jit(vmap(grad(...))), core.eval_jaxpr and
    extend.core.jaxpr_as_fun."""
    jnp, lax, xcore = jax.numpy, jax.lax, jax.extend.core

    def run(jaxpr: Any, consts: Any, *args: Any) -> list[Any]:
        env: dict[Any, Any] = {}

        def read(v: Any) -> Any:
            return v.val if isinstance(v, xcore.Literal) else env[v]

        env.update(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            outs = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    inverses = {lax.exp_p: jnp.log, lax.tanh_p: jnp.arctanh}

    def inverse(fun: Any) -> Any:
        def inv(y: Any) -> Any:
            closed = jax.make_jaxpr(fun)(y)
            env = dict(zip(closed.jaxpr.outvars, [y]))
            for eqn in reversed(closed.jaxpr.eqns):
                (x,) = [v for v in eqn.invars if not isinstance(v, xcore.Literal)]
                env[x] = inverses[eqn.primitive](env[eqn.outvars[0]])
            return env[closed.jaxpr.invars[0]]

        return inv

    incr = jax.make_jaxpr(lambda x: x + 1)(5)
    (eqn,) = incr.jaxpr.eqns
    lit = eqn.invars[1]

    w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    c = np.array([0.5, -0.25, 2.0])

    def model(x: Any) -> Any:
        h = jnp.tanh(jnp.dot(w, x) + c)
        return jnp.sum(jnp.exp(-h) * c, axis=0), h.max()

    x0 = np.array([0.3, -0.7, 1.1, 0.2])
    closed = jax.make_jaxpr(model)(x0)
    xs = np.stack([x0, -x0, 2 * x0])

    def f(x: Any) -> Any:
        return jnp.exp(jnp.tanh(x))

    ys = (jnp.arange(5) + 1.0) / 5.0
    return {
        "incr_counts": np.array([len(incr.jaxpr.invars), len(incr.jaxpr.eqns)]),
        "incr_literal": np.asarray(lit.val),
        "incr_is_literal": np.asarray(isinstance(lit, xcore.Literal)),
        "incr_value": np.asarray(run(incr.jaxpr, incr.literals, 5)[0]),
        "model_eval": np.asarray(run(closed.jaxpr, closed.literals, x0)),
        "model_eval_vmap": np.asarray(
            jax.vmap(lambda x: run(closed.jaxpr, closed.literals, x)[0])(xs)
        ),
        "model_eval_grad": np.asarray(
            jax.jit(jax.grad(lambda x: run(closed.jaxpr, closed.literals, x)[0]))(x0)
        ),
        "core_eval_jaxpr": np.asarray(jax.core.eval_jaxpr(closed.jaxpr, closed.consts, x0)),
        "jaxpr_as_fun": np.asarray(xcore.jaxpr_as_fun(closed)(x0)),
        "f_names": np.array([e.primitive.name for e in jax.make_jaxpr(f)(np.ones(3)).eqns]),
        "inverse_round_trip": np.asarray(inverse(f)(f(1.0))),
        "inverse_grads": np.asarray(jax.jit(jax.vmap(jax.grad(inverse(f))))(ys)),
    }


PROGRAMS = {
    f.__name__: f
    for f in (
        typed_keys_tour,
        keys_through_loops,
        tree_of_keys_init,
        dropout_training,
        shard_map_data_parallel,
        shard_map_two_axis_mesh,
        ring_collectives,
        dataclass_models_adam,
        structured_control_flow,
        custom_rules_in_training,
        debug_and_callbacks,
        vmapped_ensemble_training,
        noisy_sgd_langevin,
        keys_as_values,
        shard_map_keys_per_device,
        callbacks_more,
        keys_as_scanned_inputs,
        shard_map_idioms,
        jit_with_shardings,
        dataclass_fields_and_paths,
        remat_and_custom_variants,
        key_buffers_in_loops,
        key_array_at_update,
        shard_map_training_loops,
        keys_in_custom_rules_and_remat,
        custom_jaxpr_interpreters,
    )
}
