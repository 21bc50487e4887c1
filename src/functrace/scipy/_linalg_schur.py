"""The Schur decomposition of ``functrace.scipy.linalg`` (re-exported there): ``schur``
and ``rsf2csf``, on NumPy inputs only, and the matrix functions built on it, ``funm``.

The real Schur form comes from the Hessenberg reduction followed by Francis'
implicit double-shift QR iteration with deflation; each converged 2x2 block is then
put in standard form (equal diagonal entries and off-diagonal entries of opposite
signs when its eigenvalues are complex, upper triangular when they are real). The
complex form of a real matrix follows by unitary rotations of the 2x2 blocks; that of
a complex matrix from its (complex) Hessenberg form by the single-shift QR iteration
with Wilkinson's shift, as Givens rotations. The iterations' control flow depends on
the values, so these functions refuse traced inputs (use ``eigh`` for Hermitian
matrices).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.scipy._linalg_more import hessenberg

_ERR_TRACED = (
    "{0}: expected NumPy arrays, got a traced value (inside jit, grad, vmap...). The "
    "Schur form is computed by an iteration whose steps depend on the values, and is not "
    "differentiable; call {0} outside the transformed function (or use eigh for "
    "symmetric matrices)."
)


def _concrete(fname: str, *xs: Any) -> list[np.ndarray]:
    for x in xs:
        if isinstance(x, Tracer) or core.traced_path_needed():
            raise NotImplementedError(_ERR_TRACED.format(fname))
    return [np.asarray(x) for x in xs]


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
    h, z = hessenberg(a.astype(dtype), calc_q=True)
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


def _real_schur(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _to_complex(t: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _complex_schur(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _float_matrix(fname: str, a: np.ndarray) -> np.ndarray:
    """``a`` as float32/float64 or complex64/complex128 (integers: float64)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{fname}: expected a square matrix (..., n, n), got shape {a.shape}.")
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected a real or complex matrix, got dtype {a.dtype}.")
    if not np.isfinite(a).all():
        raise ValueError(f"{fname}: expected finite entries, got inf or NaN.")
    if a.dtype.kind == "c":
        return a.astype(np.complex64 if a.dtype == np.complex64 else np.complex128)
    return a.astype(np.float32 if a.dtype == np.float32 else np.float64)


def schur(
    a: Any,
    output: str = "real",
    lwork: Any = None,
    overwrite_a: bool = False,
    sort: Any = None,
    check_finite: bool = True,
) -> tuple[Any, Any]:
    """The Schur decomposition ``a = z @ t @ z.T`` of square real ``a``: ``(t, z)`` with
    ``z`` orthogonal and ``t`` quasi upper triangular (``output='real'``: 2x2 blocks for
    complex eigenvalue pairs, in standard form), or unitary ``z`` and upper triangular
    complex ``t`` (``output='complex'``, ``a = z @ t @ z.conj().T``). Complex ``a`` has
    the complex form for either ``output`` (as SciPy and JAX).

    NOTE: NumPy inputs only (traced ones raise ``NotImplementedError``), and ``sort`` is
    not supported. The Schur form is not unique: the order of the eigenvalues on the
    diagonal (and the signs of ``z``'s columns) may differ from SciPy's.

    >>> import numpy as np
    >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> np.diag(t).tolist()
    [1.0, 3.0]
    """
    if output not in ("real", "r", "complex", "c"):
        raise ValueError(f"schur: expected output 'real' or 'complex', got {output!r}.")
    if sort is not None:
        raise NotImplementedError("schur: sort is not supported; order the eigenvalues yourself.")
    (arr,) = _concrete("schur", a)
    arr = _float_matrix("schur", arr)
    lead, n = arr.shape[:-2], arr.shape[-1]
    flat = arr.reshape(-1, n, n)
    ts, zs = [], []
    cplx = arr.dtype.kind == "c"
    for m in flat:
        if cplx:
            t, z = _complex_schur(m)
        else:
            t, z = _real_schur(m)
            if output in ("complex", "c"):
                t, z = _to_complex(t, z)
        ts.append(t)
        zs.append(z)
    real_out = output in ("real", "r") and not cplx
    dt = arr.dtype if real_out else np.result_type(arr.dtype, np.complex64)
    t_all = np.array(ts, dtype=dt).reshape(*lead, n, n)
    z_all = np.array(zs, dtype=dt).reshape(*lead, n, n)
    return t_all, z_all


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Convert a real Schur form ``(T, Z)`` (from ``schur(a)``) to the complex one:
    upper triangular ``T`` and unitary ``Z`` with the same ``Z @ T @ Z.conj().T``.

    Complex ``T`` and ``Z`` are taken too (``T`` already triangular comes back as it is).
    NOTE: NumPy inputs only, as ``schur``.

    >>> import numpy as np
    >>> t, z = rsf2csf(np.array([[0.0, -1.0], [1.0, 0.0]]), np.eye(2))
    >>> np.round(np.diag(t), 12).tolist()
    [1j, -1j]
    """
    t, z = _concrete("rsf2csf", T, Z)
    t, z = _float_matrix("rsf2csf", t), _float_matrix("rsf2csf", z)
    if t.ndim != 2 or z.shape != t.shape:
        raise ValueError(
            f"rsf2csf: expected two square 2-D matrices of one shape, got {t.shape} and {z.shape}."
        )
    tc, zc = _to_complex(t, z)
    dt = np.result_type(t.dtype, z.dtype, np.complex64)
    return tc.astype(dt), zc.astype(dt)


def _parlett(f: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    """The upper triangle of ``func(T)`` from its diagonal ``f`` (Parlett's recurrence,
    Golub and Van Loan's algorithm 11.1.1, superdiagonal by superdiagonal), and the
    smallest distance between two eigenvalues it divided by (0 divisions skipped)."""
    n = t.shape[0]
    minden = abs(t[0, 0]) if n else 0.0
    for p in range(1, n):
        for i in range(n - p):
            j = i + p
            s = t[i, j] * (f[j, j] - f[i, i])
            s += t[i, i + 1 : j] @ f[i + 1 : j, j] - f[i, i + 1 : j] @ t[i + 1 : j, j]
            den = t[j, j] - t[i, i]
            f[i, j] = s / den if den != 0 else s
            minden = min(minden, abs(den))
    return f, float(minden)


def _funm_values(a: np.ndarray, func: Any, disp: bool) -> Any:
    t, z = schur(a, output="complex")
    f = np.diag(np.asarray(func(np.diag(t)))).astype(t.dtype)
    f, minden = _parlett(f, t)
    out = z @ f @ z.conj().T
    if disp:
        return out
    tol = float(np.finfo(np.float32 if out.dtype == np.complex64 else np.float64).eps)
    minden = tol if minden == 0.0 else minden
    if np.isinf(out).any():
        err = np.inf
    else:
        off = np.abs(np.triu(t, 1)).sum(axis=0).max() if t.size else 0.0
        err = min(1.0, max(tol, tol / minden * off))
    return out, np.asarray(err, dtype=out.real.dtype)


def funm(A: Any, func: Any, disp: bool = True) -> Any:
    """The matrix function ``func(A)`` of square ``A`` (JAX's and SciPy's ``funm``):
    ``func`` is applied to the eigenvalues on the diagonal of the complex Schur form and
    the rest of the triangle follows by Parlett's recurrence. The result is complex (as
    JAX's); with ``disp=False`` also an estimate of its relative error (as JAX's, on
    functrace's Schur form, which may order the eigenvalues differently).

    Under ``jit`` or ``vmap`` it runs through a ``pure_callback`` (the Schur iteration
    depends on the values), so ``func`` is called on NumPy arrays there; it is not
    differentiable (neither is JAX's: its Schur decomposition has no derivative).

    >>> import numpy as np
    >>> np.round(funm(np.array([[1.0, 2.0], [0.0, 3.0]]), np.exp).real, 6).tolist()
    [[2.718282, 17.367255], [0.0, 20.085537]]
    """
    fname = "funm"
    if not callable(func):
        raise TypeError(f"{fname}: expected a callable func, got {type(func).__name__}.")
    shape = core.get_aval(A).shape if isinstance(A, Tracer) else np.shape(A)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{fname}: expected a square 2-D matrix, got shape {tuple(shape)}.")
    if not isinstance(A, Tracer) and not core.traced_path_needed():
        return _funm_values(_float_matrix(fname, np.asarray(A)), func, disp)
    from functrace.api import ShapeDtypeStruct, pure_callback

    real = core.get_aval(A).dtype
    cdt = np.complex64 if real in (np.float32, np.complex64) else np.complex128
    spec: Any = ShapeDtypeStruct(tuple(shape), cdt)
    if not disp:
        spec = (spec, ShapeDtypeStruct((), np.float32 if cdt == np.complex64 else np.float64))

    def run(a: Any) -> Any:
        return _funm_values(_float_matrix(fname, np.asarray(a)), func, disp)

    return pure_callback(run, spec, A, vmap_method="sequential")
