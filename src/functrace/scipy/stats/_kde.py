"""``gaussian_kde``: a Gaussian kernel density estimate (as ``jax.scipy.stats``;
re-exported by the package).

The estimate is a pytree (its arrays are leaves), so it can be built, evaluated and
differentiated inside ``jit``/``grad``/``vmap``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import random as frandom
from functrace.lax import linalg as ll
from functrace.numpy._core import asarray_or_tracer
from functrace.scipy import special
from functrace.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
class gaussian_kde:  # noqa: N801  (SciPy's name)
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(d, n)``, or ``(n,)``
    for one dimension), with optional ``weights`` (n,) and a bandwidth rule
    ``bw_method``: ``"scott"`` (the default), ``"silverman"``, a scalar factor, or a
    callable of the estimate returning the factor.

    Attributes as SciPy's: ``dataset``, ``weights``, ``d``, ``n``, ``neff``,
    ``factor``, ``covariance`` (the kernel's), ``inv_cov``. As in JAX,
    ``set_bandwidth`` and ``integrate_box`` are not supported.

    >>> import numpy as np
    >>> kde = gaussian_kde(np.array([-1.0, 0.0, 1.0]))
    >>> round(float(kde.evaluate(0.0)[0]), 6)
    0.318156
    """

    def __init__(self, dataset: Any, bw_method: Any = None, weights: Any = None) -> None:
        data = asarray_or_tracer(dataset, "gaussian_kde")
        if core.get_aval(data).dtype.kind != "f":
            data = data.astype(np.float64)
        data = fnp.atleast_2d(data)
        d, n = core.get_aval(data).shape
        if n < 2:
            raise ValueError(
                f"gaussian_kde: expected a dataset of more than one point, got shape {(d, n)}."
            )
        dt = core.get_aval(data).dtype
        if weights is None:
            w = fnp.full((n,), 1.0 / n, dtype=dt)
        else:
            w = fnp.asarray(asarray_or_tracer(weights, "gaussian_kde"), dtype=dt)
            if core.get_aval(w).shape != (n,):
                raise ValueError(
                    f"gaussian_kde: expected weights of shape ({n},), got {core.get_aval(w).shape}."
                )
            w = w / fnp.sum(w)
        self.dataset = data
        self.weights = w
        self.neff = 1 / fnp.sum(w * w)
        self.factor = self._factor(bw_method, d)
        mean = fnp.sum(data * w, axis=1, keepdims=True)
        centred = data - mean
        data_cov = (centred * w) @ centred.T / (1 - fnp.sum(w * w))
        self.covariance = data_cov * self.factor**2
        self.inv_cov = fnp.linalg.inv(self.covariance)

    def _factor(self, bw_method: Any, d: int) -> Any:
        if bw_method is None or bw_method == "scott":
            return fnp.power(self.neff, -1.0 / (d + 4))
        if bw_method == "silverman":
            return fnp.power(self.neff * (d + 2) / 4.0, -1.0 / (d + 4))
        if isinstance(bw_method, str):
            raise ValueError(
                f"gaussian_kde: expected bw_method 'scott', 'silverman', a scalar or a "
                f"callable, got {bw_method!r}."
            )
        if callable(bw_method):
            return bw_method(self)
        return fnp.asarray(bw_method, dtype=core.get_aval(self.dataset).dtype)

    # -- pytree ----------------------------------------------------------------
    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return (
            self.dataset,
            self.weights,
            self.neff,
            self.factor,
            self.covariance,
            self.inv_cov,
        ), None

    @classmethod
    def tree_unflatten(cls, aux: None, children: tuple[Any, ...]) -> gaussian_kde:
        obj = object.__new__(cls)
        (obj.dataset, obj.weights, obj.neff, obj.factor, obj.covariance, obj.inv_cov) = children
        return obj

    @property
    def d(self) -> int:
        return int(core.get_aval(self.dataset).shape[0])

    @property
    def n(self) -> int:
        return int(core.get_aval(self.dataset).shape[1])

    # -- evaluation --------------------------------------------------------------
    def _points(self, points: Any) -> Any:
        p = asarray_or_tracer(points, "gaussian_kde.evaluate")
        p = fnp.atleast_2d(p).astype(core.get_aval(self.dataset).dtype)
        d = self.d
        shape = core.get_aval(p).shape
        if shape[0] != d:
            if shape == (1, d):
                p = p.T  # one point of d dimensions
            else:
                raise ValueError(
                    f"gaussian_kde.evaluate: expected points of {d} dimensions (shape "
                    f"({d}, m)), got shape {shape}."
                )
        return p

    def _log_kernel(self, points: Any, cov: Any, centers: Any) -> Any:
        """``log N(points_j; centers_i, cov)`` as an ``(n_centers, m)`` array."""
        chol = fnp.linalg.cholesky(cov)
        diff = centers[:, :, None] - points[:, None, :]  # (d, n, m)
        d = core.get_aval(diff).shape[0]
        flat = fnp.reshape(diff, (d, -1))
        z = ll.triangular_solve(chol, flat, lower=True)
        maha = fnp.reshape(fnp.sum(z * z, axis=0), core.get_aval(diff).shape[1:])
        half_logdet = fnp.sum(fnp.log(fnp.diagonal(chol)))
        return -0.5 * maha - half_logdet - 0.5 * d * math.log(2 * math.pi)

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (``(d, m)``), an array of ``m`` values."""
        p = self._points(points)
        logk = self._log_kernel(p, self.covariance, self.dataset)
        return fnp.sum(self.weights[:, None] * fnp.exp(logk), axis=0)

    __call__ = evaluate

    def pdf(self, x: Any) -> Any:
        """The same as :meth:`evaluate`."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log of :meth:`evaluate`, accurate where the density underflows."""
        p = self._points(x)
        logk = self._log_kernel(p, self.covariance, self.dataset)
        return special.logsumexp(logk + fnp.log(self.weights)[:, None], axis=0)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times the Gaussian ``N(mean, cov)``."""
        dt = core.get_aval(self.dataset).dtype
        mean = fnp.reshape(fnp.asarray(mean, dtype=dt), (self.d, 1))
        cov = fnp.reshape(fnp.asarray(cov, dtype=dt), (self.d, self.d))
        logk = self._log_kernel(mean, self.covariance + cov, self.dataset)
        return fnp.sum(self.weights * fnp.exp(logk[:, 0]))

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The estimate's mass on ``[low, high]`` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError(
                f"gaussian_kde.integrate_box_1d: expected one-dimensional data, got d = {self.d}."
            )
        sd = fnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sd
        hi = (high - self.dataset[0]) / sd
        return fnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this estimate and ``other``."""
        if other.d != self.d:
            raise ValueError(
                f"gaussian_kde.integrate_kde: expected estimates of one dimension, got "
                f"{self.d} and {other.d}."
            )
        logk = self._log_kernel(other.dataset, self.covariance + other.covariance, self.dataset)
        return fnp.sum(self.weights[:, None] * other.weights[None, :] * fnp.exp(logk))

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``shape`` new points drawn from the estimate, an array ``(d, *shape)``."""
        k1, k2 = frandom.split(key)
        ind = frandom.choice(k1, self.n, shape=shape, p=self.weights)
        zeros = fnp.zeros((self.d,), dtype=core.get_aval(self.dataset).dtype)
        noise = frandom.multivariate_normal(k2, zeros, self.covariance, shape=shape)
        picked = fnp.take(self.dataset, ind, axis=1)  # (d, *shape)
        return picked + fnp.moveaxis(noise, -1, 0)

    def set_bandwidth(self, bw_method: Any = None) -> None:
        raise NotImplementedError(
            "gaussian_kde.set_bandwidth: not supported (the estimate is immutable, as in "
            "JAX); build a new gaussian_kde(dataset, bw_method=...) instead."
        )

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        raise NotImplementedError(
            "gaussian_kde.integrate_box: not supported (as in JAX); for one-dimensional "
            "data use integrate_box_1d."
        )
