"""Data-parallel training: ``data_parallel`` (an all-reduced gradient function) and
``save_checkpoint`` (written once, by process 0)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import io
from functrace.distributed import _world
from functrace.distributed._collectives import OPS, allreduce
from functrace.tree_util import tree_leaves


def _local_weight(fname: str, args: tuple[Any, ...], batch_argnum: int) -> int:
    if not -len(args) <= batch_argnum < len(args):
        raise ValueError(
            f"{fname}: expected a batch argument at position {batch_argnum} (batch_argnum), "
            f"got {len(args)} positional arguments. Pass batch_argnum=None for equal weights."
        )
    leaves = tree_leaves(args[batch_argnum])
    shape = np.shape(leaves[0]) if leaves else ()
    if not shape:
        raise ValueError(
            f"{fname}: expected the batch argument (position {batch_argnum}) to be an array "
            f"with a leading batch axis, got "
            f"{'an empty tree' if not leaves else f'a value of shape {shape}'}."
        )
    return int(shape[0])


def data_parallel(
    grad_fn: Callable[..., Any],
    op: str = "mean",
    *,
    has_value: bool = False,
    has_aux: bool = False,
    batch_argnum: int | None = 1,
) -> Callable[..., Any]:
    """Wrap a gradient function so that its gradient is all-reduced over the processes.

    ``grad_fn`` is ``grad(loss)`` (its output is the gradient), or with
    ``has_value=True`` ``value_and_grad(loss)`` (output ``(value, grads)``; the value is
    reduced too, so every process sees the global loss; with ``has_aux=True`` the value
    is ``(loss, aux)`` and only ``loss`` is reduced). The returned function has
    ``grad_fn``'s signature; each process calls it on its own shard of the batch.

    ``op="mean"`` weights each process by its number of examples, the length along
    axis 0 of the positional argument ``batch_argnum`` (its first leaf if it is a
    tree): for a loss that is a mean over the batch, the result is exactly the
    gradient of the mean over the global batch, also when the shards have different
    sizes (``data.batches(..., shard=)`` splits a batch as evenly as possible) or
    some are empty. ``batch_argnum=None`` weights the processes equally. ``op="sum"``
    sums (for a loss that is a sum). All outputs are reduced in one :func:`allreduce`
    (one ``MPI_Allreduce`` per dtype).

    ``grad_fn`` may be jitted: the all-reduce runs after it returns, outside the
    compiled code (as a Python call between two compiled steps); do not ``jit`` the
    returned function itself.
    """
    fname = "data_parallel"
    if not callable(grad_fn):
        raise TypeError(f"{fname}: expected a callable grad_fn, got {type(grad_fn).__name__}.")
    if op not in OPS:
        raise ValueError(f"{fname}: expected op as one of {OPS}, got {op!r}.")
    if has_aux and not has_value:
        raise ValueError(f"{fname}: has_aux=True needs has_value=True (value_and_grad).")

    @functools.wraps(grad_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        weight = None
        if op == "mean" and batch_argnum is not None:
            weight = _local_weight(fname, args, batch_argnum)
        out = grad_fn(*args, **kwargs)
        if not has_value:
            return allreduce(out, op, weight=weight)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError(
                f"{fname}: has_value=True expected grad_fn to return (value, grads), got "
                f"{type(out).__name__}{f' of length {len(out)}' if isinstance(out, tuple) else ''}."
            )
        value, grads = out
        if has_aux:
            if not isinstance(value, tuple) or len(value) != 2:
                raise ValueError(
                    f"{fname}: has_aux=True expected the value as (loss, aux), got "
                    f"{type(value).__name__}."
                )
            (loss, aux), grads = value, grads
            loss, grads = allreduce((loss, grads), op, weight=weight)
            return (loss, aux), grads
        return allreduce((value, grads), op, weight=weight)

    return wrapped


def save_checkpoint(path: str | os.PathLike[str], tree: Any) -> None:
    """Write ``tree`` to ``path`` once: process 0 saves it (``functrace.io.save``,
    atomic) while the others wait; every process returns after the file is complete.

    ``path`` must be on a file system every process sees (one machine, or a shared
    one). Load it on every process with ``functrace.io.load(path, like=...)``. If
    process 0 fails to write, it raises its error and the others raise an ``OSError``
    naming the file, so no process is left waiting.
    """
    comm = _world.comm()
    status = np.zeros(1, dtype=np.int64)
    error: BaseException | None = None
    if comm.Get_rank() == 0:
        try:
            io.save(path, tree)
        except Exception as e:  # reported to every process below
            status[0], error = 1, e
    comm.Bcast(status, root=0)
    if error is not None:
        raise error
    if status[0]:
        raise OSError(f"save_checkpoint: process 0 failed to write {os.fspath(path)!r}.")
