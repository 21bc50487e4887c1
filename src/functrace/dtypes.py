"""Dtypes, conversions and NumPy 2 type promotion with weak Python scalars.

Python scalars (``2``, ``2.0``) are *weak*: they take the dtype of the array
they meet, so ``float32_array * 2.0`` stays float32, exactly as in NumPy 2
(NEP 50). A value is weak only while every value it was computed from was weak.

Conversions (:func:`convert`) follow JAX (XLA on CPU), not NumPy, where they differ:
a float converted to an integer dtype is truncated toward zero and *saturates*, NaN
giving 0, +inf and values above the range the largest integer, -inf and values below
it the smallest (0 for unsigned dtypes), where NumPy gives platform-dependent values.
Eager ``convert_element_type`` and ``astype`` call :func:`convert`; ``jit``'s kernels
compute the same bits from :func:`float_to_int_limits` (both kernel compilers).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np

# The tangent type of integer and boolean values (as in JAX): a dtype with no data.
float0 = np.dtype([("float0", np.void, 0)])

_SHORT = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
}

# The stand-in values np.result_type treats as weak (Python scalars).
_WEAK_PROXY = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def short_name(dtype: np.dtype) -> str:
    """Short dtype name used in the IR text (``f64``, ``i32``, ``bool``)."""
    name = _short_names.get(dtype)
    if name is None:
        # np.dtype.name is slow (~10 us): printing a jaxpr asks it thousands of times
        name = "float0" if dtype == float0 else _SHORT.get(dtype.name, dtype.name)
        if len(_short_names) < 256:
            _short_names[dtype] = name
    return name


_short_names: dict[np.dtype, str] = {}


def python_scalar_dtype(x: object) -> np.dtype:
    """The dtype NumPy gives a Python scalar on its own."""
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, complex):
        return np.dtype(np.complex128)
    raise TypeError(f"python_scalar_dtype: expected a Python scalar, got {type(x).__name__}.")


@lru_cache(maxsize=4096)
def promote(*dtype_weak: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Result dtype and weakness of combining ``(dtype, weak)`` pairs (NumPy 2 rules)."""
    if all(w for _, w in dtype_weak):
        dtype = np.result_type(*[d for d, _ in dtype_weak])
        return dtype, True
    args = [_WEAK_PROXY[d.kind] if w else d for d, w in dtype_weak]
    return np.result_type(*args), False


def is_float(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is a real floating dtype."""
    return dtype.kind == "f"


def is_inexact(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is floating or complex."""
    return dtype.kind in "fc"


def is_integer(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is a signed or unsigned integer dtype."""
    return dtype.kind in "iu"


def is_bool(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is ``bool``."""
    return dtype.kind == "b"


def is_differentiable(dtype: np.dtype) -> bool:
    """Whether values of ``dtype`` carry real-valued tangents."""
    return dtype.kind in "fc"


def tangent_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a tangent of a value of ``dtype`` (float0 for ints and bools)."""
    return dtype if dtype.kind in "fc" else float0


def to_inexact(dtype: np.dtype) -> np.dtype:
    """The float dtype NumPy computes ``sin``/``mean``/``/`` in for ``dtype``."""
    if dtype.kind in "fc":
        return dtype
    return np.dtype(np.float64)


@lru_cache(maxsize=64)
def float_to_int_limits(dtype: np.dtype) -> tuple[float, float, int, int]:
    """``(low, high, min, max)`` of a float-to-``dtype`` (an integer dtype) conversion:
    a float ``x`` with ``x >= high`` converts to ``max``, one with ``x <= low`` (signed)
    or ``x < low`` (unsigned, ``low = 0.0``) to ``min``, NaN to 0, and every other
    value to ``trunc(x)``, which then fits. ``high`` and ``low`` are powers of two, exact
    in every float dtype with the range to hold them."""
    info = np.iinfo(dtype)
    bits = 8 * np.dtype(dtype).itemsize
    if info.min == 0:
        return 0.0, float(2**bits), 0, int(info.max)
    return -float(2 ** (bits - 1)), float(2 ** (bits - 1)), int(info.min), int(info.max)


def convert(x: object, dtype: object) -> object:
    """``x`` (a NumPy array or scalar, or a Python scalar) converted to ``dtype`` as
    ``jax.lax.convert_element_type`` converts it on CPU: a complex value loses its
    imaginary part (except to complex), ``bool`` is ``x != 0`` (NaN is True), integers
    wrap, and floats to integers saturate (NaN: 0; see the module's docstring). An
    ``ndarray`` gives an ``ndarray`` (``x`` itself when nothing changes), anything else
    a NumPy scalar."""
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    is_array = isinstance(x, np.ndarray)
    a = x if is_array else np.asarray(x)
    assert isinstance(a, np.ndarray)
    if a.dtype.kind == "c" and dt.kind != "c":
        a = a.real
    if dt.kind == "b":
        out = np.not_equal(a, 0)
    elif dt.kind in "iu" and a.dtype.kind == "f":
        out = _float_to_int(a, dt)
    else:
        out = a.astype(dt, copy=False)
    return out if is_array else out[()]


# -- the names of ``jax.dtypes`` ---------------------------------------------------

finfo = np.finfo
iinfo = np.iinfo


def issubdtype(arg1: object, arg2: object) -> bool:
    """``numpy.issubdtype``, also for the typed-key dtype (``random.key(0).dtype``,
    ``key<fry>``): it is a subdtype of :class:`prng_key`, :class:`extended` and of
    itself, and of nothing numeric, as in JAX."""
    k1, k2 = isinstance(arg1, KeyDtype), isinstance(arg2, KeyDtype)
    if k1 or k2:
        if k2:
            return k1
        return isinstance(arg2, type) and issubclass(prng_key, arg2)
    return bool(np.issubdtype(arg1, arg2))  # type: ignore[arg-type]


def canonicalize_dtype(dtype: object, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype arrays of ``dtype`` get (``jax.dtypes.canonicalize_dtype``): with
    functrace's 64-bit types always on, ``dtype`` itself as a NumPy dtype (JAX gives
    float32 for float64 while ``jax_enable_x64`` is off). ``allow_extended_dtype`` is
    accepted (functrace has no extended dtypes).

    >>> canonicalize_dtype("float64"), canonicalize_dtype(int)
    (dtype('float64'), dtype('int64'))
    """
    try:
        return np.dtype(dtype)  # type: ignore[call-overload,no-any-return]
    except TypeError:
        raise TypeError(
            f"canonicalize_dtype: expected a dtype, a type or a dtype name, got "
            f"{type(dtype).__name__} {dtype!r}."
        ) from None


def scalar_type_of(x: object) -> type:
    """The Python scalar type of ``x``'s dtype: ``bool``, ``int`` (signed or unsigned
    integers), ``float`` or ``complex`` (``jax.dtypes.scalar_type_of``).

    >>> import numpy as np
    >>> scalar_type_of(np.float32(1.0)), scalar_type_of(np.uint8(3))
    (<class 'float'>, <class 'int'>)
    """
    dt = python_scalar_dtype(x) if type(x) in (bool, int, float, complex) else None
    if dt is None:
        dt = getattr(x, "dtype", None)
        if not isinstance(dt, np.dtype):
            raise TypeError(
                f"scalar_type_of: expected an array or a scalar, got {type(x).__name__}."
            )
    kinds: dict[str, type] = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
    if dt.kind not in kinds:
        raise TypeError(f"scalar_type_of: expected a numeric or boolean dtype, got {dt}.")
    return kinds[dt.kind]


def itemsize_bits(dtype: object) -> int:
    """Bits per element of ``dtype`` (``jax.dtypes.itemsize_bits``; bool is 8).

    >>> itemsize_bits("float16"), itemsize_bits(bool)
    (16, 8)
    """
    return canonicalize_dtype(dtype).itemsize * 8


class TypePromotionError(ValueError):
    """Dtypes that have no common dtype were combined (``jax.dtypes.TypePromotionError``,
    a ``ValueError`` as in JAX): raised by :func:`result_type` for dtypes NumPy cannot
    combine either, and under ``numpy_dtype_promotion("strict")`` wherever operands of
    different dtypes would be promoted implicitly (see :func:`check_promotion`)."""


# -- config.numpy_dtype_promotion ---------------------------------------------------
#
# As in JAX, ``config.update`` sets the process-wide mode and the context manager
# ``functrace.numpy_dtype_promotion`` sets the calling thread's mode for a block.
# ``promotion.maybe_strict`` is True while any of them says "strict": it is the one
# attribute the promoting functions read on their hot paths; only then do they call
# :func:`check_promotion`, which looks at the calling thread's own mode.


class _Promotion:
    """The state of ``config.numpy_dtype_promotion``: ``mode``, the process-wide value;
    ``blocks``, how many strict thread blocks are open; ``maybe_strict``, whether any
    thread may promote strictly (the flag the promoting functions read); ``listeners``,
    called when ``maybe_strict`` changes."""

    __slots__ = ("maybe_strict", "mode", "blocks", "listeners")

    def __init__(self) -> None:
        self.maybe_strict = False
        self.mode = "standard"  # the process-wide mode (config.update)
        self.blocks = 0  # thread blocks of "strict" open in any thread
        # called when maybe_strict changes (``functrace.jit`` switches its call path)
        self.listeners: list[Callable[[], None]] = []

    def refresh(self) -> None:
        was = self.maybe_strict
        self.maybe_strict = self.mode == "strict" or self.blocks > 0
        if self.maybe_strict != was:
            for fn in self.listeners:
                fn()


promotion = _Promotion()
"""The state of ``config.numpy_dtype_promotion`` (set it through ``functrace.config``
or ``functrace.numpy_dtype_promotion``)."""


class _ThreadMode(threading.local):
    mode: str | None = None  # the calling thread's block, if any
    # whether the running promoting function was called by the user's code: functrace's
    # own functions combine dtypes internally (on purpose), which strict mode allows
    user: bool = True


_thread = _ThreadMode()

# Modules that only pass a call on (operators and methods of tracers and Arrays, the
# NumPy dispatch, the joining functions built on ``concatenate``): whose call it is is
# decided by the frame that called them.
_PASS_THROUGH = frozenset(
    (
        "functrace.numpy._dispatch",
        "functrace.numpy._tracer_methods",
        "functrace.numpy._joining",
        "functrace._array",
    )
)


_NOT_USER = frozenset(("functrace", "numpy"))


def from_user(up: int = 1) -> bool:
    """Whether the function ``up`` frames above the caller of this one was called by
    the user's code, not by functrace's own or NumPy's (``numpy.testing`` subtracting
    Arrays: JAX's arrays are converted to NumPy's there). Frames of the operator and
    dispatch modules pass the question on to their callers; a transform calling the
    user's function (``core.call_user``) counts as the user's code: ``vmap(fnp.maximum)``."""
    frame: types.FrameType | None = sys._getframe(up + 1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name not in _PASS_THROUGH:
            if name == "functrace.core" and frame.f_code.co_name == "call_user":
                return True
            return not name.startswith(("functrace.", "numpy.")) and name not in _NOT_USER
        frame = frame.f_back
    return True


def enter_call(up: int = 1) -> bool:
    """Note, for :func:`check_promotion`, whether the promoting function ``up`` frames
    above the caller was called by the user's code; returns the previous note, for
    :func:`exit_call`. Called only while ``promotion.maybe_strict``."""
    prev = _thread.user
    _thread.user = from_user(up + 1)
    return prev


def exit_call(prev: bool) -> None:
    """Restore the note :func:`enter_call` replaced."""
    _thread.user = prev


def promotion_mode() -> str:
    """The calling thread's ``numpy_dtype_promotion``: ``"standard"`` or ``"strict"``
    (its innermost ``numpy_dtype_promotion`` block, else the process-wide value)."""
    return _thread.mode or promotion.mode


def set_promotion_mode(mode: str) -> None:
    """Set the process-wide ``numpy_dtype_promotion`` (``config.update``): ``mode`` is
    ``"standard"`` or ``"strict"``, already validated."""
    promotion.mode = mode
    promotion.refresh()


@contextlib.contextmanager
def thread_promotion_mode(mode: str) -> Iterator[None]:
    """The calling thread's ``numpy_dtype_promotion`` is ``mode`` for the block (other
    threads keep theirs), restored on exit."""
    prev = _thread.mode
    strict = mode == "strict"
    _thread.mode = mode
    if strict:
        promotion.blocks += 1  # (under the GIL; a lost update only costs a check)
        promotion.refresh()
    try:
        yield
    finally:
        _thread.mode = prev
        if strict:
            promotion.blocks -= 1
            promotion.refresh()


_STRICT_RANK = {"i": 0, "u": 0, "f": 1, "c": 2}  # weak int <= weak float <= weak complex
_KIND_NAME = {"i": "int", "u": "int", "f": "float", "c": "complex"}


def _strict_node(d: np.dtype, weak: bool) -> object:
    """The node of JAX's strict lattice for ``(d, weak)``: a weak kind or a dtype."""
    return _KIND_NAME[d.kind] if weak and d.kind in _STRICT_RANK else d


@lru_cache(maxsize=1024)
def _strict_allows(keys: tuple[tuple[np.dtype, bool], ...]) -> bool:
    strong = {d for d, w in keys if not (w and d.kind in _STRICT_RANK)}
    if len(strong) > 1:
        return False
    weak_kinds = [d.kind for d, w in keys if w and d.kind in _STRICT_RANK]
    if not strong or not weak_kinds:
        return True  # one dtype, or weak values only (the widest weak kind)
    (d,) = strong
    if d.kind not in _STRICT_RANK:
        return False  # bool takes no weak scalar
    # a weak int fits any number dtype, a weak float a float or complex one, a weak
    # complex a complex one
    return max(_STRICT_RANK[k] for k in weak_kinds) <= _STRICT_RANK[d.kind]


def check_promotion(
    fname: str, keys: Sequence[tuple[np.dtype, bool]], user: bool | None = None
) -> None:
    """Under ``numpy_dtype_promotion("strict")`` (this thread's mode), raise
    :class:`TypePromotionError` naming ``fname`` when combining the operands of
    ``(dtype, weak)`` pairs ``keys`` needs an implicit promotion JAX's strict mode
    refuses: operands of different dtypes, a weak Python float with an integer array, a
    weak complex with a real one, a weak number with a bool array. A weak Python scalar
    of a kind the array's dtype holds (``int`` with any number, ``float`` with floats
    and complexes) is allowed, as operands of one dtype are. Only promotions of a
    function the user's code called are checked (``user``; by default as noted by
    :func:`enter_call`): functrace's own functions mix dtypes internally on purpose."""
    if len(keys) < 2 or promotion_mode() != "strict" or _strict_allows(tuple(keys)):
        return
    if not (_thread.user if user is None else user):
        return
    names = []
    for d, w in keys:
        node = _strict_node(d, w)
        name = f"weak {node}" if isinstance(node, str) else d.name
        if name not in names:
            names.append(name)
    given = " and ".join(names) if len(names) == 2 else ", ".join(names)
    raise TypePromotionError(
        f"{fname}: expected operands of one dtype (numpy_dtype_promotion='strict'), got "
        f"{given}, which would be promoted implicitly. Cast explicitly with "
        f".astype(...), or use numpy_dtype_promotion('standard')."
    )


class extended(np.generic):  # noqa: N801 - JAX's name
    """The abstract scalar class of JAX's extended dtypes, for ``issubdtype(dt,
    dtypes.extended)``; never instantiated. The only extended dtype functrace has is
    the typed-key dtype (:class:`KeyDtype`, ``key<fry>``)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The abstract scalar class of typed-key dtypes, for ``issubdtype(dt,
    dtypes.prng_key)``: True for the dtype of ``random.key(0)`` (``key<fry>``), False
    for the raw ``uint32[..., 2]`` keys of ``random.PRNGKey``, as in JAX."""


class KeyDtype:
    """The dtype of typed key arrays (``random.key(0).dtype``, JAX's ``KeyTy``): its
    str is ``key<fry>`` (Threefry, the only generator), its ``type`` is
    :class:`prng_key`. It is not a NumPy dtype: ``np.dtype(k.dtype)`` fails, as in
    JAX; use :func:`issubdtype` to test for it."""

    __slots__ = ()
    name = "key<fry>"
    type = prng_key
    itemsize = 8
    kind = "V"
    impl = "threefry2x32"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDtype)

    def __hash__(self) -> int:
        return hash("key<fry>")


KEY_FRY = KeyDtype()
"""The one typed-key dtype (Threefry keys)."""


_WEAK_PY: dict[str, type] = {"i": int, "u": int, "f": float, "c": complex}


def _value_key(x: object) -> tuple[np.dtype, bool] | None:
    """``(dtype, weak)`` of an operand (None: not a numeric value, left to the function)."""
    t = type(x)
    if t is bool:
        return np.dtype(bool), False
    if t is int or t is float or t is complex:
        return python_scalar_dtype(x), True
    aval = getattr(x, "aval", None)  # a tracer
    if aval is not None and isinstance(getattr(aval, "dtype", None), np.dtype):
        return aval.dtype, bool(getattr(aval, "weak_type", False))
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, np.dtype) and isinstance(x, (list, tuple)):
        try:
            dt = np.asarray(x).dtype
        except (TypeError, ValueError):
            return None
    if isinstance(dt, np.dtype) and dt.kind in "biufc":
        return dt, False
    return None


def check_operand_promotion(
    fname: str, operands: Sequence[object], ufunc: object = None, user: bool | None = None
) -> None:
    """:func:`check_promotion` for the operands themselves (NumPy values and scalars,
    Python scalars, tracers, lists). With a NumPy ``ufunc``, operands its loop takes
    as different dtypes (``ldexp``'s float and int) are not a promotion."""
    if promotion_mode() != "strict":
        return
    keys = [k for k in map(_value_key, operands) if k is not None]
    if len(keys) < 2 or _strict_allows(tuple(keys)):
        return
    if isinstance(ufunc, np.ufunc) and len(keys) == ufunc.nin:
        try:
            loop = ufunc.resolve_dtypes(
                tuple(_WEAK_PY[d.kind] if w and d.kind in _WEAK_PY else d for d, w in keys)
                + (None,) * ufunc.nout
            )
        except TypeError:
            return  # NumPy's own error follows
        if len(set(loop[: ufunc.nin])) > 1:
            return
    check_promotion(fname, keys, user)


def _promotion_operand(x: object) -> tuple[np.dtype, bool]:
    """``(dtype, weak)`` of one argument of :func:`result_type`."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        py = python_scalar_dtype(x)
        return py, py.kind != "b"  # Python bools are not weak (as in JAX)
    aval = getattr(x, "aval", None)  # a tracer
    if aval is not None and isinstance(getattr(aval, "dtype", None), np.dtype):
        return aval.dtype, bool(getattr(aval, "weak_type", False))
    dt = getattr(x, "dtype", None)  # an array or a NumPy scalar
    if isinstance(dt, np.dtype) and not isinstance(x, type):
        return dt, False
    try:
        if x is None or isinstance(x, (list, tuple, dict)):
            raise TypeError  # np.dtype(None) is float64; sequences are not dtypes
        return np.dtype(x), False  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            f"result_type: expected arrays, scalars or dtypes, got {type(x).__name__} ({x!r:.60})."
        ) from None


def result_type(*args: object, return_weak_type_flag: bool = False) -> object:
    """The dtype functrace's operations give when they combine ``args`` (arrays,
    tracers, Python or NumPy scalars, dtypes), as ``jax.dtypes.result_type``; with
    ``return_weak_type_flag=True``, ``(dtype, weak)``.

    The rules are functrace's own (NumPy 2 promotion, Python scalars and values
    computed only from them being weak: see the module docstring), not JAX's lattice.
    They agree except that (1) a non-weak integer or bool array with a float or complex
    one gives the dtype that holds both (``int32`` with ``float32``: float64; JAX:
    float32, ``int64`` with ``float16``: float64; JAX: float16), and (2) the result is
    weak only when every argument is (JAX also calls the result weak when a Python
    float or complex meets an integer or bool array, or ``int64`` meets ``uint64``).
    Dtypes without a common dtype raise :class:`TypePromotionError`, as do different
    dtypes under ``numpy_dtype_promotion("strict")`` (:func:`check_promotion`; dtype
    arguments are strong there, so ``result_type(np.float32, float)`` raises).

    >>> result_type(np.float32, 2.0), result_type(np.int8, np.uint8)
    (dtype('float32'), dtype('int16'))
    >>> result_type(2, 3.0, return_weak_type_flag=True)
    (dtype('float64'), True)
    """
    if not args:
        raise ValueError("result_type: expected at least one array, scalar or dtype, got none.")
    keys = [_promotion_operand(x) for x in args]
    if promotion.maybe_strict:
        check_promotion("result_type", keys, from_user(1))
    for d, _ in keys:
        if d.kind not in "biufc" and d != float0:
            raise TypeError(
                f"result_type: expected numeric or boolean dtypes, got {d}. functrace, "
                f"like JAX, does not compute with strings, bytes or objects."
            )
    try:
        dt, weak = promote(*keys)
    except TypeError:
        given = ", ".join("float0" if d == float0 else d.name for d, _ in keys)
        raise TypePromotionError(
            f"result_type: expected dtypes that promote to a common dtype, got {given}."
        ) from None
    return (dt, weak) if return_weak_type_flag else dt


def _float_to_int(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    low, high, lo_int, hi_int = float_to_int_limits(dt)
    a = a.view(np.ndarray)  # an eager Array's astype and copy are read-only Arrays
    if a.dtype.itemsize < 4:
        a = a.astype(np.float32)  # float16 cannot hold the limits of wide integers
    with np.errstate(invalid="ignore", over="ignore"):
        out = a.astype(dt)  # platform values outside the range: replaced below
        above = a >= high
        below = a < low if lo_int == 0 else a <= low
        nan = np.isnan(a)
    if above.any() or below.any() or nan.any():
        if out.base is not None or not out.flags.writeable:
            out = out.copy()
        np.putmask(out, above, hi_int)
        np.putmask(out, below, lo_int)
        np.putmask(out, nan, 0)
    return out


__all__ = [
    "canonicalize_dtype",
    "TypePromotionError",
    "check_operand_promotion",
    "check_promotion",
    "convert",
    "enter_call",
    "exit_call",
    "extended",
    "KeyDtype",
    "float0",
    "float_to_int_limits",
    "from_user",
    "finfo",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "is_bool",
    "is_differentiable",
    "is_float",
    "is_inexact",
    "is_integer",
    "promote",
    "promotion",
    "promotion_mode",
    "prng_key",
    "python_scalar_dtype",
    "result_type",
    "scalar_type_of",
    "set_promotion_mode",
    "short_name",
    "tangent_dtype",
    "thread_promotion_mode",
    "to_inexact",
]
