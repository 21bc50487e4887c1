"""How many examples a slow property test draws: few in ``make test`` (the ``ci``
hypothesis profile, deterministic), many in ``make fuzz`` (the ``long`` profile).

A test whose examples are expensive (each one a Numba compile, or an order-2 gradient
check) takes ``max_examples=examples(ci, long)`` and the ``long_profile`` marker, so
``make fuzz`` runs it again with ``long`` fresh examples: the slow cases move to the
long profile instead of being dropped.
"""

from __future__ import annotations

import os

import pytest

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"

long_profile = pytest.mark.long_profile


def examples(ci: int, long: int) -> int:
    """``ci`` examples in ``make test``, ``long`` in ``make fuzz``."""
    return long if LONG else ci
