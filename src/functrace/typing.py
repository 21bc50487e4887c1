"""``functrace.typing``: the annotations of ``jax.typing``.

``ArrayLike`` is what functrace's functions accept as an array: a
:class:`functrace.Array` (tracers included: ``isinstance(tracer, Array)`` holds), a
NumPy array or scalar, or a Python scalar. ``DTypeLike`` is what they accept as a dtype.
Both are for annotations (``isinstance`` works on concrete values).

>>> import numpy as np
>>> from functrace.typing import ArrayLike
>>> isinstance(np.ones(2), ArrayLike), isinstance(2.0, ArrayLike), isinstance("2", ArrayLike)
(True, True, False)
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from functrace._array import Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    """An object with a ``dtype`` attribute (a dtype-like, as in JAX)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
"""An array argument: a ``functrace.Array``, a NumPy array or scalar, or a Python
scalar (for annotations; as in JAX, ``isinstance(tracer, ArrayLike)`` is False, where
``isinstance(tracer, functrace.Array)`` is True)."""

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007
"""A dtype argument: a dtype name, a scalar type, a ``numpy.dtype`` or an object with
a ``dtype``."""
