"""The fast paths' signature keys of ``jit`` calls (``api.JitFunction.__call__``).

``fast_key`` keys positional arguments that are all plain arrays or scalars by
``(shape, dtype)`` / type; ``tree_key`` keys simple pytrees of them (tuples, lists,
dicts, None, registered nodes with simple aux data), collecting the leaves in
``tree_flatten`` order. Anything else gets no key and takes the general path.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, tree_util
from functrace._array import Array

_SCALAR_TYPES = frozenset(core._SCALAR_AVALS)  # Python and NumPy scalar types
_ndarray = np.ndarray
_Array = Array


def fast_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    # Exact ndarrays only (subclasses take the general path, which applies the rule of
    # ``core.plain_array``); a non-native dtype is its own key, never stored (see
    # ``_call_general``), and unaligned memory must be copied, so it takes that path too.
    key: list[Any] = []
    for a in args:
        t = type(a)
        if t is _ndarray:
            if not a.flags.aligned:
                return None
            key.append((a.shape, a.dtype))
        elif t is _Array:  # its own key: the driver is given plain views (fast_entry_call)
            if not a.flags.aligned:
                return None
            key.append((a.shape, a.dtype, _Array))
        elif t in _SCALAR_TYPES:
            key.append(t)
        else:
            return None
    return tuple(key)


NOT_SIMPLE = object()


def tree_key(x: Any, leaves: list[Any]) -> Any:
    """A hashable key for the structure and leaf signatures of ``x`` (tuples, lists,
    dicts with sortable keys, None, plain arrays and scalars), appending the leaves in
    ``tree_flatten`` order; ``NOT_SIMPLE`` for anything else (custom nodes...)."""
    t = type(x)
    if t is _ndarray or t is _Array:
        if not x.flags.aligned:
            return NOT_SIMPLE
        leaves.append(x)
        return (x.shape, x.dtype) if t is _ndarray else (x.shape, x.dtype, _Array)
    if t in _SCALAR_TYPES:
        leaves.append(x)
        return t
    if t is tuple or t is list:
        parts: list[Any] = [t]
        for c in x:
            k = tree_key(c, leaves)
            if k is NOT_SIMPLE:
                return k
            parts.append(k)
        return tuple(parts)
    if t is dict:
        try:
            keys = sorted(x)
        except TypeError:
            return NOT_SIMPLE
        parts = [dict, tuple(keys)]
        for q in keys:
            k = tree_key(x[q], leaves)
            if k is NOT_SIMPLE:
                return k
            parts.append(k)
        return tuple(parts)
    if x is None:
        return None
    return _custom_node_key(x, leaves)


def _custom_node_key(x: Any, leaves: list[Any]) -> Any:
    # Registered nodes (namedtuples, nn.Module dataclasses, optimizer states...): one
    # level through the node's tree_util record, so the leaf order is tree_flatten's.
    try:
        nd = tree_util.node_of(x)
        if nd is None:
            return NOT_SIMPLE
        children, aux = nd.flatten(x)
    except Exception:  # noqa: BLE001 - anything unusual takes the general path
        return NOT_SIMPLE
    if not _simple_aux(aux):
        return NOT_SIMPLE
    parts: list[Any] = [type(x), aux]
    for c in children:
        k = tree_key(c, leaves)
        if k is NOT_SIMPLE:
            return k
        parts.append(k)
    return tuple(parts)


_SIMPLE_AUX = (
    type(None),
    bool,
    int,
    float,
    str,
    bytes,
    type,
    np.dtype,
    types.FunctionType,
    types.BuiltinFunctionType,
)


def _simple_aux(aux: Any) -> bool:
    """Aux data safe in a dict key: hashable, compared by value or identity, never an
    array (whose ``==`` is elementwise)."""
    if type(aux) in _SIMPLE_AUX:
        return True
    if type(aux) is tuple or type(aux) is frozenset:
        return all(_simple_aux(a) for a in aux)
    return False


def fast_entry_call(entry: Any, given: Sequence[Any], used: Sequence[Any]) -> Any:
    """What a fast path calls for arguments like ``given``, which the general path
    turned into ``used``: ``entry.driver`` itself when it used them as they are; a
    wrapper viewing the same positions as plain ndarrays when those were
    ``functrace.Array`` (``core.plain_array``'s view, so the driver's NumPy calls never
    go through Array's hooks; it calls ``entry.driver`` as it is then, the compiled one
    once a tiered compile has switched); None when anything else was converted (a
    copy: those arguments keep taking the general path)."""
    viewed = []
    for i, (a, b) in enumerate(zip(given, used)):
        if a is not b:
            if not (type(a) is _Array and type(b) is _ndarray and _same_memory(a, b)):
                return None
            viewed.append(i)
    if not viewed:
        return entry.driver

    def viewing(*xs: Any) -> Any:
        xs_ = list(xs)
        for i in viewed:
            xs_[i] = xs_[i].view(_ndarray)
        return entry.driver(*xs_)

    return viewing


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``b`` is ``a`` seen through another array object (a view, not a copy)."""
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


__all__ = ["NOT_SIMPLE", "fast_entry_call", "fast_key", "tree_key"]
