"""Activations and losses as plain functions (``jax.nn``'s and ``torch.nn.functional``'s
names and conventions); ``functrace.nn`` re-exports each of them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.custom_derivatives import custom_jvp
from functrace.nn._conv import (  # noqa: F401  (convolutions, as in torch.nn.functional)
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
)
from functrace.nn._pool import (  # noqa: F401  (pooling, re-exported as in torch.nn.functional)
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from functrace.scipy import special as _special


def _arr(x: Any) -> Any:
    return x if isinstance(x, (core.Tracer, np.ndarray)) else np.asarray(x)


def _float_arr(x: Any) -> Any:
    x = _arr(x)
    return x if core.get_aval(x).dtype.kind in "fc" else fnp.astype(x, np.float64)


def relu(x: Any) -> Any:
    """``max(x, 0)``, with derivative 0 at exactly 0 (as JAX's and PyTorch's ``relu``);
    NaN stays NaN."""
    return fnp.where(x <= 0, 0, x)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``."""
    return _lax.logistic(_float_arr(x))


def tanh(x: Any) -> Any:
    """The hyperbolic tangent, ``functrace.numpy.tanh`` (as ``jax.nn.tanh``)."""
    return fnp.tanh(x)


def gelu(x: Any, approximate: bool = True) -> Any:
    """GELU: the tanh form by default (as ``jax.nn.gelu``), or with ``approximate=False``
    the exact ``x * Phi(x)`` with erf (PyTorch's default)."""
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + fnp.tanh(c * (x + 0.044715 * x * x * x)))
    x = _float_arr(x)
    return 0.5 * x * _lax.erfc(x * (-1.0 / math.sqrt(2.0)))  # erfc: no cancellation at x << 0


def _masked_shift(x: Any, axis: Any, where: Any) -> tuple[Any, Any]:
    """``x`` minus its (gradient-free) maximum along ``axis`` over the entries ``where``
    selects (all when None), with the others ``-inf``; and the mask as an array."""
    if where is None:
        return x - _lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True)), None
    mask = fnp.broadcast_to(fnp.asarray(where, dtype=bool), fnp.shape(x))
    x = fnp.where(mask, x, -np.inf)
    return x - _lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True)), mask


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``axis``, computed stably; with ``where``, over the
    selected entries only, the others ``-inf`` (as JAX)."""
    shifted, mask = _masked_shift(_float_arr(x), axis, where)
    out = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=axis, keepdims=True))
    return out if mask is None else fnp.where(mask, out, -np.inf)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably; with ``where``, over
    the selected entries only, the others 0 (as JAX)."""
    shifted, mask = _masked_shift(_float_arr(x), axis, where)
    e = fnp.exp(shifted)
    out = e / fnp.sum(e, axis=axis, keepdims=True)
    return out if mask is None else fnp.where(mask, out, 0.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@custom_jvp
def _softplus(x: Any) -> Any:
    return fnp.maximum(x, 0) + fnp.log1p(fnp.exp(-fnp.abs(x)))


# the derivative sigmoid(x), smooth at 0 (differentiating the formula's abs and maximum
# there would give second derivative 0 instead of 1/4)
_softplus.defjvps(lambda t, ans, x: t * _lax.logistic(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, without overflow for large ``x``; its derivative is
    ``sigmoid(x)`` (every order right at 0, as JAX's)."""
    return _softplus(_float_arr(x))


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for very negative ``x``."""
    return -softplus(-_float_arr(x))


def silu(x: Any) -> Any:
    """SiLU (swish): ``x * sigmoid(x)``."""
    x = _float_arr(x)
    return x * _lax.logistic(x)


swish = silu


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Any:
    """``x`` where ``x >= 0``, else ``negative_slope * x`` (derivative 1 at 0, as JAX)."""
    x = _float_arr(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _float_arr(x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(fnp.where(x > 0, 0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)`` (continuously differentiable)."""
    x = _float_arr(x)
    return fnp.maximum(x, 0) + alpha * fnp.expm1(fnp.minimum(x, 0) / alpha)


def selu(x: Any) -> Any:
    """Self-normalising ELU: ``scale * elu(x, alpha)`` with the constants of Klambauer et al."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``, with derivative 0 at 0 and at 6 (as JAX)."""
    x = _arr(x)
    return fnp.where(x <= 0, 0, fnp.where(x >= 6, 6, x))


def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6``."""
    return relu6(_float_arr(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)``."""
    x = _float_arr(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to ``[-1, 1]`` (derivative 1 at the ends, as JAX)."""
    x = _arr(x)
    return fnp.where(x > 1, 1, fnp.where(x < -1, -1, x))


def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)``."""
    x = _float_arr(x)
    return x / (fnp.abs(x) + 1)


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ``relu``."""
    x = _float_arr(x)
    return (x + fnp.sqrt(fnp.square(x) + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 below -1, ``x`` above 1, ``(x + 1)**2 / 4`` between."""
    x = _float_arr(x)
    return fnp.where(x <= -1, 0, fnp.where(x >= 1, x, fnp.square(x + 1) / 4))


def sparse_sigmoid(x: Any) -> Any:
    """0 below -1, 1 above 1, ``(x + 1) / 2`` between: the derivative of
    :func:`sparse_plus` (``jax.nn.sparse_sigmoid``). At -1 and 1 the derivative is 0.25,
    JAX's (its clip is a ``maximum`` then a ``minimum``, each giving half at a tie;
    ``fnp.clip`` passes the whole gradient there)."""
    x = _float_arr(x)
    return 0.5 * fnp.minimum(fnp.maximum(x + 1.0, 0.0), 2.0)


def identity(x: Any) -> Any:
    """``x`` itself, as an array (``jax.nn.identity``)."""
    return _arr(x)


@custom_jvp
def _log1mexp(x: Any) -> Any:
    below = x < math.log(2.0)  # (each branch accurate where it is taken)
    return fnp.where(below, fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


_log1mexp.defjvps(lambda t, ans, x: t / fnp.expm1(x))


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate for small and large ``x``
    (``jax.nn.log1mexp``: ``log(-expm1(-x))`` below ``log 2``, ``log1p(-exp(-x))``
    above); its derivative is ``1 / expm1(x)``."""
    return _log1mexp(_float_arr(x))


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x)))`` over ``axis``, stably: ``logsumexp(x) - log(n)``, with ``n``
    the number of entries reduced (those where ``where`` is True, when given)
    (``jax.nn.logmeanexp``)."""
    x = _float_arr(x)
    if where is None:
        n = fnp.sum(fnp.ones_like(x), axis=axis, keepdims=keepdims)
    else:
        where = fnp.broadcast_to(_arr(where), core.get_aval(x).shape)
        x = fnp.where(where, x, -np.inf)
        n = fnp.sum(where.astype(core.get_aval(x).dtype), axis=axis, keepdims=keepdims)
    return _special.logsumexp(x, axis=axis, keepdims=keepdims) - fnp.log(n)


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))``."""
    x = _float_arr(x)
    return x * fnp.tanh(softplus(x))


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``x`` along ``axis``."""
    x = _float_arr(x)
    n = core.get_aval(x).shape[axis]
    if n % 2:
        raise ValueError(f"glu: expected an even size along axis {axis}, got {n}.")
    a, b = fnp.split(x, 2, axis=axis)
    return a * _lax.logistic(b)


def standardize(
    x: Any,
    axis: Any = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: Any = 1e-5,
    where: Any = None,
    *,
    algorithm: str = "fast",
) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (statistics of ``x`` by
    default, over the elements where ``where`` is true if given). The variance is
    ``mean(x**2) - mean**2`` with ``algorithm="fast"`` (JAX's default) and
    ``mean((x - mean)**2)`` with ``"stable"``."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: expected algorithm 'fast' or 'stable', got {algorithm!r}.")
    x = _float_arr(x)
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(x - mean), axis=axis, keepdims=True, where=where)
        else:
            sq = fnp.mean(fnp.square(x), axis=axis, keepdims=True, where=where)
            variance = sq - fnp.square(mean)
    return (x - mean) / fnp.sqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """``x[..., None] == arange(num_classes)`` as ``dtype`` (float by default), the new axis
    at ``axis``. Labels outside ``[0, num_classes)`` give all-zero rows (as JAX)."""
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot: expected a static Python int num_classes, got {num_classes!r}.")
    x = _arr(x)
    ndim = len(core.get_aval(x).shape) + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"one_hot: expected axis in [{-ndim}, {ndim}), got {axis}.")
    hot = fnp.expand_dims(x, -1) == fnp.arange(int(num_classes))
    hot = fnp.astype(hot, np.float64 if dtype is None else dtype)
    return fnp.moveaxis(hot, -1, axis)


def logsumexp(
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """``log(sum(b * exp(a)))``, as :func:`functrace.scipy.special.logsumexp`."""
    return _special.logsumexp(
        a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where
    )


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------


def _reduce(loss: Any, reduction: str, fname: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{fname}: expected reduction 'mean', 'sum' or 'none', got {reduction!r}.")


def _check_same_shape(fname: str, a: Any, b: Any, what: str) -> None:
    sa, sb = core.get_aval(a).shape, core.get_aval(b).shape
    if sa != sb:
        raise ValueError(f"{fname}: expected {what} of the same shape, got {sa} and {sb}.")


def mse_loss(pred: Any, target: Any, reduction: str = "mean") -> Any:
    """Mean squared error ``(pred - target)**2`` (PyTorch's ``MSELoss``)."""
    pred, target = _arr(pred), _arr(target)
    _check_same_shape("mse_loss", pred, target, "predictions and targets")
    return _reduce(fnp.square(pred - target), reduction, "mse_loss")


def cross_entropy(logits: Any, labels: Any, reduction: str = "mean") -> Any:
    """Softmax cross-entropy of ``logits`` (..., C) against integer class ``labels`` (...)
    or class probabilities (..., C) (PyTorch's ``CrossEntropyLoss``), via log-softmax."""
    logits, labels = _arr(logits), _arr(labels)
    la, ya = core.get_aval(logits), core.get_aval(labels)
    logp = log_softmax(logits, axis=-1)
    if ya.dtype.kind in "iub":
        if ya.shape != la.shape[:-1]:
            raise ValueError(
                f"cross_entropy: expected integer labels of shape {la.shape[:-1]} "
                f"for logits of shape {la.shape}, got {ya.shape}."
            )
        concrete = core.concrete_or_none(labels)
        n_classes = la.shape[-1]
        if (
            concrete is not None
            and concrete.size
            and (concrete.min() < 0 or concrete.max() >= n_classes)
        ):
            raise ValueError(
                f"cross_entropy: expected labels in [0, {n_classes}), got values "
                f"in [{concrete.min()}, {concrete.max()}]."
            )
        onehot = fnp.equal(fnp.expand_dims(labels, -1), np.arange(n_classes))
        nll = -fnp.sum(fnp.where(onehot, logp, 0.0), axis=-1)
    else:
        _check_same_shape("cross_entropy", logits, labels, "logits and probability targets")
        nll = -fnp.sum(labels * logp, axis=-1)
    return _reduce(nll, reduction, "cross_entropy")


def binary_cross_entropy_with_logits(logits: Any, targets: Any, reduction: str = "mean") -> Any:
    """``-[t log sigmoid(z) + (1 - t) log(1 - sigmoid(z))]``, computed stably."""
    logits, targets = _arr(logits), _arr(targets)
    _check_same_shape("binary_cross_entropy_with_logits", logits, targets, "logits and targets")
    loss = _softplus(logits) - logits * targets
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")
