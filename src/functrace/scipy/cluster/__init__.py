"""``functrace.scipy.cluster``: ``vq`` (as ``jax.scipy.cluster``)."""

from functrace.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
