"""Compare the results of a ``*_cases.py`` module's ``cases(functrace)`` with the values
recorded from JAX in ``tests/fixtures/<name>`` (see ``tests/fixtures/README.md``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).parent / "fixtures"


def assert_matches_recorded(
    got: dict[str, np.ndarray], name: str, tol: Callable[[str, np.ndarray], float]
) -> None:
    """Every recorded entry is produced (and nothing else), with its shape and dtype, and
    equals the recording within ``tol(key, value)`` (relative and absolute); strings
    (unicode arrays) are equal exactly."""
    want = np.load(FIXTURES / name)
    assert sorted(got) == sorted(k for k in want.files if k != "__about__")
    for k, v in got.items():
        assert v.shape == want[k].shape and v.dtype == want[k].dtype, (k, v.shape, v.dtype)
        if v.dtype.kind == "U":  # messages: exactly
            np.testing.assert_array_equal(v, want[k], err_msg=k)
            continue
        t = tol(k, v)
        np.testing.assert_allclose(v, want[k], rtol=t, atol=t, err_msg=k)
