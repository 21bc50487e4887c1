"""functrace.debug: print, callback and breakpoint eagerly, under each transform, under
jit (loops and cond included) and under vmap (per example, or one batched call)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import debug_print_cases
import functrace as ft
import functrace.numpy as fnp
from functrace import debug, lax

FIXTURE = Path(__file__).parent / "fixtures" / "debug_print_jax.npz"


def _f(x):
    debug.print("x={x}", x=x)
    return fnp.sin(x) * x


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_eager_prints_at_once(capsys) -> None:
    _f(2.0)
    assert _lines(capsys) == ["x=2.0"]


def test_positional_and_keyword_format_and_pytrees(capsys) -> None:
    debug.print("{} {b} {c[0]}", 1.5, b=np.float32(2.0), c=(3,))
    assert _lines(capsys) == ["1.5 2.0 3"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_prints_runtime_values(capsys, dtype) -> None:
    f = ft.jit(_f)
    f(dtype(2.0))
    f(dtype(3.0))  # the cached program prints the new value
    assert _lines(capsys) == ["x=2.0", "x=3.0"]


@pytest.mark.parametrize(
    "run",
    [
        lambda: ft.grad(_f)(2.0),
        lambda: ft.value_and_grad(_f)(2.0),
        lambda: ft.vjp(_f, 2.0)[1](1.0),
        lambda: ft.jvp(_f, (2.0,), (1.0,)),
        lambda: ft.jit(ft.grad(_f))(2.0),
        lambda: ft.jit(lambda x: ft.jvp(_f, (x,), (1.0,)))(2.0),
    ],
    ids=["grad", "value_and_grad", "vjp", "jvp", "jit_grad", "jit_jvp"],
)
def test_derivatives_print_the_primal_once(capsys, run) -> None:
    run()
    assert _lines(capsys) == ["x=2.0"]


def test_grad_of_grad_prints_the_primal_once(capsys) -> None:
    ft.grad(ft.grad(_f))(2.0)
    assert _lines(capsys) == ["x=2.0"]


def test_vmap_prints_per_example_in_order(capsys) -> None:
    ft.vmap(_f)(fnp.arange(3.0))
    assert _lines(capsys) == ["x=0.0", "x=1.0", "x=2.0"]


def test_vmap_unbatched_argument_and_axis(capsys) -> None:
    def g(x, y):
        debug.print("{} {}", x, y)
        return x

    ft.vmap(g, in_axes=(1, None))(np.arange(4.0).reshape(2, 2), 5.0)
    assert _lines(capsys) == ["[0. 2.] 5.0", "[1. 3.] 5.0"]


def test_vmap_per_example_false_is_one_batched_call() -> None:
    seen = []

    def g(x, y):
        debug.callback(lambda a, b: seen.append((np.asarray(a), b)), x, y, per_example=False)
        return x

    ft.vmap(g, in_axes=(1, None))(np.arange(4.0).reshape(2, 2), 5.0)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0][0], [[0.0, 2.0], [1.0, 3.0]])  # batch axis first
    assert float(seen[0][1]) == 5.0


def test_nested_vmap_outer_loop_first(capsys) -> None:
    ft.vmap(ft.vmap(lambda x: (debug.print("{}", x), x)[1]))(np.arange(4.0).reshape(2, 2))
    assert _lines(capsys) == ["0.0", "1.0", "2.0", "3.0"]


def test_acceptance_jit_vmap_grad(capsys) -> None:
    out = ft.jit(ft.vmap(ft.grad(_f)))(fnp.arange(3.0))
    assert _lines(capsys) == ["x=0.0", "x=1.0", "x=2.0"]
    x = np.arange(3.0)
    np.testing.assert_allclose(out, np.cos(x) * x + np.sin(x))


def test_two_prints_keep_program_order(capsys) -> None:
    def g(x):
        y = x * 2.0
        debug.print("first {}", y)
        z = fnp.exp(y)
        debug.print("second {}", x)
        return z

    g(1.0)
    ft.jit(g)(1.0)
    ft.vmap(g)(np.array([1.0, 2.0]))
    assert _lines(capsys) == [
        "first 2.0",
        "second 1.0",
        "first 2.0",
        "second 1.0",
        "first 2.0",  # under vmap each print runs for every example, then the next
        "first 4.0",
        "second 1.0",
        "second 2.0",
    ]


def test_not_removed_when_unused(capsys) -> None:
    def g(x):
        debug.print("unused {}", x * 2.0)
        return x

    assert "debug_callback" in str(ft.make_jaxpr(g)(1.0))
    ft.jit(g)(1.0)
    assert _lines(capsys) == ["unused 2.0"]


def _body(c, x):
    debug.print("c={}", c)
    return c + x, c * x


def test_scan_under_jit_prints_every_iteration(capsys) -> None:
    f = ft.jit(lambda c, xs: lax.scan(_body, c, xs))
    f(1.0, np.arange(3.0))
    assert _lines(capsys) == ["c=1.0", "c=1.0", "c=2.0"]


def test_scan_eager_and_in_reverse_mode_under_jit(capsys) -> None:
    loss = lambda c: lax.scan(_body, c, np.arange(3.0))[0]  # noqa: E731
    ft.grad(loss)(1.0)
    ft.jit(ft.grad(loss))(1.0)
    assert _lines(capsys) == ["c=1.0", "c=1.0", "c=2.0"] * 2


def test_fori_and_while_under_jit(capsys) -> None:
    def fori(x):
        return lax.fori_loop(0, 3, lambda i, c: (debug.print("i={} c={}", i, c), c * 2.0)[1], x)

    def wl(x):
        def body(c):
            debug.print("w={}", c)
            return c * 2.0

        return lax.while_loop(lambda c: c < 5.0, body, x)

    ft.jit(fori)(1.0)
    assert _lines(capsys) == ["i=0 c=1.0", "i=1 c=2.0", "i=2 c=4.0"]
    ft.jit(wl)(1.0)
    assert _lines(capsys) == ["w=1.0", "w=2.0", "w=4.0"]


def test_cond_under_jit_prints_the_branch_taken(capsys) -> None:
    def f(x):
        def pos(y):
            debug.print("pos {}", y)
            return y

        def neg(y):
            debug.print("neg {}", y)
            return -y

        return lax.cond(x > 0, pos, neg, x)

    g = ft.jit(f)
    g(2.0)
    g(-3.0)
    assert _lines(capsys) == ["pos 2.0", "neg -3.0"]


def test_callback_gets_runtime_arrays_and_returns_none() -> None:
    seen = []

    def f(x):
        assert debug.callback(lambda v: seen.append(v), x) is None
        return x + 1.0

    ft.jit(f)(np.array([1.0, 2.0]))
    assert len(seen) == 1 and type(seen[0]) is ft.Array
    np.testing.assert_array_equal(seen[0], [1.0, 2.0])


def test_breakpoint_calls_pdb(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr("pdb.set_trace", lambda *a, **k: calls.append(1))
    debug.breakpoint()
    assert calls == [1]
    ft.jit(lambda x: (debug.breakpoint(), x + 1.0)[1])(1.0)  # when the compiled code runs
    assert calls == [1, 1]


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match=r"debug\.print: expected a format string, got int"):
        debug.print(3)
    with pytest.raises(TypeError, match=r"debug\.callback: expected a callable"):
        debug.callback(1.0)
    with pytest.raises(TypeError, match=r"debug\.callback: expected per_example to be a bool"):
        debug.callback(print, 1.0, per_example="yes")


def test_while_loop_in_reverse_mode_prints_each_iteration_once(capsys) -> None:
    # Counting the trips (eagerly) and the reverse sweep (under jit) re-run the body:
    # those runs stay silent.
    def wl(x):
        def body(c):
            debug.print("w={}", c)
            return c * 2.0

        return lax.while_loop(lambda c: c < 5.0, body, x)

    ft.grad(wl)(1.0)
    assert _lines(capsys) == ["w=1.0", "w=2.0", "w=4.0"]
    ft.jit(ft.grad(wl))(1.0)
    assert _lines(capsys) == ["w=1.0", "w=2.0", "w=4.0"]
    ft.jit(lambda x: ft.jvp(wl, (x,), (1.0,)))(1.0)
    assert _lines(capsys) == ["w=1.0", "w=2.0", "w=4.0"]


def test_non_array_arguments_pass_through(capsys) -> None:
    ft.jit(lambda x: (debug.print("{} {} {}", "tag", None, x), x)[1])(1.0)
    assert _lines(capsys) == ["tag None 1.0"]


def test_printed_lines_match_jax() -> None:
    ref = np.load(FIXTURE)
    got = debug_print_cases.cases(ft)
    assert set(got) == set(ref.files) - {"__about__"}
    for name, lines in got.items():
        assert lines == list(ref[name]), name
