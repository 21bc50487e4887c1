"""``lax.gather`` and the scatters in JAX's XLA form (dimension numbers): values against
JAX (``tests/fixtures/xla_gather_scatter_jax.npz``, from ``xla_gather_scatter_cases.py``),
derivatives against finite differences, ``jit``/``vmap`` against eager, functrace's own
form still chosen where it is meant, and the errors of bad dimension numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import functrace as ft
import xla_gather_scatter_cases
from functrace import lax
from functrace.test_util import check_grads
from recorded import assert_matches_recorded

GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
X = np.arange(12.0).reshape(3, 4)
ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
WIN = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
SROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
SWIN = SDN(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1))


def test_values_match_jax() -> None:
    def tol(key: str, v: np.ndarray) -> float:
        return 0.0 if v.dtype.kind in "iub" else 1e-12

    assert_matches_recorded(xla_gather_scatter_cases.cases(ft), "xla_gather_scatter_jax.npz", tol)


def test_functrace_form_is_kept() -> None:
    # index arrays and axes (positionally and by keyword) still mean NumPy indexing
    i = np.array([2, -1])
    np.testing.assert_array_equal(lax.gather(X, [i], (0,)), X[i])
    np.testing.assert_array_equal(lax.gather(X, [i], axes=(0,), mode="clip"), X[i])
    want = X.copy()
    np.add.at(want, [2, 2], 1.0)  # -1 wraps to row 2: both updates land there
    np.testing.assert_array_equal(lax.scatter_add(X, np.ones((2, 4)), [i], (0,)), want)
    got = lax.scatter_apply(X, [np.array([0])], np.negative, (0,))
    np.testing.assert_array_equal(got, np.concatenate([-X[:1], X[1:]]))


def test_keywords_choose_jax_form() -> None:
    idx = np.array([[2], [0]])
    want = X[[2, 0]]
    np.testing.assert_array_equal(
        lax.gather(X, idx, dimension_numbers=ROWS, slice_sizes=(1, 4)), want
    )
    np.testing.assert_array_equal(
        lax.gather(operand=X, start_indices=idx, dimension_numbers=ROWS, slice_sizes=[1, 4]),
        want,
    )
    got = lax.scatter(X, idx, -want, dimension_numbers=SROWS, unique_indices=True)
    np.testing.assert_array_equal(got, np.stack([-X[0], X[1], -X[2]]))


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_gather_derivatives(mode: Any) -> None:
    idx = np.array([[0, 2], [1, 0], [2, 3]])
    f = lambda x: lax.gather(x, idx, WIN, (2, 2), mode=mode, fill_value=0.5)  # noqa: E731
    check_grads(f, (X * 0.1,), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", ["scatter_add", "scatter", "scatter_mul", "scatter_sub"])
def test_scatter_derivatives(name: str) -> None:
    idx = np.array([[0, 2], [1, 0], [5, 0]])  # the last window is dropped
    u = np.linspace(0.5, 1.5, 12).reshape(3, 2, 2)
    fn = getattr(lax, name)
    f = lambda x, u: fn(x, idx, u, SWIN)  # noqa: E731
    check_grads(f, (X * 0.1 + 1.0, u), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_scatter_apply_derivative() -> None:
    f = lambda x: lax.scatter_apply(
        x, np.array([[1], [1]]), ft.numpy.sin, SROWS, update_shape=(2, 4)
    )  # noqa: E731
    check_grads(f, (X * 0.1,), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(f(X), np.stack([X[0], np.sin(np.sin(X[1])), X[2]]))


def test_jit_and_vmap_of_traced_indices() -> None:
    idx = np.array([[[0, 2], [4, 0]], [[1, 1], [-1, 2]]])
    g = lambda x, i: lax.gather(x, i, WIN, (2, 2), mode="fill")  # noqa: E731
    s = lambda x, i, u: lax.scatter_max(x, i, u, SWIN)  # noqa: E731
    u = np.arange(8.0).reshape(2, 2, 2)
    xs = np.stack([X, X + 1])
    for k in range(2):
        np.testing.assert_array_equal(ft.jit(g)(X, idx[k]), g(X, idx[k]))
        np.testing.assert_array_equal(ft.jit(s)(X, idx[k], u), s(X, idx[k], u))
        np.testing.assert_array_equal(ft.vmap(g)(xs, idx)[k], g(xs[k], idx[k]))
        np.testing.assert_array_equal(ft.vmap(s, (0, 0, None))(xs, idx, u)[k], s(xs[k], idx[k], u))


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

_I2 = np.array([[0, 1]])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lax.gather(X, _I2, WIN, (4, 2)), r"gather: expected slice_sizes\[0\] in \[0, 3\]"),
        (lambda: lax.gather(X, _I2, WIN, (2,)), "one slice size per operand dimension"),
        (lambda: lax.gather(X, np.array([[1]]), WIN, (2, 2)), "last axis .* has 2 entries"),
        (lambda: lax.gather(X, _I2, WIN._replace(offset_dims=(2, 1)), (2, 2)), "increasing"),
        (lambda: lax.gather(X, _I2, WIN._replace(start_index_map=(0, 0)), (2, 2)), "distinct"),
        (lambda: lax.gather(X, _I2, WIN._replace(start_index_map=(0, 2)), (2, 2)), r"in \[0, 2\)"),
        (lambda: lax.gather(X, _I2 * 1.0, WIN, (2, 2)), "integer indices"),
        (lambda: lax.gather(X, _I2[:, :1], ROWS, (2, 4)), "slice size 1 in the collapsed"),
        (lambda: lax.gather(X, _I2, WIN._replace(offset_dims=(1,)), (2, 2)), "offset_dims"),
        (lambda: lax.gather(X, _I2, (1, 2), slice_sizes=(2, 2)), "GatherDimensionNumbers"),
        (lambda: lax.gather(X, _I2, WIN, (2, 2), bogus=1), "unexpected keyword"),
        (
            lambda: lax.gather(
                np.ones((2, 3)), np.array([[1], [2], [0]]), GDN((), (1,), (1,), (0,), (0,)), (1, 1)
            ),
            "of one size",
        ),
        (
            lambda: lax.scatter_add(X, np.array([[0], [2]]), np.ones((2, 5)), SROWS),
            "to fit operand dimension 1",
        ),
        (
            lambda: lax.scatter_add(X, np.array([[0], [2]]), np.ones((3, 4)), SROWS),
            r"batch shape of the indices \(2,\)",
        ),
        (
            lambda: lax.scatter(X, np.array([[0], [2]]), np.ones((2, 4, 1)), SROWS),
            "updates of rank 2",
        ),
        (
            lambda: lax.scatter_mul(
                X,
                np.array([[0], [2]]),
                np.ones((2, 4)),
                SROWS._replace(inserted_window_dims=(1, 0)),
            ),
            "increasing",
        ),
        (
            lambda: lax.scatter_apply(X, np.array([[0]]), np.sin, SROWS, update_shape=(1, 3, 1)),
            "scatter_apply: expected updates of rank 2",
        ),
    ],
)
def test_bad_dimension_numbers(call: Any, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        call()


def test_bad_modes() -> None:
    with pytest.raises(ValueError, match="gather: expected mode None, 'clip'.*got 'raise'"):
        lax.gather(X, _I2, WIN, (2, 2), mode="raise")
    with pytest.raises(ValueError, match="scatter_add: expected mode"):
        lax.scatter_add(X, _I2, np.ones((1, 2, 2)), SWIN, mode="wrap")
    with pytest.raises(ValueError, match="ONE_HOT"):
        lax.gather(X, _I2, WIN, (2, 2), mode=lax.GatherScatterMode.ONE_HOT)
