"""JAX's persistent compilation cache switches (``from
jax.experimental.compilation_cache import compilation_cache as cc``).

functrace always keeps its compiled kernels on disk, in ``$FUNCTRACE_CACHE_DIR``
(default ``~/.cache/functrace``; ``functrace.clear_cache()`` empties it), so a program
that turns JAX's cache on already has what it asked for. As the ``jax_compilation_cache_dir``
option (``config.update``), :func:`set_cache_dir` is accepted and read back, and does not
move functrace's cache: JAX's directory holds XLA executables, which functrace neither
reads nor writes.
"""

from __future__ import annotations

import os
from typing import Any

from functrace._config import config


def set_cache_dir(path: Any) -> None:
    """Record ``path`` as ``config.compilation_cache_dir`` (JAX's persistent cache
    directory; functrace's kernels stay in ``$FUNCTRACE_CACHE_DIR``, module doc).

    >>> set_cache_dir("/tmp/jax-cache")
    >>> config.compilation_cache_dir
    '/tmp/jax-cache'
    >>> config.update("jax_compilation_cache_dir", None)
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"set_cache_dir: expected a path (str or os.PathLike), got {type(path).__name__}."
        )
    config.update("jax_compilation_cache_dir", os.fspath(path))


def reset_cache() -> None:
    """JAX's reset of its in-memory cache object (for tests): functrace keeps none,
    so nothing changes; ``functrace.clear_caches()`` forgets the kernels loaded in this
    process and ``functrace.clear_cache()`` the ones on disk."""


__all__ = ["reset_cache", "set_cache_dir"]
