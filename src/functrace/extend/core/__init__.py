"""The jaxpr types and ``Primitive`` under JAX's names (``jax.extend.core``), for custom
jaxpr interpreters and new primitives.

A program made by ``functrace.make_jaxpr`` is a :class:`ClosedJaxpr`: its ``jaxpr``
(``constvars``, ``invars``, ``eqns``, ``outvars``) and its constants (``consts``, also
``literals``). An equation (:class:`JaxprEqn`) has a ``primitive``, ``params``,
``invars`` (each a :class:`Var` or a :class:`Literal`, whose value is ``.val``) and
``outvars``; ``eqn.primitive.bind(*values, **eqn.params)`` runs it under whatever
transform is active, so an interpreter written this way composes with ``jit``,
``vmap`` and ``grad``:

>>> import numpy as np
>>> import functrace as ft
>>> import functrace.numpy as fnp
>>> from functrace.extend import core
>>> closed = ft.make_jaxpr(lambda x: fnp.exp(fnp.tanh(x)) + 1.0)(np.array(0.5))
>>> [e.primitive.name for e in closed.eqns]
['tanh', 'exp', 'add']
>>> isinstance(closed.eqns[-1].invars[1], core.Literal)
True
>>> round(float(core.jaxpr_as_fun(closed)(0.5)[0]), 6)
2.587431
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace.core import Primitive, ShapedArray
from functrace.extend.core import primitives  # noqa: F401
from functrace.ir import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Var,
    typecheck_jaxpr,
)
from functrace.ir import eval_jaxpr as _eval_jaxpr


def eval_jaxpr(
    jaxpr: Jaxpr, consts: Sequence[Any], *args: Any, propagate_source_info: bool = True
) -> list[Any]:
    """The list of ``jaxpr``'s outputs for constants ``consts`` and arguments ``args``,
    each equation's primitive bound in turn (so under any active transform too); JAX's
    ``jax.core.eval_jaxpr``, also ``functrace.core.eval_jaxpr``.
    ``propagate_source_info`` is accepted for JAX's signature.

    >>> import functrace as ft
    >>> closed = ft.make_jaxpr(lambda x, y: x * y + 1.0)(2.0, 3.0)
    >>> [float(v) for v in eval_jaxpr(closed.jaxpr, closed.consts, 2.0, 3.0)]
    [7.0]
    """
    return _eval_jaxpr(jaxpr, consts, args)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A function of the jaxpr's inputs returning the list of its outputs (its
    constants bound); traceable by every transform.

    >>> import functrace as ft
    >>> f = jaxpr_as_fun(ft.make_jaxpr(lambda x: x * 2.0)(1.0))
    >>> [float(v) for v in f(3.0)]
    [6.0]
    """
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(
            f"jaxpr_as_fun: expected a ClosedJaxpr (from make_jaxpr), got "
            f"{type(closed_jaxpr).__name__}."
        )
    jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts

    def fun(*args: Any) -> list[Any]:
        return _eval_jaxpr(jaxpr, consts, args)

    return fun


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Check that every variable is bound once before it is read and that each
    equation's output types are what its primitive's abstract evaluation gives; a
    :class:`JaxprTypeError` names the first equation that is not."""
    typecheck_jaxpr(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr)


def new_jaxpr_eqn(
    invars: Sequence[Var | Literal],
    outvars: Sequence[Var],
    primitive: Primitive,
    params: dict[str, Any],
    effects: Any = frozenset(),
    source_info: Any = None,
    ctx: Any = None,
) -> JaxprEqn:
    """An equation ``outvars = primitive[params] invars`` (JAX's argument order).
    ``effects`` and ``ctx`` are accepted for JAX's signature: an equation's effects come
    from its primitive (:attr:`JaxprEqn.effects`)."""
    return JaxprEqn(primitive, tuple(invars), dict(params), tuple(outvars), source_info)


__all__ = [
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "Primitive",
    "ShapedArray",
    "Var",
    "check_jaxpr",
    "eval_jaxpr",
    "jaxpr_as_fun",
    "new_jaxpr_eqn",
    "primitives",
]
