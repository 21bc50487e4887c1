"""Array buffers a compiled program reuses across its calls (its outputs included).

A driver allocates its kernels' outputs and large ``np.dot`` results anew on every
call. glibc serves such arrays with fresh pages (``mmap``, or heap memory it trimmed
back to the OS), so every call page-faults on all of them: ~2500 faults, ~45% of the
time of the 784-512-512-10 MLP step. Instead of changing glibc's thresholds for the
whole process (``kernels.tune_malloc``, opt-in), each lowered program has a
:class:`BufferPool`, scoped to its own arrays:

* each allocation site of the driver gets an allocator for its ``(shape, dtype)``;
  the sites of one ``(shape, dtype)`` share the buffers;
* a buffer is handed out again only when nobody else holds it: its reference count
  is the pool's own (CPython counts exactly, and every view of an array keeps its
  base alive, so a returned output, any view, slice or ``functrace.Array`` of it,
  or an argument still in use by a call blocks its reuse). A training loop that
  rebinds its parameters to each step's results gets the step before last's
  buffers back;
* bounded: at most two buffers per allocation site are kept (twice one call's
  pooled arrays), the oldest dropped first when all are in use (the user keeps it;
  it is then freed like any array);
* thread-safe: a call takes a buffer under the pool's lock, and holds it from then
  on, so two calls (threads, re-entrant ``grad_hook``\\ s) never share one.

Recorded eager programs (``api._eager_cache.Program``: the eager ``grad``/``vjp``/
``vmap`` calls that reuse a recording) have a pool too, for the results of their
products and NumPy-ufunc elementwise steps: the same page faults made an eager MLP step
of 784-512-512-10 spend ~45% of its time in the kernel (9.1 -> 4.9 ms for its
``value_and_grad``, 2067 -> 0 faults per call). Eager elementwise operations on large
float arrays share one process-wide pool (:data:`eager_pool`, bounded; see
:func:`ufunc_pooled`), for the same reason: an Adam update written in eager
``functrace.numpy`` page-faulted ~2300 times per step of that model.

Only arrays of at least :data:`MIN_BYTES` are pooled (smaller ones come from
glibc's heap without faults, and ``np.empty`` is cheaper than the lookup).
``FUNCTRACE_BUFFER_POOL=0`` (or ``_buffers.enabled = False`` before tracing) turns
pools off; they are off where reference counts are not exact (:data:`EXACT_REFCOUNTS`).
Contents of a reused buffer are stale: every site writes its whole buffer (a kernel
output, an ``np.dot(..., out=)``) before anything reads it.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

EXACT_REFCOUNTS = (
    platform.python_implementation() == "CPython"
    and getattr(sys, "_is_gil_enabled", lambda: True)()
)
"""Whether ``sys.getrefcount`` counts every holder exactly (CPython with its GIL; not
PyPy, not a free-threaded build): pools are used only then."""

enabled = os.environ.get("FUNCTRACE_BUFFER_POOL", "1").strip().lower() not in (
    "0",
    "false",
    "no",
    "off",
)
"""Whether new drivers reuse their arrays across calls (``FUNCTRACE_BUFFER_POOL=0``
turns it off; read when a function is lowered)."""

MIN_BYTES = 64 << 10
"""Smallest array a pool keeps (64 KiB)."""

_refcount = getattr(sys, "getrefcount", len)  # (unused unless EXACT_REFCOUNTS)


def _probe(bufs: list[np.ndarray]) -> int:
    for a in bufs:  # the same references as in _Kind.take: the list, `a`, the argument
        return _refcount(a)
    return 0


_FREE = _probe([np.empty(1)])
"""The reference count ``_Kind.take`` sees for a buffer only the pool holds."""


class _Kind:
    """The buffers of one ``(shape, dtype)``."""

    __slots__ = ("bufs", "capacity", "dtype", "lock", "shape")

    def __init__(
        self, shape: tuple[int, ...], dtype: np.dtype, lock: threading.RLock, capacity: int = 0
    ) -> None:
        self.shape, self.dtype, self.lock = shape, dtype, lock
        self.bufs: list[np.ndarray] = []
        self.capacity = capacity

    def __len__(self) -> int:
        return len(self.bufs)

    def take(self) -> np.ndarray:
        """A C-contiguous writable array of the kind's shape and dtype, held by nobody
        else: a free buffer of the pool, else a new one (kept unless the pool is full,
        in which case the oldest buffer, in use elsewhere, is dropped from it)."""
        bufs = self.bufs
        with self.lock:
            for a in bufs:
                if _refcount(a) == _FREE:
                    return a
            a = np.empty(self.shape, self.dtype)
            if len(bufs) >= self.capacity:
                del bufs[0]
            bufs.append(a)
            return a


class BufferPool:
    """The reusable arrays of one lowered program (see the module docstring)."""

    def __init__(self) -> None:
        # Re-entrant: a finalizer run by the garbage collector inside np.empty may call
        # the same jitted function on this thread.
        self._lock = threading.RLock()
        self._kinds: dict[tuple[tuple[int, ...], str], _Kind] = {}

    def allocator(self, shape: tuple[int, ...], dtype: np.dtype) -> Callable[[], np.ndarray]:
        """The allocator of one more driver site making ``(shape, dtype)`` arrays (it
        raises the pool's capacity for them by two buffers)."""
        dt = np.dtype(dtype)
        key = (tuple(shape), dt.str)
        kind = self._kinds.get(key)
        if kind is None:
            kind = self._kinds[key] = _Kind(tuple(shape), dt, self._lock)
        kind.capacity += 2
        return kind.take

    def nbytes(self) -> int:
        """Bytes of the arrays the pool keeps (free or in use)."""
        with self._lock:
            return sum(a.nbytes for k in self._kinds.values() for a in k.bufs)

    def capacity_bytes(self) -> int:
        """The most bytes the pool ever keeps."""
        return sum(
            k.capacity * int(np.prod(k.shape, dtype=np.int64)) * k.dtype.itemsize
            for k in self._kinds.values()
        )

    def __len__(self) -> int:
        return len(self._kinds)


# ---------------------------------------------------------------------------
# Eager operations: one pool shared by the process
# ---------------------------------------------------------------------------

EAGER_MAX_BYTES = 64 << 20
"""Most bytes the eager pool keeps (least recently used shapes dropped first)."""
EAGER_PER_SHAPE = 8
"""Most buffers the eager pool keeps per ``(shape, dtype)``."""
EAGER_MIN_BYTES = 1 << 20
"""Smallest result an eager operation writes into the pool (1 MiB). Below it glibc
serves arrays from its heap without page faults, and the pool's lookup (a lock, a scan)
costs more than it saves: the 784-64-10 eager step (200 KB weights) ran 7% slower with
every 64 KiB result pooled."""


class _EagerPool:
    """Buffers for the results of eager elementwise operations on large float arrays
    (``Array`` operators, NumPy ufuncs called on ``Array`` objects, the elementwise
    primitives' impls): the same reuse rule as a program's pool (a buffer is written
    again only once nobody holds it), shared by every eager call, bounded by
    :data:`EAGER_PER_SHAPE` buffers per shape and :data:`EAGER_MAX_BYTES` in all."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # (shared with its kinds: taken inside take)
        self.kinds: OrderedDict[tuple[tuple[int, ...], str], _Kind] = OrderedDict()
        self.bytes = 0

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        key = (shape, dtype.str)
        with self.lock:
            kind = self.kinds.get(key)
            if kind is None:
                kind = self.kinds[key] = _Kind(shape, dtype, self.lock, EAGER_PER_SHAPE)
            else:
                self.kinds.move_to_end(key)
            held = len(kind)
            a = kind.take()  # a free buffer, else a new one (the oldest dropped when full)
            self.bytes += (len(kind) - held) * a.nbytes
            while self.bytes > EAGER_MAX_BYTES and len(self.kinds) > 1:
                _, old = self.kinds.popitem(last=False)
                self.bytes -= sum(b.nbytes for b in old.bufs)
            return a

    def clear(self) -> None:
        """Drop every buffer (those in use stay with their holders)."""
        with self.lock:
            self.kinds.clear()
            self.bytes = 0


eager_pool = _EagerPool()


def _after_fork_in_child() -> None:
    # a child starts with an empty pool and a fresh lock (another thread may hold it)
    global eager_pool
    eager_pool = _EagerPool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

# Ufuncs whose result has the dtype of their floating-point operands (all of one dtype,
# Python scalars aside: NumPy computes those in the array's dtype).
_SAME_DTYPE = frozenset(
    [
        np.add,
        np.subtract,
        np.multiply,
        np.true_divide,
        np.power,
        np.maximum,
        np.minimum,
        np.fmax,
        np.fmin,
        np.negative,
        np.positive,
        np.absolute,
        np.sqrt,
        np.square,
        np.reciprocal,
        np.exp,
        np.expm1,
        np.log,
        np.log1p,
        np.tanh,
        np.sin,
        np.cos,
        np.tan,
        np.floor,
        np.ceil,
        np.rint,
        np.sign,
    ]  # fmt: skip
)


def ufunc_pooled(ufunc: Any, *operands: Any) -> np.ndarray | None:
    """``ufunc(*operands)`` written into a buffer of the eager pool, or None (the caller
    computes it as usual) unless: pools are on, ``ufunc`` keeps its operands' dtype,
    the operands are plain NumPy arrays of one native floating-point dtype and Python
    ``float``/``int`` scalars, and an operand has :data:`EAGER_MIN_BYTES` or more. NumPy runs
    the same loop with or without ``out=`` then: the bits are the same."""
    for x in operands:  # the common case first, cheaply: no large array operand
        if type(x) is np.ndarray and x.nbytes >= EAGER_MIN_BYTES:
            break
    else:
        return None
    dt = None
    shapes = []
    for x in operands:
        t = type(x)
        if t is np.ndarray:
            if dt is None:
                dt = x.dtype
            elif x.dtype != dt:
                return None
            shapes.append(x.shape)
        elif t is not float and t is not int:
            return None
    if dt is None or dt.kind != "f" or not dt.isnative or ufunc not in _SAME_DTYPE:
        return None
    if not (enabled and EXACT_REFCOUNTS):
        return None
    shape = shapes[0]
    for other in shapes[1:]:
        if other != shape:
            try:
                shape = np.broadcast_shapes(shape, other)
            except ValueError:
                return None  # NumPy raises its own error
    if not shape:
        return None  # a 0-d result: NumPy returns a scalar, not an array
    return ufunc(*operands, out=eager_pool.take(shape, dt))  # (the module's, after a fork)


def ufunc_call(ufunc: Any, *operands: Any) -> Any:
    """``ufunc(*operands)``, written into the eager pool when :func:`ufunc_pooled`
    applies (the elementwise primitives' impls)."""
    r = ufunc_pooled(ufunc, *operands)
    return ufunc(*operands) if r is None else r


def poolable(shape: tuple[int, ...], dtype: np.dtype) -> bool:
    """Whether an array of ``shape`` and ``dtype`` is large enough to be pooled."""
    dt = np.dtype(dtype)
    return (
        enabled
        and EXACT_REFCOUNTS
        and len(shape) > 0
        and dt.kind in "biufc"
        and int(np.prod(shape, dtype=np.int64)) * dt.itemsize >= MIN_BYTES
    )


__all__ = [
    "EAGER_MAX_BYTES",
    "EAGER_MIN_BYTES",
    "EAGER_PER_SHAPE",
    "EXACT_REFCOUNTS",
    "MIN_BYTES",
    "BufferPool",
    "eager_pool",
    "enabled",
    "poolable",
    "ufunc_call",
    "ufunc_pooled",
]
