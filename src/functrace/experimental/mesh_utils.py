"""``functrace.experimental.mesh_utils``: device arrays for meshes (JAX's
``jax.experimental.mesh_utils``). functrace's meshes are virtual (see
:mod:`functrace.sharding`): every position holds this process's CPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace._array import CPU, CpuDevice

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _devices(fname: str, shape: tuple[int, ...], devices: Any) -> np.ndarray:
    if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in shape):
        raise ValueError(f"{fname}: expected positive int mesh sizes, got {shape}.")
    if devices is not None and not all(isinstance(d, CpuDevice) for d in devices):
        raise TypeError(f"{fname}: expected devices from functrace.devices().")
    arr = np.empty(shape, dtype=object)
    arr.fill(CPU)
    return arr


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """An array of devices of shape ``mesh_shape`` for ``sharding.Mesh`` (any shape:
    every position is the CPU, a virtual device).

    >>> create_device_mesh((2, 2)).shape
    (2, 2)
    """
    return _devices("create_device_mesh", tuple(mesh_shape), devices)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """The devices of a mesh spanning processes: shape ``mesh_shape * dcn_mesh_shape``
    elementwise, as JAX's (all positions the CPU of this process)."""
    if len(mesh_shape) != len(dcn_mesh_shape):
        raise ValueError(
            f"create_hybrid_device_mesh: expected mesh_shape and dcn_mesh_shape of one "
            f"length, got {tuple(mesh_shape)} and {tuple(dcn_mesh_shape)}."
        )
    shape = tuple(int(a) * int(b) for a, b in zip(mesh_shape, dcn_mesh_shape))
    return _devices("create_hybrid_device_mesh", shape, devices)
