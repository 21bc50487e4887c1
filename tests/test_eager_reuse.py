"""Reuse of eager derivative programs (``config.eager_cache``) is invisible.

Every differentiable row of the op table runs under eager ``grad``, ``vjp`` and ``jvp``
three times with the cache on (a recording, a second recording that verifies it, then
a reuse, which learns which results go to the buffer pools; with the pools at every
size a fourth call writes them there) and once with it off (a fresh trace); the
results must be equal bit for bit, with the same types and dtypes. Then control flow,
custom rules, hooks, concretizing functions (traced on every call, counted), values
that change between calls (NumPy draws), closures over mutated arrays, side effects,
signatures and nesting.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace import _buffers
from functrace.api import _eager_cache as ec
from functrace.tree_util import tree_flatten, tree_leaves
from op_db import ALL_OPS, OpInfo, op_args

ONE = settings(max_examples=1, deadline=None)


def _same(a: Any, b: Any, what: str) -> None:
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb, f"{what}: structure {ta} != {tb}"
    for x, y in zip(la, lb):
        assert type(x) is type(y), f"{what}: type {type(x)} != {type(y)}"
        if isinstance(x, (np.ndarray, np.generic)):
            assert x.dtype == y.dtype, f"{what}: dtype {x.dtype} != {y.dtype}"
            assert x.shape == y.shape, f"{what}: shape {x.shape} != {y.shape}"
            assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{what}: {x} != {y}"
            if x.dtype.kind in "fc":  # the sign of zeros too
                assert np.array_equal(np.signbit(x), np.signbit(y)), what
        else:
            assert x == y or (x != x and y != y), f"{what}: {x!r} != {y!r}"


def _fresh(call: Any) -> Any:
    """``call()`` traced afresh, with no buffer pool (the reference of every check)."""
    old = _buffers.enabled
    _buffers.enabled = False
    try:
        with ft.config.override(eager_cache=False):
            return call()
    finally:
        _buffers.enabled = old


@pytest.fixture(params=["pools at their sizes", "pools at every size"])
def pools(request: Any, monkeypatch: Any) -> int:
    """Run a test as is, then with every result large enough for the buffer pools (the
    recorded programs' and the eager one), so that each op-table row goes through them.
    Gives the number of cached calls to make: with pools at every size a fourth, whose
    results go through the buffers that the third learned to use."""
    if request.param == "pools at every size":
        monkeypatch.setattr(_buffers, "MIN_BYTES", 1)
        monkeypatch.setattr(_buffers, "EAGER_MIN_BYTES", 1)
        return 4
    return 3


def _repeat(call: Any, what: str, reused: bool | None = True, calls: int = 4) -> None:
    """``call()`` with reuse off, then ``calls`` times with it on: equal bit for bit, and
    the calls after the second (which verifies the first) reuse the recording (with
    ``reused=False``: every call traces, the function having concretized a value)."""
    ec.clear_eager_cache()
    try:
        expected = _fresh(call)
    except Exception as e:  # the op's own error: reuse must raise it too
        with pytest.raises(type(e)):
            call()
        return
    before = ec.stats.reuses, ec.stats.traces
    for i in range(calls):
        _same(call(), expected, f"{what}, call {i + 1}")
    counts = ec.stats.reuses - before[0], ec.stats.traces - before[1]
    recorded, never = (calls - 2, 2), (0, calls)
    if reused is None:  # value-dependent: reused or traced, never a mix
        assert counts in (recorded, never), f"{what}: (reuses, traces) {counts}"
        return
    assert counts == (recorded if reused else never), f"{what}: (reuses, traces) {counts}"


def _float_argnums(op: OpInfo) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(op.args) if a.kind == "float")


def _scalarize(op: OpInfo, weights: Any) -> Any:
    def loss(*args: Any) -> Any:
        out = op.fn(*args, **op.kwargs)
        leaves = [o for o in tree_leaves(out) if np.dtype(o.dtype).kind in "fc"]
        return sum(fnp.sum(o * w) for o, w in zip(leaves, weights))

    return loss


GRAD_ROWS = [op for op in ALL_OPS if op.grad and _float_argnums(op)]
# Rows whose derivatives read the values of traced arrays eagerly, so that their
# recordings are never reused (traced on every call): (value_and_grad, vjp, jvp) reused.
# The integer arguments of the ops are inputs of the recording; the backward passes of
# scatter_mul and take_along_axis read those indices (vjp's backward pass runs when its
# pullback is called, after the recording).
CONCRETIZING: dict[str, tuple[bool | None, ...]] = {
    "lax.while_loop": (False, False, True),  # its derivatives count the iterations
    "lax.scatter_mul": (False, True, True),
    "take_along_axis": (False, True, True),
    # checkify draws fresh error codes on every trace (one counter, as JAX's): they are
    # constants of the recording, so it never verifies
    "experimental.checkify": (False, None, None),
}
# Rows whose functions read their inputs' values when those are known, as NumPy's
# would (index checks of choose/insert/put, the mask of compress/extract/piecewise,
# lstsq's rank, which indices of a fill read (or a dropping scatter: the segment
# reductions) are out of range, the iteration counts
# of sqrtm/expm_frechet, companion's leading coefficient): their gradient's recording
# is traced again; vjp and jvp may or may not reuse theirs (None: either, never a mix),
# and every call is compared bit for bit.
CONCRETIZING.update(
    {
        name: (False, None, None)
        for name in (
            "choose", "compress_size", "compress_size_axis1", "delete_traced_unique",
            "extract_size", "insert_traced_indices", "insert_traced_scalar_index",
            "linalg.lstsq[residuals]", "linalg.lstsq[s]",
            "linalg.lstsq[x,repeated singular values]", "linalg.lstsq[x,square]",
            "linalg.lstsq[x,wide]", "linalg.lstsq[x]", "piecewise",
            "piecewise_default_constant_args", "piecewise_single_condition", "place",
            "put_along_axis_traced_indices", "put_traced_indices", "scipy.linalg.companion",
            "scipy.linalg.expm_frechet", "scipy.linalg.fiedler_companion",
            "scipy.linalg.sqrtm", "scipy.linalg.sqrtm[spd,batched]", "take_fill",
            "at_get_fill", "ops.segment_sum", "ops.segment_max",
        )
    }
)  # fmt: skip


@pytest.mark.parametrize("op", GRAD_ROWS, ids=str)
@settings(ONE, suppress_health_check=[HealthCheck.function_scoped_fixture])  # (`pools`)
@given(data=st.data())
def test_op_table_reuse_is_bit_for_bit(op: OpInfo, data: Any, pools: int) -> None:
    dtype = op.dtypes[0]
    args = data.draw(op_args(op, dtype))
    nums = _float_argnums(op)
    out = op.fn(*args, **op.kwargs)
    rng = np.random.default_rng(0)
    outs = [o for o in tree_leaves(out) if np.dtype(o.dtype).kind in "fc"]
    weights = [rng.standard_normal(np.shape(o)).astype(o.dtype) for o in outs]
    loss = _scalarize(op, weights)
    fn = op.fn
    reused = CONCRETIZING.get(op.name, (True, True, True))
    grad_call = lambda: ft.value_and_grad(loss, argnums=nums)(*args)  # noqa: E731
    _repeat(grad_call, f"{op} grad", reused[0], pools)

    def f(*d: Any) -> Any:  # the op of the differentiated arguments (one function object)
        full = list(args)
        for i, v in zip(nums, d):
            full[i] = v
        return fn(*full, **op.kwargs)

    def vjp_call() -> Any:
        primal, pullback = ft.vjp(f, *[args[i] for i in nums])
        ct = ft.tree_util.tree_map(
            lambda o: (
                np.ones(np.shape(o), o.dtype)
                if np.dtype(o.dtype).kind in "fc"
                else np.zeros(np.shape(o), ft.dtypes.float0)
            ),
            primal,
        )
        return primal, pullback(ct)

    _repeat(vjp_call, f"{op} vjp", reused[1], pools)
    tangents = tuple(
        rng.standard_normal(np.shape(args[i])).astype(np.asarray(args[i]).dtype) for i in nums
    )
    jvp_call = lambda: ft.jvp(f, tuple(args[i] for i in nums), tangents)  # noqa: E731
    _repeat(jvp_call, f"{op} jvp", reused[2], pools)


# ---------------------------------------------------------------------------
# Control flow, custom rules, hooks
# ---------------------------------------------------------------------------

X = np.array([0.3, -1.2, 2.0])


def _cond(x: Any) -> Any:
    return lax.cond(x.sum() > 0, lambda v: fnp.sin(v) * 2.0, lambda v: fnp.cos(v), x).sum()


def _scan(x: Any) -> Any:
    def body(c: Any, v: Any) -> Any:
        c = fnp.tanh(c * v + 0.5)
        return c, c * v

    c, ys = lax.scan(body, x[0], x)
    return c + ys.sum()


def _while(x: Any) -> Any:
    def cond(s: Any) -> Any:
        return s[0] < 5

    def body(s: Any) -> Any:
        return s[0] + 1, s[1] * fnp.cos(s[1])

    return lax.while_loop(cond, body, (0, x))[1].sum()


def _fori(x: Any) -> Any:
    return lax.fori_loop(0, 4, lambda i, c: c * fnp.sin(c) + i, x).sum()


# Eagerly, cond runs the branch its concrete predicate picks, and the derivatives of
# while_loop count its iterations on the concrete values (jvp of while_loop does not):
# both read values, so those recordings are not reused.
CONTROL_FLOW = [
    (_cond, (False, False, False)),
    (_scan, (True, True, True)),
    (_while, (False, True, False)),
    (_fori, (True, True, True)),
]


@pytest.mark.parametrize("f, reused", CONTROL_FLOW, ids=lambda v: getattr(v, "__name__", ""))
def test_control_flow_reuse(f: Any, reused: tuple[bool, bool, bool]) -> None:
    _repeat(lambda: ft.value_and_grad(f)(X), f"{f.__name__} grad", reused[0])
    _repeat(lambda: ft.jvp(f, (X,), (np.ones(3),)), f"{f.__name__} jvp", reused[1])
    _repeat(lambda: ft.vjp(f, X)[1](1.0), f"{f.__name__} vjp", reused[2])
    # the other branch of the cond, the same signature: the program holds both branches
    ec.clear_eager_cache()
    g = ft.grad(f)
    g(X)
    _same(g(-X), _fresh(lambda: g(-X)), f"{f.__name__} at -x")


@ft.custom_vjp
def _clip_grad(x: Any) -> Any:
    return fnp.sin(x)


def _clip_fwd(x: Any) -> Any:
    return fnp.sin(x), fnp.cos(x)


def _clip_bwd(res: Any, g: Any) -> Any:
    return (fnp.clip(res * g, -0.5, 0.5),)


_clip_grad.defvjp(_clip_fwd, _clip_bwd)


@ft.custom_jvp
def _softplus(x: Any) -> Any:
    return fnp.log1p(fnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _softplus(x), t / (1.0 + fnp.exp(-x))


def test_custom_rules_reuse() -> None:
    def f(x: Any) -> Any:
        return (_clip_grad(x) * _softplus(x)).sum()

    _repeat(lambda: ft.value_and_grad(f)(X), "custom rules grad")
    _repeat(lambda: ft.jvp(f, (X,), (np.ones(3),)), "custom rules jvp")
    _repeat(lambda: ft.vjp(f, X)[1](1.0), "custom rules vjp")


@ft.custom_jvp
def _absolute(x: Any) -> Any:
    return x if x > 0 else -x  # Python control flow on the primal, as eagerly allowed


@_absolute.defjvp
def _absolute_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _absolute(x), (t if x > 0 else -t)


def test_custom_jvp_with_python_control_flow_is_traced_every_call() -> None:
    ec.clear_eager_cache()
    g = ft.grad(_absolute)
    assert [float(g(v)) for v in (2.0, -2.0, 3.0)] == [1.0, -1.0, 1.0]
    assert ec.eager_trace_count(_absolute) == 3


def test_hooks_run_on_every_call_and_are_never_reused() -> None:
    seen: list[float] = []

    def f(x: Any) -> Any:
        y = ft.grad_hook(x * 2.0, lambda g: seen.append(float(np.sum(g))))
        return (y**2).sum()

    ec.clear_eager_cache()
    g = ft.grad(f)
    expected = _fresh(lambda: g(X))
    del seen[:]
    before = ec.eager_trace_count(f)
    for _ in range(3):
        _same(g(X), expected, "hooked grad")
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    assert ec.eager_trace_count(f) - before == 3


def test_hook_receives_concrete_arrays() -> None:
    got: list[Any] = []

    def f(x: Any) -> Any:
        return (ft.grad_hook(x, got.append) ** 2).sum()

    ft.grad(f)(X)
    assert type(got[0]) is np.ndarray and np.array_equal(got[0], 2 * X)


# ---------------------------------------------------------------------------
# Concretization: traced on every call
# ---------------------------------------------------------------------------


def test_python_branch_on_a_value_is_retraced_every_call() -> None:
    def f(x: Any) -> Any:
        if x.item() > 0:
            return x * 2.0
        return x * x * 3.0

    ec.clear_eager_cache()
    g = ft.grad(f)
    for v, want in [(1.0, 2.0), (-1.0, -6.0), (2.0, 2.0), (-2.0, -12.0)]:
        assert float(g(v)) == want
    assert ec.eager_trace_count(f) == 4


@pytest.mark.parametrize(
    "conv",
    [
        lambda x: float(x.sum()),
        lambda x: bool(x.sum() > 0),
        lambda x: int(x[0] > 0),
        lambda x: x.tolist()[0],
    ],
    ids=["float", "bool", "int", "tolist"],
)
def test_every_concretization_stops_reuse(conv: Any) -> None:
    def f(x: Any) -> Any:
        return (x * conv(ft.stop_gradient(x))).sum()

    ec.clear_eager_cache()
    for _ in range(3):
        _same(ft.grad(f)(X), _fresh(lambda: ft.grad(f)(X)), "concretizing grad")
    assert ec.eager_trace_count(f) == 3


@ft.custom_vjp
def _numpy_bwd(x: Any) -> Any:
    return x * 2.0


def _numpy_bwd_fwd(x: Any) -> Any:
    return x * 2.0, x


def _numpy_bwd_bwd(res: Any, g: Any) -> Any:
    # a NumPy function on the residual: it sees the concrete value, as eagerly
    return (g * float(np.sign(np.asarray(res)).sum()),)


_numpy_bwd.defvjp(_numpy_bwd_fwd, _numpy_bwd_bwd)


def test_numpy_in_a_custom_rule_stops_reuse() -> None:
    def f(x: Any) -> Any:
        return _numpy_bwd(x).sum()

    ec.clear_eager_cache()
    for x in (X, -X, X):
        _same(ft.grad(f)(x), _fresh(lambda x=x: ft.grad(f)(x)), "numpy in a bwd")
    assert ec.eager_trace_count(f) == 3


# ---------------------------------------------------------------------------
# What reuse keeps from the recording, and what it checks
# ---------------------------------------------------------------------------


def test_python_side_effects_run_when_traced_debug_callback_every_call() -> None:
    log: list[str] = []
    seen: list[Any] = []

    def f(x: Any) -> Any:
        log.append("traced")
        ft.debug.callback(lambda v: seen.append(np.asarray(v)), x.sum())
        return (x**2).sum()

    ec.clear_eager_cache()
    g = ft.grad(f)
    for _ in range(3):
        g(X)
    assert log == ["traced", "traced"]  # recorded, then recorded again to verify
    assert len(seen) == 3


def test_values_computed_without_functrace_that_change_are_never_frozen() -> None:
    # NumPy draws inside the differentiated function (an array, and a Python float that
    # becomes a literal) are fresh on every call, as in an unrecorded eager call: the
    # second recording disagrees with the first, so the signature is never reused
    rs = np.random.RandomState(0)

    def noisy(w: Any) -> Any:
        return fnp.sum((w + rs.randn(3)) ** 2) * rs.rand()

    ec.clear_eager_cache()
    g = ft.grad(noisy)
    rs2 = np.random.RandomState(0)
    for _ in range(4):
        noise, scale = rs2.randn(3), rs2.rand()
        np.testing.assert_allclose(g(X), 2 * (X + noise) * scale, rtol=1e-14)
    assert ec.eager_trace_count(noisy) == 4

    # values made the same way on every call (NumPy temporaries) are reused
    def fixed(w: Any) -> Any:
        return fnp.sum(w * np.arange(3.0) + np.eye(3)[0])

    g = ft.grad(fixed)
    for _ in range(4):
        assert np.array_equal(g(X), [0.0, 1.0, 2.0])
    assert ec.eager_trace_count(fixed) == 2


def test_closed_over_array_changed_in_place_records_again() -> None:
    w = np.array([1.0, 2.0, 3.0])

    def f(x: Any) -> Any:
        return (x * w).sum()

    ec.clear_eager_cache()
    g = ft.grad(f)
    assert np.array_equal(g(X), [1.0, 2.0, 3.0])
    assert np.array_equal(g(X), [1.0, 2.0, 3.0])
    w[1] = 5.0
    assert np.array_equal(g(X), [1.0, 5.0, 3.0])
    assert ec.eager_trace_count(f) == 3


def test_large_closed_over_array_changed_in_place_records_again() -> None:
    w = np.ones((400, 400))  # above the copy limit: checked by a checksum

    def f(x: Any) -> Any:
        return (w @ x).sum()

    ec.clear_eager_cache()
    g = ft.grad(f)
    x = np.ones(400)
    assert g(x)[4] == 400.0 and g(x)[4] == 400.0
    w[3, 4] = 7.0
    assert g(x)[4] == 406.0
    assert ec.eager_trace_count(f) == 3


def test_signatures_python_float_numpy_scalar_zero_d_array_and_weak_types() -> None:
    def f(x: Any, y: Any) -> Any:
        return (x * y + x**2).sum()

    ec.clear_eager_cache()
    vg = ft.value_and_grad(f)
    cases = [
        (2.0, 3.0),
        (np.float32(2.0), 3.0),
        (np.float64(2.0), 3.0),
        (np.array(2.0, np.float32), 3.0),
        (np.array(2.0), np.float32(3.0)),
        (np.array([2.0], np.float32), 3.0),
    ]
    for x, y in cases:
        expected = _fresh(lambda x=x, y=y: vg(x, y))
        for _ in range(3):
            _same(vg(x, y), expected, f"signature {type(x).__name__}, {type(y).__name__}")
    assert ec.eager_trace_count(f) == 2 * len(cases)  # recorded, verified, reused
    # a different static value (the Python float y) is another signature
    _same(vg(2.0, 4.0), _fresh(lambda: vg(2.0, 4.0)), "another static value")
    _same(vg(2.0, -0.0), _fresh(lambda: vg(2.0, -0.0)), "negative zero")


def test_kwargs_aux_and_pytrees() -> None:
    def f(p: Any, x: Any, *, scale: float, data: Any) -> Any:
        loss = (fnp.tanh(x @ p["w"] + p["b"]) * scale * data["t"]).sum()
        return loss, {"loss": loss, "n": 3, "h": x @ p["w"]}

    p = {"w": np.ones((3, 2)), "b": np.array([0.5, -0.5])}
    x = np.arange(6.0).reshape(2, 3) / 6
    data = {"t": np.array([1.0, 2.0])}
    _repeat(
        lambda: ft.value_and_grad(f, has_aux=True)(p, x, scale=0.5, data=data),
        "kwargs and aux",
    )
    _repeat(lambda: ft.grad(f, argnums=(0, 1), has_aux=True)(p, x, scale=0.5, data=data), "argnums")


def test_nesting_vmap_jit_and_grad_of_grad() -> None:
    def f(x: Any) -> Any:
        return (fnp.sin(x) * x).sum()

    gg = ft.grad(ft.grad(f))
    _repeat(lambda: gg(np.array(0.7)), "grad of grad")

    def vmapped(x: Any) -> Any:
        return ft.vmap(f)(x).sum()

    _repeat(lambda: ft.grad(vmapped)(X.reshape(3, 1)), "vmap in grad")
    per_example = ft.vmap(ft.grad(f))
    _repeat(lambda: per_example(X.reshape(3, 1)), "vmap of grad")  # the vmap's recording
    assert ec.eager_trace_count(f) == 0  # grad under vmap: part of the vmap, not cached
    # while a jit trace is active (make_jaxpr's staging, as jit's): staged, not cached
    closed = ft.make_jaxpr(ft.grad(f))(X)
    assert len(closed.jaxpr.eqns) > 0
    assert ec.eager_trace_count(f) == 0
    _repeat(lambda: ft.vmap(f, in_axes=(0,))(X.reshape(3, 1)), "vmap")


def test_random_keys_are_inputs() -> None:
    def f(x: Any, key: Any) -> Any:
        return (x * ft.random.normal(key, x.shape)).sum()

    g = ft.grad(f)
    k1, k2 = ft.random.split(ft.random.PRNGKey(0))
    ec.clear_eager_cache()
    a, b = g(X, k1), g(X, k2)
    assert not np.array_equal(a, b)
    _same(g(X, k1), _fresh(lambda: g(X, k1)), "key 1")
    _same(g(X, k2), _fresh(lambda: g(X, k2)), "key 2")


def test_switch_debug_nans_and_bounded_cache() -> None:
    def f(x: Any) -> Any:
        return fnp.log(x).sum()

    ec.clear_eager_cache()
    g = ft.grad(f)
    g(np.ones(3))
    g(np.ones(3))
    with ft.config.override(debug_nans=True):
        with pytest.raises(FloatingPointError, match="log"):
            g(-np.ones(3))
    assert ft.config.eager_cache is True
    with ft.config.override(eager_cache=False):
        before = ec.eager_trace_count(f)
        g(np.ones(3))
        assert ec.stats.reuses == ec.stats.reuses  # counters stay readable
    for n in range(ec.MAX_ENTRIES + 4):  # one signature per shape
        g(np.ones(n + 1))
    table = ec._caches[f]
    assert len(table) == ec.MAX_ENTRIES
    assert before >= 0


def test_environment_variable_turns_it_off() -> None:
    import os
    import subprocess
    import sys

    code = "import functrace as ft; print(ft.config.eager_cache)"
    env = dict(os.environ, FUNCTRACE_EAGER_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_indexing_with_an_integer_array_argument_is_traced_every_call() -> None:
    def f(w: Any, idx: Any) -> Any:  # indexing reads the index values eagerly
        return (w[idx] ** 2).sum()

    ec.clear_eager_cache()
    w = np.arange(5.0)
    for idx in (np.array([0, 2]), np.array([1, 4]), np.array([0, 2])):
        _same(ft.grad(f)(w, idx), _fresh(lambda idx=idx: ft.grad(f)(w, idx)), "x[idx]")
    assert ec.eager_trace_count(f) == 3


def test_redefined_rules_are_used_at_once() -> None:
    """Redefining a custom rule (defvjp/defjvp/defjvps) or a primitive's rule (any rule
    table) makes recorded programs stale: the next call records again with the new
    rule, as a fresh trace would (chapter 04 and 17 fix a wrong rule this way)."""

    @ft.custom_vjp
    def double(x: Any) -> Any:
        return 2.0 * x

    double.defvjp(lambda x: (2.0 * x, None), lambda _, g: (3.0 * g,))  # wrong: 3
    f = lambda x: double(x).sum()  # noqa: E731
    for _ in range(2):
        np.testing.assert_array_equal(ft.grad(f)(X), np.full(3, 3.0))
    double.defvjp(lambda x: (2.0 * x, None), lambda _, g: (2.0 * g,))  # fixed
    np.testing.assert_array_equal(ft.grad(f)(X), np.full(3, 2.0))

    @ft.custom_jvp
    def triple(x: Any) -> Any:
        return 3.0 * x

    triple.defjvps(lambda t, ans, x: 1.0 * t)  # wrong
    g = lambda x: triple(x).sum()  # noqa: E731
    for _ in range(2):
        np.testing.assert_array_equal(ft.grad(g)(X), np.ones(3))
    triple.defjvps(lambda t, ans, x: 3.0 * t)
    np.testing.assert_array_equal(ft.grad(g)(X), np.full(3, 3.0))

    from functrace.interpreters import ad

    h = lambda x: fnp.sin(x).sum()  # noqa: E731
    right = ft.grad(h)(X)
    old = ad.jvp_rules[lax.sin_p]
    try:
        ad.defjvp(lax.sin_p, lambda t, x: t * 0.0)  # a wrong rule injected into sin
        np.testing.assert_array_equal(ft.grad(h)(X), np.zeros(3))
    finally:
        ad.jvp_rules[lax.sin_p] = old
    np.testing.assert_array_equal(ft.grad(h)(X), right)


# -- large results: written into the recorded program's buffer pool ----------------


def _pooled_steps(fun: Any) -> int:
    return sum(
        step[0] == ec._POOLED
        for entry in ec._caches[fun].values()
        if entry is not ec._NEVER
        for step in entry.program.steps
    )


def test_large_results_reuse_buffers_bit_for_bit_without_overwriting_held_results() -> None:
    """Products and NumPy-ufunc steps with results of 64 KiB or more write into buffers
    of the program's pool on reuse: bit for bit the fresh results, and a buffer is
    written again only once nobody holds it (a result kept by the caller stays put)."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((200, 160)).astype(np.float32)
    w2 = rng.standard_normal((160, 10)).astype(np.float32)

    def loss(ws: Any, x: Any) -> Any:
        h = fnp.maximum(x @ ws[0], 0.0) * fnp.tanh(x @ ws[0])
        return fnp.mean((h @ ws[1]) ** 2)

    vg = ft.value_and_grad(loss)
    xs = [rng.standard_normal((128, 200)).astype(np.float32) for _ in range(4)]
    ec.clear_eager_cache()
    kept = []
    for x in xs:
        got = vg((w1, w2), x)
        _same(got, _fresh(lambda x=x: vg((w1, w2), x)), "value_and_grad")
        kept.append((got, _fresh(lambda x=x: vg((w1, w2), x))))
    assert _pooled_steps(loss) > 0
    for got, want in kept:  # later calls wrote no buffer that an earlier result holds
        _same(got, want, "a held result")


@pytest.mark.parametrize(
    "what",
    ["NN", "TN", "NT", "batched", "outer", "outer batched", "vector", "int", "preferred"],
)
def test_dot_general_into_out_is_the_same_product(what: str) -> None:
    """``dot_general``'s impl writing into ``out=`` (as recorded programs call it) gives
    the bits it returns without ``out``, for every layout it computes."""
    from functrace.lax.contraction import _dot_general_impl

    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 96, 80)).astype(np.float32)
    b = rng.standard_normal((4, 80, 72)).astype(np.float32)
    cases = {
        "NN": (a[0], b[0], (((1,), (0,)), ((), ())), None),
        "TN": (a[0].T.copy(), b[0], (((0,), (0,)), ((), ())), None),
        "NT": (a[0], b[0].T.copy(), (((1,), (1,)), ((), ())), None),
        "batched": (a, b, (((2,), (1,)), ((0,), (0,))), None),
        "outer": (a[0, :, :1], b[0, :1], (((1,), (0,)), ((), ())), None),
        "outer batched": (a[:, :, :1], b[:, :1], (((2,), (1,)), ((0,), (0,))), None),
        "vector": (a[0], b[0, :, 0].copy(), (((1,), (0,)), ((), ())), None),
        "int": (
            (a[0] * 10).astype(np.int64),
            (b[0] * 10).astype(np.int64),
            (((1,), (0,)), ((), ())),
            None,
        ),  # fmt: skip
        "preferred": (a[0], b[0], (((1,), (0,)), ((), ())), np.dtype(np.float64)),
    }
    lhs, rhs, dims, pref = cases[what]
    want = _dot_general_impl(lhs, rhs, dimension_numbers=dims, preferred_element_type=pref)
    out = np.full(want.shape, np.nan if want.dtype.kind == "f" else -1, want.dtype)
    got = _dot_general_impl(lhs, rhs, dimension_numbers=dims, preferred_element_type=pref, out=out)
    assert got is out
    _same(got, want, what)


def test_per_example_gradients_reuse_buffers_bit_for_bit() -> None:
    """vmap(grad) of a dense layer (batched products and outer products) on reuse."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((256, 64)).astype(np.float32)

    def f(w: Any, x: Any) -> Any:
        return fnp.sum(fnp.tanh(x @ w) ** 2)

    g = ft.grad(f)
    per_example = ft.vmap(g, in_axes=(None, 0))
    ec.clear_eager_cache()
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((8, 256)).astype(np.float32)
        _same(per_example(w, x), _fresh(lambda x=x: per_example(w, x)), "per-example")
    assert _pooled_steps(g) > 0  # the (8, 256, 64) per-example weight gradients


def test_a_step_its_writer_cannot_compute_keeps_the_impl() -> None:
    """``lax.div`` on integers floor-divides, which the ufunc that writes float
    division into a buffer cannot do: the step keeps its impl (no error, same bits)."""
    x = np.arange(1, 20001, dtype=np.int64).reshape(2, 10000)
    y = np.full((2, 10000), 7, np.int64)
    f = ft.vmap(lambda a, b: lax.div(a, b) * 3)
    ec.clear_eager_cache()
    for _ in range(3):
        _same(f(x, y), _fresh(lambda: f(x, y)), "integer div under vmap")
