"""Tests for functrace.numpy indexing: ``x[idx]``, ``x.at[idx]``, take, nonzero.

Every index form is checked against NumPy through staging (``make_jaxpr`` +
``eval_jaxpr``, where index arrays are constants) and under ``grad`` (concrete
tracers); updates against a copy plus assignment / ``ufunc.at``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import (
    ConcretizationError,
    TracerArrayConversionError,
    TracerAssignmentError,
)
from functrace.ir import eval_jaxpr
from functrace.numpy._indexing import getitem

X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)

INDICES: list[Any] = [
    0,
    -1,
    (1, 2),
    slice(None),
    slice(1, None),
    slice(None, None, -1),
    slice(3, 0, -2),
    (Ellipsis, 1),
    (None, 0),
    (0, None, slice(None), None),
    ([0, 1, 1],),
    ([[0], [1]], [2, 0]),
    (slice(None), [0, 2], [1, 3]),
    ([0, 1], slice(None), [1, 3]),
    (0, slice(None), [1, 2]),
    (Ellipsis, [1, 0]),
    ([1, 0], Ellipsis, [4, 4]),
    (True,),
    (False,),
    (slice(None), True),
    (np.array([True, False]),),
    (slice(None), np.array([[True, False, True, False]] * 3)),
    (np.array([True, False]), slice(None, None, -1), [1, 2]),
    ([],),
    (slice(None), slice(2, 2)),
    (1, slice(None, None, -1), None, [0, -1], slice(None, None, 2)),
    (None, [1], None, [2]),
    (slice(-100, 100, 3),),
    (slice(None), [-1, -3]),
    ([0, 1], [1, 2], [2, 3], [3, 4]),
    (0, 1, 2, 3),
    (slice(None, None, -3), slice(1, None, -1)),
    (np.int64(1), np.array(2)),
    ([1, 0], None, [0, 1]),
    ([1, 0], 0),
    (0, [1, 0]),
    (Ellipsis, None),
    ([[1, 0], [0, 0]], Ellipsis, 2),
    (np.array([1, 0], np.uint8),),
]
UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def staged(f: Any, *args: Any) -> Any:
    closed = ft.make_jaxpr(f)(*args)
    out = eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    return out[0] if len(out) == 1 else out


def np_update(op: str, x: np.ndarray, idx: Any, v: Any) -> np.ndarray:
    out = x.copy()
    if op == "set":
        out[idx] = v
    else:
        UFUNCS[op].at(out, idx, v)
    return out


# ---------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_matches_numpy(idx: Any) -> None:
    ref = X[idx]
    out = staged(lambda x: x[idx], X)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_array_equal(out, ref)
    # Under grad the tracer is concrete; the cotangent of x[idx].sum() counts the reads.
    g = ft.grad(lambda x: x[idx].sum())(X)
    expected = np.zeros_like(X)
    np.add.at(expected, idx, 1.0)
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
def test_at_update_matches_numpy(idx: Any, op: str) -> None:
    v = np.random.default_rng(0).normal(size=X[idx].shape)
    out = staged(lambda x, v: getattr(x.at[idx], op)(v), X, v)
    np.testing.assert_allclose(out, np_update(op, X, idx, v))
    out = staged(lambda x: getattr(x.at[idx], op)(2.5), X)
    np.testing.assert_allclose(out, np_update(op, X, idx, 2.5))


@pytest.mark.parametrize(
    "s",
    [
        slice(None, None, -1),
        slice(None, None, -2),
        slice(4, 0, -3),
        slice(-1, -6, -1),
        slice(2, None, -1),
        slice(0, None, -1),
        slice(1, 3, -1),
        slice(100, -100, -4),
    ],
    ids=repr,
)
def test_negative_steps(s: slice) -> None:
    x = np.arange(5.0)
    np.testing.assert_array_equal(staged(lambda x: x[s], x), x[s])
    ft.check_grads(lambda x: x[s] * x[s], (x,), order=2)
    ref = x.copy()
    ref[s] = -1.0
    np.testing.assert_array_equal(staged(lambda x: x.at[s].set(-1.0), x), ref)


def test_grad_accumulates_repeated_indices() -> None:
    g = ft.grad(lambda x: x[[0, 0, 2]].sum())(np.ones(3))
    np.testing.assert_array_equal(g, [2.0, 0.0, 1.0])
    ft.check_grads(lambda x: fnp.sin(x[np.array([[0, 2], [2, 2]])]), (np.arange(3.0),), order=2)


def test_index_with_traced_integers() -> None:
    def f(x):
        i = fnp.argmax(x)  # an integer tracer whose value is known under grad
        return x[i] + x[[i, 0]].sum() + x[i - 1 :].sum()

    x = np.array([1.0, 5.0, 2.0])
    np.testing.assert_array_equal(ft.grad(f)(x), [2.0, 3.0, 1.0])


def test_abstract_integer_indices_wrap_then_clamp_reads_and_drop_updates() -> None:
    # Reads clamp; updates at an index out of range are dropped (JAX's .at semantics).
    x = np.arange(12.0).reshape(3, 4)

    def f(x, i):
        return x[i], x[:, i], x[i, [0, 1]], x.at[i].set(0.0), x.at[:, i].add(1.0)

    closed = ft.make_jaxpr(f)(x, np.int64(0))
    for i in (0, 2, -1, -3, 5, -7):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, [x, np.int64(i)])
        r = min(max(i + 3 if i < 0 else i, 0), 2)
        c = min(max(i + 4 if i < 0 else i, 0), 3)
        set_ref, add_ref = x.copy(), x.copy()
        if -3 <= i < 3:
            set_ref[r] = 0.0
        if -4 <= i < 4:
            add_ref[:, c] += 1.0
        for out, ref in zip(outs, (x[r], x[:, c], x[r, [0, 1]], set_ref, add_ref)):
            np.testing.assert_array_equal(out, ref)


def test_mode_clip_clamps_concrete_indices() -> None:
    x = np.arange(4.0)

    def f(x):
        return x.at[np.array([-1, 9])].get(mode="clip"), x.at[9].set(0.0, mode="clip")

    a, b = staged(f, x)
    np.testing.assert_array_equal(a, [3.0, 3.0])
    np.testing.assert_array_equal(b, [0.0, 1.0, 2.0, 0.0])


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "idx,match",
    [
        (5, "index 5 is out of bounds for axis 0 with size 3"),
        (-4, "index -4 is out of bounds for axis 0 with size 3"),
        ((None, 0, 7), "index 7 is out of bounds for axis 1 with size 4"),
        ([0, 3], "index 3 is out of bounds for axis 0 with size 3"),
        ((slice(None), [[0], [-9]]), "index -9 is out of bounds for axis 1 with size 4"),
        ((0, 0, 0), "too many indices for array: array is 2-dimensional, but 3 were indexed"),
        ((Ellipsis, 0, Ellipsis), "single ellipsis"),
        (np.array([True, False]), "size of axis is 3 but size of corresponding boolean axis is 2"),
        (1.0, "only integers, slices"),
        (slice(0.5, 2), "slice bounds"),
    ],
)
def test_index_errors(idx: Any, match: str) -> None:
    x = np.ones((3, 4))
    with pytest.raises(IndexError, match=match):
        ft.grad(lambda x: x[idx].sum())(x)
    if "out of bounds" in match:  # .at drops updates out of range (JAX's .at)
        want = fnp.at(x)[idx].set(0.0, mode="drop")
        np.testing.assert_array_equal(staged(lambda x: x.at[idx].set(0.0), x), want)
        return
    with pytest.raises(IndexError, match=match):
        ft.make_jaxpr(lambda x: x.at[idx].set(0.0))(x)


def test_traced_mask_under_staging_points_to_where() -> None:
    x = np.array([1.0, -2.0, 3.0])
    with pytest.raises(ConcretizationError, match=r"functrace\.numpy\.where"):
        ft.make_jaxpr(lambda x: x[x > 0])(x)
    # ... while the mask's values are known under grad:
    np.testing.assert_array_equal(ft.grad(lambda x: (x[x > 0] ** 2).sum())(x), [2.0, 0.0, 6.0])


def test_at_with_traced_mask_lowers_to_where() -> None:
    x = np.array([[1.0, -2.0], [-3.0, 4.0]])
    np.testing.assert_array_equal(
        staged(lambda x: x.at[x > 0].set(0.0), x), np.where(x > 0, 0.0, x)
    )
    np.testing.assert_array_equal(
        staged(lambda x: x.at[x[:, 0] > 0].mul(10.0), x), [[10.0, -20.0], [-3.0, 4.0]]
    )
    with pytest.raises(ConcretizationError, match="where"):
        ft.make_jaxpr(lambda x: x.at[x > 0].set(np.arange(4.0)))(x)


def test_traced_slice_bound_points_to_dynamic_slice() -> None:
    with pytest.raises(ConcretizationError, match="dynamic_slice_in_dim"):
        ft.make_jaxpr(lambda x, i: x[i : i + 2])(np.ones(5), np.int64(1))


def test_setitem_error_points_to_at() -> None:
    def f(x):
        x[0] = 1.0
        return x.sum()

    with pytest.raises(TracerAssignmentError, match=r"x\.at\[idx\]\.set"):
        ft.grad(f)(np.ones(3))


def test_update_value_shape_error() -> None:
    with pytest.raises(ValueError, match=r"broadcastable to the indexed shape \(2,\)"):
        ft.make_jaxpr(lambda x: x.at[[0, 1]].set(np.ones(3)))(np.ones(4))


# ---------------------------------------------------------------------------
# .at[] API
# ---------------------------------------------------------------------------


def test_at_api_on_tracers() -> None:
    x = np.arange(5.0)
    seen = {}

    def f(x):
        seen["get"] = x.at[[1, 3]].get()
        y = x.at[1].set(10.0)
        y = y.at[[0, 0]].add(1.0)
        y = y.at[2:4].mul(2.0)
        y = y.at[4].subtract(1.0)
        y = y.at[:2].min(0.5)
        y = y.at[np.array([False, False, False, True, True])].max(5.5)
        return y.at[0].multiply(3.0), x

    y, x_out = staged(f, x)
    np.testing.assert_array_equal(y, [1.5, 0.5, 4.0, 6.0, 5.5])
    np.testing.assert_array_equal(x_out, x)  # functional: x itself is unchanged
    assert seen["get"].shape == (2,)


def test_at_on_numpy_arrays() -> None:
    x = np.zeros(3)
    np.testing.assert_array_equal(fnp.at(x)[[0, 0, 2]].add(1.0), [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(fnp.at(x)[1:].set([1.0, 2.0]), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(x, np.zeros(3))  # a copy, never in place
    # values are cast to x's dtype, as in JAX
    out = fnp.at(np.arange(3))[1].set(2.7)
    assert out.dtype == np.arange(3).dtype and out.tolist() == [0, 2, 2]
    out = staged(lambda x: x.at[1].add(np.float64(1.5)), np.ones(3, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(fnp.at(np.arange(4.0))[2].get(), 2.0)


def test_grad_through_at_set() -> None:
    def f(x, v):
        return (x.at[[0, 2]].set(v) * np.array([1.0, 2.0, 3.0])).sum()

    gx, gv = ft.grad(f, argnums=(0, 1))(np.ones(3), np.array([4.0, 5.0]))
    np.testing.assert_array_equal(gx, [0.0, 2.0, 0.0])  # overwritten entries: zero gradient
    np.testing.assert_array_equal(gv, [1.0, 3.0])
    # repeated set: the last write wins, the overwritten update gets no gradient
    gv = ft.grad(lambda v: fnp.at(np.zeros(2))[[1, 1]].set(v).sum())(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(gv, [0.0, 1.0])
    # windows (dynamic_update_slice) and strided slices (scatter) agree
    for idx in (slice(1, 3), slice(None, None, -2)):
        ft.check_grads(
            lambda x, v, idx=idx: fnp.sin(fnp.at(x)[idx].set(v * v)), (np.arange(4.0), 0.5), order=2
        )


def test_grad_through_at_add_mul() -> None:
    x = np.arange(1.0, 5.0)
    ft.check_grads(
        lambda x, v: fnp.at(x)[[0, 0, 3]].add(v) ** 2, (x, np.array([1.0, 2.0, 3.0])), order=2
    )
    ft.check_grads(
        lambda x, v: fnp.at(x)[[1, 1, 2]].mul(v), (x, np.array([1.5, 2.0, -1.0])), order=2
    )


# ---------------------------------------------------------------------------
# iter / len, take, take_along_axis, nonzero
# ---------------------------------------------------------------------------


def test_iter_and_len_on_tracers() -> None:
    def f(x):
        assert len(x) == 2
        rows = list(x)
        return rows[0] * 2.0 + rows[1]

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(staged(f, x), x[0] * 2 + x[1])
    np.testing.assert_array_equal(ft.grad(lambda x: f(x).sum())(x), [[2.0] * 3, [1.0] * 3])


def test_take_and_take_along_axis() -> None:
    x = np.arange(12.0).reshape(3, 4)
    for kwargs in (
        {"axis": 1},
        {"axis": -2},
        {},
        {"axis": 0, "mode": "wrap"},
        {"axis": 0, "mode": "clip"},
    ):
        idx = np.array([[2, -1], [0, 5]]) if kwargs.get("mode") else np.array([[2, 1], [0, 2]])
        np.testing.assert_array_equal(
            staged(lambda x, i=idx, k=kwargs: fnp.take(x, i, **k), x), np.take(x, idx, **kwargs)
        )
    order = np.argsort(-x, axis=1)
    np.testing.assert_array_equal(
        staged(lambda x: fnp.take_along_axis(x, order, 1), x), np.take_along_axis(x, order, 1)
    )
    flat = np.array([11, 0, 5])
    np.testing.assert_array_equal(
        staged(lambda x: fnp.take_along_axis(x, flat, None), x), np.take_along_axis(x, flat, None)
    )
    g = ft.grad(lambda x: fnp.take_along_axis(x, np.zeros((1, 4), int), 0).sum())(x)
    np.testing.assert_array_equal(g, [[1.0] * 4, [0.0] * 4, [0.0] * 4])
    with pytest.raises(IndexError, match="out of bounds"):
        staged(lambda x: fnp.take(x, 7, axis=0), x)


def test_nonzero_family() -> None:
    a = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    for fn in (fnp.nonzero, fnp.argwhere, fnp.flatnonzero, fnp.where):
        ref = np.asarray(getattr(np, fn.__name__)(a))
        np.testing.assert_array_equal(np.asarray(fn(a)), ref)
        seen: dict[str, Any] = {}

        def f(x, fn=fn, seen=seen):
            seen["out"] = fn(x)  # a concrete tracer under grad: NumPy's result
            return x.sum()

        ft.grad(f)(a)
        np.testing.assert_array_equal(np.asarray(seen["out"]), ref)
    with pytest.raises(ConcretizationError, match="size="):
        ft.make_jaxpr(lambda x: fnp.nonzero(x))(a)
    with pytest.raises(ConcretizationError, match="size="):
        ft.make_jaxpr(lambda x: fnp.where(x > 0))(a)
    rows, cols = staged(lambda x: fnp.nonzero(x, size=5, fill_value=-1), a)
    np.testing.assert_array_equal(rows, [0, 0, 1, 1, -1])
    np.testing.assert_array_equal(cols, [1, 2, 0, 2, -1])
    rows, cols = staged(lambda x: fnp.nonzero(x, size=2), a)
    np.testing.assert_array_equal(rows, [0, 0])
    np.testing.assert_array_equal(cols, [1, 2])
    np.testing.assert_array_equal(fnp.nonzero(a, size=5, fill_value=(9, 8))[1], [1, 2, 0, 2, 8])


def test_jvp_of_indexing() -> None:
    x = np.arange(6.0).reshape(2, 3)
    t = np.ones_like(x)
    out, t_out = ft.jvp(lambda x: x[:, ::-1][[1, 1]] * x[0, 0], (x,), (t,))
    np.testing.assert_array_equal(out, x[:, ::-1][[1, 1]] * x[0, 0])
    np.testing.assert_array_equal(t_out, x[:, ::-1][[1, 1]] + x[0, 0])


def test_getitem_eager_is_numpy() -> None:
    x = np.arange(6.0).reshape(2, 3)
    out = getitem(x, (1, 2))
    assert type(out) is np.float64 and out == 5.0


def test_traced_scalar_with_int_index_under_jit_and_numpy_array_hint() -> None:
    # a traced 0-d index next to a Python int: both are 0-d advanced indices
    m = np.arange(12.0).reshape(3, 4)
    f = lambda m, k: m[k, 1]  # noqa: E731
    assert ft.jit(f)(m, 2) == f(m, 2) == 9.0
    got = ft.jit(lambda m, k: m[k, np.int64(-1)])(m, 1)
    assert got == 7.0 and np.ndim(got) == 0
    # a NumPy array indexed by a tracer cannot be intercepted: the error says what to do
    with pytest.raises(TracerArrayConversionError, match=r"functrace.numpy.take"):
        ft.jit(lambda k: m[k, 1])(2)
    assert ft.jit(lambda k: fnp.take(m[:, 1], k))(2) == 9.0


def test_at_divide_power_apply_follow_jax() -> None:
    # Expected values recorded from JAX 0.10.2: repeated indices divide / multiply
    # exponents / apply the function once per occurrence; integer x divides to floats.
    x = np.arange(4.0)
    rep = np.array([1, 1])
    np.testing.assert_allclose(fnp.at(x)[1].divide(2.0), [0.0, 0.5, 2.0, 3.0])
    np.testing.assert_allclose(fnp.at(x)[rep].divide(2.0), [0.0, 0.25, 2.0, 3.0])
    np.testing.assert_allclose(fnp.at(x + 1)[rep].power(2.0), [1.0, 16.0, 3.0, 4.0])
    np.testing.assert_allclose(fnp.at(x)[1].apply(fnp.sin), [0.0, np.sin(1.0), 2.0, 3.0])
    np.testing.assert_allclose(fnp.at(x)[rep].apply(lambda v: v + 1), [0.0, 3.0, 2.0, 3.0])
    assert fnp.at(np.arange(4))[1].divide(2).dtype == np.float64
    arr = fnp.asarray(x)
    assert type(arr.at[1].divide(2.0)) is ft.Array
    # jit and vmap agree with eager; a traced index too
    f = ft.jit(lambda x, i: (x.at[i].divide(2.0), x.at[i].power(3.0), x.at[i].apply(fnp.exp)))
    want = (
        fnp.at(x)[np.array([1, 1, 3])].divide(2.0),
        fnp.at(x)[np.array([1, 1, 3])].power(3.0),
        fnp.at(x)[np.array([1, 1, 3])].apply(fnp.exp),
    )
    for got, w in zip(f(x, np.array([1, 1, 3])), want):
        np.testing.assert_allclose(got, w, rtol=1e-14)
    batch = np.stack([x, 2 * x + 1])
    got = ft.vmap(lambda r: r.at[rep].apply(fnp.sin))(batch)
    np.testing.assert_allclose(got, [fnp.at(r)[rep].apply(fnp.sin) for r in batch])
    # gradients: x[1] ** (3 * 3) and sin(sin(x[1]))
    g = ft.grad(lambda x: x.at[rep].power(3.0).sum())(x + 1)
    np.testing.assert_allclose(g, [1.0, 9 * 2.0**8, 1.0, 1.0])
    g = ft.jit(ft.grad(lambda x: x.at[rep].apply(fnp.sin).sum()))(x)
    np.testing.assert_allclose(g, [1.0, np.cos(np.sin(1.0)) * np.cos(1.0), 1.0, 1.0])
    # out-of-range indices with mode="drop" are skipped, as for the other updates
    np.testing.assert_allclose(fnp.at(x)[np.array([1, 9])].divide(2.0, mode="drop"), [0, 0.5, 2, 3])


def test_take_fills_out_of_range_indices_under_jit_and_vmap_as_jax() -> None:
    # JAX 0.10.2 (x64): take/take_along_axis default to mode "fill" (they clamped here)
    a = np.arange(10.0)
    i = np.array([2, 15, -11, -1])
    want = [2.0, np.nan, np.nan, 9.0]
    np.testing.assert_array_equal(ft.jit(lambda a, i: fnp.take(a, i))(a, i), want)
    np.testing.assert_array_equal(ft.vmap(lambda i: fnp.take(a, i))(i), want)
    np.testing.assert_array_equal(ft.jit(lambda a, i: fnp.take_along_axis(a, i, 0))(a, i), want)
    big = np.iinfo(np.int64).min
    np.testing.assert_array_equal(ft.jit(lambda i: fnp.take(np.arange(10), i))(i), [2, big, big, 9])
    u8 = ft.jit(lambda i: fnp.take(np.arange(10, dtype=np.uint8), i))(i)
    np.testing.assert_array_equal(u8, [2, 255, 255, 9])
    got = ft.jit(lambda i: fnp.take(a, i, fill_value=-7.0))(i)
    np.testing.assert_array_equal(got, [2.0, -7.0, -7.0, 9.0])
    np.testing.assert_array_equal(ft.jit(lambda i: fnp.take(a, i, mode="clip"))(i), [2, 9, 0, 0])
    # an explicit mode="fill" fills known indices too; the default raises for them
    np.testing.assert_array_equal(fnp.take(a, i, mode="fill"), want)
    np.testing.assert_array_equal(fnp.take(a, np.array([2, 15]), mode="fill", fill_value=5), [2, 5])
    with pytest.raises(IndexError):
        fnp.take(a, i)
    b = np.arange(12.0).reshape(3, 4)
    j = np.array([[0, 5], [1, -1], [3, 9]])
    got = ft.jit(lambda b, j: fnp.take_along_axis(b, j, axis=1))(b, j)
    np.testing.assert_array_equal(got, [[0, np.nan], [5, 7], [11, np.nan]])
    got = ft.jit(lambda b, k: fnp.take(b, k, axis=1))(b, j[0])
    np.testing.assert_array_equal(got, [[0, np.nan], [4, np.nan], [8, np.nan]])
    # the filled entries get no gradient
    g = ft.grad(lambda v: fnp.nansum(ft.jit(lambda v, i: fnp.take(v, i))(v, i)))(a)
    np.testing.assert_array_equal(g, [0, 0, 1, 0, 0, 0, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="take: expected mode None, 'fill'"):
        fnp.take(a, i, mode="promise")
    # unsigned indices (no negative bound) and scalar indices inside a scan
    u = np.array([1, 12], np.uint8)
    np.testing.assert_array_equal(ft.jit(lambda u: fnp.take(a, u))(u), [1.0, np.nan])
    _, got = ft.lax.scan(lambda c, k: (c, fnp.take(a, k)), 0.0, i)
    np.testing.assert_array_equal(got, want)


def test_at_methods_accept_jax_index_hints_and_reject_other_keywords() -> None:
    # JAX's .at[] methods take indices_are_sorted/unique_indices (hints); a program
    # passing them raised "got an unexpected keyword argument". They change nothing.
    x = fnp.arange(5.0)
    i = np.array([0, 2, 3])
    hints = {"indices_are_sorted": True, "unique_indices": True}
    calls = {
        "get": lambda a, **k: a.at[i].get(**k),
        "set": lambda a, **k: a.at[i].set(7.0, **k),
        "add": lambda a, **k: a.at[i].add(2.0, **k),
        "subtract": lambda a, **k: a.at[i].subtract(2.0, **k),
        "mul": lambda a, **k: a.at[i].multiply(3.0, **k),
        "min": lambda a, **k: a.at[i].min(1.5, **k),
        "max": lambda a, **k: a.at[i].max(2.5, **k),
        "divide": lambda a, **k: a.at[i].divide(4.0, **k),
        "power": lambda a, **k: a.at[i].power(2.0, **k),
        "apply": lambda a, **k: a.at[i].apply(fnp.sin, **k),
    }
    for name, call in calls.items():
        want = call(x)
        np.testing.assert_array_equal(call(x, **hints), want, err_msg=name)
        np.testing.assert_array_equal(
            ft.jit(lambda a, call=call: call(a, **hints))(x), want, err_msg=name
        )
        with pytest.raises(TypeError, match=rf"\.at\[\]\.{name}: expected the keyword .*got mod"):
            call(x, mod="clip")
    g = ft.grad(lambda a: a.at[i].get(unique_indices=True).sum())(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0, 1.0, 0.0])
