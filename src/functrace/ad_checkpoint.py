"""``functrace.ad_checkpoint``: rematerialisation (JAX's ``jax.checkpoint``).

``checkpoint(f)`` computes what ``f`` computes; under reverse mode (``grad``, ``vjp``)
its forward pass keeps only the values the ``policy`` allows (by default none: only the
operands of ``f``) and the backward pass recomputes the others. Memory for time: a
model whose layers are each checkpointed keeps one activation per layer instead of
every intermediate value of the layer.

>>> import functrace as ft, functrace.numpy as fnp
>>> f = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
>>> float(ft.grad(f)(1.0)) == float(ft.grad(lambda x: fnp.sin(fnp.sin(x)))(1.0))
True

``lax.scan`` has no ``remat=`` argument (nor has JAX's): checkpoint the body,
``lax.scan(checkpoint(body), init, xs)``, to keep only the carries of each step.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from functrace import _debug, core
from functrace._array import to_array
from functrace.core import ShapedArray, Tracer
from functrace.interpreters import ad
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import Literal, Var
from functrace.lax import remat as _remat
from functrace.lax.control_flow.common import _trace
from functrace.lax.remat import checkpoint_name, remat_p
from functrace.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)

checkpoint_policies = SimpleNamespace(
    everything_saveable=_remat.everything_saveable,
    nothing_saveable=_remat.nothing_saveable,
    dots_saveable=_remat.dots_saveable,
    checkpoint_dots=_remat.dots_saveable,
    dots_with_no_batch_dims_saveable=_remat.dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=_remat.dots_with_no_batch_dims_saveable,
    save_only_these_names=_remat.save_only_these_names,
    save_any_names_but_these=_remat.save_any_names_but_these,
    save_anything_except_these_names=_remat.save_anything_except_these_names,
    save_from_both_policies=_remat.save_from_both_policies,
)
"""The policies of :func:`checkpoint` (``functrace.checkpoint_policies``): each decides
per equation of the checkpointed function whether its outputs may be saved for the
backward pass; ``policy(primitive, *in_avals, **params) -> bool``, as in JAX."""


def _static_argnums(fname: str, static_argnums: Any) -> tuple[int, ...]:
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    try:
        nums = tuple(nums)
    except TypeError:
        nums = None
    if nums is None or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise TypeError(
            f"{fname}: expected static_argnums to be an int or a tuple of ints, got "
            f"{static_argnums!r}."
        )
    return nums


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Callable[..., Any]:
    """``fun`` rematerialised: reverse mode keeps only what ``policy`` saves and
    recomputes the rest during the backward pass (JAX's ``jax.checkpoint``).

    ``policy``: one of ``functrace.checkpoint_policies`` (``None``: nothing saveable,
    only the arguments are kept). ``static_argnums``: positional arguments that are
    Python values (they may drive Python control flow inside ``fun``), not traced;
    ``static_argnames``: the same by parameter name (given by keyword or by position).
    ``prevent_cse`` is accepted for JAX compatibility: functrace's ``jit`` does not
    merge equal computations, so the recomputation is never merged with the forward
    pass. Values, gradients and every transform are those of ``fun``: only the memory
    kept between the forward and the backward pass changes.
    """
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a callable, got {type(fun).__name__}.")
    if policy is not None and not callable(policy):
        raise TypeError(
            f"checkpoint: expected policy to be None or one of functrace."
            f"checkpoint_policies (a callable prim, *avals, **params -> bool), got "
            f"{type(policy).__name__} {policy!r}."
        )
    if not isinstance(prevent_cse, bool):
        raise TypeError(
            f"checkpoint: expected prevent_cse to be a bool, got {type(prevent_cse).__name__}."
        )
    statics = _static_argnums("checkpoint", static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"checkpoint: expected static_argnames as strings, got {names!r}.")
    named = _positions_of(fun, names)  # static by name, given by position
    what = f"checkpoint of {core.describe_fun(fun)}"

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        nums = set()
        for i in statics:
            if not -n <= i < n:
                raise ValueError(
                    f"{what}: static_argnums {i} is out of range for {n} positional "
                    f"argument{'s' if n != 1 else ''}."
                )
            nums.add(i % n)
        nums.update(i for i in named if i < n)  # (a named one given by keyword: below)
        dyn = [a for i, a in enumerate(args) if i not in nums]
        static_kw = {k: v for k, v in kwargs.items() if k in names}
        kwargs = {k: v for k, v in kwargs.items() if k not in names}
        leaves, tree = tree_flatten((dyn, kwargs))
        vals = []
        for x in leaves:
            if not isinstance(x, Tracer):
                if isinstance(x, np.ndarray):
                    x = core.plain_array(x, what, "an argument")
                elif not isinstance(x, (bool, int, float, complex, np.generic)):
                    raise TypeError(
                        f"{what}: expected array arguments (or mark the argument static "
                        f"with static_argnums), got {type(x).__name__} {x!r}."
                    )
            vals.append(x)
        box: dict[str, Any] = {}

        def flat(*xs: Any) -> list[Any]:
            d, kw = tree_unflatten(tree, list(xs))
            it = iter(d)
            full = [args[i] if i in nums else next(it) for i in range(n)]
            out = core.call_user("checkpoint", fun, full, {**kw, **static_kw})
            out_leaves, box["tree"] = tree_flatten(out)
            return out_leaves

        jaxpr, consts = _trace(flat, [core.get_aval(x) for x in vals], what)
        outs = remat_p.bind(
            *consts,
            *vals,
            jaxpr=jaxpr,
            prevent_cse=prevent_cse,
            differentiated=False,
            policy=policy,
        )
        return tree_map(to_array, tree_unflatten(box["tree"], outs))

    return wrapped


def _positions_of(fun: Callable[..., Any], names: tuple[str, ...]) -> list[int]:
    """The positions of ``fun``'s positional parameters named in ``names``."""
    if not names:
        return []
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [i for i, p in enumerate(params) if p.kind in positional and p.name in names]


remat = checkpoint
"""``remat`` is :func:`checkpoint` (JAX's older name)."""


def _arg_names(f: Callable[..., Any], args: Sequence[Any], kwargs: dict) -> list[str]:
    """A name per flat leaf of ``(args, kwargs)``: the parameter's name and the path."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = []
    for path, _ in tree_flatten_with_path((list(args), kwargs))[0]:
        which, top, rest = path[0].idx, path[1], path[2:]
        if which == 0:
            i = top.idx
            base = pos[i] if i < len(pos) else f"args[{i}]"
        else:
            base = str(top.key)
        names.append(base + keystr(rest))
    return names


def saved_residuals(
    f: Callable[..., Any], *args: Any, **kwargs: Any
) -> list[tuple[ShapedArray, str]]:
    """The values reverse mode keeps from the forward pass of ``f(*args, **kwargs)`` for
    its backward pass (differentiating in every floating-point argument): a list of
    ``(type, where it comes from)``, in the order of the tape. What
    :func:`print_saved_residuals` prints."""
    if not callable(f):
        raise TypeError(f"saved_residuals: expected a callable, got {type(f).__name__}.")
    leaves, tree = tree_flatten((list(args), kwargs))
    try:
        avals = [core.get_aval(x).update(weak_type=False) for x in leaves]
    except TypeError as e:
        raise TypeError(f"saved_residuals of {core.describe_fun(f)}: {e}") from None
    mask = [a.dtype.kind in "fc" for a in avals]
    names = _arg_names(f, args, kwargs)

    def residuals(*xs: Any) -> list[Any]:
        def flat_f(*ys: Any) -> list[Any]:
            a, kw = tree_unflatten(tree, list(ys))
            return tree_flatten(core.call_user("saved_residuals", f, a, kw))[0]

        _, lin, _ = ad.linearize_flat(flat_f, xs, mask, origin="saved_residuals")
        return list(lin.consts)

    state = _debug.state
    prev, state.record_sources = state.record_sources, True
    try:
        closed, _ = trace_to_jaxpr(
            residuals, avals, origin=f"saved_residuals of {core.describe_fun(f)}"
        )
    finally:
        state.record_sources = prev
    j = closed.jaxpr
    producers = {v: e for e in j.eqns for v in e.out_binders}
    arg_of = {v: i for i, v in enumerate(j.invars)}
    out: list[tuple[ShapedArray, str]] = []
    for x in j.outvars:
        if type(x) is Literal:
            out.append((x.aval, "a literal"))
        elif x in arg_of:
            out.append((x.aval, f"from the argument {names[arg_of[x]]}"))
        elif type(x) is Var and x in producers:
            eqn = producers[x]
            src = eqn.source
            where = f" from {src.location}" if src is not None else ""
            rule = ""
            if src is not None and src.phase == "jvp" and src.parent:
                rule = f" (in the derivative of {src.parent})"
            if eqn.primitive is _remat.name_p:
                out.append((x.aval, f"named {eqn.params['name']!r}{where}"))
            else:
                out.append((x.aval, f"output of {eqn.primitive.name}{rule}{where}"))
        else:
            out.append((x.aval, "a constant of the function"))
    return out


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print one line per value reverse mode saves for the backward pass of
    ``f(*args, **kwargs)``: its type and where it comes from (an argument, or the
    primitive and the line of your code that computed it), as JAX's function does."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {where}")


__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
]
