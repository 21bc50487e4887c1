"""Op-table rows: functrace.numpy rows: reductions, products, shape ops, creation."""

from __future__ import annotations

import numpy as np
import scipy.special

import functrace.numpy as fnp
import functrace.scipy.special as fsp
from functrace import nn
from op_db import BOOL, INT, POS, Arg, F, OpInfo

F64 = (np.float64,)
I64 = (np.int64,)
BITS = Arg("int", (-1, 1))  # many zeros: any/all see both outcomes
SPACED = Arg(domain=(0.5, 3.0))  # for roll's data-dependent shift
PROD_ARG = Arg(domain=(-1.5, 1.5))


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


_SDPA_MASK = np.array([[1, 0, 1, 1, 0], [0, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)


def _sdpa_ref(q, k, v, mask, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * float(scale or 1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

REDUCTIONS: list[OpInfo] = [
    _row(
        "sum_axis_tuple",
        lambda x: fnp.sum(x, axis=(0, -1)),
        lambda x: np.sum(x, axis=(0, -1)),
        prims=("reduce_sum",),
        min_dims=2,
        rtol=1e-5,
    ),
    _row(
        "sum_initial",
        lambda x: fnp.sum(x, axis=0, initial=1.5),
        lambda x: np.sum(x, axis=0, initial=1.5),
        prims=("reduce_sum", "add"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "sum_int32",
        lambda x: fnp.sum(fnp.astype(x, np.int32), axis=-1),
        lambda x: np.sum(np.asarray(x).astype(np.int32), axis=-1),
        (INT,),
        ("convert_element_type", "reduce_sum"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row(
        "sum_bool",
        fnp.sum,
        np.sum,
        (BOOL,),
        ("convert_element_type", "reduce_sum"),
        grad=False,
        dtypes=(np.bool_,),
    ),
    _row(
        "mean_keepdims",
        lambda x: fnp.mean(x, axis=(-1,), keepdims=True),
        lambda x: np.mean(x, axis=(-1,), keepdims=True),
        prims=("reduce_sum", "div"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "mean_int",
        lambda x: fnp.mean(x, axis=0),
        lambda x: np.mean(x, axis=0),
        (INT,),
        ("convert_element_type", "reduce_sum", "div"),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("var", fnp.var, np.var, prims=("reduce_sum", "integer_pow"), rtol=1e-5),
    _row(
        "var_axis_keepdims",
        lambda x: fnp.var(x, axis=-1, keepdims=True),
        lambda x: np.var(x, axis=-1, keepdims=True),
        prims=("reduce_sum", "integer_pow"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "var_ddof",
        lambda x: fnp.var(x, axis=0, ddof=1),
        lambda x: np.var(x, axis=0, ddof=1),
        prims=("reduce_sum", "integer_pow"),
        shapes=((4, 3),),
        rtol=1e-5,
    ),
    _row(
        "var_int",
        lambda x: fnp.var(x),
        lambda x: np.var(x),
        (INT,),
        ("convert_element_type", "reduce_sum"),
        grad=False,
        dtypes=I64,
        rtol=1e-5,
    ),
    _row("std", fnp.std, np.std, prims=("reduce_sum", "sqrt"), shapes=((3, 4),), rtol=1e-5),
    _row(
        "std_axis_ddof",
        lambda x: fnp.std(x, axis=(0, 2), ddof=1, keepdims=True),
        lambda x: np.std(x, axis=(0, 2), ddof=1, keepdims=True),
        prims=("reduce_sum", "sqrt"),
        shapes=((2, 3, 2),),
        rtol=1e-5,
    ),
    _row("max", fnp.max, np.max, prims=("reduce_max",), avoid_ties=True),
    _row(
        "max_axis_keepdims",
        lambda x: fnp.max(x, axis=-1, keepdims=True),
        lambda x: np.max(x, axis=-1, keepdims=True),
        prims=("reduce_max",),
        min_dims=1,
        avoid_ties=True,
    ),
    _row(
        "max_initial",
        lambda x: fnp.max(x, axis=0, initial=0.25),
        lambda x: np.max(x, axis=0, initial=0.25),
        prims=("reduce_max", "max"),
        min_dims=1,
        avoid=(0.25,),
        avoid_ties=True,
    ),
    _row(
        "amax_axis_tuple",
        lambda x: fnp.amax(x, axis=(0, 1)),
        lambda x: np.amax(x, axis=(0, 1)),
        prims=("reduce_max",),
        min_dims=2,
    ),
    _row(
        "max_int",
        lambda x: fnp.max(x, axis=0),
        lambda x: np.max(x, axis=0),
        (INT,),
        ("reduce_max",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("min", fnp.min, np.min, prims=("reduce_min",)),
    _row(
        "min_axis",
        lambda x: fnp.min(x, axis=-2),
        lambda x: np.min(x, axis=-2),
        prims=("reduce_min",),
        min_dims=2,
    ),
    _row(
        "amin_keepdims",
        lambda x: fnp.amin(x, keepdims=True),
        lambda x: np.amin(x, keepdims=True),
        prims=("reduce_min",),
    ),
    # Products of up to 64 entries: inside (-1.5, 1.5) their second derivatives stay within a
    # few orders of magnitude of each other, so finite differences can check each entry.
    _row("prod", fnp.prod, np.prod, (PROD_ARG,), prims=("reduce_prod",), rtol=1e-5),
    _row(
        "prod_axis",
        lambda x: fnp.prod(x, axis=-1, keepdims=True),
        lambda x: np.prod(x, axis=-1, keepdims=True),
        prims=("reduce_prod",),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "prod_bool",
        lambda x: fnp.prod(x, axis=0),
        lambda x: np.prod(x, axis=0),
        (BOOL,),
        ("convert_element_type", "reduce_prod"),
        min_dims=1,
        grad=False,
        dtypes=(np.bool_,),
    ),
    _row("argmax", fnp.argmax, np.argmax, prims=("argmax", "reshape"), grad=False),
    _row(
        "argmax_axis",
        lambda x: fnp.argmax(x, axis=-1),
        lambda x: np.argmax(x, axis=-1),
        prims=("argmax",),
        min_dims=1,
        grad=False,
    ),
    _row(
        "argmax_keepdims",
        lambda x: fnp.argmax(x, keepdims=True),
        lambda x: np.argmax(x, keepdims=True),
        prims=("argmax",),
        grad=False,
    ),
    _row("argmin", fnp.argmin, np.argmin, prims=("argmin",), grad=False),
    _row(
        "argmin_axis_keepdims",
        lambda x: fnp.argmin(x, axis=0, keepdims=True),
        lambda x: np.argmin(x, axis=0, keepdims=True),
        prims=("argmin",),
        min_dims=1,
        grad=False,
    ),
    _row(
        "argmax_int_ties",
        lambda x: fnp.argmax(x, axis=0),
        lambda x: np.argmax(x, axis=0),
        (BITS,),
        ("argmax",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("any", fnp.any, np.any, (BITS,), ("ne", "reduce_max"), grad=False, dtypes=I64),
    _row(
        "any_axis",
        lambda x: fnp.any(x, axis=-1),
        lambda x: np.any(x, axis=-1),
        (BITS,),
        ("reduce_max",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("all", fnp.all, np.all, (BITS,), ("ne", "reduce_min"), grad=False, dtypes=I64),
    _row(
        "all_axis_keepdims",
        lambda x: fnp.all(x, axis=(0,), keepdims=True),
        lambda x: np.all(x, axis=(0,), keepdims=True),
        (BOOL,),
        ("reduce_min",),
        min_dims=1,
        grad=False,
        dtypes=(np.bool_,),
    ),
    _row("all_float", fnp.all, np.all, prims=("ne", "reduce_min"), grad=False),
    _row(
        "logsumexp",
        fnp.logsumexp,
        scipy.special.logsumexp,
        prims=("reduce_max", "stop_gradient", "exp", "log", "reduce_sum"),
        rtol=1e-5,
    ),
    _row(
        "logsumexp_axis_keepdims",
        lambda x: fnp.logsumexp(x, axis=-1, keepdims=True),
        lambda x: scipy.special.logsumexp(x, axis=-1, keepdims=True),
        prims=("reduce_max", "exp", "log"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "logsumexp_b",
        lambda x, b: fnp.logsumexp(x, axis=0, b=b),
        lambda x, b: scipy.special.logsumexp(x, axis=0, b=b),
        (F, POS),
        ("reduce_max", "exp", "log", "mul"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "logsumexp_int",
        fnp.logsumexp,
        scipy.special.logsumexp,
        (INT,),
        ("convert_element_type", "reduce_max"),
        grad=False,
        dtypes=I64,
        rtol=1e-6,
    ),
    _row("cumsum", fnp.cumsum, np.cumsum, prims=("cumsum", "reshape"), rtol=1e-5),
    _row(
        "cumsum_axis",
        lambda x: fnp.cumsum(x, axis=-1),
        lambda x: np.cumsum(x, axis=-1),
        prims=("cumsum",),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "cumsum_int32",
        lambda x: fnp.cumsum(fnp.astype(x, np.int32), axis=0),
        lambda x: np.cumsum(np.asarray(x).astype(np.int32), axis=0),
        (INT,),
        ("cumsum",),
        min_dims=1,
        grad=False,
        dtypes=I64,
    ),
    _row("cumprod", fnp.cumprod, np.cumprod, (PROD_ARG,), prims=("cumprod",), rtol=1e-5),
    _row(
        "cumprod_axis",
        lambda x: fnp.cumprod(x, axis=0),
        lambda x: np.cumprod(x, axis=0),
        prims=("cumprod",),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "nansum",
        lambda x: fnp.nansum(fnp.where(x > 1.0, np.nan, x), axis=-1),
        lambda x: np.nansum(np.where(x > 1.0, np.nan, x), axis=-1),
        prims=("eq", "select_n", "reduce_sum"),
        min_dims=1,
        avoid=(1.0,),
        rtol=1e-5,
    ),
    _row(
        "nanmean",
        lambda x: fnp.nanmean(fnp.where(x > 1.0, np.nan, x)),
        lambda x: np.nanmean(np.where(x > 1.0, np.nan, x)),
        prims=("eq", "select_n", "reduce_sum", "div"),
        shapes=((3, 4),),
        avoid=(1.0,),
        rtol=1e-5,
    ),
]

# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def _prod_row(name: str, fn, ref, shapes, prims=("dot_general",), **kw) -> OpInfo:
    kw.setdefault("rtol", 1e-5)
    return OpInfo(name, fn, ref, (F,) * len(shapes), tuple(prims), shapes=tuple(shapes), **kw)


def _einsum_row(spec: str, *shapes: tuple[int, ...], prims=("dot_general",)) -> OpInfo:
    return _prod_row(
        f"einsum[{spec}]",
        lambda *xs: fnp.einsum(spec, *xs),
        lambda *xs: np.einsum(spec, *xs),
        shapes,
        prims,
    )


PRODUCTS: list[OpInfo] = [
    _prod_row("matmul_2d", fnp.matmul, np.matmul, [(3, 4), (4, 5)]),
    _prod_row("matmul_batch", fnp.matmul, np.matmul, [(2, 3, 4), (2, 4, 5)]),
    _prod_row(
        "matmul_broadcast_batch",
        fnp.matmul,
        np.matmul,
        [(2, 1, 3, 4), (5, 4, 2)],
        ("broadcast_in_dim", "dot_general"),
    ),
    _prod_row(
        "matmul_mat_batch", fnp.matmul, np.matmul, [(3, 4), (2, 4, 5)], ("dot_general", "transpose")
    ),
    _prod_row("matmul_batch_mat", fnp.matmul, np.matmul, [(2, 3, 4), (4, 5)]),
    _prod_row("matmul_vec_mat", fnp.matmul, np.matmul, [(4,), (2, 4, 3)]),
    _prod_row("matmul_mat_vec", fnp.matmul, np.matmul, [(2, 3, 4), (4,)]),
    _prod_row("matmul_vec_vec", fnp.matmul, np.matmul, [(4,), (4,)]),
    _prod_row("matmul_operator", lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4,)]),
    OpInfo(
        "matmul_int",
        fnp.matmul,
        np.matmul,
        (INT, INT),
        ("dot_general",),
        shapes=((2, 3), (3, 2)),
        grad=False,
        dtypes=I64,
    ),
    OpInfo(
        "matmul_bool",
        fnp.matmul,
        np.matmul,
        (BOOL, BOOL),
        ("dot_general", "ne"),
        shapes=((2, 3), (3, 2)),
        grad=False,
        dtypes=(np.bool_,),
    ),
    OpInfo(
        "matmul_promote",
        fnp.matmul,
        np.matmul,
        (F, INT),
        ("convert_element_type",),
        shapes=((2, 3), (3,)),
    ),
    _prod_row("dot_1d", fnp.dot, np.dot, [(4,), (4,)]),
    _prod_row("dot_2d", fnp.dot, np.dot, [(2, 3), (3, 4)]),
    _prod_row("dot_nd_1d", fnp.dot, np.dot, [(2, 3, 4), (4,)]),
    _prod_row("dot_nd_md", fnp.dot, np.dot, [(2, 3, 4), (5, 4, 2)]),
    _prod_row("dot_scalar", fnp.dot, np.dot, [(), (2, 3)], ("mul",)),
    _prod_row("vdot", fnp.vdot, np.vdot, [(2, 3), (3, 2)], ("reshape", "dot_general")),
    _prod_row("outer", fnp.outer, np.outer, [(3,), (2, 2)], ("mul",)),
    _prod_row("inner", fnp.inner, np.inner, [(2, 3), (4, 3)]),
    _prod_row("inner_1d", fnp.inner, np.inner, [(3,), (3,)]),
    _prod_row("tensordot_int", fnp.tensordot, np.tensordot, [(2, 3, 4), (3, 4, 5)]),
    _prod_row(
        "tensordot_pairs",
        lambda a, b: fnp.tensordot(a, b, axes=([0, -1], [1, 0])),
        lambda a, b: np.tensordot(a, b, axes=([0, -1], [1, 0])),
        [(3, 2, 4), (4, 3)],
    ),
    _prod_row(
        "tensordot_0",
        lambda a, b: fnp.tensordot(a, b, 0),
        lambda a, b: np.tensordot(a, b, 0),
        [(2,), (3, 2)],
    ),
    _einsum_row("ij,jk->ik", (3, 4), (4, 2)),
    _einsum_row("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    _einsum_row("i,i->", (4,), (4,)),
    _einsum_row("ij->ji", (3, 4), prims=("transpose",)),
    _einsum_row("ij->j", (3, 4), prims=("reduce_sum",)),
    _einsum_row("ij->", (3, 4), prims=("reduce_sum",)),
    _einsum_row("i,j->ij", (3,), (4,)),
    _einsum_row("bi,bi->b", (2, 3), (2, 3)),
    _einsum_row("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
    _einsum_row("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
    _einsum_row("...i,i", (2, 3, 4), (4,)),
    _einsum_row("ij,jk", (3, 4), (4, 2)),
    _einsum_row("ba,ca", (3, 4), (2, 4)),
    _einsum_row("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _einsum_row("ij,kj,i->k", (2, 3), (4, 3), (2,)),
    _einsum_row("ijk,ik->kj", (2, 3, 4), (2, 4), prims=("dot_general", "transpose")),
    _einsum_row("ij,ij->ij", (2, 3), (1, 3), prims=("reshape", "dot_general")),
]

# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------

SHAPES: list[OpInfo] = [
    _row("transpose", fnp.transpose, np.transpose, prims=("transpose",)),
    _row(
        "transpose_axes",
        lambda x: fnp.transpose(x, (-1, 0, 1)),
        lambda x: np.transpose(x, (-1, 0, 1)),
        prims=("transpose",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "swapaxes",
        lambda x: fnp.swapaxes(x, 0, -1),
        lambda x: np.swapaxes(x, 0, -1),
        prims=("transpose",),
        min_dims=2,
    ),
    _row(
        "moveaxis",
        lambda x: fnp.moveaxis(x, 0, -1),
        lambda x: np.moveaxis(x, 0, -1),
        prims=("transpose",),
        min_dims=1,
    ),
    _row(
        "moveaxis_multi",
        lambda x: fnp.moveaxis(x, [0, 1], [-1, 0]),
        lambda x: np.moveaxis(x, [0, 1], [-1, 0]),
        prims=("transpose",),
        min_dims=3,
    ),
    _row("squeeze", fnp.squeeze, np.squeeze, prims=("reshape",), shapes=((1, 3, 1),)),
    _row(
        "squeeze_axis",
        lambda x: fnp.squeeze(x, axis=-1),
        lambda x: np.squeeze(x, axis=-1),
        prims=("reshape",),
        shapes=((2, 1),),
    ),
    _row(
        "expand_dims",
        lambda x: fnp.expand_dims(x, (0, -1)),
        lambda x: np.expand_dims(x, (0, -1)),
        prims=("reshape",),
    ),
    _row(
        "expand_dims_int",
        lambda x: fnp.expand_dims(x, 1),
        lambda x: np.expand_dims(x, 1),
        prims=("reshape",),
        min_dims=1,
    ),
    _row("ravel", fnp.ravel, np.ravel, prims=("reshape",)),
    _row(
        "ravel_order_F",
        lambda x: fnp.ravel(x, order="F"),
        lambda x: np.ravel(x, order="F"),
        prims=("transpose", "reshape"),
    ),
    _row(
        "reshape_order_F",
        lambda x: fnp.reshape(x, (3, -1), order="F"),
        lambda x: np.reshape(x, (3, -1), order="F"),
        prims=("transpose", "reshape"),
        shapes=((2, 3, 2),),
    ),
    _row(
        "broadcast_to",
        lambda x: fnp.broadcast_to(x, (2, 3, 4)),
        lambda x: np.broadcast_to(x, (2, 3, 4)),
        prims=("broadcast_in_dim",),
        shapes=((3, 1),),
    ),
    _row(
        "broadcast_arrays",
        lambda x, y: fnp.stack(fnp.broadcast_arrays(x, y)),
        lambda x, y: np.stack(np.broadcast_arrays(x, y)),
        (F, F),
        ("broadcast_in_dim", "concatenate"),
    ),
    _row(
        "concatenate",
        lambda x, y: fnp.concatenate([x, y]),
        lambda x, y: np.concatenate([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (4, 3)),
    ),
    _row(
        "concatenate_axis",
        lambda x, y, z: fnp.concatenate((x, y, z), axis=-1),
        lambda x, y, z: np.concatenate((x, y, z), axis=-1),
        (F, F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 1), (2, 2)),
    ),
    _row(
        "concatenate_none",
        lambda x, y: fnp.concatenate([x, y], axis=None),
        lambda x, y: np.concatenate([x, y], axis=None),
        (F, F),
        ("reshape", "concatenate"),
        shapes=((2, 3), (4,)),
    ),
    _row(
        "concatenate_promote",
        lambda x, y: fnp.concatenate([x, y]),
        lambda x, y: np.concatenate([x, y]),
        (F, INT),
        ("convert_element_type",),
        shapes=((2,), (3,)),
    ),
    _row(
        "stack",
        lambda x, y: fnp.stack([x, y]),
        lambda x, y: np.stack([x, y]),
        (F, F),
        ("reshape", "concatenate"),
        shapes="same",
    ),
    _row(
        "stack_axis",
        lambda x, y, z: fnp.stack((x, y, z), axis=-1),
        lambda x, y, z: np.stack((x, y, z), axis=-1),
        (F, F, F),
        ("concatenate",),
        shapes="same",
    ),
    _row(
        "hstack",
        lambda x, y: fnp.hstack([x, y]),
        lambda x, y: np.hstack([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 1)),
    ),
    _row(
        "hstack_1d",
        lambda x, y: fnp.hstack([x, y]),
        lambda x, y: np.hstack([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((3,), ()),
    ),
    _row(
        "vstack",
        lambda x, y: fnp.vstack([x, y]),
        lambda x, y: np.vstack([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((3,), (2, 3)),
    ),
    _row(
        "dstack",
        lambda x, y: fnp.dstack([x, y]),
        lambda x, y: np.dstack([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((3,), (1, 3, 2)),
    ),
    _row(
        "column_stack",
        lambda x, y: fnp.column_stack([x, y]),
        lambda x, y: np.column_stack([x, y]),
        (F, F),
        ("concatenate",),
        shapes=((3,), (3, 2)),
    ),
    _row(
        "split",
        lambda x: fnp.stack(fnp.split(x, 2, axis=1)[::-1]),
        lambda x: np.stack(np.split(x, 2, axis=1)[::-1]),
        prims=("slice",),
        shapes=((3, 4),),
    ),
    _row(
        "split_indices",
        lambda x: fnp.concatenate(fnp.split(x, [1, -2, 10], axis=-1)[::-1], axis=-1),
        lambda x: np.concatenate(np.split(x, [1, -2, 10], axis=-1)[::-1], axis=-1),
        prims=("slice", "concatenate"),
        shapes=((2, 5),),
    ),
    _row(
        "array_split",
        lambda x: fnp.concatenate(fnp.array_split(x, 3)[::-1]),
        lambda x: np.concatenate(np.array_split(x, 3)[::-1]),
        prims=("slice",),
        shapes=((7, 2),),
    ),
    _row(
        "tile",
        lambda x: fnp.tile(x, (2, 1, 3)),
        lambda x: np.tile(x, (2, 1, 3)),
        prims=("broadcast_in_dim", "reshape"),
    ),
    _row(
        "tile_int",
        lambda x: fnp.tile(x, 2),
        lambda x: np.tile(x, 2),
        prims=("broadcast_in_dim", "reshape"),
    ),
    _row(
        "repeat",
        lambda x: fnp.repeat(x, 2),
        lambda x: np.repeat(x, 2),
        prims=("broadcast_in_dim", "reshape"),
    ),
    _row(
        "repeat_axis",
        lambda x: fnp.repeat(x, 3, axis=-1),
        lambda x: np.repeat(x, 3, axis=-1),
        prims=("broadcast_in_dim",),
        min_dims=1,
    ),
    _row(
        "repeat_array",
        lambda x: fnp.repeat(x, [1, 0, 2], axis=1),
        lambda x: np.repeat(x, [1, 0, 2], axis=1),
        prims=("gather", "transpose"),
        shapes=((2, 3),),
    ),
    _row("flip", fnp.flip, np.flip, prims=("rev",)),
    _row(
        "flip_axis",
        lambda x: fnp.flip(x, (0, -1)),
        lambda x: np.flip(x, (0, -1)),
        prims=("rev",),
        min_dims=2,
    ),
    _row("roll", lambda x: fnp.roll(x, 2), lambda x: np.roll(x, 2), prims=("slice", "concatenate")),
    _row(
        "roll_axis",
        lambda x: fnp.roll(x, -1, axis=-1),
        lambda x: np.roll(x, -1, axis=-1),
        prims=("slice", "concatenate"),
        min_dims=1,
    ),
    _row(
        "roll_multi",
        lambda x: fnp.roll(x, (1, 5), axis=(0, 1)),
        lambda x: np.roll(x, (1, 5), axis=(0, 1)),
        prims=("slice", "concatenate"),
        min_dims=2,
    ),
    _row(
        "roll_traced_shift",
        lambda x: fnp.roll(x, fnp.argmax(x) - 1, axis=0),
        lambda x: np.roll(x, np.argmax(x) - 1, axis=0),
        (SPACED,),
        ("argmax", "dynamic_slice", "concatenate"),
        shapes=((4, 2),),
        avoid_ties=True,  # a near-tie moves the argmax (the shift) within a finite difference
    ),
    _row("atleast_1d", fnp.atleast_1d, np.atleast_1d, prims=("reshape",)),
    _row("atleast_2d", fnp.atleast_2d, np.atleast_2d, prims=("reshape",)),
    _row("atleast_3d", fnp.atleast_3d, np.atleast_3d, prims=("reshape",)),
    _row(
        "array_of_tracers",
        lambda x, y: fnp.array([x, y]),
        lambda x, y: np.array([x, y]),
        (F, F),
        ("reshape", "concatenate"),
        shapes="same",
    ),
    _row(
        "array_nested",
        lambda x, y: fnp.array([[x, y], [y, x]]),
        lambda x, y: np.array([[x, y], [y, x]]),
        (F, F),
        ("concatenate",),
        shapes="same",
    ),
]

# ---------------------------------------------------------------------------
# Creation (no inputs, or inputs that only give a shape, dtype or fill value)
# ---------------------------------------------------------------------------


def _create(name: str, fn, ref, prims=("broadcast_in_dim",), **kw) -> OpInfo:
    kw.setdefault("grad", False)
    kw.setdefault("dtypes", F64)
    return OpInfo(name, fn, ref, (), tuple(prims), shapes=(), **kw)


CREATION: list[OpInfo] = [
    _create("zeros", lambda: fnp.zeros((2, 3)), lambda: np.zeros((2, 3))),
    _create("zeros_int32", lambda: fnp.zeros(4, np.int32), lambda: np.zeros(4, np.int32)),
    _create("ones", lambda: fnp.ones((3,)), lambda: np.ones((3,))),
    _create("empty", lambda: fnp.empty((0, 2)), lambda: np.zeros((0, 2))),
    _create("full", lambda: fnp.full((2, 2), 3), lambda: np.full((2, 2), 3)),
    _create(
        "full_dtype", lambda: fnp.full(3, 2.5, np.float32), lambda: np.full(3, 2.5, np.float32)
    ),
    _create("arange", lambda: fnp.arange(5), lambda: np.arange(5), ()),
    _create("arange_float", lambda: fnp.arange(0.5, 3.0, 0.5), lambda: np.arange(0.5, 3, 0.5), ()),
    _create("linspace", lambda: fnp.linspace(0.0, 1.0, 7), lambda: np.linspace(0.0, 1.0, 7), ()),
    _create("eye", lambda: fnp.eye(3, 4, k=1), lambda: np.eye(3, 4, k=1), ()),
    _create("identity", lambda: fnp.identity(3, dtype=int), lambda: np.identity(3, dtype=int), ()),
    _row("zeros_like", fnp.zeros_like, np.zeros_like, prims=("broadcast_in_dim",), grad=False),
    _row(
        "ones_like_dtype",
        lambda x: fnp.ones_like(x, dtype=np.int32),
        lambda x: np.ones_like(x, dtype=np.int32),
        prims=("broadcast_in_dim",),
        grad=False,
    ),
    _row("empty_like", fnp.empty_like, np.zeros_like, prims=("broadcast_in_dim",), grad=False),
    _row(
        "full_like",
        lambda x: fnp.full_like(x, 2.5),
        lambda x: np.full_like(x, 2.5),
        prims=("broadcast_in_dim",),
        grad=False,
    ),
    _row(
        "full_like_traced_fill",
        lambda x, v: fnp.full_like(x, v),
        lambda x, v: np.full_like(x, v),
        (F, F),
        ("broadcast_in_dim",),
        shapes=((2, 3), ()),
    ),
    _row(
        "full_traced_fill",
        lambda v: fnp.full((2, *fnp.shape(v)), v),
        lambda v: np.full((2, *np.shape(v)), v),
        prims=("broadcast_in_dim",),
    ),
    _row(
        "linspace_traced",
        lambda a, b: fnp.linspace(a, b, 5),
        lambda a, b: np.linspace(a, b, 5),
        (F, F),
        ("iota", "mul", "concatenate"),
        shapes=((), ()),
        rtol=1e-5,
    ),
    _row(
        "linspace_traced_axis",
        lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=-1),
        lambda a, b: np.linspace(a, b, 4, endpoint=False, axis=-1),
        (F, F),
        ("iota",),
        shapes=((3,), (2, 1)),
        rtol=1e-5,
    ),
    _row(
        "astype",
        lambda x: fnp.astype(x, np.float32),
        lambda x: np.asarray(x).astype(np.float32),
        prims=("convert_element_type",),
        grad=False,
        dtypes=F64,
    ),
    _row(
        "astype_int",
        lambda x: fnp.astype(x, np.int64),
        lambda x: np.asarray(x).astype(int),
        prims=("convert_element_type",),
        grad=False,
    ),
]

# ---------------------------------------------------------------------------
# Complex parts and rounding, tracer methods
# ---------------------------------------------------------------------------

MATH: list[OpInfo] = [
    _row("conj", fnp.conj, np.conj),
    _row("real", fnp.real, np.real),
    _row("imag", fnp.imag, np.imag, prims=("broadcast_in_dim",)),
    _row("round", fnp.round, np.round, prims=("round",), grad=False),
    _row(
        "round_decimals",
        lambda x: fnp.round(x, 2),
        lambda x: np.round(x, 2),
        prims=("round", "mul", "div"),
        grad=False,
    ),
    _row(
        "round_negative_int",
        lambda x: fnp.round(x * 7, -1),
        lambda x: np.round(x * 7, -1),
        (INT,),
        ("round",),
        grad=False,
        dtypes=I64,
    ),
    # functions added with the JAX-programs issue: composites of primitives
    _row(
        "scipy.special.ndtri",
        fsp.ndtri,
        scipy.special.ndtri,
        (Arg(domain=(0.1, 0.9)),),  # the tails: tests/test_scipy.py
        ("custom_jvp_call", "log", "sqrt"),
        rtol=1e-12,
        grad_tol=5e-5,  # steep third derivative: order-2 finite differences lose digits
    ),
    _row("nn.softplus", nn.softplus, lambda x: np.logaddexp(x, 0.0), prims=("log1p", "exp")),
    _row("nn.silu", nn.silu, lambda x: x / (1 + np.exp(-x)), prims=("logistic",)),
    _row("nn.mish", nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0.0)), prims=("tanh",)),
    # attention (the layers issue): a composite of dot_general, reductions and exp
    _row(
        "nn.scaled_dot_product_attention",
        nn.scaled_dot_product_attention,
        lambda q, k, v: _sdpa_ref(q, k, v, None),
        (F, F, F),
        ("dot_general", "exp", "reduce_max"),
        shapes=((2, 3, 4), (2, 5, 4), (2, 5, 3)),
        rtol=1e-5,
    ),
    _row(
        "nn.scaled_dot_product_attention_bool_mask",
        lambda q, k, v: nn.scaled_dot_product_attention(q, k, v, _SDPA_MASK, scale=0.5),
        lambda q, k, v: _sdpa_ref(q, k, v, _SDPA_MASK, 0.5),
        (F, F, F),
        ("dot_general", "exp", "select_n"),
        shapes=((3, 4), (5, 4), (5, 2)),
        rtol=1e-5,
    ),
]


def _method_row(name: str, f, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(f"method_{name}", f, f, tuple(args), tuple(prims), **kw)


METHODS: list[OpInfo] = [
    _method_row(
        "reductions",
        lambda x: x.sum() + x.mean() + x.max() - x.min() + x.prod() + x.var(),
        prims=("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"),
        rtol=1e-5,
        shapes=((2, 3),),
    ),
    _method_row(
        "reductions_axis",
        lambda x: x.sum(0) * x.mean(axis=0) + x.std(0, ddof=1) + x.max(0, keepdims=False),
        prims=("reduce_sum",),
        shapes=((3, 2),),
        rtol=1e-5,
    ),
    _method_row("argmax", lambda x: x.argmax(axis=-1) + x.argmin(0), shapes=((3, 3),), grad=False),
    _method_row(
        "any_all",
        lambda x: x.any(axis=0) & x.all(-1),
        (BITS,),
        shapes=((3, 3),),
        grad=False,
        dtypes=I64,
    ),
    _method_row(
        "cumsum",
        lambda x: x.cumsum(axis=0) + x.cumprod(0),
        prims=("cumsum",),
        min_dims=1,
        rtol=1e-5,
    ),
    _method_row("T", lambda x: x.T, prims=("transpose",)),
    _method_row("mT", lambda x: x.mT, prims=("transpose",), min_dims=2),
    _method_row(
        "transpose",
        lambda x: x.transpose(1, 0, 2) + x.transpose((1, 0, 2)),
        prims=("transpose",),
        shapes=((2, 3, 2),),
    ),
    _method_row("swapaxes", lambda x: x.swapaxes(0, -1), prims=("transpose",), min_dims=1),
    _method_row("ravel_flatten", lambda x: x.ravel() + x.flatten(), prims=("reshape",)),
    _method_row("squeeze", lambda x: x.squeeze(1), prims=("reshape",), shapes=((3, 1),)),
    _method_row("repeat", lambda x: x.repeat(2, axis=0), prims=("broadcast_in_dim",), min_dims=1),
    _method_row(
        "dot", lambda a, b: a.dot(b), (F, F), ("dot_general",), shapes=((2, 3), (3, 2)), rtol=1e-5
    ),
    _method_row(
        "matmul",
        lambda a, b: a @ b + np.ones((2, 2)) @ b.T @ a.T,
        (F, F),
        ("dot_general",),
        shapes=((2, 3), (3, 2)),
        rtol=1e-5,
    ),
    _method_row(
        "conj_real_imag", lambda x: x.conj() + x.conjugate() + x.real + x.imag, prims=("add",)
    ),
    _method_row("round", lambda x: x.round() + x.round(1), prims=("round",), grad=False),
    _method_row("clip", lambda x: x.clip(-1.0, 1.0), prims=("select_n",), avoid=(-1.0, 1.0)),
]

ROWS: list[OpInfo] = REDUCTIONS + PRODUCTS + SHAPES + CREATION + MATH + METHODS
