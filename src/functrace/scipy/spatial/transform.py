"""functrace.scipy.spatial.transform: ``Rotation`` and ``Slerp``, traceable (as
``jax.scipy.spatial.transform``).

A ``Rotation`` holds unit quaternions ``(x, y, z, w)`` (scalar last) in an array of shape
``(4,)`` (one rotation) or ``(..., 4)``; it is a pytree of that array, so it can be an
argument and a result of ``jit``, ``vmap`` and ``grad``. Every conversion is written on
the last axis with ``functrace.numpy``, so it batches over the leading axes, differentiates
and jits.

>>> import numpy as np
>>> r = Rotation.from_euler("z", 90, degrees=True)
>>> np.round(np.asarray(r.apply([1.0, 0.0, 0.0])), 12)
array([0., 1., 0.])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import random as frandom
from functrace.core import Tracer
from functrace.lax import indexing as li
from functrace.scipy._util import floats
from functrace.tree_util import GetAttrKey, register_pytree_node

__all__ = ["Rotation", "Slerp"]

_AXES = {"x": 0, "y": 1, "z": 2}
_SMALL = 1e-3  # below this angle the rotation-vector maps use their Taylor series
_GIMBAL_EPS = 1e-7  # as_euler: a middle angle this close to 0 or pi is a gimbal lock


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape)


def _floats(fname: str, x: Any) -> Any:
    """``x`` as a floating-point array (integers become float64) or tracer."""
    if isinstance(x, Rotation | Slerp):
        raise TypeError(f"{fname}: expected an array of numbers, got a {type(x).__name__}.")
    (a,) = floats(fname, x, broadcast=False)
    return a if isinstance(a, Tracer) else fnp.asarray(a)


def _trailing(fname: str, x: Any, what: str, tail: tuple[int, ...]) -> Any:
    """``x`` as floats whose last axes are ``tail`` (a clear error otherwise)."""
    x = _floats(fname, x)
    shape = _shape(x)
    if len(shape) < len(tail) or shape[len(shape) - len(tail) :] != tail:
        want = ", ".join(map(str, tail))
        raise ValueError(
            f"{fname}: expected {what} of shape {tail} or (N, {want}), got shape {shape}."
        )
    return x


def _batch_shape(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"{fname}: expected numbers of rotations (and vectors) that broadcast, got "
            f"leading shapes {', '.join(map(str, shapes))}."
        ) from None


def _parse_seq(fname: str, seq: Any, lengths: tuple[int, ...]) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is extrinsic (lower case)."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        what = "3 characters" if lengths == (3,) else "1 to 3 characters"
        raise ValueError(f"{fname}: expected an axis sequence of {what}, got {seq!r}.")
    extrinsic = re.fullmatch("[xyz]+", seq) is not None
    if not (extrinsic or re.fullmatch("[XYZ]+", seq)):
        raise ValueError(
            f"{fname}: expected axes all from 'xyz' (extrinsic) or all from 'XYZ' "
            f"(intrinsic), got {seq!r}."
        )
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"{fname}: expected consecutive axes to differ, got {seq!r}.")
    return [_AXES[c] for c in seq.lower()], extrinsic


# ---------------------------------------------------------------------------
# Quaternion arithmetic on the last axis (x, y, z, w)
# ---------------------------------------------------------------------------


def _parts(q: Any) -> tuple[Any, Any, Any, Any]:
    return q[..., 0], q[..., 1], q[..., 2], q[..., 3]


def _stack(parts: Sequence[Any]) -> Any:
    return fnp.stack(list(parts), axis=-1)


def _sq_norm(v: Any) -> Any:
    return fnp.sum(v * v, axis=-1)


def _normalize(q: Any) -> Any:
    return q / fnp.sqrt(_sq_norm(q))[..., None]


def _compose(p: Any, q: Any) -> Any:
    """The Hamilton product ``p q`` (rotate by ``q``, then by ``p``), not normalised."""
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    return _stack(
        [
            pw * qx + qw * px + (py * qz - pz * qy),
            pw * qy + qw * py + (pz * qx - px * qz),
            pw * qz + qw * pz + (px * qy - py * qx),
            pw * qw - px * qx - py * qy - pz * qz,
        ]
    )


def _conjugate(q: Any) -> Any:
    x, y, z, w = _parts(q)
    return _stack([-x, -y, -z, w])


def _canonical(q: Any) -> Any:
    """``q`` or ``-q``: the one with ``w > 0`` (or, where ``w == 0``, the first nonzero
    component positive)."""
    x, y, z, w = _parts(q)
    neg = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return fnp.where(neg[..., None], -q, q)


def _as_matrix(q: Any) -> Any:
    x, y, z, w = _parts(q)
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2],
    ]
    return fnp.stack([_stack(r) for r in rows], axis=-2)


def _from_matrix(m: Any) -> Any:
    """The quaternion of a rotation matrix: of the four formulas (one per diagonal entry,
    one for the trace), the one whose leading term is largest."""

    def e(i: int, j: int) -> Any:
        return m[..., i, j]

    trace = e(0, 0) + e(1, 1) + e(2, 2)
    choice = fnp.argmax(_stack([e(0, 0), e(1, 1), e(2, 2), trace]), axis=-1)[..., None]
    quat = _stack([e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1), 1 + trace])
    for i in (2, 1, 0):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts: list[Any] = [None] * 4
        parts[i] = 1 - trace + 2 * e(i, i)
        parts[j] = e(j, i) + e(i, j)
        parts[k] = e(k, i) + e(i, k)
        parts[3] = e(k, j) - e(j, k)
        quat = fnp.where(choice == i, _stack(parts), quat)
    return _normalize(quat)


def _from_rotvec(rotvec: Any) -> Any:
    """``(sin(t/2) v/t, cos(t/2))`` with ``t = |v|``; below ``t = 1e-3`` both parts are
    Taylor polynomials in ``t**2``, so every derivative is finite at ``v = 0``."""
    t2 = _sq_norm(rotvec)
    small = t2 <= _SMALL * _SMALL
    t = fnp.sqrt(fnp.where(small, 1.0, t2))  # 1 where unused: no 0/0 in its derivative
    scale = fnp.where(small, 0.5 - t2 / 48 + t2 * t2 / 3840, fnp.sin(t / 2) / t)
    w = fnp.where(small, 1 - t2 / 8 + t2 * t2 / 384, fnp.cos(t / 2))
    return fnp.concatenate([scale[..., None] * rotvec, w[..., None]], axis=-1)


def _as_rotvec(q: Any) -> Any:
    """The rotation vector ``t v/|v|`` of ``q = (v, w)``, ``w >= 0`` taken (``t <= pi``);
    below ``t = 1e-3`` the scale ``t / sin(t/2)`` is its Taylor polynomial in
    ``t**2 = (2 atan(|v|/w))**2``, so every derivative is finite at the identity."""
    q = fnp.where((q[..., 3] < 0)[..., None], -q, q)
    xyz, w = q[..., :3], q[..., 3]
    n2 = _sq_norm(xyz)
    nonzero = n2 > 0
    n = fnp.where(nonzero, fnp.sqrt(fnp.where(nonzero, n2, 1.0)), 0.0)
    angle = 2 * fnp.arctan2(n, w)
    small = angle <= _SMALL
    # w is 0 in the series only for the zero quaternion (then xyz is 0 too): read 1
    tan2 = n2 / fnp.square(fnp.where(small & (w > 0), w, 1.0))
    t2 = 4 * (tan2 - tan2 * tan2 * (2 / 3))  # (2 atan(s))**2 = 4 (s**2 - 2 s**4 / 3 + ...)
    large = fnp.where(small, 1.0, angle)
    scale = fnp.where(small, 2 + t2 / 12 + 7 * t2 * t2 / 2880, large / fnp.sin(large / 2))
    return scale[..., None] * xyz


def _as_euler(q: Any, axes: list[int], extrinsic: bool) -> Any:
    """Euler angles of ``q`` (the direct method of Bernardes and Viollet, 2022, as SciPy
    and JAX): in a gimbal lock the third angle (the first of an intrinsic sequence) is 0."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qi, qj, qk, w = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = w, qi, qj, qk * sign
    else:
        a, b, c, d = w - qj, qi + qk * sign, qj + w, qk * sign - qi
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    at_zero = fnp.abs(middle) <= _GIMBAL_EPS
    regular = ~(at_zero | (fnp.abs(middle - np.pi) <= _GIMBAL_EPS))
    half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
    locked = fnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    first, third = (0, 2) if extrinsic else (2, 0)
    angles = [locked, middle, fnp.zeros_like(middle)]
    angles[first] = fnp.where(regular, half_sum - half_diff, angles[first])
    angles[third] = fnp.where(regular, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    return _stack([fnp.mod(t + np.pi, 2 * np.pi) - np.pi for t in angles])


def _elementary(axis: int, angle: Any) -> Any:
    zero = fnp.zeros_like(angle)
    parts = [zero, zero, zero, fnp.cos(angle / 2)]
    parts[axis] = fnp.sin(angle / 2)
    return _stack(parts)


# ---------------------------------------------------------------------------
# Rotation
# ---------------------------------------------------------------------------


class Rotation:
    """Rotations in three dimensions, held as unit quaternions ``(x, y, z, w)``
    (``jax.scipy.spatial.transform.Rotation``, SciPy's class with JAX's behaviour).

    Build one with the ``from_*`` class methods, ``identity``, ``random`` or
    ``concatenate``; ``Rotation(quat)`` stores ``quat`` as given (as JAX's, no
    normalisation). ``quat`` has shape ``(4,)`` for one rotation (``single``) or
    ``(N, 4)`` (any leading axes work, as in JAX); conversions and ``apply`` broadcast
    the leading axes. A ``Rotation`` is a pytree (its one leaf is ``quat``), so it can be
    passed to and returned from ``jit``, ``vmap`` and ``grad``. Differences from JAX:
    ``identity(num)`` and ``random`` work (JAX refuses both), ``concatenate`` takes
    single rotations as one each (JAX joins their quaternions into a vector of 8), and
    ``from_rotvec``/``as_rotvec`` have finite derivatives of every order at the zero
    rotation (JAX's are NaN there; the values are JAX's). As in JAX, a zero quaternion
    gives NaN (SciPy raises) and ``from_matrix`` does not orthogonalise its input.
    """

    __slots__ = ("quat",)
    quat: Any

    def __init__(self, quat: Any) -> None:
        self.quat = quat

    def __repr__(self) -> str:
        return f"Rotation(quat={self.quat!r})"

    # -- constructors --------------------------------------------------------

    @classmethod
    def from_quat(cls, quat: Any, *, scalar_first: bool = False) -> Rotation:
        """Rotations from quaternions ``(..., 4)``, normalised; scalar last ``(x, y, z,
        w)`` unless ``scalar_first`` (SciPy's keyword; JAX's ``from_quat`` has none)."""
        q = _trailing("Rotation.from_quat", quat, "quaternions", (4,))
        if scalar_first:
            q = fnp.roll(q, -1, axis=-1)
        return cls(_normalize(q))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """Rotations from rotation matrices ``(..., 3, 3)`` (not orthogonalised first, as
        JAX)."""
        m = _trailing("Rotation.from_matrix", matrix, "rotation matrices", (3, 3))
        return cls(_from_matrix(m))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """Rotations from rotation vectors ``(..., 3)`` (axis times angle, in radians or,
        with ``degrees``, degrees)."""
        v = _trailing("Rotation.from_rotvec", rotvec, "rotation vectors", (3,))
        if degrees:
            v = fnp.deg2rad(v)
        return cls(_from_rotvec(v))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """Rotations from Modified Rodrigues Parameters ``(..., 3)``
        (``axis * tan(angle / 4)``)."""
        p = _trailing("Rotation.from_mrp", mrp, "Modified Rodrigues Parameters", (3,))
        s = _sq_norm(p) + 1
        return cls(fnp.concatenate([2 * p, (2 - s)[..., None]], axis=-1) / s[..., None])

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """Rotations from Euler angles about the axes of ``seq``: 1 to 3 of ``'xyz'``
        (extrinsic: fixed axes) or of ``'XYZ'`` (intrinsic: the rotating frame's),
        consecutive axes different. ``angles`` has shape ``(..., len(seq))`` (a number for
        one axis); one rotation for ``(len(seq),)``, as JAX (SciPy also reads ``(N,)`` as
        N one-axis rotations)."""
        fname = "Rotation.from_euler"
        axes, extrinsic = _parse_seq(fname, seq, (1, 2, 3))
        a = fnp.atleast_1d(_floats(fname, angles))
        shape = _shape(a)
        if shape[-1] != len(axes):
            raise ValueError(
                f"{fname}: expected angles of shape ({len(axes)},) or (N, {len(axes)}) for "
                f"the sequence {seq!r}, got shape {shape}."
            )
        if degrees:
            a = fnp.deg2rad(a)
        quat = _elementary(axes[0], a[..., 0])
        for n, axis in enumerate(axes[1:], start=1):
            step = _elementary(axis, a[..., n])
            quat = _compose(step, quat) if extrinsic else _compose(quat, step)
        return cls(quat)

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation, or ``num`` of them (JAX accepts only ``num=None``)."""
        quat = fnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        if num is None:
            return cls(quat)
        if isinstance(num, bool) or not isinstance(num, int | np.integer) or num < 0:
            raise ValueError(f"Rotation.identity: expected num None or an int >= 0, got {num!r}.")
        return cls(fnp.tile(quat, (int(num), 1)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly (normalised standard normal quaternions, SciPy's
        method) with a ``functrace.random`` key: one, or ``num`` of them. JAX's raises
        ``NotImplementedError``; the same key gives the normals of ``jax.random.normal``."""
        if num is not None and (isinstance(num, bool) or not isinstance(num, int | np.integer)):
            raise ValueError(f"Rotation.random: expected num None or an int, got {num!r}.")
        shape = (4,) if num is None else (int(num), 4)
        return cls(_normalize(frandom.normal(random_key, shape)))

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """One ``Rotation`` holding all of ``rotations`` in order (a single rotation
        counts as one)."""
        rotations = list(rotations)
        if not rotations:
            raise ValueError("Rotation.concatenate: expected at least one Rotation, got none.")
        for r in rotations:
            if not isinstance(r, Rotation):
                raise TypeError(
                    f"Rotation.concatenate: expected Rotation objects, got a {type(r).__name__}."
                )
        return cls(fnp.concatenate([fnp.atleast_2d(r.quat) for r in rotations], axis=0))

    # -- conversions --------------------------------------------------------

    def _q(self, fname: str) -> Any:
        q = self.quat
        shape = _shape(q)
        if not shape or shape[-1] != 4:
            raise ValueError(f"Rotation.{fname}: expected quat of shape (..., 4), got {shape}.")
        return q

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions ``(..., 4)``, scalar last unless ``scalar_first``; with
        ``canonical``, the sign with ``w > 0`` (where ``w == 0``, the first nonzero
        component positive)."""
        q = self._q("as_quat")
        if canonical:
            q = _canonical(q)
        return fnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self) -> Any:
        """The rotation matrices ``(..., 3, 3)``."""
        return _as_matrix(self._q("as_matrix"))

    def as_rotvec(self, degrees: bool = False) -> Any:
        """The rotation vectors ``(..., 3)``: axis times angle, the angle in ``[0, pi]``
        (radians, or degrees with ``degrees``)."""
        v = _as_rotvec(self._q("as_rotvec"))
        return fnp.rad2deg(v) if degrees else v

    def as_mrp(self) -> Any:
        """The Modified Rodrigues Parameters ``(..., 3)`` of the angle in ``[0, pi]``."""
        q = self._q("as_mrp")
        sign = 1 - 2 * (q[..., 3] < 0).astype(core.get_aval(q).dtype)
        return (sign / (1 + sign * q[..., 3]))[..., None] * q[..., :3]

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles ``(..., 3)`` about the three axes of ``seq`` (``'xyz'`` letters
        extrinsic, ``'XYZ'`` intrinsic), each in ``[-pi, pi)``: the middle one in
        ``[-pi/2, pi/2]`` for Tait-Bryan sequences, ``[0, pi]`` for proper Euler ones. In a
        gimbal lock (middle angle within 1e-7 of its end) the third angle (the first,
        intrinsic) is 0, without SciPy's warning."""
        fname = "Rotation.as_euler"
        axes, extrinsic = _parse_seq(fname, seq, (3,))
        angles = _as_euler(self._q("as_euler"), axes, extrinsic)
        return fnp.rad2deg(angles) if degrees else angles

    # -- operations ---------------------------------------------------------

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """The vectors ``(..., 3)`` rotated (by the inverse rotations with ``inverse``).
        One rotation applies to every vector, one vector is rotated by every rotation,
        and N rotations pair with N vectors (leading axes broadcast)."""
        fname = "Rotation.apply"
        v = _trailing(fname, vectors, "vectors", (3,))
        m = _as_matrix(self._q("apply"))
        _batch_shape(fname, _shape(m)[:-2], _shape(v)[:-1])
        if inverse:
            m = fnp.swapaxes(m, -1, -2)
        return fnp.matmul(m, v[..., None])[..., 0]

    def inv(self) -> Rotation:
        """The inverse rotations."""
        return Rotation(_conjugate(self._q("inv")))

    def magnitude(self) -> Any:
        """The rotation angles, in ``[0, pi]`` radians."""
        q = self._q("magnitude")
        return 2 * fnp.arctan2(fnp.sqrt(_sq_norm(q[..., :3])), fnp.abs(q[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation of N rotations: the eigenvector of the largest
        eigenvalue of ``sum_i w_i q_i q_i^T`` (its sign is the eigensolver's)."""
        fname = "Rotation.mean"
        q = self._q("mean")
        if len(_shape(q)) != 2:
            raise ValueError(
                f"{fname}: expected N rotations (quat of shape (N, 4)), got quat of shape "
                f"{_shape(q)}."
            )
        n = _shape(q)[0]
        if weights is None:
            w = fnp.ones(n, dtype=core.get_aval(q).dtype)
        else:
            w = _floats(fname, weights).astype(core.get_aval(q).dtype)
            if _shape(w) != (n,):
                raise ValueError(
                    f"{fname}: expected weights of shape ({n},) (one per rotation), got "
                    f"shape {_shape(w)}."
                )
        k = fnp.matmul(fnp.transpose(q) * w[None, :], q)
        top = fnp.linalg.eigh(k)[1][:, -1]
        return Rotation(top if isinstance(top, Tracer) else fnp.asarray(top))

    def __mul__(self, other: Any) -> Rotation:
        """The composition ``self * other``: rotate by ``other``, then by ``self``
        (normalised; leading axes broadcast)."""
        if not isinstance(other, Rotation):
            raise TypeError(
                f"Rotation.__mul__: expected a Rotation on both sides, got a "
                f"{type(other).__name__}."
            )
        p, q = self._q("__mul__"), other._q("__mul__")
        _batch_shape("Rotation.__mul__", _shape(p)[:-1], _shape(q)[:-1])
        return Rotation(_normalize(_compose(p, q)))

    def __getitem__(self, index: Any) -> Rotation:
        """The rotations at ``index`` (of the first axis); a single rotation has none."""
        if self.single:
            raise TypeError("Rotation.__getitem__: a single rotation is not subscriptable.")
        return Rotation(self.quat[index])

    def __len__(self) -> int:
        """The number of rotations; a single rotation has no ``len``."""
        if self.single:
            raise TypeError("Rotation.__len__: a single rotation has no len().")
        return _shape(self.quat)[0]

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
        return len(_shape(self.quat)) == 1


# ---------------------------------------------------------------------------
# Slerp
# ---------------------------------------------------------------------------


class Slerp:
    """Spherical linear interpolation between rotations at increasing times
    (``jax.scipy.spatial.transform.Slerp``, a pytree as JAX's).

    Build it with ``Slerp.init(times, rotations)`` (JAX's) or ``Slerp(times,
    rotations)`` (SciPy's call); ``Slerp(times, timedelta, rotations, rotvecs)`` sets the
    four fields directly, as JAX's named tuple. ``slerp(t)`` gives the rotations at times
    ``t`` (a number: one rotation; a 1-d array: a batch), moving at constant angular
    speed from each key rotation to the next. The times are not checked for increasing
    order (they may be traced). As JAX: a time before the first extrapolates the first
    interval; a time after the last is measured from the last key time along the last
    interval (SciPy raises for both).
    """

    __slots__ = ("times", "timedelta", "rotations", "rotvecs")
    times: Any
    timedelta: Any
    rotations: Any
    rotvecs: Any

    def __init__(
        self, times: Any, timedelta: Any = None, rotations: Any = None, rotvecs: Any = None
    ) -> None:
        if isinstance(timedelta, Rotation) and rotations is None and rotvecs is None:
            made = Slerp.init(times, timedelta)
            times, timedelta, rotations, rotvecs = (
                made.times,
                made.timedelta,
                made.rotations,
                made.rotvecs,
            )
        self.times = times
        self.timedelta = timedelta
        self.rotations = rotations
        self.rotvecs = rotvecs

    def __repr__(self) -> str:
        return f"Slerp(times={self.times!r}, rotations={self.rotations!r})"

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (N >= 2) at the N ``times``."""
        fname = "Slerp.init"
        if not isinstance(rotations, Rotation):
            raise TypeError(f"{fname}: expected rotations to be a Rotation, got a "
                            f"{type(rotations).__name__}.")  # fmt: skip
        quat = rotations.quat
        if len(_shape(quat)) != 2 or _shape(quat)[0] < 2 or _shape(quat)[1] != 4:
            raise ValueError(
                f"{fname}: expected at least 2 rotations (quat of shape (N, 4)), got quat of "
                f"shape {_shape(quat)}."
            )
        t = _floats(fname, times).astype(core.get_aval(quat).dtype)
        if len(_shape(t)) != 1 or _shape(t)[0] != _shape(quat)[0]:
            raise ValueError(
                f"{fname}: expected times of shape ({_shape(quat)[0]},) (one per rotation), "
                f"got shape {_shape(t)}."
            )
        starts = Rotation(quat[:-1])
        rotvecs = (starts.inv() * Rotation(quat[1:])).as_rotvec()
        self = object.__new__(cls)
        self.times, self.timedelta, self.rotations, self.rotvecs = (
            t,
            fnp.diff(t),
            starts,
            rotvecs,
        )
        return self

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at ``times`` (a number or a 1-d array)."""
        fname = "Slerp.__call__"
        t = _floats(fname, times).astype(core.get_aval(self.times).dtype)
        if len(_shape(t)) > 1:
            raise ValueError(f"{fname}: expected a number or a 1-d array of times, got shape "
                             f"{_shape(t)}.")  # fmt: skip
        single = len(_shape(t)) == 0
        t = fnp.atleast_1d(t)
        last = _shape(self.times)[0] - 2  # the last interval
        index = fnp.maximum(fnp.searchsorted(self.times, t) - 1, 0)
        interval = fnp.minimum(index, last)

        # the indices are in range by construction: a gather that reads no index values
        # (indexing would check them, and an eager derivative could not be reused)
        def at(x: Any, i: Any) -> Any:
            return li.index_take(x, i, 0, "clip")

        alpha = (t - at(self.times, index)) / at(self.timedelta, interval)
        steps = Rotation.from_rotvec(at(self.rotvecs, interval) * alpha[:, None])
        result = Rotation(at(self.rotations.quat, interval)) * steps
        return result[0] if single else result


# ---------------------------------------------------------------------------
# Pytree registration
# ---------------------------------------------------------------------------


def _rotation_unflatten(aux: None, children: Any) -> Rotation:
    r = object.__new__(Rotation)
    (r.quat,) = children
    return r


def _slerp_unflatten(aux: None, children: Any) -> Slerp:
    s = object.__new__(Slerp)
    s.times, s.timedelta, s.rotations, s.rotvecs = children
    return s


_SLERP_FIELDS = ("times", "timedelta", "rotations", "rotvecs")

register_pytree_node(
    Rotation,
    lambda r: ((r.quat,), None),
    _rotation_unflatten,
    lambda r: (((GetAttrKey("quat"), r.quat),), None),
)
register_pytree_node(
    Slerp,
    lambda s: (tuple(getattr(s, f) for f in _SLERP_FIELDS), None),
    _slerp_unflatten,
    lambda s: (tuple((GetAttrKey(f), getattr(s, f)) for f in _SLERP_FIELDS), None),
)
