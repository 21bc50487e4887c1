"""``functrace.profiler``: annotated regions recorded into a Chrome trace, from threads
and jitted code, and the errors of what has no counterpart."""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import profiler
from functrace.experimental import mesh_utils
from functrace.sharding import Mesh


def test_regions_are_recorded_with_their_nesting_threads_and_arguments(tmp_path):
    @partial(profiler.annotate_function, name="loss", kind="mse")
    def loss(w, x):
        return fnp.mean((x @ w) ** 2)

    step = ft.jit(ft.grad(loss))
    w, x = np.ones(3), np.ones((4, 3))
    with profiler.TraceAnnotation("outside"):  # no trace running: not recorded
        loss(w, x)
    with profiler.trace(tmp_path):
        for i in range(3):
            with profiler.StepTraceAnnotation("train", step_num=i):
                step(w, x)
                loss(w, x)

        def worker():
            with profiler.TraceAnnotation("worker"):
                loss(w, x)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
    events = profiler.read_trace(tmp_path)
    names = [e["name"] for e in events]
    assert names.count("train") == 3 and names.count("worker") == 1 and "outside" not in names
    assert names.count("loss") >= 4  # eager calls, and the traced one under jit
    steps = [e for e in events if e["name"] == "train"]
    assert [e["args"]["step_num"] for e in steps] == [0, 1, 2]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    first = steps[0]
    inner = [e for e in events if e["name"] == "loss" and e["tid"] == first["tid"]]
    assert any(first["ts"] <= e["ts"] <= first["ts"] + first["dur"] for e in inner)
    assert {e["tid"] for e in events if e["name"] == "worker"} != {first["tid"]}
    assert loss(w, x) == 9.0 and loss.__name__ == "loss"


def test_start_stop_and_what_has_no_counterpart(tmp_path):
    profiler.start_trace(tmp_path / "a")
    with pytest.raises(RuntimeError, match="start_trace: a trace is already running"):
        profiler.start_trace(tmp_path / "b")
    profiler.stop_trace()
    assert profiler.read_trace(tmp_path / "a") == []
    with pytest.raises(RuntimeError, match="stop_trace: no trace is running"):
        profiler.stop_trace()
    with pytest.raises(FileNotFoundError, match="read_trace: no trace file"):
        profiler.read_trace(tmp_path / "none")
    with pytest.raises(NotImplementedError, match="create_perfetto_link"):
        profiler.start_trace(tmp_path, create_perfetto_link=True)
    for fn in (profiler.device_memory_profile, lambda: profiler.save_device_memory_profile("f")):
        with pytest.raises(NotImplementedError, match="no device memory profile"):
            fn()
    with pytest.raises(NotImplementedError, match="no profiler server"):
        profiler.start_server(9999)
    with pytest.raises(TypeError, match="TraceAnnotation: expected a str name"):
        profiler.TraceAnnotation(3)

    @profiler.trace(tmp_path / "c")
    def run():
        with profiler.TraceAnnotation("inside", options=profiler.ProfileOptions(x=1)):
            pass

    run()
    (event,) = profiler.read_trace(tmp_path / "c")
    assert event["name"] == "inside" and event["args"]["options"].startswith("<")


def test_mesh_utils_make_virtual_device_arrays():
    devs = mesh_utils.create_device_mesh((2, 4))
    assert devs.shape == (2, 4) and all(d is ft.devices()[0] for d in devs.flat)
    assert Mesh(devs, ("a", "b")).shape == {"a": 2, "b": 4}
    assert mesh_utils.create_hybrid_device_mesh((2, 1), (1, 3)).shape == (2, 3)
    with pytest.raises(ValueError, match="create_device_mesh: expected positive int mesh sizes"):
        mesh_utils.create_device_mesh((0, 2))
    with pytest.raises(ValueError, match="of one length"):
        mesh_utils.create_hybrid_device_mesh((2,), (1, 2))
