"""``functrace.lax.linalg``'s ``eig``, ``schur``, ``hessenberg``, ``tridiagonal``,
``householder_product``, ``ormqr``, ``lu_pivots_to_permutation``, ``symmetric_product``,
``cholesky_update``, ``qdwh`` and the algorithm enums: JAX's numbers (recorded from
``lax_linalg_cases.py``), the decompositions' invariants, derivatives, ``jit``, ``vmap``
and errors."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.lax import linalg as L
from functrace.test_util import check_grads
from lax_linalg_cases import A3B, A5, C4, DEIG, EIG4, HERM4, SYM5, TALL, TALL_C, W5, cases
from recorded import assert_matches_recorded


def _close(x, y, tol=1e-11):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def _mH(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def test_values_match_jax():
    tol = lambda k, v: 2e-5 if v.dtype in (np.float32, np.complex64) else 1e-10  # noqa: E731
    assert_matches_recorded(cases(ft), "lax_linalg_jax.npz", tol)


def _hessenberg_q(packed, taus):
    """Q of a packed Hessenberg form: diag(1, orgqr of the reflectors one row down)."""
    n = packed.shape[-1]
    q = np.broadcast_to(np.eye(n, dtype=packed.dtype), packed.shape).copy()
    q[..., 1:, 1:] = np.asarray(L.householder_product(packed[..., 1:, :-1], taus))
    return q


def test_reductions_reconstruct_their_matrix():
    for a in (A5, A3B, C4):
        packed, taus = (np.asarray(x) for x in L.hessenberg(a))
        q = _hessenberg_q(packed, taus)
        _close(q @ np.triu(packed, -1) @ _mH(q), a)
        _close(_mH(q) @ q, np.broadcast_to(np.eye(a.shape[-1]), a.shape))
        c = np.ones(a.shape[:-1] + (2,), a.dtype)  # ormqr applies the same Q
        _close(L.ormqr(packed[..., 1:, :-1], taus, c[..., 1:, :]), q[..., 1:, 1:] @ c[..., 1:, :])
    for a, lower in ((SYM5, True), (HERM4, False), (np.triu(A3B), False)):
        herm = np.triu(a) + _mH(np.triu(a, 1)) if not lower else np.tril(a) + _mH(np.tril(a, -1))
        herm = herm - 1j * np.imag(np.diagonal(herm, 0, -2, -1))[..., None] * np.eye(a.shape[-1])
        packed, d, e, taus = (np.asarray(x) for x in L.tridiagonal(a, lower=lower))
        n = a.shape[-1]
        i = np.arange(n)
        tri = np.zeros(d.shape + (n,))
        tri[..., i, i], tri[..., i[1:], i[:-1]], tri[..., i[:-1], i[1:]] = d, e, e
        # eigenvalues are kept by the (unitary) reduction
        _close(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(herm), 1e-10)
        assert (taus.shape, e.dtype) == (a.shape[:-2] + (n - 1,), np.empty(0, a.dtype).real.dtype)
        keep = np.triu(np.ones((n, n)), 1) if lower else np.tril(np.ones((n, n)), -1)
        _close(packed * keep, a * keep, 0)  # the triangle not read comes back as given


def test_eig_schur_and_qdwh_invariants():
    for a in (EIG4, A3B, C4):
        w, vl, vr = (np.asarray(x) for x in L.eig(a))
        _close(a @ vr, vr * w[..., None, :], 1e-10)
        _close(_mH(vl) @ a, w[..., :, None] * _mH(vl), 1e-10)
        for v in (vl, vr):  # geev's normalization: unit columns, largest component real
            _close(np.linalg.norm(v, axis=-2), np.ones(w.shape))
            big = np.take_along_axis(v, np.argmax(np.abs(v), -2)[..., None, :], -2)
            _close(big.imag, np.zeros(big.shape))
        assert w.dtype == np.complex128
    assert L.eig(A5.astype(np.float32))[0].dtype == np.complex64
    for a in (A5, A3B, C4):
        t, q = (np.asarray(x) for x in L.schur(a))
        assert t.dtype == a.dtype
        _close(q @ t @ _mH(q), a, 1e-10)
        _close(_mH(q) @ q, np.broadcast_to(np.eye(a.shape[-1]), a.shape), 1e-10)
        below = np.tril(t, -2) if a.dtype.kind == "f" else np.tril(t, -1)
        assert np.all(below == 0)
        _close(L.schur(a, compute_schur_vectors=False), t, 0)
    for x in (TALL, TALL_C, A5):
        u, h, k, ok = L.qdwh(x)
        u, h = np.asarray(u), np.asarray(h)
        _close(u @ h, x, 1e-10)
        _close(_mH(u) @ u, np.eye(x.shape[1]), 1e-10)
        assert bool(ok) and 0 < int(k) <= 10 and np.all(np.linalg.eigvalsh(h) > 0)
    r = np.linalg.cholesky(SYM5 @ SYM5 + np.eye(5)).T
    up = np.asarray(L.cholesky_update(r, W5))
    _close(up.T @ up, r.T @ r + np.outer(W5, W5), 1e-10)
    _close(np.tril(up, -1), np.zeros((5, 5)), 1e-12)


def test_enums_are_accepted_where_jax_takes_them():
    for impl in (None, *L.EighImplementation):
        _close(L.eigh(SYM5, implementation=impl)[1], np.linalg.eigvalsh(SYM5))
    for alg in (None, *L.SvdAlgorithm):
        _close(L.svd(A5, compute_uv=False, algorithm=alg), np.linalg.svd(A5, compute_uv=False))
    for impl in (None, *L.EigImplementation):
        _close(L.eig(EIG4, implementation=impl)[0], np.linalg.eigvals(EIG4))
    with pytest.raises(TypeError, match="eigh: expected implementation to be None or"):
        L.eigh(SYM5, implementation="qr")
    with pytest.raises(TypeError, match="svd: expected algorithm to be None or a lax.linalg"):
        L.svd(A5, algorithm=L.EighImplementation.QR)
    with pytest.raises(TypeError, match="eig: expected implementation"):
        L.eig(A5, implementation="lapack")


def _eigvals(a, enable=True):
    return L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                 enable_eigvec_derivs=enable)[0]  # fmt: skip


def test_derivatives():
    def loss(a):  # a real function of the (complex) eigenvalues
        w = _eigvals(a)
        return fnp.real(w) ** 2 + fnp.imag(w) * fnp.real(w)

    check_grads(loss, (EIG4,), order=2, modes=("fwd", "rev"))
    right = lambda a: fnp.real(L.eig(a, compute_left_eigenvectors=False,  # noqa: E731
                                      enable_eigvec_derivs=True)[1]) ** 2  # fmt: skip
    check_grads(right, (EIG4,), order=1, modes=("fwd", "rev"))
    left = lambda a: fnp.imag(L.eig(a, compute_right_eigenvectors=False,  # noqa: E731
                                     enable_eigvec_derivs=True)[1])  # fmt: skip
    check_grads(left, (EIG4,), order=1, modes=("fwd",))
    polar = lambda x: [L.qdwh(x)[0], L.qdwh(x)[1]]  # noqa: E731
    check_grads(polar, (TALL,), order=2, modes=("fwd", "rev"))
    dxc = np.exp(1j * np.arange(15.0)).reshape(5, 3)  # complex: against central differences
    (u, h), (du, dh) = ft.jvp(lambda x: L.qdwh(x)[:2], (TALL_C,), (dxc,))
    up, hp = L.qdwh(TALL_C + 1e-6 * dxc)[:2]
    um, hm = L.qdwh(TALL_C - 1e-6 * dxc)[:2]
    _close(du, (np.asarray(up) - np.asarray(um)) / 2e-6, 1e-7)
    _close(dh, (np.asarray(hp) - np.asarray(hm)) / 2e-6, 1e-7)
    # as JAX: eigenvectors (and so second derivatives) need enable_eigvec_derivs
    with pytest.raises(NotImplementedError, match="eig: derivatives of eigenvectors"):
        ft.jvp(lambda a: L.eig(a)[2], (EIG4,), (DEIG,))
    with pytest.raises(NotImplementedError, match="eig: derivatives of eigenvectors"):
        ft.hessian(lambda a: fnp.real(fnp.sum(_eigvals(a, enable=False))))(EIG4)
    no_rule = [
        ("hessenberg", lambda a: L.hessenberg(a)[0]),
        ("tridiagonal", lambda a: L.tridiagonal(a)[1]),
        ("schur", lambda a: L.schur(a)[0]),
        ("householder_product", lambda a: L.householder_product(a, a[0, :2])),
        ("ormqr", lambda a: L.ormqr(a, a[0, :2], a)),
        ("symmetric_product", lambda a: L.symmetric_product(a, a)),
        ("cholesky_update", lambda a: L.cholesky_update(a, a[0])),
    ]
    for name, f in no_rule:
        with pytest.raises(NotImplementedError, match=f"{name}: differentiation is not supported"):
            ft.grad(lambda a, f=f: fnp.sum(f(a)))(A5)


def test_jit_and_vmap_agree_with_eager_calls():
    fns = [
        lambda a: L.hessenberg(a),
        lambda a: L.tridiagonal(a, lower=False),
        lambda a: L.householder_product(a, a[..., 0, :3]),
        lambda a: L.ormqr(a, a[..., 1, :2], a, transpose=True),
        lambda a: L.symmetric_product(a, a, alpha=2.0, beta=0.5, symmetrize_output=True),
        lambda a: L.eig(a),
        lambda a: L.schur(a),
        lambda a: L.qdwh(a),
        lambda a: L.cholesky_update(fnp.triu(a) + 4 * fnp.eye(4), a[0]),
        lambda a: L.lu_pivots_to_permutation(L.lu(a)[1], 6),
    ]
    xs = np.stack([DEIG, DEIG.T + 1, DEIG * 2])
    for f in fns:
        eager = [np.asarray(o) for o in ft.tree_util.tree_leaves(f(xs[0]))]
        jitted = [np.asarray(o) for o in ft.tree_util.tree_leaves(ft.jit(f)(xs[0]))]
        for e, j in zip(eager, jitted, strict=True):
            _close(j, e, 1e-12)
        mapped = ft.tree_util.tree_leaves(ft.vmap(f)(xs))
        loop = [ft.tree_util.tree_leaves(f(x)) for x in xs]
        for i, m in enumerate(mapped):
            _close(m, np.stack([np.asarray(lp[i]) for lp in loop]), 1e-12)
    # gradients of batched calls, and batched gradients
    g = lambda a: fnp.sum(fnp.real(_eigvals(a)) ** 3) + fnp.sum(L.qdwh(a)[1])  # noqa: E731
    _close(ft.vmap(ft.grad(g))(xs), np.stack([np.asarray(ft.grad(g)(x)) for x in xs]), 1e-10)
    total = lambda b: fnp.sum(ft.vmap(g)(b))  # noqa: E731
    _close(ft.grad(total)(xs), ft.vmap(ft.grad(g))(xs), 1e-10)


def test_nonfinite_inputs_give_nan():
    bad = A5.copy()
    bad[1, 2] = np.nan
    both = np.stack([bad, A5])
    for outs in (L.hessenberg(both), L.eig(both), L.schur(both), L.tridiagonal(both)):
        for o in outs:
            o = np.asarray(o)
            assert np.isnan(o[0]).all() and np.isfinite(o[1]).all()
    u, h, _, ok = L.qdwh(bad)
    assert np.isnan(np.asarray(u)).all() and not bool(ok)
    u, h, _, ok = L.qdwh(np.zeros((3, 2)))  # as JAX: zeros, not an exception
    assert not np.asarray(u).any() and not np.asarray(h).any()


def test_bad_arguments_name_the_function():
    cases = [
        (ValueError, "hessenberg: expected square matrices", lambda: L.hessenberg(TALL)),
        (
            TypeError,
            "tridiagonal: expected a float32, float64",
            lambda: L.tridiagonal(np.eye(3, dtype=int)),
        ),
        (
            ValueError,
            "householder_product: expected a .* with m >= n",
            lambda: L.householder_product(TALL.T, TALL[0, :2]),
        ),
        (
            ValueError,
            "householder_product: expected at most min",
            lambda: L.householder_product(TALL, np.ones(5)),
        ),
        (
            TypeError,
            "householder_product: expected a and taus of one dtype",
            lambda: L.householder_product(TALL, TALL[0, :2].astype(np.float32)),
        ),
        (ValueError, "ormqr: expected c with 6 rows", lambda: L.ormqr(TALL, TALL[0, :2], A5)),
        (
            ValueError,
            "ormqr: expected c with 6 columns",
            lambda: L.ormqr(TALL, TALL[0, :2], TALL, left=False),
        ),
        (
            ValueError,
            "lu_pivots_to_permutation: expected permutation_size >= ",
            lambda: L.lu_pivots_to_permutation(np.zeros(4, np.int32), 3),
        ),
        (
            TypeError,
            "lu_pivots_to_permutation: expected integer pivots",
            lambda: L.lu_pivots_to_permutation(np.zeros(4), 5),
        ),
        (
            ValueError,
            "lu_pivots_to_permutation: expected pivots in",
            lambda: L.lu_pivots_to_permutation(np.array([7], np.int32), 3),
        ),
        (
            ValueError,
            "symmetric_product: expected a .* and c",
            lambda: L.symmetric_product(TALL, A5),
        ),
        (
            TypeError,
            "symmetric_product: expected a float32 or float64",
            lambda: L.symmetric_product(C4, C4),
        ),
        (ValueError, "cholesky_update: expected r .* and w", lambda: L.cholesky_update(A5, W5[:3])),
        (
            ValueError,
            "cholesky_update: expected r_matrix with 2",
            lambda: L.cholesky_update(A3B, W5[:3]),
        ),
        (ValueError, "qdwh: expected x .* with m >= n", lambda: L.qdwh(TALL.T)),
        (ValueError, "qdwh: expected a matrix x", lambda: L.qdwh(A3B)),
        (NotImplementedError, "qdwh: dynamic_shape", lambda: L.qdwh(TALL, dynamic_shape=(3, 2))),
        (NotImplementedError, "schur: sort_eig_vals=True", lambda: L.schur(A5, sort_eig_vals=True)),
        (ValueError, "eig: expected square matrices", lambda: L.eig(TALL)),
    ]
    for err, msg, call in cases:
        with pytest.raises(err, match=msg):
            call()


def test_empty_matrices_and_stacks():
    none = np.zeros((2, 0, 0))
    shapes = lambda out: [np.asarray(o).shape for o in ft.tree_util.tree_leaves(out)]  # noqa: E731
    assert shapes(L.hessenberg(none)) == [(2, 0, 0), (2, 0)]
    assert shapes(L.tridiagonal(none)) == [(2, 0, 0), (2, 0), (2, 0), (2, 0)]
    assert shapes(L.eig(none)) == [(2, 0), (2, 0, 0), (2, 0, 0)]
    assert shapes(L.schur(np.zeros((0, 3, 3)))) == [(0, 3, 3), (0, 3, 3)]
    assert shapes(L.householder_product(np.zeros((3, 0)), np.zeros(0))) == [(3, 0)]
    assert shapes(L.lu_pivots_to_permutation(np.zeros((2, 0), np.int32), 3)) == [(2, 3)]
    assert shapes(L.qdwh(np.zeros((3, 0)))) == [(3, 0), (0, 0), (), ()]
    _close(L.ormqr(TALL, np.zeros(0), TALL), TALL, 0)  # no reflectors: Q = I
