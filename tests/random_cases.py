"""The sampler calls of ``tests/fixtures/random_jax.npz``, written against JAX's
``random`` API so that the same table drives the recording (with JAX) and the tests
(with ``functrace.random``). Each case is ``fn(random, key, fdt, idt) -> array``:
``fdt``/``idt`` are the float and int dtypes of the run, always passed explicitly.

``EXACT`` cases must match bit for bit; the others go through ``erf_inv``, ``log``,
``log1p``, ``exp``, ``pow``, ``sqrt`` or a Cholesky factor, whose last bit can differ
between XLA's and NumPy's implementations (see ``ULPS``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SEEDS = (0, 1, 42)
# seeds for key derivation only (x64 semantics: 64-bit seeds, negative ones bit-cast)
KEY_SEEDS = (0, 1, 42, 2**31 - 1, 2**32 + 3, 2**40 + 5, -1, -(2**35))


def _mat(fdt: Any) -> np.ndarray:
    return np.arange(12, dtype=fdt).reshape(3, 4)


def _complex(fdt: Any) -> Any:
    return np.complex128 if np.dtype(fdt) == np.float64 else np.complex64


def _cov(fdt: Any) -> np.ndarray:
    return np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], fdt)


CASES: dict[str, Any] = {
    "split": lambda r, k, f, i: r.split(k, 3),
    "split_shape": lambda r, k, f, i: r.split(k, (2, 2)),
    "fold_in": lambda r, k, f, i: r.fold_in(k, 7),
    "fold_in_big": lambda r, k, f, i: r.fold_in(k, 2**31 + 5),
    "bits_u32": lambda r, k, f, i: r.bits(k, (5,), np.uint32),
    "bits_u8": lambda r, k, f, i: r.bits(k, (5,), np.uint8),
    "bits_u16": lambda r, k, f, i: r.bits(k, (2, 3), np.uint16),
    "bits_scalar": lambda r, k, f, i: r.bits(k, (), np.uint32),
    "uniform": lambda r, k, f, i: r.uniform(k, (7,), f),
    "uniform_bounds": lambda r, k, f, i: r.uniform(
        k, (2, 3), f, np.array([-2.0, 0.0, 1.0], f), 3.0
    ),
    "normal": lambda r, k, f, i: r.normal(k, (7,), f),
    "normal_2d": lambda r, k, f, i: r.normal(k, (2, 3), f),
    "truncated_normal": lambda r, k, f, i: r.truncated_normal(k, -1.5, 2.0, (7,), f),
    "bernoulli": lambda r, k, f, i: r.bernoulli(k, np.array(0.3, f), (7,)),
    "categorical": lambda r, k, f, i: r.categorical(
        k, np.log(np.array([0.1, 0.2, 0.7], f)), shape=(6,)
    ),
    "categorical_axis0": lambda r, k, f, i: r.categorical(k, np.log(_mat(f) + 1), axis=0),
    "categorical_noreplace": lambda r, k, f, i: r.categorical(
        k, np.log(np.array([0.1, 0.2, 0.3, 0.4], f)), shape=(3,), replace=False
    ),
    "randint": lambda r, k, f, i: r.randint(k, (7,), -5, 17, i),
    "randint_bounds": lambda r, k, f, i: r.randint(k, (3,), np.array([0, 10, -3]), 100, i),
    "choice_int": lambda r, k, f, i: r.choice(k, 10, (4,)),
    "choice_noreplace": lambda r, k, f, i: r.choice(k, _mat(f), (2,), replace=False, axis=1),
    "choice_p": lambda r, k, f, i: r.choice(k, 4, (5,), p=np.array([0.1, 0.2, 0.3, 0.4], f)),
    "choice_p_noreplace": lambda r, k, f, i: r.choice(
        k, 4, (3,), replace=False, p=np.array([0.1, 0.2, 0.3, 0.4], f)
    ),
    "permutation_int": lambda r, k, f, i: r.permutation(k, 10),
    "permutation_axis1": lambda r, k, f, i: r.permutation(k, _mat(f), axis=1),
    "permutation_independent": lambda r, k, f, i: r.permutation(
        k, _mat(f), axis=1, independent=True
    ),
    "gamma": lambda r, k, f, i: r.gamma(k, np.array([0.5, 1.0, 2.5, 7.0], f), dtype=f),
    "beta": lambda r, k, f, i: r.beta(k, 2.0, 0.5, (4,), f),
    "dirichlet": lambda r, k, f, i: r.dirichlet(k, np.array([0.5, 1.0, 2.0], f), (2,), f),
    "exponential": lambda r, k, f, i: r.exponential(k, (7,), f),
    "laplace": lambda r, k, f, i: r.laplace(k, (7,), f),
    "logistic": lambda r, k, f, i: r.logistic(k, (7,), f),
    "gumbel": lambda r, k, f, i: r.gumbel(k, (7,), f),
    "gumbel_high": lambda r, k, f, i: r.gumbel(k, (7,), f, mode="high"),
    "multivariate_normal": lambda r, k, f, i: r.multivariate_normal(
        k, np.array([1.0, -1.0, 0.5], f), _cov(f), (2,), f
    ),
    "poisson": lambda r, k, f, i: r.poisson(k, np.array([0.5, 3.0, 12.0, 40.0]), (4,), i),
    # the rest of jax.random (parameters in the run's float dtype: JAX refuses a float64
    # parameter for a float32 sample)
    "normal_complex": lambda r, k, f, i: r.normal(k, (3,), _complex(f)),
    "t": lambda r, k, f, i: r.t(k, np.array([1.5, 3.0, 10.0], f), (2, 3), f),
    "chisquare": lambda r, k, f, i: r.chisquare(k, np.array([0.5, 2.0, 7.0], f), dtype=f),
    "f": lambda r, k, f, i: r.f(k, np.array([2.0, 5.0, 9.0], f), 3.0, dtype=f),
    "cauchy": lambda r, k, f, i: r.cauchy(k, (7,), f),
    "lognormal": lambda r, k, f, i: r.lognormal(k, np.array([0.5, 1.0, 2.0], f), dtype=f),
    "lognormal_default_sigma": lambda r, k, f, i: r.lognormal(k, shape=(4,), dtype=f),
    "maxwell": lambda r, k, f, i: r.maxwell(k, (5,), f),
    "double_sided_maxwell": lambda r, k, f, i: r.double_sided_maxwell(
        k, np.array([0.0, 1.0, -1.0], f), 2.0, (2,), f
    ),
    # an empty shape draws shape s + s for parameters of shape s (JAX's rule)
    "double_sided_maxwell_noshape": lambda r, k, f, i: r.double_sided_maxwell(
        k, np.array([0.0, 1.0], f), 1.5, dtype=f
    ),
    "weibull_min": lambda r, k, f, i: r.weibull_min(k, np.array([1.0, 2.0], f), 1.5, (3, 2), f),
    # shape () (the default): one uniform draw broadcast against the parameters
    "weibull_min_one_draw": lambda r, k, f, i: r.weibull_min(
        k, 2.0, np.array([0.5, 1.0, 3.0], f), dtype=f
    ),
    "pareto": lambda r, k, f, i: r.pareto(k, np.array([0.5, 1.0, 3.0], f), (2, 3), f),
    "rayleigh": lambda r, k, f, i: r.rayleigh(k, np.array([0.5, 2.0], f), (3, 2), f),
    "wald": lambda r, k, f, i: r.wald(k, np.array([0.5, 1.0, 4.0], f), (2, 3), f),
    "triangular": lambda r, k, f, i: r.triangular(
        k, np.array([-1.0, 0.0], f), np.array([0.0, 0.5], f), 2.0, (3, 2), f
    ),
    "rademacher": lambda r, k, f, i: r.rademacher(k, (8,), i),
    "geometric": lambda r, k, f, i: r.geometric(k, np.array([0.1, 0.5, 0.9], f), (2, 3), i),
    "generalized_normal": lambda r, k, f, i: r.generalized_normal(k, 1.5, (5,), f),
    "ball": lambda r, k, f, i: r.ball(k, 3, 1.5, (2,), f),
    "ball_l2": lambda r, k, f, i: r.ball(k, 4, dtype=f),
    "orthogonal": lambda r, k, f, i: r.orthogonal(k, 3, (2,), f),
    "orthogonal_wide": lambda r, k, f, i: r.orthogonal(k, 2, dtype=f, m=4),
    # n * min(p, 1 - p) <= 10 (inversion) for the first two, BTRS rejection for the others
    "binomial": lambda r, k, f, i: r.binomial(
        k, np.array([5.0, 20.0, 100.0, 1000.0], f), np.array([0.3, 0.6, 0.2, 0.9], f), dtype=f
    ),
    "binomial_shape": lambda r, k, f, i: r.binomial(k, 30.0, np.array([0.05, 0.5], f), (3, 2), f),
    "multinomial": lambda r, k, f, i: r.multinomial(
        k, 20.0, np.array([0.125, 0.25, 0.5, 0.125], f), dtype=f
    ),
    "multinomial_batch": lambda r, k, f, i: r.multinomial(
        k,
        np.array([10.0, 200.0], f),
        np.array([[0.25, 0.25, 0.5], [0.5, 0.375, 0.125]], f),
        dtype=f,
    ),
    # NaN, negative, infinite, zero and non-integer counts; p of 0, 1 and NaN
    "binomial_special": lambda r, k, f, i: r.binomial(
        k,
        np.array([3.0, -1.0, np.nan, np.inf, 5.0, 0.0, 7.5, 40.0, 1e6], f),
        np.array([0.5, 0.5, 0.5, 0.5, np.nan, 0.3, 0.5, 1.0, 0.0], f),
        dtype=f,
    ),
    "multinomial_zero_p": lambda r, k, f, i: r.multinomial(
        k, 10.0, np.array([0.0, 0.5, 0.0, 0.5], f), dtype=f
    ),
    # p = 0 never succeeds: the infinite count saturates (XLA's float-to-int conversion)
    "geometric_special": lambda r, k, f, i: r.geometric(
        k, np.array([0.0, 1.0, 1e-6, 0.999], f), dtype=i
    ),
    "clone": lambda r, k, f, i: r.clone(k),
}

# Cases compared bit for bit: integer, boolean and key outputs, integer-valued float
# counts (binomial, multinomial), and floats made only of exact operations (the
# mantissa trick). Not ``uniform_bounds``: with minval != 0, XLA
# contracts ``u * (maxval - minval) + minval`` into one fused multiply-add, NumPy
# rounds twice (a difference of one ulp of the bounds' scale).
EXACT = {
    "split",
    "split_shape",
    "fold_in",
    "fold_in_big",
    "bits_u32",
    "bits_u8",
    "bits_u16",
    "bits_scalar",
    "uniform",
    "bernoulli",
    "randint",
    "randint_bounds",
    "choice_int",
    "choice_noreplace",
    "choice_p",
    "permutation_int",
    "permutation_axis1",
    "permutation_independent",
    "categorical",
    "categorical_axis0",
    "categorical_noreplace",
    "choice_p_noreplace",
    "poisson",
    "rademacher",
    "geometric",
    "binomial",
    "binomial_shape",
    "multinomial",
    "multinomial_batch",
    "binomial_special",
    "multinomial_zero_p",
    "geometric_special",
    "clone",
}

# The other float cases: |functrace - JAX| <= ULPS * eps(dtype) * max(1, max|JAX|).
# Measured at most 6.5 (beta: XLA's log/exp/log1p are a few ulps from libm's; the
# rest stay under 2.3).
ULPS = 8
# Cases with more rounding: ``wald``'s root cancels against the mean (measured 7.5),
# ``orthogonal`` goes through a QR factorization (LAPACK's and XLA's differ in
# blocking; measured 9).
CASE_ULPS = {"wald": 16, "orthogonal": 32, "orthogonal_wide": 32}

# Cases whose JAX samples depend on the x64 flag beyond their dtype arguments, so that
# functrace (x64 semantics) matches the x64 runs only: ``choice(key, int)`` draws its
# indices in the default int dtype, and ``rademacher`` (used by ``generalized_normal``,
# ``ball`` and ``double_sided_maxwell``) compares a uniform of the default float dtype
# with 1/2, whatever its own dtype.
X64_ONLY = {
    "choice_int",
    "rademacher",
    "generalized_normal",
    "ball",
    "ball_l2",
    "double_sided_maxwell",
    "double_sided_maxwell_noshape",
}

# The runs: (fixture prefix, float dtype, int dtype). "x64" was recorded with
# jax_enable_x64 on, "x32" with JAX's default mode.
RUNS = (
    ("x64-f64", np.float64, np.int64),
    ("x64-f32", np.float32, np.int32),
    ("x32-f32", np.float32, np.int32),
)

# Calls without dtype arguments, recorded in x64 mode only: functrace's defaults
# (float64, int64, uint64) are JAX's x64 ones.
DEFAULTS: dict[str, Any] = {
    "normal": lambda r, k: r.normal(k, (3,)),
    "uniform": lambda r, k: r.uniform(k, (3,)),
    "bits": lambda r, k: r.bits(k, (3,)),
    "randint": lambda r, k: r.randint(k, (3,), 0, 100),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.5, (5,)),
    "poisson": lambda r, k: r.poisson(k, 2.0, (3,)),
    "rademacher": lambda r, k: r.rademacher(k, (5,)),
    "geometric": lambda r, k: r.geometric(k, 0.3, (3,)),
    "binomial": lambda r, k: r.binomial(k, 12, 0.4, (3,)),
    "lognormal": lambda r, k: r.lognormal(k, shape=(3,)),
    "t": lambda r, k: r.t(k, 4.0, (3,)),
    "cauchy": lambda r, k: r.cauchy(k, (3,)),
    "orthogonal": lambda r, k: r.orthogonal(k, 2),
}

# Gradients with respect to the float parameters (float64, x64 mode): for the gamma
# family JAX's implicit reparameterisation gradient of the gamma CDF, for the others
# the derivative of the transform. ``fn(random, grad, key)``.
GRAD_ALPHAS = np.array([0.3, 0.5, 1.0, 2.5, 7.0, 40.0])
GRAD_DF = np.array([0.7, 1.5, 3.0, 10.0])
GRADS: dict[str, Any] = {
    "gamma": lambda r, grad, k: grad(lambda a: r.gamma(k, a).sum())(GRAD_ALPHAS),
    "beta": lambda r, grad, k: grad(lambda a: r.beta(k, a, 2.0 * a).sum())(GRAD_ALPHAS[:4]),
    "dirichlet": lambda r, grad, k: grad(lambda a: (r.dirichlet(k, a) ** 2).sum())(GRAD_ALPHAS[:3]),
    # the samplers built on gamma, normal, uniform and exponential draws, in their float
    # parameters (the gamma-based ones through the same implicit rule)
    "t": lambda r, grad, k: grad(lambda a: r.t(k, a).sum())(GRAD_DF),
    "chisquare": lambda r, grad, k: grad(lambda a: r.chisquare(k, a).sum())(GRAD_DF),
    "f": lambda r, grad, k: grad(lambda a: r.f(k, a, 2.0 * a + 1.0).sum())(GRAD_DF),
    "lognormal": lambda r, grad, k: grad(lambda s: r.lognormal(k, s).sum())(GRAD_DF / 4),
    "pareto": lambda r, grad, k: grad(lambda b: r.pareto(k, b).sum())(GRAD_DF),
    "rayleigh": lambda r, grad, k: grad(lambda s: (r.rayleigh(k, s) ** 2).sum())(GRAD_DF),
    "wald": lambda r, grad, k: grad(lambda m: r.wald(k, m).sum())(GRAD_DF),
    "weibull_min": lambda r, grad, k: grad(lambda c: r.weibull_min(k, 1.0 + c, c, (4,)).sum())(
        GRAD_DF
    ),
    "double_sided_maxwell": lambda r, grad, k: grad(
        lambda s: (r.double_sided_maxwell(k, s, s * s, (2,)) ** 3).sum()
    )(GRAD_DF),
    "triangular": lambda r, grad, k: grad(lambda a: r.triangular(k, -a, 0.3 * a, 1.0 + a).sum())(
        GRAD_DF
    ),
    "generalized_normal": lambda r, grad, k: grad(
        lambda p: (r.generalized_normal(k, p, (4,)) ** 2).sum()
    )(1.5),
    "ball": lambda r, grad, k: grad(lambda p: (r.ball(k, 3, p, (2,)) ** 2).sum())(1.5),
}
