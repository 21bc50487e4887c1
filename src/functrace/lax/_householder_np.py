"""NumPy kernels of the Householder reductions behind ``functrace.lax.linalg``'s
``hessenberg``, ``tridiagonal``, ``householder_product`` and ``ormqr``.

Each works on a stack of matrices ``(..., m, n)`` (vectorized over the leading axes,
one Python step per column) and follows LAPACK's conventions, so the packed forms are
LAPACK's: an elementary reflector is ``H = I - tau v v^H`` with ``v[0] = 1`` (stored
implicitly) and the rest of ``v`` kept in the reduced column, and ``H^H`` maps its
column ``[alpha, x]`` to ``[beta, 0]`` with ``beta`` real, of the sign opposite to
``re(alpha)`` (``tau = 0`` when the column is already reduced). The reduced matrix is
``Q^H A Q`` with ``Q = H_0 H_1 ... H_{k-1}``.
"""

from __future__ import annotations

import math

import numpy as np


def reflector(alpha: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(beta, tau, v)`` for columns ``[alpha, x]`` (``alpha (B,)``, ``x (B, r)``):
    ``(I - tau [1, v] [1, v]^H)^H [alpha, x] = [beta, 0]`` (LAPACK's ``larfg``)."""
    xnorm = np.sqrt((np.abs(x) ** 2).sum(axis=-1))
    cplx = np.iscomplexobj(alpha)
    alpha_r = alpha.real
    alpha_i = alpha.imag if cplx else np.zeros_like(alpha_r)
    skip = (xnorm == 0) & (alpha_i == 0)
    norm = np.sqrt(alpha_r**2 + alpha_i**2 + xnorm**2)
    beta = -np.copysign(norm, alpha_r)
    safe_beta = np.where(skip, 1, beta)
    tau = np.where(skip, 0, (beta - alpha) / safe_beta).astype(alpha.dtype)
    denom = np.where(skip, 1, alpha - beta)
    v = np.where(skip[:, None], x, x / denom[:, None]).astype(x.dtype)
    beta = np.where(skip, alpha, beta).astype(alpha.dtype)
    return beta, tau, v


def _apply_left(c: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``(I - tau v v^H) c`` for stacks ``c (B, r, s)``, ``v (B, r)``, ``tau (B,)``."""
    vhc = np.einsum("br,brs->bs", v.conj(), c)
    return c - tau[:, None, None] * v[:, :, None] * vhc[:, None, :]


def _apply_right(c: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``c (I - tau v v^H)`` for stacks ``c (B, s, r)``, ``v (B, r)``, ``tau (B,)``."""
    cv = np.einsum("bsr,br->bs", c, v)
    return c - tau[:, None, None] * cv[:, :, None] * v.conj()[:, None, :]


def _flat(a: np.ndarray, core: int = 2) -> np.ndarray:
    """A writable copy of ``a`` with its leading axes (all but ``core``) made one."""
    lead = a.shape[: a.ndim - core]
    return np.array(a.reshape((math.prod(lead),) + a.shape[a.ndim - core :]), copy=True)


def gehrd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Packed Hessenberg reduction of square ``a (..., n, n)``: ``(h, taus (..., n - 1))``,
    the Hessenberg matrix on and above the first subdiagonal, the reflectors below."""
    lead, n = a.shape[:-2], a.shape[-1]
    h = _flat(a)
    taus = np.zeros((h.shape[0], max(n - 1, 0)), a.dtype)
    for i in range(n - 1):
        beta, tau, v = reflector(h[:, i + 1, i], h[:, i + 2 :, i])
        full = np.concatenate([np.ones_like(beta)[:, None], v], axis=1)
        h[:, :, i + 1 :] = _apply_right(h[:, :, i + 1 :], full, tau)
        h[:, i + 1 :, i + 1 :] = _apply_left(h[:, i + 1 :, i + 1 :], full, tau.conj())
        h[:, i + 1, i] = beta
        h[:, i + 2 :, i] = v
        taus[:, i] = tau
    return h.reshape(a.shape), taus.reshape(lead + taus.shape[1:])


def _hermitian(a: np.ndarray, lower: bool) -> np.ndarray:
    """The symmetric (Hermitian, real diagonal) matrix of one triangle of ``a``."""
    tri = np.tril(a, -1) if lower else np.triu(a, 1)
    d = np.diagonal(a, axis1=-2, axis2=-1).real
    return tri + np.conj(np.swapaxes(tri, -1, -2)) + d[..., :, None] * np.eye(a.shape[-1])


def sytrd(a: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Packed tridiagonal reduction of the symmetric (Hermitian) matrix of one triangle of
    ``a``: ``(packed, d, e, taus)``, LAPACK's ``sytrd``/``hetrd`` (the other triangle of
    ``packed`` is ``a``'s, untouched)."""
    lead, n = a.shape[:-2], a.shape[-1]
    out = _flat(a)
    s = _flat(_hermitian(a, lower).astype(a.dtype))
    nb = s.shape[0]
    rdt = np.empty(0, a.dtype).real.dtype
    e = np.zeros((nb, max(n - 1, 0)), rdt)
    taus = np.zeros((nb, max(n - 1, 0)), a.dtype)
    steps = range(n - 1) if lower else range(n - 2, -1, -1)
    for i in steps:
        if lower:  # annihilate s[i + 2:, i] with a reflector on rows i + 1..
            beta, tau, v = reflector(s[:, i + 1, i], s[:, i + 2 :, i])
            full = np.concatenate([np.ones_like(beta)[:, None], v], axis=1)
            blk = s[:, i + 1 :, i + 1 :]
            blk = _apply_left(_apply_right(blk, full, tau), full, tau.conj())
            s[:, i + 1 :, i + 1 :] = blk
            out[:, i + 2 :, i] = v
        else:  # annihilate s[:i, i + 1] with a reflector on rows ..i (v[i] = 1)
            beta, tau, v = reflector(s[:, i, i + 1], s[:, :i, i + 1][:, ::-1])
            v = v[:, ::-1]
            full = np.concatenate([v, np.ones_like(beta)[:, None]], axis=1)
            blk = s[:, : i + 1, : i + 1]
            blk = _apply_left(_apply_right(blk, full, tau), full, tau.conj())
            s[:, : i + 1, : i + 1] = blk
            out[:, :i, i + 1] = v
        e[:, i] = beta.real
        taus[:, i] = tau
    d = np.diagonal(s, axis1=-2, axis2=-1).real.copy()
    idx = np.arange(n)
    out[:, idx, idx] = d
    if n > 1:
        off = (idx[1:], idx[:-1]) if lower else (idx[:-1], idx[1:])
        out[:, off[0], off[1]] = e
    return (
        out.reshape(a.shape),
        d.reshape(lead + (n,)),
        e.reshape(lead + e.shape[1:]),
        taus.reshape(lead + taus.shape[1:]),
    )


def _reflectors(a: np.ndarray, k: int) -> np.ndarray:
    """The vectors ``v_j`` (columns, ``v_j[j] = 1``, zero above) of the first ``k``
    columns of the packed ``a (B, m, n)``."""
    m = a.shape[-2]
    return np.tril(a[:, :, :k], -1) + np.eye(m, k, dtype=a.dtype)


def orgqr(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """``Q = H_0 ... H_{k-1}`` restricted to its first ``n`` columns, for packed
    ``a (..., m, n)`` and ``taus (..., k)`` (LAPACK's ``orgqr``/``ungqr``)."""
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    flat_a, flat_t = _flat(a), _flat(taus, 1)
    v = _reflectors(flat_a, k)
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), flat_a.shape).copy()
    for j in range(k - 1, -1, -1):
        q[:, j:, :] = _apply_left(q[:, j:, :], v[:, j:, j], flat_t[:, j])
    return q.reshape(a.shape)


def ormqr(
    a: np.ndarray, taus: np.ndarray, c: np.ndarray, left: bool, transpose: bool
) -> np.ndarray:
    """``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H`` with the full ``m x m`` ``Q = H_0 ...
    H_{k-1}`` of packed ``a (..., m, n)`` and ``taus (..., k)`` (LAPACK's ``ormqr``)."""
    k = taus.shape[-1]
    flat_a, flat_t = _flat(a), _flat(taus, 1)
    out = _flat(c)
    v = _reflectors(flat_a, k)
    # Q c = H_0 (H_1 (... c)): the last reflector first; Q^H c: the first one first
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for j in order:
        t = flat_t[:, j].conj() if transpose else flat_t[:, j]
        if left:
            out[:, j:, :] = _apply_left(out[:, j:, :], v[:, j:, j], t)
        else:
            out[:, :, j:] = _apply_right(out[:, :, j:], v[:, j:, j], t)
    return out.reshape(c.shape)
