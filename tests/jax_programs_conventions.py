"""JAX programs on the conventions of derivatives and transforms, run under JAX and under
functrace.

A fifth set next to ``tests/jax_programs.py``, with the same contract: each program is a
function of the library namespace (``jax`` itself, with ``jax_enable_x64``, when
``tests/fixtures/jax_programs_conventions.npz`` was recorded; ``functrace`` in
tests/test_jax_programs_conventions.py), returning a dict of NumPy arrays. The programs
take derivatives where the answer is a convention rather than calculus: at kinks (``abs``,
``relu``, ``clip`` at its bounds, ties in ``maximum``, reductions and sorts), at zero
(``sqrt``, powers, ``xlogy``, ``sinc``, ``arctan2``, ``hypot``, norms, products with
zeros, ``std`` of constants), with ``-inf`` entries (``logsumexp``, ``softmax``), at
singular matrices; with integer inputs (``float0`` tangents) and complex ones
(``holomorphic``, the conjugate convention); and the API details of the transforms
(``has_aux``, ``argnums``, ``linearize``/``linear_transpose``, pytree Jacobians,
``vmap`` axes, ``eval_shape``, custom rules with ``nondiff_argnums``, ``checkpoint``,
``closure_convert``, ``jit`` options, control flow). Most derivatives are evaluated
eagerly, under ``jit`` and under ``vmap``. Strings are returned only as the names of
error types or of dtypes and tree paths. Nothing here imports JAX.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from recorded import error_name


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _eager_jit(jax: Any, out: dict[str, np.ndarray], name: str, g: Any, *args: Any) -> None:
    """``g(*args)`` eagerly as ``name`` and under ``jit`` as ``name + '_jit'``."""
    out[name] = np.asarray(g(*args))
    out[name + "_jit"] = np.asarray(jax.jit(g)(*args))


def _leaves(jax: Any, tree: Any) -> dict[str, np.ndarray]:
    """A pytree's leaves keyed by their paths (``keystr``)."""
    flat = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {jax.tree_util.keystr(p): np.asarray(v) for p, v in flat}


def kinks_elementwise(jax: Any) -> dict[str, np.ndarray]:
    """Derivatives of sqrt, relu, relu6, leaky_relu, hard_tanh, sign, round, floor, ceil
    at and around 0 (first and second order), of the smooth activations (softplus,
    log_sigmoid, silu, gelu, elu, selu, mish...) to second order at 0 and far out, per
    element through vmap(grad), eagerly and under jit (abs at 0 is in
    documented_kinks)."""
    jnp = jax.numpy
    xs = jnp.array([-1.5, -0.0, 0.0, 0.5, 2.0])
    out: dict[str, np.ndarray] = {}
    fns = {
        "sqrt": jnp.sqrt,
        "relu": jax.nn.relu,
        "relu6": jax.nn.relu6,
        "sign": jnp.sign,
        "round": jnp.round,
        "floor": jnp.floor,
        "ceil": jnp.ceil,
        "leaky": lambda x: jax.nn.leaky_relu(x, 0.1),
        "hard_tanh": jax.nn.hard_tanh,
    }
    for name, f in fns.items():
        _eager_jit(jax, out, name, jax.vmap(jax.grad(f)), xs)
    _eager_jit(jax, out, "abs_2nd", jax.vmap(jax.grad(jax.grad(jnp.abs))), xs)
    _eager_jit(jax, out, "relu_2nd", jax.vmap(jax.grad(jax.grad(jax.nn.relu))), xs)
    smooth = jnp.array([-40.0, -1.0, -0.0, 0.0, 1.0, 6.0, 40.0])
    for name in (
        "softplus",
        "log_sigmoid",
        "sigmoid",
        "silu",
        "gelu",
        "elu",
        "celu",
        "selu",
        "mish",
    ):
        f = getattr(jax.nn, name)
        _eager_jit(jax, out, "nn_" + name, jax.vmap(jax.grad(f)), smooth)
        _eager_jit(jax, out, "nn_" + name + "_2nd", jax.vmap(jax.grad(jax.grad(f))), smooth)
    _eager_jit(
        jax, out, "relu6_bounds", jax.vmap(jax.grad(jax.nn.relu6)), jnp.array([6.0, 0.0, 7.0])
    )
    out["sqrt_zero_times_zero"] = np.asarray(jax.grad(lambda x: 0.0 * jnp.sqrt(x))(0.0))
    return out


def kinks_max_min_ties(jax: Any) -> dict[str, np.ndarray]:
    """Ties: maximum/minimum of equal arguments (gradient in both), jnp.max/min/amax
    reductions (whole, per axis, keepdims) with tied maxima, and the same under vmap."""
    jnp = jax.numpy
    a = jnp.array([1.0, 2.0, 3.0, -1.0])
    b = jnp.array([1.0, 0.5, 3.0, 0.0])
    m = jnp.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [-1.0, 0.0, -4.0]])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "maximum", jax.grad(lambda x, y: jnp.sum(jnp.maximum(x, y)), (0, 1)), a, b)
    _eager_jit(
        jax, out, "minimum", jax.grad(lambda x, y: jnp.sum(jnp.minimum(x, y) ** 2), (0, 1)), a, b
    )
    _eager_jit(jax, out, "max_all", jax.grad(lambda x: jnp.max(x)), m)
    _eager_jit(jax, out, "min_all", jax.grad(lambda x: jnp.min(x) * 3.0), m)
    _eager_jit(
        jax,
        out,
        "amax_axis1",
        jax.grad(lambda x: jnp.sum(jnp.amax(x, axis=1) * jnp.arange(3.0))),
        m,
    )
    _eager_jit(
        jax, out, "max_keep", jax.grad(lambda x: jnp.sum(jnp.max(x, axis=0, keepdims=True) ** 2)), m
    )
    _eager_jit(jax, out, "vmap_max", jax.vmap(jax.grad(jnp.max)), m)
    _eager_jit(jax, out, "jvp_max", lambda x: jax.jvp(jnp.max, (x,), (jnp.ones_like(x),))[1], m)
    _eager_jit(
        jax, out, "nanmax", jax.grad(lambda x: jnp.nanmax(x)), jnp.array([2.0, jnp.nan, 2.0, 1.0])
    )
    _eager_jit(jax, out, "max_scalar_tie", jax.grad(lambda x: jnp.maximum(x, 1.0)), 1.0)
    return out


def sort_ties(jax: Any) -> dict[str, np.ndarray]:
    """Gradients through sort, argsort-based gathers, median, quantile, top_k and
    lax.sort with ties, eagerly, under jit and under vmap."""
    jnp, lax = jax.numpy, jax.lax
    x = jnp.array([3.0, 1.0, 3.0, 2.0, 1.0, 3.0])
    w = jnp.arange(1.0, 7.0)
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "sort", jax.grad(lambda v: jnp.sum(jnp.sort(v) * w)), x)
    _eager_jit(
        jax, out, "sort_desc", jax.grad(lambda v: jnp.sum(jnp.sort(v, descending=True) * w)), x
    )
    _eager_jit(jax, out, "argsort_take", jax.grad(lambda v: jnp.sum(v[jnp.argsort(v)] * w)), x)
    _eager_jit(jax, out, "median", jax.grad(jnp.median), x)
    _eager_jit(jax, out, "quantile", jax.grad(lambda v: jnp.quantile(v, 0.4)), x)
    _eager_jit(jax, out, "top_k", jax.grad(lambda v: jnp.sum(lax.top_k(v, 3)[0] * w[:3])), x)
    _eager_jit(
        jax,
        out,
        "lax_sort_two",
        jax.grad(
            lambda v: jnp.sum(lax.sort((v, w), num_keys=1)[1] * lax.sort((v, w), num_keys=1)[0])
        ),
        x,
    )
    xs = jnp.stack([x, x[::-1], jnp.ones(6)])
    _eager_jit(jax, out, "vmap_sort", jax.vmap(jax.grad(lambda v: jnp.sum(jnp.sort(v) * w))), xs)
    return out


def clip_where_rounding(jax: Any) -> dict[str, np.ndarray]:
    """where with an untaken NaN-gradient branch and the double-where fix, clip inside
    and outside its bounds, and gradients of the rounding functions (clip at its bounds
    is in documented_kinks)."""
    jnp = jax.numpy
    x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "clip_x", jax.vmap(jax.grad(lambda v: jnp.clip(v, -0.7, 1.2))), x)
    _eager_jit(
        jax, out, "where_nan", jax.grad(lambda v: jnp.sum(jnp.where(v > 0, jnp.sqrt(v), 0.0))), x
    )
    _eager_jit(
        jax,
        out,
        "double_where",
        jax.grad(lambda v: jnp.sum(jnp.where(v > 0, jnp.sqrt(jnp.where(v > 0, v, 1.0)), 0.0))),
        x,
    )
    _eager_jit(
        jax,
        out,
        "where_both",
        jax.grad(lambda a, b: jnp.sum(jnp.where(x > 0, a * 2.0, b**2)), (0, 1)),
        x,
        x,
    )
    for name in ("round", "floor", "ceil", "trunc", "sign", "rint"):
        f = getattr(jnp, name)
        _eager_jit(jax, out, name, jax.grad(lambda v, f=f: jnp.sum(f(v) * v)), x * 1.5)
    return out


def norms(jax: Any) -> dict[str, np.ndarray]:
    """Gradients of jnp.linalg.norm at generic vectors and matrices for ord None, 1, 2,
    inf, -inf, 3 and the matrix norms fro, 1, inf, 2, nuc; the norm of a complex vector;
    vmap of a norm gradient over a batch (norms at zero are in documented_safe_sqrt)."""
    jnp = jax.numpy
    norm = jnp.linalg.norm
    v = jnp.array([3.0, -4.0, 0.5, 4.0])
    m = jnp.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    out: dict[str, np.ndarray] = {}
    for name, o in {"none": None, "1": 1, "2": 2, "inf": jnp.inf, "ninf": -jnp.inf, "3": 3}.items():
        _eager_jit(jax, out, f"vec_{name}", jax.grad(lambda a, o=o: norm(a, ord=o)), v)
    for name, o in {"fro": "fro", "1": 1, "inf": jnp.inf, "2": 2, "nuc": "nuc"}.items():
        _eager_jit(jax, out, f"mat_{name}", jax.grad(lambda a, o=o: norm(a, ord=o)), m)
    _eager_jit(
        jax,
        out,
        "axis_norm",
        jax.grad(lambda a: jnp.sum(norm(a, axis=1))),
        jnp.array([[1.0, -2.0], [3.0, 4.0]]),
    )
    c = jnp.array([1.0 + 2.0j, -0.5j, 3.0])
    _eager_jit(jax, out, "complex", jax.grad(lambda a: norm(a)), c)
    _eager_jit(jax, out, "complex_1", jax.grad(lambda a: norm(a, 1)), c)
    _eager_jit(
        jax,
        out,
        "vmap_rows",
        jax.vmap(jax.grad(lambda a: norm(a))),
        jnp.array([[1.0, 0.0], [3.0, 4.0]]),
    )
    return out


def powers_at_zero(jax: Any) -> dict[str, np.ndarray]:
    """x ** y at x = 0 for y = 1, 2, 0.5, 3 in both arguments (first derivatives; the
    second in y), at x = 2, and jnp.power with integer exponent arrays and scalars (y = 0
    at x = 0 and second derivatives in x there are in documented_kinks)."""
    jnp = jax.numpy
    out: dict[str, np.ndarray] = {}
    ys = jnp.array([1.0, 2.0, 0.5, 3.0])
    xs0 = jnp.zeros(4)
    g_both = jax.vmap(jax.grad(lambda x, y: x**y, (0, 1)))
    _eager_jit(jax, out, "at_zero", g_both, xs0, ys)
    _eager_jit(jax, out, "at_two", g_both, xs0 + 2.0, ys)
    _eager_jit(
        jax, out, "yy_at_zero", jax.vmap(jax.grad(jax.grad(lambda x, y: x**y, 1), 1)), xs0, ys
    )
    for p in (0, 1, 2, 3):
        _eager_jit(jax, out, f"int_pow_{p}", jax.grad(lambda x, p=p: x**p), 0.0)
    e = jnp.array([0, 1, 2, 3])
    _eager_jit(
        jax,
        out,
        "power_int_array",
        jax.grad(lambda x: jnp.sum(jnp.power(x, e))),
        jnp.array([0.0, 0.0, 0.0, 1.5]),
    )
    _eager_jit(
        jax,
        out,
        "power_int_array_2nd",
        jax.vmap(jax.grad(jax.grad(lambda x, k: jnp.power(x, k)))),
        jnp.array([0.5, 0.5, 0.0, 1.5]),
        e,
    )
    _eager_jit(jax, out, "lax_pow", jax.grad(lambda x, y: jax.lax.pow(x, y), (0, 1)), 0.0, 1.0)
    _eager_jit(jax, out, "lax_integer_pow", jax.grad(lambda x: jax.lax.integer_pow(x, 0)), 0.0)
    _eager_jit(jax, out, "neg_int_pow", jax.grad(lambda x: x**-2), 0.0)
    _eager_jit(jax, out, "neg_int_pow_value", lambda x: jax.lax.integer_pow(x, -3), 0.0)
    _eager_jit(jax, out, "float_power", jax.grad(lambda x: jnp.float_power(x, 2)), 0.0)
    return out


def logsumexp_with_inf(jax: Any) -> dict[str, np.ndarray]:
    """logsumexp, softmax and log_softmax with -inf entries (one, all in a row), with
    b weights and return_sign, gradients eagerly and under jit, and jnp.logaddexp at
    -inf."""
    jnp = jax.numpy
    lse = jax.scipy.special.logsumexp
    ninf = -jnp.inf
    x = jnp.array([[0.5, ninf, 1.0], [ninf, ninf, ninf], [2.0, 2.0, ninf]])
    w = jnp.array([1.0, 2.0, 3.0])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "lse_rows", lambda a: lse(a, axis=1), x)
    _eager_jit(jax, out, "lse_grad", jax.grad(lambda a: jnp.sum(lse(a[0::2], axis=1))), x)
    _eager_jit(jax, out, "lse_b", jax.grad(lambda a, b: lse(a, b=b), (0, 1)), x[0], w)
    _eager_jit(
        jax,
        out,
        "lse_sign",
        lambda a: jnp.stack(lse(a, b=jnp.array([1.0, 1.0, -1.0]), return_sign=True)),
        x[0],
    )
    _eager_jit(jax, out, "nn_lse", jax.grad(lambda a: jax.nn.logsumexp(a)), x[0])
    _eager_jit(jax, out, "softmax", jax.nn.softmax, x[0::2])
    _eager_jit(jax, out, "softmax_grad", jax.grad(lambda a: jnp.sum(jax.nn.softmax(a) * w)), x[0])
    _eager_jit(
        jax,
        out,
        "log_softmax_grad",
        jax.grad(lambda a: jnp.sum(jnp.where(jnp.isfinite(a), jax.nn.log_softmax(a), 0.0) * w)),
        x[0],
    )
    _eager_jit(
        jax,
        out,
        "softmax_where",
        lambda a: jax.nn.softmax(a, where=jnp.array([True, False, True])),
        x[2],
    )
    _eager_jit(jax, out, "logaddexp", jax.grad(lambda a, b: jnp.logaddexp(a, b), (0, 1)), ninf, 1.0)
    _eager_jit(
        jax,
        out,
        "logaddexp_both_inf",
        jax.grad(lambda a, b: jnp.logaddexp(a, b), (0, 1)),
        ninf,
        ninf,
    )
    return out


def special_points(jax: Any) -> dict[str, np.ndarray]:
    """xlogy and xlog1py at x = 0 with y in their domains (y at the edge of the domain is
    in documented_kinks), sinc at 0 (first and second derivative),
    arctan2 at (0, 0), hypot away from it, entr at 0, through vmap(grad) and hessian."""
    jnp = jax.numpy
    sp = jax.scipy.special
    out: dict[str, np.ndarray] = {}
    xs = jnp.array([0.0, 0.0, 1.0, 0.0, 2.0])
    ys = jnp.array([0.0, 1.0, 0.0, -1.0, 3.0])
    both = functools.partial(jax.grad, argnums=(0, 1))
    ok = jnp.array([0.0, 1.0, 2.0])
    _eager_jit(
        jax,
        out,
        "xlogy",
        jax.vmap(both(sp.xlogy)),
        jnp.array([0.0, 1.0, 2.0]),
        jnp.array([1.0, 0.0, 3.0]),
    )
    _eager_jit(jax, out, "xlog1py", jax.vmap(both(sp.xlog1py)), ok, jnp.array([0.0, -1.0, 3.0]))
    _eager_jit(jax, out, "arctan2", jax.vmap(both(jnp.arctan2)), xs, ys)
    _eager_jit(jax, out, "hypot", jax.vmap(both(jnp.hypot)), xs[1:], ys[1:])
    t = jnp.array([0.0, 0.5, 1.0])
    _eager_jit(jax, out, "sinc", jax.vmap(jax.grad(jnp.sinc)), t)
    _eager_jit(jax, out, "sinc_2nd", jax.vmap(jax.grad(jax.grad(jnp.sinc))), t)
    _eager_jit(jax, out, "entr", jax.vmap(jax.grad(sp.entr)), jnp.array([0.0, 0.5, 1.0]))
    _eager_jit(
        jax, out, "xlogy_hess", jax.hessian(lambda v: sp.xlogy(v[0], v[1])), jnp.array([0.0, 2.0])
    )
    return out


def cumulative_grads(jax: Any) -> dict[str, np.ndarray]:
    """Gradients of cumsum (and reversed), cumprod with no, one and two zeros, cummax
    without ties, cumlogsumexp with ties and their jacrev, eagerly, under jit and vmap
    (cummax with ties is in documented_kinks)."""
    jnp, lax = jax.numpy, jax.lax
    w = jnp.array([1.0, -2.0, 0.5, 3.0, 1.5])
    xs = {
        "nozero": jnp.array([1.5, -2.0, 0.5, 3.0, 1.2]),
        "onezero": jnp.array([1.5, 0.0, 0.5, 3.0, 1.2]),
        "twozero": jnp.array([1.5, 0.0, 0.5, 0.0, 1.2]),
    }
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "cumsum", jax.grad(lambda v: jnp.sum(jnp.cumsum(v) * w)), xs["nozero"])
    _eager_jit(
        jax,
        out,
        "cumsum_rev",
        jax.grad(lambda v: jnp.sum(lax.cumsum(v, reverse=True) * w)),
        xs["nozero"],
    )
    for k, x in xs.items():
        _eager_jit(jax, out, f"cumprod_{k}", jax.grad(lambda v: jnp.sum(jnp.cumprod(v) * w)), x)
        _eager_jit(jax, out, f"jac_cumprod_{k}", jax.jacrev(jnp.cumprod), x)
    ties = jnp.array([1.0, 3.0, 3.0, 2.0, 3.0])
    distinct = jnp.array([1.0, 3.0, 2.0, 4.0, 0.5])
    _eager_jit(jax, out, "cummax", jax.grad(lambda v: jnp.sum(lax.cummax(v) * w)), distinct)
    _eager_jit(jax, out, "cummin", jax.grad(lambda v: jnp.sum(lax.cummin(-v) * w)), distinct)
    _eager_jit(jax, out, "jnp_cummax", jax.jacrev(lambda v: jnp.maximum.accumulate(v)), distinct)
    _eager_jit(jax, out, "cumlogsumexp", jax.grad(lambda v: jnp.sum(lax.cumlogsumexp(v) * w)), ties)
    _eager_jit(
        jax,
        out,
        "vmap_cumprod",
        jax.vmap(jax.grad(lambda v: jnp.sum(jnp.cumprod(v) * w))),
        jnp.stack(list(xs.values())),
    )
    return out


def prod_with_zeros(jax: Any) -> dict[str, np.ndarray]:
    """Gradients and Hessians of jnp.prod with no, one and two zeros (whole and per
    axis), and vmap of the gradient over rows with different zero counts."""
    jnp = jax.numpy
    rows = jnp.array([[2.0, -1.5, 0.5, 3.0], [2.0, 0.0, 0.5, 3.0], [0.0, -1.5, 0.5, 0.0]])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "vmap_grad", jax.vmap(jax.grad(jnp.prod)), rows)
    _eager_jit(jax, out, "vmap_hess", jax.vmap(jax.hessian(jnp.prod)), rows)
    _eager_jit(
        jax,
        out,
        "axis1",
        jax.grad(lambda a: jnp.sum(jnp.prod(a, axis=1) * jnp.arange(1.0, 4.0))),
        rows,
    )
    _eager_jit(jax, out, "axis0", jax.grad(lambda a: jnp.sum(jnp.prod(a, axis=0))), rows)
    _eager_jit(jax, out, "whole", jax.grad(jnp.prod), rows)
    _eager_jit(jax, out, "jvp", lambda a: jax.jvp(jnp.prod, (a,), (jnp.ones_like(a),))[1], rows[2])
    return out


def std_var_constant(jax: Any) -> dict[str, np.ndarray]:
    """Gradients of var (ddof 0 and 1) at constant and at varying inputs, of std at
    varying ones, per axis, nanvar with a NaN, eagerly, under jit and vmap (std at
    constant inputs is in documented_safe_sqrt)."""
    jnp = jax.numpy
    c = jnp.full(4, 2.5)
    v = jnp.array([1.0, 2.0, 4.0, -1.0])
    out: dict[str, np.ndarray] = {}
    for name, x in {"const": c, "vary": v}.items():
        _eager_jit(jax, out, f"var_{name}", jax.grad(jnp.var), x)
        _eager_jit(jax, out, f"var1_{name}", jax.grad(lambda a: jnp.var(a, ddof=1)), x)
    _eager_jit(jax, out, "std_vary", jax.grad(jnp.std), v)
    _eager_jit(jax, out, "std1_vary", jax.grad(lambda a: jnp.std(a, ddof=1)), v)
    m = jnp.stack([v[::-1], v])
    _eager_jit(jax, out, "vmap_std", jax.vmap(jax.grad(jnp.std)), m)
    _eager_jit(
        jax, out, "var_axis", jax.grad(lambda a: jnp.sum(jnp.var(a, axis=1))), jnp.stack([c, v])
    )
    _eager_jit(jax, out, "nanstd", jax.grad(jnp.nanstd), jnp.array([1.0, jnp.nan, 2.0]))
    _eager_jit(jax, out, "nanvar", jax.grad(jnp.nanvar), jnp.array([1.0, jnp.nan, 3.0]))
    return out


def linalg_special_grads(jax: Any) -> dict[str, np.ndarray]:
    """det/slogdet/inv gradients at singular and nearly singular matrices, eigh
    gradients with distinct eigenvalues for symmetric tangents (eigvalsh's JVP and
    eigh's gradients made symmetric), and under vmap over a batch of matrices (eigh's
    own gradients are in eigh_gradient_symmetry)."""
    jnp = jax.numpy
    la = jnp.linalg
    sing1 = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    sing2 = jnp.outer(jnp.array([1.0, -1.0, 2.0]), jnp.array([0.5, 1.0, 3.0]))
    near = jnp.array([[1.0, 2.0], [1.0, 2.0 + 1e-6]])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "det_rank2", jax.grad(la.det), sing1)
    _eager_jit(jax, out, "det_rank1", jax.grad(la.det), sing2)
    _eager_jit(jax, out, "slogdet_rank2", lambda a: jnp.stack(la.slogdet(a)), sing1)
    _eager_jit(jax, out, "slogdet_near_grad", jax.grad(lambda a: la.slogdet(a)[1]), near)
    _eager_jit(
        jax,
        out,
        "inv_near_grad",
        jax.grad(lambda a: jnp.sum(la.inv(a) * jnp.array([[1.0, 0.0], [0.0, 1e-6]]))),
        near,
    )
    s = jnp.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, -1.0]])
    sym = lambda g: g + g.T  # noqa: E731  (the derivative along symmetric directions)
    _eager_jit(
        jax,
        out,
        "eigh_vals",
        lambda a: sym(jax.grad(lambda b: jnp.sum(la.eigh(b)[0] * jnp.arange(1.0, 4.0)))(a)),
        s,
    )
    _eager_jit(
        jax,
        out,
        "eigh_vecs",
        lambda a: sym(
            jax.grad(lambda b: jnp.sum(jnp.abs(la.eigh(b)[1][:, 0]) * jnp.arange(1.0, 4.0)))(a)
        ),
        s,
    )
    _eager_jit(jax, out, "eigvalsh_jvp", lambda a: jax.jvp(la.eigvalsh, (a,), (jnp.eye(3),))[1], s)
    batch = jnp.stack([sing1, jnp.eye(3) * 2.0, s])
    _eager_jit(jax, out, "vmap_det", jax.vmap(jax.grad(la.det)), batch)
    return out


def integer_inputs_float0(jax: Any) -> dict[str, np.ndarray]:
    """grad with allow_int (float0 results: dtype name and shape), jvp with integer
    primals and float0 tangents, jacfwd/jacrev over a pytree holding ints, stop_gradient
    on ints, and the errors for ints without allow_int and for integer outputs."""
    jnp = jax.numpy
    float0 = jax.dtypes.float0
    out: dict[str, np.ndarray] = {}

    def f(x, n):
        return jnp.sum(x * n) ** 2

    x, n = jnp.array([1.0, 2.0]), jnp.array([3, 4])
    gx, gn = jax.grad(f, argnums=(0, 1), allow_int=True)(x, n)
    out["allow_int_x"] = np.asarray(gx)
    out["allow_int_n_dtype"] = np.array(str(gn.dtype))
    out["allow_int_n_shape"] = np.array(gn.shape)
    gj = jax.jit(jax.grad(f, argnums=(0, 1), allow_int=True))(x, n)
    out["allow_int_jit_dtype"] = np.array(str(gj[1].dtype))
    out["no_allow_int"] = error_name(lambda: jax.grad(f, argnums=1)(x, n))
    out["int_output"] = error_name(lambda: jax.grad(lambda a: jnp.sum(a).astype(jnp.int32))(x))
    out["int_input_scalar"] = error_name(lambda: jax.grad(lambda k: k * 2.0)(3))
    p, t = jax.jvp(f, (x, n), (jnp.ones(2), np.zeros(2, float0)))
    out["jvp_float0"] = np.stack([np.asarray(p), np.asarray(t)])
    out["jvp_int_tangent_error"] = error_name(
        lambda: jax.jvp(f, (x, n), (jnp.ones(2), jnp.zeros(2, jnp.int64)))
    )
    _, tn = jax.jvp(lambda k: k * 2, (n,), (np.zeros(2, float0),))
    out["jvp_int_out_dtype"] = np.array(str(tn.dtype))
    tree = {"w": jnp.array([0.5, -1.0]), "count": jnp.array(3)}

    def g(t):
        return t["w"] * t["count"]

    out["jacfwd_tree"] = error_name(lambda: jax.jacfwd(g)(tree))
    out["jacrev_tree"] = error_name(lambda: jax.jacrev(g)(tree))
    jr = jax.jacrev(g, allow_int=True)(tree)
    out["jacrev_allow_w"] = np.asarray(jr["w"])
    out["jacrev_allow_count_shape"] = np.array(jr["count"].shape)
    out["stop_gradient_int"] = np.asarray(jax.lax.stop_gradient(n))
    out["stop_gradient_int_dtype"] = np.array(str(jax.lax.stop_gradient(n).dtype))
    out["grad_through_int_cast"] = np.asarray(
        jax.grad(lambda a: jnp.sum(a.astype(jnp.int32) * a))(x * 1.5)
    )
    vg = jax.value_and_grad(f, argnums=1, allow_int=True)(x, n)
    out["value_and_grad_int"] = np.asarray(vg[0])
    out["value_and_grad_int_dtype"] = np.array(str(vg[1].dtype))
    return out


def holomorphic_and_complex(jax: Any) -> dict[str, np.ndarray]:
    """grad/jacfwd/jacrev with holomorphic=True, the conjugate convention for real
    functions of complex inputs, vjp of complex functions with complex cotangents, and
    the errors for complex outputs without holomorphic and real inputs with it."""
    jnp = jax.numpy
    z = jnp.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    out: dict[str, np.ndarray] = {}
    _eager_jit(
        jax, out, "grad_holo", jax.grad(lambda a: jnp.sum(a**3 + jnp.sin(a)), holomorphic=True), z
    )
    _eager_jit(
        jax, out, "jacfwd_holo", jax.jacfwd(lambda a: jnp.exp(a) * a[::-1], holomorphic=True), z
    )
    _eager_jit(
        jax, out, "jacrev_holo", jax.jacrev(lambda a: jnp.exp(a) * a[::-1], holomorphic=True), z
    )
    _eager_jit(jax, out, "real_abs2", jax.grad(lambda a: jnp.sum(jnp.abs(a) ** 2)), z)
    _eager_jit(jax, out, "real_re", jax.grad(lambda a: jnp.sum(jnp.real(a * (1.0 + 1.0j)))), z)
    _eager_jit(jax, out, "real_abs", jax.grad(lambda a: jnp.sum(jnp.abs(a))), z)
    _eager_jit(jax, out, "real_angle", jax.grad(lambda a: jnp.sum(jnp.angle(a))), z)
    _eager_jit(jax, out, "vmap_real", jax.vmap(jax.grad(lambda a: jnp.abs(a * a))), z)

    def vjp_of(a, ct):
        y, pull = jax.vjp(lambda b: b**2 * jnp.conj(b), a)
        return y, pull(ct)[0]

    ct = jnp.array([1.0 - 1.0j, 0.5j, 2.0])
    _eager_jit(jax, out, "vjp_y", lambda a, c: vjp_of(a, c)[0], z, ct)
    _eager_jit(jax, out, "vjp_ct", lambda a, c: vjp_of(a, c)[1], z, ct)
    _eager_jit(
        jax, out, "jvp_conj", lambda a: jax.jvp(lambda b: b * jnp.conj(b), (a,), (ct,))[1], z
    )
    out["complex_out_error"] = error_name(lambda: jax.grad(lambda a: a**2)(z[0]))
    out["holo_real_in_error"] = error_name(lambda: jax.grad(lambda a: a**2, holomorphic=True)(1.5))
    out["jacfwd_complex_in_error"] = error_name(lambda: jax.jacfwd(lambda a: jnp.abs(a))(z))
    _eager_jit(jax, out, "jacrev_real_of_complex", jax.jacrev(lambda a: jnp.abs(a) ** 2), z)
    _eager_jit(jax, out, "hessian_holo", jax.hessian(lambda a: jnp.sum(a**3), holomorphic=True), z)
    return out


def has_aux_everywhere(jax: Any) -> dict[str, np.ndarray]:
    """has_aux in grad, value_and_grad, jacfwd, jacrev, vjp and linearize, with pytree
    auxiliary outputs, eagerly and under jit."""
    jnp = jax.numpy
    x = jnp.array([0.5, -1.0, 2.0])

    def f(a):
        y = jnp.sin(a) * a
        return jnp.sum(y), {"mean": jnp.mean(y), "n": jnp.int32(a.size)}

    def fv(a):
        y = jnp.sin(a) * a
        return y, (jnp.max(y), jnp.argmax(y))

    out: dict[str, np.ndarray] = {}
    for tag, run in {"": lambda h: h(), "_jit": lambda h: jax.jit(h)()}.items():
        g, aux = run(lambda: jax.grad(f, has_aux=True)(x))
        out["grad" + tag], out["grad_aux_mean" + tag], out["grad_aux_n" + tag] = (
            np.asarray(g),
            np.asarray(aux["mean"]),
            np.asarray(aux["n"]),
        )
        (v, aux2), g2 = run(lambda: jax.value_and_grad(f, has_aux=True)(x))
        out["vg_value" + tag], out["vg_grad" + tag], out["vg_aux" + tag] = (
            np.asarray(v),
            np.asarray(g2),
            np.asarray(aux2["mean"]),
        )
        jf, auxf = run(lambda: jax.jacfwd(fv, has_aux=True)(x))
        jr, auxr = run(lambda: jax.jacrev(fv, has_aux=True)(x))
        out["jacfwd" + tag], out["jacrev" + tag] = np.asarray(jf), np.asarray(jr)
        out["jac_aux" + tag] = np.asarray(auxf[0] + auxr[0])
        out["jac_aux_arg" + tag] = np.asarray(auxr[1])

    y, pull, aux = jax.vjp(fv, x, has_aux=True)
    out["vjp"] = np.asarray(pull(jnp.array([1.0, 2.0, 3.0]))[0])
    out["vjp_aux"] = np.asarray(aux[1])
    y2, lin, aux3 = jax.linearize(fv, x, has_aux=True)
    out["linearize"] = np.asarray(lin(jnp.array([1.0, 0.0, -1.0])))
    out["linearize_aux"] = np.asarray(aux3[0])
    out["bad_aux"] = error_name(lambda: jax.grad(lambda a: jnp.sum(a), has_aux=True)(x))
    return out


def argnums_variants(jax: Any) -> dict[str, np.ndarray]:
    """argnums as int, tuple, negative and repeated-order tuples in grad, value_and_grad,
    jacfwd, jacrev and hessian; the errors for an out-of-range argnums and an empty
    tuple."""
    jnp = jax.numpy

    def f(a, b, c):
        return jnp.sum(a * jnp.sin(b) + c**2 * a)

    a, b, c = jnp.array([1.0, 2.0]), jnp.array([0.5, -0.5]), jnp.array([3.0, 1.0])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "neg1", jax.grad(f, argnums=-1), a, b, c)
    _eager_jit(
        jax, out, "tuple_neg", lambda *s: jnp.stack(jax.grad(f, argnums=(-3, 1))(*s)), a, b, c
    )
    _eager_jit(
        jax, out, "tuple_order", lambda *s: jnp.stack(jax.grad(f, argnums=(2, 0))(*s)), a, b, c
    )
    _eager_jit(jax, out, "vg", lambda *s: jax.value_and_grad(f, argnums=(1,))(*s)[1][0], a, b, c)
    _eager_jit(
        jax,
        out,
        "jacfwd",
        lambda *s: jnp.stack(jax.jacfwd(lambda *t: f(*t) * t[0], argnums=(0, -1))(*s)),
        a,
        b,
        c,
    )
    _eager_jit(
        jax,
        out,
        "jacrev",
        lambda *s: jnp.stack(jax.jacrev(lambda *t: f(*t) * t[0], argnums=(0, -1))(*s)),
        a,
        b,
        c,
    )
    h = jax.hessian(f, argnums=(0, 2))(a, b, c)
    out["hessian"] = np.asarray(jnp.stack([jnp.stack(row) for row in h]))
    out["out_of_range"] = error_name(lambda: jax.grad(f, argnums=3)(a, b, c))
    out["neg_out_of_range"] = error_name(lambda: jax.grad(f, argnums=-4)(a, b, c))
    out["empty_tuple"] = error_name(lambda: jax.grad(f, argnums=())(a, b, c))
    out["float_argnums"] = error_name(lambda: jax.grad(f, argnums=1.0)(a, b, c))
    return out


def linearize_and_transpose(jax: Any) -> dict[str, np.ndarray]:
    """jax.linearize of a nonlinear function over a pytree (the linear map called twice,
    under jit and vmap), jax.linear_transpose of linear functions (pytrees, a dtype
    mismatch), and the error for a nonlinear function."""
    jnp = jax.numpy

    def f(p):
        return {"y": jnp.tanh(p["a"]) * p["b"], "s": jnp.sum(p["a"] ** 2)}

    p = {"a": jnp.array([0.5, -1.0, 2.0]), "b": jnp.array(1.5)}
    y, lin = jax.linearize(f, p)
    t1 = lin({"a": jnp.ones(3), "b": jnp.array(0.0)})
    t2 = jax.jit(lin)({"a": jnp.zeros(3), "b": jnp.array(1.0)})
    tv = jax.vmap(lin)({"a": jnp.eye(3), "b": jnp.zeros(3)})
    out: dict[str, np.ndarray] = {}
    out.update({"y" + k: v for k, v in _leaves(jax, y).items()})
    out.update({"t1" + k: v for k, v in _leaves(jax, t1).items()})
    out.update({"t2" + k: v for k, v in _leaves(jax, t2).items()})
    out.update({"tv" + k: v for k, v in _leaves(jax, tv).items()})

    def lin_fn(d):
        return jnp.cumsum(d["u"]) * 2.0 + d["v"][::-1]

    prim = {"u": jnp.zeros(3), "v": jnp.zeros(3)}
    tr = jax.linear_transpose(lin_fn, prim)
    (ct,) = tr(jnp.array([1.0, 2.0, 3.0]))
    out.update({"transpose" + k: v for k, v in _leaves(jax, ct).items()})
    (ctj,) = jax.jit(tr)(jnp.array([1.0, 0.0, 0.0]))
    out.update({"transpose_jit" + k: v for k, v in _leaves(jax, ctj).items()})
    tr2 = jax.linear_transpose(lambda a, b: a * 3.0 - b, 1.0, 2.0)
    out["transpose_two_args"] = np.asarray(jnp.stack(tr2(1.0)))
    return out


def pytree_jacobians(jax: Any) -> dict[str, np.ndarray]:
    """jax.hessian and jax.jacrev/jacfwd with pytree inputs and outputs: every leaf of
    the nested result keyed by its path (the output structure outside, the input's
    inside), and the path strings."""
    jnp = jax.numpy

    def loss(p):
        return jnp.sum(p["w"] ** 2 * p["b"][0]) + jnp.sin(p["b"][1]) * p["w"][0]

    p = {"w": jnp.array([1.0, -2.0]), "b": (jnp.array(0.5), jnp.array(1.5))}

    def f(p):
        return {"out": p["w"] * p["b"][0], "pair": (jnp.sum(p["w"]), p["b"][1] ** 2)}

    out: dict[str, np.ndarray] = {}
    for name, val in {
        "hess": jax.hessian(loss)(p),
        "hess_jit": jax.jit(jax.hessian(loss))(p),
        "jacrev": jax.jacrev(f)(p),
        "jacfwd": jax.jacfwd(f)(p),
        "jacrev_jit": jax.jit(jax.jacrev(f))(p),
    }.items():
        leaves = _leaves(jax, val)
        out[name + "_paths"] = np.array(sorted(leaves))
        out.update({name + k: v for k, v in leaves.items()})
    return out


def vmap_axes(jax: Any) -> dict[str, np.ndarray]:
    """vmap with in_axes given as a dict, None and negative axes, out_axes=None for an
    unbatched output (and the error when it is batched), out_axes negative and as a
    pytree, axis_size without batched inputs, zero-size batches and functions returning
    Python scalars; each mapped function also under jit and with a grad inside."""
    jnp = jax.numpy
    rng = _rng(3)
    d = {"x": jnp.asarray(rng.standard_normal((3, 4))), "s": jnp.array(2.0)}

    def f(p, w):
        return jnp.sum(p["x"] * w) * p["s"]

    w = jnp.asarray(rng.standard_normal((4, 3)))
    out: dict[str, np.ndarray] = {}
    vf = jax.vmap(f, in_axes=({"x": 0, "s": None}, -1))
    _eager_jit(jax, out, "dict_axes", vf, d, w)
    gd = jax.grad(lambda p, w: jnp.sum(vf(p, w)), (0, 1))
    _eager_jit(jax, out, "dict_axes_grad_x", lambda p, w: gd(p, w)[0]["x"], d, w)
    _eager_jit(jax, out, "dict_axes_grad_s", lambda p, w: gd(p, w)[0]["s"], d, w)
    _eager_jit(jax, out, "dict_axes_grad_w", lambda p, w: gd(p, w)[1], d, w)
    g = jax.vmap(jax.grad(f), in_axes=({"x": 1, "s": None}, 1), out_axes={"x": -1, "s": 0})
    res = g(d, w.T)
    out["grad_out_axes_x"], out["grad_out_axes_s"] = np.asarray(res["x"]), np.asarray(res["s"])
    un = jax.vmap(lambda a, b: (a * 2.0, b + 1.0), in_axes=(0, None), out_axes=(1, None))
    r1, r2 = un(w, jnp.arange(3.0))
    out["out_none_batched"], out["out_none"] = np.asarray(r1), np.asarray(r2)
    out["out_none_error"] = error_name(lambda: jax.vmap(lambda a: a * 2.0, out_axes=None)(w))
    out["axis_size"] = np.asarray(jax.vmap(lambda: jnp.ones(2), axis_size=3)())
    out["axis_size_mixed"] = np.asarray(
        jax.vmap(lambda a, b: a + b, in_axes=(None, 0), axis_size=4)(1.0, jnp.arange(4.0))
    )
    out["axis_size_mismatch"] = error_name(
        lambda: jax.vmap(lambda a: a, axis_size=5)(jnp.arange(4.0))
    )
    out["size_mismatch"] = error_name(
        lambda: jax.vmap(lambda a, b: a + b)(jnp.arange(4.0), jnp.arange(3.0))
    )
    e = jax.vmap(lambda a: jnp.sum(a**2))(jnp.zeros((0, 3)))
    out["zero_size"] = np.asarray(e)
    out["zero_size_grad"] = np.asarray(
        jax.vmap(jax.grad(lambda a: jnp.sum(a**2)))(jnp.zeros((0, 3)))
    )
    out["zero_size_jit"] = np.asarray(jax.jit(jax.vmap(lambda a: a @ a))(jnp.zeros((0, 2))))
    out["python_scalar"] = np.asarray(jax.vmap(lambda a: 1.5)(jnp.arange(3.0)))
    out["python_scalar_tuple"] = np.asarray(jax.vmap(lambda a: (a, 2))(jnp.arange(3.0))[1])
    out["neg_in_axis"] = np.asarray(jax.vmap(jnp.sum, in_axes=-2)(w))
    out["none_all_error"] = error_name(lambda: jax.vmap(lambda a: a, in_axes=None)(w))
    out["bad_axis_error"] = error_name(lambda: jax.vmap(lambda a: a, in_axes=2)(w))
    return out


def eval_shape_pytrees(jax: Any) -> dict[str, np.ndarray]:
    """jax.eval_shape on pytrees of arrays and ShapeDtypeStructs (shapes and dtype
    names by path), of a grad, a vmap and a function with static-like Python inputs."""
    jnp = jax.numpy

    def f(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"h": h, "n": jnp.argmax(h, axis=-1), "loss": jnp.mean(h**2)}

    p = {"w": jax.ShapeDtypeStruct((4, 3), jnp.float32), "b": jnp.zeros(3)}
    x = jax.ShapeDtypeStruct((5, 4), jnp.float32)
    out: dict[str, np.ndarray] = {}
    for name, s in {
        "f": jax.eval_shape(f, p, x),
        "grad": jax.eval_shape(jax.grad(lambda p, x: f(p, x)["loss"]), p, x),
        "vmap": jax.eval_shape(
            jax.vmap(f, in_axes=(None, 0)), p, jax.ShapeDtypeStruct((2, 5, 4), jnp.float64)
        ),
        "scalar": jax.eval_shape(lambda a, k: a * k, 1.0, 3),
    }.items():
        for k, v in _leaves(jax, s).items():
            out[name + k + "_shape"] = np.array([int(d) for d in v.shape], dtype=np.int64)
            out[name + k + "_dtype"] = np.array(str(v.dtype))
    return out


def custom_jvp_details(jax: Any) -> dict[str, np.ndarray]:
    """custom_jvp with nondiff_argnums (a Python callable and an int), defjvps with one
    rule None, stop_gradient inside the rule, under grad, jit, vmap and jvp."""
    jnp = jax.numpy

    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _apply_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return fn(x), 10.0 * t

    @jax.custom_jvp
    def f2(x, y):
        return x * jnp.sin(y)

    f2.defjvps(lambda t, ans, x, y: t * 2.0, None)

    @jax.custom_jvp
    def clipped(x):
        return jnp.clip(x, -1.0, 1.0)

    @clipped.defjvp
    def _clipped_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return clipped(x), t * jax.lax.stop_gradient(jnp.cos(x))

    @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
    def scaled(x, k):
        return x * k

    @scaled.defjvp
    def _scaled_jvp(k, primals, tangents):
        return scaled(primals[0], k), tangents[0] * (k + 1)

    x = jnp.array([0.3, -2.0, 1.5])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "apply", jax.grad(lambda a: jnp.sum(apply(jnp.sin, a))), x)
    _eager_jit(jax, out, "apply_vmap", jax.vmap(jax.grad(lambda a: apply(jnp.cos, a))), x)
    _eager_jit(
        jax,
        out,
        "defjvps",
        lambda a, b: jnp.stack(jax.grad(lambda u, v: jnp.sum(f2(u, v)), (0, 1))(a, b)),
        x,
        x * 2,
    )
    _eager_jit(
        jax,
        out,
        "defjvps_jvp",
        lambda a, b: jax.jvp(f2, (a, b), (jnp.ones(3), jnp.ones(3)))[1],
        x,
        x,
    )
    _eager_jit(jax, out, "clipped", jax.vmap(jax.grad(clipped)), x)
    _eager_jit(jax, out, "clipped_2nd", jax.vmap(jax.grad(jax.grad(clipped))), x)
    _eager_jit(jax, out, "scaled", jax.grad(lambda a: jnp.sum(scaled(a, 3))), x)
    _eager_jit(jax, out, "scaled_vmap", jax.vmap(jax.grad(scaled), in_axes=(0, None)), x, 2)
    return out


def custom_vjp_details(jax: Any) -> dict[str, np.ndarray]:
    """custom_vjp with nondiff_argnums and pytree residuals (dicts and tuples with
    integer leaves), a bwd returning None for an argument, under grad, jit and vmap."""
    jnp = jax.numpy

    @functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
    def f(x, p, mode):
        return jnp.sum(p["w"] * x) if mode == "sum" else jnp.max(p["w"] * x)

    def f_fwd(x, p, mode):
        y = f(x, p, mode)
        return y, {"x": x, "w": p["w"], "meta": (jnp.argmax(p["w"] * x), jnp.int32(x.shape[0]))}

    def f_bwd(mode, res, g):
        scale = 1.0 if mode == "sum" else 2.0
        gx = g * res["w"] * scale + res["meta"][0].astype(res["x"].dtype)
        return gx, {"w": g * res["x"] * res["meta"][1]}

    f.defvjp(f_fwd, f_bwd)

    @jax.custom_vjp
    def g(x, y):
        return x * y

    g.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * res[1] * 3.0, None))

    x = jnp.array([1.0, -0.5, 2.0])
    p = {"w": jnp.array([0.5, 1.0, -1.0])}
    out: dict[str, np.ndarray] = {}
    for mode in ("sum", "max"):
        gx, gp = jax.grad(f, (0, 1))(x, p, mode)
        out[f"{mode}_x"], out[f"{mode}_w"] = np.asarray(gx), np.asarray(gp["w"])
        gxj, gpj = jax.jit(jax.grad(f, (0, 1)), static_argnums=2)(x, p, mode)
        out[f"{mode}_x_jit"], out[f"{mode}_w_jit"] = np.asarray(gxj), np.asarray(gpj["w"])
    xs = jnp.stack([x, -x])
    out["vmap"] = np.asarray(jax.vmap(jax.grad(f), in_axes=(0, None, None))(xs, p, "sum"))
    _eager_jit(
        jax,
        out,
        "none_ct",
        lambda a, b: jnp.stack(jax.grad(lambda u, v: jnp.sum(g(u, v)), (0, 1))(a, b)),
        x,
        x,
    )
    _eager_jit(jax, out, "none_ct_vmap", jax.vmap(jax.grad(g, (0, 1))), x, x)
    return out


def checkpoint_and_closure_convert(jax: Any) -> dict[str, np.ndarray]:
    """jax.checkpoint with static_argnums and policies (gradients equal to the plain
    ones), jax.closure_convert of a closure over a traced value used in a custom_vjp,
    eagerly and under jit."""
    jnp = jax.numpy
    cp = jax.checkpoint_policies

    def layer(x, n):
        for _ in range(n):
            x = jnp.sin(x @ jnp.eye(3)) * 1.1
        return x

    x = jnp.array([0.5, -1.0, 2.0])
    out: dict[str, np.ndarray] = {}
    plain = jax.grad(lambda a: jnp.sum(layer(a, 3)))
    out["plain"] = np.asarray(plain(x))
    for name, pol in {
        "none": None,
        "dots": cp.dots_saveable,
        "nothing": cp.nothing_saveable,
        "everything": cp.everything_saveable,
    }.items():
        ck = jax.checkpoint(layer, static_argnums=(1,), policy=pol)
        _eager_jit(jax, out, "ckpt_" + name, jax.grad(lambda a, ck=ck: jnp.sum(ck(a, 3))), x)
    _eager_jit(
        jax,
        out,
        "ckpt_vmap",
        jax.vmap(jax.grad(lambda a: jnp.sum(jax.checkpoint(layer, static_argnums=(1,))(a, 2)))),
        jnp.stack([x, x * 0.5]),
    )

    def solve_with(fn, y0):
        converted, consts = jax.closure_convert(fn, y0)

        @jax.custom_vjp
        def run(y, *cs):
            return converted(y, *cs)

        def fwd(y, *cs):
            return converted(y, *cs), (y, cs)

        def bwd(res, ct):
            y, cs = res
            return jax.vjp(converted, y, *cs)[1](ct)

        run.defvjp(fwd, bwd)
        return run(y0, *consts)

    def loss(a, y):
        return jnp.sum(solve_with(lambda v: jnp.tanh(v * a), y))

    _eager_jit(
        jax, out, "closure_convert", lambda a, y: jnp.append(*jax.grad(loss, (0, 1))(a, y)), 0.7, x
    )
    converted, consts = jax.closure_convert(lambda v: v * x, x)
    out["closure_n_consts"] = np.array(len(consts))
    out["closure_value"] = np.asarray(converted(x, *consts))
    return out


def jit_options_and_closures(jax: Any) -> dict[str, np.ndarray]:
    """jit with static_argnames and donate_argnums (values only), grad of a function
    closing over a jitted function and over a jitted function of a traced argument,
    and the errors for an unhashable static argument and a traced static value."""
    jnp = jax.numpy

    @functools.partial(jax.jit, static_argnames=("power", "mode"))
    def f(x, power, mode="sum"):
        y = x**power
        return jnp.sum(y) if mode == "sum" else jnp.prod(y)

    x = jnp.array([1.0, 2.0, 0.5])
    out: dict[str, np.ndarray] = {}
    out["static"] = np.asarray(f(x, power=2))
    out["static_prod"] = np.asarray(f(x, 3, mode="prod"))
    out["static_grad"] = np.asarray(jax.grad(f)(x, power=3))
    step = jax.jit(lambda a, b: a - 0.1 * b, donate_argnums=(0,))
    out["donate"] = np.asarray(step(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])))
    h = jax.jit(lambda a: jnp.exp(a) * a)

    def outer(a):
        return jnp.sum(h(a) * h(a * 2.0))

    _eager_jit(jax, out, "closure_jit", jax.grad(outer), x)
    _eager_jit(jax, out, "closure_jit_vmap", jax.vmap(jax.grad(lambda a: h(a) * 3.0)), x)

    def uses_param(a, k):
        g = jax.jit(lambda b: jnp.sin(b * k))
        return jnp.sum(g(a))

    both = jax.grad(uses_param, (0, 1))
    _eager_jit(jax, out, "closure_traced", lambda a, k: jnp.append(*both(a, k)), x, 1.5)
    out["unhashable"] = error_name(lambda: f(x, power=jnp.array([1, 2])))
    out["traced_static"] = error_name(lambda: jax.jit(lambda a, p: f(a, p))(x, 2))
    return out


def control_flow_grads(jax: Any) -> dict[str, np.ndarray]:
    """Gradients through lax.cond and lax.switch whose operands mix floats and ints (the
    int operand's float0 under allow_int), jvp of while_loop and fori_loop, under jit and
    vmap; the reverse-mode while_loop is not recorded (functrace differentiates it, a
    documented extension)."""
    jnp, lax = jax.numpy, jax.lax

    def c(x, n, p):
        return lax.cond(p, lambda a, k: a * k, lambda a, k: jnp.sin(a) + k, x, n)

    x = jnp.array([0.5, 1.5])
    n = jnp.int32(3)
    out: dict[str, np.ndarray] = {}
    for p in (True, False):
        _eager_jit(jax, out, f"cond_{p}", jax.grad(lambda a, k, p=p: jnp.sum(c(a, k, p))), x, n)
    _eager_jit(
        jax,
        out,
        "cond_traced_pred",
        jax.vmap(jax.grad(lambda a, q: c(a, 2, q)), in_axes=(0, 0)),
        x,
        jnp.array([True, False]),
    )
    gi = jax.grad(lambda a, k: jnp.sum(c(a, k, True)), (0, 1), allow_int=True)(x, n)
    out["cond_allow_int_dtype"] = np.array(str(gi[1].dtype))

    def s(i, x, k):
        return lax.switch(
            i, [lambda a, m: a * m, lambda a, m: a**2, lambda a, m: jnp.exp(a) * m], x, k
        )

    for i in (0, 1, 2, 5, -1):
        _eager_jit(
            jax,
            out,
            f"switch_{i}".replace("-", "m"),
            jax.grad(lambda a, i=i: jnp.sum(s(i, a, n))),
            x,
        )
    _eager_jit(
        jax,
        out,
        "switch_vmap_index",
        jax.vmap(jax.grad(lambda a, i: s(i, a, 2.0)), in_axes=(0, 0)),
        jnp.array([0.5, 1.5, 2.0]),
        jnp.array([0, 1, 2]),
    )

    def loop(x):
        return lax.while_loop(
            lambda cz: cz[0] < 5, lambda cz: (cz[0] + 1, cz[1] * jnp.cos(cz[1]) + 0.5), (0, x)
        )[1]

    _eager_jit(jax, out, "while_jvp", lambda a: jax.jvp(loop, (a,), (jnp.ones_like(a),))[1], x)
    _eager_jit(jax, out, "while_jacfwd", jax.jacfwd(loop), x)
    _eager_jit(jax, out, "while_jvp_vmap", jax.vmap(lambda a: jax.jvp(loop, (a,), (1.0,))[1]), x)
    _eager_jit(
        jax,
        out,
        "fori_grad",
        jax.grad(lambda a: jnp.sum(lax.fori_loop(0, 4, lambda i, v: v * jnp.sin(v) + i, a))),
        x,
    )
    return out


def documented_kinks(jax: Any) -> dict[str, np.ndarray]:
    """The kinks where functrace's convention differs from JAX's: abs at 0 (and the
    vector and matrix norms built on it, soft_sign's and |x|**2's second derivatives),
    jnp.max with NaN entries, clip and
    clamp at their bounds, fmax/fmin at ties (JAX: all to the second), hypot at
    (0, 0), cummax/cummin with ties, x ** y at x = 0 with y = 0 and second derivatives
    in x there, and xlogy/xlog1py at x = 0 with y at or beyond the edge of its domain."""
    jnp, lax = jax.numpy, jax.lax
    norm = jnp.linalg.norm
    xs = jnp.array([-1.5, -0.0, 0.0, 0.5, 2.0])
    out: dict[str, np.ndarray] = {}
    _eager_jit(jax, out, "abs", jax.vmap(jax.grad(jnp.abs)), xs)
    _eager_jit(jax, out, "fabs", jax.vmap(jax.grad(jnp.fabs)), xs)
    _eager_jit(jax, out, "abs_jvp", lambda x: jax.jvp(jnp.abs, (x,), (jnp.ones_like(x),))[1], xs)
    v = jnp.array([3.0, -4.0, 0.0, 4.0])
    _eager_jit(jax, out, "norm_1", jax.grad(lambda a: norm(a, 1)), v)
    _eager_jit(jax, out, "norm_ninf", jax.grad(lambda a: norm(a, -jnp.inf)), v)
    _eager_jit(
        jax,
        out,
        "norm_mat_inf",
        jax.grad(lambda a: norm(a, jnp.inf)),
        jnp.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]),
    )
    _eager_jit(jax, out, "norm_zero_1", jax.grad(lambda a: norm(a, 1)), jnp.zeros(4))
    _eager_jit(jax, out, "norm_zero_inf", jax.grad(lambda a: norm(a, jnp.inf)), jnp.zeros(4))
    x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    lo, hi = jnp.full(6, -0.5), jnp.array([1.0, 1.0, 1.0, 0.5, 1.0, 3.0])
    _eager_jit(jax, out, "clip_x", jax.vmap(jax.grad(lambda v: jnp.clip(v, -0.5, 1.0))), x)
    _eager_jit(
        jax,
        out,
        "clip_all",
        jax.grad(lambda v, a, b: jnp.sum(jnp.clip(v, a, b) * jnp.arange(6.0)), (0, 1, 2)),
        x,
        lo,
        hi,
    )
    _eager_jit(jax, out, "clamp", jax.grad(lambda v, a: jnp.sum(lax.clamp(a, v, 1.0))), x, -0.5)
    _eager_jit(jax, out, "hypot", jax.grad(jnp.hypot, (0, 1)), 0.0, 0.0)
    fa, fb = jnp.array([1.0, jnp.nan, 2.0, 3.0]), jnp.array([1.0, 1.0, jnp.nan, 3.0])
    _eager_jit(jax, out, "fmax", jax.vmap(jax.grad(jnp.fmax, (0, 1))), fa, fb)
    _eager_jit(jax, out, "fmin", jax.vmap(jax.grad(jnp.fmin, (0, 1))), fa, fb)
    _eager_jit(jax, out, "soft_sign_2nd", jax.vmap(jax.grad(jax.grad(jax.nn.soft_sign))), xs)
    _eager_jit(jax, out, "abs_squared_2nd", jax.grad(jax.grad(lambda a: jnp.abs(a) ** 2)), 0.0)
    _eager_jit(jax, out, "max_nan_ties", jax.grad(jnp.max), jnp.array([jnp.nan, 1.0, jnp.nan]))
    _eager_jit(
        jax,
        out,
        "clip_max_only",
        jax.grad(lambda v: jnp.sum(jnp.clip(v, max=1.0))),
        jnp.array([1.0, 2.0, 0.0]),
    )
    xs, ys = jnp.array([0.0, 0.0, 0.0]), jnp.array([0.0, -1.0, -2.0])
    _eager_jit(jax, out, "xlogy", jax.vmap(jax.grad(jax.scipy.special.xlogy, (0, 1))), xs, ys)
    _eager_jit(jax, out, "xlog1py", jax.vmap(jax.grad(jax.scipy.special.xlog1py, (0, 1))), xs, ys)
    w = jnp.array([1.0, -2.0, 0.5, 3.0, 1.5])
    ties = jnp.array([1.0, 3.0, 3.0, 2.0, 3.0])
    _eager_jit(jax, out, "cummax", jax.grad(lambda v: jnp.sum(lax.cummax(v) * w)), ties)
    _eager_jit(jax, out, "cummin", jax.grad(lambda v: jnp.sum(lax.cummin(-v) * w)), ties)
    _eager_jit(jax, out, "jnp_cummax", jax.jacrev(lambda v: jnp.maximum.accumulate(v)), ties)
    _eager_jit(jax, out, "pow_0_0", jax.grad(lambda a, b: a**b, (0, 1)), 0.0, 0.0)
    _eager_jit(jax, out, "lax_pow_0_0", jax.grad(lambda a, b: lax.pow(a, b), (0, 1)), 0.0, 0.0)
    ys = jnp.array([0.0, 1.0, 2.0, 0.5, 3.0])
    _eager_jit(
        jax, out, "pow_xx", jax.vmap(jax.grad(jax.grad(lambda a, b: a**b))), jnp.zeros(5), ys
    )
    _eager_jit(
        jax,
        out,
        "power_int_2nd",
        jax.vmap(jax.grad(jax.grad(lambda a, k: jnp.power(a, k)))),
        jnp.zeros(2),
        jnp.array([0, 1]),
    )
    return out


def documented_safe_sqrt(jax: Any) -> dict[str, np.ndarray]:
    """Gradients that are NaN in JAX (sqrt'(0) * 0) and 0 in functrace: the Euclidean,
    p- and Frobenius norms at zero, std of constant inputs."""
    jnp = jax.numpy
    norm = jnp.linalg.norm
    z = jnp.zeros(4)
    out: dict[str, np.ndarray] = {}
    for name, o in {"none": None, "2": 2, "3": 3}.items():
        _eager_jit(jax, out, f"zero_{name}", jax.grad(lambda a, o=o: norm(a, ord=o)), z)
    _eager_jit(jax, out, "zero_fro", jax.grad(lambda a: norm(a)), jnp.zeros((2, 3)))
    _eager_jit(
        jax,
        out,
        "vmap_rows",
        jax.vmap(jax.grad(lambda a: norm(a))),
        jnp.array([[0.0, 0.0], [3.0, 4.0]]),
    )
    c = jnp.full(4, 2.5)
    _eager_jit(jax, out, "std_const", jax.grad(jnp.std), c)
    _eager_jit(jax, out, "std1_const", jax.grad(lambda a: jnp.std(a, ddof=1)), c)
    _eager_jit(jax, out, "nanstd_const", jax.grad(jnp.nanstd), jnp.array([1.0, jnp.nan, 1.0]))
    return out


def triangle_reading_gradients(jax: Any) -> dict[str, np.ndarray]:
    """jax.grad through jnp.linalg.eigh, eigvalsh and cholesky of a symmetric matrix
    (eigenvalues, a phase-free function of the eigenvectors, the factor), eagerly and
    under jit: JAX symmetrizes the input by default, so its gradient is symmetric."""
    jnp = jax.numpy
    la = jnp.linalg
    s = jnp.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, -1.0]])
    out: dict[str, np.ndarray] = {}
    _eager_jit(
        jax, out, "vals", jax.grad(lambda a: jnp.sum(la.eigh(a)[0] * jnp.arange(1.0, 4.0))), s
    )
    _eager_jit(
        jax,
        out,
        "vecs",
        jax.grad(lambda a: jnp.sum(jnp.abs(la.eigh(a)[1][:, 0]) * jnp.arange(1.0, 4.0))),
        s,
    )
    _eager_jit(jax, out, "eigvalsh", jax.grad(lambda a: la.eigvalsh(a)[-1]), s)
    spd = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])
    _eager_jit(
        jax,
        out,
        "cholesky",
        jax.grad(lambda a: jnp.sum(la.cholesky(a) * jnp.arange(9.0).reshape(3, 3))),
        spd,
    )
    return out


def jax_implementation_artifacts(jax: Any) -> dict[str, np.ndarray]:
    """Results of JAX 0.10.2 that are artifacts of its implementation: jacrev with
    allow_int gives int64 zeros for an integer input (not float0), linear_transpose of a
    nonlinear function fails with a bare AssertionError, and the derivatives of sinc
    at 1e-9 lose every digit (its series is used only at exactly 0), and
    scipy.special.i0/i1 take abs'(0) = 1 into their derivatives at 0 (i0'(0) = 1, not 0)."""
    jnp = jax.numpy
    tree = {"w": jnp.array([0.5, -1.0]), "count": jnp.array(3)}
    jr = jax.jacrev(lambda t: t["w"] * t["count"], allow_int=True)(tree)
    t = jnp.array([1e-9, -1e-7])
    return {
        "jacrev_allow_int_dtype": np.array(str(jr["count"].dtype)),
        "transpose_nonlinear": error_name(
            lambda: jax.linear_transpose(lambda a: a * a, jnp.zeros(2))(jnp.ones(2))
        ),
        "sinc": np.asarray(jax.vmap(jax.grad(jnp.sinc))(t)),
        "sinc_2nd": np.asarray(jax.vmap(jax.grad(jax.grad(jnp.sinc)))(t)),
        "i0": np.asarray(jax.grad(jax.scipy.special.i0)(0.0)),
        "i1_2nd": np.asarray(jax.grad(jax.grad(jax.scipy.special.i1))(0.0)),
    }


def scatter_and_window_ties(jax: Any) -> dict[str, np.ndarray]:
    """Gradients and JVPs of .at[].max/.at[].min with repeated indices where the operand
    and updates tie, reduce_window max pooling with tied windows and segment-style
    maxima written with .at[].max, eagerly, under jit and vmap."""
    jnp, lax = jax.numpy, jax.lax
    out: dict[str, np.ndarray] = {}
    idx = jnp.array([0, 1, 1, 2, 0])
    x = jnp.array([1.0, 5.0, 2.0])
    u = jnp.array([1.0, 7.0, 7.0, 0.0, 1.0])
    w = jnp.array([1.0, 2.0, 3.0])

    def g_max(a, b):
        return jnp.sum(a.at[idx].max(b) * w)

    def g_min(a, b):
        return jnp.sum(a.at[idx].min(b) * w)

    _eager_jit(jax, out, "max", lambda a, b: jnp.concatenate(jax.grad(g_max, (0, 1))(a, b)), x, u)
    _eager_jit(jax, out, "min", lambda a, b: jnp.concatenate(jax.grad(g_min, (0, 1))(a, b)), x, u)
    tx, tu = jnp.array([1.0, 10.0, 100.0]), jnp.array([1e3, 1e4, 1e5, 1e6, 1e7])
    _eager_jit(
        jax,
        out,
        "max_jvp",
        lambda a, b: jax.jvp(lambda p, q: p.at[idx].max(q), (a, b), (tx, tu))[1],
        x,
        u,
    )
    xs, us = jnp.stack([x, x + 1.0]), jnp.stack([u, u])
    _eager_jit(
        jax,
        out,
        "max_vmap",
        lambda a, b: jnp.concatenate(jax.vmap(jax.grad(g_max, (0, 1)))(a, b), axis=1),
        xs,
        us,
    )
    seg = jnp.array([0, 0, 1, 1, 1])
    vals = jnp.array([2.0, 2.0, 1.0, 3.0, 3.0])
    _eager_jit(
        jax,
        out,
        "segment_max",
        jax.grad(lambda v: jnp.sum(jnp.full(2, -jnp.inf).at[seg].max(v) * jnp.array([1.0, 10.0]))),
        vals,
    )
    pool = jnp.array([[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 3.0, 3.0]])
    _eager_jit(
        jax,
        out,
        "max_pool",
        jax.grad(
            lambda a: jnp.sum(
                lax.reduce_window(a, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID")
                * jnp.arange(1.0, 4.0)
            )
        ),
        pool,
    )
    return out


def reductions_and_domain_edges(jax: Any) -> dict[str, np.ndarray]:
    """Gradients of quantile-style reductions with ties (median of an even count,
    nanmedian, percentile methods, ptp, argmax gathers, max with initial), and of
    elementwise functions at the edges of their domains (arcsin/arccos/arctanh at 1,
    cbrt and log at 0, logaddexp2 at -inf, heaviside, copysign, fmod/remainder)."""
    jnp = jax.numpy
    out: dict[str, np.ndarray] = {}
    t = jnp.array([1.0, 2.0, 2.0, 3.0])
    _eager_jit(jax, out, "median_even", jax.grad(jnp.median), t)
    _eager_jit(
        jax, out, "nanmedian", jax.grad(jnp.nanmedian), jnp.array([1.0, jnp.nan, 2.0, 2.0, 3.0])
    )
    for method in ("linear", "nearest", "midpoint", "lower", "higher"):
        _eager_jit(
            jax,
            out,
            "pct_" + method,
            jax.grad(lambda v, m=method: jnp.percentile(v, 40.0, method=m)),
            t,
        )
    _eager_jit(jax, out, "ptp", jax.grad(jnp.ptp), jnp.array([1.0, 3.0, 3.0, 1.0]))
    _eager_jit(
        jax, out, "argmax_take", jax.grad(lambda v: v[jnp.argmax(v)]), jnp.array([1.0, 3.0, 3.0])
    )
    _eager_jit(
        jax,
        out,
        "max_initial",
        jax.grad(lambda v: jnp.max(v, initial=3.0)),
        jnp.array([1.0, 3.0, 2.0]),
    )
    for name in ("arcsin", "arccos", "arctanh", "cbrt", "log", "log2", "log10"):
        f = getattr(jnp, name)
        _eager_jit(jax, out, name, jax.vmap(jax.grad(f)), jnp.array([0.0, 1.0, 0.5]))
    _eager_jit(jax, out, "logaddexp2", jax.grad(jnp.logaddexp2, (0, 1)), -jnp.inf, -jnp.inf)
    _eager_jit(
        jax,
        out,
        "heaviside",
        jax.grad(lambda v: jnp.sum(jnp.heaviside(v, 0.5))),
        jnp.array([-1.0, 0.0, 1.0]),
    )
    a, b = jnp.array([5.0, -5.0, 4.0, 0.0]), jnp.array([3.0, 3.0, 2.0, -1.0])
    for name in ("copysign", "fmod", "remainder", "floor_divide"):
        f = getattr(jnp, name)
        _eager_jit(jax, out, name, jax.vmap(jax.grad(f, (0, 1))), a, b)
    return out


PROGRAMS = {
    f.__name__: f
    for f in (
        kinks_elementwise,
        kinks_max_min_ties,
        sort_ties,
        clip_where_rounding,
        norms,
        powers_at_zero,
        logsumexp_with_inf,
        special_points,
        cumulative_grads,
        prod_with_zeros,
        std_var_constant,
        linalg_special_grads,
        integer_inputs_float0,
        holomorphic_and_complex,
        has_aux_everywhere,
        argnums_variants,
        linearize_and_transpose,
        pytree_jacobians,
        vmap_axes,
        eval_shape_pytrees,
        custom_jvp_details,
        custom_vjp_details,
        checkpoint_and_closure_convert,
        jit_options_and_closures,
        control_flow_grads,
        scatter_and_window_ties,
        reductions_and_domain_edges,
        documented_kinks,
        documented_safe_sqrt,
        triangle_reading_gradients,
        jax_implementation_artifacts,
    )
}
