"""Recurrent layers: ``RNNCell``, ``GRUCell``, ``LSTMCell`` and the sequence layers
``RNN``, ``GRU``, ``LSTM`` over ``lax.scan`` (PyTorch's gate order, parameter names,
layouts, defaults and initialisation)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace import numpy as fnp
from functrace import random as _random
from functrace.nn._dropout import dropout
from functrace.nn._init import uniform_init
from functrace.nn._module import Module, _rng, field
from functrace.nn.functional import relu, sigmoid

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape)


def _as_array(x: Any) -> Any:
    return x if isinstance(x, (core.Tracer, np.ndarray)) else np.asarray(x)


def _result_dtype(x: Any, w: Any) -> np.dtype:
    return np.result_type(core.get_aval(x).dtype, core.get_aval(w).dtype)


def _mm_t(x: Any, w: Any) -> Any:
    return fnp.matmul(x, fnp.transpose(w))


def _proj(x: Any, w: Any, b: Any) -> Any:
    y = _mm_t(x, w)
    return y if b is None else y + b


def _cell_step(mode: str, gi: Any, state: Any, w_hh: Any, b_hh: Any) -> Any:
    """One step from the input projection ``gi = x @ w_ih.T + b_ih``: the new state."""
    gh = _proj(state[0] if mode == "LSTM" else state, w_hh, b_hh)
    if mode == "RNN_TANH":
        return fnp.tanh(gi + gh)
    if mode == "RNN_RELU":
        return relu(gi + gh)
    if mode == "GRU":
        H = _shape(gh)[-1] // 3
        r = sigmoid(gi[..., :H] + gh[..., :H])
        z = sigmoid(gi[..., H : 2 * H] + gh[..., H : 2 * H])
        n = fnp.tanh(gi[..., 2 * H :] + r * gh[..., 2 * H :])
        return (1 - z) * n + z * state
    H = _shape(gh)[-1] // 4
    g = gi + gh
    i, f = sigmoid(g[..., :H]), sigmoid(g[..., H : 2 * H])
    c = f * state[1] + i * fnp.tanh(g[..., 2 * H : 3 * H])
    return (sigmoid(g[..., 3 * H :]) * fnp.tanh(c), c)


def _init_params(
    gen: np.random.Generator, shapes: list[tuple[str, tuple[int, ...]]], H: int, dtype: Any
) -> dict[str, Any]:
    bound = 1.0 / math.sqrt(H) if H else 0.0
    return {n: uniform_init(gen, s, bound, dtype) for n, s in shapes}


def _check_sizes(name: str, input_size: Any, hidden_size: Any) -> tuple[int, int]:
    if int(input_size) <= 0 or int(hidden_size) <= 0:
        raise ValueError(
            f"{name}: expected positive input_size and hidden_size, got {input_size} and "
            f"{hidden_size}."
        )
    return int(input_size), int(hidden_size)


class _CellBase(Module):
    weight_ih: Any
    weight_hh: Any
    bias_ih: Any
    bias_hh: Any
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    mode: str = field(static=True)

    def _setup(
        self, mode: str, input_size: Any, hidden_size: Any, bias: bool, rng: Any, dtype: Any
    ) -> None:
        name = type(self).__name__
        i, h = _check_sizes(name, input_size, hidden_size)
        self.input_size, self.hidden_size, self.mode = i, h, mode
        g = _GATES[mode] * h
        shapes: list[tuple[str, tuple[int, ...]]] = [("weight_ih", (g, i)), ("weight_hh", (g, h))]
        if bias:
            shapes += [("bias_ih", (g,)), ("bias_hh", (g,))]
        params = _init_params(_rng(rng), shapes, h, dtype)
        self.weight_ih, self.weight_hh = params["weight_ih"], params["weight_hh"]
        self.bias_ih, self.bias_hh = params.get("bias_ih"), params.get("bias_hh")

    def _run(self, x: Any, state: Any) -> Any:
        name = type(self).__name__
        x = _as_array(x)
        xs = _shape(x)
        if len(xs) not in (1, 2) or xs[-1] != self.input_size:
            raise ValueError(
                f"{name}: expected input of shape (N, {self.input_size}) or "
                f"({self.input_size},), got {xs}."
            )
        want = (*xs[:-1], self.hidden_size)
        lstm = self.mode == "LSTM"
        if state is None:
            z = fnp.zeros(want, _result_dtype(x, self.weight_ih))
            state = (z, z) if lstm else z
        parts = state if lstm else (state,)
        if lstm and (not isinstance(state, (tuple, list)) or len(state) != 2):
            raise TypeError(f"{name}: expected the state as a tuple (h, c), got {type(state)}.")
        parts = tuple(_as_array(s) for s in parts)
        for s in parts:
            if _shape(s) != want:
                raise ValueError(
                    f"{name}: expected a hidden state of shape {want} for input {xs}, got "
                    f"{_shape(s)}."
                )
        gi = _proj(x, self.weight_ih, self.bias_ih)
        return _cell_step(self.mode, gi, parts if lstm else parts[0], self.weight_hh, self.bias_hh)


class RNNCell(_CellBase):
    """An Elman cell ``h' = act(x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)``
    with ``act`` ``tanh`` or ``relu`` (PyTorch's ``torch.nn.RNNCell``): weights
    ``(hidden, input)`` and ``(hidden, hidden)``, all parameters ``U(-1/sqrt(H), 1/sqrt(H))``.
    ``cell(input, hx=None)`` takes ``input (N, input_size)`` or ``(input_size,)`` and ``hx``
    of the matching ``(N, hidden_size)`` / ``(hidden_size,)`` (zeros by default); returns
    ``h'``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell: expected nonlinearity 'tanh' or 'relu', got {nonlinearity!r}."
            )
        self._setup(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, bias, rng, dtype)

    @property
    def nonlinearity(self) -> str:
        return self.mode[4:].lower()

    def __call__(self, input: Any, hx: Any = None) -> Any:
        return self._run(input, hx)


class GRUCell(_CellBase):
    """A GRU cell with PyTorch's gate order (reset, update, new) and equations
    (``torch.nn.GRUCell``): ``r = σ(W_ir x + b_ir + W_hr h + b_hr)``,
    ``z = σ(W_iz x + b_iz + W_hz h + b_hz)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``. ``weight_ih (3H, input)``, ``weight_hh (3H, H)``; all
    parameters ``U(-1/sqrt(H), 1/sqrt(H))``. ``cell(input, hx=None)`` returns ``h'``
    (``hx`` zeros by default)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        self._setup("GRU", input_size, hidden_size, bias, rng, dtype)

    def __call__(self, input: Any, hx: Any = None) -> Any:
        return self._run(input, hx)


class LSTMCell(_CellBase):
    """An LSTM cell with PyTorch's gate order (input, forget, cell, output)
    (``torch.nn.LSTMCell``): ``c' = f * c + i * g``, ``h' = o * tanh(c')``.
    ``weight_ih (4H, input)``, ``weight_hh (4H, H)``; all parameters
    ``U(-1/sqrt(H), 1/sqrt(H))``. ``cell(input, hx=None)`` with ``hx = (h, c)`` (zeros
    by default) returns ``(h', c')``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        self._setup("LSTM", input_size, hidden_size, bias, rng, dtype)

    def __call__(self, input: Any, hx: Any = None) -> Any:
        return self._run(input, hx)


class _RNNBase(Module):
    params: dict[str, Any]
    mode: str = field(static=True)
    input_size: int = field(static=True)
    hidden_size: int = field(static=True)
    num_layers: int = field(static=True)
    bias: bool = field(static=True)
    batch_first: bool = field(static=True)
    dropout: float = field(static=True)
    bidirectional: bool = field(static=True)

    def _setup(
        self,
        mode: str,
        input_size: Any,
        hidden_size: Any,
        num_layers: Any,
        bias: bool,
        batch_first: bool,
        dropout: Any,
        bidirectional: bool,
        rng: Any,
        dtype: Any,
    ) -> None:
        name = type(self).__name__
        i, h = _check_sizes(name, input_size, hidden_size)
        if int(num_layers) < 1:
            raise ValueError(f"{name}: expected num_layers >= 1, got {num_layers}.")
        if not isinstance(dropout, (int, float)) or not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"{name}: expected dropout in [0, 1], got {dropout!r}.")
        self.mode, self.input_size, self.hidden_size = mode, i, h
        self.num_layers, self.bias = int(num_layers), bool(bias)
        self.batch_first, self.dropout = bool(batch_first), float(dropout)
        self.bidirectional = bool(bidirectional)
        g = _GATES[mode] * h
        shapes: list[tuple[str, tuple[int, ...]]] = []
        for layer in range(self.num_layers):
            n_in = i if layer == 0 else h * self._dirs
            for sfx in ("", "_reverse")[: self._dirs]:
                shapes += [(f"weight_ih_l{layer}{sfx}", (g, n_in))]
                shapes += [(f"weight_hh_l{layer}{sfx}", (g, h))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{sfx}", (g,)), (f"bias_hh_l{layer}{sfx}", (g,))]
        self.params = _init_params(_rng(rng), shapes, h, dtype)

    @property
    def _dirs(self) -> int:
        return 2 if self.bidirectional else 1

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params")
        if params is not None and name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def state_dict(self) -> dict[str, Any]:
        """The parameters by PyTorch's names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ...),
        one to one with ``torch_module.state_dict()``."""
        return dict(self.params)

    def load_state_dict(self, state_dict: Any) -> Any:
        """A copy with the parameters of ``state_dict`` (PyTorch's names; arrays are cast to
        this module's dtype). Every parameter must be given, with its shape."""
        name = type(self).__name__
        got = set(state_dict)
        if got != set(self.params):
            raise ValueError(
                f"{name}.load_state_dict: expected the keys {sorted(self.params)}, got "
                f"{sorted(got)}."
            )
        new = {}
        for k, old in self.params.items():
            a = np.asarray(state_dict[k])
            if a.shape != old.shape:
                raise ValueError(
                    f"{name}.load_state_dict: expected {k} of shape {old.shape}, got {a.shape}."
                )
            new[k] = a.astype(old.dtype)
        return self.replace(params=new)

    def _run(self, x: Any, hx: Any, key: Any) -> Any:
        name = type(self).__name__
        lstm = self.mode == "LSTM"
        x = _as_array(x)
        xs = _shape(x)
        layout = "(N, L, input_size)" if self.batch_first else "(L, N, input_size)"
        if len(xs) not in (2, 3) or xs[-1] != self.input_size:
            raise ValueError(
                f"{name}: expected input of shape {layout} or (L, input_size) unbatched, with "
                f"input_size={self.input_size}, got {xs}."
            )
        batched = len(xs) == 3
        if not batched:
            x = x[:, None]
        elif self.batch_first:
            x = fnp.swapaxes(x, 0, 1)
        L, N = _shape(x)[:2]
        nh = self.num_layers * self._dirs
        want = (nh, N, self.hidden_size) if batched else (nh, self.hidden_size)
        if hx is None:
            z = fnp.zeros((nh, N, self.hidden_size), _result_dtype(x, self.params["weight_ih_l0"]))
            hx = (z, z) if lstm else z
        else:
            if lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
                raise TypeError(f"{name}: expected hx as a tuple (h_0, c_0), got {type(hx)}.")
            parts = tuple(_as_array(s) for s in (hx if lstm else (hx,)))
            for s in parts:
                if _shape(s) != want:
                    raise ValueError(
                        f"{name}: expected an initial hidden state of shape {want}, got "
                        f"{_shape(s)}."
                    )
            if not batched:
                parts = tuple(s[:, None] for s in parts)
            hx = parts if lstm else parts[0]
        use_dropout = key is not None and self.dropout > 0 and self.num_layers > 1
        keys = _random.split(key, self.num_layers - 1) if use_dropout else None
        h_out: list[Any] = []
        c_out: list[Any] = []
        inp = x
        for layer in range(self.num_layers):
            if layer and keys is not None:
                inp = dropout(inp, self.dropout, key=keys[layer - 1])
            outs = []
            for d, sfx in enumerate(("", "_reverse")[: self._dirs]):
                pr = self.params
                gi = _proj(inp, pr[f"weight_ih_l{layer}{sfx}"], pr.get(f"bias_ih_l{layer}{sfx}"))
                w_hh, b_hh = pr[f"weight_hh_l{layer}{sfx}"], pr.get(f"bias_hh_l{layer}{sfx}")
                j = layer * self._dirs + d
                s0 = (hx[0][j], hx[1][j]) if lstm else hx[j]

                def step(s: Any, g: Any, w_hh: Any = w_hh, b_hh: Any = b_hh) -> Any:
                    s = _cell_step(self.mode, g, s, w_hh, b_hh)
                    return s, (s[0] if lstm else s)

                s_n, ys = _lax.scan(step, s0, gi, reverse=d == 1)
                outs.append(ys)
                h_out.append(s_n[0] if lstm else s_n)
                if lstm:
                    c_out.append(s_n[1])
            inp = outs[0] if len(outs) == 1 else fnp.concatenate(outs, axis=-1)
        out = inp
        h_n = fnp.stack(h_out)
        c_n: Any = fnp.stack(c_out) if lstm else None
        if not batched:
            out, h_n = out[:, 0], h_n[:, 0]
            c_n = c_n[:, 0] if lstm else None
        elif self.batch_first:
            out = fnp.swapaxes(out, 0, 1)
        return (out, (h_n, c_n)) if lstm else (out, h_n)


_SEQ_DOC = """

    Parameters are kept in ``params``, a dict by PyTorch's names (``weight_ih_l0``,
    ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, with ``_reverse`` for the backward
    direction and ``l1``, ``l2``, ... for deeper layers), also readable as attributes
    (``m.weight_ih_l0``): ``m.state_dict()`` / ``m.load_state_dict(sd)`` map one to one to
    a PyTorch module's ``state_dict``. All parameters ``U(-1/sqrt(H), 1/sqrt(H))``.

    ``batch_first=False`` by default (as PyTorch): input ``(L, N, input_size)``,
    ``(N, L, input_size)`` with ``batch_first=True``, or unbatched ``(L, input_size)``;
    initial state ``(D * num_layers, N, hidden_size)`` (``D = 2`` if bidirectional;
    ``(D * num_layers, hidden_size)`` unbatched), zeros by default. The output is
    ``(L, N, D * hidden_size)`` (the layout of the input) with both directions concatenated.
    Dropout between layers happens only with an explicit ``key`` (without one the layer
    is in inference mode). Time runs in ``functrace.lax.scan``."""


class RNN(_RNNBase):
    """An Elman RNN (PyTorch's ``torch.nn.RNN``): ``rnn(input, hx=None, *, key=None)``
    returns ``(output, h_n)``."""

    __doc__ = (__doc__ or "") + _SEQ_DOC

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: expected nonlinearity 'tanh' or 'relu', got {nonlinearity!r}.")
        self._setup(
            f"RNN_{nonlinearity.upper()}",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            rng,
            dtype,
        )

    @property
    def nonlinearity(self) -> str:
        return self.mode[4:].lower()

    def __call__(self, input: Any, hx: Any = None, *, key: Any = None) -> Any:
        return self._run(input, hx, key)


class GRU(_RNNBase):
    """A multi-layer GRU (PyTorch's ``torch.nn.GRU``, the equations of :class:`GRUCell`):
    ``gru(input, hx=None, *, key=None)`` returns ``(output, h_n)``."""

    __doc__ = (__doc__ or "") + _SEQ_DOC

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        self._setup(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            rng,
            dtype,
        )

    def __call__(self, input: Any, hx: Any = None, *, key: Any = None) -> Any:
        return self._run(input, hx, key)


class LSTM(_RNNBase):
    """A multi-layer LSTM (PyTorch's ``torch.nn.LSTM``, the equations of
    :class:`LSTMCell`): ``lstm(input, (h_0, c_0)=None, *, key=None)`` returns
    ``(output, (h_n, c_n))``. ``proj_size`` other than 0 is not supported."""

    __doc__ = (__doc__ or "") + _SEQ_DOC

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        if proj_size:
            raise NotImplementedError(
                f"LSTM: proj_size is not supported, expected 0, got {proj_size}."
            )
        self._setup(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            rng,
            dtype,
        )

    def __call__(self, input: Any, hx: Any = None, *, key: Any = None) -> Any:
        return self._run(input, hx, key)
