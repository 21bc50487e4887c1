"""Error classes of functrace.

Every message follows one template: "{function}: expected {what}, got {given}.
{How to fix.}". The classes subclass the builtins so that ``except TypeError``
keeps working for users who do not know about functrace.
"""

from __future__ import annotations


class JAXTypeError(TypeError):
    """The base of functrace's errors that JAX raises as ``jax.errors.JAXTypeError``
    (the concretization errors, ``TracerArrayConversionError``,
    ``UnexpectedTracerError``), so ``except JAXTypeError`` catches the same ones."""


class JAXIndexError(IndexError):
    """The base JAX gives its indexing errors (``jax.errors.JAXIndexError``);
    ``NonConcreteBooleanIndexError`` is one (and also a ``ConcretizationError``)."""


class KeyReuseError(JAXTypeError):
    """JAX's error for a PRNG key used twice under its key-reuse checker
    (``jax.errors.KeyReuseError``). functrace has no such checker
    (``config.debug_key_reuse`` accepts only False), so nothing raises it; it exists
    for ``except`` clauses."""


class JaxprTypeError(TypeError):
    """A jaxpr that does not type-check (``jax.errors.JaxprTypeError``, also
    ``functrace.extend.core.JaxprTypeError``): a variable read before it is bound or
    bound twice, or an equation whose output types are not its primitive's. Traced
    jaxprs are well typed by construction; ``functrace.extend.core.check_jaxpr`` raises
    it for one built or edited by hand."""


class InconclusiveDimensionOperation(Exception):
    """JAX's error for a comparison of symbolic dimensions with no definite answer
    (``jax.errors.InconclusiveDimensionOperation``). functrace's shapes are always
    concrete integers, so nothing raises it; it exists for ``except`` clauses."""


class ConcretizationError(JAXTypeError):
    """A Python bool/int/float was needed from an abstract (jit-traced) value."""


ConcretizationTypeError = ConcretizationError
"""JAX's name of :class:`ConcretizationError` (``jax.errors.ConcretizationTypeError``)."""


class TracerBoolConversionError(ConcretizationError):
    """``bool()`` of an abstract tracer: Python ``if``/``while``/``and`` on a traced value."""


class TracerIntegerConversionError(ConcretizationError):
    """``int()`` or ``__index__`` of an abstract tracer: a traced value used as a Python
    integer (a shape, an index into a Python or NumPy sequence)."""


class NonConcreteBooleanIndexError(ConcretizationError, JAXIndexError):
    """Indexing with a boolean mask whose values are not known while tracing."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transform that created it and was used afterwards."""


class TracerArrayConversionError(JAXTypeError):
    """A tracer was converted to a NumPy array (``np.asarray(tracer)``)."""


class TracerAssignmentError(TypeError):
    """In-place assignment into a traced array."""


class JaxRuntimeError(ValueError):
    """A failed ``checkify.check`` (or an error ``checkify`` found) raised as an
    exception: eagerly by ``check``, or by ``Error.throw()`` and ``check_error``. A
    ``ValueError``, as JAX's."""


class MissingRuleError(NotImplementedError):
    """A primitive has no rule for some interpreter.

    ``how`` is the registration in JAX's spelling (``"{p}.def_impl(impl)"``, ``{p}``
    standing for the primitive's variable ``<name>_p``); ``table`` names functrace's
    table and ``module`` where a primitive of functrace's own registers it."""

    def __init__(
        self, primitive: str, interpreter: str, table: str, module: str, how: str = ""
    ) -> None:
        p = f"{primitive}_p"
        how = how.format(p=p) if how else f"{table}[{p}] = rule"
        super().__init__(
            f"{interpreter}: expected a rule for primitive '{primitive}', got none. "
            f"Register one: {how} (the table {table}; for a primitive of functrace's "
            f"own, in its block in {module})."
        )


__all__ = [
    "ConcretizationError",
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "MissingRuleError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerAssignmentError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
