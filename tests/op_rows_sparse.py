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
from functrace.experimental.sparse import BCOO, sparsify
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
]
