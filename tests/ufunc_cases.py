"""The ufunc methods of JAX's fourteen ufuncs and ``frompyfunc``, run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/ufunc_jax.npz`` was recorded, ``functrace`` in tests/test_ufuncs.py:
``reduce`` (axes, ``keepdims``, ``initial``, ``where``, ``dtype``), ``accumulate``,
``outer``, ``at`` (repeated indices, slices, unary) and ``reduceat`` (decreasing
indices) of every ufunc, on floats, integers and booleans, a ``frompyfunc`` ufunc, and
gradients through the generic loops. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(3)
A = _rng.standard_normal((3, 4))
V = _rng.standard_normal(7)
I = np.array([[5, 3, 6, 12], [9, 10, 7, 3], [14, 1, 8, 6]])  # noqa: E741
B = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])
MASK = np.array([[True, False, True, True]] * 3)
NAMES = [
    "add", "multiply", "subtract", "maximum", "minimum", "logaddexp", "logaddexp2",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
]  # fmt: skip
LOGICAL = {"logical_and", "logical_or", "logical_xor"}
BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor"}


def cases(lib: Any) -> dict[str, np.ndarray]:
    fnp = lib.numpy
    out: dict[str, Any] = {}
    for name in NAMES:
        u = getattr(fnp, name)
        x = B if name in LOGICAL else I if name in BITWISE else A
        out[f"{name}/reduce0"] = u.reduce(x)
        out[f"{name}/reduce1_keepdims"] = u.reduce(x, axis=1, keepdims=True)
        out[f"{name}/reduce_none"] = u.reduce(x, axis=None)
        out[f"{name}/accumulate1"] = u.accumulate(x, axis=1)
        out[f"{name}/outer"] = u.outer(x[0], x[1, :3])
        out[f"{name}/reduceat"] = u.reduceat(x, np.array([0, 2, 1, 3]), axis=1)
        if u.identity is not None or name in ("maximum", "minimum"):
            init = {"logical_and": True, "logical_or": False, "logical_xor": True}.get(
                name, 1.0 if x is A else 1
            )
            out[f"{name}/reduce_where"] = u.reduce(x, axis=1, where=MASK, initial=init)
        if name not in LOGICAL:
            vals = x[0, :3]
            out[f"{name}/at_repeated"] = u.at(x[1], np.array([0, 2, 0]), vals, inplace=False)
            pairs = (np.array([0, 2, 0]), np.array([1, 1, 1]))
            out[f"{name}/at_pairs"] = u.at(x, pairs, 2, inplace=False)
    out["add/reduce_tuple"] = fnp.add.reduce(A, axis=(0, 1))
    out["add/reduce_bool"] = fnp.add.reduce(B, axis=0)
    out["add/reduce_dtype"] = fnp.add.reduce(I, axis=0, dtype=np.float32)
    out["multiply/accumulate_int"] = fnp.multiply.accumulate(I[0])
    out["maximum/reduce_empty_initial"] = fnp.maximum.reduce(np.zeros((0, 2)), initial=-5.0)
    out["add/reduce_empty"] = fnp.add.reduce(np.zeros((0, 2)))
    out["negative/at"] = fnp.negative.at(V, np.array([1, 1, 4]), inplace=False)
    out["subtract/reduce_1d"] = fnp.subtract.reduce(V)
    out["subtract/outer_3d"] = fnp.subtract.outer(A[:2, :2], V[:3])
    hyp = fnp.frompyfunc(lambda x, y: fnp.sqrt(x * x + y * y), nin=2, nout=1)
    out["frompyfunc/call"] = hyp(A[0], A[1])
    out["frompyfunc/reduce"] = hyp.reduce(A, axis=1)
    out["frompyfunc/accumulate"] = hyp.accumulate(V)
    out["frompyfunc/outer"] = hyp.outer(V[:3], V[3:5])
    out["frompyfunc/at"] = hyp.at(V, np.array([0, 0, 3]), 2.0, inplace=False)
    out["frompyfunc/reduceat"] = hyp.reduceat(V, np.array([0, 3, 2]))
    muladd = fnp.frompyfunc(lambda x, y: x * y + 1, nin=2, nout=1, identity=None)
    out["frompyfunc/int_reduce"] = muladd.reduce(I, axis=0)
    g = lib.grad(lambda a: (fnp.subtract.accumulate(a, axis=1) ** 2).sum())
    out["grad/subtract_accumulate"] = g(A)
    g = lib.grad(lambda a: fnp.logaddexp.reduce(a, axis=0).sum())
    out["grad/logaddexp_reduce"] = g(A)
    g = lib.grad(lambda v: hyp.reduce(v))
    out["grad/frompyfunc_reduce"] = g(V)
    g = lib.grad(lambda v: (fnp.multiply.at(v, np.array([1, 1, 2]), 3.0, inplace=False) ** 2).sum())
    out["grad/multiply_at"] = g(V)
    g = lib.grad(lambda v: fnp.maximum.reduceat(v, np.array([0, 3, 5])).sum())
    out["grad/maximum_reduceat"] = g(V)
    return {k: np.asarray(v) for k, v in out.items()}
