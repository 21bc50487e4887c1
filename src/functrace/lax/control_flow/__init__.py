"""Structured control flow: ``cond``, ``switch``, ``scan``, ``fori_loop``, ``map``,
``while_loop``.

Each construct is a primitive whose params hold sub-jaxprs (the branches or the
loop body, traced once on the argument types). Values the traced functions close
over become leading operands (``num_consts``), so tracers of outer transforms flow
through them like any other argument.

Reverse mode (linearize + transpose) splits a loop in two: a forward loop that
computes the primal values and stacks the *residuals* each iteration's tangent
computation needs, and a linear loop over the tangents that reads them. The
linear loop transposes into a loop that runs the other way. ``while_loop`` needs no
user-given maximum trip count: with concrete inputs it runs once to learn its trip
count and is differentiated as a ``scan`` of that length; when the count is unknown
while tracing (``jit``, ``vmap``), ``while_transpose`` stores the carries as the loop
runs and then sweeps back.

One module per construct: ``common`` (helpers and the loop runners), ``scan_map``
(``scan``, ``map``), ``cond_switch`` (``cond``, ``switch``), ``while_fori``
(``while_loop``, ``fori_loop``) and ``while_reverse`` (the reverse mode of
``while_loop``). The module names differ from the functions they define, so
``control_flow.scan`` is always the function.
"""

from functrace.lax.control_flow.cond_switch import cond, cond_lin_p, cond_p, switch
from functrace.lax.control_flow.scan_map import map, scan, scan_p
from functrace.lax.control_flow.while_fori import fori_loop, while_loop, while_p
from functrace.lax.control_flow.while_reverse import while_lin_p, while_transpose_p

__all__ = [
    "cond",
    "cond_lin_p",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_lin_p",
    "while_loop",
    "while_p",
    "while_transpose_p",
]
