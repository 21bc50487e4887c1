"""Importing Numba, lazily and without its eager SciPy-BLAS probe.

The lowest module of the jit backend: the disk cache (``cache``) stamps kernels with
Numba's version, and ``kernels`` compiles them; both import Numba through here, when
the first kernel is made (``import functrace`` never imports Numba).
"""

from __future__ import annotations

import sys
import threading


def import_numba():  # type: ignore[no-untyped-def]
    """``import numba``, without its eager import of SciPy's BLAS bindings.

    When installed, SciPy makes ``import numba`` ~0.3 s slower: ``numba.np.arraymath``
    imports ``scipy.linalg`` at import time only to choose how ``np.convolve`` and
    ``np.correlate`` compute inner products. functrace's kernels never use BLAS
    inside Numba (products run through NumPy in the driver), so if this is the
    process's first ``import numba``, the binding is hidden while Numba is imported:
    those two functions then use a plain loop, and ``np.dot``/``np.linalg`` in
    Numba code still import SciPy lazily when first compiled.
    """
    if "numba" in sys.modules:
        import numba

        return numba
    with _import_lock:  # one thread hides and restores the binding
        key = "scipy.linalg.cython_blas"
        hide = key not in sys.modules and "numba" not in sys.modules
        if hide:
            sys.modules[key] = None  # type: ignore[assignment]  # makes the import fail fast
        try:
            import numba
            import numba.np.arraymath  # noqa: F401  (the module that probes SciPy's BLAS)
        finally:
            if hide and key in sys.modules and sys.modules[key] is None:
                del sys.modules[key]
        return numba


_import_lock = threading.Lock()


__all__ = ["import_numba"]
