"""``functrace.scipy.special.wofz``: SciPy's values over the complex plane, JAX's recorded
numbers (``wofz_cases.py``), its derivative against finite differences, and the
transforms."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy.special import erfcx, wofz
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from wofz_cases import REAL, REGIONS, T0, Z0, cases


def _rel(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return float(np.max(np.abs(got - want) / np.abs(want)))


def test_values_and_gradients_match_jax():
    # JAX's 32-term approximation is good to ~3e-13; ours to ~1e-14
    tol = lambda k, v: 2e-6 if v.dtype in (np.complex64, np.float32) else 1e-12  # noqa: E731
    assert_matches_recorded(cases(ft), "wofz_jax.npz", tol)


@pytest.mark.parametrize(
    "re, im",
    [
        ((-3, 3), (-3, 3)),  # small |z|
        ((-300, 300), (0, 300)),  # large |z|
        ((-1e7, 1e7), (0, 1e7)),  # very large
        ((-30, 30), (-1e-6, 1e-6)),  # near the real axis
        ((-1e-6, 1e-6), (-5, 60)),  # near the imaginary axis
        ((-6, 6), (-6, 0)),  # below the real axis: exp(-z^2) grows
        ((-25, 25), (-25, -6)),  # (exp(-z^2) there: condition number |z|^2, so 5e-13)
    ],
)
def test_values_match_scipy_over_the_plane(re, im):
    rng = np.random.default_rng(abs(hash((re, im))) % 2**32)
    z = rng.uniform(*re, 3000) + 1j * rng.uniform(*im, 3000)
    want = ss.wofz(z)
    ok = np.isfinite(want)
    got = wofz(z)
    assert isinstance(got, ft.Array) and got.dtype == np.complex128
    assert _rel(got[ok], want[ok]) < (5e-13 if im[1] < -1 else 1e-13)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf, NaN and overflow inputs
def test_real_input_special_points_and_dtypes():
    assert _rel(wofz(REAL), ss.wofz(REAL)) < 1e-13  # Re w(x) = exp(-x^2)
    np.testing.assert_allclose(np.asarray(wofz(REAL)).real, np.exp(-(REAL**2)), atol=1e-15)
    y = np.linspace(0, 50, 101)
    got = np.asarray(wofz(1j * y))
    assert np.all(got.imag == 0) and _rel(got.real, ss.erfcx(y)) < 1e-13  # w(iy) = erfcx(y)
    assert complex(wofz(0.0)) == 1
    assert wofz(1.0).dtype == np.complex128 and np.ndim(wofz(1.0)) == 0
    assert wofz(2).dtype == np.complex128
    assert wofz(np.float32(1)).dtype == np.complex64
    assert wofz(np.ones(3, np.complex64)).dtype == np.complex64
    z32 = REGIONS["small"].astype(np.complex64)
    assert _rel(wofz(z32), ss.wofz(z32.astype(np.complex128))) < 1e-5
    # SciPy's values at infinity in the closed upper half plane, and far away
    edge = np.array([np.inf, -np.inf, complex(0, np.inf), complex(3, np.inf), 1e300, 1e200j])
    np.testing.assert_allclose(np.asarray(wofz(edge)), ss.wofz(edge), rtol=1e-15, atol=0)
    assert np.isnan(complex(wofz(complex(np.nan, 0))))
    assert complex(wofz(-30j)) == complex(np.inf, 0)  # as SciPy (JAX: inf + nan j)
    assert _rel(erfcx(Z0), ss.erfcx(Z0)) < 1e-13


def test_derivative_matches_finite_differences():
    # dw/dz = 2i/sqrt(pi) - 2 z w: jvp with complex tangents is C-linear
    _, t = ft.jvp(wofz, (Z0,), (T0,))
    h = 1e-6
    fd = (ss.wofz(Z0 + h * T0) - ss.wofz(Z0 - h * T0)) / (2 * h)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-8, atol=1e-9)
    # grad of real losses w.r.t. the real and imaginary parts
    x, y = Z0.real, Z0.imag

    def loss(x, y):
        w = wofz(x + 1j * y)
        return fnp.sum(fnp.real(w) * fnp.imag(w))

    gx, gy = ft.grad(loss, argnums=(0, 1))(x, y)

    def np_loss(x, y):
        w = ss.wofz(x + 1j * y)
        return np.sum(w.real * w.imag)

    e = np.eye(len(x)) * h
    fx = [(np_loss(x + d, y) - np_loss(x - d, y)) / (2 * h) for d in e]
    fy = [(np_loss(x, y + d) - np_loss(x, y - d)) / (2 * h) for d in e]
    np.testing.assert_allclose(np.asarray(gx), fx, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gy), fy, rtol=1e-7, atol=1e-8)
    # grad of a real function of complex z is df/dx - i df/dy (JAX's convention)
    g = ft.grad(lambda z: fnp.sum(fnp.real(wofz(z)) * fnp.imag(wofz(z))))(Z0)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gx) - 1j * np.asarray(gy), rtol=1e-12)


def test_check_grads_second_order():
    def parts(x, y):
        w = wofz(x + 1j * y)
        return fnp.stack([fnp.real(w), fnp.imag(w)])

    check_grads(parts, (Z0.real, Z0.imag), order=2, modes=("fwd", "rev"))
    check_grads(lambda r: fnp.imag(wofz(r)), (REAL[:5] / 10,), order=2, modes=("fwd", "rev"))


def test_jit_vmap_and_their_compositions():
    z = np.concatenate([REGIONS["small"][:8], REGIONS["lower"][:4], [0j, 1e9 + 1e9j]])
    eager = np.asarray(wofz(z))
    np.testing.assert_allclose(np.asarray(ft.jit(wofz)(z)), eager, rtol=1e-14, atol=0)
    looped = np.stack([np.asarray(wofz(v)) for v in z])
    np.testing.assert_allclose(np.asarray(ft.vmap(wofz)(z)), looped, rtol=1e-14, atol=0)
    z32 = z.astype(np.complex64)
    np.testing.assert_allclose(
        np.asarray(ft.jit(wofz)(z32)), np.asarray(wofz(z32)), rtol=1e-6, atol=0
    )

    def loss(x, y):
        return fnp.real(wofz(x + 1j * y)) + fnp.imag(wofz(x + 1j * y)) ** 2

    x, y = Z0.real, Z0.imag
    per = np.array([np.asarray(ft.grad(loss)(a, b)) for a, b in zip(x, y)])
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(loss))(x, y)), per, rtol=1e-12)
    total = ft.grad(lambda x: fnp.sum(ft.vmap(loss)(x, y)))(x)
    np.testing.assert_allclose(np.asarray(total), per, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.grad(loss))(x[0], y[0])), per[0], rtol=1e-12)


def test_bad_input_names_the_function():
    with pytest.raises(TypeError, match="wofz: expected an array of numbers"):
        wofz(np.array(["a"]))
    with pytest.raises(TypeError, match="wofz"):
        wofz(np.array([1, 2], dtype="datetime64[D]"))
