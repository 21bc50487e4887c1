"""``jit``: trace once per signature, lower to a driver + Numba kernels, call it.

The call path is kept to a few microseconds: for positional arguments that are
plain arrays or scalars, the signature is a tuple of ``(shape, dtype)`` / type
per argument and one dict lookup finds the compiled driver. Anything else
(pytrees, keyword or static arguments) takes the general path, which flattens
the arguments and keys the cache by tree structure, abstract values (shape,
dtype, weak type) and static values. A signature never seen before is traced
and lowered (like JAX, a new shape means a retrace); a function that cannot take
those arguments fails while tracing, with the primitive's or the tracer's error.

Under another transform (any trace active: ``grad(jit(f))``, ``vmap(jit(f))``,
``jit`` inside ``jit``) the function's jaxpr for the signature (traced once, cached,
not lowered) is evaluated on the transform's tracers, so it is inlined into the
enclosing transform without running ``f`` again. ``disable_jit()`` (in the calling
thread) and ``FUNCTRACE_DISABLE_JIT=1`` run it eagerly. A jitted function may be called
from several threads at once: a new signature is traced and lowered once, under the
function's lock.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from functrace import _config, _debug, core, dtypes, tree_util
from functrace._array import to_array
from functrace.api._extras import stand_in
from functrace.core import ShapedArray, Tracer, describe_fun
from functrace.interpreters import batching
from functrace.interpreters.ad import ad_timer
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.jit import diagnostics, kernels, tiered
from functrace.jit.argnums import check_shardings, resolve_argnums
from functrace.jit.keys import NOT_SIMPLE, fast_entry_call, fast_key, tree_key
from functrace.jit.shared import Entry, Shared, counter, lowering_settings, shared_state
from functrace.jit.stages import Lowered, Traced
from functrace.tree_util import (
    DictKey,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_unflatten,
)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _env_cache_size() -> int:
    raw = os.environ.get("FUNCTRACE_JIT_CACHE_SIZE", "").strip()
    try:
        n = int(raw) if raw else 4096
    except ValueError:
        n = 4096
    return max(n, 1)


cache_size = _env_cache_size()
"""How many signatures each jitted function keeps traced and lowered (least recently
used ones are dropped first; a dropped signature is traced again when it comes back).
4096 by default, as JAX's in-memory caches; ``$FUNCTRACE_JIT_CACHE_SIZE`` or
``functrace.jit.api.cache_size = n`` (for functions created afterwards) change it."""


class _JitState(threading.local):
    """Per-thread ``disable_jit`` flag (its default comes from FUNCTRACE_DISABLE_JIT,
    read at import)."""

    disabled = _env_flag("FUNCTRACE_DISABLE_JIT")  # the class default: every thread


_jit_state = _JitState()
_flags = _debug.flags  # config.debug_nans / debug_infs / explain_retraces
_promotion = dtypes.promotion  # config.numpy_dtype_promotion ("strict": traced apart)
_STRICT_KEY = ("config.numpy_dtype_promotion", str, "strict")  # in a signature's key
_trace_state = core._state  # the per-thread trace state (the object is shared)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Run jitted functions eagerly (op by op, debuggable) inside the block.

    The setting is per thread, like all trace state: other threads keep compiling.

    >>> import functrace as ft
    >>> with ft.disable_jit():
    ...     print(ft.jit(lambda x: x + 1)(1.0))
    2.0
    """
    state = _jit_state
    own = "disabled" in state.__dict__  # set in this thread, or the shared default
    prev = state.disabled
    state.disabled = bool(disable)
    try:
        yield
    finally:
        if own:
            state.disabled = prev
        else:
            del state.disabled  # back to the default (which config.disable_jit sets)


def _set_disable_jit(value: bool) -> None:
    # ``config.disable_jit = v``: the default of every thread, and this thread's value
    _JitState.disabled = value
    _jit_state.disabled = value


_config.register("disable_jit", lambda: _jit_state.disabled, _set_disable_jit)


def clear_cache() -> None:
    """Empty the on-disk kernel cache (``$FUNCTRACE_CACHE_DIR``, default
    ``~/.cache/functrace``, capped at ``$FUNCTRACE_CACHE_MAX_MB``). Functions compiled
    in this process keep working. The cache holds trusted code: see ``jit/cache.py``."""
    from functrace.jit import kernels

    kernels.clear_cache()


class JitFunction:
    """A function compiled by :func:`jit`; call it like the original function.

    Attributes ``trace_count`` (signatures traced) and ``compile_count`` (kernels
    compiled by Numba in this process, not counting those loaded from the disk
    cache) are for tests and curious users. Every ``jit`` of one Python function with
    the same options shares its traced signatures and these counters, as JAX's caches
    do (a loop calling ``jit(f)(x)`` traces ``f`` once; ``jit/shared.py``). At most
    ``functrace.jit.api.cache_size`` signatures (default 4096,
    ``$FUNCTRACE_JIT_CACHE_SIZE``) stay traced and lowered;
    the least recently used is dropped first and traced again if it comes back.
    ``cache_info()`` gives hits, misses, traces, kernels and the cache's size and bound.
    With ``config.explain_retraces`` each new trace logs why (``functrace.jit`` logger);
    with ``config.debug_nans``/``debug_infs`` each call checks its float outputs and, on
    a hit, re-runs the program op by op to name the primitive that produced it.

    Tiered compilation (``compile``, see :func:`jit`): ``interpreted_calls`` counts the
    calls the interpreter ran while Numba compiled, ``switches`` the signatures whose
    compiled driver took over, ``pending_compiles`` the compiles still running;
    :meth:`wait_compiled` waits for them.
    """

    # The fast path's attributes are slots (the wrapped function's attributes, copied by
    # functools.update_wrapper, go to ``__dict__``): an attribute of a materialised
    # split-keys ``__dict__`` costs 2-3x a slot's on every call.
    __slots__ = (
        "_has_static",
        "_fast",
        "_tree_fast",
        "_cache",
        "_watch",
        "_st",
        "__dict__",
        "__weakref__",
    )

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        compile: str | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None,
    ) -> None:
        if not callable(fun):
            raise TypeError(f"jit: expected a callable, got {type(fun).__name__}.")
        self._mode = tiered.check_mode(compile, "jit")
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._origin = f"jit of {describe_fun(fun)}"
        resolved = resolve_argnums(
            fun, self._origin, static_argnums, static_argnames, donate_argnums, donate_argnames
        )
        # donation has no effect here (functrace/README.md): kept for introspection only
        self.donate_argnums, self.donate_argnames = resolved.donate_nums, resolved.donate_names
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._param_names = [
            p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        # As JAX: positions count among the positional arguments of each call (a negative
        # one from their end), names among its keyword arguments.
        self._neg_nums = tuple(n for n in resolved.static_nums if n < 0)
        self._static_nums = frozenset(n for n in resolved.static_nums if n >= 0)
        self._static_names = frozenset(resolved.static_names)
        self._has_static = bool(self._static_nums or self._static_names or self._neg_nums)
        # What every jit of ``fun`` with these options shares (as JAX's caches keyed on
        # the function): a loop calling ``jit(f)(x)`` traces ``f`` once. The settings
        # lowering reads are part of the options: a jit made after they change lowers
        # anew.
        self._st: Shared = shared_state(
            fun,
            (
                self._mode,
                self._static_nums,
                self._neg_nums,
                self._static_names,
                self.donate_argnums,
                self.donate_argnames,
                lowering_settings(),
            ),
        )
        self._bound = cache_size
        self._watch = cache_size // 2
        self._fast = self._st.fast
        self._tree_fast = self._st.tree_fast
        self._cache = self._st.cache
        self._lock = self._st.lock
        self._history = self._st.history
        self._traced_history = self._st.traced_history
        self._traced = self._st.traced

    trace_count = counter("trace_count", "signatures traced")
    compile_count = counter("compile_count", "kernels compiled by Numba in this process")
    interpreted_calls = counter(
        "interpreted_calls", "calls the interpreter of a tiered compile ran"
    )
    switches = counter("switches", "signatures whose compiled driver replaced the interpreter")

    # -- calling --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # While a debug check is on, ``_call_checked`` is the class's ``__call__`` instead
        # (``_on_flags``), so the fast path below pays nothing for the switches.
        if kwargs or self._has_static or _jit_state.disabled or len(_trace_state.stack) != 1:
            return self._call_general(args, kwargs)
        key = fast_key(args)
        if key is not None:
            hit = self._fast.get(key)
            if hit is not None:
                self._st.hits += 1
                if len(self._cache) > self._watch:
                    self._touch(hit[1].key)
                try:
                    return hit[0](*args)
                except OverflowError:
                    self._check_int_args(args, kwargs)  # np.int64(2**70) in the driver
                    raise
            return self._call_general(args, kwargs)
        leaves: list[Any] = []
        tkey = tree_key(args, leaves)
        hit = self._tree_fast.get(tkey) if tkey is not NOT_SIMPLE else None
        if hit is not None:
            self._st.hits += 1
            if len(self._cache) > self._watch:
                self._touch(hit[1].key)
            try:
                return hit[0](*leaves)
            except OverflowError:
                self._check_int_args(args, kwargs)
                raise
        return self._call_general(args, kwargs)

    def _call_checked(self, *args: Any, **kwargs: Any) -> Any:
        """``__call__`` while ``config.debug_nans``/``debug_infs`` is on (every call takes
        the general path, which checks the outputs) or some thread promotes strictly (the
        general path keys strict signatures apart)."""
        return self._call_general(args, kwargs)

    def _touch(self, key: Any) -> None:
        try:
            self._cache.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass

    def _add_entry(self, key: Any, entry: Entry) -> None:
        with self._lock:
            self._cache[key] = entry
            if len(self._cache) > self._bound:
                _, old = self._cache.popitem(last=False)
                for fast in (self._fast, self._tree_fast):
                    for k in [k for k, v in fast.items() if v[1] is old]:
                        del fast[k]

    def _add_fast(
        self, fast: OrderedDict[Any, Any], key: Any, entry: Entry, call: Callable[..., Any]
    ) -> None:
        with self._lock:
            fast[key] = (call, entry)
            if len(fast) > self._bound:  # several fast keys can lead to one entry
                fast.popitem(last=False)

    def _check_int_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Raise the error naming a Python int argument outside int64, if there is one
        (the compiled signature of Python ints is int64: a larger one cannot be passed)."""
        static_pos, dyn_args, _, dyn_kw = self._split(args, kwargs)
        leaves = tree_util.tree_leaves((tuple(dyn_args), dyn_kw))
        for i, x in enumerate(leaves):
            if core.int64_overflow(x):
                names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
                raise core.int64_overflow_error(self._origin, x, f"for argument {names[i]}")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _call_general(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if _jit_state.disabled:  # eager, with the arguments jit would compute with
            if len(_trace_state.stack) != 1:
                return self._fun(*args, **kwargs)  # inlined into the enclosing transform
            args = self._plain_eager(args, kwargs)  # updates kwargs too
            return tree_util.tree_map(to_array, self._fun(*args, **kwargs))  # as jit's
        if len(_trace_state.stack) != 1:
            return self._call_transformed(args, kwargs)
        misses = self._st.misses
        entry, leaves = self._entry_for(args, kwargs)
        if entry is None:
            return self._fun(*args, **kwargs)
        if self._st.misses == misses:
            self._st.hits += 1
        try:
            out = entry.driver(*leaves)
        except OverflowError:
            self._check_int_args(args, kwargs)
            raise
        if _flags.check:  # config.debug_nans / debug_infs
            self._check_outputs(entry, args, kwargs, leaves, out)
        if not kwargs and not self._has_static:
            key = fast_key(args)
            if key is not None:
                call = fast_entry_call(entry, args, leaves)
                if call is not None:
                    self._add_fast(self._fast, key, entry, call)
            else:
                tleaves: list[Any] = []
                tkey = tree_key(args, tleaves)
                if tkey is not NOT_SIMPLE and len(tleaves) == len(leaves):
                    call = fast_entry_call(entry, tleaves, leaves)
                    if call is not None:
                        self._add_fast(self._tree_fast, tkey, entry, call)
        return out

    def _plain_eager(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Under ``disable_jit``: the positional arguments with the rule of
        ``core.plain_array`` applied, as a compiled call would (keyword arguments are
        updated in place in ``kwargs``, a fresh dict)."""
        static_pos, dyn_args, static_kw, dyn_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
        bad = [i for i, x in enumerate(leaves) if isinstance(x, np.ndarray)]
        bad = [i for i in bad if not core.is_plain_array(leaves[i])]
        if not bad:
            return args
        names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
        for i in bad:
            leaves[i] = core.plain_array(leaves[i], self._origin, f"argument `{names[i]}`")
        new_dyn, new_kw = tree_unflatten(in_tree, leaves)
        kwargs.update(new_kw)
        it = iter(new_dyn)
        static_map = dict(static_pos)
        return tuple(static_map[i] if i in static_map else next(it) for i in range(len(args)))

    def _call_transformed(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call under another transform (grad, vmap, jvp, an enclosing jit): the
        function's jaxpr for this signature (traced once, cached) is evaluated on the
        arguments, so the enclosing transform applies to it and the Python function is
        not run again on every call. Inside ``shard_map(check_vma=True)`` bodies the
        function is run on the arguments instead: reverse mode inside it reads which
        mesh axes its values vary over, which a cached jaxpr does not record."""
        if batching.vma_traces():
            return self._fun(*args, **kwargs)
        static_pos, dyn_args, static_kw, dyn_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
        avals = []
        for x in leaves:
            try:
                a = core.get_aval(x)
            except TypeError:
                return self._fun(*args, **kwargs)  # not array data: reported by the body
            avals.append(ShapedArray(a.shape, a.dtype, a.weak_type))
        py = tuple(not isinstance(x, Tracer) and core.is_python_scalar(x) for x in leaves)
        static_key = (
            tuple((i, type(a), a) for i, a in static_pos),
            tuple(sorted((k, type(v), v) for k, v in static_kw.items())),
        )
        key = (in_tree, tuple(avals), static_key, py)
        hit = self._traced.get(key)
        if hit is None:
            with self._lock:  # one trace per signature, whichever thread asks first
                hit = self._traced.get(key)
                if hit is None:
                    if _flags.explain_retraces:
                        self._explain_transformed(key, args, kwargs, static_pos, dyn_args, dyn_kw)
                    hit = self._trace_only(args, static_pos, static_kw, in_tree, avals, py)
                    if not any(isinstance(c, Tracer) for c in hit[0].consts):
                        self._traced[key] = hit
                        if len(self._traced) > self._bound:
                            self._traced.popitem(last=False)
        closed, out_tree = hit
        outs = eval_jaxpr(closed.jaxpr, closed.consts, leaves)
        return tree_unflatten(out_tree, outs)

    def _explain_transformed(
        self,
        key: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        static_pos: list[tuple[int, Any]],
        dyn_args: list[Any],
        dyn_kw: dict[str, Any],
    ) -> None:
        """``config.explain_retraces`` for a trace under another transform (the
        signatures of those traces are compared with each other)."""
        tree, avals, static_key, py = key
        sig = (tree, avals, static_key, tuple(i for i, p in enumerate(py) if p))
        history = self._traced_history
        names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
        why = diagnostics.explain_retrace(
            self._fun, history, sig, names, self._arg_label, self._bound
        )
        if why is not None and history:  # a first trace under a transform is no retrace
            diagnostics.log_retrace(f"{self._origin} under a transform", self.trace_count + 1, why)
        history[sig] = None
        if len(history) > 2 * self._bound:
            history.popitem(last=False)

    def _trace_only(
        self,
        args: tuple[Any, ...],
        static_pos: list[tuple[int, Any]],
        static_kw: dict[str, Any],
        in_tree: Any,
        avals: list[ShapedArray],
        py: tuple[bool, ...],
    ) -> tuple[ClosedJaxpr, Any]:
        fun = self._fun
        nargs = len(args)
        static_map = dict(static_pos)
        out_box: list[Any] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            for t, p in zip(tracers, py):
                t.py = p
            d_args, d_kw = tree_unflatten(in_tree, tracers)
            it = iter(d_args)
            full = [static_map[i] if i in static_map else next(it) for i in range(nargs)]
            out_leaves, out_tree = tree_flatten(fun(*full, **static_kw, **d_kw))
            for leaf in out_leaves:
                if not core.is_array_like(leaf):
                    raise TypeError(
                        f"{self._origin}: expected the function to return arrays, scalars "
                        f"or pytrees of them, got a {type(leaf).__name__} among its outputs."
                    )
            out_box.append(out_tree)
            return out_leaves

        closed, _ = trace_to_jaxpr(flat_fun, avals, origin=self._origin)
        self.trace_count += 1
        return closed, out_box[-1]

    def _split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[list[tuple[int, Any]], list[Any], dict[str, Any], dict[str, Any]]:
        nums = set(self._static_nums)
        nums.update(n % len(args) for n in self._neg_nums if len(args) >= -n)
        static_pos, dyn_args = [], []
        for i, a in enumerate(args):
            if i in nums:
                self._check_hashable(a, self._arg_label(i))
                static_pos.append((i, a))
            else:
                dyn_args.append(a)
        static_kw, dyn_kw = {}, {}
        for k, v in kwargs.items():
            if k in self._static_names:
                self._check_hashable(v, f"`{k}`")
                static_kw[k] = v
            else:
                dyn_kw[k] = v
        return static_pos, dyn_args, static_kw, dyn_kw

    def _arg_label(self, i: int) -> str:
        name = self._param_names[i] if i < len(self._param_names) else None
        return f"`{name}` (position {i})" if name else f"at position {i}"

    def _check_hashable(self, v: Any, label: str) -> None:
        try:
            hash(v)
        except TypeError:
            # a ValueError, as JAX's (programs catching it keep working)
            raise ValueError(
                f"{self._origin}: expected hashable static arguments, got an unhashable "
                f"{type(v).__name__} for the static argument {label}. Pass a hashable value "
                f"(a tuple instead of a list, a frozen dataclass), or make the argument "
                f"dynamic by leaving it out of static_argnums/static_argnames."
            ) from None

    def _entry_for(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Entry | None, list[Any]]:
        static_pos, dyn_args, static_kw, dyn_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
        avals = []
        py_bools = []  # Python bools: the aval is np.bool_'s, the eager results differ
        names: list[str] | None = None
        for i, x in enumerate(leaves):
            if isinstance(x, Tracer):
                return None, leaves  # a leaked tracer: the plain call reports it
            if isinstance(x, np.ndarray) and not core.is_plain_array(x):
                # ndarray subclasses, byte order, alignment: the rule of core.plain_array
                if names is None:
                    names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
                x = leaves[i] = core.plain_array(x, self._origin, f"argument `{names[i]}`")
            if type(x) is bool:
                py_bools.append(i)
            elif isinstance(x, int) and core.int64_overflow(x):
                names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
                raise core.int64_overflow_error(self._origin, x, f"for argument {names[i]}")
            try:
                avals.append(core.get_aval(x))
            except TypeError:
                names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
                raise TypeError(
                    f"{self._origin}: expected arrays or scalars as arguments, got "
                    f"{type(x).__name__} for argument {names[i]}. Mark it static "
                    f"(static_argnums / static_argnames) if it is configuration rather "
                    f"than array data, or convert it with numpy.asarray."
                ) from None
        static_key = (
            tuple((i, type(a), a) for i, a in static_pos),
            tuple(sorted((k, type(v), v) for k, v in static_kw.items())),
        )
        if _promotion.maybe_strict and dtypes.promotion_mode() == "strict":
            # numpy_dtype_promotion="strict": traced apart, so that its checks run
            static_key = (static_key[0], (*static_key[1], _STRICT_KEY))
        key = (in_tree, tuple(avals), static_key, tuple(py_bools))
        entry = self._cache.get(key)
        if entry is None:
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._compile(
                        args,
                        kwargs,
                        static_pos,
                        dyn_args,
                        static_kw,
                        dyn_kw,
                        leaves,
                        in_tree,
                        avals,
                        key,
                    )
                    entry.key = key
                    self._add_entry(key, entry)
        else:
            self._touch(key)
        return entry, leaves

    def _leaf_names(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        static_pos: list[tuple[int, Any]],
        dyn_args: list[Any],
        dyn_kw: dict[str, Any],
    ) -> list[str]:
        static_idx = {i for i, _ in static_pos}
        dyn_positions = [i for i in range(len(args)) if i not in static_idx]
        names = []
        for path, _ in tree_flatten_with_path((tuple(dyn_args), dyn_kw))[0]:
            head, sub = path[0], path[1:]
            if isinstance(head, SequenceKey) and head.idx == 0 and sub:
                first = sub[0]
                pos = dyn_positions[first.idx] if isinstance(first, SequenceKey) else 0
                base = self._param_names[pos] if pos < len(self._param_names) else f"args[{pos}]"
                names.append(base + keystr(sub[1:]))
            elif sub and isinstance(sub[0], DictKey):
                names.append(str(sub[0].key) + keystr(sub[1:]))
            else:
                names.append(keystr(path))
        return names

    def _compile(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        static_pos: list[tuple[int, Any]],
        dyn_args: list[Any],
        static_kw: dict[str, Any],
        dyn_kw: dict[str, Any],
        leaves: list[Any],
        in_tree: Any,
        avals: list[ShapedArray],
        key: Any,
    ) -> Entry:
        from functrace.jit.lowering import lower

        fun = self._fun
        origin = self._origin
        names = self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)
        self._st.misses += 1
        if _flags.log_compiles:
            diagnostics.log_compile(origin, avals)
        if _flags.explain_retraces:
            why = diagnostics.explain_retrace(
                fun, self._history, key, names, self._arg_label, self._bound
            )
            if why is not None:
                diagnostics.log_retrace(origin, self.trace_count + 1, why)
        self._history[key] = None
        if len(self._history) > 2 * self._bound:
            self._history.popitem(last=False)
        diagnostics.remember(fun, key)
        flat_fun, out_box, py_box = self._flat_fun(args, static_pos, static_kw, in_tree, leaves)
        debug = _env_flag("FUNCTRACE_DEBUG_JIT")
        mode = self._mode or tiered.env_mode()
        ad_timer.on, ad_timer.seconds = debug, 0.0
        t0 = time.perf_counter()
        in_avals = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]
        try:
            closed, _ = trace_to_jaxpr(flat_fun, in_avals, origin=origin, arg_names=names)
        finally:
            ad_timer.on = False
        self.trace_count += 1
        trace_s = time.perf_counter() - t0
        if debug:
            print(
                f"[functrace.jit] {origin}\n[functrace.jit] cache key: {key!r}\n"
                f"[functrace.jit] phase trace: {1e3 * trace_s:.1f} ms\n"
                f"[functrace.jit] phase AD: {1e3 * ad_timer.seconds:.1f} ms (within the trace)",
                file=sys.stderr,
            )
        fname, out_tree, py = describe_fun(fun), out_box[-1], py_box[-1]
        stats: dict[str, float] = {}
        if mode == "sync":
            with kernels.load_mode(None, stats):
                program = lower(closed, fname, out_tree, py)
        else:
            try:  # kernels loaded or sealed on disk load; the first one to compile aborts
                with kernels.load_mode("probe", stats):
                    program = lower(closed, fname, out_tree, py)
            except kernels.NeedsCompile:
                entry = Entry(closed, None, out_tree=out_tree)
                tiered.start(
                    self,
                    entry,
                    lambda: lower(closed, fname, out_tree, py),
                    out_tree,
                    py,
                    mode,
                    debug,
                )
                return entry
        self.compile_count += program.compiled
        if debug:
            tiered.print_program(program, stats)
        return Entry(closed, program, out_tree=out_tree)

    def _switch(self, entry: Entry) -> Callable[..., Any]:
        with self._lock:
            return tiered.install(self, entry)  # type: ignore[no-any-return]

    def _drop(self, entry: Entry) -> None:
        """Forget ``entry`` (its signature is traced and compiled again if it comes back)."""
        with self._lock:
            if entry.key is not None and self._cache.get(entry.key) is entry:
                del self._cache[entry.key]
            for fast in (self._fast, self._tree_fast):
                for k in [k for k, v in fast.items() if v[1] is entry]:
                    del fast[k]

    @property
    def pending_compiles(self) -> int:
        """Signatures whose background compile has not been switched to yet."""
        return sum(1 for e in list(self._cache.values()) if e.job is not None)

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Wait until every background compile of this function has finished (the next
        call of each signature then switches to its compiled driver); False if
        ``timeout`` seconds passed first. With ``compile="sync"`` nothing is pending."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        for e in list(self._cache.values()):
            job = e.job
            if job is None:
                continue
            job.go.set()
            left = None if deadline is None else max(0.0, deadline - time.perf_counter())
            if not job.done.wait(left):
                return False
        return True

    def _flat_fun(
        self,
        args: tuple[Any, ...],
        static_pos: list[tuple[int, Any]],
        static_kw: dict[str, Any],
        in_tree: Any,
        leaves: list[Any],
    ) -> tuple[Callable[..., list[Any]], list[Any], list[tuple[bool, ...]]]:
        """The flat function ``_compile`` traces, and the boxes it fills with the
        output tree and which outputs are Python scalars eagerly."""
        fun = self._fun
        nargs = len(args)
        static_map = dict(static_pos)
        out_box: list[Any] = []
        py_box: list[tuple[bool, ...]] = []  # which outputs are Python scalars eagerly
        origin = self._origin

        def flat_fun(*tracers: Any) -> list[Any]:
            for t, x in zip(tracers, leaves):
                t.py = core.is_python_scalar(x)
            d_args, d_kw = tree_unflatten(in_tree, tracers)
            it = iter(d_args)
            full = [static_map[i] if i in static_map else next(it) for i in range(nargs)]
            out = core.call_user("jit", fun, full, {**static_kw, **d_kw})
            out_leaves, out_tree = tree_flatten(out)
            for leaf in out_leaves:
                if not core.is_array_like(leaf):
                    raise TypeError(
                        f"{origin}: expected the function to return arrays, scalars or "
                        f"pytrees of them, got a {type(leaf).__name__} among its outputs. "
                        f"Return only array data from a jitted function."
                    )
            out_box.append(out_tree)
            py = [x.py if isinstance(x, Tracer) else core.is_python_scalar(x) for x in out_leaves]
            py_box.append(tuple(py))
            return out_leaves

        return flat_fun, out_box, py_box

    def _check_outputs(
        self,
        entry: Entry,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        leaves: list[Any],
        out: Any,
    ) -> None:
        """``config.debug_nans``/``debug_infs`` on a compiled call (see
        ``diagnostics.check_outputs``): a program traced while the checks were off
        has no sources in its equations, so it is traced again for the re-run."""

        def names() -> list[str]:
            static_pos, dyn_args, _, dyn_kw = self._split(args, kwargs)
            return self._leaf_names(args, kwargs, static_pos, dyn_args, dyn_kw)

        def program() -> ClosedJaxpr:
            if entry.sourced:
                return entry.jaxpr
            static_pos, _, static_kw, _ = self._split(args, kwargs)
            in_tree = entry.key[0]
            flat_fun, _, _ = self._flat_fun(args, static_pos, static_kw, in_tree, leaves)
            closed, _ = trace_to_jaxpr(
                flat_fun, entry.jaxpr.in_avals, origin=self._origin, arg_names=names()
            )
            return closed

        diagnostics.check_outputs(self._origin, out, leaves, names, program)

    def cache_info(self) -> diagnostics.CacheInfo:
        """Cache statistics, as ``functools.lru_cache``'s ``cache_info()``: ``hits``,
        ``misses`` (signatures traced and compiled), ``traces`` (``trace_count``),
        ``kernels`` (``compile_count``), ``currsize`` and ``maxsize`` (signatures kept,
        and the bound)."""
        return diagnostics.CacheInfo(
            self._st.hits,
            self._st.misses,
            self.trace_count,
            self.compile_count,
            len(self._cache),
            self._bound,
        )

    # -- ahead-of-time stages (jit/stages.py) ------------------------------------
    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace and compile for these arguments; ``.as_text()`` shows the generated code,
        ``.compile()`` gives the callable of this signature. A ``ShapeDtypeStruct``
        stands for an array of its shape and dtype (as in JAX): the signature lowered is
        the one a call with such an array uses."""
        return Lowered(self._lowered_entry(args, kwargs, "lower"), self)

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """The traced signature for these arguments (JAX's ``jit(f).trace``): ``.jaxpr``,
        ``.out_info``, ``.lower()``. Arguments as for :meth:`lower`; functrace lowers
        while it traces (``jit/stages.py``)."""
        return Traced(self, self._lowered_entry(args, kwargs, "trace"))

    def _lowered_entry(self, args: tuple[Any, ...], kwargs: dict[str, Any], stage: str) -> Entry:
        if any(stand_in(x) is not x for x in tree_leaves((args, kwargs))):
            args, kwargs = tree_map(stand_in, (args, kwargs))
        entry, _ = self._entry_for(args, kwargs)
        if entry is None:
            raise TypeError(f"{self._origin}.{stage}: expected concrete arguments, got tracers.")
        if entry.job is not None:  # a tiered compile: the program is the job's
            entry.job.go.set()
            entry.job.done.wait()
            self._switch(entry)
        return entry

    def __repr__(self) -> str:
        return f"<{self._origin}>"


def jit(
    fun: Callable[..., Any] | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    compile: str | None = None,
    *,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Any:
    r"""Compile ``fun``: traced once per argument signature, lowered to Numba kernels.

    Array arguments follow the rule of ``core.plain_array``: ``numpy.matrix`` and masked
    arrays are rejected (TypeError), other ndarray subclasses are viewed as ndarray,
    non-native byte order and unaligned memory are converted; any strides work.
    Elementwise chains fuse into one loop kernel each, matrix products call BLAS,
    and compiled kernels are cached on disk (``$FUNCTRACE_CACHE_DIR``). Python
    control flow on traced values raises ``ConcretizationError``: use
    ``functrace.numpy.where``, ``functrace.lax.cond``, or ``static_argnums``.
    Usable as a decorator, also as ``@jit(static_argnums=...)``.

    ``static_argnums``/``static_argnames`` follow JAX: given one, the other is inferred
    from the signature (a parameter static by position is static by keyword too); given
    both, each is used as given; numbers out of range, unknown names and names of
    positional-only or ``*args`` parameters are a ValueError. ``donate_argnums``/
    ``donate_argnames`` are checked the same way (and may not overlap the static ones)
    and have no other effect: donated arguments stay valid and the results are those
    without donation (functrace/README.md, "JAX options ..."). ``keep_unused`` and
    ``inline`` (JAX's booleans) are accepted and change nothing: unused arguments are
    still checked on each call, and a jit called under another jit is inlined anyway.
    ``in_shardings``/``out_shardings`` (pytrees of ``Sharding``\ s, ``PartitionSpec``\ s
    or None, as JAX's) are checked and place nothing: functrace computes on one device,
    where every placement is the identity (``sharding.py``).

    ``compile``: ``"tiered"`` (the default, or ``$FUNCTRACE_JIT_COMPILE``) returns the
    first calls of a signature whose kernels are not in the disk cache yet without
    waiting for Numba: they run the traced program with the primitives' impls
    (results within float tolerance of the compiled ones) while Numba compiles in a
    background thread, and the next call after the compile finished switches to the
    compiled kernels. Errors of the background compile are raised by the next call.
    ``"sync"`` compiles before the first call returns (benchmarks); ``"thread"`` is
    ``"tiered"``; ``"process"`` compiles in a worker process that fills the disk
    cache instead (the thread when the cache is memory-only).

    >>> import functrace as ft
    >>> f = ft.jit(ft.value_and_grad(lambda x, y: x * y + x ** 2))
    >>> [float(v) for v in f(2.0, 3.0)]
    [10.0, 7.0]
    """
    for name, flag in (("keep_unused", keep_unused), ("inline", inline)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"jit: expected {name} to be a bool, got {flag!r:.40}.")
    for name, given in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        check_shardings(name, given)
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            compile=compile,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
        )
    return JitFunction(
        fun, static_argnums, static_argnames, compile, donate_argnums, donate_argnames
    )


_fast_call = JitFunction.__call__


def _on_flags() -> None:
    """Switch every jitted function's call path when the debug checks go on or off, or
    strict dtype promotion (whose signatures are traced apart) in some thread."""
    checked = _flags.check or _promotion.maybe_strict
    JitFunction.__call__ = JitFunction._call_checked if checked else _fast_call  # type: ignore[method-assign]


_debug.on_change(_on_flags)
_promotion.listeners.append(_on_flags)

__all__ = ["JitFunction", "Lowered", "Traced", "clear_cache", "disable_jit", "jit"]
