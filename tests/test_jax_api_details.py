"""API details real JAX programs use (item 6 of the "JAX programs run unchanged" issue).

Expected values are computed with NumPy here; JAX's conventions (return structures,
exception types, argument names) were checked against JAX 0.10.2.
"""

from functools import partial

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax

X = np.array([1.0, 2.0, 3.0])


# -- custom_jvp.defjvps, keyword arguments ----------------------------------------


def test_item6_defjvps_one_rule_per_argument():
    @ft.custom_jvp
    def f(x, y):
        return fnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, None)
    assert np.isclose(ft.grad(f)(1.0, 2.0), 2 * np.cos(1.0))
    assert ft.grad(f, argnums=1)(1.0, 2.0) == 0.0  # None: no contribution
    _, t = ft.jvp(f, (1.0, 2.0), (1.0, 1.0))
    assert np.isclose(t, 2 * np.cos(1.0))
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(X, np.ones(3)), np.cos(X))

    g = ft.custom_jvp(lambda x, y: x * y)
    g.defjvps(lambda t, ans, x, y: t * y, lambda t, ans, x, y: t * x)
    assert ft.grad(g, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    with pytest.raises(TypeError, match="one tangent function"):
        h = ft.custom_jvp(lambda x, y: x * y)
        h.defjvps(None)
        ft.grad(h)(1.0, 2.0)


def test_item6_vmap_keyword_arguments_mapped_over_axis0():
    np.testing.assert_allclose(ft.vmap(lambda x, y: x * y)(X, y=X), X * X)
    np.testing.assert_allclose(ft.vmap(lambda x, y: x * y, in_axes=(None,))(2.0, y=X), 2 * X)
    out = ft.vmap(lambda x, y: x * y["a"])(X, y={"a": X})
    np.testing.assert_allclose(out, X * X)
    with pytest.raises(ValueError, match="keyword argument y"):
        ft.vmap(lambda x, y: x * y)(X, y=1.0)


def test_item6_custom_rules_keyword_arguments():
    @ft.custom_jvp
    def g(x, y=2.0):
        return x * y

    g.defjvp(lambda p, t: (g(*p), t[0] * p[1] + t[1] * p[0]))
    assert ft.grad(lambda x: g(x, y=3.0))(2.0) == 3.0
    assert ft.grad(lambda y: g(2.0, y=y))(3.0) == 2.0
    assert ft.grad(g)(2.0) == 2.0  # the default is filled in, as in JAX

    @ft.custom_vjp
    def h(x, y):
        return x * y

    h.defvjp(lambda x, y: (x * y, (x, y)), lambda r, c: (c * r[1], c * r[0]))
    assert ft.grad(lambda x: h(x, y=3.0))(2.0) == 3.0
    assert ft.grad(lambda y: h(2.0, y=y))(3.0) == 2.0

    # nondiff_argnums counts positions after keywords are placed (JAX accepts this)
    @partial(ft.custom_jvp, nondiff_argnums=(1,))
    def nd(x, n):
        return x * n

    nd.defjvp(lambda n, p, t: (nd(p[0], n), t[0] * n))
    assert ft.grad(lambda x: nd(x, n=3.0))(2.0) == 3.0

    @partial(ft.custom_vjp, nondiff_argnums=(1,))
    def ndv(x, n):
        return x * n

    ndv.defvjp(lambda x, n: (x * n, None), lambda n, r, c: (c * n,))
    assert ft.grad(lambda x: ndv(x, n=3.0))(2.0) == 3.0

    @ft.custom_jvp
    def kwonly(x, *, s):
        return x * s

    kwonly.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(TypeError, match="keyword-only"):
        ft.grad(lambda x: kwonly(x, s=2.0))(1.0)


def test_custom_rules_of_partials_and_keyword_only_defaults():
    # A functools.partial's bound keyword (and fnp.sin's keyword-only parameter with a
    # default) were refused as keyword-only arguments; JAX leaves unpassed keyword-only
    # parameters to the function and treats a partial's signature as opaque.
    fw = partial(lambda x, y, a: x + y * a, a=0.1)
    fn = ft.custom_jvp(fw)
    fn.defjvp(lambda p, t: ft.jvp(fw, p, t))
    loss = lambda args: fn(*args)  # noqa: E731
    for g in (ft.grad(loss), ft.jit(ft.grad(loss))):
        assert g((1.0, 2.0)) == (1.0, 0.1)  # JAX: (1.0, 0.1)
    gx, gy = ft.vmap(ft.grad(loss))((X, X))
    np.testing.assert_array_equal(gx, [1.0] * 3)
    np.testing.assert_array_equal(gy, [0.1] * 3)
    fv = ft.custom_vjp(fw)
    fv.defvjp(lambda x, y: (fw(x, y), None), lambda r, c: (c, 0.1 * c))
    assert ft.grad(fv, argnums=(0, 1))(1.0, 2.0) == (1.0, 0.1)
    with pytest.raises(TypeError, match=r"positional arguments for 'partial'.*\['y'\]"):
        fn(1.0, y=2.0)

    s = ft.custom_jvp(fnp.sin)
    s.defjvp(lambda p, t: (s(*p), 2 * t[0]))  # 2 on purpose: the rule is used
    assert s(1.0) == np.sin(1.0)  # JAX: 0.8414709848078965
    assert ft.grad(s)(1.0) == 2.0 and ft.jit(ft.grad(s))(1.0) == 2.0
    np.testing.assert_array_equal(ft.vmap(ft.grad(s))(X), [2.0] * 3)

    @ft.custom_jvp
    def kw(x, *, s=3.0):
        return x * s

    kw.defjvp(lambda p, t: (kw(p[0]), t[0] * 3.0))
    assert kw(2.0) == 6.0 and ft.grad(kw)(2.0) == 3.0
    with pytest.raises(TypeError, match=r"keyword-only arguments \['s'\]"):
        kw(2.0, s=1.0)


# -- has_aux, jacobian, holomorphic ----------------------------------------------


def test_item6_has_aux_jacobians_and_linearize():
    fn = lambda x: (x * x, {"a": x})  # noqa: E731
    for jac in (ft.jacfwd, ft.jacrev, ft.jacobian):
        j, aux = jac(fn, has_aux=True)(X)
        np.testing.assert_allclose(j, np.diag(2 * X))
        np.testing.assert_allclose(aux["a"], X)
    out, f_jvp, aux = ft.linearize(fn, X, has_aux=True)
    np.testing.assert_allclose(out, X * X)
    np.testing.assert_allclose(f_jvp(np.ones(3)), 2 * X)
    np.testing.assert_allclose(aux["a"], X)
    h, aux = ft.hessian(lambda x: ((x**3).sum(), 7), has_aux=True)(X)
    np.testing.assert_allclose(h, np.diag(6 * X))
    assert aux == 7
    with pytest.raises(TypeError, match="jacrev: expected .* two-element tuple"):
        ft.jacrev(lambda x: x, has_aux=True)(X)
    np.testing.assert_allclose(ft.jacobian(fnp.sin)(X), np.diag(np.cos(X)))


def test_has_aux_without_a_pair_is_a_type_error_naming_the_function():
    def three(x):
        return x * x, x, x

    def one(x):
        return (x * x,)

    def bare(x):
        return x * x

    transforms = {
        "grad": lambda f: ft.grad(f, has_aux=True)(2.0),
        "value_and_grad": lambda f: ft.value_and_grad(f, has_aux=True)(2.0),
        "jacfwd": lambda f: ft.jacfwd(f, has_aux=True)(2.0),
        "jacrev": lambda f: ft.jacrev(f, has_aux=True)(2.0),
        "vjp": lambda f: ft.vjp(f, 2.0, has_aux=True),
        "jvp": lambda f: ft.jvp(f, (2.0,), (1.0,), has_aux=True),
        "linearize": lambda f: ft.linearize(f, 2.0, has_aux=True),
        "jit(grad)": lambda f: ft.jit(ft.grad(f, has_aux=True))(2.0),
        "vmap(grad)": lambda f: ft.vmap(ft.grad(f, has_aux=True))(X),
    }
    # JAX 0.10.2: "TypeError: expected function with aux output to return a two-element
    # tuple, but got ..." (a bare unpacking error before this change)
    for run in transforms.values():
        for f, got in ((three, "a tuple of 3 elements"), (one, "a tuple of 1 element")):
            with pytest.raises(TypeError, match=f"'{f.__name__}'.*two-element tuple.*{got}"):
                run(f)
        with pytest.raises(TypeError, match="'bare'.*two-element tuple.*got a traced value"):
            run(bare)
    # a list of two is accepted, as in JAX
    assert ft.grad(lambda x: [x * x, 2.0], has_aux=True)(3.0) == (6.0, 2.0)


def test_item6_holomorphic_differentiation_matches_jax():
    assert ft.grad(lambda x: x * x, holomorphic=False)(3.0) == 6.0
    np.testing.assert_allclose(ft.jacfwd(fnp.sin, holomorphic=False)(X), np.diag(np.cos(X)))
    # JAX 0.10.2 (x64): the complex derivative, the pullback of 1 (no conjugation)
    z = np.array([1 + 1j, 0.5 - 2j, -0.3 + 0.2j])
    assert ft.grad(lambda z: z**2, holomorphic=True)(1 + 1j) == 2 + 2j
    g = ft.grad(lambda z: fnp.sin(z) * fnp.exp(z), holomorphic=True)(0.3 - 0.7j)
    np.testing.assert_allclose(g, np.exp(0.3 - 0.7j) * (np.sin(0.3 - 0.7j) + np.cos(0.3 - 0.7j)))
    jf = ft.jacfwd(lambda z: fnp.cumsum(z * fnp.cos(z)), holomorphic=True)(z)
    jr = ft.jacrev(lambda z: fnp.cumsum(z * fnp.cos(z)), holomorphic=True)(z)
    want = np.tril(np.ones((3, 3))) * (np.cos(z) - z * np.sin(z))
    np.testing.assert_allclose(jf, want, rtol=1e-12)
    np.testing.assert_allclose(jr, want, rtol=1e-12)
    h = ft.hessian(lambda z: fnp.sum(z**3), holomorphic=True)(z)
    np.testing.assert_allclose(h, np.diag(6 * z), rtol=1e-12)
    # compositions: jit, vmap, grad of grad, two arguments
    np.testing.assert_allclose(
        ft.jit(ft.grad(fnp.tanh, holomorphic=True))(0.2 + 0.1j), 1 - np.tanh(0.2 + 0.1j) ** 2
    )
    np.testing.assert_allclose(
        ft.vmap(ft.grad(lambda z: fnp.exp(2 * z), holomorphic=True))(z), 2 * np.exp(2 * z)
    )
    g2 = ft.grad(ft.grad(lambda z: z**4, holomorphic=True), holomorphic=True)(1 + 1j)
    np.testing.assert_allclose(g2, 12 * (1 + 1j) ** 2)
    ga, gb = ft.grad(lambda a, b: a * fnp.log(b), (0, 1), holomorphic=True)(1 + 2j, 2 - 1j)
    np.testing.assert_allclose([ga, gb], [np.log(2 - 1j), (1 + 2j) / (2 - 1j)])
    # JAX's refusals: real inputs or outputs with holomorphic=True
    for call, match in (
        (lambda: ft.grad(lambda x: x**2, holomorphic=True)(1.0), "grad: with holomorphic=True"),
        (lambda: ft.grad(fnp.abs, holomorphic=True)(1 + 1j), "grad: with holomorphic=True"),
        (lambda: ft.jacfwd(fnp.abs, holomorphic=True)(z), "jacfwd: with holomorphic=True"),
        (lambda: ft.jacrev(fnp.sin, holomorphic=True)(X), "jacrev: with holomorphic=True"),
    ):
        with pytest.raises(TypeError, match=match):
            call()


# -- test_util.check_grads ---------------------------------------------------------


def test_item6_test_util_check_grads_signature_and_dtype_tolerances():
    from functrace.test_util import check_grads

    x32 = X.astype(np.float32)
    check_grads(fnp.sin, (x32,), 2, atol={np.float32: 1e-2, np.float64: 1e-6}, rtol=1e-2)
    check_grads(fnp.tanh, (X,), order=2, modes=["rev"], eps=1e-4)
    # the float64 entry applies to float64 inputs: an impossible tolerance fails
    with pytest.raises(AssertionError, match="mode 'fwd'"):
        check_grads(
            lambda x: x**3, (X,), 1, atol={np.float64: 1e-14}, rtol={np.float64: 0}, eps=0.1
        )
    with pytest.raises(TypeError, match="check_grads"):
        check_grads(fnp.sin, (np.arange(3),), 1)


# -- vjp / linearize functions as jit arguments ------------------------------------


def test_item6_vjp_and_linearize_functions_pass_into_jit():
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    expected = (np.cos(X) * X + np.sin(X)) * X
    _, pb = ft.vjp(f, X)
    (got,) = ft.jit(lambda pb, ct: pb(ct))(pb, X)
    np.testing.assert_allclose(got, expected)
    _, f_jvp = ft.linearize(f, X)
    np.testing.assert_allclose(ft.jit(lambda fj, t: fj(t))(f_jvp, X), expected)
    leaves = ft.tree_util.tree_leaves(pb)
    assert leaves and all(isinstance(v, np.ndarray) for v in leaves)
    # vmap over cotangents with the pullback as a closed-over pytree
    cts = np.stack([X, 2 * X])
    np.testing.assert_allclose(ft.vmap(lambda c: pb(c)[0])(cts), np.stack([expected, 2 * expected]))


# -- lax functions -----------------------------------------------------------------


def test_item6_lax_index_and_slice_in_dim():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(lax.index_in_dim(x, 1, axis=1, keepdims=False), x[:, 1])
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, axis=1), x[:, -1:])
    np.testing.assert_array_equal(lax.slice_in_dim(np.arange(6.0), 1, 5, stride=2), [1.0, 3.0])
    np.testing.assert_array_equal(lax.slice_in_dim(np.arange(6.0), -3, None), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 5, axis=1, keepdims=False), x[:, 2])
    jitted = ft.jit(lambda x, i: lax.dynamic_index_in_dim(x, i, axis=1))
    np.testing.assert_array_equal(jitted(x, -1), x[:, -1:])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(np.arange(6.0), -2, 2), [4.0, 5.0])
    up = lax.dynamic_update_index_in_dim(np.zeros((2, 3)), np.ones(2), 1, axis=1)
    np.testing.assert_array_equal(up, [[0, 1, 0], [0, 1, 0]])
    up2 = lax.dynamic_update_index_in_dim(np.zeros((2, 3)), np.ones((2, 1)), -1, axis=1)
    np.testing.assert_array_equal(up2, [[0, 0, 1], [0, 0, 1]])
    with pytest.raises(IndexError, match="index_in_dim"):
        lax.index_in_dim(x, 3, axis=1)
    g = ft.grad(lambda x: lax.dynamic_index_in_dim(x, 1, keepdims=False).sum())(x)
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, 1, 1]])


def test_item6_lax_sort_signature_sort_key_val_top_k():
    k, v = np.array([3, 1, 2]), np.array([10.0, 20.0, 30.0])
    sk, sv = lax.sort((k, v), num_keys=1)
    np.testing.assert_array_equal(sk, [1, 2, 3])
    np.testing.assert_array_equal(sv, [20.0, 30.0, 10.0])
    m = np.array([[3, 1, 2], [0, 5, 4]])
    np.testing.assert_array_equal(lax.sort(m, dimension=0), np.sort(m, axis=0))
    sk, sv = lax.sort_key_val(k, v)
    np.testing.assert_array_equal(sv, [20.0, 30.0, 10.0])
    vals, idx = lax.top_k(np.array([1.0, 3.0, 3.0, 2.0]), 2)
    np.testing.assert_array_equal(vals, [3.0, 3.0])
    np.testing.assert_array_equal(idx, [1, 2])  # ties in index order
    assert idx.dtype == np.int32
    vals, idx = ft.jit(lambda x: lax.top_k(x, 2))(np.array([[3.0, 1.0, 2.0, 5.0]]))
    np.testing.assert_array_equal(vals, [[5.0, 3.0]])
    np.testing.assert_array_equal(idx, [[3, 0]])
    g = ft.grad(lambda x: lax.top_k(x, 2)[0].sum())(np.array([1.0, 4.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0, 1, 1, 0])
    with pytest.raises(ValueError, match="top_k: expected k"):
        lax.top_k(X, 4)
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((k, v), num_keys=3)


def test_item6_lax_cumulative_select_clamp():
    x = np.array([1.0, 3.0, 2.0, 4.0])
    np.testing.assert_array_equal(lax.cumsum(x, axis=0, reverse=True), np.cumsum(x[::-1])[::-1])
    np.testing.assert_array_equal(lax.cumprod(x), np.cumprod(x))
    np.testing.assert_array_equal(lax.cummax(x), np.maximum.accumulate(x))
    np.testing.assert_array_equal(lax.cummin(x, reverse=True), np.minimum.accumulate(x[::-1])[::-1])
    pred = np.array([True, False, True, False])
    np.testing.assert_array_equal(lax.select(pred, x, -x), np.where(pred, x, -x))
    g = ft.grad(lambda x: lax.select(pred, x, 2 * x).sum())(x)
    np.testing.assert_array_equal(g, [1, 2, 1, 2])
    np.testing.assert_array_equal(lax.clamp(1.5, x, 3.0), np.clip(x, 1.5, 3.0))


def test_item6_lax_reduce_monoids():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(lax.reduce(x, 0.0, lax.add, (1,)), x.sum(1))
    np.testing.assert_array_equal(lax.reduce(x, 1.0, lax.add, (1,)), x.sum(1) + 1)  # init once
    np.testing.assert_array_equal(lax.reduce(x, 5.0, lax.max, (1,)), [5.0, 5.0])
    np.testing.assert_array_equal(lax.reduce(x, np.inf, fnp.minimum, (0,)), x.min(0))
    np.testing.assert_array_equal(lax.reduce(x + 1, 1.0, lax.mul, (0, 1)), np.prod(x + 1))
    assert not lax.reduce(np.array([True, False]), True, lax.bitwise_and, (0,))
    assert lax.reduce(np.array([True, False]), False, lax.bitwise_or, (0,))
    np.testing.assert_array_equal(ft.grad(lambda x: lax.reduce(x, 0.0, lax.add, (0, 1)))(x), 1.0)
    np.testing.assert_array_equal(
        ft.jit(lambda x: lax.reduce(x, -np.inf, lax.max, (0,)))(x), x.max(0)
    )
    # any other computation: pairwise rounds (associative and commutative, as XLA needs)
    np.testing.assert_allclose(lax.reduce(x, 0.0, lambda a, b: a + b * 1.0, (1,)), x.sum(1))
    np.testing.assert_array_equal(lax.reduce(np.ones((2, 0)), 5.0, fnp.logaddexp, (1,)), 5.0)
    with pytest.raises(TypeError, match="reduce: expected init_values of the operands'"):
        lax.reduce((x, x), (0.0,), lambda a, b: a, (0,))
    with pytest.raises(TypeError, match="reduce: expected the computation to return"):
        lax.reduce((x, x), (0.0, 0.0), lambda a, b: a[0] + b[0], (0,))
    with pytest.raises(TypeError, match="reduce: expected the computation to keep"):
        lax.reduce(x, 0.0, lambda a, b: (a + b).astype(np.float32), (0,))
    with pytest.raises(ValueError, match="reduce: expected operands of one shape"):
        lax.reduce((x, x[:1]), (0.0, 0.0), lambda a, b: a, (0,))
    # bitwise and/or of integers (pairwise rounds; JAX's values)
    assert lax.reduce(np.array([7, 5, 13]), np.int64(-1), lax.bitwise_and, (0,)) == 5
    assert lax.reduce(np.array([1, 4, 8]), np.int64(0), lax.bitwise_or, (0,)) == 13


def test_lax_polygamma_array_orders():
    # JAX's values; orders that are not non-negative integers give NaN
    got = lax.polygamma(np.array([1.0, 2.0, 1.5, -1.0]), np.array([1.5, 2.5, 1.5, 2.5]))
    np.testing.assert_allclose(got[:2], [0.9348022005446793, -0.23620405164172736], rtol=1e-12)
    assert np.isnan(got[2:]).all()
    with pytest.raises(ValueError, match="polygamma: expected a concrete order n, got a traced"):
        ft.jit(lambda n: lax.polygamma(n, np.ones(2)))(np.ones(2))


def test_item6_precision_and_preferred_element_type():
    f32 = np.ones(3, np.float32)
    m32 = np.ones((2, 3), np.float32)
    assert lax.dot(f32, f32, preferred_element_type=np.float64).dtype == np.float64
    assert lax.dot(m32, f32, precision=lax.Precision.HIGHEST).dtype == np.float32
    dims = (((1,), (0,)), ((), ()))
    out = lax.dot_general(m32, f32, dims, lax.Precision.HIGH, preferred_element_type=np.float64)
    assert out.dtype == np.float64
    assert fnp.dot(f32, f32, preferred_element_type=np.float64).dtype == np.float64
    assert fnp.matmul(m32, f32, precision="highest").dtype == np.float32
    e = fnp.einsum("i,i->", f32, f32, preferred_element_type=np.float64, precision=("high", "high"))
    assert e.dtype == np.float64 and e == 3.0
    jitted = ft.jit(lambda a: fnp.matmul(a, a, preferred_element_type=np.float64))
    assert jitted(f32).dtype == np.float64
    assert fnp.dot(np.ones(3), np.ones(3), preferred_element_type=np.float32).dtype == np.float32
    ints = np.arange(3, dtype=np.int32)
    assert lax.dot(ints, ints, preferred_element_type=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="dot: expected precision"):
        fnp.dot(f32, f32, precision="bogus")
    assert set(lax.Precision.__members__) == {"DEFAULT", "HIGH", "HIGHEST"}


def test_item6_dot_matmul_shape_errors_are_type_errors():
    for fn, name in ((fnp.dot, "dot"), (fnp.matmul, "matmul")):
        for a in (np.ones(3), fnp.asarray(np.ones(3))):
            with pytest.raises(TypeError, match=rf"{name}: .*\(3,\) and \(4,\)"):
                fn(a, np.ones(4))
        with pytest.raises(TypeError, match=rf"{name}: .*\(3,\) and \(4,\)"):
            ft.jit(fn)(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match=r"dot: .*\(2, 3\) and \(4, 5\)"):
        fnp.dot(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(TypeError, match=r"dot: .*\(3,\) and \(4,\)"):
        lax.dot(np.ones(3), np.ones(4))


# -- custom_jvp inside control flow under grad / jit / vmap ------------------------


@ft.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * lax.logistic(p[0])))


def _sp_chain_grad(x, n=3):
    # d/dx softplus^n(x), by the chain rule in NumPy
    g, v = 1.0, x
    for _ in range(n):
        g *= 1 / (1 + np.exp(-v))
        v = np.log1p(np.exp(v))
    return g


def test_item6_custom_jvp_inside_control_flow():
    def scanned(x):
        return lax.scan(lambda c, _: (_softplus(c), None), x, None, length=3)[0]

    def fori(x):
        return lax.fori_loop(0, 3, lambda i, c: _softplus(c), x)

    def cond(x):
        return lax.cond(x > 0, _softplus, lambda y: y, x)

    for f in (scanned, fori):
        assert np.isclose(ft.grad(f)(1.0), _sp_chain_grad(1.0))
        assert np.isclose(ft.jit(ft.grad(f))(1.0), _sp_chain_grad(1.0))
        np.testing.assert_allclose(ft.vmap(ft.grad(f))(X), [_sp_chain_grad(v) for v in X])
    assert np.isclose(ft.grad(cond)(1.0), _sp_chain_grad(1.0, 1))
    assert np.isclose(ft.jit(ft.grad(cond))(1.0), _sp_chain_grad(1.0, 1))
    np.testing.assert_allclose(ft.vmap(ft.grad(cond))(X), [_sp_chain_grad(v, 1) for v in X])

    def wl(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, _softplus(c[1])), (0, x))[1]

    _, t = ft.jvp(wl, (1.0,), (1.0,))
    assert np.isclose(t, _sp_chain_grad(1.0))
    _, t = ft.jit(lambda x: ft.jvp(wl, (x,), (1.0,)))(1.0)
    assert np.isclose(t, _sp_chain_grad(1.0))


# -- jit under other transforms: traced once per signature -------------------------


def test_item6_transforms_of_jit_do_not_retrace():
    calls = []

    def f(x):
        calls.append(1)
        return fnp.sin(x).sum()

    jf = ft.jit(f)
    for _ in range(3):
        g = ft.grad(jf)(X)
    np.testing.assert_allclose(g, np.cos(X))
    assert jf.trace_count == 1 and len(calls) == 1
    for _ in range(3):
        v = ft.vmap(jf)(np.ones((2, 3)))
    np.testing.assert_allclose(v, [3 * np.sin(1.0)] * 2)
    for _ in range(3):
        _, t = ft.jvp(jf, (X,), (X,))
    assert np.isclose(t, (np.cos(X) * X).sum())
    assert jf.trace_count == 1 and len(calls) == 1  # one signature: f64[3]
    ft.grad(jf)(X.astype(np.float32))
    assert jf.trace_count == 2  # a new signature is traced
    # closures over a value being differentiated still differentiate (not cached)
    assert ft.grad(lambda y: ft.jit(lambda z: (z * y).sum())(X))(2.0) == X.sum()
    h = ft.jit(lambda x, n, s=1.0: (x**n).sum() * s, static_argnums=1)
    np.testing.assert_allclose(ft.grad(h)(X, 2, s=2.0), 4 * X)
    # as in JAX, the jitted body is traced abstractly: Python control flow on values fails
    with pytest.raises(ft.ConcretizationError):
        ft.grad(ft.jit(lambda x: x if x > 0 else -x))(1.0)


# -- custom_jvp with Python control flow under eager jvp/grad ----------------------


def test_item6_custom_jvp_python_control_flow_eager():
    @ft.custom_jvp
    def absolute(x):
        return x if x > 0 else -x

    @absolute.defjvp
    def absolute_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return absolute(x), (t if x > 0 else -t)

    assert ft.grad(absolute)(2.0) == 1.0
    assert ft.grad(absolute)(-2.0) == -1.0
    assert ft.jvp(absolute, (-3.0,), (1.0,)) == (3.0, -1.0)
    assert ft.grad(ft.grad(absolute))(2.0) == 0.0
    # under jit values are abstract: a clear concretization error, as in JAX
    with pytest.raises(ft.ConcretizationError, match="custom_jvp of 'absolute'"):
        ft.jit(ft.grad(absolute))(2.0)

    # the rule is still used under every transform
    @ft.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * lax.logistic(p[0])))
    sig = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(ft.grad(lambda x: softplus(x).sum())(X), sig)
    np.testing.assert_allclose(ft.hessian(lambda x: softplus(x).sum())(X), np.diag(sig * (1 - sig)))
    np.testing.assert_allclose(ft.vmap(ft.grad(softplus))(X), sig)
    np.testing.assert_allclose(ft.grad(lambda x: ft.vmap(softplus)(x).sum())(X), sig)

    # a rule closing over a value being differentiated: a clear error
    def outer(y):
        k = ft.custom_jvp(lambda x: x * y)
        k.defjvp(lambda p, t: (k(p[0]), t[0] * y))
        return k(y)

    with pytest.raises(NotImplementedError, match="close over no value"):
        ft.grad(outer)(3.0)


# -- custom_vjp with Python control flow under eager grad/vjp ----------------------


def test_custom_vjp_python_control_flow_eager():
    # fwd (and the function it calls) ran on traced values: `if x > 0` raised
    # ConcretizationError under eager grad, where JAX calls fwd on concrete values.
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x) if x > 0 else fnp.cos(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (2 * g,) if x > 0 else (3 * g,))
    for _ in range(2):  # the branch taken is not baked into a reused recording
        v, g = ft.value_and_grad(f)(2.0)  # JAX: (0.90929743, 2.0)
        assert (v, g) == (np.sin(2.0), 2.0)
        v, g = ft.value_and_grad(f)(-2.0)  # JAX: (-0.41614684, 3.0)
        assert (v, g) == (np.cos(-2.0), 3.0)
    assert ft.vjp(f, -2.0)[1](1.0) == (3.0,)
    assert ft.grad(ft.grad(f))(2.0) == 0.0
    assert ft.grad(lambda y, x: f(x) * y)(2.0, 2.0) == np.sin(2.0)  # x not differentiated
    with pytest.raises(TypeError, match="custom_vjp function f"):
        ft.jvp(f, (2.0,), (1.0,))
    # under jit (and vmap) values are abstract: a clear concretization error, as in JAX
    for fn, x in ((ft.jit(ft.grad(f)), 2.0), (ft.grad(ft.jit(f)), 2.0), (ft.vmap(ft.grad(f)), X)):
        with pytest.raises(ft.ConcretizationError, match="custom_vjp of 'f'"):
            fn(x)

    # the rules are still used under every transform
    @ft.custom_vjp
    def g(x):
        return fnp.sin(x)

    g.defvjp(lambda x: (fnp.sin(x), 2 * fnp.cos(x)), lambda c, ct: (c * ct,))  # 2x on purpose
    loss = lambda x: g(x).sum()  # noqa: E731
    for grad in (ft.grad(loss), ft.jit(ft.grad(loss)), ft.vmap(ft.grad(g))):
        np.testing.assert_allclose(grad(X), 2 * np.cos(X), rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda x: ft.vmap(g)(x).sum())(X), 2 * np.cos(X))
    assert ft.grad(ft.grad(g))(0.5) == pytest.approx(-2 * np.sin(0.5), rel=1e-14)

    # fwd closing over a value being differentiated: a clear error
    def outer(y):
        k = ft.custom_vjp(lambda x: x * y)
        k.defvjp(lambda x: (x * y, None), lambda r, ct: (ct,))
        return k(y)

    with pytest.raises(NotImplementedError, match="fwd of .* close over no value"):
        ft.grad(outer)(3.0)


# -- jit(f).lower with ShapeDtypeStructs ---------------------------------------------


def test_item6_jit_lower_takes_shape_dtype_structs():
    def f(x, p):
        return fnp.sin(x) * p["w"] + 1.0

    x = np.array([0.5, 1.0, 2.0], np.float32)
    p = {"w": np.float32(3.0)}
    jf = ft.jit(f)
    spec = (ft.ShapeDtypeStruct((3,), np.float32), {"w": ft.ShapeDtypeStruct((), np.float32)})
    low = jf.lower(*spec)
    assert jf.trace_count == 1
    # the signature of a call with real arrays of that shape and dtype: not traced again
    out = jf(x, p)
    assert jf.trace_count == 1
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, f(x, p), rtol=1e-6)
    real = ft.jit(f).lower(x, p)
    assert low.as_text() == real.as_text()
    assert str(low.jaxpr) == str(real.jaxpr)
    assert str(low.traced_jaxpr) == str(ft.make_jaxpr(f)(x, p))


def test_jit_trace_lower_compile_stages_as_jax():
    # JAX 0.10.2: jit(f).trace(x).jaxpr, .out_info, .lower(); lower(x).compile()(x)
    def f(x, n):
        return {"a": fnp.log(1.0 + fnp.exp(x)) * n, "b": (x.sum(),)}

    jf = ft.jit(f, static_argnums=1)
    x = np.array([0.5, 1.0, 2.0], np.float32)
    traced = jf.trace(x, 2)
    assert str(traced.jaxpr) == str(ft.make_jaxpr(f, static_argnums=1)(x, 2))
    info = traced.out_info
    assert ft.tree_util.tree_structure(info) == ft.tree_util.tree_structure(f(x, 2))
    assert (info["a"].shape, info["a"].dtype, info["b"][0].shape) == ((3,), np.float32, ())
    assert traced.fun_name == "f"
    lowered = traced.lower()
    assert lowered.as_text() == jf.lower(x, 2).as_text()
    compiled = lowered.compile()
    assert jf.trace_count == 1
    # as JAX's: called without the static arguments, which it was compiled with
    out = compiled(x * 2)
    np.testing.assert_allclose(out["a"], f(x * 2, 2)["a"], rtol=1e-6)
    assert jf.trace_count == 1  # the compiled signature, not a new one
    # other shapes, dtypes or structures: a TypeError naming both signatures
    with pytest.raises(TypeError, match=r"lowered for \(f32\[3\], static argument 1 = 2\)"):
        compiled(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="got f64"):
        compiled(x.astype(np.float64))
    with pytest.raises(TypeError, match="not passed again"):
        compiled(x, 2)
    with pytest.raises(TypeError, match="takes concrete arguments"):
        ft.grad(lambda v: compiled(v)["b"][0])(x)
    assert jf.trace_count == 1
    # a Python scalar and a NumPy scalar of its dtype are alike (JAX 0.10.2)
    double = ft.jit(lambda v: v * 2)
    assert float(double.lower(np.float64(1.0)).compile()(2.0)) == 4.0
    assert float(double.lower(1.0).compile()(np.float64(3.0))) == 6.0
    # stand-ins trace the signature real arrays of that shape use
    spec = ft.ShapeDtypeStruct((3,), np.float32)
    assert jf.trace(spec, 2).lower().as_text() == lowered.as_text()
    # the jaxpr of a gradient, as JAX's docs print it
    log1pexp = ft.jit(ft.grad(lambda v: fnp.log(1.0 + fnp.exp(v))))
    prims = [e.primitive.name for e in log1pexp.trace(100.0).jaxpr.jaxpr.eqns]
    assert {"exp", "add", "log", "div", "mul"} <= set(prims)


# -- where(condition, size=, fill_value=), argwhere/flatnonzero with size -------------


def test_where_one_argument_form_with_size_and_fill_value():
    c = np.array([0, 1, 2, 0])
    m = np.array([[0, 1], [2, 0]])
    # JAX 0.10.2: ([1, 2, -1, -1],), ([0, 1, -1], [1, 0, -2])
    for where in (fnp.where, ft.jit(fnp.where, static_argnames=("size", "fill_value"))):
        (got,) = where(c, size=4, fill_value=-1)
        np.testing.assert_array_equal(got, [1, 2, -1, -1])
        rows, cols = where(m, size=3, fill_value=(-1, -2))
        np.testing.assert_array_equal(rows, [0, 1, -1])
        np.testing.assert_array_equal(cols, [1, 0, -2])
        np.testing.assert_array_equal(where(c, size=1)[0], [1])
    np.testing.assert_array_equal(fnp.where(fnp.asarray(c), size=3)[0], [1, 2, 0])
    out = ft.vmap(lambda c: fnp.where(c, size=2)[0])(np.array([[0, 1, 1], [1, 0, 0]]))
    np.testing.assert_array_equal(out, [[1, 2], [0, 0]])
    # the positions are integers: grad flows through what they index
    g = ft.grad(lambda x: x[fnp.where(x > 1.5, size=2, fill_value=0)[0]].sum())(np.arange(4.0))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="size and fill_value only with the one-argument"):
        fnp.where(c, 1.0, 2.0, size=2)
    with pytest.raises(ValueError, match="size and fill_value only with the one-argument"):
        ft.jit(lambda c: fnp.where(c, 1.0, 2.0, fill_value=0))(c)
    with pytest.raises(ft.errors.ConcretizationError, match="size="):
        ft.jit(lambda c: fnp.where(c))(c)


def test_argwhere_and_flatnonzero_with_size():
    m = np.array([[0, 1], [2, 0]])
    # JAX 0.10.2: [[0, 1], [1, 0], [-1, -1]] and [1, 2, -1]
    for run in (lambda f, a: f(a), lambda f, a: ft.jit(f)(a)):
        got = run(lambda a: fnp.argwhere(a, size=3, fill_value=-1), m)
        np.testing.assert_array_equal(got, [[0, 1], [1, 0], [-1, -1]])
        got = run(lambda a: fnp.flatnonzero(a, size=3, fill_value=-1), m)
        np.testing.assert_array_equal(got, [1, 2, -1])
        assert run(lambda a: fnp.argwhere(a, size=2), np.array(3)).shape == (2, 0)
    np.testing.assert_array_equal(fnp.argwhere(m, size=1), [[0, 1]])
    with pytest.raises(ft.errors.ConcretizationError, match="size="):
        ft.jit(fnp.argwhere)(m)


# -- vmap(spmd_axis_name=), make_jaxpr(return_shape=True) ---------------------------


def test_vmap_spmd_axis_name_is_accepted_and_binds_no_name():
    for name in ("x", ("x", "y"), 3):
        f = ft.vmap(lambda x: x * 2, spmd_axis_name=name)
        np.testing.assert_array_equal(f(X), 2 * X)
        np.testing.assert_array_equal(ft.jit(f)(X), 2 * X)
        np.testing.assert_array_equal(ft.grad(lambda x, f=f: f(x).sum())(X), [2.0, 2.0, 2.0])
    named = ft.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i", spmd_axis_name="x")
    np.testing.assert_allclose(named(X), X / 6.0)
    with pytest.raises(NameError, match="unbound axis name"):  # as JAX: not an axis name
        ft.vmap(lambda x: lax.psum(x, "x"), spmd_axis_name="x")(X)
    with pytest.raises(TypeError, match="spmd_axis_name to be a hashable"):
        ft.vmap(lambda x: x, spmd_axis_name=["x"])


def test_make_jaxpr_return_shape():
    def f(x):
        return x.sum(), {"a": x * 2, "b": 2.0}

    x = np.ones(2, np.float32)
    closed, shapes = ft.make_jaxpr(f, return_shape=True)(x)
    assert str(closed) == str(ft.make_jaxpr(f)(x))
    # JAX 0.10.2 (x64): f32[] , {'a': f32[2], 'b': weak f64[]}
    assert shapes == (
        ft.ShapeDtypeStruct((), np.float32),
        {
            "a": ft.ShapeDtypeStruct((2,), np.float32),
            "b": ft.ShapeDtypeStruct((), np.float64, weak_type=True),
        },
    )
    _, s = ft.make_jaxpr(lambda x, n: x * n, static_argnums=1, return_shape=True)(x, 3)
    assert s == ft.ShapeDtypeStruct((2,), np.float32)
    _, s = ft.make_jaxpr(ft.grad(lambda x: (x**2).sum()), return_shape=True)(np.ones(3))
    assert s == ft.ShapeDtypeStruct((3,), np.float64)
    _, s = ft.make_jaxpr(ft.vmap(lambda x: x.sum()), return_shape=True)(np.ones((4, 3)))
    assert s == ft.ShapeDtypeStruct((4,), np.float64)
    with pytest.raises(TypeError, match="return_shape to be a bool"):
        ft.make_jaxpr(f, return_shape="yes")
    with pytest.raises(NotImplementedError, match="axis_env"):
        ft.make_jaxpr(f, axis_env=[("i", 2)])


# -- copy.copy / copy.deepcopy of traced values --------------------------------------


def test_copy_and_deepcopy_of_tracers_under_every_transform():
    import copy
    import pickle

    def f(x):
        p = copy.deepcopy({"w": x, "b": [x, 1.0]})
        return copy.copy(x) * 2 + p["w"] * p["b"][0] + p["b"][1]

    # JAX 0.10.2: f(1.0) = 4.0, grad 4.0
    assert f(1.0) == 4.0
    assert ft.jit(f)(1.0) == 4.0
    assert ft.grad(f)(1.0) == 4.0
    assert ft.jit(ft.grad(f))(1.0) == 4.0
    np.testing.assert_allclose(ft.vmap(f)(X), 2 * X + X * X + 1)
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(X), 2 + 2 * X)
    seen = []
    ft.jit(lambda x: seen.append(copy.copy(x) is x) or x)(1.0)
    assert seen == [True]  # the traced value itself: it is immutable
    with pytest.raises(TypeError, match="pickle: expected a concrete array"):
        ft.jit(lambda x: pickle.dumps(x))(1.0)


# -- defvjp(symbolic_zeros=, optimize_remat=), defjvp(symbolic_zeros=) -----------------


def test_custom_rules_symbolic_zeros_and_optimize_remat_flags():
    f = ft.custom_vjp(lambda x: x * 2.0)
    f.defvjp(lambda x: (x * 2.0, None), lambda r, g: (2.0 * g,), symbolic_zeros=False)
    assert ft.grad(f)(1.0) == 2.0 and ft.jit(ft.grad(f))(1.0) == 2.0
    np.testing.assert_array_equal(ft.vmap(ft.grad(f))(X), [2.0, 2.0, 2.0])
    f.defvjp(lambda x: (x * 2.0, None), lambda r, g: (3.0 * g,), optimize_remat=True)
    assert ft.grad(f)(1.0) == 3.0  # optimize_remat: no effect on the results
    with pytest.raises(NotImplementedError, match="custom_vjp.defvjp: .*got both True"):
        f.defvjp(
            lambda x: (x.value * 2.0, None),
            lambda r, g: (2.0 * g,),
            symbolic_zeros=True,
            optimize_remat=True,
        )
    with pytest.raises(TypeError, match="symbolic_zeros to be a bool"):
        f.defvjp(lambda x: (x, None), lambda r, g: (g,), symbolic_zeros="no")
    assert ft.grad(f)(1.0) == 3.0  # a rejected call keeps the rules
    f.defvjp(lambda x: (x.value * 2.0, None), lambda r, g: (4.0 * g,), symbolic_zeros=True)
    assert ft.grad(f)(1.0) == 4.0  # fwd gets CustomVJPPrimal (tests/test_symzeros.py)

    g = ft.custom_jvp(lambda x: fnp.sin(x))
    g.defjvp(lambda p, t: (fnp.sin(p[0]), 2.0 * t[0]), symbolic_zeros=False)
    assert ft.grad(g)(0.0) == 2.0
    g.defjvp(lambda p, t: (fnp.sin(p[0]), 5.0 * t[0]), symbolic_zeros=True)
    assert ft.grad(g)(0.0) == 5.0


# -- experimental.io_callback ---------------------------------------------------------


def test_io_callback_runs_once_per_execution_and_is_never_dead_code():
    from functrace.experimental import io_callback

    log = []

    def cb(x):
        log.append(float(x))
        return np.asarray(x) * 2

    spec = ft.ShapeDtypeStruct((), np.float64)

    def f(x):
        io_callback(cb, spec, x)  # result unused: still called (JAX too)
        return x + 1

    # JAX 0.10.2 gives the same values and calls
    assert f(1.0) == 2.0 and log == [1.0]
    jf = ft.jit(f)
    log.clear()
    assert jf(1.0) == 2.0 and jf(2.0) == 3.0 and log == [1.0, 2.0]  # every call
    log.clear()
    assert ft.jit(lambda x: io_callback(cb, spec, x) + 1)(2.0) == 5.0 and log == [2.0]
    log.clear()
    assert ft.jit(lambda x: x + io_callback(cb, spec, 5.0))(2.0) == 12.0 and log == [5.0]
    log.clear()

    def body(c, x):
        io_callback(cb, spec, x, ordered=True)
        return c + x, None

    assert ft.jit(lambda xs: lax.scan(body, 0.0, xs)[0])(np.arange(3.0)) == 3.0
    assert log == [0.0, 1.0, 2.0]  # every iteration, in order
    log.clear()
    assert ft.jit(lambda p, x: lax.cond(p, lambda x: f(x) - 1, lambda x: x, x))(True, 4.0) == 4.0
    assert ft.jit(lambda p, x: lax.cond(p, lambda x: f(x) - 1, lambda x: x, x))(False, 5.0) == 5.0
    assert log == [4.0]  # the branch taken only
    log.clear()
    assert "io_callback" in str(ft.make_jaxpr(f)(1.0))
    assert log == []  # tracing does not call it
    # results: pytrees, keyword arguments, None
    out = io_callback(lambda x: {"a": x, "b": (x, x)}, {"a": spec, "b": (spec, spec)}, 1.0)
    assert isinstance(out["a"], ft.Array) and out["b"][1] == 1.0
    assert io_callback(lambda x, y: x + y, spec, 1.0, y=2.0) == 3.0
    assert ft.jit(lambda x: (io_callback(lambda v: log.append(float(v)), None, x), x)[1])(3.0)
    assert log == [3.0]


def test_io_callback_under_vmap_and_grad_as_jax():
    from functrace.experimental import io_callback

    log = []

    def cb(x):
        log.append(float(x))
        return np.asarray(x) * 2

    spec = ft.ShapeDtypeStruct((), np.float64)
    xs = np.arange(3.0)
    for vf in (ft.vmap, lambda g: ft.jit(ft.vmap(g))):
        np.testing.assert_array_equal(vf(lambda x: io_callback(cb, spec, x))(xs), [0.0, 2.0, 4.0])
        assert log == [0.0, 1.0, 2.0]  # once per example, in index order (JAX too)
        log.clear()
    with pytest.raises(ValueError, match="ordered IO callback cannot be vmapped"):
        ft.vmap(lambda x: io_callback(cb, spec, x, ordered=True))(xs)
    # no derivative (JAX: "IO callbacks do not support JVP"), even when the result is unused
    for fn in (lambda x: io_callback(cb, spec, x), lambda x: (io_callback(cb, spec, x), x)[1]):
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            ft.grad(fn)(1.0)
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            ft.jvp(fn, (1.0,), (1.0,))
    log.clear()
    g = ft.grad(lambda x: io_callback(cb, spec, ft.stop_gradient(x)) * x)
    assert g(1.0) == 2.0 and g(1.5) == 3.0 and ft.jit(g)(2.0) == 4.0
    assert log == [1.0, 1.5, 2.0]  # eager grad's recorded program calls it each time


def test_io_callback_errors():
    from functrace.experimental import io_callback

    spec = ft.ShapeDtypeStruct((), np.float64)
    with pytest.raises(TypeError, match=r"io_callback: expected .* \(f64\[\]\), got f32\[\]"):
        io_callback(lambda x: np.float32(1.0), spec, 1.0)
    with pytest.raises(TypeError, match="io_callback: expected .* got f64\\[2\\]"):
        ft.jit(lambda x: io_callback(lambda x: np.ones(2), spec, x))(1.0)
    with pytest.raises(TypeError, match="io_callback: expected .* structure"):
        io_callback(lambda x: (x, x), spec, 1.0)
    with pytest.raises(TypeError, match="expected a callable"):
        io_callback(3, spec, 1.0)
    with pytest.raises(TypeError, match="ordered to be a bool"):
        io_callback(lambda x: x, spec, 1.0, ordered="yes")
    with pytest.raises(TypeError, match="arrays or scalars as arguments"):
        io_callback(lambda x: x, spec, "text")


def test_lax_round_takes_jax_rounding_methods() -> None:
    # JAX 0.10.2: lax.round([0.5, 1.5, -0.5, 2.5]) is [1, 2, -1, 3], to nearest even
    # [0, 2, -0, 2]; RoundingMethod's values are 0 and 1
    x = np.array([0.5, 1.5, -0.5, 2.5])
    assert int(lax.RoundingMethod.AWAY_FROM_ZERO) == 0
    assert int(lax.RoundingMethod.TO_NEAREST_EVEN) == 1
    for run in (lax.round, ft.jit(lax.round, static_argnums=1)):
        np.testing.assert_array_equal(run(x, lax.RoundingMethod.AWAY_FROM_ZERO), [1, 2, -1, 3])
        np.testing.assert_array_equal(run(x, lax.RoundingMethod.TO_NEAREST_EVEN), [0, 2, -0.0, 2])
    with pytest.raises(ValueError, match="round: expected rounding_method"):
        lax.round(x, 2)


def test_jax_error_classes_of_concretization() -> None:
    # jax.errors' names, each a ConcretizationError (a TypeError), raised where JAX does
    from functrace import errors

    assert errors.ConcretizationTypeError is errors.ConcretizationError
    cases = [
        (lambda x: 1.0 if x > 0 else 0.0, 1.0, errors.TracerBoolConversionError),
        (lambda i: [1.0, 2.0][i], 1, errors.TracerIntegerConversionError),
        (lambda n: fnp.ones(3)[: int(n)], 2, errors.TracerIntegerConversionError),
        (lambda x: x[x > 0], np.ones(3), errors.NonConcreteBooleanIndexError),
    ]
    for f, x, cls in cases:
        with pytest.raises(cls, match="expected"):
            ft.jit(f)(x)
        assert issubclass(cls, errors.ConcretizationTypeError) and issubclass(cls, TypeError)
    with pytest.raises(errors.TracerBoolConversionError, match="vmap"):
        ft.vmap(lambda x: 1.0 if x > 0 else 0.0)(np.ones(3))


def test_small_jax_api_details_from_its_documentation() -> None:
    # ShapeDtypeStruct.like, as the callback tutorials use it
    like = ft.ShapeDtypeStruct.like
    s = like(np.ones((2,), np.float32))
    assert (s.shape, s.dtype, s.weak_type) == ((2,), np.float32, False)
    assert like(2.0).weak_type and like(like(np.int8(1))).dtype == np.int8
    out = ft.pure_callback(np.sin, like(X), X)
    np.testing.assert_allclose(out, np.sin(X))
    with pytest.raises(TypeError, match="ShapeDtypeStruct.like: expected an array"):
        like("x")
    # JAX's names of switches: jax_explain_cache_misses is explain_retraces; jax_remat3
    # is kept and changes nothing (one checkpoint implementation)
    with ft.config.override(jax_explain_cache_misses=True):
        assert ft.config.explain_retraces
    assert not ft.config.explain_retraces
    ft.config.update("jax_remat3", False)
    assert ft.config.read("jax_remat3") is False
    ft.config.update("jax_remat3", True)
    # eager lax as JAX's (x64): no promotion of a Python scalar of another kind with a
    # 0-d array (a 0-d float64 took it before), no bool operands of arithmetic
    z = np.zeros((), np.float64)
    for bad in (lambda: lax.add(z, 1), lambda: lax.mul(z, 1j), lambda: lax.sub(np.int32(1), 2)):
        with pytest.raises(TypeError, match="expected operands of equal dtype"):
            bad()
    with pytest.raises(TypeError, match="add: expected a numeric operand, got bool"):
        lax.add(np.array([True]), np.array([True]))
    assert float(lax.add(z, 2.0)) == 2.0 and bool(lax.max(np.array(True), np.array(False)))


def test_jit_and_convolve_take_jax_keywords() -> None:
    # jit(keep_unused=, inline=): accepted, no effect; convolve/correlate(precision=,
    # preferred_element_type=) as the matrix products take them
    f = ft.jit(lambda x, unused: x * 2, keep_unused=True, inline=True)
    np.testing.assert_array_equal(f(X, 1.0), X * 2)
    with pytest.raises(TypeError, match="jit: expected inline to be a bool"):
        ft.jit(lambda x: x, inline="yes")
    a, v = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])
    for fn, ref in ((fnp.convolve, np.convolve(a, v)), (fnp.correlate, np.correlate(a, v))):
        np.testing.assert_allclose(fn(a, v, precision=lax.Precision.HIGHEST), ref)
        out = ft.jit(lambda a, v, fn=fn: fn(a, v, preferred_element_type=np.float32))(a, v)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        assert fn(a, v, preferred_element_type=np.float32).dtype == np.float32
        with pytest.raises(ValueError, match="expected precision None"):
            fn(a, v, precision="bogus")


def test_cholesky_and_eigh_take_symmetrize_input_as_jax() -> None:
    # JAX 0.10.2 (x64): jnp.linalg.cholesky/eigh symmetrize their input by default,
    # reading (a + a^H) / 2; functrace reads one triangle (NumPy's values) unless asked
    a = np.array([[4.0, 1.0], [3.0, 5.0]])
    w = np.array([[1.0, 0.0], [2.0, 3.0]])
    lin = fnp.linalg

    def chol_loss(m):
        return fnp.sum(lin.cholesky(m, symmetrize_input=True) * w)

    def eigh_loss(m):
        return fnp.sum(lin.eigh(m, symmetrize_input=True)[0] * np.array([1.0, 2.0]))

    jax_chol, jax_chol_grad = [[2.0, 0.0], [1.0, 2.0]], [[0.1875, 0.125], [0.125, 0.75]]
    jax_w = [2.43844719, 6.56155281]
    jax_eigh_grad = [[1.37873219, 0.48507125], [0.48507125, 1.62126781]]
    for run in (lambda f: f, ft.jit):
        np.testing.assert_allclose(run(partial(lin.cholesky, symmetrize_input=True))(a), jax_chol)
        np.testing.assert_allclose(run(ft.grad(chol_loss))(a), jax_chol_grad, rtol=1e-12)
        np.testing.assert_allclose(
            run(lambda m: lin.eigh(m, symmetrize_input=True)[0])(a), jax_w, rtol=1e-8
        )
        np.testing.assert_allclose(run(ft.grad(eigh_loss))(a), jax_eigh_grad, rtol=1e-8)
    # upper=True, complex input, and the default (one triangle) unchanged
    np.testing.assert_allclose(
        lin.cholesky(a, upper=True, symmetrize_input=True), np.transpose(jax_chol)
    )
    h = np.array([[3.0, 1 - 1j], [2 + 1j, 4.0]])
    sym = (h + h.conj().T) / 2
    np.testing.assert_allclose(lin.cholesky(h, symmetrize_input=True), np.linalg.cholesky(sym))
    np.testing.assert_allclose(
        ft.jit(partial(lin.eigh, symmetrize_input=True))(h)[0], np.linalg.eigvalsh(sym)
    )
    np.testing.assert_allclose(lin.cholesky(a), np.linalg.cholesky(a))


def test_typing_and_dtypes_names_of_jax():
    import functrace as ft
    from functrace import dtypes
    from functrace.typing import ArrayLike, DTypeLike

    def scale(x: ArrayLike, dtype: DTypeLike = np.float32) -> ft.Array:
        return ft.numpy.asarray(x, dtype) * 2

    assert scale(np.ones(2)).dtype == np.float32
    for ok in (np.ones(2), np.float32(1), 2, 2.5, 1j, True, ft.numpy.ones(2)):
        assert isinstance(ok, ArrayLike)
    assert not isinstance("2", ArrayLike) and not isinstance([1.0], ArrayLike)
    assert dtypes.canonicalize_dtype(np.float64) == np.float64  # 64-bit types always on
    assert dtypes.canonicalize_dtype("int8") == np.int8
    assert dtypes.scalar_type_of(np.float32(1)) is float and dtypes.scalar_type_of(True) is bool
    assert dtypes.scalar_type_of(np.ones(2, np.uint16)) is int
    assert dtypes.itemsize_bits(np.bool_) == 8 and dtypes.itemsize_bits(np.complex64) == 64
    assert dtypes.issubdtype(np.float32, np.floating) and dtypes.finfo(np.float32).bits == 32
    assert dtypes.iinfo(np.int8).max == 127
    with pytest.raises(TypeError, match="canonicalize_dtype: expected a dtype"):
        dtypes.canonicalize_dtype(object())
    with pytest.raises(TypeError, match="scalar_type_of: expected an array or a scalar"):
        dtypes.scalar_type_of("x")


def test_diagflat_sort_complex_dft_broadcast_shapes_as_jax():
    from functrace.scipy.linalg import dft

    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(fnp.diagflat(a, -1)), np.diagflat(a, -1))
    x = np.array([3.0, 1 + 2j, 1 - 1j, 1.0])
    np.testing.assert_array_equal(np.asarray(fnp.sort_complex(x)), [1 - 1j, 1, 1 + 2j, 3])
    # NumPy's dtypes (JAX gives complex64 for float32)
    assert fnp.sort_complex(np.array([2.0, 1.0], np.float32)).dtype == np.complex128
    assert fnp.sort_complex(np.array([2, 1], np.int16)).dtype == np.complex64
    assert fnp.sort_complex(np.array([[5, 3], [6, 2]])).dtype == np.complex128
    k = np.arange(5)
    w = np.exp(-2j * np.pi * np.outer(k, k) / 5)
    np.testing.assert_allclose(np.asarray(dft(5)), w, atol=1e-15)
    np.testing.assert_allclose(np.asarray(dft(5, "sqrtn")), w / np.sqrt(5), atol=1e-15)
    np.testing.assert_allclose(np.asarray(dft(5, "n", dtype=np.complex64)), w / 5, atol=1e-7)
    with pytest.raises(ValueError, match="dft: expected a complex dtype"):
        dft(3, dtype=np.float64)
    assert lax.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match="broadcast_shapes: expected shapes that broadcast"):
        lax.broadcast_shapes((2,), (3,))


def test_jit_takes_shardings_and_places_nothing():
    from functrace.sharding import NamedSharding, PartitionSpec

    mesh = ft.make_mesh((4,), ("i",))
    s = NamedSharding(mesh, PartitionSpec("i"))
    f = ft.jit(lambda x, y: x * y, in_shardings=(s, None), out_shardings=PartitionSpec("i"))
    np.testing.assert_array_equal(f(np.arange(4.0), 2.0), np.arange(4.0) * 2.0)
    with pytest.raises(TypeError, match="jit: expected in_shardings to hold shardings"):
        ft.jit(lambda x: x, in_shardings=(s, 3))


# -- jax.Array's attributes on eager Arrays, and methods of traced values -------------


def test_array_placement_attributes():
    a = fnp.arange(6.0).reshape(2, 3)
    (shard,) = a.addressable_shards
    assert shard.data is a and shard.replica_id == 0 and shard.device == ft.devices()[0]
    assert shard.index == (slice(None), slice(None)) and a.global_shards[0].data is a
    assert a.addressable_data(0) is a
    with pytest.raises(IndexError, match="addressable_data: expected shard index 0"):
        a.addressable_data(1)
    assert a.is_fully_replicated and a.is_fully_addressable and a.is_ready()
    assert not a.committed and not a.weak_type
    assert (a.aval.shape, a.aval.dtype) == ((2, 3), np.dtype(np.float64))
    assert a.on_device_size_in_bytes() == 48 and a.copy_to_host_async() is None
    assert a.unsafe_buffer_pointer() == np.asarray(a).ctypes.data
    c = a.clone()
    assert type(c) is ft.Array and c.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()
    assert a.ptp() == 5.0 and type(a.ptp(axis=1)) is ft.Array
    np.testing.assert_array_equal(a.ptp(axis=0, keepdims=True), [[3.0, 3.0, 3.0]])


def test_traced_view_ptp_itemsize_nbytes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(t):
        assert (t.itemsize, t.nbytes) == (4, 24)
        return t.view(np.int8), t.view(np.int32), t.view(np.float32), t.ptp(axis=1)

    b8, i32, same, ptp = ft.jit(f)(x)
    np.testing.assert_array_equal(b8, x.view(np.int8))
    np.testing.assert_array_equal(i32, x.view(np.int32))
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(ptp, np.ptp(x, axis=1))
    rows = ft.vmap(lambda t: t.view(np.uint8))(x)  # a batch of rows: the last axis grows
    np.testing.assert_array_equal(rows, x.view(np.uint8))
    y = np.arange(8, dtype=np.int16).reshape(2, 4)
    np.testing.assert_array_equal(ft.jit(lambda t: t.view(np.int32))(y), y.view(np.int32))
    np.testing.assert_allclose(ft.grad(lambda t: t.ptp())(np.array([1.0, 5.0, 3.0])), [-1, 1, 0])
    with pytest.raises(ValueError, match="view: expected a last axis divisible by 2"):
        ft.jit(lambda t: t.view(np.int32))(np.arange(3, dtype=np.int16))
    with pytest.raises(TypeError, match="view: expected type=None"):
        ft.jit(lambda t: t.view(np.int32, type=np.ndarray))(x)


def test_lax_composite_runs_its_decomposition():
    scale = lax.composite(lambda x, *, k: x * k, name="my.scale", version=1)
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(scale(x, k=3.0), [3.0, -6.0])
    np.testing.assert_array_equal(ft.jit(lambda v: scale(v, k=2.0))(x), [2.0, -4.0])
    np.testing.assert_array_equal(ft.grad(lambda v: scale(v, k=2.0).sum())(x), [2.0, 2.0])
    np.testing.assert_array_equal(ft.vmap(lambda v: scale(v, k=-1.0))(x), -x)
    with pytest.raises(TypeError, match="composite: expected a non-empty str name"):
        lax.composite(lambda x: x, name="")
