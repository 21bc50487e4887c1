"""Leaf-by-leaf arithmetic over pytrees, fused by ``jit`` when it runs eagerly.

An optimizer's update is a few elementwise operations per parameter. Run eagerly, each
operation is a NumPy pass over the parameter with its own result: Adam makes a dozen
of them. :class:`LeafMap` runs such an update as one jitted call over the lists of
leaves instead, so each leaf's chain is one fused kernel (the way PyTorch's optimizers
run fused multi-tensor kernels). It does so only when every leaf is a concrete
``float32``/``float64`` array (or NumPy scalar); under a transform (``jit``, ``grad``,
``vmap``) or for other leaves it maps the same function op by op, so what is traced
never changes.

The jitted and the op-by-op map run the same per-leaf function: the same operations
in the same order, so the same bits (checked for every optimizer by
``tests/test_optim_fused.py``). The first calls of a signature run op by op while the
kernels compile in the background (``jit``'s tiered compile).

``config.fused_updates`` switches it (default on; ``FUNCTRACE_FUSED_UPDATES=0`` turns
it off). ``functrace.jit`` registers the compiler when it is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _config
from functrace.tree_util import tree_flatten, tree_unflatten

_switch = _config.Switch("fused_updates", "FUNCTRACE_FUSED_UPDATES")
_compiler: list[Callable[..., Any]] = []  # [jit] once functrace.jit is imported


def set_compiler(compiler: Callable[..., Any]) -> None:
    """Called by ``functrace.jit``: ``compiler(fun)`` returns the jitted ``fun``."""
    _compiler[:] = [compiler]


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fusable(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.floating)) and x.dtype in _FLOATS


def _scalar_ok(s: Any) -> bool:
    # Python numbers and concrete 0-d values; a tracer (a traced learning rate, say)
    # keeps the op-by-op map.
    return isinstance(s, (int, float, np.generic)) or (isinstance(s, np.ndarray) and s.ndim == 0)


class LeafMap:
    """``fn(*leaves, *scalars) -> tuple of n outputs``, mapped over the leaves of trees
    of one structure: ``LeafMap(fn, n)(trees, scalars)`` returns ``n`` trees.

    ``fn`` must be pure elementwise arithmetic on its leaves (the scalars are the
    values every leaf shares, such as a bias correction), with no Python branch on
    their values. The trees' structures must agree (callers check and name them).
    """

    __slots__ = ("_map", "_jitted")

    def __init__(self, fn: Callable[..., tuple[Any, ...]], n_out: int) -> None:
        def leaf_map(leaf_lists: Sequence[Sequence[Any]], scalars: Sequence[Any]) -> Any:
            outs = [fn(*leaves, *scalars) for leaves in zip(*leaf_lists)]
            return tuple([out[k] for out in outs] for k in range(n_out))

        leaf_map.__qualname__ = leaf_map.__name__ = getattr(fn, "__qualname__", "leaf_map")
        self._map = leaf_map
        self._jitted: Callable[..., Any] | None = None

    def __call__(self, trees: Sequence[Any], scalars: Sequence[Any] = ()) -> tuple[Any, ...]:
        flat = [tree_flatten(t) for t in trees]
        treedef = flat[0][1]
        leaf_lists = tuple(leaves for leaves, _ in flat)
        if (
            _switch.on
            and _compiler
            and leaf_lists[0]
            and all(all(map(_fusable, leaves)) for leaves in leaf_lists)
            and all(map(_scalar_ok, scalars))
        ):
            if self._jitted is None:
                self._jitted = _compiler[0](self._map)
            out = self._jitted(leaf_lists, tuple(scalars))
        else:
            out = self._map(leaf_lists, scalars)
        return tuple(tree_unflatten(treedef, leaves) for leaves in out)
