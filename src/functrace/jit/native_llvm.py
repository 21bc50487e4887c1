"""The region kernel of ``native.py`` as LLVM IR of functrace's own, compiled by the
direct compiler's engine (``direct_engine.compile_ir``) in milliseconds: no Numba
compile (about a second) and no Numba import where a program's products split.

The function mirrors ``native_numba.gemm_region`` line for line: the same control
array, the same atomic orderings (claims and counters sequentially consistent, the
publishing store release, the waits' loads acquire), the same blocks in the same
order, one ``cblas_?gemm`` call each through the address in the job. The entry point
checks every array argument (dtype, rank, C-contiguity, writability) and releases the
GIL, as for any direct kernel.
"""

from __future__ import annotations

import functools
import platform
from typing import Any

import numpy as np

from functrace.jit import direct_engine
from functrace.jit import native_layout as layout
from functrace.jit.direct import ArgSpec

_X86 = platform.machine().lower() in ("x86_64", "amd64")

_HELPERS = """
define internal i64 @{p}.xadd(i64* %ctl, i64 %i, i64 %v) alwaysinline {{
  %q = getelementptr i64, i64* %ctl, i64 %i
  %old = atomicrmw add i64* %q, i64 %v seq_cst
  ret i64 %old
}}

define internal i64 @{p}.ld(i64* %ctl, i64 %i) alwaysinline {{
  %q = getelementptr i64, i64* %ctl, i64 %i
  %v = load atomic i64, i64* %q acquire, align 8
  ret i64 %v
}}

define internal void @{p}.st(i64* %ctl, i64 %i, i64 %v) alwaysinline {{
  %q = getelementptr i64, i64* %ctl, i64 %i
  store atomic i64 %v, i64* %q release, align 8
  ret void
}}

define internal i64 @{p}.get(i64* %a, i64 %i) alwaysinline {{
  %q = getelementptr i64, i64* %a, i64 %i
  %v = load i64, i64* %q
  ret i64 %v
}}

define internal void @{p}.set(i64* %a, i64 %i, i64 %v) alwaysinline {{
  %q = getelementptr i64, i64* %a, i64 %i
  store i64 %v, i64* %q
  ret void
}}

define internal void @{p}.relax(i64* %ctl) {{
entry:
  %y = call i64 @{p}.get(i64* %ctl, i64 {YIELD})
  %has = icmp ne i64 %y, 0
  br i1 %has, label %yield, label %pause
yield:
  %f = inttoptr i64 %y to i32 ()*
  %r = call i32 %f()
  ret void
pause:
  {pause}
  ret void
}}

define internal i1 @{p}.open(i64* %ctl) {{
  %v = call i64 @{p}.ld(i64* %ctl, i64 {NEXT})
  %i = and i64 %v, {IDX}
  %h = lshr i64 %v, {IDX_BITS}
  %nb = and i64 %h, {IDX}
  %o = icmp slt i64 %i, %nb
  ret i1 %o
}}
"""

_GEMM_CALL = """
{label}:
  %f.{label} = inttoptr i64 %addr to
      void (i32, i32, i32, {I}, {I}, {I}, {T}, i8*, {I}, i8*, {I}, {T}, i8*, {I})*
{casts}
  call void %f.{label}(i32 {ROW_MAJOR}, i32 %opa, i32 %opb,
      {I} %M.{label}, {I} %N.{label}, {I} %k.{label}, {T} 1.0,
      i8* %ppa, {I} %lda.{label}, i8* %ppb, {I} %ldb.{label}, {T} 0.0, i8* %ppc, {I} %ldc.{label})
  ret void
"""


def _gemm_call(label: str, t: str, wide: bool) -> str:
    i = "i64" if wide else "i32"
    names = ("M", "N", "k", "lda", "ldb", "ldc")
    values = ("%M", "%N", "%k", "%lda", "%ldb", "%n")
    op = "add i64 {v}, 0" if wide else "trunc i64 {v} to i32"
    casts = "\n".join(f"  %{n}.{label} = " + op.format(v=v) for n, v in zip(names, values))
    return _GEMM_CALL.format(label=label, T=t, I=i, casts=casts, ROW_MAJOR=_FIELDS["ROW_MAJOR"])


_GEMM = """
define internal void @{p}.gemm(i64* %job, i64 %lo, i64 %hi) {{
entry:
  %size = call i64 @{p}.get(i64* %job, i64 {SIZE})
  %m = call i64 @{p}.get(i64* %job, i64 {M})
  %n = call i64 @{p}.get(i64* %job, i64 {N})
  %k = call i64 @{p}.get(i64* %job, i64 {K})
  %pa = call i64 @{p}.get(i64* %job, i64 {A})
  %lda = call i64 @{p}.get(i64* %job, i64 {LDA})
  %pb = call i64 @{p}.get(i64* %job, i64 {B})
  %ldb = call i64 @{p}.get(i64* %job, i64 {LDB})
  %pc = call i64 @{p}.get(i64* %job, i64 {C})
  %ta = call i64 @{p}.get(i64* %job, i64 {TA})
  %tb = call i64 @{p}.get(i64* %job, i64 {TB})
  %rows = call i64 @{p}.get(i64* %job, i64 {ROWS})
  %tan = icmp ne i64 %ta, 0
  %tbn = icmp ne i64 %tb, 0
  %isrows = icmp ne i64 %rows, 0
  br i1 %isrows, label %byrows, label %bycols
byrows:
  %sa = select i1 %tan, i64 1, i64 %lda
  %oa1 = mul i64 %lo, %size
  %oa = mul i64 %oa1, %sa
  %pa1 = add i64 %pa, %oa
  %oc1 = mul i64 %lo, %n
  %oc = mul i64 %oc1, %size
  %pc1 = add i64 %pc, %oc
  %m1 = sub i64 %hi, %lo
  br label %call
bycols:
  %sb = select i1 %tbn, i64 %ldb, i64 1
  %ob1 = mul i64 %lo, %size
  %ob = mul i64 %ob1, %sb
  %pb2 = add i64 %pb, %ob
  %oc2 = mul i64 %lo, %size
  %pc2 = add i64 %pc, %oc2
  %n2 = sub i64 %hi, %lo
  br label %call
call:
  %PA = phi i64 [ %pa1, %byrows ], [ %pa, %bycols ]
  %PB = phi i64 [ %pb, %byrows ], [ %pb2, %bycols ]
  %PC = phi i64 [ %pc1, %byrows ], [ %pc2, %bycols ]
  %M = phi i64 [ %m1, %byrows ], [ %m, %bycols ]
  %N = phi i64 [ %n, %byrows ], [ %n2, %bycols ]
  %opa = select i1 %tan, i32 {TRANS}, i32 {NO_TRANS}
  %opb = select i1 %tbn, i32 {TRANS}, i32 {NO_TRANS}
  %ppa = inttoptr i64 %PA to i8*
  %ppb = inttoptr i64 %PB to i8*
  %ppc = inttoptr i64 %PC to i8*
  %addr = call i64 @{p}.get(i64* %job, i64 {ADDR})
  %wide = call i64 @{p}.get(i64* %job, i64 {WIDE})
  %w = icmp ne i64 %wide, 0
  %s4 = icmp eq i64 %size, 4
  br i1 %s4, label %single, label %double
single:
  br i1 %w, label %s64, label %s32
double:
  br i1 %w, label %d64, label %d32
{calls}
}}

define internal i64 @{p}.take(i64* %ctl) {{
entry:
  br label %loop
loop:
  %taken = phi i64 [ 0, %entry ], [ %t1, %body ]
  %v = call i64 @{p}.xadd(i64* %ctl, i64 {NEXT}, i64 1)
  %i = and i64 %v, {IDX}
  %h = lshr i64 %v, {IDX_BITS}
  %nb = and i64 %h, {IDX}
  %done = icmp sge i64 %i, %nb
  br i1 %done, label %out, label %body
body:
  %bi = add i64 %i, {BOUNDS}
  %lo = call i64 @{p}.get(i64* %ctl, i64 %bi)
  %bi1 = add i64 %bi, 1
  %hi = call i64 @{p}.get(i64* %ctl, i64 %bi1)
  call void @{p}.gemm(i64* %ctl, i64 %lo, i64 %hi)
  %d = call i64 @{p}.xadd(i64* %ctl, i64 {DONE}, i64 1)
  %t1 = add i64 %taken, 1
  br label %loop
out:
  ret i64 %taken
}}

define internal i64 @{p}.worker(i64* %ctl, i64 %spins, i64 %seen) {{
entry:
  %idle = alloca i64
  store i64 0, i64* %idle
  %s0 = call i64 @{p}.xadd(i64* %ctl, i64 {STATE}, i64 1)
  br label %loop
loop:
  %o = call i1 @{p}.open(i64* %ctl)
  br i1 %o, label %take, label %c1
take:
  %t = call i64 @{p}.take(i64* %ctl)
  %tk = call i64 @{p}.xadd(i64* %ctl, i64 {TAKEN}, i64 %t)
  store i64 0, i64* %idle
  br label %loop
c1:
  %g = call i64 @{p}.ld(i64* %ctl, i64 {PYGEN})
  %newpy = icmp ne i64 %g, %seen
  br i1 %newpy, label %py, label %c2
py:
  %s1 = call i64 @{p}.xadd(i64* %ctl, i64 {STATE}, i64 -1)
  ret i64 2
c2:
  %st = call i64 @{p}.ld(i64* %ctl, i64 {STOP})
  %stop = icmp ne i64 %st, 0
  br i1 %stop, label %stopped, label %c3
stopped:
  %s2 = call i64 @{p}.xadd(i64* %ctl, i64 {STATE}, i64 -1)
  ret i64 1
c3:
  %i = load i64, i64* %idle
  %tired = icmp sge i64 %i, %spins
  br i1 %tired, label %sleep, label %spin
sleep:
  %s3 = call i64 @{p}.xadd(i64* %ctl, i64 {STATE}, i64 -1)
  %o2 = call i1 @{p}.open(i64* %ctl)
  br i1 %o2, label %back, label %asleep
asleep:
  ret i64 0
back:
  %s4 = call i64 @{p}.xadd(i64* %ctl, i64 {STATE}, i64 1)
  br label %loop
spin:
  %i1 = add i64 %i, 1
  store i64 %i1, i64* %idle
  call void @{p}.relax(i64* %ctl)
  br label %loop
}}
"""

_REGION = """
define void @{p}(i64* %ctl, i64 %nctl, {T}* %a, i64 %a0, i64 %a1, {T}* %b, i64 %b0, i64 %b1,
                 {T}* %c, i64 %c0, i64 %c1, i64 %ta, i64 %tb, i64 %rows,
                 i64* %bounds, i64 %nbounds, i64 %addr, i64 %wide, i64 %role, i64 %spins) {{
entry:
  %local = alloca [{CTL_SIZE} x i64]
  %big = icmp sge i64 %nctl, {CTL_SIZE}
  br i1 %big, label %roles, label %end
roles:
  switch i64 %role, label %product [ i64 0, label %worker
                                     i64 3, label %pywait ]
worker:
  %one = icmp sge i64 %nbounds, 1
  br i1 %one, label %work, label %end
work:
  %code = call i64 @{p}.worker(i64* %ctl, i64 %spins, i64 %addr)
  store i64 %code, i64* %bounds
  ret void
pywait:
  %pd = call i64 @{p}.ld(i64* %ctl, i64 {PYDONE})
  %fin = icmp eq i64 %pd, %spins
  br i1 %fin, label %end, label %pwr
pwr:
  call void @{p}.relax(i64* %ctl)
  br label %pywait
product:
  %nb = sub i64 %nbounds, 1
  %nbok1 = icmp sge i64 %nb, 1
  %nbok2 = icmp sle i64 %nb, {MAX_BLOCKS}
  %nbok = and i1 %nbok1, %nbok2
  br i1 %nbok, label %fill, label %end
fill:
  %isone = icmp eq i64 %role, 1
  %localp = getelementptr [{CTL_SIZE} x i64], [{CTL_SIZE} x i64]* %local, i64 0, i64 0
  %job = select i1 %isone, i64* %ctl, i64* %localp
  call void @{p}.set(i64* %job, i64 {ADDR}, i64 %addr)
  call void @{p}.set(i64* %job, i64 {WIDE}, i64 %wide)
  call void @{p}.set(i64* %job, i64 {SIZE}, i64 {ITEMSIZE})
  call void @{p}.set(i64* %job, i64 {ROWS}, i64 %rows)
  call void @{p}.set(i64* %job, i64 {M}, i64 %c0)
  call void @{p}.set(i64* %job, i64 {N}, i64 %c1)
  %tan = icmp ne i64 %ta, 0
  %kk = select i1 %tan, i64 %a0, i64 %a1
  call void @{p}.set(i64* %job, i64 {K}, i64 %kk)
  %pa = ptrtoint {T}* %a to i64
  %pb = ptrtoint {T}* %b to i64
  %pc = ptrtoint {T}* %c to i64
  %a1big = icmp sgt i64 %a1, 1
  %lda = select i1 %a1big, i64 %a1, i64 1
  %b1big = icmp sgt i64 %b1, 1
  %ldb = select i1 %b1big, i64 %b1, i64 1
  call void @{p}.set(i64* %job, i64 {A}, i64 %pa)
  call void @{p}.set(i64* %job, i64 {LDA}, i64 %lda)
  call void @{p}.set(i64* %job, i64 {B}, i64 %pb)
  call void @{p}.set(i64* %job, i64 {LDB}, i64 %ldb)
  call void @{p}.set(i64* %job, i64 {C}, i64 %pc)
  call void @{p}.set(i64* %job, i64 {TA}, i64 %ta)
  call void @{p}.set(i64* %job, i64 {TB}, i64 %tb)
  br label %copy
copy:
  %ci = phi i64 [ 0, %fill ], [ %ci1, %copy ]
  %bv = call i64 @{p}.get(i64* %bounds, i64 %ci)
  %cj = add i64 %ci, {BOUNDS}
  call void @{p}.set(i64* %job, i64 %cj, i64 %bv)
  %ci1 = add i64 %ci, 1
  %more = icmp sle i64 %ci1, %nb
  br i1 %more, label %copy, label %copied
copied:
  br i1 %isone, label %publish, label %serial
serial:
  %si = phi i64 [ 0, %copied ], [ %si1, %serial ]
  %sj = add i64 %si, {BOUNDS}
  %lo = call i64 @{p}.get(i64* %job, i64 %sj)
  %sj1 = add i64 %sj, 1
  %hi = call i64 @{p}.get(i64* %job, i64 %sj1)
  call void @{p}.gemm(i64* %job, i64 %lo, i64 %hi)
  %si1 = add i64 %si, 1
  %smore = icmp slt i64 %si1, %nb
  br i1 %smore, label %serial, label %end
publish:
  call void @{p}.st(i64* %ctl, i64 {DONE}, i64 0)
  %nbs = shl i64 %nb, {IDX_BITS}
  call void @{p}.st(i64* %ctl, i64 {NEXT}, i64 %nbs)
  %mine = call i64 @{p}.take(i64* %ctl)
  br label %wait
wait:
  %dn = call i64 @{p}.ld(i64* %ctl, i64 {DONE})
  %alldone = icmp sge i64 %dn, %nb
  br i1 %alldone, label %end, label %waitmore
waitmore:
  call void @{p}.relax(i64* %ctl)
  br label %wait
end:
  ret void
}}
"""

_FIELDS = {
    name.lstrip("_"): getattr(layout, name)
    for name in dir(layout)
    if name.lstrip("_").isupper() and isinstance(getattr(layout, name), int)
}
"""The control array's offsets and constants, by name without the leading underscore
(``NEXT``, ``M``, ``BOUNDS``, ``TRANS``...), for the IR templates."""
_LL = {"float32": "float", "float64": "double"}


def region_ir(dtype: np.dtype) -> tuple[str, str]:
    """``(ir, symbol)``: the module of the region kernel for ``dtype``."""
    p = f"functrace_region_{dtype.name}"
    calls = "".join(
        _gemm_call(label, t, wide)
        for label, t, wide in (
            ("s64", "float", True),
            ("s32", "float", False),
            ("d64", "double", True),
            ("d32", "double", False),
        )
    )
    pause = "call void @llvm.x86.sse2.pause()" if _X86 else ""
    ir = _HELPERS.format(p=p, pause=pause, **_FIELDS)
    if _X86:
        ir = "declare void @llvm.x86.sse2.pause()\n" + ir
    ir += _GEMM.format(p=p, calls=calls, **_FIELDS)
    ir += _REGION.format(p=p, T=_LL[dtype.name], ITEMSIZE=dtype.itemsize, **_FIELDS)
    return ir, p


@functools.lru_cache(maxsize=2)
def region_kernel(dtype: np.dtype) -> Any:
    """The region kernel for ``dtype`` (float32 or float64), compiled once per process."""
    dtype = np.dtype(dtype)
    ir, symbol = region_ir(dtype)
    i64 = np.dtype(np.int64)
    args = [
        ArgSpec("ctl", i64, 1, array=True),
        ArgSpec("a", dtype, 2, array=True, writable=False),
        ArgSpec("b", dtype, 2, array=True, writable=False),
        ArgSpec("c", dtype, 2, array=True),
        ArgSpec("ta", i64),
        ArgSpec("tb", i64),
        ArgSpec("by_rows", i64),
        ArgSpec("bounds", i64, 1, array=True),
        ArgSpec("addr", i64),
        ArgSpec("wide", i64),
        ArgSpec("role", i64),
        ArgSpec("spins", i64),
    ]
    sig = f"ctl=int64[1d C], a,b={dtype.name}[2d C], c={dtype.name}[2d C], bounds=int64[1d C], ints"
    return direct_engine.compile_ir(ir, symbol, args, sig, level=0)  # control code


__all__ = ["region_ir", "region_kernel"]
