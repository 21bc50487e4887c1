"""functrace.flatten_util: one flat vector for a whole pytree (as ``jax.flatten_util``).

>>> import numpy as np
>>> from functrace.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.zeros(2)})
>>> flat
Array([0., 0., 1., 1., 1., 1.])
>>> unravel(flat)["w"].shape
(2, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import tree_util as tu

__all__ = ["ravel_pytree"]

_PY_SCALARS = (bool, int, float, complex)


def _flat_dtype(avals: list[core.ShapedArray]) -> np.dtype:
    """The common dtype of the leaves, promoted as JAX does: the widest float (or complex)
    among them when there is one (integers and bools do not widen it, so int32 with
    float32 is float32), else NumPy's promotion of the integers/bools. Python scalars
    (weak) count only when no leaf is an array."""
    strong = [a.dtype for a in avals if not a.weak_type] or [a.dtype for a in avals]
    inexact = [d for d in strong if d.kind in "fc"]
    return np.result_type(*(inexact or strong))


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Flatten every leaf of ``pytree`` and concatenate them into one 1-d array.

    Returns ``(flat, unravel)``: ``unravel(v)`` rebuilds the tree from a vector like
    ``flat`` (same length), giving each leaf back its shape and dtype. Leaves are taken
    in ``tree_leaves`` order; their dtypes are promoted to one (see the module for the
    rule); an empty tree gives an empty float64 vector. Works on tracers (under ``jit``,
    ``grad``, ``vmap``): ``flat`` and ``unravel`` are traceable.

    >>> import numpy as np
    >>> flat, unravel = ravel_pytree([np.int32(1), np.float32(2.0)])
    >>> flat.dtype, unravel(flat)[0].dtype
    (dtype('float32'), dtype('int32'))
    """
    leaves, treedef = tu.tree_flatten(pytree)
    # (np.asarray: a string or object leaf reaches the check below, with its message)
    arrs = [np.asarray(x) if not isinstance(x, (core.Tracer, *_PY_SCALARS)) else x for x in leaves]
    avals = [core.get_aval(x) for x in arrs]
    for x, a in zip(leaves, avals):
        if a.dtype.kind not in "biufc":
            raise TypeError(
                f"ravel_pytree: expected numeric leaves (arrays or scalars), got a leaf of "
                f"type {type(x).__name__} (dtype {a.dtype})."
            )
    dt = _flat_dtype(avals) if avals else np.dtype(np.float64)
    shapes = [a.shape for a in avals]
    dtypes = [a.dtype for a in avals]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if arrs:
        flat = fnp.concatenate([fnp.ravel(fnp.asarray(x, dtype=dt)) for x in arrs])
    else:
        flat = np.zeros(0, dt)
    total = sum(sizes)

    def unravel(vec: Any) -> Any:
        aval = core.get_aval(vec)
        if aval.shape != (total,):
            raise ValueError(
                f"ravel_pytree's unravel: expected a vector of shape ({total},), the length of "
                f"the flattened tree, got shape {aval.shape}."
            )
        out, start = [], 0
        for shape, dtype, size in zip(shapes, dtypes, sizes):
            piece = fnp.reshape(vec[start : start + size], shape)
            out.append(fnp.astype(piece, dtype) if aval.dtype != dtype else piece)
            start += size
        return tu.tree_unflatten(treedef, out)

    return flat, unravel
