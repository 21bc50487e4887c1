"""``functrace.experimental.checkify``: functional runtime errors (JAX's
``jax.experimental.checkify``).

:func:`check` states a predicate about runtime values. Eagerly a False predicate raises
:class:`functrace.errors.JaxRuntimeError` at once; ``jit`` cannot raise from compiled
code, so a jitted function holding a ``check`` is an error unless it is
*functionalized*: :func:`checkify` turns ``f`` into a function returning
``(err, out)``, where ``err`` is an :class:`Error` value that says whether a check
failed and with which message (``err.get()``), and ``err.throw()`` raises it. Both
``jit(checkify(f))`` and ``checkify(jit(f))`` work; ``vmap(checkify(f))`` gives a
batched error whose message names each failing example (``at mapped index i: ...``);
checks inside ``cond``, ``switch``, ``while_loop``, ``fori_loop`` and ``scan`` bodies are
carried out of the loop (the first error in program order wins); ``grad`` of a function
holding a ``check`` checks the primal values (write ``checkify(grad(f))``).

``errors=`` adds automatic checks: ``nan_checks`` (a primitive produced a NaN),
``div_checks`` (a ``div`` by zero), ``index_checks`` (an index out of bounds in a
gather, scatter or dynamic slice); sets combine with ``|`` and ``-``.

>>> import functrace as ft
>>> import functrace.numpy as fnp
>>> from functrace.experimental import checkify
>>> def f(x):
...     checkify.check(x > 0, "x must be positive, got {}", x)
...     return fnp.log(x)
>>> err, y = ft.jit(checkify.checkify(f))(fnp.asarray(-2.0))
>>> err.get()
'x must be positive, got -2.0 (`check` failed)'

Messages and the order in which errors win are JAX's; NaN errors name functrace's
primitives (``fnp.arcsin`` is not one primitive here, so its NaN is reported by the
primitive that made it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core
from functrace import numpy as fnp
from functrace._array import to_array
from functrace.core import Tracer
from functrace.errors import JaxRuntimeError
from functrace.experimental._checkify_error import (
    BatchedError,
    CheckifyException,
    DivisionByZeroError,
    Error,
    ErrorCategory,
    ErrorInfo,
    FailedCheckError,
    NaNError,
    OOBError,
    all_checks,
    assert_func,
    automatic_checks,
    check_error_value,
    div_checks,
    float_checks,
    index_checks,
    init_error,
    nan_checks,
    user_checks,
)
from functrace.experimental._checkify_interp import KNOWN_ERROR_TYPES, checkify_jaxpr
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "BatchedError",
    "CheckifyException",
    "DivisionByZeroError",
    "Error",
    "ErrorCategory",
    "FailedCheckError",
    "JaxRuntimeError",
    "NaNError",
    "OOBError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]


def _error_set(fname: str, errors: Any) -> frozenset:
    if isinstance(errors, (set, frozenset)) and all(
        isinstance(e, type) and e in KNOWN_ERROR_TYPES for e in errors
    ):
        return frozenset(errors)
    got = repr(errors) if isinstance(errors, (set, frozenset)) else type(errors).__name__
    raise TypeError(
        f"{fname}: expected errors to be a set of checkify's error classes, such as "
        f"checkify.user_checks, nan_checks, div_checks, index_checks, float_checks, "
        f"automatic_checks or all_checks (combined with | and -), got {got}."
    )


def checkify(f: Callable[..., Any], errors: frozenset = user_checks) -> Callable[..., Any]:
    """``f`` as a function returning ``(err, out)``: ``out`` is ``f``'s output and
    ``err`` an :class:`Error` holding the first failed :func:`check` (and, with
    ``errors=``, the first NaN, division by zero or index out of bounds) instead of an
    exception. ``f`` is traced as ``make_jaxpr`` traces it (array arguments traced,
    other arguments static), then run with the error threaded through, so it works eagerly
    and under ``jit``, ``vmap`` and ``grad``. Checks of an error class that ``errors``
    leaves out are dropped, as JAX's."""
    fname = "checkify"
    if not callable(f):
        raise TypeError(f"{fname}: expected a callable, got {type(f).__name__}.")
    enabled = _error_set(f"{fname} of {core.describe_fun(f)}", errors)
    origin = f"checkify of {core.describe_fun(f)}"

    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = tree_flatten((args, kwargs))
        dynamic = [k for k, x in enumerate(leaves) if core.is_array_like(x)]
        vals = [
            core.plain_array(leaves[k], origin, f"argument leaf {k}")
            if isinstance(leaves[k], np.ndarray)
            else leaves[k]
            for k in dynamic
        ]
        holder: list[Any] = []

        def flat(*tracers: Any) -> list[Any]:
            full = list(leaves)
            for k, t in zip(dynamic, tracers):
                full[k] = t
            a, kw = tree_unflatten(in_tree, full)
            out_leaves, out_tree = tree_flatten(core.call_user("checkify", f, a, kw))
            holder.append(out_tree)
            return out_leaves

        closed, _ = trace_to_jaxpr(flat, core.avals_of(vals), origin=origin)
        err, outs = checkify_jaxpr(closed.jaxpr, closed.consts, enabled, init_error, vals)
        return err, tree_unflatten(holder[0], [to_array(o) for o in outs])

    checked.__name__ = f"checkify_{getattr(f, '__name__', 'f')}"
    checked.__wrapped__ = f  # type: ignore[attr-defined]
    return checked


def _is_scalar_bool(pred: Any) -> bool:
    if isinstance(pred, (bool, np.bool_)):
        return True
    if isinstance(pred, (np.ndarray, Tracer)):
        return pred.shape == () and pred.dtype == np.bool_
    return False


def _check(fname: str, pred: Any, msg: Any, debug: bool, fmt_args: Any, fmt_kwargs: Any) -> None:
    if not isinstance(msg, str):
        raise TypeError(f"{fname}: expected a message string, got {type(msg).__name__}.")
    if not _is_scalar_bool(pred):
        got = core.describe_value(pred)
        if isinstance(pred, (np.ndarray, Tracer)):
            got = f"{pred.dtype}{list(pred.shape)}"
        raise TypeError(
            f"{fname}: expected a scalar boolean pred (a bool or a 0-d bool array), got "
            f"{got}. Reduce it first, e.g. with fnp.all(...)."
        )
    leaves, treedef = tree_flatten((fmt_args, fmt_kwargs))
    for x in leaves:
        if not core.is_array_like(x):  # JAX takes arrays only; Python scalars are fine here
            raise TypeError(
                f"{fname}: expected the formatting arguments to be pytrees of arrays or "
                f"numbers, got {x!r:.60} of type {type(x).__name__}. Write a value known "
                f"when tracing into the message itself."
            )
    info = ErrorInfo(FailedCheckError, (msg, treedef))
    err = assert_func(init_error, fnp.logical_not(pred), info, leaves)
    check_error_value(err, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Record an error with ``msg`` where the scalar boolean ``pred`` is False.

    ``msg`` is a format string filled with ``fmt_args``/``fmt_kwargs`` (pytrees of
    arrays, traced or not, or numbers: JAX takes arrays only) at their runtime values,
    as ``str.format``; the message ends with `` (`check` failed)``, as JAX's. Eagerly
    (and under ``grad``/``vmap``, on the primal values) a False ``pred`` raises
    :class:`functrace.errors.JaxRuntimeError` at once; inside :func:`checkify` the
    error is returned instead; under ``jit`` without ``checkify`` it is a
    ``ValueError`` when the function is compiled."""
    _check("checkify.check", pred, msg, False, fmt_args, fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """:func:`check` that only acts under :func:`checkify` (elsewhere, eagerly and under
    ``jit`` too, it does nothing), as JAX's."""
    _check("checkify.debug_check", pred, msg, True, fmt_args, fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise ``error`` as :func:`check` raises a failed check: eagerly a
    :class:`functrace.errors.JaxRuntimeError` if it is set, inside :func:`checkify` it
    joins the returned error (a checkified function's error, re-raised in an outer
    checkified or eager function)."""
    if not isinstance(error, Error):
        raise TypeError(
            f"checkify.check_error: expected a checkify.Error, got {type(error).__name__}."
        )
    check_error_value(error)
