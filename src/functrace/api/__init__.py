"""The public transforms: pytrees, ``argnums``, ``has_aux`` and input validation.

This is the only package that knows about pytrees and argument plumbing; the
interpreters work on flat lists of arrays. The modules, by topic:

* ``_args``: argument plumbing shared by every transform (``argnums``, plain arrays,
  differentiability checks, the arrays a transform returns);
* ``_autodiff``: ``grad``/``value_and_grad``, ``vjp``, ``jvp``, ``linearize`` and
  ``stop_gradient``;
* ``_jacobians``: ``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian``;
* ``_vmap``: ``vmap``;
* ``_shapes``: ``make_jaxpr`` and ``eval_shape``.

Every array argument (and tangent or cotangent) goes through ``core.plain_array``
first: ``numpy.matrix`` and masked arrays are rejected with a TypeError naming the
transform, function and argument; other ndarray subclasses are viewed as ndarray;
byte order and alignment are fixed.
"""

from __future__ import annotations

from functrace.api._autodiff import grad, jvp, linearize, stop_gradient, value_and_grad, vjp
from functrace.api._devices import block_until_ready, device_get, device_put, devices
from functrace.api._jacobians import hessian, jacfwd, jacobian, jacrev
from functrace.api._shapes import eval_shape, make_jaxpr
from functrace.api._vmap import vmap
from functrace.tree_util import tree_structure

__all__ = [
    "block_until_ready",
    "device_get",
    "device_put",
    "devices",
    "eval_shape",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "linearize",
    "make_jaxpr",
    "stop_gradient",
    "tree_structure",
    "value_and_grad",
    "vjp",
    "vmap",
]
