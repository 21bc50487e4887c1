"""config.explain_retraces: one WARNING line on the functrace.jit logger per retrace,
naming what differs from the closest earlier signature; jit(f).cache_info()."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import functrace as ft


@pytest.fixture
def explain(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="functrace.jit")
    with ft.config.override(explain_retraces=True):
        yield caplog


def _reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    out = [r.getMessage() for r in caplog.records if r.name == "functrace.jit"]
    caplog.clear()
    return out


def _scale(p: dict, n: int) -> object:
    return p["w"] * n


def test_each_cause_is_named(explain: pytest.LogCaptureFixture) -> None:
    f = ft.jit(_scale, static_argnums=1)
    f({"w": np.ones(3)}, 2)
    assert _reasons(explain) == []  # a first trace needs no explanation
    f({"w": np.ones(3)}, 2)
    assert _reasons(explain) == []  # a cache hit
    f({"w": np.ones(4)}, 2)
    (msg,) = _reasons(explain)
    assert "jit of '_scale'" in msg and "traces again (trace 2)" in msg
    assert "a new shape at p['w']: f64[3] before, now f64[4]" in msg
    f({"w": np.ones(4, np.float32)}, 2)
    assert "a new dtype at p['w']: f64[4] before, now f32[4]" in _reasons(explain)[0]
    f({"w": np.ones(4)}, 3)
    assert (
        "a new value of the static argument `n` (position 1): 2 before, now 3"
        in (_reasons(explain)[0])
    )
    f({"w": 2.0}, 3)
    f({"w": np.float64(2.0)}, 3)
    (msg,) = _reasons(explain)[1:]
    assert "a weak-type change at p['w']: f64[] (weak type: a Python scalar) before" in msg
    f({"w": np.ones(4), "b": 1.0}, 3)
    assert "a new pytree structure of the arguments" in _reasons(explain)[0]


def test_recreated_function_is_named(explain: pytest.LogCaptureFixture) -> None:
    for _ in range(2):
        ft.jit(lambda x: x * 2.0)(np.ones(2))
    (msg,) = _reasons(explain)
    assert "the function object was recreated" in msg


def test_switch_off_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="functrace.jit")
    f = ft.jit(lambda x: x + 1.0)
    f(np.ones(2))
    f(np.ones(3))
    assert _reasons(caplog) == []


def test_cache_info_numbers() -> None:
    f = ft.jit(lambda x: x + 1.0)
    assert tuple(f.cache_info()) == (0, 0, 0, 0, 0, 4096)
    x = np.ones(3)
    f(x)
    f(x)
    f(x)
    f(np.ones(4))
    f({"a": 1.0}["a"])  # a Python scalar: another signature
    info = f.cache_info()
    assert (info.hits, info.misses, info.traces, info.currsize) == (2, 3, 3, 3)
    assert info.kernels == f.compile_count and info.maxsize == 4096
    ft.grad(f)(1.0)  # traced for the transform, not compiled
    assert f.cache_info().traces == 4 and f.cache_info().misses == 3


def test_retrace_under_a_transform_is_explained(explain: pytest.LogCaptureFixture) -> None:
    f = ft.jit(lambda x: (x * x).sum())
    ft.grad(f)(np.ones(2))
    assert _reasons(explain) == []
    ft.grad(f)(np.ones(5))
    (msg,) = _reasons(explain)
    assert "under a transform" in msg and "a new shape at x: f64[2] before, now f64[5]" in msg


def test_signature_dropped_from_the_cache_is_named(
    explain: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from functrace.jit import api

    monkeypatch.setattr(api, "cache_size", 1)
    f = ft.jit(lambda x: x - 1.0)
    f(np.ones(2))
    f(np.ones(3))  # evicts the first signature
    f(np.ones(2))
    msgs = _reasons(explain)
    assert "a new shape at x: f64[2] before, now f64[3]" in msgs[0]
    assert "traced before and dropped from the cache" in msgs[1]
    assert f.cache_info().currsize == 1 and f.cache_info().maxsize == 1
