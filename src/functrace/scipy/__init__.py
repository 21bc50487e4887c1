"""functrace.scipy: the parts of SciPy that JAX programs use, traceable.

The submodules mirror ``jax.scipy``: SciPy's names, parameter names and defaults,
built from ``functrace.numpy`` and the ``functrace.lax`` primitives, so every function
differentiates, batches and jits. SciPy itself is not needed.

* ``special``, from ``_special_more`` (the gamma family, zeta), ``_special_bessel``,
  ``_special_integrals`` (exponential integrals, ``erfcx``, ``sici``, ``fresnel``...),
  ``_special_hyper`` (hypergeometric functions) and ``_special_tables`` (Chebyshev
  coefficients);
* ``stats``: a module per distribution (``norm``, ``multivariate_normal``, ``t``,
  ``gamma``, ``beta``, ``poisson``, ``bernoulli``, ``vonmises``...; the package
  docstring lists them), with ``_descriptive`` (``mode``, ``rankdata``, ``sem``),
  ``_kde`` (``gaussian_kde``) and ``_common`` (shared helpers);
* ``linalg``, with ``_linalg_more`` (``polar``, ``sqrtm``, ``hessenberg``,
  ``solve_sylvester``), ``_linalg_schur`` (``schur``) and ``_linalg_special`` (special
  matrices);
* ``cluster.vq`` (``vq``), ``fft`` (the type-2 DCT: ``dct``, ``dctn``, ``idct``,
  ``idctn``), ``integrate`` (``trapezoid``), ``interpolate``
  (``RegularGridInterpolator``), ``ndimage`` (``map_coordinates``), ``optimize``
  (``minimize``), ``signal`` (convolution, correlation, detrending; ``stft``, ``istft``,
  ``csd`` and ``welch`` from ``_signal_spectral``) and ``sparse.linalg`` (``cg``,
  ``bicgstab``, ``gmres``);
* ``spatial.transform``: ``Rotation`` (quaternions, matrices, rotation vectors, Euler
  angles, Modified Rodrigues Parameters; composition, ``apply``, ``mean``) and ``Slerp``;
* ``_util``: the argument handling they share.

>>> import functrace.scipy.special as fsp
>>> float(fsp.logsumexp([1000.0, 1000.0]))
1000.6931471805599
"""

from functrace.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)
