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
}

# Cases compared bit for bit: integer, boolean and key outputs, and floats made only of
# exact operations (the mantissa trick). Not ``uniform_bounds``: with minval != 0, XLA
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
}

# The other float cases: |functrace - JAX| <= ULPS * eps(dtype) * max(1, max|JAX|).
# Measured at most 6.5 (beta: XLA's log/exp/log1p are a few ulps from libm's; the
# rest stay under 2.3).
ULPS = 8

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
}

# Gradients with respect to the shape parameters (float64, x64 mode): JAX's implicit
# reparameterisation gradient of the gamma CDF. ``fn(random, grad, key)``.
GRAD_ALPHAS = np.array([0.3, 0.5, 1.0, 2.5, 7.0, 40.0])
GRADS: dict[str, Any] = {
    "gamma": lambda r, grad, k: grad(lambda a: r.gamma(k, a).sum())(GRAD_ALPHAS),
    "beta": lambda r, grad, k: grad(lambda a: r.beta(k, a, 2.0 * a).sum())(GRAD_ALPHAS[:4]),
    "dirichlet": lambda r, grad, k: grad(lambda a: (r.dirichlet(k, a) ** 2).sum())(GRAD_ALPHAS[:3]),
}
