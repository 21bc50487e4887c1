"""The core of :mod:`functrace.tree_util`: :class:`PyTreeDef`, the one pytree walker,
flatten/unflatten, key paths, maps, ``flatten_up_to`` and the structure-mismatch
messages. ``functrace.tree_util`` re-exports every public name (their public home) and
adds the functions built on them (reductions, transposition, broadcasting, one-level
flattening, the registry object).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from functrace import _tree_nodes
from functrace._tree_diagnostics import mismatch_message
from functrace._tree_keys import KeyPath
from functrace._tree_nodes import (
    MISSING,
    NodeDef,
    aux_eq,
    aux_hash,
    lookup,
)

__all__ = [
    "PyTreeDef",
    "all_leaves",
    "assert_same_structure",
    "structure_mismatch_message",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_structure",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


class PyTreeDef:
    """Immutable description of a pytree's structure (everything except the leaves).

    Treedefs are hashable and compare with ``==`` (node types, aux data and
    children must match). Obtain them from :func:`tree_structure` or
    :func:`tree_flatten`; do not construct them directly.

    Example:
        >>> td = tree_structure((1, {"a": 2, "b": [3, 4]}))
        >>> td
        PyTreeDef((*, {'a': *, 'b': [*, *]}))
        >>> td.num_leaves, td.num_nodes
        (4, 7)
        >>> td == tree_structure((0, {"b": [0, 0], "a": 0}))
        True
    """

    __slots__ = ("_node", "_aux", "_children", "_num_leaves", "_num_nodes", "_hash")

    def __init__(self, node: NodeDef | None, aux: Any, children: tuple[PyTreeDef, ...]) -> None:
        self._node = node  # None for a leaf
        self._aux = aux
        self._children = children
        self._hash: int | None = None
        nl = 1 if node is None else 0
        nn = 1
        for c in children:
            nl += c._num_leaves
            nn += c._num_nodes
        self._num_leaves: int = nl
        self._num_nodes: int = nn

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting leaves and ``None`` nodes."""
        return self._num_nodes

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the immediate children (empty for leaves and ``None``).

        Example:
            >>> tree_structure((1, [2, 3])).children()
            [PyTreeDef(*), PyTreeDef([*, *])]
        """
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """``(node_type, aux_data)`` of the root node, or None for a leaf.

        Example:
            >>> tree_structure({"a": 1}).node_data()
            (<class 'dict'>, ('a',))
        """
        if self._node is None:
            return None
        return (self._node.type, self._aux)

    def node_def(self) -> NodeDef | None:
        """The :class:`NodeDef` record of the root node, or None for a leaf. Its
        ``unflatten(aux, children)`` rebuilds the root from ``node_data()[1]`` and the
        children.

        Example:
            >>> td = tree_structure({"a": 1})
            >>> td.node_def().unflatten(td.node_data()[1], [5])
            {'a': 5}
        """
        return self._node

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a pytree with this structure from ``leaves`` (see :func:`tree_unflatten`).

        Example:
            >>> tree_structure([0, (0, 0)]).unflatten([1, 2, 3])
            [1, (2, 3)]
        """
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` only as deep as this treedef, returning whole subtrees at leaves.

        ``tree`` must contain this treedef's structure as a prefix; a subtree of
        ``tree`` at each leaf position of ``self`` is returned unflattened.

        Raises:
            ValueError: On a structure mismatch; the message names the first
                differing key path.

        Example:
            >>> tree_structure((0, 0)).flatten_up_to(({"a": 1}, [2, 3]))
            [{'a': 1}, [2, 3]]
        """
        return _flatten_up_to_checked(self, tree, "flatten_up_to")

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return _td_eq(self, other)

    def __ne__(self, other: object) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            nd = self._node
            kids = tuple([hash(c) for c in self._children])
            h = hash((None if nd is None else nd.type, aux_hash(self._aux), kids))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_td_repr(self)})"

    def __copy__(self) -> PyTreeDef:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> PyTreeDef:
        return self


def _td_eq(a: PyTreeDef, b: PyTreeDef) -> bool:
    if a is b:
        return True
    if a._node is not b._node or a._num_nodes != b._num_nodes or a._num_leaves != b._num_leaves:
        return False
    if a._hash is not None and b._hash is not None and a._hash != b._hash:
        return False
    if a._aux is not b._aux and not aux_eq(a._aux, b._aux):
        return False
    ca, cb = a._children, b._children
    if len(ca) != len(cb):
        return False
    for x, y in zip(ca, cb):
        if not _td_eq(x, y):
            return False
    return True


def _td_repr(td: PyTreeDef) -> str:
    nd = td._node
    return "*" if nd is None else nd.show(td._aux, [_td_repr(c) for c in td._children])


_LEAF = PyTreeDef(None, None, ())
_TUPLE_NODE = _tree_nodes.registry[tuple]
_memo = _tree_nodes.memo


# ---------------------------------------------------------------------------
# The walker, flatten / unflatten
# ---------------------------------------------------------------------------


def _walk(
    x: Any,
    is_leaf: Callable[[Any], bool] | None,
    leaves: list[Any],
    paths: list[KeyPath] | None = None,
    path: KeyPath = (),
    build: bool = True,
) -> PyTreeDef:
    """The one pytree walker: append the leaves of ``x`` to ``leaves`` (and their key
    paths to ``paths`` unless it is None); return the treedef of ``x`` (if ``build``,
    else a placeholder). Children are visited in the order of their record's flatten."""
    if is_leaf is not None and is_leaf(x):
        nd = None
    else:
        nd = _memo.get(type(x), MISSING)
        if nd is MISSING:
            nd = lookup(type(x))
    if nd is None:
        leaves.append(x)
        if paths is not None:
            paths.append(path)
        return _LEAF
    # Explicit loops below: a comprehension would put the arguments in cells (slower).
    if paths is not None:
        keys, children, aux = nd.flatten_with_keys(x)
        defs = []
        for q, c in zip(keys, children):
            defs.append(_walk(c, is_leaf, leaves, paths, (*path, q)))
        return PyTreeDef(nd, aux, tuple(defs))
    if nd.self_children:
        children, aux = x, None
    else:
        children, aux = nd.flatten(x)
    if not build:
        for c in children:
            _walk(c, is_leaf, leaves, None, (), False)
        return _LEAF
    defs = []
    for c in children:
        defs.append(_walk(c, is_leaf, leaves))
    return PyTreeDef(nd, aux, tuple(defs))


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and a :class:`PyTreeDef`.

    Dict children are visited in sorted key order (keys that cannot be sorted are
    a ``ValueError``). ``None`` is a node without children.

    Args:
        tree: The pytree.
        is_leaf: Optional predicate; subtrees for which it returns True are
            treated as leaves without descending into them.

    Returns:
        ``(leaves, treedef)``.

    Example:
        >>> tree_flatten([1, (2, None), {"z": 3, "y": 4}])
        ([1, 2, 4, 3], PyTreeDef([*, (*, None), {'y': *, 'z': *}]))
        >>> tree_flatten({"a": [1, 2], "b": 3}, is_leaf=lambda x: isinstance(x, list))[0]
        [[1, 2], 3]
    """
    leaves: list[Any] = []
    td = _walk(tree, is_leaf, leaves)
    return leaves, td


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """Return the leaves of ``tree`` in flattening order.

    Example:
        >>> tree_leaves([None, 1, {"b": 2, "a": 3}])
        [1, 3, 2]
    """
    leaves: list[Any] = []
    _walk(tree, is_leaf, leaves, build=False)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """Return the :class:`PyTreeDef` of ``tree``.

    Example:
        >>> tree_structure({"w": 1, "b": (2, 3)})
        PyTreeDef({'b': (*, *), 'w': *})
    """
    return _walk(tree, is_leaf, [])


def _unflatten(td: PyTreeDef, it: Any) -> Any:
    nd = td._node
    if nd is None:
        return next(it)
    children = []  # an explicit loop: a comprehension would put ``it`` in a cell
    for c in td._children:
        children.append(_unflatten(c, it))
    return nd.unflatten(td._aux, children)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree with structure ``treedef`` from ``leaves``.

    Args:
        treedef: Structure, e.g. from :func:`tree_flatten`.
        leaves: Exactly ``treedef.num_leaves`` values.

    Raises:
        ValueError: If the number of leaves does not match.

    Example:
        >>> leaves, td = tree_flatten({"a": [1, 2], "b": None})
        >>> tree_unflatten(td, [x * 10 for x in leaves])
        {'a': [10, 20], 'b': None}
    """
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"tree_unflatten: expected a PyTreeDef, got {type(treedef).__name__}")
    if not isinstance(leaves, (list, tuple)):
        leaves = list(leaves)
    n = treedef._num_leaves
    if len(leaves) != n:
        raise ValueError(
            f"tree_unflatten: treedef {treedef!r} expects {n} leaves, but got {len(leaves)}"
        )
    return _unflatten(treedef, iter(leaves))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Return True if every element of ``iterable`` is a leaf (``None`` is not a leaf).

    Example:
        >>> all_leaves([1, 2.0, "s"]), all_leaves([1, (2,)]), all_leaves([None])
        (True, False, False)
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if lookup(type(x)) is not None:
            return False
    return True


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Return True if ``treedef`` describes a single leaf.

    Unlike JAX, the structures of ``None`` and ``()`` are *not* leaves here.

    Example:
        >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure(None))
        (True, False)
    """
    return treedef._node is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Treedefs of the immediate children of ``treedef``.

    Example:
        >>> treedef_children(tree_structure((1, [2])))
        [PyTreeDef(*), PyTreeDef([*])]
    """
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """Treedef of a tuple whose children have the given treedefs.

    Example:
        >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
        PyTreeDef((*, [*, *]))
    """
    children = tuple(treedefs)
    for c in children:
        if not isinstance(c, PyTreeDef):
            raise TypeError(f"treedef_tuple: expected PyTreeDefs, got {type(c).__name__}")
    return PyTreeDef(_TUPLE_NODE, None, children)


# ---------------------------------------------------------------------------
# Key paths and maps
# ---------------------------------------------------------------------------


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but pairs every leaf with its key path.

    Example:
        >>> pairs, td = tree_flatten_with_path({"params": [1, 2]})
        >>> [(keystr(p), v) for p, v in pairs]
        [("['params'][0]", 1), ("['params'][1]", 2)]
    """
    leaves: list[Any] = []
    paths: list[KeyPath] = []
    td = _walk(tree, is_leaf, leaves, paths)
    return list(zip(paths, leaves)), td


def tree_leaves_with_path(tree: Any, is_leaf: Any = None) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``: ``tree_flatten_with_path(tree, is_leaf)[0]``."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``; keep ``tree``'s structure.

    Each tree in ``rest`` must have ``tree``'s structure, or have it as a prefix
    (then ``f`` receives the whole subtree found at each leaf position of ``tree``).

    Args:
        f: Function of ``1 + len(rest)`` arguments.
        tree: The pytree whose structure the result has.
        *rest: Further pytrees.
        is_leaf: Optional leaf predicate applied to ``tree`` only.

    Raises:
        ValueError: On a structure mismatch; the message names ``tree_map``,
            both structures and the first differing key path.

    Example:
        >>> tree_map(lambda x: x + 1, {"a": 1, "b": (2, None)})
        {'a': 2, 'b': (3, None)}
        >>> tree_map(lambda x, y: x * y, [1, 2], [10, 20])
        [10, 40]
    """
    leaves: list[Any] = []
    td = _walk(tree, is_leaf, leaves)
    if not rest:
        return _unflatten(td, map(f, leaves))
    others = [_flatten_up_to_checked(td, r, "tree_map") for r in rest]
    return _unflatten(td, map(f, leaves, *others))


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Like :func:`tree_map`, but ``f`` receives the leaf's key path first.

    Example:
        >>> tree_map_with_path(lambda p, x: keystr(p), {"a": [0, 0]})
        {'a': ["['a'][0]", "['a'][1]"]}
    """
    leaves: list[Any] = []
    paths: list[KeyPath] = []
    td = _walk(tree, is_leaf, leaves, paths)
    others = [_flatten_up_to_checked(td, r, "tree_map_with_path") for r in rest]
    return _unflatten(td, map(f, paths, leaves, *others))


# ---------------------------------------------------------------------------
# flatten_up_to and structure-mismatch reporting
# ---------------------------------------------------------------------------


# Node types that stand for one array (typed PRNG key arrays, registered by
# ``_prng.py``): where the first tree of ``tree_map`` has one, another tree may have
# any leaf (JAX's key arrays are leaves), which then meets the node's one child.
array_like_nodes: set[type] = set()


def _flatten_up_to(td: PyTreeDef, x: Any, out: list[Any]) -> bool:
    """Append subtrees of ``x`` at ``td``'s leaf positions; False on any mismatch."""
    nd = td._node
    if nd is None:
        out.append(x)
        return True
    children: Sequence[Any] = x
    if type(x) is not nd.type or lookup(nd.type) is not nd:
        if nd.type in array_like_nodes and td._num_leaves == 1:
            out.append(x)
            return True
        return False
    if not nd.self_children:
        children, aux = nd.flatten(x)
        if aux is not td._aux and not aux_eq(td._aux, aux):
            return False
    if len(children) != len(td._children):
        return False
    for c, sub in zip(td._children, children):
        if not _flatten_up_to(c, sub, out):
            return False
    return True


def _flatten_up_to_checked(td: PyTreeDef, tree: Any, what: str) -> list[Any]:
    out: list[Any] = []
    if not _flatten_up_to(td, tree, out):
        raise ValueError(structure_mismatch_message(td, tree, what, prefix=True))
    return out


def structure_mismatch_message(
    treedef_expected: PyTreeDef,
    tree_given: Any,
    what: str,
    *,
    prefix: bool = False,
    is_leaf: Callable[[Any], bool] | None = None,
) -> str:
    """Describe how ``tree_given`` differs from ``treedef_expected``.

    The message starts with ``what`` (the calling API, e.g. ``"tree_map"``),
    says "pytree structure mismatch", names the first differing key path (in
    flattening order) with what was expected and found there, and shows both
    structures.

    Args:
        treedef_expected: The expected structure.
        tree_given: The offending pytree (not a treedef).
        what: Name of the operation, used as the message prefix.
        prefix: If True, ``tree_given`` may be deeper than ``treedef_expected``
            below its leaves (``flatten_up_to`` semantics).
        is_leaf: Leaf predicate for ``tree_given`` (ignored when ``prefix``).

    Returns:
        The message (a structure difference is reported even if none is found).

    Example:
        >>> msg = structure_mismatch_message(tree_structure({"a": 1, "b": [1, 2]}),
        ...                                  {"a": 1, "b": (1, 2, 3)}, "tree_map")
        >>> print(msg.splitlines()[0])
        tree_map: pytree structure mismatch; first differing at path ['b']: expected a list \
of 2 children, got a tuple of 3
    """
    if isinstance(tree_given, PyTreeDef):
        raise TypeError("structure_mismatch_message: tree_given must be a pytree, not a PyTreeDef")
    leaf_fn = None if prefix else is_leaf
    try:
        given_repr = repr(tree_structure(tree_given, leaf_fn))
    except Exception as e:  # pragma: no cover - custom flatten failing
        given_repr = f"<unavailable: {type(e).__name__}: {e}>"
    return mismatch_message(treedef_expected, tree_given, given_repr, what, prefix, leaf_fn)


def assert_same_structure(
    a: Any, b: Any, *, what: str, is_leaf: Callable[[Any], bool] | None = None
) -> None:
    """Raise ``ValueError`` unless pytrees ``a`` and ``b`` have identical structure.

    Args:
        a: The reference pytree.
        b: The pytree to check.
        what: Name of the calling operation, used as the message prefix.
        is_leaf: Optional leaf predicate applied to both trees.

    Raises:
        ValueError: With :func:`structure_mismatch_message`'s text, naming the
            first differing key path.

    Example:
        >>> assert_same_structure({"a": [1, 2]}, {"a": [3, 4]}, what="update")
        >>> try:
        ...     assert_same_structure({"a": [1, 2]}, {"a": [3]}, what="update")
        ... except ValueError as e:
        ...     print(str(e).splitlines()[0])
        update: pytree structure mismatch; first differing at path ['a']: expected a list of \
2 children, got a list of 1
    """
    ta = tree_structure(a, is_leaf)
    tb = tree_structure(b, is_leaf)
    if ta != tb:
        raise ValueError(structure_mismatch_message(ta, b, what, is_leaf=is_leaf))
