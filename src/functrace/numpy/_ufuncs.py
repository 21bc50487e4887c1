"""NumPy's ufunc methods on JAX's fourteen ufuncs, and ``frompyfunc``.

``jax.numpy.add`` and thirteen others are ``jnp.ufunc`` objects with ``reduce``,
``accumulate``, ``outer``, ``at`` and ``reduceat``; NumPy code ported to JAX calls them
(``fnp.subtract.outer(x, y)``, ``fnp.logaddexp.reduce(a)``, ``fnp.maximum.accumulate``).
functrace's elementwise functions stay plain functions (an eager call costs no extra
indirection); each of those fourteen carries a :class:`ufunc` describing it, whose
bound methods and properties are set on the function as attributes, and
``isinstance(fnp.add, fnp.ufunc)`` is True. ``frompyfunc(f, nin, nout)`` makes a ufunc
of any traceable scalar function (its call is ``vectorize(f)``).

The methods use the library's reductions where one exists (``add.reduce`` is ``sum``,
``maximum.accumulate`` is ``lax.cummax``...); otherwise, as in JAX, a loop applies the
function along the axis (``fori_loop``/``scan``), so every method differentiates,
batches and compiles like the rest of ``functrace.numpy``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace.interpreters import staging
from functrace.numpy import _math as m
from functrace.numpy import _reductions as r
from functrace.numpy._apply import vectorize
from functrace.numpy._at import at as _at
from functrace.numpy._core import asarray_or_tracer, normalize_axes
from functrace.numpy._creation import arange, full
from functrace.numpy._indexing import getitem, take, where
from functrace.numpy._joining import concatenate
from functrace.numpy._manip import moveaxis
from functrace.numpy._shape import broadcast_to, expand_dims, reshape
from functrace.numpy._special import logaddexp, logaddexp2

__all__ = ["frompyfunc", "ufunc"]

_AT_INPLACE = (
    "{name}.at: functrace arrays are immutable, so it cannot update `a` in place as "
    "NumPy's does; pass inplace=False and use the returned array: "
    "a = fnp.{name}.at(a, indices, b, inplace=False)."
)


class _UfuncType(type):
    """``isinstance(fnp.add, fnp.ufunc)`` is True: the built-in ufuncs are functions
    that carry their ufunc (see the module docstring)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or type.__instancecheck__(
            cls, getattr(obj, "_ufunc", None)
        )


def _axis(fname: str, axis: Any, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fname}: expected axis to be an int, got {axis!r}.")
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{fname}: expected axis in [{-ndim}, {ndim}), got {axis}.")
    return int(axis) % max(ndim, 1)


class ufunc(metaclass=_UfuncType):
    """A function of ``nin`` arrays applied elementwise, with NumPy's ufunc methods
    (JAX's ``jnp.ufunc``): ``reduce``, ``accumulate``, ``outer``, ``at`` (with
    ``inplace=False``: arrays are immutable) and ``reduceat``.

    ``func`` must be traceable; ``call`` (default ``vectorize(func)``) and the
    ``reduce``/``accumulate``/``at``/``reduceat`` arguments replace the generic
    methods by faster equivalents. ``identity`` is the reduction's identity (None if
    there is none).

    >>> import functrace.numpy as fnp
    >>> fnp.add.reduce(fnp.arange(5.0)), fnp.multiply.outer([1, 2], [3, 4]).tolist()
    (Array(10.), [[3, 4], [6, 8]])
    """

    def __init__(
        self,
        func: Callable[..., Any],
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity: Any = None,
        call: Callable[..., Any] | None = None,
        reduce: Callable[..., Any] | None = None,
        accumulate: Callable[..., Any] | None = None,
        at: Callable[..., Any] | None = None,
        reduceat: Callable[..., Any] | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"ufunc: expected a callable func, got {type(func).__name__}.")
        for what, v in (("nin", nin), ("nout", nout)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"ufunc: expected {what} to be a positive int, got {v!r}.")
        self._func = func
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.nin, self.nout = nin, nout
        self.nargs = nin if nargs is None else nargs
        self.identity = identity
        self._call = call or vectorize(func)
        self._reduce, self._accumulate, self._at, self._reduceat = reduce, accumulate, at, reduceat

    def __repr__(self) -> str:
        return f"<functrace.numpy.ufunc '{self.__name__}'>"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == _as_ufunc(other)._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None or where is not None:
            raise NotImplementedError(
                f"{self.__name__}: the out= and where= arguments of a ufunc call are not "
                f"supported (arrays are immutable); use fnp.where on the result."
            )
        if len(args) != self.nin:
            raise TypeError(
                f"{self.__name__}: expected {self.nin} array argument(s), got {len(args)}."
            )
        return self._call(*args)

    # -- helpers --------------------------------------------------------------
    def _binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{self.__name__}.{method}: only binary ufuncs have it (nin=2), "
                             f"got nin={self.nin}.")  # fmt: skip
        if self.nout != 1:
            raise ValueError(f"{self.__name__}.{method}: only ufuncs of one output have it, "
                             f"got nout={self.nout}.")  # fmt: skip

    def _dtype(self, *avals: Any) -> np.dtype:
        """The dtype ``func`` gives on scalars of the operands' dtypes (traced apart,
        so nothing is computed or staged)."""
        scalars = [core.ShapedArray((), a.dtype) for a in avals]
        closed, _ = staging.trace_to_jaxpr(
            lambda *xs: [self._func(*xs)], scalars, origin=f"{self.__name__}'s dtype"
        )
        return closed.out_avals[0].dtype

    # -- reduce -----------------------------------------------------------------
    def reduce(
        self,
        a: Any,
        axis: Any = 0,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        """Fold the function over ``axis`` (an int, a tuple for ufuncs with a fast
        reduction, or None: all axes): ``add.reduce`` is ``sum``."""
        name = f"{self.__name__}.reduce"
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable).")
        a = asarray_or_tracer(a, name)
        if where is not None:
            where = asarray_or_tracer(where, name)
            if core.get_aval(where).dtype != np.bool_:
                raise ValueError(
                    f"{name}: expected where to be a boolean array, got dtype "
                    f"{core.get_aval(where).dtype}."
                )
            if self.identity is None and initial is None:
                raise ValueError(
                    f"{name}: the reduction has no identity, so a where mask needs initial=; "
                    f"got where without initial."
                )
        if self._reduce is not None:
            return self._reduce(
                a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
            )
        return self._reduce_by_loop(name, a, axis, dtype, keepdims, initial, where)

    def _reduce_by_loop(
        self, name: str, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any, mask: Any
    ) -> Any:
        aval = core.get_aval(a)
        dt = np.dtype(dtype) if dtype is not None else self._dtype(aval, aval)
        if initial is None:
            initial = self.identity
        if mask is not None:
            mask = broadcast_to(mask, aval.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError(
                f"{name}: a tuple of axes needs a reduction of its own (add, multiply, "
                f"maximum...); got axis={axis!r}. Reduce one axis at a time."
            )
        if axis is None:
            final = (1,) * aval.ndim if keepdims else ()
            a, axis = reshape(a, (-1,)), 0
            mask = None if mask is None else reshape(mask, (-1,))
        else:
            axis = _axis(name, axis, aval.ndim)
            rest = aval.shape[:axis] + aval.shape[axis + 1 :]
            final = aval.shape[:axis] + (1,) + aval.shape[axis + 1 :] if keepdims else rest
            a = moveaxis(a, axis, 0)
            mask = None if mask is None else moveaxis(mask, axis, 0)
        n = core.get_aval(a).shape[0]
        rest_shape = core.get_aval(a).shape[1:]
        if n == 0:
            if initial is None:
                raise ValueError(
                    f"{name}: expected a non-empty axis (the reduction has no identity), "
                    f"got an axis of size 0."
                )
            return full(final, initial, dt)
        if initial is None:
            start, value = 1, _lax.convert_element_type(getitem(a, 0), dt)
        else:
            start, value = 0, broadcast_to(asarray_or_tracer(initial, name).astype(dt), rest_shape)

        def body(i: Any, acc: Any) -> Any:
            new = self(acc, getitem(a, i).astype(dt))
            return new if mask is None else where(getitem(mask, i), new, acc)

        out = _lax.fori_loop(start, n, body, value)
        return reshape(out, final)

    # -- accumulate -------------------------------------------------------------
    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running fold along ``axis``: ``add.accumulate`` is ``cumsum``."""
        name = f"{self.__name__}.accumulate"
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable).")
        a = asarray_or_tracer(a, name)
        aval = core.get_aval(a)
        if axis is None or isinstance(axis, tuple):
            raise ValueError(f"{name}: expected one int axis, got {axis!r}.")
        axis = _axis(name, axis, aval.ndim)
        if aval.ndim == 0:
            raise ValueError(f"{name}: expected an array of 1 or more dimensions, got a scalar.")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        dt = np.dtype(dtype) if dtype is not None else self._dtype(aval, aval)
        if aval.size == 0:
            return full(aval.shape, 0, dt)
        x = moveaxis(a, axis, 0).astype(dt)
        first = getitem(x, 0)

        def step(acc: Any, xi: Any) -> tuple[Any, Any]:
            new = self(acc, xi)
            return new, new

        _, rest = _lax.scan(step, first, getitem(x, slice(1, None)))
        return moveaxis(concatenate([expand_dims(first, 0), rest]), 0, axis)

    # -- outer ------------------------------------------------------------------
    def outer(self, A: Any, B: Any, /) -> Any:
        """The function on every pair: shape ``A.shape + B.shape``."""
        name = f"{self.__name__}.outer"
        self._binary("outer")
        A, B = asarray_or_tracer(A, name), asarray_or_tracer(B, name)
        nb = core.get_aval(B).ndim
        return self(reshape(A, core.get_aval(A).shape + (1,) * nb), B)

    # -- at ---------------------------------------------------------------------
    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with the function applied at ``indices`` (with ``b`` for binary
        ufuncs), once per occurrence of a repeated index, in order; an index out of range
        is skipped, as in JAX (NumPy raises). Needs ``inplace=False``, as in JAX: the
        updated array is returned."""
        name = f"{self.__name__}.at"
        if inplace:
            raise NotImplementedError(_AT_INPLACE.format(name=self.__name__))
        if self.nout != 1:
            raise ValueError(f"{name}: only ufuncs of one output have it, got nout={self.nout}.")
        if (b is None) != (self.nin == 1):
            raise TypeError(
                f"{name}: expected {'no' if self.nin == 1 else 'a'} value argument b for a "
                f"ufunc of {self.nin} input(s), got {'none' if b is None else 'one'}."
            )
        a = asarray_or_tracer(a, name)
        args = () if b is None else (asarray_or_tracer(b, name),)
        if self._at is not None:
            return self._at(a, indices, *args)
        aval = core.get_aval(a)
        dt = self._dtype(aval, *(core.get_aval(x) for x in args))
        a = a.astype(dt)
        # each update's flat position; -1 for an index out of range, whose update is
        # skipped (as JAX's, and as the fast paths' .at[...].add)
        table = reshape(arange(math.prod(aval.shape)), aval.shape)
        pos = _at(table)[indices].get(mode="fill", fill_value=-1)
        xs: tuple[Any, ...] = (reshape(pos, (-1,)),)
        if args:
            xs += (reshape(broadcast_to(args[0], core.get_aval(pos).shape).astype(dt), (-1,)),)
        if core.get_aval(pos).size == 0:
            return a

        def step(flat: Any, x: Any) -> tuple[Any, Any]:
            inside = m.greater_equal(x[0], 0)
            p = where(inside, x[0], 0)
            old = getitem(flat, p)
            return _at(flat)[p].set(where(inside, self(old, *x[1:]), old)), None

        flat, _ = _lax.scan(step, reshape(a, (-1,)), xs)
        return reshape(flat, aval.shape)

    # -- reduceat ---------------------------------------------------------------
    def reduceat(
        self, a: Any, indices: Any, axis: int = 0, dtype: Any = None, out: None = None
    ) -> Any:
        """Reductions over the slices ``indices[i]:indices[i+1]`` of ``axis`` (the
        element ``indices[i]`` alone where ``indices[i] >= indices[i+1]``; the last one
        to the end), as NumPy's."""
        name = f"{self.__name__}.reduceat"
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable).")
        a, indices = asarray_or_tracer(a, name), asarray_or_tracer(indices, name)
        aval, iaval = core.get_aval(a), core.get_aval(indices)
        if aval.ndim == 0:
            raise ValueError(f"{name}: expected an array of 1 or more dimensions, got a scalar.")
        if iaval.ndim != 1 or iaval.dtype.kind not in "iu":
            raise ValueError(
                f"{name}: expected indices to be a 1-d integer array, got "
                f"{iaval.dtype}{list(iaval.shape)}."
            )
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{name}: expected one int axis, got {axis!r}.")
        axis = _axis(name, axis, aval.ndim)
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        dt = np.dtype(dtype) if dtype is not None else aval.dtype
        n = aval.shape[axis]
        x = moveaxis(a, axis, 0).astype(dt)
        acc = take(x, indices, axis=0)
        bounds = concatenate([indices, full((1,), n, iaval.dtype)])
        shape = (iaval.shape[0],) + (1,) * (aval.ndim - 1)
        lo, hi = reshape(bounds[:-1], shape), reshape(bounds[1:], shape)

        def body(i: Any, acc: Any) -> Any:
            inside = m.logical_and(m.greater(i, lo), m.less(i, hi))
            return where(inside, self(acc, getitem(x, i)), acc)

        return moveaxis(_lax.fori_loop(0, n, body, acc), 0, axis)


def _as_ufunc(f: Any) -> ufunc:
    return f if type.__instancecheck__(ufunc, f) else f._ufunc


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` of the traceable scalar function ``func`` (JAX's
    ``jnp.frompyfunc``): called elementwise through ``vectorize``, with the generic
    ``reduce``/``accumulate``/``outer``/``at``/``reduceat``.

    >>> import functrace.numpy as fnp
    >>> hypot = fnp.frompyfunc(lambda x, y: fnp.sqrt(x * x + y * y), nin=2, nout=1)
    >>> hypot.accumulate(fnp.array([3.0, 4.0, 12.0]))
    Array([ 3.,  5., 13.])
    """
    return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------
# JAX's fourteen ufuncs: the elementwise functions, with their fast methods
# ---------------------------------------------------------------------------


def _masked(base: Callable[..., Any], op: Callable[..., Any], fill: Any) -> Callable[..., Any]:
    """A ``reduce`` from ``base(a, axis, keepdims)``: ``dtype`` casts first, ``where``
    puts the identity ``fill(dtype)`` where it is False, ``initial`` joins the result
    through ``op``."""

    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any) -> Any:
        if dtype is not None:
            a = a.astype(dtype)
        if where is not None:
            a = _where(where, a, fill(core.get_aval(a).dtype))
        out = base(a, axis=axis, keepdims=keepdims)
        return out if initial is None else op(out, initial)

    return reduce


_where = where


def _lax_reduce(lax_fn: Callable[..., Any]) -> Callable[..., Any]:
    def base(a: Any, *, axis: Any, keepdims: bool) -> Any:
        aval = core.get_aval(a)
        axes = normalize_axes("reduce", axis, aval.ndim)
        out = lax_fn(a, axes)
        if keepdims:
            out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(aval.shape)))
        return out

    return base


def _xor_base(a: Any, *, axis: Any, keepdims: bool) -> Any:
    odd = r.sum(m.not_equal(a, False).astype(np.int64), axis=axis, keepdims=keepdims)
    return m.equal(m.bitwise_and(odd, 1), 1)


def _sum_like(fn: Callable[..., Any]) -> Callable[..., Any]:
    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any) -> Any:
        return fn(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    return reduce


def _extremum(fn: Callable[..., Any]) -> Callable[..., Any]:
    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any) -> Any:
        if dtype is not None:
            a = a.astype(dtype)
        return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)

    return reduce


def _cumulative(cum: Callable[..., Any], dtype_arg: bool) -> Callable[..., Any]:
    def accumulate(a: Any, *, axis: int, dtype: Any) -> Any:
        if dtype_arg:
            return cum(a, axis=axis, dtype=dtype)
        return cum(a if dtype is None else a.astype(dtype), axis=axis)

    return accumulate


def _at_method(method: str) -> Callable[..., Any]:
    def at(a: Any, indices: Any, b: Any) -> Any:
        return getattr(_at(a)[indices], method)(b)

    return at


def _log_fill(dt: np.dtype) -> Any:
    return -np.inf


def _lse2(a: Any, *, axis: Any, keepdims: bool) -> Any:
    ln2 = np.log(2.0)
    return m.true_divide(r.logsumexp(m.multiply(a, ln2), axis=axis, keepdims=keepdims), ln2)


def _builtin(fn: Any, identity: Any, nin: int = 2, **methods: Any) -> None:
    u = ufunc(fn, nin, 1, name=fn.__name__, identity=identity, call=fn, **methods)
    fn._ufunc = u
    for attr in ("reduce", "accumulate", "outer", "at", "reduceat"):
        setattr(fn, attr, getattr(u, attr))
    fn.nin, fn.nout, fn.nargs, fn.identity = u.nin, u.nout, u.nargs, u.identity


def _ones_bits(dt: np.dtype) -> Any:
    return np.invert(np.zeros((), dt))


def _zero(dt: np.dtype) -> Any:
    return np.zeros((), dt)


_builtin(
    m.add, 0, reduce=_sum_like(r.sum), accumulate=_cumulative(r.cumsum, True),
    at=_at_method("add"),
)  # fmt: skip
_builtin(
    m.multiply, 1, reduce=_sum_like(r.prod), accumulate=_cumulative(r.cumprod, True),
    at=_at_method("multiply"),
)  # fmt: skip
_builtin(m.subtract, None, at=_at_method("subtract"))
_builtin(
    m.maximum, None, reduce=_extremum(r.max), accumulate=_cumulative(_lax.cummax, False),
    at=_at_method("max"),
)  # fmt: skip
_builtin(
    m.minimum, None, reduce=_extremum(r.min), accumulate=_cumulative(_lax.cummin, False),
    at=_at_method("min"),
)  # fmt: skip
_builtin(m.logical_and, True, reduce=_masked(r.all, m.logical_and, lambda dt: True))
_builtin(m.logical_or, False, reduce=_masked(r.any, m.logical_or, lambda dt: False))
_builtin(m.logical_xor, False, reduce=_masked(_xor_base, m.logical_xor, lambda dt: False))
_builtin(m.bitwise_and, -1, reduce=_masked(_lax_reduce(_lax.reduce_and), m.bitwise_and, _ones_bits))
_builtin(m.bitwise_or, 0, reduce=_masked(_lax_reduce(_lax.reduce_or), m.bitwise_or, _zero))
_builtin(m.bitwise_xor, 0, reduce=_masked(_lax_reduce(_lax.reduce_xor), m.bitwise_xor, _zero))
_builtin(logaddexp, -np.inf, reduce=_masked(r.logsumexp, logaddexp, _log_fill))
_builtin(logaddexp2, -np.inf, reduce=_masked(_lse2, logaddexp2, _log_fill))
_builtin(m.negative, None, nin=1)
