"""Argument handling shared by functrace.scipy (internal)."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace import lax as lx
from functrace.core import Tracer
from functrace.numpy._core import asarray_or_tracer, broadcast_shapes, broadcast_to_shape

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def floats(fname: str, *xs: Any, broadcast: bool = True, complex_ok: bool = False) -> list[Any]:
    """``xs`` as floating-point values of one dtype and one broadcast shape.

    The dtype is SciPy's: the promotion of the arrays' dtypes (Python scalars do not
    widen them), with integers and bools becoming float64 (float16 becomes float32).
    With ``complex_ok``, complex arrays are taken too (a Python complex scalar makes a
    real dtype complex of its precision); without it they raise. ``broadcast=False``
    keeps the shapes.
    """
    arrs = [asarray_or_tracer(x, fname) for x in xs]
    avals = [core.get_aval(a) for a in arrs]
    kinds = "biufc" if complex_ok else "biuf"
    for a in avals:
        if a.dtype.kind not in kinds:
            what = "numbers" if complex_ok else "real numbers"
            raise TypeError(f"{fname}: expected {what}, got an array of dtype {a.dtype}.")
    strong = [a.dtype for a in avals if not a.weak_type]
    dt = np.result_type(*strong) if strong else _F64
    if dt.kind not in "fc":
        dt = _F64
    elif dt.itemsize < 4:
        dt = _F32
    if dt.kind == "f" and any(a.weak_type and a.dtype.kind == "c" for a in avals):
        dt = np.result_type(dt, np.complex64)
    shape = broadcast_shapes(fname, *[a.shape for a in avals]) if broadcast else None
    out = []
    for x, a in zip(arrs, avals):
        if isinstance(x, Tracer):
            if a.dtype != dt or a.weak_type:
                x = lx.convert_element_type(x, dt, False)
        else:
            x = np.asarray(x, dtype=dt)
        out.append(x if shape is None else broadcast_to_shape(x, shape))
    return out


def scalar_result(x: Any) -> Any:
    """0-d plain results as NumPy scalars (as NumPy and SciPy return them)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


_dtype = core.dtype_of
