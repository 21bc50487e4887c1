"""The ``checkify`` interpreter: a jaxpr run with the running ``Error`` beside its values.

:func:`checkify_jaxpr` evaluates a jaxpr equation by equation, binding each primitive
(so it runs eagerly on concrete values and is traced by any transform around it:
``jit``, ``vmap``, ``grad``), and threads an :class:`Error` through:

- ``check`` equations are taken apart into the running error (their error classes
  that are enabled; the others are dropped, as JAX does);
- with the automatic checks enabled, the primitives that can make a NaN (JAX's list
  in functrace's names) add a NaN check of their outputs, ``div`` a check of its
  divisor, and ``gather``, the scatters, ``dynamic_slice`` and
  ``dynamic_update_slice`` a bounds check of their indices;
- ``cond``, ``while`` and ``scan`` are bound again with bodies that carry the error's
  values in and out. Which slots the error needs inside a body is known before
  tracing it (:func:`jaxpr_effects`), so a body is traced once. A ``while`` checks its
  predicate on the initial carry before the loop and after every step (as JAX);
- a ``custom_jvp``/``custom_vjp`` function or a ``checkpoint`` whose body can fail is
  checked on a second evaluation of its body (its inputs under ``stop_gradient``),
  and the call itself is bound as it was, so its custom rule still applies;
- any other primitive holding a jaxpr (the reverse-mode loops, ``custom_vmap``...)
  is bound with the ``check`` equations of its bodies left out: they are duplicates
  of the forward program's, or cannot be checked there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax  # noqa: F401 - every primitive registered (NaN rules)
from functrace import numpy as fnp
from functrace.core import Primitive, ShapedArray
from functrace.custom_derivatives._jvp import custom_jvp_call_p
from functrace.custom_derivatives._vjp import custom_vjp_call_p
from functrace.experimental._checkify_error import (
    DivisionByZeroError,
    Error,
    ErrorEffect,
    ErrorInfo,
    FailedCheckError,
    NaNError,
    OOBError,
    assert_func,
    check_p,
)
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from functrace.lax import elementwise as lax_ew
from functrace.lax import gather_scatter as gs
from functrace.lax import indexing as lax_ix
from functrace.lax.control_flow.cond_switch import cond_p
from functrace.lax.control_flow.scan_map import scan_p
from functrace.lax.control_flow.while_fori import while_p
from functrace.lax.remat import remat_p
from functrace.tree_util import tree_flatten, tree_unflatten

Rule = Callable[[Primitive, Error, frozenset, list[Any], dict[str, Any]], tuple[Error, Any]]
_rules: dict[Primitive, Rule] = {}
_effect_rules: dict[Primitive, Callable[[Any, frozenset], set[ErrorEffect]]] = {}

# ---------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------


def checkify_jaxpr(
    jaxpr: Jaxpr, consts: Sequence[Any], enabled: frozenset, error: Error, args: Sequence[Any]
) -> tuple[Error, list[Any]]:
    """Run ``jaxpr`` on ``consts`` and ``args`` from ``error``: the error after it and
    its outputs."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        invals = [env[x] if type(x) is Var else x.val for x in eqn.inputs]  # type: ignore
        rule = _rules.get(eqn.primitive, _default_rule)
        error, out = rule(eqn.primitive, error, enabled, invals, eqn.params)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.out_binders, out))
        else:
            env[eqn.out_binders[0]] = out
    return error, [env[x] if type(x) is Var else x.val for x in jaxpr.outvars]  # type: ignore


def jaxpr_effects(jaxpr: Jaxpr, enabled: frozenset) -> set[ErrorEffect]:
    """The error slots running ``jaxpr`` under :func:`checkify_jaxpr` may fill."""
    out: set[ErrorEffect] = set()
    for eqn in jaxpr.eqns:
        rule = _effect_rules.get(eqn.primitive)
        if rule is not None:
            out |= rule(eqn, enabled)
        else:
            for j in _sub_jaxprs(eqn.params):
                out |= jaxpr_effects(j, enabled)
    return out


def _sub_jaxprs(v: Any) -> list[Jaxpr]:
    if isinstance(v, dict):
        return [j for x in v.values() for j in _sub_jaxprs(x)]
    if isinstance(v, ClosedJaxpr):
        return [v.jaxpr]
    if isinstance(v, Jaxpr):
        return [v]
    if isinstance(v, (tuple, list)):
        return [j for x in v for j in _sub_jaxprs(x)]
    return []


def _default_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    return error, prim.bind(*invals, **_strip_params(params))


def _strip_params(params: dict[str, Any]) -> dict[str, Any]:
    if not any(_has_check(j) for j in _sub_jaxprs(params)):
        return params
    return {k: _strip(v) for k, v in params.items()}


def _has_check(jaxpr: Jaxpr) -> bool:
    return any(
        e.primitive is check_p or any(_has_check(j) for j in _sub_jaxprs(e.params))
        for e in jaxpr.eqns
    )


def _strip(v: Any) -> Any:
    """``v`` with the ``check`` equations of every jaxpr in it left out."""
    if isinstance(v, ClosedJaxpr):
        return ClosedJaxpr(_strip(v.jaxpr), v.consts)
    if isinstance(v, Jaxpr):
        if not _has_check(v):
            return v
        eqns = tuple(
            e._replace(params=_strip_params(e.params)) for e in v.eqns if e.primitive is not check_p
        )
        return Jaxpr(v.constvars, v.invars, eqns, v.outvars)
    if isinstance(v, tuple):
        return tuple(_strip(x) for x in v)
    return v


def _trace_body(
    fun: Callable[..., list[Any]], avals: Sequence[ShapedArray], origin: str
) -> tuple[Jaxpr, list[Any]]:
    """``fun`` traced to a jaxpr whose captured constants are leading inputs."""
    closed, _ = trace_to_jaxpr(fun, [a.update() for a in avals], origin=origin)
    j = closed.jaxpr
    return Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), list(closed.consts)


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [core.get_aval(x) for x in xs]


def _same_slots(before: Error, after: Error, where: str) -> None:
    if after.effects != before.effects:  # pragma: no cover - jaxpr_effects is exact
        raise AssertionError(f"checkify: the error slots of {where} changed while tracing it")


# ---------------------------------------------------------------------------
# check: the error it holds joins the running error
# ---------------------------------------------------------------------------


def _check_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    new = tree_unflatten(params["err_tree"], invals)
    for e in new.effects:
        if e.error_type in enabled:
            error = error.update(e, new._pred[e], new._code[e], {}, new._payload[e])
    return error.with_metadata(new._metadata), np.zeros((), np.bool_)


def _check_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    new = tree_unflatten(eqn.params["err_tree"], [x.aval for x in eqn.inputs])
    return {e for e in new.effects if e.error_type in enabled}


_rules[check_p] = _check_rule
_effect_rules[check_p] = _check_effects

# ---------------------------------------------------------------------------
# NaN and division checks
# ---------------------------------------------------------------------------

_NAN_EFFECT = ErrorEffect(NaNError, ())
_DIV_EFFECT = ErrorEffect(DivisionByZeroError, ())
_OOB_EFFECT = ErrorEffect(OOBError, (((3,), np.dtype(np.int32).str),))

# The primitives that can make a NaN: JAX's list, in functrace's names (a name that is
# no primitive here is skipped).
NAN_PRIMITIVES = (
    "acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt "
    "conv_general_dilated cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma "
    "dot_general erf_inv erf erfc exp expm1 fft igamma_grad_a igamma igammac integer_pow "
    "lgamma log1p log logistic mul pad pow psum reduce_prod reduce_sum reduce_window "
    "reduce_window_sum betainc rem rng_uniform rsqrt sin sinh sqrt sub tan tanh div"
).split()


def _float_outputs(avals: Sequence[ShapedArray]) -> bool:
    return any(a.dtype.kind in "fc" for a in avals)


def check_nans(prim: Primitive, error: Error, enabled: frozenset, out: Any) -> Error:
    """``error`` with a NaN check of ``prim``'s float outputs ``out``."""
    if NaNError not in enabled:
        return error
    outs = [o for o in (out if prim.multiple_results else [out]) if core.dtype_of(o).kind in "fc"]
    if not outs:
        return error
    anys = [fnp.any(fnp.isnan(o)) for o in outs]
    pred = anys[0]
    for a in anys[1:]:
        pred = fnp.logical_or(pred, a)
    return assert_func(error, pred, ErrorInfo(NaNError, (prim.name,)), [])


def _nan_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    return check_nans(prim, error, enabled, out), out


def _nan_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    if NaNError in enabled and _float_outputs([v.aval for v in eqn.out_binders]):
        return {_NAN_EFFECT}
    return set()


def _div_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    if DivisionByZeroError in enabled:
        zero = fnp.any(fnp.equal(invals[1], 0))
        error = assert_func(error, zero, ErrorInfo(DivisionByZeroError, ()), [])
    return _nan_rule(prim, error, enabled, invals, params)


def _div_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    return ({_DIV_EFFECT} if DivisionByZeroError in enabled else set()) | _nan_effects(eqn, enabled)


def _register_nan_rules() -> None:
    by_name = {p.name: p for p in core.impl_rules}  # every lax primitive is imported here
    for name in NAN_PRIMITIVES:
        p = by_name.get(name)
        if p is not None:
            _rules[p] = _div_rule if name == "div" else _nan_rule
            _effect_rules[p] = _div_effects if name == "div" else _nan_effects


_register_nan_rules()

# ---------------------------------------------------------------------------
# Index checks
# ---------------------------------------------------------------------------


def _oob_error(
    error: Error,
    name: str,
    shape: tuple[int, ...],
    starts: Sequence[Any],
    axes: Sequence[int],
    highest: Sequence[int],
    wrap: bool,
) -> Error:
    """``error`` with a bounds check of ``starts`` (one index array per axis of
    ``axes``, of one shape; ``wrap``: negatives count from the end first, as
    functrace's gathers and scatters take them), each in ``[0, highest[k]]``. The
    payload is JAX's: the first index out of bounds (in C order, axes last), its axis
    and the axis size."""
    cols, masks = [], []
    for s, a, hi in zip(starts, axes, highest):
        s = fnp.asarray(s).astype(np.int64)
        if wrap:
            s = fnp.where(s < 0, s + shape[a], s)
        cols.append(s)
        masks.append(fnp.logical_or(s < 0, s > hi))
    mask = fnp.stack(masks, axis=-1).ravel()
    if mask.shape[0] == 0:
        return error
    vals = fnp.stack(cols, axis=-1).ravel()
    first = fnp.argmax(mask)
    k = first % len(axes)
    axis = fnp.asarray(np.array(axes, np.int64))[k]
    size = fnp.asarray(np.array([shape[a] for a in axes], np.int64))[k]
    payload = fnp.stack([vals[first], axis, size]).astype(np.int32)
    return assert_func(error, fnp.any(mask), ErrorInfo(OOBError, (name, tuple(shape))), [payload])


def _gather_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    if OOBError in enabled:
        operand, *indices = invals
        shape, axes = core.get_aval(operand).shape, params["axes"]
        error = _oob_error(
            error, prim.name, shape, indices, axes, [shape[a] - 1 for a in axes], True
        )
    return error, out


def _scatter_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    if OOBError in enabled:  # as JAX: the NaN check of a scatter comes with index_checks
        operand, _, *indices = invals
        shape, axes = core.get_aval(operand).shape, params["axes"]
        error = _oob_error(
            error, prim.name, shape, indices, axes, [shape[a] - 1 for a in axes], True
        )
        error = check_nans(prim, error, enabled, out)
    return error, out


def _dynamic_slice_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    if OOBError in enabled and invals[1:]:
        operand, *starts = invals
        shape = core.get_aval(operand).shape
        sizes = params["slice_sizes"]
        highest = [d - n for d, n in zip(shape, sizes)]
        error = _oob_error(error, prim.name, shape, starts, range(len(shape)), highest, False)
    return error, out


def _dynamic_update_slice_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    if OOBError in enabled and invals[2:]:
        operand, update, *starts = invals
        shape, sizes = core.get_aval(operand).shape, core.get_aval(update).shape
        highest = [d - n for d, n in zip(shape, sizes)]
        error = _oob_error(error, prim.name, shape, starts, range(len(shape)), highest, False)
    return error, out


def _oob_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    return {_OOB_EFFECT} if OOBError in enabled else set()


def _scatter_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    if OOBError not in enabled:
        return set()
    return {_OOB_EFFECT} | _nan_effects(eqn, enabled)


def _register_index_rules() -> None:
    for p, rule, effects in (
        (gs.gather_p, _gather_rule, _oob_effects),
        (lax_ix.dynamic_slice_p, _dynamic_slice_rule, _oob_effects),
        (lax_ix.dynamic_update_slice_p, _dynamic_update_slice_rule, _oob_effects),
        (gs.scatter_p, _scatter_rule, _scatter_effects),
        (gs.scatter_add_p, _scatter_rule, _scatter_effects),
        (gs.scatter_mul_p, _scatter_rule, _scatter_effects),
        (gs.scatter_min_p, _scatter_rule, _scatter_effects),
        (gs.scatter_max_p, _scatter_rule, _scatter_effects),
    ):
        _rules[p] = rule
        _effect_rules[p] = effects


_register_index_rules()

# ---------------------------------------------------------------------------
# Control flow: bodies that carry the error's values
# ---------------------------------------------------------------------------


def _checked_body(
    jaxpr: Jaxpr,
    enabled: frozenset,
    error: Error,
    split: Callable[[list[Any]], tuple[list[Any], list[Any]]],
    metadata: dict[int, ErrorInfo],
    where: str,
    then: Callable[[Error, list[Any], list[Any]], Error] | None = None,
) -> Callable[..., list[Any]]:
    """A body function ``(*args) -> [*error values, *outputs]`` running ``jaxpr`` under
    the interpreter; ``split(args)`` gives (the error's values, the jaxpr's inputs).
    The metadata of the codes it draws is added to ``metadata``."""
    _, tree = tree_flatten(error)

    def body(*args: Any) -> list[Any]:
        err_vals, ins = split(list(args))
        err = tree_unflatten(tree, err_vals)
        err, outs = checkify_jaxpr(jaxpr, (), enabled, err, ins)
        if then is not None:
            err = then(err, list(args), outs)
        _same_slots(error, err, where)
        metadata.update(err._metadata)
        return [*tree_flatten(err)[0], *outs]

    return body


def _cond_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    index, *ops = invals
    branches: tuple[Jaxpr, ...] = params["branches"]
    effects: set[ErrorEffect] = set().union(*(jaxpr_effects(b, enabled) for b in branches))
    if not effects:
        return _default_rule(prim, error, enabled, invals, params)
    error = error.with_placeholders(effects)
    leaves = tree_flatten(error)[0]
    n = len(leaves)
    metadata: dict[int, ErrorInfo] = {}
    traced = [
        _trace_body(
            _checked_body(b, enabled, error, lambda a: (a[:n], a[n:]), metadata, "a cond branch"),
            _avals([*leaves, *ops]),
            f"checkify (cond branch {k})",
        )
        for k, b in enumerate(branches)
    ]
    new_branches, consts = _share_consts(traced)
    outs = cond_p.bind(index, *consts, *leaves, *ops, **{**params, "branches": new_branches})
    return tree_unflatten(tree_flatten(error)[1], outs[:n]).with_metadata(metadata), outs[n:]


def _share_consts(traced: list[tuple[Jaxpr, list[Any]]]) -> tuple[tuple[Jaxpr, ...], list[Any]]:
    """Branches taking their own captured constants first as branches taking every
    branch's constants first (each ignoring the others')."""
    all_consts = [c for _, cs in traced for c in cs]
    avals = _avals(all_consts)
    out, offset = [], 0
    for j, cs in traced:
        own = j.invars[: len(cs)]
        before = tuple(Var(a) for a in avals[:offset])
        after = tuple(Var(a) for a in avals[offset + len(cs) :])
        invars = (*before, *own, *after, *j.invars[len(cs) :])
        out.append(Jaxpr((), invars, j.eqns, j.outvars))
        offset += len(cs)
    return tuple(out), all_consts


def _cond_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    return set().union(*(jaxpr_effects(b, enabled) for b in eqn.params["branches"]))


def _while_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    cj: Jaxpr = params["cond_jaxpr"]
    bj: Jaxpr = params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    effects = jaxpr_effects(bj, enabled) | jaxpr_effects(cj, enabled)
    if not effects:
        return _default_rule(prim, error, enabled, invals, params)
    c_consts, b_consts, carry = invals[:nc], invals[nc : nc + nb], invals[nc + nb :]
    # the predicate on the initial carry, then after every step (as JAX)
    error, _ = checkify_jaxpr(cj, (), enabled, error, [*c_consts, *carry])
    error = error.with_placeholders(effects)
    leaves = tree_flatten(error)[0]
    n = len(leaves)
    metadata: dict[int, ErrorInfo] = {}

    def split(a: list[Any]) -> tuple[list[Any], list[Any]]:  # cc, bc, err, carry
        return a[nc + nb : nc + nb + n], a[nc : nc + nb] + a[nc + nb + n :]

    def then(err: Error, args: list[Any], outs: list[Any]) -> Error:
        return checkify_jaxpr(cj, (), enabled, err, [*args[:nc], *outs])[0]

    body = _checked_body(bj, enabled, error, split, metadata, "a while_loop body", then)
    body_j, body_consts = _trace_body(
        body, _avals([*c_consts, *b_consts, *leaves, *carry]), "checkify (while_loop body)"
    )
    plain_cond = _strip(cj)

    def cond(*args: Any) -> list[Any]:  # cc, err, carry
        return eval_jaxpr(plain_cond, (), [*args[:nc], *args[nc + n :]])

    cond_j, cond_consts = _trace_body(
        cond, _avals([*c_consts, *leaves, *carry]), "checkify (while_loop predicate)"
    )
    outs = prim.bind(
        *cond_consts,
        *c_consts,
        *body_consts,
        *c_consts,
        *b_consts,
        *leaves,
        *carry,
        **{
            **params,
            "cond_jaxpr": cond_j,
            "body_jaxpr": body_j,
            "cond_nconsts": len(cond_consts) + nc,
            "body_nconsts": len(body_consts) + nc + nb,
        },
    )
    return tree_unflatten(tree_flatten(error)[1], outs[:n]).with_metadata(metadata), outs[n:]


def _while_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    p = eqn.params
    return jaxpr_effects(p["body_jaxpr"], enabled) | jaxpr_effects(p["cond_jaxpr"], enabled)


def _scan_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    jaxpr: Jaxpr = params["jaxpr"]
    effects = jaxpr_effects(jaxpr, enabled)
    if not effects:
        return _default_rule(prim, error, enabled, invals, params)
    nc, ncarry = params["num_consts"], params["num_carry"]
    consts, rest = invals[:nc], invals[nc:]
    error = error.with_placeholders(effects)
    leaves = tree_flatten(error)[0]
    n = len(leaves)
    metadata: dict[int, ErrorInfo] = {}

    def split(a: list[Any]) -> tuple[list[Any], list[Any]]:  # consts, err, carry, xs
        return a[nc : nc + n], a[:nc] + a[nc + n :]

    body = _checked_body(jaxpr, enabled, error, split, metadata, "a scan body")
    x_avals = [a.update(shape=a.shape[1:]) for a in _avals(rest[ncarry:])]
    avals = [*_avals(consts), *_avals(leaves), *_avals(rest[:ncarry]), *x_avals]
    body_j, body_consts = _trace_body(body, avals, "checkify (scan body)")
    lin = tuple(params["linear"])
    outs = prim.bind(
        *body_consts,
        *consts,
        *leaves,
        *rest,
        **{
            **params,
            "jaxpr": body_j,
            "num_consts": len(body_consts) + nc,
            "num_carry": n + ncarry,
            "linear": (False,) * len(body_consts) + lin[:nc] + (False,) * n + lin[nc:],
        },
    )
    return tree_unflatten(tree_flatten(error)[1], outs[:n]).with_metadata(metadata), outs[n:]


def _scan_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    return jaxpr_effects(eqn.params["jaxpr"], enabled)


_rules[cond_p] = _cond_rule
_effect_rules[cond_p] = _cond_effects
_rules[while_p] = _while_rule
_effect_rules[while_p] = _while_effects
_rules[scan_p] = _scan_rule
_effect_rules[scan_p] = _scan_effects

# ---------------------------------------------------------------------------
# Custom derivatives and checkpoint: checked on a second run of their body
# ---------------------------------------------------------------------------


def _body_of(params: dict[str, Any]) -> tuple[Jaxpr, list[Any]] | None:
    for key in ("call_jaxpr", "jaxpr"):
        v = params.get(key)
        if isinstance(v, ClosedJaxpr):
            return v.jaxpr, list(v.consts)
        if isinstance(v, Jaxpr):
            return v, []
    return None  # pragma: no cover - every registered primitive has one


def _rerun_rule(
    prim: Primitive, error: Error, enabled: frozenset, invals: list[Any], params: dict[str, Any]
) -> tuple[Error, Any]:
    body = _body_of(params)
    if body is not None and len(body[0].invars) == len(invals):
        jaxpr, consts = body
        if jaxpr_effects(jaxpr, enabled):
            args = [lax_ew.stop_gradient(x) if core.dtype_of(x).kind in "fc" else x for x in invals]
            error, _ = checkify_jaxpr(jaxpr, consts, enabled, error, args)
    return _default_rule(prim, error, enabled, invals, params)


def _rerun_effects(eqn: Any, enabled: frozenset) -> set[ErrorEffect]:
    body = _body_of(eqn.params)
    if body is None or len(body[0].invars) != len(eqn.inputs):
        return set()
    return jaxpr_effects(body[0], enabled)


def _register_rerun_rules() -> None:
    for p in (custom_jvp_call_p, custom_vjp_call_p, remat_p):
        _rules[p] = _rerun_rule
        _effect_rules[p] = _rerun_effects


_register_rerun_rules()


KNOWN_ERROR_TYPES = frozenset({FailedCheckError, NaNError, DivisionByZeroError, OOBError})

__all__ = ["KNOWN_ERROR_TYPES", "checkify_jaxpr", "jaxpr_effects"]
