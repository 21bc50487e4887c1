"""``functrace.scipy.spatial.transform`` (``Rotation``, ``Slerp``) against JAX's numbers
(recorded from ``rotation_cases.py``), SciPy's where the conventions agree, finite
differences and the transforms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SciPyRotation
from scipy.spatial.transform import Slerp as SciPySlerp

import functrace as ft
import functrace.numpy as fnp
import functrace.random as fr
from functrace.api import _eager_cache as ec
from functrace.scipy.spatial.transform import Rotation, Slerp
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from rotation_cases import (
    EULER,
    MATRICES,
    QUATS,
    ROTVECS,
    SLERP_ROTVECS,
    SLERP_TIMES,
    WEIGHTS,
    cases,
)

_rng = np.random.default_rng(3)
RQ = _rng.standard_normal((6, 4))  # generic rotations: no gimbal lock, no angle near pi
RV = _rng.uniform(-1.5, 1.5, (6, 3))
V = _rng.standard_normal((6, 3))


def _close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_values_and_gradients_match_jax():
    def tol(key, value):
        return 1e-6 if value.dtype == np.float32 else 1e-12

    assert_matches_recorded(cases(ft), "rotation_jax.npz", tol)


# ---------------------------------------------------------------------------
# SciPy, where its conventions are JAX's
# ---------------------------------------------------------------------------


def test_conversions_match_scipy():
    ours, theirs = Rotation.from_quat(RQ), SciPyRotation.from_quat(RQ)
    _close(ours.as_quat(), theirs.as_quat())
    _close(ours.as_quat(canonical=True), theirs.as_quat(canonical=True))
    _close(ours.as_quat(scalar_first=True), theirs.as_quat(scalar_first=True))
    _close(ours.as_matrix(), theirs.as_matrix())
    _close(ours.as_rotvec(), theirs.as_rotvec())
    _close(ours.as_rotvec(degrees=True), theirs.as_rotvec(degrees=True))
    _close(ours.as_mrp(), theirs.as_mrp())
    _close(ours.magnitude(), theirs.magnitude())
    _close(ours.inv().as_quat(), theirs.inv().as_quat())
    for seq in ("xyz", "zyx", "zxz", "yxy", "XYZ", "ZYX", "ZXZ", "YXY"):
        _close(ours.as_euler(seq), theirs.as_euler(seq))
        _close(ours.as_euler(seq, degrees=True), theirs.as_euler(seq, degrees=True), 1e-10)


def test_constructors_match_scipy():
    for seq in ("xyz", "ZYX", "zxz", "XZX"):
        _close(
            Rotation.from_euler(seq, EULER).as_quat(),
            SciPyRotation.from_euler(seq, EULER).as_quat(),
        )
        deg = np.rad2deg(EULER)
        _close(
            Rotation.from_euler(seq, deg, degrees=True).as_matrix(),
            SciPyRotation.from_euler(seq, deg, degrees=True).as_matrix(),
        )
    _close(Rotation.from_rotvec(ROTVECS).as_quat(), SciPyRotation.from_rotvec(ROTVECS).as_quat())
    _close(Rotation.from_mrp(RV).as_quat(), SciPyRotation.from_mrp(RV).as_quat())
    _close(
        Rotation.from_quat(RQ, scalar_first=True).as_quat(),
        SciPyRotation.from_quat(RQ, scalar_first=True).as_quat(),
    )
    orthogonal = MATRICES[:8]  # SciPy orthogonalises others first
    _close(
        Rotation.from_matrix(orthogonal).as_quat(canonical=True),
        SciPyRotation.from_matrix(orthogonal).as_quat(canonical=True),
    )


def test_operations_match_scipy():
    a, b = Rotation.from_quat(RQ), Rotation.from_rotvec(RV)
    sa, sb = SciPyRotation.from_quat(RQ), SciPyRotation.from_rotvec(RV)
    _close((a * b).as_quat(), (sa * sb).as_quat())
    _close((a[2] * b).as_quat(), (sa[2] * sb).as_quat())
    _close(a.apply(V), sa.apply(V))
    _close(a.apply(V, inverse=True), sa.apply(V, inverse=True))
    _close(a[0].apply(V), sa[0].apply(V))
    _close(a.apply(V[1]), sa.apply(V[1]))
    _close(b.mean().as_matrix(), sb.mean().as_matrix())
    _close(
        b.mean(WEIGHTS[:5].tolist() + [0.5]).as_matrix(),
        sb.mean(WEIGHTS[:5].tolist() + [0.5]).as_matrix(),
    )
    keys = Rotation.from_rotvec(SLERP_ROTVECS)
    at = np.array([0.0, 0.3, 1.0, 2.2, 3.0, 4.4, 4.5])
    ours = Slerp.init(SLERP_TIMES, keys)(at)
    theirs = SciPySlerp(SLERP_TIMES, SciPyRotation.from_rotvec(SLERP_ROTVECS))(at)
    _close(ours.as_matrix(), theirs.as_matrix())
    assert Slerp(SLERP_TIMES, keys)(2.0).single  # SciPy's form of the constructor
    _close(Slerp(SLERP_TIMES, keys)(at).as_quat(), ours.as_quat())


# ---------------------------------------------------------------------------
# Derivatives
# ---------------------------------------------------------------------------


def _pipeline(rv, e, q, v):
    r = Rotation.from_rotvec(rv) * Rotation.from_euler("ZXY", e) * Rotation.from_quat(q)
    moved = r.inv().apply(v) + r.apply(v, inverse=False) * 0.5
    return (
        moved,
        r.as_rotvec(),
        r.as_euler("xzy"),
        r.as_mrp(),
        r.magnitude(),
        Rotation.from_matrix(r.as_matrix()).as_quat(canonical=True),
    )


def test_second_order_gradients_through_a_rotation_pipeline():
    args = (RV[:3] * 0.5, EULER[:3] * 0.3, RQ[:3], V[:3])
    check_grads(_pipeline, args, order=2, modes=("fwd", "rev"))


def test_second_order_gradients_of_slerp_and_mean():
    def slerp(t, rv):
        return Slerp.init(SLERP_TIMES, Rotation.from_rotvec(rv))(t).as_quat()

    times = np.array([0.4, 1.3, 2.6, 4.0])  # away from the key times
    check_grads(slerp, (times, SLERP_ROTVECS + 0.1), order=2, modes=("fwd", "rev"))

    def mean(rv, w):
        return Rotation.from_rotvec(rv).mean(w).as_matrix()

    check_grads(mean, (RV[:4] * 0.4, WEIGHTS[:4]), order=2, modes=("fwd", "rev"))


def test_rotation_vector_maps_are_smooth_at_the_identity():
    zero = np.zeros(3)
    jac = ft.jacfwd(lambda v: Rotation.from_rotvec(v).as_quat())(zero)
    _close(jac, np.vstack([0.5 * np.eye(3), np.zeros((1, 3))]))
    hess = ft.hessian(lambda v: Rotation.from_rotvec(v).as_quat()[3])(zero)
    _close(hess, -0.25 * np.eye(3))  # cos(|v| / 2) = 1 - |v|**2 / 8 + ...
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    jac = ft.jacrev(lambda q: Rotation.from_quat(q).as_rotvec())(ident)
    _close(jac, np.hstack([2 * np.eye(3), np.zeros((3, 1))]))
    check_grads(
        lambda v: Rotation.from_rotvec(v).apply(V[:2]), (zero,), order=2, modes=("fwd", "rev")
    )
    check_grads(lambda q: Rotation(q).as_rotvec(), (ident,), order=2, modes=("fwd", "rev"))
    check_grads(
        lambda v: Rotation.from_rotvec(v).as_rotvec(), (zero,), order=2, modes=("fwd", "rev")
    )


# ---------------------------------------------------------------------------
# Rotation and Slerp as pytrees under jit, vmap and grad
# ---------------------------------------------------------------------------


def test_jit_takes_and_returns_rotations():
    r = Rotation.from_quat(RQ)
    applied = ft.jit(lambda rot, v: rot.apply(v, inverse=True))(r, V)
    _close(applied, r.apply(V, inverse=True))
    made = ft.jit(lambda rv, e: Rotation.from_rotvec(rv) * Rotation.from_euler("xyz", e))(
        RV, EULER[:6]
    )
    assert isinstance(made, Rotation)
    _close(
        made.as_quat(), (Rotation.from_rotvec(RV) * Rotation.from_euler("xyz", EULER[:6])).as_quat()
    )
    euler = ft.jit(lambda rot: rot.as_euler("ZYZ"))(r)
    _close(euler, r.as_euler("ZYZ"))
    slerp = Slerp.init(SLERP_TIMES, Rotation.from_rotvec(SLERP_ROTVECS))
    at = np.array([0.2, 1.5, 4.4])
    _close(ft.jit(lambda s, t: s(t).as_quat())(slerp, at), slerp(at).as_quat())
    w = WEIGHTS[:5].tolist() + [1.0]
    _close(ft.jit(lambda q, w: Rotation(q).mean(w).as_matrix())(r.quat, w), r.mean(w).as_matrix())


def test_vmap_equals_a_python_loop():
    r = Rotation.from_quat(RQ)
    batched = ft.vmap(lambda rot, v: rot.apply(v))(r, V)
    _close(batched, np.stack([r[i].apply(V[i]) for i in range(6)]))
    made = ft.vmap(lambda rv: Rotation.from_rotvec(rv).inv())(RV)
    assert isinstance(made, Rotation) and made.quat.shape == (6, 4)
    _close(made.as_quat(), np.stack([Rotation.from_rotvec(v).inv().as_quat() for v in RV]))
    euler = ft.vmap(lambda q: Rotation.from_quat(q).as_euler("xyz"), in_axes=1)(RQ.T)
    _close(euler, np.stack([Rotation.from_quat(q).as_euler("xyz") for q in RQ]))
    slerp = Slerp.init(SLERP_TIMES, Rotation.from_rotvec(SLERP_ROTVECS))
    at = np.array([0.2, 1.5, 4.4])
    _close(ft.vmap(lambda t: slerp(t).as_quat())(at), np.stack([slerp(t).as_quat() for t in at]))
    # Rotations with a batch of vectors each: one vmap over the rotations
    many = ft.vmap(lambda rot: rot.apply(V))(r)
    _close(many, np.stack([r[i].apply(V) for i in range(6)]))


def test_grad_of_vmap_and_vmap_of_grad():
    def loss(rv, v):
        return fnp.sum(Rotation.from_rotvec(rv).apply(v) ** 2 * v)

    per_example = ft.vmap(ft.grad(loss))(RV, V)
    loop = np.stack([ft.grad(loss)(RV[i], V[i]) for i in range(6)])
    _close(per_example, loop)
    total = ft.grad(lambda rv: fnp.sum(ft.vmap(loss)(rv, V)))(RV)
    _close(total, loop)


def test_grad_with_respect_to_a_rotation():
    r = Rotation.from_quat(RQ)
    g = ft.grad(lambda rot: fnp.sum(rot.apply(V) * V[::-1]))(r)
    assert isinstance(g, Rotation) and g.quat.shape == (6, 4)
    direct = ft.grad(lambda q: fnp.sum(Rotation(q).apply(V) * V[::-1]))(r.quat)
    _close(g.quat, direct)
    slerp = Slerp.init(SLERP_TIMES, Rotation.from_rotvec(SLERP_ROTVECS))
    gs = ft.grad(lambda s: fnp.sum(s(np.array([0.5, 2.0])).as_rotvec()))(slerp)
    assert isinstance(gs, Slerp) and isinstance(gs.rotations, Rotation)
    assert np.all(np.isfinite(np.asarray(gs.rotvecs)))


# ---------------------------------------------------------------------------
# What JAX lacks, and the rest of the API
# ---------------------------------------------------------------------------


def test_random_rotations_are_normalised_normals():
    key = fr.PRNGKey(11)
    r = Rotation.random(key, 5)
    normals = np.asarray(fr.normal(key, (5, 4)))
    _close(r.quat, normals / np.linalg.norm(normals, axis=-1, keepdims=True))
    assert Rotation.random(key).single
    # uniform on SO(3): the mean matrix is 0 and the trace's mean is 0 (E[1 + 2 cos t] = 0)
    m = np.asarray(Rotation.random(fr.PRNGKey(0), 4000).as_matrix())
    assert np.abs(m.mean(axis=0)).max() < 0.05
    assert abs(np.trace(m, axis1=1, axis2=2).mean()) < 0.05
    r = ft.jit(lambda k: Rotation.random(k, 3))(key)
    _close(r.quat, Rotation.random(key, 3).quat)


def test_identity_concatenate_indexing_and_len():
    assert Rotation.identity().single
    _close(Rotation.identity(3).as_matrix(), np.broadcast_to(np.eye(3), (3, 3, 3)))
    assert Rotation.identity(dtype=np.float32).quat.dtype == np.float32
    r = Rotation.from_quat(RQ)
    both = Rotation.concatenate([r[0], r[1:4], r[5]])
    _close(both.as_quat(), r.as_quat()[[0, 1, 2, 3, 5]])
    assert len(both) == 5 and not both.single and len(r[2:3]) == 1
    assert repr(Rotation.identity()).startswith("Rotation(quat=")
    # leading axes beyond one batch axis, as JAX's vectorised functions allow
    grid = Rotation.from_rotvec(RV.reshape(2, 3, 3))
    assert grid.as_matrix().shape == (2, 3, 3, 3) and len(grid) == 2
    _close(grid.apply(V[:3]).reshape(6, 3), Rotation.from_rotvec(RV).apply(np.vstack([V[:3]] * 2)))


def test_zero_quaternion_converts_as_jax():
    # JAX's numbers (a Rotation holds its quaternion as given): no NaN from the series
    zero = Rotation(np.zeros((2, 4)))
    _close(zero.as_rotvec(), np.zeros((2, 3)))
    _close(zero.as_mrp(), np.zeros((2, 3)))
    _close(zero.magnitude(), np.zeros(2))
    _close(zero[0].as_euler("xyz"), [0.0, -np.pi / 2, 0.0])


def test_eager_slerp_derivatives_are_reused():
    # the interval lookup reads no index values, so an eager gradient's recording is
    # replayed on later calls (the op-table's eager-reuse check covers the bits)
    slerp = Slerp.init(SLERP_TIMES, Rotation.from_rotvec(SLERP_ROTVECS))

    def loss(t):
        return fnp.sum(slerp(t).as_rotvec())

    ec.clear_eager_cache()
    grads = [ft.grad(loss)(np.array([0.3, 2.5, 4.0])) for _ in range(3)]
    assert ec.eager_trace_count(loss) == 2  # recorded, verified, then replayed
    _close(grads[2], grads[0])


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_bad_arguments_are_clear_errors():
    r = Rotation.from_quat(RQ)
    with pytest.raises(
        ValueError, match=r"Rotation.from_quat: expected quaternions of shape \(4,\)"
    ):
        Rotation.from_quat(np.ones(3))
    with pytest.raises(ValueError, match="got shape \\(2, 5\\)"):
        Rotation.from_quat(np.ones((2, 5)))
    with pytest.raises(TypeError, match="Rotation.from_quat: expected real numbers"):
        Rotation.from_quat(np.ones(4) * 1j)
    with pytest.raises(ValueError, match="Rotation.from_matrix: expected rotation matrices"):
        Rotation.from_matrix(np.ones((3, 4)))
    with pytest.raises(ValueError, match="Rotation.from_rotvec: expected rotation vectors"):
        Rotation.from_rotvec(np.ones((2, 4)))
    with pytest.raises(ValueError, match="Rotation.from_mrp: expected Modified Rodrigues"):
        Rotation.from_mrp(np.ones(2))
    with pytest.raises(ValueError, match="from_euler: expected an axis sequence of 1 to 3"):
        Rotation.from_euler("xyzx", np.ones(4))
    with pytest.raises(ValueError, match="expected axes all from 'xyz'"):
        Rotation.from_euler("xYz", np.ones(3))
    with pytest.raises(ValueError, match="expected axes all from 'xyz'"):
        Rotation.from_euler("abc", np.ones(3))
    with pytest.raises(ValueError, match="expected consecutive axes to differ, got 'xxy'"):
        Rotation.from_euler("xxy", np.ones(3))
    with pytest.raises(ValueError, match=r"expected angles of shape \(3,\) or \(N, 3\)"):
        Rotation.from_euler("xyz", np.ones((4, 2)))
    with pytest.raises(ValueError, match="as_euler: expected an axis sequence of 3 characters"):
        r.as_euler("xy")
    with pytest.raises(ValueError, match="Rotation.apply: expected vectors of shape"):
        r.apply(np.ones((6, 2)))
    with pytest.raises(ValueError, match="Rotation.apply: expected numbers of rotations"):
        r.apply(np.ones((4, 3)))
    with pytest.raises(ValueError, match="Rotation.__mul__: expected numbers of rotations"):
        r * r[:4]
    with pytest.raises(TypeError, match="Rotation.__mul__: expected a Rotation on both sides"):
        r * np.ones(4)
    with pytest.raises(TypeError, match="a single rotation is not subscriptable"):
        r[0][0]
    with pytest.raises(TypeError, match="a single rotation has no len"):
        len(r[0])
    with pytest.raises(ValueError, match=r"Rotation.mean: expected weights of shape \(6,\)"):
        r.mean(np.ones(5))
    with pytest.raises(ValueError, match=r"Rotation.mean: expected N rotations"):
        r[0].mean()
    with pytest.raises(ValueError, match="Rotation.concatenate: expected at least one"):
        Rotation.concatenate([])
    with pytest.raises(TypeError, match="Rotation.concatenate: expected Rotation objects"):
        Rotation.concatenate([r, RQ])
    with pytest.raises(ValueError, match="Rotation.identity: expected num None or an int"):
        Rotation.identity(-1)
    with pytest.raises(ValueError, match="Rotation.as_matrix: expected quat of shape"):
        Rotation(np.ones(3)).as_matrix()
    with pytest.raises(TypeError, match="Slerp.init: expected rotations to be a Rotation"):
        Slerp.init(SLERP_TIMES, QUATS[:4])
    with pytest.raises(ValueError, match="Slerp.init: expected at least 2 rotations"):
        Slerp.init(SLERP_TIMES[:1], r[:1])
    with pytest.raises(ValueError, match="Slerp.init: expected at least 2 rotations"):
        Slerp.init(SLERP_TIMES[:1], r[0])
    with pytest.raises(ValueError, match=r"Slerp.init: .* got quat of shape \(2, 3\)"):
        Slerp.init(SLERP_TIMES[:2], Rotation(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"Slerp.init: expected times of shape \(6,\)"):
        Slerp.init(SLERP_TIMES, r)
    slerp = Slerp.init(SLERP_TIMES, r[:4])
    with pytest.raises(ValueError, match="Slerp.__call__: expected a number or a 1-d array"):
        slerp(np.ones((2, 2)))
    with pytest.raises(TypeError, match="expected an array of numbers, got a Rotation"):
        r.apply(r)


def test_float32_stays_float32_and_results_are_arrays():
    q = RQ.astype(np.float32)
    r = Rotation.from_quat(q)
    results = [
        r.as_quat(canonical=True, scalar_first=True),
        r.as_matrix(),
        r.as_rotvec(degrees=True),
        r.as_mrp(),
        r.as_euler("ZXZ", degrees=True),
        r.magnitude(),
        r.inv().quat,
        (r * r[0]).quat,
        r.apply(np.ones(3, np.float32), inverse=True),
        r.mean(np.ones(6, np.float32)).quat,
        Rotation.from_rotvec(q[:, :3], degrees=True).quat,
        Rotation.from_mrp(q[:, :3]).quat,
        Rotation.from_matrix(r.as_matrix()).quat,
        Rotation.from_euler("zyx", q[:, :3]).quat,
        Slerp.init(np.arange(6.0), r)(np.array([0.5, 4.5])).quat,
    ]
    for i, x in enumerate(results):
        assert type(x) is ft.Array and x.dtype == np.float32, (i, type(x), x.dtype)
