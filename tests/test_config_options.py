"""JAX's configuration options that take values (``functrace/_config_options.py``):
the lines JAX programs start with run, ``numpy_rank_promotion`` is in effect on every
path (eager operators, ``functrace.numpy`` on NumPy arrays, traced under
``jit``/``grad``/``vmap``), and other values fail with errors that say why."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import _config_options
from functrace.experimental.compilation_cache import compilation_cache as cc


@pytest.fixture(autouse=True)
def _restore_options():
    before = {k: ft.config.read(k) for k in _config_options.OPTIONS if k != "num_cpu_devices"}
    yield
    for k, v in before.items():
        ft.config.update(k, v)
    ft.config.update("num_cpu_devices", -1)  # back to "from XLA_FLAGS, else 1"


def test_prelude_of_jax_programs_runs() -> None:
    # the settings real programs and test suites make before anything else
    ft.config.update("jax_platform_name", "cpu")
    ft.config.update("jax_platforms", "cpu")
    ft.config.update("jax_default_matmul_precision", "highest")
    ft.config.update("jax_traceback_filtering", "off")
    ft.config.update("jax_compilation_cache_dir", "/nonexistent/cache")
    cc.set_cache_dir("/nonexistent/cache")  # the other spelling of the same setting
    cc.reset_cache()
    with pytest.raises(TypeError, match="set_cache_dir: expected a path"):
        cc.set_cache_dir(7)
    ft.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    ft.config.update("jax_threefry_partitionable", True)
    ft.config.update("jax_default_prng_impl", "threefry2x32")
    ft.config.update("jax_enable_checks", True)
    ft.config.update("jax_numpy_dtype_promotion", "standard")
    ft.config.update("jax_enable_x64", True)
    assert ft.config.read("jax_default_matmul_precision") == "highest"
    assert ft.config.platform_name == "cpu"
    assert ft.config.traceback_filtering == "off"
    assert ft.config.compilation_cache_dir == "/nonexistent/cache"
    assert ft.config.values()["numpy_rank_promotion"] == "allow"
    assert "transfer_guard" in dir(ft.config)
    # and a computation afterwards is unchanged
    assert float(ft.jit(ft.grad(lambda x: x**3))(2.0)) == 12.0


@pytest.mark.parametrize(
    ("name", "value", "error", "match"),
    [
        ("jax_platform_name", "gpu", ValueError, "expected 'cpu'"),
        ("jax_platforms", "cuda,tpu", ValueError, "expected 'cpu'"),
        ("jax_numpy_rank_promotion", "sometimes", ValueError, "allow, warn, raise"),
        ("jax_numpy_dtype_promotion", "loose", ValueError, "'standard' or 'strict'"),
        ("jax_threefry_partitionable", False, NotImplementedError, "partitionable"),
        ("jax_default_prng_impl", "rbg", NotImplementedError, "Threefry"),
        ("jax_debug_key_reuse", True, NotImplementedError, "key-reuse"),
        ("jax_dynamic_shapes", True, NotImplementedError, "static shapes"),
        ("jax_default_matmul_precision", "best", ValueError, "expected one of"),
        ("jax_default_matmul_precision", 3, TypeError, "expected None or"),
        ("jax_traceback_filtering", "none", ValueError, "tracebackhide"),
        ("jax_transfer_guard", "forbid", ValueError, "disallow"),
        ("jax_enable_checks", "yes", TypeError, "True or False"),
        ("jax_compilation_cache_dir", 7, TypeError, "a path"),
        ("jax_persistent_cache_min_compile_time_secs", "1", TypeError, "a number"),
        ("jax_default_device", "tpu", ValueError, "CPU only"),
    ],
)
def test_bad_values_name_the_option(name, value, error, match) -> None:
    before = ft.config.read(name)
    with pytest.raises(error, match=match) as info:
        ft.config.update(name, value)
    assert "functrace.config.update(" in str(info.value)
    assert ft.config.read(name) == before  # unchanged


def test_unknown_option_lists_switches_and_options() -> None:
    with pytest.raises(AttributeError, match="numpy_rank_promotion.*jax_bogus"):
        ft.config.update("jax_bogus", 1)


def test_override_restores_option_values() -> None:
    with ft.config.override(numpy_rank_promotion="raise", transfer_guard="disallow"):
        assert ft.config.numpy_rank_promotion == "raise"
        assert ft.config.transfer_guard == "disallow"
    assert ft.config.numpy_rank_promotion == "allow"
    with pytest.raises(RuntimeError):
        with ft.numpy_rank_promotion("raise"):
            raise RuntimeError
    assert ft.config.numpy_rank_promotion == "allow"
    with ft.transfer_guard("log"):
        assert ft.config.read("jax_transfer_guard") == "log"


# -- numpy_rank_promotion -----------------------------------------------------------

x23 = np.arange(6.0).reshape(2, 3)
b3 = np.array([1.0, 2.0, 3.0])


def _paths():
    X, B = fnp.asarray(x23), fnp.asarray(b3)
    return {
        "Array operator": lambda: X + B,
        "reflected operator": lambda: B * X,
        "fnp ufunc on NumPy arrays": lambda: fnp.add(x23, b3),
        "fnp ufunc on Arrays": lambda: fnp.maximum(X, B),
        "jit": lambda: ft.jit(lambda a, b: a - b)(x23, b3),
        "grad": lambda: ft.grad(lambda a: (a * b3).sum())(x23),
        "vmap over a row": lambda: ft.vmap(lambda r: r[None, :] + b3)(x23),
        "clip": lambda: fnp.clip(x23, b3, None),
        "traced clip": lambda: ft.jit(lambda a: fnp.clip(a, b3, None))(x23),
    }


@pytest.mark.parametrize("path", list(_paths()))
def test_rank_promotion_raise_on_every_path(path) -> None:
    f = _paths()[path]
    allowed = np.asarray(f())
    with ft.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"numpy_rank_promotion='raise'.*\(3,\)"):
            f()
    # the same call is allowed again afterwards (fresh traces: jit caches per function)
    np.testing.assert_array_equal(np.asarray(f()), allowed)


def test_rank_promotion_warn_computes_numpy_result() -> None:
    with ft.numpy_rank_promotion("warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = fnp.asarray(x23) + fnp.asarray(b3)
    np.testing.assert_array_equal(got, x23 + b3)
    assert len(caught) == 1 and "numpy_rank_promotion='warn'" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the user's line


def test_rank_promotion_allows_scalars_equal_ranks_and_products() -> None:
    X = fnp.asarray(x23)
    with ft.numpy_rank_promotion("raise"):
        np.testing.assert_array_equal(X + 1.0, x23 + 1.0)
        np.testing.assert_array_equal(X * fnp.asarray(2.0), x23 * 2.0)
        np.testing.assert_array_equal(X + fnp.ones((1, 3)), x23 + 1.0)  # size-1 axes
        np.testing.assert_array_equal(X @ fnp.asarray(b3), x23 @ b3)  # not elementwise
        np.testing.assert_array_equal(fnp.matmul(X, fnp.asarray(b3)), x23 @ b3)
        np.testing.assert_array_equal(np.matmul(X, fnp.asarray(b3)), x23 @ b3)
        np.testing.assert_array_equal(fnp.matmul(x23, b3), x23 @ b3)
        np.testing.assert_array_equal(fnp.vecdot(X, fnp.asarray(b3)), x23 @ b3)
        g = ft.jit(ft.grad(lambda a: (a * a[:, :1]).sum()))(x23)
        np.testing.assert_allclose(g, ft.grad(lambda a: (a * a[:, :1]).sum())(x23))
        # plain NumPy code of the user is never checked
        np.testing.assert_array_equal(x23 + b3, x23 + b3)


def test_rank_promotion_is_process_wide_across_threads() -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fnp.asarray(x23) + fnp.asarray(b3)
        except ValueError as e:
            errors.append(e)

    with ft.numpy_rank_promotion("raise"):
        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(errors) == 4
