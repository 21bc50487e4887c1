"""Op-table rows: functrace.scipy.spatial.transform (``Rotation``, ``Slerp``), as
functions of arrays, against SciPy's ``scipy.spatial.transform``.

Each row builds rotations from its arguments and returns an array, so the conversions,
composition, ``apply``, ``mean`` (an ``eigh``) and ``Slerp`` (a ``searchsorted`` and a
gather) go through the grad/jvp/vmap/jit/eager-reuse stacks and the composition fuzzer.
Domains keep the rows away from the maps' discontinuities (a rotation angle of pi for
``as_rotvec``/``as_mrp``, gimbal locks for ``as_euler``, the key times of ``Slerp``).
JAX's numbers, edge cases and errors: tests/test_rotation.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation as SR
from scipy.spatial.transform import Slerp as SSlerp

from functrace.scipy.spatial.transform import Rotation, Slerp
from op_db import Arg, F, OpInfo

_M0 = SR.from_rotvec([0.3, -0.2, 0.35]).as_matrix()
_TIMES = np.array([0.0, 1.0, 3.0, 4.5])
_KEYS = np.array([[0.0, 0.0, 0.0], [0.4, -0.2, 1.0], [0.4, -0.2, 1.0], [-1.5, 0.5, 2.0]])
_BETWEEN = Arg(domain=(0.05, 4.45))


def _like(fn: Any) -> Any:
    """``fn`` (SciPy's, float64) with its result in the dtype of the first argument."""

    def call(*args: Any) -> Any:
        return np.asarray(fn(*args)).astype(np.asarray(args[0]).dtype)

    return call


def _row(name: str, fn: Any, ref: Any, args: tuple[Arg, ...], shapes: Any, **kw: Any) -> OpInfo:
    kw.setdefault("rtol", 1e-9)
    kw.setdefault("atol", 1e-12)
    return OpInfo(
        f"scipy.spatial.transform.{name}", fn, _like(ref), args, ("sin", "mul"), shapes, **kw
    )


ROWS: list[OpInfo] = [
    _row(
        "from_rotvec.apply",
        lambda rv, v: Rotation.from_rotvec(rv).apply(v),
        lambda rv, v: SR.from_rotvec(rv).apply(v),
        (Arg(domain=(-2.0, 2.0)), F),
        ((4, 3), (4, 3)),
    ),
    _row(
        "from_rotvec.apply[inverse]",
        lambda rv, v: Rotation.from_rotvec(rv).apply(v, inverse=True),
        lambda rv, v: SR.from_rotvec(rv).apply(v, inverse=True),
        (Arg(domain=(-2.0, 2.0)), F),
        ((3,), (5, 3)),
    ),
    _row(
        "from_euler[xyz].as_quat",
        lambda e: Rotation.from_euler("xyz", e).as_quat(),
        lambda e: SR.from_euler("xyz", e).as_quat(),
        (F,),
        ((5, 3),),
    ),
    # a small rotation in, a Tait-Bryan sequence out: no gimbal lock, no wrap at pi
    _row(
        "from_euler[XYZ].as_euler[zyx]",
        lambda e: Rotation.from_euler("XYZ", e).as_euler("zyx"),
        lambda e: SR.from_euler("XYZ", e).as_euler("zyx"),
        (Arg(domain=(-0.5, 0.5)),),
        ((4, 3),),
    ),
    # rotation matrices made from the argument (from_matrix needs orthogonal ones)
    _row(
        "from_matrix.as_rotvec",
        lambda rv: Rotation.from_matrix(
            Rotation.from_rotvec(rv).as_matrix() @ _M0.astype(rv.dtype)
        ).as_rotvec(),
        lambda rv: SR.from_matrix(SR.from_rotvec(rv).as_matrix() @ _M0).as_rotvec(),
        (Arg(domain=(-0.8, 0.8)),),
        ((4, 3),),
    ),
    _row(
        "from_quat.as_matrix",
        lambda q: Rotation.from_quat(q).as_matrix(),
        lambda q: SR.from_quat(q).as_matrix(),
        (Arg(domain=(0.2, 3.0)),),
        ((3, 4),),
    ),
    _row(
        "from_quat.magnitude",
        lambda q: Rotation.from_quat(q).magnitude(),
        lambda q: SR.from_quat(q).magnitude(),
        (Arg(domain=(0.2, 3.0)),),
        ((5, 4),),
    ),
    _row(
        "from_mrp.mul.inv.as_mrp",
        lambda p, m: (Rotation.from_mrp(p) * Rotation.from_mrp(m).inv()).as_mrp(),
        lambda p, m: (SR.from_mrp(p) * SR.from_mrp(m).inv()).as_mrp(),
        (Arg(domain=(-0.2, 0.2)), Arg(domain=(-0.2, 0.2))),
        ((4, 3), (4, 3)),
    ),
    _row(
        "mean",
        lambda rv, w: Rotation.from_rotvec(rv).mean(w).as_matrix(),
        lambda rv, w: SR.from_rotvec(rv).mean(w).as_matrix(),
        (Arg(domain=(-0.5, 0.5)), Arg(domain=(0.2, 3.0))),
        ((5, 3), (5,)),
    ),
    _row(
        "Slerp",
        lambda t: Slerp.init(_TIMES, Rotation.from_rotvec(_KEYS.astype(t.dtype)))(t).as_matrix(),
        lambda t: SSlerp(_TIMES, SR.from_rotvec(_KEYS))(t).as_matrix(),
        (_BETWEEN,),
        ((5,),),
        avoid=(1.0, 3.0),
    ),
    _row(
        "Slerp[keys]",
        lambda t, rv: Slerp.init(_TIMES, Rotation.from_rotvec(rv))(t).as_matrix(),
        lambda t, rv: SSlerp(_TIMES, SR.from_rotvec(rv))(t).as_matrix(),
        (_BETWEEN, Arg(domain=(-0.5, 0.5))),
        ((3,), (4, 3)),
        avoid=(1.0, 3.0),
    ),
]
