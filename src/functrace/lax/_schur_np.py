"""NumPy kernels of the Schur decomposition, shared by ``functrace.lax.linalg.schur`` and
``functrace.scipy.linalg.schur``.

The real Schur form comes from the Hessenberg reduction followed by Francis'
implicit double-shift QR iteration with deflation; each converged 2x2 block is then
put in standard form (equal diagonal entries and off-diagonal entries of opposite
signs when its eigenvalues are complex, upper triangular when they are real). The
complex form of a real matrix follows by unitary rotations of the 2x2 blocks; that of
a complex matrix from its (complex) Hessenberg form by the single-shift QR iteration
with Wilkinson's shift, as Givens rotations. A QR iteration that does not converge
raises ``np.linalg.LinAlgError``.
"""

from __future__ import annotations

import math

import numpy as np

from functrace.lax._householder_np import gehrd, orgqr


def _householder(x: np.ndarray) -> tuple[np.ndarray, float]:
    """``(v, beta)`` with ``(I - beta v v^T) x`` a multiple of the first unit vector."""
    v = x.astype(np.float64, copy=True)
    norm = math.sqrt(float(v @ v))
    if norm == 0.0:
        return v, 0.0
    v[0] += math.copysign(norm, v[0])
    return v, 2.0 / float(v @ v)


def _reflect(h: np.ndarray, z: np.ndarray, k: int, v: np.ndarray, beta: float, hi: int) -> None:
    """Apply ``P = I - beta v v^T`` on indices ``k .. k + len(v) - 1``: ``h <- P h P``
    (the rows from column ``max(k - 1, 0)`` on, the columns down to row ``hi``) and
    ``z <- z P``."""
    if beta == 0.0:
        return
    r = len(v)
    n = h.shape[0]
    block = h[k : k + r, max(k - 1, 0) : n]
    block -= beta * np.outer(v, v @ block)
    last = min(k + r + 1, hi + 1)
    cols = h[:last, k : k + r]
    cols -= beta * np.outer(cols @ v, v)
    zc = z[:, k : k + r]
    zc -= beta * np.outer(zc @ v, v)


def _rotate(h: np.ndarray, z: np.ndarray, k: int, c: float, s: float) -> None:
    """``h <- R^T h R`` and ``z <- z R`` for the rotation ``R = [[c, -s], [s, c]]`` on
    indices ``k, k + 1``."""
    rot = np.array([[c, -s], [s, c]])
    h[k : k + 2, :] = rot.T @ h[k : k + 2, :]
    h[:, k : k + 2] = h[:, k : k + 2] @ rot
    z[:, k : k + 2] = z[:, k : k + 2] @ rot


def _standardize(h: np.ndarray, z: np.ndarray, k: int) -> None:
    """Put the 2x2 block at ``(k, k)`` of ``h`` in standard form (see the module notes)."""
    a, b, c, d = h[k, k], h[k, k + 1], h[k + 1, k], h[k + 1, k + 1]
    if c == 0.0:
        return
    half = (a - d) / 2
    disc = half * half + b * c
    if disc >= 0:  # real eigenvalues: rotate the eigenvector of lam onto the first axis
        lam = d + half + math.copysign(math.sqrt(disc), half)
        e1, e2 = (b, lam - a), (lam - d, c)
        x, y = e1 if math.hypot(*e1) >= math.hypot(*e2) else e2
        r = math.hypot(x, y)
        _rotate(h, z, k, x / r, y / r)
        h[k + 1, k] = 0.0
    elif a != d:  # complex pair: the smallest rotation that equalizes the diagonal
        num, den = d - a, b + c  # tan(2 theta) = num / den
        if den < 0:
            num, den = -num, -den
        theta = 0.5 * math.atan2(num, den)
        _rotate(h, z, k, math.cos(theta), math.sin(theta))
        mean = (h[k, k] + h[k + 1, k + 1]) / 2
        h[k, k] = h[k + 1, k + 1] = mean


def _francis_step(h: np.ndarray, z: np.ndarray, lo: int, hi: int, exceptional: bool) -> None:
    """One implicit double-shift QR step on the active block ``lo .. hi`` of ``h``."""
    if exceptional:  # an ad hoc shift, to break a cycle of steps that do not converge
        t = abs(h[hi, hi - 1]) + abs(h[hi - 1, hi - 2] if hi - 2 >= lo else 0.0)
        a11 = 0.75 * t + h[hi, hi]
        tr, det = 2 * a11, a11 * a11 + 0.4375 * t * t
    else:  # the eigenvalues of the trailing 2x2 block, as their sum and product
        tr = h[hi - 1, hi - 1] + h[hi, hi]
        det = h[hi - 1, hi - 1] * h[hi, hi] - h[hi - 1, hi] * h[hi, hi - 1]
    # first column of (H - s1 I)(H - s2 I) = H^2 - tr H + det I
    x = h[lo, lo] * h[lo, lo] + h[lo, lo + 1] * h[lo + 1, lo] - tr * h[lo, lo] + det
    y = h[lo + 1, lo] * (h[lo, lo] + h[lo + 1, lo + 1] - tr)
    w = h[lo + 1, lo] * h[lo + 2, lo + 1]
    for k in range(lo, hi - 1):
        v, beta = _householder(np.array([x, y, w]))
        _reflect(h, z, k, v, beta, hi)
        if k > lo:
            h[k + 1 : k + 3, k - 1] = 0.0
        x, y = h[k + 1, k], h[k + 2, k]
        if k < hi - 2:
            w = h[k + 3, k]
    v, beta = _householder(np.array([x, y]))
    _reflect(h, z, hi - 1, v, beta, hi)
    h[hi, hi - 2] = 0.0


def _hessenberg_start(a: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """The Hessenberg form ``h`` of ``a`` and its unitary ``z``, as writable arrays of
    ``dtype``: where a QR iteration starts."""
    packed, taus = gehrd(a.astype(dtype))
    # Q = diag(1, Q') with Q' from the reflectors shifted one row down (LAPACK's orghr)
    z: np.ndarray = np.eye(a.shape[-1], dtype=dtype)
    if a.shape[-1] > 1:
        z[1:, 1:] = orgqr(packed[1:, :-1], taus)
    h = np.triu(packed, -1)
    return np.array(h, dtype=dtype), np.array(z, dtype=dtype)


def _active_block(h: np.ndarray, hi: int, eps: float) -> int:
    """The first row ``lo`` of the active block ``lo .. hi`` of the Hessenberg ``h``: no
    negligible subdiagonal entry inside it (the one above it, if any, is set to 0)."""
    lo = hi
    while lo > 0:
        scale = abs(h[lo - 1, lo - 1]) + abs(h[lo, lo])
        if scale == 0.0:
            scale = np.abs(h[: hi + 1, : hi + 1]).sum()
        if abs(h[lo, lo - 1]) <= eps * scale:
            h[lo, lo - 1] = 0.0
            break
        lo -= 1
    return lo


def real_schur(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, z = _hessenberg_start(a, np.float64)
    eps, n = np.finfo(np.float64).eps, a.shape[0]
    hi, steps, budget = n - 1, 0, 30 * max(n, 1)
    while hi > 0:
        lo = _active_block(h, hi, eps)
        if lo == hi:  # a 1x1 block converged
            hi, steps = hi - 1, 0
        elif lo == hi - 1:  # a 2x2 block converged
            _standardize(h, z, hi - 1)
            hi, steps = hi - 2, 0
        else:
            budget -= 1
            if budget < 0:
                raise np.linalg.LinAlgError("schur: the QR iteration did not converge.")
            steps += 1
            _francis_step(h, z, lo, hi, exceptional=steps % 10 == 0)
    return np.triu(h, -1), z


def to_complex(t: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangularize each 2x2 block of the real Schur form ``t`` by a unitary rotation."""
    t, z = t.astype(np.complex128), z.astype(np.complex128)
    n = t.shape[0]
    eps = np.finfo(np.float64).eps
    for k in range(n - 1):
        c = t[k + 1, k]
        if abs(c) <= eps * (abs(t[k, k]) + abs(t[k + 1, k + 1])):
            t[k + 1, k] = 0.0
            continue
        a, b, d = t[k, k], t[k, k + 1], t[k + 1, k + 1]
        half = (a - d) / 2
        lam = (a + d) / 2 + np.sqrt(half * half + b * c)  # an eigenvalue of the block
        u = np.array([lam - d, c])  # its eigenvector
        u = u / np.linalg.norm(u)
        g = np.array([[u[0], -np.conj(u[1])], [u[1], np.conj(u[0])]])
        t[k : k + 2, :] = g.conj().T @ t[k : k + 2, :]
        t[:, k : k + 2] = t[:, k : k + 2] @ g
        z[:, k : k + 2] = z[:, k : k + 2] @ g
        t[k + 1, k] = 0.0
    return t, z


def _givens(x: complex, y: complex) -> np.ndarray:
    """The unitary ``G = [[c, s], [-conj(s), c]]`` (``c`` real) with ``G @ [x, y] = [r, 0]``."""
    norm = math.hypot(abs(x), abs(y))
    if norm == 0.0:
        return np.eye(2, dtype=np.complex128)
    if x == 0:
        c, s = 0.0, np.conj(y) / abs(y)
    else:
        c, s = abs(x) / norm, (x / abs(x)) * np.conj(y) / norm
    return np.array([[c, s], [-np.conj(s), c]], dtype=np.complex128)


def _wilkinson_shift(h: np.ndarray, hi: int) -> complex:
    """The eigenvalue of the trailing 2x2 block ``hi - 1 .. hi`` closer to ``h[hi, hi]``."""
    a, b, c, d = h[hi - 1, hi - 1], h[hi - 1, hi], h[hi, hi - 1], h[hi, hi]
    half = (a - d) / 2
    root = np.sqrt(half * half + b * c)
    lam1, lam2 = d + half + root, d + half - root
    return complex(lam1 if abs(lam1 - d) <= abs(lam2 - d) else lam2)


def complex_schur(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, z = _hessenberg_start(a, np.complex128)
    eps, n = np.finfo(np.float64).eps, a.shape[0]
    hi, steps, budget = n - 1, 0, 30 * max(n, 1)
    while hi > 0:
        lo = _active_block(h, hi, eps)
        if lo == hi:  # a 1x1 block converged
            hi, steps = hi - 1, 0
            continue
        budget -= 1
        if budget < 0:
            raise np.linalg.LinAlgError("schur: the QR iteration did not converge.")
        steps += 1
        if steps % 10 == 0:  # an ad hoc shift, to break a cycle of steps that do not converge
            shift = h[hi, hi] + 0.75 * abs(h[hi, hi - 1])
        else:
            shift = _wilkinson_shift(h, hi)
        x, y = h[lo, lo] - shift, h[lo + 1, lo]
        for k in range(lo, hi):  # chase the bulge down the active block
            g = _givens(x, y)
            h[k : k + 2, :] = g @ h[k : k + 2, :]
            h[:, k : k + 2] = h[:, k : k + 2] @ g.conj().T
            z[:, k : k + 2] = z[:, k : k + 2] @ g.conj().T
            if k > lo:
                h[k + 1, k - 1] = 0.0
            if k < hi - 1:
                x, y = h[k + 1, k], h[k + 2, k]
    return np.triu(h), z
