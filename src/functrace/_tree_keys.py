"""Key-path entries of pytrees and their rendering (re-exported by :mod:`functrace.tree_util`).

A key path is a tuple of entries leading from the root of a pytree to a subtree:
:class:`SequenceKey` for tuple/list positions, :class:`DictKey` for mapping keys,
:class:`GetAttrKey` for namedtuple and dataclass fields, :class:`FlattenedIndexKey`
for children of custom nodes registered without keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any

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
