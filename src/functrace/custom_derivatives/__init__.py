"""User-defined derivative rules: ``custom_jvp``, ``custom_vjp`` and ``grad_hook``.

A call of a ``custom_jvp``/``custom_vjp`` function on traced values binds one
primitive whose params hold the function's jaxpr (traced on the argument types)
and the user's rules. Evaluating it runs the jaxpr; the JVP interpreter calls the
user's rule instead of differentiating the jaxpr. For ``custom_vjp`` the JVP rule
runs ``fwd`` and emits a linear ``custom_lin`` equation whose transpose is ``bwd``,
so reverse mode (linearize + transpose) calls ``bwd`` with the residuals (a batched
``custom_lin`` runs ``bwd`` per example; evaluated forward, it is ``jvp``'s error). A
``custom_jvp`` call on the tangents (a rule applying a linear custom function to them)
is transposed through its jaxpr. When differentiation is the innermost transform of
the operands (eager ``jvp``/``grad``/``vjp``; no ``jit`` or ``vmap`` inside it), a call
runs the JVP rule or ``fwd`` directly on the primals, without tracing the function, so
both may branch on concrete values.

Under ``vmap`` the call stays a custom call: its batching rule binds a new call whose
function is the batched jaxpr and whose rules run the user's rules per example (inside
the same vmap), so ``grad(vmap(f))`` and ``jvp(vmap(f))`` use the rules too. A
``grad_hook`` under ``vmap`` calls its hook once per example, with that example's
cotangent. Under nested derivatives a hook belongs to the innermost backward pass that
differentiates its value; outer transforms differentiate through that pass.

``custom_gradient`` and ``closure_convert`` live in ``functrace.api`` and are
re-exported here.

Rules registered with ``symbolic_zeros=True`` see JAX's wrappers: a ``custom_jvp`` rule
gets a :class:`SymbolicZero` for the tangent of each argument that is not differentiated
(the rule is not called when none is); a ``custom_vjp`` fwd gets each argument leaf as a
:class:`CustomVJPPrimal` ``(value, perturbed)`` and bwd a ``SymbolicZero`` for each
output cotangent that is zero. Rules may return ``SymbolicZero``s (bwd also ``None``).
Which tangents are zero is decided while tracing, as in JAX, so the flags are the same
under ``jit``, ``vmap`` and nested derivatives; a tangent that is a concrete array of
zeros counts as zero too (functrace's linear maps treat it so), where JAX would call it
perturbed.

``linear_call(fun, fun_transpose, residual_args, linear_args)`` is a call of a linear
function whose transpose the user gives (one ``linear_call`` primitive).

The modules: ``_common`` (tracing the function, its arguments, batching a custom
call), ``_jvp`` (``custom_jvp``), ``_vjp`` (``custom_vjp``) and ``_hooks``
(``grad_hook``), ``_symbolic`` (``SymbolicZero``, ``CustomVJPPrimal``) and ``_linear``
(``linear_call``).
"""

from __future__ import annotations

from functrace.custom_derivatives._hooks import grad_hook
from functrace.custom_derivatives._hooks import grad_hook_p as grad_hook_p
from functrace.custom_derivatives._hooks import hook_call_p as hook_call_p
from functrace.custom_derivatives._jvp import custom_jvp
from functrace.custom_derivatives._jvp import custom_jvp_call_p as custom_jvp_call_p
from functrace.custom_derivatives._linear import linear_call
from functrace.custom_derivatives._linear import linear_call_p as linear_call_p
from functrace.custom_derivatives._symbolic import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from functrace.custom_derivatives._vjp import custom_lin_p as custom_lin_p
from functrace.custom_derivatives._vjp import custom_vjp
from functrace.custom_derivatives._vjp import custom_vjp_call_p as custom_vjp_call_p

# Defined with the other function transforms (they need ``jvp``), re-exported here as
# in ``jax.custom_derivatives``; that module imports the rules' modules, not this one.
# isort: split
from functrace.api._extras import closure_convert, custom_gradient

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "custom_vjp_primal_tree_values",
    "grad_hook",
    "linear_call",
    "zero_from_primal",
]
