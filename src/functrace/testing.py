"""Gradient checking: finite differences against forward and reverse mode.

``check_grads`` compares the JVP in random directions with central differences,
and the VJP with the JVP through the inner-product identity
``<vjp(ct), t> == <ct, jvp(t)>``; with ``order > 1`` it checks the derivative
functions themselves, recursively.

Finite differences are always taken in float64 (complex128): the inputs are cast up
and the function is evaluated at float64 points, so float16/float32 inputs get
accurate differences; the derivatives under test are computed at the inputs' own
dtype and compared with tolerances for the least precise float input (float64:
``1e-5``; float32: ``2e-3``; float16: ``2e-2``, other floats ``20 * eps``).
Integer and boolean inputs have no derivative (as in ``grad``): both functions raise
``TypeError`` naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import api, core
from functrace.ir import Jaxpr, JaxprEqn, Literal, eval_jaxpr, pp_eqn, var_namer
from functrace.tree_util import tree_flatten, tree_map, tree_unflatten

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _is_float(dt: np.dtype) -> bool:
    return dt.kind in "fc"


def _check_float_args(fname: str, args: Sequence[Any]) -> None:
    """Raise ``TypeError`` for an integer or boolean leaf, naming its argument."""
    for i, arg in enumerate(args):
        leaves = tree_flatten(arg)[0]
        for k, leaf in enumerate(leaves):
            dt = np.asarray(leaf).dtype
            if not _is_float(dt):
                where = f"argument {i}" + (f" (leaf {k})" if len(leaves) > 1 else "")
                raise TypeError(
                    f"{fname}: expected floating-point inputs, got dtype {dt.name} for {where}. "
                    f"Integer and boolean inputs have no derivative (grad raises for them "
                    f"too): cast them to float, or close over them in fun."
                )


def _precision(tree: Any) -> np.dtype:
    """The least precise real float dtype among the leaves of ``tree`` (float64 if none)."""
    dts = [np.asarray(x).dtype for x in tree_flatten(tree)[0]]
    reals = [np.dtype(np.finfo(d).dtype) for d in dts if _is_float(d)]
    return max(reals, key=lambda d: np.finfo(d).eps, default=_F64)


def _default_eps(dt: np.dtype) -> float:
    # the differences are float64 in any case; a larger step for low-precision inputs
    # keeps them accurate for functions that round to the input dtype inside
    return 1e-4 if dt == _F64 else 1e-3


def _default_tol(dt: np.dtype) -> float:
    """The default atol and rtol: the derivatives under test are computed in ``dt``."""
    if dt == _F64:
        return 1e-5
    if dt == _F32:
        return 2e-3
    return float(min(0.1, 20 * np.finfo(dt).eps))  # float16: 2e-2


def _upcast(tree: Any) -> Any:
    """Float leaves as float64 (complex as complex128) arrays; others unchanged."""

    def one(x: Any) -> Any:
        a = np.asarray(x)
        if a.dtype.kind == "f":
            return a.astype(np.float64)
        if a.dtype.kind == "c":
            return a.astype(np.complex128)
        return x

    return tree_map(one, tree)


def _cast_like(tree: Any, like: Any) -> Any:
    """The float leaves of ``tree`` in the dtypes of the leaves of ``like`` (arrays or
    tracers)."""

    def one(t: Any, x: Any) -> Any:
        dt = core.get_aval(x).dtype
        return np.asarray(t).astype(dt) if _is_float(dt) else t

    return tree_map(one, tree, like)


def _rand_like(rng: np.random.Generator, tree: Any) -> Any:
    def one(x: Any) -> Any:
        a = np.asarray(x)
        if a.dtype.kind not in "fc":
            return np.zeros(a.shape, a.dtype)
        return rng.standard_normal(a.shape).astype(a.dtype)

    return tree_map(one, tree)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_map(
        lambda u, v: (
            (np.asarray(v) + a * np.asarray(u)).astype(np.asarray(v).dtype)
            if np.asarray(v).dtype.kind in "fc"
            else v
        ),
        x,
        y,
    )


def _inner(x: Any, y: Any) -> float:
    xs, ys = tree_flatten(x)[0], tree_flatten(y)[0]
    return float(
        sum(
            np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)).real
            for a, b in zip(xs, ys)
            if np.asarray(a).dtype.kind in "fc"
        )
    )


def _sub(x: Any, y: Any) -> Any:
    return tree_map(lambda a, b: np.asarray(a, np.float64) - np.asarray(b, np.float64), x, y)


def _scale(a: float, x: Any) -> Any:
    return tree_map(lambda v: a * np.asarray(v, np.float64), x)


def numerical_jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float
) -> Any:
    """Central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, in float64: the
    float primals and tangents are cast up and ``fun`` is evaluated at float64 points."""
    primals, tangents = _upcast(tuple(primals)), _upcast(tuple(tangents))
    f_pos = fun(*_axpy(eps, tangents, primals))
    f_neg = fun(*_axpy(-eps, tangents, primals))
    return _scale(0.5 / eps, _sub(f_pos, f_neg))


def numerical_grad(
    fun: Callable[..., Any], args: Sequence[Any], eps: float | None = None
) -> tuple[Any, ...]:
    """The gradient of scalar ``fun`` at ``args`` by central differences, one element
    at a time (for teaching and small checks).

    The differences are taken in float64 (``fun`` is evaluated at float64 points) and
    the gradient is returned in each input's dtype. Integer or boolean inputs raise
    ``TypeError``, as ``grad`` does.

    >>> from functrace.testing import numerical_grad
    >>> round(float(numerical_grad(lambda x: x ** 2, (3.0,))[0]), 6)
    6.0
    """
    args = tuple(args)
    _check_float_args("numerical_grad", args)
    leaves, tree = tree_flatten(args)
    wide = tree_flatten(_upcast(args))[0]
    grads = []
    for i, x in enumerate(leaves):
        a = np.asarray(wide[i])
        h = eps if eps is not None else _default_eps(_precision(x))
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):

            def shifted(d: float, idx: Any = idx, i: int = i, a: np.ndarray = a) -> Any:
                b = a.copy()
                b[idx] += d
                new = list(wide)
                new[i] = b if a.shape else b[()]
                return float(np.asarray(fun(*tree_unflatten(tree, new))))

            g[idx] = (shifted(h) - shifted(-h)) / (2 * h)
        dt = np.asarray(x).dtype
        grads.append(g.astype(dt) if a.shape else dt.type(g[()]))
    return tuple(tree_unflatten(tree, grads))


def _assert_close(what: str, expected: Any, actual: Any, atol: float, rtol: float) -> None:
    e_leaves, a_leaves = tree_flatten(expected)[0], tree_flatten(actual)[0]
    for k, (e, a) in enumerate(zip(e_leaves, a_leaves)):
        e = np.asarray(e, np.float64)
        a = np.asarray(a, np.float64)
        if e.shape != a.shape:
            raise AssertionError(
                f"check_grads: {what}: expected shape {e.shape}, got {a.shape} (output leaf {k})."
            )
        if not np.allclose(a, e, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(a - e)) if e.size else 0.0
            raise AssertionError(
                f"check_grads: {what}: expected {np.array2string(e, precision=8)}, got "
                f"{np.array2string(a, precision=8)} (output leaf {k}, max abs error {err:.3g}, "
                f"atol={atol:g}, rtol={rtol:g})."
            )


def check_jvp(
    fun: Callable[..., Any],
    args: Sequence[Any],
    *,
    atol: float,
    rtol: float,
    eps: float,
    rng: np.random.Generator,
    order: int,
) -> None:
    """Check ``jvp(fun)`` at ``args`` in a random tangent direction against central
    finite differences with step ``eps``; raise ``AssertionError`` naming the mode and
    ``order`` if they differ by more than ``atol + rtol * |expected|``."""
    tangents = _rand_like(rng, tuple(args))
    _, t_out = api.jvp(fun, tuple(args), tangents)
    t_num = numerical_jvp(fun, args, tangents, eps)
    _assert_close(f"mode 'fwd', order {order}: JVP vs finite differences", t_num, t_out, atol, rtol)


def check_vjp(
    fun: Callable[..., Any],
    args: Sequence[Any],
    *,
    atol: float,
    rtol: float,
    eps: float,
    rng: np.random.Generator,
    order: int,
) -> None:
    """Check ``vjp(fun)`` at ``args`` by the inner-product identity
    ``<vjp(ct), t> == <ct, jvp(t)>`` for a random cotangent ``ct`` and tangent ``t``, the
    JVP by finite differences; raise ``AssertionError`` naming the mode and ``order``
    on a mismatch beyond ``atol``/``rtol``."""
    out, f_vjp = api.vjp(fun, *args)
    tangents = _rand_like(rng, tuple(args))
    ct = _rand_like(rng, out)
    cts_in = f_vjp(ct)
    t_num = numerical_jvp(fun, args, tangents, eps)
    lhs = _inner(cts_in, tangents)
    rhs = _inner(ct, t_num)
    _assert_close(
        f"mode 'rev', order {order}: <vjp(ct), t> vs <ct, numerical jvp(t)>",
        np.array(rhs),
        np.array(lhs),
        atol,
        rtol,
    )


def _tolerance(name: str, tol: Any, dt: np.dtype) -> float:
    """A tolerance given as a number, None (the default for ``dt``) or a dict from
    dtype to number (JAX's per-dtype form)."""
    if tol is None:
        return _default_tol(dt)
    if isinstance(tol, dict):
        table = {}
        for k, v in tol.items():
            try:
                table[np.dtype(k)] = float(v)
            except TypeError:
                raise TypeError(
                    f"check_grads: expected {name} dict keys that are dtypes, got {k!r}."
                ) from None
        return table.get(np.dtype(dt), _default_tol(dt))
    return float(tol)


# ---------------------------------------------------------------------------
# locate=True: which equation's derivative rule is wrong
# ---------------------------------------------------------------------------


def _literal_or(env: dict[Any, Any], x: Any) -> Any:
    return x.val if isinstance(x, Literal) else env[x]


def _eqn_function(eqn: JaxprEqn, ins: list[Any], pos: list[int]) -> Callable[..., Any]:
    """The equation as a function of its float inputs (at positions ``pos``; the others
    fixed to ``ins``) returning its float outputs."""

    def f(*xs: Any) -> list[Any]:
        vals = list(ins)
        for k, x in zip(pos, xs):
            vals[k] = x
        out = eqn.primitive.bind(*vals, **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        return [o for o, v in zip(outs, eqn.out_binders) if _is_float(v.aval.dtype)]

    return f


def _rule_owner(eqn: JaxprEqn, mode: str) -> str:
    """Which rule of ``eqn`` a failure in ``mode`` blames, in words."""
    name = eqn.primitive.name
    if name in ("custom_jvp_call", "custom_vjp_call"):
        key = "jvp" if name == "custom_jvp_call" else "fwd"
        rule = eqn.params[key]
        kind = name[: -len("_call")]
        fname = rule.__name__.split("_of_", 1)[-1]
        user = [u for u in getattr(rule, "user", ()) if u is not None]
        if kind == "custom_jvp":
            what = ", ".join(f"the JVP rule {core.describe_fun(u)}" for u in user)
        else:
            labels = ("fwd", "bwd")
            what = " or ".join(
                f"its {lab} {core.describe_fun(u)}" for lab, u in reversed(list(zip(labels, user)))
            )
        return f"the {kind} function '{fname}': {what or 'its rule'}"
    if mode == "fwd":
        return f"the JVP rule of the primitive '{name}'"
    return (
        f"the reverse-mode rules (linearize/transpose) of the primitive '{name}' "
        "(its JVP rule agrees with finite differences)"
    )


def _check_eqn(
    eqn: JaxprEqn, ins: list[Any], order: int, modes: Sequence[str], tol: dict[str, Any]
) -> tuple[str, str] | None:
    """(blame, message) if ``eqn``'s derivatives at ``ins`` disagree with finite
    differences of its impl, else None (also when it cannot be checked there)."""
    pos = [k for k, x in enumerate(ins) if _is_float(np.asarray(x).dtype)]
    if not pos or not any(_is_float(v.aval.dtype) for v in eqn.out_binders):
        return None
    f = _eqn_function(eqn, ins, pos)
    # Both modes, forward first, whatever the modes asked for: a wrong JVP rule breaks
    # reverse mode too, and the blame goes to the first rule that disagrees.
    for mode in ("fwd", "rev"):
        try:
            check_grads(f, [ins[k] for k in pos], order, (mode,), seed=1, **tol)
        except AssertionError as e:
            return _rule_owner(eqn, mode), str(e)
        except Exception:  # noqa: BLE001 - a mode the equation does not support
            continue
    return None


def _locate(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], order: int, modes: Any, tol: Any
) -> tuple[str, str, str] | None:
    """(blame, which equation, message) for the first equation of ``jaxpr`` (run at
    ``args``) whose rules are wrong; inside a failing ``cond`` the branch taken is
    searched, inside a failing ``scan`` its body, iteration by iteration."""
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for i, eqn in enumerate(jaxpr.eqns):
        ins = [_literal_or(env, x) for x in eqn.inputs]
        bad = _check_eqn(eqn, ins, order, modes, tol)
        if bad is not None:
            if eqn.primitive.name == "cond":
                idx = min(max(int(ins[0]), 0), len(eqn.params["branches"]) - 1)
                inner = _locate(eqn.params["branches"][idx], [], ins[1:], order, modes, tol)
                if inner is not None:
                    return inner[0], f"{inner[1]}, inside branch {idx} of a cond", inner[2]
            if eqn.primitive.name == "scan":
                inner = _locate_in_scan(eqn, ins, order, modes, tol)
                if inner is not None:
                    return inner
            return bad[0], f"equation {i} (`{pp_eqn(eqn, var_namer())}`)", bad[1]
        out = eqn.primitive.bind(*ins, **eqn.params)
        env.update(zip(eqn.out_binders, out if eqn.primitive.multiple_results else [out]))
    return None


def _locate_in_scan(
    eqn: JaxprEqn, ins: list[Any], order: int, modes: Any, tol: Any
) -> tuple[str, str, str] | None:
    """:func:`_locate` in the body of a failing ``scan``, iteration by iteration, at
    the values each iteration saw."""
    p = eqn.params
    body, nc, ncarry, length = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"]
    consts, carry, xs = ins[:nc], list(ins[nc : nc + ncarry]), ins[nc + ncarry :]
    for step in range(length):
        i = length - 1 - step if p["reverse"] else step
        args = [*consts, *carry, *[np.asarray(x)[i] for x in xs]]
        inner = _locate(body, [], args, order, modes, tol)
        if inner is not None:
            return inner[0], f"{inner[1]}, inside iteration {i} of a scan body", inner[2]
        carry = list(eval_jaxpr(body, [], args)[:ncarry])
    return None


def _located_error(
    fun: Callable[..., Any],
    args: tuple[Any, ...],
    err: AssertionError,
    order: int,
    modes: Any,
    tol: dict[str, Any],
) -> AssertionError:
    """``err`` with the equation of ``fun`` whose rule is wrong named."""
    where = core.describe_fun(fun)
    try:
        closed = api.make_jaxpr(fun)(*args)
    except Exception as e:  # noqa: BLE001 - e.g. Python control flow on values
        return AssertionError(
            f"{err}\nlocate=True: could not trace {where} to recheck its equations "
            f"({type(e).__name__}: {e})."
        )
    found = _locate(closed.jaxpr, closed.consts, tree_flatten(args)[0], order, modes, tol)
    if found is None:
        return AssertionError(
            f"{err}\nlocate=True: every equation of {where} has derivatives that agree "
            "with finite differences at the values it saw (equations inside while_loop "
            "bodies are checked as whole loops); is it a pure function of its arguments?"
        )
    blame, eqn, msg = found
    return AssertionError(
        f"check_grads(locate=True): in {where}, {eqn} is the first equation whose "
        f"derivatives disagree with finite differences at the values it saw; wrong: "
        f"{blame}. {msg}\n(the check of {where} itself: {err})"
    )


def check_grads(
    fun: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | dict[Any, float] | None = None,
    rtol: float | dict[Any, float] | None = None,
    eps: float | None = None,
    seed: int = 0,
    locate: bool = False,
) -> None:
    """Check ``fun``'s derivatives at ``args`` against finite differences, up to ``order``.

    Raises ``AssertionError`` naming the mode, the order and the mismatching values,
    and ``TypeError`` for integer or boolean inputs. The finite differences are taken
    in float64; the default ``atol``/``rtol`` follow the least precise float input
    (see the module notes). ``atol``/``rtol`` may be dicts from dtype to tolerance
    (``{np.float32: 1e-3, np.float64: 1e-6}``): the entry for that least precise input
    dtype is used, the default when it has none.

    With ``locate=True``, when the check fails, each equation of ``fun``'s jaxpr is
    checked the same way at the values it saw (its JVP rule, then its reverse-mode
    rules, against finite differences of its impl; inside a failing ``cond`` the
    branch it took, inside a failing ``scan`` its body at each iteration's values),
    and the ``AssertionError`` names the first one whose rule is wrong: the primitive,
    or for a ``custom_jvp``/``custom_vjp`` function its rule functions with their
    ``file:line``, with the size of the discrepancy. A check that passes does exactly
    what it does without ``locate``.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> ft.check_grads(fnp.sin, (1.0,), order=2)
    """
    args = tuple(args)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: expected modes from ('fwd', 'rev'), got {m!r}.")
    _check_float_args("check_grads", args)
    if not isinstance(locate, bool):
        raise TypeError(f"check_grads: expected locate to be a bool, got {type(locate).__name__}.")
    dt = _precision(args)
    atol = _tolerance("atol", atol, dt)
    rtol = _tolerance("rtol", rtol, dt)
    eps = _default_eps(dt) if eps is None else eps
    rng = np.random.default_rng(seed)

    # The derivative functions checked at the next order are evaluated both at args and
    # (by the finite differences) at float64 points: their fixed tangent / cotangent
    # takes the dtype of the point.
    def jvp_of(f: Callable[..., Any], t: Any) -> Callable[..., Any]:
        return lambda *a: api.jvp(f, a, _cast_like(t, a))[1]

    def vjp_of(f: Callable[..., Any], ct: Any) -> Callable[..., Any]:
        def g(*a: Any) -> Any:
            out, f_vjp = api.vjp(f, *a)
            return f_vjp(_cast_like(ct, out))

        return g

    def check(f: Callable[..., Any], level: int) -> None:
        if "fwd" in modes:
            check_jvp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng, order=level)
            if level < order:
                check(jvp_of(f, _rand_like(rng, args)), level + 1)
        if "rev" in modes:
            check_vjp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng, order=level)
            if level < order:
                check(vjp_of(f, _rand_like(rng, f(*args))), level + 1)

    if not locate:
        check(fun, 1)
        return
    try:
        check(fun, 1)
    except AssertionError as e:
        tol = {"atol": atol, "rtol": rtol, "eps": eps}
        raise _located_error(fun, args, e, order, tuple(modes), tol) from None


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_grad", "numerical_jvp"]
