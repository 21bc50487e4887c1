"""Regression tests for the Trust issue's NumPy items.

Item 9: NumPy names and forms users call: sort/argsort/partition/argpartition,
isclose/allclose, angle, real_if_close, rollaxis, convolve and einsum in full (the
interleaved form, traces, diagonals, ellipsis, implicit output, optimize=). The op
table (tests/op_rows_numpy3.py) runs eager/grad/vmap/jit over rows of each; these
tests pin the edge cases (NaN order, ties, signed zeros, errors) and each einsum form
under every transformation.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.ir import eval_jaxpr
from functrace.jit import jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(9)


def _eq(actual, expected) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, e)


def _traced(f, *args):
    """f's result when every argument is a tracer (make_jaxpr, then evaluated)."""
    closed = ft.make_jaxpr(f)(*args)
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))[0]


def _all_ways(f, args, expected, grad=True) -> None:
    """eager, traced, jit and vmap (over a stack of two perturbed copies) agree with
    ``expected``; float rows also pass check_grads at order 2."""
    _eq(f(*args), expected)
    _eq(_traced(f, *args), expected)
    _eq(jit(f)(*args), expected)
    other = tuple(
        np.asarray(a) * 1.5 + 0.25 if np.asarray(a).dtype.kind == "f" else a for a in args
    )
    batched = tuple(np.stack([a, b]) for a, b in zip(args, other))
    expected_b = np.stack([np.asarray(f(*args)), np.asarray(f(*other))])
    _eq(ft.vmap(f)(*batched), expected_b)
    _eq(jit(ft.vmap(f))(*batched), expected_b)
    if grad:
        ft.check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------------------
# sort, argsort, partition, argpartition
# ---------------------------------------------------------------------------


def test_item9_sort_nans_last_on_tracers_and_under_jit() -> None:
    x = np.array([[3.0, np.nan, -1.0, 2.0], [np.nan, 0.5, np.inf, -np.inf]])
    for axis in (-1, 0, None):
        expected = np.sort(x, axis=axis)
        _eq(fnp.sort(x, axis=axis), expected)
        _eq(_traced(lambda v, a=axis: fnp.sort(v, axis=a), x), expected)
        _eq(jit(lambda v, a=axis: fnp.sort(v, axis=a))(x), expected)
        _eq(jit(lambda v, a=axis: fnp.argsort(v, axis=a))(x), np.argsort(x, axis, kind="stable"))


def test_item9_sort_gradient_follows_the_permutation() -> None:
    x = np.array([0.3, -1.2, 2.5, 0.9])
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    g = ft.grad(lambda v: fnp.sum(fnp.sort(v) * w))(x)
    # sort(x)[i] = x[perm[i]], so d/dx[perm[i]] = w[i]
    expected = np.zeros(4)
    expected[np.argsort(x)] = w
    _eq(g, expected)
    _eq(jit(ft.grad(lambda v: fnp.sum(fnp.sort(v) * w)))(x), expected)
    y = RNG.permutation(12).reshape(4, 3) * 0.5
    _all_ways(lambda v: fnp.sort(v, axis=0) ** 2, (y,), np.sort(y, axis=0) ** 2)


def test_item9_sort_kinds_and_errors() -> None:
    x = RNG.normal(size=(3, 4))
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable", "q", "Merge"):
        _eq(jit(lambda v, k=kind: fnp.sort(v, kind=k))(x), np.sort(x, kind=kind))
    _eq(jit(lambda v: fnp.sort(v, stable=False))(x), np.sort(x))
    with pytest.raises(ValueError, match="sort: expected kind"):
        jit(lambda v: fnp.sort(v, kind="bubble"))(x)
    with pytest.raises(ValueError, match="sort: expected kind= or stable="):
        fnp.sort(x, kind="stable", stable=True)
    with pytest.raises(np.exceptions.AxisError, match="sort: expected axis in"):
        jit(lambda v: fnp.sort(v, axis=2))(x)
    with pytest.raises(np.exceptions.AxisError, match="sort"):
        jit(fnp.sort)(np.float64(1.0))  # a 0-d array has no axis -1, as in NumPy
    _eq(jit(lambda v: fnp.sort(v, axis=None))(np.float64(2.0)), np.sort(2.0, axis=None))
    with pytest.raises(
        TypeError, match=r"sort: expected no in-place sort.*functrace\.numpy\.sort\(x"
    ):
        jit(lambda v: v.sort())(x)
    with pytest.raises(TypeError, match="partition: expected no in-place partition"):
        ft.grad(lambda v: v.partition(1))(x)
    with pytest.raises(NotImplementedError, match="sort: expected order=None"):
        jit(lambda v: fnp.sort(v, order="f"))(x)


def test_item9_argsort_is_stable_int64_and_has_no_gradient() -> None:
    x = np.array([[2, 1, 2, 1, 0, 2], [0, 0, 0, 1, 1, 0]])
    expected = np.argsort(x, axis=-1, kind="stable")
    for kind in (None, "quicksort", "heapsort"):
        _eq(fnp.argsort(x, kind=kind), expected)
        _eq(jit(lambda v, k=kind: fnp.argsort(v, kind=k))(x), expected)
    _eq(ft.vmap(fnp.argsort)(x), expected)
    _eq(ft.vmap(fnp.argsort, in_axes=1, out_axes=1)(x.T.copy()), expected.T)
    assert jit(fnp.argsort)(x).dtype == np.int64
    # the method and np.argsort dispatch on tracers
    _eq(jit(lambda v: v.argsort(axis=0))(x), np.argsort(x, axis=0, kind="stable"))
    _eq(jit(lambda v: np.argsort(v, axis=None))(x), np.argsort(x, axis=None, kind="stable"))
    # a function of the sorted indices: the gradient flows through the gather only
    xf = RNG.normal(size=(3, 5))

    def f(v):
        return fnp.take_along_axis(v, fnp.argsort(v, axis=1), axis=1)[:, :2] * 3.0

    _all_ways(f, (xf,), np.take_along_axis(xf, np.argsort(xf, 1), 1)[:, :2] * 3.0)


def _is_partitioned(out: np.ndarray, x: np.ndarray, kth, axis: int) -> bool:
    ref = np.sort(x, axis=axis)
    o, r = np.moveaxis(out, axis, -1), np.moveaxis(ref, axis, -1)
    for k in np.atleast_1d(kth):
        k = int(k) % o.shape[-1]
        if not np.array_equal(o[..., k], r[..., k]):
            return False
        if not (
            np.all(o[..., :k] <= o[..., k : k + 1]) and np.all(o[..., k + 1 :] >= o[..., k : k + 1])
        ):
            return False
    return True


def test_item9_partition_is_a_valid_numpy_partition() -> None:
    x = RNG.normal(size=(3, 7))
    for kth, axis in ((3, -1), ([0, 6], -1), (-2, 1), (1, 0)):
        outs = [
            fnp.partition(x, kth, axis),
            jit(lambda v, k=kth, a=axis: fnp.partition(v, k, a))(x),
        ]
        if axis != 0:  # the rows one by one
            outs.append(ft.vmap(lambda v, k=kth: fnp.partition(v, k))(x))
        for out in outs:
            assert _is_partitioned(np.asarray(out), x, kth, axis)
            # ... and it holds the kth values NumPy's own partition puts there
            ks = np.atleast_1d(kth) % x.shape[axis]
            np.testing.assert_array_equal(
                np.take(out, ks, axis), np.take(np.partition(x, kth, axis), ks, axis)
            )
        idx = jit(lambda v, k=kth, a=axis: fnp.argpartition(v, k, a))(x)
        assert idx.dtype == np.int64
        assert _is_partitioned(np.take_along_axis(x, idx, axis), x, kth, axis)
    # the gradient of the kth smallest value is the one-hot of where it came from
    g = ft.grad(lambda v: fnp.partition(v, 2)[2])(x[0])
    expected = np.zeros(7)
    expected[np.argsort(x[0])[2]] = 1.0
    _eq(g, expected)
    _eq(jit(lambda v: np.argpartition(v, 1))(x), np.argsort(x, kind="stable"))


def test_item9_partition_kth_errors() -> None:
    x = np.arange(4.0)
    with pytest.raises(ValueError, match=r"partition: expected kth in \[-4, 4\).*got 4"):
        jit(lambda v: fnp.partition(v, 4))(x)
    with pytest.raises(ValueError, match="argpartition: expected kth in"):
        fnp.argpartition(x, [0, -5])
    with pytest.raises(TypeError, match="partition: expected kth an int"):
        jit(lambda v: fnp.partition(v, 1.5))(x)
    with pytest.raises(TypeError, match="partition: expected a concrete kth"):
        jit(lambda v, k: fnp.partition(v, k))(x, 1)
    with pytest.raises(ValueError, match="partition: expected kind='introselect'"):
        fnp.partition(x, 1, kind="quicksort")


# ---------------------------------------------------------------------------
# isclose, allclose
# ---------------------------------------------------------------------------


def test_item9_isclose_special_values_on_tracers() -> None:
    a = np.array([1.0, np.inf, -np.inf, np.inf, np.nan, np.nan, 0.0, 1e-9, 1e10])
    b = np.array([1.0 + 1e-6, np.inf, np.inf, 1e308, np.nan, 1.0, -0.0, 0.0, 1.00001e10])
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}, {"atol": 1e-12}):
        expected = np.isclose(a, b, **kw)
        _eq(jit(lambda x, y, k=kw: fnp.isclose(x, y, **k))(a, b), expected)
        _eq(_traced(lambda x, y, k=kw: fnp.isclose(x, y, **k), a, b), expected)
        _eq(ft.vmap(lambda x, y, k=kw: fnp.isclose(x, y, **k))(a, b), expected)
    # broadcasting, Python and integer operands, traced tolerances
    _eq(jit(lambda x: fnp.isclose(x, 1))(np.array([1, 2])), np.isclose(np.array([1, 2]), 1))
    i64 = np.array([np.iinfo(np.int64).min, 3])
    _eq(jit(lambda x: fnp.isclose(x, x))(i64), np.isclose(i64, i64))
    _eq(
        jit(lambda x, t: fnp.isclose(x, 0.0, atol=t))(
            np.array([[0.1], [0.3]]), np.array([0.2, 0.4])
        ),
        np.isclose(np.array([[0.1], [0.3]]), 0.0, atol=np.array([0.2, 0.4])),
    )
    f32 = np.float32([1.0, 1.0001])
    _eq(jit(lambda x: fnp.isclose(x, np.float32(1.0)))(f32), np.isclose(f32, np.float32(1.0)))


def test_item9_isclose_inside_a_differentiated_function() -> None:
    # bools carry no derivative: the where picks the branch, the branch differentiates
    def f(x):
        return fnp.where(fnp.isclose(x, 1.0, atol=0.2), x * x, fnp.sin(x))

    x = np.array([0.5, 0.95, 1.1, 2.0])
    g = ft.grad(lambda v: fnp.sum(f(v)))(x)
    _eq(g, np.where(np.isclose(x, 1.0, atol=0.2), 2 * x, np.cos(x)))
    _eq(jit(ft.grad(lambda v: fnp.sum(f(v))))(x), g)


def test_item9_allclose_eager_bool_and_traced_bool() -> None:
    a = RNG.normal(size=(2, 3))
    assert fnp.allclose(a, a + 1e-10) is True
    assert fnp.allclose(a, a + 1.0) is False
    assert fnp.allclose([np.nan], [np.nan], equal_nan=True) is True
    assert jit(lambda x, y: fnp.allclose(x, y))(a, a + 1e-10) is True  # as eager
    assert jit(lambda x, y: fnp.allclose(x, y))(a, a + 1.0) is False
    out = jit(lambda x, y: fnp.allclose(x, y) | (x[0, 0] > 100.0))(a, a + 1e-10)
    assert out.dtype == np.bool_ and out.shape == () and bool(out)
    _eq(ft.vmap(lambda x: fnp.allclose(x, 0.0, atol=1.0))(a), np.all(np.abs(a) <= 1.0, axis=1))

    # concrete under grad's tracing: usable in Python control flow
    def f(x):
        return fnp.sum(x * 2.0) if fnp.allclose(x, a) else fnp.sum(x)

    _eq(ft.grad(f)(a), np.full_like(a, 2.0))


# ---------------------------------------------------------------------------
# angle, real_if_close
# ---------------------------------------------------------------------------


def test_item9_angle_of_real_tracers() -> None:
    x = np.array([2.0, -3.0, 0.0, -0.0, np.nan, -np.inf])
    for deg in (False, True):
        expected = np.angle(x, deg=deg)
        _eq(jit(lambda v, d=deg: fnp.angle(v, deg=d))(x), expected)
        _eq(ft.vmap(lambda v, d=deg: fnp.angle(v, deg=d))(x), expected)
    _eq(jit(fnp.angle)(np.float32([-1.0, 1.0])), np.angle(np.float32([-1.0, 1.0])))
    _eq(jit(fnp.angle)(np.array([-2, 0, 5])), np.angle(np.array([-2, 0, 5])))
    # piecewise constant: derivative 0 everywhere, at 0 too (no 0/0)
    _eq(ft.grad(lambda v: fnp.sum(fnp.angle(v)))(np.array([0.0, -1.0, 2.0])), np.zeros(3))
    _eq(ft.grad(ft.grad(fnp.angle))(0.0), np.float64(0.0))
    assert fnp.angle(1 + 1j, deg=True) == np.angle(1 + 1j, deg=True)  # plain complex: NumPy


def test_item9_real_if_close() -> None:
    z = np.array([2.1 + 4e-14j, 5.2 + 3e-15j])
    _eq(fnp.real_if_close(z, tol=1000), np.real_if_close(z, tol=1000))
    x = RNG.normal(size=3)
    _all_ways(lambda v: fnp.real_if_close(v) * 2.0, (x,), x * 2.0)
    with pytest.raises(NotImplementedError, match="real_if_close: expected a real traced array"):
        ft.make_jaxpr(fnp.real_if_close)(z)


# ---------------------------------------------------------------------------
# rollaxis
# ---------------------------------------------------------------------------


def test_item9_rollaxis_every_axis_and_start() -> None:
    x = RNG.normal(size=(2, 3, 4))
    for axis in range(-3, 3):
        for start in range(-3, 4):
            expected = np.rollaxis(x, axis, start)
            _eq(_traced(lambda v, a=axis, s=start: fnp.rollaxis(v, a, s), x), expected)
    _all_ways(lambda v: fnp.rollaxis(v, 2, 1) * v.sum(), (x,), np.rollaxis(x, 2, 1) * x.sum())
    with pytest.raises(np.exceptions.AxisError, match=r"rollaxis: expected start in \[-3, 3\]"):
        jit(lambda v: fnp.rollaxis(v, 0, 4))(x)
    with pytest.raises(np.exceptions.AxisError, match="rollaxis: expected axis"):
        jit(lambda v: fnp.rollaxis(v, 3))(x)


# ---------------------------------------------------------------------------
# convolve
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["full", "same", "valid", 0, 1, 2])
def test_item9_convolve_modes(mode) -> None:
    for n, m in ((6, 3), (6, 4), (3, 6), (4, 4), (1, 1), (5, 1), (1, 5)):
        a, v = RNG.normal(size=n), RNG.normal(size=m)
        f = jit(lambda x, y, md=mode: fnp.convolve(x, y, md))
        np.testing.assert_allclose(f(a, v), np.convolve(a, v, mode), rtol=1e-12, atol=1e-12)
    a, v = RNG.normal(size=5), RNG.normal(size=3)
    _all_ways(lambda x, y, md=mode: fnp.convolve(x, y, md), (a, v), np.convolve(a, v, mode))


def test_item9_convolve_dtypes_and_errors() -> None:
    ai, vi = np.array([1, 2, 3]), np.array([0, 1, -1])
    _eq(jit(fnp.convolve)(ai, vi), np.convolve(ai, vi))
    ab, vb = np.array([True, False, True]), np.array([True, True])
    _eq(jit(fnp.convolve)(ab, vb), np.convolve(ab, vb))
    f32 = np.float32([1.0, 2.0])
    _eq(jit(lambda x: fnp.convolve(x, [1.0, 0.5]))(f32), np.convolve(f32, [1.0, 0.5]))
    _eq(jit(lambda x: fnp.convolve(x, 2.0))(f32), np.convolve(f32, 2.0))
    with pytest.raises(ValueError, match="convolve: expected mode"):
        jit(lambda x: fnp.convolve(x, x, "circular"))(f32)
    with pytest.raises(ValueError, match="convolve: expected 1-d sequences"):
        jit(lambda x: fnp.convolve(x, f32))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="convolve: expected non-empty"):
        jit(lambda x: fnp.convolve(x, np.ones(0)))(f32)


# ---------------------------------------------------------------------------
# einsum: every form under grad, vmap and jit
# ---------------------------------------------------------------------------


def test_item9_einsum_interleaved() -> None:
    a, b, c = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=(2,))
    cases = [
        ((lambda x, y: fnp.einsum(x, [0, 1], y, [1, 2], [0, 2])), (a, b), a @ b),
        ((lambda x, y: fnp.einsum(x, [0, 1], y, [1, 2])), (a, b), a @ b),  # implicit output
        ((lambda x, y: fnp.einsum(x, [0, 1], y, [1, 2], [2, 0])), (a, b), (a @ b).T),
        ((lambda x, y, z: fnp.einsum(x, [0, 1], y, [1, 2], z, [2], [0])), (a, b, c), a @ b @ c),
        ((lambda x: fnp.einsum(x, [Ellipsis, 51], [51, Ellipsis])), (a,), a.T),
        ((lambda x, y: fnp.einsum(x, [26, 0], y, [0, 1], [26])), (a, b), np.sum(a @ b, 1)),
    ]
    for f, args, expected in cases:
        _all_ways(f, args, expected)
    with pytest.raises(
        ValueError, match=r"einsum: expected sublist entries that are ints in \[0, 52\)"
    ):
        jit(lambda x: fnp.einsum(x, [0, 52]))(a)
    with pytest.raises(TypeError, match="einsum: expected a sublist"):
        jit(lambda x: fnp.einsum(x, 3))(a)


def test_item9_einsum_traces() -> None:
    a, s = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 4, 4))
    t3 = RNG.normal(size=(3, 2, 3))
    for spec, args in (
        ("ii->", (a,)),
        ("ii", (a,)),
        ("...ii->...", (s,)),
        ("bii->b", (s,)),
        ("iji->j", (t3,)),
        ("ii,jj->", (a, a)),
        ("ij,ji->", (a, a)),
    ):
        _all_ways(lambda *xs, sp=spec: fnp.einsum(sp, *xs), args, np.einsum(spec, *args))
    with pytest.raises(ValueError, match="einsum: expected equal sizes for label 'i' repeated"):
        jit(lambda x: fnp.einsum("ii->", x))(np.ones((2, 3)))


def test_item9_einsum_diagonals() -> None:
    a = RNG.normal(size=(3, 3))
    t = RNG.normal(size=(2, 2, 3))
    c = RNG.normal(size=(2, 2, 2))
    for spec, args in (
        ("ii->i", (a,)),
        ("iij->ij", (t,)),
        ("iij->ji", (t,)),
        ("iii->i", (c,)),
        ("iij,j->i", (t, RNG.normal(size=3))),
        ("ii,i->i", (np.ones((1, 1)) * 2.0, RNG.normal(size=3))),  # size-1 diagonal broadcasts
        ("ii,ij->ij", (a, a)),
    ):
        _all_ways(lambda *xs, sp=spec: fnp.einsum(sp, *xs), args, np.einsum(spec, *args))
    # integer operands and dtype=
    ai = np.arange(9).reshape(3, 3)
    _eq(jit(lambda x: fnp.einsum("ii->i", x))(ai), np.einsum("ii->i", ai))
    _eq(
        jit(lambda x: fnp.einsum("ii", x, dtype=np.float64))(ai),
        np.einsum("ii", ai, dtype=np.float64),
    )


def test_item9_einsum_ellipsis() -> None:
    x, y = RNG.normal(size=(2, 1, 3, 4)), RNG.normal(size=(5, 4, 2))
    for spec, args in (
        ("...ij,...jk->...ik", (x, y)),
        ("...ij,...jk", (x, y)),
        ("...ii->...i", (RNG.normal(size=(2, 3, 3)),)),
        ("i...i->...", (RNG.normal(size=(3, 2, 3)),)),
        ("...i,...i->...", (RNG.normal(size=(2, 3)), RNG.normal(size=(3,)))),
        ("ij...,jk...->ik...", (RNG.normal(size=(2, 3, 1)), RNG.normal(size=(3, 2, 4)))),
    ):
        _all_ways(lambda *xs, sp=spec: fnp.einsum(sp, *xs), args, np.einsum(spec, *args))


def test_item9_einsum_implicit_output() -> None:
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 3))
    for spec, args in (
        ("ij,jk", (a, b)),
        ("ba,ca", (a, b.T)),  # output labels in alphabetical order: 'bc'
        ("ji", (a,)),  # a transpose
        ("ii", (a @ b,)),  # a trace
        ("iij", (RNG.normal(size=(2, 2, 3)),)),  # 'i' twice: summed, 'j' kept
        ("i,i", (a[0], a[1])),
    ):
        _all_ways(lambda *xs, sp=spec: fnp.einsum(sp, *xs), args, np.einsum(spec, *args))


def test_item9_einsum_optimize_accepted() -> None:
    a, b, c = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    path = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    for opt in (False, True, "greedy", "optimal", path):
        _all_ways(
            lambda x, y, z, o=opt: fnp.einsum("ij,jk,kl->il", x, y, z, optimize=o),
            (a, b, c),
            a @ b @ c,
        )
    with pytest.raises(TypeError, match="einsum: expected optimize"):
        jit(lambda x: fnp.einsum("ij->", x, optimize="fastest"))(a)


def test_item9_isfinite_isinf_of_integers_and_python_scalars_under_trace() -> None:
    # isclose calls isfinite on a Python float inside traces; isinf of integers used to
    # build an integer infinity (OverflowError)
    xi, xb = np.array([1, -2, 3]), np.array([True, False])
    for f in (fnp.isfinite, fnp.isinf, fnp.isnan):
        for v in (xi, xb):
            _eq(jit(f)(v), f(v))
        for s in (2.0, 3, True, np.inf):
            _eq(jit(lambda x, f=f, s=s: f(s) & (x == x))(xi), np.broadcast_to(f(s), xi.shape))


def test_sort_and_argsort_descending_as_jax() -> None:
    # JAX's order: largest first, ties in their original order, NaNs first
    x = np.array([3.0, 1.0, 4.0, 1.0, np.nan, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0])
    want = np.array([4, 6, 8, 5, 9, 2, 0, 10, 7, 1, 3])
    for f in (fnp.argsort, jit(lambda v: fnp.argsort(v, descending=True))):
        _eq(f(x, descending=True) if f is fnp.argsort else f(x), want)
    _eq(jit(lambda v: fnp.sort(v, descending=True))(x), x[want])
    _eq(fnp.sort(x, descending=True), x[want])
    m = np.array([[3, 1, 3, 0], [2, 2, 0, 2], [3, 2, 2, 1]])
    by_rows = np.stack([np.lexsort((np.arange(4), -r)) for r in m])
    _eq(ft.vmap(lambda r: fnp.argsort(r, descending=True))(m), by_rows)
    _eq(jit(lambda v: fnp.argsort(v, axis=0, descending=True))(m),
        np.stack([np.lexsort((np.arange(3), -c)) for c in m.T], axis=1))  # fmt: skip
    _eq(fnp.argsort(m, axis=None, descending=True), np.lexsort((np.arange(12), -m.ravel())))
    xf = RNG.normal(size=5)
    ft.check_grads(lambda v: fnp.sort(v, descending=True) * fnp.arange(5.0), (xf,), order=2)
    with pytest.raises(TypeError, match="argsort: expected descending=True or False"):
        fnp.argsort(x, descending="yes")


def test_eager_array_argsort_is_stable_as_under_jit() -> None:
    # Array.argsort on eager values was NumPy's default (unstable) quicksort: ties in
    # another order than fnp.argsort, jit and JAX for arrays longer than 16
    x = fnp.asarray(RNG.integers(0, 3, size=(3, 200)).astype(np.float64))
    for kw in ({}, {"axis": 0}, {"axis": None}, {"kind": "quicksort"}, {"descending": True}):
        want = np.asarray(fnp.argsort(x, **kw))
        _eq(x.argsort(**kw), want)
        _eq(jit(lambda v, kw=kw: v.argsort(**kw))(x), want)
