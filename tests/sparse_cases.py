"""``experimental.sparse`` (BCOO arrays and ``sparsify``) run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.experimental.sparse`` imported) when ``tests/fixtures/sparse_jax.npz`` was
recorded, ``functrace`` in tests/test_sparse.py: ``fromdense`` (padding, a vector,
dense dimensions), ``todense`` of repeated, padding and negative indices, products
with dense arrays on either side and through ``bcoo_dot_general`` (a 3-D array,
dense dimensions), ``.T``, sums, elementwise products, ``sum_duplicates``,
``sort_indices``, ``eye``, ``bcoo_extract``, gradients in the data and the dense
operand, ``jit``, ``vmap`` over data and ``sparsify``. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(11)
M = np.array([[0.0, 1.5, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, -4.0, 0.5]])
X = _rng.standard_normal(4)
Y = _rng.standard_normal(3)
XM = _rng.standard_normal((4, 2))
# repeated ([0, 1] twice), padding ([3, 4]), negative ([-1, 2]: the last row) indices
IDX = np.array([[0, 1], [1, 0], [0, 1], [3, 4], [-1, 2], [2, 0]], dtype=np.int32)
D = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.0])
T3 = np.zeros((2, 3, 4))
T3[0, 1, 2], T3[1, 0, 3], T3[1, 2, 0], T3[0, 0, 0] = 1.0, 2.0, -3.0, 0.5
R3 = _rng.standard_normal((3, 5))
DATAS = _rng.standard_normal((3, 6))


def cases(lib: Any) -> dict[str, np.ndarray]:
    sp, jnp = lib.experimental.sparse, lib.numpy
    BCOO = sp.BCOO
    out: dict[str, Any] = {}
    S = BCOO.fromdense(M)
    B = BCOO((D, IDX), shape=(3, 4))

    def put(name: str, mat: Any) -> None:
        out[f"{name}/data"] = mat.data
        out[f"{name}/indices"] = mat.indices
        out[f"{name}/dense"] = mat.todense()

    put("fromdense", S)
    put("fromdense_nse6", BCOO.fromdense(M, nse=6))
    put("fromdense_nse2", BCOO.fromdense(M, nse=2))
    put("fromdense_vector", sp.bcoo_fromdense(M[0]))
    put("fromdense_n_dense", BCOO.fromdense(M, n_dense=1))
    put("fromdense_3d", BCOO.fromdense(T3))
    out["todense_repeats"] = B.todense()
    out["todense_api"] = sp.todense(B)
    out["matvec"] = S @ X
    out["matmat"] = S @ XM
    out["vecmat"] = jnp.asarray(Y) @ S
    out["T_matvec"] = S.T @ Y
    out["repeats_matvec"] = B @ X
    out["repeats_vecmat"] = jnp.asarray(Y) @ B
    out["dot_general_0_1"] = sp.bcoo_dot_general(
        S, R3.T, dimension_numbers=(((0,), (1,)), ((), ()))
    )
    out["rdot_general"] = sp.bcoo_dot_general(XM.T, S, dimension_numbers=(((1,), (1,)), ((), ())))
    S3 = BCOO.fromdense(T3)
    out["dot_3d"] = sp.bcoo_dot_general(S3, R3, dimension_numbers=(((1,), (0,)), ((), ())))
    out["dot_3d_two"] = sp.bcoo_dot_general(
        S3, R3.T[:4, :2], dimension_numbers=(((2, 0), (0, 1)), ((), ()))
    )
    out["dot_n_dense"] = sp.bcoo_dot_general(
        BCOO.fromdense(M, n_dense=1), Y, dimension_numbers=(((0,), (0,)), ((), ()))
    )
    put("T", S.T)
    put("transpose_3d", S3.transpose((2, 0, 1)))
    put("sum0", S.sum(0))
    put("sum1_repeats", B.sum(1))
    out["sum_all"] = S.sum()
    out["sum_all_repeats"] = B.sum()
    put("times2", S * 2)
    put("rtimes2", 2.0 * B)
    put("times_row", B * X)
    put("times_dense", B * (M + 1.0))
    put("neg", -B)
    put("div", B / 4.0)
    out["multiply_dense"] = sp.bcoo_multiply_dense(B, M + 1.0)
    put("sum_duplicates", B.sum_duplicates())
    put("sum_duplicates_nse8", B.sum_duplicates(nse=8))
    put("sum_duplicates_nse2", B.sum_duplicates(nse=2))
    put("sum_duplicates_keep_zeros", B.sum_duplicates(remove_zeros=False))
    put("sort_indices", B.sort_indices())
    put("eye_3_4_k1", sp.eye(3, 4, k=1))
    put("eye_4_km2", sp.eye(4, k=-2))
    put("extract_unique", sp.bcoo_extract(B, M, assume_unique=True))
    put("extract_repeats", sp.bcoo_extract(B, M, assume_unique=False))
    put("multiply_sparse", sp.bcoo_multiply_sparse(S, BCOO.fromdense(M * (M > 1))))
    put("add_same", S + S)
    put("add_other", S + B)
    put("mul_same", S * S)
    out["sparsify_mul_same"] = sp.sparsify(lambda m: m * m)(B).todense()
    out["add_dense"] = S + M
    out["float32_matvec"] = BCOO.fromdense(M.astype(np.float32)) @ X.astype(np.float32)

    def loss(d: Any, x: Any) -> Any:
        return jnp.sum(jnp.sin(BCOO((d, IDX), shape=(3, 4)) @ x))

    out["grad_data"] = lib.grad(lambda d: (BCOO((d, IDX), shape=(3, 4)) @ X).sum())(D)
    out["grad_data_sin"] = lib.grad(loss)(D, X)
    out["grad_x_sin"] = lib.grad(loss, argnums=1)(D, X)
    out["grad_vecmat"] = lib.grad(lambda d: (jnp.asarray(Y) @ BCOO((d, IDX), shape=(3, 4))).sum())(
        D
    )
    out["grad_fromdense"] = lib.grad(lambda m: jnp.sum((BCOO.fromdense(m, nse=6) @ X) ** 2))(M)
    out["grad_todense"] = lib.grad(lambda d: jnp.sum(BCOO((d, IDX), shape=(3, 4)).todense() ** 2))(
        D
    )
    out["sparse_grad"] = sp.grad(lambda s: jnp.sum((s @ X) ** 2))(S).data
    out["jit_matvec"] = lib.jit(lambda d, x: BCOO((d, IDX), shape=(3, 4)) @ x)(D, X)
    out["jit_bcoo_arg"] = lib.jit(lambda s, x: s.T @ x)(B, Y)
    out["vmap_data"] = lib.vmap(lambda d: BCOO((d, IDX), shape=(3, 4)) @ X)(DATAS)
    out["vmap_x"] = lib.vmap(lambda x: B @ x)(XM.T)

    def f(m: Any, v: Any) -> Any:
        return 2 * jnp.dot(jnp.log1p(jnp.abs(m.T)), v) + 1

    out["sparsify_log1p"] = sp.sparsify(f)(S, Y)
    out["sparsify_sum0"] = sp.sparsify(lambda m: (m * 3).sum(0))(B).todense()
    out["sparsify_sin"] = sp.sparsify(lambda m: -(jnp.sin(m) @ X))(B)
    out["sparsify_add"] = sp.sparsify(lambda m: m + m)(B).todense()
    out["sparsify_sum"] = sp.sparsify(lambda m: m.sum())(B)
    out["sparsify_grad"] = lib.grad(
        lambda x: sp.sparsify(lambda m, v: jnp.sum((m @ v) ** 2))(B, x)
    )(X)
    return {k: np.asarray(v) for k, v in out.items()}
