"""More of ``jax.lax``'s names, written with other lax functions (so every transform
and derivative comes from theirs): ``conv_general_dilated_local`` (an unshared
convolution: the patches of ``conv_general_dilated_patches`` contracted with a filter
per output position), ``ragged_dot_general`` (``ragged_dot`` with any dimension
numbers, in JAX's three modes, by masks of the groups), the shape helpers
``conv_transpose_shape_tuple`` and ``reduce_window_shape_tuple``, and the
dimension-number types JAX names (``RaggedDotDimensionNumbers``,
``DotDimensionNumbers``, ``GatherDimensionNumbers``, ``ScatterDimensionNumbers``,
``ConvGeneralDilatedDimensionNumbers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace.lax import elementwise as ew
from functrace.lax._util import conv_transpose_pads
from functrace.lax.base import broadcast_in_dim, convert_element_type, reduce_sum, transpose
from functrace.lax.composite_higher import conv_general_dilated_patches
from functrace.lax.contraction import dot_general
from functrace.lax.convolution import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_general_permutations,
)
from functrace.lax.reductions import cumsum
from functrace.lax.shapes import iota

DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]
"""``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, the form
``dot_general`` takes (JAX's type alias)."""

ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None
"""What ``conv_general_dilated`` takes as ``dimension_numbers`` (JAX's type alias)."""


class GatherDimensionNumbers(NamedTuple):
    """JAX's description of an XLA gather, the ``dimension_numbers`` of ``lax.gather``
    in JAX's form (``xla_gather_scatter.py``; given index arrays and axes instead,
    ``lax.gather`` is NumPy's advanced indexing)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """JAX's description of an XLA scatter, the ``dimension_numbers`` of ``lax.scatter``,
    ``scatter_add``, ``scatter_sub``, ``scatter_mul``, ``scatter_min``, ``scatter_max``
    and ``scatter_apply`` in JAX's form (``xla_gather_scatter.py``)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class RaggedDotDimensionNumbers:
    """The dimensions of a :func:`ragged_dot_general` (JAX's class):
    ``dot_dimension_numbers`` as for ``dot_general``, the one ragged dimension of lhs
    (``lhs_ragged_dimensions``) and the group dimension of rhs, if any
    (``rhs_group_dimensions``)."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(
        self,
        dot_dimension_numbers: Any,
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        try:
            (lc, rc), (lb, rb) = dot_dimension_numbers
            dims = ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb)))
            ragged, group = _ints(lhs_ragged_dimensions), _ints(rhs_group_dimensions)
        except (TypeError, ValueError):
            raise TypeError(
                f"RaggedDotDimensionNumbers: expected ((lhs_contracting, rhs_contracting), "
                f"(lhs_batch, rhs_batch)) and two sequences of ints, got "
                f"{dot_dimension_numbers!r:.80}, {lhs_ragged_dimensions!r:.40}, "
                f"{rhs_group_dimensions!r:.40}."
            ) from None
        self.dot_dimension_numbers = dims
        self.lhs_ragged_dimensions = ragged
        self.rhs_group_dimensions = group

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> Any:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions)

    def __repr__(self) -> str:
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


def _ints(xs: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


# ---------------------------------------------------------------------------
# conv_general_dilated_local
# ---------------------------------------------------------------------------


def conv_general_dilated_local(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
) -> Any:
    """An unshared ("locally connected") convolution, as JAX's
    ``lax.conv_general_dilated_local``: each output position has its own filter. ``rhs``
    is laid out as ``dimension_numbers``' rhs spec says, with its spatial dimensions
    the *output's* positions and its ``I`` dimension holding the input channel and the
    receptive window (``filter_shape``, in the rhs spec's spatial order) flattened,
    channel first. The other arguments are ``conv_general_dilated``'s.

    >>> import functrace as ft, numpy as np
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> w = np.ones((1, 2, 3))  # O=1, I=1*2, 3 output positions
    >>> ft.lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,))
    array([[[1., 3., 5.]]])
    """
    fname = "conv_general_dilated_local"
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    if ra.ndim != la.ndim:
        raise ValueError(
            f"{fname}: expected rhs of the rank of lhs ({la.ndim}), got shapes {la.shape} "
            f"and {ra.shape}."
        )
    patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers,
        precision=precision,
    )
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        la.shape, (1, 1) + tuple(int(d) for d in filter_shape), dimension_numbers
    )
    pa = core.get_aval(patches)
    n = la.ndim - 2
    # out position order: the output's spatial dims sorted; rhs spatial dims matched to them
    order = sorted(range(n), key=lambda k: out_spec[2 + k])
    out_b = tuple(out_spec[2 + k] for k in order)
    rhs_b = tuple(rhs_spec[2 + k] for k in order)
    want = tuple(pa.shape[a] for a in out_b) + (pa.shape[out_spec[1]],)
    got = tuple(ra.shape[a] for a in rhs_b) + (ra.shape[rhs_spec[1]],)
    if want != got:
        raise ValueError(
            f"{fname}: expected rhs with output spatial sizes and input features "
            f"{want} (the output positions, then channels * prod(filter_shape)), got "
            f"{got} from rhs shape {ra.shape}."
        )
    if ra.dtype != pa.dtype:
        raise TypeError(
            f"{fname}: expected lhs and rhs of one dtype, got {la.dtype.name} and {ra.dtype.name}."
        )
    dn = (((out_spec[1],), (rhs_spec[1],)), (out_b, rhs_b))
    prod = dot_general(patches, rhs, dn, precision=precision)  # spatial..., N, O
    perm = [0] * (n + 2)
    perm[out_spec[0]], perm[out_spec[1]] = n, n + 1
    for k, a in enumerate(out_b):
        perm[a] = k
    return transpose(prod, tuple(perm))


# ---------------------------------------------------------------------------
# ragged_dot_general
# ---------------------------------------------------------------------------


def _group_mask(fname: str, group_sizes: Any, length: int, groups: int | None) -> Any:
    """``(length, g)`` booleans: row ``i`` belongs to group ``j``."""
    ga = core.get_aval(group_sizes)
    if ga.ndim != 1 or (groups is not None and ga.shape[0] != groups):
        want = "(g,)" if groups is None else f"({groups},)"
        raise ValueError(
            f"{fname}: expected group_sizes of shape {want} (one size per group; the "
            f"broadcast forms with leading dimensions are not implemented), got {ga.shape}."
        )
    if ga.dtype.kind not in "iu":
        raise TypeError(f"{fname}: expected integer group_sizes, got {ga.dtype.name}.")
    g = ga.shape[0]
    sizes = convert_element_type(group_sizes, np.dtype(np.int64))
    ends = cumsum(sizes, 0)
    starts = ew.sub(ends, sizes)
    row = iota(np.int64, length, 0, (length, g))
    return ew.bitwise_and(
        ew.ge(row, broadcast_in_dim(starts, (length, g), (1,))),
        ew.lt(row, broadcast_in_dim(ends, (length, g), (1,))),
    )


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``dot_general`` with one ragged dimension of lhs cut into consecutive groups of
    ``group_sizes`` (JAX's ``lax.ragged_dot_general``), in JAX's three modes:

    1. the ragged dimension is an lhs free dimension and rhs has a group dimension: each
       row multiplies its group's rhs (rows past the last group give 0); the result is
       ``dot_general``'s without the group dimension;
    2. the ragged dimension is contracted: one product per group over its part of the
       contracted dimension, stacked on a new leading dimension of size ``g``;
    3. the ragged dimension is a batch dimension: ``dot_general`` (the groups do not
       change the values, as on JAX's CPU).

    ``group_sizes`` must have shape ``(g,)`` (JAX also broadcasts forms with leading
    dimensions); ``group_offset`` and ``out_sharding`` may only be None."""
    fname = "ragged_dot_general"
    if not isinstance(ragged_dot_dimension_numbers, RaggedDotDimensionNumbers):
        raise TypeError(
            f"{fname}: expected a RaggedDotDimensionNumbers, got "
            f"{type(ragged_dot_dimension_numbers).__name__}."
        )
    if group_offset is not None or out_sharding is not None:
        raise NotImplementedError(f"{fname}: group_offset and out_sharding must be None.")
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    rd = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = rd.dot_dimension_numbers
    if len(rd.lhs_ragged_dimensions) != 1 or len(rd.rhs_group_dimensions) > 1:
        raise ValueError(
            f"{fname}: expected one lhs ragged dimension and at most one rhs group "
            f"dimension, got {rd.lhs_ragged_dimensions} and {rd.rhs_group_dimensions}."
        )
    (r,) = rd.lhs_ragged_dimensions
    if not 0 <= r < la.ndim:
        raise ValueError(f"{fname}: expected a ragged dimension of lhs {la.shape}, got {r}.")
    groups = rd.rhs_group_dimensions
    dims = ((lc, rc), (lb, rb))
    kw = {"precision": precision, "preferred_element_type": preferred_element_type}
    if r in lb or r in lc:
        if groups:
            raise ValueError(
                f"{fname}: expected no rhs group dimension when the ragged dimension is "
                f"contracted or a batch dimension, got {groups}."
            )
        if r in lb:  # mode 3
            _group_mask(fname, group_sizes, la.shape[r], None)  # checked, values unused
            return dot_general(lhs, rhs, dims, **kw)
        # mode 2: lhs gets a trailing free dimension g, zero outside each group's rows
        mask = _group_mask(fname, group_sizes, la.shape[r], None)
        g = core.get_aval(mask).shape[1]
        big = la.shape + (g,)
        m = broadcast_in_dim(mask, big, (r, la.ndim))
        x = broadcast_in_dim(lhs, big, tuple(range(la.ndim)))
        x = ew.select_n(m, broadcast_in_dim(np.zeros((), la.dtype)[()], big, ()), x)
        out = dot_general(x, rhs, dims, **kw)
        nd = core.get_aval(out).ndim
        pos = len(lb) + (la.ndim - len(lb) - len(lc))  # after batch and lhs free dims
        perm = (pos,) + tuple(i for i in range(nd) if i != pos)
        return transpose(out, perm)
    # mode 1: the rhs group dimension stays free, then each row keeps its own group
    if len(groups) != 1:
        raise ValueError(
            f"{fname}: expected an rhs group dimension when the ragged dimension is an "
            f"lhs free dimension, got none."
        )
    (gd,) = groups
    if gd in rc or gd in rb or not 0 <= gd < ra.ndim:
        raise ValueError(
            f"{fname}: expected the rhs group dimension to be a free dimension of rhs "
            f"{ra.shape}, got {gd}."
        )
    mask = _group_mask(fname, group_sizes, la.shape[r], ra.shape[gd])
    out = dot_general(lhs, rhs, dims, **kw)
    oa = core.get_aval(out)
    lhs_free = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rhs_free = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    r_pos = len(lb) + lhs_free.index(r)
    g_pos = len(lb) + len(lhs_free) + rhs_free.index(gd)
    m = broadcast_in_dim(mask, oa.shape, (r_pos, g_pos))
    zeros = broadcast_in_dim(np.zeros((), oa.dtype)[()], oa.shape, ())
    return reduce_sum(ew.select_n(m, zeros, out), (g_pos,))


# ---------------------------------------------------------------------------
# Shape helpers
# ---------------------------------------------------------------------------


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The shape ``conv_transpose`` gives for these operand shapes, strides, padding
    ("SAME", "VALID" or ``(low, high)`` pairs, as ``conv_transpose`` applies them) and
    layouts (three strings), as JAX's ``lax.conv_transpose_shape_tuple``.

    >>> conv_transpose_shape_tuple((1, 4, 3), (2, 3, 5), (2,), "SAME", ("NHC", "HIO", "NHC"))
    (1, 8, 5)
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lt = [int(lhs_shape[i]) for i in lhs_perm]
    rt = [int(rhs_shape[i]) for i in rhs_perm]
    if isinstance(padding, str):
        key = padding.upper()
        if key not in ("SAME", "VALID"):
            raise ValueError(
                f"conv_transpose_shape_tuple: expected padding 'SAME', 'VALID' or (low, "
                f"high) pairs, got {padding!r}."
            )
        pads = [conv_transpose_pads(k, int(s), key) for k, s in zip(rt[2:], window_strides)]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    space = [
        (i - 1) * int(s) - k + 2 + lo + hi
        for i, k, s, (lo, hi) in zip(lt[2:], rt[2:], window_strides, pads)
    ]
    canon = [lt[0], rt[0], *space]
    out = [0] * len(canon)
    for j, a in enumerate(out_perm):
        out[a] = canon[j]
    return tuple(out)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The shape ``reduce_window`` gives (JAX's ``lax.reduce_window_shape_tuple``):
    per dimension, the dilated operand padded by ``padding``'s ``(low, high)`` pairs,
    then ``max(0, (padded - dilated window) // stride + 1)``.

    >>> reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), ((0, 0), (1, 1)))
    (4, 3)
    """
    n = len(operand_shape)
    bd = (1,) * n if base_dilation is None else tuple(base_dilation)
    wd = (1,) * n if window_dilation is None else tuple(window_dilation)
    sizes = (window_dimensions, window_strides, padding, bd, wd)
    if any(len(s) != n for s in sizes) or min(*bd, *wd, *window_strides, 1) < 1:
        raise ValueError(
            f"reduce_window_shape_tuple: expected windows, positive strides, padding "
            f"pairs and positive dilations for each of the {n} dimensions of "
            f"{tuple(operand_shape)}, got {window_dimensions}, {window_strides}, {padding}, "
            f"{base_dilation}, {window_dilation}."
        )
    out = []
    for d, w, s, (lo, hi), b, wdil in zip(operand_shape, window_dimensions, window_strides,
                                          padding, bd, wd):  # fmt: skip
        dilated = 0 if d == 0 else (int(d) - 1) * b + 1
        window = 0 if w == 0 else (int(w) - 1) * wdil + 1
        out.append(max(0, (dilated + lo + hi - window) // int(s) + 1))
    return tuple(out)


__all__ = [
    "ConvGeneralDilatedDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "RaggedDotDimensionNumbers",
    "ScatterDimensionNumbers",
    "conv_general_dilated_local",
    "conv_transpose_shape_tuple",
    "ragged_dot_general",
    "reduce_window_shape_tuple",
]
