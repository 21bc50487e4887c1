"""JAX's dtype semantics (values recorded from JAX 0.10.2 with x64 on, as literals):
saturating float-to-integer conversions, the rejection of strings and objects by
``asarray``, the scalar types (``fnp.float32(x)`` converts and returns an Array) and
lax's refusal to promote, eagerly as under ``jit``. Both kernel compilers' conversions
are compared bit for bit in ``tests/test_direct_kernels.py``."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import Array, dtypes, lax

# ---------------------------------------------------------------------------
# 1. Float-to-integer conversions saturate
# ---------------------------------------------------------------------------

_X = [np.nan, np.inf, -np.inf, 1e30, -1e30, 3.7, -3.7, -0.5, 127.5, 128.0, -129.0, 255.9]
_X += [2147483648.0, -2147483649.0, 9.3e18, 1.9e19, -1.0]
# jnp.asarray(_X).astype(dtype) in JAX 0.10.2 (also lax.convert_element_type and jit)
_JAX = {
    "int8": [0, 127, -128, 127, -128, 3, -3, 0, 127, 127, -128, 127, 127, -128, 127, 127, -1],
    "int16": [0, 32767, -32768, 32767, -32768, 3, -3, 0, 127, 128, -129, 255]
    + [32767, -32768, 32767, 32767, -1],
    "int32": [0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 3, -3, 0, 127, 128, -129, 255]
    + [2**31 - 1, -(2**31), 2**31 - 1, 2**31 - 1, -1],
    "int64": [0, 2**63 - 1, -(2**63), 2**63 - 1, -(2**63), 3, -3, 0, 127, 128, -129, 255]
    + [2147483648, -2147483649, 2**63 - 1, 2**63 - 1, -1],
    "uint8": [0, 255, 0, 255, 0, 3, 0, 0, 127, 128, 0, 255, 255, 0, 255, 255, 0],
    "uint16": [0, 65535, 0, 65535, 0, 3, 0, 0, 127, 128, 0, 255, 65535, 0, 65535, 65535, 0],
    "uint32": [0, 2**32 - 1, 0, 2**32 - 1, 0, 3, 0, 0, 127, 128, 0, 255]
    + [2147483648, 0, 2**32 - 1, 2**32 - 1, 0],
    "uint64": [0, 2**64 - 1, 0, 2**64 - 1, 0, 3, 0, 0, 127, 128, 0, 255]
    + [2147483648, 0, 9300000000000000000, 2**64 - 1, 0],
}


@pytest.mark.parametrize("dst", list(_JAX))
def test_float_to_int_saturates_eagerly_under_jit_and_vmap(dst) -> None:
    x = np.array(_X)
    want = np.array(_JAX[dst], dst)
    paths = {
        "dtypes.convert": lambda v: dtypes.convert(v, dst),
        "convert_element_type": lambda v: lax.convert_element_type(v, dst),
        "fnp.astype": lambda v: fnp.astype(v, dst),
        "Array.astype": lambda v: fnp.asarray(v).astype(dst),
        "jit": ft.jit(lambda v: v.astype(dst)),
        "jit fused": ft.jit(lambda v: (v * 1.0).astype(dst)),
        "vmap": ft.vmap(lambda v: fnp.astype(v, dst)),
        "jit(vmap)": ft.jit(ft.vmap(lambda v: lax.convert_element_type(v + 0.0, dst))),
    }
    for name, f in paths.items():
        got = np.asarray(f(x))
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), (name, got)
    for k in range(len(_X)):  # 0-d values, eager and jitted
        assert np.asarray(lax.convert_element_type(np.float64(_X[k]), dst)) == want[k]
        assert np.asarray(ft.jit(lambda v: v.astype(dst))(np.float64(_X[k]))) == want[k]


def test_float32_and_float16_sources_saturate() -> None:
    x32 = np.array([np.nan, 2147483648.0, -3e9, 1e20, 3.5], np.float32)
    want = [0, 2**31 - 1, -(2**31), 2**31 - 1, 3]  # JAX 0.10.2
    for f in (fnp.astype, ft.jit(fnp.astype, static_argnums=1)):
        assert np.asarray(f(x32, np.int32)).tolist() == want
    x16 = np.array([np.nan, np.inf, -np.inf, 65504.0, -300.0], np.float16)
    assert fnp.astype(x16, np.int8).tolist() == [0, 127, -128, 127, -128]
    assert fnp.astype(x16, np.uint16).tolist() == [0, 65535, 0, 65504, 0]
    assert fnp.astype(x16, np.int64).tolist() == [0, 2**63 - 1, -(2**63), 65504, -300]


def test_complex_to_int_takes_the_real_part_and_to_bool_is_nonzero() -> None:
    z = np.array([1j, 0j, 2.7 + 1j, np.nan + 0j, 1e30 + 0j])
    for f in (fnp.astype, ft.jit(fnp.astype, static_argnums=1)):
        assert np.asarray(f(z, np.int32)).tolist() == [0, 0, 2, 0, 2**31 - 1]
        assert np.asarray(f(z, bool)).tolist() == [True, False, True, True, True]
    # lax.convert_element_type to bool looks at the real part (as JAX's)
    assert lax.convert_element_type(z, np.bool_).tolist() == [False, False, True, True, True]


def test_conversions_keep_their_derivatives_and_other_conversions() -> None:
    x = np.array([0.5, -1.25, 3.0])
    g = ft.grad(lambda v: fnp.sum(v.astype(np.float32) * 2.0))(x)
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    # integers wrap, as in JAX (and NumPy)
    i = np.array([300, -200, 2**40])
    for f in (fnp.astype, ft.jit(fnp.astype, static_argnums=1)):
        assert np.asarray(f(i, np.int8)).tolist() == [44, 56, 0]
    assert fnp.astype(np.array([-1, 2**40]), np.uint16).tolist() == [65535, 0]
    # NaN to bool is True
    assert fnp.astype(np.array([np.nan, 0.0, -0.0]), bool).tolist() == [True, False, False]


def test_float_to_int_limits() -> None:
    assert dtypes.float_to_int_limits(np.dtype(np.int8)) == (-128.0, 128.0, -128, 127)
    assert dtypes.float_to_int_limits(np.dtype(np.uint64)) == (0.0, 2.0**64, 0, 2**64 - 1)


# ---------------------------------------------------------------------------
# 2. Strings and objects are not arrays
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "name", "given"),
    [
        (lambda: fnp.asarray("abc"), "asarray", "'abc'"),
        (lambda: fnp.array(["a", "b"]), "array", "list"),
        (lambda: fnp.asarray([1, "a"]), "asarray", "list"),
        (lambda: fnp.asarray(b"ab"), "asarray", "b'ab'"),
        (lambda: fnp.asarray(object()), "asarray", "object"),
        (lambda: fnp.asarray(None), "asarray", "NoneType"),
        (lambda: fnp.asarray(np.array([1, None], dtype=object)), "asarray", "ndarray"),
        (lambda: fnp.asarray(np.array([1.0, 2.0], dtype=object)), "asarray", "ndarray"),
        (lambda: ft.jit(lambda x: x + fnp.asarray("a"))(1.0), "asarray", "'a'"),
        (lambda: ft.grad(lambda x: fnp.sum(x * fnp.array(["1"])))(1.0), "array", "list"),
    ],
)
def test_asarray_rejects_strings_and_objects(fn, name, given) -> None:
    with pytest.raises(TypeError) as info:
        fn()
    msg = str(info.value)
    assert msg.startswith(f"{name}: expected an array of numbers or booleans")
    assert f"got {given}" in msg


def test_python_ints_beyond_int64_overflow_as_in_jax() -> None:
    # NumPy makes them an object array, which was reported as a "Python object";
    # JAX raises an OverflowError (jnp.array(2**70), a nested list, under jit too)
    cases = [
        (lambda: fnp.array(2**70), "array", "1180591620717411303424"),
        (lambda: fnp.asarray([[1, 2], [3, -(2**63) - 1]]), "asarray", "-9223372036854775809"),
        (lambda: ft.jit(lambda x: x + fnp.asarray([2**100]))(1.0), "asarray", "~2**100"),
    ]
    for fn, name, given in cases:
        with pytest.raises(OverflowError) as info:
            fn()
        msg = str(info.value)
        assert msg.startswith(f"{name}: expected Python ints within int64"), msg
        assert f"got {given}." in msg, msg
    assert fnp.asarray([2**63 - 1, -(2**63)]).dtype == np.int64


def test_traced_functions_reject_object_operands() -> None:
    with pytest.raises(TypeError, match="add: expected an array of numbers or booleans"):
        ft.jit(lambda x: fnp.add(x, np.array([1.0], dtype=object)))(np.ones(1))


def test_asarray_parses_a_string_with_a_numeric_dtype() -> None:
    a = fnp.asarray("1.5", dtype=fnp.float32)  # as JAX
    assert type(a) is Array and a.dtype == np.float32 and float(a) == 1.5
    assert fnp.asarray(np.zeros(2, dtypes.float0)).dtype == dtypes.float0


# ---------------------------------------------------------------------------
# 3. Scalar types convert and return Arrays
# ---------------------------------------------------------------------------


def test_scalar_types_return_zero_d_arrays() -> None:
    for t, x, want in [
        (fnp.float32, 1.5, np.float32(1.5)),
        (fnp.int32, 2.7, np.int32(2)),
        (fnp.bool_, 2.0, np.bool_(True)),
        (fnp.uint8, 255, np.uint8(255)),
        (fnp.float64, 2**60, np.float64(2**60)),
        (fnp.complex64, 1 + 2j, np.complex64(1 + 2j)),
        (fnp.float32, "1.5", np.float32(1.5)),
    ]:
        a = t(x)
        assert type(a) is Array and a.shape == () and a.dtype == want.dtype and a == want
    a = fnp.float32([1, 2])
    assert type(a) is Array and a.dtype == np.float32 and a.tolist() == [1.0, 2.0]


def test_scalar_types_saturate_arrays_and_check_python_scalars() -> None:
    # JAX 0.10.2 gives [0, 2147483647] for its own arrays (NumPy's INT_MIN for NumPy
    # arrays, where functrace saturates too)
    for x in (np.array([np.nan, 1e20]), fnp.array([np.nan, 1e20])):
        assert fnp.int32(x).tolist() == [0, 2**31 - 1]
    assert fnp.int32(np.float64(np.nan)) == 0
    with pytest.raises(OverflowError):
        fnp.int8(300)  # as JAX (NumPy's check of a Python int)
    with pytest.raises(OverflowError):
        fnp.uint8(-1)
    with pytest.raises(ValueError):
        fnp.int32(float("nan"))


def test_scalar_types_cast_traced_values() -> None:
    x = np.array([1.5, np.nan, -2.5])
    for f in (ft.jit(lambda v: fnp.int32(v)), ft.vmap(lambda v: fnp.int32(v))):
        assert np.asarray(f(x)).tolist() == [1, 0, -2]
    assert ft.grad(lambda v: fnp.float32(v) * 2)(3.0) == 2.0  # JAX: 2.0
    assert ft.jit(lambda v: fnp.float32(2.5) * v)(np.float32(2)).dtype == np.float32
    jaxpr = str(ft.make_jaxpr(lambda v: fnp.float32(v))(1.0))
    assert "convert_element_type[new_dtype=float32, weak_type=False]" in jaxpr


def test_scalar_types_are_dtype_arguments() -> None:
    assert fnp.float32 is not np.float32  # documented: they are JAX's scalar types
    assert fnp.float32 == np.float32 and np.float32 == fnp.float32
    assert {np.float32: 1}[fnp.float32] == 1 and fnp.float32 in {np.float32}
    assert np.dtype(fnp.float32) == np.float32 and fnp.float32.dtype == np.float32
    assert fnp.zeros(3, fnp.float32).dtype == np.float32
    assert fnp.asarray([1.0]).astype(fnp.int8).dtype == np.int8
    assert np.ones(2).astype(fnp.uint16).dtype == np.uint16
    assert ft.jit(lambda v: v.astype(fnp.float32))(np.ones(2)).dtype == np.float32
    assert fnp.issubdtype(fnp.float32, fnp.floating) and fnp.issubdtype(np.int8, fnp.int8)
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps
    assert fnp.iinfo(fnp.int16).max == 32767
    assert fnp.result_type(fnp.float32, 2.0) == np.float32
    assert isinstance(np.float32(1), fnp.float32) and not isinstance(1.0, fnp.float32)
    assert repr(fnp.float32) == "<class 'functrace.numpy.float32'>"
    assert fnp.double is fnp.float64 and fnp.bool is fnp.bool_


# ---------------------------------------------------------------------------
# 4. lax does not promote, eagerly as under jit
# ---------------------------------------------------------------------------

_I32 = np.array([1, 2, 3], np.int32)
_F32 = np.array([1.0, 2.0, 3.0], np.float32)
_F64 = np.array([1.0, 2.0, 3.0])
_B = np.array([True, False, True])


@pytest.mark.parametrize(
    "fn",
    [
        lambda: lax.add(_I32, _F32),
        lambda: lax.add(_F32, _F64),
        lambda: lax.mul(_F32, _F64),
        lambda: lax.max(_I32, _F32),
        lambda: lax.ne(np.array([1, 2]), np.array([1.0, 3.0])),
        lambda: lax.atan2(_F32, _F64),
        lambda: lax.nextafter(_F32, _F64),
        lambda: lax.shift_left(_I32, np.array([1, 1, 1])),
        lambda: lax.div(np.float64(7.0), 2),
        lambda: lax.add(2, 3.5),
        lambda: lax.add(np.float32(1.0), 2.0),
        lambda: lax.select(_B, _I32, _F32),
        lambda: lax.clamp(0, _F32, 2.5),
        lambda: lax.clamp(np.float64(0), _F32, np.float64(2.5)),
        lambda: lax.clamp(0.5, _I32, 2.5),
    ],
)
def test_lax_rejects_mixed_dtypes_eagerly_and_under_jit(fn) -> None:
    # each a TypeError in JAX 0.10.2 ("requires arguments to have the same dtypes")
    with pytest.raises(TypeError, match="expected operands of equal dtype"):
        fn()
    with pytest.raises(TypeError, match="expected operands of equal dtype"):
        ft.jit(fn)()


def test_lax_equal_dtypes_still_work() -> None:
    np.testing.assert_array_equal(lax.add(_F32, _F32), [2.0, 4.0, 6.0])
    assert lax.add(2, 3) == 5
    np.testing.assert_array_equal(lax.select(_B, _F32, _F32 * 2), [1.0, 4.0, 3.0])
    f = np.float32
    np.testing.assert_array_equal(lax.clamp(f(1.5), _F32, f(2.5)), [1.5, 2.0, 2.5])
    assert lax.clamp(f(1.5), _F32, f(2.5)).dtype == np.float32


def test_lax_div_of_python_ints_rounds_toward_zero() -> None:
    # JAX 0.10.2: lax.div(7, -2) == lax.div(-7, 2) == -3 (int64), lax.rem(-7, 2) == -1
    for div in (lax.div, ft.jit(lax.div)):
        for x, y, want in [(7, -2, -3), (-7, 2, -3), (7, 2, 3), (-7, -2, 3)]:
            r = div(x, y)
            assert np.asarray(r).dtype == np.int64 and r == want
    assert lax.div(7.0, 2.0) == 3.5
    assert lax.rem(-7, 2) == -1


def test_lax_elementwise_broadcasts_0d_and_size_1_operands_as_jax() -> None:
    # JAX 0.10.2's lax: 0-d operands (Python scalars too) and axes of size 1 among
    # operands of one rank broadcast; ranks otherwise differ -> an error; select's cases
    # keep one shape (only its predicate may be 0-d); clamp's bounds are 0-d or x's shape
    col, row = np.array([[1.0], [2.0]]), np.array([[10.0, 20.0, 30.0]])
    cases = [
        (lambda: lax.add(_F32, np.float32(2.0)), np.array([3.0, 4.0, 5.0], np.float32)),
        (lambda: lax.mul(col, row), col * row),
        (lambda: lax.max(col, 1.5), np.maximum(col, 1.5)),
        (lambda: lax.lt(_F32, np.float32(2.0)), _F32 < 2),
        (lambda: lax.select(True, _F32, _F32 * 2), _F32),
        (lambda: lax.bitwise_and(_B[None], np.array([[True]])), _B[None]),
        (lambda: lax.nextafter(np.float32(1.0), _F32).shape, (3,)),
        (lambda: lax.complex(_F32, np.float32(1.0)), _F32 + 1j),
        (lambda: lax.igamma(2.0, np.array([1.0, 2.0])), [0.2642411176571153, 0.5939941502901619]),
    ]
    for fn, want in cases:
        for run in (fn, ft.jit(fn)):
            got = run()
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
            if hasattr(want, "dtype"):
                assert np.asarray(got).dtype == want.dtype
    # the broadcast operand's gradient sums over what it was broadcast to (also in vmap)
    g = ft.grad(lambda a, b: lax.mul(a, b).sum(), argnums=(0, 1))(col, row)
    np.testing.assert_allclose(g[0], [[60.0], [60.0]])
    np.testing.assert_allclose(g[1], [[3.0, 3.0, 3.0]])
    np.testing.assert_allclose(ft.vmap(lambda x: lax.add(x, 1.0))(col), col + 1)
    with pytest.raises(ValueError, match="expected operands of equal shape"):
        lax.add(_F32, np.ones((2, 3), np.float32))
    for fn in (
        lambda: lax.select(_B, _F32, np.float32(0.0)),
        lambda: lax.add(_F32, np.ones(2, np.float32)),
    ):
        with pytest.raises(ValueError, match="expected operands of equal shape"):
            fn()
        with pytest.raises(ValueError, match="expected operands of equal shape"):
            ft.jit(fn)()


def test_lax_pow_of_a_float_base_and_an_integer_exponent_as_jax() -> None:
    # JAX 0.10.2 (x64): the base's dtype, the bits of x * x for n = 2, eager and jit alike
    x = np.array([0.1, -0.2, 1.5], np.float32)
    n = np.array([2, 3, -1], np.int32)
    want2 = [0.010000000707805157, 0.04000000283122063, 2.25]
    wantn = [0.010000000707805157, -0.00800000037997961, 0.6666666865348816]
    for run in (lambda f: f(x), lambda f: ft.jit(f)(x)):
        for f, want in ((lambda v: lax.pow(v, 2), want2), (lambda v: lax.pow(v, n), wantn)):
            got = run(f)
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, np.float32(want))
    g = ft.grad(lambda v: lax.pow(v, 3).sum())(x)
    np.testing.assert_array_equal(g, np.float32([0.030000001192092896, 0.12000000476837158, 6.75]))
    g = ft.jit(ft.grad(lambda v: lax.pow(v, n).sum()))(x)
    np.testing.assert_allclose(g, [0.2, 0.12, -0.4444444477558136], rtol=1e-6)
    assert float(ft.hessian(lambda v: lax.pow(v, 3))(np.float32(2.0))) == 12.0
    z = lax.pow(x.astype(np.complex64), 3)
    assert z.dtype == np.complex64
    np.testing.assert_allclose(z, x.astype(np.complex128) ** 3, rtol=1e-6)
    for bad in (lambda: lax.pow(x, 2.0), lambda: lax.pow(n, x)):
        with pytest.raises(TypeError, match="pow: expected operands of equal dtype"):
            bad()
        with pytest.raises(TypeError, match="pow: expected operands of equal dtype"):
            ft.jit(bad)()
