"""The non-differentiable NumPy names of functrace.numpy's statistics/utility set:
finfo, iinfo, copy, array_equal, count_nonzero, triu_indices, tril_indices and
unravel_index, against NumPy eagerly and under ``functrace.jit`` (with traced array
arguments where the function takes arrays). The differentiable ones (average, ptp,
nanmax, nanmin, median) are op-table rows (tests/op_rows_numpy3.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp

RNG = np.random.default_rng(11)


def _eq(actual, expected) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    np.testing.assert_array_equal(a, e)


def _eq_tuple(actual, expected) -> None:
    assert isinstance(actual, tuple) and len(actual) == len(expected)
    for a, e in zip(actual, expected):
        _eq(a, e)


# ---------------------------------------------------------------------------
# finfo, iinfo
# ---------------------------------------------------------------------------


def test_finfo_iinfo_are_numpys() -> None:
    assert fnp.finfo is np.finfo and fnp.iinfo is np.iinfo
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps
    assert fnp.finfo(np.float64).max == np.finfo(np.float64).max
    assert fnp.iinfo(fnp.int8).min == -128 and fnp.iinfo(fnp.uint8).max == 255


def test_finfo_of_a_traced_dtype() -> None:
    # JAX programs write jnp.finfo(x.dtype) inside jitted functions
    def f(x):
        return fnp.minimum(x, fnp.finfo(x.dtype).max / 2)

    x = np.array([1.0, np.inf], np.float32)
    out = ft.jit(f)(x)
    _eq(out, np.array([1.0, np.finfo(np.float32).max / 2], np.float32))


# ---------------------------------------------------------------------------
# copy
# ---------------------------------------------------------------------------


def test_copy_eager_is_a_fresh_numpy_array() -> None:
    x = RNG.normal(size=(2, 3))
    y = fnp.copy(x)
    _eq(y, x)
    assert type(y) is np.ndarray and not np.shares_memory(x, y)
    _eq(fnp.copy([1, 2, 3]), np.copy([1, 2, 3]))


def test_copy_under_jit_and_grad() -> None:
    x = RNG.normal(size=(3,))
    _eq(ft.jit(fnp.copy)(x), x)
    _eq(ft.jit(lambda v: fnp.copy(v) * 2.0)(x), x * 2.0)
    _eq(ft.grad(lambda v: fnp.sum(fnp.copy(v) ** 2))(x), 2 * x)
    _eq(ft.vmap(fnp.copy)(x.reshape(3, 1)), x.reshape(3, 1))


# ---------------------------------------------------------------------------
# array_equal
# ---------------------------------------------------------------------------

_NAN = np.array([1.0, np.nan, 3.0])
_EQUAL_CASES = [
    (np.array([1, 2, 3]), np.array([1, 2, 3]), False),
    (np.array([1, 2, 3]), np.array([1, 2, 4]), False),
    (np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0]), False),
    (np.array([[1.0, 2.0]]), np.array([[1.0, 2.0]]), False),
    (_NAN, _NAN.copy(), False),
    (_NAN, _NAN.copy(), True),
    (_NAN, np.array([1.0, 2.0, np.nan]), True),
    (np.array([True, False]), np.array([True, False]), True),
]


@pytest.mark.parametrize("a,b,equal_nan", _EQUAL_CASES)
def test_array_equal_matches_numpy(a, b, equal_nan) -> None:
    expected = np.array_equal(a, b, equal_nan=equal_nan)
    out = fnp.array_equal(a, b, equal_nan=equal_nan)
    assert out is expected  # a Python bool, as NumPy's
    jitted = ft.jit(lambda x, y: fnp.array_equal(x, y, equal_nan=equal_nan))(a, b)
    _eq(jitted, np.bool_(expected))


def test_array_equal_shape_mismatch_and_broadcastable_shapes() -> None:
    a, b = np.ones((2, 3)), np.ones((3,))
    assert fnp.array_equal(a, b) is False
    assert bool(ft.jit(fnp.array_equal)(a, b)) is False
    assert bool(ft.jit(fnp.array_equal)(a, a.copy())) is True
    batched = ft.vmap(fnp.array_equal)(np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 5]]))
    _eq(batched, np.array([True, False]))


# ---------------------------------------------------------------------------
# count_nonzero
# ---------------------------------------------------------------------------

_X = np.array([[0.0, 1.5, -2.0, 0.0], [np.nan, 0.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "x", [_X, np.nan_to_num(_X).astype(np.int32), _X > 0, np.zeros((0, 3))], ids=str
)
@pytest.mark.parametrize(
    "kw",
    [{}, {"axis": 0}, {"axis": -1, "keepdims": True}, {"axis": (0, 1)}, {"keepdims": True}],
    ids=str,
)
def test_count_nonzero_matches_numpy(x, kw) -> None:
    expected = np.count_nonzero(x, **kw)
    _eq(fnp.count_nonzero(x, **kw), expected)
    out = ft.jit(lambda v: fnp.count_nonzero(v, **kw))(x)
    _eq(out, np.asarray(expected, np.int64))


def test_count_nonzero_of_scalars() -> None:
    for x in (np.float64(2.0), 0, np.array(0.0)):
        _eq(fnp.count_nonzero(x), np.count_nonzero(x))
        _eq(ft.jit(fnp.count_nonzero)(x), np.asarray(np.count_nonzero(x), np.int64))


def test_count_nonzero_batched_and_errors() -> None:
    _eq(ft.vmap(fnp.count_nonzero)(_X), np.count_nonzero(_X, axis=1))
    with pytest.raises(ValueError):
        ft.jit(lambda v: fnp.count_nonzero(v, axis=2))(_X)


# ---------------------------------------------------------------------------
# triu_indices, tril_indices
# ---------------------------------------------------------------------------

_TRI_ARGS = [(3,), (4, 1), (4, -1), (3, 0, 5), (3, 2, 2), (0,), (2, 5)]


@pytest.mark.parametrize("args", _TRI_ARGS, ids=str)
@pytest.mark.parametrize("name", ["triu_indices", "tril_indices"])
def test_tri_indices_match_numpy(name, args) -> None:
    f, ref = getattr(fnp, name), getattr(np, name)
    expected = ref(*args)
    _eq_tuple(f(*args), expected)
    _eq_tuple(ft.jit(lambda: f(*args))(), expected)


@pytest.mark.parametrize("name", ["triu_indices", "tril_indices"])
def test_tri_indices_index_a_traced_matrix(name) -> None:
    a = RNG.normal(size=(4, 4))
    idx = getattr(np, name)(4, 1)
    out = ft.jit(lambda m: m[getattr(fnp, name)(4, 1)])(a)
    np.testing.assert_allclose(out, a[idx])
    # NumPy integer sizes are accepted too
    _eq_tuple(getattr(fnp, name)(np.int64(3), k=np.int64(-1)), getattr(np, name)(3, -1))


# ---------------------------------------------------------------------------
# unravel_index
# ---------------------------------------------------------------------------

_UNRAVEL_CASES = [
    (np.array([0, 1, 5, 7, 23]), (2, 3, 4), "C"),
    (np.array([0, 1, 5, 7, 23]), (2, 3, 4), "F"),
    (np.array([[3, 4], [0, 5]]), (2, 3), "C"),
    (np.int64(7), (3, 4), "C"),
    (np.array([2, 0], np.int32), 6, "C"),
    (np.array([4, 0]), (5, 1), "F"),
]


@pytest.mark.parametrize("indices,shape,order", _UNRAVEL_CASES, ids=str)
def test_unravel_index_matches_numpy(indices, shape, order) -> None:
    expected = np.unravel_index(indices, shape, order)
    _eq_tuple(fnp.unravel_index(indices, shape, order), expected)
    out = ft.jit(lambda i: fnp.unravel_index(i, shape, order))(indices)
    _eq_tuple(out, tuple(np.asarray(e, np.int64) for e in expected))


def test_unravel_index_round_trips_under_vmap() -> None:
    flat = np.arange(24)
    rows, cols = ft.vmap(lambda i: fnp.unravel_index(i, (4, 6)))(flat)
    _eq(rows * 6 + cols, flat)


def test_unravel_index_out_of_bounds_traced_follows_jax() -> None:
    # NumPy raises; on tracers negative indices count from the end and the rest clip
    idx = np.array([-1, -6, 6, 100, -100])
    with pytest.raises(ValueError):
        fnp.unravel_index(idx, (2, 3))
    r, c = ft.jit(lambda i: fnp.unravel_index(i, (2, 3)))(idx)
    _eq(r, np.array([1, 0, 1, 1, 0]))
    _eq(c, np.array([2, 0, 2, 2, 0]))


def test_unravel_index_rejects_float_indices_and_bad_order() -> None:
    with pytest.raises(TypeError):
        ft.jit(lambda i: fnp.unravel_index(i, (2, 3)))(np.array([1.0]))
    with pytest.raises(ValueError):
        ft.jit(lambda i: fnp.unravel_index(i, (2, 3), order="K"))(np.array([1]))
