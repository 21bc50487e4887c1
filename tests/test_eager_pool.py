"""The eager pool (``functrace/_buffers.py``): large float results of eager elementwise
operations (``Array`` operators, NumPy ufuncs called on ``Array`` objects, the
elementwise primitives' impls) are written into reused buffers.

Invisible but for speed: the same bits as without the pool, a result someone holds is
never written again, only large float results, a bounded pool."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import _buffers

N = 600  # (600, 600) float32: 1.4 MB, above _buffers.EAGER_MIN_BYTES


@pytest.fixture
def pool_off():
    """Compute something with the pool off (restored after)."""
    old = _buffers.enabled

    def run(fn):
        _buffers.enabled = False
        try:
            return fn()
        finally:
            _buffers.enabled = old

    yield run
    _buffers.enabled = old


def _ops(a, b, s, plain):
    """Large float results through every pooled path."""
    return [
        a * 0.9,
        0.9 * a,
        a + b,
        b - a,
        a / (b + 2.0),
        2.0 / (a * a + 1.0),
        a**2,
        2**a,
        -a,
        abs(a),
        a * s,  # a 0-d Array of the same dtype
        a + b[0],  # broadcast (N,) operand
        plain * a,  # ndarray * Array: Array.__rmul__
        np.multiply(plain, a),  # a NumPy ufunc on an Array: __array_ufunc__
        np.sqrt(np.abs(a)),
        fnp.sqrt(fnp.abs(a)),  # the primitives' impls
        fnp.tanh(a) * fnp.exp(-a),
        fnp.maximum(a, 0.0),
        ft.grad(lambda x: fnp.sum(fnp.sin(x) * x))(a),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_bits_as_without_the_pool(dtype, pool_off) -> None:
    rng = np.random.default_rng(0)
    plain = rng.standard_normal((N, N)).astype(dtype)
    a, b = fnp.asarray(plain), fnp.asarray(rng.standard_normal((N, N)).astype(dtype))
    s = fnp.asarray(dtype(1.5))
    want = pool_off(lambda: _ops(a, b, s, plain))
    for _ in range(3):  # the pool's buffers are reused from the second round on
        got = _ops(a, b, s, plain)
        for i, (g, w) in enumerate(zip(got, want)):
            assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape, i
            assert g.tobytes() == w.tobytes(), f"result {i} differs"


def test_a_held_result_is_never_written_again() -> None:
    rng = np.random.default_rng(1)
    plain = rng.standard_normal((N, N)).astype(np.float32)
    a = fnp.asarray(plain)
    held = [a * float(k) for k in range(3 * _buffers.EAGER_PER_SHAPE)]
    mine = np.multiply(plain, a)  # a plain, writable NumPy array: the caller's own
    mine[0, 0] = 123.0
    view = (a + 1.0)[::2]  # only a view of a result is held
    for k in range(4 * _buffers.EAGER_PER_SHAPE):  # churn through the pool
        tmp = a * -1.0 + float(k)
        assert not np.shares_memory(tmp, mine) and not np.shares_memory(tmp, view)
        del tmp
    for k, h in enumerate(held):
        np.testing.assert_array_equal(h, plain * np.float32(k))
    assert mine[0, 0] == 123.0
    np.testing.assert_array_equal(view, (plain + np.float32(1.0))[::2])


def test_a_dropped_result_is_reused() -> None:
    _buffers.eager_pool.clear()
    a = fnp.asarray(np.ones((N, N), np.float32))
    first = a * 2.0
    where = first.__array_interface__["data"][0]
    del first
    again = a * 3.0
    assert again.__array_interface__["data"][0] == where  # the same buffer, written anew
    assert float(again[0, 0]) == 3.0


def test_only_large_float_results_of_one_dtype() -> None:
    _buffers.eager_pool.clear()
    small = fnp.asarray(np.ones((100, 100), np.float32))
    ints = fnp.asarray(np.ones((N, N), np.int64))
    f32 = fnp.asarray(np.ones((N, N), np.float32))
    f64 = np.ones((N, N), np.float64)
    small * 2.0, ints * 2, ints + ints, f32 < f32
    assert _buffers.eager_pool.bytes == 0
    mixed = f32 + f64  # float64 result, as NumPy promotes: computed without the pool
    assert mixed.dtype == np.float64 and _buffers.eager_pool.bytes == 0
    wide = f32 * np.float64(2.0)  # a strong NumPy float64 scalar: float64, no pool
    assert wide.dtype == np.float64 and _buffers.eager_pool.bytes == 0
    assert (f32 * 2.0).dtype == np.float32 and _buffers.eager_pool.bytes > 0


def test_bounded() -> None:
    _buffers.eager_pool.clear()
    rows = _buffers.EAGER_MAX_BYTES // (N * 4) // 4
    for k in range(12):  # shapes enough to exceed the bound several times over
        x = fnp.asarray(np.ones((rows + k, N), np.float32))
        for _ in range(_buffers.EAGER_PER_SHAPE + 2):
            keep = [x * 2.0 for _ in range(3)]
            del keep
        assert _buffers.eager_pool.bytes <= _buffers.EAGER_MAX_BYTES
        assert all(len(b) <= _buffers.EAGER_PER_SHAPE for b in _buffers.eager_pool.kinds.values())
    _buffers.eager_pool.clear()
    assert _buffers.eager_pool.bytes == 0


def test_errors_and_warnings_are_numpys() -> None:
    a = fnp.asarray(np.zeros((N, N), np.float32))
    with pytest.warns(RuntimeWarning, match="divide"):
        r = 1.0 / a
    assert np.isinf(r).all()
    with pytest.raises(ValueError, match="broadcast"):
        a + fnp.asarray(np.ones((N + 1, N), np.float32))


def test_threads_never_share_a_buffer() -> None:
    """Threads taking buffers of one shape at once each get their own (a buffer is
    taken under the pool's lock and held from then on)."""
    import threading

    base = np.random.default_rng(3).standard_normal((N, N)).astype(np.float32)
    a = fnp.asarray(base)
    bad = []

    def work(k: int) -> None:
        for i in range(20):
            s = float(k * 100 + i)
            r = fnp.sqrt(fnp.abs(a)) * s + s  # pooled impl, then pooled operators
            if not np.array_equal(r, np.sqrt(np.abs(base)) * np.float32(s) + np.float32(s)):
                bad.append((k, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
