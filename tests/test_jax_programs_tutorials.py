"""JAX programs on the topics of JAX's tutorials run unchanged under functrace.

The programs live in tests/jax_programs_tutorials.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_tutorials.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

from jax_programs_tutorials import PROGRAMS
from recorded import program_tests

# program name -> reason, for programs where functrace differs from JAX by a documented
# choice, or a gradient at a broken index promise
KNOWN_DIFFERENCES = {
    "documented_differences": (
        "deliberate (README): an out-of-range index known eagerly raises IndexError, "
        "jnp.sum of a list is NumPy's sum, the mean of booleans is float64 (NumPy 2), "
        "and grad of a while_loop (or a fori_loop with traced bounds) is computed, not a "
        "ValueError"
    ),
    "out_of_range_gather_gradient": (
        "x[i] with a traced out-of-range i reads the clamped element in both, but "
        "functrace's gradient goes to that element (as mode='clip'), JAX's is dropped"
    ),
}


test_every_program_has_reference_values, test_program_matches_jax = program_tests(
    PROGRAMS, "jax_programs_tutorials.npz", KNOWN_DIFFERENCES, float32_tol=(1e-06, 1e-09)
)
