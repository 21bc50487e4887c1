"""The public transforms: pytrees, ``argnums``, ``has_aux`` and input validation.

This is the only package that knows about pytrees and argument plumbing; the
interpreters work on flat lists of arrays. The modules, by topic:

* ``_args``: argument plumbing shared by every transform (``argnums``, plain arrays,
  differentiability checks, the arrays a transform returns);
* ``_autodiff``: ``grad``/``value_and_grad``, ``vjp``, ``jvp``, ``linearize`` and
  ``stop_gradient``;
* ``_jacobians``: ``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian``;
* ``_vmap``: ``vmap``;
* ``_shapes``: ``make_jaxpr`` and the ``eval_shape`` of avals;
* ``_extras``: ``ShapeDtypeStruct`` (and the public ``eval_shape``, returning them),
  ``typeof``, ``closure_convert``, ``custom_gradient``, ``linear_transpose``,
  ``named_call``, ``named_scope``, ``ensure_compile_time_eval`` and ``custom_root``
  (``functrace.lax.custom_root``: it needs ``custom_jvp``, a layer above ``lax``);
* ``_callback``: ``pure_callback`` and ``io_callback`` (``functrace.experimental``);
* ``_devices``: placement (``device_put``...) and the device queries.

Every array argument (and tangent or cotangent) goes through ``core.plain_array``
first: ``numpy.matrix`` and masked arrays are rejected with a TypeError naming the
transform, function and argument; other ndarray subclasses are viewed as ndarray;
byte order and alignment are fixed.
"""

from __future__ import annotations

from functrace.api._autodiff import grad, jvp, linearize, stop_gradient, value_and_grad, vjp
from functrace.api._callback import pure_callback
from functrace.api._devices import (
    block_until_ready,
    copy_to_host_async,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    host_count,
    host_id,
    host_ids,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
)
from functrace.api._extras import (
    ShapeDtypeStruct,
    closure_convert,
    custom_gradient,
    custom_root,
    ensure_compile_time_eval,
    eval_shape,
    linear_transpose,
    named_call,
    named_scope,
    typeof,
)
from functrace.api._jacobians import hessian, jacfwd, jacobian, jacrev
from functrace.api._shapes import make_jaxpr
from functrace.api._vmap import vmap
from functrace.tree_util import tree_structure

__all__ = [
    "ShapeDtypeStruct",
    "block_until_ready",
    "closure_convert",
    "custom_gradient",
    "custom_root",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "ensure_compile_time_eval",
    "eval_shape",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "named_call",
    "named_scope",
    "copy_to_host_async",
    "effects_barrier",
    "host_count",
    "host_id",
    "host_ids",
    "process_count",
    "process_index",
    "process_indices",
    "pure_callback",
    "stop_gradient",
    "tree_structure",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
]
