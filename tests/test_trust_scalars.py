"""Python scalars and NumPy scalars as operands, and errors that explain themselves.

* Item 4: a Python scalar raised to a traced power (``0.9 ** t``) under jit, grad and
  make_jaxpr; the derivatives of ``x ** y`` at ``x = 0`` (every order finite where the
  limit is) and of ``0 ** y``.
* Item 11: lists passed where an array is expected (a list is a pytree), PyTorch
  habits on traced values (``.detach()``, ``.backward()``...), and messages that speak
  of "a traced value under jit of 'f'" instead of internal tracer classes.
* The operator table: every binary operator and every binary ``functrace.numpy``
  function, with operands of every kind (Python int/float/bool/complex, NumPy scalars,
  0-d arrays, arrays) on each side, traced under jit, vmap and grad, against NumPy's
  result dtype and value (NumPy 2 promotion: Python scalars are weak) and, under jit,
  the eager result's type (a Python scalar where eager Python gives one).
"""

from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import errors

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INTERNAL = re.compile(r"StagingTracer|JVPTracer|BatchTracer|\bTrace\b|Tracer\b")


# ---------------------------------------------------------------------------
# Item 4: Python scalar bases, and power's derivatives at 0
# ---------------------------------------------------------------------------


def test_item4_python_scalar_base_power() -> None:
    assert ft.jit(lambda t: 0.9**t)(1.0) == 0.9
    assert type(ft.jit(lambda t: 0.9**t)(1.0)) is float  # Python ** on Python floats
    np.testing.assert_allclose(ft.grad(lambda x: 2.0**x)(3.0), 8.0 * np.log(2.0))
    assert "pow" in str(ft.make_jaxpr(lambda x: 2.0**x)(3.0))
    n = ft.jit(lambda n: 2**n)(3)
    assert n == 8 and type(n) is int
    np.testing.assert_array_equal(ft.jit(lambda n: 2**n)(np.arange(4)), 2 ** np.arange(4))
    # weak: a Python float base keeps a float32 exponent float32
    assert ft.jit(lambda t: 0.5**t)(np.float32(2.0)).dtype == np.float32
    assert ft.grad(lambda t: fnp.sum(0.5**t))(np.ones(2, np.float32)).dtype == np.float32
    np.testing.assert_allclose(
        ft.vmap(lambda t: 3.0**t)(np.array([0.0, 1.0, 2.0])), [1.0, 3.0, 9.0]
    )


def test_item4_integer_base_negative_traced_exponent_is_numpys_error() -> None:
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(np.int64(2), np.int64(-1))  # NumPy's own rule, and functrace's:
    with pytest.raises(ValueError, match="pow: .*negative exponent -1"):
        ft.jit(lambda n: 2**n)(-1)
    with pytest.raises(ValueError, match="negative exponent -2"):
        ft.vmap(lambda n: 3**n)(np.array([1, -2]))
    assert ft.jit(lambda x: x**-1)(2) == 0.5  # Python: an int to a negative power is a float


POWER_AT_ZERO = {
    # f, derivatives of order 1, 2, 3 at 0
    "x**0.0": (lambda x: x**0.0, (0.0, 0.0, 0.0)),
    "power(x, 0.0)": (lambda x: fnp.power(x, 0.0), (0.0, 0.0, 0.0)),
    "x**1.0": (lambda x: x**1.0, (1.0, 0.0, 0.0)),
    "x**2.0": (lambda x: x**2.0, (0.0, 2.0, 0.0)),
    "x**3.0": (lambda x: x**3.0, (0.0, 0.0, 6.0)),
    "power(x, array 2.0)": (lambda x: fnp.power(x, np.array(2.0)), (0.0, 2.0, 0.0)),
}


@pytest.mark.parametrize("name", sorted(POWER_AT_ZERO))
def test_item4_power_derivatives_at_zero_are_finite(name) -> None:
    f, expected = POWER_AT_ZERO[name]
    d = f
    for order, want in enumerate(expected, 1):
        d = ft.grad(d)
        got = d(0.0)
        assert got == want, f"{name}: derivative of order {order} at 0 is {got}, not {want}"
    # the same through jit, forward mode and float32
    assert ft.jit(ft.grad(ft.grad(f)))(0.0) == expected[1]
    fwd = ft.jvp(lambda x: ft.jvp(f, (x,), (1.0,))[1], (0.0,), (1.0,))[1]
    assert fwd == expected[1]
    assert ft.grad(ft.grad(f))(np.float32(0.0)).dtype == np.float32
    ft.check_grads(f, (0.0,), order=2, modes=("fwd", "rev"))
    ft.check_grads(f, (0.7,), order=2, modes=("fwd", "rev"))


def test_item4_zero_base_power_follows_the_limits() -> None:
    # d/dy 0**y = 0 for y > 0 (0**y is 0 there), and 0 at y = 0 by convention (JAX's);
    # for y < 0, 0**y = inf and the derivative is NaN (no finite limit).
    for f in (lambda y: 0.0**y, lambda y: fnp.power(0.0, y), lambda y: fnp.power(np.zeros(()), y)):
        for y in (2.0, 0.5, 1e-3, 0.0):
            assert ft.grad(f)(y) == 0.0
            assert ft.grad(ft.grad(f))(y) == 0.0
            assert ft.jit(ft.grad(f))(y) == 0.0
        assert np.isnan(ft.grad(f)(-1.0))
        ft.check_grads(f, (1.5,), order=2, modes=("fwd", "rev"))
    # d/dx and d/dy of x**y together, at x = 0 with y >= 1
    g = ft.grad(lambda x, y: x**y, argnums=(0, 1))(0.0, 2.0)
    assert g == (0.0, 0.0)
    ft.check_grads(lambda x, y: x**y, (0.8, 1.7), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------
# Item 11: lists, PyTorch habits, messages about traced values
# ---------------------------------------------------------------------------


def test_item11_list_argument_is_a_pytree() -> None:
    # as in JAX: a list argument is a list of separate scalars, and grad returns a list
    g = ft.grad(lambda xs: sum(x**2 for x in xs))([1.0, 2.0])
    assert type(g) is list and g == [2.0, 4.0]
    assert ft.jit(lambda xs: xs[0] * xs[1])([2.0, 3.0]) == 6.0
    np.testing.assert_array_equal(ft.vmap(lambda xs: xs[0] + xs[1])([np.ones(2), np.ones(2)]), 2)
    # functrace.numpy functions take lists of values as arrays (NumPy's convention)
    assert ft.grad(lambda xs: fnp.sum(fnp.asarray(xs) ** 2))([1.0, 2.0]) == [2.0, 4.0]


@pytest.mark.parametrize(
    "transform",
    [ft.grad, ft.jit, ft.vmap, lambda f: ft.make_jaxpr(f), lambda f: ft.jacrev(f)],
    ids=["grad", "jit", "vmap", "make_jaxpr", "jacrev"],
)
def test_item11_operator_on_a_list_argument_explains_pytrees(transform) -> None:
    def loss(x):
        return fnp.sum(x**2)

    arg = [np.ones(2), np.ones(2)] if transform is ft.vmap else [1.0, 2.0]  # vmap: each leaf
    with pytest.raises(TypeError) as info:
        transform(loss)(arg)
    msg = str(info.value)
    assert "loss" in msg and "`x`" in msg and "list" in msg and "pytree" in msg, msg
    assert "np.asarray" in msg, msg
    assert not INTERNAL.search(msg), msg


def test_item11_list_method_on_a_list_argument_explains_pytrees() -> None:
    def loss(w, x):
        return (x * 2.0).sum() + w

    with pytest.raises(TypeError, match=r"(?s)loss.*`x`.*pytree.*np\.asarray"):
        ft.grad(loss)(1.0, [1.0, 2.0])

    def total(x):
        return x.sum()

    with pytest.raises(AttributeError, match=r"(?s)total.*`x`.*pytree.*np\.asarray"):
        ft.jit(total)([1.0, 2.0])


TORCH_HABITS = {
    "detach": (lambda x: x.detach(), "stop_gradient"),
    "requires_grad_": (lambda x: x.requires_grad_(), "ft.grad"),
    "requires_grad": (lambda x: x.requires_grad, "ft.grad"),
    "backward": (lambda x: x.backward(), "ft.grad"),
    "grad": (lambda x: x.grad, "ft.grad"),
    "numpy": (lambda x: x.numpy(), "return it"),
    "cpu": (lambda x: x.cpu(), "no devices"),
    "zero_": (lambda x: x.zero_(), "immutable"),
    "register_hook": (lambda x: x.register_hook(print), "grad_hook"),
}


@pytest.mark.parametrize("habit", sorted(TORCH_HABITS))
@pytest.mark.parametrize(
    "transform",
    [ft.grad, ft.jit, ft.vmap],
    ids=["grad", "jit", "vmap"],
)
def test_item11_pytorch_habits_on_traced_values(habit, transform) -> None:
    use, hint = TORCH_HABITS[habit]

    def loss(x):
        use(x)
        return fnp.sum(x)

    with pytest.raises(AttributeError) as info:
        transform(loss)(np.ones(3))
    msg = str(info.value)
    assert hint in msg and "loss" in msg and habit in msg, msg
    assert not INTERNAL.search(msg), msg


def test_item11_unknown_attribute_names_the_transform() -> None:
    with pytest.raises(AttributeError, match=r"traced value .* under jit of 'f'") as info:

        def f(x):
            return x.no_such_attribute

        ft.jit(f)(1.0)
    assert not INTERNAL.search(str(info.value))
    # real attributes and hasattr keep working
    assert ft.jit(lambda x: hasattr(x, "nope") or x.ndim)(np.ones(2)) == 1


def test_item11_tracer_repr_says_what_it_is() -> None:
    seen = []

    def loss(x):
        seen.append(repr(x))
        return fnp.sum(x)

    ft.jit(loss)(np.ones(3))
    ft.grad(loss)(np.ones(3))
    ft.vmap(loss)(np.ones((2, 3)))
    assert seen[0].startswith("Traced<f64[3]> under jit of 'loss'"), seen[0]
    assert "under grad of 'loss'" in seen[1], seen[1]
    assert seen[2].startswith("Traced<f64[3]> under vmap of 'loss'"), seen[2]
    assert not any(INTERNAL.search(s) for s in seen), seen


ERRORS_ABOUT_TRACERS = {
    "reshape_traced_shape": (lambda x: fnp.reshape(x, (x.shape[0], fnp.sum(x))), ft.jit),
    "scan_not_a_pair": (lambda x: ft.lax.scan(lambda c, y: c + y, 0.0, x), ft.jit),
    "has_aux_not_a_pair": (
        lambda x: ft.grad(lambda y: fnp.sum(y), has_aux=True)(x),
        lambda f: f,
    ),
    "slice_traced_bound": (lambda x: x[: fnp.sum(x).astype(int)], ft.jit),
    "hash": (lambda x: {x: 1}, ft.grad),
}


@pytest.mark.parametrize("name", sorted(ERRORS_ABOUT_TRACERS))
def test_item11_messages_do_not_name_tracer_classes(name) -> None:
    f, transform = ERRORS_ABOUT_TRACERS[name]
    with pytest.raises((TypeError, ValueError, errors.ConcretizationError)) as info:
        transform(f)(np.ones(3))
    assert not INTERNAL.search(str(info.value)), str(info.value)


# ---------------------------------------------------------------------------
# The operator table
# ---------------------------------------------------------------------------

KINDS: dict[str, object] = {
    "py_int": 3,
    "py_float": 2.5,
    "py_bool": True,
    "py_complex": 1.5 + 0.5j,
    "np_int32": np.int32(2),
    "np_int64": np.int64(5),
    "np_float32": np.float32(1.25),
    "np_float64": np.float64(1.75),
    "array_0d": np.array(1.5, np.float32),
    "array_f64": np.array([1.5, 2.25, 0.75]),
    "array_i32": np.array([1, 2, 3], np.int32),
}
KIND_NAMES = list(KINDS)
FLOAT_KINDS = {"py_float", "np_float32", "np_float64", "array_0d", "array_f64"}

OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "@": operator.matmul,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}


def _binary_fnp_names() -> list[str]:
    """Every functrace.numpy name that is a binary NumPy ufunc (aliases included)."""
    return sorted(
        n
        for n in dir(fnp)
        if isinstance(getattr(np, n, None), np.ufunc)
        and getattr(np, n).nin == 2
        and getattr(np, n).nout == 1
        and callable(getattr(fnp, n))
    )


FNP_BINARY = _binary_fnp_names()
OPS: dict[str, tuple] = {
    **{op: (f, f) for op, f in OPERATORS.items()},
    **{f"fnp.{n}": (getattr(fnp, n), getattr(np, n)) for n in FNP_BINARY},
}
DIFFERENTIABLE = {"+", "-", "*", "/", "%", "**", "@"} | {
    f"fnp.{n}"
    for n in (
        "add subtract multiply divide true_divide power pow float_power maximum minimum "
        "fmax fmin arctan2 atan2 hypot copysign logaddexp logaddexp2 fmod mod remainder "
        "matmul"
    ).split()
}


def test_the_table_covers_every_binary_function() -> None:
    expected = (
        "add subtract multiply divide true_divide floor_divide mod remainder fmod power "
        "float_power maximum minimum fmax fmin arctan2 hypot copysign logaddexp logaddexp2 "
        "heaviside equal not_equal less less_equal greater greater_equal logical_and "
        "logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift "
        "matmul"
    ).split()
    assert set(expected) <= set(FNP_BINARY), set(expected) - set(FNP_BINARY)


def _pairs(i: int) -> list[tuple[str, str]]:
    """Two rotations of the kinds: every kind on each side, different partners per op."""
    n = len(KIND_NAMES)
    return [(KIND_NAMES[j], KIND_NAMES[(j + i + k) % n]) for k in (0, 5) for j in range(n)]


def _run(f, *args):
    try:
        return f(*args), None
    except Exception as e:  # noqa: BLE001 - the test compares exceptions too
        return None, e


def _kind(x):
    """Python scalar types exactly; NumPy 0-d values as one kind; arrays by ndim."""
    if type(x) in (bool, int, float, complex):
        return type(x).__name__
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return "numpy 0-d"
    return f"array ndim {np.ndim(x)}"


def _same(what: str, got, exp, exc, exp_exc, check_kind: bool) -> None:
    if exp_exc is not None:
        assert exc is not None, f"{what}: NumPy/Python raise {exp_exc!r}, functrace gave {got!r}"
        base = next(
            c
            for c in (ZeroDivisionError, TypeError, ValueError, OverflowError, Exception)
            if isinstance(exp_exc, c)
        )
        if "@" in what:  # Python refuses @ on scalars (TypeError), NumPy on 0-d (ValueError)
            base = (TypeError, ValueError)
        assert isinstance(exc, base) and not isinstance(exc, AttributeError), (
            f"{what}: expected {type(exp_exc).__name__} like NumPy ({exp_exc}), got "
            f"{type(exc).__name__}: {exc}"
        )
        assert not INTERNAL.search(str(exc)), f"{what}: {exc}"
        return
    assert exc is None, f"{what}: NumPy gives {exp!r}, functrace raised {type(exc).__name__}: {exc}"
    e_dt, g_dt = np.asarray(exp).dtype, np.asarray(got).dtype
    assert g_dt == e_dt, f"{what}: dtype {g_dt}, NumPy's is {e_dt} ({got!r} vs {exp!r})"
    assert np.shape(got) == np.shape(exp), f"{what}: shape {np.shape(got)} vs {np.shape(exp)}"
    rtol = 1e-6 if e_dt in (np.float32, np.complex64) else 1e-12
    if e_dt.kind in "fc":
        np.testing.assert_allclose(got, exp, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, exp, err_msg=what)
    if check_kind and not what.endswith(f"py_complex {what.split()[2]} np_float64"):
        # (Python's complex operators take np.float64, a float subclass, as a float and
        # give a Python complex; functrace gives NumPy's complex128 scalar there.)
        assert _kind(got) == _kind(exp), f"{what}: a {_kind(got)}, eager gives a {_kind(exp)}"


def _jit_cases(op_name: str, i: int, pairs):
    """Which operands jit traces: rotate left/right/both; arrays compile a kernel, so
    results that are not 0-d are jitted once per operator and never for functions."""
    out = []
    array_done = op_name.startswith("fnp.")
    for j, (ka, kb) in enumerate(pairs):
        mode = ("left", "right", "both")[(i + j) % 3]
        a, b = KINDS[ka], KINDS[kb]
        if np.ndim(a) or np.ndim(b):
            if array_done:
                continue
            array_done = True
        out.append((ka, kb, mode))
    return out


def _with(f, const, left: bool):
    """``f`` as a function of one operand, the other fixed to ``const``."""
    return (lambda x: f(x, const)) if left else (lambda y: f(const, y))


def _check_grad(what: str, f, ref, a, b, left: bool, exp) -> None:
    """value_and_grad against NumPy's value and central differences in float64."""
    x, const = (a, b) if left else (b, a)
    res, exc = _run(ft.value_and_grad(lambda x: fnp.sum(_with(f, const, left)(x))), x)
    assert exc is None, f"{what}: {type(exc).__name__}: {exc}"
    val, grad = res
    np.testing.assert_allclose(val, np.sum(exp), rtol=1e-6, err_msg=what)
    assert np.asarray(grad).dtype == np.asarray(x).dtype, f"{what}: grad dtype"
    at = _with(ref, const, left)
    x64 = np.asarray(x, np.float64)
    h = 1e-6 * np.maximum(1.0, np.abs(x64))
    num = []
    for e in np.eye(x64.size).reshape((x64.size, *x64.shape)):
        step = np.sum(h * e)
        hi, mid, lo = (float(np.sum(at(x64 + s * h * e))) for s in (1, 0, -1))
        if not np.isclose((hi - mid) / step, (mid - lo) / step, rtol=1e-3, atol=1e-3):
            return  # a kink (x % x): only the value and the dtype are checked
        num.append((hi - lo) / (2 * step))
    f32 = np.float32 in (np.asarray(x).dtype, np.asarray(exp).dtype)
    tol = 1e-3 if f32 else 1e-5
    np.testing.assert_allclose(grad, np.reshape(num, x64.shape), rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("op_name", list(OPS))
def test_python_scalar_operator_table(op_name) -> None:
    f, ref = OPS[op_name]
    i = list(OPS).index(op_name)
    pairs = _pairs(i)
    for ka, kb in pairs:  # eager: the functrace function on plain values is NumPy's
        a, b = KINDS[ka], KINDS[kb]
        exp, exp_exc = _run(ref, a, b)
        got, exc = _run(f, a, b)
        _same(f"eager {ka} {op_name} {kb}", got, exp, exc, exp_exc, True)

    for ka, kb, mode in _jit_cases(op_name, i, pairs):
        a, b = KINDS[ka], KINDS[kb]
        exp, exp_exc = _run(f, a, b)  # the eager call: Python's or NumPy's result
        if mode == "both":
            got, exc = _run(ft.jit(f), a, b)
        else:
            got, exc = _run(
                ft.jit(_with(f, b if mode == "left" else a, mode == "left")),
                a if mode == "left" else b,
            )
        _same(f"jit({mode}) {ka} {op_name} {kb}", got, exp, exc, exp_exc, True)

    for j, (ka, kb) in enumerate(pairs):  # vmap over a stack of two of the traced kind
        a, b = KINDS[ka], KINDS[kb]
        left = (i + j) % 2 == 0
        x, const = (a, b) if left else (b, a)
        xs = np.stack([np.asarray(x)] * 2)
        per_example = [_run(_with(ref, const, left), x_i) for x_i in xs]
        exp_exc = next((e for _, e in per_example if e is not None), None)
        exp = None if exp_exc else np.stack([np.asarray(r) for r, _ in per_example])
        got, exc = _run(ft.vmap(_with(f, const, left)), xs)
        what = f"vmap({'left' if left else 'right'}) {ka} {op_name} {kb}"
        _same(what, got, exp, exc, exp_exc, False)

    if op_name not in DIFFERENTIABLE:
        return
    for j, (ka, kb) in enumerate(pairs):  # grad with respect to a float operand
        sides = [s for s, k in ((True, ka), (False, kb)) if k in FLOAT_KINDS]
        if not sides:
            continue
        left = sides[(i + j) % len(sides)]
        a, b = KINDS[ka], KINDS[kb]
        exp, exp_exc = _run(ref, a, b)
        if exp_exc is None and np.asarray(exp).dtype.kind == "f":
            what = f"grad({'left' if left else 'right'}) {ka} {op_name} {kb}"
            _check_grad(what, f, ref, a, b, left, exp)


CHAINS = {
    "mul_then_f32": lambda x: (x * 2.0) * np.float32(1.5),
    "pow_then_f32": lambda x: (x**2.5 + 1.0) * np.ones(2, np.float32),
    "rpow_then_f32": lambda x: (2.0**x) * np.float32(1.5),
    "int_then_f32": lambda x: (x + 1) * np.float32(0.5),
    "cast_then_f16": lambda x: (x / 3) - np.float16(0.5),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("x", [2.0, 3], ids=["py_float", "py_int"])
def test_python_scalars_stay_weak_through_chains(name, x) -> None:
    """A Python-scalar operand stays weak after Python operators, so a later NumPy
    float32 operand sets the dtype, eagerly, under jit and in grad's primal values."""
    f = CHAINS[name]
    expected = f(x)
    assert ft.jit(f)(x).dtype == expected.dtype
    if isinstance(x, float):
        val, _ = ft.value_and_grad(lambda x: fnp.sum(f(x)))(x)
        assert np.asarray(val).dtype == expected.dtype
        np.testing.assert_allclose(val, np.sum(expected), rtol=1e-3)
