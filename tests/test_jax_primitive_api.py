"""A primitive defined with JAX's API (``Primitive.def_impl``/``def_abstract_eval``,
``ad.primitive_jvps``/``primitive_transposes``, ``batching.primitive_batchers``,
``mlir.register_lowering``): JAX's tutorial program against JAX's numbers (recorded
from ``primitive_api_cases.py``), multiple results, ``deflinear`` and ``defbilinear``
with JAX's signatures, and the errors for each missing rule."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import functrace as ft
from functrace import core, lax
from functrace.interpreters import ad, batching, mlir
from primitive_api_cases import cases
from recorded import assert_matches_recorded

_TABLES: list[dict[Any, Any]] = [
    core.impl_rules,
    core.abstract_eval_rules,
    ad.jvp_rules,
    ad.transpose_rules,
    batching.batching_rules,
    mlir.lowerings,
]


@pytest.fixture
def scratch_tables() -> Iterator[None]:
    """The primitives a test defines leave every rule table when it ends."""
    before = [set(t) for t in _TABLES]
    try:
        yield
    finally:
        for table, keep in zip(_TABLES, before):
            for p in set(table) - keep:
                del table[p]


def test_tutorial_program_matches_jax(scratch_tables: None) -> None:
    lowered: list[Any] = []

    def lowering(ctx: Any, *operands: Any) -> Any:  # JAX's signature; jit never calls it
        lowered.append(operands)
        raise AssertionError("functrace's jit called a lowering rule")

    ns = types.SimpleNamespace(
        api=ft,
        lax=lax,
        Primitive=core.Primitive,
        ShapedArray=core.ShapedArray,
        ad=ad,
        batching=batching,
        mlir=mlir,
        lowering=lowering,
    )
    got = cases(ns)
    assert_matches_recorded(
        got, "primitive_api_jax.npz", lambda k, v: 1e-6 if v.dtype == np.float32 else 1e-12
    )
    (p,) = [p for p in mlir.lowerings if p.name == "multiply_add"]
    assert mlir.lowerings[p] == {"cpu": lowering} and not lowered


def test_def_methods_fill_the_tables_and_return_the_rule(scratch_tables: None) -> None:
    p = core.Primitive("twice")

    def impl(x):
        return np.multiply(x, 2)

    def abstract(x):
        return x

    assert p.impl is None and p.abstract_eval is None
    assert p.def_impl(impl) is impl and p.impl is impl and core.impl_rules[p] is impl
    assert p.def_abstract_eval(abstract) is abstract
    assert core.abstract_eval_rules[p] is p.abstract_eval
    assert p.abstract_eval.__wrapped__ is abstract
    # JAX's names are functrace's tables, not copies
    assert ad.primitive_jvps is ad.jvp_rules and ad.primitive_transposes is ad.transpose_rules
    assert batching.primitive_batchers is batching.batching_rules
    assert ad.UndefinedPrimal is ad.UndefPrimal and batching.not_mapped is None
    ad.defjvp(p, lambda g, x: g * 2.0)
    batching.defvectorized(p)
    x = np.array([1.0, -2.0])
    assert ft.jit(p.bind)(x).tolist() == [2.0, -4.0]
    assert ft.vmap(ft.grad(lambda v: p.bind(v * v)))(x).tolist() == [4.0, -8.0]
    z = ad.Zero.from_primal_value(np.float32(1))
    assert ad.instantiate_zeros(z).dtype == np.float32 and ad.instantiate_zeros(x) is x


def test_multiple_results(scratch_tables: None) -> None:
    p = core.Primitive("sin_cos")
    p.multiple_results = True  # set after construction, as JAX programs do

    @p.def_impl
    def _impl(x):
        return [np.sin(x), np.cos(x)]

    @p.def_abstract_eval
    def _abstract(x):
        return (core.ShapedArray(x.shape, x.dtype), core.ShapedArray(x.shape, x.dtype))

    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        return [s, c], [c * t, -s * t]

    ad.primitive_jvps[p] = _jvp
    batching.primitive_batchers[p] = lambda vals, dims: (p.bind(*vals), [dims[0], dims[0]])
    x = np.array([0.5, 1.5, -2.0])
    want = [np.sin(x), np.cos(x)]
    np.testing.assert_allclose(p.bind(x), want, rtol=1e-15)
    np.testing.assert_allclose(ft.jit(lambda v: p.bind(v))(x), want, rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(lambda v: p.bind(v))(x), want, rtol=1e-15)
    closed = ft.make_jaxpr(lambda v: p.bind(v))(x)
    assert [e.primitive.name for e in closed.eqns] == ["sin_cos"] and len(closed.out_avals) == 2
    grad = ft.jit(ft.grad(lambda v: (p.bind(v)[0] * p.bind(v)[1]).sum()))(x)
    np.testing.assert_allclose(grad, np.cos(2 * x), rtol=1e-14)


def test_abstract_eval_results_are_checked_and_normalized(scratch_tables: None) -> None:
    p = core.Primitive("as_f32")
    p.def_impl(lambda x: np.asarray(x, np.float32))
    p.def_abstract_eval(lambda x: core.ShapedArray(list(x.shape), np.float32))
    (aval,) = ft.make_jaxpr(p.bind)(np.ones((2, 3))).out_avals
    assert aval.shape == (2, 3) and aval.dtype == np.dtype(np.float32)
    assert ft.jit(p.bind)(np.ones(2)).dtype == np.float32

    listed = core.Primitive("listed")
    listed.def_abstract_eval(lambda x: [x])  # a list from a single-result primitive
    with pytest.raises(TypeError, match=r"listed abstract evaluation: .*ShapedArray.*multiple"):
        ft.make_jaxpr(listed.bind)(1.0)
    many = core.Primitive("many", multiple_results=True)
    many.def_abstract_eval(lambda x: x)
    with pytest.raises(TypeError, match=r"many abstract evaluation: expected a sequence"):
        ft.make_jaxpr(many.bind)(1.0)


def test_each_missing_rule_is_an_error_naming_the_primitive_and_what_to_register(
    scratch_tables: None,
) -> None:
    p = core.Primitive("half_done")
    with pytest.raises(NotImplementedError, match=r"'half_done'.*half_done_p\.def_impl"):
        p.bind(1.0)
    with pytest.raises(NotImplementedError, match=r"'half_done'.*def_abstract_eval"):
        ft.jit(p.bind)(1.0)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match=r"jit.*'half_done'.*def_impl.*numba_emitters"):
        ft.jit(p.bind)(1.0)
    p.def_impl(lambda x: np.multiply(x, 3.0))
    assert ft.jit(p.bind)(1.0) == 3.0
    with pytest.raises(NotImplementedError, match=r"jvp.*'half_done'.*ad\.primitive_jvps"):
        ft.grad(p.bind)(1.0)
    with pytest.raises(NotImplementedError, match=r"vmap.*'half_done'.*primitive_batchers"):
        ft.vmap(p.bind)(np.ones(2))
    # a JVP applying the primitive to tangents: reverse mode needs its transpose
    ad.primitive_jvps[p] = lambda primals, tangents: (
        p.bind(*primals),
        p.bind(ad.instantiate_zeros(tangents[0])),
    )
    assert ft.jvp(p.bind, (1.0,), (1.0,))[1] == 3.0
    with pytest.raises(NotImplementedError, match=r"transpose.*'half_done'.*primitive_transposes"):
        ft.grad(p.bind)(1.0)
    ad.primitive_transposes[p] = lambda ct, x: [p.bind(ct)]
    assert ft.grad(p.bind)(1.0) == 3.0 and ft.jit(ft.grad(p.bind))(2.0) == 3.0


def test_deflinear_and_defbilinear_have_jax_signatures(scratch_tables: None) -> None:
    scale = core.Primitive("scale_by")
    scale.def_impl(lambda x, *, k: np.multiply(x, k))
    scale.def_abstract_eval(lambda x, *, k: x)
    ad.deflinear(scale, lambda ct, *, k: [scale.bind(ct, k=k)])  # no operands given
    x = np.array([1.0, 2.0])
    assert ft.grad(lambda v: scale.bind(v, k=3.0).sum())(x).tolist() == [3.0, 3.0]
    assert ft.jvp(lambda v: scale.bind(v, k=3.0), (x,), (x,))[1].tolist() == [3.0, 6.0]
    shape_seen: list[tuple[int, ...]] = []

    def transpose2(ct, v, *, k):  # deflinear2: the operand too (undefined: its aval)
        shape_seen.append(v.aval.shape)
        return [scale.bind(ct, k=k)]

    ad.deflinear2(scale, transpose2)
    assert ft.grad(lambda v: scale.bind(v, k=2.0).sum())(x).tolist() == [2.0, 2.0]
    assert shape_seen == [(2,)]

    prod = core.Primitive("prod2")
    prod.def_impl(np.multiply)
    prod.def_abstract_eval(lambda x, y: x)
    seen: list[tuple[bool, bool]] = []

    def lhs(ct, u, v):
        seen.append((ad.is_undefined_primal(u), ad.is_undefined_primal(v)))
        return prod.bind(ct, v)

    ad.defbilinear(prod, lhs, lambda ct, u, v: prod.bind(u, ct))
    y = np.array([5.0, 7.0])
    gx, gy = ft.grad(lambda u, v: prod.bind(u, v).sum(), argnums=(0, 1))(x, y)
    assert gx.tolist() == [5.0, 7.0] and gy.tolist() == [1.0, 2.0] and seen == [(True, False)]


def test_register_lowering_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match=r"register_lowering: expected a functrace.core.Primitive"):
        mlir.register_lowering("multiply_add", lambda ctx, x: [x])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"register_lowering: expected a callable .*'p1'"):
        mlir.register_lowering(core.Primitive("p1"), None)  # type: ignore[arg-type]
