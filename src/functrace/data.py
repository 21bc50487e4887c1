"""Data: mini-batches and small datasets that need no network.

>>> import numpy as np
>>> from functrace import data
>>> [x.tolist() for (x,) in data.batches(np.arange(5), batch_size=2, shuffle=False)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from typing import Any

import numpy as np


def _rng(rng: Any) -> np.random.Generator:
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(
        f"data: expected rng as None, an int seed or a numpy.random.Generator, "
        f"got {type(rng).__name__}."
    )


def batches(
    *arrays: Any, batch_size: int, shuffle: bool = True, rng: Any = None, drop_last: bool = False
) -> Iterator[tuple[np.ndarray, ...]]:
    """Yield tuples of aligned mini-batches (first axis), optionally shuffled.

    ``rng`` (int seed or Generator) makes the order reproducible; passing the same
    Generator across epochs gives a new order each epoch.
    """
    if not arrays:
        raise ValueError("batches: expected at least one array, got none.")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batches: expected batch_size as an int >= 1, got {batch_size!r}.")
    arrays_np = [np.asarray(a) for a in arrays]
    n = len(arrays_np[0])
    for i, a in enumerate(arrays_np):
        if a.ndim == 0 or len(a) != n:
            raise ValueError(
                f"batches: expected arrays of equal length along axis 0, got "
                f"{n} for array 0 and shape {a.shape} for array {i}."
            )
    order = _rng(rng).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start : start + batch_size]
        yield tuple(a[idx] for a in arrays_np)


def load_digits(
    *, normalize: bool = True, split: float | None = 0.2, rng: Any = 0, dtype: Any = np.float32
) -> Any:
    """The 8x8 handwritten digits (1797 images, 10 classes), shipped with functrace.

    Returns ``(X_train, y_train, X_test, y_test)`` with a stratification-free random
    split of fraction ``split`` (or ``(X, y)`` when ``split`` is None). ``X`` has shape
    (n, 64), scaled to [0, 1] when ``normalize``; ``y`` holds int64 labels 0..9.
    Source and licence (CC BY 4.0): ``functrace/datasets/LICENSE-digits.txt``.
    """
    path = os.path.join(os.path.dirname(__file__), "datasets", "digits.npz")
    with np.load(path) as f:
        X = f["images"].reshape(-1, 64).astype(dtype)
        y = f["labels"].astype(np.int64)
    if normalize:
        X = X / dtype(16.0)
    if split is None:
        return X, y
    if not 0.0 < split < 1.0:
        raise ValueError(f"load_digits: expected split in (0, 1) or None, got {split!r}.")
    order = _rng(rng).permutation(len(X))
    n_test = int(round(len(X) * split))
    test, train = order[:n_test], order[n_test:]
    return X[train], y[train], X[test], y[test]


TEXTS = ("sonnets",)


def load_text(name: str = "sonnets") -> str:
    """A small public-domain text shipped with functrace, as one ``str``.

    ``"sonnets"``: Shakespeare's 154 sonnets (1609) as transcribed by Project Gutenberg
    (eBook #1041), 96,214 characters of UTF-8 text with 64 distinct characters (the
    sonnet numbers as Roman numerals on lines of their own, typographic quotes kept).
    A corpus for character-level language models. Source and public-domain status:
    ``functrace/datasets/LICENSE-sonnets.txt``.

    >>> from functrace import data
    >>> data.load_text("sonnets")[:11]
    'THE SONNETS'
    """
    if not isinstance(name, str) or name not in TEXTS:
        raise ValueError(
            f"load_text: expected a text name, one of {', '.join(map(repr, TEXTS))}, got {name!r}."
        )
    path = os.path.join(os.path.dirname(__file__), "datasets", f"{name}.txt.gz")
    with gzip.open(path, "rb") as f:
        return f.read().decode("utf-8")


def make_regression_line(
    n: int = 100,
    *,
    slope: float = 2.0,
    intercept: float = 1.0,
    noise: float = 0.1,
    rng: Any = 0,
    dtype: Any = np.float32,
) -> tuple[np.ndarray, np.ndarray]:
    """``y = slope * x + intercept + noise`` with x in [0, 1); shapes (n, 1) and (n, 1)."""
    gen = _rng(rng)
    x = gen.random((n, 1))
    y = slope * x + intercept + noise * gen.standard_normal((n, 1))
    return x.astype(dtype), y.astype(dtype)


def make_spirals(
    n_per_class: int = 100,
    n_classes: int = 3,
    *,
    noise: float = 0.2,
    rng: Any = 0,
    dtype: Any = np.float32,
) -> tuple[np.ndarray, np.ndarray]:
    """Interleaved 2-D spirals (a classic non-linearly-separable problem)."""
    gen = _rng(rng)
    X, y = [], []
    for c in range(n_classes):
        r = np.linspace(0.0, 1.0, n_per_class)
        t = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + noise * gen.standard_normal(
            n_per_class
        )
        X.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        y.append(np.full(n_per_class, c))
    return np.concatenate(X).astype(dtype), np.concatenate(y).astype(np.int64)


__all__ = ["TEXTS", "batches", "load_digits", "load_text", "make_regression_line", "make_spirals"]
