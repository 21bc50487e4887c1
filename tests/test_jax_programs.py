"""JAX programs run unchanged under functrace and compute JAX's numbers.

The programs live in tests/jax_programs.py; each takes the library namespace, and
the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs.npz. Here ``jax`` is simply ``functrace`` (JAX is not
needed to run these tests). Several draw from ``jax.random`` (so the samples, not
only the arithmetic, must be JAX's) and call ``jax.scipy``.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace
from jax_programs import PROGRAMS
from recorded import assert_program_matches, load_programs_reference


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    return load_programs_reference("jax_programs.npz")


def test_every_program_has_reference_values(reference: dict[str, np.ndarray]) -> None:
    recorded = {k.split("/")[0] for k in reference}
    assert recorded == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name: str, reference: dict[str, np.ndarray]) -> None:
    jax = functrace  # the only change a JAX program needs
    assert_program_matches(name, PROGRAMS[name](jax), reference, check_dtypes=False)
