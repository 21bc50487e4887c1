"""Compare the results of a ``*_cases.py`` module's ``cases(functrace)`` with the values
recorded from JAX in ``tests/fixtures/<name>`` (see ``tests/fixtures/README.md``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def program_params(programs: dict[str, Any], known: dict[str, str]) -> list[Any]:
    """The names of ``programs`` for ``pytest.mark.parametrize``; those in ``known``
    (name -> reason: a documented difference from JAX) as strict xfails."""
    import pytest

    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=known[n])) if n in known else n
        for n in sorted(programs)
    ]


def load_programs_reference(name: str) -> dict[str, np.ndarray]:
    """The recorded outputs of a ``jax_programs*.py`` file: ``program/output`` -> value."""
    with np.load(FIXTURES / name) as f:
        return {k: f[k] for k in f.files if k != "__about__"}


def assert_program_matches(
    name: str,
    got: dict[str, Any],
    reference: dict[str, np.ndarray],
    *,
    float32_tol: tuple[float, float] = (2e-5, 2e-5),
    check_dtypes: bool = True,
) -> None:
    """Program ``name``'s outputs ``got`` equal the recorded ones: the same names and
    shapes (and dtypes, as a JAX program sees them, with ``check_dtypes``), error type
    names (unicode) exactly, float64 values to 1e-9, float32 to ``float32_tol`` (rtol,
    atol: float32 kernels sum in other orders than XLA's)."""
    expected = {k.split("/", 1)[1]: v for k, v in reference.items() if k.startswith(name + "/")}
    assert set(got) == set(expected), (
        f"{name}: outputs {sorted(got)} vs recorded {sorted(expected)}"
    )
    for key, want in expected.items():
        have = np.asarray(got[key])
        assert have.shape == want.shape, f"{name}/{key}: shape {have.shape}, JAX {want.shape}"
        if check_dtypes:
            assert have.dtype == want.dtype, f"{name}/{key}: dtype {have.dtype}, JAX {want.dtype}"
        if want.dtype.kind == "U":  # an error type's name: exactly
            np.testing.assert_array_equal(have, want, err_msg=f"{name}/{key}")
            continue
        low = want.dtype in (np.float32, np.complex64)
        rtol, atol = float32_tol if low else (1e-9, 1e-12)
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=f"{name}/{key}")
