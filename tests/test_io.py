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
    with pytest.raises(ValueError, match="expected `like`"):
        io.load(tmp_path / "m.npz")


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
    with pytest.raises(ValueError, match="load: expected"):
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
