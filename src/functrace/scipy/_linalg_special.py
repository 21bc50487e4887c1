"""Special matrices of ``functrace.scipy.linalg`` (re-exported there).

Matrices built from arrays (``toeplitz``, ``circulant``, ``hankel``, ``companion``,
``leslie``, ``fiedler``, ``fiedler_companion``, ``convolution_matrix``,
``block_diag``) are gathers of their entries through constant index matrices, so they
differentiate, batch and jit; leading axes of the inputs are batch axes (as in JAX;
SciPy 1.17 still flattens N-D input of ``hankel``). Matrices of a size alone
(``hadamard``, ``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``, ``helmert``)
are constants, computed exactly with Python integers where SciPy does.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace._array import _wrap
from functrace.numpy._core import asarray_or_tracer, broadcast_shapes
from functrace.scipy._util import floats


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _vector(fname: str, x: Any) -> Any:
    """``x`` as an array of at least one dimension (its last axis is the vector)."""
    x = asarray_or_tracer(x, fname)
    aval = core.get_aval(x)
    if aval.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected numbers, got an array of dtype {aval.dtype}.")
    return fnp.reshape(x, (1,)) if aval.ndim == 0 else x


def _dtype_of(*xs: Any) -> np.dtype:
    return np.result_type(*[core.get_aval(x).dtype for x in xs])


def _broadcast_lead(fname: str, *xs: Any) -> list[Any]:
    """The vectors ``xs`` with their leading (batch) axes broadcast together."""
    lead = broadcast_shapes(fname, *[_shape(x)[:-1] for x in xs])
    return [fnp.broadcast_to(x, (*lead, _shape(x)[-1])) for x in xs]


def _gather(values: Any, index: np.ndarray) -> Any:
    """``values[..., index]``: a matrix (per batch entry) of entries of ``values``."""
    return fnp.take(values, index, axis=-1)


def _with_constants(x: Any, *consts: float) -> Any:
    """``x`` with the constants prepended along its last axis (index 0, 1, ...)."""
    dt = core.get_aval(x).dtype
    lead = _shape(x)[:-1]
    front = np.broadcast_to(np.array(consts, dtype=dt), (*lead, len(consts)))
    return fnp.concatenate([front, x], axis=-1)


def _concrete_zero(fname: str, lead: Any, what: str) -> None:
    """Raise if the concrete ``lead`` has a zero (traced values give inf/NaN instead)."""
    val = core.concrete_or_none(lead)
    if val is not None and np.any(np.asarray(val) == 0):
        raise ValueError(f"{fname}: expected a non-zero leading coefficient, got {what} 0.")


# ---------------------------------------------------------------------------
# Matrices built from arrays
# ---------------------------------------------------------------------------


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is
    ignored; ``r`` defaults to ``conj(c)``): entry ``(i, j)`` is ``c[i - j]`` on and
    below the diagonal, ``r[j - i]`` above it. Leading axes are batch axes.

    >>> toeplitz([1.0, 2.0, 3.0], [1.0, 4.0])
    array([[1., 4.],
           [2., 1.],
           [3., 2.]])
    """
    c = _vector("toeplitz", c)
    r = fnp.conjugate(c) if r is None else _vector("toeplitz", r)
    c, r = _broadcast_lead("toeplitz", c, r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    values = fnp.concatenate([fnp.flip(r[..., 1:], -1), c], axis=-1)
    return _gather(values, (n - 1) + np.arange(m)[:, None] - np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``: entry ``(i, j)`` is
    ``c[(i - j) % n]``. Leading axes are batch axes.

    >>> circulant([1, 2, 3])
    array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]])
    """
    c = _vector("circulant", c)
    n = _shape(c)[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1))


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` is
    ignored; zeros by default): entry ``(i, j)`` is ``c[i + j]`` while ``i + j < m``,
    then ``r[i + j - m + 1]``. Leading axes are batch axes.

    >>> hankel([1, 2, 3], [3, 4, 5])
    array([[1, 2, 3],
           [2, 3, 4],
           [3, 4, 5]])
    """
    c = _vector("hankel", c)
    r = fnp.zeros_like(c) if r is None else _vector("hankel", r)
    c, r = _broadcast_lead("hankel", c, r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    values = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather(values, np.arange(m)[:, None] + np.arange(n)[None, :])


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones below the diagonal, so its eigenvalues are
    the roots. ``a`` needs at least two coefficients; ``a[0] == 0`` is an error on
    concrete values (inf/NaN entries under jit). Leading axes are batch axes.

    >>> companion([1.0, -3.0, 2.0])
    array([[ 3., -2.],
           [ 1.,  0.]])
    """
    (a,) = floats("companion", _vector("companion", a), complex_ok=True)
    n = _shape(a)[-1]
    if n < 2:
        raise ValueError(f"companion: expected at least 2 coefficients, got {n}.")
    _concrete_zero("companion", a[..., 0], "a[0] =")
    first = -a[..., 1:] / a[..., :1]
    index = np.zeros((n - 1, n - 1), np.int64)  # 0: zero, 1: one, 2 + j: first[j]
    index[0] = 2 + np.arange(n - 1)
    index[np.arange(1, n - 1), np.arange(n - 2)] = 1
    return _gather(_with_constants(first, 0, 1), index)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities ``f`` (length ``n``) on the first row and survival
    rates ``s`` (length ``n - 1``) on the subdiagonal. Leading axes are batch axes.

    >>> leslie([0.1, 2.0, 1.0], [0.2, 0.8])
    array([[0.1, 2. , 1. ],
           [0.2, 0. , 0. ],
           [0. , 0.8, 0. ]])
    """
    f, s = _vector("leslie", f), _vector("leslie", s)
    n = _shape(f)[-1]
    if _shape(s)[-1] != n - 1:
        raise ValueError(
            f"leslie: expected s one shorter than f, got lengths {_shape(f)[-1]} (f) and "
            f"{_shape(s)[-1]} (s)."
        )
    dt = _dtype_of(f, s)
    f, s = _broadcast_lead("leslie", fnp.astype(f, dt), fnp.astype(s, dt))
    index = np.zeros((n, n), np.int64)  # 0: zero, 1 + j: f[j], 1 + n + j: s[j]
    index[0] = 1 + np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = 1 + n + np.arange(n - 1)
    return _gather(_with_constants(fnp.concatenate([f, s], axis=-1), 0), index)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``. Leading axes are batch axes.

    NOTE: the gradient of ``|0|`` on the diagonal is taken as 0.

    >>> fiedler([1, 4, 2])
    array([[0, 3, 1],
           [3, 0, 2],
           [1, 2, 0]])
    """
    a = _vector("fiedler", a)
    return fnp.abs(fnp.expand_dims(a, -1) - fnp.expand_dims(a, -2))


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest degree
    first): the same eigenvalues as ``companion(a)``. Fewer than 3 coefficients give a
    ``(0, 0)`` matrix (one) or the 1x1 matrix ``[[-a[1] / a[0]]]`` (two). Leading axes are
    batch axes.

    >>> fiedler_companion([1.0, -6.0, 11.0, -6.0])
    array([[  6., -11.,   1.],
           [  1.,   0.,   0.],
           [  0.,   6.,   0.]])
    """
    (a,) = floats("fiedler_companion", _vector("fiedler_companion", a), complex_ok=True)
    size = _shape(a)[-1]
    n = max(size - 1, 0)
    if size >= 2:
        _concrete_zero("fiedler_companion", a[..., 0], "a[0] =")
    if size < 2:
        return fnp.zeros((*_shape(a)[:-1], 0, 0), core.get_aval(a).dtype)
    coef = -a[..., 1:] / a[..., :1]  # coef[k] = -a[k + 1] / a[0]
    index = np.zeros((n, n), np.int64)  # 0: zero, 1: one, 2 + k: coef[k]
    index[0, 0] = 2
    if n > 1:
        index[1, 0] = 1
    for i in range(0, n, 2):  # even rows: the coefficient right of the diagonal, a one after
        if i + 1 < n:
            index[i, i + 1] = 2 + (i + 1)
        if i + 2 < n:
            index[i, i + 2] = 1
    for i in range(2, n):  # odd rows take a one two left; even rows a coefficient one left
        if i % 2:
            index[i, i - 2] = 1
        else:
            index[i, i - 1] = 2 + i
    return _gather(_with_constants(coef, 0, 1), index)


_CONV_MODES = ("full", "same", "valid")


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``T`` with ``T @ v == numpy.convolve(a, v, mode)`` for vectors ``v`` of
    length ``n``. Leading axes of ``a`` are batch axes.

    >>> convolution_matrix([1, 2], 3)
    array([[1, 0, 0],
           [2, 1, 0],
           [0, 2, 1],
           [0, 0, 2]])
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"convolution_matrix: expected an integer n, got {n!r}.") from None
    if n < 1:
        raise ValueError(f"convolution_matrix: expected n >= 1, got {n}.")
    if mode not in _CONV_MODES:
        raise ValueError(
            f"convolution_matrix: expected mode 'full', 'same' or 'valid', got {mode!r}."
        )
    a = _vector("convolution_matrix", a)
    m = _shape(a)[-1]
    if m < 1:
        raise ValueError("convolution_matrix: expected a non-empty a, got length 0.")
    lag = np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]
    index = np.where((lag >= 0) & (lag < m), lag + 1, 0)  # 0: zero, 1 + k: a[k]
    trim = min(m, n) - 1
    if mode == "same":
        index = index[trim // 2 : m + n - 1 - (trim - trim // 2)]
    elif mode == "valid":
        index = index[trim : m + n - 1 - trim]
    return _gather(_with_constants(a, 0), index)


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the arrays in order (0-d arrays are 1x1 blocks, 1-d
    ones rows); the dtype is their common one. No arrays give a ``(1, 0)`` matrix.

    >>> block_diag([[1, 2]], 3)
    array([[1, 2, 0],
           [0, 0, 3]])
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = []
    for i, x in enumerate(arrs):
        x = asarray_or_tracer(x, "block_diag")
        x = np.asarray(x) if type(x) in (bool, int, float, complex) else x
        nd = core.get_aval(x).ndim
        if nd > 2:
            raise ValueError(
                f"block_diag: expected arrays of at most 2 dimensions, got shape "
                f"{_shape(x)} for argument {i}."
            )
        blocks.append(fnp.reshape(x, (1, -1) if nd < 2 else _shape(x)))
    dt = _dtype_of(*blocks)
    width = sum(_shape(b)[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = _shape(b)
        right = width - left - w
        parts = [np.zeros((h, left), dt), fnp.astype(b, dt), np.zeros((h, right), dt)]
        rows.append(fnp.concatenate(parts, axis=1))
        left += w
    return fnp.concatenate(rows, axis=0)


# ---------------------------------------------------------------------------
# Constant matrices of a given size
# ---------------------------------------------------------------------------


def _size(fname: str, n: Any) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fname}: expected an integer size, got {n!r}.") from None
    if n < 0:
        raise ValueError(f"{fname}: expected a size n >= 0, got {n}.")
    return n


def hadamard(n: int, dtype: Any = int) -> Any:
    """The ``n x n`` Hadamard matrix (Sylvester's construction: ``n`` a power of 2) of
    entries +-1 in ``dtype``.

    >>> hadamard(2)
    Array([[ 1,  1],
           [ 1, -1]])
    """
    n = _size("hadamard", n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: expected n a positive power of 2, got {n}.")
    h = np.ones((1, 1), dtype=dtype)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return _wrap(h)


def hilbert(n: int) -> Any:
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)`` (float64).

    >>> hilbert(2)
    Array([[1.        , 0.5       ],
           [0.5       , 0.33333333]])
    """
    n = _size("hilbert", n)
    i = np.arange(n, dtype=np.float64)
    return _wrap(1.0 / (i[:, None] + i[None, :] + 1.0))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The ``n x n`` discrete Fourier transform matrix ``exp(-2 pi i j k / n)``
    (``scale``: None, ``'sqrtn'`` divides by ``sqrt(n)``, ``'n'`` by ``n``), complex128
    unless ``dtype`` (complex) says otherwise (``jax.scipy.linalg.dft``).

    >>> import numpy as np
    >>> np.round(np.asarray(dft(2)), 12)
    array([[ 1.+0.j,  1.+0.j],
           [ 1.+0.j, -1.-0.j]])
    """
    n = _size("dft", n)
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: expected scale None, 'sqrtn' or 'n', got {scale!r}.")
    dt = np.dtype(np.complex128 if dtype is None else dtype)
    if dt.kind != "c":
        raise ValueError(f"dft: expected a complex dtype, got {dt}.")
    a = np.arange(n, dtype=dt)
    w = np.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        w = w / np.sqrt(n)
    elif scale == "n":
        w = w / n
    return _wrap(w.astype(dt))


def _exact(rows: list[list[int]], dtype: Any) -> Any:
    """Python integers as an array of ``dtype`` (``object`` keeps them exact)."""
    out = np.empty((len(rows), len(rows)), dtype=object)
    for i, row in enumerate(rows):
        out[i, :] = row
    return out if dtype is object else np.array(out.tolist(), dtype=dtype).reshape(out.shape)


def _maybe_wrap(x: np.ndarray) -> Any:
    return x if x.dtype == object else _wrap(x)


def invhilbert(n: int, exact: bool = False) -> Any:
    """The inverse of ``hilbert(n)``, from its closed form in binomial coefficients:
    float64, or with ``exact`` integers (int64 up to ``n = 14``, Python ints beyond).

    >>> invhilbert(2, exact=True)
    Array([[ 4, -6],
           [-6, 12]])
    """
    n = _size("invhilbert", n)
    rows = [
        [
            (-1) ** (i + j)
            * (i + j + 1)
            * math.comb(n + i, n - j - 1)
            * math.comb(n + j, n - i - 1)
            * math.comb(i + j, i) ** 2
            for j in range(n)
        ]
        for i in range(n)
    ]
    if not exact:
        return _wrap(_exact(rows, np.float64))
    return _maybe_wrap(_exact(rows, np.int64 if n <= 14 else object))


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_kind(fname: str, kind: Any) -> str:
    if kind is None:
        return "symmetric"
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"{fname}: expected kind 'symmetric', 'lower' or 'upper', got {kind!r}.")
    return str(kind)


def pascal(n: int, kind: str = "symmetric", exact: bool = True) -> Any:
    """The ``n x n`` Pascal matrix of binomial coefficients: ``C(i + j, i)``
    (``'symmetric'``), ``C(i, j)`` (``'lower'``) or its transpose (``'upper'``). With
    ``exact``, uint64 (Python ints beyond ``n = 34``); else float64.

    >>> pascal(3)
    Array([[1, 1, 1],
           [1, 2, 3],
           [1, 3, 6]], dtype=uint64)
    """
    n, kind = _size("pascal", n), _pascal_kind("pascal", kind)
    if kind == "symmetric":
        rows = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        rows = [[math.comb(i, j) for j in range(n)] for i in range(n)]
        if kind == "upper":
            rows = [list(col) for col in zip(*rows)] if n else rows
    if not exact:
        return _wrap(_exact(rows, np.float64))
    return _maybe_wrap(_exact(rows, np.uint64 if n <= 34 else object))


def invpascal(n: int, kind: str = "symmetric", exact: bool = True) -> Any:
    """The inverse of ``pascal(n, kind)``: ``(-1)^(i - j) C(i, j)`` for ``'lower'`` (its
    transpose for ``'upper'``), and ``lower^T @ lower`` of those for ``'symmetric'``.
    With ``exact``, int64 (Python ints beyond ``n = 34``); else float64.

    >>> invpascal(3)
    Array([[ 3, -3,  1],
           [-3,  5, -2],
           [ 1, -2,  1]])
    """
    n, kind = _size("invpascal", n), _pascal_kind("invpascal", kind)
    low = [[(-1) ** (i - j) * math.comb(i, j) if j <= i else 0 for j in range(n)] for i in range(n)]
    if kind == "lower":
        rows = low
    elif kind == "upper":
        rows = [list(col) for col in zip(*low)] if n else low
    else:
        rows = [
            [sum(low[k][i] * low[k][j] for k in range(max(i, j), n)) for j in range(n)]
            for i in range(n)
        ]
    if not exact:
        return _wrap(_exact(rows, np.float64))
    return _maybe_wrap(_exact(rows, np.int64 if n <= 34 else object))


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of order ``n``: orthogonal, first row ``1 / sqrt(n)``; row
    ``i >= 1`` has ``1 / sqrt(i (i + 1))`` in its first ``i`` entries and
    ``-i / sqrt(i (i + 1))`` in entry ``i``. Without ``full`` the first row is dropped
    (``(n - 1) x n``).

    >>> helmert(2, full=True)
    Array([[ 0.70710678,  0.70710678],
           [ 0.70710678, -0.70710678]])
    """
    n = _size("helmert", n)
    h = np.zeros((n, n))
    if n:
        h[0] = 1.0 / math.sqrt(n)
    for i in range(1, n):
        scale = 1.0 / math.sqrt(i * (i + 1))
        h[i, :i] = scale
        h[i, i] = -i * scale
    return _wrap(h if full else h[1:])
