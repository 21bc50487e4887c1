"""Looking at parameter and gradient trees: paths, counts, statistics."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace.tree_util import keystr, tree_flatten_with_path, tree_leaves


def named_parameters(tree: Any) -> list[tuple[str, Any]]:
    """``(path, array)`` for every leaf, with paths like ``.layers[0].weight``."""
    leaves, _ = tree_flatten_with_path(tree)
    return [(keystr(p), x) for p, x in leaves]


def count_params(tree: Any) -> int:
    """The number of scalars in all array leaves."""
    return int(sum(np.size(x) for x in tree_leaves(tree)))


def grad_stats(grads: Any) -> dict[str, dict[str, float]]:
    """Per-leaf statistics of a gradient tree: ``{path: {mean, std, min, max, norm}}``
    (a gradient monitor as a pure function of the gradients)."""
    out: dict[str, dict[str, float]] = {}
    for path, g in named_parameters(grads):
        a = np.asarray(g, dtype=np.float64)
        out[path] = {
            "mean": float(a.mean()) if a.size else 0.0,
            "std": float(a.std()) if a.size else 0.0,
            "min": float(a.min()) if a.size else 0.0,
            "max": float(a.max()) if a.size else 0.0,
            "norm": float(np.sqrt(np.sum(a * a))),
        }
    return out
