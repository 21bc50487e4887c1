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
