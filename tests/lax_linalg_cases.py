"""``jax.lax.linalg`` cases for the decompositions added after the first set: ``eig``,
``schur``, ``hessenberg``, ``tridiagonal``, ``householder_product``, ``ormqr``,
``lu_pivots_to_permutation``, ``symmetric_product``, ``cholesky_update`` and ``qdwh``,
run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/lax_linalg_jax.npz`` was recorded, ``functrace`` in
tests/test_lax_linalg_more.py. The packed forms (LAPACK's) are compared as they are;
outputs that are not unique are first normalized here with NumPy (left eigenvectors:
largest component real and positive; Schur forms: their eigenvalues, sorted). Nothing
here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(7)
A5 = _rng.standard_normal((5, 5))
A3B = _rng.standard_normal((2, 3, 3))
C4 = _rng.standard_normal((4, 4)) + 1j * _rng.standard_normal((4, 4))
SYM5 = A5 + A5.T
HERM4 = C4 + C4.conj().T
TALL = _rng.standard_normal((6, 4))
TALL_C = _rng.standard_normal((5, 3)) + 1j * _rng.standard_normal((5, 3))
REFL = _rng.standard_normal((5, 3))
TAUS = np.array([1.2, 0.4, 1.7])
REFL_C = _rng.standard_normal((4, 4)) + 1j * _rng.standard_normal((4, 4))
TAUS_C = np.array([1.1 + 0.3j, 0.8 - 0.5j])
CMAT = _rng.standard_normal((5, 2))
SPD = A5 @ A5.T + 5 * np.eye(5)
W5 = _rng.standard_normal(5)
# distinct eigenvalues (a complex pair among them), a well-conditioned eigenbasis
EIG4 = np.array(
    [[1.0, 2.0, 0.5, 0.0], [-1.5, 0.3, 0.2, 0.4], [0.1, 0.7, 2.5, -0.3], [0.2, 0.0, 0.6, -1.0]]
)
DEIG = _rng.standard_normal((4, 4))


def lead_positive(v: np.ndarray) -> np.ndarray:
    """Columns with their largest-magnitude component made real and positive."""
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    big = np.take_along_axis(v, k, axis=-2)
    return v * (np.conj(big) / np.abs(big))


def schur_eigenvalues(t: np.ndarray) -> np.ndarray:
    """The eigenvalues of a (quasi) triangular Schur form, sorted."""
    return np.sort_complex(np.linalg.eigvals(np.asarray(t)).astype(np.complex128))


def cases(lib: Any) -> dict[str, np.ndarray]:
    L = lib.lax.linalg
    out: dict[str, Any] = {}
    for name, a in (("real", A5), ("batch", A3B), ("complex", C4), ("f32", A5.astype(np.float32))):
        out[f"hessenberg/{name}/a"], out[f"hessenberg/{name}/taus"] = L.hessenberg(a)
    for name, a in (("real", SYM5), ("complex", HERM4), ("nonsym", A5), ("batch", A3B)):
        for lower in (True, False):
            res = L.tridiagonal(a, lower=lower)
            for part, v in zip(("a", "d", "e", "taus"), res):
                out[f"tridiagonal/{name}/{lower}/{part}"] = v
    out["householder_product/real"] = L.householder_product(REFL, TAUS)
    out["householder_product/k2"] = L.householder_product(REFL, TAUS[:2])
    out["householder_product/complex"] = L.householder_product(REFL_C, TAUS_C)
    out["householder_product/batch"] = L.householder_product(
        np.stack([REFL, 2 * REFL]), np.stack([TAUS, TAUS[::-1]])
    )
    for left in (True, False):
        for tr in (False, True):
            c = CMAT if left else CMAT.T
            out[f"ormqr/real/{left}/{tr}"] = L.ormqr(REFL, TAUS, c, left=left, transpose=tr)
            cc = (CMAT[:4] + 1j) if left else (CMAT[:4] - 1j).T
            out[f"ormqr/complex/{left}/{tr}"] = L.ormqr(REFL_C, TAUS_C, cc, left=left, transpose=tr)
    piv = np.array([[2, 2, 3], [0, 4, 4]], np.int32)
    out["lu_pivots_to_permutation/batch"] = L.lu_pivots_to_permutation(piv, 5)
    out["lu_pivots_to_permutation/lu"] = L.lu_pivots_to_permutation(L.lu(A5)[1], 5)
    out["symmetric_product/default"] = L.symmetric_product(
        TALL, np.add.outer(np.arange(6.0), np.arange(6.0))
    )
    out["symmetric_product/alpha_beta"] = L.symmetric_product(
        REFL, SYM5, alpha=0.5, beta=-2.0, symmetrize_output=True
    )
    r = np.linalg.cholesky(SPD).T
    out["cholesky_update"] = L.cholesky_update(r, W5)
    # eig: LAPACK geev's eigenvalues and normalized right eigenvectors, the left ones
    # normalized here
    w, vl, vr = L.eig(EIG4)
    out["eig/real/w"], out["eig/real/vr"] = w, vr
    out["eig/real/vl"] = lead_positive(np.asarray(vl))
    (wc,) = L.eig(C4, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    out["eig/complex/w"] = wc
    wb, vrb = L.eig(A3B, compute_left_eigenvectors=False)
    out["eig/batch/w"], out["eig/batch/vr"] = wb, vrb

    def eigvals_loss(a: Any) -> Any:
        (w,) = L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
        return lib.numpy.sum(lib.numpy.real(w) ** 2 + lib.numpy.imag(w) * lib.numpy.real(w))

    out["eig/grad_eigenvalues"] = lib.grad(eigvals_loss)(EIG4)
    _, (dw, dvr) = lib.jvp(
        lambda a: L.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True),
        (EIG4,),
        (DEIG,),
    )
    out["eig/jvp/dw"], out["eig/jvp/dvr"] = dw, dvr
    for name, a in (("real", A5), ("complex", C4)):
        t, q = L.schur(a)
        out[f"schur/{name}/eigenvalues"] = schur_eigenvalues(t)
        out[f"schur/{name}/reconstruction"] = np.asarray(q) @ np.asarray(t) @ np.asarray(q).conj().T
    for name, x, kw in (
        ("tall", TALL, {}),
        ("square", A5, {}),
        ("complex", TALL_C, {}),
        ("two_iterations", TALL, {"max_iterations": 2}),
        ("f32", TALL.astype(np.float32), {}),
    ):
        u, h, k, ok = L.qdwh(x, **kw)
        out[f"qdwh/{name}/u"], out[f"qdwh/{name}/h"] = u, h
        out[f"qdwh/{name}/num_iters"], out[f"qdwh/{name}/is_converged"] = k, ok
    dx = np.cos(np.arange(24.0)).reshape(6, 4)
    _, (du, dh) = lib.jvp(lambda x: L.qdwh(x)[:2], (TALL,), (dx,))
    out["qdwh/jvp/du"], out["qdwh/jvp/dh"] = du, dh
    # the first set under JAX's signatures and defaults: eigh returns (v, w) and
    # symmetrizes its input, svd and qr give complete factors, cholesky symmetrizes
    # (subset_by_index is not in JAX on CPU: the op table checks it against NumPy)
    nonsym = SPD + np.triu(A5, 1)
    v, w = L.eigh(nonsym)
    out["eigh/default/w"], out["eigh/default/|v|"] = w, np.abs(v)
    out["eigh/lower_only/w"] = L.eigh(nonsym, symmetrize_input=False)[1]
    out["eigh/upper_only/w"] = L.eigh(nonsym, lower=False, symmetrize_input=False)[1]
    out["eigh/grad_w"] = lib.grad(lambda a: lib.numpy.sum(L.eigh(a)[1] * W5))(nonsym)
    out["cholesky/default"] = L.cholesky(nonsym)
    out["cholesky/lower_only"] = L.cholesky(nonsym, symmetrize_input=False)
    out["cholesky/grad"] = lib.grad(lambda a: lib.numpy.sum(L.cholesky(a) ** 2))(nonsym)
    for name, x in (("tall", TALL), ("wide", TALL.T), ("batched", A3B)):
        u, sv, vt = L.svd(x)
        out[f"svd/{name}/shapes"] = np.array([*u.shape[-2:], *vt.shape[-2:]])
        out[f"svd/{name}/s"], out[f"svd/{name}/|vt|"] = sv, np.abs(vt)
        ur, _, vtr = L.svd(x, full_matrices=False)
        out[f"svd/{name}/reduced_shapes"] = np.array([*ur.shape[-2:], *vtr.shape[-2:]])
        out[f"svd/{name}/s_only"] = L.svd(x, compute_uv=False)
        q, r = L.qr(x)
        out[f"qr/{name}/shapes"] = np.array([*q.shape[-2:], *r.shape[-2:]])
        out[f"qr/{name}/|r|"] = np.abs(r)
        out[f"qr/{name}/reduced_|r|"] = np.abs(L.qr(x, full_matrices=False)[1])
    out["svd/grad_s"] = lib.grad(
        lambda x: lib.numpy.sum(L.svd(x, full_matrices=False)[1] * W5[:4])
    )(TALL)
    return {k: np.asarray(v) for k, v in out.items()}
