"""``functrace.experimental.sparse`` against JAX's numbers (recorded from
``sparse_cases.py``), finite differences, ``jit``, ``vmap`` and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.experimental import sparse
from functrace.experimental.sparse import BCOO
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from sparse_cases import DATAS, IDX, XM, D, M, X, Y, cases


def _tol(k: str, v: np.ndarray) -> float:
    return 1e-5 if v.dtype == np.float32 else 1e-12


def test_values_and_gradients_match_jax():
    assert_matches_recorded(cases(ft), "sparse_jax.npz", _tol)


def _mat(d):
    return BCOO((d, IDX), shape=(3, 4))


def test_padding_and_repeats_as_jax():
    # fromdense(nse=...) pads with indices equal to the shape: dropped by todense and
    # products, zero gradient; repeated indices add up; -1 is the last row
    S = BCOO.fromdense(M, nse=7)
    assert np.asarray(S.indices)[-1].tolist() == [3, 4]
    np.testing.assert_array_equal(np.asarray(S.todense()), M)
    np.testing.assert_allclose(np.asarray(S @ X), M @ X, rtol=1e-14)
    dense = np.zeros((3, 4))
    for (i, j), v in zip(IDX, D):
        if -3 <= i < 3 and -4 <= j < 4:
            dense[i, j] += v
    np.testing.assert_array_equal(np.asarray(_mat(D).todense()), dense)
    g = ft.grad(lambda d: (_mat(d) @ X).sum())(D)
    assert g[3] == 0.0  # the padding entry [3, 4]
    assert S.nse == 7 and S.ndim == 2 and S.n_batch == 0 and S.n_dense == 0 and S.size == 12
    assert repr(S) == "BCOO(float64[3, 4], nse=7)" and S.dtype == np.float64


def test_gradients_against_finite_differences():
    check_grads(lambda d, x: _mat(d) @ x, (D, X), order=2, modes=("fwd", "rev"))
    check_grads(lambda d, x: fnp.sin(_mat(d) @ x) ** 2, (D, X), order=2, modes=("fwd", "rev"))
    check_grads(lambda d, y: y @ _mat(d), (D, Y), order=2, modes=("fwd", "rev"))
    check_grads(lambda d, x: _mat(d) @ x, (D, XM), order=1, modes=("fwd", "rev"))
    check_grads(lambda d: _mat(d).todense() ** 2, (D,), order=2, modes=("fwd", "rev"))
    # (fromdense's pattern is fixed only where no zero entry moves: a matrix without zeros)
    check_grads(
        lambda m, x: BCOO.fromdense(m, nse=12).T @ x, (M + 10, Y), order=2, modes=("fwd", "rev")
    )
    check_grads(lambda d: (_mat(d) * X).sum(0).todense(), (D,), order=1, modes=("fwd", "rev"))
    sp_f = sparse.sparsify(lambda m, v: fnp.tanh(m) @ v)
    check_grads(lambda d, x: sp_f(_mat(d), x), (D, X), order=2, modes=("fwd", "rev"))


def test_jit_equals_eager():
    def f(d, x):
        S = _mat(d)
        return (S @ x, x[:3] @ S, S.T.todense(), (2 * S).sum(1).todense(), -S.sum())

    eager = f(D, X)
    jitted = ft.jit(f)(D, X)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-14, atol=1e-14)
    out = ft.jit(lambda s: s.sum_duplicates(nse=6))(_mat(D))
    want = _mat(D).sum_duplicates(nse=6)
    np.testing.assert_array_equal(np.asarray(out.indices), np.asarray(want.indices))
    np.testing.assert_array_equal(np.asarray(out.data), np.asarray(want.data))
    np.testing.assert_array_equal(
        np.asarray(ft.jit(lambda m: BCOO.fromdense(m, nse=5).indices)(M)),
        np.asarray(BCOO.fromdense(M, nse=5).indices),
    )


def test_vmap_matches_a_loop_and_composes_with_grad():
    f = lambda d, x: fnp.sum(fnp.sin(_mat(d) @ x))  # noqa: E731
    got = ft.vmap(lambda d: _mat(d) @ X)(DATAS)
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(_mat(d) @ X) for d in DATAS]))
    xs = XM.T
    got = ft.vmap(f, in_axes=(0, 0))(DATAS[:2], xs)
    np.testing.assert_allclose(np.asarray(got), [float(f(d, x)) for d, x in zip(DATAS[:2], xs)])
    per_example = ft.vmap(ft.grad(f), in_axes=(0, None))(DATAS, X)
    loop = np.stack([np.asarray(ft.grad(f)(d, X)) for d in DATAS])
    np.testing.assert_allclose(np.asarray(per_example), loop, rtol=1e-13)
    total = ft.grad(lambda ds: ft.vmap(f, in_axes=(0, None))(ds, X).sum())(DATAS)
    np.testing.assert_allclose(np.asarray(total), loop, rtol=1e-13)
    dense = ft.vmap(lambda m: BCOO.fromdense(m, nse=5).todense())(np.stack([M, 2 * M]))
    np.testing.assert_array_equal(np.asarray(dense), np.stack([M, 2 * M]))


def test_numpy_operands_and_methods():
    S = BCOO.fromdense(M)
    np.testing.assert_allclose(np.asarray(Y @ S), Y @ M)  # a NumPy array on the left
    np.testing.assert_allclose(np.asarray((S * np.float64(2.0)).todense()), 2 * M)
    np.testing.assert_allclose(np.asarray(abs(-S).todense()), np.abs(M))
    np.testing.assert_allclose(np.asarray((S - S).todense()), 0 * M)
    np.testing.assert_allclose(np.asarray(S.astype(np.float32).todense()), M.astype(np.float32))
    assert S.astype(np.float32).dtype == np.float32
    np.testing.assert_allclose(np.asarray(S + M), 2 * M)
    assert len(S) == 3 and S.T.shape == (4, 3)
    I3 = sparse.eye(3)
    np.testing.assert_array_equal(np.asarray(I3.todense()), np.eye(3))
    E = sparse.empty((2, 3), nse=2)
    assert E.nse == 2 and not np.asarray(E.todense()).any()
    assert sparse.todense(M) is M
    leaves, tree = ft.tree_util.tree_flatten(S)
    assert len(leaves) == 2
    back = ft.tree_util.tree_unflatten(tree, leaves)
    assert back.shape == S.shape and back.indices_sorted and back.unique_indices


def test_sparse_grad_returns_a_bcoo():
    S = BCOO.fromdense(M)
    g = sparse.grad(lambda s, x: (s @ x).sum())(S, X)
    assert isinstance(g, BCOO) and g.indices is S.indices
    np.testing.assert_allclose(np.asarray(g.data), X[np.asarray(S.indices)[:, 1]])
    v, (gs, gx) = sparse.value_and_grad(lambda s, x: (s @ x).sum(), argnums=(0, 1))(S, X)
    np.testing.assert_allclose(float(v), (M @ X).sum())
    np.testing.assert_allclose(np.asarray(gx), M.sum(0))
    with pytest.raises(TypeError, match="grad: expected differentiable inputs"):
        ft.grad(lambda s: (s @ X).sum())(S)  # indices are integers, as in JAX


def test_bad_inputs_name_the_function():
    S = BCOO.fromdense(M)
    with pytest.raises(ValueError, match=r"BCOO: expected indices of shape \(nse, n_sparse\)"):
        BCOO((D, IDX[:, 0]), shape=(3, 4))
    with pytest.raises(ValueError, match=r"BCOO: expected data of shape \(6,\)"):
        BCOO((D[:5], IDX), shape=(3, 4))
    with pytest.raises(TypeError, match="BCOO: expected integer indices"):
        BCOO((D, IDX.astype(float)), shape=(3, 4))
    with pytest.raises(TypeError, match="BCOO: expected args as a pair"):
        BCOO(D, shape=(3, 4))
    with pytest.raises(NotImplementedError, match="BCOO: .* n_batch=1"):
        BCOO((D[None], IDX[None]), shape=(1, 3, 4))
    with pytest.raises(ValueError, match="BCOO.__matmul__: the operands' shapes"):
        S @ np.ones(3)
    with pytest.raises(ValueError, match="bcoo_dot_general: the contracting dimensions"):
        sparse.bcoo_dot_general(S, X, dimension_numbers=(((0,), (0,)), ((), ())))
    with pytest.raises(NotImplementedError, match="bcoo_dot_general: batch dimensions"):
        sparse.bcoo_dot_general(S, M, dimension_numbers=(((0,), (0,)), ((1,), (1,))))
    with pytest.raises(NotImplementedError, match="bcoo_dot_general: products of two BCOO"):
        BCOO.fromdense(M, n_dense=1) @ S.T  # a sparse-sparse product with dense dimensions
    with pytest.raises(NotImplementedError, match="bcoo_fromdense: n_batch=1"):
        BCOO.fromdense(M, n_batch=1)
    with pytest.raises(TypeError, match="bcoo_fromdense: .* pass nse="):
        ft.jit(lambda m: BCOO.fromdense(m).data)(M)
    with pytest.raises(ValueError, match="bcoo_sum_duplicates: nse must be given"):
        ft.jit(lambda s: s.sum_duplicates().data)(S)
    with pytest.raises(NotImplementedError, match="bcoo_multiply_dense: a dense operand"):
        S * np.ones(5)
    with pytest.raises(NotImplementedError, match="bcoo_transpose: the permutation"):
        BCOO.fromdense(M, n_dense=1).transpose((1, 0))
    with pytest.raises(NotImplementedError, match="sparsify: the primitive 'exp'"):
        sparse.sparsify(fnp.exp)(S)
    with pytest.raises(NotImplementedError, match="sparsify: the primitive 'max'"):
        sparse.sparsify(lambda m: fnp.maximum(m, 0.0))(S)
    with pytest.raises(ValueError, match="BCOO: a transform gave data"):
        ft.vmap(lambda d: _mat(d))(DATAS)
    with pytest.raises(ValueError, match="BCOO: a transform gave data"):
        ft.vmap(lambda s: s @ X)(S)
    with pytest.raises(NotImplementedError, match="BCOO.__sub__: subtraction between"):
        S - M
    with pytest.raises(NotImplementedError, match="BCOO.__add__: adding a dense array"):
        S + 1.0
    with pytest.raises(TypeError, match="bcoo_todense: expected a BCOO array"):
        sparse.bcoo_todense(M)
    with pytest.raises(NotImplementedError, match="eye: only sparse_format='bcoo'"):
        sparse.eye(3, sparse_format="bcsr")
