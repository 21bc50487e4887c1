"""Regression tests for the "Trust" issue's jit items (0, 5, 10).

Item 0: fused kernels read driver-made intermediates (concatenations, reductions,
stacks of transposed values) as C-contiguous arrays; the driver must never hand them
one of another layout. Item 5: ``lax.switch`` clamps its index before narrowing it,
and Python ints beyond int64 are clear errors. Item 10: a namedtuple class with its own
pytree registration is rebuilt through that registration everywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.numpy as fnp
from functrace import lax, tree_util
from functrace.jit import jit
from profiles import examples, long_profile

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),  # fresh cache, strict kernels
]

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _close(got, expected, tol: float = 1e-12) -> None:
    g_leaves, g_tree = tree_util.tree_flatten(got)
    e_leaves, e_tree = tree_util.tree_flatten(expected)
    assert g_tree == e_tree
    for g, e in zip(g_leaves, e_leaves):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Item 0: layouts of driver-made intermediates
# ---------------------------------------------------------------------------


def _issue_fn(x2):
    v1 = x2.T
    v3 = fnp.concatenate([v1, v1 + v1, v1], axis=0)
    return fnp.maximum(np.full((1, 2, 1), 0.1), fnp.stack([v3.T, v3.T], axis=0))


def test_item0_stacked_transposed_intermediate_under_broadcasting() -> None:
    x2 = np.array([[0.7], [-0.4]])
    expected = _issue_fn(x2)
    np.testing.assert_allclose(expected[0], [[0.7, 1.4, 0.7], [0.1, 0.1, 0.1]])
    _close(jit(_issue_fn)(x2), expected)

    def loss(x2):
        return fnp.sum(_issue_fn(x2) * np.arange(12.0).reshape(2, 2, 3))

    _close(jit(ft.grad(loss))(x2), ft.grad(loss)(x2))


def _driver_results(x):
    # (3, 4, 2) -> transposed (2, 4, 3): NumPy's reductions and concatenate keep the
    # operand's memory order, so none of these results is C-contiguous.
    t = fnp.transpose(x)
    c = np.cos(np.arange(3.0)).reshape(1, 1, 3)  # broadcasting: no collapsed loop
    return (
        fnp.maximum(fnp.concatenate([t, t[::-1]], axis=0), c),  # concatenate
        fnp.sum(t, axis=1) * c[0],  # reduce_sum
        fnp.max(t, axis=1) + c[0],  # reduce_max
        fnp.min(t, axis=0) - c[0, 0],  # reduce_min
        fnp.stack([t[0], t[1]], axis=1) * np.arange(4.0).reshape(4, 1, 1),  # stack
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_item0_reductions_and_joins_of_transposed_values_feed_kernels(dtype) -> None:
    x = np.sin(np.arange(24.0)).reshape(3, 4, 2).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    _close(jit(_driver_results)(x), _driver_results(x), tol)

    def loss(x):
        return sum(fnp.sum(fnp.sin(o)) for o in _driver_results(x))

    _close(jit(ft.grad(loss))(x), ft.grad(loss)(x), tol * 10)


def test_item0_only_products_promise_c_contiguous_results() -> None:
    # The driver skips np.ascontiguousarray only for values known to be C-contiguous.
    from functrace.interpreters import numba_rules as emitters
    from functrace.lax import reductions, shapes

    table = emitters.numba_emitters
    assert table[shapes.dot_general_p].contig
    for p in (shapes.concatenate_p, reductions.reduce_sum_p, reductions.reduce_max_p):
        assert table[p].fresh and not table[p].contig, p.name
    text = jit(_driver_results).lower(np.ones((3, 4, 2))).as_text()
    assert "_asc(" in text


_PARALLEL_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import functrace as ft
    import functrace.numpy as fnp
    from functrace.jit import codegen, jit, parallel
    sys.path.insert(0, sys.argv[1])
    import test_trust_jit as t

    codegen.strict_kernels = True
    parallel.MIN_KERNEL_SIZE = 1  # every kernel with an outer loop of 2+ is split in rows
    parallel.MIN_DOT_FMAS = parallel.GEMM_THREADED_FMAS = parallel.BLAS_THREADED_FMAS = 0
    x2 = np.array([[0.7], [-0.4]])
    x = np.sin(np.arange(24.0)).reshape(3, 4, 2)
    checks, prange = [], []
    for f, a in ((t._issue_fn, x2), (t._driver_results, x)):
        jf = jit(f)
        got = jf(a)
        for g, e in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(f(a))):
            checks.append(bool(np.allclose(g, e, rtol=1e-12, atol=1e-12)))
        prange.append("(row blocks on threads)" in jf.lower(a).as_text())
    w = np.cos(np.arange(8.0)).reshape(2, 4)
    f = lambda x: fnp.transpose(x) @ w + fnp.concatenate([x.T, x.T[::-1]], axis=1)
    g = lambda x: fnp.maximum(f(x), np.full((1, 4), 0.1))
    a = np.sin(np.arange(6.0)).reshape(3, 2).T.copy()
    checks.append(bool(np.allclose(jit(g)(a), g(a), rtol=1e-12, atol=1e-12)))
    print(json.dumps({"enabled": parallel.enabled(), "checks": checks, "prange": prange}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads as in test_threads")
def test_item0_parallel_kernels_read_intermediates_in_their_layout() -> None:
    env = dict(os.environ, FUNCTRACE_NUM_THREADS="2", FUNCTRACE_PARALLEL="always", PYTHONPATH=SRC)
    env.pop("OPENBLAS_NUM_THREADS", None)
    res = subprocess.run(
        [sys.executable, "-c", _PARALLEL_SCRIPT, os.path.dirname(os.path.abspath(__file__))],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert all(out["checks"]), out
    assert out["enabled"] and all(out["prange"]), out


# Random chains of layout ops, each followed by an elementwise or broadcasting op.

_MAX_SIZE, _MAX_RANK = 96, 4


def _size(s) -> int:
    return int(np.prod(s, dtype=np.int64))


def _layout_op(x, k: int, pre_transpose: bool, vals: list):
    """One layout-changing op on ``x`` (None when it does not apply to x's shape)."""
    if pre_transpose and x.ndim >= 2:
        x = fnp.transpose(x)  # the op reads a transposed view
    s, n = tuple(x.shape), x.ndim
    # joins and reductions (the driver's fresh results) are drawn twice as often
    kind = (4, 8, 3, 9, 0, 1, 2, 5, 6, 7, 10, 11, 12, 13, 4, 8, 3, 9)[k % 18]
    if kind == 0 and n >= 2:
        return fnp.transpose(x, tuple(int(p) for p in np.random.default_rng(k).permutation(n)))
    if kind == 1 and n >= 1:  # step slices, negative ones included
        ax, m = k % n, s[k % n]
        pats = [slice(None, None, -1), slice(None, None, 2), slice(None, None, -2)]
        pats += [slice(1, None), slice(None, -1), slice(m - 1, None, -1)]
        sl = pats[(k // n) % len(pats)]
        if len(range(*sl.indices(m))) > 0:
            idx = [slice(None)] * n
            idx[ax] = sl
            return x[tuple(idx)]
    if kind == 2 and n >= 1:
        return fnp.flip(x, axis=k % n)
    if kind in (3, 4) and n >= 1 and 2 * _size(s) <= _MAX_SIZE:  # stack / concatenate
        if kind == 3 and n < _MAX_RANK:
            w = next((v for v in vals[::-1] if v.shape == s and v is not x), x)
            return fnp.stack([x, w], axis=k % (n + 1))
        idx = [slice(None)] * n
        idx[k % n] = slice(None, None, -1)
        return fnp.concatenate([x, x[tuple(idx)]], axis=k % n)
    if kind == 5:  # reshapes: flatten, a new unit axis, two axes merged
        opt = k % 3
        if opt == 0:
            return fnp.reshape(x, (-1,))
        if opt == 1 and n < _MAX_RANK:
            pos = (k // 3) % (n + 1)
            return fnp.reshape(x, s[:pos] + (1,) + s[pos:])
        if opt == 2 and n >= 2:
            pos = (k // 3) % (n - 1)
            return fnp.reshape(x, s[:pos] + (s[pos] * s[pos + 1],) + s[pos + 2 :])
    if kind == 6 and n < _MAX_RANK and 2 * _size(s) <= _MAX_SIZE:
        return fnp.broadcast_to(x, (2, *s))
    if kind == 7 and 1 in s:  # broadcast a unit axis, or squeeze it
        ax = s.index(1)
        if k % 2 and 3 * _size(s) <= _MAX_SIZE:
            return fnp.broadcast_to(x, s[:ax] + (3,) + s[ax + 1 :])
        return fnp.squeeze(x, axis=ax)
    if kind in (8, 9) and n >= 2:  # reductions to a lower rank (or keepdims)
        ax = k % n
        if kind == 9:
            return fnp.max(x, axis=ax)
        return fnp.sum(x, axis=ax, keepdims=bool(k % 2))
    if kind == 10 and n >= 2:
        return fnp.moveaxis(x, 0, -1) if k % 2 else fnp.swapaxes(x, 0, n - 1)
    if kind == 11 and 1 <= n <= 2:  # a matrix product with a constant
        c = np.sin(np.arange(s[-1] * 2) + k).reshape(s[-1], 2).astype(x.dtype)
        return x @ c
    if kind == 12 and n >= 1:
        return lax.rev(x, tuple(range(0, n, 1 + k % 2)))
    if kind == 13 and n >= 1:
        idx = tuple(slice(None, None, -1) if (k >> a) & 1 else slice(None) for a in range(n))
        return x[idx]
    return None


def _elementwise_op(x, k: int, vals: list):
    s, n = tuple(x.shape), x.ndim
    kind = (1, 2, 0, 3)[k % 4]
    if kind == 0:  # with another value of a broadcast-compatible shape
        for w in vals[::-1][1:]:
            try:
                out = np.broadcast_shapes(s, w.shape)
            except ValueError:
                continue
            if len(out) <= _MAX_RANK and _size(out) <= _MAX_SIZE:
                ops = [fnp.add, fnp.multiply, fnp.subtract, fnp.maximum]
                return ops[(k // 4) % 4](x, w)
    if kind in (0, 1, 2) and n >= 1:  # with a constant broadcast along some axes
        cs = tuple(d if (k >> (a + 2)) & 1 else 1 for a, d in enumerate(s))
        c = np.cos(np.arange(_size(cs)) + k).reshape(cs).astype(x.dtype)
        op = [fnp.add, fnp.multiply, fnp.maximum][k % 3]
        return op(c, x) if (k >> 6) & 1 else op(x, c)
    ops = [fnp.sin, fnp.tanh, lambda a: a * a, lambda a: fnp.where(a > 0, a, a * 0.5)]
    return ops[(k // 4) % 4](x)


def _chain(steps):
    def f(w, x):
        vals = [w, x]
        for k, j, pre in steps:
            y = _layout_op(vals[-1] if j % 3 else vals[j % len(vals)], k, pre, vals)
            vals.append(y if y is not None else vals[-1] * 2.0)
            vals.append(_elementwise_op(vals[-1], j, vals))
        return vals[-1], vals[-3]

    return f


@st.composite
def _chains(draw):
    nd = draw(st.sampled_from([2, 3, 1]))
    shape = tuple(draw(st.lists(st.sampled_from([2, 3, 1]), min_size=nd, max_size=nd)))
    wshape = tuple(d if draw(st.booleans()) else 1 for d in shape)[draw(st.integers(0, nd)) :]
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, 255), st.integers(0, 255), st.sampled_from([True, False])),
            min_size=2,
            max_size=6,
        )
    )
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    return shape, wshape, steps, dtype


@long_profile
@settings(max_examples=examples(8, 100), suppress_health_check=list(HealthCheck))
@given(prog=_chains())
def test_item0_random_layout_chains_jit_and_grad_match_eager(prog) -> None:
    shape, wshape, steps, dtype = prog
    rng = np.random.default_rng(len(steps))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(wshape).astype(dtype)
    f = _chain(steps)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    _close(jit(f)(w, x), f(w, x), tol)

    def loss(w, x):
        a, b = f(w, x)
        ca = np.cos(np.arange(_size(a.shape)) * 0.7).reshape(a.shape).astype(dtype)
        return fnp.sum(fnp.sin(a) * ca) + fnp.sum(b * b)

    g = ft.grad(loss, argnums=(0, 1))
    _close(jit(g)(w, x), g(w, x), tol * 10)


# ---------------------------------------------------------------------------
# Item 5: switch indices and Python ints beyond int64
# ---------------------------------------------------------------------------

_BRANCHES = [lambda x: x * 0.0, lambda x: x + 1.0, lambda x: x + 2.0]


def _switch(i, x):
    return lax.switch(i, _BRANCHES, x)


def test_item5_switch_clamps_a_wide_index_before_narrowing_it() -> None:
    f = jit(_switch)
    for i in (2**31, np.int64(2**31), np.int64(2**40 + 1), np.uint64(2**63), 2**62):
        assert _switch(i, 1.0) == 3.0  # eager: the last branch
        assert f(i, 1.0) == 3.0, i
    for i in (-(2**31) - 1, np.int64(-(2**40)), np.int8(-3), False):
        assert f(i, 1.0) == 0.0, i
    assert f(True, 1.0) == 2.0 and f(np.int8(100), 1.0) == 3.0
    idx = np.array([2**31, -(2**33), 1, 2**32 + 1])
    expected = np.array([3.0, 0.0, 2.0, 3.0])
    g = ft.vmap(_switch, (0, None))
    np.testing.assert_array_equal(g(idx, 1.0), expected)
    np.testing.assert_array_equal(jit(g)(idx, 1.0), expected)


def test_item5_python_ints_beyond_int64_name_the_function_and_argument() -> None:
    def scale(n, x):
        return x * n

    f = jit(scale)
    assert f(3, 2.0) == 6.0  # a compiled signature for Python ints: the fast path
    for big in (2**70, 2**63, -(2**63) - 1):
        with pytest.raises(OverflowError, match=r"jit of 'scale'.*argument n.*int64"):
            f(big, 2.0)
    assert f(-(2**63), 0.0) == 0.0  # the edge of int64 still fits
    with pytest.raises(OverflowError, match=r"argument n"):
        f(n=2**64, x=2.0)
    with pytest.raises(OverflowError, match=r"argument d\['a'\]"):
        jit(lambda d: d["a"] + 1)({"a": 2**64})
    with pytest.raises(OverflowError, match=r"jit of .*argument n"):
        jit(ft.grad(lambda x, n: x * n))(1.0, 2**70)
    with pytest.raises(OverflowError, match=r"vmap of .*argument args\[1\]"):
        ft.vmap(lambda x, n: x + n, (0, None))(np.arange(2), 2**70)
    with pytest.raises(OverflowError, match=r"make_jaxpr: .*int64"):
        ft.make_jaxpr(lambda n: n + 1)(2**70)
    with pytest.raises(OverflowError, match=r"eval_shape: .*int64"):
        ft.eval_shape(lambda n: n + 1, 2**70)
    # fnp, eagerly and traced
    with pytest.raises(OverflowError, match=r"add: .*argument x2"):
        fnp.add(np.arange(2), 2**70)
    with pytest.raises(OverflowError, match=r"sin: .*argument x1"):
        fnp.sin(2**70)
    with pytest.raises(OverflowError, match=r"add: .*int64"):
        jit(lambda x: x + 2**70)(np.arange(2))
    with pytest.raises(OverflowError, match=r"jit of .*int64"):  # weak + weak: a lax literal
        jit(lambda x: x + 2**70)(1)
    with pytest.raises(OverflowError, match=r"jit of .*traced code"):
        jit(lambda x: lax.add(x, 2**70))(np.int64(1))
    # Where eager NumPy turns the int into a float, nothing changes.
    assert fnp.add(np.ones(2), 2**70)[0] == 2.0**70
    assert ft.grad(lambda x, n: x * n)(1.0, 2**70) == 2.0**70


# ---------------------------------------------------------------------------
# Item 10: namedtuples with their own pytree registration
# ---------------------------------------------------------------------------


class _Tagged(namedtuple("_TaggedBase", ["value", "scale", "tag"])):
    """A namedtuple whose registration keeps ``tag`` static: two children, not three."""


tree_util.register_pytree_node(
    _Tagged,
    lambda t: ((t.scale, t.value), t.tag),  # children in another order than the fields
    lambda tag, ch: _Tagged(ch[1], ch[0], tag),
)


class _Proto(namedtuple("_ProtoBase", ["a", "b"])):
    """The ``__functrace_pytree__`` protocol on a namedtuple: only ``a`` is a child."""

    __functrace_pytree__ = True

    def tree_flatten(self):
        return (self.a,), self.b

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


def _check_tagged(out, value, scale) -> None:
    assert type(out) is _Tagged and out.tag == "t"
    np.testing.assert_allclose(out.value, value)
    np.testing.assert_allclose(out.scale, scale)


def test_item10_registered_namedtuple_is_rebuilt_by_its_unflatten() -> None:
    t = _Tagged(np.arange(3.0), np.full(3, 2.0), "t")
    assert tree_util.tree_structure(t).num_leaves == 2

    def step(t):
        return _Tagged(t.value * t.scale, t.scale + 1.0, t.tag)

    _check_tagged(step(t), [0.0, 2.0, 4.0], [3.0, 3.0, 3.0])
    _check_tagged(jit(step)(t), [0.0, 2.0, 4.0], [3.0, 3.0, 3.0])  # input and output
    _check_tagged(jit(step)(t), [0.0, 2.0, 4.0], [3.0, 3.0, 3.0])  # the fast path
    nested = jit(lambda t: {"out": [step(t)], "n": fnp.sum(t.value)})(t)
    _check_tagged(nested["out"][0], [0.0, 2.0, 4.0], [3.0, 3.0, 3.0])

    def loss(t):
        return fnp.sum(t.value * t.scale * t.scale)

    _check_tagged(ft.grad(loss)(t), [4.0, 4.0, 4.0], [0.0, 4.0, 8.0])
    _check_tagged(jit(ft.grad(loss))(t), [4.0, 4.0, 4.0], [0.0, 4.0, 8.0])
    batch = _Tagged(np.ones((2, 3)), np.full((2, 3), 2.0), "t")
    _check_tagged(ft.vmap(step)(batch), np.full((2, 3), 2.0), np.full((2, 3), 3.0))
    _check_tagged(jit(ft.vmap(step))(batch), np.full((2, 3), 2.0), np.full((2, 3), 3.0))
    out, vjp_fn = ft.vjp(step, t)
    _check_tagged(out, [0.0, 2.0, 4.0], [3.0, 3.0, 3.0])
    (ct,) = vjp_fn(out)
    _check_tagged(ct, [0.0, 4.0, 8.0], [3.0, 5.0, 11.0])


def test_item10_protocol_namedtuple_uses_its_own_flatten() -> None:
    p = _Proto(np.arange(2.0), "meta")
    assert tree_util.tree_leaves(p)[0] is p.a and tree_util.tree_structure(p).num_leaves == 1
    out = jit(lambda p: _Proto(p.a * 2.0, p.b))(p)
    assert type(out) is _Proto and out.b == "meta"
    np.testing.assert_allclose(out.a, [0.0, 2.0])
    g = ft.grad(lambda p: fnp.sum(p.a * p.a))(p)
    assert type(g) is _Proto and g.b == "meta"
    np.testing.assert_allclose(g.a, [0.0, 2.0])


def test_item0_repeated_broadcast_dimensions_are_rejected_when_traced() -> None:
    # A repeated dimension would make a kernel's broadcast indexing read the wrong axis.
    x = np.arange(4.0).reshape(2, 2)
    with pytest.raises(ValueError, match="strictly increasing broadcast_dimensions"):
        jit(lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 0)) + 1.0)(x)


def test_complex_division_by_zero_matches_numpy_in_compiled_code():
    # Numba's complex division raises ZeroDivisionError; NumPy's (and eager) gives inf/nan
    a = np.array([1 + 1j, 2.0, 0j, np.nan, 3 - 4j])
    b = np.array([0j, 1.0, 0j, 1.0, 1 + 2j])
    with np.errstate(all="ignore"):
        want = a / b
        np.testing.assert_array_equal(ft.jit(lambda a, b: a / b)(a, b), want)
        np.testing.assert_array_equal(
            ft.jit(lambda a, b: fnp.sin(a) / b + 1.0)(a, b), np.sin(a) / b + 1.0
        )
        np.testing.assert_array_equal(ft.jit(lambda a, b: a / b)(a[0], b[0]), want[0])  # 0-d
        f32 = ft.jit(lambda a, b: a / b)(a.astype(np.complex64), b.astype(np.complex64))
        np.testing.assert_array_equal(f32, (a.astype(np.complex64) / b.astype(np.complex64)))
        for y in (-1, -2, -3):  # integer_pow: the impl's nan at 0
            got = ft.jit(lambda a, y=y: lax.integer_pow(a, y))(a)
            np.testing.assert_array_equal(got, lax.integer_pow(a, y))
