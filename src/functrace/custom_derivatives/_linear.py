"""``linear_call``: a function linear in some arguments, with a user-given transpose;
the ``linear_call`` primitive and its rules.

One equation holds the function's jaxpr (``call_jaxpr``, traced on the argument types)
and a thunk that traces the transpose (``transpose``; traced only when reverse mode
needs it). Its operands are the constants both close over, the residual arguments and
the linear arguments. The JVP is the call applied to the tangents of the linear
arguments; the transpose is a ``linear_call`` of the user's transpose whose own transpose
is the function again, so transposing twice gives the function back. Batched, it is a
call of the batched function whose transpose is the batched transpose. ``jit`` inlines
the function's jaxpr, as for the other custom calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer, describe_fun
from functrace.custom_derivatives._common import _call_closed, _Callable, _close_over_consts
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr
from functrace.tree_util import tree_flatten, tree_unflatten

linear_call_p = Primitive("linear_call", multiple_results=True)


def _trace(
    fn: Callable[..., Any], avals: Sequence[ShapedArray], origin: str
) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace flat ``fn`` on ``avals``: the jaxpr with its constants as leading
    arguments, and those constants."""
    closed, _ = trace_to_jaxpr(fn, list(avals), origin=origin)
    return _close_over_consts(closed), list(closed.consts)


def _impl(*args: Any, call_jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _abstract(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **params: Any) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    transpose: Any,
    num_consts: int,
    num_res: int,
    name: str,
) -> tuple[list[Any], list[Any]]:
    k = num_consts + num_res
    if any(type(t) is not Zero and not ad.below_tape(t) for t in tangents[:k]):
        raise TypeError(
            f"linear_call: expected the residual arguments of {name} (and the values it "
            f"closes over) not to be differentiated, got a tangent for one of them. The "
            f"function is linear only in its linear arguments."
        )
    params = dict(
        call_jaxpr=call_jaxpr,
        transpose=transpose,
        num_consts=num_consts,
        num_res=num_res,
        name=name,
    )
    outs = linear_call_p.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents[k:]):
        return outs, [Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
    lin = [ad.instantiate(t) for t in tangents[k:]]
    return outs, linear_call_p.bind(*primals[:k], *lin, **params)


def _transpose(
    cts: Sequence[Any],
    *invals: Any,
    call_jaxpr: ClosedJaxpr,
    transpose: Any,
    num_consts: int,
    num_res: int,
    name: str,
) -> list[Any]:
    k = num_consts + num_res
    if any(ad.is_undefined_primal(x) for x in invals[:k]):
        raise TypeError(
            f"linear_call: expected {name} to be transposed in its linear arguments only, "
            f"got a residual argument that is linear (a tangent passed as a residual)."
        )
    t_jaxpr, t_consts = transpose()
    cts = [ad.instantiate(c) for c in cts]
    consts = list(invals[:num_consts])
    back = _Callable(lambda: (call_jaxpr, consts), f"transpose_of_{transpose.__name__}")
    got = linear_call_p.bind(
        *t_consts,
        *invals[num_consts:k],
        *cts,
        call_jaxpr=t_jaxpr,
        transpose=back,
        num_consts=len(t_consts),
        num_res=num_res,
        name=f"the transpose of {name}",
    )
    return [None] * k + list(got)


def _batched(
    closed: ClosedJaxpr, size: int, dims: Sequence[int | None], origin: str
) -> tuple[ClosedJaxpr, list[Any]]:
    """``closed`` batched over ``dims`` (0 or None), every output batched along axis 0."""

    def run(*xs: Any) -> list[Any]:
        outs, out_dims = batching.vmap_flat(
            lambda *a: _call_closed(closed, a), size, xs, dims, origin=origin
        )
        return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, out_dims)]

    avals = [
        a if d is None else a.update(shape=(size, *a.shape)) for a, d in zip(closed.in_avals, dims)
    ]
    return _trace(run, avals, origin)


def _batch(
    vals: list[Any],
    bdims: list[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    transpose: Any,
    num_consts: int,
    num_res: int,
    name: str,
) -> tuple[list[Any], list[Any]]:
    """The batching rule: the linear arguments and the outputs all get the batch axis
    at 0, so the batched transpose maps batched cotangents to batched cotangents."""
    params = dict(num_consts=num_consts, num_res=num_res, name=name)
    if all(d is None for d in bdims):
        return linear_call_p.bind(*vals, call_jaxpr=call_jaxpr, transpose=transpose, **params), [
            None
        ] * len(call_jaxpr.out_avals)
    size = batching.batch_size(vals, bdims)
    k = num_consts + num_res
    fixed = [v if d in (None, 0) else batching.moveaxis(v, d, 0) for v, d in zip(vals[:k], bdims)]
    fixed_dims = [None if d is None else 0 for d in bdims[:k]]
    lin = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals[k:], bdims[k:])]
    origin = f"vmap of linear_call {name}"
    new_call, call_consts = _batched(call_jaxpr, size, [*fixed_dims, *([0] * len(lin))], origin)
    res_dims = fixed_dims[num_consts:]
    n_out = len(call_jaxpr.out_avals)

    def new_transpose() -> tuple[ClosedJaxpr, list[Any]]:
        t_jaxpr, t_consts = transpose()
        dims = [*([None] * len(t_consts)), *res_dims, *([0] * n_out)]
        inner, inner_consts = _batched(t_jaxpr, size, dims, origin)
        return inner, [*inner_consts, *t_consts]

    outs = linear_call_p.bind(
        *call_consts,
        *fixed,
        *lin,
        call_jaxpr=new_call,
        transpose=_Callable(new_transpose, f"vmap_of_{transpose.__name__}"),
        num_consts=len(call_consts) + num_consts,
        num_res=num_res,
        name=name,
    )
    return outs, [0] * len(outs)


core.impl_rules[linear_call_p] = _impl
core.abstract_eval_rules[linear_call_p] = _abstract
ad.jvp_rules[linear_call_p] = _jvp
ad.transpose_rules[linear_call_p] = _transpose
ad.linear_primitives.add(linear_call_p)
batching.batching_rules[linear_call_p] = _batch


def linear_call(
    fun: Callable[..., Any], fun_transpose: Callable[..., Any], residual_args: Any, linear_args: Any
) -> Any:
    """``fun(residual_args, linear_args)``, where ``fun`` is linear in ``linear_args``
    and ``fun_transpose(residual_args, ct)`` is its transpose in them (returning the
    structure of ``linear_args``), as JAX's ``linear_call``.

    ``jvp`` applies ``fun`` to the tangents of ``linear_args`` (``residual_args`` must
    not be differentiated); reverse mode (``grad``, ``vjp``, ``linear_transpose``) calls
    ``fun_transpose``, and transposing that calls ``fun`` again. Unlike JAX, it also
    works under ``vmap`` (the function and its transpose are batched together).

    >>> import functrace as ft
    >>> from functrace.custom_derivatives import linear_call
    >>> def scaled(x, r):
    ...     return linear_call(lambda r, x: x / r, lambda r, t: 10.0 * t / r, r, x)
    >>> float(ft.grad(scaled)(4.0, 2.0))
    5.0
    """
    for what, fn in (("fun", fun), ("fun_transpose", fun_transpose)):
        if not callable(fn):
            raise TypeError(f"linear_call: expected a callable {what}, got {type(fn).__name__}.")
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    name = describe_fun(fun)
    leaves = [*res_leaves, *lin_leaves]
    for x in leaves:
        core.get_aval(x)  # an error naming the value for a leaf that is not an array
    if not any(isinstance(x, Tracer) and not x.recorded for x in leaves) and not (
        core.dynamic_trace_active()
    ):  # concrete values (also those of an eager run being recorded): call it
        return fun(residual_args, linear_args)
    n_res = len(res_leaves)
    out_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out = fun(tree_unflatten(res_tree, xs[:n_res]), tree_unflatten(lin_tree, xs[n_res:]))
        o_leaves, o_tree = tree_flatten(out)
        out_box.append(o_tree)
        return o_leaves

    res_avals = [core.get_aval(x).update() for x in res_leaves]
    lin_avals = [core.get_aval(x).update() for x in lin_leaves]
    call_jaxpr, consts = _trace(flat_fun, [*res_avals, *lin_avals], f"linear_call of {name}")
    out_tree = out_box[-1]
    t_name = describe_fun(fun_transpose)

    def flat_transpose(*xs: Any) -> list[Any]:
        got = fun_transpose(
            tree_unflatten(res_tree, xs[:n_res]), tree_unflatten(out_tree, xs[n_res:])
        )
        g_leaves, g_tree = tree_flatten(got)
        if g_tree != lin_tree:
            raise TypeError(
                f"linear_call: expected the transpose {t_name} to return the structure of "
                f"the linear arguments, {lin_tree}, got {g_tree}."
            )
        for i, (g, a) in enumerate(zip(g_leaves, lin_avals)):
            ga = core.get_aval(g)
            if ga.shape != a.shape or ga.dtype != a.dtype:
                raise TypeError(
                    f"linear_call: expected the transpose {t_name} to return, for linear "
                    f"argument leaf {i}, a value of type {a.str_short()} (that argument's), "
                    f"got {ga.str_short()}."
                )
        return g_leaves

    def transpose() -> tuple[ClosedJaxpr, list[Any]]:
        # traced when reverse mode needs it (each time: it is cheap, and a closure
        # without state lets eager reuse compare two recordings)
        out_avals = [ad.tangent_aval(a) for a in call_jaxpr.out_avals]
        return _trace(flat_transpose, [*res_avals, *out_avals], f"linear_call of {t_name}")

    outs = linear_call_p.bind(
        *consts,
        *res_leaves,
        *lin_leaves,
        call_jaxpr=call_jaxpr,
        transpose=_Callable(transpose, f"transpose_{getattr(fun, '__name__', 'f')}"),
        num_consts=len(consts),
        num_res=n_res,
        name=name,
    )
    return tree_unflatten(out_tree, outs)


__all__ = ["linear_call", "linear_call_p"]
