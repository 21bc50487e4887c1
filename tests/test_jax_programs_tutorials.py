"""JAX programs on the topics of JAX's tutorials run unchanged under functrace.

The programs live in tests/jax_programs_tutorials.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_tutorials.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace
from jax_programs_tutorials import PROGRAMS

FIXTURE = Path(__file__).parent / "fixtures" / "jax_programs_tutorials.npz"

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
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files if k != "__about__"}


def test_every_program_has_reference_values(reference: dict[str, np.ndarray]) -> None:
    recorded = {k.split("/")[0] for k in reference}
    assert recorded == set(PROGRAMS)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[n]))
        if n in KNOWN_DIFFERENCES
        else n
        for n in sorted(PROGRAMS)
    ],
)
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
        assert have.dtype == want.dtype, f"{name}/{key}: dtype {have.dtype}, JAX {want.dtype}"
        if want.dtype.kind == "U":  # an error type's name: exactly
            np.testing.assert_array_equal(have, want, err_msg=f"{name}/{key}")
            continue
        # float32 samplers and kernels may round differently from XLA's in the last bits
        tol = 1e-6 if want.dtype in (np.float32, np.complex64) else 1e-9
        np.testing.assert_allclose(have, want, rtol=tol, atol=tol * 1e-3, err_msg=f"{name}/{key}")
