"""Test configuration: deterministic hypothesis profile, IR checks on, 1 BLAS thread."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Type-check every jaxpr built during the tests, including reverse-mode tapes.
staging.enable_checks = True
