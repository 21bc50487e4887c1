"""JAX's ``lax`` functions composed from the higher ``lax`` modules (loops,
convolution, the scatters), so every transform reaches them through those primitives'
rules (``composites.py`` holds those composed from the lower ones):
``stack``/``unstack``, ``scatter_apply``, ``approx_max_k``/``approx_min_k``,
``ragged_dot`` and ``conv_general_dilated_patches``.

Decisions:

* ``approx_max_k``/``approx_min_k`` return the exact top ``k`` (what JAX computes on
  CPU), sorted, ties in index order. With ``aggregate_to_topk=False`` JAX's CPU result
  has an implementation-defined length of at least ``k`` (for example 256 entries for
  300); functrace returns the ``k`` entries, which that contract allows. NaN entries
  count as the largest (``top_k``'s order); JAX's comparator has no order for them.
* ``scatter_apply`` here takes functrace's ``(indices, axes)``; ``lax.scatter_apply``
  (``xla_gather_scatter.py``) also takes JAX's ``dimension_numbers`` and
  ``update_shape``, counting the positions with this module's ``apply_counted``.
  ``func`` is applied to whole arrays and must act elementwise. It is differentiable
  (JAX's is not).
* ``ragged_dot``'s ``group_offset`` raises ``NotImplementedError``, as JAX's does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax import elementwise as ew
from functrace.lax._util import normalize_axis, operator_index
from functrace.lax.base import broadcast_in_dim, convert_element_type, reduce_sum
from functrace.lax.contraction import dot_general
from functrace.lax.control_flow import fori_loop
from functrace.lax.convolution import conv_dimension_numbers, conv_general_dilated
from functrace.lax.gather_scatter import gather, scatter_add
from functrace.lax.reductions import cumsum, reduce_max
from functrace.lax.shapes import concatenate, expand_dims, iota, squeeze, top_k
from functrace.lax.shapes import slice as lax_slice


def _array(fname: str, x: Any, what: str = "operand") -> Any:
    if core.is_array_like(x):
        return x
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected an array {what}, got {type(x).__name__}.")
    return a


def _int(fname: str, what: str, v: Any) -> int:
    if isinstance(v, (bool, np.bool_)) or isinstance(v, Tracer):
        raise TypeError(f"{fname}: expected {what} to be an int, got {v!r}.")
    try:
        return int(operator_index(v))
    except TypeError:
        raise TypeError(f"{fname}: expected {what} to be an int, got {v!r}.") from None


def _axis(fname: str, axis: Any, n: int) -> int:
    a = _int(fname, "axis", axis)
    if not -n <= a < n:
        raise ValueError(f"{fname}: expected axis in [{-n}, {n}), got {axis}.")
    return a % n


# ---------------------------------------------------------------------------
# stack, unstack
# ---------------------------------------------------------------------------


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (one shape and dtype) joined along a new axis ``axis``.

    >>> import functrace as ft, numpy as np
    >>> ft.lax.stack([np.array([1, 2]), np.array([3, 4])], axis=1)
    array([[1, 3],
           [2, 4]])
    """
    if isinstance(operands, (Tracer, np.ndarray)) or not isinstance(operands, Sequence):
        raise TypeError(
            f"stack: expected a sequence (list or tuple) of arrays, got {type(operands).__name__}."
        )
    if len(operands) == 0:
        raise ValueError("stack: expected at least one array, got an empty sequence.")
    xs = [_array("stack", x) for x in operands]
    avals = [core.get_aval(x) for x in xs]
    for k, a in enumerate(avals[1:], 1):
        if a.shape != avals[0].shape or a.dtype != avals[0].dtype:
            raise ValueError(
                f"stack: expected arrays of one shape and dtype, got {avals[0].str_short()} "
                f"(operand 0) and {a.str_short()} (operand {k}). functrace.lax does not "
                f"broadcast or promote: use functrace.numpy.stack for that."
            )
    ax = _axis("stack", axis, avals[0].ndim + 1)
    return concatenate([expand_dims(x, (ax,)) for x in xs], ax)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """``x`` split along ``axis`` into a tuple of its slices (the axis removed).

    >>> import functrace as ft, numpy as np
    >>> ft.lax.unstack(np.array([[1, 2], [3, 4]]), axis=1)
    (array([1, 3]), array([2, 4]))
    """
    x = _array("unstack", x)
    shape = core.get_aval(x).shape
    if not shape:
        raise ValueError("unstack: expected an array with at least one axis, got shape ().")
    ax = _axis("unstack", axis, len(shape))
    out = []
    for i in range(shape[ax]):
        start = tuple(i if d == ax else 0 for d in range(len(shape)))
        limit = tuple(i + 1 if d == ax else n for d, n in enumerate(shape))
        out.append(squeeze(lax_slice(x, start, limit), (ax,)))
    return tuple(out)


# ---------------------------------------------------------------------------
# scatter_apply
# ---------------------------------------------------------------------------


def scatter_apply(
    operand: Any,
    indices: Sequence[Any],
    func: Callable[[Any], Any],
    axes: Sequence[int],
    mode: Any = "raise",
) -> Any:
    """``operand`` with ``func`` applied at the gathered positions, once per occurrence
    of a position (twice where an index repeats, as JAX). Indices as ``scatter_add``'s
    (JAX takes ``dimension_numbers`` and ``update_shape`` instead); ``func`` must act
    elementwise (``lax.sin``, ``lambda v: v * 2``)."""
    if not callable(func):
        raise TypeError(f"scatter_apply: expected func to be callable, got {func!r}.")
    operand = _array("scatter_apply", operand)
    aval = core.get_aval(operand)
    if isinstance(indices, (Tracer, np.ndarray)) or not isinstance(indices, Sequence):
        raise TypeError(
            "scatter_apply: expected indices to be a sequence of index arrays (one per "
            f"entry of axes), got {type(indices).__name__}."
        )
    idx = [_array("scatter_apply", i, "index") for i in indices]
    try:
        axes_t = tuple(normalize_axis("scatter_apply", int(a), aval.ndim) for a in axes)
    except TypeError:
        raise TypeError(
            f"scatter_apply: expected axes to be a sequence of ints, got {axes!r}."
        ) from None
    batch = core.get_aval(idx[0]).shape if idx else ()
    rest = tuple(d for k, d in enumerate(aval.shape) if k not in axes_t)
    ones = np.ones(batch + rest, np.int64)
    counts = scatter_add(np.zeros(aval.shape, np.int64), ones, idx, axes, mode)
    return apply_counted("scatter_apply", operand, counts, func)


def apply_counted(fname: str, operand: Any, counts: Any, func: Callable[[Any], Any]) -> Any:
    """``operand`` with ``func`` applied ``counts`` times to each element (``counts``: an
    int64 array of the operand's shape, how many updates land on each position): the
    k-th application reaches the positions written more than k times, so a position
    written twice gets ``func(func(x))``, as XLA's scatter of ``func`` applies it once
    per update. Shared by both forms of ``scatter_apply``."""
    aval = core.get_aval(operand)

    def step(k: Any, y: Any) -> Any:
        hit = ew.gt(counts, broadcast_in_dim(convert_element_type(k, np.int64), aval.shape, ()))
        new = func(y)
        if core.get_aval(new) != core.get_aval(y):
            raise TypeError(
                f"{fname}: expected func to keep the operand's shape and dtype "
                f"{core.get_aval(y).str_short()}, got {core.get_aval(new).str_short()}."
            )
        return ew.select_n(hit, y, new)

    if not isinstance(counts, Tracer):
        y = operand
        for k in range(int(np.max(np.asarray(counts), initial=0))):
            y = step(np.int64(k), y)
        return y
    bound = reduce_max(counts, tuple(range(aval.ndim)))
    return fori_loop(np.int64(0), bound, step, operand)


# ---------------------------------------------------------------------------
# approx_max_k, approx_min_k
# ---------------------------------------------------------------------------


def _approx_k(
    fname: str,
    operand: Any,
    k: Any,
    reduction_dimension: Any,
    recall_target: Any,
    reduction_input_size_override: Any,
    aggregate_to_topk: Any,
    largest: bool,
) -> tuple[Any, Any]:
    operand = _array(fname, operand)
    aval = core.get_aval(operand)
    if not aval.shape:
        raise TypeError(f"{fname}: expected an operand with at least one axis, got shape ().")
    if aval.dtype.kind != "f":
        raise TypeError(f"{fname}: expected a floating-point operand, got {aval.dtype.name}.")
    k = _int(fname, "k", k)
    ax = _axis(fname, reduction_dimension, aval.ndim)
    _int(fname, "reduction_input_size_override", reduction_input_size_override)
    if isinstance(recall_target, Tracer) or not isinstance(recall_target, (int, float)):
        raise TypeError(f"{fname}: expected recall_target to be a float, got {recall_target!r}.")
    if not isinstance(aggregate_to_topk, (bool, np.bool_)):
        raise TypeError(
            f"{fname}: expected aggregate_to_topk to be a bool, got {aggregate_to_topk!r}."
        )
    if not 0 < k <= aval.shape[ax]:
        raise ValueError(
            f"{fname}: expected k in [1, {aval.shape[ax]}] (the size of reduction dimension "
            f"{ax} of shape {aval.shape}), got {k}."
        )
    _, pos = top_k(operand if largest else ew.neg(operand), k, axis=ax)
    # The values are read back at the positions, so they are the operand's own (-0.0 too).
    out_shape = core.get_aval(pos).shape
    grids = [
        pos if d == ax else iota(np.int32, out_shape[d], d, out_shape)
        for d in range(len(out_shape))
    ]
    vals = gather(operand, grids, tuple(range(len(out_shape))), "clip")
    return vals, pos


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``reduction_dimension`` (descending, ties in index
    order) and their int32 indices: exact, as JAX on CPU. ``recall_target`` and
    ``reduction_input_size_override`` are accepted and unused; ``aggregate_to_topk=False``
    also returns the ``k`` entries (JAX's CPU length is implementation-defined, >= k)."""
    return _approx_k(
        "approx_max_k",
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        True,
    )


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The ``k`` smallest entries along ``reduction_dimension`` (ascending, ties in index
    order) and their int32 indices: exact, as JAX on CPU (see ``approx_max_k``)."""
    return _approx_k(
        "approx_min_k",
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        False,
    )


# ---------------------------------------------------------------------------
# ragged_dot
# ---------------------------------------------------------------------------


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """Grouped matrix product: ``lhs`` ``(m, k)``, ``rhs`` ``(g, k, n)``, ``group_sizes``
    ``(g,)`` integers: rows ``[s_j, s_j + group_sizes[j])`` of the result (``s_j`` the
    sum of the sizes before ``j``) are those rows of ``lhs`` times ``rhs[j]``; rows past
    the last group are 0. ``(m, n)``. ``group_offset`` is not implemented (nor in JAX).

    >>> import functrace as ft, numpy as np
    >>> ft.lax.ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]),
    ...                   np.array([1, 2]))
    array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not implemented (nor in JAX).")
    lhs, rhs = _array("ragged_dot", lhs, "lhs"), _array("ragged_dot", rhs, "rhs")
    gs = _array("ragged_dot", group_sizes, "group_sizes")
    la, ra, ga = core.get_aval(lhs), core.get_aval(rhs), core.get_aval(gs)
    if la.ndim != 2 or ra.ndim != 3 or la.shape[1] != ra.shape[1]:
        raise ValueError(
            f"ragged_dot: expected lhs of shape (m, k) and rhs of shape (g, k, n), got "
            f"{la.shape} and {ra.shape}."
        )
    if ga.shape != (ra.shape[0],):
        raise ValueError(
            f"ragged_dot: expected group_sizes of shape ({ra.shape[0]},) (one size per "
            f"group of rhs), got {ga.shape}."
        )
    if ga.dtype.kind not in "iu":
        raise TypeError(f"ragged_dot: expected integer group_sizes, got {ga.dtype.name}.")
    m, g, n = la.shape[0], ra.shape[0], ra.shape[2]
    # every row times every group's matrix: (m, g, n); then keep each row's own group
    prod = dot_general(
        lhs,
        rhs,
        (((1,), (1,)), ((), ())),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    sizes = convert_element_type(gs, np.dtype(np.int64))
    ends = cumsum(sizes, 0)
    starts = ew.sub(ends, sizes)
    row = iota(np.int64, m, 0, (m, g))
    mine = ew.bitwise_and(
        ew.ge(row, broadcast_in_dim(starts, (m, g), (1,))),
        ew.lt(row, broadcast_in_dim(ends, (m, g), (1,))),
    )
    out_aval = core.get_aval(prod)
    zeros = broadcast_in_dim(np.array(0, out_aval.dtype)[()], out_aval.shape, ())
    kept = ew.select_n(broadcast_in_dim(mine, (m, g, n), (0, 1)), zeros, prod)
    return reduce_sum(kept, (1,))


# ---------------------------------------------------------------------------
# conv_general_dilated_patches
# ---------------------------------------------------------------------------


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches that ``conv_general_dilated`` with a filter of spatial shape
    ``filter_shape`` would see, flattened into the output's feature dimension: its size is
    ``C * prod(filter_shape)``, ordered input channel first, then the filter's spatial
    dimensions in the order of the rhs layout (JAX's layout). The other arguments are
    ``conv_general_dilated``'s.

    >>> import functrace as ft, numpy as np
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> ft.lax.conv_general_dilated_patches(x, (2,), (1,), "VALID")[0]
    array([[0., 1., 2.],
           [1., 2., 3.]])
    """
    lhs = _array("conv_general_dilated_patches", lhs, "lhs")
    aval = core.get_aval(lhs)
    try:
        fshape = tuple(
            _int("conv_general_dilated_patches", "filter_shape entries", d) for d in filter_shape
        )
    except TypeError:
        raise TypeError(
            f"conv_general_dilated_patches: expected filter_shape to be a sequence of ints, "
            f"got {filter_shape!r}."
        ) from None
    if len(fshape) != aval.ndim - 2 or any(d < 1 for d in fshape):
        raise ValueError(
            f"conv_general_dilated_patches: expected filter_shape of {aval.ndim - 2} positive "
            f"sizes (one per spatial dimension of lhs shape {aval.shape}), got {fshape}."
        )
    if aval.dtype.kind not in "fc":
        raise TypeError(
            f"conv_general_dilated_patches: expected a floating-point lhs, got {aval.dtype.name}."
        )
    dn = conv_dimension_numbers(aval.shape, (1, 1) + fshape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    s = math.prod(fshape)
    c = aval.shape[lhs_spec[1]]
    # One output feature per (channel, filter position): a grouped convolution whose
    # filter for feature (c, p) is 1 at position p and 0 elsewhere.
    eye = np.broadcast_to(np.eye(s, dtype=aval.dtype), (c, s, s))
    rhs = np.moveaxis(eye.reshape((c * s, 1) + fshape), (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs,
        np.ascontiguousarray(rhs),
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        feature_group_count=c,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


__all__ = [
    "approx_max_k",
    "approx_min_k",
    "conv_general_dilated_patches",
    "ragged_dot",
    "scatter_apply",
    "stack",
    "unstack",
]
