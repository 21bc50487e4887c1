"""The direct compiler of fused elementwise kernels: kernel source to LLVM IR.

A fused kernel's source (:func:`functrace.jit.kernels.kernel_source`) is a small,
regular subset of Python: loop nests over ``range``, loads and stores of C-contiguous
arrays, and scalar expressions from the primitives' templates
(``interpreters/numba_rules.py``). Numba compiles it in ~90 ms, most of it in its
front end (bytecode analysis, type inference, lowering, the CPython wrapper); LLVM
itself needs ~10 ms. This module translates the same source to LLVM IR with the
semantics Numba gives it (its scalar typing: ``float32 * 2.0`` is a float64 product;
its math functions: ``np.exp`` on float32 is ``llvm.exp.f32``, ``np.tanh`` is
``tanhf``...; NumPy's error model: no exceptions), and
:mod:`functrace.jit.direct_engine` compiles it with the pass pipeline Numba uses.
So the source stays the one definition of a kernel, and either compiler may run it:
any construct outside the subset raises :class:`Unsupported` and that kernel goes to
Numba. ``tests/test_direct_kernels.py`` checks the two compilers bit for bit.
"""

from __future__ import annotations

import ast
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Unsupported(Exception):  # noqa: N818 - a signal: compile this kernel with Numba
    """The kernel uses a construct this compiler does not translate."""


# ---------------------------------------------------------------------------
# Types: NumPy dtypes; LLVM spellings
# ---------------------------------------------------------------------------

BOOL = np.dtype(np.bool_)
I64 = np.dtype(np.int64)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)

_LL = {"f4": "float", "f8": "double", "b1": "i1"}
_CTORS = {
    "bool_": BOOL,
    "float32": F32,
    "float64": F64,
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": I64,
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
}


def ll_type(dt: np.dtype) -> str:
    """The LLVM type of a scalar of ``dt`` in registers (``i1`` for bool)."""
    key = f"{dt.kind}{dt.itemsize}"
    if key in _LL:
        return _LL[key]
    if dt.kind in "iu":
        return f"i{8 * dt.itemsize}"
    raise Unsupported(f"dtype {dt}")


def mem_type(dt: np.dtype) -> str:
    """The LLVM type of an element of ``dt`` in memory (``i8`` for bool)."""
    return "i8" if dt.kind == "b" else ll_type(dt)


def _float_const(dt: np.dtype, value: Any) -> str:
    # LLVM writes float constants as the hex bits of the double holding the value
    # (exact for float32 values too); NaN payloads and signed zeros survive.
    v = float(np.asarray(value, dtype=dt))
    return "0x" + struct.pack(">d", v).hex().upper()


def const_text(dt: np.dtype, value: Any) -> str:
    if dt.kind == "f":
        return _float_const(dt, value)
    if dt.kind == "b":
        return "true" if bool(value) else "false"
    v = int(np.asarray(value, dtype=dt))
    if dt.kind == "u" and v >= 2 ** (8 * dt.itemsize - 1):
        v -= 2 ** (8 * dt.itemsize)  # LLVM integers are signless: the same bits
    return str(v)


# Numba's scalar typing of ``a <op> b`` (numbers only): the two operand dtypes in, the
# dtype both are converted to out. Small signed ints compute as int64; a float with an
# integer or bool computes as float64; bool with bool arithmetic as int64. Anything
# with an unsigned integer is left to Numba.
def _arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    if "u" in (a.kind, b.kind):
        raise Unsupported("unsigned arithmetic")
    if a.kind == "f" and b.kind == "f":
        return F64 if F64 in (a, b) else F32
    if "f" in (a.kind, b.kind):
        return F64
    return I64


# ---------------------------------------------------------------------------
# Math functions: what Numba calls for np.<name> on float32 / float64 arguments
# ---------------------------------------------------------------------------

_INTRINSIC = {"exp", "log", "sin", "cos", "floor", "ceil", "log2", "log10", "exp2", "rint", "trunc"}
_LIBM = {
    "tan": "tan",
    "tanh": "tanh",
    "expm1": "expm1",
    "log1p": "log1p",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "sqrt": "sqrt",
}
_LIBM2 = {"arctan2": "atan2"}
# math.<name> on a float: what Numba calls (the argument's precision kept, as np.<name>)
_MATH = {"exp": "exp", "log": "log", "sqrt": "sqrt", "log1p": "log1p", "expm1": "expm1"}
_MATH |= {"tanh": "tanh", "sin": "sin", "cos": "cos", "tan": "tan", "erf": "erf"}
_MATH |= {"erfc": "erfc", "lgamma": "lgamma"}
_MATH_CONSTANTS = {"inf": np.inf, "nan": np.nan, "pi": np.pi, "e": np.e}
_INTRINSIC2 = {"power": "pow", "copysign": "copysign"}

LIBM_SYMBOLS = sorted(
    {f + s for f in (*_LIBM.values(), *_LIBM2.values(), "erf", "erfc", "lgamma") for s in ("", "f")}
    | {f + s for f in (*_INTRINSIC, "pow", "copysign") for s in ("", "f")}
)
"""libm functions compiled kernels may call (intrinsics may lower to them)."""


@dataclass
class Value:
    text: str  # an SSA name or a constant
    dtype: np.dtype


@dataclass
class Array:
    name: str
    dtype: np.dtype
    ndim: int
    data: str = ""  # the SSA name of its data pointer in the kernel function
    dims: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a kernel: an array (``ndim`` > 0 or ``array``) or a scalar."""

    name: str
    dtype: np.dtype
    ndim: int = 0
    array: bool = False
    writable: bool = True


# ---------------------------------------------------------------------------
# The translator
# ---------------------------------------------------------------------------


class _Fn:
    """The IR of one kernel function, built statement by statement."""

    def __init__(self, args: list[ArgSpec]) -> None:
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.n = 0
        self.arrays: dict[str, Array] = {}
        self.params: dict[str, Value] = {}
        self.locals: dict[str, tuple[str, np.dtype]] = {}  # name -> (alloca, dtype)
        self.intrinsics: set[str] = set()
        self.externs: set[str] = set()
        self.block = "entry"
        sig = []
        for a in args:
            if a.array:
                arr = Array(a.name, a.dtype, a.ndim, f"%{a.name}.data")
                arr.dims = [f"%{a.name}.d{k}" for k in range(a.ndim)]
                self.arrays[a.name] = arr
                sig.append(f"{mem_type(a.dtype)}* {arr.data}")
                sig += [f"i64 {d}" for d in arr.dims]
            else:
                self.params[a.name] = Value(f"%{a.name}", a.dtype)
                sig.append(f"{ll_type(a.dtype)} %{a.name}")
        self.signature = ", ".join(sig)

    # -- helpers ---------------------------------------------------------------
    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def label(self, what: str) -> str:
        self.n += 1
        return f"{what}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    def op(self, text: str) -> str:
        t = self.tmp()
        self.emit(f"{t} = {text}")
        return t

    # -- conversions -------------------------------------------------------------
    def cast(self, v: Value, to: np.dtype) -> Value:
        """Numba's scalar conversion (``np.float32(x)``, argument promotion)."""
        fr = v.dtype
        if fr == to:
            return v
        tf, tt = ll_type(fr), ll_type(to)
        if to.kind == "b":
            if fr.kind == "f":  # NaN is True, as NumPy
                return Value(self.op(f"fcmp une {tf} {v.text}, 0.0"), to)
            return Value(self.op(f"icmp ne {tf} {v.text}, 0"), to)
        if fr.kind == "b":
            if to.kind == "f":
                return Value(self.op(f"uitofp i1 {v.text} to {tt}"), to)
            return Value(self.op(f"zext i1 {v.text} to {tt}"), to)
        if fr.kind == "f" and to.kind == "f":
            how = "fpext" if to.itemsize > fr.itemsize else "fptrunc"
            return Value(self.op(f"{how} {tf} {v.text} to {tt}"), to)
        if fr.kind == "f":
            how = "fptosi" if to.kind == "i" else "fptoui"
            return Value(self.op(f"{how} {tf} {v.text} to {tt}"), to)
        if to.kind == "f":
            how = "sitofp" if fr.kind == "i" else "uitofp"
            return Value(self.op(f"{how} {tf} {v.text} to {tt}"), to)
        if to.itemsize == fr.itemsize:
            return Value(v.text, to)
        if to.itemsize < fr.itemsize:
            return Value(self.op(f"trunc {tf} {v.text} to {tt}"), to)
        how = "sext" if fr.kind == "i" else "zext"
        return Value(self.op(f"{how} {tf} {v.text} to {tt}"), to)

    # -- memory -------------------------------------------------------------------
    def element_ptr(self, arr: Array, index: list[Value]) -> str:
        if len(index) != arr.ndim:
            raise Unsupported("partial indexing")
        flat: str | None = None
        for k, ix in enumerate(index):
            if ix.dtype.kind not in "iu":
                raise Unsupported("a non-integer index")
            i = self.cast(ix, I64).text
            if flat is None:
                flat = i
            else:
                flat = self.op(f"mul i64 {flat}, {arr.dims[k]}")
                flat = self.op(f"add i64 {flat}, {i}")
        mt = mem_type(arr.dtype)
        return self.op(f"getelementptr {mt}, {mt}* {arr.data}, i64 {flat}")

    def load(self, arr: Array, index: list[Value]) -> Value:
        p = self.element_ptr(arr, index)
        mt = mem_type(arr.dtype)
        t = self.op(f"load {mt}, {mt}* {p}")
        if arr.dtype.kind == "b":
            t = self.op(f"icmp ne i8 {t}, 0")
        return Value(t, arr.dtype)

    def store(self, arr: Array, index: list[Value], v: Value) -> None:
        if v.dtype != arr.dtype:
            v = self.cast(v, arr.dtype)  # Numba's setitem casts the same way
        p = self.element_ptr(arr, index)
        mt = mem_type(arr.dtype)
        text = v.text
        if arr.dtype.kind == "b":
            text = self.op(f"zext i1 {text} to i8")
        self.emit(f"store {mt} {text}, {mt}* {p}")

    # -- statements ---------------------------------------------------------------
    def stmts(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            self.assign(s.targets[0], s.value)
        elif isinstance(s, ast.For) and not s.orelse:
            self.loop(s)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            pass  # a docstring
        else:
            raise Unsupported(type(s).__name__)

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Tuple):  # n0, n1 = o0.shape
            dims = self.shape_of(value)
            if len(dims) != len(target.elts):
                raise Unsupported("shape unpacking")
            for t, d in zip(target.elts, dims):
                self.set_local(t, Value(d, I64))
        elif isinstance(target, ast.Name):
            self.set_local(target, self.expr(value))
        elif isinstance(target, ast.Subscript):
            arr = self.array(target.value)
            v = self.expr(value)
            self.store(arr, self.index(target.slice), v)
        else:
            raise Unsupported("assignment target")

    def set_local(self, target: ast.expr, v: Value) -> None:
        if not isinstance(target, ast.Name):
            raise Unsupported("assignment target")
        name = target.id
        if name in self.arrays or name in self.params:
            raise Unsupported("assignment to an argument")
        slot = self.locals.get(name)
        if slot is None:
            ptr = f"%loc.{name}"
            self.allocas.append(f"  {ptr} = alloca {ll_type(v.dtype)}")
            slot = self.locals[name] = (ptr, v.dtype)
        if slot[1] != v.dtype:
            raise Unsupported(f"local {name} changes type")  # Numba would unify
        self.emit(f"store {ll_type(v.dtype)} {v.text}, {ll_type(v.dtype)}* {slot[0]}")

    def loop(self, s: ast.For) -> None:
        it = s.iter
        if not (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and len(it.args) == 1
            and not it.keywords
            and isinstance(s.target, ast.Name)
        ):
            raise Unsupported("a loop other than for i in range(n)")
        n = self.cast(self.expr(it.args[0]), I64)
        if n.dtype.kind != "i":
            raise Unsupported("range of a non-integer")
        name = s.target.id
        ptr = f"%loc.{name}"
        if name not in self.locals:
            self.allocas.append(f"  {ptr} = alloca i64")
            self.locals[name] = (ptr, I64)
        elif self.locals[name][1] != I64:
            raise Unsupported("loop variable type")
        counter = f"%cnt.{self.label('c')}"
        self.allocas.append(f"  {counter} = alloca i64")
        self.emit(f"store i64 0, i64* {counter}")
        head, body, done = self.label("head"), self.label("body"), self.label("done")
        self.emit(f"br label %{head}")
        self.start(head)
        i = self.op(f"load i64, i64* {counter}")
        c = self.op(f"icmp slt i64 {i}, {n.text}")
        self.emit(f"br i1 {c}, label %{body}, label %{done}")
        self.start(body)
        self.emit(f"store i64 {i}, i64* {ptr}")
        self.stmts(s.body)
        i2 = self.op(f"add i64 {i}, 1")
        self.emit(f"store i64 {i2}, i64* {counter}")
        self.emit(f"br label %{head}")
        self.start(done)

    # -- expressions --------------------------------------------------------------
    def array(self, node: ast.expr) -> Array:
        if isinstance(node, ast.Name) and node.id in self.arrays:
            return self.arrays[node.id]
        raise Unsupported("not an array argument")

    def shape_of(self, node: ast.expr) -> list[str]:
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            return list(self.array(node.value).dims)
        raise Unsupported("tuple value")

    def index(self, node: ast.expr) -> list[Value]:
        elts = node.elts if isinstance(node, ast.Tuple) else [node]
        return [self.expr(e) for e in elts]

    def expr(self, node: ast.expr) -> Value:
        folded = _fold(node)
        if folded is not None:
            dt = folded.dtype
            return Value(const_text(dt, folded), dt)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute):  # y0.shape[1]
                dims = self.shape_of(node.value)
                k = node.slice
                if not (isinstance(k, ast.Constant) and isinstance(k.value, int)):
                    raise Unsupported("shape index")
                return Value(dims[k.value], I64)
            return self.load(self.array(node.value), self.index(node.slice))
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.unary(node.op, self.expr(node.operand))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise Unsupported("chained comparison")
            return self.compare(node.ops[0], self.expr(node.left), self.expr(node.comparators[0]))
        if isinstance(node, ast.IfExp):
            return self.ifexp(node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("math", "np")
            and node.attr in _MATH_CONSTANTS
        ):
            return Value(const_text(F64, _MATH_CONSTANTS[node.attr]), F64)
        raise Unsupported(type(node).__name__)

    def name(self, name: str) -> Value:
        if name in self.params:
            return self.params[name]
        slot = self.locals.get(name)
        if slot is None:
            raise Unsupported(f"unknown name {name}")
        t = ll_type(slot[1])
        return Value(self.op(f"load {t}, {t}* {slot[0]}"), slot[1])

    def binop(self, op: ast.operator, a: Value, b: Value) -> Value:
        dt: np.dtype
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
            if a.dtype.kind == "b" and b.dtype.kind == "b":
                dt = BOOL
            else:
                if "f" in (a.dtype.kind, b.dtype.kind):
                    raise Unsupported("bit operation on floats")
                dt = _arith_type(a.dtype, b.dtype)
            name = {ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}[type(op)]
            a, b = self.cast(a, dt), self.cast(b, dt)
            return Value(self.op(f"{name} {ll_type(dt)} {a.text}, {b.text}"), dt)
        dt = _arith_type(a.dtype, b.dtype)
        if isinstance(op, ast.Div) and dt.kind != "f":
            dt = F64  # true division of integers
        a, b = self.cast(a, dt), self.cast(b, dt)
        t = ll_type(dt)
        if dt.kind == "f":
            fop = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}.get(
                type(op)
            )
            if fop is None:
                raise Unsupported(type(op).__name__)
            return Value(self.op(f"{fop} {t} {a.text}, {b.text}"), dt)
        iop = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}.get(type(op))
        if iop is not None:
            return Value(self.op(f"{iop} {t} {a.text}, {b.text}"), dt)
        if isinstance(op, ast.Mod | ast.FloorDiv):
            return self.floor_divmod(op, a, b, t, dt)
        raise Unsupported(type(op).__name__)

    def floor_divmod(self, op: ast.operator, a: Value, b: Value, t: str, dt: np.dtype) -> Value:
        # Python's floor semantics on int64, as Numba; a zero divisor gives 0 (NumPy's
        # error model) instead of the undefined hardware division.
        zero = self.op(f"icmp eq {t} {b.text}, 0")
        safe = self.op(f"select i1 {zero}, {t} 1, {t} {b.text}")
        # INT64_MIN // -1 overflows in hardware: its wrapped quotient and remainder 0
        ovf = self.op(f"icmp eq {t} {safe}, -1")
        safe = self.op(f"select i1 {ovf}, {t} 1, {t} {safe}")
        q = self.op(f"sdiv {t} {a.text}, {safe}")
        r = self.op(f"srem {t} {a.text}, {safe}")
        neg_q = self.op(f"sub {t} 0, {a.text}")
        q = self.op(f"select i1 {ovf}, {t} {neg_q}, {t} {q}")
        r = self.op(f"select i1 {ovf}, {t} 0, {t} {r}")
        # adjust toward -inf where the remainder's sign differs from the divisor's
        rnz = self.op(f"icmp ne {t} {r}, 0")
        rneg = self.op(f"icmp slt {t} {r}, 0")
        bneg = self.op(f"icmp slt {t} {safe}, 0")
        diff = self.op(f"xor i1 {rneg}, {bneg}")
        fix = self.op(f"and i1 {rnz}, {diff}")
        if isinstance(op, ast.Mod):
            r2 = self.op(f"add {t} {r}, {safe}")
            out = self.op(f"select i1 {fix}, {t} {r2}, {t} {r}")
        else:
            q2 = self.op(f"sub {t} {q}, 1")
            out = self.op(f"select i1 {fix}, {t} {q2}, {t} {q}")
        return Value(self.op(f"select i1 {zero}, {t} 0, {t} {out}"), dt)

    def unary(self, op: ast.unaryop, a: Value) -> Value:
        t = ll_type(a.dtype)
        if isinstance(op, ast.UAdd) and a.dtype.kind != "b":
            return a
        if isinstance(op, ast.USub):
            if a.dtype.kind == "f":
                return Value(self.op(f"fneg {t} {a.text}"), a.dtype)
            if a.dtype.kind == "i":
                a = self.cast(a, I64)
                return Value(self.op(f"sub i64 0, {a.text}"), I64)
        if isinstance(op, ast.Not):
            b = self.cast(a, BOOL)
            return Value(self.op(f"xor i1 {b.text}, true"), BOOL)
        if isinstance(op, ast.Invert) and a.dtype.kind == "i":
            a = self.cast(a, I64)
            return Value(self.op(f"xor i64 {a.text}, -1"), I64)
        raise Unsupported(f"unary {type(op).__name__} on {a.dtype}")

    def compare(self, op: ast.cmpop, a: Value, b: Value) -> Value:
        if a.dtype.kind == "b" and b.dtype.kind == "b" and isinstance(op, ast.Eq | ast.NotEq):
            dt = BOOL
        else:
            dt = _arith_type(a.dtype, b.dtype)
        a, b = self.cast(a, dt), self.cast(b, dt)
        t = ll_type(dt)
        if dt.kind == "f":
            names = {
                ast.Lt: "olt",
                ast.LtE: "ole",
                ast.Gt: "ogt",
                ast.GtE: "oge",
                ast.Eq: "oeq",
                ast.NotEq: "une",
            }
            kind = "fcmp"
        else:
            names = {
                ast.Lt: "slt",
                ast.LtE: "sle",
                ast.Gt: "sgt",
                ast.GtE: "sge",
                ast.Eq: "eq",
                ast.NotEq: "ne",
            }
            kind = "icmp"
        name = names.get(type(op))
        if name is None:
            raise Unsupported(type(op).__name__)
        return Value(self.op(f"{kind} {name} {t} {a.text}, {b.text}"), BOOL)

    def branch_values(self, cond: Value, then: ast.expr, other: ast.expr) -> Value:
        """``then if cond else other``, each side evaluated only when taken."""
        c = self.cast(cond, BOOL)
        lt, lo, end = self.label("then"), self.label("else"), self.label("join")
        self.emit(f"br i1 {c.text}, label %{lt}, label %{lo}")
        self.start(lt)
        a = self.expr(then)
        a_end = self.block
        a_at = len(self.lines)
        self.start(lo)
        b = self.expr(other)
        if a.dtype != b.dtype:  # Numba unifies the branches: both to the common type
            if BOOL in (a.dtype, b.dtype):
                raise Unsupported("branches of a bool and a number")
            dt = _arith_type(a.dtype, b.dtype)
            b = self.cast(b, dt)
            tail = self.lines[a_at:]  # the else block so far: the then block's cast first
            del self.lines[a_at:]
            a = self.cast(a, dt)
            a_at = len(self.lines)
            self.lines += tail
        b_end = self.block
        self.emit(f"br label %{end}")
        self.lines.insert(a_at, f"  br label %{end}")
        self.start(end)
        t = ll_type(a.dtype)
        phi = self.op(f"phi {t} [ {a.text}, %{a_end} ], [ {b.text}, %{b_end} ]")
        return Value(phi, a.dtype)

    def ifexp(self, node: ast.IfExp) -> Value:
        return self.branch_values(self.expr(node.test), node.body, node.orelse)

    def boolop(self, node: ast.BoolOp) -> Value:
        # ``a and b`` / ``a or b`` on bools (the kernels' masks): short-circuit, as Python
        left = self.expr(node.values[0])
        if left.dtype.kind != "b":
            raise Unsupported("and/or of non-bools")
        for right in node.values[1:]:
            const = ast.Constant(value=isinstance(node.op, ast.Or))
            if isinstance(node.op, ast.And):
                left = self.branch_values(left, right, const)
            else:
                left = self.branch_values(left, const, right)
            if left.dtype.kind != "b":
                raise Unsupported("and/or of non-bools")
        return left

    def call(self, node: ast.Call) -> Value:
        f = node.func
        if node.keywords or not (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in ("np", "math")
        ):
            raise Unsupported("a call other than np.<name>(...) or math.<name>(...)")
        fname = f.attr
        args = [self.expr(a) for a in node.args]
        if f.value.id == "math":
            if fname not in _MATH or len(args) != 1:
                raise Unsupported(f"math.{fname}")
            v = self._float_arg(fname, args[0])
            if fname in _INTRINSIC:
                return self._call_fn(f"llvm.{fname}.{_sfx(v.dtype)}", v.dtype, [v])
            return self._call_fn(_MATH[fname] + ("f" if v.dtype == F32 else ""), v.dtype, [v])
        if fname in _CTORS and len(args) == 1:
            return self.cast(args[0], _CTORS[fname])
        if len(args) == 1:
            return self.math1(fname, args[0])
        if len(args) == 2:
            return self.math2(fname, args[0], args[1])
        raise Unsupported(f"np.{fname}")

    def _float_arg(self, fname: str, v: Value) -> Value:
        if v.dtype.kind != "f":
            raise Unsupported(f"np.{fname} of {v.dtype}")
        return v

    def _call_fn(self, name: str, dt: np.dtype, args: list[Value]) -> Value:
        t = ll_type(dt)
        params = ", ".join(t for _ in args)
        decl = f"declare {t} @{name}({params})"
        if name.startswith("llvm."):
            self.intrinsics.add(decl)
        else:  # libm, as Numba declares it: no memory effects (errno is not read)
            self.externs.add(decl + " nounwind willreturn memory(none)")
        vals = ", ".join(f"{t} {a.text}" for a in args)
        return Value(self.op(f"call {t} @{name}({vals})"), dt)

    def math1(self, fname: str, v: Value) -> Value:
        t = ll_type(v.dtype)
        if fname == "abs":
            if v.dtype.kind == "f":
                return self._call_fn(f"llvm.fabs.{_sfx(v.dtype)}", v.dtype, [v])
            if v.dtype.kind == "i":  # Numba's int_abs_impl: wraps at the minimum
                neg = self.op(f"sub {t} 0, {v.text}")
                ltz = self.op(f"icmp slt {t} {v.text}, 0")
                return Value(self.op(f"select i1 {ltz}, {t} {neg}, {t} {v.text}"), v.dtype)
            raise Unsupported(f"np.abs of {v.dtype}")
        if fname == "sign" and v.dtype.kind in "fi":
            # Numba's real_sign_impl / int_sign_impl: 1, -1, else the value (0, -0, NaN)
            one, mone, zero = ("1.0", "-1.0", "0.0") if v.dtype.kind == "f" else ("1", "-1", "0")
            cmp = ("fcmp ogt", "fcmp olt") if v.dtype.kind == "f" else ("icmp sgt", "icmp slt")
            pos = self.op(f"{cmp[0]} {t} {v.text}, {zero}")
            neg = self.op(f"{cmp[1]} {t} {v.text}, {zero}")
            low = self.op(f"select i1 {neg}, {t} {mone}, {t} {v.text}")
            return Value(self.op(f"select i1 {pos}, {t} {one}, {t} {low}"), v.dtype)
        if fname == "isnan":
            v = self._float_arg(fname, v)
            return Value(self.op(f"fcmp uno {ll_type(v.dtype)} {v.text}, 0.0"), BOOL)
        v = self._float_arg(fname, v)
        if fname in _INTRINSIC:
            return self._call_fn(f"llvm.{fname}.{_sfx(v.dtype)}", v.dtype, [v])
        if fname in _LIBM:
            return self._call_fn(_LIBM[fname] + ("f" if v.dtype == F32 else ""), v.dtype, [v])
        raise Unsupported(f"np.{fname}")

    def math2(self, fname: str, a: Value, b: Value) -> Value:
        if fname in ("maximum", "minimum") and a.dtype == b.dtype and a.dtype.kind == "i":
            t = ll_type(a.dtype)  # Numba's np_int_smax_impl / smin: the first at ties
            pick = self.op(f"icmp {'sge' if fname == 'maximum' else 'sle'} {t} {a.text}, {b.text}")
            return Value(self.op(f"select i1 {pick}, {t} {a.text}, {t} {b.text}"), a.dtype)
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            raise Unsupported(f"np.{fname} of {a.dtype}, {b.dtype}")
        dt = _arith_type(a.dtype, b.dtype)
        a, b = self.cast(a, dt), self.cast(b, dt)
        t = ll_type(dt)
        if fname in ("maximum", "minimum"):
            # Numba's np.maximum/np.minimum on floats: a NaN operand wins (the first)
            a_nan = self.op(f"fcmp uno {t} {a.text}, {a.text}")
            any_nan = self.op(f"fcmp uno {t} {a.text}, {b.text}")
            nan_res = self.op(f"select i1 {a_nan}, {t} {a.text}, {t} {b.text}")
            cmp = "oge" if fname == "maximum" else "ole"
            pick = self.op(f"fcmp {cmp} {t} {a.text}, {b.text}")
            res = self.op(f"select i1 {pick}, {t} {a.text}, {t} {b.text}")
            return Value(self.op(f"select i1 {any_nan}, {t} {nan_res}, {t} {res}"), dt)
        if fname == "fmod":
            return Value(self.op(f"frem {t} {a.text}, {b.text}"), dt)
        if fname in _INTRINSIC2:
            return self._call_fn(f"llvm.{_INTRINSIC2[fname]}.{_sfx(dt)}", dt, [a, b])
        if fname in _LIBM2:
            return self._call_fn(_LIBM2[fname] + ("f" if dt == F32 else ""), dt, [a, b])
        raise Unsupported(f"np.{fname}")


def _sfx(dt: np.dtype) -> str:
    return "f32" if dt == F32 else "f64"


_FOLD_NAMES = {"np": np}


def _fold(node: ast.expr) -> np.generic | None:
    """A constant expression's value as Numba types it: ``np.float32(0.5)``,
    ``np.float64(-np.inf)``, Python literals (int: int64, float: float64, bool)."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return np.bool_(v)
        if isinstance(v, int):
            if not -(2**63) <= v < 2**63:
                raise Unsupported("an integer literal out of int64")
            return np.int64(v)
        if isinstance(v, float):
            return np.float64(v)
        raise Unsupported(f"literal {v!r}")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "np"
        and node.func.attr in _CTORS
        and len(node.args) == 1
        and _constant_tree(node.args[0])
    ):
        inner = eval(  # noqa: S307 - a constant expression of literals and np.inf/np.nan
            compile(ast.Expression(node.args[0]), "<kernel>", "eval"), {"np": np}
        )
        folded: np.generic = np.asarray(inner).astype(_CTORS[node.func.attr])[()]  # type: ignore[assignment]
        return folded
    return None


def _constant_tree(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float | bool)
    if isinstance(node, ast.Attribute):
        return (
            isinstance(node.value, ast.Name)
            and node.value.id == "np"
            and node.attr in ("inf", "nan", "pi", "e")
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _constant_tree(node.operand)
    return False


def translate(source: str, args: list[ArgSpec], symbol: str) -> str:
    """The LLVM IR module (text) of the kernel in ``source`` as the function
    ``void @<symbol>(...)``: each array argument becomes its data pointer followed by
    its dimensions (i64), each scalar its value. Raises :class:`Unsupported`."""
    tree = ast.parse(source)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.Import)]
    others = [n for n in others if not isinstance(n, ast.ImportFrom | ast.Expr)]
    if len(fns) != 1 or others:
        raise Unsupported("module shape")
    fn = fns[0]
    deco = [d.id for d in fn.decorator_list if isinstance(d, ast.Name)]
    if deco != ["flat_kernel_jit"] or len(fn.decorator_list) != 1:
        raise Unsupported("not a flat kernel")
    names = [a.arg for a in fn.args.args]
    if names != [a.name for a in args] or fn.args.vararg or fn.args.kwonlyargs:
        raise Unsupported("arguments differ from the signature")
    b = _Fn(args)
    b.stmts(fn.body)
    out = [f"define internal void @{symbol}({b.signature}) {{", "entry:", *b.allocas]
    body = b.lines
    out += body + ["  ret void", "}", ""]
    out += sorted(b.intrinsics | b.externs)
    return "\n".join(out) + "\n"


__all__ = [
    "ArgSpec",
    "LIBM_SYMBOLS",
    "Unsupported",
    "const_text",
    "ll_type",
    "mem_type",
    "translate",
]
