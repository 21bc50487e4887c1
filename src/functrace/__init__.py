"""functrace: composable function transforms (grad, jvp, vjp, vmap, jit) for NumPy code.

>>> import functrace as ft
>>> ft.grad(lambda x: x ** 3)(2.0)
12.0
"""

from functrace import lax, numpy, tree_util  # noqa: F401
from functrace.api import (  # noqa: F401
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    make_jaxpr,
    stop_gradient,
    value_and_grad,
    vjp,
)
from functrace.errors import (  # noqa: F401
    ConcretizationError,
    UnexpectedTracerError,
)

__version__ = "0.1.0"
