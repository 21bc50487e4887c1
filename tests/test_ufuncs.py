"""The ufunc methods (``fnp.add.reduce``, ``fnp.subtract.outer``, ``frompyfunc``...)
against JAX's numbers (recorded from ``ufunc_cases.py``), against NumPy's ufuncs, and
through the transforms."""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from ufunc_cases import NAMES, A, B, I, V, cases

rng = np.random.default_rng(7)


def test_values_and_gradients_match_jax():
    tol = lambda k, v: 1e-6 if v.dtype == np.float32 else 1e-12  # noqa: E731
    assert_matches_recorded(cases(ft), "ufunc_jax.npz", tol)


@pytest.mark.parametrize("name", NAMES + ["negative"])
def test_methods_equal_numpys(name):
    u, nu = getattr(fnp, name), getattr(np, name)
    assert isinstance(u, fnp.ufunc) and (u.nin, u.nout) == (nu.nin, nu.nout)
    x = B if name.startswith("logical") else I if name.startswith("bitwise") else A
    close = lambda got, want: np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)  # noqa: E731
    if u.nin == 1:
        close(u.at(V, [0, 0, 2], inplace=False), _numpy_at(nu, V, [0, 0, 2]))
        return
    for axis in (0, 1, -1, None):
        want = nu.reduce(x.ravel()) if axis is None else nu.reduce(x, axis=axis)  # as JAX's
        close(u.reduce(x, axis=axis), want)
        if axis is not None:
            close(u.accumulate(x, axis=axis), nu.accumulate(x, axis=axis))
            idx = np.array([0, 1, 1, 0, 2]) if axis == 0 else np.array([3, 0, 2, 2])
            close(u.reduceat(x, idx, axis=axis), nu.reduceat(x, idx, axis=axis))
    close(u.outer(x, x[1]), nu.outer(x, x[1]))
    if not name.startswith("logical"):
        idx, vals = (np.array([1, 1, 0]), np.array([2, 0, 2])), x[0, :3]
        close(u.at(x, idx, vals, inplace=False), _numpy_at(nu, x, idx, vals))
        close(u.at(x, slice(1, 3), x[0], inplace=False), _numpy_at(nu, x, slice(1, 3), x[0]))


def _numpy_at(nu, a, idx, *b):
    a = np.array(a)
    nu.at(a, idx, *b)
    return a


def test_generic_methods_through_the_transforms():
    hyp = fnp.frompyfunc(lambda x, y: fnp.sqrt(x * x + y * y), nin=2, nout=1)
    w = np.abs(A) + 0.5
    check_grads(lambda a: hyp.reduce(a, axis=1), (w,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: fnp.subtract.accumulate(a, axis=1), (A,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: fnp.logaddexp2.reduce(a, axis=0), (A,), order=2, modes=("fwd", "rev"))
    at = lambda v: hyp.at(v, np.array([0, 0, 3]), v[:3] + 1.0, inplace=False)  # noqa: E731
    check_grads(at, (np.abs(V) + 0.5,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: fnp.subtract.reduceat(v, np.array([0, 3, 2, 5])), (V,), order=2,
                modes=("fwd", "rev"))  # fmt: skip
    fns = [
        lambda a: hyp.reduce(a, axis=0),
        lambda a: fnp.subtract.accumulate(a, axis=1),
        lambda a: fnp.subtract.outer(a[0], a[1]),
        lambda a: hyp.at(a, (np.array([0, 0]), np.array([1, 1])), 2.0, inplace=False),
        lambda a: fnp.maximum.reduceat(a, np.array([0, 2, 1]), axis=1),
        lambda a: fnp.logaddexp.reduce(a, axis=1, where=a > 0, initial=-1.0),
    ]
    batch = rng.standard_normal((3, 3, 4))
    for f in fns:
        eager = np.asarray(f(A))
        np.testing.assert_allclose(np.asarray(ft.jit(f)(A)), eager, rtol=1e-12, atol=1e-12)
        loop = np.stack([np.asarray(f(b)) for b in batch])
        np.testing.assert_allclose(np.asarray(ft.vmap(f)(batch)), loop, rtol=1e-12, atol=1e-12)


def test_at_skips_indices_out_of_range_as_jax():
    hyp = fnp.frompyfunc(lambda x, y: x * y + 1.0, nin=2, nout=1)
    idx = np.array([7, -1, 1, -9])
    for u in (hyp, fnp.add, fnp.maximum):
        f = lambda a, i, u=u: u.at(a, i, 3.0, inplace=False)  # noqa: E731
        want = np.array(V)
        for i in (-1, 1):
            want[i] = float(u(want[i], 3.0))
        np.testing.assert_allclose(f(V, idx), want, rtol=1e-14)
        np.testing.assert_allclose(ft.jit(f)(V, idx), want, rtol=1e-14)


def test_the_fast_paths_keep_numpys_options():
    got = fnp.add.reduce(A, axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(np.asarray(got), np.add.reduce(A, axis=(0, 1), keepdims=True))
    kw = dict(axis=0, where=A > 0, initial=-10.0)
    np.testing.assert_allclose(np.asarray(fnp.maximum.reduce(A, **kw)), np.maximum.reduce(A, **kw))
    got = fnp.bitwise_and.reduce(I, axis=1, where=I > 4)
    np.testing.assert_array_equal(np.asarray(got), np.bitwise_and.reduce(I, axis=1, where=I > 4))
    assert fnp.multiply.accumulate(I[0], dtype=np.float32).dtype == np.float32
    assert fnp.subtract.reduce(I, axis=0, dtype=np.float64).dtype == np.float64
    assert fnp.add.identity == 0 and fnp.subtract.identity is None and fnp.add.nargs == 2
    assert repr(fnp.add._ufunc) == "<functrace.numpy.ufunc 'add'>"
    assert fnp.frompyfunc(np.add, 2, 1) == fnp.frompyfunc(np.add, 2, 1)


def test_bad_arguments_name_the_method():
    hyp = fnp.frompyfunc(lambda x, y: x + y, nin=2, nout=1)
    with pytest.raises(NotImplementedError, match="add.at: functrace arrays are immutable"):
        fnp.add.at(V, [0], 1.0)
    with pytest.raises(ValueError, match=r"negative.reduce: only binary ufuncs .*got nin=1"):
        fnp.negative.reduce(V)
    with pytest.raises(TypeError, match="negative.at: expected no value argument b"):
        fnp.negative.at(V, [0], 1.0, inplace=False)
    with pytest.raises(TypeError, match="add.at: expected a value argument b"):
        fnp.add.at(V, [0], inplace=False)
    with pytest.raises(NotImplementedError, match="<lambda>.reduce: a tuple of axes"):
        hyp.reduce(A, axis=(0, 1))
    with pytest.raises(ValueError, match="subtract.reduce: the reduction has no identity"):
        fnp.subtract.reduce(A, where=A > 0)
    with pytest.raises(ValueError, match="subtract.reduce: expected a non-empty axis"):
        fnp.subtract.reduce(np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"subtract.reduce: expected axis in \[-2, 2\), got 2"):
        fnp.subtract.reduce(A, axis=2)
    with pytest.raises(ValueError, match="add.accumulate: expected one int axis, got None"):
        fnp.add.accumulate(A, axis=None)
    with pytest.raises(ValueError, match="add.reduceat: expected indices to be a 1-d int"):
        fnp.add.reduceat(A, np.array([0.5]))
    with pytest.raises(ValueError, match="where to be a boolean array"):
        fnp.add.reduce(A, where=A)
    with pytest.raises(TypeError, match="<lambda>: expected 2 array argument"):
        hyp(A)
    with pytest.raises(ValueError, match="ufunc: expected nin to be a positive int, got 0"):
        fnp.frompyfunc(np.add, 0, 1)
    with pytest.raises(TypeError, match="ufunc: expected a callable func"):
        fnp.ufunc(3, 2, 1)
