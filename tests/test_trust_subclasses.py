"""Trust issue, item 6: ndarray subclasses and unusual layouts at every entry point.

The rule (``core.plain_array``, documented in ``src/functrace/README.md``):
``numpy.matrix`` and ``numpy.ma.MaskedArray`` (and subclasses overriding
``__array_ufunc__``/``__array_function__``) are rejected with a TypeError naming
the transform, the function and the argument; other subclasses are viewed as
``numpy.ndarray``; non-native byte order is converted, unaligned memory copied.
Non-contiguous, negative-stride, broadcast and read-only arrays are used as they
are. Never a crash, never a shape different from the eager result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


def red(x: Any) -> Any:
    return fnp.max(x, axis=1) + 1.0


def loss(x: Any) -> Any:
    return fnp.sum(x * x) + fnp.sum(fnp.max(x, axis=1))


def _ones_like(x: Any) -> np.ndarray:
    return np.ones(np.shape(x))


ENTRY_POINTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "jit": ("jit of 'red'", lambda a: ft.jit(red)(a)),
    "jit_kw": ("jit of 'red'", lambda a: ft.jit(red)(x=a)),
    "jit(grad)": ("jit of 'loss'", lambda a: ft.jit(ft.grad(loss))(a)),
    "grad": ("grad of 'loss'", lambda a: ft.grad(loss)(a)),
    "value_and_grad": ("grad of 'loss'", lambda a: ft.value_and_grad(loss)(a)),
    "grad_nondiff": (
        "grad of '<lambda>'",
        lambda a: ft.grad(lambda w, x: fnp.sum(w * x), argnums=0)(np.ones((2, 2)), a),
    ),
    "vjp": ("vjp of 'red'", lambda a: ft.vjp(red, a)),
    "jvp": ("jvp of 'red'", lambda a: ft.jvp(red, (a,), (_ones_like(a),))),
    "linearize": ("linearize of 'red'", lambda a: ft.linearize(red, a)),
    "jacfwd": ("jacfwd of 'red'", lambda a: ft.jacfwd(red)(a)),
    "jacrev": ("jacrev of 'red'", lambda a: ft.jacrev(red)(a)),
    "hessian": ("jacfwd of", lambda a: ft.hessian(loss)(a)),
    "vmap": ("vmap of '<lambda>'", lambda a: ft.vmap(lambda r: fnp.sum(r * 2.0))(a)),
    "make_jaxpr": ("make_jaxpr of 'red'", lambda a: ft.make_jaxpr(red)(a)),
    "eval_shape": ("eval_shape of 'red'", lambda a: ft.eval_shape(red, a)),
    "pytree_leaf": ("grad of '<lambda>'", lambda a: ft.grad(lambda p: loss(p["w"]))({"w": a})),
}


def _matrix() -> Any:
    return np.matrix([[1.0, 2.0], [3.0, 4.0]])


def _masked() -> Any:
    return np.ma.MaskedArray([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
@pytest.mark.parametrize(
    "make, cls_text", [(_matrix, "numpy.matrix"), (_masked, "MaskedArray")], ids=["matrix", "ma"]
)
def test_item6_matrix_and_masked_rejected_at_every_entry_point(
    name: str, make: Callable[[], Any], cls_text: str
) -> None:
    where, call = ENTRY_POINTS[name]
    a = make()
    with pytest.raises(TypeError) as info:
        call(a)
    msg = str(info.value)
    assert where in msg and cls_text in msg and "argument" in msg, msg
    assert "numpy.asarray" in msg or "numpy.ma.filled" in msg


def test_item6_the_reported_segfault_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"jit of '<lambda>'.*argument `x`.*numpy\.matrix"):
        ft.jit(lambda x: fnp.max(x, axis=1) + 1.0)(np.matrix([[1.0, 2.0], [3.0, 4.0]]))
    # and the function keeps working for plain arrays
    out = ft.jit(lambda x: fnp.max(x, axis=1) + 1.0)(np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(out, [3.0, 5.0])


def test_item6_tangents_and_cotangents_follow_the_rule() -> None:
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match=r"jvp: .*tangent leaf 0.*numpy\.matrix"):
        ft.jvp(red, (x,), (np.asmatrix(np.ones((2, 2))),))
    _, pullback = ft.vjp(lambda v: v * 2.0, x)
    with pytest.raises(TypeError, match=r"vjp: .*cotangent.*MaskedArray"):
        pullback(np.ma.MaskedArray(np.ones((2, 2)), mask=[[1, 0], [0, 0]]))
    _, f_jvp = ft.linearize(red, x)
    with pytest.raises(TypeError, match="numpy.matrix"):
        f_jvp(np.asmatrix(np.ones((2, 2))))
    # a plain subclass is viewed: the same numbers as with an ndarray
    (g,) = pullback(np.ones((2, 2)).view(Tagged))
    assert type(g) is ft.Array  # a result, not the subclass
    np.testing.assert_array_equal(g, np.full((2, 2), 2.0))


def test_item6_closed_over_matrix_is_rejected_under_transforms() -> None:
    m = _matrix()
    x = np.array([[1.0, 0.5], [0.0, 2.0]])

    def f(v: Any) -> Any:
        return fnp.sum(v * m)

    for call in (
        lambda: ft.jit(f)(x),
        lambda: ft.grad(f)(x),
        lambda: ft.vmap(f)(x[None]),
        lambda: ft.jvp(f, (x,), (x,)),
    ):
        with pytest.raises(TypeError, match=r"numpy\.matrix.*closes over|closes over.*matrix"):
            call()


class Tagged(np.ndarray):
    """A user subclass adding an attribute, not overriding NumPy's semantics."""

    tag = "t"


class Overriding(np.ndarray):
    """A subclass changing what NumPy's functions mean (like a units library)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        args = [np.asarray(i) for i in inputs]
        return getattr(ufunc, method)(*args, **kwargs)


def _subclass_inputs(tmp_path: Any) -> dict[str, np.ndarray]:
    base = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(3, 4))
    mm[...] = base
    return {"memmap": mm, "user": base.copy().view(Tagged), "base": base}


TRANSFORMS: dict[str, Callable[[Any], Any]] = {
    "jit": lambda a: ft.jit(red)(a),
    "jit(grad)": lambda a: ft.jit(ft.grad(loss))(a),
    "grad": lambda a: ft.grad(loss)(a),
    "vjp": lambda a: ft.vjp(red, a)[1](np.ones(np.shape(a)[0])),
    "jvp": lambda a: ft.jvp(red, (a,), (a,)),
    "vmap": lambda a: ft.vmap(red)(a[None]),
    "jacrev": lambda a: ft.jacrev(red)(a),
}


@pytest.mark.parametrize("kind", ["memmap", "user"])
def test_item6_other_subclasses_are_viewed_as_ndarray(kind: str, tmp_path: Any) -> None:
    inputs = _subclass_inputs(tmp_path)
    a, base = inputs[kind], inputs["base"]
    assert type(a) is not np.ndarray
    for name, t in TRANSFORMS.items():
        got, expected = t(a), t(base)
        for g, e in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(expected)):
            assert type(g) is type(e), (name, type(g))
            assert np.shape(g) == np.shape(e), name
            np.testing.assert_array_equal(g, e, err_msg=name)


def test_item6_subclass_overriding_numpy_functions_is_rejected() -> None:
    a = np.ones((2, 3)).view(Overriding)
    for call in (lambda: ft.jit(red)(a), lambda: ft.grad(loss)(a), lambda: ft.vmap(red)(a)):
        with pytest.raises(TypeError, match=r"Overriding.*__array_ufunc__"):
            call()


def test_item6_functrace_numpy_on_plain_subclass_inputs_is_numpy() -> None:
    # Documented: without a transform, functrace.numpy calls NumPy, so a matrix gets
    # NumPy's own matrix result; only transforms apply the rule.
    m = _matrix()
    got = fnp.multiply(m, m)
    assert type(got) is np.matrix
    np.testing.assert_array_equal(got, np.multiply(m, m))


# ---------------------------------------------------------------------------
# Layouts under jit: each works correctly (or errors clearly)
# ---------------------------------------------------------------------------


def _unaligned(base: np.ndarray) -> np.ndarray:
    buf = np.zeros(base.nbytes + 1, np.uint8)
    out = buf[1:].view(base.dtype).reshape(base.shape)
    out[...] = base
    assert not out.flags.aligned
    return out


def _readonly(base: np.ndarray) -> np.ndarray:
    out = base.copy()
    out.flags.writeable = False
    return out


BASE = np.linspace(-2.0, 3.0, 24).reshape(4, 6)
LAYOUTS: dict[str, Callable[[], np.ndarray]] = {
    "non_contiguous": lambda: np.linspace(-2.0, 3.0, 48).reshape(4, 12)[:, ::2],
    "negative_stride": lambda: BASE[::-1, ::-1],
    "zero_stride": lambda: np.broadcast_to(np.linspace(-1.0, 1.0, 6), (4, 6)),
    "fortran": lambda: np.asfortranarray(BASE),
    "big_endian": lambda: BASE.astype(">f8"),
    "unaligned": lambda: _unaligned(BASE),
    "read_only": lambda: _readonly(BASE),
    "transposed": lambda: np.ascontiguousarray(BASE.T).T,
}


def fused(x: Any) -> Any:
    return fnp.max(x, axis=1) + fnp.sum(fnp.exp(x) * 2.0, axis=1)


def product(x: Any) -> Any:
    return fnp.tanh(x @ x.T) + 1.0


def rowscan(x: Any) -> Any:
    def step(c: Any, row: Any) -> Any:
        c = c * 0.5 + fnp.sin(row)
        return c, c * c

    c, ys = ft.lax.scan(step, fnp.zeros(x.shape[1]), x)
    return fnp.sum(c) + fnp.sum(ys)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_item6_layouts_under_jit_match_plain_arrays(layout: str) -> None:
    a = LAYOUTS[layout]()
    plain = np.array(a, dtype=np.float64)  # native, aligned, C-contiguous copy
    assert plain.tobytes() == np.ascontiguousarray(a).astype(np.float64).tobytes()
    for fn in (fused, product, rowscan, ft.grad(lambda v: fnp.sum(fused(v)))):
        f = ft.jit(fn)
        expected = f(plain)
        for _ in range(2):  # the second call takes the cached fast path
            got = f(a)
            assert got.dtype == expected.dtype and np.shape(got) == np.shape(expected)
            np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(f(plain), expected)  # plain calls unaffected
        eager = fn(plain)
        assert np.shape(eager) == np.shape(expected)
        np.testing.assert_allclose(expected, eager, rtol=1e-12, atol=1e-12)
    # the input itself is never modified (read-only and broadcast views included)
    np.testing.assert_array_equal(a, plain)


@pytest.mark.parametrize("layout", ["big_endian", "unaligned", "zero_stride", "read_only"])
def test_item6_layouts_under_other_transforms(layout: str) -> None:
    a = LAYOUTS[layout]()
    plain = np.array(a, dtype=np.float64)
    for name, t in TRANSFORMS.items():
        got, expected = t(a), t(plain)
        for g, e in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(expected)):
            assert np.asarray(g).dtype == np.asarray(e).dtype, name
            np.testing.assert_array_equal(g, e, err_msg=name)


def test_item6_errors_name_the_argument() -> None:
    m = _matrix()
    ok = np.ones((2, 2))
    with pytest.raises(TypeError, match=r"grad of '<lambda>'.*argument `p`\['w'\]"):
        ft.grad(lambda p, x: loss(p["w"] * x))({"w": m}, ok)
    with pytest.raises(TypeError, match=r"grad of '<lambda>'.*argument `x`.*matrix"):
        ft.grad(lambda p, x: loss(p * x))(ok, m)  # not differentiated: the same rule
    with pytest.raises(TypeError, match=r"jit of '<lambda>'.*argument `b`.*matrix"):
        ft.jit(lambda a, b: a + b)(ok, b=m)
    with pytest.raises(TypeError, match=r"make_jaxpr of '<lambda>'.*argument `y`.*matrix"):
        ft.make_jaxpr(lambda n, y: y * n, static_argnums=0)(2, m)
    with pytest.raises(TypeError, match=r"vmap of '<lambda>'.*argument `y`\[1\].*MaskedArray"):
        ft.vmap(lambda y: y[0] + y[1])((ok, _masked()))


def test_item6_disable_jit_applies_the_same_rule() -> None:
    f = ft.jit(red)
    traced = f.trace_count  # shared with the other jits of ``red``
    with ft.disable_jit():
        with pytest.raises(TypeError, match=r"jit of 'red'.*argument `x`.*numpy\.matrix"):
            f(_matrix())
        with pytest.raises(TypeError, match=r"argument `x`.*MaskedArray"):
            f(x=_masked())
        got = f(np.ones((2, 3)).view(Tagged))
        assert type(got) is ft.Array  # as jit's results
        np.testing.assert_array_equal(got, [2.0, 2.0])
        np.testing.assert_array_equal(f(x=BASE.astype(">f8")), red(BASE))
    assert f.trace_count == traced
