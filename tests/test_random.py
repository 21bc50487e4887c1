"""functrace.random against JAX's recorded outputs, eagerly, under jit and under vmap.

The fixture ``fixtures/random_jax.npz`` holds jax.random's outputs (JAX 0.10.2) for the
calls of ``random_cases.py`` at three seeds, with x64 on (float64 and float32 runs)
and off (float32). Keys, bits, integers and booleans must match exactly; floats too
where only exact operations are involved (``random_cases.EXACT``), the others within
``random_cases.ULPS`` eps of their scale (XLA's erf_inv/log/log1p/exp differ from
NumPy's and libm's in the last bits).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
import functrace.random as random
import random_cases as rc
from functrace import lax

pytestmark = pytest.mark.usefixtures("private_jit_cache")

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "random_jax.npz")
REF = dict(np.load(FIXTURE))

# Cases whose x32 bits differ by design (functrace has x64 semantics): see
# random_cases.X64_ONLY.
X64_ONLY = rc.X64_ONLY


def _case(name: str) -> str:
    # "jit x64-f64/normal/0" -> "normal"; "vmap gamma/1" -> "gamma"; "normal" -> "normal"
    parts = name.split()[-1].split("/")
    return parts[-2] if len(parts) >= 2 else parts[0]


def _assert_matches(name: str, got, expected, dtype, check_dtype: bool) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    if check_dtype:
        assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    case = _case(name)
    if case in rc.EXACT or expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, expected, err_msg=name)
    else:
        scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
        eps = np.finfo(expected.dtype).eps  # complex: the eps of its real parts
        tol = rc.CASE_ULPS.get(case, rc.ULPS) * eps * scale
        np.testing.assert_allclose(got, expected, rtol=0, atol=tol, err_msg=name)


def _runs():
    return [pytest.param(prefix, f, i, id=prefix) for prefix, f, i in rc.RUNS]


@pytest.mark.parametrize("prefix,fdt,idt", _runs())
def test_item1_every_sampler_matches_jax_eagerly(prefix, fdt, idt) -> None:
    for seed in rc.SEEDS:
        key = random.PRNGKey(seed)
        for name, fn in rc.CASES.items():
            if prefix.startswith("x32") and name in X64_ONLY:
                continue
            expected = REF[f"{prefix}/{name}/{seed}"]
            _assert_matches(
                f"{prefix}/{name}/{seed}",
                fn(random, key, fdt, idt),
                expected,
                fdt,
                check_dtype=prefix.startswith("x64"),
            )


def test_item1_keys_from_seeds_match_jax() -> None:
    for s in rc.KEY_SEEDS:
        np.testing.assert_array_equal(random.PRNGKey(s), REF[f"x64/PRNGKey/{s}"], err_msg=str(s))
        np.testing.assert_array_equal(
            random.key_data(random.key(s)), REF[f"x64/key_data/{s}"], err_msg=str(s)
        )
        assert random.PRNGKey(s).dtype == np.uint32 and random.PRNGKey(s).shape == (2,)
    # Non-negative 32-bit seeds give the same key in both JAX modes; 32-bit NumPy seeds
    # are zero-extended (x32's -1 is int32 -1).
    for s in (0, 1, 42, 2**31 - 1):
        np.testing.assert_array_equal(random.PRNGKey(s), REF[f"x32/PRNGKey/{s}"])
    np.testing.assert_array_equal(random.PRNGKey(np.int32(-1)), REF["x32/PRNGKey/-1"])
    # traced seeds (jit and vmap) derive the same words
    seeds = np.array([0, 1, 42, 2**40 + 5, -1], np.int64)
    expected = np.stack([REF[f"x64/PRNGKey/{s}"] for s in (0, 1, 42, 2**40 + 5, -1)])
    np.testing.assert_array_equal(ft.vmap(random.PRNGKey)(seeds), expected)
    np.testing.assert_array_equal(ft.jit(random.PRNGKey)(np.int64(-1)), REF["x64/PRNGKey/-1"])
    np.testing.assert_array_equal(ft.jit(random.PRNGKey)(np.int32(-1)), REF["x32/PRNGKey/-1"])


def test_item1_defaults_are_jax_x64_defaults() -> None:
    # float64 / int64 / uint64 by default, the bits of JAX with jax_enable_x64 on
    for seed in rc.SEEDS:
        key = random.PRNGKey(seed)
        for name, fn in rc.DEFAULTS.items():
            expected = REF[f"x64-default/{name}/{seed}"]
            _assert_matches(name, fn(random, key), expected, np.float64, check_dtype=True)
    assert random.normal(random.PRNGKey(0), (2,)).dtype == np.float64


# One jitted program holds several samplers (one trace for all of them); fewer in
# float32, whose kernels are compiled separately (compile time dominates this file).
JIT_CASES = {
    "x64-f64": (
        "split",
        "fold_in",
        "bits_u8",
        "uniform_bounds",
        "normal_2d",
        "randint",
        "permutation_axis1",
        "categorical",
        "truncated_normal",
        "binomial_special",
        "multinomial",
        "geometric",
        "wald",
        "clone",
    ),
    "x64-f32": ("bits_scalar", "normal", "randint", "exponential"),
}


@pytest.mark.parametrize("prefix,fdt,idt", [p for p in _runs() if p.id in JIT_CASES])
def test_item1_samplers_under_jit_match_jax(prefix, fdt, idt) -> None:
    cases = JIT_CASES[prefix]
    f = ft.jit(lambda k: tuple(rc.CASES[n](random, k, fdt, idt) for n in cases))
    for seed in rc.SEEDS:
        outs = f(random.PRNGKey(seed))
        for name, got in zip(cases, outs):
            expected = REF[f"{prefix}/{name}/{seed}"]
            _assert_matches(f"jit {prefix}/{name}/{seed}", got, expected, fdt, check_dtype=True)
    assert f.trace_count == 1
    text = f.lower(random.PRNGKey(0)).as_text()
    assert "threefry2x32 kernel" in text  # the cipher is compiled, not a NumPy call


VMAP_CASES = (
    "split",
    "fold_in",
    "bits_u16",
    "uniform",
    "normal",
    "randint",
    "choice_p",
    "permutation_independent",
    "categorical_noreplace",
    "gamma",
    "beta",
    "poisson",
    "t",
    "binomial",
    "multinomial_batch",
    "geometric",
    "lognormal",
    "generalized_normal",
    "orthogonal",
)


def test_item1_samplers_under_vmap_over_keys_match_jax() -> None:
    keys = np.stack([random.PRNGKey(s) for s in rc.SEEDS])
    for name in VMAP_CASES:
        fn = rc.CASES[name]
        got = ft.vmap(lambda k, fn=fn: fn(random, k, np.float64, np.int64))(keys)
        for j, seed in enumerate(rc.SEEDS):
            expected = REF[f"x64-f64/{name}/{seed}"]
            _assert_matches(f"vmap {name}/{seed}", got[j], expected, np.float64, True)


def test_item1_vmap_of_split_keys_equals_the_loop() -> None:
    for seed in rc.SEEDS:
        keys = random.split(random.PRNGKey(seed), 4)
        got = ft.vmap(lambda k: random.normal(k, (3,)))(keys)
        loop = np.stack([random.normal(k, (3,)) for k in keys])
        np.testing.assert_array_equal(got, loop)
        _assert_matches("vmap normal", got, REF[f"x64-vmap/normal/{seed}"], np.float64, True)
        jv = ft.jit(ft.vmap(lambda k: random.normal(k, (3,))))(keys)
        np.testing.assert_array_equal(jv, got)


def test_item1_sampling_inside_a_compiled_loop_is_native() -> None:
    from functrace.jit import loops

    def walk(key):
        def body(i, x):
            return x + random.normal(random.fold_in(key, i), (2,))

        return ft.lax.fori_loop(0, 5, body, fnp.zeros(2))

    key = random.PRNGKey(3)
    before = loops.native_loops_built
    got = ft.jit(walk)(key)
    np.testing.assert_allclose(got, walk(key), rtol=1e-13, atol=1e-13)
    assert loops.native_loops_built == before + 1


def test_item1_gradients_flow_through_reparameterised_samplers() -> None:
    key = random.PRNGKey(0)

    def loss(mu, sigma, lo, hi):
        z = mu + sigma * random.normal(key, (5,))
        u = random.uniform(key, (5,), minval=lo, maxval=hi)
        t = random.truncated_normal(key, lo, hi, (5,))
        e = sigma * random.exponential(key, (5,)) + sigma * random.gumbel(key, (5,))
        return fnp.sum(z * z) + fnp.sum(u**2) + fnp.sum(t**3) + fnp.sum(e)

    args = (0.3, 1.2, -0.7, 1.1)
    ft.check_grads(loss, args, order=1, modes=("fwd", "rev"))
    g = ft.grad(lambda m, s: fnp.sum(m + s * random.normal(key, (3,))), argnums=(0, 1))(1.0, 2.0)
    np.testing.assert_allclose(g[0], 3.0)
    np.testing.assert_allclose(g[1], np.sum(random.normal(key, (3,))))

    mean = np.array([1.0, -1.0])
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    ft.check_grads(
        lambda m, c: fnp.sum(random.multivariate_normal(key, m, c @ c.T, (4,)) ** 2),
        (mean, np.linalg.cholesky(cov)),
        order=1,
    )
    # keys never carry tangents: jvp through a key-dependent program is fine, and the
    # key argument itself is integer-valued
    with pytest.raises(TypeError, match="int|uint"):
        ft.grad(lambda k: fnp.sum(random.normal(k, (2,))))(key)


def test_item1_gamma_beta_dirichlet_gradients_match_jax() -> None:
    # the implicit gradient of the gamma CDF in the shape parameter (JAX's rule); ours
    # differentiates the incomplete gamma function by jvp, JAX has its own series
    for seed in rc.SEEDS:
        key = random.PRNGKey(seed)
        for name, fn in rc.GRADS.items():
            got = fn(random, ft.grad, key)
            np.testing.assert_allclose(got, REF[f"x64-grad/{name}/{seed}"], rtol=1e-10)
    # forward mode agrees, and no tangent reaches the key
    a = rc.GRAD_ALPHAS[:3]
    key = random.PRNGKey(0)
    fwd = ft.jacfwd(lambda a: random.gamma(key, a))(a)
    np.testing.assert_allclose(np.diag(fwd), REF["x64-grad/gamma/0"][:3], rtol=1e-10)
    # second order: the sample moves along the inverse CDF at a fixed quantile
    import scipy.special

    x0 = random.gamma(key, np.full(2, 2.5))
    q0 = scipy.special.gammainc(2.5, x0)
    path = lambda a: scipy.special.gammaincinv(a, q0).sum()  # noqa: E731
    h = 1e-4
    d2 = (path(2.5 + h) - 2 * path(2.5) + path(2.5 - h)) / h**2
    f = lambda a: fnp.sum(random.gamma(key, a, (2,)))  # noqa: E731
    np.testing.assert_allclose(ft.grad(ft.grad(f))(2.5), d2, rtol=1e-3)


def test_item1_threefry_known_answers() -> None:
    # Random123's known-answer vectors for Threefry-2x32 with 20 rounds
    z = np.zeros(1, np.uint32)
    assert [int(y[0]) for y in ft.lax.threefry2x32(z, z, z, z)] == [0x6B200159, 0x99BA4EFE]
    k = np.array([0x13198A2E, 0x03707344], np.uint32)
    x = np.array([0x243F6A88, 0x85A308D3], np.uint32)
    out = ft.lax.threefry2x32(k[:1], k[1:], x[:1], x[1:])
    assert [int(y[0]) for y in out] == [0xC4923A9C, 0x483DF7A0]
    jitted = ft.jit(ft.lax.threefry2x32)(k[:1], k[1:], x[:1], x[1:])
    assert [int(y[0]) for y in jitted] == [0xC4923A9C, 0x483DF7A0]


def test_item1_bad_input_errors_name_the_function() -> None:
    key = random.PRNGKey(0)
    with pytest.raises(TypeError, match=r"random.normal: expected a single PRNG key"):
        random.normal(np.zeros(2, np.float32), (2,))
    with pytest.raises(TypeError, match=r"vmap"):
        random.normal(random.split(key, 3), (2,))
    with pytest.raises(TypeError, match=r"random.uniform: expected a floating-point dtype"):
        random.uniform(key, (2,), np.int32)
    with pytest.raises(TypeError, match=r"random.randint: expected an integer dtype"):
        random.randint(key, (2,), 0, 3, np.float64)
    with pytest.raises(ValueError, match=r"random.bits: expected an unsigned"):
        random.bits(key, (2,), np.int32)
    with pytest.raises(ValueError, match=r"random.normal: expected parameter|random.uniform"):
        random.uniform(key, (2,), minval=np.zeros(3))
    with pytest.raises(ValueError, match=r"random.choice: expected at most 3"):
        random.choice(key, 3, (5,), replace=False)
    with pytest.raises(TypeError, match=r"random.fold_in: expected a scalar integer"):
        random.fold_in(key, np.arange(2))
    with pytest.raises(OverflowError, match=r"random.PRNGKey"):
        random.PRNGKey(2**64)
    with pytest.raises(ValueError, match=r"random.gumbel: expected mode"):
        random.gumbel(key, (2,), mode="highest")
    with pytest.raises(TypeError, match=r"random.wrap_key_data"):
        random.wrap_key_data(np.zeros(3, np.uint32))


def test_item1_key_data_roundtrip_and_namespace() -> None:
    keys = random.split(random.PRNGKey(5), 3)
    wrapped = random.wrap_key_data(random.key_data(keys))  # typed keys, as JAX
    assert wrapped.shape == (3,) and str(wrapped.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(wrapped), keys)
    assert random.key_impl(keys) == "threefry2x32"
    assert ft.random is random


def test_item1_erf_inv_numpy_and_compiled_paths_agree_bitwise() -> None:
    # small arrays use the NumPy impl, large ones and jit a compiled loop: same bits
    from functrace.lax import random_bits as rb

    for dt in (np.float32, np.float64):
        u = random.uniform(random.PRNGKey(9), (rb._KERNEL_MIN_SIZE,), dt, -1.0, 1.0)
        u[:4] = [0.0, -1.0, 1.0, 0.999999]
        small = np.concatenate([ft.lax.erf_inv(u[i : i + 512]) for i in range(0, u.size, 512)])
        np.testing.assert_array_equal(ft.lax.erf_inv(u), small)
        np.testing.assert_array_equal(ft.jit(ft.lax.erf_inv)(u[:8]), small[:8])


def test_erf_inv_tails_and_nan_agree_in_numpy_and_compiled_paths() -> None:
    # |x| within float32's rounding of 1 started Newton's steps from 0 (erf_inv(1 - 1e-15)
    # was 1.88, not 5.68) and NaN gave 0 on the NumPy path.
    import scipy.special

    y = np.array([1 - 1e-15, -1 + 1e-12, np.nextafter(1.0, 0.0), 0.3, 1e-300, 0.99999999])
    np.testing.assert_allclose(lax.erf_inv(y), scipy.special.erfinv(y), rtol=4e-16)
    special = np.array([np.nan, 1.0, -1.0, 1.5])
    np.testing.assert_array_equal(lax.erf_inv(special), [np.nan, np.inf, -np.inf, np.nan])
    both = np.concatenate([y, special])
    big = np.tile(both, 500)  # large enough for the compiled loop
    np.testing.assert_array_equal(lax.erf_inv(big), np.tile(lax.erf_inv(both), 500))


def test_poisson_large_lam_has_poisson_moments() -> None:
    # The float32 log-Gamma of the rejection test overflowed for k + 1 beyond ~6e4, so
    # almost every candidate was accepted: variance / lam was 1.7 at lam = 1e5.
    for lam in (5e4, 1e5, 3e5, 1e7):
        x = np.asarray(random.poisson(random.PRNGKey(1), lam, (20000,)), np.float64)
        assert abs(x.mean() / lam - 1) < 1e-3, lam
        assert abs(x.var() / lam - 1) < 0.05, lam  # the ratio's standard error is ~0.01


def test_gamma_float32_gradient_stays_float32() -> None:
    # The incomplete gamma's series added the int64 loop counter to float32 values, which
    # promoted the loop carry to float64 and failed; JAX (float32 mode) gives 2.7869484.
    key = random.PRNGKey(0)

    def total(a):
        return random.gamma(key, a, (3,), dtype=np.float32).sum()

    g = ft.grad(total)(np.float32(2.0))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2.7869484, rtol=1e-6)
    np.testing.assert_allclose(ft.jit(ft.grad(total))(np.float32(2.0)), g, rtol=1e-6)
