"""``lax.stack``/``unstack``, ``scatter_sub``/``scatter_apply``, ``GatherScatterMode``,
``approx_max_k``/``approx_min_k``, ``ragged_dot``, ``conv_general_dilated_patches``,
``axis_size``, ``all_to_all`` and ``pswapaxes``: values against JAX
(``tests/fixtures/lax3_jax.npz``, from ``lax3_cases.py``) and NumPy, derivatives
against finite differences, compositions with ``jit``/``vmap``/``grad``, and the errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import functrace as ft
import lax3_cases
from functrace import lax
from functrace.test_util import check_grads
from recorded import assert_matches_recorded

RNG = np.random.default_rng(3)


def test_values_match_jax() -> None:
    def tol(key: str, v: np.ndarray) -> float:
        return 0.0 if v.dtype.kind in "iu" else 1e-12

    assert_matches_recorded(lax3_cases.cases(ft), "lax3_jax.npz", tol)


def _grads(f: Any, *args: Any) -> None:
    check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def _jit_vmap(f: Any, *args: Any) -> None:
    """``jit(f)`` equals eager ``f``; ``vmap(f)`` over a stack of 3 equals the loop."""
    eager = f(*args)
    for a, b in zip(ft.tree_util.tree_leaves(ft.jit(f)(*args)), ft.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    stacked = [np.stack([a * (1.0 + 0.1 * k) for k in range(3)]) for a in args]
    batched = ft.vmap(f)(*stacked)
    for k in range(3):
        one = f(*[s[k] for s in stacked])
        for a, b in zip(ft.tree_util.tree_leaves(batched), ft.tree_util.tree_leaves(one)):
            np.testing.assert_allclose(np.asarray(a)[k], b, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# stack, unstack
# ---------------------------------------------------------------------------


def test_stack_unstack() -> None:
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    for axis in (0, 1, 2, -1, -3):
        np.testing.assert_array_equal(lax.stack([a, b], axis), np.stack([a, b], axis))
    for axis in (0, 1, -1):
        got = lax.unstack(a, axis)
        assert isinstance(got, tuple) and len(got) == a.shape[axis]
        for k, u in enumerate(got):
            np.testing.assert_array_equal(u, np.take(a, k, axis))
    _grads(lambda x, y: lax.stack([x, y * x], 1), a, b)
    _grads(lambda x: lax.unstack(x, 1)[2] * lax.unstack(x)[0][2], a)
    _jit_vmap(lambda x, y: lax.stack([x, y], -1), a, b)
    _jit_vmap(lambda x: lax.unstack(x, 1), a)
    assert lax.unstack(np.zeros((0, 2))) == ()


def test_stack_unstack_errors() -> None:
    with pytest.raises(ValueError, match="stack: expected at least one"):
        lax.stack([])
    with pytest.raises(ValueError, match="stack: expected arrays of one shape"):
        lax.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="stack: expected arrays of one shape and dtype"):
        lax.stack([np.zeros(2), np.zeros(2, np.float32)])
    with pytest.raises(ValueError, match=r"stack: expected axis in \[-2, 2\)"):
        lax.stack([np.zeros(2)], 2)
    with pytest.raises(TypeError, match="stack: expected a sequence"):
        lax.stack(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="unstack: expected an array with at least one axis"):
        lax.unstack(np.float64(1.0))
    with pytest.raises(TypeError, match="unstack: expected axis to be an int"):
        lax.unstack(np.zeros(2), 0.5)


# ---------------------------------------------------------------------------
# GatherScatterMode and the modes of gather and the scatters
# ---------------------------------------------------------------------------


def test_gather_scatter_mode_enum() -> None:
    M = lax.GatherScatterMode
    assert [m.name for m in M] == ["CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS", "ONE_HOT"]
    assert M.from_any("clip") is M.CLIP
    assert M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("fill") is M.FILL_OR_DROP and M.from_any("drop") is M.FILL_OR_DROP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    assert M.from_any("one_hot") is M.ONE_HOT
    assert M.from_any(M.CLIP) is M.CLIP
    with pytest.raises(ValueError, match="GatherScatterMode.from_any: expected"):
        M.from_any("wrap")


IDX = np.array([0, -1, 7, -6, 2, 2])  # in range, wrapped, beyond the end, before the start


def _np_fill_gather(x: np.ndarray, idx: np.ndarray, fill: float) -> np.ndarray:
    n = x.shape[0]
    return np.stack([x[i] if -n <= i < n else np.full(x.shape[1:], fill) for i in idx])


def _np_drop(ufunc: Any, x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    out = x.copy()
    n = x.shape[0]
    for i, u in zip(idx, upd):
        if -n <= i < n:
            if ufunc is None:
                out[i] = u
            else:
                out[i] = ufunc(out[i], u)
    return out


def test_gather_fill() -> None:
    x = RNG.normal(size=(5, 2))
    M = lax.GatherScatterMode
    for mode in ("fill", None, M.FILL_OR_DROP):
        got = lax.gather(x, [IDX], (0,), mode=mode)
        np.testing.assert_array_equal(got, _np_fill_gather(x, IDX, np.nan))
    got = lax.gather(x, [IDX], (0,), mode="fill", fill_value=-2.5)
    np.testing.assert_array_equal(got, _np_fill_gather(x, IDX, -2.5))
    xi = np.arange(5, dtype=np.int32)
    assert lax.gather(xi, [np.array([9])], (0,), mode="fill")[0] == np.iinfo(np.int32).min
    xu = np.arange(5, dtype=np.uint8)
    got = lax.gather(xu, [np.array([1, 200], np.uint8)], (0,), mode="fill")
    np.testing.assert_array_equal(got, [1, 255])
    assert lax.gather(np.ones(3, bool), [np.array([5])], (0,), mode="fill")[0]
    # clip and promise_in_bounds both clamp (a promise is never trusted), as .at[] does
    for mode in (M.CLIP, M.PROMISE_IN_BOUNDS, "promise_in_bounds"):
        np.testing.assert_array_equal(lax.gather(x, [np.array([9])], (0,), mode), x[[4]])
    np.testing.assert_array_equal(
        lax.gather(x, [np.array([9])], (0,), M.PROMISE_IN_BOUNDS),
        ft.numpy.asarray(x).at[9].get(mode="promise_in_bounds")[None],
    )
    f = lambda x, i: lax.gather(x, [i], (0,), mode="fill", fill_value=0.5)  # noqa: E731
    np.testing.assert_array_equal(ft.jit(f)(x, IDX), f(x, IDX))
    idx2 = np.stack([IDX, IDX[::-1]])
    np.testing.assert_array_equal(ft.vmap(f, (None, 0))(x, idx2), [f(x, i) for i in idx2])
    _grads(lambda x: lax.gather(x, [IDX], (0,), mode="fill", fill_value=0.0) ** 2, x)
    # two indexed axes: a tuple out of range on either axis is filled
    y = RNG.normal(size=(3, 4))
    i0, i1 = np.array([0, 3, 1, -1]), np.array([5, 0, -4, 3])
    got = lax.gather(y, [i0, i1], (0, 1), mode="fill", fill_value=9.0)
    np.testing.assert_array_equal(got, [9.0, 9.0, y[1, 0], y[-1, 3]])


@pytest.mark.parametrize(
    "name, ufunc",
    [
        ("scatter", None),
        ("scatter_add", np.add),
        ("scatter_sub", np.subtract),
        ("scatter_mul", np.multiply),
        ("scatter_min", np.minimum),
        ("scatter_max", np.maximum),
    ],
)
def test_scatter_drop(name: str, ufunc: Any) -> None:
    x = RNG.normal(size=(5, 2))
    upd = RNG.normal(size=(len(IDX), 2))
    f = getattr(lax, name)
    want = _np_drop(ufunc, x, IDX, upd)
    for mode in ("drop", None, lax.GatherScatterMode.FILL_OR_DROP):
        np.testing.assert_allclose(f(x, upd, [IDX], (0,), mode=mode), want, rtol=1e-15)
    g = lambda x, u, i: f(x, u, [i], (0,), mode="drop")  # noqa: E731
    np.testing.assert_allclose(ft.jit(g)(x, upd, IDX), want, rtol=1e-15)
    idx2 = np.stack([IDX, IDX[::-1]])
    got = ft.vmap(g, (None, None, 0))(x, upd, idx2)
    np.testing.assert_allclose(got, [_np_drop(ufunc, x, i, upd) for i in idx2], rtol=1e-15)
    if name in ("scatter", "scatter_add", "scatter_sub"):
        _grads(lambda x, u: g(x, u, IDX), x, upd)


def test_mode_errors() -> None:
    x = np.zeros(3)
    with pytest.raises(ValueError, match="gather: expected mode 'raise' or 'clip'"):
        lax.gather(x, [np.array([0])], (0,), mode="wrap")
    with pytest.raises(ValueError, match="scatter_add: expected a gather/scatter mode"):
        lax.scatter_add(x, np.ones(1), [np.array([0])], (0,), mode="one_hot")
    with pytest.raises(ValueError, match="gather: fill_value needs mode='fill'"):
        lax.gather(x, [np.array([0])], (0,), mode="clip", fill_value=1.0)
    with pytest.raises(TypeError, match="gather: expected integer index arrays"):
        lax.gather(x, [np.array([0.5])], (0,), mode="fill")
    with pytest.raises(ValueError, match="scatter: expected updates of shape"):
        lax.scatter(x, np.ones(2), [np.array([0])], (0,), mode="drop")


# ---------------------------------------------------------------------------
# scatter_sub, scatter_apply
# ---------------------------------------------------------------------------


def test_scatter_sub() -> None:
    x = RNG.normal(size=(4, 3))
    idx = np.array([1, 3, 1])
    upd = RNG.normal(size=(3, 3))
    want = x.copy()
    np.subtract.at(want, idx, upd)
    np.testing.assert_allclose(lax.scatter_sub(x, upd, [idx], (0,)), want, rtol=1e-15)
    f = lambda x, u: lax.scatter_sub(x, u, [idx], (0,))  # noqa: E731
    _grads(f, x, upd)
    _jit_vmap(f, x, upd)
    with pytest.raises(TypeError, match="scatter_sub"):
        lax.scatter_sub(np.ones(2, bool), np.ones(1, bool), [np.array([0])], (0,))
    with pytest.raises(IndexError, match="scatter_add"):
        lax.scatter_sub(x, upd, [np.array([1, 9, 0])], (0,))


def test_scatter_apply() -> None:
    x = RNG.normal(size=(5, 2))
    idx = np.array([0, 3, 0, 0])

    def want(x: np.ndarray, idx: np.ndarray, func: Any) -> np.ndarray:
        out = x.copy()
        for i in idx:
            out[i] = func(out[i])
        return out

    func = lambda v: v * 1.5 + 0.25  # noqa: E731
    np.testing.assert_allclose(lax.scatter_apply(x, [idx], func, (0,)), want(x, idx, func))
    f = lambda x, i: lax.scatter_apply(x, [i], lax.sin, (0,))  # noqa: E731
    np.testing.assert_allclose(ft.jit(f)(x, idx), want(x, idx, np.sin), rtol=1e-14)
    idx2 = np.array([[0, 3, 0, 0], [4, 4, 1, 2]])
    np.testing.assert_allclose(
        ft.vmap(f, (None, 0))(x, idx2), [want(x, i, np.sin) for i in idx2], rtol=1e-14
    )
    got = lax.scatter_apply(x, [np.array([0, 9])], func, (0,), mode="drop")
    np.testing.assert_allclose(got, want(x, [0], func))
    _grads(lambda x: lax.scatter_apply(x, [idx], lax.sin, (0,)), x)
    g = ft.grad(lambda x: lax.scatter_apply(x, [idx], lax.sin, (0,)).sum())(x)
    want_g = np.ones_like(x)
    s = np.sin
    a = x[0]
    want_g[0] = np.cos(s(s(a))) * np.cos(s(a)) * np.cos(a)
    want_g[3] = np.cos(x[3])
    np.testing.assert_allclose(g, want_g, rtol=1e-13)
    with pytest.raises(TypeError, match="scatter_apply: expected func to be callable"):
        lax.scatter_apply(x, [idx], 3.0, (0,))
    with pytest.raises(TypeError, match="scatter_apply: expected func to keep"):
        lax.scatter_apply(x, [idx], lambda v: v[0], (0,))
    with pytest.raises(TypeError, match="scatter_apply: expected indices to be a sequence"):
        lax.scatter_apply(x, idx, func, (0,))


# ---------------------------------------------------------------------------
# approx_max_k, approx_min_k
# ---------------------------------------------------------------------------


def test_approx_k() -> None:
    x = RNG.normal(size=(4, 6))
    for axis in (0, 1, -1):
        v, i = lax.approx_max_k(x, 3, reduction_dimension=axis)
        order = np.argsort(-x, axis=axis, kind="stable")
        np.testing.assert_array_equal(i, np.take(order, range(3), axis))
        assert i.dtype == np.int32
        np.testing.assert_array_equal(v, np.take_along_axis(x, i.astype(np.int64), axis))
        v, i = lax.approx_min_k(x, 2, reduction_dimension=axis, aggregate_to_topk=False)
        order = np.argsort(x, axis=axis, kind="stable")
        np.testing.assert_array_equal(i, np.take(order, range(2), axis))
    # ties in index order; the values are the operand's own (signed zeros kept)
    v, i = lax.approx_min_k(np.array([1.0, 0.0, 3.0, -0.0]), 2)
    np.testing.assert_array_equal(i, [1, 3])
    assert not np.signbit(v[0]) and np.signbit(v[1])
    _grads(lambda x: lax.approx_max_k(x, 2)[0], x)
    _grads(lambda x: lax.approx_min_k(x, 3, reduction_dimension=0)[0], x)
    _jit_vmap(lambda x: lax.approx_max_k(x, 2, reduction_dimension=0), x)
    _jit_vmap(lambda x: lax.approx_min_k(x, 2), x)


def test_approx_k_errors() -> None:
    with pytest.raises(TypeError, match="approx_max_k: expected a floating-point operand"):
        lax.approx_max_k(np.arange(4), 2)
    with pytest.raises(ValueError, match=r"approx_min_k: expected k in \[1, 4\]"):
        lax.approx_min_k(np.zeros(4), 5)
    with pytest.raises(ValueError, match=r"approx_min_k: expected k in \[1, 4\]"):
        lax.approx_min_k(np.zeros(4), 0)
    with pytest.raises(TypeError, match="approx_max_k: expected an operand with at least one"):
        lax.approx_max_k(np.float64(1.0), 1)
    with pytest.raises(ValueError, match=r"approx_max_k: expected axis in \[-2, 2\)"):
        lax.approx_max_k(np.zeros((2, 2)), 1, reduction_dimension=2)
    with pytest.raises(TypeError, match="approx_max_k: expected aggregate_to_topk"):
        lax.approx_max_k(np.zeros(3), 1, aggregate_to_topk="yes")


# ---------------------------------------------------------------------------
# ragged_dot
# ---------------------------------------------------------------------------


def _np_ragged(lhs: np.ndarray, rhs: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out = np.zeros((lhs.shape[0], rhs.shape[2]))
    start = 0
    for g, n in enumerate(sizes):
        stop = min(start + int(n), lhs.shape[0])
        out[start:stop] = lhs[start:stop] @ rhs[g]
        start += int(n)
    return out


def test_ragged_dot() -> None:
    lhs, rhs = RNG.normal(size=(6, 3)), RNG.normal(size=(4, 3, 2))
    for sizes in ([1, 2, 0, 3], [6, 0, 0, 0], [0, 0, 0, 2], [2, 2, 2, 2]):
        s = np.array(sizes, np.int32)
        np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, s), _np_ragged(lhs, rhs, s), rtol=1e-13)
    s = np.array([1, 2, 0, 3])
    f = lambda a, b: lax.ragged_dot(a, b, s)  # noqa: E731
    _grads(f, lhs, rhs)
    _jit_vmap(f, lhs, rhs)
    # traced group sizes: under jit and batched under vmap
    np.testing.assert_allclose(ft.jit(lax.ragged_dot)(lhs, rhs, s), _np_ragged(lhs, rhs, s))
    ss = np.array([[1, 2, 0, 3], [3, 0, 3, 0]])
    got = ft.vmap(lax.ragged_dot, (None, None, 0))(lhs, rhs, ss)
    np.testing.assert_allclose(got, [_np_ragged(lhs, rhs, t) for t in ss], rtol=1e-13)
    out = lax.ragged_dot(lhs.astype(np.float32), rhs.astype(np.float32), s)
    assert out.dtype == np.float32


def test_ragged_dot_errors() -> None:
    lhs, rhs, s = np.zeros((4, 3)), np.zeros((2, 3, 5)), np.array([2, 2])
    with pytest.raises(NotImplementedError, match="ragged_dot: group_offset"):
        lax.ragged_dot(lhs, rhs, s, group_offset=np.array([0]))
    with pytest.raises(ValueError, match=r"ragged_dot: expected lhs of shape \(m, k\)"):
        lax.ragged_dot(lhs, np.zeros((2, 4, 5)), s)
    with pytest.raises(ValueError, match=r"ragged_dot: expected group_sizes of shape \(2,\)"):
        lax.ragged_dot(lhs, rhs, np.array([4]))
    with pytest.raises(TypeError, match="ragged_dot: expected integer group_sizes"):
        lax.ragged_dot(lhs, rhs, np.array([2.0, 2.0]))


# ---------------------------------------------------------------------------
# conv_general_dilated_patches
# ---------------------------------------------------------------------------


def test_conv_patches_layout() -> None:
    # NCHW, VALID, stride 1: feature c*6 + (i*3 + j) is x[n, c, h+i, w+j]
    x = RNG.normal(size=(2, 3, 4, 5))
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")
    assert p.shape == (2, 18, 3, 3)
    for c in range(3):
        for i in range(2):
            for j in range(3):
                np.testing.assert_array_equal(
                    p[:, c * 6 + i * 3 + j], x[:, c, i : i + 3, j : j + 3]
                )
    f = lambda x: lax.conv_general_dilated_patches(x, (2, 2), (2, 1), "SAME")  # noqa: E731
    _grads(f, x[:1, :2, :3, :3])
    _jit_vmap(f, x[:, :2])


def test_conv_patches_errors() -> None:
    x = np.zeros((1, 2, 4, 4))
    name = "conv_general_dilated_patches"
    with pytest.raises(ValueError, match=f"{name}: expected filter_shape of 2 positive"):
        lax.conv_general_dilated_patches(x, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError, match=f"{name}: expected filter_shape of 2 positive"):
        lax.conv_general_dilated_patches(x, (2, 0), (1, 1), "VALID")
    with pytest.raises(TypeError, match=f"{name}: expected filter_shape to be a sequence"):
        lax.conv_general_dilated_patches(x, 2, (1, 1), "VALID")
    with pytest.raises(TypeError, match=f"{name}: expected a floating-point lhs"):
        lax.conv_general_dilated_patches(x.astype(np.int64), (2, 2), (1, 1), "VALID")


# ---------------------------------------------------------------------------
# axis_size, all_to_all, pswapaxes
# ---------------------------------------------------------------------------


def _np_all_to_all(x: np.ndarray, split: int, concat: int, tiled: bool) -> np.ndarray:
    """Example k of the result, from the stack ``x`` of every example's value."""
    n = x.shape[0]
    out = []
    for k in range(n):
        if tiled:
            parts = [np.split(x[j], n, axis=split)[k] for j in range(n)]
            out.append(np.concatenate(parts, axis=concat))
        else:
            parts = [np.take(x[j], k, axis=split) for j in range(n)]
            out.append(np.stack(parts, axis=concat))
    return np.stack(out)


@pytest.mark.parametrize(
    "shape, split, concat, tiled",
    [
        ((3, 3, 2), 0, 0, False),
        ((3, 3, 2), 0, 1, False),
        ((3, 2, 3), 1, 0, False),
        ((3, 2, 3, 2), 1, 2, False),
        ((3, 2, 6), 1, 0, True),
        ((3, 2, 6), -1, -1, True),
        ((3, 6, 2), 0, 1, True),
    ],
)
def test_all_to_all(shape: tuple[int, ...], split: int, concat: int, tiled: bool) -> None:
    x = RNG.normal(size=shape)
    f = ft.vmap(lambda r: lax.all_to_all(r, "i", split, concat, tiled=tiled), axis_name="i")
    want = _np_all_to_all(x, split % (len(shape) - 1), concat % (len(shape) - 1), tiled)
    np.testing.assert_array_equal(f(x), want)
    np.testing.assert_array_equal(ft.jit(f)(x), want)
    xs = np.stack([x, 2 * x])
    np.testing.assert_array_equal(ft.vmap(f)(xs), [f(x), f(2 * x)])
    _grads(lambda x: f(x) ** 2, x)


def test_pswapaxes_and_axis_size() -> None:
    x = RNG.normal(size=(3, 2, 3))
    f = ft.vmap(lambda r: lax.pswapaxes(r, "i", 1), axis_name="i")
    np.testing.assert_array_equal(f(x), np.swapaxes(x, 0, 2))
    _grads(lambda x: f(x) * x, x)
    g = ft.vmap(ft.vmap(lambda r: r * lax.axis_size(("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(g(np.ones((2, 3))), np.full((2, 3), 6.0))
    sizes = []
    ft.vmap(lambda r: sizes.append(lax.axis_size("i")) or r, axis_name="i")(np.ones(4))
    assert sizes == [4] and type(sizes[0]) is int


def test_collective_errors() -> None:
    x = np.zeros((3, 2))
    with pytest.raises(NameError, match="axis_size: unbound axis name"):
        lax.axis_size("i")
    named = lambda f: ft.vmap(f, axis_name="i")  # noqa: E731
    with pytest.raises(ValueError, match=r"all_to_all: expected dimension 0 \(split_axis\)"):
        named(lambda r: lax.all_to_all(r, "i", 0, 0))(x)
    with pytest.raises(ValueError, match="all_to_all: expected dimension 0 .* a multiple"):
        named(lambda r: lax.all_to_all(r, "i", 0, 0, tiled=True))(x)
    with pytest.raises(ValueError, match=r"all_to_all: expected split_axis in \[-1, 1\)"):
        named(lambda r: lax.all_to_all(r, "i", 1, 0))(x)
    with pytest.raises(ValueError, match=r"all_to_all: expected concat_axis in \[-1, 1\)"):
        named(lambda r: lax.all_to_all(r, "i", 0, 3))(np.zeros((2, 2)))
    with pytest.raises(NotImplementedError, match="pswapaxes: axis_index_groups"):
        named(lambda r: lax.pswapaxes(r, "i", 0, axis_index_groups=[[0, 1]]))(x)
    with pytest.raises(TypeError, match="all_to_all: expected tiled to be a bool"):
        named(lambda r: lax.all_to_all(r, "i", 0, 0, tiled=1))(x)
    with pytest.raises(TypeError, match="all_to_all: expected split_axis to be an int"):
        named(lambda r: lax.all_to_all(r, "i", 0.0, 0))(x)
    with pytest.raises(NameError, match="all_to_all: unbound axis name"):
        named(lambda r: lax.all_to_all(r, "j", 0, 0))(x)


def test_pbroadcast_and_pshuffle_match_jax():
    x = np.arange(8.0).reshape(4, 2)
    got = ft.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    np.testing.assert_array_equal(got, [[4.0, 5.0]] * 4)  # JAX's values
    got = ft.vmap(lambda v: lax.pshuffle(v, "i", [3, 0, 2, 1]), axis_name="i")(x)
    np.testing.assert_array_equal(got, [[6.0, 7.0], [0.0, 1.0], [4.0, 5.0], [2.0, 3.0]])
    # the broadcast value's derivative reaches the source example only
    g = ft.grad(
        lambda x: ft.numpy.sum(ft.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x))
    )(x)
    np.testing.assert_array_equal(g, [[0, 0], [0, 0], [4, 4], [0, 0]])
    jit = ft.jit(ft.vmap(lambda v: lax.pshuffle(v * 2, "i", [1, 0, 3, 2]), axis_name="i"))
    np.testing.assert_array_equal(jit(x), 2 * x[[1, 0, 3, 2]])
    with pytest.raises(
        ValueError, match=r"pshuffle: expected perm to be a permutation of range\(4\)"
    ):
        ft.vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(x)
    with pytest.raises(ValueError, match=r"pbroadcast: expected source in \[0, 4\)"):
        ft.vmap(lambda v: lax.pbroadcast(v, "i", 4), axis_name="i")(x)
    with pytest.raises(NameError, match="pbroadcast"):
        lax.pbroadcast(x, "j", 0)
