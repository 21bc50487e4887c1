"""Array manipulation and function application in functrace.numpy: choose, compress,
extract, delete, insert, place, put, put_along_axis, resize, trim_zeros, block,
vectorize, apply_along_axis, apply_over_axes, piecewise, the window functions and
einsum_path.

Eager results are compared with NumPy (values, dtypes, edge cases, errors); traced
results (``make_jaxpr`` evaluation, ``jit``) with the eager ones; gradients with finite
differences (``check_grads``); and ``jit(vmap(grad(f)))`` with a loop of ``grad``.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import ConcretizationError
from functrace.ir import eval_jaxpr

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(0)
X23 = np.arange(6.0).reshape(2, 3)


def same(actual, expected, rtol=1e-12, atol=1e-12):
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    assert a.dtype == e.dtype, (a.dtype, e.dtype)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(a, e)


def staged(f, *args):
    """``f(*args)`` traced with abstract values (as under jit), then evaluated."""
    closed = ft.make_jaxpr(f)(*args)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, list(args))
    return outs[0] if len(outs) == 1 else tuple(outs)


def loop_grads(g, *batched):
    return np.stack([np.asarray(g(*ex)) for ex in zip(*batched)])


# ---------------------------------------------------------------------------
# choose
# ---------------------------------------------------------------------------

CHOICES = [np.array([1.0, 2.0, 3.0]), np.array([[10.0], [20.0]]), 7.5]


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy_eager_and_traced(mode):
    idx = (
        np.array([[0, 2, 1], [2, 1, 0]]) if mode == "raise" else np.array([[-1, 5, 1], [2, -4, 0]])
    )
    expected = np.choose(idx, CHOICES, mode=mode)
    same(fnp.choose(idx, CHOICES, mode=mode), expected)
    same(
        staged(lambda i, a: fnp.choose(i, [a, *CHOICES[1:]], mode=mode), idx, CHOICES[0]), expected
    )
    same(ft.jit(lambda i: fnp.choose(i, CHOICES, mode=mode))(idx), expected)


def test_choose_dtypes_bool_index_and_array_of_choices():
    f32 = np.array([1.0, 2.0], np.float32)
    for args in [([0, 1], [f32, 2.5]), ([True, False], [[1, 2], [3, 4]]), (1, [3, 4])]:
        expected = np.choose(*args)
        same(fnp.choose(*args), expected)
        same(staged(lambda i, c=args[1]: fnp.choose(i, c), np.asarray(args[0])), expected)
    stacked = np.arange(4.0).reshape(2, 2)
    idx = np.array([[0, 1], [1, 0]])
    same(staged(lambda c: fnp.choose(idx, c), stacked), np.choose(idx, stacked))


def test_choose_errors():
    with pytest.raises(ValueError, match="invalid entry"):  # NumPy's own error
        fnp.choose([0, 2], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="choose: expected indices in"):  # known tracer
        ft.grad(lambda a: fnp.sum(fnp.choose(np.array([0, 2]), [a, a])))(np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        staged(lambda a: fnp.choose(np.array([0]), [a], mode="bad"), np.ones(1))
    with pytest.raises(TypeError, match="choose: expected an integer"):
        staged(lambda a: fnp.choose(np.array([0.0]), [a]), np.ones(1))
    with pytest.raises(ValueError, match="at least one choice"):
        staged(lambda i: fnp.choose(i, []), np.array([0]))
    # abstract indices cannot be checked under jit: clamped, as take does
    same(ft.jit(lambda i: fnp.choose(i, [[1, 2], [3, 4]]))(np.array([5, -3])), np.array([3, 2]))


def test_choose_gradient():
    i = np.array([[0, 2, 1], [1, 1, 0]])
    a, b, c = RNG.normal(size=(3, 2, 3))
    ft.check_grads(lambda a, b, c: fnp.choose(i, [a * b, b, fnp.sin(c)]), (a, b, c), order=2)
    g = ft.grad(lambda a, b: fnp.sum(fnp.choose(i, [a, b, 2 * a]) ** 2), argnums=(0, 1))(a, b)
    sel = [i == 0, i == 1, i == 2]
    same(g[0], 2 * a * sel[0] + 8 * a * sel[2])
    same(g[1], 2 * b * sel[1])


# ---------------------------------------------------------------------------
# compress, extract
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cond,axis",
    [([True, False, True], 1), ([0, 1, 1], None), ([1], 0), ([0, 1, 0, 0, 0, 0, 0], None), ([], 1)],
)
def test_compress_matches_numpy(cond, axis):
    expected = np.compress(cond, X23, axis=axis)
    same(fnp.compress(cond, X23, axis=axis), expected)
    same(staged(lambda x: fnp.compress(cond, x, axis=axis), X23), expected)


@pytest.mark.parametrize("size", [0, 2, 3, 5])
def test_compress_size_pads_and_truncates_eager_and_traced(size):
    cond = np.array([True, False, True])
    got = np.compress(cond, X23, axis=1)[:, :size]
    pad = np.full((2, size - got.shape[1]), -1.0)
    expected = np.concatenate([got, pad], axis=1)
    same(fnp.compress(cond, X23, axis=1, size=size, fill_value=-1), expected)
    same(staged(lambda c, x: fnp.compress(c, x, 1, size=size, fill_value=-1), cond, X23), expected)
    if size == 2:
        same(ft.jit(lambda c: fnp.compress(c, X23, 1, size=size, fill_value=-1))(cond), expected)


def test_compress_fill_value_takes_the_array_dtype():
    out = staged(
        lambda c: fnp.compress(c, np.arange(3), size=3, fill_value=-1.7), np.array([1, 0, 1])
    )
    same(out, np.array([0, 2, -1]))


def test_compress_errors():
    with pytest.raises(ValueError, match="compress: expected a 1-d condition"):
        staged(lambda x: fnp.compress(np.ones((1, 1), bool), x), X23)
    with pytest.raises(ConcretizationError, match="pass size=n"):
        staged(lambda c: fnp.compress(c, X23, axis=1), np.array([True, False, True]))
    with pytest.raises(IndexError, match="out of bounds"):
        staged(lambda x: fnp.compress([0, 0, 0, 1], x, axis=1), X23)
    # extra False entries beyond the axis are fine, as in NumPy
    same(staged(lambda x: fnp.compress([0, 1, 0, 0], x, axis=1), X23), X23[:, 1:2])
    with pytest.raises(ValueError, match="non-negative size"):
        fnp.compress([1, 0], [1, 2], size=-1)


def test_extract_matches_numpy_and_sized_form():
    cond = np.array([[1, 0, 2], [0, 0, 1]])
    same(fnp.extract(cond, X23), np.extract(cond, X23))
    same(fnp.extract([1, 0, 1], X23), np.extract([1, 0, 1], X23))  # shorter condition
    same(staged(lambda c, x: fnp.extract(c, x, size=4, fill_value=9), cond, X23), [0.0, 2, 5, 9])
    same(fnp.extract(cond, X23, size=2), [0.0, 2.0])
    with pytest.raises(IndexError):
        staged(lambda x: fnp.extract(np.ones(7), x), X23)


# ---------------------------------------------------------------------------
# delete, insert
# ---------------------------------------------------------------------------

DELETE_CASES = [
    ([1, 1, -1], None),
    (np.array([[1, 2]]), None),
    (slice(None, None, -2), None),
    (slice(1, 10), 1),
    ([True, False, True], 1),
    ([], 0),
    (0, 0),
    (-1, 1),
    (np.array([], np.int64), None),
]


@pytest.mark.parametrize("obj,axis", DELETE_CASES)
def test_delete_matches_numpy(obj, axis):
    expected = np.delete(X23, obj, axis)
    same(fnp.delete(X23, obj, axis), expected)
    same(staged(lambda x: fnp.delete(x, obj, axis), X23), expected)


def test_delete_traced_indices_need_assume_unique():
    x = np.arange(12.0).reshape(6, 2)
    idx = np.array([4, 0, -3])
    with pytest.raises(ConcretizationError, match="assume_unique_indices=True"):
        staged(lambda x, i: fnp.delete(x, i, 0), x, idx)
    f = lambda x, i: fnp.delete(x, i, 0, assume_unique_indices=True)  # noqa: E731
    same(staged(f, x, idx), np.delete(x, idx, 0))
    same(ft.jit(f)(x, idx), np.delete(x, idx, 0))
    # each example its own indices, under vmap
    idxs = np.array([[4, 0, -3], [1, 2, 3], [5, 4, 0]])
    same(ft.vmap(f, in_axes=(None, 0))(x, idxs), np.stack([np.delete(x, i, 0) for i in idxs]))


def test_delete_errors():
    for obj in ([3], 3, [-4]):
        with pytest.raises(IndexError, match="out of bounds"):
            staged(lambda x, obj=obj: fnp.delete(x, obj, 1), X23)
    with pytest.raises(IndexError, match="integer or boolean"):
        staged(lambda x: fnp.delete(x, [1.0]), X23)
    with pytest.raises(ValueError, match="boolean mask of shape"):
        staged(lambda x: fnp.delete(x, [True, False]), X23)
    with pytest.raises(np.exceptions.AxisError):
        staged(lambda x: fnp.delete(x, 0, axis=2), X23)


X32 = np.arange(6).reshape(3, 2)
INSERT_CASES = [
    (1, 5, 1),
    (1, [7, 8, 9], 1),
    ([1], [7, 8, 9], 1),
    ([1], [[7], [8], [9]], 1),
    (1, [[7], [8], [9]], 1),
    ([1, 1, -1, 2], [10, 20, 30, 40], None),
    ([2, 0], 9, 0),
    (-3, 4, 0),
    (3, [1.7, -2.2], 0),
    ([], 1, None),
    (slice(0, None, 2), [7, 8, 9], None),
    (np.array([True, False, True]), [1, 2], 0),
    (2, [9, 9], None),
    (np.int64(6), -1, None),
]


@pytest.mark.parametrize("obj,values,axis", INSERT_CASES)
def test_insert_matches_numpy(obj, values, axis):
    expected = np.insert(X32, obj, values, axis)
    same(fnp.insert(X32, obj, values, axis), expected)
    same(staged(lambda x: fnp.insert(x, obj, values, axis), X32), expected)
    if (
        isinstance(obj, (int, list))
        and obj
        and not isinstance(obj[0] if isinstance(obj, list) else 0, bool)
    ):
        # the indices traced too (abstract under make_jaxpr)
        same(staged(lambda x, i: fnp.insert(x, i, values, axis), X32, np.asarray(obj)), expected)


def test_insert_traced_indices_under_jit_and_vmap():
    x = np.arange(5.0)
    v = np.array([7.0, 8.0, 9.0, 10.0, 11.0])
    idx = np.array([4, 0, 2, 5, -1])
    f = ft.jit(lambda x, i, v: fnp.insert(x, i, v))
    same(f(x, idx, v), np.insert(x, idx, v))
    idxs = np.array([[4, 0, 2, 5, -1], [0, 0, 0, 0, 0], [5, 3, 1, -5, 2]])
    same(
        ft.vmap(f, in_axes=(None, 0, None))(x, idxs, v),
        np.stack([np.insert(x, i, v) for i in idxs]),
    )


def test_insert_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        staged(lambda x: fnp.insert(x, 4, 0, axis=0), X32)
    with pytest.raises(IndexError, match="out of bounds"):
        staged(lambda x: fnp.insert(x, [-4], 0, axis=0), X32)
    with pytest.raises(ValueError, match="scalar or 1-d index"):
        staged(lambda x: fnp.insert(x, [[1]], 0), X32)
    with pytest.raises(ValueError, match="broadcastable"):
        staged(lambda x: fnp.insert(x, [0, 1], [1, 2, 3], axis=0), X32)
    with pytest.raises(IndexError, match="integer indices"):
        staged(lambda x: fnp.insert(x, np.array([1.0, 2.0]), 0), X32)


def test_delete_insert_gradients():
    x, v, u = RNG.normal(size=(3, 4)), RNG.normal(size=(2, 1)), RNG.normal(size=(3, 2))
    ft.check_grads(lambda x: fnp.delete(x, [0, -1, 0], axis=1) ** 2, (x,), order=2)
    ft.check_grads(lambda x, v: fnp.insert(x, [3, 0], v, axis=0) ** 2, (x, v), order=2)
    i = np.array([2, 0])
    f = ft.jit(lambda x, i, u: fnp.insert(x, i, u, 1))
    ft.check_grads(lambda x, u: f(x, i, u) ** 2, (x, u), order=1)


# ---------------------------------------------------------------------------
# place, put, put_along_axis
# ---------------------------------------------------------------------------


def test_inplace_true_writes_numpy_arrays_like_numpy():
    for fn, np_fn, args in [
        (fnp.place, np.place, (X23 > 1, [10.0, 20.0])),
        (fnp.put, np.put, ([0, 0, -1], [1.0, 2.0, 3.0])),
        (fnp.put_along_axis, np.put_along_axis, (np.array([[1], [0]]), 9.0, 1)),
    ]:
        a, b = X23.copy(), X23.copy()
        assert fn(a, *args) is None
        np_fn(b, *args)
        same(a, b)


def test_inplace_true_refuses_immutable_and_traced_arrays():
    arr = fnp.asarray(X23)  # a functrace.Array: immutable
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.place(arr, arr > 1, [1.0])
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.put([1, 2], [0], [5])
    with pytest.raises(ValueError, match="inplace=False"):
        staged(lambda x: fnp.put_along_axis(x, np.array([[0], [1]]), 1.0, 1), X23)
    with pytest.raises(ValueError, match="inplace=False"):
        ft.grad(lambda x: fnp.sum(fnp.place(x, x > 1, [1.0])))(X23)


def test_place_matches_numpy():
    for mask, vals in [(X23 > 1, [10.0, 20.0]), (X23 > 10, []), (np.ones(6, bool), [1, 2, 3, 4])]:
        expected = X23.copy()
        np.place(expected, mask, vals)
        same(fnp.place(X23, mask, vals, inplace=False), expected)
        if vals:  # an abstract mask needs values to place
            v = np.asarray(vals, float)
            same(staged(lambda x, m, v=v: fnp.place(x, m, v, inplace=False), X23, mask), expected)
    with pytest.raises(ValueError, match="as many entries"):
        staged(lambda x: fnp.place(x, [True], [1.0], inplace=False), X23)
    with pytest.raises(ValueError, match="empty `vals`"):
        staged(lambda x: fnp.place(x, x > 1, np.zeros(0), inplace=False), X23)


@pytest.mark.parametrize(
    "ind,mode",
    [
        ([0, 2, -1, 2], None),
        ([[1, 2]], "raise"),
        ([-7, 9, 1], "wrap"),
        ([-7, 9, 1], "clip"),
        ([], None),
    ],
)
def test_put_matches_numpy(ind, mode):
    v = np.array([10.0, 20.0, 30.0])
    expected = X23.copy()
    np.put(expected, ind, v, mode=mode or "raise")
    same(fnp.put(X23, ind, v, mode, inplace=False), expected)
    same(staged(lambda x, v: fnp.put(x, ind, v, mode, inplace=False), X23, v), expected)
    if ind:
        f = lambda x, i, v: fnp.put(x, i, v, mode, inplace=False)  # noqa: E731
        same(ft.jit(f)(X23, np.array(ind), v), expected)


def test_put_out_of_range_and_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        fnp.put(X23, [6], [1.0], inplace=False)
    with pytest.raises(IndexError, match="out of bounds"):
        staged(lambda x: fnp.put(x, [-7], [1.0], inplace=False), X23)
    with pytest.raises(ValueError, match="mode"):
        fnp.put(X23, [0], [1.0], mode="fill", inplace=False)
    with pytest.raises(TypeError, match="integer index"):
        staged(lambda x: fnp.put(x, np.array([0.5]), [1.0], inplace=False), X23)
    # abstract indices under jit: the update out of range is skipped (as .at does)
    out = ft.jit(lambda i: fnp.put(X23, i, [-1.0, -2.0], inplace=False))(np.array([1, 6]))
    same(out, np.array([[0.0, -1, 2], [3, 4, 5]]))
    same(fnp.put(X23, [0], [], inplace=False), X23)  # empty values: nothing written


def test_put_along_axis_matches_numpy():
    cases = [
        (np.array([[0], [2]]), np.array([[7.0], [8.0]]), 1),
        (np.array([[0, 0]]), np.array([[7.0], [8.0]]), 1),
        (np.array([[-1], [2]]), 9.0, 1),
        (np.array([1, 4]), [5.0, 6.0], None),
        (np.array([[1, 1, 0]]), np.array([[1.0, 2.0, 3.0]]), 0),
    ]
    for idx, vals, axis in cases:
        expected = X23.copy()
        np.put_along_axis(expected, idx, vals, axis)
        same(fnp.put_along_axis(X23, idx, vals, axis, inplace=False), expected)
        same(
            staged(
                lambda x, i, v=vals, a=axis: fnp.put_along_axis(x, i, v, a, inplace=False), X23, idx
            ),
            expected,
        )


def test_put_along_axis_modes_and_errors():
    idx = np.array([[3], [1]])
    with pytest.raises(IndexError, match="out of bounds"):
        fnp.put_along_axis(X23, idx, 1.0, 1, inplace=False)
    clipped = fnp.put_along_axis(X23, idx, -1.0, 1, inplace=False, mode="clip")
    same(clipped, np.array([[0.0, 1, -1], [3, -1, 5]]))
    dropped = staged(lambda i: fnp.put_along_axis(X23, i, -1.0, 1, inplace=False, mode="drop"), idx)
    same(dropped, np.array([[0.0, 1, 2], [3, -1, 5]]))
    with pytest.raises(ValueError, match="as many dimensions"):
        fnp.put_along_axis(X23, np.array([1]), 1.0, 1, inplace=False, mode="clip")
    with pytest.raises(ValueError, match="1-d indices"):
        staged(lambda x: fnp.put_along_axis(x, np.array([[1]]), 1.0, None, inplace=False), X23)
    with pytest.raises(IndexError, match="integer index"):
        staged(lambda x: fnp.put_along_axis(x, np.array([[1.0]]), 1.0, 1, inplace=False), X23)


def test_put_and_place_gradients_last_write_wins():
    x, v = RNG.normal(size=(2, 3)), RNG.normal(size=(3,))
    ft.check_grads(lambda x, v: fnp.put(x, [0, 2, -1, 2], v, inplace=False) ** 2, (x, v), order=2)
    g = ft.grad(lambda v: fnp.sum(fnp.put(x, [1, 1], v, inplace=False)))(np.array([1.0, 2.0]))
    same(g, np.array([0.0, 1.0]))  # the first write to index 1 is overwritten
    m = np.array([[True, False, True], [True, True, False]])
    ft.check_grads(lambda x, v: fnp.place(x, m, v, inplace=False) ** 2, (x, v), order=2)
    i = np.array([[2, 0]])
    ft.check_grads(
        lambda x, u: fnp.put_along_axis(x, i, u, 0, inplace=False) ** 2, (x.T, v[None, :2]), order=2
    )


# ---------------------------------------------------------------------------
# resize, trim_zeros, block
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,shape",
    [
        (np.arange(3), (2, 4)),
        (np.zeros(0), (2,)),
        (np.arange(3), 0),
        (5, 3),
        ([1.5, 2], [3]),
        (X23, ()),
    ],
)
def test_resize_matches_numpy(a, shape):
    expected = np.resize(a, shape)
    same(fnp.resize(a, shape), expected)
    same(staged(lambda a: fnp.resize(a, shape), np.asarray(a)), expected)


def test_resize_gradient_and_errors():
    x = RNG.normal(size=(2, 3))
    g = ft.grad(lambda x: fnp.sum(fnp.resize(x, (4, 4))))(x)
    same(g, np.resize(np.bincount(np.arange(16) % 6, minlength=6).astype(float), (2, 3)))
    ft.check_grads(lambda x: fnp.resize(x, (3, 5)) ** 2, (x,), order=2)
    with pytest.raises(ValueError, match="non-negative"):
        staged(lambda x: fnp.resize(x, (-1, 2)), x)


@pytest.mark.parametrize("trim", ["fb", "f", "b", "B"])
@pytest.mark.parametrize(
    "filt,axis",
    [
        (np.array([0, 0, 1, 2, 0]), None),
        (np.array([0.0, 0.0]), None),
        (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]), None),
        (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]), 1),
        (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]), -2),
        (np.zeros((2, 3)), None),
    ],
)
def test_trim_zeros_matches_numpy(filt, axis, trim):
    expected = np.trim_zeros(filt, trim, axis)
    same(fnp.trim_zeros(filt, trim, axis), expected)
    # under grad the values are known: the result is a slice of the traced input
    seen = []

    def f(x):
        seen.append(fnp.trim_zeros(x, trim, axis).to_concrete_value())
        return fnp.sum(x)

    ft.grad(f)(filt * 1.0)
    same(seen[0], expected.astype(float))


def test_trim_zeros_grad_jit_and_errors():
    x = np.array([0.0, 0.0, 1.0, 2.0, 0.0])
    same(ft.grad(lambda x: fnp.sum(fnp.trim_zeros(x) ** 2))(x), 2 * x)
    with pytest.raises(ConcretizationError, match="trim_zeros"):
        ft.jit(fnp.trim_zeros)(x)
    with pytest.raises(ValueError, match="made of 'f' and 'b'"):
        ft.grad(lambda x: fnp.sum(fnp.trim_zeros(x, "x")))(x)
    with pytest.raises(ValueError, match="made of 'f' and 'b'"):
        ft.grad(lambda x: fnp.sum(fnp.trim_zeros(x, "")))(x)


BLOCKS = [
    lambda a, b: [[a, b], [b, a]],
    lambda a, b: [a[0], b[1], 2.0],
    lambda a, b: [[[a]], [[b]]],
    lambda a, b: [np.float32(1.0), 2],
]


@pytest.mark.parametrize("build", BLOCKS)
def test_block_matches_numpy(build):
    a, b = np.ones((2, 2)), np.zeros((2, 2))
    expected = np.block(build(a, b))
    same(fnp.block(build(a, b)), expected)
    same(staged(lambda a, b: fnp.block(build(a, b)), a, b), expected)


def test_block_errors_and_arrays():
    a = fnp.ones((2, 2))  # functrace.Array leaves nested two deep
    out = fnp.block([[a, a]])
    assert type(out) is ft.Array and out.shape == (2, 4)
    for bad, err, match in [
        ((a,), TypeError, "tuple"),
        ([[a, a], a], ValueError, "one depth"),
        ([], ValueError, "non-empty"),
        ([[]], ValueError, "non-empty"),
    ]:
        with pytest.raises(err, match=match):
            staged(lambda x, bad=bad: fnp.block(bad), np.ones(1))
    with pytest.raises(ValueError):
        staged(lambda x: fnp.block([[x, np.ones((3, 1))]]), np.ones((2, 2)))
    ft.check_grads(
        lambda a, b: fnp.block([[a, b], [b, a]]) ** 2, tuple(RNG.normal(size=(2, 2, 2))), order=2
    )


def test_block_of_nested_lists_of_arrays_matches_numpy():
    plain = [np.full((2, 2), float(i)) for i in range(4)]
    a, b, c, d = (fnp.asarray(x) for x in plain)
    expected = np.block([[plain[0], plain[1]], [plain[2], plain[3]]])
    out = fnp.block([[a, b], [c, d]])
    assert type(out) is ft.Array
    same(out, expected)
    same(fnp.block([[plain[0], plain[1]], [plain[2], plain[3]]]), expected)
    # NumPy's own function on Arrays nested two and three deep (their plain views)
    same(np.block([[a, b], [c, d]]), expected)
    same(np.block([[[a]], [[b]]]), np.block([[[plain[0]]], [[plain[1]]]]))


# ---------------------------------------------------------------------------
# vectorize
# ---------------------------------------------------------------------------


def test_vectorize_elementwise_keywords_excluded_and_none():
    x, y = np.arange(3.0), np.arange(6.0).reshape(2, 3)
    f = fnp.vectorize(lambda a, b: a * fnp.cos(b) + 1)
    same(f(x, y), np.vectorize(lambda a, b: a * np.cos(b) + 1)(x, y))
    same(f(x, b=y), np.vectorize(lambda a, b: a * np.cos(b) + 1)(x, b=y))
    same(f(2.0, 3.0), np.vectorize(lambda a, b: a * np.cos(b) + 1)(2.0, 3.0))
    p = fnp.vectorize(lambda a, p, *, scale: scale * a**p, excluded={1, "scale"})
    same(p(y, 2, scale=3.0), 3.0 * y**2)
    same(fnp.vectorize(lambda a, b: a if b is None else b)(x, None), x)
    same(fnp.vectorize(lambda a: 1)(x), np.ones(3, np.int64))
    same(fnp.vectorize(lambda a: a * 2, otypes="f")(x), (x * 2).astype(np.float32))
    same(fnp.vectorize(lambda a: a * 2)(np.zeros((0, 2))), np.zeros((0, 2)))  # NumPy raises
    tup = fnp.vectorize(lambda a: (a, a * 2))(x)
    assert isinstance(tup, tuple) and len(tup) == 2
    same(tup[1], 2 * x)


def test_vectorize_signatures():
    y, v = RNG.normal(size=(2, 1, 3)), RNG.normal(size=(4, 3))
    dot = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()")
    same(dot(y, v), np.vectorize(lambda a, b: np.sum(a * b), signature="(n),(n)->()")(y, v))
    same(dot(y, b=v), np.einsum("...i,...i", y, v))
    mv = fnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    m = RNG.normal(size=(5, 2, 3))
    same(mv(m, v[0]), np.einsum("bij,j->bi", m, v[0]), rtol=1e-12)
    multi = fnp.vectorize(lambda a: (fnp.sum(a), a * 2), signature=" (n) -> (),(n) ")
    s, d = multi(v)
    same(s, v.sum(1))
    same(d, 2 * v)
    new = fnp.vectorize(lambda a: fnp.ones(4) * fnp.sum(a), signature="(n)->(m)")
    same(new(v), np.ones((4, 4)) * v.sum(1, keepdims=True))
    same(fnp.vectorize(lambda a: fnp.sum(a), signature="(n)->()")(np.arange(3.0)), np.array(3.0))


def test_vectorize_decorator_and_metadata():
    @fnp.vectorize
    def f(a):
        """Square."""
        return a * a

    @fnp.vectorize(signature="(n)->()")
    def g(a):
        return fnp.max(a)

    same(f(np.arange(3.0)), np.arange(3.0) ** 2)
    same(g(X23), X23.max(1))
    assert f.__name__ == "f" and f.__doc__ == "Square." and g.signature == "(n)->()"
    assert fnp.vectorize(lambda a: a, doc="Doc.").__doc__ == "Doc."


def test_vectorize_errors():
    with pytest.raises(ValueError, match="expected a signature"):
        fnp.vectorize(lambda a: a, signature="(n->m)")
    ident = fnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")
    with pytest.raises(TypeError, match="expected 2 vectorized arguments"):
        ident(X23)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        ident(X23, np.ones(2))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fnp.vectorize(lambda a: a, signature="(n,m)->(n,m)")(np.ones(3))
    with pytest.raises(ValueError, match="does not match core dimensions"):
        fnp.vectorize(lambda a: a, signature="(n)->()")(X23)
    with pytest.raises(ValueError, match="expected 2 outputs"):
        fnp.vectorize(lambda a: a, signature="(n)->(),()")(X23)
    with pytest.raises(ValueError, match="shapes that broadcast"):
        fnp.vectorize(lambda a, b: a + b)(np.ones(2), np.ones(3))
    with pytest.raises(ConcretizationError):  # per-example Python control flow
        fnp.vectorize(lambda a: a if a > 0 else -a)(np.array([1.0, -1.0]))


def test_vectorize_traces_differentiates_and_batches():
    f = fnp.vectorize(lambda a, b: fnp.sum(fnp.sin(a) * b), signature="(n),(n)->()")
    a, b = RNG.normal(size=(2, 4, 3))
    same(ft.jit(f)(a, b), np.sum(np.sin(a) * b, axis=1))
    ft.check_grads(f, (a, b), order=2)
    loss = lambda w, a: fnp.sum(f(a, w) ** 2)  # noqa: E731  (w broadcast over the loop)
    batched_a = RNG.normal(size=(3, 4, 3))
    g = ft.jit(ft.vmap(ft.grad(loss), in_axes=(None, 0)))(b[0], batched_a)
    same(g, loop_grads(lambda x: ft.grad(loss)(b[0], x), batched_a), rtol=1e-10)


# ---------------------------------------------------------------------------
# apply_along_axis, apply_over_axes, piecewise
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis_matches_numpy(axis):
    x = RNG.normal(size=(2, 3, 4))
    for f, nf in [
        (lambda v: fnp.sum(v * v), lambda v: np.sum(v * v)),
        (lambda v: fnp.outer(v, v[::-1]), lambda v: np.outer(v, v[::-1])),
        (lambda v: v[0] > 0, lambda v: v[0] > 0),
        (lambda v, k=1: v * k, lambda v, k=1: v * k),
    ]:
        expected = np.apply_along_axis(nf, axis, x)
        same(fnp.apply_along_axis(f, axis, x), expected)
        same(staged(lambda x, f=f: fnp.apply_along_axis(f, axis, x), x), expected)
    same(fnp.apply_along_axis(lambda v, k, s=0: v * k + s, axis, x, 2.0, s=1.0), 2 * x + 1)
    same(fnp.apply_along_axis(lambda v: v[0], 1, np.arange(6).reshape(2, 3)), np.array([0, 3]))
    same(fnp.apply_along_axis(fnp.sum, 0, np.arange(3.0)), np.array(3.0))


def test_apply_along_axis_grad_vmap_jit_and_errors():
    x = RNG.normal(size=(3, 4))
    f = lambda w, x: fnp.sum(fnp.apply_along_axis(lambda r: fnp.tanh(r @ w), 1, x))  # noqa: E731
    w = RNG.normal(size=(4,))
    ft.check_grads(lambda w: f(w, x), (w,), order=2)
    xs = RNG.normal(size=(2, 3, 4))
    g = ft.jit(ft.vmap(ft.grad(f), in_axes=(None, 0)))(w, xs)
    same(g, loop_grads(lambda x: ft.grad(f)(w, x), xs), rtol=1e-10)
    with pytest.raises(np.exceptions.AxisError):
        fnp.apply_along_axis(fnp.sum, 0, 3.0)


def test_apply_over_axes_matches_numpy_and_errors():
    x = RNG.normal(size=(2, 3, 4))
    for axes in ([0, 2], 1, -1, (0, 1, 2)):
        expected = np.apply_over_axes(np.sum, x, axes)
        same(fnp.apply_over_axes(fnp.sum, x, axes), expected)
        same(staged(lambda x, axes=axes: fnp.apply_over_axes(fnp.sum, x, axes), x), expected)
    ft.check_grads(lambda x: fnp.apply_over_axes(fnp.mean, x * x, [0, 2]), (x,), order=2)
    with pytest.raises(ValueError, match="apply_over_axes: expected func"):
        fnp.apply_over_axes(lambda a, ax: fnp.ravel(a), x, [0])


XS = np.linspace(-2.0, 2.0, 9)
PIECEWISE = [
    ([XS < 0, XS >= 0], [lambda v: -v, lambda v: v**2], ()),
    ([XS < 0], [lambda v: -v, 7], ()),
    ([XS < 0], [lambda v: -v], ()),
    ([XS < 1, XS < 0], [1, 2], ()),
    (XS < 0, [-1, 1], ()),
    ([XS < 0], [lambda v, k: v * k, 0], (3,)),
]


@pytest.mark.parametrize("condlist,funclist,args", PIECEWISE)
def test_piecewise_matches_numpy(condlist, funclist, args):
    expected = np.piecewise(XS, condlist, funclist, *args)
    same(fnp.piecewise(XS, condlist, funclist, *args), expected)
    conds = lambda x: [c if isinstance(c, np.ndarray) else c for c in condlist]  # noqa: E731
    same(
        staged(
            lambda x: fnp.piecewise(
                x, conds(x) if isinstance(condlist, list) else condlist, funclist, *args
            ),
            XS,
        ),
        expected,
    )
    # conditions computed from a traced x: abstract under make_jaxpr
    traced_conds = lambda x: [x < 0, x >= 0]  # noqa: E731
    same(
        staged(lambda x: fnp.piecewise(x, traced_conds(x), [lambda v: -v, lambda v: v**2]), XS),
        np.piecewise(XS, [XS < 0, XS >= 0], [lambda v: -v, lambda v: v**2]),
    )


def test_piecewise_scalars_int_dtype_and_errors():
    same(fnp.piecewise(3.0, [True, False], [1, 2]), np.piecewise(3.0, [True, False], [1, 2]))
    same(fnp.piecewise([1, 2], [[True, False]], [5.5]), np.array([5, 0]))
    i = np.arange(3)
    same(
        fnp.piecewise(i, [i > 0], [lambda v: v * 1.5]),
        np.piecewise(i, [i > 0], [lambda v: v * 1.5]),
    )
    same(staged(lambda x: fnp.piecewise(x, [x > 0], [lambda v: v * 1.5]), i), np.array([0, 1, 3]))
    with pytest.raises(ValueError, match="expected 1 or 2 entries"):
        fnp.piecewise(XS, [XS < 0], [1, 2, 3])
    with pytest.raises(ValueError, match="shape of x"):
        fnp.piecewise(XS, [np.ones(2, bool)], [1])


def test_piecewise_gradient_concrete_conditions_see_only_their_entries():
    # log is NaN for the negative entries; with known conditions it never sees them
    f = lambda x: fnp.sum(fnp.piecewise(x, [x > 0], [fnp.log, 0.0]))  # noqa: E731
    x = np.array([-1.0, 0.5, 2.0])
    same(ft.grad(f)(x), np.array([0.0, 2.0, 0.5]))
    g = lambda x: fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -(v**3), fnp.sin])  # noqa: E731
    xs = np.array([[-1.5, 0.3, 1.2], [0.7, -0.4, 2.0]])
    ft.check_grads(g, (xs,), order=2)
    vg = ft.jit(ft.vmap(ft.grad(lambda x: fnp.sum(g(x)))))(xs)
    same(vg, loop_grads(ft.grad(lambda x: fnp.sum(g(x))), xs), rtol=1e-10)


# ---------------------------------------------------------------------------
# window functions, einsum_path
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_match_numpy(name):
    for m in (-1, 0, 1, 2, 5, 6, 4.0):
        same(getattr(fnp, name)(m), getattr(np, name)(m))
    same(ft.jit(lambda x: x * getattr(fnp, name)(5))(np.ones(5)), getattr(np, name)(5))
    with pytest.raises(ConcretizationError, match="window length"):
        staged(lambda m: getattr(fnp, name)(m), np.int64(5))


def test_kaiser_traced_beta_matches_numpy_and_differentiates():
    for m in (0, 1, 2, 7):
        same(fnp.kaiser(m, 3.0), np.kaiser(m, 3.0))
    betas = [0.0, 0.5, 3.0, 14.0, 24.9, 25.1, 40.0, 300.0, -6.0, np.float32(2.0)]
    for b in betas:
        same(staged(lambda b: fnp.kaiser(8, b), b), np.kaiser(8, b), rtol=1e-13, atol=0)
    ft.check_grads(lambda b: fnp.kaiser(6, b), (0.7,), order=2)
    ft.check_grads(lambda b: fnp.kaiser(6, b), (30.0,), order=1)
    with pytest.raises(ValueError, match="scalar beta"):
        staged(lambda b: fnp.kaiser(4, b), np.ones(2))


def test_einsum_path_is_numpy_result():
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    path, report = fnp.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    np_path, np_report = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    assert path == np_path and report == np_report
    seen = []
    ft.jit(lambda a, b: (seen.append(fnp.einsum_path("ij,jk", a, b)[0]), a)[1])(a, b)
    assert seen == [np.einsum_path("ij,jk", a, b)[0]]


# ---------------------------------------------------------------------------
# Compositions: jit(vmap(grad(f))) against a loop of grad
# ---------------------------------------------------------------------------

COMPOSED = {
    "choose": lambda x: fnp.sum(fnp.choose(np.array([0, 1, 1, 0]), [x, fnp.sin(x)]) ** 2),
    "compress_size": lambda x: fnp.sum(fnp.compress(x > 0, x, size=3, fill_value=1.0) ** 3),
    "delete": lambda x: fnp.sum(fnp.delete(x, [1, -1]) ** 2),
    "insert": lambda x: fnp.sum(fnp.insert(x, [0, 2], x[:2] * 3) ** 2),
    "put": lambda x: fnp.sum(fnp.put(x, [0, 2, 0], x[1:] ** 2, inplace=False) ** 2),
    "put_along_axis": lambda x: fnp.sum(
        fnp.put_along_axis(x, np.array([3, 1]), x[:2] * 2, None, inplace=False) ** 2
    ),
    "place": lambda x: fnp.sum(fnp.place(x, x > 0, x[:2] * 2, inplace=False) ** 2),
    "resize": lambda x: fnp.sum(fnp.resize(x, (3, 3)) ** 3),
    "piecewise": lambda x: fnp.sum(fnp.piecewise(x, [x < 0], [lambda v: v**3, fnp.sin])),
    "vectorize": lambda x: fnp.sum(fnp.vectorize(lambda a: fnp.cos(a) * a)(x)),
    "apply_along_axis": lambda x: fnp.sum(
        fnp.apply_along_axis(lambda v: fnp.outer(v, v), 0, fnp.reshape(x, (2, 2)))
    ),
}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_jit_vmap_grad_matches_loop(name):
    f = COMPOSED[name]
    xs = RNG.normal(size=(3, 4))
    xs[np.abs(xs) < 0.1] += 0.3
    expected = loop_grads(ft.grad(f), xs)
    same(ft.jit(ft.vmap(ft.grad(f)))(xs), expected, rtol=1e-10, atol=1e-12)
