"""``jit``'s static and donated arguments: JAX's resolution and checks of
``static_argnums``/``static_argnames`` and ``donate_argnums``/``donate_argnames``.

As in JAX (``api_util.resolve_argnums``): when only one of numbers and names is given,
the other is inferred from the function's signature (a parameter that can be passed
either way is static, or donated, both ways); when both are given they are used as
given. Numbers out of range of the positional parameters (unless the function takes
``*args``), names the function does not take (unless it takes ``**kwargs``), and names
of positional-only or ``*args`` parameters are a ``ValueError``, as is a parameter both
static and donated. A function without a signature (some built-ins) is not checked.

Donation is accepted and has no effect (see ``functrace/README.md``): a donated
argument stays valid and unchanged, and the results are those without donation. So are
``in_shardings``/``out_shardings`` (:func:`check_shardings`): one device places nothing.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

from functrace.tree_util import tree_leaves

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
_KEYWORD = (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)


class Argnums(NamedTuple):
    """The resolved numbers and names of static and donated arguments."""

    static_nums: tuple[int, ...]
    static_names: tuple[str, ...]
    donate_nums: tuple[int, ...]
    donate_names: tuple[str, ...]


def _index_tuple(origin: str, what: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    items = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    try:
        if any(isinstance(n, bool) for n in items):
            raise TypeError
        return tuple(operator.index(n) for n in items)
    except TypeError:
        raise TypeError(
            f"{origin}: expected {what} to be an int or a sequence of ints, got {value!r}."
        ) from None


def _str_tuple(origin: str, what: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else value
    try:
        items = tuple(items)
    except TypeError:
        items = (value,)
    if not all(isinstance(n, str) for n in items):
        raise TypeError(
            f"{origin}: expected {what} to be a str or a sequence of str, got {value!r}."
        )
    return items


def _infer(
    params: list[inspect.Parameter], nums: tuple[int, ...] | None, names: tuple[str, ...] | None
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """JAX's ``infer_argnums_and_argnames``."""
    if nums is None and names is None:
        return (), ()
    if nums is not None and names is not None:
        return nums, names
    if nums is None:
        assert names is not None
        inferred = (i for i, p in enumerate(params) if p.kind == _P.POSITIONAL_OR_KEYWORD)
        return tuple(i for i in inferred if params[i].name in names), names
    return nums, tuple(
        p.name for i, p in enumerate(params) if p.kind == _P.POSITIONAL_OR_KEYWORD and i in nums
    )


def _check_nums(
    origin: str, params: list[inspect.Parameter], nums: tuple[int, ...], what: str
) -> None:
    if not nums or any(p.kind == _P.VAR_POSITIONAL for p in params):
        return  # any number of positional arguments
    n = sum(p.kind in _POSITIONAL for p in params)
    if -min(nums) > n or max(nums) >= n:
        raise ValueError(
            f"{origin}: expected {what} in [{-n}, {n}) (the function takes {n} positional "
            f"arguments), got {what}={nums}."
        )


def _check_names(
    origin: str, params: list[inspect.Parameter], names: tuple[str, ...], what: str
) -> None:
    bad = sorted(
        {p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.VAR_POSITIONAL)} & set(names)
    )
    if bad:
        raise ValueError(
            f"{origin}: expected {what} to name parameters that can be passed by keyword, "
            f"got {bad}: positional-only or *args parameters (use "
            f"{what.replace('names', 'nums')} for them)."
        )
    if any(p.kind == _P.VAR_KEYWORD for p in params):
        return  # takes any keyword
    bad = sorted(set(names) - {p.name for p in params if p.kind in _KEYWORD})
    if bad:
        raise ValueError(
            f"{origin}: expected {what} to name parameters of the function, got {bad}, "
            f"which it does not take."
        )


def resolve_argnums(
    fun: Callable[..., Any],
    origin: str,
    static_argnums: Any,
    static_argnames: Any,
    donate_argnums: Any,
    donate_argnames: Any,
) -> Argnums:
    """Check and complete the static and donated arguments of ``jit(fun, ...)``."""
    s_nums = _index_tuple(origin, "static_argnums", static_argnums)
    s_names = _str_tuple(origin, "static_argnames", static_argnames)
    d_nums = _index_tuple(origin, "donate_argnums", donate_argnums)
    d_names = _str_tuple(origin, "donate_argnames", donate_argnames)
    try:
        params: list[inspect.Parameter] | None = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = None
    if params is None:  # no signature: nothing to infer or check (as JAX)
        if d_names:
            raise ValueError(
                f"{origin}: expected donate_argnums for a function without a signature, "
                f"got donate_argnames={d_names}."
            )
        return Argnums(s_nums or (), s_names or (), d_nums or (), ())
    s_nums, s_names = _infer(params, s_nums, s_names)
    d_nums, d_names = _infer(params, d_nums, d_names)
    _check_nums(origin, params, s_nums, "static_argnums")
    _check_names(origin, params, s_names, "static_argnames")
    _check_nums(origin, params, d_nums, "donate_argnums")
    _check_names(origin, params, d_names, "donate_argnames")
    both = sorted(set(s_names) & set(d_names))
    if both:
        raise ValueError(
            f"{origin}: expected static and donated arguments to differ, got {both} in "
            f"both (an argument is either static or donated)."
        )
    return Argnums(s_nums, s_names, d_nums, d_names)


def check_shardings(name: str, given: Any) -> None:
    """``jit``'s ``in_shardings``/``out_shardings``: a pytree whose leaves are shardings,
    partition specs or None (a clear TypeError otherwise)."""
    from functrace.sharding import PartitionSpec, Sharding

    def ok(x: Any) -> bool:
        return isinstance(x, (Sharding, PartitionSpec))

    for leaf in tree_leaves(given, is_leaf=ok):
        if not ok(leaf):
            raise TypeError(
                f"jit: expected {name} to hold shardings (NamedSharding, "
                f"SingleDeviceSharding...), PartitionSpecs or None, got {leaf!r:.60}."
            )
