"""LLVM for the direct compiler (:mod:`functrace.jit.direct`): one JIT engine per
process, Numba's target machine and pass pipeline, and the CPython entry point of each
kernel.

The entry point is LLVM code too: a ``METH_FASTCALL`` function that checks each
argument (an ndarray of the traced dtype, rank and C-contiguity, writable where the
kernel stores; a number where it takes a scalar), raises ``TypeError`` otherwise, and
calls the kernel with the GIL released (kernels run on several threads). It reads the
ndarray fields at the offsets NumPy's C API defines; :func:`available` checks those
offsets once against a live array, and any mismatch (another NumPy, a debug build of
Python) turns the direct compiler off: kernels then go to Numba.

``FUNCTRACE_JIT_KERNELS=numba`` turns the direct compiler off too (default ``direct``:
the kernels it translates are compiled here, the others by Numba).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import threading
from typing import Any

import numpy as np

from functrace.jit.direct import LIBM_SYMBOLS, ArgSpec, Unsupported, translate
from functrace.jit.direct import ll_type as _reg
from functrace.jit.direct import mem_type as _mem

ENV = "FUNCTRACE_JIT_KERNELS"

_lock = threading.Lock()
_state: dict[str, Any] = {}
_keep: list[Any] = []  # the kernels' error messages (their descriptors point to them)

# PyArrayObject_fields and PyArray_Descr offsets (64-bit CPython, release build)
_DATA, _ND, _DIMS, _DESCR, _FLAGS = 16, 24, 32, 56, 64
_BYTEORDER, _TYPE_NUM = 26, 28
_C_CONTIGUOUS, _WRITEABLE = 0x0001, 0x0400
_METH_FASTCALL = 0x0080


def enabled() -> bool:
    """Whether fused kernels go to the direct compiler (environment and platform)."""
    raw = os.environ.get(ENV, "").strip().lower()
    if raw not in ("", "direct", "numba"):
        raise ValueError(f"functrace.jit: expected {ENV} to be 'direct' or 'numba', got {raw!r}.")
    return raw != "numba" and available()


def available() -> bool:
    """The platform checks, made once: 64-bit, NumPy's struct layout as expected."""
    ok = _state.get("available")
    if ok is None:
        ok = _state["available"] = _layout_ok()
    return bool(ok)


def _layout_ok() -> bool:
    if ctypes.sizeof(ctypes.c_void_p) != 8 or ctypes.sizeof(ctypes.c_int) != 4:
        return False
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:  # pragma: no cover - Numba depends on llvmlite
        return False
    a = np.zeros((3, 5), np.float32)
    base = id(a)

    def read(addr: int, ctype: Any) -> Any:
        return ctype.from_address(addr).value

    try:
        descr = read(base + _DESCR, ctypes.c_void_p)
        dims = read(base + _DIMS, ctypes.c_void_p)
        return bool(
            read(base + _DATA, ctypes.c_void_p) == a.ctypes.data
            and read(base + _ND, ctypes.c_int) == 2
            and read(dims, ctypes.c_int64) == 3
            and read(dims + 8, ctypes.c_int64) == 5
            and read(base + _FLAGS, ctypes.c_int) & _C_CONTIGUOUS
            and descr == id(a.dtype)
            and read(descr + _TYPE_NUM, ctypes.c_int) == a.dtype.num
            and read(descr + _BYTEORDER, ctypes.c_char) == b"="
        )
    except Exception:  # pragma: no cover - an unexpected layout
        return False


def _engine() -> tuple[Any, Any, Any]:
    """(llvmlite.binding, target machine, MCJIT engine), made once per process."""
    st = _state.get("engine")
    if st is not None:
        return st  # type: ignore[no-any-return]
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    # Numba's JIT target machine: this CPU and its features, static relocation.
    tm = target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
        reloc="static" if target.name.startswith("x86") else "default",
        codemodel="jitdefault",
        jit=True,
    )
    ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    _add_symbols(llvm)
    runtime = llvm.parse_assembly(_RUNTIME)
    runtime.verify()
    _optimize(llvm, tm, runtime)
    ee.add_module(runtime)
    ee.finalize_object()
    entry = ee.get_function_address("functrace_entry")
    _state["methoddef"] = _MethodDef(b"kernel", entry, _METH_FASTCALL, None)
    st = _state["engine"] = (llvm, tm, ee)
    return st


def _add_symbols(llvm: Any) -> None:
    api = ctypes.pythonapi
    for name in (
        "PyFloat_AsDouble",
        "PyLong_AsLongLong",
        "PyObject_IsTrue",
        "PyErr_Occurred",
        "PyErr_SetString",
        "PyEval_SaveThread",
        "PyEval_RestoreThread",
        "Py_IncRef",
        "PyType_IsSubtype",
    ):
        llvm.add_symbol(name, ctypes.cast(getattr(api, name), ctypes.c_void_p).value)
    exc = ctypes.c_void_p.in_dll(api, "PyExc_TypeError")
    llvm.add_symbol("PyExc_TypeError", ctypes.addressof(exc))
    llvm.add_symbol("_Py_NoneStruct", id(None))
    llvm.add_symbol("functrace_ndarray_type", id(np.ndarray))
    libm_name = ctypes.util.find_library("m")
    libm = ctypes.CDLL(libm_name) if libm_name else ctypes.CDLL(None)
    for name in LIBM_SYMBOLS:
        fn = getattr(libm, name, None)
        if fn is not None:
            llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)


def _type_nums(dt: np.dtype) -> list[int]:
    """Every NumPy type number whose dtype equals ``dt`` (int64 is both ``l`` and ``q``)."""
    return sorted({np.dtype(c).num for c in np.typecodes["All"] if _same(c, dt)})


def _same(code: str, dt: np.dtype) -> bool:
    try:
        return np.dtype(code) == dt
    except TypeError:  # pragma: no cover - codes without a plain dtype
        return False


MAX_ARGS = 256  # arguments of one kernel (more: Numba compiles it)
MAX_DIMS = 1024  # array dimensions of one kernel, all arrays together

# The one CPython entry point of every direct kernel, compiled once per process.
# ``self`` is the kernel's descriptor, an int64 ndarray:
#   [loop nest address, argument count, message address,
#    then per argument: kind (0 array, 1 float, 2 int, 3 bool), rank, required flags,
#    two accepted type numbers]
# Each argument is checked and unboxed into three buffers (data pointers, dimensions,
# scalar bits) that the kernel's ``.packed`` function reads; it runs without the GIL.
_RUNTIME = f"""
define i8* @functrace_entry(i8* %self, i8** %args, i64 %nargs) {{
entry:
  %ptrs = alloca [{MAX_ARGS} x i8*]
  %dims = alloca [{MAX_DIMS} x i64]
  %scal = alloca [{MAX_ARGS} x i64]
  %jv = alloca i64
  %dpos = alloca i64
  %selfdataP = getelementptr i8, i8* %self, i64 {_DATA}
  %selfdataPP = bitcast i8* %selfdataP to i64**
  %desc = load i64*, i64** %selfdataPP
  %fnI = load i64, i64* %desc
  %nP = getelementptr i64, i64* %desc, i64 1
  %n = load i64, i64* %nP
  %nok = icmp eq i64 %nargs, %n
  store i64 0, i64* %jv
  store i64 0, i64* %dpos
  br i1 %nok, label %head, label %fail
head:
  %j = load i64, i64* %jv
  %more = icmp slt i64 %j, %n
  br i1 %more, label %arg, label %run
arg:
  %base5 = mul i64 %j, 5
  %base = add i64 %base5, 3
  %kP = getelementptr i64, i64* %desc, i64 %base
  %kind = load i64, i64* %kP
  %objP = getelementptr i8*, i8** %args, i64 %j
  %obj = load i8*, i8** %objP
  %scalP = getelementptr [{MAX_ARGS} x i64], [{MAX_ARGS} x i64]* %scal, i64 0, i64 %j
  switch i64 %kind, label %fail [ i64 0, label %array
                                  i64 1, label %float
                                  i64 2, label %int
                                  i64 3, label %bool ]
array:
  %tyP = getelementptr i8, i8* %obj, i64 8
  %tyPP = bitcast i8* %tyP to i8**
  %ty = load i8*, i8** %tyPP
  %exact = icmp eq i8* %ty, @functrace_ndarray_type
  br i1 %exact, label %isarr, label %subtype
subtype:
  %issub = call i32 @PyType_IsSubtype(i8* %ty, i8* @functrace_ndarray_type)
  %subok = icmp ne i32 %issub, 0
  br i1 %subok, label %isarr, label %fail
isarr:
  %ndwP = getelementptr i64, i64* %kP, i64 1
  %ndw = load i64, i64* %ndwP
  %flwP = getelementptr i64, i64* %kP, i64 2
  %flw = load i64, i64* %flwP
  %tn1P = getelementptr i64, i64* %kP, i64 3
  %tn1 = load i64, i64* %tn1P
  %tn2P = getelementptr i64, i64* %kP, i64 4
  %tn2 = load i64, i64* %tn2P
  %ndP = getelementptr i8, i8* %obj, i64 {_ND}
  %ndPP = bitcast i8* %ndP to i32*
  %nd32 = load i32, i32* %ndPP
  %nd = sext i32 %nd32 to i64
  %ndok = icmp eq i64 %nd, %ndw
  %flP = getelementptr i8, i8* %obj, i64 {_FLAGS}
  %flPP = bitcast i8* %flP to i32*
  %fl32 = load i32, i32* %flPP
  %fl = zext i32 %fl32 to i64
  %flm = and i64 %fl, %flw
  %flok = icmp eq i64 %flm, %flw
  %deP = getelementptr i8, i8* %obj, i64 {_DESCR}
  %dePP = bitcast i8* %deP to i8**
  %de = load i8*, i8** %dePP
  %tnP = getelementptr i8, i8* %de, i64 {_TYPE_NUM}
  %tnPP = bitcast i8* %tnP to i32*
  %tn32 = load i32, i32* %tnPP
  %tn = sext i32 %tn32 to i64
  %tnok1 = icmp eq i64 %tn, %tn1
  %tnok2 = icmp eq i64 %tn, %tn2
  %tnok = or i1 %tnok1, %tnok2
  %boP = getelementptr i8, i8* %de, i64 {_BYTEORDER}
  %bo = load i8, i8* %boP
  %bo1 = icmp eq i8 %bo, {ord("=")}
  %bo2 = icmp eq i8 %bo, {ord("|")}
  %book = or i1 %bo1, %bo2
  %ok1 = and i1 %ndok, %flok
  %ok2 = and i1 %tnok, %book
  %ok = and i1 %ok1, %ok2
  %d0 = load i64, i64* %dpos
  %dend = add i64 %d0, %nd
  %room = icmp sle i64 %dend, {MAX_DIMS}
  %okr = and i1 %ok, %room
  br i1 %okr, label %take, label %fail
take:
  %dataP = getelementptr i8, i8* %obj, i64 {_DATA}
  %dataPP = bitcast i8* %dataP to i8**
  %data = load i8*, i8** %dataPP
  %ptrP = getelementptr [{MAX_ARGS} x i8*], [{MAX_ARGS} x i8*]* %ptrs, i64 0, i64 %j
  store i8* %data, i8** %ptrP
  %shP = getelementptr i8, i8* %obj, i64 {_DIMS}
  %shPP = bitcast i8* %shP to i64**
  %sh = load i64*, i64** %shPP
  br label %dimhead
dimhead:
  %k = phi i64 [ 0, %take ], [ %k1, %dimbody ]
  %kmore = icmp slt i64 %k, %nd
  br i1 %kmore, label %dimbody, label %dimdone
dimbody:
  %skP = getelementptr i64, i64* %sh, i64 %k
  %sk = load i64, i64* %skP
  %dk = add i64 %d0, %k
  %dkP = getelementptr [{MAX_DIMS} x i64], [{MAX_DIMS} x i64]* %dims, i64 0, i64 %dk
  store i64 %sk, i64* %dkP
  %k1 = add i64 %k, 1
  br label %dimhead
dimdone:
  store i64 %dend, i64* %dpos
  br label %next
float:
  %fv = call double @PyFloat_AsDouble(i8* %obj)
  %fbad = fcmp oeq double %fv, -1.0
  br i1 %fbad, label %fchk, label %fput
fchk:
  %ferr = call i8* @PyErr_Occurred()
  %fiserr = icmp ne i8* %ferr, null
  br i1 %fiserr, label %error, label %fput
fput:
  %fbits = bitcast double %fv to i64
  store i64 %fbits, i64* %scalP
  br label %next
int:
  %iv = call i64 @PyLong_AsLongLong(i8* %obj)
  %ibad = icmp eq i64 %iv, -1
  br i1 %ibad, label %ichk, label %iput
ichk:
  %ierr = call i8* @PyErr_Occurred()
  %iiserr = icmp ne i8* %ierr, null
  br i1 %iiserr, label %error, label %iput
iput:
  store i64 %iv, i64* %scalP
  br label %next
bool:
  %bv = call i32 @PyObject_IsTrue(i8* %obj)
  %bbad = icmp eq i32 %bv, -1
  br i1 %bbad, label %error, label %bput
bput:
  %bv64 = sext i32 %bv to i64
  store i64 %bv64, i64* %scalP
  br label %next
next:
  %j1 = add i64 %j, 1
  store i64 %j1, i64* %jv
  br label %head
run:
  %fn = inttoptr i64 %fnI to void (i8**, i64*, i64*)*
  %ptrs0 = getelementptr [{MAX_ARGS} x i8*], [{MAX_ARGS} x i8*]* %ptrs, i64 0, i64 0
  %dims0 = getelementptr [{MAX_DIMS} x i64], [{MAX_DIMS} x i64]* %dims, i64 0, i64 0
  %scal0 = getelementptr [{MAX_ARGS} x i64], [{MAX_ARGS} x i64]* %scal, i64 0, i64 0
  %ts = call i8* @PyEval_SaveThread()
  call void %fn(i8** %ptrs0, i64* %dims0, i64* %scal0)
  call void @PyEval_RestoreThread(i8* %ts)
  call void @Py_IncRef(i8* @_Py_NoneStruct)
  ret i8* @_Py_NoneStruct
fail:
  %exc = load i8*, i8** @PyExc_TypeError
  %msgP = getelementptr i64, i64* %desc, i64 2
  %msgI = load i64, i64* %msgP
  %msg = inttoptr i64 %msgI to i8*
  call void @PyErr_SetString(i8* %exc, i8* %msg)
  ret i8* null
error:
  ret i8* null
}}

declare double @PyFloat_AsDouble(i8*)
declare i64 @PyLong_AsLongLong(i8*)
declare i32 @PyObject_IsTrue(i8*)
declare i8* @PyErr_Occurred()
declare void @PyErr_SetString(i8*, i8*)
declare i8* @PyEval_SaveThread()
declare void @PyEval_RestoreThread(i8*)
declare void @Py_IncRef(i8*)
declare i32 @PyType_IsSubtype(i8*, i8*)
@PyExc_TypeError = external global i8*
@_Py_NoneStruct = external global i8
@functrace_ndarray_type = external global i8
"""


def _packed(symbol: str, args: list[ArgSpec]) -> str:
    """``void @<symbol>.packed(i8** ptrs, i64* dims, i64* scal)``: the buffers the entry
    point filled, read once into registers, then the loop nest called (and inlined)."""
    if len(args) > MAX_ARGS or sum(a.ndim for a in args if a.array) > MAX_DIMS:
        raise Unsupported("too many arguments")
    lines = [
        f"define void @{symbol}.packed(i8** %ptrs, i64* %dims, i64* %scal) {{",
        "entry:",
    ]
    call, dpos = [], 0
    for j, a in enumerate(args):
        if a.array:
            mt = _mem(a.dtype)
            lines += [
                f"  %pp.{j} = getelementptr i8*, i8** %ptrs, i64 {j}",
                f"  %p.{j} = load i8*, i8** %pp.{j}",
                f"  %d.{j} = bitcast i8* %p.{j} to {mt}*",
            ]
            call.append(f"{mt}* %d.{j}")
            for k in range(a.ndim):
                lines += [
                    f"  %sp.{j}.{k} = getelementptr i64, i64* %dims, i64 {dpos}",
                    f"  %s.{j}.{k} = load i64, i64* %sp.{j}.{k}",
                ]
                call.append(f"i64 %s.{j}.{k}")
                dpos += 1
            continue
        if a.dtype.kind == "u" and a.dtype.itemsize == 8:
            raise Unsupported("a uint64 scalar argument")  # (the entry unboxes int64)
        reg = _reg(a.dtype)
        lines += [
            f"  %vp.{j} = getelementptr i64, i64* %scal, i64 {j}",
            f"  %v.{j} = load i64, i64* %vp.{j}",
        ]
        if a.dtype.kind == "f":
            lines.append(f"  %w.{j} = bitcast i64 %v.{j} to double")
            if a.dtype.itemsize == 4:
                lines.append(f"  %x.{j} = fptrunc double %w.{j} to float")
            else:
                lines.append(f"  %x.{j} = bitcast i64 %v.{j} to double")
        elif a.dtype.kind == "b":
            lines.append(f"  %x.{j} = icmp ne i64 %v.{j}, 0")
        elif a.dtype.kind in "iu" and a.dtype.itemsize < 8:
            lines.append(f"  %x.{j} = trunc i64 %v.{j} to {reg}")
        elif a.dtype.kind in "iu":
            lines.append(f"  %x.{j} = add i64 %v.{j}, 0")
        else:
            raise Unsupported(f"a scalar argument of {a.dtype}")
        call.append(f"{reg} %x.{j}")
    lines += [f"  call void @{symbol}({', '.join(call)})", "  ret void", "}"]
    return "\n".join(lines) + "\n"


def _descriptor(args: list[ArgSpec], fn: int, message: Any) -> np.ndarray:
    """The entry point's ``self`` for one kernel (see ``_RUNTIME``)."""
    desc = [fn, len(args), ctypes.addressof(message)]
    for a in args:
        if a.array:
            nums = (_type_nums(a.dtype) * 2)[:2]
            flags = _C_CONTIGUOUS | (_WRITEABLE if a.writable else 0)
            desc += [0, a.ndim, flags, *nums]
        else:
            kind = {"f": 1, "i": 2, "u": 2, "b": 3}[a.dtype.kind]
            desc += [kind, 0, 0, 0, 0]
    return np.array(desc, dtype=np.int64)


class _MethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


def _new_function(descriptor: np.ndarray) -> Any:
    """A builtin function calling the runtime's entry point with ``descriptor`` as its
    ``self`` (the function holds a reference to it)."""
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
    return new(ctypes.addressof(_state["methoddef"]), descriptor, None)


def _optimize(llvm: Any, tm: Any, mod: Any, level: int = 3) -> None:
    """Numba's pipeline: O3 with the loop vectorizer, no SLP vectorizer (``level``: a
    lower speed level for code whose time is spent elsewhere)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = True
    pto.slp_vectorization = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def compile_kernel(source: str, args: list[ArgSpec], signature_text: str) -> Any:
    """The entry point (a builtin function) of the kernel in ``source``; raises
    :class:`~functrace.jit.direct.Unsupported` for a kernel left to Numba."""
    symbol = "ftk_" + hashlib.sha256(source.encode()).hexdigest()[:24]
    return compile_ir(translate(source, args, symbol), symbol, args, signature_text)


def compile_ir(
    ir: str, symbol: str, args: list[ArgSpec], signature_text: str, level: int = 3
) -> Any:
    """The entry point (a builtin function, returning None) of the function ``symbol``
    defined in the LLVM IR ``ir``, taking ``args`` unboxed: a data pointer then the
    dimensions of each array, the value of each scalar; optimized at speed ``level``."""
    ir = ir + _packed(symbol, args)
    message = ctypes.create_string_buffer(
        f"functrace.jit: direct kernel {symbol} expected arguments ({signature_text}); "
        "got other types, ranks or layouts".encode()
    )
    with _lock:
        llvm, tm, ee = _engine()
        mod = llvm.parse_assembly(ir)
        mod.verify()
        _optimize(llvm, tm, mod, level)
        ee.add_module(mod)
        ee.finalize_object()
        fn = ee.get_function_address(f"{symbol}.packed")
    desc = _descriptor(args, fn, message)
    _keep.append(message)
    return _new_function(desc)


__all__ = ["ENV", "available", "compile_ir", "compile_kernel", "enabled"]
