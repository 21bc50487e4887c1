"""A character-level transformer on the embedded sonnets, end to end.

A decoder-only (GPT-style) model built from ``functrace.nn`` layers: token and learned
position embeddings, a stack of pre-norm :class:`~functrace.nn.TransformerEncoderLayer`
blocks with a causal mask (``batch_first=True``), a final layer norm and a linear head
over the character vocabulary. It is trained on random windows of the text with the
next-character cross-entropy, AdamW and gradient clipping, in one jit-compiled step
(the dropout key is split inside the step), and sampled one character at a time with
``functrace.random.categorical`` inside a jit-compiled ``lax.fori_loop``.

>>> from functrace._examples import char_transformer as ct
>>> vocab = ct.CharVocab("abca")
>>> vocab.chars, vocab.encode("cab").tolist(), vocab.decode([2, 0, 1])
('abc', [2, 0, 1], 'cab')

``python -m functrace demo --model transformer`` runs :func:`train` and prints the
unigram baseline, the loss reached and a sample.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace as ft
import functrace.numpy as fnp
from functrace import data, lax, nn, optim
from functrace import random as frandom


class CharVocab:
    """The sorted set of characters of a text, with ``encode`` (``str`` to int32 ids)
    and ``decode`` (ids to ``str``)."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError(f"CharVocab: expected a non-empty str, got {text!r:.40}.")
        self.chars = "".join(sorted(set(text)))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """The ids of the characters of ``text`` (int32); an unknown character is an error."""
        unknown = sorted(set(text) - set(self._index))
        if unknown:
            raise ValueError(
                f"CharVocab.encode: expected characters of the vocabulary, got "
                f"{''.join(unknown)!r} not in it."
            )
        return np.fromiter((self._index[c] for c in text), np.int32, len(text))

    def decode(self, ids: Any) -> str:
        """The text of the ids ``ids`` (any integer array-like)."""
        return "".join(self.chars[int(i)] for i in np.asarray(ids).reshape(-1))


def causal_mask(length: int) -> np.ndarray:
    """The boolean causal mask of ``MultiheadAttention``/``TransformerEncoderLayer``
    (PyTorch's convention, True = *not allowed*): position ``i`` sees ``j <= i``."""
    return np.triu(np.ones((length, length), bool), k=1)


class CharTransformer(nn.Module):
    """A decoder-only transformer over characters.

    ``model(ids, key=None)``: ``ids`` of shape ``(N, T)`` (or ``(T,)``) with
    ``T <= context`` gives next-character logits ``(N, T, vocab_size)``
    (``(T, vocab_size)``): ``head(norm(blocks(tok_emb(ids) + pos_emb(arange(T)))))`` with
    causal self-attention. Dropout only with a ``key`` (split per block).

    ``CharTransformer(vocab_size, *, context=64, d_model=64, nhead=4, num_layers=2,
    dim_feedforward=256, dropout=0.1, rng=0, dtype=float32)``: ``num_layers`` pre-norm
    :class:`~functrace.nn.TransformerEncoderLayer` blocks (GELU, ``batch_first=True``)
    with their own initialisations; embeddings drawn from N(0, 0.1**2) (PyTorch's
    ``Embedding`` draws N(0, 1)), the other layers as PyTorch initialises them.
    """

    tok_emb: nn.Embedding
    pos_emb: nn.Embedding
    blocks: tuple[nn.TransformerEncoderLayer, ...]
    norm: nn.LayerNorm
    head: nn.Linear
    context: int = nn.field(static=True)

    def __init__(
        self,
        vocab_size: int,
        *,
        context: int = 64,
        d_model: int = 64,
        nhead: int = 4,
        num_layers: int = 2,
        dim_feedforward: int = 256,
        dropout: float = 0.1,
        rng: Any = 0,
        dtype: Any = np.float32,
    ) -> None:
        gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        self.context = int(context)
        emb_scale = np.dtype(dtype).type(0.1)  # N(0, 0.01) embeddings: a small start
        tok = nn.Embedding(vocab_size, d_model, rng=gen, dtype=dtype)
        pos = nn.Embedding(self.context, d_model, rng=gen, dtype=dtype)
        self.tok_emb = tok.replace(weight=tok.weight * emb_scale)
        self.pos_emb = pos.replace(weight=pos.weight * emb_scale)
        self.blocks = tuple(
            nn.TransformerEncoderLayer(
                d_model,
                nhead,
                dim_feedforward=dim_feedforward,
                dropout=dropout,
                activation="gelu",
                batch_first=True,
                norm_first=True,
                rng=gen,
                dtype=dtype,
            )
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model, dtype=dtype)
        self.head = nn.Linear(d_model, vocab_size, rng=gen, dtype=dtype)

    def __call__(self, ids: Any, *, key: Any = None) -> Any:
        ids = ids if hasattr(ids, "shape") else np.asarray(ids)
        shape = tuple(ids.shape)
        if len(shape) not in (1, 2) or not 1 <= shape[-1] <= self.context:
            raise ValueError(
                f"CharTransformer: expected ids of shape (N, T) or (T,) with 1 <= T <= "
                f"context = {self.context}, got shape {shape}."
            )
        T = shape[-1]
        x = self.tok_emb(ids) + self.pos_emb(np.arange(T))
        mask = causal_mask(T)
        keys = [None] * len(self.blocks) if key is None else frandom.split(key, len(self.blocks))
        for block, k in zip(self.blocks, keys):
            x = block(x, src_mask=mask, is_causal=True, key=k)
        return self.head(self.norm(x))


def unigram_entropy(ids: Any, vocab_size: int) -> float:
    """The entropy of the character distribution of ``ids`` in nats per character: the
    loss of the best model that ignores context."""
    counts = np.bincount(np.asarray(ids).reshape(-1), minlength=vocab_size)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def random_windows(
    ids: np.ndarray, batch_size: int, context: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` random windows of ``context`` characters and their targets (the
    next character at every position): two int32 arrays of shape (batch, context)."""
    if len(ids) <= context:
        raise ValueError(
            f"random_windows: expected a text longer than context={context}, got {len(ids)} "
            "characters."
        )
    starts = rng.integers(0, len(ids) - context, size=batch_size)
    idx = starts[:, None] + np.arange(context)
    return ids[idx], ids[idx + 1]


def loss_fn(model: CharTransformer, x: Any, y: Any, key: Any = None) -> Any:
    """The mean next-character cross-entropy (nats) of ``model`` on windows ``x``
    with targets ``y``; dropout with ``key``."""
    return nn.cross_entropy(model(x, key=key), y)


def make_optimizer(
    lr: float = 3e-3, weight_decay: float = 0.01, clip: float = 1.0
) -> optim.GradientTransformation:
    """Gradient clipping by global norm, then AdamW."""
    return optim.chain(optim.clip_by_global_norm(clip), optim.adamw(lr, weight_decay=weight_decay))


def make_train_step(opt: optim.GradientTransformation, *, jit: bool = True) -> Callable[..., Any]:
    """``step(model, opt_state, x, y, key) -> (model, opt_state, loss, key)``: one AdamW
    step on the batch ``(x, y)``, with dropout drawn from a fresh split of ``key`` (the
    other half comes back for the next step). Jit-compiled unless ``jit=False``."""

    def step(model: CharTransformer, opt_state: Any, x: Any, y: Any, key: Any) -> Any:
        key, dropout_key = frandom.split(key)
        loss, grads = ft.value_and_grad(loss_fn)(model, x, y, dropout_key)
        updates, opt_state = opt.update(grads, opt_state, model)
        return optim.apply_updates(model, updates), opt_state, loss, key

    return ft.jit(step) if jit else step


@ft.jit
def eval_loss(model: CharTransformer, x: Any, y: Any) -> Any:
    """The cross-entropy of ``model`` on ``(x, y)`` in inference mode (no dropout)."""
    return loss_fn(model, x, y)


@functools.lru_cache(maxsize=16)
def _sampler(prompt_len: int, n: int) -> Callable[..., Any]:
    def run(model: CharTransformer, buf: Any, key: Any, inv_temperature: Any) -> Any:
        T = model.context

        def body(i: Any, carry: Any) -> Any:
            buf, key = carry
            length = prompt_len + i  # characters so far
            start = fnp.maximum(length - T, 0)
            window = lax.dynamic_slice(buf, (start,), (T,))
            # The model is causal: positions after length - 1 do not change its logits.
            logits = lax.dynamic_index_in_dim(model(window), length - 1 - start, 0, False)
            key, sub = frandom.split(key)
            nxt = frandom.categorical(sub, logits * inv_temperature)
            new = fnp.reshape(nxt, (1,)).astype(buf.dtype)
            return lax.dynamic_update_slice(buf, new, (length,)), key

        buf, _ = lax.fori_loop(0, n, body, (buf, key))
        return buf

    return ft.jit(run)  # type: ignore[no-any-return]


def sample(
    model: CharTransformer,
    vocab: CharVocab,
    prompt: str,
    n: int,
    key: Any,
    temperature: float = 1.0,
) -> str:
    """``prompt`` followed by ``n`` characters drawn from ``model`` one at a time
    (``random.categorical`` of the logits divided by ``temperature``), in one jit-compiled
    ``lax.fori_loop``; the model sees the last ``context`` characters. The same key gives
    the same text."""
    if not prompt:
        raise ValueError("sample: expected a non-empty prompt, got ''.")
    if not temperature > 0:
        raise ValueError(f"sample: expected a temperature > 0, got {temperature!r}.")
    if int(n) < 0:
        raise ValueError(f"sample: expected n >= 0 characters to draw, got {n}.")
    ids = vocab.encode(prompt)
    p = len(ids)
    buf = np.zeros(max(p + int(n), model.context), np.int32)
    buf[:p] = ids
    dt = np.dtype(model.head.weight.dtype).type
    out = _sampler(p, int(n))(model, buf, key, dt(1.0 / temperature))
    return vocab.decode(np.asarray(out)[: p + int(n)])


@dataclasses.dataclass(frozen=True)
class Config:
    """The hyperparameters of :func:`train` (defaults: 2 layers, 4 heads, d=64)."""

    steps: int = 300
    batch_size: int = 32
    context: int = 64
    d_model: int = 64
    nhead: int = 4
    num_layers: int = 2
    dim_feedforward: int = 256
    dropout: float = 0.1
    lr: float = 3e-3
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    eval_windows: int = 64
    val_fraction: float = 0.1


def train(
    config: Config = Config(),  # noqa: B008
    *,
    text: str | None = None,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Train a :class:`CharTransformer` on ``text`` (default: the sonnets) and return a
    dict: ``model``, ``opt_state``, ``step`` (the jitted step), ``key`` (the next step's
    key), ``vocab``, ``losses`` (training loss per step), ``baseline`` (unigram
    entropy of the training split, nats/char), ``val_loss`` (inference-mode loss on
    ``eval_windows`` windows of the held-out last ``val_fraction`` of the text),
    ``train_eval_loss`` (the same on the training split), ``compile_s`` (the first
    step, compilation included) and ``step_s`` (mean time of a later step)."""
    c = config
    if int(c.steps) < 1:
        raise ValueError(f"train: expected at least 1 training step, got steps={c.steps}.")
    text = data.load_text("sonnets") if text is None else text
    vocab = CharVocab(text)
    ids = vocab.encode(text)
    n_val = int(len(ids) * c.val_fraction)
    train_ids, val_ids = ids[: len(ids) - n_val], ids[len(ids) - n_val :]
    baseline = unigram_entropy(train_ids, len(vocab))
    model = CharTransformer(
        len(vocab),
        context=c.context,
        d_model=c.d_model,
        nhead=c.nhead,
        num_layers=c.num_layers,
        dim_feedforward=c.dim_feedforward,
        dropout=c.dropout,
        rng=c.seed,
    )
    opt = make_optimizer(c.lr, c.weight_decay, c.clip)
    opt_state = opt.init(model)
    step = make_train_step(opt)
    rng = np.random.default_rng(c.seed)
    key = frandom.PRNGKey(c.seed)
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=c.steps, desc="training", disable=None, leave=False)
        except ImportError:  # the notebooks extra is optional
            bar = None
    losses: list[float] = []
    compile_s, t_rest = 0.0, 0.0
    for i in range(c.steps):
        x, y = random_windows(train_ids, c.batch_size, c.context, rng)
        t0 = time.perf_counter()
        model, opt_state, loss, key = step(model, opt_state, x, y, key)
        losses.append(float(loss))
        dt = time.perf_counter() - t0
        if i == 0:
            compile_s = dt
        else:
            t_rest += dt
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if log is not None and (i + 1) % max(1, c.steps // 5) == 0:
            log(f"step {i + 1:5d}  training loss {np.mean(losses[-20:]):.3f} nats/char")
    if bar is not None:
        bar.close()
    eval_rng = np.random.default_rng([c.seed, 1])
    context = min(c.context, len(val_ids) - 1)
    val_loss = float(eval_loss(model, *random_windows(val_ids, c.eval_windows, context, eval_rng)))
    train_eval = float(
        eval_loss(model, *random_windows(train_ids, c.eval_windows, c.context, eval_rng))
    )
    return {
        "model": model,
        "opt_state": opt_state,
        "step": step,
        "key": key,
        "vocab": vocab,
        "losses": losses,
        "baseline": baseline,
        "val_loss": val_loss,
        "train_eval_loss": train_eval,
        "compile_s": compile_s,
        "step_s": t_rest / max(c.steps - 1, 1),
    }


def main(argv: Sequence[str]) -> int:
    """``python -m functrace demo --model transformer [--steps N] [--seed S]``."""
    parser = argparse.ArgumentParser(
        prog="python -m functrace demo --model transformer", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--seed", type=int, default=0, help="initialisation, batches, keys")
    parser.add_argument("--prompt", default="Shall I compare thee", help="start of the sample")
    parser.add_argument("--temperature", type=float, default=0.8, help="sampling temperature")
    parser.add_argument("--chars", type=int, default=300, help="characters to sample")
    args = parser.parse_args(list(argv))
    t0 = time.perf_counter()
    cfg = Config(steps=args.steps, seed=args.seed)
    print(
        f"character transformer: {cfg.num_layers} layers, {cfg.nhead} heads, d={cfg.d_model}, "
        f"context {cfg.context}, batch {cfg.batch_size}, {cfg.steps} AdamW steps"
    )
    result = train(cfg, log=print)
    base, val = result["baseline"], result["val_loss"]
    print(
        f"\nunigram baseline {base:.3f} nats/char; reached {result['train_eval_loss']:.3f} "
        f"(training text) and {val:.3f} (held-out text) = {val / base:.2f} x baseline"
    )
    print(
        f"{nn.count_params(result['model'])} parameters; first step (compilation) "
        f"{result['compile_s']:.1f} s, then {1e3 * result['step_s']:.1f} ms/step"
    )
    txt = sample(
        result["model"],
        result["vocab"],
        args.prompt,
        args.chars,
        frandom.PRNGKey(args.seed),
        args.temperature,
    )
    print(f"\nsample (temperature {args.temperature}):\n{txt}")
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0 if val < base else 1


__all__ = [
    "CharTransformer",
    "CharVocab",
    "Config",
    "causal_mask",
    "eval_loss",
    "loss_fn",
    "main",
    "make_optimizer",
    "make_train_step",
    "random_windows",
    "sample",
    "train",
    "unigram_entropy",
]
