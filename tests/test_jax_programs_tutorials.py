"""JAX programs on the topics of JAX's tutorials run unchanged under functrace.

The programs live in tests/jax_programs_tutorials.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_tutorials.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace
from jax_programs_tutorials import PROGRAMS
from recorded import assert_program_matches, load_programs_reference, program_params

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


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    return load_programs_reference("jax_programs_tutorials.npz")


def test_every_program_has_reference_values(reference: dict[str, np.ndarray]) -> None:
    recorded = {k.split("/")[0] for k in reference}
    assert recorded == set(PROGRAMS)


@pytest.mark.parametrize("name", program_params(PROGRAMS, KNOWN_DIFFERENCES))
def test_program_matches_jax(name: str, reference: dict[str, np.ndarray]) -> None:
    jax = functrace  # the only change a JAX program needs
    assert_program_matches(name, PROGRAMS[name](jax), reference, float32_tol=(1e-06, 1e-09))
