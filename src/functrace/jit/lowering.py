"""Lowering a closed jaxpr to a Python driver plus fused Numba kernels.

Pipeline: inline ``custom_jvp``/``custom_vjp`` calls (``codegen.inline_calls``) ->
dead-code elimination -> ``transpose(dot)`` folding and *planning* (which equations
fuse into which kernel, ``fusion.py``) -> *code generation* (here).

Code generation names driver variables like the printed jaxpr (``a``, ``b``...: the
namer of ``functrace.ir``, so ``LoweredProgram.jaxpr``, the jaxpr actually lowered,
prints with the driver's names) and puts each equation as a comment above its code.
A kernel is a driver global named ``_k<n>``, the name its section of
:meth:`LoweredProgram.as_text` carries; its comments show the equations it computes
with the driver's names. Arrays read only inside the call live in scratch buffers
reused across calls (``fusion.scratch_values``); other large arrays (outputs included)
come from the program's buffer pool (``functrace._buffers.BufferPool``), reused once nobody holds
them.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import linecache
import math
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrace import core, lax
from functrace._array import Array, to_array
from functrace._buffers import BufferPool, poolable
from functrace.core import Primitive
from functrace.errors import MissingRuleError
from functrace.interpreters.numba_rules import (
    DriverContext,
    DriverRule,
    Emitter,
    dtype_ctor,
    numba_dtype_ok,
    numba_emitters,
)
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, dce_jaxpr, var_namer

# driver_rules and parallel: imported to register the rules
from functrace.jit import codegen, diagnostics, driver_rules, loops, parallel  # noqa: F401
from functrace.jit.codegen import (
    delete_after_last_use,
    elementwise_expr,
    fmt_eqn,
    fmt_line,
    inline_calls,
    probe_ctx,
    short,
)
from functrace.jit.fusion import (
    SCRATCH_MAX_BYTES,
    SCRATCH_MAX_TOTAL,
    Group,
    NoScratch,
    Plan,
    fold_transposed_dots,
    forward_unit_products,
    plan,
    reduction_kinds,
    scratch_values,
)
from functrace.jit.kernels import (
    KernelListing,
    KernelSpec,
    LoadedKernel,
    kernel_source,
    load_kernel,
)

Atom = Var | Literal

IMPL = "impl"
_BLAS_IMPLS = {lax.conv_general_dilated_p}
"""Primitives whose impl runs BLAS products itself (the driver wraps it: parallel.blas_impl)."""
"""Marker returned by :func:`lowering_rule` for the default "driver calls impl" rule."""


def lowering_rule(p: Primitive) -> Emitter | str:
    """The driver rule ``jit`` uses for ``p``: its entry, :data:`IMPL`, or an error."""
    rule = numba_emitters.get(p)
    if rule is not None and not (isinstance(rule, DriverRule) and rule.emit is None):
        return rule
    if p in core.impl_rules:
        return IMPL
    raise MissingRuleError(
        p.name,
        "jit (Numba lowering)",
        "impl_rules or numba_emitters",
        "functrace/lax or functrace/jit/driver_rules.py",
        "{p}.def_impl(impl), which jit's compiled driver calls (or a Numba emitter, "
        "numba_emitters[{p}])",
    )


def _py_exact(expr_probe: str, in_dtypes: tuple[np.dtype, ...], out_dtype: np.dtype) -> bool:
    """Whether ``expr`` evaluated by Python on NumPy scalars already has ``out_dtype``."""
    env: dict[str, Any] = {"np": np, "math": math}
    for i, dt in enumerate(in_dtypes):
        env[f"_x{i}"] = np.ones((), dt)[()]
    try:
        with np.errstate(all="ignore"):
            val = eval(expr_probe, env)  # noqa: S307 - our own generated expression
    except Exception:
        return False
    return type(val) is out_dtype.type


# ---------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------


@dataclass
class LoweredProgram:
    """The result of lowering: the driver callable and the texts that make it.

    ``jaxpr`` is the jaxpr actually lowered (calls inlined, dead code dropped,
    ``transpose(dot)`` folded): printed, its variables have the driver's names.
    ``kernel_names[i]`` is the driver global through which ``kernels[i]`` is called
    (``_k3``); ``kernel_texts[i]`` its source as :meth:`as_text` shows it, the
    comments naming the driver's values (the compiled source, ``kernels[i].source``,
    uses parameter names only, so one pattern is one kernel whatever it reads).
    ``buffers`` is the driver's pool of reused arrays (its subprograms have their own)."""

    driver: Any
    driver_source: str
    kernels: list[Any]  # kernels.LoadedKernel, in driver order
    compiled: int  # kernels compiled by Numba now (not loaded from memory or disk)
    seconds: float
    subprograms: list[tuple[str, LoweredProgram]] = field(default_factory=list)
    jaxpr: ClosedJaxpr | None = None
    kernel_names: list[str] = field(default_factory=list)
    kernel_texts: list[str] = field(default_factory=list)
    buffers: BufferPool = field(default_factory=BufferPool)

    def as_text(self) -> str:
        parts = ["# ==== driver (plain Python; kernels below) ====", self.driver_source]
        for name, k, text in zip(self.kernel_names, self.kernels, self.kernel_texts):
            parts.append(f"# ==== kernel {name}: {k.name}.py ====")
            parts.append(text)
        for what, prog in self.subprograms:
            parts.append(f"# ==== {what} (its own driver and kernels) ====")
            parts.append(prog.as_text())
        return "\n".join(parts)


def _kernel_args_error(err: TypeError) -> TypeError:
    """A kernel's rejection of its arguments (an array of unexpected dtype) as a
    functrace error; any other TypeError is returned unchanged."""
    msg = str(err)
    if "can't unbox array" in msg:  # the compiled entry point's dtype check
        got = "an array of another dtype"
    elif msg.startswith("functrace.jit: direct kernel"):  # a direct kernel's entry point
        got = "arrays of other dtypes, ranks or layouts"
    elif "No matching definition for argument type" in msg:  # a dispatcher's
        got = msg.splitlines()[0].split(":", 1)[-1].strip()
    else:
        return err
    new = TypeError(
        f"functrace.jit: expected a compiled kernel's arguments to have the types traced "
        f"for it, got {got}. A primitive's impl returned a dtype or layout its "
        f"abstract-eval rule did not announce: please report it; functrace.disable_jit() "
        f"runs the function eagerly meanwhile."
    )
    new.__cause__ = err
    return new


RELEASE_MIN_BYTES = 1 << 16
"""Intermediate arrays at least this large are deleted after their last use."""

_PY_CTORS = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
"""Python scalar type of a 0-d output by dtype kind (outputs marked ``py_outs``)."""


class _Gen:
    def __init__(
        self,
        jaxpr: Jaxpr,
        consts: list[Any],
        plan_: Plan,
        fname: str,
        out_tree: Any,
        scratch: set[Var] | None = None,
    ) -> None:
        self.jaxpr = jaxpr
        self.scratch = scratch or set()  # values allowed in reused buffers
        self.pooled: list[tuple[str, str]] = []  # (name, allocation expression)
        # scratch buffers: var -> {shape: name of the buffer's view of that shape}
        self.kernel_views: dict[Var, dict[tuple[int, ...], str]] = {}
        self.pool_bytes = 0
        self.buffers = BufferPool()  # arrays reused across calls once nobody holds them
        self.out_tree = out_tree
        self.plan = plan_
        self.fname = fname
        self.name = var_namer()
        self.ns: dict[str, Any] = {
            "np": np,
            "math": math,
            "_asc": np.ascontiguousarray,
            "_empty": np.empty,
        }
        self.lines: list[str] = []
        self.contig: set[Var] = set()  # known C-contiguous arrays
        self.fresh: set[Var] = set()  # known new, writable arrays
        self.exact0d: set[Var] = set()  # 0-d values known to be NumPy scalars of their dtype
        self.asc: dict[Var, str] = {}
        self.materialized: dict[Var, str] = {}
        self.lit_names: dict[tuple[Any, ...], str] = {}
        self.kernels: list[Any] = []
        self.kernel_names: list[str] = []
        self._readers: dict[Var, list[tuple[int | None, bool]]] | None = None
        self._read: set[Var] | None = None
        self.kernel_texts: list[str] = []
        self.subprograms: list[tuple[str, LoweredProgram]] = []
        self.compiled = 0
        self._counter = 0
        self.consts = consts
        # names in the printed-jaxpr order
        for v in (*jaxpr.constvars, *jaxpr.invars):
            self.name(v)
        for e in jaxpr.eqns:
            for v in e.out_binders:
                self.name(v)

    # -- namespace helpers ------------------------------------------------
    def glob(self, prefix: str, value: Any) -> str:
        if isinstance(value, LoadedKernel):  # a kernel loaded by a driver rule
            return self.add_kernel(value, value.dispatcher, value.source)
        if isinstance(value, KernelListing):  # the same with its listing (native loops)
            return self.add_kernel(value.kernel, value.kernel.entry, value.text)
        n = f"_{prefix}{self._counter}"
        self._counter += 1
        self.ns[n] = value
        return n

    def add_kernel(self, kernel: LoadedKernel, callee: Any, text: str) -> str:
        """Register ``kernel`` (listed by ``as_text`` as ``text``), called as ``callee``;
        its driver-global name ``_k<n>``, the name of its section in ``as_text``."""
        self.kernels.append(kernel)
        self.compiled += int(kernel.compiled)
        n = self.glob("k", callee)
        self.kernel_names.append(n)
        self.kernel_texts.append(text)
        return n

    def literal(self, lit: Literal) -> str:
        dt = lit.aval.dtype
        val = np.asarray(lit.val, dtype=dt)[()] if dt.kind in "biufc" else lit.val
        key = (dt.str, repr(val))
        n = self.lit_names.get(key)
        if n is None:
            n = self.lit_names[key] = self.glob("l", val)
        return n

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    # -- values -----------------------------------------------------------
    def atom(self, x: Atom) -> str:
        """A driver expression for ``x`` (materializing virtual broadcasts)."""
        if isinstance(x, Literal):
            return self.literal(x)
        v = self.plan.virtual.get(x)
        if v is None:
            return self.name(x)
        got = self.materialized.get(x)
        if got is None:
            expanded = [1] * len(v.shape)
            for j, d in enumerate(v.dims):
                expanded[d] = v.src.aval.shape[j]
            got = self.materialized[x] = self.name(x)
            self.emit(f"# {got}:{x.aval.str_short()} = broadcast_in_dim (a read-only view)")
            self.emit(
                f"{got} = np.broadcast_to(np.reshape({self.atom(v.src)}, "
                f"{tuple(expanded)}), {tuple(v.shape)})"
            )
        return got

    def contiguous(self, v: Var) -> str:
        if v in self.contig:
            return self.name(v)
        got = self.asc.get(v)
        if got is None:
            got = self.asc[v] = f"{self.name(v)}_c"
            self.emit(f"{got} = _asc({self.name(v)})")
        return got

    # -- units ------------------------------------------------------------
    def gen(self, py_outs: Sequence[bool] = ()) -> str:
        jaxpr = self.jaxpr
        for v, c in zip(jaxpr.constvars, self.consts):
            if isinstance(c, np.ndarray) and c.ndim > 0:
                c = np.ascontiguousarray(c)
                self.contig.add(v)
            elif (
                isinstance(c, np.ndarray | np.generic)
                and c.ndim == 0
                or isinstance(c, int | float | bool | complex)
            ) and numba_dtype_ok(v.aval.dtype):
                c = np.asarray(c, dtype=v.aval.dtype)[()]
                self.exact0d.add(v)
            self.ns[self.name(v)] = c
        params = [self.name(v) for v in jaxpr.invars]
        self.lines.append(f"# functrace.jit driver for {self.fname}")
        self.lines.append(f"def _driver({', '.join(params)}):")
        if jaxpr.invars:
            self.emit(
                "# inputs: "
                + " ".join(f"{self.name(v)}:{v.aval.str_short()}" for v in jaxpr.invars)
            )
        for v in jaxpr.invars:
            if v.aval.shape == () and numba_dtype_ok(v.aval.dtype):
                self.emit(f"{self.name(v)} = {dtype_ctor(v.aval.dtype)}({self.name(v)})")
                self.exact0d.add(v)
        for kind, unit in self.plan.schedule:
            if kind == "group":
                self.gen_group(unit)
            elif kind == "scalar":
                self.gen_scalar(unit)
            elif kind == "virtual":
                self.emit(f"# {fmt_eqn(unit, self.name)}  (virtual: read by broadcast indexing)")
            else:
                self.gen_other(unit)
        outs = [self.output(x) for x in jaxpr.outvars]
        py = list(py_outs) + [False] * (len(outs) - len(py_outs))
        for i in range(len(outs)):
            if py[i]:
                outs[i] = f"{_PY_CTORS[jaxpr.outvars[i].aval.dtype.kind]}({outs[i]})"
            elif self.scalar_output(jaxpr.outvars[i]):
                # a fresh NumPy scalar of the output's dtype, read in place by a 0-d
                # Array (one constructor call; what _to_array does, less its checks)
                dt = self.glob("dt", jaxpr.outvars[i].aval.dtype)
                outs[i] = f"_new_array(_Array, (), {dt}, {outs[i]})"
            else:  # an immutable functrace.Array, as eager transforms return
                outs[i] = f"_to_array({outs[i]})"
        self.ns.update(_to_array=to_array, _new_array=np.ndarray.__new__, _Array=Array)
        if self.pooled:
            self.emit("_pool.append(_s)  # the scratch buffers, for the next call")
        self.emit(f"return {self.rebuild(outs)}")
        head = self.lines.index(next(ln for ln in self.lines if ln.startswith("def ")))
        self.release_dead(head)
        if self.pooled:
            # A call takes a set of scratch buffers (or makes one) and gives it back when
            # it returns: concurrent or re-entrant calls never share a set.
            names = ", ".join(n for n, _ in self.pooled)
            self.lines[head + 1 : head + 1] = [
                "    try:",
                "        _s = _pool.pop()",
                "    except IndexError:",
                "        _s = _new_scratch()",
                f"    {names}, = _s",
            ]
            alloc = [f"    {n} = {expr}" for n, expr in self.pooled]
            self.lines[head:head] = [
                "def _new_scratch():",
                *alloc,
                f"    return ({names},)",
                "",
                "",
            ]
            head += len(alloc) + 4
            self.ns["_pool"] = []
        if self.kernels:  # zero-cost try: only a failing call pays for it
            body = ["    " + ln for ln in self.lines[head + 1 :]]
            self.lines[head + 1 :] = [
                "    try:",
                *body,
                "    except TypeError as _err:",
                "        raise _kernel_args_error(_err)",
            ]
            self.ns["_kernel_args_error"] = _kernel_args_error
        return "\n".join(self.lines) + "\n"

    def release_dead(self, head: int) -> None:
        """Insert ``del`` statements so that each large intermediate array is freed after
        the last statement that reads it (not when the driver returns): the peak memory
        of a call is then that of its live values, as in eager code (a checkpointed
        model's forward values are freed before its backward pass)."""
        big: dict[str, int] = {}
        for e in self.jaxpr.eqns:
            for v in e.out_binders:
                nbytes = math.prod(v.aval.shape) * v.aval.dtype.itemsize
                if nbytes >= RELEASE_MIN_BYTES:
                    n = self.name(v)
                    big[n] = big[f"{n}_c"] = nbytes
        if not big:
            return
        pooled = {n for n, _ in self.pooled}
        self.lines[head + 1 :] = delete_after_last_use(self.lines[head + 1 :], big, pooled)

    def rebuild(self, outs: list[str]) -> str:
        """The return expression: the output pytree built by generated code (tuples,
        lists, dicts, None, unregistered namedtuples), or one level at a time by the
        ``unflatten`` of the node's record (``PyTreeDef.node_def()``) for every other
        node, including a namedtuple class that has a registration of its own."""
        if self.out_tree is None:
            return f"({', '.join(outs)}{',' if len(outs) == 1 else ''})"
        it = iter(outs)

        def build(td: Any) -> str:
            nd = td.node_def()
            if nd is None:
                return next(it)
            kind = nd.kind
            typ, aux = td.node_data()
            kids = [build(c) for c in td.children()]
            if kind == "tuple":
                return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
            if kind == "list":
                return f"[{', '.join(kids)}]"
            if kind == "none":
                return "None"
            if kind == "dict" and all(type(k) in (str, int) for k in aux):
                return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, kids)) + "}"
            if kind == "namedtuple":
                return f"{self.glob('t', typ)}({', '.join(kids)})"
            fn = self.glob("u", functools.partial(nd.unflatten, aux))  # one level
            return f"{fn}([{', '.join(kids)}])"

        return build(self.out_tree)

    def output(self, x: Atom) -> str:
        if isinstance(x, Literal):
            if x.aval.shape == ():
                return self.literal(x)
            return f"np.array({self.literal(x)})"
        if x in self.plan.virtual:
            return f"np.array({self.atom(x)})"
        n = self.name(x)
        if x.aval.shape == ():
            if x in self.exact0d or not numba_dtype_ok(x.aval.dtype):
                return n
            return f"{dtype_ctor(x.aval.dtype)}({n})"
        if x in self.fresh:
            return n
        if x in set(self.jaxpr.constvars) or x in set(self.jaxpr.invars):
            # never hand out the captured constant or the caller's input itself: the
            # immutable result must not change when someone writes to that array
            return f"np.array({n})"
        return n  # _to_array copies it if it is a read-only view

    def read_vars(self) -> set[Var]:
        """The values some equation reads or the driver returns (once per driver)."""
        if self._read is None:
            self._read = {x for e in self.jaxpr.eqns for x in e.inputs if isinstance(x, Var)}
            self._read.update(x for x in self.jaxpr.outvars if isinstance(x, Var))
        return self._read

    def is_exact0d(self, x: Atom) -> bool:
        """Whether the driver holds the 0-d ``x`` as a NumPy scalar of its dtype."""
        if isinstance(x, Literal):
            return x.aval.shape == () and x.aval.dtype.kind in "biufc"
        return x in self.exact0d

    def scalar_output(self, x: Any) -> bool:
        """Whether :meth:`output` gives ``x`` as a NumPy scalar of its numeric dtype."""
        return isinstance(x, Var) and x.aval.shape == () and numba_dtype_ok(x.aval.dtype)

    def gen_scalar(self, eqn: JaxprEqn) -> None:
        out = eqn.out_binders[0]
        args = tuple(self.atom(x) for x in eqn.inputs)
        expr = elementwise_expr(eqn, args)
        assert expr is not None
        probe = elementwise_expr(eqn, probe_ctx(eqn).args)
        exact = (
            probe is not None
            and all(isinstance(x, Literal) or x in self.exact0d for x in eqn.inputs)
            and _py_exact(probe, probe_ctx(eqn).in_dtypes, out.aval.dtype)
        )
        if not exact:
            expr = f"{dtype_ctor(out.aval.dtype)}({expr})"
        self.emit(f"# {fmt_eqn(eqn, self.name)}")
        self.emit(f"{self.name(out)} = {expr}")
        self.exact0d.add(out)

    def gen_other(self, eqn: JaxprEqn) -> None:
        p = eqn.primitive
        if self.scratch_reshape(eqn):
            return
        rule = lowering_rule(p)
        args = tuple(self.atom(x) for x in eqn.inputs)
        expr = None
        fresh = keeps = contig = False
        if isinstance(rule, DriverRule) and rule.emit is not None:
            ctx = DriverContext(
                args,
                tuple(x.aval for x in eqn.inputs),
                tuple(v.aval for v in eqn.out_binders),
                dict(eqn.params),
                lambda val: self.glob("g", val),
                self.subprogram,
                tuple(self.is_exact0d(x) for x in eqn.inputs),
            )
            expr = rule.emit(ctx)
            fresh = rule.fresh and expr is not None
            contig = fresh and rule.contig
            src = eqn.inputs[0] if eqn.inputs else None
            keeps = rule.keeps_contig and expr is not None and isinstance(src, Var)
            keeps = keeps and src in self.contig
        if expr is None:
            impl = core.impl_rules.get(p)
            if impl is None:  # pragma: no cover - lowering_rule raised already
                raise MissingRuleError(p.name, "jit", "numba_emitters", "functrace/lax")
            fn = functools.partial(impl, **eqn.params) if eqn.params else impl
            if p in _BLAS_IMPLS:
                fn = parallel.blas_impl(fn)  # its products: OpenBLAS's threads only if they pay
            expr = f"{self.glob('f', fn)}({', '.join(args)})"
        elif (
            fresh
            and self.takes_out(expr)
            and eqn.out_binders[0].aval.dtype.kind in "fc"
            and eqn.out_binders[0].aval.dtype == eqn.inputs[0].aval.dtype  # np.dot's own type
        ):
            if self.scratch_buffer(eqn.out_binders[0]):
                expr = f"{expr[:-1]}, {self.name(eqn.out_binders[0])})"  # BLAS writes into it
                fresh = False
            elif alloc := self.pool_alloc(eqn.out_binders[0]):
                expr = f"{expr[:-1]}, {alloc})"  # into a pooled buffer (still fresh)
        outs = [self.name(v) for v in eqn.out_binders]
        self.emit(f"# {fmt_eqn(eqn, self.name)}")
        if p.multiple_results:
            self.emit(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {expr}")
        else:
            self.emit(f"{outs[0]} = {expr}")
        for v, n in zip(eqn.out_binders, outs):
            if v.aval.shape == ():
                if fresh and p in reduction_kinds() and v.aval.dtype.kind in "fc":
                    self.exact0d.add(v)  # a NumPy scalar of the operand's dtype already
                elif numba_dtype_ok(v.aval.dtype) and v in self.read_vars():
                    self.emit(f"{n} = {dtype_ctor(v.aval.dtype)}({n})")
                    self.exact0d.add(v)
            elif fresh:
                self.fresh.add(v)
                if contig:
                    self.contig.add(v)
            elif keeps:
                self.contig.add(v)

    def takes_out(self, expr: str) -> bool:
        """Whether ``expr`` calls ``np.dot`` or a function called like it (its result
        can then be written into a given array: ``f(a, b, out)``)."""
        head = expr.split("(", 1)[0]
        return head == "np.dot" or getattr(self.ns.get(head), "takes_out", False)

    def scratch_buffer(self, v: Var) -> bool:
        """Give ``v`` a scratch buffer (allocated in ``_new_scratch``) if allowed."""
        shape, dt = v.aval.shape, v.aval.dtype
        nbytes = math.prod(shape) * dt.itemsize
        if (
            v not in self.scratch
            or not shape
            or nbytes == 0
            or nbytes > SCRATCH_MAX_BYTES
            or self.pool_bytes + nbytes > SCRATCH_MAX_TOTAL
            or dt.kind not in "biufc"
        ):
            return False
        n = self.name(v)
        self.pool_bytes += nbytes
        self.pooled.append((n, f"_empty({shape}, {dtype_ctor(dt)})"))
        self.kernel_views[v] = {shape: n}
        self.contig.add(v)
        return True

    def pool_alloc(self, v: Var) -> str | None:
        """A driver expression taking an array for ``v`` from the program's buffer pool
        (a C-contiguous writable array held by nobody else), or None if ``v`` is too
        small to be pooled. Its whole array must be written before it is read."""
        shape, dt = v.aval.shape, v.aval.dtype
        if not poolable(shape, dt):
            return None
        return f"{self.glob('b', self.buffers.allocator(shape, dt))}()"

    def scratch_reshape(self, eqn: JaxprEqn) -> bool:
        """A reshape of a scratch buffer is made once, with the buffer (True if so)."""
        reshape_p, squeeze_p = lax.reshape_p, lax.squeeze_p
        src = eqn.inputs[0] if eqn.inputs else None
        if eqn.primitive not in (reshape_p, squeeze_p) or not isinstance(src, Var):
            return False
        views = self.kernel_views.get(src)
        if views is None:
            return False
        out = eqn.out_binders[0]
        n = self.name(out)
        self.emit(f"# {fmt_eqn(eqn, self.name)}  (a view of a scratch buffer)")
        got = views.get(out.aval.shape)
        if got is None:
            views[out.aval.shape] = n
            self.pooled.append((n, f"{views[src.aval.shape]}.reshape({out.aval.shape})"))
        elif got != n:
            self.emit(f"{n} = {got}")
        self.kernel_views[out] = views
        self.contig.add(out)
        return True

    def subprogram(self, jaxpr: Jaxpr, what: str) -> Any:
        """Lower a sub-jaxpr (loop body, branch) to its own driver."""
        closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(jaxpr, [])
        prog = lower(closed, f"{what} in {self.fname}", whole=False)
        self.compiled += prog.compiled
        self.subprograms.append((what, prog))
        return prog.driver

    # -- fused kernels ----------------------------------------------------
    def gen_group(self, g: Group) -> None:
        shape = g.shape
        red_kinds = reduction_kinds()
        elem = [e for e in g.eqns if e.primitive not in red_kinds]
        reds = [e for e in g.eqns if e.primitive in red_kinds]  # read members of `elem`
        produced = {e.out_binders[0] for e in elem}
        uses_outside = self._outside_uses(g, produced)
        outputs = [e.out_binders[0] for e in elem if e.out_binders[0] in uses_outside]
        out_names = [self.name(v) for v in outputs]
        red_outs = [e.out_binders[0] for e in reds]

        kernel_views = self.kernel_views

        def allocate(coll: tuple[int, ...] | None = None) -> None:
            for e in g.eqns:
                self.emit(f"# {fmt_eqn(e, self.name)}")
            for v in (*outputs, *red_outs):
                n, shape_v = self.name(v), v.aval.shape
                if coll is not None and self.scratch_buffer(v):
                    fl = red_full[red_outs.index(v)] if v in red_outs else (True,) * len(coll)
                    cshape = tuple(c if f else 1 for c, f in zip(coll, fl))
                    if cshape != shape_v:
                        kernel_views[v][cshape] = f"{n}_k"
                        self.pooled.append((f"{n}_k", f"{n}.reshape({cshape})"))
                    self.emit(f"# {n}: a scratch buffer (see _new_scratch)")
                else:
                    alloc = self.pool_alloc(v) or f"_empty({shape_v}, {dtype_ctor(v.aval.dtype)})"
                    self.emit(f"{n} = {alloc}")
                    self.fresh.add(v)
                    self.contig.add(v)

        if 0 in shape:
            allocate()
            self.emit("# (empty arrays: no kernel call)")
            return

        # External inputs: arrays (source var, dims into `shape`) and scalars.
        arrays: list[tuple[Var, tuple[int, ...]]] = []
        array_idx: dict[tuple[int, tuple[int, ...]], int] = {}
        scalars: list[Atom] = []
        scalar_idx: dict[Any, int] = {}
        local: dict[Var, str] = {}
        ident = tuple(range(len(shape)))

        def scalar_input(x: Atom) -> str:
            key = ("lit", x.aval.dtype.str, repr(x.val)) if isinstance(x, Literal) else id(x)
            j = scalar_idx.get(key)
            if j is None:
                j = scalar_idx[key] = len(scalars)
                scalars.append(x)
            return f"s{j}"

        def array_input(src: Var, dims: tuple[int, ...]) -> str:
            key = (id(src), dims)
            j = array_idx.get(key)
            if j is None:
                j = array_idx[key] = len(arrays)
                arrays.append((src, dims))
            return f"a{j}"

        def kernel_atom(x: Atom) -> str:
            if isinstance(x, Literal):
                return scalar_input(x)
            if x in local:
                return local[x]
            v = self.plan.virtual.get(x)
            src, dims = (v.src, v.dims) if v is not None else (x, ident)
            if isinstance(src, Literal) or src.aval.shape == ():
                return scalar_input(src)
            return array_input(src, dims)

        # Per-axis "varies" flags for each array input, then collapse axes.
        body_exprs: list[tuple[JaxprEqn, str, tuple[str, ...]]] = []
        for k, e in enumerate(elem):
            args = tuple(kernel_atom(x) for x in e.inputs)
            local[e.out_binders[0]] = f"v{k}"
            expr = elementwise_expr(e, args)
            assert expr is not None
            body_exprs.append((e, expr, args))

        def varies(src: Var, dims: tuple[int, ...]) -> list[bool]:
            flags = [False] * len(shape)
            for j, d in enumerate(dims):
                if src.aval.shape[j] != 1 and shape[d] != 1:
                    flags[d] = True
            return flags

        flags = [varies(s, d) for s, d in arrays]
        red_flags = [
            [d not in e.params["axes"] and shape[d] != 1 for d in range(len(shape))] for e in reds
        ]
        flags += red_flags  # collapsed blocks never mix reduced and kept axes
        kept = [d for d in range(len(shape)) if shape[d] != 1]
        blocks: list[list[int]] = []
        for d in kept:
            if blocks and all(f[d] == f[blocks[-1][-1]] for f in flags):
                blocks[-1].append(d)
            else:
                blocks.append([d])
        if not blocks:
            blocks = [[]]
        coll = tuple(int(np.prod([shape[d] for d in b], dtype=np.int64)) for b in blocks)
        full = [tuple(bool(b) and f[b[0]] for b in blocks) for f in flags]
        red_full = full[len(arrays) :]

        spec = KernelSpec(ndim=len(blocks))
        spec.arrays = [(s.aval.dtype, fl) for (s, _), fl in zip(arrays, full)]
        spec.scalars = [x.aval.dtype for x in scalars]
        spec.outputs = [v.aval.dtype for v in outputs]
        depth: dict[str, int] = {f"a{j}": spec.load_depth(j) for j in range(len(arrays))}
        depth.update({f"s{j}": 0 for j in range(len(scalars))})
        shown = []  # the body with the driver's names in the comments (as_text)
        for k, (e, expr, args) in enumerate(body_exprs):
            d = max((depth[a] for a in args), default=0)
            depth[f"v{k}"] = d
            out_dt = e.out_binders[0].aval.dtype
            comment = fmt_line(e, [f"v{k}:{short(out_dt)}"], list(args))
            line = f"v{k} = {dtype_ctor(out_dt)}({expr})"
            spec.body.append((d, comment, line))
            shown.append((d, f"{fmt_eqn(e, self.name)}  (v{k})", line))
        spec.stores = [local[v] for v in outputs]
        spec.reductions = [
            (red_kinds[e.primitive], e.out_binders[0].aval.dtype, fl, kernel_atom(e.inputs[0]))
            for e, fl in zip(reds, red_full)
        ]
        spec.explicit_sizes = not outputs
        split = parallel.kernel_in_parallel(spec, coll)  # rows across threads

        try:
            kernel = load_kernel(spec)
        except Exception as err:  # a Numba typing gap: stay correct, say so once
            if codegen.strict_kernels:
                raise
            if self.scratch:
                raise NoScratch from err  # impls may return views: no reuse anywhere
            diagnostics.warn_kernel_fallback(g.eqns, err)
            for e in g.eqns:
                self.gen_other(e)
            return
        allocate(coll)
        callee = kernel.entry
        if split:
            callee = parallel.split_kernel(
                callee, [fl[0] for fl in full[: len(arrays)]], len(scalars), len(outputs), coll
            )
        kn = self.add_kernel(kernel, callee, "")
        values = [f"x{j}={self.name(s)}" for j, (s, _) in enumerate(arrays)]
        values += [f"s{j}={self.atom(x)}" for j, x in enumerate(scalars)]
        values += [f"o{m}={n}" for m, n in enumerate(out_names)]
        values += [f"y{m}={self.name(v)}" for m, v in enumerate(red_outs)]
        text = kernel_source(dataclasses.replace(spec, body=shown)).split("\n")
        text.insert(2, f"# driver values: {', '.join(values)}")
        self.kernel_texts[-1] = "\n".join(text)
        call_args = []
        invars = set(self.jaxpr.invars)  # shapes checked by the call's signature
        for (src, _), fl in zip(arrays, full):
            expr = self.contiguous(src)
            cshape = tuple(c if f else 1 for c, f in zip(coll, fl))
            # The entry point trusts ranks: reshape (which checks the size) unless the
            # array's shape is known to be exactly this one.
            views = self.kernel_views.get(src)
            if views is not None:  # a scratch buffer: its view of this shape, made once
                expr = views.get(cshape) or ""
                if not expr:
                    expr = views[cshape] = f"{self.name(src)}_r{len(views)}"
                    self.pooled.append((expr, f"{views[src.aval.shape]}.reshape({cshape})"))
            elif cshape != src.aval.shape or not (src in self.contig or src in invars):
                expr = f"{expr}.reshape({cshape})"
            call_args.append(expr)
        for x in scalars:
            if isinstance(x, Var) and x not in self.exact0d:
                call_args.append(f"{dtype_ctor(x.aval.dtype)}({self.atom(x)})")
            else:
                call_args.append(self.atom(x))
        for v, n in zip(outputs, out_names):
            if v in kernel_views:
                call_args.append(kernel_views[v][coll])
            else:
                call_args.append(n if coll == shape else f"{n}.reshape({coll})")
        for v, fl in zip(red_outs, red_full):
            cshape = tuple(c if f else 1 for c, f in zip(coll, fl))
            n = self.name(v)
            if v in kernel_views:
                call_args.append(kernel_views[v][cshape])
            else:
                call_args.append(n if cshape == v.aval.shape else f"{n}.reshape({cshape})")
        if spec.explicit_sizes:
            call_args += [str(c) for c in coll]
        threads = " (row blocks on threads)" if split else ""
        self.emit(f"{kn}({', '.join(call_args)})  # {kernel.name}{threads}")

    def _outside_uses(self, g: Group, produced: set[Var]) -> set[Var]:
        """The values of ``produced`` read outside group ``g``: by another equation, as
        an output, or by a member through a virtual broadcast."""
        readers = self._readers
        if readers is None:
            readers = self._readers = self._index_readers()
        members = set(map(id, g.eqns))
        return {
            s
            for s in produced
            if any(e is None or e not in members or not direct for e, direct in readers.get(s, ()))
        }

    def _index_readers(self) -> dict[Var, list[tuple[int | None, bool]]]:
        """Each value's readers, once per driver: ``(id(eqn), reads it directly)``, and
        ``(None, True)`` for an output."""
        virtual = self.plan.virtual
        readers: dict[Var, list[tuple[int | None, bool]]] = {}

        def src_of(x: Var) -> Atom:
            v = virtual.get(x)
            return v.src if v is not None else x

        for e in self.jaxpr.eqns:
            for x in e.inputs:
                if isinstance(x, Var):
                    src = src_of(x)
                    if isinstance(src, Var):
                        readers.setdefault(src, []).append((id(e), src is x))
        for x in self.jaxpr.outvars:
            src = src_of(x) if isinstance(x, Var) else x
            if isinstance(src, Var):
                readers.setdefault(src, []).append((None, True))
        return readers


_driver_ids = itertools.count(1)  # unique linecache names (next() is atomic)


def lower(
    closed: ClosedJaxpr,
    fname: str,
    out_tree: Any = None,
    py_outs: Sequence[bool] = (),
    whole: bool = True,
) -> LoweredProgram:
    """Lower ``closed`` to a driver ``_driver(*flat_args)`` returning the output pytree
    ``out_tree`` (a flat tuple when None); outputs flagged in ``py_outs`` are returned
    as Python scalars (the eager call computes them with Python operators). ``whole``:
    a program of 0-d values and loops may become one native loop function
    (:func:`loops.as_one_loop`); sub-programs (loop bodies and branches that stay in
    Python) are lowered without, so a whole-program loop that Numba fails to compile
    falls back to its body's own driver once, not again and again."""
    t0 = time.perf_counter()
    jaxpr, consts = inline_calls(closed.jaxpr, list(closed.consts))
    jaxpr = forward_unit_products(fold_transposed_dots(dce_jaxpr(jaxpr)))
    if whole:
        jaxpr = loops.as_one_loop(jaxpr)
    for e in jaxpr.eqns:
        lowering_rule(e.primitive)  # a missing rule is an error before any code is made
    plan_ = plan(jaxpr)
    try:
        gen = _Gen(jaxpr, consts, plan_, fname, out_tree, scratch_values(jaxpr, plan_))
        source = gen.gen(py_outs)
    except NoScratch:
        gen = _Gen(jaxpr, consts, plan_, fname, out_tree)
        source = gen.gen(py_outs)
    filename = f"<functrace jit driver {next(_driver_ids)} of {fname}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), gen.ns)  # noqa: S102 - our generated driver
    # The source stays readable in tracebacks while the driver lives, and no longer.
    weakref.finalize(gen.ns["_driver"], linecache.cache.pop, filename, None)
    return LoweredProgram(
        gen.ns["_driver"],
        source,
        gen.kernels,
        gen.compiled,
        time.perf_counter() - t0,
        gen.subprograms,
        ClosedJaxpr(jaxpr, consts),
        gen.kernel_names,
        gen.kernel_texts,
        gen.buffers,
    )


__all__ = ["IMPL", "LoweredProgram", "lower", "lowering_rule"]
