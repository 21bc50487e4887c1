"""The demo: train an MLP (or, with ``--model cnn``, a small CNN) on the embedded 8x8
digits with a jit-compiled step.

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
from functrace import data, distributed, io, nn, optim

MODELS = ("mlp", "cnn")
# per model: epochs, learning rate, micro-batches per update
DEFAULTS = {"mlp": (12, 3e-3, 2), "cnn": (20, 5e-3, 1)}


def make_model(kind: str, *, hidden: int = 128, seed: int = 0, dtype: Any = np.float32) -> Any:
    """The demo's model for flat (n, 64) digits: an MLP ``64-hidden-10``, or ``"cnn"``:
    two blocks of 3x3 convolution (padding 1), ReLU and 2x2 max pooling (32 and 64
    channels) on the 1x8x8 image, then a linear layer to the 10 classes."""
    if kind == "mlp":
        return nn.MLP([64, hidden, 10], rng=seed, dtype=dtype)
    if kind != "cnn":
        raise ValueError(f"demo: expected a model in {MODELS}, got {kind!r}.")
    gen = np.random.default_rng(seed)
    return nn.Sequential(
        [
            nn.Unflatten(1, (1, 8, 8)),
            nn.Conv2d(1, 32, 3, padding=1, rng=gen, dtype=dtype),
            nn.relu,
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1, rng=gen, dtype=dtype),
            nn.relu,
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(64 * 2 * 2, 10, rng=gen, dtype=dtype),
        ]
    )


def make_step(opt: optim.GradientTransformation) -> Any:
    def loss_fn(model: nn.MLP, x: Any, y: Any) -> Any:
        return nn.cross_entropy(model(x), y)

    def step(model: nn.MLP, opt_state: Any, x: Any, y: Any) -> Any:
        loss, grads = ft.value_and_grad(loss_fn)(model, x, y)
        updates, opt_state = opt.update(grads, opt_state, model)
        return optim.apply_updates(model, updates), opt_state, loss

    # compiled before the first step returns: the timing lines below count it once
    return ft.jit(step, compile="sync") if callable(getattr(ft, "jit", None)) else step


def make_data_parallel_step(opt: optim.GradientTransformation) -> Any:
    """The step of ``--data-parallel``: a jitted ``value_and_grad`` on this process's
    shard, its gradient (and loss) all-reduced by ``distributed.data_parallel`` (a
    mean weighted by the shard sizes, outside the compiled code), then a jitted
    optimizer update. The reduction comes before the whole optimizer chain, so
    ``accumulate`` averages global gradients and ``clip_by_global_norm`` clips by the
    global gradient's norm: every process applies the same update."""

    def loss_fn(model: nn.MLP, x: Any, y: Any) -> Any:
        return nn.cross_entropy(model(x), y)

    grad_fn = distributed.data_parallel(ft.jit(ft.value_and_grad(loss_fn)), has_value=True)

    @ft.jit
    def apply(model: Any, opt_state: Any, grads: Any) -> Any:
        updates, opt_state = opt.update(grads, opt_state, model)
        return optim.apply_updates(model, updates), opt_state

    def step(model: Any, opt_state: Any, x: Any, y: Any) -> Any:
        loss, grads = grad_fn(model, x, y)
        model, opt_state = apply(model, opt_state, grads)
        return model, opt_state, loss

    return step


def accuracy(model: nn.MLP, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(np.asarray(model(X)), axis=-1) == y))


def _progress(total: int, desc: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the notebooks extra is optional
        return None
    return tqdm(total=total, desc=desc, disable=None, leave=False)


def _plot(history: list[float], path: str, title: str = "MLP on 8x8 digits") -> bool:
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
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def train(
    epochs: int | None = None,
    *,
    out_dir: str = "demo_out",
    resume: bool = False,
    micro_batch: int = 32,
    every_k: int | None = None,
    lr: float | None = None,
    seed: int = 0,
    hidden: int = 128,
    verbose: bool = True,
    dtype: Any = np.float32,
    model_kind: str = "mlp",
    data_parallel: bool = False,
) -> dict[str, Any]:
    """Train (or continue training) and return the final model, state and metrics;
    ``model_kind`` is "mlp" or "cnn" (see :func:`make_model`); ``epochs``, ``lr`` and
    ``every_k`` default to the model's entry of ``DEFAULTS``.

    ``data_parallel=True`` (launched as ``mpirun -n N python -m functrace demo
    --data-parallel``): each process trains on its shard of every micro-batch of
    ``micro_batch`` examples (the same global batches as one process; see
    :func:`make_data_parallel_step`), process 0 prints and writes the checkpoint."""
    shard = None
    if data_parallel:
        distributed.initialize()
        shard = (distributed.process_index(), distributed.process_count())
        verbose = verbose and shard[0] == 0
    if model_kind not in DEFAULTS:
        raise ValueError(f"demo: expected a model in {MODELS}, got {model_kind!r}.")
    d_epochs, d_lr, d_every = DEFAULTS[model_kind]
    epochs = d_epochs if epochs is None else epochs
    lr = d_lr if lr is None else lr
    every_k = d_every if every_k is None else every_k
    X_train, y_train, X_test, y_test = data.load_digits(dtype=dtype)
    opt = optim.accumulate(
        optim.chain(optim.clip_by_global_norm(1.0), optim.adam(lr)), every_k=every_k
    )
    kind = model_kind
    net = make_model(kind, hidden=hidden, seed=seed, dtype=dtype)
    if shard is not None:
        net = distributed.broadcast(net)  # one starting point, whatever each process drew
    state = {
        "model": net,
        "opt_state": opt.init(net),
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
    step = make_step(opt) if shard is None else make_data_parallel_step(opt)
    model, opt_state = state["model"], state["opt_state"]
    losses = list(state["losses"])
    start_epoch = int(state["epoch"])
    log = print if verbose else (lambda *a, **k: None)
    if shard is not None:
        log(
            f"data-parallel over {shard[1]} processes: each computes the gradient of its "
            f"part of every batch of {micro_batch}, all-reduced before the optimizer (so "
            "clip_by_global_norm sees the global gradient)"
        )
    t_total, n_seen = 0.0, 0
    for epoch in range(start_epoch, start_epoch + epochs):
        bar = _progress(len(X_train) // micro_batch, f"epoch {epoch + 1}") if verbose else None
        rng = np.random.default_rng([seed, epoch])  # the order depends only on (seed, epoch)
        t0 = time.perf_counter()
        epoch_losses = []
        for xb, yb in data.batches(
            X_train, y_train, batch_size=micro_batch, rng=rng, drop_last=True, shard=shard
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
    if shard is None:
        io.save(ckpt, state)
    else:
        distributed.save_checkpoint(ckpt, state)  # written once, by process 0
    title = "MLP on 8x8 digits" if kind == "mlp" else "CNN on 8x8 digits"
    plotted = (shard is None or shard[0] == 0) and _plot(
        losses, os.path.join(out_dir, "loss_curve.png"), title
    )
    acc = accuracy(model, X_test, y_test)
    log(
        f"\n{kind.upper()}: test accuracy {acc:.2%}; "
        f"{n_seen / max(t_total, 1e-9):.0f} examples/s after the "
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


def _is_first_process() -> bool:
    return distributed.process_index() == 0


def _load_state(path: str, like: dict[str, Any]) -> dict[str, Any]:
    # The loss history grows from run to run; everything else must match `like` exactly.
    shape, _ = io.describe(path)["['losses']"]
    return io.load(path, like=dict(like, losses=np.zeros(shape, np.float64)))


def main(argv: list[str]) -> int:
    """``python -m functrace demo [--model mlp|cnn|transformer] ...``: the MLP (the
    default), the small CNN, or the character-level transformer
    (``functrace._examples.char_transformer``)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--model", default="mlp")
    pre.add_argument("--data-parallel", action="store_true")
    known, rest = pre.parse_known_args(argv)
    if known.model == "transformer" and known.data_parallel:
        print(
            "demo: --data-parallel trains the mlp or the cnn, not the transformer.", file=sys.stderr
        )
        return 2
    if known.model == "transformer":
        from functrace._examples.char_transformer import main as transformer_demo

        return transformer_demo(rest)
    parser = argparse.ArgumentParser(prog="python -m functrace demo", description=__doc__)
    parser.add_argument("--epochs", type=int, default=None, help="default: 12 (mlp), 20 (cnn)")
    parser.add_argument("--out", default="demo_out", help="checkpoint and plot directory")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model",
        choices=(*MODELS, "transformer"),
        default="mlp",
        help="the network to train: mlp (the default), cnn, or transformer (a "
        "character-level transformer on the sonnets; see --model transformer --help)",
    )
    parser.add_argument(
        "--data-parallel",
        action="store_true",
        help="train on all the processes of an MPI job (mpirun -n N python -m functrace "
        "demo --data-parallel; needs pip install 'functrace[mpi]'); process 0 prints",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    result = train(
        args.epochs,
        out_dir=args.out,
        resume=args.resume,
        seed=args.seed,
        model_kind=args.model,
        data_parallel=args.data_parallel,
    )
    if not args.data_parallel or _is_first_process():
        print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0 if result["accuracy"] > 0.9 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
