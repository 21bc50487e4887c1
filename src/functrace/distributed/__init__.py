"""Data-parallel training over MPI (the ``mpi`` extra: ``pip install 'functrace[mpi]'``).

Launch one process per replica with an MPI launcher, e.g.::

    mpirun -n 2 python train.py

Each process holds the whole model, trains on its own shard of every batch
(``data.batches(..., shard=(process_index(), process_count()))`` with the same
``rng`` seed everywhere) and all-reduces its gradient before the optimizer, so every
replica applies the same update and the parameters stay identical::

    from functrace import distributed as dist
    dist.initialize()
    params = dist.broadcast(params)                      # one starting point
    grad_fn = dist.data_parallel(ft.jit(ft.value_and_grad(loss)), has_value=True)
    for x, y in data.batches(X, Y, batch_size=64, rng=seed,
                             shard=(dist.process_index(), dist.process_count())):
        loss_value, grads = grad_fn(params, x, y)        # the global batch's gradient
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)

Started without a launcher, the world is the process alone and everything works on
one process (``mpi4py`` is not even imported). ``mpi4py`` is imported by
:func:`initialize` only, never by ``import functrace``.

Failures: Open MPI's ``mpirun`` aborts the whole job when a process exits with a
non-zero status or is killed (its default, MCA parameter
``orte_abort_on_non_zero_status``); :func:`initialize` makes an uncaught Python
exception abort the job too (``MPI_Abort`` after the traceback), so no process waits
forever for a dead peer. A process that hangs while alive is bounded only by
``mpirun --timeout SECONDS`` (or ``MPIEXEC_TIMEOUT``).
"""

from __future__ import annotations

from functrace.distributed._collectives import allreduce, broadcast
from functrace.distributed._training import data_parallel, save_checkpoint
from functrace.distributed._world import (
    barrier,
    initialize,
    is_initialized,
    process_count,
    process_index,
)

__all__ = [
    "allreduce",
    "barrier",
    "broadcast",
    "data_parallel",
    "initialize",
    "is_initialized",
    "process_count",
    "process_index",
    "save_checkpoint",
]
