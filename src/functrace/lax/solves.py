"""``custom_linear_solve``: a linear solve ``x = solve(matvec, b)`` whose derivatives
never differentiate the solver, so any solver works (an iterative one in a
``while_loop``, a factorization, a closed form).

One primitive, ``custom_linear_solve``, whose params hold four jaxprs (their captured
constants are leading operands): ``matvec`` (the linear map ``A``), ``vecmat`` (its
transpose, traced as the transpose of ``matvec``), ``solve`` and ``transpose_solve``.
Its rules:

* JVP: ``x_dot = solve(b_dot - A_dot x)``: a second solve on the tangents, where
  ``A_dot x`` differentiates ``matvec`` in the values it closes over (the solver's own
  dependence on them is never differentiated, as in JAX);
* transpose (the solve is linear in ``b``): ``b_bar = transpose_solve(x_bar)``, the
  same primitive with the roles of ``matvec``/``vecmat`` and ``solve``/
  ``transpose_solve`` swapped; without ``transpose_solve`` (and not ``symmetric``)
  reverse mode is a TypeError, as in JAX;
* batching: every jaxpr batched, the vectors at axis 0;
* ``jit``: the driver calls the compiled ``solve`` jaxpr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, describe_fun
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.numba_rules import DriverContext, DriverRule, numba_emitters
from functrace.ir import Jaxpr
from functrace.lax.base import sub
from functrace.lax.control_flow.common import _inst, _run, _split, _trace, _zeros
from functrace.tree_util import tree_flatten, tree_unflatten

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)

_MV, _VM, _S, _TS = range(4)  # the slots of the jaxprs and of const_lengths


def _parts(args: Sequence[Any], const_lengths: tuple[int, ...]) -> list[list[Any]]:
    """``[mv_consts, vm_consts, s_consts, ts_consts, b]``."""
    return _split(args, *const_lengths)


def _impl(*args: Any, const_lengths: tuple[int, ...], jaxprs: tuple[Any, ...]) -> list[Any]:
    parts = _parts(args, const_lengths)
    return _run(jaxprs[_S], [*parts[_S], *parts[4]])


def _abstract(
    *avals: ShapedArray, const_lengths: tuple[int, ...], jaxprs: tuple[Any, ...]
) -> list[ShapedArray]:
    return [v.aval for v in jaxprs[_S].outvars]


core.impl_rules[linear_solve_p] = _impl
core.abstract_eval_rules[linear_solve_p] = _abstract


def _jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    const_lengths: tuple[int, ...],
    jaxprs: tuple[Any, ...],
) -> tuple[list[Any], list[Any]]:
    params = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    p_parts, t_parts = _parts(primals, const_lengths), _parts(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, **params)
    n = len(p_parts[4])
    x = outs[:n]
    out_zeros = [Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
    mv_nz = [type(t) is not Zero for t in t_parts[_MV]]
    b_nz = any(type(t) is not Zero for t in t_parts[4])
    if not any(mv_nz) and not b_nz:
        return outs, out_zeros
    b_avals = [core.get_aval(b) for b in p_parts[4]]
    rhs: list[Any] = [
        _inst(t, ad.tangent_aval(a)) if b_nz else None for t, a in zip(t_parts[4], b_avals)
    ]
    if any(mv_nz):  # - A_dot x: matvec differentiated in its constants, at x
        consts = p_parts[_MV]
        _, mv_dot = ad.jvp_flat(
            lambda *c: _run(jaxprs[_MV], [*c, *x]),
            consts,
            t_parts[_MV],
            origin="custom_linear_solve",
        )
        rhs = [
            r
            if type(d) is Zero
            else (sub(r, d) if r is not None else sub(_zeros(core.get_aval(d)), d))
            for r, d in zip(rhs, mv_dot)
        ]
    rhs = [_zeros(ad.tangent_aval(a)) if r is None else r for r, a in zip(rhs, b_avals)]
    consts_all = [c for part in p_parts[:4] for c in part]
    x_dot = linear_solve_p.bind(*consts_all, *rhs, **params)[:n]
    return outs, list(x_dot) + out_zeros[n:]


def _transpose(
    cts: Sequence[Any], *args: Any, const_lengths: tuple[int, ...], jaxprs: tuple[Any, ...]
) -> list[Any]:
    parts = _parts(args, const_lengths)
    if any(ad.is_undefined_primal(c) for part in parts[:4] for c in part):
        raise ValueError(
            "custom_linear_solve transpose: expected a solve linear in b only, got one whose "
            "matvec or solver constants are linear too."
        )
    if jaxprs[_TS] is None:
        raise TypeError(
            "custom_linear_solve: expected transpose_solve (or symmetric=True) for reverse-"
            "mode differentiation (grad, vjp), got neither. Pass transpose_solve, a solver "
            "for the transposed system, or use forward mode (jvp, jacfwd)."
        )
    b_avals = [a.aval for a in parts[4]]
    n = len(b_avals)
    cts_x = [_inst(ct, ad.tangent_aval(a)) for ct, a in zip(cts[:n], b_avals)]
    mv, vm, s, ts = const_lengths
    new_lengths = (vm, mv, ts, s)
    new_jaxprs = (jaxprs[_VM], jaxprs[_MV], jaxprs[_TS], jaxprs[_S])
    ct_b = linear_solve_p.bind(
        *parts[_VM],
        *parts[_MV],
        *parts[_TS],
        *parts[_S],
        *cts_x,
        const_lengths=new_lengths,
        jaxprs=new_jaxprs,
    )[:n]
    return [None] * sum(const_lengths) + list(ct_b)


ad.jvp_rules[linear_solve_p] = _jvp
ad.transpose_rules[linear_solve_p] = _transpose
ad.linear_primitives.add(linear_solve_p)


def _batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    const_lengths: tuple[int, ...],
    jaxprs: tuple[Any, ...],
) -> tuple[list[Any], list[int]]:
    size = batching.batch_size(vals, bdims)
    v_parts, d_parts = _parts(vals, const_lengths), _parts(bdims, const_lengths)
    b = [batching.bdim_at(v, d, size, 0) for v, d in zip(v_parts[4], d_parts[4])]
    b_avals = [core.get_aval(x) for x in b]
    new_jaxprs: list[Any] = []
    new_consts: list[list[Any]] = []
    for slot, j in enumerate(jaxprs):
        consts = v_parts[slot]
        if j is None:
            new_jaxprs.append(None)
            new_consts.append(list(consts))
            continue
        c_dims = [None if d is None else 0 for d in d_parts[slot]]
        consts = [
            c if d is None else batching.moveaxis(c, d, 0) for c, d in zip(consts, d_parts[slot])
        ]
        nc = len(consts)

        def batched(
            *args: Any, j: Jaxpr = j, nc: int = nc, c_dims: list[Any] = c_dims
        ) -> list[Any]:
            outs, out_dims = batching.vmap_flat(
                lambda *a: _run(j, a),
                size,
                args,
                [*c_dims, *[0] * (len(args) - nc)],
                origin="custom_linear_solve (vmap)",
            )
            return [batching.bdim_at(o, d, size, 0) for o, d in zip(outs, out_dims)]

        avals = [core.get_aval(c) for c in consts] + b_avals
        jb, extra = _trace(batched, avals, "custom_linear_solve (vmap)")
        new_jaxprs.append(jb)
        new_consts.append([*extra, *consts])
    lengths = tuple(len(c) for c in new_consts)
    outs = linear_solve_p.bind(
        *[c for part in new_consts for c in part],
        *b,
        const_lengths=lengths,
        jaxprs=tuple(new_jaxprs),
    )
    return list(outs), [0] * len(outs)


batching.batching_rules[linear_solve_p] = _batch


def _emit(ctx: DriverContext) -> str:
    lengths = ctx.params["const_lengths"]
    solve = ctx.lower(ctx.params["jaxprs"][_S], "custom_linear_solve solve")
    start = lengths[_MV] + lengths[_VM]
    args = [*ctx.args[start : start + lengths[_S]], *ctx.args[sum(lengths) :]]
    return f"tuple({ctx.const(solve)}({', '.join(args)}))"


numba_emitters[linear_solve_p] = DriverRule(_emit)


# ---------------------------------------------------------------------------
# The public function
# ---------------------------------------------------------------------------


def _check_tree(fname: str, what: str, tree: Any, want: Any) -> None:
    if tree != want:
        raise TypeError(
            f"custom_linear_solve: expected {fname} to return {what} of the structure of b, "
            f"{want}, got {tree}."
        )


def _check_avals(fname: str, got: Sequence[Any], want: Sequence[ShapedArray]) -> None:
    for g, w in zip(got, want):
        a = core.get_aval(g)
        if a.shape != w.shape or a.dtype != w.dtype:
            raise TypeError(
                f"custom_linear_solve: expected {fname} to return arrays of the shapes and "
                f"dtypes of b ({w.str_short()}), got {a.str_short()}."
            )


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """The solution ``x = solve(matvec, b)`` of the linear system ``matvec(x) = b``,
    differentiated implicitly: derivatives solve the system again (forward mode) or
    its transpose (reverse mode) instead of differentiating ``solve``.

    ``b`` is a pytree of arrays; ``matvec`` maps a pytree of its structure to one of the
    same structure, linearly (it may close over values being differentiated: the
    derivative in them is ``-A^-1 (dA) x``). ``solve(matvec, b)`` returns ``x``;
    ``transpose_solve(vecmat, b)`` solves the transposed system (``vecmat`` is the
    transpose of ``matvec``), needed for ``grad``/``vjp`` unless ``symmetric`` (then
    ``solve`` is used). With ``has_aux`` both solvers return ``(x, aux)`` and the result
    is ``(x, aux)``; ``aux`` is not differentiated.

    >>> import numpy as np, functrace as ft, functrace.numpy as fnp
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> def f(b):
    ...     return ft.lax.custom_linear_solve(
    ...         lambda x: A @ x, b, lambda mv, r: fnp.linalg.solve(A, r), symmetric=True
    ...     ).sum()
    >>> np.round(ft.grad(f)(np.array([1.0, 2.0])), 6).tolist()
    [0.181818, 0.272727]
    """
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise TypeError(
                f"custom_linear_solve: expected a callable {name}, got {type(fn).__name__}."
            )
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(
            f"custom_linear_solve: expected a callable transpose_solve or None, got "
            f"{type(transpose_solve).__name__}."
        )
    leaves, tree = tree_flatten(b)
    b_avals = [core.get_aval(x).update(weak_type=False) for x in leaves]
    for a in b_avals:
        if a.dtype.kind not in "fc":
            raise TypeError(
                f"custom_linear_solve: expected floating-point arrays in b, got {a.dtype.name}."
            )

    def as_tree(fn: Callable[[Any], Any], fname: str) -> Callable[[Any], Any]:
        def tree_fn(x: Any) -> Any:
            out = fn(x)
            out_leaves, out_tree = tree_flatten(out)
            _check_tree(fname, "a pytree", out_tree, tree)
            _check_avals(fname, out_leaves, b_avals)
            return out

        return tree_fn

    mv_tree = as_tree(matvec, describe_fun(matvec))

    def mv_flat(*x: Any) -> list[Any]:
        return tree_flatten(mv_tree(tree_unflatten(tree, list(x))))[0]

    def solver_flat(fn: Callable[..., Any], op: Callable[[Any], Any]) -> Any:
        """The solver on flat vectors, returning the solution only (aux dropped)."""

        def flat(*rhs: Any) -> list[Any]:
            res = fn(op, tree_unflatten(tree, list(rhs)))
            if has_aux:
                res = res[0]
            x_leaves, x_tree = tree_flatten(res)
            _check_tree(describe_fun(fn), "a solution", x_tree, tree)
            _check_avals(describe_fun(fn), x_leaves, b_avals)
            return x_leaves

        return flat

    mv_j, mv_c = _trace(mv_flat, b_avals, "custom_linear_solve (matvec)")
    box: dict[str, Any] = {}

    def solve_flat(*rhs: Any) -> list[Any]:
        res = solve(mv_tree, tree_unflatten(tree, list(rhs)))
        aux_leaves: list[Any] = []
        if has_aux:
            res, aux_val = res
            aux_leaves, box["aux_tree"] = tree_flatten(aux_val)
        x_leaves, x_tree = tree_flatten(res)
        _check_tree(describe_fun(solve), "a solution", x_tree, tree)
        _check_avals(describe_fun(solve), x_leaves, b_avals)
        return [*x_leaves, *aux_leaves]

    s_j, s_c = _trace(solve_flat, b_avals, "custom_linear_solve (solve)")
    vm_j: Any = None
    vm_c: list[Any] = []
    ts_j: Any = None
    ts_c: list[Any] = []
    if symmetric:
        vm_j, vm_c = mv_j, mv_c
        ts_j, ts_c = _trace(solver_flat(solve, mv_tree), b_avals, "custom_linear_solve (solve)")
    elif transpose_solve is not None:

        def vm_flat(*y: Any) -> list[Any]:
            zeros = [np.zeros(a.shape, a.dtype) for a in b_avals]
            _, lin, _ = ad.linearize_flat(mv_flat, zeros, origin="custom_linear_solve (vecmat)")
            cts = lin.transpose(list(y))
            return [_inst(c, a) for c, a in zip(cts, b_avals)]

        vm_j, vm_c = _trace(vm_flat, b_avals, "custom_linear_solve (vecmat)")

        def vm_tree(y: Any) -> Any:
            y_leaves, y_tree = tree_flatten(y)
            _check_tree("vecmat's argument", "a pytree", y_tree, tree)
            return tree_unflatten(tree, vm_flat(*y_leaves))

        ts_j, ts_c = _trace(
            solver_flat(transpose_solve, vm_tree),
            b_avals,
            "custom_linear_solve (transpose_solve)",
        )
    outs = linear_solve_p.bind(
        *mv_c,
        *vm_c,
        *s_c,
        *ts_c,
        *leaves,
        const_lengths=(len(mv_c), len(vm_c), len(s_c), len(ts_c)),
        jaxprs=(mv_j, vm_j, s_j, ts_j),
    )
    x = tree_unflatten(tree, list(outs[: len(leaves)]))
    if has_aux:
        return x, tree_unflatten(box["aux_tree"], list(outs[len(leaves) :]))
    return x


__all__ = ["custom_linear_solve", "linear_solve_p"]
