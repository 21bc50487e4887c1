"""Shape manipulation of functrace.numpy: reshaping, transposing, flipping,
broadcasting, tiling, repeating and rolling (joining and splitting are in ``_joining``).

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
import operator
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax import base as lb
from functrace.lax import elementwise as lx
from functrace.lax import indexing as li
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    concrete_array,
    normalize_axes,
    normalize_axis,
    shape_tuple,
    slice_along,
)
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._math import negative, remainder


def _check_order(fname: str, order: Any) -> None:
    if order not in ("C", "F"):
        raise NotImplementedError(
            f"{fname}: expected order 'C' or 'F' on a traced array, got {order!r} "
            f"('A' and 'K' depend on the memory layout, which tracers do not have)."
        )


def _np_reshape(
    a: Any, shape: Any, /, order: str = "C", *, copy: Any = None, out_sharding: Any = None
) -> Any:
    return np.reshape(a, shape, order=order)  # type: ignore[call-overload]


@numpy_path(_np_reshape)
def reshape(
    a: Any, shape: Any, /, order: str = "C", *, copy: Any = None, out_sharding: Any = None
) -> Any:
    """``numpy.reshape`` (one -1 allowed); ``order="F"`` reads and writes the elements
    with the first index changing fastest (on tracers: a reshape between two reversals
    of the axes).

    >>> import functrace.numpy as fnp
    >>> fnp.reshape(fnp.arange(6), (2, -1)).shape
    (2, 3)
    >>> fnp.reshape(fnp.asarray([1, 2, 3, 4, 5, 6]), (2, 3), order="F")
    Array([[1, 3, 5],
           [2, 4, 6]])
    """
    _check_order("reshape", order)
    a = asarray_or_tracer(a, "reshape")
    shape = shape_tuple("reshape", shape)
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
    if order == "F":
        nd = len(core.get_aval(a).shape)
        a = ls.reshape(lb.transpose(a, tuple(range(nd))[::-1]), shape[::-1])
        return lb.transpose(a, tuple(range(len(shape)))[::-1])
    return ls.reshape(a, shape)


@numpy_path(lambda a, order="C": np.ravel(a, order=order))
def ravel(a: Any, order: Any = "C") -> Any:
    """The elements of ``a`` as a 1-d array (row-major).

    >>> import functrace.numpy as fnp
    >>> fnp.ravel([[1, 2], [3, 4]])
    array([1, 2, 3, 4])
    """
    return reshape(a, (-1,), order=order)


@numpy_path(lambda a, order="C": np.asarray(a).flatten(order=order))
def flatten(a: Any, order: Any = "C") -> Any:
    """``x.flatten()``: a 1-d copy (the same as ``ravel`` for immutable arrays)."""
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


@numpy_path(lambda a, axes=None: np.transpose(a, axes))
def transpose(a: Any, axes: Any = None) -> Any:
    """Permute the axes (reverse them if ``axes`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.transpose(fnp.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
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


@numpy_path(lambda a, axis1, axis2: np.swapaxes(a, axis1, axis2))
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes.

    >>> import functrace.numpy as fnp
    >>> fnp.swapaxes(fnp.zeros((2, 3, 4)), 0, -1).shape
    (4, 3, 2)
    """
    a = asarray_or_tracer(a, "swapaxes")
    nd = core.get_aval(a).ndim
    i, j = normalize_axis("swapaxes", axis1, nd), normalize_axis("swapaxes", axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = j, i
    return ls.transpose(a, tuple(perm))


@numpy_path(lambda a, source, destination: np.moveaxis(a, source, destination))
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes ``source`` to positions ``destination``; the others keep their order.

    >>> import functrace.numpy as fnp
    >>> fnp.moveaxis(fnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
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


@numpy_path(lambda a, axis, start=0: np.rollaxis(a, axis, start))
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` so that it sits before the axis now at ``start`` (NumPy's older
    form of ``moveaxis``; ``start`` may be ``ndim`` to move it last).

    >>> import functrace.numpy as fnp
    >>> fnp.rollaxis(fnp.zeros((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
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


@numpy_path(lambda a, axis=None: np.squeeze(a, axis))
def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove size-1 axes (all of them if ``axis`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.squeeze(fnp.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
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


@numpy_path(lambda a, axis: np.expand_dims(a, axis))
def expand_dims(a: Any, axis: Any) -> Any:
    """Insert size-1 axes at positions ``axis`` (int or tuple) of the result.

    >>> import functrace.numpy as fnp
    >>> fnp.expand_dims(fnp.zeros(3), (0, -1)).shape
    (1, 3, 1)
    """
    a = asarray_or_tracer(a, "expand_dims")
    shp = core.get_aval(a).shape
    n_new = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    axes = normalize_axes("expand_dims", axis, len(shp) + n_new)
    rest = iter(shp)
    return ls.reshape(a, tuple(1 if i in axes else next(rest) for i in range(len(shp) + n_new)))


@numpy_path(lambda m, axis=None: np.flip(m, axis))
def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes if None).

    >>> import functrace.numpy as fnp
    >>> fnp.flip([1, 2, 3])
    array([3, 2, 1])
    """
    m = asarray_or_tracer(m, "flip")
    return ls.rev(m, normalize_axes("flip", axis, core.get_aval(m).ndim))


@numpy_path(lambda m: np.flipud(m))
def flipud(m: Any) -> Any:
    """Reverse the order of rows (axis 0; the array needs at least one axis).

    >>> import functrace.numpy as fnp
    >>> fnp.flipud([[1, 2], [3, 4]])
    array([[3, 4],
           [1, 2]])
    """
    m = asarray_or_tracer(m, "flipud")
    if core.get_aval(m).ndim < 1:
        raise ValueError("flipud: expected an array with at least 1 dimension, got a 0-d array.")
    return ls.rev(m, (0,))


@numpy_path(lambda m: np.fliplr(m))
def fliplr(m: Any) -> Any:
    """Reverse the order of columns (axis 1; the array needs at least two axes).

    >>> import functrace.numpy as fnp
    >>> fnp.fliplr([[1, 2], [3, 4]])
    array([[2, 1],
           [4, 3]])
    """
    m = asarray_or_tracer(m, "fliplr")
    nd = core.get_aval(m).ndim
    if nd < 2:
        raise ValueError(
            f"fliplr: expected an array with at least 2 dimensions, got {nd}. "
            f"Use flip for 1-d arrays."
        )
    return ls.rev(m, (1,))


@numpy_path(lambda m, k=1, axes=(0, 1): np.rot90(m, k, axes))
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second (counterclockwise for the default axes).

    >>> import functrace.numpy as fnp
    >>> fnp.rot90([[1, 2], [3, 4]])
    array([[2, 4],
           [1, 3]])
    """
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


@numpy_path(lambda array, shape: np.broadcast_to(array, shape))
def broadcast_to(array: Any, shape: Any) -> Any:
    """Broadcast ``array`` to ``shape`` (NumPy's rules: align trailing axes).

    >>> import functrace.numpy as fnp
    >>> fnp.broadcast_to([1, 2], (3, 2)).shape
    (3, 2)
    """
    x = asarray_or_tracer(array, "broadcast_to")
    shp = shape_tuple("broadcast_to", shape)
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


@numpy_path(lambda *args: np.broadcast_arrays(*args))
def broadcast_arrays(*args: Any) -> tuple[Any, ...]:
    """Broadcast all arguments against each other (a tuple, as in NumPy 2).

    >>> import functrace.numpy as fnp
    >>> [x.shape for x in fnp.broadcast_arrays(fnp.zeros((2, 1)), fnp.zeros(3))]
    [(2, 3), (2, 3)]
    """
    xs = [asarray_or_tracer(x, "broadcast_arrays") for x in args]
    shp = broadcast_shapes("broadcast_arrays", *[core.get_aval(x).shape for x in xs])
    return tuple(broadcast_to_shape(x, shp) for x in xs)


@numpy_path(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    """Each input with at least one axis (0-d becomes shape (1,))."""
    return _atleast("atleast_1d", lambda s: (1,) * (len(s) < 1) + s, arys)


@numpy_path(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    """Each input with at least two axes (size-1 axes added in front)."""
    return _atleast("atleast_2d", lambda s: (1,) * builtins.max(2 - len(s), 0) + s, arys)


def _shape_3d(s: tuple[int, ...]) -> tuple[int, ...]:
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return (*s, 1)
    return s


@numpy_path(np.atleast_3d)
def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three axes ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast("atleast_3d", _shape_3d, arys)


def _atleast(fname: str, new_shape: Any, arys: tuple[Any, ...]) -> Any:
    outs = []
    for x in arys:
        x = asarray_or_tracer(x, fname)
        outs.append(ls.reshape(x, new_shape(core.get_aval(x).shape)))
    return outs[0] if len(outs) == 1 else tuple(outs)


# ---------------------------------------------------------------------------
# tile, repeat, roll
# ---------------------------------------------------------------------------


@numpy_path(lambda A, reps: np.tile(A, reps))
def tile(A: Any, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis.

    >>> import functrace.numpy as fnp
    >>> fnp.tile([1, 2], (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    x = asarray_or_tracer(A, "tile")
    reps = shape_tuple("tile", reps)
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


def _np_repeat(
    a: Any,
    repeats: Any,
    axis: Any = None,
    *,
    total_repeat_length: Any = None,
    out_sharding: Any = None,
) -> Any:
    if total_repeat_length is None:
        return np.repeat(a, repeats, axis)
    x = np.asarray(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = normalize_axis("repeat", axis, x.ndim)
    return np.take(x, _repeat_positions(x.shape[ax], repeats, total_repeat_length), ax)


def _repeat_positions(n: int, repeats: Any, total: Any) -> Any:
    """The element each of the ``total`` output positions repeats (JAX's rule: past the
    counts' sum, the last element again; counts beyond ``total`` are cut off)."""
    length = int(operator.index(total))
    if length < 0 or (n == 0 and length):
        raise ValueError(
            f"repeat: expected total_repeat_length >= 0 (0 for an empty axis), got {total}."
        )
    last = builtins.max(n - 1, 0)
    if not isinstance(repeats, Tracer):
        ends = np.cumsum(np.broadcast_to(np.asarray(repeats), (n,)))
        return np.minimum(np.searchsorted(ends, np.arange(length), side="right"), last)
    # traced counts: mark where each element starts (starts past the end fall into an
    # extra slot), then the marks up to a position count the elements begun there
    i64 = np.dtype(np.int64)
    reps = lb.convert_element_type(repeats, i64)
    reps = ls.broadcast_in_dim(reps, (n,), tuple(range(len(core.get_aval(reps).shape))))
    starts = lx.sub(lr.cumsum(reps), reps)
    starts = lx.clamp(np.int64(0), starts, np.int64(length))
    marks = li.scatter_add(np.zeros(length + 1, i64), np.ones(n, i64), [starts], (0,))
    begun = ls.slice(lr.cumsum(marks), (0,), (length,))
    return lx.clamp(np.int64(0), lx.sub(begun, np.int64(1)), np.int64(last))


@numpy_path(_np_repeat)
def repeat(
    a: Any,
    repeats: Any,
    axis: Any = None,
    *,
    total_repeat_length: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array if None).

    ``repeats`` is an int or an array with one count per element. Without
    ``total_repeat_length`` the counts must be known while tracing (the output's
    length depends on them); with it, as in JAX, they may be traced (under ``jit``) and
    the output has that length: past the counts' sum the last element repeats, and
    counts beyond it are cut off. ``out_sharding`` is accepted and ignored (one
    device).

    >>> import functrace.numpy as fnp
    >>> fnp.repeat([1, 2], [1, 3])
    array([1, 2, 2, 2])
    >>> fnp.repeat([1, 2], [1, 1], total_repeat_length=4)
    array([1, 2, 2, 2])
    """
    x = asarray_or_tracer(a, "repeat")
    if axis is None:
        x = ls.reshape(x, (core.get_aval(x).size,))
        axis = 0
    shp = core.get_aval(x).shape
    ax = normalize_axis("repeat", axis, len(shp))
    n = shp[ax]
    if total_repeat_length is not None:
        idx = _repeat_positions(n, repeats, total_repeat_length)
        taken = li.index_take(x, idx, ax, "clip")  # (the positions are in range)
        return moveaxis(taken, 0, ax) if ax else taken
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
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    taken = li.index_take(x, idx, ax)  # the taken axis comes first: move it back
    return moveaxis(taken, 0, ax) if ax else taken


@numpy_path(lambda a, shift, axis=None: np.roll(a, shift, axis))
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift elements cyclically by ``shift`` along ``axis`` (flattened if None).

    >>> import functrace.numpy as fnp
    >>> fnp.roll([1, 2, 3, 4], 1)
    array([4, 1, 2, 3])
    """
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
                    slice_along(
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
        return ls.concatenate([slice_along(x, n - k, n, ax), slice_along(x, 0, n - k, ax)], ax)
    # out[i] = x[(i - s) mod n] = concat(x, x)[start + i] with start = (-s) mod n.
    start = remainder(negative(s), n)
    return li.dynamic_slice_in_dim(ls.concatenate([x, x], ax), start, n, ax)


__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_to",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
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
    "squeeze",
    "swapaxes",
    "tile",
    "transpose",
]
