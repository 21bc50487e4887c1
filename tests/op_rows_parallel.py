"""Op-table rows: the collectives over named axes (``functrace/lax/parallel.py``).

A collective only means something inside ``vmap(..., axis_name=...)``, so each row's
function is a named ``vmap`` over axis 0 of its first argument that calls the
collective; the batteries then take its gradients, ``jit`` and ``vmap`` it (the
outer ``vmap`` of the battery is unnamed). The NumPy references loop over the
examples, written independently of the batching rules.
"""

from __future__ import annotations

import numpy as np

import functrace as ft
import functrace.lax as lax
import functrace.numpy as fnp
from functrace.sharding import PartitionSpec as P
from op_db import F, OpInfo

_MESH = ft.make_mesh((2,), ("i",))


def _sharded_grad(w, x, *, mean: bool):  # type: ignore[no-untyped-def]
    """The gradient of sum(tanh(x @ w)) taken inside a shard_map body over the rows of
    x, w replicated: JAX's check_vma types sum it over the shards (pmean: a mean)."""

    def body(w, xs):  # type: ignore[no-untyped-def]
        def loss(w):  # type: ignore[no-untyped-def]
            s = fnp.sum(fnp.tanh(xs @ w))
            return lax.pmean(s, "i") if mean else s

        return ft.grad(loss)(w)

    return ft.shard_map(body, mesh=_MESH, in_specs=(P(), P("i")), out_specs=P())(w, x)


def _sharded_grad_ref(w, x, *, mean: bool):  # type: ignore[no-untyped-def]
    w, x = np.asarray(w), np.asarray(x)
    total = np.zeros_like(w)
    for xs in np.split(x, 2):
        total = total + xs.T @ (1.0 - np.tanh(xs @ w) ** 2)
    return total / 2 if mean else total


def _named(f, **kw):  # type: ignore[no-untyped-def]
    return ft.vmap(f, axis_name="i", **kw)


def _each(x: np.ndarray, per_example) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Stack ``per_example(k, x)`` over the examples ``k`` of axis 0."""
    x = np.asarray(x)
    return np.stack([np.asarray(per_example(k, x)) for k in range(x.shape[0])])


def _total(x: np.ndarray) -> np.ndarray:
    acc = np.zeros_like(x[0])
    for k in range(x.shape[0]):
        acc = acc + x[k]
    return acc


def _extreme(x: np.ndarray, pick) -> np.ndarray:  # type: ignore[no-untyped-def]
    acc = x[0]
    for k in range(1, x.shape[0]):
        acc = pick(acc, x[k])
    return acc


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    e = np.exp(np.asarray(x))
    return _each(e, lambda k, e: e[k] / _total(e))


ROWS: list[OpInfo] = [
    OpInfo(
        "lax.psum (vmap axis_name)",
        lambda x: _named(lambda r: r * lax.psum(r, "i"))(x),
        lambda x: _each(x, lambda k, x: x[k] * _total(x)),
        (F,),
        ("psum",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.psum of an unbatched value",
        lambda x, c: _named(lambda r, c: r * lax.psum(c * c, "i"), in_axes=(0, None))(x, c),
        lambda x, c: _each(x, lambda k, x: x[k] * (x.shape[0] * c * c)),
        (F, F),
        ("psum",),
        shapes=((3, 2), (2,)),
    ),
    OpInfo(
        "lax.psum softmax over the named axis",
        lambda x: _named(lambda r: fnp.exp(r) / lax.psum(fnp.exp(r), "i"))(x),
        _softmax_ref,
        (F,),
        ("psum",),
        shapes=((4,),),
    ),
    OpInfo(
        "lax.psum over two named axes",
        lambda x: ft.vmap(
            ft.vmap(lambda r: r * lax.psum(r, ("i", "j")), axis_name="j"), axis_name="i"
        )(x),
        lambda x: np.asarray(x) * _total(_total(np.asarray(x))),
        (F,),
        ("psum",),
        shapes=((2, 3),),
    ),
    OpInfo(
        "lax.pmean (x - pmean(x))",
        lambda x: _named(lambda r: r - lax.pmean(r, "i") ** 2)(x),
        lambda x: _each(x, lambda k, x: x[k] - (_total(x) / x.shape[0]) ** 2),
        (F,),
        ("psum",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.pmax",
        lambda x: _named(lambda r: r * lax.pmax(r, "i"))(x),
        lambda x: _each(x, lambda k, x: x[k] * _extreme(x, np.maximum)),
        (F,),
        ("pmax",),
        shapes=((3, 2),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.pmin",
        lambda x: _named(lambda r: r * lax.pmin(r, "i"))(x),
        lambda x: _each(x, lambda k, x: x[k] * _extreme(x, np.minimum)),
        (F,),
        ("pmin",),
        shapes=((3, 2),),
        avoid_ties=True,
    ),
    OpInfo(
        "lax.all_gather",
        lambda x: _named(lambda r: r * lax.all_gather(r, "i"))(x),
        lambda x: _each(x, lambda k, x: x[k] * x),
        (F,),
        ("all_gather",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.all_gather tiled axis=1",
        lambda x: _named(lambda r: lax.all_gather(r * r, "i", axis=1, tiled=True))(x),
        lambda x: _each(x, lambda k, x: np.concatenate([x[j] ** 2 for j in range(3)], axis=1)),
        (F,),
        ("all_gather",),
        shapes=((3, 2, 2),),
    ),
    OpInfo(
        "shard_map grad of a pmean (check_vma)",
        lambda w, x: _sharded_grad(w, x, mean=True),
        lambda w, x: _sharded_grad_ref(w, x, mean=True),
        (F, F),
        ("psum",),
        shapes=((3,), (4, 3)),
    ),
    OpInfo(
        "shard_map grad summed over shards (check_vma)",
        lambda w, x: _sharded_grad(w, x, mean=False),
        lambda w, x: _sharded_grad_ref(w, x, mean=False),
        (F, F),
        ("psum",),
        shapes=((3,), (4, 3)),
    ),
    OpInfo(
        "lax.axis_index",
        lambda x: _named(lambda r: r * lax.convert_element_type(lax.axis_index("i"), r.dtype))(x),
        lambda x: _each(x, lambda k, x: x[k] * k),
        (F,),
        ("axis_index",),
        shapes=((3, 2),),
    ),
    OpInfo(
        "lax.psum_scatter",
        lambda x: _named(lambda r: r[0] * lax.psum_scatter(r * r, "i"))(x),
        lambda x: _each(x, lambda k, x: x[k, 0] * _total(x * x)[k]),
        (F,),
        ("psum", "axis_index"),
        shapes=((3, 3, 2),),
    ),
    OpInfo(
        "lax.ppermute",
        lambda x: _named(lambda r: r * lax.ppermute(r, "i", [(0, 2), (2, 1)]))(x),
        lambda x: _each(x, lambda k, x: x[k] * {2: x[0], 1: x[2]}.get(k, np.zeros_like(x[0]))),
        (F,),
        ("all_gather", "axis_index"),
        shapes=((3, 2),),
    ),
]
