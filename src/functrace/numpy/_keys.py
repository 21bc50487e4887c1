"""The ``functrace.numpy`` functions that JAX allows on typed key arrays
(``random.key``): shape and selection functions, which move whole keys. Each is
registered in ``_dispatch.key_functions`` for the function of the same name: a call
with a key array among its arguments, which NumPy and the traced path refuse, is
retried here, on the keys' uint32 data (axes counted over the key shape), and returns
a key array; other calls never come here. Arithmetic, reductions and other numeric
functions on keys stay ``TypeError``s (the key array refuses ``np.asarray``).
"""

from __future__ import annotations

from typing import Any

from functrace._prng import PRNGKeyArray, _axis
from functrace.numpy import _creation, _indexing, _joining, _shape
from functrace.numpy._dispatch import key_functions

__all__: list[str] = []


def _is_key(x: Any) -> bool:
    return type(x) is PRNGKeyArray


def _all_keys(name: str, xs: Any) -> list[PRNGKeyArray]:
    xs = list(xs)
    for x in xs:
        if not _is_key(x):
            got = getattr(x, "dtype", type(x).__name__)
            raise TypeError(
                f"{name}: expected key arrays only (or none), got key arrays with {got}. "
                f"Wrap raw keys with random.wrap_key_data first."
            )
    return xs


def _stack(arrays: Any, axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
    ks = _all_keys("stack", arrays)
    if not ks:
        raise ValueError("stack: expected at least one array, got none.")
    a = _axis("stack", axis, ks[0].ndim + 1)
    return PRNGKeyArray(_joining.stack([k._base for k in ks], axis=a))


def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None, **_: Any) -> Any:
    ks = _all_keys("concatenate", arrays)
    if not ks:
        raise ValueError("concatenate: expected at least one array, got none.")
    if axis is None:
        ks, axis = [k.ravel() for k in ks], 0
    if ks[0].ndim == 0:
        raise ValueError("concatenate: expected key arrays of at least one dimension, got 0-d.")
    a = _axis("concatenate", axis, ks[0].ndim)
    return PRNGKeyArray(_joining.concatenate([k._base for k in ks], axis=a))


def _where(condition: Any, x: Any = None, y: Any = None, /, **kwargs: Any) -> Any:
    if x is None or y is None or kwargs:
        raise TypeError(
            "where: expected where(condition, x, y) with key arrays x and y, got another "
            "form (keys are not conditions)."
        )
    kx, ky = _all_keys("where", (x, y))
    if _is_key(condition):
        raise TypeError("where: expected a boolean condition, got a key array.")
    cond = _shape.expand_dims(_creation.asarray(condition), -1)
    return PRNGKeyArray(_indexing.where(cond, kx._base, ky._base))


def _reshape(a: Any, shape: Any, /, order: str = "C") -> Any:
    return a.reshape(shape, order=order)


def _ravel(a: Any, order: Any = "C") -> Any:
    return a.ravel(order)


def _squeeze(a: Any, axis: Any = None) -> Any:
    return a.squeeze(axis)


def _transpose(a: Any, axes: Any = None) -> Any:
    return a.transpose(axes)


def _swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    return a.swapaxes(axis1, axis2)


def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    nd = a.ndim
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    src = tuple(_axis("moveaxis", s, nd) for s in src)
    dst = tuple(_axis("moveaxis", d, nd) for d in dst)
    return PRNGKeyArray(_shape.moveaxis(a._base, src, dst))


def _expand_dims(a: Any, axis: Any) -> Any:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    return PRNGKeyArray(
        _shape.expand_dims(a._base, tuple(_axis("expand_dims", x, nd) for x in axes))
    )


def _flip(m: Any, axis: Any = None) -> Any:
    nd = m.ndim
    if axis is None:
        axes: tuple[int, ...] = tuple(range(nd))
    else:
        axes = tuple(
            _axis("flip", x, nd) for x in (axis if isinstance(axis, (tuple, list)) else (axis,))
        )
    return PRNGKeyArray(_shape.flip(m._base, axes)) if axes else m


def _broadcast_to(array: Any, shape: Any) -> Any:
    shp = (shape,) if isinstance(shape, int) else tuple(shape)
    return PRNGKeyArray(_shape.broadcast_to(array._base, (*shp, 2)))


def _take(a: Any, indices: Any, axis: Any = None, mode: Any = None, fill_value: Any = None) -> Any:
    if mode is not None or fill_value is not None:
        raise TypeError("take: expected mode=None and fill_value=None for key arrays.")
    if _is_key(indices):
        raise TypeError("take: expected integer indices, got a key array.")
    return a.take(indices, axis)


def _asarray(obj: Any, dtype: Any = None, copy: Any = None) -> Any:
    if dtype is not None:
        raise TypeError(
            f"asarray: expected dtype=None for key arrays, got {dtype!r}; keys do not "
            f"convert (use random.key_data for their uint32 words)."
        )
    if _is_key(obj):
        return obj
    return _stack(obj)


def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return a.copy()


for _fn, _on_keys in (
    (_joining.stack, _stack),
    (_joining.concatenate, _concatenate),
    (_indexing.where, _where),
    (_shape.reshape, _reshape),
    (_shape.ravel, _ravel),
    (_shape.squeeze, _squeeze),
    (_shape.transpose, _transpose),
    (_shape.swapaxes, _swapaxes),
    (_shape.moveaxis, _moveaxis),
    (_shape.expand_dims, _expand_dims),
    (_shape.flip, _flip),
    (_shape.broadcast_to, _broadcast_to),
    (_indexing.take, _take),
    (_creation.copy, _copy),
):
    key_functions[_fn.traced] = _on_keys  # type: ignore[union-attr]
key_functions[_creation.asarray] = _asarray
