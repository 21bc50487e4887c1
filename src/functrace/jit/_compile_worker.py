"""The worker process of tiered compilation: compiles kernels into the disk cache.

Started by ``tiered.Worker`` as ``python <this file> <functrace's version>`` with the
parent's cache directory in ``FUNCTRACE_CACHE_DIR``. It imports only the kernel
modules (``functrace`` and ``functrace.jit`` stand in as bare packages, so the
package's ``__init__`` and the rest of the library are not imported: ~1 s less to
start), and stamps kernels with the parent's version. It reads requests from stdin,
each an 8-byte little-endian length and a pickle of ``(module name, source, Numba
signature)``, compiles the kernel through ``kernels.load_source`` (so the cache's
trust checks, checksums, sealing and size cap apply as in the parent) and answers on
its original stdout with a pickle of ``("ok", seconds)`` or ``("error", text)``.
Anything the compile prints goes to stderr. It exits at the end of its input (the
parent closed the pipe or exited); Ctrl-C is left to the parent.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
import types


def _read(f, n: int) -> bytes | None:  # type: ignore[no-untyped-def]
    data = b""
    while len(data) < n:
        chunk = f.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _bare_packages(version: str) -> None:
    """``functrace`` and ``functrace.jit`` as packages whose ``__init__`` never runs."""
    jit_dir = os.path.dirname(os.path.abspath(__file__))
    pkg_dir = os.path.dirname(jit_dir)
    if jit_dir in sys.path:  # the script's directory: its modules are not top-level
        sys.path.remove(jit_dir)
    sys.path.insert(0, os.path.dirname(pkg_dir))
    if "functrace" in sys.modules:
        return
    ft = types.ModuleType("functrace")
    ft.__path__ = [pkg_dir]
    ft.__version__ = version  # type: ignore[attr-defined]
    jit = types.ModuleType("functrace.jit")
    jit.__path__ = [jit_dir]
    ft.jit = jit  # type: ignore[attr-defined]
    sys.modules["functrace"], sys.modules["functrace.jit"] = ft, jit


def main() -> None:
    """Serve compile requests until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints of the compiler never corrupt the replies
    _bare_packages(sys.argv[1] if len(sys.argv) > 1 else "0")
    from functrace.jit import cache, kernels

    kernels.import_numba()  # while the parent traces and interprets
    inp = sys.stdin.buffer
    out.write(b"R")  # ready: imported
    out.flush()
    while True:
        head = _read(inp, 8)
        if head is None:
            return
        body = _read(inp, int.from_bytes(head, "little"))
        if body is None:
            return
        name, source, signature = pickle.loads(body)  # noqa: S301 - our parent's request
        t0 = time.perf_counter()
        try:
            if cache.MODULE_PREFIX + cache.source_hash(source) != name:
                raise RuntimeError("the worker computes another kernel name (versions differ)")
            if not cache.is_sealed(name):  # loaded here before, deleted since (clear_cache)
                kernels.forget_kernel(name)
            kernels.load_source(source, signature)
            reply: tuple[str, object] = ("ok", time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - reported to the parent, which compiles itself
            reply = ("error", f"{type(e).__name__}: {e}")
        data = pickle.dumps(reply)
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()


if __name__ == "__main__":
    main()
