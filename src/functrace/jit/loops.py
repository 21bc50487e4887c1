"""Native loops: a ``scan``/``while`` whose body is all scalar code becomes ONE ``@njit``.

When every value of a loop body (and of a while loop's condition) is 0-d, has a dtype
compiled code handles, and every equation has a scalar template in
``emitters.numba_emitters``, the whole loop is generated as one Numba function:

* scalar carries are local variables, loop-invariant consts are scalar arguments;
* scanned inputs ``xs`` are 1-D arrays indexed by the iteration (from the end when
  ``reverse``), stacked outputs ``ys`` are 1-D arrays allocated in the function;
* a while loop's condition is evaluated inline before each iteration;
* every result is cast to its IR dtype, as in fused kernels (float32 stays float32).

The source goes through the same content-addressed disk cache as fused kernels
(``kernels.load_source``), so a second process loads the machine code from disk.
Anything else (non-scalar values, nested loops, primitives without a scalar
template, complex numbers) returns None: the caller keeps the Python-loop lowering.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from functrace.ir import ClosedJaxpr, Jaxpr, Literal, Var
from functrace.jit.emitters import DriverContext, dtype_ctor, numba_dtype_ok

MARKER = "# functrace native scalar loop"
"""First line of every native loop's source (and of its call's comment in the driver)."""

native_loops_built = 0
"""How many native loops this process generated (for tests and diagnostics)."""

_warned: set[str] = set()


class _Decline(Exception):
    """The body is not a scalar body: use the Python-loop lowering."""


def _ok_dtype(dtype: np.dtype) -> bool:
    return numba_dtype_ok(dtype) and dtype.kind != "c"


def _check_aval(aval: Any) -> None:
    if getattr(aval, "shape", None) != () or not _ok_dtype(aval.dtype):
        raise _Decline


def _literal(x: Literal) -> str:
    dt = x.aval.dtype
    _check_aval(x.aval)
    val = np.asarray(x.val, dtype=dt)[()]
    ctor = dtype_ctor(dt)
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


def _unclose(j: Any) -> tuple[Jaxpr, list[Any]]:
    if isinstance(j, ClosedJaxpr):
        consts = list(j.consts)
        for v, c in zip(j.jaxpr.constvars, consts):
            _check_aval(v.aval)
            if np.ndim(c) != 0:
                raise _Decline
        return j.jaxpr, consts
    if j.constvars:
        raise _Decline
    return j, []


class _Body:
    """Scalar code for one jaxpr: ``lines`` computing its outputs from named inputs."""

    def __init__(self, jaxpr: Jaxpr, prefix: str, names: dict[Var, str]) -> None:
        from functrace.jit.lowering import _elementwise_expr, _fmt_line, _short

        self.lines: list[str] = []
        env: dict[Var, str] = dict(names)

        def atom(x: Any) -> str:
            if isinstance(x, Literal):
                return _literal(x)
            return env[x]

        for v in (*jaxpr.invars, *jaxpr.outvars):
            _check_aval(v.aval)
        for k, e in enumerate(jaxpr.eqns):
            if len(e.out_binders) != 1:
                raise _Decline
            out = e.out_binders[0]
            _check_aval(out.aval)
            for x in e.inputs:
                _check_aval(x.aval)
            args = tuple(atom(x) for x in e.inputs)
            expr = _elementwise_expr(e, args)
            if expr is None:
                raise _Decline
            name = f"{prefix}{k}"
            env[out] = name
            self.lines.append(f"# {_fmt_line(e, [f'{name}:{_short(out.aval.dtype)}'], list(args))}")
            self.lines.append(f"{name} = {dtype_ctor(out.aval.dtype)}({expr})")
        self.outs = [atom(x) for x in jaxpr.outvars]


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
    native_loops_built += 1
    return ctx.const(kernel)  # the driver registers the kernel (as_text, compile count)


def _header(params: list[str], sig_text: str, what: str) -> list[str]:
    from functrace.jit.kernels import kernel_header

    return kernel_header(params, sig_text, f"{MARKER} [{what}]")


def _assign_carries(outs: list[str], pad: str) -> str:
    """``k0, k1 = v5, k0``: all new carries computed from the old ones at once."""
    lhs = ", ".join(f"k{j}" for j in range(len(outs)))
    return f"{pad}{lhs} = {', '.join(outs)}"


def _scalar_arg(ctx: DriverContext, j: int) -> str:
    return f"{dtype_ctor(ctx.in_avals[j].dtype)}({ctx.args[j]})"


def native_scan(ctx: DriverContext) -> str | None:
    """A driver expression calling one native loop for this ``scan``, or None."""
    from functrace.jit.lowering import _short

    p = ctx.params
    nc, ncarry, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    try:
        jaxpr, body_consts = _unclose(p["jaxpr"])
        nx = len(jaxpr.invars) - nc - ncarry
        ny = len(jaxpr.outvars) - ncarry
        for a in ctx.in_avals[: nc + ncarry]:
            _check_aval(a)
        for a in ctx.in_avals[nc + ncarry :]:
            if a.ndim != 1 or not _ok_dtype(a.dtype):
                raise _Decline
        names: dict[Var, str] = {}
        for j, v in enumerate(jaxpr.constvars):
            names[v] = f"g{j}"
        for j, v in enumerate(jaxpr.invars[:nc]):
            names[v] = f"s{j}"
        for j, v in enumerate(jaxpr.invars[nc : nc + ncarry]):
            names[v] = f"k{j}"
        for j, v in enumerate(jaxpr.invars[nc + ncarry :]):
            names[v] = f"xv{j}"
        body = _Body(jaxpr, "v", names)
    except _Decline:
        return None

    in_dts = [a.dtype for a in ctx.in_avals]
    y_dts = [v.aval.dtype for v in jaxpr.outvars[ncarry:]]
    g_dts = [v.aval.dtype for v in jaxpr.constvars]
    params = (
        [f"g{j}" for j in range(len(body_consts))]
        + [f"s{j}" for j in range(nc)]
        + [f"k{j}" for j in range(ncarry)]
        + [f"x{j}" for j in range(nx)]
        + ["n"]
    )
    sig_text = ", ".join(
        [f"g{j}={_short(d)}" for j, d in enumerate(g_dts)]
        + [f"s{j}={_short(d)}" for j, d in enumerate(in_dts[:nc])]
        + [f"k{j}={_short(d)}" for j, d in enumerate(in_dts[nc : nc + ncarry])]
        + [f"x{j}={_short(d)}[1d C ro]" for j, d in enumerate(in_dts[nc + ncarry :])]
        + ["n=i64"]
        + [f"-> y{j}={_short(d)}[1d]" for j, d in enumerate(y_dts)]
    )
    what = "reverse scan" if reverse else "scan"
    lines = _header(params, sig_text, what)
    b = "    "
    for j, d in enumerate(y_dts):
        lines.append(f"{b}y{j} = np.empty(n, {dtype_ctor(d)})")
    lines.append(f"{b}for t in range(n):")
    lines.append(f"{b * 2}i = n - 1 - t" if reverse else f"{b * 2}i = t")
    for j in range(nx):
        lines.append(f"{b * 2}xv{j} = x{j}[i]")
    lines += [b * 2 + ln for ln in body.lines]
    for j, o in enumerate(body.outs[ncarry:]):  # before the carries change (ys may read them)
        lines.append(f"{b * 2}y{j}[i] = {o}")
    if ncarry:
        lines.append(_assign_carries(body.outs[:ncarry], b * 2))
    rets = [f"k{j}" for j in range(ncarry)] + [f"y{j}" for j in range(ny)]
    lines.append(f"{b}return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    source = "\n".join(lines) + "\n"

    sig = _signature(g_dts + in_dts[: nc + ncarry], in_dts[nc + ncarry :], with_n=True)
    kn = _load(source, sig, ctx, what)
    if kn is None:
        return None
    gargs = [ctx.const(np.asarray(c, dtype=d)[()]) for c, d in zip(body_consts, g_dts)]
    args = gargs + [_scalar_arg(ctx, j) for j in range(nc + ncarry)]
    args += [f"_asc({a})" for a in ctx.args[nc + ncarry :]]
    args.append(str(int(length)))
    return f"{kn}({', '.join(args)})  {MARKER}"


def native_while(ctx: DriverContext) -> str | None:
    """A driver expression calling one native loop for this ``while``, or None."""
    from functrace.jit.lowering import _short

    p = ctx.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    try:
        cj, c_consts = _unclose(p["cond_jaxpr"])
        bj, b_consts = _unclose(p["body_jaxpr"])
        for a in ctx.in_avals:
            _check_aval(a)
        ncarry = len(ctx.in_avals) - ncc - nbc
        cn: dict[Var, str] = {v: f"cg{j}" for j, v in enumerate(cj.constvars)}
        cn.update({v: f"cs{j}" for j, v in enumerate(cj.invars[:ncc])})
        cn.update({v: f"k{j}" for j, v in enumerate(cj.invars[ncc:])})
        bn: dict[Var, str] = {v: f"bg{j}" for j, v in enumerate(bj.constvars)}
        bn.update({v: f"bs{j}" for j, v in enumerate(bj.invars[:nbc])})
        bn.update({v: f"k{j}" for j, v in enumerate(bj.invars[nbc:])})
        cond = _Body(cj, "c", cn)
        body = _Body(bj, "v", bn)
        if len(cond.outs) != 1 or len(body.outs) != ncarry:
            raise _Decline
    except _Decline:
        return None

    in_dts = [a.dtype for a in ctx.in_avals]
    cg_dts = [v.aval.dtype for v in cj.constvars]
    bg_dts = [v.aval.dtype for v in bj.constvars]
    params = (
        [f"cg{j}" for j in range(len(cg_dts))]
        + [f"bg{j}" for j in range(len(bg_dts))]
        + [f"cs{j}" for j in range(ncc)]
        + [f"bs{j}" for j in range(nbc)]
        + [f"k{j}" for j in range(ncarry)]
    )
    names = params
    sig_text = ", ".join(f"{n}={_short(d)}" for n, d in zip(names, cg_dts + bg_dts + in_dts))
    lines = _header(params, sig_text, "while")
    b = "    "
    lines.append(f"{b}while True:")
    lines += [b * 2 + ln for ln in cond.lines]
    lines.append(f"{b * 2}if not {cond.outs[0]}:")
    lines.append(f"{b * 3}break")
    lines += [b * 2 + ln for ln in body.lines]
    if ncarry:
        lines.append(_assign_carries(body.outs, b * 2))
    rets = [f"k{j}" for j in range(ncarry)]
    lines.append(f"{b}return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    source = "\n".join(lines) + "\n"

    sig = _signature(cg_dts + bg_dts + in_dts, [], with_n=False)
    kn = _load(source, sig, ctx, "while")
    if kn is None:
        return None
    args = [ctx.const(np.asarray(c, dtype=d)[()]) for c, d in zip(c_consts, cg_dts)]
    args += [ctx.const(np.asarray(c, dtype=d)[()]) for c, d in zip(b_consts, bg_dts)]
    args += [_scalar_arg(ctx, j) for j in range(len(ctx.in_avals))]
    return f"{kn}({', '.join(args)})  {MARKER}"


def _signature(scalars: list[np.dtype], arrays: list[np.dtype], with_n: bool) -> tuple[Any, ...]:
    from functrace.jit.kernels import import_numba

    import_numba()
    from numba import types
    from numba.np.numpy_support import from_dtype

    sig: list[Any] = [from_dtype(d) for d in scalars]
    sig += [types.Array(from_dtype(d), 1, "C", readonly=True) for d in arrays]
    if with_n:
        sig.append(types.int64)
    return tuple(sig)


__all__ = ["MARKER", "native_scan", "native_while"]
