"""Eager results are immutable ``functrace.Array``s with JAX's array idioms (item 4),
and concrete tables indexed with traced indices (item 5)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.errors import TracerArrayConversionError

X = np.array([1.0, 2.0, 3.0])


def _loss(x):
    return fnp.sum(fnp.sin(x) * x)


def _is_array(x) -> bool:
    return type(x) is ft.Array and isinstance(x, np.ndarray) and not x.flags.writeable


def test_item4_every_transform_returns_arrays() -> None:
    results = {
        "grad": ft.grad(_loss)(X),
        "grad0d": ft.grad(lambda x: x**3)(2.0),
        "value_and_grad": ft.value_and_grad(_loss)(X),
        "vjp": ft.vjp(_loss, X)[0],
        "vjp_fn": ft.vjp(_loss, X)[1](1.0),
        "jvp": ft.jvp(_loss, (X,), (X,)),
        "linearize": ft.linearize(_loss, X)[0],
        "linearize_fn": ft.linearize(_loss, X)[1](X),
        "vmap": ft.vmap(fnp.sin)(X),
        "vmap_unbatched": ft.vmap(lambda x: X, in_axes=0, out_axes=None)(X),
        "jit": ft.jit(lambda x: (fnp.sin(x), x.sum()))(X),
        "jacfwd": ft.jacfwd(fnp.sin)(X),
        "jacrev": ft.jacrev(fnp.sin)(X),
        "hessian": ft.hessian(_loss)(X),
        "fori_loop": lax.fori_loop(0, 3, lambda i, c: c + 1.0, fnp.zeros(2)),
        "fnp.array": fnp.array([1.0, 2.0]),
        "fnp.asarray": fnp.asarray(X),
        "fnp.zeros": fnp.zeros(3),
        "fnp.arange": fnp.arange(3),
        "fnp on Array": fnp.sin(fnp.asarray(X)),
        "fnp reduction on Array": fnp.sum(fnp.asarray(X)),
        "fnp.linalg on Array": fnp.linalg.norm(fnp.asarray(X)),
        "fnp on a list of Arrays": fnp.stack([fnp.asarray(X), X]),
        "operator": fnp.asarray(X) + 1,
        "method": fnp.asarray(X).sum(),
        "index": fnp.asarray(X)[0],
        "slice": fnp.asarray(X)[1:],
    }
    with ft.disable_jit():
        results["disable_jit"] = ft.jit(fnp.sin)(X)
    for name, r in results.items():
        for leaf in ft.tree_util.tree_leaves(r):
            assert _is_array(leaf), (name, type(leaf))
    assert results["grad0d"].shape == () and float(results["grad0d"]) == 12.0
    assert results["grad0d"].item() == 12.0


def test_item4_plain_numpy_inputs_keep_numpy_types() -> None:
    assert type(fnp.sin(X)) is np.ndarray
    assert type(fnp.sum(X)) is np.float64
    assert type(np.sin(fnp.asarray(X))) is np.ndarray  # NumPy's own functions: NumPy's types
    z = np.zeros_like(fnp.asarray(X))
    z[0] = 5.0  # a NumPy result is a writable NumPy array
    assert z[0] == 5.0


def test_item4_immutable_with_message_naming_at() -> None:
    x = ft.grad(_loss)(X)
    with pytest.raises(TypeError, match=r"immutable.*\.at\[idx\]\.set"):
        x[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(x)[0] = 1.0  # the zero-copy NumPy view is read-only too
    with pytest.raises(ValueError, match="read-only"):
        np.add(x, 1, out=x)
    y = x
    y += 1.0  # rebinds y, as in JAX
    assert _is_array(y)
    np.testing.assert_array_equal(x + 1.0, y)
    assert not np.shares_memory(x, y)


def test_item4_at_methods() -> None:
    x = fnp.asarray(X)
    np.testing.assert_array_equal(x.at[0].set(9.0), [9.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.at[[0, 0]].add(1.0), [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.at[1].multiply(3.0), [1.0, 6.0, 3.0])
    np.testing.assert_array_equal(x.at[1:].min(2.5), [1.0, 2.0, 2.5])
    np.testing.assert_array_equal(x.at[:2].max(1.5), [1.5, 2.0, 3.0])
    assert x.at[2].get() == 3.0
    for r in (x.at[0].set(9.0), x.at[0].get()):
        assert _is_array(r)
    np.testing.assert_array_equal(x, X)  # nothing mutated
    with pytest.raises(ValueError, match="expected mode"):
        x.at[0].get(mode="wrap")
    with pytest.raises(ValueError, match="fill_value needs mode='fill'"):
        x.at[0].get(fill_value=0.0)


_IDX = np.array([0, 5, -1, -7, 2])
_OPS = ("get", "set", "add", "mul", "min", "max")


def _at_all(x, i, mode):
    outs = []
    for op in _OPS:
        u = x.at[i]
        outs.append(u.get(mode=mode) if op == "get" else getattr(u, op)(7.0, mode=mode))
    return outs


@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds", "fill", "drop"])
def test_item5_out_of_bounds_modes_eager_jit_vmap_agree(mode: str) -> None:
    x = fnp.asarray(X)
    eager = _at_all(x, _IDX, mode)
    jitted = ft.jit(lambda x, i: _at_all(x, i, mode))(x, _IDX)
    per_index = ft.vmap(lambda i: _at_all(x, i, mode))(_IDX)
    for k, op in enumerate(_OPS):
        np.testing.assert_array_equal(eager[k], jitted[k], err_msg=op)
        for j, i in enumerate(_IDX):
            np.testing.assert_array_equal(per_index[k][j], _at_all(x, int(i), mode)[k])
    if mode in ("clip", "promise_in_bounds"):
        np.testing.assert_array_equal(eager[0], [1.0, 3.0, 3.0, 1.0, 3.0])  # clamped
        np.testing.assert_array_equal(eager[2], [15.0, 2.0, 24.0])  # -7 lands on 0; 5, -1 on 2
    else:
        np.testing.assert_array_equal(eager[0], [1.0, np.nan, 3.0, np.nan, 3.0])
        np.testing.assert_array_equal(eager[2], [8.0, 2.0, 17.0])  # 5 and -7 dropped
        np.testing.assert_array_equal(eager[1], [7.0, 2.0, 7.0])
    filled = ft.jit(lambda i: x.at[i].get(mode="fill", fill_value=-1.0))(_IDX)
    np.testing.assert_array_equal(filled, [1.0, -1.0, 3.0, -1.0, 3.0])


def test_item5_default_mode_rule() -> None:
    x = fnp.asarray(X)
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[5].get()  # known out-of-range indices raise
    assert ft.jit(lambda i: x.at[i].get())(5) == 3.0  # traced ones are clamped
    assert ft.jit(lambda i: x.at[i].get())(-1) == 3.0  # negatives wrap once


@pytest.mark.parametrize("op", _OPS[1:])
def test_item5_default_mode_drops_out_of_range_updates(op: str) -> None:
    # JAX's .at: an update at an index out of range is skipped, eagerly, under jit and
    # vmap (abstract indices) alike, with repeats and negative indices mixed in.
    x = fnp.asarray(X)
    idx = np.array([0, 5, -1, -7, 2, 0, 9])
    u = np.arange(1.0, 8.0)

    def f(x, i, u):
        return getattr(x.at[i], op)(u)

    ref = getattr(x.at[idx], op)(u, mode="drop")
    np.testing.assert_array_equal(f(x, idx, u), ref)
    np.testing.assert_array_equal(ft.jit(f)(x, idx, u), ref)
    np.testing.assert_array_equal(ft.vmap(f, (None, 0, 0))(x, idx[None], u[None])[0], ref)
    per_index = ft.vmap(lambda i, u: f(x, i, u))(idx, u)
    for j in range(len(idx)):
        np.testing.assert_array_equal(per_index[j], getattr(x.at[idx[j]], op)(u[j], mode="drop"))
    if op == "set":  # the last update in range wins at each position
        np.testing.assert_array_equal(ref, [6.0, X[1], 5.0])
    # Gradients: a dropped update gets none; with set, only the last writer in range.
    w = np.array([1.0, 10.0, 100.0])

    def loss(x, u, i):
        return (f(x, i, u) * w).sum()

    want = ft.grad(lambda x, u: (getattr(x.at[idx], op)(u, mode="drop") * w).sum(), (0, 1))(X, u)
    for got in (ft.grad(loss, (0, 1))(X, u, idx), ft.jit(ft.grad(loss, (0, 1)))(X, u, idx)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_item5_int_fill_values_and_grad() -> None:
    xi = fnp.arange(3)
    assert xi.at[9].get(mode="fill") == np.iinfo(xi.dtype).min
    g = ft.grad(lambda x: fnp.sum(x.at[_IDX].get(mode="fill", fill_value=0.0)))(X)
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0])
    g = ft.grad(lambda v: fnp.sum(fnp.asarray(X).at[_IDX].add(v, mode="drop") ** 2))(1.0)
    np.testing.assert_allclose(g, 2 * 2.0 + 2 * 5.0 * 2)  # [1 + v, 2, 3 + 2v] at v = 1


def test_item4_block_until_ready_and_scalars() -> None:
    r = ft.jit(_loss)(X).block_until_ready()
    assert _is_array(r) and r.shape == ()
    assert float(r) == pytest.approx(float(_loss(X)))
    assert f"{r:.3f}" == f"{float(r):.3f}"
    assert ft.grad(_loss)(X).block_until_ready() is not None
    assert bool(r > 0) and int(fnp.asarray(3)) == 3
    a = fnp.asarray(X)
    np.testing.assert_array_equal(a == "x", np.zeros(3, bool))  # NumPy's operator fallbacks


def test_item4_numpy_interop_zero_copy() -> None:
    x = ft.vmap(fnp.sin)(X)
    assert isinstance(x, np.ndarray)
    v = np.asarray(x)
    assert type(v) is np.ndarray and np.shares_memory(v, x)
    assert np.shares_memory(x[1:], x) and np.shares_memory(x.reshape(3, 1), x)
    np.testing.assert_allclose(np.sin(x), np.sin(np.sin(X)))
    np.testing.assert_allclose(np.concatenate([x, x]), np.concatenate([v, v]))
    np.testing.assert_allclose(np.linalg.norm(x), np.linalg.norm(v))
    m = np.array(x)
    m[0] = 0.0  # np.array copies into a mutable NumPy array
    assert x[0] != 0.0
    assert repr(fnp.asarray([1.0, 2.0])) == "Array([1., 2.])"
    # str (and so debug.print's text) is NumPy's, float32 digits for float32 entries
    f32 = fnp.asarray([1.0, 2.5], dtype=fnp.float32) / 3
    assert str(f32) == str(np.asarray(f32)) == "[0.33333334 0.8333333 ]"
    assert str(fnp.asarray(2.5, dtype=fnp.float32) / 3) == "0.8333333"


def test_item4_pickle_and_copy() -> None:
    x = ft.grad(_loss)(X)
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x), x.copy()):
        assert _is_array(y)
        np.testing.assert_array_equal(y, x)
        assert not np.shares_memory(y, x)


def test_item4_arrays_are_accepted_as_inputs() -> None:
    a = fnp.asarray(X)
    f = ft.jit(lambda x: fnp.sin(x) * 2)
    np.testing.assert_allclose(f(a), f(X))
    np.testing.assert_allclose(ft.grad(_loss)(a), ft.grad(_loss)(X))
    np.testing.assert_allclose(ft.vmap(fnp.sin)(a), np.sin(X))
    np.testing.assert_allclose(ft.jit(lambda t: t["a"] + 1)({"a": a}), X + 1)


def _table_cases(table):
    def body(i, c):
        return c + table[i]

    def step(c, i):
        return c + table[i], table[i] * 2

    return body, step


def test_item5_array_table_with_traced_index() -> None:
    table = fnp.asarray(np.array([10.0, 20.0, 30.0]))
    body, step = _table_cases(table)
    assert lax.fori_loop(0, 3, body, 0.0) == 60.0
    assert ft.jit(lambda n: lax.fori_loop(0, n, body, 0.0))(3) == 60.0
    c, ys = lax.scan(step, 0.0, np.array([2, 0, 1]))
    assert c == 60.0
    np.testing.assert_array_equal(ys, [60.0, 20.0, 40.0])
    np.testing.assert_array_equal(ft.jit(lambda i: table[i])(np.array([2, 1])), [30.0, 20.0])
    np.testing.assert_array_equal(ft.vmap(lambda i: table[i])(np.array([2, 0])), [30.0, 10.0])
    g = ft.grad(lambda s: lax.fori_loop(0, 3, lambda i, c: c + s * table[i], 0.0))(1.0)
    assert g == 60.0


def test_item5_plain_numpy_table_with_traced_index_error() -> None:
    table = np.array([10.0, 20.0, 30.0])
    hint = r"functrace\.numpy\.asarray\(table\)\[i\] or functrace\.numpy\.take"
    with pytest.raises(TracerArrayConversionError, match=hint):
        ft.jit(lambda i: table[i])(1)  # NumPy converts the tracer with __array__
    with pytest.raises(TracerArrayConversionError, match=hint):
        ft.jit(lambda i: table[i])(np.array([0, 1]))
    with pytest.raises(ft.ConcretizationError, match=hint):
        ft.jit(lambda i: [10.0, 20.0][i])(1)  # a Python list asks for __index__
    with pytest.raises(TracerArrayConversionError, match=hint):
        ft.vmap(lambda i: table[i])(np.array([0, 1]))
    np.testing.assert_array_equal(ft.jit(lambda i: fnp.asarray(table)[i])(2), 30.0)
    np.testing.assert_array_equal(ft.jit(lambda i: fnp.take(table, i))(2), 30.0)


def test_item4_jit_result_never_aliases_a_writable_input() -> None:
    a = np.arange(3.0)
    out = ft.jit(lambda x: x)(a)
    a[0] = 9.0
    assert out[0] == 0.0 and _is_array(out)


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.int32,
        np.int64,
        np.uint16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    ],
)
def test_item4_jit_0d_results_are_immutable_arrays(dtype) -> None:
    """0-d results of a compiled call (computed, returned inputs, constants) are read-only
    Arrays of the output dtype with the eager values; a NumPy view of one is read-only
    and a copy is independent (the driver builds them on the immutable NumPy scalar)."""
    x = np.ones(3, dtype)

    def f(x, s):
        return x[1], s, x.sum(dtype=dtype) if dtype is not np.bool_ else x.all(), dtype(2)

    s = np.asarray(x[0])
    got = ft.jit(f)(x, s)
    want = f(x, s)
    for g, w in zip(got, want):
        assert _is_array(g) and g.shape == () and g.dtype == np.dtype(dtype)
        assert g == w
        v = np.asarray(g)
        assert not v.flags.writeable
        with pytest.raises(ValueError):
            v[()] = 0
        c = np.array(g)
        c[()] = 0
        assert g == w
        assert _is_array(pickle.loads(pickle.dumps(g))) and pickle.loads(pickle.dumps(g)) == w
