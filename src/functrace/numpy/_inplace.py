"""NumPy's in-place writers in JAX's functional form: ``place``, ``put`` and
``put_along_axis`` (exported through ``_manip``).

``inplace=True`` (NumPy's behaviour and JAX's default) on a writable NumPy array
writes into it and returns None, exactly as NumPy does; on a tracer or an immutable
``functrace.Array`` it is a ``ValueError`` asking for ``inplace=False``, which returns
an updated copy on any input (eagerly through NumPy, traced through ``where`` and
``.at`` scatters, so it differentiates, batches and jits).

Indices whose values are known are checked as NumPy checks them (``IndexError``);
abstract ones (under ``jit``, batched under ``vmap``) cannot be, and updates out of
range are skipped, as ``.at`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.numpy._at import at
from functrace.numpy._core import asarray_or_tracer, cast, normalize_axis
from functrace.numpy._dispatch import is_traced
from functrace.numpy._indexing import take, where
from functrace.numpy._math import clip, remainder
from functrace.numpy._reductions import cumsum
from functrace.numpy._shape import ravel, reshape

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


def _check_mode(fname: str, mode: Any, allowed: tuple[Any, ...]) -> None:
    if mode not in allowed:
        names = ", ".join(repr(m) for m in allowed)
        raise ValueError(f"{fname}: expected mode in ({names}), got {mode!r}.")


def _out_of_range(fname: str, i: Any, ax: int, n: int) -> IndexError:
    return IndexError(f"{fname}: index {i} is out of bounds for axis {ax} with size {n}.")


def _inplace_error(fname: str, arr: Any) -> ValueError:
    what = (
        arr.describe()
        if isinstance(arr, Tracer)
        else "a functrace.Array (immutable)"
        if type(arr) is Array
        else f"a {type(arr).__name__}"
    )
    return ValueError(
        f"{fname}: expected a writable numpy.ndarray for inplace=True, got {what}. "
        f"functrace arrays are immutable (as in JAX): pass inplace=False and use the "
        f"returned array."
    )


def _inplace(fname: str, arr: Any, traced: bool) -> None:
    if traced or not isinstance(arr, np.ndarray) or type(arr) is Array:
        raise _inplace_error(fname, arr)


def _copy_result(arr: Any, out: np.ndarray) -> Any:
    return _wrap(out) if type(arr) is Array else out


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """Write ``vals`` (repeated cyclically) into the entries of ``arr`` where ``mask``
    is true, in order (NumPy's ``place``).

    With ``inplace=False`` (JAX's functional form) an updated copy is returned and
    ``arr`` is untouched; the mask may then be abstract (under ``jit``). With the
    default ``inplace=True`` a writable NumPy ``arr`` is modified and None returned,
    as in NumPy.

    >>> import functrace.numpy as fnp
    >>> x = fnp.arange(5.0)
    >>> fnp.place(x, x > 1, [10.0, 20.0], inplace=False)
    Array([ 0.,  1., 10., 20., 10.])
    """
    traced = is_traced(arr, mask, vals)
    if inplace:
        _inplace("place", arr, traced)
        np.place(arr, mask, vals)
        return None
    if not traced:
        out = np.array(arr, copy=True)
        np.place(out, mask, vals)
        return _copy_result(arr, out)
    x = _array(arr, "place")
    m = _array(mask, "place")
    size = core.get_aval(x).size
    if core.get_aval(m).size != size:
        raise ValueError(
            f"place: expected a mask with as many entries as the array ({size}), got "
            f"shape {_shape(m)} for an array of shape {_shape(x)}."
        )
    m = reshape(m, _shape(x))
    if core.get_aval(m).dtype != np.bool_:
        m = m != 0
    v = ravel(_array(vals, "place"))
    v = cast(v, core.get_aval(x).dtype) if isinstance(v, Tracer) else v.astype(x.dtype)
    nv = _shape(v)[0]
    if nv == 0:
        mv = core.concrete_or_none(m)
        if mv is not None and not mv.any():
            return x
        raise ValueError(
            "place: expected at least one value to place, got an empty `vals` with a "
            "mask that selects entries (or whose values are unknown under jit)."
        )
    k = cumsum(ravel(m)) - 1  # the rank of each selected entry among the selected ones
    picked = reshape(take(v, remainder(k, nv)), _shape(x))
    return where(m, picked, x)


def _put_mode(fname: str, mode: Any) -> str:
    _check_mode(fname, mode, (None, *_MODES))
    return "raise" if mode is None else mode


def put(a: Any, ind: Any, v: Any, mode: Any = None, *, inplace: bool = True) -> Any:
    """Write ``v`` (flattened, repeated cyclically) at the flat indices ``ind`` of
    ``a`` (NumPy's ``put``; with repeated indices the last write wins).

    ``mode``: None or ``"raise"`` (NumPy's default: known indices outside
    ``[-size, size)`` raise ``IndexError``; abstract ones under ``jit``/``vmap`` are
    skipped, as ``.at`` does), ``"wrap"`` or ``"clip"`` (negative indices clip to 0).
    ``inplace`` as in :func:`place`.

    >>> import functrace.numpy as fnp
    >>> fnp.put(fnp.zeros(5), [0, 2, -1], [1.0, 2.0], inplace=False)
    Array([1., 0., 2., 0., 1.])
    """
    mode = _put_mode("put", mode)
    traced = is_traced(a, ind, v)
    if inplace:
        _inplace("put", a, traced)
        np.put(a, ind, v, mode=mode)  # type: ignore[arg-type]
        return None
    if not traced:
        out = np.array(a, copy=True)
        np.put(out, ind, v, mode=mode)  # type: ignore[arg-type]
        return _copy_result(a, out)
    x = _array(a, "put")
    flat = ravel(x)
    size = _shape(flat)[0]
    idx = ravel(_array(ind, "put"))
    if _shape(idx)[0] == 0:
        return x
    _int_values("put", "index array", idx)
    if core.get_aval(idx).dtype == np.bool_:
        idx = cast(idx, np.dtype(np.int64))  # NumPy reads booleans as 0 and 1 here
    vals = ravel(_array(v, "put"))
    k, nv = _shape(idx)[0], _shape(vals)[0]
    if k == 0 or nv == 0:
        return x
    if size == 0:
        raise IndexError("put: expected a non-empty array to write into, got an empty one.")
    if nv != k:
        vals = take(vals, np.arange(k) % nv)
    if mode == "wrap":
        idx = remainder(idx, size)
    elif mode == "clip":
        idx = clip(idx, 0, size - 1)
    else:
        known = core.concrete_or_none(idx)
        if known is not None:
            bad = (known < -size) | (known >= size)
            if bad.any():
                raise _out_of_range("put", known[bad][0], 0, size)
    return reshape(at(flat)[idx].set(vals), _shape(x))


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: Any,
    inplace: bool = True,
    *,
    mode: Any = None,
) -> Any:
    """Write ``values`` into ``arr`` at ``indices`` along ``axis``, matched with the
    other axes as in ``take_along_axis`` (NumPy's ``put_along_axis``; ``axis=None``
    works on the flattened array with 1-d ``indices``).

    ``mode`` (JAX's keyword): None (known indices out of range raise ``IndexError``;
    abstract ones are skipped) or one of ``.at``'s modes (``"clip"``, ``"drop"``,
    ``"fill"``, ``"promise_in_bounds"``). ``inplace`` as in :func:`place`.

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> x = np.zeros((2, 3))
    >>> fnp.put_along_axis(x, np.array([[2], [0]]), 5.0, axis=1, inplace=False)
    array([[0., 0., 5.],
           [5., 0., 0.]])
    """
    _check_mode("put_along_axis", mode, (None, "clip", "drop", "fill", "promise_in_bounds"))
    traced = is_traced(arr, indices, values)
    if inplace:
        _inplace("put_along_axis", arr, traced)
        if mode is None:
            np.put_along_axis(arr, np.asarray(indices), values, axis)
            return None
        arr[...] = _put_along_axis(arr, indices, values, axis, mode)
        return None
    if not traced and mode is None:
        out = np.array(arr, copy=True)
        np.put_along_axis(out, np.asarray(indices), values, axis)
        return _copy_result(arr, out)
    return _put_along_axis(arr, indices, values, axis, mode)


def _put_along_axis(arr: Any, indices: Any, values: Any, axis: Any, mode: Any) -> Any:
    fname = "put_along_axis"
    x = _array(arr, fname)
    idx = _array(indices, fname)
    if core.get_aval(idx).dtype.kind not in "iu":
        raise IndexError(
            f"{fname}: expected an integer index array, got {core.get_aval(idx).dtype.name}."
        )
    shape = _shape(x)
    if axis is None:
        if core.get_aval(idx).ndim != 1:
            raise ValueError(
                f"{fname}: expected 1-d indices for axis=None, got shape {_shape(idx)}."
            )
        y = ravel(x)
        ax = 0
    else:
        y = x
        if core.get_aval(idx).ndim != len(shape):
            raise ValueError(
                f"{fname}: expected indices with as many dimensions as the array "
                f"({len(shape)}), got {core.get_aval(idx).ndim}."
            )
        ax = normalize_axis(fname, axis, len(shape))
    yshape = _shape(y)
    n = yshape[ax]
    if mode is None:
        known = core.concrete_or_none(idx)
        if known is not None:
            bad = (known < -n) | (known >= n)
            if bad.any():
                raise _out_of_range(fname, known[bad][0], ax, n)
    nd = len(yshape)
    full = tuple(
        idx if d == ax else np.arange(k).reshape((1,) * d + (k,) + (1,) * (nd - d - 1))
        for d, k in enumerate(yshape)
    )
    out = at(y)[full].set(values, mode=mode)
    return reshape(out, shape) if axis is None else out


__all__ = ["place", "put", "put_along_axis"]
