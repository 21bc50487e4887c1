"""How many examples a slow property test draws: few in ``make test`` (the ``ci``
hypothesis profile, deterministic), many in ``make fuzz`` (the ``long`` profile).

A test whose examples are expensive (each one a Numba compile, or an order-2 gradient
check) takes ``max_examples=examples(ci, long)`` and the ``long_profile`` marker, so
``make fuzz`` runs it again with ``long`` fresh examples: the slow cases move to the
long profile instead of being dropped.

A case whose single run is slow to compile (not to sample) carries ``slow_compile``
instead: ``make test`` leaves it out and ``make fuzz`` runs it once, as drawn in ``ci``.
"""

from __future__ import annotations

import os

import pytest

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"

long_profile = pytest.mark.long_profile

# A case that compiles for many seconds under jit (the rows of ``op_db.SLOW_COMPILE_JIT``):
# ``make test`` deselects it (``-m "not slow_compile"``), ``make fuzz`` runs it.
slow_compile = pytest.mark.slow_compile


def examples(ci: int, long: int) -> int:
    """``ci`` examples in ``make test``, ``long`` in ``make fuzz``."""
    return long if LONG else ci
