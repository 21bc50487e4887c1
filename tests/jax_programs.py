"""Small JAX programs, written once and run under JAX and under functrace.

Each program is a function of one argument, the library namespace: ``jax`` itself
(with ``jax_enable_x64``) when the reference values in
``tests/fixtures/jax_programs.npz`` were recorded, and ``functrace`` in
tests/test_jax_programs.py. Inside, the code is written as a JAX user writes it
(``jnp = jax.numpy``, ``jax.grad``, ``jax.example_libraries.stax``, ...), so the
test checks that such a program runs unchanged and computes the same numbers. Data
and initial parameters come from NumPy's seeded generator, identical for both. Each
program returns a dict of NumPy arrays. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _data(seed: int, n: int, d: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    w = rng.normal(size=(d, classes))
    labels = np.argmax(x @ w + 0.5 * rng.normal(size=(n, classes)), axis=1)
    return x, labels


def stax_classifier_adam(jax: Any) -> dict[str, np.ndarray]:
    """A stax MLP trained for a few jitted Adam steps on fixed data and fixed params."""
    jnp = jax.numpy
    stax = jax.example_libraries.stax
    optimizers = jax.example_libraries.optimizers

    x, labels = _data(0, 32, 5, 3)
    y = np.eye(3)[labels]
    _, apply_fn = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    rng = np.random.default_rng(1)
    params = [
        (rng.normal(size=(5, 16)) * 0.4, np.zeros(16)),
        (),
        (rng.normal(size=(16, 3)) * 0.4, np.zeros(3)),
        (),
    ]

    def loss(params, x, y):
        return -jnp.mean(jnp.sum(apply_fn(params, x) * y, axis=1))

    def accuracy(params, x, labels):
        return jnp.mean(jnp.argmax(apply_fn(params, x), axis=1) == labels)

    opt_init, opt_update, get_params = optimizers.adam(step_size=0.05)

    @jax.jit
    def update(i, opt_state, x, y):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, grads, opt_state), value

    opt_state = opt_init(params)
    losses = []
    for i in range(10):
        opt_state, value = update(i, opt_state, x, y)
        losses.append(value)
    final = get_params(opt_state)
    return {
        "losses": np.asarray(losses),
        "W0": np.asarray(final[0][0]),
        "b2": np.asarray(final[2][1]),
        "accuracy": np.asarray(accuracy(final, x, labels)),
    }


def optimizers_pytree_loop(jax: Any) -> dict[str, np.ndarray]:
    """Momentum with a decaying step size on a dict/tuple pytree, with gradient clipping."""
    jnp = jax.numpy
    optimizers = jax.example_libraries.optimizers
    tree_map = jax.tree_util.tree_map

    rng = np.random.default_rng(2)
    params = {"linear": (rng.normal(size=(3, 2)), rng.normal(size=2)), "scale": np.float64(0.5)}
    x = rng.normal(size=(20, 3))
    y = rng.normal(size=(20, 2))

    def loss(p):
        w, b = p["linear"]
        pred = p["scale"] * jnp.tanh(x @ w + b)
        return jnp.mean((pred - y) ** 2) + 1e-3 * sum(
            jnp.sum(l**2) for l in jax.tree_util.tree_leaves(p)
        )

    schedule = optimizers.exponential_decay(0.5, decay_steps=4, decay_rate=0.5)
    opt_init, opt_update, get_params = optimizers.momentum(schedule, mass=0.8)

    def step(i, state):
        g = jax.grad(loss)(get_params(state))
        g = optimizers.clip_grads(g, 0.5)
        return opt_update(i, g, state)

    state = opt_init(params)
    losses, norms = [], []
    for i in range(8):
        norms.append(optimizers.l2_norm(jax.grad(loss)(get_params(state))))
        state = step(i, state)
        losses.append(loss(get_params(state)))
    final = get_params(state)
    doubled = tree_map(lambda a: 2 * a, final)
    return {
        "losses": np.asarray(losses),
        "grad_norms": np.asarray(norms),
        "w": np.asarray(final["linear"][0]),
        "scale": np.asarray(doubled["scale"]),
    }


def vmap_per_example_losses(jax: Any) -> dict[str, np.ndarray]:
    """A loss written for one example, vectorised over a batch with vmap (and jitted)."""
    jnp = jax.numpy
    rng = np.random.default_rng(3)
    w = rng.normal(size=(4, 2))
    xs = rng.normal(size=(10, 4))
    ys = rng.normal(size=(10, 2))

    def example_loss(w, x, y):
        pred = jnp.tanh(jnp.dot(x, w))
        return jnp.sum((pred - y) ** 2) / 2

    batched = jax.vmap(example_loss, in_axes=(None, 0, 0))
    per_example = batched(w, xs, ys)
    jitted = jax.jit(batched)(w, xs, ys)
    # in_axes on a different axis and out_axes=1, with a second vmap over weights
    ws = np.stack([w, 2 * w, -w])
    grid = jax.vmap(
        jax.vmap(example_loss, in_axes=(None, 1, 1)), in_axes=(0, None, None), out_axes=1
    )(ws, xs.T, ys.T)
    return {
        "per_example": np.asarray(per_example),
        "jitted": np.asarray(jitted),
        "grid": np.asarray(grid),
    }


def per_example_gradients(jax: Any) -> dict[str, np.ndarray]:
    """vmap of grad for per-example gradients of a pytree of params, then a clipped mean."""
    jnp = jax.numpy
    tree_map = jax.tree_util.tree_map
    rng = np.random.default_rng(4)
    params = {"w": rng.normal(size=(3,)), "b": np.float64(0.1)}
    xs = rng.normal(size=(8, 3))
    ys = (rng.normal(size=8) > 0).astype(np.float64)

    def loss(params, x, y):
        logit = jnp.dot(x, params["w"]) + params["b"]
        return jnp.logaddexp(0.0, logit) - y * logit

    per_ex = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)

    def clip(g):
        norm = jnp.sqrt(sum(jnp.sum(l**2) for l in jax.tree_util.tree_leaves(g)))
        return tree_map(lambda l: l * jnp.minimum(1.0, 0.5 / norm), g)

    clipped = jax.vmap(clip)(per_ex)
    mean = tree_map(lambda l: jnp.mean(l, axis=0), clipped)
    return {
        "w": np.asarray(per_ex["w"]),
        "b": np.asarray(per_ex["b"]),
        "clipped_mean_w": np.asarray(mean["w"]),
        "clipped_mean_b": np.asarray(mean["b"]),
    }


def newton_logistic_regression(jax: Any) -> dict[str, np.ndarray]:
    """Newton's method on a regularised logistic regression, with grad and hessian."""
    jnp = jax.numpy
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 3))
    y = (x @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=40) > 0).astype(np.float64)

    def loss(w):
        logits = x @ w
        return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits) + 0.05 * jnp.dot(w, w)

    @jax.jit
    def newton_step(w):
        g = jax.grad(loss)(w)
        h = jax.hessian(loss)(w)
        return w - jnp.linalg.solve(h, g)

    w = jnp.zeros(3)
    ws, losses = [], []
    for _ in range(5):
        w = newton_step(w)
        ws.append(w)
        losses.append(loss(w))
    return {
        "ws": np.asarray(ws),
        "losses": np.asarray(losses),
        "hessian": np.asarray(jax.hessian(loss)(w)),
    }


def rnn_scan(jax: Any) -> dict[str, np.ndarray]:
    """An Elman RNN over a sequence with lax.scan; the loss's gradient w.r.t. its params."""
    jnp = jax.numpy
    lax = jax.lax
    rng = np.random.default_rng(6)
    params = {
        "Wx": rng.normal(size=(3, 4)) * 0.5,
        "Wh": rng.normal(size=(4, 4)) * 0.5,
        "b": np.zeros(4),
        "Wo": rng.normal(size=(4, 1)) * 0.5,
    }
    xs = rng.normal(size=(12, 3))
    targets = rng.normal(size=(12, 1))

    def run(params, xs):
        def cell(h, x):
            h = jnp.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
            return h, h @ params["Wo"]

        h_final, outs = lax.scan(cell, jnp.zeros(4), xs)
        return h_final, outs

    def loss(params):
        _, outs = run(params, xs)
        return jnp.mean((outs - targets) ** 2)

    h_final, outs = jax.jit(run)(params, xs)
    value, grads = jax.value_and_grad(loss)(params)

    # fori_loop: three plain gradient steps
    def body(i, p):
        g = jax.grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)

    trained = lax.fori_loop(0, 3, body, params)
    return {
        "h_final": np.asarray(h_final),
        "outs": np.asarray(outs),
        "loss": np.asarray(value),
        "gWh": np.asarray(grads["Wh"]),
        "gWx": np.asarray(grads["Wx"]),
        "trained_loss": np.asarray(loss(trained)),
    }


def jacobians(jax: Any) -> dict[str, np.ndarray]:
    """jacfwd and jacrev of a small vector function, a jvp, a vjp, and jacfwd(jacrev)."""
    jnp = jax.numpy

    def f(x):
        return jnp.stack(
            [x[0] * jnp.sin(x[1]), jnp.exp(x[1] - x[2]), x[0] ** 2 * x[2] + jnp.log1p(x[1] ** 2)]
        )

    x = np.array([0.7, -1.2, 0.4])
    v = np.array([1.0, 0.5, -2.0])
    primal, tangent = jax.jvp(f, (x,), (v,))
    out, f_vjp = jax.vjp(f, x)
    (cot,) = f_vjp(np.array([1.0, -1.0, 2.0]))
    scalar = lambda x: jnp.sum(f(x) ** 2)  # noqa: E731
    return {
        "jacfwd": np.asarray(jax.jacfwd(f)(x)),
        "jacrev": np.asarray(jax.jacrev(f)(x)),
        "jvp": np.asarray(tangent),
        "vjp": np.asarray(cot),
        "hessian_fwd_rev": np.asarray(jax.jacfwd(jax.jacrev(scalar))(x)),
        "primal": np.asarray(primal),
    }


def custom_jvp_safe_log(jax: Any) -> dict[str, np.ndarray]:
    """A custom_jvp log1pexp that stays finite, and a safe norm whose gradient at 0 is 0."""
    jnp = jax.numpy

    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))

    @jax.custom_jvp
    def safe_norm(x):
        return jnp.sqrt(jnp.sum(x**2))

    @safe_norm.defjvp
    def safe_norm_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        n = safe_norm(x)
        denom = jnp.where(n == 0.0, 1.0, n)
        return n, jnp.where(n == 0.0, 0.0, jnp.dot(x, t) / denom)

    xs = np.array([-30.0, -1.0, 0.0, 2.5, 50.0])
    return {
        "values": np.asarray(jax.vmap(log1pexp)(xs)),
        "grads": np.asarray(jax.vmap(jax.grad(log1pexp))(xs)),
        "second": np.asarray(jax.grad(jax.grad(log1pexp))(1.5)),
        "jit_grad": np.asarray(jax.jit(jax.grad(log1pexp))(3.0)),
        "norm_grad_zero": np.asarray(jax.grad(safe_norm)(np.zeros(3))),
        "norm_grad": np.asarray(jax.grad(safe_norm)(np.array([3.0, -4.0, 0.0]))),
    }


def control_flow_and_static_args(jax: Any) -> dict[str, np.ndarray]:
    """lax.cond, lax.while_loop, value_and_grad(has_aux=True) and jit(static_argnums)."""
    jnp = jax.numpy
    lax = jax.lax

    def huber(r, delta):
        return lax.cond(
            jnp.abs(r) <= delta,
            lambda r: 0.5 * r**2,
            lambda r: delta * (jnp.abs(r) - 0.5 * delta),
            r,
        )

    rs = np.array([-3.0, -0.4, 0.0, 0.7, 2.5])
    values = jax.vmap(huber, in_axes=(0, None))(rs, 1.0)
    grads = jax.vmap(jax.grad(huber), in_axes=(0, None))(rs, 1.0)

    def newton_sqrt(a):
        # iterate x <- (x + a / x) / 2 until it stops moving
        def cond(state):
            x, prev, k = state
            return (jnp.abs(x - prev) > 1e-12) & (k < 50)

        def body(state):
            x, _, k = state
            return (x + a / x) / 2, x, k + 1

        x, _, k = lax.while_loop(cond, body, (a, a + 1.0, 0))
        return x, k

    roots, iters = jax.jit(jax.vmap(newton_sqrt))(np.array([2.0, 9.0, 0.25]))

    def loss_with_aux(w, x, power):
        pred = x @ w
        return jnp.mean(pred**power), {"pred_mean": jnp.mean(pred), "pred_max": jnp.max(pred)}

    rng = np.random.default_rng(9)
    w, x = rng.normal(size=3), rng.normal(size=(6, 3))
    step = jax.jit(jax.value_and_grad(loss_with_aux, has_aux=True), static_argnums=2)
    (v2, aux2), g2 = step(w, x, 2)
    (v4, aux4), g4 = step(w, x, 4)
    return {
        "huber": np.asarray(values),
        "huber_grad": np.asarray(grads),
        "roots": np.asarray(roots),
        "iters": np.asarray(iters),
        "v2": np.asarray(v2),
        "g2": np.asarray(g2),
        "v4": np.asarray(v4),
        "g4": np.asarray(g4),
        "aux_mean": np.asarray(aux2["pred_mean"]),
        "aux_max": np.asarray(aux4["pred_max"]),
    }


def vae_step(jax: Any) -> dict[str, np.ndarray]:
    """A linear VAE: random init, reparameterised samples, split keys, jitted SGD steps."""
    jnp = jax.numpy
    random = jax.random

    key = random.PRNGKey(42)
    key, k_enc, k_dec, k_data = random.split(key, 4)
    d, z_dim = 6, 2
    params = {
        "enc_w": random.normal(k_enc, (d, 2 * z_dim)) * 0.3,
        "enc_b": jnp.zeros(2 * z_dim),
        "dec_w": random.normal(k_dec, (z_dim, d)) * 0.3,
        "dec_b": jnp.zeros(d),
    }
    x = random.uniform(k_data, (16, d), minval=-1.0, maxval=1.0)

    def loss(params, x, key):
        h = x @ params["enc_w"] + params["enc_b"]
        mu, logvar = h[:, :z_dim], h[:, z_dim:]
        eps = random.normal(key, mu.shape)
        z = mu + jnp.exp(0.5 * logvar) * eps
        recon = z @ params["dec_w"] + params["dec_b"]
        rec = jnp.sum((recon - x) ** 2, axis=1)
        kl = -0.5 * jnp.sum(1.0 + logvar - mu**2 - jnp.exp(logvar), axis=1)
        return jnp.mean(rec + kl)

    @jax.jit
    def step(params, x, key):
        value, grads = jax.value_and_grad(loss)(params, x, key)
        new = jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
        return new, value

    losses = []
    for _ in range(5):
        key, sub = random.split(key)
        params, value = step(params, x, sub)
        losses.append(value)
    return {
        "losses": np.asarray(losses),
        "enc_w": np.asarray(params["enc_w"]),
        "dec_b": np.asarray(params["dec_b"]),
        "key": np.asarray(random.key_data(key)),
    }


def gp_regression(jax: Any) -> dict[str, np.ndarray]:
    """GP marginal likelihood with jax.scipy.linalg Cholesky solves, and its gradient."""
    jnp = jax.numpy
    jsl = jax.scipy.linalg

    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-3, 3, size=12))
    y = np.sin(x) + 0.1 * rng.normal(size=12)
    xs = np.linspace(-3, 3, 7)

    def kernel(a, b, log_ell):
        return jnp.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / jnp.exp(2 * log_ell))

    def neg_log_marginal(theta):
        log_ell, log_noise = theta[0], theta[1]
        k = kernel(x, x, log_ell) + jnp.exp(2 * log_noise) * jnp.eye(x.shape[0])
        c, lower = jsl.cho_factor(k, lower=True)
        alpha = jsl.cho_solve((c, lower), y)
        return (
            0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(c))) + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi)
        )

    def predict(theta):
        log_ell, log_noise = theta[0], theta[1]
        k = kernel(x, x, log_ell) + jnp.exp(2 * log_noise) * jnp.eye(x.shape[0])
        ell = jsl.cholesky(k, lower=True)
        ks = kernel(xs, x, log_ell)
        v = jsl.solve_triangular(ell, ks.T, lower=True)
        mean = ks @ jsl.cho_solve((ell, True), y)
        var = 1.0 - jnp.sum(v**2, axis=0)
        return mean, var

    theta = np.array([0.0, -1.0])
    value, grad = jax.jit(jax.value_and_grad(neg_log_marginal))(theta)
    for _ in range(3):
        theta = theta - 0.1 * jax.grad(neg_log_marginal)(theta)
    mean, var = predict(theta)
    return {
        "value": np.asarray(value),
        "grad": np.asarray(grad),
        "theta": np.asarray(theta),
        "mean": np.asarray(mean),
        "var": np.asarray(var),
    }


def mixture_log_probs(jax: Any) -> dict[str, np.ndarray]:
    """Vectorised log-densities of jax.scipy.stats with random init, logsumexp, grads."""
    jnp = jax.numpy
    random = jax.random
    stats = jax.scipy.stats
    special = jax.scipy.special

    key = random.PRNGKey(7)
    k_mu, k_x, k_w = random.split(key, 3)
    means = random.normal(k_mu, (3, 2))
    log_scales = jnp.full((3,), -0.5)
    logits = random.uniform(k_w, (3,))
    data = random.normal(k_x, (10, 2)) * 1.5

    def log_lik(means, log_scales, logits, x):
        # one point: log sum_k pi_k N(x | mu_k, s_k^2 I)
        comp = jax.vmap(lambda m, ls: jnp.sum(stats.norm.logpdf(x, loc=m, scale=jnp.exp(ls))))(
            means, log_scales
        )
        return special.logsumexp(comp + jax.nn.log_softmax(logits))

    per_point = jax.vmap(log_lik, in_axes=(None, None, None, 0))(means, log_scales, logits, data)
    total = lambda *a: jnp.sum(jax.vmap(log_lik, in_axes=(None, None, None, 0))(*a, data))
    grads = jax.grad(total, argnums=(0, 1, 2))(means, log_scales, logits)
    cov = np.array([[1.0, 0.3], [0.3, 0.5]])
    mvn = stats.multivariate_normal.logpdf(data, mean=jnp.zeros(2), cov=cov)
    gam = stats.gamma.logpdf(jnp.abs(data[:, 0]) + 0.1, a=2.0, scale=1.5)
    t = stats.t.logpdf(data[:, 1], df=3.0)
    return {
        "per_point": np.asarray(per_point),
        "g_means": np.asarray(grads[0]),
        "g_log_scales": np.asarray(grads[1]),
        "g_logits": np.asarray(grads[2]),
        "mvn": np.asarray(mvn),
        "gamma": np.asarray(gam),
        "t": np.asarray(t),
    }


def random_pipeline(jax: Any) -> dict[str, np.ndarray]:
    """Keys under vmap, fold_in, discrete samplers and a jitted dropout mask."""
    jnp = jax.numpy
    random = jax.random

    key = random.PRNGKey(2024)
    keys = random.split(key, 4)
    per_key = jax.vmap(lambda k: random.normal(k, (3,)))(keys)
    folded = jnp.stack([random.uniform(random.fold_in(key, i), ()) for i in range(3)])
    k1, k2, k3, k4 = random.split(random.fold_in(key, 99), 4)
    cats = random.categorical(k1, jnp.array([0.1, 1.0, -0.5, 2.0]), shape=(8,))
    perm = random.permutation(k2, 10)
    coins = random.bernoulli(k3, 0.3, (12,))

    @jax.jit
    def dropout(x, key):
        keep = random.bernoulli(key, 0.8, x.shape)
        return jnp.where(keep, x / 0.8, 0.0)

    x = jnp.arange(12.0).reshape(3, 4)
    dropped = dropout(x, k4)
    ints = random.randint(k4, (6,), 0, 100)
    return {
        "per_key": np.asarray(per_key),
        "folded": np.asarray(folded),
        "cats": np.asarray(cats),
        "perm": np.asarray(perm),
        "coins": np.asarray(coins),
        "dropped": np.asarray(dropped),
        "ints": np.asarray(ints),
    }


def mlp_from_scratch(jax: Any) -> dict[str, np.ndarray]:
    """The docs' neural net from scratch: jax.random init, relu MLP, jit(grad) SGD."""
    jnp = jax.numpy
    random = jax.random

    def random_layer_params(m, n, key, scale=0.1):
        w_key, b_key = random.split(key)
        return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))

    def init_network_params(sizes, key):
        keys = random.split(key, len(sizes))
        return [random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]

    params = init_network_params([4, 8, 8, 3], random.PRNGKey(0))

    def predict(params, x):
        activations = x
        for w, b in params[:-1]:
            activations = jax.nn.relu(jnp.dot(w, activations) + b)
        w, b = params[-1]
        logits = jnp.dot(w, activations) + b
        return logits - jax.scipy.special.logsumexp(logits)

    batched_predict = jax.vmap(predict, in_axes=(None, 0))
    x, labels = _data(5, 24, 4, 3)
    targets = jax.nn.one_hot(labels, 3)

    def loss(params, x, targets):
        return -jnp.mean(batched_predict(params, x) * targets)

    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [(w - 0.5 * dw, b - 0.5 * db) for (w, b), (dw, db) in zip(params, grads)]

    losses = []
    for _ in range(6):
        params = update(params, x, targets)
        losses.append(loss(params, x, targets))
    correct = jnp.sum(jnp.argmax(batched_predict(params, x), axis=1) == labels)
    return {
        "losses": np.asarray(losses),
        "w0": np.asarray(params[0][0]),
        "b2": np.asarray(params[2][1]),
        "correct": np.asarray(correct),
    }


def private_cnn_sgd(jax: Any) -> dict[str, np.ndarray]:
    """Differentially private SGD on a small CNN: stax Conv/MaxPool/Dense, per-example
    gradients by vmap of grad over a dummy batch axis, each clipped to a global norm
    through tree_flatten, Gaussian noise from split keys, fold_in of the traced step."""
    jnp = jax.numpy
    random = jax.random
    stax = jax.example_libraries.stax
    optimizers = jax.example_libraries.optimizers
    tree_flatten, tree_unflatten = jax.tree_util.tree_flatten, jax.tree_util.tree_unflatten

    init, predict = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME", strides=(2, 2)),
        stax.Relu,
        stax.MaxPool((2, 2), (1, 1)),
        stax.Conv(6, (2, 2), padding="VALID"),
        stax.Tanh,
        stax.Flatten,
        stax.Dense(5),
    )
    key = random.PRNGKey(7)
    _, params = init(key, (-1, 8, 8, 1))
    rng = np.random.default_rng(11)
    images = rng.normal(size=(6, 8, 8, 1))
    labels = np.eye(5)[rng.integers(0, 5, 6)]

    def loss(params, batch):
        x, y = batch
        logp = stax.logsoftmax(predict(params, x))
        return -jnp.mean(jnp.sum(logp * y, axis=1))

    def clipped(params, example):
        g = jax.grad(loss)(params, example)
        leaves, tree = tree_flatten(g)
        total = jnp.linalg.norm(jnp.array([jnp.linalg.norm(l.ravel()) for l in leaves]))
        scale = jnp.maximum(total / 0.5, 1.0)
        return tree_unflatten(tree, [l / scale for l in leaves])

    opt_init, opt_update, get_params = optimizers.sgd(0.2)

    @jax.jit
    def step(i, state, x, y):
        params = get_params(state)
        per_ex = jax.vmap(clipped, (None, 0))(params, (x[:, None], y[:, None]))
        leaves, tree = tree_flatten(per_ex)
        keys = random.split(random.fold_in(key, i), len(leaves))
        noisy = [l.sum(0) + 0.3 * random.normal(k, l.shape[1:]) for k, l in zip(keys, leaves)]
        return opt_update(i, tree_unflatten(tree, [n / x.shape[0] for n in noisy]), state)

    state = opt_init(params)
    losses = []
    for i in range(3):
        state = step(i, state, images, labels)
        losses.append(loss(get_params(state), (images, labels)))
    final = get_params(state)
    return {
        "losses": np.asarray(losses),
        "conv0_w": np.asarray(final[0][0]),
        "dense_b": np.asarray(final[-1][1]),
    }


def variational_funnel(jax: Any) -> dict[str, np.ndarray]:
    """Black-box variational inference on a funnel density: reparameterised samples
    from keys made of the traced step inside jit, vmap over keys with shared params,
    norm.logpdf under vmap, momentum, and jit used as a decorator factory with static
    arguments (a density function among them)."""
    jnp = jax.numpy
    random = jax.random
    norm = jax.scipy.stats.norm
    optimizers = jax.example_libraries.optimizers

    def log_density(z):
        return norm.logpdf(z[0], 0.0, jnp.exp(z[1] / 2)) + norm.logpdf(z[1], 0.0, 1.5)

    def sample(key, mean, log_std):
        return mean + jnp.exp(log_std) * random.normal(key, mean.shape)

    def log_q(z, mean, log_std):
        return jnp.sum(jax.vmap(norm.logpdf)(z, mean, jnp.exp(log_std)))

    def elbo(key, mean, log_std):
        z = sample(key, mean, log_std)
        return log_density(z) - log_q(z, mean, log_std)

    @jax.jit
    def objective(params, t):
        keys = random.split(random.PRNGKey(t), 16)
        return -jnp.mean(jax.vmap(elbo, in_axes=(0, None, None))(keys, *params))

    opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)

    @jax.jit
    def update(t, state):
        return opt_update(t, jax.grad(objective)(get_params(state), t), state)

    @jax.jit(static_argnums=(0, 2))
    def grid_eval(fn, params, ticks):
        xs = jnp.linspace(-2.0, 2.0, ticks)
        pts = jnp.stack(jnp.meshgrid(xs, xs), axis=-1).reshape(-1, 2)
        return jax.vmap(fn, in_axes=(0, None))(pts, params)

    state = opt_init((jnp.zeros(2), jnp.zeros(2)))
    values = []
    for t in range(5):
        state = update(t, state)
        values.append(objective(get_params(state), t))
    mean, log_std = get_params(state)
    density = grid_eval(lambda z, p: jnp.exp(log_q(z, *p)), (mean, log_std), 5)
    return {
        "objective": np.asarray(values),
        "mean": np.asarray(mean),
        "log_std": np.asarray(log_std),
        "density": np.asarray(density),
    }


PROGRAMS = {
    f.__name__: f
    for f in (
        stax_classifier_adam,
        optimizers_pytree_loop,
        vmap_per_example_losses,
        per_example_gradients,
        newton_logistic_regression,
        rnn_scan,
        jacobians,
        custom_jvp_safe_log,
        control_flow_and_static_args,
        vae_step,
        gp_regression,
        mixture_log_probs,
        random_pipeline,
        mlp_from_scratch,
        private_cnn_sgd,
        variational_funnel,
    )
}
