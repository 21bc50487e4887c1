"""Cost and memory estimates of a jitted signature, under JAX's names:
``jit(f).lower(*args).cost_analysis()`` and the same on ``.compile()``, and
``.compile().memory_analysis()``.

The costs are counted from the jaxpr the driver was generated from, as XLA's HLO cost
analysis counts its operations, so that programs computing model FLOPs or
arithmetic intensity from them get comparable numbers:

* ``flops``: 2 per multiply-add of a product (``dot_general``: 2 x output size x
  contracted size; convolutions: 2 per kernel tap that meets the input, not its
  padding, times the input features of a group: XLA's CPU count of a grouped
  convolution is that of the dense one it rewrites it to); 1 per output element of
  other elementwise operations; ``n - m`` for a
  reduction of ``n`` elements to ``m`` (``n`` for cumulative ones); a pooling window
  of ``w`` elements costs ``w - 1`` per output element. Moving data (reshapes, slices,
  gathers, broadcasts) costs none.
* ``transcendentals``: 1 per output element of ``exp``, ``log``, ``tanh``, ``sin``,
  ``sqrt``, ``pow`` and the other functions XLA counts so, and of the special
  functions (``lgamma``, ``erf_inv``...), which XLA expands into many operations.
* ``bytes accessed``: the bytes each equation reads and writes, summed over the
  equations as if none were fused (functrace's fused kernels read less: this is an
  upper bound of the memory traffic).

Control flow is counted as XLA counts it: a ``cond`` costs its most expensive branch,
and a loop (``scan``, ``fori_loop``, ``while_loop``) its body (and condition) once,
whatever its length: multiply by the trip count for the work of the whole loop.

``memory_analysis()``: argument and output bytes exactly; ``temp_size_in_bytes`` is the
peak of the intermediate values alive at once when each equation's results live from
the equation to their last use (fused kernels keep some in registers: an upper bound);
code sizes are 0, as JAX reports them on the CPU.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from functrace.interpreters.numba_rules import DriverRule, numba_emitters
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Var

# XLA's transcendental opcodes, and the special functions it expands (1 each here)
_TRANSCENDENTAL = frozenset(
    "exp exp2 expm1 log log1p logistic pow sqrt rsqrt cbrt tanh sin cos tan atan2 erf "
    "erfc erf_inv acosh asinh atanh lgamma digamma polygamma zeta igamma igammac "
    "igamma_grad_a random_gamma_grad betainc bessel_i0e bessel_i1e".split()
)
_FREE = frozenset({"stop_gradient", "name", "real", "imag", "conj"})  # no arithmetic


class _Cost:
    __slots__ = ("flops", "transcendentals", "bytes")

    def __init__(self, flops: float = 0.0, trans: float = 0.0, nbytes: float = 0.0) -> None:
        self.flops, self.transcendentals, self.bytes = flops, trans, nbytes

    def add(self, other: _Cost, times: float = 1.0) -> None:
        self.flops += other.flops * times
        self.transcendentals += other.transcendentals * times
        self.bytes += other.bytes * times


def _size(aval: Any) -> int:
    return math.prod(aval.shape)


def _nbytes(aval: Any) -> int:
    return _size(aval) * aval.dtype.itemsize


def _sub_jaxprs(value: Any) -> Iterator[Jaxpr]:
    if isinstance(value, ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, Jaxpr):
        yield value
    elif isinstance(value, tuple | list):
        for v in value:
            yield from _sub_jaxprs(v)


def _eqn_flops(eqn: JaxprEqn) -> tuple[float, float]:
    """(flops, transcendentals) of one equation without sub-jaxprs."""
    name = eqn.primitive.name
    if not eqn.out_binders:
        return 0.0, 0.0
    ins = [x.aval for x in eqn.inputs]
    out = eqn.out_binders[0].aval
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        k = math.prod(ins[0].shape[d] for d in lhs_contract)
        return 2.0 * _size(out) * k, 0.0
    if name == "conv_general_dilated":
        return _conv_flops(eqn.params, ins[0].shape, ins[1].shape, out.shape), 0.0
    if name.startswith("reduce_window") or name in ("select_and_scatter_add",):
        window = math.prod(eqn.params.get("window_dimensions", (1,)))
        return float(_size(out) * max(window - 1, 0)), 0.0  # w - 1 combines per window
    if (name.startswith("reduce_") and name != "reduce_precision") or name in (
        "argmax",
        "argmin",
    ):
        return float(max(_size(ins[0]) - _size(out), 0)), 0.0
    if name.startswith("cum"):
        return float(_size(ins[0])), 0.0
    rule = numba_emitters.get(eqn.primitive)
    if rule is None or isinstance(rule, DriverRule) or name in _FREE:
        return 0.0, 0.0  # data movement, calls of NumPy for structure
    n = float(sum(_size(v.aval) for v in eqn.out_binders))
    return (0.0, n) if name in _TRANSCENDENTAL else (n, 0.0)


def _conv_flops(params: dict[str, Any], lhs: Any, rhs: Any, out: Any) -> float:
    # 2 per multiply-add of a kernel tap with an input element that exists: taps over
    # padding (or over the holes of lhs_dilation) cost nothing, as in XLA's count
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    taps = 1
    for d in range(len(lhs_spec) - 2):
        n_in, n_k, n_out = lhs[lhs_spec[2 + d]], rhs[rhs_spec[2 + d]], out[out_spec[2 + d]]
        stride, (lo, _) = params["window_strides"][d], params["padding"][d]
        ldil, rdil = params["lhs_dilation"][d], params["rhs_dilation"][d]
        last = (n_in - 1) * ldil
        taps *= sum(
            1
            for o in range(n_out)
            for k in range(n_k)
            if 0 <= (p := o * stride - lo + k * rdil) <= last and p % ldil == 0
        )
    return 2.0 * out[out_spec[0]] * out[out_spec[1]] * rhs[rhs_spec[1]] * taps


def jaxpr_cost(jaxpr: Jaxpr) -> _Cost:
    """The summed cost of ``jaxpr``'s equations (module doc)."""
    total = _Cost()
    for eqn in jaxpr.eqns:
        subs = [j for v in eqn.params.values() for j in _sub_jaxprs(v)]
        if not subs:
            flops, trans = _eqn_flops(eqn)
            moved = sum(_nbytes(x.aval) for x in eqn.inputs)
            moved += sum(_nbytes(v.aval) for v in eqn.out_binders)
            total.add(_Cost(flops, trans, moved))
            continue
        name = eqn.primitive.name
        costs = [jaxpr_cost(j) for j in subs]
        if name in ("cond", "cond_lin"):
            best = max(costs, key=lambda c: (c.flops + c.transcendentals, c.bytes))
            total.add(best)
        else:  # loops (their body once, as XLA's count), checkpoints, solves, calls
            for c in costs:
                total.add(c)
    return total


def cost_analysis(closed: ClosedJaxpr) -> dict[str, float]:
    """JAX's ``cost_analysis()`` dictionary for ``closed`` (module doc)."""
    c = jaxpr_cost(closed.jaxpr)
    return {"flops": c.flops, "transcendentals": c.transcendentals, "bytes accessed": c.bytes}


class CompiledMemoryStats(NamedTuple):
    """``Compiled.memory_analysis()``'s answer, with JAX's fields (module doc)."""

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


def _peak_temp(jaxpr: Jaxpr) -> int:
    outs = {x for x in jaxpr.outvars if isinstance(x, Var)}
    last: dict[Var, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for x in eqn.inputs:
            if isinstance(x, Var):
                last[x] = i
    live = peak = 0
    ending: dict[int, list[Var]] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.out_binders:
            if v not in outs and v in last:
                live += _nbytes(v.aval)
                ending.setdefault(last[v], []).append(v)
        peak = max(peak, live)
        for v in ending.pop(i, ()):
            live -= _nbytes(v.aval)
    return peak


def memory_analysis(closed: ClosedJaxpr, in_avals: Sequence[Any]) -> CompiledMemoryStats:
    """JAX's ``memory_analysis()`` for ``closed`` called with ``in_avals`` (module doc)."""
    outs = [x.aval for x in closed.jaxpr.outvars]
    return CompiledMemoryStats(
        generated_code_size_in_bytes=0,
        argument_size_in_bytes=sum(_nbytes(a) for a in in_avals),
        output_size_in_bytes=sum(_nbytes(a) for a in outs),
        alias_size_in_bytes=0,
        temp_size_in_bytes=_peak_temp(closed.jaxpr),
    )


__all__ = ["CompiledMemoryStats", "cost_analysis", "jaxpr_cost", "memory_analysis"]
