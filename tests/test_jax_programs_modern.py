"""JAX programs in current JAX idioms run unchanged under functrace.

The programs live in tests/jax_programs_modern.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_modern.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace
from jax_programs_modern import PROGRAMS

FIXTURE = Path(__file__).parent / "fixtures" / "jax_programs_modern.npz"

# program name -> reason, for programs where functrace differs from JAX
KNOWN_DIFFERENCES = {
    "ring_collectives": (
        "lax.ppermute (written with axis_index) inside a fori_loop body under "
        "shard_map/named vmap raises NotImplementedError (the documented limitation of "
        "axis_index inside loop bodies the named vmap batches; the message names "
        "axis_index, not ppermute), so the ring all-reduce and the all-gather matmul "
        "of JAX's shard_map docs do not run"
    ),
    "key_array_at_update": (
        "a typed key array has no .at (AttributeError: 'PRNGKeyArray' object has no "
        "attribute 'at'; documented as not yet supported), where JAX's "
        "keys.at[i].set(key) works eagerly and under jit"
    ),
    "jit_with_shardings": (
        "functrace's jit has no in_shardings/out_shardings keywords: TypeError "
        "(unexpected keyword argument), where JAX accepts them"
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
        if want.dtype in (np.float32, np.complex64):
            # float32 kernels (attention's softmax and products) sum in another order
            # than XLA's: a few units in the last place, more on small entries
            rtol, atol = 2e-5, 2e-5
        else:
            rtol, atol = 1e-9, 1e-12
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=f"{name}/{key}")
