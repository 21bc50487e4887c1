"""Reduction primitives: sums, products, extrema, arg-extrema and cumulative ops
(``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``).

Axes are a static, sorted tuple of non-negative ints. Each primitive is one
block: definition, NumPy impl, abstract eval, JVP and (if linear) transpose.

Decisions (JAX's semantics unless noted):

* ``reduce_max``/``reduce_min`` over an empty axis give the identity (``-inf``/``inf``,
  ``-inf+0j``/``inf+0j``, the integer min/max, False/True), as in JAX, where NumPy raises.
* ``reduce_max``/``reduce_min`` order complex operands lexicographically (real part,
  then imaginary part), as JAX and NumPy; an entry with a NaN part propagates (the
  first one in NumPy's reduction order: NumPy's value, where JAX skips some NaNs). The
  tangent goes to the selected entry (averaged over equal entries). ``argmax``/
  ``argmin`` refuse complex operands, as JAX's (``functrace.numpy.argmax`` takes them).
* Ties: ``reduce_max``/``reduce_min`` average the tangent over the tied positions
  (NaN entries, which make the result NaN, count as the tied positions);
  ``cummax``/``cummin`` give it to the latest tied position (PyTorch's index
  convention); ``argmax``/``argmin`` return the first one (NumPy), NaN counting as
  the extremum.
* ``cumlogsumexp`` is ``np.logaddexp.accumulate``; its JVP scans softmax-weighted
  tangent pairs (every exponent <= 0, so stable for large entries); where every entry so
  far is ``-inf`` the tangent is their average, where JAX gives NaN.
* ``reduce_prod`` and ``cumprod`` differentiate without dividing by ``x``, so their
  derivatives are exact at zeros and can be differentiated again.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.errors import ConcretizationError
from functrace.interpreters import ad, batching
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.lax import elementwise as ew
from functrace.lax._util import check_dtype_kind, operator_index, register_checked
from functrace.lax.base import _check_axes, _reduce_batch, reduce_sum, reduce_sum_p
from functrace.lax.shapes import broadcast_in_dim, concatenate, pad, reshape, rev, transpose
from functrace.lax.shapes import slice as lax_slice
from functrace.tree_util import tree_flatten, tree_structure, tree_unflatten

# reduce_sum (which the rules of every family use) is defined in functrace.lax.base.


def _canonical_axis(name: str, axis: Any, shape: tuple[int, ...]) -> int:
    a = int(operator_index(axis))
    if not -len(shape) <= a < len(shape):
        raise ValueError(
            f"{name}: expected an axis in [{-len(shape)}, {len(shape)}) for operand "
            f"shape {shape}, got {a}. Pass an axis that exists in the operand."
        )
    return a % len(shape)


def _check_axis(name: str, x: ShapedArray, axis: int) -> None:
    if not 0 <= axis < x.ndim:
        raise ValueError(
            f"{name}: expected an axis in [0, {x.ndim}) for operand shape "
            f"{x.shape}, got {axis}. Rank-0 operands have no axis to scan."
        )


# ---------------------------------------------------------------------------
# reduce_max, reduce_min
# ---------------------------------------------------------------------------


def _identity(dtype: np.dtype, largest: bool) -> Any:
    """The identity of min (largest=True) or max (largest=False) for ``dtype``."""
    if dtype.kind in "fc":  # complex: inf+0j / -inf+0j, JAX's
        return np.inf if largest else -np.inf
    if dtype.kind == "b":
        return largest
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def _extremum(name: str, np_fn: Callable[..., Any], is_max: bool) -> Primitive:
    def abstract(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        check_dtype_kind(name, x, "biufc", "a numeric or boolean")
        return ShapedArray(_check_axes(name, x, axes), x.dtype, x.weak_type)

    def impl(x: Any, *, axes: tuple[int, ...]) -> Any:
        x = np.asarray(x)
        if x.size == 0:  # an empty reduction gives the identity (-inf for max), as in JAX
            return np_fn(x, axis=axes, initial=_identity(x.dtype, not is_max))
        return np_fn(x, axis=axes)

    return register_checked(Primitive(name), impl, abstract)


# (np.max's and np.min's loops, without their Python wrappers)
reduce_max_p = _extremum("reduce_max", np.maximum.reduce, True)
reduce_min_p = _extremum("reduce_min", np.minimum.reduce, False)


def reduce_max(x: Any, axes: tuple[int, ...]) -> Any:
    """Maximum over ``axes`` (static tuple of ints); ``-inf``/int min over empty axes."""
    axes = tuple(sorted(int(a) for a in axes))
    return reduce_max_p.bind(x, axes=axes) if axes else x


def reduce_min(x: Any, axes: tuple[int, ...]) -> Any:
    """Minimum over ``axes`` (static tuple of ints); ``inf``/int max over empty axes."""
    axes = tuple(sorted(int(a) for a in axes))
    return reduce_min_p.bind(x, axes=axes) if axes else x


def _extremum_jvp(g: Any, ans: Any, x: Any, *, axes: tuple[int, ...]) -> Any:
    # d max(x) = sum(dx * [x == max]) / #[x == max]
    # NOTE: at ties the tangent is averaged over the tied positions (max(a, a) gets
    # (da1 + da2) / 2), as for lax.max; empty reductions have a zero tangent. A NaN
    # result comes from the NaN entries (NaN propagates), so they are the positions
    # of the extremum and share its tangent (not 0/0).
    shape = core.get_aval(x).shape
    if any(shape[a] == 0 for a in axes):
        return ad.Zero.from_primal(ans)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    full = broadcast_in_dim(ans, shape, kept)
    at_ext = ew.eq(x, full)
    if core.get_aval(x).dtype.kind in "fc":  # complex: a NaN in either part
        at_ext = ew.bitwise_or(at_ext, ew.bitwise_and(ew.ne(x, x), ew.ne(full, full)))
    mask = ew.convert_element_type(at_ext, core.get_aval(g).dtype)
    return ew.div(reduce_sum(ew.mul(g, mask), axes), reduce_sum(mask, axes))


ad.defjvp2(reduce_max_p, _extremum_jvp)
ad.defjvp2(reduce_min_p, _extremum_jvp)
batching.batching_rules[reduce_max_p] = _reduce_batch(reduce_max_p)
batching.batching_rules[reduce_min_p] = _reduce_batch(reduce_min_p)

# ---------------------------------------------------------------------------
# reduce_prod
# ---------------------------------------------------------------------------


def _reduce_prod_abstract(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    check_dtype_kind("reduce_prod", x, "iufc", "a numeric")
    return ShapedArray(_check_axes("reduce_prod", x, axes), x.dtype, x.weak_type)


def _reduce_prod_impl(x: Any, *, axes: tuple[int, ...]) -> Any:
    x = np.asarray(x)
    return np.prod(x, axis=axes, dtype=x.dtype)


reduce_prod_p = register_checked(Primitive("reduce_prod"), _reduce_prod_impl, _reduce_prod_abstract)


def reduce_prod(x: Any, axes: tuple[int, ...]) -> Any:
    """Product over ``axes`` (static tuple of ints); 1 over empty axes."""
    axes = tuple(sorted(int(a) for a in axes))
    return reduce_prod_p.bind(x, axes=axes) if axes else x


def _reduce_prod_jvp(g: Any, x: Any, *, axes: tuple[int, ...]) -> Any:
    # d prod(x) = sum_i dx_i prod_{j<i} x_j prod_{j>i} x_j: exclusive prefix times exclusive
    # suffix products, no division, so exact where x has zeros (and differentiable again).
    aval = core.get_aval(x)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    flat = tuple(aval.shape[i] for i in kept) + (
        int(np.prod([aval.shape[a] for a in axes], dtype=np.int64)),
    )
    k = len(kept)
    xs = reshape(transpose(x, kept + axes), flat)
    gs = reshape(transpose(g, kept + axes), flat)
    one = np.ones((), aval.dtype)[()]
    edge = ((0, 0, 0),) * k
    before = pad(cumprod(xs, k), one, edge + ((1, -1, 0),))  # shift right, 1 in front
    after = pad(cumprod(xs, k, reverse=True), one, edge + ((-1, 1, 0),))
    return reduce_sum(ew.mul(gs, ew.mul(before, after)), (k,))


ad.defjvp(reduce_prod_p, _reduce_prod_jvp)
batching.batching_rules[reduce_prod_p] = _reduce_batch(reduce_prod_p)

# ---------------------------------------------------------------------------
# argmax, argmin
# ---------------------------------------------------------------------------


def _arg_extremum(name: str, np_fn: Callable[..., Any]) -> Primitive:
    def abstract(x: ShapedArray, *, axis: int, index_dtype: np.dtype) -> ShapedArray:
        if x.dtype.kind == "c":
            raise TypeError(
                f"{name}: expected a real or boolean operand, got {x.dtype.name}. "
                f"lax.{name} does not order complex numbers (as JAX's); "
                f"functrace.numpy.{name} does, lexicographically (as NumPy's)."
            )
        check_dtype_kind(name, x, "biuf", "a real or boolean")
        if not 0 <= axis < x.ndim or x.shape[axis] == 0:
            raise ValueError(
                f"{name}: expected a non-empty axis in [0, {x.ndim}) for operand "
                f"shape {x.shape}, got axis {axis}. An empty axis has no "
                f"{name[3:]}imum."
            )
        if index_dtype.kind not in "iu" or x.shape[axis] - 1 > np.iinfo(index_dtype).max:
            raise TypeError(
                f"{name}: expected an integer index_dtype that holds "
                f"{x.shape[axis] - 1}, got {index_dtype.name}. Use np.int64."
            )
        return ShapedArray(x.shape[:axis] + x.shape[axis + 1 :], index_dtype)

    def impl(x: Any, *, axis: int, index_dtype: np.dtype) -> Any:
        return np_fn(x, axis=axis).astype(index_dtype)

    def batch(vals: Any, bdims: Any, *, axis: int, index_dtype: np.dtype) -> tuple[Any, int]:
        (x,), (bdim,) = vals, bdims
        return p.bind(x, axis=axis + (axis >= bdim), index_dtype=index_dtype), bdim - (axis < bdim)

    p = register_checked(Primitive(name), impl, abstract)
    ad.defjvp_zero(p)  # integer indices: piecewise constant
    batching.batching_rules[p] = batch
    return p


argmax_p = _arg_extremum("argmax", np.argmax)
argmin_p = _arg_extremum("argmin", np.argmin)


def argmax(x: Any, axis: int, index_dtype: Any = np.int64) -> Any:
    """Index of the maximum along ``axis`` (the first one at ties, NaN counts as maximal)."""
    axis = _canonical_axis("argmax", axis, core.get_aval(x).shape)
    return argmax_p.bind(x, axis=axis, index_dtype=np.dtype(index_dtype))


def argmin(x: Any, axis: int, index_dtype: Any = np.int64) -> Any:
    """Index of the minimum along ``axis`` (the first one at ties, NaN counts as minimal)."""
    axis = _canonical_axis("argmin", axis, core.get_aval(x).shape)
    return argmin_p.bind(x, axis=axis, index_dtype=np.dtype(index_dtype))


# ---------------------------------------------------------------------------
# cumsum, cumprod, cummax, cummin (cumlogsumexp below, after the scan helpers)
# ---------------------------------------------------------------------------


def _cumulative(name: str, np_fn: Callable[..., Any], kinds: str, what: str) -> Primitive:
    def abstract(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        check_dtype_kind(name, x, kinds, what)
        _check_axis(name, x, axis)
        return x

    def impl(x: Any, *, axis: int, reverse: bool) -> Any:
        x = np.asarray(x)
        if reverse:
            return np.flip(np_fn(np.flip(x, axis), axis), axis)
        return np_fn(x, axis)

    def batch(vals: Any, bdims: Any, *, axis: int, reverse: bool) -> tuple[Any, int]:
        # Scan along the shifted axis; the batch axis stays where it is.
        (x,), (bdim,) = vals, bdims
        return p.bind(x, axis=axis + (axis >= bdim), reverse=reverse), bdim

    p = register_checked(Primitive(name), impl, abstract)
    batching.batching_rules[p] = batch
    return p


def _cumulative_wrapper(p: Primitive) -> Callable[..., Any]:
    def f(x: Any, axis: int = 0, reverse: bool = False) -> Any:
        axis = _canonical_axis(p.name, axis, core.get_aval(x).shape)
        return p.bind(x, axis=axis, reverse=bool(reverse))

    f.__name__ = p.name
    op = p.name[3:]
    f.__doc__ = f"Inclusive cumulative {op} along ``axis`` (from the end if ``reverse``)."
    return f


cumsum_p = _cumulative(
    "cumsum", lambda x, a: np.cumsum(x, axis=a, dtype=x.dtype), "iufc", "a numeric"
)
cumprod_p = _cumulative(
    "cumprod", lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype), "iufc", "a numeric"
)
cummax_p = _cumulative(
    "cummax", lambda x, a: np.maximum.accumulate(x, axis=a), "biuf", "a real or boolean"
)
cummin_p = _cumulative(
    "cummin", lambda x, a: np.minimum.accumulate(x, axis=a), "biuf", "a real or boolean"
)
cumsum = _cumulative_wrapper(cumsum_p)
cumprod = _cumulative_wrapper(cumprod_p)
cummax = _cumulative_wrapper(cummax_p)
cummin = _cumulative_wrapper(cummin_p)

# cumsum is linear; its transpose sums the cotangent from the other end.
ad.deflinear2(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def _slice_axis(x: Any, start: int, limit: int, stride: int, axis: int) -> Any:
    shape = core.get_aval(x).shape
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(limit if i == axis else d for i, d in enumerate(shape))
    strides = tuple(stride if i == axis else 1 for i in range(len(shape)))
    return lax_slice(x, starts, limits, strides)


def _interleave(even: Any, odd: Any, n: int, axis: int) -> Any:
    """Positions 0, 2, 4, ... from ``even`` and 1, 3, ... from ``odd`` (n in total)."""
    aval = core.get_aval(even)
    count = aval.shape[axis]
    if core.get_aval(odd).shape[axis] < count:
        cfg = tuple((0, 1 if i == axis else 0, 0) for i in range(aval.ndim))
        odd = pad(odd, np.zeros((), aval.dtype)[()], cfg)
    split = aval.shape[: axis + 1] + (1,) + aval.shape[axis + 1 :]
    pairs = concatenate([reshape(even, split), reshape(odd, split)], axis + 1)
    merged = reshape(pairs, aval.shape[:axis] + (2 * count,) + aval.shape[axis + 1 :])
    return _slice_axis(merged, 0, n, 1, axis)


def _prefix_scan(
    combine: Callable[[list[Any], list[Any]], list[Any]], elems: list[Any], axis: int
) -> list[Any]:
    """Inclusive scan of an associative ``combine(earlier, later)`` over a tuple of arrays.

    Built from lax shape ops in log2(n) levels (combine neighbours, scan the pairs
    recursively, fill in the even positions), so it can be differentiated and staged.
    """
    n = core.get_aval(elems[0]).shape[axis]
    if n < 2:
        return list(elems)
    pairs = combine(
        [_slice_axis(e, 0, n - 1, 2, axis) for e in elems],
        [_slice_axis(e, 1, n, 2, axis) for e in elems],
    )
    odd = _prefix_scan(combine, pairs, axis)  # results at positions 1, 3, 5, ...
    first = [_slice_axis(e, 0, 1, 1, axis) for e in elems]
    m = (n - 1) // 2  # even positions 2, 4, ... combine the odd result just before them
    if m:
        rest = combine(
            [_slice_axis(o, 0, m, 1, axis) for o in odd],
            [_slice_axis(e, 2, n, 2, axis) for e in elems],
        )
        even = [concatenate([f, r], axis) for f, r in zip(first, rest)]
    else:
        even = first
    return [_interleave(e, o, n, axis) for e, o in zip(even, odd)]


def _scan_jvp(combine: Callable[[list[Any], list[Any]], list[Any]]) -> Callable[..., Any]:
    def jvp(g: Any, x: Any, *, axis: int, reverse: bool) -> Any:
        if reverse:
            x, g = rev(x, (axis,)), rev(g, (axis,))
        t = _prefix_scan(combine, [x, g], axis)[1]
        return rev(t, (axis,)) if reverse else t

    return jvp


def _product_rule(a: list[Any], b: list[Any]) -> list[Any]:
    # (a, da) * (b, db) = (a b, da b + a db): dual numbers multiply associatively.
    return [ew.mul(a[0], b[0]), ew.add(ew.mul(a[1], b[0]), ew.mul(a[0], b[1]))]


# d cumprod(x)_i = sum_{j<=i} dx_j prod_{k<=i, k!=j} x_k, as a scan of dual numbers (no
# division: exact where x has zeros, and differentiable again).
ad.defjvp(cumprod_p, _scan_jvp(_product_rule))


def _pick_later_if(better_or_equal: Callable[[Any, Any], Any]) -> Callable[..., list[Any]]:
    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        later = better_or_equal(b[0], a[0])
        return [ew.select_n(later, a[0], b[0]), ew.select_n(later, a[1], b[1])]

    return combine


# d cummax(x)_i = dx_j at j = the position of the running maximum (likewise cummin).
# NOTE: at ties the *latest* tied position gets the tangent (PyTorch's cummax index
# convention), unlike reduce_max, which averages ties.
ad.defjvp(cummax_p, _scan_jvp(_pick_later_if(ew.ge)))
ad.defjvp(cummin_p, _scan_jvp(_pick_later_if(ew.le)))

# ---------------------------------------------------------------------------
# cumlogsumexp
# ---------------------------------------------------------------------------

cumlogsumexp_p = _cumulative(
    "cumlogsumexp",
    lambda x, a: np.logaddexp.accumulate(x, axis=a, dtype=x.dtype),
    "f",
    "a floating-point",
)
cumlogsumexp = _cumulative_wrapper(cumlogsumexp_p)
cumlogsumexp.__doc__ = (
    "Inclusive cumulative ``log(sum(exp(x)))`` along ``axis`` (from the end if "
    "``reverse``), computed stably for large entries; ``-inf`` entries add nothing."
)


def _logaddexp_rule(a: list[Any], b: list[Any]) -> list[Any]:
    # (a, da) (+) (b, db) = (logaddexp(a, b), softmax-weighted da and db): associative,
    # every exponent is <= 0 (stable for large entries). Both -inf: the value is -inf
    # and the weights are equal (the limit along a == b), so no 0/0.
    dtype = core.get_aval(a[0]).dtype
    m = ew.max(a[0], b[0])
    empty = ew.eq(m, ew.full_like(m, np.array(-np.inf, dtype)[()]))
    zero = ew.zeros_like(m)
    shift = ew.select_n(empty, m, zero)
    ea = ew.exp(ew.sub(ew.select_n(empty, a[0], zero), shift))
    eb = ew.exp(ew.sub(ew.select_n(empty, b[0], zero), shift))
    total = ew.add(ea, eb)
    t = ew.div(ew.add(ew.mul(a[1], ea), ew.mul(b[1], eb)), total)
    return [ew.add(m, ew.log(total)), t]


def _cumlogsumexp_jvp(g: Any, x: Any, *, axis: int, reverse: bool) -> Any:
    # d out_i = sum_{j<=i} dx_j exp(x_j - out_i), as a scan of softmax-weighted pairs.
    # NOTE: where every entry so far is -inf the tangent is their average (JAX: NaN).
    return _scan_jvp(_logaddexp_rule)(g, x, axis=axis, reverse=reverse)


ad.defjvp(cumlogsumexp_p, _cumlogsumexp_jvp)

# ---------------------------------------------------------------------------
# reduce: the generic reduction, for the monoids it recognises
# ---------------------------------------------------------------------------


# The functions that are a monoid's computation by identity (others are recognised by
# what they stage to, ``_staged_monoid``)
_DIRECT_MONOIDS: tuple[tuple[tuple[Any, ...], str], ...] = (
    ((ew.add, operator.add), "add"),
    ((ew.mul, operator.mul), "mul"),
    ((ew.max,), "max"),
    ((ew.min,), "min"),
    ((ew.bitwise_and, operator.and_), "and"),
    ((ew.bitwise_or, operator.or_), "or"),
)


def _monoid(
    computation: Any, dtype: np.dtype
) -> tuple[str, Callable[..., Any], Callable[..., Any]] | None:
    """(name, reducer, binary op) for a recognised ``computation``, else None.

    A computation is recognised by what it stages to on two scalars of the operand's
    dtype: one add, mul, max, min, and or or of its two arguments (so ``lax.add``,
    ``functrace.numpy.add`` and ``operator.add`` are all the add monoid)."""
    name = _direct_monoid(computation)
    if name is None:
        name = _staged_monoid(computation, dtype)
    if name is None:
        return None
    reducer, op = {
        "add": (reduce_sum, ew.add),
        "mul": (reduce_prod, ew.mul),
        "max": (reduce_max, ew.max),
        "min": (reduce_min, ew.min),
        "and": (reduce_min, ew.bitwise_and),
        "or": (reduce_max, ew.bitwise_or),
    }[name]
    return name, reducer, op


def _direct_monoid(computation: Any) -> str | None:
    return next((n for fns, n in _DIRECT_MONOIDS if any(computation is f for f in fns)), None)


def _staged_monoid(computation: Any, dtype: np.dtype) -> str | None:
    """The monoid ``computation(a, b)`` stages to on scalars of ``dtype``, if it is one
    equation of a monoid's primitive on ``a`` and ``b``."""
    primitives = {
        ew.add_p: "add",
        ew.mul_p: "mul",
        ew.max_p: "max",
        ew.min_p: "min",
        ew.and_p: "and",
        ew.or_p: "or",
    }
    aval = ShapedArray((), dtype)
    try:
        closed, _ = trace_to_jaxpr(
            lambda a, b: [computation(a, b)], [aval, aval], origin="lax.reduce computation"
        )
    except ConcretizationError:
        return None  # Python control flow on the values: not one of the monoids
    jaxpr = closed.jaxpr
    if closed.consts or len(jaxpr.eqns) != 1:
        return None
    (eqn,) = jaxpr.eqns
    if (
        eqn.primitive not in primitives
        or tuple(jaxpr.outvars) != tuple(eqn.out_binders)
        or set(eqn.inputs) != set(jaxpr.invars)
        or len(eqn.inputs) != 2
    ):
        return None
    return primitives[eqn.primitive]


def reduce(operands: Any, init_values: Any, computation: Any, dimensions: Sequence[int]) -> Any:
    """Reduce ``operands`` over ``dimensions`` with the binary ``computation``, starting
    from ``init_values``: ``computation(init, reduction of the entries)``.

    ``operands`` is an array or a pytree of arrays of one shape (``init_values`` the
    same tree of scalars); ``computation(a, b)`` takes two such trees of scalars and
    returns one, as in JAX (several operands reduce together: a value and its index,
    say). A computation lax recognises on one array (add, mul, max, min and, on
    booleans, and/or: ``lax``, ``functrace.numpy`` or ``operator`` functions, or any
    computation that stages to one such primitive of its two arguments) runs as that
    reduction. Any other is applied pairwise, in a tree of ``log2(n)`` rounds over the
    ``n`` reduced entries, ``vmap``-ed over the pairs (so it is traced on scalars, as
    JAX's): it must be associative and commutative with ``init_values`` its identity,
    as XLA requires, and is differentiable, batched and compiled as the primitives it
    is made of.

    >>> import numpy as np
    >>> x = np.array([[3.0, 7.0, 5.0], [1.0, 0.0, 2.0]])
    >>> def larger(a, b):  # (value, index) of the larger value
    ...     pick = a[0] >= b[0]
    ...     return (ew.select_n(pick, b[0], a[0]), ew.select_n(pick, b[1], a[1]))
    >>> idx = np.broadcast_to(np.arange(3), x.shape)
    >>> v, i = reduce((x, idx), (-np.inf, 0), larger, (1,))
    >>> v.tolist(), i.tolist()
    ([7.0, 2.0], [1, 2])
    """
    flat, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(
            f"reduce: expected init_values of the operands' structure {tree}, got {init_tree}."
        )
    if not flat:
        raise ValueError("reduce: expected at least one operand, got none.")
    m = None
    if tree_structure(0) == tree:  # one array: a recognised monoid runs as its reduction
        m = _monoid(computation, core.get_aval(operands).dtype)
    elif len(flat) == 1 and _direct_monoid(computation) is not None:
        m = _monoid(computation, core.get_aval(flat[0]).dtype)
    if m is not None and m[0] in ("and", "or") and core.get_aval(flat[0]).dtype != np.bool_:
        m = None  # bitwise and/or of integers: the pairwise rounds below
    if m is not None:
        out = _monoid_reduce(m, flat[0], flat_init[0], dimensions)
        return tree_unflatten(tree, [out])
    outs = _tree_reduce(flat, flat_init, computation, tree, dimensions)
    return tree_unflatten(tree, outs)


def _reduce_axes(shape: tuple[int, ...], dimensions: Sequence[int]) -> tuple[int, ...]:
    axes = tuple(
        sorted(_canonical_axis("reduce", int(operator_index(d)), shape) for d in dimensions)
    )
    if len(set(axes)) != len(axes):
        raise ValueError(f"reduce: expected distinct dimensions, got {tuple(dimensions)}.")
    return axes


def _reduce_init(init: Any, dtype: np.dtype) -> Any:
    init_aval = core.get_aval(init)
    if init_aval.shape != ():
        raise ValueError(f"reduce: expected a scalar init_values, got shape {init_aval.shape}.")
    return ew.convert_element_type(init, dtype) if init_aval.dtype != dtype else init


def _monoid_reduce(m: Any, x: Any, init: Any, dimensions: Sequence[int]) -> Any:
    _, reducer, op = m
    aval = core.get_aval(x)
    red = reducer(x, _reduce_axes(aval.shape, dimensions))
    init = _reduce_init(init, aval.dtype)
    return op(broadcast_in_dim(init, core.get_aval(red).shape, ()), red)


def _tree_reduce(
    xs: list[Any], inits: list[Any], computation: Any, tree: Any, dimensions: Sequence[int]
) -> list[Any]:
    """``reduce`` of any computation: pairs combined in rounds (see ``reduce``)."""
    avals = [core.get_aval(x) for x in xs]
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise ValueError(f"reduce: expected operands of one shape, got {[a.shape for a in avals]}.")
    axes = _reduce_axes(shape, dimensions)
    keep = [d for d in range(len(shape)) if d not in axes]
    keep_shape = tuple(shape[d] for d in keep)
    rows, n = math.prod(keep_shape), math.prod(shape[d] for d in axes)
    inits = [_reduce_init(i, a.dtype) for i, a in zip(inits, avals)]
    # each operand as (rows, n): the kept axes flattened, then the reduced ones
    xs = [reshape(transpose(x, (*keep, *axes)), (rows, n)) for x in xs]

    def combine(left: list[Any], right: list[Any]) -> list[Any]:
        cols = core.get_aval(left[0]).shape[1]
        size = rows * cols
        k = len(left)

        def pair(*scalars: Any) -> list[Any]:
            a = tree_unflatten(tree, list(scalars[:k]))
            b = tree_unflatten(tree, list(scalars[k:]))
            out, out_tree = tree_flatten(computation(a, b))
            if out_tree != tree:
                raise TypeError(
                    f"reduce: expected the computation to return the operands' structure "
                    f"{tree}, got {out_tree}."
                )
            return out

        flat = [reshape(v, (size,)) for v in (*left, *right)]
        outs, dims = batching.vmap_flat(pair, size, flat, [0] * len(flat), origin="reduce")
        result = []
        for o, d, a in zip(outs, dims, avals):
            o = batching.bdim_at(o, d, size)
            if core.get_aval(o).dtype != a.dtype:
                raise TypeError(
                    f"reduce: expected the computation to keep the operands' dtypes, got "
                    f"{core.get_aval(o).dtype.name} for a {a.dtype.name} operand."
                )
            result.append(reshape(o, (rows, cols)))
        return result

    while n > 1:
        if n % 2:  # an odd entry pairs with the identity
            col = [broadcast_in_dim(i, (rows, 1), ()) for i in inits]
            xs = [concatenate([x, c], 1) for x, c in zip(xs, col)]
            n += 1
        half = n // 2
        xs = combine(
            [lax_slice(x, (0, 0), (rows, half)) for x in xs],
            [lax_slice(x, (0, half), (rows, n)) for x in xs],
        )
        n = half
    start = [broadcast_in_dim(i, (rows, 1), ()) for i in inits]
    xs = start if n == 0 else combine(start, xs)
    return [reshape(x, keep_shape) for x in xs]


__all__ = [
    "argmax",
    "argmax_p",
    "argmin",
    "argmin_p",
    "cummax",
    "cummax_p",
    "cummin",
    "cummin_p",
    "cumlogsumexp",
    "cumlogsumexp_p",
    "cumprod",
    "cumprod_p",
    "cumsum",
    "cumsum_p",
    "reduce",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
]
