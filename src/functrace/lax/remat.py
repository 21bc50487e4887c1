"""Rematerialisation: the ``checkpoint`` call primitive and ``checkpoint_name``.

``checkpoint`` (``remat_p``) runs a jaxpr. It is the identity on values; what it changes
is reverse mode. Its linearize rule runs the body forward once and keeps only the
intermediate values its ``policy`` allows (plus the operands the derivative reads); on
the tape it records one ``checkpoint`` equation (``differentiated=True``) whose body
recomputes everything else from those saved values and then applies the body's
tangent map. The transpose of that equation is again a ``checkpoint``: it recomputes
the forward values and runs the backward pass of the tangent map, so the recomputation
happens during the backward pass, and the forward pass's intermediates are not kept
alive in between. JVP and batching keep the primitive (the JVP, or the batched body,
under ``checkpoint`` again), so ``grad(vmap(checkpoint(f)))`` and ``jvp(grad(...))``
stay rematerialised.

A policy is ``policy(primitive, *in_avals, **params) -> bool``: whether the outputs of
an equation of the forward pass (the body's and its derivative rules' primal work) may
be saved (JAX's signature and meaning; the policies are below).
``checkpoint_name`` (``name_p``) is the identity, with a name a policy can match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace import _debug, core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.numba_rules import numba_emitters
from functrace.ir import Jaxpr, JaxprEqn, Var, dce_jaxpr, eval_jaxpr
from functrace.lax.contraction import dot_general_p
from functrace.lax.control_flow.common import _fill, _inst, _run, _trace

# ---------------------------------------------------------------------------
# checkpoint_name
# ---------------------------------------------------------------------------

name_p = Primitive("name")


def _name_abstract(x: ShapedArray, *, name: str) -> ShapedArray:
    return x


core.impl_rules[name_p] = lambda x, *, name: x
core.abstract_eval_rules[name_p] = _name_abstract


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> tuple[Any, Any]:
    # the tangent is the cotangent's path: it passes through, unnamed
    return name_p.bind(primals[0], name=name), tangents[0]


ad.jvp_rules[name_p] = _name_jvp
batching.defvectorized(name_p)
numba_emitters[name_p] = "{0}"


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` itself, named ``name`` for the policies of an enclosing ``checkpoint``
    (``save_only_these_names``, ``save_any_names_but_these``).

    ``x`` is an array or a pytree of arrays; every leaf gets the name.
    """
    from functrace.tree_util import tree_map

    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: expected a string name, got {type(name).__name__}.")
    return tree_map(lambda v: name_p.bind(v, name=name), x)


# ---------------------------------------------------------------------------
# Policies (JAX's names and meaning)
# ---------------------------------------------------------------------------


def everything_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save every intermediate value: no recomputation (as without ``checkpoint``)."""
    return True


def nothing_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save no intermediate value: recompute all of them from the operands (the default)."""
    return False


def dots_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save the results of matrix products (``dot_general``); recompute the rest."""
    return prim is dot_general_p


def dots_with_no_batch_dims_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save the results of matrix products without batch dimensions."""
    if prim is not dot_general_p:
        return False
    (_, _), (lb, rb) = params["dimension_numbers"]
    return not lb and not rb


def _check_names(fname: str, names: tuple[Any, ...]) -> frozenset[str]:
    for n in names:
        if not isinstance(n, str):
            raise TypeError(
                f"{fname}: expected names given to checkpoint_name (strings), got "
                f"{type(n).__name__} {n!r}."
            )
    return frozenset(names)


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """A policy saving exactly the values named (by ``checkpoint_name``) in ``names``."""
    keep = _check_names("save_only_these_names", names)

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in keep

    policy.__name__ = f"save_only_these_names{tuple(sorted(keep))}"
    return policy


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """A policy saving every named value except those named in ``names``."""
    skip = _check_names("save_any_names_but_these", names)

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in skip

    policy.__name__ = f"save_any_names_but_these{tuple(sorted(skip))}"
    return policy


def save_anything_except_these_names(*names: str) -> Callable[..., bool]:
    """A policy saving every value, named or not, except the outputs of
    ``checkpoint_name`` named in ``names``. The value a name marks is still saved as
    the output of the equation computing it, which is saveable: the residuals are
    those of ``everything_saveable``, as in JAX 0.10.2 (whose policy saves everything)."""
    skip = _check_names("save_anything_except_these_names", names)

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is not name_p or params["name"] not in skip

    policy.__name__ = f"save_anything_except_these_names{tuple(sorted(skip))}"
    return policy


def save_from_both_policies(
    policy_1: Callable[..., bool], policy_2: Callable[..., bool]
) -> Callable[..., bool]:
    """A policy saving what either policy saves."""
    for i, p in enumerate((policy_1, policy_2), 1):
        if not callable(p):
            raise TypeError(
                f"save_from_both_policies: expected policy_{i} to be a policy (a callable "
                f"prim, *avals, **params -> bool), got {type(p).__name__}."
            )

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return bool(policy_1(prim, *avals, **params)) or bool(policy_2(prim, *avals, **params))

    policy.__name__ = f"save_from_both_policies({policy_1.__name__}, {policy_2.__name__})"
    return policy


# ---------------------------------------------------------------------------
# The checkpoint primitive
# ---------------------------------------------------------------------------

remat_p = Primitive("checkpoint", multiple_results=True)


def _remat_impl(*args: Any, jaxpr: Jaxpr, **params: Any) -> list[Any]:
    return _run(jaxpr, args)


def _remat_abstract(*avals: ShapedArray, jaxpr: Jaxpr, **params: Any) -> list[ShapedArray]:
    return [v.aval for v in jaxpr.outvars]


core.impl_rules[remat_p] = _remat_impl
core.abstract_eval_rules[remat_p] = _remat_abstract


def _remat_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Jaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    """Forward mode: the JVP of the body, again under ``checkpoint``."""
    t = ad.tangent_aval
    nz = [type(d) is not Zero for d in tangents]
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [v.aval for v in jaxpr.outvars]
    n = len(primals)
    box: dict[str, list[bool]] = {}

    def body(*args: Any) -> list[Any]:
        p, d = args[:n], args[n:]
        outs, t_outs = ad.jvp_flat(
            lambda *a: _run(jaxpr, a), p, _fill(d, nz, list(map(t, in_avals)))
        )
        box["nz_out"] = [type(to) is not Zero for to in t_outs]
        return list(outs) + [to for to in t_outs if type(to) is not Zero]

    avals = in_avals + [t(a) for a, m in zip(in_avals, nz) if m]
    j, consts = _trace(body, avals, "checkpoint (jvp)")
    outs = remat_p.bind(
        *consts, *primals, *[d for d, m in zip(tangents, nz) if m], jaxpr=j, **params
    )
    k = len(out_avals)
    return outs[:k], _fill(outs[k:], box["nz_out"], list(map(t, out_avals)))


ad.jvp_rules[remat_p] = _remat_jvp


def _remat_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, jaxpr: Jaxpr, **params: Any
) -> tuple[list[Any], list[int]]:
    """vmap: the batched body (batch axes at 0), again under ``checkpoint``."""
    size = batching.batch_size(vals, bdims)

    def body(*a: Any) -> list[Any]:
        outs, dims = batching.vmap_flat(lambda *x: _run(jaxpr, x), size, a, bdims)
        return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, dims)]

    j, consts = _trace(body, [core.get_aval(v) for v in vals], "checkpoint (vmap)")
    outs = remat_p.bind(*consts, *vals, jaxpr=j, **params)
    return outs, [0] * len(outs)


batching.batching_rules[remat_p] = _remat_batch


def _saveable(policy: Callable[..., bool] | None, eqn: JaxprEqn) -> bool:
    """Whether ``policy`` allows saving the outputs of ``eqn``."""
    if policy is None:
        return False
    avals = [x.aval for x in eqn.inputs]
    try:
        return bool(policy(eqn.primitive, *avals, **eqn.params))
    except Exception as e:
        name = getattr(policy, "__name__", type(policy).__name__)
        raise TypeError(
            f"checkpoint: expected the policy {name} to take (primitive, *avals, "
            f"**params) and return a bool, got {type(e).__name__}: {e} for the "
            f"primitive '{eqn.primitive.name}'."
        ) from e


def _eval_freeing(jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
    """Run ``jaxpr`` on ``args``, freeing each value after its last use (the forward
    pass of a checkpoint keeps only what it returns)."""
    last: dict[Var, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for x in eqn.inputs:
            if type(x) is Var:
                last[x] = i
    outset = {x for x in jaxpr.outvars if type(x) is Var}
    env: dict[Var, Any] = dict(zip(jaxpr.invars, args))
    state = _debug.state
    prev = state.location
    try:
        for i, eqn in enumerate(jaxpr.eqns):
            if eqn.source is not None and eqn.source.phase != "backward":
                state.location = eqn.source.location
            vals = [env[x] if type(x) is Var else x.val for x in eqn.inputs]  # type: ignore
            out = eqn.primitive.bind(*vals, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, o in zip(eqn.out_binders, outs):
                if v in last or v in outset:
                    env[v] = o
            for x in eqn.inputs:
                if type(x) is Var and last.get(x) == i and x not in outset:
                    env.pop(x, None)
    finally:
        state.location = prev
    return [env[x] if type(x) is Var else x.val for x in jaxpr.outvars]  # type: ignore


def _split(
    lj: Jaxpr, n_known_in: int, n_out: int, policy: Callable[..., bool] | None
) -> tuple[Jaxpr, Jaxpr, list[Var]]:
    """Partial evaluation of the linearized body ``lj`` (inputs: the known values, then
    the tangents; outputs: the primal outputs, then the tangent outputs).

    Returns ``(fwd, tape, saved)``: ``fwd`` computes the primal outputs and ``saved``
    (the values ``policy`` allows that the tangent part reads) from the known inputs;
    ``tape`` computes the tangent outputs from the residuals (``saved`` and the known
    inputs it reads) and the tangents, recomputing every other known value it needs."""
    known_in = list(lj.invars[:n_known_in])
    unknown: set[Var] = set(lj.invars[n_known_in:])
    known_eqns: list[JaxprEqn] = []
    for e in lj.eqns:
        if any(type(x) is Var and x in unknown for x in e.inputs):
            unknown.update(e.out_binders)
        else:
            known_eqns.append(e)
    producer = {v: e for e in known_eqns for v in e.out_binders}
    is_known_in = set(known_in)
    stack = [x for x in lj.outvars[n_out:] if type(x) is Var and x not in unknown]
    for e in lj.eqns:
        if e.out_binders and e.out_binders[0] in unknown:
            stack.extend(x for x in e.inputs if type(x) is Var and x not in unknown)
    saved: list[Var] = []
    residual_in: set[Var] = set()
    recompute: set[int] = set()
    seen: set[Var] = set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in is_known_in:
            residual_in.add(v)
            continue
        e = producer[v]
        if _saveable(policy, e):
            saved.append(v)
        elif id(e) not in recompute:
            recompute.add(id(e))
            stack.extend(x for x in e.inputs if type(x) is Var)
    fwd = dce_jaxpr(Jaxpr((), tuple(known_in), tuple(known_eqns), (*lj.outvars[:n_out], *saved)))
    tape_eqns = tuple(
        e for e in lj.eqns if id(e) in recompute or (e.out_binders and e.out_binders[0] in unknown)
    )
    tape_in = (*saved, *[v for v in known_in if v in residual_in], *lj.invars[n_known_in:])
    tape = dce_jaxpr(Jaxpr((), tape_in, tape_eqns, tuple(lj.outvars[n_out:])))
    return fwd, tape, saved


def _remat_linearize(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: Jaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Callable[..., bool] | None,
) -> tuple[list[Any], list[Any]]:
    """Reverse mode: the body's linearization, split by ``policy`` (JAX's partial
    evaluation): the forward pass computes the outputs and the values the policy saves
    (of the body and of its derivative rules); the tape gets one ``checkpoint`` equation
    that recomputes the other values it needs from those and the operands, then applies
    the tangent map (its transpose recomputes, then runs the backward pass)."""
    t = ad.tangent_aval
    n = len(primals)
    nz = [type(d) is not Zero for d in tangents]
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [v.aval for v in jaxpr.outvars]
    box: dict[str, Any] = {}

    def lin_body(*args: Any) -> list[Any]:
        p, d = args[:n], args[n:]
        outs, lin, _ = ad.linearize_flat(
            lambda *a: _eval_freeing(jaxpr, a), p, nz, origin="checkpoint (linearize)"
        )
        box["out_zero"] = lin.out_zero
        return list(outs) + eval_jaxpr(lin.jaxpr, lin.consts, list(d))

    avals = in_avals + [t(a) for a, m in zip(in_avals, nz) if m]
    lj, consts = _trace(lin_body, avals, "checkpoint (linearize)")
    n_known = len(consts) + n
    fwd, tape, saved = _split(lj, n_known, len(out_avals), policy)
    known = [*consts, *primals]
    res = _eval_freeing(fwd, known)
    outs, saved_vals = res[: len(out_avals)], res[len(out_avals) :]
    value = dict(zip(lj.invars[:n_known], known))
    value.update(zip(saved, saved_vals))
    n_res = len(tape.invars) - sum(nz)
    live = [d for d, m in zip(tangents, nz) if m]
    t_out = remat_p.bind(
        *[value[v] for v in tape.invars[:n_res]],
        *live,
        jaxpr=tape,
        prevent_cse=prevent_cse,
        differentiated=True,
        policy=policy,
    )
    nz_out = [not z for z in box["out_zero"]]
    return outs, _fill(t_out, nz_out, list(map(t, out_avals)))


ad.linearize_rules[remat_p] = _remat_linearize


def _drop_unused(j: Jaxpr, args: list[Any]) -> tuple[Jaxpr, list[Any]]:
    """``j`` without the inputs it does not read, and ``args`` without their values: a
    value the backward pass does not need (a broadcast constant whose tangent was
    zero) is not kept for it."""
    used = {x for e in j.eqns for x in e.inputs if type(x) is Var}
    used.update(x for x in j.outvars if type(x) is Var)
    keep = [i for i, v in enumerate(j.invars) if v in used]
    if len(keep) == len(j.invars):
        return j, args
    invars = tuple(j.invars[i] for i in keep)
    return Jaxpr(j.constvars, invars, j.eqns, j.outvars), [args[i] for i in keep]


def _remat_transpose(cts: Sequence[Any], *invals: Any, jaxpr: Jaxpr, **params: Any) -> list[Any]:
    """The backward pass of a ``checkpoint`` linear in its undefined operands: a
    ``checkpoint`` that recomputes the forward values from the known operands, then
    transposes the tangent map."""
    lin = [ad.is_undefined_primal(x) for x in invals]
    known = [x for x, m in zip(invals, lin) if not m]
    known_vars = tuple(v for v, m in zip(jaxpr.invars, lin) if not m)
    lin_vars = tuple(v for v, m in zip(jaxpr.invars, lin) if m)
    view = Jaxpr(known_vars, lin_vars, jaxpr.eqns, jaxpr.outvars)
    out_avals = [v.aval for v in jaxpr.outvars]
    cts = [_inst(c, a) if c is not None else _inst(Zero(a), a) for c, a in zip(cts, out_avals)]
    nk = len(known)

    def bwd(*args: Any) -> list[Any]:
        res = ad.backward_pass(view, args[:nk], args[nk:], forward_known=True)
        return [_inst(r, v.aval) for r, v in zip(res, lin_vars)]

    known_avals = [v.aval for v in known_vars]
    j, consts = _trace(bwd, known_avals + out_avals, "checkpoint (transpose)")
    j, args = _drop_unused(j, [*consts, *known, *cts])
    outs = iter(remat_p.bind(*args, jaxpr=j, **{**params, "differentiated": True}))
    return [next(outs) if m else None for m in lin]


ad.transpose_rules[remat_p] = _remat_transpose
ad.linear_primitives.add(remat_p)


__all__ = [
    "checkpoint_name",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "name_p",
    "nothing_saveable",
    "remat_p",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
]
