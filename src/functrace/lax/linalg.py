"""Linear-algebra primitives: cholesky, triangular_solve, solve, eigh, svd, qr, det, adjugate,
slogdet, lu; and (from ``_linalg_extra`` and ``_linalg_qdwh``, with their notes there) eig,
schur, hessenberg, tridiagonal, householder_product, ormqr, lu_pivots_to_permutation,
symmetric_product, cholesky_update, qdwh and the enums EigImplementation,
EighImplementation, SvdAlgorithm.

Every primitive works on a matrix ``(m, n)`` or a stack of them ``(..., m, n)``
(NumPy's ``np.linalg`` functions broadcast over the leading axes, so the impls
are plain NumPy calls and the batching rules only move the vmapped axis to the
front). Operands are float32 or float64 (also complex64/complex128 for ``solve``,
``triangular_solve``, ``cholesky``, ``eigh``, ``svd``, ``qr``, ``det``, ``adjugate``,
``slogdet`` and ``lu``, with JAX's derivatives); float32 in gives float32 out. Each
primitive is one block: NumPy impl, abstract eval (eager calls run it too, so
they raise the same errors), JVP written with lax operations (so derivatives of
any order work), transpose for the primitives linear in an operand, batching.
The ``triangular_solve`` and ``lu`` blocks live in ``_linalg_lu`` (re-exported here).

Decisions (JAX's semantics unless noted):

* The public functions have JAX's signatures and defaults: ``eigh`` returns ``(v, w)``,
  ``svd`` and ``qr`` give complete factors (``full_matrices=True``; a non-square one has
  no derivative, as in JAX), ``cholesky`` and ``eigh`` read ``(x + x^H) / 2``
  (``symmetrize_input=True``). ``functrace.numpy.linalg`` calls them with NumPy's
  choices (reduced factors where NumPy's are, one triangle read).
* The ``cholesky`` and ``eigh`` primitives read only one triangle of ``a`` (the lower
  one for cholesky; ``lower`` chooses for eigh), exactly as LAPACK and NumPy do, so their
  values are NumPy's for any input, and their derivatives are the exact
  derivatives of that function: the symmetric matrix the decomposition sees is
  ``S = T + T^T - diag(T)`` with ``T`` the triangle read, so the tangent is
  ``dS = tri(da) + tri_strict(da)^T``. The gradient is zero on the triangle not
  read, and an off-diagonal entry of the triangle read counts for both symmetric
  positions (twice the symmetric gradient). Along symmetric perturbations this
  agrees with the symmetrized-tangent convention of HIPS autograd and JAX (whose
  ``eigh``/``cholesky`` symmetrize the input first); only the gradient matrix
  itself differs (not symmetric). For a symmetric gradient, pass
  ``(a + a^T) / 2``.
* ``triangular_solve(a, b, lower, transpose_a, conjugate_a=, unit_diagonal=,
  left_side=)`` solves ``op(a) x = b`` (left side, the default) or ``x op(a) = b``
  with ``op(a)`` one of ``a``, ``a.T``, ``conj(a)``, ``a^H``, reading only the chosen
  triangle of ``a`` (its strict part with ``unit_diagonal``). As in JAX, its transpose
  in ``b`` flips ``transpose_a`` and keeps ``conjugate_a`` (a plain transpose).
* Complex ``cholesky`` reads the Hermitian matrix ``T + T^H - diag(T)`` of the lower
  triangle ``T`` with the real part of the diagonal (as LAPACK): its JVP is real-linear
  in ``da``, not complex-linear; along Hermitian tangents it is JAX's.
* ``solve`` and ``triangular_solve`` take ``b`` of shape ``(..., n, k)`` with the
  same leading axes as ``a``; both are linear in ``b`` (transpose: a solve with
  ``a.T``), so reverse mode is linearize + transpose.
* ``eigh`` (``eigvals_only``) and ``svd`` (``compute_uv``) have a values-only
  variant whose JVP needs no eigenvector/singular-vector derivative, so it stays
  finite at repeated eigenvalues/singular values. The vector derivatives assume
  distinct eigenvalues (eigh) and distinct non-zero singular values (svd); they
  are infinite otherwise, as in every autodiff system.
* The ``svd`` primitive's derivative is that of the reduced ("economy") decomposition:
  ``u (..., m, k)``, ``s (..., k)``, ``vt (..., k, n)`` with ``k = min(m, n)``; ``qr``'s
  too (``q (..., m, k)``, ``r (..., k, n)``; its JVP assumes the leading ``k x k``
  block of ``a`` is non-singular). Their ``full_matrices`` forms compute the complete
  factors (LAPACK's) and raise ``NotImplementedError`` under ``jvp``/``grad``.
* Complex ``eigh`` reads the Hermitian matrix of the triangle chosen (real diagonal, as
  complex ``cholesky``) and gives real eigenvalues; complex ``svd`` gives real singular
  values. Eigenvectors and singular vectors are unique up to a phase per column; their
  derivatives take JAX's phases (``diag(V^H dV) = 0`` for eigh; for svd the imaginary
  diagonal part ``i im(diag(U^H da V)) / s`` all in ``dU``), so functions invariant
  under those phases (``|v|``, ``v v^H``, ``U diag(c) V^H``) have the exact derivative.
  Complex ``qr`` gives ``r`` a real diagonal (LAPACK's Householder reflections do), and
  its JVP keeps it real (JAX's): ``q`` and ``r`` themselves are differentiable.
* ``det``: ``d det = tr(adj(a) da)`` with the ``adjugate`` primitive (``det(a) a^-1``
  computed from an SVD without division), so the gradient and the Hessian of ``det``
  are exact at singular ``a`` too (JAX's values: the adjugate, zero below rank n-1).
  ``slogdet``: ``d logabsdet = tr(a^-1 da)``, the sign has derivative zero; at singular
  ``a`` (``logabsdet = -inf``) the derivative is NaN.
* Singular or non-positive-definite inputs give NaN results, not an exception (as in
  JAX): ``solve``/``triangular_solve`` of a singular matrix and ``cholesky`` of a
  matrix that is not positive definite fill that matrix's result with NaN, as do
  ``svd``, ``eigh`` and ``adjugate`` for a matrix with inf or NaN entries. A
  transform may evaluate a factorization on values the program never uses (the
  untaken branch of a ``cond`` under ``vmap``, whose residuals are zeros), so these
  primitives must not raise. Plain NumPy calls (``functrace.numpy.linalg`` on NumPy
  arrays) keep NumPy's ``LinAlgError``.
* ``triangular_solve``'s impl is ``np.linalg.solve`` on the chosen triangle (NumPy has
  no triangular solver; SciPy is not a runtime dependency).
* ``jit`` boundary: these primitives have no Numba emitter; the generated driver
  calls their NumPy (LAPACK) impls, between the compiled kernels around them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.lax._linalg_extra import (
    EighImplementation,
    EigImplementation,
    SvdAlgorithm,
    check_enum,
    cholesky_update,
    cholesky_update_p,
    eig,
    eig_p,
    hessenberg,
    hessenberg_p,
    householder_product,
    householder_product_p,
    lu_pivots_to_permutation,
    lu_pivots_to_permutation_p,
    ormqr,
    ormqr_p,
    schur,
    schur_p,
    symmetric_product,
    symmetric_product_p,
    tridiagonal,
    tridiagonal_p,
)
from functrace.lax._linalg_lu import lu, lu_p, triangular_solve, triangular_solve_p
from functrace.lax._linalg_qdwh import qdwh, qdwh_p
from functrace.lax._linalg_util import (
    _batch_binary,
    _batch_unary,
    _check_matrix,
    _check_rhs,
    _check_square,
    _cols,
    _cols_of,
    _const,
    _diag,
    _from_triangle,
    _inverse_gaps,
    _is_complex,
    _like,
    _masked,
    _mH,
    _mm,
    _mT,
    _nan_where_singular,
    _register_checked,
    _rows,
    _rows_of,
    _shape,
    _trace,
    _tril,
    _triu,
)
from functrace.lax._tridiagonal import tridiagonal_solve
from functrace.lax.elementwise import add, convert_element_type, div, eq, mul, neg, sign, sub
from functrace.lax.extras import complex as _complex
from functrace.lax.extras import conj, imag, real
from functrace.lax.reductions import argmax, cumprod, reduce_sum
from functrace.lax.shapes import (
    broadcast_in_dim,
    concatenate,
    iota,
    pad,
)

# ---------------------------------------------------------------------------
# solve: a x = b (LU with partial pivoting, NumPy's gesv)
# ---------------------------------------------------------------------------


def _solve_abstract(a: ShapedArray, b: ShapedArray) -> ShapedArray:
    _check_rhs("solve", a, b)
    return ShapedArray(b.shape, b.dtype)


def _solve_impl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _nan_where_singular(np.linalg.solve, a, b)


solve_p = _register_checked(Primitive("solve"), _solve_impl, _solve_abstract)


def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for square ``a (..., n, n)`` and ``b (..., n, k)``."""
    return solve_p.bind(a, b)


def _solve_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    # x = A^-1 b: dx = A^-1 (db - dA x)
    a, b = primals
    ga, gb = tangents
    x = solve(a, b)
    rhs: Any = Zero.from_primal(x) if type(gb) is Zero else gb
    if type(ga) is not Zero:
        rhs = ad.add_tangents(rhs, neg(_mm(ga, x)))
    return x, solve(a, rhs)


def _solve_transpose(ct: Any, a: Any, b: Any) -> list[Any]:
    # linear in b: b -> A^-1 b transposes to ct -> A^-T ct
    if ad.is_undefined_primal(a):
        raise ValueError(
            "solve transpose: expected a known matrix a, got a linear one (the "
            "map is linear in b only)."
        )
    return [None, solve(_mT(a), ct)]


ad.jvp_rules[solve_p] = _solve_jvp
ad.transpose_rules[solve_p] = _solve_transpose
ad.linear_primitives.add(solve_p)
batching.batching_rules[solve_p] = _batch_binary(solve_p)

# ---------------------------------------------------------------------------
# cholesky: a = L L^T, L lower triangular (reads the lower triangle of a)
# ---------------------------------------------------------------------------


def _cholesky_abstract(a: ShapedArray) -> ShapedArray:
    _check_square("cholesky", a, complex_ok=True)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_impl(a: np.ndarray) -> np.ndarray:
    return _nan_where_singular(np.linalg.cholesky, a)


cholesky_p = _register_checked(Primitive("cholesky"), _cholesky_impl, _cholesky_abstract)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor ``L`` of ``x = L @ L^H`` (JAX's ``lax.linalg.cholesky``):
    of ``(x + x^H) / 2`` with ``symmetrize_input`` (the default, as JAX), else of the
    lower triangle of ``x`` alone (NumPy's reading; the derivative is then that of
    exactly this function: zero for the upper triangle, see the module notes)."""
    return cholesky_p.bind(_symmetrized("cholesky", x) if symmetrize_input else x)


def _symmetrized(fname: str, x: Any) -> Any:
    """``(x + x^H) / 2``: the Hermitian part JAX's decompositions read by default."""
    _check_square(fname, core.get_aval(x), complex_ok=True)
    return mul(add(x, _mH(x)), _const(x, np.array(0.5)))


def _cholesky_jvp(g: Any, L: Any, a: Any) -> Any:
    # dA = dL L^H + L dL^H  =>  dL = L Phi(L^-1 dA L^-H), Phi: strict lower part + half
    # diagonal (real: L has a real diagonal); dA built from the lower triangle read (see the
    # module notes), Hermitian, so L^-1 dA L^-H = L^-1 (L^-1 dA)^H. Real: ^H is ^T.
    g = _from_triangle(g, lower=True)
    left = triangular_solve(L, g, lower=True)  # L^-1 dA
    x = triangular_solve(L, _mH(left), lower=True)
    n = _shape(a)[-1]
    return _mm(L, _masked(x, np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)))


ad.defjvp2(cholesky_p, _cholesky_jvp)
batching.batching_rules[cholesky_p] = _batch_unary(cholesky_p)

# ---------------------------------------------------------------------------
# eigh: a = V diag(w) V^T, w ascending (reads the lower or upper triangle of a)
# ---------------------------------------------------------------------------


def _eigh_abstract(a: ShapedArray, *, lower: bool, eigvals_only: bool) -> list[ShapedArray]:
    _check_square("eigh", a, complex_ok=True)
    w = ShapedArray(a.shape[:-1], _real_dtype(a.dtype))  # real for Hermitian a too
    return [w] if eigvals_only else [w, ShapedArray(a.shape, a.dtype)]


def _eigh_impl(a: np.ndarray, *, lower: bool, eigvals_only: bool) -> list[np.ndarray]:
    uplo: Literal["L", "U"] = "L" if lower else "U"

    def run(a: np.ndarray) -> list[np.ndarray]:
        if eigvals_only:
            return [np.linalg.eigvalsh(a, UPLO=uplo)]
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return [w, v]

    return _nan_where_nonfinite(run, a)


eigh_p = _register_checked(Primitive("eigh", multiple_results=True), _eigh_impl, _eigh_abstract)


def eigh(
    x: Any,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    implementation: EighImplementation | None = None,
    eigvals_only: bool = False,
) -> Any:
    """JAX's ``lax.linalg.eigh``: ``(v, w)``, the eigenvectors ``v`` (columns) and the
    eigenvalues ``w`` (ascending, real) of symmetric (complex: Hermitian) ``x``: of
    ``(x + x^H) / 2`` with ``symmetrize_input`` (the default), else of the matrix its
    ``lower`` (or upper) triangle stands for (the derivative is then that of exactly
    this function: zero for the triangle not read, see the module notes).
    ``subset_by_index=(lo, hi)`` keeps eigenvalues ``lo`` to ``hi - 1``. The eigenvalues
    come sorted whatever ``sort_eigenvalues`` says (JAX allows either).
    ``implementation`` (an ``EighImplementation`` or None) is accepted; every choice
    runs LAPACK. ``eigvals_only=True`` (functrace's) returns ``w`` alone, whose
    derivative needs no eigenvectors."""
    check_enum("eigh", "implementation", implementation, EighImplementation)
    a = _symmetrized("eigh", x) if symmetrize_input else x
    outs = eigh_p.bind(a, lower=bool(lower), eigvals_only=bool(eigvals_only))
    if subset_by_index is not None:
        lo, hi = _subset("eigh", subset_by_index, _shape(a)[-1])
        outs = [_cols(o, lo, hi) for o in outs]
    return outs[0] if eigvals_only else (outs[1], outs[0])


def _subset(fname: str, subset: Any, k: int) -> tuple[int, int]:
    """A ``subset_by_index=(lo, hi)`` checked against ``k`` eigen/singular values."""
    try:
        lo, hi = (int(i) for i in subset)
    except (TypeError, ValueError):
        raise TypeError(
            f"{fname}: expected subset_by_index as a pair of ints (lo, hi), got {subset!r}."
        ) from None
    if not 0 <= lo < hi <= k:
        raise ValueError(
            f"{fname}: expected subset_by_index with 0 <= lo < hi <= {k}, got {subset!r}."
        )
    return lo, hi


def _eigh_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool, eigvals_only: bool
) -> tuple[list[Any], list[Any]]:
    # M = V^H dA V: dw = diag(M) (real: M is Hermitian); dV = V (F o M), F_ij = 1 / (w_j -
    # w_i) off the diagonal, so diag(V^H dV) = 0 (JAX's phases for complex eigenvectors).
    # dA is built from the triangle read: see the module notes.
    (a,), (g,) = primals, tangents
    w, v = eigh_p.bind(a, lower=lower, eigvals_only=False)
    outs = [w] if eigvals_only else [w, v]
    if type(g) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    m = _mm(_mH(v), _mm(_from_triangle(g, lower), v))
    dw = real(_diag(m)) if _is_complex(m) else _diag(m)
    if eigvals_only:
        return outs, [dw]
    return outs, [dw, _mm(v, mul(_like(_inverse_gaps(w), m), m))]


ad.jvp_rules[eigh_p] = _eigh_jvp
batching.batching_rules[eigh_p] = _batch_unary(eigh_p)

# ---------------------------------------------------------------------------
# svd (reduced): a = U diag(s) Vt, s descending
# ---------------------------------------------------------------------------


def _svd_abstract(
    a: ShapedArray, *, compute_uv: bool, full_matrices: bool = False
) -> list[ShapedArray]:
    _check_matrix("svd", a, complex_ok=True)
    *lead, m, n = a.shape
    k = min(m, n)
    s = ShapedArray((*lead, k), _real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [ShapedArray((*lead, m, ku), a.dtype), s, ShapedArray((*lead, kv, n), a.dtype)]


def _real_dtype(dt: np.dtype) -> np.dtype:
    return (
        np.dtype(np.float32)
        if dt == np.complex64
        else np.dtype(np.float64)
        if dt.kind == "c"
        else dt
    )


def _nan_where_nonfinite(fn: Callable[[np.ndarray], list[np.ndarray]], a: np.ndarray) -> Any:
    """``fn(a)`` for a stack of matrices, with NaN results for the matrices holding inf or
    NaN (on which LAPACK's iterations fail to converge and NumPy raises)."""
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    if not bad.any():
        return fn(a)
    outs = fn(np.where(bad[..., None, None], 0, a).astype(a.dtype))
    lead = bad.ndim
    return [np.where(bad.reshape(bad.shape + (1,) * (o.ndim - lead)), np.nan, o) for o in outs]


def _svd_impl(a: np.ndarray, *, compute_uv: bool, full_matrices: bool = False) -> list[np.ndarray]:
    def run(a: np.ndarray) -> list[np.ndarray]:
        if not compute_uv:
            return [np.linalg.svd(a, compute_uv=False)]
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
        return [u, s, vt]

    return _nan_where_nonfinite(run, a)


svd_p = _register_checked(Primitive("svd", multiple_results=True), _svd_impl, _svd_abstract)


def svd(
    x: Any,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    algorithm: SvdAlgorithm | None = None,
) -> Any:
    """JAX's ``lax.linalg.svd`` of ``x (..., m, n)``: ``(u, s, vt)`` with the
    ``k = min(m, n)`` singular values ``s`` descending, or ``s`` alone without
    ``compute_uv``. ``full_matrices`` (the default, as JAX) gives square ``u (m, m)``
    and ``vt (n, n)``, whose extra columns are not unique, so a non-square one has no
    derivative (JAX's ``NotImplementedError``); ``full_matrices=False`` the reduced
    ``u (m, k)``, ``vt (k, n)``. ``subset_by_index=(lo, hi)`` keeps singular values
    ``lo`` to ``hi - 1`` (reduced only). ``algorithm`` (an ``SvdAlgorithm`` or None)
    is accepted; every choice runs LAPACK."""
    check_enum("svd", "algorithm", algorithm, SvdAlgorithm)
    _check_matrix("svd", core.get_aval(x), complex_ok=True)
    m, n = _shape(x)[-2:]
    full = bool(full_matrices) and bool(compute_uv) and m != n
    if full and subset_by_index is not None:
        raise ValueError("svd: expected full_matrices=False with subset_by_index, got True.")
    outs = svd_p.bind(x, compute_uv=bool(compute_uv), full_matrices=full)
    if subset_by_index is not None:
        lo, hi = _subset("svd", subset_by_index, min(m, n))
        outs = [_cols(o, lo, hi) for o in outs[:2]] + [_rows(o, lo, hi) for o in outs[2:]]
    return tuple(outs) if compute_uv else outs[0]


def _svd_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, compute_uv: bool, full_matrices: bool
) -> tuple[list[Any], list[Any]]:
    # dP = U^H dA V, ds = re(diag(dP)), F_ij = 1 / (s_j^2 - s_i^2) off the diagonal;
    # dU = U (F o (dP S + S dP^H) + D) + (I - U U^H) dA V S^-1   (the last term: m > n)
    # dV = V (F o (S dP + dP^H S)) + (I - V V^H) dA^H U S^-1     (the last term: n > m)
    # D = (dP - dP^H) / 2 S^-1 on the diagonal (i im(dP_ii) / s_i, zero for real a) is
    # JAX's choice of phases for complex a: all of it in U, diag(V^H dV) = 0; a zero s_i
    # gets 0 there, as in JAX.
    (a,), (g,) = primals, tangents
    if full_matrices:
        raise NotImplementedError(
            f"svd: expected full_matrices=False to differentiate the SVD of a non-square "
            f"matrix, got full_matrices=True for shape {_shape(a)}: the extra columns of "
            f"the square U or Vt are not unique, so they have no derivative."
        )
    u, s, vt = svd_p.bind(a, compute_uv=True, full_matrices=False)
    outs = [u, s, vt] if compute_uv else [s]
    if type(g) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    v = _mH(vt)
    gv = _mm(g, v)
    dp = _mm(_mH(u), gv)
    ds = real(_diag(dp)) if _is_complex(a) else _diag(dp)
    if not compute_uv:
        return outs, [ds]
    k_shape = _shape(dp)
    sa = _like(s, a)
    s_cols, s_rows = _cols_of(sa, k_shape), _rows_of(sa, k_shape)
    f = _like(_inverse_gaps(s, square=True), a)
    dph = _mH(dp)
    inner = mul(f, add(mul(dp, s_cols), mul(s_rows, dph)))
    if _is_complex(a):
        k = k_shape[-1]
        half_skew = _masked(sub(dp, dph), 0.5 * np.eye(k))
        inner = add(inner, mul(half_skew, _rows_of(_like(_safe_inverse(s), a), k_shape)))
    du = _mm(u, inner)
    dv = _mm(v, mul(f, add(mul(s_rows, dp), mul(dph, s_cols))))
    m, n = _shape(a)[-2:]
    if m > n:
        du = add(du, div(sub(gv, _mm(u, dp)), _cols_of(sa, _shape(gv))))
    if n > m:
        ghu = _mm(_mH(g), u)
        dv = add(dv, div(sub(ghu, _mm(v, dph)), _cols_of(sa, _shape(ghu))))
    return outs, [du, ds, _mH(dv)]


def _safe_inverse(s: Any) -> Any:
    """``1 / s``, and 0 where ``s == 0``."""
    zero = convert_element_type(eq(s, _const(s, np.zeros(()))), core.get_aval(s).dtype)
    return sub(div(_const(s, np.ones(())), add(s, zero)), zero)


ad.jvp_rules[svd_p] = _svd_jvp
batching.batching_rules[svd_p] = _batch_unary(svd_p)

# ---------------------------------------------------------------------------
# qr (reduced): a = Q R, Q (..., m, k) orthonormal columns, R (..., k, n) upper
# ---------------------------------------------------------------------------


def _qr_abstract(a: ShapedArray, *, full_matrices: bool = False) -> list[ShapedArray]:
    _check_matrix("qr", a, complex_ok=True)
    *lead, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*lead, m, k), a.dtype), ShapedArray((*lead, k, n), a.dtype)]


def _qr_impl(a: np.ndarray, *, full_matrices: bool = False) -> list[np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


qr_p = _register_checked(Primitive("qr", multiple_results=True), _qr_impl, _qr_abstract)


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True, use_magma: Any = None) -> Any:
    """JAX's ``lax.linalg.qr``: ``(q, r)`` of ``x (..., m, n)`` (Householder, as NumPy;
    for complex ``x``, ``r`` has a real diagonal, as LAPACK's). ``full_matrices`` (the
    default, as JAX) gives a square ``q (m, m)``, whose extra columns (``m > n``) are
    not unique, so that one has no derivative (JAX's ``NotImplementedError``);
    ``full_matrices=False`` the reduced ``q (m, k)``, ``r (k, n)``, ``k = min(m, n)``.
    Column pivoting is ``functrace.scipy.linalg.qr(a, pivoting=True)``; ``use_magma``
    (a GPU choice) is accepted."""
    if pivoting:
        raise NotImplementedError(
            "lax.linalg.qr: expected pivoting=False, got True. Column pivoting (LAPACK's "
            "geqp3) is functrace.scipy.linalg.qr(a, pivoting=True)."
        )
    _check_matrix("qr", core.get_aval(x), complex_ok=True)
    m, n = _shape(x)[-2:]
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices) and m > n)
    return q, r


def _qr_jvp_tall(q: Any, r: Any, g: Any) -> tuple[Any, Any]:
    # m >= n. Z = dA R^-1, C = Q^H Z, Omega = Q^H dQ (skew-Hermitian) = tril(C, -1) -
    # tril(C, -1)^H + i im(diag(C)); dR = (C - Omega) R (upper triangular, with diag(dR) /
    # diag(R) real: R's diagonal stays real, as LAPACK makes it), dQ = Q (Omega - C) + Z.
    z = _mT(triangular_solve(r, _mT(g), lower=False, transpose_a=True))
    c = _mm(_mH(q), z)
    low = _tril(c, -1)
    omega = sub(low, _mH(low))
    if _is_complex(c):
        k = _shape(c)[-1]
        omega = add(omega, _masked(sub(c, _like(real(c), c)), np.eye(k)))
    return add(_mm(q, sub(omega, c)), z), _mm(sub(c, omega), r)


def _qr_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool
) -> tuple[list[Any], list[Any]]:
    (a,), (g,) = primals, tangents
    if full_matrices:
        raise NotImplementedError(
            f"qr: expected full_matrices=False to differentiate the QR decomposition of a "
            f"tall matrix, got full_matrices=True for shape {_shape(a)}: the extra columns "
            f"of the square Q are not unique, so they have no derivative."
        )
    q, r = qr_p.bind(a, full_matrices=False)
    if type(g) is Zero:
        return [q, r], [Zero.from_primal(q), Zero.from_primal(r)]
    m, n = _shape(a)[-2:]
    if m >= n:
        return [q, r], list(_qr_jvp_tall(q, r, g))
    # Wide: a = [X | Y] with X square; Q R_X = X and R = [R_X | Q^H Y].
    dq, dr_x = _qr_jvp_tall(q, _cols(r, 0, m), _cols(g, 0, m))
    dr_y = add(_mm(_mH(dq), _cols(a, m, n)), _mm(_mH(q), _cols(g, m, n)))
    return [q, r], [dq, concatenate([dr_x, dr_y], len(_shape(a)) - 1)]


ad.jvp_rules[qr_p] = _qr_jvp
batching.batching_rules[qr_p] = _batch_unary(qr_p)

# ---------------------------------------------------------------------------
# det and slogdet
# ---------------------------------------------------------------------------


def _det_abstract(a: ShapedArray) -> ShapedArray:
    _check_square("det", a, complex_ok=True)
    return ShapedArray(a.shape[:-2], a.dtype)


def _det_impl(a: np.ndarray) -> Any:
    return np.linalg.det(a)


det_p = _register_checked(Primitive("det"), _det_impl, _det_abstract)


def det(a: Any) -> Any:
    """Determinant of square ``a (..., n, n)``."""
    return det_p.bind(a)


# d det = tr(adj(A) dA) (complex-linear: a plain transpose); the adjugate is finite at
# singular A, where det A^-1 is not
ad.defjvp(det_p, lambda g, a: reduce_sum(mul(_mT(adjugate(a)), g), _last_two(a)))
batching.batching_rules[det_p] = _batch_unary(det_p)


def _last_two(x: Any) -> tuple[int, int]:
    nd = len(_shape(x))
    return (nd - 2, nd - 1)


# ---------------------------------------------------------------------------
# adjugate: adj(A) = det(A) A^-1 (the transposed cofactor matrix), defined for every A
# ---------------------------------------------------------------------------
#
# With an SVD A = U diag(s) V^T and sigma = det(U) det(V) = +-1,
#     adj(A) = sigma V diag(p) U^T,   p_i = prod_{l != i} s_l,
# which needs no division, so it is exact at singular A (rank n-1: one non-zero term;
# lower rank: zero). Its derivative follows from adj(U M V^T) = sigma V adj(M) U^T with
# M = diag(s) + F, F = U^T dA V, and the derivative of adj at a diagonal matrix:
#     d adj(diag(s))[F]_ii = sum_k q_ik F_kk,   d adj(diag(s))[F]_ij = -q_ij F_ij (i != j),
# q_ij = prod_{l != i, j} s_l (q_ii = 0). Again no division: the Hessian of det is exact
# at singular matrices too. Any SVD of A gives the same values (both formulas are
# polynomials in A), so repeated singular values are harmless; only derivatives of
# order three and more of det differentiate the SVD itself.


def _adjugate_abstract(a: ShapedArray) -> ShapedArray:
    _check_square("adjugate", a, complex_ok=True)
    return ShapedArray(a.shape, a.dtype)


def _exclusive_products_np(s: np.ndarray) -> np.ndarray:
    """``p_i = prod_{l != i} s_l`` along the last axis, without division."""
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    before = np.concatenate([ones, np.cumprod(s[..., :-1], axis=-1)], axis=-1)
    after = np.flip(np.cumprod(np.flip(s[..., 1:], -1), axis=-1), -1)
    return before * np.concatenate([after, ones], axis=-1)


def _adjugate_impl(a: np.ndarray) -> np.ndarray:
    if a.shape[-1] == 0:
        return np.zeros(a.shape, a.dtype)
    finite = np.isfinite(a).all(axis=(-2, -1))
    safe = np.where(finite[..., None, None], a, np.eye(a.shape[-1], dtype=a.dtype))
    u, s, vt = np.linalg.svd(safe)
    # sigma = det(U) det(V^H): +-1, or a unit complex number (np.sign of complex is z / |z|)
    sigma = np.sign(np.linalg.det(u) * np.linalg.det(vt)).astype(a.dtype)
    p = _exclusive_products_np(s)
    adj = np.matmul(
        np.conj(np.swapaxes(vt, -1, -2)) * p[..., None, :], np.conj(np.swapaxes(u, -1, -2))
    )
    adj = adj * sigma[..., None, None]
    return np.where(finite[..., None, None], adj, np.nan).astype(a.dtype)


adjugate_p = _register_checked(Primitive("adjugate"), _adjugate_impl, _adjugate_abstract)


def adjugate(a: Any) -> Any:
    """The adjugate ``det(a) inv(a)`` of square ``a (..., n, n)`` (the transposed matrix
    of cofactors), finite for singular ``a`` too; its derivative is exact everywhere."""
    return adjugate_p.bind(a)


def _shift_in_one(x: Any, right: bool) -> Any:
    """``x`` shifted by one along its last axis, a 1 entering at the vacated end."""
    nd = len(_shape(x))
    cfg = ((0, 0, 0),) * (nd - 1) + (((1, -1, 0),) if right else ((-1, 1, 0),))
    return pad(x, np.ones((), core.get_aval(x).dtype)[()], cfg)


def _pair_products(s: Any) -> Any:
    """``q_ij = prod_{l != i, j} s_l`` for ``i != j`` and ``q_ii = 0`` (lax operations)."""
    n = _shape(s)[-1]
    shape = _shape(s) + (n,)
    nd = len(shape)
    before = _rows_of(_shift_in_one(cumprod(s, nd - 2), right=True), shape)  # prod_{l < i}
    after = _cols_of(_shift_in_one(cumprod(s, nd - 2, reverse=True), right=False), shape)
    # between[i, j] = prod_{i < l < j} s_l: cumulative products of s masked to l > i
    later = _const(before, np.triu(np.ones((n, n)), 1))
    masked = add(mul(_cols_of(s, shape), later), sub(_const(before, np.ones((n, n))), later))
    between = _shift_in_one(cumprod(masked, nd - 1), right=True)
    upper = _triu(mul(mul(before, between), after), 1)
    return add(upper, _mT(upper))


def _adjugate_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (g,) = primals, tangents
    out = adjugate(a)
    if type(g) is Zero:
        return out, Zero.from_primal(out)
    # Complex A = U diag(s) V^H: the same with ^H for ^T and sigma = det(U) det(V^H), a
    # unit complex number; the map stays complex-linear in dA (F = U^H dA V).
    u, s, vt = svd_p.bind(a, compute_uv=True, full_matrices=False)
    v = _mH(vt)
    shape = _shape(a)
    sigma = sign(mul(det(u), det(vt)))
    f = _mm(_mH(u), _mm(g, v))  # F = U^H dA V
    q = _pair_products(s)
    if _is_complex(a):
        q = _like(q, a)
    on_diag = reduce_sum(mul(q, _cols_of(_diag(f), shape)), (len(shape) - 1,))
    d_adj_s = sub(_masked(_rows_of(on_diag, shape), np.eye(shape[-1])), mul(q, f))
    nd = len(shape)
    sigma_m = broadcast_in_dim(sigma, shape, tuple(range(nd - 2)))
    return out, mul(sigma_m, _mm(v, _mm(d_adj_s, _mH(u))))


ad.jvp_rules[adjugate_p] = _adjugate_jvp
batching.batching_rules[adjugate_p] = _batch_unary(adjugate_p)


def _slogdet_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("slogdet", a, complex_ok=True)
    # complex a: a complex sign (unit modulus) and a real logabsdet, as NumPy
    return [ShapedArray(a.shape[:-2], a.dtype), ShapedArray(a.shape[:-2], _real_dtype(a.dtype))]


def _slogdet_impl(a: np.ndarray) -> list[Any]:
    sign, logabsdet = np.linalg.slogdet(a)
    return [sign, logabsdet]


slogdet_p = _register_checked(
    Primitive("slogdet", multiple_results=True), _slogdet_impl, _slogdet_abstract
)


def slogdet(a: Any) -> Any:
    """``[sign, log|det a|]`` of square ``a (..., n, n)``."""
    return slogdet_p.bind(a)


def _slogdet_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    # real: d sign = 0, d log|det A| = tr(A^-1 dA). Complex (JAX's): with t = tr(A^-1 dA),
    # d log|det A| = re(t) and d sign = i im(t) sign.
    (a,), (g,) = primals, tangents
    sign, logabsdet = slogdet(a)
    if type(g) is Zero:
        return [sign, logabsdet], [Zero.from_primal(sign), Zero.from_primal(logabsdet)]
    t = _trace(solve(a, g))
    if not _is_complex(a):
        return [sign, logabsdet], [Zero.from_primal(sign), t]
    ds = mul(sign, mul(_like(imag(t), t), np.array(1j, core.get_aval(t).dtype)[()]))
    return [sign, logabsdet], [ds, real(t)]


ad.jvp_rules[slogdet_p] = _slogdet_jvp
batching.batching_rules[slogdet_p] = _batch_unary(slogdet_p)

# ---------------------------------------------------------------------------
# Derivatives of eig and qdwh (their primitives live in _linalg_extra and _linalg_qdwh;
# the rules need solve and svd)
# ---------------------------------------------------------------------------


def _eig_vec_jvp(w: Any, v: Any, da: Any) -> tuple[Any, Any]:
    # P = V^-1 dA V: dw = diag(P); dV = V (F o P) + V diag(c) with F_ij = 1 / (w_j - w_i)
    # off the diagonal and c fixing geev's normalization: re(v_j^H dv_j) = 0 (unit norm)
    # and im(dv_kj / v_kj) = 0 at the largest component k of v_j (it stays real).
    shape = _shape(v)
    n, nd = shape[-1], len(shape)
    eye = np.eye(n)
    gaps = sub(_cols_of(w, shape), _rows_of(w, shape))
    f = div(_const(gaps, 1 - eye), add(gaps, _const(gaps, eye)))
    p = _mm(solve(v, da), v)
    dw = _diag(p)
    u = _mm(v, mul(f, p))
    mag = real(mul(v, conj(v)))
    k = argmax(mag, nd - 2, np.int32)
    rows = broadcast_in_dim(iota(np.int32, n), shape, (nd - 2,))
    at_k = eq(rows, broadcast_in_dim(k, shape, (*range(nd - 2), nd - 1)))
    mask = _like(convert_element_type(at_k, core.get_aval(mag).dtype), v)

    def col_sum(x: Any) -> Any:
        return reduce_sum(x, (nd - 2,))

    c_re = neg(real(col_sum(mul(conj(v), u))))
    c_im = neg(div(imag(col_sum(mul(mask, u))), real(col_sum(mul(mask, v)))))
    c = _complex(c_re, c_im)
    return dw, add(u, mul(v, _cols_of(c, shape)))


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    left, right = params["compute_left_eigenvectors"], params["compute_right_eigenvectors"]
    if (left or right) and not params["enable_eigvec_derivs"]:
        raise NotImplementedError(
            "eig: derivatives of eigenvectors are only valid for distinct eigenvalues (and "
            "a unique largest component per eigenvector), which cannot be checked; pass "
            "enable_eigvec_derivs=True to opt in, or compute eigenvalues only "
            "(compute_left_eigenvectors=False, compute_right_eigenvectors=False)."
        )
    full = eig_p.bind(a, **{**params, "compute_right_eigenvectors": True})
    outs = full if right else full[:-1]
    if type(da) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    w, vr = full[0], full[-1]
    dac = _like(da, vr) if not _is_complex(da) else da
    if not (left or right):
        nd = len(_shape(vr))
        return outs, [reduce_sum(mul(solve(vr, dac), _mT(vr)), (nd - 1,))]
    dw, dvr = _eig_vec_jvp(w, vr, dac)
    tans = [dw]
    if left:
        tans.append(_eig_vec_jvp(conj(w), full[1], _mH(dac))[1])
    if right:
        tans.append(dvr)
    return outs, tans


ad.jvp_rules[eig_p] = _eig_jvp


def _qdwh_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    # The polar decomposition x = U H (x = W S V^H, U = W V^H): with dP = W^H dx V,
    # dU = W (F o (dP - dP^H)) V^H + (I - W W^H) dx V S^-1 V^H, F_ij = 1 / (s_i + s_j)
    # (finite for full-rank x, repeated singular values too), and dH = herm(dU^H x +
    # U^H dx). The iteration count and the convergence flag have no tangent.
    (x,), (dx,) = primals, tangents
    outs = qdwh_p.bind(x, **params)
    zeros = [Zero.from_primal(o) for o in outs]
    if type(dx) is Zero:
        return outs, zeros
    u = outs[0]
    w, s, vt = svd_p.bind(x, compute_uv=True, full_matrices=False)
    v = _mH(vt)
    kshape = _shape(vt)[:-1] + (_shape(vt)[-2],)
    sa = _like(s, x)
    sums = add(_cols_of(sa, kshape), _rows_of(sa, kshape))
    f = div(_const(sums, np.ones(kshape[-2:])), sums)
    dxv = _mm(dx, v)
    dp = _mm(_mH(w), dxv)
    du = _mm(w, _mm(mul(f, sub(dp, _mH(dp))), vt))
    m, n = _shape(x)[-2:]
    if m > n:
        rest = sub(dxv, _mm(w, dp))
        du = add(du, _mm(div(rest, _cols_of(sa, _shape(rest))), vt))
    g = add(_mm(_mH(du), x), _mm(_mH(u), dx))
    half = np.asarray(0.5, core.get_aval(g).dtype)[()]
    dh = mul(add(g, _mH(g)), _const(g, half))
    return outs, [du, dh, zeros[2], zeros[3]]


ad.jvp_rules[qdwh_p] = _qdwh_jvp


__all__ = [
    "adjugate",
    "adjugate_p",
    "cholesky",
    "cholesky_p",
    "cholesky_update",
    "cholesky_update_p",
    "det",
    "det_p",
    "eig",
    "eig_p",
    "eigh",
    "eigh_p",
    "EighImplementation",
    "EigImplementation",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "ormqr",
    "ormqr_p",
    "qdwh",
    "qdwh_p",
    "qr",
    "qr_p",
    "schur",
    "schur_p",
    "slogdet",
    "slogdet_p",
    "solve",
    "solve_p",
    "svd",
    "svd_p",
    "SvdAlgorithm",
    "symmetric_product",
    "symmetric_product_p",
    "triangular_solve",
    "triangular_solve_p",
    "tridiagonal",
    "tridiagonal_p",
    "tridiagonal_solve",
]
