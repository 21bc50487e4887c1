"""Shape primitives: broadcasting, reshaping, transposition, slicing, concatenation,
padding, reversal, iota, dot_general and sort.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP and (if
linear) transpose rule. Eager calls run the abstract eval first, so they raise the
same errors as traced ones.

This module presents the whole shape family. ``broadcast_in_dim``, ``reshape`` and
``transpose``, which the rules of every family use, are defined in
``functrace.lax.base``, ``dot_general`` (with ``dot`` and ``Precision``) in
``functrace.lax.contraction``; both are re-exported here.

Decisions (JAX's semantics unless noted):

* ``pad``: per axis ``(lo, hi, interior)``; negative ``lo``/``hi`` crop.
* ``dot_general``: output axes are batch, lhs free, rhs free; with
  ``preferred_element_type`` the operands are cast to it before multiplying.
* ``sort`` is always stable and orders like NumPy (NaNs last; ``-0.0 == 0.0``);
  ``argsort`` returns int64.
* ``squeeze``/``expand_dims``/``rev``/``sort``/``concatenate`` accept negative axes
  in the wrapper; the primitives' params are always non-negative.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._prng import PRNGKeyArray
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax._util import (
    as_index_tuple,
    check_dtype_kind,
    check_same_dtypes,
    operator_index,
    register_checked,
)
from functrace.lax.base import (
    broadcast_in_dim,
    broadcast_in_dim_p,
    neg,
    operand_shape,
    reduce_sum,
    reshape,
    reshape_p,
    select_n,
    sub,
    transpose,
    transpose_p,
)
from functrace.lax.contraction import Precision, dot, dot_general, dot_general_p
from functrace.lax.contraction import check_precision as check_precision

# ---------------------------------------------------------------------------
# Shared helpers for the blocks below
# ---------------------------------------------------------------------------


def _canonical_axes(
    name: str, axes: Any, shape: tuple[int, ...], ndim: int | None = None
) -> tuple[int, ...]:
    """``axes`` as non-negative Python ints (negative ones count from the end)."""
    nd = len(shape) if ndim is None else ndim
    axes = as_index_tuple(name, axes)
    if any(not -nd <= a < nd for a in axes):
        raise ValueError(
            f"{name}: expected axes in [{-nd}, {nd}) for operand shape {shape}, got {axes}. "
            f"Pass axes that exist in the operand."
        )
    return tuple(a % nd for a in axes)


def _zero_scalar(dtype: np.dtype) -> Any:
    return np.zeros((), dtype)[()]


def _aval_of(x: Any) -> ShapedArray:
    """The aval of a known value or of an ``UndefPrimal`` (a linear input in transpose)."""
    return x.aval if ad.is_undefined_primal(x) else core.get_aval(x)


# ---------------------------------------------------------------------------
# squeeze and expand_dims
# ---------------------------------------------------------------------------


def _squeeze_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if len(set(dimensions)) != len(dimensions) or any(
        not 0 <= d < x.ndim or x.shape[d] != 1 for d in dimensions
    ):
        raise ValueError(
            f"squeeze: expected distinct axes of size 1 of operand shape {x.shape}, got "
            f"dimensions {dimensions}. Only size-1 axes can be removed; use reshape or slice."
        )
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _squeeze_impl(x: Any, *, dimensions: tuple[int, ...]) -> Any:
    return np.squeeze(x, axis=dimensions)


squeeze_p = register_checked(Primitive("squeeze"), _squeeze_impl, _squeeze_abstract)


def squeeze(x: Any, dimensions: tuple[int, ...]) -> Any:
    """Remove the size-1 axes ``dimensions`` (negative axes count from the end)."""
    dims = tuple(sorted(_canonical_axes("squeeze", dimensions, operand_shape(x))))
    if not dims:
        return x
    if type(x) is PRNGKeyArray:  # typed keys: squeeze their data, the words whole
        return PRNGKeyArray(squeeze(x._base, dims))
    return squeeze_p.bind(x, dimensions=dims)


# squeeze only drops size-1 axes: its transpose puts them back.
ad.deflinear2(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


def _squeeze_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, dimensions: tuple[int, ...]
) -> tuple[Any, int]:
    # Drop the shifted size-1 axes; the batch axis moves left past the ones before it.
    (x,), (bdim,) = vals, bdims
    dims = tuple(d + (d >= bdim) for d in dimensions)
    return squeeze_p.bind(x, dimensions=dims), bdim - sum(d < bdim for d in dimensions)


batching.batching_rules[squeeze_p] = _squeeze_batch


def expand_dims(x: Any, dimensions: tuple[int, ...]) -> Any:
    """Insert size-1 axes at output positions ``dimensions`` (a reshape; negative allowed)."""
    shape = operand_shape(x)
    out_ndim = len(shape) + len(tuple(dimensions))
    dims = _canonical_axes("expand_dims", dimensions, shape, out_ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(
            f"expand_dims: expected distinct dimensions for operand shape {shape}, "
            f"got {tuple(dimensions)}. Name each new axis once."
        )
    rest = iter(shape)
    return reshape(x, tuple(1 if i in dims else next(rest) for i in range(out_ndim)))


# ---------------------------------------------------------------------------
# concatenate
# ---------------------------------------------------------------------------


def _concatenate_abstract(*operands: ShapedArray, dimension: int) -> ShapedArray:
    if not operands:
        raise ValueError(
            "concatenate: expected at least one operand, got none. "
            "Pass a non-empty sequence of arrays."
        )
    first = operands[0]
    shapes = ", ".join(str(o.shape) for o in operands)
    if not 0 <= dimension < first.ndim:
        raise ValueError(
            f"concatenate: expected a dimension in [0, {first.ndim}) for operand shapes "
            f"{shapes}, got {dimension}. Arrays of rank 0 must be reshaped to rank 1 first."
        )
    for o in operands:
        if o.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(o.shape, first.shape)) if i != dimension
        ):
            raise ValueError(
                f"concatenate: expected operand shapes equal except along dimension "
                f"{dimension}, got shapes {shapes}. Reshape or broadcast the operands first."
            )
    check_same_dtypes("concatenate", *operands)
    size = sum(o.shape[dimension] for o in operands)
    shape = first.shape[:dimension] + (size,) + first.shape[dimension + 1 :]
    return ShapedArray(shape, first.dtype, all(o.weak_type for o in operands))


def _concatenate_impl(*operands: Any, dimension: int) -> Any:
    return np.concatenate(operands, axis=dimension)


concatenate_p = register_checked(Primitive("concatenate"), _concatenate_impl, _concatenate_abstract)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` (equal shapes except along ``dimension``) along ``dimension``."""
    operands = list(operands)
    dim = int(operator_index(dimension))
    if operands and type(operands[0]) is PRNGKeyArray:  # typed keys: join their data
        if not all(type(o) is PRNGKeyArray for o in operands):
            raise ValueError("concatenate: expected key arrays only, got keys with other arrays.")
        dim += operands[0].ndim if dim < 0 else 0
        return PRNGKeyArray(concatenate([o._base for o in operands], dim))
    if operands and dim < 0:
        dim += core.get_aval(operands[0]).ndim
    return concatenate_p.bind(*operands, dimension=dim)


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list[Any]:
    # concatenate stacks blocks: the cotangent of each block is its slice of ct.
    ct_shape = core.get_aval(ct).shape
    out: list[Any] = []
    start = 0
    for op in operands:
        size = _aval_of(op).shape[dimension]
        if ad.is_undefined_primal(op):
            starts = tuple(start if i == dimension else 0 for i in range(len(ct_shape)))
            limits = tuple(start + size if i == dimension else d for i, d in enumerate(ct_shape))
            out.append(slice(ct, starts, limits))
        else:
            out.append(None)
        start += size
    return out


ad.deflinear2(concatenate_p, _concatenate_transpose)


def _concatenate_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, dimension: int
) -> tuple[Any, int]:
    # Align every operand on the first batched operand's batch axis (materialize the rest).
    size = batching.batch_size(vals, bdims)
    dst = next(b for b in bdims if b is not None)
    ops = [batching.bdim_at(v, b, size, dst) for v, b in zip(vals, bdims)]
    return concatenate_p.bind(*ops, dimension=dimension + (dimension >= dst)), dst


batching.batching_rules[concatenate_p] = _concatenate_batch

# ---------------------------------------------------------------------------
# slice (static start, limit and stride)
# ---------------------------------------------------------------------------


def _slice_shape(start: int, limit: int, stride: int) -> int:
    return (limit - start + stride - 1) // stride


def _slice_abstract(
    x: ShapedArray,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> ShapedArray:
    steps = (1,) * x.ndim if strides is None else strides
    if not len(start_indices) == len(limit_indices) == len(steps) == x.ndim:
        raise ValueError(
            f"slice: expected start_indices, limit_indices and strides of length {x.ndim} "
            f"for operand shape {x.shape}, got {start_indices}, {limit_indices} and "
            f"{strides}. Give one entry per axis."
        )
    for s, l, k, d in zip(start_indices, limit_indices, steps, x.shape):
        if not 0 <= s <= l <= d or k < 1:
            raise ValueError(
                f"slice: expected 0 <= start <= limit <= size and strides >= 1 for operand "
                f"shape {x.shape}, got start_indices={start_indices}, "
                f"limit_indices={limit_indices}, strides={strides}. Clip the bounds to the "
                f"operand shape."
            )
    shape = tuple(_slice_shape(s, l, k) for s, l, k in zip(start_indices, limit_indices, steps))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(
    x: Any,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> Any:
    steps = (1,) * len(start_indices) if strides is None else strides
    idx = tuple(builtins.slice(s, l, k) for s, l, k in zip(start_indices, limit_indices, steps))
    return np.asarray(x)[idx]


slice_p = register_checked(Primitive("slice"), _slice_impl, _slice_abstract)


def slice(
    x: Any,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],  # noqa: A001
    strides: tuple[int, ...] | None = None,
) -> Any:
    """``x[start:limit:stride]`` along every axis, with static bounds (no negative indices)."""
    starts = as_index_tuple("slice", start_indices)
    limits = as_index_tuple("slice", limit_indices)
    steps = None if strides is None else as_index_tuple("slice", strides)
    if type(x) is PRNGKeyArray:  # typed keys: slice their data, the words whole
        steps_k = None if steps is None else (*steps, 1)
        return PRNGKeyArray(slice(x._base, (*starts, 0), (*limits, 2), steps_k))
    shape = core.get_aval(x).shape
    if (
        limits == shape
        and not any(starts)
        and len(starts) == len(shape)
        and (steps is None or all(k == 1 for k in steps))
    ):
        return x
    return slice_p.bind(x, start_indices=starts, limit_indices=limits, strides=steps)


def _slice_transpose(
    ct: Any,
    x: Any,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> list[Any]:
    # The transpose of taking elements is putting them back among zeros: a pad with
    # lo = start, interior = stride - 1 and hi = what is left after the last element taken.
    shape = x.aval.shape
    steps = (1,) * len(shape) if strides is None else strides
    out_shape = core.get_aval(ct).shape
    config = []
    for s, k, n, d in zip(start_indices, steps, out_shape, shape):
        end = s + (n - 1) * k + 1 if n else s
        config.append((s, d - end, k - 1))
    return [pad(ct, _zero_scalar(core.get_aval(ct).dtype), tuple(config))]


ad.deflinear2(slice_p, _slice_transpose)


def _slice_batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> tuple[Any, int]:
    # Take the whole batch axis.
    (x,), (bdim,) = vals, bdims
    size = core.get_aval(x).shape[bdim]

    def ins(t: tuple[int, ...], v: int) -> tuple[int, ...]:
        return t[:bdim] + (v,) + t[bdim:]

    steps = None if strides is None else ins(strides, 1)
    return slice_p.bind(
        x,
        start_indices=ins(start_indices, 0),
        limit_indices=ins(limit_indices, size),
        strides=steps,
    ), bdim


batching.batching_rules[slice_p] = _slice_batch

# ---------------------------------------------------------------------------
# pad (lo/hi may be negative: cropping; interior inserts values between elements)
# ---------------------------------------------------------------------------

PadConfig = tuple[tuple[int, int, int], ...]


def _dilated(n: int, interior: int) -> int:
    return n + max(n - 1, 0) * interior


def _pad_abstract(
    x: ShapedArray, padding_value: ShapedArray, *, padding_config: PadConfig
) -> ShapedArray:
    if padding_value.shape != ():
        raise ValueError(
            f"pad: expected a scalar padding_value, got shape {padding_value.shape} (operand "
            f"shape {x.shape}). Pass a 0-d array or a Python scalar."
        )
    check_same_dtypes("pad", x, padding_value)
    if len(padding_config) != x.ndim or any(len(c) != 3 for c in padding_config):
        raise ValueError(
            f"pad: expected one (lo, hi, interior) triple per axis of operand shape "
            f"{x.shape}, got padding_config={padding_config}. Give {x.ndim} triples."
        )
    shape = []
    for (lo, hi, interior), d in zip(padding_config, x.shape):
        size = lo + hi + _dilated(d, interior)
        if interior < 0 or size < 0:
            raise ValueError(
                f"pad: expected interior >= 0 and a non-negative output size on every axis "
                f"for operand shape {x.shape}, got padding_config={padding_config}. Negative "
                f"lo/hi may crop at most the (dilated) axis."
            )
        shape.append(size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _pad_impl(x: Any, padding_value: Any, *, padding_config: PadConfig) -> Any:
    x = np.asarray(x)
    # Pad with the non-negative parts of lo/hi, then crop the negative parts.
    full = [
        max(lo, 0) + max(hi, 0) + _dilated(d, i) for (lo, hi, i), d in zip(padding_config, x.shape)
    ]
    out = np.full(full, padding_value, dtype=x.dtype)
    out[
        tuple(
            builtins.slice(max(lo, 0), max(lo, 0) + _dilated(d, i), i + 1)
            for (lo, hi, i), d in zip(padding_config, x.shape)
        )
    ] = x
    return out[
        tuple(
            builtins.slice(max(-lo, 0), n - max(-hi, 0))
            for (lo, hi, _), n in zip(padding_config, full)
        )
    ]


pad_p = register_checked(Primitive("pad"), _pad_impl, _pad_abstract)


def pad(x: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad ``x`` with the scalar ``padding_value``; per axis (lo, hi, interior), lo/hi < 0 crop."""
    config = tuple(as_index_tuple("pad", c) for c in padding_config)
    dtype = core.get_aval(x).dtype
    if type(padding_value) in (bool, int, float, complex):
        # A Python scalar is weakly typed: it takes the operand's dtype when that is lossless.
        weak = core.get_aval(padding_value).dtype
        if dtypes.promote((dtype, False), (weak, True))[0] == dtype:
            padding_value = np.array(padding_value, dtype)[()]
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: PadConfig) -> list[Any]:
    # ct_x: undo the edges (a pad by -lo, -hi), then keep every (interior + 1)-th element;
    # ct_padding_value: the padding value was copied everywhere else: sum(ct) - sum(ct_x).
    aval = core.get_aval(ct)
    core_part = pad(
        ct, _zero_scalar(aval.dtype), tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    )
    shape = core.get_aval(core_part).shape
    ct_x = slice(core_part, (0,) * len(shape), shape, tuple(i + 1 for *_, i in padding_config))
    ct_pv = None
    if ad.is_undefined_primal(padding_value):
        everything = tuple(range(len(shape)))
        ct_pv = sub(reduce_sum(ct, everything), reduce_sum(ct_x, everything))
    return [ct_x if ad.is_undefined_primal(x) else None, ct_pv]


ad.deflinear2(pad_p, _pad_transpose)


def _pad_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, padding_config: PadConfig
) -> tuple[Any, int]:
    x, pv = vals
    bx, bpv = bdims
    if bpv is None:  # one padding value: leave the batch axis unpadded
        cfg = padding_config[:bx] + ((0, 0, 0),) + padding_config[bx:]
        return pad_p.bind(x, pv, padding_config=cfg), bx
    # A padding value per example: pad with zeros, then select the example's padding value
    # wherever a padded mask of ones says the element did not come from x.
    size = batching.batch_size(vals, bdims)
    x = batching.bdim_at(x, bx, size, 0)
    aval = core.get_aval(x)
    out = pad_p.bind(x, _zero_scalar(aval.dtype), padding_config=((0, 0, 0), *padding_config))
    out_shape = core.get_aval(out).shape
    ones = broadcast_in_dim(np.True_, aval.shape[1:], ())
    from_x = pad_p.bind(ones, np.False_, padding_config=padding_config)
    from_x = broadcast_in_dim(from_x, out_shape, tuple(range(1, len(out_shape))))
    pv = broadcast_in_dim(batching.moveaxis(pv, bpv, 0), out_shape, (0,))
    return select_n(from_x, pv, out), 0


batching.batching_rules[pad_p] = _pad_batch

# ---------------------------------------------------------------------------
# rev
# ---------------------------------------------------------------------------


def _rev_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise ValueError(
            f"rev: expected distinct axes in [0, {x.ndim}) for operand shape {x.shape}, got "
            f"dimensions {dimensions}. Name each reversed axis once."
        )
    return x


def _rev_impl(x: Any, *, dimensions: tuple[int, ...]) -> Any:
    return np.flip(x, dimensions)


rev_p = register_checked(Primitive("rev"), _rev_impl, _rev_abstract)


def rev(x: Any, dimensions: tuple[int, ...]) -> Any:
    """Reverse the order of elements along ``dimensions``."""
    dims = tuple(sorted(_canonical_axes("rev", dimensions, operand_shape(x))))
    if not dims:
        return x
    if type(x) is PRNGKeyArray:  # typed keys: reverse their data, the words whole
        return PRNGKeyArray(rev(x._base, dims))
    return rev_p.bind(x, dimensions=dims)


# Reversal is a permutation that is its own inverse.
ad.deflinear2(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _rev_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, dimensions: tuple[int, ...]
) -> tuple[Any, int]:
    # Reverse the shifted axes; the batch axis stays where it is.
    (x,), (bdim,) = vals, bdims
    return rev_p.bind(x, dimensions=tuple(d + (d >= bdim) for d in dimensions)), bdim


batching.batching_rules[rev_p] = _rev_batch

# ---------------------------------------------------------------------------
# iota (no operands)
# ---------------------------------------------------------------------------


def _iota_abstract(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> ShapedArray:
    if dtype.kind not in "iuf":
        raise TypeError(
            f"iota: expected an integer or floating-point dtype, got {dtype.name}. "
            f"Cast the result with convert_element_type if needed."
        )
    if any(d < 0 for d in shape) or not 0 <= dimension < len(shape):
        raise ValueError(
            f"iota: expected a non-negative shape and a dimension in "
            f"[0, {len(shape)}), got shape {shape} and dimension {dimension}. "
            f"Pass shape=(size,) for a 1-d iota."
        )
    return ShapedArray(shape, dtype)


def _iota_impl(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> Any:
    r = np.arange(shape[dimension], dtype=dtype)
    if len(shape) == 1:
        return r
    return np.broadcast_to(
        r.reshape([-1 if i == dimension else 1 for i in range(len(shape))]), shape
    )


iota_p = register_checked(Primitive("iota"), _iota_impl, _iota_abstract)
ad.defjvp_zero(iota_p)  # a constant: no operands to differentiate


def _iota_batch(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> tuple[Any, None]:
    # No operands, so nothing is ever batched (BatchTrace does not even call this): the
    # same iota for every example.
    return iota_p.bind(**params), None


batching.batching_rules[iota_p] = _iota_batch


def iota(dtype: Any, size: int, dimension: int = 0, shape: tuple[int, ...] | None = None) -> Any:
    """``0, 1, ..., size - 1`` along ``dimension`` of ``shape`` (default ``(size,)``)."""
    size = int(operator_index(size))
    dim = int(operator_index(dimension))
    shp = (size,) if shape is None else as_index_tuple("iota", shape)
    if shape is not None and (not -len(shp) <= dim < len(shp) or shp[dim] != size):
        raise ValueError(
            f"iota: expected shape[dimension] == size, got shape {shp}, "
            f"dimension {dim} and size {size}. Make the sizes agree."
        )
    if shape is not None and dim < 0:
        dim += len(shp)
    return iota_p.bind(dtype=np.dtype(dtype), shape=shp, dimension=dim)


# ---------------------------------------------------------------------------
# sort (multiple results: all operands sorted by the first num_keys, lexicographically)
# ---------------------------------------------------------------------------


def _sort_abstract(
    *operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int
) -> list[ShapedArray]:
    if not operands:
        raise ValueError("sort: expected at least one operand, got none. Pass an array.")
    shapes = ", ".join(str(o.shape) for o in operands)
    if any(o.shape != operands[0].shape for o in operands):
        raise ValueError(
            f"sort: expected operands of equal shape, got shapes {shapes}. "
            f"Broadcast the operands first."
        )
    if not 0 <= dimension < operands[0].ndim:
        raise ValueError(
            f"sort: expected a dimension in [0, {operands[0].ndim}) for operand "
            f"shapes {shapes}, got {dimension}. Rank-0 arrays cannot be sorted."
        )
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"sort: expected num_keys in [1, {len(operands)}] for operand shapes "
            f"{shapes}, got {num_keys}. The keys are the first operands."
        )
    for o in operands[:num_keys]:
        check_dtype_kind("sort", o, "biufc", "a numeric or boolean key")
    return list(operands)


def _sort_impl(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Any]:
    operands = tuple(np.asarray(o) for o in operands)
    if len(operands) == 1:
        return [np.sort(operands[0], axis=dimension, kind="stable")]
    if num_keys == 1:
        perm = np.argsort(operands[0], axis=dimension, kind="stable")
    else:  # np.lexsort sorts by its *last* key first
        perm = np.lexsort(operands[num_keys - 1 :: -1], axis=dimension)
    return [np.take_along_axis(o, perm, axis=dimension) for o in operands]


sort_p = register_checked(Primitive("sort", multiple_results=True), _sort_impl, _sort_abstract)


def _sort_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    dimension: int,
    is_stable: bool,
    num_keys: int,
) -> tuple[list[Any], list[Any]]:
    # d sort(x)[i] = dx[perm[i]]: sort each tangent with the (primal) keys.
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = sort_p.bind(*primals, **params)
    live = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
    t_outs: list[Any] = [ad.Zero.from_primal(o) for o in outs]
    if live:
        permuted = sort_p.bind(*primals[:num_keys], *[tangents[i] for i in live], **params)
        for i, t in zip(live, permuted[num_keys:]):
            t_outs[i] = t
    return outs, t_outs


def _sort_transpose(
    cts: Sequence[Any], *operands: Any, dimension: int, is_stable: bool, num_keys: int
) -> list[Any]:
    # Linear only in non-key operands, as a permutation P: the transpose applies P^-1,
    # i.e. sorts ct by the permutation perm = sort(keys..., iota)[-1].
    keys = operands[:num_keys]
    if any(ad.is_undefined_primal(k) for k in keys):
        raise ValueError(
            "sort transpose: expected known (non-linear) keys, got a linear key. "
            "Only the non-key operands of sort are linear."
        )
    live = [
        i
        for i in range(num_keys, len(operands))
        if ad.is_undefined_primal(operands[i]) and type(cts[i]) is not ad.Zero
    ]
    out: list[Any] = [None] * len(operands)
    if not live:
        return out
    shape = core.get_aval(keys[0]).shape
    params = dict(dimension=dimension, is_stable=is_stable)
    positions = iota(np.int64, shape[dimension], dimension, shape)
    perm = sort_p.bind(*keys, positions, num_keys=num_keys, **params)[-1]
    unsorted = sort_p.bind(perm, *[cts[i] for i in live], num_keys=1, **params)[1:]
    for i, ct in zip(live, unsorted):
        out[i] = ct
    return out


ad.jvp_rules[sort_p] = _sort_jvp
ad.transpose_rules[sort_p] = _sort_transpose
ad.linear_primitives.add(sort_p)


def _sort_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[list[Any], list[int]]:
    # Align every operand on the first batched operand's batch axis; sort along the
    # shifted dimension.
    size = batching.batch_size(vals, bdims)
    dst = next(b for b in bdims if b is not None)
    ops = [batching.bdim_at(v, b, size, dst) for v, b in zip(vals, bdims)]
    outs = sort_p.bind(
        *ops, dimension=dimension + (dimension >= dst), is_stable=is_stable, num_keys=num_keys
    )
    return outs, [dst] * len(outs)


batching.batching_rules[sort_p] = _sort_batch


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """``operand`` sorted ascending along ``dimension`` (NaNs last, as in NumPy).

    A tuple/list of operands (one shape) is sorted together by its first ``num_keys``
    (lexicographically) and returned as a tuple."""
    if isinstance(operand, (tuple, list)):
        ops = list(operand)
        if not ops:
            raise ValueError("sort: expected at least one operand, got an empty sequence.")
        k = int(operator_index(num_keys))
        if not 1 <= k <= len(ops):
            raise ValueError(
                f"sort: expected num_keys in [1, {len(ops)}] for {len(ops)} operands, got {k}."
            )
        return tuple(sort_multi(ops, dimension, k, is_stable))
    if num_keys != 1:
        raise ValueError(f"sort: expected num_keys=1 for a single operand, got {num_keys}.")
    dim = _canonical_axes("sort", (dimension,), core.get_aval(operand).shape)[0]
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(
    keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
) -> tuple[Any, Any]:
    """``(keys, values)`` sorted along ``dimension`` by ``keys``."""
    out = sort_multi([keys, values], dimension, 1, is_stable)
    return out[0], out[1]


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``axis`` (descending; ties in index order, NaN
    counting as largest) and their int32 indices."""
    shape = core.get_aval(operand).shape
    if not shape:
        raise ValueError("top_k: expected an operand with at least one axis, got shape ().")
    ax = _canonical_axes("top_k", (axis,), shape)[0]
    k = int(operator_index(k))
    if not 0 <= k <= shape[ax]:
        raise ValueError(
            f"top_k: expected k in [0, {shape[ax]}] for axis {ax} of shape {shape}, got {k}."
        )
    pos = iota(np.int32, shape[ax], ax, shape)
    # ascending by (value, -position), then reversed: descending values, ties by position
    vals, negpos = sort_multi([operand, neg(pos)], ax, 2, True)
    start = [0] * len(shape)
    start[ax] = shape[ax] - k
    vals = rev(slice(vals, tuple(start), shape), (ax,))
    idx = neg(rev(slice(negpos, tuple(start), shape), (ax,)))
    return vals, idx


def sort_multi(
    operands: Sequence[Any], dimension: int = -1, num_keys: int = 1, is_stable: bool = True
) -> list[Any]:
    """Sort all ``operands`` along ``dimension`` by the first ``num_keys`` (lexicographic)."""
    operands = list(operands)
    shape = core.get_aval(operands[0]).shape if operands else ()
    dim = _canonical_axes("sort", (dimension,), shape)[0]
    return sort_p.bind(
        *operands, dimension=dim, is_stable=bool(is_stable), num_keys=int(operator_index(num_keys))
    )


def argsort(x: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    """int64 indices that sort ``x`` along ``dimension`` (NumPy's ``argsort(kind="stable")``)."""
    shape = core.get_aval(x).shape
    dim = _canonical_axes("argsort", (dimension,), shape)[0]
    positions = iota(np.int64, shape[dim], dim, shape)
    return sort_p.bind(x, positions, dimension=dim, is_stable=bool(is_stable), num_keys=1)[1]


__all__ = [
    "Precision",
    "argsort",
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "concatenate",
    "concatenate_p",
    "dot",
    "dot_general",
    "dot_general_p",
    "expand_dims",
    "iota",
    "iota_p",
    "pad",
    "pad_p",
    "rev",
    "rev_p",
    "reshape",
    "reshape_p",
    "slice",
    "slice_p",
    "sort",
    "sort_key_val",
    "sort_multi",
    "sort_p",
    "squeeze",
    "squeeze_p",
    "top_k",
    "transpose",
    "transpose_p",
]
