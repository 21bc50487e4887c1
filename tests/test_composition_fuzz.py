"""Random programs from the op table under every stack of up to three transforms.

``make test`` runs a bounded deterministic sample; ``make fuzz`` runs the long profile
(``FUNCTRACE_FUZZ_SECONDS``, default 1200) and prints how many programs it tried.
See ``composition_fuzz.py`` for what a program and a reference are.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings

import composition_fuzz as cf
from profiles import long_profile

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.usefixtures("private_jit_cache"),
]

SECONDS = float(os.environ.get("FUNCTRACE_FUZZ_SECONDS", "0"))
CI_EXAMPLES = int(os.environ.get("FUNCTRACE_FUZZ_EXAMPLES", "60"))
_tried = 0


def _check(case: cf.Case) -> None:
    global _tried
    _tried += 1
    cf.check(case)


_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


# The bounded profile (make test) or the long one (make fuzz, FUNCTRACE_FUZZ_SECONDS > 0):
# only one of them is defined, so neither run reports the other as skipped.
@settings(max_examples=CI_EXAMPLES, suppress_health_check=_HEALTH)
@given(case=cf.cases())
def test_composition_fuzz(case: cf.Case) -> None:
    """Random stacks of one to three transforms."""
    _check(case)


@pytest.mark.parametrize(
    "stack", cf.all_stacks(2), ids=[cf.describe_stack(s) for s in cf.all_stacks(2)]
)
def test_every_stack_of_up_to_two(stack) -> None:
    """Every transform, and every ordered pair, on programs drawn for it."""

    @settings(max_examples=2, suppress_health_check=_HEALTH)
    @given(case=cf.cases(stack))
    def run(case: cf.Case) -> None:
        _check(case)

    run()


@long_profile
def test_composition_fuzz_long() -> None:
    """Fresh random batches of programs until the time is up."""
    deadline = time.monotonic() + SECONDS
    # small batches, so that the deadline is checked often (a batch is not interrupted)
    run = settings(
        max_examples=25, derandomize=False, database=None, suppress_health_check=_HEALTH
    )(given(case=cf.cases())(_check))
    while time.monotonic() < deadline:
        run()
    print(f"\ncomposition fuzzer: {_tried} programs tried in {SECONDS:.0f} s, all passed")


if SECONDS > 0:
    del test_composition_fuzz, test_every_stack_of_up_to_two
else:
    del test_composition_fuzz_long
