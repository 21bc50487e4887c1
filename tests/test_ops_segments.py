"""``functrace.ops`` (JAX's ``jax.ops``) against JAX's values, recorded from
``ops_cases.py``, and its misuse errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
from ops_cases import DATA, IDS, cases
from recorded import assert_matches_recorded


def test_segment_reductions_match_jax() -> None:
    assert_matches_recorded(cases(ft), "ops_jax.npz", lambda k, v: 1e-12)


def test_segment_prod_differentiates_with_repeated_ids() -> None:
    # (JAX raises for repeated ids): the product rule, each row times the others in its
    # segment, checked against finite differences at order 2
    ft.check_grads(lambda d: ft.ops.segment_prod(d, IDS, 6), (DATA,), order=2)


def test_segment_misuse_errors() -> None:
    with pytest.raises(TypeError, match="segment_sum: expected integer segment_ids"):
        ft.ops.segment_sum(DATA, IDS.astype(float))
    with pytest.raises(ValueError, match="segment_max: expected 1-d segment_ids"):
        ft.ops.segment_max(DATA, IDS[:3], 4)
    with pytest.raises(ValueError, match="segment_sum: expected num_segments with traced"):
        ft.jit(lambda d, i: ft.ops.segment_sum(d, i))(DATA, IDS)
    with pytest.raises(ValueError, match="segment_min: expected mode"):
        ft.ops.segment_min(DATA, IDS, 6, mode="wrap")
    # no rows: every segment holds the identity
    empty = ft.ops.segment_max(np.zeros((0, 2)), np.zeros(0, np.int64), 3)
    np.testing.assert_array_equal(empty, np.full((3, 2), -np.inf))
