"""``Dropout`` with an explicit PRNG key, and its functional form."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from functrace import core, random
from functrace import numpy as fnp
from functrace._prng import PRNGKeyArray
from functrace.nn._layer_util import as_array, dtype_of, float_input, shape_of
from functrace.nn._module import Module, field


def _check_p(name: str, p: Any) -> None:
    if isinstance(p, core.Tracer):
        return
    if isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype.kind in "fiu":
        p = p.item()  # a 0-d array (an Array from a computation) is a number here
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{name}: expected p, the drop probability, in [0, 1], got {p!r}.")


def dropout(x: Any, p: float = 0.5, *, key: Any, training: bool = True) -> Any:
    """Zero each entry of ``x`` with probability ``p`` and scale the others by
    ``1 / (1 - p)`` (PyTorch's ``p``, the drop probability), with the mask drawn by
    ``functrace.random.bernoulli(key, 1 - p, x.shape)`` with ``1 - p`` in ``x``'s dtype
    (float32 uniforms for float32 ``x``): the same key gives the same mask
    eagerly, under ``jit`` and under ``vmap``. ``training=False`` or ``key=None`` returns
    ``x`` unchanged; ``p=1`` gives zeros."""
    return _dropout("dropout", x, p, key, training)


def _check_key(name: str, key: Any) -> None:
    if isinstance(key, PRNGKeyArray):  # a typed key (functrace.random.key)
        if key.shape != ():
            raise TypeError(
                f"{name}: expected key as a single PRNG key, got a key array of shape {key.shape}."
            )
        return
    aval = core.get_aval(as_array(key))
    if tuple(aval.shape) != (2,) or aval.dtype != np.uint32:
        raise TypeError(
            f"{name}: expected key as a single PRNG key (a uint32 array of shape (2,) from "
            f"PRNGKey or split, or a typed key from functrace.random.key), got "
            f"{aval.str_short()}."
        )


def _dropout(name: str, x: Any, p: Any, key: Any, training: bool) -> Any:
    _check_p(name, p)
    x = float_input(name, x)
    if not training or key is None:
        return x
    _check_key(name, key)
    if not isinstance(p, core.Tracer):
        if float(p) == 0.0:
            return x
        if float(p) == 1.0:
            return fnp.zeros_like(x)
    dt = dtype_of(x)
    keep_prob = 1.0 - (fnp.astype(p, dt) if isinstance(p, core.Tracer) else np.asarray(p, dt))
    keep = random.bernoulli(key, keep_prob, shape_of(x))  # uniforms of x's precision
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
        return _dropout("Dropout", x, self.p, key, not off)
