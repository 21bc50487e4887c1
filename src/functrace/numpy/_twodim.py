"""Matrix-shaped helpers of functrace.numpy: ``diagonal``, ``diag``, ``trace``,
``tril``, ``triu``, ``kron`` and ``cross``.

Plain NumPy inputs go straight to NumPy. On tracers every function is a composite
of linear lax primitives, so all of them differentiate, batch and jit with no rule
of their own:

* ``diagonal`` is a strided ``slice`` of the flattened last two axes (the diagonal
  of an (n, m) matrix sits at flat positions ``start + i * (m + 1)``);
* ``diag`` of a vector is the reverse: ``pad`` with ``n`` zeros between the
  elements (interior padding), then ``reshape`` to (n, n);
* ``tril``/``triu`` ``select`` against a mask built from two ``iota``;
* ``kron`` is one broadcast ``mul`` of interleaved reshapes; ``cross`` multiplies
  sliced components.

Decisions:

* ``cross`` accepts 2-vectors as NumPy does (a missing z component is 0; two
  2-vectors give the z component alone), although NumPy 2 deprecates them.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import elementwise as lx
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, cast, normalize_axis, resolve_ufunc_dtypes
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._joining import stack
from functrace.numpy._math import multiply, subtract
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import broadcast_arrays, moveaxis

_PY_SCALARS = (bool, int, float, complex)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


@numpy_path(lambda a, offset=0, axis1=0, axis2=1: np.diagonal(a, offset, axis1, axis2))
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal at ``offset`` of the 2-d slices in ``(axis1, axis2)``; those axes are
    removed and the diagonal becomes the last axis (NumPy's ``diagonal``).

    >>> import functrace.numpy as fnp
    >>> fnp.diagonal([[1, 2, 3], [4, 5, 6]], offset=1)
    array([2, 6])
    """
    x = asarray_or_tracer(a, "diagonal")
    nd = len(_shape(x))
    if nd < 2:
        raise ValueError(
            f"diagonal: expected an array with at least 2 dimensions, got {nd}. "
            f"Use diag to build a matrix from a vector."
        )
    i, j = normalize_axis("diagonal", axis1, nd), normalize_axis("diagonal", axis2, nd)
    if i == j:
        raise ValueError(
            f"diagonal: expected two different axes, got axis1={axis1} and axis2={axis2}."
        )
    perm = tuple(d for d in range(nd) if d not in (i, j)) + (i, j)
    if perm != tuple(range(nd)):
        x = ls.transpose(x, perm)
    *batch, n, m = _shape(x)
    k = int(offset)
    length = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    start = k if k >= 0 else -k * m
    flat = ls.reshape(x, (*batch, n * m))
    zeros = (0,) * len(batch)
    if length == 0:
        return ls.slice(flat, (*zeros, 0), (*batch, 0))
    stop = start + (length - 1) * (m + 1) + 1
    return ls.slice(flat, (*zeros, start), (*batch, stop), (*((1,) * len(batch)), m + 1))


@numpy_path(lambda v, k=0: np.diag(v, k))
def diag(v: Any, k: int = 0) -> Any:
    """A 1-d ``v`` becomes a 2-d array with ``v`` on the ``k``-th diagonal; a 2-d ``v``
    gives its ``k``-th diagonal (NumPy's ``diag``).

    >>> import functrace.numpy as fnp
    >>> fnp.diag([1, 2], k=1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    x = asarray_or_tracer(v, "diag")
    shape = _shape(x)
    k = int(k)
    if len(shape) == 2:
        return diagonal(x, k)
    if len(shape) != 1:
        raise ValueError(
            f"diag: expected a 1-d or 2-d array, got {len(shape)} dimensions. "
            f"Use diagonal for the diagonals of stacked matrices."
        )
    length = shape[0]
    n = length + abs(k)
    zero = np.zeros((), core.get_aval(x).dtype)[()]
    if length == 0:
        return ls.broadcast_in_dim(zero, (n, n), ())
    start = k if k >= 0 else -k * n
    after = n * n - (start + (length - 1) * (n + 1) + 1)
    return ls.reshape(ls.pad(x, zero, [(start, after, n)]), (n, n))


@numpy_path(
    lambda a, offset=0, axis1=0, axis2=1, dtype=None, out=None: np.trace(
        a, offset, axis1, axis2, dtype, out
    )
)
def trace(
    a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None
) -> Any:
    """Sum of the diagonal at ``offset`` (over ``axis1``, ``axis2``), NumPy's ``trace``.

    >>> import functrace.numpy as fnp
    >>> fnp.trace([[1.0, 2.0], [3.0, 4.0]])
    np.float64(5.0)
    """
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def _tri_mask(fname: str, x: Any, k: int, lower: bool) -> Any:
    shape = _shape(x)
    if not shape:
        raise ValueError(f"{fname}: expected an array with at least 1 dimension, got a 0-d array.")
    n, m = shape[-2:] if len(shape) >= 2 else (shape[0], shape[0])
    rows = ls.iota(np.int64, n, 0, (n, m))
    cols = ls.iota(np.int64, m, 1, (n, m))
    shifted = lx.add(rows, lx.full_like(rows, int(k)))
    return lx.ge(shifted, cols) if lower else lx.le(shifted, cols)


def _tri(fname: str, m: Any, k: int, lower: bool) -> Any:
    x = asarray_or_tracer(m, fname)
    zero = np.zeros((), core.get_aval(x).dtype)[()]
    return where(_tri_mask(fname, x, k, lower), x, zero)


@numpy_path(lambda m, k=0: np.tril(m, k))
def tril(m: Any, k: int = 0) -> Any:
    """The lower triangle (on and below the ``k``-th diagonal) of the last two axes; the
    rest is zero. A 1-d input is treated as a row repeated (NumPy's ``tril``).

    >>> import functrace.numpy as fnp
    >>> fnp.tril([[1, 2], [3, 4]])
    array([[1, 0],
           [3, 4]])
    """
    return _tri("tril", m, k, lower=True)


@numpy_path(lambda m, k=0: np.triu(m, k))
def triu(m: Any, k: int = 0) -> Any:
    """The upper triangle (on and above the ``k``-th diagonal) of the last two axes.

    >>> import functrace.numpy as fnp
    >>> fnp.triu([[1, 2], [3, 4]], k=1)
    array([[0, 2],
           [0, 0]])
    """
    return _tri("triu", m, k, lower=False)


def _strong(x: Any) -> Any:
    # NumPy converts Python scalars to arrays first here (no weak promotion).
    return np.asarray(x) if type(x) in _PY_SCALARS else asarray_or_tracer(x)


@numpy_path(lambda a, b: np.kron(a, b), promote_args=(0, 1))
def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks ``a[i, j] * b`` (NumPy's ``kron``, any ranks).

    >>> import functrace.numpy as fnp
    >>> fnp.kron([1, 10], [1, 2, 3])
    array([ 1,  2,  3, 10, 20, 30])
    """
    a, b = _strong(a), _strong(b)
    sa, sb = _shape(a), _shape(b)
    nd = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a = ls.reshape(a, tuple(v for d in sa for v in (d, 1)))
    b = ls.reshape(b, tuple(v for d in sb for v in (1, d)))
    return ls.reshape(multiply(a, b), tuple(p * q for p, q in zip(sa, sb)))


def _component(x: Any, i: int) -> Any:
    *batch, _ = _shape(x)
    part = ls.slice(x, (0,) * len(batch) + (i,), (*batch, i + 1))
    return ls.reshape(part, tuple(batch))


@numpy_path(
    lambda a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: np.cross(a, b, axisa, axisb, axisc, axis),
    promote_args=(0, 1),
)
def cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> Any:
    """Cross product of 3-vectors (or 2-vectors) along ``axisa``/``axisb``, broadcast
    over the other axes; the vectors of the result lie along ``axisc``.

    >>> import functrace.numpy as fnp
    >>> fnp.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _strong(a), _strong(b)
    for x, ax, name in ((a, axisa, "axisa"), (b, axisb, "axisb")):
        if not _shape(x):
            raise ValueError(
                f"cross: expected arrays with at least 1 dimension, got a 0-d array for {name}."
            )
        normalize_axis("cross", ax, len(_shape(x)))
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    na, nb = _shape(a)[-1], _shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(
            f"cross: expected vectors of 2 or 3 components, got {na} and {nb} "
            f"along axisa={axisa} and axisb={axisb}."
        )
    dt = resolve_ufunc_dtypes("cross", np.multiply, [core.get_aval(a), core.get_aval(b)])[2]
    a, b = cast(a, dt), cast(b, dt)
    a0, a1 = _component(a, 0), _component(a, 1)
    b0, b1 = _component(b, 0), _component(b, 1)
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    zero = np.zeros((), dt)[()]
    a2 = _component(a, 2) if na == 3 else zero
    b2 = _component(b, 2) if nb == 3 else zero
    x = subtract(multiply(a1, b2), multiply(a2, b1))
    y = subtract(multiply(a2, b0), multiply(a0, b2))
    out = stack(broadcast_arrays(x, y, z), axis=-1)
    return moveaxis(out, -1, normalize_axis("cross", axisc, len(_shape(out))))


def diagflat(v: Any, k: int = 0) -> Any:
    """``v`` flattened onto the ``k``-th diagonal of a square 2-d array (NumPy's
    ``diagflat``).

    >>> import functrace.numpy as fnp
    >>> fnp.diagflat([[1, 2], [3, 4]]).shape
    (4, 4)
    """
    x = asarray_or_tracer(v, "diagflat")
    return diag(ls.reshape(x, (int(np.prod(_shape(x), dtype=np.int64)),)), k)


__all__ = ["cross", "diag", "diagflat", "diagonal", "kron", "trace", "tril", "triu"]
