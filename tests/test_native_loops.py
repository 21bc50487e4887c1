"""Native loops with array bodies: jit(f) == f, and which loops become one Numba function.

A loop counts as native when its source (listed by ``as_text()``) starts with
``loops.MARKER``; every test also checks values, dtypes and shapes against eager.
"""

from __future__ import annotations

import os
import textwrap

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.jit import jit
from functrace.jit import loops as jit_loops
from profiles import examples, long_profile

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),  # fresh cache, strict kernels
]

FLOATS = [np.float32, np.float64]


def native_count(jf, *args) -> int:
    return jf.lower(*args).as_text().count(jit_loops.MARKER + " [")


def assert_same(got, want, what: str = "") -> None:
    """Same tree, values (to tolerance; exact for integers and booleans), dtypes, shapes."""
    g_leaves, g_tree = ft.tree_util.tree_flatten(got)
    w_leaves, w_tree = ft.tree_util.tree_flatten(want)
    assert g_tree == w_tree, what
    for g, w in zip(g_leaves, w_leaves):
        a, b = np.asarray(g), np.asarray(w)
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        if a.dtype.kind == "f":
            tol = 2e-5 if a.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def check(f, *args, native: int | None = None):
    """jit(f)(*args) equals f(*args); ``native`` loops became one Numba function."""
    jf = jit(f)
    assert_same(jf(*args), f(*args))
    if native is not None:
        assert native_count(jf, *args) == native
    return jf


def _rnn(dtype, hidden=6, inputs=3, steps=7, seed=0):
    rng = np.random.default_rng(seed)
    w = (rng.normal(size=(hidden, hidden)) * 0.3).astype(dtype)
    u = (rng.normal(size=(hidden, inputs)) * 0.3).astype(dtype)
    b = (rng.normal(size=hidden) * 0.1).astype(dtype)
    xs = rng.normal(size=(steps, inputs)).astype(dtype)

    def loss(w, u, b, xs):
        def body(h, x):
            h = fnp.tanh(w @ h + u @ x + b)
            return h, fnp.sum(h * h)

        h, ys = lax.scan(body, fnp.zeros(hidden, dtype), xs)
        return fnp.sum(h) + fnp.sum(ys) * 0.5

    return loss, (w, u, b, xs)


def _ode(dtype):
    def loss(c, x0):
        dt = dtype(0.01)

        def body(i, s):
            x, v = s
            return x + dt * v, v + dt * (-x - c * v)

        x, v = lax.fori_loop(0, 50, body, (x0, fnp.zeros_like(x0)))
        return fnp.sum(x * x + v * v)

    return loss, (dtype(0.3), np.linspace(-1, 1, 5).astype(dtype))


# ---------------------------------------------------------------------------
# Forward loops
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_scan_is_native(dtype, reverse) -> None:
    loss, (w, u, b, xs) = _rnn(dtype)

    def f(w, u, b, xs):
        def body(h, x):
            h = fnp.tanh(w @ h + u @ x + b)
            return h, (h * 2.0, fnp.max(h))

        return lax.scan(body, fnp.zeros(w.shape[0], dtype), xs, reverse=reverse)

    jf = check(f, w, u, b, xs, native=1)
    text = jf.lower(w, u, b, xs).as_text()
    assert "scan body" not in text  # no per-iteration body driver
    check(loss, w, u, b, xs, native=1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cumulative_sum_over_rows_and_zero_length(dtype) -> None:
    def cumsum_rows(m):
        return lax.scan(lambda c, r: (c + r, c + r), fnp.zeros(m.shape[1], dtype), m)

    m = np.random.default_rng(1).normal(size=(6, 4)).astype(dtype)
    check(cumsum_rows, m, native=1)
    check(cumsum_rows, np.zeros((0, 4), dtype), native=1)  # zero-length: ys of shape (0, 4)

    def rev(m):
        return lax.scan(
            lambda c, r: (c * 0.5 + r, (fnp.sum(c), r > 0)), fnp.ones(4, dtype), m, reverse=True
        )

    check(rev, m, native=1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_while_and_dynamic_fori_with_array_carries(dtype) -> None:
    def grow(x):
        return lax.while_loop(
            lambda s: fnp.sum(s[0]) < 100, lambda s: (s[0] * 1.5 + 1, s[1] + 1), (x, 0)
        )

    check(grow, np.arange(3, dtype=dtype), native=1)

    def powers(m, n):
        return lax.fori_loop(0, n, lambda i, a: a @ m * dtype(0.5) + i.astype(dtype), m)

    m = np.eye(3, dtype=dtype) + np.arange(9, dtype=dtype).reshape(3, 3) * dtype(0.1)
    jf = check(powers, m, 4, native=1)
    for n in (0, 1, 7):
        assert_same(jf(m, n), powers(m, n))


@pytest.mark.parametrize("dtype", FLOATS)
def test_nested_loops_are_inline(dtype) -> None:
    def nested(x, n):
        def outer(c, _):
            a = lax.fori_loop(0, 3, lambda i, s: s * 1.1 + i.astype(dtype), c)  # a scan
            b = lax.fori_loop(0, n, lambda i, s: s * dtype(0.9), a)  # a while loop
            _, cs = lax.scan(lambda k, r: (k + r, k * r), fnp.zeros(3, dtype), b)  # rows of b
            return b, (fnp.min(b, axis=0), cs)

        return lax.scan(outer, x, None, length=4)

    x = np.arange(6, dtype=dtype).reshape(2, 3)
    jf = check(nested, x, 3, native=1)  # one function: the inner loops are inline
    assert "while_loop body" not in jf.lower(x, 3).as_text()

    def loss(x):
        def outer(c, _):
            return lax.fori_loop(0, 3, lambda i, s: fnp.sin(s) * 1.1, c), None

        return fnp.sum(lax.scan(outer, x, None, length=3)[0] ** 2)

    check(ft.value_and_grad(loss), x[0], native=2)  # forward and transposed, inner inline


@pytest.mark.parametrize("dtype", FLOATS)
def test_cond_and_switch_inside_bodies(dtype) -> None:
    def f(x, xs):
        def body(c, xi):
            c = lax.cond(xi > 0, lambda c: c * 2.0, lambda c: c - 1.0, c)
            return c, fnp.sum(c)

        return lax.scan(body, x, xs)

    x, xs = np.ones(3, dtype), np.array([1, -1, 2, -3, 0.5], dtype)
    check(f, x, xs, native=1)
    g = ft.value_and_grad(lambda x, xs: fnp.sum(f(x, xs)[0] ** 2))
    check(g, x, xs, native=2)  # cond_lin in the transposed scan is inline too

    def sw(x, ks):
        def body(c, k):
            branches = [lambda c: c + 1, lambda c: c * 2, lambda c: -c]
            return lax.switch(k, branches, c), c[0]

        return lax.scan(body, x, ks)

    ks = np.array([0, 1, 2, 5, -1, 1], np.int32)  # out-of-range indices clamp
    check(sw, np.ones(2, dtype), ks, native=1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layout_and_reduction_ops_inside_bodies(dtype, monkeypatch) -> None:
    # one body exercising many rules at once: longer than the default MAX_LINES
    monkeypatch.setattr(jit_loops, "MAX_LINES", 1000)
    rng = np.random.default_rng(2)

    def f(m, xs, idx):
        def body(c, inp):
            x, k = inp
            t = c.T
            r = fnp.reshape(t, (-1,))[:6:2]
            s = fnp.concatenate([r, x, fnp.flip(x)])
            z = fnp.max(c, axis=1) + fnp.sum(c, axis=0)[:3] + fnp.min(c, axis=(0, 1))
            io = fnp.arange(3, dtype=dtype)
            w = lax.dynamic_slice(s, (k,), (2,))
            u = lax.dynamic_update_slice(c, fnp.ones((1, 2), dtype) * w[0], (k, k + 1))
            bm = fnp.matmul(c[None], fnp.stack([c.T, c.T]))  # batched dot_general
            c2 = u * 0.5 + fnp.sum(s) * 0.01 + io[None, :].T * 0.1 + z[:, None]
            c2 = c2 + fnp.sum(bm, axis=0) * 0.01 + fnp.outer(z, io) * 0.01
            p = lax.pad(c, dtype(-1), [(1, -1, 1), (-2, 2, 0)])  # interior, negative crop
            y = (s, fnp.expand_dims(z, 0), fnp.squeeze(c[:1, :1]), fnp.where(c > 0, c, -c), p)
            return c2, y

        return lax.scan(body, m, (xs, idx))

    m = rng.normal(size=(3, 3)).astype(dtype)
    xs = rng.normal(size=(4, 3)).astype(dtype)
    idx = np.array([0, 7, -2, 2], np.int64)  # dynamic_slice starts clamp like the impl
    check(f, m, xs, idx, native=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_reductions_cumulative_and_arg_ops_inside_bodies(dtype) -> None:
    def f(m, xs):
        def body(c, x):
            y = [fnp.argmax(c, axis=0), fnp.argmin(c, axis=1), fnp.argmax(x, axis=0)]
            y += [lax.cummax(c, 1), lax.cummin(c, 0, reverse=True), fnp.max(c, axis=0)]
            if dtype != np.bool_:
                y += [fnp.prod(c, axis=0), lax.cumsum(c, 0), lax.cumprod(c, 1, reverse=True)]
                y += [fnp.sum(c, axis=1), fnp.sum(c), fnp.min(c)]
            return c, y

        return lax.scan(body, m, xs)

    m = np.array([[1, 5, 2], [4, 0, 3]], dtype)
    xs = np.array([[1, 2, 3], [3, 2, 1], [0, 0, 0]], dtype)
    check(f, m, xs, native=1)


def test_nan_handling_and_float32_sums() -> None:
    def f(m):
        def body(c, _):
            return c, (fnp.argmax(c, axis=1), fnp.argmin(c, axis=0), fnp.max(c, axis=1))

        return lax.scan(body, m, None, length=2)

    check(f, np.array([[1, np.nan, 2], [4, 0, np.nan]]), native=1)  # the first NaN wins
    big = np.random.default_rng(0).normal(size=(5, 3000)).astype(np.float32)
    # float32 sums accumulate in float64: as accurate as NumPy's pairwise sums
    check(lambda xs: lax.scan(lambda c, x: (c + fnp.sum(x), x.sum()), np.float32(0), xs), big)


@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64, np.uint8, np.uint64])
def test_scalar_gather_and_scatter_inside_bodies(idx_dtype) -> None:
    m = np.arange(12.0).reshape(3, 4) / 10
    signed = np.dtype(idx_dtype).kind == "i"
    ks = np.array([0, -1, 2, -3] if signed else [0, 2, 1, 2], idx_dtype)

    def f(m, ks, extremum=("max", "min")):
        def body(c, k):
            r = fnp.take(m, k, axis=0)  # gather with a scalar index (negatives wrap)
            c2 = c.at[k].add(fnp.sum(r)).at[1].set(r[1]).at[k].multiply(1.5)
            if "max" in extremum:
                c2 = c2.at[k].max(0.2)
            if "min" in extremum:
                c2 = c2.at[k].min(3.0)
            return c2, (r, fnp.take(fnp.transpose(m)[1], k))

        return lax.scan(body, np.ones(3), ks)

    check(f, m, ks, native=1)

    # the reverse loops for one signed and one unsigned index type (each compile is
    # seconds; the index type changes the forward body, checked above for all four)
    for extremum in ("max", "min") if idx_dtype in (np.int64, np.uint8) else ():

        def loss(m, ks, extremum=extremum):
            c, (rows, _) = f(m, ks, (extremum,))
            return fnp.sum(c) + fnp.sum(rows**2)

        check(ft.grad(loss), m, ks, native=2)  # scatter_add in the transposed scan

    def clipped(m, ks):
        return lax.scan(lambda c, k: (c + lax.gather(m, [k], (0,), "clip"), None), m[0], ks)

    check(clipped, m, np.array([5, -7, 1], np.int64), native=1)

    def strict(m, ks):
        return lax.scan(lambda c, k: (c + lax.gather(m, [k], (0,)), None), m[0], ks)

    with pytest.raises(IndexError, match=r"expected indices in \[-3, 3\)"):
        jit(strict)(m, np.array([1, 7], np.int64))
    assert native_count(jit(strict), m, np.array([1, 2], np.int64)) == 1


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_semantics_match_numpy(dtype) -> None:
    def f(a, xs):
        def body(c, x):
            q = c // x  # floor division
            r = c % x  # remainder: the sign of the divisor
            m = ((c & x) ^ ~c) | x
            keep = (c > x) | (c == 3)
            c2 = (fnp.where(keep, q + r, m - x) * dtype(3) + fnp.sum(c)).astype(dtype)
            return c2, (q, r, keep, fnp.max(c), c.astype(np.float64) / 2)

        return lax.scan(body, a, xs)

    if dtype == np.uint8:
        a, xs = np.array([7, 200, 3], dtype), np.array([[3, 2, 5], [1, 7, 9]], dtype)
    else:
        a, xs = np.array([7, -8, 3], dtype), np.array([[3, -2, 5], [-1, 7, -9]], dtype)
    check(f, a, xs, native=1)


# ---------------------------------------------------------------------------
# Reverse mode: the transposed scans are native too
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_rnn_value_and_grad_is_native_both_ways(dtype) -> None:
    loss, args = _rnn(dtype)
    vg = ft.value_and_grad(loss, argnums=(0, 1, 2, 3))
    jf = check(vg, *args, native=2)  # the forward scan and the transposed (reverse) scan
    text = jf.lower(*args).as_text()
    assert "[reverse scan]" in text and "scan body" not in text


@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_ode_fori_value_and_grad_is_native_both_ways(dtype) -> None:
    loss, args = _ode(dtype)
    check(ft.value_and_grad(loss, argnums=(0, 1)), *args, native=2)


def test_cumsum_grad_is_native_both_ways() -> None:
    def loss(m):
        _, ys = lax.scan(lambda c, r: (c + r, (c + r) ** 2), fnp.zeros(m.shape[1]), m)
        return fnp.sum(ys)

    m = np.random.default_rng(3).normal(size=(5, 3))
    check(ft.grad(loss), m, native=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_while_loop_value_and_grad_is_native_both_ways(dtype) -> None:
    # The trip count is known only at run time: the reverse sweep stores the carries
    # in arrays that grow (16, 32, ...) inside the same native function.
    def loss(x, c):
        def body(s):
            v, w, k = s
            return v * c + 0.1 * fnp.sin(w) ** 2, w * 0.9 + v, k + 1

        v, w, k = lax.while_loop(lambda s: fnp.min(s[0]) < 1e4, body, (x, fnp.zeros_like(x), 0))
        return fnp.sum(v * w) + k

    vg = ft.value_and_grad(loss, argnums=(0, 1))
    c = dtype(1.2)  # about 50 iterations: the stores grow past their first capacity
    for x in (np.array([0.5, 2.0, 0.1], dtype), np.array([2e4, 3e4], dtype)):  # 2nd: 0 trips
        jf = check(vg, x, c, native=2)
    text = jf.lower(x, c).as_text()
    assert "[while reverse sweep]" in text and "while_loop reverse step" not in text


@long_profile
@settings(max_examples=examples(2, 40))  # every new shape is a new Numba compile (~1 s)
@given(
    data=st.data(),
    dtype=st.sampled_from(FLOATS),
    steps=st.integers(0, 5),
    shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3),
    reverse=st.booleans(),
)
def test_array_scans_match_eager_property(data, dtype, steps, shape, reverse) -> None:
    elems = st.floats(-2, 2, width=32)
    c0 = data.draw(hnp.arrays(dtype, shape, elements=elems), label="c0")
    xs = data.draw(hnp.arrays(dtype, (steps, *shape), elements=elems), label="xs")

    def f(c0, xs):
        def body(c, x):
            s = fnp.sum(c * x, axis=-1, keepdims=True)
            c2 = fnp.tanh(c * 0.5 + x) - s * 0.1 + fnp.max(x)
            return c2, (fnp.sin(c2), fnp.min(c2, axis=0))

        return lax.scan(body, c0, xs, reverse=reverse)

    check(f, c0, xs, native=1)

    def loss(c0, xs):
        c, (ys, _) = f(c0, xs)
        return fnp.sum(c**2) + fnp.sum(ys)

    check(ft.grad(loss, argnums=(0, 1)), c0, xs, native=2)


# ---------------------------------------------------------------------------
# What still declines, switches and the disk cache
# ---------------------------------------------------------------------------


def test_bodies_without_native_rules_keep_the_python_loop() -> None:
    def f(v, xs):
        def body(c, x):
            s = lax.sort(c)  # no native rule: the Python loop with a body driver
            return s * x + 1.0, fnp.sum(s) * x

        return lax.scan(body, v, xs)

    v, xs = np.array([3.0, 1.0, 2.0]), np.linspace(0, 1, 5)
    jf = check(f, v, xs, native=0)
    assert "scan body" in jf.lower(v, xs).as_text()

    def nested(x):
        def outer(c, _):
            c = lax.fori_loop(0, 3, lambda i, s: s * 1.1, c)
            return lax.sort(c), c

        return lax.scan(outer, x, None, length=4)

    check(nested, v, native=1)  # the inner loop only; the outer stays Python

    def matvecs(m, x):
        return lax.fori_loop(0, 3, lambda i, h: m @ h + 1.0, x)

    big = np.ones((200, 200)) * 1e-3  # 40000 multiply-adds per step: BLAS in the Python loop
    check(matvecs, big, np.ones(200), native=0)
    check(matvecs, big[:20, :20], np.ones(20), native=1)

    zs = np.array([1 + 2j, 3 - 1j])  # complex values: Python loop
    check(lambda z: lax.fori_loop(0, 3, lambda i, c: c * z, z), zs, native=0)


def test_native_loops_switch(monkeypatch) -> None:
    loss, args = _rnn(np.float64)
    vg = ft.value_and_grad(loss, argnums=(0, 1, 2, 3))
    monkeypatch.setattr(jit_loops, "enabled", False)
    jf = check(vg, *args, native=0)
    assert "scan body" in jf.lower(*args).as_text()


def test_long_loop_functions_keep_the_python_loop(monkeypatch) -> None:
    # Numba's compile time grows with the function's length: past MAX_LINES the
    # Python-loop lowering (compiled body, BLAS products) is used instead.
    loss, args = _rnn(np.float64)
    vg = ft.value_and_grad(loss, argnums=(0, 1, 2, 3))
    monkeypatch.setattr(jit_loops, "MAX_LINES", 10)
    jf = check(vg, *args, native=0)
    assert "scan body" in jf.lower(*args).as_text()


def test_second_process_loads_native_loops_from_disk(tmp_path) -> None:
    import json
    import subprocess
    import sys

    script = textwrap.dedent("""
        import json
        import numpy as np
        import functrace as ft
        import functrace.numpy as fnp
        from functrace import lax
        from functrace.jit import jit

        def loss(w, xs):
            h, _ = lax.scan(lambda h, x: (fnp.tanh(w @ h + x), None), fnp.zeros(3), xs)
            return fnp.sum(h)

        f = jit(ft.value_and_grad(loss))
        v, g = f(np.eye(3) * 0.5, np.ones((4, 3)))
        print(json.dumps({"compiled": f.compile_count, "value": float(v)}))
    """)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src, FUNCTRACE_CACHE_DIR=str(tmp_path / "cache"))
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    a, b = (json.loads(r.stdout) for r in runs)
    assert a["compiled"] >= 2 and b["compiled"] == 0
    assert a["value"] == b["value"]


def test_reversed_strided_slices_inside_bodies() -> None:
    # Found by the composition fuzzer: the rev view's index map wrote ``n - 1 - start +
    # step * i`` for a slice of a reversed axis (no parentheses), so the native loop read
    # the wrong elements, outside the array too.
    a0 = np.arange(12.0).reshape(3, 4)

    def f(x):
        a = a0 + 0.01 * fnp.tanh(fnp.sum(x))
        body = lambda i, c: c * 0.5 + a[::-1, ::-2] + a[::-1][:, ::-1][:, 1::2]  # noqa: E731
        return lax.fori_loop(0, 2, body, fnp.zeros((3, 2)))

    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(jit(f)(x), f(x), rtol=1e-13)
