"""Native loops: a ``scan``/``while`` (body included) becomes ONE ``@njit`` function.

When every value of a loop body (and of a while loop's condition) has a dtype compiled
code handles (no complex, no float16) and every equation has a rule below, the whole
loop is generated as one Numba function, with no per-iteration Python dispatch:

* 0-d values are scalar locals; arrays are NumPy arrays of the static shapes of the
  IR, always C-contiguous. Loop-invariant consts and scanned inputs ``xs`` are
  read-only arguments, ``xs[i]`` is read in place (from the end when ``reverse``),
  stacked outputs ``ys`` are allocated once and written row by row;
* elementwise equations (every primitive with a scalar template in
  ``numba_rules.numba_emitters``) are fused into explicit loop nests over their shape,
  consecutive equations of one shape sharing a nest. Every result is cast to its IR
  dtype, as in fused kernels (float32 stays float32; Numba alone would widen
  ``float32 * 2.0``), so integer and boolean results are NumPy's;
* ``broadcast_in_dim``, ``transpose``, ``rev`` and ``gather`` with scalar indices
  (``x[k]``) are views: their readers index the operand in place (``W.T @ h`` reads
  ``W``), an array is made only when needed. Scalar gather/scatter indices are
  normalized like the impl (negatives wrap; ``mode="clip"`` clamps, ``mode="raise"``
  raises IndexError from the compiled loop);
* ``dot_general`` (any contraction and batch axes, real dtypes) is an explicit loop
  accumulating in the output dtype (four partial sums along a contiguous axis, whole
  rows per step along a strided one); no BLAS, SciPy is not a dependency. A product
  of more than :data:`MAX_DOT_FMAS` multiply-adds declines: BLAS in the Python loop is
  faster there;
* ``reduce_sum`` (float32 accumulated in float64), ``reduce_prod``, ``reduce_max``,
  ``reduce_min``, ``argmax``, ``argmin`` (NaN semantics of NumPy), ``cumsum``,
  ``cumprod``, ``cummax``, ``cummin``, ``reshape``, ``squeeze``, ``slice``, ``pad``,
  ``dynamic_slice``, ``dynamic_update_slice`` (starts clamped like the impls),
  ``scatter``/``scatter_add``/``_mul``/``_min``/``_max`` with scalar indices,
  ``concatenate`` and ``iota`` are explicit loops;
* ``threefry2x32`` and ``erf_inv`` (rules registered by ``lax/random_bits.py``) are
  per-element statement blocks;
* nested ``scan``/``while`` loops and ``cond``/``cond_lin`` (an ``if``/``elif`` on the
  clamped branch index, like the impl) are emitted inline in the same function;
* a while loop's condition is evaluated inline before each iteration.
* ``while_transpose`` (reverse mode of a while loop whose trip count is known only
  at run time) is one function too: the forward loop stores each iteration's carries
  in arrays that double in capacity when full, then the reverse sweep walks them back
  through the reverse step (the body's VJP).

The driver has validated the shapes of every argument before calling (it is
specialized to them), so the loop function indexes without bounds checks. The
source goes through the same content-addressed disk cache as fused kernels
(``kernels.load_source``), so a second process loads the machine code from disk.
Anything else (primitives without a rule here such as sort or linear algebra, gather
and scatter with index arrays, complex numbers, n-way ``select_n``, effects) returns
None: the caller keeps the Python-loop lowering, in which inner loops may still be
native.

``FUNCTRACE_NATIVE_LOOPS=0`` in the environment (or ``loops.enabled = False`` before
a function is first traced) turns native loops off, for comparisons.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace.interpreters.numba_rules import (
    DriverContext,
    EmitContext,
    dtype_ctor,
    numba_dtype_ok,
    numba_emitters,
)
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, dce_jaxpr

MARKER = "# functrace native loop"
"""First line of every native loop's source (and of its call's comment in the driver)."""

enabled = os.environ.get("FUNCTRACE_NATIVE_LOOPS", "1").strip().lower() not in (
    "0",
    "false",
    "no",
    "off",
)
"""Whether ``jit`` makes native loops at all (``FUNCTRACE_NATIVE_LOOPS=0`` turns it off)."""

MAX_DOT_FMAS = 1 << 14
"""Largest ``dot_general`` (multiply-adds per iteration) a native loop computes itself."""

MAX_LINES = 200
"""Longest native loop function (generated lines) made; longer loops keep the Python
loop. Numba's compile time grows by ~10 ms per line (a body of six dense layers with
its reverse loop: ~9 s), while the Python-loop lowering compiles such bodies in ~1 s."""

native_loops_built = 0
"""How many native loops this process generated (for tests and diagnostics)."""

_count_lock = threading.Lock()
_warned: set[str] = set()
_UNROLL = 4  # partial sums per dot product (a contraction of at least 8 terms)

Atom = Var | Literal
IndexMap = Callable[[list[str]], list[str]]


class _Decline(Exception):
    """The body has something native loops do not handle: use the Python-loop lowering."""


def _ok_dtype(dtype: np.dtype) -> bool:
    return numba_dtype_ok(dtype) and dtype.kind != "c"


def _check_aval(aval: Any) -> None:
    if not isinstance(getattr(aval, "shape", None), tuple) or not _ok_dtype(aval.dtype):
        raise _Decline


def _scalar_lit(dt: np.dtype, value: Any) -> str:
    ctor = dtype_ctor(dt)
    val = np.asarray(value, dtype=dt)[()]
    if dt.kind == "b":
        return f"np.bool_({bool(val)})"
    if dt.kind in "iu":
        return f"{ctor}({int(val)})"
    f = float(val)
    if math.isnan(f):
        return f"{ctor}(np.nan)"
    if math.isinf(f):
        return f"{ctor}({'-' if f < 0 else ''}np.inf)"
    return f"{ctor}({f!r})"


def _literal(x: Literal) -> str:
    _check_aval(x.aval)
    if x.aval.shape != ():
        raise _Decline
    return _scalar_lit(x.aval.dtype, x.val)


def _idx(name: str, idx: list[str] | tuple[str, ...]) -> str:
    """``name[i, j]``, or ``name`` itself for a 0-d (scalar) value."""
    return f"{name}[{', '.join(idx)}]" if idx else name


def _identity_value(dt: np.dtype, is_max: bool) -> Any:
    """The identity of max (the smallest value) or min (the largest) for ``dt``."""
    if dt.kind == "f":
        return -np.inf if is_max else np.inf
    if dt.kind == "b":
        return not is_max
    info = np.iinfo(dt)
    return info.min if is_max else info.max


class _Fn:
    """The source of one native loop function, built equation by equation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.ro: set[str] = set()  # names of read-only arrays (arguments and their views)
        self.consts: list[Any] = []  # values closed over by (nested) bodies: g0, g1...

    # -- emission -----------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def loops(self, shape: tuple[int, ...], depth: int) -> tuple[list[str], int]:
        """Open a loop nest over ``shape``: its index names and the inner depth."""
        idx = []
        for n in shape:
            a = self.fresh("a")
            self.emit(depth, f"for {a} in range({n}):")
            idx.append(a)
            depth += 1
        return idx, depth

    def alloc(self, depth: int, aval: Any, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        self.emit(depth, f"{name} = np.empty({tuple(aval.shape)}, {dtype_ctor(aval.dtype)})")
        return name

    def mut(self, name: str) -> str:
        """An expression of ``name`` typed as a mutable array (loop-carried variables
        and branch outputs need one Numba type on every path)."""
        return f"{name}.copy()" if name in self.ro else name

    def const(self, value: Any, aval: Any) -> str:
        _check_aval(aval)
        name = f"g{len(self.consts)}"
        if aval.shape:
            self.consts.append(np.ascontiguousarray(np.asarray(value, dtype=aval.dtype)))
            self.ro.add(name)
        else:
            self.consts.append(np.asarray(value, dtype=aval.dtype)[()])
        return name

    def open(self, j: Any) -> tuple[Jaxpr, list[str]]:
        """A sub-jaxpr with its calls inlined and dead code dropped, and the names of
        its constants (new function arguments)."""
        from functrace.jit.lowering import inline_calls

        if isinstance(j, ClosedJaxpr):
            jaxpr, consts = j.jaxpr, list(j.consts)
        else:
            jaxpr, consts = j, []
            if jaxpr.constvars:
                raise _Decline
        jaxpr, consts = inline_calls(jaxpr, consts)
        jaxpr = dce_jaxpr(jaxpr)
        return jaxpr, [self.const(c, v.aval) for v, c in zip(jaxpr.constvars, consts)]

    def block(self, jaxpr: Jaxpr, ins: list[str], depth: int) -> list[str]:
        """Emit ``jaxpr`` (constvars then invars bound to ``ins``); its output names."""
        return _Block(self, jaxpr, ins, depth).run()


class _Block:
    """The code of one jaxpr at one indentation depth."""

    def __init__(self, fn: _Fn, jaxpr: Jaxpr, ins: list[str], depth: int) -> None:
        self.fn = fn
        self.jaxpr = jaxpr
        self.depth = depth
        self.env: dict[Var, str] = {}
        # broadcast_in_dim, transpose and rev results read in place: source, index map
        # (the view's index -> the source's) and the view axis that walks the source's
        # last (contiguous) axis, if any
        self.views: dict[Var, tuple[Atom, IndexMap, int | None]] = {}
        for v, n in zip((*jaxpr.constvars, *jaxpr.invars), ins, strict=True):
            _check_aval(v.aval)
            self.env[v] = n
        self.uses: Counter[Var] = Counter()
        for e in jaxpr.eqns:
            self.uses.update(x for x in e.inputs if isinstance(x, Var))
        self.uses.update(x for x in jaxpr.outvars if isinstance(x, Var))
        # the open run of elementwise equations of one shape (one loop nest)
        self.run_eqns: list[tuple[JaxprEqn, str]] = []
        self.run_shape: tuple[int, ...] | None = None
        self.run_local: dict[Var, str] = {}

    # -- values ---------------------------------------------------------------
    def scalar(self, x: Atom) -> str:
        if isinstance(x, Literal):
            return _literal(x)
        if x.aval.shape != ():
            raise _Decline
        return self.value(x)

    def value(self, x: Atom) -> str:
        """The name of ``x`` (materializing a view into a new array)."""
        if isinstance(x, Literal):
            return _literal(x)
        got = self.env.get(x)
        if got is not None:
            return got
        name = self.fn.alloc(self.depth, x.aval)
        idx, d = self.fn.loops(x.aval.shape, self.depth)
        self.fn.emit(d, f"{name}[{', '.join(idx)}] = {self.elem_at(x, idx)}")
        self.env[x] = name
        return name

    def contiguous_axis(self, x: Atom) -> int | None:
        """The axis of ``x`` along which its elements are adjacent in memory."""
        if isinstance(x, Var) and x in self.views and x not in self.env:
            return self.views[x][2]
        return x.aval.ndim - 1

    def add_view(
        self, e: JaxprEqn, index_map: IndexMap, last: int | None, x: Atom | None = None
    ) -> None:
        x, out = x if x is not None else e.inputs[0], e.out_binders[0]
        if not out.aval.shape:  # one element: a scalar local
            name = self.fn.fresh("v")
            self.fn.emit(self.depth, f"{name} = {self.elem_at(x, index_map([]))}")
            self.env[out] = name
            return
        if isinstance(x, Var) and x in self.views and x not in self.env:
            src, inner, _ = self.views[x]
            self.views[out] = (src, lambda idx: inner(index_map(idx)), last)
        else:
            self.views[out] = (x, index_map, last)

    def elem_at(self, x: Atom, idx: list[str]) -> str:
        """Element ``idx`` of ``x`` (an array of ``len(idx)`` dims or a scalar)."""
        if isinstance(x, Literal):
            return _literal(x)
        local = self.run_local.get(x)
        if local is not None:
            return local
        if x.aval.shape == ():
            return self.value(x)
        if x in self.views and x not in self.env:
            src, index_map, _ = self.views[x]
            if isinstance(src, Literal) or src.aval.shape == ():
                return self.scalar(src)
            return self.elem_at(src, index_map(idx))
        return _idx(self.value(x), idx)

    # -- the walk -------------------------------------------------------------
    def run(self) -> list[str]:
        from functrace.jit.lowering import _elementwise_expr, _probe_ctx

        for e in self.jaxpr.eqns:
            for v in e.out_binders:
                _check_aval(v.aval)
            for x in e.inputs:
                _check_aval(x.aval)
            view = _VIEWS.get(e.primitive.name)
            if view is not None:
                self.flush_if_reads(e)
                view(self, e)
                continue
            probe = (
                _elementwise_expr(e, _probe_ctx(e).args)
                if not e.primitive.multiple_results and len(e.out_binders) == 1
                else None
            )
            if probe is not None:
                self.elementwise(e)
                continue
            rule = _RULES.get(e.primitive.name)
            if rule is None:
                raise _Decline
            self.flush_if_reads(e)
            self.fn.emit(self.depth, f"# {self.comment(e)}")
            outs = rule(self, e)
            for v, n in zip(e.out_binders, outs, strict=True):
                self.env[v] = n
        self.flush()
        outs = []
        for x in self.jaxpr.outvars:
            if isinstance(x, Literal):
                outs.append(_literal(x))
            else:
                outs.append(self.value(x))
        return outs

    def comment(self, e: JaxprEqn) -> str:
        from functrace.jit.lowering import _fmt_line

        def nm(x: Atom) -> str:
            if isinstance(x, Literal):
                return _literal(x)
            return self.env.get(x) or "(broadcast)"

        return _fmt_line(e, [v.aval.str_short() for v in e.out_binders], [nm(x) for x in e.inputs])

    def elementwise(self, e: JaxprEqn) -> None:
        from functrace.jit.lowering import _elementwise_expr, _fmt_line, _short

        out = e.out_binders[0]
        shape = out.aval.shape
        ctor = dtype_ctor(out.aval.dtype)
        if shape == ():
            args = tuple(self.scalar(x) for x in e.inputs)
            expr = _elementwise_expr(e, args)
            if expr is None:
                raise _Decline
            name = self.fn.fresh("v")
            outs = [f"{name}:{_short(out.aval.dtype)}"]
            self.fn.emit(self.depth, f"# {_fmt_line(e, outs, list(args))}")
            self.fn.emit(self.depth, f"{name} = {ctor}({expr})")
            self.env[out] = name
            return
        for x in e.inputs:
            if x.aval.shape not in ((), shape):
                raise _Decline
        if self.run_shape != shape:
            self.flush()
            self.run_shape = shape
        local = self.fn.fresh("e")
        self.run_eqns.append((e, local))
        self.run_local[out] = local

    def flush_if_reads(self, e: JaxprEqn) -> None:
        for x in e.inputs:
            if not isinstance(x, Var):
                continue
            src = self.views[x][0] if x in self.views and x not in self.env else x
            if src in self.run_local:
                self.flush()
                return

    def flush(self) -> None:
        """Emit the open run of elementwise equations as one loop nest."""
        from functrace.jit.lowering import _elementwise_expr, _fmt_line, _short

        if not self.run_eqns:
            return
        shape = self.run_shape
        assert shape is not None
        eqns = self.run_eqns
        inside: Counter[Var] = Counter()
        for e, _ in eqns:
            inside.update(x for x in e.inputs if isinstance(x, Var))
        stores: list[tuple[Var, str, str]] = []  # values read after the nest
        for e, local in eqns:
            v = e.out_binders[0]
            if self.uses[v] > inside[v]:
                stores.append((v, self.fn.alloc(self.depth, v.aval), local))
        # the loop nest reads the arrays computed before it; its own values are locals
        idx, d = self.fn.loops(shape, self.depth)
        for e, local in eqns:
            args = tuple(self.elem_at(x, idx) for x in e.inputs)
            expr = _elementwise_expr(e, args)
            if expr is None:
                raise _Decline
            dt = e.out_binders[0].aval.dtype
            self.fn.emit(d, f"# {_fmt_line(e, [f'{local}:{_short(dt)}'], list(args))}")
            self.fn.emit(d, f"{local} = {dtype_ctor(dt)}({expr})")
        for v, name, local in stores:
            self.fn.emit(d, f"{name}[{', '.join(idx)}] = {local}")
            self.env[v] = name
        self.run_eqns = []
        self.run_local = {}
        self.run_shape = None


# ---------------------------------------------------------------------------
# Rules for the non-elementwise primitives: (block, eqn) -> names of the results.
# ---------------------------------------------------------------------------

Rule = Callable[[_Block, JaxprEqn], list[str]]
_RULES: dict[str, Rule] = {}


def _broadcast_view(b: _Block, e: JaxprEqn) -> None:
    (x,) = e.inputs
    dims = tuple(e.params["broadcast_dimensions"])
    sizes = x.aval.shape

    def index_map(idx: list[str]) -> list[str]:
        return ["0" if n == 1 else idx[od] for n, od in zip(sizes, dims, strict=True)]

    lx = b.contiguous_axis(x) if sizes else None
    b.add_view(e, index_map, dims[lx] if lx is not None and sizes[lx] != 1 else None)


def _transpose_view(b: _Block, e: JaxprEqn) -> None:
    perm = tuple(e.params["permutation"])

    def index_map(idx: list[str]) -> list[str]:
        got = [""] * len(perm)
        for j, p in enumerate(perm):
            got[p] = idx[j]
        return got

    lx = b.contiguous_axis(e.inputs[0])
    b.add_view(e, index_map, perm.index(lx) if lx is not None else None)


def _rev_view(b: _Block, e: JaxprEqn) -> None:
    dims = set(e.params["dimensions"])
    shape = e.inputs[0].aval.shape

    def index_map(idx: list[str]) -> list[str]:
        # parenthesized: ``a`` may be a composite index (a slice's ``start + step * i``)
        return [f"{shape[k] - 1} - ({a})" if k in dims else a for k, a in enumerate(idx)]

    b.add_view(e, index_map, b.contiguous_axis(e.inputs[0]))


def _positions(b: _Block, e: JaxprEqn) -> list[str]:
    """Scalar gather/scatter indices normalized like the impl: negatives wrap once, then
    ``mode="clip"`` clamps and ``mode="raise"`` raises IndexError."""
    x, axes, mode = e.inputs[0], e.params["axes"], e.params["mode"]
    name = e.primitive.name
    indices = e.inputs[1:] if name == "gather" else e.inputs[2:]
    pos = []
    for a, idx in zip(axes, indices, strict=True):
        dim, dt = x.aval.shape[a], idx.aval.dtype
        if idx.aval.shape != () or dim == 0 or dt.kind not in "iu" or mode not in ("clip", "raise"):
            raise _Decline  # index arrays stay with the impl
        p, i = b.fn.fresh("p"), b.scalar(idx)
        if dt.kind == "u" and np.iinfo(dt).max >= dim:
            b.fn.emit(b.depth, f"{p} = np.int64(min({i}, {_scalar_lit(dt, dim)}))")
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


def _gather_view(b: _Block, e: JaxprEqn) -> None:
    x, axes = e.inputs[0], tuple(e.params["axes"])
    pos = _positions(b, e)
    lx = b.contiguous_axis(x)
    last = None if lx is None or lx in axes else lx - sum(a < lx for a in axes)
    b.add_view(e, _with_positions(axes, pos, x.aval.ndim), last, x)


_VIEWS: dict[str, Callable[[_Block, JaxprEqn], None]] = {
    "broadcast_in_dim": _broadcast_view,
    "transpose": _transpose_view,
    "rev": _rev_view,
    "gather": _gather_view,
}


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def deco(f: Rule) -> Rule:
        for n in names:
            _RULES[n] = f
        return f

    return deco


@_rule("grad_hook")
def _alias(b: _Block, e: JaxprEqn) -> list[str]:
    return [b.value(e.inputs[0])]


@_rule("reshape", "squeeze")
def _reshape(b: _Block, e: JaxprEqn) -> list[str]:
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


def _copy_loop(b: _Block, e: JaxprEqn, in_index: IndexMap) -> list[str]:
    """``out[idx] = x[in_index(idx)]`` over the output shape."""
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    idx, d = b.fn.loops(out.aval.shape, b.depth)
    b.fn.emit(d, f"{_idx(name, idx)} = {b.elem_at(e.inputs[0], in_index(idx))}")
    return [name]


@_rule("slice")
def _slice(b: _Block, e: JaxprEqn) -> list[str]:
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


def _clamped_starts(b: _Block, starts: tuple[Atom, ...], shape: Any, sizes: Any) -> list[str]:
    out = []
    for s, dim, n in zip(starts, shape, sizes, strict=True):
        if s.aval.dtype.kind not in "iu" or s.aval.dtype == np.uint64:
            raise _Decline  # uint64 starts past int64 would wrap: the impl clamps them
        name = b.fn.fresh("st")
        b.fn.emit(b.depth, f"{name} = min(max(np.int64({b.scalar(s)}), 0), {dim - n})")
        out.append(name)
    return out


@_rule("dynamic_slice")
def _dynamic_slice(b: _Block, e: JaxprEqn) -> list[str]:
    x, *starts = e.inputs
    sizes = e.params["slice_sizes"]
    if not x.aval.shape:
        return [b.value(x)]
    st = _clamped_starts(b, tuple(starts), x.aval.shape, sizes)
    return _copy_loop(b, e, lambda idx: [f"{s} + {a}" for s, a in zip(st, idx, strict=True)])


@_rule("dynamic_update_slice")
def _dynamic_update_slice(b: _Block, e: JaxprEqn) -> list[str]:
    x, u, *starts = e.inputs
    if not x.aval.shape:
        return [b.value(u)]
    st = _clamped_starts(b, tuple(starts), x.aval.shape, u.aval.shape)
    name = b.fn.fresh("v")
    b.fn.emit(b.depth, f"{name} = {b.value(x)}.copy()")
    idx, d = b.fn.loops(u.aval.shape, b.depth)
    dst = [f"{s} + {a}" for s, a in zip(st, idx, strict=True)]
    b.fn.emit(d, f"{_idx(name, dst)} = {b.elem_at(u, idx)}")
    return [name]


def _scatter(op: str | None) -> Rule:
    def rule(b: _Block, e: JaxprEqn) -> list[str]:
        x, upd = e.inputs[0], e.inputs[1]
        out = e.out_binders[0]
        dt = out.aval.dtype
        if not x.aval.shape or (dt.kind == "b" and op in ("sum", "prod")):
            raise _Decline
        axes = tuple(e.params["axes"])
        pos = _positions(b, e)
        fn = b.fn
        name = fn.alloc(b.depth, out.aval)
        idx, d = fn.loops(out.aval.shape, b.depth)
        fn.emit(d, f"{_idx(name, idx)} = {b.elem_at(x, idx)}")
        idx, d = fn.loops(upd.aval.shape, b.depth)
        dst = _idx(name, _with_positions(axes, pos, x.aval.ndim)(idx))
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


for _name, _op in (
    ("scatter", None),
    ("scatter_add", "sum"),
    ("scatter_mul", "prod"),
    ("scatter_max", "max"),
    ("scatter_min", "min"),
):
    _RULES[_name] = _scatter(_op)


@_rule("pad")
def _pad(b: _Block, e: JaxprEqn) -> list[str]:
    (x, value), out = e.inputs, e.out_binders[0]
    config = e.params["padding_config"]
    fn = b.fn
    name = fn.alloc(b.depth, out.aval)
    idx, d = fn.loops(out.aval.shape, b.depth)
    fn.emit(d, f"{_idx(name, idx)} = {b.scalar(value)}")
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
    fn.emit(d, f"{_idx(name, dst)} = {b.elem_at(x, idx)}")
    return [name]


@_rule("concatenate")
def _concatenate(b: _Block, e: JaxprEqn) -> list[str]:
    axis = e.params["dimension"]
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    off = 0
    for x in e.inputs:
        idx, d = b.fn.loops(x.aval.shape, b.depth)
        dst = [f"{off} + {a}" if k == axis else a for k, a in enumerate(idx)]
        b.fn.emit(d, f"{_idx(name, dst)} = {b.elem_at(x, idx)}")
        off += x.aval.shape[axis]
    return [name]


@_rule("iota")
def _iota(b: _Block, e: JaxprEqn) -> list[str]:
    out = e.out_binders[0]
    name = b.fn.alloc(b.depth, out.aval)
    idx, d = b.fn.loops(out.aval.shape, b.depth)
    b.fn.emit(d, f"{_idx(name, idx)} = {dtype_ctor(out.aval.dtype)}({idx[e.params['dimension']]})")
    return [name]


def _reduce(
    b: _Block,
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
    actor, start = dtype_ctor(adt), _scalar_lit(adt, init)
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
    fn.emit(d, f"{_idx(acc, idx)} = {start}")
    idx, d = fn.loops(x.aval.shape, b.depth)
    o = _idx(acc, [idx[k] for k in kept])
    fn.emit(d, f"{o} = {actor}({combine(o, b.elem_at(x, idx))})")
    if adt == out.aval.dtype:
        return [acc]
    name = fn.alloc(b.depth, out.aval)
    idx, d = fn.loops(out.aval.shape, b.depth)
    fn.emit(d, f"{_idx(name, idx)} = {dtype_ctor(out.aval.dtype)}({_idx(acc, idx)})")
    return [name]


@_rule("reduce_sum")
def _reduce_sum(b: _Block, e: JaxprEqn) -> list[str]:
    dt = e.out_binders[0].aval.dtype
    if dt.kind == "b":
        raise _Decline
    # float32 sums accumulate in float64: as accurate as NumPy's pairwise float32 sums
    acc = np.dtype(np.float64) if dt == np.float32 else None
    return _reduce(b, e, lambda a, x: f"{a} + {x}", 0, acc)


@_rule("reduce_prod")
def _reduce_prod(b: _Block, e: JaxprEqn) -> list[str]:
    if e.out_binders[0].aval.dtype.kind == "b":
        raise _Decline
    return _reduce(b, e, lambda a, x: f"{a} * {x}", 1)


def _pick(is_max: bool, dt: np.dtype) -> Callable[[str, str], str]:
    from functrace.lax import elementwise

    rule = numba_emitters[elementwise.max_p if is_max else elementwise.min_p]
    assert callable(rule)

    def combine(a: str, x: str) -> str:
        expr = rule(EmitContext((a, x), (dt, dt), dt, {}))
        if expr is None:
            raise _Decline
        return expr

    return combine


def _extremum(is_max: bool) -> Rule:
    def rule(b: _Block, e: JaxprEqn) -> list[str]:
        dt = e.out_binders[0].aval.dtype
        return _reduce(b, e, _pick(is_max, dt), _identity_value(dt, is_max))

    return rule


_RULES["reduce_max"] = _extremum(True)
_RULES["reduce_min"] = _extremum(False)


def _along(b: _Block, x: Atom, axis: int) -> tuple[list[str], int, Callable[[str], list[str]]]:
    """Loops over every axis of ``x`` but ``axis``: (their indices, the inner depth,
    position along ``axis`` -> full index)."""
    others = tuple(n for k, n in enumerate(x.aval.shape) if k != axis)
    idx, d = b.fn.loops(others, b.depth)

    def full(pos: str) -> list[str]:
        return [*idx[:axis], pos, *idx[axis:]]

    return idx, d, full


def _cumulative(op: str) -> Rule:
    def rule(b: _Block, e: JaxprEqn) -> list[str]:
        (x,), out = e.inputs, e.out_binders[0]
        axis, reverse = e.params["axis"], e.params["reverse"]
        dt = out.aval.dtype
        if dt.kind == "b" and op in ("sum", "prod"):
            raise _Decline
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
        fn.emit(d, f"{_idx(name, full(first))} = {acc}")
        fn.emit(d, f"for {k} in range(1, {n}):")
        pos = f"{n - 1} - {k}" if reverse else k
        fn.emit(d + 1, f"{acc} = {ctor}({combine(acc, b.elem_at(x, full(pos)))})")
        fn.emit(d + 1, f"{_idx(name, full(pos))} = {acc}")
        return [name]

    return rule


for _op in ("sum", "prod", "max", "min"):
    _RULES[f"cum{_op}"] = _cumulative(_op)


def _arg_extremum(is_max: bool) -> Rule:
    def rule(b: _Block, e: JaxprEqn) -> list[str]:
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
        fn.emit(d, f"{_idx(name, idx)} = {dtype_ctor(out.aval.dtype)}({at})")
        return [name]

    return rule


_RULES["argmax"] = _arg_extremum(True)
_RULES["argmin"] = _arg_extremum(False)


@_rule("dot_general")
def _dot_general(b: _Block, e: JaxprEqn) -> list[str]:
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    x, y = e.inputs
    out = e.out_binders[0]
    dt = out.aval.dtype
    if dt.kind == "b":
        raise _Decline
    csizes = [x.aval.shape[a] for a in lc]
    if out.aval.size * math.prod(csizes) > MAX_DOT_FMAS:
        raise _Decline
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

    zero = _scalar_lit(dt, 0)
    shape = out.aval.shape
    strided = b.contiguous_axis(x) != lc[0] or b.contiguous_axis(y) != rc[0] if csizes else False
    if len(csizes) == 1 and shape and strided:
        # The contraction walks a non-last (strided) axis: add whole output rows per
        # contraction step instead, out[i, j] += x[k, i] * y[k, j], reading memory in order.
        name = fn.alloc(b.depth, out.aval)
        oidx, d = fn.loops(shape, b.depth)
        fn.emit(d, f"{_idx(name, oidx)} = {zero}")
        cidx, d = fn.loops(tuple(csizes), b.depth)
        oidx, d = fn.loops(shape, d)
        o = _idx(name, oidx)
        fn.emit(d, f"{o} = {ctor}({o} + {term(oidx, cidx)})")
        return [name]
    name = fn.fresh("acc") if shape == () else fn.alloc(b.depth, out.aval)
    oidx, d = fn.loops(shape, b.depth)
    acc = fn.fresh("acc") if shape else name
    if len(csizes) == 1 and csizes[0] >= 2 * _UNROLL:
        # _UNROLL independent partial sums: no serial chain of dependent additions
        k, main = csizes[0], csizes[0] - csizes[0] % _UNROLL
        accs = [fn.fresh("acc") for _ in range(_UNROLL)]
        fn.emit(d, f"{', '.join(accs)} = {', '.join([zero] * _UNROLL)}")
        c = fn.fresh("c")
        fn.emit(d, f"for {c} in range(0, {main}, {_UNROLL}):")
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
        fn.emit(d, f"{_idx(name, oidx)} = {acc}")
    return [name]


@_rule("cond", "cond_lin")
def _cond(b: _Block, e: JaxprEqn) -> list[str]:
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


@_rule("scan")
def _scan(b: _Block, e: JaxprEqn) -> list[str]:
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
    _scan_loop(fn, b.depth, jaxpr, cnames + consts, carries, xs, ys, str(length), reverse)
    return carries + ys


def _scan_loop(
    fn: _Fn,
    depth: int,
    jaxpr: Jaxpr,
    const_names: list[str],
    carries: list[str],
    xs: list[str],
    ys: list[str],
    n: str,
    reverse: bool,
) -> None:
    t, i = fn.fresh("t"), fn.fresh("i")
    fn.emit(depth, f"for {t} in range({n}):")
    fn.emit(depth + 1, f"{i} = {n} - 1 - {t}" if reverse else f"{i} = {t}")
    x_vals = []
    for x in xs:
        xv = fn.fresh("xv")
        fn.emit(depth + 1, f"{xv} = {x}[{i}]")
        if x in fn.ro:
            fn.ro.add(xv)
        x_vals.append(xv)
    outs = fn.block(jaxpr, const_names + carries + x_vals, depth + 1)
    ncarry = len(carries)
    for y, o, v in zip(ys, outs[ncarry:], jaxpr.outvars[ncarry:], strict=True):
        # before the carries change; element by element (an array setitem is slow to compile)
        idx, d = fn.loops(v.aval.shape, depth + 1)
        fn.emit(d, f"{_idx(y, [i, *idx])} = {_idx(o, idx)}")
    _assign(fn, depth + 1, jaxpr.outvars[:ncarry], carries, outs[:ncarry])


def _assign(fn: _Fn, depth: int, outvars: Any, carries: list[str], outs: list[str]) -> None:
    """``k0, k1 = v5, k0``: all new carries computed from the old ones at once."""
    if not carries:
        return
    rhs = [fn.mut(o) if v.aval.shape else o for v, o in zip(outvars, outs, strict=True)]
    fn.emit(depth, f"{', '.join(carries)} = {', '.join(rhs)}")


@_rule("while")
def _while(b: _Block, e: JaxprEqn) -> list[str]:
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
    _while_loop(fn, b.depth, cj, cc + names[:ncc], bj, bc + names[ncc : ncc + nbc], carries)
    return carries


def _while_loop(
    fn: _Fn,
    depth: int,
    cj: Jaxpr,
    cond_consts: list[str],
    bj: Jaxpr,
    body_consts: list[str],
    carries: list[str],
) -> None:
    if len(cj.outvars) != 1 or len(bj.outvars) != len(carries):
        raise _Decline
    fn.emit(depth, "while True:")
    (c,) = fn.block(cj, cond_consts + carries, depth + 1)
    fn.emit(depth + 1, f"if not {c}:")
    fn.emit(depth + 2, "break")
    outs = fn.block(bj, body_consts + carries, depth + 1)
    _assign(fn, depth + 1, bj.outvars, carries, outs)


# ---------------------------------------------------------------------------
# Top level: the loop function and its call in the driver
# ---------------------------------------------------------------------------


def _load(source: str, sig: tuple[Any, ...], ctx: DriverContext, what: str) -> str | None:
    """Load the loop function; its driver-global name, or None to fall back."""
    global native_loops_built
    from functrace.jit import lowering
    from functrace.jit.kernels import load_source

    try:
        kernel = load_source(source, sig)
    except Exception as err:  # a Numba typing gap: stay correct with the Python loop
        if lowering.strict_kernels:
            raise
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if what not in _warned:
            _warned.add(what)
            warnings.warn(
                f"functrace.jit: expected Numba to compile the native {what} loop, "
                f"got {type(err).__name__}: {first[:200]}. The loop runs in Python "
                f"instead (same results, slower).",
                RuntimeWarning,
                stacklevel=4,
            )
        return None
    with _count_lock:
        native_loops_built += 1
    return ctx.const(kernel)  # the driver registers the kernel (as_text, compile count)


def _numba_type(dt: np.dtype, ndim: int) -> Any:
    from numba import types
    from numba.np.numpy_support import from_dtype

    if ndim == 0:
        return from_dtype(dt)
    return types.Array(from_dtype(dt), ndim, "C", readonly=True)


def _finish(
    fn: _Fn,
    ctx: DriverContext,
    params: list[str],
    avals: list[Any],
    rets: list[str],
    what: str,
    with_n: bool,
) -> str | None:
    """Assemble the module, load it and return the driver's call expression."""
    from functrace.jit.kernels import import_numba, kernel_header
    from functrace.jit.lowering import _short

    def desc(name: str, a: Any) -> str:
        return f"{name}={_short(a.dtype)}" + (f"[{a.ndim}d C ro]" if a.ndim else "")

    g_avals = [np.asarray(c) for c in fn.consts]
    gnames = [f"g{j}" for j in range(len(fn.consts))]
    all_params = gnames + params + (["n"] if with_n else [])
    sig_text = ", ".join(
        [desc(n, a) for n, a in zip(gnames, g_avals)]
        + [desc(n, a) for n, a in zip(params, avals)]
        + (["n=i64"] if with_n else [])
    )
    if len(fn.lines) > MAX_LINES:  # compile time would outweigh the gain
        return None
    lines = kernel_header(all_params, sig_text, f"{MARKER} [{what}]")
    lines += fn.lines
    lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    source = "\n".join(lines) + "\n"

    import_numba()
    sig = tuple(_numba_type(a.dtype, a.ndim) for a in g_avals)
    sig += tuple(_numba_type(a.dtype, a.ndim) for a in avals)
    if with_n:
        from numba import types

        sig += (types.int64,)
    kn = _load(source, sig, ctx, what)
    if kn is None:
        return None
    args = [ctx.const(c) for c in fn.consts]
    for a, arg in zip(ctx.in_avals, ctx.args, strict=True):
        args.append(f"_asc({arg})" if a.ndim else f"{dtype_ctor(a.dtype)}({arg})")
    if with_n:
        args.append(str(int(ctx.params["length"])))
    return f"{kn}({', '.join(args)})  {MARKER}"


def _carry_params(fn: _Fn, avals: list[Any], first: int) -> tuple[list[str], list[str]]:
    """Parameter names of the carries and the loop variables (array carries are copied
    once: loop variables are mutable arrays, arguments read-only)."""
    params, carries = [], []
    for j, a in enumerate(avals):
        p = f"k{first + j}"
        params.append(p)
        if a.ndim:
            fn.ro.add(p)
            k = fn.fresh("kc")
            fn.emit(1, f"{k} = {p}.copy()")
            carries.append(k)
        else:
            carries.append(p)
    return params, carries


def native_scan(ctx: DriverContext) -> str | None:
    """A driver expression calling one native loop for this ``scan``, or None."""
    if not enabled:
        return None
    p = ctx.params
    nc, ncarry, reverse = p["num_consts"], p["num_carry"], p["reverse"]
    avals = list(ctx.in_avals)
    fn = _Fn()
    try:
        for a in avals:
            _check_aval(a)
        jaxpr, cnames = fn.open(p["jaxpr"])
        s_names = [f"s{j}" for j in range(nc)]
        fn.ro.update(n for n, a in zip(s_names, avals[:nc]) if a.ndim)
        k_params, carries = _carry_params(fn, avals[nc : nc + ncarry], 0)
        x_names = [f"x{j}" for j in range(len(avals) - nc - ncarry)]
        fn.ro.update(x_names)
        ys = []
        for v in jaxpr.outvars[ncarry:]:
            y = fn.fresh("y")
            shape = ", ".join(["n", *map(str, v.aval.shape)])
            fn.emit(1, f"{y} = np.empty(({shape},), {dtype_ctor(v.aval.dtype)})")
            ys.append(y)
        _scan_loop(fn, 1, jaxpr, cnames + s_names, carries, x_names, ys, "n", reverse)
    except _Decline:
        return None
    what = "reverse scan" if reverse else "scan"
    params = s_names + k_params + x_names
    return _finish(fn, ctx, params, avals, carries + ys, what, with_n=True)


def native_while(ctx: DriverContext) -> str | None:
    """A driver expression calling one native loop for this ``while``, or None."""
    if not enabled:
        return None
    p = ctx.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    avals = list(ctx.in_avals)
    fn = _Fn()
    try:
        for a in avals:
            _check_aval(a)
        cj, cc = fn.open(p["cond_jaxpr"])
        bj, bc = fn.open(p["body_jaxpr"])
        cs = [f"cs{j}" for j in range(ncc)]
        bs = [f"bs{j}" for j in range(nbc)]
        fn.ro.update(n for n, a in zip(cs + bs, avals) if a.ndim)
        k_params, carries = _carry_params(fn, avals[ncc + nbc :], 0)
        _while_loop(fn, 1, cj, cc + cs, bj, bc + bs, carries)
    except _Decline:
        return None
    return _finish(fn, ctx, cs + bs + k_params, avals, carries, "while", with_n=False)


def _stack_store(fn: _Fn, depth: int, stack: str, i: str, value: str, aval: Any) -> None:
    """``stack[i] = value`` element by element (an array setitem is slow to compile)."""
    idx, d = fn.loops(aval.shape, depth)
    fn.emit(d, f"{_idx(stack, [i, *idx])} = {_idx(value, idx)}")


def native_while_transpose(ctx: DriverContext) -> str | None:
    """A driver expression calling one native function for this ``while_transpose``
    (reverse mode of a while loop whose trip count is known only at run time), or None.

    The forward loop stores each iteration's carries in arrays that double in
    capacity when full; the reverse sweep then walks them back through the reverse
    step (``bwd_jaxpr``: the body's VJP, accumulating the constants' cotangents)."""
    if not enabled:
        return None
    p = ctx.params
    nbw, ncc, nbc = p["bwd_nconsts"], p["cond_nconsts"], p["body_nconsts"]
    ncarry = len(p["nz_carry"])
    avals = list(ctx.in_avals)
    carry_avals = avals[nbw + ncc + nbc : nbw + ncc + nbc + ncarry]
    ct_avals = avals[nbw + ncc + nbc + ncarry :]
    acc_avals = list(ctx.out_avals[: sum(p["nz_c"])])
    fn = _Fn()
    try:
        for a in avals + acc_avals:
            _check_aval(a)
        cj, cc = fn.open(p["cond_jaxpr"])
        bj, bc = fn.open(p["body_jaxpr"])
        wj, wc = fn.open(p["bwd_jaxpr"])
        ws = [f"ws{j}" for j in range(nbw)]
        cs = [f"cs{j}" for j in range(ncc)]
        bs = [f"bs{j}" for j in range(nbc)]
        fn.ro.update(n for n, a in zip(ws + cs + bs, avals) if a.ndim)
        k_params, carries = _carry_params(fn, carry_avals, 0)
        c_params, cts = _carry_params(fn, ct_avals, ncarry)
        # forward: store every carry, then step
        fn.emit(1, "cap = 16")
        fn.emit(1, "m = 0")
        stacks = []
        for a in carry_avals:
            st = fn.fresh("st")
            fn.emit(
                1, f"{st} = np.empty((cap, {', '.join(map(str, a.shape))}), {dtype_ctor(a.dtype)})"
            )
            stacks.append(st)
        # Growing the stores happens outside the inner loop: an array reassigned in the
        # loop that runs every iteration costs Numba reference counting on each one (~10x).
        fn.emit(1, "done = False")
        fn.emit(1, "while not done:")
        fn.emit(2, "if m == cap:")
        fn.emit(3, "cap *= 2")
        for st, a in zip(stacks, carry_avals):
            grown = fn.fresh("st")
            fn.emit(
                3,
                f"{grown} = np.empty((cap, {', '.join(map(str, a.shape))}), {dtype_ctor(a.dtype)})",
            )
            r = fn.fresh("r")
            fn.emit(3, f"for {r} in range(m):")
            _stack_store(fn, 4, grown, r, f"{st}[{r}]", a)
            fn.emit(3, f"{st} = {grown}")
        fn.emit(2, "while m < cap:")
        (c,) = fn.block(cj, cc + cs + carries, 3)
        fn.emit(3, f"if not {c}:")
        fn.emit(4, "done = True")
        fn.emit(4, "break")
        for st, k, a in zip(stacks, carries, carry_avals):
            _stack_store(fn, 3, st, "m", k, a)
        fn.emit(3, "m += 1")
        if len(bj.outvars) != len(carries):
            raise _Decline
        outs = fn.block(bj, bc + bs + carries, 3)
        _assign(fn, 3, bj.outvars, carries, outs)
        # reverse sweep
        accs = []
        for a in acc_avals:
            acc = fn.fresh("acc")
            ctor = dtype_ctor(a.dtype)
            zero = f"np.zeros({tuple(a.shape)}, {ctor})" if a.ndim else f"{ctor}(0)"
            fn.emit(1, f"{acc} = {zero}")
            accs.append(acc)
        t, i = fn.fresh("t"), fn.fresh("i")
        fn.emit(1, f"for {t} in range(m):")
        fn.emit(2, f"{i} = m - 1 - {t}")
        stored = []
        for st, a in zip(stacks, carry_avals):
            kv = fn.fresh("kv")
            fn.emit(2, f"{kv} = {st}[{i}]")
            if a.ndim:
                fn.ro.add(kv)
            stored.append(kv)
        if len(wj.outvars) != len(accs) + len(cts):
            raise _Decline
        outs = fn.block(wj, wc + ws + bs + stored + cts + accs, 2)
        _assign(fn, 2, wj.outvars, accs + cts, outs)
    except _Decline:
        return None
    params = ws + cs + bs + k_params + c_params
    return _finish(fn, ctx, params, avals, accs + cts, "while reverse sweep", with_n=False)


__all__ = [
    "MARKER",
    "MAX_DOT_FMAS",
    "MAX_LINES",
    "enabled",
    "native_scan",
    "native_while",
    "native_while_transpose",
]
