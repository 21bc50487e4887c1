"""The machinery of functrace.numpy: NumPy 2 promotion and broadcasting on tracers,
and the helpers every module of it shares (axes, static shapes, concrete values).

On plain NumPy inputs (no tracer, no jit trace active) every function calls
NumPy directly (``_dispatch.numpy_path``): same values, same dtypes, little
overhead. With tracers, the dtype NumPy would compute is asked of NumPy itself
(``ufunc.resolve_dtypes``, with Python scalars as weak types), operands are cast and
broadcast with explicit ``convert_element_type`` / ``broadcast_in_dim`` equations, and
then the lax primitive is bound.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from functrace import _debug, core, dtypes
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import elementwise as lx
from functrace.lax import shapes as ls
from functrace.numpy._dispatch import contains_tracer, is_traced, numpy_path

_PY_SCALARS = (bool, int, float, complex)
_promotion = dtypes.promotion  # config.numpy_dtype_promotion: checked when "strict"
_WEAK_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def asarray_or_tracer(x: Any, fname: str = "functrace.numpy") -> Any:
    """Tracers and NumPy arrays/scalars pass; Python scalars pass (weak);
    lists/tuples (possibly of tracers) become arrays. Strings, bytes and objects (also
    NumPy arrays of them) raise :func:`non_numeric_error`, as in JAX."""
    if isinstance(x, (Tracer, bool, int, float, complex)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind in _NON_NUMERIC and x.dtype != dtypes.float0:
            raise non_numeric_error(fname, x, x.dtype)
        return x
    if isinstance(x, (list, tuple)):
        return array_any(x, fname=fname)
    try:
        out = np.asarray(x)
    except Exception as e:  # pragma: no cover - message path
        raise TypeError(f"{fname}: expected an array-like, got {type(x).__name__}.") from e
    if out.dtype.kind in _NON_NUMERIC:
        raise non_numeric_error(fname, x, out.dtype)
    return out


# Kinds of NumPy dtypes functrace does not compute with: object, str, bytes, void
# (except float0, the empty dtype of tangents of integers), datetimes.
_NON_NUMERIC = "OUSVMm"


def _int64_overflowing(x: Any) -> int | None:
    """The first Python int outside int64 in ``x`` (a nested list/tuple), else None."""
    if core.int64_overflow(x):
        return int(x)
    if isinstance(x, (list, tuple)):
        for v in x:
            big = _int64_overflowing(v)
            if big is not None:
                return big
    return None


def non_numeric_error(fname: str, x: Any, dtype: np.dtype) -> TypeError | OverflowError:
    """The TypeError for a string, bytes or object value given where an array of
    numbers or booleans is expected (JAX rejects them too); an OverflowError, as JAX's,
    when the objects are Python ints too large for int64 (NumPy's object dtype)."""
    big = _int64_overflowing(x) if dtype.kind == "O" else None
    if big is not None:
        return core.int64_overflow_error(fname, big, "in an array")
    what = repr(x) if isinstance(x, (str, bytes)) else type(x).__name__
    if len(what) > 60:
        what = what[:57] + "..."
    return TypeError(
        f"{fname}: expected an array of numbers or booleans (or a nested list of them), got "
        f"{what} (NumPy dtype {dtype}). functrace, like JAX, does not compute with strings, "
        f"bytes or Python objects: convert them to numbers first."
    )


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
    if not is_traced(x):
        return np.broadcast_to(x, shape)  # an eager constant: a NumPy view, no equation
    nd = len(shape)
    return ls.broadcast_in_dim(x, shape, tuple(range(nd - aval.ndim, nd)))


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
    if nin > 1 and _debug.flags.rank_promotion != "allow":
        _debug.check_rank_promotion(fname, [a.shape for a in avals])
    if nin > 1 and _promotion.maybe_strict and len(set(dts[:nin])) == 1:
        # config.numpy_dtype_promotion="strict" (a loop of mixed types promotes nothing)
        dtypes.check_promotion(fname, [(a.dtype, a.weak_type) for a in avals])
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
    """An fnp function for ``ufunc``: NumPy on plain inputs, ``lax_fn`` on tracers.

    Its ``_operator`` (what the tracer operators call) is the traced path with
    operator typing: ``x * 2.0`` on weak values stays weak (see ``_finish``).
    """
    if ufunc.nin == 1:

        def f1(x: Any, /, *, _op: bool = False) -> Any:
            (x,), out_dt = promote_and_broadcast(name, ufunc, [asarray_or_tracer(x, name)])
            return _finish(lax_fn(x), out_dt, _op)

        traced = f1
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
            (x, y), out_dt = promote_and_broadcast(
                name, ufunc, [asarray_or_tracer(x, name), asarray_or_tracer(y, name)]
            )
            return _finish(lax_fn(x, y), out_dt, _op)

        traced = f2  # type: ignore[assignment]

    def int_error(*args: Any) -> None:
        check_int_args(name, args)  # NumPy's message is about C longs

    traced.__name__ = traced.__qualname__ = name
    traced.__doc__ = doc or f"NumPy's ``{ufunc.__name__}``, traceable (see numpy.{ufunc.__name__})."
    f = numpy_path(ufunc, on_error=int_error, nargs=ufunc.nin)(traced)
    f._operator = functools.partial(traced, _op=True)  # type: ignore[attr-defined]
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


def array_any(obj: Any, dtype: Any = None, copy: bool = True, fname: str = "array") -> Any:
    """``functrace.numpy.array`` with NumPy's result types: a NumPy array when ``obj``
    holds no tracer, else one tracer stacking its (nested) elements. Strings, bytes and
    objects raise a TypeError naming ``fname`` (a string with a numeric ``dtype`` is
    parsed, as NumPy and JAX do)."""
    dtype = dtype_arg(dtype)
    if not contains_tracer(obj):
        if isinstance(obj, np.ndarray) and obj.dtype.kind == "O":  # (JAX: even of numbers)
            raise non_numeric_error(fname, obj, obj.dtype)
        out = np.array(obj, dtype=dtype, copy=copy) if copy else np.asarray(obj, dtype)
        if out.dtype.kind in _NON_NUMERIC and out.dtype != dtypes.float0:
            raise non_numeric_error(fname, obj, out.dtype)
        return out
    if isinstance(obj, Tracer):
        return obj if dtype is None else cast(obj, dtype)
    parts = [array_any(e, copy=False) for e in obj]
    avals = [core.get_aval(p) for p in parts]
    shapes = {a.shape for a in avals}
    if len(shapes) != 1:
        raise ValueError(
            f"array: expected equally shaped elements, got shapes {sorted(shapes)}. "
            f"Make the nested lists rectangular."
        )
    (shape,) = shapes
    dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])
    dt = dt if dtype is None else dtype
    rows = [ls.reshape(cast(p, dt), (1, *shape)) for p in parts]
    return ls.concatenate(rows, 0) if len(rows) > 1 else rows[0]


# ---------------------------------------------------------------------------
# Axes, static shapes and concrete values
# ---------------------------------------------------------------------------


def axis_error(fname: str, axis: Any, ndim: int) -> np.exceptions.AxisError:
    # AxisError subclasses ValueError and IndexError, as NumPy's own axis errors do.
    return np.exceptions.AxisError(
        f"{fname}: expected axis in [{-ndim}, {ndim}) for an array of {ndim} dimensions, "
        f"got {axis}. Pass an axis that exists (negative axes count from the end)."
    )


def normalize_axis(fname: str, axis: Any, ndim: int) -> int:
    """One NumPy axis (negative allowed) -> non-negative int."""
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fname}: expected an integer axis, got {axis!r}. Pass a Python int.")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise axis_error(fname, axis, ndim)
    return a % ndim


def normalize_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """NumPy ``axis`` argument (None, int or tuple, negatives allowed) -> sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axes: tuple[Any, ...] = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(
            f"{fname}: expected axis None, an int or a tuple of ints, got "
            f"{axis!r}. Pass e.g. axis=0 or axis=(0, 1)."
        )
    out = [normalize_axis(fname, a, ndim) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: expected distinct axes, got {axis}. Name each axis once.")
    return tuple(sorted(out))


def keepdims_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def no_out(fname: str, out: Any) -> None:
    """Refuse ``out=`` on the traced path (nothing is written in place)."""
    if out is not None:
        raise TypeError(
            f"{fname}: expected out=None, got an output array. functrace.numpy "
            f"never writes in place: use the returned array."
        )


def concrete_array(fname: str, x: Any, what: str) -> np.ndarray:
    """The NumPy value of ``x``; a ConcretizationError if it is only known abstractly."""
    v = core.concrete_or_none(x)
    if v is None:
        raise ConcretizationError(
            f"{fname}: expected concrete {what}, got an abstract tracer "
            f"{x.aval.str_short()}. The output shape depends on it, so it must be known "
            f"while tracing: pass a NumPy value, or mark the argument static (static_argnums)."
        )
    return v


def concrete_int(fname: str, x: Any, what: str) -> int:
    """A Python int from ``x``, which may be a concrete tracer but not an abstract one."""
    return int(concrete_array(fname, x, what))


def shape_tuple(fname: str, shape: Any) -> tuple[int, ...]:
    """A static shape from an int or a sequence of ints (concrete tracers allowed)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if contains_tracer(shape):
        if isinstance(shape, Tracer) and shape.ndim == 0:
            return (concrete_int(fname, shape, "sizes"),)
        sizes = concrete_array(fname, array_any(shape, copy=False), "sizes")
        return tuple(int(d) for d in sizes.reshape(-1))
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{fname}: expected a shape (an int or a tuple of ints), got "
            f"{shape!r}. Pass e.g. (2, 3)."
        ) from None


def slice_along(x: Any, start: int, stop: int, axis: int) -> Any:
    """``x[..., start:stop, ...]`` on ``axis`` (a lax ``slice``)."""
    shp = core.get_aval(x).shape
    starts = tuple(start if i == axis else 0 for i in range(len(shp)))
    limits = tuple(stop if i == axis else d for i, d in enumerate(shp))
    return ls.slice(x, starts, limits)
