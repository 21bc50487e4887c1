"""Neural-network building blocks as pytrees (the Equinox design).

A :class:`Module` is a dataclass whose array fields are pytree children and whose
``field(static=True)`` fields are fixed hyperparameters. Modules are immutable
after ``__init__``; a model *is* its parameters, so ``grad(loss)(model, x, y)``
returns a model-shaped tree of gradients and optimizers update it leaf by leaf.

>>> import numpy as np, functrace as ft
>>> from functrace import nn
>>> model = nn.Linear(3, 2, rng=0)
>>> model
Linear(weight=f32[2,3], bias=f32[2], in_features=3, out_features=2)
>>> model(np.ones(3, np.float32)).shape
(2,)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.scipy import special as _special
from functrace.tree_util import keystr, register_dataclass, tree_flatten_with_path, tree_leaves

# ---------------------------------------------------------------------------
# Module
# ---------------------------------------------------------------------------


def field(*, static: bool = False, **kwargs: Any) -> Any:
    """A dataclass field; ``static=True`` makes it part of the tree structure (not a leaf)."""
    metadata = dict(kwargs.pop("metadata", {}) or {})
    metadata["static"] = static
    return dataclasses.field(metadata=metadata, **kwargs)


_FROZEN_MSG = (
    "{cls}: expected no attribute assignment after construction, got {name!r} = .... "
    "Modules are immutable pytrees: make a new one with module.replace({name}=value) or "
    "functrace.tree_util.tree_map."
)


class Module:
    """Base class: subclasses become dataclasses and pytrees automatically (registered
    with ``register_dataclass``: ``field(static=True)`` fields are meta fields, the others
    children; a rebuilt module skips ``__init__``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        user_init = cls.__dict__.get("__init__")
        dataclasses.dataclass(cls, eq=False, repr=False)  # keeps a user-written __init__
        init = cls.__init__

        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            object.__setattr__(self, "_ft_initializing", True)
            try:
                init(self, *args, **kw)
            finally:
                object.__delattr__(self, "_ft_initializing")

        __init__.__doc__ = (user_init or init).__doc__
        __init__.__wrapped__ = init  # type: ignore[attr-defined]
        cls.__init__ = __init__  # type: ignore[method-assign]
        cls._ft_fields = None  # type: ignore[attr-defined]
        register_dataclass(cls, constructor=functools.partial(_from_fields, cls))

    def __setattr__(self, name: str, value: Any) -> None:
        if "_ft_initializing" not in self.__dict__:
            raise AttributeError(_FROZEN_MSG.format(cls=type(self).__name__, name=name))
        object.__setattr__(self, name, value)

    @classmethod
    def _fields(cls) -> tuple[tuple[str, ...], tuple[str, ...]]:
        cached = cls.__dict__.get("_ft_fields")
        if cached is None:
            fs = dataclasses.fields(cls)  # type: ignore[arg-type]
            data = tuple(f.name for f in fs if not f.metadata.get("static", False))
            static = tuple(f.name for f in fs if f.metadata.get("static", False))
            cached = (data, static)
            cls._ft_fields = cached  # type: ignore[attr-defined]
        return cached

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (``__init__`` is not called again)."""
        data, static = self._fields()
        unknown = set(changes) - set(data) - set(static)
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.replace: expected field names from "
                f"{list(data + static)}, got {sorted(unknown)}."
            )
        obj = object.__new__(type(self))
        for n in (*data, *static):
            object.__setattr__(obj, n, changes.get(n, getattr(self, n)))
        return obj

    def __repr__(self) -> str:
        data, static = self._fields()
        parts = [f"{n}={_short(getattr(self, n, None))}" for n in (*data, *static)]
        return f"{type(self).__name__}({', '.join(parts)})"


def _from_fields(cls: type, **fields: Any) -> Any:
    """A module of class ``cls`` with the given fields, ``__init__`` not called."""
    obj: Any = object.__new__(cls)
    for n, v in fields.items():
        object.__setattr__(obj, n, v)
    return obj


def _short(v: Any) -> str:
    if isinstance(v, (np.ndarray, core.Tracer)):
        return core.get_aval(v).str_short()
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_short(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


def _rng(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)):
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"nn: expected rng as an int seed or a numpy.random.Generator, got {type(rng).__name__}."
    )


# ---------------------------------------------------------------------------
# Initializers
# ---------------------------------------------------------------------------


def uniform_init(
    rng: Any, shape: tuple[int, ...], bound: float, dtype: Any = np.float32
) -> np.ndarray:
    """``U(-bound, bound)`` samples of ``shape``."""
    return _rng(rng).uniform(-bound, bound, shape).astype(dtype)


def kaiming_uniform(rng: Any, shape: tuple[int, int], dtype: Any = np.float32) -> np.ndarray:
    """PyTorch's default ``Linear`` weight init: ``U(-1/sqrt(in), 1/sqrt(in))``."""
    bound = 1.0 / math.sqrt(shape[1]) if shape[1] else 0.0
    return uniform_init(rng, shape, bound, dtype)


def xavier_uniform(rng: Any, shape: tuple[int, int], dtype: Any = np.float32) -> np.ndarray:
    """Glorot uniform: ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))``."""
    return uniform_init(rng, shape, math.sqrt(6.0 / (shape[0] + shape[1])), dtype)


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out, in)`` (PyTorch's layout
    and default init)."""

    weight: Any
    bias: Any
    in_features: int = field(static=True)
    out_features: int = field(static=True)

    def __init__(
        self,
        in_features: int,
        out_features: int,
        *,
        rng: Any,
        bias: bool = True,
        dtype: Any = np.float32,
    ) -> None:
        gen = _rng(rng)
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = kaiming_uniform(gen, (out_features, in_features), dtype)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.bias = uniform_init(gen, (out_features,), bound, dtype) if bias else None

    def __call__(self, x: Any) -> Any:
        y = fnp.matmul(x, fnp.transpose(self.weight))
        return y if self.bias is None else y + self.bias


class Lambda(Module):
    """Wrap a parameter-free function (an activation) as a module."""

    fn: Callable[[Any], Any] = field(static=True)

    def __call__(self, x: Any) -> Any:
        return self.fn(x)


class Sequential(Module):
    """Apply layers in order; plain functions are wrapped in :class:`Lambda`."""

    layers: tuple[Any, ...]

    def __init__(self, layers: Sequence[Any]) -> None:
        self.layers = tuple(
            layer if isinstance(layer, Module) else Lambda(layer)  # type: ignore[call-arg]
            for layer in layers
        )

    def __call__(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i: int) -> Any:
        return self.layers[i]

    def __len__(self) -> int:
        return len(self.layers)


class MLP(Module):
    """A multilayer perceptron: ``Linear`` layers of ``sizes`` with ``activation`` between."""

    layers: tuple[Linear, ...]
    activation: Callable[[Any], Any] = field(static=True)

    def __init__(
        self,
        sizes: Sequence[int],
        *,
        rng: Any,
        activation: Callable[[Any], Any] | None = None,
        dtype: Any = np.float32,
    ) -> None:
        if len(sizes) < 2:
            raise ValueError(f"MLP: expected at least two sizes (in, out), got {list(sizes)}.")
        gen = _rng(rng)
        self.layers = tuple(
            Linear(a, b, rng=gen, dtype=dtype) for a, b in zip(sizes[:-1], sizes[1:])
        )
        self.activation = relu if activation is None else activation

    def __call__(self, x: Any) -> Any:
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def _arr(x: Any) -> Any:
    return x if isinstance(x, (core.Tracer, np.ndarray)) else np.asarray(x)


def _float_arr(x: Any) -> Any:
    x = _arr(x)
    return x if core.get_aval(x).dtype.kind in "fc" else fnp.astype(x, np.float64)


def relu(x: Any) -> Any:
    """``max(x, 0)``, with derivative 0 at exactly 0 (as JAX's and PyTorch's ``relu``)."""
    return fnp.where(x > 0, x, 0)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``."""
    return _lax.logistic(_float_arr(x))


def tanh(x: Any) -> Any:
    return fnp.tanh(x)


def gelu(x: Any, approximate: bool = True) -> Any:
    """GELU: the tanh form by default (as ``jax.nn.gelu``), or with ``approximate=False``
    the exact ``x * Phi(x)`` with erf (PyTorch's default)."""
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + fnp.tanh(c * (x + 0.044715 * x * x * x)))
    x = _float_arr(x)
    return 0.5 * x * (1.0 + _lax.erf(x * (1.0 / math.sqrt(2.0))))


def log_softmax(x: Any, axis: int = -1) -> Any:
    """``x - logsumexp(x)`` along ``axis``, computed stably."""
    shifted = x - _lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    return shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=axis, keepdims=True))


def softmax(x: Any, axis: int = -1) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably."""
    shifted = x - _lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    e = fnp.exp(shifted)
    return e / fnp.sum(e, axis=axis, keepdims=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, without overflow for large ``x``."""
    x = _float_arr(x)
    return fnp.maximum(x, 0) + fnp.log1p(fnp.exp(-fnp.abs(x)))


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
) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (statistics of ``x`` by default;
    the variance as ``mean(x**2) - mean**2``, as JAX's default algorithm)."""
    x = _float_arr(x)
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = fnp.mean(fnp.square(x), axis=axis, keepdims=True) - fnp.square(mean)
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
    a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False
) -> Any:
    """``log(sum(b * exp(a)))``, as :func:`functrace.scipy.special.logsumexp`."""
    return _special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


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
    loss = fnp.maximum(logits, 0) - logits * targets + fnp.log1p(fnp.exp(-fnp.abs(logits)))
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


# ---------------------------------------------------------------------------
# Inspecting parameters and gradients
# ---------------------------------------------------------------------------


def named_parameters(tree: Any) -> list[tuple[str, Any]]:
    """``(path, array)`` for every leaf, with paths like ``.layers[0].weight``."""
    leaves, _ = tree_flatten_with_path(tree)
    return [(keystr(p), x) for p, x in leaves]


def count_params(tree: Any) -> int:
    """The number of scalars in all array leaves."""
    return int(sum(np.size(x) for x in tree_leaves(tree)))


def grad_stats(grads: Any) -> dict[str, dict[str, float]]:
    """Per-leaf statistics of a gradient tree: ``{path: {mean, std, min, max, norm}}``
    (a gradient monitor as a pure function of the gradients)."""
    out: dict[str, dict[str, float]] = {}
    for path, g in named_parameters(grads):
        a = np.asarray(g, dtype=np.float64)
        out[path] = {
            "mean": float(a.mean()) if a.size else 0.0,
            "std": float(a.std()) if a.size else 0.0,
            "min": float(a.min()) if a.size else 0.0,
            "max": float(a.max()) if a.size else 0.0,
            "norm": float(np.sqrt(np.sum(a * a))),
        }
    return out


__all__ = [
    "swish",
    "standardize",
    "squareplus",
    "sparse_plus",
    "softplus",
    "soft_sign",
    "silu",
    "selu",
    "relu6",
    "one_hot",
    "mish",
    "logsumexp",
    "log_sigmoid",
    "leaky_relu",
    "hard_tanh",
    "hard_swish",
    "hard_silu",
    "hard_sigmoid",
    "glu",
    "elu",
    "celu",
    "MLP",
    "Lambda",
    "Linear",
    "Module",
    "Sequential",
    "binary_cross_entropy_with_logits",
    "count_params",
    "cross_entropy",
    "field",
    "gelu",
    "grad_stats",
    "kaiming_uniform",
    "log_softmax",
    "mse_loss",
    "named_parameters",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
    "uniform_init",
    "xavier_uniform",
]
