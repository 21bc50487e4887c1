"""JAX programs run unchanged under functrace and compute JAX's numbers.

The programs live in tests/jax_programs.py; each takes the library namespace, and
the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs.npz. Here ``jax`` is simply ``functrace`` (JAX is not
needed to run these tests). Several draw from ``jax.random`` (so the samples, not
only the arithmetic, must be JAX's) and call ``jax.scipy``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace
from jax_programs import PROGRAMS

FIXTURE = Path(__file__).parent / "fixtures" / "jax_programs.npz"


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}


def test_every_program_has_reference_values(reference: dict[str, np.ndarray]) -> None:
    recorded = {k.split("/")[0] for k in reference}
    assert recorded == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name: str, reference: dict[str, np.ndarray]) -> None:
    jax = functrace  # the only change a JAX program needs
    got = PROGRAMS[name](jax)
    expected = {k.split("/", 1)[1]: v for k, v in reference.items() if k.startswith(name + "/")}
    assert set(got) == set(expected), (
        f"{name}: outputs {sorted(got)} vs recorded {sorted(expected)}"
    )
    for key, want in expected.items():
        have = np.asarray(got[key])
        assert have.shape == want.shape, f"{name}/{key}: shape {have.shape}, JAX {want.shape}"
        np.testing.assert_allclose(have, want, rtol=1e-9, atol=1e-12, err_msg=f"{name}/{key}")
