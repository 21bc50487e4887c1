"""jit: compiled == eager for every op-table row, layouts, broadcast patterns, caching,
errors, compositions with the other transforms.

Compiles are the slow part (~0.1 s per kernel), so the op-table sweep draws few
examples per row and every other test reuses a handful of small kernels. The
module runs with its own empty kernel cache directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections import namedtuple

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.numpy as fnp
from functrace import core, lax
from functrace.errors import ConcretizationError
from functrace.interpreters import numba_rules as jit_emitters
from functrace.jit import clear_cache, disable_jit, jit
from functrace.jit import codegen as jit_codegen
from functrace.jit import lowering as jit_lowering
from op_db import ALL_OPS, SLOW_COMPILE_JIT, OpInfo, op_args
from profiles import examples, slow_compile

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),  # fresh cache, strict kernels
]

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _tol(op: OpInfo | None, dtype: np.dtype) -> dict[str, float]:
    rtol, atol = (op.rtol, op.atol) if op is not None else (1e-6, 1e-6)
    if np.dtype(dtype) == np.float32:
        return {"rtol": max(rtol, 2e-5), "atol": max(atol, 2e-5)}
    return {"rtol": max(rtol, 1e-12), "atol": max(atol, 1e-12)}


def assert_like_eager(got, expected, op: OpInfo | None = None, what: str = "") -> None:
    """Same value (to tolerance), dtype, shape and array-vs-scalar type as eager."""
    g_leaves, g_tree = ft.tree_util.tree_flatten(got)
    e_leaves, e_tree = ft.tree_util.tree_flatten(expected)
    assert g_tree == e_tree, f"{what}: tree {g_tree} != {e_tree}"
    for g, e in zip(g_leaves, e_leaves):
        a, b = np.asarray(g), np.asarray(e)
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, **_tol(op, b.dtype), err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)
        # jit returns immutable functrace.Arrays (0-d ones too) where eager code returns
        # NumPy arrays or scalars, and Python scalars where eager code does.
        if isinstance(e, np.generic | np.ndarray):
            assert type(g) is ft.Array, f"{what}: got {type(g).__name__}, eager array"
            assert not g.flags.writeable, f"{what}: writable output"
        else:
            assert type(g) is type(e), f"{what}: got {type(g).__name__}, eager {type(e)}"


def _layouts(args: tuple) -> dict[str, tuple]:
    """The same values as C-contiguous, transposed (F-order), sliced and read-only arrays."""

    def fortran(a):
        return np.asfortranarray(a) if isinstance(a, np.ndarray) and a.ndim >= 2 else a

    def sliced(a):
        if isinstance(a, np.ndarray) and a.ndim >= 1:
            return np.stack([a, a], axis=-1)[..., 1]  # strided view, same values
        return a

    def readonly(a):
        if isinstance(a, np.ndarray):
            a = a.copy()
            a.flags.writeable = False
        return a

    return {
        "transposed": tuple(map(fortran, args)),
        "sliced": tuple(map(sliced, args)),
        "readonly": tuple(map(readonly, args)),
    }


def _params():
    # the rows of SLOW_COMPILE_JIT run in make fuzz, not make test (op_db.py says why)
    return [
        pytest.param(
            op,
            dt,
            id=f"{op.name}-{np.dtype(dt).name}",
            marks=slow_compile if op.name in SLOW_COMPILE_JIT else (),
        )
        for op in ALL_OPS
        for dt in op.dtypes
    ]


# ---------------------------------------------------------------------------
# The op table
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op,dtype", _params())
def test_op_table_jit_matches_eager(op: OpInfo, dtype) -> None:
    # (@given inside the test: hypothesis 6.170 nests settings objects per call of a
    # parametrized @settings-decorated test and fails after ~950 cases.)
    f = jit(op.fn)

    @settings(max_examples=examples(1, 2), suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data) -> None:
        args = data.draw(op_args(op, dtype))
        expected = op.fn(*args)
        traces = f.trace_count
        assert_like_eager(f(*args), expected, op, f"{op.name} C-contiguous")
        for name, variant in _layouts(args).items():
            assert_like_eager(f(*variant), expected, op, f"{op.name} {name}")
        # Layouts are not part of the signature: no retrace for them.
        assert f.trace_count <= traces + 1

    check()


def test_slow_compile_rows_are_op_table_rows() -> None:
    # a renamed or removed row must not leave a stale name (or run its jit case again)
    assert SLOW_COMPILE_JIT <= {op.name for op in ALL_OPS}


# Intermediates of every layout feeding the fused kernel of an elementwise row: each
# transform below is computed inside the jitted function, keeps the shape and the
# values, and leaves the array in a layout of its own (a transposed kernel output, a
# concatenation or reduction of one, which NumPy keeps in F order, strided, negative-
# step, broadcast, reshaped and reversed views).


def _kernel_transposed(a):
    # a kernel's C output of the transposed shape, seen through a transpose (F order)
    at = fnp.transpose(a)
    return fnp.transpose(lax.select_n(np.ones(at.shape, bool), at, at))


def _layout_concatenated(a):
    f = _kernel_transposed(a)
    return fnp.concatenate([f[:1], f[1:]], axis=0)  # a fresh F-ordered array


def _layout_reduced(a):
    f = _kernel_transposed(a)
    if f.dtype.kind not in "iuf":
        return f
    return fnp.max(fnp.stack([f, f], axis=0), axis=0)  # a fresh F-ordered array


def _layout_sliced(a):
    c = fnp.concatenate([a, a], axis=0)
    return c[::-1][: a.shape[0]][::-1]  # negative steps


def _layout_step(a):
    c = fnp.stack([a, a], axis=1)
    return fnp.reshape(c, (2 * a.shape[0], *a.shape[1:]))[::2]


_INTERMEDIATE_LAYOUTS = {
    "kernel output transposed": _kernel_transposed,
    "concatenated": _layout_concatenated,
    "reduced": _layout_reduced,
    "stacked": lambda a: fnp.stack([a, a], axis=-1)[..., 1],
    "sliced (negative steps)": _layout_sliced,
    "step slice": _layout_step,
    "broadcast": lambda a: fnp.broadcast_to(a, (2, *a.shape))[1],
    "reshaped": lambda a: fnp.flip(
        fnp.reshape(fnp.reshape(_kernel_transposed(a), (-1,))[::-1], a.shape)
    ),
    "reversed": lambda a: fnp.flip(fnp.flip(_kernel_transposed(a), 0), 0),
}


def _elementwise_rows():
    import functrace.jit.driver_rules  # noqa: F401  (registers the driver rules)

    by_name = {p.name: p for p in core.impl_rules}
    rows = []
    for op in ALL_OPS:
        prims = [by_name.get(n) for n in op.primitives]
        rules = [jit_emitters.numba_emitters.get(p) for p in prims if p is not None]
        if (
            prims
            and len(rules) == len(prims)
            and all(r is not None and not isinstance(r, jit_emitters.DriverRule) for r in rules)
        ):
            rows.append(
                pytest.param(op, op.dtypes[0], id=f"{op.name}-{np.dtype(op.dtypes[0]).name}")
            )
    return rows


def _through_broadcasting_kernel(a):
    # the same values out of a kernel that also reads a broadcast mask: its loops are
    # not collapsed, so it reads ``a`` with a's own rank (no reshape copies it first)
    mask = np.ones((1,) * (a.ndim - 1) + a.shape[-1:], bool)
    return lax.select_n(fnp.broadcast_to(mask, a.shape), a, a)


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray | core.Tracer) and np.ndim(a) > 0


@pytest.mark.parametrize("op,dtype", _elementwise_rows())
def test_op_table_jit_reads_intermediates_of_every_layout(op: OpInfo, dtype) -> None:
    """Every elementwise row with its array arguments first passed through each layout
    transform inside the jitted function (all in one trace): same values as eager.
    Each transformed argument is also read by a kernel whose loops do not collapse."""

    def transformed(*args):
        out = []
        for t in _INTERMEDIATE_LAYOUTS.values():
            targs = [t(a) if _is_array(a) else a for a in args]
            extra = [_through_broadcasting_kernel(a) for a in targs if _is_array(a) and a.ndim > 1]
            out.append((op.fn(*targs), extra))
        return tuple(out)

    f = jit(transformed)

    @settings(max_examples=1, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data) -> None:
        args = data.draw(op_args(op, dtype))
        expected = op.fn(*args)
        same = [a for a in args if _is_array(a) and np.ndim(a) > 1]
        for name, (g, extra) in zip(_INTERMEDIATE_LAYOUTS, f(*args)):
            assert_like_eager(g, expected, op, f"{op.name} after {name}")
            assert_like_eager(extra, same, op, f"{op.name} arguments after {name}")

    check()


# ---------------------------------------------------------------------------
# Broadcast patterns and signatures
# ---------------------------------------------------------------------------


def test_broadcast_patterns_are_never_confused() -> None:
    f = jit(lambda x, y: fnp.exp(x) * y + 1.0)
    rng = np.random.default_rng(0)
    shapes = [
        ((3, 4), (1, 4)),
        ((3, 4), (3, 4)),
        ((3, 4), (3, 1)),
        ((1, 4), (3, 1)),
        ((3, 4), (4,)),
        ((3, 4), ()),
        ((2, 3, 4), (3, 1)),
        ((3, 4), (1, 4)),
        ((5, 4), (1, 4)),
        ((1, 1), (1, 1)),
    ]
    for sx, sy in shapes:
        x, y = rng.standard_normal(sx), rng.standard_normal(sy)
        np.testing.assert_allclose(f(x, y), np.exp(x) * y + 1.0, rtol=1e-12, err_msg=f"{sx} + {sy}")
    sources = {s for e in f._cache.values() for s in (k.source for k in e.program.kernels)}
    assert len(sources) >= 5  # one kernel per broadcast pattern, not per shape


_UNARY = [
    fnp.sin,
    fnp.exp,
    fnp.tanh,
    fnp.negative,
    lambda x: x * 0.5,
    lambda x: fnp.sum(x, axis=-1, keepdims=True) if np.ndim(x) else x,
]
_BINARY = [
    fnp.add,
    fnp.multiply,
    fnp.subtract,
    fnp.maximum,
    lambda a, b: fnp.where(a > b, a, b * 2.0),
]


@st.composite
def _random_program(draw):
    shapes = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=3
        )
    ).input_shapes
    ops = draw(st.lists(st.tuples(st.booleans(), *[st.integers(0, 9)] * 3), min_size=1, max_size=8))
    return shapes, draw(st.sampled_from([np.float32, np.float64])), ops


@settings(max_examples=15, suppress_health_check=list(HealthCheck))
@given(prog=_random_program(), layout=st.sampled_from(["C", "F", "sliced"]))
def test_random_elementwise_graphs_with_broadcasting(prog, layout) -> None:
    """Random DAGs of broadcasting ops (fusion groups, virtual broadcasts, collapsed
    axes, reductions between groups) compute what eager computes."""
    shapes, dtype, ops = prog

    def f(a, b, c):
        vals = [a, b, c]
        for binary, i, j, k in ops:
            x, y = vals[i % len(vals)], vals[j % len(vals)]
            vals.append(_BINARY[k % 5](x, y) if binary else _UNARY[k % 6](x))
        return vals[-1], vals[-2]

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if layout != "C":
        args = list(_layouts(tuple(args))["transposed" if layout == "F" else "sliced"])
    assert_like_eager(jit(f)(*args), f(*args), what=f"{shapes} {ops}")


def test_new_shape_retraces_and_old_entries_stay_valid() -> None:
    f = jit(lambda x: fnp.sin(x) * 2.0)
    a, b = np.ones((3, 4)), np.ones((5, 2))
    np.testing.assert_allclose(f(a), np.sin(a) * 2)
    np.testing.assert_allclose(f(b), np.sin(b) * 2)
    np.testing.assert_allclose(f(a), np.sin(a) * 2)
    assert f.trace_count == 2
    assert f(np.float32(1.0)).dtype == np.float32  # dtype is part of the signature
    assert f.trace_count == 3


def test_zero_size_and_unit_shapes() -> None:
    f = jit(lambda x, y: x * y + 1.0)
    for s in [(0,), (0, 3), (1,), (1, 1, 1), (2, 0, 1)]:
        x = np.ones(s)
        assert_like_eager(f(x, x), x * x + 1.0, what=str(s))


def test_closure_constants_and_literals() -> None:
    c = np.arange(12.0).reshape(3, 4).T  # a non-contiguous captured constant
    s = np.array(2.0)

    @jit
    def f(x):
        return x * c + s, c, 3.0

    x = np.ones((4, 3))
    out = f(x)
    assert_like_eager(out, (x * c + s, c, 3.0))
    # The caller gets an immutable copy, never the captured constant itself.
    assert not np.shares_memory(out[1], c)
    with pytest.raises(TypeError, match=r"immutable"):
        out[1][0, 0] = 99.0
    assert c[0, 0] == 0.0 and f(x)[1][0, 0] == 0.0


# ---------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------


def test_output_types_and_pytrees() -> None:
    Pair = namedtuple("Pair", ["a", "b"])

    def f(d, x):
        return {
            "sum": fnp.sum(x),
            "pair": Pair(x * 2.0, d["w"] + 1.0),
            "same": x,
            "items": [x[0], d["w"]],
        }

    d, x = {"w": np.ones(3)}, np.arange(3.0)
    out = jit(f)(d, x)
    assert_like_eager(out, f(d, x))
    assert type(out["pair"]) is Pair and type(out["sum"]) is ft.Array and out["sum"].ndim == 0
    assert jit(lambda x: (x,))(1.0) == (1.0,)
    assert type(jit(lambda x: x + 1)(2)) is int
    assert jit(lambda: 1.5)() == 1.5


PY_SCALAR_FUNS = {
    "identity": lambda x: x,
    "constant": lambda x: 2.0,
    "operators": lambda x: (x * 2 + 1) ** 2 - x / 3,
    "floordiv_mod": lambda x: (x // 2, x % 3),
    "negative_power": lambda x: x**-2 + x,  # a Python int to a negative power: a float
    "unary": lambda x: (-x, abs(x), +x),
    "compare": lambda x: (x > 1, x == 2),
    "numpy_function": lambda x: fnp.sin(x) + x,  # NumPy's result: np.float64
    "numpy_scalar": lambda x: x * np.float32(2.0),
    "grad": ft.grad(lambda x: x * x + 1.0),
    "value_and_grad": ft.value_and_grad(lambda x: x * x + 1.0),
}


@pytest.mark.parametrize("name", sorted(PY_SCALAR_FUNS))
@pytest.mark.parametrize(
    "arg", [3.0, 3, True, np.float64(3.0), np.int32(3), np.float32(3.0), np.array(3.0)]
)
def test_python_scalar_outputs_match_eager(name, arg) -> None:
    """Python operators on Python scalars give Python scalars under jit too; anything
    that went through a NumPy-typed value or a functrace function gives NumPy's type."""
    f = PY_SCALAR_FUNS[name]
    try:
        expected = f(arg)
    except (TypeError, ValueError):
        return  # e.g. grad of an integer: the eager error is tested elsewhere
    got = jit(f)(arg)
    assert_like_eager(got, expected, what=name)  # 0-d arrays: NumPy scalars under jit

    def kind(x):  # Python scalar types exactly; NumPy's 0-d values as one kind
        return "numpy 0-d" if isinstance(x, np.generic | np.ndarray) and not np.ndim(x) else type(x)

    kinds = ft.tree_util.tree_map
    assert kinds(kind, got) == kinds(kind, expected), (got, expected)
    if type(arg) is bool:  # Python bools and NumPy bools are separate signatures
        test_python_scalar_outputs_match_eager(name, np.bool_(arg))


def test_pytree_arguments_take_the_fast_path_correctly() -> None:
    Params = namedtuple("Params", ["w", "b"])

    def f(p, xs):
        return p["w"] * xs[0] + p["b"] - xs[1] if isinstance(p, dict) else p.w * xs[0] + p.b

    jf = jit(f)
    p, xs = {"w": np.ones(3), "b": np.zeros(3)}, [np.ones(3), np.arange(3.0)]
    for _ in range(3):
        assert_like_eager(jf(p, xs), f(p, xs))
    assert jf.trace_count == 1 and len(jf._tree_fast) == 1
    p2 = dict(p, c=1.0)  # another structure: a new signature
    assert_like_eager(jf(p2, xs), f(p2, xs))
    assert jf.trace_count == 2
    nt = Params(np.ones(3), np.ones(3))  # namedtuples take the general path
    assert_like_eager(jf(nt, (np.ones(3),)), f(nt, (np.ones(3),)))
    assert_like_eager(jf(nt, (np.ones(3),)), f(nt, (np.ones(3),)))
    assert jf.trace_count == 3


def test_keyword_arguments_defaults_and_empty_outputs() -> None:
    @jit()
    def f(x, *, scale=2.0, shift):
        return x * scale + shift

    x = np.arange(3.0)
    np.testing.assert_allclose(f(x, shift=1.0), x * 2 + 1)
    np.testing.assert_allclose(f(x, shift=np.ones(3), scale=3.0), x * 3 + 1)
    assert jit(lambda x: None)(x) is None
    assert jit(lambda x: ())(x) == ()
    assert jit(lambda x: {})(x) == {}


def test_scalars_python_and_numpy_weak_types() -> None:
    f = jit(lambda x, y: x * y + x**2)
    for x, y in [
        (2.0, 3.0),
        (np.float32(2), 3.0),
        (np.float32(2), np.float32(3)),
        (2, 3),
        (np.array(2.0), np.array(3.0)),
        (True, 2.0),
    ]:
        assert_like_eager(f(x, y), f.__wrapped__(x, y), what=f"{x!r}, {y!r}")


# ---------------------------------------------------------------------------
# Compositions with the other transforms
# ---------------------------------------------------------------------------


def _loss(w, x):
    return fnp.sum(fnp.tanh(x * w) ** 2) + fnp.sum(fnp.maximum(w, 0.0))


def test_jit_of_grad_and_grad_of_jit_agree_with_eager() -> None:
    w, x = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)
    g = ft.grad(_loss)(w, x)
    np.testing.assert_allclose(jit(ft.grad(_loss))(w, x), g, rtol=1e-12)
    np.testing.assert_allclose(ft.grad(jit(_loss))(w, x), g, rtol=1e-12)
    np.testing.assert_allclose(jit(ft.grad(jit(_loss)))(w, x), g, rtol=1e-12)
    vg = jit(ft.value_and_grad(_loss, argnums=(0, 1)))(w, x)
    assert_like_eager(vg, ft.value_and_grad(_loss, argnums=(0, 1))(w, x))


def test_jit_of_vjp_jvp_and_vmap_of_jit() -> None:
    w, x = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)

    def vjp_fn(w, x, ct):
        out, f_vjp = ft.vjp(_loss, w, x)
        return out, f_vjp(ct)

    assert_like_eager(jit(vjp_fn)(w, x, 1.0), vjp_fn(w, x, 1.0))

    def jvp_fn(w, x, t):
        return ft.jvp(_loss, (w, x), (t, np.zeros(x.shape)))

    assert_like_eager(jit(jvp_fn)(w, x, np.ones(6)), jvp_fn(w, x, np.ones(6)))
    ws = np.stack([w, -w, 2 * w])
    batched = ft.vmap(jit(_loss), in_axes=(0, None))(ws, x)
    np.testing.assert_allclose(batched, [_loss(v, x) for v in ws], rtol=1e-12)


def test_custom_rules_and_grad_hook_under_jit() -> None:
    @ft.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * lax.logistic(x)

    @ft.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -0.5, 0.5),))
    seen = []

    def f(x):
        y = ft.grad_hook(softplus(x) * 3.0, lambda ct: seen.append(np.asarray(ct).copy()))
        return fnp.sum(clip_grad(y) ** 2)

    x = np.linspace(-2, 2, 5)
    expected = ft.grad(f)(x)
    seen.clear()
    got = jit(ft.grad(f))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert len(seen) == 1  # the hook ran inside the compiled code
    source = jit(ft.grad(f)).lower(x).driver_source
    assert "custom_jvp_call" not in source and "custom_vjp_call" not in source  # inlined


def test_nested_jit_is_inlined_and_disable_jit() -> None:
    inner = jit(lambda x: x * 2.0)
    outer = jit(lambda x: inner(x) + 1.0)
    np.testing.assert_allclose(outer(np.ones(3)), 3.0)
    # traced once (its jaxpr is replayed into the outer trace), never compiled on its own
    assert inner.trace_count == 1 and inner.compile_count == 0
    with disable_jit():
        assert outer(np.float64(1.0)) == 3.0
    assert outer.trace_count == 1


@pytest.mark.parametrize("native", [False, True])
def test_control_flow_bodies_are_compiled_and_match_eager(native, monkeypatch) -> None:
    from functrace.jit import loops as jit_loops

    monkeypatch.setattr(jit_loops, "enabled", native)  # False: the Python-loop lowering
    x = np.linspace(0.0, 1.0, 7)

    def loops(x, n):
        y = lax.fori_loop(0, 5, lambda i, c: c * 0.9 + fnp.sin(c), x)
        carry, ys = lax.scan(lambda c, xi: (c + xi, c * xi), 0.0, x, reverse=True)
        i, z = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))
        w = lax.cond(n > 2, lambda v: v * 2.0, lambda v: -v, x)
        s = lax.switch(n, [lambda v: v + 1.0, lambda v: v - 1.0, lambda v: v * 0.0], x)
        return y, carry, ys, i, z, w, s

    f = jit(loops)
    for n in map(np.int64, (0, 1, 3, 7)):  # dynamic: one trace, every branch and trip count
        assert_like_eager(f(x, n), loops(x, n), what=f"n={n}")
    assert f.trace_count == 1
    text = f.lower(x, np.int64(3)).as_text()
    assert "cond branch 1" in text  # a cond outside loops: a driver per branch
    if native:  # fori_loop, scan and while_loop: one Numba function each
        assert "scan body" not in text and "while_loop body" not in text
        assert text.count(jit_loops.MARKER + " [") == 3
    else:
        assert "scan body" in text and "while_loop body" in text
        assert "@flat_kernel_jit" in text  # the bodies' elementwise chains are fused kernels

    def loss(x):
        return fnp.sum(lax.fori_loop(0, 4, lambda i, c: fnp.tanh(c) * 1.1, x) ** 2)

    np.testing.assert_allclose(jit(ft.grad(loss))(x), ft.grad(loss)(x), rtol=1e-12)
    zero_len = jit(lambda c, xs: lax.scan(lambda c, v: (c + v, v * 2.0), c, xs))
    assert_like_eager(
        zero_len(np.ones(3), np.zeros((0, 3))),
        lax.scan(lambda c, v: (c + v, v * 2.0), np.ones(3), np.zeros((0, 3))),
    )


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_concretization_error_names_function_argument_and_fixes() -> None:
    def absval(x):
        return x if x > 0 else -x

    with pytest.raises(ConcretizationError) as info:
        jit(absval)(1.0)
    msg = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "absval" in msg and "`x`" in msg
    assert "where" in msg and "cond" in msg and "static_argnums" in msg
    with pytest.raises(ConcretizationError, match="<lambda>"):
        jit(lambda x: x if x > 0 else -x)(1.0)


def test_static_argnums_control_flow_and_caching() -> None:
    def power(x, n):
        out = x
        for _ in range(n - 1):  # Python control flow on a static int
            out = out * x
        return out

    f = jit(power, static_argnums=1)
    assert f(2.0, 3) == 8.0 and f(3.0, 3) == 27.0 and f(2.0, 4) == 16.0
    assert f.trace_count == 2
    # static_argnames="n" resolves to the same options as static_argnums=1, so g shares
    # f's traces (as JAX's cache does): by keyword is one new signature, by position not
    g = jit(power, static_argnames="n")
    assert g.trace_count == 2
    assert g(2.0, n=3) == 8.0 and g(3.0, n=3) == 27.0 and g(2.0, 3) == 8.0
    assert g.trace_count == 3 and f.trace_count == 3


def test_jit_of_the_same_function_shares_its_traces() -> None:
    # As JAX: ``jit(f)`` made again (a loop calling ``jit(f)(x)``) reuses the signatures
    # traced by any other ``jit(f)`` with the same options; other options, or another
    # function object (a new lambda, ``grad(f)`` made again), trace anew.
    def f(x):
        return fnp.sin(x) * 2.0

    x = np.linspace(0.0, 1.0, 5)
    for _ in range(5):
        np.testing.assert_allclose(jit(f)(x), np.sin(x) * 2.0)
    assert jit(f).trace_count == 1
    assert jit(f).cache_info().hits == 4
    assert jit(f, static_argnums=()).trace_count == 1  # the same options, resolved
    g = jit(f, compile="sync")
    assert g.trace_count == 0
    g(x)
    assert g.trace_count == 1 and jit(f).trace_count == 1
    h = jit(lambda x: f(x))
    h(x)
    assert h.trace_count == 1 and jit(f).trace_count == 1
    # other callables get fresh state per jit: a ufunc, a custom_jvp function (whose
    # rules may be redefined between two jits)
    assert jit(np.negative)(x).tolist() == (-x).tolist()
    assert jit(np.negative).trace_count == 0

    @ft.custom_jvp
    def c(x):
        return x * 1.0

    c.defjvp(lambda p, t: (c(p[0]), t[0] * 2.0))
    assert ft.jvp(jit(c), (1.0,), (1.0,))[1] == 2.0
    c.defjvp(lambda p, t: (c(p[0]), t[0] * 3.0))
    assert ft.jvp(jit(c), (1.0,), (1.0,))[1] == 3.0
    # the shared state does not keep the function alive
    import gc
    import weakref

    def k(x):
        return x + 1.0

    jit(k)(x)
    ref = weakref.ref(k)
    del k
    gc.collect()
    assert ref() is None


def test_unhashable_static_argument_is_named() -> None:
    f = jit(lambda x, shape: fnp.reshape(x, shape), static_argnums=1)
    assert f(np.ones(6), (2, 3)).shape == (2, 3)
    # JAX raises a ValueError ("Non-hashable static arguments are not supported")
    with pytest.raises(ValueError, match=r"`shape`.*unhashable|unhashable.*`shape`"):
        f(np.ones(6), [2, 3])
    with pytest.raises(ValueError, match="`shape`"):
        jit(lambda x, shape: x, static_argnames="shape")(1.0, shape=np.ones(2))


def test_static_argnums_and_argnames_are_checked_as_in_jax() -> None:
    def f(a, b, c):
        return a

    def h(a, /, b, *args, **kw):
        return a

    # JAX 0.10.2 raises ValueError for each of these when jit is called
    for kw in ({"static_argnums": (0, 1, 3)}, {"static_argnums": -4}):
        with pytest.raises(ValueError, match=r"static_argnums in \[-3, 3\)"):
            jit(f, **kw)
    with pytest.raises(ValueError, match=r"does not take"):
        jit(f, static_argnames=("b", "not_defined"))
    for name in ("a", "args"):
        with pytest.raises(ValueError, match=r"positional-only or \*args"):
            jit(h, static_argnames=name)
    with pytest.raises(TypeError, match="static_argnums to be an int"):
        jit(f, static_argnums="a")
    with pytest.raises(TypeError, match="static_argnames to be a str"):
        jit(f, static_argnames=1)
    jit(h, static_argnums=7, static_argnames="anything")  # *args, **kwargs: any are valid
    with pytest.raises(ValueError, match="does not take"):
        jit(static_argnames="zz")(f)  # the decorator form checks too


def test_static_argnums_and_argnames_inferred_only_when_one_is_given() -> None:
    # one given: the other follows from the signature (static by position and keyword)
    f = jit(lambda x, flag: x if flag else -x, static_argnums=1)
    assert f(2.0, flag=True) == 2.0 and f(2.0, False) == -2.0
    g = jit(lambda x, flag: x if flag else -x, static_argnames="flag")
    assert g(2.0, True) == 2.0
    # both given: used as given (JAX): x is static by keyword only, y by position only
    both = jit(lambda x, y: x + 1, static_argnums=(1,), static_argnames="x")
    assert both(np.array(2.0), "foo") == 3.0  # x positional: traced, as in JAX
    assert both(x=2.0, y=np.array(0.0)) == 3.0  # y by keyword: traced
    no_names = jit(lambda x, flag: x if flag else -x, static_argnums=1, static_argnames=())
    with pytest.raises(ConcretizationError):
        no_names(2.0, flag=True)
    # a negative position counts from the end of each call's positional arguments
    neg = jit(lambda x, n=1: x * n, static_argnums=-1)
    assert neg(2.0, 3) == 6.0 and neg.trace_count == 1


def test_donate_argnums_are_checked_and_change_nothing() -> None:
    def f(x, y):
        return x + y

    x, y = ft.numpy.asarray([1.0, 2.0]), np.array([3.0, 4.0])
    for kw in ({"donate_argnums": 0}, {"donate_argnums": (0, 1)}, {"donate_argnames": "y"}):
        jf = jit(f, **kw)
        np.testing.assert_array_equal(jf(x, y), [4.0, 6.0])
        np.testing.assert_array_equal(jf(x, y=y), [4.0, 6.0])
        # donated arguments stay valid and unchanged (no buffer is reused)
        np.testing.assert_array_equal(x, [1.0, 2.0])
        np.testing.assert_array_equal(y, [3.0, 4.0])
        np.testing.assert_array_equal(ft.vmap(jf)(np.ones((2, 2)), np.ones((2, 2))), 2.0)
        assert ft.grad(lambda a, jf=jf: jf(a, a).sum())(x).tolist() == [2.0, 2.0]
    assert jit(f, donate_argnums=0).donate_argnames == ("x",)  # inferred, as in JAX
    assert jit(f, donate_argnames="y").donate_argnums == (1,)
    deco = jit(donate_argnums=(0,))(f)
    np.testing.assert_array_equal(deco(x, y), [4.0, 6.0])
    # JAX 0.10.2's ValueErrors
    for kw in ({"donate_argnums": 3}, {"donate_argnums": -3}):
        with pytest.raises(ValueError, match=r"donate_argnums in \[-2, 2\)"):
            jit(f, **kw)
    with pytest.raises(ValueError, match="does not take"):
        jit(f, donate_argnames="zz")
    for kw in (
        {"donate_argnums": 0, "static_argnums": 0},
        {"donate_argnames": "x", "static_argnames": "x"},
    ):
        with pytest.raises(ValueError, match="static and donated arguments to differ"):
            jit(f, **kw)
    with pytest.raises(TypeError, match="donate_argnums to be an int"):
        jit(f, donate_argnums="a")


def test_non_array_argument_is_named() -> None:
    f = jit(lambda x, opts: x * opts["scale"])
    with pytest.raises(TypeError, match=r"opts\['name'\]"):
        f(1.0, {"scale": 2.0, "name": "relu"})


def _fuzz_funcs():
    def matvec(w, x):
        return fnp.tanh(lax.dot_general(w, x, (((1,), (0,)), ((), ())))) + x[0]

    def tree(p, x):
        return {"y": p["a"] * x + p["b"], "s": fnp.sum(p["a"])}

    def bcast(x, y):
        return fnp.where(x > y, x - y, fnp.exp(y)) * 0.5

    return {"matvec": matvec, "tree": tree, "bcast": bcast}


FUZZ = _fuzz_funcs()
FUZZ_JIT = {k: jit(v) for k, v in FUZZ.items()}


def _fuzz_array(draw, kinds=("f8", "f4", "i8", "b")):
    shape = draw(st.lists(st.sampled_from([1, 2, 3]), max_size=3).map(tuple))
    dt = np.dtype(draw(st.sampled_from(kinds)))
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 3 - 1
    return a.astype(dt)


@st.composite
def _fuzz_call(draw):
    name = draw(st.sampled_from(sorted(FUZZ)))
    arr = lambda: _fuzz_array(draw)  # noqa: E731
    if name == "tree":
        keys = draw(st.sampled_from([("a", "b"), ("a",), ("a", "b", "c")]))
        p = {k: arr() for k in keys}
        p = draw(st.sampled_from([p, list(p.values()), (p,)]))
        return name, (p, arr())
    if name == "matvec" and draw(st.booleans()):  # mostly well-formed: the answer is checked
        m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        dt = draw(st.sampled_from(["f8", "f4", "i8"]))
        w = (np.arange(m * n).reshape(m, n) % 3 - 1.0).astype(dt)
        return name, (w, np.linspace(-1, 1, n).astype(dt))
    # (Python floats through a unary op: see test_weak_scalar_through_unary_op below.)
    other = [arr(), "text", None] + ([1.0] if name != "bcast" else [])
    return name, (arr(), draw(st.sampled_from(other)))


@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(call=_fuzz_call())
def test_fuzz_wrong_shapes_dtypes_structures(call) -> None:
    """A compiled function given any arguments either matches eager or raises a clear
    TypeError/ValueError (like eager); never a crash or a silently wrong answer."""
    name, args = call
    try:
        expected = FUZZ[name](*args)
    except Exception as e:  # noqa: BLE001 - eager decides what is an error
        expected_error = e
    else:
        expected_error = None
    if expected_error is not None:
        with pytest.raises((TypeError, ValueError, KeyError, IndexError)) as info:
            FUZZ_JIT[name](*args)
        assert str(info.value)
        return
    try:
        got = FUZZ_JIT[name](*args)
    except (TypeError, ValueError) as e:
        # NumPy accepts some inputs the typed primitives reject (e.g. bool arithmetic
        # NumPy would silently promote): a clear error naming the problem is fine.
        assert str(e)
        return
    assert_like_eager(got, expected, what=f"{name}{tuple(np.shape(a) for a in args)}")


def test_weak_scalar_through_unary_op_matches_numpy() -> None:
    def f(x, y):
        return fnp.exp(y) + x

    assert jit(f)(np.float32(1), 1.0).dtype == f(np.float32(1), 1.0).dtype

    def g(x, y):  # operators on Python scalars stay weak, as in NumPy 2
        return (y * 2.0 - y) * x

    assert jit(g)(np.float32(1), 1.0).dtype == g(np.float32(1), 1.0).dtype == np.float32


def test_integer_to_negative_power_is_a_clear_error() -> None:
    # NumPy refuses integer arrays to negative powers; Python ints give floats.
    with pytest.raises(ValueError, match="power: .* got the negative exponent -1"):
        jit(lambda x: x**-1)(np.arange(1, 4))
    assert jit(lambda x: x**-1)(2) == 0.5


def test_weak_int_comparison() -> None:
    assert bool(jit(lambda n: n > 2)(3)) is True
    assert jit(lambda n, m: n * m + 1)(3, 4) == 13


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_signed_remainders_match_numpy(dtype) -> None:
    # Numba's np.fmod on signed integers is an unsigned remainder: the emitter avoids it.
    info = np.iinfo(dtype)
    vals = np.array([7, -8, 3, 0, -7, -1, 2, -2, info.min, info.max], dtype)
    a, b = np.meshgrid(vals, vals)
    with np.errstate(all="ignore"):
        for f in (lax.rem, lambda a, b: a % b, lambda a, b: a // b):
            assert_like_eager(jit(f)(a, b), f(a, b))  # fused kernels
            for x, y in [(-7, 2), (7, -2), (-8, -2), (5, 0), (info.min, -1)]:
                x, y = dtype(x), dtype(y)
                assert_like_eager(jit(f)(x, y), f(x, y))  # 0-d: Python in the driver


def test_kernels_reject_unexpected_argument_types() -> None:
    f = jit(lambda x, y: x * y + 1.0)
    x = np.ones((3, 4))
    f(x, x)
    (entry,) = f._cache.values()
    kernel = entry.program.kernels[0].dispatcher
    with pytest.raises(TypeError):  # compilation is disabled: no new specializations
        kernel(
            np.ones((3, 4), np.float32),
            np.ones((3, 4), np.float32),
            np.float64(1),
            np.empty((3, 4)),
        )


# ---------------------------------------------------------------------------
# Numerics
# ---------------------------------------------------------------------------


def test_float32_sum_is_accurate() -> None:
    x = np.full(1_000_000, 0.1, np.float32)
    got = jit(lambda x: fnp.sum(x * 1.0))(x)
    assert got.dtype == np.float32
    assert abs(float(got) - 1e5) / 1e5 < 1e-5


_REDUCTION_CASES = [
    ((6, 5), (1,)),  # trailing: a local accumulator per row
    ((6, 5), (0,)),  # leading: rows added in turn, as NumPy does
    ((3, 4, 5), (1,)),  # middle
    ((3, 4, 5), (0, 2)),  # leading and trailing
    ((3, 4, 5), (1, 2)),  # trailing block of two axes (collapsed)
    ((4, 1, 5), (1,)),  # only a unit axis
    ((4, 1, 5), (1, 2)),
    ((1, 7), (1,)),
    ((2, 3, 4, 5), (0, 3)),
]


@pytest.mark.parametrize("shape,axes", _REDUCTION_CASES)
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reductions_fused_into_kernels_match_eager(shape, axes, kind) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[-1]).astype(np.float32)
    red = {"sum": fnp.sum, "max": fnp.max, "min": fnp.min}[kind]

    def f(x, b):
        y = fnp.exp(x * 0.5) + b  # computed in a kernel, reduced there too
        return red(y, axis=axes), red(y * 2.0, axis=axes) - 1.0

    low = jit(f).lower(x, b)
    assert ".reduce(" not in low.driver_source
    got, want = jit(f)(x, b), f(x, b)
    for g, w in zip(got, want):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_fused_reduction_when_the_value_is_also_an_output() -> None:
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    f = jit(lambda x: (x * 3.0, fnp.sum(x * 3.0, axis=1), fnp.max(x * 3.0, axis=0)))
    for g, w in zip(f(x), (x * 3, (x * 3).sum(1), (x * 3).max(0))):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_fused_max_and_min_keep_nan_and_inf() -> None:
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [2.0, np.inf, 0.0]])
    for dtype in (np.float32, np.float64):
        xd = x.astype(dtype)
        f = jit(lambda x: (fnp.max(x + 0.0, axis=1), fnp.min(x + 0.0, axis=1)))
        got = f(xd)
        np.testing.assert_array_equal(got[0], np.max(xd, axis=1))
        np.testing.assert_array_equal(got[1], np.min(xd, axis=1))


def test_fused_float32_sum_accumulates_accurately() -> None:
    x = np.full((2, 200_000), 0.1, np.float32)
    got = jit(lambda x: fnp.sum(x * 1.0, axis=1))(x)
    np.testing.assert_allclose(got, [2e4, 2e4], rtol=1e-6)


def test_softmax_cross_entropy_grad_fuses_its_reductions() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 5)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 8)]

    def loss(z, y):
        m = fnp.max(z, axis=1, keepdims=True)
        lse = fnp.log(fnp.sum(fnp.exp(z - m), axis=1, keepdims=True)) + m
        return -fnp.mean(fnp.sum((z - lse) * y, axis=1))

    f = ft.value_and_grad(loss)
    low = jit(f).lower(logits, y)
    assert low.driver_source.count(".reduce(") <= 2  # the input's max and the last mean
    for g, w in zip(jit(f)(logits, y), f(logits, y)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _mlp_like(x, w):
    h = fnp.maximum(x @ w + 1.0, 0.0)
    z = h * 2.0 - fnp.max(h, axis=1, keepdims=True)
    lse = fnp.log(fnp.sum(fnp.exp(z), axis=1))
    # outputs that are views of kernel results: never scratch buffers
    return lse, fnp.reshape(z, (-1,)), fnp.transpose(h * 3.0), fnp.sum(z * z, axis=0)


def test_scratch_buffers_never_alias_returned_outputs() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 6)).astype(np.float32)
    xs = [rng.standard_normal((4, 5)).astype(np.float32) for _ in range(3)]
    f = jit(_mlp_like)
    assert "_new_scratch" in f.lower(xs[0], w).driver_source  # intermediates are reused
    first = f(xs[0], w)
    kept = [np.array(o, copy=True) for o in first]
    for x in xs[1:]:
        out = f(x, w)
        for o, want in zip(out, _mlp_like(x, w)):
            np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-6)
    for o, k in zip(first, kept):  # later calls wrote nothing the first call returned
        np.testing.assert_array_equal(o, k)
    grad = jit(ft.grad(lambda w, x: fnp.sum(_mlp_like(x, w)[0])))
    g1 = grad(w, xs[0])
    g1_kept = g1.copy()
    grad(w, xs[1])
    np.testing.assert_array_equal(g1, g1_kept)


def test_scratch_buffers_with_threads_and_reentrant_calls() -> None:
    import threading

    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 6)).astype(np.float32)
    xs = [rng.standard_normal((4, 5)).astype(np.float32) for _ in range(8)]
    f = jit(_mlp_like)
    f(xs[0], w)
    errors: list[BaseException] = []

    def work(x) -> None:
        try:
            want = _mlp_like(x, w)
            for _ in range(200):
                for o, e in zip(f(x, w), want):
                    np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]

    # A grad_hook calling the same compiled function while its own call is running.
    inner: list[object] = []
    depth = [0]

    def hook(ct):
        if depth[0] == 0:
            depth[0] += 1
            inner.append(g(xs[1], w))

    def loss(x, w_):  # the hook runs first in the backward pass, then the rest
        return fnp.sum(ft.grad_hook(_mlp_like(x * 2.0, w_)[0], hook))

    g = jit(ft.grad(loss))
    got = g(xs[0], w)
    inner_want = ft.grad(lambda x, w: fnp.sum(_mlp_like(x * 2.0, w)[0]))(xs[1], w)
    want = ft.grad(lambda x, w: fnp.sum(_mlp_like(x * 2.0, w)[0]))(xs[0], w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inner[0], inner_want, rtol=1e-5, atol=1e-6)


def test_float32_stays_float32_in_kernels() -> None:
    x = np.linspace(0, 1, 7, dtype=np.float32)
    f = jit(lambda x: fnp.sqrt(x * 2.0 + 1e-3) / 3.0)
    out = f(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.sqrt(x * 2.0 + np.float32(1e-3)) / np.float32(3))


# ---------------------------------------------------------------------------
# Introspection and rules
# ---------------------------------------------------------------------------


def test_lower_as_text_shows_each_equation() -> None:
    def f(x, b):
        return fnp.maximum(x * 2.0 + b, 0.0), fnp.sum(x)

    x, b = np.ones((3, 4), np.float32), np.ones(4, np.float32)
    low = jit(f).lower(x, b)
    text = low.as_text()
    for eqn in low.jaxpr.eqns:
        assert f"= {eqn.primitive.name}" in text, eqn.primitive.name
    assert "@flat_kernel_jit" in text and "def _driver(" in text
    assert "np.add.reduce" in text  # reductions through NumPy (pairwise, accurate)
    assert len(low.kernel_sources) == 1  # one fused loop for the elementwise chain


def _mlp_row_sums(x, w):
    unused = fnp.sin(x)  # dead code: in the traced jaxpr, not in the lowered one
    del unused
    h = fnp.tanh(x @ w + 1.0)
    return (h * h).sum(axis=1)


def test_lowered_jaxpr_names_are_the_drivers_and_the_traced_jaxpr_is_make_jaxprs() -> None:
    from functrace.ir import var_namer

    x, w = np.ones((4, 3), np.float32), np.ones((3, 5), np.float32)
    low = jit(_mlp_row_sums).lower(x, w)
    lowered, traced = low.jaxpr.jaxpr, low.traced_jaxpr.jaxpr
    assert str(low.traced_jaxpr) == str(ft.make_jaxpr(_mlp_row_sums)(x, w))
    assert any(e.primitive.name == "sin" for e in traced.eqns)
    assert not any(e.primitive.name == "sin" for e in lowered.eqns)  # after DCE
    # every equation of .jaxpr is a comment of the driver with the same variable names
    name = var_namer()
    for v in (*lowered.constvars, *lowered.invars):
        name(v)
    inputs = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in lowered.invars)
    assert f"# inputs: {inputs}" in low.driver_source
    printed = str(low.jaxpr)
    for e in lowered.eqns:
        line = jit_codegen.fmt_eqn(e, name)
        assert f"# {line}" in low.driver_source
        outs = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in e.out_binders)
        assert f"    {outs} = {e.primitive.name}" in printed


def test_kernel_sections_are_named_like_their_driver_globals_and_show_driver_names() -> None:
    x, w = np.ones((4, 3), np.float32), np.ones((3, 5), np.float32)
    text = jit(_mlp_row_sums).lower(x, w).as_text()
    sections = text.split("# ==== kernel ")[1:]
    assert len(sections) == 1
    kname = sections[0].split(":", 1)[0]
    assert kname.startswith("_k") and f"{kname}(" in text.split("# ==== kernel ")[0]
    # the kernel's comments are the driver's equations (e = add c d), its arguments
    # listed by the driver's names
    assert "# driver values: x0=c, " in sections[0] and "y0=h" in sections[0]
    assert "= tanh " in sections[0] and "# f:f32[4,5] = tanh e  (v1)" in sections[0]


def test_products_with_one_are_forwarded_bit_for_bit() -> None:
    # grad's seed multiplies the transposed products (mul 1.0 f in the jaxpr); the
    # driver forwards the other operand, which is the same value bit for bit
    f = ft.value_and_grad(lambda x, y: x * y + x**2)
    assert "mul 1.0" in str(ft.make_jaxpr(f)(2.0, 3.0))
    assert "mul 1.0" not in jit(f).lower(2.0, 3.0).as_text()
    assert jit(f)(2.0, 3.0) == f(2.0, 3.0)
    special = np.array([-0.0, np.nan, np.inf, -np.inf, 5e-324])
    for g in (lambda x: x * 1.0, lambda x: 1 * x, lambda x: (x * np.float32(1)).sum()):
        got, want = jit(g)(special), g(special)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    a = np.arange(3.0)
    out = jit(lambda x: x * 1.0)(a)  # an output that is an input: still a copy
    assert not np.shares_memory(out, a)


def test_native_loop_sections_list_the_drivers_names_of_their_arguments() -> None:
    def g(c, xs):
        return lax.scan(lambda c, x: (c * 2.0 + x, c), c, xs)

    text = jit(g).lower(np.float32(1), np.ones(3, np.float32)).as_text()
    driver, loop = text.split("# ==== kernel ")
    kname = loop.split(":", 1)[0]
    assert f"{kname}(" in driver and "# driver values: k0=a, x0=b" in loop


def test_variable_names_are_python_identifiers_outside_keywords_and_driver_modules() -> None:
    import keyword

    from functrace.ir import Var, var_namer

    name = var_namer()
    names = [name(Var(core.ShapedArray((), np.dtype(np.float32)))) for _ in range(2000)]
    assert len(set(names)) == len(names)
    assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names)
    assert {"as_", "if_", "in_", "is_", "or_", "np_"} <= set(names)
    assert not {"as", "if", "in", "np", "math"} & set(names)


def test_scalar_functions_lower_to_plain_python() -> None:
    f = jit(ft.value_and_grad(lambda x, y: x * y + x**2))
    assert f(2.0, 3.0) == (10.0, 7.0)
    low = f.lower(2.0, 3.0)
    assert low.kernel_sources == [] and "_k" not in low.driver_source


def test_every_primitive_has_a_lowering_rule() -> None:
    import functrace.jit.driver_rules  # noqa: F401
    from functrace.lax.elementwise import elementwise_numpy

    for p in list(core.impl_rules):
        jit_lowering.lowering_rule(p)  # raises for a primitive with no way to lower
    for p in elementwise_numpy:
        rule = jit_emitters.numba_emitters.get(p)
        assert rule is not None and not isinstance(rule, jit_emitters.DriverRule), (
            f"{p.name}: elementwise but no Numba scalar emitter (register it in its block)"
        )
    bogus = core.Primitive("bogus_prim")
    with pytest.raises(NotImplementedError, match="bogus_prim.*numba_emitters"):
        jit_lowering.lowering_rule(bogus)


def test_primitive_without_rule_fails_clearly_under_jit() -> None:
    p = core.Primitive("no_lowering")
    core.abstract_eval_rules[p] = lambda x: x
    try:
        with pytest.raises(NotImplementedError, match="no_lowering"):
            jit(lambda x: p.bind(x))(np.ones(2))
    finally:
        del core.abstract_eval_rules[p]


def test_numba_typing_gap_falls_back_to_numpy_with_one_warning() -> None:
    p = core.Primitive("frobnicate")
    core.impl_rules[p] = lambda x: np.negative(x)
    core.abstract_eval_rules[p] = lambda x: x
    jit_emitters.numba_emitters[p] = "np.frobnicate({0})"  # no such function in Numba
    jit_codegen.strict_kernels = False
    try:
        f = jit(lambda x: p.bind(x * 2.0) + 1.0)
        with pytest.warns(RuntimeWarning, match="frobnicate.*NumPy calls instead"):
            out = f(np.arange(3.0))
        np.testing.assert_array_equal(out, -np.arange(3.0) * 2 + 1)
    finally:
        jit_codegen.strict_kernels = True
        del core.impl_rules[p], core.abstract_eval_rules[p], jit_emitters.numba_emitters[p]


def test_impl_disagreeing_with_abstract_eval_is_a_clear_error() -> None:
    p = core.Primitive("lying_impl")
    core.impl_rules[p] = lambda x: np.asarray(x, np.float32)  # announces float64 below
    core.abstract_eval_rules[p] = lambda x: x
    try:
        f = jit(lambda x: fnp.sin(p.bind(x)) * 2.0)
        with pytest.raises(TypeError, match="functrace.jit: expected a compiled kernel"):
            f(np.ones(3))
    finally:
        del core.impl_rules[p], core.abstract_eval_rules[p]


def test_complex_values_compile_or_use_numpy() -> None:
    z = np.array([1 + 2j, 3 - 1j, -1j])
    f = jit(lambda z: (z * z + 1j, z < 1j, fnp.maximum(z, z * 2), fnp.exp(z)))
    assert_like_eager(f(z), (z * z + 1j, z < 1j, np.maximum(z, z * 2), np.exp(z)))


def test_grad_hook_result_is_checked_inside_compiled_code() -> None:
    bad = jit(ft.grad(lambda x: fnp.sum(ft.grad_hook(x * 2.0, lambda ct: np.ones(7)))))
    with pytest.raises(ValueError, match="grad_hook.*shape"):
        bad(np.ones(3))
    scaled = jit(ft.grad(lambda x: fnp.sum(ft.grad_hook(x * 2.0, lambda ct: ct * 10))))
    np.testing.assert_allclose(scaled(np.ones(3)), 20.0)


def test_method_decorator_and_repr() -> None:
    class Model:
        def __init__(self, scale):
            self.scale = scale

        def __hash__(self):
            return hash(self.scale)

        def __eq__(self, other):
            return isinstance(other, Model) and other.scale == self.scale

        @jit(static_argnums=0)  # `self` is configuration: static (it is hashable)
        def apply(self, x):
            return x * 2.0

    assert Model(1.0).apply(np.float64(3.0)) == 6.0
    assert "jit of 'apply'" in repr(Model.apply)


def test_debug_env_prints_source(monkeypatch, capsys) -> None:
    monkeypatch.setenv("FUNCTRACE_DEBUG_JIT", "1")
    jit(lambda x: x + 1.0)(1.0)
    err = capsys.readouterr().err
    assert "cache key" in err and "def _driver" in err


# ---------------------------------------------------------------------------
# The disk cache (fresh processes)
# ---------------------------------------------------------------------------

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import functrace.numpy as fnp
    from functrace.jit import jit

    @jit
    def step(w, x):
        h = fnp.maximum(x * w + 1.0, 0.0)
        return h, fnp.sum(fnp.exp(h) * 0.5)

    out = step(np.ones((4, 3), np.float32), np.arange(3, dtype=np.float32))
    print(json.dumps({"compiled": step.compile_count, "value": float(out[1])}))
""")


def _run(script: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_extra
    )
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )


def test_second_process_loads_kernels_from_disk(tmp_path) -> None:
    # the disk cache holds Numba's kernels (direct ones compile in every process)
    env = {"FUNCTRACE_CACHE_DIR": str(tmp_path / "cache"), "FUNCTRACE_JIT_KERNELS": "numba"}
    first = _run(_SCRIPT, env)
    assert first.returncode == 0, first.stderr
    second = _run(_SCRIPT, env)
    assert second.returncode == 0, second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["compiled"] >= 1
    assert b["compiled"] == 0
    assert a["value"] == b["value"]
    assert any(p.name.endswith(".py") for p in (tmp_path / "cache").iterdir())


def test_unwritable_cache_dir_warns_once_and_works(tmp_path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    script = _SCRIPT + textwrap.dedent("""
        out2 = jit(lambda x: fnp.cos(x) + 2.0)(np.ones(3))
        assert np.allclose(out2, np.cos(1.0) + 2.0)
    """)
    env = {"FUNCTRACE_CACHE_DIR": str(blocker / "sub"), "PYTHONWARNINGS": "always"}
    res = _run(script, {**env, "FUNCTRACE_JIT_KERNELS": "numba"})  # (Numba uses the cache)
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("expected a writable cache directory") == 1, res.stderr


def test_disable_jit_env_and_clear_cache(tmp_path) -> None:
    script = textwrap.dedent("""
        import functrace.numpy as fnp
        from functrace.jit import jit
        f = jit(lambda x: fnp.sin(x) * 2.0)
        f(1.0)
        print(f.trace_count)
    """)
    res = _run(script, {"FUNCTRACE_DISABLE_JIT": "1", "FUNCTRACE_CACHE_DIR": str(tmp_path)})
    assert res.returncode == 0 and res.stdout.strip() == "0", res.stderr
    # clear_cache empties this module's cache directory (of Numba's kernels)
    os.environ["FUNCTRACE_JIT_KERNELS"] = "numba"
    try:
        jit(lambda x: fnp.cos(x) * 3.0)(np.ones(2))
    finally:
        del os.environ["FUNCTRACE_JIT_KERNELS"]
    cache_dir = os.environ["FUNCTRACE_CACHE_DIR"]
    assert any(n.endswith(".py") for n in os.listdir(cache_dir))
    clear_cache()
    assert not any(n.endswith(".py") for n in os.listdir(cache_dir))
    np.testing.assert_allclose(jit(lambda x: fnp.cos(x) * 3.0)(np.ones(2)), np.cos(1.0) * 3)


# ---------------------------------------------------------------------------
# Native loops: scan/while bodies become one Numba function (more in test_native_loops.py)
# ---------------------------------------------------------------------------

from functrace.jit import loops as jit_loops  # noqa: E402


def _native_count(f, *args) -> int:
    return f.lower(*args).as_text().count(jit_loops.MARKER + " [")


def _euler_loss(c):
    def body(i, state):
        x, v = state
        return x + 0.01 * v, v + 0.01 * (-x - c * v)

    x, v = lax.fori_loop(0, 200, body, (1.0, 0.0))
    return x * x + v * v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
def test_native_scan_scalar_body_matches_eager(dtype, reverse) -> None:
    def f(c, xs):
        def body(carry, x):
            s, k = carry
            s2 = s * c + fnp.sin(x) - (k > 3).astype(dtype)
            return (s2, k + 1), (s2 * x, x > 0.5)

        return lax.scan(body, (dtype(0.5), np.int32(0)), xs, reverse=reverse)

    c = dtype(0.75)
    xs = np.linspace(0, 1, 11).astype(dtype)
    jf = jit(f)
    got, want = jf(c, xs), f(c, xs)
    for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert _native_count(jf, c, xs) == 1


def test_native_scan_no_carry_and_while_loop() -> None:
    def f(x):
        _, ys = lax.scan(lambda c, x: (c, x * 2.0 + c), 1.0, x)

        def cond(s):
            return s[0] < 100.0

        def body(s):
            return s[0] * 1.5 + 1.0, s[1] + 1

        n = lax.while_loop(cond, body, (fnp.sum(x), np.int64(0)))
        return ys, n

    x = np.arange(4.0)
    jf = jit(f)
    got, want = jf(x), f(x)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1][0] == want[1][0] and got[1][1] == want[1][1]
    assert np.asarray(got[1][1]).dtype == np.int64
    assert _native_count(jf, x) == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_fori_loop_dynamic_bounds(dtype) -> None:
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, s: s * x + i.astype(dtype), dtype(1.0))

    x = dtype(0.5)
    jf = jit(f)
    got, want = jf(x, 7), f(x, 7)
    assert np.asarray(got).dtype == np.asarray(want).dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert _native_count(jf, x, 7) == 1


def test_native_loop_value_and_grad_fori_and_scan() -> None:
    jf = jit(ft.value_and_grad(_euler_loss))
    got, want = jf(0.3), ft.value_and_grad(_euler_loss)(0.3)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the forward scan, the transposed reverse scan and the scalar arithmetic between
    # them: one native function (loops.as_one_loop), called once by the driver
    assert _native_count(jf, 0.3) == 1

    def scan_loss(c, xs):
        def body(s, x):
            s = s * c + fnp.tanh(x * s)
            return s, s * s

        s, ys = lax.scan(body, 0.1, xs)
        return s + fnp.sum(ys)

    xs = np.linspace(-1, 1, 9)
    g = jit(ft.grad(scan_loss, argnums=(0, 1)))
    for a, b in zip(g(0.9, xs), ft.grad(scan_loss, argnums=(0, 1))(0.9, xs)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _two_loops(c, n):
    # a while loop, scalar arithmetic (exp, comparisons, an int) and a scan
    s, k = lax.while_loop(lambda s: s[0] < 5.0, lambda s: (s[0] * c + 0.5, s[1] + 1), (1.0, 0))
    t = fnp.exp(-s) * fnp.where(k > 2, 2.0, 3.0)
    u = lax.fori_loop(0, n, lambda i, a: a + t * i, 0.0)
    return u, k, s > 4.0


@pytest.mark.parametrize("grad", [False, True])
def test_native_whole_program_matches_loop_by_loop(monkeypatch, grad) -> None:
    """A program of 0-d inputs and outputs made of loops and scalar arithmetic is one
    native function: the same results as one function per loop with NumPy scalar
    arithmetic between them (the lowering before ``as_one_loop``)."""
    if grad:
        fun, args = ft.value_and_grad(_euler_loss), (0.3,)
    else:
        fun, args = (lambda c: _two_loops(c, 7)), (1.25,)
    whole = jit(fun)
    got = whole(*args)
    assert _native_count(whole, *args) == 1
    text = whole.lower(*args).as_text()
    assert "scan[jaxpr={...}, num_consts=1" in text and "length=1," in text
    monkeypatch.setattr(jit_loops, "as_one_loop", lambda jaxpr: jaxpr)
    by_loop = jit(lambda *a: fun(*a))  # a new function: jit(fun) would share whole's traces
    want = by_loop(*args)
    assert _native_count(by_loop, *args) == 2
    for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype and type(g) is type(w)
        np.testing.assert_array_equal(g, w)
    eager = fun(*args)
    for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(eager), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_native_whole_program_falls_back_once_when_numba_fails(monkeypatch) -> None:
    """A whole-program loop Numba cannot compile runs its body's own driver (lowered
    without ``as_one_loop``: no endless re-wrapping), with the usual warning."""
    from functrace.jit import codegen as jit_codegen

    def refuse(*_a, **_k):
        raise RuntimeError("no Numba today")

    monkeypatch.setattr(jit_codegen, "strict_kernels", False)
    monkeypatch.setattr(jit_loops, "load_source", refuse)
    monkeypatch.setattr(jit_loops, "_warned", set())
    jf = jit(ft.value_and_grad(_euler_loss))
    with pytest.warns(RuntimeWarning, match="native scan loop"):
        got = jf(0.3)
    np.testing.assert_allclose(got, ft.value_and_grad(_euler_loss)(0.3), rtol=1e-12)
    assert _native_count(jf, 0.3) == 0


def test_native_whole_program_only_for_scalar_programs() -> None:
    """Array inputs, array work at the top level, or no loop at all: the program keeps
    its driver (BLAS products and fused kernels stay)."""

    def with_array(x):
        return lax.fori_loop(0, 3, lambda i, s: s * 0.5, fnp.sum(x @ x))

    x = np.ones((4, 4))
    assert "length=1," not in jit(with_array).lower(x).as_text()
    assert _native_count(jit(lambda c: c * c + 1.0), 2.0) == 0


def test_native_loop_falls_back_for_bodies_without_native_rules() -> None:
    def f(v, xs):
        def body(c, x):  # sort has no native-loop rule: a Python loop around a body driver
            return lax.sort(c) * x + fnp.sum(c), fnp.sum(c) * x

        return lax.scan(body, v, xs)

    v, xs = np.arange(3.0), np.linspace(0, 1, 5)
    jf = jit(f)
    got, want = jf(v, xs), f(v, xs)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    assert _native_count(jf, v, xs) == 0

    def nested(x):
        def outer(c, _):
            return lax.sort(lax.fori_loop(0, 3, lambda i, s: s * 1.1, c)), c

        return lax.scan(outer, x, None, length=4)

    jn = jit(nested)
    for a, b in zip(jn(v), nested(v)):
        np.testing.assert_allclose(a, b)
    assert _native_count(jn, v) == 1  # the inner loop only; the outer stays Python


_ND_PRODUCTS = [
    # (lhs shape, rhs shape, dimension numbers): dense layers on (batch, seq, features),
    # their weight gradients (leading axes contracted) and attention's batched products
    ((2, 3, 4), (4, 5), (((2,), (0,)), ((), ()))),
    ((2, 3, 4), (5, 4), (((2,), (1,)), ((), ()))),
    ((2, 3, 4), (2, 3, 5), (((0, 1), (0, 1)), ((), ()))),
    ((2, 3, 4), (5, 2, 3), (((0, 1), (1, 2)), ((), ()))),
    ((4,), (2, 3, 4), (((0,), (2,)), ((), ()))),
    ((2, 3, 4), (2, 3, 4), (((0, 1, 2), (0, 1, 2)), ((), ()))),
    ((2, 3, 4, 5), (2, 3, 6, 5), (((3,), (3,)), ((0, 1), (0, 1)))),
    ((2, 3, 4, 5), (2, 3, 5, 6), (((3,), (2,)), ((0, 1), (0, 1)))),
    ((2, 5, 4), (2, 5, 6), (((1,), (1,)), ((0,), (0,)))),
    ((2, 4, 5), (2, 6, 5), (((2,), (2,)), ((0,), (0,)))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("xs, ys, dn", _ND_PRODUCTS)
def test_nd_products_run_as_one_blas_call_and_match_the_impl(dtype, xs, ys, dn) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(xs) * 3).astype(dtype)
    y = (rng.standard_normal(ys) * 3).astype(dtype)
    want = lax.dot_general(x, y, dn)

    def f(a, b):  # the product's result in a scratch buffer, then read by a kernel
        return lax.dot_general(a, b, dn) * 2

    def g(a, b):  # the product as an output (a fresh array)
        return lax.dot_general(a, b, dn)

    for fn, scale in ((f, 2), (g, 1)):
        jf = jit(fn)
        text = jf.lower(x, y).as_text()
        driver = text.split("# ==== kernel ")[0]
        assert re.search(r"= _f\d+\(", driver) is None  # no call of the impl
        assert "np.matmul(" in driver or re.search(r"= _g\d+\(a, b", driver)
        for _ in range(2):  # the second call reuses the scratch buffers
            got = jf(x, y)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want * scale, rtol=1e-5)


def _deep_mlp_step(depth: int, width: int = 16):
    """An MLP training step (forward, backward, Adam) with ``depth`` identical hidden
    layers, and arguments for it."""
    rng = np.random.default_rng(0)
    sizes = [12] + [width] * depth + [3]
    params = [
        (rng.normal(size=(m, n)).astype(np.float32) * 0.3, np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    m = ft.tree_util.tree_map(np.zeros_like, params)
    x = rng.normal(size=(8, 12)).astype(np.float32)
    y = rng.normal(size=(8, 3)).astype(np.float32)

    def loss(ps, x, y):
        h = x
        for w, b in ps[:-1]:
            h = fnp.tanh(h @ w + b)
        w, b = ps[-1]
        return fnp.mean((h @ w + b - y) ** 2)

    def step(ps, m, v, x, y):
        g = ft.grad(loss)(ps, x, y)
        upd = ft.tree_util.tree_map
        m = upd(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = upd(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        ps = upd(lambda p, m, v: p - 1e-3 * m / (fnp.sqrt(v) + 1e-8), ps, m, v)
        return ps, m, v

    return step, (params, m, m, x, y)


def test_identical_layers_share_kernels() -> None:
    """Kernels are keyed by their source, and a fusion group is split into its
    independent chains: a 16-layer model needs no more distinct kernels than a
    2-layer one of the same width (its identical layers and Adam updates call the
    same compiled kernels), and the split changes no result."""
    distinct = {}
    for depth in (2, 3, 16):
        step, args = _deep_mlp_step(depth)
        low = jit(step).lower(*args)
        distinct[depth] = set(low.kernel_sources)
        assert len(low.kernel_sources) > len(distinct[depth])  # shared ones are called again
        with disable_jit():
            want = step(*args)
        got = jit(step)(*args)
        for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # float32 through 16 layers
    assert len(distinct[16]) <= len(distinct[3])
    assert distinct[16] <= distinct[3]


def test_fusion_components_split_independent_chains() -> None:
    from functrace.jit import fusion

    def f(a, b, c):
        return fnp.sin(a) * 2.0, fnp.cos(b) + c, fnp.exp(a + b)

    x = np.ones((4, 5), np.float32)
    closed = ft.make_jaxpr(f)(x, x, x)
    groups = [g for kind, g in fusion.plan(closed.jaxpr).schedule if kind == "group"]
    # three chains of one shape, no value passed between them: three kernels
    assert [len(g.eqns) for g in groups] == [2, 2, 2]
    assert len(set(jit(f).lower(x, x, x).kernel_sources)) == 3


def test_fast_paths_take_functrace_arrays(monkeypatch) -> None:
    """Results of eager functrace code and of jit are ``functrace.Array``s: feeding
    them back (a training loop) takes the fast paths, flat and pytree, with the same
    results as plain ndarrays; the driver sees plain views (never Array's hooks)."""
    from functrace.jit import api

    general = []
    orig = api.JitFunction._call_general
    monkeypatch.setattr(
        api.JitFunction, "_call_general", lambda self, a, k: general.append(1) or orig(self, a, k)
    )
    x = np.arange(6.0).reshape(2, 3)
    ax = jit(lambda v: v + 0.0)(x)
    assert type(ax) is ft.Array

    flat = jit(lambda v, w: v * 2.0 + w)
    want = flat(x, x)
    general.clear()
    for _ in range(3):
        got = flat(ax, ax)
        np.testing.assert_array_equal(got, want)
    assert len(general) == 1  # the first Array call registers its own fast key

    def tree_step(p):
        return {"w": p["w"] * 0.5, "b": (p["b"][0] - 1.0,)}

    step = jit(tree_step)
    p = {"w": ax, "b": (ax,)}
    ref = {"w": x, "b": (x,)}
    general.clear()
    for _ in range(4):
        p, ref = step(p), tree_step(ref)
        for a, b in zip(ft.tree_util.tree_leaves(p), ft.tree_util.tree_leaves(ref)):
            np.testing.assert_array_equal(a, b)
    assert len(general) <= 2 and step.trace_count == 1
    np.testing.assert_array_equal(ax, np.arange(6.0).reshape(2, 3))  # inputs unchanged
