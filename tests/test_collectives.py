"""Named vmap axes and the collectives of ``functrace/lax/parallel.py``.

The op table (``op_rows_parallel.py``) runs each collective through the batteries
(values, gradients of order 2, jit, vmap, the composition fuzzer). Here: values and
derivatives against JAX (``fixtures/collectives_jax.npz``), the identities the psum
transpose gives, jit, nesting and shadowing, loop bodies, and the error messages.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import collective_cases
import functrace as ft
import functrace.numpy as fnp
from functrace import lax

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "collectives_jax.npz"
X = np.array([0.3, -1.2, 2.0, 0.7])


def named(f, **kw):  # type: ignore[no-untyped-def]
    return ft.vmap(f, axis_name="i", **kw)


def _loop(x: np.ndarray, per_example) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.stack([per_example(k) for k in range(x.shape[0])])


@pytest.fixture(scope="module")
def results() -> dict[str, np.ndarray]:
    return collective_cases.cases(ft)


@pytest.mark.parametrize(
    "key", sorted(k[5:] for k in np.load(FIXTURE).files if k.startswith("case/"))
)
def test_matches_jax(results, key: str) -> None:
    ref = np.load(FIXTURE)[f"case/{key}"]
    got = results[key]
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_values_match_loops() -> None:
    x = np.random.default_rng(0).normal(size=(4, 3))
    total = x[0] + x[1] + x[2] + x[3]
    np.testing.assert_allclose(named(lambda r: lax.psum(r, "i"))(x), _loop(x, lambda k: total))
    np.testing.assert_allclose(
        named(lambda r: r - lax.pmean(r, "i"))(x), _loop(x, lambda k: x[k] - total / 4)
    )
    big = np.maximum(np.maximum(x[0], x[1]), np.maximum(x[2], x[3]))
    np.testing.assert_allclose(named(lambda r: lax.pmax(r, "i"))(x), _loop(x, lambda k: big))
    np.testing.assert_array_equal(
        named(lambda r: lax.axis_index("i"))(x), np.arange(4, dtype=np.int32)
    )
    assert named(lambda r: lax.axis_index("i"))(x).dtype == np.int32
    np.testing.assert_allclose(named(lambda r: lax.all_gather(r, "i"))(x), _loop(x, lambda k: x))
    # integers and booleans: psum counts, pmean is float64
    b = np.array([True, False, True])
    assert named(lambda r: lax.psum(r, "i"))(b).tolist() == [2, 2, 2]
    m = named(lambda r: lax.pmean(r, "i"))(np.array([1, 2, 4]))
    assert m.dtype == np.float64 and np.allclose(m, 7 / 3)
    assert named(lambda r: lax.pmax(r, "i"))(np.array([1, 5, 2])).tolist() == [5, 5, 5]
    # a pytree, and an empty tuple of names (the identity)
    t = named(lambda r: lax.psum({"a": r, "b": (2 * r,)}, "i"))(x)
    np.testing.assert_allclose(t["b"][0], 2 * t["a"])
    np.testing.assert_allclose(named(lambda r: lax.psum(r, ()))(x), x)


def test_float32_stays_float32() -> None:
    x = X.astype(np.float32)
    for f in (lax.psum, lax.pmean, lax.pmax, lax.pmin, lax.all_gather):
        assert named(lambda r, f=f: f(r, "i"))(x).dtype == np.float32


def test_check_grads_of_normalisations() -> None:
    for f in (
        lambda r: r / lax.psum(r, "i"),
        lambda r: fnp.exp(r) / lax.psum(fnp.exp(r), "i"),
        lambda r: r - lax.pmean(r, "i"),
        lambda r: r * (lax.all_gather(fnp.stack([r, r * r]), "i", tiled=True) ** 2).sum(),
    ):
        ft.check_grads(named(f), (X + 3.0,), order=2, modes=("fwd", "rev"))


def test_vmap_of_grad_is_grad_of_the_sum_over_examples() -> None:
    # psum's transpose is psum: the two orders agree for any per-example scalar f
    for f in (
        lambda r: r / lax.psum(r, "i"),
        lambda r: fnp.sin(r) * lax.pmean(r**2, "i"),
        lambda r: (lax.all_gather(r, "i") * fnp.arange(4.0)).sum() * r,
        lambda r: r * lax.pmax(r, "i"),
    ):
        a = named(ft.grad(f))(X)
        b = ft.grad(lambda x, f=f: named(f)(x).sum())(X)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_pmax_splits_the_tangent_among_ties() -> None:
    x = np.array([1.0, 3.0, 3.0])
    g = ft.grad(lambda x: named(lambda r: lax.pmax(r, "i"))(x)[0])(x)
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5])
    g = ft.grad(lambda x: named(lambda r: lax.pmin(r, "i"))(x)[1])(np.array([2.0, -1.0, 0.0]))
    np.testing.assert_allclose(g, [0.0, 1.0, 0.0])


def test_jit_of_vmap_traces_ordinary_primitives() -> None:
    def f(x):  # type: ignore[no-untyped-def]
        return named(lambda r: r / lax.psum(r, "i") + lax.axis_index("i") + lax.pmax(r, "i"))(x)

    np.testing.assert_allclose(ft.jit(f)(X), f(X), rtol=1e-14)
    text = str(ft.make_jaxpr(f)(X))
    for name in ("psum", "pmax", "axis_index", "all_gather"):
        assert name not in text
    g = ft.jit(ft.grad(lambda x: (f(x) ** 2).sum()))
    np.testing.assert_allclose(g(X), ft.grad(lambda x: (f(x) ** 2).sum())(X), rtol=1e-12)
    # a jitted function called inside the named vmap sees the axis
    h = ft.jit(lambda r: r * lax.psum(r, "i"))
    np.testing.assert_allclose(named(h)(X), X * X.sum())


def test_nested_names_and_shadowing() -> None:
    x = np.arange(6.0).reshape(2, 3)
    f = ft.vmap(ft.vmap(lambda r: lax.psum(r, "j"), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(1, keepdims=True), x.shape))
    f = ft.vmap(ft.vmap(lambda r: lax.psum(r, "i"), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(0), x.shape))
    # an inner vmap with the same name shadows the outer one
    f = ft.vmap(ft.vmap(lambda r: lax.psum(r, "i"), axis_name="i"), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(1, keepdims=True), x.shape))
    # an unnamed vmap between them is transparent; its axis is not summed
    f = ft.vmap(ft.vmap(lambda r: lax.psum(r, "i")), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(0), x.shape))
    # out_axes and in_axes other than 0
    f = ft.vmap(lambda r: r * lax.psum(r, "i"), in_axes=1, out_axes=1, axis_name="i")
    np.testing.assert_allclose(f(x), x * x.sum(1, keepdims=True))


def test_collectives_in_loop_and_branch_bodies() -> None:
    xs = np.arange(6.0).reshape(3, 2)
    f = named(lambda r: lax.scan(lambda c, y: (c + y * lax.psum(y, "i"), None), 0.0, r)[0])
    np.testing.assert_allclose(f(xs), (xs * xs.sum(0)).sum(1))
    np.testing.assert_allclose(ft.jit(f)(xs), f(xs))
    g = named(lambda r: lax.fori_loop(0, 2, lambda k, v: v + lax.psum(1.0, "i"), 0.0))
    np.testing.assert_allclose(g(X), [8.0] * 4)
    h = named(lambda r: lax.cond(r > 0.5, lambda v: lax.psum(v, "i"), lambda v: -v, r))
    np.testing.assert_allclose(h(X), np.where(X > 0.5, X.sum(), -X))
    loss = named(lambda r: lax.fori_loop(0, 2, lambda k, v: v + lax.psum(v * v, "i"), r))
    np.testing.assert_allclose(
        ft.grad(lambda x: loss(x).sum())(X), named(ft.grad(lambda r: loss.__wrapped__(r)))(X)
    )


def test_axis_index_in_loop_and_branch_bodies() -> None:
    # a body batched by the loop's rule makes its carry batched through the index
    f = named(lambda r: lax.scan(lambda c, y: (c + lax.axis_index("i") * y, None), 0.0, r)[0])
    np.testing.assert_array_equal(f(np.ones((4, 2))), [0.0, 2.0, 4.0, 6.0])

    def step(r):  # type: ignore[no-untyped-def]
        return lambda c: (c[0] + 1, c[1] + lax.axis_index("i") * r)

    w = named(lambda r: lax.while_loop(lambda c: c[0] < 2, step(r), (0, 0.0))[1])
    np.testing.assert_array_equal(w(X), 2.0 * np.arange(4.0) * X)
    c = named(lambda r: lax.cond(r > -100, lambda r: r * lax.axis_index("i"), lambda r: r, r))
    np.testing.assert_array_equal(c(X), X * np.arange(4.0))
    # a loop that nothing of the vmap flows into runs its body in the vmap's function
    g = named(lambda r: lax.fori_loop(0, 2, lambda k, v: v + lax.axis_index("i"), 0))
    np.testing.assert_array_equal(g(X), [0, 2, 4, 6])

    # inside a custom rule's function (batched by its own rule): a clear error
    @ft.custom_jvp
    def scaled(r):  # type: ignore[no-untyped-def]
        return r * lax.axis_index("i")

    scaled.defjvp(lambda p, t: (scaled(p[0]), t[0]))
    with pytest.raises(NotImplementedError, match=r"axis_index.*outside it and pass i in"):
        named(lambda r: scaled(r * 2.0))(X)


def test_custom_jvp_with_a_collective() -> None:
    @ft.custom_jvp
    def normalise(r):  # type: ignore[no-untyped-def]
        return r / lax.psum(r, "i")

    @normalise.defjvp
    def _(primals, tangents):  # type: ignore[no-untyped-def]
        (r,), (t,) = primals, tangents
        s = lax.psum(r, "i")
        return r / s, t / s - r * lax.psum(t, "i") / s**2

    np.testing.assert_allclose(named(normalise)(X + 3), (X + 3) / (X + 3).sum())
    a = ft.grad(lambda x: (named(normalise)(x) * fnp.arange(4.0)).sum())(X + 3)
    b = ft.grad(lambda x: (named(lambda r: r / lax.psum(r, "i"))(x) * fnp.arange(4.0)).sum())(X + 3)
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_unbound_names_are_name_errors() -> None:
    with pytest.raises(NameError, match="psum: unbound axis name: batch.*outside any vmap"):
        lax.psum(1.0, "batch")
    with pytest.raises(NameError, match=r"unbound axis name: j.*in scope: 'i'"):
        named(lambda r: lax.psum(r, "j"))(X)
    with pytest.raises(NameError, match=r"unbound axis name: j"):
        named(lambda r: lax.psum(r, ("i", "j")))(X)
    for f in (
        lambda x: lax.pmean(x, "i"),
        lambda x: lax.pmax(x, "i"),
        lambda x: lax.pmin(x, "i"),
        lambda x: lax.all_gather(x, "i"),
        lambda x: lax.axis_index("i") + x,
    ):
        with pytest.raises(NameError, match="unbound axis name: i"):
            f(X)
        with pytest.raises(NameError, match="unbound axis name: i"):
            ft.jit(f)(X)
        with pytest.raises(NameError, match="unbound axis name: i"):
            ft.vmap(f)(X)  # an unnamed vmap binds no name
        with pytest.raises(NameError, match="unbound axis name: i"):
            ft.grad(lambda x, f=f: f(x).sum())(X)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="psum: expected an axis name"):
        named(lambda r: lax.psum(r, ["i", ["j"]]))(X)
    with pytest.raises(ValueError, match="psum: expected distinct axis names"):
        named(lambda r: lax.psum(r, ("i", "i")))(X)
    with pytest.raises(TypeError, match="psum: expected an array or a pytree of arrays, got str"):
        named(lambda r: lax.psum("abc", "i"))(X)
    with pytest.raises(TypeError, match="pmax: expected a numeric or boolean operand"):
        named(lambda r: lax.pmax(np.array(["a"]), "i"))(X)
    with pytest.raises(ValueError, match="all_gather: expected one axis name"):
        ft.vmap(named(lambda r: lax.all_gather(r, ("i", "j"))), axis_name="j")(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"all_gather: expected axis in \[-1, 1\)"):
        named(lambda r: lax.all_gather(r, "i", axis=2))(X)
    with pytest.raises(ValueError, match=r"all_gather: expected axis in \[-1, 1\).*tiled"):
        named(lambda r: lax.all_gather(r, "i", axis=1, tiled=True))(np.ones((2, 3)))
    with pytest.raises(TypeError, match="all_gather: expected tiled to be a bool"):
        named(lambda r: lax.all_gather(r, "i", tiled="yes"))(X)
    with pytest.raises(TypeError, match="vmap: expected axis_name to be a hashable name"):
        ft.vmap(lambda r: r, axis_name=["i"])(X)
    with pytest.raises(TypeError, match="vmap: expected axis_name to be one name"):
        ft.vmap(lambda r: r, axis_name=("i", "j"))(X)
    with pytest.raises(TypeError, match="vmap: expected axis_size to be an int"):
        ft.vmap(lambda r: r, axis_size=2.0)(X)
    # The fourth positional parameter is axis_size (the contract); JAX's order differs.
    with pytest.raises(TypeError, match="pass axis_name='i' by keyword"):
        ft.vmap(lambda r: r, 0, 0, "i")(X)


def test_psum_of_unbatched_values_multiplies_by_the_size() -> None:
    np.testing.assert_allclose(named(lambda r: lax.psum(1, "i"))(X), [4] * 4)
    f = ft.vmap(lambda c: lax.psum(c, "i") + 0.0, in_axes=None, axis_size=3, axis_name="i")
    np.testing.assert_allclose(f(2.0), [6.0] * 3)
    g = ft.vmap(lambda c: lax.all_gather(c, "i"), in_axes=None, axis_size=2, axis_name="i")
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), np.broadcast_to([1.0, 2.0], (2, 2, 2)))


def test_collectives_over_the_outer_axis_from_an_inner_vmap() -> None:
    # the inner trace passes them down, keeping its batch dimension
    x = np.arange(24.0).reshape(2, 3, 4) / 10

    def nest(f):  # type: ignore[no-untyped-def]
        return ft.vmap(ft.vmap(f, axis_name="j"), axis_name="i")

    out = nest(lambda r: lax.all_gather(r, "i"))(x)
    np.testing.assert_allclose(out, np.broadcast_to(x.transpose(1, 0, 2), (2, 3, 2, 4)))
    y = x.reshape(2, 3, 2, 2)
    out = nest(lambda r: lax.all_gather(r, "i", axis=1, tiled=True))(y)
    exp = np.concatenate([y[0], y[1]], axis=2)
    np.testing.assert_allclose(out, np.broadcast_to(exp, (2, 3, 2, 4)))
    out = nest(lambda r: lax.pmax(r, "i") + 100 * lax.axis_index("i") + 10 * lax.axis_index("j"))(x)
    ij = 100 * np.arange(2)[:, None, None] + 10 * np.arange(3)[None, :, None]
    np.testing.assert_allclose(out, x.max(0) + ij)
    ft.check_grads(nest(lambda r: lax.all_gather(r, "i") * r), (x,), order=2)


def test_psum_scatter_and_ppermute() -> None:
    x = np.arange(12.0).reshape(3, 4) / 10
    # a partial permutation: example 0 receives nothing
    out = named(lambda r: lax.ppermute(r, "i", [(0, 1), (1, 2)]))(x)
    np.testing.assert_allclose(out, np.stack([np.zeros(4), x[0], x[1]]))
    ft.check_grads(named(lambda r: r * lax.ppermute(r, "i", [(0, 1), (1, 2)])), (x,), order=2)
    out = named(lambda r: lax.psum_scatter(r, "i", scatter_dimension=1, tiled=True))(
        np.arange(18.0).reshape(3, 1, 6)
    )
    total = np.arange(18.0).reshape(3, 1, 6).sum(0)
    np.testing.assert_allclose(out, np.stack([total[:, 2 * k : 2 * k + 2] for k in range(3)]))
    ints = named(lambda r: lax.psum_scatter(r, "i"))(np.arange(9).reshape(3, 3))
    assert ints.dtype == np.int64 and ints.tolist() == [9, 12, 15]
    with pytest.raises(ValueError, match="ppermute: expected indices in \\[0, 3\\)"):
        named(lambda r: lax.ppermute(r, "i", [(0, 3)]))(x)
    with pytest.raises(ValueError, match="ppermute: expected each source and each destination"):
        named(lambda r: lax.ppermute(r, "i", [(0, 1), (2, 1)]))(x)
    with pytest.raises(TypeError, match="ppermute: expected perm to be a sequence of"):
        named(lambda r: lax.ppermute(r, "i", [0, 1]))(x)
    with pytest.raises(ValueError, match="psum_scatter: expected dimension 0 of the operand"):
        named(lambda r: lax.psum_scatter(r, "i"))(x)
    with pytest.raises(ValueError, match="psum_scatter: expected dimension 0.*multiple of"):
        named(lambda r: lax.psum_scatter(r, "i", tiled=True))(np.ones((3, 4, 2)))
    with pytest.raises(NameError, match="ppermute: unbound axis name: i"):
        lax.ppermute(x, "i", [(0, 1)])
