"""The scalar types of functrace.numpy: ``float32``, ``int32``, ``bool_``... as JAX's.

``fnp.float32(x)`` converts ``x`` and returns a 0-d (or, for an array ``x``, a
same-shaped) :class:`functrace.Array`, as ``jnp.float32(x)`` returns a JAX array; on a
tracer (under ``jit``, ``grad``, ``vmap``...) it is a cast, ``x.astype(float32)``, so it
differentiates and batches. The types remain dtype arguments everywhere NumPy takes
one (``fnp.zeros(3, fnp.float32)``, ``x.astype(fnp.float32)``, ``np.dtype(fnp.float32)``,
``fnp.issubdtype``, ``fnp.finfo``): each has a ``dtype`` attribute, which NumPy reads.

Decisions:

* ``fnp.float32 is np.float32`` is False (it was True before these types existed):
  ``fnp.float32 == np.float32`` is True and both hash alike, so dict and set lookups
  keyed by NumPy's types still find them, and ``isinstance(np.float32(1), fnp.float32)``
  is True. ``np.float32`` itself still makes NumPy scalars.
* Conversions are ``astype``'s (``functrace.dtypes.convert``): floats to integers
  saturate and NaN gives 0, for arrays and NumPy scalars too. A Python scalar or list is
  converted by NumPy, as JAX does (``fnp.int8(300)`` is an ``OverflowError``,
  ``fnp.int32(float("nan"))`` a ``ValueError``); a string is parsed
  (``fnp.float32("1.5")``).
* The aliases ``bool``, ``double``, ``single``, ``int_``, ``uint``, ``float_``,
  ``complex_``, ``cdouble`` and ``csingle`` are the same objects as the types they name
  (``fnp.double is fnp.float64``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from functrace._array import _wrap
from functrace.core import Tracer
from functrace.numpy._creation import asarray
from functrace.numpy._math import astype


class _ScalarMeta(type):
    """The metaclass of the scalar types: calling one converts, comparing one with
    NumPy's type of the same dtype says equal."""

    dtype: np.dtype

    def __call__(cls, x: Any) -> Any:  # type: ignore[override]
        if isinstance(x, Tracer):
            return astype(x, cls.dtype)
        if isinstance(x, (np.ndarray, np.generic)):
            return _wrap(astype.numpy(x, cls.dtype))  # type: ignore[attr-defined]
        return asarray(x, cls.dtype)

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return isinstance(obj, cls.dtype.type)

    def __eq__(cls, other: Any) -> builtins.bool:
        return other is cls or other is cls.dtype.type

    def __ne__(cls, other: Any) -> builtins.bool:
        return not cls.__eq__(other)

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'functrace.numpy.{cls.__name__}'>"


def _scalar_type(name: str, np_type: type) -> _ScalarMeta:
    dt = np.dtype(np_type)
    doc = (
        f"``x`` converted to {dt.name}, as a :class:`functrace.Array` (a cast on traced "
        f"values); also the dtype {dt.name} wherever a dtype is taken."
    )
    return _ScalarMeta(name, (), {"dtype": dt, "__doc__": doc, "__module__": "functrace.numpy"})


float16 = _scalar_type("float16", np.float16)
float32 = _scalar_type("float32", np.float32)
float64 = _scalar_type("float64", np.float64)
int8 = _scalar_type("int8", np.int8)
int16 = _scalar_type("int16", np.int16)
int32 = _scalar_type("int32", np.int32)
int64 = _scalar_type("int64", np.int64)
uint8 = _scalar_type("uint8", np.uint8)
uint16 = _scalar_type("uint16", np.uint16)
uint32 = _scalar_type("uint32", np.uint32)
uint64 = _scalar_type("uint64", np.uint64)
bool_ = _scalar_type("bool_", np.bool_)
complex64 = _scalar_type("complex64", np.complex64)
complex128 = _scalar_type("complex128", np.complex128)

# aliases: the same objects
double, single, int_, uint, float_ = float64, float32, int64, uint64, float64
complex_, cdouble, csingle = complex128, complex128, complex64
bool = bool_  # noqa: A001

__all__ = [
    "bool",
    "bool_",
    "cdouble",
    "complex128",
    "complex64",
    "complex_",
    "csingle",
    "double",
    "float16",
    "float32",
    "float64",
    "float_",
    "int16",
    "int32",
    "int64",
    "int8",
    "int_",
    "single",
    "uint",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
]
