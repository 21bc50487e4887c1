"""nn pooling and convolution layers.

Forward values and gradients are checked against PyTorch 2.13 (recorded into
``tests/fixtures/nn_conv_torch.npz`` from the cases of ``tests/nn_conv_cases.py``);
the rest checks derivatives, ``jit``, ``vmap`` and error messages on tiny shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import functrace as ft
import nn_conv_cases as CC
from functrace import nn

FIXTURE = Path(__file__).parent / "fixtures" / "nn_conv_torch.npz"
RNG = np.random.default_rng(0)

POOL_CASES = sorted(c for c in CC.CASES if not CC.is_conv(c))
CONV_CASES = sorted(c for c in CC.CASES if CC.is_conv(c))


@pytest.fixture(scope="module")
def torch_ref() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return dict(f)


def _tol(dt: str) -> dict[str, float]:
    return {"rtol": 2e-5, "atol": 2e-5} if dt == "float32" else {"rtol": 1e-12, "atol": 1e-12}


def _layer(case: str, dt: str, ref: dict[str, np.ndarray]) -> tuple[Any, list[str]]:
    cls, kwargs, _ = CC.CASES[case]
    extra = {"rng": 0, "dtype": np.dtype(dt)} if CC.is_conv(case) else {}
    m = getattr(nn, cls)(**kwargs, **extra)
    pre = f"{case}/{dt}/param/"
    params = {k[len(pre) :]: v for k, v in ref.items() if k.startswith(pre)}
    for name, v in params.items():
        assert getattr(m, name).shape == v.shape and getattr(m, name).dtype == v.dtype
    return m.replace(**params), sorted(params)


def _check_against_torch(case: str, dt: str, torch_ref: dict[str, np.ndarray]) -> None:
    ref = {
        k[len(case) + len(dt) + 2 :]: v
        for k, v in torch_ref.items()
        if k.startswith(f"{case}/{dt}/")
    }
    m, names = _layer(case, dt, torch_ref)
    x, tol = ref["x"], _tol(dt)
    y = m(x)
    assert y.dtype == ref["y"].dtype and y.shape == ref["y"].shape
    np.testing.assert_allclose(y, ref["y"], **tol)
    cot = CC.cotangent(ref["y"].shape, dt)
    gm, gx = ft.grad(lambda m, x: (m(x) * cot).sum(), argnums=(0, 1))(m, x)
    np.testing.assert_allclose(gx, ref["grad_x"], **tol)
    for name in names:
        np.testing.assert_allclose(getattr(gm, name), ref[f"grad/{name}"], **tol)


@pytest.mark.parametrize("dt", CC.DTYPES)
@pytest.mark.parametrize("case", POOL_CASES)
def test_pool_matches_torch(case: str, dt: str, torch_ref: dict[str, np.ndarray]) -> None:
    _check_against_torch(case, dt, torch_ref)


@pytest.mark.parametrize("dt", CC.DTYPES)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_matches_torch(case: str, dt: str, torch_ref: dict[str, np.ndarray]) -> None:
    _check_against_torch(case, dt, torch_ref)


def test_conv_init_is_pytorchs() -> None:
    # kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias likewise
    c = nn.Conv2d(6, 8, (3, 2), groups=2, rng=0)
    assert c.weight.shape == (8, 3, 3, 2) and c.weight.dtype == np.float32
    bound = 1 / np.sqrt(3 * 3 * 2)
    assert np.abs(c.weight).max() <= bound and np.abs(c.weight).max() > 0.8 * bound
    assert c.bias.shape == (8,) and np.abs(c.bias).max() <= bound
    t = nn.ConvTranspose2d(4, 6, 3, groups=2, rng=np.random.default_rng(1), dtype=np.float64)
    assert t.weight.shape == (4, 3, 3, 3) and t.weight.dtype == np.float64
    tb = 1 / np.sqrt(3 * 9)  # PyTorch's fan_in of a (in, out/groups, k...) weight
    assert np.abs(t.weight).max() <= tb and np.abs(t.weight).max() > 0.8 * tb
    np.testing.assert_array_equal(
        nn.Conv1d(2, 3, 2, rng=5).weight, nn.Conv1d(2, 3, 2, rng=5).weight
    )
    assert nn.Conv3d(1, 2, 2, bias=False, rng=0).bias is None


CONVS = [
    lambda: nn.Conv1d(2, 3, 3, stride=2, padding=1, rng=0, dtype=np.float64),
    lambda: nn.Conv2d(2, 2, 2, padding="same", padding_mode="reflect", rng=1, dtype=np.float64),
    lambda: nn.Conv2d(
        2,
        4,
        (2, 1),
        groups=2,
        dilation=(2, 1),
        padding_mode="circular",
        padding=1,
        rng=2,
        dtype=np.float64,
    ),
    lambda: nn.ConvTranspose1d(2, 2, 3, stride=2, output_padding=1, rng=3, dtype=np.float64),
    lambda: nn.ConvTranspose2d(2, 2, 2, stride=(2, 1), padding=(0, 1), rng=4, dtype=np.float64),
]


@pytest.mark.parametrize("k", range(len(CONVS)))
def test_conv_grads_jit_vmap(k: int) -> None:
    m = CONVS[k]()
    spatial = (4,) if type(m).__name__.endswith("1d") else (4, 3)
    x = RNG.normal(size=(2, 2, *spatial))
    loss = lambda m, x: (m(x) ** 2).sum()  # noqa: E731
    ft.check_grads(
        lambda w, b, x: m.replace(weight=w, bias=b)(x),
        (m.weight, m.bias, x),
        order=2,
        modes=("fwd", "rev"),
    )
    np.testing.assert_allclose(ft.jit(lambda m, x: m(x))(m, x), m(x), rtol=1e-13)
    gj, ge = ft.jit(ft.grad(loss))(m, x), ft.grad(loss)(m, x)
    np.testing.assert_allclose(gj.weight, ge.weight, rtol=1e-12)
    loop = np.stack([m(xi) for xi in x])  # unbatched (C, ...) inputs
    np.testing.assert_allclose(ft.vmap(m)(x), loop, rtol=1e-13)
    np.testing.assert_allclose(m(x[0]), m(x)[0], rtol=1e-13)


def test_conv_functional_forms() -> None:
    x = RNG.normal(size=(2, 4, 5, 6)).astype(np.float32)
    c = nn.Conv2d(4, 2, 3, stride=2, padding=1, groups=2, rng=0)
    y = nn.functional.conv2d(x, c.weight, c.bias, 2, 1, 1, 2)
    np.testing.assert_array_equal(y, c(x))
    t = nn.ConvTranspose2d(4, 2, 2, stride=2, rng=0)
    np.testing.assert_array_equal(nn.conv_transpose2d(x, t.weight, t.bias, stride=2), t(x))
    x1 = RNG.normal(size=(1, 2, 7))
    c1 = nn.Conv1d(2, 3, 3, rng=0, dtype=np.float64)
    np.testing.assert_array_equal(nn.conv1d(x1, c1.weight, c1.bias), c1(x1))
    t1 = nn.ConvTranspose1d(2, 3, 3, rng=0, dtype=np.float64)
    np.testing.assert_array_equal(nn.conv_transpose1d(x1, t1.weight), t1.replace(bias=None)(x1))
    x3 = RNG.normal(size=(1, 1, 3, 3, 3))
    c3 = nn.Conv3d(1, 2, 2, rng=0, dtype=np.float64)
    np.testing.assert_array_equal(nn.conv3d(x3, c3.weight, c3.bias), c3(x3))


POOLS = [
    nn.MaxPool1d(2, padding=1, ceil_mode=True),
    nn.MaxPool2d(2, stride=1, dilation=(1, 2)),
    nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    nn.AvgPool1d(2, ceil_mode=True),
    nn.AdaptiveAvgPool2d((2, 3)),
    nn.AdaptiveMaxPool1d(2),
]


def _pool_input(m: Any) -> np.ndarray:
    spatial = (5,) if type(m).__name__.endswith("1d") else (5, 4)
    return RNG.normal(size=(2, 2, *spatial))


@pytest.mark.parametrize("m", POOLS, ids=lambda m: type(m).__name__)
def test_pool_grads_jit_vmap(m: Any) -> None:
    x = _pool_input(m)
    ft.check_grads(m, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(ft.jit(m)(x), m(x), rtol=1e-14)
    g = lambda x: (m(x) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(ft.jit(ft.grad(g))(x), ft.grad(g)(x), rtol=1e-14)
    loop = np.stack([m(xi) for xi in x])  # unbatched (C, ...) inputs
    np.testing.assert_allclose(ft.vmap(m)(x), loop, rtol=1e-14)
    np.testing.assert_allclose(m(x[0]), m(x)[0], rtol=1e-14)


def test_pool_functional_forms() -> None:
    x = RNG.normal(size=(1, 2, 6, 5)).astype(np.float32)
    np.testing.assert_array_equal(nn.functional.max_pool2d(x, 2), nn.MaxPool2d(2)(x))
    np.testing.assert_array_equal(
        nn.avg_pool2d(x, 3, 2, 1, True, False, None), nn.AvgPool2d(3, 2, 1, True, False)(x)
    )
    np.testing.assert_array_equal(nn.adaptive_avg_pool2d(x, 3), nn.AdaptiveAvgPool2d(3)(x))
    x3 = RNG.normal(size=(1, 1, 4, 4, 4))
    np.testing.assert_array_equal(nn.max_pool3d(x3, 2), nn.MaxPool3d(2)(x3))
    np.testing.assert_array_equal(nn.avg_pool3d(x3, 2), nn.AvgPool3d(2)(x3))
    x1 = RNG.normal(size=(2, 3, 7))
    np.testing.assert_array_equal(nn.max_pool1d(x1, 3), nn.MaxPool1d(3)(x1))
    np.testing.assert_array_equal(nn.avg_pool1d(x1, 3), nn.AvgPool1d(3)(x1))
    np.testing.assert_array_equal(nn.adaptive_avg_pool1d(x1, 2), nn.AdaptiveAvgPool1d(2)(x1))
    np.testing.assert_array_equal(nn.adaptive_max_pool1d(x1, 2), nn.AdaptiveMaxPool1d(2)(x1))
    np.testing.assert_array_equal(nn.adaptive_max_pool2d(x, 2), nn.AdaptiveMaxPool2d(2)(x))
    assert nn.MaxPool2d(2)(x).dtype == np.float32


ERRORS = [
    (
        ValueError,
        r"MaxPool2d: expected a 3-d \(C, H, W\) or 4-d \(N, C, H, W\) x, got shape \(4, 4\)",
        lambda: nn.MaxPool2d(2)(np.ones((4, 4))),
    ),
    (
        ValueError,
        r"AvgPool1d: expected a \(dilated\) kernel no larger than the padded input, got "
        r"kernel size 5",
        lambda: nn.AvgPool1d(5)(np.ones((2, 3))),
    ),
    (
        ValueError,
        r"MaxPool2d: expected padding at most half the kernel size, got padding \(2, 2\) for "
        r"kernel_size \(3, 3\)",
        lambda: nn.MaxPool2d(3, padding=2)(np.ones((1, 5, 5))),
    ),
    (
        TypeError,
        r"MaxPool2d: expected kernel_size as an int or a tuple of 2 ints, got \(2, 2, 2\)",
        lambda: nn.MaxPool2d((2, 2, 2)),
    ),
    (
        TypeError,
        r"max_pool1d: expected a floating-point x, got dtype int64",
        lambda: nn.max_pool1d(np.ones((1, 4), np.int64), 2),
    ),
    (
        NotImplementedError,
        r"MaxPool1d: return_indices=True is not supported",
        lambda: nn.MaxPool1d(2, return_indices=True),
    ),
    (
        ValueError,
        r"avg_pool2d: expected divisor_override as a positive int or None, got 0",
        lambda: nn.avg_pool2d(np.ones((1, 4, 4)), 2, divisor_override=0),
    ),
    (
        ValueError,
        r"AdaptiveAvgPool2d: expected output_size entries as positive ints or None, got "
        r"\(0, 2\)",
        lambda: nn.AdaptiveAvgPool2d((0, 2))(np.ones((1, 4, 4))),
    ),
]


ERRORS += [
    (
        ValueError,
        r"Conv2d: expected x with 3 channels \(in_channels\) at dim 1, got shape \(2, 4, 5, 5\)",
        lambda: nn.Conv2d(3, 2, 3, rng=0)(np.ones((2, 4, 5, 5), np.float32)),
    ),
    (
        ValueError,
        r"Conv1d: expected a 2-d \(C, L\) or 3-d \(N, C, L\) x, got shape \(1, 2, 3, 4\)",
        lambda: nn.Conv1d(2, 2, 3, rng=0)(np.ones((1, 2, 3, 4), np.float32)),
    ),
    (
        ValueError,
        r"Conv2d: expected a padded input at least as large as the \(dilated\) kernel, got "
        r"input size 2 \(padding \(0, 0\)\) for kernel size 3",
        lambda: nn.Conv2d(1, 1, 3, rng=0)(np.ones((1, 2, 5), np.float32)),
    ),
    (
        ValueError,
        r"Conv2d: expected in_channels and out_channels divisible by groups, got "
        r"in_channels=3, out_channels=4, groups=2",
        lambda: nn.Conv2d(3, 4, 1, groups=2, rng=0),
    ),
    (
        ValueError,
        r"Conv1d: expected stride 1 with padding='same' \(as PyTorch\), got stride \(2,\)",
        lambda: nn.Conv1d(1, 1, 3, stride=2, padding="same", rng=0),
    ),
    (
        ValueError,
        r"Conv1d: expected padding below the input size 3 for padding_mode='reflect' \(at most "
        r"2\), got padding \(3, 3\)",
        lambda: nn.Conv1d(1, 1, 3, padding=3, padding_mode="reflect", rng=0)(np.ones((1, 3))),
    ),
    (
        ValueError,
        r"ConvTranspose2d: expected output_padding smaller than either stride or dilation, got "
        r"output_padding \(1, 1\) for stride \(1, 1\)",
        lambda: nn.ConvTranspose2d(1, 1, 2, output_padding=1, rng=0)(np.ones((1, 3, 3))),
    ),
    (
        ValueError,
        r"ConvTranspose1d: expected x with 2 channels \(in_channels\) at dim 0, got shape "
        r"\(3, 4\)",
        lambda: nn.ConvTranspose1d(2, 1, 2, rng=0)(np.ones((3, 4))),
    ),
]


@pytest.mark.parametrize("exc, msg, call", ERRORS)
def test_errors(exc: type, msg: str, call: Any) -> None:
    with pytest.raises(exc, match=msg):
        call()


# ---------------------------------------------------------------------------
# The compiled max/min pooling kernels of jit (functrace/jit/window_rules.py)
# ---------------------------------------------------------------------------

KERNEL_CASES = [
    # shape, window, strides, padding, base dilation, window dilation, select, dtype
    ((2, 5, 7), (1, 3, 3), (1, 2, 2), "SAME", None, None, "le", np.float64),  # inner windows too
    (
        (2, 5, 4),
        (1, 2, 2),
        (1, 1, 2),
        ((0, 0), (1, 2), (0, 1)),
        (1, 2, 2),
        (1, 2, 1),
        "ge",
        np.float32,
    ),
    ((9,), (3,), (2,), ((2, 2),), None, None, "ge", np.float64),
    ((1, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None, "ge", np.float32),
]
NAN = np.nan
# inner windows with a NaN after, at or before the maximum, and ties (the last case)
CRAFTED = np.array([[1, NAN, NAN, 2], [5, 0, 3, 4], [0, 3, 2, 2], [NAN, 9, 1, 2]])


@pytest.mark.parametrize("kind", ["reduce", "gather", "scatter"])
@pytest.mark.parametrize("case", range(len(KERNEL_CASES)))
def test_compiled_window_kernels_match_impl(case: int, kind: str, monkeypatch: Any) -> None:
    from functrace import lax
    from functrace.jit import window_rules

    monkeypatch.setattr(window_rules, "MIN_SIZE", 0)  # the kernels on tiny shapes too
    shape, wd, ws, pad, bd, wdil, select, dtype = KERNEL_CASES[case]
    rng = np.random.default_rng(case)
    x = np.round(rng.normal(size=shape), 0).astype(dtype)  # many ties
    flat = x.reshape(-1)
    flat[1], flat[-1], flat[len(flat) // 2] = np.nan, -np.inf, np.inf
    flat[0] = -np.inf if select == "ge" else np.inf  # a window starting on padding
    if shape == (1, 1, 4, 4):
        x = CRAFTED.astype(dtype).reshape(shape)
    w = (wd, ws, pad, bd, wdil)
    red = lax.reduce_window_max if select == "ge" else lax.reduce_window_min
    fwd = lambda x: red(x, *w)  # noqa: E731
    y = fwd(x)
    t = rng.normal(size=shape).astype(dtype)
    s = rng.normal(size=np.shape(y)).astype(dtype)
    gather = lambda t, x: lax.select_and_gather_add(t, x, select, *w)  # noqa: E731
    scatter = lambda s, x: lax.select_and_scatter_add(s, x, select, *w)  # noqa: E731
    f, args = {"reduce": (fwd, (x,)), "gather": (gather, (t, x)), "scatter": (scatter, (s, x))}[
        kind
    ]
    jf = ft.jit(f)
    assert f"{kind} window kernel" in jf.lower(*args).as_text()
    got, want = jf(*args), f(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
