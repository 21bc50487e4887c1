"""The composition fuzzer: random programs from the op table under random transform stacks.

A *program* is a few op-table rows wired together. Each row's drawn arguments are
perturbed by a small smooth function of the program's inputs ``(x, y)`` (of a scalar
summary of the inputs, or of an earlier row's output broadcast into the argument), so
that every row depends on the inputs, intermediates of every layout the rows produce
(transposed, sliced, stacked, broadcast, ...) feed later rows, and rows see batched and
unbatched operands together under ``vmap``. A row may be wrapped in ``lax.cond``, in a
``custom_jvp``/``custom_vjp`` whose body hides its derivative (``stop_gradient``) and
whose rule is the true derivative (so a transform that bypasses the rule gives zero
instead of the finite-difference answer), or in a ``grad_hook`` that rescales its
cotangent by the cotangent's own norm (so a hook that sees a batch instead of one
example gives different numbers) and by a traced scalar of the inputs that it closes
over (so a hook that sees another example's value, or none, does too).

A *stack* is up to three transforms from {grad, vjp, jvp, vmap (in_axes 0, 1, None),
jit, pmap (a compiled vmap), shard_map (vmap over the shards of a virtual mesh):
drawn stacks only} in any order. Each case is checked twice:

* the outermost transform replaced by its reference (jit -> eager, vmap -> a Python
  loop over examples (a batch of none: one example's result stacked zero times),
  grad/vjp/jvp -> central finite differences of the rest of the
  stack; finite differences are skipped for reverse mode through a program with a hook,
  which changes reverse-mode cotangents on purpose, where the value is not finite, and
  where a mismatch turns out to be theirs: within their rounding error (huge outputs),
  or differences at a ten times smaller step disagree with them;
  differentiated programs have no float64 -> float32 rows, whose rounding steps finite
  differences cannot resolve);
* every vmap, pmap and shard_map replaced by a loop and every jit removed, derivative
  transforms kept.

Any mismatch fails with the program and the stack printed.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace.sharding import PartitionSpec as P
from op_db import ALL_OPS, OpInfo, op_args

B = 2  # examples per vmap layer of the enumerated stacks
BATCH_SIZES = (2, 2, 0, 1)
"""Examples per vmap layer of the drawn stacks: mostly two, also none and one (a batch
of nothing must give the empty result of the right shape and dtype, under every other
transform)."""
EPS = 0.01  # size of the input-dependent perturbation of a row's arguments
FD_STEP = 1e-6
DERIVATIVES = ("grad", "vjp", "jvp")


def _row_dtype(op: OpInfo) -> Any:
    return np.float64 if np.float64 in [np.dtype(d).type for d in op.dtypes] else op.dtypes[0]


def _float_positions(op: OpInfo) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(op.args) if a.kind == "float")


# Rows whose results are a float argument's bits: the input-dependent perturbation
# (``2.0 ** tanh(...)``...) is computed by NumPy's vectorised loops under vmap and its
# scalar ones in the loop reference, which may differ in the last bit, and these rows
# show that bit (their own checks, in the op-table tests, are exact).
BIT_ROWS = ("bitcast_convert_type",)


def _usable(op: OpInfo) -> bool:
    return (
        bool(_float_positions(op))
        and _row_dtype(op) == np.float64
        and not any(p in BIT_ROWS for p in op.primitives)
    )


DIFF_ROWS = [op for op in ALL_OPS if _usable(op) and op.grad]
OTHER_ROWS = [op for op in ALL_OPS if _usable(op) and not op.grad]


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------


@dataclass
class Node:
    op: OpInfo
    args: tuple[Any, ...]  # the drawn arguments (before perturbation)
    # per float argument position: ("in", weight) or ("node", j, "direct"|"sum", weight)
    links: dict[int, tuple[Any, ...]]
    wrap: str  # none | cond | remat | fori | custom_jvp | custom_vjp | hook
    shaper: str = "tanh"  # the bounded function of the link (SHAPERS)
    cond_threshold: float = 0.0

    def args_at(self, positions: list[int]) -> list[Any]:
        return [self.args[i] for i in positions]

    def describe(self, k: int) -> str:
        args = ", ".join(
            f"<{np.shape(a)} {np.asarray(a).dtype}>" if i in self.links else repr(a)
            for i, a in enumerate(self.args)
        )
        links = "; ".join(
            f"arg{i} += {EPS} * {SHAPER_TEXT[self.shaper].format(_link_text(v))}"
            for i, v in self.links.items()
        )
        return f"  n{k} = {self.wrap}[{self.op.name}]({args})   # {links}"


# Bounded smooth functions of a link, written with Python scalars on either side of the
# operators (weak-typed scalars meeting traced values).
SHAPERS: dict[str, Any] = {
    "tanh": fnp.tanh,
    "rpow": lambda u: 2.0 ** fnp.tanh(u) - 1.0,
    "rdiv": lambda u: 1.0 / (2 - fnp.tanh(u)) - 0.5,
    "square": lambda u: fnp.tanh(u) ** 2 - 0.5 * fnp.cos(u),
}
SHAPER_TEXT = {
    "tanh": "tanh({})",
    "rpow": "(2.0 ** tanh({}) - 1.0)",
    "rdiv": "(1.0 / (2 - tanh({})) - 0.5)",
    "square": "(tanh({0}) ** 2 - 0.5 * cos({0}))",
}


def _link_text(link: tuple[Any, ...]) -> str:
    if link[0] == "in":
        return "sum(x * cx) + sum(y * cy)"
    _, j, how, _w = link
    return f"n{j}" if how == "direct" else f"sum(n{j}) * w"


@dataclass
class Program:
    nodes: list[Node]
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    cx: np.ndarray
    cy: np.ndarray
    diff: bool  # float output, differentiable in x
    hooks: list[str] = field(default_factory=list)

    @property
    def has_hook(self) -> bool:
        return any(n.wrap == "hook" for n in self.nodes)

    @property
    def has_custom_vjp(self) -> bool:
        return any(n.wrap == "custom_vjp" for n in self.nodes)

    @property
    def grad_order(self) -> int:
        return min(n.op.grad_order for n in self.nodes)

    @property
    def fd_rtol(self) -> float:
        """The relative tolerance against finite differences: the loosest row's, as
        its gradient check uses it (``10 * grad_tol``; 1e-4 for the default rows)."""
        return max(10 * n.op.grad_tol for n in self.nodes)

    @functools.cached_property
    def scale(self) -> float:
        """The size of the program's output (its largest magnitude, at least 1, at
        fixed inputs): grad's head divides by it, so that a huge output (i0 at 24 is
        1e9) does not make the head oscillate faster than finite differences resolve."""
        x, y = _pattern(self.x_shape, 0.1) * 0.5, _pattern(self.y_shape, 0.2) * 0.5
        try:
            out = np.asarray(self(x[()] if x.ndim == 0 else x, y[()] if y.ndim == 0 else y))
        except Exception:  # noqa: BLE001 - the case itself will show it
            return 1.0
        finite = np.abs(out[np.isfinite(out)]) if out.dtype.kind == "f" else np.zeros(0)
        return float(max(1.0, np.max(finite, initial=0.0)))

    def __repr__(self) -> str:
        lines = [f"program(x: f64{list(self.x_shape)}, y: f64{list(self.y_shape)}):"]
        lines += [n.describe(k) for k, n in enumerate(self.nodes)]
        lines.append(
            "  return concatenate(ravel(float leaves))" if self.diff else "  return all leaves"
        )
        return "\n".join(lines)

    # -- running it (traceable: every operation goes through functrace.numpy) --

    def __call__(self, x: Any, y: Any) -> Any:
        s_in = fnp.sum(x * self.cx) + fnp.sum(y * self.cy)
        outs: list[tuple[Any, ...]] = []
        for node in self.nodes:
            outs.append(_run_node(node, s_in, outs))
        leaves = [leaf for out in outs for leaf in out]
        if not self.diff:
            return tuple(leaves)
        return fnp.concatenate([fnp.ravel(fnp.asarray(v, dtype=np.float64)) for v in leaves])


def _leaves(out: Any) -> tuple[Any, ...]:
    return tuple(ft.tree_util.tree_leaves(out))


def _run_node(node: Node, s_in: Any, outs: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    positions = sorted(node.links)
    bases = [node.args[i] for i in positions]

    def perturbation(link: tuple[Any, ...]) -> Any:
        if link[0] == "in":
            u = s_in
        else:
            _, j, how, w = link
            src = outs[j][0]
            u = src if how == "direct" else fnp.sum(src) * w
        return SHAPERS[node.shaper](u)

    moved = [b + EPS * perturbation(node.links[i]) for i, b in zip(positions, bases)]

    def row(*floats: Any) -> tuple[Any, ...]:
        full = list(node.args)
        for i, v in zip(positions, floats):
            full[i] = v
        return _leaves(node.op.fn(*full))

    if node.wrap == "none":
        return row(*moved)
    if node.wrap == "cond":

        def half(*floats: Any) -> tuple[Any, ...]:
            return tuple(v * 0.5 if _is_float(v) else v for v in row(*floats))

        return _leaves(lax.cond(s_in > node.cond_threshold, row, half, *moved))
    if node.wrap == "fori":

        def body(i: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(c * 0.5 + v for c, v in zip(carry, row(*moved)))

        init = tuple(fnp.zeros(np.shape(v), np.float64) for v in row(*node.args_at(positions)))
        return lax.fori_loop(0, 2, body, init)
    if node.wrap == "remat":  # recomputed in the backward pass, keeping the products
        return _leaves(ft.checkpoint(row, policy=ft.checkpoint_policies.dots_saveable)(*moved))
    if node.wrap == "hook":
        # the hook closes over a traced value (batched per example under vmap, an
        # argument under jit), which it needs wherever it runs
        scale = 1.0 + 0.25 * fnp.tanh(s_in)

        def hook(g: Any) -> Any:
            return _clip_hook(g) * scale

        return tuple(ft.grad_hook(v, hook) if _is_float(v) else v for v in row(*moved))
    if node.wrap == "custom_jvp":
        f = ft.custom_jvp(lambda *a: tuple(lax.stop_gradient(v) for v in row(*a)))
        f.defjvp(lambda primals, tangents: ft.jvp(row, primals, tangents))
        return _leaves(f(*moved))
    if node.wrap == "custom_vjp":
        f = ft.custom_vjp(lambda *a: tuple(lax.stop_gradient(v) for v in row(*a)))
        f.defvjp(lambda *a: (row(*a), a), lambda res, g: ft.vjp(row, *res)[1](g))
        return _leaves(f(*moved))
    raise AssertionError(node.wrap)


def _clip_hook(g: Any) -> Any:
    # depends on the whole cotangent: per-example and whole-batch calls differ
    return g / (1.0 + fnp.sum(g * g))


def _is_float(v: Any) -> bool:
    dtype = v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype
    return np.dtype(dtype).kind == "f"


# ---------------------------------------------------------------------------
# Drawing programs
# ---------------------------------------------------------------------------

SHAPES = [(), (2,), (3,), (2, 2)]


@st.composite
def programs(draw: Any, diff: bool) -> Program:
    rows = DIFF_ROWS if diff else DIFF_ROWS + OTHER_ROWS
    n = draw(st.integers(1, 3))
    x_shape = draw(st.sampled_from(SHAPES))
    y_shape = draw(st.sampled_from([(), (2,)]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    cx = rng.uniform(-1, 1, x_shape)
    cy = rng.uniform(-1, 1, y_shape)
    nodes: list[Node] = []
    out_shapes: list[tuple[int, ...]] = []
    while len(nodes) < n:
        op = rows[int(rng.integers(len(rows)))]  # uniform over the table
        args = draw(op_args(op, _row_dtype(op)))
        out = _leaves(op.fn(*args))
        if diff and any(np.asarray(v).dtype in (np.float32, np.float16) for v in out):
            continue  # a float64 -> float32 row: finite differences would see its rounding
        links: dict[int, tuple[Any, ...]] = {}
        for i in _float_positions(op):
            shape = np.shape(args[i])
            choices: list[tuple[Any, ...]] = [("in", 1.0)]
            for j, s in enumerate(out_shapes):
                if s == (-2,):
                    continue
                choices.append(("node", j, "sum", float(rng.uniform(-1, 1))))
                try:
                    if np.broadcast_shapes(s, shape) == shape:
                        choices.append(("node", j, "direct", 1.0))
                except ValueError:
                    pass
            links[i] = draw(st.sampled_from(choices))
        all_float = all(np.asarray(v).dtype.kind == "f" for v in out)
        wraps = ["none", "cond", "remat"]
        if all_float:
            wraps += ["fori"]
        if diff and all_float:
            wraps += ["custom_jvp", "custom_vjp", "hook"]
        wrap = draw(st.sampled_from(wraps))
        shaper = draw(st.sampled_from(sorted(SHAPERS)))
        node = Node(op, args, links, wrap, shaper, cond_threshold=float(rng.uniform(-0.5, 0.5)))
        nodes.append(node)
        first = np.asarray(out[0])
        # -1: no direct link (not a real float); -2: no link at all (complex: its sum
        # would make the float argument it perturbs complex)
        kind = first.dtype.kind
        out_shapes.append(first.shape if kind == "f" else (-2,) if kind == "c" else (-1,))
    return Program(nodes, x_shape, y_shape, cx, cy, diff)


# ---------------------------------------------------------------------------
# Transform stacks
# ---------------------------------------------------------------------------

VMAP_AXES = [(0, 0), (1, 0), (0, None), (None, 0), (0, 1)]
MAPS = ("vmap", "pmap", "shard_map")
"""Transforms that map over a batch axis (``pmap`` is a compiled ``vmap``;
``shard_map`` splits the batch over a virtual mesh of two shards, or one for an odd
batch, and maps the program over each shard's examples with ``vmap``, with
``check_vma=False``)."""


def _insert(shape: tuple[int, ...], ax: int | None, size: int) -> tuple[int, ...] | None:
    if ax is None:
        return shape
    if ax > len(shape):
        return None
    return shape[:ax] + (size,) + shape[ax:]


def stack_input_shapes(
    prog: Program, stack: list[tuple[Any, ...]]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The outermost inputs' shapes (vmaps add batch axes from the inside out)."""
    xs, ys = prog.x_shape, prog.y_shape
    for t in reversed(stack):
        if t[0] in MAPS:
            xs2, ys2 = _insert(xs, t[1][0], t[2]), _insert(ys, t[1][1], t[2])
            if xs2 is None or ys2 is None:
                return None
            xs, ys = xs2, ys2
    return xs, ys


def valid_stack(prog: Program, stack: list[tuple[Any, ...]]) -> bool:
    n_deriv = sum(t[0] in DERIVATIVES for t in stack)
    if n_deriv and not prog.diff:
        return False
    if n_deriv > prog.grad_order + (1 if prog.grad_order >= 2 else 0):
        return False
    # forward mode over a custom_vjp is a documented error (as in JAX): tested elsewhere
    if prog.has_custom_vjp and any(t[0] == "jvp" for t in stack):
        return False
    return stack_input_shapes(prog, stack) is not None


transforms = st.one_of(
    st.sampled_from([("grad",), ("vjp",), ("jvp",), ("jit",)]),
    st.tuples(st.sampled_from(MAPS), st.sampled_from(VMAP_AXES), st.sampled_from(BATCH_SIZES)),
)


def describe_stack(stack: list[tuple[Any, ...]]) -> str:
    text = "f"
    for t in reversed(stack):
        if t[0] in MAPS:
            examples = "" if t[2] == B else f"  # {t[2]} example{'s' * (t[2] != 1)}"
            text = f"{t[0]}({text}, in_axes={t[1]}){examples}"
        else:
            text = f"{t[0]}({text})"
    return text


def _head(o: Any, scale: float) -> Any:
    return fnp.sum(fnp.sin(o / scale + 0.3))


def _pattern(shape: tuple[int, ...], phase: float) -> np.ndarray:
    return np.sin(np.arange(int(np.prod(shape, dtype=np.int64))) + phase).reshape(shape)


def apply(t: tuple[Any, ...], F: Any, prog: Program) -> Any:
    """One real transform, on functions (x, y) -> array; derivatives are taken in x."""
    kind = t[0]
    if kind == "jit":
        return ft.jit(F)
    if kind == "vmap":
        return ft.vmap(F, in_axes=t[1])
    if kind == "pmap":
        return ft.pmap(F, in_axes=t[1])
    if kind == "shard_map":
        n = 2 if t[2] % 2 == 0 and t[2] > 0 else 1
        specs = tuple(P() if a is None else P(*[None] * a, "s") for a in t[1])
        # check_vma=False: each shard's examples are independent, as the loop reference
        # says (JAX's default would sum a replicated argument's gradient taken inside
        # over the shards; that is checked by the op table's shard_map rows)
        return ft.shard_map(ft.vmap(F, in_axes=t[1]), mesh=ft.make_mesh((n,), ("s",)),
                            in_specs=specs, out_specs=P("s"), check_vma=False)  # fmt: skip
    if kind == "grad":
        return ft.grad(lambda x, y: _head(F(x, y), prog.scale))
    if kind == "vjp":

        def vjp_fn(x: Any, y: Any) -> Any:
            out, pullback = ft.vjp(lambda x: F(x, y), x)
            return pullback(_pattern(np.shape(out), 0.5))[0]

        return vjp_fn
    if kind == "jvp":
        return lambda x, y: ft.jvp(lambda x: F(x, y), (x,), (_pattern(np.shape(x), 1.0),))[1]
    raise AssertionError(kind)


def _take(v: Any, b: int, ax: int | None) -> Any:
    return v if ax is None else v[(slice(None),) * ax + (b,)]


def _example(v: Any, ax: int | None) -> Any:
    """An example of the shape ``v``'s examples have (``v`` batched at ``ax``)."""
    if ax is None:
        return v
    shape = np.shape(v)[:ax] + np.shape(v)[ax + 1 :]
    return _pattern(shape, 0.25) * 0.9 if shape else 0.9 * np.sin(0.25)


def _difference(hi: Any, lo: Any, step: float) -> np.ndarray:
    """The central difference quotient; an output equal at both points (an infinity
    included) has difference 0."""
    hi, lo = np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(hi == lo, 0.0, (hi - lo) / (2 * step))


def reference(t: tuple[Any, ...], F: Any, prog: Program, step: float = FD_STEP) -> Any:
    """What transform ``t`` of ``F`` (built from ``prog``) must equal, computed without
    ``t`` (derivatives: central differences at ``step``); None where the reference does
    not apply (finite differences through a reverse-mode hook)."""
    kind = t[0]
    if kind == "jit":
        return F
    if kind in MAPS:
        ax, ay = t[1]

        def loop(x: Any, y: Any) -> Any:
            size = np.shape(x)[ax] if ax is not None else np.shape(y)[ay]
            if size == 0:
                # no examples: the results of one example (any values), stacked 0 times
                one = F(_example(x, ax), _example(y, ay))
                if one is None:
                    return None
                return ft.tree_util.tree_map(lambda v: fnp.stack([v])[:0], one)
            outs = [F(_take(x, b, ax), _take(y, b, ay)) for b in range(size)]
            return ft.tree_util.tree_map(lambda *vs: fnp.stack(vs), *outs)

        return loop
    if kind == "jvp":

        def fd_jvp(x: Any, y: Any) -> Any:
            t_x = _pattern(np.shape(x), 1.0)
            if not _finite(F(x, y)):
                return None
            return _difference(F(x + step * t_x, y), F(x - step * t_x, y), step)

        return fd_jvp
    if prog.has_hook:
        return None

    def fd_reverse(x: Any, y: Any) -> Any:
        # Differences of each output element, then weighted by the cotangent (the head's
        # derivative for grad): weighting first would lose small changes next to huge
        # constant outputs (nan_to_num's 1.8e308) to rounding.
        x = np.asarray(x, dtype=np.float64)
        out = np.asarray(F(x, y), dtype=np.float64)
        if not _finite(out):
            return None
        ct = _head_cotangent(kind, out, prog.scale)
        g = np.zeros(x.shape)
        for idx in np.ndindex(x.shape):
            e = np.zeros(x.shape)
            e[idx] = step
            g[idx] = np.sum(ct * _difference(F(x + e, y), F(x - e, y), step))
        return g

    return fd_reverse


def _head_cotangent(kind: str, out: np.ndarray, scale: float) -> np.ndarray:
    """The cotangent reverse mode takes in the output: the head's derivative for grad,
    vjp's fixed pattern."""
    return np.cos(out / scale + 0.3) / scale if kind == "grad" else _pattern(out.shape, 0.5)


def _finite(out: Any) -> bool:
    """Whether every float of ``out`` is finite: finite differences of an infinite or NaN
    value (a row's huge value overflowing) are NaN, and no reference, where a derivative
    can still be finite (a ``where`` that selects a constant there)."""
    leaves = [np.asarray(v) for v in ft.tree_util.tree_leaves(out)]
    return all(np.all(np.isfinite(v)) for v in leaves if v.dtype.kind in "fc")


def build(prog: Program, stack: list[tuple[Any, ...]], skip: frozenset[str] = frozenset()) -> Any:
    """The stack applied to the program; transforms named in ``skip`` are replaced by
    their references (jit -> nothing, vmap -> loop)."""
    F: Any = prog
    for t in reversed(stack):
        F = reference(t, F, prog) if t[0] in skip else apply(t, F, prog)
    return F


def inputs(prog: Program, stack: list[tuple[Any, ...]], seed: int) -> tuple[Any, Any]:
    shapes = stack_input_shapes(prog, stack)
    assert shapes is not None
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shapes[0])
    y = rng.uniform(-1, 1, shapes[1])
    return (x[()] if x.ndim == 0 else x), (y[()] if y.ndim == 0 else y)


class Case:
    """One program, one stack, one input seed (printed as a readable listing)."""

    def __init__(self, prog: Program, stack: list[tuple[Any, ...]], seed: int) -> None:
        self.prog, self.stack, self.seed = prog, stack, seed

    def __repr__(self) -> str:
        return f"{self.prog!r}\nstack: {describe_stack(self.stack)}\ninput seed: {self.seed}"


@st.composite
def cases(draw: Any, stack: list[tuple[Any, ...]] | None = None) -> Case:
    """A case with a random stack, or with the given one (a program that can take it)."""
    if stack is not None:
        diff = any(t[0] in DERIVATIVES for t in stack) or draw(st.booleans())
        prog = draw(programs(diff).filter(lambda p: valid_stack(p, stack)))
        return Case(prog, list(stack), draw(st.integers(0, 2**31 - 1)))
    n = draw(st.sampled_from([3, 2, 1]))
    stack = draw(st.lists(transforms, min_size=n, max_size=n))
    diff = any(t[0] in DERIVATIVES for t in stack) or draw(st.booleans())
    prog = draw(programs(diff))
    if not valid_stack(prog, stack):
        # drop derivative transforms the program cannot take, keep the rest
        stack = [t for t in stack if t[0] not in DERIVATIVES or valid_stack(prog, [t])]
        while stack and not valid_stack(prog, stack):
            stack.pop()
        if not stack:
            stack = [("jit",)]
    return Case(prog, stack, draw(st.integers(0, 2**31 - 1)))


# ---------------------------------------------------------------------------
# Checking one case
# ---------------------------------------------------------------------------

# Limitations that raise a documented error (the same in the transform and in its
# reference): (exception type, a phrase of its message).
DOCUMENTED_ERRORS: list[tuple[type[BaseException], str]] = []


def _documented(e: BaseException) -> bool:
    return any(isinstance(e, t) and phrase in str(e) for t, phrase in DOCUMENTED_ERRORS)


def _run(f: Any, x: Any, y: Any) -> tuple[Any, BaseException | None]:
    try:
        return f(x, y), None
    except Exception as e:  # noqa: BLE001 - compared below
        return None, e


def _assert_close(got: Any, want: Any, what: str, fd: bool, fd_rtol: float) -> None:
    g_leaves, g_tree = ft.tree_util.tree_flatten(got)
    w_leaves, w_tree = ft.tree_util.tree_flatten(want)
    assert g_tree == w_tree, f"{what}: structure {g_tree} != {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        a, b = np.asarray(g), np.asarray(w)
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        if not fd:
            assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
            if fd:
                rtol, atol = fd_rtol, fd_rtol / 10 * scale
            elif np.float32 in (a.dtype, b.dtype):
                rtol, atol = 2e-5, 2e-5 * scale
            else:
                rtol, atol = 1e-7, 1e-9 * scale
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def check(case: Case) -> None:
    prog, stack = case.prog, case.stack
    x, y = inputs(prog, stack, case.seed)
    got, err = _run(build(prog, stack), x, y)
    refs = []
    outer = reference(stack[0], build(prog, stack[1:]), prog)
    if outer is not None:
        refs.append((f"{stack[0][0]} replaced by its reference", outer, stack[0][0] in DERIVATIVES))
    if any(t[0] in ("jit", *MAPS) for t in stack[1:]) or (
        stack[0][0] in ("jit", *MAPS) and len(stack) > 1
    ):
        plain = build(prog, stack, skip=frozenset({"jit", *MAPS}))
        refs.append(("every map a loop, every jit removed", plain, False))
    for what, ref, fd in refs:
        want, ref_err = _run(ref, x, y)
        if ref_err is not None and not _documented(ref_err):
            raise AssertionError(
                f"{describe_stack(stack)}: the reference ({what}) raised "
                f"{type(ref_err).__name__}: {ref_err}"
            ) from ref_err
        if err is not None and not _documented(err):
            raise AssertionError(
                f"{describe_stack(stack)} raised {type(err).__name__}: {err}"
            ) from err
        if (err is None) != (ref_err is None):
            raise AssertionError(
                f"{describe_stack(stack)}: "
                + (
                    f"raised the documented {type(err).__name__}: {err}; the reference did not"
                    if err is not None
                    else f"the reference raised {type(ref_err).__name__}: {ref_err}; the "
                    "transform did not"
                )
            )
        if err is not None or (fd and want is None):  # None: no finite differences here
            continue
        try:
            _assert_close(got, want, f"{describe_stack(stack)} vs {what}", fd, prog.fd_rtol)
        except AssertionError:
            if not fd or _resolves(stack, prog, x, y, got, want):
                raise


def _resolves(
    stack: list[tuple[Any, ...]], prog: Program, x: Any, y: Any, got: Any, want: Any
) -> bool:
    """Whether finite differences resolve the derivative here, so that a mismatch is the
    transform's. Not where the mismatch is within the differences' rounding error (a
    huge output, whose last bit is worth more than its change over the step), nor where
    they disagree with those at a ten times smaller step (a huge intermediate value fed
    to a periodic function: its phase moves by a sizeable fraction of a turn)."""
    inner = build(prog, stack[1:])
    out = np.asarray(inner(x, y))
    if out.dtype.kind == "f":
        # each output is rounded (say, to 16 of its last bits) at both points
        err = 16 * np.finfo(out.dtype).eps * np.abs(out.astype(np.float64)) / FD_STEP
        if stack[0][0] != "jvp":
            ct = _head_cotangent(stack[0][0], out, prog.scale)
            err = np.full(np.shape(x), np.sum(np.abs(ct) * err))
        miss = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))
        if np.all(miss <= err + prog.fd_rtol * np.abs(np.asarray(want, np.float64))):
            return False
    again = reference(stack[0], inner, prog, step=FD_STEP / 10)(x, y)
    if again is None:
        return False
    try:
        _assert_close(want, again, "finite differences at two steps", True, prog.fd_rtol)
    except AssertionError:
        return False
    return True


def all_stacks(max_len: int) -> list[list[tuple[Any, ...]]]:
    """Every stack of up to ``max_len`` transforms (vmap at in_axes (0, 0), (1, 0),
    (0, None) and (None, 0))."""
    kinds = [("grad",), ("vjp",), ("jvp",), ("jit",)] + [("vmap", ax, B) for ax in VMAP_AXES[:4]]
    return [list(p) for n in range(1, max_len + 1) for p in itertools.product(kinds, repeat=n)]
