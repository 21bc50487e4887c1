"""Cases for the small JAX names (``jax.dtypes.result_type``), run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/api_small_jax.npz`` was recorded, ``functrace`` in
tests/test_api_small.py. ``result_type/dtype`` and ``result_type/weak`` hold, for every
pair of ``OPERANDS`` (each dtype as an array dtype, and the Python scalars ``True``,
``1``, ``1.0``, ``1j``), the promoted dtype's name and its weak flag. Nothing here
imports JAX.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
OPERANDS: list[Any] = [np.dtype(d) for d in DTYPES] + [True, 1, 1.0, 1j]
PAIRS = list(itertools.combinations_with_replacement(range(len(OPERANDS)), 2))


def cases(lib: Any) -> dict[str, np.ndarray]:
    rt = lib.dtypes.result_type
    got = [rt(OPERANDS[i], OPERANDS[j], return_weak_type_flag=True) for i, j in PAIRS]
    return {
        "result_type/dtype": np.array([np.dtype(d).name for d, _ in got]),
        "result_type/weak": np.array([bool(w) for _, w in got]),
    }
