"""Keys and random bits: ``PRNGKey``/``key``, ``split``, ``fold_in``, ``bits`` and the
key-data helpers, on the ``lax.threefry2x32`` cipher with JAX's key derivation and
counter layout."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, dtypes, lax
from functrace._prng import PRNGKeyArray
from functrace.core import Tracer
from functrace.random._args import _U32, _U64, _UINTS, _canonical_shape, _check_sharding, _full


def _check_key(name: str, key: Any) -> Any:
    """``key`` (a typed key of shape ``()`` or a raw uint32[2] key) as its uint32[2]
    data (an array or tracer); a clear error otherwise."""
    if type(key) is PRNGKeyArray:
        if key.shape != ():
            raise ValueError(
                f"random.{name}: expected a single PRNG key (a key array of shape ()), got "
                f"a key array of shape {key.shape}. A batch of {key.shape} keys: map over "
                f"it with vmap (ft.vmap(lambda k: random.{name}(k, ...))(keys))."
            )
        return key._base
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


def _seed_words(seed: Any) -> tuple[Any, Any]:
    """The two uint32 words of a key made from an integer seed (64-bit seeds bit-cast,
    32-bit and narrower seeds zero-extended, as JAX)."""
    if type(seed) is PRNGKeyArray:
        raise TypeError(
            "random.PRNGKey: expected a scalar integer seed, got a key array (keys are "
            "made from seeds; use random.split or random.fold_in for new keys)."
        )
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


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key (a key array of shape ``()``, dtype ``key<fry>``) from an integer
    seed, as ``jax.random.key``: the same words as :func:`PRNGKey` of the seed.

    >>> import functrace.random as random
    >>> random.key(1)
    Array((), dtype=key<fry>) overlaying:
    [0 1]
    """
    return PRNGKeyArray(PRNGKey(seed, impl=impl))


def _check_impl(impl: Any) -> None:
    if impl not in (None, "threefry2x32"):
        raise ValueError(
            f"random: expected impl=None or 'threefry2x32' (the only generator functrace "
            f"has), got {impl!r}."
        )


def key_data(keys: Any) -> Any:
    """The uint32 words of ``keys`` (shape ``(*keys.shape, 2)`` for typed keys); raw keys
    (uint32 with a last axis of length 2) are returned unchanged, as JAX.

    >>> import functrace.random as random
    >>> random.key_data(random.split(random.key(0), 2)).shape
    (2, 2)
    """
    if type(keys) is PRNGKeyArray:
        return keys._base
    return _check_keys("key_data", keys)


def _check_keys(name: str, keys: Any) -> Any:
    """Raw ``keys`` (any batch shape) as an array or tracer; a clear error otherwise."""
    if not isinstance(keys, Tracer):
        keys = np.asarray(keys)
    aval = core.get_aval(keys)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(
            f"random.{name}: expected PRNG keys (typed keys, or uint32 with a last axis of "
            f"length 2), got {aval.dtype.name}{list(aval.shape)}."
        )
    return keys


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """Typed keys from their uint32 words (shape ``(..., 2)``; the keys have shape
    ``(...)``), as ``jax.random.wrap_key_data``.

    >>> import numpy as np, functrace.random as random
    >>> random.wrap_key_data(np.array([0, 7], np.uint32))
    Array((), dtype=key<fry>) overlaying:
    [0 7]
    """
    _check_impl(impl)
    if type(key_bits_array) is PRNGKeyArray:
        raise TypeError(
            "random.wrap_key_data: expected uint32 key data, got a key array (already "
            "typed keys: use them as they are, or random.key_data(k) for their words)."
        )
    if not isinstance(key_bits_array, Tracer):
        key_bits_array = np.asarray(key_bits_array)
    aval = core.get_aval(key_bits_array)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(
            f"random.wrap_key_data: expected a uint32 array whose last axis has length 2, "
            f"got {aval.dtype.name}{list(aval.shape)}."
        )
    return PRNGKeyArray(key_bits_array)


def key_impl(keys: Any) -> str:
    """The generator's name, of typed or raw keys: always ``'threefry2x32'``."""
    key_data(keys)
    return "threefry2x32"


def key_dtype(impl: Any = None) -> dtypes.KeyDtype:
    """The dtype of typed keys of generator ``impl`` (None or ``'threefry2x32'``, the
    only one): ``key<fry>``, as JAX; ``issubdtype(key_dtype(), dtypes.prng_key)``.

    >>> import functrace.random as random
    >>> random.key_dtype()
    key<fry>
    """
    _check_impl(impl)
    return dtypes.KEY_FRY


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
    """``num`` new keys, as JAX: a key array of shape ``(num,)`` (``num`` for a tuple)
    from a typed key, raw ``uint32[num, 2]`` (``(*num, 2)``) from a raw key.

    >>> import functrace.random as random
    >>> random.split(random.PRNGKey(0))
    array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    >>> random.split(random.key(0), (2, 3)).shape
    (2, 3)
    """
    typed = type(key) is PRNGKeyArray
    key = _check_key("split", key)
    shape = _canonical_shape("split", num)
    y0, y1 = _hash(key, shape)
    out = _stack_words(y0, y1)
    return PRNGKeyArray(out) if typed else out


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (a scalar), as JAX (typed
    for a typed ``key``, raw for a raw one).

    >>> import functrace.random as random
    >>> random.fold_in(random.PRNGKey(0), 7)
    array([2716826189,  292468403], dtype=uint32)
    """
    typed = type(key) is PRNGKeyArray
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
    out = _stack_words(y0, y1)
    return PRNGKeyArray(out) if typed else out


def _random_bits(key: Any, width: int, shape: tuple[int, ...]) -> Any:
    y0, y1 = _hash(key, shape)
    if width == 64:
        hi = lax.mul(lax.convert_element_type(y0, _U64), _full(y0, 2**32, _U64))
        return lax.bitwise_or(hi, lax.convert_element_type(y1, _U64))
    bits = lax.bitwise_xor(y0, y1)
    return bits if width == 32 else lax.convert_element_type(bits, _UINTS[width])


def bits(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Uniform random bits: unsigned integers of ``dtype`` (default uint64).

    >>> import functrace.random as random
    >>> random.bits(random.PRNGKey(0), (2,))
    array([7719171245655871230, 3989946895414531357], dtype=uint64)
    """
    key = _check_key("bits", key)
    _check_sharding("bits", out_sharding)
    dt = _U64 if dtype is None else np.dtype(dtype)
    if dt.kind != "u":
        raise ValueError(f"random.bits: expected an unsigned integer dtype, got {dt.name}.")
    return _random_bits(key, dt.itemsize * 8, _canonical_shape("bits", shape))


def clone(key: Any) -> Any:
    """The key itself (typed or raw), as ``jax.random.clone`` outside JAX's key-reuse
    checker (functrace has no such checker: keys may be reused freely).

    >>> import functrace.random as random
    >>> random.clone(random.PRNGKey(3))
    array([0, 3], dtype=uint32)
    """
    if type(key) is PRNGKeyArray:
        return key
    return _check_keys("clone", key)
