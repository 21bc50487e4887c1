"""``Dropout`` with an explicit PRNG key, and its functional form."""

from __future__ import annotations

import numbers
from typing import Any

from functrace import core, random
from functrace import numpy as fnp
from functrace.nn._layer_util import float_input, shape_of
from functrace.nn._module import Module, field


def _check_p(name: str, p: Any) -> None:
    if isinstance(p, core.Tracer):
        return
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{name}: expected p, the drop probability, in [0, 1], got {p!r}.")


def dropout(x: Any, p: float = 0.5, *, key: Any, training: bool = True) -> Any:
    """Zero each entry of ``x`` with probability ``p`` and scale the others by
    ``1 / (1 - p)`` (PyTorch's ``p``, the drop probability), with the mask drawn by
    ``functrace.random.bernoulli(key, 1 - p, x.shape)``: the same key gives the same mask
    eagerly, under ``jit`` and under ``vmap``. ``training=False`` or ``key=None`` returns
    ``x`` unchanged; ``p=1`` gives zeros."""
    _check_p("dropout", p)
    x = float_input("dropout", x)
    if not training or key is None:
        return x
    if not isinstance(p, core.Tracer):
        if float(p) == 0.0:
            return x
        if float(p) == 1.0:
            return fnp.zeros_like(x)
    keep_prob = 1.0 - p
    keep = random.bernoulli(key, keep_prob, shape_of(x))
    return fnp.where(keep, x / keep_prob, fnp.zeros_like(x))


class Dropout(Module):
    """Dropout with PyTorch's ``p``: ``Dropout(p)(x, key=key)`` zeroes each entry with
    probability ``p`` and scales the kept ones by ``1 / (1 - p)``. (Note that stax's
    ``Dropout(rate)`` *keeps* entries with probability ``rate``.)

    The key is explicit, from ``functrace.random`` (split it per call and per layer);
    the same key gives the same mask under ``jit`` and ``vmap``. As in Equinox,
    ``inference=True`` (at construction, or per call, which overrides it) makes the
    layer the identity; so does calling it without a key (``key=None``), so evaluation
    code need not pass one.

    >>> import numpy as np
    >>> from functrace import nn, random
    >>> y = nn.Dropout(0.5)(np.ones(4), key=random.key(0))
    >>> sorted(set(np.asarray(y).tolist())) <= [0.0, 2.0]
    True
    """

    p: float = field(static=True)
    inference: bool = field(static=True)

    def __init__(self, p: float = 0.5, inference: bool = False) -> None:
        _check_p("Dropout", p)
        self.p = float(p)
        self.inference = bool(inference)

    def __call__(self, x: Any, *, key: Any = None, inference: bool | None = None) -> Any:
        off = self.inference if inference is None else bool(inference)
        return dropout(x, self.p, key=key, training=not off)
