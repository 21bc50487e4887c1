"""What rules registered with ``symbolic_zeros=True`` see: :class:`SymbolicZero` (a zero
tangent or cotangent that is known to be zero while tracing) and :class:`CustomVJPPrimal`
(a ``custom_vjp`` fwd's argument with whether it is being differentiated), and the
conversions between them and the AD interpreter's own :class:`~functrace.interpreters.ad.Zero`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from functrace import core
from functrace.core import ShapedArray
from functrace.interpreters import ad
from functrace.interpreters.ad import Zero
from functrace.tree_util import tree_map


class SymbolicZero:
    """A tangent or cotangent known to be zero, given to (and accepted from) custom rules
    registered with ``symbolic_zeros=True``. It is not an array: read its type from
    ``.aval``, ``.shape``, ``.dtype``, ``.ndim``, ``.size`` (other attributes are the
    abstract value's, as in JAX), or make the zeros with ``.instantiate()`` (a functrace
    addition; JAX's user-facing class has only its abstract value's attributes)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the zero tangent."""
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the zero tangent (float0 for integer and boolean primals)."""
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions of the zero tangent."""
        return self.aval.ndim

    @property
    def size(self) -> int:
        """The number of elements of the zero tangent."""
        return self.aval.size

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        """The symbolic zero tangent of the primal value ``val``."""
        return SymbolicZero(ad.tangent_aval(core.get_aval(val)))

    def __getattr__(self, name: str) -> Any:
        # the other attributes of the abstract value (weak_type, str_short...), as in JAX
        if name.startswith("__") or name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    def instantiate(self) -> np.ndarray:
        """An array of zeros of this type."""
        return ad.zeros_like_aval(self.aval)

    def __repr__(self) -> str:
        return "SymbolicZero"


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of the pytree ``val``: a :class:`SymbolicZero` with
    ``symbolic_zeros=True``, else an array of zeros of the leaf's tangent type."""

    def one(x: Any) -> Any:
        aval = ad.tangent_aval(core.get_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else ad.zeros_like_aval(aval)

    return tree_map(one, val)


@dataclass(slots=True)
class CustomVJPPrimal:
    """An argument leaf given to a ``custom_vjp`` fwd registered with
    ``symbolic_zeros=True``: its ``value`` and whether it is ``perturbed`` (being
    differentiated; if not, its cotangent is not needed and bwd may return None)."""

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The pytree ``tree`` of :class:`CustomVJPPrimal` leaves with each replaced by its
    ``value`` (a TypeError for any other leaf)."""

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(
                f"custom_vjp_primal_tree_values: expected a pytree of CustomVJPPrimal "
                f"leaves, got a leaf of type {type(leaf).__name__}."
            )
        return leaf.value

    return tree_map(value, tree)


def to_user(t: Any, symbolic: bool) -> Any:
    """A tangent or cotangent as a user's rule sees it: the interpreter's ``Zero`` made a
    :class:`SymbolicZero` (``symbolic``) or an array of zeros."""
    if type(t) is Zero:
        return SymbolicZero(t.aval) if symbolic else ad.instantiate(t)
    return t


def from_user(t: Any) -> Any:
    """A rule's :class:`SymbolicZero` output as the interpreter's ``Zero``."""
    return Zero(t.aval) if type(t) is SymbolicZero else t


__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
