"""Typed PRNG key arrays (``random.key``) against JAX's values (recorded from
``typed_keys_cases.py``): shapes, key data, samplers, transforms and error classes; and
functrace's own messages for misuses."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax, random
from recorded import assert_matches_recorded
from typed_keys_cases import cases


def test_typed_keys_match_jax():
    # bits and integers exactly; float samples to rounding
    assert_matches_recorded(cases(ft), "typed_keys_jax.npz", lambda k, v: 1e-12)


def test_typed_and_raw_keys_give_the_same_samples_in_every_sampler():
    k = random.split(random.key(3))[1]
    raw = random.key_data(k)
    draws = {
        "uniform": lambda key: random.uniform(key, (2,)),
        "exponential": lambda key: random.exponential(key, (2,)),
        "laplace": lambda key: random.laplace(key, (2,)),
        "logistic": lambda key: random.logistic(key, (2,)),
        "gumbel": lambda key: random.gumbel(key, (2,)),
        "truncated_normal": lambda key: random.truncated_normal(key, -1.0, 1.0, (2,)),
        "mvn": lambda key: random.multivariate_normal(key, np.zeros(2), np.eye(2)),
        "beta": lambda key: random.beta(key, 2.0, 3.0, (2,)),
        "dirichlet": lambda key: random.dirichlet(key, np.ones(3)),
        "loggamma": lambda key: random.loggamma(key, 2.0, (2,)),
        "t": lambda key: random.t(key, 3.0, (2,)),
        "chisquare": lambda key: random.chisquare(key, 3.0, (2,)),
        "f": lambda key: random.f(key, 3.0, 4.0, (2,)),
        "ball": lambda key: random.ball(key, 3),
        "gennorm": lambda key: random.generalized_normal(key, 1.5, (2,)),
        "binomial": lambda key: random.binomial(key, 5, 0.3, (2,)),
        "multinomial": lambda key: random.multinomial(key, 5, np.array([0.2, 0.8])),
        "choice": lambda key: random.choice(key, 5, (2,)),
        "poisson": lambda key: random.poisson(key, 3.0, (2,)),
        "rademacher": lambda key: random.rademacher(key, (2,)),
        "geometric": lambda key: random.geometric(key, 0.3, (2,)),
        "cauchy": lambda key: random.cauchy(key, (2,)),
        "dsmaxwell": lambda key: random.double_sided_maxwell(key, 0.0, 1.0, (2,)),
        "lognormal": lambda key: random.lognormal(key, 0.5, (2,)),
        "maxwell": lambda key: random.maxwell(key, (2,)),
        "orthogonal": lambda key: random.orthogonal(key, 2),
        "pareto": lambda key: random.pareto(key, 2.0, (2,)),
        "rayleigh": lambda key: random.rayleigh(key, 1.0, (2,)),
        "triangular": lambda key: random.triangular(key, 0.0, 0.5, 1.0, (2,)),
        "wald": lambda key: random.wald(key, 1.0, (2,)),
        "weibull_min": lambda key: random.weibull_min(key, 1.0, 2.0, (2,)),
    }
    for name, draw in draws.items():
        np.testing.assert_array_equal(draw(k), draw(raw), err_msg=name)


def test_transforms_carry_typed_keys():
    ks = random.split(random.key(1), 3)
    # jit: key arguments and results, one trace per key shape
    traces = []

    def f(key):
        return random.split(key[0] if key.ndim else key, 2)

    jf = ft.jit(lambda key: traces.append(key.shape) or f(key))
    for key in (ks, random.split(random.key(2), 3), random.key(5), ks[1:]):
        got = jf(key)
        assert type(got) is type(ks) and got.shape == (2,)
        np.testing.assert_array_equal(random.key_data(got), random.key_data(f(key)))
    assert traces == [(3,), (), (2,)]
    # vmap equals the loop, also in grad(vmap) and vmap(grad)
    loss = lambda w, key: fnp.sum(w * random.normal(key, (2,)))  # noqa: E731
    w = np.array([0.5, -1.0])
    loop = np.stack([ft.grad(loss)(w, key) for key in ks])
    np.testing.assert_array_equal(ft.vmap(ft.grad(loss), in_axes=(None, 0))(w, ks), loop)
    g = ft.grad(lambda w: fnp.sum(ft.vmap(loss, in_axes=(None, 0))(w, ks)))(w)
    np.testing.assert_allclose(g, loop.sum(0), rtol=1e-14)
    # select on keys under jit and eagerly agree; keys are leaves' data in pytrees
    c = np.array([True, False, True])
    want = random.key_data(lax.select(c, ks, ks[::-1]))
    got = ft.jit(lambda c, a, b: lax.select(c, a, b))(c, ks, ks[::-1])
    np.testing.assert_array_equal(random.key_data(got), want)
    assert ft.tree_util.tree_leaves(random.key(0))[0].shape == (2,)  # the data (JAX: the key)
    # tree_map over keys: a sample per key, keys first or second (JAX's keys are leaves)
    k1, k2 = random.split(random.key(3))
    params = {"a": np.zeros(2), "b": [np.ones(3)]}
    keys = {"a": k1, "b": [k2]}
    want = {"a": random.normal(k1, (2,)), "b": [1.0 + random.normal(k2, (3,))]}
    for got in (
        ft.tree.map(lambda p, k: p + random.normal(k, p.shape), params, keys),
        ft.tree.map(lambda k, p: p + random.normal(k, p.shape), keys, params),
    ):
        for a, b in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
            np.testing.assert_array_equal(a, b)
    new_keys = ft.tree.map(lambda k: random.split(k)[0], keys)  # keys map to keys
    assert type(new_keys["a"]) is type(k1) and new_keys["a"].shape == ()


def test_key_array_errors_name_what_to_use():
    k, ks = random.key(0), random.split(random.key(0), 4)
    with pytest.raises(TypeError, match=r"random.key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match=r"add: expected numeric arrays.*key<fry>"):
        ks + 1
    with pytest.raises(ValueError, match=r"random.normal: expected a single PRNG key.*vmap"):
        random.normal(ks)
    with pytest.raises(TypeError, match=r"random.normal: expected a single PRNG key.*vmap"):
        random.normal(random.key_data(ks))  # raw batches: the TypeError as before
    with pytest.raises(TypeError, match=r"equal: expected two key arrays.*uint32"):
        k == random.PRNGKey(0)  # noqa: B015
    with pytest.raises(ValueError, match=r"concatenate: expected key arrays only"):
        fnp.concatenate([ks, random.split(random.PRNGKey(0))])
    with pytest.raises(ValueError, match=r"hstack: expected key arrays only.*uint32"):
        fnp.hstack([ks, random.key_data(ks)])
    with pytest.raises(ValueError, match=r"full_like: expected key arrays only.*int"):
        fnp.full_like(ks, 3)
    with pytest.raises(TypeError, match=r"random.wrap_key_data: expected uint32 key data"):
        random.wrap_key_data(k)
    with pytest.raises(TypeError, match=r"random.PRNGKey: expected a scalar integer seed"):
        random.key(k)
    with pytest.raises(TypeError, match=r"grad: .*PRNG key.*argnums"):
        ft.grad(lambda x, key: x, argnums=1)(1.0, k)
    with pytest.raises(ValueError, match=r"vmap: expected in_axes in \[-1, 1\).*key array"):
        ft.vmap(lambda key: key, in_axes=1)(ks)
    with pytest.raises(TypeError, match=r"dropout: expected key as a single PRNG key"):
        ft.nn.dropout(np.ones(3), 0.5, key=ks)
    with pytest.raises(IndexError, match=r"at most 1 indices"):
        ks[0, 0]
    with pytest.raises(TypeError, match=r"select: expected two key arrays or none"):
        lax.select(True, k, random.PRNGKey(0))
    same = ft.nn.dropout(np.ones(4), 0.5, key=random.key_data(k))
    np.testing.assert_array_equal(ft.nn.dropout(np.ones(4), 0.5, key=k), same)


def test_dynamic_slices_and_select_n_move_whole_keys():
    # JAX's lax.dynamic_slice/dynamic_update_slice (and their in_dim forms) and select_n
    # take key arrays; here they once refused them as non-arrays
    ks, new = random.split(random.key(7), 4), random.split(random.key(9), 2)
    d, dn = np.asarray(random.key_data(ks)), np.asarray(random.key_data(new))

    def data(k):
        return np.asarray(random.key_data(k))

    np.testing.assert_array_equal(data(lax.dynamic_slice(ks, (2,), (2,))), d[2:])
    np.testing.assert_array_equal(data(lax.dynamic_slice(ks, (-1,), (2,))), d[2:])  # clamped
    want = d.copy()
    want[1:3] = dn
    np.testing.assert_array_equal(data(lax.dynamic_update_slice(ks, new, (1,))), want)
    np.testing.assert_array_equal(data(lax.dynamic_slice_in_dim(ks, 1, 2)), d[1:3])
    np.testing.assert_array_equal(data(lax.dynamic_index_in_dim(ks, 3, keepdims=False)), d[3])
    want = d.copy()
    want[0] = dn[1]
    np.testing.assert_array_equal(data(lax.dynamic_update_index_in_dim(ks, new[1], 0, 0)), want)
    which = np.array([1, 0, 1, 0], dtype=np.int32)
    np.testing.assert_array_equal(
        data(lax.select_n(which, ks, ks[::-1])), np.where(which[:, None] == 1, d[::-1], d)
    )
    # traced starts under jit and per-example starts under vmap; a key buffer in a loop
    got = ft.jit(lambda k, i: lax.dynamic_slice(k, (i,), (2,)))(ks, 1)
    np.testing.assert_array_equal(data(got), d[1:3])
    got = ft.vmap(lambda i: lax.dynamic_slice(ks, (i,), (2,)))(np.array([0, 2, 3]))
    np.testing.assert_array_equal(data(got), np.stack([d[0:2], d[2:4], d[2:4]]))
    got = ft.vmap(lambda c, a, b: lax.select_n(c, a, b))(which.astype(bool), ks, ks[::-1])
    np.testing.assert_array_equal(data(got), np.where(which[:, None] == 1, d[::-1], d))

    def body(i, buf):
        return lax.dynamic_update_slice(buf, random.fold_in(buf[i], i)[None], (i,))

    got = ft.jit(lambda k: lax.fori_loop(0, 4, body, k))(ks)
    want = np.stack([data(random.fold_in(ks[i], i)) for i in range(4)])
    np.testing.assert_array_equal(data(got), want)
    with pytest.raises(TypeError, match=r"select_n: expected cases that are all key arrays"):
        lax.select_n(True, ks, d)
    with pytest.raises(TypeError, match=r"dynamic_update_slice: expected an operand and an"):
        lax.dynamic_update_slice(ks, d[:1], (0,))
    with pytest.raises(TypeError, match=r"select_n: expected a selector of shape \(\) or"):
        lax.select_n(np.ones(3, bool), ks, ks)


def test_key_arrays_update_whole_keys_with_at():
    ks = random.split(random.key(0), 3)
    k = random.key(7)
    want = np.array(random.key_data(ks))
    want[1] = random.key_data(k)
    np.testing.assert_array_equal(random.key_data(ks.at[1].set(k)), want)
    got = ft.jit(lambda ks, k, i: ks.at[i].set(k))(ks, k, 1)
    np.testing.assert_array_equal(random.key_data(got), want)
    np.testing.assert_array_equal(random.key_data(ks.at[2].get()), random.key_data(ks[2]))
    with pytest.raises(TypeError, match="keys have no arithmetic"):
        ks.at[0].add(k)
    with pytest.raises(TypeError, match="expected keys"):
        ks.at[0].set(random.key_data(k))
