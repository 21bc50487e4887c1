"""``lax.rng_bit_generator`` and ``RandomAlgorithm``: XLA's stateless bit generator.

JAX hands the call to XLA, whose bits are the backend's; these are XLA's CPU ones,
measured against JAX 0.10.2 and recorded in ``tests/fixtures/api_small_jax.npz``. A
key is uint32[4] (or uint64[2]): its first 64 bits are the generator's key ``(k0,
k1)``, its last 64 a counter state ``s``; the new key has the state advanced by the
counters used, ``s + i`` for ``i = 0, 1, ...``.

* ``RNG_THREE_FRY``: Threefry-2x32 (the ``threefry2x32`` primitive) of ``(k0, k1)``
  over the words of ``s + i`` gives the pair ``(a_i, b_i)``. The output shape is split
  in two along its first dimension of even size (dimension 0 padded by one when there
  is none), the ``a`` and ``b`` blocks alternating along it. 64-bit results are
  ``a | b << 32``, one counter each, in order.
* ``RNG_PHILOX`` and ``RNG_DEFAULT`` (XLA's CPU default): Philox-4x32 with 10 rounds of
  ``(k0, k1)`` over the 128-bit counter ``(k0, k1, s) + i`` (the state's words low, the
  key's high, so a state passing 2**64 carries into them), four 32-bit words per
  counter (two 64-bit ones), in order.

8- and 16-bit results keep the low bits of the 32-bit ones.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import elementwise as ew
from functrace.lax.base import broadcast_in_dim, convert_element_type, reshape
from functrace.lax.composites import shift_right_logical
from functrace.lax.random_bits import threefry2x32
from functrace.lax.shapes import concatenate, iota
from functrace.lax.shapes import slice as lax_slice

_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_BITS = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of :func:`rng_bit_generator` (JAX's ``lax.RandomAlgorithm``)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


def _u64(lo: Any, hi: Any) -> Any:
    return ew.bitwise_or(
        convert_element_type(lo, _U64),
        ew.shift_left(convert_element_type(hi, _U64), np.uint64(32)),
    )


def _words(x: Any) -> tuple[Any, Any]:
    """The low and high 32-bit words of uint64 ``x``."""
    lo = convert_element_type(ew.bitwise_and(x, np.uint64(0xFFFFFFFF)), _U32)
    return lo, convert_element_type(shift_right_logical(x, np.uint64(32)), _U32)


_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))


def _philox(k0: Any, k1: Any, c: list[Any]) -> list[Any]:
    """Philox-4x32-10 of the key words over the four counter words (uint32 arrays)."""
    for _ in range(10):
        lo0, hi0 = _words(ew.mul(convert_element_type(c[0], _U64), _PHILOX_M[0]))
        lo1, hi1 = _words(ew.mul(convert_element_type(c[2], _U64), _PHILOX_M[1]))
        c = [
            ew.bitwise_xor(ew.bitwise_xor(hi1, c[1]), k0),
            lo1,
            ew.bitwise_xor(ew.bitwise_xor(hi0, c[3]), k1),
            lo0,
        ]
        k0, k1 = ew.add(k0, _PHILOX_W[0]), ew.add(k1, _PHILOX_W[1])
    return c


def _index(x: Any, i: int) -> Any:
    return reshape(lax_slice(x, (i,), (i + 1,)), ())


def rng_bit_generator(
    key: Any,
    shape: Sequence[int],
    dtype: Any = np.uint32,
    algorithm: Any = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding: Any = None,
) -> tuple[Any, Any]:
    """``(new_key, bits)``: uniformly random unsigned integers of ``shape`` and
    ``dtype`` (uint8, 16, 32 or 64) from ``key`` (uint32[4], or uint64[2]), as JAX's
    ``lax.rng_bit_generator``, with JAX's CPU bits for every algorithm
    (``RNG_DEFAULT`` is Philox there, as here; other JAX backends may differ). See the
    module docstring for the layout.

    >>> import numpy as np
    >>> new, bits = rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (2,),
    ...                               algorithm=RandomAlgorithm.RNG_THREE_FRY)
    >>> new
    array([1, 2, 4, 4], dtype=uint32)
    """
    fname = "rng_bit_generator"
    try:
        alg = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"{fname}: expected a RandomAlgorithm, got {algorithm!r:.40}.") from None
    if out_sharding is not None:
        raise ValueError(f"{fname}: expected out_sharding=None, got {out_sharding!r:.60}.")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"{fname}: expected an unsigned integer dtype, got {dtype!r:.40}."
        ) from None
    if dt not in _BITS:
        raise TypeError(f"{fname}: expected dtype uint8, uint16, uint32 or uint64, got {dt}.")
    try:
        out_shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fname}: expected a shape of ints, got {shape!r:.60}.") from None
    if any(d < 0 for d in out_shape):
        raise ValueError(f"{fname}: expected nonnegative sizes, got {out_shape}.")
    ka = core.get_aval(key)
    if (ka.shape, ka.dtype) == ((4,), _U32):
        k0, k1 = _index(key, 0), _index(key, 1)
        state = _u64(_index(key, 2), _index(key, 3))
    elif (ka.shape, ka.dtype) == ((2,), _U64):
        k0, k1 = _words(_index(key, 0))
        state = _index(key, 1)
    else:
        raise TypeError(
            f"{fname}: expected a uint32[4] or uint64[2] key, got {ka.dtype.name}{list(ka.shape)}."
        )
    size = math.prod(out_shape)
    if size == 0:
        return key, broadcast_in_dim(np.zeros((), dt)[()], out_shape, ())
    if alg != RandomAlgorithm.RNG_THREE_FRY:  # Philox: 4 words (2 for uint64) a counter
        per = 2 if dt == _U64 else 4
        count = -(-size // per)
        counters = ew.add(broadcast_in_dim(state, (count,), ()), iota(_U64, count))
        lo, hi = _words(counters)
        # the counter is 128 bits, the key's 64 above the state's: carries go up into them
        carry = convert_element_type(ew.lt(counters, state), _U64)
        up0, up1 = _words(ew.add(broadcast_in_dim(_u64(k0, k1), (count,), ()), carry))
        kb0, kb1 = broadcast_in_dim(k0, (count,), ()), broadcast_in_dim(k1, (count,), ())
        w = _philox(kb0, kb1, [lo, hi, up0, up1])
        if dt == _U64:
            w = [_u64(w[0], w[1]), _u64(w[2], w[3])]
        flat = concatenate([reshape(v, (count, 1)) for v in w], 1)
        flat = lax_slice(reshape(flat, (count * per,)), (0,), (size,))
        bits = reshape(flat, out_shape)
        if dt not in (_U32, _U64):
            bits = convert_element_type(bits, dt)
        return _new_key(key, ka.dtype, state, count), bits
    # the layout's shape: a first even dimension (dimension 0 padded when there is none)
    padded = out_shape or (1,)
    split = next((d for d, n in enumerate(padded) if n % 2 == 0), None)
    if split is None:
        split, padded = 0, (padded[0] + 1,) + padded[1:]
    count = size if dt == _U64 else math.prod(padded) // 2
    counters = ew.add(broadcast_in_dim(state, (count,), ()), iota(_U64, count))
    x0, x1 = _words(counters)
    a, b = threefry2x32(
        broadcast_in_dim(k0, (count,), ()), broadcast_in_dim(k1, (count,), ()), x0, x1
    )
    if dt == _U64:
        bits = reshape(_u64(a, b), out_shape)
    else:
        # halves: padded with dimension `split` halved; a and b alternate along it
        half = padded[:split] + (padded[split] // 2,) + padded[split + 1 :]
        pair = half[: split + 1] + (1,) + half[split + 1 :]
        both = concatenate([reshape(a, pair), reshape(b, pair)], split + 1)
        bits = reshape(both, padded)
        if padded != (out_shape or (1,)):
            bits = lax_slice(bits, (0,) * len(padded), out_shape or (1,))
        bits = reshape(bits, out_shape)
        if dt != _U32:
            bits = convert_element_type(bits, dt)
    return _new_key(key, ka.dtype, state, count), bits


def _new_key(key: Any, dtype: np.dtype, state: Any, count: int) -> Any:
    new_state = ew.add(state, np.uint64(count))
    if dtype == _U64:
        return concatenate([reshape(_index(key, 0), (1,)), reshape(new_state, (1,))], 0)
    lo, hi = _words(new_state)
    return concatenate([lax_slice(key, (0,), (2,)), reshape(lo, (1,)), reshape(hi, (1,))], 0)


__all__ = ["RandomAlgorithm", "rng_bit_generator"]
