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


def check_grads(
    fun: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | dict[Any, float] | None = None,
    rtol: float | dict[Any, float] | None = None,
    eps: float | None = None,
    seed: int = 0,
) -> None:
    """Check ``fun``'s derivatives at ``args`` against finite differences, up to ``order``.

    Raises ``AssertionError`` naming the mode, the order and the mismatching values,
    and ``TypeError`` for integer or boolean inputs. The finite differences are taken
    in float64; the default ``atol``/``rtol`` follow the least precise float input
    (see the module notes). ``atol``/``rtol`` may be dicts from dtype to tolerance
    (``{np.float32: 1e-3, np.float64: 1e-6}``): the entry for that least precise input
    dtype is used, the default when it has none.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> ft.check_grads(fnp.sin, (1.0,), order=2)
    """
    args = tuple(args)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: expected modes from ('fwd', 'rev'), got {m!r}.")
    _check_float_args("check_grads", args)
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

    check(fun, 1)


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_grad", "numerical_jvp"]
