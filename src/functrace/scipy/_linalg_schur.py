"""The Schur decomposition of ``functrace.scipy.linalg`` (re-exported there): ``schur``
and ``rsf2csf``, on NumPy inputs only, and the matrix functions built on it, ``funm``.

The QR iterations are the NumPy kernels of ``functrace.lax._schur_np`` (shared with
``lax.linalg.schur``). Their control flow depends on the values, so these functions
refuse traced inputs (use ``eigh`` for Hermitian matrices).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax._schur_np import complex_schur as _complex_schur
from functrace.lax._schur_np import real_schur as _real_schur
from functrace.lax._schur_np import to_complex as _to_complex

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
