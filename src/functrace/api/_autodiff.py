"""The differentiation transforms over pytrees: ``grad``/``value_and_grad``, ``vjp``,
``jvp``, ``linearize`` and ``stop_gradient`` (the Jacobians are in
``functrace.api._jacobians``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.api import _eager_cache
from functrace.api._args import (
    _FLAT_LEAF_TYPES,
    _check_array_leaf,
    _check_complex,
    _check_kind,
    _diff_mask,
    _from_ct,
    _needs_plain,
    _normalize_argnums,
    _output,
    _plain_args,
    _plain_kwargs,
    _plain_leaves,
)
from functrace.core import Tracer, describe_fun
from functrace.interpreters import ad
from functrace.tree_util import (
    keystr,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` (``((value, aux), grad)`` with aux).

    With ``holomorphic=True`` the differentiated arguments and the output are complex
    and the gradient is the complex derivative (JAX's: the pullback of 1, so ``f(z) =
    z**2`` gives ``2 z``); without it the output must be real. As in JAX, ``argnums``
    naming a position past the arguments given is a ``TypeError`` when called, and an
    empty tuple or a negative position out of range a ``ValueError``.

    >>> import functrace as ft
    >>> ft.value_and_grad(lambda x: x ** 2)(3.0)
    (Array(9.), Array(6.))
    """
    holomorphic = bool(holomorphic)
    single = isinstance(argnums, int)
    nums_cache: dict[int, tuple[int, ...]] = {}
    origin: list[str] = []  # computed on first use: naming the function costs a few us

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums = nums_cache.get(len(args))
        if nums is None:
            nums = nums_cache[len(args)] = _normalize_argnums("grad", argnums, len(args), True)
            origin.append(f"grad of {describe_fun(fun)}")
        args = _plain_args("grad", fun, args, skip=nums)  # those: as leaves below
        if kwargs:
            kwargs = _plain_kwargs("grad", fun, kwargs)
        diff = tuple(args[i] for i in nums)
        if all(type(a) in _FLAT_LEAF_TYPES for a in diff):
            leaves, tree = list(diff), None  # fast path: every argument is one array
        else:
            leaves, tree = tree_flatten(diff)
        leaves = _plain_leaves("grad", fun, leaves, diff, nums)
        mask = _diff_mask("grad", leaves, allow_int)
        if holomorphic:
            for x in leaves:
                _check_complex("grad", "inputs", core.get_aval(x).dtype)

        def run(flat_in: list[Any], full: list[Any], kw: Any) -> tuple[Any, list[Any], Any]:
            def flat_fun(*flat: Any) -> Any:
                args_in = list(full)
                for i, v in zip(nums, flat if tree is None else tree_unflatten(tree, flat)):
                    args_in[i] = v
                res = core.call_user("grad", fun, args_in, kw)
                out, aux = split_aux("grad", fun, res) if has_aux else (res, None)
                _check_scalar_output(fun, out, holomorphic)
                return ([out], aux) if has_aux else [out]

            outs, lin, aux = ad.linearize_flat(
                flat_fun, flat_in, mask, origin=origin[0], has_aux=has_aux, spmd=True
            )
            ans = outs[0]
            cts = lin.transpose([_one(core.get_aval(ans).dtype)])
            return ans, cts, aux

        if not _eager_cache.usable():  # under a transformation: part of the outer one
            ans, cts, aux = run(leaves, list(args), kwargs)
        else:
            ans, cts, aux = _cached_grad(
                fun,
                (nums, has_aux, allow_int, holomorphic, tree),
                run,
                leaves,
                args,
                nums,
                kwargs,
                origin[0],
            )
        grads = [_from_ct(c, p) for c, p in zip(cts, leaves)]
        g_tree = tuple(grads) if tree is None else tree_unflatten(tree, grads)
        g = g_tree[0] if single else g_tree
        ans = _output(ans)
        return ((ans, aux), g) if has_aux else (ans, g)

    return value_and_grad_f


_ONES: dict[np.dtype, np.ndarray] = {}


def _one(dtype: np.dtype) -> np.ndarray:
    """The seed cotangent of grad: a shared read-only 1 of ``dtype``."""
    one = _ONES.get(dtype)
    if one is None:
        one = _ONES[dtype] = np.ones((), dtype)
        one.setflags(write=False)
    return one


def _is_dyn(x: Any) -> bool:
    return type(x) is np.ndarray or isinstance(x, (np.ndarray, np.generic))


def _cached_grad(
    fun: Callable[..., Any],
    options: Any,
    run: Callable[..., tuple[Any, list[Any], Any]],
    leaves: list[Any],
    args: tuple[Any, ...],
    nums: tuple[int, ...],
    kwargs: Any,
    origin: str,
) -> tuple[Any, list[Any], Any]:
    """``run(leaves, args, kwargs)`` through the eager cache (``_eager_cache``): the
    differentiated leaves and the array leaves of the other arguments are the inputs."""
    rest = [a for i, a in enumerate(args) if i not in nums]
    r_tree: Any = None
    if kwargs or not all(type(a) in _FLAT_LEAF_TYPES for a in rest):
        r_leaves, r_tree = tree_flatten((rest, kwargs))
    else:
        r_leaves = rest  # fast path: every other argument is one array or scalar
    dyn: list[Any] = []
    k_diff = _eager_cache.input_signature(leaves, dyn)
    k_rest = _eager_cache.signature(r_leaves, dyn)
    key = None
    if k_rest is not None:
        key = ("grad", options, len(args), r_tree, k_diff, k_rest)
    n_diff = len(leaves)

    def body(ins: list[Any]) -> tuple[list[Any], Any]:
        it = iter(ins[n_diff:])
        new_leaves = [next(it) if _is_dyn(x) else x for x in r_leaves]
        new_rest, kw = (new_leaves, {}) if r_tree is None else tree_unflatten(r_tree, new_leaves)
        it_rest = iter(new_rest)
        full = [None if i in nums else next(it_rest) for i in range(len(args))]
        ans, cts, aux = run(ins[:n_diff], full, kw)
        zero = [type(c) is ad.Zero for c in cts]
        aux_leaves, aux_tree = tree_flatten(aux)
        live = [c for c, z in zip(cts, zero) if not z]
        return [ans, *live, *aux_leaves], (zero, aux_tree, [c for c in cts if type(c) is ad.Zero])

    flat, (zero, aux_tree, zeros) = _eager_cache.call(fun, key, dyn, body, origin)
    it_live, it_zero = iter(flat[1:]), iter(zeros)
    cts = [next(it_zero) if z else next(it_live) for z in zero]
    aux = tree_unflatten(aux_tree, list(it_live))
    return flat[0], cts, aux


def _check_scalar_output(fun: Callable[..., Any], out: Any, holomorphic: bool = False) -> None:
    if not core.is_array_like(out):
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a scalar array, got "
            f"{type(out).__name__}. Use has_aux=True to return extra values."
        )
    aval = core.get_aval(out)
    if aval.shape != ():
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a scalar (shape ()), got shape "
            f"{aval.shape} {aval.dtype.name}. grad needs a scalar loss: use .sum() or .mean() "
            f"on the output, or jacrev / vjp for non-scalar outputs."
        )
    if not dtypes.is_inexact(aval.dtype):
        raise TypeError(
            f"grad: expected {describe_fun(fun)} to return a float scalar, got "
            f"{aval.dtype.name}. The output of an integer function has no gradient."
        )
    _check_kind("grad", f"outputs of {describe_fun(fun)}", aval.dtype, holomorphic)


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The gradient of scalar ``fun`` with respect to the arguments ``argnums``.

    The output must be real, or complex with ``holomorphic=True`` (complex arguments
    too; the gradient is then the complex derivative ``f'(z)``, as JAX's).

    >>> import functrace as ft
    >>> ft.grad(lambda x, y: x * y + x ** 2)(2.0, 3.0)
    Array(7.)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return grad_f


# ---------------------------------------------------------------------------
# vjp, jvp, linearize
# ---------------------------------------------------------------------------


def _check_ct_leaf(x: Any, expected: core.ShapedArray, path: str) -> Any:
    if type(x) is ad.Zero:
        return x
    if not core.is_array_like(x):
        raise TypeError(
            f"vjp: expected an array cotangent at {path or 'the output'}, got {type(x).__name__}."
        )
    if _needs_plain(x):
        x = core.plain_array(x, "vjp", f"the cotangent at {path or 'the output'}")
    aval = core.get_aval(x)
    if aval.shape != expected.shape:
        raise ValueError(
            f"vjp: expected a cotangent of shape {expected.shape} at "
            f"{path or 'the output'}, got shape {aval.shape}."
        )
    if aval.dtype != expected.dtype and not (aval.weak_type and aval.dtype.kind in "iufc"):
        raise TypeError(
            f"vjp: expected a cotangent of dtype {expected.dtype.name} at "
            f"{path or 'the output'}, got {aval.dtype.name}."
        )
    if aval.dtype != expected.dtype:
        from functrace.lax.elementwise import convert_element_type

        x = convert_element_type(x, expected.dtype)
    return x


class _Pullback:
    """The ``vjp_fn`` of :func:`vjp`: the transposed linear map over its residuals.

    A pytree whose leaves are the residuals (the recorded map is static), so a
    pullback can be passed into ``jit`` as an argument: ``jit(lambda pb, ct: pb(ct))``.
    """

    __slots__ = ("lin", "in_tree", "out_tree", "in_avals")

    def __init__(self, lin: ad.LinearFunction, in_tree: Any, out_tree: Any, in_avals: Any) -> None:
        self.lin = lin
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)

    def __call__(self, ct: Any) -> tuple[Any, ...]:
        ct_leaves_paths, ct_tree = tree_flatten_with_path(ct)
        if ct_tree != self.out_tree:
            raise ValueError(structure_mismatch_message(self.out_tree, ct, "vjp cotangent"))
        ct_leaves = [
            _check_ct_leaf(x, a, keystr(p))
            for (p, x), a in zip(ct_leaves_paths, self.lin.out_avals)
        ]
        cts = self.lin.transpose(ct_leaves)
        return tuple(
            tree_unflatten(self.in_tree, [_from_ct_aval(c, a) for c, a in zip(cts, self.in_avals)])
        )

    def __repr__(self) -> str:
        return f"<vjp function: {len(self.lin.jaxpr.eqns)} equations>"


class _Pushforward:
    """The ``f_jvp`` of :func:`linearize`: the recorded linear map over its residuals
    (a pytree like the pullback of :func:`vjp`, so it can be passed into ``jit``)."""

    __slots__ = ("lin", "in_tree", "out_tree", "in_avals")

    def __init__(self, lin: ad.LinearFunction, in_tree: Any, out_tree: Any, in_avals: Any) -> None:
        self.lin = lin
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)

    def __call__(self, *tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != self.in_tree:
            raise ValueError(
                structure_mismatch_message(self.in_tree, tangents, "linearize tangents")
            )
        t_leaves = _check_tangents(self.in_avals, t_leaves)
        return tree_unflatten(self.out_tree, [_output(t) for t in self.lin.forward(t_leaves)])

    def __repr__(self) -> str:
        return f"<linearized function: {len(self.lin.jaxpr.eqns)} equations>"


def _linear_flatten(f: Any) -> tuple[list[Any], Any]:
    lin = f.lin
    static = (
        lin.jaxpr,
        tuple(lin.in_avals),
        tuple(lin.out_avals),
        tuple(lin.out_zero),
        tuple(lin.in_mask),
        f.in_tree,
        f.out_tree,
        f.in_avals,
        lin.spmd,
    )
    return list(lin.consts), static


def _linear_unflatten(cls: type) -> Callable[[Any, Any], Any]:
    def unflatten(static: Any, consts: Any) -> Any:
        jaxpr, in_avals, out_avals, out_zero, in_mask, in_tree, out_tree, p_avals, spmd = static
        lin = ad.LinearFunction(
            jaxpr,
            list(consts),
            list(in_avals),
            list(out_avals),
            list(out_zero),
            list(in_mask),
            spmd,
        )
        return cls(lin, in_tree, out_tree, p_avals)

    return unflatten


def _register_linear_pytrees() -> None:
    from functrace.tree_util import register_pytree_node

    for cls in (_Pullback, _Pushforward):
        register_pytree_node(cls, _linear_flatten, _linear_unflatten(cls))


_register_linear_pytrees()


def _from_ct_aval(ct: Any, aval: core.ShapedArray) -> Any:
    if type(ct) is ad.Zero:
        t = ad.tangent_aval(aval)
        return np.zeros(t.shape, t.dtype)
    if (
        not isinstance(ct, Tracer)
        and np.ndim(ct) == 0
        and aval.shape == ()
        and not isinstance(ct, np.ndarray)
    ):
        return ct
    return _output(ct)


def _flat_outputs(
    fname: str, fun: Callable[..., Any], in_tree: Any, has_aux: bool, out_tree_box: list[Any]
) -> Callable[..., Any]:
    """``fun`` on flat input leaves returning its flat output leaves (and aux), the
    output tree appended to ``out_tree_box`` (vjp and jvp)."""

    def flat_fun(*flat: Any) -> Any:
        res = core.call_user(fname, fun, tree_unflatten(in_tree, flat), {})
        out, aux = split_aux(fname, fun, res) if has_aux else (res, None)
        out_leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        return (out_leaves, aux) if has_aux else out_leaves

    return flat_fun


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns one cotangent per primal.

    ``vjp_fn`` is a pytree (its leaves are the residuals), so it can be passed to a
    jitted function as an argument.

    >>> import functrace as ft, numpy as np
    >>> out, f_vjp = ft.vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
    >>> f_vjp(np.array([1.0, 1.0]))
    (Array([2., 2.]),)
    """
    leaves, in_tree = tree_flatten(primals)
    leaves = _plain_leaves("vjp", fun, leaves, primals)
    for x in leaves:
        _check_array_leaf("vjp", x, "")
    mask = [dtypes.is_differentiable(core.get_aval(x).dtype) for x in leaves]
    origin = f"vjp of {describe_fun(fun)}"

    def run(flat_in: list[Any]) -> tuple[list[Any], ad.LinearFunction, Any, Any]:
        out_tree_box: list[Any] = []
        flat_fun = _flat_outputs("vjp", fun, in_tree, has_aux, out_tree_box)
        outs, lin, aux = ad.linearize_flat(
            flat_fun, flat_in, mask, origin=origin, has_aux=has_aux, spmd=True
        )
        return outs, lin, aux, out_tree_box[-1]

    if _eager_cache.usable():
        outs, lin, aux, out_tree = _cached_linear(fun, ("vjp", has_aux, in_tree), run, leaves)
    else:
        outs, lin, aux, out_tree = run(leaves)
    vjp_fn = _Pullback(lin, in_tree, out_tree, [_plain_aval(x) for x in leaves])
    out = tree_unflatten(out_tree, [_output(o) for o in outs])
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _cached_linear(
    fun: Callable[..., Any],
    options: Any,
    run: Callable[[list[Any]], tuple[list[Any], ad.LinearFunction, Any, Any]],
    leaves: list[Any],
) -> tuple[list[Any], ad.LinearFunction, Any, Any]:
    """``run(leaves)`` of vjp through the eager cache: the program computes the primal
    outputs, the residuals of the linear map (its constants) and aux."""
    dyn: list[Any] = []
    key = (options, _eager_cache.input_signature(leaves, dyn))

    def body(ins: list[Any]) -> tuple[list[Any], Any]:
        outs, lin, aux, out_tree = run(ins)
        aux_leaves, aux_tree = tree_flatten(aux)
        meta = (len(outs), len(lin.consts), aux_tree, out_tree, lin)
        return [*outs, *lin.consts, *aux_leaves], meta

    flat, (n_out, n_consts, aux_tree, out_tree, lin) = _eager_cache.call(
        fun, key, dyn, body, f"vjp of {describe_fun(fun)}"
    )
    consts = flat[n_out : n_out + n_consts]
    lin = ad.LinearFunction(
        lin.jaxpr, consts, lin.in_avals, lin.out_avals, lin.out_zero, lin.in_mask
    )
    aux = tree_unflatten(aux_tree, flat[n_out + n_consts :])
    return flat[:n_out], lin, aux, out_tree


def _plain_aval(x: Any) -> core.ShapedArray:
    a = core.get_aval(x)
    return core.ShapedArray(a.shape, a.dtype, a.weak_type)


def _check_tangents(primals: Sequence[Any], tangents: Sequence[Any]) -> list[Any]:
    """Validate tangents against ``primals`` (values or their ShapedArrays)."""
    out = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        pa = p if isinstance(p, core.ShapedArray) else core.get_aval(p)
        if type(t) is ad.Zero:
            out.append(t)
            continue
        if not core.is_array_like(t):
            raise TypeError(
                f"jvp: expected an array tangent for primal leaf {i}, got {type(t).__name__}."
            )
        if _needs_plain(t):
            t = core.plain_array(t, "jvp", f"tangent leaf {i}")
        ta = core.get_aval(t)
        expected = dtypes.tangent_dtype(pa.dtype)
        if ta.shape != pa.shape:
            raise ValueError(
                f"jvp: expected tangent leaf {i} of shape {pa.shape} (the "
                f"primal's shape), got shape {ta.shape}."
            )
        if expected == dtypes.float0:
            # an integer or boolean primal has no tangent space: JAX's rule, a float0
            # tangent only (a float tangent would be dropped without a word)
            if ta.dtype != dtypes.float0:
                raise TypeError(
                    f"jvp: expected a float0 tangent for primal leaf {i} of dtype "
                    f"{pa.dtype.name} (integers and booleans are not differentiable), got "
                    f"{ta.dtype.name}; pass numpy.zeros({pa.shape}, functrace.dtypes.float0), "
                    "or make the primal a float to differentiate with respect to it."
                )
            out.append(ad.Zero(ad.tangent_aval(pa)))
            continue
        if ta.dtype != expected and not ta.weak_type and not pa.weak_type:
            raise TypeError(
                f"jvp: expected tangent leaf {i} of dtype {expected.name} (the "
                f"primal's dtype), got {ta.dtype.name}."
            )
        if ta.dtype != expected or not isinstance(t, (np.ndarray, np.generic, core.Tracer)):
            # a Python scalar (weak) tangent takes the tangent dtype of its primal
            from functrace.lax.elementwise import convert_element_type

            t = (
                convert_element_type(t, expected)
                if isinstance(t, core.Tracer)
                else np.asarray(t, expected)[()]
            )
        out.append(t)
    return out


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """Forward mode: ``(fun(*primals), J @ tangents)``.

    >>> import functrace as ft
    >>> ft.jvp(lambda x: x ** 3, (2.0,), (1.0,))
    (Array(8.), Array(12.))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"jvp: expected primals and tangents as tuples or lists, got "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_flatten(tuple(primals))
    p_leaves = _plain_leaves("jvp", fun, p_leaves, tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(structure_mismatch_message(p_tree, tuple(tangents), "jvp tangents"))
    t_leaves = _check_tangents(p_leaves, t_leaves)
    origin = f"jvp of {describe_fun(fun)}"
    n = len(p_leaves)
    zero_t = [type(t) is ad.Zero for t in t_leaves]

    def run(ins: list[Any]) -> tuple[list[Any], Any]:
        out_tree_box: list[Any] = []
        flat_fun = _flat_outputs("jvp", fun, p_tree, has_aux, out_tree_box)
        it = iter(ins[n:])
        tangents = [t if z else next(it) for t, z in zip(t_leaves, zero_t)]
        res = ad.jvp_flat(flat_fun, ins[:n], tangents, origin=origin, has_aux=has_aux)
        outs, t_outs = res[0], res[1]
        aux_leaves, aux_tree = tree_flatten(res[2] if has_aux else None)
        out_zero = [type(t) is ad.Zero for t in t_outs]
        live = [t for t in t_outs if type(t) is not ad.Zero]
        meta = (len(outs), out_tree_box[-1], out_zero, [t for t in t_outs if type(t) is ad.Zero])
        return [*outs, *live, *aux_leaves], (*meta, aux_tree)

    live_t = [t for t, z in zip(t_leaves, zero_t) if not z]
    if _eager_cache.usable():
        dyn: list[Any] = []
        key = (
            ("jvp", has_aux, p_tree, tuple(zero_t)),
            _eager_cache.input_signature(p_leaves, dyn),
            _eager_cache.input_signature(live_t, dyn),
        )
        flat, meta = _eager_cache.call(fun, key, dyn, run, origin)
    else:
        flat, meta = run([*p_leaves, *live_t])
    n_out, out_tree, out_zero, zeros, aux_tree = meta
    outs = flat[:n_out]
    it_live, it_zero = iter(flat[n_out:]), iter(zeros)
    t_outs = [next(it_zero) if z else next(it_live) for z in out_zero]
    primal_out = tree_unflatten(out_tree, [_output(o) for o in outs])
    tangent_out = tree_unflatten(out_tree, [_from_ct(t, p) for t, p in zip(t_outs, outs)])
    if has_aux:
        return primal_out, tangent_out, tree_unflatten(aux_tree, list(it_live))
    return primal_out, tangent_out


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` applies the recorded
    linear map (the primal computation is not repeated); ``(out, f_jvp, aux)`` with
    ``has_aux``. ``f_jvp`` is a pytree over its residuals, so it can be passed to
    ``jit`` as an argument."""
    leaves, in_tree = tree_flatten(primals)
    leaves = _plain_leaves("linearize", fun, leaves, primals)
    out_tree_box: list[Any] = []

    flat_fun = _jac_flat_fun("linearize", fun, lambda a: a, in_tree, out_tree_box, has_aux)

    mask = [dtypes.is_differentiable(core.get_aval(x).dtype) for x in leaves]
    outs, lin, aux = ad.linearize_flat(
        flat_fun, leaves, mask, origin=f"linearize of {describe_fun(fun)}", has_aux=has_aux
    )
    out_tree = out_tree_box[-1]
    f_jvp = _Pushforward(lin, in_tree, out_tree, [_plain_aval(x) for x in leaves])
    out = tree_unflatten(out_tree, [_output(o) for o in outs])
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def split_aux(fname: str, fun: Callable[..., Any], res: Any) -> tuple[Any, Any]:
    """``(output, aux)`` of what ``fun`` with ``has_aux=True`` returned: a tuple or list of
    two elements (JAX's rule), else a TypeError naming the function."""
    if isinstance(res, (tuple, list)) and len(res) == 2:
        return res[0], res[1]
    if isinstance(res, (tuple, list)):
        n = len(res)
        got = f"a {type(res).__name__} of {n} element{'' if n == 1 else 's'}"
    else:
        got = core.describe_value(res)
    raise TypeError(
        f"{fname}: expected {describe_fun(fun)} with has_aux=True to return a two-element "
        f"tuple (output, aux), got {got}."
    )


def _jac_flat_fun(
    fname: str,
    fun: Callable[..., Any],
    merge: Callable[[Any], tuple[Any, ...]],
    tree: Any,
    out_tree_box: list[Any],
    has_aux: bool,
) -> Callable[..., Any]:
    def flat_fun(*fl: Any) -> Any:
        res = core.call_user(fname, fun, merge(tree_unflatten(tree, fl)), {})
        out, aux = split_aux(fname, fun, res) if has_aux else (res, None)
        o, ot = tree_flatten(out)
        out_tree_box.append(ot)
        return (o, aux) if has_aux else o

    return flat_fun


def stop_gradient(x: Any) -> Any:
    """Identity on a pytree of arrays whose derivative is zero (PyTorch's ``detach``).

    >>> import functrace as ft
    >>> ft.grad(lambda x: x * ft.stop_gradient(x))(3.0)
    Array(3.)
    """
    from functrace.lax.elementwise import stop_gradient as sg

    return tree_map(lambda v: sg(v) if isinstance(v, Tracer) else v, x)
