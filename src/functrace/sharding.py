"""functrace.sharding: JAX's meshes, partition specs and ``shard_map``, on one device.

JAX programs lay their arrays out on a ``Mesh`` of devices with ``PartitionSpec``\\ s
and run per-shard code with ``shard_map``. functrace computes on one device, so a mesh
here is *virtual*: any shape is allowed (``make_mesh((4, 2), ("data", "model"))``), every
position computes on this process's CPU, and placement (``NamedSharding``,
``device_put``, ``lax.with_sharding_constraint``) changes nothing. A mesh holds the
devices of ``functrace.devices()`` in order when there are enough of them (set
``config.num_cpu_devices``, JAX's ``jax_num_cpu_devices``, or XLA's
``--xla_force_host_platform_device_count``), else device 0 at every position.
``shard_map`` gives JAX's values for the mesh's shape: it splits each argument into
its shards along the dimensions its spec names, runs the function on every shard as
nested named ``vmap``\\ s (one per mesh axis, in mesh order, so ``psum``, ``pmean``,
``all_gather``, ``axis_index``, ``ppermute``... see the mesh axes), and joins the
results along the dimensions their ``out_specs`` name. A result whose spec leaves out
a mesh axis must be the same on every shard along it (a ``psum`` over it, or a value
that never depended on it): that is checked, as JAX's ``check_vma`` does, and that one
value is returned. With ``check_vma=True`` (the default), reverse mode taken inside the
body follows JAX's types, where a value the same on every shard is one variable: its
gradient sums over the shards, and ``psum``'s cotangent passes through (see
``interpreters/spmd.py``); with ``check_vma=False`` each shard's gradient
is its own, as in JAX.

>>> import functrace as ft, functrace.numpy as fnp
>>> mesh = make_mesh((4,), ("i",))
>>> f = shard_map(lambda x: ft.lax.psum(fnp.sum(x), "i"), mesh=mesh,
...               in_specs=PartitionSpec("i"), out_specs=PartitionSpec())
>>> f(fnp.arange(8.0))
Array(28.)
"""

from __future__ import annotations

import enum
import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _config_options, core
from functrace._array import (
    CPU,
    CpuDevice,
    Sharding,
    SingleDeviceSharding,
    cpu_devices,
    to_array,
)
from functrace.interpreters import batching
from functrace.lax import shapes as _shapes
from functrace.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "device_array",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "shard_map",
    "use_abstract_mesh",
]


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (JAX's ``AxisType``): accepted by ``Mesh`` and
    ``make_mesh`` and without effect (functrace's meshes are virtual; ``shard_map``
    handles every axis it is given)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()


class PartitionSpec(tuple):  # type: ignore[type-arg]
    """How an array's dimensions are split over mesh axes (JAX's ``PartitionSpec``,
    also ``functrace.P``): one entry per leading dimension, each None (not split), a
    mesh axis name, or a tuple of names (split over their product, the first name
    major). Dimensions past the entries are not split.

    >>> PartitionSpec("data", None)
    PartitionSpec('data', None)
    """

    def __new__(cls, *entries: Any) -> PartitionSpec:
        for e in entries:
            names = e if isinstance(e, tuple) else (e,)
            if e is not None and not all(isinstance(n, str) for n in names):
                raise TypeError(
                    f"PartitionSpec: expected entries None, a mesh axis name or a tuple of "
                    f"names, got {e!r}."
                )
        return super().__new__(cls, entries)

    def __repr__(self) -> str:
        return f"PartitionSpec({', '.join(map(repr, self))})"

    def __reduce__(self) -> Any:
        return (PartitionSpec, tuple(self))


def device_array(fname: str, shape: tuple[int, ...], devices: Any = None) -> np.ndarray:
    """The devices of a mesh of ``shape``: the first ``prod(shape)`` of ``devices``
    (default ``functrace.devices()``) in order when there are that many, else device 0
    at every position (a virtual mesh larger than the device list)."""
    if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in shape):
        raise ValueError(f"{fname}: expected positive int mesh sizes, got {shape}.")
    if devices is None:
        devs = cpu_devices(_config_options.num_cpu_devices())
    else:
        devs = list(np.asarray(devices, dtype=object).flat)
        if not all(isinstance(d, CpuDevice) for d in devs):
            raise TypeError(f"{fname}: expected devices from functrace.devices().")
    n = math.prod(shape)
    arr = np.empty(n, dtype=object)
    if n <= len(devs):
        arr[:] = devs[:n]
    else:
        arr.fill(CPU)
    return arr.reshape(shape)


class Mesh:
    """Devices in an array whose axes have names (JAX's ``jax.sharding.Mesh``). The
    devices must be functrace's (``functrace.devices()``); the array may have any shape
    and repeat devices: every position computes on this process's CPU (see the module
    docstring). ``with mesh:`` makes it the mesh of ``shard_map`` calls that name none."""

    def __init__(self, devices: Any, axis_names: Any, axis_types: Any = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        arr = np.asarray(devices, dtype=object)
        if arr.ndim != len(names):
            raise ValueError(
                f"Mesh: expected one axis name per dimension of the device array "
                f"({arr.ndim}), got {len(names)} names {names}."
            )
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"Mesh: expected distinct string axis names, got {names}.")
        if names and not all(isinstance(d, CpuDevice) for d in arr.flat):
            raise TypeError(
                "Mesh: expected devices from functrace.devices() (functrace computes on "
                "this process's CPU), got other objects."
            )
        self.devices = arr
        self.axis_names = names
        self.axis_types = axis_types

    @property
    def shape(self) -> dict[str, int]:
        """``{axis name: size}``, in mesh order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        """The number of (virtual) devices."""
        return int(self.devices.size)

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The axes' sizes, in mesh order."""
        return tuple(self.devices.shape)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no axes (``get_mesh()`` outside ``set_mesh``)."""
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh's axis sizes, names and types without its devices."""
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    @property
    def device_ids(self) -> np.ndarray:
        """The positions' device ids."""
        ids = [d.id for d in self.devices.flat]
        return np.array(ids, np.int64).reshape(self.devices.shape)

    def __enter__(self) -> Mesh:
        _context.stack = [*getattr(_context, "stack", []), self]
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.stack = _context.stack[:-1]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Mesh)
            and other.axis_names == self.axis_names
            and other.devices.shape == self.devices.shape
        )

    def __hash__(self) -> int:
        return hash((self.axis_names, self.devices.shape))

    def __repr__(self) -> str:
        return f"Mesh({self.shape!r})"


_context = threading.local()


class AbstractMesh:
    """A mesh's axis sizes, names and types without devices (JAX's ``AbstractMesh``),
    as ``get_abstract_mesh()`` returns it and ``use_abstract_mesh`` takes it."""

    def __init__(
        self, axis_sizes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None
    ) -> None:
        sizes, names = tuple(axis_sizes), tuple(axis_names)
        if len(sizes) != len(names) or len(set(names)) != len(names):
            raise ValueError(
                f"AbstractMesh: expected as many distinct axis names as sizes, got sizes "
                f"{sizes} and names {names}."
            )
        if not all(isinstance(n, (int, np.integer)) and n >= 1 for n in sizes):
            raise ValueError(f"AbstractMesh: expected positive int axis sizes, got {sizes}.")
        self.axis_sizes = tuple(int(n) for n in sizes)
        self.axis_names = names
        self.axis_types = axis_types

    @property
    def shape(self) -> dict[str, int]:
        """``{axis name: size}``, in mesh order."""
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        """The number of positions."""
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no axes (``get_abstract_mesh()`` outside any mesh)."""
        return not self.axis_names

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and (other.axis_sizes, other.axis_names) == (
            self.axis_sizes,
            self.axis_names,
        )

    def __hash__(self) -> int:
        return hash((self.axis_sizes, self.axis_names))

    def __repr__(self) -> str:
        return f"AbstractMesh({self.shape!r})"


_EMPTY_MESH = Mesh(np.empty((), dtype=object), ())
_EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


def get_mesh() -> Mesh:
    """The mesh ``set_mesh`` set for this thread (``jax.sharding.get_mesh``); an empty
    mesh (``.empty``) when there is none."""
    mesh = getattr(_context, "mesh", None)
    return _EMPTY_MESH if mesh is None else mesh


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in effect (``jax.sharding.get_abstract_mesh``): the one of
    ``use_abstract_mesh``, else that of ``set_mesh``'s mesh, else an empty one."""
    mesh = getattr(_context, "abstract_mesh", None)
    return _EMPTY_ABSTRACT_MESH if mesh is None else mesh


class set_mesh:  # noqa: N801 - JAX's name
    """Set this thread's mesh (JAX's ``jax.set_mesh``), both as a setter
    (``set_mesh(mesh)``: from now on) and as a context manager (``with set_mesh(mesh):``
    puts the previous one back at the end); ``None`` unsets it. ``reshard`` and
    ``auto_axes``/``explicit_axes`` read it, and ``shard_map`` calls that name no mesh
    use it. Unlike JAX, it may also be called under ``jit`` (functrace's meshes change
    no compiled code)."""

    __slots__ = ("_previous",)

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"set_mesh: expected a Mesh or None, got {type(mesh).__name__}.")
        self._previous = (getattr(_context, "mesh", None), getattr(_context, "abstract_mesh", None))
        _context.mesh = mesh
        _context.abstract_mesh = None if mesh is None else mesh.abstract_mesh

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _context.mesh, _context.abstract_mesh = self._previous


class use_abstract_mesh:  # noqa: N801 - JAX's name
    """``with use_abstract_mesh(m):`` makes ``m`` (an :class:`AbstractMesh` of the same
    size as the one in effect, if any) the abstract mesh of the block
    (``jax.sharding.use_abstract_mesh``); the concrete mesh is unchanged."""

    __slots__ = ("_mesh", "_previous")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(
                f"use_abstract_mesh: expected an AbstractMesh, got {type(mesh).__name__}."
            )
        self._mesh = mesh
        self._previous: AbstractMesh | None = None

    def __enter__(self) -> AbstractMesh:
        prev = get_abstract_mesh()
        if not prev.empty and not self._mesh.empty and prev.size != self._mesh.size:
            raise ValueError(
                f"use_abstract_mesh: expected a mesh of the size of the one in effect "
                f"({prev.size}, {prev!r}), got {self._mesh!r} of size {self._mesh.size}."
            )
        self._previous = getattr(_context, "abstract_mesh", None)
        _context.abstract_mesh = self._mesh
        return self._mesh

    def __exit__(self, *exc: Any) -> None:
        _context.abstract_mesh = self._previous


def make_single_device_sharding(device: Any, *, memory_kind: Any = None) -> SingleDeviceSharding:
    """``SingleDeviceSharding(device)`` (``jax.sharding.make_single_device_sharding``);
    ``memory_kind`` may only be None (functrace has one memory kind)."""
    if not isinstance(device, CpuDevice):
        raise TypeError(
            f"make_single_device_sharding: expected a device of functrace.devices(), got "
            f"{type(device).__name__}."
        )
    if memory_kind is not None:
        raise ValueError(
            f"make_single_device_sharding: expected memory_kind=None, got {memory_kind!r:.40}."
        )
    return SingleDeviceSharding(device)


def _check_reshard_target(fname: str, s: Any, ndim: int) -> None:
    if isinstance(s, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                f"{fname}: expected a NamedSharding, or a PartitionSpec inside set_mesh "
                f"(a mesh to read its axis names from), got {s!r} with no mesh set."
            )
        spec, names = s, mesh.axis_names
    elif isinstance(s, NamedSharding):
        spec, names = s.spec, s.mesh.axis_names
    else:
        raise TypeError(
            f"{fname}: expected NamedShardings or PartitionSpecs, got {type(s).__name__}."
        )
    used = [n for e in spec for n in _names_of(e)]
    bad = [n for n in used if n not in names]
    if bad or len(set(used)) != len(used):
        raise ValueError(
            f"{fname}: expected each of the mesh axes {names} at most once, got {spec!r}."
        )
    if len(spec) > ndim:
        raise ValueError(
            f"{fname}: expected a spec of at most {ndim} entries for an array of rank "
            f"{ndim}, got {spec!r}."
        )


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree of arrays) laid out by ``out_shardings`` (a ``NamedSharding`` or,
    inside ``set_mesh``, a ``PartitionSpec``; one, or a pytree prefix of ``xs``), as
    ``jax.sharding.reshard``. The specs are checked against the mesh and the ranks, and
    the values are returned unchanged: functrace's arrays live on one device, so their
    ``.sharding`` stays ``SingleDeviceSharding`` (JAX's reports the new layout).
    Differentiable (the identity) and usable under every transform."""
    leaves, tree = tree_flatten(xs)
    is_target = lambda s: s is None or isinstance(s, (PartitionSpec, NamedSharding))  # noqa: E731
    targets, target_tree = tree_flatten(out_shardings, is_leaf=is_target)
    try:
        subtrees = target_tree.flatten_up_to(xs)
    except ValueError as e:
        raise ValueError(
            f"reshard: expected out_shardings to be a pytree prefix of xs: {e}"
        ) from None
    for s, sub in zip(targets, subtrees):
        if s is None:
            raise ValueError("reshard: expected a sharding for every array, got None.")
        for x in tree_flatten(sub)[0]:
            _check_reshard_target("reshard", s, len(core.get_aval(x).shape))
    out = [x if isinstance(x, core.Tracer) else to_array(np.asarray(x)) for x in leaves]
    return tree_unflatten(tree, out)


def _axes_mode(fname: str, f: Any, axes: Any, key: str, given: Any) -> Any:
    if not callable(f):
        raise TypeError(f"{fname}: expected a callable, got {type(f).__name__}.")

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        target = given
        if target is None:
            if key not in kwargs:
                raise TypeError(f"{fname}: expected the keyword argument {key!r}, got none.")
            target = kwargs.pop(key)
        mesh = get_abstract_mesh()
        if mesh.empty:
            if fname == "explicit_axes":
                raise ValueError(f"{fname}: expected a mesh set with set_mesh, got none.")
            return f(*args, **kwargs)
        names = (
            (axes,) if isinstance(axes, str) else tuple(mesh.axis_names if axes is None else axes)
        )
        bad = [n for n in names if n not in mesh.axis_names]
        if bad:
            raise ValueError(f"{fname}: expected axes of the mesh {mesh.axis_names}, got {bad}.")
        if fname == "explicit_axes":
            args = reshard(args, target)
            return f(*args, **kwargs)
        return reshard(f(*args, **kwargs), target)

    return wrapped


def auto_axes(
    f: Callable[..., Any] | None = None, /, *, axes: Any = None, out_sharding: Any = None
) -> Any:
    """``f`` run with the mesh ``axes`` (default all) switched to automatic sharding,
    its results resharded to ``out_sharding`` (given here or as a keyword of the call),
    as ``jax.sharding.auto_axes``. Axis types change no values here: ``f``'s results
    are returned after :func:`reshard`'s checks."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)
    return _axes_mode("auto_axes", f, axes, "out_sharding", out_sharding)


def explicit_axes(
    f: Callable[..., Any] | None = None, /, *, axes: Any = None, in_sharding: Any = None
) -> Any:
    """``f`` run with the mesh ``axes`` (default all) switched to explicit sharding,
    its arguments resharded to ``in_sharding`` (given here or as a keyword of the
    call), as ``jax.sharding.explicit_axes``; needs ``set_mesh``. Axis types change no
    values here: the arguments pass :func:`reshard`'s checks unchanged."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)
    return _axes_mode("explicit_axes", f, axes, "in_sharding", in_sharding)


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: Any = None,
    *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A mesh of the given shape and axis names (JAX's ``jax.make_mesh``). JAX needs as
    many devices as positions; functrace's mesh is virtual (any shape, see
    :func:`device_array`), so programs written for N devices compute their values here.

    >>> make_mesh((2, 4), ("data", "model")).shape
    {'data': 2, 'model': 4}
    """
    arr = device_array("make_mesh", tuple(axis_shapes), devices)
    return Mesh(arr, tuple(axis_names), axis_types)


class NamedSharding(Sharding):
    """An array laid out on ``mesh`` by ``spec`` (JAX's ``NamedSharding``): accepted by
    ``device_put`` and ``lax.with_sharding_constraint``, which change nothing (one
    device holds everything)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec = PartitionSpec(), **kwargs: Any) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: expected a Mesh, got {type(mesh).__name__}.")
        self.mesh = mesh
        self.spec = _check_spec("NamedSharding", spec, mesh)

    is_fully_addressable = True

    @property
    def is_fully_replicated(self) -> bool:
        """Whether the spec splits no dimension."""
        return all(e is None for e in self.spec)

    @property
    def device_set(self) -> set[CpuDevice]:
        """The mesh's devices."""
        return set(self.mesh.devices.flat)

    @property
    def addressable_devices(self) -> set[CpuDevice]:
        """The mesh's devices (all belong to this process)."""
        return self.device_set

    @property
    def num_devices(self) -> int:
        """The number of distinct devices of the mesh."""
        return len(self.device_set)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each shard of an array of ``global_shape``."""
        sizes = self.mesh.shape
        out = []
        for d, n in enumerate(global_shape):
            entry = self.spec[d] if d < len(self.spec) else None
            k = math.prod(sizes[a] for a in _names_of(entry))
            if n % k:
                raise ValueError(
                    f"NamedSharding.shard_shape: expected dimension {d} of {tuple(global_shape)} "
                    f"to be divisible by its {k} shards ({self.spec!r}), got {n}."
                )
            out.append(n // k)
        return tuple(out)

    def _position_indices(self, global_shape: Sequence[int]) -> list[tuple[Any, tuple[slice, ...]]]:
        """(device, index of its shard) for every mesh position, in mesh order."""
        shard = self.shard_shape(global_shape)
        sizes = self.mesh.shape
        names = self.mesh.axis_names
        out = []
        for pos in np.ndindex(self.mesh.devices.shape):
            coord = dict(zip(names, pos))
            index = []
            for d in range(len(global_shape)):
                entry = self.spec[d] if d < len(self.spec) else None
                axes = _names_of(entry)
                if not axes:
                    index.append(slice(None))
                    continue
                j = 0
                for a in axes:  # the first axis named is the major one
                    j = j * sizes[a] + coord[a]
                index.append(slice(j * shard[d], (j + 1) * shard[d]))
            out.append((self.mesh.devices[pos], tuple(index)))
        return out

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """``{device: index of its shard}`` for an array of ``global_shape`` (a device
        at several positions of a virtual mesh keeps the last one)."""
        return dict(self._position_indices(tuple(global_shape)))

    def addressable_devices_indices_map(
        self, global_shape: Sequence[int]
    ) -> dict[Any, tuple[slice, ...]]:
        """The same as :meth:`devices_indices_map`: every device is this process's."""
        return self.devices_indices_map(global_shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedSharding) and (other.mesh, other.spec) == (
            self.mesh,
            self.spec,
        )

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def _names_of(entry: Any) -> tuple[str, ...]:
    if entry is None:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def _check_spec(fname: str, spec: Any, mesh: Mesh, manual: Sequence[str] | None = None) -> Any:
    if spec is None:
        return PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"{fname}: expected a PartitionSpec, got {type(spec).__name__} {spec!r}.")
    used = [n for e in spec for n in _names_of(e)]
    allowed = mesh.axis_names if manual is None else tuple(manual)
    for n in used:
        if n not in allowed:
            raise ValueError(f"{fname}: expected mesh axis names {allowed} in {spec!r}, got {n!r}.")
    if len(set(used)) != len(used):
        raise ValueError(f"{fname}: expected each mesh axis once in {spec!r}.")
    return spec


# ---------------------------------------------------------------------------
# shard_map
# ---------------------------------------------------------------------------


def _is_spec(s: Any) -> bool:
    return isinstance(s, PartitionSpec) or s is None


def _broadcast_specs(fname: str, what: str, specs: Any, tree: Any) -> list[Any]:
    """One spec per leaf of ``tree`` from ``specs``, a pytree prefix of it whose leaves
    are ``PartitionSpec``\\ s (each covers its whole subtree; None: not split)."""
    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=_is_spec)
    if not all(_is_spec(s) for s in spec_leaves):
        bad = next(s for s in spec_leaves if not _is_spec(s))
        raise TypeError(f"{fname}: expected {what} made of PartitionSpecs, got {bad!r}.")
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(
            f"{fname}: expected {what} to be a pytree prefix of the structure it describes: {e}"
        ) from None
    out: list[Any] = []
    for spec, sub in zip(spec_leaves, subtrees):
        out += [spec or PartitionSpec()] * len(tree_flatten(sub)[0])
    return out


def _split(x: Any, spec: Any, mesh_axes: Sequence[str], sizes: dict[str, int], fname: str) -> Any:
    """``x`` with a leading dimension per mesh axis its spec names (in ``mesh_axes``
    order), the named dimensions divided into their shards."""
    shape = core.get_aval(x).shape
    if len(spec) > len(shape):
        raise ValueError(
            f"{fname}: expected a PartitionSpec of at most {len(shape)} entries for an "
            f"argument of shape {shape}, got {spec!r}."
        )
    new_shape: list[int] = []
    pos: dict[str, int] = {}
    for d, n in enumerate(shape):
        names = _names_of(spec[d]) if d < len(spec) else ()
        k = math.prod(sizes[a] for a in names)
        if n % k:
            raise ValueError(
                f"{fname}: expected dimension {d} of an argument of shape {shape} to be "
                f"divisible by the mesh axes {names} ({k} shards), got {n}."
            )
        for a in names:
            pos[a] = len(new_shape)
            new_shape.append(sizes[a])
        new_shape.append(n // k)
    x = _shapes.reshape(x, tuple(new_shape))
    front = [pos[a] for a in mesh_axes if a in pos]
    rest = [i for i in range(len(new_shape)) if i not in front]
    return _shapes.transpose(x, (*front, *rest))


def _join(y: Any, spec: Any, mesh_axes: Sequence[str], sizes: dict[str, int], fname: str) -> Any:
    """The inverse of ``_split``: ``y`` has a leading dimension per mesh axis the spec
    names (in mesh order) before the shard's own dimensions."""
    used = [a for a in mesh_axes if any(a in _names_of(e) for e in spec)]
    local = core.get_aval(y).shape[len(used) :]
    if len(spec) > len(local):
        raise ValueError(
            f"{fname}: expected an out_specs entry of at most {len(local)} dimensions for "
            f"a result of per-shard shape {local}, got {spec!r}."
        )
    order: list[int] = []
    out_shape: list[int] = []
    for d, n in enumerate(local):
        names = _names_of(spec[d]) if d < len(spec) else ()
        order += [used.index(a) for a in names] + [len(used) + d]
        out_shape.append(n * math.prod(sizes[a] for a in names))
    return _shapes.reshape(_shapes.transpose(y, tuple(order)), tuple(out_shape))


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = None,
    mesh: Mesh | None = None,
    axis_names: Any = frozenset(),
    check_vma: bool = True,
) -> Any:
    """``f`` run on every shard of its arguments over the mesh (JAX's ``jax.shard_map``;
    see the module docstring). ``in_specs`` (a pytree prefix of the arguments, a
    ``PartitionSpec`` each) says how each argument is split; ``out_specs`` how the
    per-shard results are joined. ``axis_names`` (default: all of the mesh's) are the
    axes ``f`` handles; the others leave arguments whole. With ``check_vma``, a result
    that varies along a mesh axis its spec does not name is an error (JAX's check);
    without, the first shard's value is returned. ``in_specs`` must be given
    (JAX's inference from the arguments' shardings has nothing to read here).
    Usable as a decorator: ``@partial(shard_map, mesh=m, in_specs=..., out_specs=...)``.
    """
    if f is None:
        return functools.partial(
            shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
            axis_names=axis_names, check_vma=check_vma,
        )  # fmt: skip
    fname = "shard_map"
    if not callable(f):
        raise TypeError(f"{fname}: expected a callable, got {type(f).__name__}.")

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = mesh if mesh is not None else (getattr(_context, "stack", None) or [None])[-1]
        if m is None and not get_mesh().empty:
            m = get_mesh()  # the mesh of set_mesh
        if not isinstance(m, Mesh):
            raise ValueError(
                f"{fname}: expected a mesh (mesh=, or inside `with mesh:`), got {m!r}."
            )
        manual = tuple(a for a in m.axis_names if not axis_names or a in axis_names)
        sizes = m.shape
        leaves, tree = tree_flatten(args)
        ins = _broadcast_specs(fname, "in_specs", _as_specs(in_specs, fname), args)
        for s in ins:
            _check_spec(fname, s, m, manual)
        split = [_split(x, s, manual, sizes, fname) for x, s in zip(leaves, ins)]
        uses = [[a for a in manual if any(a in _names_of(e) for e in s)] for s in ins]
        box: list[Any] = []

        def run(level: int, xs: list[Any], have: list[list[str]]) -> list[Any]:
            if level == len(manual):
                out = f(*tree_unflatten(tree, xs))
                flat, out_tree = tree_flatten(out)
                box.append(out_tree)
                return flat
            a = manual[level]
            dims = [0 if a in h else None for h in have]
            rest = [[n for n in h if n != a] for h in have]
            outs, out_dims = batching.vmap_flat(
                lambda *v: run(level + 1, list(v), rest), sizes[a], xs, dims,
                origin=f"{fname} over {a!r}", axis_name=a, vma=check_vma,
            )  # fmt: skip
            box.append((a, out_dims))
            return [batching.bdim_at(o, d, sizes[a], 0) if d is not None else o
                    for o, d in zip(outs, out_dims)]  # fmt: skip

        flat = run(0, split, uses)
        out_tree = box[0]
        levels = dict(box[1:])  # axis -> which outputs vary along it
        outs_spec = _broadcast_specs(fname, "out_specs", out_specs, tree_unflatten(out_tree, flat))
        results = []
        for i, (y, s) in enumerate(zip(flat, outs_spec)):
            _check_spec(fname, s, m, manual)
            named = [a for a in manual if any(a in _names_of(e) for e in s)]
            # leading dims: one per manual axis along which y varied (in mesh order)
            varied = [a for a in manual if levels[a][i] is not None]
            for a in varied:
                if a not in named and check_vma:
                    raise ValueError(
                        f"{fname}: expected output {i}, whose out_specs {s!r} leaves out "
                        f"mesh axis {a!r}, to be the same on every shard along it, got a "
                        f"value that varies along it (psum it over {a!r}, or name {a!r} "
                        f"in its out_specs; with check_vma=False the first shard's value "
                        f"is returned)."
                    )
            for a in reversed(varied):  # drop the unnamed ones, keep the named
                if a not in named:
                    k = varied.index(a)
                    y = _take0(y, k)
            kept = [a for a in varied if a in named]
            for a in named:  # a replicated value named in the spec: broadcast it
                if a not in kept:
                    k = sorted([*kept, a], key=manual.index).index(a)
                    y = _shapes.expand_dims(y, (k,))
                    shp = list(core.get_aval(y).shape)
                    shp[k] = sizes[a]
                    y = _shapes.broadcast_in_dim(y, tuple(shp), tuple(range(len(shp))))
                    kept = sorted([*kept, a], key=manual.index)
            results.append(_join(y, s, manual, sizes, fname))
        return tree_unflatten(out_tree, [to_array(r) for r in results])

    return mapped


def _take0(y: Any, k: int) -> Any:
    """``y`` at index 0 of dimension ``k`` (the dimension removed)."""
    shape = core.get_aval(y).shape
    start = [0] * len(shape)
    limit = list(shape)
    limit[k] = 1
    part = _shapes.slice(y, tuple(start), tuple(limit))
    return _shapes.reshape(part, shape[:k] + shape[k + 1 :])


def _as_specs(specs: Any, fname: str) -> Any:
    if specs is None:
        raise ValueError(
            f"{fname}: expected in_specs (JAX infers them from the arguments' shardings, "
            f"which functrace's one device does not record), got None."
        )
    return specs


# ---------------------------------------------------------------------------
# Global arrays from their shards (JAX's make_array_from_* calls)
# ---------------------------------------------------------------------------


def _shard_indices(fname: str, sharding: Any, shape: Any) -> list[tuple[Any, tuple[slice, ...]]]:
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(
            f"{fname}: expected a shape (a tuple of ints), got {shape!r:.60}."
        ) from None
    if isinstance(sharding, NamedSharding):
        return sharding._position_indices(shape)
    if isinstance(sharding, SingleDeviceSharding):
        return [(next(iter(sharding.device_set)), (slice(None),) * len(shape))]
    raise TypeError(
        f"{fname}: expected a NamedSharding or SingleDeviceSharding, got {type(sharding).__name__}."
    )


def _assemble(
    fname: str, shape: tuple[int, ...], pieces: list[tuple[tuple[slice, ...], Any]]
) -> Any:
    out: np.ndarray | None = None
    for index, piece in pieces:
        data = np.asarray(piece)
        want = tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))
        if data.shape != want:
            raise ValueError(
                f"{fname}: expected a shard of shape {want} for index {index}, got shape "
                f"{data.shape}."
            )
        if out is None:
            out = np.empty(shape, data.dtype)
        out[index] = data
    assert out is not None
    return to_array(out)


def make_array_from_callback(
    shape: Sequence[int], sharding: Any, data_callback: Callable[[Any], Any], dtype: Any = None
) -> Any:
    """The array of ``shape`` laid out by ``sharding`` whose shards are
    ``data_callback(index)`` (JAX's ``jax.make_array_from_callback``): ``index`` is the
    tuple of slices of a shard. The callback runs once per distinct shard (JAX: once per
    device, so replicated shards repeat calls).

    >>> mesh = make_mesh((2,), ("x",))
    >>> make_array_from_callback((4,), NamedSharding(mesh, PartitionSpec("x")),
    ...                          lambda idx: np.arange(4.0)[idx] * 10)
    Array([ 0., 10., 20., 30.])
    """
    fname = "make_array_from_callback"
    shape = tuple(shape)
    pieces: dict[tuple[Any, ...], tuple[tuple[slice, ...], Any]] = {}
    for _, index in _shard_indices(fname, sharding, shape):
        key = tuple((s.start, s.stop) for s in index)
        if key not in pieces:
            pieces[key] = (index, data_callback(index))
    out = _assemble(fname, shape, list(pieces.values()))
    return out if dtype is None else to_array(np.asarray(out, dtype))


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Any, arrays: Sequence[Any], *, dtype: Any = None
) -> Any:
    """The array of ``shape`` whose shards are ``arrays``, one per mesh position in mesh
    order: the order of ``sharding.addressable_devices_indices_map(shape)`` on a mesh of
    distinct devices (JAX's ``jax.make_array_from_single_device_arrays``)."""
    fname = "make_array_from_single_device_arrays"
    shape = tuple(shape)
    where = _shard_indices(fname, sharding, shape)
    arrays = list(arrays)
    if len(arrays) != len(where):
        raise ValueError(
            f"{fname}: expected one array per mesh position ({len(where)}), got {len(arrays)}."
        )
    out = _assemble(fname, shape, [(index, a) for (_, index), a in zip(where, arrays)])
    return out if dtype is None else to_array(np.asarray(out, dtype))


def make_array_from_process_local_data(
    sharding: Any, local_data: Any, global_shape: Sequence[int] | None = None
) -> Any:
    """The global array from this process's data (JAX's
    ``jax.make_array_from_process_local_data``). functrace runs the program in one process,
    so its data is the whole array: ``global_shape``, if given, must be its shape."""
    fname = "make_array_from_process_local_data"
    data = np.asarray(local_data)
    _shard_indices(fname, sharding, data.shape)  # checks the sharding and divisibility
    if global_shape is not None and tuple(global_shape) != data.shape:
        raise ValueError(
            f"{fname}: expected global_shape equal to the local data's shape {data.shape} "
            f"(one process holds all the data), got {tuple(global_shape)}."
        )
    return to_array(data)
