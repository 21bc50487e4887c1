"""Diagnostics of jitted functions: retrace explanations, ``cache_info``, NaN checks.

* :func:`explain_retrace` says why a jitted function traces a new signature,
  compared with the closest signature it traced before (``config.explain_retraces``
  logs it on the ``functrace.jit`` logger at WARNING).
* :class:`CacheInfo` is what ``jit(f).cache_info()`` returns.
* :func:`check_outputs` is the ``config.debug_nans``/``debug_infs`` check of a
  compiled call: one ``isnan``/``isinf`` test per float output; on a hit the
  arguments are checked, then the traced program is re-run eagerly equation by
  equation (:func:`functrace.ir.eval_jaxpr_checked`) to find the first primitive
  that produced the value, and its ``FloatingPointError`` is raised.
* :func:`warn_kernel_fallback` warns, once per set of primitives and dtypes, when
  Numba fails to compile a fused kernel and its equations run as NumPy calls.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from functrace import _debug, tree_util
from functrace.core import ShapedArray
from functrace.ir import ClosedJaxpr, eval_jaxpr_checked

logger = logging.getLogger("functrace.jit")

# code object of a jitted Python function -> signatures traced by any jit of it (for
# "the function object was recreated"); weak, so code objects are not kept alive.
_code_signatures: weakref.WeakKeyDictionary[Any, OrderedDict[Any, None]] = (
    weakref.WeakKeyDictionary()
)
_PER_CODE = 256


class CacheInfo(NamedTuple):
    """``jit(f).cache_info()``, as ``functools.lru_cache``'s: ``hits`` (calls that
    reused a compiled signature), ``misses`` (calls that traced and compiled a new
    one), ``traces`` (every trace, also those for calls under other transforms),
    ``kernels`` (kernels Numba compiled for it in this process), ``currsize`` and
    ``maxsize`` (signatures kept, and the bound). The hit count is kept without a lock
    (nothing is added to the call path): it may miss a few when threads call at once."""

    hits: int
    misses: int
    traces: int
    kernels: int
    currsize: int
    maxsize: int


def _code_of(fun: Any) -> Any:
    inner = fun
    for _ in range(16):
        nxt = getattr(inner, "__wrapped__", None) or getattr(inner, "func", None)
        if nxt is None:
            break
        inner = nxt
    return getattr(inner, "__code__", None)


def remember(fun: Any, key: Any) -> None:
    """Record that a jit of ``fun`` traced the signature ``key``."""
    code = _code_of(fun)
    if code is None:
        return
    try:
        seen = _code_signatures.setdefault(code, OrderedDict())
    except TypeError:  # not weakly referenceable
        return
    seen[key] = None
    if len(seen) > _PER_CODE:
        seen.popitem(last=False)


def _aval_text(a: ShapedArray) -> str:
    return f"{a.str_short()}{' (weak type: a Python scalar)' if a.weak_type else ''}"


def _diff_avals(old: Sequence[Any], new: Sequence[Any], names: Sequence[str]) -> list[str]:
    out = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        at = names[i] if i < len(names) else f"leaf {i}"
        if a.shape != b.shape:
            what = "a new shape"
        elif a.dtype != b.dtype:
            what = "a new dtype"
        else:
            what = "a weak-type change"
        out.append(f"{what} at {at}: {_aval_text(a)} before, now {_aval_text(b)}")
    return out


def _diff_static(old: Any, new: Any, label: Callable[[int], str]) -> list[str]:
    out = []
    old_pos, old_kw = old
    new_pos, new_kw = new
    before = {i: v for i, _, v in old_pos}
    for i, _, v in new_pos:
        if i not in before or before[i] != v or type(before[i]) is not type(v):
            was = f"{before[i]!r:.60}" if i in before else "not given"
            out.append(
                f"a new value of the static argument {label(i)}: {was} before, now {v!r:.60}"
            )
    kw_before = {k: v for k, _, v in old_kw}
    for k, _, v in new_kw:
        if k not in kw_before or kw_before[k] != v or type(kw_before[k]) is not type(v):
            was = f"{kw_before[k]!r:.60}" if k in kw_before else "not given"
            out.append(f"a new value of the static argument `{k}`: {was} before, now {v!r:.60}")
    if not out and old != new:
        out.append("a different set of static arguments")
    return out


def _distance(old: Any, new: Any) -> int:
    tree_o, avals_o, static_o, py_o = old
    tree_n, avals_n, static_n, py_n = new
    if tree_o != tree_n:
        return 10_000
    d = 0
    for a, b in zip(avals_o, avals_n):  # a new shape is further than a new weak type
        d += 4 if a.shape != b.shape else 2 if a.dtype != b.dtype else a.weak_type != b.weak_type
    return d + (static_o != static_n) * 100 + (py_o != py_n)


def explain_retrace(
    fun: Any,
    history: OrderedDict[Any, None],
    key: Any,
    names: Sequence[str],
    label: Callable[[int], str],
    bound: int,
) -> str | None:
    """Why the jit of ``fun`` traces ``key`` (a signature ``(tree, avals, static,
    python bools)``), given the signatures it traced before (``history``); None for a
    first trace that needs no explanation."""
    if key in history:
        return (
            f"this signature was traced before and dropped from the cache, which keeps "
            f"the {bound} most recently used signatures (functrace.jit.api.cache_size, "
            f"$FUNCTRACE_JIT_CACHE_SIZE)"
        )
    if not history:
        code = _code_of(fun)
        seen = _code_signatures.get(code) if code is not None else None
        if seen is not None and key in seen:
            return (
                "the function object was recreated: another jit of the same code was "
                "already traced for this signature, but each jit(f) has its own cache. "
                "Create the jitted function once (outside the loop or function that "
                "calls it) and reuse it"
            )
        return None
    best = min(history, key=lambda k: _distance(k, key))
    tree_o, avals_o, static_o, py_o = best
    tree_n, avals_n, static_n, py_n = key
    if tree_o != tree_n:
        return (
            f"a new pytree structure of the arguments: {str(tree_o):.160} before, now "
            f"{str(tree_n):.160}"
        )
    reasons = _diff_avals(avals_o, avals_n, names)
    if static_o != static_n:
        reasons += _diff_static(static_o, static_n, label)
    if py_o != py_n:
        at = [names[i] if i < len(names) else f"leaf {i}" for i in set(py_o) ^ set(py_n)]
        reasons.append(
            "a Python bool where a NumPy bool was passed, or the reverse, at " + ", ".join(at)
        )
    if not reasons:
        return "a signature that differs from every earlier one"
    more = f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""
    return "; ".join(reasons[:3]) + more


def log_retrace(origin: str, count: int, reason: str) -> None:
    logger.warning("%s traces again (trace %d): %s.", origin, count, reason)


def log_compile(origin: str, avals: Sequence[Any]) -> None:
    """``config.log_compiles``: one line saying which function compiles for what."""
    types = ", ".join(a.str_short() if hasattr(a, "str_short") else str(a) for a in avals)
    logger.warning("Compiling %s for arguments (%s).", origin, types)


def check_outputs(
    origin: str,
    out: Any,
    leaves: Sequence[Any],
    names: Callable[[], Sequence[str]],
    program: Callable[[], ClosedJaxpr],
) -> None:
    """The debug check of a compiled call's outputs ``out`` (see the module doc).
    ``names()`` gives the arguments' names, ``program()`` the traced jaxpr with the
    sources of its equations (traced again if it was traced with the checks off)."""
    what = None
    for o in tree_util.tree_leaves(out):
        what = _debug.problem(o)
        if what is not None:
            break
    if what is None:
        return
    switch = f"functrace.config.{_debug.switch_name(what)}"
    for name, x in zip(names(), leaves):
        if _debug.has_problem(x, what):
            raise FloatingPointError(
                f"{origin}: {switch}: the input `{name}` ({_debug.short_type(x)}) contains "
                f"{what}: it was passed in, no primitive of the function produced it."
            )
    closed = program()
    where = f"{origin} (its compiled code returned {what}; re-run op by op)"
    eval_jaxpr_checked(closed.jaxpr, closed.consts, leaves, where)
    raise FloatingPointError(
        f"{origin}: {switch}: the compiled code returned {what}, but running its program "
        f"op by op on the same arguments produced none: the compiled kernels round "
        f"differently from NumPy here. Run it under functrace.disable_jit() to look."
    )


_fallback_warned: set[tuple[str, ...]] = set()


def warn_kernel_fallback(eqns: Sequence[Any], err: Exception) -> None:
    """The warning of a fused kernel Numba failed to compile (the driver then computes
    its equations ``eqns`` with NumPy calls), once per set of primitives and dtypes."""
    key = tuple(sorted({f"{e.primitive.name}:{e.out_binders[0].aval.dtype.name}" for e in eqns}))
    if key in _fallback_warned:
        return
    _fallback_warned.add(key)
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    warnings.warn(
        f"functrace.jit: expected Numba to compile the fused kernel for {', '.join(key)}, "
        f"got {type(err).__name__}: {first[:200]}. These equations run as NumPy calls "
        f"instead (same results, slower). Please report this with the dtypes above; the "
        f"primitive's emitter should decline these dtypes.",
        RuntimeWarning,
        stacklevel=3,
    )


__all__ = [
    "CacheInfo",
    "check_outputs",
    "explain_retrace",
    "log_retrace",
    "remember",
    "warn_kernel_fallback",
]
