"""Optimizers: hand-computed single steps, accumulation, clipping, schedules, errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import optim


def _step(opt, params, grads, state=None):
    state = opt.init(params) if state is None else state
    updates, state = opt.update(grads, state, params)
    return optim.apply_updates(params, updates), state


# name -> (optimizer, numpy reference of two steps on params p with grads g)
def _ref_sgd_momentum(p, g, lr=0.1, m=0.9, nesterov=False):
    t = np.zeros_like(p)
    for _ in range(2):
        t = g + m * t
        p = p - lr * ((g + m * t) if nesterov else t)
    return p


def _ref_adam(p, g, lr=0.1, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    m = v = np.zeros_like(p)
    for t in (1, 2):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        upd = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + wd * p
        p = p - lr * upd
    return p


def _ref_rmsprop(p, g, lr=0.1, decay=0.9, eps=1e-8):
    v = np.zeros_like(p)
    for _ in range(2):
        v = decay * v + (1 - decay) * g * g
        p = p - lr * g / (np.sqrt(v) + eps)
    return p


OPTIMIZERS = {
    "sgd": (optim.sgd(0.1), lambda p, g: p - 0.2 * g),
    "sgd_momentum": (optim.sgd(0.1, momentum=0.9), _ref_sgd_momentum),
    "sgd_nesterov": (
        optim.sgd(0.1, momentum=0.9, nesterov=True),
        lambda p, g: _ref_sgd_momentum(p, g, nesterov=True),
    ),
    "adam": (optim.adam(0.1), _ref_adam),
    "adamw": (optim.adamw(0.1, weight_decay=0.01), lambda p, g: _ref_adam(p, g, wd=0.01)),
    "rmsprop": (optim.rmsprop(0.1), _ref_rmsprop),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_two_steps_match_numpy(name: str) -> None:
    opt, ref = OPTIMIZERS[name]
    p0 = np.array([1.0, -2.0, 3.0])
    g = np.array([1.0, 2.0, 3.0])  # constant gradient
    params, state = _step(opt, {"w": p0}, {"w": g})
    params, state = _step(opt, params, {"w": g}, state)
    np.testing.assert_allclose(params["w"], ref(p0, g), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_float32_params_stay_float32(name: str) -> None:
    opt, _ = OPTIMIZERS[name]
    p = {"w": np.ones(3, np.float32)}
    params, _ = _step(opt, p, {"w": np.ones(3, np.float32)})
    assert params["w"].dtype == np.float32


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_jit_matches_eager(name: str) -> None:
    if not callable(getattr(ft, "jit", None)):
        pytest.skip("jit not available")
    opt, _ = OPTIMIZERS[name]
    p = {"w": np.array([1.0, 2.0])}
    g = {"w": np.array([0.5, -1.0])}
    state = opt.init(p)

    def step(p, s, g):
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s

    pe, se = step(p, state, g)
    pj, sj = ft.jit(step)(p, state, g)
    np.testing.assert_allclose(pj["w"], pe["w"], rtol=1e-12)


def test_accumulate_mean_of_grads_1_to_4() -> None:
    opt = optim.accumulate(optim.sgd(1.0), every_k=4)
    p = {"w": np.array([0.0])}
    state = opt.init(p)
    for k, g in enumerate([1.0, 2.0, 3.0, 4.0]):
        updates, state = opt.update({"w": np.array([g])}, state, p)
        if k < 3:
            assert updates["w"][0] == 0.0  # no update before the k-th micro-batch
        p = optim.apply_updates(p, updates)
    assert p["w"][0] == -2.5  # one step with the mean gradient 2.5


def test_accumulate_equals_big_batch_step() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((16, 3)), rng.standard_normal(16)
    w0 = rng.standard_normal(3)

    def loss(w, X, y):
        return fnp.mean((fnp.sum(X * w, axis=1) - y) ** 2)

    big = optim.sgd(0.1)
    wb, _ = _step(big, w0, ft.grad(loss)(w0, X, y))
    acc = optim.accumulate(optim.sgd(0.1), every_k=4)
    w, state = w0, acc.init(w0)
    for i in range(4):
        xb, yb = X[4 * i : 4 * i + 4], y[4 * i : 4 * i + 4]
        updates, state = acc.update(ft.grad(loss)(w, xb, yb), state, w)
        w = optim.apply_updates(w, updates)
        if i < 3:
            np.testing.assert_array_equal(w, w0)
    np.testing.assert_allclose(w, wb, rtol=0, atol=1e-12)


def test_accumulate_under_jit() -> None:
    if not callable(getattr(ft, "jit", None)):
        pytest.skip("jit not available")
    opt = optim.accumulate(optim.adam(0.1), every_k=2)
    p = np.array([1.0, 2.0])

    def step(p, s, g):
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s

    s_e = s_j = opt.init(p)
    p_e = p_j = p
    for g in ([1.0, 1.0], [3.0, -1.0], [0.5, 0.5], [2.0, 2.0]):
        p_e, s_e = step(p_e, s_e, np.array(g))
        p_j, s_j = ft.jit(step)(p_j, s_j, np.array(g))
    np.testing.assert_allclose(p_j, p_e, rtol=1e-12)


def test_clip_by_global_norm_and_global_norm() -> None:
    g = {"a": np.array([3.0]), "b": np.array([4.0])}
    assert optim.global_norm(g) == 5.0
    clip = optim.clip_by_global_norm(1.0)
    u, _ = clip.update(g, clip.init(g))
    np.testing.assert_allclose([u["a"][0], u["b"][0]], [0.6, 0.8])
    u2, _ = clip.update({"a": np.array([0.3])}, ())
    assert u2["a"][0] == 0.3


def test_schedules() -> None:
    warm = optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=10, decay_steps=110)
    assert warm(0) == 0.0 and warm(5) == pytest.approx(0.5) and warm(10) == pytest.approx(1.0)
    assert warm(110) == pytest.approx(0.0, abs=1e-12)
    cos = optim.cosine_decay_schedule(1.0, 100)
    assert cos(50) == pytest.approx(0.5)
    opt = optim.sgd(optim.linear_schedule(1.0, 0.0, 4))
    p = np.array([0.0])
    state = opt.init(p)
    for expected in (-1.0, -1.75, -2.25, -2.5):
        u, state = opt.update(np.array([1.0]), state, p)
        p = optim.apply_updates(p, u)
        assert p[0] == pytest.approx(expected)


def test_structure_mismatch_names_first_path() -> None:
    opt = optim.adam(0.1)
    state = opt.init({"w": np.ones(2), "b": np.ones(1)})
    with pytest.raises(ValueError, match=r"pytree structure mismatch.*first differing"):
        opt.update({"w": np.ones(2), "c": np.ones(1)}, state, None)
    with pytest.raises(ValueError, match="apply_updates"):
        optim.apply_updates({"w": np.ones(2)}, {"w": np.ones(2), "x": 1.0})
