"""Shape tools: ``make_jaxpr`` (the IR of a function on its arguments' shapes and
dtypes) and ``eval_shape`` (its output shapes), without computing."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.api._args import _normalize_argnums, _plain_leaves
from functrace.core import describe_fun
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr
from functrace.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten


def _arg_names(fun: Callable[..., Any], args: tuple[Any, ...]) -> list[str]:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"args[{i}]"
        for path, _ in tree_flatten_with_path(a)[0]:
            names.append(base + keystr(path))
    return names


def _abstractify(fname: str, leaves: Sequence[Any]) -> list[core.ShapedArray]:
    out = []
    for i, x in enumerate(leaves):
        if core.int64_overflow(x):
            raise core.int64_overflow_error(fname, x, f"for the argument leaf {i}")
        try:
            aval = core.get_aval(x)
        except TypeError:
            raise TypeError(
                f"{fname}: expected arrays or scalars as arguments, got {type(x).__name__}. "
                f"Mark the argument static (static_argnums) if it is not array data."
            ) from None
        out.append(core.ShapedArray(aval.shape, aval.dtype, aval.weak_type))
    return out


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = ()
) -> Callable[..., ClosedJaxpr]:
    """A function returning the IR of ``fun`` traced on its arguments' shapes and dtypes.

    >>> import functrace as ft, numpy as np
    >>> print(ft.make_jaxpr(lambda x: (x * x).sum())(np.ones(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = mul a a
        c:f64[] = reduce_sum[axes=(0,)] b
      in (c,) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make_jaxpr_f(*args: Any) -> ClosedJaxpr:
        nums = set(_normalize_argnums("make_jaxpr", static, len(args))) if static else set()
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        leaves, in_tree = tree_flatten(dyn)
        leaves = _plain_leaves(
            "make_jaxpr", fun, leaves, dyn, [i for i in range(len(args)) if i not in nums]
        )
        names = [n for i, n in enumerate(_arg_names(fun, args))] if not nums else None

        def flat_fun(*flat: Any) -> list[Any]:
            it = iter(tree_unflatten(in_tree, flat))
            full = [a if i in nums else next(it) for i, a in enumerate(args)]
            return tree_flatten(core.call_user("make_jaxpr", fun, full, {}))[0]

        closed, _ = trace_to_jaxpr(
            flat_fun,
            _abstractify("make_jaxpr", leaves),
            origin=f"make_jaxpr of {describe_fun(fun)}",
            arg_names=names,
        )
        return closed

    return make_jaxpr_f


def eval_shape(fun: Callable[..., Any], *args: Any) -> Any:
    """The output shapes and dtypes of ``fun(*args)`` as ShapedArrays, without computing."""
    leaves, in_tree = tree_flatten(args)
    leaves = _plain_leaves("eval_shape", fun, leaves, args)
    box: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        res = core.call_user("eval_shape", fun, tree_unflatten(in_tree, flat), {})
        out, out_tree = tree_flatten(res)
        box.append(out_tree)
        return out

    closed, _ = trace_to_jaxpr(
        flat_fun, _abstractify("eval_shape", leaves), origin=f"eval_shape of {describe_fun(fun)}"
    )
    return tree_unflatten(box[-1], closed.out_avals)
