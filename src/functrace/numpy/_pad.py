"""``pad`` on arrays and tracers, in every mode NumPy has.

Plain NumPy inputs go straight to ``np.pad``. Traced inputs are padded one axis after
another (so corners are computed from the axes padded before, as NumPy does), each
axis by the mode's own construction from primitives, so gradients, batching and jit
come from the rules of those primitives:

* ``constant`` (and ``empty``, which JAX fills with zeros): ``lax.pad`` with the
  value, which may be traced;
* ``edge``, ``wrap``, ``reflect`` and ``symmetric`` (``reflect_type="even"``): a
  gather of source positions. The positions are NumPy's own: ``np.pad`` of
  ``arange(n)`` in the same mode, so widths beyond the axis length repeat the
  pattern exactly as NumPy does;
* ``reflect``/``symmetric`` with ``reflect_type="odd"``: a linear map along the axis,
  the matrix ``np.pad`` makes of the identity (each padded entry is a signed
  combination of entries);
* ``linear_ramp``: ramps from ``end_values`` (constants) to the edge entries, the
  edge entries traced;
* ``maximum``, ``minimum``, ``mean``, ``median``: the statistic of the first (last)
  ``stat_length`` entries, broadcast over the pad; integer ``mean``/``median`` round
  half to even, as NumPy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    concrete_array,
    normalize_axis,
    slice_along,
)
from functrace.numpy._dispatch import contains_tracer, numpy_path
from functrace.numpy._indexing import take
from functrace.numpy._indexing import where as _where
from functrace.numpy._joining import concatenate
from functrace.numpy._linalg import tensordot
from functrace.numpy._math import floor as _floor
from functrace.numpy._math import round as _round
from functrace.numpy._reductions import any as _any
from functrace.numpy._reductions import max as _max
from functrace.numpy._reductions import mean as _mean
from functrace.numpy._reductions import min as _min
from functrace.numpy._shape import moveaxis
from functrace.numpy._stats import median as _median

__all__ = ["pad"]

_GATHER_MODES = ("edge", "wrap", "reflect", "symmetric")
_STAT_MODES = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}
_KWARGS = {
    "constant": {"constant_values"},
    "empty": set(),
    "edge": set(),
    "wrap": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"},
    **{m: {"stat_length"} for m in _STAT_MODES},
}


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _pairs(fname: str, what: str, value: Any, nd: int) -> np.ndarray:
    """NumPy's broadcasting of ``pad_width``-like arguments to shape (nd, 2)."""
    if isinstance(value, dict):
        out = np.zeros((nd, 2), dtype=np.int64)
        for ax, v in value.items():
            out[normalize_axis(fname, ax, nd)] = np.broadcast_to(np.asarray(v), (2,))
        return out
    try:
        return np.broadcast_to(np.asarray(value), (nd, 2))
    except ValueError:
        raise ValueError(
            f"{fname}: expected {what} as an int, a (before, after) pair or one "
            f"pair per axis ({nd} axes), got {value!r}."
        ) from None


def _np_pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    if callable(mode):
        return np.pad(array, pad_width, mode, **kwargs)
    _check_mode(mode, kwargs)
    if mode == "empty":  # JAX's choice for the unspecified values
        return np.pad(array, pad_width, "constant")
    return np.pad(array, pad_width, mode, **kwargs)


def _check_mode(mode: Any, kwargs: dict[str, Any]) -> None:
    if not isinstance(mode, str) or mode not in _KWARGS:
        raise ValueError(
            f"pad: expected mode to be one of {', '.join(sorted(_KWARGS))}, got {mode!r}."
        )
    extra = set(kwargs) - _KWARGS[mode]
    if extra:
        allowed = ", ".join(f"{k}=" for k in sorted(_KWARGS[mode])) or "no keyword arguments"
        raise TypeError(f"pad: expected {allowed} with mode={mode!r}, got {sorted(extra)}.")
    rt = kwargs.get("reflect_type", "even")
    if rt not in ("even", "odd"):
        raise ValueError(f"pad: expected reflect_type 'even' or 'odd', got {rt!r}.")


@numpy_path(_np_pad)
def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    """Pad ``array`` on each side of each axis, in any of NumPy's modes.

    ``pad_width`` is an int, a ``(before, after)`` pair, one pair per axis, or a dict
    ``{axis: width}``. ``constant_values`` takes the same forms and may be traced;
    ``end_values`` (``linear_ramp``) and ``stat_length`` (``maximum``, ``minimum``,
    ``mean``, ``median``) take them too and must be known while tracing.
    ``mode="empty"`` fills with zeros, as JAX does. A callable ``mode`` works on plain
    NumPy inputs only.

    >>> import functrace.numpy as fnp
    >>> fnp.pad([1, 2], (1, 2), constant_values=9)
    array([9, 1, 2, 9, 9])
    >>> fnp.pad(fnp.asarray([1.0, 2.0, 3.0]), 2, mode="reflect")
    Array([3., 2., 1., 2., 3., 2., 1.])
    """
    if callable(mode):
        raise NotImplementedError(
            "pad: expected a mode name on a traced array, got a function; a callable "
            "mode works on plain NumPy inputs only."
        )
    _check_mode(mode, kwargs)
    x = asarray_or_tracer(array, "pad")
    nd = len(_shape(x))
    if contains_tracer(pad_width):
        pad_width = concrete_array("pad", asarray_or_tracer(pad_width), "pad widths")
    widths = _pairs("pad", "pad_width", pad_width, nd)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: expected integer pad widths, got {pad_width!r}.")
    widths = widths.astype(np.int64)
    if np.any(widths < 0):
        raise ValueError(f"pad: expected non-negative pad widths, got {pad_width!r}.")
    if nd == 0:
        return x
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    stat_length = None
    if mode in _STAT_MODES and kwargs.get("stat_length") is not None:
        stat_length = _pairs("pad", "stat_length", _known(kwargs["stat_length"]), nd)
    ends = _pairs("pad", "end_values", _known(kwargs.get("end_values", 0)), nd)
    for ax in range(nd):
        before, after = (int(w) for w in widths[ax])
        if before == 0 and after == 0:
            continue
        n = _shape(x)[ax]
        if n == 0:
            raise ValueError(
                f"pad: expected a non-empty axis to pad in mode {mode!r}, got axis {ax} "
                f"of length 0 (only modes 'constant' and 'empty' extend empty axes)."
            )
        if mode in _GATHER_MODES:
            x = _pad_map(x, ax, n, before, after, mode, kwargs.get("reflect_type", "even"))
        elif mode == "linear_ramp":
            x = _pad_ramp(x, ax, n, before, after, ends[ax])
        else:
            sl = (n, n) if stat_length is None else stat_length[ax]
            lengths = (int(sl[0]), int(sl[1]))
            x = _pad_stat(x, ax, n, before, after, mode, lengths)
    return x


def _known(value: Any) -> Any:
    if contains_tracer(value):
        return concrete_array("pad", asarray_or_tracer(value), "end_values and stat_length")
    return value


def _pad_constant(x: Any, widths: np.ndarray, values: Any) -> Any:
    nd, dt = len(_shape(x)), core.dtype_of(x)
    if contains_tracer(values):
        vals = asarray_or_tracer(values, "pad")
        vals = broadcast_to_shape(cast(vals, dt), (nd, 2)) if _shape(vals) else cast(vals, dt)
    else:
        vals = _pairs("pad", "constant_values", values, nd)
        if np.all(vals == vals.flat[0]):
            vals = vals.flat[0]
        with np.errstate(invalid="ignore"):
            vals = np.asarray(vals).astype(dt)
    if not _shape(vals):  # one value for every side: a single pad
        v = vals[()] if isinstance(vals, np.ndarray) else vals
        return ls.pad(x, v, [(int(b), int(a), 0) for b, a in widths])
    for ax in range(nd):
        for side in (0, 1):
            w = int(widths[ax, side])
            if w == 0:
                continue
            if isinstance(vals, np.ndarray):
                v = vals[ax, side][()]
            else:
                v = ls.reshape(ls.slice(vals, (ax, side), (ax + 1, side + 1)), ())
            config = [(0, 0, 0)] * nd
            config[ax] = (w, 0, 0) if side == 0 else (0, w, 0)
            x = ls.pad(x, v, config)
    return x


def _pad_map(x: Any, ax: int, n: int, before: int, after: int, mode: str, rt: str) -> Any:
    """The gather modes: NumPy's own padding of the identity says where each padded
    entry comes from (one source each; a signed combination for odd reflections)."""
    kw = {"reflect_type": rt} if mode in ("reflect", "symmetric") else {}
    m = np.pad(np.eye(n, dtype=np.int64), ((before, after), (0, 0)), mode, **kw)  # type: ignore[call-overload]
    if rt == "even" or mode not in ("reflect", "symmetric"):
        return take(x, np.argmax(m, axis=1), axis=ax)
    dt = core.dtype_of(x)
    out = tensordot(m.astype(dt), x, axes=([1], [ax]))
    return moveaxis(out, 0, ax)


def _pad_ramp(x: Any, ax: int, n: int, before: int, after: int, ends: np.ndarray) -> Any:
    """Ramps from the end values to the edge entries (exclusive), computed as NumPy's
    ``linspace(end, edge, width, endpoint=False)`` does: ``j * step + end`` with
    ``step = (edge - end) / width``, or ``j / width * (edge - end) + end`` when some
    step is 0; integer ramps are rounded down."""
    dt = core.dtype_of(x)
    work = np.result_type(np.asarray(ends).dtype, dt, np.float64)
    nd = len(_shape(x))
    pieces: list[tuple[int, Any]] = []
    for side, width in ((0, before), (1, after)):
        if width == 0:
            continue
        edge = slice_along(x, 0, 1, ax) if side == 0 else slice_along(x, n - 1, n, ax)
        end = np.asarray(ends[side]).astype(work)
        shape = [1] * nd
        shape[ax] = width
        j = np.arange(width, dtype=work)
        j = (j if side == 0 else j[::-1]).reshape(shape)
        delta = cast(edge, work) - end
        step = delta / np.asarray(width, work)
        any_zero = _any(step == 0)
        ramp = _where(any_zero, j / np.asarray(width, work) * delta, j * step) + end
        pieces.append((side, cast(ramp, dt) if dt.kind not in "biu" else _to_int(ramp, dt)))
    out = [p for s, p in pieces if s == 0] + [x] + [p for s, p in pieces if s == 1]
    return concatenate(out, axis=ax)


def _to_int(v: Any, dt: np.dtype) -> Any:
    """An integer ramp as NumPy makes it: computed in float64, rounded down."""
    return cast(_floor(v), dt)


def _pad_stat(
    x: Any, ax: int, n: int, before: int, after: int, mode: str, lengths: tuple[int, int]
) -> Any:
    dt = core.dtype_of(x)
    stat = _STAT_MODES[mode]
    pieces = []
    for side, width in ((0, before), (1, after)):
        if width == 0:
            continue
        length = lengths[side]
        if length <= 0:
            raise ValueError(
                f"pad: expected stat_length >= 1 for mode {mode!r} on axis {ax}, got {length}."
            )
        length = min(length, n)
        part = slice_along(x, 0, length, ax) if side == 0 else slice_along(x, n - length, n, ax)
        value = stat(part, axis=ax, keepdims=True)
        if mode in ("mean", "median") and dt.kind in "biu":
            value = _round(value)
        value = cast(value, dt)
        shape = list(_shape(x))
        shape[ax] = width
        pieces.append((side, broadcast_to_shape(value, tuple(shape))))
    out = [p for s, p in pieces if s == 0] + [x] + [p for s, p in pieces if s == 1]
    return concatenate(out, axis=ax)
