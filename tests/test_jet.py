"""``functrace.experimental.jet`` against JAX's numbers (recorded from
``jet_cases.py``), closed forms, nested derivatives (control flow and custom rules,
which JAX's ``jet`` lacks rules for), and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.experimental.jet import jet
from jet_cases import S1, S2, X, cases
from recorded import assert_matches_recorded


def test_values_match_jax():
    tol = lambda k, v: 1e-5 if v.dtype == np.float32 else 1e-11  # noqa: E731
    assert_matches_recorded(cases(ft), "jet_jax.npz", tol)


def test_closed_forms_and_nested_derivatives():
    # exp along x(t) = x0 + t: every derivative is exp(x0)
    y0, ys = jet(fnp.exp, (0.7,), ((1.0, 0.0, 0.0, 0.0, 0.0),))
    np.testing.assert_allclose([y0, *ys], [math.exp(0.7)] * 6, rtol=1e-14)

    # control flow and a custom rule (JAX's jet has no rules for them): the second
    # derivative along a line equals the Hessian's quadratic form
    @ft.custom_jvp
    def soft(x):
        return fnp.log1p(fnp.exp(x))

    soft.defjvp(lambda p, t: (soft(p[0]), t[0] / (1 + fnp.exp(-p[0]))))

    def f(x):
        return fnp.sum(soft(lax.fori_loop(0, 3, lambda i, v: fnp.sin(v) * x, x)))

    _, (d1, d2) = jet(f, (X,), ((S1, np.zeros(3)),))
    np.testing.assert_allclose(d1, ft.grad(f)(X) @ S1, rtol=1e-12)
    np.testing.assert_allclose(d2, S1 @ ft.hessian(f)(X) @ S1, rtol=1e-11)
    jitted = ft.jit(lambda x, a: jet(f, (x,), ((a, np.zeros(3)),)))(X, S1)
    np.testing.assert_allclose(jitted[1][1], d2, rtol=1e-12)
    # a second-order term changes the second derivative by the gradient along it
    _, (_, e2) = jet(f, (X,), ((S1, S2),))
    np.testing.assert_allclose(e2, d2 + ft.grad(f)(X) @ S2, rtol=1e-11)
    y0, ys = jet(fnp.sin, (0.5,), ((),))
    assert ys == [] and float(y0) == math.sin(0.5)


def test_bad_arguments_name_jet():
    with pytest.raises(ValueError, match="jet: expected one series per primal"):
        jet(fnp.sin, (0.5, 1.0), ((1.0,),))
    with pytest.raises(ValueError, match="jet: expected every series to have the same number"):
        jet(lambda x, y: x * y, (0.5, 1.0), ((1.0,), (1.0, 2.0)))
    with pytest.raises(
        ValueError, match=r"jet: expected the terms of series 0 to have its primal's shape \(3,\)"
    ):
        jet(fnp.sin, (X,), ((np.ones(2),),))
    with pytest.raises(TypeError, match="jet: expected float primals"):
        jet(fnp.sin, (np.arange(3),), ((np.ones(3),),))
    with pytest.raises(TypeError, match="jet: expected primals and series as tuples"):
        jet(fnp.sin, 0.5, ((1.0,),))
