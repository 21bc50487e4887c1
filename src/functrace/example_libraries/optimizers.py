"""Optimizers as ``(init_fun, update_fun, get_params)`` triples, as in ``jax.example_libraries``.

An optimizer is written for a single array and the :func:`optimizer` decorator lifts
it to any pytree of parameters::

    opt_init, opt_update, get_params = adam(step_size=1e-3)
    opt_state = opt_init(params)                 # any pytree of arrays
    def step(i, opt_state, batch):
        g = grad(loss)(get_params(opt_state), batch)
        return opt_update(i, g, opt_state)       # can be jitted: states are pytrees

``update_fun(i, grads, opt_state)`` takes the step number ``i`` first (schedules are
functions of it). The state is an :class:`OptimizerState`, a pytree whose leaves are
the per-parameter state arrays, so it passes through ``jit`` and ``vmap``, and
``functrace.io`` saves it (load it with ``like=`` a state of the same structure: its
static data holds treedefs). :func:`unpack_optimizer_state` gives the state as the
parameters' tree with one :class:`JoinPoint` per leaf, which pickles;
:func:`pack_optimizer_state` inverts it.

Learning rates (``step_size``) are numbers or schedules (callables ``i -> rate``);
:func:`make_schedule` turns either into a schedule. For the Optax-style design
(``GradientTransformation``, chains of transforms), see :mod:`functrace.optim`.

Dtypes: the states keep the parameters' dtype with a constant step size. A
schedule's value is a float64 when it is computed by ``functrace.numpy`` functions
(``floor``, ``minimum``, ``take``) or, under ``jit``, from the step number; it then
promotes float32 parameters to float64 (JAX keeps them float32, except for
``piecewise_constant``, whose values are a float64 array there too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace import numpy as fnp
from functrace.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

Step = int
Schedule = Callable[[Step], Any]
InitFn = Callable[[Any], Any]
UpdateFn = Callable[[Step, Any, Any], Any]
ParamsFn = Callable[[Any], Any]


class Optimizer(NamedTuple):
    """The triple returned by an optimizer built with :func:`optimizer`."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


class OptimizerState(NamedTuple):
    """The state of a pytree optimizer.

    ``packed_state`` holds one list of arrays per parameter leaf (that leaf's state,
    flattened); ``tree_def`` is the parameters' structure and ``subtree_defs`` the
    structure of each leaf's state. As a pytree, only ``packed_state`` holds leaves.
    """

    packed_state: Any
    tree_def: PyTreeDef
    subtree_defs: tuple[PyTreeDef, ...]


register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(list(children)[0], aux[0], aux[1]),
)


def _flatten_states(states: Any) -> tuple[list[list[Any]], tuple[PyTreeDef, ...]]:
    flat, defs = [], []
    for s in states:
        leaves, td = tree_flatten(s)
        flat.append(leaves)
        defs.append(td)
    return flat, tuple(defs)


def _check_state(fname: str, opt_state: Any) -> None:
    if not isinstance(opt_state, OptimizerState):
        raise TypeError(
            f"{fname}: expected an OptimizerState (as returned by the optimizer's init_fun "
            f"or update_fun), got {type(opt_state).__name__}"
        )


def optimizer(
    opt_maker: Callable[..., tuple[InitFn, UpdateFn, ParamsFn]],
) -> Callable[..., Optimizer]:
    """Lift an optimizer written for one array to pytrees of arrays.

    ``opt_maker(*args, **kwargs)`` returns ``(init, update, get_params)`` acting on a
    single array and its state (any pytree): ``init(x0) -> state``,
    ``update(i, g, state) -> state``, ``get_params(state) -> x``. The decorated
    function returns the same triple acting on pytrees of parameters, with states
    packed in an :class:`OptimizerState`.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)
        name = opt_maker.__name__

        @functools.wraps(init)
        def tree_init(x0_tree: Any) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            packed, subtrees = _flatten_states([init(x0) for x0 in x0_flat])
            return OptimizerState(packed, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Any, grad_tree: Any, opt_state: OptimizerState) -> OptimizerState:
            _check_state(f"{name} update_fun", opt_state)
            grad_flat, tree2 = tree_flatten(grad_tree)
            packed, tree, subtrees = opt_state
            if tree2 != tree:
                raise TypeError(
                    f"{name} update_fun: the gradient tree does not match the parameter tree "
                    f"the optimizer was initialized with: parameter tree {tree}, "
                    f"gradient tree {tree2}"
                )
            states = [tree_unflatten(td, leaves) for td, leaves in zip(subtrees, packed)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_packed, subtrees2 = _flatten_states(new_states)
            for k, (td, td2) in enumerate(zip(subtrees, subtrees2)):
                if td != td2:
                    raise TypeError(
                        f"{name} update_fun: the update changed the structure of a state "
                        f"from {td} to {td2}"
                    )
                for old, new in zip(packed[k], new_packed[k]):
                    if np.shape(old) != np.shape(new):
                        raise ValueError(
                            f"{name} update_fun: the gradient of parameter {k} (in flattened "
                            f"order) has shape {np.shape(grad_flat[k])}, which does not match "
                            f"the parameter's state of shape {np.shape(old)}"
                        )
            return OptimizerState(new_packed, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            _check_state(f"{name} get_params", opt_state)
            packed, tree, subtrees = opt_state
            states = [tree_unflatten(td, leaves) for td, leaves in zip(subtrees, packed)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---------------------------------------------------------------------------
# Optimizers (each written for one array; @optimizer lifts them to pytrees)
# ---------------------------------------------------------------------------


def _first(state: Any) -> Any:
    return state[0]


@optimizer
def sgd(step_size: Any) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``."""
    step_size = make_schedule(step_size, "sgd")

    def init(x0: Any) -> Any:
        return x0

    def update(i: Any, g: Any, x: Any) -> Any:
        return x - step_size(i) * g

    def get_params(x: Any) -> Any:
        return x

    return init, update, get_params


@optimizer
def momentum(step_size: Any, mass: float) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """Heavy-ball momentum: ``v <- mass * v + g``, ``x <- x - step_size(i) * v``."""
    step_size = make_schedule(step_size, "momentum")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size: Any, mass: float) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """Nesterov momentum: ``v <- mass * v + g``, ``x <- x - step_size(i) * (mass * v + g)``."""
    step_size = make_schedule(step_size, "nesterov")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _first


def _inv_sqrt_or_zero(a: Any) -> Any:
    # 1/sqrt(a) where a > 0 and 0 elsewhere, without evaluating 1/sqrt(0) in the
    # selected branch (the double-where pattern keeps gradients finite too).
    safe = fnp.where(a > 0, a, 1.0)
    return fnp.where(a > 0, 1.0 / fnp.sqrt(safe), 0.0)


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """Adagrad with momentum on the normalised gradient.

    ``G <- G + g**2``; ``m <- (1 - momentum) * g / sqrt(G) + momentum * m`` (0 where
    ``G`` is 0); ``x <- x - step_size(i) * m``.
    """
    step_size = make_schedule(step_size, "adagrad")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        m = (1.0 - momentum) * (g * _inv_sqrt_or_zero(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8
) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """RMSProp: a running average of squared gradients scales the step.

    ``a <- gamma * a + (1 - gamma) * g**2``; ``x <- x - step_size(i) * g / sqrt(a + eps)``.
    """
    step_size = make_schedule(step_size, "rmsprop")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """RMSProp with momentum on the scaled step.

    ``a <- gamma * a + (1 - gamma) * g**2``;
    ``m <- momentum * m + step_size(i) * g / sqrt(a + eps)``; ``x <- x - m``.
    """
    step_size = make_schedule(step_size, "rmsprop_momentum")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


def _bias_correction(b: float, i: Any, like: Any) -> Any:
    # 1 - b**(i+1), in the parameters' dtype (so float32 parameters stay float32).
    return 1.0 - fnp.asarray(b, dtype=core.get_aval(like).dtype) ** (i + 1)


@optimizer
def adam(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """Adam (Kingma and Ba, 2014) with bias-corrected moments.

    ``m <- b1 * m + (1 - b1) * g``; ``v <- b2 * v + (1 - b2) * g**2``;
    ``x <- x - step_size(i) * mhat / (sqrt(vhat) + eps)`` with
    ``mhat = m / (1 - b1**(i+1))`` and ``vhat = v / (1 - b2**(i+1))``.
    """
    step_size = make_schedule(step_size, "adam")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1.0 - b1) * g + b1 * m
        v = (1.0 - b2) * fnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, i, m)
        vhat = v / _bias_correction(b2, i, m)
        return x - step_size(i) * mhat / (fnp.sqrt(vhat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """AdaMax, Adam's infinity-norm variant.

    ``m <- b1 * m + (1 - b1) * g``; ``u <- max(b2 * u, |g|)``;
    ``x <- x - step_size(i) / (1 - b1**(i+1)) * m / (u + eps)``.
    """
    step_size = make_schedule(step_size, "adamax")

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1.0 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (step_size(i) / _bias_correction(b1, i, m)) * m / (u + eps)
        return x, m, u

    return init, update, _first


def _broadcast_along(ndim: int, v: Any, axis: int) -> Any:
    # View a 1-d array as an ndim-d array varying along `axis` only.
    shape = [1] * ndim
    shape[axis] = -1
    return fnp.reshape(v, tuple(shape))


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> tuple[InitFn, UpdateFn, ParamsFn]:
    """SM3 (Anil et al., 2019): Adagrad with one accumulator per row/column/... .

    The state holds one vector per axis of the parameter (0-d parameters are treated
    as 1-d); the accumulator of an entry is the minimum of its axes' vectors plus
    ``g**2``; each vector then keeps the maximum of the accumulator along the other
    axes. The step is Adagrad's with momentum. The parameter keeps its shape in the
    state (JAX's stores a 1-d view and the shape as integers), so ``get_params``
    also works under ``jit``.
    """
    step_size = make_schedule(step_size, "sm3")

    def init(x0: Any) -> Any:
        dtype = core.get_aval(x0).dtype
        vs = [fnp.zeros(n, dtype=dtype) for n in fnp.shape(fnp.atleast_1d(x0))]
        return x0, fnp.zeros_like(x0), vs

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, vs = state
        shape = fnp.shape(x)
        if fnp.shape(g) != shape:
            raise ValueError(
                f"sm3 update_fun: gradient of shape {fnp.shape(g)} for a parameter of shape {shape}"
            )
        x1, g1, m1 = fnp.atleast_1d(x), fnp.atleast_1d(g), fnp.atleast_1d(m)
        nd = len(fnp.shape(x1))
        accum = functools.reduce(
            fnp.minimum, [_broadcast_along(nd, v, k) for k, v in enumerate(vs)]
        )
        accum = accum + fnp.square(g1)
        m1 = (1.0 - momentum) * (g1 * _inv_sqrt_or_zero(accum)) + momentum * m1
        x1 = x1 - step_size(i) * m1
        others = [tuple(a for a in range(nd) if a != k) for k in range(nd)]
        vs = [fnp.max(accum, axis=ax) if ax else accum for ax in others]
        return fnp.reshape(x1, shape), fnp.reshape(m1, shape), vs

    return init, update, _first


# ---------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------


def constant(step_size: Any) -> Schedule:
    """The schedule ``i -> step_size``."""

    def schedule(i: Any) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """``i -> step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: float, decay_steps: float, decay_rate: float, staircase: bool = False
) -> Schedule:
    """``i -> step_size / (1 + decay_rate * i / decay_steps)``.

    With ``staircase=True``, ``i / decay_steps`` is rounded down first.
    """
    if staircase:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))

    else:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: float, decay_steps: float, final_step_size: float, power: float = 1.0
) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps, then flat.

    The step size is ``final + (step_size - final) * (1 - i / decay_steps) ** power``.
    """

    def schedule(step_num: Any) -> Any:
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps ``i`` with ``boundaries[k-1] < i <= boundaries[k]``.

    ``boundaries`` has one entry fewer than ``values``; steps up to and including
    ``boundaries[0]`` get ``values[0]``, steps after the last boundary the last value.
    """
    boundaries = np.asarray(boundaries)
    values = np.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(
            "piecewise_constant: boundaries and values must be 1-d sequences, got "
            f"arrays of shapes {boundaries.shape} and {values.shape}"
        )
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(
            "piecewise_constant: boundaries must have one entry fewer than values, got "
            f"{boundaries.shape[0]} boundaries and {values.shape[0]} values"
        )

    def schedule(i: Any) -> Any:
        return fnp.take(values, fnp.sum(fnp.asarray(i) > boundaries))

    return schedule


def make_schedule(scalar_or_schedule: Any, fname: str = "make_schedule") -> Schedule:
    """A schedule (returned as is) or a scalar (made a :func:`constant` schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0 and not isinstance(scalar_or_schedule, (str, bytes)):
        return constant(scalar_or_schedule)
    raise TypeError(
        f"{fname}: step_size must be a scalar or a schedule (a callable step -> rate), "
        f"got {type(scalar_or_schedule).__name__}"
        + (
            f" of shape {np.shape(scalar_or_schedule)}"
            if hasattr(scalar_or_schedule, "shape")
            else ""
        )
    )


# ---------------------------------------------------------------------------
# Utilities
# ---------------------------------------------------------------------------


def l2_norm(tree: Any) -> Any:
    """The Euclidean norm of all the leaves of ``tree`` taken as one vector."""
    leaves = tree_leaves(tree)
    if not leaves:
        return fnp.asarray(0.0)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """Scale ``grad_tree`` so that its :func:`l2_norm` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)

    def normalize(g: Any) -> Any:
        return fnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks where a parameter leaf's state subtree sits in an unpacked optimizer state.

    A ``JoinPoint`` is a pytree leaf, so the unpacked state keeps the parameters'
    structure with one ``JoinPoint`` per parameter.
    """

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree

    def __repr__(self) -> str:
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as a plain pytree: the parameters' structure with a :class:`JoinPoint` per leaf.

    Each ``JoinPoint`` holds that parameter's state subtree (e.g. ``(x, m, v)`` for
    Adam). :func:`pack_optimizer_state` inverts it.
    """
    _check_state("unpack_optimizer_state", opt_state)
    packed, tree, subtrees = opt_state
    sentinels = [JoinPoint(tree_unflatten(td, leaves)) for td, leaves in zip(subtrees, packed)]
    return tree_unflatten(tree, sentinels)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """Invert :func:`unpack_optimizer_state`."""
    sentinels, tree = tree_flatten(marked_pytree)
    for s in sentinels:
        if not isinstance(s, JoinPoint):
            raise TypeError(
                "pack_optimizer_state: expected the output of unpack_optimizer_state (a pytree "
                f"whose leaves are JoinPoints), found a leaf of type {type(s).__name__}"
            )
    packed, subtrees = _flatten_states([s.subtree for s in sentinels])
    return OptimizerState(packed, tree, subtrees)


__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]
