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

Run eagerly on float arrays, an update that works parameter by parameter (every
building block but ``clip_by_global_norm`` and ``accumulate``, and each run of them in a
``chain``: all of ``adam``, say) runs as one jitted call, one fused kernel per parameter
instead of a dozen NumPy passes (``config.fused_updates``; see ``functrace._leafmap``),
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


def _cast_like(value: Any, like: Any) -> Any:
    dt = core.dtype_of(like)
    return fnp.astype(value, dt) if core.dtype_of(value) != dt else value


class _Leafwise(NamedTuple):
    """The update of a transformation that works parameter by parameter, in a form
    :func:`chain` can fuse with its neighbours' (one kernel per parameter for a whole
    chain such as Adam's).

    ``prepare(grads, state, params) -> (trees, scalars, finish)`` does the per-call work
    on the state (checks, counters, bias corrections): ``trees`` (``n_trees`` trees shaped
    like ``grads``, e.g. the moments) and ``scalars`` (``n_scalars`` values all parameters
    share) are the inputs of ``leaf(g, *tree_leaves, *scalars) -> (g, *outs)``, and
    ``finish(outs)`` builds the new state from the ``n_outs`` output trees."""

    prepare: Callable[[Any, Any, Any], tuple[tuple[Any, ...], tuple[Any, ...], Callable]]
    leaf: Callable[..., tuple[Any, ...]]
    n_trees: int
    n_scalars: int
    n_outs: int


def _leafwise_update(spec: _Leafwise) -> Callable[..., tuple[Any, Any]]:
    """``update(grads, state, params)`` running ``spec`` as one :class:`LeafMap`: fused
    when run eagerly on float arrays (see ``functrace._leafmap``)."""
    leaves = LeafMap(spec.leaf, 1 + spec.n_outs)

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        trees, scalars, finish = spec.prepare(grads, state, params)
        updates, *outs = leaves((grads, *trees), scalars)
        return updates, finish(outs)

    update.leafwise = spec  # type: ignore[attr-defined]  # what chain fuses
    return update


def _same_state(state: Any) -> Callable[[Any], Any]:
    return lambda outs: state


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------


def identity() -> GradientTransformation:
    """Pass gradients through unchanged."""

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return grads, state  # (alone, nothing to compute; in a chain, fused with the rest)

    update.leafwise = _Leafwise(  # type: ignore[attr-defined]
        lambda grads, state, params: ((), (), _same_state(state)), lambda g: (g,), 0, 0, 0
    )
    return GradientTransformation(lambda params: EmptyState(), update)


def scale(step_size: float) -> GradientTransformation:
    """Multiply updates by a constant."""
    spec = _Leafwise(
        lambda grads, state, params: ((), (), _same_state(state)),
        lambda g: (g * step_size,),
        0,
        0,
        0,
    )
    return GradientTransformation(lambda params: EmptyState(), _leafwise_update(spec))


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

    def prepare(grads: Any, state: ScaleByScheduleState, params: Any) -> Any:
        new = ScaleByScheduleState(_incr(state.count))
        return (), (sign * learning_rate(state.count),), lambda outs: new

    def leaf(g: Any, lr: Any) -> tuple[Any]:
        return (g * _cast_like(lr, g),)

    return GradientTransformation(init, _leafwise_update(_Leafwise(prepare, leaf, 0, 1, 0)))


class TraceState(NamedTuple):
    trace: Any


def trace(decay: float, nesterov: bool = False) -> GradientTransformation:
    """Momentum: ``t = decay * t + g``; the update is ``t`` (or ``g + decay * t``)."""

    def init(params: Any) -> TraceState:
        return TraceState(tree_map(fnp.zeros_like, params))

    def prepare(grads: Any, state: TraceState, params: Any) -> Any:
        _check_structure("trace.update", state.trace, grads, "gradients vs momentum state")
        return (state.trace,), (), lambda outs: TraceState(outs[0])

    def leaf(g: Any, t: Any) -> tuple[Any, Any]:
        t = g + decay * t
        return (g + decay * t if nesterov else t), t

    return GradientTransformation(init, _leafwise_update(_Leafwise(prepare, leaf, 1, 0, 1)))


class ScaleByAdamState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> GradientTransformation:
    """Adam's rescaling: bias-corrected first moment over root of second moment."""

    def init(params: Any) -> ScaleByAdamState:
        zeros = tree_map(fnp.zeros_like, params)
        return ScaleByAdamState(_count_like(), zeros, tree_map(fnp.zeros_like, params))

    def prepare(grads: Any, state: ScaleByAdamState, params: Any) -> Any:
        _check_structure("scale_by_adam.update", state.mu, grads, "gradients vs Adam state")
        _check_structure("scale_by_adam.update", state.nu, grads, "gradients vs Adam state")
        count = _incr(state.count)
        t = fnp.astype(count, np.float64)
        bc1 = 1.0 - fnp.power(b1, t)
        bc2 = 1.0 - fnp.power(b2, t)
        return (state.mu, state.nu), (bc1, bc2), lambda outs: ScaleByAdamState(count, *outs)

    def leaf(g: Any, m: Any, v: Any, bc1: Any, bc2: Any) -> tuple[Any, Any, Any]:
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * (g * g)
        return (m / _cast_like(bc1, m)) / (fnp.sqrt(v / _cast_like(bc2, v)) + eps), m, v

    return GradientTransformation(init, _leafwise_update(_Leafwise(prepare, leaf, 2, 2, 2)))


class ScaleByRmsState(NamedTuple):
    nu: Any
    mu: Any


def scale_by_rms(
    decay: float = 0.9, eps: float = 1e-8, centered: bool = False
) -> GradientTransformation:
    """RMSProp's rescaling by a running root mean square of gradients."""

    def init(params: Any) -> ScaleByRmsState:
        return ScaleByRmsState(tree_map(fnp.zeros_like, params), tree_map(fnp.zeros_like, params))

    def prepare(grads: Any, state: ScaleByRmsState, params: Any) -> Any:
        _check_structure("scale_by_rms.update", state.nu, grads, "gradients vs RMSProp state")
        if not centered:
            return (state.nu,), (), lambda outs: ScaleByRmsState(outs[0], state.mu)
        _check_structure("scale_by_rms.update", state.mu, grads, "gradients vs RMSProp state")
        return (state.nu, state.mu), (), lambda outs: ScaleByRmsState(*outs)

    def leaf(g: Any, v: Any, *mu: Any) -> tuple[Any, ...]:
        v = decay * v + (1 - decay) * (g * g)
        if not centered:
            return g / (fnp.sqrt(v) + eps), v
        m = decay * mu[0] + (1 - decay) * g
        return g / (fnp.sqrt(v - m * m) + eps), v, m

    n = 2 if centered else 1
    return GradientTransformation(init, _leafwise_update(_Leafwise(prepare, leaf, n, 0, n)))


def add_decayed_weights(weight_decay: float) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (decoupled weight decay)."""

    def prepare(grads: Any, state: Any, params: Any) -> Any:
        if params is None:
            raise ValueError(
                "add_decayed_weights.update: expected params, got None. Pass "
                "params to update(grads, state, params)."
            )
        _check_structure("add_decayed_weights.update", params, grads, "gradients vs params")
        return (params,), (), _same_state(state)

    spec = _Leafwise(prepare, lambda g, p: (g + weight_decay * p,), 1, 0, 0)
    return GradientTransformation(lambda params: EmptyState(), _leafwise_update(spec))


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


def _chain_leafwise(specs: list[_Leafwise]) -> _Leafwise:
    """The leafwise form of a run of leafwise transformations: their leaf functions in
    turn, each on the updates of the one before (the same operations as one by one)."""
    n_trees = sum(s.n_trees for s in specs)

    def prepare(grads: Any, states: tuple[Any, ...], params: Any) -> Any:
        preps = [s.prepare(grads, st, params) for s, st in zip(specs, states)]

        def finish(outs: list[Any]) -> tuple[Any, ...]:
            new, i = [], 0
            for s, (_, _, fin) in zip(specs, preps):
                new.append(fin(outs[i : i + s.n_outs]))
                i += s.n_outs
            return tuple(new)

        trees = tuple(t for p in preps for t in p[0])
        return trees, tuple(x for p in preps for x in p[1]), finish

    def leaf(g: Any, *args: Any) -> tuple[Any, ...]:
        trees, scalars, outs = args[:n_trees], args[n_trees:], []
        ti = si = 0
        for s in specs:
            g, *o = s.leaf(g, *trees[ti : ti + s.n_trees], *scalars[si : si + s.n_scalars])
            outs += o
            ti, si = ti + s.n_trees, si + s.n_scalars
        return (g, *outs)

    return _Leafwise(
        prepare, leaf, n_trees, sum(s.n_scalars for s in specs), sum(s.n_outs for s in specs)
    )


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply transformations in sequence; the state is the tuple of their states.

    Each run of consecutive transformations that work parameter by parameter (all but
    ``clip_by_global_norm`` and ``accumulate`` here) updates as one: eagerly, one fused
    kernel per parameter for the whole run (see ``functrace._leafmap``)."""
    n = len(transforms)
    # (start, stop, the run's fused update), or (i, i + 1, None): transforms[i] alone
    runs: list[tuple[int, int, Callable[..., tuple[Any, Any]] | None]] = []
    start = 0
    while start < n:
        stop = start
        while stop < n and getattr(transforms[stop].update, "leafwise", None) is not None:
            stop += 1
        # (one alone keeps its own update, fused or not; unless it is the whole chain,
        # whose leafwise form lets an outer chain fuse it: sgd's, say)
        if stop - start > 1 or (stop - start == 1 and n == 1):
            specs = [t.update.leafwise for t in transforms[start:stop]]  # type: ignore[attr-defined]
            runs.append((start, stop, _leafwise_update(_chain_leafwise(specs))))
        else:
            stop = start + 1
            runs.append((start, stop, None))
        start = stop

    def init(params: Any) -> tuple[Any, ...]:
        return tuple(t.init(params) for t in transforms)

    def update(grads: Any, state: tuple[Any, ...], params: Any = None) -> tuple[Any, Any]:
        if not isinstance(state, tuple) or len(state) != n:
            raise ValueError(
                f"chain.update: expected a state tuple of {n} "
                f"entries (from init), got {type(state).__name__}."
            )
        new_states: list[Any] = []
        for start, stop, fused in runs:
            if fused is None:
                grads, s = transforms[start].update(grads, state[start], params)
                new_states.append(s)
            else:
                grads, states = fused(grads, state[start:stop], params)
                new_states += states
        return grads, tuple(new_states)

    if len(runs) == 1 and runs[0][2] is not None:  # wholly leafwise: fusable further
        update.leafwise = runs[0][2].leafwise  # type: ignore[attr-defined]
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
    Array([0.9, 1.9])
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
