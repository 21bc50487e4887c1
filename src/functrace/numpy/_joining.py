"""Joining and splitting of functrace.numpy: ``concatenate``, ``stack`` and its
``h``/``v``/``d``/``column`` forms, ``append``, ``split``, ``array_split`` and its
``h``/``v``/``d`` forms.

Plain NumPy inputs go straight to NumPy. Traced inputs are cast to their common
dtype (NumPy 2 promotion) and joined with one lax ``concatenate``; splits are static
``slice`` equations.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, cast, no_out, normalize_axis, slice_along
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._shape import atleast_1d, atleast_2d, atleast_3d, ravel

# ---------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------


def _join_dtype(fname: str, avals: Sequence[core.ShapedArray], dtype: Any) -> tuple[np.dtype, bool]:
    if dtype is not None:
        return np.dtype(dtype), False
    keys = [(a.dtype, a.weak_type) for a in avals]
    if dtypes.promotion.maybe_strict:  # config.numpy_dtype_promotion="strict"
        dtypes.check_promotion(fname, keys)
    return dtypes.promote(*keys)


@numpy_path(
    lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": np.concatenate(
        arrays, axis=axis, out=out, dtype=dtype, casting=casting
    ),
    promotes=True,
)
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
    no_out("concatenate", out)
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
    dt, weak = _join_dtype("concatenate", avals, dtype)
    xs = [cast(x, dt, weak) for x in xs]
    return xs[0] if len(xs) == 1 else ls.concatenate(xs, ax)


@numpy_path(
    lambda arrays, axis=0, out=None, dtype=None: np.stack(arrays, axis=axis, out=out, dtype=dtype),
    promotes=True,
)
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
    """Join equally shaped arrays along a new ``axis``.

    >>> import functrace.numpy as fnp
    >>> fnp.stack([fnp.zeros(3), fnp.ones(3)], axis=1).shape
    (3, 2)
    """
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
    if dtype is None and dtypes.promotion.maybe_strict:  # numpy_dtype_promotion="strict"
        dtypes.check_promotion("stack", [(a.dtype, a.weak_type) for a in map(core.get_aval, xs)])
    ax = normalize_axis("stack", axis, len(shp) + 1)
    new = shp[:ax] + (1,) + shp[ax:]
    return concatenate([ls.reshape(x, new) for x in xs], ax, out=out, dtype=dtype)


@numpy_path(lambda tup, *, dtype=None: np.hstack(tup, dtype=dtype), promotes=True)
def hstack(tup: Sequence[Any], *, dtype: Any = None) -> Any:
    """Join along the second axis (the first for 1-d arrays)."""
    xs = [atleast_1d(x) for x in tup]
    return concatenate(xs, 0 if xs and core.get_aval(xs[0]).ndim == 1 else 1, dtype=dtype)


@numpy_path(lambda tup, *, dtype=None: np.vstack(tup, dtype=dtype), promotes=True)
def vstack(tup: Sequence[Any], *, dtype: Any = None) -> Any:
    """Join along the first axis, after making 1-d arrays rows (shape (1, n))."""
    return concatenate([atleast_2d(x) for x in tup], 0, dtype=dtype)


@numpy_path(lambda tup: np.dstack(tup), promotes=True)
def dstack(tup: Sequence[Any]) -> Any:
    """Join along the third axis, after making every input at least 3-d."""
    return concatenate([atleast_3d(x) for x in tup], 2)


@numpy_path(lambda tup: np.column_stack(tup), promotes=True)
def column_stack(tup: Sequence[Any]) -> Any:
    """Join 1-d arrays as columns (2-d arrays are joined as they are)."""
    xs = []
    for x in tup:
        x = asarray_or_tracer(x, "column_stack")
        s = core.get_aval(x).shape
        xs.append(ls.reshape(x, (s[0] if s else 1, 1)) if len(s) < 2 else x)
    return concatenate(xs, 1)


# ---------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------


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
        outs.append(slice_along(x, start, builtins.max(start, stop), ax))
    return outs


@numpy_path(lambda ary, indices_or_sections, axis=0: np.split(ary, indices_or_sections, axis))
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections (an int) or at the given indices, along ``axis``.

    >>> import functrace.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.arange(5), [2, 3])]
    [[0, 1], [2], [3, 4]]
    """
    return _split("split", ary, indices_or_sections, axis, equal=True)


@numpy_path(lambda ary, indices_or_sections, axis=0: np.array_split(ary, indices_or_sections, axis))
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``split`` that allows sections of unequal size (the first ones one larger)."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


@numpy_path(lambda ary, indices_or_sections: np.hsplit(ary, indices_or_sections))
def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 1 (axis 0 for 1-d arrays)."""
    x = asarray_or_tracer(ary, "hsplit")
    nd = core.get_aval(x).ndim
    if nd == 0:
        raise ValueError("hsplit: expected an array with at least 1 dimension, got a 0-d array.")
    return _split("hsplit", x, indices_or_sections, 1 if nd > 1 else 0, equal=True)


@numpy_path(np.vsplit)
def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 0 (the array needs at least two axes)."""
    return _split_min_dims("vsplit", ary, indices_or_sections, 0, 2)


@numpy_path(np.dsplit)
def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 2 (the array needs at least three axes)."""
    return _split_min_dims("dsplit", ary, indices_or_sections, 2, 3)


def _split_min_dims(fname: str, ary: Any, ios: Any, axis: int, min_dims: int) -> list[Any]:
    x = asarray_or_tracer(ary, fname)
    nd = core.get_aval(x).ndim
    if nd < min_dims:
        raise ValueError(
            f"{fname}: expected an array with at least {min_dims} dimensions, got {nd}."
        )
    return _split(fname, x, ios, axis, equal=True)


@numpy_path(lambda arr, values, axis=None: np.append(arr, values, axis), promotes=True)
def append(arr: Any, values: Any, axis: Any = None) -> Any:
    """``values`` joined to the end of ``arr`` (both flattened if ``axis`` is None).

    >>> import functrace.numpy as fnp
    >>> fnp.append([1, 2], [[3], [4]])
    array([1, 2, 3, 4])
    """
    arr, values = asarray_or_tracer(arr, "append"), asarray_or_tracer(values, "append")
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


__all__ = [
    "append",
    "array_split",
    "column_stack",
    "concatenate",
    "dsplit",
    "dstack",
    "hsplit",
    "hstack",
    "split",
    "stack",
    "vsplit",
    "vstack",
]
