"""The public transforms: pytrees, ``argnums``, ``has_aux`` and input validation.

This is the only module that knows about pytrees and argument plumbing; the
interpreters work on flat lists of arrays. Every array argument (and tangent or
cotangent) goes through ``core.plain_array`` first: ``numpy.matrix`` and masked
arrays are rejected with a TypeError naming the transform, function and argument;
other ndarray subclasses are viewed as ndarray; byte order and alignment are fixed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import Array, to_array
from functrace.core import Tracer, describe_fun
from functrace.interpreters import ad
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr
from functrace.tree_util import (
    keystr,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_map_with_path,
    tree_structure,
    tree_unflatten,
)

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _normalize_argnums(fname: str, argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for a in nums:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{fname}: expected argnums of ints, got {argnums!r}.")
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{fname}: expected argnums in [{-nargs}, {nargs}) for a call "
                f"with {nargs} positional arguments, got {a}."
            )
        out.append(int(a) % nargs)
    return tuple(out)


_SCALAR_LEAF_TYPES = frozenset(core._SCALAR_AVALS)  # Python and NumPy scalar types

_FLAT_LEAF_TYPES = {
    float,
    np.ndarray,
    Array,
    np.float64,
    np.float32,
    np.float16,
    int,
    np.int64,
    np.int32,
    bool,
    complex,
}


def _needs_plain(x: Any) -> bool:
    return isinstance(x, np.ndarray) and not core.is_plain_array(x)


def _param_name(fun: Callable[..., Any], i: int) -> str:
    try:
        params = [
            p.name
            for p in inspect.signature(fun).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return f"argument `{params[i]}`" if i < len(params) else f"argument {i}"


def _plain_value(x: Any, where: Callable[[], str], label: Callable[[], str]) -> Any:
    """``x`` (an argument, or a pytree of them) with every ndarray leaf made plain by
    ``core.plain_array``: the rule for ndarray subclasses (``numpy.matrix`` and masked
    arrays rejected, others viewed as ndarray), byte order and alignment."""
    t = type(x)
    if t in _SCALAR_LEAF_TYPES:
        return x
    if t is np.ndarray:
        return x if core.is_plain_array(x) else core.plain_array(x, where(), label())
    if isinstance(x, np.ndarray):
        return core.plain_array(x, where(), label())
    if isinstance(x, Tracer) or not any(_needs_plain(v) for v in tree_leaves(x)):
        return x
    return tree_map_with_path(
        lambda p, v: core.plain_array(v, where(), label() + keystr(p)) if _needs_plain(v) else v,
        x,
    )


def _plain_args(
    fname: str, fun: Callable[..., Any], args: tuple[Any, ...], skip: Sequence[int] = ()
) -> tuple[Any, ...]:
    """The positional arguments of ``fun`` made plain (see :func:`_plain_value`), except
    those at ``skip`` (made plain after flattening, by :func:`_plain_leaves`); errors
    name the transform ``fname``, the function and the argument."""
    for i, a in enumerate(args):  # fast path: scalars and plain arrays only
        t = type(a)
        if t in _SCALAR_LEAF_TYPES or (t is np.ndarray and core.is_plain_array(a)) or i in skip:
            continue
        break
    else:
        return args
    where = functools.partial(_where, fname, fun)
    return tuple(
        a if i in skip else _plain_value(a, where, functools.partial(_param_name, fun, i))
        for i, a in enumerate(args)
    )


def _plain_leaves(
    fname: str,
    fun: Callable[..., Any],
    leaves: list[Any],
    args: tuple[Any, ...],
    positions: Sequence[int] | None = None,
) -> list[Any]:
    """The flat ``leaves`` of the argument tuple ``args`` (positions ``positions`` of
    ``fun``'s arguments) with every ndarray made plain (see :func:`_plain_value`)."""
    out = leaves
    for i, x in enumerate(leaves):
        t = type(x)
        if t in _SCALAR_LEAF_TYPES or (t is np.ndarray and x.dtype.isnative and x.flags.aligned):
            continue
        if isinstance(x, np.ndarray):
            path = tree_flatten_with_path(args)[0][i][0]
            k = path[0].idx if path and hasattr(path[0], "idx") else 0
            pos = positions[k] if positions is not None else k
            label = _param_name(fun, pos) + keystr(path[1:])
            if out is leaves:
                out = list(leaves)
            out[i] = core.plain_array(x, _where(fname, fun), label)
    return out


def _where(fname: str, fun: Callable[..., Any]) -> str:
    return f"{fname} of {describe_fun(fun)}"


def _plain_kwargs(fname: str, fun: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    where = functools.partial(_where, fname, fun)
    return {
        k: _plain_value(v, where, functools.partial("argument `{}`".format, k))
        for k, v in kwargs.items()
    }


def _output(x: Any) -> Any:
    """Eager results leave as immutable ``functrace.Array``s (0-d ones too; a read-only
    view, e.g. of an input or a broadcast, is copied first)."""
    return to_array(x)


def _check_array_leaf(fname: str, x: Any, path: str) -> None:
    if not core.is_array_like(x):
        raise TypeError(
            f"{fname}: expected arrays or scalars as differentiated inputs, got "
            f"{type(x).__name__} at {path or 'the argument'}. Mark it non-differentiable "
            f"(leave it out of argnums) or convert it with numpy.asarray."
        )


def _diff_mask(fname: str, leaves: Sequence[Any], allow_int: bool) -> list[bool]:
    mask = []
    for x in leaves:
        dt = core.get_aval(x).dtype
        if dtypes.is_differentiable(dt):
            mask.append(True)
        elif allow_int:
            mask.append(False)
        else:
            raise TypeError(
                f"{fname}: expected differentiable inputs of a float or complex dtype, got "
                f"{dt.name}. Cast the input to float, pass allow_int=True (its gradient is a "
                f"float0 zero), or use vjp for integer inputs."
            )
    return mask


def _zero_cotangent(x: Any) -> Any:
    aval = ad.tangent_aval(core.get_aval(x))
    return to_array(np.zeros(aval.shape, aval.dtype))


def _from_ct(ct: Any, primal: Any) -> Any:
    if type(ct) is ad.Zero:
        return _zero_cotangent(primal)
    return _output(ct)


def _check_holomorphic(fname: str, holomorphic: bool) -> None:
    if holomorphic:
        raise NotImplementedError(
            f"{fname}: expected holomorphic=False, got holomorphic=True. Complex "
            f"differentiation is not supported yet: differentiate the real and imaginary "
            f"parts as separate real functions."
        )


def _split_args(
    args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """The differentiated args (a tuple, in argnums order) and a function putting new
    values for them back into the full argument tuple."""
    diff = tuple(args[i] for i in argnums)

    def merge(new_diff: tuple[Any, ...]) -> tuple[Any, ...]:
        full = list(args)
        for i, v in zip(argnums, new_diff):
            full[i] = v
        return tuple(full)

    return diff, merge


# ---------------------------------------------------------------------------
# grad and value_and_grad
# ---------------------------------------------------------------------------


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` (``((value, aux), grad)`` with aux).

    ``holomorphic=True`` (complex differentiation) raises NotImplementedError: complex
    numbers are not supported yet.

    >>> import functrace as ft
    >>> ft.value_and_grad(lambda x: x ** 2)(3.0)
    (9.0, 6.0)
    """
    _check_holomorphic("grad", holomorphic)
    single = isinstance(argnums, int)
    nums_cache: dict[int, tuple[int, ...]] = {}
    origin: list[str] = []  # computed on first use: naming the function costs a few us

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums = nums_cache.get(len(args))
        if nums is None:
            nums = nums_cache[len(args)] = _normalize_argnums("grad", argnums, len(args))
            origin.append(f"grad of {describe_fun(fun)}")
        args = _plain_args("grad", fun, args, skip=nums)  # those: as leaves below
        if kwargs:
            kwargs = _plain_kwargs("grad", fun, kwargs)
        diff = tuple(args[i] for i in nums)
        if all(type(a) in _FLAT_LEAF_TYPES for a in diff):
            leaves, tree = list(diff), None  # fast path: every argument is one array
        else:
            leaves, tree = tree_flatten(diff)
        leaves = _plain_leaves("grad", fun, leaves, diff, nums)
        mask = _diff_mask("grad", leaves, allow_int)

        def flat_fun(*flat: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, flat if tree is None else tree_unflatten(tree, flat)):
                full[i] = v
            res = core.call_user("grad", fun, full, kwargs)
            out, aux = res if has_aux else (res, None)
            if has_aux and not (isinstance(res, tuple) and len(res) == 2):
                raise TypeError(
                    f"grad: expected {describe_fun(fun)} with has_aux=True to "
                    f"return a pair (output, aux), got {core.describe_value(res)}."
                )
            _check_scalar_output(fun, out)
            return ([out], aux) if has_aux else [out]

        outs, lin, aux = ad.linearize_flat(
            flat_fun, leaves, mask, origin=origin[0], has_aux=has_aux
        )
        ans = outs[0]
        cts = lin.transpose([np.ones((), core.get_aval(ans).dtype)])
        grads = [_from_ct(c, p) for c, p in zip(cts, leaves)]
        g_tree = tuple(grads) if tree is None else tree_unflatten(tree, grads)
        g = g_tree[0] if single else g_tree
        ans = _output(ans)
        return ((ans, aux), g) if has_aux else (ans, g)

    return value_and_grad_f


def _check_scalar_output(fun: Callable[..., Any], out: Any) -> None:
    if not core.is_array_like(out):
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a scalar array, got "
            f"{type(out).__name__}. Use has_aux=True to return extra values."
        )
    aval = core.get_aval(out)
    if aval.shape != ():
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a scalar (shape ()), got shape "
            f"{aval.shape} {aval.dtype.name}. grad needs a scalar loss: use .sum() or .mean() "
            f"on the output, or jacrev / vjp for non-scalar outputs."
        )
    if not dtypes.is_inexact(aval.dtype):
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a float scalar, got "
            f"{aval.dtype.name}. The output of an integer function has no gradient."
        )


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The gradient of scalar ``fun`` with respect to the arguments ``argnums``.

    ``holomorphic=True`` raises NotImplementedError (complex numbers are not supported).

    >>> import functrace as ft
    >>> ft.grad(lambda x, y: x * y + x ** 2)(2.0, 3.0)
    7.0
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return grad_f


# ---------------------------------------------------------------------------
# vjp, jvp, linearize
# ---------------------------------------------------------------------------


def _check_ct_leaf(x: Any, expected: core.ShapedArray, path: str) -> Any:
    if type(x) is ad.Zero:
        return x
    if not core.is_array_like(x):
        raise TypeError(
            f"vjp: expected an array cotangent at {path or 'the output'}, got {type(x).__name__}."
        )
    if _needs_plain(x):
        x = core.plain_array(x, "vjp", f"the cotangent at {path or 'the output'}")
    aval = core.get_aval(x)
    if aval.shape != expected.shape:
        raise ValueError(
            f"vjp: expected a cotangent of shape {expected.shape} at "
            f"{path or 'the output'}, got shape {aval.shape}."
        )
    if aval.dtype != expected.dtype and not (aval.weak_type and aval.dtype.kind in "iufc"):
        raise TypeError(
            f"vjp: expected a cotangent of dtype {expected.dtype.name} at "
            f"{path or 'the output'}, got {aval.dtype.name}."
        )
    if aval.dtype != expected.dtype:
        from functrace.lax.elementwise import convert_element_type

        x = convert_element_type(x, expected.dtype)
    return x


class _Pullback:
    """The ``vjp_fn`` of :func:`vjp`: the transposed linear map over its residuals.

    A pytree whose leaves are the residuals (the recorded map is static), so a
    pullback can be passed into ``jit`` as an argument: ``jit(lambda pb, ct: pb(ct))``.
    """

    __slots__ = ("lin", "in_tree", "out_tree", "in_avals")

    def __init__(self, lin: ad.LinearFunction, in_tree: Any, out_tree: Any, in_avals: Any) -> None:
        self.lin = lin
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)

    def __call__(self, ct: Any) -> tuple[Any, ...]:
        ct_leaves_paths, ct_tree = tree_flatten_with_path(ct)
        if ct_tree != self.out_tree:
            raise ValueError(structure_mismatch_message(self.out_tree, ct, "vjp cotangent"))
        ct_leaves = [
            _check_ct_leaf(x, a, keystr(p))
            for (p, x), a in zip(ct_leaves_paths, self.lin.out_avals)
        ]
        cts = self.lin.transpose(ct_leaves)
        return tuple(
            tree_unflatten(self.in_tree, [_from_ct_aval(c, a) for c, a in zip(cts, self.in_avals)])
        )

    def __repr__(self) -> str:
        return f"<vjp function: {len(self.lin.jaxpr.eqns)} equations>"


class _Pushforward:
    """The ``f_jvp`` of :func:`linearize`: the recorded linear map over its residuals
    (a pytree like the pullback of :func:`vjp`, so it can be passed into ``jit``)."""

    __slots__ = ("lin", "in_tree", "out_tree", "in_avals")

    def __init__(self, lin: ad.LinearFunction, in_tree: Any, out_tree: Any, in_avals: Any) -> None:
        self.lin = lin
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)

    def __call__(self, *tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != self.in_tree:
            raise ValueError(
                structure_mismatch_message(self.in_tree, tangents, "linearize tangents")
            )
        t_leaves = _check_tangents(self.in_avals, t_leaves)
        return tree_unflatten(self.out_tree, [_output(t) for t in self.lin.forward(t_leaves)])

    def __repr__(self) -> str:
        return f"<linearized function: {len(self.lin.jaxpr.eqns)} equations>"


def _linear_flatten(f: Any) -> tuple[list[Any], Any]:
    lin = f.lin
    static = (
        lin.jaxpr,
        tuple(lin.in_avals),
        tuple(lin.out_avals),
        tuple(lin.out_zero),
        tuple(lin.in_mask),
        f.in_tree,
        f.out_tree,
        f.in_avals,
    )
    return list(lin.consts), static


def _linear_unflatten(cls: type) -> Callable[[Any, Any], Any]:
    def unflatten(static: Any, consts: Any) -> Any:
        jaxpr, in_avals, out_avals, out_zero, in_mask, in_tree, out_tree, p_avals = static
        lin = ad.LinearFunction(
            jaxpr, list(consts), list(in_avals), list(out_avals), list(out_zero), list(in_mask)
        )
        return cls(lin, in_tree, out_tree, p_avals)

    return unflatten


def _register_linear_pytrees() -> None:
    from functrace.tree_util import register_pytree_node

    for cls in (_Pullback, _Pushforward):
        register_pytree_node(cls, _linear_flatten, _linear_unflatten(cls))


_register_linear_pytrees()


def _from_ct_aval(ct: Any, aval: core.ShapedArray) -> Any:
    if type(ct) is ad.Zero:
        t = ad.tangent_aval(aval)
        return np.zeros(t.shape, t.dtype)
    if (
        not isinstance(ct, Tracer)
        and np.ndim(ct) == 0
        and aval.shape == ()
        and not isinstance(ct, np.ndarray)
    ):
        return ct
    return _output(ct)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns one cotangent per primal.

    ``vjp_fn`` is a pytree (its leaves are the residuals), so it can be passed to a
    jitted function as an argument.

    >>> import functrace as ft, numpy as np
    >>> out, f_vjp = ft.vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> f_vjp(np.array([1.0, 1.0]))
    (array([2., 2.]),)
    """
    leaves, in_tree = tree_flatten(primals)
    leaves = _plain_leaves("vjp", fun, leaves, primals)
    for x in leaves:
        _check_array_leaf("vjp", x, "")
    out_tree_box: list[Any] = []

    def flat_fun(*flat: Any) -> Any:
        res = core.call_user("vjp", fun, tree_unflatten(in_tree, flat), {})
        out, aux = res if has_aux else (res, None)
        out_leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        return (out_leaves, aux) if has_aux else out_leaves

    mask = [dtypes.is_differentiable(core.get_aval(x).dtype) for x in leaves]
    outs, lin, aux = ad.linearize_flat(
        flat_fun, leaves, mask, origin=f"vjp of {describe_fun(fun)}", has_aux=has_aux
    )
    out_tree = out_tree_box[-1]
    vjp_fn = _Pullback(lin, in_tree, out_tree, [_plain_aval(x) for x in leaves])
    out = tree_unflatten(out_tree, [_output(o) for o in outs])
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _plain_aval(x: Any) -> core.ShapedArray:
    a = core.get_aval(x)
    return core.ShapedArray(a.shape, a.dtype, a.weak_type)


def _check_tangents(primals: Sequence[Any], tangents: Sequence[Any]) -> list[Any]:
    """Validate tangents against ``primals`` (values or their ShapedArrays)."""
    out = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        pa = p if isinstance(p, core.ShapedArray) else core.get_aval(p)
        if type(t) is ad.Zero:
            out.append(t)
            continue
        if not core.is_array_like(t):
            raise TypeError(
                f"jvp: expected an array tangent for primal leaf {i}, got {type(t).__name__}."
            )
        if _needs_plain(t):
            t = core.plain_array(t, "jvp", f"tangent leaf {i}")
        ta = core.get_aval(t)
        expected = dtypes.tangent_dtype(pa.dtype)
        if ta.shape != pa.shape:
            raise ValueError(
                f"jvp: expected tangent leaf {i} of shape {pa.shape} (the "
                f"primal's shape), got shape {ta.shape}."
            )
        if expected == dtypes.float0:
            out.append(ad.Zero(ad.tangent_aval(pa)))
            continue
        if ta.dtype != expected and not ta.weak_type and not pa.weak_type:
            raise TypeError(
                f"jvp: expected tangent leaf {i} of dtype {expected.name} (the "
                f"primal's dtype), got {ta.dtype.name}."
            )
        if ta.dtype != expected or not isinstance(t, (np.ndarray, np.generic, core.Tracer)):
            # a Python scalar (weak) tangent takes the tangent dtype of its primal
            from functrace.lax.elementwise import convert_element_type

            t = (
                convert_element_type(t, expected)
                if isinstance(t, core.Tracer)
                else np.asarray(t, expected)[()]
            )
        out.append(t)
    return out


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """Forward mode: ``(fun(*primals), J @ tangents)``.

    >>> import functrace as ft
    >>> ft.jvp(lambda x: x ** 3, (2.0,), (1.0,))
    (8.0, 12.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"jvp: expected primals and tangents as tuples or lists, got "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_flatten(tuple(primals))
    p_leaves = _plain_leaves("jvp", fun, p_leaves, tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(structure_mismatch_message(p_tree, tuple(tangents), "jvp tangents"))
    t_leaves = _check_tangents(p_leaves, t_leaves)
    out_tree_box: list[Any] = []

    def flat_fun(*flat: Any) -> Any:
        res = core.call_user("jvp", fun, tree_unflatten(p_tree, flat), {})
        out, aux = res if has_aux else (res, None)
        out_leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        return (out_leaves, aux) if has_aux else out_leaves

    res = ad.jvp_flat(
        flat_fun, p_leaves, t_leaves, origin=f"jvp of {describe_fun(fun)}", has_aux=has_aux
    )
    outs, t_outs = res[0], res[1]
    out_tree = out_tree_box[-1]
    primal_out = tree_unflatten(out_tree, [_output(o) for o in outs])
    tangent_out = tree_unflatten(out_tree, [_from_ct(t, p) for t, p in zip(t_outs, outs)])
    return (primal_out, tangent_out, res[2]) if has_aux else (primal_out, tangent_out)


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` applies the recorded
    linear map (the primal computation is not repeated); ``(out, f_jvp, aux)`` with
    ``has_aux``. ``f_jvp`` is a pytree over its residuals, so it can be passed to
    ``jit`` as an argument."""
    leaves, in_tree = tree_flatten(primals)
    leaves = _plain_leaves("linearize", fun, leaves, primals)
    out_tree_box: list[Any] = []

    flat_fun = _jac_flat_fun("linearize", fun, lambda a: a, in_tree, out_tree_box, has_aux)

    mask = [dtypes.is_differentiable(core.get_aval(x).dtype) for x in leaves]
    outs, lin, aux = ad.linearize_flat(
        flat_fun, leaves, mask, origin=f"linearize of {describe_fun(fun)}", has_aux=has_aux
    )
    out_tree = out_tree_box[-1]
    f_jvp = _Pushforward(lin, in_tree, out_tree, [_plain_aval(x) for x in leaves])
    out = tree_unflatten(out_tree, [_output(o) for o in outs])
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# ---------------------------------------------------------------------------
# Jacobians and Hessians
# ---------------------------------------------------------------------------


def _std_basis(aval: core.ShapedArray) -> np.ndarray:
    """The identity as ``size`` stacked basis arrays of ``aval``'s shape."""
    n = aval.size
    return np.eye(n, dtype=aval.dtype).reshape((n, *aval.shape))


def _jac_leaf(
    stacked: Any, o_shape: tuple[int, ...], in_shape: tuple[int, ...], basis_first: bool
) -> Any:
    """Arrange a batch of derivatives (basis axis first) as ``out_shape + in_shape``."""
    from functrace import numpy as fnp

    if basis_first:  # rows of jacrev: (out_size, *in_shape)
        return _output(fnp.reshape(stacked, (*o_shape, *in_shape)))
    # columns of jacfwd: (in_size, *o_shape) -> (*o_shape, in_size)
    moved = fnp.moveaxis(stacked, 0, -1) if len(o_shape) else stacked
    return _output(fnp.reshape(moved, (*o_shape, *in_shape)))


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by forward mode: one batched JVP (``vmap``) over the input basis.

    The result has shape ``out.shape + in.shape`` per (output leaf, input leaf);
    ``(jacobian, aux)`` with ``has_aux`` (``fun`` returns ``(output, aux)``).
    ``holomorphic=True`` raises NotImplementedError (complex numbers are not supported).

    >>> import functrace as ft, functrace.numpy as fnp, numpy as np
    >>> ft.jacfwd(fnp.sin)(np.zeros(2))
    array([[1., 0.],
           [0., 1.]])
    """
    from functrace.interpreters import batching

    _check_holomorphic("jacfwd", holomorphic)
    single = isinstance(argnums, int)

    @functools.wraps(fun)
    def jac_f(*args: Any) -> Any:
        nums = _normalize_argnums("jacfwd", argnums, len(args))
        args = _plain_args("jacfwd", fun, args, skip=nums)  # those: as leaves below
        diff, merge = _split_args(args, nums)
        leaves, tree = tree_flatten(diff)
        leaves = _plain_leaves("jacfwd", fun, leaves, diff, nums)
        _diff_mask("jacfwd", leaves, False)
        out_tree_box: list[Any] = []

        flat_fun = _jac_flat_fun("jacfwd", fun, merge, tree, out_tree_box, has_aux)
        outs, lin, aux = ad.linearize_flat(
            flat_fun, leaves, origin=f"jacfwd of {describe_fun(fun)}", has_aux=has_aux
        )
        out_tree = out_tree_box[-1]
        per_input = []
        for i, x in enumerate(leaves):
            aval = core.get_aval(x)
            zeros = [ad.Zero(ad.tangent_aval(core.get_aval(y))) for y in leaves]

            def push(t: Any, i: int = i, zeros: list[Any] = zeros) -> list[Any]:
                return lin.forward([t if j == i else z for j, z in enumerate(zeros)])

            cols, col_dims = batching.vmap_flat(
                push, aval.size, [_std_basis(aval)], [0], origin=f"jacfwd of {describe_fun(fun)}"
            )
            jac_k = []
            for o, c, d in zip(outs, cols, col_dims):
                o_shape = core.get_aval(o).shape
                c = batching.bdim_at(c, d, aval.size, 0)
                jac_k.append(_jac_leaf(c, o_shape, aval.shape, basis_first=False))
            per_input.append(jac_k)
        jac = _assemble_jacobian(per_input, tree, out_tree, single)
        return (jac, aux) if has_aux else jac

    return jac_f


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one batched VJP (``vmap``) over the output basis.

    ``(jacobian, aux)`` with ``has_aux``; ``allow_int`` gives float0 zeros for integer
    inputs; ``holomorphic=True`` raises NotImplementedError (complex numbers are not
    supported yet).

    >>> import functrace as ft, functrace.numpy as fnp, numpy as np
    >>> ft.jacrev(lambda x: x * x)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    from functrace.interpreters import batching

    _check_holomorphic("jacrev", holomorphic)
    single = isinstance(argnums, int)

    @functools.wraps(fun)
    def jac_f(*args: Any) -> Any:
        nums = _normalize_argnums("jacrev", argnums, len(args))
        args = _plain_args("jacrev", fun, args, skip=nums)  # those: as leaves below
        diff, merge = _split_args(args, nums)
        leaves, tree = tree_flatten(diff)
        leaves = _plain_leaves("jacrev", fun, leaves, diff, nums)
        mask = _diff_mask("jacrev", leaves, allow_int)
        out_tree_box: list[Any] = []
        flat_fun = _jac_flat_fun("jacrev", fun, merge, tree, out_tree_box, has_aux)
        outs, lin, aux = ad.linearize_flat(
            flat_fun, leaves, mask, origin=f"jacrev of {describe_fun(fun)}", has_aux=has_aux
        )
        out_tree = out_tree_box[-1]
        rows_per_out = []
        for k, o in enumerate(outs):
            o_aval = ad.tangent_aval(core.get_aval(o))
            zeros = [ad.Zero(ad.tangent_aval(core.get_aval(y))) for y in outs]

            def pull(ct: Any, k: int = k, zeros: list[Any] = zeros) -> list[Any]:
                cts = lin.transpose([ct if j == k else z for j, z in enumerate(zeros)])
                return [ad.instantiate(c) for c in cts]

            rows, row_dims = batching.vmap_flat(
                pull,
                o_aval.size,
                [_std_basis(o_aval)],
                [0],
                origin=f"jacrev of {describe_fun(fun)}",
            )
            rows_per_out.append((o_aval, rows, row_dims))
        per_input = []
        for i, x in enumerate(leaves):
            in_shape = core.get_aval(x).shape
            jac_k = []
            for o_aval, rows, row_dims in rows_per_out:
                r = batching.bdim_at(rows[i], row_dims[i], o_aval.size, 0)
                jac_k.append(_jac_leaf(r, o_aval.shape, in_shape, basis_first=True))
            per_input.append(jac_k)
        jac = _assemble_jacobian(per_input, tree, out_tree, single)
        return (jac, aux) if has_aux else jac

    return jac_f


def _jac_flat_fun(
    fname: str,
    fun: Callable[..., Any],
    merge: Callable[[Any], tuple[Any, ...]],
    tree: Any,
    out_tree_box: list[Any],
    has_aux: bool,
) -> Callable[..., Any]:
    def flat_fun(*fl: Any) -> Any:
        res = core.call_user(fname, fun, merge(tree_unflatten(tree, fl)), {})
        if has_aux and not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError(
                f"{fname}: expected {describe_fun(fun)} with has_aux=True to return a pair "
                f"(output, aux), got {core.describe_value(res)}."
            )
        out, aux = res if has_aux else (res, None)
        o, ot = tree_flatten(out)
        out_tree_box.append(ot)
        return (o, aux) if has_aux else o

    return flat_fun


def _assemble_jacobian(
    per_input: list[list[Any]], in_tree: Any, out_tree: Any, single: bool
) -> Any:
    # Result structure: out_tree of (in_tree of arrays), like JAX.
    n_out = out_tree.num_leaves
    by_out = []
    for k in range(n_out):
        in_struct = tree_unflatten(in_tree, [per_input[i][k] for i in range(len(per_input))])
        by_out.append(in_struct[0] if single else in_struct)
    return tree_unflatten(out_tree, by_out)


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Hessian, ``jacfwd(jacrev(fun))`` (``(hessian, aux)`` with ``has_aux``)."""
    _check_holomorphic("hessian", holomorphic)
    if not has_aux:
        return jacfwd(jacrev(fun, argnums), argnums)
    return jacfwd(jacrev(fun, argnums, has_aux=True), argnums, has_aux=True)


def jacobian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian: :func:`jacrev` (same arguments and result)."""
    return jacrev(fun, argnums, has_aux, holomorphic, allow_int)


# ---------------------------------------------------------------------------
# make_jaxpr and eval_shape
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Gradient control
# ---------------------------------------------------------------------------


def stop_gradient(x: Any) -> Any:
    """Identity on a pytree of arrays whose derivative is zero (PyTorch's ``detach``).

    >>> import functrace as ft
    >>> ft.grad(lambda x: x * ft.stop_gradient(x))(3.0)
    3.0
    """
    from functrace.lax.elementwise import stop_gradient as sg

    return tree_map(lambda v: sg(v) if isinstance(v, Tracer) else v, x)


__all__ = [
    "eval_shape",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "linearize",
    "make_jaxpr",
    "stop_gradient",
    "tree_structure",
    "value_and_grad",
    "vjp",
    "vmap",
]


# ---------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------


def _axes_for(fname: str, prefix: Any, tree: Any, where: str) -> list[int | None]:
    """Broadcast an ``in_axes`` prefix over ``tree``'s leaves."""
    from functrace.tree_util import tree_leaves

    if prefix is None or isinstance(prefix, (int, np.integer)):
        return [None if prefix is None else int(prefix)] * len(tree_leaves(tree))
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(
                f"{fname}: expected in_axes at {where} with keys "
                f"{sorted(tree)}, got keys {sorted(prefix)}."
            )
        out: list[int | None] = []
        for k in sorted(tree):
            out += _axes_for(fname, prefix[k], tree[k], f"{where}[{k!r}]")
        return out
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            raise ValueError(
                f"{fname}: expected in_axes at {where} with {len(tree)} entries "
                f"(one per element), got {len(prefix)}."
            )
        out = []
        for k, (p, t) in enumerate(zip(prefix, tree)):
            out += _axes_for(fname, p, t, f"{where}[{k}]")
        return out
    raise ValueError(
        f"{fname}: expected in_axes at {where} to be an int, None, or a "
        f"tuple/list/dict prefix of the argument, got {prefix!r} for a "
        f"{type(tree).__name__} argument."
    )


def vmap(
    fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None
) -> Callable[..., Any]:
    """Map ``fun`` over a batch axis of its arguments.

    ``in_axes``: int, None (not mapped) or a prefix pytree of the positional arguments;
    keyword arguments are always mapped over their axis 0 (as in JAX);
    ``out_axes``: int or None, or a prefix of the output.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: (x * x).sum())(np.arange(6.0).reshape(2, 3))
    array([ 5., 50.])
    """
    from functrace.interpreters import batching

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, list) and len(args) == 1 and not isinstance(args[0], list):
            axes_prefix: Any = tuple(in_axes)
        else:
            axes_prefix = in_axes
        if isinstance(axes_prefix, (tuple, list)):
            if len(axes_prefix) != len(args):
                raise ValueError(
                    f"vmap: expected in_axes with one entry per positional argument of "
                    f"{describe_fun(fun)} ({len(args)}), got {len(axes_prefix)}: {in_axes!r}."
                )
            axes = []
            for i, (p, a) in enumerate(zip(axes_prefix, args)):
                axes += _axes_for("vmap", p, a, f"argument {i}")
        else:
            axes = _axes_for("vmap", axes_prefix, args, "the arguments")
        kw_paths, kw_tree = tree_flatten_with_path(kwargs)
        leaves_paths, arg_tree = tree_flatten_with_path(args)
        n_pos = len(leaves_paths)
        axes += [0] * len(kw_paths)
        labels = [f"args{keystr(p)}" for p, _ in leaves_paths]
        labels += [f"keyword argument {keystr(p)[2:-2]}" for p, _ in kw_paths]
        where_v = f"vmap of {describe_fun(fun)}"
        leaves = _plain_leaves("vmap", fun, [x for _, x in leaves_paths], args) + [
            core.plain_array(x, where_v, labels[n_pos + i])
            if isinstance(x, np.ndarray) and not core.is_plain_array(x)
            else x
            for i, (_, x) in enumerate(kw_paths)
        ]
        leaves_paths += kw_paths
        sizes: dict[str, int] = {}
        dims: list[int | None] = []
        for k, ((_path, x), ax) in enumerate(zip(leaves_paths, axes)):
            if core.int64_overflow(x):  # its aval (int64) could not describe it
                raise core.int64_overflow_error(where_v, x, f"for argument {labels[k]}")
            if ax is None:
                dims.append(None)
                continue
            where = labels[k]
            if not core.is_array_like(x):
                raise TypeError(
                    f"vmap: expected an array at {where} mapped over "
                    f"axis {ax}, got {type(x).__name__}."
                )
            nd = core.get_aval(x).ndim
            if not -nd <= ax < nd:
                raise ValueError(
                    f"vmap: expected in_axes in [{-nd}, {nd}) for {where} of shape "
                    f"{core.get_aval(x).shape}, got {ax}"
                    + (" (keyword arguments are mapped over axis 0)." if k >= n_pos else ".")
                )
            ax %= nd
            dims.append(ax)
            sizes[where] = core.get_aval(x).shape[ax]
        distinct = set(sizes.values()) | ({axis_size} if axis_size is not None else set())
        if len(distinct) > 1:
            detail = ", ".join(f"{k} has size {v}" for k, v in sizes.items())
            if axis_size is not None:
                detail += f", axis_size={axis_size}"
            raise ValueError(f"vmap: expected all mapped axes to have one size, got {detail}.")
        if not distinct:
            raise ValueError(
                "vmap: expected at least one mapped argument or axis_size, got "
                "in_axes mapping nothing. Pass axis_size=N."
            )
        size = distinct.pop()
        out_tree_box: list[Any] = []

        def flat_fun(*flat: Any) -> list[Any]:
            a = tree_unflatten(arg_tree, flat[:n_pos])
            kw = tree_unflatten(kw_tree, flat[n_pos:])
            out_leaves, out_tree = tree_flatten(core.call_user("vmap", fun, a, kw))
            out_tree_box.append(out_tree)
            return out_leaves

        outs, out_dims = batching.vmap_flat(
            flat_fun, size, leaves, dims, origin=f"vmap of {describe_fun(fun)}"
        )
        out_tree = out_tree_box[-1]
        out_ax = (
            _axes_for("vmap", out_axes, tree_unflatten(out_tree, [0] * len(outs)), "the output")
            if not isinstance(out_axes, (int, type(None)))
            else [out_axes] * len(outs)
        )
        final = []
        for o, d, ax in zip(outs, out_dims, out_ax):
            if ax is None:
                if d is not None:
                    raise ValueError(
                        f"vmap: expected an unbatched output for out_axes=None "
                        f"in {describe_fun(fun)}, got an output that depends on "
                        f"the mapped inputs."
                    )
                final.append(_output(o))
                continue
            nd = core.get_aval(o).ndim + (d is None)
            if not -nd <= ax < nd:
                raise ValueError(
                    f"vmap: expected out_axes in [{-nd}, {nd}) for an output of "
                    f"{nd} dimensions (batch included), got {ax}."
                )
            final.append(_output(batching.bdim_at(o, d, size, ax % nd)))
        return tree_unflatten(out_tree, final)

    return vmapped
