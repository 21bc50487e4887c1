"""Tests for functrace.lax.shapes: transpose, squeeze, expand_dims, concatenate, slice,
pad, rev, iota, dot_general and sort.

Every op is checked eagerly against NumPy (value, dtype, shape), through staging
(abstract eval + ``eval_jaxpr``), in forward mode against central finite
differences, in reverse mode (linearize + transpose) with the inner-product
identity, and to second order (jvp of jvp, jvp of a transpose).
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
from lax_checks import (
    DTYPES,
    SETTINGS,
    check_grads,
    check_raises,
    check_value,
    distinct,
    rand,
    seeds,
)

# ---------------------------------------------------------------------------
# transpose, squeeze, expand_dims, rev
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
    seeds,
    st.sampled_from(DTYPES),
)
def test_transpose(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = rand(np.random.default_rng(seed), shape, dtype)
    check_value(lambda x: lax.transpose(x, perm), [x], np.transpose(x, perm))
    check_grads(lambda x: lax.transpose(x, perm), [x], seed)


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3),
    seeds,
    st.sampled_from(DTYPES),
)
def test_squeeze_and_expand_dims(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    ones = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    shape = tuple(1 if o else d for o, d in zip(ones, shape))
    dims = tuple(i - len(shape) * data.draw(st.booleans()) for i, d in enumerate(shape) if d == 1)
    x = rand(np.random.default_rng(seed), shape, dtype)
    check_value(lambda x: lax.squeeze(x, dims), [x], np.squeeze(x, axis=dims))
    check_grads(lambda x: lax.squeeze(x, dims), [x], seed)
    k = data.draw(st.integers(0, 2))
    new = tuple(
        data.draw(st.sets(st.integers(0, len(shape) + 1), min_size=k, max_size=k)) if k else ()
    )
    new = tuple(a - (len(shape) + k) if a >= len(shape) + k else a for a in new)
    check_value(lambda x: lax.expand_dims(x, new), [x], np.expand_dims(x, new))
    check_grads(lambda x: lax.expand_dims(x, new), [x], seed)


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    seeds,
    st.sampled_from(DTYPES),
)
def test_rev(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    dims = tuple(data.draw(st.sets(st.integers(0, max(len(shape) - 1, 0)))) if shape else ())
    x = rand(np.random.default_rng(seed), shape, dtype)
    check_value(lambda x: lax.rev(x, dims), [x], np.flip(x, dims))
    check_grads(lambda x: lax.rev(x, dims), [x], seed)


def test_rank0_and_identity_shortcuts() -> None:
    x = np.float32(2.5)
    check_value(lambda x: lax.transpose(x, ()), [x], np.float32(2.5))
    check_value(lambda x: lax.slice(x, (), ()), [x], np.float32(2.5))
    check_value(lambda x: lax.pad(x, 0.0, ()), [x], np.float32(2.5))
    check_value(lambda x: lax.expand_dims(x, (0, -1)), [x], np.full((1, 1), 2.5, np.float32))
    y = np.ones((2, 3))
    assert lax.transpose(y, (0, 1)) is y and lax.slice(y, (0, 0), (2, 3)) is y


# ---------------------------------------------------------------------------
# concatenate, slice, pad
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3),
    seeds,
    st.sampled_from(DTYPES),
)
def test_concatenate(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    rng = np.random.default_rng(seed)
    xs = [
        rand(rng, shape[: dim % len(shape)] + (n,) + shape[dim % len(shape) + 1 :], dtype)
        for n in sizes
    ]
    f = lambda *xs: lax.concatenate(xs, dim)
    check_value(f, xs, np.concatenate(xs, axis=dim))
    check_grads(f, xs, seed)


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    seeds,
    st.sampled_from(DTYPES),
)
def test_slice(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    starts, limits, strides = [], [], []
    for d in shape:
        a, b = sorted(data.draw(st.lists(st.integers(0, d), min_size=2, max_size=2)))
        starts.append(a)
        limits.append(b)
        strides.append(data.draw(st.integers(1, 3)))
    use_strides = data.draw(st.booleans())
    x = rand(np.random.default_rng(seed), shape, dtype)
    f = lambda x: lax.slice(x, starts, limits, strides if use_strides else None)
    idx = tuple(slice(a, b, k if use_strides else 1) for a, b, k in zip(starts, limits, strides))
    check_value(f, [x], x[idx])
    check_grads(f, [x], seed)


def pad_reference(x: np.ndarray, v: Any, config: list[tuple[int, int, int]]) -> np.ndarray:
    out_shape = [lo + hi + d + max(d - 1, 0) * i for (lo, hi, i), d in zip(config, x.shape)]
    out = np.full(out_shape, v, x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + j * (i + 1) for j, (lo, _, i) in zip(idx, config))
        if all(0 <= p < n for p, n in zip(pos, out_shape)):
            out[pos] = x[idx]
    return out


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    seeds,
    st.sampled_from(DTYPES),
)
def test_pad(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    config = []
    for d in shape:
        lo, hi, interior = (
            data.draw(st.integers(-3, 3)),
            data.draw(st.integers(-3, 3)),
            data.draw(st.integers(0, 2)),
        )
        while lo + hi + d + max(d - 1, 0) * interior < 0:
            hi += 1
        config.append((lo, hi, interior))
    rng = np.random.default_rng(seed)
    x, v = rand(rng, shape, dtype), rand(rng, (), dtype)
    check_value(lambda x, v: lax.pad(x, v, config), [x, v], pad_reference(x, v, config))
    check_value(lambda x: lax.pad(x, 7, config), [x], pad_reference(x, 7, config))
    check_grads(lambda x, v: lax.pad(x, v, config), [x, v], seed)


# ---------------------------------------------------------------------------
# iota
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
    st.sampled_from((np.int32, np.int64, np.float32, np.uint8)),
)
def test_iota(data: Any, shape: tuple, dtype: Any) -> None:
    dim = data.draw(st.integers(0, len(shape) - 1))
    column = [-1 if i == dim else 1 for i in range(len(shape))]
    want = np.broadcast_to(np.arange(shape[dim], dtype=dtype).reshape(column), shape)
    check_value(lambda: lax.iota(dtype, shape[dim], dim, shape), [], want)
    check_value(lambda: lax.iota(dtype, shape[0]), [], np.arange(shape[0], dtype=dtype))
    # Zero operands: iota is a constant under every transform.
    x = np.linspace(0.5, 1.5, shape[0])
    check_grads(lambda x: lax.mul(x, lax.iota(np.float64, shape[0])), [x])


# ---------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------


def dot_reference(lhs: np.ndarray, rhs: np.ndarray, dims: Any) -> np.ndarray:
    (lc, rc), (lb, rb) = dims
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lv = [next(letters) for _ in range(lhs.ndim)]
    rv: list[Any] = [None] * rhs.ndim
    for i, j in zip(lc + lb, rc + rb):
        rv[j] = lv[i]
    rv = [c or next(letters) for c in rv]
    out = (
        [lv[i] for i in lb]
        + [lv[i] for i in range(lhs.ndim) if i not in lc + lb]
        + [rv[j] for j in range(rhs.ndim) if j not in rc + rb]
    )
    return np.einsum(f"{''.join(lv)},{''.join(rv)}->{''.join(out)}", lhs, rhs)


# Each case: sizes (b, m, k, n) -> (lhs shape, rhs shape, dimension_numbers).
DOT_CASES: dict[str, Callable[..., Any]] = {
    "matmul": lambda b, m, k, n: ((m, k), (k, n), (((1,), (0,)), ((), ()))),
    "matvec": lambda b, m, k, n: ((m, k), (k,), (((1,), (0,)), ((), ()))),
    "vecmat": lambda b, m, k, n: ((k,), (k, n), (((0,), (0,)), ((), ()))),
    "vecvec": lambda b, m, k, n: ((k,), (k,), (((0,), (0,)), ((), ()))),
    "outer": lambda b, m, k, n: ((m,), (n,), (((), ()), ((), ()))),
    "lhs_T": lambda b, m, k, n: ((k, m), (n, k), (((0,), (1,)), ((), ()))),
    "batched": lambda b, m, k, n: ((b, m, k), (b, k, n), (((2,), (1,)), ((0,), (0,)))),
    "general": lambda b, m, k, n: ((k, b, m, 2), (2, n, b, k), (((0, 3), (3, 0)), ((1,), (2,)))),
    "batch_only": lambda b, m, k, n: ((b, m), (n, b), (((), ()), ((0,), (1,)))),
}


@pytest.mark.parametrize("case", sorted(DOT_CASES))
@SETTINGS
@given(
    sizes=st.lists(st.integers(0, 3), min_size=4, max_size=4),
    seed=seeds,
    dtype=st.sampled_from(DTYPES),
)
def test_dot_general(case: str, sizes: list[int], seed: int, dtype: Any) -> None:
    ls, rs, dims = DOT_CASES[case](*sizes)
    rng = np.random.default_rng(seed)
    x, y = rand(rng, ls, dtype), rand(rng, rs, dtype)
    f = lambda x, y: lax.dot_general(x, y, dims)
    check_value(f, [x, y], dot_reference(x, y, dims).astype(dtype), exact=False)
    check_grads(f, [x, y], seed)


def test_dot_general_preferred_element_type() -> None:
    x = np.full((2, 40), 100, np.int8)
    f = lambda x, y: lax.dot_general(
        x, y, (((1,), (0,)), ((), ())), preferred_element_type=np.int32
    )
    check_value(f, [x, x.T.copy()], np.full((2, 2), 400_000, np.int32))
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    g = lambda a: lax.dot_general(a, a, (((1,), (1,)), ((), ())), preferred_element_type=np.float64)
    check_value(g, [a], a.astype(np.float64) @ a.T.astype(np.float64), exact=False)
    # Reverse mode with a wider output: the cotangent comes back in the input dtype.
    _, lin, _ = ad.linearize_flat(lambda a: [g(a)], [a])
    (ct,) = lin.transpose([np.ones((3, 3))])
    assert ct.dtype == np.float32
    np.testing.assert_allclose(ct, 2 * np.ones((3, 3)) @ a, rtol=1e-5)


# ---------------------------------------------------------------------------
# sort, sort_multi, argsort
# ---------------------------------------------------------------------------


@SETTINGS
@given(
    st.data(),
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
    seeds,
    st.sampled_from(DTYPES),
)
def test_sort_values(data: Any, shape: tuple, seed: int, dtype: Any) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape).astype(dtype)  # many ties
    if np.dtype(dtype).kind == "f" and x.size:
        x.flat[0] = np.nan
    check_value(lambda x: lax.sort(x, dim), [x], np.sort(x, axis=dim, kind="stable"))
    check_value(
        lambda x: lax.argsort(x, dim), [x], np.argsort(x, axis=dim, kind="stable").astype(np.int64)
    )
    keys2, vals = rng.integers(0, 2, shape).astype(dtype), rand(rng, shape, np.float32)
    perm1 = np.argsort(x, axis=dim, kind="stable")
    want1 = [np.take_along_axis(a, perm1, dim) for a in (x, keys2, vals)]
    check_value(lambda *a: lax.sort_multi(a, dim, 1), [x, keys2, vals], want1)
    perm2 = np.lexsort((keys2, x), axis=dim)
    want2 = [np.take_along_axis(a, perm2, dim) for a in (x, keys2, vals)]
    check_value(lambda *a: lax.sort_multi(a, dim, 2), [x, keys2, vals], want2)


@SETTINGS
@given(st.data(), hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seeds)
def test_sort_grads(data: Any, shape: tuple, seed: int) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x, v = distinct(rng, shape), rng.standard_normal(shape)
    check_grads(lambda x: lax.sort(x, dim), [x], seed)
    # Float keys and values: both outputs differentiated w.r.t. both operands.
    check_grads(lambda x, v: lax.sort_multi([x, v], dim, 1), [x, v], seed)
    # Integer keys are constants; the values are permuted linearly.
    keys = rng.integers(0, 3, shape)
    check_grads(lambda v: lax.sort_multi([keys, keys, v], dim, 2)[2], [v], seed)
    check_grads(
        lambda x: lax.mul(lax.convert_element_type(lax.argsort(x, dim), np.float64), x), [x], seed
    )


# ---------------------------------------------------------------------------
# Errors: ValueError/TypeError naming the primitive and the shapes
# ---------------------------------------------------------------------------

A23, A32 = np.zeros((2, 3)), np.zeros((3, 2))


@pytest.mark.parametrize(
    "f, args, exc, fragments",
    [
        (lambda x: lax.transpose(x, (0, 0)), [A23], ValueError, ("transpose", "(2, 3)")),
        (lambda x: lax.transpose(x, (0,)), [A23], ValueError, ("transpose", "(2, 3)")),
        (lambda x: lax.squeeze(x, (0,)), [A23], ValueError, ("squeeze", "(2, 3)")),
        (lambda x: lax.squeeze(x, (5,)), [A23], ValueError, ("squeeze", "(2, 3)")),
        (lambda x: lax.expand_dims(x, (0, 0)), [A23], ValueError, ("expand_dims", "(2, 3)")),
        (
            lambda x, y: lax.concatenate([x, y], 0),
            [A23, A32],
            ValueError,
            ("concatenate", "(2, 3)", "(3, 2)"),
        ),
        (lambda x: lax.concatenate([x], 2), [A23], ValueError, ("concatenate", "(2, 3)")),
        (
            lambda x, y: lax.concatenate([x, y], 0),
            [A23, A23.astype(np.float32)],
            TypeError,
            ("concatenate", "float64", "float32"),
        ),
        (lambda x: lax.slice(x, (0, 0), (3, 3)), [A23], ValueError, ("slice", "(2, 3)")),
        (lambda x: lax.slice(x, (0,), (1,)), [A23], ValueError, ("slice", "(2, 3)")),
        (lambda x: lax.slice(x, (0, 0), (1, 1), (0, 1)), [A23], ValueError, ("slice", "(2, 3)")),
        (lambda x: lax.pad(x, 0.0, ((0, 0, 0),)), [A23], ValueError, ("pad", "(2, 3)")),
        (lambda x: lax.pad(x, 0.0, ((-3, 0, 0), (0, 0, 0))), [A23], ValueError, ("pad", "(2, 3)")),
        (lambda x: lax.pad(x, 0.0, ((0, 0, -1), (0, 0, 0))), [A23], ValueError, ("pad", "(2, 3)")),
        (
            lambda x, v: lax.pad(x, v, ((0, 0, 0), (0, 0, 0))),
            [A23, np.zeros(2)],
            ValueError,
            ("pad", "(2, 3)", "(2,)"),
        ),
        (
            lambda x: lax.pad(x, np.float32(0), ((0, 0, 0), (0, 0, 0))),
            [A23],
            TypeError,
            ("pad", "float64", "float32"),
        ),
        (lambda x: lax.rev(x, (2,)), [A23], ValueError, ("rev", "(2, 3)")),
        (
            lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))),
            [A23, A23.T],
            ValueError,
            ("dot_general", "(2, 3)", "(3, 2)"),
        ),
        (
            lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((0,), ()))),
            [A23, A32],
            ValueError,
            ("dot_general", "(2, 3)", "(3, 2)"),
        ),
        (
            lambda x, y: lax.dot_general(x, y, (((3,), (0,)), ((), ()))),
            [A23, A32],
            ValueError,
            ("dot_general", "(2, 3)", "(3, 2)"),
        ),
        (
            lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
            [A23, A32.astype(np.float32)],
            TypeError,
            ("dot_general", "float64", "float32"),
        ),
        (
            lambda x, y: lax.dot_general(
                x, y, (((1,), (0,)), ((), ())), preferred_element_type=np.int32
            ),
            [A23, A32],
            TypeError,
            ("dot_general", "int32", "float64"),
        ),
        (
            lambda x, y: lax.sort_multi([x, y], 0),
            [A23, A32],
            ValueError,
            ("sort", "(2, 3)", "(3, 2)"),
        ),
        (lambda x: lax.sort(x, 2), [A23], ValueError, ("sort", "(2, 3)")),
        (lambda x: lax.sort(x), [np.float64(1.0)], ValueError, ("sort", "()")),
        (lambda x: lax.sort_multi([x, x], 0, 3), [A23], ValueError, ("sort", "(2, 3)")),
    ],
)
def test_errors(f: Callable[..., Any], args: list[Any], exc: type, fragments: tuple) -> None:
    check_raises(f, args, exc, *fragments)


def test_iota_errors() -> None:
    with pytest.raises(ValueError, match=r"iota.*\(2, 3\)"):
        lax.iota(np.int32, 4, 1, (2, 3))
    with pytest.raises(TypeError, match="iota.*bool"):
        lax.iota(np.bool_, 3)


def test_jaxpr_text() -> None:
    f = lambda x, y: [lax.dot_general(lax.transpose(x, (1, 0)), y, (((1,), (0,)), ((), ())))]
    cj, _ = staging.trace_to_jaxpr(
        f,
        [
            core.ShapedArray((3, 2), np.dtype(np.float32)),
            core.ShapedArray((3, 4), np.dtype(np.float32)),
        ],
        origin="test",
    )
    text = str(cj)
    assert "c:f32[2,3] = transpose[permutation=(1,0)] a" in text
    assert (
        "d:f32[2,4] = dot_general[dimension_numbers=(((1,),(0,)),((),())), "
        "preferred_element_type=None] c b"
    ) in text
