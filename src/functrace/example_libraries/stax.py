"""Neural-network layers as ``(init_fun, apply_fun)`` pairs, as in ``jax.example_libraries.stax``.

A layer is a pair of pure functions::

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs

``rng`` is a PRNG key from ``functrace.random`` (only initialisers and ``Dropout``
draw random numbers; ``apply_fun`` of every other layer is deterministic, so a model
can be applied to params built any way). Shapes may use ``-1`` for the batch
dimension. Combinators (:func:`serial`, :func:`parallel`) build layers from layers;
params are nested tuples and lists, i.e. pytrees, so ``grad``, ``jit`` and the
:mod:`~functrace.example_libraries.optimizers` work on them directly.

Layers here: ``Dense``, the elementwise ``Tanh``, ``Relu``, ``Exp``, ``LogSoftmax``,
``Softmax``, ``Softplus``, ``Sigmoid``, ``Elu``, ``LeakyRelu``, ``Selu``, ``Gelu``
(the tanh approximation, as JAX's default), ``BatchNorm``, ``Flatten``, ``Identity``,
``FanOut``, ``FanInSum``, ``FanInConcat``, ``Dropout``, the convolutions ``Conv``,
``GeneralConv``, ``ConvTranspose``, ``Conv1DTranspose``, ``GeneralConvTranspose``, the
pooling layers ``MaxPool``, ``SumPool``, ``AvgPool``, and the combinators ``serial``,
``parallel`` and ``shape_dependent``.

As in JAX, ``Dropout(rate)`` keeps each entry with probability ``rate`` (and scales
kept entries by ``1 / rate``) in ``mode="train"``, and is the identity otherwise.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import lax as _lax
from functrace import nn as _nn
from functrace import numpy as fnp
from functrace import random
from functrace.example_libraries.initializers import glorot_normal, normal, ones, zeros
from functrace.lax._util import conv_transpose_pads

Layer = tuple[Callable[..., Any], Callable[..., Any]]

# ---------------------------------------------------------------------------
# Activations (jax.nn's definitions)
# ---------------------------------------------------------------------------


def relu(x: Any) -> Any:
    return fnp.maximum(x, 0)


def sigmoid(x: Any) -> Any:
    return _nn.sigmoid(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed stably."""
    return fnp.logaddexp(x, 0)


def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    safe = fnp.where(x > 0, 0.0, x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(safe))


def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
    return fnp.where(x >= 0, x, negative_slope * x)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """Scaled ELU with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Any:
    """GELU; the tanh approximation by default (as JAX), the erf form with ``approximate=False``."""
    return _nn.gelu(x, approximate=approximate)


def log_softmax(x: Any, axis: int = -1) -> Any:
    """``x - logsumexp(x)`` along ``axis`` (``jax.nn.log_softmax``; stax's ``logsoftmax``)."""
    return _nn.log_softmax(x, axis=axis)


def softmax(x: Any, axis: int = -1) -> Any:
    return _nn.softmax(x, axis=axis)


logsoftmax = log_softmax  # the names JAX's stax exports for these
glorot = glorot_normal
randn = normal


def standardize(x: Any, axis: Any = -1, epsilon: float = 1e-5) -> Any:
    """``(x - mean) / sqrt(var + epsilon)`` over ``axis``, with ``var = mean(x**2) - mean**2``."""
    mean = fnp.mean(x, axis=axis, keepdims=True)
    variance = fnp.mean(fnp.square(x), axis=axis, keepdims=True) - fnp.square(mean)
    return (x - mean) / fnp.sqrt(variance + epsilon)


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------


def _check_shape(fname: str, input_shape: Any, min_ndim: int = 1) -> tuple[Any, ...]:
    if not isinstance(input_shape, (tuple, list)) or not all(
        isinstance(d, (int, np.integer)) for d in input_shape
    ):
        raise TypeError(f"{fname}: input_shape must be a tuple of ints, got {input_shape!r}")
    if len(input_shape) < min_ndim:
        raise ValueError(
            f"{fname}: input_shape must have at least {min_ndim} dimension(s), "
            f"got {tuple(input_shape)}"
        )
    return tuple(input_shape)


def Dense(
    out_dim: int,
    W_init: Callable[..., Any] = glorot_normal(),
    b_init: Callable[..., Any] = normal(),
) -> Layer:
    """Fully connected layer: ``inputs @ W + b`` with ``W`` of shape ``(in_dim, out_dim)``."""

    def init_fun(rng: Any, input_shape: Any) -> Any:
        input_shape = _check_shape("stax.Dense init_fun", input_shape)
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return fnp.dot(inputs, W) + b

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng: Any, input_shape: Any) -> Any:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Callable[..., Any] = zeros,
    gamma_init: Callable[..., Any] = ones,
) -> Layer:
    """Batch normalisation over ``axis`` with learned shift ``beta`` and scale ``gamma``.

    The statistics are those of the current batch (there are no running averages, as
    in JAX's stax). ``beta`` and ``gamma`` have the input shape without ``axis``;
    with ``center=False``/``scale=False`` the corresponding param is ``()``.
    """
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)

    def init_fun(rng: Any, input_shape: Any) -> Any:
        input_shape = _check_shape("stax.BatchNorm init_fun", input_shape)
        nd = len(input_shape)
        norm_axes = {a % nd for a in axes}
        shape = tuple(d for i, d in enumerate(input_shape) if i not in norm_axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        nd = fnp.ndim(x)
        norm_axes = tuple(sorted({a % nd for a in axes}))
        ed = tuple(None if i in norm_axes else slice(None) for i in range(nd))
        z = standardize(x, norm_axes, epsilon=epsilon)
        if scale:
            z = gamma[ed] * z
        if center:
            z = z + beta[ed]
        return z

    return init_fun, apply_fun


def _flatten_init(rng: Any, input_shape: Any) -> Any:
    input_shape = _check_shape("stax.Flatten init_fun", input_shape)
    return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()


def _flatten_apply(params: Any, inputs: Any, **kwargs: Any) -> Any:
    return fnp.reshape(inputs, (fnp.shape(inputs)[0], -1))


Flatten: Layer = (_flatten_init, _flatten_apply)
"""Flatten all but the leading (batch) dimension."""

Identity: Layer = (
    lambda rng, input_shape: (input_shape, ()),
    lambda params, inputs, **kwargs: inputs,
)
"""The identity layer."""


def FanOut(num: int) -> Layer:
    """Send the input to ``num`` outputs (a list of ``num`` copies)."""

    def init_fun(rng: Any, input_shape: Any) -> Any:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_init(rng: Any, input_shape: Any) -> Any:
    if not isinstance(input_shape, (tuple, list)) or not input_shape:
        raise TypeError(
            f"stax.FanInSum init_fun: expected a list of input shapes, got {input_shape!r}"
        )
    return input_shape[0], ()


def _fan_in_sum_apply(params: Any, inputs: Any, **kwargs: Any) -> Any:
    return functools.reduce(operator.add, inputs)


FanInSum: Layer = (_fan_in_sum_init, _fan_in_sum_apply)
"""Sum a list of inputs."""


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenate a list of inputs along ``axis``."""

    def init_fun(rng: Any, input_shape: Any) -> Any:
        if not isinstance(input_shape, (tuple, list)) or not input_shape:
            raise TypeError(
                f"stax.FanInConcat init_fun: expected a list of input shapes, got {input_shape!r}"
            )
        first = tuple(input_shape[0])
        ax = axis % len(first)
        concat_size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (concat_size,) + first[ax + 1 :], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.concatenate(list(inputs), axis=axis)

    return init_fun, apply_fun


_DROPOUT_NEEDS_RNG = (
    "stax.Dropout apply_fun needs a PRNG key: call it as apply_fun(params, inputs, rng=key) "
    "with a key from functrace.random (e.g. functrace.random.key(0))"
)


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout that keeps each entry with probability ``rate`` (JAX's convention).

    In ``mode="train"`` kept entries are scaled by ``1 / rate`` and the others set to
    0; ``apply_fun`` then needs ``rng=key``. In any other mode it is the identity.
    """

    def init_fun(rng: Any, input_shape: Any) -> Any:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(_DROPOUT_NEEDS_RNG)
        if mode == "train":
            keep = random.bernoulli(rng, rate, fnp.shape(inputs))
            return fnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# ---------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------


def _kernel_shape(
    fname: str, dimension_numbers: Any, out_chan: int, filter_shape: Any, input_shape: Any
) -> list[int]:
    lhs_spec, rhs_spec, _ = dimension_numbers
    shape = _check_shape(fname, input_shape, len(lhs_spec))
    if len(shape) != len(lhs_spec):
        raise ValueError(
            f"{fname}: expected an input of rank {len(lhs_spec)} (layout {lhs_spec}), got "
            f"shape {shape}"
        )
    sizes = iter(filter_shape)
    return [
        out_chan if c == "O" else shape[lhs_spec.index("C")] if c == "I" else int(next(sizes))
        for c in rhs_spec
    ]


def GeneralConv(
    dimension_numbers: Any,
    out_chan: int,
    filter_shape: Any,
    strides: Any = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),
) -> Layer:
    """Convolution layer with the layouts ``dimension_numbers`` (lhs, rhs, out specs such
    as ``("NCHW", "OIHW", "NCHW")``), ``out_chan`` output features, a kernel of
    ``filter_shape`` (its spatial dims), ``strides`` (default 1) and ``padding``
    ("VALID", "SAME" or (lo, hi) pairs). Params ``(W, b)``: ``W`` drawn by
    ``glorot_normal`` over the kernel's in/out axes, ``b`` (1 except on the output's
    feature axis) by ``normal(1e-6)``, as JAX's stax."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    steps = tuple(strides) if strides else one
    w_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Any) -> Any:
        kernel = _kernel_shape(
            "stax.GeneralConv init_fun", dimension_numbers, out_chan, filter_shape, input_shape
        )
        out = _lax.conv_general_shape_tuple(
            tuple(input_shape), kernel, steps, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return tuple(out), (w_init(k1, kernel), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        y = _lax.conv_general_dilated(
            inputs, W, steps, padding, one, one, dimension_numbers=dimension_numbers
        )
        return y + b

    return init_fun, apply_fun


def Conv(
    out_chan: int,
    filter_shape: Any,
    strides: Any = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),
) -> Layer:
    """2-d convolution layer in JAX's default layouts (NHWC input, HWIO kernel):
    :func:`GeneralConv` with ``("NHWC", "HWIO", "NHWC")``."""
    return GeneralConv(
        ("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init
    )


def GeneralConvTranspose(
    dimension_numbers: Any,
    out_chan: int,
    filter_shape: Any,
    strides: Any = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),
) -> Layer:
    """Transposed convolution layer (``lax.conv_transpose``) with the layouts
    ``dimension_numbers``, JAX stax's parameters and init (see :func:`GeneralConv`):
    "SAME" padding gives ``in * stride`` outputs, "VALID" ``in * stride + max(k -
    stride, 0)``."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    steps = tuple(strides) if strides else one
    w_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Any) -> Any:
        kernel = _kernel_shape(
            "stax.GeneralConvTranspose init_fun",
            dimension_numbers,
            out_chan,
            filter_shape,
            input_shape,
        )
        spatial_in = [input_shape[i] for i, c in enumerate(lhs_spec) if c not in "NC"]
        spatial_k = [kernel[i] for i, c in enumerate(rhs_spec) if c not in "OI"]
        if isinstance(padding, str):
            pads = [conv_transpose_pads(k, s, padding.upper()) for k, s in zip(spatial_k, steps)]
        else:
            pads = [tuple(p) for p in padding]
        spatial_out = iter(
            (n - 1) * s - k + 2 + lo + hi
            for n, k, s, (lo, hi) in zip(spatial_in, spatial_k, steps, pads)
        )
        out = tuple(
            input_shape[lhs_spec.index("N")]
            if c == "N"
            else out_chan
            if c == "C"
            else next(spatial_out)
            for c in out_spec
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return out, (w_init(k1, kernel), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        y = _lax.conv_transpose(inputs, W, steps, padding, dimension_numbers=dimension_numbers)
        return y + b

    return init_fun, apply_fun


def ConvTranspose(
    out_chan: int,
    filter_shape: Any,
    strides: Any = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),
) -> Layer:
    """2-d transposed convolution in NHWC/HWIO: :func:`GeneralConvTranspose` with
    ``("NHWC", "HWIO", "NHWC")``."""
    dn = ("NHWC", "HWIO", "NHWC")
    return GeneralConvTranspose(dn, out_chan, filter_shape, strides, padding, W_init, b_init)


def Conv1DTranspose(
    out_chan: int,
    filter_shape: Any,
    strides: Any = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = normal(1e-6),
) -> Layer:
    """1-d transposed convolution in NHC/HIO: :func:`GeneralConvTranspose` with
    ``("NHC", "HIO", "NHC")``."""
    dn = ("NHC", "HIO", "NHC")
    return GeneralConvTranspose(dn, out_chan, filter_shape, strides, padding, W_init, b_init)


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


def _pads(
    name: str,
    shape: tuple[int, ...],
    window: tuple[int, ...],
    strides: tuple[int, ...],
    padding: Any,
) -> list[tuple[int, int]]:
    """(lo, hi) per axis for "SAME" / "VALID" / explicit pairs (``lax.padtype_to_pads``;
    a ``-1`` batch dim has window 1 and stride 1, so it gets no padding)."""
    if not isinstance(padding, str):
        return [(int(lo), int(hi)) for lo, hi in padding]
    return _lax.padtype_to_pads(shape, window, strides, padding, fname=f"stax.{name}")


def _pooling_layer(name: str, reducer: str) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: Any, strides: Any = None, padding: Any = "VALID", spec: Any = None
    ) -> Layer:
        window = tuple(int(w) for w in window_shape)
        steps = tuple(int(v) for v in strides) if strides else (1,) * len(window)
        if len(steps) != len(window):
            raise ValueError(
                f"stax.{name}: expected strides with one entry per window dim "
                f"({len(window)}), got {strides!r}"
            )
        if spec is None:
            non_spatial: tuple[int, ...] = (0, len(window) + 1)
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window = window[:i] + (1,) + window[i:]
            steps = steps[:i] + (1,) + steps[i:]

        def init_fun(rng: Any, input_shape: Any) -> Any:
            shape = _check_shape(f"stax.{name} init_fun", input_shape, len(window))
            if len(shape) != len(window):
                raise ValueError(
                    f"stax.{name} init_fun: expected an input of rank {len(window)} (batch, "
                    f"channels and {len(window) - 2} spatial dims), got shape {shape}"
                )
            pads = _pads(name, shape, window, steps, padding)
            # JAX's shape rule, which also makes a -1 batch dim 0
            out = tuple(
                max((n + lo + hi - w) // st + 1, 0)
                for n, w, st, (lo, hi) in zip(shape, window, steps, pads)
            )
            return out, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            pads = _pads(name, fnp.shape(inputs), window, steps, padding)
            if reducer == "max":
                return _lax.reduce_window_max(inputs, window, steps, pads)
            out = _lax.reduce_window_sum(inputs, window, steps, pads)
            if reducer == "sum":
                return out
            # JAX's rescaling: divide by the number of real (unpadded) elements per window
            shp = fnp.shape(inputs)
            spatial = tuple(d for i, d in enumerate(shp) if i not in non_spatial)
            sp_window = tuple(w for i, w in enumerate(window) if i not in non_spatial)
            sp_steps = tuple(v for i, v in enumerate(steps) if i not in non_spatial)
            sp_pads = [p for i, p in enumerate(pads) if i not in non_spatial]
            sizes = np.ones((), np.dtype(inputs.dtype))
            for n, w, st, (lo, hi) in zip(spatial, sp_window, sp_steps, sp_pads):
                start = np.arange(max((n + lo + hi - w) // st + 1, 0)) * st - lo
                count = np.minimum(start + w, n) - np.maximum(start, 0)
                sizes = np.multiply.outer(sizes, count.astype(sizes.dtype))
            for i in sorted(non_spatial):
                sizes = np.expand_dims(sizes, i)
            return out / sizes

        return init_fun, apply_fun

    PoolingLayer.__name__ = name
    PoolingLayer.__qualname__ = name
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", "max")
MaxPool.__doc__ = """Max pooling over ``window_shape`` (spatial dims only) with ``strides``
(default 1) and ``padding`` ("VALID", "SAME" or (lo, hi) pairs); the input layout is
batch first, channels last unless ``spec`` (e.g. "NCHW") says where "N" and "C" are."""
SumPool = _pooling_layer("SumPool", "sum")
SumPool.__doc__ = """Sum pooling, with the parameters of :func:`MaxPool`."""
AvgPool = _pooling_layer("AvgPool", "avg")
AvgPool.__doc__ = """Average pooling, with the parameters of :func:`MaxPool`: each window's
sum divided by the number of its input elements, padding not counted (as JAX)."""


# ---------------------------------------------------------------------------
# Combinators
# ---------------------------------------------------------------------------


def _check_layers(fname: str, layers: Any) -> None:
    for k, layer in enumerate(layers):
        if not (isinstance(layer, tuple) and len(layer) == 2 and all(callable(f) for f in layer)):
            raise TypeError(
                f"{fname}: layer {k} is not an (init_fun, apply_fun) pair: "
                f"got {type(layer).__name__}"
                + (
                    " (did you forget to call a layer factory such as Dense(10)?)"
                    if callable(layer)
                    else ""
                )
            )


def serial(*layers: Layer) -> Layer:
    """Compose layers in sequence; params are a list with one entry per layer."""
    _check_layers("stax.serial", layers)
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> Any:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Apply layers side by side: the ``k``-th to the ``k``-th of a sequence of inputs.

    Input shapes and inputs are sequences with one entry per layer; output shapes
    and params are tuples, outputs a list. With :func:`FanOut` and
    :func:`FanInSum`/:func:`FanInConcat` this builds residual and multi-branch models.
    """
    _check_layers("stax.parallel", layers)
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> Any:
        if len(input_shape) != nlayers:
            raise ValueError(
                f"stax.parallel init_fun: {nlayers} layers but {len(input_shape)} input shapes"
            )
        rngs = random.split(rng, nlayers)
        pairs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built from the input shape: ``make_layer(input_shape) -> (init_fun, apply_fun)``."""

    def init_fun(rng: Any, input_shape: Any) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(fnp.shape(inputs))[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "glorot",
    "glorot_normal",
    "logsoftmax",
    "normal",
    "ones",
    "parallel",
    "randn",
    "serial",
    "shape_dependent",
    "zeros",
]
