"""``functrace.config``: the debug switches, in JAX's spellings.

>>> import functrace as ft
>>> ft.config.debug_nans
False
>>> with ft.config.override(debug_nans=True):
...     ft.config.debug_nans
True

The switches are process-wide, as JAX's: setting one affects every thread (the
checks themselves run in whichever thread computes). ``override`` and the
``debug_nans``/``debug_infs`` context managers restore the previous values on exit,
also when the block raises. ``disable_jit`` is the exception: it is kept per thread
like all trace state (see ``functrace.jit.disable_jit``); setting it here changes it
for the calling thread and the default of threads that have not set their own.

The values of the float checks and of ``explain_retraces`` live in the leaf module
``functrace._debug`` (read there by every floor); ``disable_jit`` is registered here
by ``functrace.jit`` (a floor above this one).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from functrace import _config_options as _opts
from functrace import _debug, dtypes

_FLAG_NAMES = ("debug_nans", "debug_infs", "explain_retraces", "log_compiles")
# Switches owned by a higher floor: name -> (get, set), registered by that floor.
_registered: dict[str, tuple[Callable[[], bool], Callable[[bool], None]]] = {}


def register(name: str, get: Callable[[], bool], set_: Callable[[bool], None]) -> None:
    """Make ``name`` a switch of ``config`` read and written by ``get``/``set_``
    (``functrace.jit`` registers ``disable_jit``)."""
    _registered[name] = (get, set_)


def _set_x64(flag: bool) -> None:
    if not flag:
        warnings.warn(
            "functrace.config: enable_x64=False is ignored: functrace always follows "
            "NumPy's dtypes (float64 and int64 by default; float32 stays float32). Pass "
            "dtype=np.float32 where JAX's 32-bit defaults are wanted.",
            UserWarning,
            stacklevel=3,
        )


# JAX's 64-bit switch, for the programs that set it first thing: functrace's dtypes are
# NumPy's, which is JAX's with the switch on, so it reads True and cannot be turned off.
register("enable_x64", lambda: True, _set_x64)

# JAX's switch between its checkpoint implementations, set by programs written for
# either: functrace has one (``lax/remat.py``), so the value is kept and changes nothing.
_remat3 = [True]
register("remat3", lambda: _remat3[0], lambda flag: _remat3.__setitem__(0, flag))

_ALIASES = {"explain_cache_misses": "explain_retraces"}
"""JAX's names of functrace's switches."""


class Switch:
    """A process-wide switch of a higher floor, registered as ``config.<name>``: on
    unless the environment variable ``env`` is ``0``/``false``/``no``/``off`` at import.
    The floor reads ``.on`` on its hot paths."""

    __slots__ = ("on",)

    def __init__(self, name: str, env: str) -> None:
        self.on = os.environ.get(env, "").strip().lower() not in ("0", "false", "no", "off")
        register(name, lambda: self.on, self._set)

    def _set(self, flag: bool) -> None:
        self.on = bool(flag)


def _known() -> list[str]:
    return sorted((*_FLAG_NAMES, *_registered))


def _is_option(key: str) -> bool:
    return key in _opts.OPTIONS


def _canonical(name: Any, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{where}: expected a switch name (str), got {type(name).__name__}.")
    key = name
    for prefix in ("jax_", "functrace_"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    key = _ALIASES.get(key, key)
    if key in _FLAG_NAMES or key in _registered or _is_option(key):
        return key
    raise AttributeError(
        f"{where}: expected one of the switches {', '.join(_known())} or JAX's options "
        f"{', '.join(sorted(_opts.OPTIONS))} (also spelled with JAX's 'jax_' prefix), got "
        f"{name!r}."
    )


def _as_bool(value: Any, name: str, where: str) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    if hasattr(value, "dtype") and getattr(value, "shape", None) == () and value.dtype == bool:
        return bool(value)
    raise TypeError(f"{where}: expected True or False for {name}, got {value!r:.60}.")


class Config:
    """The switches: ``debug_nans``, ``debug_infs``, ``explain_retraces`` (process-wide)
    and ``disable_jit`` (per thread). Read and set them as attributes
    (``ft.config.debug_nans = True``), with :meth:`update` (JAX's spelling, also
    ``"jax_debug_nans"``) or for a block with :meth:`override`. Environment variables
    give the defaults at import: ``FUNCTRACE_DEBUG_NANS=1``, ``FUNCTRACE_DEBUG_INFS=1``,
    ``FUNCTRACE_EXPLAIN_RETRACES=1``, ``FUNCTRACE_DISABLE_JIT=1``.

    * ``debug_nans``/``debug_infs``: every primitive computed on concrete values (eager
      code, ``grad``/``vjp``/``jvp``/``vmap``, their backward passes) has its float
      outputs checked; a NaN (inf) raises ``FloatingPointError`` naming the primitive,
      the pass (forward, a derivative rule, the backward pass and the forward primitive
      whose derivative it transposes), the user's ``file:line`` and the inputs' types.
      A jitted function checks its outputs and, on a NaN, re-runs its program op by op
      to find the first primitive. Integer and bool values are not checked.
    * ``explain_retraces``: when a jitted function traces again, log one line on the
      ``functrace.jit`` logger (WARNING) saying what differs from the closest earlier
      signature.
    * ``log_compiles`` (``FUNCTRACE_LOG_COMPILES=1``): when a jitted function traces
      and compiles a new signature, log one line on the ``functrace.jit`` logger
      (WARNING) naming the function and its argument types (JAX's
      ``jax_log_compiles``).
    * ``eager_cache`` (registered by ``functrace.api``; default on,
      ``FUNCTRACE_EAGER_CACHE=0`` turns it off): eager ``grad``/``vjp``/``jvp`` reuse the
      program recorded by an earlier call with the same signature (see
      ``functrace/api/_eager_cache.py``).
    * ``fused_updates`` (registered by ``functrace._leafmap``; default on,
      ``FUNCTRACE_FUSED_UPDATES=0`` turns it off): the eager updates of
      ``functrace.optim``'s optimizers run as one jitted call, each parameter's
      arithmetic (a whole chain's) one fused kernel, with the same bits as op by op.

    JAX's options that take values are here too (``functrace/_config_options.py``):
    ``numpy_rank_promotion`` ("allow", "warn" or "raise") and ``numpy_dtype_promotion``
    ("standard" or "strict", process-wide here; the context manager
    :func:`numpy_dtype_promotion` sets one thread's) are in effect; the others are
    validated and read back as set, and either describe what functrace always does
    (``platform_name="cpu"``, ``threefry_partitionable=True``; another value raises) or
    tune something functrace does not have (``default_matmul_precision``,
    ``traceback_filtering``, the compilation cache and transfer guard options: without
    effect).
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = _canonical(name, "functrace.config")
        if _is_option(key):
            return _opts.get(key)
        if key in _registered:
            return _registered[key][0]()
        return getattr(_debug.flags, key)

    def __setattr__(self, name: str, value: Any) -> None:
        self.update(name, value)

    def update(self, name: str, value: Any) -> None:
        """Set the switch or option ``name`` (``"debug_nans"`` or JAX's
        ``"jax_debug_nans"``; ``"jax_numpy_rank_promotion"`` takes a string)."""
        key = _canonical(name, "functrace.config.update")
        if _is_option(key):
            _opts.set_(key, value, "functrace.config.update")
            return
        flag = _as_bool(value, key, "functrace.config.update")
        if key in _registered:
            _registered[key][1](flag)
        else:
            _debug.flags.set(key, flag)

    def read(self, name: str) -> Any:
        """The value of the switch or option ``name`` (also in JAX's spelling)."""
        key = _canonical(name, "functrace.config.read")
        if _is_option(key):
            return _opts.get(key)
        return bool(getattr(self, key))

    @contextlib.contextmanager
    def override(self, **switches: Any) -> Iterator[None]:
        """Set switches for the duration of the block, restoring them on exit (also on
        an exception): ``with ft.config.override(debug_nans=True): ...``."""
        keys = {_canonical(k, "functrace.config.override"): v for k, v in switches.items()}
        values = {
            k: v if _is_option(k) else _as_bool(v, k, "functrace.config.override")
            for k, v in keys.items()
        }
        prev = {k: _opts.stored(k) if _is_option(k) else self.read(k) for k in values}
        try:
            for k, v in values.items():
                self.update(k, v)
            yield
        finally:
            for k, v in prev.items():
                self.update(k, v)

    def values(self) -> dict[str, Any]:
        """Every switch and option and its current value."""
        return {k: self.read(k) for k in (*_known(), *sorted(_opts.OPTIONS))}

    def __dir__(self) -> list[str]:
        return [*_known(), *sorted(_opts.OPTIONS), "update", "read", "override", "values"]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in self.values().items())
        return f"functrace.config({inner})"


config = Config()
"""The debug switches (see :class:`Config`)."""


def debug_nans(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with ft.debug_nans(True):`` turn ``config.debug_nans`` on (or off) for a block:
    a primitive producing a NaN raises ``FloatingPointError`` naming it."""
    return config.override(debug_nans=enable)


def debug_infs(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with ft.debug_infs(True):`` turn ``config.debug_infs`` on (or off) for a block:
    a primitive producing +-inf raises ``FloatingPointError`` naming it."""
    return config.override(debug_infs=enable)


# ---------------------------------------------------------------------------
# JAX's top-level context managers of its config options
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def enable_x64(new_val: bool) -> Iterator[None]:
    """``with ft.enable_x64(True):``: functrace always computes with 64-bit types (its
    dtypes are NumPy's: float64 and int64 by default), so ``True`` changes nothing.
    ``False`` (JAX's 32-bit mode) raises ``NotImplementedError``: functrace has no
    32-bit default; pass ``dtype=np.float32`` where 32-bit values are wanted."""
    flag = _as_bool(new_val, "new_val", "functrace.enable_x64")
    if not flag:
        raise NotImplementedError(
            "functrace.enable_x64(False): functrace has no 32-bit mode (its default dtypes "
            "are NumPy's, float64 and int64, JAX's with x64 on); pass dtype=np.float32 "
            "where 32-bit values are wanted."
        )
    yield


@contextlib.contextmanager
def numpy_dtype_promotion(new_val: str) -> Iterator[None]:
    """``with ft.numpy_dtype_promotion("strict"):`` set the calling thread's
    ``config.numpy_dtype_promotion`` for a block (other threads keep theirs, as in JAX):
    ``"standard"`` (implicit promotion, NumPy 2's rules with weak Python scalars, see
    ``src/functrace/README.md``) or ``"strict"``, where combining operands of different
    dtypes raises ``functrace.dtypes.TypePromotionError`` naming the function and the
    dtypes (weak Python scalars of a kind the array holds still combine: ``f32 * 2.0``).
    The check runs when a function is traced; a jitted function traces its signatures
    again under strict, as JAX does."""
    mode = _opts.check_dtype_promotion(new_val, "functrace.numpy_dtype_promotion")
    with dtypes.thread_promotion_mode(mode):
        yield


@contextlib.contextmanager
def default_matmul_precision(new_val: str | None) -> Iterator[None]:
    """``with ft.default_matmul_precision("highest"):``: accepted and without effect:
    functrace's products run in the operands' own precision (float32 in float32, float64
    in float64), whatever precision is asked for. Takes None or JAX's names
    (``"default"``, ``"high"``, ``"highest"``, ``"bfloat16"``, ``"tensorfloat32"``,
    ``"float32"``, ``"fastest"``, also with ``"ANY_"``-style algorithm names as strings)."""
    _opts.check_precision(new_val, "functrace.default_matmul_precision")
    yield


@contextlib.contextmanager
def numpy_rank_promotion(new_val: str) -> Iterator[None]:
    """``with ft.numpy_rank_promotion("raise"):`` set ``config.numpy_rank_promotion``
    for a block: ``"allow"`` (the default), ``"warn"`` or ``"raise"`` when operands of
    different ranks broadcast together in ``functrace.numpy`` (``x + b`` with ``x`` of
    shape ``(2, 3)`` and ``b`` of shape ``(3,)``; 0-d operands always broadcast). The
    check runs when a function is traced, so a jitted function keeps the traces it
    made before the change (JAX traces again)."""
    with config.override(numpy_rank_promotion=new_val):
        yield


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """``with ft.transfer_guard("disallow"):``: accepted and without effect (JAX's
    values ``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"``,
    ``"disallow_explicit"``): functrace's one device is the host, so no transfer between
    host and device ever happens."""
    with config.override(transfer_guard=new_val):
        yield


@contextlib.contextmanager
def transfer_guard_host_to_device(new_val: str) -> Iterator[None]:
    """``with ft.transfer_guard_host_to_device("disallow"):``: sets the option for the
    block; without effect, as :func:`transfer_guard` (the one device is the host)."""
    with config.override(transfer_guard_host_to_device=new_val):
        yield


@contextlib.contextmanager
def transfer_guard_device_to_host(new_val: str) -> Iterator[None]:
    """``with ft.transfer_guard_device_to_host("disallow"):``: sets the option for the
    block; without effect, as :func:`transfer_guard` (the one device is the host)."""
    with config.override(transfer_guard_device_to_host=new_val):
        yield


@contextlib.contextmanager
def transfer_guard_device_to_device(new_val: str) -> Iterator[None]:
    """``with ft.transfer_guard_device_to_device("disallow"):``: sets the option for the
    block; without effect, as :func:`transfer_guard` (there are no transfers between
    functrace's virtual devices: they share the host's memory)."""
    with config.override(transfer_guard_device_to_device=new_val):
        yield


@contextlib.contextmanager
def default_prng_impl(new_val: str) -> Iterator[None]:
    """``with ft.default_prng_impl("threefry2x32"):``: the generator ``functrace.random``
    always uses, so nothing changes; another of JAX's generators (``"rbg"``,
    ``"unsafe_rbg"``) raises ``NotImplementedError``."""
    with config.override(default_prng_impl=new_val):
        yield


@contextlib.contextmanager
def threefry_partitionable(new_val: bool) -> Iterator[None]:
    """``with ft.threefry_partitionable(True):``: the Threefry bit layout
    ``functrace.random`` always draws (JAX's default), so nothing changes; ``False``
    (JAX's older layout) raises ``NotImplementedError``."""
    with config.override(threefry_partitionable=new_val):
        yield


@contextlib.contextmanager
def debug_key_reuse(new_val: bool) -> Iterator[None]:
    """``with ft.debug_key_reuse(False):``: functrace has no key-reuse checker, so
    ``False`` changes nothing and ``True`` raises ``NotImplementedError``."""
    with config.override(debug_key_reuse=new_val):
        yield


@contextlib.contextmanager
def enable_checks(new_val: bool) -> Iterator[None]:
    """``with ft.enable_checks(True):``: sets ``config.enable_checks`` for the block,
    without effect: JAX's extra internal type checks of jaxprs have no counterpart
    (functrace's tracers check each equation as it is built)."""
    with config.override(enable_checks=new_val):
        yield


@contextlib.contextmanager
def check_tracer_leaks(new_val: bool) -> Iterator[None]:
    """``with ft.check_tracer_leaks(True):``: accepted and without effect: functrace
    always detects traced values that outlive their transform (using one raises
    ``UnexpectedTracerError`` naming the transform and the function), at no extra cost,
    so there is nothing to switch on."""
    _as_bool(new_val, "new_val", "functrace.check_tracer_leaks")
    yield


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """``with ft.checking_leaks():``, JAX's ``check_tracer_leaks(True)``: without effect
    (see :func:`check_tracer_leaks`)."""
    return check_tracer_leaks(True)


def log_compiles(new_val: bool = True) -> contextlib.AbstractContextManager[None]:
    """``with ft.log_compiles(True):`` turn ``config.log_compiles`` on (or off) for a
    block: each new signature a jitted function traces and compiles logs a line on the
    ``functrace.jit`` logger (WARNING) naming the function and its argument types."""
    return config.override(log_compiles=new_val)


@contextlib.contextmanager
def default_device(new_val: Any) -> Iterator[None]:
    """``with ft.default_device(ft.devices()[0]):``: accepted and without effect:
    functrace has one device, this process's CPU, where everything is computed. Takes
    None, a device from ``functrace.devices()`` or ``"cpu"``; another platform name is a
    ValueError."""
    _opts.check_device(new_val, "functrace.default_device")
    yield


__all__ = [
    "Config",
    "check_tracer_leaks",
    "checking_leaks",
    "config",
    "debug_infs",
    "debug_key_reuse",
    "default_prng_impl",
    "enable_checks",
    "debug_nans",
    "default_device",
    "default_matmul_precision",
    "enable_x64",
    "log_compiles",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "register",
    "threefry_partitionable",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]
