"""Op-table rows: the solvers and library functions built from loops and custom rules
(``custom_batching``'s ``custom_vmap`` and ``sequential_vmap``,
``scipy.sparse.linalg``'s iterative solvers and their implicit derivatives,
``lax.linalg.tridiagonal_solve``'s scans), JAX's
``nn.dot_product_attention``, ``scipy.interpolate.RegularGridInterpolator`` and
``scipy.cluster.vq.vq``, against SciPy or a NumPy formula.

Their own tests check JAX's numbers; these rows put them through the grad/jvp/vmap/jit,
eager-reuse and empty-input stacks and the composition fuzzer (hooks, custom rules,
``cond`` and threads around them). ``experimental.ode.odeint`` has no forward mode
(its adjoint is a ``custom_vjp``, as JAX's), which every row needs: its compositions
are in tests/test_ode.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.cluster.vq as scv
import scipy.interpolate as sinterp

import functrace.numpy as fnp
from functrace import nn
from functrace.custom_batching import custom_vmap, sequential_vmap
from functrace.lax.linalg import tridiagonal_solve
from functrace.scipy.cluster.vq import vq
from functrace.scipy.interpolate import RegularGridInterpolator
from functrace.scipy.sparse.linalg import bicgstab, cg, gmres
from op_db import Arg, F, OpInfo

F64 = (np.float64,)
POS = Arg(domain=(0.5, 2.0))


def _row(name: str, fn: Any, ref: Any, args: Any, prims: Any = (), **kw: Any) -> OpInfo:
    kw.setdefault("dtypes", F64)
    return OpInfo(name, fn, ref, tuple(args), tuple(prims), **kw)


# attention in JAX's layout (batch, time, heads, features)
def _np_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> Any:
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if causal:
        t, s = logits.shape[-2:]
        logits = np.where(np.tril(np.ones((t, s), bool)), logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", w, v).astype(q.dtype)


# sparse solvers: a symmetric positive definite (cg) or a general, diagonally dominant
# (bicgstab, gmres) matrix built from the row's argument
def _spd(m: Any) -> Any:
    return m @ m.T + 4.0 * fnp.eye(m.shape[0])


def _general(m: Any) -> Any:
    # diagonally dominant: BiCGSTAB and GMRES converge in a few steps on every draw
    return 0.2 * m + 5.0 * fnp.eye(m.shape[0])


def _np_solve(make: Any) -> Any:
    def solve(m: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.linalg.solve(np.asarray(make(m)), b)

    return solve


def _solver(solve: Any, make: Any, **kw: Any) -> Any:
    return lambda m, b: solve(make(m), b, tol=1e-13, atol=0.0, **kw)[0]


# tridiagonal_solve: diagonally dominant systems (the pivoting is in its own tests)
def _np_tridiagonal(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> Any:
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    return np.linalg.solve(a, b)


# RegularGridInterpolator: query points inside one cell of each axis, away from the
# grid lines where the linear interpolant has kinks
GRID = (np.array([0.0, 1.0, 2.5, 3.0]), np.array([-1.0, 0.0, 2.0]))
IN_CELL = Arg(domain=(1.1, 1.9))


def _interp(values: Any, xi: Any) -> Any:
    return RegularGridInterpolator(GRID, values)(fnp.stack([xi, xi - 1.0], axis=-1))


def _np_interp(values: np.ndarray, xi: np.ndarray) -> np.ndarray:
    rgi = sinterp.RegularGridInterpolator(GRID, values)
    return rgi(np.stack([xi, xi - 1.0], axis=-1))


# custom_vmap with a faithful rule (the batched function; arguments of one shape), so
# every stack must give the loop's numbers; its reverse mode is the function's VJP
@custom_vmap
def _cv(x: Any, y: Any) -> Any:
    return fnp.sin(x) * y + x * x


@_cv.def_vmap
def _cv_rule(axis_size: int, in_batched: list[bool], xs: Any, ys: Any) -> Any:
    return fnp.sin(xs) * ys + xs * xs, any(in_batched)


_SEQ = sequential_vmap(lambda x, y: fnp.sin(x) * y + fnp.sum(x * x))


ROWS: list[OpInfo] = [
    _row(
        "custom_batching.custom_vmap",
        _cv,
        lambda x, y: np.sin(x) * y + x * x,
        (F, F),
        ("custom_vmap_call",),
        shapes="same",
        dtypes=(np.float64, np.float32),
        rtol=1e-6,
    ),
    _row(
        "custom_batching.sequential_vmap",
        _SEQ,
        lambda x, y: (np.sin(x) * y + np.sum(x * x)).astype(np.asarray(x).dtype),
        (F, F),
        ("custom_vmap_call", "scan"),
        shapes="same",
        dtypes=(np.float64, np.float32),
        rtol=1e-6,
    ),
    _row(
        "nn.dot_product_attention",
        nn.dot_product_attention,
        _np_attention,
        (F, F, F),
        ("dot_general", "exp"),
        shapes=((1, 3, 2, 4), (1, 4, 2, 4), (1, 4, 2, 4)),
        dtypes=(np.float64, np.float32),
        rtol=1e-5,
        atol=1e-6,
    ),
    _row(
        "nn.dot_product_attention_causal",
        lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True),
        lambda q, k, v: _np_attention(q, k, v, causal=True),
        (F, F, F),
        ("dot_general", "exp"),
        shapes=((2, 3, 1, 2), (2, 3, 1, 2), (2, 3, 1, 2)),
        rtol=1e-9,
        atol=1e-12,
    ),
    _row(
        "scipy.sparse.linalg.cg",
        _solver(cg, _spd),
        _np_solve(lambda m: m @ m.T + 4.0 * np.eye(m.shape[0])),
        (F, F),
        ("custom_linear_solve",),
        shapes=((3, 3), (3,)),
        rtol=1e-8,
        atol=1e-9,
    ),
    _row(
        "scipy.sparse.linalg.bicgstab",
        _solver(bicgstab, _general),
        _np_solve(lambda m: 0.2 * m + 5.0 * np.eye(m.shape[0])),
        (F, F),
        ("custom_linear_solve",),
        shapes=((3, 3), (3, 2)),
        rtol=1e-8,
        atol=1e-9,
    ),
    _row(
        "scipy.sparse.linalg.gmres",
        _solver(gmres, _general, restart=3),
        _np_solve(lambda m: 0.2 * m + 5.0 * np.eye(m.shape[0])),
        (F, F),
        ("custom_linear_solve",),
        shapes=((3, 3), (3,)),
        rtol=1e-8,
        atol=1e-9,
    ),
    _row(
        "lax.linalg.tridiagonal_solve",
        tridiagonal_solve,
        _np_tridiagonal,
        (Arg(domain=(-1.0, 1.0)), Arg(domain=(3.0, 5.0)), Arg(domain=(-1.0, 1.0)), F),
        ("scan",),
        shapes=((4,), (4,), (4,), (4, 2)),
        rtol=1e-10,
        atol=1e-12,
    ),
    _row(
        "scipy.interpolate.RegularGridInterpolator",
        _interp,
        _np_interp,
        (F, IN_CELL),
        ("gather",),
        shapes=((4, 3), (5,)),
        rtol=1e-10,
        atol=1e-12,
    ),
    _row(
        "scipy.cluster.vq.vq",
        lambda obs, book: vq(obs, book)[1],
        lambda obs, book: scv.vq(obs, book)[1],
        (F, F),
        ("reduce_min",),
        shapes=((5, 2), (3, 2)),
        avoid_ties=True,
        rtol=1e-10,
        atol=1e-12,
    ),
]
