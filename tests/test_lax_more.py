"""The ``jax.lax`` and top-level ``jax`` names added in ``functrace/lax/extras.py``,
``special_extra.py``, ``assoc_scan.py``, ``solves.py``, the composites and
``functrace/api/_extras.py``, ``_callback.py``, ``_devices.py``: values against JAX
(``tests/fixtures/lax_more_jax.npz``) and NumPy/SciPy, derivatives against finite
differences, compositions with ``jit``/``vmap``/``grad``, and the errors.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import scipy.special

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.lax.special_extra import zeta_continued

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "lax_more_jax.npz"))


def jax_value(key: str) -> np.ndarray:
    return FIXTURE[key]


def check(key: str, got: Any, rtol: float = 1e-12, atol: float = 0.0) -> None:
    want = jax_value(key)
    g = np.asarray(got)
    assert g.shape == want.shape, f"{key}: shape {g.shape} != {want.shape}"
    assert g.dtype == want.dtype, f"{key}: dtype {g.dtype} != {want.dtype}"
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, err_msg=key)
        assert np.array_equal(np.signbit(g.real[g.real == 0]), np.signbit(want.real[g.real == 0]))
    else:
        np.testing.assert_array_equal(g, want, err_msg=key)


# ---------------------------------------------------------------------------
# Values against JAX
# ---------------------------------------------------------------------------


def test_bessel_values_and_derivatives() -> None:
    x = jax_value("i0e/x")
    check("i0e/y", lax.bessel_i0e(x), 1e-14)
    check("i1e/y", lax.bessel_i1e(x), 1e-14)
    check("i0e/f32", lax.bessel_i0e(x.astype(np.float32)), 1e-6)
    check("i1e/f32", lax.bessel_i1e(x.astype(np.float32)), 1e-6)
    xs = jax_value("i0e/grad_x")  # 0 included: i1e'(0) = 1/2, i0e'(0) = 0
    check("i0e/grad", ft.vmap(ft.grad(lax.bessel_i0e))(xs), 1e-13)
    check("i1e/grad", ft.vmap(ft.grad(lax.bessel_i1e))(xs), 1e-13)
    y = np.linspace(-50, 50, 41)
    np.testing.assert_allclose(lax.bessel_i0e(y), scipy.special.i0e(y), rtol=1e-14)
    np.testing.assert_allclose(lax.bessel_i1e(y), scipy.special.i1e(y), rtol=1e-14)


def test_zeta_values_edges_and_derivatives() -> None:
    check("zeta/y", lax.zeta(jax_value("zeta/s"), jax_value("zeta/q")), 1e-13)
    s, q = np.meshgrid([1.01, 2.0, 3.5, 30.0, 100.0], [1e-3, 0.7, 1.0, 21.0, 1e4])
    np.testing.assert_allclose(lax.zeta(s, q), scipy.special.zeta(s, q), rtol=1e-13)
    # d zeta(s, q)/dq = -s zeta(s + 1, q) (JAX has no derivative here, nor in s)
    g = ft.grad(lax.zeta, 1)(2.5, 1.7)
    np.testing.assert_allclose(g, -2.5 * scipy.special.zeta(3.5, 1.7), rtol=1e-13)
    ft.check_grads(lambda q: lax.zeta(fnp.full_like(q, 3.0), q), (np.array([0.6, 2.0]),), 2)
    # d^m/ds^m zeta(2.5, 1.7) = sum_k (-log(1.7 + k))^m (1.7 + k)^-2.5 (mpmath, 30 digits)
    np.testing.assert_allclose(ft.grad(lax.zeta)(2.5, 1.7), -0.4355078792142882643, rtol=1e-13)
    d2 = ft.jit(ft.grad(ft.grad(lax.zeta)))(2.5, 1.7)
    np.testing.assert_allclose(d2, 0.5980181637436675216, rtol=1e-13)
    ft.check_grads(lax.zeta, (np.array([1.5, 2.5, 7.0]), np.array([0.3, 1.7, 4.0])), 2)
    # the continuation to s < 1 (not JAX's: lax.zeta is NaN there)
    assert np.isnan(lax.zeta(0.5, 1.0))
    cont = zeta_continued(np.array([0.5, -0.25]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(cont, [-1.4603545088095868129, -0.3204512642285772828], rtol=1e-13)


def test_incomplete_gamma_shape_derivatives() -> None:
    a, x = jax_value("igamma/a"), jax_value("igamma/x")
    check("igamma/grad_a", lax.igamma_grad_a(a, x), 1e-10)
    # JAX's random_gamma_grad is an approximation (agrees to ~1e-7 in the bulk; ours
    # is the exact -(dP/da)/p, checked below against SciPy differences)
    check("igamma/rgg", lax.random_gamma_grad(a, x), 1e-6)
    check(
        "igamma/edge_grad_a",
        lax.igamma_grad_a(jax_value("igamma/edge_a"), jax_value("igamma/edge_x")),
    )
    check(
        "igamma/edge_rgg",
        lax.random_gamma_grad(jax_value("igamma/edge_a"), jax_value("igamma/edge_x")),
    )
    h = 1e-6  # differences of P, or of Q = 1 - P where P is near 1
    fd_p = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
    fd_q = (scipy.special.gammaincc(a - h, x) - scipy.special.gammaincc(a + h, x)) / (2 * h)
    fd = np.where(scipy.special.gammainc(a, x) < 0.5, fd_p, fd_q)
    dens = np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), -fd / dens, rtol=2e-7, atol=1e-9)
    # differentiable in x (closed forms), not in a
    ft.check_grads(
        lambda t: lax.igamma_grad_a(fnp.full_like(t, 2.3), t), (np.array([0.5, 4.0]),), 2
    )
    ft.check_grads(
        lambda t: lax.random_gamma_grad(fnp.full_like(t, 0.7), t), (np.array([0.3, 2.0]),), 2
    )
    with pytest.raises(NotImplementedError, match="igamma_grad_a: the derivative"):
        ft.grad(lax.igamma_grad_a)(2.0, 1.0)


def test_elementwise_math() -> None:
    check("cbrt/y", lax.cbrt(jax_value("cbrt/x")))
    h = jax_value("hyp/x")
    check("hyp/acosh", lax.acosh(h), 1e-15)
    check("hyp/asinh", lax.asinh(h), 1e-15)
    check("hyp/atanh", lax.atanh(h), 1e-15)
    grads = [
        ft.grad(f)(v)
        for f, v in ((lax.acosh, 2.0), (lax.asinh, -1.5), (lax.atanh, 0.5), (lax.cbrt, -8.0))
    ]
    check("hyp/grads", np.array(grads), 1e-15)
    assert float(ft.grad(lax.cbrt)(0.0)) == np.inf  # as JAX
    assert lax.reciprocal(np.float32(4.0)).dtype == np.float32
    assert float(lax.reciprocal(4.0)) == 0.25


@pytest.mark.parametrize(
    "e,m", [(8, 7), (5, 10), (5, 2), (5, 0), (8, 23), (11, 52), (4, 3), (2, 1)]
)
def test_reduce_precision(e: int, m: int) -> None:
    x = jax_value("rp/x")
    check(f"rp/e{e}m{m}", lax.reduce_precision(x, e, m))
    with np.errstate(over="ignore"):
        check(f"rp/f32_e{e}m{m}", lax.reduce_precision(x.astype(np.float32), e, m))


def test_reduce_precision_derivatives_round_like_jax() -> None:
    check("rp/jvp", np.array(ft.jvp(lambda t: lax.reduce_precision(t, 5, 2), (1.3,), (1.3,))))
    check("rp/grad", ft.grad(lambda t: lax.reduce_precision(t, 5, 2) * 3.0)(1.3))
    assert np.isnan(lax.reduce_precision(np.float64(np.nan), 5, 0))


@pytest.mark.parametrize("dt", ["int8", "int32", "uint8", "uint16", "uint64"])
def test_integer_bits(dt: str) -> None:
    x = jax_value(f"bits/{dt}")
    check(f"bits/popcount_{dt}", lax.population_count(x))
    check(f"bits/clz_{dt}", lax.clz(x))
    check(f"bits/mulhi_{dt}", lax.mulhi(x, x[::-1].copy()))
    check(f"bits/srl_{dt}", lax.shift_right_logical(x, jax_value(f"bits/shift_{dt}")))


def test_integer_bits_int64_and_jit() -> None:
    x = jax_value("bits/i64")
    check("bits/popcount", lax.population_count(x))
    check("bits/clz", lax.clz(x))
    check("bits/mulhi_int64", lax.mulhi(x, x[::-1].copy()))
    sh = jax_value("bits/shift_int64")
    check("bits/srl_int64", lax.shift_right_logical(x, sh))
    f = ft.jit(
        lambda a, s: (
            lax.population_count(a),
            lax.clz(a),
            lax.mulhi(a, a),
            lax.shift_right_logical(a, s),
        )
    )
    for got, want in zip(
        f(x, sh),
        (lax.population_count(x), lax.clz(x), lax.mulhi(x, x), lax.shift_right_logical(x, sh)),
    ):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["and", "or", "xor"])
def test_bitwise_reductions(name: str) -> None:
    f = getattr(lax, f"reduce_{name}")
    x = jax_value("red/x")
    check(f"red/{name}_0", f(x, (0,)))
    check(f"red/{name}_01", f(x, (0, 1)))
    check(f"red/{name}_empty_i64", f(np.zeros((0, 2), np.int64), (0,)))
    check(f"red/{name}_empty_u8", f(np.zeros((0,), np.uint8), (0,)))
    check(f"red/{name}_bool", f(np.array([[True, False, True], [True, True, False]]), (1,)))
    np.testing.assert_array_equal(ft.vmap(lambda r: f(r, (0,)), in_axes=1)(x), f(x, (0,)))
    with pytest.raises(TypeError, match=f"reduce_{name}: expected a boolean or integer"):
        f(np.ones(2), (0,))


def test_bitcast_convert_type() -> None:
    x = jax_value("bc/x")
    check("bc/i64", lax.bitcast_convert_type(x, np.int64))
    check("bc/i32", lax.bitcast_convert_type(x, np.int32))
    check("bc/u8", lax.bitcast_convert_type(x, np.uint8))
    check("bc/back", lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.int32), np.float64))
    check(
        "bc/f32",
        lax.bitcast_convert_type(np.array([1065353216, -1082130432], np.int32), np.float32),
    )
    # batched with the batch axis last, where the trailing axis changes
    y = np.arange(6.0).reshape(3, 2)
    got = ft.vmap(lambda r: lax.bitcast_convert_type(r, np.int32), in_axes=1)(y)
    want = [np.ascontiguousarray(y[:, j]).view(np.int32).reshape(3, 2) for j in range(2)]
    np.testing.assert_array_equal(got, np.stack(want))
    assert float(ft.grad(lambda t: lax.bitcast_convert_type(t, np.float64))(1.0)) == 0.0  # as JAX
    with pytest.raises(TypeError, match="bitcast_convert_type: expected bool and complex"):
        lax.bitcast_convert_type(np.array([1], np.uint8), np.bool_)
    with pytest.raises(ValueError, match="last axis of size 2"):
        lax.bitcast_convert_type(np.ones((3, 3), np.int32), np.float64)


def test_complex_parts() -> None:
    z = jax_value("cplx/z")
    check("cplx/real", lax.real(z))
    check("cplx/imag", lax.imag(z))
    check("cplx/conj", lax.conj(z))
    check("cplx/conj_real", lax.conj(np.array([1.0, -2.0])))
    check("cplx/complex", lax.complex(np.array([1.0, 2.0]), np.array([3.0, -4.0])))

    def f(x: Any, y: Any) -> Any:
        w = lax.complex(x, y) * (1.5 - 0.5j)
        return fnp.sum(lax.real(w) * lax.imag(lax.conj(w) * (2 + 1j)))

    args = (np.array([0.3, -1.2]), np.array([0.7, 2.0]))
    check("cplx/grad", np.array(ft.grad(f, (0, 1))(*args)), 1e-13)
    np.testing.assert_allclose(
        ft.jit(ft.grad(f, (0, 1)))(*args), jax_value("cplx/grad"), rtol=1e-13
    )
    # real inputs (a deliberate difference: jax.lax.real/imag reject them)
    assert float(lax.real(2.0)) == 2.0 and float(lax.imag(2.0)) == 0.0
    assert lax.conj(np.float32(1.0)).dtype == np.complex64
    with pytest.raises(TypeError, match="conj: expected a floating-point or complex"):
        lax.conj(np.array([1]))


# ---------------------------------------------------------------------------
# associative_scan
# ---------------------------------------------------------------------------


def test_associative_scan_against_jax() -> None:
    m = jax_value("ascan/mats")
    check("ascan/matmul", lax.associative_scan(fnp.matmul, m), 1e-13)
    check("ascan/matmul_rev", lax.associative_scan(fnp.matmul, m, reverse=True), 1e-13)
    check("ascan/max_axis1", lax.associative_scan(fnp.maximum, jax_value("ascan/x"), axis=1))
    check(
        "ascan/grad", ft.grad(lambda t: fnp.sum(lax.associative_scan(fnp.matmul, t) ** 2))(m), 1e-12
    )
    check(
        "ascan/grad_rev",
        ft.grad(lambda t: fnp.sum(fnp.sin(lax.associative_scan(fnp.matmul, t, reverse=True))))(m),
        1e-12,
    )


def test_associative_scan_is_a_parallel_prefix() -> None:
    calls = []

    def add(a: Any, b: Any) -> Any:
        calls.append(np.shape(a))
        return a + b

    for n in (1, 2, 3, 5, 8, 13, 64):
        calls.clear()
        x = np.arange(float(n))
        np.testing.assert_array_equal(lax.associative_scan(add, x), np.cumsum(x))
        assert len(calls) <= 2 * max(1, int(np.ceil(np.log2(max(n, 2))))), (n, len(calls))
    assert lax.associative_scan(add, np.zeros(0)).shape == (0,)


def test_associative_scan_pytrees_and_transforms() -> None:
    a = np.linspace(0.5, 0.9, 12).reshape(3, 4)
    b = np.linspace(-1.0, 2.0, 12).reshape(3, 4)

    def affine(p: Any, q: Any) -> Any:
        return {"a": p["a"] * q["a"], "b": p["b"] * q["a"] + q["b"]}

    def f(a: Any, b: Any) -> Any:
        return lax.associative_scan(affine, {"a": a, "b": b}, axis=-1)["b"]

    ref = np.empty_like(b)
    for i in range(3):
        c = 0.0
        for j in range(4):
            c = c * a[i, j] + b[i, j]
            ref[i, j] = c
    np.testing.assert_allclose(f(a, b), ref, rtol=1e-14)
    np.testing.assert_allclose(ft.jit(f)(a, b), ref, rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(lambda u, v: f(u[None], v[None])[0])(a, b), ref, rtol=1e-14)
    ft.check_grads(f, (a, b), 2)


def test_associative_scan_errors() -> None:
    with pytest.raises(ValueError, match="one length along axis"):
        lax.associative_scan(fnp.add, (np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="at least one axis"):
        lax.associative_scan(fnp.add, np.float64(1.0))
    with pytest.raises(TypeError, match="structure of elems"):
        lax.associative_scan(lambda p, q: p[0] + q[0], (np.zeros(3), np.zeros(3)))


# ---------------------------------------------------------------------------
# custom_linear_solve, custom_root
# ---------------------------------------------------------------------------


def _ls(A: Any, b: Any, symmetric: bool = False) -> Any:
    return lax.custom_linear_solve(
        lambda x: A @ x,
        b,
        lambda mv, r: fnp.linalg.solve(A, r),
        lambda vm, r: fnp.linalg.solve(A.T, r),
        symmetric=symmetric,
    )


def _cg(mv: Any, r: Any) -> Any:
    def body(c: Any) -> Any:
        x, res, p, k = c
        ap = mv(p)
        alpha = (res @ res) / (p @ ap)
        res2 = res - alpha * ap
        return x + alpha * p, res2, res2 + (res2 @ res2) / (res @ res) * p, k + 1

    return lax.while_loop(lambda c: c[3] < 3, body, (fnp.zeros_like(r), r, r, 0))[0]


def test_custom_linear_solve_against_jax() -> None:
    A, b = jax_value("cls/A"), jax_value("cls/b")
    check("cls/x", _ls(A, b), 1e-13)
    check("cls/grad_A", ft.grad(lambda M: fnp.sum(_ls(M, b) ** 2))(A), 1e-12)
    check("cls/grad_b", ft.grad(lambda r: fnp.sum(_ls(A, r) ** 2))(b), 1e-12)
    check("cls/jvp", ft.jvp(_ls, (A, b), (np.ones((3, 3)), np.ones(3)))[1], 1e-12)
    check("cls/hess_b", ft.hessian(lambda r: fnp.sum(_ls(A, r) ** 3))(b), 1e-11)
    S = jax_value("cls/S")
    loss = ft.grad(
        lambda M: fnp.sum(lax.custom_linear_solve(lambda x: M @ x, b, _cg, symmetric=True) ** 2)
    )
    check("cls/cg_grad_S", loss(S), 1e-9)
    check("cls/cg_grad_S", ft.jit(loss)(S), 1e-9)
    assert type(_ls(A, b)) is ft.Array


def test_custom_linear_solve_transforms_and_finite_differences() -> None:
    A, b = jax_value("cls/A"), jax_value("cls/b")
    ft.check_grads(lambda M, r: _ls(M, r), (A, b), 2, modes=("fwd", "rev"))
    ft.check_grads(lambda M, r: _ls(M @ M.T, r, symmetric=True), (A, b), 1, modes=("fwd", "rev"))
    As = np.stack([A, A + np.eye(3), A.T])
    bs = np.stack([b, -b, 2 * b])
    loop = np.stack([np.linalg.solve(M, r) for M, r in zip(As, bs)])
    np.testing.assert_allclose(ft.vmap(_ls)(As, bs), loop, rtol=1e-13)
    np.testing.assert_allclose(
        ft.vmap(_ls, in_axes=(None, 0))(A, bs), np.linalg.solve(A, bs.T).T, rtol=1e-13
    )
    np.testing.assert_allclose(ft.jit(ft.vmap(_ls))(As, bs), loop, rtol=1e-13)
    g = ft.vmap(ft.grad(lambda M, r: fnp.sum(_ls(M, r) ** 2)))(As, bs)
    g_loop = [ft.grad(lambda M, r: fnp.sum(_ls(M, r) ** 2))(M, r) for M, r in zip(As, bs)]
    np.testing.assert_allclose(g, np.stack(g_loop), rtol=1e-12)
    x, aux = lax.custom_linear_solve(
        lambda x: A @ x, b, lambda mv, r: (fnp.linalg.solve(A, r), {"it": 7}), has_aux=True
    )
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-13)
    assert int(aux["it"]) == 7


def test_custom_linear_solve_errors() -> None:
    A, b = jax_value("cls/A"), jax_value("cls/b")

    def no_transpose(r: Any) -> Any:
        return fnp.sum(
            lax.custom_linear_solve(lambda x: A @ x, r, lambda mv, v: fnp.linalg.solve(A, v))
        )

    with pytest.raises(TypeError, match="expected transpose_solve"):
        ft.grad(no_transpose)(b)
    ft.jvp(no_transpose, (b,), (b,))  # forward mode needs no transpose_solve
    with pytest.raises(TypeError, match="structure of b"):
        lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, v: (v, v))
    with pytest.raises(TypeError, match="shapes and dtypes of b"):
        lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, v: v[:2])


def _newton(f: Any, x0: Any) -> Any:
    return lax.fori_loop(0, 40, lambda i, x: x - f(x) / ft.grad(f)(x), x0)


def _sqrt(a: Any) -> Any:
    return lax.custom_root(lambda x: x**2 - a, 1.0, _newton, lambda g, y: y / g(1.0))


def test_custom_root_against_jax_and_finite_differences() -> None:
    got = [ft.grad(_sqrt)(2.0), ft.grad(ft.grad(_sqrt))(2.0), ft.jvp(_sqrt, (5.0,), (1.0,))[1]]
    check("root/grad", np.array(got), 1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(_sqrt))(2.0), jax_value("root/grad")[0], rtol=1e-12)
    np.testing.assert_allclose(
        ft.vmap(ft.grad(_sqrt))(np.array([2.0, 4.0])), [2**-1.5, 0.25], rtol=1e-12
    )
    ft.check_grads(_sqrt, (3.0,), 3, modes=("fwd", "rev"))

    def vec_root(p: Any) -> Any:
        f = lambda x: (x[0] + p[0] * x[1] - 1.0, x[1] - p[1] * x[0] - 2.0)  # noqa: E731

        def solve(f: Any, x0: Any) -> Any:  # closes over p: never differentiated
            det = 1 + p[0] * p[1]
            return ((1 - 2 * p[0]) / det, (2 + p[1]) / det)

        def tangent_solve(g: Any, y: Any) -> Any:
            J = ft.jacobian(lambda v: fnp.stack(g((v[0], v[1]))))(fnp.zeros(2))
            s = fnp.linalg.solve(J, fnp.stack(y))
            return (s[0], s[1])

        x = lax.custom_root(f, (0.0, 0.0), solve, tangent_solve)
        return x[0] * 3.0 + x[1] ** 2

    p = np.array([0.5, -0.25])
    check("root/vec_grad", ft.grad(vec_root)(p), 1e-12)
    check("root/vec_grad", ft.jit(ft.grad(vec_root))(p), 1e-12)
    ft.check_grads(vec_root, (p,), 1, modes=("fwd", "rev"))


def test_custom_root_aux_and_errors() -> None:
    def solve(f: Any, x0: Any) -> Any:
        x = _newton(f, x0)
        return x, {"n": 40, "residual": f(x)}

    def with_aux(a: Any) -> Any:
        return lax.custom_root(
            lambda x: x**2 - a, 1.0, solve, lambda g, y: y / g(1.0), has_aux=True
        )

    x, aux = with_aux(2.0)
    assert abs(float(x) - np.sqrt(2.0)) < 1e-14 and aux["n"] == 40
    np.testing.assert_allclose(ft.grad(lambda a: with_aux(a)[0])(2.0), 2**-1.5, rtol=1e-12)
    with pytest.raises(TypeError, match="custom_root: expected solve to return a pytree"):
        lax.custom_root(lambda x: x - 1.0, 0.0, lambda f, x0: (1.0, 2.0), lambda g, y: y)
    with pytest.raises(TypeError, match="custom_root: expected f to return a pytree"):
        lax.custom_root(lambda x: (x, x), 0.0, lambda f, x0: 1.0, lambda g, y: y)


# ---------------------------------------------------------------------------
# pure_callback
# ---------------------------------------------------------------------------


def test_pure_callback_eager_jit_and_vmap() -> None:
    seen: list[tuple[type, tuple[int, ...]]] = []

    def cb(x: Any) -> Any:
        seen.append((type(x), np.shape(x)))
        return np.sin(x)

    spec = ft.ShapeDtypeStruct((3,), np.float64)
    x = np.array([0.1, 0.2, 0.3])
    out = ft.pure_callback(cb, spec, x)
    assert type(out) is ft.Array and seen == [(ft.Array, (3,))]
    f = ft.jit(lambda v: ft.pure_callback(cb, spec, v) * 2.0)
    np.testing.assert_allclose(f(x), 2 * np.sin(x))
    np.testing.assert_allclose(f(x + 1), 2 * np.sin(x + 1))
    assert len(seen) >= 3  # the compiled program calls back on every call
    seen.clear()
    one = ft.ShapeDtypeStruct((), np.float64)
    xs = np.arange(4.0)
    seq = ft.vmap(lambda v: ft.pure_callback(cb, one, v, vmap_method="sequential"))(xs)
    np.testing.assert_allclose(seq, np.sin(xs))
    assert [s for _, s in seen] == [()] * 4
    seen.clear()
    np.testing.assert_allclose(
        ft.jit(ft.vmap(lambda v: ft.pure_callback(cb, one, v, vmap_method="sequential")))(xs),
        np.sin(xs),
    )

    shapes = []

    def add(u: Any, w: Any) -> Any:
        shapes.append((np.shape(u), np.shape(w)))
        return u + w

    for method, want in (("expand_dims", ((4,), (1,))), ("broadcast_all", ((4,), (4,)))):
        shapes.clear()
        got = ft.vmap(
            lambda u, w, m=method: ft.pure_callback(add, one, u, w, vmap_method=m),
            in_axes=(0, None),
        )(xs, 2.0)
        np.testing.assert_allclose(got, xs + 2.0)
        assert shapes == [want], (method, shapes)
    tree = ft.pure_callback(
        lambda d, k=None: {"a": d["u"] * k}, {"a": spec}, {"u": x}, k=np.float64(3.0)
    )
    np.testing.assert_allclose(tree["a"], 3 * x)
    assert int(ft.pure_callback(lambda v: 1, ft.ShapeDtypeStruct((), np.int64), x)) == 1


def test_pure_callback_errors() -> None:
    spec = ft.ShapeDtypeStruct((3,), np.float64)
    x = np.ones(3)
    with pytest.raises(ValueError, match="pure_callback: expected no derivative"):
        ft.grad(lambda v: ft.pure_callback(np.sin, ft.ShapeDtypeStruct((), np.float64), v))(1.0)
    assert (
        float(
            ft.grad(
                lambda v: (
                    ft.pure_callback(
                        np.sin, ft.ShapeDtypeStruct((), np.float64), ft.stop_gradient(v)
                    )
                    + v
                )
            )(1.0)
        )
        == 1.0
    )
    with pytest.raises(NotImplementedError, match="expected a vmap_method under vmap"):
        ft.vmap(lambda v: ft.pure_callback(np.sin, ft.ShapeDtypeStruct((), np.float64), v))(x)
    with pytest.raises(ValueError, match="expected vmap_method None or one of"):
        ft.pure_callback(np.sin, spec, x, vmap_method="foo")
    with pytest.raises(TypeError, match="to return arrays of the types"):
        ft.pure_callback(lambda v: np.ones(2), spec, x)
    with pytest.raises(TypeError, match="to return arrays of the types"):
        ft.jit(lambda v: ft.pure_callback(lambda u: np.ones(3, np.float32), spec, v))(x)
    with pytest.raises(TypeError, match="structure of result_shape_dtypes"):
        ft.pure_callback(lambda v: (v, v), spec, x)
    with pytest.raises(TypeError, match="expected a callable"):
        ft.pure_callback(3, spec, x)


# ---------------------------------------------------------------------------
# ShapeDtypeStruct, eval_shape, typeof, float0, devices
# ---------------------------------------------------------------------------


def test_shape_dtype_struct_and_eval_shape() -> None:
    s = ft.ShapeDtypeStruct([2, 3], "float32")
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert (s.shape, s.dtype, s.ndim, s.size, len(s), s.sharding, s.weak_type) == (
        (2, 3),
        np.dtype(np.float32),
        2,
        6,
        2,
        None,
        False,
    )
    assert s == ft.ShapeDtypeStruct((2, 3), np.float32) and hash(s) == hash(
        ft.ShapeDtypeStruct((2, 3), np.float32)
    )
    assert s.update(shape=(4,)) == ft.ShapeDtypeStruct((4,), np.float32)
    with pytest.raises(ValueError, match="expected a dtype"):
        ft.ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError, match="sequence of ints"):
        ft.ShapeDtypeStruct(3, np.float32)  # type: ignore[arg-type]
    out = ft.eval_shape(lambda x, y: (x.sum(0), x * y), s, np.float32(2.0))
    assert out == (ft.ShapeDtypeStruct((3,), np.float32), ft.ShapeDtypeStruct((2, 3), np.float32))
    assert ft.eval_shape(lambda x: x * 2, 1.0) == ft.ShapeDtypeStruct(
        (), np.float64, weak_type=True
    )
    assert ft.eval_shape(
        lambda x, y=None: x @ y, s, y=ft.ShapeDtypeStruct((3, 5), np.float32)
    ).shape == (2, 5)
    assert ft.typeof(np.ones(3)) == ft.core.ShapedArray((3,), np.dtype(np.float64))
    assert ft.typeof(1.0).weak_type
    ft.jit(lambda x: (_check_typeof(x), x)[1])(np.ones(2))
    with pytest.raises(TypeError, match="typeof: expected"):
        ft.typeof([1.0])


def _check_typeof(x: Any) -> None:
    assert ft.typeof(x).shape == (2,)


def test_float0_devices_and_caches() -> None:
    assert ft.float0 == np.dtype([("float0", np.void, 0)])
    g = ft.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(1.0, 3)
    assert g[1].dtype == ft.float0
    assert ft.default_backend() == "cpu"
    assert (ft.device_count(), ft.local_device_count(), ft.process_index(), ft.process_count()) == (
        1,
        1,
        0,
        1,
    )
    assert ft.local_devices() == ft.devices()
    a = fnp.ones(2)
    assert a.devices() == {ft.devices()[0]}
    assert a.sharding.device_set == {ft.devices()[0]} and a.sharding.is_fully_replicated
    f = ft.jit(lambda x: x + 1.0)
    assert float(f(1.0)) == 2.0
    ft.clear_caches()
    assert float(f(2.0)) == 3.0 and float(ft.grad(lambda x: x * x)(3.0)) == 6.0
    with pytest.raises(ValueError, match="local_devices: expected process_index 0"):
        ft.local_devices(process_index=1)


# ---------------------------------------------------------------------------
# closure_convert, custom_gradient, linear_transpose, naming, compile-time eval
# ---------------------------------------------------------------------------


def test_closure_convert_hoists_traced_floats() -> None:
    def outer(a: Any) -> Any:
        f, consts = ft.closure_convert(lambda x: x * a + 5.0, 1.0)
        assert len(consts) == 1 and consts[0] is a
        return f(3.0, *consts)

    assert float(ft.grad(outer)(2.0)) == 3.0
    f, consts = ft.closure_convert(lambda x: x * 2.0, 1.0)
    assert consts == [] and float(f(4.0)) == 8.0
    with pytest.raises(TypeError, match="structure of the examples"):
        f((1.0, 2.0))


def test_custom_gradient() -> None:
    @ft.custom_gradient
    def clip_grad(x: Any) -> Any:
        return fnp.sin(x), lambda g: (fnp.clip(g * fnp.cos(x), -0.5, 0.5),)

    x = jax_value("cgrad/x")
    check("cgrad/grad", ft.vmap(ft.grad(clip_grad))(x), 1e-14)
    check("cgrad/grad", ft.jit(ft.vmap(ft.grad(clip_grad)))(x), 1e-14)

    @ft.custom_gradient
    def mul(x: Any, y: Any) -> Any:
        return x * y, lambda g: (g * y * 10.0, g * x)

    assert [float(v) for v in ft.grad(mul, (0, 1))(3.0, 4.0)] == [40.0, 3.0]
    assert float(mul(3.0, 4.0)) == 12.0

    @ft.custom_gradient
    def single(x: Any) -> Any:
        return x**2, lambda g: g * 3.0  # one argument: a bare cotangent is fine

    assert float(ft.grad(single)(1.0)) == 3.0
    with pytest.raises(TypeError, match="forward mode"):
        ft.jvp(mul, (3.0, 4.0), (1.0, 1.0))

    @ft.custom_gradient
    def wrong(x: Any, y: Any) -> Any:
        return x * y, lambda g: (g,)

    with pytest.raises(TypeError, match="to return 2 cotangents"):
        ft.grad(wrong)(1.0, 2.0)


def test_linear_transpose() -> None:
    M = jax_value("lt/M")
    t = ft.linear_transpose(lambda u, w: (M @ u + 2.0 * w[:2], fnp.sum(w)), np.ones(3), np.ones(4))
    u, w = t((np.array([1.0, -1.0]), 3.0))
    check("lt/u", u, 1e-14)
    check("lt/w", w, 1e-14)
    s = ft.linear_transpose(lambda v: v.sum(), ft.ShapeDtypeStruct((3,), np.float64))
    np.testing.assert_array_equal(s(2.0)[0], [2.0, 2.0, 2.0])
    assert float(ft.linear_transpose(lambda v: v + 1.0, 1.0)(3.0)[0]) == 3.0  # affine: as JAX
    with pytest.raises(TypeError, match="non-linear 'sin'"):
        ft.linear_transpose(fnp.sin, 1.0)(1.0)
    with pytest.raises(TypeError, match="expected a function linear"):
        ft.linear_transpose(lambda v: v * v, 1.0)(1.0)
    with pytest.raises(TypeError, match="cotangents of the output types"):
        ft.linear_transpose(lambda v: v.sum(), np.ones(3))(np.ones(2))


def test_naming_and_compile_time_eval() -> None:
    f = ft.named_call(lambda x: x * 2.0, name="double")
    assert float(f(2.0)) == 4.0

    def g(x: Any) -> Any:
        with ft.named_scope("block"):
            y = x + 1.0
        with ft.ensure_compile_time_eval():
            k = fnp.arange(3.0).sum()  # a constant by now
        return y * k

    jaxpr = ft.make_jaxpr(g)(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["add", "mul"]
    assert float(ft.jit(g)(1.0)) == 6.0
    with pytest.raises(TypeError, match="named_scope: expected a str"):
        with ft.named_scope(3):  # type: ignore[arg-type]
            pass


# ---------------------------------------------------------------------------
# The shape helpers, rng_uniform, platform_dependent, and the errors
# ---------------------------------------------------------------------------


def test_shape_helpers() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    assert lax.collapse(x, 0, 2).shape == (6, 4) and lax.collapse(x, -2, -1).shape == (2, 3, 4)
    assert [p.shape for p in lax.split(x, (1, 3), axis=-1)] == [(2, 3, 1), (2, 3, 3)]
    np.testing.assert_array_equal(lax.tile(x, (1, 2, 1)), np.tile(x, (1, 2, 1)))
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 0), [[0] * 3, [1] * 3])
    assert lax.broadcast_to_rank(x, 2).shape == (2, 3, 4)
    assert lax.empty((2,), np.float32).dtype == np.float32
    bm = lax.batch_matmul(x, np.ones((2, 4, 5)))
    np.testing.assert_allclose(bm, x @ np.ones((2, 4, 5)))
    ob = lax.optimization_barrier({"a": 1.0, "b": [np.ones(2)]})
    assert type(ob["a"]) is ft.Array and type(ob["b"][0]) is ft.Array
    assert float(lax.platform_dependent(2.0, cpu=lambda v: v * 10, default=lambda v: v)) == 20.0
    assert float(lax.platform_dependent(2.0, cuda=lambda v: v * 10, default=lambda v: v)) == 2.0


def test_rng_uniform() -> None:
    lax.seed_rng_uniform(0)
    a = lax.rng_uniform(2.0, 3.0, (1000,))
    assert a.shape == (1000,) and ((a >= 2.0) & (a < 3.0)).all()
    lax.seed_rng_uniform(0)
    np.testing.assert_array_equal(lax.rng_uniform(2.0, 3.0, (1000,)), a)
    i = lax.rng_uniform(np.int32(0), np.int32(5), (100,))
    assert i.dtype == np.int32 and set(np.unique(i)) <= set(range(5))
    f = ft.jit(lambda: lax.rng_uniform(0.0, 1.0, (4,)))
    assert not np.array_equal(f(), f())  # each call of a jitted function draws anew
    per_example = ft.vmap(lambda lo: lax.rng_uniform(lo, lo + 1.0, (3,)))(np.array([0.0, 10.0]))
    assert (per_example[0] < 1).all() and (per_example[1] >= 10).all()
    with pytest.raises(NotImplementedError, match="rng_uniform: expected bounds that are not"):
        ft.grad(lambda lo: lax.rng_uniform(lo, 2.0, ()))(0.0)
    with pytest.raises(ValueError, match="expected scalar bounds"):
        lax.rng_uniform(np.zeros(2), np.ones(2), (2,))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: lax.reciprocal(np.array([2])), TypeError, "reciprocal: expected a floating"),
        (lambda: lax.cbrt(np.array([8])), TypeError, "cbrt: expected a real floating"),
        (lambda: lax.bessel_i0e(np.array([1])), TypeError, "bessel_i0e: expected a real floating"),
        (
            lambda: lax.zeta(np.float64(2.0), np.float32(1.0)),
            TypeError,
            "zeta: expected operands of equal dtype",
        ),
        (
            lambda: lax.population_count(np.array([True])),
            TypeError,
            "population_count: expected an integer",
        ),
        (lambda: lax.clz(np.array([1.0])), TypeError, "clz: expected an integer"),
        (
            lambda: lax.mulhi(np.array([1], np.int32), np.array([1])),
            TypeError,
            "mulhi: expected operands of equal dtype",
        ),
        (
            lambda: lax.shift_right_logical(np.ones(2), np.ones(2)),
            TypeError,
            "shift_right_logical: expected integer",
        ),
        (lambda: lax.reduce_precision(np.ones(2), 0, 2), ValueError, "exponent_bits >= 1"),
        (lambda: lax.reduce_precision(np.ones(2), 5, -1), ValueError, "mantissa_bits >= 0"),
        (
            lambda: lax.reduce_precision(np.array([1]), 5, 2),
            TypeError,
            "reduce_precision: expected a float16",
        ),
        (
            lambda: lax.split(np.arange(6.0), (1, 2)),
            ValueError,
            "split: expected sizes adding up to 6",
        ),
        (
            lambda: lax.split(np.arange(6.0), (-1, 7)),
            ValueError,
            "split: expected non-negative sizes",
        ),
        (
            lambda: lax.tile(np.ones((2, 3)), (2,)),
            TypeError,
            "tile: expected one repetition count per axis",
        ),
        (lambda: lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5))), ValueError, "same rank"),
        (lambda: lax.batch_matmul(np.ones(4), np.ones(4)), ValueError, "rank 2 or more"),
        (
            lambda: lax.collapse(np.ones((2, 3, 4)), 2, 1),
            ValueError,
            "collapse: expected 0 <= start <= stop",
        ),
        (
            lambda: lax.broadcasted_iota(np.int32, (2, 3), 2),
            ValueError,
            "broadcasted_iota: expected a dimension",
        ),
        (
            lambda: lax.broadcast(np.ones(3), (-1,)),
            ValueError,
            "broadcast: expected non-negative sizes",
        ),
        (
            lambda: lax.platform_dependent(1.0, cuda=lambda v: v),
            NotImplementedError,
            "expected a 'cpu' branch",
        ),
        (lambda: lax.real(np.array([1])), TypeError, "real: expected a floating-point or complex"),
        (
            lambda: lax.complex(np.ones(2), np.ones(3)),
            ValueError,
            "complex: expected operands of equal shape",
        ),
    ],
)
def test_errors(call: Any, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_full_like_traced_fill_and_shape_as_jax() -> None:
    # JAX 0.10.2's lax.full_like(x, fill_value, dtype=None, shape=None, sharding=None)
    x = np.ones((2, 3), np.float32)
    for f in (lambda v: lax.full_like(x, v), ft.jit(lambda v: lax.full_like(x, v))):
        got = f(2.5)
        assert got.dtype == np.float32 and got.shape == (2, 3) and np.all(got == 2.5)
    got = ft.jit(lambda v: lax.full_like(x, v, shape=(3,)))(np.float64(2.5))
    assert got.dtype == np.float32 and got.tolist() == [2.5, 2.5, 2.5]
    got = ft.vmap(lambda v: lax.full_like(x, v))(np.array([1.0, 2.0]))
    assert got.shape == (2, 2, 3) and got.dtype == np.float32
    np.testing.assert_array_equal(got[:, 0, 0], [1.0, 2.0])
    got = ft.vmap(lambda v: lax.full_like(x, v, shape=(2,)))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(got, [[1.0, 1.0], [2.0, 2.0]])
    # differentiable in the fill value: d/dv sum(full_like(x, v) * x) = sum(x)
    for g in (
        ft.grad(lambda v: fnp.sum(lax.full_like(x, v) * x)),
        ft.jit(ft.grad(lambda v: fnp.sum(lax.full_like(x, v) * x))),
    ):
        assert float(g(2.0)) == 6.0
    r = ft.grad(lambda v: fnp.sum(lax.full_like(x, v)))(np.float32(2.0))
    assert r.dtype == np.float32 and float(r) == 6.0
    assert float(ft.grad(lambda v: fnp.sum(lax.full_like(x, v, np.int32)) * 1.0)(2.0)) == 0.0
    ft.check_grads(lambda v: lax.full_like(np.ones(3), v, shape=(2, 2)) * v, (1.5,), 2)
    # shape= as JAX takes it: an int, a sequence (NumPy ints too), () for a scalar
    for shape, want in [(4, (4,)), ([2, np.int64(2)], (2, 2)), ((), ()), (np.array([3]), (3,))]:
        got = lax.full_like(x, 7, np.int8, shape)
        assert np.shape(got) == want and np.asarray(got).dtype == np.int8
    # weakly typed when x is and no dtype is given (JAX: float32 below)
    assert ft.jit(lambda s: lax.full_like(s, 2) * np.float32(1))(1.0).dtype == np.float32
    assert ft.jit(lambda s: lax.full_like(s, 2, np.float64) * np.float32(1))(1.0).dtype == (
        np.float64
    )


def test_full_like_errors_as_jax() -> None:
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"full_like: expected a scalar fill_value, got .*\(3,\)"):
        lax.full_like(x, np.ones(3))
    with pytest.raises(TypeError, match=r"full_like: expected a scalar fill_value"):
        ft.jit(lambda v: lax.full_like(x, v))(np.ones(3))
    with pytest.raises(TypeError, match=r"full_like: expected a shape of non-negative"):
        lax.full_like(x, 1.0, shape=(-1,))
    for bad in [(2.0,), "ab"]:
        with pytest.raises(TypeError, match=r"full_like: expected shape to be an int"):
            lax.full_like(x, 1.0, shape=bad)
    with pytest.raises(TypeError, match=r"full_like: expected shape to be an int"):
        ft.jit(lambda n: lax.full_like(x, 1.0, shape=(n,)))(3)


def test_second_derivative_of_abs_of_complex_values_as_jax() -> None:
    # JAX 0.10.2 (x64): the JVP of grad(|z|) at 1+2j; the rule went through sign(z),
    # whose derivative is zero, and gave 0 here
    z = np.complex128(1 + 2j)
    g = ft.grad(lambda v: fnp.abs(v))
    np.testing.assert_allclose(g(z), 0.4472135954999579 - 0.8944271909999159j)
    for t, want in ((1.0 + 0j, 0.35777088 + 0.17888544j), (1j, -0.17888544 - 0.08944272j)):
        np.testing.assert_allclose(ft.jvp(g, (z,), (np.complex128(t),))[1], want, rtol=1e-7)
    # 0 at z = 0, and the same under jit
    zs = np.array([1 + 2j, 0, 3j])
    want = [0.4472135954999579 - 0.8944271909999159j, 0, -1j]
    np.testing.assert_allclose(ft.jit(ft.grad(lambda v: fnp.abs(v).sum()))(zs), want)
