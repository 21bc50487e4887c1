"""A new primitive defined the JAX way (``multiply_add(x, y, z) = x * y + z``, the
example of JAX's "primitives" tutorial, in our own words), run under JAX and functrace.

``cases(ns)`` takes a namespace with JAX's names for the library's parts: ``api`` (the
transforms), ``lax``, ``Primitive`` (``jax.extend.core``), ``ShapedArray``
(``jax.core``), ``ad``, ``batching`` and ``mlir`` (``jax.interpreters``), and
``lowering``, the lowering rule to register (JAX compiles with it; functrace records it
and calls the primitive's impl). It builds the primitive one rule at a time, as the
tutorial does, recording what fails before each rule exists (the name of the standard
exception class raised, ``"no error"`` if none) and then the values of plain calls,
``jit``, ``jvp``, ``grad``, ``vmap`` and their compositions, and the equations of
``make_jaxpr``. ``tests/fixtures/primitive_api_jax.npz`` was recorded with ``jax``
(``jax_enable_x64`` on); tests/test_jax_primitive_api.py runs the same with functrace.
Nothing here imports JAX.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

A = np.array([2.0, 3.0])
B = np.array([10.0, 20.0])
M32 = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 4
N32 = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)


def failure(f: Any) -> np.ndarray:
    """The standard exception class (a builtin) of what ``f()`` raises, as a 0-d unicode
    array ("no error" if it returns): JAX and functrace raise subclasses of their own."""
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class is the recorded value
        for cls in type(e).__mro__:
            if cls.__module__ == "builtins" and hasattr(builtins, cls.__name__):
                return np.array(cls.__name__)
    return np.array("no error")


def cases(ns: Any) -> dict[str, np.ndarray]:
    api, lax, ad, batching = ns.api, ns.lax, ns.ad, ns.batching
    out: dict[str, Any] = {}
    multiply_add_p = ns.Primitive("multiply_add")

    def multiply_add(x, y, z):
        return multiply_add_p.bind(x, y, z)

    def square_add(a, b):  # a * a + b, through the primitive
        return multiply_add(a, a, b)

    out["fail/eval_without_impl"] = failure(lambda: square_add(2.0, 10.0))

    @multiply_add_p.def_impl
    def multiply_add_impl(x, y, z):
        # plain NumPy: only ever called with concrete values
        return np.add(np.multiply(x, y), z)

    out["eval"] = square_add(2.0, 10.0)
    out["eval_f32"] = square_add(M32, N32)
    out["fail/jit_without_abstract_eval"] = failure(lambda: api.jit(square_add)(2.0, 10.0))

    @multiply_add_p.def_abstract_eval
    def multiply_add_abstract_eval(xs, ys, zs):
        assert xs.shape == ys.shape == zs.shape
        return ns.ShapedArray(xs.shape, xs.dtype)

    ns.mlir.register_lowering(multiply_add_p, ns.lowering, platform="cpu")
    out["jit"] = api.jit(square_add)(2.0, 10.0)
    out["jit_static"] = api.jit(square_add, static_argnums=1)(2.0, 10.0)
    out["jit_f32"] = api.jit(square_add)(M32, N32)
    out["fail/jvp_without_rule"] = failure(lambda: api.jvp(square_add, (2.0, 10.0), (1.0, 1.0)))

    def multiply_add_value_and_jvp(arg_values, arg_tangents):
        x, y, z = arg_values
        xt, yt, zt = arg_tangents
        primal_out = multiply_add(x, y, z)

        def dense(t):  # a symbolic zero tangent as an array of zeros
            return lax.full_like(x, 0) if type(t) is ad.Zero else t

        # d(x y + z) = xt y + x yt + zt, with the primitive itself
        tangent_out = multiply_add(dense(xt), y, multiply_add(x, dense(yt), dense(zt)))
        return primal_out, tangent_out

    ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp
    out["jvp/primal"], out["jvp/tangent"] = api.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    jitted_jvp = api.jit(lambda primals, tangents: api.jvp(square_add, primals, tangents))
    out["jit_jvp/primal"], out["jit_jvp/tangent"] = jitted_jvp((2.0, 10.0), (1.0, 1.0))
    out["fail/grad_without_transpose"] = failure(lambda: api.grad(square_add)(2.0, 10.0))

    def multiply_add_transpose(ct, x, y, z):
        # Used linearly by the JVP above: one of x, y is a known value, and z is linear
        # (or a known array of zeros, whose cotangent is dropped).
        if not ad.is_undefined_primal(x):
            assert ad.is_undefined_primal(y)
            ct_y = (
                ad.Zero(y.aval) if type(ct) is ad.Zero else multiply_add(x, ct, lax.full_like(x, 0))
            )
            return None, ct_y, ct
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add(ct, y, lax.full_like(y, 0))
        return ct_x, None, ct

    ad.primitive_transposes[multiply_add_p] = multiply_add_transpose
    out["grad"] = api.grad(square_add)(2.0, 10.0)
    out["jit_grad"] = api.jit(api.grad(square_add))(2.0, 10.0)
    out["grad_both/a"], out["grad_both/b"] = api.grad(square_add, argnums=(0, 1))(2.0, 10.0)
    out["jvp_grad/primal"], out["jvp_grad/tangent"] = api.jvp(
        api.grad(square_add), (2.0, 10.0), (1.0, 0.0)
    )
    # the transpose rule's own assertion: its second-order use is not linear
    out["fail/grad_grad"] = failure(lambda: api.grad(api.grad(square_add))(2.0, 10.0))
    out["fail/vmap_without_rule"] = failure(lambda: api.vmap(square_add)(A, B))

    def multiply_add_batch(vector_arg_values, batch_axes):
        # elementwise on equal shapes: batched operands batched alike need nothing more
        assert batch_axes[0] == batch_axes[1] == batch_axes[2]
        return multiply_add(*vector_arg_values), batch_axes[0]

    batching.primitive_batchers[multiply_add_p] = multiply_add_batch
    out["vmap"] = api.vmap(square_add, in_axes=0, out_axes=0)(A, B)
    out["jit_vmap"] = api.jit(api.vmap(square_add))(A, B)
    # under vmap(grad) the cotangent is unbatched: that rule's assertion fails
    out["fail/vmap_grad_equal_axes_rule"] = failure(lambda: api.vmap(api.grad(square_add))(A, B))

    def multiply_add_batch_any(vals, dims):
        # any mix of batched and unbatched operands: batch axis first for all of them
        size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
        return multiply_add(*[batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]), 0

    batching.primitive_batchers[multiply_add_p] = multiply_add_batch_any
    out["vmap_grad"] = api.vmap(api.grad(square_add))(A, B)
    out["jit_vmap_grad"] = api.jit(api.vmap(api.grad(square_add)))(A, B)
    out["vmap_in_axes_none"] = api.vmap(square_add, in_axes=(0, None))(A, 5.0)
    out["vmap_in_axes_1_f32"] = api.vmap(square_add, in_axes=(1, 0), out_axes=1)(M32, N32.T)
    p, t = api.jvp(api.vmap(square_add), (A, B), (np.ones(2), np.ones(2)))
    out["jvp_vmap/primal"], out["jvp_vmap/tangent"] = p, t
    out["grad_vmap"] = api.grad(lambda a: api.vmap(square_add)(a, B).sum())(A)
    # (the Jacobians batch the transforms over basis vectors)
    out["hessian"] = api.hessian(square_add)(2.0, 10.0)
    out["jacfwd"] = api.jacfwd(square_add)(A, B)
    out["jacrev"] = api.jacrev(square_add)(A, B)

    def names(closed):
        return np.array([e.primitive.name for e in closed.eqns])

    out["jaxpr/eval"] = names(api.make_jaxpr(square_add)(2.0, 10.0))
    aval = api.make_jaxpr(square_add)(M32, N32).out_avals[0]
    out["jaxpr/eval_out"] = np.array(f"{aval.dtype.name}{list(aval.shape)}")
    out["jaxpr/vmap"] = names(api.make_jaxpr(api.vmap(square_add))(A, B))
    grad_eqns = names(api.make_jaxpr(api.grad(square_add))(2.0, 10.0))
    out["jaxpr/grad_multiply_adds"] = np.array(int(np.sum(grad_eqns == "multiply_add")))
    return {k: np.asarray(v) for k, v in out.items()}
