"""The on-disk kernel cache, and why it is trusted code.

Numba's ``cache=True`` needs a function defined in a real source file. Each
generated kernel is therefore written to ``<cache dir>/_functrace_kernel_<hash>.py``,
where the hash covers the kernel source and the versions of functrace, Numba,
llvmlite, NumPy and Python. The file is written atomically (temp file +
``os.replace``) and the module is executed from the source text functrace
generated (never from that file or a ``.pyc``); Numba then stores the compiled
machine code next to it (``__pycache__/<module>.*.nbi`` / ``.nbc``), so a second
process loads it instead of compiling. Content addressing means a file is never
rewritten with other content, and files from other versions are never looked at.

**The cache is trusted code.** Numba's cache files are pickles: loading them runs
whatever they say. Anyone who can write to the cache directory can therefore run
code in every later process that uses ``jit``. So:

* the directory, its ``__pycache__`` and every file functrace writes there are
  created ``0700``/``0600`` whatever the umask (Numba's own files are set to
  ``0600`` after each compile);
* before anything is loaded, the directory and its ``__pycache__`` must be owned
  by the current user and not group/world-writable; otherwise one warning is
  issued and compiled kernels are kept in memory for the rest of the process
  (nothing is read from or written to that directory). The same happens, with
  another warning, when the directory cannot be written;
* after a successful compile, functrace records the SHA-256 of each of the
  kernel's Numba files in ``<module>.ftsum`` (written atomically), and checks
  them before Numba reads the files; a mismatch, a missing or unexpected file,
  or a failed load deletes that kernel's entry and compiles it again, with one
  short warning (:func:`verify_entry`). A damaged file is never handed to Numba
  (a bit flip in a ``.nbc`` can abort the process inside LLVM).

The directory is ``$FUNCTRACE_CACHE_DIR``, default ``~/.cache/functrace``. Its
size is capped at ``$FUNCTRACE_CACHE_MAX_MB`` (default 1024; ``0`` means no cap):
after each compile, the least recently used kernels (by the time of their last
load or compile) are deleted until the cache fits. :func:`clear_files` deletes
all of functrace's files in it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import types
import warnings
from typing import Any

from functrace.jit.numba_import import import_numba

_lock = threading.RLock()
_warned: set[str] = set()
_checked: dict[str, str | None] = {}  # requested dir -> trusted dir, or None (memory only)
_version_tag: str | None = None

MODULE_PREFIX = "_functrace_kernel_"
SUM_SUFFIX = ".ftsum"
DEFAULT_MAX_MB = 1024
PYCACHE = "__pycache__"


def default_cache_dir() -> str:
    env = os.environ.get("FUNCTRACE_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return os.path.join(os.path.expanduser("~"), ".cache", "functrace")


def version_tag() -> str:
    """Everything the compiled code depends on besides its source."""
    global _version_tag
    if _version_tag is None:
        import numpy

        ft = sys.modules.get("functrace")
        ft_version = getattr(ft, "__version__", "0")
        _version_tag = (
            f"functrace={ft_version} numba={_dist_version('numba')} "
            f"llvmlite={_dist_version('llvmlite')} numpy={numpy.__version__} "
            f"python={sys.version_info[0]}.{sys.version_info[1]}"
        )
    return _version_tag


def _dist_version(dist: str) -> str:
    """An installed package's version from its metadata, without importing it (kernel
    names are computed before a tiered first call decides whether Numba is needed);
    the module's ``__version__`` when the metadata is missing."""
    import importlib.util

    try:  # the dist-info next to the package: ~1 ms, where a metadata search takes ~0.1 s
        spec = importlib.util.find_spec(dist)
        origin = spec.origin if spec is not None else None
        if origin:
            site = os.path.dirname(os.path.dirname(origin))
            infos = [n for n in os.listdir(site) if n.startswith(dist + "-")]
            infos = [n for n in infos if n.endswith(".dist-info")]
            if len(infos) == 1:
                with open(os.path.join(site, infos[0], "METADATA"), encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break
    except (OSError, ImportError, ValueError):
        pass
    import importlib.metadata  # slow to import (~0.1-0.5 s): only when needed

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        mod = import_numba() if dist == "numba" else __import__(dist)
        return str(mod.__version__)


def is_sealed(module: str) -> bool:
    """Whether ``module``'s kernel has sealed Numba files in the trusted cache directory
    (a load, not a compile, is expected; :func:`verify_entry` still checks them)."""
    directory = cache_dir()
    if directory is None:
        return False
    return os.path.exists(os.path.join(directory, PYCACHE, module + SUM_SUFFIX))


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, RuntimeWarning, stacklevel=5)


def _private_dir(path: str) -> None:
    """Create ``path`` (and missing parents) with the leaf ``0700``, whatever the umask."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)


def untrusted_reason(path: str) -> str | None:
    """Why ``path`` may not hold code this process loads (None: it may)."""
    try:
        st = os.stat(path)
    except OSError as e:
        return f"not accessible ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        who = "others" if st.st_mode & 0o002 else "its group"
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _writable(path: str) -> bool:
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".probe-")
        os.close(fd)
        os.remove(probe)
        return True
    except OSError:
        return False


def _check_dir(requested: str) -> str | None:
    try:
        _private_dir(requested)
    except OSError:
        pass
    if not os.path.isdir(requested) or not _writable(requested):
        _memory_only(requested, None)
        return None
    for d in (requested, os.path.join(requested, PYCACHE)):
        if d != requested:
            try:
                _private_dir(d)
            except OSError:
                _memory_only(requested, None)
                return None
        why = untrusted_reason(d)
        if why is not None:
            _memory_only(d, why)
            return None
    return requested


def _memory_only(directory: str, why: str | None) -> None:
    if why is None:
        _warn_once(
            "unwritable:" + directory,
            f"functrace.jit: expected a writable cache directory, got {directory!r}. "
            f"Compiled kernels are kept in memory for this process only; set "
            f"FUNCTRACE_CACHE_DIR to a writable directory to reuse them across runs.",
        )
    else:
        _warn_once(
            "untrusted:" + directory,
            f"functrace.jit: the kernel cache directory {directory!r} is {why}. Loading "
            f"compiled code from it would run whatever anyone who can write there put in "
            f"it, so it is not used: compiled kernels are kept in memory for this process "
            f"only. Make the directory yours with mode 0700, or set FUNCTRACE_CACHE_DIR.",
        )


def cache_dir() -> str | None:
    """The trusted directory kernels are cached in, or None when compiled kernels are
    kept in memory only (an unwritable or untrusted directory, see the module doc)."""
    requested = default_cache_dir()
    with _lock:
        if requested not in _checked:
            _checked[requested] = _check_dir(requested)
        return _checked[requested]


def source_hash(source: str) -> str:
    h = hashlib.sha256()
    h.update(version_tag().encode())
    h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()[:24]


def _write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a ``0600`` temp file and ``os.replace``."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def _ensure_file(directory: str, name: str, text: str) -> str:
    path = os.path.join(directory, name)
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read(len(data) + 1) == data:
                return path  # never touch an identical file (Numba stamps its mtime)
        warn_healed(directory)  # exists with other content: damaged or tampered with
    except OSError:
        pass
    _write_atomic(path, data)
    return path


def import_source(name: str, text: str) -> types.ModuleType:
    """Make module ``name`` from ``text``: written into the cache directory (so Numba
    can cache its functions) unless the cache is memory-only, and always executed from
    ``text`` itself, never from a file or bytecode on disk."""
    with _lock:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        directory = cache_dir()
        path = None
        if directory is not None:
            try:
                path = _ensure_file(directory, name + ".py", text)
            except OSError:
                # The directory went away or became read-only: memory only from now on.
                _memory_only(directory, None)
                _checked[default_cache_dir()] = None
        filename = path if path is not None else f"<functrace kernel {name}>"
        if path is None:
            import linecache

            linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        mod = types.ModuleType(name)
        mod.__file__ = filename
        code = compile(text, filename, "exec")
        sys.modules[name] = mod  # Numba's cache looks the module up while compiling
        try:
            exec(code, mod.__dict__)  # noqa: S102 - functrace's own generated source
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return mod


def forget_module(name: str) -> None:
    with _lock:
        sys.modules.pop(name, None)


# ---------------------------------------------------------------------------
# Integrity of Numba's files: <module>.ftsum next to them
# ---------------------------------------------------------------------------


def numba_cache_path(dispatcher: Any) -> str | None:
    """Where Numba keeps ``dispatcher``'s cache files (None: not cached on disk)."""
    c = getattr(dispatcher, "_cache", None)
    path = getattr(c, "_cache_path", None)
    return path if isinstance(path, str) else None


def _entry_files(path: str, module: str) -> list[str]:
    try:
        names = os.listdir(path)
    except OSError:
        return []
    prefix = module + "."
    return sorted(n for n in names if n.startswith(prefix) and not n.endswith(SUM_SUFFIX))


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_sums(path: str) -> dict[str, str] | None:
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 16)
        sums = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not (isinstance(sums, dict) and all(isinstance(v, str) for v in sums.values())):
        return None
    return sums


def purge_entry(path: str, module: str) -> None:
    """Delete a kernel's Numba files and checksums (its ``.py`` stays)."""
    for n in [*_entry_files(path, module), module + SUM_SUFFIX]:
        try:
            os.remove(os.path.join(path, n))
        except OSError:
            pass


def verify_entry(dispatcher: Any, module: str) -> bool:
    """Check a kernel's Numba files against its checksums before Numba reads them.

    Returns whether a verified entry is there to load. Anything else deletes the entry
    first: files without checksums (never sealed) silently, a mismatch or a missing or
    extra file with one warning; an untrusted Numba cache directory turns the
    dispatcher's disk cache off.
    """
    path = numba_cache_path(dispatcher)
    if path is None:
        return False
    if untrusted_reason(path) is not None:
        disable_disk_cache(dispatcher, path, untrusted_reason(path))
        return False
    files = _entry_files(path, module)
    sums_path = os.path.join(path, module + SUM_SUFFIX)
    if not files:
        if os.path.exists(sums_path):
            purge_entry(path, module)
        return False
    if not os.path.exists(sums_path):
        # Never sealed (an older functrace, or a crash between Numba's save and ours):
        # not loaded, silently replaced.
        purge_entry(path, module)
        return False
    sums = _read_sums(sums_path)
    ok = sums is not None and sorted(sums) == files
    if ok:
        assert sums is not None
        try:
            ok = all(_sha256(os.path.join(path, n)) == sums[n] for n in files)
        except OSError:
            ok = False
    if not ok:
        purge_entry(path, module)
        warn_healed(path)
        return False
    try:
        os.utime(sums_path)  # the entry's last use, for the size cap's LRU eviction
    except OSError:
        pass
    return True


def warn_healed(path: str) -> None:
    _warn_once(
        "healed",
        f"functrace.jit: damaged or unverified kernel cache files in {path!r} were "
        f"deleted and the kernels compiled again.",
    )


def disable_disk_cache(dispatcher: Any, path: str, why: str | None) -> None:
    from numba.core.caching import NullCache

    dispatcher._cache = NullCache()
    _memory_only(path, why)


def seal_entry(dispatcher: Any, module: str) -> None:
    """After Numba compiled and saved ``module``'s kernel: make its files ``0600`` and
    record their checksums atomically; then keep the cache under its size cap."""
    path = numba_cache_path(dispatcher)
    if path is None:
        return
    try:
        sums = {}
        for n in _entry_files(path, module):
            full = os.path.join(path, n)
            if ".tmp." in n:  # a leftover of an interrupted Numba write
                os.remove(full)
                continue
            os.chmod(full, 0o600)
            sums[n] = _sha256(full)
        if sums:
            _write_atomic(os.path.join(path, module + SUM_SUFFIX), json.dumps(sums).encode())
    except OSError:
        purge_entry(path, module)
        return
    enforce_size_cap(keep=module)


def max_bytes() -> int | None:
    """``$FUNCTRACE_CACHE_MAX_MB`` in bytes (default 1024 MB; 0 or less: no cap)."""
    raw = os.environ.get("FUNCTRACE_CACHE_MAX_MB", "").strip()
    try:
        mb = float(raw) if raw else float(DEFAULT_MAX_MB)
    except ValueError:
        _warn_once(
            "max_mb",
            f"functrace.jit: expected a number for FUNCTRACE_CACHE_MAX_MB, got {raw!r}; "
            f"using {DEFAULT_MAX_MB}.",
        )
        mb = float(DEFAULT_MAX_MB)
    return None if mb <= 0 else int(mb * 2**20)


def _entries(directory: str) -> dict[str, tuple[int, float, list[str]]]:
    """``{module: (bytes, last use, files)}`` of the kernels in ``directory``."""
    out: dict[str, tuple[int, float, list[str]]] = {}
    for d in (directory, os.path.join(directory, PYCACHE)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            if not n.startswith(MODULE_PREFIX):
                continue
            module = n.split(".", 1)[0]
            full = os.path.join(d, n)
            try:
                st = os.stat(full)
            except OSError:
                continue
            size, used, files = out.get(module, (0, 0.0, []))
            files.append(full)
            out[module] = (size + st.st_size, max(used, st.st_mtime), files)
    return out


def enforce_size_cap(keep: str | None = None) -> int:
    """Delete least recently used kernels until the cache fits ``max_bytes()``;
    returns how many were deleted. ``keep`` (the kernel just compiled) is never deleted."""
    cap = max_bytes()
    directory = cache_dir()
    if cap is None or directory is None:
        return 0
    with _lock:
        entries = _entries(directory)
        total = sum(e[0] for e in entries.values())
        deleted = 0
        for module, (size, _, files) in sorted(entries.items(), key=lambda kv: kv[1][1]):
            if total <= cap:
                break
            if module == keep:
                continue
            for f in files:
                try:
                    os.remove(f)
                except OSError:
                    pass
            total -= size
            deleted += 1
        return deleted


def clear_files() -> None:
    """Delete the on-disk kernels of the cache directory and unload their modules
    (``kernels.clear_cache`` also forgets the loaded kernels)."""
    with _lock:
        for name in [n for n in sys.modules if n.startswith(MODULE_PREFIX)]:
            del sys.modules[name]
        directory = _checked.get(default_cache_dir(), default_cache_dir())
        if directory is not None and untrusted_reason(directory) is None:
            _clear_dir(directory)


def _clear_dir(directory: str) -> None:
    # Only our files: the directory may be shared with other things.
    for d in (directory, os.path.join(directory, PYCACHE)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for entry in names:
            if entry.startswith((MODULE_PREFIX, ".tmp-")):
                try:
                    os.remove(os.path.join(d, entry))
                except OSError:
                    pass


def cache_info() -> dict[str, Any]:
    """Where the cache is, how many kernels and bytes it holds (for debugging)."""
    d = cache_dir()
    entries = _entries(d) if d is not None else {}
    return {
        "dir": d,
        "kernels": len(entries),
        "bytes": sum(e[0] for e in entries.values()),
        "max_bytes": max_bytes(),
        "version": version_tag(),
    }


__all__ = ["cache_dir", "cache_info", "clear_files", "import_source", "source_hash"]
