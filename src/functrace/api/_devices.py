"""JAX's device-placement calls, for programs that make them: functrace computes on the
CPU of this process, eagerly or in compiled code, so placement is the identity and
there is nothing to wait for. The devices listed are that CPU, or as many virtual CPU
devices as ``config.num_cpu_devices`` says (JAX's ``jax_num_cpu_devices``, or XLA's
``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``): programs written for
several devices build their meshes from them, and every one computes on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import _config_options, core
from functrace._array import Array, CpuDevice, _wrap, cpu_devices
from functrace.distributed import _world
from functrace.tree_util import tree_map


def _check_device(fname: str, device: Any) -> None:
    from functrace.sharding import NamedSharding, SingleDeviceSharding

    if device is not None and not isinstance(
        device, (str, CpuDevice, NamedSharding, SingleDeviceSharding)
    ):
        raise TypeError(
            f"{fname}: expected device=None, a device from functrace.devices(), 'cpu' or a "
            f"sharding (NamedSharding, SingleDeviceSharding), got {type(device).__name__}."
        )


def _check_backend(fname: str, backend: Any) -> None:
    if backend not in (None, "cpu"):
        raise ValueError(f"{fname}: expected backend None or 'cpu', got {backend!r}.")


def devices(backend: str | None = None) -> list[CpuDevice]:
    """``[CpuDevice(id=0)]``: functrace runs on this process's CPU (its threads, see
    ``jit``); with ``config.num_cpu_devices`` (or ``XLA_FLAGS``) N, N virtual devices,
    all computing on it."""
    _check_backend("devices", backend)
    return cpu_devices(_config_options.num_cpu_devices())


def local_devices(
    process_index: int | None = None, backend: str | None = None, host_id: int | None = None
) -> list[CpuDevice]:
    """``[cpu]``, the devices of this process (JAX's ``local_devices``).

    >>> local_devices()
    [CpuDevice(id=0)]
    """
    _check_backend("local_devices", backend)
    index = process_index if process_index is not None else host_id
    if index not in (None, 0):
        raise ValueError(
            f"local_devices: expected process_index 0 (functrace's devices belong to this "
            f"process), got {index!r}."
        )
    return cpu_devices(_config_options.num_cpu_devices())


def default_backend() -> str:
    """``"cpu"``: the platform functrace computes on.

    >>> default_backend()
    'cpu'
    """
    return "cpu"


def device_count(backend: str | None = None) -> int:
    """1: functrace computes on one device, this process's CPU (its threads are not
    devices); N with ``config.num_cpu_devices`` N (see :func:`devices`).

    >>> device_count()
    1
    """
    _check_backend("device_count", backend)
    return _config_options.num_cpu_devices()


def local_device_count(backend: str | None = None) -> int:
    """1: the devices of this process (see :func:`device_count`).

    >>> local_device_count()
    1
    """
    _check_backend("local_device_count", backend)
    return _config_options.num_cpu_devices()


def process_index(backend: str | None = None) -> int:
    """The index of this process among the program's processes: its MPI rank under an
    MPI launcher (``functrace.distributed.process_index()``, which initialises the world
    on first use), else 0.

    >>> process_index()
    0
    """
    _check_backend("process_index", backend)
    return _world.process_index()


def process_count(backend: str | None = None) -> int:
    """The number of the program's processes: the MPI world's size under an MPI launcher
    (``functrace.distributed.process_count()``), else 1.

    >>> process_count()
    1
    """
    _check_backend("process_count", backend)
    return _world.process_count()


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of the program's processes: ``list(range(process_count()))``.

    >>> process_indices()
    [0]
    """
    _check_backend("process_indices", backend)
    return list(range(_world.process_count()))


def host_count(backend: str | None = None) -> int:
    """JAX's older name of :func:`process_count`."""
    return process_count(backend)


def host_id(backend: str | None = None) -> int:
    """JAX's older name of :func:`process_index`."""
    return process_index(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """JAX's older name of :func:`process_indices`."""
    return process_indices(backend)


def effects_barrier() -> None:
    """Wait until every side effect of earlier calls has run: they all have, since
    functrace runs callbacks and prints when their call runs (JAX's
    ``effects_barrier``)."""


def copy_to_host_async(x: Any) -> Any:
    """``x`` unchanged: its arrays already live in host memory (JAX's
    ``copy_to_host_async`` starts the copies of device arrays)."""
    return x


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` (a pytree) with its array leaves as functrace Arrays (JAX's ``device_put``;
    there is one device). Tracers pass through."""
    _check_device("device_put", device)

    def put(v: Any) -> Any:
        if isinstance(v, Array):  # an Array or a tracer
            return v
        return _wrap(np.asarray(v)) if core.is_array_like(v) else v

    return tree_map(put, x)


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with its arrays as NumPy arrays (JAX's ``device_get``)."""
    return tree_map(lambda v: np.asarray(v) if type(v) is Array else v, x)


def block_until_ready(x: Any) -> Any:
    """``x`` itself: results are complete when functrace returns them."""
    return x
