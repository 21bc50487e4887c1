"""More of ``experimental.sparse`` run under JAX and functrace: shape operations,
products of two BCOO arrays, sampled products, ``random_bcoo`` and the sparse
Jacobians.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.experimental.sparse`` imported) when ``tests/fixtures/sparse2_jax.npz`` was
recorded, ``functrace`` in tests/test_sparse2.py: ``bcoo_reshape`` (and
``BCOO.reshape``), ``bcoo_squeeze``, ``bcoo_broadcast_in_dim``, ``bcoo_concatenate``,
``bcoo_slice``, ``bcoo_dynamic_slice``, ``bcoo_rev``, ``bcoo_update_layout``,
indexing, the same through ``sparsify``, ``bcoo_dot_general`` and ``@`` of two BCOO
arrays, ``bcoo_dot_general_sampled``, ``random_bcoo``, ``sparse.jacfwd``/``jacrev``
with gradients in the data, the BCSR format and the legacy COO/CSR/CSC matrices. The
indices here are non-negative (functrace wraps a negative one before these
operations, JAX does not). Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(23)
M = np.array([[0.0, 1.5, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, -4.0, 0.5]])
X = _rng.standard_normal(4)
X3 = _rng.standard_normal(3)
R = _rng.standard_normal((4, 5))
RA = _rng.standard_normal((3, 2))
RB = _rng.standard_normal((2, 4))
# repeated ([0, 1] three times), padding ([3, 4]), the others distinct
IDX = np.array([[0, 1], [1, 0], [0, 1], [3, 4], [2, 2], [0, 1], [2, 3]], dtype=np.int32)
D = np.array([1.0, 2.0, 3.0, 4.0, 5.0, -1.0, 0.5])
T3 = np.zeros((2, 3, 4))
T3[0, 1, 2], T3[1, 0, 3], T3[1, 2, 0], T3[0, 0, 0] = 1.0, 2.0, -3.0, 0.5


def cases(lib: Any) -> dict[str, np.ndarray]:
    sp, jnp = lib.experimental.sparse, lib.numpy
    BCOO = sp.BCOO
    out: dict[str, Any] = {}
    S = BCOO.fromdense(M)
    S6 = BCOO.fromdense(M, nse=7)  # two padding entries
    Sd = BCOO.fromdense(M, n_dense=1)
    S3 = BCOO.fromdense(T3)
    B = BCOO((D, IDX), shape=(3, 4))

    def put(name: str, mat: Any) -> None:
        out[f"{name}/data"] = mat.data
        out[f"{name}/indices"] = mat.indices
        out[f"{name}/dense"] = mat.todense()

    put("reshape_4_3", S.reshape(4, 3))
    put("reshape_flat_padding", S6.reshape(12))
    put("reshape_repeats", B.reshape((2, 6)))
    put("reshape_3d", sp.bcoo_reshape(S3, new_sizes=(6, 4)))
    put("reshape_dimensions", sp.bcoo_reshape(S, new_sizes=(2, 6), dimensions=(1, 0)))
    put("reshape_n_dense", sp.bcoo_reshape(Sd, new_sizes=(3, 2, 2)))
    put("squeeze_0", sp.bcoo_squeeze(BCOO.fromdense(M[None]), dimensions=(0,)))
    put("squeeze_1", sp.bcoo_squeeze(BCOO.fromdense(M[:, None, :]), dimensions=(1,)))
    put("squeeze_dense", sp.bcoo_squeeze(BCOO.fromdense(M[:, :, None], n_dense=1), dimensions=(2,)))
    put(
        "broadcast_mid",
        sp.bcoo_broadcast_in_dim(S, shape=(3, 1, 4), broadcast_dimensions=(0, 2)),
    )
    put(
        "broadcast_dense",
        sp.bcoo_broadcast_in_dim(Sd, shape=(3, 4, 2), broadcast_dimensions=(0, 1)),
    )
    # JAX makes the new leading axis a batch axis: the dense arrays are compared
    out["broadcast_lead/dense"] = sp.bcoo_broadcast_in_dim(
        B, shape=(2, 3, 4), broadcast_dimensions=(1, 2)
    ).todense()
    put("concatenate_0", sp.bcoo_concatenate([S, B], dimension=0))
    put("concatenate_1_padding", sp.bcoo_concatenate([S6, S, B], dimension=1))
    put("concatenate_n_dense", sp.bcoo_concatenate([Sd, Sd], dimension=0))
    put("slice", sp.bcoo_slice(S, start_indices=(1, 0), limit_indices=(3, 4)))
    put(
        "slice_strides",
        sp.bcoo_slice(S6, start_indices=(0, 1), limit_indices=(3, 4), strides=(2, 2)),
    )
    put("slice_compact", sp.bcoo_slice(B, start_indices=(0, 0), limit_indices=(2, 2)))
    put("slice_dense", sp.bcoo_slice(Sd, start_indices=(1, 1), limit_indices=(3, 3)))
    put("dynamic_slice", sp.bcoo_dynamic_slice(B, (1, 1), (2, 3)))
    put("dynamic_slice_clamped", sp.bcoo_dynamic_slice(S6, (2, 3), (2, 2)))
    put("dynamic_slice_negative", sp.bcoo_dynamic_slice(S, (-2, 0), (1, 4)))
    put("dynamic_slice_dense", sp.bcoo_dynamic_slice(Sd, (0, 1), (3, 2)))
    put("rev_0", sp.bcoo_rev(S6, (0,)))
    put("rev_01", sp.bcoo_rev(B, (0, 1)))
    put("rev_dense", sp.bcoo_rev(Sd, (1,)))
    put("update_layout", sp.bcoo_update_layout(Sd, n_dense=0))
    put("update_layout_3d", sp.bcoo_update_layout(BCOO.fromdense(T3, n_dense=2), n_dense=1))
    out["getitem_row/dense"] = S[1].todense()
    out["getitem_rows/dense"] = B[1:].todense()
    out["getitem_col/dense"] = S6[:, 2].todense()
    out["getitem_rev/dense"] = B[::-1, 1:].todense()
    out["getitem_3d/dense"] = S3[1, :, 1:3].todense()
    out["sparsify_concat_rev"] = sp.sparsify(
        lambda m: jnp.concatenate([m, m[::-1]], axis=1).sum(0)
    )(B).todense()
    out["sparsify_reshape_matvec"] = sp.sparsify(lambda m: m.reshape(4, 3) @ X3)(B)
    out["sparsify_slice_matvec"] = sp.sparsify(lambda m: (m[1:] * 2) @ X)(S6)
    out["sparsify_squeeze"] = sp.sparsify(lambda m: jnp.squeeze(m[None], 0).T @ X3)(B)

    # products of two BCOO arrays
    put("spdot_mat_mat_T", S @ S.T)
    put("spdot_repeats", B @ S6.T)
    put("spdot_0_0", sp.bcoo_dot_general(S, B, dimension_numbers=(((0,), (0,)), ((), ()))))
    put("spdot_full", sp.bcoo_dot_general(S6, B, dimension_numbers=(((0, 1), (0, 1)), ((), ()))))
    put("spdot_outer", sp.bcoo_dot_general(S, B, dimension_numbers=(((), ()), ((), ()))))
    put(
        "spdot_3d_vec",
        sp.bcoo_dot_general(S3, BCOO.fromdense(X), dimension_numbers=(((2,), (0,)), ((), ()))),
    )

    def spdot_loss(d: Any, e: Any) -> Any:
        P = BCOO((d, IDX), shape=(3, 4)) @ BCOO((e, IDX), shape=(3, 4)).T
        return jnp.sum(jnp.sin(P.todense()) * jnp.arange(9.0).reshape(3, 3))

    # forward mode: JAX's bcoo_spdot_general has no transpose rule (functrace's has)
    out["spdot_grad_lhs"] = lib.jacfwd(spdot_loss)(D, 2 * D + 1)
    out["spdot_grad_rhs"] = lib.jacfwd(spdot_loss, argnums=1)(D, 2 * D + 1)

    # sampled products
    dn = (((1,), (0,)), ((), ()))
    out["sampled"] = sp.bcoo_dot_general_sampled(RA, RB, B.indices, dimension_numbers=dn)
    out["sampled_T"] = sp.bcoo_dot_general_sampled(
        RB.T, RA, S.T.indices, dimension_numbers=(((1,), (1,)), ((), ()))
    )
    out["sampled_vec_outer"] = sp.bcoo_dot_general_sampled(
        X3, X, S6.indices, dimension_numbers=(((), ()), ((), ()))
    )

    def sampled_loss(a: Any, b: Any) -> Any:
        v = sp.bcoo_dot_general_sampled(a, b, B.indices, dimension_numbers=dn)
        return jnp.sum(v**2 * jnp.arange(7.0))

    out["sampled_grad_a"] = lib.grad(sampled_loss)(RA, RB)
    out["sampled_grad_b"] = lib.grad(sampled_loss, argnums=1)(RA, RB)

    # random_bcoo
    key = lib.random.PRNGKey(42)
    put("random_default", sp.random_bcoo(key, (5, 6)))
    put("random_nse7_repeats", sp.random_bcoo(key, (4, 5), nse=7, unique_indices=False))
    put("random_n_dense", sp.random_bcoo(key, (4, 3), nse=2, n_dense=1))
    put(
        "random_normal_f32_sorted",
        sp.random_bcoo(
            lib.random.PRNGKey(3),
            (3, 4, 5),
            nse=9,
            dtype=np.float32,
            indices_dtype=np.int32,
            sorted_indices=True,
            generator=lib.random.normal,
        ),
    )
    put("random_vector", sp.random_bcoo(key, (10,), nse=4))

    # sparse Jacobians: in the data of the BCOO argument
    def jac_data(j: Any) -> Any:
        return j.data if isinstance(j, BCOO) else j

    out["jacfwd_vec"] = jac_data(sp.jacfwd(lambda s, x: jnp.sin(s @ x))(S, X))
    out["jacrev_vec"] = jac_data(sp.jacrev(lambda s, x: jnp.sin(s @ x))(S, X))
    out["jacobian_scalar"] = sp.jacobian(lambda s: jnp.sum((s @ X) ** 2))(S).data
    out["jacfwd_x"] = sp.jacfwd(lambda s, x: jnp.sin(s @ x), argnums=1)(S, X)

    # BCSR (no batch dimensions)
    def put_csr(name: str, mat: Any) -> None:
        out[f"{name}/data"] = mat.data
        out[f"{name}/indices"] = mat.indices
        out[f"{name}/indptr"] = mat.indptr
        out[f"{name}/dense"] = mat.todense()

    C = sp.BCSR.fromdense(M, nse=7)
    put_csr("bcsr_fromdense", C)
    put_csr("bcsr_n_dense", sp.bcsr_fromdense(T3.transpose(1, 2, 0), n_dense=1))
    put_csr("bcsr_from_bcoo", sp.BCSR.from_bcoo(B))
    put("bcsr_to_bcoo", C.to_bcoo())
    out["bcsr_matvec"] = C @ X
    out["bcsr_matmat"] = C @ R
    out["bcsr_dot_general"] = sp.bcsr_dot_general(C, R, dimension_numbers=(((1,), (0,)), ((), ())))
    out["bcsr_extract"] = sp.bcsr_extract(C.indices, C.indptr, M + 1.0)
    out["bcsr_todense_api"] = sp.bcsr_todense(C)
    out["bcsr_grad"] = lib.grad(
        lambda d: jnp.sum(jnp.sin(sp.BCSR((d, C.indices, C.indptr), shape=(3, 4)) @ X))
    )(C.data)

    # the legacy COO, CSR and CSC matrices
    O = sp.COO.fromdense(M, nse=7)
    out["coo/data"], out["coo/row"], out["coo/col"] = O.data, O.row, O.col
    out["coo/dense"] = O.todense()
    out["coo_matvec"] = O @ X
    out["coo_matmat"] = sp.coo_matmat(O, R)
    out["coo_T_matvec"] = O.T @ X3
    out["coo_matvec_transpose"] = sp.coo_matvec(O, X3, transpose=True)
    put_csr("csr", sp.CSR.fromdense(M, nse=7))
    Cr = sp.csr_fromdense(M)
    out["csr_matvec"] = Cr @ X
    out["csr_matmat"] = sp.csr_matmat(Cr, R)
    out["csr_matvec_transpose"] = sp.csr_matvec(Cr, X3, transpose=True)
    out["csr_T_dense"] = Cr.T.todense()
    put_csr("csc", sp.CSC.fromdense(M))
    out["csc_matvec"] = sp.CSC.fromdense(M) @ X
    out["coo_todense_api"] = sp.coo_todense(O)
    out["csr_todense_api"] = sp.csr_todense(Cr)
    out["csr_grad"] = lib.grad(
        lambda d: jnp.sum(
            jnp.sin(sp.csr_matvec(sp.CSR((d, Cr.indices, Cr.indptr), shape=(3, 4)), X))
        )
    )(Cr.data)
    return {k: np.asarray(v) for k, v in out.items()}
