"""Checkpoints: round trips, atomic writes, structure/shape/dtype checks, corruption."""

from __future__ import annotations

import os

import numpy as np
import pytest

from functrace import io, nn, optim


def test_roundtrip_plain_tree(tmp_path) -> None:
    tree = {"a": np.arange(3.0), "b": [np.float32(1.5), (np.ones((2, 2)), None)], "c": 7}
    path = tmp_path / "ckpt.npz"
    io.save(path, tree)
    out = io.load(path)
    np.testing.assert_array_equal(out["a"], tree["a"])
    assert out["b"][1][1] is None and isinstance(out["b"][1], tuple)
    assert int(out["c"]) == 7


def test_roundtrip_module_and_optimizer_state(tmp_path) -> None:
    model = nn.MLP([4, 5, 3], rng=0, dtype=np.float64)
    opt = optim.adam(1e-3)
    state = opt.init(model)
    io.save(tmp_path / "m.npz", {"model": model, "opt": state})
    like = {"model": nn.MLP([4, 5, 3], rng=1, dtype=np.float64), "opt": state}
    out = io.load(tmp_path / "m.npz", like=like)
    assert type(out["model"]) is nn.MLP
    np.testing.assert_array_equal(out["model"].layers[0].weight, model.layers[0].weight)
    assert type(out["opt"][0]).__name__ == "ScaleByAdamState"
    plain = io.load(tmp_path / "m.npz")  # functrace's modules and states need no `like`
    assert type(plain["model"]) is nn.MLP and plain["model"].activation is nn.relu
    assert type(plain["opt"][0]) is type(state[0])
    # A user-defined activation is not stored by name: such a tree loads with `like`.
    custom = nn.MLP([2, 2], rng=0, activation=lambda x: x)
    io.save(tmp_path / "u.npz", custom)
    with pytest.raises(io.CheckpointError, match="expected `like`.*lambda"):
        io.load(tmp_path / "u.npz")
    assert type(io.load(tmp_path / "u.npz", like=custom)) is nn.MLP


def test_load_checks_structure_shape_dtype(tmp_path) -> None:
    io.save(tmp_path / "c.npz", {"w": np.ones(3), "b": np.zeros(1)})
    with pytest.raises(ValueError, match=r"first differing path"):
        io.load(tmp_path / "c.npz", like={"w": np.ones(3), "x": np.zeros(1)})
    with pytest.raises(ValueError, match=r"expected shape \(4,\) at \['w'\], got \(3,\)"):
        io.load(tmp_path / "c.npz", like={"w": np.ones(4), "b": np.zeros(1)})
    with pytest.raises(TypeError, match=r"expected dtype float32 at \['w'\]"):
        io.load(tmp_path / "c.npz", like={"w": np.ones(3, np.float32), "b": np.zeros(1)})


def test_truncated_and_garbage_files(tmp_path) -> None:
    path = tmp_path / "c.npz"
    io.save(path, {"w": np.arange(1000.0)})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupted or truncated"):
        io.load(path)
    (tmp_path / "g.npz").write_bytes(b"not a checkpoint at all")
    with pytest.raises(io.CheckpointError, match=r"load: .*g.npz.*expected"):
        io.load(tmp_path / "g.npz")
    np.savez(tmp_path / "plain.npz", x=np.ones(2))
    with pytest.raises(ValueError, match="functrace checkpoint"):
        io.load(tmp_path / "plain.npz")


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch) -> None:
    path = tmp_path / "c.npz"
    io.save(path, {"w": np.ones(2)})

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError, match="disk full"):
        io.save(path, {"w": np.zeros(2)})
    monkeypatch.undo()
    np.testing.assert_array_equal(io.load(path)["w"], np.ones(2))
    assert [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")] == []


def test_describe(tmp_path) -> None:
    io.save(tmp_path / "c.npz", {"w": np.ones((2, 3), np.float32)})
    assert io.describe(tmp_path / "c.npz") == {"['w']": ((2, 3), np.dtype(np.float32))}


# ---------------------------------------------------------------------------
# "Stored state you can trust", item 1: exact round trips, versions, rotation
# ---------------------------------------------------------------------------

import collections  # noqa: E402
import dataclasses  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
from typing import Any, NamedTuple  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from functrace import tree_util  # noqa: E402
from functrace._tree_nodes import aux_eq  # noqa: E402


class Point(NamedTuple):
    x: Any
    y: Any


@tree_util.register_dataclass
@dataclasses.dataclass
class Pair:
    a: Any
    b: Any
    tag: str = dataclasses.field(default="t", metadata={"static": True})


class Block(nn.Module):
    w: Any
    scale: float = nn.field(static=True)


def _same(a: Any, b: Any) -> bool:
    """Equal types, structure, dict key order, dtypes, shapes, layouts and bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype
            and a.dtype.str == b.dtype.str
            and a.shape == b.shape
            and a.flags.f_contiguous == b.flags.f_contiguous
            and a.tobytes() == b.tobytes()
        )
    if isinstance(a, np.generic):
        return a.dtype.str == b.dtype.str and np.asarray(a).tobytes() == np.asarray(b).tobytes()
    if type(a) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) is complex:
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    if isinstance(a, dict):
        ka, kb = list(a), list(b)
        return (
            [(type(k), k) for k in ka] == [(type(k), k) for k in kb]
            and (type(a) is not collections.defaultdict or a.default_factory is b.default_factory)
            and all(_same(a[k], b[k]) for k in ka)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    nd = tree_util.node_of(a)
    if nd is not None:  # registered classes and modules: aux data and children
        ca, aa = nd.flatten(a)
        cb, ab = nd.flatten(b)
        return aux_eq(aa, ab) and all(_same(x, y) for x, y in zip(ca, cb))
    return a == b


_DTYPES = [
    "?", "i1", "i2", "<i4", ">i2", "i8", "u1", "u2", "u4", "u8", "f2", "<f4", ">f8", "f8", "g",
    "c8", "c16", "G", "M8[s]", "m8[ms]", "S4", "U3", [("x", "<i4"), ("y", ">f8")],
]  # fmt: skip

_arrays = st.sampled_from(_DTYPES).flatmap(
    lambda dt: hnp.arrays(
        np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
    )
)
_leaves = st.one_of(
    _arrays,
    _arrays.map(lambda a: np.asfortranarray(a) if a.ndim == 2 else a),
    _arrays.filter(lambda a: a.ndim == 0).map(lambda a: a[()]),  # NumPy scalars
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True),
    st.booleans(),
    st.text(max_size=4),
    st.binary(max_size=4),
)
_keys = st.one_of(st.text(max_size=3), st.integers(-5, 5))


def _containers(children: Any) -> Any:
    return st.one_of(
        st.none(),
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=3),
        # mixed key types: a plain dict of them cannot be flattened (its keys cannot be
        # sorted, an error as in JAX); an OrderedDict keeps their order
        st.dictionaries(_keys, children, max_size=3).map(collections.OrderedDict),
        st.dictionaries(st.text(max_size=2), children, max_size=2).map(collections.OrderedDict),
        st.dictionaries(st.integers(0, 9), children, max_size=2).map(
            lambda d: collections.defaultdict(list, d)
        ),
        st.builds(Point, children, children),
        st.builds(Pair, children, children, st.sampled_from(["t", "u"])),
        st.builds(Block, children, st.floats(-2, 2)),
    )


_trees = st.recursive(_leaves, _containers, max_leaves=8)


@given(_trees)
def test_item1_hypothesis_trees_roundtrip_bit_for_bit(tree) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.npz")
        io.save(path, tree)
        assert _same(io.load(path), tree)
        assert _same(io.load(path, like=tree), tree)


def test_item1_dict_key_order_without_like(tmp_path) -> None:
    io.save(tmp_path / "c.npz", {"b": np.ones(2), "a": np.zeros(3)})
    out = io.load(tmp_path / "c.npz")
    assert list(out) == ["b", "a"]
    np.testing.assert_array_equal(out["b"], np.ones(2))
    np.testing.assert_array_equal(out["a"], np.zeros(3))


def test_item1_edge_trees_roundtrip(tmp_path) -> None:
    trees = [
        {},
        [],
        (),
        None,
        {"e": [[], {}, ()], "z": np.zeros((0, 3)), "s": np.float32(2.5), "o": np.array(7)},
        Point(np.arange(2), {"q": 1}),
        Block(np.ones(2), 0.5),
        np.zeros((2, 0, 5), np.complex64),
    ]
    for i, tree in enumerate(trees):
        io.save(tmp_path / f"{i}.npz", tree)
        assert _same(io.load(tmp_path / f"{i}.npz"), tree), tree


def test_item1_format_version_field(tmp_path) -> None:
    import json
    import zipfile

    io.save(tmp_path / "c.npz", {"w": np.ones(2)})
    with zipfile.ZipFile(tmp_path / "c.npz") as z, z.open("__meta__.npy") as f:
        meta = json.loads(np.lib.format.read_array(f).tobytes())
    assert meta["format"] == io.FORMAT and meta["version"] == io.VERSION == 2


def test_item1_version1_files_still_load(tmp_path) -> None:
    # A file as the version-1 writer made it: leaves in sorted-key order, the structure
    # in insertion order.
    import json

    meta = {
        "format": "functrace-checkpoint-1",
        "paths": ["['a']", "['b']"],
        "structure": {"t": "dict", "c": {"b": {"t": "leaf"}, "a": {"t": "leaf"}}},
    }
    meta_arr = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(tmp_path / "v1.npz", __meta__=meta_arr, leaf_0=np.zeros(3), leaf_1=np.ones(2))
    out = io.load(tmp_path / "v1.npz")
    assert list(out) == ["b", "a"]
    np.testing.assert_array_equal(out["a"], np.zeros(3))
    np.testing.assert_array_equal(out["b"], np.ones(2))


def test_item1_checkpoint_error_is_documented_value_error(tmp_path) -> None:
    assert issubclass(io.CheckpointError, ValueError)
    np.save(tmp_path / "plain.npy", np.ones(3))
    with pytest.raises(io.CheckpointError, match=r"plain.npy.*plain \.npy file"):
        io.load(tmp_path / "plain.npy")


def test_item1_save_checkpoint_keep_and_latest(tmp_path) -> None:
    d = tmp_path / "ckpts"
    assert io.latest_checkpoint(d) is None
    for step in range(6):
        path = io.save_checkpoint(d, step, {"step": step, "w": np.full(2, step)}, keep=3)
        assert path == io.checkpoint_path(d, step)
    names = sorted(p for p in os.listdir(d))
    assert names == [f"checkpoint_{s:08d}.npz" for s in (3, 4, 5)]
    assert io.latest_checkpoint(d) == io.checkpoint_path(d, 5)
    assert io.load(io.latest_checkpoint(d))["step"] == 5
    (d / f".tmp-ft-{2**22 + 7}-x.npz").write_bytes(b"half a file")  # never picked up
    assert io.latest_checkpoint(d) == io.checkpoint_path(d, 5)
    io.save_checkpoint(d, 6, {"step": 6, "w": np.full(2, 6)})  # keep=None keeps all
    assert len(os.listdir(d)) == 4  # the temp file of a dead process is gone
    with pytest.raises(ValueError, match="keep"):
        io.save_checkpoint(d, 7, {}, keep=0)
    with pytest.raises(TypeError, match="step"):
        io.save_checkpoint(d, -1, {})
