"""``functrace.experimental.jet``: Taylor-mode derivatives (JAX's
``jax.experimental.jet.jet``).

``jet(fun, primals, series)`` pushes a truncated Taylor series through ``fun``: with the
input path ``x(t) = x0 + x1 t + x2 t^2 / 2! + ... + xK t^K / K!`` (``primals`` the
``x0``, ``series`` the lists ``[x1, ..., xK]``), it returns ``fun(x0)`` and the
derivatives ``[d/dt f(x(t)), ..., d^K/dt^K f(x(t))]`` at ``t = 0``, as JAX's ``jet``.
functrace computes them by nesting ``jvp`` along ``t`` (exact, and composing with every
transform and custom rule), whose cost grows as ``2^K``: fine for the low orders
programs ask for; JAX's propagation rules grow as ``K^2``.

>>> import functrace.numpy as fnp
>>> y0, (y1, y2) = jet(fnp.exp, (0.5,), ((1.0, 2.0),))
>>> round(float(y1), 6), round(float(y2), 6)
(1.648721, 4.946164)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._array import to_array
from functrace.api import jvp
from functrace.numpy._core import asarray_or_tracer
from functrace.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["jet"]


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any]) -> Any:
    """``(fun(*primals), series_out)``: the derivatives of ``fun`` along the Taylor path
    that ``primals`` and ``series`` describe (see the module docstring). ``series`` has
    one list of ``K`` terms per primal, each of the primal's shape and dtype;
    ``series_out`` has ``fun``'s output structure with a list of ``K`` terms at each
    leaf."""
    fname = "jet"
    if not callable(fun):
        raise TypeError(f"{fname}: expected a callable fun, got {type(fun).__name__}.")
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(
            f"{fname}: expected primals and series as tuples (one entry per argument), got "
            f"{type(primals).__name__} and {type(series).__name__}."
        )
    if len(primals) != len(series):
        raise ValueError(
            f"{fname}: expected one series per primal, got {len(primals)} primals and "
            f"{len(series)} series."
        )
    xs = [asarray_or_tracer(p, fname) for p in primals]
    terms = [[asarray_or_tracer(c, fname) for c in s] for s in series]
    orders = {len(s) for s in terms}
    if len(orders) > 1:
        raise ValueError(
            f"{fname}: expected every series to have the same number of terms, got "
            f"{sorted(len(s) for s in terms)}."
        )
    order = orders.pop() if orders else 0
    for i, (x, s) in enumerate(zip(xs, terms)):
        ax = core.get_aval(x)
        if ax.dtype.kind not in "fc":
            raise TypeError(f"{fname}: expected float primals, got {ax.dtype} for primal {i}.")
        for c in s:
            ac = core.get_aval(c)
            if ac.shape != ax.shape:
                raise ValueError(
                    f"{fname}: expected the terms of series {i} to have its primal's shape "
                    f"{ax.shape}, got {ac.shape}."
                )
    dtype = np.result_type(*[core.get_aval(x).dtype for x in xs], np.float16)
    t_dtype: np.dtype = np.finfo(dtype).dtype if dtype.kind == "c" else dtype

    def along(t: Any) -> Any:
        path = []
        for x, s in zip(xs, terms):
            for k, c in enumerate(s, 1):
                x = x + c * (t**k / math.factorial(k))
            path.append(x)
        return fun(*path)

    out = tree_map(to_array, fun(*xs))
    leaves, tree = tree_flatten(out)
    derivatives: list[list[Any]] = [[] for _ in leaves]
    d: Callable[[Any], Any] = along
    t0 = np.zeros((), t_dtype)
    for _ in range(order):
        d = _derivative(d, t_dtype)
        for slot, v in zip(derivatives, tree_flatten(d(t0))[0]):
            slot.append(v)
    return out, tree_unflatten(tree, derivatives)


def _derivative(g: Callable[[Any], Any], dtype: np.dtype) -> Callable[[Any], Any]:
    one = np.ones((), dtype)
    return lambda t: jvp(g, (t,), (one,))[1]
