"""NumPy-array operators and methods on tracers (attached to ``core.Tracer``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace.core import Tracer
from functrace.numpy import _math as m
from functrace.numpy import _reductions as r
from functrace.numpy import _shape as s


def _swap(f: Any) -> Any:
    def g(self: Any, other: Any) -> Any:
        return f(other, self)

    return g


def _defer(f: Any) -> Any:
    # Return NotImplemented for operands we do not understand, so Python tries the other side.
    def g(self: Any, other: Any) -> Any:
        if not isinstance(other, (Tracer, np.ndarray, np.generic, bool, int, float, complex,
                                  list, tuple)):
            return NotImplemented
        return f(self, other)

    return g


_BINOPS = {
    "add": m.add, "sub": m.subtract, "mul": m.multiply, "truediv": m.true_divide,
    "floordiv": m.floor_divide, "mod": m.remainder, "pow": m.power,
    "and": m.bitwise_and, "or": m.bitwise_or, "xor": m.bitwise_xor,
}
for _name, _f in _BINOPS.items():
    setattr(Tracer, f"__{_name}__", _defer(_f))
    setattr(Tracer, f"__r{_name}__", _defer(_swap(_f)))

for _name, _f in {"eq": m.equal, "ne": m.not_equal, "lt": m.less, "le": m.less_equal,
                  "gt": m.greater, "ge": m.greater_equal}.items():
    setattr(Tracer, f"__{_name}__", _defer(_f))


def _matmul(a: Any, b: Any) -> Any:
    from functrace.numpy._linalg import matmul

    return matmul(a, b)


Tracer.__matmul__ = _defer(_matmul)  # type: ignore[attr-defined]
Tracer.__rmatmul__ = _defer(_swap(_matmul))  # type: ignore[attr-defined]
Tracer.__neg__ = lambda self: m.negative(self)  # type: ignore[attr-defined]
Tracer.__pos__ = lambda self: self  # type: ignore[attr-defined]
Tracer.__abs__ = lambda self: m.absolute(self)  # type: ignore[attr-defined]
Tracer.__invert__ = lambda self: m.invert(self)  # type: ignore[attr-defined]
Tracer.__round__ = lambda self, ndigits=None: m.rint(self)  # type: ignore[attr-defined]


def _getitem(self: Any, idx: Any) -> Any:
    from functrace.numpy._indexing import getitem

    return getitem(self, idx)


Tracer.__getitem__ = _getitem  # type: ignore[attr-defined]


class _AtIndexer:
    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> Any:
        from functrace.numpy._indexing import AtUpdater

        return AtUpdater(self.x, idx)


Tracer.at = property(lambda self: _AtIndexer(self))  # type: ignore[attr-defined]
Tracer.T = property(lambda self: s.transpose(self))  # type: ignore[attr-defined]
Tracer.mT = property(lambda self: s.swapaxes(self, -1, -2))  # type: ignore[attr-defined]


def _method(name: str, module: Any) -> Any:
    def meth(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(module, name)(self, *args, **kwargs)

    meth.__name__ = name
    return meth


for _name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "var",
              "std", "cumsum", "cumprod"):
    setattr(Tracer, _name, _method(_name, r))
for _name in ("transpose", "squeeze", "ravel", "flatten", "swapaxes", "repeat"):
    setattr(Tracer, _name, _method(_name, s))
for _name in ("clip", "conj", "conjugate", "round"):
    setattr(Tracer, _name, _method(_name, m))


def _reshape(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return s.reshape(self, shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return s.transpose(self, axes or None)


def _dot(self: Any, other: Any) -> Any:
    from functrace.numpy._linalg import dot

    return dot(self, other)


Tracer.reshape = _reshape  # type: ignore[attr-defined]
Tracer.transpose = _transpose  # type: ignore[attr-defined]
Tracer.astype = lambda self, dtype: m.astype(self, dtype)  # type: ignore[attr-defined]
Tracer.dot = _dot  # type: ignore[attr-defined]
Tracer.copy = lambda self: self  # type: ignore[attr-defined]
Tracer.real = property(lambda self: m.real(self))  # type: ignore[attr-defined]
Tracer.imag = property(lambda self: m.imag(self))  # type: ignore[attr-defined]


def _array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    # np.sin(tracer), ndarray + tracer, ...: dispatch to the functrace.numpy function.
    from functrace import numpy as fnp

    f = getattr(fnp, ufunc.__name__, None)
    if method != "__call__" or f is None or kwargs:
        return NotImplemented
    return f(*inputs)


Tracer.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
