"""Loops: a 1000-step Euler integration of a damped oscillator and its gradient, and
a recurrent network scan with its gradient.

``jit(value_and_grad(loss))`` with ``lax.fori_loop``, against the same written by
hand with Numba (a forward loop and a hand-written reverse sweep), and JAX's
``jit(value_and_grad)`` when JAX is installed. Target: at most 30 us per call and a
compile under 3 s. Then an RNN ``lax.scan`` (``h = tanh(W @ h + U @ x + b)``) under
``jit(value_and_grad)``: native loops (each scan one Numba function) against the
Python-loop lowering (``loops.enabled = False``, as with ``FUNCTRACE_NATIVE_LOOPS=0``)
and eager. Last, the oscillator integrated with ``lax.while_loop`` until ``t >= 10``
(trip count known only at run time) under ``jit(value_and_grad)``: the reverse sweep
stores the carries as the loop runs (JAX refuses reverse mode through ``while_loop``).
Run: ``.venv/bin/python bench/bench_loops.py``.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np

import functrace as ft
import functrace.numpy as fnp
from _util import fmt_time, interleaved, print_table, time_per_call
from functrace import lax

STEPS, DT = 1000, 0.01


def loss(c: float) -> float:
    def body(i, state):
        x, v = state
        a = -x - c * v
        return x + DT * v, v + DT * a

    x, v = lax.fori_loop(0, STEPS, body, (1.0, 0.0))
    return x * x + v * v


def numba_by_hand():
    import numba

    @numba.njit(cache=False)
    def value_and_grad(c):
        xs = np.empty(STEPS + 1)
        vs = np.empty(STEPS + 1)
        xs[0], vs[0] = 1.0, 0.0
        for i in range(STEPS):
            x, v = xs[i], vs[i]
            xs[i + 1] = x + DT * v
            vs[i + 1] = v + DT * (-x - c * v)
        x, v = xs[STEPS], vs[STEPS]
        gx, gv, gc = 2.0 * x, 2.0 * v, 0.0
        for i in range(STEPS - 1, -1, -1):
            x, v = xs[i], vs[i]
            # x' = x + dt v ; v' = v + dt (-x - c v)
            gc += gv * DT * (-v)
            gx, gv = gx - DT * gv, gx * DT + gv * (1.0 - DT * c)
        return x * 0.0 + xs[STEPS] ** 2 + vs[STEPS] ** 2, gc

    return value_and_grad


def main() -> None:
    c = 0.3
    f = ft.jit(ft.value_and_grad(loss))
    t0 = time.perf_counter()
    val, g = f(c)
    compile_s = time.perf_counter() - t0
    eager_val, eager_g = ft.value_and_grad(loss)(c)
    np.testing.assert_allclose([val, g], [eager_val, eager_g], rtol=1e-9)
    per = {"min_time": 0.1, "repeats": 3}
    names = {"ft": "functrace jit(value_and_grad) + fori_loop"}
    cases = {"ft": lambda: time_per_call(lambda: f(c), **per)}
    try:
        nb = numba_by_hand()
        nb_val, nb_g = nb(c)
        np.testing.assert_allclose([nb_val, nb_g], [val, g], rtol=1e-9)
        names["nb"] = "Numba by hand (forward + reverse sweep)"
        cases["nb"] = lambda: time_per_call(lambda: nb(c), **per)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        def jloss(c):
            def body(i, s):
                x, v = s
                return x + DT * v, v + DT * (-x - c * v)

            x, v = jax.lax.fori_loop(0, STEPS, body, (jnp.float64(1.0), jnp.float64(0.0)))
            return x * x + v * v

        jax.config.update("jax_enable_x64", True)
        jf = jax.jit(jax.value_and_grad(jloss))
        jf(c)[0].block_until_ready()
        names["jax"] = "JAX jit(value_and_grad) + fori_loop"
        cases["jax"] = lambda: time_per_call(lambda: jf(c)[1].block_until_ready(), **per)
    except ImportError:
        pass
    res = interleaved(cases, 7)
    t_ft = res["ft"]
    rows = [[names[k], fmt_time(t), f"{t / t_ft:.2f}x"] for k, t in res.items()]
    print_table(
        f"{STEPS}-step Euler, damped oscillator: value and d/dc (medians of 7 interleaved rounds)",
        ["implementation", "time", "time vs functrace"],
        rows,
    )
    print(f"\nfunctrace first call (trace + compile): {compile_s:.2f} s (target < 3 s)")
    print(
        f"functrace per call: {t_ft * 1e6:.1f} us (target <= 30 us): "
        f"{'OK' if t_ft <= 30e-6 else 'MISSED'}"
    )
    if "jax" in res:
        r = t_ft / res["jax"]
        print(f"functrace / JAX: {r:.2f} (target <= 0.4): {'OK' if r <= 0.4 else 'MISSED'}")


def rnn_loss(w, u, b, xs):
    def body(h, x):
        h = fnp.tanh(w @ h + u @ x + b)
        return h, fnp.sum(h * h)

    h, ys = lax.scan(body, fnp.zeros(w.shape[0]), xs)
    return fnp.sum(h) + fnp.sum(ys)


def while_loss(c):
    def body(s):
        x, v, t = s
        return x + DT * v, v + DT * (-x - c * v), t + DT

    x, v, _ = lax.while_loop(lambda s: s[2] < STEPS * DT, body, (1.0, 0.0, 0.0))
    return x * x + v * v


def compare_lowerings(title: str, vg, args, rtol: float = 1e-9) -> dict[str, float]:
    """jit(vg) with native loops and with Python loops, and eager: a table of medians."""
    from functrace.jit import loops

    want = vg(*args)
    rows, times = [], {}
    for name, native in (("native loops", True), ("Python loops", False)):
        loops.enabled = native
        f = ft.jit(vg)
        t0 = time.perf_counter()
        got = f(*args)
        first = time.perf_counter() - t0
        for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)
        times[name] = time_per_call(lambda f=f: f(*args), min_time=0.5)
        rows.append([f"jit(value_and_grad), {name}", fmt_time(times[name]), f"{first:.2f} s"])
    loops.enabled = True
    t_eager = time_per_call(lambda: vg(*args), min_time=0.5)
    rows.append(["eager value_and_grad", fmt_time(t_eager), "-"])
    base = times["native loops"]
    for r, t in zip(rows, [*times.values(), t_eager]):
        r.append(f"{t / base:.2f}x")
    print_table(title, ["implementation", "time", "first call", "time vs native"], rows)
    return times


def while_main() -> None:
    compare_lowerings(
        f"Oscillator with while_loop (until t >= {STEPS * DT:g}, {STEPS} steps): value and "
        "gradient (median per call)",
        ft.value_and_grad(while_loss),
        (0.3,),
    )
    try:
        import jax
        import jax.numpy as jnp

        def jloss(c):
            def body(s):
                x, v, t = s
                return x + DT * v, v + DT * (-x - c * v), t + DT

            x, v, _ = jax.lax.while_loop(lambda s: s[2] < STEPS * DT, body, (1.0, 0.0, 0.0))
            return x * x + v * v

        jax.jit(jax.value_and_grad(jloss))(jnp.float32(0.3))
        print("JAX: reverse mode through while_loop ran (unexpected)")
    except ImportError:
        print("JAX: not installed")
    except Exception as err:  # JAX refuses reverse mode through while_loop
        print(f"JAX jit(value_and_grad) with while_loop: {type(err).__name__} (unsupported)")


def rnn_main(hidden: int = 32, inputs: int = 8, steps: int = 100) -> None:

    rng = np.random.default_rng(0)
    args = (
        rng.normal(size=(hidden, hidden)) * 0.3 / np.sqrt(hidden),
        rng.normal(size=(hidden, inputs)) * 0.3,
        rng.normal(size=hidden) * 0.1,
        rng.normal(size=(steps, inputs)),
    )
    compare_lowerings(
        f"RNN scan, hidden {hidden}, {steps} steps: value and gradients (median per call)",
        ft.value_and_grad(rnn_loss, argnums=(0, 1, 2)),
        args,
    )


if __name__ == "__main__":
    main()
    print()
    rnn_main()
    print()
    while_main()
