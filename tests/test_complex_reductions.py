"""max/min/amax/amin/ptp/nanmax/nanmin/argmax/argmin/nanargmax/nanargmin of complex
arrays: NumPy's values (lexicographic order, NaN rules) eagerly, under jit and under
vmap; values and derivatives against JAX's where JAX defines them
(tests/fixtures/complex_reductions_jax.npz, recorded from
tests/complex_reductions_cases.py); the errors of lax.argmax and of empty reductions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import functrace
import functrace.numpy as fnp
from complex_reductions_cases import Z, cases
from functrace import lax
from recorded import assert_matches_recorded

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NAN = np.nan
# Rows: a NaN real part after a NaN imaginary part; no NaN (real-part ties); all NaN
# (three different NaNs); a NaN beside -inf entries (NumPy's nanargmax reads the NaN as
# -inf+0j, above -inf-1j)
X = np.array(
    [
        [1 + 2j, complex(0, NAN), 3 + 1j, complex(NAN, 0), 5 + 0j],
        [1 + 2j, 1 - 2j, -1 + 5j, 1 + 3j, -1 + 4j],
        [complex(NAN, 0), complex(0, NAN), complex(NAN, 3), complex(NAN, NAN), NAN + 2j],
        [complex(-np.inf, -1), complex(NAN, 0), complex(-np.inf, -5), 2j, -2j],
    ]
)
NAMES = ("max", "min", "amax", "amin", "ptp", "nanmax", "nanmin")
ARG_NAMES = ("argmax", "argmin", "nanargmax", "nanargmin")


def test_values_and_derivatives_match_jax() -> None:
    def tol(key: str, v: np.ndarray) -> float:
        return 1e-12 if v.dtype == np.complex128 else 1e-6

    assert_matches_recorded(cases(functrace), "complex_reductions_jax.npz", tol)


def _same(got: Any, want: Any) -> None:
    """Equal dtypes and shapes, and the real and imaginary parts equal (NaN included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(np.real(got), np.real(want))
    np.testing.assert_array_equal(np.imag(got), np.imag(want))


def _numpy(name: str, x: np.ndarray, **kw: Any) -> Any:
    if name in ("nanargmax", "nanargmin") and np.isnan(x).all(axis=kw.get("axis")).any():
        # NumPy raises for an all-NaN slice; functrace gives -1 there (its docstring)
        fill = -np.inf if name == "nanargmax" else np.inf
        r = getattr(np, name[3:])(np.where(np.isnan(x), fill, x), **kw)
        return np.where(
            np.isnan(x).all(axis=kw.get("axis"), keepdims=kw.get("keepdims", False)), -1, r
        )
    return getattr(np, name)(x, **kw)


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", NAMES + ARG_NAMES)
def test_numpy_values_eager_jit_and_vmap(name: str, dt: Any) -> None:
    x = X.astype(dt)
    f = getattr(fnp, name)
    want = _numpy(name, x, axis=1)
    _same(f(x, axis=1), want)
    _same(functrace.jit(lambda a: f(a, axis=1))(x), want)
    _same(functrace.vmap(f)(x), want)
    _same(
        functrace.vmap(lambda a: f(a, axis=0, keepdims=True), 1, 1)(x.T),
        _numpy(name, x, axis=1, keepdims=True).T,
    )


@pytest.mark.parametrize("name", NAMES + ARG_NAMES)
def test_axis_none_tuple_and_keepdims(name: str) -> None:
    x = np.stack([X[:2], X[:2] * 1j])  # NaNs in the second row of both halves
    f = getattr(fnp, name)
    axes = [None, -1, 0] if "arg" in name else [None, (0, 2), (1,)]
    for axis in axes:
        want = _numpy(name, x, axis=axis, keepdims=True)
        _same(functrace.jit(lambda a, axis=axis: f(a, axis=axis, keepdims=True))(x), want)


def test_ties_first_index_and_imaginary_parts_decide() -> None:
    z = np.array([[2 + 1j, 2 + 3j, 2 + 3j, -1 + 9j], [0j, -0.0 + 0j, 0 - 0j, -1e-300 + 0j]])
    for name in ("argmax", "argmin"):
        got = functrace.jit(getattr(fnp, name), static_argnums=1)(z, 1)
        np.testing.assert_array_equal(got, getattr(np, name)(z, axis=1))
    _same(functrace.jit(fnp.max)(z), np.max(z))
    # the gradient of a whole tie is shared, as for real arrays (JAX's values: the fixture)
    g = functrace.grad(lambda a: fnp.real(fnp.max(a[0])))(z)
    np.testing.assert_array_equal(g[0], [0, 0.5, 0.5, 0])


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
def test_where_and_initial(name: str) -> None:
    x = X[:2]
    mask = np.array([True, False, True, False, True])
    f = getattr(fnp, name)
    for initial in (0j, 1 + 2.5j, 3, -1 + 0j):
        want = getattr(np, name)(x, axis=1, where=mask, initial=initial)
        got = functrace.jit(lambda a, i=initial: f(a, axis=1, where=mask, initial=i))(x)
        _same(got, want)
        want = getattr(np, name)(x, axis=0, initial=initial)
        _same(functrace.vmap(lambda a, i=initial: f(a, initial=i), 1)(x), want)


def test_errors() -> None:
    empty = np.zeros((2, 0), np.complex64)
    for f in (fnp.max, fnp.ptp, fnp.nanmin):
        with pytest.raises(ValueError, match="non-empty array along the reduced axes"):
            functrace.jit(lambda a, f=f: f(a, axis=1))(empty)
    for f in (fnp.argmin, fnp.nanargmax):
        with pytest.raises(ValueError, match="non-empty array along the axis"):
            functrace.jit(lambda a, f=f: f(a, axis=1))(empty)
    with pytest.raises(ValueError, match="expected initial= with a where= mask"):
        functrace.jit(lambda a: fnp.max(a, where=a.real > 0))(Z)
    # JAX's lax.argmax refuses complex operands too; the message points to numpy's
    with pytest.raises(TypeError, match=r"argmax: .* got complex128.*functrace.numpy.argmax"):
        lax.argmax(Z, 1)
    with pytest.raises(TypeError, match=r"argmin: .* got complex64"):
        functrace.jit(lambda a: lax.argmin(a, 0))(Z.astype(np.complex64))


def test_reduce_max_inside_a_loop_and_empty_identity() -> None:
    # a scan body with a complex reduce_max (the native loop declines; the driver runs it)
    def body(c: Any, row: Any) -> Any:
        m = lax.reduce_max(row, (0,))
        return c + m, lax.reduce_min(row, (0,))

    c, ys = functrace.jit(lambda z: lax.scan(body, 0j, z))(Z)
    _same(c, np.max(Z, axis=1).sum())
    _same(ys, np.min(Z, axis=1))
    _same(functrace.vmap(lambda r: lax.reduce_max(r, (0,)))(Z[:, :0]), np.full(2, -np.inf + 0j))
