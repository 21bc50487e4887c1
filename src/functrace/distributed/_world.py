"""The process group: which process this is, how many there are, and the communicator.

Two backends with one interface (the subset of mpi4py's communicator that the
collectives use): MPI's ``COMM_WORLD`` when the process was started by an MPI
launcher, and :class:`LocalComm`, a world of this process alone, otherwise.
``mpi4py`` is imported here, inside :func:`initialize`, never when ``functrace``
is imported.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import numpy as np

# Variables that MPI launchers set in the processes they start: Open MPI's mpirun,
# MPICH/Intel MPI's hydra (PMI), PMIx-based launchers (Open MPI 5, srun --mpi=pmix)
# and MVAPICH.
LAUNCHER_VARIABLES = (
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_SIZE",
)

INSTALL_HINT = "pip install 'functrace[mpi]'"


class LocalComm:
    """A world of one process with the communicator methods the collectives use."""

    # mpi4py's method names.
    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any = None) -> None:
        np.copyto(recvbuf, sendbuf)

    def Allgather(self, sendbuf: Any, recvbuf: Any) -> None:
        np.copyto(recvbuf.reshape(np.shape(sendbuf)), sendbuf)

    def Bcast(self, buf: Any, root: int = 0) -> None:
        return None

    def Barrier(self) -> None:
        return None

    def Abort(self, errorcode: int = 1) -> None:
        os._exit(errorcode)


class _State:
    def __init__(self) -> None:
        self.comm: Any = None
        self.backend = ""  # "mpi" or "local"
        self.sum_op: Any = None
        self.lock = threading.Lock()


_state = _State()


def launched_by_mpi(environ: Any = None) -> str | None:
    """The launcher variable found in ``environ`` (default ``os.environ``), or None."""
    env = os.environ if environ is None else environ
    for name in LAUNCHER_VARIABLES:
        if name in env:
            return name
    return None


def _import_mpi(what: str) -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(
            f"functrace.distributed.initialize: {what}, which needs the package mpi4py, "
            f"and it is not installed ({e}). Install it with {INSTALL_HINT} (and an MPI "
            "implementation: on Debian/Ubuntu, apt-get install openmpi-bin libopenmpi-dev)."
        ) from None
    return MPI


def _install_abort_hook(comm: Any) -> None:
    # An uncaught exception on one process would otherwise leave it waiting in
    # MPI_Finalize while the others wait for it in a collective: the job would hang.
    # After Python's own report, abort the whole job (what `python -m mpi4py` does).
    previous = sys.excepthook

    def hook(exc_type: Any, exc: Any, tb: Any) -> None:
        previous(exc_type, exc, tb)
        try:
            sys.stderr.write(
                f"functrace.distributed: process {comm.Get_rank()} of {comm.Get_size()} "
                f"raised {exc_type.__name__}; aborting the MPI job.\n"
            )
            sys.stderr.flush()
        finally:
            comm.Abort(1)

    sys.excepthook = hook


def initialize() -> None:
    """Join the process group (idempotent; the other functions call it when needed).

    Under an MPI launcher (``mpirun -n N python ...``: one of the variables in
    ``LAUNCHER_VARIABLES`` is set) this initialises MPI through ``mpi4py`` and the
    world is MPI's ``COMM_WORLD``; without ``mpi4py`` that is an ``ImportError``
    naming the package and ``pip install 'functrace[mpi]'``. It also makes an
    uncaught exception in any process abort the whole job (``MPI_Abort``) after
    Python prints its traceback, instead of leaving the others waiting forever.

    Started without a launcher (plain ``python ...``), the world is this process
    alone: ``process_count() == 1``, collectives return copies of their input, and
    ``mpi4py`` is not imported, so the same script runs unchanged on one process.
    """
    if _state.comm is not None:
        return
    with _state.lock:
        if _state.comm is not None:
            return
        var = launched_by_mpi()
        if var is None:
            _state.backend, _state.comm = "local", LocalComm()
            return
        MPI = _import_mpi(f"the process was started by an MPI launcher ({var} is set)")
        if not MPI.Is_initialized():
            MPI.Init()
        comm = MPI.COMM_WORLD
        if comm.Get_size() > 1:
            _install_abort_hook(comm)
        _state.backend, _state.sum_op, _state.comm = "mpi", MPI.SUM, comm


def is_initialized() -> bool:
    """Whether :func:`initialize` has run (explicitly or by a first collective)."""
    return _state.comm is not None


def comm() -> Any:
    """The world's communicator (initialising first if needed)."""
    initialize()
    return _state.comm


def sum_op() -> Any:
    initialize()
    return _state.sum_op


def backend() -> str:
    """``"mpi"`` or ``"local"`` (a world of this process alone)."""
    initialize()
    return _state.backend


def process_index() -> int:
    """This process's index in the world, ``0 <= process_index() < process_count()``
    (MPI's rank; JAX's ``jax.process_index()``)."""
    return int(comm().Get_rank())


def process_count() -> int:
    """The number of processes in the world (MPI's size; 1 without a launcher)."""
    return int(comm().Get_size())


def barrier() -> None:
    """Wait until every process has reached this call."""
    comm().Barrier()


def _set_comm(new: Any, backend_name: str = "local", op: Any = None) -> Any:
    """Replace the communicator (tests: a counting or simulated world); returns the old
    one as ``(comm, backend, op)``."""
    old = (_state.comm, _state.backend, _state.sum_op)
    _state.comm, _state.backend, _state.sum_op = new, backend_name, op
    return old
