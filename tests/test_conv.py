"""lax convolutions against values recorded from JAX (``fixtures/conv_jax.npz``, the
cases of ``conv_cases.py``), their error messages, and a convolution inside a jitted
``scan`` (a loop whose body holds a primitive without a native-loop form)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
import op_db  # noqa: F401  (the op table first: op_rows_conv imports it)
from conv_cases import cases, smooth
from op_rows_conv import np_conv

FIXTURE = Path(__file__).parent / "fixtures" / "conv_jax.npz"


def test_values_vjps_and_helpers_match_jax() -> None:
    ref = np.load(FIXTURE)
    got = cases(ft)
    assert sorted(got) == sorted(ref.files)
    for key in ref.files:
        assert got[key].shape == ref[key].shape, key
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize(
    "few_positions, stack, scatter",
    [(32, 0, 0.0), (10**9, 0, 0.0), (10**9, 10**12, 0.0), (32, 0, np.inf)],
    ids=["blocks", "per-position", "stacked-positions", "scatter"],
)
def test_impl_paths_match_jax(
    monkeypatch: pytest.MonkeyPatch, few_positions: int, stack: int, scatter: float
) -> None:
    # Blocks of one batch row; one product per output position (the path of deep
    # patches at few positions), or all positions stacked in one product; the scatter
    # path (products then shifted adds) wherever it applies: on the same cases.
    from functrace.lax import conv_impl

    monkeypatch.setattr(conv_impl, "_BLOCK", 1)
    monkeypatch.setattr(conv_impl, "_FEW_POSITIONS", few_positions)
    monkeypatch.setattr(conv_impl, "_STACK", stack)
    monkeypatch.setattr(conv_impl, "_SCATTER_RATIO", scatter)
    ref = np.load(FIXTURE)
    got = cases(ft)
    for key in ref.files:
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-10, atol=1e-12, err_msg=key)


def test_jaxpr_params_are_normalised() -> None:
    x, w = np.ones((1, 5, 5, 2)), np.ones((3, 3, 2, 4))
    f = lambda a, b: lax.conv_general_dilated(  # noqa: E731
        a, b, [1, 2], "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    text = str(ft.make_jaxpr(f)(x, w))
    assert "window_strides=(1,2)" in text.replace(" ", "")
    assert "padding=((1,1),(1,1))" in text.replace(" ", "")
    eqn = ft.make_jaxpr(f)(x, w).jaxpr.eqns[0]
    dn = eqn.params["dimension_numbers"]
    assert isinstance(dn, lax.ConvDimensionNumbers)
    assert dn == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    hash(tuple(sorted(eqn.params.items())))


def test_float32_and_preferred_element_type() -> None:
    x, w = smooth((2, 3, 6), 0.0).astype(np.float32), smooth((2, 3, 3), 1.0).astype(np.float32)
    y = lax.conv_general_dilated(x, w, (1,), "VALID")
    assert np.asarray(y).dtype == np.float32
    ref = np_conv(x.astype(np.float64), w.astype(np.float64), (1,), ((0, 0),))
    np.testing.assert_allclose(y, ref, rtol=1e-5)
    y64 = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.float64)
    assert np.asarray(y64).dtype == np.float64
    np.testing.assert_allclose(y64, ref, rtol=1e-12)
    xi, wi = np.arange(12).reshape(1, 2, 6), np.arange(6).reshape(1, 2, 3)
    yi = lax.conv_general_dilated(xi, wi, (2,), ((1, 0),))
    assert np.asarray(yi).dtype == xi.dtype
    np.testing.assert_array_equal(yi, np_conv(xi, wi, (2,), ((1, 0),)))


def test_grad_of_grad_under_jit_and_vmap() -> None:
    x, w = smooth((2, 2, 2, 5, 4), 0.3), smooth((4, 1, 3, 2), 0.7)

    def loss(a: object, b: object) -> object:
        y = lax.conv_general_dilated(a, b, (2, 1), ((1, 1), (0, 1)), feature_group_count=2)
        return fnp.sum(fnp.tanh(y) ** 2)

    hess = ft.grad(lambda a, b: fnp.sum(ft.grad(loss)(a, b) ** 2), argnums=1)
    eager = np.stack([hess(xi, w) for xi in x])
    np.testing.assert_allclose(ft.jit(ft.vmap(hess, (0, None)))(x, w), eager, rtol=1e-10)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
@pytest.mark.parametrize("batch_groups", [1, 2])
def test_vmap_over_no_examples(in_axes: tuple, batch_groups: int) -> None:
    """A batch of 0 examples, batched in either operand or both, gives one example's
    result stacked zero times, eagerly, under jit and under vjp (whose transposes batch
    one operand of a convolution of the other)."""
    x, w = smooth((2, 4, 6), 0.3), smooth((4, 4, 3), 0.7)

    def conv(a: object, b: object) -> object:
        return lax.conv_general_dilated(a, b, (1,), "SAME", batch_group_count=batch_groups)

    def pullbacks(a: object, b: object) -> object:
        out, pb = ft.vjp(conv, a, b)
        return pb(fnp.cos(out))

    for f in (conv, pullbacks):
        one = f(x, w)
        args = [x[None][:0] if ax == 0 else v for ax, v in zip(in_axes, (x, w))]
        args[1] = w[None][:0] if in_axes[1] == 0 else args[1]
        for g in (ft.vmap(f, in_axes), ft.jit(ft.vmap(f, in_axes))):
            got = g(*args)
            want = ft.tree_util.tree_map(lambda v: np.zeros((0, *np.shape(v))), one)
            assert ft.tree_util.tree_structure(got) == ft.tree_util.tree_structure(want)
            for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
                assert a.shape == b.shape and a.dtype == b.dtype


def test_scan_over_a_convolution_under_jit() -> None:
    # The conv has no native-loop form: the jitted scan keeps a Python loop over its
    # compiled body, with the same values (and gradients) as the eager scan.
    xs = smooth((5, 2, 2, 7), 0.5)
    w = smooth((2, 2, 3), 1.1)

    def run(w: object, xs: object) -> object:
        def body(c: object, x: object) -> tuple[object, object]:
            y = lax.conv_general_dilated(x + c, w, (1,), "SAME")
            return fnp.tanh(y), fnp.sum(y)

        c, ys = lax.scan(body, fnp.zeros((2, 2, 7)), xs)
        return fnp.sum(c) + fnp.sum(ys)

    ref_c = np.zeros((2, 2, 7))
    total = 0.0
    for x in xs:
        y = np_conv(x + ref_c, w, (1,), ((1, 1),))
        ref_c = np.tanh(y)
        total += y.sum()
    np.testing.assert_allclose(run(w, xs), ref_c.sum() + total, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(run)(w, xs), run(w, xs), rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(run))(w, xs), ft.grad(run)(w, xs), rtol=1e-10)


X, W = np.ones((2, 4, 6, 6)), np.ones((6, 2, 3, 3))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(lhs=np.ones((2, 4, 6)), rhs=W), TypeError, "expected lhs and rhs of the same rank"),
        (dict(rhs=W.astype(np.float32)), TypeError, "expected operands of equal dtype"),
        (dict(feature_group_count=3), ValueError, r"expected lhs features \(4\) = rhs input"),
        (dict(rhs=np.ones((5, 2, 3, 3)), feature_group_count=2), ValueError, "divisible"),
        (dict(batch_group_count=4), ValueError, "batch_group_count"),
        (
            dict(feature_group_count=2, batch_group_count=2),
            ValueError,
            "at most one of feature_group_count",
        ),
        (dict(window_strides=(1, 0)), ValueError, "expected window_strides of 2 positive"),
        (dict(window_strides=(1,)), ValueError, "window_strides as a sequence of 2 ints"),
        (dict(rhs_dilation=(0, 1)), ValueError, "expected rhs_dilation of 2 positive"),
        (dict(lhs_dilation=(1, -1), padding=((0, 0), (0, 0))), ValueError, "lhs_dilation"),
        (dict(padding="FULL"), ValueError, "expected padding 'SAME', 'SAME_LOWER', 'VALID'"),
        (dict(padding=((1, 1),)), ValueError, r"padding as 2 \(low, high\) pairs"),
        (dict(padding=(1, 1)), TypeError, "expected padding"),
        (dict(padding=((0, 0), (-4, -3))), ValueError, "negative padding no larger"),
        (dict(lhs_dilation=(2, 1)), ValueError, "explicit \\(low, high\\) padding pairs"),
        (dict(dimension_numbers=("NCHW", "OIHW")), TypeError, "conv_dimension_numbers"),
        (dict(dimension_numbers=("NCHW", "OIHX", "NCHW")), ValueError, "same spatial letters"),
        (dict(dimension_numbers=("NCHW", "OIH", "NCHW")), TypeError, "layout of 4 letters"),
        (dict(dimension_numbers=("NNHW", "OIHW", "NCHW")), ValueError, "'N' and 'C' once"),
        (dict(precision="fast"), ValueError, "expected precision"),
        (dict(lhs=X > 0, rhs=W > 0), TypeError, "expected a numeric operand"),
        (dict(feature_group_count=2.0), TypeError, "feature_group_count as a positive int"),
        (dict(preferred_element_type=np.int8), TypeError, "preferred_element_type at least"),
    ],
)
def test_errors_name_the_function(kwargs: dict, exc: type, match: str) -> None:
    args = dict(lhs=X, rhs=W, window_strides=(1, 1), padding="VALID", feature_group_count=2)
    args.update(kwargs)
    with pytest.raises(exc, match=match) as info:
        lax.conv_general_dilated(**args)
    assert "conv" in str(info.value)
    # the same message under jit (abstract evaluation) as eagerly
    lhs, rhs = args.pop("lhs"), args.pop("rhs")
    with pytest.raises(exc, match=match):
        ft.jit(lambda a, b: lax.conv_general_dilated(a, b, **args))(lhs, rhs)


def test_helper_errors() -> None:
    with pytest.raises(ValueError, match="padtype_to_pads: expected padding"):
        lax.padtype_to_pads((4,), (2,), (1,), "CIRCULAR")
    with pytest.raises(ValueError, match="conv_transpose: expected padding 'SAME', 'VALID'"):
        lax.conv_transpose(np.ones((1, 4, 2)), np.ones((2, 2, 3)), (2,), "SAME_LOWER")
    with pytest.raises(TypeError, match="conv_transpose: expected lhs and rhs of the same rank"):
        lax.conv_transpose(np.ones((1, 4, 2)), np.ones((2, 3)), (2,), "SAME")
    with pytest.raises(ValueError, match="conv_dimension_numbers: expected the lhs spec"):
        lax.conv_dimension_numbers(
            (1, 2, 3), (1, 2, 3), lax.ConvDimensionNumbers((0, 1, 1), (0, 1, 2), (0, 1, 2))
        )


def test_correlate_errors_and_dtypes() -> None:
    a = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="correlate: expected mode"):
        ft.jit(lambda x: fnp.correlate(x, x, "circular"))(a)
    with pytest.raises(ValueError, match="correlate: expected 1-d sequences"):
        ft.jit(lambda x: fnp.correlate(x, a))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="correlate: expected non-empty"):
        ft.jit(lambda x: fnp.correlate(x, np.ones(0)))(a)
    ai, vi = np.array([1, 2, 3, 4]), np.array([2, -1])
    got = ft.jit(lambda x, y: fnp.correlate(x, y, "full"))(ai, vi)
    np.testing.assert_array_equal(got, np.correlate(ai, vi, "full"))
    assert got.dtype == np.correlate(ai, vi, "full").dtype
    ab, vb = np.array([True, False, True]), np.array([False, True])
    np.testing.assert_array_equal(ft.jit(fnp.correlate)(ab, vb), np.correlate(ab, vb))
    c = np.array([1 + 2j, 3 - 1j])
    np.testing.assert_allclose(fnp.correlate(c, c[::-1], "full"), np.correlate(c, c[::-1], "full"))
