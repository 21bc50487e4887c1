"""functrace.numpy.linalg: NumPy's ``numpy.linalg`` on arrays and tracers alike.

Plain NumPy inputs call NumPy (same values, dtypes and result types). Traced
inputs are cast like NumPy does (integers and bools to float64; float32 stays
float32) and go through the primitives of ``functrace.lax.linalg``, so every
function here differentiates (forward and reverse, any order), batches and jits.
Stacks of matrices ``(..., m, n)`` work everywhere, as in NumPy.

Decisions (JAX's where NumPy has no gradient convention):

* ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of ``a``, as NumPy does
  (values are NumPy's for every input), and their derivatives are exactly those of
  that function, so finite differences agree for every input: the gradient is zero
  on the triangle not read, and an off-diagonal entry of the triangle read counts
  for both symmetric positions. Along symmetric perturbations this equals the
  symmetrized-tangent convention (HIPS autograd's; JAX's, whose functions
  symmetrize the input); for a symmetric gradient pass ``(a + a.T) / 2``, or
  ``symmetrize_input=True`` to ``cholesky``/``eigh`` (JAX's keyword, whose default
  there is True: both triangles, JAX's values and gradients).
* ``svd`` on traced inputs computes the reduced SVD: ``full_matrices=True`` (NumPy's
  default) raises ``NotImplementedError`` for non-square matrices, since the extra
  columns of the complete SVD are not unique and have no derivative.
  ``hermitian=True`` is accepted and computes the general SVD (a valid SVD; the
  signs of the vectors may differ from NumPy's eigh-based one).
* ``qr`` supports ``mode='reduced'`` and ``'r'`` on tracers (``'complete'`` when it
  equals ``'reduced'``, i.e. ``m <= n``).
* Derivatives of eigenvectors and singular vectors (``eigh``, ``svd``, ``pinv``)
  assume distinct eigenvalues / singular values; ``eigvalsh``, ``svd(...,
  compute_uv=False)`` and the norms do not.
* ``norm`` at zero: the gradient of every norm at the zero vector (and of the
  Frobenius norm at the zero matrix) is 0 (a subgradient), not NaN.
* ``multi_dot`` on tracers multiplies in the cheapest order (as NumPy does).
* ``det``'s gradient is the transposed adjugate, exact at singular matrices (and so
  is its Hessian); ``lstsq``'s derivatives at full rank need no distinct singular
  values (see each function).
* ``lstsq``'s residuals are computed whenever ``M > N`` on traced inputs (NumPy leaves
  them empty for rank-deficient ``a``, a value-dependent shape).
* ``eig``/``eigvals`` take NumPy inputs only (complex results); traced inputs raise.
* Complex traced inputs: ``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``,
  ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr``, ``pinv``, ``lstsq``, ``norm``
  (every ord), ``cond`` and ``matrix_rank`` differentiate as JAX's (``slogdet``'s sign
  is complex and its ``logabsdet`` real; ``cholesky`` and ``eigh`` read the Hermitian
  matrix of one triangle, real diagonal; ``cholesky(upper=True)`` reads the upper
  triangle and returns ``L^H``; eigenvalues, singular values, ``lstsq``'s residuals and
  the norms are real). Eigenvector and singular-vector derivatives take JAX's phases
  (see ``functrace.lax.linalg``): differentiate phase-invariant functions of them. The
  other functions (``tensorinv``, ``tensorsolve``, ``eig``...) raise
  ``NotImplementedError`` on complex traced inputs.

The functions live in ``linalg`` (solves, determinants, decompositions),
``_linalg_norms`` (norms, ``cond``, ``matrix_rank``, ``svdvals``) and ``_linalg_more``
(``lstsq``, the array API's functions, tensor solves, ``eig``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from functrace import core
from functrace.lax import linalg as ll
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, broadcast_shapes, broadcast_to_shape, cast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._linalg import dot, matmul
from functrace.numpy._linalg_more import (
    EigResult,
    cross,
    diagonal,
    eig,
    eigvals,
    lstsq,
    matrix_transpose,
    outer,
    tensordot,
    tensorinv,
    tensorsolve,
    trace,
    vecdot,
)
from functrace.numpy._linalg_norms import (
    cond,
    matrix_norm,
    matrix_rank,
    norm,
    svdvals,
    vector_norm,
)
from functrace.numpy._linalg_util import (
    _NOVALUE,
    LinAlgError,
    _check_matrix,
    _eye_like,
    _float_dtype,
    _matrix,
    _mH,
    _shape,
)
from functrace.numpy._reductions import max as _max
from functrace.numpy._shape import expand_dims


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _uplo(UPLO: Any) -> Literal["L", "U"]:
    u = str(UPLO).upper()
    if u == "L":
        return "L"
    if u == "U":
        return "U"
    raise ValueError(f"eigh: expected UPLO 'L' or 'U', got {UPLO!r}.")


# ---------------------------------------------------------------------------
# Solving and inverting
# ---------------------------------------------------------------------------


@numpy_path(lambda a, b: np.linalg.solve(a, b), promote_args=(0, 1))
def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for ``x``.

    NumPy 2 semantics: ``b`` of shape ``(M,)`` is one vector (also against a stack of
    matrices ``a (..., M, M)``); otherwise ``b`` is ``(..., M, K)`` and the leading
    dimensions of ``a`` and ``b`` broadcast.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
    array([1. , 0.5])
    """
    a = _matrix("solve", a, complex_ok=True)
    b = asarray_or_tracer(b, "solve")
    b_aval = core.get_aval(b)
    dt = np.promote_types(core.get_aval(a).dtype, _float_dtype("solve", b_aval.dtype, True))
    a, b = cast(a, dt), cast(b, dt)
    n = _shape(a)[-1]
    if b_aval.ndim == 1:
        if b_aval.shape[0] != n:
            raise ValueError(
                f"solve: expected b of shape ({n},) or (..., {n}, K) for a of shape "
                f"{_shape(a)}, got shape {b_aval.shape}. The length of b must equal the size "
                f"of the square matrices."
            )
        col = broadcast_to_shape(ls.reshape(b, (n, 1)), _shape(a)[:-2] + (n, 1))
        x = ll.solve(a, col)
        return ls.reshape(x, _shape(x)[:-1])
    if b_aval.ndim < 2 or b_aval.shape[-2] != n:
        raise ValueError(
            f"solve: expected b of shape ({n},) or (..., {n}, K) for a of shape {_shape(a)}, "
            f"got shape {b_aval.shape}. A stack of vectors must have a trailing axis of size "
            f"1: b[..., None] (NumPy 2 semantics)."
        )
    batch = broadcast_shapes("solve", _shape(a)[:-2], b_aval.shape[:-2])
    a = broadcast_to_shape(a, batch + _shape(a)[-2:])
    b = broadcast_to_shape(b, batch + b_aval.shape[-2:])
    return ll.solve(a, b)


@numpy_path(lambda a: np.linalg.inv(a))
def inv(a: Any) -> Any:
    """The inverse of square ``a`` (or of each matrix of a stack), as ``solve(a, I)``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = _matrix("inv", a, complex_ok=True)
    return ll.solve(a, _eye_like(a))


def _np_pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NOVALUE) -> Any:
    if rtol is _NOVALUE:
        return np.linalg.pinv(a, rcond, hermitian)
    return np.linalg.pinv(a, rcond, hermitian, rtol=rtol)


@numpy_path(_np_pinv)
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NOVALUE) -> Any:
    """Moore-Penrose pseudo-inverse via the reduced SVD; singular values at or below
    ``rcond * max(s)`` count as zero (NumPy's cutoff rules for ``rcond``/``rtol``).

    NOTE: the derivative assumes distinct singular values and a rank that does not
    change nearby (the pseudo-inverse jumps where the rank does). ``hermitian`` is
    ignored on traced inputs (the general SVD gives the same pseudo-inverse).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    a = _matrix("pinv", a, square=False, complex_ok=True)
    if rcond is None:
        if rtol is _NOVALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(_shape(a)[-2:]) * np.finfo(core.get_aval(a).dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NOVALUE:
        raise ValueError("pinv: expected rcond or rtol, got both. Pass only rtol.")
    u, s, vt = ll.svd(a, full_matrices=False)
    cutoff = expand_dims(asarray_or_tracer(rcond), -1) * _max(s, axis=-1, keepdims=True)
    large = s > cutoff
    # NOTE: the double where keeps the gradient finite where singular values are cut off.
    s_inv = where(large, 1 / where(large, s, 1), 0)
    return matmul(_mH(vt), expand_dims(s_inv, -1) * _mH(u))


@numpy_path(lambda a, n: np.linalg.matrix_power(a, n))
def matrix_power(a: Any, n: int) -> Any:
    """``a`` multiplied by itself ``n`` times (``n < 0``: powers of ``inv(a)``; ``n == 0``:
    the identity, in ``a``'s dtype).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)
    array([[1, 3],
           [0, 1]])
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: expected an integer exponent, got {n!r}.") from None
    a = asarray_or_tracer(a, "matrix_power")
    aval = core.get_aval(a)
    _check_matrix("matrix_power", aval, square=True)  # the dtype stays, as in NumPy
    if n == 0:
        return _eye_like(cast(a, aval.dtype, False))
    if n < 0:
        a, n = inv(a), -n
    if n == 1:
        return a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    # binary decomposition, in NumPy's order
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def _chain_order(dims: list[int]) -> list[list[int]]:
    """``split[i][j]``: where the cheapest product of matrices i..j splits (matrix chain DP)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


@numpy_path(lambda arrays, *, out=None: np.linalg.multi_dot(list(arrays), out=out))
def multi_dot(arrays: Sequence[Any], *, out: None = None) -> Any:
    """The product of two or more matrices in the cheapest order; the first array may be
    1-D (a row vector) and the last 1-D (a column vector).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.multi_dot([np.ones(2), np.eye(2), np.ones((2, 3))])
    array([2., 2., 2.])
    """
    arrays = list(arrays)
    if out is not None:
        raise TypeError(
            "multi_dot: expected out=None on traced arrays, got an output array. "
            "functrace.numpy never writes in place: use the returned array."
        )
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}.")
    xs = [asarray_or_tracer(x, "multi_dot") for x in arrays]
    first_1d, last_1d = len(_shape(xs[0])) == 1, len(_shape(xs[-1])) == 1
    if first_1d:
        xs[0] = ls.reshape(xs[0], (1, _shape(xs[0])[0]))
    if last_1d:
        xs[-1] = ls.reshape(xs[-1], (_shape(xs[-1])[0], 1))
    for i, x in enumerate(xs):
        if len(_shape(x)) != 2:
            raise LinAlgError(
                f"multi_dot: expected 2-D arrays (the first and last may be "
                f"1-D), got shape {_shape(x)} for array {i}."
            )
    for i in range(len(xs) - 1):
        if _shape(xs[i])[1] != _shape(xs[i + 1])[0]:
            raise ValueError(
                f"multi_dot: expected aligned shapes, got {_shape(xs[i])} and "
                f"{_shape(xs[i + 1])} for arrays {i} and {i + 1}."
            )
    split = _chain_order([_shape(xs[0])[0]] + [_shape(x)[1] for x in xs])

    def product(i: int, j: int) -> Any:
        if i == j:
            return xs[i]
        k = split[i][j]
        return dot(product(i, k), product(k + 1, j))

    res = product(0, len(xs) - 1)
    m, k = _shape(res)
    if first_1d and last_1d:
        return ls.reshape(res, ())
    if first_1d:
        return ls.reshape(res, (k,))
    if last_1d:
        return ls.reshape(res, (m,))
    return res


# ---------------------------------------------------------------------------
# Determinants
# ---------------------------------------------------------------------------


@numpy_path(lambda a: np.linalg.det(a))
def det(a: Any) -> Any:
    """Determinant of square ``a`` (or of each matrix of a stack).

    The gradient is the transposed adjugate ``det(a) * inv(a).T``, computed from an SVD
    without dividing by ``det(a)``: it is exact at singular ``a`` too (the cofactor
    matrix; zero when the rank is below ``n - 1``), and so is the Hessian (JAX's values).

    >>> import numpy as np, functrace.numpy as fnp
    >>> float(fnp.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]])))
    5.000000000000001
    """
    return ll.det(_matrix("det", a, complex_ok=True))


@numpy_path(lambda a: np.linalg.slogdet(a))
def slogdet(a: Any) -> SlogdetResult:
    """``(sign, logabsdet)`` with ``det(a) = sign * exp(logabsdet)``; the sign has
    derivative 0.

    NOTE: at singular ``a`` (``sign == 0``, ``logabsdet == -inf``) the derivative of
    ``logabsdet`` is NaN: it has no finite value there (JAX gives a mix of infinities
    and NaN that depends on its pivoting).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.slogdet(np.array([[-2.0, 0.0], [0.0, 1.0]])).sign
    np.float64(-1.0)
    """
    sign, logabsdet = ll.slogdet(_matrix("slogdet", a, complex_ok=True))
    return SlogdetResult(sign, logabsdet)


# ---------------------------------------------------------------------------
# Decompositions
# ---------------------------------------------------------------------------


def _np_symmetrized(a: Any) -> np.ndarray:
    a = np.asarray(a)
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _symmetrized(fname: str, a: Any) -> Any:
    """``(a + a^H) / 2``: JAX's ``symmetrize_input=True``."""
    a = _matrix(fname, a, complex_ok=True)
    return (a + _mH(a)) * np.asarray(0.5, core.get_aval(a).dtype)


def _np_cholesky(a: Any, /, *, upper: bool = False, symmetrize_input: bool = False) -> Any:
    if symmetrize_input:
        a = _np_symmetrized(a)
    return np.linalg.cholesky(a, upper=True) if upper else np.linalg.cholesky(a)


@numpy_path(_np_cholesky)
def cholesky(a: Any, /, *, upper: bool = False, symmetrize_input: bool = False) -> Any:
    """Cholesky factor of a symmetric positive-definite ``a``: lower ``L`` with
    ``a = L @ L.T`` (or upper ``U = L.T`` with ``upper=True``).

    Only the lower (``upper=True``: upper) triangle of ``a`` is read, as in NumPy, and
    the derivative is that of exactly this function: zero for the other triangle, an
    off-diagonal entry of the triangle read counting for both symmetric positions
    (see ``functrace.lax.linalg``). ``symmetrize_input=True`` (JAX's keyword, and JAX's
    default) reads ``(a + a^H) / 2`` instead: both triangles, JAX's values and its
    symmetric gradient.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[2., 0.],
           [1., 1.]])
    """
    a = _symmetrized("cholesky", a) if symmetrize_input else _matrix("cholesky", a, complex_ok=True)
    if upper:  # the upper triangle of a is the lower one of a^H; U = L^H
        return _mH(ll.cholesky(_mH(a), symmetrize_input=False))
    return ll.cholesky(a, symmetrize_input=False)


@numpy_path(
    lambda a, UPLO="L", symmetrize_input=False: np.linalg.eigh(
        _np_symmetrized(a) if symmetrize_input else a, UPLO=_uplo(UPLO)
    )
)
def eigh(a: Any, UPLO: str = "L", symmetrize_input: bool = False) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric (complex:
    Hermitian) ``a``: ``EighResult(eigenvalues, eigenvectors)``, reading the ``UPLO``
    triangle. The eigenvalues are real. ``symmetrize_input=True`` (JAX's keyword and
    default) reads ``(a + a^H) / 2`` instead: JAX's values and symmetric gradient.

    NOTE: the derivative is that of exactly this function of ``a``: zero for the
    triangle not read, an off-diagonal entry of the triangle read counting for both
    symmetric positions (see ``functrace.lax.linalg``; pass ``(a + a.T) / 2`` for a
    symmetric gradient). The eigenvector derivative assumes distinct eigenvalues (use
    ``eigvalsh`` when only the values are needed: its derivative has no such
    restriction). Complex eigenvectors' derivatives take JAX's phases
    (``diag(v^H dv) = 0``): differentiate functions invariant under a phase per column
    (``abs(v)``, ``v @ diag(c) @ v^H``).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.eigh(np.array([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    array([1., 2.])
    """
    uplo = _uplo(UPLO)
    a = _symmetrized("eigh", a) if symmetrize_input else _matrix("eigh", a, complex_ok=True)
    v, w = ll.eigh(a, lower=uplo == "L", symmetrize_input=False)
    return EighResult(w, v)


@numpy_path(
    lambda a, UPLO="L", *, symmetrize_input=False: np.linalg.eigvalsh(
        _np_symmetrized(a) if symmetrize_input else a, UPLO=_uplo(UPLO)
    )
)
def eigvalsh(a: Any, UPLO: str = "L", *, symmetrize_input: bool = False) -> Any:
    """Eigenvalues (ascending, real) of symmetric (complex: Hermitian) ``a``, reading the
    ``UPLO`` triangle; the derivative is that of exactly this function (zero for the
    triangle not read, see ``eigh``). ``symmetrize_input=True`` (JAX's keyword and
    default) reads ``(a + a^H) / 2`` instead.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[2.0, 0.0], [0.0, 1.0]]))
    array([1., 2.])
    """
    uplo = _uplo(UPLO)
    if symmetrize_input:
        a = _symmetrized("eigvalsh", a)
    else:
        a = _matrix("eigvalsh", a, complex_ok=True)
    return ll.eigh(a, lower=uplo == "L", symmetrize_input=False, eigvals_only=True)


@numpy_path(
    lambda a, full_matrices=True, compute_uv=True, hermitian=False: np.linalg.svd(
        a, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian
    )
)
def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular value decomposition ``SVDResult(U, S, Vh)`` with ``a = U * S @ Vh``
    (``S`` descending), or ``S`` alone with ``compute_uv=False``.

    With ``full_matrices`` (the default) a non-square ``a`` gets square ``U`` and
    ``Vh``, whose extra columns are not unique: they have no derivative (a
    ``NotImplementedError`` under ``grad``/``jvp``, as in JAX; pass
    ``full_matrices=False`` for the reduced SVD). ``S`` is real for complex ``a`` too.
    NOTE: the derivatives of ``U`` and ``Vh`` assume distinct, non-zero singular values; for
    complex ``a`` they take JAX's phases, so differentiate functions invariant under
    ``U -> U D``, ``Vh -> D^H Vh`` for diagonal unitary ``D`` (``U @ diag(c) @ Vh``).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    array([4., 3.])
    """
    a = _matrix("svd", a, square=False, complex_ok=True)
    if not compute_uv:
        return ll.svd(a, compute_uv=False)
    u, s, vt = ll.svd(a, full_matrices=bool(full_matrices))
    return SVDResult(u, s, vt)


@numpy_path(lambda a, mode="reduced": np.linalg.qr(a, mode=mode))
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition ``QRResult(Q, R)`` (``mode='reduced'``; ``'complete'``: a square
    ``Q``) or ``R`` (``mode='r'``).

    For complex ``a``, ``R`` has a real diagonal (LAPACK's Householder QR) and the
    derivatives keep it real, so ``Q`` and ``R`` themselves differentiate. The extra
    columns of a complete ``Q`` (tall ``a``) are not unique: they have no derivative (a
    ``NotImplementedError`` under ``grad``/``jvp``, as in JAX).

    >>> import numpy as np, functrace.numpy as fnp
    >>> q, r = fnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> bool(np.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]]))
    True
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr: expected mode 'reduced', 'complete', 'r' or 'raw', got {mode!r}.")
    a = _matrix("qr", a, square=False, complex_ok=True)
    if mode == "raw":
        raise NotImplementedError(
            f"qr: mode='raw' (LAPACK's Householder vectors) is not supported on traced "
            f"inputs of shape {_shape(a)}. Use mode='reduced', 'complete' or 'r'."
        )
    q, r = ll.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


__all__ = [
    "EigResult",
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]
