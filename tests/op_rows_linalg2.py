"""Op-table rows: the ``adjugate`` primitive, the newer ``functrace.numpy.linalg``
functions (``lstsq``, ``cond``, the array API's) and ``functrace.scipy.linalg``.

Matrices are drawn and conditioned as in ``op_rows_linalg`` (``_gen``, ``_spd``,
``_tall``...). Derivatives at singular matrices (``det``, ``adjugate``) and at
repeated singular values (``lstsq``, ``polar``) use a drawn argument that is always
zero (``ZERO``): the matrix is the fixed special one plus that argument, so finite
differences perturb it in every direction from exactly that point.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

import functrace.lax as lax
import functrace.numpy as fnp
import functrace.scipy.linalg as fsl
from op_db import Arg, F, OpInfo
from op_rows_linalg import MAT, S33, S233, _fix_cols, _gen, _mT, _row, _spd, _tall

L = fnp.linalg
ZERO = Arg(domain=(0.0, 0.0))  # always 0: evaluates at the fixed matrix it is added to

RANK2 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])  # rank n - 1
RANK1 = np.outer([1.0, 2.0, -1.0], [2.0, -1.0, 1.5])  # rank n - 2
SINGULAR_STACK = np.stack([RANK2, RANK1])


def _cofactors_t(a: Any) -> np.ndarray:
    """The adjugate from its definition: signed minors, transposed (any rank)."""
    a = np.asarray(a)
    n = a.shape[-1]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            out[..., j, i] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def _plus(m: np.ndarray) -> Any:
    return lambda xp, z: z + m.astype(z.dtype)


def _first(n: int, shift: float) -> Any:
    """Adds ``shift`` to the first entry of the last axis (a leading coefficient away
    from zero)."""
    return lambda z: z + shift * np.eye(1, n, dtype=z.dtype)[0]


def _adjugate_rows() -> list[OpInfo]:
    return [
        _row(
            "lax.linalg.adjugate",
            lambda a: lax.adjugate(_gen(fnp, a)),
            lambda a: np.linalg.det(_gen(np, a))[..., None, None] * np.linalg.inv(_gen(np, a)),
            (S233,),
            ("adjugate",),
        ),
        _row(
            "lax.linalg.adjugate[singular]",
            lambda z: lax.adjugate(z + SINGULAR_STACK.astype(z.dtype)),
            lambda z: _cofactors_t(z + SINGULAR_STACK.astype(z.dtype)),
            (S233,),
            ("adjugate", "svd"),
            args=(ZERO,),
            grad_order=1,  # its own derivative is exact; the next one differentiates the SVD
        ),
        _row(
            "linalg.det[rank n-1]",
            lambda z: L.det(z + RANK2.astype(z.dtype)),
            lambda z: np.linalg.det(z + RANK2.astype(z.dtype)),
            (S33,),
            ("det", "adjugate"),
            args=(ZERO,),
        ),
        _row(
            "linalg.det[rank n-2]",
            lambda z: L.det(z + RANK1.astype(z.dtype)),
            lambda z: np.linalg.det(z + RANK1.astype(z.dtype)),
            (S33,),
            ("det", "adjugate"),
            args=(ZERO,),
        ),
        _row(
            "linalg.det[zero]",
            L.det,
            np.linalg.det,
            ((4, 4),),
            ("det", "adjugate"),
            args=(ZERO,),
        ),
    ]


# ---------------------------------------------------------------------------
# functrace.numpy.linalg
# ---------------------------------------------------------------------------


def _lstsq(i: int, prep: Any = _tall) -> tuple[Any, Any]:
    def fn(a: Any, b: Any) -> Any:
        return L.lstsq(prep(fnp, a), b, rcond=None)[i]

    def ref(a: Any, b: Any) -> Any:
        return np.linalg.lstsq(prep(np, a), b, rcond=None)[i]

    return fn, ref


def _lstsq_rows() -> list[OpInfo]:
    eye2 = _plus(2 * np.eye(5, 3))
    return [
        _row("linalg.lstsq[x]", *_lstsq(0), ((5, 3), (5,)), ("svd", "qr"), args=(MAT, F)),
        _row("linalg.lstsq[x,wide]", *_lstsq(0), ((3, 5), (3, 2)), ("svd", "qr"), args=(MAT, F)),
        _row("linalg.lstsq[x,square]", *_lstsq(0), (S33, (3, 2)), ("svd", "qr"), args=(MAT, F)),
        _row("linalg.lstsq[residuals]", *_lstsq(1), ((5, 3), (5, 2)), ("svd", "qr"), args=(MAT, F)),
        _row("linalg.lstsq[s]", *_lstsq(3), ((4, 3), (4,)), ("svd",), args=(MAT, F)),
        _row(
            "linalg.lstsq[rank]",
            *_lstsq(2),
            ((4, 3), (4,)),
            ("svd",),
            args=(MAT, F),
            grad=False,
        ),
        _row(  # repeated singular values (all 2): SVD vector derivatives would be infinite
            "linalg.lstsq[x,repeated singular values]",
            *_lstsq(0, eye2),
            ((5, 3), (5,)),
            ("svd", "qr"),
            args=(ZERO, F),
        ),
        _row(  # rank deficient: the minimum-norm solution (values only)
            "linalg.lstsq[x,rank deficient]",
            *_lstsq(0, lambda xp, a: xp.matmul(_tall(xp, a), np.diag([1.0, 1.0, 0.0]))),
            ((5, 3), (5,)),
            ("svd", "qr"),
            args=(MAT, F),
            grad=False,
        ),
    ]


def _numpy_rows() -> list[OpInfo]:
    inf = np.inf
    return [
        _row(
            "linalg.cond",
            lambda a: L.cond(_gen(fnp, a)),
            lambda a: np.linalg.cond(_gen(np, a)),
            (S233,),
            ("svd",),
            # second derivatives ~30 where sigma_min is small: the finite differences'
            # error (they converge to the rule's value as eps shrinks)
            grad_tol=1e-4,
        ),
        _row(
            "linalg.cond[p=-2,tall]",
            lambda a: L.cond(_tall(fnp, a), -2),
            lambda a: np.linalg.cond(_tall(np, a), -2),
            ((4, 3),),
            ("svd",),
        ),
        _row(
            "linalg.cond[p=fro]",
            lambda a: L.cond(_gen(fnp, a), "fro"),
            lambda a: np.linalg.cond(_gen(np, a), "fro"),
            (S33,),
            ("solve",),
        ),
        _row(
            "linalg.cond[p=inf]",
            lambda a: L.cond(_gen(fnp, a), inf),
            lambda a: np.linalg.cond(_gen(np, a), inf),
            (S233,),
            ("solve",),
            grad=False,
        ),
        _row(
            "linalg.matrix_rank",
            lambda a: L.matrix_rank(_tall(fnp, a)),
            lambda a: np.linalg.matrix_rank(_tall(np, a)),
            ((2, 4, 3),),
            ("svd",),
            grad=False,
        ),
        _row(
            "linalg.matrix_rank[deficient,rtol]",
            lambda a: L.matrix_rank(_tall(fnp, a) * np.array([1.0, 1.0, 0.0]), rtol=0.01),
            lambda a: np.linalg.matrix_rank(_tall(np, a) * np.array([1.0, 1.0, 0.0]), rtol=0.01),
            ((4, 3),),
            ("svd",),
            grad=False,
        ),
        _row("linalg.cross", L.cross, np.linalg.cross, ((2, 3), (3,)), ("mul",), args=(F, F)),
        _row(
            "linalg.diagonal[offset=1]",
            lambda x: L.diagonal(x, offset=1),
            lambda x: np.linalg.diagonal(x, offset=1),
            ((2, 3, 4),),
            ("slice",),
            args=(F,),
        ),
        _row(
            "linalg.matrix_norm",
            L.matrix_norm,
            np.linalg.matrix_norm,
            ((2, 3, 4),),
            ("reduce_sum",),
            args=(F,),
        ),
        _row(
            "linalg.matrix_norm[nuc,keepdims]",
            lambda a: L.matrix_norm(_tall(fnp, a), ord="nuc", keepdims=True),
            lambda a: np.linalg.matrix_norm(_tall(np, a), ord="nuc", keepdims=True),
            ((4, 3),),
            ("svd",),
        ),
        _row(
            "linalg.vector_norm",
            L.vector_norm,
            np.linalg.vector_norm,
            ((3, 4),),
            ("reduce_sum",),
            args=(F,),
        ),
        _row(
            "linalg.vector_norm[axes,ord=3,keepdims]",
            lambda x: L.vector_norm(x, axis=(2, 0), ord=3, keepdims=True),
            lambda x: np.linalg.vector_norm(x, axis=(2, 0), ord=3, keepdims=True),
            ((2, 3, 4),),
            ("reduce_sum",),
            args=(F,),
            avoid=(0.0,),
        ),
        _row(
            "linalg.matrix_transpose",
            L.matrix_transpose,
            np.linalg.matrix_transpose,
            ((2, 3, 4),),
            ("transpose",),
            args=(F,),
        ),
        _row("linalg.outer", L.outer, np.linalg.outer, ((3,), (4,)), ("mul",), args=(F, F)),
        _row(
            "linalg.svdvals",
            lambda a: L.svdvals(_tall(fnp, a)),
            lambda a: np.linalg.svdvals(_tall(np, a)),
            ((2, 4, 3),),
            ("svd",),
        ),
        _row(
            "linalg.tensordot[axes=1]",
            lambda a, b: L.tensordot(a, b, axes=1),
            lambda a, b: np.linalg.tensordot(a, b, axes=1),
            ((2, 3), (3, 4)),
            ("dot_general",),
            args=(F, F),
        ),
        _row(
            "linalg.tensorinv",
            lambda a: L.tensorinv(fnp.reshape(_gen(fnp, a), (4, 2, 2)), ind=1),
            lambda a: np.linalg.tensorinv(np.reshape(_gen(np, a), (4, 2, 2)), ind=1),
            ((4, 4),),
            ("solve",),
        ),
        _row(
            "linalg.tensorsolve",
            lambda a, b: L.tensorsolve(fnp.reshape(_gen(fnp, a), (6, 2, 3)), b),
            lambda a, b: np.linalg.tensorsolve(np.reshape(_gen(np, a), (6, 2, 3)), b),
            ((6, 6), (6,)),
            ("solve",),
            args=(MAT, F),
        ),
        _row(
            "linalg.trace[offset=-1]",
            lambda x: L.trace(x, offset=-1),
            lambda x: np.linalg.trace(x, offset=-1),
            ((2, 3, 3),),
            ("reduce_sum",),
            args=(F,),
        ),
        _row("linalg.vecdot", L.vecdot, np.linalg.vecdot, ((2, 3), (4, 1, 3)), (), args=(F, F)),
    ]


# ---------------------------------------------------------------------------
# functrace.scipy.linalg
# ---------------------------------------------------------------------------

SL = scipy.linalg


def _solve(name: str, prep: Any, shapes: Any, **kw: Any) -> OpInfo:
    return _row(
        f"scipy.linalg.solve[{name}]",
        lambda a, b: fsl.solve(prep(fnp, a), b, **kw),
        lambda a, b: SL.solve(prep(np, a), b, **kw),
        shapes,
        ("solve",),
        args=(MAT, F),
    )


def _solve_rows() -> list[OpInfo]:
    return [
        _solve("gen", _gen, (S33, (3,))),
        _solve("batched", _gen, (S233, (2, 3, 2))),
        _solve("sym,lower", _gen, (S33, (3, 2)), assume_a="sym", lower=True),
        _solve("pos", _spd, (S33, (3,)), assume_a="pos"),
        _solve("diagonal", _gen, (S33, (3,)), assume_a="diagonal"),
        _solve("tridiagonal", _gen, ((4, 4), (4,)), assume_a="tridiagonal"),
        _solve("upper triangular,transposed", _gen, (S33, (3, 2)), **_UT),
    ]


_UT = {"assume_a": "upper triangular", "transposed": True}


def _sp(name: str, fn: Any, ref: Any, shapes: Any, args: Any, **kw: Any) -> OpInfo:
    return _row(f"scipy.linalg.{name}", fn, ref, shapes, kw.pop("prims", ("gather",)), args, **kw)


def _special_rows() -> list[OpInfo]:
    conv = [
        _sp(
            f"convolution_matrix[{mode}]",
            lambda a, mode=mode: fsl.convolution_matrix(a, 4, mode),
            lambda a, mode=mode: SL.convolution_matrix(a, 4, mode),
            ((3,),),
            (F,),
        )
        for mode in ("full", "same", "valid")
    ]
    lead4, lead5 = _first(4, 3.0), _first(5, 3.0)
    return conv + [
        _sp("toeplitz", fsl.toeplitz, SL.toeplitz, ((4,), (3,)), (F, F)),
        _sp("toeplitz[batched c]", fsl.toeplitz, SL.toeplitz, ((2, 3),), (F,)),
        _sp("circulant", fsl.circulant, SL.circulant, ((2, 4),), (F,)),
        _sp("hankel", fsl.hankel, SL.hankel, ((3,), (4,)), (F, F)),
        _sp("hankel[c only]", fsl.hankel, SL.hankel, ((3,),), (F,)),
        _sp(
            "companion",
            lambda a: fsl.companion(lead4(a)),
            lambda a: SL.companion(lead4(a)),
            ((4,),),
            (F,),
        ),
        _sp("leslie", fsl.leslie, SL.leslie, ((3,), (2,)), (F, F)),
        _sp("fiedler", fsl.fiedler, SL.fiedler, ((2, 4),), (F,), avoid_ties=True),
        _sp(
            "fiedler_companion",
            lambda a: fsl.fiedler_companion(lead5(a)),
            lambda a: SL.fiedler_companion(lead5(a)),
            ((5,),),
            (F,),
        ),
        _sp(
            "block_diag",
            fsl.block_diag,
            SL.block_diag,
            ((2, 3), (2,), ()),
            (F, F, F),
            prims=("concatenate",),
        ),
        _sp(
            "toeplitz[int]",
            fsl.toeplitz,
            SL.toeplitz,
            ((4,), (3,)),
            (Arg("int", (-5, 5)), Arg("int", (-5, 5))),
            grad=False,
            dtypes=(np.int64,),
        ),
    ]


def _polar(i: int, side: str, prep: Any) -> tuple[Any, Any]:
    return (
        lambda a: fsl.polar(prep(fnp, a), side)[i],
        lambda a: SL.polar(prep(np, a), side)[i],
    )


def _eigh_tri(d: Any, e: Any, xp: Any, vectors: bool) -> Any:
    d = d + 3.0 * np.arange(d.shape[-1], dtype=d.dtype)  # eigenvalues well apart
    if xp is np:
        res = SL.eigh_tridiagonal(d, e, eigvals_only=not vectors)
    else:
        res = fsl.eigh_tridiagonal(d, e, eigvals_only=not vectors)
    return _fix_cols(xp, res[1]) if vectors else res


def _matrix_function_rows() -> list[OpInfo]:
    eye3 = _plus(np.eye(3))
    return [
        _sp("polar[u]", *_polar(0, "right", _gen), (S33,), (MAT,), prims=("svd",)),
        _sp("polar[p,tall]", *_polar(1, "right", _tall), ((4, 3),), (MAT,), prims=("svd",)),
        _sp("polar[u,left,wide]", *_polar(0, "left", _tall), ((3, 4),), (MAT,), prims=("svd",)),
        _sp(
            "polar[p,right,wide]",
            *_polar(1, "right", _tall),
            ((3, 4),),
            (MAT,),
            prims=("svd",),
            grad_order=1,
        ),
        _sp(  # repeated singular values: the Sylvester-equation derivative
            "polar[u,identity]",
            *_polar(0, "right", eye3),
            (S33,),
            (ZERO,),
            prims=("svd",),
            grad_order=1,
        ),
        _sp(
            "sqrtm",
            lambda a: fsl.sqrtm(_gen(fnp, a)),
            lambda a: SL.sqrtm(_gen(np, a)),
            (S33,),
            (MAT,),
            prims=("solve", "while"),
            grad_order=1,
        ),
        _sp(
            "sqrtm[spd,batched]",
            lambda a: fsl.sqrtm(_spd(fnp, a)),
            lambda a: np.stack([SL.sqrtm(m) for m in _spd(np, a)]),
            (S233,),
            (MAT,),
            prims=("solve", "while"),
            grad_order=1,
        ),
        _sp(
            "hessenberg",
            fsl.hessenberg,
            SL.hessenberg,
            ((4, 4),),
            (MAT,),
            prims=("dot_general",),
            grad_tol=1e-3,  # second differences of entries up to ~600 (near-degenerate reflections)
        ),
        _sp(
            "hessenberg[q]",
            lambda a: fsl.hessenberg(a, calc_q=True)[1],
            lambda a: SL.hessenberg(a, calc_q=True)[1],
            ((4, 4),),
            (MAT,),
            prims=("dot_general",),
            grad_order=1,
            grad_tol=1e-4,  # first differences of entries up to ~10
        ),
        _sp(
            "solve_sylvester",
            lambda a, b, q: fsl.solve_sylvester(_gen(fnp, a), _gen(fnp, b), q),
            lambda a, b, q: SL.solve_sylvester(_gen(np, a), _gen(np, b), q),
            (S33, (2, 2), (3, 2)),
            (MAT, MAT, F),
            prims=("solve",),
        ),
        _sp(
            "expm_frechet",
            lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
            # SciPy computes float32 input in float64; functrace keeps float32 (as JAX)
            lambda a, e: SL.expm_frechet(a, e, compute_expm=False).astype(a.dtype),
            (S33, S33),
            (MAT, F),
            prims=("solve",),
            grad_order=1,
        ),
        _sp(
            "eigh_tridiagonal[w]",
            lambda d, e: _eigh_tri(d, e, fnp, False),
            lambda d, e: _eigh_tri(d, e, np, False),
            ((5,), (4,)),
            (F, F),
            prims=("eigh",),
        ),
        _sp(
            "eigh_tridiagonal[v]",
            lambda d, e: _eigh_tri(d, e, fnp, True),
            lambda d, e: _eigh_tri(d, e, np, True),
            ((4,), (3,)),
            (F, F),
            prims=("eigh",),
            grad_order=1,
        ),
        _sp(
            "qr_multiply[left]",
            lambda a, c: fsl.qr_multiply(_tall(fnp, a), c, mode="left")[0],
            lambda a, c: SL.qr_multiply(_tall(np, a), c, mode="left")[0],
            ((5, 3), (3, 2)),
            (MAT, F),
            prims=("qr",),
            grad_order=1,
        ),
        _sp(
            "qr_multiply[right]",
            lambda a, c: fsl.qr_multiply(_tall(fnp, a), c)[0],
            lambda a, c: SL.qr_multiply(_tall(np, a), c)[0],
            ((5, 3), (2, 5)),
            (MAT, F),
            prims=("qr",),
            grad_order=1,
        ),
    ]


# ---------------------------------------------------------------------------
# Complex matrices: the table's arguments are real, so each row builds the complex matrix
# re + i im inside and returns a real function of the complex result (re + 2 im), which
# takes the complex derivatives through every transform stack with real inputs/outputs.
# ---------------------------------------------------------------------------


def _cgen(xp: Any, re: Any, im: Any) -> Any:
    return _gen(xp, re) + 0.5j * im


def _chpd(xp: Any, re: Any, im: Any) -> Any:
    z = re + 0.5j * im
    return xp.matmul(z, xp.conj(xp.swapaxes(z, -1, -2))) + 3 * np.eye(z.shape[-1])


def _ri(xp: Any, w: Any) -> Any:
    return xp.real(w) + 2 * xp.imag(w)


def _complex_row(
    name: str, f: Any, make: Any, shapes: Any, prims: tuple[str, ...], **kw: Any
) -> OpInfo:
    return _row(
        f"linalg.{name}[complex]",
        lambda re, im: _ri(fnp, f(fnp, make(fnp, re, im))),
        lambda re, im: _ri(np, f(np, make(np, re, im))),
        shapes,
        prims,
        **kw,
    )


# The spectral rows differentiate what does not depend on the phase of each eigenvector
# or singular vector (v diag(c) v^H, U diag(c) V^H; q and r of qr are unique), on
# matrices whose eigenvalues / singular values stay apart: (z + z^H) / 4 + diag(0, 4, 8)
# and the tall 0.3 re + diag(9, 6, 3) + 0.15i im. float64 only (the jit compiles are
# the table's slow part): complex64, wide matrices, pinv, lstsq, the norms, cond and
# vdot are compared with JAX's values in tests/test_linalg_complex.py.


def _cherm(xp: Any, re: Any, im: Any) -> Any:
    z = re + 0.5j * im
    n = z.shape[-1]
    return (z + xp.conj(_mT(xp, z))) / 4 + np.diag(4.0 * np.arange(n)).astype(re.dtype)


def _ctall(xp: Any, re: Any, im: Any) -> Any:
    return _tall(xp, re) + 0.15j * im


def _weighted(xp: Any, u: Any, vh: Any) -> Any:
    """``u diag(1, 2, ..., k) vh``: unchanged by a phase per column of u and row of vh."""
    k = u.shape[-1]
    return xp.matmul(u * np.arange(1, k + 1).astype(xp.real(u).dtype), vh)


def _eigh_all(xp: Any, z: Any) -> Any:
    w, v = xp.linalg.eigh(z)
    upper = xp.linalg.eigvalsh(z, UPLO="U")  # eigvals_only, the other triangle
    return _weighted(xp, v, xp.conj(_mT(xp, v))) + w[..., None, :] + upper[..., :, None]


def _svd_all(xp: Any, z: Any) -> Any:
    u, s, vh = xp.linalg.svd(z, full_matrices=False)
    return _weighted(xp, u, vh) + s


def _qr_all(xp: Any, z: Any) -> Any:
    q, r = xp.linalg.qr(z)
    return xp.concatenate([q, r], axis=-2)


F64: dict[str, Any] = {"dtypes": (np.float64,)}


def _complex_rows() -> list[OpInfo]:
    def rhs(xp: Any, z: Any) -> Any:
        return xp.linalg.solve(z, z[..., :2] * (1 - 1j))

    return [
        _complex_row("inv", lambda xp, z: xp.linalg.inv(z), _cgen, (S233, S233), ("solve",)),
        _complex_row("solve", rhs, _cgen, (S33, S33), ("solve",)),
        _complex_row("det", lambda xp, z: xp.linalg.det(z), _cgen, (S233, S233), ("det",)),
        _complex_row(
            "slogdet",
            lambda xp, z: xp.linalg.slogdet(z)[0] * xp.linalg.slogdet(z)[1],
            _cgen,
            (S233, S233),
            ("slogdet",),
        ),
        _complex_row(
            "cholesky", lambda xp, z: xp.linalg.cholesky(z), _chpd, (S233, S233), ("cholesky",)
        ),
        _complex_row("eigh", _eigh_all, _cherm, (S33, S33), ("eigh",), **F64),
        _complex_row("svd", _svd_all, _ctall, ((4, 3), (4, 3)), ("svd",), **F64),
        _complex_row("qr", _qr_all, _ctall, ((4, 3), (4, 3)), ("qr",), **F64),
    ]


def _scipy_complex_row(name: str, f: Any, make: Any, prims: tuple[str, ...], **kw: Any) -> OpInfo:
    """``f(L, xp, z)`` with ``L`` functrace.scipy.linalg or SciPy's, on one 3x3 matrix."""
    return _row(
        f"scipy.linalg.{name}[complex]",
        lambda re, im: _ri(fnp, f(fsl, fnp, make(fnp, re, im))),
        lambda re, im: _ri(np, f(SL, np, make(np, re, im))),
        (S33, S33),
        prims,
        dtypes=(np.float64,),
    )


def _scipy_complex_rows() -> list[OpInfo]:
    # complex128 only (the jit tests compile each row in each dtype, seconds apiece):
    # complex64, expm, sqrtm and hessenberg are checked in test_scipy_linalg_complex.py.
    def rhs(xp: Any, z: Any) -> Any:
        return z[..., :2] * (1 - 1j)

    return [
        _scipy_complex_row(  # lu and triangular solves with conjugate transposes, unit diagonal
            "lu_solve[trans=2]",
            lambda L, xp, z: L.lu_solve(L.lu_factor(z), rhs(xp, z), trans=2),
            _cgen,
            ("lu", "triangular_solve"),
        ),
        _scipy_complex_row(
            "cho_solve",
            lambda L, xp, z: L.cho_solve(L.cho_factor(z), rhs(xp, z)),
            _chpd,
            ("cholesky", "triangular_solve"),
        ),
        _scipy_complex_row(  # the custom JVP with conjugate transposes
            "polar[u]", lambda L, xp, z: L.polar(z)[0], _cgen, ("svd",)
        ),
    ]


def _eig_invariants(xp: Any, a: Any) -> Any:
    """Functions of the eigenvalues that do not depend on their order: the power sums
    ``tr(a^2)``, ``tr(a^3)`` and the product ``det(a)``."""
    if xp is np:
        g = _gen(np, a)
        g2 = g @ g
        return np.stack([np.trace(g2, 0, -2, -1), np.trace(g2 @ g, 0, -2, -1), np.linalg.det(g)])
    (w,) = lax.eig(
        _gen(fnp, a),
        compute_left_eigenvectors=False,
        compute_right_eigenvectors=False,
        enable_eigvec_derivs=True,
    )
    return fnp.real(fnp.stack([fnp.sum(w**2, -1), fnp.sum(w**3, -1), fnp.prod(w, -1)]))


def _lax_linalg_rows() -> list[OpInfo]:
    return [
        _row(
            "lax.linalg.eig[eigenvalues]",
            lambda a: _eig_invariants(fnp, a),
            lambda a: _eig_invariants(np, a),
            (S233,),
            ("eig", "solve"),
        ),
        _row(
            "lax.linalg.qdwh",
            lambda a: lax.linalg.qdwh(_tall(fnp, a))[0],
            lambda a: SL.polar(_tall(np, a))[0],
            ((4, 3),),
            ("qdwh", "svd"),
        ),
    ]


ROWS: list[OpInfo] = (
    _adjugate_rows()
    + _lstsq_rows()
    + _numpy_rows()
    + _solve_rows()
    + _special_rows()
    + _matrix_function_rows()
    + _complex_rows()
    + _scipy_complex_rows()
    + _lax_linalg_rows()
)
