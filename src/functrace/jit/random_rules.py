"""How ``jit`` computes ``threefry2x32`` and ``erf_inv`` (the primitives of
``functrace/lax/random_bits.py``): in the driver, one compiled loop over the elements
(disk-cached like kernels); inside a native loop, the same statements per element.

Both generate their code from the primitives' Numba statements
(``random_bits.threefry_lines``, ``random_bits.erf_inv_lines``), so every path gives
the NumPy impl's bits. ``erf_inv``'s impl uses the compiled loop on large arrays
too, through ``numba_rules.compiled_impls`` (registered here: ``lax`` never imports
``jit``); ``functrace.jit`` imports this module, so the registration is made with
``import functrace``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from functrace.interpreters.numba_rules import (
    DriverContext,
    DriverRule,
    compiled_impls,
    numba_emitters,
)
from functrace.jit.kernels import LoadedKernel, import_numba, kernel_header, load_source
from functrace.lax.random_bits import erf_inv_lines, erf_inv_p, threefry2x32_p, threefry_lines

_U32 = np.dtype(np.uint32)

# ---------------------------------------------------------------------------
# threefry2x32
# ---------------------------------------------------------------------------

_KERNEL: list[LoadedKernel] = []  # the loaded kernel (compiled once per process, cached on disk)


def _threefry2x32_kernel() -> LoadedKernel:
    if not _KERNEL:
        lines = kernel_header(
            ["k0", "k1", "x0", "x1"],
            "k0=u32[1d C ro], k1=u32[1d C ro], x0=u32[1d C ro], x1=u32[1d C ro]",
            "# functrace threefry2x32 kernel",
        )
        lines += [
            "    n = x0.shape[0]",
            "    o0 = np.empty(n, np.uint32)",
            "    o1 = np.empty(n, np.uint32)",
            "    for i in range(n):",
        ]
        body = threefry_lines("k0[i]", "k1[i]", "x0[i]", "x1[i]", "o0[i]", "o1[i]", "t")
        lines += ["        " + ln for ln in body]
        lines.append("    return o0, o1")
        import_numba()
        from numba import types

        arr = types.Array(types.uint32, 1, "C", readonly=True)
        _KERNEL.append(load_source("\n".join(lines) + "\n", (arr,) * 4))
    return _KERNEL[0]


def _run_threefry(kernel: Any, shape: tuple[int, ...], *args: Any) -> tuple[Any, Any]:
    flat = [np.ascontiguousarray(np.asarray(a, _U32).reshape(-1)) for a in args]
    y0, y1 = kernel(*flat)
    if not shape:
        return y0[0], y1[0]
    return y0.reshape(shape), y1.reshape(shape)


def _threefry2x32_lowering(ctx: DriverContext) -> str:
    kernel = _threefry2x32_kernel()
    kn = ctx.const(kernel)  # listed with the program's kernels (as_text, compile counts)
    run = functools.partial(_run_threefry, kernel.dispatcher, tuple(ctx.out_avals[0].shape))
    return f"{ctx.const(run)}({', '.join(ctx.args)})  # calls {kn}"


def _threefry2x32_native(b: Any, e: Any) -> list[str]:
    # Inside a native loop: one loop nest over the shape, the 20 rounds inline.
    fn = b.fn
    shape = e.out_binders[0].aval.shape
    ins = [b.value(x) for x in e.inputs]
    tmp = fn.fresh("tf")
    if not shape:
        outs = [fn.fresh("v"), fn.fresh("v")]
        for ln in threefry_lines(ins[0], ins[1], ins[2], ins[3], outs[0], outs[1], tmp):
            fn.emit(b.depth, ln)
        return outs
    outs = [fn.alloc(b.depth, e.out_binders[0].aval) for _ in range(2)]
    idx, d = fn.loops(shape, b.depth)
    at = ", ".join(idx)
    elems = [f"{n}[{at}]" for n in (*ins, *outs)]
    k0, k1, x0, x1, y0, y1 = elems
    for ln in threefry_lines(k0, k1, x0, x1, y0, y1, tmp):
        fn.emit(d, ln)
    return outs


numba_emitters[threefry2x32_p] = DriverRule(
    _threefry2x32_lowering, fresh=True, native=_threefry2x32_native
)

# ---------------------------------------------------------------------------
# erf_inv
# ---------------------------------------------------------------------------


def _erf_inv_native(b: Any, e: Any) -> list[str]:
    # Inside a native loop: statements per element (Newton's loop is no expression).
    fn = b.fn
    aval = e.out_binders[0].aval
    (x,) = e.inputs
    src = b.value(x)
    tmp = fn.fresh("ei")
    if not aval.shape:
        out = fn.fresh("v")
        for ln in erf_inv_lines(src, out, aval.dtype, tmp):
            fn.emit(b.depth, ln)
        return [out]
    out = fn.alloc(b.depth, aval)
    idx, d = fn.loops(aval.shape, b.depth)
    at = ", ".join(idx)
    for ln in erf_inv_lines(f"{src}[{at}]", f"{out}[{at}]", aval.dtype, tmp):
        fn.emit(d, ln)
    return [out]


_ERF_INV_KERNELS: dict[np.dtype, LoadedKernel] = {}


def _erf_inv_kernel(dtype: np.dtype) -> LoadedKernel:
    """One compiled loop applying erf_inv to a 1-d array (the impl on large arrays, and
    ``jit``'s lowering): the same statements as the native-loop rule."""
    dtype = np.dtype(dtype)
    if dtype not in _ERF_INV_KERNELS:
        short = "f32" if dtype == np.float32 else "f64"
        lines = kernel_header(["x"], f"x={short}[1d C ro]", "# functrace erf_inv kernel")
        lines += [
            "    n = x.shape[0]",
            f"    o = np.empty(n, np.{dtype.name})",
            "    for i in range(n):",
        ]
        lines += ["        " + ln for ln in erf_inv_lines("x[i]", "o[i]", dtype, "t")]
        lines.append("    return o")
        import_numba()
        from numba import types
        from numba.np.numpy_support import from_dtype

        sig = (types.Array(from_dtype(dtype), 1, "C", readonly=True),)
        _ERF_INV_KERNELS[dtype] = load_source("\n".join(lines) + "\n", sig)
    return _ERF_INV_KERNELS[dtype]


def _run_erf_inv(kernel: Any, x: Any) -> Any:
    x = np.asarray(x)
    out = kernel(np.ascontiguousarray(x.reshape(-1)))
    return out[0] if not x.shape else out.reshape(x.shape)


def _erf_inv_lowering(ctx: DriverContext) -> str | None:
    dtype = ctx.in_avals[0].dtype
    if dtype not in (np.float32, np.float64):
        return None  # the impl
    kernel = _erf_inv_kernel(dtype)
    kn = ctx.const(kernel)  # listed with the program's kernels
    run = functools.partial(_run_erf_inv, kernel.dispatcher)
    return f"{ctx.const(run)}({ctx.args[0]})  # calls {kn}"


def _erf_inv_compiled(x: np.ndarray) -> Any:
    """The impl on a large float32/float64 array: the compiled loop, or None when Numba
    cannot make it here (the impl then gives the same bits with NumPy)."""
    try:
        kernel = _erf_inv_kernel(x.dtype)
    except Exception:  # no compiled code here (a Numba problem)
        return None
    return _run_erf_inv(kernel.dispatcher, x)


numba_emitters[erf_inv_p] = DriverRule(_erf_inv_lowering, fresh=True, native=_erf_inv_native)
compiled_impls[erf_inv_p] = _erf_inv_compiled

__all__: list[str] = []
