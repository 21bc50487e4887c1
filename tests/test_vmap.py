"""vmap: the op table against a Python loop, per-example gradients, composition, errors.

* Every op-table row with array arguments: ``vmap(f)`` over a batch of 3 examples
  equals stacking ``f`` over the examples, with the batch axis of each argument at a
  drawn position (0, last, negative) or ``None`` (unbatched), and a drawn ``out_axes``.
  Integer index arrays (``const`` rows) are rolled per example, so gathers and
  scatters see different indices in each example.
* The same under reverse/forward mode (``grad`` of ``vmap``, ``vmap`` of ``jvp``) and
  under staging (``make_jaxpr`` of ``vmap``).
* Per-example gradients of an MLP, nested vmaps, batched Jacobians, and the errors.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace.errors import ConcretizationError
from functrace.ir import eval_jaxpr
from op_db import ALL_OPS, OpInfo, op_args, shapes_for
from profiles import examples

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

B = 3  # examples per batch
FEW = settings(max_examples=examples(3, 5))

# Rows whose ``const`` arrays must stay unbatched (e.g. they decide an output shape).
# name -> reason. Other const ndarrays are batched in some drawn examples.
UNBATCHED_CONSTS: dict[str, str] = {}


# ---------------------------------------------------------------------------
# Drawing a batch
# ---------------------------------------------------------------------------


def _is_array_arg(op: OpInfo, k: int, value: Any) -> bool:
    """Whether argument k can carry a batch axis in this test."""
    if op.args[k].kind != "const":
        return True
    return isinstance(value, np.ndarray) and op.name not in UNBATCHED_CONSTS


def _vary(value: Any, b: int) -> Any:
    # Example b of a const index array: its entries rolled by b (the same set of indices,
    # so still valid, but at different places in each example).
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.ndim:
        return np.roll(value.ravel(), b).reshape(value.shape)
    return value


@dataclasses.dataclass
class Batch:
    examples: list[tuple[Any, ...]]  # B tuples of per-example arguments
    args: tuple[Any, ...]  # the batched arguments passed to vmap(f)
    in_axes: tuple[int | None, ...]


@st.composite
def batches(draw: Any, op: OpInfo, dtype: Any) -> Batch:
    """B examples of op's arguments (one shape for all), stacked along drawn in_axes."""
    shapes = draw(shapes_for(op))
    fixed = dataclasses.replace(op, shapes=shapes)
    drawn = [draw(op_args(fixed, dtype)) for _ in range(B)]
    n = len(op.args)
    axes: list[int | None] = []
    for k in range(n):
        if not _is_array_arg(op, k, drawn[0][k]):
            axes.append(None)
            continue
        nd = np.ndim(drawn[0][k]) + 1
        axes.append(draw(st.sampled_from([None, 0, nd - 1, -1, -nd, *range(nd)])))
    batchable = [k for k in range(n) if _is_array_arg(op, k, drawn[0][k])]
    if batchable and all(a is None for a in axes):
        axes[batchable[0]] = draw(st.sampled_from([0, -1]))
    examples = []
    for b in range(B):
        ex = []
        for k in range(n):
            if axes[k] is None:
                ex.append(drawn[0][k])  # unbatched: the same value in every example
            elif op.args[k].kind == "const":
                ex.append(_vary(drawn[0][k], b))
            else:
                ex.append(drawn[b][k])
        examples.append(tuple(ex))
    args = []
    for k in range(n):
        if axes[k] is None:
            args.append(examples[0][k])
        else:
            stacked = np.stack([np.asarray(e[k]) for e in examples])
            args.append(np.moveaxis(stacked, 0, axes[k]))
    return Batch(examples, tuple(args), tuple(axes))


def _rows(predicate: Any = lambda op: True) -> list[Any]:
    return [
        pytest.param(op, id=op.name)
        for op in ALL_OPS
        if any(a.kind != "const" for a in op.args) and predicate(op)
    ]


def _tol(op: OpInfo, dtype: Any) -> dict[str, float]:
    if np.dtype(dtype) == np.float32:
        return {"rtol": max(op.rtol, 2e-5), "atol": max(op.atol, 2e-5)}
    return {"rtol": max(op.rtol, 1e-6), "atol": max(op.atol, 1e-6)}


def assert_same(actual: Any, expected: Any, op: OpInfo, dtype: Any, what: str) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{op} {what}: shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{op} {what}: dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, **_tol(op, dtype), err_msg=f"{op} {what}")
    else:
        np.testing.assert_array_equal(a, e, err_msg=f"{op} {what}")


def _loop(f: Any, examples: list[tuple[Any, ...]], out_axis: int = 0) -> np.ndarray:
    return np.moveaxis(np.stack([np.asarray(f(*ex)) for ex in examples]), 0, out_axis)


# ---------------------------------------------------------------------------
# The op table
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", _rows())
@FEW
@given(data=st.data())
def test_vmap_matches_loop(op: OpInfo, data: Any) -> None:
    dtype = op.dtypes[0]
    batch = data.draw(batches(op, dtype))
    out_axis = data.draw(st.sampled_from([0, -1]))
    expected = _loop(op.fn, batch.examples, out_axis)
    out = ft.vmap(op.fn, in_axes=batch.in_axes, out_axes=out_axis)(*batch.args)
    assert_same(out, expected, op, dtype, f"vmap in_axes={batch.in_axes}")


@pytest.mark.parametrize("op", _rows())
@settings(max_examples=1)
@given(data=st.data())
def test_vmap_of_empty_and_single_batches(op: OpInfo, data: Any) -> None:
    # A batch of 0 examples has the output of one example's shape behind a 0 axis (as in
    # JAX; a batched while_loop over it once never ended, a batched convolution folded
    # it into 0 feature groups); a batch of 1 is that example.
    dtype = op.dtypes[0]
    args = data.draw(op_args(op, dtype))
    one = op.fn(*args)
    traced = [i for i, a in enumerate(op.args) if a.kind != "const"]
    axes = tuple(0 if i in traced else None for i in range(len(args)))
    for size in (0, 1):
        batched = [
            np.repeat(np.asarray(a)[None], size, 0) if i in traced else a
            for i, a in enumerate(args)
        ]
        out = ft.vmap(op.fn, in_axes=axes)(*batched)
        got, want = ft.tree_util.tree_leaves(out), ft.tree_util.tree_leaves(one)
        assert len(got) == len(want), f"{op} batch of {size}: {len(got)} outputs"
        for g, w in zip(got, want):
            if size:
                assert_same(np.asarray(g)[0], w, op, dtype, "vmap of a batch of 1")
            else:
                g, w = np.asarray(g), np.asarray(w)
                assert (g.shape, g.dtype) == ((0, *w.shape), w.dtype), f"{op}: {g.shape}"


@pytest.mark.parametrize("op", _rows())
@settings(max_examples=2)
@given(data=st.data())
def test_make_jaxpr_of_vmap(op: OpInfo, data: Any) -> None:
    # Batching rules are built from traceable ops: staging the batched function works.
    dtype = op.dtypes[0]
    batch = data.draw(batches(op, dtype))
    f = ft.vmap(op.fn, in_axes=batch.in_axes)
    closed = ft.make_jaxpr(f)(*batch.args)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, list(batch.args))
    assert_same(out, _loop(op.fn, batch.examples), op, dtype, "make_jaxpr(vmap)")


def _float_argnums(op: OpInfo) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(op.args) if a.kind == "float")


@pytest.mark.parametrize("op", _rows(lambda op: op.grad))
@settings(max_examples=2)
@given(data=st.data())
def test_grad_of_vmap(op: OpInfo, data: Any) -> None:
    # Reverse and forward mode through the batching rules, against finite differences.
    batch = data.draw(batches(op, np.float64))
    nums = _float_argnums(op)
    f = ft.vmap(op.fn, in_axes=batch.in_axes)

    def g(*diff: Any) -> Any:
        full = list(batch.args)
        for i, v in zip(nums, diff):
            full[i] = v
        return f(*full)

    ft.check_grads(
        g,
        tuple(batch.args[i] for i in nums),
        order=1,
        modes=("fwd", "rev"),
        atol=op.grad_tol,
        rtol=10 * op.grad_tol,
    )


@pytest.mark.parametrize("op", _rows(lambda op: op.grad))
@settings(max_examples=2)
@given(data=st.data())
def test_vmap_of_jvp(op: OpInfo, data: Any) -> None:
    # Batching the JVP rules: per-example tangents, as a loop of jvps.
    batch = data.draw(batches(op, np.float64))
    nums = _float_argnums(op)
    rng = np.random.default_rng(0)
    tangents = [rng.standard_normal(np.shape(batch.args[i])) for i in nums]
    t_axes = [batch.in_axes[i] for i in nums]

    def f_jvp(*args_and_tangents: Any) -> Any:
        args, tans = list(args_and_tangents[: len(op.args)]), args_and_tangents[len(op.args) :]

        def h(*diff: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, diff):
                full[i] = v
            return op.fn(*full)

        return ft.jvp(h, tuple(args[i] for i in nums), tuple(tans))[1]

    def example_tangents(b: int) -> list[Any]:
        return [t if a is None else np.take(t, b, axis=a) for t, a in zip(tangents, t_axes)]

    expected = np.stack(
        [np.asarray(f_jvp(*ex, *example_tangents(b))) for b, ex in enumerate(batch.examples)]
    )
    out = ft.vmap(f_jvp, in_axes=(*batch.in_axes, *t_axes))(*batch.args, *tangents)
    assert_same(out, expected, op, np.float64, "vmap(jvp)")


# ---------------------------------------------------------------------------
# Batched start indices and index arrays (each example reads its own place)
# ---------------------------------------------------------------------------


def test_dynamic_slice_batched_starts() -> None:
    x = np.arange(60.0).reshape(3, 4, 5)
    i = np.array([0, 3, -2])  # 3 clamps to 2, -2 clamps to 0
    j = np.array([4, 1, 2], np.int32)
    f = lambda x, i, j: lax.dynamic_slice(x, [i, j], (2, 3))
    expected = np.stack([f(x[b], i[b], j[b]) for b in range(3)])
    np.testing.assert_array_equal(ft.vmap(f)(x, i, j), expected)
    # unbatched operand, batched starts
    expected = np.stack([f(x[0], i[b], 1) for b in range(3)])
    np.testing.assert_array_equal(ft.vmap(f, in_axes=(None, 0, None))(x[0], i, 1), expected)
    # the batched starts lower to a gather (no loop over the batch)
    jaxpr = str(ft.make_jaxpr(ft.vmap(f))(x, i, j))
    assert "gather" in jaxpr and "dynamic_slice" not in jaxpr


def test_dynamic_update_slice_batched_starts_and_grad() -> None:
    rng = np.random.default_rng(1)
    x, u = rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 2, 2))
    i = np.array([0, 2, 9], np.uint8)

    def f(x: Any, u: Any, i: Any) -> Any:
        return lax.dynamic_update_slice(x, u, [i, np.array(1)])

    expected = np.stack([f(x[b], u[b], i[b]) for b in range(3)])
    np.testing.assert_allclose(ft.vmap(f)(x, u, i), expected)
    ft.check_grads(lambda x, u: ft.vmap(f, in_axes=(0, 0, 0))(x, u, i), (x, u), order=2)


def test_gather_scatter_batched_indices_grad() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5, 2))
    idx = np.array([[0, 4, 4], [1, 1, 2], [3, 0, 1]])
    gather = lambda x, i: lax.gather(x, [i], (0,))
    np.testing.assert_allclose(ft.vmap(gather)(x, idx), np.stack([x[b][idx[b]] for b in range(3)]))
    ft.check_grads(lambda x: ft.vmap(gather)(x, idx), (x,), order=2)
    u = rng.normal(size=(3, 3, 2))
    add = lambda x, u, i: lax.scatter_add(x, u, [i], (0,))
    np.testing.assert_allclose(
        ft.vmap(add)(x, u, idx), np.stack([add(x[b], u[b], idx[b]) for b in range(3)])
    )
    ft.check_grads(lambda x, u: ft.vmap(add)(x, u, idx), (x, u), order=2)


# ---------------------------------------------------------------------------
# Per-example gradients
# ---------------------------------------------------------------------------


def _mlp_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": rng.normal(size=(4, 8)) / 2,
        "b1": rng.normal(size=8) / 10,
        "w2": rng.normal(size=(8, 3)) / 3,
        "b2": rng.normal(size=3) / 10,
    }


def _loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return fnp.mean((out - y) ** 2)


def test_per_example_gradients_match_loop() -> None:
    rng = np.random.default_rng(3)
    params = _mlp_params(rng)
    X, Y = rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    per_example = ft.vmap(ft.grad(_loss), in_axes=(None, 0, 0))(params, X, Y)
    assert set(per_example) == set(params)
    for k, v in params.items():
        assert per_example[k].shape == (6, *v.shape)
    for n in range(6):
        g = ft.grad(_loss)(params, X[n], Y[n])
        for k in params:
            np.testing.assert_allclose(per_example[k][n], g[k], rtol=1e-10, atol=1e-12)
    # The mean of the per-example gradients is the gradient of the mean loss.
    mean_loss = lambda p: fnp.mean(ft.vmap(_loss, in_axes=(None, 0, 0))(p, X, Y))
    full = ft.grad(mean_loss)(params)
    for k in params:
        np.testing.assert_allclose(per_example[k].mean(0), full[k], rtol=1e-10, atol=1e-12)


def test_per_example_gradients_with_dict_in_axes() -> None:
    rng = np.random.default_rng(4)
    params = _mlp_params(rng)
    X, Y = rng.normal(size=(5, 4)), rng.normal(size=(3, 5))  # labels batched along axis 1
    axes = ({"w1": None, "b1": None, "w2": None, "b2": None}, 0, 1)
    per_example = ft.vmap(ft.grad(_loss), in_axes=axes)(params, X, Y)
    for n in range(5):
        g = ft.grad(_loss)(params, X[n], Y[:, n])
        for k in params:
            np.testing.assert_allclose(per_example[k][n], g[k], rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------


def _f(x: Any, w: Any) -> Any:
    # A mix of shape, reduction and elementwise primitives for one example x: (3, 4).
    h = fnp.sin(lax.dot_general(x, w, (((1,), (0,)), ((), ()))))  # (3, 2)
    return lax.reduce_max(lax.cumsum(h, 0), (0,)) + fnp.sum(lax.transpose(x, (1, 0)) ** 2)


def test_vmap_of_vmap() -> None:
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(3, 4, 5, 2)), rng.normal(size=(4, 2))
    # outer: axis 3 of x (size 2) -> (3, 4, 5); inner: its last axis (size 5) -> (3, 4)
    out = ft.vmap(ft.vmap(_f, in_axes=(-1, None)), in_axes=(3, None))(x, w)
    expected = np.stack([np.stack([_f(x[:, :, j, i], w) for j in range(5)]) for i in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_vmap_of_vmap_both_batched() -> None:
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=(2, 5, 3, 4)), rng.normal(size=(5, 4, 2))
    # outer: x axis 1 and w axis 0 (size 5); inner: x axis 0 (size 2), w unbatched
    out = ft.vmap(ft.vmap(_f, in_axes=(0, None)), in_axes=(1, 0))(x, w)
    expected = np.stack([np.stack([_f(x[i, o], w[o]) for i in range(2)]) for o in range(5)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_grad_of_summed_vmap_against_finite_differences() -> None:
    rng = np.random.default_rng(7)
    x, w = rng.normal(size=(4, 3, 4)), rng.normal(size=(4, 2))
    total = lambda x, w: ft.vmap(_f, in_axes=(0, None))(x, w).sum()
    ft.check_grads(total, (x, w), order=2)
    g = ft.grad(total)(x, w)
    expected = ft.testing.numerical_grad(lambda x: total(x, w), (x,))
    np.testing.assert_allclose(
        g, expected[0] if isinstance(expected, tuple) else expected, rtol=1e-6, atol=1e-8
    )


def test_vmap_of_grad_of_vmap() -> None:
    rng = np.random.default_rng(8)
    x, w = rng.normal(size=(2, 4, 3, 4)), rng.normal(size=(4, 2))
    inner = lambda x, w: ft.vmap(_f, in_axes=(0, None))(x, w).sum()
    out = ft.vmap(ft.grad(inner, argnums=1), in_axes=(0, None))(x, w)
    expected = np.stack([ft.grad(inner, argnums=1)(x[b], w) for b in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_vmap_of_jvp_and_vjp() -> None:
    rng = np.random.default_rng(9)
    x, t = rng.normal(size=(5, 3, 4)), rng.normal(size=(5, 3, 4))
    w = rng.normal(size=(4, 2))
    f = lambda x: _f(x, w)
    jvp_out = ft.vmap(lambda x, t: ft.jvp(f, (x,), (t,))[1])(x, t)
    np.testing.assert_allclose(
        jvp_out, np.stack([ft.jvp(f, (x[b],), (t[b],))[1] for b in range(5)]), rtol=1e-12
    )
    ct = rng.normal(size=(5, 2))
    vjp_out = ft.vmap(lambda x, c: ft.vjp(f, x)[1](c)[0])(x, ct)
    np.testing.assert_allclose(
        vjp_out, np.stack([ft.vjp(f, x[b])[1](ct[b])[0] for b in range(5)]), rtol=1e-12
    )


def _numerical_jacobian(f: Any, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out_shape = np.shape(f(x))
    jac = np.zeros(out_shape + x.shape)
    for idx in np.ndindex(*x.shape):
        dx = np.zeros_like(x)
        dx[idx] = eps
        jac[(...,) + idx] = (np.asarray(f(x + dx)) - np.asarray(f(x - dx))) / (2 * eps)
    return jac


@pytest.mark.parametrize("jac", [ft.jacfwd, ft.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobians_agree_with_finite_differences(jac: Any) -> None:
    rng = np.random.default_rng(10)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    f = lambda x: _f(x, w)
    np.testing.assert_allclose(jac(f)(x), _numerical_jacobian(f, x), rtol=1e-6, atol=1e-7)
    # A batched Jacobian: vmap over a batch of points.
    xs = rng.normal(size=(2, 3, 4))
    out = ft.vmap(jac(f))(xs)
    np.testing.assert_allclose(
        out, np.stack([_numerical_jacobian(f, xs[b]) for b in range(2)]), rtol=1e-6, atol=1e-7
    )


def test_jit_of_vmap_matches_vmap() -> None:
    jit = getattr(ft, "jit", None)
    if not callable(jit):  # the jit package may not export its function yet
        jit = getattr(jit, "jit", None)
    if not callable(jit):
        pytest.skip("functrace.jit is not available yet")
    rng = np.random.default_rng(11)
    x, w = rng.normal(size=(4, 3, 4)), rng.normal(size=(4, 2))
    f = ft.vmap(_f, in_axes=(0, None))
    expected = f(x, w)  # eager vmap
    np.testing.assert_allclose(jit(f)(x, w), expected, rtol=1e-12)


# ---------------------------------------------------------------------------
# in_axes / out_axes handling
# ---------------------------------------------------------------------------


def test_in_axes_none_and_axis_size() -> None:
    x = np.arange(3.0)
    out = ft.vmap(lambda a, b: a * b, in_axes=(None, 0))(2.0, x)
    np.testing.assert_allclose(out, 2.0 * x)
    out = ft.vmap(lambda a: a + 1.0, in_axes=None, axis_size=4)(np.ones(2))
    np.testing.assert_allclose(out, np.full((4, 2), 2.0))


def test_unbatched_output_is_broadcast() -> None:
    out = ft.vmap(lambda x, c: c * 2.0, in_axes=(0, None))(np.ones(3), np.arange(2.0))
    np.testing.assert_allclose(out, np.tile(np.arange(2.0) * 2.0, (3, 1)))
    out = ft.vmap(lambda x, c: (x, c), in_axes=(0, None), out_axes=(0, None))(np.ones(3), 5.0)
    assert np.shape(out[1]) == ()


def test_out_axes_positions() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    f = lambda r: r * 2.0  # r: (3, 4) when mapping axis 0
    for ax in (0, 1, 2, -1, -3):
        out = ft.vmap(f, out_axes=ax)(x)
        np.testing.assert_allclose(out, np.moveaxis(2 * x, 0, ax))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_mismatched_batch_sizes_name_arguments_and_sizes() -> None:
    with pytest.raises(ValueError, match="one size") as e:
        ft.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    msg = str(e.value)
    assert "args[0]" in msg and "size 3" in msg
    assert "args[1]" in msg and "size 4" in msg


def test_mismatched_batch_sizes_in_pytrees() -> None:
    with pytest.raises(ValueError, match="size 2") as e:
        ft.vmap(lambda d: d["a"] + d["b"])({"a": np.ones(2), "b": np.ones(5)})
    assert "'b'" in str(e.value) and "size 5" in str(e.value)


def test_mismatched_axis_size() -> None:
    with pytest.raises(ValueError, match="axis_size=4"):
        ft.vmap(lambda a: a, axis_size=4)(np.ones(3))


def test_in_axes_must_match_argument_structure() -> None:
    with pytest.raises(ValueError, match="one entry per positional argument"):
        ft.vmap(lambda a: a, in_axes=(0, 0))(np.ones(3))
    with pytest.raises(ValueError, match="keys"):
        ft.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": np.ones(3)})
    with pytest.raises(ValueError, match="2 entries"):
        ft.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((np.ones(3), np.ones(3)))
    with pytest.raises(ValueError, match="in_axes"):
        ft.vmap(lambda a: a, in_axes="0")(np.ones(3))


def test_out_of_range_in_axes() -> None:
    with pytest.raises(ValueError, match=r"in \[-2, 2\)") as e:
        ft.vmap(lambda a: a, in_axes=2)(np.ones((3, 4)))
    assert "(3, 4)" in str(e.value) and "got 2" in str(e.value)
    with pytest.raises(ValueError, match=r"in \[-1, 1\)"):
        ft.vmap(lambda a: a, in_axes=-2)(np.ones(3))
    with pytest.raises(ValueError, match=r"in \[0, 0\)"):
        ft.vmap(lambda a: a)(np.float64(1.0))


def test_out_of_range_out_axes() -> None:
    with pytest.raises(ValueError, match="out_axes"):
        ft.vmap(lambda a: a * 2.0, out_axes=5)(np.ones((3, 2)))


def test_nothing_mapped_needs_axis_size() -> None:
    with pytest.raises(ValueError, match="axis_size"):
        ft.vmap(lambda a: a, in_axes=None)(np.ones(3))


def test_non_array_mapped_argument() -> None:
    with pytest.raises(TypeError, match="expected an array"):
        ft.vmap(lambda a, s: a, in_axes=(0, 0))(np.ones(3), "label")


def test_out_axes_none_with_batched_output() -> None:
    with pytest.raises(ValueError, match="out_axes=None") as e:
        ft.vmap(lambda a: a * 2.0, out_axes=None)(np.ones(3))
    assert "depends on the mapped inputs" in str(e.value)


def test_python_control_flow_on_batched_value() -> None:
    def f(x: Any) -> Any:
        return x if x.sum() > 0 else -x

    with pytest.raises(ConcretizationError) as e:
        ft.vmap(f)(np.ones((3, 2)))
    msg = str(e.value)
    assert "vmap" in msg and "differs between examples" in msg
    assert "where" in msg and "cond" in msg
    # Control flow on an unbatched value is fine.
    out = ft.vmap(lambda x, c: x if c > 0 else -x, in_axes=(0, None))(np.ones(3), 1.0)
    np.testing.assert_allclose(out, np.ones(3))


def test_unmapped_non_array_arguments_pass_through() -> None:
    # in_axes=None on a string, a callable or another object: fun gets it as it is
    # (as in JAX), eagerly, under jit and with a later call's different value.
    x = np.arange(3.0)

    def pick(s, x):
        return x if s == "a" else -x

    for v in (
        ft.vmap(pick, in_axes=(None, 0)),
        ft.jit(ft.vmap(pick, in_axes=(None, 0)), static_argnums=0),
    ):
        np.testing.assert_array_equal(v("a", x), x)
        np.testing.assert_array_equal(v("b", x), -x)
    apply = ft.vmap(lambda f, x: f(x), in_axes=(None, 0))
    np.testing.assert_array_equal(apply(fnp.sin, x), np.sin(x))
    np.testing.assert_array_equal(apply(lambda v: v + 1, x), x + 1)
    grads = ft.vmap(ft.grad(lambda x, s: x * len(s)), in_axes=(0, None))(x, "abc")
    np.testing.assert_array_equal(grads, [3.0, 3.0, 3.0])
