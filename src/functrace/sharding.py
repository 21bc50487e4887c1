"""functrace.sharding: JAX's meshes, partition specs and ``shard_map``, on one device.

JAX programs lay their arrays out on a ``Mesh`` of devices with ``PartitionSpec``\\ s
and run per-shard code with ``shard_map``. functrace computes on one device, so a mesh
here is *virtual*: any shape is allowed (``make_mesh((4, 2), ("data", "model"))``), every
position holds this process's CPU, and placement (``NamedSharding``, ``device_put``,
``lax.with_sharding_constraint``) changes nothing. ``shard_map`` gives JAX's values for
the mesh's shape: it splits each argument into its shards along the dimensions its
spec names, runs the function on every shard as nested named ``vmap``\\ s (one per mesh
axis, in mesh order, so ``psum``, ``pmean``, ``all_gather``, ``axis_index``,
``ppermute``... see the mesh axes), and joins the results along the dimensions their
``out_specs`` name. A result whose spec leaves out a mesh axis must be the same on
every shard along it (a ``psum`` over it, or a value that never depended on it): that
is checked, as JAX's ``check_vma`` does, and that one value is returned.

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

from functrace import core
from functrace._array import CPU, CpuDevice, SingleDeviceSharding, to_array
from functrace.interpreters import batching
from functrace.lax import shapes as _shapes
from functrace.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "SingleDeviceSharding",
    "make_mesh",
    "shard_map",
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


class Mesh:
    """Devices in an array whose axes have names (JAX's ``jax.sharding.Mesh``). The
    devices must be functrace's (``functrace.devices()``); the array may have any shape:
    every position is this process's CPU, a virtual device (see the module docstring).
    ``with mesh:`` makes it the mesh of ``shard_map`` calls that name none."""

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
        if not all(isinstance(d, CpuDevice) for d in arr.flat):
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
    def device_ids(self) -> np.ndarray:
        """The positions' device ids (all 0: the one CPU)."""
        return np.zeros(self.devices.shape, np.int64)

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


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: Any = None,
    *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A mesh of the given shape and axis names (JAX's ``jax.make_mesh``). JAX needs as
    many devices as positions; functrace's mesh is virtual (any shape: every position is
    the CPU), so programs written for N devices compute their values here.

    >>> make_mesh((2, 4), ("data", "model")).shape
    {'data': 2, 'model': 4}
    """
    shape = tuple(axis_shapes)
    if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in shape):
        raise ValueError(f"make_mesh: expected positive int axis sizes, got {shape}.")
    if devices is not None and not all(isinstance(d, CpuDevice) for d in devices):
        raise TypeError("make_mesh: expected devices from functrace.devices().")
    arr = np.empty(shape, dtype=object)
    arr.fill(CPU)
    return Mesh(arr, tuple(axis_names), axis_types)


class NamedSharding:
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
        """``{cpu}``."""
        return {CPU}

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
                origin=f"{fname} over {a!r}", axis_name=a,
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
                        f"in its out_specs). A gradient taken inside shard_map with respect "
                        f"to a value replicated over {a!r} is each shard's own here, as in "
                        f"JAX with check_vma=False (JAX's default types values as varying "
                        f"or not and sums such gradients itself): write the body for "
                        f"check_vma=False, e.g. pmean the per-shard gradients over {a!r}."
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
