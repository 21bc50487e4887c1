"""``convolve`` and ``correlate`` of 1-D sequences with NumPy's semantics; traced
operands become one ``lax.conv_general_dilated`` of shape (1, 1, n).

Decisions (NumPy's):

* Modes ``"full"``/``2`` (``n + m - 1`` outputs), ``"same"``/``1`` (``max(n, m)``)
  and ``"valid"``/``0`` (``max(n, m) - min(n, m) + 1``); ``convolve`` defaults to
  ``"full"``, ``correlate`` to ``"valid"``.
* ``convolve`` swaps its operands when ``v`` is the longer one (the result is the
  same). ``correlate(a, v)[k] = sum_n a[n + k] * conj(v[n])``; when ``v`` is the
  longer one NumPy computes ``correlate(v, a)`` reversed and conjugated, and so does
  this (so ``"same"`` is aligned as in NumPy).
* Operands are promoted together, Python scalars as arrays (NumPy's products convert
  them first); bools are multiplied as int64 and the result is ``!= 0``. 0-d operands
  are sequences of length 1; empty or multi-dimensional ones are errors. Complex traced
  operands raise ``NotImplementedError`` (lax has no complex conjugate); plain NumPy
  inputs of any dtype go to NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import convolution as lconv
from functrace.lax import elementwise as lx
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, cast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._linalg import _finish_pet

_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full"}
_PY_SCALARS = (bool, int, float, complex)


def _prepare(fname: str, a: Any, v: Any, mode: Any) -> tuple[Any, Any, str, bool]:
    key = mode if isinstance(mode, str) or type(mode) is int else None
    if key not in _MODES:
        raise ValueError(
            f"{fname}: expected mode 'full', 'same' or 'valid' (or 2, 1, 0), got {mode!r}."
        )
    xs = [asarray_or_tracer(np.asarray(x) if type(x) in _PY_SCALARS else x, fname) for x in (a, v)]
    avals = [core.get_aval(x) for x in xs]
    dt, weak = dtypes.promote(*[(av.dtype, av.weak_type) for av in avals])
    if dt.kind not in "biuf":
        if dt.kind == "c":
            raise NotImplementedError(
                f"{fname}: expected real traced arrays, got complex ones. Complex "
                f"{fname} works on plain NumPy inputs only."
            )
        raise TypeError(
            f"{fname}: expected numeric or boolean operands, got "
            f"{', '.join(av.dtype.name for av in avals)}. Cast with .astype first."
        )
    for name, av in zip(("a", "v"), avals):
        if av.ndim > 1:
            raise ValueError(
                f"{fname}: expected 1-d sequences, got {name} of shape {av.shape}. "
                f"Apply it to each row separately (e.g. with vmap)."
            )
    n, m = (max(1, av.size) if av.ndim == 0 else av.size for av in avals)
    if n == 0 or m == 0:
        raise ValueError(f"{fname}: expected non-empty sequences, got lengths {n} and {m}.")
    work = np.dtype(np.int64) if dt.kind == "b" else dt
    a, v = (ls.reshape(cast(x, work, weak), (k,)) for x, k in zip(xs, (n, m)))
    return a, v, _MODES[key], dt.kind == "b"


def _correlate_long_short(a: Any, v: Any, mode: str) -> Any:
    # len(a) >= len(v) = m: z[k] = sum_n a_p[n + k] v[n], a_p padded by the mode's pads
    m = core.get_aval(v).shape[0]
    pads = {"full": (m - 1, m - 1), "same": (m // 2, m - 1 - m // 2), "valid": (0, 0)}[mode]
    x = ls.reshape(a, (1, 1, core.get_aval(a).shape[0]))
    out = lconv.conv_general_dilated(x, ls.reshape(v, (1, 1, m)), (1,), (pads,))
    return ls.reshape(out, (core.get_aval(out).shape[2],))


def _finish(z: Any, is_bool: bool) -> Any:
    return lx.ne(z, lx.zeros_like(z)) if is_bool else z


def _product_options(fname: str, precision: Any, pet: Any) -> np.dtype | None:
    """JAX's ``precision`` (checked, no effect on the CPU) and ``preferred_element_type``
    (the result's dtype) keywords."""
    ls.check_precision(fname, precision)
    return None if pet is None else np.dtype(pet)


def _np_product(name: str, np_fn: Any, default_mode: str) -> Any:
    """NumPy's ``convolve``/``correlate`` with JAX's keywords (the plain-array path)."""

    def f(
        a: Any,
        v: Any,
        mode: Any = default_mode,
        *,
        precision: Any = None,
        preferred_element_type: Any = None,
    ) -> Any:
        pet = _product_options(name, precision, preferred_element_type)
        return _finish_pet(np_fn(a, v, mode), pet)

    return f


@numpy_path(_np_product("convolve", np.convolve, "full"))
def convolve(
    a: Any, v: Any, mode: Any = "full", *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Discrete linear convolution of two 1-d sequences, as ``numpy.convolve``:
    ``out[k] = sum_j a[j] v[k - j]``. ``mode="full"`` gives all ``n + m - 1``
    overlaps, ``"same"`` the central ``max(n, m)``, ``"valid"`` the
    ``max(n, m) - min(n, m) + 1`` of complete overlap. ``precision`` and
    ``preferred_element_type`` are JAX's (the first has no effect on the CPU, the
    second sets the result's dtype).

    >>> import functrace.numpy as fnp
    >>> fnp.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    pet = _product_options("convolve", precision, preferred_element_type)
    a, v, kind, is_bool = _prepare("convolve", a, v, mode)
    if core.get_aval(v).shape[0] > core.get_aval(a).shape[0]:
        a, v = v, a
    return _finish_pet(_finish(_correlate_long_short(a, ls.rev(v, (0,)), kind), is_bool), pet)


@numpy_path(_np_product("correlate", np.correlate, "valid"))
def correlate(
    a: Any,
    v: Any,
    mode: Any = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Cross-correlation of two 1-d sequences, as ``numpy.correlate``:
    ``z[k] = sum_n a[n + k] conj(v[n])``, modes "valid" (default), "same", "full"
    (the lags of ``convolve(a, v[::-1].conj())``); ``precision`` and
    ``preferred_element_type`` as in :func:`convolve`."""
    pet = _product_options("correlate", precision, preferred_element_type)
    a, v, kind, is_bool = _prepare("correlate", a, v, mode)
    if core.get_aval(v).shape[0] > core.get_aval(a).shape[0]:
        z = ls.rev(_correlate_long_short(v, a, kind), (0,))
    else:
        z = _correlate_long_short(a, v, kind)
    return _finish_pet(_finish(z, is_bool), pet)


__all__ = ["convolve", "correlate"]
