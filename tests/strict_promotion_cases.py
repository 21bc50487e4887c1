"""Which dtype combinations ``numpy_dtype_promotion("strict")`` allows, run under JAX
and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.numpy`` imported) when ``tests/fixtures/strict_promotion_jax.npz`` was recorded,
``functrace`` in tests/test_strict_promotion.py. For every pair of operands among
arrays of eleven dtypes and the four kinds of Python scalar it records, per function,
the result dtype's name or ``"TypePromotionError"`` (the name of the exception raised):
``add`` and ``where`` called with the operands, the ``*`` operator, ``dtypes.result_type``,
``*`` traced (``eval_shape``), ``vmap`` of ``+``, ``concatenate`` and ``matmul`` of
arrays and ``grad`` through ``x * y``; the outcome of thirty more functions of two
operands (``functions``); and for a few pairs the numbers of ``jit``. Entries
that do not apply are ``"-"``. Nothing here imports JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "int64",
          "float16", "float32", "float64", "complex64", "complex128"]  # fmt: skip
SCALARS: list[Any] = [True, 2, 2.5, 1.5 + 2j]
NAMES = DTYPES + ["py_bool", "py_int", "py_float", "py_complex"]


def operand(i: int, shape: tuple[int, ...] = (3,)) -> Any:
    """Operand ``i`` of :data:`NAMES`: a NumPy array of the dtype, or the Python scalar."""
    if i >= len(DTYPES):
        return SCALARS[i - len(DTYPES)]
    base = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 3
    return base.astype(DTYPES[i])


def _outcome(f: Callable[[], Any]) -> str:
    try:
        r = f()
        return str(np.dtype(r.dtype) if hasattr(r, "dtype") else np.asarray(r).dtype)
    except Exception as e:  # the kind of error is the outcome
        return type(e).__name__


def _table(lib: Any, f: Callable[[Any, Any], Any], applies: Callable[[int, int], bool]) -> Any:
    n = len(NAMES)
    out = np.full((n, n), "-", dtype="<U24")
    for i in range(n):
        for j in range(n):
            if applies(i, j):
                out[i, j] = _outcome(functools.partial(f, operand(i), operand(j)))
    return out


def cases(lib: Any) -> dict[str, np.ndarray]:
    fnp = lib.numpy
    n_arr = len(DTYPES)
    every = lambda i, j: True  # noqa: E731
    one_array = lambda i, j: i < n_arr or j < n_arr  # noqa: E731
    arrays = lambda i, j: i < n_arr and j < n_arr  # noqa: E731
    cond = np.array([True, False, True])
    out: dict[str, Any] = {}
    with lib.numpy_dtype_promotion("strict"):
        out["add"] = _table(lib, fnp.add, every)
        out["multiply_operator"] = _table(
            lib, lambda x, y: _as_array(lib, x) * _as_array(lib, y), one_array
        )
        out["where"] = _table(lib, lambda x, y: fnp.where(cond, x, y), every)
        out["result_type"] = _table(lib, lambda x, y: lib.dtypes.result_type(x, y), every)
        out["traced_multiply"] = _table(
            lib, lambda x, y: lib.eval_shape(lambda a: a * y, x), lambda i, j: i < n_arr
        )
        out["vmap_add"] = _table(
            lib,
            lambda x, y: lib.vmap(lambda a, b: a + b)(np.stack([x, x]), np.stack([y, y])),
            arrays,
        )
        out["concatenate"] = _table(lib, lambda x, y: fnp.concatenate([x, y]), arrays)
        out["matmul"] = _table(lib, fnp.matmul, arrays)
        floats = [DTYPES.index("float32"), DTYPES.index("float64")]
        out["grad_multiply"] = _table(
            lib,
            lambda x, y: lib.grad(lambda a: fnp.sum(fnp.real(a * y)))(x),
            lambda i, j: i in floats,
        )
        out["functions"] = np.array([_outcome(c) for c in _functions(fnp).values()])
        jit_mul = lib.jit(lambda a, b: a * b)
        x32 = operand(DTYPES.index("float32"))
        out["jit_f32_times_py_float"] = jit_mul(x32, 2.5)
        out["jit_i32_times_py_int"] = jit_mul(operand(DTYPES.index("int32")), 2)
        out["jit_f32_times_f64"] = np.array(
            _outcome(lambda: jit_mul(x32, operand(DTYPES.index("float64"))))
        )
    return {k: np.asarray(v) for k, v in out.items()}


def _as_array(lib: Any, x: Any) -> Any:
    """The library's array of ``x`` (Python scalars stay as they are)."""
    return x if type(x) in (bool, int, float, complex) else lib.numpy.asarray(x)


def _functions(fnp: Any) -> dict[str, Callable[[], Any]]:
    """More functions of two operands, with float32 and float64 (or int32) operands, or
    a float32 one and a weak scalar."""
    f32, f64, i32 = operand(7) + 1, operand(8) + 1, operand(3)
    m32 = np.eye(3, dtype=np.float32) * 2
    return {
        "outer": lambda: fnp.outer(f32, f64),
        "kron": lambda: fnp.kron(f32, f64),
        "cross": lambda: fnp.cross(f32, f64),
        "isclose": lambda: fnp.isclose(f32, f64),
        "allclose": lambda: fnp.allclose(f32, f64),
        "array_equal": lambda: fnp.array_equal(f32, f64),
        "solve": lambda: fnp.linalg.solve(m32, f64),
        "searchsorted": lambda: fnp.searchsorted(f32, f64),
        "interp": lambda: fnp.interp(f32, f64, f64),
        "polyval": lambda: fnp.polyval(f64, f32),
        "vstack": lambda: fnp.vstack([f32, f64]),
        "append": lambda: fnp.append(f32, f64),
        "column_stack": lambda: fnp.column_stack([f32, f64]),
        "clip_int_by_floats": lambda: fnp.clip(i32, 0.5, 2.5),
        "clip_by_ints": lambda: fnp.clip(f32, 1, 2),
        "heaviside": lambda: fnp.heaviside(f32, f64),
        "ldexp": lambda: fnp.ldexp(f32, i32),
        "power_by_int32": lambda: fnp.power(f32, i32),
        "power_by_py_float": lambda: fnp.power(f32, 2.5),
        "inner": lambda: fnp.inner(f32, f64),
        "vdot": lambda: fnp.vdot(f32, f64),
        "tensordot": lambda: fnp.tensordot(f32, f64, 1),
        "select_py_float": lambda: fnp.select([f32 > 1], [f32], 0.5),
        "where_py_scalars": lambda: fnp.where(f32 > 1, 1, 2.5),
        "copysign": lambda: fnp.copysign(f32, f64),
        "bitwise_and_int64": lambda: fnp.bitwise_and(i32, np.int64(1)),
        "minimum_py_float": lambda: fnp.minimum(i32, 1.5),
        "arctan2_int_float": lambda: fnp.arctan2(i32, f32),
        "matmul_bool": lambda: fnp.matmul(f32 > 1, f32 > 2),
        "stack_equal": lambda: fnp.stack([f32, f32]),
    }
