"""functrace.random: JAX's key-based random numbers, bit for bit.

Keys are explicit values: ``key = random.PRNGKey(0)`` (or ``random.key(0)``), then
``k1, k2 = random.split(key)`` and ``random.normal(k1, (3,))``. The generator is
Threefry-2x32 (the ``lax.threefry2x32`` primitive), with JAX's key derivation,
``split``/``fold_in`` and counter layout, so the same seed gives the same bits and the
same samples as JAX (``jax_threefry_partitionable`` on, JAX's default).

Decisions (see also ``functrace/README.md``):

* **x64 semantics.** functrace's default float is float64 and its default int is
  int64, so ``normal(key, shape)`` returns float64 and matches JAX with
  ``jax_enable_x64`` on; pass ``dtype=np.float32`` for JAX's default-mode samples
  (those do not depend on the x64 flag). ``bits`` defaults to uint64, ``randint`` and
  ``poisson`` to int64, and integer seeds are 64-bit (negative seeds as in x64 mode).
* **One key representation.** Every key is a ``uint32`` array whose last axis has
  length 2 (JAX's "raw" keys); ``key``, ``PRNGKey``, ``split``, ``fold_in`` and
  ``wrap_key_data`` all return such arrays, and ``key_data`` returns them unchanged.
  Keys are ordinary arrays: they batch under ``vmap`` (``vmap(f)(random.split(k, 4))``
  equals the loop), pass through ``jit`` and pytrees, and never carry tangents.
* Samplers are built from primitives, so they run under ``jit`` (the cipher compiles
  to one native loop), ``vmap`` and ``grad``; reparameterised samplers pass gradients
  to their parameters (``uniform``'s bounds, ``truncated_normal``'s bounds,
  ``multivariate_normal``'s mean and covariance), and ``gamma``/``beta``/``dirichlet``
  differentiate in their shape parameters by JAX's implicit rule (the derivative of the
  gamma CDF at the sample).

>>> import functrace.random as random
>>> key = random.PRNGKey(0)
>>> random.bits(key, (2,), dtype="uint32")
array([4070199207, 4202968722], dtype=uint32)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.core import Tracer

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_UINTS: dict[int, np.dtype] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: _U64}
_DEFAULT_FLOAT = np.dtype(np.float64)
_DEFAULT_INT = np.dtype(np.int64)


def _quiet(fn: Any) -> Any:
    """Run ``fn`` without NumPy's floating-point warnings: eager samplers compute on
    NumPy arrays, and intermediate infinities (a rejected proposal, uint wrap-around)
    are part of the algorithms, as in JAX."""
    import functools

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapped


# ---------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------


def _check_key(name: str, key: Any) -> Any:
    """``key`` as a uint32[2] array (or tracer); a clear error otherwise."""
    if not isinstance(key, Tracer):
        key = np.asarray(key)
    aval = core.get_aval(key)
    if aval.dtype != _U32 or aval.shape != (2,):
        hint = ""
        if aval.dtype == _U32 and aval.shape[-1:] == (2,):
            hint = (
                f" A batch of {aval.shape[:-1]} keys: map over it with vmap "
                f"(ft.vmap(lambda k: random.{name}(k, ...))(keys))."
            )
        raise TypeError(
            f"random.{name}: expected a single PRNG key (a uint32 array of shape (2,), from "
            f"random.key, PRNGKey, split or fold_in), got {aval.dtype.name}{list(aval.shape)}."
            + hint
        )
    return key


def _canonical_shape(name: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(int(_index(d)) for d in shape)
    except TypeError:
        raise TypeError(
            f"random.{name}: expected a shape (a tuple of Python ints), got {shape!r}."
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"random.{name}: expected non-negative sizes, got shape {out}.")
    return out


def _index(d: Any) -> int:
    import operator

    return operator.index(d)


def _seed_words(seed: Any) -> tuple[Any, Any]:
    """The two uint32 words of a key made from an integer seed (64-bit seeds bit-cast,
    32-bit and narrower seeds zero-extended, as JAX)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        s = int(seed)
        bits = 64 if isinstance(seed, int) else np.dtype(type(seed)).itemsize * 8
        if isinstance(seed, int) and not -(2**63) <= s < 2**64:
            raise OverflowError(
                f"random.PRNGKey: expected a seed that fits in 64 bits, got {seed}."
            )
        if bits < 64:
            s &= 0xFFFFFFFF  # narrower seeds: the high word is zero
        s %= 2**64
        return np.uint32(s >> 32), np.uint32(s & 0xFFFFFFFF)
    aval = core.get_aval(seed)
    if aval.shape != () or aval.dtype.kind not in "iu":
        raise TypeError(
            f"random.PRNGKey: expected a scalar integer seed, got "
            f"{aval.dtype.name}{list(aval.shape)}."
        )
    if aval.dtype.itemsize == 8:
        wide = lax.convert_element_type(seed, _U64)  # two's complement bits
        hi = lax.div(wide, np.array(2**32, _U64)[()])
        return lax.convert_element_type(hi, _U32), lax.convert_element_type(wide, _U32)
    return lax.full_like(seed, 0, _U32), lax.convert_element_type(seed, _U32)


def _stack_words(k0: Any, k1: Any) -> Any:
    if not any(isinstance(k, Tracer) for k in (k0, k1)):
        return np.stack([np.asarray(k0, _U32), np.asarray(k1, _U32)], axis=-1)
    return fnp.stack([k0, k1], axis=-1)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802  (JAX's name)
    """A key (uint32[2]) from an integer seed, as ``jax.random.PRNGKey``.

    >>> import functrace.random as random
    >>> random.PRNGKey(42)
    array([ 0, 42], dtype=uint32)
    """
    _check_impl(impl)
    k0, k1 = _seed_words(seed)
    return _stack_words(k0, k1)


def key(seed: Any, *, impl: Any = None) -> Any:
    """A key from an integer seed, as ``jax.random.key``; functrace represents it as the
    same uint32[2] array as :func:`PRNGKey` (see the module docstring).

    >>> import functrace.random as random
    >>> random.key_data(random.key(1))
    array([0, 1], dtype=uint32)
    """
    return PRNGKey(seed, impl=impl)


def _check_impl(impl: Any) -> None:
    if impl not in (None, "threefry2x32"):
        raise ValueError(
            f"random: expected impl=None or 'threefry2x32' (the only generator functrace "
            f"has), got {impl!r}."
        )


def key_data(keys: Any) -> Any:
    """The uint32 words of ``keys`` (shape ``(..., 2)``): the keys themselves in functrace."""
    if not isinstance(keys, Tracer):
        keys = np.asarray(keys)
    aval = core.get_aval(keys)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(
            f"random.key_data: expected PRNG keys (uint32 with a last axis of length 2), "
            f"got {aval.dtype.name}{list(aval.shape)}."
        )
    return keys


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> Any:
    """Keys from their uint32 words (shape ``(..., 2)``), as ``jax.random.wrap_key_data``.

    >>> import numpy as np, functrace.random as random
    >>> random.wrap_key_data(np.array([0, 7], np.uint32))
    array([0, 7], dtype=uint32)
    """
    _check_impl(impl)
    if not isinstance(key_bits_array, Tracer):
        key_bits_array = np.asarray(key_bits_array)
    aval = core.get_aval(key_bits_array)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(
            f"random.wrap_key_data: expected a uint32 array whose last axis has length 2, "
            f"got {aval.dtype.name}{list(aval.shape)}."
        )
    return key_bits_array


def key_impl(keys: Any) -> str:
    """The generator's name: always ``'threefry2x32'``."""
    key_data(keys)
    return "threefry2x32"


def _words(key: Any) -> tuple[Any, Any]:
    return key[0], key[1]


def _hash(key: Any, shape: tuple[int, ...]) -> list[Any]:
    """Threefry of the key over the counters 0..n-1 laid out in ``shape`` (the high
    counter word is zero: at most 2**32 values per call)."""
    n = math.prod(shape)
    if n > 2**32:
        raise ValueError(f"random: expected at most 2**32 values per call, got shape {shape}.")
    k0, k1 = _words(key)
    if not shape:
        zero = np.uint32(0)
        return lax.threefry2x32(k0, k1, zero, zero)
    lo = lax.iota(_U32, n)
    if len(shape) != 1:
        lo = lax.reshape(lo, shape)
    hi = lax.full_like(lo, 0)
    k0 = lax.broadcast_in_dim(k0, shape, ())
    k1 = lax.broadcast_in_dim(k1, shape, ())
    return lax.threefry2x32(k0, k1, hi, lo)


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (shape ``(num, 2)``, or ``(*num, 2)`` for a tuple), as JAX.

    >>> import functrace.random as random
    >>> random.split(random.PRNGKey(0))
    array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    key = _check_key("split", key)
    shape = _canonical_shape("split", num)
    y0, y1 = _hash(key, shape)
    return _stack_words(y0, y1)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (a scalar), as JAX.

    >>> import functrace.random as random
    >>> random.fold_in(random.PRNGKey(0), 7)
    array([2716826189,  292468403], dtype=uint32)
    """
    key = _check_key("fold_in", key)
    if isinstance(data, Tracer):
        if data.aval.shape != () or data.aval.dtype.kind not in "iub":
            raise TypeError(
                f"random.fold_in: expected a scalar integer data, got "
                f"{data.aval.dtype.name}{list(data.aval.shape)}. Use vmap for batches."
            )
        d = lax.convert_element_type(data, _U32)
    else:
        arr = np.asarray(data)
        if arr.ndim or arr.dtype.kind not in "iub":
            raise TypeError(
                f"random.fold_in: expected a scalar integer data, got "
                f"{arr.dtype.name}{list(arr.shape)}. Use vmap for batches."
            )
        d = np.uint32(int(arr) % 2**32)
    k0, k1 = _words(key)
    y0, y1 = lax.threefry2x32(k0, k1, np.uint32(0), d)
    return _stack_words(y0, y1)


def _random_bits(key: Any, width: int, shape: tuple[int, ...]) -> Any:
    y0, y1 = _hash(key, shape)
    if width == 64:
        hi = lax.mul(lax.convert_element_type(y0, _U64), _full(y0, 2**32, _U64))
        return lax.bitwise_or(hi, lax.convert_element_type(y1, _U64))
    bits = lax.bitwise_xor(y0, y1)
    return bits if width == 32 else lax.convert_element_type(bits, _UINTS[width])


def _full(like: Any, value: Any, dtype: Any) -> Any:
    return lax.full_like(like, value, np.dtype(dtype))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits: unsigned integers of ``dtype`` (default uint64).

    >>> import functrace.random as random
    >>> random.bits(random.PRNGKey(0), (2,))
    array([7719171245655871230, 3989946895414531357], dtype=uint64)
    """
    key = _check_key("bits", key)
    dt = _U64 if dtype is None else np.dtype(dtype)
    if dt.kind != "u":
        raise ValueError(f"random.bits: expected an unsigned integer dtype, got {dt.name}.")
    return _random_bits(key, dt.itemsize * 8, _canonical_shape("bits", shape))


# ---------------------------------------------------------------------------
# Continuous samplers
# ---------------------------------------------------------------------------


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dt = _DEFAULT_FLOAT if dtype is None else np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"random.{name}: expected a floating-point dtype, got {dt.name}.")
    return dt


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if not param_shapes:
        return
    try:
        got = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        got = None
    if got != shape:
        raise ValueError(
            f"random.{name}: expected parameter shapes {list(param_shapes)} that broadcast "
            f"to the shape argument {shape}, got {got if got is not None else 'no broadcast'}."
        )


def _as(x: Any, dtype: np.dtype) -> Any:
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, dtype)
    return np.asarray(x, dtype=dtype)


def _dtype_of(x: Any) -> np.dtype:
    return core.get_aval(x).dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape) if isinstance(x, Tracer) else np.shape(x)


def _unit_floats(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [0, 1) from the top mantissa bits (JAX's mantissa trick: the value is
    exactly ``m * 2**-nmant``)."""
    info = np.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    raw = _random_bits(key, nbits, shape)
    uint = _UINTS[nbits]
    m = lax.div(raw, _full(raw, 2 ** (nbits - nmant), uint))  # shift right logically
    return lax.mul(lax.convert_element_type(m, dtype), _full(m, 2.0**-nmant, dtype))


@_quiet
def uniform(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
) -> Any:
    """Uniform samples in ``[minval, maxval)`` (default dtype float64).

    >>> import functrace.random as random
    >>> random.uniform(random.PRNGKey(0), (2,), dtype="float32")
    array([0.947667 , 0.9785799], dtype=float32)
    """
    key = _check_key("uniform", key)
    shape = _canonical_shape("uniform", shape)
    dt = _float_dtype("uniform", dtype)
    return _uniform(key, shape, dt, minval, maxval)


def _uniform(key: Any, shape: tuple[int, ...], dt: np.dtype, minval: Any, maxval: Any) -> Any:
    lo, hi = _as(minval, dt), _as(maxval, dt)
    _check_shape("uniform", shape, _shape_of(lo), _shape_of(hi))
    floats = _unit_floats(key, shape, dt)
    return fnp.maximum(lo, floats * (hi - lo) + lo)


@_quiet
def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal samples (``sqrt(2) * erf_inv(u)``, u uniform on (-1, 1)).

    >>> import functrace.random as random
    >>> random.normal(random.PRNGKey(0), (2,), dtype="float32")
    array([1.6226422, 2.0252647], dtype=float32)
    """
    key = _check_key("normal", key)
    shape = _canonical_shape("normal", shape)
    dt = _float_dtype("normal", dtype)
    return _normal(key, shape, dt)


def _normal(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    lo = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = _uniform(key, shape, dt, lo, np.array(1.0, dt))
    return lax.mul(_full(u, math.sqrt(2), dt), lax.erf_inv(u))


@_quiet
def truncated_normal(
    key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Normal samples truncated to the open interval ``(lower, upper)``.

    >>> import functrace.random as random
    >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (100,))
    >>> bool((x > -1).all() and (x < 1).all())
    True
    """
    key = _check_key("truncated_normal", key)
    dt = _float_dtype("truncated_normal", dtype)
    lower, upper = _as(lower, dt), _as(upper, dt)
    if shape is None:
        shp = tuple(np.broadcast_shapes(_shape_of(lower), _shape_of(upper)))
    else:
        shp = _canonical_shape("truncated_normal", shape)
        _check_shape("truncated_normal", shp, _shape_of(lower), _shape_of(upper))
    sqrt2 = np.array(math.sqrt(2), dt)
    a = lax.erf(fnp.divide(lower, sqrt2))
    b = lax.erf(fnp.divide(upper, sqrt2))
    u = _uniform(key, shp, dt, a, b)
    out = sqrt2 * lax.erf_inv(u)
    inf = np.array(np.inf, dt)
    lo = lax.nextafter(*_same(lax.stop_gradient(lower), inf))
    hi = lax.nextafter(*_same(lax.stop_gradient(upper), -inf))
    return fnp.clip(out, lo, hi)


def _same(x: Any, y: Any) -> tuple[Any, Any]:
    # y (a scalar constant) broadcast to x's shape, for the equal-shape lax primitives
    shape = _shape_of(x)
    if shape:
        y = lax.broadcast_in_dim(y, shape, ())
    return x, y


@_quiet
def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential(1) samples: ``-log1p(-u)``.

    >>> import functrace.random as random
    >>> float(random.exponential(random.PRNGKey(0))) > 0
    True
    """
    key = _check_key("exponential", key)
    dt = _float_dtype("exponential", dtype)
    return _exponential(key, _canonical_shape("exponential", shape), dt)


def _exponential(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


@_quiet
def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Laplace(0, 1) samples.

    >>> import functrace.random as random
    >>> random.laplace(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("laplace", key)
    dt = _float_dtype("laplace", dtype)
    shp = _canonical_shape("laplace", shape)
    u = _uniform(key, shp, dt, -1.0 + np.finfo(dt).epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_quiet
def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard logistic samples: ``log(u) - log1p(-u)``.

    >>> import functrace.random as random
    >>> random.logistic(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("logistic", key)
    dt = _float_dtype("logistic", dtype)
    shp = _canonical_shape("logistic", shape)
    x = _uniform(key, shp, dt, np.finfo(dt).tiny, 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@_quiet
def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel samples: ``-log(-log(u))``; ``mode="high"`` uses two uniforms per
    sample for more resolution near 0 (as JAX).

    >>> import functrace.random as random
    >>> random.gumbel(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("gumbel", key)
    dt = _float_dtype("gumbel", dtype)
    return _gumbel(key, _canonical_shape("gumbel", shape), dt, mode)


def _gumbel(key: Any, shape: tuple[int, ...], dt: np.dtype, mode: str | None) -> Any:
    info = np.finfo(dt)
    if mode in (None, "low"):
        u = _uniform(key, shape, dt, info.tiny, 1.0)
        return -fnp.log(-fnp.log(u))
    if mode == "high":
        both = _uniform(key, (2, *shape), dt, 0.0, 1.0)
        high, low = both[0], both[1]
        x = fnp.where(high >= 0.5, high, high + 2.0**-info.nmant * low + info.tiny)
        return -fnp.log(-fnp.log1p(-x))
    raise ValueError(f"random.gumbel: expected mode None, 'low' or 'high', got {mode!r}.")


@_quiet
def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
) -> Any:
    """Samples ``mean + L z`` with ``L L^T = cov`` (``method``: cholesky, eigh or svd).

    >>> import numpy as np, functrace.random as random
    >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    key = _check_key("multivariate_normal", key)
    if dtype is None:  # the promoted dtype of mean and cov (as JAX)
        dts = [_dtype_of(v) for v in (mean, cov)]
        dtype = np.result_type(*dts)
        if dtype.kind != "f":
            dtype = _DEFAULT_FLOAT
    dt = _float_dtype("multivariate_normal", dtype)
    mean, cov = _as(mean, dt), _as(cov, dt)
    ms, cs = _shape_of(mean), _shape_of(cov)
    if len(ms) < 1:
        raise ValueError("random.multivariate_normal: expected mean.ndim >= 1, got 0.")
    if len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(
            f"random.multivariate_normal: expected cov of shape (..., {ms[-1]}, {ms[-1]}), "
            f"got {cs}."
        )
    if shape is None:
        shp = tuple(np.broadcast_shapes(ms[:-1], cs[:-2]))
    else:
        shp = _canonical_shape("multivariate_normal", shape)
        _check_shape("multivariate_normal", shp, ms[:-1], cs[:-2])
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    elif method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    else:
        raise ValueError(
            f"random.multivariate_normal: expected method 'cholesky', 'eigh' or 'svd', "
            f"got {method!r}."
        )
    z = _normal(key, (*shp, ms[-1]), dt)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


# ---------------------------------------------------------------------------
# Discrete samplers
# ---------------------------------------------------------------------------


@_quiet
def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low") -> Any:
    """Booleans that are True with probability ``p``.

    >>> import functrace.random as random
    >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    key = _check_key("bernoulli", key)
    if not isinstance(p, Tracer):
        p = np.asarray(p)
        if p.dtype.kind != "f":
            p = p.astype(_DEFAULT_FLOAT)
    dt = core.get_aval(p).dtype
    if dt.kind != "f":
        p, dt = lax.convert_element_type(p, _DEFAULT_FLOAT), _DEFAULT_FLOAT
    shp = _shape_of(p) if shape is None else _canonical_shape("bernoulli", shape)
    _check_shape("bernoulli", shp, _shape_of(p))
    if mode == "high":
        both = _uniform(key, (2, *shp), dt, 0.0, 1.0)
        u1, u2 = both[0], both[1] * 2.0 ** -np.finfo(dt).nmant
        return u2 < p - u1
    if mode != "low":
        raise ValueError(f"random.bernoulli: expected mode 'low' or 'high', got {mode!r}.")
    return _uniform(key, shp, dt, 0.0, 1.0) < p


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    dt = _DEFAULT_INT if dtype is None else np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"random.{name}: expected an integer dtype, got {dt.name}.")
    return dt


def _clip_to(x: Any, dtype: np.dtype) -> Any:
    """Integer ``x`` converted to ``dtype``, clipped to its range (not wrapped)."""
    src = core.get_aval(x).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    return fnp.clip(x, np.array(lo, src), np.array(hi, src)).astype(dtype)


@_quiet
def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers uniform on ``[minval, maxval)`` (default dtype int64), with JAX's
    algorithm: two draws of random bits combined modulo the span.

    >>> import functrace.random as random
    >>> random.randint(random.PRNGKey(0), (4,), 0, 10)
    array([5, 1, 5, 7])
    """
    key = _check_key("randint", key)
    shp = _canonical_shape("randint", shape)
    dt = _int_dtype("randint", dtype)
    return _randint(key, shp, minval, maxval, dt)


def _as_int(x: Any) -> Any:
    if isinstance(x, Tracer):
        return x if x.aval.dtype.kind in "iu" else lax.convert_element_type(x, _DEFAULT_INT)
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        arr = arr.astype(_DEFAULT_INT)
    return arr


def _randint(key: Any, shp: tuple[int, ...], minval: Any, maxval: Any, dt: np.dtype) -> Any:
    minval, maxval = _as_int(minval), _as_int(maxval)
    _check_shape("randint", shp, _shape_of(minval), _shape_of(maxval))
    mx_dt = core.get_aval(maxval).dtype
    top = min(np.iinfo(dt).max, np.iinfo(mx_dt).max)
    out_of_range = maxval > np.array(top, mx_dt)
    lo, hi = _clip_to(minval, dt), _clip_to(maxval, dt)
    nbits = dt.itemsize * 8
    uint = _UINTS[nbits]
    k1, k2 = split(key)
    higher = _random_bits(k1, nbits, shp)
    lower = _random_bits(k2, nbits, shp)
    span = (hi - lo).astype(uint)  # wraps like a cast
    span = fnp.where(hi <= lo, np.array(1, uint), span)
    span = fnp.where(out_of_range & (hi > lo), span + np.array(1, uint), span)
    span = fnp.broadcast_to(span, shp)
    # (a * 2**nbits + b) % span, with 2**nbits % span computed without overflow
    mult = fnp.remainder(np.array(2 ** (nbits // 2), uint), span)
    mult = fnp.remainder(mult * mult, span)
    offset = fnp.remainder(higher, span) * mult + fnp.remainder(lower, span)
    offset = fnp.remainder(offset, span)
    return lo + offset.astype(dt)


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    # Sort by fresh 32-bit random keys, as many rounds as make ties negligible (JAX's
    # rule: ceil(3 ln(n) / ln(2**32 - 1)) rounds; a stable sort keeps tied elements' order).
    size = math.prod(_shape_of(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        both = split(key)
        key, sub = both[0], both[1]
        sort_keys = _random_bits(sub, 32, _shape_of(x))
        x = lax.sort_multi([sort_keys, x], dimension=axis, num_keys=1)[1]
    return x


@_quiet
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``;
    ``independent=True`` shuffles each slice along ``axis`` on its own (as JAX).

    >>> import functrace.random as random
    >>> random.permutation(random.PRNGKey(0), 5)
    array([0, 1, 4, 3, 2])
    """
    key = _check_key("permutation", key)
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    shp = _shape_of(x)
    if not shp:
        if isinstance(x, Tracer) or x.dtype.kind not in "iu":
            raise TypeError(
                "random.permutation: expected an integer (a concrete Python int) or an "
                "array with at least one dimension."
            )
        return _shuffle(key, np.arange(int(x)), 0)
    axis = int(_index(axis))
    if not -len(shp) <= axis < len(shp):
        raise ValueError(
            f"random.permutation: expected an axis in [{-len(shp)}, {len(shp)}), got {axis}."
        )
    axis %= len(shp)
    if independent or len(shp) == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, np.arange(shp[axis]), 0)
    return fnp.take(x, ind, axis=axis)


@_quiet
def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Any:
    """Samples from ``a`` (an array, or ``arange(a)`` for an int), optionally weighted by
    ``p`` and without replacement, as ``jax.random.choice``.

    >>> import functrace.random as random
    >>> random.choice(random.PRNGKey(0), 10, (3,), replace=False).shape
    (3,)
    """
    key = _check_key("choice", key)
    shp = _canonical_shape("choice", shape)
    if not isinstance(a, Tracer):
        a = np.asarray(a)
    a_shape = _shape_of(a)
    if not a_shape:
        if isinstance(a, Tracer):
            raise TypeError("random.choice: expected a concrete int a (or an array), got a tracer.")
        n_inputs = int(a)
    else:
        axis = int(_index(axis)) % len(a_shape)
        n_inputs = a_shape[axis]
    n_draws = math.prod(shp)
    if n_draws == 0:
        return np.zeros(shp, dtype=core.get_aval(a).dtype)
    if n_inputs <= 0:
        raise ValueError("random.choice: expected a population of at least 1, got 0.")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"random.choice: expected at most {n_inputs} samples without replacement (the "
            f"population size), got {n_draws}."
        )
    if p is None:
        if replace:
            ind = _randint(key, shp, 0, n_inputs, _DEFAULT_INT)
            result = ind if not a_shape else fnp.take(a, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if not a_shape else a, axis)
            ax = axis if a_shape else 0
            result = perm[(slice(None),) * ax + (slice(0, n_draws),)]
    else:
        if not isinstance(p, Tracer):
            p = np.asarray(p)
            if p.dtype.kind != "f":
                p = p.astype(_DEFAULT_FLOAT)
        if _shape_of(p) != (n_inputs,):
            raise ValueError(
                f"random.choice: expected p of shape ({n_inputs},) (a.shape[axis]), got "
                f"{_shape_of(p)}."
            )
        pdt = core.get_aval(p).dtype
        if replace:
            cum = fnp.cumsum(p)
            r = cum[-1] * (1 - _uniform(key, shp, pdt, 0.0, 1.0))
            ind = fnp.searchsorted(cum, r).astype(_DEFAULT_INT)
        else:
            g = _gumbel(key, (n_inputs,), pdt, mode) + fnp.log(p)
            ind = lax.argsort(-g)[:n_draws]
        result = ind if not a_shape else fnp.take(a, ind, axis=axis)
    out_shape = shp if not a_shape else (*a_shape[:axis], *shp, *a_shape[axis + 1 :])
    return fnp.reshape(result, out_shape)


@_quiet
def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (the Gumbel-max
    trick, as JAX; ``replace=False``: Gumbel top-k).

    >>> import numpy as np, functrace.random as random
    >>> random.categorical(random.PRNGKey(0), np.log(np.array([0.1, 0.9])), shape=(5,)).shape
    (5,)
    """
    key = _check_key("categorical", key)
    if not isinstance(logits, Tracer):
        logits = np.asarray(logits)
    ls = _shape_of(logits)
    dt = core.get_aval(logits).dtype
    if dt.kind != "f":
        raise TypeError(f"random.categorical: expected floating-point logits, got {dt.name}.")
    nd = len(ls)
    axis = int(_index(axis))
    if not -nd <= axis < nd:
        raise ValueError(f"random.categorical: expected an axis in [{-nd}, {nd}), got {axis}.")
    axis %= nd
    batch = tuple(d for i, d in enumerate(ls) if i != axis)
    shp = batch if shape is None else _canonical_shape("categorical", shape)
    if shape is not None:
        _check_shape("categorical", shp, batch)
    prefix = shp[: len(shp) - len(batch)]
    if replace:
        lshape = list(shp[len(shp) - len(batch) :])
        lshape.insert(axis, ls[axis])
        g = _gumbel(key, (*prefix, *lshape), dt, mode)
        expanded = fnp.reshape(logits, (1,) * len(prefix) + ls)
        return fnp.argmax(g + expanded, axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > ls[axis]:
        raise ValueError(
            f"random.categorical: expected at most {ls[axis]} samples without replacement "
            f"(the number of categories), got {k}."
        )
    noisy = logits + _gumbel(key, ls, dt, mode)
    order = lax.argsort(-fnp.moveaxis(noisy, axis, -1), dimension=-1)[..., :k]
    # int32, as JAX's top_k indices (also with x64 on)
    return fnp.reshape(fnp.moveaxis(order, -1, 0), shp).astype(np.int32)


# ---------------------------------------------------------------------------
# Gamma family and Poisson
# ---------------------------------------------------------------------------


def _lgamma(x: Any) -> Any:
    """log Gamma(x) for x > 0: Stirling's series at x + 8, shifted back down."""
    dt = core.get_aval(x).dtype
    prod = fnp.ones_like(x)
    z = x
    for _ in range(8):
        prod = prod * z
        z = z + 1.0
    zi = 1.0 / z
    zi2 = zi * zi
    series = zi * (
        1 / 12 + zi2 * (-1 / 360 + zi2 * (1 / 1260 + zi2 * (-1 / 1680 + zi2 * (1 / 1188))))
    )
    half_log_2pi = np.array(0.5 * math.log(2 * math.pi), dt)
    return (z - 0.5) * fnp.log(z) - z + half_log_2pi + series - fnp.log(prod)


def _scalar_key_normal(keys: Any, dt: np.dtype) -> Any:
    """One normal per key (keys: (n, 2)), each as ``normal(key_i, ())``."""
    return _vmapped(lambda k: _normal(k, (), dt), keys)


def _scalar_key_uniform(keys: Any, dt: np.dtype) -> Any:
    return _vmapped(lambda k: _uniform(k, (), dt, 0.0, 1.0), keys)


def _vmapped(f: Any, keys: Any) -> Any:
    from functrace.api import vmap

    return vmap(f)(keys)


def _split_each(keys: Any, num: int) -> Any:
    from functrace.api import vmap

    return vmap(lambda k: split(k, num))(keys)


def _gamma_one_batch(keys: Any, alpha: Any, log_space: bool) -> Any:
    """Marsaglia-Tsang for a flat batch: one key per alpha, each element's loop
    identical to the scalar algorithm (finished elements keep their state)."""
    dt = core.get_aval(alpha).dtype
    boost = alpha >= 1.0
    alpha_orig = alpha
    alpha = fnp.where(boost, alpha, alpha + 1.0)
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / fnp.sqrt(d)
    both = _split_each(keys, 2)
    key, subkey = both[:, 0], both[:, 1]

    def rejected(X: Any, V: Any, U: Any) -> Any:
        first = U >= 1.0 - 0.0331 * (X * X)
        second = fnp.log(U) >= X * 0.5 + d * ((1.0 - V) + fnp.log(V))
        return first & second

    def outer_cond(s: Any) -> Any:
        return fnp.any(rejected(s[1], s[2], s[3]))

    def outer_body(s: Any) -> Any:
        k, X, V, U = s
        active = rejected(X, V, U)
        three = _split_each(k, 3)
        nk, xk, uk = three[:, 0], three[:, 1], three[:, 2]

        def inner_cond(t: Any) -> Any:
            return fnp.any(t[2] <= 0.0)

        def inner_body(t: Any) -> Any:
            kk, x, v = t
            act = v <= 0.0
            two = _split_each(kk, 2)
            kk2, sub = two[:, 0], two[:, 1]
            x2 = _scalar_key_normal(sub, dt)
            v2 = 1.0 + x2 * c
            act_k = act[:, None]
            return (
                fnp.where(act_k, kk2, kk),
                fnp.where(act, x2, x),
                fnp.where(act, v2, v),
            )

        zero = fnp.zeros_like(alpha)
        _, x, v = lax.while_loop(inner_cond, inner_body, (xk, zero, zero - 1.0))
        nX = x * x
        nV = v * v * v
        nU = _scalar_key_uniform(uk, dt)
        ak = active[:, None]
        return (
            fnp.where(ak, nk, k),
            fnp.where(active, nX, X),
            fnp.where(active, nV, V),
            fnp.where(active, nU, U),
        )

    init = (key, fnp.zeros_like(alpha), fnp.ones_like(alpha), fnp.ones_like(alpha) * 2.0)
    _, _, V, _ = lax.while_loop(outer_cond, outer_body, init)
    if log_space:
        log_samples = -_vmapped(lambda k: _exponential(k, (), dt), subkey)
        log_boost = fnp.where(boost | (log_samples == 0), 0.0, log_samples * (1.0 / alpha_orig))
        return fnp.log(d) + fnp.log(V) + log_boost
    samples = 1.0 - _scalar_key_uniform(subkey, dt)
    b = fnp.where(boost, 1.0, fnp.power(samples, 1.0 / alpha_orig))
    return d * V * b


_SERIES_TERMS = 200
_CF_TERMS = 100


def _gamma_q(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a),
    written with primitives so that its derivative in ``a`` comes from ``jvp``: the
    power series of P = 1 - Q below x = a + 1, Legendre's continued fraction (modified
    Lentz, fixed length) above. Each branch gets safe stand-in inputs where the other
    is used (no inf/NaN in either branch's tangents)."""
    use_series = x < a + 1.0
    xs = fnp.where(use_series, x, a * 0.5)
    xc = fnp.where(use_series, a + 2.0, x)

    def series_step(n: Any, c: Any) -> Any:
        term, total = c
        term = term * xs / (a + n)
        return term, total + term

    term0 = 1.0 / a
    total = lax.fori_loop(1, _SERIES_TERMS, series_step, (term0, term0))[1]
    p_series = fnp.exp(a * fnp.log(xs) - xs - _lgamma(a)) * total

    tiny = np.finfo(core.get_aval(x).dtype).tiny * 1e10

    def cf_step(i: Any, c: Any) -> Any:
        b, cc, d, h = c
        fi = i.astype(core.get_aval(x).dtype) if hasattr(i, "astype") else float(i)
        an = -fi * (fi - a)
        b = b + 2.0
        d = an * d + b
        d = fnp.where(fnp.abs(d) < tiny, tiny, d)
        cc = b + an / cc
        cc = fnp.where(fnp.abs(cc) < tiny, tiny, cc)
        d = 1.0 / d
        return b, cc, d, h * (d * cc)

    b0 = xc + 1.0 - a
    b0 = fnp.where(fnp.abs(b0) < tiny, tiny, b0)
    init = (b0, fnp.full_like(xc, 1.0 / tiny), 1.0 / b0, 1.0 / b0)
    h = lax.fori_loop(1, _CF_TERMS, cf_step, init)[3]
    q_cf = fnp.exp(a * fnp.log(xc) - xc - _lgamma(a)) * h
    return fnp.where(use_series, 1.0 - p_series, q_cf)


def _gamma_sample_grad(a: Any, x: Any) -> Any:
    """d x / d a for x ~ Gamma(a, 1) at fixed CDF value (the implicit reparameterisation
    gradient JAX uses): (dQ/da)(a, x) / density(a, x)."""
    from functrace.api import jvp

    dq_da = jvp(lambda aa: _gamma_q(aa, x), (a,), (fnp.ones_like(a),))[1]
    density = fnp.exp((a - 1.0) * fnp.log(x) - x - _lgamma(a))
    return dq_da / density


def _make_gamma_flat(log_space: bool) -> Any:
    from functrace.custom_derivatives import custom_jvp

    def sample(keys: Any, alpha: Any) -> Any:
        return _gamma_one_batch(keys, alpha, log_space)

    f = custom_jvp(sample)

    def sample_jvp(primals: Any, tangents: Any) -> Any:
        keys, alpha = primals
        alpha_dot = tangents[1]
        # The sample comes from f itself, so that a second derivative differentiates
        # it by this rule again (d/da g(a, x(a)) = dg/da + dg/dx g).
        out = f(keys, alpha)
        if log_space:
            x = fnp.exp(out)
            x = fnp.where(x == 0, np.finfo(core.get_aval(out).dtype).tiny, x)
            g = _gamma_sample_grad(alpha, x) / x
        else:
            g = _gamma_sample_grad(alpha, out)
        return out, alpha_dot * g

    f.defjvp(sample_jvp)
    return f


_GAMMA_FLAT: dict[bool, Any] = {}


def _gamma(key: Any, a: Any, shp: tuple[int, ...], dt: np.dtype, log_space: bool) -> Any:
    a = fnp.broadcast_to(_as(a, dt), shp)
    n = math.prod(shp)
    if n == 0:
        return fnp.zeros(shp, dt)
    keys = split(key, n)
    flat = fnp.reshape(a, (n,))
    if log_space not in _GAMMA_FLAT:
        _GAMMA_FLAT[log_space] = _make_gamma_flat(log_space)
    return fnp.reshape(_GAMMA_FLAT[log_space](keys, flat), shp)


def _gamma_sampler(
    name: str, key: Any, a: Any, shape: Sequence[int] | None, dtype: Any, log_space: bool
) -> Any:
    key = _check_key(name, key)
    dt = _float_dtype(name, dtype)
    a = _as(a, dt)
    shp = _shape_of(a) if shape is None else _canonical_shape(name, shape)
    _check_shape(name, shp, _shape_of(a))
    return _gamma(key, a, shp, dt, log_space)


@_quiet
def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) samples (Marsaglia and Tsang's method, JAX's loop structure).

    >>> import functrace.random as random
    >>> random.gamma(random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    return _gamma_sampler("gamma", key, a, shape, dtype, log_space=False)


@_quiet
def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) samples, accurate for small ``a``.

    >>> import functrace.random as random
    >>> random.loggamma(random.PRNGKey(0), 0.1, (3,)).shape
    (3,)
    """
    return _gamma_sampler("loggamma", key, a, shape, dtype, log_space=True)


@_quiet
def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Beta(a, b) samples, from two log-gamma samples.

    >>> import functrace.random as random
    >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (4,))
    >>> bool(((x > 0) & (x < 1)).all())
    True
    """
    key = _check_key("beta", key)
    dt = _float_dtype("beta", dtype)
    a, b = _as(a, dt), _as(b, dt)
    if shape is None:
        shp = tuple(np.broadcast_shapes(_shape_of(a), _shape_of(b)))
    else:
        shp = _canonical_shape("beta", shape)
        _check_shape("beta", shp, _shape_of(a), _shape_of(b))
    both = split(key)
    log_a = _gamma(both[0], a, shp, dt, True)
    log_b = _gamma(both[1], b, shp, dt, True)
    top = fnp.maximum(log_a, log_b)
    ga, gb = fnp.exp(log_a - top), fnp.exp(log_b - top)
    return ga / (ga + gb)


@_quiet
def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) samples (alpha's last axis is the simplex).

    >>> import numpy as np, functrace.random as random
    >>> x = random.dirichlet(random.PRNGKey(0), np.ones(3))
    >>> bool(abs(x.sum() - 1) < 1e-12)
    True
    """
    key = _check_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    alpha = _as(alpha, dt)
    ash = _shape_of(alpha)
    if len(ash) < 1:
        raise ValueError("random.dirichlet: expected alpha.ndim >= 1, got 0.")
    shp = ash[:-1] if shape is None else _canonical_shape("dirichlet", shape)
    _check_shape("dirichlet", shp, ash[:-1])
    logs = _gamma(key, alpha, (*shp, ash[-1]), dt, True)
    from functrace.nn import softmax

    return softmax(logs, axis=-1)


def _poisson_knuth(key: Any, lam: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    def cond(s: Any) -> Any:
        return fnp.any(s[2] > -lam)

    def body(s: Any) -> Any:
        k, rng, log_prod = s
        both = split(rng)
        k = fnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(both[1], shp, np.dtype(np.float32), 0.0, 1.0)
        return k, both[0], log_prod + fnp.log(u)

    init = (fnp.zeros(shp, dt), key, fnp.zeros(shp, np.float32))
    k = lax.while_loop(cond, body, init)[0]
    return k - 1


def _poisson_rejection(key: Any, lam: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    f32 = np.dtype(np.float32)
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def cond(s: Any) -> Any:
        return fnp.any(~s[1])

    def body(s: Any) -> Any:
        k_out, accepted, rng = s
        three = split(rng, 3)
        u = _uniform(three[1], shp, f32, 0.0, 1.0) - 0.5
        v = _uniform(three[2], shp, f32, 0.0, 1.0)
        us = 0.5 - fnp.abs(u)
        k = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - _lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s_ <= t))
        return fnp.where(accept, k, k_out), accepted | accept, three[0]

    init = (fnp.full(shp, -1.0, f32), fnp.zeros(shp, bool), key)
    return lax.while_loop(cond, body, init)[0].astype(dt)


@_quiet
def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(lam) samples (default dtype int64): Knuth's method for lam < 10, Hormann's
    transformed rejection above, computed in float32 as JAX does.

    >>> import functrace.random as random
    >>> random.poisson(random.PRNGKey(0), 3.0, (4,)).dtype
    dtype('int64')
    """
    key = _check_key("poisson", key)
    dt = _int_dtype("poisson", dtype)
    shp = _shape_of(lam) if shape is None else _canonical_shape("poisson", shape)
    _check_shape("poisson", shp, _shape_of(lam))
    lam = fnp.broadcast_to(_as(lam, np.dtype(np.float32)), shp)
    use_knuth = fnp.isnan(lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, np.float32(0.0))
    lam_rej = fnp.where(use_knuth, np.float32(1e5), lam)
    result = fnp.where(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shp, dt),
        _poisson_rejection(key, lam_rej, shp, dt),
    )
    return fnp.where(lam == 0, fnp.zeros_like(result), result)


__all__ = [
    "PRNGKey",
    "bernoulli",
    "beta",
    "bits",
    "categorical",
    "choice",
    "dirichlet",
    "exponential",
    "fold_in",
    "gamma",
    "gumbel",
    "key",
    "key_data",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "multivariate_normal",
    "normal",
    "permutation",
    "poisson",
    "randint",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
]
