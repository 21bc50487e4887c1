"""JAX's device-placement calls, for programs that make them: functrace computes on the
CPU of this process, eagerly or in compiled code, so placement is the identity and
there is nothing to wait for."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace._array import Array, _wrap
from functrace.tree_util import tree_map


def _check_device(fname: str, device: Any) -> None:
    if device is not None and not isinstance(device, (str, CpuDevice)):
        raise TypeError(
            f"{fname}: expected device=None, a device from functrace.devices() or 'cpu', "
            f"got {type(device).__name__}."
        )


class CpuDevice:
    """The one device functrace computes on (the CPU of this process)."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0

    def __repr__(self) -> str:
        return "CpuDevice(id=0)"


_CPU = CpuDevice()


def devices(backend: str | None = None) -> list[CpuDevice]:
    """``[cpu]``: functrace runs on this process's CPU (its threads, see ``jit``)."""
    if backend not in (None, "cpu"):
        raise ValueError(f"devices: expected backend None or 'cpu', got {backend!r}.")
    return [_CPU]


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
