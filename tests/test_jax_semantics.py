"""JAX's semantics where a JAX program relies on them: integer ``lax.div``, NaN through
``relu``/``clip``/``log_ndtr``, ``cosh``/``sinh`` near overflow, ``stop_gradient`` on
pytrees, the ``jax_enable_x64`` switch, and JAX's device calls. Each is checked
eagerly and under ``jit`` (they must agree), against values JAX gives."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax, nn
from functrace.scipy import special


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # NumPy's x // 0
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_lax_div_rounds_toward_zero_and_floor_divide_floors(dtype) -> None:
    x = np.array([-7, 7, -7, 7, 0, -1, 6, 5], dtype)
    y = np.array([2, -2, -2, 2, 3, 3, -3, 0], dtype)
    trunc = np.array([-3, -3, 3, 3, 0, 0, -2, 0], dtype)  # JAX's lax.div (C's division)
    floor = np.floor_divide(x, y)
    for div in (lax.div, ft.jit(lax.div)):
        np.testing.assert_array_equal(div(x, y), trunc)
    # div * y + rem == x, as in JAX
    np.testing.assert_array_equal((trunc * y + lax.rem(x, y))[:-1], x[:-1])
    for fd in (fnp.floor_divide, ft.jit(fnp.floor_divide), ft.jit(lambda a, b: a // b)):
        np.testing.assert_array_equal(fd(x, y), floor)
    m = np.array([np.iinfo(dtype).min], dtype)
    np.testing.assert_array_equal(ft.jit(lax.div)(m, np.array([-1], dtype)), m)  # wraps


def test_nan_passes_relu_and_clip() -> None:
    x = np.array([np.nan, -1.0, 0.0, 0.5, 2.0])
    for f, want in [
        (nn.relu, [np.nan, 0.0, 0.0, 0.5, 2.0]),
        (lambda v: fnp.clip(v, 0.0, 1.0), [np.nan, 0.0, 0.0, 0.5, 1.0]),
        (lambda v: fnp.clip(v, None, 1.0), [np.nan, -1.0, 0.0, 0.5, 1.0]),
    ]:
        for g in (f, ft.jit(f), ft.vmap(f)):
            np.testing.assert_array_equal(g(x), want)
    # the derivatives at the kinks are unchanged: relu'(0) = 0, clip passes at its ends
    assert ft.grad(nn.relu)(0.0) == 0.0
    assert ft.grad(lambda v: fnp.clip(v, 0.0, 1.0))(1.0) == 1.0


def test_log_ndtr_of_nan_is_nan() -> None:
    x = np.array([np.nan, -50.0, 0.0, 3.0])
    for f in (special.log_ndtr, ft.jit(special.log_ndtr)):
        out = f(x)
        assert np.isnan(out[0]) and np.all(np.isfinite(out[1:]))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # NumPy's inf
@pytest.mark.parametrize("name", ["cosh", "sinh"])
def test_cosh_sinh_near_overflow_match_numpy(name: str) -> None:
    x = np.array([710.0, -710.0, 705.0, 3.0, -0.5, 0.0, 720.0])
    want = getattr(np, name)(x)
    f = getattr(fnp, name)
    for g in (f, ft.jit(f)):
        np.testing.assert_allclose(g(x), want, rtol=1e-15)
    d = ft.grad(f)(-705.0)  # no NaN from the other branch
    np.testing.assert_allclose(d, np.sinh(-705.0) if name == "cosh" else np.cosh(-705.0))


def test_stop_gradient_takes_pytrees() -> None:
    tree = {"w": np.ones(2), "b": 3.0}

    def loss(t):
        s = lax.stop_gradient(t)
        return (s["w"] * t["w"]).sum() + s["b"] * t["b"]

    g = ft.grad(loss)(tree)
    np.testing.assert_array_equal(g["w"], [1.0, 1.0])
    assert g["b"] == 3.0


def test_enable_x64_switch() -> None:
    ft.config.update("jax_enable_x64", True)  # the first line of many JAX programs
    assert ft.config.jax_enable_x64 is True
    with pytest.warns(UserWarning, match="enable_x64=False is ignored"):
        ft.config.update("jax_enable_x64", False)
    assert ft.config.read("enable_x64") is True


def test_device_calls() -> None:
    x = ft.device_put(np.arange(3.0))
    assert isinstance(x, ft.Array)
    np.testing.assert_array_equal(ft.jit(lambda v: ft.device_put(v) * 2)(x), [0.0, 2.0, 4.0])
    got = ft.device_get({"a": x, "b": 1})
    assert type(got["a"]) is np.ndarray and got["b"] == 1
    assert ft.block_until_ready(x) is x
    assert [d.platform for d in ft.devices()] == ["cpu"]
    assert ft.device_put(x, ft.devices()[0]) is x
    with pytest.raises(TypeError, match="device_put: expected device"):
        ft.device_put(x, 3)


# Recorded from jax.random.randint(jax.random.PRNGKey(2), (5,), lo, hi, dtype) (JAX 0.10.2):
# 8- and 16-bit integers are drawn as int32 within the dtype's range, then cast.
_RANDINT_SMALL = [
    ("uint8", 0, 10, [9, 2, 3, 3, 7]),
    ("uint8", 0, 256, [79, 124, 73, 191, 73]),
    ("int8", -200, 200, [-49, -4, -55, 63, -55]),
    ("int16", 0, 1000, [999, 492, 913, 503, 17]),
    ("uint16", 3, 70000, [12786, 37442, 8172, 22301, 11]),
]


@pytest.mark.parametrize("dtype,lo,hi,want", _RANDINT_SMALL)
def test_randint_small_dtypes_same_bits_as_jax(dtype, lo, hi, want) -> None:
    key = ft.random.PRNGKey(2)
    got = ft.random.randint(key, (5,), lo, hi, dtype=dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(want, dtype))
    jitted = ft.jit(lambda k, a, b: ft.random.randint(k, (5,), a, b, dtype=dtype))
    np.testing.assert_array_equal(jitted(key, np.int64(lo), np.int64(hi)), got)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own inf and NaN results
def test_float_floor_divide_under_jit_is_numpys_at_special_values() -> None:
    vals = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 7.0, -7.0, 2.5, -2.5, 1e300, 1e-300])
    x, y = (a.ravel() for a in np.meshgrid(vals, vals))
    want = np.floor_divide(x, y)
    for f in (ft.jit(lambda a, b: a // b), ft.vmap(fnp.floor_divide)):
        got = np.asarray(f(x, y))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # zeros' signs
    q, r = ft.jit(fnp.divmod)(np.array([np.inf, 7.0]), np.array([2.5, -2.0]))
    np.testing.assert_array_equal(q, [np.nan, -4.0])
    np.testing.assert_array_equal(r, [np.nan, -1.0])


def test_exact_gelu_in_the_far_left_tail() -> None:
    # jax.nn.gelu(-10.0, approximate=False) is -7.619853024160472e-23 (erfc, no cancellation)
    np.testing.assert_allclose(
        nn.gelu(-10.0, approximate=False), -7.619853024160472e-23, rtol=1e-12
    )
    np.testing.assert_allclose(
        ft.jit(lambda v: nn.gelu(v, approximate=False))(-10.0), -7.619853024160472e-23, rtol=1e-12
    )


def test_isinstance_array_holds_for_tracers_as_for_jax_array() -> None:
    seen = []

    def f(x):
        seen.append(isinstance(x, ft.Array))
        return x * 2

    ft.jit(f)(np.ones(2))
    ft.vmap(f)(np.ones((2, 3)))
    ft.grad(lambda x: f(x).sum())(np.ones(2))
    assert seen == [True, True, True]
    assert isinstance(fnp.ones(2), ft.Array)
    assert not isinstance(np.ones(2), ft.Array) and not isinstance(2.0, ft.Array)


def test_weakly_typed_loop_carries_take_the_bodys_dtype() -> None:
    # JAX promotes a Python-scalar initial carry to the dtype its body returns and
    # traces again (jax.lax.scan(body, 0, arange(3.)) -> 1.5, [0, 0, 0.5]); a strongly
    # typed one that changes dtype stays an error.
    def body(c, x):
        return c + x * 0.5, c

    for run in (lambda f: f(), lambda f: ft.jit(f)()):
        carry, ys = run(lambda: lax.scan(body, 0, fnp.arange(3.0)))
        assert np.asarray(carry).dtype == np.float64 and float(carry) == 1.5
        np.testing.assert_array_equal(ys, [0.0, 0.0, 0.5])
        assert float(run(lambda: lax.fori_loop(0, 3, lambda i, c: c + 1.5, 0))) == 4.5
        assert float(run(lambda: lax.while_loop(lambda c: c < 5, lambda c: c + 1.5, 0))) == 6.0
    a, b = lax.fori_loop(0, 3, lambda i, c: (c[0] + 0.5, c[1] + 1), (0, 0))
    assert (float(a), np.asarray(b).dtype.kind, int(b)) == (1.5, "i", 3)
    assert (
        float(ft.grad(lambda x: lax.scan(lambda c, _: (c + x * 2, None), 0, length=3)[0])(1.0))
        == 6.0
    )
    np.testing.assert_array_equal(
        ft.vmap(lambda x: lax.scan(lambda c, _: (c * x, None), 1, length=3)[0])(np.arange(3.0)),
        [0.0, 1.0, 8.0],
    )
    with pytest.raises(TypeError, match="scan: expected the carry"):
        lax.scan(body, np.int32(0), fnp.arange(3.0))


_PAD_MODES = [
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}),
    ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {}),
    ("linear_ramp", {"end_values": (3, -2)}),
    ("maximum", {"stat_length": 2}),
    ("minimum", {"stat_length": (1, 3)}),
    ("mean", {}),
    ("mean", {"stat_length": 2}),
    ("median", {"stat_length": (2, 1)}),
]


@pytest.mark.parametrize("mode,kw", _PAD_MODES, ids=lambda v: str(v))
def test_pad_modes_on_tracers_match_numpy(mode, kw) -> None:
    # Every mode JAX's pad has works on traced arrays (widths past the axis length
    # repeat NumPy's pattern); integer ramps and means round as NumPy does.
    rng = np.random.default_rng(0)
    for shape in [(5,), (1,), (3, 4)]:
        for x in (rng.standard_normal(shape), rng.integers(-9, 9, shape)):
            for pw in (2, (1, 3), 7):
                want = np.pad(x, pw, mode, **kw)
                for got in (
                    ft.jit(lambda a, pw=pw: fnp.pad(a, pw, mode, **kw))(x),
                    ft.vmap(lambda a, pw=pw: fnp.pad(a, pw, mode, **kw))(x[None])[0],
                ):
                    assert got.dtype == want.dtype and got.shape == want.shape
                    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_pad_gradients_and_empty_mode_match_jax() -> None:
    # jax.grad of sum(pad(x, 2, mode)) at these points (ties split evenly, as JAX's max)
    grad = lambda mode, x, **kw: ft.grad(lambda v: fnp.pad(v, 2, mode, **kw).sum())(x)  # noqa: E731
    np.testing.assert_allclose(grad("maximum", np.array([1.0, 3.0, 3.0, 2.0])), [1, 3, 3, 1])
    np.testing.assert_allclose(grad("median", np.array([1.0, 2.0, 3.0, 4.0])), [1, 3, 3, 1])
    np.testing.assert_allclose(
        grad("reflect", np.array([1.0, 2.0, 3.0, 4.0]), reflect_type="odd"), [5, -1, -1, 5]
    )
    np.testing.assert_allclose(grad("edge", np.array([1.0, 2.0, 3.0])), [3, 1, 3])
    # JAX fills mode="empty" with zeros
    np.testing.assert_array_equal(
        ft.jit(lambda v: fnp.pad(v, 2, mode="empty"))(np.arange(1.0, 4.0)), [0, 0, 1, 2, 3, 0, 0]
    )
    np.testing.assert_array_equal(fnp.pad(np.arange(1.0, 4.0), 1, mode="empty"), [0, 1, 2, 3, 0])
    with pytest.raises(ValueError, match="non-empty axis"):
        ft.jit(lambda v: fnp.pad(v, 1, mode="edge"))(np.zeros((0,)))


def test_reshape_and_ravel_in_fortran_order() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    for shape in [(4, 6), (6, -1), (24,), (2, 2, 2, 3)]:
        want = np.reshape(x, shape, order="F")
        np.testing.assert_array_equal(
            ft.jit(lambda a, s=shape: fnp.reshape(a, s, order="F"))(x), want
        )
        np.testing.assert_array_equal(ft.jit(lambda a, s=shape: a.reshape(s, order="F"))(x), want)
    np.testing.assert_array_equal(ft.jit(lambda a: a.ravel(order="F"))(x), np.ravel(x, order="F"))
    w = np.arange(24.0).reshape(4, 6)
    g = ft.grad(lambda a: (fnp.reshape(a, (4, 6), order="F") * w).sum())(x)
    np.testing.assert_array_equal(g, np.reshape(w, (2, 3, 4), order="F"))
    with pytest.raises(NotImplementedError, match="order 'C' or 'F'"):
        ft.jit(lambda a: a.reshape((4, 6), order="A"))(x)


# -- complex numbers: JAX's conventions where functrace differentiates them --------

_Z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 4.0j])


def _conj_gradient_fd(f, z, h=1e-6):
    # JAX's gradient of a real function of complex z: df/dx - i df/dy (the conjugate
    # of the Wirtinger-style df/dx + i df/dy), by central differences per entry.
    g = np.zeros(z.shape, complex)
    for i in np.ndindex(z.shape):
        e = np.zeros(z.shape)
        e[i] = h
        dx = (f(z + e) - f(z - e)) / (2 * h)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * h)
        g[i] = dx - 1j * dy
    return g


@pytest.mark.parametrize(
    "name",
    ["abs_squared", "abs", "cos_abs", "parts", "angle", "abs_times_constant"],
)
def test_grad_of_real_functions_of_complex_inputs(name) -> None:
    c = np.array([2.0, -1.5j, 0.5 + 0.5j])
    f = {
        "abs_squared": lambda z: fnp.sum(fnp.abs(z) ** 2),
        "abs": lambda z: fnp.sum(fnp.abs(z)),
        "cos_abs": lambda z: fnp.sum(fnp.cos(fnp.abs(z))),
        "parts": lambda z: fnp.sum(fnp.real(z) ** 2 + 3.0 * fnp.imag(z)),
        "angle": lambda z: fnp.sum(fnp.angle(z) * fnp.abs(z)),
        "abs_times_constant": lambda z: fnp.sum(fnp.abs(z * c) ** 2),
    }[name]
    want = _conj_gradient_fd(lambda z: float(f(z)), _Z)
    for g in (ft.grad(f), ft.jit(ft.grad(f))):
        np.testing.assert_allclose(g(_Z), want, rtol=1e-7, atol=1e-8)
    if name != "abs_times_constant":  # elementwise: the sum of per-example terms
        per_example = ft.vmap(ft.grad(lambda z: f(z[None])))(_Z)
        np.testing.assert_allclose(per_example, want, rtol=1e-7, atol=1e-8)


def test_complex_abs_derivatives_match_jax() -> None:
    # values JAX 0.10.2 gives
    np.testing.assert_allclose(ft.grad(lambda z: fnp.abs(z) ** 2)(1.0 + 2.0j), 2.0 - 4.0j)
    np.testing.assert_allclose(ft.grad(fnp.abs)(3.0 + 4.0j), 0.6 - 0.8j)
    for jvp in (ft.jvp, lambda f, p, t: ft.jit(lambda p: ft.jvp(f, (p,), t))(*p)):
        np.testing.assert_allclose(jvp(fnp.abs, (1.0 + 2.0j,), (1j,))[1], 2 / np.sqrt(5))
    np.testing.assert_allclose(
        ft.grad(lambda z: fnp.real(z) ** 2 + fnp.imag(z) ** 2)(3.0 + 4.0j), 6.0 - 8.0j
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ft.grad(fnp.sin)(1.0 + 2.0j), r"grad: expected real-valued outputs"),
        (lambda: ft.grad(lambda x: x**2 + 1j)(3.0), r"grad: expected real-valued outputs"),
        (lambda: ft.jacrev(fnp.sin)(1.0 + 2.0j), r"jacrev: expected real-valued outputs"),
        (lambda: ft.jacfwd(lambda z: z * z)(3.0 + 1.0j), r"jacfwd: expected real-valued inputs"),
        (lambda: ft.hessian(lambda z: fnp.abs(z))(3.0 + 1.0j), r"jacfwd: expected real-valued"),
    ],
)
def test_complex_outputs_of_grad_and_inputs_of_jacfwd_are_refused(call, match) -> None:
    # As JAX without holomorphic=True: a TypeError.
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize(
    "name",
    ["conjugate", "real", "imag", "angle", "round", "nan_to_num", "isfinite", "isinf", "isnan"],
)
def test_complex_parts_of_traced_arrays(name) -> None:
    z = np.array([1.26 + 2.51j, -3.5 + 0.5j, np.nan + 1j, np.inf - 2j, 1 - np.inf * 1j, 0j])
    f, ref = getattr(fnp, name), getattr(np, name)
    for g in (f, ft.jit(f), ft.vmap(f)):
        np.testing.assert_array_equal(np.asarray(g(z)), ref(z))
    np.testing.assert_array_equal(ft.jit(lambda v: fnp.round(v, 1))(z), np.round(z, 1))
    for b in (z + 1e-9, z[::-1]):
        for equal_nan in (False, True):
            close = ft.jit(lambda a, b, e=equal_nan: fnp.isclose(a, b, equal_nan=e))(z, b)
            np.testing.assert_array_equal(close, np.isclose(z, b, equal_nan=equal_nan))
