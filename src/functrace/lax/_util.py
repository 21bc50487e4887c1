"""Shared helpers for defining primitives: registration and abstract-eval checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray


def register(
    primitive: Primitive, impl: Callable[..., Any], abstract_eval: Callable[..., Any]
) -> Primitive:
    """Register the impl (NumPy) and abstract-eval (shape/dtype) rules of ``primitive``."""
    core.impl_rules[primitive] = impl
    core.abstract_eval_rules[primitive] = abstract_eval
    return primitive


def register_checked(
    primitive: Primitive, impl: Callable[..., Any], abstract_eval: Callable[..., Any]
) -> Primitive:
    """Register ``impl`` behind a call of ``abstract_eval``, so eager calls get the same
    checks and messages as traced ones (NumPy would broadcast, promote or crash instead)."""

    def checked(*args: Any, **params: Any) -> Any:
        abstract_eval(*[core.get_aval(a) for a in args], **params)
        return impl(*args, **params)

    checked.unchecked = impl  # type: ignore[attr-defined]  # for programs already checked
    return register(primitive, checked, abstract_eval)


def check_same_shapes(name: str, *avals: ShapedArray) -> tuple[int, ...]:
    shape = avals[0].shape
    for a in avals[1:]:
        if a.shape != shape:
            shapes = " and ".join(str(b.shape) for b in avals)
            raise ValueError(
                f"{name}: expected operands of equal shape, got shapes {shapes}. "
                f"functrace.lax broadcasts only 0-d operands and axes of size 1 (as JAX's "
                f"lax): use functrace.numpy, or lax.broadcast_in_dim first."
            )
    return shape


def check_same_dtypes(name: str, *avals: ShapedArray) -> np.dtype:
    dtype = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dtype:
            dts = " and ".join(a.dtype.name for a in avals)
            raise TypeError(
                f"{name}: expected operands of equal dtype, got {dts}. functrace.lax does not "
                f"promote: use functrace.numpy, or lax.convert_element_type first."
            )
    return dtype


def check_dtype_kind(name: str, aval: ShapedArray, kinds: str, what: str) -> None:
    if aval.dtype.kind not in kinds:
        raise TypeError(f"{name}: expected {what} operand, got {aval.dtype.name}.")


def eager_check_binary(name: str, x: Any, y: Any) -> None:
    """Cheap shape check for eager calls of binary primitives (no broadcasting)."""
    sx = getattr(x, "shape", ())
    sy = getattr(y, "shape", ())
    if sx != sy:
        raise ValueError(
            f"{name}: expected operands of equal shape, got shapes {tuple(sx)} and {tuple(sy)}. "
            f"functrace.lax broadcasts only 0-d operands and axes of size 1 (as JAX's lax): "
            f"use functrace.numpy, or lax.broadcast_in_dim."
        )


def eager_check_dtypes(name: str, *args: Any) -> None:
    """The traced check of equal operand dtypes, for eager calls: a TypeError unless
    every operand has the same dtype. Python scalars count with the dtype they take
    alone (int64, float64...), as in traced calls (and as JAX's lax, which does not
    promote either)."""
    dtype = getattr(args[0], "dtype", None)
    for a in args[1:]:
        d = getattr(a, "dtype", None)
        if d is None or d != dtype:
            break
    else:
        if dtype is not None:
            return
    check_same_dtypes(name, *[core.get_aval(a) for a in args])


def normalize_axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name}: expected an axis in [{-ndim}, {ndim}), got {axis}.")
    return axis % ndim if ndim else 0


def as_index_tuple(name: str, xs: Any) -> tuple[int, ...]:
    try:
        return tuple(int(operator_index(x)) for x in xs)
    except TypeError:
        raise TypeError(f"{name}: expected a tuple of Python ints, got {xs!r}.") from None


def operator_index(x: Any) -> int:
    import operator

    return operator.index(x)


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    *,
    fname: str = "padtype_to_pads",
) -> list[tuple[int, int]]:
    """The ``(low, high)`` pads of a padding string ("SAME", "SAME_LOWER", "VALID";
    any case) for windows of ``window_shape`` at ``window_strides`` over ``in_shape``
    (JAX's ``lax.padtype_to_pads``; convolutions and windowed reductions share it).
    SAME gives ``ceil(in / stride)`` outputs, the odd pad element at the high end
    (SAME_LOWER: at the low end). ``fname`` names the caller in errors."""
    p = getattr(padding, "name", padding)
    key = p.upper() if isinstance(p, str) else None
    if key not in ("SAME", "SAME_LOWER", "VALID"):
        raise ValueError(
            f"{fname}: expected padding 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs, "
            f"got {padding!r}."
        )
    if key == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max(0, (out - 1) * int(s) + int(k) - int(n))
        small, big = total // 2, total - total // 2
        pads.append((small, big) if key == "SAME" else (big, small))
    return pads


def conv_transpose_pads(k: int, s: int, padding: str) -> tuple[int, int]:
    """The ``(low, high)`` pads of the lhs-dilated input of a transposed convolution
    (kernel size ``k``, stride ``s``) for ``padding`` "SAME" (``in * s`` outputs) or
    "VALID" (``in * s + max(k - s, 0)``), as the gradient of a strided convolution
    would give (JAX's ``conv_transpose``; stax's transposed layers share it)."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    else:
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    return lo, total - lo
