"""functrace.numpy: NumPy's API on arrays and tracers alike.

Plain NumPy inputs give exactly NumPy's results (values, dtypes, array-vs-scalar);
traced inputs are promoted (NumPy 2 rules, Python scalars weak) and broadcast with
explicit IR equations, so every function here differentiates, batches and jits.

The modules, each importing only those before it: ``_dispatch`` (the plain-NumPy fast
path), ``_core`` (promotion, broadcasting, shared helpers), ``_math`` (ufuncs),
``_indexing`` (``x[idx]``, take, where, nonzero), ``_special`` (composite
transcendental functions), ``_shape``, ``_joining``, ``_reductions``, ``_creation``,
``_twodim``, ``_sorting``, ``_linalg`` (products), ``_functions``, ``_stats2``
(``nanvar``, ``cov``, ``gcd``, ``i0``...), ``_stats`` (``average``, ``median``,
``nanmax``...), ``_pad``, ``_convolve`` (``convolve``, ``correlate``), ``_at`` (``.at``
updates), ``_apply`` (``vectorize``, ``apply_along_axis``, ``piecewise``, windows),
``_inplace`` (``place``, ``put``...), ``_histogram`` (``bincount``, histograms,
``interp``), ``_sets`` (``unique`` and the set operations), ``_manip`` (``choose``,
``delete``, ``insert``, ``block``...), ``_poly`` (polynomials), ``_predicates``
(predicates, bit packing, array-API names), ``_grids`` (``logspace``, ``indices``,
``mgrid``, files, printing), ``_utils`` (dtype names, index helpers),
``_scalar_types`` (``float32``, ``int32``...: JAX's scalar types, which convert),
``_linalg_util``, ``_linalg_norms`` and ``_linalg_more`` (parts of ``linalg``),
``_tracer_methods`` (operators and methods of tracers), ``_keys`` (the shape and
selection functions on typed key arrays, tried when their namesakes refuse keys),
``linalg`` and ``fft``.
"""

import numpy as _np

from functrace.numpy import _tracer_methods  # noqa: F401
from functrace.numpy._at import at  # noqa: F401
from functrace.numpy._convolve import *  # noqa: F401,F403
from functrace.numpy._creation import *  # noqa: F401,F403
from functrace.numpy._dispatch import is_traced  # noqa: F401
from functrace.numpy._functions import *  # noqa: F401,F403
from functrace.numpy._indexing import *  # noqa: F401,F403
from functrace.numpy._joining import *  # noqa: F401,F403
from functrace.numpy._linalg import *  # noqa: F401,F403
from functrace.numpy._manip import *  # noqa: F401,F403
from functrace.numpy._math import *  # noqa: F401,F403
from functrace.numpy._pad import *  # noqa: F401,F403
from functrace.numpy._poly import *  # noqa: F401,F403
from functrace.numpy._reductions import *  # noqa: F401,F403
from functrace.numpy._scalar_types import *  # noqa: F401,F403
from functrace.numpy._sets import *  # noqa: F401,F403
from functrace.numpy._shape import *  # noqa: F401,F403
from functrace.numpy._sorting import *  # noqa: F401,F403
from functrace.numpy._special import *  # noqa: F401,F403
from functrace.numpy._stats import *  # noqa: F401,F403
from functrace.numpy._twodim import *  # noqa: F401,F403
from functrace.numpy._ufuncs import *  # noqa: F401,F403
from functrace.numpy._utils import *  # noqa: F401,F403

# constants and dtype helpers, as in NumPy (the scalar types: _scalar_types, JAX's)
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
finfo, iinfo = _np.finfo, _np.iinfo
ndarray = _np.ndarray

from functrace.numpy import (  # noqa: E402,F401
    _keys,  # noqa: E402,F401  (registers the key versions)
    fft,
    linalg,
)
