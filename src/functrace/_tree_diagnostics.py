"""How a pytree differs from an expected structure: the text of structure-mismatch errors.

:func:`mismatch_message` finds the first (pre-order) key path where a pytree and a
treedef disagree and says what was expected and found there;
``tree_util.structure_mismatch_message`` is its public face. Treedefs are read
through their node record (``_node``), aux data (``_aux``) and children
(``_children``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace._tree_keys import DictKey, keystr
from functrace._tree_nodes import NodeDef, aux_eq, lookup, type_name


def path_str(path: Sequence[Any]) -> str:
    return keystr(path) if path else "<root>"


def _children_count(n: int) -> str:
    return "1 child" if n == 1 else f"{n} children"


def describe(nd: NodeDef | None, aux: Any, n: int, *, expected: bool, value: Any = None) -> str:
    """Human description of one node, e.g. ``a list of 2 children`` (``nd`` None: a leaf)."""
    if nd is None:
        return "a leaf" if expected else f"a leaf of type {type_name(type(value))}"
    kind = nd.kind
    if kind == "none":
        return "None"
    if nd.mapping_keys is not None:
        article = "an" if kind == "OrderedDict" else "a"
        return f"{article} {type_name(nd.type)} with keys {list(nd.mapping_keys(aux))!r}"
    count = _children_count(n) if expected else str(n)
    if kind == "tuple" or kind == "list":
        return f"a {kind} of {count}"
    if kind == "namedtuple":
        return f"a namedtuple {type_name(nd.type)} of {count}"
    return f"a {type_name(nd.type)} node of {count}"


def find_mismatch(
    td: Any,
    x: Any,
    path: tuple[Any, ...],
    prefix: bool,
    is_leaf: Callable[[Any], bool] | None,
) -> tuple[tuple[Any, ...], str] | None:
    """Return ``(path, detail)`` of the first (pre-order) difference, or None."""
    want: NodeDef | None = td._node
    got_nd = None if is_leaf is not None and is_leaf(x) else lookup(type(x))
    if want is None:
        if prefix or got_nd is None:
            return None
        children, aux = got_nd.flatten(x)
        return path, f"expected a leaf, got {describe(got_nd, aux, len(children), expected=False)}"
    exp = describe(want, td._aux, len(td._children), expected=True)
    if got_nd is None:
        return path, f"expected {exp}, got {describe(None, None, 0, expected=False, value=x)}"
    keys, children, aux = got_nd.flatten_with_keys(x)
    got = describe(got_nd, aux, len(children), expected=False)
    if got_nd is not want:
        return path, f"expected {exp}, got {got}"
    if want.mapping_keys is not None:
        exp_keys, got_keys = want.mapping_keys(td._aux), want.mapping_keys(aux)
        if want.kind == "defaultdict" and aux[0] is not td._aux[0]:
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
        keys = [DictKey(q) for q in exp_keys]
        children = [x[q] for q in exp_keys]
    elif len(children) != len(td._children):
        return path, f"expected {exp}, got {got}"
    elif not aux_eq(td._aux, aux):
        name = type_name(want.type)
        return path, (
            f"expected a {name} node with aux data {td._aux!r}, got a {name} node with "
            f"aux data {aux!r}"
        )
    for q, c, sub in zip(keys, td._children, children):
        r = find_mismatch(c, sub, (*path, q), prefix, is_leaf)
        if r is not None:
            return r
    return None


def mismatch_message(
    expected: Any,
    given: Any,
    given_repr: str,
    what: str,
    prefix: bool,
    is_leaf: Callable[[Any], bool] | None,
) -> str:
    """The text of ``tree_util.structure_mismatch_message``; ``given_repr`` is the repr
    of the given tree's structure."""
    found = find_mismatch(expected, given, (), prefix, is_leaf)
    if found is None:
        head = f"{what}: pytree structure mismatch (no differing path found)"
    else:
        path, detail = found
        head = (
            f"{what}: pytree structure mismatch; first differing at path {path_str(path)}: {detail}"
        )
    label = "expected structure (prefix)" if prefix else "expected structure"
    return f"{head}\n  {label}: {expected!r}\n  given structure: {given_repr}"
