"""Programs in HIPS autograd's style run under functrace and compute autograd's numbers.

The programs live in tests/autograd_programs.py; each takes a namespace of the names an
autograd program imports, and the same code was run under autograd to record
tests/fixtures/autograd_programs.npz. Here that namespace holds functrace's
equivalents: the changes a port from autograd makes to its imports. Programs that
call ``lib.jit`` run twice: eagerly (``jit`` the identity, as in autograd) and with
functrace's ``jit``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import functrace
import functrace.numpy as fnp
from autograd_programs import JITTED, PROGRAMS
from functrace.flatten_util import ravel_pytree

FIXTURE = Path(__file__).parent / "fixtures" / "autograd_programs.npz"


def elementwise_grad(f: Any) -> Any:
    """autograd's ``elementwise_grad``: the VJP of ``f`` at ``x`` with a cotangent of ones
    (for a function applied elementwise, the derivative at each element)."""

    def d(x: Any) -> Any:
        y, pullback = functrace.vjp(f, x)
        return pullback(fnp.ones_like(y))[0]

    return d


def hessian_vector_product(f: Any) -> Any:
    """autograd's ``hessian_vector_product(f)(x, v)``: forward over reverse."""
    return lambda x, v: functrace.jvp(functrace.grad(f), (x,), (v,))[1]


def primitive_with_vjp(fun: Any, make_vjp: Any) -> Any:
    """autograd's ``primitive(fun)`` with ``defvjp(fun, make_vjp)``, where
    ``make_vjp(ans, x)`` returns ``g -> x_bar``: a ``custom_vjp`` keeping ``ans`` and
    ``x`` as residuals."""
    f = functrace.custom_vjp(fun)

    def fwd(x: Any) -> Any:
        ans = fun(x)
        return ans, (ans, x)

    def bwd(res: Any, g: Any) -> Any:
        return (make_vjp(*res)(g),)

    f.defvjp(fwd, bwd)
    return f


def namespace(jit: bool) -> SimpleNamespace:
    return SimpleNamespace(
        numpy=functrace.numpy,
        scipy=functrace.scipy,
        grad=functrace.grad,  # argnum -> argnums; positional calls are the same
        value_and_grad=functrace.value_and_grad,
        elementwise_grad=elementwise_grad,
        hessian=functrace.hessian,
        hessian_vector_product=hessian_vector_product,
        flatten=ravel_pytree,  # autograd.misc.flatten; dict keys sorted in both
        primitive_with_vjp=primitive_with_vjp,
        jit=functrace.jit if jit else (lambda f, **kw: f),
        vmap=functrace.vmap,
    )


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files if k != "__about__"}


def _compare(name: str, got: dict[str, Any], reference: dict[str, np.ndarray]) -> None:
    expected = {k.split("/", 1)[1]: v for k, v in reference.items() if k.startswith(name + "/")}
    assert set(got) == set(expected), f"{name}: outputs {sorted(got)} vs {sorted(expected)}"
    for key, want in expected.items():
        have = np.asarray(got[key])
        assert have.shape == want.shape, f"{name}/{key}: shape {have.shape}, autograd {want.shape}"
        np.testing.assert_allclose(have, want, rtol=1e-10, atol=1e-12, err_msg=f"{name}/{key}")


def test_every_program_has_reference_values(reference: dict[str, np.ndarray]) -> None:
    assert {k.split("/")[0] for k in reference} == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_autograd(name: str, reference: dict[str, np.ndarray]) -> None:
    _compare(name, PROGRAMS[name](namespace(jit=False)), reference)


@pytest.mark.parametrize("name", JITTED)
def test_program_matches_autograd_under_jit(name: str, reference: dict[str, np.ndarray]) -> None:
    _compare(name, PROGRAMS[name](namespace(jit=True)), reference)
