"""Core: tracing, the IR, golden jaxpr text, tracer behaviour and errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.errors import ConcretizationError, TracerArrayConversionError, UnexpectedTracerError
from functrace.extend import core as xcore
from functrace.ir import dce_jaxpr, eval_jaxpr, typecheck_jaxpr

# -- golden jaxpr text -------------------------------------------------------


def test_golden_simple() -> None:
    def f(a):
        return (a * a).sum()

    assert str(ft.make_jaxpr(f)(np.ones(3))) == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = mul a a\n"
        "    c:f64[] = reduce_sum[axes=(0,)] b\n"
        "  in (c,) }"
    )


def test_golden_closure_constant_and_literal() -> None:
    w = np.arange(3.0)

    def f(x):
        return fnp.sin(x * w) + 2.0

    assert str(ft.make_jaxpr(f)(np.ones(3, np.float32))) == (
        "{ lambda a:f64[3]; b:f32[3]. let\n"
        "    c:f64[3] = convert_element_type[new_dtype=float64, weak_type=False] b\n"
        "    d:f64[3] = mul c a\n"
        "    e:f64[3] = sin d\n"
        "    f:f64[3] = broadcast_in_dim[shape=(3,), broadcast_dimensions=()] 2.0:f64[]\n"
        "    g:f64[3] = add e f\n"
        "  in (g,) }"
    )


def test_golden_pytree_inputs_and_outputs() -> None:
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "x": x}

    params = {"w": np.float32(2.0), "b": np.float32(1.0)}
    text = str(ft.make_jaxpr(f)(params, np.float32(3.0)))
    assert text == (
        "{ lambda ; a:f32[] b:f32[] c:f32[]. let\n"
        "    d:f32[] = mul b c\n"
        "    e:f32[] = add d a\n"
        "  in (c, e) }"
    )


def test_weak_python_scalars_keep_float32() -> None:
    closed = ft.make_jaxpr(lambda x: x * 2.0 + 1)(np.ones(2, np.float32))
    assert closed.out_avals[0].dtype == np.float32
    assert (np.ones(2, np.float32) * 2.0).dtype == fnp.multiply(np.ones(2, np.float32), 2.0).dtype


def test_make_jaxpr_static_argnums() -> None:
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    closed = ft.make_jaxpr(f, static_argnums=1)(1.0, 3)
    assert [e.primitive.name for e in closed.eqns].count("mul") == 3


def test_eval_jaxpr_and_call() -> None:
    closed = ft.make_jaxpr(lambda x, y: fnp.tanh(x) * y)(np.arange(3.0), 2.0)
    out = closed(np.arange(3.0), 2.0)
    np.testing.assert_allclose(out[0], np.tanh(np.arange(3.0)) * 2.0)
    typecheck_jaxpr(closed.jaxpr)


def test_dce_removes_unused() -> None:
    def f(x):
        _unused = fnp.exp(x)
        return x + 1.0

    closed = ft.make_jaxpr(f)(1.0)
    assert "exp" in str(closed)
    pruned = dce_jaxpr(closed.jaxpr)
    assert "exp" not in str(pruned)
    assert eval_jaxpr(pruned, closed.consts, [2.0]) == [3.0]


def test_to_dot_and_mimebundle() -> None:
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(1.0)
    dot = closed.to_dot()
    assert dot.startswith("digraph") and "sin" in dot and "mul" in dot
    bundle = closed._repr_mimebundle_()
    assert bundle["text/plain"] == str(closed)
    assert bundle["image/svg+xml"].lstrip().startswith("<svg")  # drawn without Graphviz
    assert bundle["text/vnd.graphviz"] == dot


# -- tracers behave like arrays ---------------------------------------------


def test_tracer_array_interface() -> None:
    seen = {}

    def f(x):
        seen["shape"], seen["ndim"], seen["size"], seen["dtype"] = x.shape, x.ndim, x.size, x.dtype
        seen["len"] = len(x)
        y = (-x + 1) * 2 - x / 2 + x**2 + abs(x)
        y = y.reshape(6).reshape((2, 3)).astype(np.float32)
        z = [row for row in y]
        return y.sum() + y.mean() + z[0].sum() + (y > 0).sum()

    ft.make_jaxpr(f)(np.ones((2, 3)))
    assert seen == {"shape": (2, 3), "ndim": 2, "size": 6, "dtype": np.float64, "len": 2}


def test_ndarray_op_tracer_defers_to_tracer() -> None:
    def f(x):
        return np.arange(3.0) + x, np.arange(3.0) * x, np.sin(x)

    outs = ft.make_jaxpr(f)(np.ones(3))
    assert len(outs.out_avals) == 3


def test_setitem_error_points_to_at() -> None:
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        ft.grad(lambda x: f(x).sum())(np.ones(3))


def test_asarray_of_tracer_is_error() -> None:
    with pytest.raises(TracerArrayConversionError, match="functrace.numpy"):
        ft.grad(lambda x: np.asarray(x).sum())(np.ones(3))


def test_concretization_error_names_argument_and_fixes() -> None:
    def f(x, y):
        if x > 0:
            return y
        return -y

    with pytest.raises(ConcretizationError) as e:
        ft.make_jaxpr(f)(1.0, 2.0)
    msg = str(e.value)
    assert "'f'" in msg and "`x`" in msg and "where" in msg and "lax.cond" in msg
    assert "static_argnums" in msg
    assert isinstance(e.value, TypeError)


def test_leaked_tracer_error() -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    ft.grad(f)(1.0)
    with pytest.raises(UnexpectedTracerError, match="grad of 'f'"):
        _ = leaked[0] + 1.0


# -- primitive errors ---------------------------------------------------------


def test_primitive_shape_mismatch_names_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"add: .*\(2,\) and \(3,\)"):
        lax.add(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"mul: .*\(2,\) and \(3,\)"):
        ft.make_jaxpr(lambda a, b: lax.mul(a, b))(np.ones(2), np.ones(3))


def test_primitive_dtype_mismatch() -> None:
    with pytest.raises(TypeError, match="add: expected operands of equal dtype"):
        ft.make_jaxpr(lambda a, b: lax.add(a, b))(np.ones(2), np.ones(2, np.float32))


def test_fnp_broadcast_error() -> None:
    with pytest.raises(ValueError, match=r"add: expected shapes that broadcast together"):
        ft.make_jaxpr(fnp.add)(np.ones(2), np.ones(3))


def test_missing_rule_error_names_primitive_and_place() -> None:
    from functrace.core import Primitive, abstract_eval_rules, impl_rules

    p = Primitive("my_op")
    impl_rules[p] = lambda x: x
    abstract_eval_rules[p] = lambda x: x
    try:
        with pytest.raises(NotImplementedError, match=r"my_op.*jvp_rules"):
            ft.grad(lambda x: p.bind(x))(1.0)
    finally:
        del impl_rules[p], abstract_eval_rules[p]


def test_plain_numpy_inputs_return_numpy_results() -> None:
    a = np.arange(3.0)
    assert type(fnp.add(a, a)) is np.ndarray
    assert fnp.sum(a) == 3.0 and isinstance(fnp.sum(a), np.float64)
    assert fnp.add(np.float32(1), 2.0).dtype == np.float32


# -- the jaxpr types under JAX's names (functrace.extend.core) ------------------------


def test_jaxpr_fields_by_jax_names() -> None:
    c = np.array([1.0, 2.0])
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * c + 2.0)(np.ones(2))
    jaxpr = closed.jaxpr
    assert closed.literals is closed.consts and len(closed.literals) == len(jaxpr.constvars)
    assert (closed.invars, closed.outvars, closed.constvars) == (
        jaxpr.invars,
        jaxpr.outvars,
        jaxpr.constvars,
    )
    eqn = jaxpr.eqns[0]
    assert (eqn.invars, eqn.outvars, eqn.source_info) == (
        eqn.inputs,
        eqn.out_binders,
        eqn.source,
    )
    atoms = [v for e in jaxpr.eqns for v in e.invars]
    assert {type(v) for v in atoms} == {xcore.Var, xcore.Literal}  # 2.0 is a literal
    assert [v.val for v in atoms if isinstance(v, xcore.Literal)] == [2.0]
    assert closed.effects == jaxpr.effects == eqn.effects == frozenset()
    # replace by JAX's names (or functrace's), checked, and the result still runs
    neg = eqn.replace(primitive=lax.neg_p, params={})
    assert neg.primitive is lax.neg_p and neg.invars == eqn.invars
    twice = jaxpr.replace(outvars=[*jaxpr.outvars, *jaxpr.outvars])
    xcore.check_jaxpr(twice)
    out = xcore.jaxpr_as_fun(closed.replace(jaxpr=twice))(np.array([0.5, 1.0]))
    want = np.sin([0.5, 1.0]) * c + 2.0
    np.testing.assert_allclose(out[0], want)
    np.testing.assert_allclose(out[1], want)
    with pytest.raises(TypeError, match=r"JaxprEqn.replace: expected fields .* got 'inputz'"):
        eqn.replace(inputz=())
    with pytest.raises(TypeError, match=r"Jaxpr.replace: expected fields .* got 'eqn'"):
        jaxpr.replace(eqn=())
    with pytest.raises(TypeError, match="jaxpr_as_fun: expected a ClosedJaxpr"):
        xcore.jaxpr_as_fun(jaxpr)


def test_effects_of_an_effectful_equation() -> None:
    closed = ft.make_jaxpr(lambda x: ft.debug.print("x={x}", x=x) or x * 2.0)(1.0)
    (printing,) = [e for e in closed.eqns if e.effects]
    assert printing.effects == frozenset({printing.primitive.name})
    assert closed.effects == printing.effects


def test_jaxpr_built_by_hand_is_checked_and_runs() -> None:
    f64 = ft.core.ShapedArray((3,), np.dtype(np.float64))
    x, y, z = xcore.Var(f64), xcore.Var(f64), xcore.Var(f64)
    eqns = (
        xcore.new_jaxpr_eqn([x, x], [y], xcore.primitives.mul_p, {}, frozenset()),
        xcore.new_jaxpr_eqn([y], [z], xcore.primitives.exp_p, {}, frozenset()),
    )
    jaxpr = xcore.Jaxpr((), (x,), eqns, (z,))
    xcore.check_jaxpr(jaxpr)
    v = np.array([0.0, 1.0, 2.0])
    (out,) = ft.core.eval_jaxpr(jaxpr, [], v)  # jax.core.eval_jaxpr's signature
    np.testing.assert_allclose(out, np.exp(v * v))
    # traced through: jit, vmap and grad of the hand-made program
    f = ft.jit(lambda u: xcore.jaxpr_as_fun(xcore.ClosedJaxpr(jaxpr, []))(u)[0].sum())
    np.testing.assert_allclose(ft.grad(f)(v), 2 * v * np.exp(v * v))
    bad = xcore.Jaxpr((), (x,), eqns[1:], (z,))  # reads y before anything binds it
    with pytest.raises(ft.errors.JaxprTypeError, match="unbound variable"):  # JAX's class
        xcore.check_jaxpr(bad)


def test_primitives_by_name() -> None:
    assert xcore.primitives.exp_p is lax.exp_p and xcore.primitives.cond_p is lax.cond_p
    assert xcore.primitives.add_jaxvals_p is xcore.primitives.add_any_p
    assert "custom_jvp_call_p" in xcore.primitives.__all__
    names = [n for n in xcore.primitives.__all__ if n.endswith("_p")]
    assert all(isinstance(getattr(xcore.primitives, n), xcore.Primitive) for n in names)
