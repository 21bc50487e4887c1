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
need special cases in every interpreter). ``log`` is ``print`` through ``logging``.

``inspect_array_sharding`` and the two ``visualize_*`` functions are plain Python run
when reached or traced: functrace's arrays live on one device, and a sharding's blocks
are drawn as JAX's uncoloured ``rich`` table, in plain text.
"""

from __future__ import annotations

import builtins
import logging
import operator
import pdb
import string
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _debug, core, ir
from functrace._array import CPU, Array, SingleDeviceSharding, to_array
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


def log(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    per_example: bool = True,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Log ``fmt.format(*args, **kwargs)`` with the values the program computes, as
    ``jax.debug.log``: like :func:`print` (same timing under every transform), but as
    an INFO record of the ``functrace.debug`` logger (JAX's: ``jax._src.debugging``)
    whose file and line are the caller's. A ``fmt`` without placeholders is followed by
    the arguments, separated by spaces (as JAX). ``log(ordered=...)`` without ``fmt``
    returns the function to call with it (JAX's two-call form).

    >>> import logging, functrace as ft
    >>> ft.debug.log("x = {}", 2.0)  # an INFO record on the 'functrace.debug' logger
    """
    _check_bool("debug.log", "ordered", ordered)
    _check_bool("debug.log", "per_example", per_example)
    if fmt is None:
        if args or kwargs:
            raise TypeError(
                "debug.log: expected the format string and its arguments in the second "
                "call of the two-call form (log(ordered=...)(fmt, ...)), got arguments "
                "without a format string."
            )

        def _second(fmt: str, *a: Any, **k: Any) -> None:
            _log(fmt, a, k, ordered, per_example, sys._getframe(1))

        return _second
    _log(fmt, args, kwargs, ordered, per_example, sys._getframe(1))
    return None


def _log(fmt: Any, args: Any, kwargs: Any, ordered: bool, per_example: bool, frame: Any) -> None:
    if not isinstance(fmt, str):
        raise TypeError(f"debug.log: expected a format string, got {type(fmt).__name__}.")
    has_fields = any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))
    if not has_fields and kwargs:
        raise TypeError(
            f"debug.log: expected placeholders in the format string for the keyword "
            f"arguments {sorted(kwargs)}, got {fmt!r:.60}."
        )
    file, line = frame.f_code.co_filename, frame.f_lineno

    def _emit(*a: Any, **k: Any) -> None:
        msg = fmt.format(*a, **k) if has_fields else " ".join([fmt, *map(str, a)])
        record = _logger.makeRecord(_logger.name, logging.INFO, file, line, msg, (), None)
        _logger.handle(record)

    _emit.__name__ = "debug_log"
    callback(_emit, *args, ordered=ordered, per_example=per_example, **kwargs)


_logger = logging.getLogger("functrace.debug")


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], Any]) -> None:
    """Call ``callback(sharding)`` for each array of the pytree ``value``, as
    ``jax.debug.inspect_array_sharding``: once, when the call is reached (eagerly) or
    traced (under ``jit``, ``vmap``, ``grad``: once per trace, as JAX's compile-time
    call). functrace's arrays, traced ones included, live wholly on one device, so the
    sharding is always ``SingleDeviceSharding(CpuDevice(id=0))`` (``device_put`` with a
    ``NamedSharding`` does not move data)."""
    if not callable(callback):
        raise TypeError(
            f"debug.inspect_array_sharding: expected a callable callback, got "
            f"{type(callback).__name__}."
        )
    for leaf in tree_flatten(value)[0]:
        sharding = getattr(leaf, "sharding", None) if type(leaf) is Array else None
        callback(sharding if sharding is not None else SingleDeviceSharding(CPU))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print which device holds which block of ``arr`` (``jax.debug.
    visualize_array_sharding``), through :func:`inspect_array_sharding` and
    :func:`visualize_sharding` (``kwargs`` are the latter's): in functrace one block on
    ``CPU 0``."""
    shape = np.shape(arr) if not isinstance(arr, core.Tracer) else arr.aval.shape
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(shape, s, **kwargs))


def visualize_sharding(
    shape: Sequence[int],
    sharding: Any,
    *,
    use_color: bool = True,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
    color_map: Any = None,
) -> None:
    """Print the blocks of an array of ``shape`` (1 or 2 dimensions) under ``sharding``
    (a ``NamedSharding``, ``SingleDeviceSharding``...) as a table of boxes naming the
    devices holding each block, sized as ``jax.debug.visualize_sharding`` sizes them
    (``scale``, ``min_width``, ``max_width``). Always plain text with box-drawing
    characters, JAX's output without colours: ``use_color`` and ``color_map`` are
    accepted and ignored, and ``rich`` is not needed."""
    print_lines = _sharding_table(shape, sharding, scale, min_width, max_width)
    builtins.print("\n".join(print_lines))


def _chunk(n: int, s: Any) -> tuple[int, int]:
    """(position of the block, its length) of a shard's index ``s`` along a dimension
    of length ``n``."""
    if isinstance(s, int):
        return s, 1
    start, stop, _ = s.indices(n)
    size = stop - start
    return (start // size if size else 0), size


def _sharding_table(
    shape: Sequence[int], sharding: Any, scale: float, min_width: int, max_width: int
) -> list[str]:
    fname = "debug.visualize_sharding"
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{fname}: expected a shape of integers, got {shape!r:.60}.") from None
    if len(shape) not in (1, 2) or 0 in shape:
        raise ValueError(f"{fname}: expected a shape of 1 or 2 nonzero dimensions, got {shape}.")
    if not callable(getattr(sharding, "devices_indices_map", None)):
        raise TypeError(
            f"{fname}: expected a sharding (NamedSharding, SingleDeviceSharding), got "
            f"{type(sharding).__name__}."
        )
    base_h = int(10 * scale)
    base_w = int(base_h * (shape[1] if len(shape) == 2 else 1) / shape[0])
    devs: dict[tuple[int, int], set[int]] = {}
    size: dict[tuple[int, int], tuple[int, int]] = {}  # (width, height) in characters
    kind = "CPU"
    for dev, index in sharding.devices_indices_map(shape).items():
        kind = str(getattr(dev, "platform", "cpu")).upper()
        parts = [_chunk(n, s) for n, s in zip(shape, index)]
        if len(shape) == 1:
            pos, w, h = (0, parts[0][0]), parts[0][1] / shape[0], None
        else:
            pos, w, h = (parts[0][0], parts[1][0]), parts[1][1] / shape[1], parts[0][1] / shape[0]
        devs.setdefault(pos, set()).add(dev.id)
        width = min(max(int(w * base_w * 2.5), min_width), max_width)
        size[pos] = (width, 1 if h is None else int(h * base_h))
    rows = max(p[0] for p in devs) + 1
    cols = max(p[1] for p in devs) + 1
    # each cell: its text and (left, right, top, bottom) padding, as JAX computes them
    cells: dict[tuple[int, int], tuple[str, int, int, int, int]] = {}
    for pos, ids in devs.items():
        entry = f"{kind} " + ",".join(str(i) for i in sorted(ids))
        width, height = size[pos]
        left, extra = divmod(width - len(entry) - 2, 2)
        top, extra_h = divmod(height - 2, 2)
        pads = (max(left, 0), max(left + extra, 0), max(top, 0), max(top + extra_h, 0))
        cells[pos] = (entry, *pads)
    grid = [(r, c) for r in range(rows) for c in range(cols)]
    if any(p not in cells for p in grid):
        raise ValueError(f"{fname}: expected shards that tile the array, got {sharding!r:.80}.")
    col_w = [max(len(cells[r, c][0]) + cells[r, c][1] + cells[r, c][2] for r in range(rows))
             for c in range(cols)]  # fmt: skip
    row_h = [max(cells[r, c][3] + 1 + cells[r, c][4] for c in range(cols)) for r in range(rows)]

    def rule(a: str, b: str, m: str) -> str:
        return a + m.join("\u2500" * w for w in col_w) + b

    out = [rule("\u250c", "\u2510", "\u252c")]
    for r in range(rows):
        for k in range(row_h[r]):
            line = []
            for c in range(cols):
                entry, left, right, top, _ = cells[r, c]
                if k != top:
                    line.append(" " * col_w[c])
                    continue
                inner = col_w[c] - left - right  # the text centred between the paddings
                lead = left + (inner - len(entry)) // 2
                line.append(" " * lead + entry + " " * (col_w[c] - lead - len(entry)))
            out.append("\u2502" + "\u2502".join(line) + "\u2502")
        if r + 1 < rows:
            out.append(rule("\u251c", "\u2524", "\u253c"))
    out.append(rule("\u2514", "\u2518", "\u2534"))
    return out


def _break() -> None:
    pdb.set_trace()


def breakpoint() -> None:  # noqa: A001 - jax.debug.breakpoint's name
    """Stop in the Python debugger (``pdb.set_trace()``). Eagerly and under
    ``grad``/``vmap`` this happens when the call is reached (inspect the caller's
    variables with ``up``); under ``jit`` it happens when the compiled code reaches
    that point, inside functrace's driver, where traced values are not available: use
    ``debug.print`` to see runtime values there, or run with ``disable_jit()``."""
    callback(_break)


__all__ = [
    "breakpoint",
    "callback",
    "debug_callback_p",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
