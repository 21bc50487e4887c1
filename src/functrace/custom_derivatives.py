"""User-defined derivative rules: ``custom_jvp``, ``custom_vjp`` and ``grad_hook``.

A call of a ``custom_jvp``/``custom_vjp`` function on traced values binds one
primitive whose params hold the function's jaxpr (traced on the argument types)
and the user's rules. Evaluating it runs the jaxpr; the JVP interpreter calls the
user's rule instead of differentiating the jaxpr. For ``custom_vjp`` the JVP rule
runs ``fwd`` and emits a linear ``custom_lin`` equation whose transpose is ``bwd``,
so reverse mode (linearize + transpose) calls ``bwd`` with the residuals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer, describe_fun
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.tree_util import (
    keystr,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)


class _Callable:
    """A hashable-by-identity wrapper for a Python callable kept in primitive params."""

    __slots__ = ("fn", "__name__")

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.__name__ = name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.__name__


def _trace_flat(
    fun: Callable[..., Any], args: Sequence[Any], origin: str
) -> tuple[ClosedJaxpr, Any]:
    """Trace ``fun`` (flat in, pytree out) on the types of ``args``."""
    box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = tree_flatten(fun(*xs))
        box.append(tree)
        return leaves

    avals = [core.get_aval(a).update() for a in args]
    closed, _ = trace_to_jaxpr(flat_fun, avals, origin=origin)
    return closed, box[-1]


def _call_closed(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


# ---------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_impl(*args: Any, call_jaxpr: ClosedJaxpr, jvp: Any, num_out: int) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _custom_jvp_call_abstract(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, jvp: Any, num_out: int
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


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


core.impl_rules[custom_jvp_call_p] = _custom_jvp_call_impl
core.abstract_eval_rules[custom_jvp_call_p] = _custom_jvp_call_abstract
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


class custom_jvp:
    """A function with a user-defined JVP rule (and so reverse mode by transposition).

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
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(
                f"custom_jvp: expected a JVP rule for "
                f"{describe_fun(self.fun)}, got none. Call .defjvp first."
            )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        if not any(isinstance(x, Tracer) for x in leaves) and not core.dynamic_trace_active():
            return self.fun(*args)
        name = describe_fun(self.fun)

        def flat_fun(*flat: Any) -> Any:
            return self.fun(*full(tree_unflatten(in_tree, flat)))

        closed, out_tree = _trace_flat(flat_fun, leaves, f"custom_jvp of {name}")
        user_jvp = self.jvp

        def flat_jvp(primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
            p_tree = tree_unflatten(in_tree, primals)
            t_tree = tree_unflatten(in_tree, tangents)
            nd = [nondiff[i] for i in sorted(nondiff)]
            res = (
                user_jvp(*nd, tuple(p_tree), tuple(t_tree))
                if nd
                else user_jvp(tuple(p_tree), tuple(t_tree))
            )
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_jvp: expected the JVP rule of {name} to return a pair "
                    f"(primal_out, tangent_out), got {type(res).__name__}."
                )
            out, t_out = res
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree_out = tree_flatten(t_out)
            if o_tree != out_tree or t_tree_out != out_tree:
                bad = out if o_tree != out_tree else t_out
                raise ValueError(
                    structure_mismatch_message(out_tree, bad, f"custom_jvp rule of {name}")
                )
            for t, a in zip(t_leaves, closed.out_avals):
                ta = core.get_aval(t)
                if ta.shape != a.shape:
                    raise ValueError(
                        f"custom_jvp: expected the JVP rule of {name} to return a "
                        f"tangent of shape {a.shape}, got {ta.shape}."
                    )
            return o_leaves, t_leaves

        outs = custom_jvp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            jvp=_Callable(
                _skip_consts(flat_jvp, len(closed.consts)),
                f"jvp_of_{getattr(self.fun, '__name__', 'f')}",
            ),
            num_out=len(closed.out_avals),
        )
        return tree_unflatten(out_tree, outs)


def _close_over_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Turn constants into leading arguments, so tracer constants flow as operands."""
    from functrace.ir import Jaxpr

    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), [])


def _skip_consts(flat_rule: Callable[..., Any], n: int) -> Callable[..., Any]:
    def rule(primals: list[Any], tangents: list[Any]) -> Any:
        for t in tangents[:n]:
            if type(t) is not Zero:
                raise NotImplementedError(
                    "custom_jvp/custom_vjp: expected the function to close over no value "
                    "being differentiated, got a closure over a traced value. Pass that "
                    "value as an argument instead."
                )
        return flat_rule(primals[n:], [ad.instantiate(t) for t in tangents[n:]])

    return rule


def _custom_call_batch(
    vals: list[Any], bdims: list[Any], *, call_jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    # NOTE: under vmap the call is inlined (its jaxpr is batched like any code), so a
    # grad *outside* a vmap differentiates the function itself, not the custom rule.
    # grad inside vmap (per-example gradients) still uses the rule.
    size = batching.batch_size(vals, bdims)
    return batching.vmap_flat(lambda *a: _call_closed(call_jaxpr, a), size, vals, bdims)


batching.batching_rules[custom_jvp_call_p] = _custom_call_batch


# ---------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_vjp_call_impl(
    *args: Any, call_jaxpr: ClosedJaxpr, fwd: Any, bwd: Any, num_consts: int
) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _custom_vjp_call_abstract(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, fwd: Any, bwd: Any, num_consts: int
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _custom_vjp_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    fwd: Any,
    bwd: Any,
    num_consts: int,
) -> Any:
    for t in tangents[:num_consts]:
        if type(t) is not Zero:
            raise NotImplementedError(
                "custom_vjp: expected the function to close over no value being "
                "differentiated, got a closure over a traced value. Pass it as an argument."
            )
    outs, res = fwd(list(primals[num_consts:]))
    lin_tangents = [ad.instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(ad.tangent_aval(core.get_aval(o)) for o in outs)
    t_outs = custom_lin_p.bind(*res, *lin_tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, t_outs


def _custom_lin_impl(*args: Any, num_res: int, bwd: Any, out_avals: Any) -> Any:
    raise TypeError(
        f"jvp: expected a function differentiable in forward mode, got the custom_vjp function "
        f"{bwd.__name__.removeprefix('bwd_of_')}, which defines only reverse mode. Use "
        f"grad/vjp, or define it with custom_jvp to get both modes."
    )


def _custom_lin_transpose(
    cts: Sequence[Any], *args: Any, num_res: int, bwd: Any, out_avals: Any
) -> list[Any]:
    res = args[:num_res]
    cts = [ad.instantiate(c) for c in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


core.impl_rules[custom_vjp_call_p] = _custom_vjp_call_impl
core.abstract_eval_rules[custom_vjp_call_p] = _custom_vjp_call_abstract
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
core.impl_rules[custom_lin_p] = _custom_lin_impl
core.abstract_eval_rules[custom_lin_p] = lambda *a, num_res, bwd, out_avals: list(out_avals)
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
ad.linear_primitives.add(custom_lin_p)
batching.batching_rules[custom_vjp_call_p] = _custom_call_batch


class custom_vjp:
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, ct)`` returns a
    tuple with one cotangent per differentiable argument.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.custom_vjp
    ... def relu(x):
    ...     return fnp.maximum(x, 0.0)
    >>> def relu_fwd(x):
    ...     return relu(x), x
    >>> def relu_bwd(x, ct):
    ...     return (ct * (x > 0),)
    >>> relu.defvjp(relu_fwd, relu_bwd)
    >>> ft.grad(lambda x: relu(x).sum())(fnp.array([1.0, -2.0, 3.0]))
    array([1., 0., 1.])
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"custom_vjp: expected fwd and bwd rules for "
                f"{describe_fun(self.fun)}, got none. Call .defvjp first."
            )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)
        if not any(isinstance(x, Tracer) for x in leaves) and not core.dynamic_trace_active():
            return self.fun(*args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        name = describe_fun(self.fun)
        closed, out_tree = _trace_flat(
            lambda *fl: self.fun(*full(tree_unflatten(in_tree, fl))),
            leaves,
            f"custom_vjp of {name}",
        )
        user_fwd, user_bwd = self.fwd, self.bwd
        nd_vals = [nondiff[i] for i in sorted(nondiff)]
        res_tree_box: list[Any] = []
        in_avals = [ad.tangent_aval(core.get_aval(x)) for x in leaves]
        in_paths = [p for p, _ in tree_flatten_with_path(diff_args)[0]]

        def flat_fwd(primals: list[Any]) -> tuple[list[Any], list[Any]]:
            res = user_fwd(*full(tree_unflatten(in_tree, primals)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_vjp: expected fwd of {name} to return a pair "
                    f"(output, residuals), got {type(res).__name__}."
                )
            out, residuals = res
            o_leaves, o_tree = tree_flatten(out)
            if o_tree != out_tree:
                raise ValueError(
                    structure_mismatch_message(out_tree, out, f"custom_vjp fwd of {name}")
                )
            r_leaves, r_tree = tree_flatten(residuals)
            res_tree_box.append(r_tree)
            return o_leaves, r_leaves

        def flat_bwd(res: list[Any], cts: list[Any]) -> list[Any]:
            residuals = tree_unflatten(res_tree_box[-1], res)
            ct = tree_unflatten(out_tree, cts)
            got = user_bwd(*nd_vals, residuals, ct)
            if not isinstance(got, (tuple, list)):
                raise TypeError(
                    f"custom_vjp: expected bwd of {name} to return a tuple with one cotangent "
                    f"per differentiable argument ({len(diff_args)}), got "
                    f"{type(got).__name__}. Wrap a single cotangent as (ct,)."
                )
            got = tuple(got)
            if len(got) != len(diff_args):
                raise ValueError(
                    f"custom_vjp: expected bwd of {name} to return {len(diff_args)} "
                    f"cotangent(s), one per differentiable argument, got {len(got)}."
                )
            g_leaves, g_tree = tree_flatten(got, is_leaf=lambda x: x is None)
            if g_tree != in_tree:
                raise ValueError(
                    structure_mismatch_message(in_tree, got, f"custom_vjp bwd of {name}")
                )
            out = []
            for g, a, p in zip(g_leaves, in_avals, in_paths):
                if g is None:
                    out.append(Zero(a))
                    continue
                ga = core.get_aval(g)
                if ga.shape != a.shape:
                    raise ValueError(
                        f"custom_vjp: expected bwd of {name} to return a cotangent of shape "
                        f"{a.shape} for argument {keystr(p)}, got shape {ga.shape}."
                    )
                out.append(g)
            return out

        outs = custom_vjp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            fwd=_Callable(flat_fwd, f"fwd_of_{getattr(self.fun, '__name__', 'f')}"),
            bwd=_Callable(flat_bwd, f"bwd_of_{getattr(self.fun, '__name__', 'f')}"),
            num_consts=len(closed.consts),
        )
        return tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------
# grad_hook
# ---------------------------------------------------------------------------

grad_hook_p = Primitive("grad_hook")
hook_call_p = Primitive("hook_call")


def _hook_call_impl(ct: Any, *, fn: Any) -> Any:
    out = fn(ct)
    return ct if out is None else out


def _grad_hook_transpose(ct: Any, x: Any, *, fn: Any) -> list[Any]:
    if isinstance(ct, Tracer) and core.concrete_or_none(ct) is None:
        # Abstract (under jit): run the hook when the compiled code runs.
        return [hook_call_p.bind(ct, fn=fn)]
    out = fn(ct)
    if out is None:
        return [ct]
    if core.get_aval(out).shape != core.get_aval(ct).shape:
        raise ValueError(
            f"grad_hook: expected the hook {fn.__name__} to return a cotangent "
            f"of shape {core.get_aval(ct).shape} or None, got shape "
            f"{core.get_aval(out).shape}."
        )
    return [out]


core.impl_rules[grad_hook_p] = lambda x, *, fn: x
core.abstract_eval_rules[grad_hook_p] = lambda x, *, fn: x
ad.deflinear(grad_hook_p, _grad_hook_transpose)
core.impl_rules[hook_call_p] = _hook_call_impl
core.abstract_eval_rules[hook_call_p] = lambda x, *, fn: x
ad.defjvp_zero(hook_call_p)
batching.defvectorized(grad_hook_p)
batching.defvectorized(hook_call_p)


def grad_hook(x: Any, fn: Callable[[Any], Any]) -> Any:
    """Identity on ``x``; in reverse mode calls ``fn(cotangent)`` and, if it returns an
    array, uses it as the new cotangent (print, clip, monitor gradients).

    >>> import functrace as ft
    >>> seen = []
    >>> f = lambda x: ft.grad_hook(x * 2.0, lambda ct: seen.append(float(ct))) ** 2
    >>> float(ft.grad(f)(3.0)), seen
    (24.0, [12.0])
    """
    from functrace.tree_util import tree_map

    wrapped = fn if isinstance(fn, _Callable) else _Callable(fn, getattr(fn, "__name__", "hook"))
    return tree_map(lambda v: grad_hook_p.bind(v, fn=wrapped) if isinstance(v, Tracer) else v, x)


__all__ = ["custom_jvp", "custom_vjp", "grad_hook"]
