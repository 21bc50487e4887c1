"""Dtype names and promotion, grids, index helpers, predicates, bits, files and the
array API's names of functrace.numpy: NumPy's values and dtypes on plain inputs, the
same under ``jit``/``vmap``/``grad``, and clear errors on bad input.

The op table (``op_rows_numpy5.py``) checks the traceable functions on drawn inputs;
this file checks what it cannot: dtype functions, weak Python scalars, eager-only
wrappers, ``mode="raise"``, and the error messages.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace.errors import ConcretizationError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _same(got, expected) -> None:
    a, e = np.asarray(got), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind in "fc":
        rtol = 1e-12 if a.dtype in (np.float64, np.complex128) else 1e-6
        np.testing.assert_allclose(a, e, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(a, e)


# ---------------------------------------------------------------------------
# Dtype names
# ---------------------------------------------------------------------------


def test_dtype_names_are_numpys_objects() -> None:
    # the scalar types are JAX's (functrace.numpy._scalar_types), equal to NumPy's
    assert fnp.bool == np.bool_ and fnp.object_ is np.object_ and fnp.bool is fnp.bool_
    assert fnp.uint16 == np.uint16 and np.dtype(fnp.uint) == np.uint64
    assert fnp.int_ == np.int64 and fnp.float_ == np.float64 and fnp.complex_ == np.complex128
    assert fnp.int_ is fnp.int64 and fnp.double is fnp.float64 and fnp.single is fnp.float32
    assert (fnp.double, fnp.single) == (np.float64, np.float32)
    assert (fnp.cdouble, fnp.csingle) == (np.complex128, np.complex64)
    for name in ("number", "generic", "integer", "signedinteger", "unsignedinteger"):
        assert getattr(fnp, name) is getattr(np, name)
    for name in ("inexact", "floating", "complexfloating", "character", "flexible"):
        assert getattr(fnp, name) is getattr(np, name)
    assert fnp.euler_gamma == np.euler_gamma
    assert fnp.issubdtype(fnp.float32, fnp.floating) and not fnp.issubdtype(fnp.int_, fnp.inexact)
    assert fnp.isdtype(fnp.float32, "real floating")
    assert fnp.zeros(2, dtype=fnp.bool).dtype == np.bool_
    # the module's own code still sees the builtin bool
    assert fnp.isscalar(1) is True and builtins.bool is bool


# ---------------------------------------------------------------------------
# Promotion: result_type agrees with what functrace's operations return
# ---------------------------------------------------------------------------

_VALUES = [
    np.ones(2, np.float32),
    np.ones(2, np.float64),
    np.ones(2, np.int8),
    np.ones(2, np.uint8),
    np.ones(2, np.int32),
    np.ones(2, np.int64),
    np.ones(2, np.uint64),
    np.ones(2, np.bool_),
    np.ones(2, np.complex64),
    np.float32(1.0),
    2,
    2.5,
    True,
    1j,
]


@pytest.mark.parametrize("y", _VALUES, ids=lambda v: type(v).__name__ + str(np.asarray(v).dtype))
@pytest.mark.parametrize("x", _VALUES[:9], ids=lambda v: str(v.dtype))
def test_result_type_matches_the_dtype_of_operations(x, y) -> None:
    expected = fnp.add(x, y).dtype
    assert fnp.result_type(x, y) == expected
    assert fnp.result_type(y, x) == expected
    assert fnp.result_type(x.dtype, y) == expected  # a dtype stands for an array of it
    # the same inside a trace, where y may be a weak traced value

    def probe(x, y):
        assert fnp.result_type(x, y) == (x + y).dtype
        return x + y

    ft.make_jaxpr(probe)(x, y)


def test_result_type_of_weak_python_scalars_and_dtypes() -> None:
    assert fnp.result_type(np.float32, 2.0) == np.float32
    assert fnp.result_type(np.int8, 1000) == np.int8  # the value does not matter (NEP 50)
    assert fnp.result_type(1, 2.0) == np.float64
    assert fnp.result_type(True) == np.bool_
    assert fnp.result_type(np.int64, np.float32) == np.float64  # JAX: float32
    assert fnp.result_type(float, np.float32) == np.float64  # a type is strong, as in NumPy
    assert fnp.result_type("f4", "i8") == np.result_type("f4", "i8")

    def weak(x):  # x * 2.0 of a weak traced scalar stays weak: float32 arrays win
        assert fnp.result_type(x * 2.0, np.ones(2, np.float32)) == np.float32
        return x

    ft.make_jaxpr(weak)(3.0)


def test_promote_types_and_can_cast() -> None:
    for a, b in [("i1", "u1"), ("i8", "f2"), ("u8", "i8"), ("f4", "c8"), ("b1", "i2")]:
        assert fnp.promote_types(a, b) == np.promote_types(a, b)
    assert fnp.can_cast(np.int32, np.float64) and not fnp.can_cast(np.float64, np.int32)
    assert fnp.can_cast(np.ones(2, np.int64), np.float32, "same_kind")
    ft.make_jaxpr(lambda x: fnp.can_cast(x, np.float64) and x)(np.ones(2, np.int32))


def test_isscalar_iterable_broadcast_shapes() -> None:
    # JAX's isscalar: 0-d arrays and tracers count (NumPy says False for 0-d arrays)
    assert fnp.isscalar(1.5) and fnp.isscalar(np.float32(1)) and fnp.isscalar(np.array(2.0))
    assert not fnp.isscalar([1.0]) and not fnp.isscalar(np.zeros(2))
    seen = []
    ft.jit(lambda x, y: seen.append((fnp.isscalar(x), fnp.isscalar(y))) or x)(1.0, np.zeros(2))
    assert seen == [(True, False)]
    assert fnp.iterable([1]) and fnp.iterable(fnp.zeros(2)) and not fnp.iterable(fnp.zeros(()))
    ft.vmap(lambda x: seen.append(fnp.iterable(x)) or x)(np.zeros((3, 2)))
    assert seen[-1] is True
    assert fnp.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert fnp.broadcast_shapes() == ()


def test_dtype_function_errors() -> None:
    with pytest.raises(ValueError, match="result_type: expected at least one"):
        fnp.result_type()
    with pytest.raises(TypeError, match="result_type: expected arrays, scalars or dtypes"):
        fnp.result_type([1, 2])
    with pytest.raises(TypeError, match="promote_types: expected two dtypes"):
        fnp.promote_types(np.int8, "not a dtype")
    with pytest.raises(TypeError, match="can_cast: expected a dtype or an array"):
        fnp.can_cast(1, np.float32)
    with pytest.raises(ValueError, match="can_cast: expected casting"):
        fnp.can_cast(np.int8, np.int16, "sometimes")
    with pytest.raises(ValueError, match=r"broadcast_shapes: expected shapes that broadcast"):
        fnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="broadcast_shapes: expected non-negative"):
        fnp.broadcast_shapes((2,), (-1,))


# ---------------------------------------------------------------------------
# Grids and creation
# ---------------------------------------------------------------------------


def test_grids_match_numpy_eagerly_and_under_jit() -> None:
    cases = [
        (lambda m: m.logspace(0.0, 2.0, 3), ()),
        (lambda m: m.logspace(0, 2, 3, base=2, dtype=int), ()),
        (lambda m: m.logspace(np.float32(1), 3, 4), ()),
        (lambda m: m.logspace(np.zeros(2, np.float32), 3, 4, base=np.array([2.0, 3.0])), ()),
        (lambda m: m.geomspace(1.0, 1000.0, 4), ()),
        (lambda m: m.geomspace(np.float32(1), np.float32(8), 4), ()),
        (lambda m: m.geomspace(1, 8, 4, dtype=np.float32), ()),
        (lambda m: m.geomspace([1.0, -1.0], [8.0, -8.0], 4, axis=1), ()),
        (lambda m: m.geomspace(2.0, 16.0, 1), ()),
        (lambda m: m.geomspace(2.0, 16.0, 0), ()),
        (lambda m: m.indices((2, 3)), ()),
        (lambda m: m.indices((2, 3), dtype=np.float32), ()),
        (lambda m: m.indices(()), ()),
        (lambda m: m.tri(3, 2, 1, dtype=int), ()),
        (lambda m: m.tri(2), ()),
        (lambda m: m.tri(-1), ()),
    ]
    for build, _ in cases:
        expected = build(np)
        out = build(fnp)
        assert type(out) is ft.Array
        _same(out, expected)
        _same(ft.jit(lambda build=build: build(fnp))(), expected)
    sparse = fnp.indices((2, 3), sparse=True)
    for got, want in zip(sparse, np.indices((2, 3), sparse=True)):
        _same(got, want)
    for got, want in zip(ft.jit(lambda: fnp.indices((2, 3), sparse=True))(), sparse):
        _same(got, want)


def test_traced_grids_build_from_iota_and_differentiate() -> None:
    text = str(ft.make_jaxpr(lambda: fnp.tri(300))())
    assert "iota" in text and "f64[300,300]" in text
    g = ft.grad(lambda a: fnp.sum(fnp.geomspace(a, 8.0, 4)))(1.0)
    # geomspace(a, 8, 4) = a, a^(2/3) 2, a^(1/3) 4, 8: d/da at 1 = 1 + 4/3 + 4/3
    np.testing.assert_allclose(g, 1 + 4 / 3 + 4 / 3)
    g = ft.grad(lambda b: fnp.sum(fnp.logspace(0.0, 2.0, 3, base=b)))(10.0)
    np.testing.assert_allclose(g, 1 + 2 * 10.0)
    batched = ft.vmap(lambda s: fnp.logspace(s, 2.0, 3))(np.array([0.0, 1.0]))
    _same(batched, np.stack([np.logspace(0.0, 2.0, 3), np.logspace(1.0, 2.0, 3)]))


def test_fromfunction_calls_once_on_index_arrays() -> None:
    calls = []

    def f(i, j):
        calls.append((np.shape(i), np.shape(j)))
        return 10 * i + j

    _same(fnp.fromfunction(f, (2, 3), dtype=int), np.fromfunction(f, (2, 3), dtype=int))
    assert calls == [((2, 3), (2, 3))] * 2
    out = ft.jit(lambda x: fnp.fromfunction(lambda i, j: x * i + j, (2, 2)))(2.0)
    _same(out, np.array([[0.0, 1.0], [2.0, 3.0]]))
    assert ft.grad(lambda x: fnp.sum(fnp.fromfunction(lambda i, j: x * i + j, (2, 2))))(2.0) == 2


def test_mgrid_ogrid_s_index_exp() -> None:
    _same(fnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    _same(fnp.mgrid[0:1:3j], np.mgrid[0:1:3j])
    assert type(fnp.mgrid[0:2]) is ft.Array
    got = fnp.ogrid[0:2, 0:3]
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, np.ogrid[0:2, 0:3]):
        _same(g, w)
    _same(fnp.ogrid[0:3], np.ogrid[0:3])
    # concrete traced bounds are read; abstract ones cannot give a shape
    assert ft.grad(lambda n: fnp.sum(fnp.mgrid[0:n]) * n)(3.0) == 3.0
    with pytest.raises(ConcretizationError, match="mgrid"):
        ft.jit(lambda n: fnp.mgrid[0:n])(3)
    with pytest.raises(TypeError, match=r"mgrid: expected slices"):
        fnp.mgrid[3]
    assert fnp.s_[1:2, ::2] == np.s_[1:2, ::2] and fnp.index_exp[1] == (1,)


def test_buffers_and_files_round_trip(tmp_path) -> None:
    buf = np.arange(4, dtype=np.int16).tobytes()
    out = fnp.frombuffer(buf, dtype=np.int16)
    assert type(out) is ft.Array and not out.flags.writeable
    _same(out, np.frombuffer(buf, np.int16))
    mutable = bytearray(buf)
    out = fnp.frombuffer(mutable, dtype=np.int16)
    mutable[0] = 9  # the result is a copy: no aliasing of the buffer
    assert out[0] == 0
    _same(fnp.fromstring("1, 2, 3", dtype=int, sep=","), np.array([1, 2, 3]))
    _same(fnp.fromiter(range(3), dtype=np.float32), np.arange(3, dtype=np.float32))
    fnp.save(tmp_path / "a.npy", fnp.arange(3.0))
    loaded = fnp.load(tmp_path / "a.npy")
    assert type(loaded) is ft.Array
    _same(loaded, np.arange(3.0))
    mapped = fnp.load(tmp_path / "a.npy", mmap_mode="r")
    assert type(mapped) is ft.Array and mapped.base is None or type(mapped.base) is not np.memmap
    fnp.savez(tmp_path / "b.npz", np.ones(2), w=fnp.zeros(1))
    with fnp.load(tmp_path / "b.npz") as z:
        _same(z["arr_0"], np.ones(2))
        _same(z["w"], np.zeros(1))
    np.arange(3, dtype=np.int32).tofile(tmp_path / "c.bin")
    _same(fnp.fromfile(tmp_path / "c.bin", dtype=np.int32), np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="save: expected concrete arrays"):
        ft.jit(lambda x: fnp.save(tmp_path / "d.npy", x) or x)(np.ones(2))
    with pytest.raises(TypeError, match="savez: expected concrete arrays"):
        ft.grad(lambda x: fnp.savez(tmp_path / "d.npz", a=x) or x)(1.0)
    with pytest.raises(ValueError, match="fromstring: expected a non-empty separator"):
        fnp.fromstring("12", sep="")


def test_printing() -> None:
    assert fnp.array_repr(np.ones(2, np.float32)) == np.array_repr(np.ones(2, np.float32))
    assert fnp.array_repr(fnp.ones(2)) == "Array([1., 1.])"
    assert fnp.array_str([1.0, 2.5]) == np.array_str(np.array([1.0, 2.5]))
    seen = []
    ft.jit(lambda x: seen.append(fnp.array_repr(x)) or x)(np.ones(2))
    assert "f64[2]" in seen[0]
    with fnp.printoptions(precision=2):
        assert fnp.get_printoptions()["precision"] == 2
        assert fnp.array_str(np.array([1 / 3])) == "[0.33]"
    assert fnp.set_printoptions is np.set_printoptions


# ---------------------------------------------------------------------------
# Index helpers
# ---------------------------------------------------------------------------


def test_index_helpers_match_numpy() -> None:
    a = np.arange(12.0).reshape(3, 4)
    sq = np.zeros((3, 3, 3))
    pairs = [
        (fnp.diag_indices(3, 3), np.diag_indices(3, 3)),
        (fnp.diag_indices_from(sq), np.diag_indices_from(sq)),
        (fnp.tril_indices_from(a, 1), np.tril_indices_from(a, 1)),
        (fnp.triu_indices_from(a, -1), np.triu_indices_from(a, -1)),
        (fnp.mask_indices(4, fnp.triu, 1), np.mask_indices(4, np.triu, 1)),
        (fnp.mask_indices(3, np.tril), np.mask_indices(3, np.tril)),
        (fnp.ix_([1, 2], [True, False, True]), np.ix_([1, 2], [True, False, True])),
        (fnp.ix_([]), np.ix_([])),
    ]
    for got, want in pairs:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    assert all(type(i) is ft.Array for i in fnp.diag_indices(2))
    # plain NumPy input: NumPy's types; Array input: Arrays
    assert type(fnp.diag_indices_from(np.zeros((2, 2)))[0]) is np.ndarray
    assert type(fnp.diag_indices_from(fnp.zeros((2, 2)))[0]) is ft.Array


def test_index_helpers_stay_static_under_jit() -> None:
    def f(x):
        rows, cols = fnp.tril_indices_from(x)
        assert type(rows) is ft.Array  # concrete: indexing with them is static
        i, j = fnp.mask_indices(3, fnp.triu, 1)
        assert type(i) is ft.Array
        return x[rows, cols].sum() + x[i, j].sum() + x[fnp.diag_indices_from(x)].sum()

    x = np.arange(9.0).reshape(3, 3)
    expected = x[np.tril_indices(3)].sum() + x[np.triu_indices(3, 1)].sum() + np.trace(x)
    np.testing.assert_allclose(ft.jit(f)(x), expected)
    got = fnp.mask_indices(3, fnp.triu, 1, size=4)
    _same(got[0], np.array([0, 0, 1, 0]))
    rows, cols = ft.jit(lambda r, c: fnp.ix_(r, c))(np.array([1, 2]), np.array([0]))
    _same(rows, np.array([[1], [2]]))
    _same(cols, np.array([[0]]))


def test_ravel_multi_index() -> None:
    i, j = np.array([1, 2, 0]), np.array([0, 3, 2])
    for kw in ({}, {"order": "F"}, {"mode": "wrap"}, {"mode": ("clip", "raise")}):
        expected = np.ravel_multi_index((i, j), (3, 4), **kw)
        _same(fnp.ravel_multi_index((i, j), (3, 4), **kw), expected)
        _same(fnp.ravel_multi_index(np.stack([i, j]), (3, 4), **kw), expected)
        # mode="raise" checks the indices: concrete here, under vjp
        out = ft.vjp(lambda x, kw=kw: fnp.ravel_multi_index((i, j), (3, 4), **kw) * 1.0 + x, 0.0)[0]
        _same(out, expected.astype(np.float64))
    scalar = fnp.ravel_multi_index((1, 2), (3, 4))
    assert scalar == 6 and type(scalar) is type(np.ravel_multi_index((1, 2), (3, 4)))
    small = (np.array([1], np.int32), np.array([2], np.int8))
    assert fnp.ravel_multi_index(small, (3, 4)).dtype == np.int64  # NumPy's int64 (JAX: int32)
    clipped = ft.jit(lambda i, j: fnp.ravel_multi_index((i, j), (3, 4), mode="clip"))(
        np.array([5, -1]), np.array([1, 9])
    )
    _same(clipped, np.ravel_multi_index(([5, -1], [1, 9]), (3, 4), mode="clip"))
    with pytest.raises(ValueError, match=r"ravel_multi_index: expected indices in \[0, d\)"):
        fnp.ravel_multi_index(([1, 5], [0, 3]), (3, 4))
    with pytest.raises(ConcretizationError, match="mode='clip' or mode='wrap'"):
        ft.jit(lambda i: fnp.ravel_multi_index((i, i), (3, 4)))(np.array([1]))
    with pytest.raises(ValueError, match="expected 2 index arrays"):
        fnp.ravel_multi_index((np.array([1]),), (3, 4))
    with pytest.raises(TypeError, match="expected integer index arrays"):
        fnp.ravel_multi_index((np.array([1.0]), np.array([2])), (3, 4))
    with pytest.raises(ValueError, match="expected mode one of"):
        fnp.ravel_multi_index((1, 2), (3, 4), mode="nearest")
    with pytest.raises(ValueError, match="expected order 'C' or 'F'"):
        fnp.ravel_multi_index((1, 2), (3, 4), order="X")
    with pytest.raises(ValueError, match="expected positive dims"):
        fnp.ravel_multi_index((1, 2), (3, 0))


def _np_fill(a, val, wrap=False):
    out = np.array(a, copy=True)
    np.fill_diagonal(out, val, wrap)
    return out


@pytest.mark.parametrize(
    "shape,val,wrap",
    [
        ((3, 3), 5.0, False),
        ((5, 3), [1.0, 2.0], True),
        ((5, 3), [1.0, 2.0], False),
        ((2, 4), [[1.0, 2.0], [3.0, 4.0]], False),
        ((2, 2, 2), [1.0, 2.0, 3.0], False),
        ((3, 3), [], False),
    ],
)
def test_fill_diagonal_matches_numpy(shape, val, wrap) -> None:
    a = np.arange(float(np.prod(shape))).reshape(shape)
    expected = _np_fill(a, val, wrap)
    _same(fnp.fill_diagonal(a, val, wrap, inplace=False), expected)
    _same(ft.jit(lambda a: fnp.fill_diagonal(a, val, wrap, inplace=False))(a), expected)
    assert np.array_equal(a, np.arange(float(np.prod(shape))).reshape(shape))  # not mutated
    batched = ft.vmap(lambda a: fnp.fill_diagonal(a, val, wrap, inplace=False))(np.stack([a, -a]))
    _same(batched, np.stack([expected, _np_fill(-a, val, wrap)]))


def test_fill_diagonal_casts_differentiates_and_refuses_inplace() -> None:
    _same(fnp.fill_diagonal(np.zeros((2, 2), int), 2.7, inplace=False), [[2, 0], [0, 2]])
    g = ft.grad(lambda v: fnp.sum(fnp.fill_diagonal(np.ones((3, 3)), v, inplace=False)))
    _same(g(np.array([1.0, 2.0])), np.array([2.0, 1.0]))  # v cycles: v0 twice, v1 once
    g = ft.grad(lambda a: fnp.sum(fnp.fill_diagonal(a, 0.0, inplace=False) ** 2))(np.ones((2, 2)))
    _same(g, np.array([[0.0, 2.0], [2.0, 0.0]]))
    assert type(fnp.fill_diagonal(fnp.zeros((2, 2)), 1.0, inplace=False)) is ft.Array
    with pytest.raises(ValueError, match="fill_diagonal: expected inplace=False"):
        fnp.fill_diagonal(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fnp.fill_diagonal(np.zeros(3), 1.0, inplace=False)
    with pytest.raises(ValueError, match="all dimensions of equal length"):
        ft.jit(lambda a: fnp.fill_diagonal(a, 1.0, inplace=False))(np.zeros((2, 2, 3)))


# ---------------------------------------------------------------------------
# Predicates and bits
# ---------------------------------------------------------------------------


def test_predicates_match_numpy() -> None:
    x = np.array([1.0, np.inf, -np.inf, np.nan])
    for name in ("isposinf", "isneginf"):
        _same(getattr(fnp, name)(x), getattr(np, name)(x))
        _same(ft.jit(getattr(fnp, name))(x), getattr(np, name)(x))
        _same(getattr(fnp, name)(np.arange(3)), getattr(np, name)(np.arange(3)))
        with pytest.raises(TypeError, match=f"{name}: expected a real array"):
            getattr(fnp, name)(np.array([1j]))
    z = np.array([1 + 0j, 2j, 3])
    for name in ("iscomplex", "isreal"):
        _same(getattr(fnp, name)(z), getattr(np, name)(z))
        _same(ft.jit(getattr(fnp, name))(np.ones((2, 1))), getattr(np, name)(np.ones((2, 1))))
    assert fnp.iscomplex(1 + 0j) == np.iscomplex(1 + 0j)
    assert fnp.iscomplexobj([1j]) is True and fnp.isrealobj(np.zeros(2)) is True
    seen = []
    ft.jit(lambda x: seen.append((fnp.iscomplexobj(x), fnp.isrealobj(x))) or x)(1.0)
    assert seen == [(False, True)]
    assert fnp.array_equiv([1, 2], [[1, 2], [1, 2]]) is True
    assert fnp.array_equiv([1, 2], [1, 2, 3]) is False
    assert ft.jit(fnp.array_equiv)(np.array([1, 2]), np.array([[1, 2], [1, 3]])) == np.False_


def test_bitwise_count_packbits_unpackbits() -> None:
    ints = [
        np.array([-1, 7, -128, 127, 0], np.int8),
        np.array([2**64 - 1, 5, 2**63], np.uint64),
        np.array([np.iinfo(np.int64).min, -1, 2**62 + 3, 0], np.int64),
        np.array([70000, -70000], np.int32),
        np.array([True, False]),
        np.array(255, np.uint8),
    ]
    for x in ints:
        _same(fnp.bitwise_count(x), np.bitwise_count(x))
        _same(ft.jit(fnp.bitwise_count)(x), np.bitwise_count(x))
    _same(fnp.bitwise_count(3), np.bitwise_count(3))
    bits = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1], [0, 3, 0, 0, 0, 0, 0, 0, -1]])
    for kw in ({}, {"axis": 1}, {"axis": 0, "bitorder": "little"}):
        expected = np.packbits(bits, **kw)
        _same(ft.jit(lambda b, kw=kw: fnp.packbits(b, **kw))(bits), expected)
        u = expected
        _same(ft.jit(lambda u, kw=kw: fnp.unpackbits(u, **kw))(u), np.unpackbits(u, **kw))
        for count in (0, 3, 20, -2):
            kwc = dict(kw, count=count)
            _same(fnp.unpackbits(u, **kwc), np.unpackbits(u, **kwc))
            _same(ft.jit(lambda u, kwc=kwc: fnp.unpackbits(u, **kwc))(u), np.unpackbits(u, **kwc))
    batched = ft.vmap(fnp.packbits)(bits)
    _same(batched, np.stack([np.packbits(b) for b in bits]))
    assert fnp.bitwise_invert is fnp.invert
    with pytest.raises(TypeError, match="bitwise_count: expected an integer or boolean"):
        fnp.bitwise_count(np.array([1.0]))
    with pytest.raises(TypeError, match="packbits: expected an integer or boolean"):
        ft.jit(fnp.packbits)(np.array([1.0]))
    with pytest.raises(TypeError, match="unpackbits: expected a uint8 array"):
        fnp.unpackbits(np.array([3], np.int8))
    with pytest.raises(ValueError, match="bitorder 'big' or 'little'"):
        fnp.packbits(bits, bitorder="middle")
    with pytest.raises(ValueError, match="unpackbits: expected -count"):
        ft.jit(lambda u: fnp.unpackbits(u, count=-100))(np.array([3], np.uint8))


# ---------------------------------------------------------------------------
# Array API names
# ---------------------------------------------------------------------------


def test_array_api_names_match_numpy() -> None:
    rng = np.random.default_rng(0)
    m, v = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    cases = [
        (lambda k, x: k.permute_dims(x, (2, 0, 1)), (m,)),
        (lambda k, x: k.matrix_transpose(x), (m,)),
        (lambda k, x, y: k.concat([x, y[None, None]], axis=None), (m, v)),
        (lambda k, x, y: k.vecdot(x, y), (m, v)),
        (lambda k, x, y: k.vecdot(x, y, axis=0), (m[:, :, 0], m[:, 0, :3])),
        (lambda k, x: k.vecdot(x, x), (i32,)),
        (lambda k, x, y: k.matvec(x, y), (m, v)),
        (lambda k, x: k.matvec(x, np.ones(3, np.int8)), (i32,)),
        (lambda k, x, y: k.vecmat(y[:3], x), (m, v)),
        (lambda k, x: k.cumulative_sum(x, axis=1, include_initial=True), (i32,)),
        (lambda k, x: k.cumulative_sum(x, dtype=np.float32), (v,)),
        (lambda k, x: k.cumulative_prod(x, axis=-1, include_initial=True), (m,)),
        (lambda k, x: k.cumulative_sum(x), (np.array(3),)),
        (lambda k, x: k.cumulative_sum(x, include_initial=True), (np.zeros(0),)),
        (lambda k, x: k.cumulative_sum(x), (np.array([True, True]),)),
    ]
    for f, args in cases:
        expected = f(np, *args)
        _same(f(fnp, *args), expected)
        _same(ft.jit(lambda *a, f=f: f(fnp, *a))(*args), expected)
    got = fnp.unstack(m, axis=1)
    assert isinstance(got, tuple) and len(got) == 3
    for g, w in zip(ft.jit(lambda x: fnp.unstack(x, axis=-1))(m), np.unstack(m, axis=-1)):
        _same(g, w)
    _same(fnp.vecdot(np.array([1j, 2]), np.array([1j, 2])), np.vecdot([1j, 2], [1j, 2]))
    g = ft.grad(lambda x: fnp.sum(fnp.cumulative_sum(x, include_initial=True)))(np.ones(3))
    _same(g, np.array([3.0, 2.0, 1.0]))


def test_array_api_errors() -> None:
    with pytest.raises(ValueError, match="cumulative_sum: expected an axis"):
        ft.jit(fnp.cumulative_sum)(np.ones((2, 2)))
    with pytest.raises(ValueError, match="cumulative_prod: expected an axis"):
        fnp.cumulative_prod(np.ones((2, 2)))
    with pytest.raises(ValueError, match="matrix_transpose: expected an array with at least 2"):
        fnp.matrix_transpose(np.ones(3))
    with pytest.raises(ValueError, match="unstack: expected an array with at least 1"):
        ft.jit(fnp.unstack)(1.0)
    with pytest.raises(ValueError, match="vecdot: expected vectors of one length"):
        fnp.vecdot(np.ones(3), np.ones((2, 3)), axis=0)
    with pytest.raises(ValueError, match="vecdot: expected arrays with at least 1"):
        ft.jit(fnp.vecdot)(1.0, 2.0)
    with pytest.raises(ValueError, match="matvec: expected the vector length"):
        ft.jit(fnp.matvec)(np.ones((2, 2)), np.ones(3))
    with pytest.raises(ValueError, match="vecmat: expected a matrix"):
        fnp.vecmat(np.ones(3), np.ones(3))
