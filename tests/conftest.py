"""Test configuration: deterministic hypothesis profile (``ci``; ``long`` for ``make fuzz``,
see ``profiles.py``), IR checks on, 1 BLAS thread."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
# The suite tests the compiled kernels: jit compiles before a first call returns.
# Tiered compilation is tested explicitly (tests/test_jit_tiered.py).
os.environ.setdefault("FUNCTRACE_JIT_COMPILE", "sync")
os.environ.setdefault("FUNCTRACE_NUM_THREADS", "1")  # one pytest worker per core

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import functrace.interpreters.staging as staging  # noqa: E402

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    max_examples=20,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", deadline=None, max_examples=60)
# make fuzz: the tests marked ``long_profile`` with many more (fresh) examples each.
settings.register_profile(
    "long",
    deadline=None,
    max_examples=200,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Type-check every jaxpr built during the tests, including reverse-mode tapes.
staging.enable_checks = True


def pytest_runtest_setup(item):
    # Hypothesis' pytest plugin gives every parametrized case of a @given test a new
    # Settings whose parent is the previous case's, so one test with ~1000 cases (the
    # op table) overflows the recursion limit in settings.database. Start every case
    # from the test's own settings instead.
    obj = getattr(item, "obj", None)
    fn = getattr(obj, "__func__", obj)
    if fn is None or not hasattr(fn, "_hypothesis_internal_use_settings"):
        return
    base = fn.__dict__.setdefault("_functrace_base_settings", fn._hypothesis_internal_use_settings)
    fn._hypothesis_internal_use_settings = base


@pytest.fixture(scope="module")
def private_jit_cache(tmp_path_factory: pytest.TempPathFactory):
    """A fresh kernel cache directory for one test module, and strict kernels (a kernel
    or native loop Numba cannot compile is a test failure, not a fallback)."""
    from functrace.jit import codegen

    old = os.environ.get("FUNCTRACE_CACHE_DIR")
    os.environ["FUNCTRACE_CACHE_DIR"] = str(tmp_path_factory.mktemp("ft_cache"))
    codegen.strict_kernels = True
    yield
    codegen.strict_kernels = False
    if old is None:
        os.environ.pop("FUNCTRACE_CACHE_DIR", None)
    else:
        os.environ["FUNCTRACE_CACHE_DIR"] = old
