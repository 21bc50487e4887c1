"""functrace.tree: the short names of :mod:`functrace.tree_util` (as ``jax.tree``).

``functrace.tree.map(f, tree)`` is ``tree_util.tree_map(f, tree)`` and so on; the
functions are the same objects' behaviour under shorter names, with the same
arguments.

>>> import functrace as ft
>>> ft.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> ft.tree.leaves({"b": [1, 2], "a": 3})
[3, 1, 2]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from functrace import tree_util as _tu

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]

_IsLeaf = Callable[[Any], bool] | None


def flatten(tree: Any, is_leaf: _IsLeaf = None) -> tuple[list[Any], _tu.PyTreeDef]:
    """The leaves of ``tree`` and its structure (``tree_util.tree_flatten``).

    >>> flatten((1, [2]))
    ([1, 2], PyTreeDef((*, [*])))
    """
    return _tu.tree_flatten(tree, is_leaf)


def unflatten(treedef: _tu.PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` with ``leaves`` (``tree_util.tree_unflatten``).

    >>> unflatten(structure((0, [0])), [1, 2])
    (1, [2])
    """
    return _tu.tree_unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: _IsLeaf = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order (``tree_util.tree_leaves``).

    >>> leaves([1, None, (2,)])
    [1, 2]
    """
    return _tu.tree_leaves(tree, is_leaf)


def structure(tree: Any, is_leaf: _IsLeaf = None) -> _tu.PyTreeDef:
    """The structure of ``tree`` (``tree_util.tree_structure``).

    >>> structure({"a": 1})
    PyTreeDef({'a': *})
    """
    return _tu.tree_structure(tree, is_leaf)


def map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: _IsLeaf = None) -> Any:  # noqa: A001
    """``f`` on the leaves of ``tree`` (and the matching ones of ``rest``), keeping the
    structure (``tree_util.tree_map``).

    >>> map(lambda x, y: x + y, [1, 2], [10, 20])
    [11, 22]
    """
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: _IsLeaf = None) -> Any:
    """Like :func:`map`, with each leaf's key path as ``f``'s first argument.

    >>> map_with_path(lambda p, x: len(p), {"a": [0]})
    {'a': [2]}
    """
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf)


def flatten_with_path(
    tree: Any, is_leaf: _IsLeaf = None
) -> tuple[list[tuple[_tu.KeyPath, Any]], _tu.PyTreeDef]:
    """``(key path, leaf)`` pairs and the structure (``tree_util.tree_flatten_with_path``).

    >>> pairs, _ = flatten_with_path({"a": 1})
    >>> pairs
    [((DictKey(key='a'),), 1)]
    """
    return _tu.tree_flatten_with_path(tree, is_leaf)


def leaves_with_path(tree: Any, is_leaf: _IsLeaf = None) -> list[tuple[_tu.KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> [(_tu.keystr(p), x) for p, x in leaves_with_path([5])]
    [('[0]', 5)]
    """
    return _tu.tree_flatten_with_path(tree, is_leaf)[0]


def reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _tu._NO_INITIAL,
    is_leaf: _IsLeaf = None,
) -> Any:
    """Reduce the leaves with ``function`` (``tree_util.tree_reduce``).

    >>> reduce(max, [3, (1, 4)])
    4
    """
    return _tu.tree_reduce(function, tree, initializer, is_leaf)


def all(tree: Any, *, is_leaf: _IsLeaf = None) -> bool:  # noqa: A001
    """True if every leaf is truthy (``tree_util.tree_all``).

    >>> all({"a": True, "b": [1]})
    True
    """
    return _tu.tree_all(tree, is_leaf=is_leaf)


def transpose(
    outer_treedef: _tu.PyTreeDef, inner_treedef: _tu.PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Swap the outer and inner levels of a tree (``tree_util.tree_transpose``).

    >>> outer, inner = structure([0, 0]), structure({"x": 0, "y": 0})
    >>> transpose(outer, inner, [{"x": 1, "y": 2}, {"x": 3, "y": 4}])
    {'x': [1, 3], 'y': [2, 4]}
    """
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def broadcast(prefix_tree: Any, full_tree: Any, is_leaf: _IsLeaf = None) -> Any:
    """``full_tree``'s structure with each leaf of its prefix ``prefix_tree`` repeated over
    the leaves of the subtree it stands for (``tree_util.tree_broadcast``). ``is_leaf``
    applies to ``prefix_tree``; a ``prefix_tree`` that is not a prefix is a ValueError.

    >>> broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    return _tu.tree_broadcast(prefix_tree, full_tree, is_leaf)


def reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _tu._NO_IDENTITY,
    is_leaf: _IsLeaf = None,
) -> Any:
    """Reduce the leaves with an associative ``operation`` as a balanced tree of calls
    (``tree_util.tree_reduce_associative``); ``identity`` is the result without leaves.

    >>> reduce_associative(lambda a, b: a + b, [1, (2, 3), [4, 5, 6]])
    21
    """
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked ``metadata={"static": True}`` (``jax.tree.static``):
    ``tree_util.register_dataclass`` keeps such a field in the treedef instead of
    making it a child. Takes ``dataclasses.field``'s arguments.

    >>> import dataclasses
    >>> @_tu.register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: float
    ...     mode: str = static(default="add")
    >>> leaves(Op(1.0))
    [1.0]
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
