"""``functrace.debug``: ``print``, ``callback`` and ``breakpoint`` that see the values a
program computes, eagerly, under every transform and inside compiled (``jit``) code.

All three bind one primitive, ``debug_callback``, whose parameter is the Python
function to call. It is effectful (``ir.effectful_primitives``): dead-code elimination
never drops it, even though nothing uses its result. Its rules:

- eagerly (impl) the function is called at once with the values;
- under ``jvp``/``grad``/``vjp`` (JVP rule) it is bound on the primals only: one call
  with the primal values, none for tangents or cotangents (as JAX);
- under ``vmap`` (batching rule) it is called once per example, in index order, with
  that example's values (as JAX), or once with the batched values (batch axis first)
  when created with ``per_example=False``;
- under ``jit`` the compiled program calls it with the runtime values, in program
  order: every iteration of a ``scan``/``fori_loop``/``while_loop`` body (a loop holding
  a callback runs in Python around its compiled body), only the branch a ``cond`` takes.

Its single result is a 0-d bool token that no one reads (a zero-result equation would
need special cases in every interpreter).
"""

from __future__ import annotations

import pdb
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _debug, core, ir
from functrace._array import to_array
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.tree_util import tree_flatten, tree_unflatten

debug_callback_p = Primitive("debug_callback")

_TOKEN_AVAL = ShapedArray((), np.dtype(np.bool_))


class _Callback:
    """The parameter of ``debug_callback``: ``fn`` called on the pytrees ``args`` and
    ``kwargs`` rebuilt from the flat operands (``treedef``)."""

    __slots__ = ("fn", "treedef", "static", "per_example", "ordered", "__name__")

    def __init__(
        self,
        fn: Callable[..., Any],
        treedef: Any,
        static: dict[int, Any],
        per_example: bool,
        ordered: bool,
    ):
        self.fn, self.treedef, self.static = fn, treedef, static
        self.per_example, self.ordered = per_example, ordered
        self.__name__ = getattr(fn, "__name__", "callback")

    def __call__(self, *leaves: Any) -> None:
        it = iter(leaves)
        n = len(leaves) + len(self.static)
        full = [self.static[k] if k in self.static else next(it) for k in range(n)]
        args, kwargs = tree_unflatten(self.treedef, full)
        self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return self.__name__


def _token() -> np.ndarray:
    return np.zeros((), np.bool_)


def _impl(*leaves: Any, callback: Any) -> np.ndarray:
    if not _debug.state.mute_effects:  # not a loop re-running work (_debug.muted_effects)
        callback(*[_value(x) for x in leaves])
    return _token()


def _value(x: Any) -> Any:
    """What the callback receives: Python scalars as they are, arrays as Arrays."""
    if isinstance(x, (bool, int, float, complex)):
        return x
    return to_array(x)


def _abstract_eval(*avals: ShapedArray, callback: Any) -> ShapedArray:
    return _TOKEN_AVAL


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: Any) -> Any:
    # One call with the primal values; tangents are never shown (as JAX).
    out = debug_callback_p.bind(*primals, callback=callback)
    return out, ad.Zero(ad.tangent_aval(_TOKEN_AVAL))


class _PerExample:
    """A callback node called once per example of operands batched along axis 0
    (``batched[k]``: whether operand ``k`` is), in index order. A nested ``vmap`` wraps
    it again, so the outer vmap is the outer loop (as a Python loop over the examples
    would print, and as ``grad_hook`` is called)."""

    __slots__ = ("fn", "batched", "size", "per_example", "__name__")

    def __init__(self, fn: Any, batched: tuple[bool, ...], size: int) -> None:
        self.fn, self.batched, self.size = fn, batched, size
        self.per_example = True
        self.__name__ = fn.__name__

    def __call__(self, *leaves: Any) -> None:
        for i in range(self.size):
            self.fn(*[x[i] if b else x for x, b in zip(leaves, self.batched)])

    def __repr__(self) -> str:
        return self.__name__


def _batch(
    vals: list[Any], bdims: list[Any], *, trace: batching.BatchTrace, callback: Any
) -> tuple[Any, Any]:
    moved = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
    if callback.per_example:  # one call per example, in index order, when it runs
        callback = _PerExample(callback, tuple(d is not None for d in bdims), trace.axis_size)
    # else one call with the batched values, batch axis first
    return debug_callback_p.bind(*moved, callback=callback), None


core.impl_rules[debug_callback_p] = _impl
core.abstract_eval_rules[debug_callback_p] = _abstract_eval
ad.jvp_rules[debug_callback_p] = _jvp
batching.batching_rules[debug_callback_p] = _batch
batching.rules_with_trace.add(debug_callback_p)
ir.effectful_primitives.add(debug_callback_p)


_ARRAY_LIKE = (core.Tracer, np.ndarray, np.generic, bool, int, float, complex)


def _check_bool(fname: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fname}: expected {name} to be a bool, got {type(value).__name__}.")


def callback(
    callback: Callable[..., Any],
    *args: Any,
    ordered: bool = False,
    per_example: bool = True,
    **kwargs: Any,
) -> None:
    """Call ``callback(*args, **kwargs)`` on the values the program computes; return
    None (as ``jax.debug.callback``). ``args``/``kwargs`` are pytrees of arrays.

    Eagerly the call happens at once. Under ``grad``/``vjp``/``jvp`` it happens once,
    with the primal values (never with tangents or cotangents). Under ``vmap`` it
    happens once per example, in index order, with that example's values (as JAX);
    ``per_example=False`` makes it one call with the batched values instead (batch axis
    first; values that are not batched are passed as they are). Under ``jit`` the
    compiled code calls it with the runtime values (not tracers), in program order:
    on every iteration of a loop body, and only in the ``cond`` branch taken. The call
    is never removed as dead code. ``ordered`` is accepted for JAX compatibility:
    callbacks always run in program order here. The callback's return value is
    ignored.
    """
    if not callable(callback):
        raise TypeError(
            f"debug.callback: expected a callable as the first argument, got "
            f"{type(callback).__name__}."
        )
    _check_bool("debug.callback", "ordered", ordered)
    _check_bool("debug.callback", "per_example", per_example)
    leaves, treedef = tree_flatten((args, kwargs))
    # Leaves that are not arrays (strings, None, objects) are passed through as they are.
    static = {k: x for k, x in enumerate(leaves) if not isinstance(x, _ARRAY_LIKE)}
    node = _Callback(callback, treedef, static, per_example, ordered)
    debug_callback_p.bind(*[x for x in leaves if isinstance(x, _ARRAY_LIKE)], callback=node)


def print(  # noqa: A001 - jax.debug.print's name
    fmt: str,
    *args: Any,
    ordered: bool = False,
    per_example: bool = True,
    **kwargs: Any,
) -> None:
    """Print ``fmt.format(*args, **kwargs)`` with the values the program computes (as
    ``jax.debug.print``): the runtime values under ``jit``, the primal values under
    ``grad``/``vjp``/``jvp``, one line per example under ``vmap`` (``per_example=False``:
    one line with the batched values). See :func:`callback` for when it runs.

    >>> import functrace as ft
    >>> def f(x):
    ...     ft.debug.print("x = {}", x)
    ...     return x * 2.0
    >>> _ = ft.jit(f)(3.0)
    x = 3.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: expected a format string, got {type(fmt).__name__}.")

    def _print(*a: Any, **k: Any) -> None:
        import builtins

        builtins.print(fmt.format(*a, **k))

    _print.__name__ = "debug_print"
    callback(_print, *args, ordered=ordered, per_example=per_example, **kwargs)


def _break() -> None:
    pdb.set_trace()


def breakpoint() -> None:  # noqa: A001 - jax.debug.breakpoint's name
    """Stop in the Python debugger (``pdb.set_trace()``). Eagerly and under
    ``grad``/``vmap`` this happens when the call is reached (inspect the caller's
    variables with ``up``); under ``jit`` it happens when the compiled code reaches
    that point, inside functrace's driver, where traced values are not available: use
    ``debug.print`` to see runtime values there, or run with ``disable_jit()``."""
    callback(_break)


__all__ = ["breakpoint", "callback", "debug_callback_p", "print"]
