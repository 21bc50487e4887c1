"""Checkpoints: ``save(path, tree)`` and ``load(path, like=None)``.

A checkpoint is a NumPy ``.npz`` file holding one array per leaf plus a small JSON
description of the tree (leaf paths, and the structure when it is made only of
dicts, lists, tuples and None). Writes are atomic: the file is written next to
the target and renamed over it, so a crash never leaves a half-written checkpoint.
Loading into ``like`` (e.g. freshly initialized params or optimizer state) checks
structure, shapes and dtypes and rebuilds the exact same pytree types.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from typing import Any

import numpy as np

from functrace import core
from functrace.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)

_FORMAT = "functrace-checkpoint-1"


def _describe(tree: Any) -> Any:
    """JSON structure for plain containers, or None when the tree has other node types."""
    if tree is None:
        return {"t": "none"}
    if type(tree) is dict:
        if not all(isinstance(k, str) for k in tree):
            return None
        items = {k: _describe(v) for k, v in tree.items()}
        return None if any(v is None for v in items.values()) else {"t": "dict", "c": items}
    if type(tree) in (list, tuple):
        items_l = [_describe(v) for v in tree]
        if any(v is None for v in items_l):
            return None
        return {"t": type(tree).__name__, "c": items_l}
    leaves = tree_flatten(tree)[0]
    if len(leaves) == 1 and leaves[0] is tree:
        return {"t": "leaf"}
    return None


def _rebuild(desc: Any, leaves: list[Any]) -> Any:
    t = desc["t"]
    if t == "none":
        return None
    if t == "leaf":
        return leaves.pop(0)
    if t == "dict":
        return {k: _rebuild(v, leaves) for k, v in desc["c"].items()}
    items = [_rebuild(v, leaves) for v in desc["c"]]
    return items if t == "list" else tuple(items)


def save(path: str | os.PathLike[str], tree: Any) -> None:
    """Write ``tree`` (params, optimizer state, ...) to ``path`` atomically."""
    path = os.fspath(path)
    leaves_paths, _ = tree_flatten_with_path(tree)
    arrays = {}
    for i, (_, x) in enumerate(leaves_paths):
        try:
            arrays[f"leaf_{i}"] = np.asarray(x)
        except Exception as e:
            raise TypeError(f"save: expected array leaves, got {core.describe_value(x)}.") from e
        if arrays[f"leaf_{i}"].dtype == object:
            raise TypeError(
                f"save: expected array leaves, got {type(x).__name__} at "
                f"{keystr(leaves_paths[i][0])}."
            )
    meta = {
        "format": _FORMAT,
        "paths": [keystr(p) for p, _ in leaves_paths],
        "structure": _describe(tree),
    }
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def describe(path: str | os.PathLike[str]) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{leaf path: (shape, dtype)}`` of a checkpoint, without building the tree."""
    meta, leaves = _read(os.fspath(path))
    return {p: (a.shape, a.dtype) for p, a in zip(meta["paths"], leaves)}


def _read(path: str) -> tuple[dict[str, Any], list[np.ndarray]]:
    try:
        with np.load(path, allow_pickle=False) as f:
            if "__meta__" not in set(f.files):
                raise ValueError(
                    f"load: expected a functrace checkpoint, got {path!r} without "
                    f"functrace metadata."
                )
            meta = json.loads(bytes(f["__meta__"]).decode())
            leaves = [f[f"leaf_{i}"] for i in range(len(meta["paths"]))]
    except FileNotFoundError:
        raise
    except (
        zipfile.BadZipFile,
        EOFError,
        OSError,
        KeyError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        ValueError,
    ) as e:
        if isinstance(e, ValueError) and str(e).startswith("load:"):
            raise
        raise ValueError(
            f"load: expected a complete checkpoint file, got {path!r}, which is "
            f"corrupted or truncated ({type(e).__name__}: {e})."
        ) from e
    if meta.get("format") != _FORMAT:
        raise ValueError(f"load: expected format {_FORMAT!r}, got {meta.get('format')!r}.")
    return meta, leaves


def load(path: str | os.PathLike[str], like: Any = None) -> Any:
    """Read a checkpoint written by :func:`save`.

    With ``like``, the result has ``like``'s exact pytree structure and every leaf is
    checked against ``like``'s shape and dtype. Without it, plain containers are
    rebuilt (a tree with modules or NamedTuples needs ``like``).
    """
    meta, leaves = _read(os.fspath(path))
    if like is None:
        if meta["structure"] is None:
            raise ValueError(
                "load: expected `like` for a checkpoint of a tree with modules or "
                "other registered nodes; pass like=<a tree of the same structure>."
            )
        return _rebuild(meta["structure"], list(leaves))
    like_leaves_paths, treedef = tree_flatten_with_path(like)
    like_paths = [keystr(p) for p, _ in like_leaves_paths]
    if like_paths != meta["paths"]:
        missing = [p for p in like_paths if p not in meta["paths"]]
        extra = [p for p in meta["paths"] if p not in like_paths]
        first = next(
            (a for a, b in zip(like_paths, meta["paths"]) if a != b),
            (missing or extra or ["<root>"])[0],
        )
        raise ValueError(
            f"load: expected the checkpoint to match the structure of `like`, got a "
            f"different tree; first differing path {first}. Missing in file: {missing[:5]}; "
            f"unexpected in file: {extra[:5]}."
        )
    out = []
    for p, (_, ref), arr in zip(like_paths, like_leaves_paths, leaves):
        ref_a = np.asarray(ref)
        if arr.shape != ref_a.shape:
            raise ValueError(f"load: expected shape {ref_a.shape} at {p}, got {arr.shape}.")
        if arr.dtype != ref_a.dtype:
            raise TypeError(f"load: expected dtype {ref_a.dtype} at {p}, got {arr.dtype}.")
        out.append(arr[()] if not isinstance(ref, np.ndarray) and arr.ndim == 0 else arr)
    return tree_unflatten(treedef, out)


__all__ = ["describe", "load", "save"]
