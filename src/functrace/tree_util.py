"""Pytree utilities: flatten nested containers into leaves and rebuild them.

A *pytree* is a nested structure of containers ("nodes") whose non-container elements
are *leaves*. Built-in node types are ``tuple``, ``list``, ``dict``, namedtuples, ``None``
(a node with no children), ``collections.OrderedDict`` and ``collections.defaultdict``.
:func:`register_pytree_node`, :func:`register_pytree_with_keys`, :func:`register_dataclass`
and :func:`register_static` add node types, as does a class attribute
``__functrace_pytree__ = True`` with ``tree_flatten``/``tree_unflatten`` (inherited) methods.

Every node type has one :class:`NodeDef` record (how to flatten it, with or without
keys, and rebuild it) in one registry; :func:`node_of` returns the record of a value
and ``PyTreeDef.node_def()`` the record of a treedef's root, for code that walks or
rebuilds trees one level at a time.

Everything else (NumPy arrays, Python scalars, arbitrary objects) is a leaf.

Example:
    >>> leaves, treedef = tree_flatten({"b": [1, 2], "a": (3, None)})
    >>> leaves
    [3, 1, 2]
    >>> treedef
    PyTreeDef({'a': (*, None), 'b': [*, *]})
    >>> tree_unflatten(treedef, [30, 10, 20])
    {'a': (30, None), 'b': [10, 20]}
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from functrace import _tree_core
from functrace._tree_core import (
    PyTreeDef,
    _flatten_up_to_checked,
    all_leaves,
    assert_same_structure,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_structure,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)
from functrace._tree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    keystr,
)
from functrace._tree_nodes import (
    NodeDef,
    Partial,
    lookup,
    node_of,
    node_of_type,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_static,
)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "NodeDef",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "assert_same_structure",
    "keystr",
    "node_of",
    "node_of_type",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_static",
    "structure_mismatch_message",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_structure",
    "tree_unflatten",
    "tree_reduce",
    "tree_all",
    "tree_transpose",
    "Partial",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "PyTreeRegistry",
    "register_pytree_with_keys_class",
    "tree_broadcast",
    "tree_reduce_associative",
]

for _cls in (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, NodeDef, Partial, PyTreeDef):
    _cls.__module__ = __name__  # their public home (pickles, docs), defined in helpers
for _name in _tree_core.__all__:
    getattr(_tree_core, _name).__module__ = __name__


# ---------------------------------------------------------------------------
# Reductions, transposition, Partial
# ---------------------------------------------------------------------------

_NO_INITIAL: Any = object()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIAL,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``functools.reduce(function, tree_leaves(tree), initializer)``.

    Example:
        >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]})
        6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        if not leaves:
            raise TypeError(
                "tree_reduce: the tree has no leaves and no initializer was given; pass "
                "initializer= for trees that may be empty."
            )
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all(tree_leaves(tree))`` (True for a tree without leaves).

    Example:
        >>> tree_all([True, {"a": 1}]), tree_all([True, (0,)])
        (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn a tree of structure ``outer(inner)`` into one of structure ``inner(outer)``.

    ``inner_treedef=None`` takes it from the first subtree at an outer leaf position.

    Example:
        >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
        >>> tree_transpose(outer, inner, [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    for name, td in (("outer_treedef", outer_treedef), ("inner_treedef", inner_treedef)):
        if td is not None and not isinstance(td, PyTreeDef):
            raise TypeError(f"tree_transpose: expected a PyTreeDef for {name}, got {td!r}")
    subtrees = _flatten_up_to_checked(outer_treedef, pytree_to_transpose, "tree_transpose")
    if inner_treedef is None:
        if not subtrees:
            raise ValueError(
                "tree_transpose: inner_treedef=None needs at least one outer leaf to infer it"
            )
        inner_treedef = tree_structure(subtrees[0])
    columns = [_flatten_up_to_checked(inner_treedef, t, "tree_transpose") for t in subtrees]
    n = inner_treedef.num_leaves
    outer = [outer_treedef.unflatten([col[i] for col in columns]) for i in range(n)]
    return inner_treedef.unflatten(outer)


class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_NO_IDENTITY: Any = _Unspecified()


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _NO_IDENTITY,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves with an associative ``operation`` as a balanced tree of calls
    (depth ``log2(n)``): the leaves are split in halves at ``n // 2``, each half reduced
    the same way, and the two results combined, as ``jax.tree_util.tree_reduce_associative``.
    ``identity`` is returned for a tree without leaves (a ``TypeError`` without it).

    Example:
        >>> tree_reduce_associative(lambda a, b: f"({a}{b})", ["a", ("b", "c"), ["d", "e"]])
        '((ab)(c(de)))'
    """
    if not callable(operation):
        raise TypeError(
            f"tree_reduce_associative: expected a callable operation, got {operation!r:.60}"
        )
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError(
                "tree_reduce_associative: the tree has no leaves and no identity was given; "
                "pass identity= for trees that may be empty."
            )
        return identity

    def reduce(lo: int, hi: int) -> Any:
        if hi - lo == 1:
            return leaves[lo]
        mid = lo + (hi - lo) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))

    return reduce(0, len(leaves))


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """``full_tree``'s structure with each leaf of its prefix ``prefix_tree`` repeated over
    the leaves of the subtree it stands for (``jax.tree_util.tree_broadcast``). ``is_leaf``
    applies to ``prefix_tree``; a ``prefix_tree`` that is not a prefix is a ValueError.

    Example:
        >>> tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
        (1, {'a': 2, 'b': 2}, (3, 3))
    """
    leaves, td = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to_checked(td, full_tree, "tree_broadcast")
    out = [x for x, sub in zip(leaves, subtrees) for _ in range(tree_structure(sub).num_leaves)]
    return tree_structure(full_tree).unflatten(out)


# ---------------------------------------------------------------------------
# One level at a time, the registry object
# ---------------------------------------------------------------------------


def is_tree_node(typ: type) -> bool:
    """True if instances of ``typ`` are pytree nodes (a built-in or registered node type,
    a namedtuple class, a class with ``__functrace_pytree__ = True``), as
    ``jax.tree_util.is_tree_node``. ``NoneType`` is a node.

    Example:
        >>> is_tree_node(list), is_tree_node(type(None)), is_tree_node(float)
        (True, True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a type, got {typ!r:.60}")
    return lookup(typ) is not None


def _one_level(tree: Any, what: str) -> tuple[NodeDef, Any]:
    nd = node_of(tree)
    if nd is None:
        raise ValueError(
            f"{what}: expected a pytree node (a container of a registered node type), got a "
            f"leaf of type {type(tree).__qualname__}"
        )
    return nd, type(tree) if nd.kind == "namedtuple" else None


def flatten_one_level(tree: Any) -> tuple[Sequence[Any], Any]:
    """The children of the node ``tree`` (not flattened further) and its aux data, as
    ``jax.tree_util.flatten_one_level``; a leaf is a ValueError. The aux data is JAX's
    for every built-in node (a dict's sorted keys, a namedtuple's class, None for
    tuples, lists and ``None``); the children come as a list or a tuple.

    Example:
        >>> flatten_one_level({"b": {"c": 3}, "a": [1, 2]})
        ([[1, 2], {'c': 3}], ('a', 'b'))
    """
    nd, aux = _one_level(tree, "flatten_one_level")
    children, own = nd.flatten(tree)
    return children, own if aux is None else aux


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """The ``(key entry, child)`` pairs of the node ``tree`` and its aux data, as
    ``jax.tree_util.flatten_one_level_with_keys`` (a leaf is a ValueError). A
    namedtuple's children have the keys ``GetAttrKey(field)`` of their own fields (JAX
    0.10.2 gives every child the first field's key here, though not in
    ``tree_flatten_with_path``).

    Example:
        >>> flatten_one_level_with_keys([5, (6,)])
        ([(SequenceKey(idx=0), 5), (SequenceKey(idx=1), (6,))], None)
    """
    nd, aux = _one_level(tree, "flatten_one_level_with_keys")
    keys, children, own = nd.flatten_with_keys(tree)
    return list(zip(keys, children)), own if aux is None else aux


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register ``cls`` as a pytree node through its methods
    ``tree_flatten_with_keys(self) -> ([(key, child), ...], aux)`` and the classmethod
    ``tree_unflatten(aux, children)``; a ``tree_flatten(self)`` method, if present, is
    used where no keys are needed (``jax.tree_util.register_pytree_with_keys_class``).
    Returns ``cls``.

    Example:
        >>> @register_pytree_with_keys_class
        ... class Pt:
        ...     def __init__(self, x, y):
        ...         self.x, self.y = x, y
        ...     def tree_flatten_with_keys(self):
        ...         return [(GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)], None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> [keystr(p) for p, _ in tree_flatten_with_path(Pt(1, 2))[0]]
        ['.x', '.y']
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_with_keys_class: expected a class, got {cls!r:.60}")
    missing = [m for m in ("tree_flatten_with_keys", "tree_unflatten") if not hasattr(cls, m)]
    if missing:
        raise TypeError(
            f"register_pytree_with_keys_class: expected a class with methods "
            f"tree_flatten_with_keys and tree_unflatten, {cls.__qualname__} lacks "
            f"{' and '.join(missing)}"
        )
    flat = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls,
        lambda x: x.tree_flatten_with_keys(),
        lambda aux, children: cls.tree_unflatten(aux, children),  # type: ignore[attr-defined]
        flat,
    )
    return cls


def _walk_with_path(
    x: Any, pred: Callable[[KeyPath, Any], bool] | None, path: KeyPath, out: list[Any]
) -> PyTreeDef:
    nd = None if pred is not None and pred(path, x) else node_of(x)
    if nd is None:
        out.append((path, x))
        return _tree_core._LEAF
    keys, children, aux = nd.flatten_with_keys(x)
    defs = tuple(_walk_with_path(c, pred, (*path, k), out) for k, c in zip(keys, children))
    return PyTreeDef(nd, aux, defs)


class PyTreeRegistry:
    """The registry of pytree node types, as an object (``jax.tree_util.default_registry``,
    whose methods it has). functrace has one registry: :data:`default_registry` is a view
    of it, and registering through it is registering globally (the ``register_*``
    functions); no other registry can be created (JAX's ``PyTreeRegistry()`` makes an
    empty one)."""

    __slots__ = ()

    def flatten(
        self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
    ) -> tuple[list[Any], PyTreeDef]:
        """The leaves and structure of ``tree`` (:func:`tree_flatten`)."""
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(
        self, tree: Any, leaf_predicate: Callable[[KeyPath, Any], bool] | None = None
    ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
        """The ``(key path, leaf)`` pairs and structure of ``tree``; ``leaf_predicate``
        is called with the key path and the subtree, as JAX's."""
        out: list[Any] = []
        return out, _walk_with_path(tree, leaf_predicate, (), out)

    def flatten_one_level(self, tree: Any) -> tuple[Sequence[Any], Any] | None:
        """:func:`flatten_one_level`, but None for a leaf (as JAX's registry method)."""
        return None if node_of(tree) is None else flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree: Any) -> tuple[list[tuple[Any, Any]], Any] | None:
        """:func:`flatten_one_level_with_keys`, but None for a leaf."""
        return None if node_of(tree) is None else flatten_one_level_with_keys(tree)

    def is_node(self, type: type) -> bool:  # noqa: A002
        """:func:`is_tree_node`."""
        return is_tree_node(type)

    def register_node(
        self,
        type: type,  # noqa: A002
        to_iterable: Callable[[Any], tuple[Iterable[Any], Any]],
        from_iterable: Callable[[Any, Iterable[Any]], Any],
        to_iterable_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None = None,
    ) -> None:
        """:func:`register_pytree_node` (positional order of JAX's method)."""
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(
        self,
        type: type,
        data_fields: Sequence[str],
        meta_fields: Sequence[str],
        /,  # noqa: A002
    ) -> None:
        """:func:`register_dataclass` with both field lists."""
        register_dataclass(type, data_fields, meta_fields)

    def __repr__(self) -> str:
        return "functrace.tree_util.default_registry"


default_registry = PyTreeRegistry()
"""The registry of pytree node types (see :class:`PyTreeRegistry`)."""
