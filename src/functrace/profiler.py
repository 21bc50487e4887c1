"""functrace.profiler: JAX's profiler annotations and traces (``jax.profiler``).

Programs mark regions with ``TraceAnnotation``/``StepTraceAnnotation`` and
``annotate_function``, and record them between ``start_trace`` and ``stop_trace`` (or
inside ``with trace(log_dir):``). functrace records each annotated region (its name,
arguments, thread, start and duration) while a trace runs, and ``stop_trace`` writes
them as a Chrome trace (``log_dir/plugins/profile/<run>/<host>.trace.json.gz``, the
layout TensorBoard's profile plugin reads; Perfetto and ``chrome://tracing`` open the
file). JAX's trace also holds XLA's device activity; functrace's has the annotated
regions only. Outside a trace the annotations cost a check of one flag.
The device-memory profile and the profiler server have no counterpart (one CPU, no
XLA runtime) and raise ``NotImplementedError``.

>>> import tempfile, functrace.numpy as fnp
>>> with tempfile.TemporaryDirectory() as d:
...     with trace(d):
...         with TraceAnnotation("matmul", size=64):
...             _ = fnp.ones((64, 64)) @ fnp.ones((64, 64))
...     [e["name"] for e in read_trace(d)]
['matmul']
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "ProfileOptions",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "read_trace",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = False
        self.log_dir: Path | None = None
        self.t0 = 0
        self.events: list[dict[str, Any]] = []


_state = _State()


class ProfileOptions:
    """JAX's profiler options (``host_tracer_level``, ``python_tracer_level``, ...):
    accepted by ``start_trace``/``trace`` and without effect (functrace records the
    annotated regions only)."""

    def __init__(self, **options: Any) -> None:
        self.__dict__.update(options)


class TraceAnnotation:
    """A region of the trace named ``name``, with ``kwargs`` as its arguments: a
    context manager (JAX's ``TraceAnnotation``), recorded while a trace runs."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"TraceAnnotation: expected a str name, got {type(name).__name__}.")
        self.name, self.args = name, kwargs
        self._start = 0

    def __enter__(self) -> TraceAnnotation:
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        if _state.active:
            end = time.perf_counter_ns()
            event = {
                "name": self.name,
                "ph": "X",
                "ts": (self._start - _state.t0) / 1000.0,
                "dur": (end - self._start) / 1000.0,
                "pid": os.getpid(),
                "tid": threading.get_ident(),
                "args": {k: _jsonable(v) for k, v in self.args.items()},
            }
            with _state.lock:
                if _state.active:
                    _state.events.append(event)


class StepTraceAnnotation(TraceAnnotation):
    """A training step's region (JAX's ``StepTraceAnnotation(name, step_num=...)``):
    a :class:`TraceAnnotation` whose arguments include the step number."""


def _jsonable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool)) or v is None else repr(v)


def annotate_function(
    func: Callable[..., Any], name: str | None = None, **decorator_kwargs: Any
) -> Callable[..., Any]:
    """``func`` with each call recorded as a region named ``name`` (default: the
    function's qualified name) with ``decorator_kwargs`` as arguments (JAX's
    ``annotate_function``; use it as a decorator, with ``functools.partial`` for the
    name)."""
    if not callable(func):
        raise TypeError(f"annotate_function: expected a callable, got {type(func).__name__}.")
    label = str(name or getattr(func, "__qualname__", None) or "function")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


def start_trace(
    log_dir: os.PathLike[str] | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start recording the annotated regions, to be written under ``log_dir`` by
    :func:`stop_trace`. ``create_perfetto_trace`` is accepted (the file written is a
    Chrome trace, which Perfetto opens); ``create_perfetto_link`` (a link served by
    JAX's profiler to the Perfetto UI) raises ``NotImplementedError``."""
    if create_perfetto_link:
        raise NotImplementedError(
            "start_trace: create_perfetto_link is not supported (functrace serves no trace); "
            "open the written .trace.json.gz file in the Perfetto UI instead."
        )
    with _state.lock:
        if _state.active:
            raise RuntimeError(
                "start_trace: a trace is already running; call stop_trace first (only one "
                "trace may run at a time, as in JAX)."
            )
        _state.active, _state.log_dir = True, Path(log_dir)
        _state.t0, _state.events = time.perf_counter_ns(), []


def stop_trace() -> None:
    """Stop recording and write the regions recorded since :func:`start_trace` to
    ``log_dir/plugins/profile/<run>/<host>.trace.json.gz``."""
    with _state.lock:
        if not _state.active:
            raise RuntimeError("stop_trace: no trace is running; call start_trace first.")
        _state.active = False
        events, log_dir = _state.events, _state.log_dir
        _state.events = []
    assert log_dir is not None
    run = time.strftime("%Y_%m_%d_%H_%M_%S")
    out = log_dir / "plugins" / "profile" / run
    out.mkdir(parents=True, exist_ok=True)
    doc = {"traceEvents": sorted(events, key=lambda e: e["ts"]), "displayTimeUnit": "ms"}
    path = out / f"{socket.gethostname()}.trace.json.gz"
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


class trace:
    """``with trace(log_dir):``: :func:`start_trace` on entry and :func:`stop_trace`
    on exit (JAX's ``jax.profiler.trace``); also usable as a decorator."""

    def __init__(
        self,
        log_dir: os.PathLike[str] | str,
        create_perfetto_link: bool = False,
        create_perfetto_trace: bool = False,
        profiler_options: ProfileOptions | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.options = (create_perfetto_link, create_perfetto_trace, profiler_options)

    def __enter__(self) -> trace:
        start_trace(self.log_dir, *self.options)
        return self

    def __exit__(self, *exc: Any) -> None:
        stop_trace()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper


def read_trace(log_dir: os.PathLike[str] | str) -> list[dict[str, Any]]:
    """The events of the newest trace written under ``log_dir`` (a functrace helper,
    not in JAX), in start order."""
    files = sorted(Path(log_dir).glob("plugins/profile/*/*.trace.json.gz"))
    if not files:
        raise FileNotFoundError(f"read_trace: no trace file under {str(log_dir)!r}.")
    with gzip.open(max(files, key=lambda p: p.stat().st_mtime), "rt", encoding="utf-8") as f:
        return list(json.load(f)["traceEvents"])


def _no_memory_profile(fname: str) -> NotImplementedError:
    return NotImplementedError(
        f"{fname}: functrace has no device memory profile (its arrays are NumPy arrays "
        f"in this process's memory; use tracemalloc for Python allocations)."
    )


def device_memory_profile(backend: str | None = None) -> bytes:
    """JAX's pprof profile of device memory: ``NotImplementedError`` (see the module
    docstring)."""
    raise _no_memory_profile("device_memory_profile")


def save_device_memory_profile(filename: Any, backend: str | None = None) -> None:
    """JAX's device memory profile written to a file: ``NotImplementedError``."""
    raise _no_memory_profile("save_device_memory_profile")


def start_server(port: int, requires_backend: bool = True) -> Any:
    """JAX's profiler server for on-demand captures: ``NotImplementedError`` (record with
    :func:`start_trace`/:func:`trace` instead)."""
    raise NotImplementedError(
        "start_server: functrace has no profiler server; record with start_trace/stop_trace "
        "or `with trace(log_dir):`."
    )


def stop_server() -> None:
    """JAX's profiler server: ``NotImplementedError`` (see :func:`start_server`)."""
    raise NotImplementedError("stop_server: functrace has no profiler server.")
