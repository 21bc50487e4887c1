"""Function application of functrace.numpy: ``vectorize``, ``apply_along_axis``,
``apply_over_axes`` and ``piecewise``; also the window functions (``bartlett``,
``blackman``, ``hamming``, ``hanning``, ``kaiser``) and ``einsum_path``. Exported
through ``_manip``.

``vectorize`` and ``apply_along_axis`` are built on the batching interpreter (the one
``functrace.vmap`` runs, called here through ``batching.vmap_flat``, since
``functrace.numpy`` sits below ``functrace.api``): the user's function is called once,
on values carrying a batch axis, so the result traces, differentiates, batches and
jits like any composite.

Decisions:

* ``vectorize`` and ``apply_along_axis`` call the user's function on batched values,
  as JAX does, on plain NumPy inputs too (NumPy calls it once per element or slice):
  it must be written with ``functrace.numpy`` (Python ``if`` on a batched value raises
  ``ConcretizationError``; use ``where`` or ``lax.cond``). Their results equal NumPy's
  for such functions, and they also work on empty inputs (where NumPy raises).
  Without a signature, ``vectorize`` lets the function return arrays (their axes
  follow the loop axes, as in JAX); ``None`` arguments are passed through unbatched.
* ``piecewise`` with conditions of known value evaluates each function on the selected
  entries only, as NumPy does (so a function need not be defined elsewhere, and its
  derivative is exact); with abstract conditions (under ``jit``/``vmap``) it evaluates
  every function on all of ``x`` and selects, so a function that is NaN or infinite
  where it is not selected still poisons the gradient (as with ``where``).
* ``kaiser`` takes a traced ``beta`` (its Bessel function I0 is ``functrace.numpy.i0``,
  i.e. ``lax.bessel_i0e``); the window length ``M`` of every window must be known
  while tracing.
* ``einsum_path`` returns NumPy's answer; tracers only lend it their shapes.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.interpreters import batching
from functrace.numpy._at import at
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    concrete_array,
    normalize_axis,
)
from functrace.numpy._creation import zeros_like
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import getitem, where
from functrace.numpy._joining import stack
from functrace.numpy._math import logical_not
from functrace.numpy._reductions import any as _any
from functrace.numpy._shape import expand_dims, reshape, transpose
from functrace.numpy._stats2 import i0


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _array(x: Any, fname: str) -> Any:
    """A tracer as it is; anything else as a (strong) NumPy array, as NumPy sees it."""
    return x if isinstance(x, Tracer) else np.asarray(asarray_or_tracer(x, fname))


def _result(out: Any, arrays: bool) -> Any:
    """An eager result as a writable NumPy array (an ``Array`` when an input was one)."""
    if isinstance(out, Tracer):
        return out
    r = np.asarray(out)
    if arrays:
        return _wrap(r)
    return r if r.flags.writeable else r.copy()


def _has_array(*args: Any) -> bool:
    return any(type(a) is Array for a in args)


# ---------------------------------------------------------------------------
# vectorize
# ---------------------------------------------------------------------------

_CORE = r"\((?:\w+(?:,\w+)*)?\)"
_SIGNATURE = re.compile(rf"{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``"(m,n),(n)->(m)"`` -> ([("m", "n"), ("n",)], [("m",)])."""
    text = re.sub(r"\s+", "", signature) if isinstance(signature, str) else None
    if text is None or not _SIGNATURE.fullmatch(text):
        raise ValueError(
            f"vectorize: expected a signature like '(n),(n)->()' (comma-separated core "
            f"dimension lists of names, '->', then the outputs' lists), got {signature!r}."
        )
    sides = text.split("->")
    return [
        [tuple(d for d in group.split(",") if d) for group in re.findall(r"\(([^)]*)\)", side)]
        for side in sides
    ]  # type: ignore[return-value]


class _Vectorized:
    """The function :func:`vectorize` returns."""

    def __init__(
        self,
        pyfunc: Callable[..., Any],
        otypes: Any,
        doc: str | None,
        excluded: Any,
        signature: str | None,
    ) -> None:
        if not callable(pyfunc):
            raise TypeError(f"vectorize: expected a callable pyfunc, got {pyfunc!r}.")
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded or ())
        self.signature = signature
        self._core = None if signature is None else _parse_signature(signature)
        if otypes is None:
            self.otypes = None
        else:
            try:
                self.otypes = [np.dtype(t) for t in otypes]
            except TypeError:
                raise ValueError(
                    f"vectorize: expected otypes as a string of type codes or a list of "
                    f"dtypes, got {otypes!r}."
                ) from None
        functools.update_wrapper(self, pyfunc)
        if doc is not None:
            self.__doc__ = doc

    def __repr__(self) -> str:
        return f"vectorize({core.describe_fun(self.pyfunc)}, signature={self.signature!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _vectorized_call(self, args, kwargs)


def vectorize(
    pyfunc: Callable[..., Any] | None = None,
    otypes: Any = None,
    doc: str | None = None,
    excluded: Any = None,
    cache: bool = False,
    signature: str | None = None,
) -> Any:
    """``pyfunc`` (written for single elements, or for the core dimensions of
    ``signature``) mapped over the broadcast leading axes of its arguments (NumPy's
    ``vectorize``, with JAX's semantics: ``pyfunc`` runs once, on batched values).

    ``signature`` gives the core dimensions of each argument and output, e.g.
    ``"(n),(n)->()"`` for a dot product; ``excluded`` names positions (ints) or keyword
    arguments (strings) passed through unchanged; other keyword arguments are
    vectorized after the positional ones; ``otypes`` casts the outputs; ``cache`` is
    accepted and has no effect. Use it as ``vectorize(f, ...)`` or as a decorator
    (``@vectorize`` or ``@vectorize(signature=...)``). The result differentiates,
    batches and jits.

    >>> import functrace.numpy as fnp
    >>> dot = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()")
    >>> dot(fnp.ones((2, 3)), fnp.arange(3.0))
    Array([3., 3.])
    """
    if pyfunc is None:
        return functools.partial(
            vectorize, otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature
        )
    return _Vectorized(pyfunc, otypes, doc, excluded, signature)


def _vectorized_call(vf: _Vectorized, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # The vectorized inputs: positional arguments not excluded, then keyword ones.
    slots: list[tuple[Any, Any]] = [(i, a) for i, a in enumerate(args) if i not in vf.excluded]
    slots += [(k, v) for k, v in kwargs.items() if k not in vf.excluded]
    if vf._core is None:
        in_core: list[tuple[str, ...]] = [()] * len(slots)
        out_core: list[tuple[str, ...]] | None = None
    else:
        in_core, out_core = vf._core
        if len(in_core) != len(slots):
            raise TypeError(
                f"vectorize: expected {len(in_core)} vectorized arguments for signature "
                f"{vf.signature!r}, got {len(slots)} (excluded: {sorted(map(str, vf.excluded))})."
            )
    keys, arrays, cores = [], [], []
    for (key, value), dims in zip(slots, in_core):
        if value is None:  # passed through, as an excluded argument
            if dims:
                raise ValueError(
                    f"vectorize: expected an array for argument {key!r} with core "
                    f"dimensions {dims}, got None."
                )
            continue
        keys.append(key)
        arrays.append(_array(value, "vectorize"))
        cores.append(dims)
    sizes: dict[str, int] = {}
    loops = []
    for key, x, dims in zip(keys, arrays, cores):
        shp = _shape(x)
        k = len(shp) - len(dims)
        if k < 0:
            raise ValueError(
                f"vectorize: expected argument {key!r} with at least {len(dims)} dimensions "
                f"(core dimensions {dims}), got shape {shp}."
            )
        for name, d in zip(dims, shp[k:]):
            if sizes.setdefault(name, d) != d:
                raise ValueError(
                    f"vectorize: inconsistent size for core dimension {name!r}: "
                    f"{sizes[name]} vs {d} (argument {key!r} of shape {shp})."
                )
        loops.append(shp[:k])
    loop = broadcast_shapes("vectorize", *loops) if loops else ()
    size = math.prod(loop)
    ins: list[Any] = []
    dims_in: list[int | None] = []
    for x, lshape in zip(arrays, loops):
        cshape = _shape(x)[len(lshape) :]
        if math.prod(lshape) == 1:
            ins.append(reshape(x, cshape))
            dims_in.append(None)
        else:
            ins.append(reshape(broadcast_to_shape(x, loop + cshape), (size, *cshape)))
            dims_in.append(0)
    multi: list[bool] = []

    def call(*vals: Any) -> list[Any]:
        pos, kw = list(args), dict(kwargs)
        for key, v in zip(keys, vals):
            if isinstance(key, int):
                pos[key] = v
            else:
                kw[key] = v
        out = vf.pyfunc(*pos, **kw)
        multi.append(isinstance(out, tuple))
        outs = [_array(o, "vectorize") for o in (out if isinstance(out, tuple) else (out,))]
        _check_outputs(vf, outs, out_core, sizes)
        return outs

    if any(d is not None for d in dims_in):
        vals, out_dims = batching.vmap_flat(
            call, size, ins, dims_in, origin=f"vectorize of {core.describe_fun(vf.pyfunc)}"
        )
        outs = [
            reshape(batching.bdim_at(o, d, size, 0), loop + _shape(o)[(d is not None) :])
            for o, d in zip(vals, out_dims)
        ]
    else:
        outs = [broadcast_to_shape(o, loop + _shape(o)) for o in call(*ins)]
    if vf.otypes is not None:
        if len(vf.otypes) != len(outs):
            raise ValueError(
                f"vectorize: expected one otype per output ({len(outs)}), got "
                f"{len(vf.otypes)}: {vf.otypes}."
            )
        outs = [cast(o, t) if core.get_aval(o).dtype != t else o for o, t in zip(outs, vf.otypes)]
    arrays_in = _has_array(*args, *kwargs.values())
    results = [_result(o, arrays_in) for o in outs]
    return tuple(results) if multi[0] or len(results) > 1 else results[0]


def _check_outputs(
    vf: _Vectorized,
    outs: Sequence[Any],
    out_core: list[tuple[str, ...]] | None,
    sizes: dict[str, int],
) -> None:
    if out_core is None:
        return
    if len(outs) != len(out_core):
        raise ValueError(
            f"vectorize: expected {len(out_core)} outputs for signature {vf.signature!r}, "
            f"got {len(outs)} from {core.describe_fun(vf.pyfunc)}."
        )
    for o, dims in zip(outs, out_core):
        shp = _shape(o)
        if len(shp) != len(dims):
            raise ValueError(
                f"vectorize: output shape {shp} does not match core dimensions {dims} "
                f"of signature {vf.signature!r}."
            )
        for name, d in zip(dims, shp):
            if sizes.setdefault(name, d) != d:
                raise ValueError(
                    f"vectorize: output shape {shp} does not match core dimension "
                    f"{name!r} of size {sizes[name]} (signature {vf.signature!r})."
                )


# ---------------------------------------------------------------------------
# apply_along_axis, apply_over_axes
# ---------------------------------------------------------------------------


def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any
) -> Any:
    """``func1d(v, *args, **kwargs)`` on every 1-d slice ``v`` of ``arr`` along
    ``axis``; the axes of its result take the place of ``axis`` (NumPy's
    ``apply_along_axis``). ``func1d`` runs once, on batched slices (as in JAX), so it
    must be traceable; the result differentiates, batches and jits.

    >>> import functrace.numpy as fnp
    >>> x = fnp.arange(6.0).reshape(2, 3)
    >>> fnp.apply_along_axis(lambda v: v[0] + v[-1], 1, x)
    Array([2., 8.])
    """
    x = _array(arr, "apply_along_axis")
    shape = _shape(x)
    ax = normalize_axis("apply_along_axis", axis, len(shape))
    other = shape[:ax] + shape[ax + 1 :]
    size = math.prod(other)
    perm = (*range(ax), *range(ax + 1, len(shape)), ax)
    rows = reshape(transpose(x, perm), (size, shape[ax]))

    def call(row: Any) -> list[Any]:
        return [_array(func1d(row, *args, **kwargs), "apply_along_axis")]

    (res,), (d,) = batching.vmap_flat(
        call, size, [rows], [0], origin=f"apply_along_axis of {core.describe_fun(func1d)}"
    )
    res = batching.bdim_at(res, d, size, 0)
    rshape = _shape(res)[1:]
    res = reshape(res, other + rshape)
    m, k = len(other), len(rshape)
    res = transpose(res, (*range(ax), *range(m, m + k), *range(ax, m)))
    return _result(res, type(arr) is Array)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """``func(a, axis)`` applied for each axis of ``axes`` in turn, each result keeping
    ``a``'s number of dimensions (a removed axis is put back with size 1), as NumPy's
    ``apply_over_axes``.

    >>> import functrace.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, fnp.ones((2, 3, 4)), [0, 2])
    Array([[[8.],
            [8.],
            [8.]]])
    """
    val = _array(a, "apply_over_axes")
    nd = len(_shape(val))
    for axis in np.atleast_1d(axes).tolist():
        if axis < 0:
            axis += nd
        res = _array(func(val, axis), "apply_over_axes")
        res_nd = len(_shape(res))
        if res_nd == nd - 1:
            res = expand_dims(res, axis)
        elif res_nd != nd:
            raise ValueError(
                f"apply_over_axes: expected func to return an array of {nd} or {nd - 1} "
                f"dimensions, got shape {_shape(res)} for axis {axis}."
            )
        val = res
    return _result(val, type(a) is Array)


# ---------------------------------------------------------------------------
# piecewise
# ---------------------------------------------------------------------------


def _conditions(x: Any, condlist: Any) -> list[Any]:
    """NumPy's reading of ``condlist``: one condition, or a list of them (a list whose
    first entry is a list or an array, or any list when ``x`` is 0-d)."""
    nd = len(_shape(x))
    if isinstance(condlist, (np.ndarray, Tracer)):
        c_nd = core.get_aval(condlist).ndim
        single = c_nd == 0 or (c_nd == 1 and nd != 0)
    elif isinstance(condlist, (list, tuple)):
        single = (
            bool(condlist) and nd != 0 and not isinstance(condlist[0], (list, np.ndarray, Tracer))
        )
    else:
        single = True
    out = []
    for c in [condlist] if single else list(condlist):
        c = _array(c, "piecewise")
        if core.get_aval(c).dtype != np.bool_:
            c = c != 0
        try:
            ok = np.broadcast_shapes(_shape(c), _shape(x)) == _shape(x)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"piecewise: expected conditions of the shape of x {_shape(x)}, got "
                f"shape {_shape(c)}."
            )
        out.append(broadcast_to_shape(c, _shape(x)))
    return out


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``funclist[i]`` where ``condlist[i]`` holds (later conditions win), zero where
    none does, or ``funclist[-1]`` there when it has one entry more than ``condlist``
    (NumPy's ``piecewise``). Entries of ``funclist`` are functions called as
    ``f(x_part, *args, **kw)`` or constants; the result has ``x``'s dtype.

    With conditions of known value each function sees only its entries, as in NumPy;
    under ``jit``/``vmap`` every function sees all of ``x`` (see the module notes).

    >>> import functrace.numpy as fnp
    >>> x = fnp.linspace(-2.0, 2.0, 5)
    >>> fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
    Array([2., 1., 0., 1., 4.])
    """
    xa = _array(x, "piecewise")
    conds = _conditions(xa, condlist)
    n, nf = len(conds), len(funclist)
    if nf == n + 1:  # the entries no condition selects
        if not conds:
            conds.append(np.ones(_shape(xa), bool))
        elif any(isinstance(c, Tracer) for c in conds):
            conds.append(logical_not(_any(stack(conds), axis=0)))
        else:
            conds.append(~np.any(conds, axis=0))
    elif nf != n:
        raise ValueError(
            f"piecewise: expected {n} or {n + 1} entries in funclist for {n} condition(s), "
            f"got {nf}."
        )
    dt = core.get_aval(xa).dtype
    known = [core.concrete_or_none(c) for c in conds]
    y = zeros_like(xa)
    if all(k is not None for k in known):
        for mask, f in zip(known, funclist):
            if not callable(f):
                y = at(y)[mask].set(f)
                continue
            part = getitem(xa, mask)
            if core.get_aval(part).size:
                y = at(y)[mask].set(f(part, *args, **kw))
        return _result(y, type(x) is Array)
    for c, f in zip(conds, funclist):
        v = _array(f(xa, *args, **kw) if callable(f) else f, "piecewise")
        v = cast(v, dt) if isinstance(v, Tracer) else np.asarray(v).astype(dt)
        y = where(c, broadcast_to_shape(v, _shape(xa)), y)
    return y


# ---------------------------------------------------------------------------
# Window functions, einsum_path
# ---------------------------------------------------------------------------


def _window_length(fname: str, M: Any) -> Any:
    return concrete_array(fname, M, "window length M").item() if isinstance(M, Tracer) else M


def _window(np_fn: Callable[[Any], np.ndarray], name: str, what: str) -> Callable[[Any], Any]:
    @numpy_path(np_fn)
    def window(M: Any) -> Any:
        return np_fn(_window_length(name, M))

    window.__name__ = window.__qualname__ = name
    window.__doc__ = (
        f"The {what} window of ``M`` points (NumPy's ``{name}``; float64, empty for\n"
        f"    ``M < 1``). ``M`` must be known while tracing.\n\n"
        f"    >>> import functrace.numpy as fnp\n"
        f"    >>> fnp.{name}(5).shape\n"
        f"    (5,)\n"
        f"    "
    )
    return window


bartlett = _window(np.bartlett, "bartlett", "triangular (Bartlett)")
blackman = _window(np.blackman, "blackman", "Blackman")
hamming = _window(np.hamming, "hamming", "Hamming")
hanning = _window(np.hanning, "hanning", "Hann")


@numpy_path(np.kaiser)
def kaiser(M: Any, beta: Any) -> Any:
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (NumPy's
    ``kaiser``, float64). ``M`` must be known while tracing; ``beta`` may be traced
    and differentiated.

    >>> import functrace.numpy as fnp
    >>> fnp.kaiser(4, 3.0).round(4)
    array([0.2049, 0.8712, 0.8712, 0.2049])
    """
    m = _window_length("kaiser", M)
    b = _array(beta, "kaiser")
    if _shape(b) != ():
        raise ValueError(f"kaiser: expected a scalar beta, got shape {_shape(b)}.")
    if m < 1:
        return np.array([], np.float64)
    if m == 1:
        return np.ones(1)
    b = cast(b, np.dtype(np.float64)) if isinstance(b, Tracer) else np.float64(b)
    n = np.arange(0, m)
    half = (m - 1) / 2.0
    r = np.sqrt(1.0 - ((n - half) / half) ** 2)
    return i0(b * r) / i0(b)


def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> Any:
    """NumPy's ``einsum_path``: the contraction order ``einsum(..., optimize=...)``
    would use for these operands, and a printable report (NumPy's result, returned as
    is). Traced operands only lend their shapes.

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    >>> fnp.einsum_path("ij,jk,kl->il", a, b, c)[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    shaped = [
        np.broadcast_to(np.zeros((), o.dtype), o.shape) if isinstance(o, Tracer) else o
        for o in operands
    ]
    return np.einsum_path(*shaped, optimize=optimize, einsum_call=einsum_call)  # type: ignore[arg-type]


__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "bartlett",
    "blackman",
    "einsum_path",
    "hamming",
    "hanning",
    "kaiser",
    "piecewise",
    "vectorize",
]
