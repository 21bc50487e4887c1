"""Jacobians and Hessians: ``jacfwd`` (a batched JVP over the input basis), ``jacrev``
(a batched VJP over the output basis), ``jacobian`` and ``hessian``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.api._args import (
    _check_kind,
    _diff_mask,
    _normalize_argnums,
    _output,
    _plain_args,
    _plain_leaves,
    _split_args,
)
from functrace.api._autodiff import _jac_flat_fun
from functrace.core import describe_fun
from functrace.interpreters import ad, batching
from functrace.tree_util import tree_flatten, tree_unflatten


def _std_basis(aval: core.ShapedArray) -> np.ndarray:
    """The identity as ``size`` stacked basis arrays of ``aval``'s shape."""
    n = aval.size
    return np.eye(n, dtype=aval.dtype).reshape((n, *aval.shape))


def _jac_leaf(
    stacked: Any, o_shape: tuple[int, ...], in_shape: tuple[int, ...], basis_first: bool
) -> Any:
    """Arrange a batch of derivatives (basis axis first) as ``out_shape + in_shape``."""
    from functrace import numpy as fnp

    if basis_first:  # rows of jacrev: (out_size, *in_shape)
        return _output(fnp.reshape(stacked, (*o_shape, *in_shape)))
    # columns of jacfwd: (in_size, *o_shape) -> (*o_shape, in_size)
    moved = fnp.moveaxis(stacked, 0, -1) if len(o_shape) else stacked
    return _output(fnp.reshape(moved, (*o_shape, *in_shape)))


def _jacobian_transform(
    fname: str,
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    blocks: Callable[[Callable[..., Any], list[Any], list[Any], ad.LinearFunction], Any],
) -> Callable[..., Any]:
    """The function ``jacfwd``/``jacrev`` return: ``fun`` linearized at its arguments
    in ``argnums``, then ``blocks(fun, in_leaves, out_leaves, lin)`` gives, per input
    leaf, its derivative blocks (one per output leaf), assembled as JAX does."""
    holomorphic = bool(holomorphic)
    single = isinstance(argnums, int)

    @functools.wraps(fun)
    def jac_f(*args: Any) -> Any:
        nums = _normalize_argnums(fname, argnums, len(args))
        args = _plain_args(fname, fun, args, skip=nums)  # those: as leaves below
        diff, merge = _split_args(args, nums)
        leaves, tree = tree_flatten(diff)
        leaves = _plain_leaves(fname, fun, leaves, diff, nums)
        mask = _diff_mask(fname, leaves, allow_int)
        if fname == "jacfwd" or holomorphic:
            for x in leaves:
                _check_kind(fname, "inputs", core.get_aval(x).dtype, holomorphic)
        out_tree_box: list[Any] = []
        flat_fun = _jac_flat_fun(fname, fun, merge, tree, out_tree_box, has_aux)
        outs, lin, aux = ad.linearize_flat(
            flat_fun,
            leaves,
            mask,
            origin=f"{fname} of {describe_fun(fun)}",
            has_aux=has_aux,
            spmd=fname == "jacrev",
        )
        if fname == "jacrev" or holomorphic:
            for o in outs:
                what = f"outputs of {describe_fun(fun)}"
                _check_kind(fname, what, core.get_aval(o).dtype, holomorphic)
        per_input = blocks(fun, leaves, outs, lin)
        jac = _assemble_jacobian(per_input, tree, out_tree_box[-1], single)
        return (jac, aux) if has_aux else jac

    return jac_f


def _columns(
    fun: Callable[..., Any], leaves: list[Any], outs: list[Any], lin: ad.LinearFunction
) -> list[list[Any]]:
    """jacfwd's blocks: per input leaf, the linear map pushed over its basis (vmap)."""
    per_input = []
    for i, x in enumerate(leaves):
        aval = core.get_aval(x)
        zeros = [ad.Zero(ad.tangent_aval(core.get_aval(y))) for y in leaves]

        def push(t: Any, i: int = i, zeros: list[Any] = zeros) -> list[Any]:
            return lin.forward([t if j == i else z for j, z in enumerate(zeros)])

        cols, col_dims = batching.vmap_flat(
            push, aval.size, [_std_basis(aval)], [0], origin=f"jacfwd of {describe_fun(fun)}"
        )
        jac_k = []
        for o, c, d in zip(outs, cols, col_dims):
            o_shape = core.get_aval(o).shape
            c = batching.bdim_at(c, d, aval.size, 0)
            jac_k.append(_jac_leaf(c, o_shape, aval.shape, basis_first=False))
        per_input.append(jac_k)
    return per_input


def _rows(
    fun: Callable[..., Any], leaves: list[Any], outs: list[Any], lin: ad.LinearFunction
) -> list[list[Any]]:
    """jacrev's blocks: per output leaf, the transposed map pulled over its basis
    (vmap), then regrouped per input leaf."""
    rows_per_out = []
    for k, o in enumerate(outs):
        o_aval = ad.tangent_aval(core.get_aval(o))
        zeros = [ad.Zero(ad.tangent_aval(core.get_aval(y))) for y in outs]

        def pull(ct: Any, k: int = k, zeros: list[Any] = zeros) -> list[Any]:
            cts = lin.transpose([ct if j == k else z for j, z in enumerate(zeros)])
            return [ad.instantiate(c) for c in cts]

        rows, row_dims = batching.vmap_flat(
            pull,
            o_aval.size,
            [_std_basis(o_aval)],
            [0],
            origin=f"jacrev of {describe_fun(fun)}",
        )
        rows_per_out.append((o_aval, rows, row_dims))
    per_input = []
    for i, x in enumerate(leaves):
        in_shape = core.get_aval(x).shape
        jac_k = []
        for o_aval, rows, row_dims in rows_per_out:
            r = batching.bdim_at(rows[i], row_dims[i], o_aval.size, 0)
            jac_k.append(_jac_leaf(r, o_aval.shape, in_shape, basis_first=True))
        per_input.append(jac_k)
    return per_input


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by forward mode: one batched JVP (``vmap``) over the input basis.

    The result has shape ``out.shape + in.shape`` per (output leaf, input leaf);
    ``(jacobian, aux)`` with ``has_aux`` (``fun`` returns ``(output, aux)``).
    Inputs must be real, or complex with ``holomorphic=True`` (outputs complex too: the
    complex derivative, as JAX).

    >>> import functrace as ft, functrace.numpy as fnp, numpy as np
    >>> ft.jacfwd(fnp.sin)(np.zeros(2))
    Array([[1., 0.],
           [0., 1.]])
    """
    return _jacobian_transform("jacfwd", fun, argnums, has_aux, holomorphic, False, _columns)


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one batched VJP (``vmap``) over the output basis.

    ``(jacobian, aux)`` with ``has_aux``; ``allow_int`` gives float0 zeros for integer
    inputs. Outputs must be real, or complex with ``holomorphic=True`` (inputs complex
    too: the complex derivative, as JAX).

    >>> import functrace as ft, functrace.numpy as fnp, numpy as np
    >>> ft.jacrev(lambda x: x * x)(np.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]])
    """
    return _jacobian_transform("jacrev", fun, argnums, has_aux, holomorphic, allow_int, _rows)


def _assemble_jacobian(
    per_input: list[list[Any]], in_tree: Any, out_tree: Any, single: bool
) -> Any:
    # Result structure: out_tree of (in_tree of arrays), like JAX.
    n_out = out_tree.num_leaves
    by_out = []
    for k in range(n_out):
        in_struct = tree_unflatten(in_tree, [per_input[i][k] for i in range(len(per_input))])
        by_out.append(in_struct[0] if single else in_struct)
    return tree_unflatten(out_tree, by_out)


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Hessian, ``jacfwd(jacrev(fun))`` (``(hessian, aux)`` with ``has_aux``)."""
    return jacfwd(
        jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic=holomorphic
    )


def jacobian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian: :func:`jacrev` (same arguments and result)."""
    return jacrev(fun, argnums, has_aux, holomorphic, allow_int)
