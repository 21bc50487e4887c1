"""``functrace.scipy.cluster.vq``: vector quantisation (``jax.scipy.cluster.vq``).

>>> import numpy as np
>>> code, dist = vq(np.array([[0.0, 0.1], [2.0, 2.0]]), np.array([[0.0, 0.0], [2.0, 1.0]]))
>>> np.asarray(code), np.round(np.asarray(dist), 3)
(array([0, 1]), array([0.1, 1. ]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core

__all__ = ["vq"]


def _float(fname: str, what: str, x: Any) -> Any:
    if not isinstance(x, core.Tracer):
        if np.asarray(x).dtype.kind not in "biufc":
            raise TypeError(f"{fname}: expected a numeric {what}, got dtype {np.asarray(x).dtype}.")
        x = fnp.asarray(x)
    return x if core.get_aval(x).dtype.kind in "fc" else x.astype(np.float64)


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``(code, dist)``: for each observation (row of ``obs``, shape ``(M, N)``), the
    index of the nearest code (row of ``code_book``, ``(K, N)``) in Euclidean distance,
    the first on ties, and that distance. One-dimensional ``obs`` and ``code_book`` are
    read as length-1 vectors. ``check_finite`` is accepted and unused, as in JAX. The
    distance differentiates in both arguments (the choice of code does not)."""
    fname = "vq"
    obs, code_book = _float(fname, "obs", obs), _float(fname, "code_book", code_book)
    dtype = np.promote_types(core.get_aval(obs).dtype, core.get_aval(code_book).dtype)
    obs, code_book = obs.astype(dtype), code_book.astype(dtype)
    ro, rc = len(core.get_aval(obs).shape), len(core.get_aval(code_book).shape)
    if ro != rc:
        raise ValueError(
            f"{fname}: expected obs and code_book of the same rank, got {ro} and {rc}."
        )
    if ro == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    elif ro != 2:
        raise ValueError(f"{fname}: expected obs and code_book of rank 1 or 2, got {ro}.")
    if core.get_aval(obs).shape[1] != core.get_aval(code_book).shape[1]:
        raise ValueError(
            f"{fname}: expected observations and codes of one length, got shapes "
            f"{core.get_aval(obs).shape} and {core.get_aval(code_book).shape}."
        )
    dist = fnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = fnp.argmin(dist, axis=-1)
    # the distance at the code: a one-hot sum, whose derivative needs no index values
    # (take_along_axis's would read them, so eager derivatives could not be reused)
    hit = code[:, None] == fnp.arange(core.get_aval(code_book).shape[0])[None, :]
    return code, fnp.sum(fnp.where(hit, dist, 0), axis=1)
