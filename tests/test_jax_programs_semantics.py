"""JAX programs on the edge cases of jax.numpy and jax.lax numerics run unchanged under
functrace, eagerly, under jit and under vmap.

The programs live in tests/jax_programs_semantics.py; each takes the library
namespace, and the same code was run under JAX 0.10.2 with float64 enabled to record
tests/fixtures/jax_programs_semantics.npz. Here ``jax`` is simply ``functrace`` (JAX
is not needed to run these tests). Besides numbers, a program may return the name of
an error type (a unicode array), which must be the same exactly; dtypes must match
too, as a JAX program would see them.
"""

from __future__ import annotations

from jax_programs_semantics import PROGRAMS
from recorded import program_tests

# program name -> reason, for programs where functrace differs from JAX
KNOWN_DIFFERENCES = {
    "integer_zero_divisors": (
        "integer division by zero: JAX returns XLA's implementation-defined values (x // 0 "
        "== -2 after flooring -1, x % 0 == x); functrace computes NumPy's 0 eagerly, under "
        "jit and under vmap"
    ),
    "integer_negative_powers": (
        "JAX 0.10.2 returns wrong values for integers to negative powers (3 ** -2 == "
        "703701817, 5 ** -1 == 1501274061); functrace raises NumPy's ValueError (README, "
        "'Powers at 0')"
    ),
    "signed_zero_order": (
        "JAX orders -0.0 below +0.0 in maximum/minimum/lax.max/clip/relu and keeps "
        "sign(-0.0) == -0.0; functrace follows NumPy, which returns either zero"
    ),
    "searchsorted_dtype": (
        "jnp.searchsorted returns int32 in JAX; functrace's returns int64 (its docstring)"
    ),
    "small_integer_cumsum": (
        "cumsum/cumprod of int8/uint8 (and other integers narrower than int64) keep their "
        "dtype and wrap in JAX; functrace's widen to int64/uint64 as NumPy's do, eagerly "
        "and traced (nancumsum, cumulative_sum and add.accumulate share the rule)"
    ),
    "integer_to_float_dtypes": (
        "deliberate (README, 'Weak types'): integers meeting or becoming floats promote as "
        "in NumPy (float64, float16 for sqrt of uint8), and a Python int out of an "
        "operand's range is NumPy's OverflowError; JAX gives float32 and wraps"
    ),
    "default_mode_reads": (
        "deliberate (README, 'Out-of-range indices, one rule'): an out-of-range index "
        "known eagerly raises IndexError in the default mode of take/take_along_axis/"
        "x[idx]; under jit and vmap functrace gives JAX's values"
    ),
    "complex_inverse_functions": (
        "arcsinh on its branch cut with a -0.0 real part (-0 - 2j, -0 - 4j): NumPy gives "
        "-1.317 - 1.571j (C99: asinh is odd, so the cut's sides follow the zero's sign), "
        "JAX +1.317 - 1.571j; functrace follows NumPy eagerly, under jit and under vmap "
        "(the program's other values match JAX's)"
    ),
    "complex_numpy_order": (
        "deliberate (functrace.numpy.argmax's docstring): argmax/argmin/nanargmax of "
        "complex arrays follow NumPy's lexicographic order where JAX raises TypeError; "
        "max/min of complex arrays with NaN parts propagate the NaN as NumPy's (JAX's "
        "result depends on where the NaNs are: max([1+2j, nan, 3+1j, nanj, 5]) is 5); "
        "nanmax skips NaN entries as NumPy's (JAX's reads them as -inf+0j, above -inf-5j)"
    ),
    "complex_infinities": (
        "JAX gives abs(nan + inf*j) == nan where C99 and NumPy give inf, and functrace's "
        "expm1(inf + 0j) has a NaN imaginary part (NumPy's) where JAX gives 0"
    ),
}


test_every_program_has_reference_values, test_program_matches_jax = program_tests(
    PROGRAMS, "jax_programs_semantics.npz", KNOWN_DIFFERENCES
)
