"""``lax.linalg.tridiagonal_solve``: LAPACK ``gtsv``'s elimination with partial
pivoting, written with ``lax.scan``.

Each step eliminates the subdiagonal entry of a column, swapping the pending row with
the next one when the next row's entry is larger in magnitude (which gives ``U`` a
second superdiagonal), as ``gtsv`` does; a reverse scan then substitutes back. The
elimination is traced operations only, so it differentiates (the derivative of the
solve, ``A^-1 (db - dA x)``, through the same steps), batches and jits; the pivot
choice is piecewise constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.lax.control_flow import scan
from functrace.lax.elementwise import abs, div, ge, mul, select, sub
from functrace.lax.shapes import broadcast_in_dim, concatenate, rev, transpose


def _move_last_to_front(x: Any, axis: int) -> Any:
    rank = len(core.get_aval(x).shape)
    perm = (axis, *[a for a in range(rank) if a != axis])
    return transpose(x, perm)


def _back(x: Any, axis: int) -> Any:
    rank = len(core.get_aval(x).shape)
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    return transpose(x, tuple(perm))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """The solution ``x`` of ``A x = b`` for the tridiagonal ``A`` with subdiagonal
    ``dl`` (``dl[i] = A[i, i-1]``, ``dl[0]`` unused), diagonal ``d`` and superdiagonal
    ``du`` (``du[i] = A[i, i+1]``, ``du[-1]`` unused), each of shape ``(..., m)``, and
    ``b`` of shape ``(..., m, n)`` (``jax.lax.linalg.tridiagonal_solve``). Elimination
    with partial pivoting, as LAPACK's ``gtsv`` (module docstring); a singular ``A``
    gives infinities or NaN. ``perturb_singular=True`` is a ``NotImplementedError``.

    >>> import numpy as np
    >>> x = tridiagonal_solve(np.array([0.0, 1.0, 1.0]), np.array([2.0, 2.0, 2.0]),
    ...                       np.array([1.0, 1.0, 0.0]), np.array([[3.0], [4.0], [3.0]]))
    >>> np.asarray(x).ravel()
    array([1., 1., 1.])
    """
    fname = "tridiagonal_solve"
    if perturb_singular:
        raise NotImplementedError(f"{fname}: perturb_singular=True is not supported.")
    arrs = [a if isinstance(a, core.Tracer) else np.asarray(a) for a in (dl, d, du, b)]
    dl, d, du, b = arrs
    shapes = [tuple(core.get_aval(a).shape) for a in arrs]
    dtypes = {core.get_aval(a).dtype for a in arrs}
    if len(dtypes) != 1 or next(iter(dtypes)).kind not in "fc":
        raise TypeError(
            f"{fname}: expected dl, d, du and b of one floating dtype, got "
            f"{[str(core.get_aval(a).dtype) for a in arrs]}."
        )
    if len(shapes[3]) < 2 or not (shapes[0] == shapes[1] == shapes[2] == shapes[3][:-1]):
        raise ValueError(
            f"{fname}: expected dl, d and du of shape (..., m) and b of shape (..., m, n), "
            f"got {shapes[0]}, {shapes[1]}, {shapes[2]} and {shapes[3]}."
        )
    m = shapes[1][-1]
    if m == 0:
        return b
    k = len(shapes[1]) - 1  # the diagonals' axis of m; b's is k too
    dl, d, du = (_move_last_to_front(a, k) for a in (dl, d, du))
    b = _move_last_to_front(b, k)
    if m == 1:
        return _back(div(b, broadcast_in_dim(d, core.get_aval(b).shape, tuple(range(k + 1)))), k)
    col = core.get_aval(b).shape[1:]  # a row of b: (..., n)

    def row_b(x: Any) -> Any:  # a diagonal's row (...) against a row of b (..., n)
        return broadcast_in_dim(x, col, tuple(range(k)))

    zeros_row = np.zeros(core.get_aval(d).shape[1:], core.get_aval(d).dtype)
    zero = zeros_row[None]
    # step i (0..m-2) eliminates A[i+1, i] = dl[i+1], with the next row's d[i+1],
    # du[i+1] (0 at the last step) and b[i+1]
    lower = dl[1:]
    d_next, b_next = d[1:], b[1:]
    du_next = concatenate([du[1:-1], zero], 0)

    def eliminate(carry: Any, xs: Any) -> Any:
        d_cur, du_cur, b_cur = carry
        low, dn, dun, bn = xs
        keep = ge(abs(d_cur), abs(low))  # no interchange
        one = np.ones(core.get_aval(low).shape, core.get_aval(low).dtype)
        f_keep = div(low, select(keep, d_cur, one))  # (the branch not taken never
        f_swap = div(d_cur, select(keep, one, low))  # divides by zero)
        row = (
            select(keep, d_cur, low),  # U[i, i]
            select(keep, du_cur, dn),  # U[i, i+1]
            select(keep, zeros_row, dun),  # U[i, i+2]: only after an interchange
            select(row_b(keep), b_cur, bn),
        )
        nxt = (
            select(keep, sub(dn, mul(f_keep, du_cur)), sub(du_cur, mul(f_swap, dn))),
            select(keep, dun, mul(-f_swap, dun)),
            select(
                row_b(keep), sub(bn, mul(row_b(f_keep), b_cur)), sub(b_cur, mul(row_b(f_swap), bn))
            ),
        )
        return nxt, row

    (d_last, _, b_last), (u0, u1, u2, c) = scan(
        eliminate, (d[0], du[0], b[0]), (lower, d_next, du_next, b_next)
    )
    x_last = div(b_last, row_b(d_last))
    x_prev = div(sub(c[-1], mul(row_b(u1[-1]), x_last)), row_b(u0[-1]))

    def substitute(carry: Any, xs: Any) -> Any:
        x1, x2 = carry  # x[i+1], x[i+2]
        a0, a1, a2, ci = xs
        xi = div(sub(sub(ci, mul(row_b(a1), x1)), mul(row_b(a2), x2)), row_b(a0))
        return (xi, x1), xi

    if m == 2:
        x = concatenate([x_prev[None], x_last[None]], 0)
    else:
        rows = tuple(rev(a[:-1], (0,)) for a in (u0, u1, u2, c))
        _, xs = scan(substitute, (x_prev, x_last), rows)
        x = concatenate([rev(xs, (0,)), x_prev[None], x_last[None]], 0)
    return _back(x, k)
