"""functrace.jit: lower jaxprs to a generated Python driver plus Numba-compiled fused kernels.

>>> import functrace as ft
>>> f = ft.jit(lambda x, y: x * y + x ** 2)
>>> float(f(2.0, 3.0))
10.0

Modules: ``emitters`` (the per-primitive rule table), ``driver_rules`` (rules for
non-elementwise primitives), ``lowering`` (fusion and code generation),
``kernels`` (Numba kernel source and compilation), ``cache`` (the on-disk
kernel cache), ``api`` (``jit``, ``disable_jit``). Numba itself is imported
only when the first kernel is compiled.
"""

from __future__ import annotations

import os

# functrace's compiled code is single-threaded (no parallel=True); keep Numba's
# thread pool at one thread unless the user chose otherwise. Must precede the
# first `import numba` to take effect.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from functrace.jit.api import (  # noqa: E402
    JitFunction,
    Lowered,
    clear_cache,
    disable_jit,
    jit,
)

__all__ = ["JitFunction", "Lowered", "clear_cache", "disable_jit", "jit"]
