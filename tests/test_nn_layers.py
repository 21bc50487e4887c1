"""nn layers: normalisation, dropout, embedding, shape layers; ``nn.initializers``.

Forward values and gradients are checked against PyTorch 2.13 (recorded into
``tests/fixtures/nn_layers_torch.npz``), initializers against JAX
(``tests/fixtures/nn_init_jax.npz``); the rest checks derivatives, ``jit``, ``vmap``,
initialisation statistics and error messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import functrace as ft
import nn_init_cases as IC
import nn_layers_cases as LC
from functrace import nn, random

RNG = np.random.default_rng(0)


def _x(*shape: int, dtype: type = np.float64) -> np.ndarray:
    return RNG.normal(size=shape).astype(dtype)


# ---------------------------------------------------------------------------
# LayerNorm
# ---------------------------------------------------------------------------


def _layer_norm_ref(x: np.ndarray, k: int, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    axes = tuple(range(-k, 0))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_value_dtype_and_params(dtype: type) -> None:
    ln = nn.LayerNorm((3, 4), dtype=dtype)
    assert ln.weight.shape == (3, 4) and ln.bias.shape == (3, 4) and ln.weight.dtype == dtype
    ln = ln.replace(weight=_x(3, 4, dtype=dtype), bias=_x(3, 4, dtype=dtype))
    x = _x(2, 3, 4, dtype=dtype)
    y = ln(x)
    assert y.dtype == dtype and y.shape == x.shape
    ref = _layer_norm_ref(x.astype(np.float64), 2, ln.weight, ln.bias, 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None
    assert nn.LayerNorm(4, bias=False).bias is None


def test_layer_norm_grads_jit_vmap() -> None:
    ln = nn.LayerNorm(4, dtype=np.float64).replace(weight=_x(4), bias=_x(4))
    x = _x(3, 4)
    ft.check_grads(lambda m, x: m(x), (ln, x), order=2)
    np.testing.assert_allclose(ft.jit(lambda m, x: m(x))(ln, x), ln(x), rtol=1e-13)
    loop = np.stack([ln(row) for row in x])
    np.testing.assert_allclose(ft.vmap(ln)(x), loop, rtol=1e-13)
    f = lambda w, x: nn.layer_norm(x, (4,), w, None, 1e-3)  # noqa: E731
    ft.check_grads(f, (ln.weight, x), order=2)


def test_layer_norm_errors() -> None:
    msg = r"LayerNorm: expected the last dims of x to be \(4,\), got shape \(3, 5\)"
    with pytest.raises(ValueError, match=msg):
        nn.LayerNorm(4)(np.ones((3, 5), np.float32))
    with pytest.raises(TypeError, match=r"LayerNorm: expected a floating-point x, got dtype int64"):
        nn.LayerNorm(4)(np.ones((3, 4), np.int64))
    msg = r"layer_norm: expected weight of shape \(4,\), got shape \(3,\)"
    with pytest.raises(ValueError, match=msg):
        nn.layer_norm(np.ones((3, 4)), 4, np.ones(3))


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_mask_scale_and_identity(dtype: type) -> None:
    x = np.ones((50, 40), dtype)
    key = random.key(3)
    y = nn.Dropout(0.25)(x, key=key)
    assert y.dtype == dtype
    kept = np.asarray(y) != 0
    mask = random.bernoulli(key, np.asarray(0.75, dtype), x.shape)
    np.testing.assert_array_equal(kept, np.asarray(mask))
    np.testing.assert_allclose(np.asarray(y)[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_array_equal(nn.Dropout(0.25)(x), x)
    np.testing.assert_array_equal(nn.Dropout(0.25, inference=True)(x, key=key), x)
    np.testing.assert_array_equal(nn.Dropout(0.25)(x, key=key, inference=True), x)
    np.testing.assert_array_equal(nn.dropout(x, 0.25, key=key, training=False), x)
    np.testing.assert_array_equal(nn.dropout(x, 1.0, key=key), np.zeros_like(x))
    np.testing.assert_array_equal(nn.dropout(x, 0.0, key=key), x)
    np.testing.assert_array_equal(nn.dropout(x, np.asarray(0.25), key=key), y)


def test_dropout_jit_vmap_grad() -> None:
    x = _x(4, 6)
    key = random.key(7)
    drop = nn.Dropout(0.5)
    np.testing.assert_array_equal(ft.jit(lambda x, k: drop(x, key=k))(x, key), drop(x, key=key))
    traced_p = ft.jit(lambda x, k, p: nn.dropout(x, p, key=k))(x, key, 0.5)
    np.testing.assert_array_equal(traced_p, drop(x, key=key))
    keys = random.split(key, 4)
    loop = np.stack([drop(x[i], key=keys[i]) for i in range(4)])
    np.testing.assert_array_equal(ft.vmap(lambda x, k: drop(x, key=k))(x, keys), loop)
    np.testing.assert_array_equal(ft.jit(ft.vmap(lambda x, k: drop(x, key=k)))(x, keys), loop)
    ft.check_grads(lambda x: drop(x, key=key), (x,), order=2)
    g = ft.grad(lambda x: drop(x, key=key).sum())(x)
    np.testing.assert_array_equal(g, np.where(np.asarray(drop(x, key=key)) != 0, 2.0, 0.0))


def test_dropout_errors() -> None:
    msg = r"Dropout: expected p, the drop probability, in \[0, 1\], got 1.5"
    with pytest.raises(ValueError, match=msg):
        nn.Dropout(1.5)
    with pytest.raises(TypeError, match=r"dropout: expected a floating-point x, got dtype int64"):
        nn.dropout(np.ones(3, np.int64), 0.5, key=random.key(0))
    msg = (
        r"Dropout: expected key as a single PRNG key \(a uint32 array of shape \(2,\).*got i64\[\]"
    )
    with pytest.raises(TypeError, match=msg):
        nn.Dropout(0.5)(np.ones(3), key=0)
    with pytest.raises(
        TypeError, match=r"dropout: expected key as a single PRNG key.*got u32\[3\]"
    ):
        nn.dropout(np.ones(3), 0.5, key=np.zeros(3, np.uint32))
    assert nn.GroupNorm(2, 4)(np.ones((0, 4, 3), np.float32)).shape == (0, 4, 3)


# ---------------------------------------------------------------------------
# Forward values and gradients against PyTorch
# ---------------------------------------------------------------------------

FIXTURE = Path(__file__).parent / "fixtures" / "nn_layers_torch.npz"


@pytest.fixture(scope="module")
def torch_ref() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return dict(f)


def _torch_module(case: str, dt: str, ref: dict[str, np.ndarray]) -> Any:
    cls, kwargs, _ = LC.CASES[case]
    extra: dict[str, Any] = {}
    if cls == "Embedding":
        extra = {"rng": 0, "dtype": np.dtype(dt)}
    elif cls not in ("Flatten", "Unflatten", "Identity"):
        extra = {"dtype": np.dtype(dt)}
    m = getattr(nn, cls)(**kwargs, **extra)
    pre = f"{case}/{dt}/param/"
    params = {k[len(pre) :]: v for k, v in ref.items() if k.startswith(pre)}
    for name, v in params.items():
        assert getattr(m, name).shape == v.shape and getattr(m, name).dtype == v.dtype
    return m.replace(**params), sorted(params)


def _tol(dt: str) -> dict[str, float]:
    return {"rtol": 2e-5, "atol": 2e-5} if dt == "float32" else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("dt", LC.DTYPES)
@pytest.mark.parametrize("case", sorted(LC.CASES))
def test_layer_matches_torch(case: str, dt: str, torch_ref: dict[str, np.ndarray]) -> None:
    ref = {
        k[len(case) + len(dt) + 2 :]: v
        for k, v in torch_ref.items()
        if k.startswith(f"{case}/{dt}/")
    }
    m, names = _torch_module(case, dt, torch_ref)
    x = ref["x"]
    tol = _tol(dt)
    bn = LC.is_batch_norm(case)

    def run(m: Any, x: Any) -> Any:
        return m(x, m.init_state(), training=True)[0] if bn else m(x)

    y = run(m, x)
    assert y.dtype == ref["y"].dtype
    np.testing.assert_allclose(y, ref["y"], **tol)
    cot = LC.cotangent(ref["y"].shape, dt)
    loss = lambda m, x: (run(m, x) * cot).sum()  # noqa: E731
    if x.dtype.kind == "f":
        gm, gx = ft.grad(loss, argnums=(0, 1))(m, x)
        np.testing.assert_allclose(gx, ref["grad_x"], **tol)
    else:
        gm = ft.grad(loss)(m, x)
    for name in names:
        np.testing.assert_allclose(getattr(gm, name), ref[f"grad/{name}"], **tol)
    if bn:
        state = m.init_state()
        _, state = m(x, state, training=True)
        y2, state = m(ref["x2"], state, training=True)
        np.testing.assert_allclose(y2, ref["y2"], **tol)
        np.testing.assert_allclose(state.running_mean, ref["running_mean"], **tol)
        np.testing.assert_allclose(state.running_var, ref["running_var"], **tol)
        assert int(state.num_batches_tracked) == int(ref["num_batches_tracked"])
        assert state.running_mean.dtype == np.dtype(dt)
        y_eval, same = m(x, state, training=False)
        assert same is state
        np.testing.assert_allclose(y_eval, ref["y_eval"], **tol)


# ---------------------------------------------------------------------------
# Derivatives, jit and vmap through each layer (float64, small shapes)
# ---------------------------------------------------------------------------


def _randomised(m: Any) -> Any:
    """``m`` with every float parameter replaced by random values (so affine parts matter)."""
    return ft.tree_util.tree_map(lambda v: v + 0.3 * RNG.normal(size=v.shape), m)


F64_LAYERS = {
    "LayerNorm": (lambda: nn.LayerNorm((2, 3), dtype=np.float64), (2, 2, 3)),
    "RMSNorm": (lambda: nn.RMSNorm(3, dtype=np.float64), (2, 3)),
    "RMSNorm_eps": (lambda: nn.RMSNorm(3, eps=1e-3, dtype=np.float64), (2, 3)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4, dtype=np.float64), (2, 4, 2)),
    "Flatten": (lambda: nn.Flatten(), (2, 2, 3)),
    "Unflatten": (lambda: nn.Unflatten(-1, (3, 2)), (2, 6)),
    "Identity": (lambda: nn.Identity(3, foo=1), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(F64_LAYERS))
def test_layer_grads_jit_vmap(name: str) -> None:
    make, shape = F64_LAYERS[name]
    m = _randomised(make())
    x = _x(*shape)
    ft.check_grads(lambda m, x: m(x), (m, x), order=2)
    np.testing.assert_allclose(ft.jit(lambda m, x: m(x))(m, x), m(x), rtol=1e-13, atol=1e-14)
    xs = _x(3, *shape)
    loop = np.stack([m(xi) for xi in xs])
    np.testing.assert_allclose(ft.vmap(m)(xs), loop, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ft.jit(ft.vmap(m))(xs), loop, rtol=1e-13, atol=1e-14)


def test_norm_unbatched_inputs_and_float32() -> None:
    ln, rms = nn.LayerNorm(4), nn.RMSNorm(4)
    x = _x(3, 4, dtype=np.float32)
    for m in (ln, rms):
        y = m(x)
        assert y.dtype == np.float32
        np.testing.assert_allclose(ft.vmap(m)(x), np.stack([m(r) for r in x]), rtol=1e-6)
        np.testing.assert_allclose(ft.jit(m)(x), y, rtol=1e-6, atol=1e-6)
    ref = x / np.sqrt(
        (x.astype(np.float64) ** 2).mean(-1, keepdims=True) + np.finfo(np.float32).eps
    )
    np.testing.assert_allclose(rms(x), ref, rtol=1e-6)
    g = nn.GroupNorm(2, 4)
    xs = _x(3, 2, 4, 5, dtype=np.float32)
    np.testing.assert_allclose(ft.vmap(g)(xs), np.stack([g(xi) for xi in xs]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d"])
def test_batch_norm_grads_and_state_through_jit(cls: str) -> None:
    shape = (3, 2, 2) if cls == "BatchNorm1d" else (2, 2, 2, 2)
    bn = _randomised(getattr(nn, cls)(2, momentum=None, dtype=np.float64))
    x, x2 = _x(*shape), _x(*shape)
    state = bn.init_state()
    ft.check_grads(lambda m, x: m(x, state, training=True)[0], (bn, x), order=2)
    ft.check_grads(lambda m, x: m(x, state, training=False)[0], (bn, x), order=2)
    step = ft.jit(lambda m, x, s: m(x, s, training=True))
    evaluate = ft.jit(lambda m, x, s: m(x, s, training=False))
    s_eager, s_jit = state, state
    for xi in (x, x2):
        y_e, s_eager = bn(xi, s_eager, training=True)
        y_j, s_jit = step(bn, xi, s_jit)
        np.testing.assert_allclose(y_j, y_e, rtol=1e-13, atol=1e-14)
    assert isinstance(s_jit, nn.BatchNormState) and int(s_jit.num_batches_tracked) == 2
    for a, b in zip(s_jit, s_eager):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    np.testing.assert_allclose(  # momentum=None: the cumulative average of the two batches
        s_eager.running_mean,
        (x.mean(axis=(0, *range(2, x.ndim))) + x2.mean(axis=(0, *range(2, x.ndim)))) / 2,
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        evaluate(bn, x, s_jit)[0], bn(x, s_eager, training=False)[0], rtol=1e-13
    )
    # a per-example batch under vmap: the statistics of each slice
    xs = _x(2, *shape)
    ys, ss = ft.vmap(lambda x: bn(x, state, training=True))(xs)
    for i in range(2):
        yi, si = bn(xs[i], state, training=True)
        np.testing.assert_allclose(ys[i], yi, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(ss.running_var[i], si.running_var, rtol=1e-13)


def test_batch_norm_without_running_stats() -> None:
    bn = nn.BatchNorm1d(3, track_running_stats=False, affine=False, dtype=np.float64)
    assert bn.init_state() is None and bn.weight is None and bn.bias is None
    x = _x(4, 3)
    y, s = bn(x, None, training=False)  # batch statistics in both modes
    assert s is None
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-12)
    y2, rm0, rv0 = nn.batch_norm(x, None, None, training=True)
    np.testing.assert_allclose(y2, y, rtol=1e-12)
    assert rm0 is None and rv0 is None
    msg = r"batch_norm: expected running_mean and running_var in evaluation mode"
    with pytest.raises(ValueError, match=msg):
        nn.batch_norm(x, None, None, training=False)
    rm, rv = np.zeros(3), np.ones(3)
    y3, rm2, rv2 = nn.batch_norm(x, rm, rv, training=False)
    assert rm2 is rm and rv2 is rv
    np.testing.assert_allclose(y3, x / np.sqrt(1 + 1e-5), rtol=1e-12)


def test_embedding_grads_jit_vmap_padding() -> None:
    emb = nn.Embedding(5, 3, padding_idx=2, rng=0, dtype=np.float64)
    ids = np.array([[0, 2, 4], [2, 1, 1]])
    np.testing.assert_array_equal(emb.weight[2], 0)
    ft.check_grads(lambda w: nn.embedding(ids, w), (emb.weight,), order=2)
    g = ft.grad(lambda m: (m(ids) ** 2).sum())(emb.replace(weight=emb.weight + 1.0))
    np.testing.assert_array_equal(g.weight[2], 0)
    np.testing.assert_allclose(g.weight[1], 2 * 2 * (emb.weight[1] + 1.0))
    np.testing.assert_array_equal(ft.jit(emb)(ids), emb(ids))
    np.testing.assert_array_equal(ft.vmap(emb)(ids), np.stack([emb(r) for r in ids]))
    np.testing.assert_array_equal(
        ft.vmap(nn.embedding, (None, 0))(ids[0], np.stack([emb.weight] * 2)),
        np.stack([emb(ids[0])] * 2),
    )
    # traced ids cannot raise: clamped into range, as take(..., mode="clip")
    np.testing.assert_array_equal(ft.jit(emb)(np.array([7, -1])), emb.weight[[4, 0]])
    assert emb(np.int32(3)).shape == (3,) and emb(np.zeros((0, 2), np.int64)).shape == (0, 2, 3)


# ---------------------------------------------------------------------------
# Initialisation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_initialisation_shapes_dtypes_values(dtype: type) -> None:
    for m in (nn.LayerNorm((2, 3), dtype=dtype), nn.GroupNorm(2, 6, dtype=dtype)):
        shape = (2, 3) if isinstance(m, nn.LayerNorm) else (6,)
        assert m.weight.shape == shape and m.weight.dtype == dtype
        np.testing.assert_array_equal(m.weight, 1)
        np.testing.assert_array_equal(m.bias, 0)
        assert m.bias.dtype == dtype
    rms = nn.RMSNorm((4,), dtype=dtype)
    assert rms.weight.dtype == dtype and rms.eps is None
    np.testing.assert_array_equal(rms.weight, 1)
    assert nn.RMSNorm(4, elementwise_affine=False).weight is None
    assert nn.GroupNorm(1, 2, affine=False).bias is None
    for bn in (nn.BatchNorm1d(3, dtype=dtype), nn.BatchNorm2d(3, dtype=dtype)):
        np.testing.assert_array_equal(bn.weight, 1)
        np.testing.assert_array_equal(bn.bias, 0)
        st = bn.init_state()
        assert isinstance(st, nn.BatchNormState)
        assert st.running_mean.dtype == dtype and st.running_var.dtype == dtype
        np.testing.assert_array_equal(st.running_mean, 0)
        np.testing.assert_array_equal(st.running_var, 1)
        assert st.num_batches_tracked.dtype == np.int64 and int(st.num_batches_tracked) == 0
    emb = nn.Embedding(400, 50, padding_idx=-3, rng=1, dtype=dtype)
    assert emb.weight.shape == (400, 50) and emb.weight.dtype == dtype and emb.padding_idx == 397
    np.testing.assert_array_equal(emb.weight[397], 0)
    w = np.delete(np.asarray(emb.weight, np.float64), 397, axis=0)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # N(0, 1)
    assert abs(np.mean(np.abs(w) < 1) - 0.6827) < 0.01
    e1 = nn.Embedding(4, 2, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(e1.weight, nn.Embedding(4, 2, rng=5).weight)
    assert not np.array_equal(e1.weight, nn.Embedding(4, 2, rng=6).weight)
    assert nn.count_params(nn.Dropout(0.1)) == 0 and nn.count_params(nn.Flatten()) == 0


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

ERRORS = [
    (
        lambda: nn.RMSNorm((2, 3))(np.ones((3, 2))),
        ValueError,
        r"RMSNorm: expected the last dims of x to be \(2, 3\), got shape \(3, 2\)",
    ),
    (
        lambda: nn.LayerNorm(4)(np.ones(())),
        ValueError,
        r"LayerNorm: expected the last dims of x to be \(4,\), got shape \(\)",
    ),
    (
        lambda: nn.LayerNorm("a"),
        TypeError,
        r"LayerNorm: expected normalized_shape as an int or a tuple of ints, got 'a'",
    ),
    (
        lambda: nn.GroupNorm(3, 4),
        ValueError,
        r"GroupNorm: expected num_channels divisible by num_groups, "
        r"got num_channels=4 and num_groups=3",
    ),
    (
        lambda: nn.GroupNorm(2, 4)(np.ones((2, 6, 3))),
        ValueError,
        r"GroupNorm: expected x of shape \(N, 4, \*\), got shape \(2, 6, 3\)",
    ),
    (
        lambda: nn.GroupNorm(2, 4)(np.ones(4)),
        ValueError,
        r"GroupNorm: expected x of shape \(N, 4, \*\), got shape \(4,\)",
    ),
    (
        lambda: nn.group_norm(np.ones((2, 3)), 2),
        ValueError,
        r"group_norm: expected the channels of x \(dim 1\) to be divisible by num_groups=2, "
        r"got shape \(2, 3\)",
    ),
    (
        lambda: nn.BatchNorm1d(3)(np.ones(3), None, training=True),
        ValueError,
        r"BatchNorm1d: expected x of shape \(N, 3\) or \(N, 3, L\), got shape \(3,\)",
    ),
    (
        lambda: nn.BatchNorm2d(3)(np.ones((2, 3, 4)), None, training=True),
        ValueError,
        r"BatchNorm2d: expected x of shape \(N, 3, H, W\), got shape \(2, 3, 4\)",
    ),
    (
        lambda: nn.BatchNorm1d(3)(np.ones((2, 3)), None, training=True),
        TypeError,
        r"BatchNorm1d: expected state as a BatchNormState \(from init_state\(\)\), got NoneType",
    ),
    (
        lambda: nn.BatchNorm1d(3)(np.ones((1, 3)), nn.BatchNorm1d(3).init_state(), training=True),
        ValueError,
        r"BatchNorm1d: expected more than 1 value per channel when training, got shape \(1, 3\)",
    ),
    (
        lambda: nn.BatchNorm1d(0),
        ValueError,
        r"BatchNorm1d: expected num_features as a positive int, got 0",
    ),
    (
        lambda: nn.batch_norm(np.ones((2, 3)), np.zeros(2), np.ones(2)),
        ValueError,
        r"batch_norm: expected running_mean of shape \(3,\), got shape \(2,\)",
    ),
    (
        lambda: nn.Embedding(4, 2, rng=0)(np.array([1, 4])),
        IndexError,
        r"Embedding: expected ids in \[0, 4\) for 4 embeddings, got id 4",
    ),
    (
        lambda: nn.Embedding(4, 2, rng=0)(np.array([-1, 2])),
        IndexError,
        r"Embedding: expected ids in \[0, 4\) for 4 embeddings, got id -1",
    ),
    (
        lambda: nn.Embedding(4, 2, rng=0)(np.array([1.0])),
        TypeError,
        r"Embedding: expected integer ids, got dtype float64",
    ),
    (
        lambda: nn.Embedding(4, 2, padding_idx=4, rng=0),
        ValueError,
        r"Embedding: expected padding_idx in \[-4, 4\) for 4 embeddings, got 4",
    ),
    (
        lambda: nn.embedding(np.array([0]), np.ones(3)),
        ValueError,
        r"embedding: expected weight of shape \(num_embeddings, embedding_dim\), got shape \(3,\)",
    ),
    (
        lambda: nn.Flatten()(np.ones(3)),
        ValueError,
        r"Flatten: expected start_dim in \[-1, 1\) for x of shape \(3,\), got 1",
    ),
    (
        lambda: nn.Flatten(2, 1)(np.ones((2, 3, 4))),
        ValueError,
        r"Flatten: expected start_dim <= end_dim for x of shape \(2, 3, 4\), "
        r"got start_dim=2 and end_dim=1",
    ),
    (
        lambda: nn.Unflatten(1, (4, -1))(np.ones((2, 6))),
        ValueError,
        r"Unflatten: expected dim 1 of x to have size prod\(4, -1\), got shape \(2, 6\)",
    ),
    (
        lambda: nn.Unflatten(1, (-1, -1)),
        ValueError,
        r"Unflatten: expected unflattened_size as a non-empty tuple of sizes with at most one -1",
    ),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_clear_errors(i: int) -> None:
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=msg):
        fn()


def test_errors_under_jit_name_the_layer() -> None:
    with pytest.raises(ValueError, match=r"LayerNorm: expected the last dims of x to be \(4,\)"):
        ft.jit(nn.LayerNorm(4))(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"Embedding: expected integer ids"):
        ft.jit(nn.Embedding(4, 2, rng=0))(np.ones(2))


def test_shape_layers() -> None:
    x = _x(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Flatten(-2)(x).shape == (2, 3, 20)
    assert nn.Flatten(0)(np.float64(2.0)).shape == (1,)
    assert nn.Unflatten(-1, (5, 1))(x).shape == (2, 3, 4, 5, 1)
    np.testing.assert_array_equal(
        nn.Unflatten(1, (2, 3))(nn.Flatten(1, 2)(x[:, :2, :3])), x[:, :2, :3]
    )
    assert nn.Identity()(x) is x


# ---------------------------------------------------------------------------
# nn.initializers against JAX
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax_init_ref() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).parent / "fixtures" / "nn_init_jax.npz") as f:
        return dict(f)


def test_initializers_match_jax(jax_init_ref: dict[str, np.ndarray]) -> None:
    got = IC.cases(ft)
    assert sorted(got) == sorted(k for k in jax_init_ref if k != "__about__")
    for name, v in got.items():
        ref = jax_init_ref[name]
        assert v.shape == ref.shape and v.dtype == ref.dtype, name
        tol = 2e-6 if v.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(v, ref, rtol=tol, atol=tol, err_msg=name)


def test_initializers_home_and_orthogonality() -> None:
    from functrace.example_libraries import initializers as exlib_init

    assert exlib_init.orthogonal is nn.initializers.orthogonal
    assert set(exlib_init.__all__) == set(nn.initializers.__all__)
    key = random.key(4)
    for shape in [(6, 3), (3, 6)]:
        w = np.asarray(nn.initializers.orthogonal(2.0)(key, shape))
        small = w.T @ w if shape[0] >= shape[1] else w @ w.T
        np.testing.assert_allclose(small, 4.0 * np.eye(min(shape)), atol=1e-12)
    jitted = ft.jit(lambda k: nn.initializers.orthogonal()(k, (4, 3)))
    np.testing.assert_allclose(jitted(key), nn.initializers.orthogonal()(key, (4, 3)), atol=1e-12)
    k = np.asarray(nn.initializers.delta_orthogonal()(key, (3, 3, 2, 4)))
    assert np.count_nonzero(k[[0, 2]]) == 0 and np.count_nonzero(k[1, [0, 2]]) == 0
    with pytest.raises(ValueError, match=r"orthogonal: expected a shape with at least 2 dims"):
        nn.initializers.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match=r"delta_orthogonal: expected a 3-d, 4-d or 5-d shape"):
        nn.initializers.delta_orthogonal()(key, (3, 3))
    with pytest.raises(ValueError, match=r"delta_orthogonal: expected shape\[-2\] <= shape\[-1\]"):
        nn.initializers.delta_orthogonal()(key, (3, 4, 2))
    with pytest.raises(ValueError, match=r"orthogonal: expected column_axis in \[-2, 2\), got 2"):
        nn.initializers.orthogonal(column_axis=2)(key, (3, 4))
