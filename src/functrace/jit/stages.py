"""The ahead-of-time stages of a jitted function, as JAX names them:
``jit(f).trace(*args)`` gives a :class:`Traced`, its ``.lower()`` (or
``jit(f).lower(*args)``) a :class:`Lowered`, and its ``.compile()`` a
:class:`Compiled`, which runs that one signature.

functrace traces and lowers in one step (lowering generates the driver and compiles
its kernels, loaded from the disk cache when they are there), so ``trace`` lowers too:
the program is ready for the calls that follow, and each stage reads the same traced
signature of the function's cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from functrace import core
from functrace.api._shapes import ShapeDtypeStruct
from functrace.ir import ClosedJaxpr
from functrace.jit import cost
from functrace.jit.shared import Entry
from functrace.tree_util import tree_flatten, tree_unflatten

if TYPE_CHECKING:
    from functrace.jit.api import JitFunction


class Lowered:
    """A traced and compiled signature of a jitted function (from ``.lower(*args)``).

    ``jaxpr`` is the jaxpr actually lowered (``custom_jvp``/``custom_vjp`` calls
    inlined, dead code dropped, ``transpose(dot)`` folded): printed, its variable names
    are the driver's in :meth:`as_text`. ``traced_jaxpr`` is the jaxpr as traced,
    which prints as ``make_jaxpr`` does. :meth:`compile` gives the callable of this
    signature."""

    def __init__(self, entry: Entry, fun: JitFunction) -> None:
        self._entry = entry
        self._fun = fun

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The IR the driver was generated from; its names are the driver's."""
        return self._entry.program.jaxpr

    @property
    def traced_jaxpr(self) -> ClosedJaxpr:
        """The traced IR (before inlining and dead-code elimination)."""
        return self._entry.jaxpr

    @property
    def out_info(self) -> Any:
        """The output's pytree of ``ShapeDtypeStruct`` (shape, dtype, weak type)."""
        return _out_info(self._entry)

    @property
    def driver_source(self) -> str:
        return self._entry.program.driver_source

    @property
    def kernel_sources(self) -> list[str]:
        return [k.source for k in self._entry.program.kernels]

    @property
    def compile_count(self) -> int:
        """Kernels Numba compiled when this signature was lowered."""
        return self._entry.program.compiled

    def as_text(self) -> str:
        """The generated driver and kernel sources, each IR equation as a comment
        above its code."""
        return self._entry.program.as_text()

    def compile(self) -> Compiled:
        """The callable of this signature (already compiled: lowering compiles)."""
        return Compiled(self._fun, self._entry)

    def cost_analysis(self) -> dict[str, float]:
        """``flops``, ``transcendentals`` and ``bytes accessed`` of one call, counted
        from :attr:`jaxpr` as XLA's cost analysis counts (``functrace.jit.cost``)."""
        return cost.cost_analysis(_lowered_jaxpr(self._entry))

    def __repr__(self) -> str:
        return f"<Lowered: {len(self._entry.program.kernels)} kernels>"


class Traced:
    """A traced signature of a jitted function (from ``jit(f).trace(*args)``):
    ``jaxpr`` (as ``make_jaxpr`` prints it), ``out_info`` (the output's pytree of
    ``ShapeDtypeStruct``), ``fun_name``, and :meth:`lower`."""

    def __init__(self, fun: JitFunction, entry: Entry) -> None:
        self._fun = fun
        self._entry = entry

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.jaxpr

    @property
    def out_info(self) -> Any:
        return _out_info(self._entry)

    @property
    def fun_name(self) -> str:
        return str(getattr(self._fun, "__name__", self._fun._origin))

    def lower(self) -> Lowered:
        return Lowered(self._entry, self._fun)

    def __repr__(self) -> str:
        return f"<Traced: {self._fun._origin}>"


class Compiled:
    """A compiled signature of a jitted function (from ``.lower(*args).compile()``), as
    JAX's: called with the non-static arguments only (the static ones are part of what
    was compiled), of the same tree structure, shapes and dtypes (a Python scalar and
    a NumPy scalar of its dtype are alike), it runs the compiled program; other
    arguments are a TypeError naming both signatures."""

    def __init__(self, fun: JitFunction, entry: Entry) -> None:
        self._fun = fun
        self._entry = entry

    @property
    def out_info(self) -> Any:
        return _out_info(self._entry)

    def cost_analysis(self) -> dict[str, float]:
        """As :meth:`Lowered.cost_analysis` (the program is the lowered one)."""
        return cost.cost_analysis(_lowered_jaxpr(self._entry))

    def memory_analysis(self) -> cost.CompiledMemoryStats:
        """The bytes of the arguments, the outputs and (an upper bound of) the
        intermediates alive at once, with JAX's fields (``functrace.jit.cost``)."""
        return cost.memory_analysis(_lowered_jaxpr(self._entry), self._entry.key[1])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        origin = self._fun._origin
        in_tree, want, _, _ = self._entry.key
        leaves, tree = tree_flatten((tuple(args), kwargs))
        got: list[str] = []
        for i, x in enumerate(leaves):
            if isinstance(x, core.Tracer):
                raise TypeError(
                    f"{origin}: a compiled function takes concrete arguments, got a tracer "
                    "(under a transform, call the jitted function itself)."
                )
            if isinstance(x, np.ndarray) and not core.is_plain_array(x):
                x = leaves[i] = core.plain_array(x, origin, f"argument {i}")
            got.append(core.get_aval(x).str_short())
        if tree != in_tree or got != [a.str_short() for a in want]:
            raise TypeError(
                f"{origin}: the compiled function expected arguments of the signature it "
                f"was lowered for ({_describe(self._entry.key)}), got "
                f"{', '.join(got) or 'no arguments'}"
                f"{'' if tree == in_tree else f' in the structure {tree}'}; static "
                "arguments are part of the compiled function and are not passed again."
            )
        return self._entry.driver(*leaves)

    def __repr__(self) -> str:
        return f"<Compiled: {self._fun._origin}>"


def _lowered_jaxpr(entry: Entry) -> ClosedJaxpr:
    # the lowered program's (a tiered signature still compiling: the traced one)
    return entry.jaxpr if entry.program is None else entry.program.jaxpr


def _out_info(entry: Entry) -> Any:
    structs = [ShapeDtypeStruct.like(a) for a in entry.jaxpr.out_avals]
    return structs if entry.out_tree is None else tree_unflatten(entry.out_tree, structs)


def _describe(key: Any) -> str:
    _, avals, (static_pos, static_kw), _ = key
    parts = [a.str_short() for a in avals]
    parts += [f"static argument {i} = {v!r}" for i, _, v in static_pos]
    parts += [f"static {k}={v!r}" for k, _, v in static_kw]
    return ", ".join(parts) or "no arguments"


__all__ = ["Compiled", "Lowered", "Traced"]
