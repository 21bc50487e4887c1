"""functrace: composable function transforms (grad, jvp, vjp, vmap, jit) for NumPy code.

>>> import functrace as ft
>>> ft.grad(lambda x: x ** 3)(2.0)
Array(12.)
"""

from functrace import (  # noqa: F401
    ad_checkpoint,
    data,
    debug,
    example_libraries,
    flatten_util,
    io,
    lax,
    nn,
    numpy,
    optim,
    random,
    scipy,
    test_util,
    testing,
    tree,
    tree_util,
)
from functrace._array import Array  # noqa: F401
from functrace._config import config, debug_infs, debug_nans  # noqa: F401
from functrace.ad_checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from functrace.api import (  # noqa: F401
    block_until_ready,
    device_get,
    device_put,
    devices,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    make_jaxpr,
    stop_gradient,
    value_and_grad,
    vjp,
    vmap,
)
from functrace.custom_derivatives import custom_jvp, custom_vjp, grad_hook  # noqa: F401
from functrace.errors import (  # noqa: F401
    ConcretizationError,
    UnexpectedTracerError,
)
from functrace.jit import clear_cache, disable_jit, jit  # noqa: F401,E402
from functrace.testing import check_grads  # noqa: F401

__version__ = "0.1.0"
