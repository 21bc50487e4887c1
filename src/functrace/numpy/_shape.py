"""Array creation and shape manipulation of functrace.numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.core import Tracer
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, cast, dtype_arg, is_traced


def _contains_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tracer(e) for e in x)
    return False


def array(obj: Any, dtype: Any = None, copy: bool = True) -> Any:
    """``numpy.array`` that also accepts (nested) lists of traced values."""
    dtype = dtype_arg(dtype)
    if not _contains_tracer(obj):
        if isinstance(obj, Tracer):
            return obj if dtype is None else cast(obj, dtype)
        return np.array(obj, dtype=dtype, copy=copy) if copy else np.asarray(obj, dtype)
    if isinstance(obj, Tracer):
        return obj if dtype is None else cast(obj, dtype)
    parts = [array(e, copy=False) for e in obj]
    avals = [core.get_aval(p) for p in parts]
    shapes = {a.shape for a in avals}
    if len(shapes) != 1:
        raise ValueError(f"array: expected equally shaped elements, got shapes {sorted(shapes)}.")
    (shape,) = shapes
    dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])
    dt = dt if dtype is None else dtype
    rows = [ls.reshape(cast(p, dt), (1, *shape)) for p in parts]
    return ls.concatenate(rows, 0) if len(rows) > 1 else rows[0]


asarray = array


def reshape(a: Any, shape: Any, /, order: str = "C") -> Any:
    """``numpy.reshape`` (row-major; one -1 allowed)."""
    if order != "C":
        raise NotImplementedError("reshape: expected order='C', got {order!r}.")
    if not is_traced(a):
        return np.reshape(a, shape)
    a = asarray_or_tracer(a, "reshape")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    size = core.get_aval(a).size
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: expected at most one -1, got {shape}.")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of size {size} into {shape}.")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"reshape: cannot reshape array of size {size} into shape {shape}.")
    return ls.reshape(a, shape)
