"""Tests for functrace.lax.indexing: dynamic slices, gather and the scatter family.

Every primitive is checked eagerly against a loop-based NumPy reference (value,
dtype, shape), through staging (abstract eval + ``eval_jaxpr``), in forward mode
against central finite differences, in reverse mode (linearize + transpose) with
the inner-product identity, and to second order (jvp of jvp, jvp of a transpose).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
from functrace import core, ir
from functrace.interpreters import ad, staging
from functrace.lax import indexing as ix

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)

FLOATS = (np.float32, np.float64)


@pytest.fixture(autouse=True, scope="module")
def _checks_on():
    prev = staging.enable_checks
    staging.enable_checks = True
    yield
    staging.enable_checks = prev


# ---------------------------------------------------------------------------
# References (loops over the index shape in C order: last write wins)
# ---------------------------------------------------------------------------


def _selector(
    x: np.ndarray, idx: Sequence[np.ndarray], axes: Sequence[int], b: tuple, mode: str = "raise"
) -> tuple:
    sel: list[Any] = [slice(None)] * x.ndim
    for i, a in zip(idx, axes):
        d = x.shape[a]
        v = int(i[b])
        v = v + d if v < 0 else v
        sel[a] = min(max(v, 0), d - 1) if mode == "clip" else v
    return tuple(sel)


def ref_gather(
    x: np.ndarray, idx: Sequence[np.ndarray], axes: Sequence[int], mode: str = "raise"
) -> np.ndarray:
    batch = np.shape(idx[0])
    rest = tuple(d for k, d in enumerate(x.shape) if k not in axes)
    out = np.empty(batch + rest, x.dtype)
    for b in np.ndindex(*batch):
        out[b] = x[_selector(x, idx, axes, b, mode)]
    return out


def ref_scatter(
    x: np.ndarray,
    u: np.ndarray,
    idx: Sequence[np.ndarray],
    axes: Sequence[int],
    op: Callable[[Any, Any], Any] | None,
    mode: str = "raise",
) -> np.ndarray:
    out = x.copy()
    for b in np.ndindex(*np.shape(idx[0])):
        sel = _selector(x, idx, axes, b, mode)
        out[sel] = u[b] if op is None else op(out[sel], u[b])
    return out


SCATTERS: dict[str, tuple[Callable[..., Any], Callable[[Any, Any], Any] | None]] = {
    "scatter": (ix.scatter, None),
    "scatter_add": (ix.scatter_add, np.add),
    "scatter_mul": (ix.scatter_mul, np.multiply),
    "scatter_min": (ix.scatter_min, np.minimum),
    "scatter_max": (ix.scatter_max, np.maximum),
}


def _start(s: int, d: int, n: int) -> int:
    # JAX's rule: a negative start counts from the end once, then the window is clamped
    s = int(s) + d if int(s) < 0 else int(s)
    return min(max(s, 0), d - n)


def ref_dynamic_slice(x: np.ndarray, starts: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    st_ = [_start(s, d, n) for s, d, n in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + n) for s, n in zip(st_, sizes))]


def ref_dynamic_update_slice(x: np.ndarray, u: np.ndarray, starts: Sequence[int]) -> np.ndarray:
    out = x.copy()
    st_ = [_start(s, d, n) for s, d, n in zip(starts, x.shape, u.shape)]
    out[tuple(slice(s, s + n) for s, n in zip(st_, u.shape))] = u
    return out


# ---------------------------------------------------------------------------
# Generic checks
# ---------------------------------------------------------------------------


def assert_same(got: Any, want: Any, rtol: float = 1e-12, atol: float = 0.0) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def check_staged(f: Callable[..., Any], args: Sequence[Any]) -> None:
    """Abstract eval through staging, then eval_jaxpr, equals the eager call."""
    avals = [core.get_aval(a) for a in args]
    cj, n_out = staging.trace_to_jaxpr(lambda *a: [f(*a)], avals, origin="test")
    assert n_out == 1
    assert cj.out_avals[0].same_type(core.get_aval(np.asarray(f(*args))))
    (out,) = ir.eval_jaxpr(cj.jaxpr, cj.consts, list(args))
    assert_same(out, f(*args))


def _tangents(args: Sequence[Any], diff: Sequence[bool], rng: np.random.Generator) -> list[Any]:
    return [
        rng.standard_normal(np.shape(a)) if d else ad.Zero.from_primal(a)
        for a, d in zip(args, diff)
    ]


def _fd(
    f: Callable[..., Any],
    args: Sequence[Any],
    tans: Sequence[Any],
    diff: Sequence[bool],
    eps: float = 1e-6,
) -> Any:
    plus = [a + eps * t if d else a for a, t, d in zip(args, tans, diff)]
    minus = [a - eps * t if d else a for a, t, d in zip(args, tans, diff)]
    fp, fm = f(*plus), f(*minus)
    if isinstance(fp, list):
        return [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(fp, fm)]
    return (np.asarray(fp) - np.asarray(fm)) / (2 * eps)


def _jvp(f: Callable[..., Any], args: Sequence[Any], tans: Sequence[Any]) -> Any:
    _, (t,) = ad.jvp_flat(lambda *a: [f(*a)], args, tans)
    return ad.instantiate(t)


def _vjp(f: Callable[..., Any], args: Sequence[Any], diff: Sequence[bool], ct: Any) -> list[Any]:
    _, lin, _ = ad.linearize_flat(lambda *a: [f(*a)], args, diff_mask=diff)
    cts = lin.transpose([ct])
    return [ad.instantiate(c) for c, d in zip(cts, diff) if d]


def check_grads(
    f: Callable[..., Any], args: Sequence[Any], diff: Sequence[bool], seed: int = 0, order: int = 2
) -> None:
    """Forward vs finite differences, reverse by the inner-product identity, order 2."""
    rng = np.random.default_rng(seed)
    tans = _tangents(args, diff, rng)
    # Forward mode against central differences.
    t_out = _jvp(f, args, tans)
    np.testing.assert_allclose(t_out, _fd(f, args, tans, diff), rtol=1e-5, atol=1e-6)
    # Reverse mode: <ct, J t> == <J^T ct, t>, and the recorded linear map is J.
    out = np.asarray(f(*args))
    ct = rng.standard_normal(out.shape)
    _, lin, _ = ad.linearize_flat(lambda *a: [f(*a)], args, diff_mask=diff)
    (lin_out,) = lin.forward(tans)
    np.testing.assert_allclose(lin_out, t_out, rtol=1e-12, atol=1e-12)
    cts = lin.transpose([ct])
    lhs = float(np.sum(ct * t_out))
    rhs = sum(float(np.sum(ad.instantiate(c) * t)) for c, t, d in zip(cts, tans, diff) if d)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9)
    for c, a, d in zip(cts, args, diff):
        if d:
            assert ad.instantiate(c).shape == np.shape(a)
    if order < 2:
        return
    # Second order, forward over forward: d/ds [J(x) t] against differences.
    s = _tangents(args, diff, rng)

    def first(*a: Any) -> Any:
        return _jvp(f, a, tans)

    np.testing.assert_allclose(
        _jvp(first, args, s), _fd(first, args, s, diff, eps=1e-5), rtol=1e-4, atol=1e-5
    )

    # Second order, forward over reverse: d/ds [J(x)^T ct] against differences.
    def rev(*a: Any) -> list[Any]:
        return _vjp(f, a, diff, ct)

    _, t2 = ad.jvp_flat(rev, args, s)
    for got, want in zip(t2, _fd(rev, args, s, diff, eps=1e-5)):
        np.testing.assert_allclose(ad.instantiate(got), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


@st.composite
def gather_cases(draw: Any, unique: bool = False) -> dict[str, Any]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    k = draw(st.integers(1, ndim))
    axes = tuple(draw(st.permutations(range(ndim)))[:k])
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    idx_dtype = draw(st.sampled_from([np.int64, np.int32]))
    dims = tuple(shape[a] for a in axes)
    if unique:
        total = int(np.prod(dims))
        n = draw(st.integers(1, total))
        flat = rng.choice(total, size=n, replace=False)
        batch: tuple[int, ...] = (n,)
        idx = list(np.unravel_index(flat, dims))
    else:
        batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
        idx = [rng.integers(0, d, size=batch) for d in dims]
    # Negative indices (NumPy-style) for about half of the entries.
    idx = [
        np.where(rng.random(np.shape(i)) < 0.5, i - d, i).astype(idx_dtype)
        for i, d in zip(idx, dims)
    ]
    rest = tuple(d for j, d in enumerate(shape) if j not in axes)
    return dict(
        shape=shape,
        axes=axes,
        idx=idx,
        upd_shape=batch + rest,
        seed=seed,
        dtype=draw(st.sampled_from(FLOATS)),
    )


@st.composite
def slice_cases(draw: Any) -> dict[str, Any]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    sizes = tuple(draw(st.integers(0, d)) for d in shape)
    starts = tuple(draw(st.integers(-3, d + 3)) for d in shape)
    return dict(
        shape=shape,
        sizes=sizes,
        starts=starts,
        seed=draw(st.integers(0, 2**31 - 1)),
        dtype=draw(st.sampled_from(FLOATS)),
    )


def _data(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    # Values away from 0 with distinct magnitudes (no ties for min/max, no zero products).
    mag = rng.uniform(0.5, 2.0, size=shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return np.asarray(mag * sign, dtype=dtype)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------


@SETTINGS
@given(slice_cases())
def test_dynamic_slice_matches_reference(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], c["dtype"], rng)
    out = ix.dynamic_slice(x, c["starts"], c["sizes"])
    assert_same(out, ref_dynamic_slice(x, c["starts"], c["sizes"]))
    starts = [np.int32(s) for s in c["starts"]]
    check_staged(lambda x, *s: ix.dynamic_slice(x, s, c["sizes"]), [x, *starts])


@SETTINGS
@given(slice_cases())
def test_dynamic_update_slice_matches_reference(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], c["dtype"], rng)
    u = _data(c["sizes"], c["dtype"], rng)
    out = ix.dynamic_update_slice(x, u, c["starts"])
    assert_same(out, ref_dynamic_update_slice(x, u, c["starts"]))
    starts = [np.int64(s) for s in c["starts"]]
    check_staged(lambda x, u, *s: ix.dynamic_update_slice(x, u, s), [x, u, *starts])


@SETTINGS
@given(slice_cases())
def test_dynamic_slice_grads(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], np.float64, rng)
    starts = [np.int64(s) for s in c["starts"]]
    f = lambda x, *s: ix.dynamic_slice(x, s, c["sizes"])
    check_grads(f, [x, *starts], [True] + [False] * len(starts), seed=c["seed"])
    # A smooth function of the slice, so the second derivative is not trivially zero.
    g = lambda x, *s: ix.dynamic_slice(mul_self(x), s, c["sizes"])
    check_grads(g, [x, *starts], [True] + [False] * len(starts), seed=c["seed"])


@SETTINGS
@given(slice_cases())
def test_dynamic_update_slice_grads(c: dict[str, Any]) -> None:
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], np.float64, rng)
    u = _data(c["sizes"], np.float64, rng)
    starts = [np.int64(s) for s in c["starts"]]
    f = lambda x, u, *s: ix.dynamic_update_slice(mul_self(x), mul_self(u), s)
    nd = [False] * len(starts)
    check_grads(f, [x, u, *starts], [True, True] + nd, seed=c["seed"])
    check_grads(f, [x, u, *starts], [True, False] + nd, seed=c["seed"], order=1)
    check_grads(f, [x, u, *starts], [False, True] + nd, seed=c["seed"], order=1)


def mul_self(x: Any) -> Any:
    from functrace.lax.elementwise import mul

    return mul(x, x)


def test_dynamic_slice_wraps_negative_starts_once_then_clamps() -> None:
    # JAX's rule (values recorded from JAX 0.10.2): -1 is the last position, then the
    # window is pulled back into range; beyond -n it clamps to 0.
    x = np.arange(10.0)
    assert_same(ix.dynamic_slice(x, [-1], [3]), x[7:10])
    assert_same(ix.dynamic_slice(x, [-4], [3]), x[6:9])
    assert_same(ix.dynamic_slice(x, [-15], [3]), x[0:3])
    assert_same(ix.dynamic_slice(x, [8], [3]), x[7:10])  # past the end: pulled back
    jitted = ft.jit(lambda x, i: ix.dynamic_slice(x, [i], [3]))
    assert_same(jitted(x, -4), x[6:9])
    assert_same(ix.dynamic_update_slice(np.zeros(5), np.ones(2), [-1]), np.array([0, 0, 0, 1, 1.0]))
    # opting out: a known negative start is an error, a traced one is clamped
    with pytest.raises(ValueError, match="dynamic_slice: expected a non-negative start"):
        ix.dynamic_slice(x, [-1], [3], allow_negative_indices=False)
    raw = ft.jit(lambda x, i: ix.dynamic_slice(x, [i], [3], allow_negative_indices=False))
    assert_same(raw(x, -1), x[0:3])
    # the transpose writes where the forward read (the start is not wrapped twice)
    g = ft.grad(lambda x: ix.dynamic_slice(x, [-4], [3]).sum())(x)
    assert_same(g, np.array([0.0] * 6 + [1.0] * 3 + [0.0]))
    assert_same(ix.dynamic_slice_in_dim(np.ones((2, 5)), 4, 2, axis=1), np.ones((2, 2)))
    out = ix.dynamic_update_slice_in_dim(np.zeros((3, 4)), np.ones((3, 2)), 9, axis=-1)
    want = np.zeros((3, 4))
    want[:, 2:] = 1
    assert_same(out, want)


def test_dynamic_slice_transpose_is_update_into_zeros() -> None:
    x = np.arange(6.0).reshape(2, 3)
    _, lin, _ = ad.linearize_flat(
        lambda x, i: [ix.dynamic_slice(x, [0, i], [2, 2])],
        [x, np.int64(5)],
        diff_mask=[True, False],
    )
    ct_x, ct_i = lin.transpose([np.ones((2, 2))])
    assert_same(ct_x, np.array([[0.0, 1, 1], [0, 1, 1]]))
    assert type(ct_i) is ad.Zero


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


@SETTINGS
@given(gather_cases())
def test_gather_matches_reference(c: dict[str, Any]) -> None:
    x = _data(c["shape"], c["dtype"], np.random.default_rng(c["seed"]))
    out = ix.gather(x, c["idx"], c["axes"])
    assert_same(out, ref_gather(x, c["idx"], c["axes"]))
    check_staged(lambda x, *i: ix.gather(x, i, c["axes"]), [x, *c["idx"]])


@SETTINGS
@given(gather_cases())
def test_gather_grads(c: dict[str, Any]) -> None:
    x = _data(c["shape"], np.float64, np.random.default_rng(c["seed"]))
    f = lambda x, *i: ix.gather(mul_self(x), i, c["axes"])
    check_grads(f, [x, *c["idx"]], [True] + [False] * len(c["idx"]), seed=c["seed"])


def test_gather_is_numpy_advanced_indexing() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    i = np.array([[0, -1], [2, 1]])
    j = np.array([[3, 0], [-4, 2]])
    assert_same(ix.gather(x, [i], (1,)), np.moveaxis(x[:, i], 0, 2))
    assert_same(ix.gather(x, [np.array([1, 0, 1])], (0,)), x[[1, 0, 1]])
    assert_same(ix.gather(x, [i, j], (1, 2)), np.moveaxis(x[:, i, j], 0, -1))
    assert_same(ix.gather(x, [j, i], (2, 1)), np.moveaxis(x[:, i, j], 0, -1))
    assert_same(ix.gather(x, [np.int64(-1), np.int64(2)], (0, 2)), x[-1, :, 2])
    assert_same(ix.index_take(x, np.array([2, 0]), axis=-1), np.moveaxis(x[..., [2, 0]], -1, 0))
    # Index dtypes other than int64, including unsigned.
    assert_same(ix.gather(x, [np.array([2, 0], np.uint8)], (1,)), x[:, [2, 0]].swapaxes(0, 1))
    assert_same(ix.gather(x, [[1, 0]], (0,)), x[[1, 0]])  # a nested list is an index array


def test_gather_clip_mode() -> None:
    x = np.arange(5.0)
    idx = np.array([-7, -1, 0, 4, 5, 100])
    assert_same(ix.gather(x, [idx], (0,), mode="clip"), np.array([0.0, 4, 0, 4, 4, 4]))
    assert_same(ix.gather(x, [idx], (0,), mode="clip"), ref_gather(x, [idx], (0,), "clip"))
    big = np.array([2**63 + 5], np.uint64)
    assert_same(ix.gather(x, [big], (0,), mode="clip"), np.array([4.0]))
    with pytest.raises(IndexError, match="got index 9223372036854775813"):
        ix.gather(x, [big], (0,))


def test_gather_transpose_accumulates_repeats() -> None:
    x = np.arange(4.0)
    idx = np.array([1, 1, -3, 3])
    _, lin, _ = ad.linearize_flat(lambda x: [ix.gather(x, [idx], (0,))], [x])
    (ct_x,) = lin.transpose([np.array([1.0, 2.0, 4.0, 8.0])])
    assert_same(ct_x, np.array([0.0, 7.0, 0.0, 8.0]))


# ---------------------------------------------------------------------------
# The scatter family
# ---------------------------------------------------------------------------


@SETTINGS
@given(gather_cases(), st.sampled_from(sorted(SCATTERS)))
def test_scatter_matches_reference(c: dict[str, Any], name: str) -> None:
    fn, op = SCATTERS[name]
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], c["dtype"], rng)
    u = _data(c["upd_shape"], c["dtype"], rng)
    out = fn(x, u, c["idx"], c["axes"])
    rtol = 1e-6 if c["dtype"] == np.float32 else 1e-12
    assert_same(out, ref_scatter(x, u, c["idx"], c["axes"], op), rtol=rtol)
    assert_same(x, _data(c["shape"], c["dtype"], np.random.default_rng(c["seed"])))  # no mutation
    check_staged(lambda x, u, *i: fn(x, u, i, c["axes"]), [x, u, *c["idx"]])


@SETTINGS
@given(gather_cases(), st.sampled_from(sorted(SCATTERS)))
def test_scatter_grads_repeated_indices(c: dict[str, Any], name: str) -> None:
    fn, _ = SCATTERS[name]
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], np.float64, rng)
    u = _data(c["upd_shape"], np.float64, rng)
    f = lambda x, u, *i: fn(mul_self(x), mul_self(u), i, c["axes"])
    nd = [False] * len(c["idx"])
    args = [x, u, *c["idx"]]
    check_grads(f, args, [True, True] + nd, seed=c["seed"])
    check_grads(f, args, [False, True] + nd, seed=c["seed"], order=1)
    check_grads(f, args, [True, False] + nd, seed=c["seed"], order=1)


@SETTINGS
@given(gather_cases(unique=True), st.sampled_from(sorted(SCATTERS)))
def test_scatter_grads_unique_indices(c: dict[str, Any], name: str) -> None:
    fn, _ = SCATTERS[name]
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], np.float64, rng)
    u = _data(c["upd_shape"], np.float64, rng)
    f = lambda x, u, *i: fn(x, mul_self(u), i, c["axes"])
    check_grads(f, [x, u, *c["idx"]], [True, True] + [False] * len(c["idx"]), seed=c["seed"])


@SETTINGS
@given(gather_cases(), st.sampled_from(sorted(SCATTERS)))
def test_scatter_staged_derivatives_match_eager(c: dict[str, Any], name: str) -> None:
    # Under staging the indices are abstract, so the rules cannot inspect them
    # (scatter_mul takes its general repeated-index path, scatter its exact mask).
    fn, _ = SCATTERS[name]
    rng = np.random.default_rng(c["seed"])
    x = _data(c["shape"], np.float64, rng)
    u = _data(c["upd_shape"], np.float64, rng)
    tx, tu = rng.standard_normal(x.shape), rng.standard_normal(u.shape)
    ct = rng.standard_normal(x.shape)
    k = len(c["idx"])
    f = lambda x, u, *i: fn(x, u, i, c["axes"])
    diff = [True, True] + [False] * k

    def fwd_and_rev(x: Any, u: Any, *i: Any) -> list[Any]:
        args = [x, u, *i]
        t = _jvp(f, args, [tx, tu] + [ad.Zero.from_primal(j) for j in i])
        return [t, *_vjp(f, args, diff, ct)]

    args = [x, u, *c["idx"]]
    cj, _ = staging.trace_to_jaxpr(fwd_and_rev, core.avals_of(args), origin="test")
    staged = ir.eval_jaxpr(cj.jaxpr, cj.consts, args)
    for got, want in zip(staged, fwd_and_rev(*args)):
        assert_same(got, want, rtol=1e-12, atol=1e-14)


def test_scatter_set_last_write_wins_and_transpose_is_exact() -> None:
    x = np.zeros(3)
    u = np.array([1.0, 2.0, 3.0, 4.0])
    idx = np.array([0, 2, -3, 1])
    out = ix.scatter(x, u, [idx], (0,))
    want = x.copy()
    want[idx] = u
    assert_same(out, want)
    assert_same(out, np.array([3.0, 4.0, 2.0]))
    _, lin, _ = ad.linearize_flat(lambda x, u: [ix.scatter(x, u, [idx], (0,))], [x, u])
    ct_x, ct_u = lin.transpose([np.array([10.0, 20.0, 30.0])])
    assert_same(ct_x, np.zeros(3))
    assert_same(ct_u, np.array([0.0, 30.0, 10.0, 20.0]))  # the overwritten update gets 0


def test_scatter_add_is_numpy_add_at() -> None:
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([0, 3, 0, -1])
    u = np.arange(12.0, 24.0).reshape(4, 3)
    want = x.copy()
    np.add.at(want, idx, u)
    assert_same(ix.scatter_add(x, u, [idx], (0,)), want)
    want = x.copy()
    np.multiply.at(want, (slice(None), np.array([2, 2])), np.full((4, 2), 2.0))
    got = ix.scatter_mul(x, np.full((2, 4), 2.0), [np.array([2, 2])], (1,))
    assert_same(got, want)


def test_scatter_clip_mode() -> None:
    x = np.zeros(4)
    idx = np.array([-9, 7, 1])
    u = np.array([1.0, 2.0, 4.0])
    assert_same(ix.scatter_add(x, u, [idx], (0,), mode="clip"), np.array([1.0, 4, 0, 2]))
    assert_same(
        ix.scatter(x, u, [idx], (0,), mode="clip"), ref_scatter(x, u, [idx], (0,), None, "clip")
    )
    check_grads(
        lambda x, u, i: ix.scatter(x, mul_self(u), [i], (0,), "clip"),
        [x, u, idx],
        [True, True, False],
    )


def test_scatter_minmax_ties_share_the_tangent() -> None:
    x = np.array([1.0, 5.0, 2.0])
    u = np.array([1.0, 7.0, 7.0, 0.0])
    idx = np.array([0, 1, 1, 2])
    f = lambda x, u: ix.scatter_max(x, u, [idx], (0,))
    assert_same(f(x, u), np.array([1.0, 7.0, 2.0]))
    tx, tu = np.array([1.0, 10.0, 100.0]), np.array([1000.0, 1e4, 1e5, 1e6])
    # As JAX: the mean of the tied values' tangents. Position 0: the operand ties the
    # update; position 1: two updates tie; position 2: the operand wins outright.
    assert_same(_jvp(f, [x, u], [tx, tu]), np.array([500.5, 55000.0, 100.0]))
    g = lambda x, u: ix.scatter_min(x, u, [idx], (0,))
    assert_same(g(x, u), np.array([1.0, 5.0, 0.0]))
    assert_same(_jvp(g, [x, u], [tx, tu]), np.array([500.5, 10.0, 1e6]))


def test_scatter_mul_repeated_indices_with_zeros() -> None:
    # d/du_j of x * prod(u) is x * prod of the others, also when some u are 0.
    x = np.array([3.0, 2.0])
    idx = np.array([0, 0, 0, 1, 1])
    f = lambda x, u: ix.scatter_mul(x, u, [idx], (0,))
    for u in (np.array([2.0, 0.0, 5.0, 0.0, 0.0]), np.array([2.0, 0.5, 5.0, 3.0, -1.0])):
        ct = np.array([1.0, 1.0])
        (_, ct_u) = _vjp(f, [x, u], [True, True], ct)
        want = np.array(
            [
                x[idx[j]] * np.prod(np.delete(u, j)[np.delete(idx, j) == idx[j]])
                for j in range(len(u))
            ]
        )
        assert_same(ct_u, want)
    check_grads(f, [x, np.array([2.0, 0.5, 5.0, 3.0, -1.0])], [True, True])


def test_scatter_integer_and_bool_operands() -> None:
    x = np.arange(5)
    idx = np.array([0, 0, 4])
    u = np.array([10, 20, 30])
    assert_same(ix.scatter_add(x, u, [idx], (0,)), ref_scatter(x, u, [idx], (0,), np.add))
    assert_same(ix.scatter_max(x, u, [idx], (0,)), ref_scatter(x, u, [idx], (0,), np.maximum))
    b = np.zeros(3, bool)
    assert_same(
        ix.scatter(b, np.array([True]), [np.array([1])], (0,)), np.array([False, True, False])
    )
    # Integer operands carry no tangent: jvp and linearize go through untouched.
    t = _jvp(
        lambda x, u: ix.scatter_add(x, u, [idx], (0,)),
        [x, u],
        [ad.Zero.from_primal(x), ad.Zero.from_primal(u)],
    )
    assert t.dtype == ad.Zero.from_primal(x).aval.dtype


# ---------------------------------------------------------------------------
# Errors: class, primitive name, shapes
# ---------------------------------------------------------------------------


def _staged_error(f: Callable[..., Any], args: Sequence[Any]) -> None:
    staging.trace_to_jaxpr(lambda *a: [f(*a)], core.avals_of(args), origin="test")


X = np.zeros((3, 4))


@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize(
    "f, args, exc, phrases",
    [
        (
            lambda x: ix.dynamic_slice(x, [0], [1, 1]),
            [X],
            ValueError,
            ["dynamic_slice", "(3, 4)", "got 1"],
        ),
        (
            lambda x: ix.dynamic_slice(x, [0, 0], [4, 1]),
            [X],
            ValueError,
            ["dynamic_slice", "(3, 4)", "(4, 1)"],
        ),
        (
            lambda x: ix.dynamic_slice(x, [0, 1.5], [1, 1]),
            [X],
            TypeError,
            ["dynamic_slice", "scalar integer", "f64[]", "axis 1"],
        ),
        (
            lambda x: ix.dynamic_slice(x, [0, np.array([1, 2])], [1, 1]),
            [X],
            TypeError,
            ["dynamic_slice", "i64[2]"],
        ),
        (
            lambda x: ix.dynamic_update_slice(x, np.ones((4, 1)), [0, 0]),
            [X],
            ValueError,
            ["dynamic_update_slice", "(4, 1)", "(3, 4)"],
        ),
        (
            lambda x: ix.dynamic_update_slice(x, np.ones(2), [0, 0]),
            [X],
            ValueError,
            ["dynamic_update_slice", "(2,)", "(3, 4)"],
        ),
        (
            lambda x: ix.dynamic_update_slice(x, np.ones((1, 1), np.float32), [0, 0]),
            [X],
            TypeError,
            ["dynamic_update_slice", "float64", "float32"],
        ),
        (
            lambda x: ix.gather(x, [np.array([0]), np.array([0, 1])], (0, 1)),
            [X],
            ValueError,
            ["gather", "(1,)", "(2,)", "common shape"],
        ),
        (
            lambda x: ix.gather(x, [np.array([0.0])], (0,)),
            [X],
            TypeError,
            ["gather", "integer", "float64"],
        ),
        (lambda x: ix.gather(x, [np.array([True])], (0,)), [X], TypeError, ["gather", "bool"]),
        (
            lambda x: ix.gather(x, [np.array([0])], (0, 1)),
            [X],
            ValueError,
            ["gather", "one index array per", "(0, 1)"],
        ),
        (
            lambda x: ix.gather(x, [np.array([0]), np.array([0])], (1, 1)),
            [X],
            ValueError,
            ["gather", "distinct axes", "(3, 4)"],
        ),
        (lambda x: ix.gather(x, [], ()), [X], ValueError, ["gather", "at least one"]),
        (
            lambda x: ix.gather(x, [np.array([0])], (0,), mode="wrap"),
            [X],
            ValueError,
            ["gather", "'raise' or 'clip'", "'wrap'"],
        ),
        (
            lambda x: ix.gather(np.zeros((2, 0)), [np.array([0])], (1,)),
            [X],
            IndexError,
            ["gather", "axis 1", "(2, 0)"],
        ),
        (
            lambda x: ix.scatter_add(x, np.ones((2, 4)), [np.array([0])], (0,)),
            [X],
            ValueError,
            ["scatter_add", "(1, 4)", "(2, 4)", "(3, 4)"],
        ),
        (
            lambda x: ix.scatter(x, np.ones((1, 4), np.float32), [np.array([0])], (0,)),
            [X],
            TypeError,
            ["scatter", "float64", "float32"],
        ),
        (
            lambda x: ix.scatter_max(
                x.astype(complex), np.ones((1, 4), complex), [np.array([0])], (0,)
            ),
            [X],
            TypeError,
            ["scatter_max", "complex128"],
        ),
        (
            lambda x: ix.scatter_mul(x, np.ones((4, 1)), [np.array([0])], (1,)),
            [X],
            ValueError,
            ["scatter_mul", "(1, 3)", "(4, 1)"],
        ),
    ],
)
def test_errors(
    f: Callable[..., Any], args: list[Any], exc: type, phrases: list[str], staged: bool
) -> None:
    with pytest.raises(exc) as info:
        _staged_error(f, args) if staged else f(*args)
    msg = str(info.value)
    for p in phrases:
        assert p in msg, (p, msg)
    assert ": expected " in msg


@pytest.mark.parametrize("name", sorted(SCATTERS) + ["gather"])
def test_out_of_bounds_raises_index_error(name: str) -> None:
    x = np.zeros((2, 3))
    for bad in (np.array([0, 3]), np.array([-4, 0])):
        with pytest.raises(IndexError) as info:
            if name == "gather":
                ix.gather(x, [bad], (1,))
            else:
                SCATTERS[name][0](x, np.ones((2, 2)), [bad], (1,))
        msg = str(info.value)
        assert name in msg and "axis 1" in msg and "size 3" in msg and str(bad[bad != 0][0]) in msg
