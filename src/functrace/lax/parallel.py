"""Collectives over named batch axes: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather`` and ``axis_index`` (JAX's ``lax`` vocabulary), inside
``vmap(f, axis_name=...)`` in one process.

An axis name is bound by ``vmap(..., axis_name=name)`` for the duration of the call
(the batching interpreter keeps the names in scope, innermost last). A collective
names one axis or a tuple of them and is computed by the batching rule of the trace
that owns the axis: ``psum`` of a batched value sums over its batch dimension and
gives every example the result; of a value that is the same for every example it
multiplies by the axis size. The result of a collective is the same for every
example, so it leaves the rule unbatched. Every binding of a collective goes first to
the trace of its axis when its operands come from below that trace (a constant, a
value of an outer transform), so ``psum(1.0, "i")`` is the axis size; operands of a
transform above the axis (``grad`` inside the ``vmap``, a loop body being traced) go
to that transform, whose rules bind the collective again.

Decisions:

* A name that no enclosing ``vmap`` binds is a ``NameError`` ("unbound axis name"),
  also for a collective called outside any ``vmap``.
* ``psum``'s transpose is ``psum`` (JAX's rule): under ``vmap(grad(f), axis_name=n)``
  the cotangent of ``psum(x, n)`` is summed over the examples, whether it is batched
  or the same for every example, so ``vmap(grad(f))`` equals the gradient of the sum
  over the examples of ``f``'s outputs (``grad(lambda x: vmap(f)(x).sum())``), and
  ``vmap(grad(lambda x: psum(x, "i")), axis_name="i")`` is the axis size everywhere.
  Inside ``shard_map(check_vma=True)`` bodies the same per-example rule runs, and the
  ends of reverse mode give JAX's typed answers there (``interpreters/spmd.py``), where the
  cotangent of a ``psum`` passes through to each shard.
* ``pmax``/``pmin`` split the tangent evenly among the examples that tie for the
  extremum (as ``reduce_max``), so they differentiate (JAX has no rule for them).
* ``pmean`` is ``psum`` divided by the product of the axis sizes; integer and boolean
  operands give float64, as NumPy's ``mean``. ``psum`` of booleans counts them (int64).
* ``axis_index`` is int32 (JAX's dtype); for a tuple of names it is the row-major index
  over them. ``all_gather`` gathers over one axis name.
* Under ``jit``, a ``vmap`` with collectives is batched while tracing, so the jaxpr
  holds only ordinary primitives (sums, broadcasts, iotas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer
from functrace.interpreters import ad, batching, spmd
from functrace.interpreters.ad import Zero
from functrace.lax import base
from functrace.lax import elementwise as ew
from functrace.lax._util import operator_index, register
from functrace.lax.gather_scatter import gather
from functrace.lax.reductions import reduce_max, reduce_min
from functrace.lax.shapes import iota
from functrace.tree_util import tree_map


def _unbound(fname: str, name: Any) -> NameError:
    bound = batching.bound_axis_names()
    where = (
        f"axis names in scope: {', '.join(repr(n) for n in bound)}"
        if bound
        else "no axis name is in scope (the call is outside any vmap(..., axis_name=...))"
    )
    return NameError(
        f"{fname}: unbound axis name: {name}. Expected the name of an enclosing "
        f"vmap(..., axis_name=...), got {name!r}; {where}."
    )


class _Collective(Primitive):
    """A primitive over named axes. ``bind`` checks that every name is bound and hands
    operands that come from below the axis's trace to that trace."""

    __slots__ = ()

    def bind(self, *args: Any, **params: Any) -> Any:
        target: batching.BatchTrace | None = None
        for n in params["axis_name"]:
            t = batching.axis_trace(n)
            if t is None:
                raise _unbound(self.name, n)
            if target is None or t.level > target.level:
                target = t
        assert target is not None
        top = core.dynamic_level()  # a jit/make_jaxpr trace above the axis stages it
        for a in args:
            if isinstance(a, Tracer) and a._trace.level > top:
                top = a._trace.level
        if target.level > top:
            return target.process_primitive(self, [target.full_raise(a) for a in args], params)
        return Primitive.bind(self, *args, **params)


def _impl(name: str) -> Any:
    def impl(*args: Any, axis_name: tuple[Any, ...], **params: Any) -> Any:
        raise _unbound(name, axis_name[0])  # only reached when no trace owns the axis

    return impl


def _names(fname: str, axis_name: Any) -> tuple[Any, ...]:
    """``axis_name`` as a tuple of distinct hashable names."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(
                f"{fname}: expected an axis name (a hashable value such as a string) or a "
                f"tuple of them, got {type(n).__name__} {n!r}."
            ) from None
        if n is None:
            raise TypeError(
                f"{fname}: expected an axis name (a hashable value such as a string) or a "
                f"tuple of them, got None."
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{fname}: expected distinct axis names, got {axis_name!r}.")
    return names


def _sizes(fname: str, names: tuple[Any, ...]) -> list[int]:
    sizes = []
    for n in names:
        t = batching.axis_trace(n)
        if t is None:
            raise _unbound(fname, n)
        sizes.append(t.axis_size)
    return sizes


def _operand(fname: str, x: Any) -> Any:
    if not core.is_array_like(x):
        raise TypeError(
            f"{fname}: expected an array or a pytree of arrays, got {type(x).__name__} ({x!r:.60})."
        )
    return x


def _numeric(fname: str, aval: ShapedArray) -> None:
    if aval.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected a numeric or boolean operand, got {aval.dtype.name}.")


def _scaled(x: Any, k: int) -> Any:
    """``x * k`` in ``x``'s dtype."""
    return base.mul(x, base.full_like(x, k))


def _same_abstract(fname: str) -> Any:
    def rule(x: ShapedArray, *, axis_name: tuple[Any, ...]) -> ShapedArray:
        _numeric(fname, x)
        return x

    return rule


# ---------------------------------------------------------------------------
# psum
# ---------------------------------------------------------------------------

psum_p = register(_Collective("psum"), _impl("psum"), _same_abstract("psum"))


def psum(x: Any, axis_name: Any) -> Any:
    """Sum ``x`` (an array or a pytree of arrays) over the examples of the named axis
    (or tuple of axes) of the enclosing ``vmap(..., axis_name=...)``; every example gets
    the sum. A value that is the same for every example is multiplied by the axis size
    (``psum(1, "i")`` is the size). Booleans are counted (int64).

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: ft.lax.psum(x, "i"), axis_name="i")(np.arange(3.0))
    Array([3., 3., 3.])
    """
    names = _names("psum", axis_name)

    def leaf(v: Any) -> Any:
        v = _operand("psum", v)
        aval = core.get_aval(v)
        _numeric("psum", aval)
        if aval.dtype == np.bool_:
            v = base.convert_element_type(v, np.dtype(np.int64))
        return psum_p.bind(v, axis_name=names) if names else v

    return tree_map(leaf, x)


def _psum_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, trace: Any, axis_name: tuple[Any, ...]
) -> tuple[Any, int | None]:
    (x,), (d,) = vals, bdims
    if trace.axis_name not in axis_name:  # another axis: computed below, batch dim kept
        return psum_p.bind(x, axis_name=axis_name), d
    out = _scaled(x, trace.axis_size) if d is None else base.reduce_sum(x, (d,))
    rest = tuple(n for n in axis_name if n != trace.axis_name)
    return (psum_p.bind(out, axis_name=rest) if rest else out), None


def _psum_transpose(ct: Any, x: Any, *, axis_name: tuple[Any, ...]) -> list[Any]:
    return [psum_p.bind(ct, axis_name=axis_name)]


ad.deflinear2(psum_p, _psum_transpose)
batching.batching_rules[psum_p] = _psum_batch
batching.rules_with_trace.add(psum_p)
spmd.register_ops(
    psum=lambda x, names: psum_p.bind(x, axis_name=names),
    scale=lambda x, f: base.mul(x, base.full_like(x, f)),
)
spmd.collectives[psum_p] = False


def pmean(x: Any, axis_name: Any) -> Any:
    """The mean of ``x`` (an array or a pytree) over the examples of the named axis (or
    axes): ``psum`` divided by the number of examples. Integers and booleans give
    float64.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: x - ft.lax.pmean(x, "i"), axis_name="i")(np.arange(3.0))
    Array([-1.,  0.,  1.])
    """
    names = _names("pmean", axis_name)
    n = int(np.prod(_sizes("pmean", names), dtype=np.int64))

    def leaf(v: Any) -> Any:
        v = _operand("pmean", v)
        aval = core.get_aval(v)
        _numeric("pmean", aval)
        if aval.dtype.kind in "biu":
            v = base.convert_element_type(v, np.dtype(np.float64))
        if not names:
            return v
        return base.div(psum_p.bind(v, axis_name=names), base.full_like(v, n))

    return tree_map(leaf, x)


# ---------------------------------------------------------------------------
# pmax, pmin
# ---------------------------------------------------------------------------


def _extremum(name: str, reduce: Any) -> Primitive:
    p = register(_Collective(name), _impl(name), _same_abstract(name))

    def batch(
        vals: Sequence[Any], bdims: Sequence[int | None], *, trace: Any, axis_name: tuple[Any, ...]
    ) -> tuple[Any, int | None]:
        (x,), (d,) = vals, bdims
        if trace.axis_name not in axis_name:
            return p.bind(x, axis_name=axis_name), d
        out = x if d is None else reduce(x, (d,))
        rest = tuple(n for n in axis_name if n != trace.axis_name)
        return (p.bind(out, axis_name=rest) if rest else out), None

    def jvp(
        primals: Sequence[Any], tangents: Sequence[Any], *, axis_name: tuple[Any, ...]
    ) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = p.bind(x, axis_name=axis_name)
        if type(t) is Zero:
            return out, Zero.from_primal(out)
        # the tangent of the examples that tie for the extremum, averaged
        hit = base.convert_element_type(ew.eq(x, out), core.get_aval(t).dtype)
        num = psum_p.bind(base.mul(t, hit), axis_name=axis_name)
        return out, base.div(num, psum_p.bind(hit, axis_name=axis_name))

    batching.batching_rules[p] = batch
    batching.rules_with_trace.add(p)
    ad.jvp_rules[p] = jvp
    return p


pmax_p = _extremum("pmax", reduce_max)
pmin_p = _extremum("pmin", reduce_min)
spmd.collectives.update({pmax_p: False, pmin_p: False})


def _extremum_fn(fname: str, p: Primitive) -> Any:
    def fn(x: Any, axis_name: Any) -> Any:
        names = _names(fname, axis_name)

        def leaf(v: Any) -> Any:
            v = _operand(fname, v)
            _numeric(fname, core.get_aval(v))
            return p.bind(v, axis_name=names) if names else v

        return tree_map(leaf, x)

    return fn


pmax = _extremum_fn("pmax", pmax_p)
pmax.__name__ = pmax.__qualname__ = "pmax"
pmax.__doc__ = """The maximum of ``x`` (an array or a pytree) over the examples of the
named axis (or axes), elementwise; every example gets it. Its derivative goes to the
examples that attain the maximum, split evenly among ties.

>>> import functrace as ft, numpy as np
>>> ft.vmap(lambda x: ft.lax.pmax(x, "i"), axis_name="i")(np.array([1.0, 3.0, 2.0]))
Array([3., 3., 3.])
"""
pmin = _extremum_fn("pmin", pmin_p)
pmin.__name__ = pmin.__qualname__ = "pmin"
pmin.__doc__ = """The minimum of ``x`` (an array or a pytree) over the examples of the
named axis (or axes), elementwise; every example gets it. Its derivative goes to the
examples that attain the minimum, split evenly among ties.
"""


# ---------------------------------------------------------------------------
# axis_index
# ---------------------------------------------------------------------------

_INDEX_DTYPE = np.dtype(np.int32)


def _axis_index_abstract(*, axis_name: tuple[Any, ...]) -> ShapedArray:
    return ShapedArray((), _INDEX_DTYPE)


axis_index_p = register(_Collective("axis_index"), _impl("axis_index"), _axis_index_abstract)


def _axis_index_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, trace: Any, axis_name: tuple[Any, ...]
) -> tuple[Any, int | None]:
    if trace.axis_name != axis_name[0]:
        return axis_index_p.bind(axis_name=axis_name), None
    if trace.axis_from_rule and not trace.indexed:
        # A rule that decides which body outputs are batched from the body's batched
        # inputs only (custom rules, checkpoints): an index made inside the body is not
        # one of them. scan, while_loop and cond take it into account.
        raise NotImplementedError(
            f"axis_index: expected to be called directly in the function of "
            f"vmap(..., axis_name={axis_name[0]!r}) or in a loop or branch there, got a "
            f"call inside a custom rule or checkpoint under that vmap, which is not supported. "
            f"Compute i = lax.axis_index({axis_name[0]!r}) outside it and pass i in."
        )
    return iota(_INDEX_DTYPE, trace.axis_size), 0


batching.batching_rules[axis_index_p] = _axis_index_batch
batching.rules_with_trace.add(axis_index_p)
ad.defjvp_zero(axis_index_p)
spmd.collectives[axis_index_p] = True


def axis_index(axis_name: Any) -> Any:
    """The position (int32) of the current example along the named axis of the enclosing
    ``vmap(..., axis_name=...)``; for a tuple of names, the row-major position over them.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: ft.lax.axis_index("i"), axis_name="i")(np.zeros(3))
    Array([0, 1, 2], dtype=int32)
    """
    names = _names("axis_index", axis_name)
    if not names:
        return np.int32(0)
    sizes = _sizes("axis_index", names)
    out: Any = None
    for n, size in zip(names, sizes):
        i = axis_index_p.bind(axis_name=(n,))
        out = i if out is None else ew.add(_scaled(out, size), i)
    return out


# ---------------------------------------------------------------------------
# all_gather
# ---------------------------------------------------------------------------


def _all_gather_abstract(
    x: ShapedArray, *, axis_name: tuple[Any, ...], axis: int, tiled: bool, axis_size: int
) -> ShapedArray:
    s = x.shape
    if tiled:
        if not 0 <= axis < len(s):
            raise ValueError(
                f"all_gather: expected axis in [{-len(s)}, {len(s)}) for tiled=True and an "
                f"operand of shape {s}, got {axis}."
            )
        return x.update(shape=s[:axis] + (axis_size * s[axis],) + s[axis + 1 :])
    return x.update(shape=s[:axis] + (axis_size,) + s[axis:])


all_gather_p = register(_Collective("all_gather"), _impl("all_gather"), _all_gather_abstract)


def _gathered(x: Any, d: int | None, size: int, axis: int, tiled: bool) -> Any:
    """The examples of ``x`` (batch dim ``d``) stacked at ``axis`` (or concatenated)."""
    g = batching.bdim_at(x, d, size, axis)
    if not tiled:
        return g
    s = core.get_aval(g).shape
    return base.reshape(g, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2 :])


def _all_gather_batch(
    vals: Sequence[Any],
    bdims: Sequence[int | None],
    *,
    trace: Any,
    axis_name: tuple[Any, ...],
    axis: int,
    tiled: bool,
    axis_size: int,
) -> tuple[Any, int | None]:
    (x,), (d,) = vals, bdims
    if trace.axis_name != axis_name[0]:
        if d is None:
            return all_gather_p.bind(
                x, axis_name=axis_name, axis=axis, tiled=tiled, axis_size=axis_size
            ), None
        x = batching.moveaxis(x, d, 0)
        out = all_gather_p.bind(
            x, axis_name=axis_name, axis=axis + 1, tiled=tiled, axis_size=axis_size
        )
        return out, 0
    out = _gathered(x, d, trace.axis_size, axis, tiled)
    if trace.vma:  # JAX types the result as varying in shard_map bodies (check_vma)
        return batching.broadcast_batch(out, trace.axis_size, 0), 0
    return out, None


def _own_part(total: Any, axis_name: tuple[Any, ...], axis: int, tiled: bool, size: int) -> Any:
    """This example's part of ``total`` along ``axis`` (of length ``size``, or of ``size``
    chunks with ``tiled``): a one-hot sum at ``axis_index``, linear in ``total``."""
    s = list(core.get_aval(total).shape)
    if tiled:
        s = s[:axis] + [size, s[axis] // size] + s[axis + 1 :]
        total = base.reshape(total, tuple(s))
    hit = ew.eq(
        iota(_INDEX_DTYPE, size),
        base.broadcast_in_dim(axis_index_p.bind(axis_name=axis_name), (size,), ()),
    )
    onehot = base.broadcast_in_dim(
        base.convert_element_type(hit, core.get_aval(total).dtype), tuple(s), (axis,)
    )
    return base.reduce_sum(base.mul(total, onehot), (axis,))


def _all_gather_transpose(
    ct: Any, x: Any, *, axis_name: tuple[Any, ...], axis: int, tiled: bool, axis_size: int
) -> list[Any]:
    # Example k's part of every example's gathered cotangent, summed (a psum_scatter).
    total = psum_p.bind(ct, axis_name=axis_name)
    return [_own_part(total, axis_name, axis, tiled, axis_size)]


ad.deflinear2(all_gather_p, _all_gather_transpose)
spmd.collectives[all_gather_p] = True
batching.batching_rules[all_gather_p] = _all_gather_batch
batching.rules_with_trace.add(all_gather_p)


def all_gather(x: Any, axis_name: Any, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every example's ``x`` (an array or a pytree), gathered over the named axis of the
    enclosing ``vmap(..., axis_name=...)``: stacked along a new axis ``axis`` of size the
    axis size, or with ``tiled=True`` concatenated along the existing axis ``axis``.
    Every example gets the whole gathered array.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: ft.lax.all_gather(x, "i"), axis_name="i")(np.arange(2.0))
    Array([[0., 1.],
           [0., 1.]])
    """
    names = _names("all_gather", axis_name)
    if len(names) != 1:
        raise ValueError(
            f"all_gather: expected one axis name, got {axis_name!r}. Gather over one "
            f"axis at a time."
        )
    if isinstance(tiled, Tracer) or not isinstance(tiled, (bool, np.bool_)):
        raise TypeError(f"all_gather: expected tiled to be a bool, got {tiled!r}.")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"all_gather: expected axis to be an int, got {axis!r}.")
    (size,) = _sizes("all_gather", names)

    def leaf(v: Any) -> Any:
        v = _operand("all_gather", v)
        nd = core.get_aval(v).ndim
        hi = nd if tiled else nd + 1
        if not -hi <= int(axis) < hi:
            raise ValueError(
                f"all_gather: expected axis in [{-hi}, {hi}) for an operand of shape "
                f"{core.get_aval(v).shape}{' with tiled=True' if tiled else ''}, got {axis}."
            )
        return all_gather_p.bind(
            v, axis_name=names, axis=int(axis) % hi, tiled=bool(tiled), axis_size=size
        )

    return tree_map(leaf, x)


# ---------------------------------------------------------------------------
# psum_scatter, ppermute: written with the primitives above (their rules follow)
# ---------------------------------------------------------------------------


def _one_name(fname: str, axis_name: Any) -> tuple[tuple[Any, ...], int]:
    names = _names(fname, axis_name)
    if len(names) != 1:
        raise ValueError(
            f"{fname}: expected one axis name, got {axis_name!r}. Use one axis at a time."
        )
    (size,) = _sizes(fname, names)
    return names, size


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0, tiled: bool = False) -> Any:
    """``psum`` of ``x`` over the named axis, of which example ``k`` keeps only its part
    along ``scatter_dimension``: index ``k`` of that dimension (which must have the axis
    size; it is removed), or with ``tiled=True`` the ``k``-th of as many equal chunks as
    examples. The transpose of ``all_gather``.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: ft.lax.psum_scatter(x, "i"), axis_name="i")(np.eye(2) + 1)
    Array([3., 3.])
    """
    names, size = _one_name("psum_scatter", axis_name)
    if isinstance(tiled, Tracer) or not isinstance(tiled, (bool, np.bool_)):
        raise TypeError(f"psum_scatter: expected tiled to be a bool, got {tiled!r}.")
    if isinstance(scatter_dimension, bool) or not isinstance(scatter_dimension, (int, np.integer)):
        raise TypeError(
            f"psum_scatter: expected scatter_dimension to be an int, got {scatter_dimension!r}."
        )

    def leaf(v: Any) -> Any:
        v = _operand("psum_scatter", v)
        shape = core.get_aval(v).shape
        nd = len(shape)
        if not -nd <= int(scatter_dimension) < nd:
            raise ValueError(
                f"psum_scatter: expected scatter_dimension in [{-nd}, {nd}) for an operand "
                f"of shape {shape}, got {scatter_dimension}."
            )
        d = int(scatter_dimension) % nd
        ok = shape[d] % size == 0 if tiled else shape[d] == size
        if not ok:
            want = f"a multiple of the axis size {size}" if tiled else f"the axis size {size}"
            raise ValueError(
                f"psum_scatter: expected dimension {d} of the operand to be {want}, got "
                f"shape {shape}."
            )
        return _own_part(psum(v, names), names, d, bool(tiled), size)

    return tree_map(leaf, x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each example's ``x`` along the named axis by the pairs ``(source,
    destination)`` of ``perm`` (each source and each destination at most once): example
    ``d`` receives the ``x`` of example ``s``; an example that no pair sends to gets
    zeros. Linear, its transpose the inverse permutation.

    >>> import functrace as ft, numpy as np
    >>> shift = lambda x: ft.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ft.vmap(shift, axis_name="i")(np.array([1.0, 2.0, 3.0]))
    Array([3., 1., 2.])
    """
    names, size = _one_name("ppermute", axis_name)
    try:
        pairs = [(int(operator_index(s)), int(operator_index(d))) for s, d in perm]
    except (TypeError, ValueError):
        raise TypeError(
            f"ppermute: expected perm to be a sequence of (source, destination) pairs of "
            f"ints, got {perm!r}."
        ) from None
    for s, d in pairs:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(
                f"ppermute: expected indices in [0, {size}) (the size of axis "
                f"{names[0]!r}), got the pair ({s}, {d})."
            )
    if len({s for s, _ in pairs}) != len(pairs) or len({d for _, d in pairs}) != len(pairs):
        raise ValueError(
            f"ppermute: expected each source and each destination at most once, got {perm!r}."
        )
    table = np.zeros((size, size))
    for s, d in pairs:
        table[d, s] = 1.0

    def leaf(v: Any) -> Any:
        v = _operand("ppermute", v)
        aval = core.get_aval(v)
        if aval.dtype.kind not in "iufc":
            raise TypeError(f"ppermute: expected a numeric operand, got {aval.dtype.name}.")
        gathered = all_gather(v, names)  # (size, *shape): every example's x
        w = _own_part(table.astype(aval.dtype), names, 0, False, size)  # this row of table
        wb = base.broadcast_in_dim(w, (size, *aval.shape), (0,))
        return base.reduce_sum(base.mul(gathered, wb), (0,))

    return tree_map(leaf, x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Example ``i`` of the named axis gets example ``perm[i]``'s ``x`` (JAX's
    ``pshuffle``: ``ppermute`` with the permutation written as sources; ``perm`` must
    be a permutation of the axis's indices).

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda v: ft.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(np.arange(3.0))
    Array([2., 0., 1.])
    """
    names, size = _one_name("pshuffle", axis_name)
    try:
        sources = [int(operator_index(s)) for s in perm]
    except (TypeError, ValueError):
        raise TypeError(
            f"pshuffle: expected perm to be a sequence of ints, got {perm!r}."
        ) from None
    if sorted(sources) != list(range(size)):
        raise ValueError(
            f"pshuffle: expected perm to be a permutation of range({size}) (the size of "
            f"axis {names[0]!r}), got {sources}."
        )
    return ppermute(x, names[0], [(s, d) for d, s in enumerate(sources)])


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Example ``source``'s ``x`` on every example of the named axis (JAX's
    ``pbroadcast``: the ``psum`` of ``x`` kept at ``source`` and zero elsewhere, so its
    derivative reaches example ``source`` only).

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda v: ft.lax.pbroadcast(v, "i", 1), axis_name="i")(np.arange(3.0))
    Array([1., 1., 1.])
    """
    fname = "pbroadcast"
    names, size = _one_name(fname, axis_name)
    src = _int_arg(fname, "source", source)
    if not 0 <= src < size:
        raise ValueError(
            f"{fname}: expected source in [0, {size}) (the size of axis {names[0]!r}), got {src}."
        )

    def leaf(v: Any) -> Any:
        v = _operand(fname, v)
        here = ew.eq(axis_index_p.bind(axis_name=names), np.int32(src))
        kept = base.select_n(here, base.full_like(v, 0), v)
        return psum(kept, names[0])

    return tree_map(leaf, x)


_PCAST_TO = ("varying", "reduced", "unreduced")

pvary_p = register(_Collective("pvary"), _impl("pcast"), _same_abstract("pcast"))


def _pvary_batch(
    vals: Sequence[Any], bdims: Sequence[int | None], *, trace: Any, axis_name: tuple[Any, ...]
) -> tuple[Any, int | None]:
    (x,), (d,) = vals, bdims
    if trace.axis_name not in axis_name:  # another axis: cast below, batch dim kept
        return pvary_p.bind(x, axis_name=axis_name), d
    rest = tuple(n for n in axis_name if n != trace.axis_name)
    return (pvary_p.bind(x, axis_name=rest) if rest else x), d


def _pvary_transpose(ct: Any, x: Any, *, axis_name: tuple[Any, ...]) -> list[Any]:
    # Over a shard_map(check_vma=True) mesh axis the cotangent passes through: the
    # sum over the shards is made where reverse mode ends (interpreters/spmd.py), for every
    # value the same on every shard, cast or not.
    names = tuple(n for n in axis_name if not _vma_axis(n))
    return [psum_p.bind(ct, axis_name=names) if names else ct]


def _vma_axis(name: Any) -> bool:
    t = batching.axis_trace(name)
    return t is not None and t.vma


ad.deflinear2(pvary_p, _pvary_transpose)
spmd.collectives[pvary_p] = True
batching.batching_rules[pvary_p] = _pvary_batch
batching.rules_with_trace.add(pvary_p)


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """``x`` cast to vary over the named axes (JAX's ``pcast(x, axis_name,
    to="varying")``): the same values, and a derivative summed over the examples.

    In JAX's ``shard_map`` a value that is the same on every shard meets per-shard
    values through this cast, whose transpose is ``psum``; JAX inserts it by itself
    where such values meet. functrace computes the same: the values pass through
    unchanged, and ``grad`` inside the function sums the cotangent of the cast value
    over the examples (under a named ``vmap`` the cast's transpose is ``psum``; in a
    ``shard_map(check_vma=True)`` body reverse mode sums every replicated value's
    cotangent where it ends, cast or not: see the ``shard_map`` notes). A cast of a
    value that already varies is accepted (JAX refuses it). ``to="reduced"``/
    ``"unreduced"`` (JAX's reduced shardings, which functrace does not have) are a
    ``NotImplementedError``; an unbound name is a ``NameError``.

    >>> import functrace as ft, numpy as np
    >>> f = lambda w, x: ft.numpy.sum(ft.lax.pcast(w, "i", to="varying") * x)
    >>> ft.vmap(ft.grad(f), in_axes=(None, 0), axis_name="i")(1.0, np.arange(3.0))
    Array([3., 3., 3.])
    """
    fname = "pcast"
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(
            f"{fname}: expected an axis name or a tuple of them, got a set {axis_name!r}."
        )
    if to not in _PCAST_TO:
        raise ValueError(f"{fname}: expected to= one of {_PCAST_TO}, got {to!r}.")
    if isinstance(axis_name, (tuple, list)) and not axis_name:
        return x
    names = _names(fname, axis_name)
    _sizes(fname, names)
    if to != "varying":
        raise NotImplementedError(
            f"{fname}: to={to!r} casts to JAX's reduced shardings, which functrace does "
            f"not have; only to='varying' is supported."
        )

    def leaf(v: Any) -> Any:
        v = _operand(fname, v)
        _numeric(fname, core.get_aval(v))
        return pvary_p.bind(v, axis_name=names)

    return tree_map(leaf, x)


# ---------------------------------------------------------------------------
# axis_size, all_to_all, pswapaxes
# ---------------------------------------------------------------------------


def axis_size(axis_name: Any) -> int:
    """The size (a Python int) of the named axis of the enclosing
    ``vmap(..., axis_name=...)``; for a tuple of names, the product of their sizes.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: x * ft.lax.axis_size("i"), axis_name="i")(np.ones(3))
    Array([3., 3., 3.])
    """
    names = _names("axis_size", axis_name)
    return int(np.prod(_sizes("axis_size", names), dtype=np.int64))


def _no_groups(fname: str, axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(
            f"{fname}: axis_index_groups is not supported (got {axis_index_groups!r}); "
            f"pass None to exchange over the whole axis."
        )


def _int_arg(fname: str, what: str, v: Any) -> int:
    if isinstance(v, (bool, np.bool_, Tracer)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fname}: expected {what} to be an int, got {v!r}.")
    return int(v)


def _own_index(total: Any, axis_name: tuple[Any, ...], axis: int) -> Any:
    """``total`` at this example's ``axis_index`` along ``axis`` (the axis removed)."""
    return gather(total, [axis_index_p.bind(axis_name=axis_name)], (axis,), "clip")


def all_to_all(
    x: Any,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Exchange parts of ``x`` (an array or a pytree) among the examples of the named
    axis: example ``k`` gets part ``k`` of every example's ``x`` along ``split_axis``
    (index ``k``, that axis having the axis size; or with ``tiled=True`` the ``k``-th of
    as many equal chunks as examples), stacked in example order along a new axis
    ``concat_axis`` of the result (or concatenated along ``concat_axis``, with
    ``tiled=True``). ``axis_index_groups`` is not supported.

    >>> import functrace as ft, numpy as np
    >>> f = lambda r: ft.lax.all_to_all(r, "i", 0, 0)
    >>> ft.vmap(f, axis_name="i")(np.arange(4.0).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]])
    """
    fname = "all_to_all"
    _no_groups(fname, axis_index_groups)
    names, size = _one_name(fname, axis_name)
    if isinstance(tiled, Tracer) or not isinstance(tiled, (bool, np.bool_)):
        raise TypeError(f"{fname}: expected tiled to be a bool, got {tiled!r}.")
    split = _int_arg(fname, "split_axis", split_axis)
    concat = _int_arg(fname, "concat_axis", concat_axis)

    def leaf(v: Any) -> Any:
        v = _operand(fname, v)
        shape = core.get_aval(v).shape
        nd = len(shape)
        if not -nd <= split < nd:
            raise ValueError(
                f"{fname}: expected split_axis in [{-nd}, {nd}) for an operand of shape "
                f"{shape}, got {split}."
            )
        s = split % nd
        if not -nd <= concat < nd:
            raise ValueError(
                f"{fname}: expected concat_axis in [{-nd}, {nd}) for an operand of shape "
                f"{shape}, got {concat}."
            )
        c = concat % nd
        ok = shape[s] % size == 0 if tiled else shape[s] == size
        if not ok:
            want = f"a multiple of the axis size {size}" if tiled else f"the axis size {size}"
            raise ValueError(
                f"{fname}: expected dimension {s} (split_axis) of the operand to be {want}, "
                f"got shape {shape}."
            )
        g = all_gather(v, names)  # (size, *shape): every example's x
        if not tiled:
            mine = _own_index(g, names, s + 1)  # (size, *shape without s)
            return batching.moveaxis(mine, 0, c)
        chunk = shape[s] // size
        parts = base.reshape(g, (size, *shape[:s], size, chunk, *shape[s + 1 :]))
        mine = _own_index(parts, names, s + 1)  # (size, *shape with s of length chunk)
        mine = batching.moveaxis(mine, 0, c)  # the examples just before concat's dim
        out = list(core.get_aval(mine).shape)
        merged = out[:c] + [out[c] * out[c + 1]] + out[c + 2 :]
        return base.reshape(mine, tuple(merged))

    return tree_map(leaf, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with the axis ``axis`` of ``x`` (whose size must be the axis
    size): ``all_to_all(x, axis_name, axis, axis)``.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda r: ft.lax.pswapaxes(r, "i", 0), axis_name="i")(np.eye(2) + [0, 1])
    Array([[1., 0.],
           [1., 2.]])
    """
    _no_groups("pswapaxes", axis_index_groups)
    return all_to_all(x, axis_name, axis, axis)


__all__ = [
    "all_gather",
    "all_to_all",
    "all_gather_p",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pbroadcast",
    "pcast",
    "pvary_p",
    "pshuffle",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "ppermute",
    "psum",
    "psum_p",
    "psum_scatter",
    "pswapaxes",
]
