"""Array manipulation of functrace.numpy: ``choose``, ``compress``, ``extract``,
``delete``, ``insert``, ``resize``, ``trim_zeros`` and ``block``. This module also
exports NumPy's in-place writers in functional form (``place``, ``put``,
``put_along_axis``, from ``_inplace``) and the function-application helpers
(``vectorize``, ``apply_along_axis``, ``apply_over_axes``, ``piecewise``, the window
functions and ``einsum_path``, from ``_apply``).

Plain NumPy inputs go straight to NumPy. Traced inputs become gathers (``take``),
``select_n``, concatenations and ``.at`` scatters, so every function differentiates,
batches and jits through the rules of those primitives.

Decisions:

* Indices whose values are known (NumPy values, tracers under ``grad``/``jvp``/``vjp``)
  are checked as NumPy checks them. Abstract ones (under ``jit``, batched under
  ``vmap``) cannot be: ``choose(mode="raise")`` clamps them into range, as ``take``
  does (JAX raises a ``ConcretizationError`` there).
* Output shapes must be known while tracing: ``compress``/``extract`` with a condition
  known only abstractly need ``size=`` (padded with ``fill_value``, cast to the
  array's dtype, as in JAX; unlike JAX, ``size`` may exceed the axis length);
  ``delete`` with abstract indices needs ``assume_unique_indices=True``; ``insert``
  takes abstract indices (clamped into ``[0, n]``); ``trim_zeros`` needs concrete
  values (its result is a slice of the input, so it differentiates under ``grad``;
  under ``jit`` it raises ``ConcretizationError``, as in JAX).
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import elementwise as lx
from functrace.lax import shapes as ls
from functrace.numpy._apply import (
    apply_along_axis,
    apply_over_axes,
    bartlett,
    blackman,
    einsum_path,
    hamming,
    hanning,
    kaiser,
    piecewise,
    vectorize,
)
from functrace.numpy._at import at
from functrace.numpy._core import (
    array_any,
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    concrete_array,
    no_out,
    normalize_axis,
    shape_tuple,
    slice_along,
)
from functrace.numpy._dispatch import contains_tracer, numpy_path
from functrace.numpy._indexing import getitem, nonzero, take, where
from functrace.numpy._inplace import place, put, put_along_axis
from functrace.numpy._joining import concatenate
from functrace.numpy._math import clip, remainder
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import moveaxis, ravel, reshape
from functrace.numpy._sorting import sort

_MODES = ("raise", "wrap", "clip")


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _array(x: Any, fname: str) -> Any:
    """A tracer as it is; anything else as a (strong) NumPy array, as NumPy sees it."""
    return x if isinstance(x, Tracer) else np.asarray(asarray_or_tracer(x, fname))


def _int_values(fname: str, what: str, x: Any) -> None:
    dt = core.get_aval(x).dtype
    if dt.kind not in "biu":
        raise TypeError(
            f"{fname}: expected an integer {what}, got {dt.name}. Cast it with .astype(int) first."
        )


def _check_mode(fname: str, mode: Any, allowed: tuple[Any, ...] = _MODES) -> None:
    if mode not in allowed:
        names = ", ".join(repr(m) for m in allowed)
        raise ValueError(f"{fname}: expected mode in ({names}), got {mode!r}.")


# ---------------------------------------------------------------------------
# choose
# ---------------------------------------------------------------------------


@numpy_path(lambda a, choices, out=None, mode="raise": np.choose(a, choices, out=out, mode=mode))
def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` elementwise, with ``a`` and every choice broadcast together
    (NumPy's ``choose``); the result has the choices' common dtype.

    ``mode``: ``"raise"`` (indices outside ``[0, n)`` raise ``ValueError`` when known;
    abstract ones under ``jit``/``vmap`` are clamped, as ``take`` does), ``"wrap"``
    (modulo ``n``) or ``"clip"`` (clamped into ``[0, n - 1]``). Gradients flow into
    the chosen entries.

    >>> import functrace.numpy as fnp
    >>> fnp.choose([2, 0, 1], [[1, 2, 3], [10, 20, 30], [100, 200, 300]])
    array([100,   2,  30])
    """
    no_out("choose", out)
    _check_mode("choose", mode)
    idx = _array(a, "choose")
    _int_values("choose", "index array `a`", idx)
    if isinstance(choices, (Tracer, np.ndarray)):
        seq: Any = choices
        items = [seq[i] for i in range(len(seq))]
    else:
        items = list(choices)
    n = len(items)
    if n == 0:
        raise ValueError("choose: expected at least one choice, got an empty sequence.")
    items = [asarray_or_tracer(c, "choose") for c in items]
    avals = [core.get_aval(c) for c in items]
    dt, _ = dtypes.promote(*[(v.dtype, v.weak_type) for v in avals])
    shape = broadcast_shapes("choose", _shape(idx), *[v.shape for v in avals])
    if core.get_aval(idx).dtype.kind == "b":
        idx = cast(idx, np.dtype(np.int64))
    if mode == "wrap":
        idx = remainder(idx, n)
    elif mode == "clip":
        idx = clip(idx, 0, n - 1)
    else:
        val = core.concrete_or_none(idx)
        if val is not None:
            bad = (val < 0) | (val >= n)
            if np.any(bad):
                raise ValueError(
                    f"choose: expected indices in [0, {n}) for {n} choices, got "
                    f"{np.asarray(val)[bad].ravel()[0]}. Fix the index, or pass "
                    f"mode='wrap' or mode='clip'."
                )
        else:
            idx = clip(idx, 0, n - 1)
    cases = [broadcast_to_shape(cast(c, dt, False), shape) for c in items]
    if n == 1:
        out = cases[0]
    else:
        idx = broadcast_to_shape(cast(idx, np.dtype(np.int64)), shape)
        out = lx.select_n(idx, *cases)
    return out


# ---------------------------------------------------------------------------
# compress, extract
# ---------------------------------------------------------------------------


def _padded(r: np.ndarray, size: int, fill_value: Any, axis: int) -> np.ndarray:
    """``r`` cut or padded with ``fill_value`` to ``size`` along ``axis``."""
    r = np.moveaxis(r, axis, 0)[:size]
    pad = np.full((size - r.shape[0], *r.shape[1:]), fill_value).astype(r.dtype)
    return np.moveaxis(np.concatenate([r, pad]), 0, axis)


def _np_compress(
    condition: Any,
    a: Any,
    axis: Any = None,
    out: Any = None,
    *,
    size: Any = None,
    fill_value: Any = 0,
) -> Any:
    if size is None:
        return np.compress(condition, a, axis=axis, out=out)
    no_out("compress", out)
    r = np.compress(condition, a, axis=axis)
    return _padded(r, _size_arg("compress", size), fill_value, 0 if axis is None else axis)


def _size_arg(fname: str, size: Any) -> int:
    try:
        k = operator.index(size)
    except TypeError:
        raise TypeError(f"{fname}: expected an integer size, got {size!r}.") from None
    if k < 0:
        raise ValueError(f"{fname}: expected a non-negative size, got {k}.")
    return k


def _compress(fname: str, cond: Any, x: Any, ax: int, size: Any, fill_value: Any, hint: str) -> Any:
    """The entries of ``x`` along ``ax`` where the 1-d ``cond`` is non-zero."""
    n = _shape(x)[ax]
    m = _shape(cond)[0]
    if core.get_aval(cond).dtype != np.bool_:
        cond = lx.ne(cond, lx.zeros_like(cond)) if isinstance(cond, Tracer) else cond != 0
    cv = core.concrete_or_none(cond)
    if m > n:
        if cv is not None and np.any(cv[n:]):
            i = n + int(np.flatnonzero(cv[n:])[0])
            raise IndexError(
                f"{fname}: index {i} is out of bounds for axis {ax} with size {n} (the "
                f"condition has {m} entries, a True one beyond the axis). Shorten the "
                f"condition to {n} entries."
            )
        cond = slice_along(cond, 0, n, 0)
        cv = None if cv is None else cv[:n]
    elif m < n:
        x = slice_along(x, 0, m, ax)  # NumPy reads missing entries as False
        n = m
    if size is None:
        if cv is None:
            raise ConcretizationError(
                f"{fname}: expected a condition with known values, got an abstract tracer "
                f"{cond.aval.str_short()}. The result's length is the number of True "
                f"entries, unknown under jit: {hint}"
            )
        return take(x, np.flatnonzero(cv), axis=ax)
    k = _size_arg(fname, size)
    dt = core.get_aval(x).dtype
    fill = _array(fill_value, fname)
    fill = cast(fill, dt) if isinstance(fill, Tracer) else fill.astype(dt)
    if _shape(fill) != ():
        raise ValueError(f"{fname}: expected a scalar fill_value, got shape {_shape(fill)}.")
    shape = list(_shape(x))
    if cv is not None:
        pos = np.flatnonzero(cv)[:k]
        got = take(x, pos, axis=ax)
        if len(pos) == k:
            return got
        shape[ax] = k - len(pos)
        return concatenate([got, broadcast_to_shape(fill, tuple(shape))], ax)
    shape[ax] = k
    full = broadcast_to_shape(fill, tuple(shape))
    if n == 0 or k == 0:
        return full if isinstance(full, Tracer) else np.array(full)
    (pos,) = nonzero(cond, size=k)
    valid = lx.lt(ls.iota(np.int64, k), broadcast_to_shape(_sum(cond), (k,)))
    mask = ls.broadcast_in_dim(valid, tuple(shape), (ax,))
    return where(mask, take(x, pos, axis=ax), full)


@numpy_path(_np_compress)
def compress(
    condition: Any,
    a: Any,
    axis: Any = None,
    out: Any = None,
    *,
    size: Any = None,
    fill_value: Any = 0,
) -> Any:
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` if None) where the 1-d
    ``condition`` is true (NumPy's ``compress``; a shorter condition counts as False
    beyond its end).

    JAX's keywords for a condition known only abstractly (under ``jit``): ``size``
    fixes the result's length along ``axis`` (the first ``size`` selected slices,
    padded with ``fill_value``, cast to ``a``'s dtype). Gradients flow into the
    selected entries.

    >>> import functrace.numpy as fnp
    >>> fnp.compress([True, False, True], [[1, 2, 3], [4, 5, 6]], axis=1)
    array([[1, 3],
           [4, 6]])
    >>> fnp.compress([0, 1, 1], [1.0, 2.0, 3.0], size=3, fill_value=-1)
    array([ 2.,  3., -1.])
    """
    no_out("compress", out)
    cond = _array(condition, "compress")
    if core.get_aval(cond).ndim != 1:
        raise ValueError(
            f"compress: expected a 1-d condition, got shape {_shape(cond)}. Flatten it "
            f"with ravel, or use extract for a condition shaped like the array."
        )
    x = _array(a, "compress")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = normalize_axis("compress", axis, core.get_aval(x).ndim)
    return _compress(
        "compress",
        cond,
        x,
        ax,
        size,
        fill_value,
        "pass size=n (compress(condition, a, axis, size=n, fill_value=...)), or use "
        "functrace.numpy.where to keep the shape.",
    )


def _np_extract(condition: Any, arr: Any, *, size: Any = None, fill_value: Any = 0) -> Any:
    if size is None:
        return np.extract(condition, arr)
    return _padded(np.extract(condition, arr), _size_arg("extract", size), fill_value, 0)


@numpy_path(_np_extract)
def extract(condition: Any, arr: Any, *, size: Any = None, fill_value: Any = 0) -> Any:
    """The entries of the flattened ``arr`` where the flattened ``condition`` is
    non-zero (NumPy's ``extract``); ``size``/``fill_value`` as in :func:`compress`.

    >>> import functrace.numpy as fnp
    >>> x = fnp.arange(6.0).reshape(2, 3)
    >>> fnp.extract(x > 2, x)
    Array([3., 4., 5.])
    """
    cond = _array(condition, "extract")
    cond = ravel(cond) if isinstance(cond, Tracer) else np.ravel(cond)
    return _compress(
        "extract",
        cond,
        ravel(_array(arr, "extract")),
        0,
        size,
        fill_value,
        "pass size=n (extract(condition, arr, size=n, fill_value=...)), or use "
        "functrace.numpy.where to keep the shape.",
    )


# ---------------------------------------------------------------------------
# delete, insert
# ---------------------------------------------------------------------------


def _axis_of(fname: str, x: Any, axis: Any) -> tuple[Any, int]:
    if axis is None:
        return ravel(x), 0
    return x, normalize_axis(fname, axis, core.get_aval(x).ndim)


def _static_index(fname: str, obj: Any) -> Any:
    """``obj`` as a NumPy value, or the abstract tracer it is (for the traced forms)."""
    if isinstance(obj, Tracer) or (isinstance(obj, (list, tuple)) and contains_tracer(obj)):
        t = array_any(obj) if not isinstance(obj, Tracer) else obj
        v = core.concrete_or_none(t)
        return t if v is None else v
    return np.asarray(obj)


def _out_of_range(fname: str, i: Any, ax: int, n: int) -> IndexError:
    return IndexError(f"{fname}: index {i} is out of bounds for axis {ax} with size {n}.")


def _np_delete(arr: Any, obj: Any, axis: Any = None, *, assume_unique_indices: bool = False) -> Any:
    return np.delete(arr, obj, axis)


@numpy_path(_np_delete)
def delete(arr: Any, obj: Any, axis: Any = None, *, assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` along ``axis`` (of the flattened ``arr`` if
    None): ``obj`` is an int, a slice, an integer array (negative and repeated indices
    allowed) or a boolean mask of the axis (NumPy's ``delete``).

    Under ``jit`` the indices must be known, unless ``assume_unique_indices=True``
    (JAX's keyword) promises distinct in-range integers: then they may be traced.

    >>> import functrace.numpy as fnp
    >>> fnp.delete(fnp.arange(6), [0, -1, 0])
    Array([1, 2, 3, 4])
    """
    x, ax = _axis_of("delete", _array(arr, "delete"), axis)
    n = _shape(x)[ax]
    if isinstance(obj, slice):
        keep = np.ones(n, bool)
        bounds = [None if b is None else operator.index(b) for b in (obj.start, obj.stop, obj.step)]
        keep[slice(*bounds)] = False
        return take(x, np.flatnonzero(keep), axis=ax)
    idx = _static_index("delete", obj)
    if isinstance(idx, Tracer):
        if not assume_unique_indices:
            raise ConcretizationError(
                f"delete: expected indices with known values, got an abstract tracer "
                f"{idx.aval.str_short()}. The result's length depends on how many distinct "
                f"indices there are: pass assume_unique_indices=True if they are distinct "
                f"and in range."
            )
        return _delete_unique(x, idx, ax, n)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ValueError(
                f"delete: expected a boolean mask of shape ({n},) (the length of axis "
                f"{ax}), got shape {idx.shape}."
            )
        keep = ~idx
    else:
        if idx.dtype.kind not in "iu" and not (idx.size == 0 and isinstance(obj, (list, tuple))):
            raise IndexError(
                f"delete: expected integer or boolean indices, got {idx.dtype.name}. "
                f"Cast them with .astype(int)."
            )
        flat = idx.astype(np.int64).ravel()
        bad = (flat < -n) | (flat >= n)
        if bad.any():
            raise _out_of_range("delete", flat[bad][0], ax, n)
        keep = np.ones(n, bool)
        keep[flat] = False
    if keep.all():
        return x
    return take(x, np.flatnonzero(keep), axis=ax)


def _delete_unique(x: Any, idx: Tracer, ax: int, n: int) -> Any:
    # The kept entry of rank i sits after the deleted ones (sorted d_j, j-th of them)
    # that have at most i kept entries before them, i.e. d_j - j <= i.
    _int_values("delete", "index array", idx)
    d = ravel(idx)
    m = _shape(d)[0]
    if m == 0:
        return x
    if m > n:
        raise ValueError(
            f"delete: expected at most {n} distinct indices for an axis of size {n}, "
            f"got {m} (assume_unique_indices=True)."
        )
    d = sort(where(d < 0, d + n, d))
    before = d - np.arange(m)
    rank = np.arange(n - m)
    pos = rank + _sum(before[None, :] <= rank[:, None], axis=1)
    return take(x, pos, axis=ax)


def _np_insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    return np.insert(arr, obj, values, axis)


@numpy_path(_np_insert)
def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis`` (of
    the flattened ``arr`` if None), as NumPy's ``insert``: an int inserts ``values``
    as one block, a sequence inserts one slice per index; ``values`` are cast to
    ``arr``'s dtype. The indices may be traced (the output shape does not depend on
    them); gradients flow into ``arr`` and ``values``.

    >>> import functrace.numpy as fnp
    >>> fnp.insert(fnp.arange(4), [1, 3], [-1, -2])
    Array([ 0, -1,  1,  2, -2,  3])
    """
    x, ax = _axis_of("insert", _array(arr, "insert"), axis)
    shape = _shape(x)
    nd, n = len(shape), shape[ax]
    dt = core.get_aval(x).dtype
    v = _array(values, "insert")
    v = cast(v, dt) if isinstance(v, Tracer) else np.asarray(v).astype(dt)
    vshape = _shape(v)
    if len(vshape) < nd:
        v = reshape(v, (1,) * (nd - len(vshape)) + vshape)
    if isinstance(obj, slice):
        idx: Any = np.arange(*obj.indices(n))
    else:
        idx = _static_index("insert", obj)
        if not isinstance(idx, Tracer) and idx.dtype == np.bool_:
            idx = np.flatnonzero(idx)  # NumPy reads a boolean obj as a mask
    if core.get_aval(idx).ndim > 1:
        raise ValueError(f"insert: expected a scalar or 1-d index array, got shape {_shape(idx)}.")
    if core.get_aval(idx).dtype.kind not in "iu" and not (
        core.get_aval(idx).size == 0 and isinstance(obj, (list, tuple))
    ):
        raise IndexError(
            f"insert: expected integer indices, got {core.get_aval(idx).dtype.name}. "
            f"Cast them with .astype(int)."
        )
    if not isinstance(idx, Tracer):
        idx = idx.astype(np.int64)
        bad = (idx < -n) | (idx > n)
        if bad.any():
            raise _out_of_range("insert", idx[bad].ravel()[0], ax, n)
        idx = np.where(idx < 0, idx + n, idx)
    else:
        t: Any = idx
        idx = clip(where(t < 0, t + n, t), 0, n)
    m = core.get_aval(idx).size
    if m == 1:
        if core.get_aval(idx).ndim == 0:
            v = moveaxis(v, 0, ax)
        numnew = _shape(v)[ax]
        i = reshape(idx, ()) if isinstance(idx, Tracer) else int(idx.reshape(()))
        src = _block_source(i, n, numnew)
    else:
        numnew = m
        src = _spread_source(idx, n)
    slot = shape[:ax] + (numnew,) + shape[ax + 1 :]
    v = _fit_values(v, slot)
    if numnew == 0:
        return x
    return take(concatenate([x, v], ax), src, axis=ax)


def _fit_values(v: Any, slot: tuple[int, ...]) -> Any:
    try:
        ok = np.broadcast_shapes(_shape(v), slot) == slot
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"insert: expected values broadcastable to shape {slot} (the inserted "
            f"slices), got shape {_shape(v)}."
        )
    return broadcast_to_shape(v, slot)


def _block_source(i: Any, n: int, numnew: int) -> Any:
    """For each output position: the entry of ``concatenate([x, values])`` it reads,
    ``values`` (``numnew`` of them) inserted as one block before index ``i``."""
    p = np.arange(n + numnew)
    if not isinstance(i, Tracer):
        i = int(i)
        return np.where(p < i, p, np.where(p < i + numnew, n + p - i, p - numnew))
    ti: Any = i
    return where(p < ti, p, where(p < ti + numnew, n + p - ti, p - numnew))


def _spread_source(idx: Any, n: int) -> Any:
    """As :func:`_block_source` for one value per index of ``idx`` (values at equal
    indices keep their order)."""
    m = core.get_aval(idx).size
    k = np.arange(m)
    j = np.arange(n)
    if not isinstance(idx, Tracer):
        order = np.argsort(idx, kind="stable")
        val_pos = np.empty(m, np.int64)
        val_pos[order] = idx[order] + k
        old_pos = j + np.searchsorted(np.sort(idx), j, side="right")
        src = np.empty(n + m, np.int64)
        src[old_pos] = j
        src[val_pos] = n + k
        return src
    # rank of value k: the values before it at a smaller index or at the same one earlier
    t: Any = idx
    before = (t[None, :] < t[:, None]) | ((t[None, :] == t[:, None]) & (k < k[:, None]))
    val_pos = t + _sum(before, axis=1)
    old_pos = j + _sum(t[None, :] <= j[:, None], axis=1)
    src = at(np.zeros(n + m, np.int64))[old_pos].set(j)
    return at(src)[val_pos].set(n + k)


# ---------------------------------------------------------------------------
# resize, trim_zeros
# ---------------------------------------------------------------------------


@numpy_path(lambda a, new_shape: np.resize(a, new_shape))
def resize(a: Any, new_shape: Any) -> Any:
    """An array of shape ``new_shape`` filled with the entries of ``a`` in order,
    repeated as often as needed (NumPy's ``resize``; zeros if ``a`` is empty).
    Gradients add up over the repeats.

    >>> import functrace.numpy as fnp
    >>> fnp.resize(fnp.arange(3), (2, 4))
    Array([[0, 1, 2, 0],
           [1, 2, 0, 1]])
    """
    shape = shape_tuple("resize", new_shape)
    if builtins.any(d < 0 for d in shape):
        raise ValueError(f"resize: expected non-negative sizes, got new_shape={shape}.")
    flat = ravel(_array(a, "resize"))
    size = _shape(flat)[0]
    total = math.prod(shape)
    if size == 0 or total == 0:
        return np.zeros(shape, core.get_aval(flat).dtype)
    reps = -(-total // size)
    if reps > 1:
        flat = ls.reshape(ls.broadcast_in_dim(flat, (reps, size), (1,)), (reps * size,))
    if reps * size != total:
        flat = slice_along(flat, 0, total, 0)
    return reshape(flat, shape)


def _np_trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    return np.trim_zeros(filt, trim, axis)  # type: ignore[arg-type]


@numpy_path(_np_trim_zeros)
def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` without its leading (``"f"`` in ``trim``) and trailing (``"b"``) zeros,
    along ``axis`` (every axis if None: the smallest box holding the non-zero
    entries), as NumPy's ``trim_zeros``.

    The result's shape depends on the values, so they must be known: concrete
    tracers (under ``grad``) work and the result is a differentiable slice; under
    ``jit`` it is a ``ConcretizationError``, as in JAX.

    >>> import functrace.numpy as fnp
    >>> fnp.trim_zeros(fnp.array([0, 0, 1, 2, 0]), "f")
    Array([1, 2, 0])
    """
    if not isinstance(trim, str) or not trim or set(trim.lower()) - {"f", "b"}:
        raise ValueError(f"trim_zeros: expected `trim` made of 'f' and 'b', got {trim!r}.")
    x = _array(filt, "trim_zeros")
    value = concrete_array("trim_zeros", x, "values of `filt`")
    nd = value.ndim
    if nd == 0:
        return x
    axes = (
        range(nd)
        if axis is None
        else [normalize_axis("trim_zeros", a, nd) for a in np.atleast_1d(axis).tolist()]
    )
    nz = value != 0
    index = [slice(None)] * nd
    for ax in axes:
        along = np.any(nz, axis=tuple(d for d in range(nd) if d != ax))
        hits = np.flatnonzero(along)
        n = value.shape[ax]
        if hits.size == 0:
            index[ax] = slice(0, 0)
            continue
        lo = int(hits[0]) if "f" in trim.lower() else 0
        hi = int(hits[-1]) + 1 if "b" in trim.lower() else n
        index[ax] = slice(lo, hi)
    return getitem(x, tuple(index))


# ---------------------------------------------------------------------------
# block
# ---------------------------------------------------------------------------


def _block_depth(arrays: Any, where_: str) -> tuple[int, int]:
    """(list depth, largest leaf ndim) of a nested list of arrays, checked as NumPy."""
    if isinstance(arrays, tuple):
        raise TypeError(
            f"block: expected nested lists of arrays, got a tuple at {where_}. Only lists "
            f"arrange blocks; convert the tuple with list(...) or np.asarray(...)."
        )
    if not isinstance(arrays, list):
        return 0, core.get_aval(asarray_or_tracer(arrays, "block")).ndim
    if not arrays:
        raise ValueError(f"block: expected a non-empty list at {where_}, got an empty list.")
    found = [_block_depth(e, f"{where_}[{i}]") for i, e in enumerate(arrays)]
    depths = {d for d, _ in found}
    if len(depths) > 1:
        raise ValueError(
            f"block: expected lists nested to one depth, got depths "
            f"{sorted(d + 1 for d in depths)} inside {where_}. Wrap the shallower entries "
            f"in lists."
        )
    return found[0][0] + 1, builtins.max(nd for _, nd in found)


def _plain_blocks(arrays: Any, found: list[bool]) -> Any:
    if isinstance(arrays, list):
        return [_plain_blocks(a, found) for a in arrays]
    if type(arrays) is Array:
        found.append(True)
        return arrays.view(np.ndarray)
    return arrays


def _np_block(arrays: Any) -> Any:
    # NumPy's block on plain views of nested Arrays; an Array result if there were any
    found: list[bool] = []
    out = np.block(_plain_blocks(arrays, found))
    return _wrap(out) if found else out


@numpy_path(_np_block)
def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (NumPy's ``block``): the innermost
    lists are joined along the last axis, the next ones along the one before, and so
    on; every block is first given as many axes as the result (leading size-1 axes).

    >>> import functrace.numpy as fnp
    >>> fnp.block([[fnp.ones((2, 2)), fnp.zeros((2, 1))], [fnp.full((1, 3), 2.0)]])
    Array([[1., 1., 0.],
           [1., 1., 0.],
           [2., 2., 2.]])
    """
    depth, max_nd = _block_depth(arrays, "arrays")
    nd = builtins.max(depth, max_nd)

    def build(a: Any, level: int) -> Any:
        if isinstance(a, list):
            return concatenate([build(e, level + 1) for e in a], nd - depth + level)
        a = _array(a, "block")
        s = _shape(a)
        return reshape(a, (1,) * (nd - len(s)) + s)

    return build(arrays, 0)


__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "bartlett",
    "blackman",
    "block",
    "choose",
    "compress",
    "delete",
    "einsum_path",
    "extract",
    "hamming",
    "hanning",
    "insert",
    "kaiser",
    "piecewise",
    "place",
    "put",
    "put_along_axis",
    "resize",
    "trim_zeros",
    "vectorize",
]
