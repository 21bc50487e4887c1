"""``functrace.scipy.spatial``: ``transform`` (``Rotation``, ``Slerp``), as
``jax.scipy.spatial``."""

from functrace.scipy.spatial import transform  # noqa: F401

__all__ = ["transform"]
