"""Tests for functrace.tree_util."""

from __future__ import annotations

import copy
import dataclasses
from collections import OrderedDict, defaultdict, namedtuple
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from functrace import tree_util as tu
from functrace.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    PyTreeDef,
    SequenceKey,
    all_leaves,
    assert_same_structure,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_with_keys,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_map_with_path,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
    treedef_tuple,
)

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)

Point = namedtuple("Point", ["x", "y"])


@register_dataclass
@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    tag: str = dataclasses.field(default="dense", metadata={"static": True})


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def deep_equal(a: Any, b: Any) -> bool:
    """Exact structural equality, checking container types and comparing arrays properly."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return set(a) == set(b) and all(deep_equal(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return all(
            deep_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, float) and np.isnan(a):
        return np.isnan(b)
    return a == b


leaf_st = st.one_of(
    st.integers(-100, 100),
    st.floats(allow_nan=False, width=32),
    hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64, np.int32]),
        shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
        elements=st.integers(-5, 5),
    ),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3),
        st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), children, max_size=3),
        st.builds(Point, children, children),
        st.builds(Layer, children, children, st.sampled_from(["dense", "conv"])),
    )


pytree_st = st.recursive(st.one_of(leaf_st, st.none()), _extend, max_leaves=12)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@SETTINGS
@given(pytree_st)
def test_flatten_unflatten_roundtrip(tree: Any) -> None:
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(*reversed((leaves, treedef)))
    assert deep_equal(rebuilt, tree)
    assert tree_structure(rebuilt) == treedef
    assert len(leaves) == treedef.num_leaves
    assert all(deep_equal(x, y) for x, y in zip(tree_leaves(tree), leaves, strict=True))


@SETTINGS
@given(pytree_st)
def test_structure_equality_and_hash(tree: Any) -> None:
    td1 = tree_structure(tree)
    td2 = tree_flatten(tree)[1]
    assert td1 == td2
    assert not (td1 != td2)
    assert hash(td1) == hash(td2)
    assert {td1: 1}[td2] == 1
    # Same structure, different leaves.
    other = tree_unflatten(td1, list(range(td1.num_leaves)))
    assert tree_structure(other) == td1
    assert hash(tree_structure(other)) == hash(td1)
    # num_nodes is 1 + children's nodes (leaves and None count as one node).
    assert td1.num_nodes == 1 + sum(c.num_nodes for c in td1.children())
    if treedef_is_leaf(td1):
        assert td1.num_leaves == 1 and td1.children() == []
    else:
        assert td1.num_leaves == sum(c.num_leaves for c in td1.children())


@SETTINGS
@given(pytree_st)
def test_tree_map_identity(tree: Any) -> None:
    assert deep_equal(tree_map(lambda x: x, tree), tree)


@SETTINGS
@given(pytree_st)
def test_tree_map_two_trees(tree: Any) -> None:
    leaves, td = tree_flatten(tree)
    indices = tree_unflatten(td, list(range(len(leaves))))
    assert tree_leaves(tree_map(lambda x, i: i, tree, indices)) == list(range(len(leaves)))
    assert deep_equal(tree_map(lambda x, i: x, tree, indices), tree)
    assert tree_structure(tree_map(lambda x, i: i, tree, indices)) == td


@SETTINGS
@given(pytree_st)
def test_tree_map_with_path_matches_flatten_with_path(tree: Any) -> None:
    pairs, td = tree_flatten_with_path(tree)
    assert td == tree_structure(tree)
    assert all(deep_equal(v, x) for (_, v), x in zip(pairs, tree_leaves(tree), strict=True))
    paths = tree_leaves(tree_map_with_path(lambda p, x: keystr(p), tree))
    assert paths == [keystr(p) for p, _ in pairs]
    # Paths are unique.
    assert len(set(paths)) == len(paths)


@SETTINGS
@given(pytree_st)
def test_flatten_up_to_self_is_leaves(tree: Any) -> None:
    leaves, td = tree_flatten(tree)
    up_to = td.flatten_up_to(tree)
    assert len(up_to) == len(leaves)
    assert all(deep_equal(a, b) for a, b in zip(up_to, leaves))


@SETTINGS
@given(pytree_st)
def test_is_leaf_everything_is_single_leaf(tree: Any) -> None:
    leaves, td = tree_flatten(tree, is_leaf=lambda x: True)
    assert treedef_is_leaf(td)
    assert len(leaves) == 1 and leaves[0] is tree


# ---------------------------------------------------------------------------
# Node semantics
# ---------------------------------------------------------------------------


def test_none_is_not_a_leaf() -> None:
    assert tree_leaves([None, 1]) == [1]
    assert tree_leaves(None) == []
    td = tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert not treedef_is_leaf(td)
    assert tree_map(lambda x: x + 1, (None, 1)) == (None, 2)
    assert repr(tree_structure([None, 1])) == "PyTreeDef([None, *])"
    assert all_leaves([1, 2.0, np.zeros(2)])
    assert not all_leaves([None])
    assert not all_leaves([1, [2]])


def test_dict_sorted_key_order() -> None:
    tree = {"b": 1, "a": 2, "c": 3}
    leaves, td = tree_flatten(tree)
    assert leaves == [2, 1, 3]
    rebuilt = tree_unflatten(td, leaves)
    assert rebuilt == tree
    assert list(rebuilt) == ["a", "b", "c"]
    assert type(rebuilt) is dict
    assert tree_structure({"a": 0, "b": 0}) == tree_structure({"b": 0, "a": 0})


def test_dict_unsortable_keys_are_an_error() -> None:
    # as JAX: a ValueError (no order is canonical); an OrderedDict keeps insertion order
    tree = {"b": 1, 2: "two", None: 3}
    with pytest.raises(ValueError, match="keys of a dict node must be sortable"):
        tree_flatten(tree)
    leaves, td = tree_flatten(OrderedDict(tree))
    assert leaves == [1, "two", 3]


def test_namedtuple_rebuild_type_and_keys() -> None:
    p = Point(1, (2, 3))
    leaves, td = tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = tree_unflatten(td, [10, 20, 30])
    assert type(out) is Point
    assert out == Point(10, (20, 30))
    assert repr(td) == "PyTreeDef(Point(x=*, y=(*, *)))"
    pairs, _ = tree_flatten_with_path(p)
    assert [keystr(k) for k, _ in pairs] == [".x", ".y[0]", ".y[1]"]
    assert tree_structure(p) != tree_structure((1, (2, 3)))


def test_ordereddict_and_defaultdict() -> None:
    od = OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]
    out = tree_unflatten(td, [10, 20])
    assert type(out) is OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]

    dd = defaultdict(list, {"z": 1, "y": 2})
    leaves, td = tree_flatten(dd)
    assert leaves == [2, 1]
    out = tree_unflatten(td, [20, 10])
    assert type(out) is defaultdict and out.default_factory is list
    assert dict(out) == {"y": 20, "z": 10}
    assert tree_structure(dd) != tree_structure(defaultdict(int, {"z": 1, "y": 2}))
    assert tree_structure(dd) != tree_structure({"z": 1, "y": 2})


def test_arrays_and_scalars_are_leaves() -> None:
    a = np.arange(6).reshape(2, 3)
    leaves, td = tree_flatten((a, 1.5, "s", object))
    assert leaves[0] is a and leaves[1:] == [1.5, "s", object]
    assert td.num_leaves == 4


def test_is_leaf_stops_descent() -> None:
    tree = {"a": [1, 2], "b": (3, [4])}
    leaves = tree_leaves(tree, is_leaf=lambda x: isinstance(x, list))
    assert leaves == [[1, 2], 3, [4]]
    out = tree_map(
        lambda x: len(x) if isinstance(x, list) else -x,
        tree,
        is_leaf=lambda x: isinstance(x, list),
    )
    assert out == {"a": 2, "b": (-3, 1)}
    pairs, _ = tree_flatten_with_path(tree, is_leaf=lambda x: isinstance(x, list))
    assert [keystr(p) for p, _ in pairs] == ["['a']", "['b'][0]", "['b'][1]"]


# ---------------------------------------------------------------------------
# PyTreeDef API
# ---------------------------------------------------------------------------


def test_pytreedef_repr_and_counts() -> None:
    td = tree_structure((1, {"a": 2, "b": [3, 4]}))
    assert repr(td) == "PyTreeDef((*, {'a': *, 'b': [*, *]}))"
    assert td.num_leaves == 4
    assert td.num_nodes == 7
    assert repr(tree_structure(5)) == "PyTreeDef(*)"
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tree_structure(())) == "PyTreeDef(())"
    assert td.children() == [tree_structure(0), tree_structure({"a": 0, "b": [0, 0]})]
    assert td.node_data() == (tuple, None)
    assert tree_structure(0).node_data() is None
    assert treedef_tuple([tree_structure(1), tree_structure([1])]) == tree_structure((0, [0]))


def test_pytreedef_hashable_and_immutable() -> None:
    td = tree_structure({"a": [1, 2], "b": None})
    same = tree_structure({"b": None, "a": [5, 6]})
    different = tree_structure({"a": (1, 2), "b": None})
    assert td == same and hash(td) == hash(same)
    assert td != different
    assert len({td, same, different}) == 2
    assert td != "not a treedef"
    with pytest.raises(AttributeError):
        td.num_leaves = 3  # type: ignore[misc]
    assert copy.copy(td) is td and copy.deepcopy(td) is td


def test_pytreedef_unflatten_method() -> None:
    td = tree_structure([0, (0, 0)])
    assert td.unflatten([1, 2, 3]) == [1, (2, 3)]
    assert td.unflatten(iter([1, 2, 3])) == [1, (2, 3)]


def test_flatten_up_to_prefix_tree() -> None:
    prefix = tree_structure((0, {"a": 0, "b": 0}))
    full = ([1, 2], {"b": (3, 4), "a": {"x": 5}})
    assert prefix.flatten_up_to(full) == [[1, 2], {"x": 5}, (3, 4)]
    # tree_map accepts rest trees that extend the first tree's structure.
    out = tree_map(lambda n, sub: (n, tree_leaves(sub)), (0, 1), ([1, 2], {"k": 3}))
    assert out == ((0, [1, 2]), (1, [3]))
    with pytest.raises(ValueError, match=r"flatten_up_to: pytree structure mismatch"):
        prefix.flatten_up_to(([1, 2], {"a": 1}))
    # None in the prefix must be matched by None.
    with pytest.raises(ValueError, match=r"at path \[0\]: expected None, got a leaf of type int"):
        tree_structure((None, 0)).flatten_up_to((1, 2))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_tree_map_mismatch_message_names_first_differing_path() -> None:
    a = {"a": 1, "b": [1, [2, 3]]}
    b = {"a": 1, "b": [1, (2, 3, 4)]}
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x + y, a, b)
    msg = str(info.value)
    assert msg.startswith("tree_map: pytree structure mismatch")
    assert (
        "first differing at path ['b'][1]: expected a list of 2 children, got a tuple of 3" in msg
    )
    assert repr(tree_structure(a)) in msg
    assert repr(tree_structure(b)) in msg


def test_mismatch_reports_first_path_in_flattening_order() -> None:
    a = {"a": [1, 2], "z": [1, 2]}
    b = {"a": [1], "z": [1]}
    with pytest.raises(ValueError, match=r"first differing at path \['a'\]: expected a list"):
        tree_map(lambda x, y: x, a, b)


def test_mismatch_dict_keys_and_types() -> None:
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x, {"x": {"a": 1, "b": 2}}, {"x": {"a": 1, "c": 2}})
    msg = str(info.value)
    assert "at path ['x']:" in msg
    assert "missing keys ['b']" in msg and "unexpected keys ['c']" in msg

    with pytest.raises(ValueError, match=r"at path \[0\]: expected a namedtuple Point"):
        tree_map(lambda x, y: x, (Point(1, 2),), ((1, 2),))

    with pytest.raises(ValueError, match=r"at path <root>: expected a tuple of 2 children"):
        tree_map(lambda x, y: x, (1, 2), 3)


def test_tree_map_with_path_mismatch_names_function() -> None:
    with pytest.raises(ValueError, match=r"^tree_map_with_path: pytree structure mismatch"):
        tree_map_with_path(lambda p, x, y: x, [1, 2], [1])


def test_assert_same_structure() -> None:
    assert_same_structure({"a": [1, 2]}, {"a": [np.ones(2), 3]}, what="sgd.update")
    with pytest.raises(ValueError) as info:
        assert_same_structure({"a": [1, 2]}, {"a": [[1], 2]}, what="sgd.update")
    msg = str(info.value)
    assert msg.startswith("sgd.update: pytree structure mismatch")
    assert "first differing at path ['a'][0]: expected a leaf, got a list of 1" in msg
    # Exact mode rejects extra depth that prefix mode (tree_map) allows.
    assert tree_map(lambda x, y: x, [1, 2], [[1], 2]) == [1, 2]


def test_structure_mismatch_message_direct() -> None:
    td = tree_structure({"params": [0, {"w": 0}]})
    msg = structure_mismatch_message(td, {"params": [0, {"w": 0, "b": 0}]}, "load_checkpoint")
    first = msg.splitlines()[0]
    assert first.startswith("load_checkpoint: pytree structure mismatch")
    assert "first differing at path ['params'][1]:" in first
    assert "unexpected keys ['b']" in first
    assert "expected structure: " + repr(td) in msg
    # Custom-node aux data mismatch (dataclass meta fields).
    td = tree_structure(Layer(1, 2, "dense"))
    msg = structure_mismatch_message(td, Layer(1, 2, "conv"), "opt")
    assert "at path <root>" in msg and "'dense'" in msg and "'conv'" in msg


def test_unflatten_wrong_number_of_leaves() -> None:
    td = tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"tree_unflatten.*expects 3 leaves, but got 2"):
        tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match=r"expects 3 leaves, but got 4"):
        td.unflatten([1, 2, 3, 4])


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def test_register_pytree_node_custom_class() -> None:
    class Pair:
        def __init__(self, a: Any, b: Any, name: str) -> None:
            self.a, self.b, self.name = a, b, name

    register_pytree_node(
        Pair, lambda p: ((p.a, p.b), p.name), lambda name, ch: Pair(ch[0], ch[1], name)
    )
    p = Pair(1, [2, 3], "n")
    leaves, td = tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = tree_unflatten(td, [10, 20, 30])
    assert type(out) is Pair and out.a == 10 and out.b == [20, 30] and out.name == "n"
    assert td != tree_structure(Pair(1, [2, 3], "other"))
    assert td == tree_structure(Pair(0, [0, 0], "n"))
    assert repr(td) == "PyTreeDef(CustomNode(" + Pair.__qualname__ + "['n'], [*, [*, *]]))"
    pairs, _ = tree_flatten_with_path(p)
    assert [k for k, _ in pairs][0] == (FlattenedIndexKey(0),)
    doubled = tree_map(lambda x: 2 * x, p)
    assert doubled.b == [4, 6]
    with pytest.raises(ValueError, match="already registered"):
        register_pytree_node(Pair, lambda p: ((), None), lambda aux, ch: Pair(0, 0, ""))


def test_register_pytree_with_keys() -> None:
    class Box:
        def __init__(self, v: Any) -> None:
            self.v = v

    register_pytree_with_keys(
        Box, lambda b: ([(GetAttrKey("v"), b.v)], None), lambda aux, ch: Box(ch[0])
    )
    pairs, td = tree_flatten_with_path({"box": Box([1, 2])})
    assert [keystr(p) for p, _ in pairs] == ["['box'].v[0]", "['box'].v[1]"]
    assert tree_leaves(Box((3, 4))) == [3, 4]


def test_register_dataclass_static_fields() -> None:
    l1 = Layer(np.ones(2), 0.5, "dense")
    leaves, td = tree_flatten(l1)
    assert len(leaves) == 2 and leaves[1] == 0.5
    assert repr(td) == "PyTreeDef(Layer(w=*, b=*, tag='dense'))"
    out = tree_unflatten(td, [1, 2])
    assert out == Layer(1, 2, "dense")
    # Meta fields are aux data: they participate in equality and hashing.
    assert td == tree_structure(Layer(3, 4, "dense"))
    assert hash(td) == hash(tree_structure(Layer(3, 4, "dense")))
    assert td != tree_structure(Layer(3, 4, "conv"))
    pairs, _ = tree_flatten_with_path({"l": l1})
    assert [keystr(p) for p, _ in pairs] == ["['l'].w", "['l'].b"]
    with pytest.raises(ValueError, match=r"tree_map: pytree structure mismatch"):
        tree_map(lambda x, y: x, l1, Layer(1, 2, "conv"))


def test_register_dataclass_explicit_fields_and_errors() -> None:
    @dataclasses.dataclass(frozen=True)
    class Opt:
        lr: float
        mu: Any
        count: int = dataclasses.field(default=0, init=False)

    assert register_dataclass(Opt, data_fields=["mu"], meta_fields=["lr"]) is Opt
    leaves, td = tree_flatten(Opt(0.1, (1, 2)))
    assert leaves == [1, 2]
    assert tree_unflatten(td, [3, 4]) == Opt(0.1, (3, 4))

    @dataclasses.dataclass
    class Bad:
        a: Any
        b: Any

    with pytest.raises(ValueError, match="missing"):
        register_dataclass(Bad, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="both data and meta"):
        register_dataclass(Bad, data_fields=["a", "b"], meta_fields=["a"])

    class NotDC:
        pass

    with pytest.raises(TypeError, match="not a dataclass"):
        register_dataclass(NotDC)

    @register_dataclass(meta_fields=["name"])
    @dataclasses.dataclass
    class Named:
        x: Any
        name: str

    assert tree_leaves(Named([1, 2], "q")) == [1, 2]
    assert tree_structure(Named(1, "q")) != tree_structure(Named(1, "r"))


def test_class_attribute_protocol_and_subclasses() -> None:
    class Module:
        __functrace_pytree__ = True

        def __init__(self, **params: Any) -> None:
            self.params = params

        def tree_flatten(self) -> tuple[list[Any], tuple[str, ...]]:
            names = tuple(sorted(self.params))
            return [self.params[n] for n in names], names

        def tree_flatten_with_keys(self) -> tuple[list[tuple[Any, Any]], tuple[str, ...]]:
            names = tuple(sorted(self.params))
            return [(GetAttrKey(n), self.params[n]) for n in names], names

        @classmethod
        def tree_unflatten(cls, aux: tuple[str, ...], children: Any) -> Module:
            return cls(**dict(zip(aux, children)))

    class Linear(Module):
        pass

    lin = Linear(w=np.ones(2), b=0.0)
    leaves, td = tree_flatten(lin)
    assert leaves[0] == 0.0 and leaves[1].shape == (2,)
    out = tree_unflatten(td, [1, 2])
    assert type(out) is Linear and out.params == {"b": 1, "w": 2}
    assert td != tree_structure(Module(w=1, b=2))
    pairs, _ = tree_flatten_with_path([lin])
    assert [keystr(p) for p, _ in pairs] == ["[0].b", "[0].w"]

    class Frozen(Module):
        __functrace_pytree__ = False

    frozen = Frozen(a=1)
    assert tree_leaves(frozen) == [frozen]
    assert tu.node_of(Frozen()) is None
    assert tu.node_of(lin) is not None
    assert tu.node_of(None) is not None and tu.node_of(1.0) is None


# ---------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------


def test_keystr_formats() -> None:
    path = (DictKey("params"), SequenceKey(0), GetAttrKey("weight"))
    assert keystr(path) == "['params'][0].weight"
    assert keystr(()) == ""
    assert keystr(path, simple=True, separator="/") == "params/0/weight"
    assert str(DictKey(3)) == "[3]"
    assert SequenceKey(1) == SequenceKey(1) and hash(SequenceKey(1)) == hash(SequenceKey(1))
    assert SequenceKey(1) != FlattenedIndexKey(1)
    assert FlattenedIndexKey(2).idx == 2


def test_flatten_with_path_paths() -> None:
    tree = {"params": [{"w": 1, "b": 2}], "step": (3, None)}
    pairs, td = tree_flatten_with_path(tree)
    assert [keystr(p) for p, _ in pairs] == [
        "['params'][0]['b']",
        "['params'][0]['w']",
        "['step'][0]",
    ]
    assert [v for _, v in pairs] == [2, 1, 3]
    assert pairs[0][0] == (DictKey("params"), SequenceKey(0), DictKey("b"))
    assert isinstance(td, PyTreeDef) and td == tree_structure(tree)


# -- tree_leaves_with_path, functrace.tree.broadcast, register_static ---------------


def test_tree_leaves_with_path() -> None:
    import functrace as ft

    # JAX 0.10.2: [((DictKey(key='a'),), 1)]
    assert tu.tree_leaves_with_path({"a": 1}) == [((tu.DictKey("a"),), 1)]
    got = tu.tree_leaves_with_path([1, (2, None)], is_leaf=lambda x: x == 2)
    assert got == [((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1), tu.SequenceKey(0)), 2)]
    tree = {"b": [1, 2], "a": (3,)}
    assert tu.tree_leaves_with_path(tree) == tu.tree_flatten_with_path(tree)[0]
    assert ft.tree.leaves_with_path(tree) == tu.tree_leaves_with_path(tree)


def test_tree_broadcast_as_jax() -> None:
    import functrace as ft
    import functrace.numpy as fnp

    # expected values: jax.tree.broadcast in JAX 0.10.2
    b = ft.tree.broadcast
    assert b((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (1, {"a": 2, "b": 2}, (3, 3))
    assert b(1, {"a": [0, 0], "b": None}) == {"a": [1, 1], "b": None}
    assert b({"a": 1, "b": 2}, {"a": (0, 0), "b": [0, None, 0]}) == {
        "a": (1, 1),
        "b": [2, None, 2],
    }
    assert b((None, 1), (None, (0, 0))) == (None, (1, 1))
    assert b([1, 2], [(3, 4), 5], is_leaf=lambda x: x == 1) == [(1, 1), 2]
    assert b(5, 7) == 5
    with pytest.raises(ValueError, match="tree.broadcast: pytree structure mismatch"):
        b((1, 2), (0, 0, 0))
    with pytest.raises(ValueError, match="tree.broadcast: pytree structure mismatch"):
        b(None, (0, 0))
    out = ft.jit(lambda t: ft.tree.broadcast(t, {"a": (0, 0)}))(fnp.asarray(2.0))
    assert float(out["a"][0]) == 2.0 and float(out["a"][1]) == 2.0
    g = ft.grad(lambda x: sum(ft.tree.leaves(ft.tree.broadcast(x, [0, (0, 0)]))) * x)(1.5)
    assert g == 9.0  # 3 x**2


def test_register_static_under_jit_grad_vmap() -> None:
    import functrace as ft
    import functrace.numpy as fnp

    @tu.register_static
    class Mode(str):
        pass

    assert tu.tree_leaves((1.0, Mode("add"))) == [1.0]
    assert tu.tree_map(lambda x: x, {"m": Mode("q")}) == {"m": "q"}
    f = ft.jit(lambda x, m: x + 1 if m == "add" else x - 1)  # no static_argnums needed
    assert f(1.0, Mode("add")) == 2.0 and f(1.0, Mode("sub")) == 0.0
    assert f(5.0, Mode("add")) == 6.0 and f.trace_count == 2  # one signature per value
    assert ft.grad(lambda x, m: x * 2 if m == "a" else x)(1.0, Mode("a")) == 2.0
    xs = fnp.ones(2)
    for axes in ((0, None), 0):
        out = ft.vmap(lambda x, m: x * 2 if m == "a" else x, in_axes=axes)(xs, Mode("a"))
        np.testing.assert_array_equal(out, [2.0, 2.0])
    with pytest.raises(ValueError, match="already registered"):
        tu.register_static(Mode)
