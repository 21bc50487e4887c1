"""Worker programs for tests/test_distributed.py, run under ``mpirun -n N``.

``python tests/mpi_workers.py SCENARIO OUT_DIR``: each process writes what it saw to
``OUT_DIR/rank<i>.npz`` (the test reads and checks them). The pieces the test also
needs on one process (the inputs, the training run) are functions of this module.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings
from typing import Any

import numpy as np

import functrace as ft
import functrace.numpy as fnp
from functrace import data, io, optim
from functrace import distributed as dist

MAX_NORM = 0.05  # small enough that the clip is active: it must see the global norm


def mixed_tree(rank: int) -> dict[str, Any]:
    """A process's input to allreduce: several leaves of four dtypes."""
    r = rank + 1
    return {
        "f64": np.arange(6.0).reshape(2, 3) * r,
        "f64b": np.float64(r),
        "f32": (np.arange(4, dtype=np.float32) + 0.5) * r,
        "f32b": np.full((2, 2), r, np.float32),
        "c128": np.array([1 + 2j, -1j]) * r,
        "f16": np.full(3, r, np.float16),
    }


def int_tree(rank: int) -> dict[str, Any]:
    return {
        "i32": np.arange(5, dtype=np.int32) * (rank + 1),
        "i64": np.int64(rank),
        "u8": np.uint8(1),
    }


def bcast_tree(rank: int) -> dict[str, Any]:
    return {
        "w": np.full((2, 3), rank, np.float32),
        "flag": np.array([rank % 2 == 0, True]),
        "h": np.full(2, rank, np.float16),
        "n": np.int64(10 + rank),
        "empty": np.zeros((0, 2)),
    }


def problem(dtype: Any, n: int = 128) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Synthetic 3-class data and a tanh MLP 8-16-3 (the same on every process)."""
    g = np.random.default_rng(7)
    X = g.standard_normal((n, 8)).astype(dtype)
    y = (np.argmax(X[:, :3] + 0.3 * g.standard_normal((n, 3)), axis=1)).astype(np.int64)
    params = {
        "w1": (g.standard_normal((8, 16)) * 0.5).astype(dtype),
        "b1": np.zeros(16, dtype),
        "w2": (g.standard_normal((16, 3)) * 0.5).astype(dtype),
        "b2": np.zeros(3, dtype),
    }
    return X, y, params


def loss_fn(params: Any, x: Any, y: Any) -> Any:
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    logp = logits - fnp.log(fnp.sum(fnp.exp(logits), axis=1, keepdims=True))
    return -fnp.mean(fnp.take_along_axis(logp, y[:, None], axis=1))


def train(
    dtype: Any,
    *,
    batch_size: int,
    steps: int = 10,
    n: int = 128,
    shard: tuple[int, int] | None = None,
    use_jit: bool = False,
) -> tuple[dict[str, np.ndarray], list[float], list[float]]:
    """``steps`` micro-batch steps of accumulate(chain(clip, adam), every_k=2) on the
    global batches of ``batch_size``; with ``shard``, data-parallel over the processes.
    Returns the parameters, the losses and the global norms the clip saw."""
    X, y, params = problem(dtype, n)
    norms: list[float] = []

    def record_norm(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        norms.append(float(optim.global_norm(grads)))
        return grads, state

    probe = optim.GradientTransformation(lambda p: optim.EmptyState(), record_norm)
    opt = optim.accumulate(
        optim.chain(probe, optim.clip_by_global_norm(MAX_NORM), optim.adam(0.05)), every_k=2
    )
    vg = ft.value_and_grad(loss_fn)
    grad_fn = ft.jit(vg) if use_jit else vg
    if shard is not None:
        params = dist.broadcast(params)
        grad_fn = dist.data_parallel(grad_fn, has_value=True)
    state = opt.init(params)
    losses: list[float] = []
    epoch = 0
    while len(losses) < steps:
        rng = np.random.default_rng([3, epoch])
        for xb, yb in data.batches(X, y, batch_size=batch_size, rng=rng, shard=shard):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an empty shard's mean
                loss, grads = grad_fn(params, xb, yb)
            updates, state = opt.update(grads, state, params)
            params = optim.apply_updates(params, updates)
            losses.append(float(loss))
            if len(losses) == steps:
                break
        epoch += 1
    return {k: np.asarray(v) for k, v in params.items()}, losses, norms


class CountingComm:
    """Forwards to a communicator and counts the calls of each method."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return target(*args, **kwargs)

        return call


def _flat(prefix: str, tree: dict[str, Any], out: dict[str, Any]) -> None:
    for k, v in tree.items():
        out[f"{prefix}/{k}"] = np.asarray(v)


def scenario_main(out_dir: str) -> None:
    dist.initialize()
    rank, size = dist.process_index(), dist.process_count()
    rec: dict[str, Any] = {"rank": rank, "size": size, "initialized": dist.is_initialized()}
    # allreduce of mixed-dtype trees, counting the MPI calls
    from functrace.distributed import _world

    counting = CountingComm(_world.comm())
    old = _world._set_comm(counting, "mpi", _world.sum_op())
    try:
        _flat("sum", dist.allreduce(mixed_tree(rank), op="sum"), rec)
        calls_sum = dict(counting.calls)
        counting.calls.clear()
        _flat("mean", dist.allreduce(mixed_tree(rank)), rec)
        _flat("isum", dist.allreduce(int_tree(rank), op="sum"), rec)
        counting.calls.clear()
        _flat("wmean", dist.allreduce(mixed_tree(rank), weight=rank + 1), rec)
        calls_wmean = dict(counting.calls)
    finally:
        _world._set_comm(*old)
    rec["calls_sum_allreduce"] = calls_sum.get("Allreduce", 0)
    rec["calls_sum_allgather"] = calls_sum.get("Allgather", 0)
    rec["calls_wmean_allreduce"] = calls_wmean.get("Allreduce", 0)
    # an empty shard: weight 0 and NaN values contribute nothing
    w = 0 if rank == size - 1 else 2
    val = np.full(3, np.nan) if w == 0 else np.full(3, float(rank))
    rec["w0"] = dist.allreduce(val, weight=w)
    # a mismatched tree is the same error everywhere, not a hang
    try:
        dist.allreduce({"a": np.zeros(rank + 1)})
        rec["mismatch"] = ""
    except ValueError as e:
        rec["mismatch"] = str(e)
    # broadcast from process 0 and from the last one
    _flat("b0", dist.broadcast(bcast_tree(rank)), rec)
    _flat("blast", dist.broadcast(bcast_tree(rank), root=size - 1), rec)
    # the shards of every batch: indices of the examples each process gets
    for drop_last in (False, True):
        got = list(
            data.batches(
                np.arange(23), batch_size=7, rng=5, drop_last=drop_last, shard=(rank, size)
            )
        )
        rec[f"shard_sizes_{drop_last}"] = np.array([len(b) for (b,) in got])
        rec[f"shard_idx_{drop_last}"] = np.concatenate([b for (b,) in got])
    # the checkpoint: written once (by process 0), readable by all on return
    path = os.path.join(out_dir, "ckpt.npz")
    saves = []
    real_save = io.save

    def counting_save(p: Any, tree: Any) -> None:
        saves.append(p)
        real_save(p, tree)

    from functrace.distributed import _training

    _training.io.save = counting_save  # type: ignore[attr-defined]
    try:
        tree = {"params": bcast_tree(0), "step": np.int64(4)}
        dist.save_checkpoint(path, dist.broadcast(tree))
    finally:
        _training.io.save = real_save  # type: ignore[attr-defined]
    rec["ckpt_saves"] = len(saves)
    back = io.load(path)
    rec["ckpt_step"] = back["step"]
    _flat("ckpt", back["params"], rec)
    # data-parallel training
    global_batch = 64 if size == 2 else 20
    n = 128 if size == 2 else 82  # 82 = 4 * 20 + 2: the last batch is split 1, 1, 0
    for dtype in (np.float64, np.float32):
        params, losses, norms = train(dtype, batch_size=global_batch, n=n, shard=(rank, size))
        name = np.dtype(dtype).name
        _flat(f"train_{name}", params, rec)
        rec[f"losses_{name}"] = np.array(losses)
        rec[f"norms_{name}"] = np.array(norms)
    dist.barrier()
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **rec)


def scenario_fail(out_dir: str, how: str) -> None:
    """Train; at step 3 process 1 dies (``exit``: os._exit(3); ``kill``: SIGKILL) or
    raises (``raise``)."""
    dist.initialize()
    rank, size = dist.process_index(), dist.process_count()
    X, y, params = problem(np.float64)
    grad_fn = dist.data_parallel(ft.value_and_grad(loss_fn), has_value=True)
    opt = optim.adam(0.01)
    state = opt.init(params)
    for step, (xb, yb) in enumerate(data.batches(X, y, batch_size=8, rng=0, shard=(rank, size))):
        if step == 3 and rank == 1:
            if how == "exit":
                os._exit(3)
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("worker failure on purpose")
        _, grads = grad_fn(params, xb, yb)
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)
    with open(os.path.join(out_dir, f"finished{rank}"), "w") as f:
        f.write("the peer's failure went unnoticed")


if __name__ == "__main__":
    scenario, out = sys.argv[1], sys.argv[2]
    if scenario == "main":
        scenario_main(out)
    elif scenario in ("exit", "kill", "raise"):
        scenario_fail(out, scenario)
    else:
        raise SystemExit(f"mpi_workers: unknown scenario {scenario!r}")
