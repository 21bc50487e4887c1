"""The checkpoint files: ``save`` (atomic writes), ``load``/``describe`` (reading a
``.npz`` without trusting it) and the rotating ``save_checkpoint``/``latest_checkpoint``;
the tree inside a file is encoded by ``functrace.io._tree``."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
import zipfile
from typing import Any

import numpy as np

from functrace.io._tree import (
    _LEAF_KINDS,
    CheckpointError,
    _decode,
    _decode_v1,
    _encode,
    _leaf_array,
    _leaf_value,
    _Node,
    _rebuild,
    _Unencodable,
    _walk,
)
from functrace.tree_util import keystr, tree_flatten_with_path

FORMAT = "functrace-checkpoint"
VERSION = 2
_FORMAT_V1 = "functrace-checkpoint-1"
_MAX_DIMS = 64
_TMP_PREFIX = ".tmp-ft-"
_STALE_SECONDS = 3600.0  # temp files of unknown owners older than this are removed
_CKPT_RE = re.compile(r"^checkpoint_(\d+)\.npz$")

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
