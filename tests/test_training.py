"""End-to-end training: learning, eager vs jit, resume bit-identity, linear regression."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import functrace as ft
from functrace import data, io, nn, optim  # noqa: F401


def _setup(dtype=np.float64):
    X_train, y_train, X_test, y_test = data.load_digits(dtype=dtype)
    model = nn.MLP([64, 32, 10], rng=0, dtype=dtype)
    opt = optim.chain(optim.clip_by_global_norm(5.0), optim.adam(1e-2))

    def step(model, state, x, y):
        loss, grads = ft.value_and_grad(lambda m: nn.cross_entropy(m(x), y))(model)
        updates, state = opt.update(grads, state, model)
        return optim.apply_updates(model, updates), state, loss

    return X_train, y_train, X_test, y_test, model, opt, step


def _train(step, model, state, X, y, n_steps, seed=0, start=0):
    losses = []
    for i in range(start, start + n_steps):
        rng = np.random.default_rng([seed, i])
        idx = rng.choice(len(X), 64, replace=False)
        model, state, loss = step(model, state, X[idx], y[idx])
        losses.append(float(loss))
    return model, state, losses


def test_mlp_learns_digits_eager() -> None:
    X, y, Xt, yt, model, opt, step = _setup()
    model, _, losses = _train(step, model, opt.init(model), X, y, 60)
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
    acc = np.mean(np.argmax(model(Xt), -1) == yt)
    assert acc > 0.85


def test_jit_and_eager_training_agree() -> None:
    if not callable(getattr(ft, "jit", None)):
        pytest.skip("jit not available")
    X, y, _, _, model, opt, step = _setup()
    me, _, le = _train(step, model, opt.init(model), X, y, 10)
    mj, _, lj = _train(ft.jit(step), model, opt.init(model), X, y, 10)
    np.testing.assert_allclose(lj, le, rtol=1e-9)
    for a, b in zip(ft.tree_util.tree_leaves(mj), ft.tree_util.tree_leaves(me)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


RESUME_SCRIPT = r"""
import sys, numpy as np
sys.path.insert(0, {tests!r})
from test_training import _setup, _train
from functrace import io
X, y, _, _, model, opt, step = _setup()
like = {{"model": model, "state": opt.init(model)}}
ck = io.load({path!r}, like=like)
model, state, _ = _train(step, ck["model"], ck["state"], X, y, 5, start=5)
io.save({out!r}, {{"model": model, "state": state}})
"""


def test_resume_in_new_process_is_bit_identical(tmp_path) -> None:
    X, y, _, _, model, opt, step = _setup()
    state0 = opt.init(model)
    m_full, s_full, _ = _train(step, model, state0, X, y, 10)
    m_half, s_half, _ = _train(step, model, state0, X, y, 5)
    io.save(tmp_path / "half.npz", {"model": m_half, "state": s_half})
    script = RESUME_SCRIPT.format(
        tests=os.path.dirname(__file__),
        path=str(tmp_path / "half.npz"),
        out=str(tmp_path / "resumed.npz"),
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300)
    resumed = io.load(tmp_path / "resumed.npz", like={"model": m_full, "state": s_full})
    for a, b in zip(
        ft.tree_util.tree_leaves(resumed),
        ft.tree_util.tree_leaves({"model": m_full, "state": s_full}),
    ):
        np.testing.assert_array_equal(a, b)


def test_linear_regression_pytorch_tutorial() -> None:
    x, y = data.make_regression_line(
        200, slope=2.0, intercept=1.0, noise=0.1, rng=0, dtype=np.float64
    )
    model = nn.Linear(1, 1, rng=0, dtype=np.float64)
    opt = optim.sgd(0.01)
    state = opt.init(model)
    grad_fn = ft.value_and_grad(lambda m: nn.mse_loss(m(x), y))
    for _ in range(3000):
        _, g = grad_fn(model)
        u, state = opt.update(g, state, model)
        model = optim.apply_updates(model, u)
    assert model.weight[0, 0] == pytest.approx(2.0, abs=0.1)
    assert model.bias[0] == pytest.approx(1.0, abs=0.06)


def test_batches() -> None:
    a, b = np.arange(10), np.arange(10) * 2
    got = list(data.batches(a, b, batch_size=4, shuffle=True, rng=0))
    assert [len(x) for x, _ in got] == [4, 4, 2]
    assert sorted(np.concatenate([x for x, _ in got]).tolist()) == list(range(10))
    assert all(np.array_equal(x * 2, z) for x, z in got)
    assert [len(x) for x, _ in data.batches(a, b, batch_size=4, drop_last=True)] == [4, 4]
    with pytest.raises(ValueError, match="equal length"):
        list(data.batches(a, np.arange(3), batch_size=2))


def test_digits_dataset() -> None:
    X, y = data.load_digits(split=None)
    assert X.shape == (1797, 64) and X.dtype == np.float32 and X.max() == 1.0
    assert sorted(set(y.tolist())) == list(range(10))
    Xtr, ytr, Xte, yte = data.load_digits()
    assert len(Xtr) + len(Xte) == 1797


def test_cnn_demo_reaches_98_percent(tmp_path) -> None:
    # `python -m functrace demo --model cnn`: two conv + max-pool blocks and a linear
    # layer, a jitted Adam step, 20 epochs of the 8x8 digits.
    from functrace import _demo

    result = _demo.train(out_dir=str(tmp_path), model_kind="cnn", verbose=False)
    assert result["epoch"] == 20
    assert result["accuracy"] >= 0.98, result["accuracy"]
    assert result["losses"][-1] < 0.05
    assert (tmp_path / "checkpoint.npz").exists()
