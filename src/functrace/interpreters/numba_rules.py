"""The vocabulary primitives use to say how ``jit`` lowers them to Numba.

A leaf module (it imports only ``core``): primitive blocks register their entries
here at import, as they register impl, JVP and batching rules into ``core`` and the
interpreters; ``functrace/jit`` reads the table. So ``lax`` never imports ``jit``.

``numba_emitters[p]``, keyed by the :class:`~functrace.core.Primitive`, is the one
table saying how ``jit`` handles ``p``. An entry is one of

* a **scalar template** (``str``), e.g. ``"np.sin({0})"``: an elementwise
  primitive. ``{0}``, ``{1}``... are its operands, already loaded as scalars of
  the operand dtypes. The template is used inside fused Numba loop kernels and
  native loops and, for 0-d values, as plain Python in the driver; the backend
  wraps the result in an explicit cast to the output dtype where needed (Numba
  would otherwise widen ``float32 * 2.0`` to float64);
* a **scalar emitter** (a callable ``ctx -> str | None``) for elementwise
  primitives whose code depends on dtypes or params (``integer_pow``,
  ``convert_element_type``...). Returning ``None`` means "not fusible here": the
  equation falls back to the driver calling the primitive's NumPy impl;
* a :class:`DriverRule` for any other primitive, with its two forms: ``emit``, one
  Python/NumPy expression in the generated driver (``np.dot`` for
  ``dot_general``...), and ``native``, the statements computing it inside a native
  loop (one ``@njit`` function for a whole ``scan``/``while``). Either may be None:
  no ``emit``, the driver calls the impl; no ``native``, a loop holding the
  primitive keeps its Python loop around compiled bodies.

A primitive without an entry is lowered by the default rule, *the driver calls
its NumPy impl* (``core.impl_rules[p]``) with its params bound: always correct
(impls validate indices, so compiled code can never index out of bounds).
A primitive with neither an entry nor an impl is an error naming it
(``functrace.jit.lowering.lowering_rule``); there is no object-mode fallback anywhere.

Elementwise entries are registered in the primitive's own block
(``functrace/lax/elementwise.py``); the driver rules of structural primitives
(products, reshapes, control flow) are registered in
``functrace/jit/driver_rules.py`` (their native forms written in
``functrace/jit/loop_rules.py``), those of ``threefry2x32`` and ``erf_inv`` in
``functrace/jit/random_rules.py``. :data:`compiled_impls` lets an impl use compiled
code on large arrays (``erf_inv``) without importing ``jit``. This module imports
neither Numba nor the primitive modules, so registering costs nothing at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace.core import Primitive


class EmitContext(NamedTuple):
    """What a scalar emitter sees: operand expressions, their dtypes and the params."""

    args: tuple[str, ...]
    in_dtypes: tuple[np.dtype, ...]
    out_dtype: np.dtype
    params: dict[str, Any]


@dataclass(frozen=True)
class DriverContext:
    """What a driver rule sees. ``const(value)`` names a value in the driver's globals;
    ``lower(jaxpr, what)`` compiles a sub-jaxpr (a loop body, a branch) into its own
    driver and returns that callable (flat arguments in, a flat tuple out). ``exact[i]``:
    the 0-d argument ``i`` is a NumPy scalar of its dtype already (a literal, a value
    the driver converted), so a compiled callee may take it without a conversion."""

    args: tuple[str, ...]
    in_avals: tuple[core.ShapedArray, ...]
    out_avals: tuple[core.ShapedArray, ...]
    params: dict[str, Any]
    const: Callable[[Any], str]
    lower: Callable[[Any, str], Callable[..., tuple[Any, ...]]]
    exact: tuple[bool, ...] = ()


@dataclass(frozen=True)
class DriverRule:
    """How ``jit`` computes a non-elementwise primitive, in the driver and in native loops.

    ``emit(ctx)`` returns the driver expression (a tuple expression for primitives with
    multiple results), or None to use the default impl call (no ``emit`` at all: always
    the impl call). ``native(block, eqn)`` emits the primitive's statements into a
    native loop function (``functrace.jit.loops``: ``block.fn.emit(depth, line)``,
    ``block.value(x)``...) and returns the names of its results, or raises the loop
    planner's ``Decline`` to keep the Python loop; with ``native_view`` it emits
    nothing and records instead how readers index the operand in place
    (``block.add_view``: ``transpose``, ``broadcast_in_dim``...). ``fresh`` promises
    that the results are new, writable arrays (or NumPy scalars) sharing no memory
    with the operands; ``contig`` that they are also C-contiguous whatever the
    operands' layouts (``np.dot``: NumPy's reductions and ``np.concatenate`` follow
    their operands' memory order, so a reduction of a transposed array is not C);
    ``keeps_contig`` that the result is C-contiguous when the operand is (reshapes).
    Kernels read arrays as C-contiguous without checking: the driver passes any
    array without one of these promises through ``np.ascontiguousarray``.
    """

    emit: Callable[[DriverContext], str | None] | None = None
    fresh: bool = False
    contig: bool = False
    keeps_contig: bool = False
    native: Callable[[Any, Any], list[str] | None] | None = None
    native_view: bool = False


ScalarEmitter = str | Callable[[EmitContext], str | None]
Emitter = ScalarEmitter | DriverRule

numba_emitters: dict[Primitive, Emitter] = {}

compiled_impls: dict[Primitive, Callable[..., Any]] = {}
"""Compiled fast paths of impls, filled by ``functrace.jit`` at import: ``fn(x)``
returns the impl's result computed by a compiled loop, or None when no compiled code
is available (then the impl computes the same bits with NumPy)."""

# Dtypes Numba handles natively in kernels (no float16, no float0, no objects).
_NUMBA_KINDS = "biufc"


def numba_dtype_ok(dtype: np.dtype) -> bool:
    """Whether compiled code handles ``dtype`` (else the driver calls NumPy impls)."""
    return (
        dtype.kind in _NUMBA_KINDS
        and dtype.isnative
        and dtype.itemsize <= 16
        and dtype != np.float16
    )


def dtype_ctor(dtype: np.dtype) -> str:
    """The constructor that casts a scalar to ``dtype``, valid in Numba and in Python."""
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def lit(dtype: np.dtype, value: Any) -> str:
    """A typed constant, e.g. ``np.float32(1.0)``."""
    if dtype.kind == "b":
        return f"np.bool_({bool(value)})"
    if dtype.kind in "iu":
        return f"np.{dtype.name}({int(value)})"
    return f"np.{dtype.name}({float(value)!r})"


__all__ = [
    "DriverContext",
    "DriverRule",
    "EmitContext",
    "Emitter",
    "compiled_impls",
    "dtype_ctor",
    "lit",
    "numba_dtype_ok",
    "numba_emitters",
]
