"""nn recurrent layers: RNNCell/GRUCell/LSTMCell and RNN/GRU/LSTM against PyTorch's values
(tests/fixtures/nn_seq_torch.npz), gradients, vmap, jit, dropout, parameter names, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import functrace as ft
import functrace.random as random
import nn_seq_cases as C
from functrace import nn

FIX = dict(np.load(Path(__file__).parent / "fixtures" / "nn_seq_torch.npz"))
KINDS = {"RNNCell", "GRUCell", "LSTMCell", "RNN", "GRU", "LSTM"}
NAMES = [n for n, c in C.CASES.items() if c["kind"] in KINDS]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_matches_torch(name: str, dtype: type) -> None:
    C.compare(ft, FIX, name, dtype)


def test_parameter_names_shapes_and_init_match_torch() -> None:
    for name in NAMES:
        case = C.CASES[name]
        m = getattr(nn, case["kind"])(**case["ctor"], rng=0)
        _, sd = C.case_io(FIX, name, np.float64)
        h = case["ctor"]["hidden_size"]
        if isinstance(getattr(m, "params", None), dict):
            assert m.state_dict().keys() == sd.keys()
        for k, v in sd.items():
            p = getattr(m, k)
            assert p.shape == v.shape and p.dtype == np.float32, (name, k)
            assert np.all(np.abs(p) <= 1 / np.sqrt(h)), (name, k)
    assert nn.GRUCell(3, 4, bias=False, rng=0).bias_ih is None


def test_load_state_dict_checks_names_and_shapes() -> None:
    m = nn.GRU(3, 4, rng=0)
    sd = {k: np.ones_like(v) for k, v in m.state_dict().items()}
    assert np.all(m.load_state_dict(sd).weight_hh_l0 == 1)
    with pytest.raises(ValueError, match=r"GRU.load_state_dict: expected the keys"):
        m.load_state_dict({**sd, "weight_ih_l1": sd["weight_ih_l0"]})
    with pytest.raises(ValueError, match=r"GRU.load_state_dict: expected weight_ih_l0 of shape"):
        m.load_state_dict({**sd, "weight_ih_l0": np.ones((2, 2))})
    with pytest.raises(AttributeError, match="weight_ih_l1"):
        _ = m.weight_ih_l1


def _f64(m: object) -> object:
    return ft.tree_util.tree_map(lambda a: np.asarray(a, np.float64), m)


def test_cell_grads_order2() -> None:
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((3, 2, 2))
    gru = _f64(nn.GRUCell(2, 2, rng=1))
    ft.check_grads(lambda m, x, h: (m(x, h) ** 2).sum(), (gru, x[0], h[0]), order=2)
    lstm = _f64(nn.LSTMCell(2, 2, rng=2))
    ft.check_grads(lambda m, x, h, c: sum(a @ a for a in m(x, (h, c))), (lstm, x, h, c), order=2)
    rnn = _f64(nn.RNNCell(2, 2, rng=3))
    ft.check_grads(lambda m, x, h: m(x, h).sum(), (rnn, x, h), order=2)


def test_lstm_three_steps_grads_order2() -> None:
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((3, 2))
    h0, c0 = rng.standard_normal((2, 1, 2))
    lstm = _f64(nn.LSTM(2, 2, rng=0))

    def f(m: nn.LSTM, xs: np.ndarray, h0: np.ndarray, c0: np.ndarray) -> object:
        out, (h, c) = m(xs, (h0, c0))
        return (out * out).sum() + (h * c).sum()

    ft.check_grads(f, (lstm, xs, h0, c0), order=2)


def test_gru_bidirectional_grads_order1() -> None:
    xs = np.random.default_rng(2).standard_normal((3, 1, 2))
    gru = _f64(nn.GRU(2, 2, bidirectional=True, rng=0))
    ft.check_grads(lambda m, x: (m(x)[0] ** 2).sum(), (gru, xs), order=1)


def _close(a: object, b: object) -> None:
    for x, y in zip(ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)


X_JIT = np.random.default_rng(3).standard_normal((4, 2, 3)).astype(np.float32)


def test_jit_equals_eager_lstm() -> None:
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, rng=0)
    _close(ft.jit(lambda m, x: m(x))(m, X_JIT), m(X_JIT))


def test_jit_equals_eager_gru_and_cell() -> None:
    m = nn.GRU(3, 4, batch_first=True, rng=1)
    _close(ft.jit(lambda m, x: m(x))(m, X_JIT), m(X_JIT))
    cell = nn.RNNCell(3, 4, nonlinearity="relu", rng=0)
    h = np.ones((2, 4), np.float32)
    _close(ft.jit(lambda m, x, h: m(x, h))(cell, X_JIT[0], h), cell(X_JIT[0], h))


def test_vmap_equals_loop() -> None:
    rng = np.random.default_rng(4)
    x, h = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 2, 4))
    for cell, state in [
        (nn.GRUCell(3, 4, rng=0, dtype=np.float64), h),
        (nn.RNNCell(3, 4, rng=0, dtype=np.float64), h),
        (nn.LSTMCell(3, 4, rng=0, dtype=np.float64), (h, 2 * h)),
    ]:
        got = ft.vmap(cell)(x, state)
        want = [cell(x[i], ft.tree_util.tree_map(lambda s, i=i: s[i], state)) for i in range(5)]
        _close(got, ft.tree_util.tree_map(lambda *a: np.stack(a), *want))
    gru = nn.GRU(3, 4, bidirectional=True, rng=0, dtype=np.float64)
    got = ft.vmap(lambda s: gru(s)[0])(x)  # each s unbatched (L, input)
    _close(got, np.stack([gru(x[i])[0] for i in range(5)]))


def test_runs_in_scan() -> None:
    jaxpr = ft.make_jaxpr(lambda m, x: m(x))(nn.LSTM(3, 2, rng=0), np.ones((6, 3), np.float32))
    assert str(jaxpr).count("scan[") == 1


def test_inter_layer_dropout_needs_a_key() -> None:
    x = np.random.default_rng(5).standard_normal((4, 2, 3))
    m = nn.LSTM(3, 4, num_layers=2, dropout=1.0, rng=0, dtype=np.float64)
    _close(m(x), nn.LSTM(3, 4, num_layers=2, rng=0, dtype=np.float64)(x))  # no key: identity
    out, (h, c) = m(x, key=random.PRNGKey(0))
    # dropout=1 zeroes the second layer's input: its output is that of zeros
    top = nn.LSTM(4, 4, rng=0, dtype=np.float64).load_state_dict(
        {k.replace("l1", "l0"): v for k, v in m.state_dict().items() if "l1" in k}
    )
    out1, (h1, c1) = top(np.zeros((4, 2, 4)))
    _close((out, h[1], c[1]), (out1, h1[0], c1[0]))
    half = nn.GRU(3, 4, num_layers=2, dropout=0.5, rng=0)
    a = half(x, key=random.PRNGKey(1))[0]
    assert not np.allclose(a, half(x)[0])
    _close(a, half(x, key=random.PRNGKey(1))[0])


def test_errors_name_the_layer() -> None:
    cell = nn.LSTMCell(3, 4, rng=0)
    with pytest.raises(ValueError, match=r"LSTMCell: expected input of shape \(N, 3\)"):
        cell(np.ones((2, 5)))
    with pytest.raises(ValueError, match=r"LSTMCell: expected a hidden state of shape \(2, 4\)"):
        cell(np.ones((2, 3)), (np.ones((2, 4)), np.ones((3, 4))))
    with pytest.raises(TypeError, match=r"LSTMCell: expected the state as a tuple \(h, c\)"):
        cell(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"GRUCell: expected a hidden state of shape \(4,\)"):
        nn.GRUCell(3, 4, rng=0)(np.ones(3), np.ones((1, 4)))
    with pytest.raises(ValueError, match=r"RNNCell: expected nonlinearity 'tanh' or 'relu'"):
        nn.RNNCell(3, 4, nonlinearity="sigmoid", rng=0)
    with pytest.raises(ValueError, match=r"GRU: expected input of shape \(N, L, input_size\)"):
        nn.GRU(3, 4, batch_first=True, rng=0)(np.ones((2, 5, 4)))
    with pytest.raises(ValueError, match=r"LSTM: expected input of shape \(L, N, input_size\)"):
        nn.LSTM(3, 4, rng=0)(np.ones(3))
    with pytest.raises(ValueError, match=r"GRU: expected an initial hidden state of shape"):
        nn.GRU(3, 4, num_layers=2, rng=0)(np.ones((5, 2, 3)), np.ones((1, 2, 4)))
    with pytest.raises(TypeError, match=r"LSTM: expected hx as a tuple \(h_0, c_0\)"):
        nn.LSTM(3, 4, rng=0)(np.ones((5, 2, 3)), np.ones((1, 2, 4)))
    with pytest.raises(NotImplementedError, match="LSTM: proj_size is not supported"):
        nn.LSTM(3, 4, proj_size=2, rng=0)
    with pytest.raises(ValueError, match=r"RNN: expected num_layers >= 1"):
        nn.RNN(3, 4, num_layers=0, rng=0)
    with pytest.raises(ValueError, match=r"GRU: expected dropout in \[0, 1\]"):
        nn.GRU(3, 4, dropout=1.5, rng=0)
    with pytest.raises(ValueError, match=r"GRUCell: expected positive input_size and hidden"):
        nn.GRUCell(0, 4, rng=0)
