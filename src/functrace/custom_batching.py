"""functrace.custom_batching: a function's own rule under ``vmap`` (as
``jax.custom_batching``): ``custom_vmap`` and ``sequential_vmap``.

A ``custom_vmap`` function is traced to a jaxpr and bound as ``custom_vmap_call``,
whose impl runs that jaxpr (and ``jit`` inlines it); only ``vmap`` reads the rule. Its
batching rule calls ``rule(axis_size, in_batched, *args)`` with the batched arguments'
batch axes moved to the front, and takes the rule's ``(out, out_batched)``.

Derivatives, as in JAX: forward mode runs the JVP of the function, and under ``vmap``
the JVP of the rule (``jvp(vmap(f))`` differentiates the rule's own operations; the
tangent call of ``vmap(jvp(f))`` runs the rule's JVP). JAX has no reverse mode for
``custom_vmap``; functrace's tangent call transposes as the function's own VJP, so
``grad(f)`` and ``vmap(grad(f))`` work (the rule still computes the batched primal),
and ``grad(vmap(f))`` differentiates the rule, as in JAX. To give reverse mode a rule
of its own, wrap the function in ``custom_vjp`` as well (outside ``custom_vmap``).

>>> import functrace as ft, functrace.numpy as fnp
>>> @custom_vmap
... def f(x, y):
...     return x + y
>>> @f.def_vmap
... def f_rule(axis_size, in_batched, xs, ys):
...     return xs * ys, True
>>> ft.vmap(f)(fnp.arange(3.0), fnp.arange(1.0, 4.0))
Array([0., 2., 6.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace import lax as _lax
from functrace.core import Primitive, ShapedArray, describe_fun
from functrace.custom_derivatives._common import (
    _call_closed,
    _close_over_consts,
    _resolve_kwargs,
    _signature,
    _trace_flat,
)
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr
from functrace.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)


class custom_vmap:
    """``fun`` with its own rule under ``vmap`` (JAX's ``jax.custom_batching.custom_vmap``).

    Define the rule with :meth:`def_vmap`. Outside ``vmap`` the function runs as
    written. Unlike JAX's, reverse mode works: it differentiates the function (see the
    module docstring)."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        if not callable(fun):
            raise TypeError(f"custom_vmap: expected a callable, got {type(fun).__name__}.")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., Any]:
        """Set the rule: ``vmap_rule(axis_size, in_batched, *args)``, where
        ``in_batched`` is a list with a pytree of booleans per argument (whether each
        leaf is batched) and each batched leaf has its batch axis first, returns
        ``(out, out_batched)``: the batched output and a pytree of booleans of the
        output's structure. Returns the rule unchanged (usable as a decorator)."""
        if not callable(vmap_rule):
            raise TypeError(
                f"custom_vmap.def_vmap: expected a callable rule, got {type(vmap_rule).__name__}."
            )
        self.vmap_rule = vmap_rule
        core.rules_changed()  # eager programs recorded with the old rule are stale
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = describe_fun(self.fun)
        if self.vmap_rule is None:
            raise AttributeError(
                f"custom_vmap: no vmap rule defined for {name}; define one with def_vmap."
            )
        if kwargs:
            args = _resolve_kwargs("custom_vmap", self.fun, _signature(self.fun), args, kwargs)
        leaves, in_tree = tree_flatten(args)
        for x in leaves:
            core.get_aval(x)  # a clear error for a non-array leaf
        closed, out_tree = _trace_flat(
            lambda *xs: self.fun(*tree_unflatten(in_tree, list(xs))),
            leaves,
            f"custom_vmap function {name}",
        )
        n_consts = len(closed.consts)
        call = _close_over_consts(closed)
        rule = _UserRule(self.vmap_rule, in_tree, out_tree, closed.out_avals, name)
        outs = custom_vmap_call_p.bind(
            *closed.consts, *leaves, call_jaxpr=call, rule=rule, n_consts=n_consts
        )
        return tree_unflatten(out_tree, outs)


def _check_batched_out(
    what: str, out: Any, out_batched: Any, out_tree: Any, avals: Sequence[ShapedArray], size: int
) -> tuple[list[Any], list[bool]]:
    """The rule's flat outputs and which are batched, checked against the function's
    output structure and types."""
    flat, tree = tree_flatten(out)
    flat_b, tree_b = tree_flatten(out_batched)
    if tree != tree_b:
        raise ValueError(
            f"custom_vmap: expected the rule {what} to return out_batched of the "
            f"structure of its output {tree}, got {tree_b}."
        )
    if tree != out_tree:
        raise ValueError(
            f"custom_vmap: expected the rule {what} to return an output of the "
            f"function's structure {out_tree}, got {tree}."
        )
    for i, (x, b, a) in enumerate(zip(flat, flat_b, avals)):
        if not isinstance(b, bool):
            raise TypeError(
                f"custom_vmap: expected out_batched of the rule {what} to hold bools, got "
                f"{b!r} for output {i}."
            )
        got = core.get_aval(x)
        want = ((size,) if b else ()) + a.shape
        if got.shape != want or got.dtype != a.dtype:
            raise ValueError(
                f"custom_vmap: expected the rule {what} to return output {i} of type "
                f"{a.dtype}{list(want)} ({'batched' if b else 'not batched'}, over "
                f"{size} examples), got {got.str_short()}."
            )
    return flat, list(flat_b)


class _UserRule:
    """The user's rule on flat values: ``(size, in_batched, *leaves) -> (outs, out_batched)``."""

    __slots__ = ("rule", "in_tree", "out_tree", "out_avals", "__name__")

    def __init__(self, rule: Any, in_tree: Any, out_tree: Any, out_avals: Any, fname: str) -> None:
        self.rule, self.in_tree, self.out_tree = rule, in_tree, out_tree
        self.out_avals = list(out_avals)
        self.__name__ = f"{getattr(rule, '__name__', 'rule')} of {fname}"

    def __call__(
        self, size: int, in_batched: Sequence[bool], *leaves: Any
    ) -> tuple[list[Any], list[bool]]:
        args = tree_unflatten(self.in_tree, list(leaves))
        batched = tree_unflatten(self.in_tree, list(in_batched))
        res = self.rule(size, list(batched), *args)
        if not isinstance(res, tuple) or len(res) != 2:
            raise TypeError(
                f"custom_vmap: expected the rule {self.__name__} to return a pair "
                f"(out, out_batched), got {type(res).__name__}."
            )
        return _check_batched_out(
            self.__name__, res[0], res[1], self.out_tree, self.out_avals, size
        )

    def __repr__(self) -> str:
        return self.__name__


class _JvpRule:
    """The rule of a tangent call (primals and tangents in, tangents out): the JVP of
    ``rule``, with each argument batched where its primal or its tangent is."""

    __slots__ = ("rule", "out_avals", "__name__")

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        self.out_avals = [ad.tangent_aval(a) for a in rule.out_avals]
        self.__name__ = f"jvp of {rule.__name__}"

    def __call__(
        self, size: int, in_batched: Sequence[bool], *args: Any
    ) -> tuple[list[Any], list[bool]]:
        k = len(args) // 2
        either = [a or b for a, b in zip(in_batched[:k], in_batched[k:])]
        vals = [
            batching.broadcast_batch(x, size, 0) if e and not b else x
            for x, b, e in zip(args, in_batched, either + either)
        ]
        box: list[list[bool]] = []

        def primal(*ps: Any) -> list[Any]:
            outs, out_batched = self.rule(size, either, *ps)
            box.append(out_batched)
            return outs

        _, tangents = ad.jvp_flat(primal, vals[:k], vals[k:], origin=self.__name__)
        return [ad.instantiate(t) for t in tangents], box[-1]

    def __repr__(self) -> str:
        return self.__name__


def _impl(*args: Any, call_jaxpr: ClosedJaxpr, rule: Any, n_consts: int) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _abstract_eval(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, rule: Any, n_consts: int
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _batch(
    vals: list[Any], bdims: list[Any], *, call_jaxpr: ClosedJaxpr, rule: Any, n_consts: int
) -> tuple[list[Any], list[Any]]:
    # the rule, on the arguments with their batch axes first
    if any(d is not None for d in bdims[:n_consts]):
        raise ValueError(
            f"custom_vmap: expected the function of the rule {rule.__name__} to close over "
            f"no value that vmap batches, got one. Pass that value as an argument."
        )
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, bdims) if d is not None)
    args = [v if d in (None, 0) else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
    outs, out_batched = rule(size, [d is not None for d in bdims[n_consts:]], *args[n_consts:])
    return list(outs), [0 if b else None for b in out_batched]


def _jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, call_jaxpr: ClosedJaxpr, rule: Any,
    n_consts: int,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    # The primal is the call itself (a vmap around still runs the rule); the tangent a
    # call of the function's JVP whose rule is the rule's JVP (see the module docstring).
    if any(type(t) is not Zero for t in tangents[:n_consts]):
        raise NotImplementedError(
            f"custom_vmap: expected the function of the rule {rule.__name__} to close "
            f"over no value being differentiated, got a closure over a traced value. "
            f"Pass that value as an argument instead."
        )
    outs = custom_vmap_call_p.bind(*primals, call_jaxpr=call_jaxpr, rule=rule, n_consts=n_consts)
    consts, ps = list(primals[:n_consts]), list(primals[n_consts:])
    ts = [ad.instantiate(t) for t in tangents[n_consts:]]

    def tangent_fn(*pt: Any) -> list[Any]:
        k = len(pt) // 2
        _, touts = ad.jvp_flat(
            lambda *p: _call_closed(call_jaxpr, [*consts, *p]), pt[:k], pt[k:],
            origin=f"jvp of {rule.__name__}",
        )  # fmt: skip
        return [ad.instantiate(t) for t in touts]

    avals = [core.get_aval(x).update() for x in ps + ts]
    traced, _ = trace_to_jaxpr(tangent_fn, avals, origin=f"jvp of {rule.__name__}")
    touts = custom_vmap_call_p.bind(
        *traced.consts, *ps, *ts, call_jaxpr=_close_over_consts(traced), rule=_JvpRule(rule),
        n_consts=len(traced.consts),
    )  # fmt: skip
    return outs, touts


def _transpose(
    cts: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr, rule: Any, n_consts: int
) -> list[Any]:
    # A tangent call is linear in its tangents: the transpose of its function there.
    undefined = [ad.is_undefined_primal(a) for a in args]
    known = [a for a, u in zip(args, undefined) if not u]

    def linear(*xs: Any) -> list[Any]:
        it, kt = iter(xs), iter(known)
        return _call_closed(call_jaxpr, [next(it) if u else next(kt) for u in undefined])

    zeros = [ad.zeros_like_aval(a.aval) for a, u in zip(args, undefined) if u]
    _, lin, _ = ad.linearize_flat(linear, zeros, origin=f"transpose of {rule.__name__}")
    avals = call_jaxpr.out_avals
    cts_in = iter(lin.transpose([ad.instantiate(c) if type(c) is not Zero else
                                 ad.zeros_like_aval(ad.tangent_aval(a))
                                 for c, a in zip(cts, avals)]))  # fmt: skip
    return [next(cts_in) if u else None for u in undefined]


core.impl_rules[custom_vmap_call_p] = _impl
core.abstract_eval_rules[custom_vmap_call_p] = _abstract_eval
batching.batching_rules[custom_vmap_call_p] = _batch
ad.jvp_rules[custom_vmap_call_p] = _jvp
ad.transpose_rules[custom_vmap_call_p] = _transpose
ad.linear_primitives.add(custom_vmap_call_p)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a :class:`custom_vmap` whose rule runs it on one example at a time
    (``lax.map`` over the batched arguments, the unbatched ones shared), for functions
    that cannot take a batch (JAX's ``jax.custom_batching.sequential_vmap``).

    >>> import functrace as ft, functrace.numpy as fnp
    >>> g = sequential_vmap(lambda x: x + 1)
    >>> ft.vmap(g)(fnp.arange(3))
    Array([1, 2, 3])
    """
    fv = custom_vmap(f)

    @fv.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        batched = tree_map(lambda b, x: x if b else None, in_batched, list(args))
        shared = tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def one(xs: Any) -> Any:
            return fv(*tree_map(lambda b, x, y: x if b else y, in_batched, xs, shared))

        out = _lax.map(one, batched)
        return out, tree_map(lambda _: True, out)

    return fv
