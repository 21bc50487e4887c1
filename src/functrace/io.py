"""Checkpoints: ``save(path, tree)``, ``load(path, like=None)`` and rotating
``save_checkpoint(directory, step, tree, keep=N)`` / ``latest_checkpoint(directory)``.

Format (version 2). A checkpoint is a NumPy ``.npz`` file (an uncompressed zip):
one member ``leaf_<i>.npy`` per leaf, in ``tree_flatten`` order, and a member
``__meta__.npy`` holding UTF-8 JSON::

    {"format": "functrace-checkpoint", "version": 2,
     "paths": ["['a']", ...],            # keystr of each leaf path
     "kinds": ["array", "float", ...],   # what each leaf was (see below)
     "structure": [...] | null,          # the tree's nodes in preorder, or null
     "why": "..."}                       # why the structure is null, if it is

Leaf kinds: ``array`` (an ``ndarray``, any dtype NumPy stores without pickle:
bool, integers, floats, complex, datetime64, timedelta64, bytes/str and
structured dtypes; 0-d and size-0 included), ``generic`` (a NumPy scalar),
``int``/``float``/``complex``/``bool`` (Python scalars), ``str``/``bytes``
(stored as UTF-8/raw ``uint8`` arrays). Other array-likes are stored with
``numpy.asarray`` and come back as arrays.

Structure nodes: ``none``, ``leaf``, ``tuple``/``list`` (with ``n`` children),
``dict`` (its keys in flatten order and their insertion ``order``), ``odict``,
``ddict`` (``defaultdict``), ``namedtuple`` and ``custom`` (a registered pytree
class or ``nn.Module``, named by module and qualified name, with its aux data).
Dict keys and aux data may be None, bools, ints, floats, strings, bytes,
tuples, lists, dicts of those, NumPy dtypes and scalars, classes of ``builtins``
and ``numpy``, and functions and classes of ``functrace`` (such as
``nn.relu``). A tree with anything else (a user-defined activation function,
say) is saved with ``structure: null`` and loads only with ``like=``.

Loading never unpickles and never imports a module named in a file: node
classes are looked up in the modules already imported (``functrace``'s own are
imported on demand). So a checkpoint of a user's namedtuple or registered class
loads without ``like`` in any process that has imported the class.

Writes are atomic: the file is written to ``.tmp-ft-<pid>-*.npz`` next to the
target, flushed, and renamed over it, so a crash (even ``kill -9``) never leaves
a half-written checkpoint; temp files of dead processes are deleted by the next
save in that directory and never read by :func:`load` or
:func:`latest_checkpoint`.

Every malformed file (truncated, not a zip, a plain ``.npy``, a foreign
``.npz``, an unknown version, hand-edited metadata, absurd shapes, deep
nesting, compressed or oversized members, bad CRCs) raises
:class:`CheckpointError`, a ``ValueError`` naming the file and the problem,
before any allocation larger than the file itself.
"""

from __future__ import annotations

import ast
import importlib
import json
import math
import os
import re
import sys
import tempfile
import time
import zipfile
from collections import OrderedDict, defaultdict
from typing import Any

import numpy as np

from functrace import core, tree_util
from functrace.tree_util import keystr, tree_flatten_with_path

FORMAT = "functrace-checkpoint"
VERSION = 2
_FORMAT_V1 = "functrace-checkpoint-1"
_MAX_AUX_DEPTH = 64
_MAX_DIMS = 64
_TMP_PREFIX = ".tmp-ft-"
_STALE_SECONDS = 3600.0  # temp files of unknown owners older than this are removed
_CKPT_RE = re.compile(r"^checkpoint_(\d+)\.npz$")


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


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _clean_temp_files(directory: str) -> None:
    """Delete temp files that crashed saves left in ``directory`` (see the module doc)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for name in names:
        if not (name.startswith(".tmp-") and name.endswith(".npz")):
            continue
        full = os.path.join(directory, name)
        m = re.match(r"^\.tmp-ft-(\d+)-", name)
        try:
            if m is not None:
                stale = not _pid_alive(int(m.group(1)))
            else:  # written by an older functrace (no pid in the name)
                stale = now - os.stat(full).st_mtime > _STALE_SECONDS
            if stale:
                os.remove(full)
        except (OSError, ValueError, OverflowError):
            pass


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save(path: str | os.PathLike[str], tree: Any) -> None:
    """Write ``tree`` (params, optimizer state, ...) to ``path`` atomically.

    Any pytree (dicts in their key order, lists, tuples, namedtuples, registered
    classes, ``nn.Module``s, None, empty containers) with leaves that are arrays of a
    dtype NumPy stores without pickle, NumPy scalars, Python scalars, ``str`` or
    ``bytes``. See the module docstring for the format.
    """
    path = os.fspath(path)
    leaves_paths, _ = tree_flatten_with_path(tree)
    nodes: list[_Node] = []
    _walk(tree, nodes)
    kinds = [info for kind, _, info in nodes if kind == "leaf"]
    assert len(kinds) == len(leaves_paths)
    paths = [keystr(p) for p, _ in leaves_paths]
    arrays = {
        f"leaf_{i}": _leaf_array(x, kinds[i], paths[i]) for i, (_, x) in enumerate(leaves_paths)
    }
    meta: dict[str, Any] = {"format": FORMAT, "version": VERSION, "paths": paths, "kinds": kinds}
    try:
        meta["structure"] = _encode(nodes)
    except _Unencodable as e:
        meta["structure"] = None
        meta["why"] = str(e)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    _clean_temp_files(directory)
    fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-", suffix=".npz", dir=directory)
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
    _fsync_dir(directory)


def checkpoint_path(directory: str | os.PathLike[str], step: int) -> str:
    """The file :func:`save_checkpoint` writes for ``step``: ``checkpoint_<step>.npz``
    (zero-padded to 8 digits)."""
    if isinstance(step, bool) or not isinstance(step, int | np.integer) or step < 0:
        raise TypeError(f"save_checkpoint: expected a non-negative int step, got {step!r}.")
    return os.path.join(os.fspath(directory), f"checkpoint_{int(step):08d}.npz")


def _steps(directory: str) -> list[tuple[int, str]]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        m = _CKPT_RE.match(name)
        if m is not None:
            out.append((int(m.group(1)), os.path.join(directory, name)))
    return sorted(out)


def save_checkpoint(
    directory: str | os.PathLike[str], step: int, tree: Any, *, keep: int | None = None
) -> str:
    """Save ``tree`` as ``<directory>/checkpoint_<step>.npz`` (atomically, like
    :func:`save`) and return its path. With ``keep=N``, only the ``N`` checkpoints of
    the highest steps are kept (older ones are deleted after the new one is written).

    >>> # for step in ...: save_checkpoint("ckpts", step, state, keep=3)
    >>> # state = load(latest_checkpoint("ckpts"), like=state)
    """
    if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        raise ValueError(f"save_checkpoint: expected keep to be None or an int >= 1, got {keep!r}.")
    path = checkpoint_path(directory, step)
    save(path, tree)
    if keep is not None:
        for _, old in _steps(os.fspath(directory))[:-keep]:
            try:
                os.remove(old)
            except FileNotFoundError:
                pass
    return path


def latest_checkpoint(directory: str | os.PathLike[str]) -> str | None:
    """The path of the highest-step ``checkpoint_<step>.npz`` in ``directory`` (None if
    there is none). Temp files of interrupted saves are never returned."""
    steps = _steps(os.fspath(directory))
    return steps[-1][1] if steps else None


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def _read_member_header(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, archive_size: int
) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    name = info.filename
    if info.flag_bits & 0x1:
        raise CheckpointError(f"{where}: member {name} is encrypted.")
    if info.compress_type != zipfile.ZIP_STORED:
        raise CheckpointError(
            f"{where}: member {name} is compressed (checkpoints are stored uncompressed)."
        )
    if info.file_size > archive_size or info.compress_size != info.file_size:
        raise CheckpointError(
            f"{where}: member {name} claims {info.file_size} bytes in a file of {archive_size}."
        )
    with zf.open(info) as m:
        version = np.lib.format.read_magic(m)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(m)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(m)
        else:
            raise CheckpointError(f"{where}: member {name} has .npy version {version}.")
        header_len = m.tell()
    if not (isinstance(shape, tuple) and len(shape) <= _MAX_DIMS):
        raise CheckpointError(f"{where}: member {name} has a bad shape {shape!r:.80}.")
    if not all(type(s) is int and 0 <= s < 2**62 for s in shape):
        raise CheckpointError(f"{where}: member {name} has a bad shape {shape!r:.80}.")
    if dtype.hasobject:
        raise CheckpointError(
            f"{where}: member {name} holds Python objects (checkpoints never hold pickles)."
        )
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if nbytes != info.file_size - header_len or (dtype.itemsize == 0 and count > 2**20):
        raise CheckpointError(
            f"{where}: member {name} declares shape {shape} of {dtype} ({nbytes} bytes) but "
            f"holds {info.file_size - header_len} bytes of data."
        )
    return dtype, shape, bool(fortran), header_len


def _read_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, header: tuple[np.dtype, tuple[int, ...], bool, int]
) -> np.ndarray:
    dtype, shape, fortran, header_len = header
    count = math.prod(shape)
    flat = np.empty(count, dtype)
    with zf.open(info) as m:
        m.read(header_len)
        if flat.nbytes:
            buf = flat.view(np.uint8)
            got = 0
            while got < buf.size:
                chunk = m.read(min(1 << 20, buf.size - got))
                if not chunk:
                    raise EOFError(f"member {info.filename} ends early")
                buf[got : got + len(chunk)] = np.frombuffer(chunk, np.uint8)
                got += len(chunk)
        if m.read(1):  # also makes zipfile check the CRC
            raise EOFError(f"member {info.filename} has trailing data")
    if fortran:
        return flat.reshape(shape[::-1]).T
    return flat.reshape(shape)


def _read(
    path: str, *, data: bool = True
) -> tuple[dict[str, Any], list[np.ndarray], list[tuple[tuple[int, ...], np.dtype]]]:
    where = f"load: {path!r}"
    try:
        with open(path, "rb") as f:
            archive_size = os.fstat(f.fileno()).st_size
            head = f.read(6)
            if head == b"\x93NUMPY":
                raise CheckpointError(
                    f"{where}: expected a functrace checkpoint (.npz), got a plain .npy file."
                )
            if not head.startswith(b"PK"):
                raise CheckpointError(
                    f"{where}: expected a functrace checkpoint (a zip file), got "
                    f"{'an empty file' if not head else 'something else'} (starts with {head!r})."
                )
            f.seek(0)
            with zipfile.ZipFile(f) as zf:
                infos = {i.filename: i for i in zf.infolist()}
                if len(infos) != len(zf.infolist()):
                    raise CheckpointError(f"{where}: duplicate zip members.")
                meta_info = infos.get("__meta__.npy")
                if meta_info is None:
                    raise CheckpointError(
                        f"{where}: expected a functrace checkpoint, got a .npz without "
                        f"functrace metadata."
                    )
                mh = _read_member_header(zf, meta_info, where, archive_size)
                if mh[0] != np.uint8 or len(mh[1]) != 1:
                    raise CheckpointError(f"{where}: the metadata is not a byte array.")
                meta = _parse_meta(_read_member(zf, meta_info, mh).tobytes(), where)
                n = len(meta["paths"])
                expected = {"__meta__.npy", *(f"leaf_{i}.npy" for i in range(n))}
                if set(infos) != expected:
                    extra = sorted(set(infos) - expected)[:3]
                    missing = sorted(expected - set(infos))[:3]
                    raise CheckpointError(
                        f"{where}: the metadata lists {n} leaves, but the file's members "
                        f"differ (missing {missing}, unexpected {extra})."
                    )
                headers = [
                    _read_member_header(zf, infos[f"leaf_{i}.npy"], where, archive_size)
                    for i in range(n)
                ]
                specs = [(h[1], h[0]) for h in headers]
                leaves = (
                    [_read_member(zf, infos[f"leaf_{i}.npy"], h) for i, h in enumerate(headers)]
                    if data
                    else []
                )
    except (FileNotFoundError, IsADirectoryError, PermissionError, CheckpointError):
        raise
    except RecursionError as e:
        raise CheckpointError(f"{where}: the metadata is nested too deeply.") from e
    except Exception as e:  # noqa: BLE001 - zipfile/NumPy errors on damaged files vary
        raise CheckpointError(
            f"{where}: expected a complete checkpoint file, got one that is corrupted or "
            f"truncated ({type(e).__name__}: {e})."
        ) from e
    return meta, leaves, specs


def _parse_meta(raw: bytes, where: str) -> dict[str, Any]:
    try:
        meta = json.loads(raw.decode("utf-8"))
    except RecursionError as e:
        raise CheckpointError(f"{where}: the metadata is nested too deeply.") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{where}: the metadata is not valid JSON ({e}).") from e
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where}: the metadata is not a JSON object.")
    fmt, version = meta.get("format"), meta.get("version")
    if fmt == _FORMAT_V1 and version is None:
        version = 1
    elif fmt != FORMAT:
        raise CheckpointError(f"{where}: expected format {FORMAT!r}, got {fmt!r:.80}.")
    if version not in (1, VERSION) or type(version) is not int:
        raise CheckpointError(
            f"{where}: checkpoint format version {version!r:.40}; this functrace reads "
            f"versions 1 to {VERSION}."
        )
    meta["version"] = version
    paths = meta.get("paths")
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        raise CheckpointError(f"{where}: the metadata's leaf paths are malformed.")
    kinds = meta.get("kinds", ["array"] * len(paths) if version == 1 else None)
    if not (
        isinstance(kinds, list)
        and len(kinds) == len(paths)
        and all(k in _LEAF_KINDS for k in kinds)
    ):
        raise CheckpointError(f"{where}: the metadata's leaf kinds are malformed.")
    meta["kinds"] = kinds
    return meta


def describe(path: str | os.PathLike[str]) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{leaf path: (shape, dtype)}`` of a checkpoint, without reading the arrays."""
    meta, _, specs = _read(os.fspath(path), data=False)
    return dict(zip(meta["paths"], specs))


def load(path: str | os.PathLike[str], like: Any = None) -> Any:
    """Read a checkpoint written by :func:`save`.

    Without ``like``, the saved tree is rebuilt exactly (types, dict key order, leaf
    kinds and bits). With ``like``, the result has ``like``'s pytree structure and
    every leaf is checked against ``like``'s shape and dtype (and leaves take the
    Python/NumPy scalar type of ``like``'s). A damaged or foreign file raises
    :class:`CheckpointError`; a mismatch with ``like`` raises ``ValueError`` (paths,
    shapes) or ``TypeError`` (dtypes).
    """
    path = os.fspath(path)
    where = f"load: {path!r}"
    meta, leaves, _ = _read(path)
    if like is None:
        if meta["structure"] is None:
            why = meta.get("why")
            raise CheckpointError(
                f"{where}: expected `like` for this checkpoint"
                + (f" (its tree holds {why})" if isinstance(why, str) else "")
                + "; pass like=<a tree of the same structure>."
            )
        if meta["version"] == 1:
            nodes = _decode_v1(meta["structure"], where)
        else:
            nodes = _decode(meta["structure"], where)
        values = [
            _leaf_value(a, k, where, p) for a, k, p in zip(leaves, meta["kinds"], meta["paths"])
        ]
        return _rebuild(nodes, values, where)
    like_leaves_paths, _ = tree_flatten_with_path(like)
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
    like_nodes: list[_Node] = []
    _walk(like, like_nodes)
    like_kinds = [info for kind, _, info in like_nodes if kind == "leaf"]
    out = []
    for p, (_, ref), arr, kind, fkind in zip(
        like_paths, like_leaves_paths, leaves, like_kinds, meta["kinds"]
    ):
        if kind in ("str", "bytes") or fkind in ("str", "bytes"):
            if kind != fkind:
                raise TypeError(f"load: expected a {kind} leaf at {p}, got a {fkind} leaf.")
            out.append(_leaf_value(arr, kind, where, p))
            continue
        ref_a = np.asarray(ref)
        if arr.shape != ref_a.shape:
            raise ValueError(f"load: expected shape {ref_a.shape} at {p}, got {arr.shape}.")
        if arr.dtype != ref_a.dtype:
            raise TypeError(f"load: expected dtype {ref_a.dtype} at {p}, got {arr.dtype}.")
        out.append(_leaf_value(arr, kind, where, p))
    return _rebuild(like_nodes, out, where)


__all__ = [
    "CheckpointError",
    "checkpoint_path",
    "describe",
    "latest_checkpoint",
    "load",
    "save",
    "save_checkpoint",
]
