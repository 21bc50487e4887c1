"""Shared checks for the primitive-level test files (test_lax_shapes, test_lax_reductions):
eager vs NumPy, staging round trips, finite-difference JVPs, the inner-product VJP
identity and second-order checks, all on the interpreters directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from functrace import core, ir
from functrace.interpreters import ad, staging

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
DTYPES = (np.float32, np.float64, np.int32)
seeds = st.integers(0, 2**32 - 1)


@pytest.fixture(autouse=True, scope="module")
def _checks_on():
    prev = staging.enable_checks
    staging.enable_checks = True
    yield
    staging.enable_checks = prev


# ---------------------------------------------------------------------------
# Helpers (eager vs NumPy vs staged; derivatives vs finite differences)
# ---------------------------------------------------------------------------


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-5, 6, shape).astype(dtype)


def distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Floats at least 0.5 apart (no ties within finite-difference steps)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n) + rng.uniform(0.0, 0.5, n)).reshape(shape) - n / 2


def _outs(f: Callable[..., Any]) -> Callable[..., list[Any]]:
    def g(*args: Any) -> list[Any]:
        out = f(*args)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    return g


def check_value(f: Callable[..., Any], args: list[Any], expected: Any, exact: bool = True) -> None:
    """Eager result == NumPy (value, dtype, shape); staged result and avals == eager."""
    expected = [np.asarray(e) for e in _outs(lambda: expected)()]
    eager = _outs(f)(*args)
    cj, _ = staging.trace_to_jaxpr(_outs(f), [core.get_aval(a) for a in args], origin="test")
    staged = ir.eval_jaxpr(cj.jaxpr, cj.consts, args)
    for e, s, want, aval in zip(eager, staged, expected, cj.out_avals, strict=True):
        for got in (e, s):
            assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
            if exact:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert aval.shape == want.shape and aval.dtype == want.dtype


def _fd(g: Callable[..., list[Any]], args: list[Any], ts: list[Any], eps: float = 1e-6) -> list:
    plus = g(*[a + eps * t for a, t in zip(args, ts)])
    minus = g(*[a - eps * t for a, t in zip(args, ts)])
    return [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(plus, minus)]


def _check_jvp(g: Callable[..., list[Any]], args: list[Any], ts: list[Any]) -> list[Any]:
    _, t_out = ad.jvp_flat(g, args, ts)
    t_out = [ad.instantiate(t) for t in t_out]
    for t, want in zip(t_out, _fd(g, args, ts), strict=True):
        assert np.shape(t) == np.shape(want)
        np.testing.assert_allclose(t, want, rtol=1e-5, atol=1e-6)
    return t_out


def check_grads(f: Callable[..., Any], args: list[Any], seed: int = 0, order: int = 2) -> None:
    """Forward and reverse mode, both also staged, and forward-over-{forward,reverse}."""
    rng = np.random.default_rng(seed)
    g = _outs(f)
    args = [np.asarray(a, np.float64) for a in args]
    ts = [rng.standard_normal(np.shape(a)) for a in args]
    t_out = _check_jvp(g, args, ts)
    outs, lin, _ = ad.linearize_flat(g, args)
    cts = [rng.standard_normal(np.shape(o)) for o in outs]
    cts_in = [ad.instantiate(c) for c in lin.transpose(cts)]
    for c, a in zip(cts_in, args):
        assert np.shape(c) == np.shape(a) and np.asarray(c).dtype == a.dtype
    lhs = sum(np.sum(c * t) for c, t in zip(cts, t_out))
    rhs = sum(np.sum(c * t) for c, t in zip(cts_in, ts))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-6, atol=1e-8)
    fwd = lambda *a: [ad.instantiate(t) for t in ad.jvp_flat(g, list(a), ts)[1]]
    rev = lambda *a: [ad.instantiate(c) for c in ad.linearize_flat(g, list(a))[1].transpose(cts)]
    for h, want in ((fwd, t_out), (rev, cts_in)):  # the rules also stage (jit of jvp/grad)
        cj, _ = staging.trace_to_jaxpr(h, [core.get_aval(a) for a in args], origin="test")
        for got, w in zip(ir.eval_jaxpr(cj.jaxpr, cj.consts, args), want, strict=True):
            np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)
    if order >= 2:
        ss = [rng.standard_normal(np.shape(a)) for a in args]
        _check_jvp(fwd, args, ss)
        _check_jvp(rev, args, ss)


def check_raises(f: Callable[..., Any], args: list[Any], exc: type, *fragments: str) -> None:
    """``f`` raises ``exc`` naming ``fragments``, both eagerly and while staging."""
    with pytest.raises(exc) as info:
        f(*args)
    for frag in fragments:
        assert frag in str(info.value), (frag, str(info.value))
    with pytest.raises(exc) as info:
        staging.trace_to_jaxpr(_outs(f), [core.get_aval(a) for a in args], origin="test")
    for frag in fragments:
        assert frag in str(info.value), (frag, str(info.value))
