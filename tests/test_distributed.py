"""functrace.distributed: the one-process world (always), a simulated world of identical
processes (the packing, weights and call counts), and real MPI jobs of 2 and 3
processes (``mpirun``, skipped with the reason when Open MPI or mpi4py is missing;
``make test`` installs them)."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import functrace as ft
import mpi_workers as mw
from functrace import data, io
from functrace import distributed as dist
from functrace.distributed import _world

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"

# ---------------------------------------------------------------------------
# One process (no launcher): always runs
# ---------------------------------------------------------------------------


def test_one_process_world() -> None:
    dist.initialize()
    assert dist.is_initialized()
    assert (dist.process_index(), dist.process_count()) == (0, 1)
    assert _world.backend() == "local"
    dist.barrier()
    tree = mw.mixed_tree(0)
    for op in ("sum", "mean"):
        out = dist.allreduce(tree, op=op)
        assert set(out) == set(tree)
        for k, v in tree.items():
            assert out[k].dtype == np.asarray(v).dtype and out[k].shape == np.shape(v)
            np.testing.assert_array_equal(out[k], v)
    b = dist.broadcast(mw.bcast_tree(0))
    for k, v in mw.bcast_tree(0).items():
        np.testing.assert_array_equal(b[k], v)
        assert b[k].dtype == np.asarray(v).dtype


def test_one_process_data_parallel_is_the_gradient(tmp_path: Path) -> None:
    X, y, params = mw.problem(np.float64, 16)
    vg = ft.value_and_grad(mw.loss_fn)
    loss, grads = dist.data_parallel(vg, has_value=True)(params, X, y)
    ref_loss, ref_grads = vg(params, X, y)
    assert float(loss) == float(ref_loss)
    for k in grads:
        np.testing.assert_array_equal(grads[k], ref_grads[k])
    path = tmp_path / "c.npz"
    dist.save_checkpoint(path, {"p": params, "step": 3})
    back = io.load(path)
    assert back["step"] == 3
    np.testing.assert_array_equal(back["p"]["w1"], params["w1"])


def test_mpi4py_is_imported_inside_functions_only() -> None:
    # `import functrace` must work without mpi4py and never start MPI.
    found = []
    for path in sorted((SRC / "functrace").rglob("*.py")):
        text = path.read_text()
        if "mpi4py" not in text:
            continue
        tree = ast.parse(text)
        nested = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] == "mpi4py" for n in names):
                found.append((path.name, id(node) in nested))
    assert found and all(inside for _, inside in found), found


def test_demo_data_parallel_is_for_the_mlp_and_the_cnn(capsys: pytest.CaptureFixture) -> None:
    from functrace import _demo

    assert _demo.main(["--model", "transformer", "--data-parallel"]) == 2
    assert "--data-parallel trains the mlp or the cnn" in capsys.readouterr().err


def test_errors_name_the_function_and_the_input() -> None:
    with pytest.raises(
        ValueError, match=r"allreduce: expected op as one of \('mean', 'sum'\), got 'max'"
    ):
        dist.allreduce(np.ones(2), op="max")
    with pytest.raises(
        TypeError, match=r"allreduce: op='mean' expected floating.*int32 at \['i32'\].*op='sum'"
    ):
        dist.allreduce(mw.int_tree(0))
    with pytest.raises(TypeError, match=r"allreduce: op='sum' expected integer.*bool"):
        dist.allreduce(np.array([True]), op="sum")
    with pytest.raises(
        ValueError, match=r"allreduce: expected weight as a finite number >= 0, got -1"
    ):
        dist.allreduce(np.ones(2), weight=-1)
    with pytest.raises(ValueError, match="weights of all processes sum to 0"):
        dist.allreduce(np.ones(2), weight=0)
    with pytest.raises(
        ValueError, match=r"broadcast: expected root as a process index in \[0, 1\), got 1"
    ):
        dist.broadcast(np.ones(2), root=1)
    with pytest.raises(TypeError, match=r"allreduce: expected concrete arrays, got a traced value"):
        ft.jit(lambda x: dist.allreduce(x))(np.ones(2))
    with pytest.raises(ValueError, match=r"data_parallel: has_aux=True needs has_value=True"):
        dist.data_parallel(ft.grad(mw.loss_fn), has_aux=True)
    gf = dist.data_parallel(ft.grad(mw.loss_fn), batch_argnum=3)
    X, y, params = mw.problem(np.float64, 4)
    with pytest.raises(ValueError, match=r"data_parallel: expected a batch argument at position 3"):
        gf(params, X, y)
    with pytest.raises(
        ValueError, match=r"batches: expected shard as \(index, count\).*got \(2, 2\)"
    ):
        next(data.batches(np.arange(4), batch_size=2, rng=0, shard=(2, 2)))
    with pytest.raises(
        ValueError, match=r"batches: shard= with shuffle=True needs the same rng seed"
    ):
        next(data.batches(np.arange(4), batch_size=2, shard=(0, 2)))


def test_launched_by_mpi_without_mpi4py_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py raises ImportError
    old = _world._set_comm(None, "")
    try:
        with pytest.raises(
            ImportError, match=r"needs the package mpi4py.*pip install 'functrace\[mpi\]'"
        ):
            dist.initialize()
        assert not dist.is_initialized()
    finally:
        _world._set_comm(*old)


@pytest.mark.parametrize("count", [1, 2, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_shards_are_disjoint_and_cover_each_batch(count: int, drop_last: bool) -> None:
    full = list(data.batches(np.arange(23), batch_size=7, rng=4, drop_last=drop_last))
    parts = [
        list(
            data.batches(np.arange(23), batch_size=7, rng=4, drop_last=drop_last, shard=(i, count))
        )
        for i in range(count)
    ]
    assert all(len(p) == len(full) for p in parts)  # every process runs every step
    for b, (batch,) in enumerate(full):
        pieces = [p[b][0] for p in parts]
        np.testing.assert_array_equal(np.concatenate(pieces), batch)
        sizes = [len(x) for x in pieces]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


class SimulatedComm:
    """A world of ``size`` processes that all hold this process's values."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return self.size

    def Allreduce(self, send: Any, recv: Any, op: Any = None) -> None:
        self._count("Allreduce")
        np.copyto(recv, send * self.size)

    def Allgather(self, send: Any, recv: Any) -> None:
        self._count("Allgather")
        recv[...] = np.resize(send, recv.shape)

    def Bcast(self, buf: Any, root: int = 0) -> None:
        self._count("Bcast")

    def Barrier(self) -> None:
        self._count("Barrier")


@pytest.fixture
def simulated3():
    comm = SimulatedComm(3)
    old = _world._set_comm(comm, "mpi")
    yield comm
    _world._set_comm(*old)


def test_allreduce_packs_one_buffer_per_dtype(simulated3: SimulatedComm) -> None:
    tree = mw.mixed_tree(1)  # 6 leaves of 4 dtypes
    out = dist.allreduce(tree, op="sum")
    assert simulated3.calls == {"Allgather": 1, "Allreduce": 4}
    for k, v in tree.items():
        a = np.asarray(v)
        assert out[k].dtype == a.dtype and out[k].shape == a.shape
        np.testing.assert_array_equal(out[k], a * a.dtype.type(3))
    simulated3.calls.clear()
    mean = dist.allreduce(tree, weight=5)
    assert simulated3.calls == {"Allgather": 1, "Allreduce": 4}
    for k, v in tree.items():
        np.testing.assert_allclose(mean[k], v, rtol=1e-6)
    simulated3.calls.clear()
    simulated3.calls.clear()
    swapped = dist.allreduce({"be": np.arange(3, dtype=">f8")}, op="sum")["be"]
    assert swapped.dtype == np.float64 and simulated3.calls["Allreduce"] == 1
    np.testing.assert_array_equal(swapped, [0.0, 3.0, 6.0])
    simulated3.calls.clear()
    b = dist.broadcast(mw.bcast_tree(0))
    assert simulated3.calls == {"Allgather": 1, "Bcast": 1}
    np.testing.assert_array_equal(b["flag"], [True, True])


def test_data_parallel_around_a_jitted_grad(simulated3: SimulatedComm) -> None:
    X, y, params = mw.problem(np.float64, 12)
    jg = ft.jit(ft.value_and_grad(mw.loss_fn))
    loss, grads = dist.data_parallel(jg, has_value=True)(params, X, y)
    ref_loss, ref_grads = jg(params, X, y)
    assert simulated3.calls == {"Allgather": 1, "Allreduce": 1}  # loss and grads: one f64 buffer
    np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-15)
    for k in grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-15, atol=1e-300)


# ---------------------------------------------------------------------------
# Real MPI jobs
# ---------------------------------------------------------------------------

MPIRUN = shutil.which("mpirun")
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(
    MPIRUN is None or not HAVE_MPI4PY,
    reason="MPI tests need Open MPI's mpirun and mpi4py (make test installs them: "
    "apt-get install openmpi-bin libopenmpi-dev; pip install -e '.[mpi]'); "
    f"mpirun {'found' if MPIRUN else 'missing'}, mpi4py {'found' if HAVE_MPI4PY else 'missing'}",
)


def mpirun(n: int, args: list[str], *, timeout: float = 90) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(TESTS)]))
    env.update(NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.update(FUNCTRACE_NUM_THREADS="1")  # one thread per rank
    # --timeout bounds a job whose processes are alive but stuck; a dead process ends
    # the job by itself (Open MPI aborts on a non-zero exit: orte_abort_on_non_zero_status).
    cmd = [MPIRUN or "mpirun", "--allow-run-as-root", "--oversubscribe", "--timeout", "120"]
    cmd += ["-n", str(n), sys.executable, *args]
    return subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _run_main(n: int, out: Path) -> list[dict[str, Any]]:
    r = mpirun(n, [str(TESTS / "mpi_workers.py"), "main", str(out)])
    assert r.returncode == 0, f"mpirun -n {n} failed:\n{r.stdout}\n{r.stderr}"
    ranks = []
    for i in range(n):
        with np.load(out / f"rank{i}.npz") as f:
            ranks.append({k: f[k] for k in f.files})
    return ranks


def check_world(job: list[dict[str, Any]]) -> None:
    n = len(job)
    assert [int(r["rank"]) for r in job] == list(range(n))
    assert all(int(r["size"]) == n and bool(r["initialized"]) for r in job)


def check_allreduce_mixed_dtypes(job: list[dict[str, Any]]) -> None:
    n = len(job)
    trees = [mw.mixed_tree(r) for r in range(n)]
    weights = [r + 1 for r in range(n)]
    for rec in job:
        assert int(rec["calls_sum_allreduce"]) == 4  # f64, f32, c128, f16: 6 leaves
        assert int(rec["calls_sum_allgather"]) == 1
        assert int(rec["calls_wmean_allreduce"]) == 4
        for k, v in trees[0].items():
            dt = np.asarray(v).dtype
            vals = [np.asarray(t[k], np.complex128) for t in trees]
            for prefix, want in (
                ("sum", sum(vals)),
                ("mean", sum(vals) / n),
                ("wmean", sum(w * x for w, x in zip(weights, vals)) / sum(weights)),
            ):
                got = rec[f"{prefix}/{k}"]
                assert got.dtype == dt and got.shape == np.shape(v), (prefix, k)
                tol = 1e-3 if dt == np.float16 else 1e-6 if dt == np.float32 else 1e-14
                np.testing.assert_allclose(got, want.real if dt.kind != "c" else want, rtol=tol)
        ints = [mw.int_tree(r) for r in range(n)]
        for k, v in ints[0].items():
            got = rec[f"isum/{k}"]
            assert got.dtype == np.asarray(v).dtype
            np.testing.assert_array_equal(got, sum(np.asarray(t[k], np.int64) for t in ints))
        # the last process has weight 0 and NaN values: it contributes nothing
        np.testing.assert_allclose(rec["w0"], np.full(3, np.mean(np.arange(n - 1))))
        assert "allreduce: expected the same tree" in str(rec["mismatch"])
    for k in trees[0]:  # every process holds the same bits
        assert all(np.array_equal(job[0][f"sum/{k}"], r[f"sum/{k}"]) for r in job)


def check_broadcast(job: list[dict[str, Any]]) -> None:
    n = len(job)
    for rec in job:
        for prefix, root in (("b0", 0), ("blast", n - 1)):
            for k, v in mw.bcast_tree(root).items():
                got = rec[f"{prefix}/{k}"]
                assert got.dtype == np.asarray(v).dtype and got.shape == np.shape(v)
                np.testing.assert_array_equal(got, v)


def check_shards_are_disjoint_and_cover(job: list[dict[str, Any]]) -> None:
    n = len(job)
    for drop_last in (False, True):
        full = list(data.batches(np.arange(23), batch_size=7, rng=5, drop_last=drop_last))
        sizes = [r[f"shard_sizes_{drop_last}"] for r in job]
        offsets = [np.concatenate([[0], np.cumsum(s)]) for s in sizes]
        for b, (batch,) in enumerate(full):
            pieces = [
                job[i][f"shard_idx_{drop_last}"][offsets[i][b] : offsets[i][b + 1]]
                for i in range(n)
            ]
            np.testing.assert_array_equal(np.concatenate(pieces), batch)


def check_checkpoint_written_once(job: list[dict[str, Any]]) -> None:
    assert [int(r["ckpt_saves"]) for r in job] == [1] + [0] * (len(job) - 1)
    for rec in job:
        assert int(rec["ckpt_step"]) == 4
        for k, v in mw.bcast_tree(0).items():
            np.testing.assert_array_equal(rec[f"ckpt/{k}"], v)


def check_training_equals_one_process(job: list[dict[str, Any]], dtype: Any, tol: float) -> None:
    # 2 processes x 32 (or 3 processes x 7/7/6, the last batch 1/1/0) give the parameters
    # of 1 process x the whole batch, after 10 steps of accumulate(chain(clip, adam)).
    n = len(job)
    batch, examples = (64, 128) if n == 2 else (20, 82)
    params, losses, norms = mw.train(dtype, batch_size=batch, n=examples)
    name = np.dtype(dtype).name
    assert max(norms) > mw.MAX_NORM  # the clip is active, so it must see the global norm
    for rec in job:
        np.testing.assert_allclose(rec[f"norms_{name}"], norms, rtol=tol)
        np.testing.assert_allclose(rec[f"losses_{name}"], losses, rtol=tol)
        for k, v in params.items():
            got = rec[f"train_{name}/{k}"]
            assert got.dtype == dtype
            np.testing.assert_allclose(got, v, rtol=tol, atol=tol)
            np.testing.assert_array_equal(got, job[0][f"train_{name}/{k}"])  # same replicas


# One job per process count runs every check (one mpirun, however pytest-xdist splits
# the tests).
@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_mpi_job(tmp_path: Path, n: int) -> None:
    job = _run_main(n, tmp_path)
    check_world(job)
    check_allreduce_mixed_dtypes(job)
    check_broadcast(job)
    check_shards_are_disjoint_and_cover(job)
    check_checkpoint_written_once(job)
    check_training_equals_one_process(job, np.float64, 1e-12)
    check_training_equals_one_process(job, np.float32, 1e-6)


@needs_mpi
@pytest.mark.parametrize("how", ["exit", "kill", "raise"])
def test_mpi_a_failing_process_ends_the_job(tmp_path: Path, how: str) -> None:
    # Process 1 dies (os._exit(3), SIGKILL) or raises mid-training while process 0 waits for it
    # in a collective: mpirun must end the job with a non-zero status, not hang.
    t0 = time.monotonic()
    r = mpirun(2, [str(TESTS / "mpi_workers.py"), how, str(tmp_path)], timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode != 0, r.stdout + r.stderr
    assert elapsed < 30, f"the job took {elapsed:.1f} s to end"
    assert not list(tmp_path.glob("finished*")), "a process finished without its peer"
    if how == "exit":
        assert "Exit code:    3" in r.stderr, r.stderr
    elif how == "kill":
        assert "signal 9" in r.stderr, r.stderr
    else:
        assert "worker failure on purpose" in r.stderr and "aborting the MPI job" in r.stderr


@needs_mpi
def test_mpi_demo_data_parallel(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    r = mpirun(
        2, ["-m", "functrace", "demo", "--data-parallel", "--epochs", "3", "--out", str(out)]
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert sum(line.startswith("epoch   1 ") for line in lines) == 1  # process 0 prints
    assert "data-parallel over 2 processes" in r.stdout
    assert (out / "checkpoint.npz").exists()
    assert int(io.load(out / "checkpoint.npz")["epoch"]) == 3
