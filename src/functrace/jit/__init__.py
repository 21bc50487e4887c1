"""functrace.jit: lower jaxprs to a generated Python driver plus Numba-compiled fused kernels.

>>> import functrace as ft
>>> f = ft.jit(lambda x, y: x * y + x ** 2)
>>> float(f(2.0, 3.0))
10.0

Modules, each importing only the ones before it: ``numba_import`` (the lazy Numba
import), ``cache`` (the on-disk kernel cache), ``kernels`` (fused-kernel source and
compilation), ``codegen`` (helpers shared by the driver and native loops),
``parallel`` (functrace's thread pool: split kernels and products), ``loops`` (native loops:
one Numba function per ``scan``/``while``), ``loop_rules`` (their per-primitive
statements), ``random_rules`` (``threefry2x32``, ``erf_inv``), ``window_rules``
(compiled max/min pooling), ``driver_rules`` (the
rule table's entries for structural primitives, driver and native-loop forms),
``fusion`` (planning), ``lowering`` (driver generation), ``api`` (``jit``,
``disable_jit``), ``pmap`` (``jit`` of ``vmap``), ``fwd_bwd`` (``fwd_and_bwd``: ``jit``
of ``vjp``, split in two). The rule table itself is
``functrace.interpreters.numba_rules``.
Numba itself is imported only when the first kernel is compiled. ``num_threads()``
is the number of threads compiled code uses (the cores the process may use, or
``FUNCTRACE_NUM_THREADS``; see ``parallel``).
"""

from __future__ import annotations

from functrace import _leafmap
from functrace.jit import random_rules  # noqa: F401  (erf_inv's compiled impl path)
from functrace.jit.api import (
    JitFunction,
    Lowered,
    clear_cache,
    disable_jit,
    jit,
)
from functrace.jit.fwd_bwd import fwd_and_bwd
from functrace.jit.parallel import num_threads
from functrace.jit.pmap import pmap

_leafmap.set_compiler(jit)  # eager optimizer updates run fused (config.fused_updates)

__all__ = [
    "JitFunction",
    "Lowered",
    "clear_cache",
    "disable_jit",
    "fwd_and_bwd",
    "jit",
    "num_threads",
    "pmap",
]
