"""Structured control flow: ``cond``, ``switch``, ``scan``, ``fori_loop``, ``map``,
``while_loop``.

Each construct is a primitive whose params hold sub-jaxprs (the branches or the
loop body, traced once on the argument types). Values the traced functions close
over become leading operands (``num_consts``), so tracers of outer transforms flow
through them like any other argument.

Reverse mode (linearize + transpose) splits a loop in two: a forward loop that
computes the primal values and stacks the *residuals* each iteration's tangent
computation needs, and a linear loop over the tangents that reads them. The
linear loop transposes into a loop that runs the other way. ``while_loop`` needs no
user-given maximum trip count: with concrete inputs it runs once to learn its trip
count and is differentiated as a ``scan`` of that length; when the count is unknown
while tracing (``jit``, ``vmap``), ``while_transpose`` stores the carries as the loop
runs and then sweeps back (see the block after ``while_p``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import Jaxpr, Var, eval_jaxpr
from functrace.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

# ---------------------------------------------------------------------------
# Tracing helpers
# ---------------------------------------------------------------------------


def _trace(
    fun: Callable[..., Sequence[Any]], avals: Sequence[ShapedArray], origin: str
) -> tuple[Jaxpr, list[Any]]:
    """Trace flat ``fun`` to a jaxpr whose captured constants are leading inputs."""
    closed, _ = trace_to_jaxpr(fun, [a.update() for a in avals], origin=origin)
    j = closed.jaxpr
    return Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), list(closed.consts)


def _run(jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(jaxpr, (), list(args))


def _strip_batch(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def _stack_aval(aval: ShapedArray, n: int) -> ShapedArray:
    return ShapedArray((n, *aval.shape), aval.dtype, aval.weak_type)


def _zeros(aval: ShapedArray) -> Any:
    from functrace.lax.shapes import broadcast_in_dim

    zero = np.zeros((), aval.dtype)[()]
    return broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def _inst(t: Any, aval: ShapedArray) -> Any:
    return _zeros(aval) if type(t) is Zero else t


def _type_diff(
    fname: str,
    what: str,
    paths: Sequence[str],
    expected: Sequence[ShapedArray],
    got: Sequence[ShapedArray],
) -> None:
    for p, e, g in zip(paths, expected, got):
        if e.shape != g.shape or e.dtype != g.dtype:
            raise TypeError(
                f"{fname}: expected {what} at {p or '<root>'} of type {e.str_short()}, got "
                f"{g.str_short()}. Shapes and dtypes must match exactly: cast with "
                f".astype(...), or give the initial value the dtype the body produces."
            )


def _dependent_outputs(jaxpr: Jaxpr, dep_in: Sequence[bool]) -> list[bool]:
    """Which outputs may depend on the marked inputs (a conservative dependency analysis)."""
    live: set[Var] = {v for v, dep in zip(jaxpr.invars, dep_in) if dep}
    for eqn in jaxpr.eqns:
        if any(isinstance(x, Var) and x in live for x in eqn.inputs):
            live.update(eqn.out_binders)
    return [isinstance(v, Var) and v in live for v in jaxpr.outvars]


def _nonzero_outputs(jaxpr: Jaxpr, nz_in: Sequence[bool]) -> list[bool]:
    """Which outputs may have a nonzero tangent: integer and boolean values never do."""
    dep = _dependent_outputs(jaxpr, nz_in)
    return [d and v.aval.dtype.kind in "fc" for d, v in zip(dep, jaxpr.outvars)]


def _split(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    out, i = [], 0
    for n in sizes:
        out.append(list(xs[i : i + n]))
        i += n
    out.append(list(xs[i:]))
    return out


def _linearizing(tangents: Sequence[Any]) -> bool:
    return any(ad.is_tape_tracer(t) for t in tangents)


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
    consts, carry, xs = _split(args, num_consts, num_carry)
    ys: list[list[Any]] = []
    for i in range(length - 1, -1, -1) if reverse else range(length):
        out = _run(jaxpr, consts + carry + [x[i] for x in xs])
        carry, y = out[:num_carry], out[num_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    stacked = [
        np.stack([np.asarray(y[k]) for y in ys]) if ys else np.zeros((0, *a.shape), a.dtype)
        for k, a in enumerate(y_avals)
    ]
    return carry + [s.astype(a.dtype, copy=False) for s, a in zip(stacked, y_avals)]


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
    consts, carry, xs = _split(primals, num_consts, num_carry)
    dc, dcarry, dxs = _split(tangents, num_consts, num_carry)
    nz_c = [type(t) is not Zero for t in dc]
    nz_x = [type(t) is not Zero for t in dxs]
    nz_carry, nz_y = _scan_nonzeros(
        jaxpr, num_consts, num_carry, nz_c, [type(t) is not Zero for t in dcarry], nz_x
    )
    if _linearizing(tangents):
        return _scan_linearize(
            consts,
            carry,
            xs,
            dc,
            dcarry,
            dxs,
            nz_c,
            nz_carry,
            nz_x,
            nz_y,
            jaxpr=jaxpr,
            length=length,
            reverse=reverse,
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


def _fill(vals: Sequence[Any], mask: Sequence[bool], avals: Sequence[ShapedArray]) -> list[Any]:
    it = iter(vals)
    return [next(it) if m else Zero(a) for m, a in zip(mask, avals)]


def _scan_linearize(
    consts: list[Any],
    carry: list[Any],
    xs: list[Any],
    dc: list[Any],
    dcarry: list[Any],
    dxs: list[Any],
    nz_c: list[bool],
    nz_carry: list[bool],
    nz_x: list[bool],
    nz_y: list[bool],
    *,
    jaxpr: Jaxpr,
    length: int,
    reverse: bool,
) -> tuple[list[Any], list[Any]]:
    """Reverse mode: a forward scan stacking residuals, and a linear scan over tangents."""
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
    linear = (
        [False] * (len(hoisted) + len(raw) + len(res_consts))
        + [True] * len(dc_nz)
        + [True] * len(dcarry_nz)
        + [False] * len(res_stacked)
        + [True] * len(dxs_nz)
    )
    t_outs = _bind_scan(
        lin_consts, dcarry_nz, [*res_stacked, *dxs_nz], body, length, reverse, linear
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
        from functrace.lax.elementwise import add

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
    while True:
        out = _dependent_outputs(
            jaxpr, [b is not None for b in bc] + b_carry + [b is not None for b in bx]
        )
        new = [a or b for a, b in zip(b_carry, out[:num_carry])]
        if new == b_carry:
            break
        b_carry = new
    b_y = out[num_carry:]
    consts = [c if b is None else batching.moveaxis(c, b, 0) for c, b in zip(consts, bc)]
    carry = [batching.bdim_at(c, b, size, 0) if m else c for c, b, m in zip(carry, bcarry, b_carry)]
    xs = [x if b is None else batching.moveaxis(x, b, 1) for x, b in zip(xs, bx)]
    in_dims = (
        [None if b is None else 0 for b in bc]
        + [0 if m else None for m in b_carry]
        + [None if b is None else 0 for b in bx]
    )

    def body(*args: Any) -> list[Any]:
        outs, out_dims = batching.vmap_flat(lambda *a: _run(jaxpr, a), size, args, in_dims)
        return [
            batching.bdim_at(o, d, size, 0) if m else o
            for o, d, m in zip(outs, out_dims, b_carry + b_y)
        ]

    def aval_of(v: Any, d: int | None, per_iter: bool) -> ShapedArray:
        a = core.get_aval(v)
        if per_iter:
            a = _strip_batch(a)
        return a

    avals = (
        [aval_of(c, None, False) for c in consts]
        + [aval_of(c, None, False) for c in carry]
        + [aval_of(x, None, True) for x in xs]
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
) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the stacked ``y``s (JAX's ``lax.scan``).

    >>> import numpy as np
    >>> from functrace import lax
    >>> lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0))
    (np.float64(6.0), array([0., 0., 1., 3.]))
    """
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
    carry_avals = [core.get_aval(x).update(weak_type=False) for x in init_leaves]
    x_avals = [_strip_batch(core.get_aval(x)) for x in x_leaves]
    y_tree_box: list[Any] = []
    name = core.describe_fun(f)

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
            carry_avals,
            [core.get_aval(c) for c in c_leaves],
        )
        y_leaves, y_tree = tree_flatten(y)
        y_tree_box.append(y_tree)
        return c_leaves + y_leaves

    jaxpr, consts = _trace(flat_body, carry_avals + x_avals, f"scan of {name}")
    init_cast = [_cast_to(x, a) for x, a in zip(init_leaves, carry_avals)]
    outs = _bind_scan(consts, init_cast, x_leaves, jaxpr, n, reverse)
    carry_out = tree_unflatten(init_tree, outs[: len(init_leaves)])
    return carry_out, tree_unflatten(y_tree_box[-1], outs[len(init_leaves) :])


def _cast_to(x: Any, aval: ShapedArray) -> Any:
    from functrace.lax.elementwise import convert_element_type

    a = core.get_aval(x)
    if a.dtype != aval.dtype:
        return convert_element_type(x, aval.dtype)
    if not isinstance(x, (Tracer, np.ndarray)):
        return np.asarray(x, aval.dtype)[()]
    return x


def map(f: Callable[[Any], Any], xs: Any) -> Any:  # noqa: A001
    """``stack([f(x) for x in xs])`` as one loop (``scan`` without a carry)."""
    _, ys = scan(lambda c, x: ((), f(x)), (), xs)
    return ys


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With Python-int bounds this is a ``scan`` of fixed length (differentiable in both
    modes); with traced bounds, a ``while_loop``.
    """
    lo, hi = core.concrete_or_none(lower), core.concrete_or_none(upper)
    static = (
        lo is not None
        and hi is not None
        and not isinstance(lower, Tracer)
        and not isinstance(upper, Tracer)
    )
    if static:
        lo_i, hi_i = int(lo), int(hi)  # type: ignore[arg-type]
        dtype = np.result_type(np.asarray(lower).dtype, np.asarray(upper).dtype)

        def step(carry: Any, _: Any) -> Any:
            i, val = carry
            return (i + dtype.type(1), body_fun(i, val)), None

        (_, val), _ = scan(step, (dtype.type(lo_i), init_val), None, length=max(hi_i - lo_i, 0))
        return val

    def cond(carry: Any) -> Any:
        return carry[0] < carry[1]

    def body(carry: Any) -> Any:
        i, u, val = carry
        return i + 1, u, body_fun(i, val)

    from functrace import numpy as fnp

    lower_a, upper_a = fnp.asarray(lower), fnp.asarray(upper)
    dt = np.result_type(core.get_aval(lower_a).dtype, core.get_aval(upper_a).dtype)
    _, _, val = while_loop(cond, body, (fnp.astype(lower_a, dt), fnp.astype(upper_a, dt), init_val))
    return val


# ---------------------------------------------------------------------------
# cond and switch
# ---------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True)


def branch_index(index: Any, n: int) -> Any:
    """``index`` (any integer or bool dtype) clamped to ``[0, n - 1]``, as the int32
    branch index of ``cond_p``. The clamp runs in the index's own dtype and the cast
    comes after it: casting first would wrap an int64 index of 2**31 to -2**31 and
    pick branch 0 instead of the last one."""
    from functrace.lax.elementwise import clamp, convert_element_type

    dt = core.get_aval(index).dtype
    if dt.kind == "b":
        index, dt = convert_element_type(index, np.int32), np.dtype(np.int32)
    hi = min(n - 1, int(np.iinfo(dt).max))
    idx = clamp(np.zeros((), dt)[()], index, np.asarray(hi, dt)[()])
    return idx if dt == np.int32 else convert_element_type(idx, np.int32)


def _cond_impl(index: Any, *ops: Any, branches: tuple[Jaxpr, ...]) -> list[Any]:
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return _run(branches[i], ops)


def _cond_abstract(
    index: ShapedArray, *ops: ShapedArray, branches: tuple[Jaxpr, ...]
) -> list[ShapedArray]:
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"cond: expected a scalar integer branch index, got {index.str_short()}.")
    return [v.aval for v in branches[0].outvars]


core.impl_rules[cond_p] = _cond_impl
core.abstract_eval_rules[cond_p] = _cond_abstract


def _cond_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[Jaxpr, ...]
) -> tuple[list[Any], list[Any]]:
    index, *ops = primals
    dops = list(tangents[1:])
    nz_in = [type(t) is not Zero for t in dops]
    nz_out = [any(col) for col in zip(*[_nonzero_outputs(b, nz_in) for b in branches])]
    t = ad.tangent_aval
    op_avals = [v.aval for v in branches[0].invars]
    out_avals = [v.aval for v in branches[0].outvars]
    if _linearizing(tangents):
        return _cond_linearize(index, ops, dops, nz_in, nz_out, branches)

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
    funs: Sequence[Callable[..., list[Any]]], avals: Sequence[ShapedArray], origin: str
) -> tuple[tuple[Jaxpr, ...], list[Any]]:
    """Trace branches on the same operand types; their constants become one shared list
    of leading operands (each branch ignores the others')."""
    traced = [_trace(f, avals, f"{origin}, branch {i}") for i, f in enumerate(funs)]
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
    index: Any,
    ops: list[Any],
    dops: list[Any],
    nz_in: list[bool],
    nz_out: list[bool],
    branches: tuple[Jaxpr, ...],
) -> tuple[list[Any], list[Any]]:
    """Reverse mode: each branch computes its primal outputs and residuals (all branches'
    residual slots, zeros in the others'); a linear cond over tangents reads them."""
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


core.impl_rules[cond_lin_p] = _cond_lin_impl
core.abstract_eval_rules[cond_lin_p] = _cond_lin_abstract
ad.jvp_rules[cond_lin_p] = _cond_lin_jvp
ad.transpose_rules[cond_lin_p] = _cond_lin_transpose
ad.linear_primitives.add(cond_lin_p)


def _cond_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, branches: tuple[Jaxpr, ...], **params: Any
) -> tuple[list[Any], list[Any]]:
    from functrace.lax.elementwise import convert_element_type, select_n

    size = batching.batch_size(vals, bdims)
    index, *ops = vals
    bi, *bops = bdims
    if bi is None:

        def run(k: int) -> Callable[..., list[Any]]:
            return lambda *a: _run(branches[k], a)

        # every branch must agree on the output batch dims: all move to 0
        def branch_fn(k: int) -> Callable[..., list[Any]]:
            def f(*a: Any) -> list[Any]:
                outs, dims = batching.vmap_flat(run(k), size, a, bops)
                return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)]

            return f

        avals = [core.get_aval(o) for o in ops]
        new_branches, consts = _trace_branches(
            [branch_fn(k) for k in range(len(branches))], avals, "cond (vmap)"
        )
        prim = cond_p if "num_known" not in params else cond_lin_p
        extra = {} if prim is cond_p else {"num_known": params["num_known"] + len(consts)}
        outs = prim.bind(index, *consts, *ops, branches=new_branches, **extra)
        return outs, [0] * len(outs)
    # A batched index: run every branch on the whole batch and select per example.
    from functrace.lax.elementwise import eq, stop_gradient, zeros_like
    from functrace.lax.shapes import broadcast_in_dim

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
        outs, dims = batching.vmap_flat(lambda *a, b=b: _run(b, a), size, masked, [0] * len(ops))
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


batching.batching_rules[cond_p] = _cond_batch
batching.batching_rules[cond_lin_p] = _cond_batch


def switch(
    index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, _fname: str = "switch"
) -> Any:
    """Apply ``branches[index](*operands)`` (index clamped to the valid range)."""
    if not branches:
        raise ValueError("switch: expected at least one branch, got none.")
    idx_aval = core.get_aval(index)
    if idx_aval.shape != () or idx_aval.dtype.kind not in "iub":
        raise TypeError(f"switch: expected a scalar integer index, got {idx_aval.str_short()}.")
    concrete = core.concrete_or_none(index)
    if concrete is not None and not _batched(index):
        # A known index (eager, or under grad/jvp): call the branch directly.
        return branches[int(np.clip(int(concrete), 0, len(branches) - 1))](*operands)
    op_paths, op_tree = tree_flatten_with_path(operands)
    op_leaves = [x for _, x in op_paths]
    avals = [core.get_aval(x).update(weak_type=False) for x in op_leaves]
    out_trees: list[Any] = []
    out_avals: list[list[ShapedArray]] = []

    def flat(k: int) -> Callable[..., list[Any]]:
        def f(*args: Any) -> list[Any]:
            out = branches[k](*tree_unflatten(op_tree, args))
            leaves, tree = tree_flatten(out)
            out_trees.append(tree)
            out_avals.append([core.get_aval(x) for x in leaves])
            return leaves

        return f

    jaxprs, consts = _trace_branches([flat(k) for k in range(len(branches))], avals, "switch")
    first = out_trees[0]
    for k in range(1, len(branches)):
        if out_trees[k] != first:
            raise TypeError(
                f"{_fname}: expected every branch to return the structure "
                f"{first}, got {out_trees[k]} from branch {k}."
            )
        _type_diff(
            _fname,
            f"the output of branch {k}",
            [f"leaf {i}" for i in range(len(out_avals[0]))],
            out_avals[0],
            out_avals[k],
        )
    idx = branch_index(index, len(branches))
    ops = [_cast_to(x, a) for x, a in zip(op_leaves, avals)]
    outs = cond_p.bind(idx, *consts, *ops, branches=jaxprs)
    return tree_unflatten(first, outs)


def _batched(x: Any) -> bool:
    from functrace.interpreters.batching import BatchTracer

    while isinstance(x, Tracer):
        if isinstance(x, BatchTracer) and x.bdim is not None:
            return True
        x = getattr(x, "primal", getattr(x, "val", None))
    return False


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``, staged under jit.

    >>> from functrace import lax
    >>> lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 2.0)
    3.0
    """
    aval = core.get_aval(pred)
    if aval.shape != ():
        raise TypeError(
            f"cond: expected a scalar boolean predicate, got "
            f"{aval.str_short()}. Reduce it first (e.g. .any() or .all())."
        )
    if aval.dtype.kind not in "biu":
        raise TypeError(
            f"cond: expected a boolean predicate, got {aval.dtype.name}. Compare "
            f"it first (e.g. x > 0)."
        )
    from functrace.lax.elementwise import convert_element_type, ne

    p = pred if aval.dtype.kind == "b" else ne(pred, np.zeros((), aval.dtype))
    return switch(
        convert_element_type(p, np.int32), [false_fun, true_fun], *operands, _fname="cond"
    )


# ---------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True)


def _while_impl(
    *args: Any, cond_jaxpr: Jaxpr, body_jaxpr: Jaxpr, cond_nconsts: int, body_nconsts: int
) -> list[Any]:
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    while bool(_run(cond_jaxpr, cc + carry)[0]):
        carry = _run(body_jaxpr, bc + carry)
    return carry


def _while_abstract(
    *avals: ShapedArray, cond_jaxpr: Jaxpr, body_jaxpr: Jaxpr, cond_nconsts: int, body_nconsts: int
) -> list[ShapedArray]:
    return [v.aval for v in body_jaxpr.outvars]


core.impl_rules[while_p] = _while_impl
core.abstract_eval_rules[while_p] = _while_abstract


def _while_trip_count(
    args: Sequence[Any], cond_jaxpr: Jaxpr, body_jaxpr: Jaxpr, cond_nconsts: int, body_nconsts: int
) -> int | None:
    """Run the loop on concrete values to count iterations (None when abstract)."""
    vals = [core.concrete_or_none(a) for a in args]
    if any(v is None for v in vals):
        return None
    cc, bc, carry = _split(
        [v if np.ndim(v) else v[()] for v in vals],  # type: ignore
        cond_nconsts,
        body_nconsts,
    )
    n = 0
    while bool(_run(cond_jaxpr, cc + carry)[0]):
        carry = _run(body_jaxpr, bc + carry)
        n += 1
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


def _while_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> Any:
    cc, bc, carry = _split(primals, cond_nconsts, body_nconsts)
    _, dbc, dcarry = _split(tangents, cond_nconsts, body_nconsts)
    if _linearizing(tangents):
        n = _while_trip_count(primals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
        if n is None:
            # Trip count unknown while tracing (under jit or vmap): the tangent map is a
            # while_lin, whose transpose stores the carries as the loop runs.
            return _while_linearize_abstract(
                cc, bc, carry, dbc, dcarry, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
            )
        # Reverse mode as a scan of the (now known) trip count: the body is a scan body
        # with the loop's constants as consts, the carry as carry and no xs.
        return _scan_jvp(
            list(bc) + list(carry),
            list(dbc) + list(dcarry),
            jaxpr=body_jaxpr,
            num_consts=body_nconsts,
            num_carry=len(carry),
            length=n,
            reverse=False,
            linear=(False,) * (body_nconsts + len(carry)),
        )
    nz_c = [type(t) is not Zero for t in dbc]
    nz_carry = _while_nonzeros(body_jaxpr, nz_c, [type(t) is not Zero for t in dcarry])
    t = ad.tangent_aval
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    n_dc = sum(nz_c)
    new_body, b_hoisted = _while_jvp_body(body_jaxpr, body_nconsts, nz_c, nz_carry)
    new_cond, c_hoisted = _while_jvp_cond(cond_jaxpr, cond_nconsts, carry_avals, nz_carry)
    dcarry_in = [_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz_carry) if m]
    outs = while_p.bind(
        *c_hoisted,
        *cc,
        *b_hoisted,
        *bc,
        *[d for d, m in zip(dbc, nz_c) if m],
        *carry,
        *dcarry_in,
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(c_hoisted) + len(cc),
        body_nconsts=len(b_hoisted) + len(bc) + n_dc,
    )
    primal, d_out = outs[: len(carry)], outs[len(carry) :]
    return primal, _fill(d_out, nz_carry, [t(a) for a in carry_avals])


ad.jvp_rules[while_p] = _while_jvp


def _batch_while_parts(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    force_bc: Sequence[bool] = (),
    size: int | None = None,
) -> tuple[list[Any], list[Any], list[Any], Jaxpr, Jaxpr, int]:
    """The loop over a batch, as an unbatched loop: ``(cond_ops, body_ops, carry,
    cond, body, n_extra)``.

    Everything batched moves to axis 0 and the carry is batched throughout. The new
    condition is "any lane still runs"; the new body steps the running lanes and keeps
    the others (a select), so one loop runs until every lane is done. ``body_ops`` is
    ``n_extra`` new leading constants followed by the old body constants; constants
    marked in ``force_bc`` are batched even when they were not (their per-lane
    cotangents differ). ``size``: the batch size, when only other operands (tangents,
    cotangents) are batched."""
    from functrace.lax.elementwise import convert_element_type, select_n
    from functrace.lax.reductions import reduce_max
    from functrace.lax.shapes import broadcast_in_dim

    size = batching.batch_size(vals, bdims) if size is None else size
    cc, bc, carry = _split(vals, cond_nconsts, body_nconsts)
    dcc, dbc, dcarry = _split(bdims, cond_nconsts, body_nconsts)
    force = list(force_bc) or [False] * len(bc)
    cc = [c if d is None else batching.moveaxis(c, d, 0) for c, d in zip(cc, dcc)]
    bc = [
        batching.bdim_at(c, d, size, 0) if f else c if d is None else batching.moveaxis(c, d, 0)
        for c, d, f in zip(bc, dbc, force)
    ]
    carry = [batching.bdim_at(c, d, size, 0) for c, d in zip(carry, dcarry)]
    dcc0 = [None if d is None else 0 for d in dcc]
    dbc0 = [None if d is None and not f else 0 for d, f in zip(dbc, force)]

    def preds(c_consts: Sequence[Any], cr: Sequence[Any]) -> Any:
        outs, dims = batching.vmap_flat(
            lambda *a: _run(cond_jaxpr, a), size, list(c_consts) + list(cr), dcc0 + [0] * len(cr)
        )
        return batching.bdim_at(outs[0], dims[0], size, 0)

    def cond_fn(*args: Any) -> list[Any]:
        c, cr = args[: len(cc)], args[len(cc) :]
        p = preds(c, cr)
        return [convert_element_type(reduce_max(convert_element_type(p, np.int32), (0,)), np.bool_)]

    def body_fn(*args: Any) -> list[Any]:
        c, b, cr = _split(args, len(cc), len(bc))
        active = preds(c, cr)
        outs, dims = batching.vmap_flat(
            lambda *a: _run(body_jaxpr, a), size, b + cr, dbc0 + [0] * len(cr)
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
    return [*c_h, *cc], [*b_h, *cc, *bc], carry, new_cond, new_body, len(b_h) + len(cc)


def _while_batch(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    *,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[Any]]:
    cond_ops, body_ops, carry, new_cond, new_body, _ = _batch_while_parts(
        vals, bdims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
    )
    outs = while_p.bind(
        *cond_ops,
        *body_ops,
        *carry,
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(cond_ops),
        body_nconsts=len(body_ops),
    )
    return outs, [0] * len(outs)


batching.batching_rules[while_p] = _while_batch


# ---------------------------------------------------------------------------
# while_loop in reverse mode when its trip count is unknown while tracing (under jit
# or vmap). The tangent map is ``while_lin`` (linear in its trailing operands); its
# transpose ``while_transpose`` runs the forward loop again, keeping every carry in a
# list that grows at run time, then sweeps back through the body's VJP. Both have
# static output types, so no maximum trip count is needed.
# ---------------------------------------------------------------------------

while_lin_p = Primitive("while_lin", multiple_results=True)
while_transpose_p = Primitive("while_transpose", multiple_results=True)

_NO_HIGHER_ORDER = (
    "while_loop: a second reverse-mode pass (a second derivative in reverse-over-reverse "
    "mode, e.g. grad(grad(f))) through a while_loop needs a trip count known while "
    "tracing; under jit/vmap use forward-over-reverse (jvp(grad(f)), ft.hessian), take "
    "the derivative outside jit/vmap (eager reverse mode supports every order), or use "
    "lax.fori_loop with Python-int bounds or lax.scan."
)


def _while_linearize_abstract(
    cc: list[Any],
    bc: list[Any],
    carry: list[Any],
    dbc: list[Any],
    dcarry: list[Any],
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[Any]]:
    """Reverse-mode JVP of a while loop whose trip count is not known yet."""
    primal = while_p.bind(
        *cc,
        *bc,
        *carry,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts,
    )
    t = ad.tangent_aval
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    nz_c = [type(d) is not Zero for d in dbc]
    nz_carry = _while_nonzeros(body_jaxpr, nz_c, [type(d) is not Zero for d in dcarry])
    if not any(nz_carry):
        return primal, [Zero(t(a)) for a in carry_avals]
    d_out = while_lin_p.bind(
        *cc,
        *bc,
        *carry,
        *[d for d, m in zip(dbc, nz_c) if m],
        *[_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz_carry) if m],
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts,
        nz_c=tuple(nz_c),
        nz_carry=tuple(nz_carry),
    )
    return primal, _fill(d_out, nz_carry, [t(a) for a in carry_avals])


def run_while_lin(
    cond: Callable[..., Sequence[Any]],
    step: Callable[..., Sequence[Any]],
    sizes: tuple[int, int, int, int],
    *args: Any,
) -> list[Any]:
    """Run the JVP loop; ``step`` is one step of it (see :func:`_while_jvp_body`) with
    its hoisted constants bound. ``sizes``: numbers of cond consts, body consts, carries
    and body-const tangents. Shared by the eager impl and the jit driver."""
    ncc, nbc, ncarry, n_dbc = sizes
    cc, bc, carry, dbc, dcarry = _split(args, ncc, nbc, ncarry, n_dbc)
    while cond(*cc, *carry)[0]:
        out = step(*bc, *dbc, *carry, *dcarry)
        carry, dcarry = list(out[:ncarry]), list(out[ncarry:])
    return dcarry


def _while_lin_impl(
    *args: Any,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> list[Any]:
    step, hoisted = _while_jvp_body(body_jaxpr, body_nconsts, nz_c, nz_carry)
    return run_while_lin(
        lambda *a: _run(cond_jaxpr, a),
        lambda *a: _run(step, [*hoisted, *a]),
        (cond_nconsts, body_nconsts, len(nz_carry), sum(nz_c)),
        *args,
    )


def _while_lin_abstract(
    *avals: ShapedArray,
    body_jaxpr: Jaxpr,
    body_nconsts: int,
    nz_carry: tuple[bool, ...],
    **_: Any,
) -> list[ShapedArray]:
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    return [ad.tangent_aval(a) for a, m in zip(carry_avals, nz_carry) if m]


def _while_lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    # Linear in its trailing operands: the map itself applied to their tangents. A
    # tangent on a leading (non-linear) operand is a second derivative.
    k = params["cond_nconsts"] + params["body_nconsts"] + len(params["nz_carry"])
    if any(type(d) is not Zero for d in tangents[:k]):
        raise NotImplementedError(_NO_HIGHER_ORDER)
    outs = while_lin_p.bind(*primals, **params)
    lin = [_inst(d, core.get_aval(p)) for d, p in zip(tangents[k:], primals[k:])]
    return outs, while_lin_p.bind(*primals[:k], *lin, **params)


def _while_lin_transpose(
    cts: Sequence[Any],
    *args: Any,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> list[Any]:
    n_known = cond_nconsts + body_nconsts + len(nz_carry)
    if any(ad.is_undefined_primal(x) for x in args[:n_known]):
        raise ValueError(
            "while_loop transpose: expected known loop constants and initial carry, got "
            "an undefined (linear) value among them."
        )
    cc, bc, carry = _split(args[:n_known], cond_nconsts, body_nconsts)
    out_avals = _while_lin_abstract(
        body_jaxpr=body_jaxpr, body_nconsts=body_nconsts, nz_carry=nz_carry
    )
    cts = [_inst(c, a) for c, a in zip(cts, out_avals)]
    outs = _while_transpose_bind(
        cc, bc, carry, cts, cond_jaxpr, body_jaxpr, list(nz_c), list(nz_carry)
    )
    return [None] * n_known + outs


def _batch_known_loop(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    ncarry: int,
) -> tuple[list[Any], list[Any], list[Any], list[Any], Jaxpr, Jaxpr, tuple[bool, ...]]:
    """Batching ``while_lin``/``while_transpose``: the loop (its known leading
    operands) as a masked batched loop, the trailing (co)tangents moved to axis 0, and
    the mask of body constants for the new body. A body constant with a (co)tangent is
    batched, so each lane has its own; the batch size comes from every operand (only
    the (co)tangents may be batched, as in jacfwd/jacrev)."""
    size = batching.batch_size(vals, bdims)
    n_known = cond_nconsts + body_nconsts + ncarry
    cond_ops, body_ops, carry, new_cond, new_body, n_extra = _batch_while_parts(
        vals[:n_known],
        bdims[:n_known],
        cond_jaxpr,
        body_jaxpr,
        cond_nconsts,
        body_nconsts,
        nz_c,
        size,
    )
    trailing = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals[n_known:], bdims[n_known:])]
    return cond_ops, body_ops, carry, trailing, new_cond, new_body, (False,) * n_extra + nz_c


def _while_lin_batch(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    *,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> tuple[list[Any], list[Any]]:
    cond_ops, body_ops, carry, lin, new_cond, new_body, new_nz_c = _batch_known_loop(
        vals, bdims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, nz_c, len(nz_carry)
    )
    outs = while_lin_p.bind(
        *cond_ops,
        *body_ops,
        *carry,
        *lin,
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=len(cond_ops),
        body_nconsts=len(body_ops),
        nz_c=new_nz_c,
        nz_carry=nz_carry,
    )
    return outs, [0] * len(outs)


core.impl_rules[while_lin_p] = _while_lin_impl
core.abstract_eval_rules[while_lin_p] = _while_lin_abstract
ad.jvp_rules[while_lin_p] = _while_lin_jvp
ad.transpose_rules[while_lin_p] = _while_lin_transpose
ad.linear_primitives.add(while_lin_p)
batching.batching_rules[while_lin_p] = _while_lin_batch


def _while_bwd_body(
    body_jaxpr: Jaxpr, body_nconsts: int, nz_c: Sequence[bool], nz_carry: Sequence[bool]
) -> tuple[Jaxpr, list[Any]]:
    """One step of the reverse sweep:
    ``(bc, carry_k, ct_carry_{k+1}, acc) -> (acc + ct_bc, ct_carry_k)`` over the masked
    entries (the body's forward is recomputed from the stored ``carry_k``)."""
    from functrace.lax.elementwise import add

    t = ad.tangent_aval
    bc_avals = [v.aval for v in body_jaxpr.invars[:body_nconsts]]
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    mask = list(nz_c) + list(nz_carry)
    nz_avals = [t(a) for a, m in zip(bc_avals + carry_avals, mask) if m]
    acc_avals = [t(a) for a, m in zip(bc_avals, nz_c) if m]
    ct_avals = [t(a) for a, m in zip(carry_avals, nz_carry) if m]

    def bwd(*args: Any) -> list[Any]:
        bc, carry, ct, acc = _split(args, body_nconsts, len(carry_avals), len(ct_avals))
        primals = bc + carry

        def f(*xs: Any) -> list[Any]:
            it = iter(xs)
            outs = _run(body_jaxpr, [next(it) if m else v for v, m in zip(primals, mask)])
            return [o for o, m in zip(outs, nz_carry) if m]

        _, lin, _ = ad.linearize_flat(
            f, [v for v, m in zip(primals, mask) if m], origin="while_loop (reverse sweep)"
        )
        cts_in = [_inst(c, a) for c, a in zip(lin.transpose(ct), nz_avals)]
        d_bc, d_carry = cts_in[: len(acc)], cts_in[len(acc) :]
        return [add(a, d) for a, d in zip(acc, d_bc)] + d_carry

    return _trace(bwd, bc_avals + carry_avals + ct_avals + acc_avals, "while_loop (reverse sweep)")


def run_while_transpose(
    cond: Callable[..., Sequence[Any]],
    body: Callable[..., Sequence[Any]],
    bwd: Callable[..., Sequence[Any]],
    sizes: tuple[int, int, int, int],
    acc_avals: Sequence[ShapedArray],
    *args: Any,
) -> list[Any]:
    """Run the loop keeping every carry, then the reverse sweep: ``bwd`` is one step of
    it (:func:`_while_bwd_body`). ``sizes``: numbers of the reverse step's hoisted
    constants, cond consts, body consts and carries. Shared by the eager impl and the
    jit driver."""
    nbwd, ncc, nbc, ncarry = sizes
    hoisted, cc, bc, carry, ct = _split(args, nbwd, ncc, nbc, ncarry)
    stored: list[Sequence[Any]] = []
    while cond(*cc, *carry)[0]:
        stored.append(carry)
        carry = list(body(*bc, *carry))
    acc = [np.zeros(a.shape, a.dtype) if a.shape else a.dtype.type(0) for a in acc_avals]
    for c in reversed(stored):
        out = bwd(*hoisted, *bc, *c, *ct, *acc)
        acc, ct = list(out[: len(acc)]), list(out[len(acc) :])
    return [*acc, *ct]


def _while_transpose_bind(
    cc: list[Any],
    bc: list[Any],
    carry: list[Any],
    cts: list[Any],
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    nz_c: list[bool],
    nz_carry: list[bool],
) -> list[Any]:
    """Cotangents of the masked body constants and initial carries."""
    bwd, hoisted = _while_bwd_body(body_jaxpr, len(bc), nz_c, nz_carry)
    outs = while_transpose_p.bind(
        *hoisted,
        *cc,
        *bc,
        *carry,
        *cts,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        bwd_jaxpr=bwd,
        bwd_nconsts=len(hoisted),
        cond_nconsts=len(cc),
        body_nconsts=len(bc),
        nz_c=tuple(nz_c),
        nz_carry=tuple(nz_carry),
    )
    return list(outs)


def _while_transpose_impl(
    *args: Any,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    bwd_jaxpr: Jaxpr,
    bwd_nconsts: int,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> list[Any]:
    return run_while_transpose(
        lambda *a: _run(cond_jaxpr, a),
        lambda *a: _run(body_jaxpr, a),
        lambda *a: _run(bwd_jaxpr, a),
        (bwd_nconsts, cond_nconsts, body_nconsts, len(nz_carry)),
        _while_transpose_abstract(body_jaxpr=body_jaxpr, body_nconsts=body_nconsts, nz_c=nz_c),
        *args,
    )


def _while_transpose_abstract(
    *avals: ShapedArray,
    body_jaxpr: Jaxpr,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...] = (),
    **_: Any,
) -> list[ShapedArray]:
    mask = list(nz_c) + list(nz_carry)
    return [ad.tangent_aval(v.aval) for v, m in zip(body_jaxpr.invars, mask) if m]


def _while_transpose_batch(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    *,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    bwd_jaxpr: Jaxpr,
    bwd_nconsts: int,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> tuple[list[Any], list[Any]]:
    # The reverse sweep of the batched loop: the lanes that finished early step
    # through the select as the identity, so their cotangents pass unchanged.
    # Body constants with a cotangent are batched: each lane has its own.
    cond_ops, body_ops, carry, cts, new_cond, new_body, new_nz_c = _batch_known_loop(
        vals[bwd_nconsts:],
        bdims[bwd_nconsts:],
        cond_jaxpr,
        body_jaxpr,
        cond_nconsts,
        body_nconsts,
        nz_c,
        len(nz_carry),
    )
    outs = _while_transpose_bind(
        cond_ops,
        body_ops,
        carry,
        cts,
        new_cond,
        new_body,
        list(new_nz_c),
        list(nz_carry),
    )
    return outs, [0] * len(outs)


core.impl_rules[while_transpose_p] = _while_transpose_impl
core.abstract_eval_rules[while_transpose_p] = _while_transpose_abstract


def _while_transpose_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    cond_jaxpr: Jaxpr,
    body_jaxpr: Jaxpr,
    bwd_jaxpr: Jaxpr,
    bwd_nconsts: int,
    cond_nconsts: int,
    body_nconsts: int,
    nz_c: tuple[bool, ...],
    nz_carry: tuple[bool, ...],
) -> tuple[list[Any], list[Any]]:
    """Forward mode through a reverse sweep (``jvp(grad(f))``, ``hessian``).

    The sweep is ``x, ct -> J(x)^T ct`` for the loop ``L`` (``x``: the masked body
    constants and initial carries). Its tangent along ``(dx, dct)`` is
    ``J^T dct + d/dx(J^T ct) dx``, which is the ``x`` part of the VJP, with cotangents
    ``(dct, ct)``, of the loop run together with its JVP, ``(x, dx) -> (L(x), J(x) dx)``
    (second derivatives are symmetric). That VJP is one more ``while_transpose``."""
    params = dict(
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        bwd_jaxpr=bwd_jaxpr,
        bwd_nconsts=bwd_nconsts,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts,
        nz_c=nz_c,
        nz_carry=nz_carry,
    )
    ncarry = len(nz_carry)
    bw, cc, bc, carry, ct = _split(primals, bwd_nconsts, cond_nconsts, body_nconsts, ncarry)
    _, _, dbc, dcarry, dct = _split(tangents, bwd_nconsts, cond_nconsts, body_nconsts, ncarry)
    outs = while_transpose_p.bind(*primals, **params)
    t = ad.tangent_aval
    ct_avals = [core.get_aval(c) for c in ct]
    dct = [_inst(d, a) for d, a in zip(dct, ct_avals)]
    nz2_c = [type(d) is not Zero for d in dbc]
    if not any(nz2_c) and all(type(d) is Zero for d in dcarry):
        # only the cotangent moves: the sweep is linear in it
        return outs, list(while_transpose_p.bind(*bw, *cc, *bc, *carry, *dct, **params))
    carry_avals = [v.aval for v in body_jaxpr.invars[body_nconsts:]]
    nz2_carry = _while_nonzeros(body_jaxpr, nz2_c, [type(d) is not Zero for d in dcarry])
    # the loop together with its JVP: consts (bc, dbc), carries (carry, dcarry)
    jbody, jb_hoisted = _while_jvp_body(body_jaxpr, body_nconsts, nz2_c, nz2_carry)
    jcond, jc_hoisted = _while_jvp_cond(cond_jaxpr, cond_nconsts, carry_avals, nz2_carry)
    dbc2 = [d for d, m in zip(dbc, nz2_c) if m]
    dcarry2 = [_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz2_carry) if m]
    n_extra = len(jb_hoisted)
    aug_nz_c = [False] * n_extra + list(nz_c) + [False] * len(dbc2)
    aug_nz_carry = _while_nonzeros(jbody, aug_nz_c, list(nz_carry) + [True] * len(dcarry2))
    if aug_nz_carry[:ncarry] != list(nz_carry):
        raise AssertionError("while_loop jvp of the reverse sweep: carry masks disagree")
    # cotangents: dct on the loop's own outputs, ct on its tangent outputs
    ct_of = dict(zip([i for i, m in enumerate(nz_carry) if m], ct))
    cts = list(dct) + [
        ct_of[i] if i in ct_of else _zeros(t(carry_avals[i])) for i, m in enumerate(nz2_carry) if m
    ]
    res = _while_transpose_bind(
        [*jc_hoisted, *cc],
        [*jb_hoisted, *bc, *dbc2],
        [*carry, *dcarry2],
        cts,
        jcond,
        jbody,
        aug_nz_c,
        aug_nz_carry,
    )
    n_out = sum(nz_c) + sum(nz_carry)
    return outs, res[:n_out]


def _while_transpose_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    # Linear in the cotangent operands only (``x, ct -> J(x)^T ct``): its transpose is
    # ``u -> J(x) u``, the tangent loop. A tangent in ``x`` (from forward mode through
    # the sweep, recorded on a reverse-mode tape) would need the sweep's own VJP.
    k = params["bwd_nconsts"] + params["cond_nconsts"] + params["body_nconsts"]
    k += len(params["nz_carry"])
    if any(ad.is_undefined_primal(x) for x in args[:k]):
        raise NotImplementedError(_NO_HIGHER_ORDER)
    _, cc, rest = _split(args[:k], params["bwd_nconsts"], params["cond_nconsts"])
    bc, carry = _split(rest, params["body_nconsts"])
    avals = _while_transpose_abstract(**params)
    u = [_inst(c, a) for c, a in zip(cts, avals)]
    keep = {n: params[n] for n in ("cond_jaxpr", "body_jaxpr", "cond_nconsts", "body_nconsts")}
    outs = while_lin_p.bind(
        *cc, *bc, *carry, *u, nz_c=params["nz_c"], nz_carry=params["nz_carry"], **keep
    )
    return [None] * k + list(outs)


ad.jvp_rules[while_transpose_p] = _while_transpose_jvp
ad.transpose_rules[while_transpose_p] = _while_transpose_transpose
batching.batching_rules[while_transpose_p] = _while_transpose_batch


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
    16.0
    """
    init_paths, tree = tree_flatten_with_path(init_val)
    init = [x for _, x in init_paths]
    avals = [core.get_aval(x).update(weak_type=False) for x in init]
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
        _type_diff("while_loop", "the carry", names, avals, [core.get_aval(x) for x in leaves])
        return leaves

    cj, cconsts = _trace(flat_cond, avals, f"while_loop cond {cname}")
    bj, bconsts = _trace(flat_body, avals, f"while_loop body {bname}")
    ops = [_cast_to(x, a) for x, a in zip(init, avals)]
    outs = while_p.bind(
        *cconsts,
        *bconsts,
        *ops,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=len(cconsts),
        body_nconsts=len(bconsts),
    )
    return tree_unflatten(tree, outs)


__all__ = [
    "cond",
    "cond_lin_p",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_lin_p",
    "while_loop",
    "while_p",
    "while_transpose_p",
]
