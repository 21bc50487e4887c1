"""``vmap``: a function mapped over a batch axis of its arguments (``in_axes`` and
``out_axes`` prefixes of the argument and output pytrees)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._prng import KEY_DATA, PRNGKeyArray
from functrace.api import _eager_cache
from functrace.api._args import _output, _plain_leaves
from functrace.core import describe_fun
from functrace.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_unflatten,
)


def _axes_for(fname: str, prefix: Any, tree: Any, where: str) -> list[int | None]:
    """Broadcast an ``in_axes`` prefix over ``tree``'s leaves."""

    if prefix is None or isinstance(prefix, (int, np.integer)):
        return [None if prefix is None else int(prefix)] * len(tree_leaves(tree))
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(
                f"{fname}: expected in_axes at {where} with keys "
                f"{sorted(tree)}, got keys {sorted(prefix)}."
            )
        out: list[int | None] = []
        for k in sorted(tree):
            out += _axes_for(fname, prefix[k], tree[k], f"{where}[{k!r}]")
        return out
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            raise ValueError(
                f"{fname}: expected in_axes at {where} with {len(tree)} entries "
                f"(one per element), got {len(prefix)}."
            )
        out = []
        for k, (p, t) in enumerate(zip(prefix, tree)):
            out += _axes_for(fname, p, t, f"{where}[{k}]")
        return out
    raise ValueError(
        f"{fname}: expected in_axes at {where} to be an int, None, or a "
        f"tuple/list/dict prefix of the argument, got {prefix!r} for a "
        f"{type(tree).__name__} argument."
    )


@functools.lru_cache(maxsize=512)
def _key_flags(treedef: Any) -> tuple[bool, ...]:
    """For each leaf of ``treedef``: whether it is the data of a typed key array (whose
    axes count over the key shape, without the data's trailing 2). Cached per
    structure: a call pays one dict lookup."""
    node = treedef.node_data()
    if node is None:
        return (False,) if treedef.num_leaves else ()
    if node[0] is PRNGKeyArray:
        return (True,)
    return tuple(f for c in treedef.children() for f in _key_flags(c))


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    *,
    axis_name: Any = None,
    spmd_axis_name: Any = None,
) -> Callable[..., Any]:
    """Map ``fun`` over a batch axis of its arguments.

    ``in_axes``: int, None (not mapped) or a prefix pytree of the positional arguments;
    keyword arguments are always mapped over their axis 0 (as in JAX);
    ``out_axes``: int or None, or a prefix of the output.
    ``axis_name``: a name (any hashable, usually a string) for the mapped axis while
    ``fun`` runs, so that the collectives of ``functrace.lax`` (``psum``, ``pmean``,
    ``pmax``, ``pmin``, ``all_gather``, ``axis_index``) can reduce or gather over the
    examples; nested ``vmap``s bind different names (an inner one shadows an equal
    outer one), and a collective may name a tuple of them. A name no enclosing ``vmap``
    binds is a ``NameError``. ``axis_size``: the size of the mapped axis when no
    argument is mapped (``in_axes=None``).

    ``spmd_axis_name`` (a name or a tuple of names, JAX's mesh axes to shard the mapped
    axis over) is checked (hashable, else a TypeError) and has no effect: there is one
    process and one device, and it binds no name for the collectives (as in JAX).

    The fourth positional parameter is ``axis_size`` (the project's contract) and
    ``axis_name`` is keyword-only; JAX's order puts ``axis_name`` fourth, so a name
    passed there positionally is an error that says to pass ``axis_name=``.

    >>> import functrace as ft, numpy as np
    >>> ft.vmap(lambda x: (x * x).sum())(np.arange(6.0).reshape(2, 3))
    Array([ 5., 50.])
    >>> ft.vmap(lambda x: x / ft.lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0]))
    Array([0.25, 0.75])
    """
    _check_axis("vmap", axis_name, axis_size)
    if spmd_axis_name is not None:
        try:
            hash(spmd_axis_name)
        except TypeError:
            raise TypeError(
                f"vmap: expected spmd_axis_name to be a hashable name, a tuple of names or "
                f"None, got {type(spmd_axis_name).__name__} {spmd_axis_name!r}."
            ) from None
    return mapped(fun, in_axes, out_axes, axis_size, axis_name)


def _check_axis(fname: str, axis_name: Any, axis_size: Any) -> None:
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(
                f"{fname}: expected axis_name to be a hashable name (such as a string) or "
                f"None, got {type(axis_name).__name__} {axis_name!r}."
            ) from None
        if isinstance(axis_name, tuple):
            raise TypeError(
                f"{fname}: expected axis_name to be one name, got the tuple {axis_name!r}; "
                f"nest {fname}s to bind several names."
            )
    if axis_size is not None and (
        isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer))
    ):
        hint = (
            " (JAX's fourth positional parameter is axis_name; here it is axis_size: "
            f"pass axis_name={axis_size!r} by keyword)"
            if isinstance(axis_size, str) and fname == "vmap"
            else ""
        )
        raise TypeError(
            f"{fname}: expected axis_size to be an int or None, got {axis_size!r}{hint}."
        )


def mapped(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_size: int | None,
    axis_name: Any,
    fname: str = "vmap",
) -> Callable[..., Any]:
    """``fun`` mapped as :func:`vmap` maps it (arguments checked by the caller), its
    errors naming ``fname``. For ``fname="pmap"`` an output whose ``out_axes`` is
    None takes the value of the first example when it depends on the mapped inputs
    (JAX's ``pmap`` returns the first device's), where ``vmap`` raises."""
    from functrace.interpreters import batching

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, list) and len(args) == 1 and not isinstance(args[0], list):
            axes_prefix: Any = tuple(in_axes)
        else:
            axes_prefix = in_axes
        if isinstance(axes_prefix, (tuple, list)):
            if len(axes_prefix) != len(args):
                raise ValueError(
                    f"{fname}: expected in_axes with one entry per positional argument of "
                    f"{describe_fun(fun)} ({len(args)}), got {len(axes_prefix)}: {in_axes!r}."
                )
            axes = []
            for i, (p, a) in enumerate(zip(axes_prefix, args)):
                axes += _axes_for(fname, p, a, f"argument {i}")
        else:
            axes = _axes_for(fname, axes_prefix, args, "the arguments")
        kw_paths, kw_tree = tree_flatten_with_path(kwargs)
        leaves_paths, arg_tree = tree_flatten_with_path(args)
        n_pos = len(leaves_paths)
        axes += [0] * len(kw_paths)
        labels = [f"args{keystr(p)}" for p, _ in leaves_paths]
        labels += [f"keyword argument {keystr(p)[2:-2]}" for p, _ in kw_paths]
        where_v = f"{fname} of {describe_fun(fun)}"
        leaves = _plain_leaves(fname, fun, [x for _, x in leaves_paths], args) + [
            core.plain_array(x, where_v, labels[n_pos + i])
            if isinstance(x, np.ndarray) and not core.is_plain_array(x)
            else x
            for i, (_, x) in enumerate(kw_paths)
        ]
        leaves_paths += kw_paths
        is_key = [bool(p) and p[-1] is KEY_DATA for p, _ in leaves_paths]
        sizes: dict[str, int] = {}
        dims: list[int | None] = []
        for k, ((_path, x), ax) in enumerate(zip(leaves_paths, axes)):
            if core.int64_overflow(x):  # its aval (int64) could not describe it
                raise core.int64_overflow_error(where_v, x, f"for argument {labels[k]}")
            if ax is None:
                dims.append(None)
                continue
            where = labels[k]
            if not core.is_array_like(x):
                raise TypeError(
                    f"{fname}: expected an array at {where} mapped over "
                    f"axis {ax}, got {type(x).__name__}."
                )
            shape = core.get_aval(x).shape
            if is_key[k]:  # a key array: its axes, not the data's
                shape = shape[:-1]
            nd = len(shape)
            if not -nd <= ax < nd:
                raise ValueError(
                    f"{fname}: expected in_axes in [{-nd}, {nd}) for {where} of shape "
                    f"{shape}{' (a key array)' if is_key[k] else ''}, got {ax}"
                    + (" (keyword arguments are mapped over axis 0)." if k >= n_pos else ".")
                )
            ax %= nd
            dims.append(ax)
            sizes[where] = core.get_aval(x).shape[ax]
        distinct = set(sizes.values()) | ({axis_size} if axis_size is not None else set())
        if len(distinct) > 1:
            detail = ", ".join(f"{k} has size {v}" for k, v in sizes.items())
            if axis_size is not None:
                detail += f", axis_size={axis_size}"
            raise ValueError(f"{fname}: expected all mapped axes to have one size, got {detail}.")
        if not distinct:
            raise ValueError(
                f"{fname}: expected at least one mapped argument or axis_size, got "
                "in_axes mapping nothing. Pass axis_size=N."
            )
        size = distinct.pop()
        out_tree_box: list[Any] = []

        # Leaves that are not arrays and not mapped (a string, a callable) pass through
        # to fun as they are, as in JAX; the mapped function sees only the others.
        passed = [d is None and not core.is_array_like(x) for x, d in zip(leaves, dims)]

        def with_passed(traced: Sequence[Any]) -> list[Any]:
            it = iter(traced)
            return [x if p else next(it) for x, p in zip(leaves, passed)]

        def flat_fun(*traced: Any) -> list[Any]:
            flat = with_passed(traced)
            a = tree_unflatten(arg_tree, flat[:n_pos])
            kw = tree_unflatten(kw_tree, flat[n_pos:])
            out_leaves, out_tree = tree_flatten(core.call_user(fname, fun, a, kw))
            out_tree_box.append(out_tree)
            return out_leaves

        def run(flat_in: list[Any]) -> tuple[list[Any], Any]:
            outs, out_dims = batching.vmap_flat(
                flat_fun,
                size,
                [x for x, p in zip(flat_in, passed) if not p],
                [d for d, p in zip(dims, passed) if not p],
                origin=where_v,
                axis_name=axis_name,
            )
            out_tree = out_tree_box[-1]
            out_ax = (
                _axes_for(fname, out_axes, tree_unflatten(out_tree, [0] * len(outs)), "the output")
                if not isinstance(out_axes, (int, type(None)))
                else [out_axes] * len(outs)
            )
            # typed key outputs count axes over the key shape: only axes other than 0
            # and None depend on it
            out_key = (
                _key_flags(out_tree)
                if any(ax is not None and ax != 0 for ax in out_ax)
                else (False,) * len(outs)
            )
            final = []
            for o, d, ax, o_key in zip(outs, out_dims, out_ax, out_key):
                if ax is None:
                    if d is not None and fname == "pmap":  # the first example's
                        o, d = batching.bdim_at(o, d, size, 0)[0], None
                    if d is not None:
                        raise ValueError(
                            f"{fname}: expected an unbatched output for out_axes=None "
                            f"in {describe_fun(fun)}, got an output that depends on "
                            f"the mapped inputs."
                        )
                    final.append(o)
                    continue
                nd = core.get_aval(o).ndim + (d is None) - o_key
                if not -nd <= ax < nd:
                    raise ValueError(
                        f"{fname}: expected out_axes in [{-nd}, {nd}) for an output of "
                        f"{nd} dimensions (batch included), got {ax}."
                    )
                final.append(batching.bdim_at(o, d, size, ax % nd))
            return final, out_tree

        if _eager_cache.usable():  # eager: reuse the program of an earlier call
            dyn: list[Any] = []
            sig = _eager_cache.signature(leaves, dyn)
            key = None
            if sig is not None:
                key = (fname, tuple(dims), repr(out_axes), axis_name, size, arg_tree, kw_tree, sig)

            def body(ins: list[Any]) -> tuple[list[Any], Any]:
                it = iter(ins)
                return run([next(it) if _eager_cache.is_input(x) else x for x in leaves])

            final, out_tree = _eager_cache.call(fun, key, dyn, body, where_v)
        else:
            final, out_tree = run(leaves)
        return tree_unflatten(out_tree, [_output(o) for o in final])

    return vmapped
