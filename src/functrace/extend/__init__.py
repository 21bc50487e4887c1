"""functrace.extend: the IR's building blocks for code that extends functrace, under
JAX's names (``jax.extend``).

``functrace.extend.core`` holds the jaxpr types (``Jaxpr``, ``JaxprEqn``, ``Var``,
``Literal``, ``ClosedJaxpr``), ``Primitive``, ``jaxpr_as_fun``, ``check_jaxpr``,
``new_jaxpr_eqn`` and, in ``functrace.extend.core.primitives``, the primitives that
functrace's operations bind (``exp_p``, ``add_p``, ...): what a custom jaxpr
interpreter reads and writes.
"""

from functrace.extend import core  # noqa: F401

__all__ = ["core"]
