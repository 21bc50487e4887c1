"""The small JAX names: ``dtypes.result_type``, ``debug.visualize_sharding``,
``lax.conv_general_dilated_local``, ``lax.ragged_dot_general`` and the lax shape
helpers (against JAX's recorded values, from ``api_small_cases.py``), the sharding
context names, ``experimental.multihost_utils``,
``debug.inspect_array_sharding`` and ``debug.log``, ``TypePromotionError``,
``prng_key``/``extended``,
``random.key_dtype``, the ``errors`` classes, the ``custom_derivatives`` re-exports and
the config context managers."""

from __future__ import annotations

import contextlib
import io
import logging

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from api_small_cases import (
    LOCAL_ARGS,
    LOCAL_CONVS,
    OPERANDS,
    PAIRS,
    RAGGED,
    RAGGED_ARGS,
    cases,
    lax_cases,
    visualize_cases,
)
from functrace import dtypes, errors
from functrace.test_util import check_grads
from recorded import FIXTURES


def _is_weak(x):
    return not isinstance(x, np.dtype) and not isinstance(x, bool)


def _dtype(x):
    return x if isinstance(x, np.dtype) else np.asarray(x).dtype


def test_result_type_matches_jax_except_the_documented_differences():
    want = np.load(FIXTURES / "api_small_jax.npz")
    got = cases(ft)
    assert sorted(got) == sorted(k for k in want.files if k.startswith("result_type/"))
    rows = zip(PAIRS, got["result_type/dtype"], got["result_type/weak"],
               want["result_type/dtype"], want["result_type/weak"], strict=True)  # fmt: skip
    n_dtype = n_weak = 0
    for (i, j), dt, weak, jdt, jweak in rows:
        a, b = OPERANDS[i], OPERANDS[j]
        kinds = {_dtype(a).kind, _dtype(b).kind}
        # functrace's weak flag: every operand weak (Python bools are not weak)
        assert weak == (_is_weak(a) and _is_weak(b)), (a, b)
        if dt != jdt:  # (1) an integer or bool array with an inexact one: NumPy's dtype
            n_dtype += 1
            assert not _is_weak(a) and not _is_weak(b) and kinds & set("biu"), (a, b)
            assert kinds & set("fc") and dt == np.promote_types(_dtype(a), _dtype(b)).name
        if weak != jweak:  # (2) JAX also calls some mixed results weak
            n_weak += 1
            assert jweak and not weak and dt == jdt and kinds & set("biu"), (a, b)
    assert (n_dtype, n_weak) == (14, 26)  # of 171 pairs; the rest agree


def test_result_type_takes_values_tracers_and_dtypes_and_checks_them():
    rt = dtypes.result_type
    x32 = np.ones(2, np.float32)
    assert rt(x32, 2.0) == np.float32 and rt(np.int8(1), "uint8") == np.int16
    assert rt(fnp.ones(2, dtype="int32"), 1, return_weak_type_flag=True) == (np.int32, False)
    assert rt(True, return_weak_type_flag=True) == (np.bool_, False)
    seen = []

    def f(x):
        seen.append(rt(x, 2.0, return_weak_type_flag=True))
        seen.append(rt(x * 2, x32, return_weak_type_flag=True))
        return x * 2.0

    ft.grad(f)(1.0)
    ft.jit(f)(3.0)
    ft.vmap(f)(np.ones(3, np.float32))
    want_weak = [(np.float64, True), (np.float32, False)]
    assert seen == want_weak * 2 + [(np.float32, False)] * 2
    for bad, exc, msg in [
        ((), ValueError, "at least one"),
        (([1],), TypeError, "got list"),
        ((None,), TypeError, "got NoneType"),
        (("U3", np.float32), TypeError, "numeric or boolean"),
        ((dtypes.float0, np.float64), dtypes.TypePromotionError, "float0, float64"),
    ]:
        with pytest.raises(exc, match=f"result_type: .*{msg}"):
            rt(*bad)
    assert issubclass(dtypes.TypePromotionError, ValueError)
    assert fnp.result_type(x32, 2.0) == rt(x32, 2.0)


def test_prng_key_and_extended_and_key_dtype():
    assert issubclass(dtypes.prng_key, dtypes.extended)
    assert fnp.issubdtype(dtypes.prng_key, dtypes.extended)
    key = ft.random.key(0)  # a typed key, as JAX's: its dtype is key<fry>
    for dt in (key.dtype, ft.random.key_dtype()):
        assert fnp.issubdtype(dt, dtypes.prng_key) and dtypes.issubdtype(dt, dtypes.extended)
        assert not fnp.issubdtype(dt, np.integer) and str(dt) == "key<fry>"
    raw = ft.random.PRNGKey(0)
    for dt in (raw.dtype, np.float32, np.int64, dtypes.float0):
        assert not fnp.issubdtype(dt, dtypes.prng_key)
        assert not fnp.issubdtype(dt, dtypes.extended)
    assert ft.random.key_dtype("threefry2x32") == key.dtype != np.uint32
    with pytest.raises(ValueError, match="impl=None or 'threefry2x32'.*'rbg'"):
        ft.random.key_dtype("rbg")


def test_error_classes_catch_what_jax_raises_as_them():
    assert issubclass(errors.ConcretizationTypeError, errors.JAXTypeError)
    assert issubclass(errors.TracerArrayConversionError, errors.JAXTypeError)
    assert issubclass(errors.KeyReuseError, errors.JAXTypeError)
    assert issubclass(errors.JaxprTypeError, TypeError)
    assert issubclass(errors.InconclusiveDimensionOperation, Exception)
    with pytest.raises(errors.JAXTypeError):
        ft.jit(lambda x: 1.0 if x > 0 else 0.0)(1.0)
    with pytest.raises(errors.JAXIndexError):
        ft.jit(lambda x: x[x > 0])(np.arange(3.0))
    with pytest.raises(errors.ConcretizationTypeError):  # still one, as before
        ft.jit(lambda x: x[x > 0])(np.arange(3.0))
    leaked = []
    ft.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(errors.JAXTypeError):
        leaked[0] + 1


def test_custom_derivatives_reexports():
    cd = ft.custom_derivatives
    assert cd.custom_gradient is ft.custom_gradient
    assert cd.closure_convert is ft.closure_convert

    @cd.custom_gradient
    def f(x):
        return x**2, lambda g: (3.0 * g,)

    assert float(ft.grad(f)(2.0)) == 3.0


def test_config_context_managers():
    cases_ = [
        (ft.transfer_guard_host_to_device, "transfer_guard_host_to_device", "disallow", "x"),
        (ft.transfer_guard_device_to_host, "transfer_guard_device_to_host", "log", "x"),
        (ft.transfer_guard_device_to_device, "transfer_guard_device_to_device", "log", "x"),
        (ft.enable_checks, "enable_checks", True, "x"),
        (ft.default_prng_impl, "default_prng_impl", "threefry2x32", "rbg"),
        (ft.threefry_partitionable, "threefry_partitionable", True, False),
        (ft.debug_key_reuse, "debug_key_reuse", False, True),
    ]
    for cm, name, ok, bad in cases_:
        before = ft.config.read(name)
        with cm(ok):
            assert ft.config.read(name) == ok
        assert ft.config.read(name) == before
        with pytest.raises((TypeError, ValueError, NotImplementedError), match=name):
            with cm(bad):
                pass
        assert ft.config.read(name) == before


def _capture(f):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        f()
    return buf.getvalue()


def test_visualize_sharding_prints_jax_tables():
    want = np.load(FIXTURES / "api_small_jax.npz")
    with ft.config.override(num_cpu_devices=8):
        got = visualize_cases(ft, _capture)
    assert sorted(got) == sorted(k for k in want.files if k.startswith("visualize/"))
    for k, v in got.items():
        assert str(v) == str(want[k]), (k, str(v), str(want[k]))
    vs = ft.debug.visualize_sharding
    one = ft.devices()[0].id
    s = ft.sharding.SingleDeviceSharding(ft.devices()[0])
    assert f"CPU {one}" in _capture(lambda: vs((2, 3), s, use_color=False, color_map=None))
    for args, exc, msg in [
        (((2, 3, 4), s), ValueError, "1 or 2 nonzero dimensions"),
        (((0,), s), ValueError, "1 or 2 nonzero dimensions"),
        ((("a",), s), TypeError, "shape of integers"),
        (((4,), "P('x')"), TypeError, "expected a sharding"),
    ]:
        with pytest.raises(exc, match=f"debug.visualize_sharding: .*{msg}"):
            vs(*args)


def test_inspect_array_sharding_eager_and_under_transforms():
    seen = []

    def f(x):
        ft.debug.inspect_array_sharding({"a": x, "b": x * 2}, callback=seen.append)
        return (x**2).sum()

    x = np.arange(3.0)
    f(x)
    ft.grad(f)(x)
    jf = ft.jit(f)
    jf(x)
    jf(x)  # cached: no new call, as JAX's compile-time call
    ft.vmap(f)(np.ones((2, 3)))
    assert len(seen) == 8
    assert all(s == ft.sharding.SingleDeviceSharding(ft.devices()[0]) for s in seen)
    printed = _capture(lambda: ft.jit(lambda v: ft.debug.visualize_array_sharding(v) or v)(x))
    assert "CPU 0" in printed and printed.startswith("\u250c")
    with pytest.raises(TypeError, match="inspect_array_sharding: expected a callable"):
        ft.debug.inspect_array_sharding(x, callback=None)


def test_log_goes_through_logging_under_transforms(caplog):
    def f(x):
        ft.debug.log("x = {x}", x=x)
        ft.debug.log("plain", x)
        ft.debug.log(ordered=True)("two-call {}", x)
        return x * 2.0

    with caplog.at_level(logging.INFO, logger="functrace.debug"):
        f(1.0)
        ft.jit(f)(2.0)
        ft.grad(f)(3.0)
        ft.vmap(f)(np.array([4.0, 5.0]))
    msgs = [r.getMessage() for r in caplog.records if r.name == "functrace.debug"]
    want = []
    for v in ("1.0", "2.0", "3.0", "4.0", "5.0"):
        want += [f"x = {v}", f"plain {v}", f"two-call {v}"]
    assert msgs[:9] == want[:9] and sorted(msgs[9:]) == sorted(want[9:])
    rec = caplog.records[0]
    assert rec.levelno == logging.INFO and rec.pathname == __file__
    with pytest.raises(TypeError, match="debug.log: expected a format string"):
        ft.debug.log(3)
    with pytest.raises(TypeError, match="debug.log: expected the format string"):
        ft.debug.log(None, 1.0)


def test_sharding_base_class_meshes_in_context_and_reshard():
    sh = ft.sharding
    with ft.config.override(num_cpu_devices=8):
        mesh = ft.make_mesh((4, 2), ("a", "b"))
    named = sh.NamedSharding(mesh, sh.PartitionSpec("a"))
    single = sh.make_single_device_sharding(ft.devices()[0])
    assert all(isinstance(s, sh.Sharding) for s in (named, single, fnp.ones(2).sharding))
    assert single == sh.SingleDeviceSharding(ft.devices()[0])
    assert sh.get_mesh().empty and sh.get_abstract_mesh().empty
    x = np.arange(8.0)
    with ft.set_mesh(mesh):
        assert sh.get_mesh() is mesh
        assert sh.get_abstract_mesh() == sh.AbstractMesh((4, 2), ("a", "b"))
        with sh.use_abstract_mesh(sh.AbstractMesh((8,), ("z",))):
            assert sh.get_abstract_mesh().shape == {"z": 8}
        with pytest.raises(ValueError, match="use_abstract_mesh: expected a mesh of the size"):
            with sh.use_abstract_mesh(sh.AbstractMesh((2,), ("z",))):
                pass
        assert sh.get_abstract_mesh().axis_names == ("a", "b")
        y = ft.reshard(x, sh.PartitionSpec("a"))
        assert type(y) is ft.Array and np.array_equal(y, x)
        tree = {"u": x, "w": (x, x[:4])}
        spec = {"u": sh.PartitionSpec(("a", "b")), "w": named}
        got = ft.jit(lambda t: sh.reshard(t, spec))(tree)
        assert np.array_equal(got["w"][1], x[:4])
        g = ft.grad(lambda v: (sh.reshard(v, named) ** 2).sum())(x)
        assert np.array_equal(g, 2 * x)
        assert np.array_equal(
            ft.vmap(lambda v: sh.reshard(v, named))(np.ones((3, 8))), np.ones((3, 8))
        )
        twice = sh.auto_axes(lambda v: v * 2, out_sharding=sh.PartitionSpec("a"))
        assert np.array_equal(twice(x), 2 * x)
        plus = sh.explicit_axes(axes="b")(lambda v: v + 1)
        assert np.array_equal(plus(x, in_sharding=sh.PartitionSpec("b")), x + 1)
        with pytest.raises(
            TypeError, match="auto_axes: expected the keyword argument 'out_sharding'"
        ):
            sh.auto_axes(lambda v: v)(x)
        with pytest.raises(ValueError, match="auto_axes: expected axes of the mesh"):
            sh.auto_axes(lambda v: v, axes="q", out_sharding=sh.PartitionSpec())(x)
        psum = ft.shard_map(lambda v: ft.lax.psum(v.sum(), "a"), in_specs=sh.PartitionSpec("a"),
                            out_specs=sh.PartitionSpec())  # fmt: skip
        assert float(psum(x)) == 28.0  # shard_map takes set_mesh's mesh
        for bad, exc, msg in [
            (sh.PartitionSpec("a", "b"), ValueError, "at most 1 entries"),
            (sh.PartitionSpec("a", "a"), ValueError, "at most once"),
            ("a", TypeError, "NamedShardings or PartitionSpecs"),
        ]:
            with pytest.raises(exc, match=f"reshard: expected .*{msg}"):
                sh.reshard(x, bad)
    assert sh.get_mesh().empty and sh.get_abstract_mesh().empty
    with pytest.raises(ValueError, match="reshard: .*PartitionSpec inside set_mesh"):
        sh.reshard(x, sh.PartitionSpec("a"))
    with pytest.raises(ValueError, match="explicit_axes: expected a mesh set with set_mesh"):
        sh.explicit_axes(lambda v: v)(x, in_sharding=sh.PartitionSpec())
    ft.set_mesh(mesh)  # the setter form
    try:
        assert sh.get_mesh() is mesh
    finally:
        ft.set_mesh(None)
    assert sh.get_mesh().empty
    with pytest.raises(ValueError, match="set_mesh: expected a Mesh or None"):
        ft.set_mesh("mesh")
    with pytest.raises(ValueError, match="make_single_device_sharding: expected memory_kind"):
        sh.make_single_device_sharding(ft.devices()[0], memory_kind="device")


def test_multihost_utils_with_one_process():
    from functrace.experimental import multihost_utils as mh

    sh = ft.sharding
    x, s = np.arange(6.0).reshape(2, 3), np.float32(2.5)
    tree = {"x": x, "s": s}
    stacked = mh.process_allgather(tree)
    assert stacked["x"].shape == (1, 2, 3) and stacked["s"].shape == (1,)
    assert type(stacked["x"]) is np.ndarray and np.array_equal(stacked["x"][0], x)
    tiled = mh.process_allgather(tree, tiled=True)
    assert tiled["x"].shape == (2, 3) and tiled["s"].shape == () and tiled["s"].dtype == np.float32
    got = mh.broadcast_one_to_all(tree, is_source=True)
    assert np.array_equal(got["x"], x) and type(got["x"]) is np.ndarray
    assert mh.sync_global_devices("step") is None
    with ft.config.override(num_cpu_devices=8):
        mesh = ft.make_mesh((2, 4), ("a", "b"))
    spec = sh.PartitionSpec("a")
    g = mh.host_local_array_to_global_array(tree, mesh, {"x": spec, "s": None})
    assert type(g["x"]) is ft.Array and np.array_equal(g["x"], x)
    back = mh.global_array_to_host_local_array(g, mesh, sh.PartitionSpec())
    assert np.array_equal(back["x"], x) and back["s"] == s
    jitted = ft.jit(lambda v: mh.host_local_array_to_global_array(v, mesh, spec) * 2)
    assert np.array_equal(jitted(x), 2 * x)
    for call, exc, msg in [
        (lambda: mh.host_local_array_to_global_array(x, mesh, sh.PartitionSpec("b")), ValueError,
         "to divide into the 4 shards"),
        (lambda: mh.host_local_array_to_global_array(x, mesh, sh.PartitionSpec("q")), ValueError,
         "mesh axes"),
        (lambda: mh.global_array_to_host_local_array(x, "m", spec), TypeError, "expected a Mesh"),
        (lambda: mh.process_allgather(x, tiled=1), TypeError, "tiled to be a bool"),
        (lambda: ft.jit(mh.process_allgather)(x), TypeError, "concrete arrays"),
        (lambda: mh.sync_global_devices(3), TypeError, "name string"),
    ]:  # fmt: skip
        with pytest.raises(exc, match=msg):
            call()


def test_lax_local_conv_ragged_dot_and_bit_generator_match_jax():
    want = np.load(FIXTURES / "api_small_jax.npz")
    got = lax_cases(ft)
    assert sorted(got) == sorted(k for k in want.files if k.startswith("lax/"))
    for k, v in got.items():
        assert v.shape == want[k].shape and v.dtype == want[k].dtype, k
        if v.dtype.kind in "iu":  # shapes, keys and bits: exactly
            np.testing.assert_array_equal(v, want[k], err_msg=k)
            continue
        tol = 2e-4 if v.dtype == np.float32 else 1e-11
        np.testing.assert_allclose(v, want[k], rtol=tol, atol=tol, err_msg=k)


def _local(k):
    _, _, st, pad, fs, ld, rd, dn = LOCAL_CONVS[k]
    return lambda u, v: ft.lax.conv_general_dilated_local(u, v, st, pad, fs, ld, rd, dn)


def _ragged(k):
    _, _, sizes, dims, ragged, group, _ = RAGGED[k]
    rdn = ft.lax.RaggedDotDimensionNumbers(dims, ragged, group)
    return lambda u, v: ft.lax.ragged_dot_general(u, v, np.array(sizes), rdn)


def test_local_conv_and_ragged_dot_compose():
    # the modes JAX does not differentiate (ragged contracting and batch dimensions) too
    for f, (a, b) in [(_ragged(1), RAGGED_ARGS[1]), (_ragged(3), RAGGED_ARGS[3]),
                      (_local(3), LOCAL_ARGS[3])]:  # fmt: skip
        check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
    for f, (a, b) in [(_local(2), LOCAL_ARGS[2]), (_ragged(4), RAGGED_ARGS[4])]:
        np.testing.assert_allclose(ft.jit(f)(a, b), f(a, b), rtol=1e-12, atol=1e-12)
        bs = np.stack([b, 2 * b, -b])
        loop = np.stack([f(a, w) for w in bs])
        np.testing.assert_allclose(ft.vmap(f, (None, 0))(a, bs), loop, rtol=1e-12, atol=1e-12)
        loss = lambda u, v, f=f: (f(u, v) ** 2).sum()  # noqa: E731
        g_loop = np.stack([ft.grad(loss)(a, w) for w in bs])
        np.testing.assert_allclose(ft.vmap(ft.grad(loss), (None, 0))(a, bs), g_loop, rtol=1e-10)
        total = ft.grad(lambda u, bs=bs, loss=loss: ft.vmap(lambda row: loss(u, row))(bs).sum())(a)
        np.testing.assert_allclose(total, g_loop.sum(0), rtol=1e-10, atol=1e-10)


def test_local_conv_and_ragged_dot_errors():
    x, w = LOCAL_ARGS[0]
    local = ft.lax.conv_general_dilated_local
    with pytest.raises(ValueError, match="conv_general_dilated_local: expected rhs with"):
        local(x, w[:, :, :3], (1, 1), "VALID", (2, 3))
    with pytest.raises(ValueError, match="conv_general_dilated_local: expected rhs of the rank"):
        local(x, w[0], (1, 1), "VALID", (2, 3))
    with pytest.raises(TypeError, match="conv_general_dilated_local: expected lhs and rhs of one"):
        local(x, w.astype(np.float32), (1, 1), "VALID", (2, 3))
    a, b = RAGGED_ARGS[0]
    rdn = ft.lax.RaggedDotDimensionNumbers
    dims = (((1,), (1,)), ((), ()))
    rd = ft.lax.ragged_dot_general
    for args, exc, msg in [
        (
            (a, b, np.array([1, 2]), rdn(dims, (0,), (0,))),
            ValueError,
            r"group_sizes of shape \(3,\)",
        ),
        ((a, b, np.array([1.0, 2, 2]), rdn(dims, (0,), (0,))), TypeError, "integer group_sizes"),
        ((a, b, np.array([1, 2, 2]), rdn(dims, (0,), ())), ValueError, "expected an rhs group"),
        ((a, b, np.array([1, 2, 2]), rdn(dims, (0, 1), (0,))), ValueError, "one lhs ragged"),
        ((a, b, np.array([1, 2, 2]), dims), TypeError, "RaggedDotDimensionNumbers"),
    ]:
        with pytest.raises(exc, match=f"ragged_dot_general: .*{msg}"):
            rd(*args)
    with pytest.raises(TypeError, match="RaggedDotDimensionNumbers: expected"):
        rdn(3, (0,), ())
    assert rdn(dims, [0], [0]) == rdn(dims, (0,), (0,))
    with pytest.raises(ValueError, match="reduce_window_shape_tuple: expected"):
        ft.lax.reduce_window_shape_tuple((4, 4), (2,), (1, 1), ((0, 0), (0, 0)))
    with pytest.raises(ValueError, match="conv_transpose_shape_tuple: expected padding"):
        ft.lax.conv_transpose_shape_tuple((1, 4, 3), (2, 3, 5), (2,), "FULL", ("NHC", "HIO", "NHC"))
    gdn = ft.lax.GatherDimensionNumbers((1,), (0,), (0,))
    assert gdn.operand_batching_dims == () and ft.lax.ScatterDimensionNumbers((1,), (0,), (0,))


def test_rng_bit_generator_transforms_and_errors():
    rbg, alg = ft.lax.rng_bit_generator, ft.lax.RandomAlgorithm
    key = np.array([3, 1, 4, 1], np.uint32)
    assert np.array_equal(rbg(key, (3, 4))[1], rbg(key, (3, 4), np.uint32, alg.RNG_PHILOX)[1])
    keys = np.stack([key, key + 1, key + 2])
    for a in (alg.RNG_THREE_FRY, alg.RNG_PHILOX):
        new, bits = rbg(key, (3, 4), np.uint32, a)
        jitted = ft.jit(lambda k, a=a: rbg(k, (3, 4), np.uint32, a))(key)
        assert np.array_equal(jitted[0], new) and np.array_equal(jitted[1], bits)
        loop = np.stack([rbg(k, (5,), np.uint16, a)[1] for k in keys])
        assert np.array_equal(ft.vmap(lambda k, a=a: rbg(k, (5,), np.uint16, a)[1])(keys), loop)
    assert str(alg.RNG_PHILOX) == "RNG_PHILOX" and int(alg.RNG_THREE_FRY) == 1
    for args, kw, exc, msg in [
        ((key, (2,)), {"algorithm": 7}, ValueError, "RandomAlgorithm"),
        ((key, (2,), np.int32), {}, TypeError, "uint8, uint16, uint32 or uint64"),
        ((key[:3], (2,)), {}, TypeError, r"uint32\[4\] or uint64\[2\] key"),
        ((key.astype(np.int32), (2,)), {}, TypeError, r"uint32\[4\] or uint64\[2\] key"),
        ((key, (-1,)), {}, ValueError, "nonnegative"),
        ((key, "ab"), {}, TypeError, "shape of ints"),
    ]:
        with pytest.raises(exc, match=f"rng_bit_generator: .*{msg}"):
            rbg(*args, **kw)


def test_live_arrays():
    x = fnp.arange(3.0)
    y = x * 2
    live = ft.live_arrays()
    assert all(type(a) is ft.Array for a in live)
    assert any(a is x for a in live) and any(a is y for a in ft.live_arrays("cpu"))
    before = len(live)
    del y, live
    assert len(ft.live_arrays()) == before - 1  # freed, no longer listed
    with pytest.raises(ValueError, match="live_arrays: expected platform None or 'cpu'"):
        ft.live_arrays("gpu")
