"""``functrace.experimental.mesh_utils``: device arrays for meshes (JAX's
``jax.experimental.mesh_utils``). functrace's meshes are virtual (see
:mod:`functrace.sharding`): every position computes on this process's CPU, and holds the
devices of ``functrace.devices()`` in order when there are enough of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace.sharding import device_array

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """An array of devices of shape ``mesh_shape`` for ``sharding.Mesh`` (any shape, see
    :func:`functrace.sharding.device_array`).

    >>> create_device_mesh((2, 2)).shape
    (2, 2)
    """
    return device_array("create_device_mesh", tuple(mesh_shape), devices)


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
    elementwise, as JAX's."""
    if len(mesh_shape) != len(dcn_mesh_shape):
        raise ValueError(
            f"create_hybrid_device_mesh: expected mesh_shape and dcn_mesh_shape of one "
            f"length, got {tuple(mesh_shape)} and {tuple(dcn_mesh_shape)}."
        )
    shape = tuple(int(a) * int(b) for a, b in zip(mesh_shape, dcn_mesh_shape))
    return device_array("create_hybrid_device_mesh", shape, devices)
