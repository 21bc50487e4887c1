"""The rest of jax.random: argument errors, parameter broadcasting and gradients of the
samplers added after the first set (their samples are checked against JAX's recorded
ones in ``test_random.py``, through ``random_cases.py``)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
import functrace.random as random
import random_cases as rc

pytestmark = pytest.mark.usefixtures("private_jit_cache")

REF = dict(np.load(os.path.join(os.path.dirname(__file__), "fixtures", "random_jax.npz")))
KEY = random.PRNGKey(0)
F32, F64 = np.float32, np.float64

NEW_SAMPLERS = {
    "t": lambda k, **kw: random.t(k, 3.0, (2,), **kw),
    "chisquare": lambda k, **kw: random.chisquare(k, 3.0, (2,), **kw),
    "f": lambda k, **kw: random.f(k, 3.0, 4.0, (2,), **kw),
    "cauchy": lambda k, **kw: random.cauchy(k, (2,), **kw),
    "lognormal": lambda k, **kw: random.lognormal(k, 0.5, (2,), **kw),
    "pareto": lambda k, **kw: random.pareto(k, 2.0, (2,), **kw),
    "rayleigh": lambda k, **kw: random.rayleigh(k, 2.0, (2,), **kw),
    "wald": lambda k, **kw: random.wald(k, 2.0, (2,), **kw),
    "maxwell": lambda k, **kw: random.maxwell(k, (2,), **kw),
    "triangular": lambda k, **kw: random.triangular(k, 0.0, 0.5, 1.0, (2,), **kw),
    "generalized_normal": lambda k, **kw: random.generalized_normal(k, 1.5, (2,), **kw),
    "ball": lambda k, **kw: random.ball(k, 3, 2, (2,), **kw),
    "orthogonal": lambda k, **kw: random.orthogonal(k, 2, (2,), **kw),
    "geometric": lambda k, **kw: random.geometric(k, 0.5, (2,), **kw),
    "rademacher": lambda k, **kw: random.rademacher(k, (2,), **kw),
}


# ---------------------------------------------------------------------------
# Argument errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NEW_SAMPLERS))
def test_bad_key_and_sharding_errors_name_the_sampler(name: str) -> None:
    fn = NEW_SAMPLERS[name]
    with pytest.raises(TypeError, match=rf"random\.{name}: expected a single PRNG key"):
        fn(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"vmap"):
        fn(random.split(KEY, 3))
    with pytest.raises(ValueError, match=rf"random\.{name}: expected out_sharding=None"):
        fn(KEY, out_sharding="x")
    assert np.shape(fn(KEY, out_sharding=None))[:1] == (2,)


@pytest.mark.parametrize(
    "call",
    [
        lambda: random.t(KEY, 3.0, dtype=np.int32),
        lambda: random.cauchy(KEY, dtype=np.int64),
        lambda: random.weibull_min(KEY, 1.0, 1.0, dtype=np.int32),
        lambda: random.binomial(KEY, 3, 0.5, dtype=np.int32),
        lambda: random.multinomial(KEY, 3, np.ones(2) / 2, dtype=np.int32),
        lambda: random.geometric(KEY, 0.5, dtype=np.float32),
        lambda: random.rademacher(KEY, dtype=np.complex64),
        lambda: random.maxwell(KEY, dtype=np.complex128),
    ],
)
def test_wrong_dtype_kind_is_a_type_error(call) -> None:
    with pytest.raises(TypeError, match=r"random\.\w+: expected an? [\w -]*dtype, got"):
        call()


def test_float64_parameters_do_not_narrow_silently() -> None:
    # JAX refuses a float64 parameter for a float32 sample; Python scalars, float32 and
    # integer arrays are fine
    df64 = np.array([2.0, 3.0])
    for call in (
        lambda: random.t(KEY, df64, dtype=F32),
        lambda: random.chisquare(KEY, np.float64(2.0), dtype=F32),
        lambda: random.f(KEY, 2.0, df64, dtype=F32),
        lambda: random.lognormal(KEY, df64, dtype=F32),
        lambda: random.pareto(KEY, df64, dtype=F32),
        lambda: random.rayleigh(KEY, df64, dtype=F32),
        lambda: random.wald(KEY, df64, dtype=F32),
        lambda: random.triangular(KEY, 0.0, df64 - 2.0, 4.0, dtype=F32),
    ):
        with pytest.raises(TypeError, match=r"random\.\w+: expected parameters that convert"):
            call()
    assert random.t(KEY, 2.0, (2,), F32).dtype == F32
    assert random.t(KEY, np.array([2, 3]), dtype=F32).dtype == F32
    assert random.t(KEY, df64.astype(F32), dtype=F32).dtype == F32
    with pytest.raises(TypeError, match=r"random\.t: expected parameters"):
        random.t(KEY, np.array([1 + 2j]))


def test_shape_and_size_errors() -> None:
    with pytest.raises(ValueError, match=r"random\.t: expected parameter shapes"):
        random.t(KEY, np.ones(3), (2,))
    with pytest.raises(ValueError, match=r"random\.f: expected parameters of broadcast"):
        random.f(KEY, np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"random\.binomial: expected n and p"):
        random.binomial(KEY, np.ones(3), np.full(2, 0.5))
    with pytest.raises(ValueError, match=r"random\.geometric: expected parameter shapes"):
        random.geometric(KEY, np.full(3, 0.5), (2,))
    with pytest.raises(ValueError, match=r"random\.weibull_min: expected a shape and"):
        random.weibull_min(KEY, np.ones(3), 1.0, (2,))
    with pytest.raises(ValueError, match=r"random\.double_sided_maxwell: expected a shape"):
        random.double_sided_maxwell(KEY, np.ones(3), np.ones(2))
    with pytest.raises(TypeError, match=r"random\.orthogonal: expected n to be a concrete"):
        random.orthogonal(KEY, 2.5)
    with pytest.raises(ValueError, match=r"random\.orthogonal: expected a non-negative m"):
        random.orthogonal(KEY, 2, m=-1)
    with pytest.raises(TypeError, match=r"random\.ball: expected d to be a concrete"):
        random.ball(KEY, np.float64(3.0))
    with pytest.raises(ValueError, match=r"random\.ball: expected parameter shapes"):
        random.ball(KEY, 3, np.full(3, 2.0))
    with pytest.raises(ValueError, match=r"random\.cauchy: expected non-negative sizes"):
        random.cauchy(KEY, (-1,))
    with pytest.raises(TypeError, match=r"random\.maxwell: expected a shape"):
        random.maxwell(KEY, (2.5,))
    with pytest.raises(TypeError, match=r"random\.clone: expected PRNG keys"):
        random.clone(np.zeros(3, np.uint32))


def test_multinomial_argument_errors() -> None:
    p = np.array([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match=r"random\.multinomial: expected p with a category"):
        random.multinomial(KEY, 3, 0.5)
    with pytest.raises(ValueError, match=r"random\.multinomial: expected p of a shape"):
        random.multinomial(KEY, 3, p, shape=(2,))
    with pytest.raises(ValueError, match=r"random\.multinomial: expected p of a shape"):
        random.multinomial(KEY, np.array([3, 4, 5]), np.stack([p, p]))
    with pytest.raises(TypeError, match=r"random\.multinomial: expected real n and p"):
        random.multinomial(KEY, 3, p + 0j)
    with pytest.raises(TypeError, match=r"random\.multinomial: expected an int or bool"):
        random.multinomial(KEY, 3, p, unroll="all")
    with pytest.raises(TypeError, match=r"positional"):
        random.multinomial(KEY, 3, p, (3,))  # shape is keyword-only, as in JAX


# ---------------------------------------------------------------------------
# Shapes, dtypes and broadcasting
# ---------------------------------------------------------------------------


def test_parameters_broadcast_to_the_sample_shape() -> None:
    a, b = np.array([[2.0], [3.0], [4.0]]), np.array([5.0, 6.0])
    assert random.f(KEY, a, b).shape == (3, 2)
    assert random.f(KEY, a, b, (4, 3, 2)).shape == (4, 3, 2)
    assert random.triangular(KEY, -1.0, np.zeros((2, 1)), np.ones(3)).shape == (2, 3)
    assert random.binomial(KEY, np.array([[5], [10]]), np.array([0.2, 0.7, 0.5])).shape == (2, 3)
    assert random.geometric(KEY, np.array([0.2, 0.7])).shape == (2,)
    # a (3, 1) parameter against shape (3, 2): each row shares its parameter
    df = np.array([[1.0], [5.0], [50.0]])
    x = random.chisquare(KEY, df, (3, 2))
    full = random.chisquare(KEY, np.broadcast_to(df, (3, 2)))
    np.testing.assert_array_equal(x, full)
    # the sample does not depend on how the parameters were broadcast
    np.testing.assert_array_equal(
        random.wald(KEY, 2.0, (2, 3)), random.wald(KEY, np.full((2, 3), 2.0))
    )


def test_jax_shape_rules_of_weibull_double_maxwell_and_multinomial() -> None:
    # weibull_min: shape is the draw's shape, broadcast against the parameters
    one = random.weibull_min(KEY, np.array([1.0, 2.0, 3.0]), 1.5)
    assert one.shape == (3,)
    np.testing.assert_allclose(one / np.array([1.0, 2.0, 3.0]), one[0], rtol=1e-15)
    assert random.weibull_min(KEY, 1.0, np.ones(3), (2, 1)).shape == (2, 3)
    # double_sided_maxwell: shape + parameter shape, and s + s for an empty shape
    loc = np.zeros(3)
    assert random.double_sided_maxwell(KEY, loc, 1.0, (2,)).shape == (2, 3)
    assert random.double_sided_maxwell(KEY, loc, 1.0).shape == (3, 3)
    assert random.double_sided_maxwell(KEY, 0.0, 1.0).shape == ()
    # multinomial: shape is the whole result shape; n broadcasts over the batch
    p = np.array([0.2, 0.3, 0.5])
    x = random.multinomial(KEY, np.array([10, 20]), p, shape=(2, 3))
    assert x.shape == (2, 3) and x.dtype == F64
    np.testing.assert_array_equal(x.sum(-1), [10, 20])


def test_default_dtypes_are_x64() -> None:
    assert random.t(KEY, 3.0).dtype == F64
    assert random.lognormal(KEY).dtype == F64  # sigma's float32 default does not narrow
    assert random.binomial(KEY, 5, 0.5).dtype == F64
    assert random.multinomial(KEY, 5, np.array([0.5, 0.5], F32)).dtype == F64
    assert random.geometric(KEY, 0.5).dtype == np.int64
    assert random.rademacher(KEY).dtype == np.int64
    assert random.orthogonal(KEY, 2).dtype == F64
    assert random.weibull_min(KEY, 1.0, 2.0, dtype=F32).dtype == F32
    # parameters keep their own dtype in weibull_min and double_sided_maxwell (as JAX)
    assert random.weibull_min(KEY, np.ones(2), 2.0, dtype=F32).dtype == F64
    assert random.rademacher(KEY, (3,), np.float32).dtype == F32
    np.testing.assert_array_equal(np.abs(random.rademacher(KEY, (50,))), 1)


def test_counts_are_consistent() -> None:
    n = np.array([0.0, 3.0, 17.0, 400.0, 10**5])
    x = random.binomial(KEY, n, np.array([0.5, 0.1, 0.8, 0.5, 0.02]))
    assert ((x >= 0) & (x <= n)).all() and (x == np.round(x)).all()
    np.testing.assert_array_equal(random.binomial(KEY, n, 0.0), 0)
    np.testing.assert_array_equal(random.binomial(KEY, n, 1.0), n)
    p = np.array([0.1, 0.0, 0.6, 0.3])
    m = random.multinomial(KEY, 1000, p)
    assert m.sum() == 1000 and m[1] == 0
    # large samples follow the distribution (mean and variance)
    big = random.binomial(random.PRNGKey(5), 200, 0.3, (4000,))
    assert abs(big.mean() - 60) < 0.5 and abs(big.var() / 42 - 1) < 0.1
    g = random.geometric(random.PRNGKey(5), 0.25, (4000,))
    assert abs(g.mean() - 4) < 0.2 and g.min() >= 1


def test_orthogonal_shapes_and_orthonormality() -> None:
    q = random.orthogonal(KEY, 4, (2,))
    assert q.shape == (2, 4, 4)
    np.testing.assert_allclose(
        q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape), atol=1e-13
    )
    wide = random.orthogonal(KEY, 2, m=5)
    assert wide.shape == (2, 5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-13)
    tall = random.orthogonal(KEY, 5, m=2, dtype=np.complex64)
    assert tall.shape == (5, 2) and tall.dtype == np.complex64
    np.testing.assert_allclose(tall.conj().T @ tall, np.eye(2), atol=1e-5)
    assert random.orthogonal(KEY, 0, (3,)).shape == (3, 0, 0)


def test_ball_points_lie_in_the_ball() -> None:
    for p in (1, 1.5, 2, 4.0):
        x = random.ball(KEY, 3, p, (200,))
        norms = (np.abs(x) ** p).sum(-1) ** (1 / p)
        assert x.shape == (200, 3) and (norms <= 1 + 1e-12).all(), p
    assert random.ball(KEY, 0, 2, (2,)).shape == (2, 0)


def test_clone_is_the_identity() -> None:
    keys = random.split(KEY, 3)
    np.testing.assert_array_equal(random.clone(keys), keys)
    np.testing.assert_array_equal(ft.jit(random.clone)(KEY), KEY)
    np.testing.assert_array_equal(random.uniform(random.clone(KEY)), random.uniform(KEY))


# ---------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------


def test_transform_gradients_are_the_pathwise_derivatives() -> None:
    s = np.array([0.3, 1.2])
    z = random.normal(KEY, (2,))
    g = ft.grad(lambda s: random.lognormal(KEY, s).sum())(s)
    np.testing.assert_allclose(g, z * np.exp(z * s), rtol=1e-14)
    e = random.exponential(KEY, (2,))
    g = ft.grad(lambda b: random.pareto(KEY, b).sum())(s)
    np.testing.assert_allclose(g, -e / s**2 * np.exp(e / s), rtol=1e-14)
    u = random.uniform(KEY, (2,))
    g = ft.grad(lambda c: random.rayleigh(KEY, c).sum())(s)
    np.testing.assert_allclose(g, np.sqrt(-2 * np.log(u)), rtol=1e-14)
    ft.check_grads(
        lambda a, c, b: random.triangular(KEY, a, c, b, (3,)),
        (-1.0, 0.2, 2.0),
        order=2,
        modes=("fwd", "rev"),
    )
    ft.check_grads(lambda m: random.wald(KEY, m, (4,)), (np.array([0.7, 1.5, 3.0, 6.0]),), order=1)


def test_gamma_based_gradients_forward_reverse_jit_and_vmap() -> None:
    df = rc.GRAD_DF
    rev = ft.grad(lambda a: random.t(KEY, a).sum())(df)
    np.testing.assert_allclose(rev, REF["x64-grad/t/0"], rtol=1e-10)
    fwd = ft.jacfwd(lambda a: random.t(KEY, a))(df)
    np.testing.assert_allclose(np.diag(fwd), rev, rtol=1e-12)
    # per-key gradients under vmap equal the loop
    keys = random.split(KEY, 3)

    def chi(k, a):
        return random.chisquare(k, a).sum()

    batched = ft.vmap(ft.grad(chi, argnums=1), in_axes=(0, None))(keys, df)
    loop = np.stack([ft.grad(chi, argnums=1)(k, df) for k in keys])
    np.testing.assert_allclose(batched, loop, rtol=1e-12)
    # f in both degrees of freedom
    ga, gb = ft.grad(lambda a, b: random.f(KEY, a, b).sum(), argnums=(0, 1))(df, 2.0 * df + 1.0)
    np.testing.assert_allclose(ga + 2.0 * gb, REF["x64-grad/f/0"], rtol=1e-10)


def test_float32_gradients_stay_float32() -> None:
    # JAX (x64 on, dtype float32) gives 2.6622946 and 0.56755906
    g = ft.grad(lambda a: random.chisquare(KEY, a, (3,), F32).sum())(F32(2.5))
    assert g.dtype == F32
    np.testing.assert_allclose(g, 2.6622946, rtol=2e-6)
    g = ft.grad(lambda s: random.wald(KEY, s, (3,), F32).sum())(F32(1.5))
    assert g.dtype == F32
    np.testing.assert_allclose(g, 0.56755906, rtol=2e-6)


def test_discrete_samplers_pass_no_gradient_to_keys() -> None:
    with pytest.raises(TypeError, match="int|uint"):
        ft.grad(lambda k: fnp.sum(random.binomial(k, 5, 0.5, (2,))))(KEY)
    # binomial counts are piecewise constant in p: zero gradient, like JAX's floor
    g = ft.grad(lambda p: random.binomial(KEY, 20.0, p, (3,)).sum())(0.3)
    assert g == 0.0
