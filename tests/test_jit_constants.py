"""Every op-table row under jit with NumPy constants for its operands.

Inside ``jit``, functrace functions stage even when they are called on constants, so a
function that computes indices with functrace and then indexes a NumPy operand with them
breaks there. That happens only when the operand is a constant: ``test_jit.py`` traces
every argument. These tests close over every argument but one, which is traced, and then
over all of them (nothing traced), and compare with the eager call.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import TracerArrayConversionError
from functrace.jit import jit
from op_db import ALL_OPS, SLOW_COMPILE_JIT, OpInfo, op_args
from profiles import slow_compile
from test_jit import _tol

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),
]

# Rows that call a method of their first operand. ``ndarray.dot(tracer)`` is NumPy's
# own method, which cannot see tracers (as in JAX): it must raise the clear error.
NUMPY_METHOD_OF_ARG0 = {"method_dot"}


def _same_values(got, want, op: OpInfo, what: str) -> None:
    g_leaves, g_tree = ft.tree_util.tree_flatten(got)
    w_leaves, w_tree = ft.tree_util.tree_flatten(want)
    assert g_tree == w_tree, f"{what}: tree {g_tree} != {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        a, b = np.asarray(g), np.asarray(w)
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.dtype}{a.shape}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, **_tol(op, b.dtype), err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(op, id=op.name, marks=slow_compile if op.name in SLOW_COMPILE_JIT else ())
        for op in ALL_OPS
    ],
)
def test_op_table_jit_with_constant_operands(op: OpInfo) -> None:
    dtype = op.dtypes[0]

    @settings(max_examples=1, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data) -> None:
        args = data.draw(op_args(op, dtype))
        want = op.fn(*args, **op.kwargs)
        _same_values(jit(lambda: op.fn(*args, **op.kwargs))(), want, op, "all constant")
        for i, arg in enumerate(op.args):
            if arg.kind == "const":
                continue

            def one_traced(a, i=i):
                full = list(args)
                full[i] = a
                return op.fn(*full, **op.kwargs)

            if i > 0 and op.name in NUMPY_METHOD_OF_ARG0:
                with pytest.raises(TracerArrayConversionError, match="tracer"):
                    jit(one_traced)(args[i])
                continue
            _same_values(jit(one_traced)(args[i]), want, op, f"argument {i} traced")

    check()


def _float_leaves_sum(out):
    return sum(fnp.sum(fnp.real(v)) for v in ft.tree_util.tree_leaves(out)
               if fnp.result_type(v).kind in "fc")  # fmt: skip


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(op, id=op.name, marks=slow_compile if op.name in SLOW_COMPILE_JIT else ())
        for op in ALL_OPS
        if op.grad and any(a.kind == "float" for a in op.args)
    ],
)
def test_op_table_jit_of_grad_with_constant_operands(op: OpInfo) -> None:
    # jit(grad) in one float argument, the others NumPy constants, against eager grad: the
    # gradient programs hold products of a constant by a cotangent (a transposed weight
    # gradient once came out transposed again: jit folded the transpose of a product
    # whose two free axes both came from one operand)
    dtype = np.float64 if np.float64 in op.dtypes else op.dtypes[0]

    @settings(max_examples=1, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data) -> None:
        args = data.draw(op_args(op, dtype))
        for i, arg in enumerate(op.args):
            if arg.kind != "float" or (i > 0 and op.name in NUMPY_METHOD_OF_ARG0):
                continue  # (NumPy's method of a constant cannot take a tracer: tested above)

            def loss(x, i=i):
                full = list(args)
                full[i] = x
                return _float_leaves_sum(op.fn(*full, **op.kwargs))

            x0 = np.asarray(args[i], dtype)
            want = ft.grad(loss)(x0)
            got = jit(ft.grad(loss))(x0)
            assert np.shape(got) == np.shape(want), f"argument {i}: {np.shape(got)}"
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-8, err_msg=f"argument {i}"
            )

    check()
