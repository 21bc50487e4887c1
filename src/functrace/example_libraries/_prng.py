"""Where ``stax`` and ``initializers`` get their PRNG functions from.

Layers take JAX-style PRNG keys and only call ``split``, ``normal``,
``truncated_normal``, ``uniform`` and ``bernoulli`` on them, always through
:func:`random_module`, which imports ``functrace.random`` on first use. The
modules therefore import (and every layer's ``apply_fun`` except ``Dropout``'s
works) without it, and tests can substitute a deterministic stand-in here.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def random_module(fname: str) -> ModuleType | Any:
    """``functrace.random``, or a clear error naming ``fname`` if it is not available."""
    try:
        return importlib.import_module("functrace.random")
    except ImportError as e:
        raise RuntimeError(
            f"{fname} needs PRNG keys from functrace.random, which is not available: {e}"
        ) from e
