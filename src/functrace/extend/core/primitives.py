"""The primitives functrace's operations bind, by name (``jax.extend.core.primitives``):
``exp_p``, ``add_p``, ``dot_general_p``, ``cond_p``, ``custom_jvp_call_p``, ...

A custom interpreter keys its rules on them (``rules[primitives.exp_p] = ...``); each
is also ``functrace.lax.<name>`` for the lax ones. Where a JAX primitive is a composite
of other primitives in functrace (``sinh``, ``asin``, ``square``...), there is no entry:
its equations show the primitives it is made of. ``add_jaxvals_p`` is JAX's name of
``add_any_p``, the sum of two tangents or cotangents.
"""

from __future__ import annotations

from typing import Any

from functrace import lax as _lax
from functrace.api import _callback
from functrace.core import Primitive as _Primitive
from functrace.custom_derivatives import _hooks, _jvp, _linear, _vjp
from functrace.interpreters import ad as _ad


def _collect() -> dict[str, Any]:
    found = {
        name: obj
        for name in dir(_lax)
        if name.endswith("_p")
        and not name.startswith("_")
        and isinstance(obj := getattr(_lax, name), _Primitive)
    }
    found.update(
        add_any_p=_ad.add_any_p,
        add_jaxvals_p=_ad.add_any_p,
        custom_jvp_call_p=_jvp.custom_jvp_call_p,
        custom_vjp_call_p=_vjp.custom_vjp_call_p,
        custom_lin_p=_vjp.custom_lin_p,
        linear_call_p=_linear.linear_call_p,
        grad_hook_p=_hooks.grad_hook_p,
        hook_call_p=_hooks.hook_call_p,
        pure_callback_p=_callback.pure_callback_p,
        io_callback_p=_callback.io_callback_p,
    )
    return found


_found = _collect()
globals().update(_found)
__all__ = sorted(_found)
del _found
