"""NumPy users' conventions: gradients at special points, and NumPy-style arguments.

* Gradient conventions (issue 8, item 4): ``abs`` at 0, ``x**0`` at 0, ``sqrt`` at 0,
  ``std``/``var`` of one element (and of a constant slice), ``max``/``maximum`` at
  ties; float32 in, float32 gradients out.
* Argument handling (item 3): (nested) lists of tracers as arrays, NumPy's own
  functions dispatching to tracer methods and ``__array_ufunc__`` under ``grad`` and
  ``make_jaxpr``, dtype arguments given as NumPy types and strings.
* Domain edges of the new composites (arcsin, arccosh, ...), where the derivative is
  the one-sided limit.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import TracerArrayConversionError
from functrace.ir import eval_jaxpr
from functrace.jit import jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = [np.float32, np.float64]


def _grad_is(f, x, expected, dtype) -> None:
    g = ft.grad(f)(dtype(x) if np.ndim(x) == 0 else np.asarray(x, dtype))
    assert np.asarray(g).dtype == np.dtype(dtype), f"gradient dtype {np.asarray(g).dtype}"
    np.testing.assert_array_equal(g, np.asarray(expected, dtype))


# ---------------------------------------------------------------------------
# Gradient conventions at special points
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_abs_at_zero_has_zero_gradient(dtype) -> None:
    _grad_is(fnp.abs, 0.0, 0.0, dtype)
    _grad_is(lambda x: abs(x), 0.0, 0.0, dtype)  # Tracer.__abs__
    _grad_is(lambda x: fnp.sum(fnp.absolute(x)), [0.0, -2.0, 3.0], [0.0, -1.0, 1.0], dtype)
    # the second derivative of |x| is 0 everywhere, 0 included
    _grad_is(ft.grad(fnp.abs), 0.0, 0.0, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_power_zero_at_zero_has_zero_gradient(dtype) -> None:
    # d/dx x**0 = 0 everywhere (also at 0, where 0 * 0**-1 would be NaN)
    _grad_is(lambda x: x**0, 0.0, 0.0, dtype)
    _grad_is(lambda x: fnp.power(x, 0), 0.0, 0.0, dtype)
    _grad_is(lambda x: fnp.power(x, 0.0), 0.0, 0.0, dtype)
    _grad_is(lambda x: x**0.0, 0.0, 0.0, dtype)
    _grad_is(lambda x: fnp.power(x, np.zeros((), dtype)), 0.0, 0.0, dtype)
    _grad_is(ft.grad(lambda x: x**0), 0.0, 0.0, dtype)
    # and the exponent's derivative 0**y * log(0) is taken as its limit 0
    g = ft.grad(lambda y: fnp.power(np.zeros((), dtype), y))(dtype(2.0))
    assert g == 0 and g.dtype == dtype


def test_power_value_at_zero_matches_numpy() -> None:
    assert fnp.power(0.0, 0) == np.power(0.0, 0) == 1.0
    assert ft.jvp(lambda x: x**0, (0.0,), (1.0,)) == (1.0, 0.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrt_at_zero_has_infinite_gradient(dtype) -> None:
    # documented convention (as in NumPy-based autodiff tools): d sqrt(x)/dx = +inf at 0
    g = ft.grad(fnp.sqrt)(dtype(0.0))
    assert np.isposinf(g) and g.dtype == dtype
    assert np.isposinf(ft.jvp(fnp.sqrt, (dtype(0.0),), (dtype(1.0),))[1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f",
    [fnp.std, fnp.var, lambda x: fnp.std(x, axis=0), lambda x: fnp.std(x, keepdims=True).sum()],
    ids=["std", "var", "std_axis", "std_keepdims"],
)
def test_std_var_of_one_element(f, dtype) -> None:
    x = np.array([2.5], dtype)
    out = f(x)
    assert np.asarray(out) == 0.0
    g = ft.grad(lambda x: fnp.sum(f(x)))(x)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g, np.zeros(1, dtype))
    # the value matches NumPy, traced too
    closed = ft.make_jaxpr(f)(x)
    assert np.asarray(eval_jaxpr(closed.jaxpr, closed.consts, [x])[0]) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_std_of_constant_slices_has_finite_gradient(dtype) -> None:
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], dtype)
    std = fnp.std(x, axis=1)
    np.testing.assert_allclose(std, np.std(x, axis=1), rtol=1e-6)
    g = ft.grad(lambda x: fnp.sum(fnp.std(x, axis=1)))(x)
    assert g.dtype == dtype and np.all(np.isfinite(g))
    np.testing.assert_array_equal(g[0], 0.0)
    # the non-constant row keeps the ordinary gradient (x - mean) / (n * std)
    row = x[1].astype(np.float64)
    np.testing.assert_allclose(g[1], (row - row.mean()) / (3 * row.std()), rtol=1e-5)
    # second order stays finite too
    h = ft.hessian(lambda r: fnp.std(r))(np.ones(3, dtype))
    assert np.all(np.isfinite(h))


def test_std_with_ddof_of_one_element_is_nan_like_numpy() -> None:
    # N - ddof = 0: NumPy's 0/0 = NaN, not a convention of ours
    assert np.isnan(fnp.std(np.array([1.0]), ddof=1))
    out = ft.make_jaxpr(lambda x: fnp.std(x, ddof=1))(np.array([1.0]))
    assert np.isnan(eval_jaxpr(out.jaxpr, out.consts, [np.array([1.0])])[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_maximum_at_a_tie_keeps_the_total_derivative(dtype) -> None:
    _grad_is(lambda x: fnp.maximum(x, x), 1.5, 1.0, dtype)
    _grad_is(lambda x: fnp.minimum(x, x), 1.5, 1.0, dtype)
    _grad_is(lambda x: fnp.fmax(x, x), 1.5, 1.0, dtype)
    # the tangent is shared equally between the tied operands
    gx, gy = ft.grad(lambda x, y: fnp.maximum(x, y), argnums=(0, 1))(dtype(2.0), dtype(2.0))
    assert (gx, gy) == (0.5, 0.5) and gx.dtype == dtype
    # forward mode agrees
    assert ft.jvp(lambda x: fnp.maximum(x, x), (dtype(1.0),), (dtype(1.0),))[1] == 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f",
    [fnp.max, fnp.amax, fnp.min, lambda x: x.max(), lambda x: np.max(x)],
    ids=["max", "amax", "min", "method", "np"],
)
def test_max_over_equal_entries_distributes_the_gradient(f, dtype) -> None:
    x = np.full(4, 3.0, dtype)
    g = ft.grad(f)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, np.full(4, 0.25, dtype))
    assert g.sum() == 1.0
    # partial ties along an axis: each slice's gradient sums to 1
    y = np.array([[1.0, 5.0, 5.0], [2.0, 2.0, 2.0]], dtype)
    gy = ft.grad(lambda y: fnp.sum(fnp.max(y, axis=1)))(y)
    np.testing.assert_allclose(gy, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_float32_gradients_stay_float32() -> None:
    x = np.linspace(-0.5, 0.5, 5, dtype=np.float32)
    for f in (
        fnp.arcsin,
        fnp.arccos,
        fnp.arctan,
        fnp.sinh,
        fnp.cosh,
        fnp.arcsinh,
        fnp.arctanh,
        fnp.exp2,
        fnp.sinc,
        fnp.cbrt,
        fnp.deg2rad,
        lambda x: fnp.hypot(x, 1.0),
        lambda x: fnp.logaddexp2(x, 0.5),
        lambda x: fnp.fmin(x, 0.1),
        lambda x: fnp.log2(x + 1),
        lambda x: fnp.log10(x + 1),
        lambda x: fnp.arccosh(x + 2),
        lambda x: fnp.nan_to_num(x),
        lambda x: fnp.diff(x),
        lambda x: fnp.gradient(x),
        lambda x: fnp.kron(x, x),
        lambda x: fnp.pad(x, 1, constant_values=2.0),
        lambda x: fnp.std(x),
        lambda x: fnp.trace(fnp.outer(x, x)),
        lambda x: fnp.triu(fnp.outer(x, x)),
    ):
        g = ft.grad(lambda x, f=f: fnp.sum(f(x)))(x)
        assert g.dtype == np.float32, f
        assert f(x).dtype == np.float32, f


# ---------------------------------------------------------------------------
# Domain edges of the new composites
# ---------------------------------------------------------------------------


def test_gradient_with_coordinate_arrays_on_tracers() -> None:
    # uneven coordinates (NumPy's and JAX's formula), plain or traced, under jit and vmap
    rng = np.random.default_rng(3)
    f = rng.normal(size=(4, 6))
    cx = np.array([0.0, 0.5, 2.0, 2.2, 4.0, 7.0])
    want = np.gradient(f, 0.5, cx)
    for got in (ft.jit(lambda a: fnp.gradient(a, 0.5, cx))(f), fnp.gradient(f, 0.5, cx)):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-13)
    np.testing.assert_allclose(
        ft.jit(lambda a, c: fnp.gradient(a, c, axis=1))(f, cx), want[1], rtol=1e-13
    )
    np.testing.assert_allclose(ft.vmap(lambda r: fnp.gradient(r, cx))(f), want[1], rtol=1e-13)
    np.testing.assert_allclose(
        ft.jit(lambda a: fnp.gradient(a, np.array([0.0, 4.0])))(f[0, :2]),
        [0.25 * (f[0, 1] - f[0, 0])] * 2,
    )
    ft.check_grads(lambda a, c: fnp.gradient(a, c, axis=1), (f, cx), order=2, modes=("fwd", "rev"))


def test_inverse_trig_domain_edges() -> None:
    assert ft.grad(fnp.arcsin)(1.0) == np.inf
    assert ft.grad(fnp.arcsin)(-1.0) == np.inf
    assert ft.grad(fnp.arccos)(1.0) == -np.inf
    assert ft.grad(fnp.arccosh)(1.0) == np.inf
    assert ft.grad(fnp.arctanh)(1.0) == np.inf
    assert ft.jvp(fnp.arcsin, (1.0,), (1.0,))[1] == np.inf
    assert float(fnp.arcsin(1.0)) == np.pi / 2
    assert np.isnan(ft.grad(fnp.arcsin)(1.5))  # outside the domain: NaN, as the value


def test_smooth_points_of_composites() -> None:
    # derivatives at 0 through the select-based |x| and the Taylor branch of sinc
    assert ft.grad(fnp.arcsinh)(0.0) == 1.0
    assert ft.grad(ft.grad(fnp.arcsinh))(0.0) == 0.0
    assert ft.grad(fnp.sinc)(0.0) == 0.0
    np.testing.assert_allclose(ft.grad(ft.grad(fnp.sinc))(0.0), -(np.pi**2) / 3, rtol=1e-12)
    ft.check_grads(fnp.sinc, (np.array([0.0, 1e-4, -2e-3, 0.7]),), order=2)
    ft.check_grads(fnp.arcsinh, (np.array([0.0, 1e-3, -2.0]),), order=2)


def test_composites_match_numpy_at_extremes() -> None:
    x = np.array([0.0, -0.0, 1e-300, 1e-8, -1e8, 1e200, -1e300, np.inf, -np.inf, np.nan])
    for name in (
        "arcsinh",
        "sinh",
        "cosh",
        "arctan",
        "sinc",
        "exp2",
        "cbrt",
        "signbit",
        "deg2rad",
        "nan_to_num",
    ):
        closed = ft.make_jaxpr(getattr(fnp, name))(x)
        with np.errstate(all="ignore"):
            got = eval_jaxpr(closed.jaxpr, closed.consts, [x])[0]
            np.testing.assert_allclose(got, getattr(np, name)(x), rtol=1e-12, err_msg=name)
    for name, pts in (
        ("arccosh", [1.0, 1 + 1e-12, 1e200, 0.5, -1e300, np.inf]),
        ("arcsin", [1.0, -1.0, 1 - 1e-12, 1.5, -np.inf]),
        ("arctanh", [1.0, -1.0, 0.5, 2.0]),
        ("log2", [8.0, 0.0, -1.0, np.inf]),
        ("log10", [1000.0, 1e-300, 0.0]),
    ):
        v = np.array(pts)
        closed = ft.make_jaxpr(getattr(fnp, name))(v)
        with np.errstate(all="ignore"):
            got = eval_jaxpr(closed.jaxpr, closed.consts, [v])[0]
            np.testing.assert_allclose(got, getattr(np, name)(v), rtol=1e-12, err_msg=name)
    big = np.array([3.0, 1e300, np.inf, 0.0, np.nan])
    closed = ft.make_jaxpr(fnp.hypot)(big, big[::-1])
    np.testing.assert_allclose(
        eval_jaxpr(closed.jaxpr, closed.consts, [big, big[::-1]])[0], np.hypot(big, big[::-1])
    )


def test_fmax_fmin_ignore_nan_in_value_and_gradient() -> None:
    x, y = np.array([1.0, np.nan, np.nan, 2.0]), np.array([np.nan, 3.0, np.nan, 1.0])
    for f, ref in ((fnp.fmax, np.fmax), (fnp.fmin, np.fmin)):
        closed = ft.make_jaxpr(f)(x, y)
        np.testing.assert_array_equal(eval_jaxpr(closed.jaxpr, closed.consts, [x, y])[0], ref(x, y))
    gx, gy = ft.grad(lambda x, y: fnp.nansum(fnp.fmax(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1, 0, 0, 1])
    np.testing.assert_array_equal(gy, [0, 1, 0, 0])


# ---------------------------------------------------------------------------
# NumPy-style arguments
# ---------------------------------------------------------------------------


def test_lists_of_tracers_are_arrays() -> None:
    x, y = np.float32(1.5), np.float32(-2.0)

    def f(x, y):
        a = fnp.array([x, y])
        b = fnp.array([[x, 1.0], [2.0, y]])  # mixed with Python scalars
        return (
            fnp.sum(a * a)
            + fnp.mean([x, x + 2])
            + fnp.sum([x, y, 3.0])
            + fnp.sum(fnp.stack([x, y]))
            + fnp.sum(b)
            + fnp.sum(fnp.sin([x, y]))
            + fnp.sum(fnp.maximum([x, y], 0.0))
            + fnp.sum(fnp.where([True, False], [x, y], 0.0))
        )

    gx, gy = ft.grad(f, argnums=(0, 1))(x, y)
    assert gx.dtype == gy.dtype == np.float32
    np.testing.assert_allclose(gx, 2 * x + 1 + 1 + 1 + 1 + np.cos(x) + 1 + 1, rtol=1e-6)
    np.testing.assert_allclose(gy, 2 * y + 1 + 1 + 1 + np.cos(y), rtol=1e-6)
    # the same under staging: one jaxpr, same value
    closed = ft.make_jaxpr(f)(x, y)
    np.testing.assert_allclose(
        eval_jaxpr(closed.jaxpr, closed.consts, [x, y])[0], f(x, y), rtol=1e-6
    )
    np.testing.assert_allclose(jit(f)(x, y), f(x, y), rtol=1e-6)


def test_array_of_tracers_follows_numpy_dtypes() -> None:
    x = np.float32(1.0)
    # a Python float in the list: NumPy makes the array float64 (array() has no weak scalars)
    out = ft.make_jaxpr(lambda x: fnp.array([x, 1.0]))(x)
    assert out.out_avals[0].dtype == np.array([x, 1.0]).dtype
    out = ft.make_jaxpr(lambda x: fnp.array([x, x], dtype="float64"))(x)
    assert out.out_avals[0].dtype == np.float64
    nested = ft.make_jaxpr(lambda x: fnp.array([[x, x], [x, x]]))(np.ones(3, np.float32))
    assert nested.out_avals[0].shape == (2, 2, 3)
    with pytest.raises(ValueError, match="equally shaped"):
        ft.grad(lambda x: fnp.sum(fnp.array([x, [x, x]])))(1.0)


def test_numpy_functions_dispatch_to_tracer_methods() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 7

    def f(x):
        return (
            np.sum(x)
            + np.mean(x)
            + np.max(x, axis=0).sum()
            + np.min(x)
            + np.prod(x + 1)
            + np.std(x)
            + np.var(x, ddof=1)
            + np.sum(x, axis=(0, 1), keepdims=True)[0, 0]
            + np.cumsum(x)[-1]
            + np.cumprod(x + 1, axis=1)[0, -1]
            + np.ptp(x)
            + np.clip(x, 0.1, 0.5).sum()
            + np.round(x, 2).sum()
            + np.transpose(x)[0, 1]
            + np.reshape(x, (3, 2))[2, 1]
            + np.squeeze(x[None])[1, 2]
            + np.swapaxes(x, 0, 1)[2, 0]
            + np.repeat(x, 2, axis=0).sum()
            + np.argmax(x)
            + np.any(x > 0.5)
            + np.all(x >= 0)
        )

    g = ft.grad(f)(x)
    assert g.dtype == np.float32
    ft.check_grads(
        lambda x: f(x),
        (x.astype(np.float64) + 0.01,),
        order=1,
        atol=1e-4,
        rtol=1e-3,
        modes=("rev",),
    )
    closed = ft.make_jaxpr(f)(x)
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, [x])[0], f(x), rtol=1e-5)
    np.testing.assert_allclose(jit(f)(x), f(x), rtol=1e-5)


def test_numpy_ufuncs_on_tracers() -> None:
    x = np.array([0.2, -0.4, 0.6])
    names = [
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "arcsinh",
        "arctanh",
        "exp2",
        "deg2rad",
        "rad2deg",
        "radians",
        "degrees",
        "square",
        "reciprocal",
        "conjugate",
        "cbrt",
        "fabs",
        "sin",
        "exp",
        "negative",
        "absolute",
        "sign",
        "rint",
    ]
    for name in names:
        ufunc = getattr(np, name)
        closed = ft.make_jaxpr(lambda x, u=ufunc: u(x))(x)
        np.testing.assert_allclose(
            eval_jaxpr(closed.jaxpr, closed.consts, [x])[0], ufunc(x), err_msg=name
        )
    binary = [
        "hypot",
        "logaddexp",
        "logaddexp2",
        "fmax",
        "fmin",
        "maximum",
        "arctan2",
        "copysign",
        "power",
        "remainder",
        "fmod",
        "true_divide",
        "float_power",
    ]
    for name in binary:
        ufunc = getattr(np, name)
        y = np.abs(x) + 0.1
        closed = ft.make_jaxpr(lambda x, u=ufunc, y=y: u(y, x))(x)
        np.testing.assert_allclose(
            eval_jaxpr(closed.jaxpr, closed.consts, [x])[0], ufunc(y, x), err_msg=name
        )
    # NumPy 2's short aliases are the same ufuncs
    assert ft.grad(lambda x: np.asin(x))(0.0) == 1.0
    assert ft.grad(lambda x: np.atan2(x, 1.0))(0.0) == 1.0
    # a reduction method of a ufunc
    assert ft.grad(lambda x: np.add.reduce(x * x))(np.ones(3)).tolist() == [2.0] * 3
    # out= of a ufunc is refused clearly (functrace never writes in place)
    with pytest.raises(TypeError, match="out="):
        ft.grad(lambda x: np.sin(x, out=np.empty(())))(1.0)
    with pytest.raises(TypeError, match="fnp.gcd"):
        ft.grad(lambda x: np.gcd(x, x))(1.0)


def test_every_numpy_ufunc_name_resolves_for_the_common_math() -> None:
    # every ufunc NumPy has that takes floats and gives floats maps to a function here
    # (integer-only bit ops, gcd/lcm, frexp/ldexp/nextafter/spacing and datetime ufuncs aside)
    skip = {
        "bitwise_count",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "left_shift",
        "right_shift",
        "gcd",
        "lcm",
        "frexp",
        "ldexp",
        "nextafter",
        "spacing",
        "isnat",
        "matvec",
        "vecmat",
        "vecdot",
    }
    missing = [
        n
        for n in dir(np)
        if isinstance(getattr(np, n), np.ufunc)
        and n not in skip
        and not hasattr(fnp, getattr(np, n).__name__)
    ]
    assert not missing, missing


def test_reduction_methods_accept_numpys_keywords() -> None:
    x = np.arange(6.0).reshape(2, 3)
    t = ft.make_jaxpr(
        lambda x: x.sum(axis=0, dtype=np.float32, out=None, keepdims=True, where=True)
    )(x)
    assert t.out_avals[0].shape == (1, 3) and t.out_avals[0].dtype == np.float32
    ft.make_jaxpr(lambda x: x.std(axis=1, dtype=None, out=None, ddof=1, keepdims=False))(x)
    ft.make_jaxpr(lambda x: x.max(axis=None, out=None, keepdims=False, initial=None))(x)
    ft.make_jaxpr(lambda x: x.mean(axis=(0, 1), dtype="float32", out=None))(x)
    # where= masks traced reductions too (JAX's); left-out elements get no gradient
    g = ft.grad(lambda x: np.sum(x**2, where=np.array([True, False, True])))(np.ones(3))
    np.testing.assert_array_equal(g, [2.0, 0.0, 2.0])
    x3 = np.array([1.0, -2.0, 3.0])
    assert ft.jit(lambda x: fnp.mean(x, where=x > 0))(x3) == 2.0
    with pytest.raises(ValueError, match=r"max: expected initial= with a where= mask"):
        ft.jit(lambda x: fnp.max(x, where=x > 0))(x3)
    with pytest.raises(ValueError, match=r"sum: expected a where= mask that broadcasts"):
        ft.jit(lambda x: fnp.sum(x, where=np.ones(2, bool)))(x3)
    with pytest.raises(TypeError, match="out=None"):
        ft.make_jaxpr(lambda x: fnp.sum(x, out=np.empty(())))(np.ones(3))
    # plain NumPy inputs still take every NumPy keyword
    assert fnp.sum(np.ones(3), where=np.array([True, False, True])) == 2.0
    assert fnp.std(np.array([1.0, 2.0, 3.0]), mean=np.float64(2.0)) == np.std([1.0, 2, 3])


def test_dtype_arguments_accept_numpy_types_and_strings() -> None:
    x = np.ones(3)

    def f(x):
        return [
            x.astype(np.float32),
            x.astype("float32"),
            fnp.astype(x, np.dtype("f4")),
            fnp.sum(x, dtype=np.float32),
            fnp.sum(x, dtype="float32"),
            fnp.mean(x, dtype="f4"),
            fnp.cumsum(x, dtype=np.float32),
            fnp.array([x, x], dtype="float32"),
            fnp.zeros(2, dtype="float32"),
            fnp.zeros_like(x, dtype=np.float32),
            fnp.full_like(x, 2, dtype="float32"),
        ]

    closed = ft.make_jaxpr(f)(x)
    assert all(a.dtype == np.float32 for a in closed.out_avals)
    g = ft.grad(lambda x: fnp.sum(x.astype(np.float32) * 2))(x)
    assert g.dtype == np.float64 and g.tolist() == [2.0] * 3
    assert fnp.sum(np.ones(3, np.int32), dtype="int64").dtype == np.int64


def test_numpy_conversion_of_a_tracer_explains_the_fix() -> None:
    # np.trace/np.diagonal convert to ndarray instead of calling the method: a clear error
    with pytest.raises(TracerArrayConversionError, match="functrace.numpy"):
        ft.grad(lambda x: np.trace(fnp.outer(x, x)))(np.ones(2))
    assert ft.grad(lambda x: fnp.outer(x, x).trace())(np.ones(2)).tolist() == [2.0, 2.0]


def test_clip_keywords() -> None:
    x = np.array([-2.0, 0.5, 3.0])
    for f in (
        lambda x: fnp.clip(x, a_min=0, a_max=1),
        lambda x: fnp.clip(x, min=0, max=1),
        lambda x: np.clip(x, 0, 1),
        lambda x: x.clip(0, 1),
        lambda x: x.clip(min=0, max=1),
    ):
        closed = ft.make_jaxpr(f)(x)
        np.testing.assert_array_equal(
            eval_jaxpr(closed.jaxpr, closed.consts, [x])[0], [0.0, 0.5, 1.0]
        )
        np.testing.assert_array_equal(ft.grad(lambda x, f=f: fnp.sum(f(x)))(x), [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="each bound once"):
        fnp.clip(x, a_min=0, min=0)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda x: fnp.pad(x, 1, mode="bogus"), ValueError, "expected mode to be one of"),
        (lambda x: fnp.pad(x, 1, mode=np.pad), NotImplementedError, "a callable mode"),
        (lambda x: fnp.pad(x, 1, mode="edge", constant_values=1), TypeError, "with mode='edge'"),
        (lambda x: fnp.pad(x, -1), ValueError, "non-negative"),
        (lambda x: fnp.pad(x, 1.5), TypeError, "integer pad widths"),
        (lambda x: fnp.gradient(x, edge_order=2), NotImplementedError, "edge_order=1"),
        (lambda x: fnp.gradient(x, np.arange(4.0)), ValueError, "or 3 coordinates"),
        (lambda x: fnp.gradient(x[:1]), ValueError, "at least 2 elements"),
        (lambda x: fnp.diag(fnp.zeros((2, 2, 2)) + x[0]), ValueError, "1-d or 2-d"),
        (lambda x: fnp.diagonal(x), ValueError, "at least 2 dimensions"),
        (lambda x: fnp.cross(x[:2], fnp.ones(4) * x[0]), ValueError, "2 or 3 components"),
        (lambda x: fnp.select([x], [x]), TypeError, "boolean conditions"),
        (lambda x: fnp.select([x > 0], [x, x]), ValueError, "as many conditions"),
        (lambda x: fnp.searchsorted(x, 1.0, side="middle"), ValueError, "'left' or 'right'"),
        (lambda x: fnp.meshgrid(x, x, indexing="yx"), ValueError, "'xy' or 'ij'"),
        (lambda x: fnp.rot90(fnp.outer(x, x), axes=(0, 0)), ValueError, "different axes"),
        (lambda x: fnp.fliplr(x), ValueError, "at least 2 dimensions"),
        (lambda x: fnp.diff(x, n=-1), ValueError, "non-negative order"),
        (lambda x: fnp.r_["r", x, x], NotImplementedError, "matrix directive"),
        (lambda x: fnp.sinc(x.astype(np.complex128)), NotImplementedError, "real traced"),
    ],
)
def test_errors_name_the_function_and_the_fix(call, error, match) -> None:
    with pytest.raises(error, match=match):
        ft.make_jaxpr(call)(np.array([0.1, 0.2, 0.3]))


def test_jax_keywords_of_creation_and_products() -> None:
    # placement keywords are accepted and place nothing (one device)
    assert fnp.zeros(3, device=None, out_sharding=None).shape == (3,)
    assert fnp.full_like(np.ones(2), 3.0, device=None).tolist() == [3.0, 3.0]
    assert fnp.arange(3, device=None).tolist() == [0, 1, 2]
    assert fnp.linspace(0.0, 1.0, 3, device=None).tolist() == [0.0, 0.5, 1.0]
    assert fnp.eye(2, device=None).shape == (2, 2)
    assert fnp.array([1.0], ndmin=3).shape == (1, 1, 1)
    with pytest.raises(TypeError, match="dtyp"):
        fnp.zeros(3, dtyp=float)
    # precision= is checked and preferred_element_type= sets the result dtype, as in dot
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    for f in (
        lambda x, y: fnp.tensordot(x, y.T, 1, precision="highest", preferred_element_type=float),
        lambda x, y: fnp.inner(x, y, preferred_element_type=np.float64),
        lambda x, y: fnp.vecdot(x, y, preferred_element_type=np.float64)[:, None],
    ):
        eager, jitted = f(a, a), ft.jit(f)(a, a)
        assert eager.dtype == jitted.dtype == np.float64
        np.testing.assert_array_equal(eager, jitted)
    assert fnp.vdot(a, a, preferred_element_type=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="precision"):
        fnp.inner(a, a, precision="bogus")
    # algorithm choices and hints of JAX's that change nothing here
    ss = fnp.searchsorted(np.arange(5.0), np.array([1.5, 3.0]), method="compare_all")
    assert ss.tolist() == [2, 3]
    with pytest.raises(ValueError, match="searchsorted: expected method"):
        fnp.searchsorted(np.arange(5.0), 1.0, method="bisect")
    t = ft.jit(
        lambda x: fnp.take(x, np.array([2, 0]), unique_indices=True, indices_are_sorted=False)
    )
    assert t(np.arange(3.0)).tolist() == [2.0, 0.0]
    assert fnp.reshape(np.arange(6), (2, 3), copy=True).shape == (2, 3)


def test_complex_sinh_cosh_exp2_log2_log10_under_transforms() -> None:
    # (complex inputs raised NotImplementedError under jit/vmap/grad; eager was NumPy's)
    rng = np.random.default_rng(0)
    z = rng.standard_normal(6) * 2 + 1j * rng.standard_normal(6) * 2
    z = np.concatenate([z, [1e-9 + 1e-9j, -3 + 0j, 40 + 2j]])
    derivative = {
        "sinh": np.cosh,
        "cosh": np.sinh,
        "exp2": lambda z: np.exp2(z) * np.log(2),
        "log2": lambda z: 1 / (z * np.log(2)),
        "log10": lambda z: 1 / (z * np.log(10)),
    }
    for name, d in derivative.items():
        f, ref = getattr(fnp, name), getattr(np, name)(z)
        np.testing.assert_allclose(ft.jit(f)(z), ref, rtol=1e-14, err_msg=name)
        np.testing.assert_allclose(ft.vmap(f)(z), ref, rtol=1e-14, err_msg=name)
        g = ft.vmap(ft.grad(f, holomorphic=True))(z)
        np.testing.assert_allclose(g, d(z), rtol=1e-7, err_msg=name)  # (cosh' near 0)
        z32 = z[:6].astype(np.complex64)
        got = ft.jit(f)(z32)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, getattr(np, name)(z32), rtol=1e-5, err_msg=name)


def _inverse_grid() -> np.ndarray:
    # small (relative accuracy), large (no overflow in z*z), near and on the cuts with
    # both signs of zero, +-1, +-i, 0, and infinities and NaN in either part
    mags = [0.0, 1e-300, 1e-10, 0.5, 0.999, 1.0, 1.001, 2.0, 1e10, 1e200, np.inf, np.nan]
    parts = np.array([s * a for a in mags for s in (1.0, -1.0)])
    re, im = np.meshgrid(parts, parts)
    z = np.empty(re.size, np.complex128)
    z.real, z.imag = re.ravel(), im.ravel()  # (re + 1j * im would lose the -0.0s)
    return z


_INVERSE_DERIVATIVES = {
    "arcsin": lambda z: 1 / np.sqrt(1 - z * z),
    "arccos": lambda z: -1 / np.sqrt(1 - z * z),
    "arctan": lambda z: 1 / (1 + z * z),
    "arcsinh": lambda z: 1 / np.sqrt(z * z + 1),
    "arccosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)),
    "arctanh": lambda z: 1 / (1 - z * z),
}


def _same_as_numpy(got, want, rtol: float, name: str) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype, name
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=name)


@pytest.mark.parametrize("name", sorted(_INVERSE_DERIVATIVES))
def test_complex_inverse_functions_under_transforms(name: str) -> None:
    # (complex inputs raised NotImplementedError under jit/vmap/grad.) NumPy's values,
    # with its branch cuts and the signs of zeros on them, infinities and NaN
    f = getattr(fnp, name)
    z = _inverse_grid()
    for dt, rtol in ((np.complex128, 1e-13), (np.complex64, 1e-5)):
        zd = z.astype(dt)
        want = getattr(np, name)(zd)
        _same_as_numpy(ft.jit(f)(zd), want, rtol, name)
        _same_as_numpy(ft.vmap(f)(zd), want, rtol, name)
        in_kernel = ft.jit(lambda z: f(fnp.conj(fnp.conj(z))))  # (fused with other code)
        _same_as_numpy(in_kernel(zd), want, rtol, name)
    # holomorphic derivatives of order 1 and 2, away from the cuts
    w = np.array([0.3 + 0.4j, -0.7 - 0.2j, 1.5 + 0.5j, -2 + 3j, 0.5 + 0j, 0.2 - 0.1j])
    d1 = _INVERSE_DERIVATIVES[name]
    g = ft.vmap(ft.grad(f, holomorphic=True))(w)
    np.testing.assert_allclose(g, d1(w), rtol=1e-13, err_msg=name)
    g2 = ft.vmap(ft.grad(ft.grad(f, holomorphic=True), holomorphic=True))(w)
    h = 1e-5  # central difference of the exact first derivative
    np.testing.assert_allclose(g2, (d1(w + h) - d1(w - h)) / (2 * h), rtol=1e-8, err_msg=name)
    _, t = ft.jvp(f, (w,), (np.full_like(w, 0.6 - 0.8j),))
    np.testing.assert_allclose(t, d1(w) * (0.6 - 0.8j), rtol=1e-13, err_msg=name)


def test_complex_log2_log10_at_zero_under_transforms() -> None:
    # log(0) = -inf + 0j divided part by part: a division by log(2) + 0j gave a NaN
    # imaginary part (inf * 0) under jit and vmap; -0 + 0j keeps its pi
    z = np.array([0j, complex(-0.0, 0.0), -2 + 0j])
    for name in ("log2", "log10"):
        want = getattr(np, name)(z)
        _same_as_numpy(ft.jit(getattr(fnp, name))(z), want, 1e-15, name)
        _same_as_numpy(ft.vmap(getattr(fnp, name))(z), want, 1e-15, name)
