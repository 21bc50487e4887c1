"""Op-table rows: functrace.experimental.sparse's BCOO arrays, as functions of the
data (with fixed indices that repeat an entry, hold a padding entry and a negative
one) and of the dense operand, against a NumPy evaluation of the dense matrix.

The products gather the dense operand at the indices, multiply and scatter-add; so
these rows send the gathers and scatter-adds of the sparse layout through the
grad/jvp/vmap/jit/eager-reuse stacks and the composition fuzzer. JAX's numbers,
padding, ``sparsify`` and errors: tests/test_sparse.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.experimental.sparse import (
    BCOO,
    BCSR,
    bcoo_concatenate,
    bcoo_dot_general_sampled,
    bcoo_rev,
    sparsify,
)
from op_db import F, OpInfo

_SHAPE = (3, 4)
# [0, 1] twice, the padding entry [3, 4] (dropped), [-1, 2] (the last row)
_IDX = np.array([[0, 1], [1, 0], [0, 1], [3, 4], [-1, 2], [2, 3]], dtype=np.int32)


def _bcoo(d: Any) -> BCOO:
    return BCOO((d, _IDX), shape=_SHAPE)


def _dense(d: Any) -> np.ndarray:
    d = np.asarray(d)
    out = np.zeros(_SHAPE, d.dtype)
    for (i, j), v in zip(_IDX, d):
        if -_SHAPE[0] <= i < _SHAPE[0] and -_SHAPE[1] <= j < _SHAPE[1]:
            out[i, j] += v
    return out


def _row(name: str, fn: Any, ref: Any, shapes: Any, **kw: Any) -> OpInfo:
    kw.setdefault("rtol", 1e-5)
    args = (F,) * len(shapes)
    prims = ("gather", "scatter_add", "dot_general")
    return OpInfo(f"experimental.sparse.{name}", fn, ref, args, prims, shapes, **kw)


def _matmul_ref(d: Any, x: Any) -> Any:
    return (_dense(d) @ np.asarray(x)).astype(np.asarray(d).dtype)


def _rmatmul_ref(d: Any, y: Any) -> Any:
    return (np.asarray(y) @ _dense(d)).astype(np.asarray(d).dtype)


def _shapes_fn(d: Any) -> Any:
    """Slices, reversal, concatenation and reshape of one BCOO, densified."""
    S = _bcoo(d)
    both = bcoo_concatenate([S[1:], bcoo_rev(S, (1,))], dimension=0)
    return both.reshape(4, 5).todense()


def _shapes_ref(d: Any) -> Any:
    m = _dense(d)
    return np.concatenate([m[1:], m[:, ::-1]], axis=0).reshape(4, 5)


def _spdot_ref(d: Any) -> Any:
    m = _dense(d)
    return (m @ m.T).astype(m.dtype)


_DN = (((1,), (0,)), ((), ()))
# a BCSR of shape (3, 4): rows 0, 0, 1, 2 and one padding entry past indptr[-1]
_CSR_IDX = np.array([1, 3, 0, 2, 4], dtype=np.int32)
_CSR_PTR = np.array([0, 2, 3, 4], dtype=np.int32)


def _bcsr_ref(d: Any, x: Any) -> Any:
    d = np.asarray(d)
    m = np.zeros(_SHAPE, d.dtype)
    for k, (i, j) in enumerate([(0, 1), (0, 3), (1, 0), (2, 2)]):
        m[i, j] += d[k]
    return (m @ np.asarray(x)).astype(d.dtype)


# the sampled product's indices: in range (a padding entry would read as zero)
_SIDX = np.array([[0, 1], [1, 0], [0, 1], [2, 3], [2, 2]], dtype=np.int32)


def _sampled_ref(a: Any, b: Any) -> Any:
    full = np.asarray(a) @ np.asarray(b)
    return full[_SIDX[:, 0], _SIDX[:, 1]].astype(np.asarray(a).dtype)


ROWS: list[OpInfo] = [
    _row("BCOO.matmul", lambda d, x: _bcoo(d) @ x, _matmul_ref, ((6,), (4, 2))),
    _row("BCOO.matvec", lambda d, x: _bcoo(d) @ x, _matmul_ref, ((6,), (4,))),
    _row("BCOO.rmatmul", lambda d, y: y @ _bcoo(d), _rmatmul_ref, ((6,), (2, 3))),
    _row("BCOO.todense", lambda d: _bcoo(d).todense(), _dense, ((6,),)),
    _row(
        "sparsify[tanh_matvec]",
        lambda d, x: sparsify(lambda m, v: fnp.tanh(m) @ v)(_bcoo(d), x),
        lambda d, x: (np.tanh(_dense(d)) @ np.asarray(x)).astype(np.asarray(d).dtype),
        ((6,), (4,)),
    ),
    _row("BCOO.slice_rev_concat_reshape", _shapes_fn, _shapes_ref, ((6,),)),
    _row(
        "BCOO.spdot",
        lambda d: (_bcoo(d) @ _bcoo(d).T).todense(),
        _spdot_ref,
        ((6,),),
    ),
    _row(
        "bcoo_dot_general_sampled",
        lambda a, b: bcoo_dot_general_sampled(a, b, _SIDX, dimension_numbers=_DN),
        _sampled_ref,
        ((3, 2), (2, 4)),
    ),
    _row(
        "BCSR.matvec",
        lambda d, x: BCSR((d, _CSR_IDX, _CSR_PTR), shape=_SHAPE) @ x,
        _bcsr_ref,
        ((5,), (4,)),
    ),
]
