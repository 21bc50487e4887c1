"""Regression tests for items 7 and 8 of the "Trust" issue.

* item 7: derivatives of linear algebra and at kinks: ``eigh``/``eigvalsh`` (and
  ``cholesky``) differentiate exactly the triangle they read; ``min``/``max``
  reductions' JVPs split ties evenly and agree with finite differences; ``pinv``
  to second order; ``hypot`` at the origin;
* item 8: ``functrace.testing.numerical_grad``/``check_grads`` on integer (clear
  error) and low-precision float inputs (finite differences in float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace.jit import jit
from functrace.testing import numerical_grad

L = fnp.linalg


def _fd_grad(f: Any, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of scalar ``f`` (NumPy in, float out), entry by entry."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        g[idx] = (float(f(a + d)) - float(f(a - d))) / (2 * eps)
    return g


def _nonsymmetric(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # eigenvalues of either triangle's symmetric matrix well apart
    return rng.uniform(-1, 1, (n, n)) + np.diag(3.0 * np.arange(n))


# gauge-invariant functions of (w, v): unchanged when a column of v changes sign
_WEIGHTS = np.array([0.3, -1.2, 2.0, 0.7])


def _eig_funcs(uplo: str) -> dict[str, Any]:
    def values(a: Any) -> Any:
        w = L.eigh(a, UPLO=uplo).eigenvalues
        return fnp.sum(w * _WEIGHTS[: w.shape[0]] + w**2)

    def vectors(a: Any) -> Any:
        w, v = L.eigh(a, UPLO=uplo)
        n = w.shape[0]
        return fnp.sum(v**2 * fnp.reshape(_WEIGHTS[:n], (n, 1)) * fnp.sin(w))

    def projector(a: Any) -> Any:
        w, v = L.eigh(a, UPLO=uplo)
        p = v @ (fnp.reshape(fnp.tanh(w), (-1, 1)) * v.T)
        return fnp.sum(p * np.arange(p.size, dtype=float).reshape(p.shape))

    def eigvalsh(a: Any) -> Any:
        return fnp.sum(fnp.exp(0.3 * L.eigvalsh(a, UPLO=uplo)) * _WEIGHTS[: a.shape[0]])

    return {"values": values, "vectors": vectors, "projector": projector, "eigvalsh": eigvalsh}


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("which", ["values", "vectors", "projector", "eigvalsh"])
def test_item7_eigh_gradient_reads_one_triangle(uplo: str, which: str) -> None:
    f = _eig_funcs(uplo)[which]
    for n, seed in [(2, 0), (3, 1), (4, 2)]:
        a = _nonsymmetric(n, seed)
        # the values are NumPy's (one triangle read), the gradient that of this function
        np.testing.assert_allclose(
            L.eigh(a, UPLO=uplo).eigenvalues,
            np.linalg.eigh(a, UPLO=uplo).eigenvalues,
            rtol=1e-12,
        )
        g = ft.grad(f)(a)
        np.testing.assert_allclose(g, _fd_grad(f, a), rtol=1e-6, atol=1e-7)
        unread = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
        np.testing.assert_array_equal(unread, 0)
        # JVP along a direction perturbing both triangles
        t = np.random.default_rng(seed + 10).normal(size=a.shape)
        fd = (float(f(a + 1e-6 * t)) - float(f(a - 1e-6 * t))) / 2e-6
        np.testing.assert_allclose(ft.jvp(f, (a,), (t,))[1], fd, rtol=1e-6, atol=1e-7)
    ft.check_grads(f, (_nonsymmetric(3, 5),), order=2, modes=("fwd", "rev"))


def test_item7_eigh_read_triangle_counts_for_both_positions() -> None:
    # with S = T + T^T - diag(T), dS/dT_ij (i > j) moves S_ij and S_ji together
    a = _nonsymmetric(3, 3)
    s = np.tril(a) + np.tril(a, -1).T
    w, v = np.linalg.eigh(s)
    g = ft.grad(lambda a: L.eigvalsh(a)[1])(a)
    sym = np.outer(v[:, 1], v[:, 1])
    np.testing.assert_allclose(g, np.tril(2 * sym) - np.diag(np.diag(sym)), atol=1e-12)
    gu = ft.grad(lambda a: L.eigvalsh(a, UPLO="U")[1])(a.T)
    np.testing.assert_allclose(gu, (np.tril(2 * sym) - np.diag(np.diag(sym))).T, atol=1e-12)


def test_item7_cholesky_gradient_reads_one_triangle() -> None:
    rng = np.random.default_rng(4)
    b = rng.normal(size=(3, 3))
    a = b @ b.T + 3 * np.eye(3) + np.triu(rng.uniform(-2, 2, (3, 3)), 1)  # not symmetric
    w = np.arange(9.0).reshape(3, 3)
    for upper in (False, True):

        def f(a: Any, upper: bool = upper) -> Any:
            return fnp.sum(fnp.sin(L.cholesky(a if not upper else a.T, upper=upper)) * w)

        g = ft.grad(f)(a)
        np.testing.assert_allclose(g, _fd_grad(f, a), rtol=1e-6, atol=1e-7)
        ft.check_grads(f, (a,), order=2)


def test_item7_eigh_under_vmap_and_jit() -> None:
    stack = np.stack([_nonsymmetric(3, s) for s in range(4)])
    for uplo in ("L", "U"):
        f = _eig_funcs(uplo)["projector"]
        g = ft.vmap(ft.grad(f))(stack)
        for k in range(4):
            np.testing.assert_allclose(g[k], _fd_grad(f, stack[k]), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(jit(ft.vmap(ft.grad(f)))(stack), g, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jit(ft.grad(f))(stack[1]), g[1], rtol=1e-10, atol=1e-12)
        w, v = jit(lambda a, uplo=uplo: tuple(L.eigh(a, UPLO=uplo)))(stack)
        w_np, v_np = np.linalg.eigh(stack, UPLO=uplo)
        np.testing.assert_allclose(w, w_np, rtol=1e-12)
        np.testing.assert_allclose(np.abs(v), np.abs(v_np), atol=1e-12)
        wv = ft.vmap(lambda a, uplo=uplo: L.eigvalsh(a, UPLO=uplo))(stack)
        np.testing.assert_allclose(wv, w_np, rtol=1e-12)


# ---------------------------------------------------------------------------
# item 7: JVPs of max/min reductions (ties split evenly, NaN entries are the extremum)
# ---------------------------------------------------------------------------


def _extremum_jvp_reference(
    x: np.ndarray, t: np.ndarray, axis: Any, keepdims: bool, is_max: bool
) -> np.ndarray:
    """The documented convention: the mean of the tangent over the positions of the
    extremum (the tied entries, or the NaN entries when the result is NaN)."""
    ans = (np.max if is_max else np.min)(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        at = (x == ans) | (np.isnan(x) & np.isnan(ans))
    return np.sum(t * at, axis=axis, keepdims=keepdims) / np.sum(at, axis=axis, keepdims=keepdims)


@st.composite
def _reduction_cases(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, bool]:
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    nd = len(shape)
    size = int(np.prod(shape))
    # a few values only, so ties are common; infinities and NaN too
    vals = st.sampled_from([0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])
    x = np.array(draw(st.lists(vals, min_size=size, max_size=size)), float).reshape(shape)
    axes: list[Any] = [st.none()]
    if nd:
        axes += [st.integers(-nd, nd - 1), st.lists(st.integers(0, nd - 1), unique=True).map(tuple)]
    axis = draw(st.one_of(*axes))
    t = np.random.default_rng(draw(st.integers(0, 2**16))).normal(size=shape)
    return x, t, axis, draw(st.booleans())


@given(_reduction_cases(), st.sampled_from(["max", "min", "amax", "amin"]))
def test_item7_max_min_jvp_ties_inf_nan(case: Any, name: str) -> None:
    x, t, axis, keepdims = case
    f = getattr(fnp, name)
    out, tan = ft.jvp(lambda x: f(x, axis=axis, keepdims=keepdims), (x,), (t,))
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis, keepdims=keepdims))
    ref = _extremum_jvp_reference(x, t, axis, keepdims, name.endswith("max"))
    assert not np.isnan(ref).any()
    np.testing.assert_allclose(tan, ref, rtol=1e-12, atol=1e-12)
    # reverse mode is the transpose: <vjp(ct), t> == <ct, jvp(t)>
    _, f_vjp = ft.vjp(lambda x: f(x, axis=axis, keepdims=keepdims), x)
    ct = np.random.default_rng(1).normal(size=np.shape(out))
    np.testing.assert_allclose(np.sum(f_vjp(ct)[0] * t), np.sum(ct * ref), rtol=1e-10, atol=1e-12)
    # the primitive, under jit
    ax = tuple(range(x.ndim)) if axis is None else axis
    ax = (ax % x.ndim,) if isinstance(ax, int) else ax
    prim = lax.reduce_max if name.endswith("max") else lax.reduce_min
    tan_p = jit(lambda x, t: ft.jvp(lambda x: prim(x, ax), (x,), (t,))[1])(x, t)
    ref_p = _extremum_jvp_reference(x, t, ax, False, name.endswith("max"))
    np.testing.assert_allclose(tan_p, ref_p, rtol=1e-12, atol=1e-12)


def test_item7_max_min_jvp_matches_finite_differences_without_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 2))
    for axis in (None, 0, -1, (0, 2), (1,)):
        for keepdims in (False, True):
            for f in (fnp.max, fnp.min):
                ft.check_grads(
                    lambda x, f=f, axis=axis, k=keepdims: f(x, axis=axis, keepdims=k), (x,), order=2
                )


def test_item7_max_with_nan_gives_the_tangent_to_the_nan_entries() -> None:
    x = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, 5.0]])
    g = ft.grad(lambda x: fnp.sum(fnp.max(x, axis=1)))(x)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0], [0.0, 0.5, 0.5]])
    g = ft.grad(lambda x: fnp.sum(fnp.min(x, axis=1) * np.array([1.0, 2.0])))(x)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
    g = ft.grad(lambda x: fnp.max(x))(np.array([np.nan, 0.0, np.nan]))
    np.testing.assert_array_equal(g, [0.5, 0.0, 0.5])


# ---------------------------------------------------------------------------
# item 7: pinv to second order
# ---------------------------------------------------------------------------


def _well_conditioned(m: int, n: int, seed: int) -> np.ndarray:
    """Full rank, singular values distinct and in [1, 3] (finite differences of the
    second derivative are accurate there: it grows like 1 / s^3)."""
    rng = np.random.default_rng(seed)
    k = min(m, n)
    u = np.linalg.qr(rng.normal(size=(m, k)))[0]
    v = np.linalg.qr(rng.normal(size=(n, k)))[0]
    s = np.linspace(3.0, 1.0, k) + rng.uniform(0, 0.2, k)
    return (u * s) @ v.T


@settings(max_examples=8)  # each example runs two order-2 checks
@given(
    st.sampled_from([(1, 1), (2, 2), (3, 3), (4, 2), (5, 3), (2, 4), (3, 5), (1, 3), (3, 1)]),
    st.integers(0, 2**16),
)
def test_item7_pinv_second_order(shape: tuple[int, int], seed: int) -> None:
    a = _well_conditioned(*shape, seed)
    np.testing.assert_allclose(L.pinv(a), np.linalg.pinv(a), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(seed).normal(size=shape[::-1])
    ft.check_grads(lambda a: fnp.sum(fnp.sin(L.pinv(a)) * w), (a,), order=2, modes=("fwd", "rev"))
    ft.check_grads(L.pinv, (a,), order=2, modes=("fwd", "rev"), seed=seed)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_item7_pinv_second_derivatives_agree_across_modes(shape: tuple[int, int]) -> None:
    # fwd-over-fwd, rev-over-fwd and fwd-over-rev give one Hessian, equal to a
    # Richardson-extrapolated difference of the exact first derivative
    def f(a: Any) -> Any:
        return fnp.sum(fnp.sin(L.pinv(a)))

    a = _well_conditioned(*shape, 7)
    rng = np.random.default_rng(1)
    t1, t2 = rng.normal(size=shape), rng.normal(size=shape)

    def d1(a: Any) -> Any:
        return ft.jvp(f, (a,), (t1,))[1]

    ff = ft.jvp(d1, (a,), (t2,))[1]
    rf = np.sum(ft.grad(d1)(a) * t2)
    fr = np.sum(ft.jvp(ft.grad(f), (a,), (t2,))[1] * t1)

    def fd(h: float) -> float:
        return (float(d1(a + h * t2)) - float(d1(a - h * t2))) / (2 * h)

    richardson = (4 * fd(1e-5) - fd(2e-5)) / 3
    np.testing.assert_allclose([rf, fr], [ff, ff], rtol=1e-12)
    np.testing.assert_allclose(ff, richardson, rtol=1e-8)


# ---------------------------------------------------------------------------
# item 7: hypot at the origin
# ---------------------------------------------------------------------------


def _hypot_v(v: Any) -> Any:
    return fnp.hypot(v[..., 0], v[..., 1])


def test_item7_hypot_gradient_at_origin_is_zero() -> None:
    h = fnp.hypot
    assert ft.grad(h, argnums=(0, 1))(0.0, 0.0) == (0.0, 0.0)
    assert ft.grad(h, argnums=(0, 1))(-0.0, 0.0) == (0.0, 0.0)
    # higher orders at the origin: zero, never NaN
    assert ft.grad(ft.grad(h))(0.0, 0.0) == 0.0
    assert ft.grad(ft.grad(ft.grad(h, argnums=1)))(0.0, 0.0) == 0.0
    np.testing.assert_array_equal(ft.hessian(_hypot_v)(np.zeros(2)), np.zeros((2, 2)))
    np.testing.assert_array_equal(ft.jacfwd(ft.jacrev(_hypot_v))(np.zeros(2)), np.zeros((2, 2)))
    # elementwise, under jit and vmap, float32 too
    x = np.array([0.0, 3.0, 0.0, -1.0])
    y = np.array([0.0, 4.0, 2.0, 0.0])
    want = np.array([[0.0, 0.6, 0.0, -1.0], [0.0, 0.8, 1.0, 0.0]])
    g = jit(ft.grad(lambda x, y: fnp.sum(fnp.hypot(x, y)), argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(np.array(g), want, rtol=1e-15)
    gv = ft.vmap(ft.grad(h, argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(np.array(gv), want, rtol=1e-15)
    g32 = ft.grad(h, argnums=(0, 1))(np.float32(0), np.float32(0))
    assert g32 == (0.0, 0.0) and g32[0].dtype == np.float32
    np.testing.assert_array_equal(fnp.hypot(x, y), np.hypot(x, y))


@pytest.mark.parametrize("r", [1e-3, 1e-8, 1e-100])
def test_item7_hypot_second_order_near_origin_is_finite_and_right(r: float) -> None:
    for angle in (0.0, 0.7, np.pi / 2, 2.5):
        v = r * np.array([np.cos(angle), np.sin(angle)])
        g = ft.grad(_hypot_v)(v)
        np.testing.assert_allclose(g, v / r, rtol=1e-12, atol=1e-15)
        hess = ft.hessian(_hypot_v)(v)
        # the Hessian of |v|: (I - u u^T) / |v| with u = v / |v|
        u = v / r
        np.testing.assert_allclose(hess, (np.eye(2) - np.outer(u, u)) / r, rtol=1e-9, atol=1e-6 / r)
        assert np.isfinite(ft.jacfwd(ft.jacrev(_hypot_v))(v)).all()
    # finite differences away from the kink, to second order
    ft.check_grads(fnp.hypot, (np.array([3.0, -0.1, 2.0]), np.array([4.0, 0.2, 0.0])), order=2)


# ---------------------------------------------------------------------------
# item 8: numerical_grad / check_grads on integer and low-precision inputs
# ---------------------------------------------------------------------------


def test_item8_integer_inputs_raise_naming_the_argument() -> None:
    def f(x: Any, y: Any = 1.0) -> Any:
        return fnp.sum(x**3) * y

    for bad in (np.array([1, 2]), 3, np.array([True, False]), np.int32(2)):
        with pytest.raises(
            TypeError, match=r"numerical_grad: expected floating-point .* argument 0"
        ):
            numerical_grad(f, (bad,))
        with pytest.raises(TypeError, match=r"check_grads: expected floating-point .* argument 0"):
            ft.check_grads(f, (bad,))
    with pytest.raises(TypeError, match=r"got dtype int64 for argument 1 \(leaf 1\)"):
        ft.check_grads(lambda x, p: f(x, p["a"] + p["b"]), (np.ones(2), {"a": 1.0, "b": 2}))
    with pytest.raises(TypeError, match=r"got dtype int64 for argument 1"):
        numerical_grad(f, (np.ones(2), 2))


_LOW = [np.float16, np.float32]


def _funcs() -> dict[str, Any]:
    return {
        "cube": lambda x: fnp.sum(x**3),
        "sin_tanh": lambda x: fnp.sum(fnp.sin(x) * fnp.tanh(0.5 * x)),
        "softplus": lambda x: fnp.mean(fnp.log1p(fnp.exp(x)) * x),
        "outer": lambda x: fnp.sum(fnp.outer(x.ravel(), x.ravel()) ** 2) * 1e-2,
    }


@given(
    st.lists(st.integers(1, 4), min_size=0, max_size=2),
    st.sampled_from(_LOW),
    st.sampled_from(sorted(_funcs())),
    st.integers(0, 2**16),
)
def test_item8_low_precision_inputs_right_numbers_no_false_alarms(
    shape: list[int], dtype: Any, name: str, seed: int
) -> None:
    f = _funcs()[name]
    x64 = np.random.default_rng(seed).uniform(-1.5, 1.5, tuple(shape))
    x = x64.astype(dtype)
    exact = ft.grad(f)(x.astype(np.float64))  # at the same (rounded) point, in float64
    g = numerical_grad(f, (x,))[0]
    assert np.asarray(g).dtype == dtype
    np.testing.assert_allclose(np.asarray(g, np.float64), exact, rtol=2e-3, atol=2e-3)
    # float64 differences of a low-precision point: as accurate as float64 ones
    g64 = numerical_grad(f, (x.astype(np.float64),))[0]
    np.testing.assert_allclose(np.asarray(g, np.float64), g64, rtol=1e-3, atol=1e-3)
    ft.check_grads(f, (x,), order=2, modes=("fwd", "rev"), seed=seed)


def test_item8_integer_input_no_longer_gives_wrong_numbers() -> None:
    # the example: the gradient of sum(x**3) at [1, 2] is [3, 12]
    with pytest.raises(TypeError, match="numerical_grad"):
        numerical_grad(lambda x: fnp.sum(x**3), (np.array([1, 2]),))
    g = numerical_grad(lambda x: fnp.sum(x**3), (np.array([1, 2], np.float16),))[0]
    np.testing.assert_array_equal(g, np.array([3.0, 12.0], np.float16))
    assert g.dtype == np.float16
    g = numerical_grad(lambda x, y: x * y**2, (np.float16(3.0), np.float32(2.0)))
    assert g == (4.0, 12.0) and g[0].dtype == np.float16 and g[1].dtype == np.float32


def test_item8_low_precision_check_grads_still_catches_wrong_derivatives() -> None:
    @ft.custom_jvp
    def bad_sin(x: Any) -> Any:
        return fnp.sin(x)

    @bad_sin.defjvp
    def _bad_sin_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return fnp.sin(x), 1.2 * fnp.cos(x) * t  # 20% off

    for dtype in (np.float16, np.float32, np.float64):
        # (outputs of order 1-10: the tolerances are absolute and relative)
        x = np.array([0.3, -0.8, 1.1, 0.1, -1.4, 0.6], dtype)
        for mode in ("fwd", "rev"):
            with pytest.raises(AssertionError, match=f"mode '{mode}', order 1"):
                ft.check_grads(lambda x: 4 * fnp.sum(bad_sin(x)), (x,), modes=(mode,))
        ft.check_grads(lambda x: 4 * fnp.sum(fnp.sin(x)), (x,), order=2)


def test_item8_mixed_precision_uses_the_loosest_tolerance() -> None:
    # a float16 leaf next to a float64 one: its gradient is float16, checked at float16
    # tolerance, while the differences are float64 throughout
    w = np.array([0.5, -1.25, 2.0], np.float16)
    b = np.array([0.1, 0.2, -0.3])
    ft.check_grads(lambda w, b: fnp.sum(fnp.tanh(w * b + b) ** 2), (w, b), order=2)
    gw, gb = numerical_grad(lambda w, b: fnp.sum(fnp.tanh(w * b + b) ** 2), (w, b))
    ew, eb = ft.grad(lambda w, b: fnp.sum(fnp.tanh(w * b + b) ** 2), argnums=(0, 1))(
        w.astype(np.float64), b
    )
    np.testing.assert_allclose(gw.astype(np.float64), ew, rtol=2e-3)
    np.testing.assert_allclose(gb, eb, rtol=1e-7)
    assert gw.dtype == np.float16 and gb.dtype == np.float64
