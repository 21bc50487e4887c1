"""JAX's example libraries, with the same API: ``optimizers`` and ``stax``.

Both are small, purely functional libraries written for functrace with the
semantics of ``jax.example_libraries``, so that programs written against them run
with only an import change::

    from functrace.example_libraries import optimizers, stax
"""

from functrace.example_libraries import initializers, optimizers, stax  # noqa: F401

__all__ = ["initializers", "optimizers", "stax"]
