"""Set operations, counting, histograms and interpolation of functrace.numpy.

Eagerly on NumPy inputs every function is NumPy's (values, dtypes). Traced (staged with
``make_jaxpr`` and run, or under ``jit``/``vmap``/``grad``) the same inputs give the same
results: with ``size=`` equal to NumPy's length exactly NumPy's arrays, otherwise the
padding and truncation of JAX (the expected arrays below marked "JAX" are the values
JAX 0.10.2 returns for the same call, with x64 enabled). The op-table rows are in
``tests/op_rows_numpy4.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import ConcretizationError
from functrace.ir import eval_jaxpr

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NAN = np.nan
RNG = np.random.default_rng(7)


def _eq(actual, expected, exact: bool = True) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _eq(a, e, exact)
        return
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if exact or a.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


def staged(f):
    """``f`` traced to a jaxpr (all arguments abstract) and evaluated: the traced path
    without compiling."""

    def g(*args):
        closed = ft.make_jaxpr(f)(*args)
        leaves = ft.tree_util.tree_leaves(args)
        outs = eval_jaxpr(closed.jaxpr, closed.consts, leaves)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return g


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------

UNIQUE_INPUTS = [
    np.array([3, 1, 3, 2]),
    np.array([], np.float64),
    np.array([5.0]),
    np.array(7.0),
    np.array([[3, 1], [1, 3]], np.int8),
    np.array([3.0, NAN, 1.0, NAN, 3.0]),
    np.array([NAN, NAN]),
    np.array([np.inf, -np.inf, NAN, np.inf, 0.0, -0.0]),
    np.array([True, False, True]),
    np.array([2.5, 1.0, 2.5], np.float32),
]
FLAGS = [
    dict(),
    dict(return_index=True),
    dict(return_inverse=True),
    dict(return_counts=True),
    dict(return_index=True, return_inverse=True, return_counts=True),
]


def _n_unique(x, **kw) -> int:
    return len(np.unique(x, **kw))


@pytest.mark.parametrize("x", UNIQUE_INPUTS, ids=lambda x: f"{x.dtype}{x.shape}")
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_eager_and_traced_match_numpy(x, equal_nan) -> None:
    for kw in FLAGS:
        expected = np.unique(x, equal_nan=equal_nan, **kw)
        _eq(fnp.unique(x, equal_nan=equal_nan, **kw), expected)
        size = _n_unique(x, equal_nan=equal_nan)
        got = staged(lambda v, n=size, k=kw: fnp.unique(v, equal_nan=equal_nan, size=n, **k))(x)
        _eq(got, expected)


def test_unique_complex_and_lists_eager() -> None:
    z = np.array([1 + 1j, 1 - 1j, 1 + 1j, complex(NAN, 0), complex(0, NAN)])
    _eq(fnp.unique(z, return_counts=True), np.unique(z, return_counts=True))
    _eq(fnp.unique([3, 1, 3]), np.unique([3, 1, 3]))
    _eq(fnp.unique(2.5, return_inverse=True), np.unique(2.5, return_inverse=True))


def test_unique_size_pads_and_truncates_as_jax() -> None:
    x = np.array([3.0, 1.0, 2.0, 1.0, NAN, 3.0, NAN])
    # JAX: values padded with the smallest, its index, counts 0; inverse unchanged
    pad = (
        np.array([1.0, 2.0, 3.0, NAN, 1.0, 1.0]),
        np.array([1, 2, 0, 4, 1, 1]),
        np.array([2, 0, 1, 0, 3, 2, 3]),
        np.array([2, 1, 2, 2, 0, 0]),
    )
    cut = (np.array([1.0, 2.0]), np.array([1, 2]), pad[2], np.array([2, 1]))
    flags = dict(return_index=True, return_inverse=True, return_counts=True)
    for size, expected in ((6, pad), (2, cut)):
        _eq(fnp.unique(x, size=size, **flags), expected)
        _eq(staged(lambda v, s=size: fnp.unique(v, size=s, **flags))(x), expected)
        _eq(ft.jit(lambda v, s=size: fnp.unique(v, size=s, **flags))(x), expected)
    # JAX: fill_value pads the values only; the indices still point to the smallest
    got = fnp.unique(np.array([3, 1, 3]), size=4, fill_value=-9, return_index=True)
    _eq(got, (np.array([1, 3, -9, -9]), np.array([1, 0, 1, 1])))
    # fill_value is cast to the result's dtype
    _eq(fnp.unique(np.array([1, 2]), size=3, fill_value=1.7), np.array([1, 2, 1]))
    _eq(fnp.unique(np.array([1, 2]), size=0), np.zeros(0, np.int64))


def test_unique_empty_input_with_size() -> None:
    empty = np.array([], np.float64)
    with pytest.raises(ValueError, match="unique: expected fill_value="):
        fnp.unique(empty, size=2)
    got = staged(lambda v: fnp.unique(v, size=2, fill_value=0.5, return_counts=True))(empty)
    _eq(got, (np.array([0.5, 0.5]), np.array([0, 0])))


def test_unique_axis() -> None:
    m = RNG.integers(-1, 2, (7, 2))
    m3 = np.arange(24).reshape(2, 3, 4) % 3
    for a, axis in ((m, 0), (m.T, 1), (m3, 1), (m3, -1), (m3, 0)):
        for kw in FLAGS:
            expected = np.unique(a, axis=axis, **kw)
            _eq(fnp.unique(a, axis=axis, **kw), expected)
            size = np.unique(a, axis=axis).shape[axis]
            got = staged(lambda v, ax=axis, n=size, k=kw: fnp.unique(v, axis=ax, size=n, **k))(a)
            _eq(got, expected)
    # JAX: rows padded with fill_value (broadcast against one row)
    rows = np.array([[3, 1], [2, 1], [3, 1]])
    got = fnp.unique(rows, axis=0, size=3, fill_value=np.array([5, 6]))
    _eq(got, np.array([[2, 1], [3, 1], [5, 6]]))
    # as NumPy (unlike JAX): slices holding NaN are never equal; -0.0 equals 0.0
    nan_rows = np.array([[NAN, 1.0], [NAN, 1.0], [-0.0, 2.0], [0.0, 2.0]])
    expected = np.unique(nan_rows, axis=0)
    assert expected.shape == (3, 2)
    _eq(staged(lambda v: fnp.unique(v, axis=0, size=3))(nan_rows), expected)


def test_unique_array_api_functions() -> None:
    x = np.array([[2.0, 1.0], [2.0, NAN], [NAN, 1.0]])
    res = fnp.unique_all(x)
    assert type(res).__name__ == "UniqueAllResult"
    assert res._fields == ("values", "indices", "inverse_indices", "counts")
    ref = np.unique_all(x)
    for f in res._fields:
        _eq(getattr(res, f), getattr(ref, f))
    _eq(tuple(fnp.unique_counts(x)), tuple(np.unique_counts(x)))
    _eq(tuple(fnp.unique_inverse(x)), tuple(np.unique_inverse(x)))
    # sorted, also where NumPy 2.4 returns hash order for integers
    ints = np.array([3, 1, 2, 1, 5, 3, -1, 10, 7])
    _eq(fnp.unique_values(ints), np.unique(ints))
    # JAX: unique_all with size (NaNs distinct)
    y = np.array([2.0, 1.0, 2.0, NAN, NAN])
    got = ft.jit(lambda v: tuple(fnp.unique_all(v, size=5)))(y)
    jax = (
        np.array([1.0, 2.0, NAN, NAN, 1.0]),
        np.array([1, 0, 3, 4, 1]),
        np.array([1, 0, 1, 2, 3]),
        np.array([1, 2, 1, 1, 0]),
    )
    _eq(got, jax)
    out = fnp.unique_counts(fnp.asarray([2, 1, 2]))
    assert type(out.values) is ft.Array and type(out.counts) is ft.Array


def test_unique_under_transforms() -> None:
    x = np.array([2.0, 1.0, 2.0, 5.0])
    # the gradient of a value goes to its first occurrence; padding to the smallest
    _eq(ft.grad(lambda v: fnp.unique(v, size=3).sum())(x), np.array([1.0, 1.0, 0.0, 1.0]))
    _eq(ft.grad(lambda v: fnp.unique(v, size=5).sum())(x), np.array([1.0, 3.0, 0.0, 1.0]))
    # under eager grad the values are known: size=None works (JAX gives zeros here)
    _eq(ft.grad(lambda v: (fnp.unique(v) ** 2).sum())(x), np.array([4.0, 2.0, 0.0, 10.0]))
    _eq(ft.jit(ft.grad(lambda v: fnp.unique(v, size=3).sum()))(x), np.array([1.0, 1, 0, 1]))
    batch = np.array([[1.0, 1.0, 2.0], [3.0, 2.0, 1.0]])
    got = ft.vmap(lambda v: fnp.unique(v, size=3, return_counts=True))(batch)
    _eq(got, (np.array([[1.0, 2.0, 1.0], [1.0, 2.0, 3.0]]), np.array([[2, 1, 0], [1, 1, 1]])))
    with pytest.raises(ConcretizationError, match="unique: expected size="):
        ft.jit(fnp.unique)(x)
    with pytest.raises(ConcretizationError, match="pass size=n"):
        ft.vmap(fnp.unique)(batch)


# ---------------------------------------------------------------------------
# isin and the 1-d set operations
# ---------------------------------------------------------------------------

PAIRS = [
    (np.array([3.0, 1.0, 2.0, 1.0, 7.0]), np.array([1.0, 5.0, 3.0, 3.0])),
    (np.array([4, 1, 3, 1]), np.array([3, 1, 7])),
    (np.array([[1, 5], [2, 3]]), np.array([3, 5, 5])),
    (np.array([NAN, 1.0, NAN, 2.0]), np.array([NAN, 1.0])),
    (np.array([], np.float64), np.array([1.0, 2.0])),
    (np.array([1.0, 2.0]), np.array([], np.float64)),
    (np.array([1, 2, 3], np.int32), np.array([1.5, 2.0, 3.0], np.float32)),
    (np.array([True, False]), np.array([True])),
    (np.array([-0.0, 4.0]), np.array([0.0])),
]


def _setops(a, b):
    return {
        "intersect1d": lambda **k: np.intersect1d(a, b, **k),
        "union1d": lambda **k: np.union1d(a, b),
        "setdiff1d": lambda **k: np.setdiff1d(a, b, **k),
        "setxor1d": lambda **k: np.setxor1d(a, b, **k),
    }


@pytest.mark.parametrize("a,b", PAIRS, ids=range(len(PAIRS)))
def test_setops_eager_and_traced_match_numpy(a, b) -> None:
    for name, ref in _setops(a, b).items():
        fn = getattr(fnp, name)
        kws = [dict()] if name == "union1d" else [dict(), dict(assume_unique=True)]
        for kw in kws:
            if kw and len(np.unique(a)) != a.size:
                continue  # assume_unique with repeats: see the next test
            expected = ref(**kw)
            _eq(fn(a, b, **kw), expected)
            n = len(expected)
            _eq(staged(lambda x, y, k=kw, f=fn, m=n: f(x, y, size=m, **k))(a, b), expected)
    for kw in (dict(), dict(assume_unique=True)):
        expected = np.intersect1d(a, b, return_indices=True, **kw)
        if kw and (len(np.unique(a)) != a.size or len(np.unique(b)) != b.size):
            continue
        _eq(fnp.intersect1d(a, b, return_indices=True, **kw), expected)
        n = len(expected[0])
        got = staged(
            lambda x, y, m=n, k=kw: fnp.intersect1d(x, y, return_indices=True, size=m, **k)
        )(a, b)
        _eq(got, expected)
    _eq(fnp.isin(a, b), np.isin(a, b))
    _eq(staged(lambda x, y: fnp.isin(x, y, invert=True))(a, b), np.isin(a, b, invert=True))


def test_assume_unique_with_repeats_follows_numpy() -> None:
    a, b = np.array([1, 1, 2]), np.array([1, 3])
    expected = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    _eq(expected, (np.array([1, 1]), np.array([0, 1]), np.array([-2, 0])))
    got = staged(lambda x, y: fnp.intersect1d(x, y, True, True, size=2))(a, b)
    _eq(got, expected)
    a2 = np.array([3, 1, 3, 5])
    _eq(staged(lambda x: fnp.setdiff1d(x, [1], True, size=3))(a2), np.array([3, 3, 5]))
    a3, b3 = np.array([1, 1, 2]), np.array([2, 3])
    _eq(staged(lambda x, y: fnp.setxor1d(x, y, True, size=1))(a3, b3), np.setxor1d(a3, b3, True))


def test_setops_size_as_jax() -> None:
    a, b = np.array([3.0, 1.0, 2.0, 1.0, 7.0]), np.array([1.0, 5.0, 3.0, 3.0])
    # JAX's values for size=4/8/5
    _eq(
        fnp.intersect1d(a, b, size=4, return_indices=True),
        (np.array([1.0, 3.0, 1.0, 1.0]), np.array([1, 0, 5, 5]), np.array([0, 2, 4, 4])),
    )
    _eq(fnp.intersect1d(a, b, size=4, fill_value=-1), np.array([1.0, 3.0, -1.0, -1.0]))
    _eq(fnp.intersect1d(a, b, size=1), np.array([1.0]))
    _eq(
        fnp.intersect1d(np.array([4.0, 2.0]), np.array([1.0, 5.0]), size=2, return_indices=True),
        (np.zeros(2), np.array([2, 2]), np.array([2, 2])),
    )
    _eq(fnp.union1d(a, b, size=8), np.array([1.0, 2.0, 3.0, 5.0, 7.0, 1.0, 1.0, 1.0]))
    _eq(fnp.union1d(a, b, size=8, fill_value=0), np.array([1.0, 2, 3, 5, 7, 0, 0, 0]))
    _eq(fnp.setdiff1d(a, b, size=4), np.array([2.0, 7.0, 0.0, 0.0]))
    _eq(fnp.setdiff1d(a, b, size=4, fill_value=-1), np.array([2.0, 7.0, -1.0, -1.0]))
    _eq(fnp.setxor1d(a, b, size=5), np.array([2.0, 5.0, 7.0, 2.0, 2.0]))
    _eq(fnp.setxor1d([1.0], [1.0], size=2), np.zeros(2))
    _eq(fnp.setxor1d([1.0], [1.0], size=2, fill_value=3), np.array([3.0, 3.0]))
    with pytest.raises(ValueError, match="union1d: expected fill_value="):
        fnp.union1d(np.array([]), np.array([]), size=2)


def test_setops_under_transforms() -> None:
    b = np.array([3.0, 5.0, 8.0])
    x = np.array([0.0, 5.0, 3.0, 3.0])
    # JAX's gradients: to the first occurrence in ar1; padding to the smallest result
    _eq(ft.grad(lambda v: fnp.intersect1d(v, b, size=4).sum())(x), np.array([0.0, 1, 3, 0]))
    _eq(ft.grad(lambda v: fnp.intersect1d(v, b).sum())(x), np.array([0.0, 1, 1, 0]))
    c = np.array([-1.0, 5.0, 8.0])
    _eq(ft.grad(lambda v: fnp.setxor1d(v, c, size=5).sum())(x), np.array([1.0, 0, 1, 0]))
    _eq(ft.grad(lambda v: fnp.setdiff1d(v, c, size=5).sum())(x), np.array([1.0, 0, 1, 0]))
    _eq(ft.grad(lambda v: fnp.union1d(v, c, size=6).sum())(x), np.array([1.0, 1, 1, 0]))
    got = ft.jit(lambda u, v: fnp.union1d(u, v, size=3))(x, c)
    _eq(got, np.array([-1.0, 0.0, 3.0]))
    batch = np.array([[1.0, 2.0, 3.0], [3.0, 3.0, 9.0]])
    got = ft.vmap(lambda u: fnp.setdiff1d(u, np.array([3.0]), size=2))(batch)
    _eq(got, np.array([[1.0, 2.0], [9.0, 0.0]]))
    _eq(ft.vmap(lambda u: fnp.isin(u, np.array([3.0, 9.0])))(batch), np.isin(batch, [3, 9]))
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        with pytest.raises(ConcretizationError, match=f"{name}: expected size="):
            ft.jit(getattr(fnp, name))(x, c)


# ---------------------------------------------------------------------------
# lexsort
# ---------------------------------------------------------------------------


def test_lexsort() -> None:
    a, b = RNG.integers(0, 3, 9), RNG.integers(0, 2, 9)
    f = RNG.normal(size=9)
    f[[1, 4]] = NAN
    cases = [
        ([a, b], -1),
        ((f, b), -1),
        (np.stack([a, b]), -1),
        ([a.reshape(3, 3), b.reshape(3, 3)], 0),
        ([a.reshape(3, 3), f.reshape(3, 3)], 1),
        ([np.array([True, False, True]), np.array([1.5, 1.5, 0.5])], -1),
    ]
    for keys, axis in cases:
        expected = np.lexsort(keys, axis=axis)
        _eq(fnp.lexsort(keys, axis=axis), expected)
        args = list(keys) if isinstance(keys, (list, tuple)) else [keys]
        pack = (lambda *k: list(k)) if isinstance(keys, (list, tuple)) else (lambda k: k)
        _eq(staged(lambda *k, p=pack, ax=axis: fnp.lexsort(p(*k), axis=ax))(*args), expected)
    _eq(fnp.lexsort([np.array(1.0)]), np.lexsort([np.array(1.0)]))
    batch = np.array([[2, 1, 2], [1, 2, 1]])
    expected = np.stack([np.lexsort([k, -k]) for k in batch])
    _eq(ft.vmap(lambda k: fnp.lexsort([k, -k]))(batch), expected)


# ---------------------------------------------------------------------------
# bincount, digitize
# ---------------------------------------------------------------------------


def test_bincount() -> None:
    x = np.array([0, 1, 1, 3, 7])
    w = np.array([0.5, 1.0, 2.0, 4.0, 8.0], np.float32)
    cases = [(x, None, 0), (x, w, 0), (x, None, 10), (np.array([], np.int64), None, 3)]
    cases += [(np.array([True, False, True]), None, 0), (x.astype(np.uint8), w, 2)]
    for v, ww, ml in cases:
        expected = np.bincount(v, ww, ml)
        _eq(fnp.bincount(v, ww, ml), expected)
        n = len(expected)
        if ww is None:
            _eq(staged(lambda a, m=ml, k=n: fnp.bincount(a, minlength=m, length=k))(v), expected)
        else:
            _eq(staged(lambda a, c, m=ml, k=n: fnp.bincount(a, c, m, length=k))(v, ww), expected)
    # JAX: length cuts (larger values are dropped); abstract negatives count in bin 0
    _eq(fnp.bincount(x, minlength=9, length=3), np.array([1, 2, 0]))
    got = ft.jit(lambda a: fnp.bincount(a, length=4))(np.array([-1, 1, 1, 3, 7]))
    _eq(got, np.array([1, 2, 0, 1]))
    grad = ft.grad(lambda c: fnp.bincount(x, c, length=4)[1])(np.ones(5))
    _eq(grad, np.array([0.0, 1.0, 1.0, 0.0, 0.0]))
    batch = np.array([[0, 1], [3, 3]])
    _eq(ft.vmap(lambda a: fnp.bincount(a, length=4))(batch), np.array([[1, 1, 0, 0], [0, 0, 0, 2]]))


@pytest.mark.parametrize(
    "bins",
    [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0], [2.0, 2.0, 1.0], [1.0], []],
    ids=str,
)
def test_digitize(bins) -> None:
    bins = np.array(bins)
    x = np.array([0.5, 1.0, 2.5, NAN, 4.0, 3.0, 2.0, -np.inf])
    for right in (False, True):
        expected = np.digitize(x, bins, right)
        _eq(fnp.digitize(x, bins, right), expected)
        # abstract bins: the direction is chosen at run time
        _eq(staged(lambda v, b, r=right: fnp.digitize(v, b, r))(x, bins), expected)
        _eq(staged(lambda v, r=right: fnp.digitize(v, bins, r))(x), expected)
    _eq(fnp.digitize(np.array([1, 2]), np.array([1.5, 2.0])), np.array([0, 2]))
    _eq(ft.grad(lambda v: fnp.digitize(v, bins).astype(float).sum())(x[:3]), np.zeros(3))


# ---------------------------------------------------------------------------
# histograms
# ---------------------------------------------------------------------------

A32 = np.array([0.5, 1.2, 2.2, 2.9, 3.0, -1.0, 7.0], np.float32)
HIST_KWS = [
    dict(bins=4),
    dict(bins=4, range=(0, 3)),
    dict(bins=4, range=(np.float64(0), 3)),
    dict(bins=np.array([0.0, 1.0, 2.0])),
    dict(bins=[0, 1, 1, 3]),
    dict(bins=4, density=True),
    dict(bins=4, density=True, weights=np.arange(7, dtype=np.float32)),
    dict(bins=3, weights=np.ones(7, bool)),
    dict(bins=3, weights=np.arange(7)),
    dict(bins=[-1.0, 0.0, 3.0, 7.0], weights=np.arange(7.0), density=True),
]


@pytest.mark.parametrize("kw", HIST_KWS, ids=range(len(HIST_KWS)))
def test_histogram(kw) -> None:
    flat_only = "weights" in kw  # NumPy wants weights of the shape of a
    for a in (A32, A32.astype(np.int64), A32.astype(np.float64), A32.reshape(7, 1))[
        : 3 if flat_only else 4
    ]:
        expected = np.histogram(a, **kw)
        _eq(fnp.histogram(a, **kw), expected)
        _eq(staged(lambda v: fnp.histogram(v, **kw))(a), expected, exact=False)
        edges = np.histogram_bin_edges(a, kw["bins"], kw.get("range"))
        _eq(staged(lambda v: fnp.histogram_bin_edges(v, kw["bins"], kw.get("range")))(a), edges)


def test_histogram_random_data_is_bit_exact() -> None:
    for _ in range(5):
        a = RNG.normal(size=40)
        _eq(staged(lambda v: fnp.histogram(v, 7))(a), np.histogram(a, 7))
        b = a.astype(np.float32)
        expected = np.histogram(b, 6, range=(-1, 1.3))
        _eq(staged(lambda v: fnp.histogram(v, 6, range=(-1, 1.3)))(b), expected)


def test_histogram_edge_cases_and_transforms() -> None:
    for a, kw in (
        (np.array([]), dict(bins=3)),
        (np.array([1.0, 1.0]), dict(bins=2)),
        (np.array([NAN, 1.0]), dict(bins=3, range=(0, 2))),
    ):
        _eq(staged(lambda v, k=kw: fnp.histogram(v, **k))(a), np.histogram(a, **kw))
    # string bins need known values: fine under eager grad
    d = np.array([1.0, 2.0, 3.0, 4.0, 9.0])
    _eq(fnp.histogram(d, "fd"), np.histogram(d, "fd"))
    got = ft.grad(lambda v: fnp.histogram(v, "auto", range=(0, 10))[1].sum())(d)
    _eq(got, np.zeros(5))
    # JAX's gradients: weights, and the data through the automatic edges and density
    a = A32.astype(np.float64)
    _eq(
        ft.grad(lambda w: fnp.histogram(a, 4, weights=w)[0][1])(np.ones(7)),
        np.array([0.0, 1, 1, 1, 0, 0, 0]),
    )
    _eq(ft.grad(lambda v: fnp.histogram(v, 4)[1][1])(a), np.array([0.0, 0, 0, 0, 0, 0.75, 0.25]))
    got = ft.grad(lambda v: fnp.histogram(v, 4, density=True)[0][1])(a)
    np.testing.assert_allclose(got, [0, 0, 0, 0, 0, 0.026785714, -0.026785714], atol=1e-8)
    got = ft.vmap(lambda v: fnp.histogram(v, 2, range=(0, 2))[0])(
        np.array([[0.5, 1.5], [0.2, 0.3]])
    )
    _eq(got, np.array([[1, 1], [2, 0]]))
    _eq(ft.jit(lambda v: fnp.histogram(v, 4))(A32), np.histogram(A32, 4))


def _flat(res):
    """(hist, edges...) of histogramdd's (hist, [edges]): a staged result's layout."""
    return (res[0], *res[1])


def test_histogramdd_and_histogram2d() -> None:
    samp = np.array([[1.0, 2], [3, 4], [1.5, 7], [2, 2]])
    kws = [
        dict(bins=2),
        dict(bins=[2, 3]),
        dict(bins=2, density=True),
        dict(bins=2, range=[None, (0, 10)]),
        dict(bins=[np.array([0.0, 2, 4]), 2], weights=np.arange(4.0)),
        dict(bins=3, weights=np.arange(4, dtype=np.float32)),
    ]
    for kw in kws:
        for s in (samp, samp.astype(np.float32), samp.astype(np.int64)):
            expected = np.histogramdd(s, **kw)
            _eq(fnp.histogramdd(s, **kw), expected)
            flat = (expected[0], *expected[1])
            _eq(staged(lambda v, k=kw: fnp.histogramdd(v, **k))(s), flat, exact=False)
            expected = np.histogram2d(s[:, 0], s[:, 1], **kw)
            _eq(staged(lambda x, y, k=kw: fnp.histogram2d(x, y, **k))(s[:, 0], s[:, 1]), expected)
    one = np.array([1.0, 2.0, 3.0])
    _eq(staged(lambda v: fnp.histogramdd(v, 3))(one), _flat(np.histogramdd(one, 3)))
    ints = np.array([1, 2, 3])
    expected = _flat(np.histogramdd((ints, one), 2))
    _eq(staged(lambda u, v: fnp.histogramdd((u, v), 2))(ints, one), expected)
    _eq(
        staged(lambda v: fnp.histogramdd(v, 2))(np.zeros((0, 2))),
        _flat(np.histogramdd(np.zeros((0, 2)), 2)),
    )
    edges = np.array([0.0, 1, 2, 5])
    expected = np.histogram2d(samp[:, 0], samp[:, 1], bins=edges)
    _eq(staged(lambda x, y: fnp.histogram2d(x, y, bins=edges))(samp[:, 0], samp[:, 1]), expected)
    w = np.ones(4)
    grad = ft.grad(lambda c: fnp.histogram2d(samp[:, 0], samp[:, 1], 2, weights=c)[0][0, 0])(w)
    _eq(grad, np.array([1.0, 0.0, 0.0, 0.0]))  # (2, 2) is in x-bin 1


# ---------------------------------------------------------------------------
# interp
# ---------------------------------------------------------------------------

XP = np.array([0.0, 1.0, 3.0])
FP = np.array([0.0, 2.0, 3.0])


def test_interp_values_match_numpy() -> None:
    xq = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0, NAN, np.inf, -np.inf])
    cases = [
        (xq, XP, FP, {}),
        (xq, XP, FP, dict(left=-5, right=7.0)),
        (np.array([0.0, 0.5, 1.0, 2]), np.array([0.0, 1, 2]), np.array([1.0, np.inf, 3]), {}),
        (np.array([0.0, 1, 2, NAN]), np.array([1.0]), np.array([5.0]), {}),
        (np.array([1.0, 1.5, 2.0]), np.array([0.0, 1, 1, 2]), np.array([0.0, 1, 5, 6]), {}),
        (np.array([1.0, 2.0]), np.array([0.0, 1, 2, 2]), np.array([0.0, 1, 5, 6]), {}),
        (np.array([-1.0, 0.5, 4, 7]), np.array([1.0, 3, 0]), np.array([2.0, 3, 0]), dict(period=4)),
        (np.array([[1.5, 3]]), np.array([1, 2]), np.array([1, 2]), {}),
        (np.float32(0.5), XP.astype(np.float32), FP, {}),
    ]
    for x, xp, fp, kw in cases:
        expected = np.interp(x, xp, fp, **kw)
        _eq(fnp.interp(x, xp, fp, **kw), expected)
        _eq(staged(lambda a, b, c, k=kw: fnp.interp(a, b, c, **k))(x, xp, fp), expected)
    for _ in range(10):
        xp = np.sort(RNG.normal(size=6))
        fp, x = RNG.normal(size=6), RNG.normal(size=30) * 2
        _eq(staged(fnp.interp)(x, xp, fp), np.interp(x, xp, fp))
    z = np.array([1j, 2.0])
    _eq(fnp.interp(np.array([0.5]), np.array([0.0, 1.0]), z), np.array([1.0 + 0.5j]))


def test_interp_derivatives_follow_jax() -> None:
    xq = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0])
    # JAX: the slope on the right of a knot, the last slope at the last knot
    got = ft.vmap(ft.grad(lambda x: fnp.interp(x, XP, FP)))(xq)
    _eq(got, np.array([0.0, 2.0, 2.0, 0.5, 0.5, 0.5, 0.0]))
    got = ft.jacrev(lambda fp: fnp.interp(np.array([-1.0, 0.0, 1.0, 3.0, 4.0]), XP, fp))(FP)
    expected = np.array([[1.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    _eq(got, expected)
    got = ft.jacrev(lambda xp: fnp.interp(np.array([0.5, 1.0, 2.0]), xp, FP))(XP)
    _eq(got, np.array([[-1.0, -1.0, 0.0], [0.0, -0.5, 0.0], [0.0, -0.25, -0.25]]))
    got = ft.jit(ft.grad(lambda x: fnp.interp(x, XP, FP).sum()))(xq)
    _eq(got, np.array([0.0, 2.0, 2.0, 0.5, 0.5, 0.5, 0.0]))
    second = ft.grad(ft.grad(lambda x: fnp.interp(x, XP, FP)))(0.5)
    _eq(second, np.float64(0.0))
    ext = fnp.interp(
        np.array([-1.0, 9.0]),
        np.array([1.0, 2.0]),
        np.array([1.0, 2.0]),
        left="extrapolate",
        right="extrapolate",
    )
    _eq(ext, np.array([-1.0, 9.0]))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

ERRORS = [
    (lambda: fnp.unique(np.ones(3), axis=1), ValueError, "unique: expected axis"),
    (lambda: fnp.unique(np.ones(3), size=-1), ValueError, "unique: expected a non-negative size"),
    (lambda: fnp.unique(np.ones(3), size=2.5), TypeError, "unique: expected size=None"),
    (
        lambda: fnp.unique(np.ones((3, 2)), axis=0, size=3, fill_value=[1, 2, 3]),
        ValueError,
        "unique: expected a fill_value that broadcasts",
    ),
    (lambda: fnp.isin(np.ones(3), [1], kind="x"), ValueError, "isin: expected kind"),
    (lambda: fnp.lexsort([]), TypeError, "lexsort: expected a non-empty sequence"),
    (lambda: fnp.lexsort([np.ones(2), np.ones(3)]), ValueError, "lexsort: expected keys of one"),
    (lambda: fnp.lexsort([np.ones(2)], axis=3), ValueError, "lexsort: expected axis"),
    (lambda: fnp.bincount(np.array([-1])), ValueError, "bincount: expected non-negative"),
    (lambda: fnp.bincount(np.array([1.0])), TypeError, "bincount: expected an integer array"),
    (lambda: fnp.bincount(np.array([[1]])), ValueError, "bincount: expected a 1-d array"),
    (lambda: fnp.bincount(np.ones(2, int), minlength=-1), ValueError, "non-negative minlength"),
    (lambda: fnp.bincount(np.ones(2, int), np.ones(3)), ValueError, "bincount: expected weights"),
    (lambda: ft.jit(fnp.bincount)(np.ones(2, int)), ConcretizationError, "expected length="),
    (lambda: fnp.digitize(np.ones(3), [1, 3, 2]), ValueError, "digitize: expected bins that"),
    (lambda: fnp.digitize(np.ones(3) * 1j, [1, 3]), TypeError, "digitize: expected real x"),
    (lambda: fnp.digitize(np.ones(3), [[1, 3]]), ValueError, "digitize: expected 1-d bins"),
    (lambda: fnp.histogram(np.ones(3), 3, range=(2, 1)), ValueError, "histogram: expected range"),
    (lambda: fnp.histogram(np.array([NAN, 1.0])), ValueError, "histogram: expected finite data"),
    (lambda: fnp.histogram(np.ones(3), 0), ValueError, "positive number of bins"),
    (lambda: fnp.histogram(np.ones(3), 2.5), TypeError, "histogram: expected bins as an int"),
    (lambda: fnp.histogram(np.ones(3), [0, 2, 1]), ValueError, "increase monotonically"),
    (lambda: fnp.histogram(np.ones(3), [[0, 2]]), ValueError, "1-d array of edges"),
    (lambda: fnp.histogram(np.ones(3), 3, weights=np.ones(2)), ValueError, "expected weights"),
    (lambda: fnp.histogram(np.ones(3), "auto", weights=np.ones(3)), TypeError, "weights=None"),
    (lambda: fnp.histogram(np.ones(3), "autox"), ValueError, "histogram: expected bins an int"),
    (
        lambda: ft.jit(lambda a: fnp.histogram(a, "auto"))(np.ones(3)),
        ConcretizationError,
        "known values",
    ),
    (lambda: ft.jit(fnp.histogram)(np.ones(3), 3), ConcretizationError, "static number of bins"),
    (lambda: fnp.histogramdd(np.ones((3, 2)), [2, 2, 2]), ValueError, "one bins entry per"),
    (lambda: fnp.histogramdd(np.ones((3, 2)), 2, range=[(0, 1)]), ValueError, "one range entry"),
    (lambda: fnp.histogramdd(np.ones((3, 2, 2))), ValueError, "histogramdd: expected a (N, D)"),
    (lambda: fnp.histogram2d(np.ones(3), np.ones(2)), ValueError, "histogram2d: expected 1-d x"),
    (lambda: fnp.interp(np.ones(3), [], []), ValueError, "interp: expected at least one"),
    (lambda: fnp.interp(np.ones(3), [1, 2], [1]), ValueError, "interp: expected xp and fp of"),
    (lambda: fnp.interp(np.ones(3), [[1, 2]], [[1, 2]]), ValueError, "interp: expected 1-d"),
    (lambda: fnp.interp(np.ones(3), [1, 2], [1, 2], period=0), ValueError, "non-zero period"),
    (lambda: fnp.interp(np.ones(3), [1, 2], [1, 2], left=[1, 2]), TypeError, "scalar left"),
    (lambda: fnp.interp(np.ones(3) * 1j, [1, 2], [1, 2]), TypeError, "interp: expected real x"),
    (lambda: fnp.interp(np.ones(3), [1, 2], [1, 2], left="x"), ValueError, "'extrapolate'"),
    (
        lambda: ft.jit(lambda x: fnp.interp(x, np.array([1.0, 2]), np.array([1j, 2])))(np.ones(3)),
        TypeError,
        "interp: expected real fp on traced",
    ),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=range(len(ERRORS)))
def test_errors_name_the_function(call, exc, match) -> None:
    with pytest.raises(exc, match=match.replace("(", r"\(").replace(")", r"\)")):
        call()
