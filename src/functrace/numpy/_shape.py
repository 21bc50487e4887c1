"""Shape manipulation of functrace.numpy: reshaping, transposing, joining, splitting,
tiling, flipping and rolling.

Plain NumPy inputs go straight to NumPy. Traced inputs become lax ``reshape``,
``transpose``, ``broadcast_in_dim``, ``concatenate``, ``slice``, ``rev``,
``gather`` and ``dynamic_slice`` equations with static shapes.

Decisions:

* ``repeat`` with an array of repeats needs the repeats concretely (the output
  shape depends on them): a concrete tracer is fine, an abstract one (under jit)
  raises ``ConcretizationError``.
* ``roll`` takes traced shifts (a ``dynamic_slice`` of the array joined to itself);
  Python-int shifts become static slices.
* ``flatten`` is the method ``x.flatten()`` (NumPy has no ``flatten`` function).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import Array, to_array
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    dtype_arg,
)
from functrace.numpy._reductions import normalize_axes, normalize_axis


def _contains_tracer(x: Any) -> bool:
    t = type(x)
    if t is np.ndarray:  # the common case first: it is cheap to rule out
        return False
    if isinstance(x, Tracer):
        return True
    if t is list or t is tuple or isinstance(x, (list, tuple)):
        for e in x:
            if type(e) is not np.ndarray and _contains_tracer(e):
                return True
    return False


def _plain(x: Any) -> bool:
    """True when ``x`` (an array or a sequence of them) can go straight to NumPy."""
    return not core.dynamic_trace_active() and not _contains_tracer(x)


def _shape_tuple(fname: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if _contains_tracer(shape):
        if isinstance(shape, Tracer) and shape.ndim == 0:
            return (concrete_int(fname, shape, "sizes"),)
        return tuple(int(d) for d in concrete_array(fname, fnp_array(shape), "sizes").reshape(-1))
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{fname}: expected a shape (an int or a tuple of ints), got "
            f"{shape!r}. Pass e.g. (2, 3)."
        ) from None


def fnp_array(x: Any) -> Any:
    return array(x, copy=False)


def concrete_int(fname: str, x: Any, what: str) -> int:
    """A Python int from ``x``, which may be a concrete tracer but not an abstract one."""
    return int(concrete_array(fname, x, what))


def concrete_array(fname: str, x: Any, what: str) -> np.ndarray:
    """The NumPy value of ``x``; a ConcretizationError if it is only known abstractly."""
    v = core.concrete_or_none(x)
    if v is None:
        raise ConcretizationError(
            f"{fname}: expected concrete {what}, got an abstract tracer "
            f"{x.aval.str_short()}. The output shape depends on it, so it must be known "
            f"while tracing: pass a NumPy value, or mark the argument static (static_argnums)."
        )
    return v


# ---------------------------------------------------------------------------
# array, reshape, ravel
# ---------------------------------------------------------------------------


def array(obj: Any, dtype: Any = None, copy: bool = True) -> Any:
    """``numpy.array`` that also accepts (nested) lists of traced values.

    On concrete input the result is an immutable :class:`functrace.Array` (as JAX's
    ``jnp.array``), so ``.at[...]`` works on it; ``asarray`` does not copy an input that
    already is an ``Array``, and copies a NumPy array once (so that writes to it do not
    show through).

    >>> import functrace.numpy as fnp
    >>> fnp.array([1.0, 2.0], dtype=fnp.float32)
    Array([1., 2.], dtype=float32)
    """
    out = _array_any(obj, dtype, copy)
    return out if isinstance(out, Tracer) else to_array(out)


def asarray(obj: Any, dtype: Any = None, copy: bool | None = None) -> Any:
    """``numpy.asarray`` that also accepts (nested) lists of traced values; see
    :func:`array`. An ``Array`` of the requested dtype is returned as it is."""
    if type(obj) is Array and (dtype is None or np.dtype(dtype) == obj.dtype) and not copy:
        return obj
    return array(obj, dtype, copy=True)


def _array_any(obj: Any, dtype: Any = None, copy: bool = True) -> Any:
    """``array`` with NumPy's result types (internal use)."""
    dtype = dtype_arg(dtype)
    if not _contains_tracer(obj):
        return np.array(obj, dtype=dtype, copy=copy) if copy else np.asarray(obj, dtype)
    if isinstance(obj, Tracer):
        return obj if dtype is None else cast(obj, dtype)
    parts = [_array_any(e, copy=False) for e in obj]
    avals = [core.get_aval(p) for p in parts]
    shapes = {a.shape for a in avals}
    if len(shapes) != 1:
        raise ValueError(
            f"array: expected equally shaped elements, got shapes {sorted(shapes)}. "
            f"Make the nested lists rectangular."
        )
    (shape,) = shapes
    dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])
    dt = dt if dtype is None else dtype
    rows = [ls.reshape(cast(p, dt), (1, *shape)) for p in parts]
    return ls.concatenate(rows, 0) if len(rows) > 1 else rows[0]


def reshape(a: Any, shape: Any, /, order: str = "C") -> Any:
    """``numpy.reshape`` (row-major; one -1 allowed).

    >>> import functrace.numpy as fnp
    >>> fnp.reshape(fnp.arange(6), (2, -1)).shape
    (2, 3)
    """
    if order != "C":
        raise NotImplementedError(
            f"reshape: expected order='C', got {order!r}. Only row-major "
            f"order is supported; transpose first for 'F' order."
        )
    if _plain(a):
        return np.reshape(a, shape)
    a = asarray_or_tracer(a, "reshape")
    shape = _shape_tuple("reshape", shape)
    size = core.get_aval(a).size
    if shape.count(-1) > 1:
        raise ValueError(
            f"reshape: expected at most one -1, got {shape}. Give every other dimension explicitly."
        )
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(
                f"reshape: expected a shape whose known sizes divide {size}, got "
                f"{shape}. Pick sizes with {size} elements in total."
            )
        shape = tuple(size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(
            f"reshape: expected a shape with {size} elements, got {shape}. Pick "
            f"sizes whose product is {size}, or use -1 for one of them."
        )
    return ls.reshape(a, shape)


def ravel(a: Any, order: Any = "C") -> Any:
    """The elements of ``a`` as a 1-d array (row-major).

    >>> import functrace.numpy as fnp
    >>> fnp.ravel([[1, 2], [3, 4]])
    array([1, 2, 3, 4])
    """
    if _plain(a):
        return np.ravel(a, order=order)
    return reshape(a, (-1,), order=order)


def flatten(a: Any, order: Any = "C") -> Any:
    """``x.flatten()``: a 1-d copy (the same as ``ravel`` for immutable arrays)."""
    if _plain(a):
        return np.asarray(a).flatten(order=order)
    return reshape(a, (-1,), order=order)


def shape(a: Any) -> tuple[int, ...]:
    """The shape of an array, a tracer or a nested list."""
    return core.get_aval(a).shape if isinstance(a, Tracer) else np.shape(a)


def ndim(a: Any) -> int:
    """The number of dimensions of an array, a tracer or a nested list."""
    return core.get_aval(a).ndim if isinstance(a, Tracer) else np.ndim(a)


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements (along ``axis`` if given)."""
    if not isinstance(a, Tracer):
        return np.size(a, axis)
    s = core.get_aval(a).shape
    return core.get_aval(a).size if axis is None else s[normalize_axis("size", axis, len(s))]


# ---------------------------------------------------------------------------
# transpose, swapaxes, moveaxis, squeeze, expand_dims
# ---------------------------------------------------------------------------


def transpose(a: Any, axes: Any = None) -> Any:
    """Permute the axes (reverse them if ``axes`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.transpose(fnp.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    if _plain(a):
        return np.transpose(a, axes)
    a = asarray_or_tracer(a, "transpose")
    nd = core.get_aval(a).ndim
    if axes is None:
        return ls.transpose(a, tuple(range(nd - 1, -1, -1)))
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    perm = tuple(normalize_axis("transpose", ax, nd) for ax in axes)
    if len(perm) != nd or len(set(perm)) != nd:
        raise ValueError(
            f"transpose: expected a permutation of the {nd} axes, got {axes}. "
            f"List every axis exactly once."
        )
    return ls.transpose(a, perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes.

    >>> import functrace.numpy as fnp
    >>> fnp.swapaxes(fnp.zeros((2, 3, 4)), 0, -1).shape
    (4, 3, 2)
    """
    if _plain(a):
        return np.swapaxes(a, axis1, axis2)
    a = asarray_or_tracer(a, "swapaxes")
    nd = core.get_aval(a).ndim
    i, j = normalize_axis("swapaxes", axis1, nd), normalize_axis("swapaxes", axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = j, i
    return ls.transpose(a, tuple(perm))


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes ``source`` to positions ``destination``; the others keep their order.

    >>> import functrace.numpy as fnp
    >>> fnp.moveaxis(fnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    if _plain(a):
        return np.moveaxis(a, source, destination)
    a = asarray_or_tracer(a, "moveaxis")
    nd = core.get_aval(a).ndim
    src = [normalize_axis("moveaxis", s, nd) for s in np.atleast_1d(source).tolist()]
    dst = [normalize_axis("moveaxis", d, nd) for d in np.atleast_1d(destination).tolist()]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(
            f"moveaxis: expected as many distinct source as destination axes, got "
            f"source={source} and destination={destination}. Pair them one to one."
        )
    perm: list[int | None] = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    return ls.transpose(a, tuple(next(rest) if p is None else p for p in perm))


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` so that it sits before the axis now at ``start`` (NumPy's older
    form of ``moveaxis``; ``start`` may be ``ndim`` to move it last).

    >>> import functrace.numpy as fnp
    >>> fnp.rollaxis(fnp.zeros((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
    if _plain(a):
        return np.rollaxis(a, axis, start)
    a = asarray_or_tracer(a, "rollaxis")
    nd = core.get_aval(a).ndim
    ax = normalize_axis("rollaxis", axis, nd)
    if not isinstance(start, (int, np.integer)):
        raise TypeError(f"rollaxis: expected an integer start, got {start!r}. Pass a Python int.")
    st = int(start) + nd if start < 0 else int(start)
    if not 0 <= st <= nd:
        raise np.exceptions.AxisError(
            f"rollaxis: expected start in [{-nd}, {nd}] for an array of {nd} dimensions, "
            f"got {start}."
        )
    if ax < st:
        st -= 1  # counted before the axis was taken out
    if ax == st:
        return a
    perm = [d for d in range(nd) if d != ax]
    perm.insert(st, ax)
    return ls.transpose(a, tuple(perm))


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove size-1 axes (all of them if ``axis`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.squeeze(fnp.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    if _plain(a):
        return np.squeeze(a, axis)
    a = asarray_or_tracer(a, "squeeze")
    shp = core.get_aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, len(shp))
        for i in axes:
            if shp[i] != 1:
                raise ValueError(
                    f"squeeze: expected axes of size 1, got axis {i} of size "
                    f"{shp[i]} in shape {shp}. Only size-1 axes can be removed; "
                    f"use reshape or indexing otherwise."
                )
    return ls.reshape(a, tuple(d for i, d in enumerate(shp) if i not in axes))


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert size-1 axes at positions ``axis`` (int or tuple) of the result.

    >>> import functrace.numpy as fnp
    >>> fnp.expand_dims(fnp.zeros(3), (0, -1)).shape
    (1, 3, 1)
    """
    if _plain(a):
        return np.expand_dims(a, axis)
    a = asarray_or_tracer(a, "expand_dims")
    shp = core.get_aval(a).shape
    n_new = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    axes = normalize_axes("expand_dims", axis, len(shp) + n_new)
    rest = iter(shp)
    return ls.reshape(a, tuple(1 if i in axes else next(rest) for i in range(len(shp) + n_new)))


def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes if None).

    >>> import functrace.numpy as fnp
    >>> fnp.flip([1, 2, 3])
    array([3, 2, 1])
    """
    if _plain(m):
        return np.flip(m, axis)
    m = asarray_or_tracer(m, "flip")
    return ls.rev(m, normalize_axes("flip", axis, core.get_aval(m).ndim))


def flipud(m: Any) -> Any:
    """Reverse the order of rows (axis 0; the array needs at least one axis).

    >>> import functrace.numpy as fnp
    >>> fnp.flipud([[1, 2], [3, 4]])
    array([[3, 4],
           [1, 2]])
    """
    if _plain(m):
        return np.flipud(m)
    m = asarray_or_tracer(m, "flipud")
    if core.get_aval(m).ndim < 1:
        raise ValueError("flipud: expected an array with at least 1 dimension, got a 0-d array.")
    return ls.rev(m, (0,))


def fliplr(m: Any) -> Any:
    """Reverse the order of columns (axis 1; the array needs at least two axes).

    >>> import functrace.numpy as fnp
    >>> fnp.fliplr([[1, 2], [3, 4]])
    array([[2, 1],
           [4, 3]])
    """
    if _plain(m):
        return np.fliplr(m)
    m = asarray_or_tracer(m, "fliplr")
    nd = core.get_aval(m).ndim
    if nd < 2:
        raise ValueError(
            f"fliplr: expected an array with at least 2 dimensions, got {nd}. "
            f"Use flip for 1-d arrays."
        )
    return ls.rev(m, (1,))


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second (counterclockwise for the default axes).

    >>> import functrace.numpy as fnp
    >>> fnp.rot90([[1, 2], [3, 4]])
    array([[2, 4],
           [1, 3]])
    """
    if _plain(m):
        return np.rot90(m, k, axes)
    m = asarray_or_tracer(m, "rot90")
    nd = core.get_aval(m).ndim
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: expected two axes, got {axes}. Pass axes=(i, j).")
    if nd < 2:
        raise ValueError(f"rot90: expected an array with at least 2 dimensions, got {nd}.")
    a0, a1 = (normalize_axis("rot90", ax, nd) for ax in axes)
    if a0 == a1:
        raise ValueError(f"rot90: expected two different axes, got {axes}.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return ls.rev(m, tuple(sorted((a0, a1))))
    perm = list(range(nd))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return ls.transpose(ls.rev(m, (a1,)), tuple(perm))
    return ls.rev(ls.transpose(m, tuple(perm)), (a1,))


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------


def broadcast_to(array: Any, shape: Any) -> Any:
    """Broadcast ``array`` to ``shape`` (NumPy's rules: align trailing axes).

    >>> import functrace.numpy as fnp
    >>> fnp.broadcast_to([1, 2], (3, 2)).shape
    (3, 2)
    """
    if _plain(array):
        return np.broadcast_to(array, shape)
    x = asarray_or_tracer(array, "broadcast_to")
    shp = _shape_tuple("broadcast_to", shape)
    in_shape = core.get_aval(x).shape
    nd = len(shp)
    if len(in_shape) > nd or builtins.any(
        d not in (1, t) for d, t in zip(in_shape, shp[nd - len(in_shape) :])
    ):
        raise ValueError(
            f"broadcast_to: expected a shape that {in_shape} broadcasts to, got "
            f"{shp}. Each trailing axis must match or have size 1."
        )
    return broadcast_to_shape(x, shp)


def broadcast_arrays(*args: Any) -> tuple[Any, ...]:
    """Broadcast all arguments against each other (a tuple, as in NumPy 2).

    >>> import functrace.numpy as fnp
    >>> [x.shape for x in fnp.broadcast_arrays(fnp.zeros((2, 1)), fnp.zeros(3))]
    [(2, 3), (2, 3)]
    """
    if _plain(args):
        return np.broadcast_arrays(*args)
    xs = [asarray_or_tracer(x, "broadcast_arrays") for x in args]
    shp = broadcast_shapes("broadcast_arrays", *[core.get_aval(x).shape for x in xs])
    return tuple(broadcast_to_shape(x, shp) for x in xs)


def atleast_1d(*arys: Any) -> Any:
    """Each input with at least one axis (0-d becomes shape (1,))."""
    return _atleast("atleast_1d", np.atleast_1d, lambda s: (1,) * (len(s) < 1) + s, arys)


def atleast_2d(*arys: Any) -> Any:
    """Each input with at least two axes (size-1 axes added in front)."""
    return _atleast(
        "atleast_2d", np.atleast_2d, lambda s: (1,) * builtins.max(2 - len(s), 0) + s, arys
    )


def _shape_3d(s: tuple[int, ...]) -> tuple[int, ...]:
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return (*s, 1)
    return s


def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three axes ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast("atleast_3d", np.atleast_3d, _shape_3d, arys)


def _atleast(fname: str, np_fn: Any, new_shape: Any, arys: tuple[Any, ...]) -> Any:
    if _plain(arys):
        return np_fn(*arys)
    outs = []
    for x in arys:
        x = asarray_or_tracer(x, fname)
        outs.append(ls.reshape(x, new_shape(core.get_aval(x).shape)))
    return outs[0] if len(outs) == 1 else tuple(outs)


# ---------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------


def _join_dtype(avals: Sequence[core.ShapedArray], dtype: Any) -> tuple[np.dtype, bool]:
    if dtype is not None:
        return np.dtype(dtype), False
    return dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])


def concatenate(
    arrays: Sequence[Any],
    axis: Any = 0,
    out: Any = None,
    dtype: Any = None,
    casting: Any = "same_kind",
) -> Any:
    """Join arrays along an existing ``axis`` (flattened first if ``axis`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.concatenate([fnp.zeros((1, 2)), fnp.ones((2, 2))]).shape
    (3, 2)
    """
    if _plain(arrays):
        return np.concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)
    if out is not None:
        raise TypeError(
            "concatenate: expected out=None, got an output array. functrace.numpy "
            "never writes in place: use the returned array."
        )
    xs = [asarray_or_tracer(x, "concatenate") for x in arrays]
    if not xs:
        raise ValueError(
            "concatenate: expected at least one array, got none. Pass a non-empty sequence."
        )
    if axis is None:
        xs = [ls.reshape(x, (core.get_aval(x).size,)) for x in xs]
        axis = 0
    avals = [core.get_aval(x) for x in xs]
    nd = avals[0].ndim
    shapes = ", ".join(str(a.shape) for a in avals)
    if nd == 0:
        raise ValueError(
            f"concatenate: expected arrays with at least one axis, got shapes "
            f"{shapes}. Use stack to join 0-d arrays."
        )
    ax = normalize_axis("concatenate", axis, nd)
    for a in avals:
        if a.ndim != nd or builtins.any(
            d != e for i, (d, e) in enumerate(zip(a.shape, avals[0].shape)) if i != ax
        ):
            raise ValueError(
                f"concatenate: expected shapes equal except along axis {axis}, "
                f"got {shapes}. Reshape or broadcast the arrays first."
            )
    dt, weak = _join_dtype(avals, dtype)
    xs = [cast(x, dt, weak) for x in xs]
    return xs[0] if len(xs) == 1 else ls.concatenate(xs, ax)


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
    """Join equally shaped arrays along a new ``axis``.

    >>> import functrace.numpy as fnp
    >>> fnp.stack([fnp.zeros(3), fnp.ones(3)], axis=1).shape
    (3, 2)
    """
    if _plain(arrays):
        return np.stack(arrays, axis=axis, out=out, dtype=dtype)
    xs = [asarray_or_tracer(x, "stack") for x in arrays]
    if not xs:
        raise ValueError("stack: expected at least one array, got none. Pass a non-empty sequence.")
    shapes = {core.get_aval(x).shape for x in xs}
    if len(shapes) != 1:
        raise ValueError(
            f"stack: expected arrays of one shape, got shapes {sorted(shapes)}. "
            f"Broadcast or reshape them to a common shape first."
        )
    (shp,) = shapes
    ax = normalize_axis("stack", axis, len(shp) + 1)
    new = shp[:ax] + (1,) + shp[ax:]
    return concatenate([ls.reshape(x, new) for x in xs], ax, out=out, dtype=dtype)


def hstack(tup: Sequence[Any], *, dtype: Any = None) -> Any:
    """Join along the second axis (the first for 1-d arrays)."""
    if _plain(tup):
        return np.hstack(tup, dtype=dtype)
    xs = [atleast_1d(x) for x in tup]
    return concatenate(xs, 0 if xs and core.get_aval(xs[0]).ndim == 1 else 1, dtype=dtype)


def vstack(tup: Sequence[Any], *, dtype: Any = None) -> Any:
    """Join along the first axis, after making 1-d arrays rows (shape (1, n))."""
    if _plain(tup):
        return np.vstack(tup, dtype=dtype)
    return concatenate([atleast_2d(x) for x in tup], 0, dtype=dtype)


def dstack(tup: Sequence[Any]) -> Any:
    """Join along the third axis, after making every input at least 3-d."""
    if _plain(tup):
        return np.dstack(tup)
    return concatenate([atleast_3d(x) for x in tup], 2)


def column_stack(tup: Sequence[Any]) -> Any:
    """Join 1-d arrays as columns (2-d arrays are joined as they are)."""
    if _plain(tup):
        return np.column_stack(tup)
    xs = []
    for x in tup:
        x = asarray_or_tracer(x, "column_stack")
        s = core.get_aval(x).shape
        xs.append(ls.reshape(x, (s[0] if s else 1, 1)) if len(s) < 2 else x)
    return concatenate(xs, 1)


# ---------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------


def _slice_along(x: Any, start: int, stop: int, axis: int) -> Any:
    shp = core.get_aval(x).shape
    starts = tuple(start if i == axis else 0 for i in range(len(shp)))
    limits = tuple(stop if i == axis else d for i, d in enumerate(shp))
    return ls.slice(x, starts, limits)


def _split(fname: str, ary: Any, indices_or_sections: Any, axis: int, equal: bool) -> list[Any]:
    x = asarray_or_tracer(ary, fname)
    shp = core.get_aval(x).shape
    ax = normalize_axis(fname, axis, len(shp))
    n = shp[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(
                f"{fname}: expected a positive number of sections, got {k}. "
                f"Pass sections >= 1 or a list of split indices."
            )
        if equal and n % k:
            raise ValueError(
                f"{fname}: expected a number of sections that divides the axis "
                f"size {n}, got {k}. Use array_split for unequal parts."
            )
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        idx = [int(i) for i in np.asarray(indices_or_sections).reshape(-1).tolist()]
        bounds = [0, *idx, n]
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        start, stop, _ = builtins.slice(lo, hi).indices(n)
        outs.append(_slice_along(x, start, builtins.max(start, stop), ax))
    return outs


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections (an int) or at the given indices, along ``axis``.

    >>> import functrace.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.arange(5), [2, 3])]
    [[0, 1], [2], [3, 4]]
    """
    if _plain(ary):
        return np.split(ary, indices_or_sections, axis)
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``split`` that allows sections of unequal size (the first ones one larger)."""
    if _plain(ary):
        return np.array_split(ary, indices_or_sections, axis)
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 1 (axis 0 for 1-d arrays)."""
    if _plain(ary):
        return np.hsplit(ary, indices_or_sections)
    x = asarray_or_tracer(ary, "hsplit")
    nd = core.get_aval(x).ndim
    if nd == 0:
        raise ValueError("hsplit: expected an array with at least 1 dimension, got a 0-d array.")
    return _split("hsplit", x, indices_or_sections, 1 if nd > 1 else 0, equal=True)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 0 (the array needs at least two axes)."""
    return _split_min_dims("vsplit", np.vsplit, ary, indices_or_sections, 0, 2)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 2 (the array needs at least three axes)."""
    return _split_min_dims("dsplit", np.dsplit, ary, indices_or_sections, 2, 3)


def _split_min_dims(
    fname: str, np_fn: Any, ary: Any, ios: Any, axis: int, min_dims: int
) -> list[Any]:
    if _plain(ary):
        return np_fn(ary, ios)
    x = asarray_or_tracer(ary, fname)
    nd = core.get_aval(x).ndim
    if nd < min_dims:
        raise ValueError(
            f"{fname}: expected an array with at least {min_dims} dimensions, got {nd}."
        )
    return _split(fname, x, ios, axis, equal=True)


def append(arr: Any, values: Any, axis: Any = None) -> Any:
    """``values`` joined to the end of ``arr`` (both flattened if ``axis`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.append([1, 2], [[3], [4]])
    array([1, 2, 3, 4])
    """
    if _plain([arr, values]):
        return np.append(arr, values, axis)
    arr, values = asarray_or_tracer(arr, "append"), asarray_or_tracer(values, "append")
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ---------------------------------------------------------------------------
# tile, repeat, roll
# ---------------------------------------------------------------------------


def tile(A: Any, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis.

    >>> import functrace.numpy as fnp
    >>> fnp.tile([1, 2], (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    if _plain(A):
        return np.tile(A, reps)
    x = asarray_or_tracer(A, "tile")
    reps = _shape_tuple("tile", reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: expected non-negative repetitions, got {reps}.")
    shp = core.get_aval(x).shape
    nd = builtins.max(len(shp), len(reps))
    shp = (1,) * (nd - len(shp)) + shp
    reps = (1,) * (nd - len(reps)) + reps
    x = ls.reshape(x, shp)
    # (r0, d0, r1, d1, ...) by broadcasting, then merge each (ri, di) pair.
    pairs = tuple(v for r, d in zip(reps, shp) for v in (r, d))
    b = ls.broadcast_in_dim(x, pairs, tuple(range(1, 2 * nd, 2)))
    return ls.reshape(b, tuple(r * d for r, d in zip(reps, shp)))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array if None).

    ``repeats`` is an int or an array with one count per element; array counts must be
    known while tracing (not abstract under jit).

    >>> import functrace.numpy as fnp
    >>> fnp.repeat([1, 2], [1, 3])
    array([1, 2, 2, 2])
    """
    if _plain(a) and not isinstance(repeats, Tracer):
        return np.repeat(a, repeats, axis)
    x = asarray_or_tracer(a, "repeat")
    if axis is None:
        x = ls.reshape(x, (core.get_aval(x).size,))
        axis = 0
    shp = core.get_aval(x).shape
    ax = normalize_axis("repeat", axis, len(shp))
    n = shp[ax]
    if isinstance(repeats, (int, np.integer)):
        reps = np.asarray(int(repeats))
    else:
        reps = concrete_array("repeat", repeats, "repeats")
    if reps.dtype.kind not in "iub" or bool((reps < 0).any()):
        raise ValueError(
            f"repeat: expected non-negative integer repeats, got {reps.tolist()}. Pass counts >= 0."
        )
    if reps.ndim > 1 or reps.size not in (1, n):
        raise ValueError(
            f"repeat: expected one count per element along axis {axis} ({n}) or "
            f"a single count, got repeats of shape {reps.shape}."
        )
    if reps.size == 1:
        r = int(reps.reshape(-1)[0])
        new = shp[: ax + 1] + (r,) + shp[ax + 1 :]
        dims = tuple(i if i <= ax else i + 1 for i in range(len(shp)))
        b = ls.broadcast_in_dim(x, new, dims)
        return ls.reshape(b, shp[:ax] + (n * r,) + shp[ax + 1 :])
    from functrace.lax.indexing import index_take

    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    taken = index_take(x, idx, ax)  # the taken axis comes first: move it back
    return moveaxis(taken, 0, ax) if ax else taken


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift elements cyclically by ``shift`` along ``axis`` (flattened if None).

    >>> import functrace.numpy as fnp
    >>> fnp.roll([1, 2, 3, 4], 1)
    array([4, 1, 2, 3])
    """
    if _plain(a) and not isinstance(shift, Tracer):
        return np.roll(a, shift, axis)
    x = asarray_or_tracer(a, "roll")
    shp = core.get_aval(x).shape
    if axis is None:
        flat = ls.reshape(x, (core.get_aval(x).size,))
        return ls.reshape(roll(flat, shift, 0), shp)
    axes = [normalize_axis("roll", ax, len(shp)) for ax in np.atleast_1d(axis).tolist()]
    if isinstance(shift, Tracer):
        s_shape = core.get_aval(shift).shape
        if len(s_shape) > 1 or (s_shape and s_shape[0] not in (1, len(axes))):
            raise ValueError(
                f"roll: expected a shift per axis or one shift, got shift shape "
                f"{s_shape} for axes {axis}."
            )
        if s_shape:
            shifts = [
                ls.reshape(
                    _slice_along(
                        shift, i if s_shape[0] > 1 else 0, (i if s_shape[0] > 1 else 0) + 1, 0
                    ),
                    (),
                )
                for i in range(len(axes))
            ]
        else:
            shifts = [shift] * len(axes)
    else:
        sh = np.atleast_1d(shift).tolist()
        if len(sh) not in (1, len(axes)) and len(axes) != 1:
            raise ValueError(
                f"roll: expected a shift per axis or one shift, got shift {shift} for axes {axis}."
            )
        if len(axes) == 1 and len(sh) > 1:
            axes = axes * len(sh)
        shifts = sh * len(axes) if len(sh) == 1 else sh
    for ax, s in zip(axes, shifts):
        x = _roll_axis(x, s, ax)
    return x


def _roll_axis(x: Any, s: Any, ax: int) -> Any:
    n = core.get_aval(x).shape[ax]
    if n == 0:
        return x
    if not isinstance(s, Tracer):
        k = int(s) % n
        if k == 0:
            return x
        return ls.concatenate([_slice_along(x, n - k, n, ax), _slice_along(x, 0, n - k, ax)], ax)
    # out[i] = x[(i - s) mod n] = concat(x, x)[start + i] with start = (-s) mod n.
    from functrace.lax.indexing import dynamic_slice_in_dim
    from functrace.numpy._math import negative, remainder

    start = remainder(negative(s), n)
    return dynamic_slice_in_dim(ls.concatenate([x, x], ax), start, n, ax)


__all__ = [
    "append",
    "array",
    "array_split",
    "asarray",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_to",
    "column_stack",
    "concatenate",
    "dsplit",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "moveaxis",
    "ndim",
    "ravel",
    "repeat",
    "reshape",
    "rollaxis",
    "roll",
    "rot90",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "vsplit",
    "vstack",
]
