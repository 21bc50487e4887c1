"""Windowed reductions and cumlogsumexp: JAX's values and derivatives (ties included),
clear errors, and pools inside jitted loops. The op table (tests/op_rows_windowed.py)
runs the gradient, vmap and jit batteries on every primitive."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
import op_db  # noqa: F401  (loads op_rows_windowed, which imports op_db)
from op_rows_windowed import _taps
from windowed_cases import DILATED, POOLS, TIES, X2, _cotangent, cases

FIXTURE = Path(__file__).parent / "fixtures" / "windowed_jax.npz"


# JAX's JVP of max/min pooling (XLA's packed reduce_window) may take a later tied
# position in windows that overlap the padding; its VJP, and functrace's JVP and VJP
# (exact transposes of each other), take the first one.
JVP_TIES_IN_PADDING = {"max/nchw_same/jvp", "min/nchw_same/jvp", "max/base_dilated/jvp"}


def _tied_tangents(key: str) -> list[list[float]]:
    """Per output entry of ``key``'s pool, the tangents at the tied extremal positions
    of its window (first position first)."""
    kind, name, _ = key.split("/")
    _, x, wd, ws, pad, bd, wdil = next(p for p in POOLS + [DILATED] if p[0] == name)
    if isinstance(pad, str):
        pad = ft.lax.padtype_to_pads(x.shape, wd, ws, pad)
    out_shape, taps = _taps(x.shape, wd, ws, pad, bd, wdil)
    t = _cotangent(x.shape)
    pick = max if kind == "max" else min
    res = []
    for o in np.ndindex(*out_shape):
        real = [p for p in taps(o) if p is not None]
        best = pick(x[p] for p in real)
        res.append([t[p] for p in real if x[p] == best])
    return res


def test_values_and_derivatives_match_jax() -> None:
    with np.load(FIXTURE) as f:
        ref = {k: f[k] for k in f.files if k != "__about__"}
    got = cases(ft)
    assert set(got) == set(ref)
    for key, want in ref.items():
        have = np.asarray(got[key])
        assert have.dtype == want.dtype and have.shape == want.shape, key
        if key in JVP_TIES_IN_PADDING:
            tied = _tied_tangents(key)
            differ = ~np.isclose(have, want, rtol=0, atol=1e-12).ravel()
            assert differ.any(), key  # else the exemption is stale
            for h, w, ts in zip(have.ravel(), want.ravel(), tied):
                assert h == ts[0] and w in ts, key
            continue
        if key == "cumlogsumexp/neg_inf/forward/vjp":
            # JAX's gradient is NaN at the -inf entries before the first finite one;
            # functrace's splits each (-inf) result's cotangent evenly among them.
            finite = np.isfinite(want)
            assert not finite[:2].any() and finite[2:].all() and np.isfinite(have).all()
            ct = (np.arange(7.0) % 7 - 3.0) / 2.0
            np.testing.assert_allclose(have[:2], [ct[0] + ct[1] / 2, ct[1] / 2])
            have, want = have[finite], want[finite]
        np.testing.assert_allclose(have, want, rtol=1e-12, atol=1e-12, err_msg=key)


def test_ties_go_to_the_first_position_of_the_window() -> None:
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    g = ft.grad(lambda v: lax.reduce_window_max(v, (3,), (1,), "VALID").sum())(x)
    np.testing.assert_array_equal(g, [0.0, 2.0, 1.0, 0.0, 0.0])
    g = ft.grad(lambda v: lax.reduce_window_min(-v, (3,), (1,), "VALID").sum())(x)
    np.testing.assert_array_equal(g, [0.0, -2.0, -1.0, 0.0, 0.0])


def test_padding_is_never_selected() -> None:
    x = np.array([-np.inf, -5.0, -6.0])
    f = lambda v: lax.reduce_window_max(v, (2,), (1,), ((2, 2),))  # noqa: E731
    np.testing.assert_array_equal(f(x), [-np.inf, -np.inf, -5.0, -5.0, -6.0, -np.inf])
    g = ft.grad(lambda v: (f(v)[2:5] * np.array([1.0, 2.0, 4.0])).sum())(x)
    np.testing.assert_array_equal(g, [0.0, 3.0, 4.0])


def test_empty_operands_and_outputs() -> None:
    # an empty batch pools to an empty batch; a window less than a stride too large
    # has no position (JAX's shapes)
    x = np.zeros((0, 2, 4, 4))
    for f in (lax.reduce_window_max, lax.reduce_window_sum):
        pool = lambda v, f=f: f(v, (1, 1, 2, 2), (1, 1, 2, 2), "SAME")  # noqa: E731
        assert pool(x).shape == ft.jit(pool)(x).shape == (0, 2, 2, 2)
        assert ft.grad(lambda v, pool=pool: pool(v).sum())(x).shape == x.shape
    y = np.arange(2.0)
    assert lax.reduce_window_max(y, (3,), (2,)).shape == (0,)
    np.testing.assert_array_equal(
        ft.grad(lambda v: lax.reduce_window_max(v, (3,), (2,)).sum())(y), [0.0, 0.0]
    )
    assert lax.reduce_window(y, 1.0, lax.mul, (3,), (2,)).shape == (0,)


def test_float32_stays_float32() -> None:
    x = TIES.astype(np.float32)
    for f in (lax.reduce_window_sum, lax.reduce_window_max, lax.reduce_window_min):
        out = f(x, (1, 1, 2, 2), (1, 1, 2, 2), "SAME")
        assert out.dtype == np.float32
        assert ft.grad(lambda v, f=f: f(v, (1, 1, 2, 2), (1, 1, 1, 1), "VALID").sum())(x).dtype == (
            np.float32
        )
    assert lax.reduce_window(x, 1.0, lax.mul, (1, 1, 2, 1)).dtype == np.float32
    assert lax.cumlogsumexp(x, 3).dtype == np.float32


def test_cumlogsumexp_is_stable_for_large_entries() -> None:
    x = np.array([1e4, 1e4, -1e4, 1e4 + 1.0])
    out = lax.cumlogsumexp(x)
    np.testing.assert_allclose(
        out, [1e4, 1e4 + np.log(2.0), 1e4 + np.log(2.0), 1e4 + 1.0 + np.log1p(2 * np.exp(-1.0))]
    )
    g = ft.grad(lambda v: lax.cumlogsumexp(v)[-1])(x)
    np.testing.assert_allclose(g.sum(), 1.0)
    ft.check_grads(lambda v: lax.cumlogsumexp(v + 1e3), (np.array([0.3, 0.8, -0.2]),), order=2)


def test_generic_reduce_window_has_forward_mode_only() -> None:
    f = lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 2))  # noqa: E731
    ft.check_grads(f, (X2 + 3.0,), order=2, modes=("fwd",))
    with pytest.raises(NotImplementedError, match="reduce_window: expected forward mode"):
        ft.grad(lambda v: f(v).sum())(X2)


def test_recognised_computations_bind_the_specialised_primitives() -> None:
    for comp, prim in ((lax.add, "reduce_window_sum"), (fnp.maximum, "reduce_window_max"),
                       (lambda a, b: fnp.minimum(a, b), "reduce_window_min")):  # fmt: skip
        text = str(ft.make_jaxpr(lambda v, c=comp: lax.reduce_window(v, 0.0, c, (2, 2)))(X2))
        assert prim in text and "reduce_window[" not in text, text
    text = str(ft.make_jaxpr(lambda v: lax.reduce_window(v, 0.0, lax.sub, (2, 2)))(X2))
    assert "reduce_window[" in text


def test_multiple_operands_reduce_together() -> None:
    # argmax pooling: (value, index) pairs, the first index at ties
    idx = np.arange(5.0)
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])

    def pick(a, b):  # type: ignore[no-untyped-def]
        take_b = b[0] > a[0]
        return fnp.where(take_b, b[0], a[0]), fnp.where(take_b, b[1], a[1])

    v, i = lax.reduce_window((x, idx), (-np.inf, -1.0), pick, (3,), (1,), "VALID")
    np.testing.assert_array_equal(v, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(i, [1.0, 1.0, 2.0])
    vj, ij = ft.jit(lambda x: lax.reduce_window((x, idx), (-np.inf, -1.0), pick, (3,)))(x)
    np.testing.assert_array_equal(ij, i)
    # any pytree, e.g. a dict: a windowed sum and sum of squares in one pass
    out = lax.reduce_window(
        {"s": x, "q": x * x},
        {"s": 0.0, "q": 0.0},
        lambda a, b: {"s": a["s"] + b["s"], "q": a["q"] + b["q"]},
        (2,),
    )
    np.testing.assert_array_equal(out["s"], [4.0, 6.0, 5.0, 5.0])
    np.testing.assert_array_equal(out["q"], [10.0, 18.0, 13.0, 13.0])
    with pytest.raises(ValueError, match="expected an init_value of the operand's structure"):
        lax.reduce_window((x, idx), -np.inf, pick, (3,))


def test_pool_inside_jitted_scan() -> None:
    # The pools have no native-loop form: the scan keeps its Python loop around
    # compiled bodies, with the same values and gradients as eagerly.
    xs = np.random.default_rng(0).normal(size=(3, 1, 1, 4, 4))

    def f(c, xs):  # type: ignore[no-untyped-def]
        def body(c, x):  # type: ignore[no-untyped-def]
            y = lax.reduce_window_max(x * c, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            z = lax.reduce_window_sum(x, (1, 1, 3, 3), (1, 1, 1, 1), "SAME")
            return c * 0.9 + fnp.sum(y) * 0.1, fnp.sum(z) + lax.cumlogsumexp(y.ravel())[-1]

        return lax.scan(body, c, xs)

    c0 = np.float64(1.3)
    want = f(c0, xs)
    got = ft.jit(f)(c0, xs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    loss = lambda c, xs: f(c, xs)[0] + fnp.sum(f(c, xs)[1])  # noqa: E731
    np.testing.assert_allclose(
        ft.jit(ft.grad(loss, argnums=(0, 1)))(c0, xs)[1],
        ft.grad(loss, argnums=(0, 1))(c0, xs)[1],
        rtol=1e-12,
    )


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: lax.reduce_window_max(X2, (2,)), ValueError,
         r"reduce_window_max: expected window_dimensions with one entry per operand axis \(2\)"),
        (lambda: lax.reduce_window_sum(X2, (2, 0)), ValueError,
         r"reduce_window_sum: expected window_dimensions >= 1"),
        (lambda: lax.reduce_window_sum(X2, (2, 2), (1, 0)), ValueError,
         r"reduce_window_sum: expected window_strides >= 1"),
        (lambda: lax.reduce_window_min(X2, (2, 2), (1, 1), ((0, 0),)), ValueError,
         r"reduce_window_min: expected one \(lo, hi\) padding pair per operand axis"),
        (lambda: lax.reduce_window_min(X2, (2, 2), (1, 1), ((0, -1), (0, 0))), ValueError,
         r"reduce_window_min: expected non-negative padding"),
        (lambda: lax.reduce_window_max(X2, (6, 2)), ValueError,
         r"reduce_window_max: expected a \(dilated\) window no larger than the padded"),
        (lambda: lax.reduce_window_max(X2, (4, 2), window_dilation=(2, 1)), ValueError,
         r"reduce_window_max: expected a \(dilated\) window no larger"),
        (lambda: lax.reduce_window_sum(X2, (2, 2), padding="FULL"), ValueError,
         r"reduce_window_sum: expected padding 'SAME', 'SAME_LOWER', 'VALID'"),
        (lambda: lax.reduce_window_sum(X2, (2.5, 2)), TypeError,
         r"reduce_window_sum: expected window_dimensions as a tuple of ints"),
        (lambda: lax.reduce_window_sum(X2 > 0, (2, 2)), TypeError,
         r"reduce_window_sum: expected a numeric operand, got bool"),
        (lambda: lax.reduce_window(X2, np.zeros(2), lax.add, (2, 2)), ValueError,
         r"reduce_window: expected a scalar init_value"),
        (lambda: lax.reduce_window(X2, 1.0, lambda a, b: (a, b, a), (2, 2)), ValueError,
         r"reduce_window: expected the computation to return the operands' structure"),
        (lambda: lax.select_and_gather_add(X2, X2, "gt", (2, 2)), ValueError,
         r"select_and_gather_add: expected select 'ge' \(max\) or 'le' \(min\)"),
        (lambda: lax.select_and_gather_add(X2[:2], X2, "ge", (2, 2)), ValueError,
         r"select_and_gather_add: expected a tangent of the operand's shape"),
        (lambda: lax.select_and_scatter_add(X2, X2, "ge", (2, 2)), ValueError,
         r"select_and_scatter_add: expected a source of the window output's shape \(3, 4\)"),
        (lambda: lax.cumlogsumexp(np.arange(3)), TypeError,
         r"cumlogsumexp: expected a floating-point operand, got int64"),
        (lambda: lax.cumlogsumexp(X2, 2), ValueError, r"cumlogsumexp: expected an axis in"),
    ],
)  # fmt: skip
def test_bad_arguments_are_clear_errors(call, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        call()


def test_errors_are_the_same_under_jit() -> None:
    with pytest.raises(ValueError, match="reduce_window_max: expected a .dilated. window"):
        ft.jit(lambda v: lax.reduce_window_max(v, (6, 2)))(X2)


def test_generic_computation_closing_over_a_tracer_is_a_clear_error() -> None:
    f = lambda w: lax.reduce_window(X2, 1.0, lambda a, b: a * b * w, (2, 2))  # noqa: E731
    for transform in (ft.jit, ft.vmap):
        with pytest.raises(NotImplementedError, match="closes over no traced values"):
            transform(f)(np.ones(3) if transform is ft.vmap else 2.0)


def test_vmap_of_generic_reduce_window_rejects_batched_init() -> None:
    with pytest.raises(NotImplementedError, match="reduce_window: expected one init_value"):
        ft.vmap(lambda v, i: lax.reduce_window(v, i, lax.mul, (2,)))(X2, np.ones(4))
