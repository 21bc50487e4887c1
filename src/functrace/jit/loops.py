"""Native loops: a ``scan``/``while`` (body included) becomes ONE ``@njit`` function.

When every value of a loop body (and of a while loop's condition) has a dtype compiled
code handles (no complex, no float16) and every equation has a native form, the whole
loop is generated as one Numba function, with no per-iteration Python dispatch. This
module is the planner (:class:`LoopFunction`, :class:`Block`) and the entry points
the driver rules of ``scan``/``while``/``while_transpose`` call; a primitive's native
form is the ``native`` field of its ``DriverRule`` in ``numba_rules.numba_emitters``
(written in ``loop_rules.py`` and ``random_rules.py``, registered with the driver form):


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
* ``threefry2x32`` and ``erf_inv`` (native forms in ``random_rules.py``) are
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
Anything else (primitives without a native form such as sort or linear algebra, gather
and scatter with index arrays, complex numbers, n-way ``select_n``, effects) returns
None: the caller keeps the Python-loop lowering, in which inner loops may still be
native.

A program whose inputs and outputs are all 0-d, made of loops and 0-d arithmetic,
becomes one native function as a whole (:func:`as_one_loop`, applied by the lowering
before planning).

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
    DriverRule,
    dtype_ctor,
    numba_dtype_ok,
    numba_emitters,
)
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, dce_jaxpr
from functrace.jit import codegen
from functrace.jit.codegen import elementwise_expr, fmt_line, inline_calls, probe_ctx, short
from functrace.jit.kernels import KernelListing, import_numba, kernel_header, load_source
from functrace.lax import control_flow

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

MAX_LINES = 240
"""Longest native loop function (generated lines) made; longer loops keep the Python
loop. Numba's compile time grows by ~10 ms per line (a body of six dense layers with
its reverse loop: ~9 s), while the Python-loop lowering compiles such bodies in ~1 s.
Raised from 200 when ``.at`` updates at traced indices gained JAX's drop semantics (a
range check and a select per update): the forward loop of ``grad`` of a scan with five
scalar ``.at`` updates grew to 214 lines; native, its first call took 2.24 s and each
call 22 us, against 1.21 s and 1347 us for the Python loop."""

native_loops_built = 0
"""How many native loops this process generated (for tests and diagnostics)."""

_count_lock = threading.Lock()
_warned: set[str] = set()

Atom = Var | Literal
IndexMap = Callable[[list[str]], list[str]]


class Decline(Exception):
    """The body has something native loops do not handle: use the Python-loop lowering."""


def _ok_dtype(dtype: np.dtype) -> bool:
    return numba_dtype_ok(dtype) and dtype.kind != "c"


def check_aval(aval: Any) -> None:
    if not isinstance(getattr(aval, "shape", None), tuple) or not _ok_dtype(aval.dtype):
        raise Decline


def scalar_lit(dt: np.dtype, value: Any) -> str:
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


def literal(x: Literal) -> str:
    check_aval(x.aval)
    if x.aval.shape != ():
        raise Decline
    return scalar_lit(x.aval.dtype, x.val)


def subscript(name: str, idx: list[str] | tuple[str, ...]) -> str:
    """``name[i, j]``, or ``name`` itself for a 0-d (scalar) value."""
    return f"{name}[{', '.join(idx)}]" if idx else name


def identity_value(dt: np.dtype, is_max: bool) -> Any:
    """The identity of max (the smallest value) or min (the largest) for ``dt``."""
    if dt.kind == "f":
        return -np.inf if is_max else np.inf
    if dt.kind == "b":
        return not is_max
    info = np.iinfo(dt)
    return info.min if is_max else info.max


class LoopFunction:
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
        check_aval(aval)
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
        if isinstance(j, ClosedJaxpr):
            jaxpr, consts = j.jaxpr, list(j.consts)
        else:
            jaxpr, consts = j, []
            if jaxpr.constvars:
                raise Decline
        jaxpr, consts = inline_calls(jaxpr, consts, remat=True)
        jaxpr = dce_jaxpr(jaxpr)
        return jaxpr, [self.const(c, v.aval) for v, c in zip(jaxpr.constvars, consts)]

    def block(self, jaxpr: Jaxpr, ins: list[str], depth: int) -> list[str]:
        """Emit ``jaxpr`` (constvars then invars bound to ``ins``); its output names."""
        return Block(self, jaxpr, ins, depth).run()


class Block:
    """The code of one jaxpr at one indentation depth."""

    def __init__(self, fn: LoopFunction, jaxpr: Jaxpr, ins: list[str], depth: int) -> None:
        self.fn = fn
        self.jaxpr = jaxpr
        self.depth = depth
        self.env: dict[Var, str] = {}
        # broadcast_in_dim, transpose and rev results read in place: source, index map
        # (the view's index -> the source's) and the view axis that walks the source's
        # last (contiguous) axis, if any
        self.views: dict[Var, tuple[Atom, IndexMap, int | None]] = {}
        for v, n in zip((*jaxpr.constvars, *jaxpr.invars), ins, strict=True):
            check_aval(v.aval)
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
            return literal(x)
        if x.aval.shape != ():
            raise Decline
        return self.value(x)

    def value(self, x: Atom) -> str:
        """The name of ``x`` (materializing a view into a new array)."""
        if isinstance(x, Literal):
            return literal(x)
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
            return literal(x)
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
        return subscript(self.value(x), idx)

    # -- the walk -------------------------------------------------------------
    def run(self) -> list[str]:
        for e in self.jaxpr.eqns:
            for v in e.out_binders:
                check_aval(v.aval)
            for x in e.inputs:
                check_aval(x.aval)
            entry = numba_emitters.get(e.primitive)
            rule = entry if isinstance(entry, DriverRule) else None
            native = rule.native if rule is not None else None
            if native is not None and rule is not None and rule.native_view:
                self.flush_if_reads(e)
                native(self, e)
                continue
            probe = (
                elementwise_expr(e, probe_ctx(e).args)
                if not e.primitive.multiple_results and len(e.out_binders) == 1
                else None
            )
            if probe is not None:
                self.elementwise(e)
                continue
            if native is None:
                raise Decline
            self.flush_if_reads(e)
            self.fn.emit(self.depth, f"# {self.comment(e)}")
            outs = native(self, e)
            assert outs is not None
            for v, n in zip(e.out_binders, outs, strict=True):
                self.env[v] = n
        self.flush()
        outs = []
        for x in self.jaxpr.outvars:
            if isinstance(x, Literal):
                outs.append(literal(x))
            else:
                outs.append(self.value(x))
        return outs

    def comment(self, e: JaxprEqn) -> str:
        def nm(x: Atom) -> str:
            if isinstance(x, Literal):
                return literal(x)
            return self.env.get(x) or "(broadcast)"

        return fmt_line(e, [v.aval.str_short() for v in e.out_binders], [nm(x) for x in e.inputs])

    def elementwise(self, e: JaxprEqn) -> None:
        out = e.out_binders[0]
        shape = out.aval.shape
        ctor = dtype_ctor(out.aval.dtype)
        if shape == ():
            args = tuple(self.scalar(x) for x in e.inputs)
            expr = elementwise_expr(e, args)
            if expr is None:
                raise Decline
            name = self.fn.fresh("v")
            outs = [f"{name}:{short(out.aval.dtype)}"]
            self.fn.emit(self.depth, f"# {fmt_line(e, outs, list(args))}")
            self.fn.emit(self.depth, f"{name} = {ctor}({expr})")
            self.env[out] = name
            return
        for x in e.inputs:
            if x.aval.shape not in ((), shape):
                raise Decline
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
            expr = elementwise_expr(e, args)
            if expr is None:
                raise Decline
            dt = e.out_binders[0].aval.dtype
            self.fn.emit(d, f"# {fmt_line(e, [f'{local}:{short(dt)}'], list(args))}")
            self.fn.emit(d, f"{local} = {dtype_ctor(dt)}({expr})")
        for v, name, local in stores:
            self.fn.emit(d, f"{name}[{', '.join(idx)}] = {local}")
            self.env[v] = name
        self.run_eqns = []
        self.run_local = {}
        self.run_shape = None


# ---------------------------------------------------------------------------
# Loops shared by the rules of nested loops and the top level
# ---------------------------------------------------------------------------


def scan_loop(
    fn: LoopFunction,
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
        fn.emit(d, f"{subscript(y, [i, *idx])} = {subscript(o, idx)}")
    assign_carries(fn, depth + 1, jaxpr.outvars[:ncarry], carries, outs[:ncarry])


def assign_carries(
    fn: LoopFunction, depth: int, outvars: Any, carries: list[str], outs: list[str]
) -> None:
    """``k0, k1 = v5, k0``: all new carries computed from the old ones at once."""
    if not carries:
        return
    rhs = [fn.mut(o) if v.aval.shape else o for v, o in zip(outvars, outs, strict=True)]
    fn.emit(depth, f"{', '.join(carries)} = {', '.join(rhs)}")


def while_loop(
    fn: LoopFunction,
    depth: int,
    cj: Jaxpr,
    cond_consts: list[str],
    bj: Jaxpr,
    body_consts: list[str],
    carries: list[str],
) -> None:
    if len(cj.outvars) != 1 or len(bj.outvars) != len(carries):
        raise Decline
    fn.emit(depth, "while True:")
    (c,) = fn.block(cj, cond_consts + carries, depth + 1)
    fn.emit(depth + 1, f"if not {c}:")
    fn.emit(depth + 2, "break")
    outs = fn.block(bj, body_consts + carries, depth + 1)
    assign_carries(fn, depth + 1, bj.outvars, carries, outs)


# ---------------------------------------------------------------------------
# Top level: the loop function and its call in the driver
# ---------------------------------------------------------------------------


def _load(
    source: str, sig: tuple[Any, ...], ctx: DriverContext, what: str, shown: str
) -> str | None:
    """Load the loop function; its driver-global name, or None to fall back. ``shown``
    is its source as ``as_text`` lists it (with the driver's names of the arguments)."""
    global native_loops_built

    try:
        kernel = load_source(source, sig)
    except Exception as err:  # a Numba typing gap: stay correct with the Python loop
        if codegen.strict_kernels:
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
    # the driver registers the kernel (as_text, compile count)
    return ctx.const(KernelListing(kernel, shown))


def _numba_type(dt: np.dtype, ndim: int) -> Any:
    from numba import types
    from numba.np.numpy_support import from_dtype

    if ndim == 0:
        return from_dtype(dt)
    return types.Array(from_dtype(dt), ndim, "C", readonly=True)


def _finish(
    fn: LoopFunction,
    ctx: DriverContext,
    params: list[str],
    avals: list[Any],
    rets: list[str],
    what: str,
    with_n: bool,
) -> str | None:
    """Assemble the module, load it and return the driver's call expression."""

    def desc(name: str, a: Any) -> str:
        return f"{name}={short(a.dtype)}" + (f"[{a.ndim}d C ro]" if a.ndim else "")

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
    values = [f"{p}={a}" for p, a in zip(params, ctx.args, strict=True)]
    values = [*([f"g0..g{len(gnames) - 1}=constants"] if gnames else []), *values]
    shown = lines[:2] + [f"# driver values: {', '.join(values)}"] + lines[2:]
    kn = _load(source, sig, ctx, what, "\n".join(shown) + "\n")
    if kn is None:
        return None
    args = [ctx.const(c) for c in fn.consts]
    exact = ctx.exact or (False,) * len(ctx.args)
    for a, arg, ok in zip(ctx.in_avals, ctx.args, exact, strict=True):
        # 0-d values already of their dtype go to the compiled entry point as they are
        args.append(f"_asc({arg})" if a.ndim else arg if ok else f"{dtype_ctor(a.dtype)}({arg})")
    if with_n:
        args.append(str(int(ctx.params["length"])))
    return f"{kn}({', '.join(args)})  {MARKER}"


def _carry_params(fn: LoopFunction, avals: list[Any], first: int) -> tuple[list[str], list[str]]:
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


def as_one_loop(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` as one ``scan`` of length 1 whose body is all of ``jaxpr``, when every
    input and output is 0-d, it runs at least one loop, every other equation is 0-d
    arithmetic, and the whole has a native form: the driver then makes one call of
    one native loop function (the Euler integration's value and gradient: a forward
    loop, scalar arithmetic, a reverse loop) instead of a call per loop, the
    conversion and boxing of each loop's results, and NumPy scalar arithmetic
    between them. Anything else is returned unchanged (products and other array work
    at the top level keep BLAS and the fused kernels)."""
    if not enabled or not jaxpr.eqns:
        return jaxpr
    loops_ = (control_flow.scan_p, control_flow.while_p)
    if not any(e.primitive in loops_ for e in jaxpr.eqns):
        return jaxpr
    for v in (*jaxpr.invars, *jaxpr.outvars):
        if v.aval.shape != () or not _ok_dtype(np.dtype(v.aval.dtype)):
            return jaxpr
    for e in jaxpr.eqns:
        if e.primitive not in loops_ and any(
            x.aval.shape != () for x in (*e.inputs, *e.out_binders)
        ):
            return jaxpr
    outs = [Var(x.aval) for x in jaxpr.outvars]
    init = [Var(x.aval) for x in jaxpr.outvars]  # unread: the body computes the outputs
    body = Jaxpr((), (*jaxpr.constvars, *jaxpr.invars, *init), jaxpr.eqns, jaxpr.outvars)
    fn = LoopFunction()  # a dry run: the planner declines what it cannot lower
    try:
        names = [f"s{j}" for j in range(len(jaxpr.constvars) + len(jaxpr.invars))]
        fn.block(body, names + [f"k{j}" for j in range(len(init))], 2)
    except Decline:
        return jaxpr
    if len(fn.lines) + 8 > MAX_LINES:  # + the scan's own lines (loop, index, carries)
        return jaxpr  # (native_scan would decline it: a Python loop around one driver)
    zeros = [Literal(np.zeros((), x.aval.dtype)[()], x.aval) for x in jaxpr.outvars]
    n_in = len(jaxpr.constvars) + len(jaxpr.invars)
    eqn = JaxprEqn(
        control_flow.scan_p,
        (*jaxpr.constvars, *jaxpr.invars, *zeros),
        {
            "jaxpr": ClosedJaxpr(body, []),
            "num_consts": n_in,
            "num_carry": len(outs),
            "length": 1,
            "reverse": False,
            "linear": (False,) * (n_in + len(outs)),
        },
        tuple(outs),
    )
    return Jaxpr(jaxpr.constvars, jaxpr.invars, (eqn,), tuple(outs))


def native_scan(ctx: DriverContext) -> str | None:
    """A driver expression calling one native loop for this ``scan``, or None."""
    if not enabled:
        return None
    p = ctx.params
    nc, ncarry, reverse = p["num_consts"], p["num_carry"], p["reverse"]
    avals = list(ctx.in_avals)
    fn = LoopFunction()
    try:
        for a in avals:
            check_aval(a)
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
        scan_loop(fn, 1, jaxpr, cnames + s_names, carries, x_names, ys, "n", reverse)
    except Decline:
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
    fn = LoopFunction()
    try:
        for a in avals:
            check_aval(a)
        cj, cc = fn.open(p["cond_jaxpr"])
        bj, bc = fn.open(p["body_jaxpr"])
        cs = [f"cs{j}" for j in range(ncc)]
        bs = [f"bs{j}" for j in range(nbc)]
        fn.ro.update(n for n, a in zip(cs + bs, avals) if a.ndim)
        k_params, carries = _carry_params(fn, avals[ncc + nbc :], 0)
        while_loop(fn, 1, cj, cc + cs, bj, bc + bs, carries)
    except Decline:
        return None
    return _finish(fn, ctx, cs + bs + k_params, avals, carries, "while", with_n=False)


def _stack_store(fn: LoopFunction, depth: int, stack: str, i: str, value: str, aval: Any) -> None:
    """``stack[i] = value`` element by element (an array setitem is slow to compile)."""
    idx, d = fn.loops(aval.shape, depth)
    fn.emit(d, f"{subscript(stack, [i, *idx])} = {subscript(value, idx)}")


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
    fn = LoopFunction()
    try:
        for a in avals + acc_avals:
            check_aval(a)
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
            raise Decline
        outs = fn.block(bj, bc + bs + carries, 3)
        assign_carries(fn, 3, bj.outvars, carries, outs)
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
            raise Decline
        outs = fn.block(wj, wc + ws + bs + stored + cts + accs, 2)
        assign_carries(fn, 2, wj.outvars, accs + cts, outs)
    except Decline:
        return None
    params = ws + cs + bs + k_params + c_params
    return _finish(fn, ctx, params, avals, accs + cts, "while reverse sweep", with_n=False)


__all__ = [
    "MARKER",
    "MAX_DOT_FMAS",
    "MAX_LINES",
    "as_one_loop",
    "enabled",
    "native_scan",
    "native_while",
    "native_while_transpose",
]
