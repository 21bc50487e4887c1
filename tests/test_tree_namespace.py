"""functrace.tree, the new tree_util functions, Partial and flatten_util.ravel_pytree.

Item 3 of the "JAX programs run unchanged" issue: the ``jax.tree`` namespace,
``tree_reduce``/``tree_all``/``tree_transpose``/``Partial`` in ``tree_util``, and
``ravel_pytree``.
"""

from __future__ import annotations

import functools
import operator
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import functrace as ft
import functrace.numpy as fnp
from functrace import tree_util as tu
from functrace.flatten_util import ravel_pytree
from test_tree_util import SETTINGS, deep_equal, pytree_st

# ---------------------------------------------------------------------------
# functrace.tree is tree_util under short names
# ---------------------------------------------------------------------------


@SETTINGS
@given(pytree_st)
def test_item3_tree_namespace_matches_tree_util(tree: Any) -> None:
    leaves, td = ft.tree.flatten(tree)
    want_leaves, want_td = tu.tree_flatten(tree)
    assert td == want_td and deep_equal(leaves, want_leaves)
    assert deep_equal(ft.tree.leaves(tree), want_leaves)
    assert ft.tree.structure(tree) == want_td
    assert deep_equal(ft.tree.unflatten(td, leaves), tree)
    assert deep_equal(ft.tree.map(lambda x: x, tree), tree)
    pairs, td2 = ft.tree.flatten_with_path(tree)
    assert td2 == td and deep_equal([v for _, v in pairs], leaves)
    assert [p for p, _ in pairs] == [p for p, _ in tu.tree_flatten_with_path(tree)[0]]
    lwp = ft.tree.leaves_with_path(tree)
    assert [p for p, _ in lwp] == [p for p, _ in pairs]
    assert deep_equal([v for _, v in lwp], leaves)
    paths = ft.tree.map_with_path(lambda p, x: tu.keystr(p), tree)
    assert ft.tree.leaves(paths) == [tu.keystr(p) for p, _ in pairs]


def test_item3_tree_map_is_leaf_and_rest() -> None:
    tree = {"a": [1, 2], "b": (3,)}
    assert ft.tree.map(lambda x, y: x + y, tree, tree) == {"a": [2, 4], "b": (6,)}
    assert ft.tree.map(len, tree, is_leaf=lambda x: isinstance(x, (list, tuple))) == {
        "a": 2,
        "b": 1,
    }
    assert ft.tree.leaves([None, (None,)]) == []


# ---------------------------------------------------------------------------
# reduce, all
# ---------------------------------------------------------------------------


@SETTINGS
@given(pytree_st)
def test_item3_reduce_and_all_agree_with_leaves(tree: Any) -> None:
    leaves = ft.tree.leaves(tree)
    assert ft.tree.reduce(lambda n, _: n + 1, tree, 0) == len(leaves)
    if leaves:
        assert deep_equal(ft.tree.reduce(lambda a, b: a, tree), leaves[0])
        assert deep_equal(ft.tree.reduce(lambda a, b: b, tree), leaves[-1])
    truth = ft.tree.map(lambda x: bool(np.all(x)), tree)
    assert ft.tree.all(truth) == all(bool(np.all(x)) for x in leaves)


def test_item3_reduce_all_details() -> None:
    assert ft.tree.reduce(operator.add, {"x": 1, "y": [2, 3]}) == 6
    assert ft.tree.reduce(operator.add, [], 10) == 10
    assert tu.tree_reduce(max, [3, (1, 4)]) == 4
    with pytest.raises(TypeError, match="tree_reduce: the tree has no leaves"):
        ft.tree.reduce(operator.add, [None, ()])
    assert ft.tree.all([True, {"a": 1}]) and not ft.tree.all([True, (0,)])
    assert ft.tree.all({}) and tu.tree_all([])
    assert not ft.tree.all(([1], []), is_leaf=lambda x: isinstance(x, list))


# ---------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------


@SETTINGS
@given(pytree_st, st.integers(1, 3))
def test_item3_transpose_round_trip(inner_tree: Any, n: int) -> None:
    # an outer list of n trees of one structure <-> one tree with lists of n at its leaves
    td = ft.tree.structure(inner_tree)
    m = td.num_leaves
    trees = [td.unflatten([f"{k}:{i}" for i in range(m)]) for k in range(n)]
    outer = ft.tree.structure([0] * n)
    swapped = ft.tree.transpose(outer, td, trees)
    at_leaves = td.flatten_up_to(swapped)
    assert at_leaves == [[f"{k}:{i}" for k in range(n)] for i in range(m)]
    assert deep_equal(ft.tree.transpose(td, outer, swapped), trees)
    assert deep_equal(ft.tree.transpose(outer, None, trees), swapped)


def test_item3_transpose_details() -> None:
    outer, inner = ft.tree.structure([0, 0]), ft.tree.structure({"x": 0, "y": 0})
    tree = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
    assert ft.tree.transpose(outer, inner, tree) == {"x": [1, 3], "y": [2, 4]}
    assert tu.tree_transpose(outer, None, tree) == {"x": [1, 3], "y": [2, 4]}
    with pytest.raises(ValueError, match="tree_transpose"):
        ft.tree.transpose(outer, inner, [{"x": 1}, {"x": 3, "y": 4}])
    with pytest.raises(ValueError, match="tree_transpose"):
        ft.tree.transpose(ft.tree.structure([0, 0, 0]), inner, tree)
    with pytest.raises(TypeError, match="tree_transpose: expected a PyTreeDef"):
        ft.tree.transpose([0, 0], inner, tree)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


def _affine(w: Any, x: Any, b: Any = 0.0) -> Any:
    return w * x + b


def test_item3_partial_is_a_pytree() -> None:
    p = tu.Partial(_affine, np.float64(2.0), b=np.float64(1.0))
    assert p(3.0) == 7.0
    leaves, td = ft.tree.flatten(p)
    assert leaves == [2.0, 1.0]
    q = ft.tree.unflatten(td, [np.float64(3.0), np.float64(0.5)])
    assert isinstance(q, tu.Partial) and q.func is _affine and q(2.0) == 6.5
    assert ft.tree.structure(p) == ft.tree.structure(tu.Partial(_affine, 0.0, b=0.0))
    assert ft.tree.structure(p) != ft.tree.structure(tu.Partial(_affine, 0.0))
    # nesting stays flat, as functools.partial's own nesting
    n = tu.Partial(tu.Partial(_affine, 1.0), 2.0)
    assert n.func is _affine and n.args == (1.0, 2.0) and n(3.0) == 5.0
    assert ft.tree.leaves(tu.Partial(_affine)) == []
    assert isinstance(p, functools.partial)


def test_item3_partial_through_transforms() -> None:
    p = tu.Partial(_affine, np.array([1.0, 2.0]), b=np.array([0.5, 0.5]))

    def apply(f: Any, x: Any) -> Any:
        return fnp.sum(f(x))

    assert ft.jit(apply)(p, np.array([1.0, 1.0])) == 4.0
    g = ft.grad(apply)(p, np.array([3.0, 4.0]))
    assert isinstance(g, tu.Partial)
    np.testing.assert_allclose(g.args[0], [3.0, 4.0])
    np.testing.assert_allclose(g.keywords["b"], [1.0, 1.0])
    out = ft.vmap(lambda f, x: f(x), in_axes=(None, 0))(p, np.ones((3, 2)))
    np.testing.assert_allclose(out, np.tile([1.5, 2.5], (3, 1)))


# ---------------------------------------------------------------------------
# Dicts whose keys cannot be sorted: an error (JAX raises ValueError too)
# ---------------------------------------------------------------------------


def test_item3_unsortable_dict_keys_are_a_value_error() -> None:
    bad = {1: 1.0, "a": 2.0}
    for fn in (ft.tree.flatten, ft.tree.leaves, ft.tree.structure, ft.tree.flatten_with_path):
        with pytest.raises(ValueError, match="keys of a dict node must be sortable"):
            fn(bad)
    with pytest.raises(ValueError, match="int, str"):
        ft.tree.map(lambda x: x, {"x": bad})
    with pytest.raises(ValueError, match="keys of a dict node must be sortable"):
        ft.jit(lambda d: d[1])(bad)
    with pytest.raises(ValueError, match="keys of a dict node must be sortable"):
        ravel_pytree(bad)
    # an OrderedDict has an order of its own
    assert ft.tree.leaves(OrderedDict(bad)) == [1.0, 2.0]


# ---------------------------------------------------------------------------
# ravel_pytree
# ---------------------------------------------------------------------------

_array_leaf = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
    elements=st.integers(0, 1),
)
_array_tree = st.recursive(
    _array_leaf,
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.tuples(c, c),
        st.dictionaries(st.text("abc", min_size=1, max_size=2), c, max_size=3),
    ),
    max_leaves=8,
)


def _jax_flat_dtype(dtypes: list[np.dtype]) -> np.dtype:
    floats = [d for d in dtypes if d.kind == "f"]
    return np.result_type(*(floats or dtypes))


@SETTINGS
@given(_array_tree)
def test_item3_ravel_pytree_round_trip(tree: Any) -> None:
    flat, unravel = ravel_pytree(tree)
    leaves = ft.tree.leaves(tree)
    assert flat.ndim == 1 and flat.shape[0] == sum(np.size(x) for x in leaves)
    if leaves:
        assert flat.dtype == _jax_flat_dtype([x.dtype for x in leaves])
        np.testing.assert_array_equal(
            flat, np.concatenate([np.ravel(x).astype(flat.dtype) for x in leaves])
        )
    back = unravel(flat)
    assert ft.tree.structure(back) == ft.tree.structure(tree)
    for a, b in zip(ft.tree.leaves(back), leaves):
        assert np.shape(a) == b.shape and np.asarray(a).dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    jflat = ft.jit(lambda t: ravel_pytree(t)[0])(tree)
    np.testing.assert_array_equal(jflat, flat)
    assert jflat.dtype == flat.dtype


@pytest.mark.parametrize(
    "dtypes, want",
    [
        ((np.int32, np.float32), np.float32),  # JAX: integers do not widen the float
        ((np.int64, np.float16, np.float32), np.float32),
        ((np.bool_, np.int8), np.int8),
        ((np.int32, np.int64), np.int64),
        ((np.float32, np.float64), np.float64),
        ((np.bool_,), np.bool_),
    ],
)
def test_item3_ravel_pytree_promotion(dtypes: Any, want: Any) -> None:
    tree = [np.ones(2, dtype=d) for d in dtypes]
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == want
    assert [x.dtype for x in unravel(flat)] == [np.dtype(d) for d in dtypes]


def test_item3_ravel_pytree_details() -> None:
    # Python scalars are weak: they take the arrays' dtype
    flat, unravel = ravel_pytree({"a": 1.0, "b": np.zeros(2, np.float32)})
    assert flat.dtype == np.float32 and flat.tolist() == [1.0, 0.0, 0.0]
    flat, _ = ravel_pytree([1.0, 2])
    assert flat.dtype == np.float64
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and unravel(flat) == []
    flat, unravel = ravel_pytree({"w": np.ones((2, 2))})
    with pytest.raises(ValueError, match=r"unravel: expected a vector of shape \(4,\)"):
        unravel(np.ones(3))
    with pytest.raises(TypeError, match="ravel_pytree: expected numeric leaves"):
        ravel_pytree(["text"])


def test_item3_ravel_pytree_under_grad_and_vmap() -> None:
    params = {"w": np.arange(4.0).reshape(2, 2), "b": np.array([1.0, -1.0])}

    def loss(p: Any) -> Any:
        flat, _ = ravel_pytree(p)
        return fnp.sum(flat**2)

    g = ft.grad(loss)(params)
    np.testing.assert_allclose(g["w"], 2 * params["w"])
    np.testing.assert_allclose(g["b"], 2 * params["b"])
    flat, unravel = ravel_pytree(params)
    # the optimizer pattern: work on the flat vector, unravel inside the loss
    gf = ft.grad(lambda v: fnp.sum(unravel(v)["w"] ** 3))(flat)
    np.testing.assert_allclose(gf, np.concatenate([[0.0, 0.0], 3 * np.arange(4.0) ** 2]))
    batched = ft.vmap(lambda v: unravel(v)["b"])(np.stack([flat, 2 * flat]))
    np.testing.assert_allclose(batched, [[1.0, -1.0], [2.0, -2.0]])
