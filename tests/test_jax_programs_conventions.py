"""JAX programs on the conventions of derivatives and transforms run unchanged under
functrace.

The programs live in tests/jax_programs_conventions.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_conventions.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type, a dtype or a tree path (a unicode array), which must be the same exactly;
dtypes must match too, as a JAX program would see them.
"""

from __future__ import annotations

from jax_programs_conventions import PROGRAMS
from recorded import program_tests

# program name -> reason, for programs where functrace differs from JAX
KNOWN_DIFFERENCES: dict[str, str] = {
    "documented_kinks": (
        "functrace's kink conventions (src/functrace/README.md, Differentiation: Kinks "
        "and Powers at 0; the NOTEs of fmax/fmin and scipy.special's docstring for "
        "xlogy/xlog1py): abs'(0) = 0 (JAX: 1; also in the norms, soft_sign'' and "
        "(|x|**2)'' built on it), max's gradient among NaN entries (JAX: NaN), "
        "clip/clamp pass the gradient on the closed interval (JAX: 0.5 at "
        "jnp.clip's bounds, 0 at lax.clamp's), fmax/fmin split ties (JAX: all to the "
        "second), hypot'(0, 0) = (0, 0) (JAX: 0.5 each), cummax ties to the latest "
        "position (JAX: fractions from its scan), finite derivatives of x**y at x = 0 "
        "(JAX: NaN), xlogy's x-derivative 0 where y <= 0"
    ),
    "documented_safe_sqrt": (
        "norm and std at zero have gradient 0, a subgradient (the NOTEs in "
        "functrace.numpy.linalg.norm's and functrace.numpy.std's docstrings); JAX: NaN"
    ),
    "triangle_reading_gradients": (
        "functrace.numpy.linalg.eigh/eigvalsh/cholesky read one triangle "
        "(symmetrize_input=False by default, documented in their docstrings and "
        "src/functrace/README.md, Complex numbers), so the gradient is lower-triangular; "
        "JAX symmetrizes by default"
    ),
    "jax_implementation_artifacts": (
        "JAX 0.10.2 artifacts: jacrev(allow_int=True) gives int64 zeros for an integer "
        "input (functrace: float0, as grad), linear_transpose of a nonlinear function "
        "is a bare AssertionError (functrace: a TypeError naming the function), sinc's "
        "derivatives at 1e-9 lose every digit (functrace's are accurate), "
        "scipy.special.i0'(0) = 1 and i1''(0) = 1 from abs'(0) = 1 (both 0 in fact)"
    ),
}


test_every_program_has_reference_values, test_program_matches_jax = program_tests(
    PROGRAMS, "jax_programs_conventions.npz", KNOWN_DIFFERENCES
)
