"""Eager optimizer updates run fused (one jitted call, one kernel per leaf): the same
bits as op by op, for every optimizer, dtype and leaf shape; never under a transform."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import functrace as ft
from functrace import _leafmap, optim
from functrace.jit import jit

OPTIMIZERS = {
    "sgd": lambda: optim.sgd(0.1),
    "sgd_momentum": lambda: optim.sgd(0.1, momentum=0.9),
    "sgd_nesterov": lambda: optim.sgd(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: optim.adam(1e-2),
    "adam_schedule": lambda: optim.adam(optim.cosine_decay_schedule(1e-2, 10)),
    "adamw": lambda: optim.adamw(1e-2, weight_decay=0.05),
    "rmsprop": lambda: optim.rmsprop(1e-2),
    "rmsprop_centered": lambda: optim.rmsprop(1e-2, centered=True),
    "clipped_adam": lambda: optim.chain(optim.clip_by_global_norm(0.5), optim.adam(1e-2)),
    "accumulated_adam": lambda: optim.accumulate(optim.adam(1e-2), every_k=2),
}


def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "w": rng.standard_normal((7, 5)).astype(dtype),
        "b": rng.standard_normal(5).astype(dtype),
        "s": np.asarray(rng.standard_normal(), dtype),
        "t": [rng.standard_normal((2, 3, 4)).astype(dtype)],
    }


@pytest.fixture
def compiled(monkeypatch):
    """The fused path compiles before its first call returns (no tiered interpreter
    run), and every compile is counted."""
    made = []

    def compiler(fn):
        made.append(fn)
        return jit(fn, compile="sync")

    monkeypatch.setattr(_leafmap, "_compiler", [compiler])
    return made


def _run(opt, params, steps=4, fused=True):
    state = opt.init(params)
    out = []
    with ft.config.override(fused_updates=ft.config.fused_updates and fused):
        for k in range(steps):
            grads = ft.tree_util.tree_map(lambda p, k=k: np.cos(p * (k + 1)), params)
            updates, state = opt.update(grads, state, params)
            params = optim.apply_updates(params, updates)
            out.append((params, state))
    return out


def _assert_bits(a, b):
    assert ft.tree_util.tree_structure(a) == ft.tree_util.tree_structure(b)
    la, lb = ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fused_updates_equal_op_by_op_bit_for_bit(name, dtype, compiled):
    params = _params(dtype)
    fused = _run(OPTIMIZERS[name](), params)
    plain = _run(OPTIMIZERS[name](), params, fused=False)
    _assert_bits(fused, plain)
    # One fused function per optimizer: a chain's run of per-parameter transformations
    # (Adam's moments and its learning rate, ...) is one (clipping and accumulation,
    # which need every gradient first, stay outside).
    assert len(compiled) == 1, compiled


def test_tiered_first_calls_equal_compiled(monkeypatch):
    # The default compiler (tiered): whatever runs, op by op or compiled, the bits agree.
    params = _params(np.float32, seed=3)
    fused = _run(optim.adam(1e-2), params, steps=6)
    plain = _run(optim.adam(1e-2), params, steps=6, fused=False)
    _assert_bits(fused, plain)


def test_under_transforms_the_update_is_traced_op_by_op(compiled):
    opt = optim.adam(1e-2)
    params = _params(np.float32)
    state = opt.init(params)
    grads = ft.tree_util.tree_map(np.sin, params)

    def step(params, grads, state):
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state

    ft.make_jaxpr(step)(params, grads, state)
    assert not compiled  # traced: the leaf map ran op by op, nothing jitted inside
    eager = step(params, grads, state)
    np.testing.assert_allclose(jit(step)(params, grads, state)[0]["w"], eager[0]["w"], rtol=1e-6)

    # Differentiating through the update (a meta-gradient) and batching it.
    def loss(scale):
        p = ft.tree_util.tree_map(lambda x: x * scale, params)
        g = ft.tree_util.tree_map(lambda x: ft.numpy.sin(3 * x), p)
        return ft.numpy.sum(step(p, g, step(p, g, state)[1])[0]["w"])

    # (float64 and a small step: Adam's first update is nearly lr * sign(g), and a wide
    # difference quotient jumps where an entry of g changes sign)
    params = _params(np.float64)
    state = opt.init(params)
    d = ft.grad(loss)(1.0)
    eps = 1e-5
    np.testing.assert_allclose(d, (loss(1 + eps) - loss(1 - eps)) / (2 * eps), rtol=1e-6)
    batched = ft.vmap(loss)(np.array([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(batched, [loss(s) for s in (0.5, 1.0, 2.0)], rtol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {"w": np.ones((3, 2), np.float16)},  # no fused float16
        {"w": np.ones((3, 2), np.float32), "n": np.ones(2, np.float16)},  # mixed
        {},  # no leaves
    ],
    ids=["float16", "mixed", "empty"],
)
def test_other_leaves_run_op_by_op(params, compiled):
    opt = optim.adam(1e-2)
    fused = _run(opt, params, steps=2)
    plain = _run(opt, params, steps=2, fused=False)
    _assert_bits(fused, plain)
    assert not compiled


def test_switch_and_environment(compiled):
    assert ft.config.fused_updates is True
    code = "import functrace as ft; print(ft.config.fused_updates)"
    env = dict(os.environ, FUNCTRACE_FUSED_UPDATES="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
    with ft.config.override(fused_updates=False):
        _run(optim.adam(1e-2), _params(np.float32), steps=2)
        assert not compiled
    _run(optim.adam(1e-2), _params(np.float32), steps=2)
    assert compiled


def test_structure_errors_name_the_optimizer():
    opt = optim.adam(1e-2)
    params = _params(np.float32)
    state = opt.init(params)
    bad = dict(params, extra=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="scale_by_adam.update"):
        opt.update(bad, state, bad)


def test_results_are_fresh_arrays_and_inputs_untouched(compiled):
    opt = optim.adam(1e-2)
    params = _params(np.float32)
    state = opt.init(params)
    grads = ft.tree_util.tree_map(np.sin, params)
    before = [np.array(x) for x in ft.tree_util.tree_leaves((params, grads, state))]
    kept = []
    for _ in range(3):
        updates, new_state = opt.update(grads, state, params)
        kept.append((updates, new_state))
    after = ft.tree_util.tree_leaves((params, grads, state))
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
    # Results held across calls are never rewritten by a later call.
    _assert_bits(kept[0], kept[2])


def test_threads_share_one_optimizer(compiled):
    opt = optim.adam(1e-2)
    reference = _run(opt, _params(np.float32), steps=3, fused=False)
    errors, results = [], []

    def worker():
        try:
            results.append(_run(opt, _params(np.float32), steps=3))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        _assert_bits(r, reference)


def test_eager_weight_gradients_are_c_contiguous():
    # The transpose rule of dot_general orders the product so that no transpose (and so
    # no strided view) follows: the fused update then reads its inputs in place.
    x = np.ones((4, 3), np.float32)
    w = np.ones((3, 5), np.float32)
    gw, gx = ft.grad(lambda w, x: ft.numpy.sum(ft.numpy.tanh(x @ w)), argnums=(0, 1))(w, x)
    assert gw.flags.c_contiguous and gx.flags.c_contiguous
    jaxpr = str(ft.make_jaxpr(ft.grad(lambda w, x: ft.numpy.sum(x @ w)))(w, x))
    assert "transpose" not in jaxpr


def test_chains_fuse_runs_of_per_parameter_transformations(compiled):
    params = _params(np.float32)
    nested = optim.chain(
        optim.chain(optim.trace(0.9), optim.identity()),
        optim.add_decayed_weights(1e-3),
        optim.scale_by_learning_rate(optim.linear_schedule(0.1, 0.01, 5)),
    )
    split = optim.chain(
        optim.scale_by_adam(),
        optim.clip_by_global_norm(0.1),
        optim.scale(-0.5),
        optim.scale_by_rms(),
    )
    for opt, n_fused in ((nested, 1), (split, 2)):
        compiled.clear()
        fused = _run(opt, params)
        plain = _run(opt, params, fused=False)
        _assert_bits(fused, plain)
        assert len(compiled) == n_fused
