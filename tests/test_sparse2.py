"""Shape operations, sparse-sparse and sampled products, ``random_bcoo`` and the
sparse Jacobians of ``functrace.experimental.sparse`` against JAX's numbers (recorded
from ``sparse2_cases.py``), finite differences, ``jit``, ``vmap`` and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.experimental import sparse
from functrace.experimental.sparse import BCOO
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from sparse2_cases import IDX, X3, D, M, R, X, cases


def _tol(k: str, v: np.ndarray) -> float:
    return 1e-6 if v.dtype == np.float32 else 1e-12


def test_values_and_gradients_match_jax():
    assert_matches_recorded(cases(ft), "sparse2_jax.npz", _tol)


def _mat(d):
    return BCOO((d, IDX), shape=(3, 4))


def _dense(x):
    return np.asarray(x.todense() if isinstance(x, BCOO) else x)


def _shape_ops(d):
    """Every shape operation of one BCOO, as dense arrays (for jit/vmap/grad)."""
    S = _mat(d)
    return (
        S.reshape(6, 2).todense(),
        sparse.bcoo_squeeze(S.reshape(1, 12), dimensions=(0,)).todense(),
        sparse.bcoo_broadcast_in_dim(S, shape=(2, 3, 4), broadcast_dimensions=(1, 2)).todense(),
        sparse.bcoo_concatenate([S, S.T.T], dimension=1).todense(),
        sparse.bcoo_slice(S, start_indices=(0, 1), limit_indices=(2, 4)).todense(),
        sparse.bcoo_dynamic_slice(S, (1, 1), (2, 2)).todense(),
        sparse.bcoo_rev(S, (0, 1)).todense(),
        S[1:, ::2].todense(),
        (S @ S.T).todense(),
        sparse.bcoo_dot_general_sampled(
            fnp.reshape(d[:6], (3, 2)), fnp.reshape(fnp.tile(d, 2)[:8], (2, 4)), IDX,
            dimension_numbers=(((1,), (0,)), ((), ())),
        ),
    )  # fmt: skip


def test_dense_equivalents_and_corners():
    Md = np.zeros((3, 4))
    for (i, j), v in zip(IDX, D):
        if i < 3 and j < 4:
            Md[i, j] += v
    Ed = np.reshape(np.tile(D, 2)[:8], (2, 4))
    want = (
        Md.reshape(6, 2), Md.ravel(), np.broadcast_to(Md, (2, 3, 4)),
        np.concatenate([Md, Md], 1), Md[0:2, 1:4], Md[1:3, 1:3], Md[::-1, ::-1],
        Md[1:, ::2], Md @ Md.T,
    )  # fmt: skip
    got = _shape_ops(D)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)
    full = np.reshape(D[:6], (3, 2)) @ Ed
    sampled = np.where(IDX[:, 0] < 3, full[np.minimum(IDX[:, 0], 2), np.minimum(IDX[:, 1], 3)], 0)
    np.testing.assert_allclose(np.asarray(got[-1]), sampled, rtol=1e-14)
    # a padding entry stays padding through concatenate (JAX's shift of a vector's
    # padding index would land on the next operand's first element)
    v = BCOO.fromdense(np.array([1.0, 0.0, 2.0]), nse=4)
    w = BCOO.fromdense(np.array([5.0, 6.0]))
    cat = sparse.bcoo_concatenate([v, w], dimension=0)
    np.testing.assert_array_equal(_dense(cat), [1.0, 0.0, 2.0, 5.0, 6.0])
    # negative indices wrap once before the shape operations, as todense reads them
    N = BCOO((np.array([1.0, 2.0]), np.array([[-1, 0], [0, -1]], np.int32)), shape=(3, 4))
    Nd = _dense(N)
    np.testing.assert_array_equal(_dense(N[2]), Nd[2])
    np.testing.assert_array_equal(_dense(N.reshape(12)), Nd.ravel())
    np.testing.assert_array_equal(_dense(sparse.bcoo_rev(N, (1,))), Nd[:, ::-1])
    np.testing.assert_array_equal(_dense(N @ N.T), Nd @ Nd.T)
    # update_layout, BCOO.reshape with -1, getitem with None and ...
    T = BCOO.fromdense(np.arange(24.0).reshape(2, 3, 4), n_dense=2)
    U = sparse.bcoo_update_layout(T, n_dense=0)
    assert U.n_dense == 0 and U.nse == 24
    np.testing.assert_array_equal(_dense(U), np.arange(24.0).reshape(2, 3, 4))
    assert sparse.bcoo_update_layout(T, n_batch=0) is T
    np.testing.assert_array_equal(_dense(BCOO.fromdense(M).reshape(2, -1)), M.reshape(2, -1))
    np.testing.assert_array_equal(_dense(BCOO.fromdense(M)[None, ..., 1]), M[None, ..., 1])
    assert isinstance(BCOO.fromdense(M) @ BCOO.fromdense(M).T, BCOO)
    # random_bcoo: unique positions, in range, the requested layout
    r = sparse.random_bcoo(ft.random.PRNGKey(1), (6, 7), nse=20)
    flat = np.ravel_multi_index(np.asarray(r.indices).T, (6, 7))
    assert len(set(flat.tolist())) == 20 and r.indices.dtype == np.int64
    assert np.all((np.asarray(r.data) >= 0) & (np.asarray(r.data) < 1))


def test_gradients_against_finite_differences():
    opts = dict(order=2, modes=("fwd", "rev"))
    check_grads(lambda d: fnp.sin(_mat(d).reshape(2, 6).todense()), (D,), **opts)
    check_grads(
        lambda d: (
            sparse.bcoo_slice(_mat(d), start_indices=(0, 0), limit_indices=(2, 2)).todense() ** 2
        ),
        (D,),
        **opts,
    )
    check_grads(
        lambda d: sparse.bcoo_dynamic_slice(_mat(d), (1, 1), (2, 3)).data ** 2, (D,), **opts
    )
    check_grads(lambda d: (_mat(d)[::-1] @ X) ** 2, (D,), **opts)
    check_grads(lambda d, e: fnp.sin((_mat(d) @ _mat(e).T).todense()), (D, 2 * D + 1), **opts)
    check_grads(
        lambda a, b: (
            sparse.bcoo_dot_general_sampled(a, b, IDX, dimension_numbers=(((1,), (0,)), ((), ())))
            ** 2
        ),
        (R[:3, :2], R[:2, :4]),
        **opts,
    )
    sp_f = sparse.sparsify(lambda m, v: fnp.concatenate([m, m[::-1]], axis=1) @ v)
    check_grads(lambda d, v: sp_f(_mat(d), v), (D, np.concatenate([X, X])), **opts)
    # reverse mode through the sparse-sparse product (JAX has forward mode only)
    f = lambda d: fnp.sum(fnp.sin((_mat(d) @ _mat(d).T).todense()))  # noqa: E731
    np.testing.assert_allclose(np.asarray(ft.grad(f)(D)), np.asarray(ft.jacfwd(f)(D)), rtol=1e-12)


def _few_ops(d):
    S = _mat(d)
    both = sparse.bcoo_concatenate([S[1:], sparse.bcoo_rev(S, (1,))], dimension=0)
    return (both @ S.T).todense()


def test_jit_and_vmap_of_the_shape_operations():
    np.testing.assert_allclose(
        np.asarray(ft.jit(_few_ops)(D)), np.asarray(_few_ops(D)), rtol=1e-14, atol=1e-14
    )
    datas = np.stack([D, 2 * D - 1, D[::-1]])
    mapped = ft.vmap(_shape_ops)(datas)
    for k, col in enumerate(mapped):
        loop = np.stack([np.asarray(_shape_ops(d)[k]) for d in datas])
        np.testing.assert_allclose(np.asarray(col), loop, rtol=1e-14, atol=1e-14)
    # traced start indices of dynamic_slice, and a BCOO argument under jit
    ds = ft.jit(lambda s, i: sparse.bcoo_dynamic_slice(s, (i, 0), (2, 4)).todense())
    S = _mat(D)
    for i in (-1, 0, 1, 2):
        want = sparse.bcoo_dynamic_slice(S, (i, 0), (2, 4)).todense()
        np.testing.assert_array_equal(np.asarray(ds(S, i)), np.asarray(want))
    g = lambda d: fnp.sum(fnp.sin(_mat(d)[1:].reshape(8).todense()))  # noqa: E731
    per = ft.vmap(ft.grad(g))(datas)
    np.testing.assert_allclose(np.asarray(per), np.stack([ft.grad(g)(d) for d in datas]))
    tot = ft.grad(lambda ds_: ft.vmap(g)(ds_).sum())(datas)
    np.testing.assert_allclose(np.asarray(tot), np.asarray(per), rtol=1e-13)


def test_sparse_jacobians():
    S = BCOO.fromdense(M)
    j = sparse.jacrev(lambda s: fnp.sin(s @ X))(S)
    jf = sparse.jacfwd(lambda s: fnp.sin(s @ X))(S)
    assert j.shape == (3, S.nse)
    np.testing.assert_allclose(np.asarray(j), np.asarray(jf), rtol=1e-13)
    g = sparse.jacobian(lambda s: fnp.sum(s @ X))(S)
    assert isinstance(g, BCOO) and g.indices is S.indices
    (gs, gx), aux = sparse.jacfwd(lambda s, x: (fnp.sum(s @ x), 7), argnums=(0, 1), has_aux=True)(
        S, X
    )
    assert isinstance(gs, BCOO) and aux == 7
    np.testing.assert_allclose(np.asarray(gx), M.sum(0), rtol=1e-14)


def test_bcsr_and_legacy_formats_compose():
    C = sparse.BCSR.fromdense(M, nse=7)
    Cr = sparse.CSR.fromdense(M)

    def f(d, x):
        A = sparse.BCSR((d, C.indices, C.indptr), shape=(3, 4))
        B = sparse.CSR((d[:5], Cr.indices, Cr.indptr), shape=(3, 4))
        O = sparse.COO((d[:5], np.array([0, 0, 1, 2, 2], np.int32), Cr.indices), shape=(3, 4))
        return (
            fnp.sin(A @ x)
            + sparse.csr_matvec(B, x) * (O @ x)
            + sparse.CSC.fromdense(A.todense(), nse=7) @ x
        )

    d = np.asarray(C.data) + 0.25
    check_grads(f, (d, X), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(np.asarray(ft.jit(f)(d, X)), np.asarray(f(d, X)), rtol=1e-14)
    ds = np.stack([d, 2 * d, -d])
    np.testing.assert_allclose(
        np.asarray(ft.vmap(f, in_axes=(0, None))(ds, X)),
        np.stack([np.asarray(f(e, X)) for e in ds]),
        rtol=1e-14,
    )
    out = ft.jit(lambda c: c.to_bcoo())(C)  # a BCSR argument and a BCOO result
    np.testing.assert_array_equal(_dense(out), M)
    np.testing.assert_array_equal(np.asarray(sparse.todense(sparse.COO.fromdense(M))), M)


def test_bad_inputs_name_the_function():
    S = BCOO.fromdense(M)
    Sd = BCOO.fromdense(M, n_dense=1)
    cases_ = [
        (ValueError, "bcoo_reshape: cannot reshape",
         lambda: sparse.bcoo_reshape(S, new_sizes=(5,))),
        (ValueError, "bcoo_reshape: the new shape cannot mix", lambda: Sd.reshape(2, 6)),
        (TypeError, "bcoo_reshape: expected new_sizes",
         lambda: sparse.bcoo_reshape(S, new_sizes=3)),
        (ValueError, "bcoo_squeeze: cannot squeeze",
         lambda: sparse.bcoo_squeeze(S, dimensions=(0,))),
        (ValueError, "bcoo_broadcast_in_dim: cannot broadcast",
         lambda: sparse.bcoo_broadcast_in_dim(S, shape=(3, 5), broadcast_dimensions=(0, 1))),
        (NotImplementedError, "bcoo_broadcast_in_dim: adding a sparse axis",
         lambda: sparse.bcoo_broadcast_in_dim(S, shape=(3, 2, 4), broadcast_dimensions=(0, 2))),
        (TypeError, "bcoo_concatenate: expected a sequence of BCOO",
         lambda: sparse.bcoo_concatenate([S, M], dimension=0)),
        (ValueError, "bcoo_concatenate: expected shapes equal",
         lambda: sparse.bcoo_concatenate([S, S.T], dimension=0)),
        (NotImplementedError, "bcoo_concatenate: concatenation along the dense",
         lambda: sparse.bcoo_concatenate([Sd, Sd], dimension=1)),
        (ValueError, "bcoo_slice: invalid indices",
         lambda: sparse.bcoo_slice(S, start_indices=(0, 0), limit_indices=(4, 4))),
        (ValueError, "bcoo_slice: expected positive strides",
         lambda: sparse.bcoo_slice(S, start_indices=(0, 0), limit_indices=(3, 4), strides=(0, 1))),
        (ValueError, "bcoo_dynamic_slice: expected slice_sizes",
         lambda: sparse.bcoo_dynamic_slice(S, (0, 0), (4, 4))),
        (TypeError, "bcoo_dynamic_slice: expected integer scalars",
         lambda: sparse.bcoo_dynamic_slice(S, (0.5, 0), (1, 1))),
        (ValueError, "bcoo_rev: expected distinct dimensions", lambda: sparse.bcoo_rev(S, (2,))),
        (NotImplementedError, "bcoo_update_layout: n_batch=1",
         lambda: sparse.bcoo_update_layout(S, n_batch=1)),
        (NotImplementedError, "bcoo_update_layout: increasing n_dense",
         lambda: sparse.bcoo_update_layout(S, n_dense=1)),
        (NotImplementedError, "BCOO.__getitem__: only integers",
         lambda: S[np.array([0, 1])]),
        (ValueError, "bcoo_dot_general: the contracting dimensions",
         lambda: sparse.bcoo_dot_general(S, S, dimension_numbers=(((0,), (1,)), ((), ())))),
        (NotImplementedError, "bcoo_dot_general: products of two BCOO arrays with dense",
         lambda: sparse.bcoo_dot_general(Sd, S, dimension_numbers=(((0,), (0,)), ((), ())))),
        (ValueError, "bcoo_dot_general_sampled: expected indices",
         lambda: sparse.bcoo_dot_general_sampled(
             M, R, np.zeros((2, 3), np.int32), dimension_numbers=(((1,), (0,)), ((), ())))),
        (ValueError, "bcoo_dot_general_sampled: invalid operands",
         lambda: sparse.bcoo_dot_general_sampled(
             M, M, S.indices, dimension_numbers=(((1,), (0,)), ((), ())))),
        (ValueError, "random_bcoo: got nse=12",
         lambda: sparse.random_bcoo(ft.random.PRNGKey(0), (3, 4), nse=12)),
        (NotImplementedError, "random_bcoo: n_batch=1",
         lambda: sparse.random_bcoo(ft.random.PRNGKey(0), (3, 4), n_batch=1)),
        (NotImplementedError, "BCSR.transpose: transposing",
         lambda: sparse.BCSR.fromdense(M).T),
        (NotImplementedError, "BCSR.__rmatmul__: a dense array times",
         lambda: X3 @ sparse.BCSR.fromdense(M)),
        (ValueError, "bcsr_fromdense: a BCSR array has 2 sparse dimensions",
         lambda: sparse.bcsr_fromdense(np.zeros((2, 3, 4)))),
        (NotImplementedError, "bcsr_fromdense: n_batch=1",
         lambda: sparse.bcsr_fromdense(np.zeros((2, 3, 4)), n_batch=1)),
        (ValueError, r"BCSR: expected indptr of shape \(4,\)",
         lambda: sparse.BCSR((D[:2], IDX[:2, 0], np.array([0, 2])), shape=(3, 4))),
        (NotImplementedError, "bcsr_dot_general: only a BCSR lhs",
         lambda: sparse.bcsr_dot_general(M, M, dimension_numbers=(((1,), (0,)), ((), ())))),
        (NotImplementedError, "COO.__matmul__: products of two sparse",
         lambda: sparse.COO.fromdense(M) @ sparse.COO.fromdense(M).T),
        (ValueError, "csr_matvec: expected an operand with 4 rows",
         lambda: sparse.csr_matvec(sparse.CSR.fromdense(M), X3)),
        (TypeError, "csr_todense: expected a CSR matrix",
         lambda: sparse.csr_todense(sparse.COO.fromdense(M))),
        (TypeError, "coo_fromdense: .* pass nse=",
         lambda: ft.jit(lambda m: sparse.coo_fromdense(m).data)(M)),
        (TypeError, "COO: expected integer row",
         lambda: sparse.COO((D, D, D), shape=(3, 4))),
        (NotImplementedError, "sparsify: concatenate of sparse and dense",
         lambda: sparse.sparsify(lambda m: fnp.concatenate([m, fnp.ones((1, 4))]))(S)),
    ]  # fmt: skip
    for exc, msg, fn in cases_:
        with pytest.raises(exc, match=msg):
            fn()
