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
  (those do not depend on the x64 flag). ``bits`` defaults to uint64, ``randint``,
  ``poisson``, ``geometric`` and ``rademacher`` to int64, and integer seeds are 64-bit
  (negative seeds as in x64 mode). Where JAX's samples depend on the flag beyond the
  dtype arguments they are x64's: ``rademacher`` (and ``generalized_normal``, ``ball``,
  ``double_sided_maxwell``, which use it) draws a float64 uniform whatever its dtype.
* **Typed and raw keys, as JAX.** ``key(seed)`` returns a typed key array (shape
  ``()``, dtype ``key<fry>``, for which ``dtypes.issubdtype(k.dtype, dtypes.prng_key)``
  holds); ``PRNGKey(seed)`` the raw ``uint32[2]`` array with the same words.
  ``split``, ``fold_in`` and ``clone`` return the kind they are given, with JAX's
  shapes (``split(key(0), 5).shape == (5,)``, ``(5, 2)`` for a raw key); ``key_data``
  gives the words (``uint32[*shape, 2]``; raw keys unchanged), ``wrap_key_data`` makes
  typed keys of words, and every sampler takes either kind with the same bits. A
  batch of typed keys where one key is expected is a ``ValueError`` (JAX's), of raw
  keys a ``TypeError``; both say to ``vmap``. Key arrays index and reshape over
  their key shape, pass through ``jit``, ``vmap`` (axes counted over the key shape),
  ``scan``, ``cond``, the loops and ``grad`` (never differentiated), and refuse
  arithmetic and ``np.asarray`` (``TypeError``s naming ``key_data``). One difference
  from JAX: a key array is a pytree node around its data, so ``tree_leaves(key(0))``
  is ``[key_data(key(0))]`` (JAX: ``[key]``) and ``tree_map`` hands its function raw
  keys (samples per key come out as in JAX; keys mapped to keys stay typed).
* Samplers are built from primitives, so they run under ``jit`` (the cipher compiles
  to one native loop), ``vmap`` and ``grad``; reparameterised samplers pass gradients
  to their parameters (``uniform``'s bounds, ``truncated_normal``'s bounds,
  ``multivariate_normal``'s mean and covariance, and the closed-form transforms
  ``lognormal``, ``pareto``, ``rayleigh``, ``wald``, ``weibull_min``,
  ``double_sided_maxwell``, ``triangular``), and ``gamma``/``beta``/``dirichlet`` and
  the samplers built on gamma (``t``, ``chisquare``, ``f``, ``generalized_normal``,
  ``ball``) differentiate in their parameters by JAX's implicit rule (the derivative of
  the gamma CDF at the sample).
* JAX's argument rules are kept, quirks included, so that the same calls give the
  same samples: a float64 parameter for a float32 sample is an error (as JAX's
  promotion check), ``weibull_min``'s ``shape`` is the shape of its uniform draws,
  ``double_sided_maxwell`` draws ``shape + s`` (``s + s`` for an empty ``shape``), and
  ``multinomial``'s ``shape`` includes the category axis. ``out_sharding`` is accepted
  as ``None`` only: functrace has no shardings.

>>> import functrace.random as random
>>> key = random.PRNGKey(0)
>>> random.bits(key, (2,), dtype="uint32")
array([4070199207, 4202968722], dtype=uint32)
"""

from functrace.random._binomial import binomial, multinomial
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
from functrace.random._discrete import (
    bernoulli,
    categorical,
    choice,
    geometric,
    permutation,
    poisson,
    rademacher,
    randint,
)
from functrace.random._gamma import beta, dirichlet, gamma, loggamma
from functrace.random._gamma_derived import ball, chisquare, f, generalized_normal, t
from functrace.random._keys import (
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from functrace.random._transforms import (
    cauchy,
    double_sided_maxwell,
    lognormal,
    maxwell,
    orthogonal,
    pareto,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)

__all__ = [
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]
