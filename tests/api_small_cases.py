"""Cases for the small JAX names (``jax.dtypes.result_type``), run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/api_small_jax.npz`` was recorded, ``functrace`` in
tests/test_api_small.py. ``result_type/dtype`` and ``result_type/weak`` hold, for every
pair of ``OPERANDS`` (each dtype as an array dtype, and the Python scalars ``True``,
``1``, ``1.0``, ``1j``), the promoted dtype's name and its weak flag. Nothing here
imports JAX.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
OPERANDS: list[Any] = [np.dtype(d) for d in DTYPES] + [True, 1, 1.0, 1j]
PAIRS = list(itertools.combinations_with_replacement(range(len(OPERANDS)), 2))


def cases(lib: Any) -> dict[str, np.ndarray]:
    rt = lib.dtypes.result_type
    got = [rt(OPERANDS[i], OPERANDS[j], return_weak_type_flag=True) for i, j in PAIRS]
    return {
        "result_type/dtype": np.array([np.dtype(d).name for d, _ in got]),
        "result_type/weak": np.array([bool(w) for _, w in got]),
    }


# (mesh shape, axis names, array shape, spec entries, visualize_sharding options)
SHARDINGS: list[tuple[Any, ...]] = [
    ((4, 2), ("a", "b"), (8, 4), ("a", "b"), {}),
    ((4, 2), ("a", "b"), (8, 4), ("a",), {}),
    ((4, 2), ("a", "b"), (8, 4), ("b", "a"), {}),
    ((4, 2), ("a", "b"), (8, 4), (), {}),
    ((4, 2), ("a", "b"), (8,), (("a", "b"),), {}),
    ((4, 2), ("a", "b"), (8,), ("b",), {}),
    ((2, 4), ("x", "y"), (16, 24), (None, "y"), {}),
    ((2, 4), ("x", "y"), (6, 8), ("x", "y"), {"scale": 2.0}),
    ((8,), ("i",), (64, 8), ("i",), {"min_width": 12, "max_width": 40}),
    ((2, 2, 2), ("p", "q", "r"), (4, 6), (("r", "p"), None), {}),
]


def visualize_cases(lib: Any, capture: Any) -> dict[str, np.ndarray]:
    """``debug.visualize_sharding`` of each of ``SHARDINGS`` (8 devices), and
    ``visualize_array_sharding`` of a one-device array, as the printed text (``capture(f)``
    runs ``f`` and returns what it printed)."""
    out: dict[str, np.ndarray] = {}
    for k, (mshape, names, shape, spec, opts) in enumerate(SHARDINGS):
        mesh = lib.make_mesh(mshape, names)
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec(*spec))
        out[f"visualize/{k}"] = np.array(
            capture(
                lambda s=s, shape=shape, opts=opts: lib.debug.visualize_sharding(shape, s, **opts)
            )
        )
    x = lib.numpy.ones((3, 5))
    out["visualize/array"] = np.array(capture(lambda: lib.debug.visualize_array_sharding(x)))
    return out


_rng = np.random.default_rng(7)
# (lhs shape, rhs shape, strides, padding, filter_shape, lhs_dilation, rhs_dilation, layouts)
LOCAL_CONVS: list[tuple[Any, ...]] = [
    ((2, 3, 5, 6), (4, 18, 4, 4), (1, 1), "VALID", (2, 3), None, None, None),
    ((2, 5, 6, 3), (3, 6, 18, 4), (2, 1), "SAME", (3, 2), None, (1, 2),
     ("NHWC", "HWIO", "NHWC")),
    ((2, 6, 5, 3), (11, 12, 4, 3), (1, 2), ((1, 0), (0, 2)), (2, 2), (2, 1), None,
     ("NWHC", "WIOH", "HNCW")),
    ((1, 2, 7), (3, 6, 3), (2,), "VALID", (3,), None, None, None),
]  # fmt: skip
LOCAL_ARGS = [(_rng.standard_normal(c[0]), _rng.standard_normal(c[1])) for c in LOCAL_CONVS]
# (lhs shape, rhs shape, group sizes, ((contracting), (batch)), ragged dim, group dims,
# gradients: JAX 0.10.2 differentiates the ragged-free-dimension mode only)
RAGGED: list[tuple[Any, ...]] = [
    ((5, 3), (3, 3, 2), [1, 0, 3], (((1,), (1,)), ((), ())), (0,), (0,), True),
    ((2, 5), (5, 3), [2, 1, 1], (((1,), (0,)), ((), ())), (1,), (), False),
    ((2, 4, 3), (2, 3, 3, 2), [1, 2, 1], (((2,), (2,)), ((0,), (0,))), (1,), (1,), True),
    ((3, 4, 2), (3, 2, 5), [1, 2], (((2,), (1,)), ((0,), (0,))), (0,), (), False),
    ((6, 2), (2, 3, 4), [2, 3, 1, 0], (((1,), (0,)), ((), ())), (0,), (2,), True),
]
RAGGED_ARGS = [(_rng.standard_normal(c[0]), _rng.standard_normal(c[1])) for c in RAGGED]


def lax_cases(lib: Any) -> dict[str, np.ndarray]:
    """``lax.conv_general_dilated_local`` and ``lax.ragged_dot_general`` values and the
    gradients of ``sum(out * cos(out))`` in both operands (where JAX has them), in
    float64 and float32, ``conv_transpose_shape_tuple``/``reduce_window_shape_tuple``
    for a few shapes, and ``rng_bit_generator`` (new key and bits) for each of
    ``RNG_KEYS`` and ``RNG_SHAPES``, with ``RNG_THREE_FRY`` and ``RNG_PHILOX`` in every
    unsigned dtype and with ``RNG_DEFAULT`` in uint32."""
    lax, out = lib.lax, {}

    def record(name: str, f: Any, a: np.ndarray, b: np.ndarray, grads: bool = True) -> None:
        for dt in (np.float64, np.float32):
            a_, b_ = a.astype(dt), b.astype(dt)
            tag = f"lax/{name}/{np.dtype(dt).name}"
            out[f"{tag}/value"] = np.asarray(f(a_, b_))
            if not grads:
                continue
            loss = lambda u, v: (f(u, v) * lib.numpy.cos(f(u, v))).sum()  # noqa: E731
            ga, gb = lib.grad(loss, argnums=(0, 1))(a_, b_)
            out[f"{tag}/grad_lhs"], out[f"{tag}/grad_rhs"] = np.asarray(ga), np.asarray(gb)

    for k, (case, (a, b)) in enumerate(zip(LOCAL_CONVS, LOCAL_ARGS)):
        _, _, st, pad, fs, ld, rd, dn = case
        f = lambda u, v, st=st, pad=pad, fs=fs, ld=ld, rd=rd, dn=dn: (  # noqa: E731
            lax.conv_general_dilated_local(u, v, st, pad, fs, ld, rd, dn)
        )
        record(f"local{k}", f, a, b)
    for k, (case, (a, b)) in enumerate(zip(RAGGED, RAGGED_ARGS)):
        _, _, sizes, dims, ragged, group, grads = case
        rdn = lax.RaggedDotDimensionNumbers(dims, ragged, group)
        gs = np.array(sizes, np.int32)
        f = lambda u, v, rdn=rdn, gs=gs: lax.ragged_dot_general(u, v, gs, rdn)  # noqa: E731
        record(f"ragged{k}", f, a, b, grads)
    shapes = [
        lax.conv_transpose_shape_tuple((1, 4, 3), (2, 3, 5), (2,), "SAME", ("NHC", "HIO", "NHC")),
        lax.conv_transpose_shape_tuple(
            (1, 7, 9, 3), (3, 3, 3, 5), (2, 3), "VALID", ("NHWC", "HWIO", "NHWC")
        ),
        lax.conv_transpose_shape_tuple(
            (1, 3, 7, 9), (5, 3, 2, 4), (3, 2), ((1, 2), (0, 1)), ("NCHW", "OIHW", "NHWC")
        ),
        lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), ((0, 0), (1, 1))),
        lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), ((0, 0), (1, 1)), (2, 1), (1, 2)),
        lax.reduce_window_shape_tuple((4,), (9,), (1,), ((0, 0),)),
    ]
    for k, s in enumerate(shapes):
        out[f"lax/shape{k}"] = np.array([int(d) for d in s], np.int64)
    for alg in ("RNG_THREE_FRY", "RNG_PHILOX", "RNG_DEFAULT"):
        dts = ("uint32",) if alg == "RNG_DEFAULT" else ("uint8", "uint16", "uint32", "uint64")
        for k, key in enumerate(RNG_KEYS):
            for shape in RNG_SHAPES:
                for dt in dts:
                    new, bits = lax.rng_bit_generator(
                        key, shape, np.dtype(dt), getattr(lax.RandomAlgorithm, alg)
                    )
                    tag = f"lax/{alg}/{k}/{'x'.join(map(str, shape)) or 'scalar'}/{dt}"
                    out[f"{tag}/key"], out[f"{tag}/bits"] = np.asarray(new), np.asarray(bits)
    return out


# rng_bit_generator keys (uint32[4] with a state about to carry into its high word,
# one about to pass 2**64, and uint64[2]) and shapes (each split case of Threefry's
# layout: an even first dimension, a later one, none, a scalar, an empty array)
RNG_KEYS = [
    np.array([1, 2, 0xFFFFFFFE, 4], np.uint32),
    np.array([7, 9, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32),
    np.array([5, 2**63 + 3], np.uint64),
]
RNG_SHAPES = [(8,), (3,), (4, 3), (3, 4), (3, 3), (2, 2, 2), (), (0,)]
