"""``functrace.experimental.shard_map``: JAX's older spelling of
:func:`functrace.shard_map` (``from jax.experimental.shard_map import shard_map``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from functrace import sharding as _sharding

__all__ = ["shard_map"]


def shard_map(
    f: Callable[..., Any],
    mesh: Any,
    in_specs: Any,
    out_specs: Any,
    check_rep: bool = True,
    auto: Any = frozenset(),
) -> Callable[..., Any]:
    """``jax.experimental.shard_map.shard_map``: :func:`functrace.shard_map` with
    ``check_rep`` for ``check_vma`` and ``auto`` the mesh axes ``f`` does not handle."""
    names = frozenset(a for a in getattr(mesh, "axis_names", ()) if a not in frozenset(auto))
    return _sharding.shard_map(  # type: ignore[no-any-return]
        f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=names,
        check_vma=check_rep,
    )  # fmt: skip
