"""The ``functrace.numpy`` functions that JAX allows on typed key arrays
(``random.key``): shape and selection functions, which move whole keys, and ``isin``.
Each is registered in ``_dispatch.key_functions`` for the function of the same name: a
call with a key array among its arguments, which NumPy and the traced path refuse, is
retried here and returns a key array; other calls never come here. A few are written
on the keys' uint32 data (axes counted over the key shape); the functions that only
move, repeat, drop or zero-fill elements share ``_by_index``, which runs the function
itself on the keys' positions. Arithmetic, reductions and other numeric functions on
keys stay ``TypeError``s (the key array refuses ``np.asarray``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace._prng import PRNGKeyArray
from functrace.numpy import (
    _creation,
    _indexing,
    _joining,
    _manip,
    _predicates,
    _reductions,
    _sets,
    _shape,
    _twodim,
)
from functrace.numpy._dispatch import key_functions

__all__: list[str] = []


def _is_key(x: Any) -> bool:
    return type(x) is PRNGKeyArray


def _mixed(name: str, x: Any) -> ValueError:
    """The error for another array among keys (a ValueError, as JAX's promotion gives)."""
    got = getattr(x, "dtype", type(x).__name__)
    return ValueError(
        f"{name}: expected key arrays only (or none), got key arrays with {got}. "
        f"Wrap raw keys with random.wrap_key_data first."
    )


def _by_index(fn: Any, data: tuple[str, ...]) -> Callable[..., Any]:
    """The key version of ``fn``, a function that only moves, repeats or drops elements
    of the arguments named in ``data`` (or fills with zeros): ``fn`` runs on the keys'
    positions, 1, 2, ... in one pool whose entry 0 is the zero key (JAX's fill for
    keys), and the result's positions pick the keys' data. Non-key arguments (shifts,
    indices, conditions) pass through, traced or not. An out-of-bounds ``take`` under
    ``jit`` fills positions with the most negative integer, which is out of the pool's
    bounds too, so the words come out as JAX's fill (all ones)."""
    name = fn.__name__
    sig = inspect.signature(fn.traced)

    def on_keys(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        if bound.arguments.get("dtype") is not None and _is_key(bound.arguments[data[0]]):
            # zeros_like(keys, dtype=...): an array of that dtype, as JAX gives
            bound.arguments[data[0]] = np.zeros(bound.arguments[data[0]].shape, np.int8)
            return fn(*bound.args, **bound.kwargs)
        pool: list[Any] = [np.zeros((1, 2), np.uint32)]
        taken = [1]

        def positions(x: Any) -> Any:
            if type(x) is PRNGKeyArray:
                n = x.size
                pool.append(_shape.reshape(x._base, (n, 2)))
                taken[0] += n
                return np.arange(taken[0] - n, taken[0], dtype=np.intp).reshape(x.shape)
            if isinstance(x, (list, tuple)):
                return type(x)(positions(e) for e in x)
            raise _mixed(name, x)

        for param in data:
            if param in bound.arguments:
                bound.arguments[param] = positions(bound.arguments[param])
        out = fn(*bound.args, **bound.kwargs)
        keys = _joining.concatenate(pool, axis=0)

        def picked(o: Any) -> Any:
            if isinstance(o, (list, tuple)):
                return type(o)(picked(e) for e in o)
            return PRNGKeyArray(_indexing.take(keys, o, axis=0))

        return picked(out)

    return on_keys


def _asarray(obj: Any, dtype: Any = None, copy: Any = None) -> Any:
    if dtype is not None:
        raise TypeError(
            f"asarray: expected dtype=None for key arrays, got {dtype!r}; keys do not "
            f"convert (use random.key_data for their uint32 words)."
        )
    return obj if _is_key(obj) else key_functions[_joining.stack.traced](obj)  # type: ignore[attr-defined]


def _isin(
    element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, **_: Any
) -> Any:
    for x in (element, test_elements):
        if not _is_key(x):
            raise _mixed("isin", x)
    # each key's two words against every test key's
    t = test_elements
    same = _shape.expand_dims(element._base, -2) == _shape.reshape(t._base, (t.size, 2))
    found = _reductions.any(_reductions.all(same, axis=-1), axis=-1)
    return ~found if invert else found


for _fn, _data in (
    (_joining.stack, ("arrays",)),
    (_joining.concatenate, ("arrays",)),
    (_joining.hstack, ("tup",)),
    (_joining.vstack, ("tup",)),
    (_joining.dstack, ("tup",)),
    (_joining.column_stack, ("tup",)),
    (_joining.append, ("arr", "values")),
    (_joining.split, ("ary",)),
    (_joining.array_split, ("ary",)),
    (_joining.hsplit, ("ary",)),
    (_joining.vsplit, ("ary",)),
    (_joining.dsplit, ("ary",)),
    (_shape.reshape, ("a",)),
    (_shape.ravel, ("a",)),
    (_shape.squeeze, ("a",)),
    (_shape.transpose, ("a",)),
    (_shape.swapaxes, ("a",)),
    (_shape.moveaxis, ("a",)),
    (_shape.rollaxis, ("a",)),
    (_shape.expand_dims, ("a",)),
    (_shape.broadcast_to, ("array",)),
    (_shape.broadcast_arrays, ("args",)),
    (_shape.atleast_1d, ("arys",)),
    (_shape.atleast_2d, ("arys",)),
    (_shape.atleast_3d, ("arys",)),
    (_shape.flip, ("m",)),
    (_shape.fliplr, ("m",)),
    (_shape.flipud, ("m",)),
    (_shape.rot90, ("m",)),
    (_shape.tile, ("A",)),
    (_shape.repeat, ("a",)),
    (_shape.roll, ("a",)),
    (_indexing.where, ("x", "y")),
    (_indexing.take, ("a",)),
    (_indexing.take_along_axis, ("arr",)),
    (_creation.copy, ("a",)),
    (_creation.zeros_like, ("a",)),
    (_creation.empty_like, ("a",)),
    (_creation.full_like, ("a", "fill_value")),
    (_twodim.tril, ("m",)),
    (_twodim.triu, ("m",)),
    (_twodim.diagonal, ("a",)),
    (_manip.choose, ("choices",)),
    (_manip.insert, ("arr", "values")),
    (_manip.delete, ("arr",)),
    (_manip.resize, ("a",)),
    (_manip.block, ("arrays",)),
    (_manip.compress, ("a",)),
    (_manip.extract, ("arr",)),
    (_predicates.unstack, ("x",)),
):
    key_functions[_fn.traced] = _by_index(_fn, _data)  # type: ignore[attr-defined,union-attr]
key_functions[_sets.isin.traced] = _isin  # type: ignore[attr-defined]
key_functions[_creation.asarray] = _asarray
