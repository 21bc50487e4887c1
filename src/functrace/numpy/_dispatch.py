"""The plain-NumPy fast path of functrace.numpy: one predicate, one decorator.

Every ``functrace.numpy`` function with a NumPy counterpart is written as its traced
path and decorated with :func:`numpy_path`: a call with no tracer among its arguments
(nested lists, tuples and slice bounds included) while no jit/make_jaxpr trace is
active goes straight to the NumPy function, so plain NumPy inputs give exactly NumPy's
values and result types. The decorator also gives ``functrace.Array`` results for
calls with an ``Array`` among the positional arguments (or in a list/tuple there),
on both paths (see ``functrace/README.md``, "Eager results are Arrays").
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from functrace import _debug, core, dtypes
from functrace._array import Array, _wrap
from functrace._prng import PRNGKeyArray
from functrace.core import Tracer

_promotion = dtypes.promotion  # config.numpy_dtype_promotion: checked when "strict"

_F = TypeVar("_F", bound=Callable[..., Any])
_trace_active = core.traced_path_needed  # a jit trace, or debug checks on
_nd = np.ndarray

# Types that never hold a tracer: ruled out with one set lookup.
_LEAVES = frozenset(
    {np.ndarray, Array, int, float, bool, complex, str, type(None), np.float64, np.int64}
)


def contains_tracer(x: Any) -> bool:
    """Whether ``x`` is a tracer, or a (nested) list/tuple or a slice holding one."""
    t = type(x)
    if t in _LEAVES:
        return False
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        for e in x:
            if type(e) not in _LEAVES and contains_tracer(e):
                return True
        return False
    if t is slice:
        return (
            isinstance(x.start, Tracer) or isinstance(x.stop, Tracer) or isinstance(x.step, Tracer)
        )
    return False


def is_traced(*args: Any) -> bool:
    """Whether a call on ``args`` takes the traced path: a jit/make_jaxpr trace is
    active, or an argument is (or holds, see :func:`contains_tracer`) a tracer."""
    if _trace_active():
        return True
    for a in args:
        if type(a) not in _LEAVES and contains_tracer(a):
            return True
    return False


def _has_array(args: tuple[Any, ...]) -> bool:
    """Whether an ``Array`` is among ``args`` (or directly in a list/tuple there)."""
    for a in args:
        t = type(a)
        if t is Array or ((t is list or t is tuple) and Array in map(type, a)):
            return True
    return False


def _array_results(out: Any) -> Any:
    """``out`` (a result, or a list/tuple of them) as ``Array``s."""
    if type(out) is tuple or type(out) is list:
        return type(out)(_wrap(o) for o in out)
    return _wrap(out)


# The functions that also move typed key arrays (``numpy/_keys.py``): their traced
# function -> the version for keys, called when a call with a key array among its
# arguments fails (NumPy and the traced path refuse keys), so other calls pay nothing.
key_functions: dict[Callable[..., Any], Callable[..., Any]] = {}


def has_key_array(args: Any, kwargs: Any = None) -> bool:
    """Whether a typed key array is among ``args``/``kwargs`` (or in nested lists and
    tuples there, as ``block`` takes)."""
    for a in (*args, *(kwargs or {}).values()):
        t = type(a)
        if t is PRNGKeyArray:
            return True
        if (t is list or t is tuple) and has_key_array(a):
            return True
    return False


def numpy_path(
    np_fn: Callable[..., Any],
    on_error: Callable[..., None] | None = None,
    nargs: int | None = None,
    promotes: bool = False,
    promote_args: tuple[int, ...] = (),
) -> Callable[[_F], _F]:
    """Decorate the traced path of an fnp function: plain calls (see :func:`is_traced`,
    keyword arguments included) go to ``np_fn``, which takes the same arguments.

    Results are ``Array``s when an ``Array`` is among the positional arguments (or in
    a list/tuple there). ``on_error(*args)``, if given, runs when ``np_fn`` raises
    ``OverflowError`` or ``TypeError`` (to raise a clearer error first). With ``nargs``
    (for a NumPy ufunc, which also takes ``out``, ``where``...), only calls with exactly
    ``nargs`` positional arguments and no keywords go to ``np_fn``: the traced
    function's signature rejects the others.
    ``promotes``: the function combines operands of several dtypes; under
    ``numpy_dtype_promotion("strict")`` plain calls take the traced path, whose
    promotion raises (a NumPy ufunc of several operands is checked here instead).
    ``promote_args``: the positions of operands combined in one dtype, checked here
    under ``"strict"`` (for functions whose traced path uses functrace's own functions).
    ``f.traced`` is the undecorated function and ``f.numpy`` is ``np_fn``.
    """

    def decorate(traced: _F) -> _F:
        if isinstance(np_fn, types.FunctionType) and np_fn.__module__.startswith("functrace."):
            # a helper of ours: argument errors name the fnp function, as on the traced path
            np_fn.__name__, np_fn.__qualname__ = traced.__name__, traced.__qualname__

        # a ufunc without core dimensions (matmul and vecdot have them): its operands'
        # ranks are checked by config.numpy_rank_promotion
        elementwise = isinstance(np_fn, np.ufunc) and np_fn.signature is None
        ufunc_promotes = isinstance(np_fn, np.ufunc) and np_fn.nin > 1

        @functools.wraps(traced)
        def f(*args: Any, **kwargs: Any) -> Any:
            if promote_args and _promotion.maybe_strict:  # numpy_dtype_promotion="strict"
                ops = [args[i] for i in promote_args if i < len(args)]
                dtypes.check_operand_promotion(traced.__name__, ops, None, dtypes.from_user(1))
            if (
                not _trace_active()
                and (nargs is None or (len(args) == nargs and not kwargs))
                and not (promotes and _promotion.maybe_strict)
            ):
                arrays = found = False
                for a in args:
                    t = type(a)
                    if t is _nd:
                        continue
                    if t is Array:
                        arrays = True
                    elif t is tuple or t is list:
                        for e in a:
                            te = type(e)
                            if te in _LEAVES:
                                arrays = arrays or te is Array
                            elif contains_tracer(e):
                                found = True
                                break
                        if found:
                            break
                    elif t not in _LEAVES and contains_tracer(a):
                        found = True
                        break
                if kwargs and not found:
                    for v in kwargs.values():
                        if type(v) not in _LEAVES and contains_tracer(v):
                            found = True
                            break
                if not found:
                    promote = _debug.flags.rank_promotion != "allow" and elementwise
                    if promote and not arrays and nargs and nargs > 1:
                        # (an Array operand is checked by Array.__array_ufunc__)
                        _debug.check_rank_promotion(traced.__name__, [np.shape(a) for a in args], 3)
                    if ufunc_promotes and _promotion.maybe_strict:
                        # config.numpy_dtype_promotion="strict" (NumPy's own ufuncs are not
                        # checked on Arrays: JAX's arrays become NumPy's there)
                        user = dtypes.from_user(1)
                        dtypes.check_operand_promotion(traced.__name__, args, np_fn, user)
                    try:
                        out = np_fn(*args, **kwargs) if kwargs else np_fn(*args)
                    except (OverflowError, TypeError):
                        on_keys = key_functions.get(traced)
                        if on_keys is not None and has_key_array(args, kwargs):
                            return on_keys(*args, **kwargs)
                        if on_error is not None:
                            on_error(*args)
                        raise
                    return _array_results(out) if arrays else out
            try:
                if _promotion.maybe_strict:  # note whether the user's code called
                    prev = dtypes.enter_call(1)
                    try:
                        out = traced(*args, **kwargs)
                    finally:
                        dtypes.exit_call(prev)
                else:
                    out = traced(*args, **kwargs)
            except Exception:
                on_keys = key_functions.get(traced)
                if on_keys is not None and has_key_array(args, kwargs):
                    return on_keys(*args, **kwargs)
                raise
            return _array_results(out) if _has_array(args) else out

        f.traced = traced  # type: ignore[attr-defined]
        f.numpy = np_fn  # type: ignore[attr-defined]
        return f  # type: ignore[return-value]

    return decorate
