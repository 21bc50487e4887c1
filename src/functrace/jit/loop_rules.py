"""Native-loop forms of the non-elementwise primitives: the ``native`` field of their
:class:`~functrace.interpreters.numba_rules.DriverRule` (registered with the driver
forms in ``driver_rules.py``).

Each rule takes the :class:`~functrace.jit.loops.Block` being emitted and the equation,
writes statements with ``b.fn.emit(depth, line)`` and returns the names of the
results (arrays of the static shapes, or scalar locals for 0-d values); it raises
:class:`~functrace.jit.loops.Decline` for a case it does not handle (the loop keeps
its Python form). View rules (``broadcast_in_dim``, ``transpose``, ``rev``,
``gather`` with scalar indices) emit nothing: they record how readers index the
operand (``b.add_view``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import lax
from functrace.interpreters.numba_rules import EmitContext, dtype_ctor, numba_emitters
from functrace.ir import JaxprEqn
from functrace.jit.loops import (
    MAX_DOT_FMAS,
    Atom,
    Block,
    Decline,
    IndexMap,
    identity_value,
    scalar_lit,
    scan_loop,
    subscript,
    while_loop,
)

Rule = Callable[[Block, JaxprEqn], list[str]]

UNROLL = 4  # partial sums per dot product (a contraction of at least 8 terms)


def broadcast_in_dim_view(b: Block, e: JaxprEqn) -> None:
    (x,) = e.inputs
    dims = tuple(e.params["broadcast_dimensions"])
    sizes = x.aval.shape

    def index_map(idx: list[str]) -> list[str]:
        return ["0" if n == 1 else idx[od] for n, od in zip(sizes, dims, strict=True)]

    lx = b.contiguous_axis(x) if sizes else None
    b.add_view(e, index_map, dims[lx] if lx is not None and sizes[lx] != 1 else None)


def transpose_view(b: Block, e: JaxprEqn) -> None:
    perm = tuple(e.params["permutation"])

    def index_map(idx: list[str]) -> list[str]:
        got = [""] * len(perm)
        for j, p in enumerate(perm):
            got[p] = idx[j]
        return got

    lx = b.contiguous_axis(e.inputs[0])
    b.add_view(e, index_map, perm.index(lx) if lx is not None else None)


def rev_view(b: Block, e: JaxprEqn) -> None:
    dims = set(e.params["dimensions"])
    shape = e.inputs[0].aval.shape

    def index_map(idx: list[str]) -> list[str]:
        # parenthesized: ``a`` may be a composite index (a slice's ``start + step * i``)
        return [f"{shape[k] - 1} - ({a})" if k in dims else a for k, a in enumerate(idx)]

    b.add_view(e, index_map, b.contiguous_axis(e.inputs[0]))


def _positions(b: Block, e: JaxprEqn) -> list[str]:
    """Scalar gather/scatter indices normalized like the impl: negatives wrap once, then
    ``mode="clip"`` clamps and ``mode="raise"`` raises IndexError."""
    x, axes, mode = e.inputs[0], e.params["axes"], e.params["mode"]
    name = e.primitive.name
    indices = e.inputs[1:] if name == "gather" else e.inputs[2:]
    pos = []
    for a, idx in zip(axes, indices, strict=True):
        dim, dt = x.aval.shape[a], idx.aval.dtype
        if idx.aval.shape != () or dim == 0 or dt.kind not in "iu" or mode not in ("clip", "raise"):
            raise Decline  # index arrays stay with the impl
        p, i = b.fn.fresh("p"), b.scalar(idx)
        if dt.kind == "u" and np.iinfo(dt).max >= dim:
            b.fn.emit(b.depth, f"{p} = np.int64(min({i}, {scalar_lit(dt, dim)}))")
        else:
            b.fn.emit(b.depth, f"{p} = np.int64({i})")
        if dt.kind == "i":
            b.fn.emit(b.depth, f"if {p} < 0:")
            b.fn.emit(b.depth + 1, f"{p} += {dim}")
        if mode == "clip":
            b.fn.emit(b.depth, f"{p} = min(max({p}, 0), {dim - 1})")
        else:
            b.fn.emit(b.depth, f"if {p} < 0 or {p} >= {dim}:")
            msg = (
                f"{name}: expected indices in [-{dim}, {dim}) for axis {a} of size {dim}, "
                f"got an index out of range. Fix the index, or use mode='clip' to clamp "
                f"out-of-range indices."
            )
            b.fn.emit(b.depth + 1, f"raise IndexError({msg!r})")
        pos.append(p)
    return pos


def _with_positions(axes: tuple[int, ...], pos: list[str], ndim: int) -> IndexMap:
    """Index of the operand: ``pos`` on ``axes``, the given indices on the other axes."""

    def index_map(idx: list[str]) -> list[str]:
        rest = iter(idx)
        return [pos[axes.index(k)] if k in axes else next(rest) for k in range(ndim)]

    return index_map


def gather_view(b: Block, e: JaxprEqn) -> None:
    x, axes = e.inputs[0], tuple(e.params["axes"])
    pos = _positions(b, e)
    lx = b.contiguous_axis(x)
    last = None if lx is None or lx in axes else lx - sum(a < lx for a in axes)
    b.add_view(e, _with_positions(axes, pos, x.aval.ndim), last, x)


def alias(b: Block, e: JaxprEqn) -> list[str]:
    return [b.value(e.inputs[0])]


def reshape(b: Block, e: JaxprEqn) -> list[str]:
    (x,), out = e.inputs, e.out_binders[0]
    fn, shape = b.fn, out.aval.shape
    if x.aval.shape == shape:
        return [b.value(x)]
    if x.aval.shape == ():
        name = fn.alloc(b.depth, out.aval)
        fn.emit(b.depth, f"{name}[{', '.join('0' * len(shape))}] = {b.scalar(x)}")
        return [name]
    src = b.value(x)
    if shape == ():
        name = fn.fresh("v")
        fn.emit(b.depth, f"{name} = {src}[{', '.join('0' * x.aval.ndim)}]")
        return [name]
    name = fn.fresh("v")
    fn.emit(b.depth, f"{name} = {src}.reshape({tuple(shape)})")
    if src in fn.ro:
        fn.ro.add(name)
    return [name]


def _copy_loop(b: Block, e: JaxprEqn, in_index: IndexMap) -> list[str]:
    """``out[idx] = x[in_index(idx)]`` over the output shape."""
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    idx, d = b.fn.loops(out.aval.shape, b.depth)
    b.fn.emit(d, f"{subscript(name, idx)} = {b.elem_at(e.inputs[0], in_index(idx))}")
    return [name]


def slice_(b: Block, e: JaxprEqn) -> list[str]:
    starts = e.params["start_indices"]
    steps = e.params.get("strides") or (1,) * len(starts)
    if not starts:
        return [b.value(e.inputs[0])]
    return _copy_loop(
        b,
        e,
        lambda idx: [
            f"{s} + {k} * ({a})" if k != 1 else f"{s} + {a}"
            for s, k, a in zip(starts, steps, idx, strict=True)
        ],
    )


def _clamped_starts(b: Block, starts: tuple[Atom, ...], shape: Any, sizes: Any) -> list[str]:
    out = []
    for s, dim, n in zip(starts, shape, sizes, strict=True):
        if s.aval.dtype.kind not in "iu" or s.aval.dtype == np.uint64:
            raise Decline  # uint64 starts past int64 would wrap: the impl clamps them
        name = b.fn.fresh("st")
        b.fn.emit(b.depth, f"{name} = min(max(np.int64({b.scalar(s)}), 0), {dim - n})")
        out.append(name)
    return out


def dynamic_slice(b: Block, e: JaxprEqn) -> list[str]:
    x, *starts = e.inputs
    sizes = e.params["slice_sizes"]
    if not x.aval.shape:
        return [b.value(x)]
    st = _clamped_starts(b, tuple(starts), x.aval.shape, sizes)
    return _copy_loop(b, e, lambda idx: [f"{s} + {a}" for s, a in zip(st, idx, strict=True)])


def dynamic_update_slice(b: Block, e: JaxprEqn) -> list[str]:
    x, u, *starts = e.inputs
    if not x.aval.shape:
        return [b.value(u)]
    st = _clamped_starts(b, tuple(starts), x.aval.shape, u.aval.shape)
    name = b.fn.fresh("v")
    b.fn.emit(b.depth, f"{name} = {b.value(x)}.copy()")
    idx, d = b.fn.loops(u.aval.shape, b.depth)
    dst = [f"{s} + {a}" for s, a in zip(st, idx, strict=True)]
    b.fn.emit(d, f"{subscript(name, dst)} = {b.elem_at(u, idx)}")
    return [name]


def _scatter(op: str | None) -> Rule:
    def rule(b: Block, e: JaxprEqn) -> list[str]:
        x, upd = e.inputs[0], e.inputs[1]
        out = e.out_binders[0]
        dt = out.aval.dtype
        if not x.aval.shape or (dt.kind == "b" and op in ("sum", "prod")):
            raise Decline
        axes = tuple(e.params["axes"])
        pos = _positions(b, e)
        fn = b.fn
        name = fn.alloc(b.depth, out.aval)
        idx, d = fn.loops(out.aval.shape, b.depth)
        fn.emit(d, f"{subscript(name, idx)} = {b.elem_at(x, idx)}")
        idx, d = fn.loops(upd.aval.shape, b.depth)
        dst = subscript(name, _with_positions(axes, pos, x.aval.ndim)(idx))
        new = b.elem_at(upd, idx)
        if op == "sum":
            new = f"{dtype_ctor(dt)}({dst} + {new})"
        elif op == "prod":
            new = f"{dtype_ctor(dt)}({dst} * {new})"
        elif op is not None:
            new = f"{dtype_ctor(dt)}({_pick(op == 'max', dt)(dst, new)})"
        fn.emit(d, f"{dst} = {new}")
        return [name]

    return rule


scatter = _scatter(None)
scatter_add = _scatter("sum")
scatter_mul = _scatter("prod")
scatter_max = _scatter("max")
scatter_min = _scatter("min")


def pad(b: Block, e: JaxprEqn) -> list[str]:
    (x, value), out = e.inputs, e.out_binders[0]
    config = e.params["padding_config"]
    fn = b.fn
    name = fn.alloc(b.depth, out.aval)
    idx, d = fn.loops(out.aval.shape, b.depth)
    fn.emit(d, f"{subscript(name, idx)} = {b.scalar(value)}")
    idx, d = fn.loops(x.aval.shape, b.depth)
    dst, checks = [], []
    for a, (lo, hi, interior), n in zip(idx, config, out.aval.shape, strict=True):
        q = f"{lo} + {a}" if interior == 0 else f"{lo} + {a} * {interior + 1}"
        dst.append(q)
        if lo < 0 or hi < 0:  # a negative lo/hi crops: skip the elements cut off
            checks.append(f"0 <= {q} < {n}")
    if checks:
        fn.emit(d, f"if {' and '.join(checks)}:")
        d += 1
    fn.emit(d, f"{subscript(name, dst)} = {b.elem_at(x, idx)}")
    return [name]


def concatenate(b: Block, e: JaxprEqn) -> list[str]:
    axis = e.params["dimension"]
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    off = 0
    for x in e.inputs:
        idx, d = b.fn.loops(x.aval.shape, b.depth)
        dst = [f"{off} + {a}" if k == axis else a for k, a in enumerate(idx)]
        b.fn.emit(d, f"{subscript(name, dst)} = {b.elem_at(x, idx)}")
        off += x.aval.shape[axis]
    return [name]


def iota(b: Block, e: JaxprEqn) -> list[str]:
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    idx, d = b.fn.loops(out.aval.shape, b.depth)
    b.fn.emit(
        d, f"{subscript(name, idx)} = {dtype_ctor(out.aval.dtype)}({idx[e.params['dimension']]})"
    )
    return [name]


def _reduce(
    b: Block,
    e: JaxprEqn,
    combine: Callable[[str, str], str],
    init: Any,
    acc_dtype: np.dtype | None = None,
) -> list[str]:
    """A reduction over ``axes``: accumulators (in ``acc_dtype``, default the output
    dtype) start at ``init`` and take every element in order."""
    (x,), out = e.inputs, e.out_binders[0]
    axes = set(e.params["axes"])
    fn = b.fn
    if x.aval.shape == ():
        return [b.value(x)]
    adt = acc_dtype or out.aval.dtype
    actor, start = dtype_ctor(adt), scalar_lit(adt, init)
    kept = [k for k in range(x.aval.ndim) if k not in axes]
    if out.aval.shape == ():
        acc = fn.fresh("acc")
        fn.emit(b.depth, f"{acc} = {start}")
        idx, d = fn.loops(x.aval.shape, b.depth)
        fn.emit(d, f"{acc} = {actor}({combine(acc, b.elem_at(x, idx))})")
        if adt == out.aval.dtype:
            return [acc]
        name = fn.fresh("v")
        fn.emit(b.depth, f"{name} = {dtype_ctor(out.aval.dtype)}({acc})")
        return [name]
    acc = fn.fresh("acc")
    fn.emit(b.depth, f"{acc} = np.empty({tuple(out.aval.shape)}, {actor})")
    idx, d = fn.loops(out.aval.shape, b.depth)
    fn.emit(d, f"{subscript(acc, idx)} = {start}")
    idx, d = fn.loops(x.aval.shape, b.depth)
    o = subscript(acc, [idx[k] for k in kept])
    fn.emit(d, f"{o} = {actor}({combine(o, b.elem_at(x, idx))})")
    if adt == out.aval.dtype:
        return [acc]
    name = fn.alloc(b.depth, out.aval)
    idx, d = fn.loops(out.aval.shape, b.depth)
    fn.emit(d, f"{subscript(name, idx)} = {dtype_ctor(out.aval.dtype)}({subscript(acc, idx)})")
    return [name]


def reduce_sum(b: Block, e: JaxprEqn) -> list[str]:
    dt = e.out_binders[0].aval.dtype
    if dt.kind == "b":
        raise Decline
    # float32 sums accumulate in float64: as accurate as NumPy's pairwise float32 sums
    acc = np.dtype(np.float64) if dt == np.float32 else None
    return _reduce(b, e, lambda a, x: f"{a} + {x}", 0, acc)


def reduce_prod(b: Block, e: JaxprEqn) -> list[str]:
    if e.out_binders[0].aval.dtype.kind == "b":
        raise Decline
    return _reduce(b, e, lambda a, x: f"{a} * {x}", 1)


def _pick(is_max: bool, dt: np.dtype) -> Callable[[str, str], str]:
    rule = numba_emitters[lax.max_p if is_max else lax.min_p]
    assert callable(rule)

    def combine(a: str, x: str) -> str:
        expr = rule(EmitContext((a, x), (dt, dt), dt, {}))
        if expr is None:
            raise Decline
        return expr

    return combine


def _extremum(is_max: bool) -> Rule:
    def rule(b: Block, e: JaxprEqn) -> list[str]:
        dt = e.out_binders[0].aval.dtype
        if dt.kind == "c":  # Numba does not order complex numbers (see _pick)
            raise Decline
        return _reduce(b, e, _pick(is_max, dt), identity_value(dt, is_max))

    return rule


reduce_max = _extremum(True)
reduce_min = _extremum(False)


def _along(b: Block, x: Atom, axis: int) -> tuple[list[str], int, Callable[[str], list[str]]]:
    """Loops over every axis of ``x`` but ``axis``: (their indices, the inner depth,
    position along ``axis`` -> full index)."""
    others = tuple(n for k, n in enumerate(x.aval.shape) if k != axis)
    idx, d = b.fn.loops(others, b.depth)

    def full(pos: str) -> list[str]:
        return [*idx[:axis], pos, *idx[axis:]]

    return idx, d, full


def _cumulative(op: str) -> Rule:
    def rule(b: Block, e: JaxprEqn) -> list[str]:
        (x,), out = e.inputs, e.out_binders[0]
        axis, reverse = e.params["axis"], e.params["reverse"]
        dt = out.aval.dtype
        if dt.kind == "b" and op in ("sum", "prod"):
            raise Decline
        combine = {
            "sum": lambda a, v: f"{a} + {v}",
            "prod": lambda a, v: f"{a} * {v}",
            "max": _pick(True, dt),
            "min": _pick(False, dt),
        }[op]
        fn, ctor, n = b.fn, dtype_ctor(dt), x.aval.shape[axis]
        name = fn.alloc(b.depth, out.aval)
        if n == 0:
            return [name]
        _, d, full = _along(b, x, axis)
        acc, k = fn.fresh("acc"), fn.fresh("c")
        first = str(n - 1) if reverse else "0"
        fn.emit(d, f"{acc} = {b.elem_at(x, full(first))}")
        fn.emit(d, f"{subscript(name, full(first))} = {acc}")
        fn.emit(d, f"for {k} in range(1, {n}):")
        pos = f"{n - 1} - {k}" if reverse else k
        fn.emit(d + 1, f"{acc} = {ctor}({combine(acc, b.elem_at(x, full(pos)))})")
        fn.emit(d + 1, f"{subscript(name, full(pos))} = {acc}")
        return [name]

    return rule


cumsum = _cumulative("sum")
cumprod = _cumulative("prod")
cummax = _cumulative("max")
cummin = _cumulative("min")


def _arg_extremum(is_max: bool) -> Rule:
    def rule(b: Block, e: JaxprEqn) -> list[str]:
        (x,), out = e.inputs, e.out_binders[0]
        axis = e.params["axis"]
        fn, n = b.fn, x.aval.shape[axis]
        name = fn.fresh("v") if not out.aval.shape else fn.alloc(b.depth, out.aval)
        idx, d, full = _along(b, x, axis)
        best, at, k, v = fn.fresh("best"), fn.fresh("at"), fn.fresh("c"), fn.fresh("x")
        fn.emit(d, f"{best} = {b.elem_at(x, full('0'))}")
        fn.emit(d, f"{at} = 0")
        fn.emit(d, f"for {k} in range(1, {n}):")
        fn.emit(d + 1, f"{v} = {b.elem_at(x, full(k))}")
        better = f"{v} {'>' if is_max else '<'} {best}"
        if x.aval.dtype.kind == "f":  # the first NaN wins, as in NumPy
            better = f"{best} == {best} and ({v} != {v} or {better})"
        fn.emit(d + 1, f"if {better}:")
        fn.emit(d + 2, f"{best}, {at} = {v}, {k}")
        fn.emit(d, f"{subscript(name, idx)} = {dtype_ctor(out.aval.dtype)}({at})")
        return [name]

    return rule


argmax = _arg_extremum(True)
argmin = _arg_extremum(False)


def dot_general(b: Block, e: JaxprEqn) -> list[str]:
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    x, y = e.inputs
    out = e.out_binders[0]
    dt = out.aval.dtype
    if dt.kind == "b":
        raise Decline
    csizes = [x.aval.shape[a] for a in lc]
    if out.aval.size * math.prod(csizes) > MAX_DOT_FMAS:
        raise Decline
    lf = [a for a in range(x.aval.ndim) if a not in lc and a not in lb]
    rf = [a for a in range(y.aval.ndim) if a not in rc and a not in rb]
    ctor = dtype_ctor(dt)
    pet = e.params.get("preferred_element_type")
    cast = (lambda s: f"{ctor}({s})") if pet is not None and pet != x.aval.dtype else (lambda s: s)
    fn = b.fn
    nb, nlf = len(lb), len(lf)

    def term(oidx: list[str], cidx: list[str]) -> str:
        def index(nd: int, batch: Any, contract: Any, free: Any, off: int) -> list[str]:
            got = [""] * nd
            for p, a in enumerate(batch):
                got[a] = oidx[p]
            for q, a in enumerate(contract):
                got[a] = cidx[q]
            for r, a in enumerate(free):
                got[a] = oidx[off + r]
            return got

        xi = b.elem_at(x, index(x.aval.ndim, lb, lc, lf, nb))
        yi = b.elem_at(y, index(y.aval.ndim, rb, rc, rf, nb + nlf))
        return f"{cast(xi)} * {cast(yi)}"

    zero = scalar_lit(dt, 0)
    shape = out.aval.shape
    strided = b.contiguous_axis(x) != lc[0] or b.contiguous_axis(y) != rc[0] if csizes else False
    if len(csizes) == 1 and shape and strided:
        # The contraction walks a non-last (strided) axis: add whole output rows per
        # contraction step instead, out[i, j] += x[k, i] * y[k, j], reading memory in order.
        name = fn.alloc(b.depth, out.aval)
        oidx, d = fn.loops(shape, b.depth)
        fn.emit(d, f"{subscript(name, oidx)} = {zero}")
        cidx, d = fn.loops(tuple(csizes), b.depth)
        oidx, d = fn.loops(shape, d)
        o = subscript(name, oidx)
        fn.emit(d, f"{o} = {ctor}({o} + {term(oidx, cidx)})")
        return [name]
    name = fn.fresh("acc") if shape == () else fn.alloc(b.depth, out.aval)
    oidx, d = fn.loops(shape, b.depth)
    acc = fn.fresh("acc") if shape else name
    if len(csizes) == 1 and csizes[0] >= 2 * UNROLL:
        # UNROLL independent partial sums: no serial chain of dependent additions
        k, main = csizes[0], csizes[0] - csizes[0] % UNROLL
        accs = [fn.fresh("acc") for _ in range(UNROLL)]
        fn.emit(d, f"{', '.join(accs)} = {', '.join([zero] * UNROLL)}")
        c = fn.fresh("c")
        fn.emit(d, f"for {c} in range(0, {main}, {UNROLL}):")
        for j, a in enumerate(accs):
            fn.emit(d + 1, f"{a} = {ctor}({a} + {term(oidx, [f'{c} + {j}' if j else c])})")
        if main < k:
            fn.emit(d, f"for {c} in range({main}, {k}):")
            fn.emit(d + 1, f"{accs[0]} = {ctor}({accs[0]} + {term(oidx, [c])})")
        pairs = f"{ctor}({accs[0]} + {accs[1]}) + {ctor}({accs[2]} + {accs[3]})"
        fn.emit(d, f"{acc} = {ctor}({pairs})")
    else:
        fn.emit(d, f"{acc} = {zero}")
        cidx, d2 = fn.loops(tuple(csizes), d)
        fn.emit(d2, f"{acc} = {ctor}({acc} + {term(oidx, cidx)})")
    if shape:
        fn.emit(d, f"{subscript(name, oidx)} = {acc}")
    return [name]


def cond(b: Block, e: JaxprEqn) -> list[str]:
    index, *ops = e.inputs
    branches = e.params["branches"]
    fn = b.fn
    opened = [fn.open(br) for br in branches]
    in_names = [b.value(x) for x in ops]
    outs = [fn.fresh("c") for _ in e.out_binders]
    ix = b.scalar(index)
    for k, (jaxpr, cnames) in enumerate(opened):
        if len(opened) == 1:
            head, d = None, b.depth
        elif k == 0:
            head, d = f"if {ix} <= 0:", b.depth + 1
        elif k == len(opened) - 1:
            head, d = "else:", b.depth + 1
        else:
            head, d = f"elif {ix} == {k}:", b.depth + 1
        if head is not None:
            fn.emit(b.depth, head)
        res = fn.block(jaxpr, cnames + in_names, d)
        for o, r, v in zip(outs, res, e.out_binders, strict=True):
            fn.emit(d, f"{o} = {fn.mut(r) if v.aval.shape else r}")
    return outs


def scan(b: Block, e: JaxprEqn) -> list[str]:
    p = e.params
    nc, ncarry, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    fn = b.fn
    jaxpr, cnames = fn.open(p["jaxpr"])
    names = [b.value(x) for x in e.inputs]
    consts, init, xs = names[:nc], names[nc : nc + ncarry], names[nc + ncarry :]
    carries = []
    for v, n in zip(e.out_binders[:ncarry], init, strict=True):
        k = fn.fresh("kc")
        fn.emit(b.depth, f"{k} = {fn.mut(n) if v.aval.shape else n}")
        carries.append(k)
    ys = [fn.alloc(b.depth, v.aval, "y") for v in e.out_binders[ncarry:]]
    scan_loop(fn, b.depth, jaxpr, cnames + consts, carries, xs, ys, str(length), reverse)
    return carries + ys


def while_(b: Block, e: JaxprEqn) -> list[str]:
    p = e.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    fn = b.fn
    cj, cc = fn.open(p["cond_jaxpr"])
    bj, bc = fn.open(p["body_jaxpr"])
    names = [b.value(x) for x in e.inputs]
    carries = []
    for v, n in zip(e.out_binders, names[ncc + nbc :], strict=True):
        k = fn.fresh("kc")
        fn.emit(b.depth, f"{k} = {fn.mut(n) if v.aval.shape else n}")
        carries.append(k)
    while_loop(fn, b.depth, cj, cc + names[:ncc], bj, bc + names[ncc : ncc + nbc], carries)
    return carries


__all__ = [
    "alias",
    "argmax",
    "argmin",
    "broadcast_in_dim_view",
    "concatenate",
    "cond",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "gather_view",
    "iota",
    "pad",
    "reduce_max",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reshape",
    "rev_view",
    "scan",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "slice_",
    "transpose_view",
    "while_",
]
