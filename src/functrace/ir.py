"""The IR: typed variables, literals, equations and jaxprs.

A :class:`Jaxpr` is a single-assignment program: ``constvars`` and ``invars``
are its inputs, each :class:`JaxprEqn` applies one primitive to variables or
literals and binds fresh output variables, and ``outvars`` are its results. A
:class:`ClosedJaxpr` pairs a jaxpr with the values of its constants (arrays a
traced function closed over).

Everything here is plain data plus four walkers: the type checker, the
evaluator (``eval_jaxpr``, which binds primitives so that it can itself be
traced), dead-code elimination and the printers (text, DOT, and the SVG drawing
laid out by ``functrace._graph_svg``). The variable namer (:func:`var_namer`) and
the equation printer (:func:`pp_eqn`) are also those of the jit driver's source,
whose variables carry the printed names.
"""

from __future__ import annotations

import html
import keyword
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from functrace import _debug, _graph_svg, core
from functrace.core import Primitive, ShapedArray
from functrace.errors import JaxprTypeError  # (one class, as jax.errors' and extend's)

_flags = _debug.flags  # config.debug_nans / debug_infs


class Var:
    """A typed variable. Identity is object identity; names are given when printed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in the IR."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray | None = None) -> None:
        self.val = val
        self.aval = core.get_aval(val) if aval is None else aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


Atom = Var | Literal


_EQN_NAMES = {
    "invars": "inputs",
    "outvars": "out_binders",
    "source_info": "source",
    **{f: f for f in ("primitive", "inputs", "params", "out_binders", "source")},
}


def _renamed(fname: str, changes: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    out = {}
    for k, v in changes.items():
        if k not in names:
            raise TypeError(f"{fname}: expected fields among {', '.join(names)}, got {k!r}.")
        out[names[k]] = tuple(v) if names[k] in ("inputs", "out_binders") else v
    return out


class JaxprEqn(NamedTuple):
    """One equation: ``out_binders = primitive[params] inputs``.

    ``source`` is where it came from (a ``functrace._debug.Source``: the user's
    ``file:line``, and for derivative work the primitive whose rule made it), recorded
    only while a debug check (``config.debug_nans``/``debug_infs``) is on, else None."""

    primitive: Primitive
    inputs: tuple[Atom, ...]
    params: dict[str, Any]
    out_binders: tuple[Var, ...]
    source: Any = None

    # JAX's names, for programs that walk jaxprs (custom interpreters)
    @property
    def invars(self) -> tuple[Atom, ...]:
        """The operands (``inputs``), as JAX names them."""
        return self.inputs

    @property
    def outvars(self) -> tuple[Var, ...]:
        """The results (``out_binders``), as JAX names them."""
        return self.out_binders

    @property
    def source_info(self) -> Any:
        """``source``, as JAX names it."""
        return self.source

    @property
    def effects(self) -> frozenset[str]:
        """The names of this equation's effects: ``{primitive name}`` for an effectful
        primitive (printing, callbacks) or one whose sub-jaxprs have one, else empty. A
        non-empty set is what keeps an equation whose results are unused."""
        return frozenset({self.primitive.name}) if eqn_has_effects(self) else frozenset()

    def replace(self, **changes: Any) -> JaxprEqn:
        """A copy with fields replaced, by JAX's names (``invars``, ``outvars``,
        ``source_info``) or these (``inputs``, ``out_binders``, ``source``);
        ``primitive`` and ``params`` too."""
        return self._replace(**_renamed("JaxprEqn.replace", changes, _EQN_NAMES))


class Jaxpr:
    """A typed single-assignment program: constvars; invars. let eqns in outvars."""

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(
        self,
        constvars: tuple[Var, ...],
        invars: tuple[Var, ...],
        eqns: tuple[JaxprEqn, ...],
        outvars: tuple[Atom, ...],
    ) -> None:
        self.constvars = constvars
        self.invars = invars
        self.eqns = eqns
        self.outvars = outvars

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    @property
    def effects(self) -> frozenset[str]:
        """The union of its equations' effects (:attr:`JaxprEqn.effects`)."""
        return frozenset().union(*(e.effects for e in self.eqns))

    def replace(self, **changes: Any) -> Jaxpr:
        """A copy with some of ``constvars``, ``invars``, ``eqns``, ``outvars`` replaced
        (JAX's ``Jaxpr.replace``)."""
        fields = {n: getattr(self, n) for n in self.__slots__}
        for k, v in changes.items():
            if k not in fields:
                raise TypeError(
                    f"Jaxpr.replace: expected fields among {', '.join(fields)}, got {k!r}."
                )
            fields[k] = tuple(v)
        return Jaxpr(**fields)

    def pretty_print(self, **kwargs: Any) -> str:
        """The printed program (``str(jaxpr)``); JAX's printing options are accepted and
        do not change it."""
        return pp_jaxpr(self)

    def __str__(self) -> str:
        return pp_jaxpr(self)

    def __repr__(self) -> str:
        return pp_jaxpr(self)


@dataclass(frozen=True, eq=False)
class ClosedJaxpr:
    """A jaxpr with the values of its constants. Prints as text, draws as a graph."""

    jaxpr: Jaxpr
    consts: list[Any] = field(default_factory=list)

    @property
    def eqns(self) -> tuple[JaxprEqn, ...]:
        return self.jaxpr.eqns

    # JAX's names: a closed jaxpr's constants are its ``literals`` too, and it shows
    # its jaxpr's variables and effects
    @property
    def literals(self) -> list[Any]:
        return self.consts

    @property
    def constvars(self) -> tuple[Var, ...]:
        return self.jaxpr.constvars

    @property
    def invars(self) -> tuple[Var, ...]:
        return self.jaxpr.invars

    @property
    def outvars(self) -> tuple[Atom, ...]:
        return self.jaxpr.outvars

    @property
    def effects(self) -> frozenset[str]:
        return self.jaxpr.effects

    def replace(self, *, jaxpr: Jaxpr | None = None, consts: Any = None) -> ClosedJaxpr:
        """A copy with its ``jaxpr`` and/or ``consts`` replaced."""
        return ClosedJaxpr(
            self.jaxpr if jaxpr is None else jaxpr,
            list(self.consts if consts is None else consts),
        )

    def map_jaxpr(self, f: Any) -> ClosedJaxpr:
        """The same constants with ``f(jaxpr)`` as the program."""
        return ClosedJaxpr(f(self.jaxpr), list(self.consts))

    def pretty_print(self, **kwargs: Any) -> str:
        return pp_jaxpr(self.jaxpr)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def to_dot(self) -> str:
        """The graph in Graphviz DOT text (always available, no binary needed); render
        it with Graphviz (``dot -Tsvg``) if you prefer its layout to :meth:`to_svg`."""
        return jaxpr_to_dot(self.jaxpr)

    def to_svg(self, show_dead: bool = True, max_eqns: int = 500) -> str:
        """The graph drawn as SVG text by functrace's own layered layout (no Graphviz).

        Inputs are blue boxes (constants dashed), each equation is one rounded box
        labelled with its primitive, its parameters as the printer shows them (``None``
        ones left out) and ``operands → results``; an equation holding jaxprs (``cond``,
        ``scan``, ``while``, custom-derivative calls) is one yellow box naming them;
        outputs are orange boxes. One arrow per variable an equation reads; hovering a
        box shows its printed equation, an arrow its variable's name and type.
        ``show_dead``: True (the default, so the picture has every line of the printed
        jaxpr) draws the equations no output depends on greyed and dashed, False leaves
        them out. Beyond ``max_eqns`` drawn equations the picture is a summary box
        (counts per primitive) instead: pass a larger ``max_eqns`` to draw it anyway."""
        return jaxpr_to_svg(self.jaxpr, show_dead=show_dead, max_eqns=max_eqns)

    def draw(self, show_dead: bool = True, max_eqns: int = 500) -> _graph_svg.SvgDrawing:
        """The :meth:`to_svg` picture as an object that a notebook displays and that
        ``save(path)`` writes to a file."""
        return _graph_svg.SvgDrawing(self.to_svg(show_dead=show_dead, max_eqns=max_eqns))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A notebook shows the drawing (``image/svg+xml``, :meth:`to_svg`); the bundle
        also holds the printed jaxpr (``text/plain``) and the DOT text."""
        return {
            "text/plain": str(self),
            "image/svg+xml": self.to_svg(),
            "text/vnd.graphviz": self.to_dot(),
        }

    def __call__(self, *args: Any) -> list[Any]:
        return eval_jaxpr(self.jaxpr, self.consts, args)


# ---------------------------------------------------------------------------
# Type checking
# ---------------------------------------------------------------------------


def typecheck_jaxpr(jaxpr: Jaxpr) -> None:
    """Check single assignment and every equation's types against abstract eval."""
    env: set[Var] = set()
    for v in (*jaxpr.constvars, *jaxpr.invars):
        if v in env:
            raise JaxprTypeError(f"typecheck: variable {v} bound twice")
        env.add(v)
    for eqn in jaxpr.eqns:
        in_avals = []
        for x in eqn.inputs:
            if isinstance(x, Var) and x not in env:
                raise JaxprTypeError(f"typecheck: {eqn.primitive} reads unbound variable {x}")
            in_avals.append(x.aval)
        rule = core.abstract_eval_rules.get(eqn.primitive)
        if rule is None:
            raise JaxprTypeError(f"typecheck: no abstract eval rule for '{eqn.primitive}'")
        out = rule(*in_avals, **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        if len(outs) != len(eqn.out_binders):
            raise JaxprTypeError(f"typecheck: {eqn.primitive} output count mismatch")
        for got, v in zip(outs, eqn.out_binders):
            if not got.same_type(v.aval):
                raise JaxprTypeError(
                    f"typecheck: {eqn.primitive} produces {got.str_short()}, "
                    f"binder says {v.aval.str_short()}"
                )
            if v in env:
                raise JaxprTypeError(f"typecheck: variable {v} bound twice")
            env.add(v)
    for x in jaxpr.outvars:
        if isinstance(x, Var) and x not in env:
            raise JaxprTypeError(f"typecheck: output reads unbound variable {x}")


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Run ``jaxpr`` by binding its primitives: traceable by any interpreter."""
    env: dict[Var, Any] = {}
    if len(args) != len(jaxpr.invars) or len(consts) != len(jaxpr.constvars):
        raise TypeError(
            f"eval_jaxpr: expected {len(jaxpr.constvars)} constants and {len(jaxpr.invars)} "
            f"arguments, got {len(consts)} and {len(args)}."
        )
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    if _flags.check:  # debug checks: each equation's recorded line stands for the stack's
        return _eval_located(jaxpr, env)
    for eqn in jaxpr.eqns:
        invals = [env[x] if type(x) is Var else x.val for x in eqn.inputs]  # type: ignore
        out = eqn.primitive.bind(*invals, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.out_binders, out):
                env[v] = o
        else:
            env[eqn.out_binders[0]] = out
    return [env[x] if type(x) is Var else x.val for x in jaxpr.outvars]  # type: ignore


def _eval_located(jaxpr: Jaxpr, env: dict[Var, Any]) -> list[Any]:
    state = _debug.state
    prev = state.location
    try:
        for eqn in jaxpr.eqns:
            src = eqn.source
            if src is not None and src.phase != "backward":
                state.location = src.location
            invals = [env[x] if type(x) is Var else x.val for x in eqn.inputs]  # type: ignore
            out = eqn.primitive.bind(*invals, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            env.update(zip(eqn.out_binders, outs))
    finally:
        state.location = prev
    return [env[x] if type(x) is Var else x.val for x in jaxpr.outvars]  # type: ignore


def eval_jaxpr_checked(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], where: str
) -> None:
    """Run ``jaxpr`` eagerly equation by equation with the debug checks on (the caller
    turned ``config.debug_nans``/``debug_infs`` on): the first primitive whose output
    has a NaN/inf raises ``FloatingPointError``, named with the equation's recorded
    source and prefixed with ``where``. Returns normally if none does."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    state = _debug.state
    prev = state.source
    try:
        for eqn in jaxpr.eqns:
            state.source = eqn.source or _debug.Source("an unknown line", "forward")
            invals = [env[x] if type(x) is Var else x.val for x in eqn.inputs]  # type: ignore
            try:
                out = eqn.primitive.bind(*invals, **eqn.params)
            except FloatingPointError as e:
                raise FloatingPointError(f"{where}: {e}") from None
            outs = out if eqn.primitive.multiple_results else [out]
            env.update(zip(eqn.out_binders, outs))
    finally:
        state.source = prev


# ---------------------------------------------------------------------------
# Dead-code elimination
# ---------------------------------------------------------------------------

# Primitives with effects (printing hooks) are never removed.
effectful_primitives: set[Primitive] = set()


def _param_has_effects(v: Any) -> bool:
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        return has_effects(v)
    if isinstance(v, (tuple, list)):
        return any(_param_has_effects(x) for x in v)
    return False


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    """Whether ``eqn`` is effectful or runs a sub-jaxpr (a loop body, a branch) holding
    an effectful equation: dead-code elimination keeps it."""
    if eqn.primitive in effectful_primitives:
        return True
    return bool(effectful_primitives) and any(_param_has_effects(v) for v in eqn.params.values())


def has_effects(jaxpr: Jaxpr) -> bool:
    """Whether an equation of ``jaxpr`` (or of its sub-jaxprs) is effectful."""
    return any(eqn_has_effects(e) for e in jaxpr.eqns)


def dce_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Drop equations whose outputs are unused (inputs are kept as they are), except
    effectful ones (:func:`eqn_has_effects`)."""
    live: set[Var] = {x for x in jaxpr.outvars if isinstance(x, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders) or eqn_has_effects(eqn):
            kept.append(eqn)
            live.update(x for x in eqn.inputs if isinstance(x, Var))
    kept.reverse()
    if len(kept) == len(jaxpr.eqns):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, tuple(kept), jaxpr.outvars)


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------


RESERVED_NAMES = frozenset(("np", "math"))
"""Names the jit driver binds itself (its modules): a variable is never named so."""


def var_namer() -> Any:
    """A namer giving variables ``a``, ``b``, ... ``z``, ``aa``, ``ab``... in the order
    first asked for. Names are valid Python identifiers: a Python keyword or one of
    :data:`RESERVED_NAMES` gets a trailing underscore (``as_``, ``in_``). The jaxpr
    printer and the jit driver (whose variables carry these names) share it."""
    names: dict[Var, str] = {}

    def name(v: Var) -> str:
        n = names.get(v)
        if n is None:
            i, s = len(names), ""
            while True:
                s = chr(ord("a") + i % 26) + s
                i = i // 26 - 1
                if i < 0:
                    break
            if keyword.iskeyword(s) or s in RESERVED_NAMES:
                s += "_"
            n = names[v] = s
        return n

    return name


def pp_param(v: Any, inline_jaxprs: bool = True) -> str:
    """A parameter value as printed in an equation; a sub-jaxpr inline on one line, or
    ``{...}`` when ``inline_jaxprs`` is False (the jit driver's comments)."""
    if isinstance(v, (ClosedJaxpr, Jaxpr)):
        if not inline_jaxprs:
            return "{...}"
        return " ".join(pp_jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v).split())
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, tuple):
        inner = ",".join(pp_param(x, inline_jaxprs) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if callable(v) and hasattr(v, "__name__"):
        return str(v.__name__)
    return repr(v) if isinstance(v, str) else str(v)


def pp_atom(x: Atom, name: Any) -> str:
    """A variable's name or a literal's value with its type (``2.0:f32[]``)."""
    if isinstance(x, Literal):
        val = x.val
        if isinstance(val, (np.ndarray, np.generic)):
            val = val.item()
        return f"{val!r}:{x.aval.str_short()}" if not isinstance(val, bool) else str(val)
    return name(x)


def pp_eqn_line(
    eqn: JaxprEqn, outs: Sequence[str], args: Sequence[str], inline_jaxprs: bool = True
) -> str:
    """``outs = primitive[params] args`` with the given texts for the results and the
    operands (the native-loop and kernel comments pass their own local names)."""
    params = ""
    if eqn.params:
        params = ", ".join(f"{k}={pp_param(v, inline_jaxprs)}" for k, v in eqn.params.items())
        params = f"[{params}]"
    return f"{' '.join(outs)} = {eqn.primitive.name}{params} {' '.join(args)}".rstrip()


def pp_eqn(eqn: JaxprEqn, name: Any, inline_jaxprs: bool = True) -> str:
    """One equation in the jaxpr text format, e.g. ``c:f32[3] = mul a b``; ``name`` is
    a :func:`var_namer`."""
    outs = [f"{name(v)}:{v.aval.str_short()}" for v in eqn.out_binders]
    return pp_eqn_line(eqn, outs, [pp_atom(x, name) for x in eqn.inputs], inline_jaxprs)


def pp_jaxpr(jaxpr: Jaxpr, indent: int = 0) -> str:
    """The jaxpr in JAX's text format (DESIGN.md section 3)."""
    name = var_namer()
    pad = " " * indent

    def binder(v: Var) -> str:
        return f"{name(v)}:{v.aval.str_short()}"

    consts = " ".join(binder(v) for v in jaxpr.constvars)
    ins = " ".join(binder(v) for v in jaxpr.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let".replace("lambda ;", "lambda ;")]
    for eqn in jaxpr.eqns:
        lines.append(f"{pad}    {pp_eqn(eqn, name)}")
    outs = ", ".join(pp_atom(x, name) for x in jaxpr.outvars)
    if len(jaxpr.outvars) == 1:
        outs += ","
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)


def jaxpr_to_dot(jaxpr: Jaxpr) -> str:
    """Graphviz DOT text: inputs and constants as boxes, equations as ellipses."""
    name = var_namer()
    out = ["digraph jaxpr {", "  rankdir=TB;", '  node [fontname="monospace", fontsize=10];']
    producer: dict[Var, str] = {}
    for v in jaxpr.constvars:
        n = name(v)
        producer[v] = f"v_{n}"
        out.append(f'  v_{n} [shape=box, style=dashed, label="{n}:{v.aval.str_short()} (const)"];')
    for v in jaxpr.invars:
        n = name(v)
        producer[v] = f"v_{n}"
        out.append(
            f'  v_{n} [shape=box, style=filled, fillcolor="#dbe9f6", '
            f'label="{n}:{v.aval.str_short()}"];'
        )
    for i, eqn in enumerate(jaxpr.eqns):
        node = f"e{i}"
        outs = ", ".join(f"{name(v)}:{v.aval.str_short()}" for v in eqn.out_binders)
        params = ""
        if eqn.params:
            params = "\\n" + ", ".join(
                f"{k}={pp_param(v)}" for k, v in eqn.params.items() if not _is_jaxpr(v)
            )
        label = html.escape(f"{eqn.primitive.name}{params}\\n→ {outs}", quote=True)
        out.append(f'  {node} [shape=ellipse, label="{label}"];')
        for x in eqn.inputs:
            if isinstance(x, Var):
                out.append(f"  {producer[x]} -> {node};")
            else:
                lit = f"lit{i}_{id(x)}"
                out.append(f'  {lit} [shape=plaintext, label="{pp_atom(x, name)}"];')
                out.append(f"  {lit} -> {node};")
        for v in eqn.out_binders:
            producer[v] = node
    for k, x in enumerate(jaxpr.outvars):
        out.append(f'  out{k} [shape=box, style=filled, fillcolor="#f6e3db", label="out {k}"];')
        if isinstance(x, Var):
            out.append(f"  {producer[x]} -> out{k};")
    out.append("}")
    return "\n".join(out)


def _is_jaxpr(v: Any) -> bool:
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _live_eqns(jaxpr: Jaxpr) -> list[bool]:
    """Per equation, whether an output depends on it or it has effects (what
    :func:`dce_jaxpr` keeps)."""
    live_vars: set[Var] = {x for x in jaxpr.outvars if isinstance(x, Var)}
    live = [False] * len(jaxpr.eqns)
    for i in range(len(jaxpr.eqns) - 1, -1, -1):
        eqn = jaxpr.eqns[i]
        if any(v in live_vars for v in eqn.out_binders) or eqn_has_effects(eqn):
            live[i] = True
            live_vars.update(x for x in eqn.inputs if isinstance(x, Var))
    return live


def _svg_param(k: str, v: Any) -> str:
    if _is_jaxpr(v):
        n = len((v.jaxpr if isinstance(v, ClosedJaxpr) else v).eqns)
        return f"{k}={{{n} eqn{'s' if n != 1 else ''}}}"
    if isinstance(v, (tuple, list)) and v and all(_is_jaxpr(x) for x in v):
        return f"{k}=({len(v)} jaxprs)"
    return f"{k}={' '.join(pp_param(v).split())}"  # one line, whatever the value prints


def _eqn_node(i: int, eqn: JaxprEqn, name: Any, dead: bool) -> _graph_svg.Node:
    nested = any(
        _is_jaxpr(v) or (isinstance(v, (tuple, list)) and any(_is_jaxpr(x) for x in v))
        for v in eqn.params.values()
    )
    parts = [_svg_param(k, v) for k, v in eqn.params.items() if v is not None]
    lines = _graph_svg.wrap([eqn.primitive.name, *parts], 40)
    if len(lines) > 4:
        lines = [*lines[:3], _graph_svg.shorten(lines[3], 39) + " …"]
    outs = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in eqn.out_binders)
    args = " ".join(pp_atom(x, name) for x in eqn.inputs)
    lines.append(_graph_svg.shorten(f"{args} → {outs}" if args else f"→ {outs}", 44))
    tip = _graph_svg.shorten(
        pp_eqn(eqn, name) + (" (dead: no output uses it)" if dead else ""), 2000
    )
    return _graph_svg.Node(f"e{i}", "nested" if nested else "eqn", "inner", lines, tip, dead)


def _summary_svg(jaxpr: Jaxpr, n_drawn: int, max_eqns: int) -> str:
    counts: dict[str, int] = {}
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def count(n: int, what: str) -> str:
        return f"{n} {what}{'' if n == 1 else 's'}"

    lines = [
        f"jaxpr: {count(len(jaxpr.eqns), 'equation')}, {count(len(jaxpr.constvars), 'constant')}, "
        f"{count(len(jaxpr.invars), 'input')}, {count(len(jaxpr.outvars), 'output')}",
        f"{count(n_drawn, 'equation')} to draw: over max_eqns={max_eqns}, so not drawn",
        "most used primitives:",
        *(f"- {p} x {c}" for p, c in top[:12]),
        *([f"- ... and {count(len(top) - 12, 'other primitive')}"] if len(top) > 12 else []),
        "print(...) shows the program as text; to_svg(max_eqns=...) draws it anyway",
    ]
    tip = "the jaxpr is too large to draw"
    return _graph_svg.render([_graph_svg.Node("summary", "summary", "source", lines, tip)], [])


def jaxpr_to_svg(jaxpr: Jaxpr, show_dead: bool = True, max_eqns: int = 500) -> str:
    """The jaxpr drawn as SVG text (see :meth:`ClosedJaxpr.to_svg`)."""
    if not isinstance(show_dead, bool):
        raise TypeError(f"to_svg: show_dead must be True or False, got {show_dead!r}")
    if isinstance(max_eqns, bool) or not isinstance(max_eqns, (int, np.integer)) or max_eqns < 0:
        raise TypeError(f"to_svg: max_eqns must be an int >= 0, got {max_eqns!r}")
    live = _live_eqns(jaxpr)
    n_drawn = len(live) if show_dead else sum(live)
    if n_drawn > max_eqns:
        return _summary_svg(jaxpr, n_drawn, max_eqns)
    name = var_namer()
    nodes: list[_graph_svg.Node] = []
    edges: list[_graph_svg.Edge] = []
    producer: dict[Var, int] = {}
    for kind, group in (("const", jaxpr.constvars), ("input", jaxpr.invars)):
        for k, v in enumerate(group):
            n = f"{name(v)}:{v.aval.str_short()}"
            label = f"const {k}" if kind == "const" else f"input {k}"
            producer[v] = len(nodes)
            nodes.append(
                _graph_svg.Node(f"v_{name(v)}", kind, "source", [n, label], f"{label}: {n}")
            )

    def read(x: Atom, dst: int, dead: bool, seen: set[Var]) -> None:
        if isinstance(x, Var) and x not in seen:
            seen.add(x)
            tip = f"{name(x)}:{x.aval.str_short()}"
            edges.append(_graph_svg.Edge(producer[x], dst, tip, dead))

    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.out_binders:
            name(v)
        if not (live[i] or show_dead):
            continue
        node = _eqn_node(i, eqn, name, not live[i])
        seen: set[Var] = set()
        for x in eqn.inputs:
            read(x, len(nodes), node.dead, seen)
        for v in eqn.out_binders:
            producer[v] = len(nodes)
        nodes.append(node)
    for k, x in enumerate(jaxpr.outvars):
        text = pp_atom(x, name) if isinstance(x, Literal) else f"{name(x)}:{x.aval.str_short()}"
        idx = len(nodes)
        nodes.append(
            _graph_svg.Node(f"out{k}", "output", "sink", [f"out {k}", text], f"output {k}: {text}")
        )
        read(x, idx, False, set())
    return _graph_svg.render(nodes, edges, empty_text="empty jaxpr: no inputs, no outputs")


__all__ = [
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "Var",
    "dce_jaxpr",
    "eqn_has_effects",
    "has_effects",
    "eval_jaxpr",
    "jaxpr_to_dot",
    "jaxpr_to_svg",
    "pp_atom",
    "pp_eqn",
    "pp_eqn_line",
    "pp_jaxpr",
    "pp_param",
    "typecheck_jaxpr",
    "var_namer",
]
