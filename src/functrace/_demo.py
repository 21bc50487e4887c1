"""The demo: train an MLP on the embedded 8x8 digits with a jit-compiled step.

Every part of the loop is plain code: the loss, ``value_and_grad``, gradient
clipping and accumulation (``optim.accumulate``), the Adam update, checkpointing
(``functrace.io``) and resuming exactly where a previous run stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

import functrace as ft
from functrace import data, io, nn, optim


def make_step(opt: optim.GradientTransformation) -> Any:
    def loss_fn(model: nn.MLP, x: Any, y: Any) -> Any:
        return nn.cross_entropy(model(x), y)

    def step(model: nn.MLP, opt_state: Any, x: Any, y: Any) -> Any:
        loss, grads = ft.value_and_grad(loss_fn)(model, x, y)
        updates, opt_state = opt.update(grads, opt_state, model)
        return optim.apply_updates(model, updates), opt_state, loss

    return ft.jit(step) if callable(getattr(ft, "jit", None)) else step


def accuracy(model: nn.MLP, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(np.asarray(model(X)), axis=-1) == y))


def _progress(total: int, desc: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the notebooks extra is optional
        return None
    return tqdm(total=total, desc=desc, disable=None, leave=False)


def _plot(history: list[float], path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(np.arange(1, len(history) + 1), history)
    ax.set_xlabel("micro-batch")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    ax.set_title("MLP on 8x8 digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def train(
    epochs: int = 12,
    *,
    out_dir: str = "demo_out",
    resume: bool = False,
    micro_batch: int = 32,
    every_k: int = 2,
    lr: float = 3e-3,
    seed: int = 0,
    hidden: int = 128,
    verbose: bool = True,
    dtype: Any = np.float32,
) -> dict[str, Any]:
    """Train (or continue training) and return the final model, state and metrics."""
    X_train, y_train, X_test, y_test = data.load_digits(dtype=dtype)
    opt = optim.accumulate(
        optim.chain(optim.clip_by_global_norm(1.0), optim.adam(lr)), every_k=every_k
    )
    model = nn.MLP([64, hidden, 10], rng=seed, dtype=dtype)
    state = {
        "model": model,
        "opt_state": opt.init(model),
        "epoch": np.int64(0),
        "losses": np.zeros(0, dtype=np.float64),
    }
    ckpt = os.path.join(out_dir, "checkpoint.npz")
    if resume:
        if not os.path.exists(ckpt):
            raise FileNotFoundError(
                f"demo: expected a checkpoint at {ckpt} for --resume, got "
                f"none. Run without --resume first."
            )
        state = _load_state(ckpt, state)
    step = make_step(opt)
    model, opt_state = state["model"], state["opt_state"]
    losses = list(state["losses"])
    start_epoch = int(state["epoch"])
    log = print if verbose else (lambda *a, **k: None)
    t_total, n_seen = 0.0, 0
    for epoch in range(start_epoch, start_epoch + epochs):
        bar = _progress(len(X_train) // micro_batch, f"epoch {epoch + 1}") if verbose else None
        rng = np.random.default_rng([seed, epoch])  # the order depends only on (seed, epoch)
        t0 = time.perf_counter()
        epoch_losses = []
        for xb, yb in data.batches(
            X_train, y_train, batch_size=micro_batch, rng=rng, drop_last=True
        ):
            model, opt_state, loss = step(model, opt_state, xb, yb)
            epoch_losses.append(float(loss))
            if bar is not None:
                bar.update(1)
        dt = time.perf_counter() - t0
        if bar is not None:
            bar.close()
        if epoch > start_epoch or epochs == 1:  # the first epoch includes compilation
            t_total += dt
            n_seen += len(epoch_losses) * micro_batch
        losses.extend(epoch_losses)
        log(
            f"epoch {epoch + 1:3d}  loss {np.mean(epoch_losses):.4f}  "
            f"test accuracy {accuracy(model, X_test, y_test):6.2%}  "
            f"{len(epoch_losses) * micro_batch / dt:8.0f} examples/s"
        )
    state = {
        "model": model,
        "opt_state": opt_state,
        "epoch": np.int64(start_epoch + epochs),
        "losses": np.asarray(losses, dtype=np.float64),
    }
    os.makedirs(out_dir, exist_ok=True)
    io.save(ckpt, state)
    plotted = _plot(losses, os.path.join(out_dir, "loss_curve.png"))
    acc = accuracy(model, X_test, y_test)
    log(
        f"\ntest accuracy {acc:.2%}; {n_seen / max(t_total, 1e-9):.0f} examples/s after the "
        f"first epoch; "
        f"checkpoint {ckpt}"
        + (f"; loss curve {os.path.join(out_dir, 'loss_curve.png')}" if plotted else "")
    )
    return {
        "model": model,
        "opt_state": opt_state,
        "accuracy": acc,
        "losses": losses,
        "epoch": start_epoch + epochs,
    }


def _load_state(path: str, like: dict[str, Any]) -> dict[str, Any]:
    # The loss history grows from run to run; everything else must match `like` exactly.
    shape, _ = io.describe(path)["['losses']"]
    return io.load(path, like=dict(like, losses=np.zeros(shape, np.float64)))


def main(argv: list[str]) -> int:
    """``python -m functrace demo [--model mlp|transformer] ...``: the MLP (the default)
    or the character-level transformer (``functrace._examples.char_transformer``)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--model", choices=("mlp", "transformer"), default="mlp")
    known, argv = pre.parse_known_args(argv)
    if known.model == "transformer":
        from functrace._examples.char_transformer import main as transformer_demo

        return transformer_demo(argv)
    parser = argparse.ArgumentParser(prog="python -m functrace demo", description=__doc__)
    parser.add_argument(
        "--model",
        choices=("mlp", "transformer"),
        default="mlp",
        help="mlp (this demo) or transformer (a character-level transformer on the sonnets; "
        "see --model transformer --help)",
    )
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--out", default="demo_out", help="checkpoint and plot directory")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    result = train(args.epochs, out_dir=args.out, resume=args.resume, seed=args.seed)
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0 if result["accuracy"] > 0.9 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
