"""Pytree utilities: flatten nested containers into leaves and rebuild them.

A *pytree* is a nested structure of containers ("nodes") whose non-container
elements are *leaves*. Built-in node types are ``tuple``, ``list``, ``dict``,
namedtuples, ``None`` (a node with no children), ``collections.OrderedDict`` and
``collections.defaultdict``. More node types can be added with
:func:`register_pytree_node`, :func:`register_pytree_with_keys`,
:func:`register_dataclass`, or by giving a class the attribute
``__functrace_pytree__ = True`` together with ``tree_flatten`` /
``tree_unflatten`` methods (inherited by all subclasses).

Everything else (NumPy arrays, Python scalars, arbitrary objects) is a leaf.

Example:
    >>> leaves, treedef = tree_flatten({"b": [1, 2], "a": (3, None)})
    >>> leaves
    [3, 1, 2]
    >>> treedef
    PyTreeDef({'a': (*, None), 'b': [*, *]})
    >>> tree_unflatten(treedef, [30, 10, 20])
    {'a': (30, None), 'b': [10, 20]}

This module only depends on NumPy and the standard library.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "assert_same_structure",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "structure_mismatch_message",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
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
]

# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Path entry for the ``idx``-th element of a tuple or list.

    Example:
        >>> str(SequenceKey(0))
        '[0]'
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Path entry for the value stored under ``key`` in a mapping.

    Example:
        >>> str(DictKey("a"))
        "['a']"
    """

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Path entry for attribute ``name`` (namedtuple fields, dataclass fields).

    Example:
        >>> str(GetAttrKey("weight"))
        '.weight'
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Path entry for the ``key``-th child of a custom node registered without keys.

    Example:
        >>> str(FlattenedIndexKey(1))
        '[<flat index 1>]'
    """

    key: int

    @property
    def idx(self) -> int:
        """Alias of :attr:`key`."""
        return self.key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any
"""Any hashable object used as one step of a key path (usually one of the key classes)."""

KeyPath = tuple[Any, ...]
"""A tuple of key entries leading from the root of a pytree to a subtree."""


def keystr(keypath: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string.

    Args:
        keypath: Sequence of key entries, e.g. from :func:`tree_flatten_with_path`.
        simple: If True, render each entry without brackets/dots (``0``, ``a``,
            ``weight``) and join them with ``separator``.
        separator: Joiner used between entries.

    Returns:
        The rendered path; the empty path renders as ``''``.

    Example:
        >>> keystr((DictKey("params"), SequenceKey(0), GetAttrKey("weight")))
        "['params'][0].weight"
        >>> keystr((DictKey("params"), SequenceKey(0)), simple=True, separator="/")
        'params/0'
    """
    if not simple:
        return separator.join(str(k) for k in keypath)
    return separator.join(_simple_key_str(k) for k in keypath)


def _simple_key_str(k: Any) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def _path_str(path: Sequence[Any]) -> str:
    return keystr(path) if path else "<root>"


# ---------------------------------------------------------------------------
# Node registry
# ---------------------------------------------------------------------------

# Node kinds. Plain ints compared with ``==``/``is`` (small ints are cached).
_K_LEAF = 0
_K_NONE = 1
_K_TUPLE = 2
_K_LIST = 3
_K_DICT = 4
_K_NAMEDTUPLE = 5
_K_ORDEREDDICT = 6
_K_DEFAULTDICT = 7
_K_CUSTOM = 8

_DICT_LIKE = (_K_DICT, _K_ORDEREDDICT, _K_DEFAULTDICT)


class _NodeDef:
    """How to take apart and rebuild one node type (internal)."""

    __slots__ = (
        "kind",
        "type",
        "flatten",
        "unflatten",
        "flatten_with_keys",
        "data_fields",
        "meta_fields",
    )

    def __init__(
        self,
        kind: int,
        nodetype: type,
        flatten: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
        unflatten: Callable[[Any, Iterable[Any]], Any] | None = None,
        flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None = None,
        data_fields: tuple[str, ...] | None = None,
        meta_fields: tuple[str, ...] | None = None,
    ) -> None:
        self.kind = kind
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.data_fields = data_fields
        self.meta_fields = meta_fields

    def __repr__(self) -> str:
        return f"_NodeDef(kind={self.kind}, type={self.type.__qualname__})"


_registry: dict[type, _NodeDef] = {
    type(None): _NodeDef(_K_NONE, type(None)),
    tuple: _NodeDef(_K_TUPLE, tuple),
    list: _NodeDef(_K_LIST, list),
    dict: _NodeDef(_K_DICT, dict),
    OrderedDict: _NodeDef(_K_ORDEREDDICT, OrderedDict),
    defaultdict: _NodeDef(_K_DEFAULTDICT, defaultdict),
}
"""Exactly-typed node registry (builtins plus user registrations)."""

# Memo of type -> _NodeDef (or None for leaf types). Cleared on registration.
_dispatch: dict[type, _NodeDef | None] = {}
_DISPATCH_LIMIT = 4096
_MISSING: Any = object()


def _resolve(t: type) -> _NodeDef | None:
    nd = _registry.get(t)
    if nd is not None:
        return nd
    # A class's own flatten/unflatten (the protocol) wins over the namedtuple default.
    if getattr(t, "__functrace_pytree__", False) is True:
        return _protocol_node(t)
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        return _NodeDef(_K_NAMEDTUPLE, t)
    return None


def _lookup(t: type) -> _NodeDef | None:
    nd = _dispatch.get(t, _MISSING)
    if nd is _MISSING:
        nd = _resolve(t)
        if len(_dispatch) >= _DISPATCH_LIMIT:
            _dispatch.clear()
        _dispatch[t] = nd
    return nd


def _node_type(x: Any) -> _NodeDef | None:
    """Return the node definition for ``x``, or None if ``x`` is a leaf.

    Lookup order: the exact ``type(x)`` in ``_registry``; classes with
    ``__functrace_pytree__ = True``; namedtuples (tuple subclasses with ``_fields``).
    A namedtuple class with a registration of its own is flattened and rebuilt by it.
    """
    return _lookup(type(x))


def _protocol_node(t: type) -> _NodeDef:
    """Node definition for a class using the ``__functrace_pytree__`` protocol."""

    def flatten(x: Any) -> tuple[Iterable[Any], Any]:
        return t.tree_flatten(x)  # type: ignore[attr-defined]

    def unflatten(aux: Any, children: Iterable[Any]) -> Any:
        return t.tree_unflatten(aux, children)  # type: ignore[attr-defined]

    flatten_with_keys = None
    if hasattr(t, "tree_flatten_with_keys"):

        def flatten_with_keys(x: Any) -> tuple[Iterable[tuple[Any, Any]], Any]:
            return t.tree_flatten_with_keys(x)  # type: ignore[attr-defined]

    return _NodeDef(_K_CUSTOM, t, flatten, unflatten, flatten_with_keys)


def _register(nd: _NodeDef) -> None:
    if not isinstance(nd.type, type):
        raise TypeError(f"pytree node type must be a class, got {nd.type!r}")
    if nd.type in _registry:
        raise ValueError(f"{nd.type.__qualname__} is already registered as a pytree node type")
    _registry[nd.type] = nd
    _dispatch.clear()


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None = None,
) -> None:
    """Register ``nodetype`` (exact type, not subclasses) as a pytree node.

    Args:
        nodetype: The class to register.
        flatten_func: ``x -> (children, aux_data)``; ``aux_data`` must be
            comparable with ``==`` and is stored in the treedef.
        unflatten_func: ``(aux_data, children) -> x``.
        flatten_with_keys_func: Optional ``x -> ([(key, child), ...], aux_data)``
            used for key paths; without it children get :class:`FlattenedIndexKey`.

    Raises:
        ValueError: If ``nodetype`` is already registered.

    Example:
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
        ...                      lambda aux, ch: Pair(*ch))
        >>> tree_leaves(Pair(1, [2, 3]))
        [1, 2, 3]
    """
    _register(_NodeDef(_K_CUSTOM, nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node whose children carry key-path entries.

    Args:
        nodetype: The class to register.
        flatten_with_keys: ``x -> ([(key, child), ...], aux_data)``.
        unflatten_func: ``(aux_data, children) -> x``.
        flatten_func: Optional faster ``x -> (children, aux_data)``; derived
            from ``flatten_with_keys`` when omitted.

    Example:
        >>> class Box:
        ...     def __init__(self, v):
        ...         self.v = v
        >>> register_pytree_with_keys(Box, lambda b: ([(GetAttrKey("v"), b.v)], None),
        ...                           lambda aux, ch: Box(*ch))
        >>> [keystr(p) for p, _ in tree_flatten_with_path(Box([1]))[0]]
        ['.v[0]']
    """
    if flatten_func is None:

        def flatten_func(x: Any) -> tuple[Iterable[Any], Any]:
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux

    _register(_NodeDef(_K_CUSTOM, nodetype, flatten_func, unflatten_func, flatten_with_keys))


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` via its ``tree_flatten``/``tree_unflatten`` methods.

    ``cls.tree_flatten(self) -> (children, aux)`` and the classmethod
    ``cls.tree_unflatten(aux, children) -> instance``. An optional
    ``tree_flatten_with_keys(self)`` supplies key paths.

    Example:
        >>> @register_pytree_node_class
        ... class Wrap:
        ...     def __init__(self, x):
        ...         self.x = x
        ...     def tree_flatten(self):
        ...         return (self.x,), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> tree_leaves([Wrap(1), Wrap(2)])
        [1, 2]
    """
    nd = _protocol_node(cls)
    _register(nd)
    return cls


def register_dataclass(
    cls: type | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
) -> Any:
    """Register a dataclass as a pytree node (also usable as a class decorator).

    Data fields become children; meta fields are stored as aux data in the
    treedef (they must be hashable-ish and comparable, and they take part in
    treedef equality). Instances are rebuilt with ``cls(**fields)``.

    With neither field list given, every ``init=True`` dataclass field is data
    unless its ``metadata`` contains ``static=True``, which makes it meta. If
    only one list is given for a dataclass, the other is the remaining init
    fields.

    Args:
        cls: The class. If omitted, returns a decorator.
        data_fields: Names of fields holding child pytrees.
        meta_fields: Names of static fields stored in the treedef.

    Returns:
        ``cls`` itself (or a decorator when ``cls`` is None).

    Raises:
        TypeError: If ``cls`` is not a dataclass and no field lists are given.
        ValueError: If the field lists overlap or do not cover the init fields.

    Example:
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Dense:
        ...     w: Any
        ...     act: str = dataclasses.field(default="relu", metadata={"static": True})
        >>> tree_structure(Dense(1.0))
        PyTreeDef(Dense(w=*, act='relu'))
    """
    if cls is None:

        def decorator(c: type) -> type:
            return register_dataclass(c, data_fields, meta_fields)

        return decorator

    if not isinstance(cls, type):
        raise TypeError(f"register_dataclass expects a class, got {cls!r}")
    is_dc = dataclasses.is_dataclass(cls)
    if data_fields is None and meta_fields is None:
        if not is_dc:
            raise TypeError(
                f"register_dataclass: {cls.__qualname__} is not a dataclass; pass data_fields "
                "and meta_fields explicitly"
            )
        data: list[str] = []
        meta: list[str] = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            (meta if f.metadata.get("static", False) else data).append(f.name)
    else:
        init_names = [f.name for f in dataclasses.fields(cls) if f.init] if is_dc else []
        if data_fields is None:
            meta = list(meta_fields or ())
            data = [n for n in init_names if n not in meta]
        elif meta_fields is None:
            data = list(data_fields)
            meta = [n for n in init_names if n not in data]
        else:
            data, meta = list(data_fields), list(meta_fields)
        overlap = sorted(set(data) & set(meta))
        if overlap:
            raise ValueError(f"register_dataclass: fields {overlap} are both data and meta")
        if len(set(data)) != len(data) or len(set(meta)) != len(meta):
            raise ValueError("register_dataclass: duplicate field names")
        if is_dc:
            given = set(data) | set(meta)
            missing = [n for n in init_names if n not in given]
            extra = sorted(given - set(init_names))
            if missing or extra:
                raise ValueError(
                    f"register_dataclass: data_fields + meta_fields must be exactly the init "
                    f"fields of {cls.__qualname__}; missing {missing}, unexpected {extra}"
                )

    data_t = tuple(data)
    meta_t = tuple(meta)

    def flatten(x: Any) -> tuple[list[Any], tuple[Any, ...]]:
        return [getattr(x, n) for n in data_t], tuple([getattr(x, n) for n in meta_t])

    def unflatten(aux: tuple[Any, ...], children: Iterable[Any]) -> Any:
        kwargs = dict(zip(data_t, children))
        kwargs.update(zip(meta_t, aux))
        return cls(**kwargs)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[Any, Any]], tuple[Any, ...]]:
        pairs = [(GetAttrKey(n), getattr(x, n)) for n in data_t]
        return pairs, tuple([getattr(x, n) for n in meta_t])

    _register(_NodeDef(_K_CUSTOM, cls, flatten, unflatten, flatten_with_keys, data_t, meta_t))
    return cls


# ---------------------------------------------------------------------------
# Aux-data equality / hashing
# ---------------------------------------------------------------------------


def _aux_eq(a: Any, b: Any) -> bool:
    """Structural ``==`` that tolerates NumPy arrays and unhashable containers."""
    if a is b:
        return True
    ta = type(a)
    if isinstance(a, (tuple, list)):
        if type(b) is not ta or len(a) != len(b):
            return False
        return all(_aux_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if type(b) is not ta or a.keys() != b.keys():
            return False
        return all(_aux_eq(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    try:
        r = a == b
        return bool(r)
    except Exception:
        return False


def _aux_hash(a: Any) -> int:
    """Hash consistent with :func:`_aux_eq` (falls back to the type for unhashables)."""
    try:
        return hash(a)
    except TypeError:
        pass
    if isinstance(a, (tuple, list)):
        return hash((type(a).__qualname__, tuple([_aux_hash(v) for v in a])))
    if isinstance(a, dict):
        return hash(("dict", frozenset((k, _aux_hash(v)) for k, v in a.items())))
    if isinstance(a, (set, frozenset)):
        return hash(frozenset(a))
    if isinstance(a, np.ndarray):
        return hash(("ndarray", a.shape, a.dtype.str, a.tobytes()))
    return hash(type(a).__qualname__)


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

    __slots__ = (
        "_kind",
        "_type",
        "_aux",
        "_children",
        "_node",
        "_num_leaves",
        "_num_nodes",
        "_hash",
    )

    def __init__(
        self,
        kind: int,
        nodetype: type | None,
        aux: Any,
        children: tuple[PyTreeDef, ...],
        node: _NodeDef | None,
    ) -> None:
        self._kind = kind
        self._type = nodetype
        self._aux = aux
        self._children = children
        self._node = node
        self._hash: int | None = None
        if kind == _K_LEAF:
            self._num_leaves = 1
            self._num_nodes = 1
        else:
            nl = 0
            nn = 1
            for c in children:
                nl += c._num_leaves
                nn += c._num_nodes
            self._num_leaves = nl
            self._num_nodes = nn

    # -- read-only properties -------------------------------------------------
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
        if self._kind == _K_LEAF:
            return None
        return (self._type, self._aux)  # type: ignore[return-value]

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

    # -- dunder ---------------------------------------------------------------
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
            h = hash(
                (
                    self._kind,
                    self._type,
                    _aux_hash(self._aux),
                    tuple([hash(c) for c in self._children]),
                )
            )
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
    if (
        a._kind != b._kind
        or a._type is not b._type
        or a._num_nodes != b._num_nodes
        or a._num_leaves != b._num_leaves
    ):
        return False
    if a._hash is not None and b._hash is not None and a._hash != b._hash:
        return False
    if a._aux is not b._aux and not _aux_eq(a._aux, b._aux):
        return False
    ca, cb = a._children, b._children
    if len(ca) != len(cb):
        return False
    for x, y in zip(ca, cb):
        if not _td_eq(x, y):
            return False
    return True


def _type_name(t: Any) -> str:
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or repr(t)


def _td_repr(td: PyTreeDef) -> str:
    k = td._kind
    if k == _K_LEAF:
        return "*"
    if k == _K_NONE:
        return "None"
    parts = [_td_repr(c) for c in td._children]
    if k == _K_TUPLE:
        if len(parts) == 1:
            return f"({parts[0]},)"
        return "(" + ", ".join(parts) + ")"
    if k == _K_LIST:
        return "[" + ", ".join(parts) + "]"
    if k == _K_DICT:
        return "{" + ", ".join(f"{key!r}: {p}" for key, p in zip(td._aux, parts)) + "}"
    if k == _K_NAMEDTUPLE:
        fields = td._type._fields  # type: ignore[union-attr]
        body = ", ".join(f"{f}={p}" for f, p in zip(fields, parts))
        return f"{_type_name(td._type)}({body})"
    if k == _K_ORDEREDDICT:
        body = ", ".join(f"{key!r}: {p}" for key, p in zip(td._aux, parts))
        return f"OrderedDict({{{body}}})"
    if k == _K_DEFAULTDICT:
        factory, keys = td._aux
        body = ", ".join(f"{key!r}: {p}" for key, p in zip(keys, parts))
        fname = "None" if factory is None else _type_name(factory)
        return f"defaultdict({fname}, {{{body}}})"
    node = td._node
    name = _type_name(td._type)
    if node is not None and node.data_fields is not None and node.meta_fields is not None:
        items = [f"{f}={p}" for f, p in zip(node.data_fields, parts)]
        items += [f"{f}={v!r}" for f, v in zip(node.meta_fields, td._aux)]
        return f"{name}({', '.join(items)})"
    return f"CustomNode({name}[{td._aux!r}], [{', '.join(parts)}])"


_LEAF = PyTreeDef(_K_LEAF, None, None, (), None)
_NONE_DEF = PyTreeDef(_K_NONE, type(None), None, (), _registry[type(None)])
_TUPLE_NODE = _registry[tuple]
_LIST_NODE = _registry[list]
_DICT_NODE = _registry[dict]


# ---------------------------------------------------------------------------
# One-level node helpers
# ---------------------------------------------------------------------------


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    """The keys of a dict node in flattening order: sorted (as JAX); unorderable keys
    are an error, since no order would be the same for equal dicts built differently."""
    try:
        return tuple(sorted(d))
    except TypeError as e:
        kinds = sorted({type(q).__name__ for q in d})
        raise ValueError(
            f"pytree flatten: the keys of a dict node must be sortable (a dict's children "
            f"are visited in sorted key order), got keys of types {', '.join(kinds)} that "
            f"cannot be compared ({e}). Use keys of one orderable type, or an OrderedDict "
            f"(visited in insertion order)."
        ) from None


def _flatten_node(x: Any, nd: _NodeDef) -> tuple[Sequence[Any], Any]:
    """Children and aux data of node ``x`` (one level)."""
    k = nd.kind
    if k == _K_TUPLE or k == _K_LIST or k == _K_NAMEDTUPLE:
        return x, None
    if k == _K_DICT:
        keys = _sorted_keys(x)
        return [x[q] for q in keys], keys
    if k == _K_NONE:
        return (), None
    if k == _K_ORDEREDDICT:
        keys = tuple(x)
        return [x[q] for q in keys], keys
    if k == _K_DEFAULTDICT:
        keys = _sorted_keys(x)
        return [x[q] for q in keys], (x.default_factory, keys)
    children, aux = nd.flatten(x)  # type: ignore[misc]
    if not isinstance(children, (list, tuple)):
        children = list(children)
    return children, aux


def _flatten_node_with_keys(x: Any, nd: _NodeDef) -> tuple[list[Any], Sequence[Any], Any]:
    """Key entries, children and aux data of node ``x`` (one level)."""
    k = nd.kind
    if k == _K_CUSTOM:
        if nd.flatten_with_keys is not None:
            pairs, aux = nd.flatten_with_keys(x)
            pairs = list(pairs)
            return [p[0] for p in pairs], [p[1] for p in pairs], aux
        children, aux = _flatten_node(x, nd)
        return [FlattenedIndexKey(i) for i in range(len(children))], children, aux
    children, aux = _flatten_node(x, nd)
    if k == _K_TUPLE or k == _K_LIST:
        keys: list[Any] = [SequenceKey(i) for i in range(len(children))]
    elif k == _K_NAMEDTUPLE:
        keys = [GetAttrKey(f) for f in type(x)._fields]
    elif k == _K_DEFAULTDICT:
        keys = [DictKey(q) for q in aux[1]]
    elif k == _K_NONE:
        keys = []
    else:
        keys = [DictKey(q) for q in aux]
    return keys, children, aux


_KIND_NAMES = {
    _K_LEAF: "leaf",
    _K_NONE: "none",
    _K_TUPLE: "tuple",
    _K_LIST: "list",
    _K_DICT: "dict",
    _K_NAMEDTUPLE: "namedtuple",
}


def _node_kind(td: PyTreeDef) -> str:
    """The root node's kind, for code that rebuilds trees itself (jit drivers):
    ``"leaf"``, ``"none"``, ``"tuple"``, ``"list"``, ``"dict"``, ``"namedtuple"`` (a
    namedtuple class without a registration of its own, rebuilt by calling the class
    on its fields), or ``"other"``: rebuilt only by :func:`_rebuild` (the registered
    ``unflatten``; a registered namedtuple class is "other" too)."""
    return _KIND_NAMES.get(td._kind, "other")


def _rebuild(td: PyTreeDef, children: list[Any]) -> Any:
    k = td._kind
    if k == _K_TUPLE:
        return tuple(children)
    if k == _K_LIST:
        return children
    if k == _K_DICT:
        return dict(zip(td._aux, children))
    if k == _K_NONE:
        return None
    if k == _K_NAMEDTUPLE:
        return td._type(*children)  # type: ignore[misc]
    if k == _K_ORDEREDDICT:
        return OrderedDict(zip(td._aux, children))
    if k == _K_DEFAULTDICT:
        factory, keys = td._aux
        return defaultdict(factory, zip(keys, children))
    return td._node.unflatten(td._aux, tuple(children))  # type: ignore[union-attr,misc]


# ---------------------------------------------------------------------------
# Flatten / unflatten
# ---------------------------------------------------------------------------


def _flatten(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is tuple:
        return PyTreeDef(
            _K_TUPLE, tuple, None, tuple([_flatten(c, leaves, is_leaf) for c in x]), _TUPLE_NODE
        )
    if t is list:
        return PyTreeDef(
            _K_LIST, list, None, tuple([_flatten(c, leaves, is_leaf) for c in x]), _LIST_NODE
        )
    if t is dict:
        keys = _sorted_keys(x)
        return PyTreeDef(
            _K_DICT, dict, keys, tuple([_flatten(x[q], leaves, is_leaf) for q in keys]), _DICT_NODE
        )
    if x is None:
        return _NONE_DEF
    nd = _dispatch.get(t, _MISSING)
    if nd is _MISSING:
        nd = _lookup(t)
    if nd is None:
        leaves.append(x)
        return _LEAF
    children, aux = _flatten_node(x, nd)
    return PyTreeDef(nd.kind, t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]), nd)


def _collect_leaves(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> None:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return
    t = type(x)
    if t is tuple or t is list:
        for c in x:
            _collect_leaves(c, leaves, is_leaf)
        return
    if t is dict:
        for q in _sorted_keys(x):
            _collect_leaves(x[q], leaves, is_leaf)
        return
    if x is None:
        return
    nd = _dispatch.get(t, _MISSING)
    if nd is _MISSING:
        nd = _lookup(t)
    if nd is None:
        leaves.append(x)
        return
    for c in _flatten_node(x, nd)[0]:
        _collect_leaves(c, leaves, is_leaf)


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and a :class:`PyTreeDef`.

    Dict children are visited in sorted key order (insertion order if the keys
    are not mutually sortable). ``None`` is a node without children.

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
    td = _flatten(tree, leaves, is_leaf)
    return leaves, td


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """Return the leaves of ``tree`` in flattening order.

    Example:
        >>> tree_leaves([None, 1, {"b": 2, "a": 3}])
        [1, 3, 2]
    """
    leaves: list[Any] = []
    _collect_leaves(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """Return the :class:`PyTreeDef` of ``tree``.

    Example:
        >>> tree_structure({"w": 1, "b": (2, 3)})
        PyTreeDef({'b': (*, *), 'w': *})
    """
    return _flatten(tree, [], is_leaf)


def _unflatten(td: PyTreeDef, it: Any) -> Any:
    k = td._kind
    if k == _K_LEAF:
        return next(it)
    if k == _K_TUPLE:
        return tuple([_unflatten(c, it) for c in td._children])
    if k == _K_LIST:
        return [_unflatten(c, it) for c in td._children]
    if k == _K_DICT:
        return dict(zip(td._aux, [_unflatten(c, it) for c in td._children]))
    if k == _K_NONE:
        return None
    return _rebuild(td, [_unflatten(c, it) for c in td._children])


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
        if _lookup(type(x)) is not None:
            return False
    return True


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Return True if ``treedef`` describes a single leaf.

    Unlike JAX, the structures of ``None`` and ``()`` are *not* leaves here.

    Example:
        >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure(None))
        (True, False)
    """
    return treedef._kind == _K_LEAF


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
    return PyTreeDef(_K_TUPLE, tuple, None, children, _TUPLE_NODE)


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------


def _flatten_with_path(
    x: Any,
    path: tuple[Any, ...],
    out: list[tuple[tuple[Any, ...], Any]],
    is_leaf: Callable[[Any], bool] | None,
) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return _LEAF
    t = type(x)
    nd = _lookup(t)
    if nd is None:
        out.append((path, x))
        return _LEAF
    if nd.kind == _K_NONE:
        return _NONE_DEF
    keys, children, aux = _flatten_node_with_keys(x, nd)
    child_defs = tuple(
        [_flatten_with_path(c, (*path, q), out, is_leaf) for q, c in zip(keys, children)]
    )
    return PyTreeDef(nd.kind, t, aux, child_defs, nd)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but pairs every leaf with its key path.

    Example:
        >>> pairs, td = tree_flatten_with_path({"params": [1, 2]})
        >>> [(keystr(p), v) for p, v in pairs]
        [("['params'][0]", 1), ("['params'][1]", 2)]
    """
    out: list[tuple[KeyPath, Any]] = []
    td = _flatten_with_path(tree, (), out, is_leaf)
    return out, td


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
    td = _flatten(tree, leaves, is_leaf)
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
    pairs: list[tuple[KeyPath, Any]] = []
    td = _flatten_with_path(tree, (), pairs, is_leaf)
    paths = [p for p, _ in pairs]
    leaves = [v for _, v in pairs]
    others = [_flatten_up_to_checked(td, r, "tree_map_with_path") for r in rest]
    return _unflatten(td, map(f, paths, leaves, *others))


# ---------------------------------------------------------------------------
# flatten_up_to and structure-mismatch reporting
# ---------------------------------------------------------------------------


def _flatten_up_to(td: PyTreeDef, x: Any, out: list[Any]) -> bool:
    """Append subtrees of ``x`` at ``td``'s leaf positions; False on any mismatch."""
    k = td._kind
    if k == _K_LEAF:
        out.append(x)
        return True
    t = type(x)
    if k == _K_TUPLE or k == _K_LIST:
        if t is not td._type or len(x) != len(td._children):
            return False
        for c, sub in zip(td._children, x):
            if not _flatten_up_to(c, sub, out):
                return False
        return True
    if k == _K_DICT:
        if t is not dict or len(x) != len(td._aux):
            return False
        for q, c in zip(td._aux, td._children):
            if q not in x or not _flatten_up_to(c, x[q], out):
                return False
        return True
    if k == _K_NONE:
        return x is None
    if t is not td._type:
        return False
    if k == _K_ORDEREDDICT or k == _K_DEFAULTDICT:
        keys = td._aux if k == _K_ORDEREDDICT else td._aux[1]
        if len(x) != len(keys):
            return False
        if k == _K_DEFAULTDICT and x.default_factory is not td._aux[0]:
            return False
        for q, c in zip(keys, td._children):
            if q not in x or not _flatten_up_to(c, x[q], out):
                return False
        return True
    nd = _lookup(t)
    if nd is None or nd.kind != k:
        return False
    children, aux = _flatten_node(x, nd)
    if len(children) != len(td._children):
        return False
    if k == _K_CUSTOM and not _aux_eq(td._aux, aux):
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


def _children_count(n: int) -> str:
    return "1 child" if n == 1 else f"{n} children"


def _describe(
    kind: int, nodetype: Any, aux: Any, n: int, *, expected: bool, value: Any = None
) -> str:
    """Human description of one node, e.g. ``a list of 2 children``."""
    if kind == _K_LEAF:
        if expected:
            return "a leaf"
        return f"a leaf of type {_type_name(type(value))}"
    if kind == _K_NONE:
        return "None"
    count = _children_count(n) if expected else str(n)
    if kind == _K_TUPLE:
        return f"a tuple of {count}"
    if kind == _K_LIST:
        return f"a list of {count}"
    if kind == _K_NAMEDTUPLE:
        return f"a namedtuple {_type_name(nodetype)} of {count}"
    if kind in _DICT_LIKE:
        keys = aux[1] if kind == _K_DEFAULTDICT else aux
        article = "an" if kind == _K_ORDEREDDICT else "a"
        return f"{article} {_type_name(nodetype)} with keys {list(keys)!r}"
    return f"a {_type_name(nodetype)} node of {count}"


def _find_mismatch(
    td: PyTreeDef,
    x: Any,
    path: tuple[Any, ...],
    prefix: bool,
    is_leaf: Callable[[Any], bool] | None,
) -> tuple[tuple[Any, ...], str] | None:
    """Return ``(path, detail)`` of the first (pre-order) difference, or None."""
    k = td._kind
    x_is_leaf = (is_leaf is not None and is_leaf(x)) or _lookup(type(x)) is None
    if k == _K_LEAF:
        if prefix or x_is_leaf:
            return None
        nd = _lookup(type(x))
        assert nd is not None
        children, aux = _flatten_node(x, nd)
        got = _describe(nd.kind, type(x), aux, len(children), expected=False)
        return path, f"expected a leaf, got {got}"
    exp = _describe(k, td._type, td._aux, len(td._children), expected=True)
    if x_is_leaf:
        got = _describe(_K_LEAF, None, None, 0, expected=False, value=x)
        return path, f"expected {exp}, got {got}"
    tx = type(x)
    nd = _lookup(tx)
    assert nd is not None
    keys, children, aux = _flatten_node_with_keys(x, nd)
    got = _describe(nd.kind, tx, aux, len(children), expected=False)
    if nd.kind != k or tx is not td._type:
        return path, f"expected {exp}, got {got}"
    if k in _DICT_LIKE:
        exp_keys = td._aux[1] if k == _K_DEFAULTDICT else td._aux
        got_keys = aux[1] if k == _K_DEFAULTDICT else aux
        if k == _K_DEFAULTDICT and aux[0] is not td._aux[0]:
            return path, (
                f"expected a defaultdict with default_factory {td._aux[0]!r}, got one with "
                f"{aux[0]!r}"
            )
        same = set(exp_keys) == set(got_keys) if prefix else tuple(exp_keys) == tuple(got_keys)
        if not same:
            missing = [q for q in exp_keys if q not in set(got_keys)]
            extra = [q for q in got_keys if q not in set(exp_keys)]
            detail = f"expected {exp}, got {got}"
            if missing or extra:
                detail += f" (missing keys {missing!r}, unexpected keys {extra!r})"
            else:
                detail += " (same keys in a different order)"
            return path, detail
        # Visit children in the treedef's key order.
        key_objs = [DictKey(q) for q in exp_keys]
        children = [x[q] for q in exp_keys]
    else:
        if len(children) != len(td._children):
            return path, f"expected {exp}, got {got}"
        if k == _K_CUSTOM and not _aux_eq(td._aux, aux):
            name = _type_name(td._type)
            return path, (
                f"expected a {name} node with aux data {td._aux!r}, got a {name} node with "
                f"aux data {aux!r}"
            )
        key_objs = keys
    for q, c, sub in zip(key_objs, td._children, children):
        r = _find_mismatch(c, sub, (*path, q), prefix, is_leaf)
        if r is not None:
            return r
    return None


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
    found = _find_mismatch(treedef_expected, tree_given, (), prefix, None if prefix else is_leaf)
    try:
        given_repr = repr(tree_structure(tree_given, None if prefix else is_leaf))
    except Exception as e:  # pragma: no cover - custom flatten failing
        given_repr = f"<unavailable: {type(e).__name__}: {e}>"
    if found is None:
        head = f"{what}: pytree structure mismatch (no differing path found)"
    else:
        path, detail = found
        head = (
            f"{what}: pytree structure mismatch; first differing at path "
            f"{_path_str(path)}: {detail}"
        )
    label = "expected structure (prefix)" if prefix else "expected structure"
    return f"{head}\n  {label}: {treedef_expected!r}\n  given structure: {given_repr}"


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
    ta = _flatten(a, [], is_leaf)
    tb = _flatten(b, [], is_leaf)
    if ta != tb:
        raise ValueError(structure_mismatch_message(ta, b, what, is_leaf=is_leaf))


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


class Partial(functools.partial):  # type: ignore[type-arg]
    """A ``functools.partial`` that is a pytree: its arguments are the children (leaves,
    or subtrees) and the function is static. So a ``Partial`` can be passed through
    ``jit``, ``vmap`` or ``grad`` as an argument, its bound arrays traced with the rest.

    Example:
        >>> p = Partial(lambda a, b: a + b, 1.0)
        >>> p(2.0), tree_leaves(p)
        (3.0, [1.0])
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kw: Any) -> Partial:
        if isinstance(func, functools.partial):  # keep the nesting flat, one static func
            args = (*func.args, *args)
            kw = {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


def _partial_flatten(p: Partial) -> tuple[tuple[Any, ...], Any]:
    return (p.args, p.keywords), p.func


def _partial_unflatten(func: Any, children: Iterable[Any]) -> Partial:
    args, kw = children
    return Partial(func, *args, **kw)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)
