"""Every op-table row on empty arrays (shapes (0,) and (2, 0)), eager and under jit.

Where NumPy answers, both paths answer with NumPy's values. Where NumPy raises, ``jit``
returns JAX's value (the maximum of nothing is -inf) or raises an error naming the
function, and a plain call raises NumPy's error (eager calls follow NumPy's errors, as
for singular matrices) or answers as ``jit`` does.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from op_db import ALL_OPS, SLOW_COMPILE_JIT, OpInfo

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),
]

# Rows whose own test function, not functrace, cannot take an empty input.
ROW_NEEDS_ELEMENTS = {
    "lax.scan": "its function reads x[0]",
    "lax.while_loop": "its loop doubles x until sum(x * x) >= 100: never, for no elements",
}

# Rows that raise, eager and under jit, where NumPy answers: name -> why.
RAISES_WHERE_NUMPY_ANSWERS = {
    name: "size= (JAX's) pads with the smallest value, and no elements have one"
    for name in ("unique_inverse", "unique_counts", "unique_counts_api", "unique_inverse_api")
} | {"scipy.stats.mode": "an empty axis has no mode (SciPy returns NaN with a warning)"}

# Rows where NumPy's answer is undefined: name -> (why, functrace's answer).
NUMPY_UNDEFINED = {
    "unpackbits_axis_count": ("count=11 bits of nothing: NumPy leaves them unset", 0),
}

_NAMED = re.compile(r"^[A-Za-z_][\w.\[\]]*: ")


def _rows() -> list:
    return [
        pytest.param(op, id=op.name)
        for op in ALL_OPS
        if op.ref is not None
        and not isinstance(op.shapes, tuple)
        and op.name not in SLOW_COMPILE_JIT
        and op.name not in ROW_NEEDS_ELEMENTS
    ]


def _empty_args(op: OpInfo, shape: tuple[int, ...]) -> list:
    kinds = {"float": np.dtype(op.dtypes[0]), "int": np.dtype(np.int64), "bool": np.dtype(bool)}
    return [a.value if a.kind == "const" else np.zeros(shape, kinds[a.kind]) for a in op.args]


def _call(f, args):
    try:
        return f(*args), None
    except Exception as err:  # noqa: BLE001 - compared below
        return None, err


def _leaves(x) -> list[np.ndarray]:
    return [np.asarray(v) for v in ft.tree_util.tree_leaves(x)]


def _same(a, b, what: str) -> None:
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb), f"{what}: {len(la)} outputs against {len(lb)}"
    for x, y in zip(la, lb):
        assert x.shape == y.shape, f"{what}: shape {x.shape} against {y.shape}"
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-12, err_msg=what)
        else:
            np.testing.assert_array_equal(x, y, err_msg=what)


@pytest.mark.parametrize("op", _rows())
def test_op_table_on_empty_inputs(op: OpInfo) -> None:
    for shape in [s for s in ((0,), (2, 0)) if len(s) >= op.min_dims]:
        args = _empty_args(op, shape)
        what = f"{op.name} on {shape}"
        want, np_err = _call(lambda *a: op.ref(*a, **op.kwargs), args)
        # (functrace Arrays: a NumPy function of NumPy arrays in a row is NumPy alone)
        arrays = [fnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        eager, e_err = _call(lambda *a: op.fn(*a, **op.kwargs), arrays)
        jitted, j_err = _call(ft.jit(lambda *a: op.fn(*a, **op.kwargs)), args)
        if op.name in RAISES_WHERE_NUMPY_ANSWERS:
            for err in (e_err, j_err):
                assert err is not None and _NAMED.match(str(err)), f"{what}: {err!r}"
            continue
        if op.name in NUMPY_UNDEFINED:
            assert e_err is None and j_err is None, f"{what}: eager {e_err!r}, jit {j_err!r}"
            value = NUMPY_UNDEFINED[op.name][1]
            for got in (eager, jitted):
                assert all(np.all(v == value) for v in _leaves(got)), f"{what}: {got}"
            continue
        if np_err is None:  # NumPy answers: so do both paths, with NumPy's values
            assert e_err is None and j_err is None, f"{what}: eager {e_err!r}, jit {j_err!r}"
            _same(eager, want, f"{what}: eager against NumPy")
            _same(jitted, want, f"{what}: jit against NumPy")
            continue
        # NumPy raises: a plain call may raise NumPy's error (eager follows NumPy), or
        # answer as jit does; jit answers with JAX's value or raises naming the function
        if j_err is not None:
            assert _NAMED.match(str(j_err)), f"{what}: an error not naming the function: {j_err!r}"
        if e_err is None and j_err is None:
            _same(eager, jitted, f"{what}: eager against jit")
