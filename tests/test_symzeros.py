"""``symbolic_zeros=True`` custom rules and ``linear_call``: JAX's flags and numbers
(recorded from ``symzeros_cases.py``), the helper types, compositions (``jit``,
``vmap``, nested derivatives, finite differences) and the errors for bad rule outputs."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    linear_call,
    zero_from_primal,
)
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from symzeros_cases import XB, X, Y, cases


def test_flags_and_values_match_jax():
    assert_matches_recorded(cases(ft), "symzeros_jax.npz", lambda k, v: 1e-12)


def test_the_helper_types():
    z = SymbolicZero.from_primal_value(np.ones((2, 3), np.float32))
    assert (z.shape, z.dtype, z.ndim, z.size, repr(z)) == ((2, 3), np.float32, 2, 6, "SymbolicZero")
    assert z.aval.shape == (2, 3) and z.str_short() == "f32[2,3]" and not z.weak_type
    np.testing.assert_array_equal(z.instantiate(), np.zeros((2, 3), np.float32))
    assert SymbolicZero.from_primal_value(np.arange(3)).dtype == ft.dtypes.float0
    tree = zero_from_primal({"a": 1.0, "b": (np.ones(2),)})
    np.testing.assert_array_equal(tree["b"][0], np.zeros(2))
    sym = zero_from_primal({"a": 1.0}, symbolic_zeros=True)
    assert type(sym["a"]) is SymbolicZero and sym["a"].shape == ()
    p = CustomVJPPrimal(np.ones(2), True)
    assert p.perturbed and custom_vjp_primal_tree_values({"p": [p]})["p"][0] is p.value
    with pytest.raises(TypeError, match="custom_vjp_primal_tree_values: expected .*got a leaf"):
        custom_vjp_primal_tree_values((p, 1.0))


def _sz_vjp():
    @ft.custom_vjp
    def f(x, y):
        return fnp.sin(x) * y

    def fwd(x, y):
        x, y = custom_vjp_primal_tree_values((x, y))
        return f(x, y), (x, y)

    def bwd(res, ct):
        x, y = res
        ct = ct.instantiate() if type(ct) is SymbolicZero else ct
        return fnp.cos(x) * y * ct, fnp.sin(x) * ct

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


def _sz_jvp():
    @ft.custom_jvp
    def f(x, y):
        return fnp.sin(x) * y

    def rule(primals, tangents):
        x, y = primals
        tx, ty = (t.instantiate() if type(t) is SymbolicZero else t for t in tangents)
        return f(x, y), fnp.cos(x) * y * tx + fnp.sin(x) * ty

    f.defjvp(rule, symbolic_zeros=True)
    return f


def test_compositions_of_the_rules():
    fv, fj = _sz_vjp(), _sz_jvp()
    check_grads(fv, (X, Y), order=2, modes=("rev",))
    check_grads(fj, (X, Y), order=2, modes=("fwd", "rev"))
    for f in (fv, fj):
        loss = lambda x, y, f=f: fnp.sum(f(x, y) ** 2)  # noqa: E731
        g = ft.grad(loss, argnums=(0, 1))
        eager = g(XB[0], Y)
        for a, b in zip(ft.jit(g)(XB[0], Y), eager):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        vg = ft.vmap(g, (0, None))(XB, Y)
        for i in range(2):
            want = g(XB[i], Y)
            np.testing.assert_allclose(vg[0][i], want[0], rtol=1e-12)
            np.testing.assert_allclose(vg[1][i], want[1], rtol=1e-12)
        vloss = ft.vmap(loss, (0, None))
        gv = ft.grad(lambda x, y, v=vloss: fnp.sum(v(x, y)), argnums=1)(XB, Y)
        np.testing.assert_allclose(gv, vg[1].sum(0), rtol=1e-12)
        np.testing.assert_allclose(ft.jit(ft.vmap(f, (0, None)))(XB, Y), np.sin(XB) * Y)


def test_symbolic_zero_outputs_of_a_batched_rule():
    seen = []

    @ft.custom_jvp
    def m(x, y):
        return x * y, fnp.round(y)

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
        tx = tx.instantiate() if type(tx) is SymbolicZero else tx
        return m(x, y), (tx * y, SymbolicZero.from_primal_value(y))

    m.defjvp(rule, symbolic_zeros=True)
    outs, touts = ft.jvp(lambda x: ft.vmap(m, (0, None))(x, Y), (XB,), (XB,))
    np.testing.assert_allclose(touts[0], XB * Y)
    np.testing.assert_array_equal(touts[1], np.zeros((2, 3)))
    assert set(seen) == {(False, True)} and outs[1].shape == (2, 3)
    g = ft.grad(lambda y: fnp.sum(ft.vmap(m, (0, None))(XB, y)[1]))(Y)
    np.testing.assert_array_equal(g, np.zeros(3))


def _scale(r, x):
    return linear_call(lambda r, v: v * r, lambda r, c: 3.0 * c * r, r, x)


def test_linear_call_under_vmap_jit_and_nested_derivatives():
    r = np.abs(Y) + 1.0
    np.testing.assert_allclose(ft.vmap(_scale, (None, 0))(r, XB), XB * r)
    np.testing.assert_allclose(ft.vmap(_scale)(XB, XB), XB * XB)
    # reverse mode uses the given transpose (3 times the true one), per example too
    g = ft.grad(lambda x: fnp.sum(_scale(r, x) ** 2))
    np.testing.assert_allclose(g(X), 3.0 * r * 2 * X * r)
    gv = ft.vmap(g)(XB)
    np.testing.assert_allclose(gv, np.stack([g(x) for x in XB]), rtol=1e-12)
    gb = ft.grad(lambda x: fnp.sum(ft.vmap(_scale, (0, 0))(XB, x) ** 2))(XB)
    np.testing.assert_allclose(gb, 3.0 * XB * 2 * XB * XB, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.vmap(g))(XB), gv, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(g)(X), g(X), rtol=1e-12)
    # jvp is the function itself on the tangents; grad of grad transposes twice
    np.testing.assert_allclose(ft.jvp(lambda x: _scale(r, x), (X,), (Y,))[1], Y * r)
    hv = ft.grad(lambda x: fnp.sum(g(x)))(X)
    np.testing.assert_allclose(hv, 3.0 * r * 2 * r, rtol=1e-12)  # fun transposes the transpose
    # a transposed vmap's transpose is the batched function again
    lt = ft.linear_transpose(ft.vmap(lambda x: _scale(r, x)), XB)
    ltt = ft.linear_transpose(lambda c: lt(c)[0], XB)
    np.testing.assert_allclose(ltt(XB)[0], XB * r, rtol=1e-12)


def test_errors_name_the_function():
    @ft.custom_vjp
    def bad(x):
        return x * 2.0

    bad.defvjp(
        lambda x: (bad(x.value), None),
        lambda _, ct: (SymbolicZero.from_primal_value(np.ones(5)),),
        symbolic_zeros=True,
    )
    with pytest.raises(ValueError, match="bwd of 'bad'.*SymbolicZero of type f64\\[3\\]"):
        ft.grad(lambda x: fnp.sum(bad(x)))(X)

    @ft.custom_jvp
    def badj(x):
        return x * 2.0

    badj.defjvp(lambda p, t: (badj(p[0]), SymbolicZero.from_primal_value(1.0)), symbolic_zeros=True)
    with pytest.raises(TypeError, match="JVP rule of 'badj'.*got f64\\[\\]"):
        ft.jvp(badj, (X,), (Y,))
    with pytest.raises(TypeError, match="custom_jvp.defjvp: expected symbolic_zeros to be a bool"):
        badj.defjvp(lambda p, t: p, symbolic_zeros=1)
    with pytest.raises(NotImplementedError, match="custom_vjp.defvjp: .*got both True"):
        bad.defvjp(lambda x: x, lambda r, c: c, symbolic_zeros=True, optimize_remat=True)
    with pytest.raises(TypeError, match="linear_call: expected a callable fun_transpose"):
        linear_call(lambda r, x: x, None, (), X)
    wrong = lambda x: linear_call(lambda r, v: v * r, lambda r, c: (c, c), 2.0, x)  # noqa: E731
    with pytest.raises(TypeError, match="linear_call: expected the transpose .* structure"):
        ft.grad(lambda x: fnp.sum(wrong(x)))(X)
    with pytest.raises(TypeError, match="linear_call: expected the residual arguments of"):
        ft.grad(lambda r: fnp.sum(_scale(r, X)))(Y)
