"""JAX's configuration options that take values, for ``functrace.config``.

JAX programs set options first thing (``jax.config.update("jax_platform_name",
"cpu")``, ``("jax_default_matmul_precision", "highest")``,
``("jax_numpy_rank_promotion", "raise")`` in test suites). ``functrace.config`` takes
the same names and values; each option is one of three kinds:

* **in effect**: ``numpy_rank_promotion`` (``"allow"``, ``"warn"``, ``"raise"``: operands
  of different ranks broadcasting implicitly in ``functrace.numpy`` warn or raise),
  ``numpy_dtype_promotion`` (``"standard"`` or ``"strict"``: operands of different
  dtypes promoted implicitly raise ``TypePromotionError``, see
  ``functrace.dtypes.check_promotion``) and
  ``num_cpu_devices`` (how many virtual CPU devices ``functrace.devices()`` lists; by
  default XLA's ``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``, else 1);
* **the only behaviour functrace has**: the value that describes what functrace always
  does is accepted, another raises ``NotImplementedError`` saying so
  (``threefry_partitionable=False``,
  ``default_prng_impl="rbg"``, ``debug_key_reuse=True``, ``dynamic_shapes=True``) or
  ``ValueError`` for a platform functrace does not compute on;
* **accepted without effect**, because what the option tunes does not exist here
  (``default_matmul_precision``: products run in their operands' precision;
  ``traceback_filtering``: tracebacks are not filtered; the persistent compilation
  cache options: functrace's kernel cache is ``FUNCTRACE_CACHE_DIR``'s, see
  ``functrace/jit/README.md``; the transfer guards: there is one host device).
  The value is validated as JAX validates it and reads back as set.

An unknown option name stays an error naming the known ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import _debug, dtypes
from functrace._array import CpuDevice

_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "fastest")
_TRACEBACK_FILTERING = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")
_TRANSFER_GUARD = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def check_precision(value: Any, where: str) -> Any:
    """``value`` if it names a matmul precision JAX knows (or is None)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"{where}: expected None or a precision name such as 'highest', got "
            f"{type(value).__name__}."
        )
    if isinstance(value, str) and value.lower() not in _PRECISIONS and "_" not in value:
        raise ValueError(f"{where}: expected one of {', '.join(_PRECISIONS)}, got {value!r:.60}.")
    return value


def check_dtype_promotion(value: Any, where: str) -> str:
    """``value`` if it is ``"standard"`` or ``"strict"``."""
    if value in ("standard", "strict"):
        return str(value)
    raise ValueError(f"{where}: expected 'standard' or 'strict', got {value!r:.60}.")


def check_device(value: Any, where: str) -> Any:
    """None, a functrace device or ``"cpu"``."""
    if isinstance(value, str):
        if value.lower() != "cpu":
            raise ValueError(
                f"{where}: expected None, a device of functrace.devices() or 'cpu' "
                f"(functrace computes on the CPU only), got {value!r:.60}."
            )
    elif value is not None and not isinstance(value, CpuDevice):
        raise TypeError(
            f"{where}: expected None, a device of functrace.devices() or 'cpu', got "
            f"{type(value).__name__}."
        )
    return value


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{where}: expected True or False, got {value!r:.60}.")


def _choice(*choices: str) -> Callable[[Any, str], str]:
    def check(value: Any, where: str) -> str:
        if isinstance(value, str) and value.lower() in choices:
            return value.lower()
        raise ValueError(f"{where}: expected one of {', '.join(choices)}, got {value!r:.60}.")

    return check


def _only(supported: Any, why: str) -> Callable[[Any, str], Any]:
    """An option whose value ``supported`` is the only behaviour functrace has."""

    def check(value: Any, where: str) -> Any:
        if isinstance(supported, bool):
            value = _bool(value, where)
        if value != supported:
            raise NotImplementedError(f"{where}: {value!r:.60} is not available: {why}.")
        return value

    return check


def _platform(value: Any, where: str) -> Any:
    names = [] if value is None else str(value).lower().replace(" ", "").split(",")
    if value is None or value == "" or "cpu" in names:
        return value
    raise ValueError(
        f"{where}: expected 'cpu' (functrace computes on this process's CPU only), got "
        f"{value!r:.60}."
    )


def _optional_str(value: Any, where: str) -> Any:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{where}: expected a path (str) or None, got {type(value).__name__}.")


def _number(value: Any, where: str) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise TypeError(f"{where}: expected a number, got {value!r:.60}.")


def _device_count(value: Any, where: str) -> Any:
    if value is None or value == -1:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1:
        return int(value)
    raise ValueError(f"{where}: expected a device count >= 1 (or -1), got {value!r:.60}.")


def num_cpu_devices() -> int:
    """How many (virtual) CPU devices ``functrace.devices()`` lists: the option
    ``num_cpu_devices`` if set, else XLA's ``--xla_force_host_platform_device_count=N``
    in ``XLA_FLAGS`` (read now, as programs set it before their first device call),
    else 1."""
    n = _values["num_cpu_devices"]
    if n is not None:
        return int(n)
    m = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
    return max(1, int(m.group(1))) if m else 1


# name -> (default, check). A check validates a value and returns what to store.
OPTIONS: dict[str, tuple[Any, Callable[[Any, str], Any]]] = {
    "numpy_rank_promotion": ("allow", _choice("allow", "warn", "raise")),
    "numpy_dtype_promotion": ("standard", check_dtype_promotion),
    "default_matmul_precision": (None, check_precision),
    "default_device": (None, check_device),
    "num_cpu_devices": (None, _device_count),
    "platform_name": ("", _platform),
    "platforms": (None, _platform),
    "default_prng_impl": (
        "threefry2x32",
        _only("threefry2x32", "functrace.random implements JAX's Threefry generator only"),
    ),
    "threefry_partitionable": (
        True,
        _only(True, "functrace.random draws JAX's default (partitionable) Threefry bits"),
    ),
    "debug_key_reuse": (False, _only(False, "functrace has no key-reuse checker")),
    "dynamic_shapes": (False, _only(False, "functrace traces with static shapes")),
    "traceback_filtering": ("auto", _choice(*_TRACEBACK_FILTERING)),
    "compilation_cache_dir": (None, _optional_str),
    "enable_compilation_cache": (True, _bool),
    "persistent_cache_min_compile_time_secs": (1.0, _number),
    "persistent_cache_min_entry_size_bytes": (0, _number),
    "enable_checks": (False, _bool),
    "check_tracer_leaks": (False, _bool),
    "softmax_custom_jvp": (False, _bool),
    "cpu_enable_async_dispatch": (True, _bool),
    "use_shardy_partitioner": (True, _bool),
    "transfer_guard": ("allow", _choice(*_TRANSFER_GUARD)),
    "transfer_guard_host_to_device": ("allow", _choice(*_TRANSFER_GUARD)),
    "transfer_guard_device_to_host": ("allow", _choice(*_TRANSFER_GUARD)),
    "transfer_guard_device_to_device": ("allow", _choice(*_TRANSFER_GUARD)),
}

_values: dict[str, Any] = {k: default for k, (default, _) in OPTIONS.items()}


def get(name: str) -> Any:
    """The current value of the option ``name`` (a key of :data:`OPTIONS`)."""
    if name == "num_cpu_devices":
        return num_cpu_devices()
    if name == "numpy_dtype_promotion":  # the calling thread's (a block may set it)
        return dtypes.promotion_mode()
    return _values[name]


def stored(name: str) -> Any:
    """The value set for ``name`` (``num_cpu_devices``: None while unset, where
    :func:`get` reads ``XLA_FLAGS``), for ``config.override`` to put back."""
    return _values[name]


def set_(name: str, value: Any, where: str) -> None:
    """Validate ``value`` for the option ``name`` and make it current."""
    stored = OPTIONS[name][1](value, f"{where}({name!r})")
    if name == "numpy_rank_promotion":  # also where the numpy layer's hot paths read it
        _debug.flags.rank_promotion = stored
    elif name == "numpy_dtype_promotion":  # read by every promoting function
        dtypes.set_promotion_mode(stored)
    _values[name] = stored


__all__ = [
    "OPTIONS",
    "check_device",
    "check_dtype_promotion",
    "check_precision",
    "get",
    "num_cpu_devices",
    "set_",
    "stored",
]
