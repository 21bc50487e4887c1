"""``numpy_dtype_promotion("strict")``: JAX's recorded answers for every pair of dtypes
(``strict_promotion_cases.py``), the messages, the paths that check, transforms of
functions that stay within one dtype, and the mode's scope (thread or process)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.dtypes import TypePromotionError
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from strict_promotion_cases import cases

F32 = np.arange(1.0, 4.0, dtype=np.float32)
F64 = np.arange(1.0, 4.0)
I32 = np.arange(1, 4, dtype=np.int32)


def test_allowed_and_refused_pairs_match_jax():
    tol = lambda k, v: 1e-6  # noqa: E731 - (only the jit entries are numbers)
    assert_matches_recorded(cases(ft), "strict_promotion_jax.npz", tol)
    assert not ft.dtypes.promotion.maybe_strict  # the block is over


def test_errors_name_the_function_and_the_dtypes():
    a32 = fnp.asarray(F32)
    with ft.numpy_dtype_promotion("strict"):
        calls = {
            "add: .*float32 and float64": lambda: fnp.add(F32, F64),
            "__mul__: .*float32 and float64": lambda: a32 * F64,
            "multiply: .*int32 and weak float": lambda: fnp.multiply(I32, 2.5),
            "where: .*float32 and float64": lambda: fnp.where(F32 > 1, F32, F64),
            "select: .*float32 and int32": lambda: fnp.select([F32 > 1], [F32], I32),
            "concatenate: .*float32 and float64": lambda: fnp.concatenate([F32, F64]),
            "stack: .*float32, float64, int32": lambda: fnp.stack([F32, F64, I32]),
            "concatenate: .*bool and int64": lambda: fnp.hstack([F32 > 1, fnp.asarray(1)]),
            "__rmatmul__: .*float64 and float32": lambda: F32 @ fnp.asarray(F64),
            "dot: .*float64 and int32": lambda: fnp.dot(F64, I32),
            "einsum: .*float32 and float64": lambda: fnp.einsum("i,i->", F32, F64),
            "result_type: .*float32 and float64": lambda: fnp.result_type(F32, np.float64),
            "promote_types: .*int32 and float32": lambda: fnp.promote_types(np.int32, np.float32),
            "subtract: .*float32 and float64": lambda: ft.jit(lambda x, y: x - y)(F32, F64),
            "true_divide: .*float32 and float64": lambda: ft.grad(lambda x: fnp.sum(x / F64))(F32),
            "maximum: .*float32 and float64": lambda: ft.vmap(lambda a: fnp.maximum(a, F64))(F32),
            "less: .*int32 and weak float": lambda: ft.jit(lambda x: x < 1.5)(I32),
        }
        for match, call in calls.items():
            with pytest.raises(TypePromotionError, match=match) as info:
                call()
            assert "numpy_dtype_promotion='strict'" in str(info.value), match
        # a TypePromotionError is a ValueError, as JAX's
        with pytest.raises(ValueError, match="float32 and complex64"):
            ft.dtypes.result_type(np.float32, np.complex64)


def test_allowed_promotions_and_transforms_compute_as_standard():
    def f(x):  # within float32, with weak Python scalars and casts
        y = 2.0 * x**2 + 1 - fnp.sin(x) / 3
        z = fnp.where(x > 1.5, y, 0.5) + fnp.concatenate([x, y])[:3]
        return fnp.sum(z * x.astype(x.dtype)) + fnp.mean(fnp.tanh(x))

    standard = f(F32)
    with ft.numpy_dtype_promotion("strict"):
        assert f(F32) == standard and f(F32).dtype == np.float32
        np.testing.assert_allclose(ft.jit(f)(F32), standard, rtol=1e-6)
        check_grads(f, (F64,), order=2, modes=("fwd", "rev"))
        rows = np.stack([F32, F32 + 1])
        per_row = ft.vmap(ft.grad(f))(rows)
        np.testing.assert_allclose(per_row, [ft.grad(f)(r) for r in rows], rtol=1e-6)
        g = ft.grad(lambda v: fnp.sum(ft.vmap(f)(v)))(rows)
        np.testing.assert_allclose(g, per_row, rtol=1e-6)
        # defined in another dtype, not promotions: as in JAX
        assert fnp.true_divide(I32, I32).dtype == np.float64
        assert fnp.sin(I32).dtype == np.float64
        assert fnp.ldexp(F32, I32).dtype == np.float32
        assert (fnp.asarray(I32) + 2).dtype == np.int32
        assert (fnp.asarray(F32.astype(np.complex64)) * (1 + 2j)).dtype == np.complex64
        assert ft.dtypes.result_type(2, 2.5, return_weak_type_flag=True) == (np.float64, True)
        assert fnp.concatenate([F32, F64], dtype=np.float64).dtype == np.float64
        # the user's own NumPy arithmetic is NumPy's, also on Arrays (JAX converts them)
        assert (F32 + F64).dtype == np.float64
        assert np.add(fnp.asarray(F32), F64).dtype == np.float64
        np.testing.assert_allclose(fnp.asarray(F32), F64)
        # functrace's own functions mix dtypes inside (quantile's int64 positions): only
        # the user's calls are checked, also when a transform calls a fnp function itself
        m = np.stack([F32, F32[::-1]])
        assert float(ft.jit(lambda a: fnp.quantile(a, 0.3))(m)) == 1.5
        assert ft.grad(lambda a: fnp.median(a) + fnp.std(a) + fnp.var(a, ddof=1))(F32).shape == (3,)
        with pytest.raises(TypePromotionError, match="maximum: .*float32 and float64"):
            ft.vmap(fnp.maximum)(F32, F64)


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def _mode_and_sum():
    try:
        return ft.config.numpy_dtype_promotion, str(fnp.add(F32, F64).dtype)
    except TypePromotionError:
        return ft.config.numpy_dtype_promotion, "TypePromotionError"


def test_the_context_manager_is_per_thread_and_config_update_process_wide():
    with ft.numpy_dtype_promotion("strict"):
        assert _mode_and_sum() == ("strict", "TypePromotionError")
        assert _in_thread(_mode_and_sum) == ("standard", "float64")  # as JAX's blocks
        with ft.numpy_dtype_promotion("standard"):
            assert _mode_and_sum() == ("standard", "float64")
        assert ft.config.read("jax_numpy_dtype_promotion") == "strict"
    assert _mode_and_sum() == ("standard", "float64")
    assert not ft.dtypes.promotion.maybe_strict
    ft.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        assert _in_thread(_mode_and_sum) == ("strict", "TypePromotionError")
        with ft.numpy_dtype_promotion("standard"):  # a thread may still opt out
            assert _mode_and_sum() == ("standard", "float64")
    finally:
        ft.config.update("jax_numpy_dtype_promotion", "standard")
    with ft.config.override(numpy_dtype_promotion="strict"):
        assert _in_thread(_mode_and_sum) == ("strict", "TypePromotionError")
    assert _mode_and_sum() == ("standard", "float64")
    with pytest.raises(ValueError, match="numpy_dtype_promotion: expected 'standard' or"):
        with ft.numpy_dtype_promotion("loose"):
            pass
    with pytest.raises(RuntimeError), ft.numpy_dtype_promotion("strict"):
        raise RuntimeError  # the block's mode is restored on an exception too
    assert not ft.dtypes.promotion.maybe_strict


def test_jit_traces_again_under_strict_and_keeps_its_standard_traces():
    f = ft.jit(lambda x, y: x * y)
    assert f(F32, F64).dtype == np.float64  # standard: traced and cached
    with ft.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match="multiply: .*float32 and float64"):
            f(F32, F64)  # a signature of its own under strict: traced again, refused
        assert f(F32, F32).dtype == np.float32
    assert f(F32, F64).dtype == np.float64 and f.trace_count == 2  # (the refused one: none)
    g = ft.grad(lambda x: fnp.sum(x * F64))  # eager derivative programs: the same
    assert g(F32).dtype == np.float32 and g(F32).dtype == np.float32
    with ft.numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError):
        g(F32)
