"""NumPy-array operators and methods on tracers (attached to ``core.Tracer``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import dtypes
from functrace.core import Tracer, is_python_scalar
from functrace.lax.elementwise import convert_element_type
from functrace.lax.extras import bitcast_convert_type
from functrace.numpy import _math as m
from functrace.numpy import _reductions as r
from functrace.numpy import _shape as s
from functrace.numpy import _special, _stats
from functrace.numpy._at import at
from functrace.numpy._core import no_out
from functrace.numpy._functions import searchsorted
from functrace.numpy._indexing import getitem, nonzero, take
from functrace.numpy._linalg import dot, matmul
from functrace.numpy._sorting import argpartition, argsort
from functrace.numpy._twodim import diagonal, trace


def _swap(f: Any) -> Any:
    def g(self: Any, other: Any) -> Any:
        return f(other, self)

    return g


def _is_py(x: Any) -> bool:
    """Whether ``x`` is a Python scalar in an eager run: a Python scalar, or a tracer
    marked so (``StagingTracer.py``: ``jit`` returns a Python scalar for it, as the
    eager call does)."""
    return x.py if isinstance(x, Tracer) else is_python_scalar(x)


def _mark_py(out: Any) -> Any:
    try:
        out.py = True  # Python operators on Python scalars give a Python scalar
    except AttributeError:  # not a staging tracer: nothing to mark
        pass
    return out


def _py_arith(x: Any) -> Any:
    """Python arithmetic treats a bool as the int 0 or 1 (``True + True == 2``)."""
    if type(x) is bool:
        return int(x)
    if isinstance(x, Tracer) and x.dtype.kind == "b":
        return _mark_py(convert_element_type(x, np.int64, weak_type=True))
    return x


def _defer(f: Any, arith: bool = False) -> Any:
    # Return NotImplemented for operands we do not understand, so Python tries the other side.
    def g(self: Any, other: Any) -> Any:
        if _promotion.maybe_strict:  # numpy_dtype_promotion="strict": note whose call
            prev = dtypes.enter_call(1)
            try:
                return plain(self, other)
            finally:
                dtypes.exit_call(prev)
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        if _is_py(self) and _is_py(other):
            if arith:
                self, other = _py_arith(self), _py_arith(other)
            return _mark_py(f(self, other))
        return f(self, other)

    def plain(self: Any, other: Any) -> Any:  # g's own work
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        if _is_py(self) and _is_py(other):
            if arith:
                self, other = _py_arith(self), _py_arith(other)
            return _mark_py(f(self, other))
        return f(self, other)

    return g


_OPERANDS = (Tracer, np.ndarray, np.generic, bool, int, float, complex, list, tuple)
_promotion = dtypes.promotion


def _unary(f: Any) -> Any:
    def g(self: Any) -> Any:
        return _mark_py(f(_py_arith(self))) if _is_py(self) else f(self)

    return g


_BINOPS = {
    "add": m.add,
    "sub": m.subtract,
    "mul": m.multiply,
    "truediv": m.true_divide,
    "floordiv": m.floor_divide,
    "mod": m.remainder,
    "pow": m.power,
    "and": m.bitwise_and,
    "or": m.bitwise_or,
    "xor": m.bitwise_xor,
    "lshift": m.left_shift,
    "rshift": m.right_shift,
}


def _py_pow(f: Any) -> Any:
    def g(x: Any, y: Any) -> Any:
        if type(y) is int and y < 0 and x.py and x.dtype.kind in "iu":
            x = _mark_py(convert_element_type(x, np.float64, weak_type=True))  # 2 ** -1
        return f(x, y)

    return g


for _name, _f in _BINOPS.items():
    _f = getattr(_f, "_operator", _f)  # operators keep weak (Python-scalar) types weak
    _arith = _name not in ("and", "or", "xor")  # bool & bool stays a bool in Python
    setattr(Tracer, f"__{_name}__", _defer(_py_pow(_f) if _name == "pow" else _f, _arith))
    setattr(Tracer, f"__r{_name}__", _defer(_swap(_f), _arith))


def _py_ordered(f: Any, symbol: str) -> Any:
    def g(x: Any, y: Any) -> Any:
        if _is_py(x) and _is_py(y):  # Python does not order complex numbers (NumPy does)
            for v in (x, y):
                if (v.dtype.kind if isinstance(v, Tracer) else type(v).__name__[0]) == "c":
                    raise TypeError(
                        f"'{symbol}' not supported between Python complex numbers and other "
                        f"numbers (as in Python). Compare .real, or use fnp.less & co. on "
                        f"arrays for NumPy's order."
                    )
        return f(x, y)

    return g


for _name, _f in {
    "eq": m.equal,
    "ne": m.not_equal,
    "lt": m.less,
    "le": m.less_equal,
    "gt": m.greater,
    "ge": m.greater_equal,
}.items():
    _sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}.get(_name)
    setattr(Tracer, f"__{_name}__", _defer(_py_ordered(_f, _sym) if _sym else _f))


Tracer.__matmul__ = _defer(matmul)  # type: ignore
Tracer.__rmatmul__ = _defer(_swap(matmul))  # type: ignore
Tracer.__neg__ = _unary(m.negative._operator)  # type: ignore
Tracer.__pos__ = _unary(lambda self: self)  # type: ignore
Tracer.__abs__ = _unary(m.absolute._operator)  # type: ignore
Tracer.__invert__ = _unary(m.invert)  # type: ignore
Tracer.__round__ = lambda self, ndigits=None: m.rint(self)  # type: ignore


Tracer.__getitem__ = getitem  # type: ignore
Tracer.at = property(at)  # type: ignore
Tracer.T = property(lambda self: s.transpose(self))  # type: ignore
Tracer.mT = property(lambda self: s.swapaxes(self, -1, -2))  # type: ignore


def _method(name: str, module: Any) -> Any:
    def meth(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(module, name)(self, *args, **kwargs)

    meth.__name__ = name
    return meth


for _name in (
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "argmax",
    "argmin",
    "any",
    "all",
    "var",
    "std",
    "cumsum",
    "cumprod",
):
    setattr(Tracer, _name, _method(_name, r))
for _name in ("transpose", "squeeze", "ravel", "flatten", "swapaxes", "repeat"):
    setattr(Tracer, _name, _method(_name, s))
for _name in ("clip", "conj", "conjugate", "round"):
    setattr(Tracer, _name, _method(_name, m))


def _reshape(self: Any, *shape: Any, order: str = "C", copy: Any = None) -> Any:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return s.reshape(self, shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = () if axes[0] is None else tuple(axes[0])  # np.transpose(x) passes None
    return s.transpose(self, axes or None)


Tracer.reshape = _reshape  # type: ignore
Tracer.transpose = _transpose  # type: ignore


def _astype(
    self: Any,
    dtype: Any,
    order: str = "K",
    casting: str = "unsafe",
    subok: bool = True,
    copy: bool = True,
) -> Any:
    return m.astype(self, dtype)


Tracer.astype = _astype  # type: ignore


def _view(self: Any, dtype: Any = None, type: Any = None) -> Any:  # noqa: A002 - NumPy's
    """``x.view(dtype)`` as JAX's: the same bits read as ``dtype``; a dtype of another
    size changes the last axis (``f32[..., n]`` as int8 is ``i8[..., 4n]``)."""
    if type is not None:
        raise TypeError(
            f"view: expected type=None on a traced array (JAX's arrays have no subclasses), "
            f"got {type!r}."
        )
    if dtype is None:
        return self
    new = np.dtype(dtype)
    old = self.aval.dtype
    if new.itemsize == old.itemsize or self.aval.ndim == 0:
        return bitcast_convert_type(self, new)
    *lead, n = self.aval.shape
    if new.itemsize < old.itemsize:
        return s.reshape(
            bitcast_convert_type(self, new), (*lead, n * (old.itemsize // new.itemsize))
        )
    k = new.itemsize // old.itemsize
    if n % k:
        raise ValueError(
            f"view: expected a last axis divisible by {k} to read {old.name} as {new.name}, "
            f"got shape {self.aval.shape}."
        )
    return bitcast_convert_type(s.reshape(self, (*lead, n // k, k)), new)


Tracer.view = _view  # type: ignore
Tracer.ptp = _method("ptp", _stats)  # type: ignore
Tracer.itemsize = property(lambda self: self.aval.dtype.itemsize)  # type: ignore
Tracer.nbytes = property(lambda self: self.aval.dtype.itemsize * self.aval.size)  # type: ignore
Tracer.dot = lambda self, other: dot(self, other)  # type: ignore
Tracer.copy = lambda self: self  # type: ignore
Tracer.real = property(lambda self: m.real(self))  # type: ignore
Tracer.imag = property(lambda self: m.imag(self))  # type: ignore


# ufunc.reduce / ufunc.accumulate on tracers: the functrace.numpy reduction doing the same
# (np.add.reduce(x) -> fnp.sum(x, axis=0); np.ptp and np.linalg helpers use these).
_UFUNC_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
    "fmax": "max",
    "fmin": "min",
}
_UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}
# NumPy's ufuncs by name: the functrace.numpy function computing each (np.matmul is one)
_UFUNCS: dict[str, Any] = {
    **{name: getattr(m, name) for name in m.__all__},
    **{name: getattr(_special, name) for name in _special.__all__},
    "matmul": matmul,
}


def _ufunc_error(ufunc: np.ufunc, method: str, why: str) -> TypeError:
    call = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
    return TypeError(
        f"numpy.{call}: expected a ufunc call functrace.numpy can trace, got "
        f"one on a tracer {why}. Call the functrace.numpy function instead "
        f"(fnp.{ufunc.__name__}(...)), which sees through transformations."
    )


def _array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    # np.sin(tracer), ndarray + tracer, np.add.reduce(tracer): the functrace.numpy function.
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in out):
        raise _ufunc_error(ufunc, method, "with out= (functrace never writes in place)")
    if method == "__call__":
        if kwargs.get("where", True) is not True:
            raise _ufunc_error(ufunc, method, "with where=")
        kwargs.pop("where", None)
        dtype = kwargs.pop("dtype", None)
        f = _UFUNCS.get(ufunc.__name__)
        if f is None or kwargs:
            why = (
                f"with keywords {sorted(kwargs)}"
                if f is not None
                else "(functrace.numpy has no such function yet)"
            )
            raise _ufunc_error(ufunc, method, why)
        res = f(*inputs)
        return res if dtype is None else m.astype(res, dtype)
    if kwargs.get("dtype", 0) is None:
        del kwargs["dtype"]  # np.ptp passes dtype=None to maximum.reduce
    if method == "reduce" and ufunc.__name__ in _UFUNC_REDUCE and len(inputs) == 1:
        kwargs.setdefault("axis", 0)
        return getattr(r, _UFUNC_REDUCE[ufunc.__name__])(inputs[0], **kwargs)
    if method == "accumulate" and ufunc.__name__ in _UFUNC_ACCUMULATE and len(inputs) == 1:
        kwargs.setdefault("axis", 0)
        return getattr(r, _UFUNC_ACCUMULATE[ufunc.__name__])(inputs[0], **kwargs)
    raise _ufunc_error(ufunc, method, f"with method {method!r}")


Tracer.__array_ufunc__ = _array_ufunc  # type: ignore


# NumPy functions that dispatch to the array's method (np.trace(x) and np.diagonal(x) do
# not: they convert to an ndarray first, so those raise; call fnp.trace/fnp.diagonal).
def _take(self: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = None) -> Any:
    no_out("take", out)
    return take(self, indices, axis=axis, mode=mode)


def _nonzero(self: Any) -> Any:
    return nonzero(self)


def _searchsorted(self: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    return searchsorted(self, v, side, sorter)


def _diagonal(self: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    return diagonal(self, offset, axis1, axis2)


def _trace(
    self: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None
) -> Any:
    return trace(self, offset, axis1, axis2, dtype, out)


def _argsort(self: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any) -> Any:
    return argsort(self, axis, kind, order, **kw)


def _argpartition(
    self: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    return argpartition(self, kth, axis, kind, order)


def _in_place(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{name}: expected no in-place {name} on a traced array, got x.{name}(...) on "
            f"{self.aval.str_short()}. functrace arrays are immutable under "
            f"transformations: use x = functrace.numpy.{name}(x, ...)."
        )

    return method


_DISPATCHED: dict[str, Any] = {
    "sort": _in_place("sort"),
    "partition": _in_place("partition"),
    "argsort": _argsort,
    "argpartition": _argpartition,
    "take": _take,
    "nonzero": _nonzero,
    "searchsorted": _searchsorted,
    "diagonal": _diagonal,
    "trace": _trace,
}
for _name, _meth in _DISPATCHED.items():
    if not hasattr(Tracer, _name):
        setattr(Tracer, _name, _meth)
