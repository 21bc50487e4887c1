"""The machinery of functrace.numpy: NumPy 2 promotion and broadcasting on tracers.

On plain NumPy inputs (no tracer, no jit trace active) every function calls
NumPy directly: same values, same dtypes, little overhead. With tracers, the
dtype NumPy would compute is asked of NumPy itself (``ufunc.resolve_dtypes``,
with Python scalars as weak types), operands are cast and broadcast with explicit
``convert_element_type`` / ``broadcast_in_dim`` equations, and then the lax
primitive is bound.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from functrace import core
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.lax.shapes import broadcast_in_dim

_PY_SCALARS = (bool, int, float, complex)
_WEAK_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def is_traced(*args: Any) -> bool:
    """Whether any argument is (or is a list holding) a tracer, or a jit/make_jaxpr trace
    is active."""
    if core.dynamic_trace_active():
        return True
    for a in args:
        if isinstance(a, Tracer) or has_tracer_in_sequence(a):
            return True
    return False


def has_tracer_in_sequence(x: Any) -> bool:
    """Whether ``x`` is a (nested) list/tuple with a tracer in it."""
    if type(x) is not list and type(x) is not tuple:
        return False
    for e in x:
        if isinstance(e, Tracer) or has_tracer_in_sequence(e):
            return True
    return False


def asarray_or_tracer(x: Any, fname: str = "functrace.numpy") -> Any:
    """Tracers and NumPy arrays/scalars pass; Python scalars pass (weak);
    lists/tuples (possibly of tracers) become arrays."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
        return x
    if isinstance(x, (list, tuple)):
        from functrace.numpy._shape import _array_any as array

        return array(x)
    try:
        return np.asarray(x)
    except Exception as e:  # pragma: no cover - message path
        raise TypeError(f"{fname}: expected an array-like, got {type(x).__name__}.") from e


def _dtype_key(aval: core.ShapedArray) -> Any:
    return _WEAK_TYPES[aval.dtype.kind] if aval.weak_type else aval.dtype


@lru_cache(maxsize=8192)
def _resolve(ufunc: np.ufunc, keys: tuple[Any, ...]) -> tuple[np.dtype, ...]:
    if all(isinstance(k, type) for k in keys):  # only Python scalars: their NumPy dtypes
        keys = tuple(np.dtype(k) if k is not int else np.dtype(np.int64) for k in keys)
    return ufunc.resolve_dtypes(keys + (None,) * ufunc.nout)


def resolve_ufunc_dtypes(
    fname: str, ufunc: np.ufunc, avals: Sequence[core.ShapedArray]
) -> tuple[np.dtype, ...]:
    """(input loop dtypes..., output dtypes...) NumPy would use for ``ufunc``."""
    try:
        return _resolve(ufunc, tuple(_dtype_key(a) for a in avals))
    except TypeError:
        given = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"{fname}: expected operand dtypes NumPy's {ufunc.__name__} supports, got "
            f"{given}. Cast with .astype(...) first."
        ) from None


@lru_cache(maxsize=8192)
def _broadcast_shapes(shapes: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    return np.broadcast_shapes(*shapes)


def broadcast_shapes(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return _broadcast_shapes(tuple(shapes))
    except ValueError:
        raise ValueError(
            f"{fname}: expected shapes that broadcast together, got "
            f"{' and '.join(str(s) for s in shapes)}."
        ) from None


def broadcast_to_shape(x: Any, shape: tuple[int, ...]) -> Any:
    aval = core.get_aval(x)
    if aval.shape == shape:
        return x
    if not isinstance(x, Tracer) and not core.dynamic_trace_active():
        return np.broadcast_to(x, shape)  # an eager constant: a NumPy view, no equation
    nd = len(shape)
    return broadcast_in_dim(x, shape, tuple(range(nd - aval.ndim, nd)))


def cast(x: Any, dtype: np.dtype, weak: bool = False) -> Any:
    return lx.convert_element_type(x, dtype, weak)


def promote_and_broadcast(
    fname: str, ufunc: np.ufunc, args: Sequence[Any]
) -> tuple[list[Any], np.dtype]:
    """Cast ``args`` to the loop dtypes of ``ufunc`` and broadcast them together.

    Returns the prepared operands and NumPy's output dtype.
    """
    avals = [core.get_aval(a) for a in args]
    if len(avals) == 2:  # fast path: same shape, same dtype, same weakness
        a0, a1 = avals
        if (
            a0.shape == a1.shape
            and a0.dtype == a1.dtype
            and a0.weak_type == a1.weak_type
            and type(args[0]) not in _PY_SCALARS  # Python scalars become NumPy values below
            and type(args[1]) not in _PY_SCALARS
        ):
            dts = resolve_ufunc_dtypes(fname, ufunc, avals)
            if dts[0] == a0.dtype and dts[1] == a0.dtype:
                if a0.weak_type and a0.dtype.kind == "i":  # a Python int staying int64
                    check_int_args(fname, args)
                return list(args), dts[2]
    dts = resolve_ufunc_dtypes(fname, ufunc, avals)
    nin = len(args)
    all_weak = all(a.weak_type for a in avals)
    shape = avals[0].shape if nin == 1 else broadcast_shapes(fname, *[a.shape for a in avals])
    out = []
    for x, aval, dt in zip(args, avals, dts[:nin]):
        if isinstance(x, Tracer):
            if aval.dtype != dt:
                x = lx.convert_element_type(x, dt, aval.weak_type and all_weak)
        elif all_weak and type(x) in _PY_SCALARS:
            x = _WEAK_TYPES[dt.kind](x)  # stays a weak Python scalar: x * 2.0 stays weak
        elif aval.dtype != dt or type(x) in _PY_SCALARS:
            # a constant: convert now (a NumPy value with the loop dtype), no equation
            try:
                x = np.asarray(x, dtype=dt)[()] if not aval.shape else np.asarray(x, dt)
            except OverflowError:
                if type(x) is int:  # 2**70 (or 2**64 for uint64) in integer arithmetic
                    raise OverflowError(
                        f"{fname}: expected a Python int that fits in {dt.name} (the dtype "
                        f"of the operation), got {x}. Pass it as a float, or cast the "
                        f"other operand to a wider dtype."
                    ) from None
                raise
        out.append(broadcast_to_shape(x, shape))
    return out, dts[nin]


def check_int_args(fname: str, args: Sequence[Any]) -> None:
    """Raise the error naming a Python int argument outside int64, if any (NumPy and
    functrace hold Python ints as int64 in integer arithmetic)."""
    for i, x in enumerate(args):
        if core.int64_overflow(x):
            raise core.int64_overflow_error(fname, x, f"for argument x{i + 1}")


def elementwise(
    name: str, ufunc: np.ufunc, lax_fn: Callable[..., Any], doc: str = ""
) -> Callable[..., Any]:
    """An fnp function for ``ufunc``: NumPy on plain inputs, ``lax_fn`` on tracers."""
    nin = ufunc.nin
    if nin == 1:

        def f1(x: Any, /, *, _op: bool = False) -> Any:
            if (
                not isinstance(x, Tracer)
                and not core.dynamic_trace_active()
                and not has_tracer_in_sequence(x)
            ):
                try:
                    out = ufunc(x)
                except (OverflowError, TypeError):
                    check_int_args(name, (x,))  # NumPy's message is about C longs
                    raise
                return out if type(x) is not Array else _wrap(out)
            (x,), out_dt = promote_and_broadcast(name, ufunc, [asarray_or_tracer(x, name)])
            return _finish(lax_fn(x), out_dt, _op)

        f = f1
    else:
        same_type_out: dict[np.dtype, Any] = {}  # dtype -> output dtype, None: not closed

        def f2(x: Any, y: Any, /, *, _op: bool = False) -> Any:
            if isinstance(x, Tracer) and isinstance(y, Tracer):
                # fast path: two tracers of one type whose loop keeps that type
                ax, ay = x.aval, y.aval
                if ax.shape == ay.shape and ax.dtype == ay.dtype and ax.weak_type == ay.weak_type:
                    out_dt = same_type_out.get(ax.dtype, False)
                    if out_dt is False:
                        dts = resolve_ufunc_dtypes(name, ufunc, [ax, ay])
                        out_dt = same_type_out[ax.dtype] = (
                            dts[2] if dts[0] == ax.dtype == dts[1] else None
                        )
                    if out_dt is not None:
                        return _finish(lax_fn(x, y), out_dt, _op)
            if (
                not (isinstance(x, Tracer) or isinstance(y, Tracer))
                and not core.dynamic_trace_active()
                and not (has_tracer_in_sequence(x) or has_tracer_in_sequence(y))
            ):
                try:
                    out = ufunc(x, y)
                except (OverflowError, TypeError):
                    check_int_args(name, (x, y))
                    raise
                return out if type(x) is not Array and type(y) is not Array else _wrap(out)
            (x, y), out_dt = promote_and_broadcast(
                name, ufunc, [asarray_or_tracer(x, name), asarray_or_tracer(y, name)]
            )
            return _finish(lax_fn(x, y), out_dt, _op)

        f = f2  # type: ignore[assignment]
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = doc or f"NumPy's ``{ufunc.__name__}``, traceable (see numpy.{ufunc.__name__})."
    f._operator = functools.partial(f, _op=True)  # type: ignore[attr-defined]
    return f


def _finish(out: Any, out_dt: np.dtype, operator: bool) -> Any:
    """Give a ufunc's result NumPy's dtype. As in NumPy 2, an operator on weak values
    (``x * 2.0`` with Python floats) stays weak, but a ufunc call (``exp(1.0)``) returns
    a strong value."""
    aval = out.aval if isinstance(out, Tracer) else core.get_aval(out)
    if aval.dtype != out_dt or (aval.weak_type and not operator):
        return lx.convert_element_type(out, out_dt, False)
    return out


def dtype_arg(dtype: Any) -> np.dtype | None:
    """Normalize a user dtype argument (``np.float32``, ``"f4"``, ``float``...)."""
    return None if dtype is None else np.dtype(dtype)
