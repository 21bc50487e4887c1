"""``functrace.experimental.multihost_utils``: JAX's helpers for programs that run as
several processes, with the values JAX gives when there is one process.

functrace runs in one process (``process_count() == 1``; ``functrace.distributed``
is its own MPI data parallelism), so these calls involve no communication:
``process_allgather`` stacks (or, ``tiled``, keeps) the one process's values,
``broadcast_one_to_all`` returns them, ``sync_global_devices`` returns at once, and the
host-local/global conversions return the arrays unchanged (with one process the local
data is the whole array). Shardings and specs are checked against the mesh, as JAX
checks them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace._array import to_array
from functrace.sharding import Mesh, _broadcast_specs, _names_of
from functrace.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = [
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "sync_global_devices",
]


def _host_value(fname: str, x: Any) -> np.ndarray:
    if isinstance(x, core.Tracer):
        raise TypeError(
            f"{fname}: expected concrete arrays (it gathers values to the host, outside "
            f"jit and other transforms, as in JAX), got {x.describe()}."
        )
    return np.asarray(x)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """The values of ``in_tree`` from every process, as NumPy arrays
    (``multihost_utils.process_allgather``): with functrace's one process, each leaf
    with a new leading axis of length 1 (``tiled=False``: stacked), or unchanged
    (``tiled=True``: concatenated; a scalar stays 0-d, as in JAX)."""
    if not isinstance(tiled, bool):
        raise TypeError(f"process_allgather: expected tiled to be a bool, got {tiled!r:.40}.")

    def gather(x: Any) -> np.ndarray:
        v = _host_value("process_allgather", x)
        return v if tiled else v[None]

    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's ``in_tree`` on every process, as NumPy arrays
    (``multihost_utils.broadcast_one_to_all``): with one process, its own values."""
    if is_source is not None and not isinstance(is_source, (bool, np.bool_)):
        raise TypeError(
            f"broadcast_one_to_all: expected is_source to be None or a bool, got {is_source!r:.40}."
        )
    return tree_map(lambda x: _host_value("broadcast_one_to_all", x), in_tree)


def sync_global_devices(name: str) -> None:
    """A barrier across processes (``multihost_utils.sync_global_devices``): with one
    process it returns at once."""
    if not isinstance(name, str):
        raise TypeError(f"sync_global_devices: expected a name string, got {type(name).__name__}.")


def _convert(fname: str, tree: Any, mesh: Any, pspecs: Any) -> Any:
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{fname}: expected a Mesh, got {type(mesh).__name__}.")
    leaves, treedef = tree_flatten(tree)
    for spec, x in zip(_broadcast_specs(fname, "pspecs", pspecs, tree), leaves):
        shape = core.get_aval(x).shape
        used = [n for e in spec for n in _names_of(e)]
        if any(n not in mesh.axis_names for n in used) or len(set(used)) != len(used):
            raise ValueError(
                f"{fname}: expected each of the mesh axes {mesh.axis_names} at most once, "
                f"got {spec!r}."
            )
        if len(spec) > len(shape):
            raise ValueError(
                f"{fname}: expected a spec of at most {len(shape)} entries for an array "
                f"of shape {shape}, got {spec!r}."
            )
        for d, e in enumerate(spec):
            k = int(np.prod([mesh.shape[n] for n in _names_of(e)]))
            if shape[d] % k:
                raise ValueError(
                    f"{fname}: expected dimension {d} of {shape} to divide into the "
                    f"{k} shards {spec!r} makes, got {shape[d]}."
                )
    out = [x if isinstance(x, core.Tracer) else to_array(np.asarray(x)) for x in leaves]
    return tree_unflatten(treedef, out)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """The global arrays made of every process's ``local_inputs`` laid out by
    ``pspecs`` on ``global_mesh``
    (``multihost_utils.host_local_array_to_global_array``): with one process the local
    data is the whole array, so the values are returned unchanged (as Arrays; tracers
    as they are). ``pspecs`` (a ``PartitionSpec`` or a pytree prefix of the inputs) is
    checked against the mesh and the shapes."""
    return _convert("host_local_array_to_global_array", local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """This process's part of each global array (``multihost_utils.
    global_array_to_host_local_array``): with one process the whole array, so the
    values are returned unchanged, ``pspecs`` checked as in
    :func:`host_local_array_to_global_array`."""
    return _convert("global_array_to_host_local_array", global_inputs, global_mesh, pspecs)
