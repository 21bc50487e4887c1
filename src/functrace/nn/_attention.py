"""Attention: ``scaled_dot_product_attention`` and ``MultiheadAttention`` (PyTorch's
semantics, parameter names, layouts and initialisation)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.nn._basic import Linear
from functrace.nn._dropout import dropout
from functrace.nn._init import xavier_uniform
from functrace.nn._module import Module, _rng, field


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape)


_dtype = core.dtype_of


def _as_array(x: Any) -> Any:
    return x if isinstance(x, (core.Tracer, np.ndarray)) else np.asarray(x)


def _check_dropout_p(fname: str, p: Any) -> float:
    if not isinstance(p, (int, float, np.integer, np.floating)) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{fname}: expected a dropout probability in [0, 1], got {p!r}.")
    return float(p)


def _safe_softmax(scores: Any) -> Any:
    """Softmax over the last axis, stable, and all zeros on a row that is entirely
    ``-inf`` (a fully masked row), as PyTorch's ``scaled_dot_product_attention``."""
    m = fnp.max(scores, axis=-1, keepdims=True)
    m = _lax.stop_gradient(fnp.where(fnp.isfinite(m), m, 0))
    e = fnp.exp(scores - m)
    d = fnp.sum(e, axis=-1, keepdims=True)
    return e / fnp.where(d == 0, 1, d)


def _need_key(fname: str, p: float, key: Any) -> None:
    if p > 0 and key is None:
        raise ValueError(
            f"{fname}: expected a dropout_key (a functrace.random key) with dropout_p={p} > 0, "
            "got none. Pass dropout_key=..., or dropout_p=0.0 for inference."
        )


def _attend(fname: str, q: Any, k: Any, v: Any, mask: Any, scale: float, p: float, key: Any):
    """``softmax(q @ k^T * scale + mask) @ v`` with the weights; ``mask`` is additive
    (float) or None."""
    scores = fnp.matmul(q, fnp.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        scores = scores + fnp.astype(mask, _dtype(scores))
    w = _safe_softmax(scores)
    if p > 0:
        w = dropout(w, p, key=key)
    return fnp.matmul(w, v), w


def _broadcastable(fname: str, what: str, shape: tuple[int, ...], target: tuple[int, ...]) -> None:
    try:
        ok = np.broadcast_shapes(shape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{fname}: expected {what} of a shape that broadcasts to {target}, got {shape}."
        )


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    dropout_key: Any = None,
) -> Any:
    """``softmax(query @ key^T * scale + mask) @ value`` (PyTorch's
    ``torch.nn.functional.scaled_dot_product_attention``).

    Shapes: ``query (..., L, E)``, ``key (..., S, E)``, ``value (..., S, Ev)`` with any
    leading batch dimensions (broadcast); the result is ``(..., L, Ev)``. ``scale``
    defaults to ``1 / sqrt(E)``. ``attn_mask`` broadcasts to ``(..., L, S)``: a boolean
    mask says which positions *take part* (True = attend), a float mask is added to the
    scores. ``is_causal=True`` applies the lower-triangular mask (query ``i`` attends to
    keys ``j <= i``) and excludes ``attn_mask``. A row with every position masked gives
    zeros (as PyTorch). Dropout on the attention weights (scaled by ``1/(1-p)``) needs an
    explicit ``dropout_key``; ``dropout_p > 0`` without one is an error.
    """
    fname = "scaled_dot_product_attention"
    q, k, v = _as_array(query), _as_array(key), _as_array(value)
    qs, ks, vs = _shape(q), _shape(k), _shape(v)
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise ValueError(
            f"{fname}: expected query, key and value of rank >= 2 (..., L, E), got shapes "
            f"{qs}, {ks}, {vs}."
        )
    if qs[-1] != ks[-1]:
        raise ValueError(
            f"{fname}: expected query and key with the same last dimension E, got shapes "
            f"{qs} and {ks}."
        )
    if ks[-2] != vs[-2]:
        raise ValueError(
            f"{fname}: expected key and value with the same sequence length S (axis -2), got "
            f"shapes {ks} and {vs}."
        )
    try:
        batch = np.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2])
    except ValueError:
        raise ValueError(
            f"{fname}: expected batch dimensions of query, key and value that broadcast, got "
            f"shapes {qs}, {ks}, {vs}."
        ) from None
    p = _check_dropout_p(fname, dropout_p)
    _need_key(fname, p, dropout_key)
    for what, a in (("query", q), ("key", k), ("value", v)):
        if _dtype(a).kind != "f":
            raise TypeError(f"{fname}: expected a floating-point {what}, got dtype {_dtype(a)}.")
    L, S = qs[-2], ks[-2]
    mask = None
    if is_causal:
        if attn_mask is not None:
            raise ValueError(
                f"{fname}: expected attn_mask=None with is_causal=True, got an attn_mask."
            )
        mask = np.where(np.tril(np.ones((L, S), bool)), 0.0, -np.inf)
    elif attn_mask is not None:
        m = _as_array(attn_mask)
        _broadcastable(fname, "attn_mask", _shape(m), (*batch, L, S))
        if _dtype(m) == np.bool_:
            mask = fnp.where(m, 0.0, -np.inf)
        elif _dtype(m).kind == "f":
            mask = m
        else:
            raise TypeError(
                f"{fname}: expected a boolean or floating attn_mask, got dtype {_dtype(m)}."
            )
    sc = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    out, _ = _attend(fname, q, k, v, mask, sc, p, dropout_key)
    return out


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's ``torch.nn.MultiheadAttention`` parameters,
    layouts and defaults.

    Parameters: ``in_proj_weight (3E, E)`` and ``in_proj_bias (3E,)`` when
    ``kdim == vdim == embed_dim``; otherwise ``q_proj_weight (E, E)``,
    ``k_proj_weight (E, kdim)``, ``v_proj_weight (E, vdim)`` (and ``in_proj_bias``);
    ``out_proj`` a :class:`Linear` (``out_proj.weight``, ``out_proj.bias``). Xavier-uniform
    input projections, zero biases, as PyTorch. ``batch_first=False`` by default: inputs are
    ``(L, N, E)`` (``(N, L, E)`` with ``batch_first=True``), or unbatched ``(L, E)``.
    ``add_bias_kv`` and ``add_zero_attn`` are not supported (an error if True).
    """

    in_proj_weight: Any
    q_proj_weight: Any
    k_proj_weight: Any
    v_proj_weight: Any
    in_proj_bias: Any
    out_proj: Linear
    embed_dim: int = field(static=True)
    num_heads: int = field(static=True)
    dropout: float = field(static=True)
    kdim: int = field(static=True)
    vdim: int = field(static=True)
    batch_first: bool = field(static=True)

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        name = "MultiheadAttention"
        if int(embed_dim) <= 0 or int(num_heads) <= 0:
            raise ValueError(
                f"{name}: expected positive embed_dim and num_heads, got {embed_dim} and "
                f"{num_heads}."
            )
        if int(embed_dim) % int(num_heads):
            raise ValueError(
                f"{name}: expected embed_dim divisible by num_heads, got embed_dim={embed_dim} "
                f"and num_heads={num_heads}."
            )
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                f"{name}: add_bias_kv=True and add_zero_attn=True are not supported, got "
                f"add_bias_kv={add_bias_kv}, add_zero_attn={add_zero_attn}."
            )
        gen = _rng(rng)
        E = int(embed_dim)
        self.embed_dim, self.num_heads = E, int(num_heads)
        self.dropout = _check_dropout_p(name, dropout)
        self.kdim = E if kdim is None else int(kdim)
        self.vdim = E if vdim is None else int(vdim)
        self.batch_first = bool(batch_first)
        if self.kdim == E and self.vdim == E:
            self.in_proj_weight = xavier_uniform(gen, (3 * E, E), dtype)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = xavier_uniform(gen, (E, E), dtype)
            self.k_proj_weight = xavier_uniform(gen, (E, self.kdim), dtype)
            self.v_proj_weight = xavier_uniform(gen, (E, self.vdim), dtype)
        self.in_proj_bias = np.zeros(3 * E, dtype) if bias else None
        out = Linear(E, E, rng=gen, bias=bias, dtype=dtype)
        self.out_proj = out if out.bias is None else out.replace(bias=np.zeros(E, dtype))

    def __call__(
        self,
        query: Any,
        key: Any,
        value: Any,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        *,
        dropout_key: Any = None,
    ) -> tuple[Any, Any]:
        """``(output, weights)`` as PyTorch: ``output (L, N, E)`` (``(N, L, E)`` with
        ``batch_first``, ``(L, E)`` unbatched); ``weights (N, L, S)`` averaged over heads,
        ``(N, num_heads, L, S)`` with ``average_attn_weights=False``, or None with
        ``need_weights=False``.

        ``key_padding_mask (N, S)`` (``(S,)`` unbatched): boolean True = *ignore* that key,
        or float added. ``attn_mask (L, S)`` or ``(N * num_heads, L, S)``: boolean True =
        *not allowed*, or float added. ``is_causal`` is PyTorch's hint that ``attn_mask``
        is the causal mask (it needs ``attn_mask``). Dropout on the attention weights
        (``dropout`` of the constructor) happens only with a ``dropout_key``; without one
        the layer is in inference mode. A query whose keys are all masked gets zero
        attention (PyTorch gives zeros on its ``need_weights=False`` path and NaN on the
        other).
        """
        name = "MultiheadAttention"
        q, k, v = _as_array(query), _as_array(key), _as_array(value)
        qs, ks, vs = _shape(q), _shape(k), _shape(v)
        E, H = self.embed_dim, self.num_heads
        D = E // H
        if len(qs) not in (2, 3) or len(ks) != len(qs) or len(vs) != len(qs):
            raise ValueError(
                f"{name}: expected query, key and value all of rank 3 (batched) or all of rank "
                f"2 (unbatched), got shapes {qs}, {ks}, {vs}."
            )
        for what, s, want in (("query", qs, E), ("key", ks, self.kdim), ("value", vs, self.vdim)):
            if s[-1] != want:
                raise ValueError(
                    f"{name}: expected {what} with last dimension {want}, got shape {s}."
                )
        batched = len(qs) == 3
        if not batched:
            q, k, v = q[None], k[None], v[None]
        elif not self.batch_first:
            q, k, v = (fnp.swapaxes(a, 0, 1) for a in (q, k, v))
        N, L = _shape(q)[:2]
        Nk, S = _shape(k)[:2]
        if _shape(v)[:2] != (Nk, S):
            raise ValueError(
                f"{name}: expected key and value with the same batch and sequence sizes, got "
                f"shapes {ks} and {vs}."
            )
        if Nk != N:
            raise ValueError(
                f"{name}: expected query, key and value with the same batch size, got shapes "
                f"{qs}, {ks}, {vs}."
            )
        p = self.dropout if dropout_key is not None else 0.0
        if self.in_proj_weight is not None:
            w_in = self.in_proj_weight
            wq, wk, wv = w_in[:E], w_in[E : 2 * E], w_in[2 * E :]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b = self.in_proj_bias
        qp = fnp.matmul(q, fnp.transpose(wq))
        kp = fnp.matmul(k, fnp.transpose(wk))
        vp = fnp.matmul(v, fnp.transpose(wv))
        if b is not None:
            qp, kp, vp = qp + b[:E], kp + b[E : 2 * E], vp + b[2 * E :]

        def heads(x: Any, n: int) -> Any:
            return fnp.swapaxes(fnp.reshape(x, (N, n, H, D)), 1, 2)

        mask = self._mask(attn_mask, key_padding_mask, is_causal, batched, N, L, S)
        out, w = _attend(
            name, heads(qp, L), heads(kp, S), heads(vp, S), mask, D**-0.5, p, dropout_key
        )
        out = self.out_proj(fnp.reshape(fnp.swapaxes(out, 1, 2), (N, L, E)))
        if not batched:
            out = out[0]
        elif not self.batch_first:
            out = fnp.swapaxes(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            w = fnp.mean(w, axis=1)
        return out, (w if batched else w[0])

    def _mask(
        self, attn_mask: Any, kpm: Any, is_causal: bool, batched: bool, N: int, L: int, S: int
    ) -> Any:
        """The additive mask of shape broadcasting to ``(N, H, L, S)``, or None."""
        name = "MultiheadAttention"
        H = self.num_heads
        if is_causal and attn_mask is None:
            raise ValueError(
                f"{name}: expected an attn_mask with the is_causal hint (as PyTorch), got "
                "attn_mask=None; pass the causal mask, e.g. "
                "numpy.triu(numpy.ones((L, L), bool), 1)."
            )

        def additive(m: Any, what: str) -> Any:
            dt = _dtype(m)
            if dt == np.bool_:
                return fnp.where(m, -np.inf, 0.0)
            if dt.kind != "f":
                raise TypeError(f"{name}: expected a boolean or floating {what}, got dtype {dt}.")
            return m

        mask = None
        if attn_mask is not None:
            m = _as_array(attn_mask)
            ms = _shape(m)
            full = (N * H, L, S) if batched else (H, L, S)
            if ms != (L, S) and ms != full:
                raise ValueError(
                    f"{name}: expected attn_mask of shape {(L, S)} or {full}, got {ms}."
                )
            mask = additive(m, "attn_mask")
            if len(ms) == 3:
                mask = fnp.reshape(mask, (N, H, L, S))
        if kpm is not None:
            m = _as_array(kpm)
            want = (N, S) if batched else (S,)
            if _shape(m) != want:
                raise ValueError(
                    f"{name}: expected key_padding_mask of shape {want}, got {_shape(m)}."
                )
            km = fnp.reshape(additive(m, "key_padding_mask"), (N, 1, 1, S))
            mask = km if mask is None else mask + km
        return mask


# ---------------------------------------------------------------------------
# jax.nn.dot_product_attention
# ---------------------------------------------------------------------------


def _to_4d(x: Any) -> Any:
    x = _as_array(x)
    missing = 4 - len(_shape(x))
    return fnp.reshape(x, (1,) * missing + _shape(x)) if missing > 0 else x


def _grouped(fname: str, what: str, t: Any, n: int, k: int) -> Any:
    """A ``(B|1, N|1, T|1, S|1)`` bias or mask as ``(B|1, K|1, G|1, T|1, S|1)``."""
    tb, tn, tt, ts = _shape(t)
    if tn == 1:
        return fnp.reshape(t, (tb, 1, 1, tt, ts))
    if tn != n:
        raise ValueError(
            f"{fname}: expected {what} with 1 or {n} heads (axis -3), got shape {_shape(t)}."
        )
    return fnp.reshape(t, (tb, k, n // k, tt, ts))


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """``softmax(query @ key^T * scale + bias, masked) @ value`` per head, with JAX's
    layout and masking (``jax.nn.dot_product_attention``).

    Shapes: ``query (B, T, N, H)``, ``key`` and ``value (B, S, K, H)`` (or without the
    batch axis); ``N`` a multiple of ``K`` (grouped-query attention; ``K = 1`` is
    multi-query). ``bias`` (added) and ``mask`` (boolean, True = attend) are 4-d and
    broadcast to ``(B, N, T, S)``. ``is_causal`` keeps keys ``j <= i``,
    ``local_window_size=(left, right)`` (an int: both) keys ``i - left <= j <= i +
    right``, ``query_seq_lengths``/``key_value_seq_lengths`` (integers, shape ``(B,)``)
    the first positions of each example; queries past their length give zeros. As in
    JAX, masked logits become a large negative number (so a row with every key masked
    attends to all keys equally, where ``scaled_dot_product_attention`` gives zeros),
    and the softmax runs in float32 for float16/float32 inputs; float64 inputs keep
    float64 (JAX rounds them to float32 there). ``return_residual=True`` also returns
    the softmax's log-sum-exp, shape ``(B, T, N)``, without a gradient. ``implementation``
    ``None`` or ``"xla"`` (the same computation here; ``"cudnn"`` is JAX's GPU kernel).
    """
    fname = "dot_product_attention"
    if implementation not in (None, "xla"):
        raise ValueError(
            f"{fname}: expected implementation None or 'xla', got {implementation!r} "
            f"(functrace runs on the CPU)."
        )
    out_shape = _shape(_as_array(query))
    q, k, v = _to_4d(query), _to_4d(key), _to_4d(value)
    b, s, kh, h = _shape(k)
    if len(_shape(q)) != 4 or len(_shape(v)) != 4 or len(_shape(k)) != 4:
        raise ValueError(
            f"{fname}: expected query, key and value of rank 3 or 4, got shapes "
            f"{_shape(q)}, {_shape(k)}, {_shape(v)}."
        )
    if _shape(v) != (b, s, kh, h) or _shape(q)[0] != b or _shape(q)[3] != h:
        raise ValueError(
            f"{fname}: expected key and value of one shape (B, S, K, H) and query (B, T, N, "
            f"H), got shapes {_shape(q)}, {_shape(k)}, {_shape(v)}."
        )
    if not (_dtype(q) == _dtype(k) == _dtype(v)) or _dtype(k).kind != "f":
        raise TypeError(
            f"{fname}: expected query, key and value of one floating dtype, got "
            f"{_dtype(q)}, {_dtype(k)}, {_dtype(v)}."
        )
    t, n = _shape(q)[1], _shape(q)[2]
    if n % kh != 0:
        raise ValueError(
            f"{fname}: expected a number of query heads that is a multiple of the key/value "
            f"heads, got {n} and {kh}."
        )
    g = n // kh
    logits_dtype = np.promote_types(_dtype(k), np.float32)
    qg = fnp.reshape(q, (b, t, kh, g, h)).astype(logits_dtype)
    logits = fnp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dtype))
    sc = 1.0 / math.sqrt(h) if scale is None else scale
    logits = logits * fnp.asarray(sc, logits_dtype)
    if bias is not None:
        bias4 = _to_4d(bias)
        _broadcastable(fname, "bias", _shape(bias4), (b, n, t, s))
        logits = (logits + _grouped(fname, "bias", bias4, n, kh)).astype(logits_dtype)
    keep = _keep_mask(fname, mask, is_causal, local_window_size, query_seq_lengths,
                      key_value_seq_lengths, (b, n, t, s), kh)  # fmt: skip
    if keep is not None:
        big = -0.7 * min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = fnp.where(keep, logits, fnp.asarray(big, logits_dtype))
    m = _lax.stop_gradient(fnp.max(logits, axis=-1, keepdims=True))
    e = fnp.exp(logits - m)
    total = fnp.sum(e, axis=-1, keepdims=True)
    probs = (e / total).astype(_dtype(k))
    out = fnp.reshape(fnp.einsum("bkgts,bskh->btkgh", probs, v), (b, t, n, h))
    if query_seq_lengths is not None:
        rows = fnp.arange(t)[None, :] < fnp.asarray(query_seq_lengths)[:, None]
        out = out * rows[:, :, None, None].astype(_dtype(out))
    out = fnp.reshape(out, out_shape)
    if not return_residual:
        return out
    lse = (fnp.log(total) + m)[..., 0].astype(_dtype(k))  # (B, K, G, T)
    lse = fnp.reshape(fnp.transpose(lse, (0, 3, 1, 2)), (b, t, n))
    return out, _lax.stop_gradient(fnp.reshape(lse, out_shape[:-1]))


def _keep_mask(
    fname: str,
    mask: Any,
    is_causal: bool,
    window: int | tuple[int, int] | None,
    q_len: Any,
    kv_len: Any,
    full: tuple[int, int, int, int],
    kh: int,
) -> Any:
    """Which logits take part, grouped ``(B|1, K|1, G|1, T, S)``; None: all of them."""
    b, n, t, s = full
    keep = None

    def both(m: Any) -> Any:
        return m if keep is None else fnp.logical_and(keep, m)

    if mask is not None:
        m4 = _to_4d(mask)
        if _dtype(m4) != np.bool_:
            raise TypeError(
                f"{fname}: expected a boolean mask (True = attend; pass an additive mask as "
                f"bias), got dtype {_dtype(m4)}."
            )
        _broadcastable(fname, "mask", _shape(m4), full)
        keep = both(_grouped(fname, "mask", m4, n, kh))
    qi, kj = np.arange(t)[:, None], np.arange(s)[None, :]
    if is_causal:
        keep = both(np.tril(np.ones((t, s), bool)))
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep = both((qi <= kj + left) & (qi >= kj - right))
    for what, lengths, axis in (
        ("query_seq_lengths", q_len, 3),
        ("key_value_seq_lengths", kv_len, 4),
    ):
        if lengths is None:
            continue
        lengths = _as_array(lengths)
        if _shape(lengths) != (b,) or _dtype(lengths).kind not in "iu":
            raise ValueError(
                f"{fname}: expected {what} of integers of shape {(b,)}, got shape "
                f"{_shape(lengths)} and dtype {_dtype(lengths)}."
            )
        size = t if axis == 3 else s
        pos = fnp.reshape(fnp.arange(size), (1,) * axis + (size,) + (1,) * (4 - axis))
        keep = both(pos < fnp.reshape(lengths, (b, 1, 1, 1, 1)))
    return keep
