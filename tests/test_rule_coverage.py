"""Every primitive has every rule and an op-table row; exemptions live in one dict."""

from __future__ import annotations

import pytest

import functrace  # noqa: F401  (registers every primitive)
from functrace import core
from functrace.interpreters import ad, batching
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax import base
from op_db import ALL_OPS

# primitive name -> {rule kind: reason}. Rule kinds: "row", "jvp", "batching", "numba".
EXEMPT: dict[str, dict[str, str]] = {
    "custom_jvp_call": {"row": "covered by test_autodiff custom_jvp tests"},
    "custom_vjp_call": {"row": "covered by test_autodiff custom_vjp tests"},
    "custom_lin": {
        "row": "internal: the linear half of custom_vjp, only inside reverse mode",
        "jvp": "forward mode of custom_vjp is an error by design (JAX's behaviour)",
        "batching": "never bound under vmap: reverse mode transposes it into bwd calls",
    },
    "grad_hook": {"row": "covered by test_autodiff grad_hook tests"},
    "hook_call": {
        "row": "internal: a grad_hook callback (or its derivative) staged under jit or in a "
        "loop body; covered by test_trust_vmap item 2"
    },
    "cond_lin": {
        "row": "internal: the linear half of cond in reverse mode, exercised by "
        "every gradient through lax.cond (op rows lax.cond*)"
    },
    "while_lin": {
        "row": "internal: the linear half of while_loop in reverse mode when the trip "
        "count is traced (under jit/vmap); covered by test_control_flow's jit/vmap grads"
    },
    "while_transpose": {
        "row": "internal: the transpose of while_lin; covered by test_control_flow's jit/vmap grads"
    },
    "add_any": {"row": "internal: cotangent accumulation, exercised by every grad test"},
}
# lax.linalg primitives with no derivative (none in JAX either) or integer results: their
# values, jit, vmap and errors are tested in test_lax_linalg_more (no row: nothing for
# the op table's derivative stacks to check).
for _name in (
    "cholesky_update",
    "hessenberg",
    "householder_product",
    "lu_pivots_to_permutation",
    "ormqr",
    "schur",
    "symmetric_product",
    "tridiagonal",
):
    EXEMPT[_name] = {"row": "not differentiable (as in JAX): tests/test_lax_linalg_more.py"}


def _primitives() -> list[core.Primitive]:
    return sorted(core.impl_rules, key=lambda p: p.name)


def _exempt(p: core.Primitive, kind: str) -> bool:
    return kind in EXEMPT.get(p.name, {})


@pytest.mark.parametrize("p", _primitives(), ids=lambda p: p.name)
def test_primitive_has_abstract_eval(p: core.Primitive) -> None:
    assert p in core.abstract_eval_rules, f"{p.name}: no abstract_eval rule"


@pytest.mark.parametrize("p", _primitives(), ids=lambda p: p.name)
def test_primitive_has_jvp_rule(p: core.Primitive) -> None:
    if _exempt(p, "jvp"):
        return
    assert p in ad.jvp_rules, f"{p.name}: no JVP rule (register it in its block)"


@pytest.mark.parametrize(
    "p", sorted(ad.linear_primitives, key=lambda p: p.name), ids=lambda p: p.name
)
def test_linear_primitive_has_transpose(p: core.Primitive) -> None:
    assert p in ad.transpose_rules, f"{p.name}: linear but no transpose rule"


@pytest.mark.parametrize("p", _primitives(), ids=lambda p: p.name)
def test_primitive_has_batching_rule(p: core.Primitive) -> None:
    if _exempt(p, "batching"):
        return
    assert p in batching.batching_rules, f"{p.name}: no batching rule"


@pytest.mark.parametrize("p", _primitives(), ids=lambda p: p.name)
def test_primitive_has_op_table_row(p: core.Primitive) -> None:
    if _exempt(p, "row"):
        return
    covered = {name for op in ALL_OPS for name in op.primitives}
    assert p.name in covered, f"{p.name}: no row in tests/op_db.py lists it"


@pytest.mark.parametrize(
    "p", sorted(base.elementwise_numpy, key=lambda p: p.name), ids=lambda p: p.name
)
def test_elementwise_primitive_has_numba_emitter(p: core.Primitive) -> None:
    # Without one, jit would call the NumPy impl from the driver: correct, but unfused.
    if _exempt(p, "numba"):
        return
    assert p in numba_emitters, (
        f"{p.name}: no Numba emitter; register numba_emitters[{p.name}_p] in its block "
        "(a template such as 'np.sin({0})', or a function returning None where the driver "
        "should call the impl)"
    )


def test_exemptions_name_real_primitives() -> None:
    names = {p.name for p in _primitives()}
    assert set(EXEMPT) <= names, set(EXEMPT) - names
