"""Collectives on pytrees: ``allreduce`` and ``broadcast``.

Every call first checks, with one small ``Allgather`` of a signature (a hash of the
leaf paths, shapes and dtypes), that all processes passed the same kind of tree, so a
mismatch is the same ``ValueError`` on every process rather than a truncated message
or a hang. Then the leaves travel packed: ``allreduce`` makes one contiguous buffer per
dtype (one ``Allreduce`` per dtype per call, however many leaves), ``broadcast`` one
byte buffer for the whole tree (one ``Bcast``).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from functrace import core
from functrace.distributed import _world
from functrace.tree_util import keystr, tree_flatten_with_path, tree_unflatten

OPS = ("mean", "sum")


def _flatten(fname: str, tree: Any) -> tuple[list[str], list[np.ndarray], Any]:
    pairs, td = tree_flatten_with_path(tree)
    paths, arrays = [], []
    for path, leaf in pairs:
        where = keystr(path) or "the tree (a single leaf)"
        if isinstance(leaf, core.Tracer):
            raise TypeError(
                f"{fname}: expected concrete arrays, got {leaf.describe()} at {where}. "
                "Collectives run outside traced code: call them on the results of a "
                "jitted or differentiated function (data_parallel does), not inside it."
            )
        a = np.asarray(leaf)
        if a.dtype.hasobject:
            raise TypeError(
                f"{fname}: expected array leaves of a numeric dtype, got an object array "
                f"({type(leaf).__name__}) at {where}."
            )
        if not a.dtype.isnative:  # MPI buffers are in the native byte order
            a = a.astype(a.dtype.newbyteorder("="))
        paths.append(where)
        arrays.append(a)
    return paths, arrays, td


def _check_same_everywhere(fname: str, comm: Any, tag: str, paths: list[str], arrays: list) -> None:
    h = hashlib.blake2b(tag.encode(), digest_size=8)
    for p, a in zip(paths, arrays):
        h.update(f"|{p}|{a.dtype.str}|{a.shape}".encode())
    sig = np.frombuffer(h.digest(), dtype=np.int64).copy()
    size = comm.Get_size()
    gathered = np.empty(size, dtype=np.int64)
    comm.Allgather(sig, gathered)
    differ = [i for i in range(size) if gathered[i] != gathered[0]]
    if differ:
        raise ValueError(
            f"{fname}: expected the same tree (leaf paths, shapes and dtypes) and arguments "
            f"on every process, got a different one on process(es) "
            f"{', '.join(map(str, differ))} than on process 0. This process "
            f"({comm.Get_rank()}) passed {len(arrays)} leaves."
        )


def _reduction_dtype(fname: str, op: str, dt: np.dtype, where: str) -> np.dtype:
    if dt == np.float16:
        return np.dtype(np.float32)  # MPI has no half type: reduce in float32
    if dt.kind in "fc" or (op == "sum" and dt.kind in "iu"):
        return dt
    want = "floating or complex" if op == "mean" else "integer, floating or complex"
    hint = " (use op='sum' for integers)" if op == "mean" and dt.kind in "iu" else ""
    raise TypeError(f"{fname}: op={op!r} expected {want} leaves, got {dt} at {where}{hint}.")


def allreduce(tree: Any, op: str = "mean", *, weight: float | None = None) -> Any:
    """Reduce a pytree across all processes; every process gets the result.

    ``op="sum"``: the leafwise sum over processes; ``op="mean"``: the mean, or with
    ``weight=w`` (this process's weight, e.g. its number of examples) the weighted mean
    ``sum_i w_i x_i / sum_i w_i``; a process with ``w == 0`` contributes nothing, even
    where its values are NaN (an empty shard's mean loss). Every process must pass a
    tree with the same leaf paths, shapes and dtypes (else a ``ValueError`` on all of
    them). Returns the same tree structure with NumPy arrays of the same dtypes (in the
    native byte order) and shapes (a Python scalar leaf comes back as a 0-d array).
    ``op="mean"`` needs floating or complex leaves; float16 is reduced in float32. All
    leaves of one dtype travel in one buffer: one ``MPI_Allreduce`` per dtype per call.
    In a world of one process the result is a copy of the input. Like JAX's
    ``lax.psum``/``pmean`` across processes instead of devices; it runs eagerly,
    outside traced code.
    """
    fname = "allreduce"
    if op not in OPS:
        raise ValueError(f"{fname}: expected op as one of {OPS}, got {op!r}.")
    if weight is not None:
        if op != "mean":
            raise ValueError(f"{fname}: weight= applies to op='mean', got op={op!r}.")
        if isinstance(weight, bool) or not isinstance(
            weight, (int, float, np.integer, np.floating)
        ):
            raise TypeError(f"{fname}: expected weight as a number >= 0, got {weight!r}.")
        if not (math.isfinite(float(weight)) and float(weight) >= 0):
            raise ValueError(f"{fname}: expected weight as a finite number >= 0, got {weight!r}.")
    paths, arrays, td = _flatten(fname, tree)
    groups: dict[np.dtype, list[int]] = {}
    for i, a in enumerate(arrays):
        _reduction_dtype(fname, op, a.dtype, paths[i])  # checks every leaf first
        groups.setdefault(a.dtype, []).append(i)
    comm = _world.comm()
    size = comm.Get_size()
    if size == 1:
        if weight is not None and float(weight) == 0:
            raise ValueError(f"{fname}: the weights of all processes sum to 0 (weight=0).")
        return tree_unflatten(td, [np.array(a) for a in arrays])
    tag = f"allreduce:{op}:{weight is not None}"
    _check_same_everywhere(fname, comm, tag, paths, arrays)
    out: list[Any] = [None] * len(arrays)
    w = None if weight is None else float(weight)
    for dt, idx in groups.items():
        rdt = _reduction_dtype(fname, op, dt, paths[idx[0]])
        parts = [arrays[i].astype(rdt, copy=False).ravel() for i in idx]
        if w is not None:
            parts = [np.zeros_like(p) if w == 0 else p * rdt.type(w) for p in parts]
            parts.append(np.full(1, w, dtype=rdt))
        send = np.concatenate(parts) if parts else np.zeros(0, rdt)
        recv = np.empty_like(send)
        comm.Allreduce(send, recv, _world.sum_op())
        if op == "mean":
            if w is not None:
                total = recv[-1]
                if total == 0:
                    raise ValueError(f"{fname}: the weights of all processes sum to 0.")
                recv = recv[:-1] / total
            else:
                recv = recv / rdt.type(size)
        start = 0
        for i in idx:
            a = arrays[i]
            out[i] = recv[start : start + a.size].reshape(a.shape).astype(dt)
            start += a.size
    return tree_unflatten(td, out)


def broadcast(tree: Any, root: int = 0) -> Any:
    """Every process gets process ``root``'s tree.

    All processes pass a tree with the same leaf paths, shapes and dtypes (the others'
    values are ignored; use it to start every replica from the same parameters, like
    JAX's ``multihost_utils.broadcast_one_to_all``). Any fixed-size dtype works (the
    leaves travel as bytes, in one ``MPI_Bcast``). Returns NumPy arrays.
    """
    fname = "broadcast"
    size = _world.process_count()
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise ValueError(f"{fname}: expected root as a process index in [0, {size}), got {root!r}.")
    paths, arrays, td = _flatten(fname, tree)
    comm = _world.comm()
    if size == 1:
        return tree_unflatten(td, [np.array(a) for a in arrays])
    _check_same_everywhere(fname, comm, f"broadcast:{int(root)}", paths, arrays)
    parts = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays]
    buf = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    comm.Bcast(buf, root=int(root))
    out, start = [], 0
    for a, p in zip(arrays, parts):
        out.append(buf[start : start + p.size].view(a.dtype).reshape(a.shape).copy())
        start += p.size
    return tree_unflatten(td, out)
