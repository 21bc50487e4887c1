"""``grad_hook``: a function called on the cotangent of a value in the backward pass;
the ``grad_hook`` and ``hook_call`` primitives and their rules."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.custom_derivatives._common import _Callable, _level
from functrace.errors import UnexpectedTracerError
from functrace.interpreters import ad, batching
from functrace.interpreters.recording import callback_value

# A grad_hook acts like an identity function with a custom VJP whose bwd is the hook:
# its JVP passes the primal through unchanged and marks the tangent (grad_hook_p on the
# tangent), so the hook runs in the backward pass of the innermost reverse-mode
# transform that differentiates the value, on that pass's cotangent. Transforms outside
# it (the outer grad of grad(grad(f)), jvp(grad(f)), hessian) differentiate through
# that backward pass, the hook's own computation included, and never call the hook on
# their own cotangents: every nesting order gives the same derivatives.
#
# Eagerly the hook is called right away, on values that outer transforms can trace
# (so they differentiate through it). When the cotangent is not known while tracing
# (under jit), the call is the primitive hook_call_p, run by the compiled code. Its
# ``fn`` is a node: a function of arrays returning a list of arrays: the hook itself
# (_Hook), the forward derivative of a node (_HookJvp, linear in its tangents), its
# transpose (_HookVjp, linear in its cotangents), or a node run once per example of a
# vmap (_HookPerExample). A derivative node runs the functrace transform of the node
# it differentiates when the compiled code runs, on concrete values, so under jit the
# hook's derivatives are the same as eagerly.
#
# Traced values the hook closes over (a clipping threshold that is an argument of a
# jitted step, a per-example scale under vmap) are operands of grad_hook_p after the
# value, and the hook is called as fn(ct, *operands): they are staged, batched and
# passed to the hook's calls like any operand, whenever the hook runs.

grad_hook_p = Primitive("grad_hook")
hook_call_p = Primitive("hook_call", multiple_results=True)


def _run(fn: Any, ct: Any, operands: Sequence[Any]) -> Any:
    """``fn(ct, *operands)``, an escaped tracer named as the hook's."""
    try:
        return fn(ct, *operands)
    except UnexpectedTracerError as e:
        raise UnexpectedTracerError(
            f"grad_hook: the hook {fn.__name__} uses a value traced by a transform that "
            f"has returned by the time the hook runs (the backward pass of grad(vmap(f)) "
            f"and compiled code under jit run hooks later). Traced values the hook "
            f"function itself closes over (its own free variables, or the arguments of a "
            f"functools.partial) are passed to it whenever it runs; values reached "
            f"otherwise (through a function it calls, an object's attribute, a container) "
            f"are not: close over them directly. {e}"
        ) from None


def _hook_result(fn: Any, ct: Any, operands: Sequence[Any] = ()) -> Any:
    """The cotangent after the hook ``fn`` (called with the hook's closed-over traced
    values ``operands``): its result, or ``ct`` when it returns None; a result of another
    dtype is cast to the cotangent's."""
    from functrace.lax import convert_element_type

    out = _run(fn, ct, operands)
    if out is None:
        return ct
    got, want = core.get_aval(out), core.get_aval(ct)
    if got.shape != want.shape:
        raise ValueError(
            f"grad_hook: expected the hook {fn.__name__} to return a cotangent "
            f"of shape {want.shape} or None, got shape {got.shape}."
        )
    return out if got.dtype == want.dtype else convert_element_type(out, want.dtype)


class _Hook:
    """The node of the hook itself: the cotangent and the hook's operands in, the
    replacement out."""

    __slots__ = ("fn", "__name__", "n_in", "n_nonlinear")
    n_out = 1

    def __init__(self, fn: Any, n_operands: int = 0) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.n_in = self.n_nonlinear = 1 + n_operands

    def __call__(self, ct: Any, *operands: Any) -> list[Any]:
        return [_hook_result(self.fn, ct, operands)]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [avals[0]]

    def transposed(self) -> Any:
        raise ValueError(f"grad_hook: the hook {self.__name__} is not linear.")

    def __repr__(self) -> str:
        return self.__name__


class _HookJvp:
    """``(primals, tangents) -> tangents out`` of node ``f`` (linear in the tangents)."""

    __slots__ = ("f", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any) -> None:
        self.f = f
        self.n_in, self.n_out, self.n_nonlinear = 2 * f.n_in, f.n_out, f.n_in
        self.__name__ = f"jvp_of_{f.__name__}"

    def __call__(self, *args: Any) -> list[Any]:
        k = self.f.n_in
        _, touts = ad.jvp_flat(lambda *p: self.f(*p), args[:k], args[k:], origin="grad_hook")
        return [ad.instantiate(t) for t in touts]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [ad.tangent_aval(a) for a in self.f.out_avals(avals[: self.f.n_in])]

    def transposed(self) -> Any:
        return _HookVjp(self.f)

    def __repr__(self) -> str:
        return self.__name__


class _HookVjp:
    """``(primals, cotangents out) -> cotangents in`` of node ``f`` (linear in the
    cotangents)."""

    __slots__ = ("f", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any) -> None:
        self.f = f
        self.n_in, self.n_out, self.n_nonlinear = f.n_in + f.n_out, f.n_in, f.n_in
        self.__name__ = f"vjp_of_{f.__name__}"

    def __call__(self, *args: Any) -> list[Any]:
        k = self.f.n_in
        _, lin, _ = ad.linearize_flat(lambda *p: self.f(*p), args[:k], origin="grad_hook")
        return [ad.instantiate(c) for c in lin.transpose(args[k:])]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [ad.tangent_aval(a) for a in avals[: self.f.n_in]]

    def transposed(self) -> Any:
        return _HookJvp(self.f)

    def __repr__(self) -> str:
        return self.__name__


def _example(x: Any, trace: Any, i: int) -> Any:
    """Example ``i`` of ``x`` along ``trace``'s vmap if ``x`` is batched by it (a hook
    called per example whose function closes over a value that vmap batches gets that
    example's value, as a loop would give it); otherwise ``x``."""
    if isinstance(x, batching.BatchTracer) and x._trace is trace:
        return x.val if x.bdim is None else batching.moveaxis(x.val, x.bdim, 0)[i]
    return x


class _HookPerExample:
    """Node ``f`` run on each example of arguments batched along axis 0 in turn (a
    derivative of a hook under vmap); the results are stacked along axis 0."""

    __slots__ = ("f", "size", "trace", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any, size: int, trace: Any) -> None:
        self.f, self.size, self.trace = f, size, trace
        self.n_in, self.n_out, self.n_nonlinear = f.n_in, f.n_out, f.n_nonlinear
        self.__name__ = f.__name__

    def __call__(self, *args: Any) -> list[Any]:
        from functrace import numpy as fnp

        if self.size == 0:  # no examples: nothing to call, empty results
            avals = self.out_avals([core.get_aval(a) for a in args])
            return [fnp.zeros(a.shape, a.dtype) for a in avals]
        outs = [
            [_example(o, self.trace, i) for o in self.f(*[a[i] for a in args])]
            for i in range(self.size)
        ]
        return [fnp.stack(col) for col in zip(*outs)]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        inner = self.f.out_avals([ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in avals])
        return [ShapedArray((self.size, *a.shape), a.dtype, a.weak_type) for a in inner]

    def transposed(self) -> Any:
        return _HookPerExample(self.f.transposed(), self.size, self.trace)

    def __repr__(self) -> str:
        return self.__name__


def _call_hook(node: Any, args: Sequence[Any]) -> list[Any]:
    """Run ``node`` now, or, when an argument is not known while tracing (under jit),
    stage the call for the compiled code."""
    for a in args:
        if isinstance(a, Tracer) and core.concrete_or_none(a) is None:
            return hook_call_p.bind(*args, fn=node)  # type: ignore[no-any-return]
    # the eager transforms' recording of this call is not reused: the hook runs every call
    return node(*[callback_value(a) for a in args])  # type: ignore[no-any-return]


def _apply_hook(fn: Any, ct: Any, operands: Sequence[Any] = ()) -> Any:
    """The cotangent after the hook ``fn`` (with its operands)."""
    return _call_hook(_Hook(fn, len(operands)), [ct, *operands])[0]


class _PerExample:
    """A hook called on each example of a cotangent batched along ``axis`` of
    ``trace``'s vmap in turn, with that example of each operand batched along its entry
    of ``operand_axes`` (None: the same for every example); the replacements it returns
    (if any; example ``i`` of a replacement that the vmap batches) are stacked back
    along ``axis``."""

    __slots__ = ("fn", "axis", "size", "trace", "operand_axes", "__name__")

    def __init__(
        self, fn: Any, axis: int, size: int, trace: Any, operand_axes: Sequence[Any] = ()
    ) -> None:
        self.fn = fn
        self.axis = axis
        self.size = size
        self.trace = trace
        self.operand_axes = tuple(operand_axes)
        self.__name__ = fn.__name__

    def __call__(self, ct: Any, *operands: Any) -> Any:
        from functrace import numpy as fnp
        from functrace.lax import convert_element_type

        idx = (slice(None),) * self.axis
        outs, replaced = [], False
        for i in range(self.size):
            c = ct[(*idx, i)]
            ops = [
                x if a is None else batching.moveaxis(x, a, 0)[i]
                for x, a in zip(operands, self.operand_axes)
            ]
            o = _example(_run(self.fn, c, ops), self.trace, i)
            if o is None:
                outs.append(c)
                continue
            replaced = True
            got, want = core.get_aval(o), core.get_aval(c)
            if got.shape != want.shape:
                raise ValueError(
                    f"grad_hook: expected the hook {self.__name__} to return a cotangent "
                    f"of shape {want.shape} (one example's, under vmap) or None, got "
                    f"shape {got.shape}."
                )
            outs.append(o if got.dtype == want.dtype else convert_element_type(o, want.dtype))
        return fnp.stack(outs, axis=self.axis) if replaced else None


def _per_example_value(x: Any) -> Any:
    """``x`` batched in every vmap running at or above its level: a value that is the
    same for every example is broadcast, so that its cotangent is per example. A vmap
    outside the innermost jit being traced is not one of them (``vmap(jit(vjp(f)))``):
    the jaxpr is traced without it, and the vmap then batches that jaxpr's hook calls."""
    lvl = max(_level(x), core.dynamic_level())
    for t in core.trace_stack():
        if type(t) is not batching.BatchTrace or t.level < lvl:
            continue
        if isinstance(x, batching.BatchTracer) and x._trace is t:
            if x.bdim is None:
                x = batching.BatchTracer(t, batching.broadcast_batch(x.val, t.axis_size, 0), 0)
        else:
            x = batching.BatchTracer(t, batching.broadcast_batch(x, t.axis_size, 0), 0)
        lvl = t.level
    return x


def _grad_hook_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fn: Any) -> Any:
    # The primal passes through unhooked: transforms outside this one differentiate
    # through its backward pass (where the hook runs) and do not call the hook again.
    # The hook's operands are primal values there (the identity does not depend on them).
    tangent = grad_hook_p.bind(ad.instantiate(tangents[0]), *primals[1:], fn=fn)
    return primals[0], tangent


def _grad_hook_transpose(ct: Any, x: Any, *operands: Any, fn: Any) -> list[Any]:
    # Transposed inside a vmap (vmap(grad(f))): one call per example of that vmap.
    return [_apply_hook(fn, _per_example_value(ct), operands)] + [None] * len(operands)


def _grad_hook_batch(
    vals: list[Any], bdims: list[Any], *, trace: batching.BatchTrace, fn: Any
) -> tuple[Any, Any]:
    # The hook of the batched value calls the user's hook once per example.
    x, d = vals[0], bdims[0]
    if d is None:
        x, d = batching.broadcast_batch(x, trace.axis_size, 0), 0
    each = _PerExample(fn, d, trace.axis_size, trace, bdims[1:])
    return grad_hook_p.bind(x, *vals[1:], fn=each), d


def _hook_call_impl(*args: Any, fn: Any) -> list[Any]:
    return fn(*args)  # type: ignore[no-any-return]


def _hook_call_abstract_eval(*avals: ShapedArray, fn: Any) -> list[ShapedArray]:
    return fn.out_avals(avals)  # type: ignore[no-any-return]


def _hook_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fn: Any) -> Any:
    # The compiled code runs the node's forward derivative (eagerly, on the values).
    outs = hook_call_p.bind(*primals, fn=fn)
    touts = hook_call_p.bind(*primals, *[ad.instantiate(t) for t in tangents], fn=_HookJvp(fn))
    return outs, touts


def _hook_call_transpose(cts: Sequence[Any], *args: Any, fn: Any) -> list[Any]:
    k = fn.n_nonlinear
    if k == fn.n_in or any(ad.is_undefined_primal(a) for a in args[:k]):
        raise ValueError(
            f"hook_call transpose: {fn.__name__} is not linear in the inputs being "
            f"transposed (a non-linear use of tangents in a JVP rule)."
        )
    cts_in = _call_hook(fn.transposed(), [*args[:k], *[ad.instantiate(c) for c in cts]])
    return [None] * k + list(cts_in)


def _hook_call_batch(
    vals: list[Any], bdims: list[Any], *, trace: batching.BatchTrace, fn: Any
) -> tuple[Any, Any]:
    size = trace.axis_size
    if type(fn) is _Hook:  # the hook itself: one call per example, as in _grad_hook_batch
        ct, d = vals[0], bdims[0]
        if d is None:
            ct, d = batching.broadcast_batch(ct, size, 0), 0
        each = _PerExample(fn.fn, d, size, trace, bdims[1:])
        return [_apply_hook(each, ct, vals[1:])], [d]
    args = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims)]
    return _call_hook(_HookPerExample(fn, size, trace), args), [0] * fn.n_out


core.impl_rules[grad_hook_p] = lambda x, *operands, fn: x
core.abstract_eval_rules[grad_hook_p] = lambda x, *operands, fn: x
ad.jvp_rules[grad_hook_p] = _grad_hook_jvp
ad.transpose_rules[grad_hook_p] = _grad_hook_transpose
ad.linear_primitives.add(grad_hook_p)
core.impl_rules[hook_call_p] = _hook_call_impl
core.abstract_eval_rules[hook_call_p] = _hook_call_abstract_eval
ad.jvp_rules[hook_call_p] = _hook_call_jvp
ad.transpose_rules[hook_call_p] = _hook_call_transpose
ad.linear_primitives.add(hook_call_p)
batching.batching_rules[grad_hook_p] = _grad_hook_batch
batching.batching_rules[hook_call_p] = _hook_call_batch
batching.rules_with_trace.update((grad_hook_p, hook_call_p))


def _name(fn: Any) -> str:
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", None)
    return str(name or "hook")


def _cell_tracer(cell: Any) -> bool:
    try:
        return isinstance(cell.cell_contents, Tracer)
    except ValueError:  # a free variable not assigned yet
        return False


def _with_operands(fn: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``fn`` as a function of ``(ct, *operands)`` and its operands: the traced values it
    closes over directly (its free variables; a ``functools.partial``'s arguments), so
    that they reach the hook whenever it runs (see the note at the top)."""
    if isinstance(fn, functools.partial):
        args, kws = list(fn.args), dict(fn.keywords)
        pos = [i for i, a in enumerate(args) if isinstance(a, Tracer)]
        keys = [k for k, v in kws.items() if isinstance(v, Tracer)]
        if not pos and not keys:
            return fn, []

        def partial_call(ct: Any, *vals: Any) -> Any:
            a, k = list(args), dict(kws)
            for i, v in zip(pos, vals):
                a[i] = v
            k.update(zip(keys, vals[len(pos) :]))
            return fn.func(*a, ct, **k)

        return partial_call, [args[i] for i in pos] + [kws[k] for k in keys]
    cells = getattr(fn, "__closure__", None) or ()
    traced = [i for i, c in enumerate(cells) if _cell_tracer(c)]
    if not isinstance(fn, types.FunctionType) or not traced:
        return fn, []

    def closure_call(ct: Any, *vals: Any) -> Any:
        new = list(cells)
        for i, v in zip(traced, vals):
            new[i] = types.CellType(v)
        g = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, tuple(new)
        )
        g.__kwdefaults__ = fn.__kwdefaults__
        return g(ct)

    return closure_call, [cells[i].cell_contents for i in traced]


def grad_hook(x: Any, fn: Callable[[Any], Any]) -> Any:
    """Identity on ``x``; in reverse mode calls ``fn(cotangent)`` and, if it returns an
    array, uses it as the new cotangent (print, clip, monitor gradients).

    Under ``vmap`` the hook sees what a Python loop over the examples would: one call per
    example, in order, with that example's cotangent, and a returned replacement is that
    example's. This holds in ``vmap(grad(f))`` and ``grad(vmap(f))`` alike, and for a
    value that is the same for every example (a shared parameter): its cotangent is
    still per example, so a hook can clip per-example gradients.

    Under nested derivatives the hook runs in the backward pass of the innermost
    reverse-mode transform that differentiates ``x``; outer transforms (the outer
    ``grad`` of ``grad(grad(f))``, ``jvp(grad(f))``, ``hessian``) differentiate through
    that pass and the hook's computation, and do not call the hook again, as for an
    identity ``custom_vjp`` whose ``bwd`` is ``fn``. Every mode gives the same second
    derivatives, eagerly and under ``jit``.

    Traced values that ``fn`` closes over directly (its free variables, or the arguments
    of a ``functools.partial``: a clipping threshold passed to a jitted step, a per-example
    scale under ``vmap``) are passed to it whenever it runs: under ``jit``, in the
    backward pass of ``grad(vmap(f))``, and as each example's value in a per-example
    call. A traced value reached otherwise (through another function it calls) works
    eagerly, and is an ``UnexpectedTracerError`` naming the hook where the hook runs after
    the value's transform has returned.

    >>> import functrace as ft
    >>> seen = []
    >>> f = lambda x: ft.grad_hook(x * 2.0, lambda ct: seen.append(float(ct))) ** 2
    >>> float(ft.grad(f)(3.0)), seen
    (24.0, [12.0])
    """
    from functrace.tree_util import tree_map

    call, operands = _with_operands(fn)
    wrapped = call if isinstance(call, _Callable) else _Callable(call, _name(fn))

    def hook(v: Any) -> Any:
        # Inside a vmap the hook sees each example's cotangent (see _per_example_value).
        if not isinstance(v, Tracer):
            return v
        return grad_hook_p.bind(_per_example_value(v), *operands, fn=wrapped)

    return tree_map(hook, x)
