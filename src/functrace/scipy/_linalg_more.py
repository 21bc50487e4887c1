"""Matrix functions and decompositions of ``functrace.scipy.linalg`` (re-exported there):
``polar``, ``sqrtm``, ``hessenberg`` and ``solve_sylvester``.

All four are traceable: they differentiate, batch (``sqrtm``, ``hessenberg`` and
``polar`` over stacks ``(..., n, n)`` too) and jit, on real and complex matrices
(complex ones give complex results; transposes become conjugate transposes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.custom_derivatives import custom_jvp
from functrace.lax import linalg as ll
from functrace.lax import stop_gradient, while_loop
from functrace.scipy._util import _dtype, floats


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def _is_complex(x: Any) -> bool:
    return bool(_dtype(x).kind == "c")


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two axes (the transpose for real ``x``)."""
    return fnp.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _square(fname: str, a: Any) -> Any:
    (a,) = floats(fname, a, complex_ok=True)
    s = _shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{fname}: expected a square matrix (..., n, n), got shape {s}.")
    return a


# ---------------------------------------------------------------------------
# polar
# ---------------------------------------------------------------------------


@custom_jvp
def _polar_tall(a: Any) -> tuple[Any, Any]:
    """Right polar factors of ``a (..., m, n)``, ``m >= n``: ``u`` (orthonormal columns)
    and ``p`` (Hermitian positive semi-definite) with ``a = u @ p``. (The SVD primitive
    directly: its values are all this needs, for complex ``a`` too.)"""
    w, s, vh = ll.svd(a, full_matrices=False)
    return fnp.matmul(w, vh), fnp.matmul(_mH(vh) * _as(s, a, -2), vh)


def _as(s: Any, like: Any, axis: int) -> Any:
    """Real ``s`` with an axis inserted at ``axis``, in the dtype of ``like``."""
    return fnp.astype(fnp.expand_dims(s, axis), _dtype(like))


@_polar_tall.defjvp
def _polar_tall_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
    # With C = u^H da: Omega = u^H du is skew-Hermitian and solves Omega p + p Omega =
    # C - C^H; in the eigenbasis v of p = v diag(s) v^H, Omega~_ij = (v^H (C - C^H) v)_ij /
    # (s_i + s_j). dp = C - Omega p, du = u Omega + (I - u u^H) da p^-1 (real: ^H is ^T).
    # Only s_i + s_j > 0 is needed: repeated singular values are fine (the SVD's vector
    # derivatives are not used).
    (a,), (da,) = primals, tangents
    w, s, vh = ll.svd(a, full_matrices=False)
    v = _mH(vh)
    u = fnp.matmul(w, vh)
    p = fnp.matmul(v * _as(s, a, -2), vh)
    c = fnp.matmul(_mH(u), da)
    gaps = fnp.expand_dims(s, -1) + fnp.expand_dims(s, -2)
    skew = fnp.matmul(fnp.matmul(vh, c - _mH(c)), v)
    omega = fnp.matmul(fnp.matmul(v, skew / gaps), vh)
    dp = c - fnp.matmul(omega, p)
    dp = (dp + _mH(dp)) / 2
    du = fnp.matmul(u, omega)
    m, n = _shape(a)[-2:]
    if m > n:  # the part of da outside the range of u
        p_inv = fnp.matmul(v / _as(s, a, -2), vh)
        du = du + fnp.matmul(da - fnp.matmul(u, c), p_inv)
    return (u, p), (du, dp)


_POLAR_SIDES = ("right", "left")


def polar(
    a: Any, side: str = "right", *, method: str = "svd", eps: Any = None, max_iterations: Any = None
) -> tuple[Any, Any]:
    """The polar decomposition ``(u, p)``: ``a = u @ p`` (``side='right'``) or
    ``a = p @ u`` (``'left'``), ``u`` with orthonormal columns (rows for wide
    ``a``), ``p`` symmetric positive semi-definite, from the SVD (SciPy's values).

    ``method`` (``'svd'``, or JAX's ``'qdwh'``), ``eps`` and ``max_iterations`` are
    accepted; the SVD is always used. NOTE: for square ``a``, tall ``a`` on the right
    and wide ``a`` on the left, the derivative solves the polar factors' Sylvester
    equation: exact for repeated singular values, as long as no two are zero; other
    shapes differentiate the SVD (distinct singular values assumed). Complex ``a``:
    ``u`` unitary (orthonormal columns or rows) and ``p`` Hermitian, ``a = u @ p``.

    >>> import numpy as np
    >>> u, p = polar(np.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> u.tolist(), p.tolist()
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]])
    """
    if side not in _POLAR_SIDES:
        raise ValueError(f"polar: expected side 'right' or 'left', got {side!r}.")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"polar: expected method 'svd' or 'qdwh', got {method!r}.")
    (a,) = floats("polar", a, complex_ok=True)
    if len(_shape(a)) < 2:
        raise ValueError(f"polar: expected a matrix (..., m, n), got shape {_shape(a)}.")
    m, n = _shape(a)[-2:]
    if side == "right" and m >= n:
        return _polar_tall(a)
    if side == "left" and m <= n:  # a^H = u^H p: the right factors of a^H
        ut, p = _polar_tall(_mH(a))
        return _mH(ut), p
    w, s, vh = fnp.linalg.svd(a, full_matrices=False)
    u = fnp.matmul(w, vh)
    if side == "right":
        return u, fnp.matmul(_mH(vh) * _as(s, a, -2), vh)
    return u, fnp.matmul(w * _as(s, a, -2), _mH(w))


# ---------------------------------------------------------------------------
# sqrtm: the product form of the Denman-Beavers iteration
# ---------------------------------------------------------------------------


def _db_step(m: Any, y: Any, eye: np.ndarray, scale: Any) -> tuple[Any, Any]:
    # With mu the determinant scaling (1 once converging):
    # M <- (I + (mu^2 M + mu^-2 M^-1) / 2) / 2,  Y <- mu Y (I + mu^-2 M^-1) / 2
    n = eye.shape[-1]
    m_inv = ll.solve(m, fnp.broadcast_to(eye, _shape(m)))  # NaN, not an error, if singular
    if scale is None:
        mu = fnp.ones(_shape(m)[:-2] + (1, 1), _dtype(m))
    else:
        logdet = fnp.linalg.slogdet(m).logabsdet
        mu = fnp.where(scale, fnp.exp(-logdet / (2 * n)), 1.0)[..., None, None]
        mu = fnp.astype(mu, _dtype(m))
    mu2 = mu * mu
    y = 0.5 * mu * fnp.matmul(y, eye + m_inv / mu2)
    m = 0.5 * (eye + (mu2 * m + m_inv / mu2) / 2)
    return m, y


def _sqrtm(a: Any) -> Any:
    n = _shape(a)[-1]
    dt = np.dtype(_dtype(a))
    eye = np.eye(n, dtype=dt)
    tol = 10 * n * float(np.finfo(dt).eps)
    real_dt = np.finfo(dt).dtype  # the error's (float64 for complex128)

    def err(m: Any) -> Any:
        return fnp.max(fnp.abs(m - eye), initial=0.0)

    def cond(c: Any) -> Any:
        return (c[3] > tol) & (c[2] < 100)

    def body(c: Any) -> Any:
        m, y, k, e = c
        m, y = _db_step(m, y, eye, e > 1e-2)
        return m, y, k + 1, err(m)

    init = (a, a, 0, fnp.asarray(np.inf, real_dt))
    m, y, k, e = while_loop(cond, body, init)
    for _ in range(2):  # unscaled steps: the derivative settles too (M stays I)
        m, y = _db_step(m, y, eye, None)
    return fnp.where(err(m) <= tol, y, np.nan)


def sqrtm(A: Any, disp: Any = True, blocksize: Any = 64) -> Any:
    """The principal square root ``X`` of square ``A`` (``X @ X == A``), for ``A`` with no
    eigenvalue on the closed negative real axis: real for real ``A``, complex for complex
    ``A`` (JAX's values: the root whose eigenvalues have positive real parts).

    Computed by the scaled Denman-Beavers iteration in product form (matrix inverses
    only), so it differentiates, batches and jits; derivatives follow the iteration,
    which converges with it. NOTE: JAX returns a complex array for real ``A`` too; here
    real ``A`` gives a real root (SciPy's dtype). For ``A`` with an eigenvalue on the
    closed negative real axis SciPy and JAX return a (complex) root; here concrete inputs
    raise ``ValueError`` and traced ones (under jit) give NaN. ``disp`` and ``blocksize``
    are accepted and ignored.

    >>> import numpy as np
    >>> np.round(sqrtm(np.array([[4.0, 1.0], [0.0, 9.0]])), 12).tolist()
    [[2.0, 0.2], [0.0, 3.0]]
    """
    A = _square("sqrtm", A)
    if _shape(A)[-1] == 0:
        return A
    x = _sqrtm(A)
    val, a_val = core.concrete_or_none(stop_gradient(x)), core.concrete_or_none(A)
    if val is not None and a_val is not None and np.isnan(val).any() and not np.isnan(a_val).any():
        raise ValueError(
            "sqrtm: expected a matrix with no eigenvalue on the closed negative real axis, "
            "got one with such an eigenvalue (or a singular one). SciPy and JAX return a "
            "complex root there (by a Schur decomposition); functrace's iteration computes "
            "principal roots away from that axis only."
        )
    return x


# ---------------------------------------------------------------------------
# hessenberg: Householder reduction, LAPACK's conventions (SciPy's signs)
# ---------------------------------------------------------------------------


def _reflect_column(h: Any, k: int) -> tuple[Any, Any]:
    """The reflector ``I - tau v v^H`` (``H^H h`` zeroes column ``k`` of ``h`` below row
    ``k + 1`` and makes entry ``k + 1`` real): ``(v, tau)`` with ``v[..., k + 1] = 1`` and
    zeros above it (``tau = 0`` when the column is already reduced, as LAPACK's
    ``dlarfg``/``zlarfg``; ``tau`` is real for real ``h``)."""
    n = _shape(h)[-1]
    rows = np.arange(n)
    col = h[..., :, k]
    alpha = col[..., k + 1]
    below = fnp.where(rows > k + 1, col, 0)
    if _is_complex(h):
        re, im = fnp.real(alpha), fnp.imag(alpha)
        sq = fnp.sum(fnp.square(fnp.real(below)) + fnp.square(fnp.imag(below)), axis=-1)
        done = (sq == 0) & (im == 0)
        norm = fnp.sqrt(re * re + im * im + fnp.where(done, 1, sq))
        beta = fnp.astype(fnp.where(re >= 0, -norm, norm), _dtype(h))
        tau = fnp.where(done, 0, (beta - alpha) / beta)
        scale = fnp.where(done, 0, 1 / (alpha - beta))
        return fnp.where(rows == k + 1, 1, below * scale[..., None]), tau
    sq = fnp.sum(below * below, axis=-1)
    done = sq == 0
    norm = fnp.sqrt(alpha * alpha + fnp.where(done, 1, sq))
    beta = fnp.where(alpha >= 0, -norm, norm)
    tau = fnp.where(done, 0, (beta - alpha) / beta)
    scale = fnp.where(done, 0, 1 / (alpha - beta))
    v = fnp.where(rows == k + 1, 1, below * scale[..., None])
    return v, tau


def hessenberg(
    a: Any, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The Hessenberg form ``h`` of square ``a`` (zero below the first subdiagonal), and
    with ``calc_q`` the orthogonal (complex: unitary) ``q`` with ``a = q @ h @ q^H``:
    ``(h, q)``.

    Householder reflections with LAPACK's sign conventions, so the values are SciPy's;
    differentiable (away from columns already in reduced form), batched over stacks.
    Complex ``a``: LAPACK's reflectors make the subdiagonal real, for a 2x2 matrix too
    (JAX's values; SciPy returns a 2x2 matrix as it is).

    >>> import numpy as np
    >>> h = hessenberg(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 8.0, 9.0]]))
    >>> h.tolist()
    [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 8.0, 9.0]]
    """
    h = _square("hessenberg", a)
    n = _shape(h)[-1]
    q = fnp.broadcast_to(np.eye(n, dtype=_dtype(h)), _shape(h)) if calc_q else None
    # Complex: a last reflector (LAPACK's too) makes the last subdiagonal entry real.
    for k in range(n - 1 if _is_complex(h) else n - 2):
        v, tau = _reflect_column(h, k)
        col, row = v[..., :, None], _mH(v[..., :, None])  # v as a column and v^H as a row
        tv = tau[..., None, None] * row
        # h <- (I - tau v v^H)^H h (I - tau v v^H); q <- q (I - tau v v^H)
        h = h - _mH(tv) * fnp.matmul(row, h)
        h = h - fnp.matmul(h, col) * tv
        if q is not None:
            q = q - fnp.matmul(q, col) * tv
    h = fnp.triu(h, -1) if n > 2 else h
    return (h, q) if calc_q else h


# ---------------------------------------------------------------------------
# solve_sylvester
# ---------------------------------------------------------------------------


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """The solution ``x`` of ``a @ x + x @ b = q`` (``a`` m x m, ``b`` n x n, ``q`` m x n).

    The equation is solved as the linear system ``(a (x) I + I (x) b^T) vec(x) = vec(q)``
    of size ``m n`` (Kronecker products, one LU solve): exact derivatives in all three
    arguments, and cost ``O((m n)^3)``, meant for small and moderate sizes (SciPy's
    Bartels-Stewart method costs ``O(m^3 + n^3)``). A singular system (``a`` and ``-b``
    sharing an eigenvalue) raises ``LinAlgError`` on NumPy inputs and gives NaN under
    a transform.

    >>> import numpy as np
    >>> solve_sylvester(np.eye(2), 2 * np.eye(2), np.ones((2, 2))).tolist()
    [[0.3333333333333333, 0.3333333333333333], [0.3333333333333333, 0.3333333333333333]]
    """
    a, b, q = floats("solve_sylvester", a, b, q, broadcast=False, complex_ok=True)
    sa, sb, sq = _shape(a), _shape(b), _shape(q)
    if len(sa) != 2 or sa[0] != sa[1] or len(sb) != 2 or sb[0] != sb[1]:
        raise ValueError(
            f"solve_sylvester: expected square 2-D matrices a and b, got shapes {sa} and {sb}."
        )
    m, n = sa[0], sb[0]
    if sq != (m, n):
        raise ValueError(
            f"solve_sylvester: expected q of shape ({m}, {n}) for a of shape {sa} and b of "
            f"shape {sb}, got shape {sq}."
        )
    dt = _dtype(a)
    system = fnp.kron(a, np.eye(n, dtype=dt)) + fnp.kron(np.eye(m, dtype=dt), _mT(b))
    try:
        x = fnp.linalg.solve(system, fnp.reshape(q, (m * n,)))
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            "solve_sylvester: expected a and -b without a common eigenvalue, got a singular "
            "system: the equation has no unique solution."
        ) from None
    return fnp.reshape(x, (m, n))
