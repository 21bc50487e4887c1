"""Programs calling ``debug.print``, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/debug_print_jax.npz`` was recorded, ``functrace`` in
tests/test_debug_print.py. Each case returns the lines it printed, in order: eagerly,
under each transform, under ``jit`` with loops and ``cond``, under ``vmap`` (one line
per example, as JAX). Nothing here imports JAX.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np


def _printed(lib: Any, run: Callable[[], Any]) -> list[str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = run()
        for leaf in lib.tree_util.tree_leaves(out):
            np.asarray(leaf)  # wait for the value
        getattr(lib, "effects_barrier", lambda: None)()  # JAX's prints are asynchronous
    return buf.getvalue().splitlines()


def cases(lib: Any) -> dict[str, list[str]]:
    jnp, lax, dbg = lib.numpy, lib.lax, lib.debug

    def f(x):
        dbg.print("x={x}", x=x)
        return jnp.sin(x) * x

    def two(x):
        y = x * 2.0
        dbg.print("first {}", y, ordered=True)  # unordered prints may swap in JAX
        dbg.print("second {}", x, ordered=True)
        return jnp.exp(y)

    def g(x, y):
        dbg.print("{} {}", x, y)
        return x

    def body(c, x):
        dbg.print("c={}", c)
        return c + x, c * x

    def fori(x):
        return lax.fori_loop(0, 3, lambda i, c: (dbg.print("i={} c={}", i, c), c * 2.0)[1], x)

    def branchy(x):
        def pos(y):
            dbg.print("pos {}", y)
            return y

        def neg(y):
            dbg.print("neg {}", y)
            return -y

        return lax.cond(x > 0, pos, neg, x)

    xs = np.arange(3.0)
    jb = lib.jit(branchy)
    runs: dict[str, Callable[[], Any]] = {
        "eager": lambda: f(2.0),
        "vmap": lambda: lib.vmap(f)(xs),
        "grad": lambda: lib.grad(f)(2.0),
        "jvp": lambda: lib.jvp(f, (2.0,), (1.0,)),
        "hessian": lambda: lib.hessian(f)(2.0),
        "jit": lambda: lib.jit(f)(np.float32(2.5)),
        "jit_vmap_grad": lambda: lib.jit(lib.vmap(lib.grad(f)))(xs),
        "vmap_axes": lambda: lib.vmap(g, in_axes=(1, None))(np.arange(4.0).reshape(2, 2), 5.0),
        "vmap_two_prints": lambda: lib.vmap(two)(np.array([1.0, 2.0])),
        "jit_two_prints": lambda: lib.jit(two)(1.0),
        "jit_scan": lambda: lib.jit(lambda c: lax.scan(body, c, xs))(1.0),
        "jit_fori": lambda: lib.jit(fori)(1.0),
        "jit_cond": lambda: (jb(2.0), jb(-3.0)),
    }
    return {name: _printed(lib, run) for name, run in runs.items()}
