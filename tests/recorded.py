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


def program_tests(
    programs: dict[str, Any],
    fixture: str,
    known: dict[str, str] | None = None,
    **match_kw: Any,
) -> tuple[Callable[[], None], Callable[[str], None]]:
    """The two tests of a ``jax_programs*.py`` file, bound in its test module as
    ``test_every_program_has_reference_values, test_program_matches_jax = ...``: every
    program was recorded (and nothing else), and each one's outputs under functrace (as
    the ``jax`` namespace) equal the recording (``assert_program_matches``, with
    ``match_kw``); the programs in ``known`` are strict xfails."""
    import functools

    import pytest

    import functrace

    reference = functools.cache(lambda: load_programs_reference(fixture))

    def test_every_program_has_reference_values() -> None:
        assert {k.split("/")[0] for k in reference()} == set(programs)

    @pytest.mark.parametrize("name", program_params(programs, known or {}))
    def test_program_matches_jax(name: str) -> None:
        jax = functrace  # the only change a JAX program needs
        assert_program_matches(name, programs[name](jax), reference(), **match_kw)

    return test_every_program_has_reference_values, test_program_matches_jax


def error_name(f: Callable[[], Any]) -> np.ndarray:
    """For the JAX programs: the class name of the exception ``f()`` raises, as a 0-d
    unicode array ("no error" if it returns)."""
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class is the recorded value
        return np.array(type(e).__name__)
    return np.array("no error")
