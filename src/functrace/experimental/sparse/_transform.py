"""``sparsify``: run a function written for dense arrays on BCOO arguments, and the
sparse-aware ``grad``/``value_and_grad``.

``sparsify(f)(*args)`` traces ``f`` to a jaxpr with each BCOO argument standing as a
dense array of its shape and dtype, then evaluates the jaxpr equation by equation:
an equation with only dense inputs binds its primitive (so outer transforms see it),
one with a BCOO input goes through the sparse rule of its primitive, which returns a
BCOO or a dense array as JAX's rules do. A primitive without a rule is a
``NotImplementedError`` naming it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace._array import to_array
from functrace.api import jacfwd as _dense_jacfwd
from functrace.api import jacrev as _dense_jacrev
from functrace.api import value_and_grad as _dense_value_and_grad
from functrace.core import ShapedArray, describe_fun
from functrace.experimental.sparse._bcoo import (
    _ARITH,
    BCOO,
    _like,
    _unique,
    bcoo_reduce_sum,
    bcoo_transpose,
)
from functrace.experimental.sparse._products import (
    _add,
    _multiply,
    bcoo_dot_general,
    bcoo_multiply_dense,
)
from functrace.experimental.sparse._shapes import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dynamic_slice,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
)
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import Literal, Var, dce_jaxpr
from functrace.tree_util import tree_flatten, tree_unflatten

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "sparsify", "value_and_grad"]

_is_sparse = lambda x: isinstance(x, BCOO)  # noqa: E731

# Elementwise primitives with f(0) == 0. The linear ones may act on the data of
# repeated indices as they are; the others need repeated indices summed first.
_LINEAR_UNARY = ("neg", "conj", "real", "imag", "copy")
_UNARY = (
    "abs", "asin", "asinh", "atan", "atanh", "expm1", "log1p", "sign", "sin", "sinh",
    "sqrt", "square", "tan", "tanh", "convert_element_type",
)  # fmt: skip
# Primitives whose result is dense for a sparse input (f(0) != 0).
_DENSIFYING = (
    "acos", "acosh", "cos", "cosh", "eq", "exp", "ge", "gt", "le", "lt", "log", "ne", "xor",
)  # fmt: skip


class _Dense:
    """A dense value that a ``broadcast_in_dim`` made from a smaller one: products with
    a BCOO read the smaller one, as JAX's jaxprs (which leave scalars unbroadcast) do."""

    __slots__ = ("value", "source", "dims")

    def __init__(self, value: Any, source: Any, dims: tuple[int, ...]) -> None:
        self.value, self.source, self.dims = value, source, dims


def _sparse_rule_missing(name: str) -> NotImplementedError:
    if name in _DENSIFYING:
        return NotImplementedError(
            f"sparsify: the primitive '{name}' has no sparse rule: its result would be dense "
            f"(it does not map 0 to 0). Call sparse.todense() on the argument first if a "
            f"dense result is intended."
        )
    return NotImplementedError(
        f"sparsify: the primitive '{name}' has no sparse rule (functrace's sparsify "
        f"handles products, elementwise add/sub/mul/div, zero-preserving unary "
        f"functions, sums, transposes, reshapes, squeezes, broadcasts, concatenations, "
        f"slices and reversals of BCOO arrays)."
    )


def _unary(name: str, linear: bool) -> Callable[..., Any]:
    def rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
        (x,) = args
        mat = x if linear else _unique(x)
        return _like(mat, prim.bind(mat.data, **params))

    rule.__name__ = f"sparse_{name}"
    return rule


def _integer_pow(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    if params["y"] <= 0:
        raise NotImplementedError(
            f"sparsify: integer_pow with the exponent {params['y']} has no sparse rule: its "
            f"result would be dense. Call sparse.todense() first if that is intended."
        )
    return _unary("integer_pow", False)(prim, args, params)


def _dense_operand(x: Any) -> Any:
    return x.value if isinstance(x, _Dense) else x


def _small_operand(x: Any, shape: tuple[int, ...]) -> Any:
    """The operand of a product with a sparse array of ``shape``: a broadcast scalar as
    the scalar, a broadcast array as itself with unit axes where it was broadcast."""
    if not isinstance(x, _Dense):
        return x
    src_shape = tuple(core.get_aval(x.source).shape)
    if not src_shape:
        return x.source
    if list(x.dims) != sorted(x.dims):
        return x.value
    full = [1] * len(shape)
    for d, s in zip(x.dims, src_shape):
        full[d] = s
    return fnp.reshape(x.source, tuple(full))


def _add_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    a, b = (_dense_operand(x) for x in args)
    return _add(a, b, "sparsify (add)", shared=True)


def _sub_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    a, b = (_dense_operand(x) for x in args)
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return _add(a, -b, "sparsify (sub)", shared=True)
    raise NotImplementedError(
        "sparsify: subtraction between a sparse and a dense array is not supported, as in "
        "JAX; call sparse.todense() on the sparse one first."
    )


def _mul_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    a, b = args
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return _multiply(a, b, shared=True)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    return _like(sp, bcoo_multiply_dense(sp, _small_operand(other, sp.shape)))


def _div_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    a, b = args
    if isinstance(b, BCOO):
        raise NotImplementedError(
            "sparsify: division by a sparse array has no sparse rule: its result would be "
            "dense. Call sparse.todense() first if that is intended."
        )
    v = _small_operand(b, a.shape)
    return _like(a, bcoo_multiply_dense(a, fnp.true_divide(1.0, v)))


def _dot_general_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    a, b = (_dense_operand(x) for x in args)
    return bcoo_dot_general(
        a,
        b,
        dimension_numbers=params["dimension_numbers"],
        preferred_element_type=params.get("preferred_element_type"),
    )


def _transpose_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    (x,) = args
    return bcoo_transpose(x, permutation=params["permutation"])


def _reduce_sum_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    (x,) = args
    out = bcoo_reduce_sum(x, axes=params["axes"])
    if out.shape == ():
        return fnp.sum(out.data)
    return out


def _reshape_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    return bcoo_reshape(args[0], new_sizes=params["new_sizes"], dimensions=params.get("dimensions"))


def _squeeze_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    return bcoo_squeeze(args[0], dimensions=params["dimensions"])


def _broadcast_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    return bcoo_broadcast_in_dim(
        args[0], shape=params["shape"], broadcast_dimensions=params["broadcast_dimensions"]
    )


def _concatenate_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    if not all(isinstance(a, BCOO) for a in args):
        raise NotImplementedError(
            "sparsify: concatenate of sparse and dense arrays has no sparse rule; convert "
            "the dense ones with BCOO.fromdense (or the sparse ones with sparse.todense)."
        )
    return bcoo_concatenate(args, dimension=params["dimension"])


def _slice_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    return bcoo_slice(
        args[0],
        start_indices=params["start_indices"],
        limit_indices=params["limit_indices"],
        strides=params.get("strides"),
    )


def _dynamic_slice_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    x, *starts = args
    if any(isinstance(s, BCOO) for s in starts):
        raise NotImplementedError("sparsify: dynamic_slice with sparse start indices.")
    starts = [_dense_operand(s) for s in starts]
    return bcoo_dynamic_slice(x, starts, slice_sizes=params["slice_sizes"])


def _rev_rule(prim: Any, args: list[Any], params: dict[str, Any]) -> Any:
    return bcoo_rev(args[0], dimensions=params["dimensions"])


_RULES: dict[str, Callable[..., Any]] = {
    **{n: _unary(n, True) for n in _LINEAR_UNARY},
    **{n: _unary(n, False) for n in _UNARY},
    "integer_pow": _integer_pow,
    "add": _add_rule,
    "sub": _sub_rule,
    "mul": _mul_rule,
    "div": _div_rule,
    "dot_general": _dot_general_rule,
    "transpose": _transpose_rule,
    "reduce_sum": _reduce_sum_rule,
    "reshape": _reshape_rule,
    "squeeze": _squeeze_rule,
    "broadcast_in_dim": _broadcast_rule,
    "concatenate": _concatenate_rule,
    "slice": _slice_rule,
    "dynamic_slice": _dynamic_slice_rule,
    "rev": _rev_rule,
}


def _eval_sparse(jaxpr: Any, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    env: dict[Var, Any] = {}

    def read(x: Any) -> Any:
        return x.val if isinstance(x, Literal) else env[x]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals = [read(x) for x in eqn.inputs]
        prim = eqn.primitive
        if not any(isinstance(v, BCOO) for v in vals):
            out = prim.bind(*[_dense_operand(v) for v in vals], **eqn.params)
            if prim.name == "broadcast_in_dim" and not prim.multiple_results:
                out = _Dense(out, vals[0], tuple(eqn.params["broadcast_dimensions"]))
        else:
            rule = _RULES.get(prim.name)
            if rule is None:
                raise _sparse_rule_missing(prim.name)
            out = rule(prim, vals, dict(eqn.params))
        outs = out if prim.multiple_results else [out]
        env.update(zip(eqn.out_binders, outs))
    return [_dense_operand(read(x)) for x in jaxpr.outvars]


def _aval(x: Any) -> ShapedArray:
    if isinstance(x, BCOO):
        return ShapedArray(x.shape, x.dtype)
    try:
        a = core.get_aval(x)
    except TypeError:
        raise TypeError(
            f"sparsify: expected arrays, scalars or BCOO arrays as arguments, got "
            f"{type(x).__name__}."
        ) from None
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """A version of ``f`` that takes BCOO arrays wherever ``f`` takes dense ones
    (anywhere in its pytree arguments) and returns BCOO arrays where its sparse rules
    give them (see the module docstring for the primitives handled). ``use_tracer`` is
    accepted and changes nothing: functrace always traces ``f`` once per call and
    interprets the jaxpr (JAX's default too). ``sparse.todense`` inside ``f`` sees a
    dense stand-in and returns it unchanged, so the value stays sparse there (JAX
    densifies it)."""
    del use_tracer
    if not callable(f):
        raise TypeError(f"sparsify: expected a callable, got {type(f).__name__}.")

    @functools.wraps(f)
    def sparsified(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = tree_flatten((args, kwargs), is_leaf=_is_sparse)
        avals = [_aval(x) for x in leaves]
        out_tree: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            a, k = tree_unflatten(tree, xs)
            out_leaves, t = tree_flatten(core.call_user("sparsify", f, list(a), k))
            out_tree.append(t)
            return out_leaves

        closed, _ = trace_to_jaxpr(flat, avals, origin=f"sparsify of {describe_fun(f)}")
        jaxpr = dce_jaxpr(closed.jaxpr)
        plain = [x if isinstance(x, BCOO) else _plain(x) for x in leaves]
        outs = _eval_sparse(jaxpr, closed.consts, plain)
        return tree_unflatten(
            out_tree[-1], [x if isinstance(x, BCOO) else to_array(x) for x in outs]
        )

    return sparsified


def _getitem(mat: BCOO, idx: Any) -> Any:
    """``mat[idx]`` through ``sparsify`` of dense indexing, as JAX's: integers, slices,
    ``None`` and ``...``; array indices are a NotImplementedError."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for it in items:
        ok = (
            it is None
            or it is Ellipsis
            or isinstance(it, slice)
            or (isinstance(it, (int, np.integer)) and not isinstance(it, bool))
        )
        if not ok:
            raise NotImplementedError(
                f"BCOO.__getitem__: only integers, slices, None and ... index a BCOO array, "
                f"got {type(it).__name__}."
            )
    return sparsify(lambda m: m[idx])(mat)


_ARITH.update(getitem=_getitem)


def _plain(x: Any) -> Any:
    if isinstance(x, (core.Tracer, np.ndarray, np.generic, bool, int, float, complex)):
        return x
    return np.asarray(x)


# ---------------------------------------------------------------------------
# Sparse-aware derivatives
# ---------------------------------------------------------------------------


def _split_sparse(
    args: tuple[Any, ...], nums: tuple[int, ...]
) -> tuple[list[Any], Callable[..., Any], Callable[..., Any]]:
    """The arguments with each BCOO among the differentiated ones replaced by its data,
    a function rebuilding the arguments from those, and one turning a gradient of the
    data back into a BCOO with the argument's indices."""
    trees = {}
    new_args = list(args)
    for i in nums:
        leaves, tree = tree_flatten(args[i], is_leaf=_is_sparse)
        trees[i] = (leaves, tree)
        new_args[i] = tree_unflatten(tree, [x.data if isinstance(x, BCOO) else x for x in leaves])

    def rebuild(*xs: Any) -> list[Any]:
        out = list(xs)
        for i, (leaves, tree) in trees.items():
            got = tree_flatten(xs[i])[0]  # a BCOO's data is one leaf
            out[i] = tree_unflatten(
                tree, [_like(o, g) if isinstance(o, BCOO) else g for o, g in zip(leaves, got)]
            )
        return out

    def regrad(i: int, g: Any) -> Any:
        leaves, tree = trees[i]
        got = tree_flatten(g)[0]
        return tree_unflatten(
            tree, [_like(o, v) if isinstance(o, BCOO) else v for o, v in zip(leaves, got)]
        )

    return new_args, rebuild, regrad


def _nums(fname: str, argnums: Any, n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    for a in nums:
        if not -n <= int(a) < n:
            raise ValueError(f"{fname}: argnums {argnums!r} out of range for {n} arguments.")
    return tuple(int(a) % n for a in nums)


def value_and_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """``functrace.value_and_grad`` where a BCOO argument is differentiated in its
    ``data`` only: its gradient is a BCOO with the same indices (JAX's
    ``sparse.value_and_grad``)."""

    @functools.wraps(fun)
    def vg(*args: Any, **kw: Any) -> Any:
        nums = _nums("sparse.value_and_grad", argnums, len(args))
        new_args, rebuild, regrad = _split_sparse(args, nums)

        def dense_fun(*xs: Any, **k: Any) -> Any:
            return fun(*rebuild(*xs), **k)

        value, g = _dense_value_and_grad(dense_fun, argnums=argnums, has_aux=has_aux, **kwargs)(
            *new_args, **kw
        )
        if isinstance(argnums, (int, np.integer)):
            return value, regrad(nums[0], g)
        return value, tuple(regrad(i, gi) for i, gi in zip(nums, g))

    return vg


def grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """``functrace.grad`` where a BCOO argument is differentiated in its ``data`` only:
    its gradient is a BCOO with the same indices (JAX's ``sparse.grad``)."""
    vg = value_and_grad(fun, argnums=argnums, has_aux=has_aux, **kwargs)

    @functools.wraps(fun)
    def g(*args: Any, **kw: Any) -> Any:
        value, gr = vg(*args, **kw)
        if has_aux:
            return gr, value[1]
        return gr

    return g


def _sparse_jac(name: str, dense_jac: Callable[..., Any]) -> Callable[..., Any]:
    def make(
        fun: Callable[..., Any],
        argnums: int | Sequence[int] = 0,
        has_aux: bool = False,
        **kwargs: Any,
    ) -> Callable[..., Any]:
        @functools.wraps(fun)
        def jac(*args: Any, **kw: Any) -> Any:
            nums = _nums(f"sparse.{name}", argnums, len(args))
            new_args, rebuild, regrad = _split_sparse(args, nums)

            def dense_fun(*xs: Any, **k: Any) -> Any:
                return fun(*rebuild(*xs), **k)

            out = dense_jac(dense_fun, argnums=argnums, has_aux=has_aux, **kwargs)(*new_args, **kw)
            j, aux = out if has_aux else (out, None)

            def back(i: int, g: Any) -> Any:
                leaves, tree = tree_flatten(args[i], is_leaf=_is_sparse)
                if any(isinstance(x, BCOO) for x in leaves) and all(
                    core.get_aval(x).shape == _data_shape(o)
                    for o, x in zip(leaves, tree_flatten(g)[0])
                ):
                    return regrad(i, g)
                return g

            if isinstance(argnums, (int, np.integer)):
                res = back(nums[0], j)
            else:
                res = tuple(back(i, ji) for i, ji in zip(nums, j))
            return (res, aux) if has_aux else res

        return jac

    make.__name__ = name
    return make


def _data_shape(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x.data if isinstance(x, BCOO) else x).shape)


_jacfwd = _sparse_jac("jacfwd", _dense_jacfwd)
_jacrev = _sparse_jac("jacrev", _dense_jacrev)


def jacfwd(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """``functrace.jacfwd`` where a BCOO argument is differentiated in its ``data``
    only (JAX's ``sparse.jacfwd``). For a scalar output the derivative is a BCOO with
    the argument's indices; for other outputs it is the dense Jacobian of the data, of
    shape ``(*out_shape, *data.shape)`` (JAX returns a BCOO with batch dimensions, whose
    ``data`` is this array)."""
    return _jacfwd(fun, argnums=argnums, has_aux=has_aux, **kwargs)


def jacrev(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """``functrace.jacrev`` where a BCOO argument is differentiated in its ``data``
    only (JAX's ``sparse.jacrev``); results as :func:`jacfwd`'s."""
    return _jacrev(fun, argnums=argnums, has_aux=has_aux, **kwargs)


jacobian = jacrev
