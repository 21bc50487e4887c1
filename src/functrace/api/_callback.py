"""``pure_callback`` and ``io_callback``: call a Python function on the values a program
computes and use its results (``jax.pure_callback``, ``jax.experimental.io_callback``),
eagerly, under ``jit`` (the compiled program's driver calls back into Python) and under
``vmap`` (``pure_callback``: per ``vmap_method``; ``io_callback``: once per example).

One primitive, ``pure_callback``, whose params hold the callback (flat arrays in and
out), the result types and the ``vmap_method``. Its impl calls the callback and checks
what it returns; ``jit`` lowers it by the default rule (the driver calls the impl); it
has no derivative (an error, as in JAX: wrap it in ``custom_jvp``/``custom_vjp``). The
function is pure: a call whose results are unused may be dropped from a jitted
program, and it may run any number of times.

``io_callback`` is the effectful twin: its primitive, ``io_callback``, is in
``ir.effectful_primitives``, so dead-code elimination keeps it and a loop or branch
holding it; it runs once per execution, in program order. Its results come with a 0-d
bool token (as ``debug_callback``'s: no equation has zero results). As in JAX it has no
derivative (a ValueError when a traced argument carries a tangent), and under ``vmap``
it is called once per example in index order (``ordered=True``: a ValueError, as JAX).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, ir
from functrace._array import to_array
from functrace.api._extras import _avals_of
from functrace.core import Primitive, ShapedArray, describe_fun
from functrace.interpreters import ad, batching
from functrace.lax import control_flow
from functrace.lax.shapes import reshape
from functrace.tree_util import tree_flatten, tree_unflatten

pure_callback_p = Primitive("pure_callback", multiple_results=True)

VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
)


class _Callback:
    """The callback as it sits in the params: ``fn`` on the pytrees rebuilt from flat
    operands, its results flattened and checked against ``result_tree``."""

    __slots__ = ("fn", "in_tree", "result_tree", "fname", "__name__")

    def __init__(
        self, fn: Callable[..., Any], in_tree: Any, result_tree: Any, fname: str = "pure_callback"
    ) -> None:
        self.fn, self.in_tree, self.result_tree = fn, in_tree, result_tree
        self.fname = fname
        self.__name__ = getattr(fn, "__name__", "callback")

    def __call__(self, *leaves: Any) -> list[Any]:
        args, kwargs = tree_unflatten(self.in_tree, list(leaves))
        out = self.fn(*args, **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != self.result_tree:
            raise TypeError(
                f"{self.fname}: expected {describe_fun(self.fn)} to return a pytree of the "
                f"structure of result_shape_dtypes, {self.result_tree}, got {out_tree}."
            )
        return out_leaves

    def __repr__(self) -> str:
        return self.__name__


def _as_result(x: Any, aval: ShapedArray, name: str, fname: str = "pure_callback") -> np.ndarray:
    if core.is_python_scalar(x):
        return np.asarray(x, aval.dtype)
    arr = np.asarray(x)
    if arr.shape != aval.shape or arr.dtype != aval.dtype:
        raise TypeError(
            f"{fname}: expected {name} to return arrays of the types given in "
            f"result_shape_dtypes ({aval.str_short()}), got {core.get_aval(arr).str_short()}. "
            f"Return that shape and dtype (e.g. np.asarray(r, dtype))."
        )
    return arr


def _impl(
    *args: Any, callback: _Callback, result_avals: tuple[ShapedArray, ...], vmap_method: Any
) -> list[Any]:
    vals = [to_array(np.asarray(x)) for x in args]
    outs = callback(*vals)
    name = describe_fun(callback.fn)
    return [np.array(_as_result(o, a, name))[()] for o, a in zip(outs, result_avals)]


def _abstract(
    *avals: ShapedArray, callback: Any, result_avals: tuple[ShapedArray, ...], vmap_method: Any
) -> list[ShapedArray]:
    return list(result_avals)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    raise ValueError(
        f"pure_callback: expected no derivative through {params['callback']!r}, got a "
        f"traced argument under jvp/grad. Pure callbacks are not differentiable: give the "
        f"function a rule with functrace.custom_jvp or custom_vjp (which may call "
        f"pure_callback for their own computations), or stop_gradient its arguments."
    )


def _batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    callback: _Callback,
    result_avals: tuple[ShapedArray, ...],
    vmap_method: Any,
) -> tuple[list[Any], list[Any]]:
    size = batching.batch_size(vals, bdims)
    params = {"callback": callback, "vmap_method": vmap_method}
    if vmap_method is None:
        raise NotImplementedError(
            f"pure_callback: expected a vmap_method under vmap, got None. Pass "
            f"vmap_method='sequential' (one call per example), 'expand_dims' (one call, "
            f"unbatched arguments with a leading axis of size 1) or 'broadcast_all' (one "
            f"call, every argument batched) to pure_callback of {callback!r}."
        )
    stacked = [_stack(a, size) for a in result_avals]
    if vmap_method in ("sequential", "sequential_unrolled"):
        moved = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
        batched = [d is not None for d in bdims]

        def one(xs: Sequence[Any]) -> list[Any]:
            it = iter(xs)
            full = [next(it) if b else v for v, b in zip(moved, batched)]
            return list(pure_callback_p.bind(*full, result_avals=result_avals, **params))

        outs = control_flow.map(one, [v for v, b in zip(moved, batched) if b])
        return list(outs), [0] * len(result_avals)
    if vmap_method == "expand_dims":
        args = [
            reshape(v, (1, *core.get_aval(v).shape)) if d is None else batching.moveaxis(v, d, 0)
            for v, d in zip(vals, bdims)
        ]
    elif vmap_method == "broadcast_all":
        args = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims)]
    else:  # legacy_vectorized: the batched arguments at axis 0, the others unchanged
        args = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
    outs = pure_callback_p.bind(*args, result_avals=tuple(stacked), **params)
    return list(outs), [0] * len(result_avals)


def _stack(aval: ShapedArray, size: int) -> ShapedArray:
    return ShapedArray((size, *aval.shape), aval.dtype, aval.weak_type)


core.impl_rules[pure_callback_p] = _impl
core.abstract_eval_rules[pure_callback_p] = _abstract
ad.jvp_rules[pure_callback_p] = _jvp
batching.batching_rules[pure_callback_p] = _batch


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """``callback(*args, **kwargs)`` computed in Python on the values (as Arrays), also
    inside ``jit`` (the compiled program calls back) and ``vmap``. ``callback`` must be
    pure (no side effects that matter: it may be skipped or repeated) and return a
    pytree of arrays of the shapes and dtypes ``result_shape_dtypes`` gives (a pytree
    of ``ShapeDtypeStruct``s or arrays).

    Under ``vmap``, ``vmap_method`` says how: ``"sequential"`` (one call per example),
    ``"expand_dims"`` (one call; unbatched arguments get a leading axis of size 1),
    ``"broadcast_all"`` (one call; every argument batched). Without one, ``vmap`` is an
    error. Not differentiable (a ValueError under ``grad``/``jvp``). ``sharding`` is
    accepted and ignored (one device).

    >>> import numpy as np, functrace as ft
    >>> spec = ft.ShapeDtypeStruct((3,), np.float64)
    >>> f = ft.jit(lambda x: ft.pure_callback(np.cumsum, spec, x) * 2)
    >>> f(np.ones(3)).tolist()
    [2.0, 4.0, 6.0]
    """
    if not callable(callback):
        raise TypeError(
            f"pure_callback: expected a callable as the first argument, got "
            f"{type(callback).__name__}."
        )
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"pure_callback: expected vmap_method None or one of {list(VMAP_METHODS)}, got "
            f"{vmap_method!r}."
        )
    leaves, in_tree = tree_flatten((args, kwargs))
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"pure_callback: expected arrays or scalars as arguments, got "
                f"{type(x).__name__}. Close over other values in the callback instead."
            )
    res_leaves, res_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(
        ShapedArray(a.shape, a.dtype) for a in _avals_of("pure_callback", res_leaves)
    )
    outs = pure_callback_p.bind(
        *leaves,
        callback=_Callback(callback, in_tree, res_tree),
        result_avals=result_avals,
        vmap_method=vmap_method,
    )
    outs = [to_array(o) for o in outs]
    return tree_unflatten(res_tree, outs)


# ---------------------------------------------------------------------------
# io_callback
# ---------------------------------------------------------------------------

io_callback_p = Primitive("io_callback", multiple_results=True)

_TOKEN = ShapedArray((), np.dtype(np.bool_))


def _io_impl(
    *args: Any, callback: _Callback, result_avals: tuple[ShapedArray, ...], ordered: bool
) -> list[Any]:
    outs = callback(*[to_array(np.asarray(x)) for x in args])
    name = describe_fun(callback.fn)
    res = [np.array(_as_result(o, a, name, "io_callback"))[()] for o, a in zip(outs, result_avals)]
    return [*res, np.zeros((), np.bool_)]


def _io_abstract(
    *avals: ShapedArray, callback: Any, result_avals: tuple[ShapedArray, ...], ordered: bool
) -> list[ShapedArray]:
    return [*result_avals, _TOKEN]


def _io_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    raise ValueError(
        f"io_callback: expected no derivative through {params['callback']!r}, got a traced "
        f"argument under jvp/grad: IO callbacks do not support JVP (as in JAX). Pass "
        f"stop_gradient of the arguments, or use pure_callback inside a custom_jvp/"
        f"custom_vjp rule."
    )


def _io_batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    callback: _Callback,
    result_avals: tuple[ShapedArray, ...],
    ordered: bool,
) -> tuple[list[Any], list[Any]]:
    if ordered:
        raise ValueError(
            f"io_callback: expected ordered=False under vmap, got an ordered call of "
            f"{callback!r}: an ordered IO callback cannot be vmapped (as in JAX)."
        )
    moved = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
    batched = [d is not None for d in bdims]

    def one(xs: Sequence[Any]) -> list[Any]:  # one call per example, in index order
        it = iter(xs)
        full = [next(it) if b else v for v, b in zip(moved, batched)]
        outs = io_callback_p.bind(
            *full, callback=callback, result_avals=result_avals, ordered=ordered
        )
        return list(outs[:-1])

    outs = control_flow.map(one, [v for v, b in zip(moved, batched) if b])
    token = np.zeros((), np.bool_)
    return [*outs, token], [0] * len(result_avals) + [None]


core.impl_rules[io_callback_p] = _io_impl
core.abstract_eval_rules[io_callback_p] = _io_abstract
ad.jvp_rules[io_callback_p] = _io_jvp
batching.batching_rules[io_callback_p] = _io_batch
ir.effectful_primitives.add(io_callback_p)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """``callback(*args, **kwargs)`` computed in Python on the values (as Arrays), for its
    side effects and results (``jax.experimental.io_callback``). Unlike ``pure_callback``
    it is never removed as dead code, even when its results are unused, and runs once
    each time the program runs, also inside ``jit`` (the compiled program calls back,
    in program order) and in loop bodies. ``callback`` returns a pytree of arrays of the
    shapes and dtypes ``result_shape_dtypes`` gives (``None`` for no results).

    As in JAX: no derivative (a ValueError when an argument carries a tangent under
    ``grad``/``jvp``; ``stop_gradient`` the arguments); under ``vmap`` one call per
    example, in index order, and ``ordered=True`` is a ValueError there. ``ordered``
    otherwise changes nothing (calls always run in program order) and ``sharding`` is
    accepted and ignored (one device).

    >>> import numpy as np, functrace as ft
    >>> seen = []
    >>> def log(x):
    ...     seen.append(float(x))
    ...     return np.asarray(x * 2)
    >>> spec = ft.ShapeDtypeStruct((), np.float64)
    >>> f = ft.jit(lambda x: ft.experimental.io_callback(log, spec, x) + 1.0)
    >>> float(f(3.0)), seen
    (7.0, [3.0])
    """
    if not callable(callback):
        raise TypeError(
            f"io_callback: expected a callable as the first argument, got "
            f"{type(callback).__name__}."
        )
    if not isinstance(ordered, bool):
        raise TypeError(
            f"io_callback: expected ordered to be a bool, got {type(ordered).__name__}."
        )
    leaves, in_tree = tree_flatten((args, kwargs))
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"io_callback: expected arrays or scalars as arguments, got "
                f"{type(x).__name__}. Close over other values in the callback instead."
            )
    res_leaves, res_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(
        ShapedArray(a.shape, a.dtype) for a in _avals_of("io_callback", res_leaves)
    )
    outs = io_callback_p.bind(
        *leaves,
        callback=_Callback(callback, in_tree, res_tree, "io_callback"),
        result_avals=result_avals,
        ordered=ordered,
    )
    return tree_unflatten(res_tree, [to_array(o) for o in outs[:-1]])


__all__ = ["io_callback", "io_callback_p", "pure_callback", "pure_callback_p"]
