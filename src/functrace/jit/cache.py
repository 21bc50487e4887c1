"""The on-disk kernel cache.

Numba's ``cache=True`` needs a function defined in a real source file. Each
generated kernel is therefore written to ``<cache dir>/ft_<hash>.py``, where the
hash covers the kernel source and the versions of functrace, Numba, llvmlite,
NumPy and Python. The file is written atomically (temp file + ``os.replace``),
registered in ``sys.modules`` and imported; Numba then stores the compiled
machine code next to it (``__pycache__``), so a second process loads it instead
of compiling. Content addressing means a file is never rewritten with other
content, and files from other versions are simply never looked at.

The directory is ``$FUNCTRACE_CACHE_DIR``, default ``~/.cache/functrace``. If it
cannot be written, one warning is issued and a private temporary directory is
used for the rest of the process (removed at exit).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import warnings
from types import ModuleType
from typing import Any

_lock = threading.RLock()
_fallback_dir: str | None = None
_warned = False
_checked: dict[str, str] = {}  # requested dir -> usable dir
_version_tag: str | None = None

MODULE_PREFIX = "_functrace_kernel_"


def default_cache_dir() -> str:
    env = os.environ.get("FUNCTRACE_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return os.path.join(os.path.expanduser("~"), ".cache", "functrace")


def version_tag() -> str:
    """Everything the compiled code depends on besides its source."""
    global _version_tag
    if _version_tag is None:
        import llvmlite
        import numpy

        from functrace.jit.kernels import import_numba

        numba = import_numba()

        ft = sys.modules.get("functrace")
        ft_version = getattr(ft, "__version__", "0")
        _version_tag = (
            f"functrace={ft_version} numba={numba.__version__} "
            f"llvmlite={llvmlite.__version__} numpy={numpy.__version__} "
            f"python={sys.version_info[0]}.{sys.version_info[1]}"
        )
    return _version_tag


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".probe-")
        os.close(fd)
        os.remove(probe)
        return True
    except OSError:
        return False


def _use_fallback(requested: str) -> str:
    global _fallback_dir, _warned
    if _fallback_dir is None:
        _fallback_dir = tempfile.mkdtemp(prefix="functrace-jit-")
        atexit.register(shutil.rmtree, _fallback_dir, True)
    if not _warned:
        _warned = True
        warnings.warn(
            f"functrace.jit: expected a writable cache directory, got {requested!r}. "
            f"Compiled kernels are kept in a temporary directory for this process only; "
            f"set FUNCTRACE_CACHE_DIR to a writable directory to reuse them across runs.",
            RuntimeWarning,
            stacklevel=4,
        )
    return _fallback_dir


def cache_dir() -> str:
    """The directory kernels are written to (falling back as described above)."""
    requested = default_cache_dir()
    with _lock:
        got = _checked.get(requested)
        if got is None:
            got = requested if _writable(requested) else _use_fallback(requested)
            _checked[requested] = got
        return got


def source_hash(source: str) -> str:
    h = hashlib.sha256()
    h.update(version_tag().encode())
    h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()[:24]


def _write_atomic(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def _ensure_file(directory: str, name: str, text: str) -> str:
    path = os.path.join(directory, name)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return path  # never touch an existing identical file
    except OSError:
        pass
    _write_atomic(path, text)
    return path


def import_source(name: str, text: str) -> ModuleType:
    """Write ``text`` as module ``name`` into the cache directory and import it."""
    with _lock:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        directory = cache_dir()
        try:
            path = _ensure_file(directory, name + ".py", text)
        except OSError:
            # The directory went away or became read-only: continue in the fallback.
            directory = _use_fallback(directory)
            _checked[default_cache_dir()] = directory
            path = _ensure_file(directory, name + ".py", text)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # Numba's cache looks the module up while compiling
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return mod


def clear_cache() -> None:
    """Delete the on-disk kernels of the cache directory (and forget loaded ones).

    Functions already compiled in this process keep working; new compilations
    start from an empty cache.
    """
    from functrace.jit import kernels

    kernels.forget_loaded()
    with _lock:
        for name in [n for n in sys.modules if n.startswith(MODULE_PREFIX)]:
            del sys.modules[name]
        directory = default_cache_dir()
        dirs = {directory, _checked.get(directory, directory)}
        if _fallback_dir is not None:
            dirs.add(_fallback_dir)
        for d in dirs:
            _clear_dir(d)


def _clear_dir(directory: str) -> None:
    if not os.path.isdir(directory):
        return
    # Only our files: the directory may be shared with other things.
    pycache = os.path.join(directory, "__pycache__")
    for d in (directory, pycache):
        if not os.path.isdir(d):
            continue
        for entry in os.listdir(d):
            if entry.startswith((MODULE_PREFIX, ".tmp-")):
                try:
                    os.remove(os.path.join(d, entry))
                except OSError:
                    pass


def cache_info() -> dict[str, Any]:
    """Where the cache is and how many kernel files it holds (for debugging)."""
    d = cache_dir()
    files = [f for f in os.listdir(d) if f.startswith(MODULE_PREFIX)] if os.path.isdir(d) else []
    return {"dir": d, "kernels": len(files), "version": version_tag()}


__all__ = ["cache_dir", "cache_info", "clear_cache", "import_source", "source_hash"]
