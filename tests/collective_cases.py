"""Collectives over named vmap axes on fixed inputs, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/collectives_jax.npz`` was recorded, ``functrace`` in
tests/test_collectives.py. The cases are the compositions where the meaning of a
collective's derivative shows: ``vmap(grad(f))`` (the transpose of ``psum`` sums the
cotangents over the examples), ``grad`` of a ``vmap``, nested names, ``all_gather``'s
transpose, and ``psum`` of values that are the same for every example. Nothing here
imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

X = np.array([0.3, -1.2, 2.0, 0.7])
X2 = np.array([[0.3, -1.2, 2.0], [0.7, -0.4, 1.5]])
X3 = np.array([[[0.3, -1.2], [2.0, 0.7]], [[-0.4, 0.1], [1.5, -2.2]], [[1.0, 0.9], [-0.3, 0.2]]])


def cases(lib: Any) -> dict[str, Any]:
    vmap, grad, lax, fnp = lib.vmap, lib.grad, lib.lax, lib.numpy
    out: dict[str, Any] = {}

    def named(f: Any, **kw: Any) -> Any:
        return vmap(f, axis_name="i", **kw)

    def softmax(x: Any) -> Any:
        e = fnp.exp(x)
        return e / lax.psum(e, "i")

    out["psum"] = named(lambda x: lax.psum(x, "i"))(X)
    out["psum_const"] = named(lambda x: lax.psum(2.0, "i") + x)(X)
    out["pmean"] = named(lambda x: x - lax.pmean(x, "i"))(X)
    out["pmax"] = named(lambda x: lax.pmax(x, "i"))(X)
    out["pmin"] = named(lambda x: lax.pmin(x, "i"))(X2)
    out["axis_index"] = named(lambda x: lax.axis_index("i"))(X).astype(np.int64)
    out["softmax"] = named(softmax)(X)
    # vmap(grad(f)): psum's transpose sums the cotangent over the examples
    out["vmap_grad_psum"] = named(grad(lambda x: lax.psum(x, "i")))(X)
    out["vmap_grad_ratio"] = named(grad(lambda x: x / lax.psum(x, "i")))(X)
    out["vmap_grad_sq_ratio"] = named(grad(lambda x: x**2 / lax.psum(x**2, "i")))(X)
    out["vmap_grad_softmax"] = named(grad(lambda x: softmax(x) * x))(X)
    out["vmap_grad_pmean"] = named(grad(lambda x: (x - lax.pmean(x, "i")) ** 2))(X)
    # forward mode under the vmap: every example's tangent at once (JAX's answer too)
    out["vmap_jacfwd"] = named(lib.jacfwd(lambda x: x * lax.psum(x, "i")))(X)
    out["vmap_jacrev"] = named(lib.jacrev(lambda x: x * lax.psum(x, "i")))(X)
    out["vmap_grad_center"] = named(grad(lambda x: x * lax.pmean(x**3, "i")))(X)
    out["grad_vmap_softmax"] = grad(lambda x: (named(softmax)(x) * fnp.arange(4.0)).sum())(X)
    center = named(lambda r: r - lax.pmean(r, "i"))
    out["grad_vmap_center"] = grad(lambda x: (center(x) ** 3).sum())(X)
    # nested names: the inner, the outer and both
    inner = vmap(vmap(lambda x: x * lax.psum(x, "j"), axis_name="j"), axis_name="i")
    outer = vmap(vmap(lambda x: x * lax.psum(x, "i"), axis_name="j"), axis_name="i")
    both = vmap(vmap(lambda x: x * lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i")
    out["nested_inner"] = inner(X2)
    out["nested_outer"] = outer(X2)
    out["nested_both"] = both(X2)
    out["nested_index"] = vmap(
        vmap(lambda x: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i"
    )(X2).astype(np.int64)
    for name, f in [("inner", inner), ("outer", outer), ("both", both)]:
        out[f"grad_nested_{name}"] = grad(lambda x, f=f: (f(x) ** 2).sum())(X2)
    out["vmap_grad_nested_both"] = vmap(
        vmap(grad(lambda x: x * lax.psum(x, ("i", "j"))), axis_name="j"), axis_name="i"
    )(X2)
    # all_gather: stacked and tiled, and its transpose
    out["all_gather"] = named(lambda x: lax.all_gather(x, "i"))(X2)
    out["all_gather_axis1"] = named(lambda x: lax.all_gather(x, "i", axis=1))(X3)
    out["all_gather_tiled"] = named(lambda x: lax.all_gather(x, "i", tiled=True))(X3)
    out["all_gather_tiled_axis1"] = named(lambda x: lax.all_gather(x, "i", axis=1, tiled=True))(X3)
    w = fnp.arange(12.0).reshape(3, 2, 2)
    out["vmap_grad_all_gather"] = named(
        grad(lambda x: (lax.all_gather(x, "i") * w).sum()), in_axes=0
    )(X3)
    out["grad_vmap_all_gather_tiled"] = grad(
        lambda x: (named(lambda r: lax.all_gather(r**2, "i", axis=1, tiled=True))(x) ** 2).sum()
    )(X3)
    # psum_scatter (the transpose of all_gather) and ppermute (JAX's vmap takes only full
    # permutations)
    x6 = np.arange(72.0).reshape(3, 6, 4) / 10
    y = np.arange(18.0).reshape(3, 2, 3) / 10
    cycle = [(0, 1), (1, 2), (2, 0)]
    out["psum_scatter_tiled"] = named(lambda r: lax.psum_scatter(r, "i", tiled=True))(x6)
    out["psum_scatter_dim1"] = named(lambda r: lax.psum_scatter(r, "i", scatter_dimension=1))(y)
    out["ppermute"] = named(lambda r: lax.ppermute(r, "i", cycle))(y)
    out["vmap_grad_ppermute"] = named(
        grad(lambda r: (lax.ppermute(r, "i", cycle) * fnp.arange(3.0)).sum())
    )(y[:, 0])
    out["vmap_grad_psum_scatter"] = named(grad(lambda r: (lax.psum_scatter(r, "i") ** 2).sum()))(
        y[:, 0]
    )
    # psum of a value that is the same for every example
    c = np.array([0.5, -1.5, 0.8])
    out["psum_unbatched"] = named(lambda x, c: x * lax.psum(c, "i"), in_axes=(0, None))(X2, c)
    out["grad_psum_unbatched"] = grad(
        lambda c: (named(lambda x, c: x * lax.psum(c * c, "i"), in_axes=(0, None))(X2, c)).sum()
    )(c)
    out["vmap_grad_psum_unbatched"] = named(
        grad(lambda x, c: (x * lax.psum(c * c, "i")).sum(), argnums=1), in_axes=(0, None)
    )(X2, c)
    return {k: np.asarray(v) for k, v in out.items()}
