"""The character-level transformer program (``functrace._examples.char_transformer``):
a short training run beats the unigram baseline, the jitted training step computes the
eager one, and sampling is a function of its key."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
from functrace import data
from functrace import random as frandom
from functrace._examples import char_transformer as ct
from functrace.tree_util import tree_leaves

# Small enough for the test budget (about 200 steps of 30 ms), long enough for the model
# to learn more than character frequencies.
SHORT = ct.Config(steps=200, batch_size=16, context=32, lr=5e-3, eval_windows=64)


@pytest.fixture(scope="module")
def trained() -> dict:
    return ct.train(SHORT)


def test_the_text() -> None:
    text = data.load_text("sonnets")
    assert len(text) == 96214
    assert text.startswith("THE SONNETS")
    assert "Shall I compare thee to a summer’s day?" in text
    assert text.rstrip().endswith("Love’s fire heats water, water cools not love.")
    assert len(set(text)) == 64
    with pytest.raises(ValueError, match=r"load_text: expected a text name.*got 'poems'"):
        data.load_text("poems")


def test_vocab_and_windows() -> None:
    vocab = ct.CharVocab("hello world")
    assert vocab.chars == " dehlorw"
    ids = vocab.encode("hello")
    assert ids.dtype == np.int32 and vocab.decode(ids) == "hello"
    with pytest.raises(ValueError, match=r"CharVocab.encode: expected characters.*'xz'"):
        vocab.encode("oxz")
    x, y = ct.random_windows(np.arange(100, dtype=np.int32), 5, 8, np.random.default_rng(0))
    assert x.shape == y.shape == (5, 8)
    np.testing.assert_array_equal(y, x + 1)  # targets are the next characters
    np.testing.assert_array_equal(np.diff(x, axis=1), 1)  # contiguous windows
    with pytest.raises(ValueError, match="random_windows: expected a text longer"):
        ct.random_windows(np.arange(8), 2, 8, np.random.default_rng(0))
    # The unigram entropy of two equally frequent characters is log 2.
    assert ct.unigram_entropy(np.array([0, 1, 0, 1]), 3) == pytest.approx(np.log(2))


def test_the_model_is_causal() -> None:
    model = ct.CharTransformer(10, context=8, d_model=16, nhead=4, dim_feedforward=32, rng=1)
    ids = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], np.int32)
    changed = ids.copy()
    changed[0, 5:] = 0  # positions 5.. change
    a, b = np.asarray(model(ids)), np.asarray(model(changed))
    assert a.shape == (1, 8, 10)
    np.testing.assert_allclose(a[:, :5], b[:, :5], rtol=1e-5, atol=1e-6)
    assert not np.allclose(a[:, 5:], b[:, 5:])
    np.testing.assert_array_equal(ct.causal_mask(3), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    with pytest.raises(ValueError, match=r"CharTransformer: expected ids of shape.*\(1, 9\)"):
        model(np.zeros((1, 9), np.int32))


def test_training_beats_the_unigram_baseline(trained: dict) -> None:
    base = trained["baseline"]
    text = data.load_text("sonnets")
    assert 3.0 < base < 3.2  # about 3.12 nats per character
    assert base == pytest.approx(
        ct.unigram_entropy(trained["vocab"].encode(text[: len(text) - len(text) // 10]), 64)
    )
    losses = trained["losses"]
    assert len(losses) == SHORT.steps and np.all(np.isfinite(losses))
    assert losses[0] > base  # starts near log(64) = 4.16
    assert np.mean(losses[-20:]) < 0.8 * base
    # Inference-mode loss on held-out text, well below the best context-free model.
    assert trained["val_loss"] < 0.8 * base, (trained["val_loss"], base)
    assert trained["train_eval_loss"] < 0.8 * base


def test_jitted_step_equals_eager_step(trained: dict) -> None:
    opt = ct.make_optimizer(SHORT.lr, SHORT.weight_decay, SHORT.clip)
    x, y = ct.random_windows(
        trained["vocab"].encode(data.load_text("sonnets")),
        SHORT.batch_size,
        SHORT.context,
        np.random.default_rng(7),
    )
    key = frandom.PRNGKey(3)
    # float32, the training run's compiled step: the same loss and next key. (Its
    # parameters agree to float32 rounding, amplified where Adam divides a gradient that
    # is zero in exact arithmetic, such as that of the key-projection bias, by its RMS.)
    args32 = (trained["model"], trained["opt_state"], x, y, key)
    j32, e32 = trained["step"](*args32), ct.make_train_step(opt, jit=False)(*args32)
    np.testing.assert_allclose(float(j32[2]), float(e32[2]), rtol=1e-5)
    np.testing.assert_array_equal(j32[3], e32[3])
    # float64: every leaf of the new model and optimizer state.
    model = ct.CharTransformer(
        64, context=16, d_model=16, nhead=4, dim_feedforward=32, rng=2, dtype=np.float64
    )
    args = (model, opt.init(model), x[:4, :16], y[:4, :16], key)
    jitted = ct.make_train_step(opt)(*args)
    eager = ct.make_train_step(opt, jit=False)(*args)
    leaves_j, leaves_e = tree_leaves(jitted), tree_leaves(eager)
    assert len(leaves_j) == len(leaves_e)
    for a, b in zip(leaves_j, leaves_e):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)
    # The step moved the parameters, with dropout on (both runs used the same key).
    assert not np.allclose(jitted[0].head.weight, model.head.weight)
    other_key = ct.make_train_step(opt, jit=False)(*args[:4], frandom.PRNGKey(4))
    assert float(other_key[2]) != float(eager[2])


def test_sampling_is_a_function_of_the_key(trained: dict) -> None:
    model, vocab = trained["model"], trained["vocab"]
    prompt = "Shall I compare thee"
    a = ct.sample(model, vocab, prompt, 40, frandom.PRNGKey(0), 0.8)
    b = ct.sample(model, vocab, prompt, 40, frandom.PRNGKey(0), 0.8)
    c = ct.sample(model, vocab, prompt, 40, frandom.PRNGKey(1), 0.8)
    assert a == b
    assert a != c
    assert a.startswith(prompt) and len(a) == len(prompt) + 40
    assert set(a) <= set(vocab.chars)
    # The compiled sampling loop draws what the same loop draws eagerly.
    with ft.disable_jit():
        eager = ct.sample(model, vocab, prompt, 40, frandom.PRNGKey(0), 0.8)
    assert eager == a
    # A prompt longer than the context: the model sees the last `context` characters.
    long_prompt = data.load_text("sonnets")[200:250]
    d = ct.sample(model, vocab, long_prompt, 10, frandom.PRNGKey(0), 0.8)
    assert d.startswith(long_prompt) and len(d) == 60


def test_sampling_errors(trained: dict) -> None:
    model, vocab = trained["model"], trained["vocab"]
    key = frandom.PRNGKey(0)
    with pytest.raises(ValueError, match="sample: expected a temperature > 0, got 0"):
        ct.sample(model, vocab, "The", 5, key, 0.0)
    with pytest.raises(ValueError, match="sample: expected a non-empty prompt"):
        ct.sample(model, vocab, "", 5, key)
    with pytest.raises(ValueError, match="CharVocab.encode: expected characters"):
        ct.sample(model, vocab, "héllo", 5, key)


def test_the_demo_command_dispatches(capsys: pytest.CaptureFixture[str]) -> None:
    from functrace import __main__ as cli

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "--model", "transformer", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--model transformer" in out and "--steps" in out and "--temperature" in out
    with pytest.raises(SystemExit):
        cli.main(["demo", "--model", "resnet"])
    assert "invalid choice: 'resnet'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="train: expected at least 1 training step, got steps=0"):
        ct.train(ct.Config(steps=0))
