"""``functrace.scipy.sparse``: ``jax.scipy.sparse``'s iterative solvers
(:mod:`functrace.scipy.sparse.linalg`)."""

from functrace.scipy.sparse import linalg  # noqa: F401

__all__ = ["linalg"]
