"""``jax.nn.initializers`` under its ``example_libraries`` name: the same module
contents as :mod:`functrace.nn.initializers`, their public home (re-exported here so
``stax`` code written against this path keeps working)."""

from __future__ import annotations

from functrace.nn.initializers import *  # noqa: F403
from functrace.nn.initializers import __all__ as __all__
