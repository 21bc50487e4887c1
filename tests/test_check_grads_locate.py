"""check_grads(locate=True) names the equation whose derivative rule is wrong."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import core, lax
from functrace.interpreters import ad, batching


def test_wrong_custom_vjp_bwd_is_named_with_its_line() -> None:
    @ft.custom_vjp
    def ident(x):
        return x

    def ident_fwd(x):
        return x, None

    def ident_bwd(_, g):
        return (2.0 * g,)  # wrong: the identity's cotangent is g

    ident.defvjp(ident_fwd, ident_bwd)

    def f(x):
        return fnp.sin(ident(x * 3.0))

    line = ident_bwd.__code__.co_firstlineno
    with pytest.raises(AssertionError) as info:
        ft.check_grads(f, (0.7,), order=1, modes=("rev",), locate=True)
    msg = str(info.value)
    assert "custom_vjp function 'ident'" in msg
    assert f"'ident_bwd' (test_check_grads_locate.py:{line})" in msg
    assert "max abs error" in msg


def test_wrong_custom_jvp_rule_is_named() -> None:
    @ft.custom_jvp
    def cube(x):
        return x**3

    @cube.defjvp
    def cube_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return cube(x), 2.0 * x**2 * t  # wrong: 3 x^2 t

    with pytest.raises(AssertionError, match=r"the JVP rule 'cube_jvp' \(test_check_grads_locate"):
        ft.check_grads(lambda x: fnp.exp(cube(x)), (np.array([0.5, -0.3]),), order=1, locate=True)


@pytest.fixture
def bad_sin():
    """A test-only primitive: sin with a JVP rule off by a factor 2."""
    p = core.Primitive("test_bad_sin")
    core.impl_rules[p] = lambda x: np.sin(x)
    core.abstract_eval_rules[p] = lambda x: x
    ad.jvp_rules[p] = lambda primals, tangents: (
        p.bind(primals[0]),
        2.0 * fnp.cos(primals[0]) * ad.instantiate(tangents[0]),
    )
    try:
        yield p
    finally:
        for table in (core.impl_rules, core.abstract_eval_rules, ad.jvp_rules):
            table.pop(p, None)
        batching.batching_rules.pop(p, None)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wrong_primitive_jvp_rule_is_named(bad_sin, modes, dtype) -> None:
    def f(x):
        return fnp.sum(fnp.tanh(bad_sin.bind(x * 2.0)))

    x = np.array([0.3, -0.4], dtype)
    with pytest.raises(AssertionError) as info:
        ft.check_grads(f, (x,), order=1, modes=modes, locate=True)
    msg = str(info.value)
    assert "the JVP rule of the primitive 'test_bad_sin'" in msg
    assert "test_bad_sin" in msg.split("equation", 1)[1]  # the equation is printed
    assert "max abs error" in msg


def test_wrong_rule_inside_the_cond_branch_taken(bad_sin) -> None:
    def f(x):
        return lax.cond(x > 0, lambda y: bad_sin.bind(y) * 2.0, lambda y: y, x)

    with pytest.raises(AssertionError, match=r"inside branch 1 of a cond.*'test_bad_sin'"):
        ft.check_grads(f, (0.4,), order=1, modes=("fwd",), locate=True)


def test_correct_function_behaves_as_before() -> None:
    def f(x, y):
        return fnp.sum(fnp.sin(x) * y**2)

    args = (np.array([0.1, 0.2]), np.array([1.5, -0.5]))
    assert ft.check_grads(f, args, order=2, locate=True) is None
    assert ft.check_grads(f, args, order=2) is None


def test_impure_function_has_no_culprit_equation() -> None:
    # Each call scales by a new factor: the finite differences see another function
    # than the derivatives do, while every equation's rules are right.
    calls = []

    def f(x):
        calls.append(1)
        return fnp.sin(x) * float(len(calls))

    with pytest.raises(AssertionError, match=r"every equation of 'f'.*agree.*pure function"):
        ft.check_grads(f, (0.3,), order=1, modes=("fwd",), locate=True)


def test_untraceable_function_keeps_the_original_message(bad_sin) -> None:
    def f(x):
        return bad_sin.bind(x) if x > 0 else x  # Python control flow on the value

    with pytest.raises(AssertionError, match=r"(?s)JVP vs finite differences.*could not trace"):
        ft.check_grads(f, (0.4,), order=1, modes=("fwd",), locate=True)


def test_locate_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match=r"check_grads: expected locate to be a bool, got str"):
        ft.check_grads(fnp.sin, (0.3,), locate="yes")


def test_wrong_custom_vjp_inside_a_scan_body_is_named() -> None:
    @ft.custom_vjp
    def scale(x):
        return 2.0 * x

    def scale_fwd(x):
        return 2.0 * x, None

    def scale_bwd(_, g):
        return (3.0 * g,)  # wrong: 2 g

    scale.defvjp(scale_fwd, scale_bwd)

    def f(c):
        return lax.scan(lambda c, x: (fnp.sin(scale(c)) + x, None), c, np.arange(3.0))[0]

    with pytest.raises(AssertionError, match=r"(?s)inside iteration 0 of a scan body.*'scale_bwd'"):
        ft.check_grads(f, (0.3,), order=1, modes=("rev",), locate=True)
