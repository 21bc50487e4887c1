"""The rest of ``functrace.lax.linalg`` (re-exported there): ``eig``, ``schur``,
``hessenberg``, ``tridiagonal``, ``householder_product``, ``ormqr``,
``lu_pivots_to_permutation``, ``symmetric_product``, ``cholesky_update``, ``qdwh`` and
the enums ``EigImplementation``, ``EighImplementation``, ``SvdAlgorithm``.

Every primitive here batches over leading axes, and its NumPy impl is what ``jit``'s
driver calls (no Numba emitter). Decisions (JAX's semantics unless noted):

* Packed forms are LAPACK's (``_householder_np``): ``hessenberg`` gives ``(a, taus)``
  as ``gehrd``, ``tridiagonal`` gives ``(a, d, e, taus)`` as ``sytrd``/``hetrd`` (the
  triangle not read is returned untouched), and ``householder_product`` / ``ormqr``
  build or apply ``Q`` from such reflectors (``orgqr`` / ``ormqr``).
* ``eig`` returns complex ``[w, vl, vr]`` (the ones asked for); ``vr`` is LAPACK's
  ``geev`` (unit norm, largest component real). ``vl`` (``vl^H a = w vl^H``) comes
  from the inverse of ``vr``, normalized the same way with the largest component real
  and positive (LAPACK leaves the sign of a real left eigenvector to its algorithm).
  Derivatives: eigenvalues always; eigenvectors with ``enable_eigvec_derivs=True``
  (under ``geev``'s normalization), as JAX; otherwise ``NotImplementedError``.
* ``schur`` gives the real Schur form of a real matrix (2x2 blocks for complex pairs)
  and the complex one of a complex matrix; the form is not unique (order of the
  eigenvalues, signs of the vectors) and may differ from LAPACK's ``gees``.
* ``qdwh`` runs the dynamically weighted Halley iteration (the weights, the switch
  from QR- to Cholesky-based steps, the stopping test and the final Newton-Schulz
  step as JAX describes them), in NumPy. Its derivative is that of the polar
  decomposition itself (not of the iteration's steps), in both modes: JAX's reverse
  mode fails on the iteration's ``while_loop``.
* No derivatives (a ``NotImplementedError`` naming the function, as JAX has no rule):
  ``schur``, ``hessenberg``, ``tridiagonal``, ``householder_product``, ``ormqr``,
  ``symmetric_product``, ``cholesky_update``. ``lu_pivots_to_permutation`` is integer.
* Failures give NaN (inf or NaN input, a Schur iteration that does not converge), as
  JAX; they never raise.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax import _householder_np as hh
from functrace.lax._linalg_util import (
    _check_float,
    _check_matrix,
    _check_square,
    _masked,
    _mT,
    _register_checked,
    _shape,
)
from functrace.lax._schur_np import complex_schur, real_schur
from functrace.lax.elementwise import add


class EigImplementation(enum.Enum):
    """Choice of algorithm for ``eig`` (JAX's names; every choice runs LAPACK's ``geev``
    through NumPy here)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Choice of algorithm for ``eigh`` (JAX's names; every choice runs LAPACK's
    ``syevd``/``heevd`` through NumPy here)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Choice of algorithm for ``svd`` (JAX's names; every choice runs LAPACK's
    ``gesdd`` through NumPy here)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def check_enum(fname: str, arg: str, value: Any, kind: type[enum.Enum]) -> None:
    """Raise a ``TypeError`` unless ``value`` is ``None`` or a member of ``kind``."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(
            f"{fname}: expected {arg} to be None or a lax.linalg.{kind.__name__} member, "
            f"got {value!r}."
        )


def _no_derivative(fname: str) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        raise NotImplementedError(
            f"{fname}: differentiation is not supported (JAX defines no derivative for "
            f"lax.linalg.{fname} either)."
        )

    return rule


def _batch_all(p: Primitive) -> Any:
    # every operand gets the vmapped axis in front (an unbatched one is broadcast)
    def rule(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> Any:
        size = batching.batch_size(vals, bdims)
        args = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims)]
        out = p.bind(*args, **params)
        return (out, [0] * len(out)) if p.multiple_results else (out, 0)

    return rule


def _register(p: Primitive, impl: Any, abstract: Any, fname: str | None = None) -> Primitive:
    _register_checked(p, impl, abstract)
    batching.batching_rules[p] = _batch_all(p)
    if fname is not None:
        ad.jvp_rules[p] = _no_derivative(fname)
    return p


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.empty(0, dt).real.dtype


def _complex_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex64) if dt in (np.float32, np.complex64) else np.dtype(np.complex128)


def _finite_or_nan(fn: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """``fn(*arrays)`` (a list of results with the arrays' leading axes), NaN for the
    matrices holding inf or NaN (the first array's)."""
    bad = ~np.isfinite(arrays[0]).all(axis=(-2, -1))
    if not bad.any():
        return list(fn(*arrays))
    safe = [np.where(bad[..., None, None], 0, arrays[0]).astype(arrays[0].dtype), *arrays[1:]]
    outs = fn(*safe)
    lead = bad.ndim
    return [
        np.where(bad.reshape(bad.shape + (1,) * (o.ndim - lead)), np.nan, o).astype(o.dtype)
        for o in outs
    ]


def _same_lead(fname: str, *avals: ShapedArray, ranks: Sequence[int]) -> tuple[int, ...]:
    leads = [a.shape[: a.ndim - r] for a, r in zip(avals, ranks)]
    if any(lead != leads[0] for lead in leads):
        raise ValueError(
            f"{fname}: expected operands with equal leading (batch) dimensions, got shapes "
            f"{[a.shape for a in avals]}."
        )
    return leads[0]


# ---------------------------------------------------------------------------
# hessenberg, tridiagonal (packed, LAPACK's gehrd and sytrd/hetrd)
# ---------------------------------------------------------------------------


def _hessenberg_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("hessenberg", a, complex_ok=True)
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype)]


hessenberg_p = _register(
    Primitive("hessenberg", multiple_results=True),
    lambda a: _finite_or_nan(hh.gehrd, a),
    _hessenberg_abstract,
    "hessenberg",
)


def hessenberg(a: Any) -> tuple[Any, Any]:
    """Reduce square ``a (..., n, n)`` to upper Hessenberg form: ``(a, taus)`` packed as
    LAPACK's ``gehrd`` (the Hessenberg matrix on and above the first subdiagonal, the
    Householder vectors below it, their scalar factors ``taus (..., n - 1)``)."""
    h, taus = hessenberg_p.bind(a)
    return h, taus


def _tridiagonal_abstract(a: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    _check_square("tridiagonal", a, complex_ok=True)
    lead, n = a.shape[:-2], a.shape[-1]
    rdt = _real_dtype(a.dtype)
    k = max(n - 1, 0)
    return [
        ShapedArray(a.shape, a.dtype),
        ShapedArray(lead + (n,), rdt),
        ShapedArray(lead + (k,), rdt),
        ShapedArray(lead + (k,), a.dtype),
    ]


tridiagonal_p = _register(
    Primitive("tridiagonal", multiple_results=True),
    lambda a, *, lower: _finite_or_nan(lambda x: hh.sytrd(x, lower), a),
    _tridiagonal_abstract,
    "tridiagonal",
)


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """Reduce the symmetric (Hermitian) matrix of one triangle of ``a`` (``lower`` or
    upper) to tridiagonal form: ``(a, d, e, taus)`` packed as LAPACK's ``sytrd``/``hetrd``
    (diagonal ``d``, off-diagonal ``e``, the Householder vectors beyond the off-diagonal
    of the triangle read, whose other triangle is returned as given)."""
    out, d, e, taus = tridiagonal_p.bind(a, lower=bool(lower))
    return out, d, e, taus


# ---------------------------------------------------------------------------
# householder_product (orgqr), ormqr
# ---------------------------------------------------------------------------


def _check_reflectors(fname: str, a: ShapedArray, taus: ShapedArray) -> None:
    _check_matrix(fname, a, complex_ok=True)
    if taus.ndim < 1:
        raise ValueError(f"{fname}: expected taus of shape (..., k), got shape {taus.shape}.")
    _same_lead(fname, a, taus, ranks=(2, 1))
    if taus.dtype != a.dtype:
        raise TypeError(
            f"{fname}: expected a and taus of one dtype, got {a.dtype.name} and {taus.dtype.name}."
        )
    m, n = a.shape[-2:]
    if taus.shape[-1] > min(m, n):
        raise ValueError(
            f"{fname}: expected at most min(m, n) = {min(m, n)} reflectors (taus (..., k)), "
            f"got k = {taus.shape[-1]} for a of shape {a.shape}."
        )


def _householder_product_abstract(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    _check_reflectors("householder_product", a, taus)
    if a.shape[-2] < a.shape[-1]:
        raise ValueError(
            f"householder_product: expected a (..., m, n) with m >= n, got shape {a.shape}."
        )
    return ShapedArray(a.shape, a.dtype)


householder_product_p = _register(
    Primitive("householder_product"),
    hh.orgqr,
    _householder_product_abstract,
    "householder_product",
)


def householder_product(a: Any, taus: Any) -> Any:
    """The first ``n`` columns of ``Q = H_0 ... H_{k-1}``, the product of the Householder
    reflectors stored below the diagonal of ``a (..., m, n)`` (``m >= n``) with scalar
    factors ``taus (..., k)`` (LAPACK's ``orgqr``/``ungqr``)."""
    return householder_product_p.bind(a, taus)


def _ormqr_abstract(
    a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool, transpose: bool
) -> ShapedArray:
    _check_reflectors("ormqr", a, taus)
    _check_matrix("ormqr", c, complex_ok=True)
    _same_lead("ormqr", a, c, ranks=(2, 2))
    if c.dtype != a.dtype:
        raise TypeError(
            f"ormqr: expected a and c of one dtype, got {a.dtype.name} and {c.dtype.name}."
        )
    m = a.shape[-2]
    if c.shape[-2 if left else -1] != m:
        where = "rows" if left else "columns"
        raise ValueError(
            f"ormqr: expected c with {m} {where} (the rows of a; left={left}), got a of shape "
            f"{a.shape} and c of shape {c.shape}."
        )
    return ShapedArray(c.shape, c.dtype)


ormqr_p = _register(
    Primitive("ormqr"),
    lambda a, taus, c, *, left, transpose: hh.ormqr(a, taus, c, left, transpose),
    _ormqr_abstract,
    "ormqr",
)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c`` (``left``), ``c @ Q`` (not ``left``), or with ``Q^H`` (``transpose``), for
    the ``m x m`` ``Q`` of the Householder reflectors of ``a (..., m, n)`` and ``taus
    (..., k)`` (LAPACK's ``ormqr``/``unmqr``), without forming ``Q``."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# ---------------------------------------------------------------------------
# lu_pivots_to_permutation
# ---------------------------------------------------------------------------


def _pivots_abstract(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    fname = "lu_pivots_to_permutation"
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu":
        raise TypeError(
            f"{fname}: expected integer pivots of shape (..., k), got {pivots.dtype.name} of "
            f"shape {pivots.shape}."
        )
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"{fname}: expected permutation_size >= the number of pivots {pivots.shape[-1]}, "
            f"got {permutation_size}."
        )
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


def _pivots_impl(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    lead, k = pivots.shape[:-1], pivots.shape[-1]
    flat = pivots.reshape(math.prod(lead), k)
    perm = np.broadcast_to(
        np.arange(permutation_size, dtype=np.int32), (flat.shape[0], permutation_size)
    ).copy()
    rows = np.arange(flat.shape[0])
    for i in range(k):
        j = flat[:, i]
        if ((j < 0) | (j >= permutation_size)).any():
            raise ValueError(
                f"lu_pivots_to_permutation: expected pivots in [0, {permutation_size}), got "
                f"{int(j[(j < 0) | (j >= permutation_size)][0])}."
            )
        pi, pj = perm[:, i].copy(), perm[rows, j].copy()
        perm[:, i], perm[rows, j] = pj, pi
    return perm.reshape(lead + (permutation_size,))


lu_pivots_to_permutation_p = _register(
    Primitive("lu_pivots_to_permutation"), _pivots_impl, _pivots_abstract
)
ad.defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation (int32, ``(..., permutation_size)``) made by the row swaps
    ``pivots (..., k)`` of ``lu`` (row ``i`` swapped with row ``pivots[i]``, in order).
    A pivot out of range is a ``ValueError`` on concrete values."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# ---------------------------------------------------------------------------
# symmetric_product, cholesky_update
# ---------------------------------------------------------------------------


def _symmetric_product_abstract(
    a: ShapedArray, c: ShapedArray, *, alpha: float, beta: float
) -> ShapedArray:
    _check_matrix("symmetric_product", a)
    _check_square("symmetric_product", c)
    _same_lead("symmetric_product", a, c, ranks=(2, 2))
    if a.shape[-2] != c.shape[-1] or a.dtype != c.dtype:
        raise ValueError(
            f"symmetric_product: expected a (..., m, n) and c (..., m, m) of one dtype, got "
            f"{a.dtype.name} {a.shape} and {c.dtype.name} {c.shape}."
        )
    return ShapedArray(c.shape, c.dtype)


def _symmetric_product_impl(a: np.ndarray, c: np.ndarray, *, alpha: float, beta: float) -> Any:
    out = alpha * np.matmul(a, np.swapaxes(a, -1, -2)) + beta * c
    return out.astype(c.dtype)


symmetric_product_p = _register(
    Primitive("symmetric_product"),
    _symmetric_product_impl,
    _symmetric_product_abstract,
    "symmetric_product",
)


def symmetric_product(
    a_matrix: Any,
    c_matrix: Any,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    symmetrize_output: bool = False,
) -> Any:
    """``alpha * a @ a.T + beta * c`` for real ``a (..., m, n)`` and ``c (..., m, m)``.
    The whole matrix is computed (JAX guarantees the lower triangle only, unless
    ``symmetrize_output``, which copies the lower triangle to the upper one)."""
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
    if symmetrize_output:
        n = _shape(out)[-1]
        low = _masked(out, np.tril(np.ones((n, n)), -1))
        out = add(_masked(out, np.tril(np.ones((n, n)))), _mT(low))
    return out


def _cholesky_update_abstract(r: ShapedArray, w: ShapedArray) -> ShapedArray:
    _check_square("cholesky_update", r)
    _check_float("cholesky_update", w)
    if w.shape != r.shape[:-1] or w.dtype != r.dtype:
        raise ValueError(
            f"cholesky_update: expected r (n, n) and w (n,) of one dtype, got "
            f"{r.dtype.name} {r.shape} and {w.dtype.name} {w.shape}."
        )
    return ShapedArray(r.shape, r.dtype)


def _cholesky_update_impl(r: np.ndarray, w: np.ndarray) -> np.ndarray:
    # Givens rotations (LAPACK's rotg): row k of r and w rotate so that w[k] becomes 0
    lead, n = r.shape[:-2], r.shape[-1]
    rr = np.array(r.reshape(math.prod(lead), n, n), copy=True)
    z = np.array(w.reshape(math.prod(lead), n), copy=True)
    for k in range(n):
        x, y = rr[:, k, k], z[:, k]
        scale = np.maximum(np.abs(x), np.abs(y))
        zero_y = y == 0
        safe = np.where(zero_y, 1, scale)
        xs, ys = x / safe, y / safe
        rh = 1 / np.sqrt(xs * xs + ys * ys)
        c = np.where(zero_y, 1, xs * rh)[:, None]
        s = np.where(zero_y, 0, -ys * rh)[:, None]
        row = rr[:, k, :]
        rr[:, k, :], z = c * row - s * z, c * z + s * row
    return rr.reshape(lead + (n, n))


cholesky_update_p = _register(
    Primitive("cholesky_update"),
    _cholesky_update_impl,
    _cholesky_update_abstract,
    "cholesky_update",
)


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of ``r.T @ r + w w^T`` from the upper factor ``r (n, n)``
    of ``r.T @ r`` and ``w (n,)``, in ``O(n^2)`` (Givens rotations). Real only, and 2-D
    (JAX's ranks; ``vmap`` batches it)."""
    for name, x, rank in (("r_matrix", r_matrix, 2), ("w_vector", w_vector, 1)):
        if len(_shape(np.asarray(x) if not isinstance(x, core.Tracer) else x)) != rank:
            raise ValueError(
                f"cholesky_update: expected {name} with {rank} dimension(s), got shape {_shape(x)}."
            )
    return cholesky_update_p.bind(r_matrix, w_vector)


# ---------------------------------------------------------------------------
# eig
# ---------------------------------------------------------------------------


def _eig_abstract(
    a: ShapedArray,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: Any,
) -> list[ShapedArray]:
    _check_square("eig", a, complex_ok=True)
    cdt = _complex_dtype(a.dtype)
    outs = [ShapedArray(a.shape[:-1], cdt)]
    outs += [ShapedArray(a.shape, cdt)] * (compute_left_eigenvectors + compute_right_eigenvectors)
    return outs


def _phase_normalize(v: np.ndarray) -> np.ndarray:
    """Columns of unit norm with their largest-magnitude component real and positive."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    big = np.take_along_axis(v, k, axis=-2)
    return v * (np.conj(big) / np.abs(big))


def _eig_impl(
    a: np.ndarray,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: Any,
) -> list[np.ndarray]:
    cdt = _complex_dtype(a.dtype)

    def run(a: np.ndarray) -> list[np.ndarray]:
        n = a.shape[-1]
        if n == 0:
            w, vr = np.zeros(a.shape[:-1], cdt), np.zeros(a.shape, cdt)
        else:
            w, vr = np.linalg.eig(a)
        outs = [w.astype(cdt)]
        if compute_left_eigenvectors:
            vl = np.conj(np.swapaxes(np.linalg.inv(vr.astype(cdt)), -1, -2)) if n else vr
            outs.append((_phase_normalize(vl) if n else vl).astype(cdt))
        if compute_right_eigenvectors:
            outs.append(vr.astype(cdt))
        return outs

    return _finite_or_nan(run, a)


eig_p = _register(Primitive("eig", multiple_results=True), _eig_impl, _eig_abstract)


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: EigImplementation | None = None,
    use_magma: bool | None = None,
) -> list[Any]:
    """Eigenvalues ``w`` and left/right eigenvectors of a general square ``x (..., n, n)``:
    ``[w, vl, vr]`` (complex; the eigenvectors only as asked), LAPACK's ``geev`` values
    (see the module notes for ``vl``'s normalization). Eigenvalues are differentiable;
    eigenvectors with ``enable_eigvec_derivs=True`` (distinct eigenvalues assumed).
    ``use_magma`` is accepted and ignored (so is ``implementation``: always LAPACK)."""
    check_enum("eig", "implementation", implementation, EigImplementation)
    outs = eig_p.bind(
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs),
        implementation=implementation,
    )
    return list(outs)


# ---------------------------------------------------------------------------
# schur
# ---------------------------------------------------------------------------


def _schur_abstract(
    a: ShapedArray, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[ShapedArray]:
    _check_square("schur", a, complex_ok=True)
    if sort_eig_vals:
        raise NotImplementedError("schur: sort_eig_vals=True is not supported (nor by JAX).")
    return [ShapedArray(a.shape, a.dtype)] * (2 if compute_schur_vectors else 1)


def _schur_one(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        return complex_schur(m) if m.dtype.kind == "c" else real_schur(m)
    except np.linalg.LinAlgError:
        nan = np.full(m.shape, np.nan, m.dtype)
        return nan, nan


def _schur_impl(
    a: np.ndarray, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[np.ndarray]:
    def run(a: np.ndarray) -> list[np.ndarray]:
        n = a.shape[-1]
        flat = a.reshape(math.prod(a.shape[:-2]), n, n)
        pairs = [_schur_one(m) for m in flat]
        t = np.array([p[0] for p in pairs], a.dtype).reshape(a.shape)
        z = np.array([p[1] for p in pairs], a.dtype).reshape(a.shape)
        return [t, z] if compute_schur_vectors else [t]

    return _finite_or_nan(run, a)


schur_p = _register(
    Primitive("schur", multiple_results=True), _schur_impl, _schur_abstract, "schur"
)


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> Any:
    """Schur decomposition ``x = q @ t @ q^H`` of square ``x (..., n, n)``: ``(t, q)``, or
    ``t`` alone without ``compute_schur_vectors``. Real ``x`` gives the real Schur form
    (2x2 blocks for complex eigenvalue pairs). Not unique: the eigenvalues' order on the
    diagonal may differ from LAPACK's. ``select_callable`` is ignored, as in JAX."""
    outs = schur_p.bind(
        x,
        compute_schur_vectors=bool(compute_schur_vectors),
        sort_eig_vals=bool(sort_eig_vals),
        select_callable=None,
    )
    return (outs[0], outs[1]) if compute_schur_vectors else outs[0]


__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "check_enum",
    "cholesky_update",
    "cholesky_update_p",
    "eig",
    "eig_p",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "ormqr",
    "ormqr_p",
    "schur",
    "schur_p",
    "symmetric_product",
    "symmetric_product_p",
    "tridiagonal",
    "tridiagonal_p",
]
