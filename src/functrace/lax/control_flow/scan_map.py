"""``scan`` (and ``map``): a loop over the leading axis of its inputs, with a carry.

Reverse mode splits the loop in two: a forward scan that computes the primal values
and stacks the *residuals* each iteration's tangent computation needs, and a linear
scan over the tangents that reads them; the linear scan transposes into a scan that
runs the other way.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.ir import Jaxpr, eval_jaxpr
from functrace.lax.control_flow.common import (
    _cast_to,
    _dependent_outputs,
    _fill,
    _inst,
    _nonzero_outputs,
    _run,
    _run_args,
    _split,
    _stack_aval,
    _strip_batch,
    _trace,
    _trace_carry,
    _type_diff,
    _Varies,
    _zeros,
    run_scan,
)
from functrace.lax.elementwise import add
from functrace.lax.shapes import concatenate, reshape
from functrace.lax.shapes import slice as lax_slice
from functrace.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)

# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True)


def _scan_impl(
    *args: Any,
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> list[Any]:
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    body = functools.partial(_run_args, jaxpr)
    return list(run_scan(body, num_consts, num_carry, length, reverse, y_avals, *args))


def _scan_abstract(
    *avals: ShapedArray,
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> list[ShapedArray]:
    _, carry, xs = _split(avals, num_consts, num_carry)
    body_in = [v.aval for v in jaxpr.invars]
    for a, b in zip(carry + [_strip_batch(x) for x in xs], body_in[num_consts:]):
        if not a.same_type(b):
            raise TypeError(f"scan: expected operand of type {b.str_short()}, got {a.str_short()}.")
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ValueError(
                f"scan: expected scanned inputs with leading axis {length}, got shape {x.shape}."
            )
    outs = [v.aval for v in jaxpr.outvars]
    return outs[:num_carry] + [_stack_aval(a, length) for a in outs[num_carry:]]


core.impl_rules[scan_p] = _scan_impl
core.abstract_eval_rules[scan_p] = _scan_abstract


def _bind_scan(
    consts: Sequence[Any],
    carry: Sequence[Any],
    xs: Sequence[Any],
    jaxpr: Jaxpr,
    length: int,
    reverse: bool,
    linear: Sequence[bool] | None = None,
) -> list[Any]:
    n = len(consts) + len(carry) + len(xs)
    lin = tuple(linear) if linear is not None else (False,) * n
    return scan_p.bind(
        *consts,
        *carry,
        *xs,
        jaxpr=jaxpr,
        num_consts=len(consts),
        num_carry=len(carry),
        length=int(length),
        reverse=bool(reverse),
        linear=lin,
    )


def _scan_nonzeros(
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    nz_consts: list[bool],
    nz_carry: list[bool],
    nz_xs: list[bool],
) -> tuple[list[bool], list[bool]]:
    """Fixed point: carries whose tangent can become nonzero; and the ys' mask."""
    while True:
        out = _nonzero_outputs(jaxpr, nz_consts + nz_carry + nz_xs)
        new = [a or b for a, b in zip(nz_carry, out[:num_carry])]
        if new == nz_carry:
            return nz_carry, out[num_carry:]
        nz_carry = new


def _scan_masks(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
) -> tuple[tuple[list[Any], ...], tuple[list[Any], ...], tuple[list[bool], ...]]:
    """The operands and their tangents split into consts, carries and xs; and the
    masks of nonzero tangents ``(nz_c, nz_carry, nz_x, nz_y)``."""
    consts, carry, xs = _split(primals, num_consts, num_carry)
    dc, dcarry, dxs = _split(tangents, num_consts, num_carry)
    nz_c = [type(t) is not Zero for t in dc]
    nz_x = [type(t) is not Zero for t in dxs]
    nz_carry, nz_y = _scan_nonzeros(
        jaxpr, num_consts, num_carry, nz_c, [type(t) is not Zero for t in dcarry], nz_x
    )
    return (consts, carry, xs), (dc, dcarry, dxs), (nz_c, nz_carry, nz_x, nz_y)


def _scan_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> tuple[list[Any], list[Any]]:
    (consts, carry, xs), (dc, dcarry, dxs), (nz_c, nz_carry, nz_x, nz_y) = _scan_masks(
        primals, tangents, jaxpr, num_consts, num_carry
    )
    c_avals = [core.get_aval(c) for c in consts]
    carry_avals = [v.aval for v in jaxpr.invars[num_consts : num_consts + num_carry]]
    x_avals = [v.aval for v in jaxpr.invars[num_consts + num_carry :]]
    t = ad.tangent_aval
    n_dc, n_dcarry = sum(nz_c), sum(nz_carry)

    def jvp_body(*args: Any) -> list[Any]:
        c, dc_nz, cr, dcr_nz, x, dx_nz = _split(
            args, len(consts), n_dc, num_carry, n_dcarry, len(xs)
        )
        tans = (
            _fill(dc_nz, nz_c, [t(a) for a in c_avals])
            + _fill(dcr_nz, nz_carry, [t(a) for a in carry_avals])
            + _fill(dx_nz, nz_x, [t(a) for a in x_avals])
        )
        outs, t_outs = ad.jvp_flat(lambda *a: _run(jaxpr, a), c + cr + x, tans)
        out_avals = [v.aval for v in jaxpr.outvars]
        dcarry_out = [
            _inst(to, t(a)) for to, a, nz in zip(t_outs[:num_carry], out_avals, nz_carry) if nz
        ]
        dys = [
            _inst(to, t(a))
            for to, a, nz in zip(t_outs[num_carry:], out_avals[num_carry:], nz_y)
            if nz
        ]
        return outs[:num_carry] + dcarry_out + outs[num_carry:] + dys

    avals = (
        c_avals
        + [t(a) for a, nz in zip(c_avals, nz_c) if nz]
        + carry_avals
        + [t(a) for a, nz in zip(carry_avals, nz_carry) if nz]
        + x_avals
        + [t(a) for a, nz in zip(x_avals, nz_x) if nz]
    )
    body, hoisted = _trace(jvp_body, avals, "scan (jvp of the body)")
    dcarry_in = [_inst(d, t(a)) for d, a, nz in zip(dcarry, carry_avals, nz_carry) if nz]
    outs = _bind_scan(
        [*hoisted, *consts, *[d for d, nz in zip(dc, nz_c) if nz]],
        [*carry, *dcarry_in],
        [*xs, *[d for d, nz in zip(dxs, nz_x) if nz]],
        body,
        length,
        reverse,
    )
    carry_out, dcarry_out, ys, dys = _split(outs, num_carry, n_dcarry, len(nz_y))
    out_avals = _scan_abstract(
        *[core.get_aval(p) for p in primals],
        jaxpr=jaxpr,
        num_consts=num_consts,
        num_carry=num_carry,
        length=length,
        reverse=reverse,
        linear=linear,
    )
    t_carry = _fill(dcarry_out, nz_carry, [t(a) for a in out_avals[:num_carry]])
    t_ys = _fill(dys, nz_y, [t(a) for a in out_avals[num_carry:]])
    return carry_out + ys, t_carry + t_ys


def _scan_linearize(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    """Reverse mode: a forward scan stacking residuals, and a linear scan over tangents
    (``params``: the scan's)."""
    jaxpr, length, reverse = params["jaxpr"], params["length"], params["reverse"]
    (consts, carry, xs), (dc, dcarry, dxs), (nz_c, nz_carry, nz_x, nz_y) = _scan_masks(
        primals, tangents, jaxpr, params["num_consts"], params["num_carry"]
    )
    nc, ncarry = len(consts), len(carry)
    c_avals = [v.aval for v in jaxpr.invars[:nc]]
    carry_avals = [v.aval for v in jaxpr.invars[nc : nc + ncarry]]
    x_avals = [v.aval for v in jaxpr.invars[nc + ncarry :]]
    box: dict[str, Any] = {}

    def fwd_body(*args: Any) -> list[Any]:
        outs, lin, _ = ad.linearize_flat(
            lambda *a: _run(jaxpr, a), args, nz_c + nz_carry + nz_x, origin="scan (linearize)"
        )
        const_in = {id(a): i for i, a in enumerate(args[:nc])}
        kinds: list[tuple[str, Any]] = []
        stacked: list[Any] = []
        for r in lin.consts:
            if id(r) in const_in:
                kinds.append(("const", const_in[id(r)]))
            elif isinstance(r, Tracer):
                kinds.append(("stack", len(stacked)))
                stacked.append(r)
            else:
                kinds.append(("raw", r))
        box["lin"], box["kinds"] = lin, kinds
        return list(outs) + stacked

    fwd, fwd_hoisted = _trace(
        fwd_body, c_avals + carry_avals + x_avals, "scan (forward pass of reverse mode)"
    )
    lin, kinds = box["lin"], box["kinds"]
    outs = _bind_scan([*fwd_hoisted, *consts], carry, xs, fwd, length, reverse)
    n_y = len(jaxpr.outvars) - ncarry
    carry_out, ys, res_stacked = _split(outs, ncarry, n_y)
    raw = [k[1] for k in kinds if k[0] == "raw"]
    res_consts = [consts[k[1]] for k in kinds if k[0] == "const"]
    res_x_avals = [_strip_batch(core.get_aval(r)) for r in res_stacked]
    t = ad.tangent_aval
    dc_nz = [d for d, m in zip(dc, nz_c) if m]
    dcarry_nz = [_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz_carry) if m]
    dxs_nz = [d for d, m in zip(dxs, nz_x) if m]
    out_avals = [v.aval for v in jaxpr.outvars]

    def lin_body(*args: Any) -> list[Any]:
        r_raw, r_const, d_c, d_carry, r_x, d_x = _split(
            args, len(raw), len(res_consts), len(dc_nz), len(dcarry_nz), len(res_stacked)
        )
        it_raw, it_const, it_x = iter(r_raw), iter(r_const), iter(r_x)
        residuals = [
            next(it_raw) if k == "raw" else next(it_const) if k == "const" else next(it_x)
            for k, _ in kinds
        ]
        tans = (
            _fill(d_c, nz_c, [t(a) for a in c_avals])
            + _fill(d_carry, nz_carry, [t(a) for a in carry_avals])
            + _fill(d_x, nz_x, [t(a) for a in x_avals])
        )
        lin_in = [tt for tt, m in zip(tans, lin.in_mask) if m]
        live = iter(
            eval_jaxpr(
                lin.jaxpr,
                residuals,
                [_inst(tt, tt.aval) if type(tt) is Zero else tt for tt in lin_in],
            )
        )
        t_out = [Zero(t(a)) if z else next(live) for a, z in zip(out_avals, lin.out_zero)]
        d_carry_out = [
            _inst(to, t(a)) for to, a, m in zip(t_out[:ncarry], out_avals, nz_carry) if m
        ]
        d_ys = [_inst(to, t(a)) for to, a, m in zip(t_out[ncarry:], out_avals[ncarry:], nz_y) if m]
        return d_carry_out + d_ys

    lin_avals = (
        [core.get_aval(r) for r in raw]
        + [core.get_aval(r) for r in res_consts]
        + [t(a) for a, m in zip(c_avals, nz_c) if m]
        + [t(a) for a, m in zip(carry_avals, nz_carry) if m]
        + res_x_avals
        + [t(a) for a, m in zip(x_avals, nz_x) if m]
    )
    body, hoisted = _trace(lin_body, lin_avals, "scan (linear pass of reverse mode)")
    lin_consts = [*hoisted, *raw, *res_consts, *dc_nz]
    lin_flags = (
        [False] * (len(hoisted) + len(raw) + len(res_consts))
        + [True] * len(dc_nz)
        + [True] * len(dcarry_nz)
        + [False] * len(res_stacked)
        + [True] * len(dxs_nz)
    )
    t_outs = _bind_scan(
        lin_consts, dcarry_nz, [*res_stacked, *dxs_nz], body, length, reverse, lin_flags
    )
    d_carry_out, d_ys = t_outs[: len(dcarry_nz)], t_outs[len(dcarry_nz) :]
    ys_avals = [_stack_aval(a, length) for a in out_avals[ncarry:]]
    return (
        carry_out + ys,
        _fill(d_carry_out, nz_carry, [t(a) for a in out_avals[:ncarry]])
        + _fill(d_ys, nz_y, [t(a) for a in ys_avals]),
    )


def _scan_transpose(
    cts: Sequence[Any],
    *args: Any,
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> list[Any]:
    if not all(linear[num_consts : num_consts + num_carry]):
        raise ValueError(
            "scan transpose: expected a linear scan (from reverse mode), got a "
            "scan with non-linear carries."
        )
    consts, carry, xs = _split(args, num_consts, num_carry)
    lin_c = list(linear[:num_consts])
    lin_x = list(linear[num_consts + num_carry :])
    for v, is_lin in zip(consts + xs, lin_c + lin_x):
        if not is_lin and ad.is_undefined_primal(v):
            raise ValueError("scan transpose: a non-linear operand is unknown.")
    t = ad.tangent_aval
    carry_avals = [v.aval for v in jaxpr.invars[num_consts : num_consts + num_carry]]
    out_avals = [v.aval for v in jaxpr.outvars]
    ct_carry = [_inst(c, t(a)) for c, a in zip(cts[:num_carry], carry_avals)]
    y_avals = [_stack_aval(a, length) for a in out_avals[num_carry:]]
    ct_ys = [_inst(c, t(a)) for c, a in zip(cts[num_carry:], y_avals)]
    known_c = [c for c, m in zip(consts, lin_c) if not m]
    known_x = [x for x, m in zip(xs, lin_x) if not m]
    c_vars, carry_vars, x_vars = _split(jaxpr.invars, num_consts, num_carry)
    lin_c_avals = [t(v.aval) for v, m in zip(c_vars, lin_c) if m]
    view = Jaxpr(
        tuple(v for v, m in zip(c_vars, lin_c) if not m)
        + tuple(v for v, m in zip(x_vars, lin_x) if not m),
        tuple(v for v, m in zip(c_vars, lin_c) if m)
        + tuple(carry_vars)
        + tuple(v for v, m in zip(x_vars, lin_x) if m),
        jaxpr.eqns,
        jaxpr.outvars,
    )
    n_lin_c = len(lin_c_avals)

    def body_t(*a: Any) -> list[Any]:
        kc, ctc, acc, kx, cty = _split(a, len(known_c), num_carry, n_lin_c, len(known_x))
        cts_in = ad.backward_pass(view, kc + kx, ctc + cty, forward_known=True)
        ct_lc, ct_carry_prev, ct_lx = _split(cts_in, n_lin_c, num_carry)
        ct_lc = [_inst(c, v.aval) for c, v in zip(ct_lc, view.invars[:n_lin_c])]
        ct_carry_prev = [_inst(c, ca) for c, ca in zip(ct_carry_prev, carry_avals)]
        ct_lx = [_inst(c, v.aval) for c, v in zip(ct_lx, view.invars[n_lin_c + num_carry :])]
        return ct_carry_prev + [add(s, c) for s, c in zip(acc, ct_lc)] + ct_lx

    avals = (
        [core.get_aval(c) for c in known_c]
        + [t(a) for a in carry_avals]
        + lin_c_avals
        + [_strip_batch(core.get_aval(x)) for x in known_x]
        + [t(a) for a in out_avals[num_carry:]]
    )
    body, hoisted = _trace(body_t, avals, "scan (transpose)")
    acc0 = [_zeros(a) for a in lin_c_avals]
    lin_t = (
        [False] * (len(hoisted) + len(known_c))
        + [True] * (num_carry + n_lin_c)
        + [False] * len(known_x)
        + [True] * len(ct_ys)
    )
    outs = _bind_scan(
        [*hoisted, *known_c],
        [*ct_carry, *acc0],
        [*known_x, *ct_ys],
        body,
        length,
        not reverse,
        lin_t,
    )
    ct_init, ct_lc, ct_lx = _split(outs, num_carry, n_lin_c)
    it_c, it_x = iter(ct_lc), iter(ct_lx)
    return (
        [next(it_c) if m else None for m in lin_c]
        + ct_init
        + [next(it_x) if m else None for m in lin_x]
    )


ad.jvp_rules[scan_p] = _scan_jvp
ad.linearize_rules[scan_p] = _scan_linearize
ad.transpose_rules[scan_p] = _scan_transpose
ad.linear_primitives.add(scan_p)


def _scan_batch(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    *,
    jaxpr: Jaxpr,
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> tuple[list[Any], list[int | None]]:
    size = batching.batch_size(vals, bdims)
    consts, carry, xs = _split(vals, num_consts, num_carry)
    bc, bcarry, bx = _split(bdims, num_consts, num_carry)
    # carries are batched (at 0) if their init or the body makes them batched: fixed point;
    # an output of any dtype is batched if it depends on a batched input
    b_carry = [b is not None for b in bcarry]
    name = batching.rule_axis_name(size)
    while True:
        out = _dependent_outputs(
            jaxpr, [b is not None for b in bc] + b_carry + [b is not None for b in bx], name
        )
        new = [a or b for a, b in zip(b_carry, out[:num_carry])]
        if new == b_carry:
            break
        b_carry = new
    b_y = out[num_carry:]
    consts = [c if b is None else batching.moveaxis(c, b, 0) for c, b in zip(consts, bc)]
    xs = [x if b is None else batching.moveaxis(x, b, 1) for x, b in zip(xs, bx)]

    def run(b_carry: list[bool], b_y: list[bool]) -> tuple[list[Any], list[int | None]]:
        return _scan_batched(
            consts, carry, xs, bc, bcarry, bx, b_carry, b_y, size, jaxpr,
            length=length, reverse=reverse, linear=linear,
        )  # fmt: skip

    try:
        return run(b_carry, b_y)
    except _Varies:  # batch every carry and output
        return run([True] * num_carry, [True] * len(b_y))


def _scan_batched(
    consts: list[Any],
    carry: list[Any],
    xs: list[Any],
    bc: list[int | None],
    bcarry: list[int | None],
    bx: list[int | None],
    b_carry: list[bool],
    b_y: list[bool],
    size: int,
    jaxpr: Jaxpr,
    *,
    length: int,
    reverse: bool,
    linear: tuple[bool, ...],
) -> tuple[list[Any], list[int | None]]:
    """The scan over a batch with the carries ``b_carry`` and outputs ``b_y`` batched
    (at 0 and 1), the consts and xs already moved to axes 0 and 1."""
    carry = [batching.bdim_at(c, b, size, 0) if m else c for c, b, m in zip(carry, bcarry, b_carry)]
    in_dims = (
        [None if b is None else 0 for b in bc]
        + [0 if m else None for m in b_carry]
        + [None if b is None else 0 for b in bx]
    )

    def body(*args: Any) -> list[Any]:
        outs, out_dims = batching.vmap_flat(
            lambda *a: _run(jaxpr, a), size, args, in_dims, indexed=True
        )
        if any(d is not None and not m for d, m in zip(out_dims, b_carry + b_y)):
            raise _Varies  # (the dependency analysis is meant to see every such output)
        return [
            batching.bdim_at(o, d, size, 0) if m else o
            for o, d, m in zip(outs, out_dims, b_carry + b_y)
        ]

    avals = (
        [core.get_aval(c) for c in consts]
        + [core.get_aval(c) for c in carry]
        + [_strip_batch(core.get_aval(x)) for x in xs]
    )
    new_body, hoisted = _trace(body, avals, "scan (vmap of the body)")
    outs = _bind_scan(
        [*hoisted, *consts],
        carry,
        xs,
        new_body,
        length,
        reverse,
        [False] * len(hoisted) + list(linear),
    )
    return outs, [0 if m else None for m in b_carry] + [1 if m else None for m in b_y]


batching.batching_rules[scan_p] = _scan_batch


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the stacked ``y``s (JAX's ``lax.scan``).

    ``unroll`` (a bool or a non-negative int, as in JAX) is checked and has no other
    effect: the loop is one ``scan`` primitive whatever its value, compiled by ``jit``
    to a native loop (the compiler unrolls), so results are the same for every value.

    >>> import numpy as np
    >>> from functrace import lax
    >>> lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0))
    (Array(6.), Array([0., 0., 1., 3.]))
    """
    check_unroll("scan", unroll)
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {int(core.get_aval(x).shape[0]) if core.get_aval(x).shape else -1 for x in x_leaves}
    if -1 in lengths:
        raise ValueError("scan: expected scanned inputs xs with a leading axis, got a 0-d leaf.")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        if not lengths:
            raise ValueError("scan: expected xs with a leading axis or length=..., got neither.")
        raise ValueError(
            f"scan: expected one length for all xs leaves and `length`, got {sorted(lengths)}."
        )
    n = lengths.pop()
    init_paths, init_tree = tree_flatten_with_path(init)
    init_leaves = [x for _, x in init_paths]
    # Traced with the initial values' weak types, as in JAX: ``0.0 + float32`` in the
    # body is float32, and the carry is then promoted to it (``_trace_carry``).
    carry_avals = [core.get_aval(x) for x in init_leaves]
    weak = [a.weak_type for a in carry_avals]
    x_avals = [_strip_batch(core.get_aval(x)) for x in x_leaves]
    y_tree_box: list[Any] = []
    name = core.describe_fun(f)
    traced_with: list[Any] = [carry_avals, weak]

    def flat_body(*args: Any) -> list[Any]:
        carry = tree_unflatten(init_tree, args[: len(init_leaves)])
        x = tree_unflatten(x_tree, args[len(init_leaves) :])
        res = f(carry, x)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError(
                f"scan: expected {name} to return a pair (carry, y), got "
                f"{core.describe_value(res)}."
            )
        new_carry, y = res
        c_leaves, c_tree = tree_flatten(new_carry)
        if c_tree != init_tree:
            raise TypeError(
                f"scan: expected {name} to return a carry with the structure of "
                f"init {init_tree}, got {c_tree}."
            )
        _type_diff(
            "scan",
            "the carry",
            [keystr(p) for p, _ in init_paths],
            traced_with[0],
            [core.get_aval(c) for c in c_leaves],
            traced_with[1],
        )
        y_leaves, y_tree = tree_flatten(y)
        y_tree_box.append(y_tree)
        return c_leaves + y_leaves

    def trace(avals: list[ShapedArray], weak_now: list[bool]) -> tuple[Jaxpr, list[Any]]:
        traced_with[:] = [avals, weak_now]
        return _trace(flat_body, avals + x_avals, f"scan of {name}", [*init_leaves, *x_leaves])

    (jaxpr, consts), carry_avals = _trace_carry(trace, carry_avals, weak)
    init_cast = [_cast_to(x, a) for x, a in zip(init_leaves, carry_avals)]
    outs = _bind_scan(consts, init_cast, x_leaves, jaxpr, n, reverse)
    carry_out = tree_unflatten(init_tree, outs[: len(init_leaves)])
    return carry_out, tree_unflatten(y_tree_box[-1], outs[len(init_leaves) :])


def check_unroll(fname: str, unroll: Any) -> None:
    """Check ``unroll`` of ``scan``/``fori_loop``: a bool or a non-negative int known
    while tracing (JAX's rule; ``0`` and ``True`` unroll fully there)."""
    if isinstance(unroll, bool):
        return
    if isinstance(unroll, Tracer):
        raise TypeError(
            f"{fname}: expected unroll to be a bool or a non-negative int known while "
            f"tracing, got {unroll.describe()}."
        )
    try:
        n = operator.index(unroll)
    except TypeError:
        raise TypeError(
            f"{fname}: expected unroll to be a bool or a non-negative int, got "
            f"{type(unroll).__name__} {unroll!r}."
        ) from None
    if n < 0:
        raise ValueError(f"{fname}: expected unroll to be a bool or a non-negative int, got {n}.")


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``stack([f(x) for x in xs])`` as one loop (``scan`` without a carry).

    With ``batch_size`` (JAX's semantics), ``f`` is ``vmap``ped over chunks of
    ``batch_size`` examples, one chunk per loop iteration, and the remaining
    ``len(xs) % batch_size`` examples go through one more ``vmap`` after the loop (so
    ``f`` is traced twice when there is a remainder); ``batch_size=0`` is one ``vmap``
    over all of ``xs``. The result equals ``map(f, xs)``.

    >>> import numpy as np
    >>> from functrace import lax
    >>> lax.map(lambda x: x * 2, np.arange(5.0), batch_size=2)
    Array([0., 2., 4., 6., 8.])
    """
    if batch_size is None:
        _, ys = scan(lambda c, x: ((), f(x)), (), xs)
        return ys
    if isinstance(batch_size, Tracer):
        raise TypeError(
            f"map: expected batch_size to be None or a non-negative int known while "
            f"tracing, got {batch_size.describe()}."
        )
    if isinstance(batch_size, bool):
        raise TypeError(
            f"map: expected batch_size to be None or a non-negative int, got {batch_size!r}."
        )
    try:
        bs = operator.index(batch_size)
    except TypeError:
        raise TypeError(
            f"map: expected batch_size to be None or a non-negative int, got "
            f"{type(batch_size).__name__} {batch_size!r}."
        ) from None
    if bs < 0:
        raise ValueError(f"map: expected batch_size to be None or a non-negative int, got {bs}.")
    leaves, tree = tree_flatten(xs)
    if not leaves:  # nothing to map over: scan's error
        _, ys = scan(lambda c, x: ((), f(x)), (), xs)
        return ys
    shapes = [core.get_aval(x).shape for x in leaves]
    if any(not s for s in shapes):
        raise ValueError("map: expected mapped inputs xs with a leading axis, got a 0-d leaf.")
    lengths = sorted({int(s[0]) for s in shapes})
    if len(lengths) != 1:
        raise ValueError(f"map: expected one length for all xs leaves, got {lengths}.")
    n = lengths[0]
    num_batches, rem = divmod(n, bs) if bs else (0, n)
    done = num_batches * bs

    def chunks(x: Any, shape: tuple[int, ...]) -> Any:
        head = x if rem == 0 else lax_slice(x, (0,) * len(shape), (done, *shape[1:]))
        return reshape(head, (num_batches, bs, *shape[1:]))

    def flatten(y: Any) -> Any:
        shape = core.get_aval(y).shape
        return reshape(y, (shape[0] * shape[1], *shape[2:]))

    ys = None
    if num_batches:
        scan_xs = tree_unflatten(tree, [chunks(x, s) for x, s in zip(leaves, shapes)])
        _, scan_ys = scan(lambda c, x: ((), _vmap_tree(f, x, bs)), (), scan_xs)
        ys = tree_map(flatten, scan_ys)
    if rem or ys is None:
        rest = [
            x if done == 0 else lax_slice(x, (done,) + (0,) * (len(s) - 1), s)
            for x, s in zip(leaves, shapes)
        ]
        rest_ys = _vmap_tree(f, tree_unflatten(tree, rest), rem)
        ys = rest_ys if ys is None else tree_map(lambda a, b: concatenate([a, b], 0), ys, rest_ys)
    return ys


def _vmap_tree(f: Callable[[Any], Any], xs: Any, size: int) -> Any:
    """``vmap(f)(xs)`` over axis 0 of every leaf of ``xs``, outputs batched at axis 0."""
    leaves, tree = tree_flatten(xs)
    out_tree: list[Any] = []

    def flat(*a: Any) -> list[Any]:
        out_leaves, t = tree_flatten(f(tree_unflatten(tree, list(a))))
        out_tree.append(t)
        return out_leaves

    outs, dims = batching.vmap_flat(
        flat, size, leaves, [0] * len(leaves), origin="lax.map", axis_name=None
    )
    return tree_unflatten(
        out_tree[-1], [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)]
    )
