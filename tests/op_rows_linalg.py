"""Op-table rows: ``functrace.lax.linalg`` primitives and ``functrace.numpy.linalg``.

Shapes are fixed (3x3 matrices, stacks of two, 4x3 / 3x4 / 3x5 rectangles). The
drawn arguments (entries in [-1, 1]) are turned into well-conditioned matrices
*inside* each row, with the same transform in ``fn`` (functrace.numpy) and ``ref``
(NumPy), written once for both (``xp`` is ``fnp`` or ``np``):

* ``_gen``: ``a + 4 I`` (eigenvalues within 3 of 4: invertible, condition <= 7);
* ``_spd``: ``a a^T + 3 I`` (symmetric positive definite);
* ``_sym``: ``(a + a^T) / 4 + diag(0, 4, 8)`` (symmetric, eigenvalues at least 1 apart);
* ``_tall`` / ``_wide``: ``0.3 a`` plus a diagonal with 9, 6, 3 (distinct singular
  values at least 0.9 apart, full rank).

Eigenvectors and singular vectors are defined up to sign: rows fix the sign of each
vector by its "diagonal" entry (``_fix_cols``), which is far from zero for these
inputs. Gradients are checked to order 2 where the function is smooth and well
conditioned, order 1 for vectors of decompositions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.lax as lax
import functrace.numpy as fnp
from op_db import Arg, F, OpInfo

MAT = Arg(domain=(-1.0, 1.0))
S33, S233 = (3, 3), (2, 3, 3)


def _eye(n: int, a: Any, m: int | None = None) -> np.ndarray:
    return np.eye(n, m, dtype=a.dtype)


def _mT(xp: Any, a: Any) -> Any:
    return xp.swapaxes(a, -1, -2)


def _gen(xp: Any, a: Any) -> Any:
    return a + 4 * _eye(a.shape[-1], a)


def _neg_det(xp: Any, a: Any) -> Any:
    # first column negated: det < 0
    return _gen(xp, a) * np.array([-1, 1, 1], dtype=a.dtype)


def _spd(xp: Any, a: Any) -> Any:
    return xp.matmul(a, _mT(xp, a)) + 3 * _eye(a.shape[-1], a)


def _sym(xp: Any, a: Any) -> Any:
    n = a.shape[-1]
    return (a + _mT(xp, a)) / 4 + np.diag(4.0 * np.arange(n)).astype(a.dtype)


def _anti(xp: Any, a: Any) -> Any:
    # large entries on the anti-diagonal: pivoting swaps rows, and no two candidate
    # pivots are close (so finite differences do not cross a change of pivot)
    n = a.shape[-1]
    return a + 4 * np.eye(n, dtype=a.dtype)[::-1]


def _np_lu(a: Any) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's packed LU and the row permutation (a[perm] = L U) of each matrix."""
    import scipy.linalg

    a = np.asarray(a)
    flat = a.reshape(-1, *a.shape[-2:])
    lus, perms = [], []
    for m in flat:
        p, _, _ = scipy.linalg.lu(m)
        lus.append(scipy.linalg.lu_factor(m)[0])
        perms.append(np.argmax(p, axis=0).astype(np.int32))  # a = p l u: a[perm] = l u
    return np.stack(lus).reshape(a.shape), np.stack(perms).reshape(a.shape[:-1])


def _diag_block(m: int, n: int, a: Any) -> np.ndarray:
    d = np.zeros((m, n), a.dtype)
    for i, v in enumerate((9, 6, 3, 1.5)[: min(m, n)]):
        d[i, i] = v
    return d


def _tall(xp: Any, a: Any) -> Any:
    return 0.3 * a + _diag_block(*a.shape[-2:], a)


_wide = _tall  # the same construction for m < n


def _fix_cols(xp: Any, v: Any) -> Any:
    """Columns of ``v`` with their sign chosen so that entry (j, j) is positive."""
    m, k = v.shape[-2:]
    d = xp.sum(v * _eye(m, v, k), axis=-2)
    return v * xp.expand_dims(xp.sign(d), -2)


def _fix_rows(xp: Any, v: Any) -> Any:
    return _mT(xp, _fix_cols(xp, _mT(xp, v)))


def _row(
    name: str,
    fn: Any,
    ref: Any,
    shapes: tuple[tuple[int, ...], ...],
    prims: tuple[str, ...],
    args: tuple[Arg, ...] | None = None,
    **kw: Any,
) -> OpInfo:
    kw.setdefault("rtol", 1e-5)
    kw.setdefault("atol", 1e-6)
    return OpInfo(name, fn, ref, args or (MAT,) * len(shapes), prims, shapes=shapes, **kw)


# ---------------------------------------------------------------------------
# Primitive-level rows (functrace.lax.linalg)
# ---------------------------------------------------------------------------


def _np_tri_solve(a: Any, b: Any, lower: bool, transpose_a: bool) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    return np.linalg.solve(np.swapaxes(t, -1, -2) if transpose_a else t, b)


def _lax_tri(lower: bool, transpose_a: bool) -> OpInfo:
    name = (
        f"lax.linalg.triangular_solve[{'lower' if lower else 'upper'}{',T' if transpose_a else ''}]"
    )
    return _row(
        name,
        lambda a, b: lax.triangular_solve(_gen(fnp, a), b, lower, transpose_a),
        lambda a, b: _np_tri_solve(_gen(np, a), b, lower, transpose_a),
        (S33, (3, 2)),
        ("triangular_solve",),
    )


LAX_ROWS: list[OpInfo] = [
    _row(
        "lax.linalg.cholesky",
        lambda a: lax.cholesky(_spd(fnp, a)),
        lambda a: np.linalg.cholesky(_spd(np, a)),
        (S33,),
        ("cholesky",),
    ),
    _row(
        "lax.linalg.cholesky[batched]",
        lambda a: lax.cholesky(_spd(fnp, a)),
        lambda a: np.linalg.cholesky(_spd(np, a)),
        (S233,),
        ("cholesky",),
    ),
    _lax_tri(True, False),
    _lax_tri(True, True),
    _lax_tri(False, False),
    _lax_tri(False, True),
    _row(
        "lax.linalg.solve",
        lambda a, b: lax.solve(_gen(fnp, a), b),
        lambda a, b: np.linalg.solve(_gen(np, a), b),
        (S33, (3, 2)),
        ("solve",),
    ),
    _row(
        "lax.linalg.solve[batched]",
        lambda a, b: lax.solve(_gen(fnp, a), b),
        lambda a, b: np.linalg.solve(_gen(np, a), b),
        (S233, (2, 3, 1)),
        ("solve",),
    ),
    _row(
        "lax.linalg.eigh[w]",
        lambda a: lax.eigh(_sym(fnp, a))[1],
        lambda a: np.linalg.eigh(_sym(np, a))[0],
        (S33,),
        ("eigh",),
    ),
    _row(
        "lax.linalg.eigh[v]",
        lambda a: _fix_cols(fnp, lax.eigh(_sym(fnp, a))[0]),
        lambda a: _fix_cols(np, np.linalg.eigh(_sym(np, a))[1]),
        (S233,),
        ("eigh",),
        grad_order=1,
    ),
    _row(
        "lax.linalg.eigh[upper]",
        lambda a: lax.eigh(_sym(fnp, a), lower=False, symmetrize_input=False)[1],
        lambda a: np.linalg.eigh(_sym(np, a), UPLO="U")[0],
        (S33,),
        ("eigh",),
    ),
    _row(
        "lax.linalg.eigh[eigvals_only]",
        lambda a: lax.eigh(_sym(fnp, a), eigvals_only=True),
        lambda a: np.linalg.eigvalsh(_sym(np, a)),
        (S233,),
        ("eigh",),
    ),
    _row(
        "lax.linalg.svd[s]",
        lambda a: lax.svd(_tall(fnp, a), full_matrices=False)[1],
        lambda a: np.linalg.svd(_tall(np, a))[1],
        ((4, 3),),
        ("svd",),
    ),
    _row(
        "lax.linalg.svd[u]",
        lambda a: _fix_cols(fnp, lax.svd(_tall(fnp, a), full_matrices=False)[0]),
        lambda a: _fix_cols(np, np.linalg.svd(_tall(np, a), full_matrices=False)[0]),
        ((4, 3),),
        ("svd",),
        grad_order=1,
    ),
    _row(
        "lax.linalg.svd[vt,wide]",
        lambda a: _fix_rows(fnp, lax.svd(_wide(fnp, a), full_matrices=False)[2]),
        lambda a: _fix_rows(np, np.linalg.svd(_wide(np, a), full_matrices=False)[2]),
        ((2, 3, 4),),
        ("svd",),
        grad_order=1,
    ),
    _row(
        "lax.linalg.svd[compute_uv=False]",
        lambda a: lax.svd(_wide(fnp, a), compute_uv=False),
        lambda a: np.linalg.svd(_wide(np, a), compute_uv=False),
        ((3, 4),),
        ("svd",),
    ),
    _row(
        "lax.linalg.qr[q]",
        lambda a: lax.qr(_tall(fnp, a), full_matrices=False)[0],
        lambda a: np.linalg.qr(_tall(np, a))[0],
        ((4, 3),),
        ("qr",),
        grad_order=1,
    ),
    _row(
        "lax.linalg.qr[r]",
        lambda a: lax.qr(_tall(fnp, a), full_matrices=False)[1],
        lambda a: np.linalg.qr(_tall(np, a))[1],
        ((2, 4, 3),),
        ("qr",),
        grad_order=1,
    ),
    _row(
        "lax.linalg.qr[wide]",
        lambda a: lax.qr(_wide(fnp, a))[1],
        lambda a: np.linalg.qr(_wide(np, a))[1],
        ((3, 5),),
        ("qr",),
        grad_order=1,
    ),
    # JAX's defaults: symmetrized input, complete factors, subsets of the spectrum
    _row(
        "lax.linalg.cholesky[symmetrize_input]",
        lambda a: lax.cholesky(_spd(fnp, a) + fnp.triu(a, 1)),
        lambda a: np.linalg.cholesky(_spd(np, a) + 0.5 * (np.triu(a, 1) + np.triu(a, 1).T)),
        (S33,),
        ("cholesky",),
    ),
    _row(
        "lax.linalg.eigh[symmetrize_input,subset]",
        lambda a: lax.eigh(_sym(fnp, a) + fnp.triu(a, 1), subset_by_index=(1, 3))[1],
        lambda a: np.linalg.eigvalsh(_sym(np, a) + 0.5 * (np.triu(a, 1) + np.triu(a, 1).T))[1:3],
        (S33,),
        ("eigh",),
    ),
    _row(
        "lax.linalg.svd[full_matrices,s]",
        lambda a: lax.svd(_tall(fnp, a))[1],
        lambda a: np.linalg.svd(_tall(np, a))[1],
        ((4, 3),),
        ("svd",),
        grad=False,  # full U: no derivative (as JAX)
    ),
    _row(
        "lax.linalg.svd[full_matrices,|vt|]",  # the null-space row too: unique up to sign
        lambda a: fnp.abs(lax.svd(_wide(fnp, a))[2]),
        lambda a: np.abs(np.linalg.svd(_wide(np, a))[2]),
        ((3, 4),),
        ("svd",),
        grad=False,
    ),
    _row(
        "lax.linalg.svd[subset]",
        lambda a: lax.svd(_tall(fnp, a), full_matrices=False, subset_by_index=(0, 2))[1],
        lambda a: np.linalg.svd(_tall(np, a))[1][..., :2],
        ((2, 4, 3),),
        ("svd",),
    ),
    _row(
        "lax.linalg.qr[full_matrices]",
        lambda a: fnp.abs(lax.qr(_tall(fnp, a))[1]),
        lambda a: np.abs(np.linalg.qr(_tall(np, a), mode="complete")[1]),
        ((4, 3),),
        ("qr",),
        grad=False,  # complete Q: no derivative (as JAX)
    ),
    _row(
        "lax.linalg.det",
        lambda a: lax.det(_gen(fnp, a)),
        lambda a: np.linalg.det(_gen(np, a)),
        (S233,),
        ("det",),
    ),
    _row(
        "lax.linalg.slogdet",
        lambda a: lax.slogdet(_neg_det(fnp, a))[1],
        lambda a: np.linalg.slogdet(_neg_det(np, a))[1],
        (S33,),
        ("slogdet",),
    ),
    _row(
        "lax.linalg.lu",
        lambda a: lax.lu(_anti(fnp, a))[0],
        lambda a: _np_lu(_anti(np, a))[0],
        (S233,),
        ("lu",),
    ),
    _row(
        "lax.linalg.lu[perm]",
        lambda a: lax.lu(_anti(fnp, a))[2],
        lambda a: _np_lu(_anti(np, a))[1],
        (S33,),
        ("lu",),
        grad=False,
    ),
    _row(
        "lax.linalg.slogdet[sign]",
        lambda a: lax.slogdet(_neg_det(fnp, a))[0],
        lambda a: np.linalg.slogdet(_neg_det(np, a))[0],
        (S233,),
        ("slogdet",),
    ),
]

# ---------------------------------------------------------------------------
# functrace.numpy.linalg rows
# ---------------------------------------------------------------------------

L = fnp.linalg


def _matrix_rows() -> list[OpInfo]:
    return [
        _row(
            "linalg.inv",
            lambda a: L.inv(_gen(fnp, a)),
            lambda a: np.linalg.inv(_gen(np, a)),
            (S33,),
            ("solve",),
        ),
        _row(
            "linalg.inv[batched]",
            lambda a: L.inv(_gen(fnp, a)),
            lambda a: np.linalg.inv(_gen(np, a)),
            (S233,),
            ("solve",),
        ),
        _row(
            "linalg.solve",
            lambda a, b: L.solve(_gen(fnp, a), b),
            lambda a, b: np.linalg.solve(_gen(np, a), b),
            (S33, (3, 2)),
            ("solve",),
        ),
        _row(
            "linalg.solve[vector]",
            lambda a, b: L.solve(_gen(fnp, a), b),
            lambda a, b: np.linalg.solve(_gen(np, a), b),
            (S33, (3,)),
            ("solve",),
        ),
        _row(
            "linalg.solve[batched_a]",
            lambda a, b: L.solve(_gen(fnp, a), b),
            lambda a, b: np.linalg.solve(_gen(np, a), b),
            (S233, (3, 2)),
            ("solve",),
        ),
        _row(
            "linalg.solve[batched_vector]",
            lambda a, b: L.solve(_gen(fnp, a), b),
            lambda a, b: np.linalg.solve(_gen(np, a), b),
            (S233, (3,)),
            ("solve",),
        ),
        _row(
            "linalg.solve[broadcast]",
            lambda a, b: L.solve(_gen(fnp, a), b),
            lambda a, b: np.linalg.solve(_gen(np, a), b),
            ((1, 3, 3), (2, 3, 1)),
            ("solve",),
        ),
        _row(
            "linalg.det",
            lambda a: L.det(_gen(fnp, a)),
            lambda a: np.linalg.det(_gen(np, a)),
            (S33,),
            ("det",),
        ),
        _row(
            "linalg.det[batched]",
            lambda a: L.det(_neg_det(fnp, a)),
            lambda a: np.linalg.det(_neg_det(np, a)),
            (S233,),
            ("det",),
        ),
        _row(
            "linalg.slogdet",
            lambda a: _signed_logdet(fnp, L.slogdet(_neg_det(fnp, a))),
            lambda a: _signed_logdet(np, np.linalg.slogdet(_neg_det(np, a))),
            (S33,),
            ("slogdet",),
        ),
        _row(
            "linalg.slogdet[batched]",
            lambda a: L.slogdet(_gen(fnp, a)).logabsdet,
            lambda a: np.linalg.slogdet(_gen(np, a)).logabsdet,
            (S233,),
            ("slogdet",),
        ),
        _row(
            "linalg.cholesky",
            lambda a: L.cholesky(_spd(fnp, a)),
            lambda a: np.linalg.cholesky(_spd(np, a)),
            (S33,),
            ("cholesky",),
        ),
        _row(
            "linalg.cholesky[batched]",
            lambda a: L.cholesky(_spd(fnp, a)),
            lambda a: np.linalg.cholesky(_spd(np, a)),
            (S233,),
            ("cholesky",),
        ),
        _row(  # a non-symmetric input: JAX's (a + a^T) / 2 is factored
            "linalg.cholesky[symmetrize_input]",
            lambda a: L.cholesky(_spd(fnp, a) + 0.1 * a, symmetrize_input=True),
            lambda a: np.linalg.cholesky(_spd(np, a) + 0.05 * (a + _mT(np, a))),
            (S233,),
            ("cholesky",),
        ),
        _row(
            "linalg.eigh[symmetrize_input]",
            lambda a: L.eigh(_sym(fnp, a) + 0.1 * a, symmetrize_input=True)[0],
            lambda a: np.linalg.eigh(_sym(np, a) + 0.05 * (a + _mT(np, a)))[0],
            (S33,),
            ("eigh",),
        ),
        _row(
            "linalg.cholesky[upper]",
            lambda a: L.cholesky(_spd(fnp, a), upper=True),
            lambda a: np.linalg.cholesky(_spd(np, a), upper=True),
            (S33,),
            ("cholesky",),
        ),
        _row(
            "linalg.eigh[eigenvalues]",
            lambda a: L.eigh(_sym(fnp, a)).eigenvalues,
            lambda a: np.linalg.eigh(_sym(np, a)).eigenvalues,
            (S233,),
            ("eigh",),
        ),
        _row(
            "linalg.eigh[eigenvectors]",
            lambda a: _fix_cols(fnp, L.eigh(_sym(fnp, a)).eigenvectors),
            lambda a: _fix_cols(np, np.linalg.eigh(_sym(np, a)).eigenvectors),
            (S33,),
            ("eigh",),
            grad_order=1,
        ),
        _row(
            "linalg.eigh[UPLO=U]",
            lambda a: _fix_cols(fnp, L.eigh(_sym(fnp, a), UPLO="U")[1]),
            lambda a: _fix_cols(np, np.linalg.eigh(_sym(np, a), UPLO="U")[1]),
            (S233,),
            ("eigh",),
            grad_order=1,
        ),
        _row(
            "linalg.eigh[projector]",  # sign-invariant: V diag(w) V^T rebuilds the input
            lambda a: _rebuild_eigh(fnp, L.eigh(_sym(fnp, a))),
            lambda a: _rebuild_eigh(np, np.linalg.eigh(_sym(np, a))),
            (S33,),
            ("eigh",),
        ),
        _row(
            "linalg.eigvalsh",
            lambda a: L.eigvalsh(_sym(fnp, a)),
            lambda a: np.linalg.eigvalsh(_sym(np, a)),
            (S33,),
            ("eigh",),
        ),
        _row(
            "linalg.svd[S]",
            lambda a: L.svd(_tall(fnp, a), compute_uv=False),
            lambda a: np.linalg.svd(_tall(np, a), compute_uv=False),
            ((2, 4, 3),),
            ("svd",),
        ),
        _row(
            "linalg.svd[U]",
            lambda a: _fix_cols(fnp, L.svd(_tall(fnp, a), False).U),
            lambda a: _fix_cols(np, np.linalg.svd(_tall(np, a), False).U),
            ((4, 3),),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.svd[Vh]",
            lambda a: _fix_rows(fnp, L.svd(_tall(fnp, a), False).Vh),
            lambda a: _fix_rows(np, np.linalg.svd(_tall(np, a), False).Vh),
            ((4, 3),),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.svd[wide,rebuild]",  # sign-invariant: U diag(S) Vh rebuilds the input
            lambda a: _rebuild_svd(fnp, L.svd(_wide(fnp, a), full_matrices=False)),
            lambda a: _rebuild_svd(np, np.linalg.svd(_wide(np, a), full_matrices=False)),
            ((3, 4),),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.svd[square,full_matrices]",
            lambda a: _fix_cols(fnp, L.svd(_tall(fnp, a))[0]),
            lambda a: _fix_cols(np, np.linalg.svd(_tall(np, a))[0]),
            (S33,),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.qr[Q]",
            lambda a: L.qr(_tall(fnp, a)).Q,
            lambda a: np.linalg.qr(_tall(np, a)).Q,
            ((4, 3),),
            ("qr",),
            grad_order=1,
        ),
        _row(
            "linalg.qr[R]",
            lambda a: L.qr(_tall(fnp, a)).R,
            lambda a: np.linalg.qr(_tall(np, a)).R,
            ((2, 4, 3),),
            ("qr",),
            grad_order=1,
        ),
        _row(
            "linalg.qr[mode=r,wide]",
            lambda a: L.qr(_wide(fnp, a), mode="r"),
            lambda a: np.linalg.qr(_wide(np, a), mode="r"),
            ((3, 5),),
            ("qr",),
            grad_order=1,
        ),
        _row(
            "linalg.pinv",
            lambda a: L.pinv(_tall(fnp, a)),
            lambda a: np.linalg.pinv(_tall(np, a)),
            ((4, 3),),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.pinv[batched,wide]",
            lambda a: L.pinv(_wide(fnp, a)),
            lambda a: np.linalg.pinv(_wide(np, a)),
            ((2, 3, 4),),
            ("svd",),
            grad_order=1,
        ),
        _row(
            "linalg.matrix_power[3]",
            lambda a: L.matrix_power(a, 3),
            lambda a: np.linalg.matrix_power(a, 3),
            (S33,),
            ("dot_general",),
        ),
        _row(
            "linalg.matrix_power[6,batched]",
            lambda a: L.matrix_power(a, 6),
            lambda a: np.linalg.matrix_power(a, 6),
            (S233,),
            ("dot_general",),
        ),
        _row(
            "linalg.matrix_power[-2]",
            lambda a: L.matrix_power(_gen(fnp, a), -2),
            lambda a: np.linalg.matrix_power(_gen(np, a), -2),
            (S33,),
            ("solve", "dot_general"),
        ),
        _row(
            "linalg.matrix_power[0]",
            lambda a: L.matrix_power(a, 0),
            lambda a: np.linalg.matrix_power(a, 0),
            (S33,),
            (),
        ),
        _row(
            "linalg.multi_dot",
            lambda a, b, c: L.multi_dot([a, b, c]),
            lambda a, b, c: np.linalg.multi_dot([a, b, c]),
            ((2, 3), (3, 4), (4, 2)),
            ("dot_general",),
            args=(F, F, F),
        ),
        _row(
            "linalg.multi_dot[vectors]",
            lambda a, b, c, d: L.multi_dot([a, b, c, d]),
            lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]),
            ((3,), (3, 5), (5, 2), (2,)),
            ("dot_general",),
            args=(F, F, F, F),
        ),
        _row(
            "linalg.multi_dot[first_vector]",
            lambda a, b: L.multi_dot([a, b]),
            lambda a, b: np.linalg.multi_dot([a, b]),
            ((3,), (3, 2)),
            ("dot_general",),
            args=(F, F),
        ),
    ]


def _signed_logdet(xp: Any, res: Any) -> Any:
    return res.sign * res.logabsdet


def _rebuild_eigh(xp: Any, res: Any) -> Any:
    w, v = res
    return xp.matmul(v * xp.expand_dims(w, -2), _mT(xp, v))


def _rebuild_svd(xp: Any, res: Any) -> Any:
    u, s, vt = res
    return xp.matmul(u * xp.expand_dims(s, -2), vt)


def _norm(
    name: str,
    shape: tuple[int, ...],
    prims: tuple[str, ...] = ("reduce_sum",),
    prep: Any = None,
    **kw: Any,
) -> OpInfo:
    """A norm row; ``kw`` holds norm's keywords plus OpInfo fields."""
    fields = {k: kw.pop(k) for k in list(kw) if k in ("grad", "grad_order", "avoid", "avoid_ties")}
    norm_kw = kw

    def fn(x: Any) -> Any:
        return L.norm(x if prep is None else prep(fnp, x), **norm_kw)

    def ref(x: Any) -> Any:
        return np.linalg.norm(x if prep is None else prep(np, x), **norm_kw)

    arg = MAT if "svd" in prims else F
    return _row(f"linalg.norm[{name}]", fn, ref, (shape,), prims, args=(arg,), **fields)


def _spread(xp: Any, x: Any) -> Any:
    n = x.shape[-1]
    return (x + 7 * np.arange(n, dtype=x.dtype)) * (-1.0) ** np.arange(n, dtype=x.dtype)


def _col_offsets(xp: Any, x: Any) -> Any:
    return x + np.arange(x.shape[-1], dtype=x.dtype) * 10


def _row_offsets(xp: Any, x: Any) -> Any:
    return x + np.arange(x.shape[-2], dtype=x.dtype)[:, None] * 10


def _norm_rows() -> list[OpInfo]:
    inf = np.inf
    return [
        _norm("default", (2, 3, 4)),
        _norm("default,keepdims", (3, 4), keepdims=True),
        _norm("vector", (5,), ord=2),
        _norm("axis=-1", (3, 4), axis=-1),
        _norm("axis=0,keepdims", (3, 4), axis=0, keepdims=True),
        _norm("ord=1", (5,), ord=1, avoid=(0.0,)),
        # offsets of alternating sign keep the |x| apart: no ties in max/min
        _norm("ord=inf", (3, 4), ord=inf, axis=1, prep=_spread, avoid=(0.0,)),
        _norm("ord=-inf", (5,), ord=-inf, prep=_spread, avoid=(0.0,)),
        _norm("ord=3", (5,), ord=3, avoid=(0.0,)),
        _norm("ord=0.5", (4,), ord=0.5, avoid=(0.0,)),
        _norm("ord=0", (5,), ord=0, grad=False),
        _norm("fro", (3, 4), ord="fro"),
        _norm("fro,axes", (2, 3, 4), ord="fro", axis=(2, 0)),
        _norm("nuc", (4, 3), ("svd",), prep=_tall, ord="nuc"),
        _norm("matrix2", (4, 3), ("svd",), prep=_tall, ord=2),
        _norm(
            "matrix-2,keepdims",
            (3, 4, 2),
            ("svd",),
            prep=lambda xp, x: 0.3 * x + _diag_block(3, 2, x)[:, None, :],
            ord=-2,
            axis=(0, 2),
            keepdims=True,
            grad_order=1,
        ),
        # column (row) offsets keep the column (row) sums of |x| apart: no ties in max/min
        _norm("matrix1", (3, 4), ord=1, axis=(0, 1), prep=_col_offsets, avoid=(0.0,)),
        _norm("matrix-1", (3, 4), ord=-1, prep=_col_offsets, avoid=(0.0,)),
        _norm("matrix_inf", (3, 4), ord=inf, prep=_row_offsets, avoid=(0.0,)),
        _norm("matrix-inf,axes", (3, 4), ord=-inf, axis=(1, 0), prep=_row_offsets, avoid=(0.0,)),
    ]


ROWS: list[OpInfo] = LAX_ROWS + _matrix_rows() + _norm_rows()
