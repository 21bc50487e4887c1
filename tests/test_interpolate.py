"""``functrace.scipy.interpolate.RegularGridInterpolator`` against JAX's numbers
(recorded from ``interpolate_cases.py``), finite differences and the transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy.interpolate import RegularGridInterpolator
from functrace.test_util import check_grads
from interpolate_cases import G2, V2, V2T, X2, cases
from recorded import assert_matches_recorded


def test_values_and_gradients_match_jax():
    assert_matches_recorded(cases(ft), "interpolate_jax.npz", lambda k, v: 1e-13)


def test_linear_is_exact_for_multilinear_functions():
    f = RegularGridInterpolator(G2, np.add.outer(2 * G2[0], -G2[1]) + 1.0)
    pts = np.array([[0.3, 0.7], [-0.9, 3.9], [1.2, 2.2]])
    np.testing.assert_allclose(np.asarray(f(pts)), 2 * pts[:, 0] - pts[:, 1] + 1.0, rtol=1e-14)


def test_second_order_gradients_in_values_and_points():
    inside = np.array([[-0.5, 0.5], [0.75, 3.0], [0.2, 1.6]])  # away from grid lines

    def f(v, x):
        return fnp.sin(RegularGridInterpolator(G2, v)(x))

    check_grads(f, (V2, inside), order=2, modes=("fwd", "rev"))


def test_an_interpolator_is_a_pytree_under_jit_vmap_and_grad():
    interp = RegularGridInterpolator(G2, V2T)
    eager = np.asarray(interp(X2))
    np.testing.assert_allclose(np.asarray(ft.jit(lambda f, x: f(x))(interp, X2)), eager,
                               rtol=1e-14, equal_nan=True)  # fmt: skip
    rows = ft.vmap(lambda x: interp(x))(X2)  # a 1-d xi is one point: shape (1, 2) each
    np.testing.assert_allclose(np.asarray(rows)[:, 0], eager, rtol=1e-14, equal_nan=True)
    g = ft.grad(lambda f: fnp.sum(f(X2[:3]) ** 2))(interp)
    assert isinstance(g, RegularGridInterpolator) and g.values.shape == V2T.shape
    g_values = ft.grad(lambda v: fnp.sum(RegularGridInterpolator(G2, v)(X2[:3]) ** 2))(V2T)
    np.testing.assert_allclose(np.asarray(g.values), np.asarray(g_values), rtol=1e-14)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="RegularGridInterpolator: expected method"):
        RegularGridInterpolator(G2, V2, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error=True is not supported"):
        RegularGridInterpolator(G2, V2, bounds_error=True)
    with pytest.raises(ValueError, match="expected at most 2 point arrays"):
        RegularGridInterpolator((*G2, G2[0]), V2)
    with pytest.raises(ValueError, match=r"expected points\[1\] to be 1-d with values.shape"):
        RegularGridInterpolator((G2[0], G2[1][:3]), V2)
    with pytest.raises(ValueError, match="expected fill_value None or of a dtype castable"):
        RegularGridInterpolator(G2, V2.astype(np.float32), fill_value=1j)
    with pytest.raises(ValueError, match="expected points xi with 2 coordinates"):
        RegularGridInterpolator(G2, V2)(np.ones((3, 3)))
