"""functrace.random: JAX's key-based random numbers, bit for bit.

Keys are explicit values: ``key = random.PRNGKey(0)`` (or ``random.key(0)``), then
``k1, k2 = random.split(key)`` and ``random.normal(k1, (3,))``. The generator is
Threefry-2x32 (the ``lax.threefry2x32`` primitive), with JAX's key derivation,
``split``/``fold_in`` and counter layout, so the same seed gives the same bits and the
same samples as JAX (``jax_threefry_partitionable`` on, JAX's default).

Decisions (see also ``functrace/README.md``):

* **x64 semantics.** functrace's default float is float64 and its default int is
  int64, so ``normal(key, shape)`` returns float64 and matches JAX with
  ``jax_enable_x64`` on; pass ``dtype=np.float32`` for JAX's default-mode samples
  (those do not depend on the x64 flag). ``bits`` defaults to uint64, ``randint`` and
  ``poisson`` to int64, and integer seeds are 64-bit (negative seeds as in x64 mode).
* **One key representation.** Every key is a ``uint32`` array whose last axis has
  length 2 (JAX's "raw" keys); ``key``, ``PRNGKey``, ``split``, ``fold_in`` and
  ``wrap_key_data`` all return such arrays, and ``key_data`` returns them unchanged.
  Keys are ordinary arrays: they batch under ``vmap`` (``vmap(f)(random.split(k, 4))``
  equals the loop), pass through ``jit`` and pytrees, and never carry tangents.
* Samplers are built from primitives, so they run under ``jit`` (the cipher compiles
  to one native loop), ``vmap`` and ``grad``; reparameterised samplers pass gradients
  to their parameters (``uniform``'s bounds, ``truncated_normal``'s bounds,
  ``multivariate_normal``'s mean and covariance), and ``gamma``/``beta``/``dirichlet``
  differentiate in their shape parameters by JAX's implicit rule (the derivative of the
  gamma CDF at the sample).

>>> import functrace.random as random
>>> key = random.PRNGKey(0)
>>> random.bits(key, (2,), dtype="uint32")
array([4070199207, 4202968722], dtype=uint32)
"""

from functrace.random._continuous import (
    exponential,
    gumbel,
    laplace,
    logistic,
    multivariate_normal,
    normal,
    truncated_normal,
    uniform,
)
from functrace.random._discrete import bernoulli, categorical, choice, permutation, poisson, randint
from functrace.random._gamma import beta, dirichlet, gamma, loggamma
from functrace.random._keys import (
    PRNGKey,
    bits,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    wrap_key_data,
)

__all__ = [
    "PRNGKey",
    "bernoulli",
    "beta",
    "bits",
    "categorical",
    "choice",
    "dirichlet",
    "exponential",
    "fold_in",
    "gamma",
    "gumbel",
    "key",
    "key_data",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "multivariate_normal",
    "normal",
    "permutation",
    "poisson",
    "randint",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
]
