"""JAX names programs call: the rest of ``tree_util``/``tree`` and the top-level
context managers of JAX's config options.

The expected values of the ``tree_util`` functions on fixed trees are JAX 0.10.2's
(``jax.tree_util`` on the same trees), written down here; the properties check the
functions against their definitions on random trees.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import operator
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
from functrace import tree_util as tu
from functrace.tree_util import DictKey, GetAttrKey, SequenceKey

SETTINGS = settings(max_examples=60, deadline=None)

P = collections.namedtuple("P", "x y")


@tu.register_pytree_with_keys_class
class Pt:
    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y

    def tree_flatten_with_keys(self) -> Any:
        return [(GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)], "pt"

    @classmethod
    def tree_unflatten(cls, aux: Any, children: Any) -> Pt:
        assert aux == "pt"
        return cls(*children)

    def __eq__(self, other: object) -> bool:
        return type(other) is Pt and (self.x, self.y) == (other.x, other.y)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3),
        st.dictionaries(st.text("abc", min_size=1, max_size=2), children, max_size=3),
        st.builds(P, children, children),
        st.builds(Pt, children, children),
    )


trees = st.recursive(st.one_of(st.integers(-9, 9), st.none()), _extend, max_leaves=10)


# ---------------------------------------------------------------------------
# tree_util: JAX's values
# ---------------------------------------------------------------------------

ONE_LEVEL = [  # tree, JAX's children, JAX's aux data
    ((1, 2), [1, 2], None),
    ([1, (2, None)], [1, (2, None)], None),
    ({"b": 1, "a": [2, 3]}, [[2, 3], 1], ("a", "b")),
    (P(1, [2, 3]), [1, [2, 3]], P),
    (collections.OrderedDict(b=1, a=2), [1, 2], ("b", "a")),
    (collections.defaultdict(list, b=1, a=2), [2, 1], (list, ("a", "b"))),
    (None, [], None),
]


@pytest.mark.parametrize("tree, children, aux", ONE_LEVEL)
def test_flatten_one_level_is_jaxs(tree: Any, children: Any, aux: Any) -> None:
    got, got_aux = tu.flatten_one_level(tree)
    assert list(got) == children and got_aux == aux
    assert tu.is_tree_node(type(tree))
    assert tu.default_registry.flatten_one_level(tree)[1] == aux
    pairs, aux2 = tu.flatten_one_level_with_keys(tree)
    assert [c for _, c in pairs] == children and aux2 == aux


def test_flatten_one_level_with_keys_values() -> None:
    assert tu.flatten_one_level_with_keys({"b": 1, "a": [2]}) == (
        [(DictKey("a"), [2]), (DictKey("b"), 1)],
        ("a", "b"),
    )
    assert tu.flatten_one_level_with_keys([5, 6])[0] == [(SequenceKey(0), 5), (SequenceKey(1), 6)]
    # JAX 0.10.2 gives both children GetAttrKey('x') here; each field's own key is kept.
    assert tu.flatten_one_level_with_keys(P(1, 2))[0] == [
        (GetAttrKey("x"), 1),
        (GetAttrKey("y"), 2),
    ]
    assert tu.flatten_one_level_with_keys(Pt(1, 2)) == (
        [(GetAttrKey("x"), 1), (GetAttrKey("y"), 2)],
        "pt",
    )


def test_one_level_of_a_leaf() -> None:
    with pytest.raises(ValueError, match="flatten_one_level: expected a pytree node.*int"):
        tu.flatten_one_level(3)
    with pytest.raises(ValueError, match="flatten_one_level_with_keys"):
        tu.flatten_one_level_with_keys(np.ones(2))
    assert tu.default_registry.flatten_one_level(3) is None
    assert tu.default_registry.flatten_one_level_with_keys(3.0) is None


def test_is_tree_node() -> None:
    assert [tu.is_tree_node(t) for t in (tuple, list, dict, type(None), P, Pt)] == [True] * 6
    assert [tu.is_tree_node(t) for t in (int, float, np.ndarray, str)] == [False] * 4
    assert tu.default_registry.is_node(list) and not tu.default_registry.is_node(int)
    with pytest.raises(TypeError, match="is_tree_node: expected a type"):
        tu.is_tree_node(3)  # type: ignore[arg-type]


BROADCASTS = [  # prefix, full, JAX's result
    ((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)), (1, {"a": 2, "b": 2}, (3, 3))),
    ({"a": 1, "b": 2}, {"a": [0, 0, 0], "b": (0, P(0, 0))}, {"a": [1, 1, 1], "b": (2, P(2, 2))}),
    ([1, None], [[0, 0], None], [[1, 1], None]),
    (5, {"a": [0, 0]}, {"a": [5, 5]}),
    ([1, 2], [Pt(0, 0), []], [Pt(1, 1), []]),
]


@pytest.mark.parametrize("prefix, full, expected", BROADCASTS)
def test_tree_broadcast_is_jaxs(prefix: Any, full: Any, expected: Any) -> None:
    assert tu.tree_broadcast(prefix, full) == expected
    assert ft.tree.broadcast(prefix, full) == expected


def test_tree_broadcast_is_leaf_and_errors() -> None:
    is_leaf = lambda x: isinstance(x, list) and len(x) == 1  # noqa: E731
    full = [[0, 0], [[0], [0, None]]]
    assert tu.tree_broadcast([1, [2]], full, is_leaf=is_leaf) == [[1, 1], [[[2]], [[2], None]]]
    with pytest.raises(ValueError, match="tree_broadcast: pytree structure mismatch"):
        tu.tree_broadcast((1, 2), (0, 0, 0))


def test_tree_reduce_associative_is_jaxs() -> None:
    cat = lambda a, b: f"({a}{b})"  # noqa: E731
    assert tu.tree_reduce_associative(cat, list("abcde")) == "((ab)(c(de)))"
    tree = {"c": "x", "a": ["p", "q"], "b": P("m", "n")}
    assert tu.tree_reduce_associative(cat, tree) == "((pq)(m(nx)))"
    assert ft.tree.reduce_associative(operator.add, [1, (2, 3), [4, 5, 6]]) == 21
    assert tu.tree_reduce_associative(operator.add, [None, ()], identity=7) == 7
    assert tu.tree_reduce_associative(operator.add, [[1]], identity=7) == 1
    with pytest.raises(TypeError, match="tree_reduce_associative: the tree has no leaves"):
        tu.tree_reduce_associative(operator.add, {})
    with pytest.raises(TypeError, match="expected a callable"):
        tu.tree_reduce_associative(3, [1])  # type: ignore[arg-type]


def test_register_pytree_with_keys_class() -> None:
    pairs, td = tu.tree_flatten_with_path({"p": Pt(1, [2])})
    assert [(tu.keystr(k), v) for k, v in pairs] == [("['p'].x", 1), ("['p'].y[0]", 2)]
    assert td.unflatten([10, 20]) == {"p": Pt(10, [20])}
    assert ft.grad(lambda p: p.x * p.y)(Pt(2.0, 3.0)) == Pt(3.0, 2.0)

    with pytest.raises(TypeError, match="register_pytree_with_keys_class: .*lacks tree_unflatten"):

        @tu.register_pytree_with_keys_class
        class NoUnflatten:
            def tree_flatten_with_keys(self) -> Any:
                return [], None

    with pytest.raises(TypeError, match="expected a class"):
        tu.register_pytree_with_keys_class(3)  # type: ignore[arg-type]


def test_register_pytree_with_keys_class_uses_tree_flatten() -> None:
    calls: list[str] = []

    @tu.register_pytree_with_keys_class
    class Both:
        def __init__(self, v: Any) -> None:
            self.v = v

        def tree_flatten(self) -> Any:
            calls.append("flat")
            return (self.v,), None

        def tree_flatten_with_keys(self) -> Any:
            calls.append("keys")
            return [(GetAttrKey("v"), self.v)], None

        @classmethod
        def tree_unflatten(cls, aux: Any, children: Any) -> Any:
            return cls(*children)

    assert tu.tree_leaves(Both(4)) == [4] and calls == ["flat"]
    assert tu.tree_leaves_with_path(Both(4)) == [((GetAttrKey("v"),), 4)]
    assert calls == ["flat", "keys"]


def test_default_registry() -> None:
    reg = tu.default_registry
    assert reg.flatten({"a": [1, 2]}) == tu.tree_flatten({"a": [1, 2]})
    seen: list[Any] = []
    pairs, td = reg.flatten_with_path({"a": [1, 2]}, lambda k, x: seen.append(k) or False)
    assert seen == [
        (),
        (DictKey("a"),),
        (DictKey("a"), SequenceKey(0)),
        (DictKey("a"), SequenceKey(1)),
    ]
    assert pairs == tu.tree_flatten_with_path({"a": [1, 2]})[0]
    assert td == tu.tree_structure({"a": [0, 0]})
    pairs, td = reg.flatten_with_path({"a": [1, 2], "b": 3}, lambda k, x: k == (DictKey("a"),))
    assert pairs == [((DictKey("a"),), [1, 2]), ((DictKey("b"),), 3)] and td.num_leaves == 2

    class Box:
        def __init__(self, v: Any) -> None:
            self.v = v

    reg.register_node(Box, lambda b: ((b.v,), None), lambda aux, ch: Box(*ch))
    assert tu.tree_leaves([Box(1), Box((2, 3))]) == [1, 2, 3]
    assert reg.is_node(Box)

    @dataclasses.dataclass
    class D:
        a: Any
        m: str

    reg.register_dataclass_node(D, ["a"], ["m"])
    assert tu.tree_leaves(D([1, 2], "s")) == [1, 2]
    assert repr(reg) == "functrace.tree_util.default_registry"
    assert pickle.loads(pickle.dumps(tu.tree_structure({"a": (1, Pt(1, 2))}))).num_leaves == 3


def test_tree_static() -> None:
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: Any
        mode: str = ft.tree.static(default="add", metadata={"doc": "kept"})

    assert ft.tree.leaves(Op(1.0)) == [1.0]
    assert ft.tree.structure(Op(1.0)) != ft.tree.structure(Op(1.0, "mul"))
    assert dataclasses.fields(Op)[1].metadata == {"static": True, "doc": "kept"}


def test_tree_has_jaxs_short_names() -> None:
    jax_tree_names = {  # dir(jax.tree) in JAX 0.10.2
        "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
        "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
        "transpose", "unflatten",
    }  # fmt: skip
    assert jax_tree_names <= set(ft.tree.__all__)
    jax_tree_util_new = {
        "default_registry", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
        "register_pytree_with_keys_class", "tree_broadcast", "tree_reduce_associative",
    }  # fmt: skip
    assert jax_tree_util_new <= set(tu.__all__)


# ---------------------------------------------------------------------------
# tree_util: properties
# ---------------------------------------------------------------------------


def _balanced(xs: list[Any]) -> Any:
    """The definition: split at n // 2, reduce both halves, combine."""
    if len(xs) == 1:
        return xs[0]
    return ("op", _balanced(xs[: len(xs) // 2]), _balanced(xs[len(xs) // 2 :]))


@SETTINGS
@given(trees)
def test_reduce_associative_is_the_balanced_reduction(tree: Any) -> None:
    leaves = tu.tree_leaves(tree)
    got = tu.tree_reduce_associative(lambda a, b: ("op", a, b), tree, identity="id")
    assert got == (_balanced(leaves) if leaves else "id")
    if leaves:  # an associative operation gives the sequential reduction
        assert tu.tree_reduce_associative(operator.add, tree) == tu.tree_reduce(operator.add, tree)


@SETTINGS
@given(trees)
def test_flatten_one_level_rebuilds_the_node(tree: Any) -> None:
    nd = tu.node_of(tree)
    if nd is None:
        assert not tu.is_tree_node(type(tree))
        assert tu.default_registry.flatten_one_level(tree) is None
        return
    assert tu.is_tree_node(type(tree))
    children, _ = tu.flatten_one_level(tree)
    td = tu.tree_structure(tree)
    # Children are the node's subtrees: their structures are the treedef's children.
    assert [tu.tree_structure(c) for c in children] == td.children()
    assert td.node_def().unflatten(td.node_data()[1], list(children)) == tree  # type: ignore[union-attr]
    pairs, _ = tu.flatten_one_level_with_keys(tree)
    assert [c for _, c in pairs] == list(children)
    paths = [p for p, _ in tu.tree_flatten_with_path(tree)[0]]
    firsts = {p[0] for p in paths}
    assert firsts <= {k for k, _ in pairs}


@SETTINGS
@given(trees, st.integers(0, 3))
def test_broadcast_of_a_prefix(full: Any, depth: int) -> None:
    # The prefix: ``full`` with every subtree at ``depth`` replaced by a numbered leaf.
    counter = iter(range(1000))

    def cut(t: Any, d: int) -> Any:
        td = tu.tree_structure(t)
        if d == 0 or tu.treedef_is_leaf(td):
            return next(counter)
        nd, aux = td.node_def(), td.node_data()[1]  # type: ignore[index]
        return nd.unflatten(aux, [cut(c, d - 1) for c in tu.flatten_one_level(t)[0]])  # type: ignore[union-attr]

    prefix = cut(full, depth)
    got = tu.tree_broadcast(prefix, full)
    assert tu.tree_structure(got) == tu.tree_structure(full)
    # The definition: a full leaf gets the prefix leaf whose key path starts its own.
    prefix_paths = tu.tree_flatten_with_path(prefix)[0]
    for (path, value), (gpath, _) in zip(
        tu.tree_flatten_with_path(got)[0], tu.tree_flatten_with_path(full)[0], strict=True
    ):
        assert path == gpath
        owners = [v for p, v in prefix_paths if path[: len(p)] == p]
        assert owners == [value]


@SETTINGS
@given(trees)
def test_broadcast_of_itself_and_a_scalar(tree: Any) -> None:
    assert tu.tree_broadcast(tree, tree) == tree
    n = tu.tree_structure(tree).num_leaves
    assert tu.tree_leaves(tu.tree_broadcast(0.5, tree)) == [0.5] * n


# ---------------------------------------------------------------------------
# The config context managers
# ---------------------------------------------------------------------------


def test_enable_x64() -> None:
    with ft.enable_x64(True):
        assert ft.numpy.ones(2).dtype == np.float64
        assert ft.jit(lambda x: x * 2)(np.ones(2)).dtype == np.float64
    with pytest.raises(NotImplementedError, match=r"enable_x64\(False\).*no 32-bit mode"):
        with ft.enable_x64(False):
            pass
    with pytest.raises(TypeError, match="enable_x64: expected True or False"):
        with ft.enable_x64("yes"):  # type: ignore[arg-type]
            pass


def test_numpy_dtype_promotion() -> None:
    with ft.numpy_dtype_promotion("standard"):
        assert (ft.numpy.ones(2, np.float32) + ft.numpy.ones(2)).dtype == np.float64
    with ft.numpy_dtype_promotion("strict"):  # (tests/test_strict_promotion.py)
        with pytest.raises(ft.dtypes.TypePromotionError, match="add: expected operands of one"):
            ft.numpy.add(ft.numpy.ones(2, np.float32), ft.numpy.ones(2))
    with pytest.raises(ValueError, match="expected 'standard' or 'strict', got 'loose'"):
        with ft.numpy_dtype_promotion("loose"):
            pass


def test_default_matmul_precision_has_no_effect() -> None:
    a = np.arange(6.0).reshape(2, 3)
    for p in ("highest", "bfloat16", "float32", "default", None, "ANY_F8_ANY_F8_F32"):
        with ft.default_matmul_precision(p):
            np.testing.assert_array_equal(ft.jit(lambda x: x @ x.T)(a), a @ a.T)
    with pytest.raises(ValueError, match="default_matmul_precision: expected one of"):
        with ft.default_matmul_precision("best"):
            pass
    with pytest.raises(TypeError, match="default_matmul_precision: expected None or"):
        with ft.default_matmul_precision(3):  # type: ignore[arg-type]
            pass


def test_tracer_leak_checks_are_accepted_and_leaks_still_raise() -> None:
    leaked = []
    for cm in (ft.check_tracer_leaks(True), ft.check_tracer_leaks(False), ft.checking_leaks()):
        with cm:
            ft.grad(lambda x: leaked.append(x) or x * 2)(1.0)
    with pytest.raises(ft.UnexpectedTracerError):
        leaked[0] + 1
    with pytest.raises(TypeError, match="check_tracer_leaks: expected True or False"):
        with ft.check_tracer_leaks("on"):  # type: ignore[arg-type]
            pass


def test_log_compiles(caplog: pytest.LogCaptureFixture) -> None:
    def scaled(x: Any) -> Any:
        return x * 3

    f = ft.jit(scaled)
    with caplog.at_level(logging.WARNING, logger="functrace.jit"):
        f(np.ones(2))  # compiled without logging
        with ft.log_compiles(True):
            assert ft.config.log_compiles and ft.config.read("jax_log_compiles")
            f(np.ones(2))  # a hit: no line
            f(np.ones((2, 2), np.float32))
        f(np.ones(4))
    assert not ft.config.log_compiles
    lines = [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
    assert len(lines) == 1 and "scaled" in lines[0] and "f32[2,2]" in lines[0]


def test_default_device() -> None:
    for dev in (None, ft.devices()[0], "cpu"):
        with ft.default_device(dev):
            assert float(ft.jit(lambda x: x + 1)(1.0)) == 2.0
    with pytest.raises(ValueError, match="default_device: .*got 'gpu'"):
        with ft.default_device("gpu"):
            pass
    with pytest.raises(TypeError, match="default_device: expected None.*got int"):
        with ft.default_device(0):
            pass


def test_print_environment_info(capsys: pytest.CaptureFixture[str]) -> None:
    text = ft.print_environment_info(return_string=True)
    assert text is not None
    for word in ("functrace:", "numpy:", "numba:", "python:", "platform:", "threads"):
        assert word in text
    assert np.__version__ in text
    assert ft.print_environment_info() is None
    assert capsys.readouterr().out == text
