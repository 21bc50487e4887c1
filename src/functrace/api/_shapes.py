"""Shape tools: ``ShapeDtypeStruct``, ``make_jaxpr`` (the IR of a function on its
arguments' shapes and dtypes, and with ``return_shape=True`` its output shapes) and
``eval_shape`` (its output shapes), without computing."""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np

from functrace import core, dtypes
from functrace._prng import PRNGKeyArray
from functrace.api._args import _normalize_argnums, _plain_leaves
from functrace.core import describe_fun
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr
from functrace.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array (``jax.ShapeDtypeStruct``): what
    ``eval_shape`` returns, and what it, ``linear_transpose``, ``closure_convert`` and
    ``pure_callback`` (its result types) accept in place of arrays. ``sharding`` is
    kept for JAX programs (one device: nothing to place).

    >>> import numpy as np
    >>> ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(
        self, shape: Sequence[int], dtype: Any, *, sharding: Any = None, weak_type: bool = False
    ) -> None:
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: expected a dtype, got None.")
        try:
            dims = tuple(operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(
                f"ShapeDtypeStruct: expected a shape as a sequence of ints, got {shape!r}."
            ) from None
        self.shape: tuple[int, ...] = dims
        # a typed key array's dtype (key<fry>) is not a NumPy one
        self.dtype = dtype if isinstance(dtype, dtypes.KeyDtype) else np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The shape and dtype of ``x`` (an array, a scalar, a tracer, an abstract value
        or another ``ShapeDtypeStruct``), as ``jax.ShapeDtypeStruct.like``."""
        if isinstance(x, ShapeDtypeStruct):
            return cls(x.shape, x.dtype, sharding=x.sharding, weak_type=x.weak_type)
        if type(x) is PRNGKeyArray:
            return cls(x.shape, dtypes.KEY_FRY)
        try:
            a = x if isinstance(x, core.ShapedArray) else core.get_aval(x)
        except TypeError:
            raise TypeError(
                f"ShapeDtypeStruct.like: expected an array, a scalar or a ShapeDtypeStruct, "
                f"got {type(x).__name__}."
            ) from None
        return cls(a.shape, a.dtype, weak_type=a.weak_type)

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def update(self, **kwargs: Any) -> ShapeDtypeStruct:
        """A copy with the given fields (``shape``, ``dtype``, ``sharding``,
        ``weak_type``) replaced."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: unknown fields {sorted(unknown)}.")
        fields.update(kwargs)
        return ShapeDtypeStruct(
            fields["shape"],
            fields["dtype"],
            sharding=fields["sharding"],
            weak_type=fields["weak_type"],
        )

    def _key(self) -> tuple[Any, ...]:
        return (self.shape, self.dtype, self.sharding, self.weak_type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        shard = f", sharding={self.sharding!r}" if self.sharding is not None else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{shard}{weak})"


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


@overload
def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    return_shape: Literal[False] = False,
) -> Callable[..., ClosedJaxpr]: ...


@overload
def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    *,
    return_shape: Literal[True],
) -> Callable[..., tuple[ClosedJaxpr, Any]]: ...


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    return_shape: bool = False,
) -> Callable[..., Any]:
    """A function returning the IR of ``fun`` traced on its arguments' shapes and dtypes;
    with ``return_shape=True``, the pair ``(jaxpr, shapes)``, ``shapes`` the pytree of
    ``ShapeDtypeStruct``s of ``fun``'s output (JAX's). ``axis_env`` (JAX's way to bind
    axis names without ``vmap``) is not supported: a NotImplementedError.

    >>> import functrace as ft, numpy as np
    >>> print(ft.make_jaxpr(lambda x: (x * x).sum())(np.ones(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = mul a a
        c:f64[] = reduce_sum[axes=(0,)] b
      in (c,) }
    >>> ft.make_jaxpr(lambda x: {"s": x.sum()}, return_shape=True)(np.ones(3))[1]
    {'s': ShapeDtypeStruct(shape=(), dtype=float64)}
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if axis_env is not None:
        raise NotImplementedError(
            "make_jaxpr: axis_env is not supported; bind axis names with "
            "vmap(..., axis_name=...) around the function instead."
        )
    if not isinstance(return_shape, (bool, np.bool_)):
        raise TypeError(
            f"make_jaxpr: expected return_shape to be a bool, got {type(return_shape).__name__}."
        )

    @functools.wraps(fun)
    def make_jaxpr_f(*args: Any) -> ClosedJaxpr | tuple[ClosedJaxpr, Any]:
        nums = set(_normalize_argnums("make_jaxpr", static, len(args))) if static else set()
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        leaves, in_tree = tree_flatten(dyn)
        leaves = _plain_leaves(
            "make_jaxpr", fun, leaves, dyn, [i for i in range(len(args)) if i not in nums]
        )
        names = [n for i, n in enumerate(_arg_names(fun, args))] if not nums else None
        out_tree: list[Any] = []

        def flat_fun(*flat: Any) -> list[Any]:
            it = iter(tree_unflatten(in_tree, flat))
            full = [a if i in nums else next(it) for i, a in enumerate(args)]
            out_leaves, tree = tree_flatten(core.call_user("make_jaxpr", fun, full, {}))
            out_tree.append(tree)
            return out_leaves

        closed, _ = trace_to_jaxpr(
            flat_fun,
            _abstractify("make_jaxpr", leaves),
            origin=f"make_jaxpr of {describe_fun(fun)}",
            arg_names=names,
        )
        if not return_shape:
            return closed
        shapes = [ShapeDtypeStruct.like(a) for a in closed.out_avals]
        return closed, tree_unflatten(out_tree[-1], shapes)

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
