"""The tree inside a checkpoint: its structure as a preorder list of nodes, their JSON
encoding (dict keys, aux data and node classes, looked up without importing), the
leaves as stored arrays, and :class:`CheckpointError`, raised by every reader of the
format."""

from __future__ import annotations

import ast
import importlib
import sys
from collections import OrderedDict, defaultdict
from typing import Any

import numpy as np

from functrace import core, tree_util

_MAX_AUX_DEPTH = 64


class CheckpointError(ValueError):
    """A file that is not a readable functrace checkpoint (truncated, damaged,
    tampered with, another format or version), or a checkpoint whose tree cannot be
    rebuilt without ``like=``. The message names the file and what is wrong."""


class _Unencodable(Exception):
    pass


# ---------------------------------------------------------------------------
# Structure: a preorder list of nodes (kind, number of children, info)
# ---------------------------------------------------------------------------

_Node = tuple[str, int, Any]


def _leaf_kind(x: Any) -> str:
    t = type(x)
    if t is np.ndarray:
        return "array"
    if isinstance(x, np.generic):
        return "generic"
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float"
    if t is complex:
        return "complex"
    if t is str:
        return "str"
    if t is bytes:
        return "bytes"
    return "array"


def _walk(x: Any, nodes: list[_Node]) -> None:
    if x is None:
        nodes.append(("none", 0, None))
        return
    nd = tree_util.node_of(x)
    if nd is None:
        nodes.append(("leaf", 0, _leaf_kind(x)))
        return
    children, aux = nd.flatten(x)
    k = nd.kind
    n = len(children)
    if k == "tuple" or k == "list":
        nodes.append((k, n, None))
    elif k == "dict":
        pos = {q: i for i, q in enumerate(aux)}
        nodes.append(("dict", n, (tuple(aux), tuple(pos[q] for q in x))))
    elif k == "OrderedDict":
        nodes.append(("odict", n, tuple(aux)))
    elif k == "defaultdict":
        factory, keys = aux
        pos = {q: i for i, q in enumerate(keys)}
        nodes.append(("ddict", n, (factory, tuple(keys), tuple(pos[q] for q in x))))
    elif k == "namedtuple":
        nodes.append(("namedtuple", n, type(x)))
    else:
        nodes.append(("custom", n, (type(x), aux)))
    for c in children:
        _walk(c, nodes)


def _make_node(node: _Node, children: list[Any]) -> Any:
    kind, _, info = node
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        keys, order = info
        return {keys[i]: children[i] for i in order}
    if kind == "odict":
        return OrderedDict(zip(info, children))
    if kind == "ddict":
        factory, keys, order = info
        return defaultdict(factory, [(keys[i], children[i]) for i in order])
    if kind == "namedtuple":
        return info(*children)
    cls, aux = info
    nd = tree_util.node_of_type(cls)
    assert nd is not None
    return nd.unflatten(aux, children)


def _rebuild(nodes: list[_Node], leaves: list[Any], where: str) -> Any:
    """Build the tree from preorder ``nodes`` without recursion (files may nest deeply)."""
    stack: list[Any] = []
    li = len(leaves)
    for node in reversed(nodes):
        kind, n = node[0], node[1]
        if kind == "leaf":
            li -= 1
            if li < 0:
                raise CheckpointError(f"{where}: the structure has more leaves than the file.")
            stack.append(leaves[li])
            continue
        if n > len(stack):
            raise CheckpointError(
                f"{where}: the structure is inconsistent (a {kind} node "
                f"expects {n} children, {len(stack)} are left)."
            )
        children = [stack.pop() for _ in range(n)]
        try:
            stack.append(_make_node(node, children))
        except CheckpointError:
            raise
        except Exception as e:
            raise CheckpointError(
                f"{where}: could not rebuild a {kind} node ({type(e).__name__}: {e})."
            ) from e
    if li != 0 or len(stack) != 1:
        raise CheckpointError(
            f"{where}: the structure does not describe one tree of {len(leaves)} leaves."
        )
    return stack[0]


# -- JSON encoding of nodes, dict keys and aux data ----------------------------


def _ref(obj: Any) -> list[str]:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        raise _Unencodable(f"{obj!r} has no importable name")
    return [module, qualname]


def _aux_ref_allowed(module: str, obj: Any) -> bool:
    """Which functions and classes a file may name in aux data (see the module doc)."""
    if module == "functrace" or module.startswith("functrace."):
        return callable(obj)
    return isinstance(obj, type) and (module == "builtins" or module.split(".")[0] == "numpy")


def _enc_value(v: Any, depth: int = 0) -> Any:
    if depth > _MAX_AUX_DEPTH:
        raise _Unencodable("aux data nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v
    if t is float:
        return {"float": v.hex()}
    if t is bytes:
        return {"bytes": v.hex()}
    if t is tuple or t is list:
        return {t.__name__: [_enc_value(c, depth + 1) for c in v]}
    if t is dict:
        return {
            "dict": [[_enc_value(k, depth + 1), _enc_value(c, depth + 1)] for k, c in v.items()]
        }
    if isinstance(v, np.dtype):
        if v.hasobject:
            raise _Unencodable(f"dtype {v}")
        return {"dtype": np.lib.format.dtype_to_descr(v)}
    if isinstance(v, np.generic) and not v.dtype.hasobject:
        return {"np": [np.lib.format.dtype_to_descr(v.dtype), np.asarray(v).tobytes().hex()]}
    if isinstance(v, type) or callable(v):
        ref = _ref(v)
        if not _aux_ref_allowed(ref[0], v) or _resolve(ref, "aux", None) is not v:
            raise _Unencodable(
                f"{ref[0]}.{ref[1]} (only functrace's functions and classes, and builtins' "
                f"and numpy's classes, are stored by name)"
            )
        return {"ref": ref}
    raise _Unencodable(f"a {t.__module__}.{t.__qualname__} in the tree's static data")


def _encode(nodes: list[_Node]) -> list[Any]:
    out: list[Any] = []
    for kind, n, info in nodes:
        if kind in ("none", "tuple", "list"):
            out.append({"t": kind, "n": n} if kind != "none" else {"t": kind})
        elif kind == "leaf":
            out.append({"t": "leaf"})
        elif kind == "dict":
            keys, order = info
            out.append({"t": kind, "keys": [_enc_value(q) for q in keys], "order": list(order)})
        elif kind == "odict":
            out.append({"t": kind, "keys": [_enc_value(q) for q in info]})
        elif kind == "ddict":
            factory, keys, order = info
            out.append(
                {
                    "t": kind,
                    "factory": _enc_value(factory),
                    "keys": [_enc_value(q) for q in keys],
                    "order": list(order),
                }
            )
        elif kind == "namedtuple":
            out.append({"t": kind, "type": _ref(info), "fields": list(info._fields), "n": n})
        else:
            cls, aux = info
            out.append({"t": kind, "type": _ref(cls), "aux": _enc_value(aux), "n": n})
    return out


def _resolve(ref: Any, what: str, where: str | None) -> Any:
    """The object named ``[module, qualname]``, from modules already imported (functrace's
    own are imported on demand); never imports anything else."""

    def bad(msg: str) -> Any:
        if where is None:
            return None
        raise CheckpointError(f"{where}: {msg}")

    if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(s, str) for s in ref)):
        return bad(f"expected a [module, name] reference for a {what}, got {ref!r:.80}.")
    module, qualname = ref
    mod = sys.modules.get(module)
    if mod is None and (module == "functrace" or module.startswith("functrace.")):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            mod = None
    if mod is None:
        return bad(
            f"its tree holds {what} {module}.{qualname}, but module {module!r} is not "
            f"imported in this process; import it first or pass like=<a tree of the same "
            f"structure>."
        )
    obj: Any = mod
    for part in qualname.split("."):
        if not part.isidentifier():
            return bad(f"expected a qualified name for a {what}, got {qualname!r:.80}.")
        obj = getattr(obj, part, None)
        if obj is None:
            return bad(f"its tree holds {what} {module}.{qualname}, which does not exist.")
    if getattr(obj, "__module__", None) != module or getattr(obj, "__qualname__", None) != qualname:
        return bad(f"{module}.{qualname} is not the canonical name of a {what}.")
    return obj


def _dec_value(v: Any, where: str, depth: int = 0) -> Any:
    if depth > _MAX_AUX_DEPTH:
        raise CheckpointError(f"{where}: static data nested deeper than {_MAX_AUX_DEPTH} levels.")
    if v is None or isinstance(v, bool | str | int):
        return v
    if not (isinstance(v, dict) and len(v) == 1):
        raise CheckpointError(f"{where}: unexpected value {v!r:.80} in the structure.")
    ((tag, x),) = v.items()
    try:
        if tag == "float" and isinstance(x, str):
            return float.fromhex(x)
        if tag == "bytes" and isinstance(x, str):
            return bytes.fromhex(x)
        if tag in ("tuple", "list") and isinstance(x, list):
            items = [_dec_value(c, where, depth + 1) for c in x]
            return tuple(items) if tag == "tuple" else items
        if tag == "dict" and isinstance(x, list):
            out = {}
            for pair in x:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise CheckpointError(f"{where}: malformed dict entry {pair!r:.80}.")
                out[_dec_value(pair[0], where, depth + 1)] = _dec_value(pair[1], where, depth + 1)
            return out
        if tag == "dtype":
            return _safe_dtype(x, where)
        if tag == "np" and isinstance(x, list) and len(x) == 2 and isinstance(x[1], str):
            dt = _safe_dtype(x[0], where)
            raw = bytes.fromhex(x[1])
            if len(raw) != dt.itemsize:
                raise CheckpointError(f"{where}: a NumPy scalar of {dt} with {len(raw)} bytes.")
            return np.frombuffer(raw, dt)[0]
        if tag == "ref":
            obj = _resolve(x, "a function or class", where)
            if not _aux_ref_allowed(x[0], obj):
                raise CheckpointError(
                    f"{where}: refers to {x[0]}.{x[1]}; only functrace's functions and "
                    f"classes, and builtins' and numpy's classes, are loaded by name."
                )
            return obj
    except CheckpointError:
        raise
    except (TypeError, ValueError, OverflowError) as e:
        raise CheckpointError(f"{where}: malformed {tag} value ({e}).") from e
    raise CheckpointError(f"{where}: unexpected value {v!r:.80} in the structure.")


def _safe_dtype(descr: Any, where: str) -> np.dtype:
    try:
        if isinstance(descr, list):  # structured: JSON turned the tuples into lists
            descr = ast.literal_eval(repr(_tuplify(descr, 0)))
        dt = np.lib.format.descr_to_dtype(descr)
    except Exception as e:  # noqa: BLE001 - any bad description is the file's fault
        raise CheckpointError(f"{where}: bad dtype {descr!r:.80} ({e}).") from e
    if dt.hasobject:
        raise CheckpointError(f"{where}: an object dtype (checkpoints never hold pickles).")
    return dt


def _tuplify(x: Any, depth: int) -> Any:
    if depth > _MAX_AUX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(x, list):
        if x and isinstance(x[0], str):  # a (name, type[, shape]) field
            return tuple(_tuplify(c, depth + 1) for c in x)
        return [_tuplify(c, depth + 1) for c in x]
    return x


def _int_list(x: Any, n: int | None, where: str, what: str) -> list[int]:
    if not (isinstance(x, list) and all(type(i) is int for i in x)):
        raise CheckpointError(f"{where}: expected a list of ints for {what}, got {x!r:.80}.")
    if n is not None and sorted(x) != list(range(n)):
        raise CheckpointError(f"{where}: {what} is not a permutation of {n} positions.")
    return x


def _decode(desc: Any, where: str) -> list[_Node]:
    if not isinstance(desc, list):
        raise CheckpointError(f"{where}: expected the structure as a list of nodes.")
    nodes: list[_Node] = []
    for d in desc:
        if not (isinstance(d, dict) and isinstance(d.get("t"), str)):
            raise CheckpointError(f"{where}: malformed structure node {d!r:.80}.")
        kind = d["t"]
        n = d.get("n", 0)
        if type(n) is not int or n < 0:
            raise CheckpointError(f"{where}: bad child count {n!r:.40} in a {kind} node.")
        if kind in ("none", "leaf"):
            nodes.append((kind, 0, None))
        elif kind in ("tuple", "list"):
            nodes.append((kind, n, None))
        elif kind in ("dict", "odict", "ddict"):
            keys_raw = d.get("keys")
            if not isinstance(keys_raw, list):
                raise CheckpointError(f"{where}: a {kind} node without a key list.")
            keys = tuple(_dec_value(q, where) for q in keys_raw)
            try:
                if len(set(keys)) != len(keys):
                    raise CheckpointError(f"{where}: duplicate keys in a {kind} node.")
            except TypeError as e:
                raise CheckpointError(f"{where}: unhashable dict key ({e}).") from e
            n = len(keys)
            if kind == "odict":
                nodes.append((kind, n, keys))
                continue
            order = tuple(_int_list(d.get("order"), n, where, "a dict's key order"))
            if kind == "dict":
                nodes.append((kind, n, (keys, order)))
            else:
                factory = _dec_value(d.get("factory"), where)
                if factory is not None and not callable(factory):
                    raise CheckpointError(f"{where}: a defaultdict factory that is not callable.")
                nodes.append((kind, n, (factory, keys, order)))
        elif kind == "namedtuple":
            cls = _resolve(d.get("type"), "the namedtuple", where)
            if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise CheckpointError(f"{where}: {d['type']} is not a namedtuple class.")
            if list(cls._fields) != d.get("fields") or len(cls._fields) != n:
                raise CheckpointError(
                    f"{where}: namedtuple {cls.__qualname__} has fields {list(cls._fields)} in "
                    f"this process, the file has {d.get('fields')!r:.80}."
                )
            nodes.append((kind, n, cls))
        elif kind == "custom":
            cls = _resolve(d.get("type"), "the pytree class", where)
            nd = tree_util.node_of_type(cls) if isinstance(cls, type) else None
            if nd is None or nd.kind != "custom":
                raise CheckpointError(
                    f"{where}: {d['type']} is not a registered pytree class in this process."
                )
            nodes.append((kind, n, (cls, _dec_value(d.get("aux"), where))))
        else:
            raise CheckpointError(f"{where}: unknown structure node kind {kind!r:.40}.")
    return nodes


def _decode_v1(desc: Any, where: str) -> list[_Node]:
    """Version-1 structures: nested, dicts in insertion order but leaves in sorted order."""
    nodes: list[_Node] = []
    todo: list[tuple[Any, int]] = [(desc, 0)]
    while todo:
        d, depth = todo.pop()
        if depth > 1000 or not (isinstance(d, dict) and isinstance(d.get("t"), str)):
            raise CheckpointError(f"{where}: malformed version-1 structure.")
        t = d["t"]
        if t in ("none", "leaf"):
            nodes.append((t, 0, None))
        elif t == "dict" and isinstance(d.get("c"), dict):
            insertion = list(d["c"])
            keys = tuple(sorted(insertion))
            pos = {q: i for i, q in enumerate(keys)}
            nodes.append(("dict", len(keys), (keys, tuple(pos[q] for q in insertion))))
            todo.extend((d["c"][q], depth + 1) for q in reversed(keys))
        elif t in ("list", "tuple") and isinstance(d.get("c"), list):
            nodes.append((t, len(d["c"]), None))
            todo.extend((c, depth + 1) for c in reversed(d["c"]))
        else:
            raise CheckpointError(f"{where}: malformed version-1 structure node {t!r:.40}.")
    return nodes


# ---------------------------------------------------------------------------
# Leaves
# ---------------------------------------------------------------------------


def _leaf_array(x: Any, kind: str, path: str) -> np.ndarray:
    if kind == "str":
        return np.frombuffer(x.encode("utf-8", "surrogatepass"), np.uint8)
    if kind == "bytes":
        return np.frombuffer(x, np.uint8)
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(
            f"save: expected array leaves, got {core.describe_value(x)} at {path}."
        ) from e
    if a.dtype.hasobject:
        raise TypeError(
            f"save: expected array leaves (any dtype NumPy stores without pickle), got "
            f"{type(x).__name__} of dtype {a.dtype} at {path}."
        )
    return a


def _leaf_value(a: np.ndarray, kind: str, where: str, path: str) -> Any:
    if kind == "array":
        return a
    if kind in ("str", "bytes"):
        if a.dtype != np.uint8 or a.ndim != 1:
            raise CheckpointError(f"{where}: the {kind} leaf at {path} is not a byte array.")
        raw = a.tobytes()
        try:
            return raw.decode("utf-8", "surrogatepass") if kind == "str" else raw
        except UnicodeDecodeError as e:
            raise CheckpointError(f"{where}: the str leaf at {path} is not UTF-8.") from e
    if a.ndim != 0:
        raise CheckpointError(f"{where}: the scalar leaf at {path} has shape {a.shape}.")
    v = a[()]
    if kind == "generic":
        return v
    conv = {"int": int, "float": float, "complex": complex, "bool": bool}[kind]
    try:
        return conv(v)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{where}: the {kind} leaf at {path} holds a {a.dtype}.") from e


_LEAF_KINDS = frozenset({"array", "generic", "int", "float", "complex", "bool", "str", "bytes"})
