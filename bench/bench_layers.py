"""Layers benchmark: CNN and transformer training steps, conv forward, compile times.

functrace ``jit`` against JAX's ``jit`` and PyTorch eager, each at its default
threading (all three: the cores the process may use; nothing is pinned here):

* a LeNet-size CNN training step: batch 64 of 28x28x1, conv 6@5x5 (padding 2) ->
  relu -> max-pool 2 -> conv 16@5x5 -> relu -> max-pool 2 -> 120 -> 84 -> 10,
  softmax cross-entropy, Adam, float32 (functrace's ``nn`` layers and PyTorch's in
  NCHW, JAX's ``lax`` in NHWC: each library's natural layout);
* a character-level decoder step: vocabulary 65, context 64, batch 32, 2 pre-norm
  layers of 4 heads, d=64 (feed-forward 256, GELU), causal, learned positions, final
  layer norm and a linear head; cross-entropy, AdamW; float32;
* the jitted conv forward at ``bench_conv.py``'s three sizes against the BLAS floor
  (one float32 matmul with the same FLOPs);
* the first call of each jitted functrace step in a fresh process with an empty
  private kernel cache (cold) and with the cache that run left (warm).

JAX and PyTorch run in worker processes that time a case on request (PyTorch's
OpenMP threads keep spinning after each op and would slow whatever runs next in
their process), so every implementation is timed in interleaved rounds, medians,
under the same machine load. All start from the same parameters and batch; the
first steps' losses are compared before timing. ``--ref-python PATH`` runs the
workers with another interpreter (one that has ``jax`` and ``torch``; they need
neither functrace nor Numba).

Run: ``.venv/bin/python bench/bench_layers.py`` (``--quick`` for shorter rounds).
Not a test: it asserts nothing beyond the cross-library agreement of the losses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
from _util import fmt_time, interleaved, print_table, time_per_call  # noqa: E402

QUICK = "--quick" in sys.argv
MIN_TIME = 0.1 if QUICK else 0.25
ROUNDS = 3 if QUICK else 7

CNN_BATCH = 64
VOCAB, CTX, TF_BATCH, TF_LAYERS, TF_HEADS, TF_D, TF_FF = 65, 64, 32, 2, 4, 64, 256
LR, WD, EPS = 1e-3, 1e-2, 1e-8
CONV_DN = ("NHWC", "HWIO", "NHWC")


# ---------------------------------------------------------------------------
# Shared data and parameters (NumPy only: the workers load them from an .npz)
# ---------------------------------------------------------------------------


def cnn_batch(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((CNN_BATCH, 1, 28, 28)).astype(np.float32)  # NCHW
    return x, rng.integers(0, 10, CNN_BATCH).astype(np.int32)


def tf_batch(seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    ids = np.random.default_rng(seed).integers(0, VOCAB, (TF_BATCH, CTX + 1)).astype(np.int32)
    return ids[:, :-1], ids[:, 1:]


# ---------------------------------------------------------------------------
# functrace
# ---------------------------------------------------------------------------


def ft_cnn_model(seed: int = 0) -> Any:
    """LeNet as functrace ``nn`` layers (PyTorch's layouts: NCHW, OIHW kernels)."""
    import functrace.numpy as fnp
    from functrace import nn

    class LeNet(nn.Module):
        c1: Any
        c2: Any
        f1: Any
        f2: Any
        f3: Any
        pool: Any

        def __init__(self, rng: Any) -> None:
            gen = np.random.default_rng(rng)
            self.c1 = nn.Conv2d(1, 6, 5, padding=2, rng=gen)
            self.c2 = nn.Conv2d(6, 16, 5, rng=gen)
            self.f1 = nn.Linear(400, 120, rng=gen)
            self.f2 = nn.Linear(120, 84, rng=gen)
            self.f3 = nn.Linear(84, 10, rng=gen)
            self.pool = nn.MaxPool2d(2)

        def __call__(self, x: Any) -> Any:
            h = self.pool(nn.relu(self.c1(x)))
            h = self.pool(nn.relu(self.c2(h)))
            h = fnp.reshape(h, (h.shape[0], -1))
            return self.f3(nn.relu(self.f2(nn.relu(self.f1(h)))))

    return LeNet(seed)


def ft_cnn_step() -> Callable[..., Any]:
    """The CNN's Adam step (not jitted); ``step.init`` makes the optimizer state."""
    import functrace as ft
    from functrace import nn, optim

    opt = optim.adam(LR, eps=EPS)

    def loss_fn(model: Any, x: Any, y: Any) -> Any:
        return nn.cross_entropy(model(x), y)

    def step(model: Any, s: Any, x: Any, y: Any) -> Any:
        loss, g = ft.value_and_grad(loss_fn)(model, x, y)
        upd, s = opt.update(g, s, model)
        return optim.apply_updates(model, upd), s, loss

    step.init = opt.init  # type: ignore[attr-defined]
    return step


def ft_tf_model(seed: int = 0) -> Any:
    """The character-level decoder as a functrace ``nn`` module."""
    from functrace import nn

    class CharDecoder(nn.Module):
        tok: Any
        pos: Any
        layers: Any
        norm: Any
        head: Any

        def __init__(self, rng: Any) -> None:
            gen = np.random.default_rng(rng)
            self.tok = nn.Embedding(VOCAB, TF_D, rng=gen)
            self.pos = nn.Embedding(CTX, TF_D, rng=gen)
            self.layers = tuple(
                nn.TransformerEncoderLayer(
                    TF_D,
                    TF_HEADS,
                    TF_FF,
                    dropout=0.0,
                    activation="gelu",
                    batch_first=True,
                    norm_first=True,
                    rng=gen,
                )
                for _ in range(TF_LAYERS)
            )
            self.norm = nn.LayerNorm(TF_D)
            self.head = nn.Linear(TF_D, VOCAB, rng=gen)

        def __call__(self, ids: Any) -> Any:
            mask = np.triu(np.ones((CTX, CTX), bool), 1)  # True: not allowed
            h = self.tok(ids) + self.pos.weight
            for layer in self.layers:
                h = layer(h, src_mask=mask, is_causal=True)
            return self.head(self.norm(h))

    return CharDecoder(seed)


def ft_tf_step() -> Callable[..., Any]:
    import functrace as ft
    from functrace import nn, optim

    opt = optim.adamw(LR, eps=EPS, weight_decay=WD)

    def loss_fn(model: Any, x: Any, y: Any) -> Any:
        import functrace.numpy as fnp

        logits = fnp.reshape(model(x), (-1, VOCAB))
        return nn.cross_entropy(logits, fnp.reshape(y, (-1,)))

    def step(model: Any, s: Any, x: Any, y: Any) -> Any:
        loss, g = ft.value_and_grad(loss_fn)(model, x, y)
        upd, s = opt.update(g, s, model)
        return optim.apply_updates(model, upd), s, loss

    step.init = opt.init  # type: ignore[attr-defined]
    return step


def torch_names(model: Any) -> dict[str, np.ndarray]:
    """The module's parameters by PyTorch ``state_dict`` names (``layers.0.norm1.weight``)."""
    from functrace import nn

    out = {}
    for path, leaf in nn.named_parameters(model):
        name = path.lstrip(".").replace("[", ".").replace("]", "")
        out[name] = np.asarray(leaf)
    return out


def ft_setup(case: str) -> tuple[Callable[[], Any], list[float], dict[str, np.ndarray]]:
    """A closure running one jitted step (feeding its state back), the losses of the
    first two steps, and the initial parameters for the workers."""
    from functrace.jit import jit

    if case == "cnn":
        params, (x, y), step = ft_cnn_model(), cnn_batch(), ft_cnn_step()
    else:
        params, (x, y), step = ft_tf_model(), tf_batch(), ft_tf_step()
    names = torch_names(params)
    jstep = jit(step)
    state = [params, step.init(params)]  # type: ignore[attr-defined]
    losses = []
    for _ in range(2):
        state[0], state[1], loss = jstep(state[0], state[1], x, y)
        losses.append(float(loss))
    state = [params, step.init(params)]  # type: ignore[attr-defined]

    def run() -> None:
        state[0], state[1], _ = jstep(state[0], state[1], x, y)

    run.jitted = jstep  # type: ignore[attr-defined]
    return run, losses, names


# ---------------------------------------------------------------------------
# JAX (worker process)
# ---------------------------------------------------------------------------


def _jax_adam(jax: Any, jnp: Any, wd: float) -> tuple[Callable[..., Any], Callable[..., Any]]:
    tm = jax.tree_util.tree_map

    def init(p: Any) -> Any:
        return (jnp.zeros((), jnp.float32), tm(jnp.zeros_like, p), tm(jnp.zeros_like, p))

    def update(p: Any, g: Any, s: Any) -> Any:
        t, m, v = s
        t = t + 1.0
        m = tm(lambda m_, g_: 0.9 * m_ + 0.1 * g_, m, g)
        v = tm(lambda v_, g_: 0.999 * v_ + 0.001 * g_ * g_, v, g)
        bc1, bc2 = 1 - 0.9**t, 1 - 0.999**t
        p = tm(
            lambda p_, m_, v_: p_ - LR * ((m_ / bc1) / (jnp.sqrt(v_ / bc2) + EPS) + wd * p_),
            p,
            m,
            v,
        )
        return p, (t, m, v)

    return init, update


def _jax_cases(npz: dict[str, np.ndarray]) -> dict[str, Callable[[], Any]]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    cases: dict[str, Callable[[], Any]] = {}

    def xent(logits: Any, y: Any) -> Any:
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))

    # -- CNN ----------------------------------------------------------------
    def cnn_fwd(p: Any, x: Any) -> Any:
        def block(h: Any, w: Any, b: Any, pad: int) -> Any:
            pads = ((pad, pad), (pad, pad))
            h = jax.lax.conv_general_dilated(h, w, (1, 1), pads, dimension_numbers=CONV_DN)
            h = jnp.maximum(h + b, 0.0)
            return jax.lax.reduce_window(
                h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
            )

        h = block(x, p["c1w"], p["c1b"], 2)
        h = block(h, p["c2w"], p["c2b"], 0).reshape(x.shape[0], -1)
        h = jnp.maximum(h @ p["f1w"] + p["f1b"], 0.0)
        h = jnp.maximum(h @ p["f2w"] + p["f2b"], 0.0)
        return h @ p["f3w"] + p["f3b"]

    def make_step(loss_fn: Callable[..., Any], wd: float) -> tuple[Any, Any]:
        init, update = _jax_adam(jax, jnp, wd)

        @jax.jit
        def step(p: Any, s: Any, x: Any, y: Any) -> Any:
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            p, s = update(p, g, s)
            return p, s, loss

        return init, step

    def runner(init: Any, step: Any, p: Any, x: Any, y: Any) -> tuple[Any, list[float]]:
        state = [p, init(p)]
        losses = []
        for _ in range(2):
            state[0], state[1], loss = step(state[0], state[1], x, y)
            losses.append(float(loss))
        state = [p, init(p)]

        def run() -> None:
            state[0], state[1], loss = step(state[0], state[1], x, y)
            loss.block_until_ready()

        return run, losses

    # PyTorch's layouts -> channels-last: HWIO kernels, (in, out) dense weights, the
    # first dense layer's rows from (C, H, W) to (H, W, C) order
    c = {k[4:]: v for k, v in npz.items() if k.startswith("cnn.")}
    cnn_p = {
        "c1w": c["c1.weight"].transpose(2, 3, 1, 0),
        "c1b": c["c1.bias"],
        "c2w": c["c2.weight"].transpose(2, 3, 1, 0),
        "c2b": c["c2.bias"],
        "f1w": c["f1.weight"].T.reshape(16, 5, 5, 120).transpose(1, 2, 0, 3).reshape(400, 120),
        "f1b": c["f1.bias"],
        "f2w": c["f2.weight"].T,
        "f2b": c["f2.bias"],
        "f3w": c["f3.weight"].T,
        "f3b": c["f3.bias"],
    }
    cnn_p = {k: jnp.asarray(np.ascontiguousarray(v)) for k, v in cnn_p.items()}
    x, y = cnn_batch()
    x, y = jnp.asarray(x.transpose(0, 2, 3, 1)), jnp.asarray(y)
    init, step = make_step(lambda p, x, y: xent(cnn_fwd(p, x), y), 0.0)
    cases["cnn"], cases["cnn losses"] = runner(init, step, cnn_p, x, y)

    # -- transformer ----------------------------------------------------------
    tp = {k[3:]: jnp.asarray(v) for k, v in npz.items() if k.startswith("tf.")}
    mask = jnp.triu(jnp.ones((CTX, CTX), bool), 1)
    dh = TF_D // TF_HEADS

    def ln(h: Any, w: Any, b: Any) -> Any:
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) / jnp.sqrt(var + 1e-5) * w + b

    def tf_fwd(p: Any, ids: Any) -> Any:
        n = ids.shape[0]
        h = p["tok.weight"][ids] + p["pos.weight"]
        for i in range(TF_LAYERS):
            q = f"layers.{i}."
            a = ln(h, p[q + "norm1.weight"], p[q + "norm1.bias"])
            qkv = a @ p[q + "self_attn.in_proj_weight"].T + p[q + "self_attn.in_proj_bias"]
            qkv = qkv.reshape(n, CTX, 3, TF_HEADS, dh).transpose(2, 0, 3, 1, 4)
            s = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) / np.sqrt(dh)
            w = jax.nn.softmax(jnp.where(mask, -jnp.inf, s), axis=-1)
            o = (w @ qkv[2]).transpose(0, 2, 1, 3).reshape(n, CTX, TF_D)
            h = h + o @ p[q + "self_attn.out_proj.weight"].T + p[q + "self_attn.out_proj.bias"]
            a = ln(h, p[q + "norm2.weight"], p[q + "norm2.bias"])
            f = jax.nn.gelu(a @ p[q + "linear1.weight"].T + p[q + "linear1.bias"], False)
            h = h + f @ p[q + "linear2.weight"].T + p[q + "linear2.bias"]
        h = ln(h, p["norm.weight"], p["norm.bias"])
        return h @ p["head.weight"].T + p["head.bias"]

    x, y = (jnp.asarray(a) for a in tf_batch())
    init, step = make_step(lambda p, x, y: xent(tf_fwd(p, x).reshape(-1, VOCAB), y.reshape(-1)), WD)
    cases["tf"], cases["tf losses"] = runner(init, step, tp, x, y)

    # -- conv forward ---------------------------------------------------------
    conv = jax.jit(
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=CONV_DN)
    )
    for name in _conv_names(npz):
        cx, cw = jnp.asarray(npz[f"conv.{name}.x"]), jnp.asarray(npz[f"conv.{name}.w"])
        cases[f"conv {name}"] = lambda cx=cx, cw=cw: conv(cx, cw).block_until_ready()
    return cases


# ---------------------------------------------------------------------------
# PyTorch eager (worker process)
# ---------------------------------------------------------------------------


def _torch_cases(npz: dict[str, np.ndarray]) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    cases: dict[str, Any] = {}

    def runner(model: Any, opt: Any, x: Any, y: Any) -> tuple[Any, list[float]]:
        def run() -> float:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x).reshape(-1, model.classes), y.reshape(-1))
            loss.backward()
            opt.step()
            return float(loss.detach())

        state = {k: v.clone() for k, v in model.state_dict().items()}
        losses = [run(), run()]
        model.load_state_dict(state)
        opt.state.clear()
        return run, losses

    # -- CNN (NCHW) -------------------------------------------------------------
    class LeNet(torch.nn.Module):
        classes = 10

        def __init__(self) -> None:
            super().__init__()
            self.c1 = torch.nn.Conv2d(1, 6, 5, padding=2)
            self.c2 = torch.nn.Conv2d(6, 16, 5)
            self.f1 = torch.nn.Linear(400, 120)
            self.f2 = torch.nn.Linear(120, 84)
            self.f3 = torch.nn.Linear(84, 10)

        def forward(self, x: Any) -> Any:
            h = F.max_pool2d(F.relu(self.c1(x)), 2)
            h = F.max_pool2d(F.relu(self.c2(h)), 2).flatten(1)
            return self.f3(F.relu(self.f2(F.relu(self.f1(h)))))

    cnn = LeNet()
    cnn.load_state_dict(
        {k[4:]: torch.from_numpy(v) for k, v in npz.items() if k.startswith("cnn.")}
    )
    x, y = cnn_batch()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
    cases["cnn"], cases["cnn losses"] = runner(
        cnn, torch.optim.Adam(cnn.parameters(), lr=LR, eps=EPS), xt, yt
    )

    # -- transformer ------------------------------------------------------------
    class CharDecoder(torch.nn.Module):
        classes = VOCAB

        def __init__(self) -> None:
            super().__init__()
            self.tok = torch.nn.Embedding(VOCAB, TF_D)
            self.pos = torch.nn.Embedding(CTX, TF_D)
            self.layers = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(
                    TF_D,
                    TF_HEADS,
                    TF_FF,
                    dropout=0.0,
                    activation="gelu",
                    batch_first=True,
                    norm_first=True,
                )
                for _ in range(TF_LAYERS)
            )
            self.norm = torch.nn.LayerNorm(TF_D)
            self.head = torch.nn.Linear(TF_D, VOCAB)
            self.register_buffer("mask", torch.triu(torch.ones(CTX, CTX, dtype=torch.bool), 1))

        def forward(self, ids: Any) -> Any:
            h = self.tok(ids) + self.pos.weight
            for layer in self.layers:
                h = layer(h, src_mask=self.mask, is_causal=True)
            return self.head(self.norm(h))

    dec = CharDecoder()
    sd = {k[3:]: torch.from_numpy(v) for k, v in npz.items() if k.startswith("tf.")}
    sd["mask"] = dec.mask
    dec.load_state_dict(sd)
    x, y = (torch.from_numpy(a.astype(np.int64)) for a in tf_batch())
    cases["tf"], cases["tf losses"] = runner(
        dec, torch.optim.AdamW(dec.parameters(), lr=LR, eps=EPS, weight_decay=WD), x, y
    )

    # -- conv forward (NCHW / OIHW) ---------------------------------------------
    for name in _conv_names(npz):
        cx = torch.from_numpy(np.ascontiguousarray(npz[f"conv.{name}.x"].transpose(0, 3, 1, 2)))
        cw = torch.from_numpy(np.ascontiguousarray(npz[f"conv.{name}.w"].transpose(3, 2, 0, 1)))

        def conv(cx: Any = cx, cw: Any = cw) -> Any:
            with torch.no_grad():
                return F.conv2d(cx, cw, padding="same")

        cases[f"conv {name}"] = conv
    return cases


def _conv_names(npz: dict[str, np.ndarray]) -> list[str]:
    return [k[5:-2] for k in npz if k.startswith("conv.") and k.endswith(".x")]


def _worker(kind: str) -> None:
    """Serve timing requests on stdin: the first line names the .npz of shared inputs."""
    npz = dict(np.load(sys.stdin.readline().strip()))
    cases = _jax_cases(npz) if kind == "jax" else _torch_cases(npz)
    print(json.dumps({k: v for k, v in cases.items() if k.endswith("losses")}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        t = time_per_call(cases[cmd["key"]], min_time=cmd["min_time"], repeats=cmd["repeats"])
        print(json.dumps(t), flush=True)


class Worker:
    """A JAX or PyTorch process timing a case when asked (see the module docstring)."""

    def __init__(self, kind: str, python: str, npz_path: str) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), f"--{kind}-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send(npz_path)
        self.losses: dict[str, list[float]] = json.loads(self._recv())

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _recv(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.kind} worker died (see its stderr above)")
        return line

    def time(self, key: str, min_time: float, repeats: int) -> float:
        self._send(json.dumps({"key": key, "min_time": min_time, "repeats": repeats}))
        return float(json.loads(self._recv()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _has(python: str, module: str) -> bool:
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


# ---------------------------------------------------------------------------
# Fresh-process first call
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench_dir!r})
import bench_layers as b
import functrace
t1 = time.perf_counter()
run, losses, _ = b.ft_setup({case!r})
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "setup": t2 - t1, "compiled": run.jitted.compile_count}}))
"""


def first_call(case: str, cache_dir: str) -> dict[str, float]:
    """Import time and the time to a compiled step (tracing, lowering, compiling or
    loading kernels, and the first two steps) in a fresh process."""
    code = _CHILD.format(bench_dir=BENCH_DIR, case=case)
    env = dict(os.environ, FUNCTRACE_CACHE_DIR=cache_dir)
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode:
        raise RuntimeError(f"first-call process failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b is not None else "-"


def _t(a: float | None) -> str:
    return fmt_time(a) if a is not None else "-"


def main() -> None:
    ref_python = sys.executable
    if "--ref-python" in sys.argv:
        ref_python = sys.argv[sys.argv.index("--ref-python") + 1]
    os.environ["FUNCTRACE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ft-bench-cache-")
    load_before = os.getloadavg()[0]
    from bench_conv import SIZES
    from functrace import lax
    from functrace.jit import jit

    per = {"min_time": MIN_TIME, "repeats": 3}
    runs, npz = {}, {}
    compile_s: dict[str, float] = {}
    ft_losses = {}
    for case in ("cnn", "tf"):
        t0 = time.perf_counter()
        runs[case], ft_losses[case], names = ft_setup(case)
        compile_s[case] = time.perf_counter() - t0
        npz.update({f"{case}.{k}": v for k, v in names.items()})
    rng = np.random.default_rng(0)
    conv_inputs = {}
    for name, xs, ws in SIZES:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        npz[f"conv.{name}.x"], npz[f"conv.{name}.w"] = x, w
        conv_inputs[name] = (x, w)
    tmp = tempfile.mkdtemp(prefix="ft-bench-layers-")
    npz_path = os.path.join(tmp, "inputs.npz")
    np.savez(npz_path, **npz)

    workers: dict[str, Worker] = {}
    for kind, label in (("jax", "JAX jit"), ("torch", "PyTorch eager")):
        if _has(ref_python, kind):
            workers[label] = Worker(kind, ref_python, npz_path)
        else:
            print(f"({kind} not importable by {ref_python}: its column is empty)")
    try:
        for label, w in workers.items():
            for case in ("cnn", "tf"):
                np.testing.assert_allclose(
                    w.losses[f"{case} losses"], ft_losses[case], rtol=2e-3, err_msg=label
                )
        step_rows = []
        for case, title in (("cnn", "LeNet CNN, b64 28x28x1"), ("tf", "char decoder, b32 L64")):
            cases: dict[str, Callable[[], float]] = {
                "ft": lambda r=runs[case]: time_per_call(r, **per)
            }
            for label, w in workers.items():
                cases[label] = lambda w=w, k=case: w.time(k, **per)
            res = interleaved(cases, ROUNDS)
            jx, pt = res.get("JAX jit"), res.get("PyTorch eager")
            step_rows.append(
                [
                    title,
                    fmt_time(res["ft"]),
                    _t(jx),
                    _ratio(res["ft"], jx),
                    _t(pt),
                    _ratio(res["ft"], pt),
                    f"{ft_losses[case][0]:.4f}",
                    f"{compile_s[case]:.2f} s",
                    str(runs[case].jitted.compile_count),
                ]
            )

        ft_conv = jit(
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=CONV_DN)
        )
        conv_rows = []
        for name, xs, ws in SIZES:
            x, w = conv_inputs[name]
            n, h, wd, c = xs
            kh, kw, _, o = ws
            a = rng.standard_normal((n * h * wd, kh * kw * c)).astype(np.float32)
            b = rng.standard_normal((kh * kw * c, o)).astype(np.float32)
            flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
            cases = {
                "ft": lambda x=x, w=w: time_per_call(lambda: ft_conv(x, w), **per),
                "floor": lambda a=a, b=b: time_per_call(lambda: np.matmul(a, b), **per),
            }
            for label, wk in workers.items():
                cases[label] = lambda wk=wk, k=f"conv {name}": wk.time(k, **per)
            res = interleaved(cases, ROUNDS)
            jx, pt = res.get("JAX jit"), res.get("PyTorch eager")
            conv_rows.append(
                [
                    name,
                    f"{flops / 1e6:.0f}",
                    fmt_time(res["ft"]),
                    fmt_time(res["floor"]),
                    f"{res['floor'] / res['ft']:.2f}",
                    _t(jx),
                    _ratio(res["ft"], jx),
                    _t(pt),
                    _ratio(res["ft"], pt),
                ]
            )
    finally:
        for w in workers.values():
            w.close()

    first_rows = []
    for case, title in (("cnn", "LeNet CNN step"), ("tf", "char decoder step")):
        with tempfile.TemporaryDirectory() as d:
            cold = first_call(case, d)
            warm = min((first_call(case, d) for _ in range(2)), key=lambda r: r["setup"])
        first_rows.append(
            [
                title,
                f"{cold['setup']:.2f} s",
                str(cold["compiled"]),
                f"{warm['setup']:.2f} s",
                str(warm["compiled"]),
                f"{warm['import']:.2f} s",
            ]
        )

    print_table(
        f"training step, float32, median of {ROUNDS} interleaved rounds (functrace: jit's "
        "default threading; JAX, PyTorch: their defaults)",
        [
            "model",
            "functrace jit",
            "JAX jit",
            "ft/JAX",
            "PyTorch eager",
            "ft/PyTorch",
            "first loss",
            "compile (this process)",
            "kernels",
        ],
        step_rows,
    )
    print_table(
        "jitted conv_general_dilated forward (float32, NHWC/HWIO; PyTorch NCHW/OIHW), SAME",
        [
            "size",
            "MFLOP",
            "functrace",
            "BLAS floor",
            "floor/ft",
            "JAX jit",
            "ft/JAX",
            "PyTorch",
            "ft/PyTorch",
        ],
        conv_rows,
    )
    print_table(
        "first two calls of the jitted step in a fresh process, with tracing and compiling "
        "(cold: empty kernel cache; warm: its cache, best of 2)",
        ["step", "cold cache", "kernels compiled", "warm cache", "kernels compiled", "import"],
        first_rows,
    )
    print(
        f"\nload average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after the run, "
        f"on {os.cpu_count()} cores (ratios come from interleaved rounds)"
    )


if __name__ == "__main__":
    if "--jax-worker" in sys.argv:
        _worker("jax")
    elif "--torch-worker" in sys.argv:
        _worker("torch")
    else:
        main()
