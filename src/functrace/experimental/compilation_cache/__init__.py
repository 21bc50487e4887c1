"""``jax.experimental.compilation_cache``: the module programs import to set JAX's
persistent compilation cache (:mod:`.compilation_cache`)."""

from functrace.experimental.compilation_cache import compilation_cache  # noqa: F401

__all__ = ["compilation_cache"]
