"""Autodiff: transforms, composition, custom rules, hooks, conventions and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import functrace as ft
import functrace.numpy as fnp
from functrace.testing import numerical_grad

# -- the PyTorch tutorial numbers ----------------------------------------------


def test_pytorch_numbers() -> None:
    dx, dy = ft.grad(lambda x, y: x * y + x**2, argnums=(0, 1))(2.0, 3.0)
    assert (dx, dy) == (7.0, 2.0)
    assert ft.grad(lambda x: (x * 2) ** 2)(3.0) == 24.0

    @ft.custom_vjp
    def relu(x):
        return fnp.maximum(x, 0.0)

    relu.defvjp(lambda x: (relu(x), x), lambda x, ct: (ct * (x > 0),))
    g = ft.grad(lambda x: relu(x).sum())(np.array([1.0, -2.0, 3.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])

    def branchy(x):
        if x > 0:
            return x**2
        return -x

    assert ft.grad(branchy)(-3.0) == -1.0
    assert ft.grad(branchy)(3.0) == 6.0
    acc = ft.grad(lambda x: x**2)(1.0) + ft.grad(lambda x: x**3)(1.0)
    assert acc == 5.0


# -- composition matrix --------------------------------------------------------

FUNCS = {
    "poly": lambda x: fnp.sum(x**3 - 2.0 * x**2 + x),
    "trig": lambda x: fnp.sum(fnp.sin(x) * fnp.cos(2.0 * x)),
    "exp_log": lambda x: fnp.sum(fnp.log1p(fnp.exp(x)) / (1.0 + x * x)),
    "tanh_mean": lambda x: fnp.mean(fnp.tanh(x) * x),
    "fanout": lambda x: fnp.sum(x * x * x + fnp.sqrt(x * x + 1.0)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_composition_matrix(name: str) -> None:
    f = FUNCS[name]
    x = np.array([0.3, -1.2, 0.7])
    g = ft.grad(f)(x)
    g_num = numerical_grad(f, (x,))[0]
    np.testing.assert_allclose(g, g_num, rtol=1e-6, atol=1e-8)
    # vjp, jvp, jacfwd, jacrev agree with grad
    _, f_vjp = ft.vjp(f, x)
    np.testing.assert_allclose(f_vjp(1.0)[0], g, rtol=1e-12)
    t = np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(ft.jvp(f, (x,), (t,))[1], g @ t, rtol=1e-10)
    np.testing.assert_allclose(ft.jacrev(f)(x), g, rtol=1e-12)
    np.testing.assert_allclose(ft.jacfwd(f)(x), g, rtol=1e-10)
    # second order: hessian == jacfwd(grad) == jacrev(grad) == grad(grad) on diagonal
    H = ft.hessian(f)(x)
    H_num = np.stack([numerical_grad(lambda y, i=i: ft.grad(f)(y)[i], (x,))[0] for i in range(3)])
    np.testing.assert_allclose(H, H_num, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ft.jacrev(ft.grad(f))(x), H, rtol=1e-10, atol=1e-12)
    # forward-over-reverse Hessian-vector product
    hvp = ft.jvp(ft.grad(f), (x,), (t,))[1]
    np.testing.assert_allclose(hvp, H @ t, rtol=1e-10, atol=1e-12)
    ft.check_grads(f, (x,), order=2)


@given(st.floats(-2, 2), st.floats(-2, 2))
def test_grad_of_grad_scalar(a: float, b: float) -> None:
    f = lambda x, y: fnp.sin(x * y) + x**3 * y  # noqa: E731
    d2 = ft.grad(ft.grad(f, 0), 1)(a, b)
    expected = np.cos(a * b) - a * b * np.sin(a * b) + 3 * a**2
    np.testing.assert_allclose(d2, expected, rtol=1e-9, atol=1e-9)


def test_no_perturbation_confusion() -> None:
    assert ft.grad(lambda x: ft.grad(lambda y: x * y)(1.0))(1.0) == 1.0
    # the classic: d/dx (x * d/dy (x + y)) = 1
    assert ft.grad(lambda x: x * ft.grad(lambda y: x + y)(1.0))(2.0) == 1.0


def test_grad_of_function_calling_vjp() -> None:
    def f(x):
        _, f_vjp = ft.vjp(fnp.sin, x)
        return f_vjp(1.0)[0] * x  # cos(x) * x

    x = 0.7
    np.testing.assert_allclose(ft.grad(f)(x), np.cos(x) - x * np.sin(x), rtol=1e-12)


def test_argnums_has_aux_value_and_grad() -> None:
    def loss(w, b, x):
        y = w * x + b
        return fnp.sum(y**2), {"pred": y}

    x = np.array([1.0, 2.0])
    (val, aux), (gw, gb) = ft.value_and_grad(loss, argnums=(0, 1), has_aux=True)(0.5, 1.0, x)
    y = 0.5 * x + 1.0
    assert val == pytest.approx(np.sum(y**2))
    np.testing.assert_allclose(aux["pred"], y)
    assert isinstance(aux["pred"], np.ndarray)
    assert gw == pytest.approx(np.sum(2 * y * x)) and gb == pytest.approx(np.sum(2 * y))
    g, aux2 = ft.grad(loss, has_aux=True)(0.5, 1.0, x)
    assert g == pytest.approx(gw)


def test_pytree_gradients() -> None:
    params = {"w": np.array([1.0, 2.0]), "b": 0.5, "layers": [np.ones(2), (3.0,)]}

    def f(p):
        return fnp.sum(p["w"] * p["layers"][0]) * p["b"] + p["layers"][1][0] ** 2

    g = ft.grad(f)(params)
    np.testing.assert_allclose(g["w"], [0.5, 0.5])
    assert g["b"] == pytest.approx(3.0) and g["layers"][1][0] == pytest.approx(6.0)
    np.testing.assert_allclose(g["layers"][0], [0.5, 1.0])


def test_fanout_and_broadcasting_cotangents() -> None:
    x = np.array([1.0, 2.0, 3.0])
    # x used three times, and a scalar broadcast against a vector
    g = ft.grad(lambda x, s: fnp.sum(x * s + x * x + s), argnums=(0, 1))(x, 2.0)
    np.testing.assert_allclose(g[0], 2.0 + 2 * x)
    assert g[1] == pytest.approx(x.sum() + 3)
    w = np.ones((3, 1))
    gw = ft.grad(lambda w: fnp.sum(w * np.ones((3, 4))))(w)
    np.testing.assert_allclose(gw, np.full((3, 1), 4.0))


def test_linearize_matches_jvp() -> None:
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    x = np.array([0.1, 0.2])
    out, f_jvp = ft.linearize(f, x)
    t = np.array([1.0, -1.0])
    np.testing.assert_allclose(out, f(x))
    np.testing.assert_allclose(f_jvp(t), ft.jvp(f, (x,), (t,))[1])


def test_vjp_fn_reusable_and_validates() -> None:
    out, f_vjp = ft.vjp(lambda x: x * 2.0, np.ones(3))
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], 2 * np.ones(3))
    np.testing.assert_allclose(f_vjp(np.arange(3.0))[0], 2 * np.arange(3.0))
    with pytest.raises(ValueError, match=r"vjp: expected a cotangent of shape \(3,\)"):
        f_vjp(np.ones(4))
    with pytest.raises(TypeError, match="vjp: expected a cotangent of dtype float64"):
        f_vjp(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="pytree structure mismatch"):
        f_vjp((np.ones(3),))


def test_concrete_control_flow_under_grad() -> None:
    def f(x, n):
        out = x
        for _ in range(int(n)):
            out = out * x
        if float(out) > 100.0 or bool((out > 1e9).any()) or out.item() < -1:
            return out * 0.0
        return out

    assert ft.grad(f)(2.0, 2) == pytest.approx(12.0)
    assert ft.grad(f)(5.0, 3) == 0.0


def test_stop_gradient() -> None:
    assert ft.grad(lambda x: x * ft.stop_gradient(x))(3.0) == 3.0
    g = ft.grad(lambda p: fnp.sum(ft.stop_gradient(p)["a"] * p["b"]))({"a": 2.0, "b": 3.0})
    assert g == {"a": 0.0, "b": 2.0}


def test_grad_hook_prints_and_replaces() -> None:
    seen = []

    def f(x):
        h = ft.grad_hook(x * 2.0, lambda ct: seen.append(float(ct)))
        return h**2

    assert ft.grad(f)(3.0) == 24.0 and seen == [12.0]

    def clipped(x):
        h = ft.grad_hook(x * 2.0, lambda ct: fnp.clip(ct, -1.0, 1.0))
        return h**2

    assert ft.grad(clipped)(3.0) == 2.0


def test_custom_jvp_softplus_and_composition() -> None:
    @ft.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * ft.lax.logistic(x)

    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(ft.grad(lambda x: softplus(x).sum())(x), 1 / (1 + np.exp(-x)))
    ft.check_grads(lambda x: softplus(x), (x,), order=2)
    # the rule is used (big x: naive log1p(exp(x)) overflows, the rule does not)
    assert ft.grad(softplus)(1000.0) == 1.0


def test_custom_vjp_nondiff_and_errors() -> None:
    from functools import partial

    @partial(ft.custom_vjp, nondiff_argnums=(0,))
    def scale(k, x):
        return k * x

    scale.defvjp(lambda k, x: (scale(k, x), None), lambda k, res, ct: (k * ct,))
    assert ft.grad(lambda x: scale(3.0, x))(2.0) == 3.0

    @ft.custom_vjp
    def bad(x):
        return x * 2.0

    bad.defvjp(lambda x: (bad(x), None), lambda res, ct: ct)
    with pytest.raises(TypeError, match=r"bwd of 'bad'.*tuple"):
        ft.grad(bad)(1.0)

    @ft.custom_vjp
    def bad_shape(x):
        return x * 2.0

    bad_shape.defvjp(lambda x: (bad_shape(x), None), lambda res, ct: (np.ones(5),))
    with pytest.raises(ValueError, match=r"bwd of 'bad_shape'.*shape \(3,\)"):
        ft.grad(lambda x: bad_shape(x).sum())(np.ones(3))
    with pytest.raises(TypeError, match="custom_vjp function"):
        ft.jvp(bad_shape, (1.0,), (1.0,))


def test_custom_vjp_composes_with_grad_of_grad() -> None:
    @ft.custom_vjp
    def cube(x):
        return x**3

    cube.defvjp(lambda x: (cube(x), x), lambda x, ct: (3.0 * x**2 * ct,))
    assert ft.grad(ft.grad(cube))(2.0) == pytest.approx(12.0)


# -- conventions at kinks ------------------------------------------------------


def test_kink_conventions() -> None:
    assert ft.grad(lambda x: fnp.maximum(x, 0.0))(0.0) == 0.5  # relu at 0: tie splits
    assert ft.grad(fnp.abs)(0.0) == 0.0
    assert ft.grad(lambda x: x**0)(0.0) == 0.0
    assert ft.grad(lambda x: fnp.maximum(x, x))(1.5) == 1.0  # total derivative at ties
    assert ft.grad(lambda x: fnp.clip(x, 0.0, 1.0))(1.0) == 1.0


def test_where_nan_safe_pattern() -> None:
    # the unsafe version: log of a negative number in the untaken branch poisons the grad
    unsafe = ft.grad(lambda x: fnp.where(x > 0, fnp.log(fnp.abs(x) * 0 + x), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.isnan(unsafe(-1.0)) or unsafe(-1.0) == 0.0

    def safe(x):
        safe_x = fnp.where(x > 0, x, 1.0)
        return fnp.where(x > 0, fnp.log(safe_x), 0.0)

    assert ft.grad(safe)(-1.0) == 0.0
    assert ft.grad(safe)(2.0) == pytest.approx(0.5)


# -- errors -------------------------------------------------------------------


def test_error_nonscalar_output() -> None:
    with pytest.raises(TypeError, match=r"shape \(3,\).*\.sum\(\).*jacrev"):
        ft.grad(lambda x: x * 2.0)(np.ones(3))


def test_error_integer_input() -> None:
    with pytest.raises(TypeError, match=r"int64.*allow_int.*vjp"):
        ft.grad(lambda x: x * 2.0)(np.arange(3))
    g = ft.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    from functrace.dtypes import float0

    assert g[0] == 3.0 and g[1].dtype == float0


def test_error_jvp_tangent_mismatch() -> None:
    with pytest.raises(ValueError, match=r"jvp: expected tangent leaf 0 of shape \(3,\)"):
        ft.jvp(fnp.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="jvp: expected tangent leaf 0 of dtype float64"):
        ft.jvp(fnp.sin, (np.ones(3),), (np.ones(3, np.float32),))
    with pytest.raises(ValueError, match="pytree structure mismatch"):
        ft.jvp(lambda a, b: a * b, (1.0, 2.0), (1.0,))
    # an integer or boolean primal takes a float0 tangent only, as in JAX: a float one
    # was dropped (a zero output tangent instead of cos(x) * t)
    from functrace.dtypes import float0

    for primal, tangent in [(np.arange(3), np.ones(3)), (2, 1.0), (np.array(True), 1.0)]:
        with pytest.raises(TypeError, match="jvp: expected a float0 tangent for primal leaf 0"):
            ft.jvp(fnp.sin, (primal,), (tangent,))
    with pytest.raises(TypeError, match="expected a float0 tangent for primal leaf 1"):
        ft.linearize(lambda a, n: a * n, 1.0, 2)[1](1.0, 1.0)
    y, t = ft.jvp(lambda x, n: fnp.sin(x) * n, (1.0, 2), (1.0, np.zeros((), float0)))
    assert (y, t) == (np.sin(1.0) * 2, np.cos(1.0) * 2)


def test_check_grads_catches_wrong_rule() -> None:
    @ft.custom_jvp
    def f(x):
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * fnp.sin(x)  # wrong: should be cos

    with pytest.raises(AssertionError, match=r"mode 'fwd', order 1.*expected"):
        ft.check_grads(f, (0.5,), modes=("fwd",))
    with pytest.raises(AssertionError, match=r"mode 'rev', order 1"):
        ft.check_grads(f, (0.5,), modes=("rev",))


def test_numerical_grad() -> None:
    g = numerical_grad(lambda x, y: fnp.sum(x * y), (np.array([1.0, 2.0]), 3.0))
    np.testing.assert_allclose(g[0], [3.0, 3.0], rtol=1e-8)
    assert g[1] == pytest.approx(3.0)


def test_jvp_python_scalar_tangent_takes_the_primal_dtype() -> None:
    # A Python float tangent reached maximum's JVP rule unconverted ('float' has no dtype).
    p, t = ft.jvp(lambda x: fnp.maximum(x, 1.0), (np.float64(2.0),), (1.0,))
    assert (p, t) == (2.0, 1.0) and np.asarray(t).dtype == np.float64
    p, t = ft.jvp(fnp.sin, (np.float32(2.0),), (1.0,))
    assert np.asarray(t).dtype == np.float32
    np.testing.assert_allclose(t, np.cos(np.float32(2.0)), rtol=1e-6)


def test_grad_through_custom_jvp_with_zero_tangent_into_custom_vjp() -> None:
    # Found by the composition fuzzer: a custom_jvp rule whose tangent is a concrete zero
    # (ceil) fed a custom_vjp, which took that zero for forward mode and raised.
    cj = ft.custom_jvp(lambda a: ft.lax.stop_gradient(fnp.ceil(a)))
    cj.defjvp(lambda p, t: ft.jvp(fnp.ceil, p, t))
    cv = ft.custom_vjp(lambda a: ft.lax.stop_gradient(a * 2.0))
    cv.defvjp(lambda a: (a * 2.0, a), lambda r, g: (g * 2.0,))
    x = np.array([0.3, 1.2])
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(cv(cj(x))))(x), [0.0, 0.0])
    f = lambda x: fnp.sum(cv(cj(x) * 0.5 + x))  # noqa: E731
    np.testing.assert_array_equal(ft.grad(f)(x), [2.0, 2.0])
    np.testing.assert_array_equal(ft.jit(ft.grad(f))(x), [2.0, 2.0])


def test_second_order_grad_through_custom_jvp_zero_tangent_into_custom_vjp() -> None:
    # Found by the long fuzz run: under grad(grad(...)) the custom_jvp rule's zero
    # tangent is a value of the outer grad, not of the inner one's tape; the custom_vjp
    # it feeds took it for forward mode and raised. A tangent below the tape is zero.
    cj = ft.custom_jvp(lambda a: ft.lax.stop_gradient(fnp.ceil(a)))
    cj.defjvp(lambda p, t: ft.jvp(fnp.ceil, p, t))
    cv = ft.custom_vjp(lambda a: ft.lax.stop_gradient(fnp.sin(a)))
    cv.defvjp(lambda a: (fnp.sin(a), a), lambda r, g: (g * fnp.cos(r),))

    def f(x):  # cv's input depends on x only through ceil
        n0 = cj(0.3 + 0.01 * fnp.tanh(x))
        n1 = cv(0.5 + 0.01 * (1.0 / (2 - fnp.tanh(fnp.sum(n0) * 0.7)) - 0.5))
        return fnp.concatenate([fnp.ravel(n0), fnp.ravel(n1)])[0] + x**3

    x = 0.7
    np.testing.assert_allclose(ft.grad(f)(x), 3 * x**2, rtol=1e-12)
    np.testing.assert_allclose(ft.grad(ft.grad(f))(x), 6 * x, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(ft.grad(f)))(x), 6 * x, rtol=1e-12)


# -- custom rules: JAX's semantics -----------------------------------------------


def test_custom_vjp_float0_cotangent_inside_scan() -> None:
    # bwd builds a float0 zero for an integer carry; traced (the scan body's backward
    # pass) fnp.zeros converted the fill value 0 to float0, which NumPy cannot do.
    from functrace.dtypes import float0

    @ft.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, (2.0, x)), lambda *_: ((2.0, fnp.zeros((), dtype=float0)),))

    def foo(x, y):
        return ft.lax.scan(lambda c, _: (f(c), None), (x, y), None, length=1)[0][0]

    g = ft.grad(foo, allow_int=True, argnums=(0, 1))
    for fn in (g, ft.jit(g)):
        gx, gy = fn(2.0, 3)  # JAX: (2.0, a float0 scalar)
        assert gx == 2.0 and gy.dtype == float0 and np.shape(gy) == ()
    gx, gy = ft.vmap(g)(np.array([2.0, 5.0]), np.array([3, 4]))
    np.testing.assert_array_equal(gx, [2.0, 2.0])
    assert gy.dtype == float0 and gy.shape == (2,)
    for make in (fnp.zeros, fnp.ones, fnp.empty):
        z = ft.jit(lambda m=make: m((2, 3), float0))()
        assert z.dtype == float0 and z.shape == (2, 3)
    z = ft.jit(lambda x: fnp.zeros_like(x, dtype=float0))(np.ones(4))
    assert z.dtype == float0 and z.shape == (4,)


def test_custom_jvp_rule_applying_the_linear_function_to_tangents() -> None:
    # The rule's f(t) puts a custom_jvp call on the tangent (linear) side; reverse mode
    # had no transpose for it (MissingRuleError). Its transpose is its function's.
    @ft.custom_jvp
    def neg(x):
        return -x

    neg.defjvp(lambda p, t: (neg(p[0]), neg(t[0])))
    a = np.array([[1.0, 2.0], [3.0, 4.0]])

    @ft.custom_jvp
    def mat(x):  # closes over a constant
        return a @ x

    mat.defjvp(lambda p, t: (mat(p[0]), mat(t[0])))

    @ft.custom_jvp
    def scale(x, w):  # bilinear: each call is linear in one tangent
        return w * x

    scale.defjvp(lambda p, t: (scale(*p), scale(t[0], p[1]) + scale(p[0], t[1])))

    def in_scan(x):
        return ft.lax.scan(lambda c, _: (neg(c), None), x, None, length=1)[0]

    def in_cond(x):
        return ft.lax.cond(x > 0, neg, lambda y: 2.0 * y, x)

    for fn in (neg, in_scan, in_cond):
        assert ft.grad(fn)(3.0) == -1.0  # JAX: -1.0
        assert ft.jit(ft.grad(fn))(3.0) == -1.0
    xs = np.array([0.5, 1.0, 2.0])
    np.testing.assert_array_equal(ft.vmap(ft.grad(neg))(xs), [-1.0] * 3)
    np.testing.assert_array_equal(ft.grad(lambda v: ft.vmap(in_scan)(v).sum())(xs), [-1.0] * 3)
    x = np.array([1.0, -1.0])
    for jac in (ft.jacrev(mat), ft.jit(ft.jacrev(mat))):
        np.testing.assert_array_equal(jac(x), a)
    np.testing.assert_array_equal(ft.vjp(mat, x)[1](np.array([1.0, 0.0]))[0], [1.0, 2.0])

    def loss(x, w):
        return scale(x, w) ** 2

    for g in (ft.grad(loss, argnums=(0, 1)), ft.jit(ft.grad(loss, argnums=(0, 1)))):
        np.testing.assert_allclose(g(3.0, 2.0), numerical_grad(loss, (3.0, 2.0)), rtol=1e-7)
    # differentiating the transposed call again: d/dx (2 w^2 x) = 2 w^2
    assert ft.grad(ft.grad(loss))(3.0, 2.0) == 8.0
    assert ft.jvp(ft.grad(loss), (3.0, 2.0), (1.0, 0.0))[1] == 8.0
    cube = lambda x: ft.lax.scan(lambda c, _: (scale(c, c), None), x, None, length=2)[0]  # noqa: E731
    assert ft.grad(cube)(1.5) == pytest.approx(4 * 1.5**3, rel=1e-14)


def test_custom_vjp_bwd_none_for_a_whole_pytree_argument() -> None:
    # None for a tuple argument (zeros for all its leaves) was a structure mismatch.
    @ft.custom_vjp
    def f(xs, y):
        return xs[0] * xs[1] * fnp.sin(y)

    f.defvjp(lambda xs, y: (f(xs, y), fnp.cos(y)), lambda c, g: (None, 2 * c * g))
    loss = lambda x: f((x, x), x)  # noqa: E731
    want = 2 * np.cos(3.0)  # JAX: -1.9799849932008908
    for g in (ft.grad(loss), ft.jit(ft.grad(loss))):
        assert g(3.0) == pytest.approx(want, rel=1e-15)
    xs = np.array([0.5, 3.0])
    np.testing.assert_allclose(ft.vmap(ft.grad(loss))(xs), 2 * np.cos(xs), rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda v: ft.vmap(loss)(v).sum())(xs), 2 * np.cos(xs))
    (ga, gb), gy = ft.grad(f, argnums=(0, 1))((1.0, 2.0), 3.0)
    assert (ga, gb) == (0.0, 0.0) and gy == pytest.approx(want)

    # None for part of an argument; a single cotangent for a whole tuple is an error
    @ft.custom_vjp
    def h(p):
        return p["a"][0] * p["b"]

    h.defvjp(lambda p: (h(p), p["a"][0]), lambda a, g: ({"a": None, "b": a * g},))
    grads = ft.grad(h)({"a": (2.0, 5.0), "b": 4.0})
    assert grads == {"a": (0.0, 0.0), "b": 2.0}
    h.defvjp(lambda p: (h(p), p["a"][0]), lambda a, g: ({"a": g, "b": a * g},))
    with pytest.raises(ValueError, match=r"bwd of 'h'.*structure mismatch"):
        ft.grad(h)({"a": (2.0, 5.0), "b": 4.0})


def test_custom_rules_outputs_of_the_wrong_type_are_errors() -> None:
    # A rule's primal output of another shape than the function's was returned under
    # jit/scan (a silently wrong result); a tangent's dtype was not checked at all.
    from functrace.dtypes import float0

    @ft.custom_jvp
    def g(x):
        return x

    g.defjvp(lambda p, t: (fnp.zeros((3,)), t[0]))
    in_scan = lambda x: ft.lax.scan(lambda c, _: (g(c), None), x, None, length=1)[0]  # noqa: E731
    for fn in (ft.jit(g), in_scan):
        with pytest.raises(TypeError, match=r"rule of 'g'.*function's type, f64\[\], got f64\[3\]"):
            ft.jvp(fn, (1.0,), (1.0,))
    # eagerly the function is not traced: the tangent must match the rule's primal (JAX)
    with pytest.raises(TypeError, match=r"tangent of type f64\[3\].*got f64\[\]"):
        ft.jvp(g, (1.0,), (1.0,))

    g.defjvp(lambda p, t: (p[0].astype(np.float32), t[0]))
    with pytest.raises(TypeError, match=r"function's type, f64\[2\], got f32\[2\]"):
        ft.grad(ft.jit(lambda x: g(x).sum()))(np.ones(2))
    with pytest.raises(TypeError, match=r"function's type, f64\[\], got f32\[\]"):
        ft.jvp(ft.vmap(g), (np.ones(2),), (np.ones(2),))

    @ft.custom_jvp
    def f(x):
        return {"y": x * 2.0, "n": fnp.round(x).astype(np.int32)}

    f.defjvp(lambda p, t: (f(p[0]), {"y": t[0] * 2.0, "n": fnp.int32(1)}))
    for fn in (f, ft.jit(f)):  # JAX: "Expected float0 ... but got int32[]"-style TypeError
        with pytest.raises(TypeError, match=r"'f'.*tangent of type float0\[\] at output\['n'\]"):
            ft.jvp(fn, (1.0,), (1.0,))
    f.defjvp(lambda p, t: (f(p[0]), {"y": t[0] * 2.0, "n": np.zeros((), float0)}))
    for fn in (f, ft.jit(f)):
        out, t = ft.jvp(fn, (1.2,), (1.0,))
        assert out == {"y": 2.4, "n": 1} and t["y"] == 2.0 and t["n"].dtype == float0
    assert ft.grad(lambda x: f(x)["y"])(1.2) == 2.0
    np.testing.assert_array_equal(ft.vmap(ft.grad(lambda x: f(x)["y"]))(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(ft.grad(lambda x: ft.vmap(f)(x)["y"].sum())(np.ones(2)), [2, 2])
    f.defjvp(lambda p, t: (f(p[0]), {"y": fnp.int32(1), "n": np.zeros((), float0)}))
    with pytest.raises(TypeError, match=r"tangent of type f64\[\] at output\['y'\].*got i32\[\]"):
        ft.jvp(f, (1.0,), (1.0,))

    @ft.custom_vjp
    def h(x):
        return x

    h.defvjp(lambda x: (fnp.zeros((3,)), None), lambda _, yb: (yb.sum(),))
    for fn in (ft.jit(h), lambda x: ft.lax.scan(lambda c, _: (h(c), None), x, None, length=1)[0]):
        with pytest.raises(TypeError, match=r"fwd of 'h'.*function's type, f64\[\], got f64\[3\]"):
            ft.value_and_grad(lambda x, fn=fn: fn(x).sum())(1.0)
    h.defvjp(lambda x: (x.astype(np.float32), None), lambda _, yb: (yb,))
    with pytest.raises(TypeError, match=r"fwd of 'h'.*f64\[\], got f32\[\]"):
        ft.grad(ft.jit(h))(1.0)


def test_forward_mode_of_custom_vjp_under_vmap_is_the_clear_error() -> None:
    # jacfwd/hessian batch the JVP: custom_lin had no batching rule (an internal
    # MissingRuleError) instead of jvp's "defines only reverse mode" TypeError.
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (fnp.cos(x) * g,))
    x = np.array([0.5, 1.0])
    calls = {
        "jacfwd": lambda: ft.jacfwd(f)(1.0),
        "jacfwd of a vector": lambda: ft.jacfwd(f)(x),
        "jit(jacfwd)": lambda: ft.jit(ft.jacfwd(f))(x),
        "hessian": lambda: ft.hessian(lambda x: f(x).sum())(x),
        "vmap(jvp)": lambda: ft.vmap(lambda t: ft.jvp(f, (x,), (t,))[1])(np.eye(2)),
        "vmap(linearize)": lambda: ft.vmap(ft.linearize(f, x)[1])(np.eye(2)),
    }
    for call in calls.values():
        with pytest.raises(TypeError, match=r"custom_vjp function f, which defines only reverse"):
            call()

    # A batched linear map of reverse mode is still transposed with bwd, per example.
    @ft.custom_vjp
    def g(x):
        return fnp.sin(x)

    g.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda c, ct: (3.0 * c * ct,))  # 3: used
    ts = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    xs = np.array([[0.5, 1.0], [1.5, 2.0], [0.1, 0.2]])
    (got,) = ft.linear_transpose(ft.vmap(ft.linearize(g, x)[1]), ts)(ts)
    np.testing.assert_allclose(got, 3 * np.cos(x) * ts, rtol=1e-15)
    lin = lambda x, t: ft.linearize(g, x)[1](t)  # noqa: E731
    (got,) = ft.linear_transpose(lambda t: ft.vmap(lin)(xs, t), ts)(ts)
    np.testing.assert_allclose(got, 3 * np.cos(xs) * ts, rtol=1e-15)
    (got,) = ft.linear_transpose(lambda t: ft.vmap(lin, in_axes=(0, None))(xs, t), x)(ts)
    np.testing.assert_allclose(got, (3 * np.cos(xs) * ts).sum(0), rtol=1e-15)
