"""Pytree node types: one :class:`NodeDef` record per type, held in one registry.

A record says how to take a node apart (``flatten``, ``flatten_with_keys``), how to
rebuild it (``unflatten``), how a treedef shows it, and its ``kind`` (for messages
and for code that rebuilds trees itself). The built-in node types (``tuple``,
``list``, ``dict``, ``None``, ``OrderedDict``, ``defaultdict``) are records of the
registry like any registered type; a namedtuple class, and a class with
``__functrace_pytree__ = True``, gets its record on first use. :mod:`functrace.tree_util`
re-exports the registration functions and walks trees with these records.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from functrace._tree_keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

Flatten = Callable[[Any], tuple[Iterable[Any], Any]]
FlattenWithKeys = Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]]
Unflatten = Callable[[Any, Iterable[Any]], Any]


@dataclasses.dataclass(frozen=True, eq=False, slots=True)
class NodeDef:
    """How one pytree node type is taken apart and rebuilt (one record per type).

    Obtain records with ``tree_util.node_of(x)`` / ``tree_util.node_of_type(t)`` or
    ``PyTreeDef.node_def()``; create them by registering a type.

    Attributes:
        type: The node class (matched exactly: subclasses are not covered).
        kind: ``"none"``, ``"tuple"``, ``"list"``, ``"dict"``, ``"OrderedDict"``,
            ``"defaultdict"``, ``"namedtuple"`` (a namedtuple class without a
            registration of its own: rebuilt by calling the class on its fields) or
            ``"custom"`` (every registered type and ``__functrace_pytree__`` class).
        flatten: ``x -> (children, aux)``: the children as a list or tuple, and the
            aux data (static, compared with ``==``, kept in the treedef).
        unflatten: ``(aux, children) -> x``, ``children`` a sequence.
        flatten_with_keys: ``x -> (keys, children, aux)``, ``keys`` the key-path
            entries of the children.
        show: ``(aux, child_reprs) -> str``: the node inside a treedef's repr.
        mapping_keys: For mapping nodes, ``aux -> keys`` (in child order); else None.
        self_children: True if the node is the sequence of its children and its aux
            data is None (tuple, list, namedtuple): walkers iterate it directly.

    Example:
        >>> nd = node_of_type(dict)
        >>> nd.kind, nd.flatten({"b": 1, "a": 2})
        ('dict', ([2, 1], ('a', 'b')))
        >>> nd.unflatten(("a", "b"), [2, 1])
        {'a': 2, 'b': 1}
    """

    type: type
    kind: str
    flatten: Callable[[Any], tuple[Sequence[Any], Any]]
    unflatten: Callable[[Any, Sequence[Any]], Any]
    flatten_with_keys: Callable[[Any], tuple[Sequence[Any], Sequence[Any], Any]]
    show: Callable[[Any, list[str]], str]
    mapping_keys: Callable[[Any], Sequence[Any]] | None = None
    self_children: bool = False

    def __repr__(self) -> str:
        return f"NodeDef({self.kind}, {type_name(self.type)})"

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (_record_of, (self.type,))  # pickled by type: the loader's own record


def _record_of(t: type) -> NodeDef:
    nd = lookup(t)
    if nd is None:
        raise TypeError(f"unpickling a treedef: {type_name(t)} is not a pytree node type here")
    return nd


def type_name(t: Any) -> str:
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or repr(t)


# ---------------------------------------------------------------------------
# Built-in records
# ---------------------------------------------------------------------------


def sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
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


_SEQ_KEYS = tuple([SequenceKey(i) for i in range(256)])  # shared: key entries are immutable


def _seq_keys(x: Any) -> tuple[Sequence[Any], Any, None]:
    n = len(x)
    keys = _SEQ_KEYS[:n] if n <= 256 else [SequenceKey(i) for i in range(n)]
    return keys, x, None


def _as_children(x: Any) -> tuple[Any, None]:
    return x, None


def _mapping_node(
    t: type,
    kind: str,
    split: Callable[[Any], Any],
    keys_of: Callable[[Any], Any],
    build: Callable[[Any, Sequence[Any]], Any],
    show: Callable[[Any, list[str]], str],
    flatten: Callable[[Any], tuple[list[Any], Any]] | None = None,
) -> NodeDef:
    """A mapping record: ``split(x) -> (keys, aux)``, ``keys_of(aux) -> keys``,
    ``build(aux, children) -> x``; ``flatten`` (derived from ``split`` if omitted)."""

    def split_flatten(x: Any) -> tuple[list[Any], Any]:
        keys, aux = split(x)
        return list(map(x.__getitem__, keys)), aux

    def flatten_with_keys(x: Any) -> tuple[list[Any], list[Any], Any]:
        keys, aux = split(x)
        return [DictKey(q) for q in keys], list(map(x.__getitem__, keys)), aux

    flat = split_flatten if flatten is None else flatten
    return NodeDef(t, kind, flat, build, flatten_with_keys, show, keys_of)


def _items(keys: Any, parts: list[str]) -> str:
    return ", ".join(f"{key!r}: {p}" for key, p in zip(keys, parts))


def _sorted_split(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    keys = sorted_keys(x)
    return keys, keys


def _dict_flatten(x: dict[Any, Any]) -> tuple[list[Any], tuple[Any, ...]]:
    try:  # the hot path of a dict node, with sorted_keys' error for unorderable keys
        keys = tuple(sorted(x))
    except TypeError:
        keys = sorted_keys(x)
    return list(map(x.__getitem__, keys)), keys


def _ordered_split(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    keys = tuple(x)
    return keys, keys


def _ddict_split(x: Any) -> tuple[tuple[Any, ...], tuple[Any, tuple[Any, ...]]]:
    keys = sorted_keys(x)
    return keys, (x.default_factory, keys)


def _show_ddict(aux: Any, parts: list[str]) -> str:
    fname = "None" if aux[0] is None else type_name(aux[0])
    return f"defaultdict({fname}, {{{_items(aux[1], parts)}}})"


def _identity(aux: Any) -> Any:
    return aux


_BUILTINS = (
    NodeDef(
        type(None),
        "none",
        lambda x: ((), None),
        lambda aux, children: None,
        lambda x: ((), (), None),
        lambda aux, parts: "None",
    ),
    NodeDef(
        tuple,
        "tuple",
        _as_children,
        lambda aux, children: tuple(children),
        _seq_keys,
        lambda aux, p: f"({p[0]},)" if len(p) == 1 else "(" + ", ".join(p) + ")",
        self_children=True,
    ),
    NodeDef(
        list,
        "list",
        _as_children,
        lambda aux, children: list(children),
        _seq_keys,
        lambda aux, p: "[" + ", ".join(p) + "]",
        self_children=True,
    ),
    _mapping_node(
        dict,
        "dict",
        _sorted_split,
        _identity,
        lambda aux, ch: dict(zip(aux, ch)),
        lambda aux, p: "{" + _items(aux, p) + "}",
        _dict_flatten,
    ),
    _mapping_node(
        OrderedDict,
        "OrderedDict",
        _ordered_split,
        _identity,
        lambda aux, ch: OrderedDict(zip(aux, ch)),
        lambda aux, p: f"OrderedDict({{{_items(aux, p)}}})",
    ),
    _mapping_node(
        defaultdict,
        "defaultdict",
        _ddict_split,
        lambda aux: aux[1],
        lambda aux, ch: defaultdict(aux[0], zip(aux[1], ch)),
        _show_ddict,
    ),
)


def _namedtuple_node(t: Any) -> NodeDef:
    fields = t._fields
    keys = tuple([GetAttrKey(f) for f in fields])
    name = type_name(t)

    def show(aux: Any, parts: list[str]) -> str:
        return f"{name}({', '.join(f'{f}={p}' for f, p in zip(fields, parts))})"

    return NodeDef(
        t,
        "namedtuple",
        _as_children,
        lambda aux, ch: t(*ch),
        lambda x: (keys, x, None),
        show,
        self_children=True,
    )


# ---------------------------------------------------------------------------
# Custom records and the registry
# ---------------------------------------------------------------------------


def custom_node(
    t: type,
    flatten: Flatten,
    unflatten: Unflatten,
    flatten_with_keys: FlattenWithKeys | None,
    show: Callable[[Any, list[str]], str] | None = None,
) -> NodeDef:
    """The record of a user node type from its (user-facing) functions: children
    come back as a list or tuple, and ``unflatten`` receives them as a tuple."""

    def flat(x: Any) -> tuple[Sequence[Any], Any]:
        children, aux = flatten(x)
        if not isinstance(children, (list, tuple)):
            children = list(children)
        return children, aux

    def unflat(aux: Any, children: Sequence[Any]) -> Any:
        return unflatten(aux, tuple(children))

    if flatten_with_keys is None:

        def flat_keys(x: Any) -> tuple[list[Any], Sequence[Any], Any]:
            children, aux = flat(x)
            return [FlattenedIndexKey(i) for i in range(len(children))], children, aux

    else:

        def flat_keys(x: Any) -> tuple[list[Any], Sequence[Any], Any]:
            pairs, aux = flatten_with_keys(x)
            pairs = list(pairs)
            return [p[0] for p in pairs], [p[1] for p in pairs], aux

    if show is None:
        name = type_name(t)

        def show(aux: Any, parts: list[str]) -> str:
            return f"CustomNode({name}[{aux!r}], [{', '.join(parts)}])"

    return NodeDef(t, "custom", flat, unflat, flat_keys, show)


def protocol_node(t: Any) -> NodeDef:
    """The record of a class with ``tree_flatten`` / ``tree_unflatten`` methods (looked
    up on the class at each call)."""
    fwk = None
    if hasattr(t, "tree_flatten_with_keys"):
        fwk = lambda x: t.tree_flatten_with_keys(x)
    return custom_node(
        t, lambda x: t.tree_flatten(x), lambda aux, ch: t.tree_unflatten(aux, ch), fwk
    )


registry: dict[type, NodeDef] = {nd.type: nd for nd in _BUILTINS}
"""Exactly-typed records: the built-ins and every registration."""

_derived: weakref.WeakKeyDictionary[type, NodeDef] = weakref.WeakKeyDictionary()
"""Records made on first use (namedtuples, protocol classes): one per class, kept while
the class lives, so treedefs compare their records by identity."""

memo: dict[type, NodeDef | None] = {}
"""Memo of ``type -> record`` (None for a leaf type); cleared on registration."""

_MEMO_LIMIT = 4096
MISSING: Any = object()


def _resolve(t: type) -> NodeDef | None:
    nd = registry.get(t)
    if nd is not None:
        return nd
    nd = _derived.get(t)
    if nd is None:
        # A class's own flatten/unflatten (the protocol) wins over the namedtuple default.
        if getattr(t, "__functrace_pytree__", False) is True:
            nd = protocol_node(t)
        elif issubclass(t, tuple) and hasattr(t, "_fields"):
            nd = _namedtuple_node(t)
        else:
            return None
        _derived[t] = nd
    return nd


def lookup(t: type) -> NodeDef | None:
    """The record of type ``t`` (None for a leaf type): the exact ``t`` in the registry;
    a class with ``__functrace_pytree__ = True``; a namedtuple class."""
    nd = memo.get(t, MISSING)
    if nd is MISSING:
        nd = _resolve(t)
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[t] = nd
    return nd


def node_of(x: Any) -> NodeDef | None:
    """The :class:`NodeDef` record of ``x``'s node type, or None if ``x`` is a leaf.

    Lookup order: the exact ``type(x)`` among the registered types (the built-ins
    included); a class with ``__functrace_pytree__ = True``; a namedtuple class. A
    namedtuple class with a registration of its own is flattened and rebuilt by it.

    Example:
        >>> nd = node_of((1, [2]))
        >>> nd.kind, nd.flatten((1, [2]))
        ('tuple', ((1, [2]), None))
        >>> node_of(1.0) is None
        True
    """
    return lookup(type(x))


def node_of_type(t: type) -> NodeDef | None:
    """The :class:`NodeDef` record of node type ``t`` (None for a leaf type), as :func:`node_of`.

    Example:
        >>> node_of_type(list).unflatten(None, [1, 2])
        [1, 2]
    """
    return lookup(t)


def register(nd: NodeDef) -> None:
    if not isinstance(nd.type, type):
        raise TypeError(f"pytree node type must be a class, got {nd.type!r}")
    if nd.type in registry:
        raise ValueError(f"{nd.type.__qualname__} is already registered as a pytree node type")
    registry[nd.type] = nd
    memo.clear()


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


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
        >>> from functrace.tree_util import tree_leaves
        >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
        ...                      lambda aux, ch: Pair(*ch))
        >>> tree_leaves(Pair(1, [2, 3]))
        [1, 2, 3]
    """
    register(custom_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


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
        >>> from functrace.tree_util import keystr, tree_flatten_with_path
        >>> register_pytree_with_keys(Box, lambda b: ([(GetAttrKey("v"), b.v)], None),
        ...                           lambda aux, ch: Box(*ch))
        >>> [keystr(p) for p, _ in tree_flatten_with_path(Box([1]))[0]]
        ['.v[0]']
    """
    if flatten_func is None:

        def flatten_func(x: Any) -> tuple[Iterable[Any], Any]:
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux

    register(custom_node(nodetype, flatten_func, unflatten_func, flatten_with_keys))


def register_static(cls: type) -> type:
    """Register ``cls`` as a pytree node with no children (``jax.tree_util.register_static``):
    an instance is kept whole in the treedef, so ``jit`` treats it as a static argument
    (a new value is a new signature) without ``static_argnums``, and ``grad``/``vmap``
    pass it through. Instances should be hashable and compare with ``==``. Returns
    ``cls``, so it works as a decorator.

    Example:
        >>> from functrace.tree_util import tree_leaves
        >>> @register_static
        ... class Mode(str):
        ...     pass
        >>> tree_leaves((1.0, Mode("add")))
        [1.0]
    """
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _children: obj)
    return cls


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` via its ``tree_flatten``/``tree_unflatten`` methods.

    ``cls.tree_flatten(self) -> (children, aux)`` and the classmethod
    ``cls.tree_unflatten(aux, children) -> instance``. An optional
    ``tree_flatten_with_keys(self)`` supplies key paths.

    Example:
        >>> from functrace.tree_util import tree_leaves
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
    register(protocol_node(cls))
    return cls


def register_dataclass(
    cls: type | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    *,
    constructor: Callable[..., Any] | None = None,
) -> Any:
    """Register a dataclass as a pytree node (also usable as a class decorator).

    Data fields become children; meta fields are stored as aux data in the
    treedef (they must be hashable-ish and comparable, and they take part in
    treedef equality). Instances are rebuilt with ``cls(**fields)``, or with
    ``constructor(**fields)`` when one is given.

    With neither field list given, every ``init=True`` dataclass field is data
    unless its ``metadata`` contains ``static=True``, which makes it meta. If
    only one list is given for a dataclass, the other is the remaining init
    fields.

    Args:
        cls: The class. If omitted, returns a decorator.
        data_fields: Names of fields holding child pytrees.
        meta_fields: Names of static fields stored in the treedef.
        constructor: Rebuilds an instance from all its fields as keywords, for a
            class whose ``__init__`` takes other arguments (e.g. one that sets the
            fields without calling ``__init__``). With a constructor, every
            dataclass field counts, not only the ``init=True`` ones.

    Returns:
        ``cls`` itself (or a decorator when ``cls`` is None).

    Raises:
        TypeError: If ``cls`` is not a dataclass and no field lists are given.
        ValueError: If the field lists overlap or do not cover the init fields.

    Example:
        >>> from functrace.tree_util import tree_structure
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
            return register_dataclass(c, data_fields, meta_fields, constructor=constructor)

        return decorator

    if not isinstance(cls, type):
        raise TypeError(f"register_dataclass expects a class, got {cls!r}")
    is_dc = dataclasses.is_dataclass(cls)
    every = constructor is not None  # then init=False fields count too
    if data_fields is None and meta_fields is None:
        if not is_dc:
            raise TypeError(
                f"register_dataclass: {cls.__qualname__} is not a dataclass; pass data_fields "
                "and meta_fields explicitly"
            )
        data: list[str] = []
        meta: list[str] = []
        for f in dataclasses.fields(cls):
            if not (f.init or every):
                continue
            (meta if f.metadata.get("static", False) else data).append(f.name)
    else:
        fields = dataclasses.fields(cls) if is_dc else ()
        init_names = [f.name for f in fields if f.init or every]
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

    register(_dataclass_node(cls, tuple(data), tuple(meta), constructor or cls))
    return cls


def _dataclass_node(
    cls: type, data: tuple[str, ...], meta: tuple[str, ...], make: Callable[..., Any]
) -> NodeDef:
    name = type_name(cls)
    keys = tuple([GetAttrKey(n) for n in data])

    def flatten(x: Any) -> tuple[list[Any], tuple[Any, ...]]:
        return [getattr(x, n) for n in data], tuple([getattr(x, n) for n in meta])

    def unflatten(aux: tuple[Any, ...], children: Sequence[Any]) -> Any:
        kwargs = dict(zip(data, children))
        kwargs.update(zip(meta, aux))
        return make(**kwargs)

    def flatten_with_keys(x: Any) -> tuple[tuple[Any, ...], list[Any], tuple[Any, ...]]:
        return keys, *flatten(x)

    def show(aux: Any, parts: list[str]) -> str:
        items = [f"{f}={p}" for f, p in zip(data, parts)]
        items += [f"{f}={v!r}" for f, v in zip(meta, aux)]
        return f"{name}({', '.join(items)})"

    return NodeDef(cls, "custom", flatten, unflatten, flatten_with_keys, show)


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


# ---------------------------------------------------------------------------
# Aux-data equality / hashing
# ---------------------------------------------------------------------------


def aux_eq(a: Any, b: Any) -> bool:
    """Structural ``==`` that tolerates NumPy arrays and unhashable containers."""
    if a is b:
        return True
    ta = type(a)
    if isinstance(a, (tuple, list)):
        if type(b) is not ta or len(a) != len(b):
            return False
        return all(aux_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if type(b) is not ta or a.keys() != b.keys():
            return False
        return all(aux_eq(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    try:
        r = a == b
        return bool(r)
    except Exception:
        return False


def aux_hash(a: Any) -> int:
    """Hash consistent with :func:`aux_eq` (falls back to the type for unhashables)."""
    try:
        return hash(a)
    except TypeError:
        pass
    if isinstance(a, (tuple, list)):
        return hash((type(a).__qualname__, tuple([aux_hash(v) for v in a])))
    if isinstance(a, dict):
        return hash(("dict", frozenset((k, aux_hash(v)) for k, v in a.items())))
    if isinstance(a, (set, frozenset)):
        return hash(frozenset(a))
    if isinstance(a, np.ndarray):
        return hash(("ndarray", a.shape, a.dtype.str, a.tobytes()))
    return hash(type(a).__qualname__)
