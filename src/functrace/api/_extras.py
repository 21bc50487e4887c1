"""More of JAX's top-level API: ``ShapeDtypeStruct`` (and ``eval_shape`` returning it),
``typeof``, ``closure_convert``, ``custom_gradient``, ``linear_transpose``,
``named_call``, ``named_scope``, ``ensure_compile_time_eval``, and ``custom_root``
(``jax.lax.custom_root``, built on ``custom_jvp``, so it lives here, above ``lax``).

Decisions (JAX's semantics unless noted):

* ``closure_convert`` hoists the floating-point tracers the function closes over (the
  values a transform may differentiate); other constants stay in its jaxpr.
* ``linear_transpose`` transposes the traced jaxpr equation by equation (reverse
  mode's transpose rules): a non-linear function is a TypeError naming the primitive
  that is not linear; constant terms of an affine function are dropped, as in JAX.
* ``named_call``/``named_scope`` only name things in JAX's profiles and HLO: here the
  function and the block run unchanged.
* ``custom_root``'s ``aux`` (``has_aux``) gets zero tangents (JAX's rule rejects
  integer ``aux`` under ``grad``).
"""

from __future__ import annotations

import contextlib
import functools
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import to_array
from functrace._prng import PRNGKeyArray
from functrace.api._autodiff import jvp, stop_gradient
from functrace.api._shapes import ShapeDtypeStruct
from functrace.api._shapes import eval_shape as _eval_shape_avals
from functrace.core import ShapedArray, Tracer, describe_fun
from functrace.custom_derivatives._jvp import custom_jvp
from functrace.custom_derivatives._vjp import custom_vjp
from functrace.errors import MissingRuleError
from functrace.interpreters import ad
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import Var, eval_jaxpr
from functrace.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)

# ---------------------------------------------------------------------------
# ShapeDtypeStruct, eval_shape, typeof
# ---------------------------------------------------------------------------


def _is_shape_like(x: Any) -> bool:
    """An object standing for an array by its ``shape`` and ``dtype`` only."""
    return not core.is_array_like(x) and hasattr(x, "shape") and hasattr(x, "dtype")


_PY_WEAK = {np.dtype(np.float64): 0.0, np.dtype(np.int64): 0, np.dtype(np.complex128): 0j}


def stand_in(x: Any) -> Any:
    """A zero-memory array of the shape and dtype of a ShapeDtypeStruct-like leaf (a
    Python scalar for a weakly typed scalar), so that tracing sees its type; other
    leaves unchanged."""
    if not _is_shape_like(x):
        return x
    shape = tuple(int(d) for d in x.shape)
    if isinstance(x.dtype, dtypes.KeyDtype):  # typed keys: zero keys of the shape
        return PRNGKeyArray(np.broadcast_to(np.zeros((), np.uint32), (*shape, 2)))
    dt = np.dtype(x.dtype)
    if getattr(x, "weak_type", False) and not shape and dt in _PY_WEAK:
        return _PY_WEAK[dt]
    return np.broadcast_to(np.zeros((), dt), shape)


def _avals_of(fname: str, leaves: Sequence[Any]) -> list[ShapedArray]:
    out = []
    for x in leaves:
        if _is_shape_like(x):
            out.append(
                ShapedArray(
                    tuple(int(d) for d in x.shape),
                    np.dtype(x.dtype),
                    bool(getattr(x, "weak_type", False)),
                )
            )
            continue
        try:
            a = core.get_aval(x)
        except TypeError:
            raise TypeError(
                f"{fname}: expected arrays, scalars or ShapeDtypeStructs, got {type(x).__name__}."
            ) from None
        out.append(ShapedArray(a.shape, a.dtype, a.weak_type))
    return out


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of
    ``ShapeDtypeStruct``, without computing anything. Arguments may be arrays, scalars
    or ``ShapeDtypeStruct``s (anything with ``shape`` and ``dtype``).

    >>> import numpy as np
    >>> eval_shape(lambda x: x.sum(0), ShapeDtypeStruct((2, 3), np.float32))
    ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    args = tree_map(stand_in, args)
    kwargs = tree_map(stand_in, kwargs)
    target = functools.partial(fun, **kwargs) if kwargs else fun
    if kwargs:
        functools.update_wrapper(target, fun)
    out = _eval_shape_avals(target, *args)
    return tree_map(
        ShapeDtypeStruct.like, out, is_leaf=lambda a: isinstance(a, (ShapedArray, PRNGKeyArray))
    )


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array, scalar or tracer, as
    transforms see it.

    >>> typeof(1.0)
    ShapedArray(f64[], weak_type=True)
    """
    if isinstance(x, ShapedArray):
        return x
    try:
        a = core.get_aval(x)
    except TypeError:
        raise TypeError(
            f"typeof: expected an array, a scalar or a tracer, got {type(x).__name__}."
        ) from None
    return ShapedArray(a.shape, a.dtype, a.weak_type)


# ---------------------------------------------------------------------------
# closure_convert
# ---------------------------------------------------------------------------


def _closure_convert(
    fname: str, fun: Callable[..., Any], example_args: tuple[Any, ...], hoist_all: bool
) -> tuple[Callable[..., Any], list[Any], Any]:
    """``(converted, hoisted, out_tree)``: ``converted(*args, *hoisted)`` computes
    ``fun(*args)`` from its jaxpr traced on the example arguments' types."""
    leaves, in_tree = tree_flatten(example_args)
    avals = _avals_of(fname, leaves)
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = core.call_user(fname, fun, tree_unflatten(in_tree, list(xs)), {})
        out_leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    closed, _ = trace_to_jaxpr(flat, avals, origin=f"{fname} of {describe_fun(fun)}")
    jaxpr, consts, out_tree = closed.jaxpr, list(closed.consts), box[-1]
    hoist = [
        isinstance(c, Tracer) and (hoist_all or core.get_aval(c).dtype.kind in "fc") for c in consts
    ]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    kept = [None if h else c for c, h in zip(consts, hoist)]
    n_hoisted = len(hoisted)

    def converted(*args_and_consts: Any) -> Any:
        n = len(args_and_consts) - n_hoisted
        if n < 0:
            raise TypeError(
                f"{fname}: expected the arguments followed by {n_hoisted} hoisted constants, "
                f"got {len(args_and_consts)} values."
            )
        args, extra = args_and_consts[:n], iter(args_and_consts[n:])
        all_consts = [next(extra) if h else c for c, h in zip(kept, hoist)]
        flat_args, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(
                f"{fname}: expected arguments of the structure of the examples, {in_tree}, "
                f"got {tree}."
            )
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, all_consts, flat_args))

    functools.update_wrapper(converted, fun)
    return converted, hoisted, out_tree


def closure_convert(
    fun: Callable[..., Any], *example_args: Any
) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``,
    with the floating-point traced values ``fun`` closes over (those a transform may
    differentiate) made explicit arguments ``consts``, as ``custom_vjp``/``custom_jvp``
    rules need. ``fun`` is traced once on the types of ``example_args`` (arrays or
    ``ShapeDtypeStruct``s); outside transforms ``consts`` is empty.

    >>> import functrace as ft
    >>> f, consts = closure_convert(lambda x: x * 2.0, 1.0)
    >>> float(f(3.0, *consts))
    6.0
    """
    converted, hoisted, _ = _closure_convert("closure_convert", fun, example_args, False)
    return converted, hoisted


# ---------------------------------------------------------------------------
# custom_gradient
# ---------------------------------------------------------------------------


class _Rule:
    """The residuals of a ``custom_gradient`` call: the vjp function's hoisted tracers
    (the pytree's children), its converted form and the number of arguments (static)."""

    __slots__ = ("fn", "consts", "nargs")

    def __init__(self, fn: Callable[..., Any], consts: list[Any], nargs: int) -> None:
        self.fn, self.consts, self.nargs = fn, consts, nargs


register_pytree_node(
    _Rule,
    lambda r: (r.consts, (r.fn, r.nargs)),
    lambda aux, consts: _Rule(aux[0], list(consts), aux[1]),
)


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """A function with its reverse-mode derivative given inline (``jax.custom_gradient``):
    ``fun(*args)`` returns ``(value, vjp_fn)`` and ``vjp_fn(cotangent)`` returns the
    cotangents of the positional arguments (a tuple, or one value for one argument).
    The result computes ``value``; ``grad``/``vjp`` call ``vjp_fn``, forward mode is an
    error (as for ``custom_vjp``).

    >>> import functrace as ft
    >>> @custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * 3.0,)
    >>> float(ft.grad(f)(1.0))
    3.0
    """
    name = describe_fun(fun)

    @functools.wraps(fun)
    def value(*args: Any) -> Any:
        return _pair(fun(*args))[0]

    def _pair(res: Any) -> tuple[Any, Callable[..., Any]]:
        if not (isinstance(res, tuple) and len(res) == 2 and callable(res[1])):
            raise TypeError(
                f"custom_gradient: expected {name} to return a pair (value, vjp_fn), got "
                f"{type(res).__name__}."
            )
        return res

    def fwd(*args: Any) -> Any:
        out, rule = _pair(fun(*args))
        leaves = tree_flatten(out)[0]
        cts = [_tangent_stand_in(x) for x in leaves]
        converted, hoisted, _ = _closure_convert(
            "custom_gradient", rule, (tree_unflatten(tree_flatten(out)[1], cts),), True
        )
        return out, _Rule(converted, hoisted, len(args))

    def bwd(rule: _Rule, ct: Any) -> tuple[Any, ...]:
        nargs = rule.nargs
        cts = rule.fn(ct, *rule.consts)
        if not isinstance(cts, (tuple, list)):
            if nargs != 1:
                raise TypeError(
                    f"custom_gradient: expected the vjp function of {name} to return a tuple "
                    f"of {nargs} cotangents (one per argument), got {type(cts).__name__}."
                )
            cts = (cts,)
        if len(cts) != nargs:
            raise TypeError(
                f"custom_gradient: expected the vjp function of {name} to return {nargs} "
                f"cotangents (one per argument), got {len(cts)}."
            )
        return tuple(cts)

    wrapped = custom_vjp(value)
    wrapped.defvjp(fwd, bwd)
    return wrapped


def _tangent_stand_in(x: Any) -> Any:
    a = core.get_aval(x)
    return ShapeDtypeStruct(a.shape, ad.tangent_aval(a).dtype)


# ---------------------------------------------------------------------------
# linear_transpose
# ---------------------------------------------------------------------------


def _nonlinear_use(jaxpr: Any) -> str:
    """What makes ``jaxpr`` non-linear in its inputs, for the error message."""
    linear = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        if not any(type(x) is Var and x in linear for x in eqn.inputs):
            continue
        if eqn.primitive not in ad.linear_primitives:
            return f"applies the non-linear '{eqn.primitive.name}' to a value depending on them"
        linear.update(eqn.out_binders)
    return "combines values depending on them non-linearly (e.g. multiplies two of them)"


def linear_transpose(
    fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()
) -> Callable[[Any], tuple[Any, ...]]:
    """The transpose of the linear function ``fun``: ``transposed(ct)`` returns one
    cotangent per argument of ``fun``, a tuple. ``primals`` (arrays or
    ``ShapeDtypeStruct``s) give the argument types; their values are not used.
    ``reduce_axes`` is accepted for JAX's signature and ignored.

    >>> import functrace as ft
    >>> t = linear_transpose(lambda x: 2.0 * x, 1.0)
    >>> float(t(3.0)[0])
    6.0
    """
    leaves, in_tree = tree_flatten(primals)
    avals = _avals_of("linear_transpose", leaves)
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = core.call_user("linear_transpose", fun, tree_unflatten(in_tree, list(xs)), {})
        out_leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    closed, _ = trace_to_jaxpr(flat, avals, origin=f"linear_transpose of {describe_fun(fun)}")
    out_tree, out_avals = box[-1], closed.out_avals

    def transposed(out_cotangent: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"linear_transpose: expected a cotangent of the structure of the output of "
                f"{describe_fun(fun)}, {out_tree}, got {ct_tree}."
            )
        for c, a in zip(ct_leaves, out_avals):
            ca = core.get_aval(c)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise TypeError(
                    f"linear_transpose: expected cotangents of the output types "
                    f"({a.str_short()}), got {ca.str_short()}."
                )
        try:
            cts = ad.backward_pass(closed.jaxpr, closed.consts, ct_leaves, forward_known=True)
        except (MissingRuleError, ValueError):
            raise TypeError(
                f"linear_transpose: expected a function linear in its arguments, got "
                f"{describe_fun(fun)}, which {_nonlinear_use(closed.jaxpr)}. Transpose its "
                f"linearization instead: functrace.vjp(fun, *primals)."
            ) from None
        out = [np.zeros(a.shape, a.dtype) if type(c) is ad.Zero else c for c, a in zip(cts, avals)]
        out = [to_array(np.asarray(c)) if not isinstance(c, Tracer) else c for c in out]
        return tuple(tree_unflatten(in_tree, out))

    return transposed


# ---------------------------------------------------------------------------
# named_call, named_scope, ensure_compile_time_eval
# ---------------------------------------------------------------------------


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` itself (JAX names its calls in profiles and HLO; functrace has neither).

    >>> float(named_call(lambda x: x + 1.0, name="inc")(1.0))
    2.0
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: expected a str name, got {type(name).__name__}.")
    return fun


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A context manager naming the operations of its block in JAX's profiles; here the
    block runs unchanged.

    >>> with named_scope("layer1"):
    ...     pass
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: expected a str name, got {type(name).__name__}.")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside ``jit`` (or ``make_jaxpr``), compute operations on known values now, while
    tracing, instead of staging them into the program (their results become
    constants). Operations on traced values are staged as usual.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.jit
    ... def f(x):
    ...     with ensure_compile_time_eval():
    ...         k = fnp.arange(3.0).sum()  # computed while tracing
    ...     return x * k
    >>> float(f(2.0))
    6.0
    """
    with core.new_base_trace():
        yield


# ---------------------------------------------------------------------------
# custom_root (jax.lax.custom_root)
# ---------------------------------------------------------------------------


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """The root ``x`` of ``f(x) = 0`` found by ``solve(f, initial_guess)``, differentiated
    by the implicit function theorem (``solve`` itself is never differentiated).

    ``f`` maps a pytree of the structure of ``initial_guess`` to one of the same
    structure; it may close over values being differentiated, ``theta``: then
    ``dx = -(df/dx)^-1 (df/dtheta) dtheta``, with the linear system solved by
    ``tangent_solve(g, y)`` (``g`` the linear map ``df/dx`` at the root; e.g.
    ``lambda g, y: y / g(1.0)`` for scalars). ``tangent_solve`` must be linear in ``y``
    for reverse mode. With ``has_aux``, ``solve`` returns ``(x, aux)`` and so does the
    result; ``aux`` is not differentiated.

    >>> import functrace as ft
    >>> def sqrt(a):
    ...     def newton(f, x):
    ...         for _ in range(30):
    ...             x = x - f(x) / ft.grad(f)(x)
    ...         return x
    ...     return ft.lax.custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> round(float(ft.grad(sqrt)(2.0)), 6)  # 1 / (2 sqrt(2))
    0.353553
    """
    for nm, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: expected a callable {nm}, got {type(fn).__name__}.")
    guess_leaves, guess_tree = tree_flatten(initial_guess)
    f_conv, consts, f_tree = _closure_convert("custom_root", f, (initial_guess,), True)
    if f_tree != guess_tree:
        raise TypeError(
            f"custom_root: expected f to return a pytree of the structure of initial_guess, "
            f"{guess_tree}, got {f_tree}."
        )

    def f_at(c: Sequence[Any]) -> Callable[[Any], Any]:
        return lambda x: f_conv(x, *c)

    def split(out: Any) -> tuple[Any, Any]:
        if not has_aux:
            return out, None
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(
                f"custom_root: expected solve to return a pair (solution, aux) with "
                f"has_aux=True, got {type(out).__name__}."
            )
        return out

    # The solution, with no derivative through solve (which may close over anything);
    # _attach adds the implicit-function derivative in the values f closes over.
    stopped = [stop_gradient(c) for c in consts]
    sol, aux = split(solve(f_at(stopped), tree_map(stop_gradient, initial_guess)))
    sol_tree = tree_flatten(sol)[1]
    if sol_tree != guess_tree:
        raise TypeError(
            f"custom_root: expected solve to return a pytree of the structure of "
            f"initial_guess, {guess_tree}, got {sol_tree}."
        )
    sol = tree_map(stop_gradient, sol)

    @custom_jvp
    def _attach(c: tuple[Any, ...], x: Any) -> Any:
        return x

    @_attach.defjvp
    def _attach_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        c, x = primals
        c_dot, _ = tangents
        x = _attach(c, x)  # the root as a function of c, for derivatives of higher order
        # f(x(theta), theta) = 0  =>  df/dx dx = -df/dtheta dtheta
        _, rhs = jvp(lambda cc: f_conv(x, *cc), (c,), (c_dot,))
        x_dot = tangent_solve(lambda t: jvp(f_at(c), (x,), (t,))[1], rhs)
        return x, tree_map(operator.neg, x_dot)

    out = _attach(tuple(consts), sol)
    return (out, tree_map(stop_gradient, aux)) if has_aux else out


__all__ = [
    "ShapeDtypeStruct",
    "closure_convert",
    "custom_gradient",
    "custom_root",
    "ensure_compile_time_eval",
    "eval_shape",
    "linear_transpose",
    "named_call",
    "named_scope",
    "typeof",
]
