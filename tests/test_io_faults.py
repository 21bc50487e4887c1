"""Checkpoint fault injection, in fresh processes: truncation, garbage and tampered
files must raise ``io.CheckpointError`` naming the file (never another exception, an
abort or a large allocation), and ``kill -9`` during saves never damages the previous
checkpoint nor leaves temp files behind after the next save."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

from functrace import io

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

# Runs every damaged-file case in one process with its address space capped at 1 GiB,
# so a reader that allocated what a forged header claims (GiBs to TiBs) would fail with
# MemoryError instead of CheckpointError. Prints one JSON line per case.
_CASES = textwrap.dedent(r"""
    import io as _bio, json, os, resource, sys, zipfile
    import numpy as np
    from functrace import io

    d = sys.argv[1]
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    tree = {"w": np.arange(60.0).reshape(6, 10), "b": [np.int32(3), "name"], "k": None}
    good = os.path.join(d, "good.npz")
    io.save(good, tree)
    raw = open(good, "rb").read()

    def members(path=good):
        with zipfile.ZipFile(path) as z:
            return {n: z.read(n) for n in z.namelist()}

    def npy(a, allow_pickle=False):
        b = _bio.BytesIO()
        np.lib.format.write_array(b, a, allow_pickle=allow_pickle)
        return b.getvalue()

    def meta_of(m):
        return json.loads(np.lib.format.read_array(_bio.BytesIO(m["__meta__.npy"])).tobytes())

    def rezip(name, m, compress=zipfile.ZIP_STORED):
        path = os.path.join(d, name)
        with zipfile.ZipFile(path, "w", compress) as z:
            for k, v in m.items():
                z.writestr(k, v)
        return path

    def with_meta(name, edit):
        m = members()
        meta = meta_of(m)
        edit(meta)
        m["__meta__.npy"] = npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))
        return rezip(name, m)

    def with_member(name, member, data):
        m = members()
        m[member] = data
        return rezip(name, m)

    def write(name, data):
        path = os.path.join(d, name)
        open(path, "wb").write(data)
        return path

    def forged_header(shape, dtype="<f8"):
        # a .npy header claiming `shape`, followed by the original 480 bytes of data
        hdr = {"descr": dtype, "fortran_order": False, "shape": shape}
        b = _bio.BytesIO()
        np.lib.format.write_array_header_1_0(b, hdr)
        return b.getvalue() + b"\0" * 480

    def flip(name, offset_in_leaf):
        with zipfile.ZipFile(good) as z:
            info = z.getinfo("leaf_0.npy")
        data = bytearray(raw)
        # local header: 30 bytes + name + extra, then the member's bytes
        n, e = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
            int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
        start = info.header_offset + 30 + n + e
        data[start + offset_in_leaf] ^= 0x10
        return write(name, bytes(data))

    def deep_json(depth):
        return "[" * depth + "]" * depth

    cases = {}
    # truncation at 20 offsets, from the first byte to the last
    for i, cut in enumerate(sorted({0, 1, 3, len(raw) - 1} | {
            int(len(raw) * f / 17) for f in range(1, 17)})):
        cases[f"truncated@{cut}"] = write(f"t{i}.npz", raw[:cut])
    cases.update({
        "empty": write("empty.npz", b""),
        "random bytes": write("rand.npz", np.random.default_rng(0).bytes(4096)),
        "text": write("text.npz", b"hello, this is not a checkpoint\n" * 20),
        "zip magic then garbage": write("pk.npz", b"PK\x03\x04" + b"\xff" * 500),
        "plain .npy": write("plain.npz", npy(np.ones(4))),
        "foreign .npz": rezip("foreign.npz", {"x.npy": npy(np.ones(3))}),
        "pickled leaf": with_member("pickle.npz", "leaf_0.npy",
                                    npy(np.array([{"a": 1}], dtype=object), allow_pickle=True)),
        "unknown version": with_meta("v99.npz", lambda m: m.update(version=99)),
        "unknown format": with_meta("fmt.npz", lambda m: m.update(format="tensorflow")),
        "metadata not JSON": with_member("nojson.npz", "__meta__.npy",
                                         npy(np.frombuffer(b"\xff{not json", np.uint8))),
        "metadata not bytes": with_member("metaf.npz", "__meta__.npy", npy(np.ones(3))),
        "missing leaf member": with_meta("fewer.npz", lambda m: m["paths"].append("['x']")),
        "extra member": with_member("extra.npz", "evil.npy", npy(np.ones(1))),
        "absurd shape (7 TiB)": with_member("huge.npz", "leaf_0.npy",
                                            forged_header((2**40 - 1, 1024))),
        "shape larger than data": with_member("big.npz", "leaf_0.npy", forged_header((61, 10))),
        "negative shape": with_member("neg.npz", "leaf_0.npy", forged_header((-6, 10))),
        "object dtype header": with_member("objhdr.npz", "leaf_0.npy",
                                           forged_header((60,), "|O")),
        "bit flip in leaf data (CRC)": flip("flip.npz", 200),
        "compressed member": rezip("deflate.npz", members(), zipfile.ZIP_DEFLATED),
        "deep JSON nesting": with_member("deep.npz", "__meta__.npy",
                                         npy(np.frombuffer(deep_json(200000).encode(), np.uint8))),
        "structure: unknown node": with_meta(
            "node.npz", lambda m: m["structure"].__setitem__(0, {"t": "eval", "n": 1})),
        "structure: child count": with_meta(
            "count.npz", lambda m: m["structure"][0].update(keys=m["structure"][0]["keys"][:1],
                                                            order=[0])),
        "structure: order not a permutation": with_meta(
            "perm.npz", lambda m: m["structure"][0].update(order=[0, 0, 1])),
        "structure: disallowed function": with_meta(
            "ref.npz", lambda m: m["structure"].__setitem__(0, {
                "t": "ddict", "factory": {"ref": ["posix", "system"]},
                "keys": m["structure"][0]["keys"], "order": m["structure"][0]["order"]})),
        "structure: unknown class": with_meta(
            "cls.npz", lambda m: m["structure"].__setitem__(0, {
                "t": "custom", "type": ["not_imported_module", "Evil"], "aux": None, "n": 3})),
        "structure: deep aux": with_meta(
            "aux.npz", lambda m: m["structure"][0]["keys"].__setitem__(
                0, json.loads('{"tuple": [' * 100 + "1" + "]}" * 100))),
        "leaf kinds tampered": with_meta(
            "kinds.npz", lambda m: m["kinds"].__setitem__(0, "pickle")),
        "scalar kind on an array": with_meta(
            "kind2.npz", lambda m: m["kinds"].__setitem__(m["paths"].index("['w']"), "float")),
    })
    for name, path in cases.items():
        rec = {"case": name, "file": os.path.basename(path)}
        for fn in (lambda: io.load(path), lambda: io.describe(path)):
            try:
                fn()
                rec.setdefault("results", []).append(["no error", ""])
            except Exception as e:
                rec.setdefault("results", []).append([type(e).__name__, str(e)])
        print(json.dumps(rec))
    print(json.dumps({"good": io.load(good)["b"][1]}))
""")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_item1_truncated_garbage_and_tampered_files_raise_checkpoint_error(tmp_path) -> None:
    res = subprocess.run(
        [sys.executable, "-c", _CASES, str(tmp_path)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [json.loads(ln) for ln in res.stdout.splitlines()]
    assert lines[-1] == {"good": "name"}  # the undamaged file still loads
    cases = lines[:-1]
    truncated = [c for c in cases if c["case"].startswith("truncated@")]
    assert len(truncated) == 20
    assert len(cases) - len(truncated) >= 15
    # describe() reads only headers: damage inside leaf data or structure is load's to find
    load_only = {"bit flip in leaf data (CRC)", "leaf kinds tampered", "scalar kind on an array"}
    for c in cases:
        only_load = c["case"] in load_only or c["case"].startswith("structure:")
        results = c["results"][:1] if only_load else c["results"]
        for kind, msg in results:
            assert kind == "CheckpointError", (c["case"], kind, msg)
            assert c["file"] in msg and msg.startswith("load: "), (c["case"], msg)
    by_case = {c["case"]: c["results"][0][1] for c in cases}
    assert "plain .npy" in by_case["plain .npy"]
    assert "version 99" in by_case["unknown version"]
    assert "compressed" in by_case["compressed member"]
    assert "never hold pickles" in by_case["pickled leaf"]
    assert "declares shape" in by_case["absurd shape (7 TiB)"]
    assert "nested too deeply" in by_case["deep JSON nesting"]
    assert "posix.system" in by_case["structure: disallowed function"]
    assert "not imported" in by_case["structure: unknown class"]


def test_item1_checkpoint_error_types_in_process(tmp_path) -> None:
    # The same guarantees for the files an everyday mistake produces.
    p = tmp_path / "c.npz"
    io.save(p, {"w": np.ones(3)})
    p.write_bytes(p.read_bytes()[:-10])
    try:
        io.load(p)
    except io.CheckpointError as e:
        assert str(p) in str(e) and "corrupted or truncated" in str(e)
    else:  # pragma: no cover
        raise AssertionError("a truncated checkpoint loaded")


def _state(step: int) -> dict:
    w = np.full(40_000, float(step))  # 320 KB: a kill often lands inside a write
    return {"step": step, "w": w, "m": {"z": w[:10], "a": step}}


def _saver(d: str, step: int) -> int:
    """A forked child saving checkpoints in a loop until it is killed (no interpreter
    start-up per kill: the loop is what is under test)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.write(w, b"r")
            while True:
                step += 1
                io.save_checkpoint(d, step, _state(step), keep=3)
        finally:
            os._exit(1)
    os.close(w)
    assert os.read(r, 1) == b"r"
    os.close(r)
    return pid


def _check_consistent(path: str) -> int:
    tree = io.load(path)
    step = tree["step"]
    assert list(tree) == ["step", "w", "m"] and list(tree["m"]) == ["z", "a"]
    assert tree["m"]["a"] == step
    np.testing.assert_array_equal(tree["w"], np.full(40_000, float(step)))
    return step


def test_item1_kill_9_during_saves_keeps_previous_checkpoint(tmp_path) -> None:
    d = str(tmp_path / "ckpts")
    io.save_checkpoint(d, 0, _state(0))
    rng = np.random.default_rng(1234)
    step = 0
    left_behind = 0
    for _ in range(20):
        pid = _saver(d, step)
        time.sleep(float(rng.uniform(0.0, 0.08)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        latest = io.latest_checkpoint(d)
        assert latest is not None
        step = _check_consistent(latest)
        for name in os.listdir(d):  # every complete checkpoint loads
            if not name.startswith(".tmp-"):
                _check_consistent(os.path.join(d, name))
        left_behind += sum(n.startswith(".tmp-") for n in os.listdir(d))
        # the next save removes what the killed process left
        step += 1
        io.save_checkpoint(d, step, _state(step), keep=3)
        assert [n for n in os.listdir(d) if n.startswith(".tmp-")] == []
        assert _check_consistent(io.latest_checkpoint(d)) == step
    assert left_behind >= 1  # some kills did land inside a write
