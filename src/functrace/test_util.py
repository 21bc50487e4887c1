"""``functrace.test_util``: the gradient checker under JAX's module name.

``check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None)``
compares ``f``'s JVPs and VJPs up to ``order`` with finite differences (taken in
float64); ``atol``/``rtol`` may be numbers or dicts from dtype to number, e.g.
``atol={np.float32: 1e-3, np.float64: 1e-6}``. It is :func:`functrace.testing.check_grads`.

>>> import functrace.numpy as fnp
>>> from functrace.test_util import check_grads
>>> check_grads(fnp.tanh, (0.5,), order=2, modes=["rev"])
"""

from functrace.testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
