"""Statistics and small array utilities of functrace.numpy: ``count_nonzero``,
``average``, ``ptp``, ``nanmax``, ``nanmin``, ``median``, the quantiles (``quantile``,
``percentile``, ``nanquantile``, ``nanpercentile``, ``nanmedian``), ``nanargmax``,
``nanargmin``, ``array_equal`` and ``unravel_index``; and, re-exported from ``_stats2``,
``nancumsum``, ``nancumprod``, ``nanprod``, ``nanvar``, ``nanstd``, ``cov``,
``corrcoef``, ``trapezoid``, ``unwrap``, ``ediff1d``, ``gcd``, ``lcm``, ``ldexp``,
``frexp``, ``nextafter``, ``spacing`` and ``i0``.

On plain NumPy inputs each function calls NumPy directly. On tracers each is a
composite of existing lax/functrace.numpy operations (no primitive of its own), so
all of them differentiate, batch and jit through their parts.

Decisions:

* ``nanmax``/``nanmin`` replace NaNs by ``-inf``/``inf`` before ``reduce_max``/
  ``reduce_min`` (their gradient is 0) and put NaN back where a slice is all NaN (as
  NumPy, without its warning); with ``initial`` an all-NaN slice gives ``initial``.
  Complex entries with a NaN part become ``-inf-infj``/``inf+infj`` (below/above every
  other value, as NumPy's ``fmax.reduce`` skips them), and an all-NaN slice gives its
  first NaN entry, as NumPy's.
* ``median`` is the middle element of a (stable) sort along the reduced axes, or
  ``(lo + hi) * 0.5`` of the two middle ones for even sizes (as ``jnp.median``); it is
  NaN where the slice holds a NaN, as in NumPy. Integers and bools give float64.
* The quantiles sort the reduced axes (flattened into one, NaNs last) and gather the one
  or two values each method reads, at NumPy's "virtual index" (the same expressions, so
  the same positions bit for bit) with NumPy's interpolation (``lerp`` from the nearer
  end). All 13 of NumPy's methods, with NumPy's result dtypes (asked of NumPy on a dummy:
  they depend on the method and on how ``q`` is typed). ``nearest`` rounds ties to even
  as NumPy (``jnp.quantile`` rounds them down). A traced ``q`` outside [0, 1] gives NaN
  (NumPy raises, JAX clamps). ``weights`` work on NumPy inputs only. NumPy makes the
  result dtype of ``nanquantile`` value-dependent when every element is NaN (``a``'s
  dtype); traced, the dtype is the usual one.
* ``nanargmax``/``nanargmin`` give -1 for a slice of NaNs only, as JAX, on NumPy inputs
  too (NumPy raises ``ValueError``): eager and traced results agree. Complex NaNs
  become ``-inf+0j``/``inf+0j`` as in NumPy (so they can tie with, and come before,
  entries such as ``-inf-1j``).
* ``average`` divides by the sum of the weights without checking it for zero (NumPy
  raises ``ZeroDivisionError``; a traced sum cannot be inspected).
* ``unravel_index`` on tracers follows ``jnp.unravel_index``: negative indices count
  from the end and out-of-bounds indices are clipped (NumPy raises, which a traced
  index cannot do).
* ``array_equal`` on tracers returns a traced 0-d bool (a Python ``False`` when the
  shapes differ, which is known while tracing).
"""

from __future__ import annotations

import builtins
import functools
import warnings
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import elementwise as lx
from functrace.lax import gather_scatter as li
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    keepdims_shape,
    no_out,
    normalize_axis,
    shape_tuple,
    slice_along,
)
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._math import (
    add,
    ceil,
    clip,
    equal,
    floor,
    floor_divide,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    remainder,
    rint,
    subtract,
    true_divide,
)
from functrace.numpy._reductions import (
    _arg_extremum,
    _count,
    _extremum,
    _finish,
    _mean_dtype,
    _no_complex,
    _prepare,
    _truth,
    _where_kw,
    argmax,
    argmin,
    mean,
)
from functrace.numpy._reductions import all as _all
from functrace.numpy._shape import reshape, transpose
from functrace.numpy._stats2 import (  # re-exported: see __all__
    corrcoef,
    cov,
    ediff1d,
    frexp,
    gcd,
    i0,
    lcm,
    ldexp,
    nancumprod,
    nancumsum,
    nanprod,
    nanstd,
    nanvar,
    nextafter,
    spacing,
    trapezoid,
    unwrap,
)

_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)

# ---------------------------------------------------------------------------
# count_nonzero, average, ptp
# ---------------------------------------------------------------------------


@numpy_path(
    lambda a, axis=None, *, keepdims=False: np.count_nonzero(a, axis=axis, keepdims=keepdims)
)
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The number of non-zero elements along ``axis`` (int64; NaN counts as non-zero).

    >>> import functrace.numpy as fnp
    >>> fnp.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1)
    array([2, 1])
    """
    a, aval, axes = _prepare("count_nonzero", a, axis)
    r = lr.reduce_sum(cast(_truth(a), _INT64), axes)
    return _finish(r, aval.shape, axes, keepdims)


def _np_average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    return np.average(a, axis, weights, returned, keepdims=keepdims)  # type: ignore[call-overload]


def _weights_like(w: Any, shape: tuple[int, ...], axis: Any) -> Any:
    """The weights broadcast to ``shape``: equal shapes, or 1-d (or one entry per axis of a
    tuple ``axis``, in that order) along ``axis``, as NumPy allows."""
    wshape = core.get_aval(w).shape
    if wshape == shape:
        return w
    if axis is None:
        raise TypeError(
            f"average: expected axis= when the shapes of a and weights differ, got shapes "
            f"{shape} and {wshape}. Pass the axis the weights run along."
        )
    given = axis if isinstance(axis, (tuple, list)) else (axis,)
    given = tuple(normalize_axis("average", ax, len(shape)) for ax in given)
    if wshape != tuple(shape[ax] for ax in given):
        raise ValueError(
            f"average: expected weights of shape {tuple(shape[ax] for ax in given)} "
            f"(the length of a along axis {axis}), got {wshape}."
        )
    w = transpose(w, tuple(int(i) for i in np.argsort(given)))
    w = reshape(w, tuple(d if i in given else 1 for i, d in enumerate(shape)))
    return broadcast_to_shape(w, shape)


@numpy_path(_np_average)
def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    """Weighted mean ``sum(a * weights) / sum(weights)`` over ``axis`` (the plain mean
    without weights); with ``returned`` also the sum of the weights, broadcast to the
    result's shape. Integers and bools average in float64, as in NumPy.

    >>> import functrace.numpy as fnp
    >>> fnp.average([1.0, 2.0, 4.0], weights=[1.0, 1.0, 2.0])
    np.float64(2.75)
    """
    a, aval, axes = _prepare("average", a, axis)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        scl = lx.full_like(avg, _count(aval.shape, axes))
        return (avg, scl) if returned else avg
    w = asarray_or_tracer(weights, "average")
    waval = core.get_aval(w)
    extra = [(_FLOAT64, False)] if aval.dtype.kind in "biu" else []
    dt, _ = dtypes.promote((aval.dtype, aval.weak_type), (waval.dtype, waval.weak_type), *extra)
    w = cast(_weights_like(w, aval.shape, axis), dt)
    scl = _finish(lr.reduce_sum(w, axes), aval.shape, axes, keepdims)
    total = _finish(lr.reduce_sum(multiply(cast(a, dt), w), axes), aval.shape, axes, keepdims)
    avg = lx.div(total, scl)
    return (avg, scl) if returned else avg


def _np_ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    return np.ptp(a, axis=axis, out=out, keepdims=keepdims)


@numpy_path(_np_ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range ``max - min`` over ``axis`` ("peak to peak").

    NOTE: at ties the gradient is shared equally among the tied elements (as ``max``).
    Complex values are ordered as by ``max`` (NumPy's order), eagerly and traced.

    >>> import functrace.numpy as fnp
    >>> fnp.ptp([[1, 5], [3, 2]], axis=1)
    array([4, 1])
    """
    no_out("ptp", out)
    hi = _extremum("ptp", lr.reduce_max, lx.max, a, axis, keepdims, None)
    lo = _extremum("ptp", lr.reduce_min, lx.min, a, axis, keepdims, None)
    return subtract(hi, lo)


# ---------------------------------------------------------------------------
# nanmax, nanmin
# ---------------------------------------------------------------------------


def _make_nan_extremum(name: str, reduce: Any, combine: Any, fill: float, example: str) -> Any:
    np_fn = getattr(np, name)

    def call(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        return np_fn(a, axis=axis, out=out, keepdims=keepdims, **_where_kw(where, initial))

    def nan_extremum(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        no_out(name, out)
        a, aval, axes = _prepare(name, a, axis)
        cplx = aval.dtype.kind == "c"
        if aval.dtype.kind != "f" and not cplx:
            return _extremum(name, reduce, combine, a, axis, keepdims, initial, where)
        ok = lx.eq(a, a)  # complex: False where either part is NaN
        # complex: the fill is below (above) every value in both parts, so any number wins
        filled = lx.select_n(ok, lx.full_like(a, complex(fill, fill) if cplx else fill), a)
        r = _extremum(name, reduce, combine, filled, axis, False, initial, where)
        if initial is None:  # NaN where every element is NaN (complex: NumPy's, the first)
            nan = reduce(a, axes) if cplx else lx.full_like(r, np.nan)
            r = lx.select_n(lr.reduce_max(ok, axes), nan, r)
        return _finish(r, aval.shape, axes, keepdims)

    nan_extremum.__name__ = nan_extremum.__qualname__ = name
    nan_extremum.__doc__ = (
        f"{'Maximum' if name == 'nanmax' else 'Minimum'} over ``axis`` ignoring NaNs (NaN "
        f"where a slice is all NaN, as in NumPy).\n\n    NOTE: NaNs get a zero gradient; "
        f"at ties the gradient is shared equally among the tied elements. Complex values "
        f"are ordered as by ``{name[3:]}``; one with a NaN part is a NaN (an all-NaN slice "
        f"gives its first NaN, as NumPy's).\n\n    >>> import "
        f"functrace.numpy as fnp\n    {example}\n    "
    )
    return numpy_path(call)(nan_extremum)


nanmax = _make_nan_extremum(
    "nanmax",
    lr.reduce_max,
    lx.max,
    -np.inf,
    ">>> fnp.nanmax([1.0, fnp.nan, 3.0])\n    np.float64(3.0)",
)
nanmin = _make_nan_extremum(
    "nanmin",
    lr.reduce_min,
    lx.min,
    np.inf,
    ">>> fnp.nanmin([[1.0, fnp.nan], [fnp.nan, 4.0]], axis=0)\n    array([1., 4.])",
)


# ---------------------------------------------------------------------------
# median
# ---------------------------------------------------------------------------


def _np_median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    return np.median(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)


def _sorted_slices(x: Any, aval: core.ShapedArray, axes: tuple[int, ...]) -> tuple[Any, int]:
    """``x`` (of ``aval``'s shape) with the reduced ``axes`` moved last and flattened into
    one axis, sorted along it (NaNs last); and that axis' length."""
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    out_shape = tuple(aval.shape[i] for i in kept)
    if kept + axes != tuple(range(aval.ndim)):
        x = transpose(x, kept + axes)
    n = _count(aval.shape, axes)
    return ls.sort(ls.reshape(x, (*out_shape, n)), len(out_shape)), n


@numpy_path(_np_median)
def median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    """Median over ``axis`` (an int, a tuple, or all axes if None): the middle value of a
    sort, or the mean of the two middle values for even sizes (as ``jnp.median``); NaN
    if the slice holds a NaN, and float64 for integers, as in NumPy.

    The gradient flows to the middle element(s) only (half to each for even sizes).

    >>> import functrace.numpy as fnp
    >>> fnp.median([[3.0, 1.0], [4.0, 2.0]], axis=0)
    array([3.5, 1.5])
    """
    no_out("median", out)
    a, aval, axes = _prepare("median", a, axis)
    _no_complex("median", aval)
    dt = _mean_dtype(aval.dtype)
    out_shape = tuple(d for i, d in enumerate(aval.shape) if i not in axes)
    n = _count(aval.shape, axes)
    if n == 0:  # NaN, as NumPy's mean of an empty slice
        r = np.full(out_shape, np.nan, dt)
        r = r[()] if r.ndim == 0 else r
        return np.reshape(r, keepdims_shape(aval.shape, axes)) if keepdims else r
    s, _ = _sorted_slices(cast(a, dt, aval.weak_type), aval, axes)
    last = len(out_shape)

    def at(i: int) -> Any:
        return ls.reshape(slice_along(s, i, i + 1, last), out_shape)

    r = at(n // 2)
    if n % 2 == 0:
        r = lx.mul(lx.add(at(n // 2 - 1), r), lx.full_like(r, 0.5))
    high = at(n - 1)  # NaNs sort last
    r = lx.select_n(lx.ne(high, high), r, lx.full_like(r, np.nan))
    return _finish(r, aval.shape, axes, keepdims)


# ---------------------------------------------------------------------------
# quantile, percentile, nanquantile, nanpercentile, nanmedian
# ---------------------------------------------------------------------------

# Where each method puts the quantile q among the n sorted values: the 0-based "virtual
# index" v (the expressions are NumPy's, evaluated in the same order so that floor(v)
# agrees bit for bit), then which values around v it returns.
# The continuous methods interpolate linearly between positions floor(v) and floor(v) + 1,
# v = n q + (alpha + q (1 - alpha - beta)) - 1 (Hyndman and Fan's types 4 to 9).
_CONTINUOUS: dict[str, tuple[float, float]] = {
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3, 1 / 3),
    "normal_unbiased": (3 / 8, 3 / 8),
}
_ON_N_MINUS_1 = ("linear", "lower", "higher", "nearest", "midpoint")  # v = (n - 1) q
_METHODS = (
    *_ON_N_MINUS_1,
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    *_CONTINUOUS,
)
_PY_KINDS = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _q_key(q: Any) -> Any:
    """How NumPy types ``q``: a Python scalar type (weak) or a dtype."""
    if type(q) in (bool, int, float, complex):
        return type(q)
    aval = core.get_aval(q)
    return _PY_KINDS[aval.dtype.kind] if aval.weak_type else aval.dtype


@functools.lru_cache(maxsize=1024)
def _quantile_dtype(fname: str, a_dtype: np.dtype, q_key: Any, method: str) -> np.dtype:
    """The result dtype NumPy gives ``fname`` for these operand types: asked of NumPy on a
    three-element dummy (its rules differ between methods and between ``q`` types)."""
    q = q_key(0) if isinstance(q_key, type) else np.zeros((), q_key)
    np_fn = getattr(np, "nanquantile" if fname == "nanmedian" else fname)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(np_fn(np.zeros(3, a_dtype), q, method=method)).dtype
    except TypeError:
        raise TypeError(
            f"{fname}: expected an array NumPy's method {method!r} supports, got "
            f"{a_dtype.name}. Cast it first, e.g. a.astype(float)."
        ) from None


def _lerp(lo: Any, hi: Any, t: Any) -> Any:
    """``lo + (hi - lo) t``, from the nearer end (``hi - (hi - lo)(1 - t)`` for t >= 0.5)."""
    d = subtract(hi, lo)
    return where(t >= 0.5, subtract(hi, multiply(d, 1 - t)), add(lo, multiply(d, t)))


def _check_q(fname: str, q: Any, given: Any, scale: float) -> bool:
    """Raise if a ``q`` known now (not a tracer; ``given / scale``) is outside [0, 1] or
    NaN, as NumPy does; False for a traced ``q`` (its values are not read: the result is
    NaN there instead)."""
    if isinstance(q, core.Tracer):
        return False
    v = np.asarray(q)
    if v.size and not (np.all(v >= 0) and np.all(v <= 1)):
        raise ValueError(
            f"{fname}: expected q in [0, {scale:g}], got {np.asarray(given).tolist()}. Pass "
            f"{'percentages' if scale == 100 else 'probabilities'} in that range."
        )
    return True


def _quantile(
    fname: str,
    a: Any,
    q: Any,
    axis: Any,
    method: str,
    keepdims: bool,
    weights: Any,
    ignore_nan: bool,
    scale: float,
) -> Any:
    if method not in _METHODS:
        raise ValueError(
            f"{fname}: expected method to be one of {', '.join(map(repr, _METHODS))}, got "
            f"{method!r}."
        )
    if weights is not None:
        raise NotImplementedError(
            f"{fname}: expected weights=None on traced arrays, got weights. Weighted "
            f"quantiles are only computed for plain NumPy inputs."
        )
    a, aval, axes = _prepare(fname, a, axis)
    _no_complex(fname, aval)
    q = asarray_or_tracer(q, fname)
    qaval = core.get_aval(q)
    if qaval.dtype.kind == "c":
        raise TypeError(f"{fname}: expected real q, got {qaval.dtype.name}.")
    dt = _quantile_dtype(fname, aval.dtype, _q_key(q), method)
    given = q
    if not isinstance(q, core.Tracer):  # known now: stays a NumPy value (checked below)
        q = np.asarray(q, _FLOAT64 if qaval.dtype.kind != "f" else None) / scale
    else:
        q = cast(q, _FLOAT64) if qaval.dtype.kind != "f" else q
        q = true_divide(q, scale) if scale != 1 else q
    out_shape = tuple(d for i, d in enumerate(aval.shape) if i not in axes)
    s, n = _sorted_slices(a, aval, axes)  # (*out_shape, n)
    if n == 0 and not (ignore_nan and dt.kind == "f"):
        raise ValueError(
            f"{fname}: expected a non-empty array along the reduced axes, got shape "
            f"{aval.shape} and axis {axis}. Use nan{fname} for NaN on empty slices."
        )
    known = _check_q(fname, q, given, scale)
    if n == 0:  # nan-quantiles of empty slices: NaN (NumPy warns)
        shape = qaval.shape + (keepdims_shape(aval.shape, axes) if keepdims else out_shape)
        return np.full(shape, np.nan, dt)
    bad = None
    if not known:  # a traced q: NaN where it is outside [0, 1] (or NaN)
        bad = logical_not(logical_and(q >= 0, q <= 1))
        q = where(bad, 0, q)
    qshape = qaval.shape
    ones = (1,) * len(out_shape)
    qb = reshape(q, qshape + ones)  # q's axes first, as NumPy's result
    nan_kind = aval.dtype.kind == "f"
    if ignore_nan and nan_kind:
        count: Any = lr.reduce_sum(cast(lx.eq(s, s), _INT64), (len(out_shape),))
        count = cast(count, core.get_aval(qb).dtype)  # the count of each slice, as floats
    else:
        count = n

    if method in _ON_N_MINUS_1:
        v = multiply(subtract(count, 1), qb)
    elif method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        v = subtract(add(multiply(count, qb), add(alpha, multiply(qb, 1 - alpha - beta))), 1)
    elif method == "closest_observation":
        v = subtract(subtract(multiply(count, qb), 1), 0.5)
    else:  # inverted_cdf, averaged_inverted_cdf
        v = subtract(multiply(count, qb), 1)
    lo = floor(v)
    g = subtract(v, lo)
    top = maximum(subtract(count, 1), 0)
    # s[j..., i[q..., j...]]: one gather, the kept axes indexed by aranges
    k = len(out_shape)
    full = qshape + out_shape
    grid = [
        np.broadcast_to(np.arange(d).reshape((d,) + (1,) * (k - j - 1)), full)
        for j, d in enumerate(out_shape)
    ]

    def at(i: Any) -> Any:
        idx = cast(minimum(maximum(i, 0), top), _INT64)  # in range: no check needed
        idx = broadcast_to_shape(idx, full)
        return cast(li.gather(s, [*grid, idx], tuple(range(k + 1)), "clip"), dt)

    interpolating = dt.kind == "f"
    if method == "lower" or (method in (*_CONTINUOUS, "linear") and not interpolating):
        r = at(lo)  # an integer result: only q = 0 or 1 (Python ints) gets here
    elif method == "higher":
        r = at(ceil(v))
    elif method == "nearest":
        r = at(rint(v))  # ties to the even position
    elif method == "inverted_cdf":
        r = at(where(g > 0, lo + 1, lo))
    elif method == "closest_observation":
        up = logical_or(g > 0, logical_and(g == 0, remainder(lo, 2) == 0))
        r = at(where(up, lo + 1, lo))
    elif method == "averaged_inverted_cdf":
        r = where(g > 0, at(lo + 1), _lerp(at(lo), at(lo + 1), 0.5))
    elif method == "midpoint":
        r = _lerp(at(lo), at(lo + 1), cast(where(g > 0, 0.5, 0.0), dt))
    else:  # linear and the continuous methods
        r = _lerp(at(lo), at(lo + 1), cast(g, dt))
    r = broadcast_to_shape(r, qshape + out_shape)
    if nan_kind and n:
        if ignore_nan:  # NaN for slices without a number
            r = where(reshape(count, out_shape) == 0, np.nan, r)
        else:  # NaN for slices holding a NaN: they sort last
            high = ls.reshape(slice_along(s, n - 1, n, len(out_shape)), out_shape)
            r = where(isnan(high), np.nan, r)
    elif nan_kind:  # nanquantile of empty slices
        r = lx.full_like(r, np.nan)
    if bad is not None and dt.kind == "f":
        r = where(reshape(bad, qshape + ones), np.nan, r)
    if keepdims:
        r = reshape(r, qshape + keepdims_shape(aval.shape, axes))
    return cast(r, dt)


def _make_quantile(name: str, scale: float, ignore_nan: bool, example: str) -> Any:
    np_fn = getattr(np, name)

    def call(
        a: Any,
        q: Any,
        axis: Any = None,
        out: Any = None,
        overwrite_input: bool = False,
        method: str = "linear",
        keepdims: bool = False,
        *,
        weights: Any = None,
    ) -> Any:
        if np.size(a) == 0:  # (NumPy fails inside with IndexError: answer as when traced)
            no_out(name, out)
            return _quantile(name, a, q, axis, method, keepdims, weights, ignore_nan, scale)
        kw = {} if weights is None else {"weights": weights}
        return np_fn(a, q, axis, out, overwrite_input, method, keepdims, **kw)

    def quantile_like(
        a: Any,
        q: Any,
        axis: Any = None,
        out: Any = None,
        overwrite_input: bool = False,
        method: str = "linear",
        keepdims: bool = False,
        *,
        weights: Any = None,
    ) -> Any:
        no_out(name, out)
        return _quantile(name, a, q, axis, method, keepdims, weights, ignore_nan, scale)

    what = "quantile" if scale == 1 else "percentile"
    rng = "[0, 1]" if scale == 1 else "[0, 100]"
    nan = (
        "ignoring NaNs (NaN for a slice without numbers)"
        if ignore_nan
        else "(NaN for a slice holding a NaN)"
    )
    quantile_like.__name__ = quantile_like.__qualname__ = name
    quantile_like.__doc__ = f"""The {what}s ``q`` (in {rng}) of ``a`` over ``axis``, {nan}.

    All of NumPy's ``method`` s: ``linear`` (the default), ``lower``, ``higher``,
    ``nearest`` (ties to the even position, as NumPy; JAX rounds them down), ``midpoint``,
    ``inverted_cdf``, ``averaged_inverted_cdf``, ``closest_observation``,
    ``interpolated_inverted_cdf``, ``hazen``, ``weibull``, ``median_unbiased`` and
    ``normal_unbiased``, with NumPy's result dtypes. The axes of ``q`` come first in the
    result. ``weights`` (NumPy's, for ``inverted_cdf``) work on plain NumPy inputs only.

    NOTE: the gradient reaches the one or two sorted values the result is read from (with
    the interpolation weights), and ``q`` through the interpolation weight; at ties, the
    value the sort puts there. A ``q`` outside {rng} raises ``ValueError`` when given as
    a number or NumPy array; a traced one (under ``jit``, ``grad``, ``vmap``) gives NaN
    there instead (JAX clamps it).

    >>> import functrace.numpy as fnp
    {example}
    """
    return numpy_path(call)(quantile_like)


quantile = _make_quantile(
    "quantile",
    1,
    False,
    ">>> fnp.quantile([[1.0, 2.0, 3.0, 4.0]], [0.25, 0.5], axis=1)\n    array([[1.75],\n"
    "           [2.5 ]])",
)
percentile = _make_quantile(
    "percentile",
    100,
    False,
    ">>> fnp.percentile([1.0, 2.0, 3.0, 4.0], 50, method='lower')\n    np.float64(2.0)",
)
nanquantile = _make_quantile(
    "nanquantile",
    1,
    True,
    ">>> fnp.nanquantile([1.0, fnp.nan, 3.0], 0.5)\n    np.float64(2.0)",
)
nanpercentile = _make_quantile(
    "nanpercentile",
    100,
    True,
    ">>> fnp.nanpercentile([[1.0, fnp.nan], [2.0, 4.0]], 25, axis=1)\n    array([1. , 2.5])",
)


def _np_nanmedian(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    return np.nanmedian(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)


@numpy_path(_np_nanmedian)
def nanmedian(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    """Median over ``axis`` ignoring NaNs: the middle value of the sorted numbers, or the
    midpoint of the two middle ones (NaN for a slice without numbers, as in NumPy).

    NOTE: the gradient reaches the middle number(s) only (half to each for even counts).

    >>> import functrace.numpy as fnp
    >>> fnp.nanmedian([[3.0, fnp.nan, 1.0], [4.0, 2.0, 6.0]], axis=1)
    array([2., 4.])
    """
    no_out("nanmedian", out)
    a = asarray_or_tracer(a, "nanmedian")
    if core.get_aval(a).dtype.kind not in "f":
        return median(a, axis=axis, keepdims=keepdims)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, None, True, 1)


# ---------------------------------------------------------------------------
# nanargmax, nanargmin
# ---------------------------------------------------------------------------


def _make_nanarg(name: str, prim: Any, fill: float, example: str) -> Any:
    np_fn, np_arg = getattr(np, name), getattr(np, name[3:])
    arg_fn = argmax if name == "nanargmax" else argmin

    def call(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        x = np.asarray(a)
        if x.dtype.kind not in "fc" or not x.size:
            return np_fn(a, axis=axis, out=out, keepdims=keepdims)
        nan = np.isnan(x)
        empty = np.all(nan, axis=axis, keepdims=keepdims)
        if not np.any(empty):
            return np_fn(a, axis=axis, out=out, keepdims=keepdims)
        # all-NaN slices give -1, as in JAX (NumPy raises)
        r = np.where(empty, -1, np_arg(np.where(nan, fill, x), axis, keepdims=keepdims))
        if out is not None:
            np.copyto(out, r)
            return out
        return r[()] if r.ndim == 0 else r

    def nanarg(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        no_out(name, out)
        a = asarray_or_tracer(a, name)
        aval = core.get_aval(a)
        if aval.dtype.kind not in "fc":
            return arg_fn(a, axis=axis, keepdims=keepdims)
        nan = isnan(a)  # complex: NaNs become fill + 0j, as in NumPy
        r = _arg_extremum(name, prim, where(nan, fill, a), axis, keepdims)
        return where(_all(nan, axis=axis, keepdims=keepdims), -1, r)

    nanarg.__name__ = nanarg.__qualname__ = name
    nanarg.__doc__ = (
        f"Index of the {'maximum' if fill < 0 else 'minimum'} along ``axis`` (of the "
        f"flattened array if None) ignoring NaNs; first at ties.\n\n    A slice of NaNs "
        f"only gives -1, as in JAX (NumPy raises ``ValueError``), eagerly and traced "
        f"alike.\n\n    NOTE: complex values are ordered as by ``{name[3:]}``, with "
        f"NumPy's rule for NaNs (JAX refuses complex input): an entry with a NaN part "
        f"counts as ``{'-' if fill < 0 else ''}inf+0j``, so it is the index found when "
        f"no other entry is above that in the order (``{name}([nan, "
        f"{'-' if fill < 0 else ''}inf{'-' if fill < 0 else '+'}1j])`` is 0).\n\n    "
        f">>> import functrace.numpy as fnp\n    {example}\n    "
    )
    return numpy_path(call)(nanarg)


nanargmax = _make_nanarg(
    "nanargmax",
    lr.argmax,
    -np.inf,
    ">>> fnp.nanargmax([[fnp.nan, 2.0], [fnp.nan, fnp.nan]], axis=1)\n    array([ 1, -1])",
)
nanargmin = _make_nanarg(
    "nanargmin", lr.argmin, np.inf, ">>> fnp.nanargmin([fnp.nan, 2.0, 1.0])\n    np.int64(2)"
)


# ---------------------------------------------------------------------------
# array_equal, unravel_index
# ---------------------------------------------------------------------------


@numpy_path(
    lambda a1, a2, equal_nan=False: np.array_equal(a1, a2, equal_nan=equal_nan),
    promote_args=(0, 1),
)
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs equal to each
    other if ``equal_nan``).

    >>> import functrace.numpy as fnp
    >>> fnp.array_equal([1, 2], [1.0, 2.0])
    True
    """
    x = asarray_or_tracer(a1, "array_equal")
    y = asarray_or_tracer(a2, "array_equal")
    if core.get_aval(x).shape != core.get_aval(y).shape:
        return False
    eq = equal(x, y)
    kinds = core.get_aval(x).dtype.kind + core.get_aval(y).dtype.kind
    if equal_nan and builtins.any(k in "fc" for k in kinds):
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return _all(eq)


@numpy_path(lambda indices, shape, order="C": np.unravel_index(indices, shape, order))
def unravel_index(indices: Any, shape: Any, order: str = "C") -> Any:
    """The tuple of coordinate arrays (int64) of the flat ``indices`` in an array of
    ``shape`` (row-major for ``order='C'``, column-major for ``'F'``).

    On tracers, as ``jnp.unravel_index``: negative indices count from the end and
    out-of-bounds indices are clipped (NumPy raises).

    >>> import functrace.numpy as fnp
    >>> fnp.unravel_index([1, 5], (2, 3))
    (array([0, 1]), array([1, 2]))
    """
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: expected order 'C' or 'F', got {order!r}.")
    dims = shape_tuple("unravel_index", shape)
    idx = asarray_or_tracer(indices, "unravel_index")
    aval = core.get_aval(idx)
    if aval.dtype.kind not in "iu":
        raise TypeError(
            f"unravel_index: expected integer indices, got {aval.dtype.name}. Cast them "
            f"with .astype(int)."
        )
    total = int(np.prod(dims, dtype=np.int64))
    if total == 0:
        raise ValueError(f"unravel_index: expected a shape with elements, got {dims}.")
    idx = clip(cast(idx, _INT64), -total, total - 1)
    out = []
    stride = total
    for d in dims if order == "C" else dims[::-1]:
        inner = stride // d
        out.append(floor_divide(remainder(idx, stride), inner))
        stride = inner
    return tuple(out if order == "C" else out[::-1])


__all__ = [
    "array_equal",
    "average",
    "corrcoef",
    "count_nonzero",
    "cov",
    "ediff1d",
    "frexp",
    "gcd",
    "i0",
    "lcm",
    "ldexp",
    "median",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nanvar",
    "nextafter",
    "percentile",
    "ptp",
    "quantile",
    "spacing",
    "trapezoid",
    "unravel_index",
    "unwrap",
]
