"""How ``jit`` computes max/min pooling and its two linear maps (the primitives
``reduce_window_max``/``min``, ``select_and_gather_add`` and ``select_and_scatter_add``
of ``functrace/lax/windowed.py``): one compiled pass over the output windows.

For a float operand the driver calls a kernel generated per rank, selection and dtypes
(window parameters are arguments, so one kernel serves every pooling shape; disk-cached
like fused kernels). Each window walks its taps in row-major order and keeps the tap the
impl selects: the first tap, replaced by a later one only when strictly larger (``ge``)
or smaller (``le``); a NaN makes the window's value NaN without moving the selection,
as the impl's ``np.maximum``/``np.minimum``. Padding and base-dilation holes read the
identity and are never written to. ``select_and_scatter_add`` adds in float64 in the
order of the windows, the impl's ``np.bincount`` order, so every path gives the impl's
bits. Other dtypes (integers, booleans) and operands below ``MIN_SIZE`` elements keep
the NumPy impl.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from functrace.interpreters.numba_rules import DriverContext, DriverRule, numba_emitters
from functrace.jit.kernels import LoadedKernel, import_numba, kernel_header, load_source
from functrace.lax import windowed

_KERNELS: dict[tuple[Any, ...], LoadedKernel] = {}

MIN_SIZE = 4096
"""Operands with fewer elements keep the NumPy impl (fast enough there, and no compile
of about a second for each new window shape)."""
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _source(
    rank: int,
    kind: str,
    select: str,
    x_dt: np.dtype,
    v_dt: np.dtype,
    axes: tuple[str, ...],
    window: tuple[tuple[int, int, int], ...],
) -> str:
    """The kernel of ``kind`` ("reduce", "gather", "scatter") for rank ``rank``.

    ``x``: the operand that selects; ``p``: int64[2, rank] (low padding, base
    dilation); ``v``: the tangent (gather) or the source (scatter), absent for reduce;
    ``out``: the result, written in place. ``axes[a]`` says what axis ``a`` needs: "id"
    (window 1, stride 1, no padding or dilation: the window index is the operand
    index), "pad" (no base dilation: a range check) or "holes" (base dilation: a
    divisibility check too). ``window[a]`` is (size, stride, window dilation), written
    into the source as constants so that the tap loops unroll. A window inside the
    operand takes a path without checks."""
    ident = "-np.inf" if select == "ge" else "np.inf"
    cmp = ">" if select == "ge" else "<"
    args = ["x", "p"] + (["v"] if kind != "reduce" else []) + ["out"]
    short = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
    sig = f"x={short[x_dt]}[{rank}d C ro], p=i64[2d C ro]"
    if kind != "reduce":
        sig += f", v={short[v_dt]}[{rank}d C ro]"
    sig += f", out={short[v_dt if kind != 'reduce' else x_dt]}[{rank}d C]"
    title = f"# functrace {kind} window kernel ({select}, rank {rank}, window {window})"
    lines = kernel_header(args, sig, title)
    r = range(rank)
    win = [a for a in r if axes[a] != "id"]
    windows = "v" if kind == "scatter" else "out"
    lines.append(f"    ident = np.{x_dt.name}({ident})")
    for a in r:
        lines.append(
            f"    n{a} = x.shape[{a}]; m{a} = {windows}.shape[{a}]; lo{a} = p[0, {a}]; "
            f"b{a} = p[1, {a}]; top{a} = (n{a} - 1) * b{a}"
        )
    # Windows that never overlap (stride >= span on every axis, no base dilation) give
    # each position at most one addend, so adding into the zeroed output directly is
    # the impl's float64 sum cast back, bit for bit.
    direct = kind == "scatter" and all(
        axes[a] == "id"
        or (axes[a] == "pad" and window[a][1] >= (window[a][0] - 1) * window[a][2] + 1)
        for a in r
    )
    if kind == "scatter":
        lines.append("    acc = out" if direct else "    acc = np.zeros(x.shape, np.float64)")
    depth = 1
    for a in r:
        lines.append("    " * depth + f"for i{a} in range(m{a}):")
        depth += 1
        q = "    " * depth
        if axes[a] == "id":
            lines.append(q + f"j{a} = i{a}")
        else:
            w, st, d = window[a]
            lines.append(q + f"base{a} = i{a} * {st} - lo{a}")
            inside = (
                "False"
                if axes[a] == "holes"
                else f"base{a} >= 0 and base{a} + {(w - 1) * d} <= top{a}"
            )
            lines.append(q + f"in{a} = {inside}")
    body = "    " * depth
    here = ", ".join(f"i{a}" for a in r)
    there = ", ".join(f"s{a}" for a in r)
    keep = kind != "reduce"

    def finish(q: str, has: str) -> list[str]:
        if kind == "reduce":
            return [q + f"out[{here}] = best"]
        if kind == "gather":
            return [q + f"out[{here}] = v[{there}] if {has} else np.{v_dt.name}(0.0)"]
        return [q + f"if {has}:", q + f"    acc[{there}] += v[{here}]"]

    # the fast path: every tap is a real element
    inside = " and ".join(f"in{a}" for a in win) or "True"
    lines.append(body + f"if {inside}:")
    q = body + "    "
    for a in r:
        lines.append(q + (f"s{a} = j{a}" if axes[a] == "id" else f"s{a} = base{a}"))
    lines.append(q + f"best = x[{there}]")

    def taps(q: str) -> str:
        for a in win:
            w, st, d = window[a]
            lines.append(q + f"for k{a} in range({w}):")
            q += "    "
            lines.append(q + f"t{a} = base{a} + k{a} * {d}")
        return q

    at = ", ".join(f"j{a}" if axes[a] == "id" else f"t{a}" for a in r)
    dq = taps(q)
    lines += [
        dq + f"val = x[{at}]",
        dq + f"if val {cmp} best or val != val:",
        dq + "    best = val",
    ]
    if keep:
        # The selection, in a second pass: the first tap equal to the extremum, found
        # with integer arithmetic (a data-dependent branch or select would mispredict
        # on random data). A NaN window keeps the chain of the checked path below.
        lines.append(q + "if best == best:")
        lines += [q + f"    s{a} = 0" for a in win]
        lines.append(q + "    done = 0")
        dq = taps(q + "    ")
        lines.append(dq + f"hit = np.int64(x[{at}] == best) & (1 - done)")
        lines += [dq + f"s{a} += t{a} * hit" for a in win]
        lines.append(dq + "done |= hit")
        lines += [q + "else:", q + f"    best = x[{there}]"]  # restart from the first tap
        dq = taps(q + "    ")
        sel = "; ".join(f"s{a} = t{a}" for a in win)
        lines += [
            dq + f"val = x[{at}]",
            dq + f"if val {cmp} best:",
            dq + "    best = val",
            dq + f"    {sel}",
            dq + "elif val != val:",
            dq + "    best = val",
        ]
    lines += finish(q, "True")
    # windows over padding or holes: check every tap, start from the first one
    lines.append(body + "else:")
    q = body + "    "
    lines += [q + "best = ident", q + "has = False", q + "first = True"]
    lines += [q + f"s{a} = 0" for a in r]
    dq = q
    for a in win:
        w, st, d = window[a]
        lines.append(dq + f"for k{a} in range({w}):")
        dq += "    "
        lines.append(dq + f"t{a} = base{a} + k{a} * {d}")
        if axes[a] == "pad":
            lines.append(dq + f"ok{a} = t{a} >= 0 and t{a} <= top{a}")
            lines.append(dq + f"u{a} = t{a}")
        else:
            lines.append(dq + f"ok{a} = t{a} >= 0 and t{a} <= top{a} and t{a} % b{a} == 0")
            lines.append(dq + f"u{a} = t{a} // b{a} if ok{a} else 0")
    real = " and ".join(f"ok{a}" for a in win) or "True"
    at = ", ".join(f"j{a}" if axes[a] == "id" else f"u{a}" for a in r)
    sel = "; ".join(f"s{a} = j{a}" if axes[a] == "id" else f"s{a} = u{a}" for a in r)
    lines += [
        dq + f"real = {real}",
        dq + f"val = x[{at}] if real else ident",
        dq + "if first:",
        dq + "    first = False",
        dq + "    best = val",
        dq + "    has = real",
        dq + f"    {sel}",
        dq + f"elif val {cmp} best:",
        dq + "    best = val",
        dq + "    has = real",
        dq + f"    {sel}",
        dq + "elif val != val:",
        dq + "    best = val",
    ]
    lines += finish(q, "has")
    if kind == "scatter" and not direct:
        lines += [
            "    flat_acc = acc.reshape(-1)",
            "    flat_out = out.reshape(-1)",
            "    for f in range(flat_acc.shape[0]):",
            f"        flat_out[f] = np.{v_dt.name}(flat_acc[f])",
        ]
    return "\n".join(lines) + "\n"


def window_kernel(
    rank: int,
    kind: str,
    select: str,
    x_dt: np.dtype,
    v_dt: np.dtype,
    axes: tuple[str, ...],
    window: tuple[tuple[int, int, int], ...],
) -> LoadedKernel:
    """The compiled kernel (loaded once per process, cached on disk)."""
    key = (rank, kind, select, np.dtype(x_dt), np.dtype(v_dt), tuple(axes), tuple(window))
    if key not in _KERNELS:
        import_numba()
        from numba import types
        from numba.np.numpy_support import from_dtype

        def arr(dt: np.dtype, ro: bool) -> Any:
            return types.Array(from_dtype(np.dtype(dt)), rank, "C", readonly=ro)

        sig: list[Any] = [arr(x_dt, True), types.Array(types.int64, 2, "C", readonly=True)]
        if kind != "reduce":
            sig.append(arr(v_dt, True))
        sig.append(arr(v_dt if kind != "reduce" else x_dt, False))
        _KERNELS[key] = load_source(_source(*key), tuple(sig))
    return _KERNELS[key]


def _axis_kinds(params: dict[str, Any]) -> tuple[str, ...]:
    out = []
    for w, s, (lo, hi), b, d in zip(
        params["window_dimensions"],
        params["window_strides"],
        params["padding"],
        params["base_dilation"],
        params["window_dilation"],
    ):
        if (w, s, lo, hi, b, d) == (1, 1, 0, 0, 1, 1):
            out.append("id")
        else:
            out.append("pad" if b == 1 else "holes")
    return tuple(out)


def _param_table(params: dict[str, Any]) -> np.ndarray:
    rows = [[lo for lo, _ in params["padding"]], params["base_dilation"]]
    table = np.array(rows, dtype=np.int64).reshape(2, len(params["window_dimensions"]))
    table.setflags(write=False)
    return table


def _run(entry: Any, table: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, *args: Any) -> Any:
    out = np.zeros(shape, dtype)  # the scatter kernel may add into it directly
    x, *rest = (np.ascontiguousarray(a) for a in args)
    entry(x, table, *rest, out)
    return out


def _rule(kind: str, select: str | None) -> Any:
    def emit(ctx: DriverContext) -> str | None:
        x = ctx.in_avals[0] if kind == "reduce" else ctx.in_avals[1]
        v = ctx.in_avals[0]
        out = ctx.out_avals[0]
        if x.dtype not in _FLOATS or v.dtype not in _FLOATS or x.ndim == 0:
            return None  # integers and booleans: the NumPy impl
        if x.size < MIN_SIZE:
            return None
        sel = select if select is not None else ctx.params["select"]
        names = ("window_dimensions", "window_strides", "padding")
        params = {k: ctx.params[k] for k in (*names, "base_dilation", "window_dilation")}
        try:
            window = tuple(
                zip(
                    params["window_dimensions"], params["window_strides"], params["window_dilation"]
                )
            )
            kernel = window_kernel(x.ndim, kind, sel, x.dtype, v.dtype, _axis_kinds(params), window)
        except Exception:  # no compiled code here (a Numba problem): the impl
            return None
        kn = ctx.const(kernel)  # listed with the program's kernels
        run = functools.partial(
            _run, kernel.entry, _param_table(params), tuple(out.shape), out.dtype
        )
        # the operand that selects goes first, the tangent or source after it
        ordered = ctx.args if kind == "reduce" else (ctx.args[1], ctx.args[0])
        return f"{ctx.const(run)}({', '.join(ordered)})  # calls {kn}"

    return DriverRule(emit, fresh=True, contig=True)


numba_emitters[windowed.reduce_window_max_p] = _rule("reduce", "ge")
numba_emitters[windowed.reduce_window_min_p] = _rule("reduce", "le")
numba_emitters[windowed.select_and_gather_add_p] = _rule("gather", None)
numba_emitters[windowed.select_and_scatter_add_p] = _rule("scatter", None)

__all__ = ["window_kernel"]
