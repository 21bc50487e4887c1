"""Optimizers as pure gradient transformations (the Optax design).

A :class:`GradientTransformation` is a pair of pure functions::

    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = apply_updates(params, updates)

States are NamedTuples of arrays (pytrees), so a whole training step, optimizer
included, can be differentiated, batched, jitted and checkpointed. Optimizers
such as :func:`adam` are chains of small building blocks (:func:`scale_by_adam`,
:func:`scale_by_learning_rate`, ...). Learning rates may be numbers or schedules
(callables ``step -> lr``).

Run eagerly on float arrays, the per-parameter arithmetic of ``scale_by_adam``,
``trace`` and ``scale_by_rms`` runs as one jitted call (one fused kernel per parameter
instead of a dozen NumPy passes; ``config.fused_updates``, see ``functrace._leafmap``),
with the same bits as op by op. Under ``jit``, ``grad`` or ``vmap`` it is traced as
written.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace import numpy as fnp
from functrace._leafmap import LeafMap
from functrace.tree_util import (
    structure_mismatch_message,
    tree_leaves,
    tree_map,
    tree_structure,
)

Schedule = Callable[[Any], Any]
ScalarOrSchedule = float | Schedule


class GradientTransformation(NamedTuple):
    """``init(params) -> state`` and ``update(grads, state, params=None) -> (updates, state)``."""

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class EmptyState(NamedTuple):
    pass


def _check_structure(fname: str, expected: Any, given: Any, what: str) -> None:
    if tree_structure(expected) != tree_structure(given):
        raise ValueError(
            f"{fname}: " + structure_mismatch_message(tree_structure(expected), given, what)
        )


def _count_like() -> np.ndarray:
    return np.zeros((), np.int32)


def _incr(count: Any) -> Any:
    # Saturating at the int32 maximum so a very long run never wraps around.
    return fnp.where(count < np.iinfo(np.int32).max, count + np.int32(1), count)


def _dtype(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, np.ndarray) else core.get_aval(x).dtype


def _cast_like(value: Any, like: Any) -> Any:
    dt = _dtype(like)
    return fnp.astype(value, dt) if _dtype(value) != dt else value


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------


def identity() -> GradientTransformation:
    """Pass gradients through unchanged."""
    return GradientTransformation(
        lambda params: EmptyState(), lambda grads, state, params=None: (grads, state)
    )


def scale(step_size: float) -> GradientTransformation:
    """Multiply updates by a constant."""

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return tree_map(lambda g: g * step_size, grads), state

    return GradientTransformation(lambda params: EmptyState(), update)


class ScaleByScheduleState(NamedTuple):
    count: Any


def scale_by_learning_rate(
    learning_rate: ScalarOrSchedule, *, flip_sign: bool = True
) -> GradientTransformation:
    """Multiply by ``-learning_rate`` (a number or a schedule of the step count)."""
    sign = -1.0 if flip_sign else 1.0
    if not callable(learning_rate):
        return scale(sign * float(learning_rate))

    def init(params: Any) -> ScaleByScheduleState:
        return ScaleByScheduleState(_count_like())

    def update(grads: Any, state: ScaleByScheduleState, params: Any = None) -> tuple[Any, Any]:
        lr = learning_rate(state.count)
        updates = tree_map(lambda g: g * _cast_like(sign * lr, g), grads)
        return updates, ScaleByScheduleState(_incr(state.count))

    return GradientTransformation(init, update)


class TraceState(NamedTuple):
    trace: Any


def trace(decay: float, nesterov: bool = False) -> GradientTransformation:
    """Momentum: ``t = decay * t + g``; the update is ``t`` (or ``g + decay * t``)."""

    def init(params: Any) -> TraceState:
        return TraceState(tree_map(fnp.zeros_like, params))

    def leaf(g: Any, t: Any) -> tuple[Any, Any]:
        t = g + decay * t
        return t, (g + decay * t if nesterov else t)

    leaves = LeafMap(leaf, 2)

    def update(grads: Any, state: TraceState, params: Any = None) -> tuple[Any, Any]:
        _check_structure("trace.update", state.trace, grads, "gradients vs momentum state")
        new, out = leaves((grads, state.trace))
        return out, TraceState(new)

    return GradientTransformation(init, update)


class ScaleByAdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> GradientTransformation:
    """Adam's rescaling: bias-corrected first moment over root of second moment."""

    def init(params: Any) -> ScaleByAdamState:
        zeros = tree_map(fnp.zeros_like, params)
        return ScaleByAdamState(_count_like(), zeros, tree_map(fnp.zeros_like, params))

    def leaf(g: Any, m: Any, v: Any, bc1: Any, bc2: Any) -> tuple[Any, Any, Any]:
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * (g * g)
        return m, v, (m / _cast_like(bc1, m)) / (fnp.sqrt(v / _cast_like(bc2, v)) + eps)

    leaves = LeafMap(leaf, 3)

    def update(grads: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        _check_structure("scale_by_adam.update", state.mu, grads, "gradients vs Adam state")
        _check_structure("scale_by_adam.update", state.nu, grads, "gradients vs Adam state")
        count = _incr(state.count)
        t = fnp.astype(count, np.float64)
        bc1 = 1.0 - fnp.power(b1, t)
        bc2 = 1.0 - fnp.power(b2, t)
        mu, nu, updates = leaves((grads, state.mu, state.nu), (bc1, bc2))
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


class ScaleByRmsState(NamedTuple):
    nu: Any
    mu: Any


def scale_by_rms(
    decay: float = 0.9, eps: float = 1e-8, centered: bool = False
) -> GradientTransformation:
    """RMSProp's rescaling by a running root mean square of gradients."""

    def init(params: Any) -> ScaleByRmsState:
        return ScaleByRmsState(tree_map(fnp.zeros_like, params), tree_map(fnp.zeros_like, params))

    def leaf(g: Any, v: Any, m: Any) -> tuple[Any, Any, Any]:
        v = decay * v + (1 - decay) * (g * g)
        if not centered:
            return v, m, g / (fnp.sqrt(v) + eps)
        m = decay * m + (1 - decay) * g
        return v, m, g / (fnp.sqrt(v - m * m) + eps)

    leaves = LeafMap(leaf, 3)

    def update(grads: Any, state: ScaleByRmsState, params: Any = None) -> tuple[Any, Any]:
        _check_structure("scale_by_rms.update", state.nu, grads, "gradients vs RMSProp state")
        _check_structure("scale_by_rms.update", state.mu, grads, "gradients vs RMSProp state")
        nu, mu, updates = leaves((grads, state.nu, state.mu))
        return updates, ScaleByRmsState(nu, mu)

    return GradientTransformation(init, update)


def add_decayed_weights(weight_decay: float) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (decoupled weight decay)."""

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError(
                "add_decayed_weights.update: expected params, got None. Pass "
                "params to update(grads, state, params)."
            )
        _check_structure("add_decayed_weights.update", params, grads, "gradients vs params")
        return tree_map(lambda g, p: g + weight_decay * p, grads, params), state

    return GradientTransformation(lambda params: EmptyState(), update)


def global_norm(tree: Any) -> Any:
    """The l2 norm of all leaves together: ``sqrt(sum of squares)``."""
    leaves = tree_leaves(tree)
    if not leaves:
        return np.float64(0.0)
    total = fnp.sum(fnp.square(leaves[0]))
    for x in leaves[1:]:
        total = total + fnp.sum(fnp.square(x))
    return fnp.sqrt(total)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scale all updates down together when their global norm exceeds ``max_norm``."""

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        norm = global_norm(grads)
        factor = fnp.where(norm > max_norm, max_norm / fnp.maximum(norm, 1e-30), 1.0)
        return tree_map(lambda g: g * _cast_like(factor, g), grads), state

    return GradientTransformation(lambda params: EmptyState(), update)


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply transformations in sequence; the state is the tuple of their states."""

    def init(params: Any) -> tuple[Any, ...]:
        return tuple(t.init(params) for t in transforms)

    def update(grads: Any, state: tuple[Any, ...], params: Any = None) -> tuple[Any, Any]:
        if not isinstance(state, tuple) or len(state) != len(transforms):
            raise ValueError(
                f"chain.update: expected a state tuple of {len(transforms)} "
                f"entries (from init), got {type(state).__name__}."
            )
        new_states = []
        for t, s in zip(transforms, state):
            grads, s = t.update(grads, s, params)
            new_states.append(s)
        return grads, tuple(new_states)

    return GradientTransformation(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates``, leaf by leaf, keeping each parameter's dtype."""
    _check_structure("apply_updates", params, updates, "updates vs params")
    return tree_map(lambda p, u: p + _cast_like(u, p), params, updates)


# ---------------------------------------------------------------------------
# Optimizers (aliases)
# ---------------------------------------------------------------------------


def sgd(
    learning_rate: ScalarOrSchedule, momentum: float = 0.0, nesterov: bool = False
) -> GradientTransformation:
    """Stochastic gradient descent, optionally with (Nesterov) momentum.

    >>> import numpy as np, functrace.optim as optim
    >>> opt = optim.sgd(0.1)
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> updates, state = opt.update({"w": np.array([1.0, 1.0])}, opt.init(params), params)
    >>> optim.apply_updates(params, updates)["w"]
    array([0.9, 1.9])
    """
    parts = [trace(momentum, nesterov)] if momentum else []
    return chain(*parts, scale_by_learning_rate(learning_rate))


def adam(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> GradientTransformation:
    """Adam (Kingma and Ba)."""
    return chain(scale_by_adam(b1, b2, eps), scale_by_learning_rate(learning_rate))


def adamw(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 1e-4,
) -> GradientTransformation:
    """Adam with decoupled weight decay (Loshchilov and Hutter)."""
    return chain(
        scale_by_adam(b1, b2, eps),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )


def rmsprop(
    learning_rate: ScalarOrSchedule,
    decay: float = 0.9,
    eps: float = 1e-8,
    momentum: float = 0.0,
    centered: bool = False,
) -> GradientTransformation:
    """RMSProp, optionally centered and with momentum."""
    parts = [scale_by_rms(decay, eps, centered)]
    if momentum:
        parts.append(trace(momentum))
    return chain(*parts, scale_by_learning_rate(learning_rate))


# ---------------------------------------------------------------------------
# Gradient accumulation
# ---------------------------------------------------------------------------


class AccumulateState(NamedTuple):
    mini_step: Any
    acc: Any
    inner: Any


def accumulate(transform: GradientTransformation, every_k: int) -> GradientTransformation:
    """Average ``every_k`` micro-batch gradients, then apply ``transform`` once.

    Until the k-th call the updates are zeros and the inner state is unchanged, so k
    micro-batches of size n give exactly one step on the batch of size k*n (for a mean
    loss). Traceable: under ``jit`` the choice is made with ``where``.
    """
    if not isinstance(every_k, int) or every_k < 1:
        raise ValueError(f"accumulate: expected every_k as an int >= 1, got {every_k!r}.")

    def init(params: Any) -> AccumulateState:
        return AccumulateState(
            _count_like(), tree_map(fnp.zeros_like, params), transform.init(params)
        )

    def update(grads: Any, state: AccumulateState, params: Any = None) -> tuple[Any, Any]:
        _check_structure(
            "accumulate.update", state.acc, grads, "gradients vs accumulated gradients"
        )
        acc = tree_map(lambda a, g: a + g, state.acc, grads)
        step = state.mini_step + np.int32(1)
        concrete = core.concrete_or_none(step)
        if concrete is not None:  # eager: decide in Python, compute only what is needed
            if int(concrete) < every_k:
                zeros = tree_map(fnp.zeros_like, grads)
                return zeros, AccumulateState(step, acc, state.inner)
            mean = tree_map(lambda a: a / every_k, acc)
            updates, inner = transform.update(mean, state.inner, params)
            return updates, AccumulateState(_count_like(), tree_map(fnp.zeros_like, acc), inner)
        emit = step >= every_k
        mean = tree_map(lambda a: a / every_k, acc)
        new_updates, new_inner = transform.update(mean, state.inner, params)
        updates = tree_map(lambda u: fnp.where(emit, u, fnp.zeros_like(u)), new_updates)
        inner = tree_map(lambda n, o: fnp.where(emit, n, o), new_inner, state.inner)
        acc = tree_map(lambda a: fnp.where(emit, fnp.zeros_like(a), a), acc)
        return updates, AccumulateState(fnp.where(emit, np.int32(0), step), acc, inner)

    return GradientTransformation(init, update)


# ---------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------


def constant_schedule(value: float) -> Schedule:
    """A schedule that returns ``value`` at every step (as ``optax.constant_schedule``)."""
    return lambda step: value


def linear_schedule(init_value: float, end_value: float, transition_steps: int) -> Schedule:
    """Linear from ``init_value`` to ``end_value`` over ``transition_steps``, then flat."""

    def schedule(step: Any) -> Any:
        frac = fnp.clip(fnp.astype(step, np.float64) / max(transition_steps, 1), 0.0, 1.0)
        return init_value + (end_value - init_value) * frac

    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over ``decay_steps``."""

    def schedule(step: Any) -> Any:
        frac = fnp.clip(fnp.astype(step, np.float64) / max(decay_steps, 1), 0.0, 1.0)
        cos = 0.5 * (1.0 + fnp.cos(math.pi * frac))
        return init_value * ((1.0 - alpha) * cos + alpha)

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float,
    peak_value: float,
    warmup_steps: int,
    decay_steps: int,
    end_value: float = 0.0,
) -> Schedule:
    """Linear warmup to ``peak_value``, then cosine decay to ``end_value``."""
    warm = linear_schedule(init_value, peak_value, warmup_steps)
    alpha = end_value / peak_value if peak_value else 0.0
    decay = cosine_decay_schedule(peak_value, max(decay_steps - warmup_steps, 1), alpha)

    def schedule(step: Any) -> Any:
        return fnp.where(step < warmup_steps, warm(step), decay(step - warmup_steps))

    return schedule


__all__ = [
    "AccumulateState",
    "EmptyState",
    "GradientTransformation",
    "ScaleByAdamState",
    "ScaleByRmsState",
    "ScaleByScheduleState",
    "TraceState",
    "accumulate",
    "adam",
    "adamw",
    "add_decayed_weights",
    "apply_updates",
    "chain",
    "clip_by_global_norm",
    "constant_schedule",
    "cosine_decay_schedule",
    "global_norm",
    "identity",
    "linear_schedule",
    "rmsprop",
    "scale",
    "scale_by_adam",
    "scale_by_learning_rate",
    "scale_by_rms",
    "sgd",
    "trace",
    "warmup_cosine_decay_schedule",
]
