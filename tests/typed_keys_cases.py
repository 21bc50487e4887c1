"""Typed PRNG key arrays (``random.key``) cases, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/typed_keys_jax.npz`` was recorded, ``functrace`` in
tests/test_random_typed_keys.py. Shapes, the key data after ``split``/``fold_in``/
reshaping/indexing and the ``numpy`` functions that move keys, samplers on typed keys
(and the same samplers on the raw key), keys through ``jit``/``vmap``/``scan``/``cond``/
``while_loop``/``fori_loop``/``grad``, and the exception classes of misuses. Nothing here
imports JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _error(f: Callable[[], Any]) -> np.ndarray:
    """The class name of the exception ``f`` raises ('none' if it returns)."""
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class is the recorded value
        return np.array(type(e).__name__)
    return np.array("none")


def cases(lib: Any) -> dict[str, np.ndarray]:
    R, fnp, lax = lib.random, lib.numpy, lib.lax
    data = R.key_data
    out: dict[str, Any] = {}
    k = R.key(0)
    ks = R.split(k, 4)
    k23 = R.split(R.key(7), (2, 3))
    raw = R.PRNGKey(0)

    # shapes, dtypes and key data
    out["shape/key"] = np.array(k.shape, np.int64)
    out["shape/split4"] = np.array(ks.shape, np.int64)
    out["shape/split23"] = np.array(k23.shape, np.int64)
    out["size_ndim_len"] = np.array([k23.size, k23.ndim, len(k23), len(ks)])
    out["dtype_str"] = np.array(str(k.dtype))
    out["is_prng_key"] = np.array(
        [
            fnp.issubdtype(k.dtype, lib.dtypes.prng_key),
            fnp.issubdtype(ks.dtype, lib.dtypes.extended),
            fnp.issubdtype(k.dtype, np.integer),
            fnp.issubdtype(raw.dtype, lib.dtypes.prng_key),
            R.key_dtype() == k.dtype,
        ]
    )
    out["repr/key"] = np.array(repr(R.key(3)))
    out["repr/split"] = np.array(repr(R.split(R.key(3), 2)))
    out["impl"] = np.array([R.key_impl(k), R.key_impl(raw)])
    out["data/key"] = data(k)
    out["data/key_seed"] = data(R.key(2**40 + 5))
    out["data/split4"] = data(ks)
    out["data/split23"] = data(k23)
    out["data/fold_in"] = data(R.fold_in(k, 12345))
    out["data/split_of_item"] = data(R.split(ks[2], 3))
    out["data/clone"] = data(R.clone(ks[1]))
    out["data/raw_split"] = R.split(raw, 4)
    out["data/raw_of_raw"] = data(raw)
    out["data/wrap"] = data(R.split(R.wrap_key_data(np.array([1, 2], np.uint32)), 2))
    out["wrap_shape"] = np.array(R.wrap_key_data(data(k23)).shape, np.int64)

    # indexing, methods and the numpy functions on keys
    out["idx/int"] = data(ks[1])
    out["idx/neg"] = data(ks[-1])
    out["idx/slice"] = data(ks[1:3])
    out["idx/step"] = data(ks[::-2])
    out["idx/2d"] = data(k23[1, 2])
    out["idx/ellipsis"] = data(k23[..., 1])
    out["idx/none"] = data(ks[None, 1:, None])
    out["idx/fancy"] = data(ks[np.array([3, 0, 3])])
    out["idx/mask"] = data(ks[np.array([True, False, True, False])])
    out["iter"] = np.stack([data(x) for x in ks])
    out["meth/reshape"] = data(ks.reshape(2, 2))
    out["meth/reshape_tuple"] = data(k23.reshape((3, -1)))
    out["meth/ravel"] = data(k23.ravel())
    out["meth/flatten"] = data(k23.flatten())
    out["meth/squeeze"] = data(ks.reshape(1, 4, 1).squeeze())
    out["meth/squeeze_axis"] = data(ks.reshape(1, 4, 1).squeeze(-1))
    out["meth/T"] = data(k23.T)
    out["meth/transpose"] = data(k23.transpose(1, 0))
    out["meth/swapaxes"] = data(k23.swapaxes(0, -1))
    out["meth/take"] = data(ks.take(np.array([2, 0])))
    out["meth/block"] = data(k.block_until_ready())
    out["eq"] = np.stack([ks == ks[1], ks != ks[1]])
    out["np/stack"] = data(fnp.stack([ks, ks[::-1]], axis=-1))
    out["np/stack0d"] = data(fnp.stack([k, ks[0]]))
    out["np/concatenate"] = data(fnp.concatenate([ks, ks[:2]]))
    out["np/concatenate_ax"] = data(fnp.concatenate([k23, k23[:, :1]], axis=-1))
    cond = np.array([True, False, False, True])
    out["np/where"] = data(fnp.where(cond, ks, ks[::-1]))
    out["np/where_bcast"] = data(fnp.where(cond, k, ks))
    out["lax/select"] = data(lax.select(cond, ks, ks[::-1]))
    out["np/reshape"] = data(fnp.reshape(k23, (3, 2)))
    out["np/expand_dims"] = data(fnp.expand_dims(ks, -1))
    out["np/squeeze"] = data(fnp.squeeze(ks[None]))
    out["np/broadcast_to"] = data(fnp.broadcast_to(k, (2, 3)))
    out["np/take"] = data(fnp.take(k23, np.array([2, 0]), axis=1))
    out["np/transpose"] = data(fnp.transpose(k23))
    out["np/ravel"] = data(fnp.ravel(k23))
    out["np/moveaxis"] = data(fnp.moveaxis(k23, 0, -1))
    out["np/swapaxes"] = data(fnp.swapaxes(k23, 0, 1))
    out["np/flip"] = data(fnp.flip(k23, axis=1))
    out["np/asarray"] = data(fnp.asarray(ks))
    # the functions that repeat, drop or fill (with the zero key) whole keys
    mask = np.array([True, False, True, True])
    for name, f in (
        ("tile", lambda: fnp.tile(ks, (2, 1))),
        ("repeat", lambda: fnp.repeat(k23, 2, axis=1)),
        ("roll", lambda: fnp.roll(k23, 1, axis=1)),
        ("rot90", lambda: fnp.rot90(k23)),
        ("fliplr", lambda: fnp.fliplr(k23)),
        ("flipud", lambda: fnp.flipud(ks)),
        ("rollaxis", lambda: fnp.rollaxis(k23, 1)),
        ("atleast_1d", lambda: fnp.atleast_1d(k)),
        ("atleast_2d", lambda: fnp.atleast_2d(ks)),
        ("atleast_3d", lambda: fnp.atleast_3d(ks)),
        ("broadcast_arrays", lambda: fnp.broadcast_arrays(k, ks)[0]),
        ("hstack", lambda: fnp.hstack([ks, ks[:1]])),
        ("vstack", lambda: fnp.vstack([ks, ks])),
        ("dstack", lambda: fnp.dstack([ks, ks])),
        ("column_stack", lambda: fnp.column_stack([ks, ks])),
        ("block", lambda: fnp.block([[k23, k23[:, :1]]])),
        ("append", lambda: fnp.append(ks, k)),
        ("insert", lambda: fnp.insert(ks, 1, k)),
        ("delete", lambda: fnp.delete(ks, np.array([0, 2]))),
        ("resize", lambda: fnp.resize(ks, (3, 3))),
        ("zeros_like", lambda: fnp.zeros_like(ks)),
        ("full_like", lambda: fnp.full_like(k23, ks[2])),
        ("tril", lambda: fnp.tril(k23)),
        ("triu", lambda: fnp.triu(k23, 1)),
        ("diagonal", lambda: fnp.diagonal(k23)),
        ("take_along_axis", lambda: fnp.take_along_axis(k23, np.array([[2], [0]]), 1)),
        ("choose", lambda: fnp.choose(np.array([1, 0, 1]), [k23[0], k23[1]])),
        ("compress", lambda: fnp.compress(mask, ks)),
        ("extract", lambda: fnp.extract(mask, ks)),
        ("matrix_transpose", lambda: fnp.matrix_transpose(k23)),
        ("jit_roll", lambda: lib.jit(lambda a, s: fnp.roll(a, s))(ks, 3)),
        ("jit_tril", lambda: lib.jit(fnp.tril)(k23)),
        ("vmap_roll", lambda: lib.vmap(lambda a: fnp.roll(a, 1))(k23)),
        ("vmap_hstack", lambda: lib.vmap(lambda a: fnp.hstack([a, a[::-1]]))(k23)),
    ):
        out[f"np/{name}"] = data(f())
    out["np/split"] = np.stack([data(a) for a in fnp.split(ks, 2)])
    out["np/array_split"] = np.concatenate([data(a) for a in fnp.array_split(ks, 3)])
    out["np/unstack"] = np.stack([data(a) for a in fnp.unstack(k23, axis=1)])
    out["np/zeros_like_dtype"] = fnp.zeros_like(ks, dtype=np.float32)
    out["np/full_like_dtype"] = fnp.full_like(k23, 3.0, dtype=np.float64)
    out["np/isin"] = fnp.isin(ks, ks[1:3])
    out["np/isin_invert"] = fnp.isin(k23, ks, invert=True)
    # lax's structural functions move whole keys too
    for name, f in (
        ("concatenate", lambda: lax.concatenate([k23, k23], 1)),
        ("rev", lambda: lax.rev(k23, (1,))),
        ("broadcast_in_dim", lambda: lax.broadcast_in_dim(k23, (4, 2, 3), (1, 2))),
        ("broadcast", lambda: lax.broadcast(ks, (2,))),
        ("reshape", lambda: lax.reshape(k23, (3, 2))),
        ("transpose", lambda: lax.transpose(k23, (1, 0))),
        ("squeeze", lambda: lax.squeeze(k23[None], (0,))),
        ("expand_dims", lambda: lax.expand_dims(k23, (-1,))),
        ("slice", lambda: lax.slice(k23, (0, 1), (2, 3), (1, 2))),
        ("slice_in_dim", lambda: lax.slice_in_dim(k23, 0, 2, axis=-1)),
        ("index_in_dim", lambda: lax.index_in_dim(k23, 1, axis=1, keepdims=False)),
        ("collapse", lambda: lax.collapse(k23, 0)),
        ("full_like", lambda: lax.full_like(k23, ks[1])),
        ("jit_concatenate", lambda: lib.jit(lambda a: lax.concatenate([a, a[::-1]], 0))(ks)),
        ("vmap_rev", lambda: lib.vmap(lambda a: lax.rev(a, (0,)))(k23)),
        ("vmap_transpose", lambda: lib.vmap(lambda a: lax.transpose(a, (1, 0)))(k23[None])),
    ):
        out[f"lax/{name}"] = data(f())
    es = lib.eval_shape(lambda a: (R.split(a[0], 3), R.normal(a[1], (2,)), a), ks)
    out["eval_shape/shapes"] = np.array([list(e.shape) + [0] * (2 - e.ndim) for e in es])
    out["eval_shape/dtypes"] = np.array([str(e.dtype) for e in es])
    spec = lib.ShapeDtypeStruct((2, 3), k.dtype)
    es2 = lib.eval_shape(lambda a: (a.T, R.uniform(a[0, 0])), spec)
    out["eval_shape/spec"] = np.array([str(e.dtype) + str(e.shape) for e in es2])
    out["jit/take_out_of_bounds"] = data(lib.jit(fnp.take)(ks, np.array([1, 9, -2])))
    out["jit/isin"] = lib.jit(fnp.isin)(ks, ks[::2])
    out["err/hstack_raw"] = _error(lambda: fnp.hstack([ks, data(ks)]))

    # samplers: typed and raw keys give the same bits
    for name, f in (
        ("normal", lambda key: R.normal(key, (3,))),
        ("uniform32", lambda key: R.uniform(key, (3,), np.float32)),
        ("bits", lambda key: R.bits(key, (3,), np.uint32)),
        ("randint", lambda key: R.randint(key, (3,), 0, 100)),
        ("gamma", lambda key: R.gamma(key, 2.5, (3,))),
        ("permutation", lambda key: R.permutation(key, 5)),
        ("bernoulli", lambda key: R.bernoulli(key, 0.3, (4,))),
        (
            "categorical",
            lambda key: R.categorical(key, np.log(np.array([0.2, 0.3, 0.5])), shape=(4,)),
        ),
    ):
        out[f"sample/{name}"] = f(ks[1])
        out[f"sample_raw/{name}"] = f(data(ks[1]))

    # transforms
    out["jit/split"] = data(lib.jit(lambda key: R.split(key, 3))(k))
    out["jit/key_from_seed"] = data(lib.jit(R.key)(11))
    out["jit/normal"] = lib.jit(lambda key: R.normal(key, (2,)))(ks[0])
    out["jit/batch"] = data(lib.jit(lambda key: R.split(key[1], 2))(ks))
    out["jit/index"] = data(lib.jit(lambda key, i: key[i])(ks, 2))
    out["jit/where"] = data(lib.jit(lambda c, a, b: fnp.where(c, a, b))(cond, ks, ks[::-1]))
    out["vmap/normal"] = lib.vmap(lambda key: R.normal(key, (2,)))(ks)
    out["vmap/split"] = data(lib.vmap(R.split)(ks))
    out["vmap/split_out1"] = data(lib.vmap(R.split, out_axes=1)(ks))
    out["vmap/split_out_neg"] = data(lib.vmap(R.split, out_axes=-1)(ks))
    out["vmap/in_neg"] = lib.vmap(lambda key: R.normal(key), in_axes=-1)(k23[0])
    out["vmap/in1"] = lib.vmap(lambda key: R.uniform(key[0]), in_axes=1)(k23)
    out["vmap/fold_in"] = data(lib.vmap(R.fold_in, in_axes=(None, 0))(k, np.arange(3)))
    out["vmap/shape"] = np.array(lib.vmap(lambda key: R.split(key, 5))(k23[0]).shape, np.int64)

    def scan_body(c: Any, x: Any) -> Any:
        c, sub = R.split(c)
        return c, (R.normal(sub), R.uniform(x))

    last, (ys, us) = lax.scan(scan_body, k, ks)
    out["scan/carry"] = data(last)
    out["scan/ys"] = ys
    out["scan/us"] = us
    out["scan/key_out"] = data(lax.scan(lambda c, _: (c, R.fold_in(c, 1)), k, None, length=3)[1])
    out["cond"] = data(lax.cond(True, lambda a: R.split(a)[1], lambda a: a, k))
    out["cond_false"] = data(lax.cond(False, lambda a: R.split(a)[1], lambda a: a, k))
    w = lax.while_loop(lambda c: c[1] < 3, lambda c: (R.split(c[0])[0], c[1] + 1), (k, 0))
    out["while"] = data(w[0])
    out["fori"] = data(lax.fori_loop(0, 3, lambda i, c: R.fold_in(c, i), k))
    out["grad_nondiff_key"] = lib.grad(lambda x, key: x * R.normal(key))(2.0, ks[3])
    out["jit_grad_key"] = lib.jit(lib.grad(lambda x, key: (x * R.normal(key, (2,))).sum()))(
        np.ones(2), k
    )
    out["tree_leaves_count"] = np.array(len(lib.tree_util.tree_leaves({"a": k, "b": [ks, 1.0]})))
    out["tree_map_shape"] = np.array(lib.tree_util.tree_map(lambda a: a, {"a": ks})["a"].shape)

    # misuses: the exception classes
    out["err/add"] = _error(lambda: k + 1)
    out["err/radd"] = _error(lambda: 1 + ks)
    out["err/mul"] = _error(lambda: ks * ks)
    out["err/lt"] = _error(lambda: k < k)
    out["err/neg"] = _error(lambda: -k)
    out["err/asarray"] = _error(lambda: np.asarray(k))
    out["err/array"] = _error(lambda: np.array(ks))
    out["err/len0"] = _error(lambda: len(k))
    out["err/iter0"] = _error(lambda: list(k))
    out["err/hash"] = _error(lambda: hash(k))
    out["err/eq_raw"] = _error(lambda: k == raw)
    out["err/sum"] = _error(lambda: fnp.sum(ks))
    out["err/batch_normal"] = _error(lambda: R.normal(ks, (2,)))
    out["err/batch_split"] = _error(lambda: R.split(ks))
    out["err/batch_fold_in"] = _error(lambda: R.fold_in(ks, 1))
    out["err/key_of_key"] = _error(lambda: R.key(k))
    out["err/key_of_array"] = _error(lambda: R.key(np.arange(3)))
    out["err/wrap_bad_shape"] = _error(lambda: R.wrap_key_data(np.zeros((4, 3), np.uint32)))
    out["err/wrap_bad_dtype"] = _error(lambda: R.wrap_key_data(np.zeros((4, 2), np.int32)))
    out["err/wrap_typed"] = _error(lambda: R.wrap_key_data(k))
    out["err/grad_argnums_key"] = _error(lambda: lib.grad(lambda x, key: x, argnums=1)(1.0, k))
    out["err/grad_key_in_tuple"] = _error(
        lambda: lib.grad(lambda p: p[0] * R.normal(p[1]))((1.0, k))
    )
    return {key: np.asarray(v) for key, v in out.items()}
