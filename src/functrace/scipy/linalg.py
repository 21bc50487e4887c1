"""functrace.scipy.linalg: SciPy's dense linear algebra, traceable (as ``jax.scipy.linalg``).

SciPy's names, arguments and defaults (``cholesky`` is upper by default, as in
SciPy), over stacks of matrices ``(..., m, n)`` too. Every function is built from
``functrace.numpy.linalg`` and the ``functrace.lax.linalg`` primitives, so it
differentiates, batches and jits; integer inputs become float64. As in JAX, a
singular (or not positive definite) matrix under a transform gives NaN rather
than an exception. ``overwrite_*`` and ``check_finite`` are accepted and ignored.

Complex matrices (complex64/complex128, JAX's values and derivatives): the solvers
(``solve`` with every ``assume_a``, ``solve_triangular`` with ``trans`` 2/``'C'``,
``cho_factor``/``cho_solve``, ``lu``/``lu_factor``/``lu_solve``), ``cholesky``,
``inv``, ``det``, ``expm``/``expm_frechet``, ``sqrtm``, ``polar``, ``hessenberg``,
``solve_sylvester``, ``schur``/``rsf2csf``, the special matrices built from arrays,
``qr`` (column pivoting too), ``qr_multiply``, ``svd``, ``eigh`` and
``eigh_tridiagonal`` (a Hermitian matrix of complex ``e``, as JAX).

Special matrices live in ``_linalg_special``, ``polar``/``sqrtm``/``hessenberg``/
``solve_sylvester`` in ``_linalg_more`` and the eager-only ``schur``/``rsf2csf`` in
``_linalg_schur``, with ``funm`` (through a ``pure_callback`` under ``jit``/``vmap``).

>>> import numpy as np
>>> import functrace.scipy.linalg as fsl
>>> fsl.expm(np.zeros((2, 2)))
array([[1., 0.],
       [0., 1.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.api import jvp
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import linalg as ll
from functrace.lax import stop_gradient
from functrace.numpy._core import broadcast_shapes
from functrace.scipy._linalg_more import hessenberg, polar, solve_sylvester, sqrtm
from functrace.scipy._linalg_schur import funm, rsf2csf, schur
from functrace.scipy._linalg_special import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from functrace.scipy._util import _dtype, floats

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "funm",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two axes (the transpose for real ``x``)."""
    return fnp.conj(_mT(x)) if _dtype(x).kind == "c" else _mT(x)


def _square(fname: str, a: Any) -> Any:
    (a,) = floats(fname, a, complex_ok=True)
    s = _shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{fname}: expected a square matrix (..., n, n), got shape {s}.")
    return a


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The Cholesky factor of Hermitian (real: symmetric) positive-definite ``a``: upper
    ``U`` with ``a = U^H @ U`` (SciPy's default), or lower ``L`` with ``a = L @ L^H``.

    Only the triangle returned is read from ``a`` (as SciPy/LAPACK do; the imaginary
    part of a complex diagonal is ignored).

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[2., 1.],
           [0., 1.]])
    """
    a = _square("cholesky", a)
    return fnp.linalg.cholesky(a, upper=not lower)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, bool]:
    """``(c, lower)`` for :func:`cho_solve`: the Cholesky factor and which triangle it is.

    The other triangle of ``c`` is zero (SciPy leaves arbitrary values there).
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> Any:
    """Solve ``a x = b`` given ``cho_factor(a)``.

    >>> import numpy as np
    >>> a = np.array([[4.0, 2.0], [2.0, 2.0]])
    >>> cho_solve(cho_factor(a), np.array([2.0, 1.0]))
    array([0.5, 0. ])
    """
    c, lower = c_and_lower
    if lower:  # L L^H x = b
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans="C", lower=True)
    y = solve_triangular(c, b, trans="C", lower=False)  # U^H U x = b
    return solve_triangular(c, y, lower=False)


# trans -> (transpose, conjugate)
_TRANS = {
    0: (False, False),
    "N": (False, False),
    1: (True, False),
    "T": (True, False),
    2: (True, True),
    "C": (True, True),
}


def _trans_key(fname: str, trans: Any) -> tuple[bool, bool]:
    key = trans.upper() if isinstance(trans, str) else trans
    try:
        return _TRANS[key]
    except (KeyError, TypeError):
        raise ValueError(
            f"{fname}: expected trans in 0, 1, 2, 'N', 'T', 'C'; got {trans!r}."
        ) from None


def solve_triangular(
    a: Any,
    b: Any,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solve ``op(a) x = b`` for triangular ``a`` (only its ``lower``/upper triangle is read).

    ``trans``: 0 or ``'N'`` (``a``), 1 or ``'T'`` (``a.T``), 2 or ``'C'`` (``a.conj().T``,
    the same for real ``a``). ``unit_diagonal`` treats the diagonal as ones (not read).
    Real or complex ``a`` and ``b`` (promoted together).
    ``b`` is ``(..., n)`` (a vector for each matrix; when ``b.ndim == a.ndim - 1``) or
    ``(..., n, k)``; the leading axes of ``a`` and ``b`` broadcast.

    >>> import numpy as np
    >>> solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True)
    array([1., 2.])
    """
    transpose, conjugate = _trans_key("solve_triangular", trans)
    a, b = floats("solve_triangular", a, b, broadcast=False, complex_ok=True)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(
            f"solve_triangular: expected a square matrix a (..., n, n), got shape {sa}."
        )
    n = sa[-1]
    vector = len(sb) == len(sa) - 1
    if vector:
        b = fnp.expand_dims(b, -1)
        sb = _shape(b)
    if len(sb) < 2 or sb[-2] != n:
        raise ValueError(
            f"solve_triangular: expected b of shape (..., {n}) or (..., {n}, k) for a of shape "
            f"{sa}, got shape {_shape(b) if not vector else sb[:-1]}."
        )
    lead = broadcast_shapes("solve_triangular", sa[:-2], sb[:-2])
    a = fnp.broadcast_to(a, (*lead, n, n))
    b = fnp.broadcast_to(b, (*lead, *sb[-2:]))
    x = ll.triangular_solve(
        a,
        b,
        lower=bool(lower),
        transpose_a=transpose,
        conjugate_a=conjugate,
        unit_diagonal=bool(unit_diagonal),
    )
    return x[..., 0] if vector else x


# Pade(13) coefficients and the largest 1-norm for which it is accurate without scaling
# (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


def expm(A: Any) -> Any:
    """The matrix exponential of square ``A (..., n, n)`` (real or complex).

    Scaling and squaring with the degree-13 Pade approximant: ``A / 2**s`` has a 1-norm
    at most 5.37, its Pade approximant ``R`` is squared ``s`` times. ``s`` is chosen from
    the norm (the largest over a stack), as a constant of the derivative; everything
    else is matrix products and one solve, so ``expm`` differentiates at any order.

    >>> import numpy as np
    >>> r = expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
    >>> np.round(r, 12).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    A = _square("expm", A)
    n = _shape(A)[-1]
    dt = _dtype(A)
    norm = fnp.max(fnp.sum(fnp.abs(stop_gradient(A)), axis=-2), initial=0.0)
    s_val = core.concrete_or_none(norm)
    eye = np.eye(n, dtype=dt)
    if s_val is not None:  # known now: a Python number of squarings
        v = float(s_val)
        s = 0 if not v > _THETA13 else int(max(0, math.ceil(math.log2(v / _THETA13))))
        if not math.isfinite(v):
            s = 0  # NaN/inf entries: the result is NaN; skip the scaling
        R = _pade13(fnp.multiply(A, np.asarray(2.0**-s, dt)), eye)
        for _ in range(s):
            R = fnp.matmul(R, R)
        return R
    # Traced norm (under jit or vmap): the number of squarings is a traced integer.
    from functrace.lax import fori_loop

    ratio = fnp.maximum(norm / _THETA13, 1.0)
    s_t = fnp.where(fnp.isfinite(ratio), fnp.ceil(fnp.log2(ratio)), 0.0)
    R = _pade13(fnp.multiply(A, fnp.astype(fnp.exp2(-s_t), dt)), eye)
    return fori_loop(0, fnp.astype(s_t, np.int32), lambda i, r: fnp.matmul(r, r), R)


def _pade13(A: Any, eye: np.ndarray) -> Any:
    b = _PADE13
    mm = fnp.matmul
    A2 = mm(A, A)
    A4 = mm(A2, A2)
    A6 = mm(A4, A2)
    u_in = mm(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
    U = mm(A, u_in + b[1] * eye)
    V = mm(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2
    V = V + b[0] * eye
    return _solve(V - U, V + U)


def _solve(a: Any, b: Any) -> Any:
    return fnp.linalg.solve(a, b)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``(lu, piv)`` as SciPy: ``L`` (unit lower) and ``U`` packed in ``lu``, and the row
    interchanges ``piv`` (row ``i`` was swapped with row ``piv[i]``), for :func:`lu_solve`.

    >>> import numpy as np
    >>> lu_, piv = lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv.tolist()
    [1, 1]
    """
    a = _square("lu_factor", a)
    packed, pivots, _ = ll.lu(a)
    return packed, pivots


def lu(
    a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, ...]:
    """``(p, l, u)`` with ``a = p @ l @ u`` (``p`` a permutation matrix, ``l`` unit lower,
    ``u`` upper triangular); with ``permute_l``, ``(p @ l, u)``. Square ``a`` only.

    >>> import numpy as np
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> p, l, u = lu(a)
    >>> bool(np.allclose(p @ l @ u, a))
    True
    """
    a = _square("lu", a)
    packed, _, perm = ll.lu(a)
    n = _shape(a)[-1]
    dt = _dtype(a)
    eye = np.eye(n, dtype=dt)
    lower = fnp.add(fnp.tril(packed, -1), eye)
    upper = fnp.triu(packed)
    p = _perm_matrix(perm, n, dt)
    if permute_l:
        return fnp.matmul(p, lower), upper
    return p, lower, upper


def _perm_matrix(perm: Any, n: int, dt: Any) -> Any:
    """``P[..., j, i] = (j == perm[..., i])``: ``P.T @ x = x[perm]``, ``P @ y`` undoes it."""
    return fnp.astype(fnp.expand_dims(perm, -2) == np.arange(n)[:, None], dt)


def _perm_from_pivots(piv: Any, n: int) -> Any:
    """The row permutation of a sequence of row swaps (``piv (..., n)``, may be traced;
    selections by comparison, not gathers: no index is read eagerly)."""
    idx = np.arange(n, dtype=np.int32)
    perm = fnp.broadcast_to(idx, _shape(piv))
    for k in range(n):
        pk = fnp.expand_dims(piv[..., k], -1)
        at_k = perm[..., k : k + 1]
        at_p = fnp.sum(fnp.where(idx == pk, perm, 0), axis=-1, keepdims=True)
        perm = fnp.where(idx == k, at_p, fnp.where(idx == pk, at_k, perm))
    return perm


def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: Any = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solve ``a x = b`` (``trans=0``), ``a.T x = b`` (1) or ``a.conj().T x = b`` (2) given
    ``lu_factor(a)``.

    >>> import numpy as np
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(a), np.array([5.0, 11.0]))
    array([1., 2.])
    """
    packed, piv = lu_and_piv
    transpose, conjugate = _trans_key("lu_solve", trans)
    packed = _square("lu_solve", packed)
    n = _shape(packed)[-1]
    piv = fnp.asarray(piv)
    if _shape(piv) != _shape(packed)[:-1] or _dtype(piv).kind not in "iu":
        raise ValueError(
            f"lu_solve: expected integer pivots of shape {_shape(packed)[:-1]}, got "
            f"{_dtype(piv)} of shape {_shape(piv)}."
        )
    (b,) = floats("lu_solve", b, complex_ok=True)
    p = _perm_matrix(_perm_from_pivots(piv, n), n, _dtype(packed))
    vector = len(_shape(b)) == len(_shape(packed)) - 1
    if vector:
        b = fnp.expand_dims(b, -1)
    if _shape(b)[-2] != n:
        raise ValueError(f"lu_solve: expected b with {n} rows, got shape {_shape(b)}.")
    if not transpose:  # P L U x = b
        y = solve_triangular(packed, fnp.matmul(_mT(p), b), lower=True, unit_diagonal=True)
        x = solve_triangular(packed, y, lower=False)
    else:  # U^T L^T P^T x = b, or U^H L^H P^T x = b
        t = 2 if conjugate else 1
        y = solve_triangular(packed, b, trans=t, lower=False)
        z = solve_triangular(packed, y, trans=t, lower=True, unit_diagonal=True)
        x = fnp.matmul(p, z)
    return x[..., 0] if vector else x


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of symmetric ``a``: ``w`` or ``(w, v)``.

    Reads the ``lower`` (or upper) triangle. The generalized problem (``b``) is not
    supported.

    >>> import numpy as np
    >>> eigh(np.array([[2.0, 0.0], [0.0, 1.0]]), eigvals_only=True)
    array([1., 2.])
    """
    if b is not None:
        raise NotImplementedError(
            "eigh: the generalized eigenproblem (b=...) is not supported; reduce it with "
            "cholesky(b) and solve_triangular first."
        )
    a = _square("eigh", a)
    w, v = fnp.linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """``(u, s, vh)`` with ``a = u @ diag(s) @ vh`` (or ``s`` with ``compute_uv=False``).

    >>> import numpy as np
    >>> svd(np.diag([1.0, 3.0]), compute_uv=False)
    array([3., 1.])
    """
    (a,) = floats("svd", a, complex_ok=True)
    return fnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of square ``a (..., n, n)``.

    >>> import numpy as np
    >>> float(det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0000000000000004
    """
    return fnp.linalg.det(_square("det", a))


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of square ``a (..., n, n)``.

    >>> import numpy as np
    >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return fnp.linalg.inv(_square("inv", a))


_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r"}


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> Any:
    """QR decomposition ``a = q @ r``: ``mode='full'`` (``q`` square), ``'economic'``
    (reduced), or ``'r'`` (returns ``(r,)`` with ``r`` of ``a``'s shape, as SciPy).

    With ``pivoting=True``, column pivoting as LAPACK's ``geqp3``: ``a[:, p] = q @ r``
    with ``|r[0, 0]| >= |r[1, 1]| >= ...``, and the int32 permutation ``p`` is returned
    last (``(q, r, p)``, or ``(r, p)`` for ``mode='r'``). At each step the column with
    the largest norm orthogonal to the columns already taken is swapped into place
    (the first on ties). ``p`` is piecewise constant, so derivatives flow through
    ``q`` and ``r`` of the permuted matrix.

    >>> import numpy as np
    >>> q, r = qr(np.eye(2))
    >>> bool(np.allclose(q @ r, np.eye(2)))
    True
    """
    if mode not in _QR_MODES:
        raise ValueError(f"qr: expected mode 'full', 'economic' or 'r', got {mode!r}.")
    (a,) = floats("qr", a, complex_ok=True)
    if len(_shape(a)) < 2:
        raise ValueError(f"qr: expected a matrix (..., m, n), got shape {_shape(a)}.")
    perm = None
    if pivoting:
        perm = _qr_column_pivots(stop_gradient(a))
        a = fnp.take_along_axis(a, fnp.expand_dims(perm, -2), axis=-1)
    out = fnp.linalg.qr(a, mode=_QR_MODES[mode])
    if mode == "r":  # SciPy's r is (m, n): the reduced one with zero rows below
        *lead, m, n = _shape(a)
        if m > n:
            zeros = np.zeros((*lead, m - n, n), dtype=_dtype(out))
            out = fnp.concatenate([out, zeros], axis=-2)
        res: tuple[Any, ...] = (out,)
    else:
        res = tuple(out)
    return res if perm is None else (*res, perm)


def _qr_column_pivots(a: Any) -> Any:
    """geqp3's column order for ``a (..., m, n)``, with traced operations (jit, vmap)."""
    *lead, m, n = _shape(a)
    perm = fnp.broadcast_to(np.arange(n, dtype=np.int32), (*lead, n))
    cols = a  # the columns of a in the current order
    resid = fnp.sum(_abs2(a), axis=-2)  # squared norms orthogonal to the taken columns
    basis: list[Any] = []  # orthonormal vectors spanning the taken columns
    idx = np.arange(n)
    for k in range(min(m, n)):
        j = fnp.argmax(fnp.where(idx >= k, resid, -np.inf), axis=-1)[..., None]
        swap = (idx == k) | (idx == j)
        partner = fnp.where(idx == k, j, k)  # position k takes j's entry and vice versa
        perm = fnp.where(swap, fnp.take_along_axis(perm, partner, axis=-1), perm)
        resid = fnp.where(swap, fnp.take_along_axis(resid, partner, axis=-1), resid)
        cols = fnp.where(
            swap[..., None, :], fnp.take_along_axis(cols, partner[..., None, :], axis=-1), cols
        )
        v = cols[..., k]
        for _ in range(2):  # Gram-Schmidt, twice for orthogonality in floating point
            for q in basis:
                v = v - fnp.sum(fnp.conj(q) * v, axis=-1, keepdims=True) * q
        norm = fnp.sqrt(fnp.sum(_abs2(v), axis=-1, keepdims=True))
        v = fnp.where(norm > 0, v / fnp.where(norm > 0, norm, 1), 0)
        basis.append(v)
        resid = resid - _abs2(fnp.sum(fnp.conj(v)[..., :, None] * cols, axis=-2))
    return perm


def _abs2(x: Any) -> Any:
    """``|x|^2``, real (for complex ``x`` too)."""
    return fnp.square(fnp.real(x)) + fnp.square(fnp.imag(x)) if _dtype(x).kind == "c" else x * x


# ---------------------------------------------------------------------------
# solve, expm_frechet, qr_multiply, eigh_tridiagonal
# ---------------------------------------------------------------------------

_ASSUME = {
    None: "gen",
    "gen": "gen",
    "general": "gen",
    "banded": "gen",  # SciPy reads the band from the entries: the general solution
    "sym": "sym",
    "symmetric": "sym",
    "her": "her",
    "hermitian": "her",
    "pos": "pos",
    "positive definite": "pos",
    "diagonal": "diagonal",
    "tridiagonal": "tridiagonal",
    "upper triangular": "upper",
    "lower triangular": "lower",
}


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: Any = None,
    transposed: bool = False,
    *,
    debug: Any = None,
) -> Any:
    """Solve ``a @ x = b`` (``a.T @ x = b`` with ``transposed``) for square ``a``.

    ``b`` is a vector ``(n,)`` or ``(..., n, k)``; leading axes broadcast. As in SciPy,
    ``assume_a`` says which entries of ``a`` are read: ``'sym'``, ``'her'`` and
    ``'pos'`` (a Cholesky solve) the ``lower`` (default: upper) triangle, ``'diagonal'``,
    ``'tridiagonal'``, ``'upper triangular'`` and ``'lower triangular'`` that part;
    ``None``, ``'gen'`` and ``'banded'`` all of ``a``. The derivative is that of exactly
    this function (zero for the entries not read). ``debug`` (JAX's) is ignored.

    Complex ``a`` and ``b`` too: ``'sym'`` is then the complex symmetric matrix of the
    triangle, ``'her'`` and ``'pos'`` the Hermitian one (the imaginary part of the
    diagonal is not read, as LAPACK's). NOTE: ``transposed`` solves with ``a.T`` for
    complex ``a`` (SciPy refuses it; JAX has no ``transposed``); JAX's ``solve`` reads all
    of ``a`` for every ``assume_a`` except ``'pos'``.

    >>> import numpy as np
    >>> solve(np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([3.0, 5.0]), assume_a="pos")
    array([0.8, 1.4])
    """
    try:
        kind = _ASSUME[assume_a]
    except (KeyError, TypeError):
        raise ValueError(
            f"solve: expected assume_a one of {sorted(k for k in _ASSUME if k)} or None, got "
            f"{assume_a!r}."
        ) from None
    a, b = floats("solve", a, b, broadcast=False, complex_ok=True)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(f"solve: expected a square matrix a (..., n, n), got shape {sa}.")
    n = sa[-1]
    vector = len(sb) == 1
    if (vector and sb[0] != n) or (not vector and (len(sb) < 2 or sb[-2] != n)):
        raise ValueError(
            f"solve: expected b of shape ({n},) or (..., {n}, k) for a of shape {sa}, got "
            f"shape {sb}."
        )
    col = fnp.expand_dims(b, -1) if vector else b
    if kind in ("upper", "lower"):
        x = solve_triangular(a, col, trans=1 if transposed else 0, lower=kind == "lower")
    elif kind == "pos":
        x = cho_solve(cho_factor(a, lower=lower), col)
    else:
        if kind in ("sym", "her"):  # the symmetric (Hermitian) matrix of the triangle read
            strict = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
            diag = a * np.eye(n, dtype=_dtype(a))
            if kind == "her":
                a = strict + _mH(strict) + fnp.real(diag)
            else:
                a = strict + _mT(strict) + diag
        elif kind == "diagonal":
            a = a * np.eye(n, dtype=_dtype(a))
        elif kind == "tridiagonal":
            band = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 1
            a = a * band.astype(_dtype(a))
        if transposed:
            a = _mT(a)
        x = fnp.linalg.solve(a, col)
    return x[..., 0] if vector else x


def expm_frechet(
    A: Any, E: Any, method: Any = None, compute_expm: bool = True, check_finite: bool = True
) -> Any:
    """The Frechet derivative of ``expm`` at ``A`` in the direction ``E``:
    ``(expm(A), L)`` with ``L = d/dt expm(A + t E)`` at ``t = 0`` (``L`` alone without
    ``compute_expm``).

    Computed as the forward-mode derivative of :func:`expm` (its Pade approximant and
    squarings), so it differentiates again. ``method`` (``'SPS'``, ``'blockEnlarge'``)
    is accepted and ignored.

    >>> import numpy as np
    >>> expm_frechet(np.zeros((2, 2)), np.eye(2), compute_expm=False)
    array([[1., 0.],
           [0., 1.]])
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(
            f"expm_frechet: expected method None, 'SPS' or 'blockEnlarge', got {method!r}."
        )
    A, E = floats("expm_frechet", A, E, broadcast=False, complex_ok=True)
    if _shape(A) != _shape(E):
        raise ValueError(
            f"expm_frechet: expected A and E of one shape, got {_shape(A)} and {_shape(E)}."
        )
    A, E = _square("expm_frechet", A), _square("expm_frechet", E)
    value, frechet = jvp(expm, (A,), (E,))
    if not isinstance(frechet, Tracer):  # NumPy in, NumPy out (as the other functions)
        value, frechet = np.asarray(value), np.asarray(frechet)
    return (value, frechet) if compute_expm else frechet


def qr_multiply(
    a: Any,
    c: Any,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> tuple[Any, ...]:
    """The product of the economic ``Q`` of ``qr(a)`` with ``c``, and ``R``: ``(c @ Q, R)``
    (``mode='right'``; ``c`` of shape ``(m,)`` or ``(p, m)``) or ``(Q @ c, R)``
    (``'left'``; ``c`` of shape ``(k,)`` or ``(k, p)``, ``k = min(m, n)``), plus the
    column permutation with ``pivoting``. ``conjugate`` multiplies by ``Q.conj()``
    instead (nothing changes for real input).

    >>> import numpy as np
    >>> cq, r = qr_multiply(np.array([[3.0, 0.0], [4.0, 5.0]]), np.eye(2))
    >>> np.round(cq, 12).tolist()
    [[-0.6, -0.8], [-0.8, 0.6]]
    """
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: expected mode 'left' or 'right', got {mode!r}.")
    a, c = floats("qr_multiply", a, c, broadcast=False, complex_ok=True)
    sa, sc = _shape(a), _shape(c)
    if len(sa) != 2:
        raise ValueError(f"qr_multiply: expected a 2-D matrix a, got shape {sa}.")
    m, n = sa
    k = min(m, n)
    if mode == "left":
        ok, want = len(sc) in (1, 2) and sc[0] == k, f"({k},) or ({k}, p)"
    else:
        ok, want = len(sc) in (1, 2) and sc[-1] == m, f"({m},) or (p, {m})"
    if not ok:
        raise ValueError(
            f"qr_multiply: expected c of shape {want} for mode={mode!r} and a of shape {sa}, "
            f"got shape {sc}."
        )
    q, *rest = qr(a, mode="economic", pivoting=pivoting)
    if conjugate:
        q = fnp.conj(q)
    return (fnp.matmul(q, c) if mode == "left" else fnp.matmul(c, q), *rest)


_SELECT = {
    "a": "a",
    "all": "a",
    0: "a",
    "v": "v",
    "value": "v",
    1: "v",
    "i": "i",
    "index": "i",
    2: "i",
}


def eigh_tridiagonal(
    d: Any,
    e: Any,
    eigvals_only: bool = False,
    select: Any = "a",
    select_range: Any = None,
    check_finite: bool = True,
    tol: float = 0.0,
    lapack_driver: str = "auto",
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of the symmetric tridiagonal matrix with
    diagonal ``d`` (length ``n``) and off-diagonal ``e`` (length ``n - 1``).

    ``select``: ``'a'`` (all), ``'i'`` (indices ``select_range = (lo, hi)``, inclusive)
    or ``'v'`` (values in the half-open interval ``(vl, vu]``; how many depends on the
    values, so only outside ``jit``). Computed by ``eigh`` of the matrix, so values and
    vectors differentiate (vectors: distinct eigenvalues assumed) and batch over
    leading axes; ``tol`` and ``lapack_driver`` are ignored. Complex ``e`` (or ``d``, whose
    imaginary part is not read), as JAX: the Hermitian matrix with ``e`` below the
    diagonal and ``conj(e)`` above it, real eigenvalues (SciPy takes real input only).

    >>> import numpy as np
    >>> eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True)
    array([1., 3.])
    """
    try:
        how = _SELECT[select]
    except (KeyError, TypeError):
        raise ValueError(
            f"eigh_tridiagonal: expected select 'a', 'v' or 'i', got {select!r}."
        ) from None
    d, e = floats("eigh_tridiagonal", d, e, broadcast=False, complex_ok=True)
    sd, se = _shape(d), _shape(e)
    if len(sd) < 1 or len(se) < 1 or se[-1] != max(sd[-1] - 1, 0):
        raise ValueError(
            f"eigh_tridiagonal: expected d of length n and e of length n - 1, got shapes {sd} "
            f"and {se}."
        )
    n = sd[-1]
    lead = broadcast_shapes("eigh_tridiagonal", sd[:-1], se[:-1])
    values = fnp.concatenate(
        [np.zeros((*lead, 1), _dtype(d)), fnp.broadcast_to(d, (*lead, n)),
         fnp.broadcast_to(e, (*lead, max(n - 1, 0)))],
        axis=-1,
    )  # fmt: skip
    # 0: zero, 1 + i: d[i], 1 + n + i: e[i]; eigh reads the lower triangle (Hermitian)
    index = np.zeros((n, n), np.int64)
    index[np.arange(n), np.arange(n)] = 1 + np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = 1 + n + np.arange(n - 1)
    w, v = fnp.linalg.eigh(fnp.take(values, index, axis=-1))
    if how == "i":
        lo, hi = (int(i) for i in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(
                f"eigh_tridiagonal: expected 0 <= lo <= hi < {n} in select_range, got "
                f"{select_range!r}."
            )
        w, v = w[..., lo : hi + 1], v[..., lo : hi + 1]
    elif how == "v":
        vl, vu = select_range
        known = core.concrete_or_none(stop_gradient(w))
        if known is None or lead:
            raise ConcretizationError(
                "eigh_tridiagonal: select='v' keeps a number of eigenvalues that depends on "
                "their values, so it needs concrete (not jit-traced) 1-D inputs. Use "
                "select='i' with index bounds, or select='a' and a mask."
            )
        keep = np.nonzero((known > vl) & (known <= vu))[0]
        w, v = w[..., keep], v[..., keep]
    return w if eigvals_only else (w, v)
