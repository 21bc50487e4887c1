"""The jit rules of the structural primitives (products, reshapes, reductions, control
flow...): each registration into ``numba_emitters`` below is the whole story of how
``jit`` computes that primitive, its driver form and its native-loop form.

The driver form (``emit``) is one fast NumPy expression in the generated driver, used
when it is obviously equivalent to the primitive's impl for the given types; returning
None (or no ``emit``) falls back to calling the impl. Shapes are static here: the
driver runs only after the call's shapes matched the compiled signature, so these
rules skip the impls' per-call validation. Primitives without a driver form (gather,
scatter, dynamic_slice, sort, ...) are lowered to a call of their impl, which
validates indices: compiled code never reads or writes out of bounds.

The native-loop form (``native``, written in ``loop_rules.py``) is the primitive's
code inside one ``@njit`` function for a whole ``scan``/``while`` (``loops.py``).
Elementwise primitives register their scalar templates in their own blocks
(``lax/elementwise.py``); ``threefry2x32`` and ``erf_inv`` in ``random_rules.py``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from functrace.custom_derivatives import grad_hook_p, hook_call_p
from functrace.debug import debug_callback_p
from functrace.interpreters import ad
from functrace.interpreters.numba_rules import DriverContext, DriverRule, numba_emitters
from functrace.jit import loop_rules, loops, parallel, random_rules, window_rules  # noqa: F401
from functrace.lax import control_flow, indexing, reductions, remat, shapes
from functrace.lax.control_flow import while_fori, while_reverse
from functrace.lax.control_flow.common import run_cond, run_scan, run_while
from functrace.lax.control_flow.while_fori import WhileParams

# add_any (cotangent accumulation, defined in interpreters/ad.py) is elementwise addition.
numba_emitters[ad.add_any_p] = "({0} + {1})"


def _dot_general(ctx: DriverContext) -> str | None:
    # 1-D/2-D contractions without batch axes: np.dot on (possibly transposed) views,
    # which BLAS reads without copying; N-d ones see _dot_flat_expr.
    (lc, rc), (lb, rb) = ctx.params["dimension_numbers"]
    x, y = ctx.in_avals
    pet = ctx.params.get("preferred_element_type")
    if (pet is not None and pet != x.dtype) or x.dtype != y.dtype:
        return None
    a, b = ctx.args
    if lb:
        return _dot_flat_expr(ctx, a, b)
    at, bt = f"{a}.T", f"{b}.T"
    # Products OpenBLAS could thread run with OpenBLAS on one thread; large 2-D ones are
    # split across functrace's threads (see parallel.py).
    out_size = math.prod(ctx.out_avals[0].shape)
    k = math.prod(x.shape[i] for i in lc)
    dot2 = dot1 = "np.dot"
    if x.ndim == 2 and y.ndim == 2 and len(lc) == 1:
        m, n = ctx.out_avals[0].shape
        got = parallel.dot_for(x.dtype, m, k, n)
        if got is not None:
            dot2 = ctx.const(got)
    else:
        got = parallel.product_for(np.dot, x.dtype, out_size * k, gemm=False)
        if got is not np.dot:
            dot1 = ctx.const(got)
    table = {
        (2, 2, (1,), (0,)): f"{dot2}({a}, {b})",
        (2, 2, (0,), (0,)): f"{dot2}({at}, {b})",
        (2, 2, (1,), (1,)): f"{dot2}({a}, {bt})",
        (2, 2, (0,), (1,)): f"{dot2}({at}, {bt})",
        (2, 1, (1,), (0,)): f"{dot1}({a}, {b})",
        (2, 1, (0,), (0,)): f"{dot1}({at}, {b})",
        (1, 2, (0,), (0,)): f"{dot1}({a}, {b})",
        (1, 2, (0,), (1,)): f"{dot1}({b}, {a})",
        (1, 1, (0,), (0,)): f"{dot1}({a}, {b})",
    }
    expr = table.get((x.ndim, y.ndim, tuple(lc), tuple(rc)))
    return expr if expr is not None else _dot_flat_expr(ctx, a, b)


def _axis_run(ndim: int, axes: tuple[int, ...]) -> str | None:
    """'head' or 'tail' when ``axes`` are the first or last axes in increasing order."""
    c = len(axes)
    if c and axes == tuple(range(c)):
        return "head"
    if c and axes == tuple(range(ndim - c, ndim)):
        return "tail"
    return None


def _dot_flat(
    a: np.ndarray,
    b: np.ndarray,
    out: np.ndarray | None = None,
    *,
    dims: tuple[int, int, int],
    ta: bool,
    tb: bool,
    shape: tuple[int, ...],
    dot: Any,
) -> np.ndarray:
    """A contraction over leading/trailing axes as one 2-D product of reshaped operands
    (views where the layout allows, else one copy): ``(m, k) @ (k, n)``."""
    m, k, n = dims
    a2 = a.reshape(k, m).T if ta else a.reshape(m, k)
    b2 = b.reshape(n, k).T if tb else b.reshape(k, n)
    if out is None:
        return dot(a2, b2).reshape(shape)  # type: ignore[no-any-return]
    dot(a2, b2, out.reshape(m, n))
    return out


def _dot_flat_expr(ctx: DriverContext, a: str, b: str) -> str | None:
    """Products of N-d operands: without batch axes, contracting axes leading or trailing
    in each operand (dense layers on (batch, seq, features) and their weight gradients)
    become one 2-D product; batch axes leading in both with one free and one contracting
    axis each (attention's ``q @ k^T`` and ``w @ v``) become ``np.matmul``."""
    (lc, rc), (lb, rb) = ctx.params["dimension_numbers"]
    x, y = ctx.in_avals
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    if lb:
        nb = len(lb)
        if lb != rb or lb != tuple(range(nb)) or x.ndim != nb + 2 or y.ndim != nb + 2:
            return None
        if x.shape[:nb] != y.shape[:nb] or lc not in ((nb,), (nb + 1,)):
            return None
        if rc not in ((nb,), (nb + 1,)):
            return None
        xa = a if lc == (nb + 1,) else f"{a}.swapaxes(-1, -2)"
        yb = b if rc == (nb,) else f"{b}.swapaxes(-1, -2)"
        per = math.prod(ctx.out_avals[0].shape[nb:]) * x.shape[lc[0]]  # one gemm each
        mm = parallel.product_for(np.matmul, x.dtype, per, gemm=True)
        return f"{ctx.const(mm) if mm is not np.matmul else 'np.matmul'}({xa}, {yb})"
    la, ra = _axis_run(x.ndim, lc), _axis_run(y.ndim, rc)
    if la is None or ra is None:
        return None
    k = math.prod(x.shape[i] for i in lc)
    m = math.prod(x.shape[i] for i in range(x.ndim) if i not in lc)
    n = math.prod(y.shape[i] for i in range(y.ndim) if i not in rc)
    f = functools.partial(
        _dot_flat,
        dims=(m, k, n),
        ta=la == "head",
        tb=ra == "tail",
        shape=tuple(ctx.out_avals[0].shape),
        dot=parallel.dot_for(x.dtype, m, k, n) or np.dot,
    )
    f.takes_out = True  # type: ignore[attr-defined]  # called like np.dot(a, b, out)
    return f"{ctx.const(f)}({a}, {b})"


# np.dot (and the threaded product) always allocates a C-contiguous result.
numba_emitters[shapes.dot_general_p] = DriverRule(
    _dot_general, fresh=True, contig=True, native=loop_rules.dot_general
)


def _transpose(ctx: DriverContext) -> str | None:
    perm = tuple(ctx.params["permutation"])
    return f"{ctx.args[0]}.transpose({perm})" if perm else None


numba_emitters[shapes.transpose_p] = DriverRule(
    _transpose, native=loop_rules.transpose_view, native_view=True
)


def _reshape_to_out(ctx: DriverContext) -> str:
    shape = tuple(ctx.out_avals[0].shape)
    if ctx.in_avals[0].ndim:  # an ndarray: the method skips np.reshape's dispatch (~0.6 us)
        return f"{ctx.args[0]}.reshape({shape})"
    return f"np.reshape({ctx.args[0]}, {shape})"


numba_emitters[shapes.reshape_p] = DriverRule(
    _reshape_to_out, keeps_contig=True, native=loop_rules.reshape
)
numba_emitters[shapes.squeeze_p] = DriverRule(
    _reshape_to_out, keeps_contig=True, native=loop_rules.reshape
)


def _broadcast_in_dim(ctx: DriverContext) -> str:
    # Normally virtual (fused into kernels' indexing); this is the materialized view.
    (x,), out = ctx.in_avals, ctx.out_avals[0]
    expanded = [1] * out.ndim
    for d, od in zip(x.shape, ctx.params["broadcast_dimensions"]):
        expanded[od] = d
    return f"np.broadcast_to(np.reshape({ctx.args[0]}, {tuple(expanded)}), {out.shape})"


numba_emitters[shapes.broadcast_in_dim_p] = DriverRule(
    _broadcast_in_dim, native=loop_rules.broadcast_in_dim_view, native_view=True
)


def _reduce_sum(ctx: DriverContext) -> str:
    # NumPy's pairwise summation (accurate in float32), exactly what the impl does.
    (x,) = ctx.in_avals
    axes = tuple(ctx.params["axes"])
    axis = axes[0] if len(axes) == 1 else axes
    if x.dtype.kind in "fc":  # the default accumulator dtype is the operand's already
        return f"np.add.reduce({ctx.args[0]}, {axis})"
    return f"np.add.reduce({ctx.args[0]}, {axis}, {ctx.const(x.dtype)})"


numba_emitters[reductions.reduce_sum_p] = DriverRule(
    _reduce_sum, fresh=True, native=loop_rules.reduce_sum
)


def _extremum(ufunc: str):  # type: ignore[no-untyped-def]
    def rule(ctx: DriverContext) -> str | None:
        (x,) = ctx.in_avals
        if x.size == 0:
            return None  # the impl knows the identity of an empty reduction
        axes = tuple(ctx.params["axes"])
        return f"np.{ufunc}.reduce({ctx.args[0]}, {axes[0] if len(axes) == 1 else axes})"

    return rule


numba_emitters[reductions.reduce_max_p] = DriverRule(
    _extremum("maximum"), fresh=True, native=loop_rules.reduce_max
)
numba_emitters[reductions.reduce_min_p] = DriverRule(
    _extremum("minimum"), fresh=True, native=loop_rules.reduce_min
)


def _concatenate(ctx: DriverContext) -> str:
    return f"np.concatenate(({', '.join(ctx.args)},), axis={ctx.params['dimension']})"


numba_emitters[shapes.concatenate_p] = DriverRule(
    _concatenate, fresh=True, native=loop_rules.concatenate
)


def _slice(ctx: DriverContext) -> str | None:
    if not ctx.in_avals[0].ndim:
        return None
    starts, limits = ctx.params["start_indices"], ctx.params["limit_indices"]
    steps = ctx.params.get("strides") or (1,) * len(starts)
    idx = ", ".join(f"{s}:{lim}:{k}" for s, lim, k in zip(starts, limits, steps))
    return f"{ctx.args[0]}[{idx},]"


numba_emitters[shapes.slice_p] = DriverRule(_slice, native=loop_rules.slice_)


def _checked_hook_call(
    fn: Any, outs: tuple[tuple[tuple[int, ...], np.dtype], ...], *args: Any
) -> list[np.ndarray]:
    # A grad_hook callback (or one of its derivatives) runs inside compiled code: what
    # it returns feeds kernels typed for the results' shapes and dtypes, so check it
    # here (the hook's own results were checked against its cotangent already).
    got = [np.asarray(o) for o in fn(*args)]
    for o, (shape, _) in zip(got, outs):
        if o.shape != shape:  # pragma: no cover - the nodes' results have these shapes
            raise ValueError(
                f"grad_hook: expected {fn.__name__} to return an array of shape "
                f"{shape}, got shape {o.shape}."
            )
    return [o.astype(dtype, copy=False) for o, (_, dtype) in zip(got, outs)]


def _hook_call(ctx: DriverContext) -> str:
    outs = tuple((tuple(a.shape), a.dtype) for a in ctx.out_avals)
    call = functools.partial(_checked_hook_call, ctx.params["fn"], outs)
    return f"{ctx.const(call)}({', '.join(ctx.args)})"


numba_emitters[hook_call_p] = DriverRule(_hook_call)
# grad_hook is the identity in the forward pass: no call at all.
numba_emitters[grad_hook_p] = DriverRule(lambda ctx: ctx.args[0], native=loop_rules.alias)
# debug.print/callback: the driver calls the impl (the user's function on the runtime
# values); no native form, so a scan/while body holding one runs in Python.
numba_emitters[debug_callback_p] = DriverRule()


# ---------------------------------------------------------------------------
# Structured control flow: each body/branch is lowered to its own driver (with its
# own fused kernels); the loop itself runs in Python around it, in the runners the
# impl rules use too (``lax/control_flow/common.py``). The abstract-eval
# rules guarantee that the body's outputs have the carry's exact types, so the
# shape-specialized body driver is always called with the shapes it was made for.
# ---------------------------------------------------------------------------


def _scan(ctx: DriverContext) -> str:
    native = loops.native_scan(ctx)  # native rules for the whole body: one Numba function
    if native is not None:
        return native
    p = ctx.params
    body = ctx.lower(p["jaxpr"], "scan body")
    nc, ncarry = p["num_consts"], p["num_carry"]
    y_avals = tuple(ctx.out_avals[ncarry:])
    y_avals = tuple(a.update(shape=a.shape[1:]) for a in y_avals)
    run = functools.partial(run_scan, body, nc, ncarry, p["length"], p["reverse"], y_avals)
    return f"{ctx.const(run)}({', '.join(ctx.args)})"


numba_emitters[control_flow.scan_p] = DriverRule(_scan, native=loop_rules.scan)


def _while(ctx: DriverContext) -> str:
    native = loops.native_while(ctx)  # native cond and body: one Numba function
    if native is not None:
        return native
    p = WhileParams(**ctx.params)
    cond = ctx.lower(p.cond_jaxpr, "while_loop condition")
    body = ctx.lower(p.body_jaxpr, "while_loop body")
    run = functools.partial(run_while, cond, body, p.cond_nconsts, p.body_nconsts)
    return f"{ctx.const(run)}({', '.join(ctx.args)})"


numba_emitters[control_flow.while_p] = DriverRule(_while, native=loop_rules.while_)


def _while_lin(ctx: DriverContext) -> str:
    p = WhileParams(**ctx.params)
    nz_c, nz_carry = p.nz
    step_jaxpr, hoisted = while_fori._while_jvp_body(p.body_jaxpr, p.body_nconsts, nz_c, nz_carry)
    cond = ctx.lower(p.cond_jaxpr, "while_loop condition")
    step = functools.partial(ctx.lower(step_jaxpr, "while_loop tangent step"), *hoisted)
    sizes = while_reverse.while_lin_sizes(p)
    run = functools.partial(while_reverse.run_while_lin, cond, step, sizes)
    return f"tuple({ctx.const(run)}({', '.join(ctx.args)}))"


def _while_transpose(ctx: DriverContext) -> str:
    # The forward loop keeps every carry (the trip count is known only at run time),
    # then the reverse sweep runs the VJP step once per iteration: one native function
    # when the bodies have native rules, else compiled steps called from Python.
    native = loops.native_while_transpose(ctx)
    if native is not None:
        return native
    p = WhileParams(**ctx.params)
    cond = ctx.lower(p.cond_jaxpr, "while_loop condition")
    body = ctx.lower(p.body_jaxpr, "while_loop body")
    bwd = ctx.lower(p.bwd_jaxpr, "while_loop reverse step")
    sizes = while_reverse.while_transpose_sizes(p)
    acc_avals = ctx.out_avals[: sum(p.nz[0])]
    run = functools.partial(while_reverse.run_while_transpose, cond, body, bwd, sizes, acc_avals)
    return f"tuple({ctx.const(run)}({', '.join(ctx.args)}))"


numba_emitters[control_flow.while_lin_p] = DriverRule(_while_lin)
numba_emitters[control_flow.while_transpose_p] = DriverRule(_while_transpose)


def _cond(ctx: DriverContext) -> str:
    branches = tuple(ctx.lower(b, f"cond branch {i}") for i, b in enumerate(ctx.params["branches"]))
    run = functools.partial(run_cond, branches)
    return f"{ctx.const(run)}({', '.join(ctx.args)})"


numba_emitters[control_flow.cond_p] = DriverRule(_cond, native=loop_rules.cond)
numba_emitters[control_flow.cond_lin_p] = DriverRule(_cond, native=loop_rules.cond)


def _checkpoint(ctx: DriverContext) -> str:
    # its own driver: the values it recomputes are locals of that call, freed on return
    body = ctx.lower(ctx.params["jaxpr"], "checkpoint body")
    return f"{ctx.const(body)}({', '.join(ctx.args)})"


numba_emitters[remat.remat_p] = DriverRule(_checkpoint)


# ---------------------------------------------------------------------------
# Primitives the driver computes by their impl (it validates indices, or NumPy's
# call is the fastest form) and native loops by explicit loops
# ---------------------------------------------------------------------------

numba_emitters[shapes.rev_p] = DriverRule(native=loop_rules.rev_view, native_view=True)
numba_emitters[indexing.gather_p] = DriverRule(native=loop_rules.gather_view, native_view=True)
numba_emitters[shapes.pad_p] = DriverRule(native=loop_rules.pad)
numba_emitters[shapes.iota_p] = DriverRule(native=loop_rules.iota)
numba_emitters[indexing.dynamic_slice_p] = DriverRule(native=loop_rules.dynamic_slice)
numba_emitters[indexing.dynamic_update_slice_p] = DriverRule(native=loop_rules.dynamic_update_slice)
numba_emitters[indexing.scatter_p] = DriverRule(native=loop_rules.scatter)
numba_emitters[indexing.scatter_add_p] = DriverRule(native=loop_rules.scatter_add)
numba_emitters[indexing.scatter_mul_p] = DriverRule(native=loop_rules.scatter_mul)
numba_emitters[indexing.scatter_max_p] = DriverRule(native=loop_rules.scatter_max)
numba_emitters[indexing.scatter_min_p] = DriverRule(native=loop_rules.scatter_min)
numba_emitters[reductions.reduce_prod_p] = DriverRule(native=loop_rules.reduce_prod)
numba_emitters[reductions.argmax_p] = DriverRule(native=loop_rules.argmax)
numba_emitters[reductions.argmin_p] = DriverRule(native=loop_rules.argmin)
numba_emitters[reductions.cumsum_p] = DriverRule(native=loop_rules.cumsum)
numba_emitters[reductions.cumprod_p] = DriverRule(native=loop_rules.cumprod)
numba_emitters[reductions.cummax_p] = DriverRule(native=loop_rules.cummax)
numba_emitters[reductions.cummin_p] = DriverRule(native=loop_rules.cummin)

__all__: list[str] = []
