"""What every ``jit`` of one function with the same options shares.

As JAX's caches are keyed on the function, ``jit(f)`` made again (a loop calling
``jit(f)(x)``) reuses the signatures any other ``jit(f)`` with the same options traced
and lowered, and counts in the same counters. The registry holds functions weakly: a
function's traces go with it. Only Python functions (``def`` and ``lambda``) share:
any other callable (a ``custom_jvp`` function whose rules may be redefined, a
``functools.partial``, an object with ``__call__``, a NumPy ufunc) gets fresh state
per ``jit``. As in JAX, what a shared function reads when traced (globals,
closed-over values) is not read again on a hit: make a new function to see a change.

The options include :func:`lowering_settings`, every process-wide switch the lowering
reads, so a ``jit`` made after one changes lowers anew.
"""

from __future__ import annotations

import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from functrace import _buffers, _debug
from functrace.ir import ClosedJaxpr
from functrace.jit import direct_engine, loops, parallel


def lowering_settings() -> tuple[Any, ...]:
    """The switches lowering reads: the kernel compiler (``FUNCTRACE_JIT_KERNELS``),
    native loops, the buffer pool and whether drivers get parallel call sites."""
    return (direct_engine.enabled(), loops.enabled, _buffers.enabled, parallel.enabled())


class Entry:
    """One traced signature: its jaxpr and its lowered program (or the tiered job that
    will install the compiled driver)."""

    __slots__ = ("jaxpr", "out_tree", "program", "driver", "key", "sourced", "job")

    def __init__(
        self, jaxpr: ClosedJaxpr, program: Any, driver: Any = None, out_tree: Any = None
    ) -> None:
        self.jaxpr = jaxpr
        self.out_tree = out_tree  # the output's tree structure (``jit(f).trace``)
        self.program = program  # None while a tiered compile runs (``job``)
        self.driver = program.driver if program is not None else driver
        self.key: Any = None  # its signature in the function's cache
        # traced with a debug check on: its equations carry their sources
        self.sourced = _debug.flags.check
        self.job: Any = None  # tiered.Job until the compiled driver is installed


class Shared:
    """The traced signatures and counters of every ``jit`` of one function with the same
    options. Holds no reference to the function, so the registry below can drop it
    when the function goes."""

    __slots__ = (
        "fast",
        "tree_fast",
        "cache",
        "lock",
        "history",
        "traced_history",
        "traced",
        "trace_count",
        "compile_count",
        "interpreted_calls",
        "switches",
        "hits",
        "misses",
    )

    def __init__(self) -> None:
        # ``cache`` (signature -> entry) is LRU-bounded at ``cache_size`` entries. The
        # fast paths map their keys to (driver, entry): a fast-path hit refreshes the
        # entry's recency only once the cache is half full (the hot path pays nothing far
        # from the bound), and evicting an entry drops the fast keys that lead to it.
        self.fast: OrderedDict[tuple[Any, ...], tuple[Callable[..., Any], Entry]] = OrderedDict()
        self.tree_fast: OrderedDict[Any, tuple[Callable[..., Any], Entry]] = OrderedDict()
        self.cache: OrderedDict[Any, Entry] = OrderedDict()
        # Held while a signature is traced and lowered (threads calling with the same new
        # signature at once trace it once; the others wait and reuse the entry), and while
        # the LRU bookkeeping evicts or adds entries.
        self.lock = threading.RLock()
        # every signature traced (bounded), for config.explain_retraces
        self.history: OrderedDict[Any, None] = OrderedDict()
        self.traced_history: OrderedDict[Any, None] = OrderedDict()  # under transforms
        # signature -> (jaxpr, output tree) for calls under other transforms
        self.traced: OrderedDict[Any, tuple[ClosedJaxpr, Any]] = OrderedDict()
        self.trace_count = 0
        self.compile_count = 0
        self.interpreted_calls = 0
        self.switches = 0
        self.hits = 0  # calls that reused a compiled signature (cache_info)
        self.misses = 0  # signatures traced and compiled for a call or lower()


# function -> {options: Shared}
_registry: weakref.WeakKeyDictionary[Any, dict[Any, Shared]] = weakref.WeakKeyDictionary()
_registry_lock = threading.Lock()


def shared_state(fun: Callable[..., Any], options: Any) -> Shared:
    """The state of ``fun``'s jits made with ``options``; fresh for anything but a
    Python function."""
    if not isinstance(fun, types.FunctionType):
        # a callable object (a custom_jvp function, a partial, a module) may change what
        # tracing reads (its rules, its attributes) while it lives
        return Shared()
    with _registry_lock:
        per_fun = _registry.setdefault(fun, {})
        st = per_fun.get(options)
        if st is None:
            st = per_fun[options] = Shared()
        return st


def counter(name: str, doc: str) -> property:
    """A property reading and writing the counter ``name`` of its object's ``_st``."""

    def get(self: Any) -> int:
        return getattr(self._st, name)  # type: ignore[no-any-return]

    def put(self: Any, value: int) -> None:
        setattr(self._st, name, value)

    return property(get, put, doc=f"{doc} (shared by every jit of the function).")
