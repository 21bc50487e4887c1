"""Tiered first calls: interpret while Numba compiles, then switch.

``jit`` in tiered mode (the default) first lowers a new signature with kernel loads
*probing* (``kernels.load_mode("probe")``): kernels already loaded or sealed in the
disk cache load as usual, and the first one that needs Numba aborts the lowering
(``kernels.NeedsCompile``). A lowering that completes (a warm cache, programs with no
kernels) is used at once, as in ``"sync"`` mode. Otherwise a :class:`Job` lowers the
program again in a background thread, and calls run :func:`interpreter` (the lowered
jaxpr evaluated by the primitives' impls) until the job is done; the next call after
that installs the compiled driver (``JitFunction`` in ``api.py``).

Where Numba compiles: ``"process"`` sends each kernel to a :class:`Worker` process
that compiles it into the disk cache (the cache's checks and sealing apply there),
then loads it from the cache; ``"thread"`` compiles in the job's thread (Numba holds
the GIL for much of a compile, slowing the interpreter's calls). ``"tiered"`` is the
thread (see ``jit/README.md`` for the measurements); ``"process"`` falls back to the
thread when the disk cache is memory-only.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace._array import to_array
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.jit import cache, kernels
from functrace.tree_util import tree_unflatten

MODES = ("sync", "tiered", "thread", "process")
ENV = "FUNCTRACE_JIT_COMPILE"


def check_mode(value: Any, origin: str) -> str | None:
    """``jit(..., compile=value)`` validated (None: the environment's choice)."""
    if value is None or value in MODES:
        return value  # type: ignore[no-any-return]
    raise ValueError(
        f"{origin}: expected compile to be one of {', '.join(map(repr, MODES))} or None, "
        f"got {value!r}."
    )


def env_mode() -> str:
    """``$FUNCTRACE_JIT_COMPILE`` (default ``"tiered"``)."""
    raw = os.environ.get(ENV, "").strip().lower()
    if not raw:
        return "tiered"
    if raw not in MODES:
        raise ValueError(
            f"functrace.jit: expected {ENV} to be one of {', '.join(MODES)}, got {raw!r}."
        )
    return raw


def where(mode: str) -> str:
    """Where a tiered compile runs: ``"thread"`` for ``"tiered"`` (measured faster to
    take over on a busy 2-core machine, see ``jit/README.md``), ``"process"`` only when
    asked and the disk cache is usable (a worker hands kernels over through it)."""
    if mode == "process" and cache.cache_dir() is not None:
        return "process"
    return "thread"


# ---------------------------------------------------------------------------
# The interpreter of the first calls
# ---------------------------------------------------------------------------

_PY = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def interpreter(closed: ClosedJaxpr, out_tree: Any, py_outs: Sequence[bool]) -> Callable[..., Any]:
    """A callable of the flat arguments returning what the compiled driver returns
    (the output pytree of immutable arrays, Python scalars where ``py_outs`` says),
    computed by evaluating ``closed`` with the primitives' impls."""
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    outs_avals = [v.aval for v in jaxpr.outvars]
    py = list(py_outs) + [False] * (len(outs_avals) - len(py_outs))

    def run(*args: Any) -> Any:
        with np.errstate(all="ignore"):  # compiled kernels set no floating-point warnings
            flat = eval_jaxpr(jaxpr, consts, args)
        res = []
        for x, aval, p in zip(flat, outs_avals, py):
            if p:
                res.append(_PY[aval.dtype.kind](x))
                continue
            if getattr(x, "dtype", None) != aval.dtype or not isinstance(x, np.ndarray):
                x = np.asarray(x, dtype=aval.dtype)
                x = x[()] if x.ndim == 0 else x
            res.append(to_array(x))
        if out_tree is None:
            return tuple(res)
        return tree_unflatten(out_tree, res)

    return run


# ---------------------------------------------------------------------------
# The worker process
# ---------------------------------------------------------------------------


class WorkerError(RuntimeError):
    pass


class Shutdown(BaseException):  # noqa: N818 - a signal, not an error
    """The process is exiting: a job's lowering stops instead of compiling here."""


_exiting = False


class Worker:
    """A ``_compile_worker.py`` child process compiling kernels into the
    disk cache, one request at a time. Closed at exit: the pipe is closed and the
    child terminated and waited for (no zombie); a kernel it was compiling was never
    sealed, so the next process deletes its files and compiles it again."""

    def __init__(self, directory: str) -> None:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compile_worker.py")
        env = dict(os.environ, FUNCTRACE_CACHE_DIR=directory)
        version = str(getattr(sys.modules.get("functrace"), "__version__", "0"))
        self.pid_of_parent = os.getpid()
        self.directory = directory
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(  # noqa: S603 - our own module, our interpreter
            [sys.executable, script, version],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.ready = False
        self.broken = False

    def compile(self, name: str, source: str, signature: Any) -> float | None:
        """Have the worker compile one kernel; its seconds, or None (it could not: the
        caller compiles in this process, reproducing any error)."""
        with self.lock:
            if _exiting:
                raise Shutdown
            if self.broken:
                return None
            proc = self.proc
            assert proc.stdin is not None and proc.stdout is not None
            try:
                self._wait_ready(proc)
                data = pickle.dumps((name, source, signature))
                proc.stdin.write(len(data).to_bytes(8, "little") + data)
                proc.stdin.flush()
                head = proc.stdout.read(8)
                if len(head) < 8:
                    raise WorkerError("the worker exited")
                body = proc.stdout.read(int.from_bytes(head, "little"))
                status, value = pickle.loads(body)  # noqa: S301 - our child's reply
            except (OSError, EOFError, ValueError, pickle.PickleError, WorkerError):
                self.broken = True
                if _exiting:
                    raise Shutdown from None
                return None
            return float(value) if status == "ok" else None  # type: ignore[arg-type]

    def _wait_ready(self, proc: Any) -> None:
        """Read the worker's start byte once (under ``self.lock``)."""
        if not self.ready:
            if proc.stdout.read(1) != b"R":
                raise WorkerError("the worker did not start")
            self.ready = True

    def compile_many(self, items: Sequence[tuple[str, str, Any]]) -> None:
        """Send all of ``items`` at once and wait for the replies: the worker compiles
        them back to back (failures are left to the lowering that follows, which
        compiles those kernels in this process)."""
        with self.lock:
            if _exiting:
                raise Shutdown
            if self.broken or not items:
                return
            proc = self.proc
            assert proc.stdin is not None and proc.stdout is not None
            try:
                self._wait_ready(proc)
                for item in items:
                    data = pickle.dumps(item)
                    proc.stdin.write(len(data).to_bytes(8, "little") + data)
                proc.stdin.flush()
                for _ in items:
                    head = proc.stdout.read(8)
                    if len(head) < 8:
                        raise WorkerError("the worker exited")
                    proc.stdout.read(int.from_bytes(head, "little"))
            except (OSError, EOFError, ValueError, pickle.PickleError, WorkerError):
                self.broken = True
                if _exiting:
                    raise Shutdown from None

    def close(self) -> None:
        proc = self.proc
        if os.getpid() != self.pid_of_parent or proc.poll() is not None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


_worker: Worker | None = None
_worker_lock = threading.Lock()


def worker() -> Worker | None:
    """This process's worker (started on first use; a forked child starts its own),
    or None when the disk cache is memory-only."""
    global _worker
    directory = cache.cache_dir()
    if directory is None:
        return None
    with _worker_lock:
        w = _worker
        if w is None or w.pid_of_parent != os.getpid() or w.broken or w.directory != directory:
            if w is not None and w.pid_of_parent == os.getpid():
                w.close()
            try:
                w = Worker(directory)
            except OSError:
                return None
            _worker = w
        return w


def _compile_here(name: str, source: str, signature: Any) -> None:
    """The thread's ``load_mode``: compile in this process, unless it is exiting."""
    if _exiting:
        raise Shutdown
    return None


def _close_worker() -> None:
    global _exiting
    _exiting = True
    w = _worker
    if w is not None:
        w.close()


atexit.register(_close_worker)


# ---------------------------------------------------------------------------
# Background lowering
# ---------------------------------------------------------------------------


FIRST_CALL_WAIT = 1.0


class Job:
    """The lowering of one signature in a background thread.

    ``done`` is set when it ends; then ``program`` is the ``LoweredProgram`` or
    ``error`` the exception it raised (raised by the next call, as a synchronous
    compile would have). Warnings it issues (a kernel Numba could not compile falls
    back to NumPy calls with a ``RuntimeWarning``) go through the process-wide
    ``warnings`` machinery when they happen, as any thread's. ``stats`` holds its
    per-phase seconds."""

    def __init__(self, lower: Callable[[], Any], where: str) -> None:
        self.where = where
        self.done = threading.Event()
        self.program: Any = None
        self.error: BaseException | None = None
        self.stats: dict[str, float] = {}
        self.started = time.perf_counter()
        self.finished = 0.0
        self.pid = os.getpid()
        self.debug = False  # FUNCTRACE_DEBUG_JIT: the switch prints the phases
        self._lower = lower
        # The thread starts working once the first interpreted call returned (or after
        # FIRST_CALL_WAIT s): Numba's import and compile would slow that call down.
        self.go = threading.Event()
        self.thread = threading.Thread(target=self._run, name="functrace-jit-compile", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.go.wait(FIRST_CALL_WAIT)
        w = worker() if self.where == "process" else None
        mode: Any = w.compile if w is not None else _compile_here
        try:
            with kernels.load_mode(mode, self.stats):
                if w is not None:  # plan, have the worker compile every fused kernel
                    todo: list[tuple[str, str, Any]] = []
                    with kernels.collecting(todo):
                        self._lower()
                    t0 = time.perf_counter()
                    w.compile_many(todo)
                    self.stats["worker"] = time.perf_counter() - t0
                    self.stats["compiles"] = self.stats.get("compiles", 0.0) + len(todo)
                self.program = self._lower()
        except BaseException as e:  # noqa: BLE001 - handed to the next call
            self.error = e
        finally:
            self.finished = time.perf_counter()
            self.done.set()

    def restart_if_forked(self) -> None:
        """A forked child has no job thread: compile again in this process."""
        if self.pid != os.getpid() and not self.done.is_set():
            self.__init__(self._lower, self.where)  # type: ignore[misc]


# ---------------------------------------------------------------------------
# The entry of a JitFunction (api.py) while its job runs, and the switch
# ---------------------------------------------------------------------------


def start(
    fn: Any,
    entry: Any,
    lower: Callable[[], Any],
    out_tree: Any,
    py_outs: Sequence[bool],
    mode: str,
    debug: bool,
) -> None:
    """Start the job lowering ``entry``'s program for the ``JitFunction`` ``fn`` and
    make ``entry.driver`` the interpreter's callable, which installs the compiled
    driver (:func:`install`) on the first call after the job ended."""
    place = where(mode)
    job = Job(lower, place)
    job.debug = debug
    interp = interpreter(entry.jaxpr, out_tree, py_outs)
    entry.job = job
    first = [True]

    def tier0(*flat: Any) -> Any:
        if job.done.is_set():
            return fn._switch(entry)(*flat)
        job.restart_if_forked()
        fn.interpreted_calls += 1
        if not first[0]:
            return interp(*flat)
        first[0] = False
        t0 = time.perf_counter()
        try:
            out = interp(*flat)
        finally:
            job.go.set()
        if debug:
            print(
                f"[functrace.jit] phase interpreter first call: "
                f"{1e3 * (time.perf_counter() - t0):.1f} ms (Numba compiles in a {place})",
                file=sys.stderr,
            )
        return out

    entry.driver = tier0


def install(fn: Any, entry: Any) -> Callable[..., Any]:
    """Under ``fn._lock``: put the finished job's compiled driver in ``entry`` and in
    ``fn``'s fast paths, or raise the job's error after dropping the entry (a failed
    synchronous compile leaves nothing cached either: the next call compiles again)."""
    job = entry.job
    if job is None:
        return entry.driver  # type: ignore[no-any-return]
    if job.error is not None:
        fn._drop(entry)
        raise job.error
    program = job.program
    old = entry.driver
    entry.program = program
    entry.driver = program.driver
    entry.job = None
    fn.compile_count += program.compiled
    fn.switches += 1
    for fast in (fn._fast, fn._tree_fast):
        for k, v in fast.items():
            if v[1] is entry and v[0] is old:  # (keys.fast_entry_call's wrappers read
                fast[k] = (program.driver, entry)  # entry.driver at each call)
    if job.debug:
        print(
            f"[functrace.jit] {fn._origin}: switch to the compiled path after "
            f"{fn.interpreted_calls} interpreted call(s), "
            f"{time.perf_counter() - job.started:.2f} s after the compile started (it took "
            f"{job.finished - job.started:.2f} s in a {job.where})",
            file=sys.stderr,
        )
        print_program(program, job.stats)
    return entry.driver  # type: ignore[no-any-return]


def print_program(program: Any, stats: dict[str, float]) -> None:
    """The per-phase lines of a lowering under ``FUNCTRACE_DEBUG_JIT``, then its text."""
    comp, load, imp = stats.get("compile", 0.0), stats.get("load", 0.0), stats.get("import", 0.0)
    direct = stats.get("direct", 0.0)
    lowering = max(program.seconds - comp - load - imp - direct, 0.0)
    comp += stats.get("worker", 0.0)  # the wait for a worker's batch
    print(
        f"[functrace.jit] phase lowering: {1e3 * lowering:.1f} ms (planning and code)\n"
        f"[functrace.jit] phase direct compile: {1e3 * direct:.1f} ms "
        f"({int(stats.get('directs', 0))} kernels, LLVM without Numba's front end)\n"
        f"[functrace.jit] phase Numba import: {1e3 * imp:.1f} ms\n"
        f"[functrace.jit] phase Numba compile: {1e3 * comp:.1f} ms "
        f"({int(stats.get('compiles', 0))} kernels)\n"
        f"[functrace.jit] phase cache load: {1e3 * load:.1f} ms "
        f"({int(stats.get('loads', 0))} kernels)\n"
        f"[functrace.jit] kernels: {len(program.kernels)} ({program.compiled} compiled "
        f"now)\n{program.as_text()}",
        file=sys.stderr,
    )


__all__ = [
    "MODES",
    "Job",
    "Worker",
    "check_mode",
    "env_mode",
    "install",
    "interpreter",
    "print_program",
    "start",
    "worker",
]
