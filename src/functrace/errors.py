"""Error classes of functrace.

Every message follows one template: "{function}: expected {what}, got {given}.
{How to fix.}". The classes subclass the builtins so that ``except TypeError``
keeps working for users who do not know about functrace.
"""

from __future__ import annotations


class ConcretizationError(TypeError):
    """A Python bool/int/float was needed from an abstract (jit-traced) value."""


ConcretizationTypeError = ConcretizationError
"""JAX's name of :class:`ConcretizationError` (``jax.errors.ConcretizationTypeError``)."""


class TracerBoolConversionError(ConcretizationError):
    """``bool()`` of an abstract tracer: Python ``if``/``while``/``and`` on a traced value."""


class TracerIntegerConversionError(ConcretizationError):
    """``int()`` or ``__index__`` of an abstract tracer: a traced value used as a Python
    integer (a shape, an index into a Python or NumPy sequence)."""


class NonConcreteBooleanIndexError(ConcretizationError):
    """Indexing with a boolean mask whose values are not known while tracing."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transform that created it and was used afterwards."""


class TracerArrayConversionError(TypeError):
    """A tracer was converted to a NumPy array (``np.asarray(tracer)``)."""


class TracerAssignmentError(TypeError):
    """In-place assignment into a traced array."""


class JaxRuntimeError(ValueError):
    """A failed ``checkify.check`` (or an error ``checkify`` found) raised as an
    exception: eagerly by ``check``, or by ``Error.throw()`` and ``check_error``. A
    ``ValueError``, as JAX's."""


class MissingRuleError(NotImplementedError):
    """A primitive has no rule for some interpreter."""

    def __init__(self, primitive: str, interpreter: str, table: str, module: str) -> None:
        super().__init__(
            f"{interpreter}: expected a rule for primitive '{primitive}', got none. "
            f"Register one in the primitive's block in {module} "
            f"(add it to {table}[{primitive}_p])."
        )


__all__ = [
    "ConcretizationError",
    "ConcretizationTypeError",
    "JaxRuntimeError",
    "MissingRuleError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerAssignmentError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
