"""Typed PRNG key arrays: what ``functrace.random.key`` returns (JAX's ``PRNGKeyArray``).

A key array of shape ``s`` holds ``uint32[*s, 2]`` key data (Threefry's two words per
key) and presents only ``s``: ``k.shape``, indexing, ``reshape``, ``transpose`` and the
other shape methods count over the keys, never over the trailing words. Its dtype is
``dtypes.KEY_FRY`` (``key<fry>``). It is a pytree node with one child, the data, so
``jit``, ``vmap``, ``grad``, ``scan``, ``cond`` and the other transforms carry it as that
``uint32`` array and rebuild the key array around their results (``vmap`` counts
negative axes of a key array over its key shape). Arithmetic and ``np.asarray`` are
``TypeError``s naming ``random.key_data``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import numpy as np

from functrace import dtypes
from functrace._array import to_array
from functrace._tree_core import array_like_nodes
from functrace._tree_keys import GetAttrKey
from functrace._tree_nodes import register_pytree_with_keys
from functrace.core import Tracer

__all__ = ["KEY_DATA", "PRNGKeyArray"]


def _shape_of(data: Any) -> tuple[int, ...]:
    if isinstance(data, Tracer):
        return tuple(data.aval.shape)
    return tuple(np.shape(data))


def _axis(name: str, ax: Any, nd: int) -> int:
    """``ax`` as a non-negative axis of ``nd`` key dimensions (a clear error otherwise)."""
    try:
        a = operator.index(ax)
    except TypeError:
        raise TypeError(f"{name}: expected an integer axis, got {ax!r}.") from None
    if not -nd <= a < nd:
        raise ValueError(
            f"{name}: expected an axis in [{-nd}, {nd}) for a key array of {nd} "
            f"dimensions, got {a}."
        )
    return a % nd


def _no_op(op: str) -> Any:
    def method(self: PRNGKeyArray, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{op}: expected numeric arrays, got a key array of dtype key<fry> and shape "
            f"{self.shape}. Keys do not support arithmetic: use random.split or "
            f"random.fold_in for new keys, or random.key_data(k) for the uint32 words."
        )

    method.__name__ = op
    method.__doc__ = f"A TypeError: key arrays have no {op}."
    return method


class PRNGKeyArray:
    """An array of typed PRNG keys (``random.key(0)``, ``random.split(k)`` of one): shape
    and indexing count keys, not their uint32 words; ``random.key_data(k)`` gives the
    words (``uint32[*k.shape, 2]``) and ``random.wrap_key_data`` wraps them back.

    >>> import functrace.random as random
    >>> ks = random.split(random.key(0), 3)
    >>> ks.shape, ks.dtype, ks[1].shape
    ((3,), key<fry>, ())
    """

    __slots__ = ("_base",)
    _base: Any  # uint32[*shape, 2]: an Array, or a tracer under a transform
    __array_priority__ = 1000.0  # above Arrays and tracers: their operators defer here
    __array_ufunc__ = None  # NumPy's ufuncs defer to the operators below (TypeErrors)
    __hash__ = None  # type: ignore[assignment]  # unhashable, as JAX's

    def __init__(self, data: Any) -> None:
        self._base = data if isinstance(data, Tracer) else to_array(data)

    # -- what an array has -------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the key array (the data's shape without its trailing 2)."""
        return _shape_of(self._base)[:-1]

    @property
    def ndim(self) -> int:
        """The number of key dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of keys."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> dtypes.KeyDtype:
        """``key<fry>`` (``dtypes.KEY_FRY``): ``issubdtype(k.dtype, dtypes.prng_key)``."""
        return dtypes.KEY_FRY

    @property
    def itemsize(self) -> int:
        """8: the bytes of one key's data (two uint32 words)."""
        return 8

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d key array)")
        return self.shape[0]

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        if isinstance(idx, PRNGKeyArray):
            raise TypeError("PRNGKeyArray.__getitem__: expected an integer index, got keys.")
        tup = idx if type(idx) is tuple else (idx,)
        n_used = sum(1 for i in tup if i is not None and i is not Ellipsis)
        if not any(i is Ellipsis for i in tup) and n_used > self.ndim:
            raise IndexError(
                f"PRNGKeyArray.__getitem__: expected at most {self.ndim} indices for a key "
                f"array of shape {self.shape}, got {n_used}."
            )
        return PRNGKeyArray(self._base[(*tup, slice(None))])

    def __bool__(self) -> bool:
        raise TypeError(
            f"bool: expected a numeric array, got a key array of shape {self.shape}; "
            f"compare keys with == or use random.key_data(k)."
        )

    # -- shape methods ---------------------------------------------------------
    def reshape(self, *shape: Any, order: str = "C") -> PRNGKeyArray:
        """The keys in a new shape (``-1`` allowed), as ``jax.Array.reshape``."""
        if order != "C":
            raise ValueError(f"PRNGKeyArray.reshape: expected order='C', got {order!r}.")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return PRNGKeyArray(self._base.reshape((*(int(d) for d in shape), 2)))

    def ravel(self, order: str = "C") -> PRNGKeyArray:
        """The keys as one axis."""
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C") -> PRNGKeyArray:
        """The keys as one axis (as :meth:`ravel`)."""
        return self.reshape(-1, order=order)

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        """The keys without the given axes of length 1 (all of them for ``None``)."""
        shape = self.shape
        if axis is None:
            axes = tuple(i for i, d in enumerate(shape) if d == 1)
        else:
            axes = tuple(
                _axis("PRNGKeyArray.squeeze", a, len(shape))
                for a in (axis if isinstance(axis, (tuple, list)) else (axis,))
            )
            if any(shape[a] != 1 for a in axes):
                raise ValueError(
                    f"PRNGKeyArray.squeeze: expected axes of length 1, got axis {axis} "
                    f"of shape {shape}."
                )
        keep = tuple(d for i, d in enumerate(shape) if i not in axes)
        return PRNGKeyArray(self._base.reshape((*keep, 2)))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        """The keys with their axes permuted (reversed for no ``axes``)."""
        nd = self.ndim
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = () if axes[0] is None else tuple(axes[0])
        perm = (
            tuple(range(nd))[::-1]
            if not axes
            else tuple(_axis("PRNGKeyArray.transpose", a, nd) for a in axes)
        )
        if sorted(perm) != list(range(nd)):
            raise ValueError(
                f"PRNGKeyArray.transpose: expected a permutation of {nd} axes, got {axes}."
            )
        return PRNGKeyArray(self._base.transpose((*perm, nd)))

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802 - NumPy's name
        """The keys with their axes reversed."""
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        """The keys with two axes exchanged."""
        nd = self.ndim
        a = _axis("PRNGKeyArray.swapaxes", axis1, nd)
        b = _axis("PRNGKeyArray.swapaxes", axis2, nd)
        perm = list(range(nd))
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def take(self, indices: Any, axis: Any = None) -> PRNGKeyArray:
        """The keys at ``indices`` along ``axis`` (of the flattened keys for ``None``)."""
        if axis is None:
            return self.ravel().take(indices, 0)
        a = _axis("PRNGKeyArray.take", axis, self.ndim)
        return self[(slice(None),) * a + (indices,)]

    def copy(self) -> PRNGKeyArray:
        """The same keys (key arrays are immutable)."""
        return PRNGKeyArray(self._base)

    def __copy__(self) -> PRNGKeyArray:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> PRNGKeyArray:
        return self.copy()

    @property
    def at(self) -> _KeyAt:
        """JAX's functional updates of whole keys: ``keys.at[i].set(key)`` (and
        ``.get()``); the other updates (``add``...) are numeric, so not on keys."""
        return _KeyAt(self)

    def block_until_ready(self) -> PRNGKeyArray:
        """Return ``self``: eager results are computed when they are returned."""
        return self

    # -- comparison, and the errors of everything numeric ----------------------
    def _same(self, other: Any, op: str) -> Any:
        if not isinstance(other, PRNGKeyArray):
            got = getattr(other, "dtype", type(other).__name__)
            raise TypeError(
                f"{op}: expected two key arrays, got key<fry> and {got}. Compare "
                f"random.key_data(k) with raw keys."
            )
        a, b = self._base, other._base
        return (a[..., 0] == b[..., 0]) & (a[..., 1] == b[..., 1])

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._same(other, "equal")

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return ~self._same(other, "not_equal")

    __add__ = __radd__ = _no_op("add")
    __sub__ = __rsub__ = _no_op("sub")
    __mul__ = __rmul__ = _no_op("mul")
    __truediv__ = __rtruediv__ = _no_op("div")
    __floordiv__ = __rfloordiv__ = _no_op("floor_divide")
    __mod__ = __rmod__ = _no_op("rem")
    __pow__ = __rpow__ = _no_op("pow")
    __matmul__ = __rmatmul__ = _no_op("matmul")
    __and__ = __rand__ = _no_op("and")
    __or__ = __ror__ = _no_op("or")
    __xor__ = __rxor__ = _no_op("xor")
    __lshift__ = __rlshift__ = _no_op("shift_left")
    __rshift__ = __rrshift__ = _no_op("shift_right")
    __lt__ = _no_op("lt")
    __le__ = _no_op("le")
    __gt__ = _no_op("gt")
    __ge__ = _no_op("ge")
    __neg__ = _no_op("neg")
    __pos__ = _no_op("pos")
    __abs__ = _no_op("abs")
    __invert__ = _no_op("not")
    __int__ = _no_op("int")
    __float__ = _no_op("float")
    __complex__ = _no_op("complex")
    __index__ = _no_op("index")
    astype = _no_op("astype")
    item = _no_op("item")
    sum = _no_op("sum")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            f"np.asarray: a key array (dtype key<fry>, shape {self.shape}) has no NumPy "
            f"form; use functrace.random.key_data(k) for its uint32 words."
        )

    def __repr__(self) -> str:
        d = self._base
        if not isinstance(d, np.ndarray):  # a tracer, an abstract value (eval_shape)
            return f"PRNGKeyArray({self.shape}, dtype=key<fry>) overlaying {d!r}"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(d)}"

    __str__ = __repr__


class _KeyAt:
    __slots__ = ("keys",)

    def __init__(self, keys: PRNGKeyArray) -> None:
        self.keys = keys

    def __getitem__(self, idx: Any) -> _KeyAtIndex:
        return _KeyAtIndex(self.keys, idx)


class _KeyAtIndex:
    """``keys.at[idx]``: ``set`` writes whole keys (the index counts keys)."""

    __slots__ = ("keys", "idx")

    def __init__(self, keys: PRNGKeyArray, idx: Any) -> None:
        self.keys, self.idx = keys, idx

    def _words(self) -> tuple[Any, ...]:
        tup = self.idx if type(self.idx) is tuple else (self.idx,)
        if any(type(i) is PRNGKeyArray for i in tup):
            raise TypeError("PRNGKeyArray.at: expected integer indices, got a key array.")
        return (*tup, slice(None))

    def get(self, **kwargs: Any) -> PRNGKeyArray:
        """The keys at the index (as ``keys[idx]``)."""
        return PRNGKeyArray(self.keys._base.at[self._words()].get(**kwargs))

    def set(self, values: Any, **kwargs: Any) -> PRNGKeyArray:
        """The key array with ``values`` (keys) written at the index."""
        if type(values) is not PRNGKeyArray:
            got = getattr(values, "dtype", type(values).__name__)
            raise TypeError(
                f"PRNGKeyArray.at[...].set: expected keys (a key array), got {got}; "
                f"wrap raw keys with random.wrap_key_data."
            )
        return PRNGKeyArray(self.keys._base.at[self._words()].set(values._base, **kwargs))

    def __getattr__(self, name: str) -> Any:
        if name in ("add", "multiply", "mul", "divide", "power", "min", "max", "apply"):
            raise TypeError(
                f"PRNGKeyArray.at[...].{name}: keys have no arithmetic; use .set with "
                f"new keys (random.split, random.fold_in)."
            )
        raise AttributeError(name)


array_like_nodes.add(PRNGKeyArray)
KEY_DATA = GetAttrKey("_base")
"""The path entry of a key array's data (``path[-1] is KEY_DATA`` marks key leaves)."""

register_pytree_with_keys(
    PRNGKeyArray,
    lambda k: ([(KEY_DATA, k._base)], None),
    lambda _aux, children: _unflatten(*children),
    lambda k: ((k._base,), None),
)


def _unflatten(data: Any) -> Any:
    """A key array around ``data``: a transform's result (key data: uint32 with a last
    axis of 2, an array or tracer) or a placeholder of tree code (None, an int axis),
    kept as it is. Anything else is returned itself: ``tree_map(f, keys)`` gives ``f``'s
    results where ``f`` maps keys to other values (a sample per key, as in JAX)."""
    if data is not None and type(data) is not int:
        shape, dtype = getattr(data, "shape", None), getattr(data, "dtype", None)
        if dtype != np.uint32 or not shape or shape[-1] != 2:
            return data
    k = object.__new__(PRNGKeyArray)
    k._base = to_array(data) if isinstance(data, np.ndarray) else data
    return k
