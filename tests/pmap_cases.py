"""``pmap`` programs on fixed inputs, run under JAX and under functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, on 4
host devices: ``XLA_FLAGS=--xla_force_host_platform_device_count=4``) when
``tests/fixtures/pmap_jax.npz`` was recorded, ``functrace`` in tests/test_pmap.py.
The programs are the ways JAX programs use ``pmap``: an elementwise map, collectives
over the named axis (``psum``, ``pmean``, ``all_gather``, ``axis_index``, a ring
``ppermute``), ``in_axes``/``out_axes`` (``None`` included), static and keyword
arguments, pytrees, derivatives through and inside it, a data-parallel training step
(replicated parameters, sharded batch, ``pmean`` of the gradients), a ``vmap`` around
it with both names, and ``jit`` of it. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N = 4  # the devices JAX maps over when recording
_rng = np.random.default_rng(7)
X = _rng.standard_normal(N)
XM = _rng.standard_normal((N, 3))
XB = _rng.standard_normal((N, 5, 3))  # a batch of 5 examples per device
YB = _rng.standard_normal((N, 5))
W0 = _rng.standard_normal(3)


def cases(lib: Any) -> dict[str, Any]:
    pmap, lax, fnp = lib.pmap, lib.lax, lib.numpy
    out: dict[str, Any] = {}
    out["square"] = pmap(lambda x: x**2)(X)
    out["normalise"] = pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(X)
    out["center_rows"] = pmap(lambda r: r - lax.pmean(r, "d"), axis_name="d")(XM)
    out["out_axes_none_first"] = pmap(lambda x: x * 2.0, out_axes=None)(XM)
    out["out_axes_none_pmean"] = pmap(
        lambda x: lax.pmean(x.sum(), "i"), axis_name="i", out_axes=None
    )(XM)
    out["in_axes_1_none"] = pmap(lambda x, y: x * y, in_axes=(1, None))(XM.T, 3.0)
    out["static"] = pmap(lambda x, n: x**n, static_broadcasted_argnums=1)(XM, 3)
    out["static_in_axes"] = pmap(
        lambda n, x, y: x * n + y, in_axes=(None, 0, None), static_broadcasted_argnums=0
    )(2, XM, 1.5)
    out["out_axes_1"] = pmap(lambda x: fnp.stack([x, -x]), out_axes=1)(XM)
    ring = [(k, (k + 1) % N) for k in range(N)]
    out["ppermute_ring"] = pmap(lambda x: lax.ppermute(x, "i", ring), axis_name="i")(XM)
    out["axis_index"] = pmap(lambda x: lax.axis_index("i") * x, axis_name="i")(X)
    out["all_gather"] = pmap(lambda x: lax.all_gather(x, "i"), axis_name="i")(X)
    out["psum_of_one"] = pmap(lambda x: lax.psum(1.0, "i") + 0 * x, axis_name="i")(X)
    out["keyword_mapped"] = pmap(lambda x, y=1.0: x * y)(X, y=XM[:, 0])
    tree = pmap(lambda d: {"s": d["a"] + d["b"], "p": (d["a"] * d["b"],)})(
        {"a": XM, "b": XM[:, ::-1]}
    )
    out["tree_s"], out["tree_p"] = tree["s"], tree["p"][0]
    out["integer"] = pmap(lambda x: x * 3 + 1)(np.arange(N, dtype=np.int64))
    out["grad_through"] = lib.grad(lambda x: (pmap(fnp.sin)(x) * X[:, None]).sum())(XM)
    out["per_device_grad"] = pmap(lib.grad(lambda x: (x**3).sum()))(XM)

    def loss(w: Any, xb: Any, yb: Any) -> Any:
        return fnp.mean((fnp.tanh(xb @ w) - yb) ** 2)

    def step(w: Any, xb: Any, yb: Any) -> Any:
        l, g = lib.value_and_grad(loss)(w, xb, yb)
        g = lax.pmean(g, "batch")
        return w - 0.1 * g, lax.pmean(l, "batch")

    w, losses = W0, []
    train = pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, 0))
    for _ in range(3):
        w, l = train(w, XB, YB)
        losses.append(l)
    out["dp_weights"], out["dp_losses"] = w, fnp.stack(losses)
    both = lib.vmap(
        pmap(lambda x: x * lax.psum(x, "p") - lax.pmean(x, "v"), axis_name="p"),
        axis_name="v",
    )
    out["vmap_of_pmap"] = both(XB[:, :, 0].T)
    out["jit_of_pmap"] = lib.jit(pmap(lambda x: fnp.cos(x) + 1))(XM)
    return {k: np.asarray(v) for k, v in out.items()}
