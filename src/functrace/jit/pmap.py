"""``pmap``: JAX's parallel map, for programs written for several devices.

functrace has one device, this process's CPU (``functrace.device_count() == 1``), and
its compiled code already spreads over the process's cores. So ``pmap(f)`` is
``jit(vmap(f))``: the examples along the mapped axis are the instances JAX would place
on devices, run as one compiled, batched program. A program written for N devices
(N from ``local_device_count()``, or a fixed N) gets the values JAX computes on N
devices: the collectives of ``functrace.lax`` (``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``axis_index``, ``ppermute``) reduce over the mapped axis
named ``axis_name`` as they do under ``vmap``. The mapped size is not limited by
the device count.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from functrace._array import CpuDevice
from functrace.api._devices import _check_backend
from functrace.api._vmap import _check_axis, mapped
from functrace.core import describe_fun
from functrace.jit.api import jit


def _index_tuple(fname: str, what: str, v: Any) -> tuple[int, ...]:
    items = (v,) if isinstance(v, int) else v
    try:
        out = tuple(items)
    except TypeError:
        out = (None,)  # type: ignore[assignment]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise TypeError(f"{fname}: expected {what} to be an int or a tuple of ints, got {v!r}.")
    return out


def _check_axes_leaves(name: str, axes: Any) -> None:
    """JAX's rule: ``in_axes``/``out_axes`` are ints or None at their leaves."""
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes_leaves(name, a)
    elif isinstance(axes, dict):
        for a in axes.values():
            _check_axes_leaves(name, a)
    elif axes is not None and (isinstance(axes, bool) or not isinstance(axes, int)):
        raise TypeError(
            f"pmap: expected {name} to be an int, None or a (nested) tuple, list or dict "
            f"of them, got {type(axes).__name__} {axes!r}."
        )


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Any = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
    global_arg_shapes: Any = None,
) -> Callable[..., Any]:
    """``fun`` mapped over an axis of its arguments and compiled: ``jit(vmap(fun))``
    with JAX's ``pmap`` signature (see the module docstring: functrace has one
    device, so the instances run as one batched program on the process's cores).

    ``in_axes`` (a prefix of the positional arguments, entries of static arguments
    ignored; keyword arguments are mapped over axis 0), ``out_axes``, ``axis_name``
    and ``axis_size`` are ``vmap``'s. An output with ``out_axes=None`` is the first
    instance's value, as JAX returns the first device's (``vmap`` instead requires it
    not to depend on the mapped inputs). ``static_broadcasted_argnums`` are ``jit``'s
    ``static_argnums`` (hashable, given to every instance), ``donate_argnums`` are
    ``jit``'s. ``devices`` (devices of ``functrace.devices()``) and ``backend``
    (``"cpu"``) are checked and otherwise have no effect; ``global_arg_shapes`` must be
    None (JAX has removed it).

    >>> import functrace as ft, numpy as np
    >>> ft.pmap(lambda x: x / ft.lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0]))
    Array([0.25, 0.75])
    """
    if not callable(fun):
        raise TypeError(f"pmap: expected a callable function, got {type(fun).__name__}.")
    _check_axis("pmap", axis_name, axis_size)
    _check_axes_leaves("in_axes", in_axes)
    _check_axes_leaves("out_axes", out_axes)
    _check_backend("pmap", backend)
    if devices is not None and (
        isinstance(devices, (str, bytes)) or not all(isinstance(d, CpuDevice) for d in devices)
    ):
        raise TypeError(
            f"pmap: expected devices=None or a sequence of devices from functrace.devices(), "
            f"got {devices!r}."
        )
    if global_arg_shapes is not None:
        raise ValueError(
            f"pmap: expected global_arg_shapes=None (JAX has removed the argument), got "
            f"{global_arg_shapes!r}."
        )
    static = _index_tuple("pmap", "static_broadcasted_argnums", static_broadcasted_argnums)
    donate = _index_tuple("pmap", "donate_argnums", donate_argnums)
    if set(static) & set(donate):
        raise ValueError(
            f"pmap: expected static_broadcasted_argnums and donate_argnums to be "
            f"disjoint, got {static} and {donate}."
        )

    @functools.wraps(fun)
    def per_call(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        stat = {i % n for i in static}
        dyn_pos = [i for i in range(n) if i not in stat]
        axes = in_axes
        if isinstance(in_axes, tuple):  # one entry per positional argument, as in JAX
            if len(in_axes) != n:
                raise ValueError(
                    f"pmap: expected in_axes with one entry per positional argument of "
                    f"{describe_fun(fun)} ({n}), got {len(in_axes)}: {in_axes!r}."
                )
            axes = tuple(in_axes[i] for i in dyn_pos)

        def with_static(*dyn: Any, **kw: Any) -> Any:
            full = list(args)
            for i, v in zip(dyn_pos, dyn):
                full[i] = v
            return fun(*full, **kw)

        functools.update_wrapper(with_static, fun)
        f = mapped(with_static, axes, out_axes, axis_size, axis_name, fname="pmap")
        return f(*(args[i] for i in dyn_pos), **kwargs)

    return jit(per_call, static_argnums=static, donate_argnums=donate)
