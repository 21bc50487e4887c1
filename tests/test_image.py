"""``functrace.image`` against JAX's numbers (recorded from ``image_cases.py``), plain
NumPy formulas, finite differences, the transforms and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.image import ResizeMethod, resize, scale_and_translate
from functrace.test_util import check_grads
from image_cases import HWC, IMG, NHWC, SCALE, SIG, TRANS, cases
from recorded import assert_matches_recorded


def test_values_and_gradients_match_jax():
    # (float32 images, and weights computed in float32 from float32 scales, to rounding)
    tol = lambda k, v: 2e-6 if "float32" in k or v.dtype == np.float32 else 1e-12  # noqa: E731
    assert_matches_recorded(cases(ft), "image_jax.npz", tol)


def test_from_string_and_the_enum():
    assert ResizeMethod.from_string("trilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("bicubic") is ResizeMethod.CUBIC
    assert ResizeMethod.from_string("bicubic-pytorch") is ResizeMethod.CUBIC_PYTORCH
    assert [m.name for m in ResizeMethod] == [
        "NEAREST",
        "LINEAR",
        "LANCZOS3",
        "LANCZOS5",
        "CUBIC",
        "CUBIC_PYTORCH",
        "AREA",
    ]
    with pytest.raises(ValueError, match='Unknown resize method "foo"'):
        ResizeMethod.from_string("foo")


def _linear_upsample_1d(x, n):
    # half-pixel centres, the edge values held beyond the outermost centres
    m = len(x)
    p = np.clip((np.arange(n) + 0.5) * m / n - 0.5, 0, m - 1)
    return np.interp(p, np.arange(m), x)


def test_plain_formulas():
    # linear upsampling is np.interp at the half-pixel points
    np.testing.assert_allclose(
        np.asarray(resize(SIG, (20,), "linear")),
        _linear_upsample_1d(SIG, 20),
        rtol=1e-13,
        atol=1e-13,
    )
    # halving with antialiasing averages pairs by the stretched triangle: (1, 3, 3, 1) / 8
    x = np.arange(8.0) ** 2
    want = (
        [(x[0] * 3 + x[1] * 3 + x[2]) / 7]
        + [(x[2 * i - 1] + 3 * x[2 * i] + 3 * x[2 * i + 1] + x[2 * i + 2]) / 8 for i in (1, 2)]
        + [(x[5] + 3 * x[6] + 3 * x[7]) / 7]
    )
    np.testing.assert_allclose(np.asarray(resize(x, (4,), "linear")), want, rtol=1e-14)
    # without it, the points between pixel pairs: their means
    np.testing.assert_allclose(
        np.asarray(resize(x, (4,), "linear", antialias=False)), (x[0::2] + x[1::2]) / 2, rtol=1e-14
    )
    # every interpolating kernel reproduces a constant image, and the identity warp
    for method in ("linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"):
        np.testing.assert_allclose(
            np.asarray(resize(np.ones((3, 4)), (7, 2), method)), 1.0, rtol=1e-13
        )
        same = scale_and_translate(IMG, IMG.shape, (0, 1), [1.0, 1.0], [0.0, 0.0], method)
        np.testing.assert_allclose(np.asarray(same), IMG, rtol=1e-13, atol=1e-13)
    # area downsampling by an integer factor is the block mean
    blocks = np.asarray(resize(IMG[:4, :6], (2, 3), "area"))
    np.testing.assert_allclose(
        blocks, IMG[:4, :6].reshape(2, 2, 3, 2).mean(axis=(1, 3)), rtol=1e-13
    )
    # nearest picks floor((i + 0.5) * m / n)
    np.testing.assert_array_equal(np.asarray(resize(SIG, (4,), "nearest")), SIG[[1, 3, 5, 7]])


def test_dtypes_and_unchanged_dimensions():
    u8 = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert resize(u8, (5, 6), "nearest").dtype == np.uint8
    assert resize(u8, (5, 6), "linear").dtype == np.float32
    assert resize(u8.astype(np.int64), (5, 6), "linear").dtype == np.float64
    assert resize(u8 > 5, (5, 6), "cubic").dtype == np.float32
    assert resize(u8.astype(np.float16), (5, 6), "linear").dtype == np.float16
    assert resize(u8.astype(np.complex64), (5, 6), "linear").dtype == np.complex64
    f32 = scale_and_translate(IMG, (6, 5), (0, 1), SCALE.astype(np.float32), TRANS, "cubic")
    assert f32.dtype == np.float64
    # the batch and channel dimensions are untouched, exactly
    out = np.asarray(resize(NHWC, (2, 5, 9, 2), "lanczos3"))
    for b in range(2):
        for c in range(2):
            np.testing.assert_allclose(
                out[b, :, :, c],
                np.asarray(resize(NHWC[b, :, :, c], (5, 9), "lanczos3")),
                rtol=1e-14,
                atol=1e-14,
            )
    assert resize(IMG, (0, 7), "linear").shape == (0, 7)
    assert resize(np.ones((0, 3)), (0, 5), "cubic").shape == (0, 5)
    assert resize(IMG, IMG.shape, "cubic").dtype == np.float64
    np.testing.assert_array_equal(np.asarray(resize(IMG, IMG.shape, "lanczos5")), IMG)
    # a complex image resamples its real and imaginary parts
    z = IMG + 1j * IMG[::-1]
    got = np.asarray(resize(z, (3, 9), "cubic"))
    np.testing.assert_allclose(got.real, np.asarray(resize(IMG, (3, 9), "cubic")), rtol=1e-13)
    np.testing.assert_allclose(got.imag, np.asarray(resize(IMG[::-1], (3, 9), "cubic")), rtol=1e-13)


@pytest.mark.parametrize(
    "method,shape,aa",
    [
        ("linear", (3, 4), True),
        ("cubic", (8, 9), True),
        ("lanczos3", (4, 10), False),
        ("nearest", (7, 3), True),
        ("area", (3, 9), True),
    ],
)
def test_gradients_in_the_image(method, shape, aa):
    check_grads(
        lambda x: resize(x, shape, method, antialias=aa) ** 2, (IMG,), order=2, modes=("fwd", "rev")
    )


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"])
def test_gradients_in_scale_and_translation(method):
    def f(x, s, t):
        return fnp.sin(scale_and_translate(x, (6, 5), (0, 1), s, t, method, antialias=False))

    # (second derivatives in the scale are in the thousands: a smaller step keeps the
    # central differences' truncation error below the tolerance)
    check_grads(f, (IMG, SCALE, TRANS), order=2, modes=("fwd", "rev"), eps=1e-5)
    # and with the kernel stretched (scale < 1 in both dimensions, with antialiasing)
    g = lambda s: fnp.sum(scale_and_translate(IMG, (3, 4), (0, 1), s, TRANS, method) ** 2)  # noqa: E731
    check_grads(g, (np.array([0.72, 0.47]),), order=2, modes=("fwd", "rev"), eps=1e-5)


def test_known_weights_are_constants_under_jit():
    # the weights of resize (and of a known scale and translation) are computed once, in
    # NumPy: the traced program is the contractions
    for f in (
        lambda x: resize(x, (3, 9), "lanczos3"),
        lambda x: scale_and_translate(x, (3, 9), (0, 1), SCALE, TRANS, "cubic"),
    ):
        prims = {e.primitive.name for e in ft.make_jaxpr(f)(IMG).eqns}
        assert prims <= {"dot_general", "transpose"}, prims


def test_jit_equals_eager():
    for method in ("nearest", "linear", "cubic", "lanczos5"):
        f = lambda x, m=method: resize(x, (2, 7, 9, 2), m)  # noqa: E731
        np.testing.assert_allclose(
            np.asarray(ft.jit(f)(NHWC)), np.asarray(f(NHWC)), rtol=1e-13, atol=1e-13
        )

    def g(x, s, t):
        return scale_and_translate(x, (7, 3, 3), (0, 1), s, t, "lanczos3")

    np.testing.assert_allclose(
        np.asarray(ft.jit(g)(HWC, SCALE, TRANS)),
        np.asarray(g(HWC, SCALE, TRANS)),
        rtol=1e-13,
        atol=1e-13,
    )
    u8 = (HWC * 40 + 100).astype(np.uint8)
    assert ft.jit(lambda x: resize(x, (3, 5, 3), "nearest"))(u8).dtype == np.uint8
    np.testing.assert_array_equal(
        np.asarray(ft.jit(lambda x: resize(x, (3, 5, 3), "linear"))(u8)),
        np.asarray(resize(u8, (3, 5, 3), "linear")),
    )


def test_vmap_equals_a_loop():
    batch = np.stack([IMG, IMG[::-1], 2 * IMG])
    for method in ("nearest", "linear", "cubic", "area"):
        got = np.asarray(ft.vmap(lambda x, m=method: resize(x, (3, 11), m))(batch))
        want = np.stack([np.asarray(resize(x, (3, 11), method)) for x in batch])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    # over the scales and translations too
    scales = np.array([[1.37, 0.61], [0.8, 1.9], [2.2, 0.35]])
    trans = np.array([[0.3, -1.2], [0.0, 0.4], [-0.7, 1.1]])
    st = lambda x, s, t: scale_and_translate(x, (6, 5), (0, 1), s, t, "cubic")  # noqa: E731
    got = np.asarray(ft.vmap(st)(batch, scales, trans))
    want = np.stack([np.asarray(st(*a)) for a in zip(batch, scales, trans)])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    got = np.asarray(ft.vmap(st, in_axes=(None, 0, None))(IMG, scales, TRANS))
    want = np.stack([np.asarray(st(IMG, s, TRANS)) for s in scales])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_grad_of_vmap_and_vmap_of_grad():
    batch = np.stack([IMG, IMG[::-1] * 0.5])

    def loss(x, s):
        return fnp.sum(fnp.sin(scale_and_translate(x, (4, 9), (0, 1), s, TRANS, "linear")))

    per = ft.vmap(ft.grad(loss, argnums=1), in_axes=(0, None))(batch, SCALE)
    want = np.stack([np.asarray(ft.grad(loss, argnums=1)(x, SCALE)) for x in batch])
    np.testing.assert_allclose(np.asarray(per), want, rtol=1e-12, atol=1e-13)
    total = ft.grad(lambda s: fnp.sum(ft.vmap(loss, in_axes=(0, None))(batch, s)))(SCALE)
    np.testing.assert_allclose(np.asarray(total), want.sum(axis=0), rtol=1e-12, atol=1e-13)
    gx = ft.grad(lambda b: fnp.sum(ft.vmap(lambda x: resize(x, (3, 9), "cubic"))(b) ** 2))(batch)
    want_x = np.stack(
        [np.asarray(ft.grad(lambda x: fnp.sum(resize(x, (3, 9), "cubic") ** 2))(x)) for x in batch]
    )
    np.testing.assert_allclose(np.asarray(gx), want_x, rtol=1e-12, atol=1e-13)


def test_bad_arguments_name_the_function():
    with pytest.raises(ValueError, match=r"resize: shape must have length equal .* \(2,\)"):
        resize(IMG, (2,), "linear")
    with pytest.raises(ValueError, match='resize: Unknown resize method "bogus"'):
        resize(IMG, (2, 3), "bogus")
    with pytest.raises(TypeError, match="resize: expected method as a ResizeMethod"):
        resize(IMG, (2, 3), 1)
    with pytest.raises(TypeError, match="resize: expected shape as a sequence of integers"):
        resize(IMG, (2.5, 3), "linear")
    with pytest.raises(ValueError, match="resize: expected a shape of sizes >= 0"):
        resize(IMG, (-2, 3), "linear")
    with pytest.raises(ValueError, match="resize: cannot resize dimension 0 of size 0"):
        resize(np.ones((0, 3)), (2, 3), "nearest")
    with pytest.raises(TypeError, match="resize: expected an array of numbers"):
        resize(np.array(["a", "b"]), (3,), "linear")
    with pytest.raises(ValueError, match="resize: expected precision"):
        resize(IMG, (2, 3), "linear", precision="best")
    st = scale_and_translate
    with pytest.raises(ValueError, match="scale_and_translate: Nearest neighbor resampling"):
        st(IMG, (6, 5), (0, 1), SCALE, TRANS, "nearest")
    with pytest.raises(ValueError, match=r"scale_and_translate: expected scale with one value"):
        st(IMG, (6, 5), (0, 1), SCALE[:1], TRANS, "linear")
    with pytest.raises(ValueError, match=r"expected translation with one value .* shape \(\)"):
        st(IMG, (6, 5), (0, 1), SCALE, 0.5, "linear")
    with pytest.raises(ValueError, match="scale_and_translate: expected spatial_dims in"):
        st(IMG, (6, 5), (0, 2), SCALE, TRANS, "linear")
    with pytest.raises(ValueError, match="scale_and_translate: expected distinct spatial_dims"):
        st(IMG, (6, 5), (0, -2), SCALE, TRANS, "linear")
    with pytest.raises(ValueError, match="dimension 1 is not in spatial_dims"):
        st(IMG, (6, 5), (0,), SCALE[:1], TRANS[:1], "linear")
    with pytest.raises(TypeError, match="scale_and_translate: expected a real scale"):
        st(IMG, (6, 5), (0, 1), SCALE + 0j, TRANS, "linear")
    with pytest.raises(ValueError, match="scale_and_translate: shape must have length"):
        st(IMG, (6, 5, 1), (0, 1), SCALE, TRANS, "linear")
