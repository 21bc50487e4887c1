"""Attention, transformer and recurrent layers on fixed inputs, as PyTorch and functrace run them.

Each case names a layer (``kind``), its constructor arguments (``ctor``, the same for
``torch.nn`` and ``functrace.nn``), its array inputs (``inputs``: name -> (shape, how)),
the inputs passed by position (``args``) and by keyword (``kwargs``), and constant call
arguments (``call``). ``tests/fixtures/nn_seq_torch.npz`` holds, per case, the inputs
(``<case>/in/<name>``), the PyTorch module's ``state_dict`` (``<case>/sd/<name>``, float64),
and for ``f32`` and ``f64`` the outputs (``<case>/<dt>/out<i>``, the flattened results) and,
for the cases with ``grad``, the gradients of ``sum(out0 * r)`` with respect to the named
inputs and parameters (``<case>/<dt>/grad/<name>``). The modules were in inference mode
(no dropout). Nothing here imports PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# how an input is drawn: "n" normal, "bool" a boolean mask from a pattern, "f" a float mask
CASES: dict[str, dict[str, Any]] = {
    "sdpa_plain": dict(
        kind="sdpa",
        inputs={"q": ((2, 3, 4), "n"), "k": ((2, 5, 4), "n"), "v": ((2, 5, 6), "n")},
        args=["q", "k", "v"],
        grad=["q", "k", "v"],
    ),
    "sdpa_bool_full_row": dict(
        kind="sdpa",
        inputs={
            "q": ((2, 3, 4), "n"),
            "k": ((2, 5, 4), "n"),
            "v": ((2, 5, 4), "n"),
            "attn_mask": ((3, 5), "bool_full_row"),
        },
        args=["q", "k", "v"],
        kwargs=["attn_mask"],
    ),
    "sdpa_float_bcast": dict(
        kind="sdpa",
        inputs={
            "q": ((2, 2, 3, 4), "n"),
            "k": ((2, 2, 5, 4), "n"),
            "v": ((2, 2, 5, 3), "n"),
            "attn_mask": ((2, 1, 3, 5), "f"),
        },
        args=["q", "k", "v"],
        kwargs=["attn_mask"],
        grad=["q", "attn_mask"],
    ),
    "sdpa_causal_scale": dict(
        kind="sdpa",
        inputs={"q": ((2, 3, 4), "n"), "k": ((2, 5, 4), "n"), "v": ((2, 5, 2), "n")},
        args=["q", "k", "v"],
        call={"is_causal": True, "scale": 0.7},
    ),
    "mha_self": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 6, "num_heads": 2},
        inputs={"x": ((3, 2, 6), "n")},
        args=["x", "x", "x"],
        grad=["x", "in_proj_weight", "in_proj_bias", "out_proj.weight"],
    ),
    "mha_bf_masks": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 6, "num_heads": 3, "batch_first": True},
        inputs={
            "q": ((2, 3, 6), "n"),
            "kv": ((2, 4, 6), "n"),
            "key_padding_mask": ((2, 4), "kpm"),
            "attn_mask": ((3, 4), "bool_sparse"),
        },
        args=["q", "kv", "kv"],
        kwargs=["key_padding_mask", "attn_mask"],
        call={"average_attn_weights": False},
    ),
    "mha_kvdim_nobias": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 4, "num_heads": 2, "kdim": 5, "vdim": 3, "bias": False},
        inputs={
            "q": ((3, 2, 4), "n"),
            "k": ((4, 2, 5), "n"),
            "v": ((4, 2, 3), "n"),
            "attn_mask": ((4, 3, 4), "f"),
        },
        args=["q", "k", "v"],
        kwargs=["attn_mask"],
        grad=["k", "q_proj_weight", "v_proj_weight"],
    ),
    "mha_kvdim_bias": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 4, "num_heads": 2, "kdim": 5, "vdim": 3},
        inputs={"q": ((3, 2, 4), "n"), "k": ((4, 2, 5), "n"), "v": ((4, 2, 3), "n")},
        args=["q", "k", "v"],
    ),
    "mha_unbatched": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 4, "num_heads": 2},
        inputs={
            "q": ((3, 4), "n"),
            "kv": ((5, 4), "n"),
            "key_padding_mask": ((5,), "kpm"),
            "attn_mask": ((2, 3, 5), "f"),
        },
        args=["q", "kv", "kv"],
        kwargs=["key_padding_mask", "attn_mask"],
    ),
    "mha_causal_hint": dict(
        kind="MultiheadAttention",
        ctor={"embed_dim": 4, "num_heads": 1},
        inputs={"x": ((4, 2, 4), "n"), "attn_mask": ((4, 4), "causal_bool")},
        args=["x", "x", "x"],
        kwargs=["attn_mask"],
        call={"is_causal": True, "need_weights": False},
    ),
    "rnncell_tanh": dict(
        kind="RNNCell",
        ctor={"input_size": 3, "hidden_size": 4},
        inputs={"x": ((2, 3), "n"), "h": ((2, 4), "n")},
        args=["x", "h"],
    ),
    "rnncell_relu_unbatched": dict(
        kind="RNNCell",
        ctor={"input_size": 3, "hidden_size": 4, "nonlinearity": "relu"},
        inputs={"x": ((3,), "n"), "h": ((4,), "n")},
        args=["x", "h"],
    ),
    "grucell": dict(
        kind="GRUCell",
        ctor={"input_size": 3, "hidden_size": 4},
        inputs={"x": ((2, 3), "n"), "h": ((2, 4), "n")},
        args=["x", "h"],
    ),
    "grucell_zero_state": dict(
        kind="GRUCell",
        ctor={"input_size": 3, "hidden_size": 4, "bias": False},
        inputs={"x": ((3,), "n")},
        args=["x"],
    ),
    "lstmcell": dict(
        kind="LSTMCell",
        ctor={"input_size": 3, "hidden_size": 4},
        inputs={"x": ((2, 3), "n"), "h": ((2, 4), "n"), "c": ((2, 4), "n")},
        args=["x", ("h", "c")],
    ),
    "lstmcell_zero_state": dict(
        kind="LSTMCell",
        ctor={"input_size": 3, "hidden_size": 4},
        inputs={"x": ((3,), "n")},
        args=["x"],
    ),
    "rnn_relu_2layer_bf": dict(
        kind="RNN",
        ctor={
            "input_size": 3,
            "hidden_size": 4,
            "num_layers": 2,
            "nonlinearity": "relu",
            "batch_first": True,
        },
        inputs={"x": ((2, 5, 3), "n")},
        args=["x"],
    ),
    "rnn_bi_unbatched": dict(
        kind="RNN",
        ctor={"input_size": 3, "hidden_size": 2, "bidirectional": True},
        inputs={"x": ((4, 3), "n"), "h0": ((2, 2), "n")},
        args=["x", "h0"],
    ),
    "gru_bi_2layer": dict(
        kind="GRU",
        ctor={"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True},
        inputs={"x": ((5, 2, 3), "n"), "h0": ((4, 2, 4), "n")},
        args=["x", "h0"],
    ),
    "gru_unbatched_nobias": dict(
        kind="GRU",
        ctor={"input_size": 3, "hidden_size": 4, "bias": False},
        inputs={"x": ((5, 3), "n")},
        args=["x"],
    ),
    "lstm_bi_2layer_bf": dict(
        kind="LSTM",
        ctor={
            "input_size": 3,
            "hidden_size": 4,
            "num_layers": 2,
            "bidirectional": True,
            "batch_first": True,
        },
        inputs={"x": ((2, 5, 3), "n"), "h0": ((4, 2, 4), "n"), "c0": ((4, 2, 4), "n")},
        args=["x", ("h0", "c0")],
        grad=["x", "weight_ih_l0", "weight_hh_l1_reverse", "bias_ih_l1"],
    ),
    "lstm_unbatched": dict(
        kind="LSTM",
        ctor={"input_size": 3, "hidden_size": 2},
        inputs={"x": ((4, 3), "n")},
        args=["x"],
    ),
    "enc_relu_masks": dict(
        kind="TransformerEncoderLayer",
        ctor={"d_model": 8, "nhead": 2, "dim_feedforward": 16},
        inputs={
            "src": ((4, 2, 8), "n"),
            "src_mask": ((4, 4), "causal_bool"),
            "src_key_padding_mask": ((2, 4), "kpm"),
        },
        args=["src"],
        kwargs=["src_mask", "src_key_padding_mask"],
        grad=["src", "self_attn.in_proj_weight", "linear1.weight", "norm2.weight"],
    ),
    "enc_gelu_normfirst_bf": dict(
        kind="TransformerEncoderLayer",
        ctor={
            "d_model": 8,
            "nhead": 4,
            "dim_feedforward": 12,
            "activation": "gelu",
            "norm_first": True,
            "batch_first": True,
            "layer_norm_eps": 1e-4,
        },
        inputs={"src": ((2, 3, 8), "n"), "src_mask": ((3, 3), "f")},
        args=["src"],
        kwargs=["src_mask"],
        grad=["src", "linear2.bias", "norm1.bias"],
    ),
    "enc_unbatched_nobias": dict(
        kind="TransformerEncoderLayer",
        ctor={"d_model": 4, "nhead": 2, "dim_feedforward": 6, "bias": False},
        inputs={"src": ((3, 4), "n")},
        args=["src"],
    ),
    "encoder_stack_norm": dict(
        kind="TransformerEncoder",
        ctor={"d_model": 4, "nhead": 2, "dim_feedforward": 6, "num_layers": 2},
        inputs={"src": ((3, 2, 4), "n"), "mask": ((3, 3), "causal_bool")},
        args=["src"],
        kwargs=["mask"],
    ),
}


def make_input(shape: tuple[int, ...], how: str, rng: np.random.Generator) -> np.ndarray:
    """The input array of a case (the same on both sides: it is recorded)."""
    if how == "n":
        return rng.standard_normal(shape)
    if how == "f":
        m = rng.standard_normal(shape)
        m.reshape(-1)[::5] = -np.inf
        m[..., 0] = 0.0  # no row fully masked
        return m
    if how == "bool_full_row":  # True = attend; row 1 attends to nothing
        m = rng.random(shape) < 0.7
        m[..., 0] = True
        m[1] = False
        return m
    if how == "bool_sparse":  # True = masked out (MultiheadAttention's convention)
        m = rng.random(shape) < 0.4
        m[..., 0] = False
        return m
    if how == "kpm":  # True = pad (ignored key); the first key never is
        m = rng.random(shape) < 0.5
        m[..., 0] = False
        return m
    if how == "causal_bool":  # True = masked out (above the diagonal)
        return np.triu(np.ones(shape, bool), 1)
    raise ValueError(how)


def inputs(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, name)))
    return {k: make_input(s, how, rng) for k, (s, how) in CASES[name]["inputs"].items()}


def call_args(case: dict[str, Any], arrays: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The positional and keyword arguments of a case's call from its input arrays."""
    args = [
        tuple(arrays[n] for n in a) if isinstance(a, tuple) else arrays[a] for a in case["args"]
    ]
    kwargs = {n: arrays[n] for n in case.get("kwargs", [])}
    kwargs.update(case.get("call", {}))
    return args, kwargs


def load_state_dict(module: Any, sd: dict[str, np.ndarray], dtype: Any) -> Any:
    """``module`` with the parameters of a PyTorch ``state_dict`` set by name (nested
    modules as nested fields, ``layers.0.x`` as ``layers[0].x``; the recurrent layers'
    own ``load_state_dict``), cast to ``dtype``."""
    if isinstance(getattr(module, "params", None), dict):
        return module.load_state_dict(sd).replace(
            params={k: np.asarray(v, dtype) for k, v in sd.items()}
        )
    groups: dict[str, dict[str, np.ndarray]] = {}
    leaves: dict[str, np.ndarray] = {}
    for k, v in sd.items():
        head, _, rest = k.partition(".")
        if rest:
            groups.setdefault(head, {})[rest] = v
        else:
            leaves[head] = v
    changes: dict[str, Any] = {}
    for k, v in leaves.items():
        old = getattr(module, k)
        assert old is not None and old.shape == v.shape, (k, old, v.shape)
        changes[k] = np.asarray(v, dtype)
    for k, sub in groups.items():
        if isinstance(module, tuple):
            continue
        child = getattr(module, k)
        if isinstance(child, tuple):
            by_index: dict[int, dict[str, np.ndarray]] = {}
            for kk, v in sub.items():
                i, _, rest = kk.partition(".")
                by_index.setdefault(int(i), {})[rest] = v
            changes[k] = tuple(load_state_dict(c, by_index[i], dtype) for i, c in enumerate(child))
        else:
            changes[k] = load_state_dict(child, sub, dtype)
    return module.replace(**changes)


def flatten(res: Any) -> list[Any]:
    """The arrays of a layer's result in order, None left out."""
    if res is None:
        return []
    if isinstance(res, (tuple, list)):
        return [y for x in res for y in flatten(x)]
    return [res]


def build(ft: Any, name: str, dtype: Any, sd: dict[str, np.ndarray]) -> Any:
    """The functrace module of a case, with the recorded PyTorch parameters (None for the
    function cases)."""
    case = CASES[name]
    nn, kind, ctor = ft.nn, case["kind"], dict(case.get("ctor", {}))
    if kind == "sdpa":
        return None
    if kind == "TransformerEncoder":
        n = ctor.pop("num_layers")
        layer = nn.TransformerEncoderLayer(**ctor, rng=0, dtype=dtype)
        norm = nn.LayerNorm(ctor["d_model"], dtype=dtype)
        mod = nn.TransformerEncoder(layer, n, norm=norm)
    else:
        mod = getattr(nn, kind)(**ctor, rng=0, dtype=dtype)
    return load_state_dict(mod, sd, dtype)


def apply(ft: Any, name: str, module: Any, arrays: dict[str, Any]) -> Any:
    args, kwargs = call_args(CASES[name], arrays)
    if module is None:
        return ft.nn.scaled_dot_product_attention(*args, **kwargs)
    return module(*args, **kwargs)


def param(module: Any, path: str) -> Any:
    """A parameter of a module tree by its PyTorch name (``self_attn.out_proj.weight``)."""
    for part in path.split("."):
        module = module[int(part)] if isinstance(module, tuple) else getattr(module, part)
    return module


def grads(ft: Any, name: str, module: Any, arrays: dict[str, Any], r: Any) -> dict[str, Any]:
    """Gradients of ``sum(out0 * r)`` by the names of the case's ``grad`` list."""
    wanted = CASES[name]["grad"]
    xs = {k: arrays[k] for k in wanted if k in arrays}

    def loss(m: Any, x: Any) -> Any:
        return (flatten(apply(ft, name, m, {**arrays, **x}))[0] * r).sum()

    if module is None:
        return ft.grad(lambda x: loss(None, x))(xs)
    gm, gx = ft.grad(loss, argnums=(0, 1))(module, xs)
    return {k: gx[k] if k in gx else param(gm, k) for k in wanted}


def case_io(fix: Any, name: str, dtype: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The recorded inputs (floats cast to ``dtype``) and ``state_dict`` of a case."""
    pre = f"{name}/in/"
    arrays = {
        k[len(pre) :]: (v if v.dtype == bool else v.astype(dtype))
        for k, v in fix.items()
        if k.startswith(pre)
    }
    pre = f"{name}/sd/"
    sd = {k[len(pre) :]: v for k, v in fix.items() if k.startswith(pre)}
    return arrays, sd


def compare(ft: Any, fix: Any, name: str, dtype: Any) -> None:
    """Outputs (and gradients) of the functrace layer against PyTorch's, in ``dtype``."""
    dt = "f32" if np.dtype(dtype) == np.float32 else "f64"
    tol = {"rtol": 2e-5, "atol": 2e-6} if dt == "f32" else {"rtol": 1e-10, "atol": 1e-12}
    arrays, sd = case_io(fix, name, dtype)
    module = build(ft, name, dtype, sd)
    outs = flatten(apply(ft, name, module, arrays))
    n_ref = len([k for k in fix if k.startswith(f"{name}/{dt}/out")])
    assert len(outs) == n_ref, (name, len(outs), n_ref)
    for i, y in enumerate(outs):
        assert y.dtype == np.dtype(dtype), (name, i, y.dtype)
        np.testing.assert_allclose(y, fix[f"{name}/{dt}/out{i}"], err_msg=f"{name} out{i}", **tol)
    if "grad" in CASES[name]:
        g = grads(ft, name, module, arrays, fix[f"{name}/r"].astype(dtype))
        for k in CASES[name]["grad"]:
            np.testing.assert_allclose(
                g[k], fix[f"{name}/{dt}/grad/{k}"], err_msg=f"{name} grad {k}", **tol
            )
