"""JAX programs run unchanged under functrace and compute JAX's numbers.

The programs live in tests/jax_programs.py; each takes the library namespace, and
the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs.npz. Here ``jax`` is simply ``functrace`` (JAX is not
needed to run these tests). Several draw from ``jax.random`` (so the samples, not
only the arithmetic, must be JAX's) and call ``jax.scipy``.
"""

from __future__ import annotations

from jax_programs import PROGRAMS
from recorded import program_tests

test_every_program_has_reference_values, test_program_matches_jax = program_tests(
    PROGRAMS, "jax_programs.npz", check_dtypes=False
)
