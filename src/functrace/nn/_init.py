"""PyTorch's default initialisations, drawn from a NumPy generator (``rng``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace.nn._module import _rng


def uniform_init(
    rng: Any, shape: tuple[int, ...], bound: float, dtype: Any = np.float32
) -> np.ndarray:
    """``U(-bound, bound)`` samples of ``shape``."""
    return _rng(rng).uniform(-bound, bound, shape).astype(dtype)


def kaiming_uniform(rng: Any, shape: tuple[int, int], dtype: Any = np.float32) -> np.ndarray:
    """PyTorch's default ``Linear`` weight init: ``U(-1/sqrt(in), 1/sqrt(in))``."""
    bound = 1.0 / math.sqrt(shape[1]) if shape[1] else 0.0
    return uniform_init(rng, shape, bound, dtype)


def xavier_uniform(rng: Any, shape: tuple[int, int], dtype: Any = np.float32) -> np.ndarray:
    """Glorot uniform: ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))``."""
    return uniform_init(rng, shape, math.sqrt(6.0 / (shape[0] + shape[1])), dtype)
