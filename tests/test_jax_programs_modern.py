"""JAX programs in current JAX idioms run unchanged under functrace.

The programs live in tests/jax_programs_modern.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_modern.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

from jax_programs_modern import PROGRAMS
from recorded import program_tests

# program name -> reason, for programs where functrace differs from JAX
KNOWN_DIFFERENCES: dict[str, str] = {}


test_every_program_has_reference_values, test_program_matches_jax = program_tests(
    PROGRAMS, "jax_programs_modern.npz", KNOWN_DIFFERENCES
)
