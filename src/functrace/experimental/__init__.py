"""``functrace.experimental``: the names of ``jax.experimental`` that JAX programs use.

``io_callback`` (``from jax.experimental import io_callback``) is
:func:`functrace.api.io_callback`: a callback with side effects that is never removed
as dead code and runs under ``jit``.

``ode.odeint`` (``from jax.experimental.ode import odeint``) integrates an ODE with
JAX's adaptive Dormand-Prince solver, differentiable by the adjoint method
(:mod:`functrace.experimental.ode`).

``checkify`` (``from jax.experimental import checkify``) gives functional runtime
errors: ``checkify.check`` inside ``checkify.checkify(f)``, which works under ``jit``
(:mod:`functrace.experimental.checkify`).

``shard_map.shard_map`` is JAX's older spelling of :func:`functrace.shard_map`, and
``mesh_utils`` makes the device arrays of (virtual) meshes, and ``jet.jet`` computes
Taylor-mode derivatives.

``multihost_utils`` has JAX's helpers for several processes, with the values JAX
gives for one process (functrace's case).

``compilation_cache.compilation_cache.set_cache_dir`` is accepted: functrace keeps
its compiled kernels on disk always (:mod:`functrace.experimental.compilation_cache`).

``sparse`` has JAX's BCOO sparse arrays and the ``sparsify`` transform
(:mod:`functrace.experimental.sparse`).
"""

from __future__ import annotations

from functrace.api._callback import io_callback
from functrace.experimental import (
    checkify,
    compilation_cache,
    jet,
    mesh_utils,
    multihost_utils,
    ode,
    shard_map,
    sparse,
)

__all__ = [
    "checkify",
    "compilation_cache",
    "io_callback",
    "jet",
    "mesh_utils",
    "multihost_utils",
    "ode",
    "shard_map",
    "sparse",
]
