"""Windowed reductions (pooling): ``reduce_window_sum``/``max``/``min``, the generic
``reduce_window`` and the pair of linear primitives behind the max/min derivatives.

Every primitive takes JAX's window parameters, one entry per operand axis (a window
spans every axis, so pooling over NCHW uses the window ``(1, 1, kh, kw)``):

* ``window_dimensions``: the window's size per axis (>= 1);
* ``window_strides``: the step between windows (>= 1);
* ``padding``: ``(lo, hi)`` per axis (>= 0), applied after the base dilation;
* ``base_dilation``: ``d - 1`` holes between the operand's elements (>= 1);
* ``window_dilation``: ``d - 1`` skipped elements between window taps (>= 1).

Padding and holes hold the reduction's identity (``0``, ``-inf``, ``inf``), so they
never change a result and are never selected by max/min. The output has
``(padded - dilated_window) // stride + 1`` entries per axis: none for a window less
than one stride larger than the padded operand (as JAX), an error for a larger one
(where JAX gives no entries).

Each primitive is one block (impl, abstract eval, JVP or transpose, batching).
Decisions (JAX's semantics unless noted):

* ``reduce_window_max``/``min`` differentiate through the position each window
  selects: the first maximal (minimal) element in the window's row-major order, as
  JAX's ``ge``/``le`` selection in its VJP (JAX's JVP can take a later tied element in
  windows that overlap the padding). ``select_and_gather_add`` (tangent -> outputs) and
  ``select_and_scatter_add`` (cotangent -> operand) are linear in their first operand
  and each other's transpose, with every window parameter (window dilation included,
  which JAX's transpose refuses).
* ``reduce_window`` binds the specialised primitive for add/max/min computations
  (recognised by what they stage to, as ``lax.reduce``: ``lax.add``,
  ``functrace.numpy.add`` or ``operator.add``), then applies a non-identity
  ``init_value`` once: ``op(init, result)``, the value JAX computes. Any other
  computation is the generic ``reduce_window_p`` carrying the staged scalar
  computation; it has a forward-mode JVP (as JAX) and no reverse mode.
* jit: the driver calls the vectorised NumPy impls, except for max/min pooling and its
  two linear maps on float operands of 4096 elements or more, which run one compiled
  pass over the windows with the impls' bits (``functrace/jit/window_rules.py``); a
  loop holding one runs its Python loop around compiled bodies.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.errors import ConcretizationError
from functrace.interpreters import ad, batching
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.lax import elementwise as ew
from functrace.lax._util import (
    check_dtype_kind,
    check_same_dtypes,
    padtype_to_pads,
    register_checked,
)
from functrace.lax.reductions import _identity, _staged_monoid
from functrace.lax.shapes import broadcast_in_dim, pad
from functrace.tree_util import PyTreeDef, tree_flatten, tree_unflatten, treedef_is_leaf

Pairs = tuple[tuple[int, int], ...]
Ints = tuple[int, ...]

# ---------------------------------------------------------------------------
# Shared helpers: parameters, shapes, the padded operand and its windows
# ---------------------------------------------------------------------------


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _ints(name: str, what: str, xs: Any, ndim: int, minimum: int) -> Ints:
    try:
        out = tuple(int(v) for v in xs)
        if any(float(v) != i for v, i in zip(xs, out)):
            raise TypeError
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected {what} as a tuple of ints, got {xs!r}.") from None
    if len(out) != ndim:
        raise ValueError(
            f"{name}: expected {what} with one entry per operand axis ({ndim}), got {out} "
            f"(length {len(out)}). The window spans every axis: use 1 for axes not pooled."
        )
    if any(v < minimum for v in out):
        raise ValueError(f"{name}: expected {what} >= {minimum} on every axis, got {out}.")
    return out


def _pairs(name: str, padding: Any, ndim: int) -> Pairs:
    try:
        out = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name}: expected padding as 'SAME', 'VALID' or (lo, hi) pairs of ints, got "
            f"{padding!r}."
        ) from None
    if len(out) != ndim:
        raise ValueError(
            f"{name}: expected one (lo, hi) padding pair per operand axis ({ndim}), got "
            f"{out} (length {len(out)})."
        )
    if any(lo < 0 or hi < 0 for lo, hi in out):
        raise ValueError(f"{name}: expected non-negative padding, got {out}.")
    return out


def _window_params(
    name: str,
    x: Any,
    window_dimensions: Any,
    window_strides: Any,
    padding: Any,
    base_dilation: Any,
    window_dilation: Any,
) -> dict[str, Any]:
    shape = core.get_aval(x).shape
    ndim = len(shape)
    wd = _ints(name, "window_dimensions", window_dimensions, ndim, 1)
    ws, bd, wdil = (
        _ints(name, what, (1,) * ndim if v is None else v, ndim, 1)
        for what, v in (
            ("window_strides", window_strides),
            ("base_dilation", base_dilation),
            ("window_dilation", window_dilation),
        )
    )
    if isinstance(padding, str):
        window = tuple(_dilate(w, d) for w, d in zip(wd, wdil))
        padding = padtype_to_pads(shape, window, ws, padding, fname=name)
    return dict(
        window_dimensions=wd,
        window_strides=ws,
        padding=_pairs(name, padding, ndim),
        base_dilation=bd,
        window_dilation=wdil,
    )


def _out_shape(
    name: str,
    x: ShapedArray,
    window_dimensions: Ints,
    window_strides: Ints,
    padding: Pairs,
    base_dilation: Ints,
    window_dilation: Ints,
) -> Ints:
    """Check the params against ``x`` (what the wrappers check, for direct binds too)."""
    ndim = x.ndim
    for what, v, lo in (
        ("window_dimensions", window_dimensions, 1),
        ("window_strides", window_strides, 1),
        ("base_dilation", base_dilation, 1),
        ("window_dilation", window_dilation, 1),
    ):
        _ints(name, what, v, ndim, lo)
    _pairs(name, padding, ndim)
    out = []
    for n, w, s, (lo, hi), b, d in zip(
        x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        padded, window = _dilate(n, b) + lo + hi, _dilate(w, d)
        count = (padded - window) // s + 1  # 0 windows when it is < 1 stride too large
        if count < 0:
            raise ValueError(
                f"{name}: expected a (dilated) window no larger than the padded (dilated) "
                f"operand on every axis, got window_dimensions={window_dimensions}, "
                f"window_dilation={window_dilation} for operand shape {x.shape} with "
                f"padding={padding}, base_dilation={base_dilation}."
            )
        out.append(count)
    return tuple(out)


def _padded(x: np.ndarray, fill: Any, padding: Pairs, base_dilation: Ints) -> np.ndarray:
    """``x`` with its holes (base dilation) and padding filled with ``fill``."""
    if all(b == 1 for b in base_dilation) and all(p == (0, 0) for p in padding):
        return x
    shape = tuple(
        _dilate(n, b) + lo + hi for n, b, (lo, hi) in zip(x.shape, base_dilation, padding)
    )
    out = np.full(shape, fill, dtype=x.dtype)
    out[_real_positions(x.shape, padding, base_dilation)] = x
    return out


def _real_positions(shape: Ints, padding: Pairs, base_dilation: Ints) -> tuple[slice, ...]:
    return tuple(
        slice(lo, lo + _dilate(n, b), b) for n, b, (lo, _) in zip(shape, base_dilation, padding)
    )


def _taps(p: np.ndarray, params: dict[str, Any]) -> tuple[Ints, list[np.ndarray]]:
    """The output shape, and one strided view of the padded operand ``p`` per window
    offset (in the window's row-major order): the entries that offset reads, one per
    output entry. Reducing the views one by one is a few whole-array NumPy calls."""
    wd, ws, wdil = params["window_dimensions"], params["window_strides"], params["window_dilation"]
    out = tuple((n - _dilate(w, d)) // s + 1 for n, w, s, d in zip(p.shape, wd, ws, wdil))
    views = [
        p[
            tuple(
                slice(k * d, k * d + (o - 1) * s + 1, s) if o else slice(0, 0)
                for k, d, o, s in zip(ks, wdil, out, ws)
            )
        ]
        for ks in itertools.product(*(range(w) for w in wd))
    ]
    return out, views


def _params_batched(params: dict[str, Any], at: int = 0) -> dict[str, Any]:
    """The params with an extra axis ``at``: window 1, stride 1, no padding."""

    def ins(t: tuple[Any, ...], v: Any) -> tuple[Any, ...]:
        return t[:at] + (v,) + t[at:]

    out = dict(params)
    out["window_dimensions"] = ins(params["window_dimensions"], 1)
    out["window_strides"] = ins(params["window_strides"], 1)
    out["padding"] = ins(params["padding"], (0, 0))
    out["base_dilation"] = ins(params["base_dilation"], 1)
    out["window_dilation"] = ins(params["window_dilation"], 1)
    return out


def _batch_unary(p: Primitive) -> Callable[..., Any]:
    """Batching rule of a one-operand windowed reduction: the batch axis stays where
    it is, with a window of size 1."""

    def rule(vals: Any, bdims: Any, **params: Any) -> tuple[Any, int]:
        (x,), (bdim,) = vals, bdims
        return p.bind(x, **_params_batched(params, bdim)), bdim

    return rule


# ---------------------------------------------------------------------------
# reduce_window_sum
# ---------------------------------------------------------------------------


def _reduce_window_sum_abstract(x: ShapedArray, **params: Any) -> ShapedArray:
    check_dtype_kind("reduce_window_sum", x, "iufc", "a numeric")
    return ShapedArray(_out_shape("reduce_window_sum", x, **params), x.dtype, x.weak_type)


def _reduce_window_sum_impl(x: Any, **params: Any) -> Any:
    x = np.asarray(x)
    out, views = _taps(_padded(x, 0, params["padding"], params["base_dilation"]), params)
    acc = np.zeros(out, x.dtype)
    for v in views:
        acc += v
    return acc


reduce_window_sum_p = register_checked(
    Primitive("reduce_window_sum"), _reduce_window_sum_impl, _reduce_window_sum_abstract
)


def reduce_window_sum(
    operand: Any,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Sum over the windows of ``operand`` (sum pooling; divide by the window size for
    average pooling). ``padding`` is (lo, hi) pairs or "SAME"/"SAME_LOWER"/"VALID";
    padding and base-dilation holes count as 0."""
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("reduce_window_sum", operand, *w)
    return reduce_window_sum_p.bind(operand, **params)


def _reduce_window_sum_transpose(
    ct: Any,
    x: Any,
    *,
    window_dimensions: Ints,
    window_strides: Ints,
    padding: Pairs,
    base_dilation: Ints,
    window_dilation: Ints,
) -> list[Any]:
    # Each input position receives the cotangents of the windows that read it: spread
    # the cotangent by the strides, pad it so every input position sees a full window,
    # window-sum it, and read the real (undilated) positions with stride base_dilation.
    shape = x.aval.shape
    ct_shape = core.get_aval(ct).shape
    config = []
    for n, w, s, (lo, _), b, d, m in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        ct_shape,
    ):
        span, dilated_in, spread = _dilate(w, d), _dilate(n, b), _dilate(m, s)
        before = span - lo - 1
        after = dilated_in + span - 1 - spread - before
        config.append((before, after, s - 1))
    zero = np.zeros((), core.get_aval(ct).dtype)[()]
    spread_ct = pad(ct, zero, config)
    ones = (1,) * len(shape)
    return [
        reduce_window_sum_p.bind(
            spread_ct,
            window_dimensions=window_dimensions,
            window_strides=base_dilation,
            padding=((0, 0),) * len(shape),
            base_dilation=ones,
            window_dilation=window_dilation,
        )
    ]


ad.deflinear2(reduce_window_sum_p, _reduce_window_sum_transpose)
batching.batching_rules[reduce_window_sum_p] = _batch_unary(reduce_window_sum_p)

# ---------------------------------------------------------------------------
# reduce_window_max, reduce_window_min
# ---------------------------------------------------------------------------


def _chooser(name: str, is_max: bool) -> Primitive:
    def abstract(x: ShapedArray, **params: Any) -> ShapedArray:
        check_dtype_kind(name, x, "biuf", "a real or boolean")
        return ShapedArray(_out_shape(name, x, **params), x.dtype, x.weak_type)

    def impl(x: Any, **params: Any) -> Any:
        x = np.asarray(x)
        p = _padded(x, _identity(x.dtype, not is_max), params["padding"], params["base_dilation"])
        _, views = _taps(p, params)
        acc = np.array(views[0])
        for v in views[1:]:
            (np.maximum if is_max else np.minimum)(acc, v, out=acc)
        return acc

    return register_checked(Primitive(name), impl, abstract)


reduce_window_max_p = _chooser("reduce_window_max", True)
reduce_window_min_p = _chooser("reduce_window_min", False)


def reduce_window_max(
    operand: Any,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Maximum over the windows of ``operand`` (max pooling). ``padding`` is (lo, hi)
    pairs or "SAME"/"SAME_LOWER"/"VALID"; padding and holes count as ``-inf``. The
    gradient goes to the first maximal element of each window (row-major order)."""
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("reduce_window_max", operand, *w)
    return reduce_window_max_p.bind(operand, **params)


def reduce_window_min(
    operand: Any,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Minimum over the windows of ``operand`` (min pooling). ``padding`` is (lo, hi)
    pairs or "SAME"/"SAME_LOWER"/"VALID"; padding and holes count as ``inf``. The
    gradient goes to the first minimal element of each window (row-major order)."""
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("reduce_window_min", operand, *w)
    return reduce_window_min_p.bind(operand, **params)


def _chooser_jvp(select: str) -> Callable[..., Any]:
    def jvp(g: Any, x: Any, **params: Any) -> Any:
        return select_and_gather_add_p.bind(g, x, select=select, **params)

    return jvp


ad.defjvp(reduce_window_max_p, _chooser_jvp("ge"))
ad.defjvp(reduce_window_min_p, _chooser_jvp("le"))
batching.batching_rules[reduce_window_max_p] = _batch_unary(reduce_window_max_p)
batching.batching_rules[reduce_window_min_p] = _batch_unary(reduce_window_min_p)

# ---------------------------------------------------------------------------
# select_and_gather_add, select_and_scatter_add: the linear maps of max/min pooling
# ---------------------------------------------------------------------------


def _check_select(name: str, select: str) -> None:
    if select not in ("ge", "le"):
        raise ValueError(f"{name}: expected select 'ge' (max) or 'le' (min), got {select!r}.")


def _selected(x: np.ndarray, select: str, params: dict[str, Any]) -> np.ndarray:
    """Flat index into the padded operand of the position each window selects (the
    first maximal, for "ge", or minimal, for "le", in the window's row-major order)."""
    fill = _identity(x.dtype, select == "le")
    p = _padded(x, fill, params["padding"], params["base_dilation"])
    wd, ws, wdil = params["window_dimensions"], params["window_strides"], params["window_dilation"]
    out_shape, views = _taps(p, params)
    best = np.array(views[0])
    k = np.zeros(out_shape, np.intp)
    for i, v in enumerate(views[1:], 1):
        better = v > best if select == "ge" else v < best  # strict: the first one wins
        (np.maximum if select == "ge" else np.minimum)(best, v, out=best)
        np.putmask(k, better, i)
    # flat index = where the window starts + where the selected tap is in it
    steps = [int(np.prod(p.shape[i + 1 :], dtype=np.int64)) for i in range(x.ndim)]
    start = np.zeros(out_shape, np.intp)
    for i, (n, s, step) in enumerate(zip(out_shape, ws, steps)):
        start += (np.arange(n, dtype=np.intp) * (s * step)).reshape((n,) + (1,) * (x.ndim - 1 - i))
    taps = np.zeros(wd, np.intp)
    for i, (w, d, step) in enumerate(zip(wd, wdil, steps)):
        taps += (np.arange(w, dtype=np.intp) * (d * step)).reshape((w,) + (1,) * (x.ndim - 1 - i))
    return start + taps.reshape(-1)[k]


def _padded_shape(shape: Ints, padding: Pairs, base_dilation: Ints) -> Ints:
    return tuple(_dilate(n, b) + lo + hi for n, b, (lo, hi) in zip(shape, base_dilation, padding))


def _select_and_gather_add_abstract(
    t: ShapedArray, x: ShapedArray, *, select: str, **params: Any
) -> ShapedArray:
    name = "select_and_gather_add"
    _check_select(name, select)
    check_dtype_kind(name, t, "f", "a floating-point tangent")
    check_dtype_kind(name, x, "biuf", "a real operand as the second")
    if t.shape != x.shape:
        raise ValueError(
            f"{name}: expected a tangent of the operand's shape {x.shape}, got {t.shape}."
        )
    return ShapedArray(_out_shape(name, x, **params), t.dtype, t.weak_type)


def _select_and_gather_add_impl(t: Any, x: Any, *, select: str, **params: Any) -> Any:
    t, x = np.asarray(t), np.asarray(x)
    idx = _selected(x, select, params)
    tp = _padded(t, 0, params["padding"], params["base_dilation"])
    return np.asarray(tp.reshape(-1)[idx], dtype=t.dtype)


select_and_gather_add_p = register_checked(
    Primitive("select_and_gather_add"),
    _select_and_gather_add_impl,
    _select_and_gather_add_abstract,
)


def select_and_gather_add(
    tangents: Any,
    operand: Any,
    select: str,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """The entry of ``tangents`` at the position each window of ``operand`` selects:
    its first maximum (``select="ge"``) or minimum (``"le"``). Linear in ``tangents``;
    the JVP of ``reduce_window_max``/``min``. Padding and holes are never selected."""
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("select_and_gather_add", operand, *w)
    return select_and_gather_add_p.bind(tangents, operand, select=select, **params)


def _select_and_scatter_add_abstract(
    s: ShapedArray, x: ShapedArray, *, select: str, **params: Any
) -> ShapedArray:
    name = "select_and_scatter_add"
    _check_select(name, select)
    check_dtype_kind(name, s, "f", "a floating-point source")
    check_dtype_kind(name, x, "biuf", "a real operand as the second")
    out = _out_shape(name, x, **params)
    if s.shape != out:
        raise ValueError(
            f"{name}: expected a source of the window output's shape {out} (operand "
            f"shape {x.shape}), got {s.shape}."
        )
    return ShapedArray(x.shape, s.dtype, s.weak_type)


def _select_and_scatter_add_impl(s: Any, x: Any, *, select: str, **params: Any) -> Any:
    s, x = np.asarray(s), np.asarray(x)
    idx = _selected(x, select, params)
    shape = _padded_shape(x.shape, params["padding"], params["base_dilation"])
    size = int(np.prod(shape, dtype=np.int64))
    acc = np.bincount(np.ravel(idx), weights=np.ravel(s).astype(np.float64), minlength=size)
    acc = acc.reshape(shape)[_real_positions(x.shape, params["padding"], params["base_dilation"])]
    return np.ascontiguousarray(acc, dtype=s.dtype)


select_and_scatter_add_p = register_checked(
    Primitive("select_and_scatter_add"),
    _select_and_scatter_add_impl,
    _select_and_scatter_add_abstract,
)


def select_and_scatter_add(
    source: Any,
    operand: Any,
    select: str,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Add each entry of ``source`` (one per window) into the position its window of
    ``operand`` selects (first maximum for ``select="ge"``, minimum for ``"le"``):
    the gradient of max/min pooling. Linear in ``source``; the transpose of
    :func:`select_and_gather_add`."""
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("select_and_scatter_add", operand, *w)
    return select_and_scatter_add_p.bind(source, operand, select=select, **params)


def _check_not_linear(name: str, x: Any) -> None:
    if ad.is_undefined_primal(x):
        raise ValueError(
            f"{name} transpose: the operand that selects the positions is linear (a "
            f"non-linear use of tangents in a JVP rule)."
        )


def _select_and_gather_add_transpose(ct: Any, t: Any, x: Any, **params: Any) -> list[Any]:
    _check_not_linear("select_and_gather_add", x)
    if type(ct) is ad.Zero:
        return [ad.Zero(t.aval), None]
    return [select_and_scatter_add_p.bind(ct, x, **params), None]


def _select_and_scatter_add_transpose(ct: Any, s: Any, x: Any, **params: Any) -> list[Any]:
    _check_not_linear("select_and_scatter_add", x)
    if type(ct) is ad.Zero:
        return [ad.Zero(s.aval), None]
    return [select_and_gather_add_p.bind(ct, x, **params), None]


ad.deflinear_in(select_and_gather_add_p, (0,), _select_and_gather_add_transpose)
ad.deflinear_in(select_and_scatter_add_p, (0,), _select_and_scatter_add_transpose)


def _batch_selector(p: Primitive) -> Callable[..., Any]:
    def rule(vals: Any, bdims: Any, *, select: str, **params: Any) -> tuple[Any, int]:
        size = batching.batch_size(vals, bdims)
        a, x = (batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims))
        return p.bind(a, x, select=select, **_params_batched(params)), 0

    return rule


batching.batching_rules[select_and_gather_add_p] = _batch_selector(select_and_gather_add_p)
batching.batching_rules[select_and_scatter_add_p] = _batch_selector(select_and_scatter_add_p)

# ---------------------------------------------------------------------------
# reduce_window_p: the generic windowed reduction
# ---------------------------------------------------------------------------


def _generic_split(args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    n = len(args) // 2
    return list(args[:n]), list(args[n:])


def _reduce_window_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, **params: Any) -> list:
    name = "reduce_window"
    operands, inits = _generic_split(avals)
    if not operands or len(operands) != len(inits):
        raise ValueError(
            f"{name}: expected as many init values as operands (at least one), got "
            f"{len(operands)} operands and {len(inits)} init values."
        )
    for o, i in zip(operands, inits):
        if i.shape != ():
            raise ValueError(f"{name}: expected a scalar init_value, got shape {i.shape}.")
        check_same_dtypes(name, o, i)
        if o.shape != operands[0].shape:
            raise ValueError(
                f"{name}: expected operands of one shape, got {[a.shape for a in operands]}."
            )
    out = _out_shape(name, operands[0], **params)
    return [ShapedArray(out, o.dtype) for o in operands]


def _reduce_window_impl(*args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    operands, inits = _generic_split([np.asarray(a) for a in args])
    n = len(operands)
    pad, bd = params["padding"], params["base_dilation"]
    taps = [_taps(_padded(x, init, pad, bd), params)[1] for x, init in zip(operands, inits)]
    # Padding and holes are skipped (not folded in as init_value), as XLA computes it.
    out_shape, real = _taps(_padded(np.ones(operands[0].shape, np.bool_), False, pad, bd), params)
    count = int(np.prod(out_shape, dtype=np.int64))
    acc = [np.broadcast_to(i, (count,)) for i in inits]
    if count:

        def step(*vals: Any) -> list[Any]:
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, vals)

        for k, m in enumerate(real):
            mask = m.reshape(-1)
            if not mask.any():
                continue
            outs, _ = batching.vmap_flat(
                step,
                count,
                acc + [t[k].reshape(-1) for t in taps],
                [0] * (2 * n),
                origin="reduce_window computation",
            )
            acc = [
                np.where(mask, np.asarray(o, dtype=x.dtype), a)
                for o, a, x in zip(outs, acc, operands)
            ]
    return [np.asarray(a, dtype=x.dtype).reshape(out_shape) for a, x in zip(acc, operands)]


reduce_window_p = register_checked(
    Primitive("reduce_window", multiple_results=True), _reduce_window_impl, _reduce_window_abstract
)


def _stage_computation(
    computation: Callable[..., Any], avals: list[ShapedArray], tree: PyTreeDef
) -> ClosedJaxpr:
    """The jaxpr of ``computation`` on two pytrees (``tree``) of scalars, flattened."""
    n = len(avals)

    def packed(*args: Any) -> list[Any]:
        out = computation(tree_unflatten(tree, args[:n]), tree_unflatten(tree, args[n:]))
        outs, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ValueError(
                f"reduce_window: expected the computation to return the operands' structure "
                f"{tree} ({n} value(s)), got {out_tree}."
            )
        return outs

    try:
        closed, _ = trace_to_jaxpr(packed, avals + avals, origin="lax.reduce_window computation")
    except ConcretizationError as e:
        raise TypeError(
            f"reduce_window: expected a computation that can be traced on scalars (no "
            f"Python control flow on their values): {e}"
        ) from None
    if any(isinstance(c, core.Tracer) for c in closed.consts):
        raise NotImplementedError(
            "reduce_window: expected a computation that closes over no traced values (as "
            "in JAX), got one that uses a value of an enclosing jit/vmap/grad. Pass it as "
            "an operand, or use a recognised add/max/min computation."
        )
    for v, a in zip(closed.jaxpr.outvars, avals):
        out = v.aval if hasattr(v, "aval") else core.get_aval(v)
        if out.shape != () or out.dtype != a.dtype:
            raise TypeError(
                f"reduce_window: expected the computation to return scalars of dtype "
                f"{a.dtype.name}, got {out.str_short()}."
            )
    return closed


def _reduce_window_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    # Forward mode (as JAX): reduce the pairs (primal, tangent) with the JVP of the
    # computation. The tangents' init values are 0 (an init value's tangent is refused).
    operands, inits = _generic_split(primals)
    t_ops, t_inits = _generic_split(tangents)
    n = len(operands)
    if any(type(t) is not ad.Zero for t in t_inits):
        raise NotImplementedError(
            "reduce_window: the JVP of the generic reduce_window (a computation other than "
            "add, max or min) does not support a tangent of init_value (as in JAX)."
        )
    avals = [core.get_aval(o) for o in operands]
    t_ops = [ad.instantiate(t) for t in t_ops]

    def pair(*args: Any) -> list[Any]:
        pa, ta, pb, tb = args[:n], args[n : 2 * n], args[2 * n : 3 * n], args[3 * n :]
        outs, touts = ad.jvp_flat(
            lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, xs),
            list(pa) + list(pb),
            list(ta) + list(tb),
        )
        return list(outs) + [ad.instantiate(t) for t in touts]

    scalar = [ShapedArray((), a.dtype) for a in avals]
    closed, _ = trace_to_jaxpr(pair, scalar * 4, origin="lax.reduce_window computation (JVP)")
    zeros = [np.zeros((), a.dtype)[()] for a in avals]
    outs = reduce_window_p.bind(*operands, *t_ops, *inits, *zeros, jaxpr=closed, **params)
    return list(outs[:n]), list(outs[n:])


ad.jvp_rules[reduce_window_p] = _reduce_window_jvp


def _reduce_window_no_transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
    # Reached when reverse mode transposes the tangent reduce_window of the JVP above.
    raise NotImplementedError(
        "reduce_window: expected forward mode (jvp, jacfwd) for a generic reduce_window "
        "(a computation other than add, max or min), got reverse mode (grad, vjp); as in "
        "JAX it has no transpose. Use lax.reduce_window_sum/max/min or an add/max/min "
        "computation, or forward mode."
    )


ad.transpose_rules[reduce_window_p] = _reduce_window_no_transpose


def _reduce_window_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[int]]:
    operands, inits = _generic_split(vals)
    b_ops, b_inits = _generic_split(bdims)
    if any(b is not None for b in b_inits):
        raise NotImplementedError(
            "reduce_window: expected one init_value for the whole batch under vmap, got a "
            "batched init_value (as in JAX, not supported)."
        )
    size = batching.batch_size(vals, bdims)
    operands = [batching.bdim_at(x, b, size, 0) for x, b in zip(operands, b_ops)]
    outs = reduce_window_p.bind(*operands, *inits, jaxpr=jaxpr, **_params_batched(params))
    return list(outs), [0] * len(outs)


batching.batching_rules[reduce_window_p] = _reduce_window_batch


_MONOIDS: dict[str, tuple[Primitive, Callable[[Any, Any], Any], bool]] = {
    "add": (reduce_window_sum_p, ew.add, False),
    "max": (reduce_window_max_p, ew.max, False),
    "min": (reduce_window_min_p, ew.min, True),
}


def _is_identity(name: str, init: Any, dtype: np.dtype) -> bool:
    if isinstance(init, core.Tracer):  # applied, so that its tangent flows
        return False
    value = np.asarray(init)
    if name == "add":
        return bool(np.all(value == 0))
    return bool(np.all(value == _identity(dtype, name == "min")))


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[..., Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce each window of ``operand`` with the binary ``computation``, starting
    from the scalar ``init_value`` (a pytree of operands of one shape, with a pytree
    of scalar init values and a computation on two such pytrees, reduces them
    together).

    ``padding`` is (lo, hi) pairs or "SAME"/"SAME_LOWER"/"VALID". An add, max or min
    computation (``lax``, ``functrace.numpy`` or ``operator`` forms) is
    :func:`reduce_window_sum`/``max``/``min`` followed by ``op(init_value, result)``
    when ``init_value`` is not the identity; other computations are the generic
    ``reduce_window_p`` (forward-mode differentiable only, as in JAX).
    """
    operands, tree = tree_flatten(operand)
    inits, init_tree = tree_flatten(init_value)
    if not operands or init_tree != tree:
        raise ValueError(
            f"reduce_window: expected an init_value of the operand's structure {tree} (at "
            f"least one array), got {init_tree}."
        )
    single = treedef_is_leaf(tree)
    w = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    params = _window_params("reduce_window", operands[0], *w)
    avals = [core.get_aval(o) for o in operands]
    inits = [
        ew.convert_element_type(i, a.dtype) if core.get_aval(i).dtype != a.dtype else i
        for i, a in zip(inits, avals)
    ]
    for i in inits:
        if core.get_aval(i).shape != ():
            raise ValueError(
                f"reduce_window: expected a scalar init_value, got shape {core.get_aval(i).shape}."
            )
    if single:
        name = _monoid_name(computation, avals[0].dtype)
        if name is not None:
            prim, op, _ = _MONOIDS[name]
            out = prim.bind(operands[0], **params)
            if _is_identity(name, inits[0], avals[0].dtype):
                return out
            return op(broadcast_in_dim(inits[0], core.get_aval(out).shape, ()), out)
    scalar = [ShapedArray((), a.dtype) for a in avals]
    closed = _stage_computation(computation, scalar, tree)
    outs = reduce_window_p.bind(*operands, *inits, jaxpr=closed, **params)
    return tree_unflatten(tree, outs)


def _monoid_name(computation: Any, dtype: np.dtype) -> str | None:
    import operator

    direct = {ew.add: "add", operator.add: "add", ew.max: "max", ew.min: "min"}
    for f, name in direct.items():
        if computation is f:
            return name
    if dtype == np.bool_:
        return None
    try:
        staged = _staged_monoid(computation, dtype)
    except (TypeError, ValueError):
        return None  # not a binary scalar function: _stage_computation says why
    return staged if staged in _MONOIDS else None


__all__ = [
    "reduce_window",
    "reduce_window_max",
    "reduce_window_max_p",
    "reduce_window_min",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum",
    "reduce_window_sum_p",
    "select_and_gather_add",
    "select_and_gather_add_p",
    "select_and_scatter_add",
    "select_and_scatter_add_p",
]
