"""Input checks shared by the layers: clear errors naming the layer."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from functrace import core


def as_array(x: Any) -> Any:
    """``x`` itself if it is an array or a tracer, else ``np.asarray(x)``."""
    return x if isinstance(x, (core.Tracer, np.ndarray)) else np.asarray(x)


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape)


dtype_of = core.dtype_of


def float_input(name: str, x: Any) -> Any:
    """``x`` as an array, which must be floating-point."""
    x = as_array(x)
    dt = dtype_of(x)
    if dt.kind != "f":
        raise TypeError(f"{name}: expected a floating-point x, got dtype {dt}.")
    return x


def int_tuple(name: str, what: str, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of non-negative ints."""
    try:
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            out: tuple[int, ...] = (int(value),)
        else:
            out = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(
            f"{name}: expected {what} as an int or a tuple of ints, got {value!r}."
        ) from None
    if any(v < 0 for v in out):
        raise ValueError(f"{name}: expected {what} without negative sizes, got {out}.")
    return out


def positive_int(name: str, what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}: expected {what} as a positive int, got {value!r}.")
    return int(value)


def check_rank(name: str, x: Any, ranks: tuple[int, ...], layout: str) -> tuple[int, ...]:
    shp = shape_of(x)
    if len(shp) not in ranks:
        want = " or ".join(f"{r}-d" for r in ranks)
        raise ValueError(f"{name}: expected a {want} x {layout}, got shape {shp}.")
    return shp
