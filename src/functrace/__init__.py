"""functrace: composable function transforms (grad, jvp, vjp, vmap, jit) for NumPy code.

>>> import functrace as ft
>>> ft.grad(lambda x: x ** 3)(2.0)
Array(12.)
"""

from functrace import (  # noqa: F401
    ad_checkpoint,
    core,
    custom_batching,
    data,
    debug,
    dtypes,
    example_libraries,
    experimental,
    extend,
    flatten_util,
    image,
    io,
    lax,
    nn,
    numpy,
    ops,
    optim,
    profiler,
    random,
    scipy,
    sharding,
    test_util,
    testing,
    tree,
    tree_util,
    typing,
)
from functrace._array import Array, Shard, live_arrays  # noqa: F401
from functrace._array import CpuDevice as Device  # noqa: F401
from functrace._config import (  # noqa: F401
    check_tracer_leaks,
    checking_leaks,
    config,
    debug_infs,
    debug_key_reuse,
    debug_nans,
    default_device,
    default_matmul_precision,
    default_prng_impl,
    enable_checks,
    enable_x64,
    log_compiles,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    threefry_partitionable,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from functrace.ad_checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from functrace.api import (  # noqa: F401
    ShapeDtypeStruct,
    block_until_ready,
    closure_convert,
    copy_to_host_async,
    custom_gradient,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    ensure_compile_time_eval,
    eval_shape,
    grad,
    hessian,
    host_count,
    host_id,
    host_ids,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    local_device_count,
    local_devices,
    make_jaxpr,
    named_call,
    named_scope,
    process_count,
    process_index,
    process_indices,
    pure_callback,
    stop_gradient,
    typeof,
    value_and_grad,
    vjp,
    vmap,
)
from functrace.api import custom_root as _custom_root
from functrace.custom_derivatives import custom_jvp, custom_vjp, grad_hook  # noqa: F401
from functrace.dtypes import float0  # noqa: F401
from functrace.errors import (  # noqa: F401
    ConcretizationError,
    UnexpectedTracerError,
)
from functrace.jit import clear_cache, disable_jit, fwd_and_bwd, jit, pmap  # noqa: F401,E402
from functrace.sharding import (  # noqa: F401
    NamedSharding,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    reshard,
    set_mesh,
    shard_map,
)
from functrace.sharding import PartitionSpec as P  # noqa: F401
from functrace.testing import check_grads  # noqa: F401

# jax.lax.custom_root is built on custom_jvp, a layer above functrace.lax, so it is
# defined in functrace.api and placed in the lax namespace here (this module always
# runs before functrace.lax can be imported).
lax.custom_root = _custom_root  # type: ignore[attr-defined]
# jax.core's public functions on jaxprs live a layer above functrace.core (they run the
# IR): placed in its namespace here, as in JAX.
core.eval_jaxpr = extend.core.eval_jaxpr  # type: ignore[attr-defined]
core.eval_context = ensure_compile_time_eval  # type: ignore[attr-defined]
core.ensure_compile_time_eval = ensure_compile_time_eval  # type: ignore[attr-defined]


def clear_caches() -> None:
    """Forget what this process keeps in memory to run transforms faster: the recorded
    eager derivative programs and the loaded compiled kernels (``jax.clear_caches``).
    Jitted functions keep the signatures they compiled; the on-disk kernel cache is
    kept (``clear_cache`` empties it).

    >>> clear_caches()
    """
    from functrace.api import _eager_cache
    from functrace.jit import kernels

    _eager_cache.clear_eager_cache()
    kernels.forget_loaded()


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with ``return_string=True``, return) the versions of functrace, NumPy,
    Numba and Python, the platform, and the number of threads functrace's compiled code
    uses (``jax.print_environment_info`` names jax, jaxlib and the devices instead).

    >>> "numba:" in print_environment_info(return_string=True)
    True
    """
    import platform
    import sys

    import numba
    import numpy as np

    from functrace.jit import parallel

    text = (
        f"functrace: {__version__}\n"
        f"numpy:     {np.__version__}\n"
        f"numba:     {numba.__version__}\n"
        f"python:    {sys.version}\n"
        f"platform:  {platform.platform()}\n"
        f"devices:   cpu-1 (this process), {parallel.num_threads()} threads\n"
    )
    if return_string:
        return text
    print(text, end="")
    return None


__version__ = "0.1.0"
