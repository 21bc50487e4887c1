"""Gradient checking: finite differences against forward and reverse mode.

``check_grads`` compares the JVP in random directions with central differences,
and the VJP with the JVP through the inner-product identity
``<vjp(ct), t> == <ct, jvp(t)>``; with ``order > 1`` it checks the derivative
functions themselves, recursively.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import api
from functrace.tree_util import tree_flatten, tree_map, tree_unflatten

_DEFAULT_EPS = {np.dtype(np.float64): 1e-4, np.dtype(np.float32): 3e-3}
_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 3e-2}


def _dtype_of(tree: Any) -> np.dtype:
    leaves = tree_flatten(tree)[0]
    dts = [np.asarray(x).dtype for x in leaves if np.asarray(x).dtype.kind in "fc"]
    if not dts:
        return np.dtype(np.float64)
    return np.dtype(np.float32) if all(d == np.float32 for d in dts) else np.dtype(np.float64)


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
    """Central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``."""
    f_pos = fun(*_axpy(eps, tangents, primals))
    f_neg = fun(*_axpy(-eps, tangents, primals))
    return _scale(0.5 / eps, _sub(f_pos, f_neg))


def numerical_grad(
    fun: Callable[..., Any], args: Sequence[Any], eps: float | None = None
) -> tuple[Any, ...]:
    """The gradient of scalar ``fun`` at ``args`` by central differences, one element
    at a time (for teaching and small checks).

    >>> from functrace.testing import numerical_grad
    >>> round(float(numerical_grad(lambda x: x ** 2, (3.0,))[0]), 6)
    6.0
    """
    args = tuple(args)
    eps = eps if eps is not None else _DEFAULT_EPS[_dtype_of(args)]
    leaves, tree = tree_flatten(args)
    grads = []
    for i, x in enumerate(leaves):
        a = np.asarray(x, dtype=np.float64)
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):

            def shifted(
                d: float,
                idx: Any = idx,
                i: int = i,
                a: np.ndarray = a,
                dt: np.dtype = np.asarray(x).dtype,
            ) -> Any:
                b = a.copy()
                b[idx] += d
                new = list(leaves)
                new[i] = b.astype(dt) if a.shape else dt.type(b[()])
                return float(np.asarray(fun(*tree_unflatten(tree, new))))

            g[idx] = (shifted(eps) - shifted(-eps)) / (2 * eps)
        grads.append(g.astype(np.asarray(x).dtype) if a.shape else g[()])
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


def check_grads(
    fun: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
) -> None:
    """Check ``fun``'s derivatives at ``args`` against finite differences, up to ``order``.

    Raises ``AssertionError`` naming the mode, the order and the mismatching values.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> ft.check_grads(fnp.sin, (1.0,), order=2)
    """
    args = tuple(args)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: expected modes from ('fwd', 'rev'), got {m!r}.")
    dt = _dtype_of(args)
    atol = _DEFAULT_TOL[dt] if atol is None else atol
    rtol = _DEFAULT_TOL[dt] if rtol is None else rtol
    eps = _DEFAULT_EPS[dt] if eps is None else eps
    rng = np.random.default_rng(seed)

    def check(f: Callable[..., Any], level: int) -> None:
        if "fwd" in modes:
            check_jvp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng, order=level)
            if level < order:
                t = _rand_like(rng, args)
                check(lambda *a: api.jvp(f, a, t)[1], level + 1)
        if "rev" in modes:
            check_vjp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng, order=level)
            if level < order:
                ct = _rand_like(rng, f(*args))
                check(lambda *a: api.vjp(f, *a)[1](ct), level + 1)

    check(fun, 1)


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_grad", "numerical_jvp"]
