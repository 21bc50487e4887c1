"""Every row of the op table through the same checks.

* eager on NumPy inputs equals the NumPy reference: value, dtype, shape, and
  array-vs-scalar type;
* ``eval_jaxpr(make_jaxpr(f)(*args))`` equals ``f(*args)`` (every jaxpr is type-checked);
* ``check_grads`` forward and reverse, order 2 (float64) for differentiable rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
from functrace.ir import eval_jaxpr
from op_db import ALL_OPS, SLOW_GRAD_CHECKS, OpInfo, op_args
from profiles import examples, long_profile

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _tol(op: OpInfo, dtype: np.dtype) -> dict[str, float]:
    if np.dtype(dtype) == np.float32:
        return {"rtol": max(op.rtol, 2e-5), "atol": max(op.atol, 2e-5)}
    return {"rtol": op.rtol, "atol": op.atol}


def assert_same(actual, expected, op: OpInfo, dtype) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{op}: shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{op}: dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, **_tol(op, dtype), err_msg=str(op))
    else:
        np.testing.assert_array_equal(a, e, err_msg=str(op))


def _params(predicate=lambda op: True):
    return [
        pytest.param(op, dt, id=f"{op.name}-{np.dtype(dt).name}")
        for op in ALL_OPS
        if predicate(op)
        for dt in op.dtypes
    ]


@pytest.mark.parametrize("op,dtype", _params(lambda op: op.ref is not None))
@given(data=st.data())
def test_eager_matches_numpy(op: OpInfo, dtype, data) -> None:
    args = data.draw(op_args(op, dtype))
    out = op.fn(*args)
    expected = op.ref(*args)
    assert_same(out, expected, op, dtype)
    # functrace.numpy promises NumPy's return types on NumPy inputs; once a
    # functrace.Array is involved (creation functions make them) results are Arrays,
    # 0-d ones included (functrace/README.md, "Eager results are Arrays").
    if not op.name.startswith("lax.") and type(out) is not ft.Array:
        assert isinstance(out, np.ndarray) == isinstance(expected, np.ndarray), (
            f"{op}: returned {type(out).__name__}, NumPy returns {type(expected).__name__}"
        )


@long_profile
@pytest.mark.parametrize("op,dtype", _params())
@settings(max_examples=examples(2, 40))  # tracing rarely depends on the values drawn
@given(data=st.data())
def test_jaxpr_roundtrip(op: OpInfo, dtype, data) -> None:
    args = data.draw(op_args(op, dtype))
    closed = ft.make_jaxpr(op.fn)(*args)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    assert_same(out, op.fn(*args), op, dtype)
    assert closed.out_avals[0].shape == np.shape(out)
    assert closed.out_avals[0].dtype == np.asarray(out).dtype


def _diff_argnums(op: OpInfo) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(op.args) if a.kind == "float")


def _check_grads(op: OpInfo, data) -> None:
    args = data.draw(op_args(op, np.float64))
    nums = _diff_argnums(op)

    def f(*diff):
        full = list(args)
        for i, v in zip(nums, diff):
            full[i] = v
        return op.fn(*full)

    ft.check_grads(
        f,
        tuple(args[i] for i in nums),
        order=op.grad_order,
        modes=("fwd", "rev"),
        atol=op.grad_tol,
        rtol=10 * op.grad_tol,
    )


# Each example: order-2 checks, both modes. The rows of SLOW_GRAD_CHECKS (op_db.py) draw
# fewer examples in make test; make fuzz draws as many for every row.
_GRAD_ROWS = [op for op in ALL_OPS if op.grad]


@long_profile
@pytest.mark.parametrize(
    "op", [pytest.param(op, id=op.name) for op in _GRAD_ROWS if op.name not in SLOW_GRAD_CHECKS]
)
@settings(max_examples=examples(3, 100))
@given(data=st.data())
def test_check_grads(op: OpInfo, data) -> None:
    _check_grads(op, data)


@long_profile
@pytest.mark.parametrize(
    "op", [pytest.param(op, id=op.name) for op in _GRAD_ROWS if op.name in SLOW_GRAD_CHECKS]
)
@settings(max_examples=examples(2, 100))
@given(data=st.data())
def test_check_grads_of_slow_rows(op: OpInfo, data) -> None:
    _check_grads(op, data)
