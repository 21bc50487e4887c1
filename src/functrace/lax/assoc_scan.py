"""``associative_scan``: the prefix "sums" of an associative operation, computed as a
parallel prefix (a tree of ``O(log n)`` levels of vectorised calls of the operation),
not as a sequential loop. Built from ``slice``, ``concatenate`` and ``reshape``, so it
differentiates, batches and compiles through its parts.

One level: combine neighbouring pairs ``x[2i] + x[2i+1]`` (one vectorised call),
scan those recursively, which gives the results at the odd positions, then one more
call gives the even ones (``odd[i-1] + x[2i]``); the two halves are interleaved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import describe_fun
from functrace.lax._util import normalize_axis
from functrace.lax.indexing import slice_in_dim
from functrace.lax.shapes import concatenate, reshape, rev
from functrace.tree_util import tree_flatten, tree_unflatten


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """``even[0], odd[0], even[1], odd[1], ...`` along ``axis`` (``even`` as long as
    ``odd`` or one longer)."""
    shape = core.get_aval(even).shape
    n_even, n_odd = shape[axis], core.get_aval(odd).shape[axis]
    head = slice_in_dim(even, 0, n_odd, axis=axis) if n_even > n_odd else even
    pair_shape = (*shape[:axis], n_odd, 1, *shape[axis + 1 :])
    pairs = concatenate([reshape(head, pair_shape), reshape(odd, pair_shape)], axis + 1)
    out = reshape(pairs, (*shape[:axis], 2 * n_odd, *shape[axis + 1 :]))
    if n_even > n_odd:
        out = concatenate([out, slice_in_dim(even, n_odd, n_even, axis=axis)], axis)
    return out


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """Inclusive prefix combination of ``elems`` along ``axis`` with the associative
    ``fn``: ``out[i] = elems[0] (+) elems[1] (+) ... (+) elems[i]``.

    ``elems`` is a pytree of arrays of one length along ``axis``; ``fn(a, b)`` takes two
    pytrees of that structure (slices of ``elems`` along ``axis``, of equal lengths) and
    returns one, combining them elementwise along ``axis``. ``fn`` is called about
    ``2 log2(n)`` times on vectors, a parallel prefix as in JAX; its result equals the
    sequential one up to the rounding of a different association order. ``reverse``
    combines from the end (``out[i] = elems[i] (+) ... (+) elems[n-1]``).

    >>> import functrace.numpy as fnp, numpy as np
    >>> associative_scan(fnp.add, np.arange(5.0)).tolist()
    [0.0, 1.0, 3.0, 6.0, 10.0]
    """
    if not callable(fn):
        raise TypeError(f"associative_scan: expected a callable fn, got {type(fn).__name__}.")
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    avals = [core.get_aval(x) for x in leaves]
    axes = []
    for a in avals:
        if a.ndim == 0:
            raise ValueError(
                "associative_scan: expected arrays with at least one axis to scan along, "
                "got a scalar leaf."
            )
        axes.append(normalize_axis("associative_scan", int(axis), a.ndim))
    lengths = [a.shape[ax] for a, ax in zip(avals, axes)]
    if len(set(lengths)) != 1:
        raise ValueError(
            f"associative_scan: expected leaves of one length along axis {axis}, got "
            f"shapes {[a.shape for a in avals]}."
        )
    if reverse:
        leaves = [rev(x, (ax,)) for x, ax in zip(leaves, axes)]

    def combine(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        out = fn(tree_unflatten(tree, list(a)), tree_unflatten(tree, list(b)))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                f"associative_scan: expected {describe_fun(fn)} to return a pytree of the "
                f"structure of elems, {tree}, got {out_tree}."
            )
        want = core.get_aval(a[0]).shape[axes[0]]
        for o, ax in zip(out_leaves, axes):
            shp = core.get_aval(o).shape
            if len(shp) <= ax or shp[ax] != want:
                raise ValueError(
                    f"associative_scan: expected {describe_fun(fn)} to combine elementwise "
                    f"along axis {ax} (results of length {want} there), got shape {shp}."
                )
        return out_leaves

    def scan(xs: list[Any]) -> list[Any]:
        n = core.get_aval(xs[0]).shape[axes[0]]
        if n < 2:
            return xs
        firsts = [slice_in_dim(x, 0, n - 1, 2, ax) for x, ax in zip(xs, axes)]
        seconds = [slice_in_dim(x, 1, n, 2, ax) for x, ax in zip(xs, axes)]
        odd = scan(combine(firsts, seconds))  # results at positions 1, 3, 5, ...
        rest = [slice_in_dim(x, 2, n, 2, ax) for x, ax in zip(xs, axes)]  # x[2], x[4], ...
        if n > 2:
            prev = [slice_in_dim(o, 0, (n - 1) // 2, axis=ax) for o, ax in zip(odd, axes)]
            tail = combine(prev, rest)
            even = [
                concatenate([slice_in_dim(x, 0, 1, axis=ax), t], ax)
                for x, t, ax in zip(xs, tail, axes)
            ]
        else:
            even = [slice_in_dim(x, 0, 1, axis=ax) for x, ax in zip(xs, axes)]
        return [_interleave(e, o, ax) for e, o, ax in zip(even, odd, axes)]

    out = scan(leaves)
    if reverse:
        out = [rev(x, (ax,)) for x, ax in zip(out, axes)]
    return tree_unflatten(tree, out)


__all__ = ["associative_scan"]
