"""Eager benchmark: functrace transforms without ``jit`` against PyTorch eager.

Prints medians over repeats (the cases of a row timed in turn, round after round, so
that machine load moves them alike) and ratios against PyTorch measured in the same run:

* one training step (forward + backward + Adam, float32) of the MLP of
  ``bench_jit.py`` at 784-64-10, batch 32 and 784-512-512-10, batch 128: functrace
  eager (``value_and_grad`` + ``functrace.optim.adam`` + ``apply_updates``) with the
  eager cache on (the default) and off (``config.eager_cache = False``: every call
  traces), the same step with the Adam update written by hand in ``functrace.numpy``
  (``bench_jit.train_step``: a dozen unfused operations per parameter), PyTorch eager
  (``loss.backward()`` + ``torch.optim.Adam``), and functrace ``jit`` for reference;
* the scalar ``z = x*y + x**2`` and its gradient in ``x`` and ``y`` from Python floats
  (PyTorch: two fresh ``requires_grad`` tensors and ``z.backward()``);
* per-example gradients of the small MLP's loss, batch 64: ``vmap(grad(loss))`` vs
  ``torch.func.vmap(torch.func.grad(loss))``.

PyTorch runs in its own worker process (its OpenMP threads spin after each operation
and would slow whatever runs next in the same process); functrace runs in this one.
Nothing is pinned: each library runs at its default threading (set
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` in the environment to compare at others).

Run: ``.venv/bin/python bench/bench_eager.py`` (``--quick`` for a shorter run). Not a
test: it asserts nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_user_env = dict(os.environ)
import bench_jit as bj  # noqa: E402  (it pins threads for its own baselines: undone below)
import functrace as ft  # noqa: E402
import functrace.optim as optim  # noqa: E402
from _util import fmt_time, print_table, time_per_call  # noqa: E402
from functrace.jit import jit  # noqa: E402

os.environ.clear()
os.environ.update(_user_env)  # every library at its default threading

QUICK = "--quick" in sys.argv
MIN_TIME = 0.1 if QUICK else 0.3
REPEATS = 5 if QUICK else 7
ROUNDS = 3 if QUICK else 5
SMALL, MEDIUM = ((784, 64, 10), 32), ((784, 512, 512, 10), 128)
PER_EXAMPLE_BATCH = 64


def scalar_fn(x, y):
    return x * y + x**2


def one_loss(params, x, y):
    """The MLP loss of one example (``x``: 784 features, ``y``: one-hot)."""
    return bj.loss_fn(params, x[None], y[None])


def _ft_cases() -> dict[str, Any]:
    vg = ft.value_and_grad(scalar_fn, argnums=(0, 1))
    per_example = ft.vmap(ft.grad(one_loss), in_axes=(None, 0, 0))
    params, _, _, _, xs, ys = bj.init(SMALL[0], PER_EXAMPLE_BATCH)
    cases: dict[str, Any] = {
        "scalar": lambda: vg(2.0, 3.0),
        "per_example": lambda: per_example(params, xs, ys),
    }
    opt = optim.adam(bj.LR, bj.B1, bj.B2, bj.EPS)

    def optim_step(params, opt_state, x, y):
        loss, g = ft.value_and_grad(bj.loss_fn)(params, x, y)
        updates, opt_state = opt.update(g, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    for name, (sizes, batch) in (("small", SMALL), ("medium", MEDIUM)):
        state = bj.init(sizes, batch)
        args = (state[0], opt.init(state[0]), state[4], state[5])
        cases[name] = lambda a=args: optim_step(*a)
        cases[name + " by hand"] = lambda s=state: bj.train_step(*s)
        cases[name + " jit"] = lambda a=args, j=jit(optim_step): j(*a)
    return cases


# ---------------------------------------------------------------------------
# PyTorch: a worker process, timed on request so that its measurements interleave
# with ours
# ---------------------------------------------------------------------------


def _torch_worker() -> None:
    import torch

    def mlp(sizes, batch):
        state = bj.init(sizes, batch)
        params = [torch.tensor(p, requires_grad=True) for layer in state[0] for p in layer]
        x, y = torch.tensor(state[4]), torch.tensor(state[5])
        opt = torch.optim.Adam(params, lr=bj.LR, betas=(bj.B1, bj.B2), eps=bj.EPS)

        def loss_of(ps, x, y):
            h = x
            for i in range(0, len(ps) - 2, 2):
                h = torch.relu(h @ ps[i] + ps[i + 1])
            logits = h @ ps[-2] + ps[-1]
            return -(torch.log_softmax(logits, dim=1) * y).sum(dim=1).mean()

        def step():
            opt.zero_grad()
            loss = loss_of(params, x, y)
            loss.backward()
            opt.step()
            return loss

        return step, loss_of, params

    def scalar():
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        z = x * y + x**2
        z.backward()
        return z, x.grad, y.grad

    _, loss_of, params = mlp(*SMALL)
    state = bj.init(SMALL[0], PER_EXAMPLE_BATCH)
    xs, ys = torch.tensor(state[4]), torch.tensor(state[5])
    detached = [p.detach() for p in params]
    from torch.func import grad, vmap

    per_ex = vmap(grad(lambda ps, x, y: loss_of(ps, x[None], y[None])), in_dims=(None, 0, 0))
    calls: dict[str, Any] = {
        "scalar": scalar,
        "small": mlp(*SMALL)[0],
        "medium": mlp(*MEDIUM)[0],
        "per_example": lambda: per_ex(detached, xs, ys),
    }
    print(json.dumps({"threads": torch.get_num_threads()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        t = time_per_call(calls[cmd["key"]], min_time=cmd["min_time"], repeats=cmd["repeats"])
        print(json.dumps(t), flush=True)


class TorchWorker:
    def __init__(self) -> None:
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # PyTorch's default threading
            env.pop(k, None)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--torch-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        self.threads = json.loads(self.proc.stdout.readline())["threads"]

    @staticmethod
    def available() -> bool:
        import importlib.util

        try:
            return importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            return False

    def time(self, key: str) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        cmd = {"key": key, "min_time": MIN_TIME, "repeats": REPEATS}
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the PyTorch worker died (see its stderr above)")
        return float(json.loads(line))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _time_ft(fn: Any, cache: bool) -> float:
    with ft.config.override(eager_cache=cache):
        return time_per_call(fn, min_time=MIN_TIME, repeats=REPEATS)


def main() -> None:
    cases = _ft_cases()
    torch = TorchWorker() if TorchWorker.available() else None
    rows_in = {
        "small": "MLP step 784-64-10, batch 32",
        "medium": "MLP step 784-512-512-10, batch 128",
        "scalar": "scalar x*y + x**2 backward",
        "per_example": f"per-example grads, batch {PER_EXAMPLE_BATCH}",
    }
    samples: dict[str, dict[str, list[float]]] = {k: {} for k in rows_in}
    for _ in range(ROUNDS):
        for key in rows_in:
            timed = {
                "cached": lambda k=key: _time_ft(cases[k], True),
                "uncached": lambda k=key: _time_ft(cases[k], False),
            }
            for extra in ("by hand", "jit"):
                if f"{key} {extra}" in cases:
                    timed[extra] = lambda k=f"{key} {extra}": _time_ft(cases[k], True)
            if torch is not None:
                timed["torch"] = lambda k=key, w=torch: w.time(k)
            for name, fn in timed.items():
                samples[key].setdefault(name, []).append(fn())
    if torch is not None:
        torch.close()
    med = {k: {n: float(np.median(v)) for n, v in s.items()} for k, s in samples.items()}
    rows = []
    for key, label in rows_in.items():
        r = med[key]
        t = r.get("torch")
        rows.append(
            [
                label,
                fmt_time(r["cached"]),
                fmt_time(r["uncached"]),
                fmt_time(r["by hand"]) if "by hand" in r else "",
                fmt_time(t) if t else "n/a",
                f"{r['cached'] / t:.2f}" if t else "n/a",
                f"{r['uncached'] / t:.2f}" if t else "n/a",
                f"{r['by hand'] / t:.2f}" if t and "by hand" in r else "",
                fmt_time(r["jit"]) if "jit" in r else "",
            ]
        )
    threads = f"{torch.threads} threads" if torch is not None else "not installed"
    print_table(
        f"functrace eager vs PyTorch eager (PyTorch: {threads}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})",
        [
            "case",
            "ft eager",
            "ft no cache",
            "ft Adam by hand",
            "torch",
            "ratio",
            "ratio no cache",
            "ratio by hand",
            "ft jit",
        ],
        rows,
    )


if __name__ == "__main__":
    if "--torch-worker" in sys.argv:
        _torch_worker()
    else:
        main()
