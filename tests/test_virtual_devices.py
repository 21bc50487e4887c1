"""Virtual CPU devices (``config.num_cpu_devices``, JAX's ``jax_num_cpu_devices``, or
XLA's ``--xla_force_host_platform_device_count``): programs written for N devices list
them, build meshes from them and assemble global arrays from shards. The expected
index maps and device ids below are JAX 0.10.2's with eight CPU devices."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.experimental import mesh_utils
from functrace.sharding import Mesh, NamedSharding
from functrace.sharding import PartitionSpec as P


@pytest.fixture
def eight():
    ft.config.update("jax_num_cpu_devices", 8)
    yield ft.devices()
    ft.config.update("jax_num_cpu_devices", -1)


def test_default_is_one_device() -> None:
    assert ft.devices() == [ft.devices()[0]] and ft.device_count() == 1
    assert repr(ft.devices()[0]) == "CpuDevice(id=0)"


def test_devices_listed_and_counted(eight) -> None:
    assert [d.id for d in eight] == list(range(8))
    assert ft.device_count() == ft.local_device_count() == 8
    assert ft.local_devices() == eight and ft.devices() == eight  # one object per id
    assert ft.config.read("jax_num_cpu_devices") == 8
    assert all(d.platform == "cpu" and d.process_index == 0 for d in eight)
    import pickle

    assert pickle.loads(pickle.dumps(eight[5])) is eight[5]


def test_xla_flags_give_the_default() -> None:
    code = (
        "import functrace as ft; "
        "print(ft.device_count(), ft.make_mesh((2, 4), ('x', 'y')).device_ids.tolist())"
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split(maxsplit=1) == ["8", "[[0, 1, 2, 3], [4, 5, 6, 7]]\n"]


def test_override_puts_back_the_xla_flags_default(monkeypatch) -> None:
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    assert ft.device_count() == 4
    with ft.config.override(num_cpu_devices=2):
        assert ft.device_count() == 2
    assert ft.device_count() == 4  # unset again, not pinned to the value read before
    monkeypatch.setenv("XLA_FLAGS", "")
    assert ft.device_count() == 1


def test_bad_counts() -> None:
    for bad in (0, -3, 2.5, "8"):
        with pytest.raises(ValueError, match="expected a device count >= 1"):
            ft.config.update("jax_num_cpu_devices", bad)


def test_meshes_hold_the_devices_in_order(eight) -> None:
    mesh = Mesh(np.array(eight).reshape(2, 4), ("x", "y"))
    np.testing.assert_array_equal(mesh.device_ids, [[0, 1, 2, 3], [4, 5, 6, 7]])
    np.testing.assert_array_equal(
        ft.make_mesh((4, 2), ("a", "b")).device_ids, [[0, 1], [2, 3], [4, 5], [6, 7]]
    )
    assert [d.id for d in mesh_utils.create_device_mesh((2, 4)).flat] == list(range(8))
    # fewer positions take the first devices (as JAX); more make a virtual mesh
    np.testing.assert_array_equal(ft.make_mesh((4,), ("a",)).device_ids, [0, 1, 2, 3])
    np.testing.assert_array_equal(ft.make_mesh((16,), ("a",)).device_ids, [0] * 16)


# (spec, global shape) -> JAX's shard shape and {device id: ((start, stop), ...)}
JAX_INDEX_MAPS = {
    (P("x", "y"), (4, 8)): (
        (2, 2),
        {
            0: ((0, 2), (0, 2)),
            1: ((0, 2), (2, 4)),
            2: ((0, 2), (4, 6)),
            3: ((0, 2), (6, 8)),
            4: ((2, 4), (0, 2)),
            5: ((2, 4), (2, 4)),
            6: ((2, 4), (4, 6)),
            7: ((2, 4), (6, 8)),
        },
    ),
    (P(("y", "x")), (16,)): (
        (2,),
        {
            0: ((0, 2),),
            1: ((4, 6),),
            2: ((8, 10),),
            3: ((12, 14),),
            4: ((2, 4),),
            5: ((6, 8),),
            6: ((10, 12),),
            7: ((14, 16),),
        },
    ),
    (P(None, "x"), (3, 4)): (
        (3, 2),
        {i: ((None, None), (0, 2) if i < 4 else (2, 4)) for i in range(8)},
    ),
    (P("y"), (8, 2)): (
        (2, 2),
        {i: ((2 * (i % 4), 2 * (i % 4) + 2), (None, None)) for i in range(8)},
    ),
}


@pytest.mark.parametrize("case", list(JAX_INDEX_MAPS), ids=str)
def test_index_maps_are_jax(eight, case) -> None:
    spec, shape = case
    want_shard, want = JAX_INDEX_MAPS[case]
    s = NamedSharding(Mesh(np.array(eight).reshape(2, 4), ("x", "y")), spec)
    assert s.shard_shape(shape) == want_shard and s.num_devices == 8
    got = {
        d.id: tuple((i.start, i.stop) for i in idx)
        for d, idx in s.addressable_devices_indices_map(shape).items()
    }
    assert got == want


@pytest.mark.parametrize("n_devices", [1, 8])
def test_global_arrays_from_shards(n_devices) -> None:
    ft.config.update("jax_num_cpu_devices", n_devices)
    try:
        mesh = ft.make_mesh((2, 4), ("x", "y"))
        g = np.arange(32.0).reshape(4, 8)
        for spec in (P("x", "y"), P("y"), P(None, ("x", "y")), P()):
            s = NamedSharding(mesh, spec)
            calls: list = []
            a = ft.make_array_from_callback(
                g.shape, s, lambda idx, calls=calls: calls.append(idx) or g[idx]
            )
            assert type(a) is ft.Array
            np.testing.assert_array_equal(a, g)
            assert len(calls) == len({tuple((i.start, i.stop) for i in c) for c in calls})
            where = s._position_indices(g.shape)
            b = ft.make_array_from_single_device_arrays(
                g.shape, s, [ft.device_put(g[idx], d) for d, idx in where]
            )
            np.testing.assert_array_equal(b, g)
        np.testing.assert_array_equal(
            ft.make_array_from_process_local_data(NamedSharding(mesh, P("x")), g), g
        )
    finally:
        ft.config.update("jax_num_cpu_devices", -1)


def test_shard_errors_name_the_function() -> None:
    mesh = ft.make_mesh((2,), ("x",))
    s = NamedSharding(mesh, P("x"))
    with pytest.raises(ValueError, match="make_array_from_callback: expected a shard of shape"):
        ft.make_array_from_callback((4,), s, lambda idx: np.zeros(3))
    with pytest.raises(ValueError, match="divisible by its 2 shards"):
        ft.make_array_from_callback((5,), s, lambda idx: np.zeros(2))
    with pytest.raises(ValueError, match="one array per mesh position \\(2\\), got 1"):
        ft.make_array_from_single_device_arrays((4,), s, [np.zeros(2)])
    with pytest.raises(TypeError, match="expected a NamedSharding"):
        ft.make_array_from_callback((4,), "x", lambda idx: np.zeros(2))
    with pytest.raises(ValueError, match="one process holds all the data"):
        ft.make_array_from_process_local_data(s, np.zeros(4), (8,))


def test_programs_written_for_eight_devices(eight) -> None:
    # a data-parallel gradient over a mesh built from the device list, and pmap over
    # every local device: the values of one device's computation
    mesh = Mesh(np.array(eight), ("batch",))
    x = np.linspace(-1.0, 1.0, 32).reshape(16, 2)
    w = np.array([0.5, -2.0])

    def loss(w, xb):
        return fnp.sum((xb @ w) ** 2)

    def step(w, xb):
        return ft.lax.psum(ft.grad(loss)(w, xb), "batch")

    # JAX's default check_vma: the gradient of the replicated w is summed by itself
    whole = ft.grad(loss)(w, x)
    specs = {"mesh": mesh, "in_specs": (P(), P("batch")), "out_specs": P()}
    dp = ft.jit(ft.shard_map(lambda w, xb: ft.grad(loss)(w, xb), **specs))
    np.testing.assert_allclose(dp(w, x), whole, rtol=1e-13)
    dp = ft.jit(ft.shard_map(step, **specs, check_vma=False))  # each shard's own, summed
    np.testing.assert_allclose(dp(w, x), whole, rtol=1e-13)
    per_device = ft.pmap(lambda xb: fnp.sum(xb))(x.reshape(ft.local_device_count(), 2, 2))
    np.testing.assert_allclose(per_device, x.reshape(8, 4).sum(1))
    y = ft.device_put(x, NamedSharding(mesh, P("batch")))
    np.testing.assert_array_equal(y, x)


def test_devices_are_shared_across_threads(eight) -> None:
    seen: list[list[int]] = []

    def run() -> None:
        seen.append([d.id for d in ft.devices()])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [list(range(8))] * 4


def test_process_names_of_jax(eight) -> None:
    # one process: JAX's older host_* names and process_indices agree with process_*
    assert ft.process_indices() == ft.host_ids() == [0]
    assert ft.host_count() == ft.process_count() == 1 and ft.host_id() == 0
    assert all(isinstance(d, ft.Device) for d in eight)
    x = fnp.arange(3.0)
    assert ft.copy_to_host_async(x) is x and ft.effects_barrier() is None
    with pytest.raises(ValueError, match="process_indices: expected backend"):
        ft.process_indices("gpu")
