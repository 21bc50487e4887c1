"""functrace.lax: the primitive operations and structured control flow.

Operands of lax functions must already agree in shape and dtype: broadcasting
and promotion are the job of ``functrace.numpy``.
"""

from functrace.lax.assoc_scan import *  # noqa: F401,F403
from functrace.lax.bit_generator import *  # noqa: F401,F403
from functrace.lax.composite_higher import *  # noqa: F401,F403
from functrace.lax.composite_more import *  # noqa: F401,F403
from functrace.lax.composites import *  # noqa: F401,F403
from functrace.lax.control_flow import *  # noqa: F401,F403
from functrace.lax.convolution import *  # noqa: F401,F403
from functrace.lax.elementwise import *  # noqa: F401,F403
from functrace.lax.extras import *  # noqa: F401,F403
from functrace.lax.fourier import *  # noqa: F401,F403
from functrace.lax.indexing import *  # noqa: F401,F403
from functrace.lax.linalg import *  # noqa: F401,F403
from functrace.lax.parallel import *  # noqa: F401,F403
from functrace.lax.random_bits import *  # noqa: F401,F403
from functrace.lax.reductions import *  # noqa: F401,F403
from functrace.lax.shapes import *  # noqa: F401,F403
from functrace.lax.solves import *  # noqa: F401,F403
from functrace.lax.special_extra import *  # noqa: F401,F403
from functrace.lax.windowed import *  # noqa: F401,F403

# Last (it sorts last): its gather, scatters and scatter_apply take JAX's dimension
# numbers as well as functrace's index arrays, and replace the names imported above.
from functrace.lax.xla_gather_scatter import *  # noqa: F401,F403,E402  # isort: skip


def _array_results() -> None:
    """Eager results of the control-flow functions are ``functrace.Array``s, as those
    of the transforms are (``cond`` and ``switch`` make their own)."""
    import functools

    from functrace._array import to_array
    from functrace.lax import control_flow, solves

    def wrap(f):  # type: ignore[no-untyped-def]
        @functools.wraps(f)
        def g(*args, **kwargs):  # type: ignore[no-untyped-def]
            from functrace.tree_util import tree_map

            return tree_map(to_array, f(*args, **kwargs))

        return g

    ns = globals()
    for name in ("fori_loop", "map", "scan", "while_loop"):
        if name in ns and ns[name] is getattr(control_flow, name, None):
            ns[name] = wrap(ns[name])
    if ns.get("custom_linear_solve") is solves.custom_linear_solve:
        ns["custom_linear_solve"] = wrap(solves.custom_linear_solve)


_array_results()
del _array_results
