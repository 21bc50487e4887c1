"""Batch normalisation with explicit running statistics: ``BatchNorm1d``,
``BatchNorm2d``, ``BatchNormState`` and the functional ``batch_norm``."""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.nn._layer_util import dtype_of, float_input, positive_int, shape_of
from functrace.nn._module import Module, field


class BatchNormState(NamedTuple):
    """The running statistics of a batch-norm layer (a pytree): ``running_mean`` and
    ``running_var`` of shape ``(C,)`` and the int64 scalar ``num_batches_tracked``, as
    PyTorch's buffers of the same names."""

    running_mean: Any
    running_var: Any
    num_batches_tracked: Any


def batch_norm(
    x: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: Any = 0.1,
    eps: float = 1e-5,
) -> tuple[Any, Any, Any]:
    """Batch normalisation of ``x`` of shape ``(N, C, *)`` (as
    ``torch.nn.functional.batch_norm``, but returning the statistics instead of updating
    them in place): ``(y, running_mean, running_var)``.

    With ``training=True`` ``x`` is normalised with the statistics of the batch (over
    every dim but ``C``, biased variance) and the running ones become
    ``(1 - momentum) * running + momentum * batch``, with the *unbiased* batch variance,
    as PyTorch; gradients do not flow into them (``None`` statistics stay ``None``).
    With ``training=False`` the running statistics (required) normalise ``x`` and come
    back unchanged. ``weight``/``bias`` (shape ``(C,)``) scale and shift per channel."""
    return _batch_norm(
        "batch_norm", x, running_mean, running_var, weight, bias, training, momentum, eps
    )


def _check_vec(name: str, what: str, v: Any, c: int) -> None:
    if v is not None and shape_of(v) != (c,):
        raise ValueError(f"{name}: expected {what} of shape ({c},), got shape {shape_of(v)}.")


def _batch_norm(
    name: str,
    x: Any,
    rm: Any,
    rv: Any,
    weight: Any,
    bias: Any,
    training: bool,
    momentum: Any,
    eps: float,
) -> tuple[Any, Any, Any]:
    x = float_input(name, x)
    shp = shape_of(x)
    if len(shp) < 2:
        raise ValueError(f"{name}: expected x of shape (N, C, *) (at least 2-d), got shape {shp}.")
    c = shp[1]
    for what, v in (("running_mean", rm), ("running_var", rv), ("weight", weight), ("bias", bias)):
        _check_vec(name, what, v, c)
    if (rm is None) != (rv is None):
        raise ValueError(f"{name}: expected running_mean and running_var both given or both None.")
    if not training and rm is None:
        raise ValueError(
            f"{name}: expected running_mean and running_var in evaluation mode "
            "(training=False), got None."
        )
    cs = (-1,) + (1,) * (len(shp) - 2)
    if training:
        axes = (0, *range(2, len(shp)))
        n = math.prod(shp) // c if c else 0
        if n <= 1:
            raise ValueError(
                f"{name}: expected more than 1 value per channel when training, got shape {shp}."
            )
        mean = fnp.mean(x, axis=axes)
        centred = x - fnp.reshape(mean, cs)
        var = fnp.mean(fnp.square(centred), axis=axes)
        y = centred * fnp.reshape(_lax.rsqrt(var + eps), cs)
        if rm is not None:
            dt = dtype_of(rm)
            m = momentum
            bm = fnp.astype(_lax.stop_gradient(mean), dt)
            bv = fnp.astype(_lax.stop_gradient(var) * (n / (n - 1)), dt)
            rm = fnp.astype((1 - m) * rm + m * bm, dt)
            rv = fnp.astype((1 - m) * rv + m * bv, dt)
    else:
        y = (x - fnp.reshape(rm, cs)) * fnp.reshape(_lax.rsqrt(rv + eps), cs)
    if weight is not None:
        y = y * fnp.reshape(weight, cs)
    if bias is not None:
        y = y + fnp.reshape(bias, cs)
    return y, rm, rv


def _bn_init(
    self: Any,
    num_features: int,
    eps: float = 1e-5,
    momentum: float | None = 0.1,
    affine: bool = True,
    track_running_stats: bool = True,
    *,
    dtype: Any = np.float32,
) -> None:
    """``weight`` ones and ``bias`` zeros of shape ``(num_features,)`` (``None`` when
    ``affine=False``); ``dtype`` is also the dtype of the running statistics."""
    name = type(self).__name__
    self.num_features = positive_int(name, "num_features", num_features)
    self.eps = float(eps)
    self.momentum = None if momentum is None else float(momentum)
    self.affine = bool(affine)
    self.track_running_stats = bool(track_running_stats)
    self.dtype = np.dtype(dtype)
    c = self.num_features
    self.weight = np.ones(c, self.dtype) if affine else None
    self.bias = np.zeros(c, self.dtype) if affine else None


class _BatchNorm(Module):
    weight: Any
    bias: Any
    num_features: int = field(static=True)
    eps: float = field(static=True)
    momentum: float | None = field(static=True)
    affine: bool = field(static=True)
    track_running_stats: bool = field(static=True)
    dtype: Any = field(static=True)

    __init__ = _bn_init
    _ranks: ClassVar[tuple[int, ...]] = ()
    _layout: ClassVar[str] = ""

    def init_state(self) -> BatchNormState | None:
        """Fresh running statistics (zeros, ones, 0), or ``None`` when
        ``track_running_stats=False``."""
        if not self.track_running_stats:
            return None
        c = self.num_features
        return BatchNormState(
            np.zeros(c, self.dtype), np.ones(c, self.dtype), np.zeros((), np.int64)
        )

    def __call__(self, x: Any, state: Any, *, training: bool) -> tuple[Any, Any]:
        name = type(self).__name__
        x = float_input(name, x)
        shp = shape_of(x)
        if len(shp) not in self._ranks or shp[1] != self.num_features:
            layout = self._layout.format(c=self.num_features)
            raise ValueError(f"{name}: expected x of shape {layout}, got shape {shp}.")
        if not self.track_running_stats:
            if state is not None:
                raise ValueError(
                    f"{name}: expected state None (track_running_stats=False), got "
                    f"{type(state).__name__}."
                )
            y, _, _ = _batch_norm(name, x, None, None, self.weight, self.bias, True, 0.0, self.eps)
            return y, None
        if not isinstance(state, BatchNormState):
            raise TypeError(
                f"{name}: expected state as a BatchNormState (from init_state()), got "
                f"{type(state).__name__}."
            )
        if not training:
            y, _, _ = _batch_norm(
                name, x, state.running_mean, state.running_var, self.weight, self.bias,
                False, 0.0, self.eps,
            )  # fmt: skip
            return y, state
        count = state.num_batches_tracked + 1
        if self.momentum is None:
            momentum: Any = fnp.astype(1.0 / count, dtype_of(state.running_mean))
        else:
            momentum = self.momentum
        y, rm, rv = _batch_norm(
            name, x, state.running_mean, state.running_var, self.weight, self.bias,
            True, momentum, self.eps,
        )  # fmt: skip
        return y, BatchNormState(rm, rv, count)


_STATE_DOC = """

    Running statistics are explicit state, not fields (so optimizers never touch them)::

        state = bn.init_state()                    # BatchNormState(mean 0, var 1, count 0)
        y, state = bn(x, state, training=True)     # batch statistics; state updated
        y, state = bn(x, state, training=False)    # running statistics; state unchanged

    In training the running estimates follow PyTorch's rule
    ``running = (1 - momentum) * running + momentum * batch`` with the unbiased batch
    variance (``momentum=None``: the cumulative average, ``1 / num_batches_tracked``).
    With ``track_running_stats=False`` ``init_state()`` is ``None`` and batch
    statistics are used in both modes. ``weight`` (ones) and ``bias`` (zeros) are
    ``None`` when ``affine=False``. The state is a pytree: pass it through ``jit``.
"""


class BatchNorm1d(_BatchNorm):
    __doc__ = (
        "Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs over ``N`` (and ``L``), "
        "per channel (PyTorch's ``nn.BatchNorm1d``)." + _STATE_DOC
    )
    _ranks = (2, 3)
    _layout = "(N, {c}) or (N, {c}, L)"
    __init__ = _bn_init


class BatchNorm2d(_BatchNorm):
    __doc__ = (
        "Batch normalisation of ``(N, C, H, W)`` inputs over ``N``, ``H``, ``W``, per "
        "channel (PyTorch's ``nn.BatchNorm2d``)." + _STATE_DOC
    )
    _ranks = (4,)
    _layout = "(N, {c}, H, W)"
    __init__ = _bn_init
