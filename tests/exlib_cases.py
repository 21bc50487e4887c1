"""Cases for tests/test_example_libraries.py, written once for JAX and functrace.

Every function here takes the library namespace (``jax``, or ``functrace`` standing in
for it) and uses only the API the two share, so the reference values in
``tests/fixtures/example_libraries_jax.npz`` were recorded by running this very code
under JAX (float64) and the tests run it under functrace. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 8

# name -> optimizer triple built from the `optimizers` module.
OPTIMIZERS: dict[str, Any] = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.2, 2, 0.5)),
    "sgd_inverse_time_decay": lambda o: o.sgd(o.inverse_time_decay(0.2, 2, 0.5)),
    "sgd_inverse_time_decay_staircase": lambda o: o.sgd(
        o.inverse_time_decay(0.2, 2, 0.5, staircase=True)
    ),
    "sgd_polynomial_decay": lambda o: o.sgd(o.polynomial_decay(0.2, 4, 0.01, power=2.0)),
    "sgd_piecewise_constant": lambda o: o.sgd(o.piecewise_constant([2, 4], [0.2, 0.1, 0.05])),
    "momentum": lambda o: o.momentum(0.05, mass=0.9),
    "nesterov": lambda o: o.nesterov(0.05, mass=0.9),
    "adagrad": lambda o: o.adagrad(0.3),
    "adagrad_no_momentum": lambda o: o.adagrad(0.3, momentum=0.0),
    "rmsprop": lambda o: o.rmsprop(0.05),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.02, gamma=0.8, momentum=0.5),
    "adam": lambda o: o.adam(0.1),
    "adam_custom": lambda o: o.adam(0.05, b1=0.8, b2=0.99, eps=1e-6),
    "adam_schedule": lambda o: o.adam(o.exponential_decay(0.1, 3, 0.3)),
    "adamax": lambda o: o.adamax(0.1),
    "sm3": lambda o: o.sm3(0.2),
    "sm3_no_momentum": lambda o: o.sm3(0.2, momentum=0.0),
}


def initial_params() -> dict[str, Any]:
    """A pytree with a matrix, a 3-d leaf, a vector and a 0-d leaf."""
    rng = np.random.default_rng(7)
    return {
        "w": rng.normal(size=(2, 3)),
        "conv": rng.normal(size=(2, 2, 3)),
        "b": (rng.normal(size=3), np.float64(1.5)),
    }


def _targets() -> dict[str, Any]:
    rng = np.random.default_rng(8)
    p = initial_params()
    t = {
        "w": rng.normal(size=(2, 3)),
        "conv": rng.normal(size=(2, 2, 3)),
        "b": (rng.normal(size=3), np.float64(-0.5)),
    }
    # One entry already at its target with a zero gradient, for Adagrad/SM3's 1/sqrt(0).
    t["w"][0, 1] = p["w"][0, 1]
    return t


def grad_fn(jax: Any) -> Any:
    """The gradient of sum((x - t)**2 / 2 + (x - t)**4 / 12) over all leaves, by hand."""
    tree_map = jax.tree_util.tree_map
    targets = _targets()

    def g(params: Any) -> Any:
        return tree_map(lambda x, t: (x - t) + (x - t) ** 3 / 3.0, params, targets)

    return g


def flat(jax: Any, tree: Any) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(x)) for x in jax.tree_util.tree_leaves(tree)])


def trajectory(jax: Any, optimizers: Any, name: str, jit: bool) -> np.ndarray:
    """The flattened params after each of STEPS updates, shape (STEPS, n_params)."""
    init, update, get_params = OPTIMIZERS[name](optimizers)
    g = grad_fn(jax)
    state = init(initial_params())
    step = jax.jit(update) if jit else update
    rows = []
    for i in range(STEPS):
        state = step(i, g(get_params(state)), state)
        rows.append(flat(jax, get_params(state)))
    return np.stack(rows)


SCHEDULES: dict[str, Any] = {
    "constant": lambda o: o.constant(0.3),
    "exponential_decay": lambda o: o.exponential_decay(0.2, 3, 0.5),
    "inverse_time_decay": lambda o: o.inverse_time_decay(0.2, 3, 0.5),
    "inverse_time_decay_staircase": lambda o: o.inverse_time_decay(0.2, 3, 0.5, staircase=True),
    "polynomial_decay": lambda o: o.polynomial_decay(0.2, 5, 0.01, power=1.5),
    "piecewise_constant": lambda o: o.piecewise_constant([1, 4, 6], [0.4, 0.3, 0.2, 0.1]),
    "make_schedule_scalar": lambda o: o.make_schedule(0.25),
}


def schedule_values(optimizers: Any, name: str) -> np.ndarray:
    sched = SCHEDULES[name](optimizers)
    return np.array([np.asarray(sched(i), dtype=np.float64) for i in range(10)])


def clip_and_norm(jax: Any, optimizers: Any) -> dict[str, np.ndarray]:
    g = grad_fn(jax)(initial_params())
    return {
        "l2_norm": np.asarray(optimizers.l2_norm(g)),
        "clip_small": flat(jax, optimizers.clip_grads(g, 0.5)),
        "clip_large": flat(jax, optimizers.clip_grads(g, 1e3)),
    }


# ---------------------------------------------------------------------------
# stax: (name, layer factory, input shape); params are recorded from JAX's init_fun
# and then given explicitly to functrace's apply_fun.
# ---------------------------------------------------------------------------


def stax_layers(stax: Any) -> dict[str, tuple[Any, tuple[int, ...]]]:
    return {
        "Dense": (stax.Dense(4), (5, 3)),
        "Tanh": (stax.Tanh, (4, 5)),
        "Relu": (stax.Relu, (4, 5)),
        "Exp": (stax.Exp, (4, 5)),
        "LogSoftmax": (stax.LogSoftmax, (4, 5)),
        "Softmax": (stax.Softmax, (4, 5)),
        "Softplus": (stax.Softplus, (4, 5)),
        "Sigmoid": (stax.Sigmoid, (4, 5)),
        "Elu": (stax.Elu, (4, 5)),
        "LeakyRelu": (stax.LeakyRelu, (4, 5)),
        "Selu": (stax.Selu, (4, 5)),
        "Gelu": (stax.Gelu, (4, 5)),
        "Flatten": (stax.Flatten, (2, 3, 4)),
        "Identity": (stax.Identity, (3, 2)),
        "BatchNorm_axis0": (stax.BatchNorm(axis=(0,)), (6, 4)),
        "BatchNorm_default": (stax.BatchNorm(), (2, 3, 3, 4)),
        "BatchNorm_no_center": (stax.BatchNorm(axis=0, center=False), (6, 4)),
        "BatchNorm_no_scale": (stax.BatchNorm(axis=(0, 1), scale=False), (3, 2, 4)),
        "mlp": (stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax), (5, 4)),
        "residual": (
            stax.serial(
                stax.FanOut(2),
                stax.parallel(stax.serial(stax.Dense(4), stax.Tanh), stax.Identity),
                stax.FanInSum,
            ),
            (3, 4),
        ),
        "concat": (
            stax.serial(
                stax.FanOut(3),
                stax.parallel(stax.Dense(2), stax.Sigmoid, stax.Dense(5)),
                stax.FanInConcat(axis=-1),
                stax.Dense(2),
            ),
            (3, 4),
        ),
        "flatten_dense": (stax.serial(stax.Flatten, stax.Dense(3), stax.Gelu), (2, 3, 2)),
    }


def stax_input(shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(sum(shape) * 31 + len(shape))
    return rng.normal(size=shape) * 2.0
