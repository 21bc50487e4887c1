"""Functions of ``jax.lax`` that functrace composes from its primitives (no rules of
their own: they differentiate, batch and compile through their parts):
``asin``, ``acos``, ``atan``, ``sinh``, ``cosh``, ``square``, ``exp2``,
``is_finite``, ``full``, ``reciprocal``, ``shift_right_logical``, the shape helpers
``broadcast``, ``broadcast_to_rank``, ``broadcasted_iota``, ``collapse``, ``split``,
``tile``, ``empty``, ``batch_matmul``, and ``optimization_barrier``,
``platform_dependent`` and ``composite``. ``functrace.numpy``'s ufuncs of the same
functions use these definitions on tracers. ``associative_scan`` is in
``functrace.lax.assoc_scan``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._array import to_array
from functrace.lax import elementwise as lx
from functrace.lax import extras as lxe
from functrace.lax._util import as_index_tuple, normalize_axis
from functrace.lax.base import broadcast_operands, operand_shape
from functrace.lax.contraction import dot_general
from functrace.lax.indexing import slice_in_dim
from functrace.lax.shapes import broadcast_in_dim, iota, reshape
from functrace.tree_util import tree_map


def _k(x: Any, value: float) -> Any:
    return lx.full_like(x, value)


def _accurate(value: Any, smooth: Any) -> Any:
    """``value`` (accurate), differentiated as ``smooth`` (same function, other formula)."""
    return lx.add(smooth, lx.stop_gradient(lx.sub(value, smooth)))


def _sqrt_1mx2(x: Any) -> Any:
    # lx.sqrt(1 - x^2): the value from (1-x)(1+x) (exact near |x| = 1), the derivatives from
    # 1 - x*x, whose reverse pass gives +-inf at |x| = 1 rather than 0 * inf = NaN.
    one = _k(x, 1)
    return lx.sqrt(_accurate(lx.mul(lx.sub(one, x), lx.add(one, x)), lx.sub(one, lx.mul(x, x))))


def _is_complex(x: Any) -> bool:
    return bool(core.get_aval(x).dtype.kind == "c")


def _swap(z: Any) -> Any:
    # i conj(z): the real and imaginary parts exchanged, exactly (signed zeros, inf, NaN)
    return lxe.complex(lxe.imag(z), lxe.real(z))


def _signbit(x: Any) -> Any:
    # the sign bit itself: -0.0 counts (the side of a branch cut a signed zero is on)
    bits = np.dtype(f"int{8 * core.get_aval(x).dtype.itemsize}")
    as_int = lxe.bitcast_convert_type(x, bits)
    return lx.lt(as_int, lx.zeros_like(as_int))


# Complex asin, acos and atan come from the asinh, acosh and atanh primitives, whose
# values are NumPy's (C99's branch cuts, signed zeros on them, infinities) and whose
# derivatives are holomorphic. The identities below only move exact parts around, so
# they keep those values bit for bit; an arithmetic form such as -i asinh(iz) would not
# (a product with i turns -0.0 into +0.0, and inf * 0 into NaN).


def _complex_asin(z: Any) -> Any:
    # asin(z) = -i asinh(iz) = swap(asinh(swap(z))), as asinh commutes with conj
    return _swap(lxe.asinh(_swap(z)))


def _complex_atan(z: Any) -> Any:
    # atan(z) = -i atanh(iz) = swap(atanh(swap(z)))
    return _swap(lxe.atanh(_swap(z)))


def _complex_acos(z: Any) -> Any:
    # acosh(z) = u + iv = +-i acos(z), the sign that makes u >= 0, and v has the sign of
    # im(z) (C99): acos(z) = |v| - i copysign(u, im(z))
    w = lxe.acosh(z)
    u, v = lxe.real(w), lxe.imag(w)
    return lxe.complex(lx.abs(v), lx.select_n(_signbit(lxe.imag(z)), lx.neg(u), u))


def asin(x: Any) -> Any:
    """Inverse sine, as ``atan2(x, sqrt((1 - x)(1 + x)))``: d = dx / sqrt(1 - x^2).
    Complex ``x``: ``-i asinh(ix)`` (NumPy's values, its branch cuts on the real axis
    outside [-1, 1])."""
    if _is_complex(x):
        return _complex_asin(x)
    return lx.atan2(x, _sqrt_1mx2(x))


def acos(x: Any) -> Any:
    """Inverse cosine, as ``atan2(sqrt((1 - x)(1 + x)), x)``: d = -dx / sqrt(1 - x^2).
    Complex ``x``: from ``acosh(x) = +-i acos(x)`` (NumPy's values and branch cuts)."""
    if _is_complex(x):
        return _complex_acos(x)
    return lx.atan2(_sqrt_1mx2(x), x)


def atan(x: Any) -> Any:
    """Inverse tangent, as ``atan2(x, 1)``: d = dx / (1 + x^2). Complex ``x``:
    ``-i atanh(ix)`` (NumPy's values, its branch cuts on the imaginary axis outside
    [-i, i])."""
    if _is_complex(x):
        return _complex_atan(x)
    return lx.atan2(x, _k(x, 1))


def _large(x: Any) -> Any:
    # near e^|x|'s overflow (e^-|x| is far below the result's ulp there)
    return lx.gt(
        lx.abs(x), _k(x, 700.0 if np.dtype(core.get_aval(x).dtype) == np.float64 else 85.0)
    )


def _half_exp_abs(x: Any) -> Any:
    # e^|x| / 2 as (e^(|x|/2) / 2) e^(|x|/2): no overflow, no rounding of |x| - log 2
    h = lx.exp(lx.mul(lx.abs(x), _k(x, 0.5)))
    return lx.mul(lx.mul(h, _k(x, 0.5)), h)


def sinh(x: Any) -> Any:
    """Hyperbolic sine: ``(e^x - e^-x) / 2`` through ``expm1`` (no cancellation near 0),
    ``sign(x) e^|x| / 2`` where ``e^|x|`` alone would overflow before the result does."""
    large = _large(x)
    xs = lx.select_n(large, x, _k(x, 0.0))  # (no inf in the other branch's derivative)
    small = lx.mul(lx.sub(lx.expm1(xs), lx.expm1(lx.neg(xs))), _k(x, 0.5))
    return lx.select_n(large, small, lx.mul(lx.sign(x), _half_exp_abs(x)))


def cosh(x: Any) -> Any:
    """Hyperbolic cosine: ``(e^x + e^-x) / 2``, ``e^|x| / 2`` near overflow."""
    large = _large(x)
    xs = lx.select_n(large, x, _k(x, 0.0))
    small = lx.mul(lx.add(lx.exp(xs), lx.exp(lx.neg(xs))), _k(x, 0.5))
    return lx.select_n(large, small, _half_exp_abs(x))


def square(x: Any) -> Any:
    """``x * x``."""
    return lx.mul(x, x)


def exp2(x: Any) -> Any:
    """``2 ** x`` (exact for integer ``x``): d = log(2) 2^x dx."""
    return lx.pow(_k(x, 2), x)


def is_finite(x: Any) -> Any:
    """Elementwise: neither infinite nor NaN (floating-point ``x``)."""
    if core.get_aval(x).dtype.kind not in "fc":
        raise TypeError(
            f"is_finite: expected a floating-point operand, got {core.get_aval(x).dtype.name}."
        )
    return lx.lt(lx.abs(x), _k(x, np.inf))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (of ``dtype``, else the
    value's own)."""
    value = fill_value
    if core.get_aval(value).shape != ():
        raise TypeError(
            f"full: expected a scalar fill_value, got shape {core.get_aval(value).shape}."
        )
    if dtype is not None:
        value = lx.convert_element_type(value, np.dtype(dtype))
    elif not isinstance(value, core.Tracer):
        value = np.asarray(value)
    return broadcast_in_dim(value, tuple(int(d) for d in shape), ())


def reciprocal(x: Any) -> Any:
    """``1 / x`` elementwise (floating-point or complex ``x``; integers are an error, as
    in JAX).

    >>> float(reciprocal(4.0))
    0.25
    """
    aval = core.get_aval(x)
    if aval.dtype.kind not in "fc":
        raise TypeError(
            f"reciprocal: expected a floating-point or complex operand, got "
            f"{aval.dtype.name}. Convert it first (x.astype(float))."
        )
    return lx.div(_k(x, 1), x)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """Shift the bits of ``x`` right by ``y``, filling with copies of the top bit (also
    for unsigned integers, whose bits are read as the signed integer's, as in JAX: a
    ``uint8`` 255 shifted by 1 stays 255); shifts by the bit width or more (or by a
    negative amount) fill every bit. ``x`` and ``y`` of one integer dtype (0-d operands
    and axes of size 1 broadcast, as in JAX's lax).

    ``functrace.numpy.right_shift`` keeps NumPy's rule: zeros fill unsigned integers.

    >>> import numpy as np
    >>> int(shift_right_arithmetic(np.uint8(200), np.uint8(2)))
    242
    """
    x, y = broadcast_operands(x, y)
    ax = core.get_aval(x)
    if ax.dtype.kind not in "iu":
        raise TypeError(f"shift_right_arithmetic: expected integer operands, got {ax.dtype.name}.")
    shifted = lx.shift_right_arithmetic(x, y)  # NumPy's: arithmetic for signed integers
    if ax.dtype.kind == "i":
        return shifted
    # unsigned: NumPy's shift filled zeros (and gives 0 for y >= bits); set the bits the
    # top bit fills, ~(MAX >> y), where the top bit is set
    full_bits = _k(x, np.iinfo(ax.dtype).max)
    fill = lx.bitwise_not(lx.shift_right_arithmetic(full_bits, y))
    top = lx.ge(x, _k(x, 1 << (ax.dtype.itemsize * 8 - 1)))
    return lx.select_n(top, shifted, lx.bitwise_or(shifted, fill))


def shift_right_logical(x: Any, y: Any) -> Any:
    """Shift the bits of ``x`` right by ``y``, filling with zeros (also for signed
    integers, whose bits are read as unsigned); shifts by a negative amount or by the
    bit width or more give 0. ``x`` and ``y`` of one integer dtype (0-d operands and
    axes of size 1 broadcast, as in JAX's lax).

    >>> import numpy as np
    >>> int(shift_right_logical(np.int8(-8), np.int8(1)))
    124
    """
    x, y = broadcast_operands(x, y)
    ax = core.get_aval(x)
    if ax.dtype.kind not in "iu":
        raise TypeError(f"shift_right_logical: expected integer operands, got {ax.dtype.name}.")
    bits = ax.dtype.itemsize * 8
    ok = lx.lt(y, _k(y, bits))
    if ax.dtype.kind == "i":
        ok = lx.bitwise_and(ok, lx.ge(y, _k(y, 0)))
    zero = lx.zeros_like(x)
    y_ok = lx.select_n(ok, lx.zeros_like(y), y)
    shifted = lx.shift_right_arithmetic(x, y_ok)
    if ax.dtype.kind == "i":  # clear the copies of the sign bit: mask ~(-1 << (bits - y))
        mask = lx.bitwise_not(lx.shift_left(_k(x, -1), lx.sub(_k(y, bits), y_ok)))
        shifted = lx.bitwise_and(shifted, mask)
    return lx.select_n(ok, zero, shifted)


def _shape(fname: str, shape: Any) -> tuple[int, ...]:
    shp = as_index_tuple(fname, (shape,) if np.ndim(shape) == 0 else shape)
    if any(d < 0 for d in shp):
        raise ValueError(f"{fname}: expected non-negative sizes, got {shp}.")
    return shp


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """``operand`` broadcast to ``(*sizes, *operand.shape)`` (new leading axes).

    >>> import numpy as np
    >>> broadcast(np.arange(3.0), (2,)).shape
    (2, 3)
    """
    shape = operand_shape(operand)
    new = _shape("broadcast", tuple(sizes))
    if not new:
        return operand
    dims = tuple(range(len(new), len(new) + len(shape)))
    return broadcast_in_dim(operand, (*new, *shape), dims)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives arrays of ``shapes`` (a tuple of ints;
    ``jax.lax.broadcast_shapes``); a ``ValueError`` names the shapes that do not
    broadcast.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError(
            f"broadcast_shapes: expected shapes that broadcast, got {list(shapes)}."
        ) from None


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading axes of size 1 added up to ``rank`` axes (unchanged if it has as
    many or more).

    >>> import numpy as np
    >>> broadcast_to_rank(np.arange(3.0), 3).shape
    (1, 1, 3)
    """
    nd = core.get_aval(x).ndim
    r = int(rank)
    return x if nd >= r else broadcast(x, (1,) * (r - nd))


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` whose entries are their index along ``dimension``.

    >>> import numpy as np
    >>> broadcasted_iota(np.int32, (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    shp = _shape("broadcasted_iota", tuple(shape))
    dim = int(dimension)
    if not 0 <= dim < len(shp):
        raise ValueError(
            f"broadcasted_iota: expected a dimension in [0, {len(shp)}) for shape {shp}, "
            f"got {dimension}."
        )
    return iota(dtype, shp[dim], dim, shp)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """``operand`` with its axes ``start_dimension:stop_dimension`` (negative counting
    from the end; ``None``: to the end) merged into one.

    >>> import numpy as np
    >>> collapse(np.ones((2, 3, 4)), 1).shape
    (2, 12)
    """
    shape = operand_shape(operand)
    nd = len(shape)
    lo = int(start_dimension) + (nd if int(start_dimension) < 0 else 0)
    hi = nd if stop_dimension is None else int(stop_dimension)
    hi += nd if hi < 0 else 0
    if not 0 <= lo <= hi <= nd:
        raise ValueError(
            f"collapse: expected 0 <= start <= stop <= {nd} for operand shape {shape}, got "
            f"start {start_dimension} and stop {stop_dimension}."
        )
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return reshape(operand, (*shape[:lo], size, *shape[hi:]))


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """``operand`` cut along ``axis`` into consecutive pieces of ``sizes`` (which add up
    to the axis's length), as a list.

    >>> import numpy as np
    >>> [p.tolist() for p in split(np.arange(6), (1, 2, 3))]
    [[0], [1, 2], [3, 4, 5]]
    """
    shape = core.get_aval(operand).shape
    ax = normalize_axis("split", int(axis), len(shape))
    if not shape:
        raise ValueError("split: expected an operand with at least one axis, got a scalar.")
    szs = as_index_tuple("split", sizes)
    if any(s < 0 for s in szs):
        raise ValueError(f"split: expected non-negative sizes, got {szs}.")
    if sum(szs) != shape[ax]:
        raise ValueError(
            f"split: expected sizes adding up to {shape[ax]} (axis {ax} of shape {shape}), "
            f"got {szs} (sum {sum(szs)})."
        )
    out, start = [], 0
    for s in szs:
        out.append(slice_in_dim(operand, start, start + s, axis=ax))
        start += s
    return out


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one entry per axis).

    >>> import numpy as np
    >>> tile(np.arange(3), (2,)).tolist()
    [0, 1, 2, 0, 1, 2]
    """
    shape = core.get_aval(operand).shape
    r = _shape("tile", tuple(reps))
    if len(r) != len(shape):
        raise TypeError(
            f"tile: expected one repetition count per axis of the operand ({len(shape)}), "
            f"got reps {r}."
        )
    if all(k == 1 for k in r):
        return operand
    big = tuple(d for k, n in zip(r, shape) for d in (k, n))
    b = broadcast_in_dim(operand, big, tuple(range(1, 2 * len(shape), 2)))
    return reshape(b, tuple(k * n for k, n in zip(r, shape)))


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose contents do not matter (zeros here, as
    JAX gives). ``out_sharding`` is accepted and ignored (one device).

    >>> import numpy as np
    >>> empty((2,), np.float32).tolist()
    [0.0, 0.0]
    """
    return full(_shape("empty", tuple(shape)), np.zeros((), np.dtype(dtype))[()])


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) axes: ``lhs`` ``(..., m, k)`` times
    ``rhs`` ``(..., k, n)``, equal batch shapes, same rank (at least 2).

    >>> import numpy as np
    >>> batch_matmul(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
    (2, 3, 5)
    """
    a, b = core.get_aval(lhs), core.get_aval(rhs)
    if a.ndim != b.ndim:
        raise ValueError(
            f"batch_matmul: expected operands of the same rank, got shapes {a.shape} and {b.shape}."
        )
    if a.ndim < 2:
        raise ValueError(
            f"batch_matmul: expected operands of rank 2 or more, got shapes {a.shape} and "
            f"{b.shape}."
        )
    batch = tuple(range(a.ndim - 2))
    return dot_general(lhs, rhs, (((a.ndim - 1,), (a.ndim - 2,)), (batch, batch)), precision)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Any:
    """JAX's named composite operation: a function computing ``decomposition(*args,
    **kwargs)``, the keyword arguments being static attributes. A compiler that knows
    the name may emit its own code for it; functrace always runs the decomposition (as
    XLA does for a name it does not know), so the result differentiates, batches and
    compiles as the decomposition does.

    >>> double = composite(lambda x, *, k: x * k, name="my.scale")
    >>> float(double(2.0, k=3.0))
    6.0
    """
    if not callable(decomposition):
        raise TypeError(f"composite: expected a callable decomposition, got {decomposition!r}.")
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: expected a non-empty str name, got {name!r}.")
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"composite: expected a non-negative int version, got {version!r}.")

    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)

    return call


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree) unchanged: JAX uses it to stop the compiler from moving
    computations across it; functrace's compiler moves none, so it is the identity
    (arrays come back as ``functrace.Array``s).

    >>> float(optimization_barrier(2.0))
    2.0
    """

    def leaf(x: Any) -> Any:
        if isinstance(x, core.Tracer) or not core.is_array_like(x):
            return x
        return to_array(np.asarray(x))

    return tree_map(leaf, operand)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree) unchanged (JAX's layout hint for its compiler): functrace's one
    device holds every array whole, so there is nothing to constrain (arrays come back
    as ``functrace.Array``\\ s). ``shardings`` (a ``NamedSharding``, a
    ``PartitionSpec``, or a pytree of them) is not checked against a mesh."""
    return optimization_barrier(x)


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu", "metal", "gpu")


def platform_dependent(
    *args: Any, default: Callable[..., Any] | None = None, **per_platform: Callable[..., Any]
) -> Any:
    """Call the branch for the platform functrace runs on, ``cpu=``, with ``*args``, or
    ``default`` when there is none.

    >>> float(platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x))
    20.0
    """
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(
            f"platform_dependent: expected a 'cpu' branch or a default (functrace runs on "
            f"the CPU), got branches for {sorted(per_platform)} only."
        )
    if not callable(branch):
        raise TypeError(
            f"platform_dependent: expected callables as branches, got {type(branch).__name__}."
        )
    return branch(*args)


__all__ = [
    "acos",
    "asin",
    "atan",
    "batch_matmul",
    "broadcast",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "collapse",
    "composite",
    "cosh",
    "empty",
    "exp2",
    "full",
    "is_finite",
    "optimization_barrier",
    "with_sharding_constraint",
    "platform_dependent",
    "reciprocal",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sinh",
    "split",
    "square",
    "tile",
]
