"""``fwd_and_bwd``: a function's forward and backward passes as two (jitted) functions.

JAX's ``jax.fwd_and_bwd``: ``fwd(*args)`` is ``vjp`` of ``fun`` in the arguments
``argnums`` and returns ``(out, residuals)`` (``(out, residuals, aux)`` with
``has_aux``); ``bwd(residuals, ct)`` is the vector-Jacobian product. The residuals are
the pullback of :func:`functrace.vjp`, a pytree of arrays, so both functions compile
once each and the backward pass can run later, or several times, without tracing the
forward again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace.api import vjp
from functrace.api._args import _normalize_argnums
from functrace.core import describe_fun
from functrace.jit.api import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    jitted: bool = True,
) -> tuple[Callable[..., Any], Callable[[Any, Any], Any]]:
    """``(fwd, bwd)`` for ``fun`` (JAX's ``jax.fwd_and_bwd``): ``fwd(*args)`` returns
    ``(fun(*args), residuals)`` (and ``aux`` last with ``has_aux``), and
    ``bwd(residuals, ct)`` the cotangents of the arguments ``argnums``: one value for
    an int ``argnums``, a tuple for a sequence. With ``jitted`` (the default) both are
    ``jit``-compiled, so each compiles once however often the pair is called.

    >>> import functrace as ft, numpy as np
    >>> fwd, bwd = ft.fwd_and_bwd(lambda x, w: x @ w, argnums=(0, 1))
    >>> y, res = fwd(np.ones((2, 2)), np.eye(2))
    >>> bwd(res, np.ones((2, 2)))[1]
    Array([[2., 2.],
           [2., 2.]])
    """
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: expected a callable, got {type(fun).__name__}.")
    single = isinstance(argnums, int)
    try:
        given = (argnums,) if single else tuple(argnums)  # type: ignore[arg-type]
    except TypeError:
        given = (argnums,)  # type: ignore[assignment]
    if not all(isinstance(a, (int, np.integer)) for a in given):
        raise TypeError(f"fwd_and_bwd: expected argnums of ints, got {argnums!r:.60}.")
    name = describe_fun(fun)

    def fwd(*args: Any) -> Any:
        nums = _normalize_argnums("fwd_and_bwd", argnums, len(args))

        def partial(*diff: Any) -> Any:
            full = list(args)
            for i, x in zip(nums, diff):
                full[i] = x
            return fun(*full)

        return vjp(partial, *(args[i] for i in nums), has_aux=has_aux)

    def bwd(residuals: Any, ct: Any) -> Any:
        g = residuals(ct)
        return g[0] if single else g

    fwd.__name__ = f"fwd_of_{name}"
    bwd.__name__ = f"bwd_of_{name}"
    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
