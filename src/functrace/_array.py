"""``functrace.Array``: the immutable NumPy array that eager results are.

An ``Array`` *is* a ``numpy.ndarray`` (a subclass whose buffer is read-only), so every
NumPy function, Matplotlib and ``np.asarray`` (zero-copy) take it as they take any
array. On top of NumPy it has JAX's array idioms:

* ``x.at[idx].set/add/multiply/min/max/get(...)`` (``functrace.numpy.at``), returning a
  new ``Array``;
* ``x.block_until_ready()`` (returns ``x``: eager results are already computed);
* ``x[i] = v`` raises ``TypeError`` pointing to ``.at``; in-place operators
  (``x += 1``) rebind the name to a new ``Array``, as in JAX;
* ``x[i]`` with a traced index (inside ``jit``, ``vmap``, ``scan``...) indexes with
  ``functrace.numpy``, so a closed-over table can be read at a traced position.

Type rules (see ``functrace/README.md``, "Eager results are Arrays"): operators,
indexing and the array methods of an ``Array`` return ``Array``s (0-d results too);
NumPy's own functions and ufuncs called on it (``np.sin(x)``, ``np.zeros_like(x)``,
``np.concatenate``) return what they return for plain arrays, plain ``ndarray``s and
NumPy scalars, as NumPy does for any array-like.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import _debug, core, dtypes
from functrace._buffers import ufunc_pooled as _pooled
from functrace.core import Tracer

_nd = np.ndarray
_flags = _debug.flags  # config.debug_nans / debug_infs also check Array operators
_promotion = dtypes.promotion  # config.numpy_dtype_promotion: checked when "strict"
_getitem = np.ndarray.__getitem__


def _unregistered(*args: Any) -> Any:
    raise RuntimeError(
        "functrace.Array: expected functrace.numpy to be imported (it provides traced "
        "indexing and .at), got a call before it was. Import functrace first."
    )


# Filled by functrace.numpy at import (the layer above this one): ``getitem(x, idx)``
# with NumPy's semantics on traced indices, and ``at(x)``, the ``.at`` indexer.
_traced_getitem: Callable[[Any, Any], Any] = _unregistered
_at: Callable[[Any], Any] = _unregistered


def register_traced_getitem(getitem: Callable[[Any, Any], Any]) -> None:
    """Make ``Array.__getitem__`` index with ``getitem`` when the index holds a tracer."""
    global _traced_getitem
    _traced_getitem = getitem


def register_at(at: Callable[[Any], Any]) -> None:
    """Make ``Array.at`` return ``at(self)``."""
    global _at
    _at = at


class CpuDevice:
    """A device functrace computes on: this process's CPU. ``functrace.devices()`` lists
    one, or ``config.num_cpu_devices`` virtual ones (JAX's ``jax_num_cpu_devices``) that
    all compute on it, for programs written for several devices."""

    __slots__ = ("id",)
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __init__(self, id: int = 0) -> None:  # noqa: A002 - JAX's attribute name
        self.id = id

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __reduce__(self) -> Any:
        return (cpu_devices_upto, (self.id,))


_DEVICES = [CpuDevice(0)]
CPU = _DEVICES[0]


def cpu_devices(n: int) -> list[CpuDevice]:
    """The first ``n`` devices (one object per id, made on first use)."""
    while len(_DEVICES) < n:
        _DEVICES.append(CpuDevice(len(_DEVICES)))
    return _DEVICES[:n]


def cpu_devices_upto(i: int) -> CpuDevice:
    """The device with id ``i`` (unpickling keeps one object per id)."""
    return cpu_devices(i + 1)[i]


class Shard:
    """One piece of an Array as JAX's sharding API lists it (``x.addressable_shards``):
    its ``device``, its ``index`` into the whole array (a tuple of slices),
    ``replica_id`` and ``data``. An Array of functrace is one shard: the whole array
    on the CPU."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: CpuDevice, index: tuple[slice, ...], replica_id: int, data: Any):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
            f"data={self.data!r})"
        )


class Sharding:
    """The base class of functrace's shardings (JAX's ``jax.sharding.Sharding``):
    ``isinstance(s, Sharding)`` holds for ``SingleDeviceSharding`` and
    ``NamedSharding``."""

    __slots__ = ()


class SingleDeviceSharding(Sharding):
    """Where an Array lives: wholly on one device (JAX's ``SingleDeviceSharding``)."""

    __slots__ = ("_device",)

    is_fully_replicated = True
    is_fully_addressable = True
    num_devices = 1
    memory_kind = None

    def __init__(self, device: CpuDevice) -> None:
        self._device = device

    @property
    def device_set(self) -> set[CpuDevice]:
        """The devices holding the array: ``{cpu}``."""
        return {self._device}

    def devices_indices_map(self, global_shape: Any) -> dict[CpuDevice, tuple[slice, ...]]:
        """``{device: index}``: the whole array (``slice(None)`` per dimension)."""
        return {self._device: (slice(None),) * len(tuple(global_shape))}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device is self._device

    def __hash__(self) -> int:
        return hash(self._device)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r})"


class _ArrayType(type):
    """``isinstance(x, Array)`` is also True for tracers, as ``isinstance(x, jax.Array)``
    is under JAX's transforms (code checks it to tell arrays from other leaves).
    functrace's own code tests ``type(x) is Array`` for eager arrays."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or isinstance(obj, Tracer)


class Array(np.ndarray, metaclass=_ArrayType):
    """An immutable ``numpy.ndarray`` with JAX's ``.at``, ``block_until_ready``.
    ``isinstance(tracer, Array)`` is True as well (as for ``jax.Array``)."""

    __array_priority__ = 1.0  # below tracers: ``Array + tracer`` defers to the tracer

    # -- construction ------------------------------------------------------
    def __new__(cls, obj: Any, dtype: Any = None) -> Array:
        return to_array(np.array(obj, dtype=dtype))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # NumPy's ufuncs see plain arrays (a read-only view: ``out=x`` still fails).
        inputs = tuple(i.view(_nd) if type(i) is Array else i for i in inputs)
        if _debug.flags.rank_promotion != "allow" and method == "__call__" and len(inputs) > 1:
            if ufunc.signature is None:  # elementwise (matmul, vecdot... have core dims)
                _debug.check_rank_promotion(ufunc.__name__, [np.shape(i) for i in inputs], 3)
        if method == "__call__" and not kwargs:
            r = _pooled(ufunc, *inputs)
            if r is not None:
                return r
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(o.view(_nd) if type(o) is Array else o for o in out)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # NumPy's functions run on plain views of the Arrays among their arguments, so
        # their results (and their internal scratch arrays) are NumPy's own.
        return func(*_plain_args(args), **_plain_kwargs(kwargs))

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> Any:
        return arr[()] if return_scalar else arr.view(_nd)

    def __reduce__(self) -> Any:
        return (_rebuild, (np.array(self.view(_nd)),))

    def __copy__(self) -> Array:
        return _wrap(np.array(self.view(_nd)))

    def __deepcopy__(self, memo: Any) -> Array:
        return self.__copy__()

    def __repr__(self) -> str:
        body = repr(self.view(_nd))
        return "Array" + body[len("array") :] if body.startswith("array") else body

    def __str__(self) -> str:
        # NumPy's text of the data, as JAX's str gives (NumPy's formatting of this
        # subclass printed float32 entries with float64 digits: 0.83333331)
        return str(self.view(_nd))

    # -- JAX's array API ---------------------------------------------------
    @property
    def at(self) -> Any:
        """``x.at[idx].set(v)`` (and ``add``, ``multiply``, ``min``, ``max``, ``get``...)."""
        return _at(self)

    def block_until_ready(self) -> Array:
        """Return ``self``: eager results are computed when they are returned."""
        return self

    def devices(self) -> set[CpuDevice]:
        """The devices holding the array: ``{CpuDevice(id=0)}`` (functrace computes on
        the CPU of this process)."""
        return {CPU}

    @property
    def sharding(self) -> SingleDeviceSharding:
        """``SingleDeviceSharding(device=CpuDevice(id=0))``: the whole array on the CPU."""
        return SingleDeviceSharding(CPU)

    # JAX's answers for an array wholly on one local device, computed when returned
    @property
    def addressable_shards(self) -> list[Shard]:
        """``[Shard]``: one shard, the whole array on the CPU (its ``data`` is ``self``)."""
        return [Shard(CPU, (slice(None),) * self.ndim, 0, self)]

    global_shards = addressable_shards

    def addressable_data(self, index: int) -> Array:
        """The data of shard ``index``: ``0``, the whole array, is the only one."""
        if index != 0:
            raise IndexError(f"addressable_data: expected shard index 0 (one shard), got {index}.")
        return self

    is_fully_replicated = True
    is_fully_addressable = True
    committed = False  # placed by default, as JAX's unplaced results: no device_put here
    weak_type = False  # eager results are strong (src/functrace/README.md, "Weak types")

    @property
    def aval(self) -> core.ShapedArray:
        """The abstract value: ``ShapedArray(shape, dtype)``."""
        return core.ShapedArray(self.shape, self.dtype)

    def is_ready(self) -> bool:
        """True: eager results are computed when they are returned."""
        return True

    def copy_to_host_async(self) -> None:
        """Nothing to do: the data is in host memory already."""

    def on_device_size_in_bytes(self) -> int:
        """The bytes the data takes (``nbytes``: the CPU is the device)."""
        return int(self.nbytes)

    def unsafe_buffer_pointer(self) -> int:
        """The address of the first element (valid while the Array lives)."""
        return int(self.ctypes.data)

    def clone(self) -> Array:
        """A copy."""
        return self.copy()

    def ptp(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        """Maximum minus minimum along ``axis`` (``jnp.ptp``; NumPy 2 has no method)."""
        return _wrap(np.ptp(self.view(_nd), axis=axis, out=out, keepdims=keepdims))

    def __setitem__(self, idx: Any, val: Any) -> None:
        raise TypeError(
            f"__setitem__: functrace Arrays are immutable, got x[{idx!r}] = ... on an Array "
            f"of shape {self.shape} and dtype {self.dtype}. Use x = x.at[idx].set(value) "
            f"(or .add/.multiply/.min/.max), or np.array(x) for a mutable NumPy copy."
        )

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, Tracer) or (
            (type(idx) is tuple or type(idx) is list) and _index_has_tracer(idx)
        ):
            return _traced_getitem(self.view(_nd), idx)
        r = _getitem(self, idx)
        if type(r) is Array:  # a view (read-only already) or an advanced-index copy
            if r.flags.writeable:
                r.setflags(write=False)
            return r
        return _wrap(r)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def copy(self, order: Any = "C") -> Array:  # type: ignore[override]
        return _wrap(self.view(_nd).copy(order))


core.plain_subclasses.add(Array)


def _rebuild(a: np.ndarray) -> Array:
    return _wrap(a)


def to_array(x: Any) -> Any:
    """``x`` as an ``Array`` when it is a NumPy array or scalar (read-only views are
    copied, so that nobody else can write to the result), else ``x`` unchanged."""
    t = type(x)
    if t is _nd:
        if not x.flags.writeable:
            x = x.copy()
        a = x.view(Array)
        a.setflags(write=False)
        return a
    if t is Array:
        return x
    if isinstance(x, np.generic):
        return scalar_array(x)
    return x  # a tracer, a Python value, another ndarray subclass: unchanged


_new_array = np.ndarray.__new__


def scalar_array(x: np.generic) -> Array:
    """The NumPy scalar ``x`` as a 0-d ``Array``. A numeric scalar is immutable and
    exposes its value as a read-only buffer, so the result reads it in place (one
    constructor call, read-only from the start: about half the cost of copying it into
    a fresh array and clearing the write flag); other scalars are copied."""
    dt = x.dtype
    if dt.kind in "biufc":
        return _new_array(Array, (), dt, x)
    a = np.array(x).view(Array)
    a.setflags(write=False)
    return a


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every eager ``Array`` still alive (``jax.live_arrays``), found by a scan of the
    objects Python's garbage collector tracks when called (nothing is recorded while
    arrays are made, so the cost is here, not on every operation); includes views of
    other Arrays. ``platform`` may be None or ``"cpu"``."""
    if platform is not None and platform != "cpu":
        raise ValueError(
            f"live_arrays: expected platform None or 'cpu' (functrace computes on the CPU "
            f"only), got {platform!r:.40}."
        )
    return [o for o in gc.get_objects() if type(o) is Array]


def _wrap(x: Any) -> Any:
    """A result computed from an Array (a fresh array or a view of its read-only
    buffer) as an Array, without copying."""
    t = type(x)
    if t is _nd:
        a = x.view(Array)
        a.setflags(write=False)
        return a
    if isinstance(x, np.generic):
        return scalar_array(x)
    return x


def _plain(x: Any) -> Any:
    """``x`` with its ``Array``s, also in (nested) lists and tuples, as plain views."""
    t = type(x)
    if t is Array:
        return x.view(_nd)
    if t is list or t is tuple:
        return t(_plain(e) for e in x)  # (np.block takes nested lists)
    return x


def _plain_args(args: Any) -> Any:
    return [_plain(a) for a in args]


def _plain_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in kwargs.items()} if kwargs else kwargs


def _index_has_tracer(idx: Any) -> bool:
    if isinstance(idx, Tracer):
        return True
    if type(idx) is tuple or type(idx) is list:
        return any(_index_has_tracer(i) for i in idx)
    return False


# -- operators and methods: results are Arrays ------------------------------


# Operators computed by one ufunc (reflected ones swap the operands): a large float
# result goes into a buffer of the eager pool (``_buffers.ufunc_pooled``).
_OPERATOR_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "truediv": np.true_divide, "pow": np.power}  # fmt: skip


def _binary(name: str) -> Any:
    base = getattr(_nd, name)  # NumPy's operator: its promotion, deferral and fallbacks
    bare = name.strip("_")
    ufunc = _OPERATOR_UFUNCS.get(bare[1:] if bare.startswith("r") else bare)
    reflected = bare.startswith("r") and ufunc is not None
    elementwise = "matmul" not in name

    def op(self: Array, other: Any) -> Any:
        if isinstance(other, Tracer):
            return NotImplemented  # the tracer's reflected operator handles it
        if type(other) is Array:
            other = other.view(_nd)
        mine = self.view(_nd)
        if _flags.rank_promotion != "allow" and elementwise:  # config.numpy_rank_promotion
            _debug.check_rank_promotion(name, (mine.shape, np.shape(other)), 3)
        if _promotion.maybe_strict:  # config.numpy_dtype_promotion, the user's calls
            dtypes.check_operand_promotion(name, (mine, other), ufunc, dtypes.from_user(1))
        r = None
        if ufunc is not None:
            r = _pooled(ufunc, other, mine) if reflected else _pooled(ufunc, mine, other)
        if r is None:
            r = base(mine, other)
        if _flags.check:  # config.debug_nans / debug_infs
            _debug.check_values(f"Array.{name}", (self, other), (r,), kind="Array operation")
        return _wrap(r)

    op.__name__ = op.__qualname__ = name
    return op


for _name in (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
):
    setattr(Array, f"__{_name}__", _binary(f"__{_name}__"))
    setattr(Array, f"__r{_name}__", _binary(f"__r{_name}__"))
    # In-place operators rebind the name to a new Array (``x += 1``), as in JAX.
    setattr(Array, f"__i{_name}__", _binary(f"__{_name}__"))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Array, f"__{_name}__", _binary(f"__{_name}__"))
Array.__hash__ = None  # type: ignore[assignment]


def _divmod(self: Array, other: Any) -> Any:
    if isinstance(other, Tracer):
        return NotImplemented
    q, r = np.divmod(self.view(_nd), _plain(other))
    return _wrap(q), _wrap(r)


Array.__divmod__ = _divmod  # type: ignore[method-assign,assignment]


def _unary(ufunc: np.ufunc) -> Any:
    def op(self: Array) -> Any:
        r = ufunc(self.view(_nd))
        if _flags.check:  # config.debug_nans / debug_infs
            _debug.check_values(f"Array {ufunc.__name__}", (self,), (r,), kind="Array operation")
        return _wrap(r)

    return op


for _name, _uf in {
    "neg": np.negative,
    "pos": np.positive,
    "abs": np.absolute,
    "invert": np.invert,
}.items():
    setattr(Array, f"__{_name}__", _unary(_uf))


def _method(name: str, base: Any = None) -> Any:
    base = getattr(_nd, name) if base is None else base

    def m(self: Array, *args: Any, **kwargs: Any) -> Any:
        r = base(self.view(_nd), *_plain_args(args), **_plain_kwargs(kwargs))
        if _flags.check:  # config.debug_nans / debug_infs
            _debug.check_values(
                f"Array.{name}", (self,), r if type(r) is tuple else (r,), kind="Array operation"
            )
        if type(r) is tuple:
            return tuple(_wrap(e) for e in r)
        return _wrap(r)

    m.__name__ = m.__qualname__ = name
    m.__doc__ = getattr(_nd, name).__doc__
    return m


_nd_astype = _nd.astype


def _astype_base(x: np.ndarray, dtype: Any, *args: Any, **kwargs: Any) -> Any:
    # JAX's conversions (dtypes.convert: floats to integers saturate, NaN gives 0;
    # complex to bool is x != 0, as NumPy) where they differ from NumPy's
    dt = np.dtype(dtype)
    if x.dtype.kind in "fc" and dt.kind in "iu" and not args and set(kwargs) <= {"copy"}:
        out = dtypes.convert(x, dt)
        return out.copy() if out is x else out
    return _nd_astype(x, dtype, *args, **kwargs)


def _argsort_base(
    x: np.ndarray,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    *,
    stable: Any = None,
    descending: bool = False,
) -> Any:
    # functrace.numpy.argsort's order (and JAX's): stable whatever the kind, and
    # JAX's descending order (ties in their original order)
    if order is not None or stable not in (None, True, False) or descending not in (True, False):
        return _nd.argsort(x, axis, kind, order, stable=stable)  # NumPy's own errors
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not descending:
        return _nd.argsort(x, axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.flip(x, axis).argsort(axis, kind="stable"), axis)


for _name in (
    "all",
    "any",
    "argmax",
    "argmin",
    "clip",
    "conj",
    "conjugate",
    "cumprod",
    "cumsum",
    "diagonal",
    "dot",
    "flatten",
    "max",
    "mean",
    "min",
    "nonzero",
    "prod",
    "ravel",
    "repeat",
    "reshape",
    "round",
    "squeeze",
    "std",
    "sum",
    "swapaxes",
    "take",
    "trace",
    "transpose",
    "var",
):
    setattr(Array, _name, _method(_name))
Array.argsort = _method("argsort", _argsort_base)  # type: ignore[method-assign]
Array.argsort.__doc__ = """Indices that sort the Array along ``axis`` (``ndarray.argsort``'s
arguments and JAX's ``stable``/``descending``): always a stable sort, as
``functrace.numpy.argsort`` and JAX's; ``descending=True`` keeps ties in their
original order.

>>> import functrace.numpy as fnp
>>> fnp.array([2.0, 1.0, 2.0]).argsort(descending=True)
Array([0, 2, 1])
"""
Array.astype = _method("astype", _astype_base)  # type: ignore[method-assign]
Array.astype.__doc__ = """The Array converted to ``dtype`` (``ndarray.astype``'s arguments), with
JAX's conversions where they differ from NumPy's: floats to integers saturate at the
integer's range and NaN gives 0.

>>> import functrace.numpy as fnp
>>> fnp.array([1.7, -2.5, 1e20]).astype(fnp.int8)
Array([  1,  -2, 127], dtype=int8)
"""


def _view_property(name: str) -> Any:
    def get(self: Array) -> Any:
        return _wrap(getattr(self.view(_nd), name))

    return get


for _name in ("T", "real", "imag", "mT"):
    if hasattr(_nd, _name):
        setattr(Array, _name, property(_view_property(_name)))
