"""Error classes of functrace.

Every message follows one template: "{function}: expected {what}, got {given}.
{How to fix.}". The classes subclass the builtins so that ``except TypeError``
keeps working for users who do not know about functrace.
"""

from __future__ import annotations


class ConcretizationError(TypeError):
    """A Python bool/int/float was needed from an abstract (jit-traced) value."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transform that created it and was used afterwards."""


class TracerArrayConversionError(TypeError):
    """A tracer was converted to a NumPy array (``np.asarray(tracer)``)."""


class TracerAssignmentError(TypeError):
    """In-place assignment into a traced array."""


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
    "MissingRuleError",
    "TracerArrayConversionError",
    "TracerAssignmentError",
    "UnexpectedTracerError",
]
