"""``while_loop`` and ``fori_loop``: the ``while`` primitive, its forward mode and
batching. Reverse mode is in :mod:`functrace.lax.control_flow.while_reverse`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _debug, core, dtypes
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.ir import Jaxpr
from functrace.lax.control_flow.common import (
    _cast_to,
    _dependent_outputs,
    _fill,
    _inst,
    _nonzero_outputs,
    _run,
    _run_args,
    _split,
    _trace,
    _trace_carry,
    _type_diff,
    _Varies,
    _vma_axis_name,
    run_while,
)
from functrace.lax.control_flow.scan_map import check_unroll, scan
from functrace.lax.elementwise import convert_element_type, gt, select_n
from functrace.lax.reductions import reduce_max
from functrace.lax.shapes import broadcast_in_dim
from functrace.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

# ---------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WhileParams:
    """The params of the while primitives, as one record.

    ``while`` has the loop: ``cond_jaxpr(*cond_consts, *carry) -> pred`` and
    ``body_jaxpr(*body_consts, *carry) -> carry``, whose leading constant operands
    number ``cond_nconsts`` and ``body_nconsts``. ``while_lin`` adds the tangent masks
    ``nz_c`` (body constants with a tangent) and ``nz_carry`` (carries with a
    tangent); ``while_transpose`` adds ``bwd_jaxpr``, one step of the reverse sweep,
    and its number of leading constants ``bwd_nconsts``. An equation keeps the fields
    that are set as its params (:meth:`params`, in this order), so a jaxpr prints each
    of them as ``name=value`` and the jit backend reads them by name.
    """

    cond_jaxpr: Jaxpr
    body_jaxpr: Jaxpr
    bwd_jaxpr: Jaxpr | None = None
    bwd_nconsts: int | None = None
    cond_nconsts: int
    body_nconsts: int
    nz_c: tuple[bool, ...] | None = None
    nz_carry: tuple[bool, ...] | None = None

    def params(self) -> dict[str, Any]:
        items = ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))
        return {k: v for k, v in items if v is not None}

    def bind(self, primitive: Primitive, *args: Any) -> list[Any]:
        return primitive.bind(*args, **self.params())

    def replace(self, **changes: Any) -> WhileParams:
        return dataclasses.replace(self, **changes)

    @property
    def carry_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.body_jaxpr.invars[self.body_nconsts :]]

    @property
    def nz(self) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
        assert self.nz_c is not None and self.nz_carry is not None
        return self.nz_c, self.nz_carry


def while_rule(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A rule of a while primitive written on :class:`WhileParams` (``fn(*args, p=p)``),
    as the rule tables call it (``rule(*args, **params)``)."""

    @functools.wraps(fn)
    def rule(*args: Any, **params: Any) -> Any:
        return fn(*args, p=WhileParams(**params))

    return rule


@while_rule
def _while_impl(*args: Any, p: WhileParams) -> list[Any]:
    cond = functools.partial(_run_args, p.cond_jaxpr)
    body = functools.partial(_run_args, p.body_jaxpr)
    return list(run_while(cond, body, p.cond_nconsts, p.body_nconsts, *args))


@while_rule
def _while_abstract(*avals: ShapedArray, p: WhileParams) -> list[ShapedArray]:
    return [v.aval for v in p.body_jaxpr.outvars]


core.impl_rules[while_p] = _while_impl
core.abstract_eval_rules[while_p] = _while_abstract


def _while_trip_count(args: Sequence[Any], p: WhileParams) -> int | None:
    """Run the loop on concrete values to count iterations (None when abstract)."""
    vals = [core.concrete_or_none(a) for a in args]
    if any(v is None for v in vals):
        return None
    n = 0

    def body(*a: Any) -> list[Any]:
        nonlocal n
        n += 1
        return _run(p.body_jaxpr, a)

    cond = functools.partial(_run_args, p.cond_jaxpr)
    scalars = [v if np.ndim(v) else v[()] for v in vals]  # type: ignore[arg-type,index]
    with _debug.muted_effects():  # the loop runs for real afterwards: print then
        run_while(cond, body, p.cond_nconsts, p.body_nconsts, *scalars)
    return n


def _while_nonzeros(body_jaxpr: Jaxpr, nz_c: Sequence[bool], nz_carry: list[bool]) -> list[bool]:
    """Which carries may have a nonzero tangent: a fixed point over the body."""
    while True:
        out = _nonzero_outputs(body_jaxpr, list(nz_c) + nz_carry)
        new = [a or b for a, b in zip(nz_carry, out)]
        if new == nz_carry:
            return nz_carry
        nz_carry = new


def _while_jvp_body(
    body_jaxpr: Jaxpr, body_nconsts: int, nz_c: Sequence[bool], nz_carry: Sequence[bool]
) -> tuple[Jaxpr, list[Any]]:
    """One step of the JVP loop: ``(bc, dbc_nz, carry, dcarry_nz) -> (carry', dcarry'_nz)``
    (``_nz``: only the entries the masks mark), and the constants its tracing hoisted."""
    t = ad.tangent_aval
    bc_avals = [v.aval for v in body_jaxpr.invars[:body_nconsts]]
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    n_dc = sum(nz_c)

    def body(*args: Any) -> list[Any]:
        c, d_c, cr, d_cr = _split(args, body_nconsts, n_dc, len(carry_avals))
        tans = _fill(d_c, nz_c, [t(a) for a in bc_avals]) + _fill(
            d_cr, nz_carry, [t(a) for a in carry_avals]
        )
        outs, t_outs = ad.jvp_flat(lambda *a: _run(body_jaxpr, a), c + cr, tans)
        return list(outs) + [
            _inst(to, t(a)) for to, a, m in zip(t_outs, carry_avals, nz_carry) if m
        ]

    avals = (
        bc_avals
        + [t(a) for a, m in zip(bc_avals, nz_c) if m]
        + carry_avals
        + [t(a) for a, m in zip(carry_avals, nz_carry) if m]
    )
    return _trace(body, avals, "while_loop (jvp of the body)")


def _while_jvp_cond(
    cond_jaxpr: Jaxpr,
    cond_nconsts: int,
    carry_avals: Sequence[ShapedArray],
    nz_carry: Sequence[bool],
) -> tuple[Jaxpr, list[Any]]:
    """The JVP loop's condition ``(cc, carry, dcarry_nz) -> pred``: the tangents are
    carried along but never read; and the constants its tracing hoisted."""
    ncarry = len(carry_avals)

    def cond_fn(*args: Any) -> list[Any]:
        return _run(cond_jaxpr, list(args[: cond_nconsts + ncarry]))

    c_avals = [v.aval for v in cond_jaxpr.invars[:cond_nconsts]]
    d_avals = [ad.tangent_aval(a) for a, m in zip(carry_avals, nz_carry) if m]
    return _trace(cond_fn, c_avals + list(carry_avals) + d_avals, "while_loop (cond)")


@while_rule
def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, p: WhileParams) -> Any:
    cc, bc, carry = _split(primals, p.cond_nconsts, p.body_nconsts)
    _, dbc, dcarry = _split(tangents, p.cond_nconsts, p.body_nconsts)
    nz_c = [type(t) is not Zero for t in dbc]
    nz_carry = _while_nonzeros(p.body_jaxpr, nz_c, [type(t) is not Zero for t in dcarry])
    t = ad.tangent_aval
    carry_avals = p.carry_avals
    new_body, b_hoisted = _while_jvp_body(p.body_jaxpr, p.body_nconsts, nz_c, nz_carry)
    new_cond, c_hoisted = _while_jvp_cond(p.cond_jaxpr, p.cond_nconsts, carry_avals, nz_carry)
    dcarry_in = [_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz_carry) if m]
    jp = WhileParams(
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(c_hoisted) + len(cc),
        body_nconsts=len(b_hoisted) + len(bc) + sum(nz_c),
    )
    dbc_nz = [d for d, m in zip(dbc, nz_c) if m]
    outs = jp.bind(while_p, *c_hoisted, *cc, *b_hoisted, *bc, *dbc_nz, *carry, *dcarry_in)
    primal, d_out = outs[: len(carry)], outs[len(carry) :]
    return primal, _fill(d_out, nz_carry, [t(a) for a in carry_avals])


def _batch_while_parts(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    p: WhileParams,
    force_bc: Sequence[bool] = (),
    size: int | None = None,
) -> tuple[list[Any], list[Any], list[Any], WhileParams, int]:
    """The loop ``p`` over a batch, as an unbatched loop: ``(cond_ops, body_ops, carry,
    params, n_extra)``.

    Everything batched moves to axis 0 and the carry is batched throughout. The new
    condition is "any lane still runs"; the new body steps the running lanes and keeps
    the others (a select), so one loop runs until every lane is done. ``body_ops`` is
    ``n_extra`` new leading constants followed by the old body constants; constants
    marked in ``force_bc`` are batched even when they were not (their per-lane
    cotangents differ). ``size``: the batch size, when only other operands (tangents,
    cotangents) are batched. The new params keep the fields of ``p`` other than the
    loop's."""
    size = batching.batch_size(vals, bdims) if size is None else size
    cc, bc, carry = _split(vals, p.cond_nconsts, p.body_nconsts)
    dcc, dbc, dcarry = _split(bdims, p.cond_nconsts, p.body_nconsts)
    force = list(force_bc) or [False] * len(bc)
    cc = [c if d is None else batching.moveaxis(c, d, 0) for c, d in zip(cc, dcc)]
    bc = [
        batching.bdim_at(c, d, size, 0) if f else c if d is None else batching.moveaxis(c, d, 0)
        for c, d, f in zip(bc, dbc, force)
    ]
    carry = [batching.bdim_at(c, d, size, 0) for c, d in zip(carry, dcarry)]
    dcc0 = [None if d is None else 0 for d in dcc]
    dbc0 = [None if d is None and not f else 0 for d, f in zip(dbc, force)]
    cond_jaxpr, body_jaxpr = p.cond_jaxpr, p.body_jaxpr

    def preds(c_consts: Sequence[Any], cr: Sequence[Any]) -> Any:
        outs, dims = batching.vmap_flat(
            lambda *a: _run(cond_jaxpr, a),
            size,
            list(c_consts) + list(cr),
            dcc0 + [0] * len(cr),
            indexed=True,
        )
        return batching.bdim_at(outs[0], dims[0], size, 0)

    def cond_fn(*args: Any) -> list[Any]:
        c, cr = args[: len(cc)], args[len(cc) :]
        pred = preds(c, cr)
        # any(pred); ``> 0``, not a cast: over an empty batch the max is int32's minimum
        # (a cast made it True, and the loop never ended)
        return [gt(reduce_max(convert_element_type(pred, np.int32), (0,)), np.int32(0))]

    def body_fn(*args: Any) -> list[Any]:
        c, b, cr = _split(args, len(cc), len(bc))
        active = preds(c, cr)
        outs, dims = batching.vmap_flat(
            lambda *a: _run(body_jaxpr, a), size, b + cr, dbc0 + [0] * len(cr), indexed=True
        )
        result = []
        for o, d, old in zip(outs, dims, cr):
            shape = core.get_aval(old).shape
            mask = broadcast_in_dim(active, shape, (0,)) if len(shape) > 1 else active
            result.append(select_n(mask, old, batching.bdim_at(o, d, size, 0)))
        return result

    c_avals = [core.get_aval(c) for c in cc]
    carry_avals = [core.get_aval(c) for c in carry]
    new_cond, c_h = _trace(cond_fn, c_avals + carry_avals, "while_loop (vmap cond)")
    new_body, b_h = _trace(
        body_fn, c_avals + [core.get_aval(b) for b in bc] + carry_avals, "while_loop (vmap body)"
    )
    cond_ops, body_ops = [*c_h, *cc], [*b_h, *cc, *bc]
    new_p = p.replace(
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(cond_ops),
        body_nconsts=len(body_ops),
    )
    return cond_ops, body_ops, carry, new_p, len(b_h) + len(cc)


@while_rule
def _while_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, p: WhileParams
) -> tuple[list[Any], list[Any]]:
    kept = _while_batch_replicated(vals, bdims, p)
    if kept is not None:
        return kept
    cond_ops, body_ops, carry, new_p, _ = _batch_while_parts(vals, bdims, p)
    outs = new_p.bind(while_p, *cond_ops, *body_ops, *carry)
    return outs, [0] * len(outs)


def _while_batch_replicated(
    vals: Sequence[Any], bdims: Sequence[int | None], p: WhileParams
) -> tuple[list[Any], list[Any]] | None:
    """Over a ``shard_map(check_vma=True)`` mesh axis, the loop with the carries that
    stay the same on every shard left unbatched (JAX's types: a carry made replicated
    by ``psum`` stays so), when the predicate is the same on every shard too; None
    otherwise (the general rule batches every carry)."""
    size = batching.batch_size(vals, bdims)
    name = _vma_axis_name(size)
    if name is None:
        return None
    cc, bc, carry = _split(vals, p.cond_nconsts, p.body_nconsts)
    dcc, dbc, dcarry = _split(bdims, p.cond_nconsts, p.body_nconsts)
    on = [d is not None for d in dcarry]
    while True:
        if _dependent_outputs(p.cond_jaxpr, [d is not None for d in dcc] + on, name)[0]:
            return None
        out = _dependent_outputs(p.body_jaxpr, [d is not None for d in dbc] + on, name)
        new = [a or b for a, b in zip(on, out)]
        if new == on:
            break
        on = new
    if all(on):
        return None

    def at0(xs: Sequence[Any], ds: Sequence[int | None]) -> list[Any]:
        return [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(xs, ds)]

    cc, bc = at0(cc, dcc), at0(bc, dbc)
    carry = [batching.bdim_at(c, d, size, 0) if m else c for c, d, m in zip(carry, dcarry, on)]
    dcc0, dbc0 = [None if d is None else 0 for d in dcc], [None if d is None else 0 for d in dbc]
    dcarry0 = [0 if m else None for m in on]

    def cond_fn(*args: Any) -> list[Any]:
        outs, dims = batching.vmap_flat(
            lambda *a: _run(p.cond_jaxpr, a), size, list(args), dcc0 + dcarry0, indexed=True
        )
        if dims[0] is not None:
            raise _Varies
        return outs

    def body_fn(*args: Any) -> list[Any]:
        outs, dims = batching.vmap_flat(
            lambda *a: _run(p.body_jaxpr, a), size, list(args), dbc0 + dcarry0, indexed=True
        )
        if any(d is not None and not m for d, m in zip(dims, on)):
            raise _Varies
        return [batching.bdim_at(o, d, size, 0) if m else o for o, d, m in zip(outs, dims, on)]

    carry_avals = [core.get_aval(c) for c in carry]
    try:
        new_cond, c_h = _trace(
            cond_fn, [core.get_aval(c) for c in cc] + carry_avals, "while_loop (vmap cond)"
        )
        new_body, b_h = _trace(
            body_fn, [core.get_aval(b) for b in bc] + carry_avals, "while_loop (vmap body)"
        )
    except _Varies:
        return None
    new_p = p.replace(
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(c_h) + len(cc),
        body_nconsts=len(b_h) + len(bc),
    )
    return new_p.bind(while_p, *c_h, *cc, *b_h, *bc, *carry), dcarry0


ad.jvp_rules[while_p] = _while_jvp
batching.batching_rules[while_p] = _while_batch


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """``while cond_fun(val): val = body_fun(val)``; differentiable in both modes.

    Reverse mode needs no maximum trip count, eagerly and under ``jit``/``vmap``
    (there the carries are stored as the compiled loop runs), and so do
    ``jvp(grad(f))`` and ``hessian``. Reverse-over-reverse (``grad(grad(f))``) under
    ``jit``/``vmap`` needs ``fori_loop`` or ``scan``.

    >>> from functrace import lax
    >>> lax.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, 1.0)
    Array(16.)
    """
    init_paths, tree = tree_flatten_with_path(init_val)
    init = [x for _, x in init_paths]
    # Traced with the initial values' weak types, as in JAX (see ``scan``).
    avals = [core.get_aval(x) for x in init]
    traced_with: list[Any] = [avals, [a.weak_type for a in avals]]
    names = [keystr(p) for p, _ in init_paths]
    cname, bname = core.describe_fun(cond_fun), core.describe_fun(body_fun)

    def flat_cond(*args: Any) -> list[Any]:
        out = cond_fun(tree_unflatten(tree, args))
        a = core.get_aval(out)
        if a.shape != () or a.dtype.kind != "b":
            raise TypeError(
                f"while_loop: expected {cname} to return a scalar boolean, got {a.str_short()}."
            )
        return [out]

    def flat_body(*args: Any) -> list[Any]:
        out = body_fun(tree_unflatten(tree, args))
        leaves, t2 = tree_flatten(out)
        if t2 != tree:
            raise TypeError(
                f"while_loop: expected {bname} to return the structure of "
                f"init_val {tree}, got {t2}."
            )
        got = [core.get_aval(x) for x in leaves]
        _type_diff("while_loop", "the carry", names, traced_with[0], got, traced_with[1])
        return leaves

    def trace(avals_now: list[ShapedArray], weak_now: list[bool]) -> tuple[Jaxpr, list[Any]]:
        traced_with[:] = [avals_now, weak_now]
        return _trace(flat_body, avals_now, f"while_loop body {bname}", init)

    # The predicate first, as JAX traces them: checkify's error codes follow the order
    # of tracing (a failed check in cond_fun is the first error, as in JAX). It is traced
    # again only if the body promoted a weakly typed carry.
    first = list(avals)
    cj, cconsts = _trace(flat_cond, first, f"while_loop cond {cname}", init)
    (bj, bconsts), avals = _trace_carry(trace, avals, traced_with[1])
    if any(a is not b for a, b in zip(avals, first)):
        cj, cconsts = _trace(flat_cond, avals, f"while_loop cond {cname}", init)
    ops = [_cast_to(x, a) for x, a in zip(init, avals)]
    p = WhileParams(
        cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(cconsts), body_nconsts=len(bconsts)
    )
    return tree_unflatten(tree, p.bind(while_p, *cconsts, *bconsts, *ops))


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With Python-int bounds this is a ``scan`` of fixed length (differentiable in both
    modes); with traced bounds, a ``while_loop``. ``unroll`` is ``scan``'s (checked,
    no effect on the results); as in JAX, a value other than None, False or 1 needs
    bounds known while tracing (a ValueError otherwise).
    """
    if unroll is not None:
        check_unroll("fori_loop", unroll)
    _check_bound_types(lower, upper)
    lo, hi = core.concrete_or_none(lower), core.concrete_or_none(upper)
    static = (
        lo is not None
        and hi is not None
        and not isinstance(lower, Tracer)
        and not isinstance(upper, Tracer)
    )
    if static:
        lo_i, hi_i = int(lo), int(hi)  # type: ignore[arg-type]
        # As in JAX, the index of a loop whose bounds are known while tracing is a
        # weakly typed int64 (a Python int), whatever the bounds' dtype: ``c + i`` keeps
        # the carry's dtype. Bounds beyond int64 (uint64) keep their own dtype.
        first: Any = lo_i
        if not (core.INT64_MIN <= lo_i and hi_i <= core.INT64_MAX):
            dtype = np.result_type(np.asarray(lower).dtype, np.asarray(upper).dtype)
            first = dtype.type(lo_i)

        def step(carry: Any, _: Any) -> Any:
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        (_, val), _ = scan(
            step,
            (first, init_val),
            None,
            length=max(hi_i - lo_i, 0),
            unroll=False if unroll is None else unroll,
        )
        return val
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            f"fori_loop: expected unroll None, False or 1 for loop bounds known only at "
            f"run time, got unroll={unroll!r}: unrolling needs bounds known while tracing "
            f"(Python ints or concrete arrays), as in JAX."
        )

    def cond(carry: Any) -> Any:
        return carry[0] < carry[1]

    def body(carry: Any) -> Any:
        i, u, val = carry
        return i + 1, u, body_fun(i, val)

    # The bounds' common dtype, Python ints weak (JAX's rule: ``fori_loop(0, n, ...)``
    # with an int32 ``n`` counts in int32); the index is weak when both bounds are.
    dt, weak = dtypes.promote(*[_index_type(b) for b in (lower, upper)])
    _, _, val = while_loop(
        cond, body, (_as_index(lower, dt, weak), _as_index(upper, dt, weak), init_val)
    )
    return val


def _check_bound_types(lower: Any, upper: Any) -> None:
    """JAX's rule: the bounds have one dtype, except that a weakly typed (Python) int
    takes the other bound's signed integer type; anything else is a TypeError (a float
    bound beside an int one would otherwise be truncated)."""
    (lt, lw), (ut, uw) = _index_type(lower), _index_type(upper)
    if lt == ut or (lt.kind == "i" and ut.kind == "i" and lw != uw):
        return
    raise TypeError(
        f"fori_loop: expected lower and upper bounds of one type (a Python int takes the "
        f"other bound's signed integer type), got {lt.name} and {ut.name}."
    )


def _index_type(x: Any) -> tuple[np.dtype, bool]:
    if isinstance(x, Tracer):
        return x.aval.dtype, x.aval.weak_type
    if core.is_python_scalar(x):
        a = core.get_aval(x)
        return a.dtype, a.weak_type
    return np.asarray(x).dtype, False


def _as_index(x: Any, dt: np.dtype, weak: bool) -> Any:
    """A loop bound of ``fori_loop`` as a scalar of the bounds' common dtype (weakly
    typed when both bounds are)."""
    if isinstance(x, Tracer):
        return convert_element_type(x, dt, weak)
    if weak:
        return x  # a Python int: weakly typed int64
    return np.asarray(x).astype(dt)
