"""Op-table rows: grids, index helpers, predicates, bits and the array API's names.

logspace/geomspace (traced endpoints and base), fromfunction, tri, indices, mgrid,
ix_ and the ``*_indices_from`` helpers used to index, ravel_multi_index (clip and wrap
modes: ``raise`` needs concrete indices, so it is tested in test_numpy_utils.py),
fill_diagonal, isposinf/isneginf/isreal/iscomplex/array_equiv, bitwise_count,
packbits/unpackbits, permute_dims, matrix_transpose, concat, unstack, vecdot, matvec,
vecmat, cumulative_sum and cumulative_prod.
"""

from __future__ import annotations

import numpy as np

import functrace.numpy as fnp
from op_db import BOOL, INT, POS, UNIT, Arg, F, OpInfo

I64 = (np.int64,)
BOOLS = (np.bool_,)
BYTE = Arg("int", (0, 255))
BIG_INT = Arg("int", (-(2**62), 2**62))


def _row(name: str, fn, ref, args=(F,), prims=(), **kw) -> OpInfo:
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


def _np_fill_diagonal(a, val, wrap=False):
    out = np.array(a, copy=True)
    np.fill_diagonal(out, val, wrap)
    return out


def _infs(m, x):
    # x with entries above 1 replaced by +inf and below -1 by -inf
    return m.where(x > 1.0, m.inf, m.where(x < -1.0, -m.inf, x))


# ---------------------------------------------------------------------------
# Grids and creation
# ---------------------------------------------------------------------------

GRIDS: list[OpInfo] = [
    _row(
        "logspace",
        lambda a, b: fnp.logspace(a, b, 5),
        lambda a, b: np.logspace(a, b, 5),
        (UNIT, UNIT),
        ("pow",),
        rtol=1e-5,
    ),
    _row(
        "logspace_base_axis",
        lambda a, b, base: fnp.logspace(a, b, 4, endpoint=False, base=base, axis=-1),
        lambda a, b, base: np.logspace(a, b, 4, endpoint=False, base=base, axis=-1),
        (UNIT, UNIT, POS),
        ("pow",),
        rtol=1e-5,
    ),
    _row(
        "geomspace",
        lambda a, b: fnp.geomspace(a, b, 5),
        lambda a, b: np.geomspace(a, b, 5),
        (POS, POS),
        ("log", "pow"),
        rtol=1e-5,
    ),
    _row(
        "geomspace_negative_axis",
        lambda a, b: fnp.geomspace(-a, -b, 4, endpoint=False, axis=-1),
        lambda a, b: np.geomspace(-a, -b, 4, endpoint=False, axis=-1),
        (POS, POS),
        ("log", "pow"),
        rtol=1e-5,
    ),
    _row(
        "fromfunction",
        lambda x: fnp.fromfunction(lambda i, j: x * i + j * j, (3, 4)),
        lambda x: np.fromfunction(lambda i, j: x * i + j * j, (3, 4)),
        prims=("iota", "mul"),
        shapes=((4,),),
    ),
    _row(
        "tri_mask",
        lambda x: fnp.where(fnp.tri(3, 4, k=1, dtype=bool), x, 0.0),
        lambda x: np.where(np.tri(3, 4, k=1, dtype=bool), x, 0.0),
        prims=("iota", "select_n"),
        shapes=((3, 4),),
    ),
    _row(
        "indices",
        lambda x: x * fnp.sum(fnp.indices((2, 3)), axis=0),
        lambda x: x * np.sum(np.indices((2, 3)), axis=0),
        prims=("iota", "mul"),
        shapes=((2, 3),),
    ),
    _row(
        "mgrid_ogrid",
        lambda x: x * fnp.mgrid[0:2, 0:3][1] + fnp.ogrid[0:1:3j],
        lambda x: x * np.mgrid[0:2, 0:3][1] + np.ogrid[0:1:3j],
        prims=("mul", "add"),
        shapes=((2, 3),),
    ),
]

# ---------------------------------------------------------------------------
# Index helpers
# ---------------------------------------------------------------------------

INDEX_HELPERS: list[OpInfo] = [
    _row(
        "ix_",
        lambda x: x[fnp.ix_([0, 2], [True, False, True, True])],
        lambda x: x[np.ix_([0, 2], [True, False, True, True])],
        prims=("gather",),
        shapes=((3, 4),),
    ),
    _row(
        "diag_indices_from",
        lambda x: x[fnp.diag_indices_from(x)],
        lambda x: x[np.diag_indices_from(x)],
        prims=("gather",),
        shapes=((3, 3),),
    ),
    _row(
        "tril_indices_from",
        lambda x: x[fnp.tril_indices_from(x, k=1)],
        lambda x: x[np.tril_indices_from(x, k=1)],
        prims=("gather",),
        shapes=((3, 4),),
    ),
    _row(
        "triu_indices_from",
        lambda x: x[fnp.triu_indices_from(x)],
        lambda x: x[np.triu_indices_from(x)],
        prims=("gather",),
        shapes=((4, 3),),
    ),
    _row(
        "mask_indices",
        lambda x: x[fnp.mask_indices(3, fnp.tril, -1)],
        lambda x: x[np.mask_indices(3, np.tril, -1)],
        prims=("gather",),
        shapes=((3, 3),),
    ),
    _row(
        "ravel_multi_index_clip",
        lambda i, j: fnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
        lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="clip"),
        (INT, INT),
        ("clamp", "mul", "add"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "ravel_multi_index_wrap_F",
        lambda i, j: fnp.ravel_multi_index((i, j), (3, 4), mode=("wrap", "clip"), order="F"),
        lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode=("wrap", "clip"), order="F"),
        (INT, INT),
        ("rem", "mul", "add"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "fill_diagonal",
        lambda a, v: fnp.fill_diagonal(a, v, inplace=False),
        _np_fill_diagonal,
        (F, F),
        ("pad", "select_n"),
        shapes=((3, 3), (3,)),
    ),
    _row(
        "fill_diagonal_cycled_wide",
        lambda a, v: fnp.fill_diagonal(a, v, inplace=False),
        _np_fill_diagonal,
        (F, F),
        ("pad", "select_n"),
        shapes=((3, 5), (2,)),
    ),
    _row(
        "fill_diagonal_wrap",
        lambda a, v: fnp.fill_diagonal(a, v, wrap=True, inplace=False),
        lambda a, v: _np_fill_diagonal(a, v, wrap=True),
        (F, F),
        ("pad", "select_n"),
        shapes=((7, 2), (2, 2)),
    ),
    _row(
        "fill_diagonal_3d_scalar",
        lambda a, v: fnp.fill_diagonal(a, v, inplace=False),
        _np_fill_diagonal,
        (F, F),
        ("pad", "select_n"),
        shapes=((2, 2, 2), ()),
    ),
]

# ---------------------------------------------------------------------------
# Predicates and bits
# ---------------------------------------------------------------------------

PREDICATES: list[OpInfo] = [
    _row(
        "isposinf",
        lambda x: fnp.isposinf(_infs(fnp, x)),
        lambda x: np.isposinf(_infs(np, x)),
        prims=("eq", "gt", "and"),
        grad=False,
    ),
    _row(
        "isneginf",
        lambda x: fnp.isneginf(_infs(fnp, x)),
        lambda x: np.isneginf(_infs(np, x)),
        prims=("eq", "lt", "and"),
        grad=False,
    ),
    _row("isreal", fnp.isreal, np.isreal, prims=("broadcast_in_dim",), grad=False),
    _row("iscomplex", fnp.iscomplex, np.iscomplex, prims=("broadcast_in_dim",), grad=False),
    _row(
        "array_equiv",
        lambda x, y: fnp.asarray(fnp.array_equiv(x, x + 0 * y)),
        lambda x, y: np.asarray(np.array_equiv(x, x + 0 * y)),
        (F, F),
        ("eq", "reduce_and"),
        grad=False,
    ),
    _row(
        "bitwise_count",
        fnp.bitwise_count,
        np.bitwise_count,
        (BIG_INT,),
        ("shift_right_arithmetic", "and", "add"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "bitwise_count_int8_uint64",
        lambda x: fnp.bitwise_count(x.astype(np.int8)) + fnp.bitwise_count(x.astype(np.uint64)),
        lambda x: np.bitwise_count(x.astype(np.int8)) + np.bitwise_count(x.astype(np.uint64)),
        (BIG_INT,),
        ("shift_right_arithmetic", "and", "add"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "packbits",
        fnp.packbits,
        np.packbits,
        (BOOL,),
        ("mul", "reduce_sum"),
        grad=False,
        dtypes=BOOLS,
    ),
    _row(
        "packbits_axis_little",
        lambda x: fnp.packbits(x, axis=-1, bitorder="little"),
        lambda x: np.packbits(x, axis=-1, bitorder="little"),
        (INT,),
        ("mul", "reduce_sum"),
        grad=False,
        dtypes=I64,
        min_dims=1,
    ),
    _row(
        "unpackbits",
        lambda x: fnp.unpackbits(x.astype(np.uint8), count=-3, bitorder="little"),
        lambda x: np.unpackbits(x.astype(np.uint8), count=-3, bitorder="little"),
        (BYTE,),
        ("shift_right_arithmetic", "and"),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "unpackbits_axis_count",
        lambda x: fnp.unpackbits(x.astype(np.uint8), axis=0, count=11),
        lambda x: np.unpackbits(x.astype(np.uint8), axis=0, count=11),
        (BYTE,),
        ("shift_right_arithmetic", "and", "pad"),
        grad=False,
        dtypes=I64,
        min_dims=1,
    ),
]

# ---------------------------------------------------------------------------
# Array API names
# ---------------------------------------------------------------------------

ARRAY_API: list[OpInfo] = [
    _row(
        "permute_dims",
        lambda x: fnp.permute_dims(x, (2, 0, 1)),
        lambda x: np.permute_dims(x, (2, 0, 1)),
        prims=("transpose",),
        shapes=((2, 3, 4),),
    ),
    _row(
        "matrix_transpose",
        fnp.matrix_transpose,
        np.matrix_transpose,
        prims=("transpose",),
        min_dims=2,
    ),
    _row(
        "concat",
        lambda x, y: fnp.concat([x, y], axis=-1),
        lambda x, y: np.concat([x, y], axis=-1),
        (F, F),
        ("concatenate",),
        shapes=((2, 3), (2, 1)),
    ),
    _row(
        "concat_axis_none",
        lambda x, y: fnp.concat([x, y], axis=None),
        lambda x, y: np.concat([x, y], axis=None),
        (F, F),
        ("reshape", "concatenate"),
        shapes=((2, 2), (3,)),
    ),
    _row(
        "unstack",
        lambda x: fnp.stack(fnp.unstack(x, axis=1)[::-1]),
        lambda x: np.stack(np.unstack(x, axis=1)[::-1]),
        prims=("slice", "reshape"),
        shapes=((2, 3, 2),),
    ),
    _row(
        "vecdot",
        fnp.vecdot,
        np.vecdot,
        (F, F),
        ("mul", "reduce_sum"),
        shapes=((3, 4), (4,)),
        rtol=1e-5,
    ),
    _row(
        "vecdot_axis0",
        lambda x, y: fnp.vecdot(x, y, axis=0),
        lambda x, y: np.vecdot(x, y, axis=0),
        (F, F),
        ("mul", "reduce_sum"),
        shapes=((3, 2), (3, 1)),
        rtol=1e-5,
    ),
    _row(
        "vecdot_int",
        fnp.vecdot,
        np.vecdot,
        (INT, INT),
        ("mul", "reduce_sum"),
        shapes=((2, 3), (3,)),
        grad=False,
        dtypes=I64,
    ),
    _row(
        "matvec",
        fnp.matvec,
        np.matvec,
        (F, F),
        ("dot_general",),
        shapes=((2, 3, 4), (4,)),
        rtol=1e-5,
    ),
    _row(
        "vecmat",
        fnp.vecmat,
        np.vecmat,
        (F, F),
        ("dot_general",),
        shapes=((3,), (2, 3, 4)),
        rtol=1e-5,
    ),
    _row(
        "cumulative_sum",
        lambda x: fnp.cumulative_sum(x, axis=-1, include_initial=True),
        lambda x: np.cumulative_sum(x, axis=-1, include_initial=True),
        prims=("cumsum", "concatenate"),
        min_dims=1,
        rtol=1e-5,
    ),
    _row(
        "cumulative_sum_1d",
        fnp.cumulative_sum,
        np.cumulative_sum,
        prims=("cumsum",),
        shapes=((5,),),
        rtol=1e-5,
    ),
    _row(
        "cumulative_prod",
        lambda x: fnp.cumulative_prod(x, axis=0, include_initial=True),
        lambda x: np.cumulative_prod(x, axis=0, include_initial=True),
        (POS,),
        ("cumprod", "concatenate"),
        min_dims=1,
        rtol=1e-5,
    ),
]

ROWS: list[OpInfo] = GRIDS + INDEX_HELPERS + PREDICATES + ARRAY_API
