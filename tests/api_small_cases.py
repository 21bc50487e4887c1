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


# (mesh shape, axis names, array shape, spec entries, visualize_sharding options)
SHARDINGS: list[tuple[Any, ...]] = [
    ((4, 2), ("a", "b"), (8, 4), ("a", "b"), {}),
    ((4, 2), ("a", "b"), (8, 4), ("a",), {}),
    ((4, 2), ("a", "b"), (8, 4), ("b", "a"), {}),
    ((4, 2), ("a", "b"), (8, 4), (), {}),
    ((4, 2), ("a", "b"), (8,), (("a", "b"),), {}),
    ((4, 2), ("a", "b"), (8,), ("b",), {}),
    ((2, 4), ("x", "y"), (16, 24), (None, "y"), {}),
    ((2, 4), ("x", "y"), (6, 8), ("x", "y"), {"scale": 2.0}),
    ((8,), ("i",), (64, 8), ("i",), {"min_width": 12, "max_width": 40}),
    ((2, 2, 2), ("p", "q", "r"), (4, 6), (("r", "p"), None), {}),
]


def visualize_cases(lib: Any, capture: Any) -> dict[str, np.ndarray]:
    """``debug.visualize_sharding`` of each of ``SHARDINGS`` (8 devices), and
    ``visualize_array_sharding`` of a one-device array, as the printed text (``capture(f)``
    runs ``f`` and returns what it printed)."""
    out: dict[str, np.ndarray] = {}
    for k, (mshape, names, shape, spec, opts) in enumerate(SHARDINGS):
        mesh = lib.make_mesh(mshape, names)
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec(*spec))
        out[f"visualize/{k}"] = np.array(
            capture(
                lambda s=s, shape=shape, opts=opts: lib.debug.visualize_sharding(shape, s, **opts)
            )
        )
    x = lib.numpy.ones((3, 5))
    out["visualize/array"] = np.array(capture(lambda: lib.debug.visualize_array_sharding(x)))
    return out
