"""functrace.scipy.interpolate: ``RegularGridInterpolator``, traceable (as
``jax.scipy.interpolate``).

>>> import numpy as np
>>> f = RegularGridInterpolator((np.array([0.0, 1.0, 2.0]),), np.array([0.0, 10.0, 40.0]))
>>> f(np.array([0.5, 1.5]))
Array([ 5., 25.])
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.lax import indexing as li
from functrace.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _array(x: Any) -> Any:
    return x if isinstance(x, core.Tracer) else fnp.asarray(x)


def _query_points(xi: Any, ndim: int) -> Any:
    """``xi`` as a ``(..., ndim)`` array: a tuple of coordinate arrays is stacked along a
    new last axis (after broadcasting), a 1-d array is read as points of ``ndim``."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = fnp.broadcast_arrays(*[_array(p) for p in xi])
        return fnp.stack([fnp.asarray(p, dtype=float) for p in parts], axis=-1)
    xi = _array(xi)
    if len(core.get_aval(xi).shape) == 1:
        xi = fnp.reshape(xi, (-1, ndim))
    return xi


class RegularGridInterpolator:
    """Interpolation of ``values`` on the rectangular grid ``points`` (one strictly
    increasing 1-d array per axis), linear or nearest
    (``jax.scipy.interpolate.RegularGridInterpolator``, SciPy's class with JAX's
    defaults).

    ``values`` has at least ``len(points)`` axes (the rest are carried along: each grid
    point holds an array); integers are taken as floats. ``f(xi)`` evaluates at points
    ``xi`` of shape ``(..., len(points))`` (or a tuple of coordinate arrays) and gives
    ``xi.shape[:-1] + values.shape[len(points):]``. Points outside the grid get
    ``fill_value`` (NaN by default), or are extrapolated from the edge cells with
    ``fill_value=None``. As in JAX: ``bounds_error`` must be False (True is a
    ``NotImplementedError``: traced points cannot raise), ``nearest`` takes the lower
    point at exactly half way, and the axes are not checked for being increasing (a
    decreasing axis gives wrong results). The interpolator is a pytree (grid, values,
    fill value), so it can be an argument of ``jit`` and ``grad`` differentiates through
    ``values`` and ``xi``.
    """

    def __init__(
        self,
        points: Any,
        values: Any,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: Any = np.nan,
    ) -> None:
        name = "RegularGridInterpolator"
        if method not in _METHODS:
            raise ValueError(f"{name}: expected method 'linear' or 'nearest', got {method!r}.")
        if bounds_error:
            raise NotImplementedError(
                f"{name}: bounds_error=True is not supported (as in JAX: points may be "
                f"traced, so an out-of-bounds point cannot raise); use the default "
                f"bounds_error=False with a fill_value."
            )
        values = _array(values)
        vdt = core.get_aval(values).dtype
        if vdt.kind not in "biufc":
            raise TypeError(f"{name}: expected numeric values, got dtype {vdt}.")
        if vdt.kind not in "fc":
            values = values.astype(np.float64)
        ndim = len(core.get_aval(values).shape)
        if len(points) > ndim:
            raise ValueError(
                f"{name}: expected at most {ndim} point arrays (values has {ndim} "
                f"dimensions), got {len(points)}."
            )
        grid = tuple(_array(p) for p in points)
        for axis, g in enumerate(grid):
            shape = core.get_aval(g).shape
            if len(shape) != 1 or shape[0] != core.get_aval(values).shape[axis] or shape[0] < 2:
                raise ValueError(
                    f"{name}: expected points[{axis}] to be 1-d with values.shape[{axis}] "
                    f"= {core.get_aval(values).shape[axis]} (>= 2) entries, got shape "
                    f"{tuple(shape)}."
                )
        if fill_value is not None:
            fill_value = _array(fill_value)
            if not np.can_cast(
                core.get_aval(fill_value).dtype, core.get_aval(values).dtype, "same_kind"
            ):
                raise ValueError(
                    f"{name}: expected fill_value None or of a dtype castable to the values' "
                    f"{core.get_aval(values).dtype}, got {core.get_aval(fill_value).dtype}."
                )
        self.method = method
        self.bounds_error: bool = bounds_error
        self.fill_value = fill_value
        self.grid = grid
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(
                f"RegularGridInterpolator: expected method 'linear' or 'nearest', got {method!r}."
            )
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        shape = core.get_aval(xi).shape
        if shape[-1] != ndim:
            raise ValueError(
                f"RegularGridInterpolator: expected points xi with {ndim} coordinates "
                f"(last axis), got shape {tuple(shape)}."
            )
        flat = fnp.reshape(xi, (-1, ndim))
        cells, fractions, outside = self._locate(flat)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            result = self._at([fnp.where(y <= 0.5, i, i + 1) for i, y in zip(cells, fractions)])
        if self.fill_value is not None:
            rank = len(core.get_aval(result).shape)
            mask = fnp.reshape(outside, (-1,) + (1,) * (rank - 1))
            result = fnp.where(mask, self.fill_value, result)
        trailing = core.get_aval(self.values).shape[ndim:]
        return fnp.reshape(result, tuple(shape[:-1]) + tuple(trailing))

    def _locate(self, flat: Any) -> tuple[list[Any], list[Any], Any]:
        """For each axis, the cell (its lower index) of every point and the fraction of
        the cell below the point; and whether each point is outside the grid."""
        cells, fractions = [], []
        outside = fnp.zeros(core.get_aval(flat).shape[0], bool)
        for axis, g in enumerate(self.grid):
            x = flat[:, axis]
            n = core.get_aval(g).shape[0]
            i = fnp.clip(fnp.searchsorted(g, x) - 1, 0, n - 2)
            cells.append(i)
            lo, hi = li.index_take(g, i, 0, "clip"), li.index_take(g, i + 1, 0, "clip")
            fractions.append((x - lo) / (hi - lo))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fractions, outside

    def _at(self, index: list[Any]) -> Any:
        """``values[tuple(index)]`` for indices in range by construction, read by a gather
        that does not look at their values (indexing would check them eagerly, and an
        eager derivative's recording could then not be reused)."""
        return li.gather(self.values, index, tuple(range(len(index))), "clip")

    def _linear(self, cells: list[Any], fractions: list[Any]) -> Any:
        extra = len(core.get_aval(self.values).shape) - len(cells)
        total = None
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weight = None
            for up, y in zip(corner, fractions):
                w = y if up else 1 - y
                weight = w if weight is None else weight * w
            term = self._at([i + up for i, up in zip(cells, corner)])
            term = term * fnp.reshape(weight, (-1,) + (1,) * extra)
            total = term if total is None else total + term
        return total


def _unflatten(aux: tuple[str, bool], children: Any) -> RegularGridInterpolator:
    # Not through __init__: transforms rebuild the tree with tracers or placeholders.
    f = object.__new__(RegularGridInterpolator)
    f.grid, f.values, f.fill_value = children
    f.method, f.bounds_error = aux
    return f


register_pytree_node(
    RegularGridInterpolator,
    lambda f: ((f.grid, f.values, f.fill_value), (f.method, f.bounds_error)),
    _unflatten,
)
