"""``cond`` and ``switch``: one of several branches, chosen by an index.

Reverse mode runs the taken branch's primal part, returning its residuals in slots
shared by all branches (zeros in the others'), and a linear ``cond_lin`` over the
tangents that reads them.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._array import to_array
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.errors import ConcretizationError, TracerArrayConversionError
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.batching import BatchTracer
from functrace.interpreters.staging import trace_abstractly
from functrace.ir import Jaxpr, eval_jaxpr
from functrace.lax.control_flow.common import (
    _cast_to,
    _dependent_outputs,
    _fill,
    _inst,
    _nonzero_outputs,
    _run,
    _run_args,
    _trace,
    _Varies,
    _vma_axis_name,
    _zeros,
    run_cond,
)
from functrace.lax.elementwise import (
    clamp,
    convert_element_type,
    eq,
    ne,
    select_n,
    stop_gradient,
    zeros_like,
)
from functrace.lax.shapes import broadcast_in_dim
from functrace.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)

# ---------------------------------------------------------------------------
# cond and switch
# ---------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True)


def branch_index(index: Any, n: int) -> Any:
    """``index`` (any integer or bool dtype) clamped to ``[0, n - 1]``, as the int32
    branch index of ``cond_p``. The clamp runs in the index's own dtype and the cast
    comes after it: casting first would wrap an int64 index of 2**31 to -2**31 and
    pick branch 0 instead of the last one."""
    dt = core.get_aval(index).dtype
    if dt.kind == "b":
        index, dt = convert_element_type(index, np.int32), np.dtype(np.int32)
    hi = min(n - 1, int(np.iinfo(dt).max))
    idx = clamp(np.zeros((), dt)[()], index, np.asarray(hi, dt)[()])
    return idx if dt == np.int32 else convert_element_type(idx, np.int32)


def _cond_impl(index: Any, *ops: Any, branches: tuple[Jaxpr, ...]) -> list[Any]:
    return list(run_cond([functools.partial(_run_args, b) for b in branches], index, *ops))


def _cond_abstract(
    index: ShapedArray, *ops: ShapedArray, branches: tuple[Jaxpr, ...]
) -> list[ShapedArray]:
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"cond: expected a scalar integer branch index, got {index.str_short()}.")
    return [v.aval for v in branches[0].outvars]


core.impl_rules[cond_p] = _cond_impl
core.abstract_eval_rules[cond_p] = _cond_abstract


def _cond_masks(
    primals: Sequence[Any], tangents: Sequence[Any], branches: tuple[Jaxpr, ...]
) -> tuple[Any, list[Any], list[Any], list[bool], list[bool]]:
    """``(index, ops, dops, nz_in, nz_out)``: the operands and their tangents, and the
    masks of nonzero tangents of the operands and (in any branch) of the outputs."""
    index, *ops = primals
    dops = list(tangents[1:])
    nz_in = [type(t) is not Zero for t in dops]
    nz_out = [any(col) for col in zip(*[_nonzero_outputs(b, nz_in) for b in branches])]
    return index, ops, dops, nz_in, nz_out


def _cond_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[Jaxpr, ...]
) -> tuple[list[Any], list[Any]]:
    index, ops, dops, nz_in, nz_out = _cond_masks(primals, tangents, branches)
    t = ad.tangent_aval
    op_avals = [v.aval for v in branches[0].invars]
    out_avals = [v.aval for v in branches[0].outvars]

    def make(b: Jaxpr) -> Any:
        def jvp_branch(*args: Any) -> list[Any]:
            p, d = args[: len(ops)], args[len(ops) :]
            outs, t_outs = ad.jvp_flat(
                lambda *a: _run(b, a), p, _fill(d, nz_in, [t(a) for a in op_avals])
            )
            return list(outs) + [
                _inst(to, t(a)) for to, a, m in zip(t_outs, out_avals, nz_out) if m
            ]

        return jvp_branch

    avals = op_avals + [t(a) for a, m in zip(op_avals, nz_in) if m]
    new_branches, consts = _trace_branches([make(b) for b in branches], avals, "cond (jvp)")
    outs = cond_p.bind(
        index, *consts, *ops, *[d for d, m in zip(dops, nz_in) if m], branches=new_branches
    )
    n = len(out_avals)
    return outs[:n], _fill(outs[n:], nz_out, [t(a) for a in out_avals])


ad.jvp_rules[cond_p] = _cond_jvp


def _trace_branches(
    funs: Sequence[Callable[..., list[Any]]],
    avals: Sequence[ShapedArray],
    origin: str,
    operands: Sequence[Any] | None = None,
) -> tuple[tuple[Jaxpr, ...], list[Any]]:
    """Trace branches on the same operand types; their constants become one shared list
    of leading operands (each branch ignores the others')."""
    traced = [_trace(f, avals, f"{origin}, branch {i}", operands) for i, f in enumerate(funs)]
    all_consts = [c for _, cs in traced for c in cs]
    out = []
    offset = 0
    for j, cs in traced:
        n_c = len(cs)
        before, after = offset, len(all_consts) - offset - n_c

        def wrapped(
            *args: Any, j: Jaxpr = j, before: int = before, n_c: int = n_c, after: int = after
        ) -> list[Any]:
            return _run(j, args[before : before + n_c] + args[before + n_c + after :])

        full_avals = [core.get_aval(c) for c in all_consts] + list(avals)
        jw, extra = _trace(wrapped, full_avals, origin)
        assert not extra
        out.append(jw)
        offset += n_c
    return tuple(out), all_consts


def _cond_linearize(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[Jaxpr, ...]
) -> tuple[list[Any], list[Any]]:
    """Reverse mode: each branch computes its primal outputs and residuals (all branches'
    residual slots, zeros in the others'); a linear cond over tangents reads them."""
    index, ops, dops, nz_in, nz_out = _cond_masks(primals, tangents, branches)
    t = ad.tangent_aval
    op_avals = [v.aval for v in branches[0].invars]
    out_avals = [v.aval for v in branches[0].outvars]
    infos: list[dict[str, Any]] = []

    for b in branches:
        box: dict[str, Any] = {}

        def fwd(*args: Any, b: Jaxpr = b, box: dict[str, Any] = box) -> list[Any]:
            outs, lin, _ = ad.linearize_flat(
                lambda *a: _run(b, a), args, nz_in, origin="cond (linearize)"
            )
            box["lin"] = lin
            box["res_avals"] = [core.get_aval(r).update() for r in lin.consts]
            return list(outs) + list(lin.consts)

        _trace(fwd, op_avals, "cond (residual types)")
        infos.append(box)
    slots = [a for info in infos for a in info["res_avals"]]
    offsets = np.cumsum([0] + [len(i["res_avals"]) for i in infos])

    def fwd_branch(k: int) -> Callable[..., list[Any]]:
        def f(*args: Any) -> list[Any]:
            outs, lin, _ = ad.linearize_flat(
                lambda *a: _run(branches[k], a), args, nz_in, origin="cond (linearize)"
            )
            res = [_zeros(a) for a in slots]
            for i, r in enumerate(lin.consts):
                res[offsets[k] + i] = r
            return list(outs) + res

        return f

    fwd_branches, fwd_consts = _trace_branches(
        [fwd_branch(k) for k in range(len(branches))],
        op_avals,
        "cond (forward pass of reverse mode)",
    )
    outs = cond_p.bind(index, *fwd_consts, *ops, branches=fwd_branches)
    primal_out, res = outs[: len(out_avals)], outs[len(out_avals) :]
    dops_nz = [d for d, m in zip(dops, nz_in) if m]

    def lin_branch(k: int) -> Callable[..., list[Any]]:
        lin = infos[k]["lin"]

        def f(*args: Any) -> list[Any]:
            r, d = args[: len(slots)], args[len(slots) :]
            mine = list(r[offsets[k] : offsets[k + 1]])
            tans = [
                tt for tt, m in zip(_fill(d, nz_in, [t(a) for a in op_avals]), lin.in_mask) if m
            ]
            live = iter(
                eval_jaxpr(
                    lin.jaxpr, mine, [_inst(tt, tt.aval) if type(tt) is Zero else tt for tt in tans]
                )
            )
            t_out = [Zero(t(a)) if z else next(live) for a, z in zip(out_avals, lin.out_zero)]
            return [_inst(to, t(a)) for to, a, m in zip(t_out, out_avals, nz_out) if m]

        return f

    # NOTE: the linearization traced inside lin_branch must match the one used for the
    # residual slots; both come from the same jaxpr and mask, so they do.
    lin_avals = slots + [t(a) for a, m in zip(op_avals, nz_in) if m]
    lin_branches, lin_consts = _trace_branches(
        [lin_branch(k) for k in range(len(branches))],
        lin_avals,
        "cond (linear pass of reverse mode)",
    )
    t_out = cond_lin_p.bind(
        index,
        *lin_consts,
        *res,
        *dops_nz,
        branches=lin_branches,
        num_known=len(lin_consts) + len(res),
    )
    return primal_out, _fill(t_out, nz_out, [t(a) for a in out_avals])


ad.linearize_rules[cond_p] = _cond_linearize

# A cond that is linear in its trailing operands (the tangents), for reverse mode.
cond_lin_p = Primitive("cond_lin", multiple_results=True)


def _cond_lin_impl(index: Any, *ops: Any, branches: tuple[Jaxpr, ...], num_known: int) -> list[Any]:
    return _cond_impl(index, *ops, branches=branches)


def _cond_lin_abstract(
    index: ShapedArray, *ops: ShapedArray, branches: tuple[Jaxpr, ...], num_known: int
) -> list[ShapedArray]:
    return _cond_abstract(index, *ops, branches=branches)


def _cond_lin_transpose(
    cts: Sequence[Any], index: Any, *ops: Any, branches: tuple[Jaxpr, ...], num_known: int
) -> list[Any]:
    if ad.is_undefined_primal(index) or any(ad.is_undefined_primal(o) for o in ops[:num_known]):
        raise ValueError("cond transpose: the index and residuals must be known.")
    known = list(ops[:num_known])
    lin_avals = [o.aval for o in ops[num_known:]]
    out_avals = [v.aval for v in branches[0].outvars]
    cts = [_inst(c, a) for c, a in zip(cts, out_avals)]

    def make(b: Jaxpr) -> Callable[..., list[Any]]:
        view = Jaxpr(b.invars[:num_known], b.invars[num_known:], b.eqns, b.outvars)

        def f(*args: Any) -> list[Any]:
            k, c = args[:num_known], args[num_known:]
            res = ad.backward_pass(view, k, c, forward_known=True)
            return [_inst(r, a) for r, a in zip(res, lin_avals)]

        return f

    avals = [core.get_aval(k) for k in known] + out_avals
    t_branches, consts = _trace_branches([make(b) for b in branches], avals, "cond (transpose)")
    outs = cond_lin_p.bind(
        index, *consts, *known, *cts, branches=t_branches, num_known=len(consts) + num_known
    )
    return [None] * (1 + num_known) + list(outs)


def _cond_lin_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[Jaxpr, ...], num_known: int
) -> tuple[Any, Any]:
    # Linear in the trailing operands, so its tangent is itself applied to their tangents
    # when the known operands carry no tangent; in general, differentiate the branches.
    return _cond_jvp(primals, tangents, branches=branches)


def _cond_lin_linearize(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[Jaxpr, ...], num_known: int
) -> tuple[Any, Any]:
    return _cond_linearize(primals, tangents, branches=branches)


core.impl_rules[cond_lin_p] = _cond_lin_impl
core.abstract_eval_rules[cond_lin_p] = _cond_lin_abstract
ad.jvp_rules[cond_lin_p] = _cond_lin_jvp
ad.linearize_rules[cond_lin_p] = _cond_lin_linearize
ad.transpose_rules[cond_lin_p] = _cond_lin_transpose
ad.linear_primitives.add(cond_lin_p)


def _cond_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, branches: tuple[Jaxpr, ...], **params: Any
) -> tuple[list[Any], list[Any]]:
    size = batching.batch_size(vals, bdims)
    index, *ops = vals
    bi, *bops = bdims
    if bi is None:

        def run(k: int) -> Callable[..., list[Any]]:
            return lambda *a: _run(branches[k], a)

        # every branch must agree on the output batch dims: all move to 0, but over a
        # shard_map(check_vma=True) mesh axis, outputs no branch makes vary stay unbatched
        batched = _batched_outputs(branches, bops, size)

        def branch_fn(k: int, on: list[bool] | None) -> Callable[..., list[Any]]:
            def f(*a: Any) -> list[Any]:
                outs, dims = batching.vmap_flat(run(k), size, a, bops, indexed=True)
                if on is None:
                    return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)]
                if any(d is not None and not m for d, m in zip(dims, on)):
                    raise _Varies
                return [batching.bdim_at(o, d, size, 0) if m else o
                        for o, d, m in zip(outs, dims, on)]  # fmt: skip

            return f

        avals = [core.get_aval(o) for o in ops]
        try:
            new_branches, consts = _trace_branches(
                [branch_fn(k, batched) for k in range(len(branches))], avals, "cond (vmap)"
            )
        except _Varies:
            batched = None
            new_branches, consts = _trace_branches(
                [branch_fn(k, None) for k in range(len(branches))], avals, "cond (vmap)"
            )
        prim = cond_p if "num_known" not in params else cond_lin_p
        extra = {} if prim is cond_p else {"num_known": params["num_known"] + len(consts)}
        outs = prim.bind(index, *consts, *ops, branches=new_branches, **extra)
        if batched is None:
            return outs, [0] * len(outs)
        return outs, [0 if m else None for m in batched]
    # A batched index: run every branch on the whole batch and select per example.
    idx = branch_index(batching.moveaxis(index, bi, 0), len(branches))

    def per_example(mask: Any, shape: tuple[int, ...]) -> Any:
        return broadcast_in_dim(mask, shape, (0,)) if len(shape) > 1 else mask

    # Each branch sees its float operands only where it is taken: elsewhere their gradient
    # is stopped (and a linear operand of cond_lin is zero), so that an untaken branch run
    # on values it was never meant for (zero residuals: log'(0) = inf) sends no NaN back
    # to the operands in reverse mode (0 * inf). JAX's batched cond does the same.
    n_known = params.get("num_known", len(ops))
    ops0 = [batching.bdim_at(o, d, size, 0) for o, d in zip(ops, bops)]
    results = []
    for k, b in enumerate(branches):
        taken = eq(idx, np.full(core.get_aval(idx).shape, k, np.int32))
        masked = []
        for i, o in enumerate(ops0):
            aval = core.get_aval(o)
            if aval.dtype.kind not in "fc":
                masked.append(o)
                continue
            off = zeros_like(o) if i >= n_known else stop_gradient(o)
            masked.append(select_n(per_example(taken, aval.shape), off, o))
        outs, dims = batching.vmap_flat(
            lambda *a, b=b: _run(b, a), size, masked, [0] * len(ops), indexed=True
        )
        results.append([batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)])
    outs = []
    for k in range(len(results[0])):
        cases = [r[k] for r in results]
        shape = core.get_aval(cases[0]).shape
        which = per_example(idx, shape)
        if len(cases) == 2:
            which = convert_element_type(which, np.bool_)
        outs.append(select_n(which, *cases))
    return outs, [0] * len(outs)


def _batched_outputs(
    branches: Sequence[Jaxpr], bops: Sequence[int | None], size: int
) -> list[bool] | None:
    """Over a ``shard_map(check_vma=True)`` mesh axis: which outputs of the branches
    (run on operands batched as ``bops``) may vary along it; None elsewhere, or when
    all may (every output is then batched)."""
    name = _vma_axis_name(size)
    if name is None:
        return None
    dep = [d is not None for d in bops]
    on = [any(col) for col in zip(*(_dependent_outputs(b, dep, name) for b in branches))]
    return None if all(on) else on


batching.batching_rules[cond_p] = _cond_batch
batching.batching_rules[cond_lin_p] = _cond_batch


# ---------------------------------------------------------------------------
# The functions users call
# ---------------------------------------------------------------------------

# What tracing a branch abstractly raises when it needs concrete values: Python control
# flow on them (``if x > 0``, ``float(x)``), ``np.asarray``, an eager-only function.
_NEEDS_VALUES = (ConcretizationError, TracerArrayConversionError, NotImplementedError)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """Apply ``branches[index](*operands)``, the index clamped to the valid range.

    As in JAX, every branch must return the same tree structure, shapes and dtypes. A
    known index (eagerly, or under ``grad``/``jvp``, or an unbatched index under
    ``vmap``) calls only the branch taken with the operands as they are; the others are
    traced abstractly (on the operands' types) to check their output types, and a
    mismatch is a ``TypeError`` there too. A branch whose abstract tracing needs
    concrete values (Python control flow on them, ``np.asarray``, an eager-only
    function) is not checked. Eager results are ``functrace.Array``s. Differences from
    JAX: an integer index beyond int32 is clamped (JAX casts it to int32 first, which
    can wrap it), and a bool index is taken as 0 or 1 (JAX refuses it).

    >>> from functrace import lax
    >>> lax.switch(1, [lambda x: x + 1.0, lambda x: x * 2.0], 2.0)
    Array(4.)
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: expected at least one branch, got none.")
    idx_aval = _operand_aval("switch", "a scalar integer index", index)
    if idx_aval.shape != () or idx_aval.dtype.kind not in "iub":
        raise TypeError(f"switch: expected a scalar integer index, got {idx_aval.str_short()}.")
    concrete = core.concrete_or_none(index)
    if concrete is not None and not _batched(index):
        k = min(max(int(concrete), 0), len(branches) - 1)
        return _call_taken("switch", branches, k, operands, _switch_label)
    return _staged("switch", branches, branch_index(index, len(branches)), operands, _switch_label)


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``, staged under jit.

    ``pred`` is a scalar bool, integer or float (Python, NumPy, 0-d array or traced), as
    in JAX: nonzero is true (NaN too). Both branches must return the same tree
    structure, shapes and dtypes; with a known predicate only the branch taken runs and
    the other is traced abstractly to check that (see :func:`switch`). Eager results are
    ``functrace.Array``s.

    >>> from functrace import lax
    >>> lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 2.0)
    Array(3.)
    """
    aval = _operand_aval("cond", "a scalar predicate (a bool, integer or float)", pred)
    if aval.shape != ():
        raise TypeError(
            f"cond: expected a scalar predicate (a bool, integer or float; nonzero is "
            f"true), got {aval.str_short()}. Reduce it first (e.g. .any() or .all())."
        )
    if aval.dtype.kind not in "biuf":
        raise TypeError(
            f"cond: expected a bool, integer or float predicate (nonzero is true), got "
            f"{aval.str_short()}. Compare it first (e.g. x != 0 or x.real > 0)."
        )
    branches = [false_fun, true_fun]
    if not isinstance(pred, Tracer):
        return _call_taken("cond", branches, int(bool(pred)), operands, _cond_label)
    concrete = core.concrete_or_none(pred)
    if concrete is not None and not _batched(pred):
        return _call_taken("cond", branches, int(bool(concrete)), operands, _cond_label)
    p = pred if aval.dtype.kind == "b" else ne(pred, np.zeros((), aval.dtype))
    return _staged("cond", branches, convert_element_type(p, np.int32), operands, _cond_label)


def _operand_aval(fname: str, what: str, x: Any) -> ShapedArray:
    try:
        return core.get_aval(x)
    except TypeError:
        raise TypeError(f"{fname}: expected {what}, got {core.describe_value(x)}.") from None


def _switch_label(branches: Sequence[Callable[..., Any]], k: int) -> str:
    return f"branch {k} {core.describe_fun(branches[k])}"


def _cond_label(branches: Sequence[Callable[..., Any]], k: int) -> str:
    name = "true_fun" if k else "false_fun"
    return f"branch {k} ({name}) {core.describe_fun(branches[k])}"


Label = Callable[[Sequence[Callable[..., Any]], int], str]


def _check_types(
    fname: str,
    label: Callable[[int], str],
    ref: int,
    k: int,
    ref_out: Any,
    ref_tree: Any,
    ref_avals: Sequence[ShapedArray],
    tree: Any,
    avals: Sequence[ShapedArray],
) -> None:
    """Branch ``k`` returns what branch ``ref`` does (its output ``ref_out``): the same
    tree structure, shapes and dtypes (weak types may differ), else a ``TypeError``
    naming both."""
    # named in branch order, so eager and staged calls give the same message
    (i, x), (j, y) = sorted([(ref, (ref_tree, ref_avals)), (k, (tree, avals))])
    if tree != ref_tree:
        raise TypeError(
            f"{fname}: expected every branch to return the same tree structure, got "
            f"{x[0]} from {label(i)} and {y[0]} from {label(j)}."
        )
    paths = [p for p, _ in tree_flatten_with_path(ref_out)[0]]
    for p, a, b in zip(paths, x[1], y[1]):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(
                f"{fname}: expected every branch to return the same shapes and dtypes, got "
                f"{a.str_short()} from {label(i)} and {b.str_short()} from {label(j)} at "
                f"output {keystr(p) or '<root>'}. Cast with .astype(...) or broadcast so "
                f"that the branches agree."
            )


def _leaf_avals(fname: str, out: Any, leaves: Sequence[Any]) -> list[ShapedArray]:
    """The types of the leaves of a branch's output ``out``."""
    try:
        return [core.get_aval(x) for x in leaves]
    except TypeError:
        pass
    for p, x in tree_flatten_with_path(out)[0]:
        if not core.is_array_like(x):
            raise TypeError(
                f"{fname}: expected the branches to return arrays or scalars (a pytree of "
                f"them), got {core.describe_value(x)} at output {keystr(p) or '<root>'}."
            ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _call_taken(
    fname: str,
    branches: Sequence[Callable[..., Any]],
    k: int,
    operands: tuple[Any, ...],
    label: Label,
) -> Any:
    """A known index: call branch ``k`` on the operands as they are, and trace the other
    branches abstractly on the operands' types to check that they return the same types
    (as JAX, which traces every branch). A branch that needs concrete values to be traced
    is not checked."""
    out = branches[k](*operands)
    if len(branches) > 1:
        leaves, tree = tree_flatten(out)
        avals = _leaf_avals(fname, out, leaves)
        op_leaves, op_tree = tree_flatten(operands)
        op_avals = tuple(core.get_aval(x) for x in op_leaves)
        for j, b in enumerate(branches):
            if j == k:
                continue
            types = _branch_types(fname, b, op_tree, op_avals)
            if types is None:
                continue  # tracing it needs concrete values: not checked
            tree_j, avals_j = types
            if tree_j != tree or not all(map(ShapedArray.same_type, avals, avals_j)):
                _check_types(
                    fname, lambda i: label(branches, i), k, j, out, tree, avals, tree_j, avals_j
                )
    if core.current_level() == 0 and not core.dynamic_trace_active():
        return tree_map(_eager_array, out)  # eager: Arrays, as the loops return
    return out


# The output types of branches traced abstractly, per branch function (held weakly) and
# operand types, as JAX caches the jaxprs of cond's branches: a branch function called
# again on operands of the same types is not traced again (so a module-level function
# costs a lookup; a lambda written in the call is a new function each time).
_BRANCH_TYPES: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()
_BRANCH_TYPES_LOCK = threading.Lock()
_BRANCH_TYPES_PER_FUN = 8


def _branch_types(
    fname: str, b: Callable[..., Any], op_tree: Any, op_avals: tuple[ShapedArray, ...]
) -> tuple[Any, list[ShapedArray]] | None:
    """The tree structure and leaf types branch ``b`` returns on operands of these
    types, traced abstractly; None when tracing it needs concrete values."""
    key = (op_tree, op_avals)
    try:
        with _BRANCH_TYPES_LOCK:
            per_fun = _BRANCH_TYPES.get(b)
            if per_fun is not None and key in per_fun:
                return per_fun[key]  # type: ignore[no-any-return]
    except TypeError:  # not weakly referenceable or not hashable: never cached
        per_fun = None

    def types(*args: Any) -> tuple[Any, list[ShapedArray]]:
        out = b(*tree_unflatten(op_tree, args))
        leaves, tree = tree_flatten(out)
        return tree, _leaf_avals(fname, out, leaves)

    try:
        result = trace_abstractly(types, op_avals, origin=f"{fname} (an untaken branch)")
    except _NEEDS_VALUES:
        result = None
    try:
        with _BRANCH_TYPES_LOCK:
            per_fun = _BRANCH_TYPES.setdefault(b, {})
            if len(per_fun) >= _BRANCH_TYPES_PER_FUN:
                per_fun.pop(next(iter(per_fun)))
            per_fun[key] = result
    except TypeError:
        pass
    return result


def _eager_array(x: Any) -> Any:
    if core.is_python_scalar(x):
        return to_array(np.asarray(x, core.get_aval(x).dtype))
    return to_array(x)


def _staged(
    fname: str,
    branches: Sequence[Callable[..., Any]],
    idx: Any,
    operands: tuple[Any, ...],
    label: Label,
) -> Any:
    """Bind ``cond_p`` on the int32 branch index ``idx``: every branch traced on the
    operands' types (weak types kept, as in JAX)."""
    op_leaves, op_tree = tree_flatten(operands)
    avals = [core.get_aval(x) for x in op_leaves]
    out_trees: list[Any] = []
    outs_k: list[Any] = []
    out_avals: list[list[ShapedArray]] = []

    def flat(k: int) -> Callable[..., list[Any]]:
        def f(*args: Any) -> list[Any]:
            out = branches[k](*tree_unflatten(op_tree, args))
            leaves, tree = tree_flatten(out)
            out_trees.append(tree)
            outs_k.append(out)
            out_avals.append(_leaf_avals(fname, out, leaves))
            return leaves

        return f

    jaxprs, consts = _trace_branches(
        [flat(k) for k in range(len(branches))], avals, fname, op_leaves
    )
    for k in range(1, len(branches)):
        _check_types(
            fname,
            lambda i: label(branches, i),
            0,
            k,
            outs_k[0],
            out_trees[0],
            out_avals[0],
            out_trees[k],
            out_avals[k],
        )
    ops = [_cast_to(x, a) for x, a in zip(op_leaves, avals)]
    outs = cond_p.bind(idx, *consts, *ops, branches=jaxprs)
    return tree_unflatten(out_trees[0], outs)


def _batched(x: Any) -> bool:
    while isinstance(x, Tracer):
        if isinstance(x, BatchTracer) and x.bdim is not None:
            return True
        x = getattr(x, "primal", getattr(x, "val", None))
    return False
