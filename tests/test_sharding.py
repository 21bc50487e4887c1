"""``functrace.sharding``: ``shard_map`` over virtual meshes against JAX's numbers on 4
devices (recorded from ``shard_map_cases.py``), its derivatives and transforms, the
placement calls, threads and errors."""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.sharding import Mesh, NamedSharding, PartitionSpec, make_mesh, shard_map
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from shard_map_cases import V, W, X, cases

P = PartitionSpec
M1 = make_mesh((4,), ("i",))
M2 = make_mesh((2, 2), ("a", "b"))


def test_values_match_jax_on_four_devices():
    assert_matches_recorded(cases(ft), "shard_map_jax.npz", lambda k, v: 1e-12)


def test_reverse_mode_inside_bodies_matches_jax_check_vma():
    from shard_map_vma_cases import cases as vma_cases

    assert_matches_recorded(vma_cases(ft), "shard_map_vma_jax.npz", lambda k, v: 1e-12)


def test_gradients_jit_and_vmap_equal_the_unsharded_program():
    def body(x, w):
        return lax.psum(fnp.sum(fnp.tanh(x @ w) ** 2), "a")

    f = shard_map(body, mesh=M2, in_specs=(P("a"), P()), out_specs=P(), axis_names={"a"})
    want = np.sum(np.tanh(X @ W) ** 2)
    np.testing.assert_allclose(f(X, W), want, rtol=1e-13)
    np.testing.assert_allclose(ft.jit(f)(X, W), want, rtol=1e-13)
    check_grads(f, (X, W), order=2, modes=("fwd", "rev"))
    g = ft.grad(f, argnums=1)(X, W)
    np.testing.assert_allclose(g, ft.grad(lambda w: fnp.sum(fnp.tanh(X @ w) ** 2))(W), rtol=1e-12)

    # a sharded elementwise map is the map, under vmap and grad of vmap too
    sq = shard_map(lambda v: fnp.sin(v) * v, mesh=M1, in_specs=P("i"), out_specs=P("i"))
    batch = np.stack([V, 2 * V])
    np.testing.assert_allclose(ft.vmap(sq)(batch), np.sin(batch) * batch, rtol=1e-14)
    gv = ft.grad(lambda b: fnp.sum(ft.vmap(sq)(b)))(batch)
    np.testing.assert_allclose(gv, np.cos(batch) * batch + np.sin(batch), rtol=1e-13)


def test_decorator_context_mesh_and_partial_manual_axes():
    @partial(shard_map, in_specs=P("i"), out_specs=P("i"))
    def scaled(v):
        return v * (lax.axis_index("i") + 1.0)

    with M1:
        got = scaled(V)
    np.testing.assert_allclose(got, V * np.repeat([1.0, 2.0, 3.0, 4.0], 2))
    with pytest.raises(ValueError, match="shard_map: expected a mesh"):
        scaled(V)
    # only "a" is manual: the function sees whole rows along "b"
    rows = shard_map(lambda x: x.shape[0] * fnp.ones_like(x), mesh=M2, in_specs=P("a"),
                     out_specs=P("a"), axis_names={"a"})  # fmt: skip
    np.testing.assert_allclose(rows(X), np.full(X.shape, 4.0))
    from functrace.experimental.shard_map import shard_map as old

    f = old(lambda x: x.shape[0] * fnp.ones_like(x), M2, P("a"), P("a"), auto=frozenset({"b"}))
    np.testing.assert_allclose(f(X), np.full(X.shape, 4.0))


def test_meshes_in_threads_are_their_own():
    results = {}

    def run(mesh, key):
        with mesh:
            f = shard_map(lambda v: lax.psum(v, mesh.axis_names[0]), in_specs=P(mesh.axis_names[0]),
                          out_specs=P())  # fmt: skip
            for _ in range(20):
                results[key] = np.asarray(f(V))

    threads = [
        threading.Thread(target=run, args=(make_mesh((n,), (f"x{n}",)), n)) for n in (2, 4, 8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in (2, 4, 8):
        np.testing.assert_allclose(results[n], V.reshape(n, -1).sum(axis=0), rtol=1e-14)


def test_placement_is_the_identity():
    s = NamedSharding(M2, P("a", None))
    x = ft.device_put(X, s)
    assert type(x) is ft.Array and np.array_equal(x, X)
    assert not s.is_fully_replicated and NamedSharding(M2, P()).is_fully_replicated
    np.testing.assert_array_equal(lax.with_sharding_constraint(X, s), X)
    np.testing.assert_array_equal(
        ft.jit(lambda v: lax.with_sharding_constraint(v * 2, s))(X), 2 * X
    )
    assert M2.shape == {"a": 2, "b": 2} and M2.size == 4 and M2 == make_mesh((2, 2), ("a", "b"))
    assert ft.P is PartitionSpec and repr(P("a", None)) == "PartitionSpec('a', None)"
    mesh = Mesh(np.array(ft.devices()), ("x",))
    assert mesh.shape == {"x": 1}


def test_bad_specs_and_meshes_name_the_function():
    f = partial(shard_map, mesh=M1)
    with pytest.raises(ValueError, match=r"shard_map: expected mesh axis names \('i',\)"):
        f(lambda v: v, in_specs=P("j"), out_specs=P("i"))(V)
    with pytest.raises(ValueError, match="divisible by the mesh axes"):
        f(lambda v: v, in_specs=P("i"), out_specs=P("i"))(np.ones(6))
    with pytest.raises(ValueError, match="at most 1 entries"):
        f(lambda v: v, in_specs=P("i", None), out_specs=P("i"))(V)
    with pytest.raises(ValueError, match="expected in_specs"):
        f(lambda v: v, out_specs=P("i"))(V)
    with pytest.raises(ValueError, match="pytree prefix"):
        f(lambda v, w: v, in_specs=(P("i"), P(), P()), out_specs=P("i"))(V, V)
    with pytest.raises(ValueError, match="varies along it .* check_vma=False the first"):
        f(lambda x: x * 2.0, in_specs=P("i"), out_specs=P())(X)
    # JAX's default check_vma: a replicated value's gradient is summed over the axis
    g = f(lambda w, x: ft.grad(lambda w: fnp.sum(x @ w))(w), in_specs=(P(), P("i")),
          out_specs=P())(W, X)  # fmt: skip
    np.testing.assert_allclose(g, ft.grad(lambda w: fnp.sum(X @ w))(W), rtol=1e-12)
    first = f(lambda v: v, in_specs=P("i"), out_specs=P(), check_vma=False)(V)
    np.testing.assert_array_equal(first, V[:2])
    with pytest.raises(ValueError, match="each mesh axis once"):
        shard_map(lambda v: v, mesh=M2, in_specs=P("a", "a"), out_specs=P())(X)
    with pytest.raises(ValueError, match="Mesh: expected one axis name per dimension"):
        Mesh(np.array(ft.devices()), ("x", "y"))
    with pytest.raises(TypeError, match="Mesh: expected devices from functrace.devices"):
        Mesh(np.array([1]), ("x",))
    with pytest.raises(ValueError, match="make_mesh: expected positive int mesh sizes"):
        make_mesh((0,), ("x",))
    with pytest.raises(TypeError, match="PartitionSpec: expected entries None"):
        P(3)
    with pytest.raises(TypeError, match="device_put: expected device=None"):
        ft.device_put(X, 3)
