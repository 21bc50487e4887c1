"""The ``Module`` base class: dataclass pytrees with static fields, immutable after
``__init__``; and the ``rng`` argument every layer's initialisation takes."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from functrace import core
from functrace._prng import PRNGKeyArray
from functrace.tree_util import register_dataclass


def field(*, static: bool = False, **kwargs: Any) -> Any:
    """A dataclass field; ``static=True`` makes it part of the tree structure (not a leaf)."""
    metadata = dict(kwargs.pop("metadata", {}) or {})
    metadata["static"] = static
    return dataclasses.field(metadata=metadata, **kwargs)


_FROZEN_MSG = (
    "{cls}: expected no attribute assignment after construction, got {name!r} = .... "
    "Modules are immutable pytrees: make a new one with module.replace({name}=value) or "
    "functrace.tree_util.tree_map."
)


class Module:
    """Base class: subclasses become dataclasses and pytrees automatically (registered
    with ``register_dataclass``: ``field(static=True)`` fields are meta fields, the others
    children; a rebuilt module skips ``__init__``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        user_init = cls.__dict__.get("__init__")
        dataclasses.dataclass(cls, eq=False, repr=False)  # keeps a user-written __init__
        init = cls.__init__

        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            object.__setattr__(self, "_ft_initializing", True)
            try:
                init(self, *args, **kw)
            finally:
                object.__delattr__(self, "_ft_initializing")

        __init__.__doc__ = (user_init or init).__doc__
        __init__.__wrapped__ = init  # type: ignore[attr-defined]
        cls.__init__ = __init__  # type: ignore[method-assign]
        cls._ft_fields = None  # type: ignore[attr-defined]
        register_dataclass(cls, constructor=functools.partial(_from_fields, cls))

    def __setattr__(self, name: str, value: Any) -> None:
        if "_ft_initializing" not in self.__dict__:
            raise AttributeError(_FROZEN_MSG.format(cls=type(self).__name__, name=name))
        object.__setattr__(self, name, value)

    @classmethod
    def _fields(cls) -> tuple[tuple[str, ...], tuple[str, ...]]:
        cached = cls.__dict__.get("_ft_fields")
        if cached is None:
            fs = dataclasses.fields(cls)  # type: ignore[arg-type]
            data = tuple(f.name for f in fs if not f.metadata.get("static", False))
            static = tuple(f.name for f in fs if f.metadata.get("static", False))
            cached = (data, static)
            cls._ft_fields = cached  # type: ignore[attr-defined]
        return cached

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (``__init__`` is not called again)."""
        data, static = self._fields()
        unknown = set(changes) - set(data) - set(static)
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.replace: expected field names from "
                f"{list(data + static)}, got {sorted(unknown)}."
            )
        obj = object.__new__(type(self))
        for n in (*data, *static):
            object.__setattr__(obj, n, changes.get(n, getattr(self, n)))
        return obj

    def __repr__(self) -> str:
        data, static = self._fields()
        parts = [f"{n}={_short(getattr(self, n, None))}" for n in (*data, *static)]
        return f"{type(self).__name__}({', '.join(parts)})"


def _from_fields(cls: type, **fields: Any) -> Any:
    """A module of class ``cls`` with the given fields, ``__init__`` not called."""
    obj: Any = object.__new__(cls)
    for n, v in fields.items():
        object.__setattr__(obj, n, v)
    return obj


def _short(v: Any) -> str:
    if isinstance(v, (np.ndarray, core.Tracer)):
        return core.get_aval(v).str_short()
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_short(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


def _rng(rng: Any) -> np.random.Generator:
    """The NumPy generator layers draw their initial values from: ``rng`` itself, one
    seeded with an int, or with the two words of a PRNG key (``random.key`` or
    ``PRNGKey``, so JAX-style code passing keys works; the values are functrace's
    PyTorch-style inits, not Equinox's)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        return np.random.default_rng(int(rng))
    if type(rng) is PRNGKeyArray:
        if rng.shape != ():
            raise TypeError(
                f"nn: expected rng as a single PRNG key, got a key array of shape {rng.shape}."
            )
        rng = rng._base
    if isinstance(rng, np.ndarray) and rng.shape == (2,):
        words = np.asarray(rng)
        if words.dtype == np.uint32:
            return np.random.default_rng([int(w) for w in words])
    raise TypeError(
        f"nn: expected rng as an int seed, a numpy.random.Generator or a single PRNG key, "
        f"got {core.describe_value(rng)}."
    )
