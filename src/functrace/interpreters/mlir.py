"""JAX's lowering registry (``jax.interpreters.mlir``), for programs that define a
primitive the JAX way.

functrace has no XLA: ``jit`` compiles its own program, with Numba kernels for the
primitives that have an emitter (``numba_rules``) and, for every other primitive, a
call of its ``impl`` (``Primitive.def_impl``) from the compiled driver. A lowering
rule is therefore recorded here, in :data:`lowerings`, and never called: a primitive
defined with ``def_impl`` and ``def_abstract_eval`` works under ``jit`` with or
without one, and its results under ``jit`` are its ``impl``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from functrace.core import Primitive

lowerings: dict[Primitive, dict[str | None, Callable[..., Any]]] = {}
"""primitive -> {platform (None: every platform): the rule registered}. Read by no
transform: it records what a program registered."""


def register_lowering(
    prim: Primitive,
    rule: Callable[..., Any],
    platform: str | None = None,
    inline: bool = True,
    cacheable: bool = True,
) -> None:
    """Record ``rule`` as ``prim``'s lowering for ``platform`` (JAX's signature).
    ``jit`` does not use it: it calls ``prim``'s impl instead (see the module's
    docstring), so registering a rule changes nothing functrace computes.
    ``inline`` and ``cacheable`` are accepted for JAX's signature and ignored.

    >>> from functrace import core
    >>> p = core.Primitive("twice")
    >>> register_lowering(p, lambda ctx, x: [x], platform="cpu")
    >>> sorted(lowerings[p])
    ['cpu']
    """
    if not isinstance(prim, Primitive):
        raise TypeError(
            f"register_lowering: expected a functrace.core.Primitive, got "
            f"{type(prim).__name__} {prim!r:.60}."
        )
    if not callable(rule):
        raise TypeError(
            f"register_lowering: expected a callable lowering rule for '{prim.name}', "
            f"got {type(rule).__name__}."
        )
    lowerings.setdefault(prim, {})[platform] = rule


__all__ = ["lowerings", "register_lowering"]
