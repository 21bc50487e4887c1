"""Tests for functrace.lax.reductions: reduce_max/min/prod, argmax/argmin and the
cumulative ops (cumsum, cumprod, cummax, cummin).

Every op is checked eagerly against NumPy (value, dtype, shape), through staging
(abstract eval + ``eval_jaxpr``), in forward mode against central finite
differences, in reverse mode (linearize + transpose) with the inner-product
identity, and to second order (jvp of jvp, jvp of a transpose). Products are
also differentiated at inputs with exact zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from functrace import core, lax
from functrace.interpreters import ad, staging
from lax_checks import SETTINGS, check_grads, check_raises, check_value, distinct, rand, seeds

# ---------------------------------------------------------------------------
# reduce_max, reduce_min, reduce_prod
# ---------------------------------------------------------------------------

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)
REDUCE_DTYPES = (np.float32, np.float64, np.int32, np.int8)


def draw_axes(data: Any, ndim: int) -> tuple[int, ...]:
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1))))


def with_zeros(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Floats in +-[0.5, 1.5] with zero, one or two exact zeros."""
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    if x.size:
        x.flat[rng.integers(0, x.size, rng.integers(0, 3))] = 0.0
    return x


@SETTINGS
@given(st.data(), shapes, seeds, st.sampled_from(REDUCE_DTYPES + (np.bool_,)))
def test_reduce_max_min_values(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    axes = draw_axes(data, len(shape))
    x = rand(np.random.default_rng(seed), shape, dtype)
    if any(shape[a] == 0 for a in axes):  # empty reductions give the identity, as in JAX
        dt = np.dtype(dtype)
        lo, hi = (
            (False, True)
            if dt.kind == "b"
            else (-np.inf, np.inf)
            if dt.kind == "f"
            else (np.iinfo(dt).min, np.iinfo(dt).max)
        )
        want_max, want_min = np.max(x, axes, initial=lo), np.min(x, axes, initial=hi)
    else:
        want_max, want_min = np.max(x, axes), np.min(x, axes)
    check_value(lambda x: lax.reduce_max(x, axes), [x], want_max)
    check_value(lambda x: lax.reduce_min(x, axes), [x], want_min)


@SETTINGS
@given(st.data(), hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seeds)
def test_reduce_max_min_grads(data: Any, shape: tuple, seed: int) -> None:
    axes = draw_axes(data, len(shape))
    x = distinct(np.random.default_rng(seed), shape)
    check_grads(lambda x: lax.reduce_max(x, axes), [x], seed)
    check_grads(lambda x: lax.reduce_min(x, axes), [x], seed)


def test_reduce_max_ties_average_the_tangent() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g = np.array([[10.0, 20.0, 40.0], [3.0, 6.0, 9.0]])
    _, (t,) = ad.jvp_flat(lambda x: [lax.reduce_max(x, (1,))], [x], [g])
    np.testing.assert_allclose(t, [30.0, 6.0])
    _, (t,) = ad.jvp_flat(lambda x: [lax.reduce_min(x, (0, 1))], [x], [g])
    np.testing.assert_allclose(t, 10.0)
    # Empty reductions: a zero tangent (not NaN).
    _, (t,) = ad.jvp_flat(lambda x: [lax.reduce_max(x, (0,))], [np.ones((0, 2))], [np.ones((0, 2))])
    np.testing.assert_array_equal(ad.instantiate(t), [0.0, 0.0])


@SETTINGS
@given(st.data(), shapes, seeds, st.sampled_from(REDUCE_DTYPES))
def test_reduce_prod_values(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    axes = draw_axes(data, len(shape))
    x = rand(np.random.default_rng(seed), shape, dtype)
    check_value(
        lambda x: lax.reduce_prod(x, axes),
        [x],
        np.prod(x, axes, dtype=dtype),
        exact=np.dtype(dtype).kind != "f",
    )


@SETTINGS
@given(st.data(), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), seeds)
def test_reduce_prod_grads_with_zeros(data: Any, shape: tuple, seed: int) -> None:
    axes = draw_axes(data, len(shape))
    x = with_zeros(np.random.default_rng(seed), shape)
    check_grads(lambda x: lax.reduce_prod(x, axes), [x], seed)


def test_reduce_prod_grad_at_zeros_exact() -> None:
    x = np.array([2.0, 0.0, 3.0, 4.0])
    _, lin, _ = ad.linearize_flat(lambda x: [lax.reduce_prod(x, (0,))], [x])
    np.testing.assert_array_equal(lin.transpose([np.float64(1.0)])[0], [0.0, 24.0, 0.0, 0.0])
    x2 = np.array([2.0, 0.0, 0.0, 4.0])
    _, lin, _ = ad.linearize_flat(lambda x: [lax.reduce_prod(x, (0,))], [x2])
    np.testing.assert_array_equal(lin.transpose([np.float64(1.0)])[0], [0.0, 0.0, 0.0, 0.0])


# ---------------------------------------------------------------------------
# argmax, argmin
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    seeds,
    st.sampled_from(REDUCE_DTYPES + (np.bool_,)),
    st.sampled_from((np.int64, np.int32)),
)
def test_argmax_argmin(data: Any, shape: tuple, seed: int, dtype: Any, index_dtype: Any) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(np.random.default_rng(seed), shape, dtype)
    if np.dtype(dtype).kind == "f":
        x = np.round(x).astype(dtype)  # ties: NumPy's first occurrence
    check_value(
        lambda x: lax.argmax(x, axis, index_dtype), [x], np.argmax(x, axis).astype(index_dtype)
    )
    check_value(
        lambda x: lax.argmin(x, axis, index_dtype), [x], np.argmin(x, axis).astype(index_dtype)
    )


def test_argmax_default_dtype_nan_and_zero_tangent() -> None:
    x = np.array([1.0, np.nan, 3.0, np.nan])
    assert lax.argmax(x, 0) == 1 and np.asarray(lax.argmax(x, 0)).dtype == np.int64
    assert lax.argmin(x, -1) == 1
    _, (t,) = ad.jvp_flat(lambda x: [lax.argmax(x, 0)], [x], [np.ones(4)])
    assert type(t) is ad.Zero


# ---------------------------------------------------------------------------
# cumsum, cumprod, cummax, cummin
# ---------------------------------------------------------------------------

CUMULATIVE = {
    "cumsum": (lax.cumsum, lambda x, a: np.cumsum(x, a, dtype=x.dtype)),
    "cumprod": (lax.cumprod, lambda x, a: np.cumprod(x, a, dtype=x.dtype)),
    "cummax": (lax.cummax, np.maximum.accumulate),
    "cummin": (lax.cummin, np.minimum.accumulate),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@SETTINGS
@given(
    data=st.data(),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
    seed=seeds,
    dtype=st.sampled_from(REDUCE_DTYPES),
    reverse=st.booleans(),
)
def test_cumulative_values(
    data: Any, name: str, shape: tuple, seed: int, dtype: Any, reverse: bool
) -> None:
    op, ref = CUMULATIVE[name]
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(np.random.default_rng(seed), shape, dtype)
    want = np.flip(ref(np.flip(x, axis), axis), axis) if reverse else ref(x, axis)
    check_value(lambda x: op(x, axis, reverse), [x], want, exact=np.dtype(dtype).kind != "f")


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@SETTINGS
@given(
    data=st.data(),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    seed=seeds,
    reverse=st.booleans(),
)
def test_cumulative_grads(data: Any, name: str, shape: tuple, seed: int, reverse: bool) -> None:
    op, _ = CUMULATIVE[name]
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = with_zeros(rng, shape) if name == "cumprod" else distinct(rng, shape)
    check_grads(lambda x: op(x, axis, reverse), [x], seed)


def test_cummax_cummin_ties_go_to_the_latest_position() -> None:
    x = np.array([1.0, 3.0, 2.0, 3.0, 5.0])
    g = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    _, (t,) = ad.jvp_flat(lambda x: [lax.cummax(x, 0)], [x], [g])
    np.testing.assert_array_equal(t, [1.0, 10.0, 10.0, 1000.0, 10000.0])
    _, (t,) = ad.jvp_flat(lambda x: [lax.cummin(x, 0)], [-x], [g])
    np.testing.assert_array_equal(t, [1.0, 10.0, 10.0, 1000.0, 10000.0])
    _, (t,) = ad.jvp_flat(lambda x: [lax.cummax(x, 0, reverse=True)], [x[::-1].copy()], [g])
    np.testing.assert_array_equal(t, [1.0, 10.0, 1000.0, 1000.0, 10000.0])


def test_cumprod_tangent_at_zero_is_exact() -> None:
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    _, (t,) = ad.jvp_flat(lambda x: [lax.cumprod(x, 0)], [x], [np.ones(5)])
    np.testing.assert_array_equal(t, [1.0, 2.0, 6.0, 0.0, 0.0])


def test_cumulative_jaxpr_text() -> None:
    cj, _ = staging.trace_to_jaxpr(
        lambda x: [lax.cumsum(x, -1, True)],
        [core.ShapedArray((2, 3), np.dtype(np.float32))],
        origin="test",
    )
    assert "b:f32[2,3] = cumsum[axis=1, reverse=True] a" in str(cj)


# ---------------------------------------------------------------------------
# Errors: ValueError/TypeError naming the primitive and the shapes
# ---------------------------------------------------------------------------

A23 = np.zeros((2, 3))


@pytest.mark.parametrize(
    "f, args, exc, fragments",
    [
        (lambda x: lax.reduce_max(x, (2,)), [A23], ValueError, ("reduce_max", "(2, 3)")),
        (lambda x: lax.reduce_min(x, (0, 0)), [A23], ValueError, ("reduce_min", "(2, 3)")),
        (lambda x: lax.reduce_prod(x, (-1,)), [A23], ValueError, ("reduce_prod", "(2, 3)")),
        (lambda x: lax.reduce_prod(x, (0,)), [A23 > 0], TypeError, ("reduce_prod", "bool")),
        # reduce_max takes complex operands (as JAX's); argmax refuses them, as JAX's
        (
            lambda x: lax.argmax(x, 0),
            [A23.astype(complex)],
            TypeError,
            ("argmax", "complex128", "functrace.numpy.argmax"),
        ),
        (lambda x: lax.argmax(x, 2), [A23], ValueError, ("argmax", "(2, 3)")),
        (lambda x: lax.argmin(x, 0), [np.zeros((0, 3))], ValueError, ("argmin", "(0, 3)")),
        (lambda x: lax.argmax(x, 0, np.float32), [A23], TypeError, ("argmax", "float32")),
        (lambda x: lax.argmax(x, 0, np.uint8), [np.zeros(300)], TypeError, ("argmax", "uint8")),
        (lambda x: lax.cumsum(x, 2), [A23], ValueError, ("cumsum", "(2, 3)")),
        (lambda x: lax.cumprod(x), [np.float64(2.0)], ValueError, ("cumprod", "()")),
        (lambda x: lax.cummax(x, -3), [A23], ValueError, ("cummax", "(2, 3)")),
        (lambda x: lax.cummin(x, 0), [A23.astype(complex)], TypeError, ("cummin", "complex128")),
    ],
)
def test_errors(f: Callable[..., Any], args: list[Any], exc: type, fragments: tuple) -> None:
    check_raises(f, args, exc, *fragments)
