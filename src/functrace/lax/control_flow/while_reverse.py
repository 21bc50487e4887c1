"""Reverse mode of ``while_loop``.

With concrete inputs the loop runs once to learn its trip count and is differentiated
as a ``scan`` of that length. When the count is unknown while tracing (under ``jit``
or ``vmap``), the forward loop also counts its steps, and the tangent map is
``while_lin`` (linear in its trailing operands) of the same body driven by that count
(``i < n``); its transpose ``while_transpose`` runs the forward steps again, keeping
every carry in a list that grows at run time, then sweeps back through the body's VJP.
Both have static output types, so no maximum trip count is needed. Driving the
tangent loops by the recorded count (not by the loop's own condition) keeps them
finite on any residuals: a ``cond`` under ``vmap`` with a batched predicate runs every
branch's linear part for every example, on zero residuals where the branch was not
taken, where the original condition might never become false.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _debug, core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.ir import Jaxpr
from functrace.lax.control_flow.common import (
    _fill,
    _inst,
    _run,
    _run_args,
    _split,
    _trace,
    _zeros,
)
from functrace.lax.control_flow.scan_map import _scan_linearize
from functrace.lax.control_flow.while_fori import (
    WhileParams,
    _batch_while_parts,
    _while_jvp_body,
    _while_jvp_cond,
    _while_nonzeros,
    _while_trip_count,
    while_p,
    while_rule,
)
from functrace.lax.elementwise import add, full_like, lt

while_lin_p = Primitive("while_lin", multiple_results=True)
while_transpose_p = Primitive("while_transpose", multiple_results=True)

_NO_HIGHER_ORDER = (
    "while_loop: a second reverse-mode pass (a second derivative in reverse-over-reverse "
    "mode, e.g. grad(grad(f))) through a while_loop needs a trip count known while "
    "tracing; under jit/vmap use forward-over-reverse (jvp(grad(f)), ft.hessian), take "
    "the derivative outside jit/vmap (eager reverse mode supports every order), or use "
    "lax.fori_loop with Python-int bounds or lax.scan."
)


def _while_linearize(primals: Sequence[Any], tangents: Sequence[Any], *, p: WhileParams) -> Any:
    """Reverse mode of ``while``: the tangent part becomes a linear computation."""
    cc, bc, carry = _split(primals, p.cond_nconsts, p.body_nconsts)
    _, dbc, dcarry = _split(tangents, p.cond_nconsts, p.body_nconsts)
    n = _while_trip_count(primals, p)
    if n is None:
        # Trip count unknown while tracing (under jit or vmap): the tangent map is a
        # while_lin, whose transpose stores the carries as the loop runs.
        return _while_linearize_abstract(cc, bc, carry, dbc, dcarry, p)
    # Reverse mode as a scan of the (now known) trip count: the body is a scan body
    # with the loop's constants as consts, the carry as carry and no xs.
    return _scan_linearize(
        list(bc) + list(carry),
        list(dbc) + list(dcarry),
        jaxpr=p.body_jaxpr,
        num_consts=p.body_nconsts,
        num_carry=len(carry),
        length=n,
        reverse=False,
        linear=(False,) * (p.body_nconsts + len(carry)),
    )


def _while_linearize_abstract(
    cc: list[Any],
    bc: list[Any],
    carry: list[Any],
    dbc: list[Any],
    dcarry: list[Any],
    p: WhileParams,
) -> tuple[list[Any], list[Any]]:
    """Reverse-mode JVP of a while loop whose trip count is not known yet."""
    t = ad.tangent_aval
    carry_avals = p.carry_avals
    nz_c = [type(d) is not Zero for d in dbc]
    nz_carry = _while_nonzeros(p.body_jaxpr, nz_c, [type(d) is not Zero for d in dcarry])
    if not any(nz_carry):
        return p.bind(while_p, *cc, *bc, *carry), [Zero(t(a)) for a in carry_avals]
    fwd, lin, fwd_cc, lin_cc, body_c = _counted(p, cc, bc)
    n, *primal = fwd.bind(while_p, *fwd_cc, *body_c, *bc, _COUNT_0, *carry)
    lp = lin.replace(nz_c=(False,) * len(body_c) + tuple(nz_c), nz_carry=(False, *nz_carry))
    d_out = lp.bind(
        while_lin_p,
        *lin_cc,
        n,
        *body_c,
        *bc,
        _COUNT_0,
        *carry,
        *[d for d, m in zip(dbc, nz_c) if m],
        *[_inst(d, t(a)) for d, a, m in zip(dcarry, carry_avals, nz_carry) if m],
    )
    return primal, _fill(d_out, nz_carry, [t(a) for a in carry_avals])


_COUNT = ShapedArray((), np.dtype(np.int64))
_COUNT_0 = np.int64(0)


def _counted(
    p: WhileParams, cc: list[Any], bc: list[Any]
) -> tuple[WhileParams, WhileParams, list[Any], list[Any], list[Any]]:
    """The loop ``p`` with a step counter ``i`` as its first carry: ``fwd`` runs it under
    its own condition (returning the trip count ``n`` first), ``lin`` the same body while
    ``i < n`` (``n`` its last cond constant). Also the captured constants of ``fwd``'s
    cond, of ``lin``'s cond and of the body, which lead their operands."""
    ncc, nbc = p.cond_nconsts, p.body_nconsts
    carry_avals = p.carry_avals
    cc_avals = [core.get_aval(c) for c in cc]
    bc_avals = [core.get_aval(c) for c in bc]

    def body(*args: Any) -> list[Any]:  # (*bc, i, *carry) -> (i + 1, *carry')
        i = args[nbc]
        return [add(i, full_like(i, 1)), *_run(p.body_jaxpr, [*args[:nbc], *args[nbc + 1 :]])]

    def cond(*args: Any) -> list[Any]:  # (*cc, i, *carry) -> the loop's own condition
        return _run(p.cond_jaxpr, [*args[:ncc], *args[ncc + 1 :]])

    def below(n: Any, i: Any, *carry: Any) -> list[Any]:  # (n, i, *carry) -> i < n
        return [lt(i, n)]

    body_j, body_c = _trace(body, [*bc_avals, _COUNT, *carry_avals], "while_loop (counted)")
    cond_j, fwd_cc = _trace(cond, [*cc_avals, _COUNT, *carry_avals], "while_loop (counted)")
    below_j, lin_cc = _trace(below, [_COUNT, _COUNT, *carry_avals], "while_loop (counted)")
    nb = len(body_c) + nbc
    fwd = p.replace(
        cond_jaxpr=cond_j, cond_nconsts=len(fwd_cc) + ncc, body_jaxpr=body_j, body_nconsts=nb
    )
    lin = p.replace(
        cond_jaxpr=below_j, cond_nconsts=len(lin_cc) + 1, body_jaxpr=body_j, body_nconsts=nb
    )
    return fwd, lin, [*fwd_cc, *cc], lin_cc, body_c


def run_while_lin(
    cond: Callable[..., Sequence[Any]],
    step: Callable[..., Sequence[Any]],
    sizes: tuple[int, int, int, int],
    *args: Any,
) -> list[Any]:
    """Run the JVP loop; ``step`` is one step of it (see ``_while_jvp_body``) with
    its hoisted constants bound. ``sizes``: numbers of cond consts, body consts, carries
    and body-const tangents. Shared by the eager impl and the jit driver."""
    ncc, nbc, ncarry, n_dbc = sizes
    cc, bc, carry, dbc, dcarry = _split(args, ncc, nbc, ncarry, n_dbc)
    with _debug.muted_effects():  # the forward loop ran (and printed) already
        while cond(*cc, *carry)[0]:
            out = step(*bc, *dbc, *carry, *dcarry)
            carry, dcarry = list(out[:ncarry]), list(out[ncarry:])
    return dcarry


def while_lin_sizes(p: WhileParams) -> tuple[int, int, int, int]:
    """The ``sizes`` of :func:`run_while_lin` for a ``while_lin`` of params ``p``."""
    nz_c, nz_carry = p.nz
    return (p.cond_nconsts, p.body_nconsts, len(nz_carry), sum(nz_c))


@while_rule
def _while_lin_impl(*args: Any, p: WhileParams) -> list[Any]:
    nz_c, nz_carry = p.nz
    step, hoisted = _while_jvp_body(p.body_jaxpr, p.body_nconsts, nz_c, nz_carry)
    return run_while_lin(
        functools.partial(_run_args, p.cond_jaxpr),
        functools.partial(_run_args, step, *hoisted),
        while_lin_sizes(p),
        *args,
    )


def _while_lin_out_avals(p: WhileParams) -> list[ShapedArray]:
    return [ad.tangent_aval(a) for a, m in zip(p.carry_avals, p.nz[1]) if m]


@while_rule
def _while_lin_abstract(*avals: ShapedArray, p: WhileParams) -> list[ShapedArray]:
    return _while_lin_out_avals(p)


@while_rule
def _while_lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, p: WhileParams) -> Any:
    # Linear in its trailing operands: the map itself applied to their tangents. A
    # tangent on a leading (non-linear) operand is a second derivative.
    k = p.cond_nconsts + p.body_nconsts + len(p.nz[1])
    if any(type(d) is not Zero for d in tangents[:k]):
        raise NotImplementedError(_NO_HIGHER_ORDER)
    outs = p.bind(while_lin_p, *primals)
    lin = [_inst(d, core.get_aval(x)) for d, x in zip(tangents[k:], primals[k:])]
    return outs, p.bind(while_lin_p, *primals[:k], *lin)


@while_rule
def _while_lin_transpose(cts: Sequence[Any], *args: Any, p: WhileParams) -> list[Any]:
    nz_c, nz_carry = p.nz
    n_known = p.cond_nconsts + p.body_nconsts + len(nz_carry)
    if any(ad.is_undefined_primal(x) for x in args[:n_known]):
        raise ValueError(
            "while_loop transpose: expected known loop constants and initial carry, got "
            "an undefined (linear) value among them."
        )
    cc, bc, carry = _split(args[:n_known], p.cond_nconsts, p.body_nconsts)
    cts = [_inst(c, a) for c, a in zip(cts, _while_lin_out_avals(p))]
    return [None] * n_known + _while_transpose_bind(cc, bc, carry, cts, p)


def _batch_known_loop(
    vals: Sequence[Any], bdims: Sequence[int | None], p: WhileParams
) -> tuple[list[Any], list[Any], list[Any], list[Any], WhileParams]:
    """Batching ``while_lin``/``while_transpose``: the loop (its known leading
    operands) as a masked batched loop, the trailing (co)tangents moved to axis 0, and
    the params of the new loop (its mask of body constants covers the new ones). A
    body constant with a (co)tangent is batched, so each lane has its own; the batch
    size comes from every operand (only the (co)tangents may be batched, as in
    jacfwd/jacrev)."""
    size = batching.batch_size(vals, bdims)
    nz_c, nz_carry = p.nz
    n_known = p.cond_nconsts + p.body_nconsts + len(nz_carry)
    cond_ops, body_ops, carry, new_p, n_extra = _batch_while_parts(
        vals[:n_known], bdims[:n_known], p, nz_c, size
    )
    trailing = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals[n_known:], bdims[n_known:])]
    new_p = new_p.replace(nz_c=(False,) * n_extra + nz_c)
    return cond_ops, body_ops, carry, trailing, new_p


@while_rule
def _while_lin_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, p: WhileParams
) -> tuple[list[Any], list[Any]]:
    cond_ops, body_ops, carry, lin, new_p = _batch_known_loop(vals, bdims, p)
    outs = new_p.bind(while_lin_p, *cond_ops, *body_ops, *carry, *lin)
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
    it (``_while_bwd_body``). ``sizes``: numbers of the reverse step's hoisted
    constants, cond consts, body consts and carries. Shared by the eager impl and the
    jit driver."""
    nbwd, ncc, nbc, ncarry = sizes
    hoisted, cc, bc, carry, ct = _split(args, nbwd, ncc, nbc, ncarry)
    stored: list[Sequence[Any]] = []
    with _debug.muted_effects():  # the forward loop ran (and printed) already
        while cond(*cc, *carry)[0]:
            stored.append(carry)
            carry = list(body(*bc, *carry))
        acc = [np.zeros(a.shape, a.dtype) if a.shape else a.dtype.type(0) for a in acc_avals]
        for c in reversed(stored):
            out = bwd(*hoisted, *bc, *c, *ct, *acc)
            acc, ct = list(out[: len(acc)]), list(out[len(acc) :])
    return [*acc, *ct]


def while_transpose_sizes(p: WhileParams) -> tuple[int, int, int, int]:
    """The ``sizes`` of :func:`run_while_transpose` for a ``while_transpose`` of ``p``."""
    assert p.bwd_nconsts is not None
    return (p.bwd_nconsts, p.cond_nconsts, p.body_nconsts, len(p.nz[1]))


def _while_transpose_bind(
    cc: list[Any], bc: list[Any], carry: list[Any], cts: list[Any], p: WhileParams
) -> list[Any]:
    """Cotangents of the body constants and initial carries that ``p.nz_c`` and
    ``p.nz_carry`` mark, for the loop ``p`` (whose constant counts are ``cc``'s and
    ``bc``'s)."""
    nz_c, nz_carry = p.nz
    bwd, hoisted = _while_bwd_body(p.body_jaxpr, len(bc), nz_c, nz_carry)
    tp = p.replace(
        bwd_jaxpr=bwd, bwd_nconsts=len(hoisted), cond_nconsts=len(cc), body_nconsts=len(bc)
    )
    return list(tp.bind(while_transpose_p, *hoisted, *cc, *bc, *carry, *cts))


@while_rule
def _while_transpose_impl(*args: Any, p: WhileParams) -> list[Any]:
    assert p.bwd_jaxpr is not None
    return run_while_transpose(
        functools.partial(_run_args, p.cond_jaxpr),
        functools.partial(_run_args, p.body_jaxpr),
        functools.partial(_run_args, p.bwd_jaxpr),
        while_transpose_sizes(p),
        _while_transpose_out_avals(p.replace(nz_carry=())),
        *args,
    )


def _while_transpose_out_avals(p: WhileParams) -> list[ShapedArray]:
    mask = list(p.nz_c or ()) + list(p.nz_carry or ())
    return [ad.tangent_aval(v.aval) for v, m in zip(p.body_jaxpr.invars, mask) if m]


@while_rule
def _while_transpose_abstract(*avals: ShapedArray, p: WhileParams) -> list[ShapedArray]:
    return _while_transpose_out_avals(p)


@while_rule
def _while_transpose_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, p: WhileParams
) -> tuple[list[Any], list[Any]]:
    # The reverse sweep of the batched loop: the lanes that finished early step
    # through the select as the identity, so their cotangents pass unchanged.
    # Body constants with a cotangent are batched: each lane has its own.
    assert p.bwd_nconsts is not None
    nb = p.bwd_nconsts
    cond_ops, body_ops, carry, cts, new_p = _batch_known_loop(vals[nb:], bdims[nb:], p)
    outs = _while_transpose_bind(cond_ops, body_ops, carry, cts, new_p)
    return outs, [0] * len(outs)


core.impl_rules[while_transpose_p] = _while_transpose_impl
core.abstract_eval_rules[while_transpose_p] = _while_transpose_abstract


@while_rule
def _while_transpose_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, p: WhileParams
) -> tuple[list[Any], list[Any]]:
    """Forward mode through a reverse sweep (``jvp(grad(f))``, ``hessian``).

    The sweep is ``x, ct -> J(x)^T ct`` for the loop ``L`` (``x``: the masked body
    constants and initial carries). Its tangent along ``(dx, dct)`` is
    ``J^T dct + d/dx(J^T ct) dx``, which is the ``x`` part of the VJP, with cotangents
    ``(dct, ct)``, of the loop run together with its JVP, ``(x, dx) -> (L(x), J(x) dx)``
    (second derivatives are symmetric). That VJP is one more ``while_transpose``."""
    assert p.bwd_nconsts is not None
    nz_c, nz_carry = p.nz
    ncarry = len(nz_carry)
    sizes = (p.bwd_nconsts, p.cond_nconsts, p.body_nconsts, ncarry)
    bw, cc, bc, carry, ct = _split(primals, *sizes)
    _, _, dbc, dcarry, dct = _split(tangents, *sizes)
    outs = p.bind(while_transpose_p, *primals)
    t = ad.tangent_aval
    ct_avals = [core.get_aval(c) for c in ct]
    dct = [_inst(d, a) for d, a in zip(dct, ct_avals)]
    nz2_c = [type(d) is not Zero for d in dbc]
    if not any(nz2_c) and all(type(d) is Zero for d in dcarry):
        # only the cotangent moves: the sweep is linear in it
        return outs, list(p.bind(while_transpose_p, *bw, *cc, *bc, *carry, *dct))
    carry_avals = p.carry_avals
    nz2_carry = _while_nonzeros(p.body_jaxpr, nz2_c, [type(d) is not Zero for d in dcarry])
    # the loop together with its JVP: consts (bc, dbc), carries (carry, dcarry)
    jbody, jb_hoisted = _while_jvp_body(p.body_jaxpr, p.body_nconsts, nz2_c, nz2_carry)
    jcond, jc_hoisted = _while_jvp_cond(p.cond_jaxpr, p.cond_nconsts, carry_avals, nz2_carry)
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
    jp = WhileParams(
        cond_jaxpr=jcond,
        body_jaxpr=jbody,
        cond_nconsts=len(jc_hoisted) + len(cc),
        body_nconsts=n_extra + len(bc) + len(dbc2),
        nz_c=tuple(aug_nz_c),
        nz_carry=tuple(aug_nz_carry),
    )
    res = _while_transpose_bind(
        [*jc_hoisted, *cc], [*jb_hoisted, *bc, *dbc2], [*carry, *dcarry2], cts, jp
    )
    n_out = sum(nz_c) + sum(nz_carry)
    return outs, res[:n_out]


@while_rule
def _while_transpose_transpose(cts: Sequence[Any], *args: Any, p: WhileParams) -> list[Any]:
    # Linear in the cotangent operands only (``x, ct -> J(x)^T ct``): its transpose is
    # ``u -> J(x) u``, the tangent loop. A tangent in ``x`` (from forward mode through
    # the sweep, recorded on a reverse-mode tape) would need the sweep's own VJP.
    assert p.bwd_nconsts is not None
    k = p.bwd_nconsts + p.cond_nconsts + p.body_nconsts + len(p.nz[1])
    if any(ad.is_undefined_primal(x) for x in args[:k]):
        raise NotImplementedError(_NO_HIGHER_ORDER)
    _, cc, bc, carry = _split(args[:k], p.bwd_nconsts, p.cond_nconsts, p.body_nconsts)
    u = [_inst(c, a) for c, a in zip(cts, _while_transpose_out_avals(p))]
    lp = p.replace(bwd_jaxpr=None, bwd_nconsts=None)
    return [None] * k + list(lp.bind(while_lin_p, *cc, *bc, *carry, *u))


ad.jvp_rules[while_transpose_p] = _while_transpose_jvp
ad.transpose_rules[while_transpose_p] = _while_transpose_transpose
batching.batching_rules[while_transpose_p] = _while_transpose_batch


ad.linearize_rules[while_p] = while_rule(_while_linearize)
