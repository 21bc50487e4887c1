"""``custom_jvp``: a function with a user-defined JVP rule; the ``custom_jvp_call``
primitive and its rules (the JVP rule calls the user's rule; batching gives a new call
whose rule runs the user's rule per example)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, Tracer, describe_fun, describe_value
from functrace.custom_derivatives._common import (
    _at_front,
    _batch_custom_call,
    _Callable,
    _check_primal_types,
    _check_rule_flag,
    _check_tangent_types,
    _close_over_consts,
    _differentiated_directly,
    _OutBatch,
    _per_example,
    _register_custom_call,
    _resolve_kwargs,
    _signature,
    _skip_consts,
    _top_trace,
    _trace_flat,
    forward_attr,
)
from functrace.custom_derivatives._symbolic import from_user, to_user
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.ir import ClosedJaxpr, Jaxpr
from functrace.tree_util import structure_mismatch_message, tree_flatten, tree_unflatten

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    jvp: Any,
    num_out: int,
) -> Any:
    outs, t_outs = jvp(list(primals), list(tangents))
    return outs, t_outs


class custom_jvp:
    """A function with a user-defined JVP rule (and so reverse mode by transposition).

    The rule is used under every transform and order, ``vmap`` included:
    ``grad(vmap(f))`` and ``jvp(vmap(f))`` run the rule on each example (batched), as
    ``vmap(grad(f))`` does.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.custom_jvp
    ... def softplus(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return softplus(x), t * ft.lax.logistic(x)
    >>> float(ft.grad(softplus)(0.0))
    0.5
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._sig = _signature(fun)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    __getattr__ = forward_attr  # the wrapped function's attributes (a custom_vmap's def_vmap)

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``.

        With ``symbolic_zeros=True`` the tangent of an argument that is not being
        differentiated reaches the rule as a :class:`SymbolicZero` (else as an array of
        zeros), and the rule may return ``SymbolicZero``s for output tangents (as in JAX;
        they are accepted either way). The rule is not called when no argument is
        differentiated."""
        self.symbolic_zeros = _check_rule_flag(
            "custom_jvp.defjvp", "symbolic_zeros", symbolic_zeros
        )
        self.jvp = jvp
        core.rules_changed()  # eager programs recorded with the old rule are stale
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """Register the JVP as one function per argument: ``fn(t, ans, *primals)`` is
        argument ``i``'s contribution to the output tangent (``t`` its tangent, ``ans``
        the output); ``None`` marks an argument that does not affect the tangent.

        >>> import functrace as ft, functrace.numpy as fnp
        >>> @ft.custom_jvp
        ... def f(x, y):
        ...     return fnp.sin(x) * y
        >>> f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, lambda t, ans, x, y: fnp.sin(x) * t)
        >>> float(ft.grad(f, argnums=1)(0.0, 2.0))
        0.0
        """
        if self.nondiff_argnums:
            raise TypeError(
                f"custom_jvp.defjvps: expected a function without nondiff_argnums, got "
                f"{describe_fun(self.fun)} with nondiff_argnums={self.nondiff_argnums}. "
                f"Use defjvp."
            )
        from functrace.tree_util import tree_map

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            if len(tangent_fns) != len(primals):
                raise TypeError(
                    f"custom_jvp.defjvps: expected one tangent function (or None) per "
                    f"argument of {describe_fun(self.fun)} ({len(primals)}), got "
                    f"{len(tangent_fns)}."
                )
            ans = self(*primals)
            t_out: Any = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                part = fn(t, ans, *primals)
                t_out = part if t_out is None else tree_map(lambda a, b: a + b, t_out, part)
            if t_out is None:
                from functrace.numpy import zeros_like

                t_out = tree_map(zeros_like, ans)
            return ans, t_out

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(
                f"custom_jvp: expected a JVP rule for "
                f"{describe_fun(self.fun)}, got none. Call .defjvp first."
            )
        args = _resolve_kwargs("custom_jvp", self.fun, self._sig, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        if not any(isinstance(x, Tracer) and not x.recorded for x in leaves) and not (
            core.dynamic_trace_active()
        ):  # concrete values (also those of an eager run being recorded): call it
            return self.fun(*args)
        name = describe_fun(self.fun)
        user_jvp = self.jvp
        symbolic = self.symbolic_zeros
        # (output tree, output avals) the rule must match: the traced function's, or
        # (differentiating eagerly, where the function is not traced) the rule's own.
        expect: list[Any] = []
        rule_tree: list[Any] = []  # the output tree the last rule call gave

        def flat_jvp(primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
            p_tree = tree_unflatten(in_tree, primals)
            t_tree = tree_unflatten(in_tree, [to_user(t, symbolic) for t in tangents])
            nd = [nondiff[i] for i in sorted(nondiff)]
            res = (
                user_jvp(*nd, tuple(p_tree), tuple(t_tree))
                if nd
                else user_jvp(tuple(p_tree), tuple(t_tree))
            )
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_jvp: expected the JVP rule of {name} to return a pair "
                    f"(primal_out, tangent_out), got {describe_value(res)}."
                )
            out, t_out = res
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree_out = tree_flatten(t_out)
            t_leaves = [from_user(t) for t in t_leaves]
            rule_tree[:] = [o_tree]
            if expect:
                out_tree, out_avals = expect
            else:
                out_tree, out_avals = o_tree, [core.get_aval(o) for o in o_leaves]
            if o_tree != out_tree or t_tree_out != out_tree:
                bad = out if o_tree != out_tree else t_out
                raise ValueError(
                    structure_mismatch_message(out_tree, bad, f"custom_jvp rule of {name}")
                )
            if expect:
                _check_primal_types("custom_jvp", "JVP rule", name, out, o_leaves, out_avals)
            _check_tangent_types(name, t_out, t_leaves, out_avals)
            return o_leaves, t_leaves

        top = _top_trace(leaves)
        if _differentiated_directly(top):
            # Forward mode is the innermost transform: run the rule on the primals, as
            # the JVP of the custom call would, without tracing the function. Primals
            # stay concrete under eager jvp/grad, so the function and the rule may use
            # Python control flow on them (as in JAX).
            return self._jvp_direct(top, args, leaves, in_tree, flat_jvp, rule_tree, name)

        def flat_fun(*flat: Any) -> Any:
            return self.fun(*full(tree_unflatten(in_tree, flat)))

        closed, out_tree = _trace_flat(flat_fun, leaves, f"custom_jvp of {name}")
        expect[:] = [out_tree, closed.out_avals]

        outs = custom_jvp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            jvp=_Callable(
                _skip_consts(flat_jvp, len(closed.consts)),
                f"jvp_of_{getattr(self.fun, '__name__', 'f')}",
                (user_jvp,),
            ),
            num_out=len(closed.out_avals),
        )
        return tree_unflatten(out_tree, outs)

    def _jvp_direct(
        self,
        top: ad.JVPTrace,
        args: tuple[Any, ...],
        leaves: list[Any],
        in_tree: Any,
        flat_jvp: Callable[..., Any],
        rule_tree: list[Any],
        name: str,
    ) -> Any:
        mine = [isinstance(x, Tracer) and x._trace is top for x in leaves]
        primals = [x.primal if m else x for x, m in zip(leaves, mine)]
        tangents = [
            x.tangent if m else Zero(ad.tangent_aval(core.get_aval(x)))
            for x, m in zip(leaves, mine)
        ]
        if self.symbolic_zeros and all(type(t) is Zero for t in tangents):
            # Nothing is differentiated: as in JAX, the function runs, not the rule.
            diff = iter(tree_unflatten(in_tree, primals))
            nd = set(self.nondiff_argnums)
            return self(*(a if i in nd else next(diff) for i, a in enumerate(args)))
        outs, t_outs = top.call_jvp_rule(flat_jvp, primals, tangents)
        for v in [*outs, *t_outs]:
            if isinstance(v, Tracer) and v._trace.level >= top.level:
                raise NotImplementedError(
                    f"custom_jvp: expected the JVP rule of {name} to close over no value "
                    f"being differentiated, got a closure over a traced value. Pass that "
                    f"value as an argument instead."
                )
        return tree_unflatten(rule_tree[0], [ad.JVPTracer(top, p, t) for p, t in zip(outs, t_outs)])


def _batched_jvp(
    jvp: Any,
    trace: batching.BatchTrace,
    dims: list[int | None],
    state: _OutBatch,
    primals: list[Any],
    tangents: list[Any],
) -> tuple[list[Any], list[Any]]:
    """The JVP rule of a batched custom_jvp call: the user's rule per example."""
    size, n, num_out = trace.axis_size, len(primals), len(state.batched)
    live = [type(t) is not Zero for t in tangents]
    # A symbolic zero stays symbolic: each example gets a Zero of its own type.
    zeros = [
        None if m else Zero(t.aval if d is None else t.aval.update(shape=t.aval.shape[1:]))
        for t, m, d in zip(tangents, live, dims)
    ]

    out_zero: list[list[bool]] = []  # which tangents the rule gave as symbolic zeros

    def one(*xs: Any) -> list[Any]:
        it = iter(xs[n:])
        ts = [next(it) if m else z for m, z in zip(live, zeros)]
        outs, t_outs = jvp(list(xs[:n]), ts)
        out_zero.append([type(t) is Zero for t in t_outs])
        return [*outs, *(t for t in t_outs if type(t) is not Zero)]

    vals, vdims = _per_example(
        trace,
        one,
        [*primals, *(t for t, m in zip(tangents, live) if m)],
        [*dims, *(d for d, m in zip(dims, live) if m)],
        f"vmap of the JVP rule of {state.name}",
    )
    od = vdims[:num_out]
    nz_vals, nz_dims = iter(vals[num_out:]), iter(vdims[num_out:])
    t_vals = [None if z else next(nz_vals) for z in out_zero[-1]]
    td = [None if z else next(nz_dims) for z in out_zero[-1]]
    batched = state.widen([a is not None or b is not None for a, b in zip(od, td)], "JVP rule")
    outs = [_at_front(o, d, b, size) for o, d, b in zip(vals[:num_out], od, batched)]
    t_outs = [
        Zero(ad.tangent_aval(core.get_aval(o))) if t is None else _at_front(t, d, b, size)
        for o, t, d, b in zip(outs, t_vals, td, batched)
    ]
    return outs, t_outs


def _custom_jvp_call_batch(
    vals: list[Any],
    bdims: list[Any],
    *,
    trace: batching.BatchTrace,
    call_jaxpr: ClosedJaxpr,
    jvp: Any,
    num_out: int,
) -> tuple[list[Any], list[Any]]:
    def per_example(rule: Any, dims: list[int | None], state: _OutBatch) -> Any:
        return functools.partial(_batched_jvp, rule, trace, dims, state)

    return _batch_custom_call(
        custom_jvp_call_p,
        "custom_jvp",
        "jvp",
        per_example,
        vals,
        bdims,
        trace,
        call_jaxpr,
        {"jvp": jvp, "num_out": num_out},
    )


_register_custom_call(custom_jvp_call_p, _custom_jvp_call_jvp, _custom_jvp_call_batch)


def _custom_jvp_call_transpose(
    cts: Sequence[Any], *invals: Any, call_jaxpr: ClosedJaxpr, jvp: Any, num_out: int
) -> list[Any]:
    """The transpose of a call on the linear side of reverse mode: a JVP rule that
    applies a linear custom_jvp function to its tangents (``f(t)``) puts the call on the
    tape, and its transpose is that of the function's jaxpr (the rule is not needed
    there), as in JAX. A function that is not linear in those operands is an error of
    its transposition (as for any non-linear use of tangents in a JVP rule)."""
    j = call_jaxpr.jaxpr
    lin = [ad.is_undefined_primal(x) for x in invals]
    known = [x for x, m in zip(invals, lin) if not m]
    view = Jaxpr(
        (*j.constvars, *(v for v, m in zip(j.invars, lin) if not m)),
        tuple(v for v, m in zip(j.invars, lin) if m),
        j.eqns,
        j.outvars,
    )
    got = iter(ad.backward_pass(view, [*call_jaxpr.consts, *known], cts, forward_known=True))
    return [next(got) if m else None for m in lin]


ad.transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose
ad.linear_primitives.add(custom_jvp_call_p)  # a call: as linear as its function
