"""``functrace.scipy.cluster.vq.vq`` against ``jax.scipy.cluster.vq.vq`` (values
recorded from JAX 0.10.2 with x64 on), a brute-force loop and the transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy.cluster.vq import vq
from functrace.test_util import check_grads

_rng = np.random.default_rng(3)
OBS = _rng.standard_normal((6, 3))
CB = _rng.standard_normal((4, 3))
CB[3] = CB[1]  # a tie: the first code wins


def test_codes_and_distances_match_jax():
    code, dist = vq(OBS, CB)
    assert np.asarray(code).tolist() == [0, 0, 0, 1, 0, 0]  # JAX's (3 never, 1 first)
    np.testing.assert_allclose(np.asarray(dist), [2.622677236337, 1.564832118706,
                               3.10791863113, 1.812074696718, 1.708687840469,
                               1.533774315848], rtol=1e-11)  # fmt: skip
    code1, dist1 = vq(OBS[:, 0], CB[:, 0])  # 1-d: length-1 vectors
    assert np.asarray(code1).tolist() == [1, 2, 2, 1, 2, 2]
    np.testing.assert_allclose(np.asarray(dist1), [0.495098270172, 0.38493063153,
                               1.83714715455, 1.777178665432, 0.098448443554,
                               0.207962002637], rtol=1e-11)  # fmt: skip
    assert vq(OBS.astype(np.float32), CB.astype(np.float32))[1].dtype == np.float32
    code_i, dist_i = vq(np.array([[0, 0], [2, 2]]), np.array([[0, 1], [2, 1]]))
    assert np.asarray(code_i).tolist() == [0, 1] and np.asarray(dist_i).tolist() == [1.0, 1.0]


def test_against_a_loop_and_under_transforms():
    d = np.linalg.norm(OBS[:, None] - CB[None], axis=-1)
    np.testing.assert_array_equal(np.asarray(vq(OBS, CB)[0]), d.argmin(1))
    jitted = ft.jit(vq)(OBS, CB)
    np.testing.assert_array_equal(np.asarray(jitted[0]), d.argmin(1))
    np.testing.assert_allclose(np.asarray(jitted[1]), d.min(1), rtol=1e-14)
    batched = ft.vmap(vq, in_axes=(0, None))(OBS[None].repeat(2, 0), CB)
    np.testing.assert_array_equal(np.asarray(batched[0]), [d.argmin(1)] * 2)
    check_grads(lambda o, c: vq(o, c)[1], (OBS, CB[:3]), order=2, modes=("fwd", "rev"))
    g = ft.grad(lambda o: fnp.sum(vq(o, CB)[1] ** 2))(OBS)
    np.testing.assert_allclose(np.asarray(g), 2 * (OBS - CB[d.argmin(1)]), rtol=1e-12)


def test_bad_arguments_name_vq():
    with pytest.raises(ValueError, match="vq: expected obs and code_book of the same rank"):
        vq(OBS, CB[:, 0])
    with pytest.raises(ValueError, match="vq: expected observations and codes of one length"):
        vq(OBS, CB[:, :2])
    with pytest.raises(ValueError, match="vq: expected obs and code_book of rank 1 or 2"):
        vq(OBS[None], CB[None])
    with pytest.raises(TypeError, match="vq: expected a numeric obs"):
        vq(np.array(["a"]), CB)
