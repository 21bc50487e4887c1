"""``custom_vjp``: a function with user-defined ``fwd``/``bwd`` rules; the
``custom_vjp_call`` primitive (its JVP rule runs ``fwd`` and emits a linear
``custom_lin`` equation whose transpose is ``bwd``) and their batching rules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer, describe_fun, describe_value
from functrace.custom_derivatives._common import (
    _at_front,
    _batch_custom_call,
    _Callable,
    _check_primal_types,
    _check_rule_flag,
    _close_over_consts,
    _differentiated_directly,
    _level,
    _OutBatch,
    _per_example,
    _register_custom_call,
    _resolve_kwargs,
    _rule_name,
    _signature,
    _to_front,
    _top_trace,
    _trace_flat,
    forward_attr,
)
from functrace.custom_derivatives._symbolic import CustomVJPPrimal, SymbolicZero, to_user
from functrace.errors import UnexpectedTracerError
from functrace.interpreters import ad, batching, spmd
from functrace.interpreters.ad import Zero
from functrace.ir import ClosedJaxpr
from functrace.lax.reductions import reduce_sum
from functrace.tree_util import (
    keystr,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_unflatten,
)


class _Bwd:
    """The bwd of one fwd call: ``fn(nondiff, residuals, cts)`` with the values of the
    non-differentiable arguments it uses (``nd``), which a batched fwd replaces by their
    per-example values (passed to bwd as residuals)."""

    __slots__ = ("fn", "nd", "__name__")

    def __init__(self, fn: Callable[..., Any], nd: Sequence[Any], name: str) -> None:
        self.fn = fn
        self.nd = list(nd)
        self.__name__ = name

    def __call__(self, res: list[Any], cts: list[Any]) -> Any:
        return self.fn(self.nd, res, cts)

    def with_nd(self, nd: Sequence[Any]) -> _Bwd:
        return _Bwd(self.fn, nd, self.__name__)

    def __repr__(self) -> str:
        return self.__name__


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_vjp_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    fwd: Any,
    num_consts: int,
) -> Any:
    for t in tangents[:num_consts]:
        if type(t) is not Zero:
            raise NotImplementedError(
                "custom_vjp: expected the function to close over no value being "
                "differentiated, got a closure over a traced value. Pass it as an argument."
            )
    tangents = _symbolic_zeros(primals, tangents)
    if all(type(t) is Zero for t in tangents[num_consts:]):
        outs = custom_vjp_call_p.bind(
            *primals, call_jaxpr=call_jaxpr, fwd=fwd, num_consts=num_consts
        )
        return outs, [Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
    return _fwd_lin(fwd, primals[num_consts:], tangents[num_consts:])


def _symbolic_zeros(primals: Sequence[Any], tangents: Sequence[Any]) -> list[Any]:
    """The tangents with those that are zeros made symbolic. A concrete tangent that is
    all zeros (a JVP rule upstream returned zeros, as custom_jvp's does for ceil), or one
    of an outer transform in reverse mode (those zeros under grad(grad(...))), is linear
    in nothing."""
    return [
        Zero(ad.tangent_aval(core.get_aval(p)))
        if type(t) is not Zero
        and ((not isinstance(t, Tracer) and not np.any(t)) or ad.below_tape(t))
        else t
        for p, t in zip(primals, tangents)
    ]


def _fwd_lin(fwd: Any, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The JVP of a custom_vjp call given its differentiable operands: ``fwd`` gives the
    outputs, the residuals and the bwd that reads them (told which operands are
    perturbed: those whose tangent is not a symbolic zero); the tangents of the outputs
    are a linear ``custom_lin`` of the input tangents, whose transpose is that bwd."""
    outs, res, bwd = fwd(list(primals), [type(t) is not Zero for t in tangents])
    out_axes = spmd.replicated_axes(outs)
    in_axes = spmd.replicated_axes(primals) if out_axes is not None else None
    if out_axes is not None and in_axes is not None and any(n for n, _ in out_axes + in_axes):
        bwd = _Bwd(functools.partial(_spmd_bwd, bwd, out_axes, in_axes), (), bwd.__name__)
    lin_tangents = [ad.instantiate(t) for t in tangents]
    out_avals = tuple(ad.tangent_aval(core.get_aval(o)) for o in outs)
    t_outs = custom_lin_p.bind(*res, *lin_tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, t_outs


def _spmd_bwd(
    bwd: Any,
    out_axes: list[tuple[tuple[Any, ...], int]],
    in_axes: list[tuple[tuple[Any, ...], int]],
    _nd: list[Any],
    res: list[Any],
    cts: list[Any],
) -> list[Any]:
    """``bwd`` inside a ``shard_map(check_vma=True)`` body, where reverse mode carries
    per-shard parts of the cotangents of replicated values (``interpreters/spmd.py``):
    it is handed JAX's cotangents (those parts summed over the shards), as a nonlinear
    rule (clipping) needs, and its cotangents of replicated inputs become parts again
    (divided by the number of shards)."""
    cts = [
        ct if not names or type(ct) is Zero else spmd.ops["psum"](ct, names)
        for ct, (names, _) in zip(cts, out_axes)
    ]
    got = list(bwd(res, cts))
    return [
        g if k == 1 or g is None or type(g) is Zero else spmd.ops["scale"](g, 1.0 / k)
        for g, (_, k) in zip(got, in_axes)
    ]


def _custom_lin_impl(*args: Any, num_res: int, bwd: Any, out_avals: Any) -> Any:
    raise TypeError(
        f"jvp: expected a function differentiable in forward mode, got the custom_vjp function "
        f"{bwd.__name__.removeprefix('bwd_of_')}, which defines only reverse mode. Use "
        f"grad/vjp, or define it with custom_jvp to get both modes."
    )


def _custom_lin_transpose(
    cts: Sequence[Any], *args: Any, num_res: int, bwd: Any, out_avals: Any
) -> list[Any]:
    res = args[:num_res]
    cts_in = bwd(list(res), list(cts))  # zero cotangents stay symbolic (bwd decides)
    return [None] * num_res + list(cts_in)


def _custom_lin_batch(
    vals: list[Any], bdims: list[Any], *, num_res: int, bwd: Any, out_avals: Any
) -> tuple[list[Any], list[Any]]:
    """A ``custom_lin`` with batched operands (``jacfwd``/``hessian`` of a custom_vjp
    function: ``vmap`` of its JVP, which then raises the forward-mode error as ``jvp``
    does; or a linear map of reverse mode under ``vmap``): one ``custom_lin`` whose
    tangents and outputs are batched along axis 0 and whose bwd runs the user's bwd per
    example."""
    size = batching.batch_size(vals, bdims)
    res, res_dims = _to_front(vals[:num_res], bdims[:num_res])
    tangents = [batching.bdim_at(t, d, size, 0) for t, d in zip(vals[num_res:], bdims[num_res:])]
    new_bwd = _Bwd(functools.partial(_lin_batched_bwd, bwd, size, res_dims), (), bwd.__name__)
    avals = tuple(a.update(shape=(size, *a.shape)) for a in out_avals)
    outs = custom_lin_p.bind(*res, *tangents, num_res=num_res, bwd=new_bwd, out_avals=avals)
    return outs, [0] * len(outs)


def _lin_batched_bwd(
    bwd: Any, size: int, res_dims: list[int | None], _nd: list[Any], res: list[Any], cts: list[Any]
) -> list[Any]:
    n = len(res)
    live, zeros = _split_zero_cts(cts, [True] * len(cts))

    def one(*xs: Any) -> list[Any]:
        got = bwd(list(xs[:n]), _join_zero_cts(xs[n:], zeros))
        return [ad.instantiate(g) for g in got]

    outs, dims = batching.vmap_flat(
        one,
        size,
        [*res, *live],
        [*res_dims, *([0] * len(live))],
        origin=f"vmap of {bwd.__name__}",
    )
    return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)]


def _split_zero_cts(cts: Sequence[Any], batched: Sequence[bool]) -> tuple[list[Any], list[Any]]:
    """The cotangents that are arrays, and for each cotangent None or (a symbolic zero)
    the Zero of one example (``batched``: the cotangent has the batch axis at 0)."""
    live = [c for c in cts if type(c) is not Zero]
    zeros = [
        None
        if type(c) is not Zero
        else Zero(c.aval.update(shape=c.aval.shape[1:]) if b else c.aval)
        for c, b in zip(cts, batched)
    ]
    return live, zeros


def _join_zero_cts(live: Sequence[Any], zeros: Sequence[Any]) -> list[Any]:
    it = iter(live)
    return [next(it) if z is None else z for z in zeros]


def _batched_fwd(
    fwd: Any,
    trace: batching.BatchTrace,
    dims: list[int | None],
    state: _OutBatch,
    primals: list[Any],
    perturbed: list[bool],
) -> tuple[list[Any], list[Any], Any]:
    """The fwd rule of a batched custom_vjp call: the user's fwd per example, with the
    residuals batched along axis 0 (those that are the same for every example stay
    unbatched), and a bwd that runs the user's bwd per example."""
    size, num_out = trace.axis_size, len(state.batched)
    box: list[tuple[int, _Bwd, list[int]]] = []

    def one(*xs: Any) -> list[Any]:
        outs, res, bwd = fwd(list(xs), perturbed)
        # Traced non-differentiable arguments reach bwd as residuals, per example.
        nd_pos = [i for i, v in enumerate(bwd.nd) if isinstance(v, Tracer)]
        box.append((len(res), bwd, nd_pos))
        return [*outs, *res, *(bwd.nd[i] for i in nd_pos)]

    vals, vdims = _per_example(trace, one, primals, dims, f"vmap of the fwd of {state.name}")
    n_res, bwd, nd_pos = box[-1]
    batched = state.widen([d is not None for d in vdims[:num_out]], "fwd rule")
    outs = [_at_front(o, d, b, size) for o, d, b in zip(vals[:num_out], vdims, batched)]
    res, res_dims = _to_front(vals[num_out:], vdims[num_out:])
    in_avals = [ad.tangent_aval(core.get_aval(p)) for p in primals]
    new_bwd = _Bwd(
        functools.partial(
            _batched_bwd, bwd, n_res, nd_pos, size, res_dims, list(batched), dims, in_avals
        ),
        (),
        bwd.__name__,
    )
    return outs, res, new_bwd


def _batched_bwd(
    bwd: _Bwd,
    n_res: int,
    nd_pos: list[int],
    size: int,
    res_dims: list[int | None],
    out_batched: list[bool],
    in_dims: list[int | None],
    in_avals: list[ShapedArray],
    _nd: list[Any],
    res: list[Any],
    cts: list[Any],
) -> list[Any]:
    """The user's bwd per example. The cotangent of an input that is the same for every
    example is the sum of the examples' cotangents."""
    zero_box: list[list[bool]] = []
    live, zeros = _split_zero_cts(cts, out_batched)

    def one(*xs: Any) -> list[Any]:
        nd = list(bwd.nd)
        for i, v in zip(nd_pos, xs[n_res : len(res)]):
            nd[i] = v
        got = bwd.with_nd(nd)(list(xs[:n_res]), _join_zero_cts(xs[len(res) :], zeros))
        zero_box.append([type(g) is Zero for g in got])
        return [g for g in got if type(g) is not Zero]

    try:
        vals, vdims = batching.vmap_flat(
            one,
            size,
            [*res, *live],
            [
                *res_dims,
                *(0 if b else None for c, b in zip(cts, out_batched) if type(c) is not Zero),
            ],
            origin=f"vmap of {bwd.__name__}",
        )
    except UnexpectedTracerError as e:
        raise UnexpectedTracerError(
            f"custom_vjp: expected the bwd of {_rule_name(bwd, 'bwd_of_')} to use only its "
            f"residuals and cotangents, got a closure over a value of a vmap that has "
            f"returned (reverse mode runs bwd after the vmap). Pass that value as an "
            f"argument and return it from fwd as a residual. ({e})"
        ) from e
    it = iter(zip(vals, vdims))
    out: list[Any] = []
    for z, d_in, aval in zip(zero_box[-1], in_dims, in_avals):
        if z:
            out.append(Zero(aval))
            continue
        g, d = next(it)
        if d_in is not None:
            out.append(batching.bdim_at(g, d, size, 0))
        else:
            out.append(g if d is None else reduce_sum(g, (d,)))
    return out


def _custom_vjp_call_batch(
    vals: list[Any],
    bdims: list[Any],
    *,
    trace: batching.BatchTrace,
    call_jaxpr: ClosedJaxpr,
    fwd: Any,
    num_consts: int,
) -> tuple[list[Any], list[Any]]:
    def per_example(rule: Any, dims: list[int | None], state: _OutBatch) -> Any:
        return functools.partial(_batched_fwd, rule, trace, dims[num_consts:], state)

    return _batch_custom_call(
        custom_vjp_call_p,
        "custom_vjp",
        "fwd",
        per_example,
        vals,
        bdims,
        trace,
        call_jaxpr,
        {"fwd": fwd, "num_consts": num_consts},
    )


_register_custom_call(custom_vjp_call_p, _custom_vjp_call_jvp, _custom_vjp_call_batch)
core.impl_rules[custom_lin_p] = _custom_lin_impl
core.abstract_eval_rules[custom_lin_p] = lambda *a, num_res, bwd, out_avals: list(out_avals)
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.batching_rules[custom_lin_p] = _custom_lin_batch
ad.linear_primitives.add(custom_lin_p)


def _none_prefix_leaves(got: tuple[Any, ...], in_tree: Any) -> list[Any] | None:
    """The cotangent leaves bwd returned, one per leaf of the arguments' tree
    ``in_tree``: a ``None`` stands for zeros of the whole subtree at its place (an
    argument, or part of one), as in JAX. None when the structures do not match."""
    mark = object()
    leaves: list[Any] = []

    def put(g: Any, sub: Any) -> None:
        if g is None:
            leaves.extend([None] * len(tree_leaves(sub)))
        elif sub is mark:
            leaves.append(g)
        else:  # one cotangent for a subtree of several leaves
            raise ValueError

    try:
        tree_map(put, got, tree_unflatten(in_tree, [mark] * in_tree.num_leaves), is_leaf=_is_none)
    except ValueError:
        return None
    return leaves


def _is_none(x: Any) -> bool:
    return x is None


class custom_vjp:
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, ct)`` returns a
    tuple with one cotangent per differentiable argument; ``None`` stands for zeros, of
    a whole argument (a pytree too) or of any part of one, as in JAX.

    The rules are used under every transform and order, ``vmap`` included:
    ``grad(vmap(f))`` runs ``fwd`` and ``bwd`` on each example (batched), as
    ``vmap(grad(f))`` does; an argument shared by the batch gets the sum of the
    examples' cotangents. ``bwd`` runs after the ``vmap`` has returned, so it must not
    close over values of that ``vmap``: pass them through the residuals.

    Differentiated eagerly (``grad``/``vjp`` the outermost transform, concrete values),
    ``fwd`` runs on the concrete primals and the function is not traced, so both may use
    Python control flow on them, as in JAX.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.custom_vjp
    ... def relu(x):
    ...     return fnp.maximum(x, 0.0)
    >>> def relu_fwd(x):
    ...     return relu(x), x
    >>> def relu_bwd(x, ct):
    ...     return (ct * (x > 0),)
    >>> relu.defvjp(relu_fwd, relu_bwd)
    >>> ft.grad(lambda x: relu(x).sum())(fnp.array([1.0, -2.0, 3.0]))
    Array([1., 0., 1.])
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._sig = _signature(fun)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    __getattr__ = forward_attr  # the wrapped function's attributes (a custom_vmap's def_vmap)

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """Register ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct) -> cts``
        (one cotangent per differentiable argument; ``None`` for zeros).

        With ``symbolic_zeros=True``, as in JAX, each leaf of fwd's differentiable
        arguments is a :class:`CustomVJPPrimal` ``(value, perturbed)``, the cotangent of
        an output that gets none reaches bwd as a :class:`SymbolicZero`, and bwd may
        return ``None`` or a ``SymbolicZero`` for a cotangent (``SymbolicZero`` is
        accepted without the flag too). ``optimize_remat`` (a memory optimisation of
        JAX's) is accepted and has no effect on the results; with ``symbolic_zeros`` it
        is a NotImplementedError, as in JAX."""
        sz = _check_rule_flag("custom_vjp.defvjp", "symbolic_zeros", symbolic_zeros)
        if _check_rule_flag("custom_vjp.defvjp", "optimize_remat", optimize_remat) and sz:
            raise NotImplementedError(
                "custom_vjp.defvjp: expected at most one of symbolic_zeros and "
                "optimize_remat, got both True (JAX does not support the combination)."
            )
        self.symbolic_zeros = sz
        self.fwd = fwd
        self.bwd = bwd
        core.rules_changed()  # eager programs recorded with the old rules are stale

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"custom_vjp: expected fwd and bwd rules for "
                f"{describe_fun(self.fun)}, got none. Call .defvjp first."
            )
        args = _resolve_kwargs("custom_vjp", self.fun, self._sig, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)
        if not any(isinstance(x, Tracer) and not x.recorded for x in leaves) and not (
            core.dynamic_trace_active()
        ):  # concrete values (also those of an eager run being recorded): call it
            return self.fun(*args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        name = describe_fun(self.fun)
        user_fwd, user_bwd = self.fwd, self.bwd
        symbolic = self.symbolic_zeros
        # The output tree fwd must give: the traced function's, or (differentiating
        # eagerly, where the function is not traced) fwd's own.
        expect: list[Any] = []
        fwd_tree: list[Any] = []  # the output tree the last fwd call gave
        nd_leaves, nd_tree = tree_flatten([nondiff[i] for i in sorted(nondiff)])
        bwd_name = f"bwd_of_{getattr(self.fun, '__name__', 'f')}"
        in_avals = [ad.tangent_aval(core.get_aval(x)) for x in leaves]
        in_paths = [p for p, _ in tree_flatten_with_path(diff_args)[0]]

        def flat_fwd(primals: list[Any], perturbed: list[bool]) -> tuple[list[Any], list[Any], Any]:
            if symbolic:
                primals = [CustomVJPPrimal(p, z) for p, z in zip(primals, perturbed)]
            res = user_fwd(*full(tree_unflatten(in_tree, primals)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_vjp: expected fwd of {name} to return a pair "
                    f"(output, residuals), got {describe_value(res)}."
                )
            out, residuals = res
            o_leaves, o_tree = tree_flatten(out)
            fwd_tree[:] = [o_tree]
            if expect:
                if o_tree != expect[0]:
                    raise ValueError(
                        structure_mismatch_message(expect[0], out, f"custom_vjp fwd of {name}")
                    )
                _check_primal_types("custom_vjp", "fwd", name, out, o_leaves, expect[1])
            r_leaves, r_tree = tree_flatten(residuals)
            bwd = _Bwd(functools.partial(flat_bwd, r_tree, o_tree), nd_leaves, bwd_name)
            return o_leaves, r_leaves, bwd

        def flat_bwd(
            r_tree: Any, o_tree: Any, nd: list[Any], res: list[Any], cts: list[Any]
        ) -> list[Any]:
            nd_vals = tree_unflatten(nd_tree, nd)
            residuals = tree_unflatten(r_tree, res)
            ct = tree_unflatten(o_tree, [to_user(c, symbolic) for c in cts])
            got = user_bwd(*nd_vals, residuals, ct)
            if not isinstance(got, (tuple, list)):
                raise TypeError(
                    f"custom_vjp: expected bwd of {name} to return a tuple with one cotangent "
                    f"per differentiable argument ({len(diff_args)}), got "
                    f"{describe_value(got)}. Wrap a single cotangent as (ct,)."
                )
            got = tuple(got)
            if len(got) != len(diff_args):
                raise ValueError(
                    f"custom_vjp: expected bwd of {name} to return {len(diff_args)} "
                    f"cotangent(s), one per differentiable argument, got {len(got)}."
                )
            g_leaves = _none_prefix_leaves(got, in_tree)
            if g_leaves is None:
                raise ValueError(
                    structure_mismatch_message(in_tree, got, f"custom_vjp bwd of {name}")
                )
            out = []
            for g, a, p in zip(g_leaves, in_avals, in_paths):
                if g is None:
                    out.append(Zero(a))
                    continue
                if type(g) is SymbolicZero:
                    if g.shape != a.shape or g.dtype != a.dtype:
                        raise ValueError(
                            f"custom_vjp: expected bwd of {name} to return a SymbolicZero "
                            f"of type {a.str_short()} for argument {keystr(p)} (the tangent "
                            f"type of that argument), got one of type "
                            f"{g.aval.str_short()}. Return None for a zero cotangent."
                        )
                    out.append(Zero(a))
                    continue
                ga = core.get_aval(g)
                if ga.shape != a.shape:
                    raise ValueError(
                        f"custom_vjp: expected bwd of {name} to return a cotangent of shape "
                        f"{a.shape} for argument {keystr(p)}, got shape {ga.shape}."
                    )
                out.append(g)
            return out

        top = _top_trace(leaves)
        if _differentiated_directly(top) and not any(_level(x) >= top.level for x in nd_leaves):
            # Differentiation is the innermost transform: run fwd on the primals, as the
            # JVP of the custom call would, without tracing the function. Primals stay
            # concrete under eager grad/vjp, so the function and fwd may use Python
            # control flow on them (as in JAX).
            return self._fwd_direct(top, args, leaves, in_tree, flat_fwd, fwd_tree, name)

        closed, out_tree = _trace_flat(
            lambda *fl: self.fun(*full(tree_unflatten(in_tree, fl))),
            leaves,
            f"custom_vjp of {name}",
        )
        expect[:] = [out_tree, closed.out_avals]
        outs = custom_vjp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            fwd=_Callable(
                flat_fwd, f"fwd_of_{getattr(self.fun, '__name__', 'f')}", (user_fwd, user_bwd)
            ),
            num_consts=len(closed.consts),
        )
        return tree_unflatten(out_tree, outs)

    def _fwd_direct(
        self,
        top: ad.JVPTrace,
        args: tuple[Any, ...],
        leaves: list[Any],
        in_tree: Any,
        flat_fwd: Callable[..., Any],
        fwd_tree: list[Any],
        name: str,
    ) -> Any:
        mine = [isinstance(x, Tracer) and x._trace is top for x in leaves]
        primals = [x.primal if m else x for x, m in zip(leaves, mine)]
        tangents = [
            x.tangent if m else Zero(ad.tangent_aval(core.get_aval(x)))
            for x, m in zip(leaves, mine)
        ]

        def fwd(ps: list[Any], perturbed: list[bool]) -> tuple[list[Any], list[Any], Any]:
            outs, res, bwd = flat_fwd(ps, perturbed)
            if any(_level(v) >= top.level for v in [*outs, *res]):
                raise NotImplementedError(
                    f"custom_vjp: expected fwd of {name} to close over no value being "
                    f"differentiated, got a closure over a traced value. Pass that value "
                    f"as an argument instead."
                )
            return outs, res, bwd

        def rule(primals: list[Any], tangents: list[Any]) -> Any:
            tangents = _symbolic_zeros(primals, tangents)
            if all(type(t) is Zero for t in tangents):
                return None  # nothing to differentiate here: call it on the primals
            return _fwd_lin(fwd, primals, tangents)

        got = top.call_jvp_rule(rule, primals, tangents)
        if got is None:
            diff = iter(tree_unflatten(in_tree, primals))
            nd = set(self.nondiff_argnums)
            return self(*(a if i in nd else next(diff) for i, a in enumerate(args)))
        outs, t_outs = got
        return tree_unflatten(fwd_tree[0], [ad.JVPTracer(top, p, t) for p, t in zip(outs, t_outs)])
