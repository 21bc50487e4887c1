"""Argument plumbing shared by the public transforms: ``argnums``, making array
arguments plain (``core.plain_array``), differentiability checks and the arrays that
leave a transform.

Every array argument (and tangent or cotangent) goes through ``core.plain_array``
first: ``numpy.matrix`` and masked arrays are rejected with a TypeError naming the
transform, function and argument; other ndarray subclasses are viewed as ndarray;
byte order and alignment are fixed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._array import Array, to_array
from functrace.core import Tracer, describe_fun
from functrace.interpreters import ad
from functrace.tree_util import keystr, tree_flatten_with_path, tree_leaves, tree_map_with_path


def _normalize_argnums(
    fname: str, argnums: int | Sequence[int], nargs: int, too_few_args: bool = False
) -> tuple[int, ...]:
    """``argnums`` as non-negative positions among ``nargs`` arguments. Errors as JAX's:
    a ``ValueError`` for an empty tuple or a position out of range, except a position
    ``>= nargs`` with ``too_few_args`` (``grad``/``value_and_grad``): a ``TypeError``."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{fname}: expected at least one position in argnums, got {argnums!r}.")
    out = []
    for a in nums:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{fname}: expected argnums of ints, got {argnums!r}.")
        if too_few_args and a >= nargs:
            raise TypeError(
                f"{fname}: differentiating with respect to argnums={argnums!r} needs at "
                f"least {a + 1} positional arguments, got {nargs}."
            )
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{fname}: expected argnums in [{-nargs}, {nargs}) for a call "
                f"with {nargs} positional arguments, got {a}."
            )
        out.append(int(a) % nargs)
    return tuple(out)


_SCALAR_LEAF_TYPES = frozenset(core._SCALAR_AVALS)  # Python and NumPy scalar types

_FLAT_LEAF_TYPES = {
    float,
    np.ndarray,
    Array,
    np.float64,
    np.float32,
    np.float16,
    int,
    np.int64,
    np.int32,
    bool,
    complex,
}


def _needs_plain(x: Any) -> bool:
    return isinstance(x, np.ndarray) and not core.is_plain_array(x)


def _param_name(fun: Callable[..., Any], i: int) -> str:
    try:
        params = [
            p.name
            for p in inspect.signature(fun).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return f"argument `{params[i]}`" if i < len(params) else f"argument {i}"


def _plain_value(x: Any, where: Callable[[], str], label: Callable[[], str]) -> Any:
    """``x`` (an argument, or a pytree of them) with every ndarray leaf made plain by
    ``core.plain_array``: the rule for ndarray subclasses (``numpy.matrix`` and masked
    arrays rejected, others viewed as ndarray), byte order and alignment."""
    t = type(x)
    if t in _SCALAR_LEAF_TYPES:
        return x
    if t is np.ndarray:
        return x if core.is_plain_array(x) else core.plain_array(x, where(), label())
    if isinstance(x, np.ndarray):
        return core.plain_array(x, where(), label())
    if isinstance(x, Tracer) or not any(_needs_plain(v) for v in tree_leaves(x)):
        return x
    return tree_map_with_path(
        lambda p, v: core.plain_array(v, where(), label() + keystr(p)) if _needs_plain(v) else v,
        x,
    )


def _plain_args(
    fname: str, fun: Callable[..., Any], args: tuple[Any, ...], skip: Sequence[int] = ()
) -> tuple[Any, ...]:
    """The positional arguments of ``fun`` made plain (see :func:`_plain_value`), except
    those at ``skip`` (made plain after flattening, by :func:`_plain_leaves`); errors
    name the transform ``fname``, the function and the argument."""
    for i, a in enumerate(args):  # fast path: scalars and plain arrays only
        t = type(a)
        if t in _SCALAR_LEAF_TYPES or (t is np.ndarray and core.is_plain_array(a)) or i in skip:
            continue
        break
    else:
        return args
    where = functools.partial(_where, fname, fun)
    return tuple(
        a if i in skip else _plain_value(a, where, functools.partial(_param_name, fun, i))
        for i, a in enumerate(args)
    )


def _plain_leaves(
    fname: str,
    fun: Callable[..., Any],
    leaves: list[Any],
    args: tuple[Any, ...],
    positions: Sequence[int] | None = None,
) -> list[Any]:
    """The flat ``leaves`` of the argument tuple ``args`` (positions ``positions`` of
    ``fun``'s arguments) with every ndarray made plain (see :func:`_plain_value`)."""
    out = leaves
    for i, x in enumerate(leaves):
        t = type(x)
        if t in _SCALAR_LEAF_TYPES or (t is np.ndarray and x.dtype.isnative and x.flags.aligned):
            continue
        if isinstance(x, np.ndarray):
            path = tree_flatten_with_path(args)[0][i][0]
            k = path[0].idx if path and hasattr(path[0], "idx") else 0
            pos = positions[k] if positions is not None else k
            label = _param_name(fun, pos) + keystr(path[1:])
            if out is leaves:
                out = list(leaves)
            out[i] = core.plain_array(x, _where(fname, fun), label)
    return out


def _where(fname: str, fun: Callable[..., Any]) -> str:
    return f"{fname} of {describe_fun(fun)}"


def _plain_kwargs(fname: str, fun: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    where = functools.partial(_where, fname, fun)
    return {
        k: _plain_value(v, where, functools.partial("argument `{}`".format, k))
        for k, v in kwargs.items()
    }


def _output(x: Any) -> Any:
    """Eager results leave as immutable ``functrace.Array``s (0-d ones too; a read-only
    view, e.g. of an input or a broadcast, is copied first)."""
    return to_array(x)


def _check_array_leaf(fname: str, x: Any, path: str) -> None:
    if not core.is_array_like(x):
        raise TypeError(
            f"{fname}: expected arrays or scalars as differentiated inputs, got "
            f"{type(x).__name__} at {path or 'the argument'}. Mark it non-differentiable "
            f"(leave it out of argnums) or convert it with numpy.asarray."
        )


def _diff_mask(fname: str, leaves: Sequence[Any], allow_int: bool) -> list[bool]:
    mask = []
    for x in leaves:
        dt = core.get_aval(x).dtype
        if dtypes.is_differentiable(dt):
            mask.append(True)
        elif allow_int:
            mask.append(False)
        else:
            shape = core.get_aval(x).shape
            key = dt == np.uint32 and shape[-1:] == (2,)
            raise TypeError(
                f"{fname}: expected differentiable inputs of a float or complex dtype, got "
                f"{dt.name}. Cast the input to float, pass allow_int=True (its gradient is a "
                f"float0 zero), or use vjp for integer inputs."
                + (
                    " If it is a PRNG key (random.key or PRNGKey), leave it out of argnums: "
                    "keys are not differentiable."
                    if key
                    else ""
                )
            )
    return mask


def _zero_cotangent(x: Any) -> Any:
    aval = ad.tangent_aval(core.get_aval(x))
    return to_array(np.zeros(aval.shape, aval.dtype))


def _from_ct(ct: Any, primal: Any) -> Any:
    if type(ct) is ad.Zero:
        return _zero_cotangent(primal)
    return _output(ct)


def _check_real(fname: str, what: str, dtype: np.dtype) -> None:
    """JAX's rule for grad/jacrev outputs and jacfwd inputs without holomorphic=True:
    real-valued only."""
    if dtype.kind == "c":
        raise TypeError(
            f"{fname}: expected real-valued {what} (a float dtype), got {dtype.name}. "
            f"For a holomorphic function of complex values pass holomorphic=True; otherwise "
            f"differentiate the real and imaginary parts as separate real functions, or use "
            f"vjp or jvp directly."
        )


def _check_complex(fname: str, what: str, dtype: np.dtype) -> None:
    """JAX's rule with holomorphic=True: the differentiated inputs and the outputs are
    complex."""
    if dtype.kind != "c":
        raise TypeError(
            f"{fname}: with holomorphic=True, expected {what} of a complex dtype, got {dtype.name}."
        )


def _check_kind(fname: str, what: str, dtype: np.dtype, holomorphic: bool) -> None:
    """``_check_complex`` with holomorphic=True, else ``_check_real``."""
    (_check_complex if holomorphic else _check_real)(fname, what, dtype)


def _split_args(
    args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """The differentiated args (a tuple, in argnums order) and a function putting new
    values for them back into the full argument tuple."""
    diff = tuple(args[i] for i in argnums)

    def merge(new_diff: tuple[Any, ...]) -> tuple[Any, ...]:
        full = list(args)
        for i, v in zip(argnums, new_diff):
            full[i] = v
        return tuple(full)

    return diff, merge
