"""functrace.numpy.fft and lax.fft: values against NumPy for every function, norm,
length and axis; derivatives against JAX's recorded values, finite differences and
check_grads; vmap against a loop; jit against eager; errors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.test_util import check_grads

FFT = fnp.fft
NORMS = [None, "backward", "ortho", "forward"]

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# JAX 0.10.2 (jax_enable_x64) values of lax.fft's jvp and vjp, and of jax.grad of the
# real losses _loss_* below (written with jax.numpy.fft in place of functrace.numpy.fft;
# argnums (0, 1) for two): tests/fixtures/fft_jax.npz, arrays "<case>/x", "/tangent",
# "/jvp", "/cotangent", "/vjp" and "grad_<loss>/<i>".
_JAX = np.load(Path(__file__).parent / "fixtures" / "fft_jax.npz")
# case: (fft_type, fft_lengths)
JAX_FFT_CASES = {
    "FFT": ("fft", (3,)),
    "FFT2": ("fft", (2, 3)),
    "IFFT": ("ifft", (3,)),
    "IFFT2": ("ifft", (2, 3)),
    "RFFT4": ("rfft", (4,)),
    "RFFT5": ("rfft", (5,)),
    "RFFT2": ("rfft", (2, 4)),
    "IRFFT4": ("irfft", (4,)),
    "IRFFT5": ("irfft", (5,)),
    "IRFFT2": ("irfft", (2, 6)),
    "IRFFT1": ("irfft", (1,)),
}


def _case(name):
    kind, lengths = JAX_FFT_CASES[name]
    fields = ("x", "tangent", "jvp", "cotangent", "vjp")
    return (kind, lengths, *(_JAX[f"{name}/{f}"] for f in fields))


def _grads(name):
    n = sum(1 for k in _JAX.files if k.startswith(f"grad_{name}/"))
    return [_JAX[f"grad_{name}/{i}"] for i in range(n)]


def _inp(shape, k=0):
    """The inputs the JAX values in the fixture were recorded at."""
    n = int(np.prod(shape))
    return np.sin(np.arange(n) * 1.3 + 0.4 + k).reshape(shape) * 1.5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Values against NumPy (traced path: under jit and make_jaxpr)
# ---------------------------------------------------------------------------

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input(name, shape=(3, 4, 5), dtype=np.float64):
    rng = _rng(1)
    x = rng.normal(size=shape)
    if name in REAL_IN:
        return x.astype(dtype)
    z = x + 1j * rng.normal(size=shape)
    return z.astype(np.complex64 if dtype == np.float32 else np.complex128)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 3, 4, 5, 8])
@pytest.mark.parametrize("axis", [-1, -2, 0, 2])
def test_one_dimensional_matches_numpy(name, norm, n, axis):
    x = _input(name)
    want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    f = ft.jit(lambda a: getattr(FFT, name)(a, n=n, axis=axis, norm=norm))
    _close(f(x), want)
    # eager on Arrays: NumPy's values, as functrace.Array
    got = getattr(FFT, name)(fnp.asarray(x), n=n, axis=axis, norm=norm)
    assert type(got) is ft.Array
    _close(got, want)


N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
S_AXES = [
    (None, None),
    ((2, 6), None),
    ((5, 3), (0, -1)),
    (None, (-1, 0)),
    ((4, 2, 3), (2, 0, 1)),
    ((7,), (-2,)),
    ((1, 1), (-2, -1)),
]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s,axes", S_AXES)
def test_multi_dimensional_matches_numpy(name, norm, s, axes):
    if name.endswith("2"):
        axes = (-2, -1) if axes is None else axes
        if len(axes) != 2 or (s is not None and len(s) != 2):
            pytest.skip("two axes only")
    elif axes is None and s is not None:
        axes = tuple(range(3 - len(s), 3))  # NumPy 2's recommended spelling of the default
    x = _input(name)
    kw = {"s": s, "norm": norm} | ({} if axes is None else {"axes": axes})
    want = getattr(np.fft, name)(x, **kw)
    _close(ft.jit(lambda a: getattr(FFT, name)(a, **kw))(x), want)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_float32_results_keep_single_precision(name):
    x = _input(name, (2, 4), np.float32)
    want = getattr(np.fft, name)(x)
    got = ft.jit(getattr(FFT, name))(x)
    _close(got, want, tol=1e-4)


def test_integer_inputs_are_converted_as_numpy():
    x = np.arange(6).reshape(2, 3)
    for name in ("fft", "rfft", "fftn", "ihfft"):
        _close(ft.jit(getattr(FFT, name))(x), getattr(np.fft, name)(x))
    assert lax.fft(np.arange(4), "fft", (4,)).dtype == np.complex128  # JAX converts too
    assert lax.fft(np.arange(4), "rfft", (4,)).dtype == np.complex128


def test_freqs_and_shifts():
    for n in (1, 4, 5):
        for d in (1.0, 0.25):
            _close(FFT.fftfreq(n, d), np.fft.fftfreq(n, d))
            _close(FFT.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    assert type(FFT.fftfreq(4)) is ft.Array
    assert FFT.fftfreq(4, dtype=np.float32).dtype == np.float32
    assert FFT.rfftfreq(5, 2.0, dtype=np.float32).dtype == np.float32
    # a traced spacing: jit, and a derivative in d
    _close(ft.jit(lambda d: FFT.fftfreq(6, d))(0.5), np.fft.fftfreq(6, 0.5))
    g = ft.grad(lambda d: fnp.sum(FFT.rfftfreq(6, d)))(0.5)
    np.testing.assert_allclose(g, -np.sum(np.fft.rfftfreq(6)) / 0.25)
    x = np.arange(24.0).reshape(2, 3, 4)
    for axes in (None, 0, -1, (0, 2), (-2,)):
        for name in ("fftshift", "ifftshift"):
            want = getattr(np.fft, name)(x, axes=axes)
            _close(ft.jit(lambda a, f=getattr(FFT, name), ax=axes: f(a, axes=ax))(x), want)


def test_import_forms():
    import functrace.numpy.fft as m
    from functrace.numpy import fft

    assert fft is m is fnp.fft
    assert lax.FftType.IRFFT == 3 and lax.FftType["RFFT"] is lax.FftType.RFFT
    text = str(ft.make_jaxpr(lambda x: lax.fft(x, "rfft", (4,)))(np.ones(4)))
    assert "fft[fft_type=RFFT, fft_lengths=(4,)]" in text


def test_zero_lengths_give_empty_results():
    # JAX's values; NumPy raises on plain inputs
    out = ft.jit(FFT.fft)(np.zeros((2, 0)))
    assert out.shape == (2, 0) and out.dtype == np.complex128
    assert lax.fft(np.zeros((3, 2), complex), "fft", (3, 2)).shape == (3, 2)
    assert ft.jit(lambda a: FFT.fft(a, n=0))(np.ones(3)).shape == (0,)


# ---------------------------------------------------------------------------
# Derivatives: JAX's values, finite differences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(JAX_FFT_CASES))
def test_jvp_and_vjp_match_jax(case):
    kind, lengths, x, tangent, jvp_out, ct, vjp_out = _case(case)

    def f(a):
        return lax.fft(a, kind, lengths)

    y, t = ft.jvp(f, (x,), (tangent,))
    _close(t, np.array(jvp_out).astype(np.asarray(y).dtype))
    y, vjp_fn = ft.vjp(f, x)
    (g,) = vjp_fn(ct.astype(np.asarray(y).dtype))
    _close(g, np.array(vjp_out).astype(x.dtype))
    # the same under jit
    (gj,) = ft.jit(lambda a, c: ft.vjp(f, a)[1](c))(x, ct.astype(np.asarray(y).dtype))
    _close(gj, np.array(vjp_out).astype(x.dtype))


def _loss_rfft(x):
    y = FFT.rfft(x)
    return fnp.sum(fnp.sin(y.real) * y.imag + fnp.abs(y) ** 2 * 0.1)


def _loss_irfft(a, b, n):
    y = FFT.irfft(a + 1j * b, n=n)
    return fnp.sum(fnp.cos(y) * fnp.arange(n))


def _loss_fft(a, b):
    y = FFT.fft(a + 1j * b)
    return fnp.sum(fnp.abs(y) * fnp.arange(a.size) + y.real * y.imag)


def _loss_ifft2(a):
    y = FFT.ifft2(a)
    return fnp.sum(y.real**2 - fnp.sin(y.imag))


@pytest.mark.parametrize("n", [4, 5])
def test_grads_of_real_losses_match_jax(n):
    x, g = _grads(f"rfft{n}")
    _close(ft.grad(_loss_rfft)(np.array(x)), np.array(g))
    a, b, ga, gb = _grads(f"irfft{n}")
    got = ft.grad(_loss_irfft, argnums=(0, 1))(np.array(a), np.array(b), n)
    _close(got[0], np.array(ga))
    _close(got[1], np.array(gb))


def test_grads_of_complex_transforms_match_jax():
    a, b, ga, gb = _grads("fft5")
    got = ft.grad(_loss_fft, argnums=(0, 1))(np.array(a), np.array(b))
    _close(got[0], np.array(ga))
    _close(got[1], np.array(gb))
    a, g = _grads("ifft2")
    _close(ft.grad(_loss_ifft2)(np.array(a)), np.array(g))
    _close(ft.jit(ft.grad(_loss_ifft2))(np.array(a)), np.array(g))


LAX_CASES = [
    ("fft", (2, 3), (3,)),
    ("fft", (2, 3), (2, 3)),
    ("ifft", (3, 4), (4,)),
    ("ifft", (2, 3), (2, 3)),
    ("rfft", (2, 4), (4,)),
    ("rfft", (2, 5), (5,)),
    ("rfft", (3, 4), (3, 4)),
    ("irfft", (2, 3), (4,)),
    ("irfft", (2, 3), (5,)),
    ("irfft", (2, 3), (2, 4)),
    ("irfft", (1,), (1,)),
    ("irfft", (2,), (2,)),
]


@pytest.mark.parametrize("kind,shape,lengths", LAX_CASES)
def test_lax_fft_check_grads(kind, shape, lengths):
    rng = _rng(3)
    x, y = rng.normal(size=shape), rng.normal(size=shape)
    w = rng.normal(size=2)

    def f(x, y):
        inp = x if kind == "rfft" else lax.complex(x, y)
        out = lax.fft(inp, kind, lengths)
        # a real, nonlinear function of both parts (order 2 sees the second derivative)
        if out.dtype.kind == "c":
            return fnp.sin(out.real * w[0]) + out.imag * out.real * w[1]
        return fnp.sin(out * w[0]) * out

    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: FFT.rfft(x, n=6, norm="ortho"),
        lambda x: FFT.irfft(x, n=7, axis=0),
        lambda x: FFT.hfft(x, norm="forward"),
        lambda x: FFT.ihfft(x, n=3),
        lambda x: FFT.fft2(x, s=(4, 2)),
        lambda x: FFT.irfftn(x, axes=(1, 0)),
        lambda x: FFT.rfftn(x, s=(3, 3), axes=(0, 1), norm="forward"),
    ],
)
def test_numpy_fft_check_grads(fn):
    x = _rng(4).normal(size=(3, 4))

    def f(x):
        y = fn(x)
        return fnp.cos(y.real) + y.imag**2 if fnp.iscomplexobj(y) else fnp.cos(y)

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_transposes_against_finite_differences():
    # <ct, J v> == <J^T ct, v> for the real-linear maps, complex parts included
    rng = _rng(5)
    for kind, shape, lengths in LAX_CASES:
        cin = kind != "rfft"
        x = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cin else 0)
        v = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cin else 0)

        def f(a, kind=kind, lengths=lengths):
            return lax.fft(a, kind, lengths)

        y, vjp_fn = ft.vjp(f, x)
        y = np.asarray(y)
        ct = rng.normal(size=y.shape) + (
            1j * rng.normal(size=y.shape) if y.dtype.kind == "c" else 0
        )
        (g,) = vjp_fn(ct.astype(y.dtype))
        jv = (np.asarray(f(x + 1e-6 * v)) - np.asarray(f(x - 1e-6 * v))) / 2e-6
        # JAX's convention: the pairing is the real part of sum(ct * t) (no conjugate)
        lhs = np.sum(np.real(ct * jv))
        rhs = np.sum(np.real(np.asarray(g) * v))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-6, err_msg=f"{kind} {shape} {lengths}")


# ---------------------------------------------------------------------------
# vmap, jit
# ---------------------------------------------------------------------------

VMAP_FNS = {
    "lax_fft": lambda a: lax.fft(a, "fft", (4,)),
    "lax_irfft": lambda a: lax.fft(a, "irfft", (6,)),
    "fft_axis0": lambda a: FFT.fft(a, n=3, axis=0),
    "rfft2": lambda a: FFT.rfft2(a.real),
    "irfftn": lambda a: FFT.irfftn(a, s=(2, 5)),
    "ifft_ortho": lambda a: FFT.ifft(a, norm="ortho"),
    "fftshift": lambda a: FFT.fftshift(a, axes=0),
}


@pytest.mark.parametrize("name", sorted(VMAP_FNS))
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_matches_loop(name, in_axis):
    fn = VMAP_FNS[name]
    rng = _rng(6)
    shape = (3, 4)  # lax_irfft: 4 == 6 // 2 + 1
    xs = rng.normal(size=(5, *shape)) + 1j * rng.normal(size=(5, *shape))
    want = np.stack([np.asarray(fn(x)) for x in xs])
    got = ft.vmap(fn, in_axes=in_axis)(np.moveaxis(xs, 0, in_axis))
    _close(got, want)
    _close(ft.jit(ft.vmap(fn, in_axes=in_axis))(np.moveaxis(xs, 0, in_axis)), want)


def test_vmap_of_grad_matches_loop():
    xs = _rng(7).normal(size=(4, 6))
    want = np.stack([np.asarray(ft.grad(_loss_rfft)(x)) for x in xs])
    _close(ft.vmap(ft.grad(_loss_rfft))(xs), want)


@pytest.mark.parametrize("name", sorted(VMAP_FNS))
def test_jit_equals_eager(name):
    fn = VMAP_FNS[name]
    x = _rng(8).normal(size=(3, 4)) + 1j * _rng(9).normal(size=(3, 4))
    _close(ft.jit(fn)(x), fn(x), tol=1e-12)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_lax_fft_errors():
    z = np.ones((2, 4), complex)
    with pytest.raises(ValueError, match=r"^fft: .*FFT.*fft_lengths \(3,\).*\(2, 4\)"):
        lax.fft(z, "fft", (3,))
    with pytest.raises(ValueError, match=r"^fft: .*RFFT.*fft_lengths \(5,\).*\(4,\)"):
        lax.fft(np.ones(4), "rfft", (5,))
    with pytest.raises(ValueError, match=r"^fft: .*IRFFT.*\(3,\).*got shape \(2, 4\)"):
        lax.fft(z, "irfft", (4,))
    with pytest.raises(ValueError, match=r"^fft: .*at least 3 dimensions"):
        lax.fft(z, "fft", (1, 2, 4))
    with pytest.raises(ValueError, match=r"^fft: expected a real operand for RFFT, got complex128"):
        lax.fft(z, "rfft", (4,))
    with pytest.raises(ValueError, match=r"^fft: expected fft_type .* got 'dft'"):
        lax.fft(z, "dft", (4,))
    with pytest.raises(ValueError, match=r"^fft: expected fft_lengths"):
        lax.fft(z, "fft", ())
    # the primitive itself takes float/complex operands only
    with pytest.raises(TypeError, match=r"^fft: expected a complex operand for FFT, got int64"):
        lax.fourier.fft_p.bind(np.arange(4), fft_type=lax.FftType.FFT, fft_lengths=(4,))
    with pytest.raises(TypeError, match=r"^fft: expected a real floating-point operand"):
        ft.jit(lambda a: lax.fourier.fft_p.bind(a, fft_type=lax.FftType.RFFT, fft_lengths=(4,)))(
            np.arange(4)
        )
    with pytest.raises(ValueError, match=r"^fft: .*fft_lengths \(3,\)"):
        ft.jit(lambda a: lax.fft(a, "fft", (3,)))(z)


def test_numpy_fft_errors():
    x = np.ones((2, 4))
    traced = ft.jit
    with pytest.raises(ValueError, match=r"^fft: expected norm .* got 'unitary'"):
        traced(lambda a: FFT.fft(a, norm="unitary"))(x)
    with pytest.raises(ValueError, match=r"^fftn: expected distinct axes, got \(1, 1\)"):
        traced(lambda a: FFT.fftn(a, axes=(1, -1)))(x)
    with pytest.raises(ValueError, match=r"^ifftn: expected one length in s per axis"):
        traced(lambda a: FFT.ifftn(a, s=(2, 3), axes=(0,)))(x)
    with pytest.raises(np.exceptions.AxisError, match=r"^rfft: expected axis in \[-2, 2\)"):
        traced(lambda a: FFT.rfft(a, axis=2))(x)
    with pytest.raises(TypeError, match=r"^rfft: expected a real input, got complex128"):
        traced(FFT.rfft)(x + 1j)
    with pytest.raises(ValueError, match=r"^fft: expected non-negative lengths"):
        traced(lambda a: FFT.fft(a, n=-1))(x)
    with pytest.raises(ValueError, match=r"^fftfreq: expected n > 0, got 0"):
        FFT.fftfreq(0)
    with pytest.raises(TypeError, match=r"^rfftfreq: expected n, a Python int"):
        FFT.rfftfreq(2.5)
