"""Counting, histograms and interpolation of functrace.numpy: ``bincount``,
``digitize``, ``histogram``, ``histogram_bin_edges``, ``histogram2d``,
``histogramdd`` and ``interp`` (exported through ``_sets``).

Plain NumPy inputs go to NumPy. On tracers every function is a composite of
``searchsorted`` (bin positions), ``scatter_add`` (counts and weights), gathers and
``where``, so all of them batch and jit; histograms differentiate with respect to
their weights and, through the bin edges of an automatic range (``min``/``max``), to
the data; ``interp`` with respect to ``x``, ``xp`` and ``fp``.

Decisions:

* Dtypes are NumPy's, not JAX's: counts are int64 (the weights' dtype with weights:
  NumPy sums in float64, then casts), ``histogramdd``/``histogram2d`` give float64,
  ``bincount`` with weights float64, ``interp`` float64. Edges follow NumPy's
  ``linspace`` in the dtype NumPy uses. Complex weights and a complex ``fp`` work on
  NumPy inputs only (complex tracers are not supported).
* Output lengths must be known while tracing: ``bincount`` needs ``length=`` (JAX's
  keyword) when the values are abstract (under ``jit``, batched under ``vmap``); with
  ``length`` values ``>= length`` are dropped. Known values are checked as NumPy checks
  them (a negative one raises); abstract negative values count in bin 0, as in JAX.
  Histograms need a static number of bins (an int, or edges of a known length);
  string ``bins`` (``"auto"``...) need known values.
* Values are read only where an output shape depends on them (``bincount`` without
  ``length``, string ``bins``, a traced number of bins). Checks of values (negative
  counts, monotonic bins, a finite automatic range, a zero period) run on NumPy
  values; traced ones pass unchecked, under ``grad`` as under ``jit`` (a NaN range
  gives NaN edges), so that eager derivative programs stay reusable.
* ``interp``: the derivative at a knot is the slope of the interval to its right (of
  the last interval at the last knot), as in JAX; values match NumPy's, including
  its handling of infinite ``fp`` near knots. ``left``/``right`` may also be
  ``"extrapolate"`` (JAX's option: continue the first/last segment).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import elementwise as lx
from functrace.lax import gather_scatter as lg
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import array_any, asarray_or_tracer, broadcast_to_shape, cast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._functions import searchsorted
from functrace.numpy._indexing import where
from functrace.numpy._math import (
    add,
    equal,
    isnan,
    multiply,
    not_equal,
    remainder,
    subtract,
    true_divide,
)
from functrace.numpy._shape import ravel, reshape

_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)
_COMPLEX128 = np.dtype(np.complex128)
_ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
_WEAK_KEYS = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _array(fname: str, x: Any) -> Any:
    x = asarray_or_tracer(x, fname)
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _to(x: Any, dt: np.dtype) -> Any:
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dt)
    return x if _dtype(x) == dt else cast(x, dt)


def _known(x: Any) -> np.ndarray | None:
    """The value of ``x`` for a check, when it is not traced. Value checks skip traced
    arrays (as under jit): reading one would make an eager derivative program depend
    on it, and never be reused (see the module docstring)."""
    return None if isinstance(x, Tracer) else np.asarray(x)


def _gather0(x: Any, idx: Any) -> Any:
    """``x[idx]`` along axis 0 for indices known to be in range (traced index values
    are not read, unlike ``take``)."""
    if not isinstance(x, Tracer) and not isinstance(idx, Tracer):
        return np.take(x, idx, axis=0)
    return lg.gather(x, [idx], (0,), "clip")


def _item(x: Any, i: int) -> Any:
    """``x[i]`` of a 1-d array or tracer, as a 0-d value."""
    n = _shape(x)[0]
    i %= n
    return ls.reshape(ls.slice(x, (i,), (i + 1,)), ())


def _scatter_sum(idx: Any, w: Any, n: int) -> Any:
    """An (n,) array: the sum of ``w`` at each index of ``idx`` (all in [0, n))."""
    zeros = np.zeros(n, _dtype(w))
    if not _shape(idx)[0]:
        return zeros
    return lg.scatter_add(zeros, w, [idx], (0,), "clip")


def _complex_error(fname: str, what: str) -> TypeError:
    return TypeError(f"{fname}: expected real {what}, got a complex array.")


def _numpy_first(np_fn: Any, name: str) -> Any:
    """NumPy's function; when NumPy rejects the input, the traced path's checks run
    first so that the error names the function and what it expected."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return np_fn(*args, **kwargs)
        except (ValueError, TypeError):
            globals()[name].traced(*args, **kwargs)
            raise

    return call


# ---------------------------------------------------------------------------
# bincount
# ---------------------------------------------------------------------------


def _bincount_args(x: Any, weights: Any, minlength: Any, length: Any) -> tuple[Any, Any, int]:
    """Validated (x, weights, minlength); raises NumPy's errors in our words."""
    x = _array("bincount", x)
    if len(_shape(x)) != 1:
        raise ValueError(
            f"bincount: expected a 1-d array of non-negative integers, got shape {_shape(x)}."
        )
    if _dtype(x).kind not in "biu":
        raise TypeError(
            f"bincount: expected an integer array, got {_dtype(x).name}. Cast it with "
            f".astype(int) first."
        )
    try:
        minlength = operator.index(0 if minlength is None else minlength)
    except TypeError:
        raise TypeError(f"bincount: expected an integer minlength, got {minlength!r}.") from None
    if minlength < 0:
        raise ValueError(f"bincount: expected a non-negative minlength, got {minlength}.")
    if weights is not None:
        weights = _array("bincount", weights)
        if _shape(weights) != _shape(x):
            raise ValueError(
                f"bincount: expected weights of the shape of x {_shape(x)}, got {_shape(weights)}."
            )
        if _dtype(weights).kind == "c":
            raise _complex_error("bincount", "weights")
    val = _known(x)
    if val is not None and val.size and val.min() < 0:
        raise ValueError(
            f"bincount: expected non-negative integers, got {val.min()}. Shift the values "
            f"or drop the negative ones first."
        )
    return x, weights, minlength


def _np_bincount(x: Any, /, weights: Any = None, minlength: Any = 0, *, length: Any = None) -> Any:
    xa, w, ml = _bincount_args(x, weights, minlength, length)
    if length is None:
        return np.bincount(xa, w, ml)
    return bincount.traced(xa, w, ml, length=length)  # type: ignore[attr-defined]


@numpy_path(_np_bincount)
def bincount(x: Any, /, weights: Any = None, minlength: Any = 0, *, length: Any = None) -> Any:
    """How often each value ``0, 1, ...`` occurs in the 1-d non-negative integer array
    ``x`` (int64), or the sum of the ``weights`` at each value (float64); at least
    ``minlength`` entries.

    ``length`` (JAX's keyword) fixes the output length (values ``>= length`` are
    dropped); it is required when the values are not known while tracing (under
    ``jit`` or ``vmap``). Differentiable with respect to ``weights``.

    >>> import functrace.numpy as fnp
    >>> fnp.bincount([0, 1, 1, 3])
    array([1, 2, 0, 1])
    >>> fnp.bincount([0, 1, 1, 3], weights=[0.5, 1.0, 2.0, 4.0], length=3)
    array([0.5, 3. , 0. ])
    """
    x, w, minlength = _bincount_args(x, weights, minlength, length)
    if length is None:
        val = core.concrete_or_none(x)
        if val is None:
            raise ConcretizationError(
                "bincount: expected length= for values that are not known while tracing "
                "(under jit or vmap), got length=None. The output length is max(x) + 1, "
                "which depends on the values: pass length=n (as in JAX; larger values are "
                "dropped)."
            )
        n = max(minlength, int(val.max()) + 1 if val.size else 0)
    else:
        try:
            n = operator.index(length)
        except TypeError:
            raise TypeError(
                f"bincount: expected length=None or a Python int, got {length!r}."
            ) from None
        if n < 0:
            raise ValueError(f"bincount: expected a non-negative length, got {n}.")
    # slot n collects what falls outside [0, n); negative values count in bin 0 (JAX)
    if _dtype(x).kind == "u":
        idx = _to(lx.min(x, np.full(_shape(x), min(n, np.iinfo(_dtype(x)).max), _dtype(x))), _INT64)
    else:
        idx = _to(x, _INT64)
    m = _shape(x)[0]
    idx = lx.clamp(np.int64(0), idx, np.int64(n)) if m else idx
    ones = np.ones(m, _INT64) if w is None else _to(w, _FLOAT64)
    return ls.slice(_scatter_sum(idx, ones, n + 1), (0,), (n,))


# ---------------------------------------------------------------------------
# digitize
# ---------------------------------------------------------------------------

_DIGITIZE_METHODS = (None, "scan", "scan_unrolled", "sort", "compare_all")


def _digitize_args(x: Any, bins: Any, method: Any) -> tuple[Any, Any, int | None]:
    """(x, bins, direction): direction 1 or -1 when the bins are known, else None."""
    if method not in _DIGITIZE_METHODS:
        raise ValueError(
            f"digitize: expected method None, 'scan', 'scan_unrolled', 'sort' or "
            f"'compare_all', got {method!r}."
        )
    x, bins = _array("digitize", x), _array("digitize", bins)
    if _dtype(x).kind == "c":
        raise _complex_error("digitize", "x")
    if len(_shape(bins)) != 1:
        raise ValueError(f"digitize: expected 1-d bins, got shape {_shape(bins)}.")
    val = _known(bins)
    if val is None:
        return x, bins, None
    d = np.diff(val)
    if np.all(d >= 0):
        return x, bins, 1
    if np.all(d <= 0):
        return x, bins, -1
    raise ValueError(
        "digitize: expected bins that increase or decrease monotonically, got "
        f"{val!r:.80}. Sort the bins."
    )


def _np_digitize(x: Any, bins: Any, right: bool = False, *, method: Any = None) -> Any:
    _digitize_args(x, bins, method)
    return np.digitize(x, bins, right)


@numpy_path(_np_digitize)
def digitize(x: Any, bins: Any, right: bool = False, *, method: Any = None) -> Any:
    """The int64 index of the bin of each element of ``x``: ``i`` with
    ``bins[i-1] <= x < bins[i]`` for increasing ``bins`` (``bins[i-1] < x <= bins[i]``
    with ``right``), mirrored for decreasing ``bins``.

    ``method`` (JAX's keyword) is accepted and changes nothing. Integer output: no
    derivative (JAX's is zero as well).

    >>> import functrace.numpy as fnp
    >>> fnp.digitize([0.5, 1.0, 2.5, 9.0], [1.0, 2.0, 3.0])
    array([0, 1, 2, 3])
    """
    x, bins, direction = _digitize_args(x, bins, method)
    side = "left" if right else "right"
    n = _shape(bins)[0]
    up = searchsorted(bins, x, side=side) if direction != -1 else None
    if direction == 1 or n == 0:
        return up
    down = subtract(np.int64(n), searchsorted(ls.rev(bins, (0,)), x, side=side))
    if direction == -1:
        return down
    return where(lx.gt(_item(bins, 0), _item(bins, -1)), down, up)


# ---------------------------------------------------------------------------
# Bin edges
# ---------------------------------------------------------------------------


def _key(v: Any) -> Any:
    """``v`` for ``np.result_type``: Python scalars and weak values stay weak."""
    if isinstance(v, (bool, int, float, complex)):
        return v
    aval = core.get_aval(v)
    return _WEAK_KEYS[aval.dtype.kind] if aval.weak_type else aval.dtype


def _scalar(fname: str, v: Any, what: str) -> Any:
    if isinstance(v, Tracer):
        if _shape(v):
            raise ValueError(f"{fname}: expected a scalar {what}, got shape {_shape(v)}.")
        return v
    if isinstance(v, (bool, int, float, np.generic)):
        return v
    a = np.asarray(v)
    if a.ndim:
        raise ValueError(f"{fname}: expected a scalar {what}, got shape {a.shape}.")
    return a[()]


def _outer_edges(fname: str, a: Any, rng: Any) -> tuple[Any, Any]:
    """NumPy's first and last edge: ``range``, or the data's min and max (0 and 1 when
    empty), widened by 0.5 on each side when they are equal."""
    if rng is not None:
        try:
            lo, hi = rng
        except (TypeError, ValueError):
            raise ValueError(f"{fname}: expected range=(min, max), got {rng!r}.") from None
        lo, hi = _scalar(fname, lo, "range entry"), _scalar(fname, hi, "range entry")
        vlo, vhi = _known(lo), _known(hi)
        if vlo is not None and vhi is not None:
            if vlo > vhi:
                raise ValueError(
                    f"{fname}: expected range=(min, max) with min <= max, got ({vlo}, {vhi})."
                )
            if not (np.isfinite(vlo) and np.isfinite(vhi)):
                raise ValueError(f"{fname}: expected a finite range, got [{vlo}, {vhi}].")
    elif math.prod(_shape(a)) == 0:
        return 0, 1
    else:
        axes = tuple(range(len(_shape(a))))
        lo, hi = lr.reduce_min(a, axes), lr.reduce_max(a, axes)
        vlo, vhi = _known(lo), _known(hi)
        if vlo is not None and vhi is not None and not (np.isfinite(vlo) and np.isfinite(vhi)):
            raise ValueError(
                f"{fname}: expected finite data for an automatic range, got the range "
                f"[{vlo}, {vhi}]. Pass range=(min, max), or drop NaN and inf first."
            )
    if not isinstance(lo, Tracer) and not isinstance(hi, Tracer):
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return lo, hi
    same = lx.eq(*_common(lo, hi))
    return where(same, subtract(lo, 0.5), lo), where(same, add(hi, 0.5), hi)


def _common(*xs: Any) -> list[Any]:
    dt = np.result_type(*[_key(x) for x in xs])
    return [_to(x, dt) for x in xs]


def _linspace(lo: Any, hi: Any, num: int, out_dtype: np.dtype | None) -> Any:
    """NumPy's ``linspace(lo, hi, num)`` (num >= 2), computed as NumPy computes it:
    ``i * step + lo`` in the inexact result dtype of the ends, the last entry ``hi``."""
    dt = np.result_type(_key(lo), _key(hi))
    dt = dt if dt.kind in "fc" else _FLOAT64
    lo, hi = _to(lo, dt), _to(hi, dt)
    step = true_divide(subtract(hi, lo), np.asarray(num - 1, dt))
    y = add(multiply(np.arange(num - 1, dtype=dt), step), lo)
    y = ls.concatenate([_to(y, dt), ls.reshape(_to(hi, dt), (1,))], 0)
    return y if out_dtype is None else _to(y, out_dtype)


def _num_bins(fname: str, bins: Any, what: str = "bins") -> int:
    if isinstance(bins, Tracer):
        v = core.concrete_or_none(bins)
        if v is None:
            raise ConcretizationError(
                f"{fname}: expected a static number of {what}, got an abstract tracer. The "
                f"number of bins fixes the output shape: pass a Python int."
            )
        bins = v[()]
    try:
        n = operator.index(bins)
    except TypeError:
        raise TypeError(
            f"{fname}: expected {what} as an int, a string or a 1-d array of edges, got {bins!r}."
        ) from None
    if n < 1:
        raise ValueError(f"{fname}: expected a positive number of {what}, got {n}.")
    return n


def _edges_array(fname: str, bins: Any, what: str = "bins") -> Any:
    edges = _array(fname, bins)
    if len(_shape(edges)) != 1:
        raise ValueError(
            f"{fname}: expected {what} as a 1-d array of edges, got shape {_shape(edges)}."
        )
    if _dtype(edges).kind == "c":
        raise _complex_error(fname, what)
    val = _known(edges)
    if val is not None and np.any(val[:-1] > val[1:]):
        raise ValueError(
            f"{fname}: expected {what} edges that increase monotonically, got {val!r:.80}."
        )
    return edges


def _bin_edges(fname: str, a: Any, bins: Any, rng: Any, weights: Any) -> tuple[Any, bool]:
    """(edges, uniform) of a 1-d histogram of the flat ``a``."""
    if isinstance(bins, str):
        val = core.concrete_or_none(a)
        if val is None:
            raise ConcretizationError(
                f"{fname}: expected data with known values for bins={bins!r}, got an "
                f"abstract tracer. The estimated number of bins decides the output shape: "
                f"pass an int or an array of edges."
            )
        if weights is not None:
            raise TypeError(
                f"{fname}: expected weights=None with bins={bins!r}, got weights. The bin "
                f"estimators do not support weighted data: pass an int or edges."
            )
        if bins not in _ESTIMATORS:
            raise ValueError(
                f"{fname}: expected bins an int, edges or one of {', '.join(_ESTIMATORS)}, "
                f"got {bins!r}."
            )
        if rng is not None:
            rng = tuple(_outer_edges(fname, val, rng))
        return np.histogram_bin_edges(val, bins, rng), True
    if np.ndim(bins) == 0 and not (isinstance(bins, Tracer) and _shape(bins)):
        n = _num_bins(fname, bins)
        lo, hi = _outer_edges(fname, a, rng)
        bin_type = np.result_type(_key(lo), _key(hi), _key(a))
        if bin_type.kind in "biu":
            bin_type = _FLOAT64
        return _linspace(lo, hi, n + 1, bin_type), True
    return _edges_array(fname, bins), False


def _bin_index(x: Any, edges: Any) -> Any:
    """int64 in [0, len(edges)]: 0 below, len(edges) above (or NaN); the last edge
    belongs to the last bin."""
    nb = _shape(edges)[0]
    idx = searchsorted(edges, x, side="right")
    return where(equal(x, _item(edges, -1)), np.int64(nb - 1), idx)


def _check_data(fname: str, a: Any, weights: Any) -> tuple[Any, Any]:
    a = _array(fname, a)
    if _dtype(a).kind == "c":
        raise _complex_error(fname, "data")
    if weights is not None:
        weights = _array(fname, weights)
        if _shape(weights) != _shape(a):
            raise ValueError(
                f"{fname}: expected weights of the shape of a {_shape(a)}, got {_shape(weights)}."
            )
    return a, weights


# ---------------------------------------------------------------------------
# histogram, histogram_bin_edges
# ---------------------------------------------------------------------------


@numpy_path(_numpy_first(np.histogram_bin_edges, "histogram_bin_edges"))
def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:  # noqa: A002
    """The bin edges ``histogram`` uses: ``bins + 1`` evenly spaced edges over ``range``
    (default: the data's min and max), the given edges, or NumPy's estimate for a
    string ``bins`` (which needs known values). Differentiable with respect to ``a``
    through the automatic range.

    >>> import functrace.numpy as fnp
    >>> fnp.histogram_bin_edges([1.0, 2.0, 5.0], bins=4)
    array([1., 2., 3., 4., 5.])
    """
    a, weights = _check_data("histogram_bin_edges", a, weights)
    return _bin_edges("histogram_bin_edges", ravel(a), bins, range, weights)[0]


@numpy_path(_numpy_first(np.histogram, "histogram"))
def histogram(
    a: Any,
    bins: Any = 10,
    range: Any = None,
    density: Any = None,
    weights: Any = None,  # noqa: A002
) -> tuple[Any, Any]:
    """``(hist, bin_edges)``: the number of elements of ``a`` (flattened) in each bin,
    or the sum of their ``weights``; with ``density`` the values of a probability
    density over the bins. Bins are half-open ``[e_i, e_i+1)`` except the last, which
    holds its right edge; values outside the edges are left out.

    ``bins`` is a number of equal bins over ``range`` (default: the data's min and
    max), an array of edges, or a string estimator (known values only). NumPy's
    dtypes (int64 counts). Differentiable with respect to ``weights`` and, through the
    automatic range and ``density``, to ``a``.

    >>> import functrace.numpy as fnp
    >>> fnp.histogram([1.0, 2.0, 2.5, 5.0], bins=4)
    (array([1, 2, 0, 1]), array([1., 2., 3., 4., 5.]))
    """
    fname = "histogram"
    a, weights = _check_data(fname, a, weights)
    a = ravel(a)
    edges, uniform = _bin_edges(fname, a, bins, range, weights)
    nb = _shape(edges)[0]
    x = _to(a, _dtype(edges)) if uniform else a
    idx = _bin_index(x, edges)
    if weights is None:
        n = _scatter_sum(idx, np.ones(_shape(a), _INT64), nb + 1)
    else:
        wdt = _dtype(weights)
        if wdt.kind == "c":
            raise TypeError(
                "histogram: expected real weights on traced arrays, got complex ones "
                "(complex tracers are not supported; NumPy inputs are)."
            )
        n = _scatter_sum(idx, _to(ravel(weights), _FLOAT64), nb + 1)
        n = not_equal(n, 0.0) if wdt == np.bool_ else _to(n, wdt)
    n = ls.slice(n, (1,), (nb,))
    if density:
        db = _to(subtract(ls.slice(edges, (1,), (nb,)), ls.slice(edges, (0,), (nb - 1,))), _FLOAT64)
        n = true_divide(true_divide(n, db), lr.reduce_sum(n, (0,)))
    return n, edges


# ---------------------------------------------------------------------------
# histogramdd, histogram2d
# ---------------------------------------------------------------------------


def _sample_matrix(fname: str, sample: Any) -> Any:
    """NumPy's (N, D) view of ``sample``: a 2-d array as it is, a 1-d one as one
    dimension, a list of coordinate arrays as columns."""
    if isinstance(sample, (list, tuple)):
        s = array_any(sample)
        s = np.asarray(s) if not isinstance(s, (Tracer, np.ndarray)) else s
        s = ls.reshape(s, (1, 1)) if not _shape(s) else s
        s = ls.reshape(s, (1, _shape(s)[0])) if len(_shape(s)) == 1 else s
        if len(_shape(s)) != 2:
            raise ValueError(f"{fname}: expected a (N, D) sample, got shape {_shape(s)[::-1]}.")
        return ls.transpose(s, (1, 0))
    s = _array(fname, sample)
    shape = _shape(s)
    if len(shape) > 2:
        raise ValueError(f"{fname}: expected a (N, D) sample, got shape {shape}.")
    if len(shape) < 2:
        s = ls.reshape(s, (math.prod(shape), 1))
    if _dtype(s).kind == "c":
        raise _complex_error(fname, "sample")
    return s


def _histogramdd_impl(
    fname: str, sample: Any, bins: Any, rng: Any, density: Any, weights: Any
) -> tuple[Any, list[Any]]:
    s = _sample_matrix(fname, sample)
    npts, d = _shape(s)
    try:
        nbins_given = len(bins)
    except TypeError:
        bins = [bins] * d
    else:
        if nbins_given != d:
            raise ValueError(
                f"{fname}: expected one bins entry per dimension ({d}), got {nbins_given}."
            )
    if rng is None:
        rng = [None] * d
    elif len(rng) != d:
        raise ValueError(f"{fname}: expected one range entry per dimension ({d}), got {len(rng)}.")
    if weights is not None:
        weights = _array(fname, weights)
        if _shape(weights) != (npts,):
            raise ValueError(
                f"{fname}: expected weights of shape ({npts},) (one per sample), got "
                f"{_shape(weights)}."
            )
        if _dtype(weights).kind == "c":
            raise _complex_error(fname, "weights")
    edges, flat, nbin = [], None, []
    for i in range(d):
        col = ls.reshape(ls.slice(s, (0, i), (npts, i + 1)), (npts,))
        b = bins[i]
        if np.ndim(b) == 0 and not (isinstance(b, Tracer) and _shape(b)):
            n = _num_bins(fname, b, f"bins[{i}]")
            e = _linspace(*_outer_edges(fname, col, rng[i]), n + 1, None)
        else:
            e = _edges_array(fname, b, f"bins[{i}]")
        edges.append(e)
        nbin.append(_shape(e)[0] + 1)
    stride = 1
    for i in reversed(range(d)):  # C-order flat index over all bins, outliers included
        col = ls.reshape(ls.slice(s, (0, i), (npts, i + 1)), (npts,))
        part = multiply(_bin_index(col, edges[i]), np.int64(stride))
        flat = part if flat is None else add(flat, part)
        stride *= nbin[i]
    w = np.ones(npts, _FLOAT64) if weights is None else _to(weights, _FLOAT64)
    hist = ls.reshape(_scatter_sum(flat, w, stride), tuple(nbin))
    hist = ls.slice(hist, (1,) * d, tuple(k - 1 for k in nbin))
    if density:
        total = lr.reduce_sum(hist, tuple(range(d)))
        for i, e in enumerate(edges):
            k = nbin[i] - 2
            de = subtract(ls.slice(e, (1,), (k + 1,)), ls.slice(e, (0,), (k,)))
            hist = true_divide(hist, reshape(de, tuple(k if j == i else 1 for j in range(d))))
        hist = true_divide(hist, total)
    return hist, edges


@numpy_path(_numpy_first(np.histogramdd, "histogramdd"))
def histogramdd(
    sample: Any,
    bins: Any = 10,
    range: Any = None,
    density: Any = None,
    weights: Any = None,  # noqa: A002
) -> tuple[Any, list[Any]]:
    """``(hist, edges)``: the multidimensional histogram of the ``(N, D)`` ``sample``
    (or of a list of ``D`` coordinate arrays), float64 counts or sums of ``weights``,
    and the list of ``D`` edge arrays. ``bins`` is one int or edge array for all
    dimensions or one per dimension; ``range`` one ``(min, max)`` or None per
    dimension. Differentiable with respect to ``weights`` (and ``sample`` through the
    automatic ranges).

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> points = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    >>> hist, edges = fnp.histogramdd(points, bins=2)
    >>> hist
    array([[1., 0.],
           [1., 1.]])
    """
    return _histogramdd_impl("histogramdd", sample, bins, range, density, weights)


def _histogram2d_impl(
    x: Any, y: Any, bins: Any, rng: Any, density: Any, weights: Any
) -> tuple[Any, Any, Any]:
    x, y = _array("histogram2d", x), _array("histogram2d", y)
    if len(_shape(x)) != 1 or _shape(x) != _shape(y):
        raise ValueError(
            f"histogram2d: expected 1-d x and y of one length, got shapes {_shape(x)} and "
            f"{_shape(y)}."
        )
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    hist, edges = _histogramdd_impl("histogram2d", [x, y], bins, rng, density, weights)
    return hist, edges[0], edges[1]


@numpy_path(_numpy_first(np.histogram2d, "histogram2d"))
def histogram2d(
    x: Any,
    y: Any,
    bins: Any = 10,
    range: Any = None,
    density: Any = None,
    weights: Any = None,  # noqa: A002
) -> tuple[Any, Any, Any]:
    """``(hist, xedges, yedges)``: the 2-d histogram of the points ``(x[i], y[i])``
    (``histogramdd`` of ``[x, y]``): float64, ``hist[i, j]`` counts the points in
    x-bin ``i`` and y-bin ``j``.

    >>> import functrace.numpy as fnp
    >>> fnp.histogram2d([0.0, 1.0, 1.0], [0.0, 1.0, 0.0], bins=2)[0]
    array([[1., 0.],
           [1., 1.]])
    """
    return _histogram2d_impl(x, y, bins, range, density, weights)


# ---------------------------------------------------------------------------
# interp
# ---------------------------------------------------------------------------


def _interp_real(x: Any, xp: Any, fp: Any, left: Any, right: Any) -> Any:
    """Piecewise-linear interpolation, all real float64 (NumPy's formulas)."""
    n = _shape(xp)[0]
    shape = _shape(x)
    xp0, fp0, xpn, fpn = _item(xp, 0), _item(fp, 0), _item(xp, -1), _item(fp, -1)
    lval = fp0 if left is None or isinstance(left, str) else left
    rval = fpn if right is None or isinstance(right, str) else right
    if n == 1:  # NumPy: left below, right above, fp[0] otherwise (NaN included)
        res = broadcast_to_shape(fp0, shape)
        res = where(lx.lt(x, broadcast_to_shape(xp0, shape)), lval, res)
        return where(lx.gt(x, broadcast_to_shape(xp0, shape)), rval, res)
    j = subtract(searchsorted(xp, x, side="right"), np.int64(1))  # -1 .. n-1
    jc = (
        lx.clamp(np.int64(0), _to(j, _INT64), np.int64(n - 2))
        if shape
        else lx.clamp(np.int64(0), j, np.int64(n - 2))
    )
    jn = add(jc, np.int64(1))
    x0, x1, y0, y1 = (_gather0(v, i) for v, i in ((xp, jc), (xp, jn), (fp, jc), (fp, jn)))
    slope = true_divide(subtract(y1, y0), subtract(x1, x0))
    # anchor at the left knot; at (and beyond) the last knot at the right one, so that
    # x == xp[-1] gives fp[-1] exactly and the derivative there is the last slope
    end = lx.ge(j, broadcast_to_shape(np.int64(n - 1), shape))
    xa, ya = where(end, x1, x0), where(end, y1, y0)
    xb, yb = where(end, x0, x1), where(end, y0, y1)
    res = add(multiply(slope, subtract(x, xa)), ya)
    res = where(lx.bitwise_and(isnan(res), lx.eq(x, xa)), ya, res)  # knot of an infinite slope
    res = where(isnan(res), add(multiply(slope, subtract(x, xb)), yb), res)
    res = where(lx.bitwise_and(isnan(res), lx.eq(y0, y1)), y0, res)
    if not isinstance(left, str):
        res = where(lx.lt(x, broadcast_to_shape(xp0, shape)), lval, res)
    if not isinstance(right, str):
        res = where(lx.gt(x, broadcast_to_shape(xpn, shape)), rval, res)
    return where(isnan(x), x, res)


def _interp_side(name: str, v: Any, dt: np.dtype) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        if v != "extrapolate":
            raise ValueError(f"interp: expected {name} None, a scalar or 'extrapolate', got {v!r}.")
        return v
    v = _array("interp", v)
    if _shape(v):
        raise TypeError(f"interp: expected a scalar {name}, got shape {_shape(v)}.")
    if dt.kind != "c" and _dtype(v).kind == "c":
        raise _complex_error("interp", name)
    return _to(v, dt)


def _interp_args(
    x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any
) -> tuple[Any, Any, Any, Any, Any, Any]:
    x, xp, fp = _array("interp", x), _array("interp", xp), _array("interp", fp)
    if _dtype(x).kind == "c" or _dtype(xp).kind == "c":
        raise _complex_error("interp", "x and xp")
    if len(_shape(xp)) != 1 or len(_shape(fp)) != 1:
        raise ValueError(
            f"interp: expected 1-d xp and fp, got shapes {_shape(xp)} and {_shape(fp)}."
        )
    if _shape(xp)[0] == 0:
        raise ValueError("interp: expected at least one sample point in xp, got none.")
    if _shape(xp) != _shape(fp):
        raise ValueError(
            f"interp: expected xp and fp of one length, got {_shape(xp)[0]} and {_shape(fp)[0]}."
        )
    dt = _COMPLEX128 if _dtype(fp).kind == "c" else _FLOAT64
    left, right = _interp_side("left", left, dt), _interp_side("right", right, dt)
    if period is not None:
        period = _array("interp", period)
        if _shape(period) or _dtype(period).kind == "c":
            raise TypeError(f"interp: expected a real scalar period, got {period!r:.60}.")
        p = _known(period)
        if p is not None and p == 0:
            raise ValueError("interp: expected a non-zero period, got 0.")
    return x, xp, fp, left, right, period


def _np_interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    _interp_args(x, xp, fp, left, right, period)
    if isinstance(left, str) or isinstance(right, str):
        return interp.traced(x, xp, fp, left, right, period)  # type: ignore[attr-defined]
    return _numpy_first(np.interp, "interp")(x, xp, fp, left, right, period)


@numpy_path(_np_interp, promote_args=(0, 1, 2))
def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``: ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside ``xp``, and with
    ``period`` a periodic ``x`` (then ``xp`` needs no order). float64 as in NumPy
    (complex128 for a complex ``fp`` of NumPy inputs; complex tracers are not
    supported).

    Differentiable in ``x``, ``xp`` and ``fp``; at a knot the derivative in ``x`` is the
    slope on its right (the last slope at the last knot), as in JAX. ``left``/``right``
    may be ``"extrapolate"`` (JAX's option).

    >>> import functrace.numpy as fnp
    >>> fnp.interp([0.5, 2.0, 9.0], [0.0, 1.0, 3.0], [0.0, 2.0, 3.0])
    array([1. , 2.5, 3. ])
    """
    x, xp, fp, left, right, period = _interp_args(x, xp, fp, left, right, period)
    if _dtype(fp).kind == "c":
        raise TypeError(
            "interp: expected real fp on traced arrays, got a complex one (complex tracers "
            "are not supported; NumPy inputs are)."
        )
    x, xp, fp = _to(x, _FLOAT64), _to(xp, _FLOAT64), _to(fp, _FLOAT64)
    if period is not None:
        p = lx.abs(_to(period, _FLOAT64))
        left = right = None
        x, xp = remainder(x, p), remainder(xp, p)
        xp, fp = ls.sort_multi([xp, fp], 0, 1)
        n = _shape(xp)[0]
        xp = ls.concatenate(
            [
                ls.reshape(subtract(_item(xp, -1), p), (1,)),
                xp,
                ls.reshape(add(_item(xp, 0), p), (1,)),
            ],
            0,
        )
        fp = ls.concatenate([ls.slice(fp, (n - 1,), (n,)), fp, ls.slice(fp, (0,), (1,))], 0)
    return _interp_real(x, xp, fp, left, right)


__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
]
