"""Spherical harmonics of ``functrace.scipy.special`` (re-exported there):
``sph_harm_y``, as ``jax.scipy.special.sph_harm_y``.

The orthonormal associated Legendre functions ``P_n^m(cos theta)`` (with the
Condon-Shortley phase and the factor ``sqrt((2n + 1) (n - m)! / (4 pi (n + m)!))``) come
from the stable recurrences: the diagonal ``P_m^m`` from ``P_0^0 = 1 / sqrt(4 pi)``,
the first off-diagonal ``P_{m+1}^m = sqrt(2m + 3) x P_m^m``, and upward in ``n`` for
each order. They are built from ``functrace.numpy`` operations (a table of every order
and degree up to ``n_max``), so the result differentiates in ``theta`` and ``phi``,
batches and jits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace import numpy as fnp
from functrace.lax import indexing as li
from functrace.numpy._core import asarray_or_tracer

__all__ = ["sph_harm_y"]


def _legendre_table(x: Any, n_max: int) -> Any:
    """``(n_max + 1, n_max + 1, len(x))``: the orthonormal ``P_n^m(x)`` at ``[m, n]``
    (zero where ``m > n``)."""
    s = fnp.sqrt(fnp.maximum(1.0 - x * x, 0.0))
    zero = fnp.zeros_like(x)
    rows = []
    diag = zero + float(0.5 / np.sqrt(np.pi))  # Python floats: float32 stays float32
    for m in range(n_max + 1):
        if m:
            diag = -float(np.sqrt(1.0 + 0.5 / m)) * s * diag
        col = [zero] * m + [diag]
        if m + 1 <= n_max:
            col.append(float(np.sqrt(2.0 * m + 3.0)) * x * diag)
        for n in range(m + 2, n_max + 1):
            a = float(np.sqrt((4.0 * n * n - 1.0) / (n * n - m * m)))
            b = float(np.sqrt(((n - 1.0) ** 2 - m * m) / (4.0 * (n - 1.0) ** 2 - 1.0)))
            col.append(a * (x * col[n - 1] - b * col[n - 2]))
        rows.append(fnp.stack(col))
    return fnp.stack(rows)


def sph_harm_y(
    n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None, n_max: int | None = None
) -> Any:
    """The spherical harmonics ``Y_n^m(theta, phi)`` of degree ``n`` and order ``m``
    (``|m| <= n``) at colatitude ``theta`` and longitude ``phi``, orthonormal on the
    sphere with the Condon-Shortley phase (SciPy's ``sph_harm_y`` and JAX's). As JAX's:
    ``n`` and ``m`` are 1-d integer arrays of one length (one harmonic per entry),
    ``theta`` and ``phi`` have that length or one entry, the result is complex, degrees
    above ``n_max`` are clipped to it, ``n_max`` (default ``max(n)``) must be known
    while tracing, and ``diff_n`` (derivatives in SciPy) raises ``NotImplementedError``.

    >>> import numpy as np
    >>> y = sph_harm_y(np.array([0, 1]), np.array([0, 1]), np.array([0.5]), np.array([0.0]))
    >>> np.round(y.real, 6).tolist()
    [0.282095, -0.165639]
    """
    fname = "sph_harm_y"
    if diff_n is not None:
        raise NotImplementedError(f"{fname}: diff_n (derivatives) is not supported, as in JAX.")
    n, m = asarray_or_tracer(n, fname), asarray_or_tracer(m, fname)
    for what, v in (("n", n), ("m", m)):
        if core.get_aval(v).dtype.kind not in "iu":
            raise TypeError(
                f"{fname}: expected integer {what}, got dtype {core.get_aval(v).dtype}."
            )
    n, m = fnp.atleast_1d(n), fnp.atleast_1d(m)
    if core.get_aval(n).ndim != 1 or core.get_aval(n).shape != core.get_aval(m).shape:
        raise ValueError(
            f"{fname}: expected n and m as 1-d arrays of one length, got shapes "
            f"{core.get_aval(n).shape} and {core.get_aval(m).shape}."
        )
    if n_max is None:
        if isinstance(n, core.Tracer):
            raise TypeError(
                f"{fname}: expected n_max to be given when n is traced (under jit, vmap or "
                f"grad): the table's size must be known while tracing."
            )
        n_max = int(np.max(np.asarray(n), initial=0))
    if isinstance(n_max, core.Tracer) or int(n_max) < 0:
        raise ValueError(f"{fname}: expected n_max to be an int >= 0, got {n_max!r}.")
    theta = fnp.atleast_1d(asarray_or_tracer(theta, fname))
    phi = asarray_or_tracer(phi, fname)
    dtype = np.result_type(core.get_aval(theta).dtype, core.get_aval(phi).dtype, np.float32)
    if dtype.kind != "f":
        raise TypeError(f"{fname}: expected real theta and phi, got dtype {dtype}.")
    table = _legendre_table(fnp.cos(theta.astype(dtype)), int(n_max))
    k = core.get_aval(n).shape[0]
    am = fnp.abs(m)
    points = fnp.arange(k)
    val = li.gather(table, [am, n, points], (0, 1, 2), "clip")
    angle = am.astype(dtype) * phi.astype(dtype)
    y = val * fnp.cos(angle) + 1j * (val * fnp.sin(angle))
    sign = fnp.where(am % 2 == 1, -1.0, 1.0).astype(dtype)
    return fnp.where(m < 0, sign * fnp.conj(y), y)
