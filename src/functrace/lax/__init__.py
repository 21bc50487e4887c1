"""functrace.lax: the primitive operations and structured control flow.

Operands of lax functions must already agree in shape and dtype: broadcasting
and promotion are the job of ``functrace.numpy``.
"""

from functrace.lax.control_flow import *  # noqa: F401,F403
from functrace.lax.elementwise import *  # noqa: F401,F403
from functrace.lax.indexing import *  # noqa: F401,F403
from functrace.lax.linalg import *  # noqa: F401,F403
from functrace.lax.random_bits import *  # noqa: F401,F403
from functrace.lax.reductions import *  # noqa: F401,F403
from functrace.lax.shapes import *  # noqa: F401,F403
