"""``jax.scipy.spatial.transform`` cases (``Rotation``, ``Slerp``), run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/rotation_jax.npz`` was recorded, ``functrace`` in tests/test_rotation.py.
Every constructor and conversion on batches and single rotations with edge cases (the
identity, rotations by pi, tiny angles, non-normalised and negative-w quaternions,
gimbal-lock Euler angles, each branch of ``from_matrix``), composition, ``apply`` with
and without ``inverse``, ``mean`` with weights, ``magnitude``, indexing, ``Slerp`` at key
times, between them and outside, float32, and gradients through ``from_rotvec(...).apply``,
``from_euler(...).as_matrix``, ``as_euler``, ``as_rotvec`` and ``Slerp``. Nothing here
imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(7)
S2 = np.sqrt(0.5)

# Quaternions (x, y, z, w): random ones (not normalised, some with w < 0), the identity,
# rotations by pi (w = 0), a tiny rotation, a scaled one, negative w.
QUATS = np.concatenate(
    [
        _rng.standard_normal((5, 4)),
        np.array(
            [
                [0.0, 0.0, 0.0, 1.0],
                [1.0, 0.0, 0.0, 0.0],
                [S2, S2, 0.0, 0.0],
                [0.0, -1.0, 0.0, 0.0],
                [2e-4, -1e-4, 3e-4, 1.0],
                [0.0, 0.0, 3.0, 4.0],
                [0.1, 0.2, -0.3, -0.9],
                [0.0, 0.0, 0.0, -2.0],
            ]
        ),
    ]
)
ROTVECS = np.concatenate(
    [
        _rng.uniform(-2.0, 2.0, (4, 3)),
        np.array(
            [
                [0.0, 0.0, 0.0],
                [1e-5, -2e-5, 3e-6],
                [4e-4, 5e-4, -3e-4],
                [0.0, 0.0, np.pi],
                [np.pi / np.sqrt(3), -np.pi / np.sqrt(3), np.pi / np.sqrt(3)],
                [4.0, 1.0, -0.5],
            ]
        ),
    ]
)
MRPS = np.concatenate(
    [
        _rng.uniform(-1.5, 1.5, (4, 3)),
        np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.3, -0.4, 0.0], [2.0, 1.0, 0.5]]),
    ]
)
EULER = np.concatenate(
    [
        _rng.uniform(-3.0, 3.0, (4, 3)),
        np.array(
            [
                [0.0, 0.0, 0.0],
                [0.3, 0.0, -0.2],
                [0.5, np.pi / 2, 0.1],
                [0.5, -np.pi / 2, 0.1],
                [1.0, np.pi, -0.4],
                [np.pi, 0.2, -np.pi],
            ]
        ),
    ]
)
EULER_DEG = np.rad2deg(EULER)
SEQS_3 = ("xyz", "zyx", "xzy", "zxz", "xyx", "yzy", "XYZ", "ZYX", "ZXZ", "XYX", "YXZ", "ZYZ")
VECTORS = _rng.standard_normal((13, 3))
WEIGHTS = _rng.uniform(0.1, 2.0, 5)
SLERP_TIMES = np.array([0.0, 1.0, 3.0, 4.5])
SLERP_ROTVECS = np.array([[0.0, 0.0, 0.0], [0.4, -0.2, 1.0], [0.4, -0.2, 1.0], [-1.5, 0.5, 2.0]])
SLERP_AT = np.array([0.0, 0.25, 1.0, 1.5, 2.9, 3.0, 4.2, 4.5, -0.5, 5.0])


def _matrix(axis_angle: tuple[np.ndarray, float]) -> np.ndarray:
    axis, angle = axis_angle
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


# Rotation matrices taking each branch of from_matrix (trace largest, then each diagonal
# entry), a random one, and one scaled by 1.01 (not orthogonal).
MATRICES = np.stack(
    [
        np.eye(3),
        _matrix(([1.0, 2.0, 3.0], 0.7)),
        _matrix(([1.0, 0.1, 0.0], 3.0)),
        _matrix(([0.1, 1.0, 0.2], 3.1)),
        _matrix(([0.0, 0.2, 1.0], 2.9)),
        _matrix(([1.0, 0.0, 0.0], np.pi)),
        _matrix(([0.0, 1.0, 1.0], np.pi)),
        _matrix(([-0.3, 0.5, 0.8], 1.9)),
        1.01 * _matrix(([0.4, 0.4, -0.1], 1.2)),
    ]
)


def cases(lib: Any) -> dict[str, np.ndarray]:
    R = lib.scipy.spatial.transform.Rotation
    Slerp = lib.scipy.spatial.transform.Slerp
    fnp = lib.numpy
    out: dict[str, Any] = {}

    rq = R.from_quat(QUATS)
    out["from_quat"] = rq.as_quat()
    out["from_quat/canonical"] = rq.as_quat(canonical=True)
    out["from_quat/scalar_first"] = rq.as_quat(scalar_first=True)
    out["from_quat/single"] = R.from_quat(QUATS[6]).as_quat()
    out["from_quat/float32"] = R.from_quat(QUATS.astype(np.float32)).as_quat()
    out["as_matrix"] = rq.as_matrix()
    out["as_matrix/single"] = R.from_quat(QUATS[0]).as_matrix()
    out["as_rotvec"] = rq.as_rotvec()
    out["as_rotvec/degrees"] = rq.as_rotvec(degrees=True)
    out["as_mrp"] = rq.as_mrp()
    out["magnitude"] = rq.magnitude()
    out["magnitude/single"] = R.from_quat(QUATS[7]).magnitude()
    out["inv"] = rq.inv().as_quat()
    for seq in SEQS_3:
        out[f"as_euler/{seq}"] = rq.as_euler(seq)
    out["as_euler/xyz/degrees"] = rq.as_euler("xyz", degrees=True)
    out["as_euler/ZXZ/single"] = R.from_quat(QUATS[1]).as_euler("ZXZ")

    rv = R.from_rotvec(ROTVECS)
    out["from_rotvec"] = rv.as_quat()
    out["from_rotvec/degrees"] = R.from_rotvec(np.rad2deg(ROTVECS), degrees=True).as_quat()
    out["from_rotvec/single"] = R.from_rotvec(ROTVECS[2]).as_quat()
    out["from_rotvec/as_rotvec"] = rv.as_rotvec()
    out["from_rotvec/as_matrix"] = rv.as_matrix()
    out["from_rotvec/float32"] = R.from_rotvec(ROTVECS.astype(np.float32)).as_quat()
    out["from_mrp"] = R.from_mrp(MRPS).as_quat()
    out["from_mrp/as_mrp"] = R.from_mrp(MRPS).as_mrp()
    out["from_matrix"] = R.from_matrix(MATRICES).as_quat()
    out["from_matrix/single"] = R.from_matrix(MATRICES[3]).as_quat()
    out["from_matrix/as_rotvec"] = R.from_matrix(MATRICES[:8]).as_rotvec()

    for seq in ("xyz", "ZYX", "zxz", "XZX", "yxz", "YXY"):
        r = R.from_euler(seq, EULER)
        out[f"from_euler/{seq}"] = r.as_quat()
        out[f"from_euler/{seq}/as_euler"] = r.as_euler(seq)  # gimbal locks among them
        out[f"from_euler/{seq}/degrees"] = R.from_euler(seq, EULER_DEG, degrees=True).as_quat()
    out["from_euler/z/scalar"] = R.from_euler("z", 0.7).as_quat()
    out["from_euler/Y/column"] = R.from_euler("Y", EULER[:, :1]).as_quat()
    out["from_euler/xy"] = R.from_euler("xy", EULER[:, :2]).as_quat()
    out["from_euler/ZX/single"] = R.from_euler("ZX", np.array([0.3, -1.2])).as_quat()
    out["from_euler/xyz/float32"] = R.from_euler("xyz", EULER.astype(np.float32)).as_quat()

    a, b = R.from_quat(QUATS[:6]), R.from_rotvec(ROTVECS[:6])
    out["mul"] = (a * b).as_quat()
    out["mul/batch_single"] = (a * b[0]).as_quat()
    out["mul/single_batch"] = (a[1] * b).as_quat()
    out["mul/single"] = (a[2] * b[3]).as_quat()
    out["apply"] = rq.apply(VECTORS)
    out["apply/inverse"] = rq.apply(VECTORS, inverse=True)
    out["apply/single_rotation"] = rq[0].apply(VECTORS)
    out["apply/single_vector"] = rq.apply(VECTORS[0], inverse=True)
    out["apply/single"] = rq[4].apply(VECTORS[2])

    five = R.from_rotvec(np.concatenate([ROTVECS[:4], [[0.1, 0.2, 0.3]]]))
    out["mean"] = five.mean().as_matrix()
    out["mean/weights"] = five.mean(WEIGHTS).as_matrix()
    out["mean/weights/quat"] = five.mean(WEIGHTS).as_quat(canonical=True)
    out["identity"] = R.identity().as_quat()
    out["concatenate"] = R.concatenate([rq[:3], rv[2:4], rq[5:6]]).as_quat()
    out["getitem/slice"] = rq[2:5].as_quat()
    out["getitem/int"] = rq[3].as_quat()
    out["getitem/array"] = rq[np.array([4, 0, 4])].as_quat()
    out["len"] = np.asarray(len(rq))
    out["single"] = np.asarray([rq.single, rq[0].single])

    slerp = Slerp.init(SLERP_TIMES, R.from_rotvec(SLERP_ROTVECS))
    out["slerp/quat"] = slerp(SLERP_AT).as_quat()
    out["slerp/matrix"] = slerp(SLERP_AT).as_matrix()
    out["slerp/single"] = slerp(2.0).as_quat()
    out["slerp/rotvecs"] = slerp.rotvecs
    out["slerp/timedelta"] = slerp.timedelta

    def loss_rotvec(v: Any) -> Any:
        return fnp.sum(fnp.sin(R.from_rotvec(v).apply(VECTORS[:5])))

    def loss_euler(e: Any) -> Any:
        return fnp.sum(R.from_euler("xyz", e).as_matrix() * MATRICES[1])

    def loss_euler_deg(e: Any) -> Any:
        return fnp.sum(R.from_euler("ZXZ", e, degrees=True).as_matrix() * MATRICES[7])

    def loss_as_euler(q: Any) -> Any:
        return fnp.sum(fnp.cos(R.from_quat(q).as_euler("yxz")))

    def loss_as_rotvec(q: Any) -> Any:
        return fnp.sum(R.from_quat(q).as_rotvec() * VECTORS[:5])

    def loss_slerp(t: Any) -> Any:
        return fnp.sum(Slerp.init(SLERP_TIMES, R.from_rotvec(SLERP_ROTVECS))(t).as_rotvec())

    out["grad/from_rotvec_apply"] = lib.grad(loss_rotvec)(ROTVECS[[0, 1, 5, 6, 7]])
    out["grad/from_euler_as_matrix"] = lib.grad(loss_euler)(EULER[:4])
    out["grad/from_euler_degrees"] = lib.grad(loss_euler_deg)(EULER_DEG[:4])
    out["grad/as_euler"] = lib.grad(loss_as_euler)(QUATS[:5])
    out["grad/as_rotvec"] = lib.grad(loss_as_rotvec)(QUATS[:5])
    out["grad/slerp_times"] = lib.grad(loss_slerp)(np.array([0.3, 1.7, 2.2, 3.9]))
    return {k: np.asarray(v) for k, v in out.items()}
