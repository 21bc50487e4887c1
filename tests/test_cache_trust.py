"""The kernel cache as trusted code: permissions whatever the umask, no loading from
directories others can write, checksums that heal damaged entries, bounded caches.

Most checks run in fresh processes (the disk cache is about what the *next* process
loads). One process compiles twelve kernels into a cache made under ``umask 000``; its
copies are then tampered with in different ways. The disk cache holds what Numba
compiles (the direct compiler keeps nothing on disk), so these processes use Numba only."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("private_jit_cache")  # in-process compiles


@pytest.fixture(autouse=True)
def _numba_kernels(monkeypatch):
    monkeypatch.setenv("FUNCTRACE_JIT_KERNELS", "numba")


SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

_MANY = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import functrace.numpy as fnp
    from functrace.jit import jit, kernels

    OPS = [fnp.sin, fnp.cos, fnp.exp, fnp.tanh, fnp.log1p, fnp.sqrt, fnp.arctan, fnp.sinh,
           fnp.cosh, fnp.expm1, fnp.arcsinh, fnp.square]
    x = np.linspace(0.1, 0.9, 5)
    out = []
    for op in OPS:
        f = jit(lambda x, op=op: op(x) * 2.0 + 1.0)
        y = f(x)
        (entry,) = f._cache.values()
        out.append({"compiled": f.compile_count, "y": y.tolist(),
                    "kernels": [k.name for k in entry.program.kernels]})
    print(json.dumps(out))
""")


def _run(script: str, env_extra: dict[str, str], umask: int | None = None, *args: str):
    env = dict(
        os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_extra
    )
    env.setdefault("NUMBA_NUM_THREADS", "1")
    env.setdefault("FUNCTRACE_JIT_KERNELS", "numba")
    env["PYTHONWARNINGS"] = "always"
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """A kernel cache (12 kernels) made by a process running under ``umask 000``."""
    root = tmp_path_factory.mktemp("trust")
    cache = root / "made" / "under" / "umask0"  # parents do not exist yet
    res = _run(_MANY, {"FUNCTRACE_CACHE_DIR": str(cache)}, 0)
    assert res.returncode == 0, res.stderr
    runs = json.loads(res.stdout)
    assert all(r["compiled"] == 1 and len(r["kernels"]) == 1 for r in runs)
    assert len({r["kernels"][0] for r in runs}) == len(runs)
    return root, cache, runs


def _copy(populated, name: str):
    root, cache, runs = populated
    dst = root / name
    shutil.copytree(cache, dst)  # copy2: keeps the mtimes Numba's index stamps
    return dst, runs


def _files(cache, module: str) -> dict[str, str]:
    pyc = cache / "__pycache__"
    out = {"py": str(cache / f"{module}.py"), "sums": str(pyc / f"{module}.ftsum")}
    for n in os.listdir(pyc):
        if n.startswith(module + ".") and n.endswith(".nbi"):
            out["nbi"] = str(pyc / n)
        elif n.startswith(module + ".") and n.endswith(".nbc"):
            out["nbc"] = str(pyc / n)
    assert {"nbi", "nbc"} <= set(out), out
    return out


def test_item2_umask_000_still_gives_0700_and_0600(populated) -> None:
    _, cache, _ = populated
    for d in (cache, cache / "__pycache__"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    files = [cache / n for n in os.listdir(cache) if (cache / n).is_file()]
    files += [cache / "__pycache__" / n for n in os.listdir(cache / "__pycache__")]
    assert len(files) >= 12 * 4  # .py, .nbi, .nbc and .ftsum per kernel
    for f in files:
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _plant(cache, module: str, tag: str, pyc: bool = True) -> tuple[str, str]:
    """Replace the kernel's index with a pickle that writes a marker when loaded (with a
    matching checksum, as an attacker would write), and add a ``.pyc`` that writes
    another marker if imported. Returns the two marker paths."""
    f = _files(cache, module)
    nbi_marker, pyc_marker = str(cache.parent / f"{tag}.nbi-ran"), str(cache.parent / f"{tag}.pyc")
    data = pickle.dumps(_Payload(nbi_marker))
    with open(f["nbi"], "wb") as fh:
        fh.write(data)
    sums = json.loads(open(f["sums"]).read())
    import hashlib

    sums[os.path.basename(f["nbi"])] = hashlib.sha256(data).hexdigest()
    with open(f["sums"], "w") as fh:
        fh.write(json.dumps(sums))
    if not pyc:
        return nbi_marker, pyc_marker
    st = os.stat(f["py"])
    code = compile(f"open({pyc_marker!r}, 'w').write('ran')", f["py"], "exec")
    pyc = importlib._bootstrap_external._code_to_timestamp_pyc(code, st.st_mtime, st.st_size)
    tagname = sys.implementation.cache_tag
    with open(cache / "__pycache__" / f"{module}.{tagname}.pyc", "wb") as fh:
        fh.write(pyc)
    return nbi_marker, pyc_marker


_TRUST = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import functrace.numpy as fnp
    from functrace.jit import cache, jit, kernels

    results = []
    for d in sys.argv[1:]:
        os.environ["FUNCTRACE_CACHE_DIR"] = d
        kernels.forget_loaded()  # each directory is looked at afresh
        for n in [n for n in sys.modules if n.startswith(cache.MODULE_PREFIX)]:
            del sys.modules[n]
        f = jit(lambda x, op=fnp.sin: op(x) * 2.0 + 1.0)  # the first kernel of _MANY
        y = f(np.linspace(0.1, 0.9, 5))
        results.append({"dir": d, "y": y.tolist(), "on_disk": cache.cache_dir() is not None})
    print(json.dumps(results))
""")


def test_item2_planted_payloads_in_untrusted_dirs_never_run(populated) -> None:
    module = populated[2][0]["kernels"][0]
    dirs, markers = [], []
    for tag, make_bad in [
        ("world", lambda d: os.chmod(d, 0o777)),
        ("sticky", lambda d: os.chmod(d, 0o1777)),
        ("group", lambda d: os.chmod(d / "__pycache__", 0o770)),
        ("owner", lambda d: os.chown(d, 12345, -1)),
        ("trusted", lambda d: None),  # control: proves the payloads are live
    ]:
        d, runs = _copy(populated, f"plant-{tag}")
        markers.append(_plant(d, module, tag, pyc=tag != "trusted"))
        make_bad(d)
        dirs.append(str(d))
    res = _run(_TRUST, {}, None, *dirs)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    for r in out:
        np.testing.assert_allclose(r["y"], runs[0]["y"])
    assert [r["on_disk"] for r in out] == [False, False, False, False, True]
    assert res.stderr.count("is not used") == 4, res.stderr
    assert "owned by uid 12345" in res.stderr and "mode 1777" in res.stderr
    for nbi_marker, pyc_marker in markers[:4]:
        assert not os.path.exists(nbi_marker) and not os.path.exists(pyc_marker)
    # In a directory that passes the checks, Numba's pickles are loaded: the cache is
    # trusted code (as documented).
    assert os.path.exists(markers[4][0])
    # The planted .pyc is live: Python's own import system would run it.
    module_py = os.path.join(dirs[0], module + ".py")
    spec = importlib.util.spec_from_file_location("planted_check", module_py)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert os.path.exists(markers[0][1])


def _flip(path: str, where: float) -> None:
    data = bytearray(open(path, "rb").read())
    data[int(len(data) * where)] ^= 0x04
    open(path, "wb").write(bytes(data))


def _truncate(path: str) -> None:
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])


def _garbage(path: str) -> None:
    n = os.path.getsize(path)
    open(path, "wb").write(np.random.default_rng(n).bytes(n))


def _garbage_with_sum(f: dict[str, str]) -> None:
    import hashlib

    data = b"not a pickle at all" * 10
    open(f["nbc"], "wb").write(data)
    sums = json.loads(open(f["sums"]).read())
    sums[os.path.basename(f["nbc"])] = hashlib.sha256(data).hexdigest()
    open(f["sums"], "w").write(json.dumps(sums))


_DAMAGE = [
    ("truncated .nbi", lambda f: _truncate(f["nbi"])),
    ("truncated .nbc", lambda f: _truncate(f["nbc"])),
    ("garbage .nbi", lambda f: _garbage(f["nbi"])),
    ("garbage .nbc", lambda f: _garbage(f["nbc"])),
    ("bit-flipped .nbc", lambda f: _flip(f["nbc"], 0.6)),
    ("bit-flipped .nbi", lambda f: _flip(f["nbi"], 0.5)),
    ("deleted .nbc", lambda f: os.remove(f["nbc"])),
    ("deleted checksums", lambda f: os.remove(f["sums"])),
    ("garbage checksums", lambda f: _garbage(f["sums"])),
    ("unlisted extra .nbc", lambda f: shutil.copy(f["nbc"], f["nbc"][:-6] + ".7.nbc")),
    ("garbled kernel .py", lambda f: _flip(f["py"], 0.9)),
    ("unloadable .nbc with a matching checksum", _garbage_with_sum),
]


def test_item3_every_kind_of_damaged_cache_file_heals_once(populated) -> None:
    cache, runs = _copy(populated, "damaged")
    assert len(_DAMAGE) == len(runs)
    for (_, damage), r in zip(_DAMAGE, runs):
        damage(_files(cache, r["kernels"][0]))
    env = {"FUNCTRACE_CACHE_DIR": str(cache)}
    heal = _run(_MANY, env)
    assert heal.returncode == 0, heal.stderr  # a bit flip never aborts the process
    healed = json.loads(heal.stdout)
    for (what, _), r, h in zip(_DAMAGE, runs, healed):
        # A damaged .py is rewritten from the generated source; Numba's index stamps the
        # source's content, so the verified machine code still matches and loads.
        assert h["compiled"] == (0 if what == "garbled kernel .py" else 1), what
        assert h["y"] == r["y"], what
    assert heal.stderr.count("functrace.jit: damaged or unverified kernel cache files") == 1
    for word in ("report", "NumbaWarning", "falls back", "Traceback"):
        assert word not in heal.stderr, heal.stderr
    again = _run(_MANY, env)
    assert again.returncode == 0, again.stderr
    assert [r["compiled"] for r in json.loads(again.stdout)] == [0] * len(runs)
    assert "Warning" not in again.stderr, again.stderr


# ---------------------------------------------------------------------------
# Item 4: the size cap, clear_cache, and bounded in-memory caches
# ---------------------------------------------------------------------------


def test_item4_size_cap_evicts_least_recently_used_and_clear_cache(tmp_path, monkeypatch) -> None:
    import functrace
    import functrace.numpy as fnp
    from functrace.jit import cache, jit

    monkeypatch.setenv("FUNCTRACE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("FUNCTRACE_CACHE_MAX_MB", raising=False)
    x = np.linspace(0.1, 0.9, 4)
    names = []
    for op in (fnp.arccos, fnp.log, fnp.sin):
        f = jit(lambda x, op=op: op(x) * 3.0 - 1.0)
        f(x)
        (entry,) = f._cache.values()
        names.append(entry.program.kernels[0].name)
    entries = cache._entries(str(tmp_path / "c"))
    assert set(names) <= set(entries)
    now = time.time()
    for age, name in zip((3000, 1000, 2000), names):  # least recently used: names[0]
        for path in entries[name][2]:
            os.utime(path, (now - age, now - age))
    total = sum(e[0] for e in entries.values())
    cap_mb = (total - entries[names[0]][0] + 1) / 2**20
    monkeypatch.setenv("FUNCTRACE_CACHE_MAX_MB", str(cap_mb))
    assert cache.enforce_size_cap() == 1
    left = cache._entries(str(tmp_path / "c"))
    assert names[0] not in left and names[1] in left and names[2] in left
    assert cache.cache_info()["bytes"] <= cap_mb * 2**20
    functrace.clear_cache()
    assert cache._entries(str(tmp_path / "c")) == {}
    assert not any(n.startswith(cache.MODULE_PREFIX) for n in os.listdir(tmp_path / "c"))


def test_item4_in_memory_cache_is_lru(monkeypatch) -> None:
    from functrace.jit import api, jit

    monkeypatch.setattr(api, "cache_size", 3)
    f = jit(lambda x: x * 2.0)
    for n in (1, 2, 3, 1):
        f(np.ones(n))
    assert f.trace_count == 3
    f(np.ones(4))  # evicts n=2, the least recently used
    assert len(f._cache) == len(f._fast) == 3
    f(np.ones(1))
    f(np.ones(3))
    assert f.trace_count == 4
    f(np.ones(2))
    assert f.trace_count == 5


_BOUNDED = textwrap.dedent("""
    import itertools, json
    import numpy as np
    import functrace.numpy as fnp
    from functrace.jit import jit

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    f = jit(lambda x, y: fnp.tanh(x * y + 1.0).sum())
    g = jit(lambda t: {"s": t["a"] * 2.0 + t["b"]})  # the pytree fast path
    sizes = []
    # 1000 distinct shapes of at most 1000 elements (growing arrays would grow the heap)
    for i, shape in enumerate(itertools.product(range(1, 11), repeat=3), 1):
        x = np.ones(shape)
        f(x, x)
        g({"a": x, "b": 1.0})
        if i in (300, 1000):
            sizes.append(rss())
    print(json.dumps({"rss": sizes, "f": [len(f._cache), len(f._fast), f.trace_count],
                      "g": [len(g._cache), len(g._tree_fast)]}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_item4_thousand_shapes_keep_cache_bounded_and_rss_flat(tmp_path) -> None:
    res = _run(_BOUNDED, {"FUNCTRACE_JIT_CACHE_SIZE": "64", "FUNCTRACE_CACHE_DIR": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["f"] == [64, 64, 1000] and out["g"] == [64, 64]
    r300, r1000 = out["rss"]
    assert r1000 <= r300 * 1.05, out["rss"]
